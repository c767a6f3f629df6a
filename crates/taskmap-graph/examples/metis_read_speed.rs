//! Time of one cold read of a METIS file of a 1000 x 1000 grid (1e6 tasks, 2e6 edges) that
//! this run writes first; the read must give the grid back and take under a second (the
//! run fails otherwise). `perf` times the same read best of 3, with the other formats.
//!
//! `cargo run --release -p taskmap-graph --example metis_read_speed`

use std::time::Instant;

use taskmap_graph::{gen, read_graph, write_graph_file, GraphFormat};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let p = dir.path().join("grid1000.graph");
    let g = gen::grid(&[1000, 1000], false);
    write_graph_file(&p, &g, GraphFormat::Metis)?;
    let t = Instant::now();
    let back = read_graph(&p, None)?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "read 1000x1000 grid (METIS, {} bytes) in {:.1} ms",
        std::fs::metadata(&p)?.len(),
        secs * 1e3
    );
    if back != g {
        return Err("the grid read back differs from the one written".into());
    }
    if secs >= 1.0 {
        return Err(format!("the read took {secs:.2} s, the bound is 1 s").into());
    }
    Ok(())
}
