//! De Petris & Perego (1994): contention-aware completion-time mapping of timed programs
//! onto wormhole-routed k-ary n-cubes.
//!
//! * [`program`]: the timed communication language — `PROCESS`, `INT_OP`, `SEND`,
//!   `RECEIVE`, `STOP` — its reader, and its reduction to a [`taskmap_graph::TaskGraph`];
//!   [`gen`]: generators for the paper's patterns.
//! * [`wormhole`]: discrete-event simulation of a program under a mapping on a k-ary n-cube
//!   with wormhole flow control, and on the ideal machine.
//! * [`spm`]: the Synchronous Phases Model and the evaluation function `F`.
//! * [`f`]: `F` of a growing partial mapping, updated incrementally (for the greedy mapper).
//! * [`f_prop`]: ours, `F_prop`, the model's delays replayed along the program (an
//!   estimate of the completion time of a one-task-per-PE mapping).
//! * [`greedy`]: the greedy mapping heuristic that minimises `F`, and its refinements.
//! * [`summary`]: what a simulation reports, and the mapping a program is simulated under.
//!
//! Every model here needs routes, so targets are meshes, tori and hypercubes of at most
//! [`MAX_ROUTED_LINKS`] directed links.

pub mod f;
pub mod f_prop;
pub mod gen;
pub mod greedy;
pub mod program;
pub mod spm;
pub mod summary;
pub mod wormhole;

pub use f::{FValue, IncrementalF};
pub use f_prop::PropagatedEstimate;
pub use gen::{generate_program, GenParams};
pub use program::{parse_program, read_program, Channel, Message, Op, Program, ProgramBuilder};
pub use spm::{FEstimate, SpmModel, SpmParams};
pub use wormhole::{simulate, simulate_ideal, ReadyPolicy, SimReport, WormholeParams};

use taskmap_arch::{Architecture, Routing};

use crate::error::Error;
use crate::mapping::Mapping;

/// The most directed links (and PEs) a target may have for the models that need routes
/// (the wormhole simulator, F, the greedy mapper): their tables are sized by the target
/// (O(links + PEs) words each), so a target such as `hypercube:27` (3.6·10^9 links) is
/// refused with an error rather than exhausting memory.
pub const MAX_ROUTED_LINKS: u64 = 1 << 24;

/// Errors if `arch` has more than [`MAX_ROUTED_LINKS`] directed links or PEs (`what`
/// names the model that refuses it).
pub(crate) fn check_target_size(arch: &dyn Architecture, what: &str) -> Result<(), Error> {
    let links = arch.routing().map_or(0, |r| u64::from(r.link_count()));
    let pes = u64::from(arch.pe_count());
    if links > MAX_ROUTED_LINKS || pes > MAX_ROUTED_LINKS {
        return Err(Error::Config(format!(
            "{}: the target {} has {} PEs and {} directed links; at most {} (2^24) of each are supported",
            what,
            arch.spec(),
            pes,
            links,
            MAX_ROUTED_LINKS
        )));
    }
    Ok(())
}

/// Checks that `mapping` maps `num_tasks` tasks onto PEs of `arch` and that `arch` has
/// routes (`what` names the model that needs them) of a size it can hold
/// ([`MAX_ROUTED_LINKS`]); returns the PE of every task.
pub(crate) fn routed_mapping(
    num_tasks: usize,
    arch: &dyn Architecture,
    mapping: &Mapping,
    what: &str,
) -> Result<Vec<u32>, Error> {
    mapping.check(num_tasks, arch)?;
    check_routed_target(arch, what)?;
    Ok(mapping.as_slice().iter().map(|p| p.0).collect())
}

/// Whether no two tasks share a PE (`pes[t]` the PE of task `t`, every one below `k`).
pub(crate) fn one_task_per_pe(pes: &[u32], k: u32) -> bool {
    let mut used = vec![false; k as usize];
    pes.iter()
        .all(|&p| !std::mem::replace(&mut used[p as usize], true))
}

/// The routes of `arch`, a target that [`check_routed_target`] accepted.
pub(crate) fn routes(arch: &dyn Architecture) -> &dyn Routing {
    arch.routing()
        .expect("a target with routes (check_routed_target)")
}

/// Checks that `arch` has routes (`what` names the model that needs them) and at most
/// [`MAX_ROUTED_LINKS`] directed links and PEs.
pub(crate) fn check_routed_target(arch: &dyn Architecture, what: &str) -> Result<(), Error> {
    check_target_size(arch, what)?;
    if arch.pe_count() == 0 || arch.routing().is_none() {
        return Err(Error::Config(format!(
            "the target {} has no routes; {} needs a mesh, torus or hypercube",
            arch.spec(),
            what
        )));
    }
    Ok(())
}
