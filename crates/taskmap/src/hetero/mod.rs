//! De Giusti et al.: heterogeneous multi-clusters — TTIGHa, MATEHa, SIMULHa.
//!
//! * [`ttigha`]: heterogeneous programs (tasks of sub-tasks with a time per processor
//!   type) and platforms (typed processors and links); [`io`]: their files (`.ttig`,
//!   platforms, orders) and the STG, Pegasus DAX and WfCommons readers; [`gen`]: random
//!   programs and platforms.
//! * [`simulha`]: SIMULHa, the execution of a program's sub-tasks under an allocation.
//! * [`mateha`]: MATEHa, the TTIGHa graph, the SIMULHa-guided local searches and the
//!   exhaustive search.
//! * [`heft`]: HEFT, PEFT and `heft-ls`, the list-scheduling peers.
//! * [`report`]: the report of an allocation and its schedule, as data.

pub mod allocate;
pub mod gen;
pub mod heft;
pub mod io;
pub mod mateha;
pub mod report;
pub mod simulha;
pub mod ttigha;
