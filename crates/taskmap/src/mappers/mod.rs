//! The mapping algorithms, one file each.

pub mod berger;
pub mod block;
pub mod drb;
pub mod exact;
pub mod random;
pub mod round_robin;
