//! Splits the METIS read time into file read and parse.
//!
//! `cargo run --release -p taskmap-graph --example perf_parts`

use std::path::Path;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let g = taskmap_graph::gen::grid(&[1000, 1000], false);
    let path = Path::new("/tmp/taskmap_parts.graph");
    taskmap_graph::write_graph_file(path, &g, taskmap_graph::GraphFormat::Metis)?;
    for _ in 0..3 {
        let t = Instant::now();
        let bytes = std::fs::read(path)?;
        let r = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let h = taskmap_graph::read_metis(&bytes, path)?;
        let p = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        h.validate()?;
        let v = t.elapsed().as_secs_f64() * 1e3;
        println!("fs::read {r:.1} ms, parse+check {p:.1} ms, (TaskGraph::validate {v:.1} ms)");
    }
    std::fs::remove_file(path)?;
    Ok(())
}
