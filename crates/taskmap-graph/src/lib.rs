//! Task graphs for taskmap: a symmetric CSR graph with `u32` ids, `u64` edge weights and
//! `ncon >= 1` vertex weights per task, its builder, generators and file formats.
//!
//! # File formats
//!
//! Every reader accepts plain or gzip-compressed input (recognised by the magic bytes
//! `1f 8b`, not by the extension) and reports defects as `file:line:column: message`.
//! [`read_graph`] picks the reader from [`GraphFormat::from_path`] (a trailing `.gz` is
//! ignored) unless a format is given. The exact rules are on each reader.
//!
//! | format | extensions | ids | edge weights | vertex weights | read | write |
//! |---|---|---|---|---|---|---|
//! | METIS / Chaco | `.graph` `.metis` `.chaco` | 1-based | fmt `c` digit, `>= 1` | fmt `b` digit, `ncon`, `>= 0` | [`read_metis`] | [`write_metis`] |
//! | Scotch | `.grf` `.src` | `baseval` or labels | flag `010`, `>= 1` | flag `001`, `>= 0` | [`read_scotch`] | [`write_scotch`] |
//! | Matrix Market | `.mtx` | 1-based | pattern 1, integer `abs`, real `max(1, round(abs))`; `a_ij + a_ji` | 1 | [`read_matrix_market`] | [`write_matrix_market`] |
//! | edge list | `.edges` `.el` `.txt` | 0-based, n = max id + 1 | optional 3rd column, `>= 1` | 1 | [`read_edge_list`] | [`write_edge_list`] |
//! | ISCAS-89 netlist | `.bench` | one task per gate / flip-flop, file order | number of arcs between the two | 1 | [`read_bench`] | — |
//! | mpiP communication volumes | `graphStats.txt` (name's end) | 0-based ranks, n = max rank + 1 | `max(1, round(volume))`, repeats summed | 1 | [`read_mpip`] | — |
//!
//! [`write_graph_file`] writes any writable format atomically (temporary file + rename),
//! gzip-compressed when the path ends in `.gz`.
//!
//! # Generators
//!
//! [`gen`] holds deterministic generators: grids and tori of any dimension, 9- and
//! 27-point stencils, ring, binary tree, butterfly, hypercube, random geometric and
//! G(n, m) random graphs.

mod builder;
mod error;
mod formats;
pub mod gen;
mod graph;
pub mod memory;

pub use builder::{DuplicateEdges, EdgeConflict, GraphBuilder};
pub use error::GraphError;
pub use formats::{
    decompress, graph_file_writer, line_col, read_bench, read_bench_with_names, read_dense_matrix,
    read_edge_list, read_graph, read_graph_from_bytes, read_graph_from_bytes_on, read_graph_on,
    read_matrix_market, read_metis, read_metis_on, read_mpip, read_scotch, read_task_weights,
    read_volumes, write_atomically_with, write_edge_list, write_graph, write_graph_file,
    write_matrix_market, write_metis, write_scotch, writes_in_place, GraphFormat, Staged,
    DENSE_MAX_RANKS,
};
pub use gen::{
    binary_tree, butterfly, grid, hypercube_pattern, random_geometric, random_graph, ring,
    stencil_2d_9pt, stencil_3d_27pt,
};
pub use graph::{TaskGraph, TaskId};
