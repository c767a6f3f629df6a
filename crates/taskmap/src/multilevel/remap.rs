//! Refining a given mapping (`taskmap map --initial`): pins put in place, the balance
//! repaired, then the k-way refiner and the V-cycles; with a migration cost, on the graph
//! with an anchor task fixed on every PE that holds free tasks in the input.

use taskmap_arch::PeId;
use taskmap_graph::TaskGraph;

use crate::error::Error;
use crate::mapper::RunContext;
use crate::mapping::Mapping;
use crate::multilevel::refine::kway::KwayState;
use crate::multilevel::refine::rebalance::rebalance;
use crate::multilevel::DistTable;
use crate::problem::{Problem, FREE};

use crate::multilevel::config::*;
use crate::multilevel::driver::*;
use crate::multilevel::refine::*;
use crate::multilevel::vcycle::*;

/// Why [`MultilevelMapper::refine_mapping`] refuses the memetic mode.
pub const REFINE_ONE_RUN: &str =
    "multilevel: refining a given mapping is one run; population is not supported with it";

impl MultilevelMapper {
    /// Improves a given mapping (ours; KaHIP and Mt-KaHyPar refine an input partition
    /// likewise): fixed tasks go to their PEs, a broken balance is repaired by single
    /// moves, the k-way refiner runs on the input graph, then V-cycles (the
    /// configuration's `vcycles`, or `hub_vcycles` on a graph with hubs, at least one,
    /// though none starts that is not expected to
    /// end by the context's deadline) coarsen inside the PEs and refine every level on the
    /// way down, each kept when no worse, and with `anneal` the annealing (never worse
    /// either). The result is never worse than the input after those two repairs, in
    /// (unbalanced, f_C) order; when it is still unbalanced, a new run is made too and the
    /// better kept. The refiner may move tasks at equal f_C to even the loads. One run:
    /// the memetic mode is refused.
    pub fn refine_mapping(
        &self,
        problem: &Problem,
        initial: &Mapping,
        ctx: &mut RunContext,
    ) -> Result<Mapping, Error> {
        self.refine_mapping_migrating(problem, initial, 0, ctx)
    }

    /// [`MultilevelMapper::refine_mapping`] where every free task also pays `migration`
    /// per hop between its PE in `initial` and its new PE: the objective becomes
    /// `f_C + migration · Σ_t dist(initial(t), pe(t))` (0: plain f_C; the cost is first
    /// lowered by [`effective_migration_cost`]). Every PE holding free tasks in the input
    /// gets an anchor task of weight 0 fixed on it, joined by an edge of weight
    /// `migration` to each of them; the refiners, the V-cycles, the annealing and the
    /// fallback run then weigh the moves against that pull, treating the anchors as
    /// fixed tasks. Never worse than the input after the repairs in that objective (a
    /// balanced input with its pins in place is kept when no move pays for its
    /// migration).
    pub fn refine_mapping_migrating(
        &self,
        problem: &Problem,
        initial: &Mapping,
        migration: u64,
        ctx: &mut RunContext,
    ) -> Result<Mapping, Error> {
        problem.check_with_fixed()?;
        if self.population >= 2 {
            return Err(Error::Config(REFINE_ONE_RUN.into()));
        }
        initial.check(problem.graph.num_tasks(), problem.arch.as_ref())?;
        let migration = effective_migration_cost(problem, migration)?;
        let inst = instance(problem);
        let part: Vec<u32> = initial.as_slice().iter().map(|p| p.0).collect();
        if migration == 0 {
            let part = self.refine_instance(problem, &inst, part, ctx);
            return Ok(Mapping::new(part.into_iter().map(PeId).collect()));
        }
        let n = part.len();
        let (graph, fixed, anchors) = anchored(&inst, &part, migration);
        let anchored_inst = Instance {
            graph: &graph,
            fixed: &fixed,
            ..inst
        };
        let mut part = part;
        part.extend_from_slice(&anchors);
        let mut part = self.refine_instance(problem, &anchored_inst, part, ctx);
        part.truncate(n);
        Ok(Mapping::new(part.into_iter().map(PeId).collect()))
    }

    /// The pipeline of [`MultilevelMapper::refine_mapping`] on `inst` from `part`.
    fn refine_instance(
        &self,
        problem: &Problem,
        inst: &Instance<'_>,
        mut part: Vec<u32>,
        ctx: &mut RunContext,
    ) -> Vec<u32> {
        let large = large_config(self, problem);
        let cfg = large.as_ref().unwrap_or(self);
        let dist = ctx.timed("distance-table", |_| DistTable::new(inst.arch));
        for (t, &f) in inst.fixed.iter().enumerate() {
            if f != FREE {
                part[t] = f;
            }
        }
        let part = ctx.timed("refine", |ctx| {
            let mut st =
                KwayState::new(inst.graph, &dist, &inst.bound, part).with_fixed(inst.fixed);
            if !st.is_balanced() {
                rebalance(&mut st);
            }
            cfg.refiner().refine(&mut st, &mut ctx.rng);
            st.part
        });
        let part = vcycles(
            cfg,
            inst,
            &dist,
            part,
            vcycle_count(cfg, inst.graph).max(1),
            ctx,
        );
        let mut part = anneal_final(cfg, inst, &dist, part, ctx);
        // Single moves could not repair the balance: a new run too, the better kept.
        let (sc, p) = scored(inst.graph, &dist, &inst.bound, part);
        part = p;
        if sc.0 {
            let fresh = map_instance_with(cfg, inst, &dist, ctx);
            let fresh = anneal_final(cfg, inst, &dist, fresh, ctx);
            let (fc, fresh) = scored(inst.graph, &dist, &inst.bound, fresh);
            if fc < sc {
                part = fresh;
            }
        }
        part
    }
}

/// The most [`MultilevelMapper::refine_mapping_migrating`] takes per task and hop.
pub const MAX_MIGRATION_COST: u64 = 1 << 32;

/// The migration cost [`MultilevelMapper::refine_mapping_migrating`] works with on
/// `problem`: `migration` lowered to `W · diameter + 1` (W the total edge weight) when
/// above, since from there on no set of moves can pay for its migration (f_C never
/// exceeds `W · diameter`), so a larger cost changes nothing. Errors when `migration`
/// exceeds [`MAX_MIGRATION_COST`], or when f_C plus the migration could overflow the
/// refiners' signed 64-bit gains even so.
pub fn effective_migration_cost(problem: &Problem, migration: u64) -> Result<u64, Error> {
    if migration > MAX_MIGRATION_COST {
        return Err(Error::Config(format!(
            "the migration cost must be at most {MAX_MIGRATION_COST}, not {migration}"
        )));
    }
    let w = problem.graph.edge_weight_sum();
    let diameter = u128::from(taskmap_arch::diameter(problem.arch.as_ref()));
    let cost = u128::from(migration).min(w * diameter + 1);
    let free = match &problem.fixed {
        Some(f) => f.iter().filter(|&&p| p == FREE).count(),
        None => problem.graph.num_tasks(),
    } as u128;
    let limit = i64::MAX as u128;
    if (w + free * cost) * diameter > limit {
        let most = (limit / diameter.max(1)).saturating_sub(w) / free.max(1);
        return Err(Error::Config(format!(
            "the migration cost {migration} is too large for this graph and target: f_C plus the migration of its {free} free tasks could exceed 2^63-1 (at most {most} here)"
        )));
    }
    Ok(cost as u64)
}

/// `inst.graph` with an anchor task after its tasks for every PE `part` uses (ascending):
/// weight 0 in every constraint, fixed on its PE, joined to every free task `part` puts
/// there by an edge of weight `migration`. Returns the graph, its fixed PEs ([`FREE`] for
/// the free tasks) and the anchors' PEs.
pub(crate) fn anchored(
    inst: &Instance<'_>,
    part: &[u32],
    migration: u64,
) -> (TaskGraph, Vec<u32>, Vec<u32>) {
    let g = inst.graph;
    let (n, ncon) = (g.num_tasks(), g.ncon());
    let free = |t: usize| inst.fixed.is_empty() || inst.fixed[t] == FREE;
    let mut anchors: Vec<u32> = (0..n).filter(|&t| free(t)).map(|t| part[t]).collect();
    anchors.sort_unstable();
    anchors.dedup();
    // anchor of a PE: n + its index in `anchors`
    let anchor_of = |p: u32| n as u32 + anchors.binary_search(&p).unwrap_or(0) as u32;
    let mut xadj = Vec::with_capacity(n + anchors.len() + 1);
    let mut adjncy = Vec::with_capacity(2 * g.num_edges() + 2 * n);
    let mut weight = Vec::with_capacity(2 * g.num_edges() + 2 * n);
    xadj.push(0);
    for t in 0..n {
        adjncy.extend_from_slice(g.neighbors(t as u32));
        weight.extend_from_slice(g.edge_weights(t as u32));
        if free(t) {
            adjncy.push(anchor_of(part[t]));
            weight.push(migration);
        }
        xadj.push(adjncy.len());
    }
    // the anchors' tasks, each list ascending
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); anchors.len()];
    for t in (0..n).filter(|&t| free(t)) {
        members[(anchor_of(part[t]) as usize) - n].push(t as u32);
    }
    for m in &members {
        adjncy.extend_from_slice(m);
        weight.extend(std::iter::repeat_n(migration, m.len()));
        xadj.push(adjncy.len());
    }
    let mut vertex_weight = Vec::with_capacity((n + anchors.len()) * ncon);
    for t in 0..n as u32 {
        vertex_weight.extend_from_slice(g.vertex_weights(t));
    }
    vertex_weight.resize((n + anchors.len()) * ncon, 0);
    let graph = TaskGraph::from_csr_unchecked(xadj, adjncy, weight, vertex_weight, ncon);
    let mut fixed = if inst.fixed.is_empty() {
        vec![FREE; n]
    } else {
        inst.fixed.to_vec()
    };
    fixed.extend_from_slice(&anchors);
    (graph, fixed, anchors)
}
