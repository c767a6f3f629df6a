//! Berger et al. (2014): capacity-constrained mapping of large process networks.
//!
//! * [`gtwp`]: GTWP, greedy growth of each PE's task set by the heaviest connection
//!   (`gtwp`, `gtwp-fit`).
//! * [`subgraph`]: the subgraph-isomorphism-style mapper (`subgraph`, `subgraph-dist`).
//! * [`pnp`]: the partition-and-place mapper.
//! * [`common`]: what they share (distances, capacity bookkeeping, the size limit);
//!   [`netlist`]: circuit netlists as task graphs.

pub mod common;
pub mod gtwp;
pub mod netlist;
pub mod pnp;
pub mod subgraph;
