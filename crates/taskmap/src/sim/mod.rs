//! Simulators and simulation-derived cost models.
//!
//! * [`wormhole`]: discrete-event simulation of a [`crate::model::Program`] under a mapping
//!   on a k-ary n-cube with wormhole flow control, and on the ideal machine.
//! * [`perego`]: the Synchronous Phases Model and the evaluation function `F` of De Petris
//!   & Perego (1994).

pub mod perego;
pub mod wormhole;

pub use perego::{FEstimate, SpmModel, SpmParams};
pub use wormhole::{simulate, simulate_ideal, ReadyPolicy, SimReport, WormholeParams};
