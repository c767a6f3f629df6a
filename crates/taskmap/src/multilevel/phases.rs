//! The multilevel scheme's three phases as traits, so the driver reads as the algorithm:
//! `uncoarsen(initial(coarsen(graph)))`.
//!
//! - A `Coarsener` builds the levels of coarser graphs (`Clustering`: one scheme, label
//!   propagation or a matching, down to a target size).
//! - An `InitialMapper` maps the coarsest graph (`InitialRuns`: independent DRB runs, or
//!   multisection on a target of nested groups).
//! - A [`Refiner`] improves a mapping on every level while uncoarsening, never making it
//!   worse ([`KwayRefiner`](super::refine::kway::KwayRefiner), whose steps are data:
//!   [`pipeline`](super::refine::pipeline)).

use rand::Rng;
use taskmap_graph::TaskGraph;

use crate::mapper::RunContext;
use crate::multilevel::coarsen::hierarchy::{coarsen_levels, Level};
use crate::multilevel::coarsen::Coarsening;
use crate::multilevel::config::MultilevelMapper;
use crate::multilevel::driver::Instance;
use crate::multilevel::initial::initial_mapping;
pub use crate::multilevel::refine::pipeline::Refiner;
use crate::multilevel::DistTable;

/// Builds the hierarchy of coarser graphs.
pub(crate) trait Coarsener {
    /// The levels above `graph` (whose tasks `fixed` pins), finest first; empty when it is
    /// not coarsened.
    fn coarsen(
        &self,
        graph: &TaskGraph,
        fixed: &[u32],
        pool: Option<&rayon::ThreadPool>,
        rng: &mut impl Rng,
    ) -> Vec<Level>;
}

/// Maps the coarsest graph.
pub(crate) trait InitialMapper {
    /// A mapping of the coarsest graph of `levels` (the input graph when `levels` is
    /// empty): whether it is balanced, its `f_C`, and the PE of every coarse task.
    fn initial(&self, levels: &[Level], ctx: &mut RunContext) -> (bool, u64, Vec<u32>);
}

/// Coarsening by one scheme until at most `target` tasks are left (or it stalls).
pub(crate) struct Clustering<'a> {
    pub(crate) cfg: &'a MultilevelMapper,
    pub(crate) scheme: Coarsening,
    pub(crate) target: usize,
    /// The largest cluster weight per constraint.
    pub(crate) max_cluster_weights: &'a [u64],
}

impl<'a> Clustering<'a> {
    /// Coarsening by `scheme` down to `target` tasks, clusters of at most `max_cluster_weights`.
    pub(crate) fn new(
        cfg: &'a MultilevelMapper,
        scheme: Coarsening,
        target: usize,
        max_cluster_weights: &'a [u64],
    ) -> Self {
        Self {
            cfg,
            scheme,
            target,
            max_cluster_weights,
        }
    }
}

impl Coarsener for Clustering<'_> {
    fn coarsen(
        &self,
        graph: &TaskGraph,
        fixed: &[u32],
        pool: Option<&rayon::ThreadPool>,
        rng: &mut impl Rng,
    ) -> Vec<Level> {
        coarsen_levels(self, graph, fixed, &[], pool, rng)
    }
}

/// The multilevel mapper's initial mapping: its independent runs, or multisection along
/// `sections`, the target's nested groups (when not empty).
pub(crate) struct InitialRuns<'a> {
    pub(crate) cfg: &'a MultilevelMapper,
    pub(crate) inst: &'a Instance<'a>,
    pub(crate) dist: &'a DistTable<'a>,
    pub(crate) sections: &'a [(Vec<u32>, u32)],
}

impl InitialMapper for InitialRuns<'_> {
    fn initial(&self, levels: &[Level], ctx: &mut RunContext) -> (bool, u64, Vec<u32>) {
        initial_mapping(self.cfg, self.inst, levels, self.dist, self.sections, ctx)
    }
}
