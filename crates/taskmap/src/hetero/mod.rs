//! De Giusti et al.: heterogeneous multi-clusters — TTIGHa, MATEHa, SIMULHa.
//!
//! * [`ttigha`]: heterogeneous programs (tasks of sub-tasks with a time per processor
//!   type) and platforms (typed processors and links), their files, the STG and Pegasus
//!   DAX readers and a generator; [`wfcommons`]: WfCommons workflow instances (JSON, read
//!   with serde_json, every error at the wrong value's line and column) as such programs.
//! * [`simulha`]: SIMULHa, the execution of a program's sub-tasks under an allocation.
//! * [`mateha`]: MATEHa, the TTIGHa graph, the SIMULHa-guided local searches and the
//!   exhaustive search.
//! * [`heft`]: HEFT, PEFT and `heft-ls`, the list-scheduling peers.

pub mod heft;
pub mod mateha;
pub mod simulha;
pub mod ttigha;
pub mod wfcommons;
