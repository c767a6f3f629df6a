//! The mapping algorithms, one file each.

pub mod block;
pub mod drb;
pub mod multilevel;
pub mod random;
pub mod round_robin;
