//! The greedy contention-aware mapper of De Petris & Perego (CNUCE C94-09, 1994, §5),
//! with incremental evaluation of its objective F and two improvements of ours. Every rule
//! with its readings, budgets and measurements: `docs/simulation.md`, "The greedy mapper".
//!
//! The paper's rules (`variant=paper`, [`GreedyPerego::paper`]): the first pair is the task
//! graph's centre on the centre PE (`Select_First_Pair`); the next task is the one of M'
//! (unmapped tasks with a mapped partner) with the most mapped partners (`Select_Task`,
//! §5.1); its feasible PEs (Figure 5: one task per PE, the memory bound, hard capacities)
//! are ranked by F' (eq. 6 on the PEs it changes, §5.2), the first `s = (2n+1)·|C(t)|` by F
//! through [`IncrementalF::trial`], ties by F_sum, the look-ahead (Figure 6), degrees within
//! a radius and the bounding box. We compare F_sum before the look-ahead, which the paper
//! lists first: F is a maximum over PEs and cannot tell a candidate next to the partners
//! from a distant one while the maximum lies elsewhere.
//!
//! Ours, on by default: an end-game search for a completion that puts every remaining task
//! next to all its partners (`endgame`: it closes the rings and finds the Gray-code
//! embeddings the paper's rules miss); an exchange pass scored by F (`refine_evals`); and,
//! in [`greedy_map_program`], one scored by the wormhole simulator (`sim_refine`), for what
//! F cannot see (a delay travelling from task to task, as up a reduce tree), run from the
//! greedy's mapping and from the multilevel mapper's (`multilevel_start`), the better kept.
//!
//! Results (`tests/sim_greedy.rs`): Table II's optimal rows reach the ideal machine with
//! dilation 1; reduce trees on meshes end at most 3.1 % above contention-free mappings on
//! twice the PEs (the paper: 6.8 %), butterflies on meshes within 0.3 % of the best mappings
//! annealing found (the paper: 1.8 % of the optima); the paper's rules alone miss by up to 215 %.
//!
//! Costs, per step: the task heap O(log a); F' over the PEs visited (all k with many tasks
//! per PE); `s` trials of the incremental F (see [`crate::perego::f`]); the tie-breakers on
//! the tied candidates only (routes for the look-ahead). Before: the centre (O(T·(T + a)),
//! at most 2^27 steps) and the balls of the connectivity and degree rules (at most 2^27
//! steps per radius).
//! Targets above 2^24 directed links or PEs are an error
//! ([`crate::perego::MAX_ROUTED_LINKS`]). A 400-task random program maps in about 0.1 s, 10,000 tasks in about 5 s (release
//! build); the simulated passes and the multilevel run add about 2.5 s. As a registered
//! algorithm on a task graph it uses [`SpmModel::from_task_graph`] (one phase, one message
//! per edge and direction of `w/2` flits, no waiting).

mod endgame;
mod exchange;
mod place;
mod sim_refine;
mod tasks;
mod topology;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use taskmap_arch::{Architecture, LinkId, PeId};

use crate::error::Error;
use crate::mapper::{Mapper, RunContext};
use crate::mapping::Mapping;
use crate::perego::f::{FValue, IncrementalF};
use crate::perego::spm::{SpmChannel, SpmModel, SpmParams};
use crate::problem::{Capacities, Problem};
use crate::registry::params::Preset;
use crate::registry::{ParamDoc, Params};
use serde::Deserialize;

use crate::perego::greedy::endgame::*;
use crate::perego::greedy::exchange::*;
use crate::perego::greedy::place::*;
use tasks::{centre_and_diameter, Partners};
use topology::{ball_sums, BoxState, Topo};

pub(crate) const UNMAPPED: u32 = u32::MAX;

/// The channels `chans` of task `t` whose other end is mapped in `pes`: the channel, the
/// other end's PE and whether the channel comes in to `t`.
pub(crate) fn mapped_channels<'m>(
    model: &'m SpmModel,
    chans: &'m [u32],
    pes: &'m [u32],
    t: u32,
) -> impl Iterator<Item = (&'m SpmChannel, u32, bool)> + 'm {
    chans.iter().filter_map(move |&c| {
        let ch = &model.channels[c as usize];
        let (other, incoming) = ch.other_end(t);
        let q = pes[other as usize];
        (q != UNMAPPED).then_some((ch, q, incoming))
    })
}

/// The greedy mapper and its parameters (`greedy-perego,variant=paper,refine=0`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GreedyPerego {
    /// Phase and machine parameters of F (from the simulator's options, not a key).
    #[serde(skip)]
    pub spm: SpmParams,
    /// Fewest candidates re-ranked by F (the paper's `s = (2n+1)·|C(t)|` is raised to
    /// this). Default 4.
    #[serde(alias = "candidates")]
    pub min_candidates: usize,
    /// Relative difference under which two values of F (and of F_sum) count as "similar"
    /// and the tie-breakers decide. Default 1e-9 (equal up to rounding).
    pub tie_tolerance: f64,
    /// The look-ahead tie-breaker (§5.2, Figure 6). Default on.
    pub lookahead: bool,
    /// `g` of the degree tie-breaker: compare the sums of the degrees of the tasks and
    /// PEs at distance below `g` (`Some(0)` turns it off). Default `None`: the radius of
    /// the connectivity rule, `min(D_a/4, D_p/4)`.
    #[serde(alias = "g", deserialize_with = "auto_or_count")]
    pub degree_radius: Option<u32>,
    /// Ours (the end-game search): once at most this many tasks are left, with one task
    /// per PE and every mapped task next to its mapped partners so far, search
    /// depth-first (most constrained task first) for a way to map all the remaining tasks
    /// next to all their partners; if one exists it is taken (it adds no distance and no
    /// contention, so F cannot do better). After a failed search the next one waits until
    /// half as many tasks are left. 0 turns it off ([`GreedyPerego::paper`]). Default
    /// `usize::MAX` (from the second task on).
    #[serde(deserialize_with = "all_off_or_count")]
    pub endgame: usize,
    /// Node budget of the end-game search per remaining task (at most 2^22 nodes in all;
    /// the option evaluations of the most-constrained choice are bounded by 64 per node of
    /// the budget, 2^26 in all). Default 64.
    pub endgame_budget: u64,
    /// Ours (the exchange pass): after the greedy, when a task is farther than distance 1
    /// from a partner and no task has more partners than a PE has neighbours, move such
    /// tasks to a free PE next to a partner's PE or swap them with the task there,
    /// keeping a change when F_sum decreases and F does not increase (each candidate
    /// scored by a full evaluation of F). The evaluations form one pool of this many per
    /// task, `refine_evals · T`, shared by all tasks, at most 2^16 and at most 2^31 steps
    /// in all (0: off). Default 64.
    #[serde(alias = "refine")]
    pub refine_evals: u32,
    /// Ours (the simulated exchange pass, [`greedy_map_program`] only, which has the
    /// program): the moves of the exchange pass scored by the wormhole simulator, kept when
    /// they lower the simulated completion time (then the sum of the tasks' finishing
    /// times); at most this many simulations per task and 2^23 simulated events in all
    /// (0: off). Runs on one-task-per-PE results above the ideal machine. Default 8 (the
    /// passes end by themselves on small programs, e.g. `butterfly:6`; larger ones stop at
    /// the event bound).
    pub sim_refine: u32,
    /// Ours (a second start for the simulated exchange pass, [`greedy_map_program`]
    /// only): the pass also runs from the multilevel mapper's mapping of the program's
    /// task graph (when it holds one task per PE), and the result with the lower
    /// simulated (completion, sum of finishing times) is kept. Skipped when the first pass
    /// ends at the ideal machine's completion time. For programs too large for the
    /// simulated pass, the multilevel mapping is kept instead of the greedy's when its
    /// `F_prop` ([`SpmModel::evaluate_propagated`]) is lower (`random:5000` on
    /// `mesh:71x71`: 49,523 → 40,599 simulated cycles). It is for programs whose pattern
    /// the greedy construction embeds poorly (butterflies on meshes: +7.9 % on
    /// `mesh:16x16` from the greedy alone). Default on; needs `sim_refine` > 0.
    pub multilevel_start: bool,
    /// The bounding-rectangle tie-breaker. Default on.
    #[serde(alias = "bbox")]
    pub bounding_box: bool,
    /// The memory bound `M` of the paper as a number of tasks per PE (0: none). Default 0.
    #[serde(alias = "memory")]
    pub max_tasks_per_pe: u32,
    /// With no more tasks than PEs, only free PEs are candidates (one task per PE).
    /// Default on.
    pub one_to_one: bool,
}

impl Default for GreedyPerego {
    fn default() -> Self {
        Self {
            spm: SpmParams::default(),
            min_candidates: 4,
            tie_tolerance: 1e-9,
            lookahead: true,
            degree_radius: None,
            endgame: usize::MAX,
            endgame_budget: 64,
            refine_evals: 64,
            sim_refine: 8,
            multilevel_start: true,
            bounding_box: true,
            max_tasks_per_pe: 0,
            one_to_one: true,
        }
    }
}

impl GreedyPerego {
    /// The paper's rules only (no end-game search).
    pub fn paper() -> Self {
        Self {
            endgame: 0,
            refine_evals: 0,
            sim_refine: 0,
            multilevel_start: false,
            ..Self::default()
        }
    }
}

/// `degree_radius`: `auto` (or `none`) or a radius.
fn auto_or_count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    use serde::de::Error as _;
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::String(s) if s == "auto" || s == "none" => Ok(None),
        v => u32::try_from(count(&v).ok_or_else(|| D::Error::custom(expects("auto or", &v)))?)
            .map(Some)
            .map_err(|_| D::Error::custom(expects("auto or", &v))),
    }
}

/// `endgame`: `all`, `off` or a count of tasks.
fn all_off_or_count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    use serde::de::Error as _;
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) if s == "all" => Ok(usize::MAX),
        serde_json::Value::String(s) if s == "off" => Ok(0),
        v => count(&v)
            .and_then(|c| usize::try_from(c).ok())
            .ok_or_else(|| D::Error::custom(expects("all, off or", &v))),
    }
}

/// A non-negative integer, given as a number or as text.
fn count(v: &serde_json::Value) -> Option<u64> {
    match v {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn expects(what: &str, v: &serde_json::Value) -> String {
    let got = v.as_str().map_or_else(|| v.to_string(), str::to_string);
    format!("expects {what} a non-negative integer, got \"{got}\"")
}

/// A documented key of the greedy mapper.
const fn key(name: &'static str, aliases: &'static [&'static str], doc: &'static str) -> ParamDoc {
    ParamDoc { name, aliases, doc }
}

impl Params for GreedyPerego {
    const PRESET_KEY: Option<&'static str> = Some("variant");
    const PRESETS: &'static [Preset<Self>] = &[
        ("default", |_| {}),
        ("paper", |g| *g = GreedyPerego::paper()),
        ("plus", |_| {}),
    ];
    const DOCS: &'static [ParamDoc] = &[
        key("variant", &[], "default (the paper's rules with our end-game search and exchange passes) or paper (the paper's rules only)"),
        key("min_candidates", &["candidates"], "fewest candidates re-ranked by F"),
        key("tie_tolerance", &[], "relative difference under which two values of F tie, at least 0"),
        key("lookahead", &[], "the look-ahead tie-breaker"),
        key("degree_radius", &["g"], "radius of the degree tie-breaker: auto (the connectivity rule's) or a number (0: off)"),
        key("endgame", &[], "end-game search once at most this many tasks are left: all, off or a number"),
        key("endgame_budget", &[], "node budget of the end-game search per remaining task"),
        key("refine_evals", &["refine"], "exchange-pass evaluations per task (0: off), pooled"),
        key("sim_refine", &[], "simulations per task of the simulated exchange pass, programs only (0: off)"),
        key("multilevel_start", &[], "the simulated pass also starts from the multilevel mapper's mapping"),
        key("bounding_box", &["bbox"], "the bounding-rectangle tie-breaker"),
        key("max_tasks_per_pe", &["memory"], "the paper's memory bound M, tasks per PE (0: none)"),
        key("one_to_one", &[], "with no more tasks than PEs, only free PEs are candidates"),
    ];

    fn validate(&self) -> Result<(), String> {
        if !(self.tie_tolerance >= 0.0 && self.tie_tolerance.is_finite()) {
            return Err(format!(
                "tie_tolerance must be a non-negative number, got {}",
                self.tie_tolerance
            ));
        }
        Ok(())
    }
}

impl Mapper for GreedyPerego {
    fn name(&self) -> &'static str {
        "greedy-perego"
    }

    fn map(&self, problem: &Problem, _ctx: &mut RunContext) -> Result<Mapping, Error> {
        problem.check()?;
        let model = SpmModel::from_task_graph(&problem.graph, &self.spm);
        let caps = problem.capacities.as_ref().map(|c| CapacityBound {
            caps: c,
            graph: &problem.graph,
        });
        greedy_map_with(&model, problem.arch.as_ref(), self, caps)
    }
}

/// Hard capacities of a registered run: a PE is feasible for a task when its load plus
/// the task's vertex weights stay within the capacity, for every constraint.
#[derive(Clone, Copy)]
pub(crate) struct CapacityBound<'p> {
    pub(crate) caps: &'p Capacities,
    pub(crate) graph: &'p taskmap_graph::TaskGraph,
}

/// Maps a program with its full phase model (see the module documentation).
pub fn greedy_map_program(
    program: &crate::perego::Program,
    arch: &dyn Architecture,
    params: &GreedyPerego,
) -> Result<Mapping, Error> {
    let model = SpmModel::build(program, &params.spm)?;
    let mapping = greedy_map(&model, arch, params)?;
    if params.sim_refine == 0 {
        return Ok(mapping);
    }
    let mut pes: Vec<u32> = mapping.as_slice().iter().map(|p| p.0).collect();
    let machine = &params.spm.machine;
    if params.multilevel_start && !crate::perego::one_task_per_pe(&pes, arch.pe_count()) {
        // Several tasks on a PE: no exchange pass; the multilevel mapping of the task graph
        // replaces the greedy's when its simulated (completion, sum of finishing times) is
        // lower.
        if let Some(other) = multilevel_shared(program, arch) {
            let mut events = 0u64;
            let a = sim_refine::score_of(program, arch, machine, &pes, &mut events);
            let b = sim_refine::score_of(program, arch, machine, &other, &mut events);
            if let (Some(a), Some(b)) = (a, b) {
                if b < a {
                    pes = other;
                }
            }
        }
        return Ok(Mapping::new(pes.into_iter().map(PeId).collect()));
    }
    let refined = sim_refine::sim_refine(program, arch, machine, &mut pes, params.sim_refine);
    if !params.multilevel_start || refined.ideal {
        return Ok(Mapping::new(pes.into_iter().map(PeId).collect()));
    }
    if let Some(score) = refined.score {
        if let Some(mut other) = multilevel_start(program, arch) {
            let second =
                sim_refine::sim_refine(program, arch, machine, &mut other, params.sim_refine);
            if second.score.is_some_and(|s| s < score) {
                pes = other;
            }
        }
    } else {
        // No simulated pass (the program is too large for its budget): the multilevel
        // mapping replaces the greedy's when its F_prop is lower (both must be defined,
        // and the greedy's above the ideal machine's time).
        let f_prop = |p: &[u32]| {
            let m = Mapping::new(p.iter().map(|&x| PeId(x)).collect());
            model
                .evaluate_propagated(program, arch, &m)
                .ok()
                .flatten()
                .map(|e| e.f_prop)
        };
        if let Some(a) = f_prop(&pes).filter(|&a| a > model.ideal_completion as f64) {
            if let Some(other) = multilevel_start(program, arch) {
                if f_prop(&other).is_some_and(|b| b < a) {
                    pes = other;
                }
            }
        }
    }
    Ok(Mapping::new(pes.into_iter().map(PeId).collect()))
}

/// The multilevel mapper's mapping of `program`'s task graph onto `arch` as `-A
/// multilevel` makes it (the tasks' compute cycles as weights, the default imbalance and
/// parameters, seed 0), for several tasks per PE; `None` when it fails or when the target
/// cannot be rebuilt from its spec.
pub(crate) fn multilevel_shared(
    program: &crate::perego::Program,
    arch: &dyn Architecture,
) -> Option<Vec<u32>> {
    let target = crate::parse_arch(&arch.spec()).ok()?;
    let problem = Problem::new(program.to_task_graph(), target);
    let mapping = crate::multilevel::config::MultilevelMapper::default()
        .map(&problem, &mut RunContext::new(0))
        .ok()?;
    Some(mapping.as_slice().iter().map(|p| p.0).collect())
}

/// The multilevel mapper's mapping of `program`'s task graph onto `arch` (default
/// parameters, unit task weights, no imbalance allowed, seed 1), when it puts at most one
/// task on every PE; `None` otherwise, when the multilevel mapper fails or when the target
/// cannot be rebuilt from its spec.
pub(crate) fn multilevel_start(
    program: &crate::perego::Program,
    arch: &dyn Architecture,
) -> Option<Vec<u32>> {
    let target = crate::parse_arch(&arch.spec()).ok()?;
    // Unit task weights and no imbalance: with no more tasks than PEs, one task per PE.
    let (xadj, adjncy, ew, _, _) = program.to_task_graph().into_csr();
    let n = xadj.len() - 1;
    let graph = taskmap_graph::TaskGraph::from_csr_unchecked(xadj, adjncy, ew, vec![1; n], 1);
    let mut problem = Problem::new(graph, target);
    problem.epsilon = 0.0;
    // A failure here leaves the greedy's mapping, which is already valid.
    let Ok(mapping) = crate::multilevel::config::MultilevelMapper::default()
        .map(&problem, &mut RunContext::new(1))
    else {
        return None;
    };
    let pes: Vec<u32> = mapping.as_slice().iter().map(|p| p.0).collect();
    crate::perego::one_task_per_pe(&pes, arch.pe_count()).then_some(pes)
}

/// The greedy mapping of `model` onto `arch` (which needs routes), without capacities.
pub fn greedy_map(
    model: &SpmModel,
    arch: &dyn Architecture,
    params: &GreedyPerego,
) -> Result<Mapping, Error> {
    greedy_map_with(model, arch, params, None)
}

/// One candidate PE of the current task with its values.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cand {
    pub(crate) pe: u32,
    pub(crate) f: FValue,
}

/// Everything that does not change while mapping.
pub(crate) struct Ctx<'a> {
    pub(crate) model: &'a SpmModel,
    pub(crate) arch: &'a dyn Architecture,
    pub(crate) params: &'a GreedyPerego,
    pub(crate) caps: Option<CapacityBound<'a>>,
    pub(crate) topo: Topo<'a>,
    pub(crate) partners: Partners,
    /// Channels of every task, both directions (CSR of channel ids).
    pub(crate) ch_start: Vec<u32>,
    pub(crate) ch_ids: Vec<u32>,
    /// Connectivity: tasks within `min(D_a/4, D_p/4)`.
    pub(crate) conn: Vec<u64>,
    pub(crate) sigma_task: Vec<u64>,
    pub(crate) sigma_pe: Vec<u64>,
    pub(crate) first_task: u32,
    pub(crate) first_pe: u32,
    /// Unconnected tasks in selection order (highest connectivity, then lowest id).
    pub(crate) spare: Vec<u32>,
    pub(crate) one_to_one: bool,
    /// Rank every PE by F' even when the breadth-first search would do (tests).
    pub(crate) full_scan: bool,
    /// `n` of the k-ary n-cube.
    pub(crate) nd: usize,
    /// The most neighbours a PE has: a task with more partners cannot have them all at
    /// distance 1 (the end-game search and the exchange pass give up then).
    pub(crate) max_pe_degree: usize,
    pub(crate) tc: f64,
    pub(crate) n: usize,
    pub(crate) k: usize,
}

/// The partial mapping and the greedy's bookkeeping.
pub(crate) struct State<'a> {
    pub(crate) inc: IncrementalF<'a>,
    pub(crate) mapped_partners: Vec<u32>,
    /// M' as a heap: most mapped partners, then connectivity, then the earliest to enter
    /// M' (breadth-first), then the lowest id; stale entries are skipped.
    pub(crate) frontier: BinaryHeap<(u32, u64, Reverse<u64>, Reverse<u32>)>,
    pub(crate) entered: Vec<u64>,
    pub(crate) seq: u64,
    pub(crate) spare_pos: usize,
    pub(crate) bbox: BoxState,
    pub(crate) loads: Vec<u64>,
    pub(crate) occupied: usize,
    /// No mapped task is farther than distance 1 from a mapped partner (one task per PE).
    pub(crate) clean: bool,
}

/// Reused buffers of one step.
pub(crate) struct Scratch {
    pub(crate) order: Vec<(bool, f64, f64, u32)>,
    pub(crate) cands: Vec<Cand>,
    pub(crate) other_pes: Vec<(u32, f64)>,
    pub(crate) seen: Vec<u32>,
    pub(crate) bfs_stamp: u32,
    pub(crate) seeds: Vec<u32>,
    pub(crate) level: Vec<u32>,
    pub(crate) next_level: Vec<u32>,
    pub(crate) bfs_heap: BinaryHeap<(OrdKey, u32)>,
    pub(crate) route: Vec<LinkId>,
    pub(crate) keys: Vec<u64>,
}

impl Scratch {
    fn new(k: usize) -> Self {
        Self {
            order: Vec::new(),
            cands: Vec::new(),
            other_pes: Vec::new(),
            seen: vec![0; k],
            bfs_stamp: 0,
            seeds: Vec::new(),
            level: Vec::new(),
            next_level: Vec::new(),
            bfs_heap: BinaryHeap::new(),
            route: Vec::new(),
            keys: Vec::new(),
        }
    }
}

pub(crate) fn greedy_map_with(
    model: &SpmModel,
    arch: &dyn Architecture,
    params: &GreedyPerego,
    caps: Option<CapacityBound>,
) -> Result<Mapping, Error> {
    greedy_map_impl(model, arch, params, caps, false)
}

pub(crate) fn greedy_map_impl(
    model: &SpmModel,
    arch: &dyn Architecture,
    params: &GreedyPerego,
    caps: Option<CapacityBound>,
    full_scan: bool,
) -> Result<Mapping, Error> {
    if !(params.tie_tolerance >= 0.0 && params.tie_tolerance.is_finite()) {
        return Err(Error::Config(format!(
            "greedy-perego: tie_tolerance must be a non-negative number, not {}",
            params.tie_tolerance
        )));
    }
    // Every table below is sized by the target: refuse huge ones before allocating.
    crate::perego::check_routed_target(arch, "greedy-perego")?;
    let inc = IncrementalF::new(model, arch)?;
    let n = model.work.len();
    let k = arch.pe_count() as usize;
    if n == 0 {
        return Ok(Mapping::new(Vec::new()));
    }
    let mut loads = Vec::new();
    if let Some(cb) = caps {
        let ncon = cb.graph.ncon();
        if cb.graph.num_tasks() != n || cb.caps.pe_count() != k || cb.caps.ncon() != ncon {
            return Err(Error::Mismatch(
                "greedy-perego: the capacities do not fit the problem".into(),
            ));
        }
        for c in 0..ncon {
            let need = cb.graph.total_vertex_weight(c) as u128;
            let have: u128 = (0..k as u32)
                .map(|p| u128::from(cb.caps.get(PeId(p), c)))
                .sum();
            if need > have {
                return Err(Error::Mismatch(format!(
                    "greedy-perego: infeasible: the tasks need {} units of resource {} but the {} PEs offer only {} in total",
                    need, c, k, have
                )));
            }
        }
        loads = vec![0; k * ncon];
    }
    let mut cx = Ctx::new(model, arch, params, caps);
    cx.full_scan = full_scan;
    let mut st = State {
        inc,
        mapped_partners: vec![0; n],
        frontier: BinaryHeap::new(),
        entered: vec![u64::MAX; n],
        seq: 0,
        spare_pos: 0,
        bbox: cx.topo.new_box(),
        loads,
        occupied: 0,
        clean: true,
    };
    let mut sc = Scratch::new(k);
    // The end-game search runs when at most `endgame` tasks are left; after a failure it
    // is tried again once half as many are left (while the mapping is still clean).
    let mut endgame_at = params.endgame;
    while st.inc.mapped() < n {
        let remaining = n - st.inc.mapped();
        if endgame_at > 0
            && cx.one_to_one
            && st.clean
            && st.inc.mapped() > 0
            && remaining <= endgame_at
        {
            endgame_at = remaining / 2;
            if let Some(plan) = endgame_completion(&st, &cx) {
                for (t, p) in plan {
                    commit(&mut st, &cx, t, p);
                }
                break;
            }
        }
        step(&mut st, &cx, &mut sc)?;
    }
    if params.refine_evals > 0
        && cx.one_to_one
        && !st.clean
        && caps.is_none()
        && params.max_tasks_per_pe == 0
    {
        let mut pes = st.inc.pes().to_vec();
        refine(&cx, &mut pes);
        return Ok(Mapping::new(pes.into_iter().map(PeId).collect()));
    }
    Ok(Mapping::new(
        st.inc.pes().iter().map(|&p| PeId(p)).collect(),
    ))
}

impl<'a> Ctx<'a> {
    fn new(
        model: &'a SpmModel,
        arch: &'a dyn Architecture,
        params: &'a GreedyPerego,
        caps: Option<CapacityBound<'a>>,
    ) -> Self {
        let n = model.work.len();
        let k = arch.pe_count() as usize;
        let topo = Topo::new(arch);
        let partners = Partners::new(model);
        let mut ch_start = vec![0u32; n + 1];
        for c in &model.channels {
            ch_start[c.src as usize + 1] += 1;
            ch_start[c.dst as usize + 1] += 1;
        }
        for i in 0..n {
            ch_start[i + 1] += ch_start[i];
        }
        let mut fill = ch_start.clone();
        let mut ch_ids = vec![0u32; ch_start[n] as usize];
        for (ci, c) in model.channels.iter().enumerate() {
            for t in [c.src, c.dst] {
                ch_ids[fill[t as usize] as usize] = ci as u32;
                fill[t as usize] += 1;
            }
        }
        let (first_task, dp) = centre_and_diameter(&partners);
        let da = taskmap_arch::diameter(arch);
        // d < min(D_a/4, D_p/4)  <=>  d < ceil(...) for integer d; ball sums count the
        // distances below their radius.
        let conn_g = (da.min(u64::from(dp)) as f64 / 4.0).ceil() as u32;
        // Bounded (ball_sums halves a radius whose balls are too costly).
        let (conn, _) = ball_sums(n, conn_g, |t| partners.of(t), |_| 1);
        let g = params.degree_radius.unwrap_or(conn_g);
        // The two sides at the same radius (the smaller if one was halved).
        let (mut sigma_pe, g_pe) = topo.degree_sums(g);
        let (sigma_task, g_task) = ball_sums(
            n,
            g_pe,
            |t| partners.of(t),
            |t| u64::from(partners.degree(t)),
        );
        if g_task < g_pe {
            sigma_pe = topo.degree_sums(g_task).0;
        }
        let first_pe = topo.centre();
        let mut spare: Vec<u32> = (0..n as u32).collect();
        spare.sort_unstable_by_key(|&t| (Reverse(conn[t as usize]), t));
        let machine = &model.params().machine;
        Ctx {
            model,
            arch,
            params,
            caps,
            nd: topo.n_dims(),
            max_pe_degree: (0..k as u32)
                .map(|p| topo.neighbours(p).len())
                .max()
                .unwrap_or(0),
            topo,
            partners,
            ch_start,
            ch_ids,
            conn,
            sigma_task,
            sigma_pe,
            first_task,
            first_pe,
            spare,
            one_to_one: params.one_to_one && n <= k,
            full_scan: false,
            tc: machine.flit_cycles as f64,
            n,
            k,
        }
    }

    /// Feasible(m) of Figure 5 for `t` on `p`: one task per PE when there is room, the
    /// memory bound `M`, the hard capacities.
    fn feasible(&self, st: &State, t: u32, p: u32) -> bool {
        let on = st.inc.tasks_on(p);
        if self.one_to_one && on > 0 {
            return false;
        }
        if self.params.max_tasks_per_pe > 0 && on >= self.params.max_tasks_per_pe {
            return false;
        }
        if let Some(cb) = self.caps {
            let ncon = cb.graph.ncon();
            for c in 0..ncon {
                if st.loads[p as usize * ncon + c] + cb.graph.vertex_weight(t, c)
                    > cb.caps.get(PeId(p), c)
                {
                    return false;
                }
            }
        }
        true
    }

    #[inline]
    fn chans(&self, t: u32) -> &[u32] {
        &self.ch_ids[self.ch_start[t as usize] as usize..self.ch_start[t as usize + 1] as usize]
    }
}

/// Select_Task (§5.1): the task of M' with the most mapped partners (ties: connectivity,
/// then the earliest to enter M', then the lowest id); the centre first; an unconnected
/// task when M' is empty.
pub(crate) fn select_task(st: &mut State, cx: &Ctx) -> u32 {
    if st.inc.mapped() == 0 {
        return cx.first_task;
    }
    while let Some((mp, _, _, Reverse(t))) = st.frontier.pop() {
        if st.inc.pes()[t as usize] == UNMAPPED && mp == st.mapped_partners[t as usize] {
            return t;
        }
    }
    while st.inc.pes()[cx.spare[st.spare_pos] as usize] != UNMAPPED {
        st.spare_pos += 1;
    }
    cx.spare[st.spare_pos]
}

/// One step of Figure 4: select a task, rank the feasible PEs by F', re-rank the first s
/// by F, break ties, map.
pub(crate) fn step(st: &mut State, cx: &Ctx, sc: &mut Scratch) -> Result<(), Error> {
    let t = select_task(st, cx);
    candidates(st, cx, sc, t)?;
    let p = choose(st, cx, sc, t);
    commit(st, cx, t, p);
    Ok(())
}

/// Maps `t` on `p` and updates M', the box and the loads.
pub(crate) fn commit(st: &mut State, cx: &Ctx, t: u32, p: u32) {
    if st.inc.tasks_on(p) == 0 {
        st.occupied += 1;
    }
    st.inc.assign(t, p);
    cx.topo.box_add(&mut st.bbox, p);
    if let Some(cb) = cx.caps {
        let ncon = cb.graph.ncon();
        for c in 0..ncon {
            st.loads[p as usize * ncon + c] += cb.graph.vertex_weight(t, c);
        }
    }
    for &v in cx.partners.of(t) {
        st.mapped_partners[v as usize] += 1;
        let q = st.inc.pes()[v as usize];
        if q != UNMAPPED && cx.topo.dist(p, q) != 1 {
            st.clean = false;
        }
        if q == UNMAPPED {
            if st.entered[v as usize] == u64::MAX {
                st.entered[v as usize] = st.seq;
                st.seq += 1;
            }
            st.frontier.push((
                st.mapped_partners[v as usize],
                cx.conn[v as usize],
                Reverse(st.entered[v as usize]),
                Reverse(v),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perego::gen::{generate_program, random, GenParams};

    /// The breadth-first ranking by F' keeps exactly the candidates of a scan of every PE:
    /// both give the same mapping.
    #[test]
    fn bounded_fprime_search_equals_full_scan() {
        let cases = [
            ("random:40,seed=3", "mesh:7x7"),
            ("random:60,seed=4", "torus:8x8"),
            ("random:30,seed=5,partners=3", "hypercube:5"),
            ("tree:31", "mesh:6x6"),
            ("butterfly:5", "mesh:4x8"),
        ];
        let params = GreedyPerego::paper();
        for (g, a) in cases {
            let prog = generate_program(g).unwrap();
            let arch = taskmap_arch::parse_arch(a).unwrap();
            let model = SpmModel::build(&prog, &params.spm).unwrap();
            let fast = greedy_map_impl(&model, arch.as_ref(), &params, None, false).unwrap();
            let full = greedy_map_impl(&model, arch.as_ref(), &params, None, true).unwrap();
            assert_eq!(fast, full, "{g} on {a}");
        }
        let prog = random(50, &GenParams::default());
        let arch = taskmap_arch::parse_arch("mesh:8x8").unwrap();
        let model = SpmModel::from_task_graph(&prog.to_task_graph(), &params.spm);
        let fast = greedy_map_impl(&model, arch.as_ref(), &params, None, false).unwrap();
        let full = greedy_map_impl(&model, arch.as_ref(), &params, None, true).unwrap();
        assert_eq!(fast, full);
    }
}
