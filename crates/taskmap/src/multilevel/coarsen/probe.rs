//! The probe for large graphs: the two first coarsenings tried on a sample of levels, and
//! the one whose hierarchy promises the lower cost kept for the whole run.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use taskmap_graph::TaskGraph;

use crate::mapper::RunContext;
use crate::mappers::drb::drb;
use crate::multilevel::coarsen::Coarsening;
use crate::multilevel::refine::kway::KwayState;
use crate::multilevel::DistTable;

use crate::multilevel::coarsen::hierarchy::*;
use crate::multilevel::config::*;
use crate::multilevel::driver::*;
use crate::multilevel::phases::Clustering;

/// [`MultilevelMapper::probe_tasks`]: graphs of at least this many tasks build one first
/// hierarchy by default. On the million-task graphs measured (the suite's 1000x1000 and
/// 100x100x100 grids, a circuit netlist, a random geometric graph) the probe kept the
/// hierarchy whose mapping wins when both are built, in a third (grids) to two thirds of
/// the time. Lower, at 200,000, a random geometric graph of 300,000 tasks lost 0.9-7.5 %
/// with label propagation kept alone (the 512x512 and 64x64x64 grids gained), so the
/// threshold stays above every graph where that was measured (see `docs/benchmarks.md`,
/// "The large grids and million-task graphs").
pub const PROBE_TASKS: usize = 1 << 19;

/// The probe maps each hierarchy's graph coarsened to this many tasks per PE.
pub const PROBE_PER_PE: usize = 4;

/// The label-propagation probe starts from this level of the matching's hierarchy (the
/// first levels are what label propagation costs on a huge graph; on the netlist and the
/// grids the probe's choice was the same from any of the first four).
pub const PROBE_SHARED_LEVELS: usize = 3;

/// For a graph of at least `cfg.probe_tasks` tasks, no fixed task, and two first
/// coarsenings, label propagation and a matching: the configuration to map with, one
/// coarsening only, and the matching's hierarchy when that is the one kept (`None`: no
/// probe).
///
/// The matching's hierarchy is built (it is cheap: one pass per level) with half the usual
/// `max_coarsest`; label propagation clusters the graph of its [`PROBE_SHARED_LEVELS`]-th
/// level instead of the input. Each is coarsened further to [`PROBE_PER_PE`] tasks per PE
/// and mapped by one DRB run; the lower f_C wins (ties: the matching; a matching that
/// stalls above twice its target size loses without a probe; on a graph with hubs,
/// `TaskGraph::has_hubs`, label propagation is kept without either). Projection keeps
/// f_C, so both are costs of mappings of the input graph. The matching, when kept, gets
/// twice the initial runs, on a coarsest graph of half the usual size where no floor per
/// PE binds (then about the same work; on grids the DRB runs' spread is what decides),
/// and no V-cycle follows (see [`map_instance`]); label propagation, when kept, builds its
/// hierarchy from the input graph, under DRB as deep as beside the matching
/// ([`MultilevelMapper::lp_per_pe`]).
pub(crate) fn probe_coarsenings(
    cfg: &MultilevelMapper,
    inst: &Instance<'_>,
    dist: &DistTable<'_>,
    nested: bool,
    ctx: &mut RunContext,
) -> Option<(MultilevelMapper, Option<Vec<Level>>)> {
    let graph = inst.graph;
    let lp = Coarsening::LabelPropagation;
    let matching = match (cfg.coarsening, cfg.alt_coarsening) {
        (a, Some(b)) if a == lp && b != lp => b,
        (a, Some(b)) if b == lp && a != lp => a,
        _ => return None,
    };
    if cfg.probe_tasks == 0 || graph.num_tasks() < cfg.probe_tasks || !inst.fixed.is_empty() {
        return None;
    }
    // On a graph with hubs the matching barely shrinks the graph: label propagation is
    // kept without building it (see `coarsen_and_map_from`).
    if graph.has_hubs() {
        let lp_only = MultilevelMapper {
            coarsening: lp,
            alt_coarsening: None,
            ..cfg.clone()
        };
        return Some((lp_only, None));
    }
    let k = dist.k() as usize;
    let kept = MultilevelMapper {
        coarsening: matching,
        alt_coarsening: None,
        initial_runs: 2 * cfg.initial_runs,
        max_coarsest: cfg.max_coarsest / 2,
        ..cfg.clone()
    };
    let target = first_target(&kept, inst, k, nested);
    if graph.num_tasks() <= target {
        return None;
    }
    let probe_target = PROBE_PER_PE
        .saturating_mul(k)
        .max(cfg.min_coarsest)
        .min(target);
    ctx.timed("probe", |ctx| {
        let mcw = max_cluster_weights(&kept, graph, &inst.bound, k, target);
        let clustering = Clustering::new(&kept, matching, target, &mcw);
        let pool = ctx.pool.as_ref();
        let levels = coarsen_levels(&clustering, graph, &[], &[], pool, &mut ctx.rng);
        let lp_only = MultilevelMapper {
            coarsening: lp,
            alt_coarsening: None,
            ..cfg.clone()
        };
        // A matching that stalls far above the target (a graph with hubs) is not kept, as
        // when both hierarchies are built.
        let top_n = levels
            .last()
            .map_or(graph.num_tasks(), |l| l.graph.num_tasks());
        if top_n > 2 * target {
            return Some((lp_only, None));
        }
        let pmcw = max_cluster_weights(cfg, graph, &inst.bound, k, probe_target);
        // f_C of one DRB run on `g` coarsened further by `scheme`.
        let probe = |scheme: Coarsening, g: &TaskGraph, rng: &mut Xoshiro256PlusPlus| {
            let clustering = Clustering::new(cfg, scheme, probe_target, &pmcw);
            let more = coarsen_levels(&clustering, g, &[], &[], pool, rng);
            let pg = more.last().map_or(g, |l| &l.graph);
            let mut run_rng = Xoshiro256PlusPlus::seed_from_u64(rng.gen());
            let bip = &cfg.bipartitioner();
            let p = drb(
                pg,
                inst.arch,
                &inst.bound,
                inst.epsilon,
                bip,
                &mut run_rng,
                None,
                None,
            );
            KwayState::new(pg, dist, &inst.bound, p).comm_cost()
        };
        let top = levels.last().map_or(graph, |l| &l.graph);
        let shared = levels
            .get(PROBE_SHARED_LEVELS.min(levels.len()).saturating_sub(1))
            .map_or(graph, |l| &l.graph);
        // The two probes run at once on a pool of two threads or more, each with its own
        // generator: the same costs for every thread count.
        let mut r0 = Xoshiro256PlusPlus::seed_from_u64(ctx.rng.gen());
        let mut r1 = Xoshiro256PlusPlus::seed_from_u64(ctx.rng.gen());
        let (matching_cost, lp_cost) = match pool.filter(|p| p.current_num_threads() > 1) {
            Some(p) => p.install(|| {
                rayon::join(
                    || probe(matching, top, &mut r0),
                    || probe(lp, shared, &mut r1),
                )
            }),
            None => (probe(matching, top, &mut r0), probe(lp, shared, &mut r1)),
        };
        if lp_cost < matching_cost {
            // Label propagation kept alone coarsens as deep as it would beside the
            // matching (`lp_per_pe`).
            let deep = (!nested && inst.whole)
                .then(|| deep_target(cfg, graph, inst.arch, k))
                .flatten()
                .filter(|&d| d < first_target(&lp_only, inst, k, nested));
            let lp_only = match deep {
                Some(_) => MultilevelMapper {
                    coarsest_per_pe: cfg.lp_per_pe,
                    grid2d_per_pe: 0,
                    ..lp_only
                },
                None => lp_only,
            };
            Some((lp_only, None))
        } else {
            Some((kept, Some(levels)))
        }
    })
}
