//! Houstis et al. (1989): the Algorithm Mapper — precedence graphs onto bus and Banyan
//! shared-memory machines.
//!
//! * [`precedence`]: stochastic AND/EOR precedence graphs ([`amg`]: their files), expected
//!   executions, back links and the parallelism matrix `Δ`.
//! * [`interconnect`]: the queueing delay `D(u)` of the four shared-memory interconnects
//!   (single bus, dual bus, multiple buses, Banyan/Omega network), read as closed queues.
//! * [`paper_delay`]: the same interconnects' delay by the paper's printed formulas.
//! * [`bus_queue`]: a direct simulation of those interconnects' queues (buses, memories,
//!   Omega network paths), against which the delay models are checked.
//! * [`machine`]: processors (speeds, memories) on an interconnect.
//! * [`alloc`]: ALLOC, clustering under a time frame, and the frame search.
//! * [`exhaustive`]: the least `T_REAL` of a small graph, every assignment simulated.
//! * [`frame`]: ALLOC at a frame the user gives, and a sweep of frames.
//! * [`mapper`]: the Algorithm Mapper's steps 1-3 and the scoring of an assignment.
//! * [`monte_carlo`]: `T_REAL` over sampled runs of the stochastic program.
//! * [`schedule`]: the schedule simulator (`T_REAL`), the list schedule and `alloc-ls`.
//! * [`spec`]: `alloc` and `alloc-ls` configured from `name,key=value,...`.
//! * [`report`]: the report of a result, as data.

pub mod alloc;
pub mod amg;
pub mod bus_queue;
pub mod exhaustive;
pub mod frame;
pub mod interconnect;
pub mod machine;
pub mod mapper;
pub mod monte_carlo;
pub mod paper_delay;
pub mod precedence;
pub mod report;
pub mod schedule;
pub mod spec;
