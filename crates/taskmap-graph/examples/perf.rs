//! Timing of the METIS reader and the large generators.
//!
//! `cargo run --release -p taskmap-graph --example perf`

use std::path::Path;
use std::time::Instant;

use taskmap_graph::{gen, read_graph, write_graph_file, GraphFormat};

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let t = Instant::now();
    let g = gen::grid(&[1000, 1000], false);
    println!(
        "grid 1000x1000: n {} m {} in {:.1} ms",
        g.num_tasks(),
        g.num_edges(),
        ms(t)
    );
    for (name, fmt) in [
        ("taskmap_grid1000.graph", GraphFormat::Metis),
        ("taskmap_grid1000.grf", GraphFormat::Scotch),
        ("taskmap_grid1000.graph.gz", GraphFormat::Metis),
    ] {
        let path = Path::new("/tmp").join(name);
        let t = Instant::now();
        write_graph_file(&path, &g, fmt)?;
        let wt = ms(t);
        let size = std::fs::metadata(&path)?.len();
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let t = Instant::now();
            let back = read_graph(&path, None)?;
            best = best.min(ms(t));
            assert_eq!(back, g);
        }
        println!(
            "{}: {:.1} MB, write {wt:.1} ms, read {best:.1} ms (best of 3)",
            path.display(),
            size as f64 / 1e6
        );
        std::fs::remove_file(&path)?;
    }
    let t = Instant::now();
    let g = gen::random_geometric(1_000_000, 8.0, 1);
    println!(
        "random_geometric(1e6, 8): m {} mean degree {:.3} in {:.1} ms",
        g.num_edges(),
        2.0 * g.num_edges() as f64 / g.num_tasks() as f64,
        ms(t)
    );
    let t = Instant::now();
    let g = gen::random_graph(1_000_000, 8.0, 1);
    println!(
        "random_graph(1e6, 8): m {} in {:.1} ms",
        g.num_edges(),
        ms(t)
    );
    Ok(())
}
