//! The mapping algorithms, one file each.

pub mod alloc;
pub mod berger_common;
pub mod berger_netlist;
pub mod block;
pub mod drb;
pub mod greedy_perego;
pub mod gtwp;
pub mod heft;
pub mod mateha;
pub mod multilevel;
pub mod pnp;
pub mod random;
pub mod round_robin;
pub mod subgraph;
