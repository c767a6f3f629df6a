//! V-cycles: the final mapping coarsened again inside its PEs, and refined on the way up,
//! paced to end by the run's deadline.

use std::time::{Duration, Instant};

use rand_xoshiro::Xoshiro256PlusPlus;

use crate::mapper::{NoProgress, RunContext};
use crate::multilevel::refine::kway::KwayState;
use crate::multilevel::DistTable;

use crate::multilevel::coarsen::hierarchy::*;
use crate::multilevel::config::*;
use crate::multilevel::driver::*;
use crate::multilevel::phases::Clustering;
use crate::multilevel::refine::*;

/// The mean duration of the steps done so far, to tell whether one more fits before a
/// deadline.
#[derive(Default)]
pub(crate) struct Pace {
    pub(crate) spent: Duration,
    pub(crate) steps: u32,
}

impl Pace {
    /// Records a step's duration.
    pub(crate) fn add(&mut self, d: Duration) {
        self.spent += d;
        self.steps += 1;
    }

    /// Whether a step started now, lasting the mean of those recorded (nothing before
    /// the first), ends by `deadline`; always without one.
    pub(crate) fn fits(&self, deadline: Option<Instant>) -> bool {
        let mean = self.spent / self.steps.max(1);
        deadline.is_none_or(|d| Instant::now() + mean <= d)
    }
}

/// Up to `count` V-cycles from `part` (fewer on large graphs: at most
/// `VCYCLE_WORK / n`, at least one), each kept when no worse in (unbalanced, f_C); stops
/// at the first that does not improve, and before a cycle that is not expected to end by
/// the context's deadline (at the mean pace of the cycles before).
pub(crate) fn vcycles(
    cfg: &MultilevelMapper,
    inst: &Instance<'_>,
    dist: &DistTable<'_>,
    mut part: Vec<u32>,
    count: usize,
    ctx: &mut RunContext,
) -> Vec<u32> {
    let (graph, fixed0, bound) = (inst.graph, inst.fixed, &inst.bound);
    let k = inst.arch.pe_count() as usize;
    let unc = |levels: &[Level],
               part: Vec<u32>,
               pool: Option<&rayon::ThreadPool>,
               rng: &mut Xoshiro256PlusPlus| {
        uncoarsen(
            &cfg.refiner(),
            levels,
            graph,
            fixed0,
            dist,
            bound,
            part,
            pool,
            rng,
            &NoProgress,
        )
    };
    ctx.timed("v-cycles", |ctx| {
        let target = cfg.vcycle_per_pe.saturating_mul(k).max(cfg.min_coarsest);
        let mcw = max_cluster_weights(cfg, graph, bound, k, target);
        // (unbalanced, f_C) of a mapping, which is handed back.
        let score = |p: Vec<u32>| scored(graph, dist, bound, p);
        let (mut best, p) = score(std::mem::take(&mut part));
        part = p;
        let cycles = count.min(VCYCLE_WORK / graph.num_tasks().max(1)).max(1);
        let mut pace = Pace::default();
        for cycle in 1..=cycles {
            if !pace.fits(ctx.deadline) || ctx.stopped() {
                break;
            }
            let t = Instant::now();
            let clustering = Clustering::new(cfg, cfg.vcycle_coarsening, target, &mcw);
            let pool = ctx.pool.as_ref();
            let levels = coarsen_levels(&clustering, graph, fixed0, &part, pool, &mut ctx.rng);
            let Some(top) = levels.last() else { break };
            let mut st = KwayState::new(&top.graph, dist, bound, top.part.clone())
                .with_fixed(&top.fixed)
                .with_pool(pool);
            cfg.refiner().refine(&mut st, &mut ctx.rng);
            let (sc, cand) = score(unc(&levels, st.part, pool, &mut ctx.rng));
            pace.add(t.elapsed());
            ctx.progress.step(cycle as u64, cycles as u64);
            if sc <= best {
                part = cand;
            }
            if sc >= best {
                break;
            }
            best = sc;
        }
    });
    part
}
