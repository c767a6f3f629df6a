//! taskmap: static mapping of communicating tasks onto the processing elements (PEs) of a
//! parallel machine.
//!
//! The library reads a [`TaskGraph`] (tasks, their loads and their communication volumes)
//! and an [`Architecture`] (PEs, their capacities and the distance between any two), finds
//! a [`Mapping`] task → PE with a [`Mapper`], and scores it with [`evaluate`]: the
//! communication cost `f_C = Σ_{e={u,v}} w(e) · dist(τ(u), τ(v))` and Scotch's other metrics.
//!
//! ```
//! use taskmap::{evaluate, AlgorithmSpec, EvalOptions, Mapper, Problem, RunContext};
//! use taskmap_graph::gen;
//!
//! let graph = gen::grid(&[16, 16], false);
//! let arch = taskmap_arch::parse_arch("torus:4x4").unwrap();
//! let problem = Problem::new(graph, arch);
//! let mapper: AlgorithmSpec = "block".parse().unwrap();
//! let mut ctx = RunContext::new(42);
//! let mapping = mapper.map(&problem, &mut ctx).unwrap();
//! let eval = evaluate(&problem.graph, problem.arch.as_ref(), &mapping, &EvalOptions::default()).unwrap();
//! assert_eq!(eval.pes_used, 16);
//! assert!(eval.comm_cost > 0);
//! ```

pub mod congestion;
pub mod error;
pub mod hetero;
pub mod houstis;
pub mod html;
pub mod mapper;
pub mod mappers;
pub mod mapping;
pub(crate) mod max_tree;
pub mod metrics;
pub mod multilevel;
pub(crate) mod par;
pub mod perego;
pub mod problem;
pub mod registry;
pub mod report;

pub use error::Error;
pub use mapper::{Mapper, NoProgress, Optimality, Progress, RunContext};
pub use mapping::{Mapping, MappingFormat};
pub use metrics::{evaluate, evaluate_on, EvalOptions, Evaluation, PartDiameters};
pub use problem::{Capacities, Problem};
pub use registry::AlgorithmSpec;
pub use taskmap_arch::{parse_arch, parse_machine, Architecture, Machine, PeId, Routing};
pub use taskmap_graph::{TaskGraph, TaskId};
