//! Application models beyond the static task graph.
//!
//! * [`program`]: the timed communication language of De Petris & Perego (1994) —
//!   `PROCESS`, `INT_OP`, `SEND`, `RECEIVE`, `STOP` — its reader, and its reduction to a
//!   [`taskmap_graph::TaskGraph`]; [`program_gen`]: generators for the paper's patterns.
//! * [`ttigha`]: heterogeneous multi-cluster programs and platforms (De Giusti et al.'s
//!   TTIGHa model): tasks of sub-tasks with a time per processor type, typed
//!   communication between processors, and their file format; [`wfcommons`]: WfCommons
//!   workflow instances (JSON) as such programs, and [`wfcommons::read_workflow_program`]
//!   for either workflow format (WfCommons or Pegasus DAX).
//! * [`precedence`]: the Algorithm Mapper's stochastic AND/EOR precedence graphs (Houstis
//!   et al. 1989), their expected executions and parallelism matrix; [`interconnect`]: the
//!   queueing delay `D(u)` of its four shared-memory interconnects.

pub mod interconnect;
pub(crate) mod json;
pub mod precedence;
pub mod program;
pub mod program_gen;
pub mod ttigha;
pub mod wfcommons;

pub use program::{parse_program, read_program, Channel, Message, Op, Program, ProgramBuilder};
pub use program_gen::{generate_program, GenParams};
