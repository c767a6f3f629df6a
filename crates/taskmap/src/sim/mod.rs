//! Simulators and simulation-derived cost models.
//!
//! * [`wormhole`]: discrete-event simulation of a [`crate::model::Program`] under a mapping
//!   on a k-ary n-cube with wormhole flow control, and on the ideal machine.
//! * [`perego`]: the Synchronous Phases Model and the evaluation function `F` of De Petris
//!   & Perego (1994).
//! * [`perego_incremental`]: `F` of a growing partial mapping, updated incrementally (for
//!   the greedy mapper).

pub mod perego;
pub mod perego_incremental;
pub mod wormhole;

pub use perego::{FEstimate, SpmModel, SpmParams};
pub use perego_incremental::{FValue, IncrementalF};

use taskmap_arch::{Architecture, PeId};

use crate::error::Error;
use crate::mapping::Mapping;

/// Checks that `mapping` maps `num_tasks` tasks onto PEs of `arch` and that `arch` has
/// routes (`what` names the model that needs them); returns the PE of every task.
pub(crate) fn routed_mapping(
    num_tasks: usize,
    arch: &dyn Architecture,
    mapping: &Mapping,
    what: &str,
) -> Result<Vec<u32>, Error> {
    mapping.check(num_tasks, arch)?;
    let mut probe = Vec::new();
    if !arch.route(PeId(0), PeId(0), &mut probe) {
        return Err(Error::Config(format!(
            "the target {} has no routes; {} needs a mesh, torus or hypercube",
            arch.spec(),
            what
        )));
    }
    Ok(mapping.as_slice().iter().map(|p| p.0).collect())
}
pub use wormhole::{simulate, simulate_ideal, ReadyPolicy, SimReport, WormholeParams};
