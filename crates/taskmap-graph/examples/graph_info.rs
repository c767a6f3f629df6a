//! Prints the size of each graph file given on the command line, or its error.
//!
//! `cargo run --release -p taskmap-graph --example graph_info -- FILE...`

use std::path::Path;
use std::time::Instant;

fn main() {
    for arg in std::env::args().skip(1) {
        let t = Instant::now();
        match taskmap_graph::read_graph(Path::new(&arg), None) {
            Ok(g) => println!(
                "{arg}: n {} m {} ncon {} total edge weight {} total vertex weight {} ({:.1} ms)",
                g.num_tasks(),
                g.num_edges(),
                g.ncon(),
                g.total_edge_weight(),
                g.total_vertex_weight(0),
                t.elapsed().as_secs_f64() * 1e3
            ),
            Err(e) => println!("error: {e}"),
        }
    }
}
