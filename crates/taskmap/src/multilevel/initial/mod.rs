//! The initial mapping of the coarsest graph: dual recursive bipartitioning along the
//! target's domains ([`crate::mappers::drb`]), or multisection along a tree's levels
//! ([`multisection`]), over several runs and tries.

pub mod multisection;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

use crate::mapper::RunContext;
use crate::mappers::drb::drb;
use crate::multilevel::refine::kway::{KwayRefiner, KwayState};
use crate::multilevel::refine::rebalance::rebalance;
use crate::multilevel::DistTable;

use crate::multilevel::coarsen::hierarchy::*;
use crate::multilevel::config::*;
use crate::multilevel::driver::*;
use crate::multilevel::initial::multisection::*;

/// The best of the independent initial mappings (DRB, rebalance, refinement) of the
/// coarsest graph of `levels`, or, when `sections` (the target's nested groups) is not
/// empty, its [`multisection`] (rebalanced and refined): whether it is balanced, its f_C
/// and the PE of every coarse task.
pub(crate) fn initial_mapping(
    cfg: &MultilevelMapper,
    inst: &Instance<'_>,
    levels: &[Level],
    dist: &DistTable<'_>,
    sections: &[(Vec<u32>, u32)],
    ctx: &mut RunContext,
) -> (bool, u64, Vec<u32>) {
    let (arch, graph, fixed0, bound) = (inst.arch, inst.graph, inst.fixed, &inst.bound[..]);
    // Initial mapping of the coarsest graph: independent runs, best kept.
    let coarsest = levels.last().map_or(graph, |l| &l.graph);
    let coarsest_fixed = levels.last().map_or(fixed0, |l| &l.fixed[..]);
    // On targets of nested groups, multisection instead of DRB runs.
    if !sections.is_empty() {
        let coarse = Instance {
            graph: coarsest,
            arch,
            whole: inst.whole,
            epsilon: inst.epsilon,
            fixed: &[],
            bound: bound.to_vec(),
        };
        let p = multisection(cfg, &coarse, dist, sections, graph.num_tasks(), ctx);
        let mut st = KwayState::new(coarsest, dist, bound, p);
        let ok = rebalance(&mut st);
        cfg.refiner().refine(&mut st, &mut ctx.rng);
        return (ok, st.comm_cost(), st.part);
    }
    // Targets whose PEs are all equally far apart (complete, weighted complete; up to
    // MAX_TABLE_PES, where the distance table exists) get no adaptive extra runs or
    // tries: onto the suite's weighted complete target, the 21 graphs below 32,768 tasks,
    // seeds 1-2, they lowered f_C by 0.8 % for 1.5 times the time, where the other targets
    // gain more for their time (`docs/benchmarks.md`). Multisection's top step keeps them
    // (its groups are equally far apart too).
    let budget = if inst.whole && dist.uniform() {
        0
    } else {
        cfg.initial_run_work / coarsest.num_tasks().max(1)
    };
    let runs = budget.min(MAX_ADAPTIVE_RUNS).max(cfg.initial_runs).max(1);
    let mut seeds: Vec<u64> = (0..runs).map(|_| ctx.rng.gen()).collect();
    // On a target with a mesh layout (a hypercube), one more run splits the layout's
    // domains; its seed is derived from the first run's, so the other runs and everything
    // after them draw the same numbers as without it.
    let layout = arch.shape().mesh_layout().filter(|_| cfg.layout_runs);
    if layout.is_some() {
        seeds.push(seeds[0] ^ LAYOUT_SEED_SALT);
    }
    let epsilon = inst.epsilon;
    // With a run budget of at least SMALL_GRAPH_BUDGET (at most 1,875 tasks by
    // default), every split also gets the strong preset's tries.
    let mut bip = cfg.bipartitioner();
    if budget >= SMALL_GRAPH_BUDGET {
        bip.tries = bip.tries.max(SMALL_GRAPH_TRIES);
    }
    let bip = &bip;
    // With at least as many runs as threads, the runs are the parallelism and every
    // DRB runs as one chain (the mapping is then the same for every thread count);
    // otherwise each DRB also splits its levels into chains (see `drb`).
    let threads = ctx.pool.as_ref().map_or(1, |p| p.current_num_threads());
    let pool = ctx.pool.as_ref().filter(|_| seeds.len() < threads);
    // On a torus with `unwrap=1` (`fast`), and by default on the tori of
    // `unwrap_by_default`, the even-numbered runs (so the only one when there is one)
    // bipartition the domains of its mesh (same PEs, no wrap-around): see
    // `Shape::unwrapped`.
    let unwrapped = arch
        .shape()
        .unwrapped()
        .filter(|_| cfg.unwrapped_runs(arch));
    // The runs refine without pairwise rounds: only the best run goes on, and the
    // uncoarsening, the V-cycles and multisection's steps refine with them (on the best
    // run alone they gained nothing on the small graphs, which the V-cycles refine).
    let run_refiner = KwayRefiner {
        pair_rounds: 0,
        ..cfg.refiner()
    };
    let run_refiner = &run_refiner;
    let run = |(i, &seed): (usize, &u64)| -> (bool, u64, Vec<u32>) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let pins = (!coarsest_fixed.is_empty()).then_some(coarsest_fixed);
        let domains = match (&unwrapped, &layout) {
            (_, Some(mesh)) if i == runs => mesh.as_ref(),
            (Some(mesh), _) if i % 2 == 0 => mesh.as_ref(),
            _ => arch,
        };
        let p = drb(coarsest, domains, bound, epsilon, bip, &mut rng, pool, pins);
        let mut st = KwayState::new(coarsest, dist, bound, p).with_fixed(coarsest_fixed);
        let ok = rebalance(&mut st);
        run_refiner.refine(&mut st, &mut rng);
        (ok, st.comm_cost(), st.part)
    };
    let results: Vec<(bool, u64, Vec<u32>)> = match &ctx.pool {
        Some(pool) => pool.install(|| seeds.par_iter().enumerate().map(run).collect()),
        None => seeds.iter().enumerate().map(run).collect(),
    };
    results
        .into_iter()
        .min_by_key(|r| (!r.0, r.1))
        .expect("at least one initial run")
}

/// The seed of the extra initial run on a mesh layout: the first run's seed xor this.
pub(crate) const LAYOUT_SEED_SALT: u64 = 0x6a09_e667_f3bc_c908;

/// Whether multisection's top step, of `n` tasks onto `g` groups, coarsens deeper (see
/// [`MultilevelMapper::top_per_pe`]): when it is on, the problem's graph has at most
/// [`DEEP_TOP_MAX_TASKS`] tasks (`input_tasks`; the step maps its coarsest graph), and
/// the step's usual coarsest size is below `n`.
pub(crate) fn deep_top_step(
    cfg: &MultilevelMapper,
    n: usize,
    g: usize,
    input_tasks: usize,
) -> bool {
    let usual = coarsest_size(cfg, cfg.coarsest_per_pe, MIN_COARSEST_PER_PE, g);
    cfg.top_per_pe > 0 && input_tasks <= DEEP_TOP_MAX_TASKS && n > usual
}
