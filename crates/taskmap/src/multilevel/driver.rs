//! The multilevel mapper: `uncoarsen(initial(coarsen(graph)))`, then V-cycles, minimising
//! `f_C` on every level; presets [`MultilevelMapper::fast`], [`MultilevelMapper::default`],
//! [`MultilevelMapper::strong`]. Parameters, and the design notes with the numbers behind
//! each default: `docs/algorithms.md` (`multilevel`).
//!
//! 1. **Coarsen** by size-constrained label propagation or heavy-edge matching (random or
//!    input order, [`heavy_edge_matching`]) to `max(coarsest_per_pe·k, min_coarsest)`
//!    tasks, capped at `max(max_coarsest, f·k)` with `f` = [`MIN_COARSEST_PER_PE`],
//!    [`TORUS_MIN_COARSEST_PER_PE`] or [`MULTISECTION_MIN_COARSEST_PER_PE`] (2-D grids of
//!    at most [`GRID2D_MAX_PES`] PEs: `grid2d_per_pe·k`). By default two hierarchies (label
//!    propagation, the ordered matching) are built, mapped and uncoarsened in turn, the
//!    better mapping kept; graphs of at least [`PROBE_TASKS`] tasks build the one a probe
//!    picks ([`probe_coarsenings`]).
//! 2. **Initial mapping** by dual recursive bipartitioning ([`crate::mappers::drb`]) with
//!    multilevel bisections refined by FM, flow ([`BISECTION_FLOW_ALPHA`]) and island
//!    removal ([`Bipartitioner`]), in seeded runs on the context's pool (more runs and
//!    tries on small graphs: [`MAX_ADAPTIVE_RUNS`], [`SMALL_GRAPH_TRIES`]); on long 3-D
//!    tori ([`unwrap_by_default`]) every other run splits the mesh's domains, on hypercubes
//!    one more run the Gray-code mesh's. On targets of nested groups (a tree's subtrees),
//!    without fixed tasks, [`multisection`] maps down the target's hierarchy instead: the
//!    whole mapper onto the top level's groups, then each group onto its subgroups (the top
//!    step coarsened deeper up to [`DEEP_TOP_MAX_TASKS`] tasks, [`deep_top_step`]).
//! 3. **Uncoarsen**: project, rebalance, refine every level with the k-way `f_C` refiner
//!    ([`KwayRefiner`]: label propagation, FM with rollback, swaps in `strong`) and
//!    pairwise rounds re-splitting two PEs by FM and flow ([`crate::multilevel::pairs`];
//!    graphs of at most [`PAIR_MAX_TASKS`] tasks).
//! 4. **Group levels** (`multisection=0` only, [`group_levels`]): per level of groups, a
//!    V-cycle on the partition into groups, the moved tasks then refined on the PEs.
//! 5. **V-cycles** (KaFFPa's iterated scheme): coarsen again inside the PEs, refine every
//!    level, keep when no worse; at most [`VCYCLE_WORK`] / n, until one gains nothing.
//! 6. **Memetic mode** (`population` ≥ 2, [`evolve`]): KaFFPaE's combine of whole runs.
//! 7. **Annealing** (`anneal` > 0, [`crate::multilevel::anneal`]) of the final mapping.
//!
//! Why: DRB maps best on the finest graph it can afford and no k-way refiner recovers what
//! a coarse initial mapping loses, so coarsening stops early; the two hierarchies' initial
//! mappings do not predict the winner after refinement (refining both: f_C 0.992 for 1.07
//! times the time on the suite's large graphs); multisection makes the top level, whose
//! distances dominate f_C, a k-way partition with room to move (0.973 in 0.89 times the
//! time onto the tree targets); V-cycles and pairwise rounds move clusters and frontiers
//! that single-task FM cannot.
//!
//! Complexity: O((1 + cycles)·(n + m)·levels·(rounds + passes·log n)) plus DRB on the
//! coarsest graph and O(k²) for the distance table (k ≤ 4096).
//!
//! References: Pellegrini, "Static mapping by dual recursive bipartitioning of process and
//! architecture graphs", SHPCC 1994 (Scotch's DRB); Walshaw & Cross, "Multilevel mesh
//! partitioning for heterogeneous communication networks", 2001; Sanders & Schulz, KaFFPa
//! 2011, KaFFPaE 2012 (KaHIP); Meyerhenke, Sanders & Schulz 2014, KaMinPar (label
//! propagation).

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use taskmap_arch::{Architecture, PeId};
use taskmap_graph::TaskGraph;

use crate::error::Error;
use crate::mapper::{Mapper, RunContext};
use crate::mappers::drb::drb;
use crate::mapping::Mapping;
use crate::multilevel::bipart::Bipartitioner;
use crate::multilevel::coarsen::{
    contract, heavy_edge_matching, label_propagation_clusters, Coarsening,
};
use crate::multilevel::pairs::PairPass;
use crate::multilevel::refine::{rebalance, KwayRefiner, KwayState};
use crate::multilevel::{load_bounds, DistTable};
use crate::problem::{Problem, FREE};

use super::evolve;

/// The most initial runs that [`MultilevelMapper::initial_run_work`] gives.
pub const MAX_ADAPTIVE_RUNS: usize = 4;

/// Coarsening may stop above `max_coarsest` tasks, at up to this many tasks per PE (with
/// `max_coarsest` = 32,768, the default, this matters above 1,024 PEs). With 8 per PE the
/// groups and bisections of 2,048 and 4,096 PEs are cut out of too coarse a graph: onto
/// `tree:8:16:32/1:10:100` (4,096 PEs) the 1000x1000 grid cost 1,624,267-1,663,348
/// (seeds 1-3) against 1,513,201-1,520,013 with 32, and `fe_body`, `wing`, `t60k` and
/// `finan512` (45,087-74,752 tasks, not coarsened with 32) cost 2.7-5.5 % less with 32,
/// in 0.99-1.07 times the time; onto `hypercube:12` and `mesh:16x16x16` the four gave f_C
/// 0.984 and 0.989 (seeds 1-2) in 0.77 and 0.76 times the time, and the two grids of a
/// million tasks 0.941 and 0.913 in 0.92 and 0.91 times.
pub const MIN_COARSEST_PER_PE: usize = 32;

/// [`MIN_COARSEST_PER_PE`] on a torus with a ring of more than two PEs (it matters above
/// 4,096 PEs), where 32 made the grids of a million tasks onto `torus:64x64` cost 1.11
/// times as much (seeds 1-2; DRB's splits of a torus are erratic on such graphs) while
/// the four graphs of 45,087-74,752 tasks gave 1.001.
pub const TORUS_MIN_COARSEST_PER_PE: usize = 8;

/// [`MIN_COARSEST_PER_PE`] when the initial mapping is by [`multisection`] (a target of
/// nested groups; it matters above 512 PEs). Multisection cuts every level of groups out
/// of the coarsest graph, and with 32 per PE the lower levels were cut out of too coarse
/// a graph: onto `tree:4:16:16/1:10:100` (1,024 PEs) the 1000x1000 grid's top-level
/// groups had the straight frontiers of 4x4 blocks, but the 16 nodes inside each group
/// cut 25-40 % more edges than 4x4 blocks of the group would (f_C 954,777; with 64 per
/// PE 895,615). The suite's seven graphs above 32,768 tasks, seeds 1-2, with 64 against
/// 32: f_C 0.972 onto that target in 1.00 times the time, 0.977 onto `tree:16:64/1:10`
/// and 0.970 onto `tree:4:4:64/1:5:20` (1.02 and 1.04 times); onto
/// `tree:8:16:32/1:10:100` (4,096 PEs, seed 1) 0.992 in 1.15 times (the two grids of a
/// million tasks 0.957 and 0.988, in 1.4 and 1.6 times; the others are not coarsened
/// either way). Onto `torus:16x16` the same coarsest size cost 1.062 (the cap of 32,768
/// tasks stays there).
pub const MULTISECTION_MIN_COARSEST_PER_PE: usize = 64;

/// Bipartitioning tries of every split when the run budget `initial_run_work / n` is at
/// least [`SMALL_GRAPH_BUDGET`] (b12 onto `torus:6x6` with capacity 40, seeds 0-4: f_C
/// 911-953 with the default 4 tries, 928-943 with 8, 0.16 s and 0.2 s).
pub const SMALL_GRAPH_TRIES: usize = 8;

/// The run budget from which every split gets [`SMALL_GRAPH_TRIES`] (at most 1,875 tasks by
/// default).
pub const SMALL_GRAPH_BUDGET: usize = 32;

/// Graphs of n tasks get at most `VCYCLE_WORK / n` V-cycles (at least one): a V-cycle
/// costs about as much as the first coarsening and uncoarsening (1.3 s on the 100x100x100
/// grid onto `torus:8x8x8`, f_C 271,879 -> 257,969; three: 250,345 in 3.2 s).
pub const VCYCLE_WORK: usize = 1_000_000;

/// Pairwise refinement and island removal apply to graphs of at most this many tasks
/// (on the 1000x1000 grid onto `torus:16x16` they raised the share of poor initial
/// mappings: f_C geometric mean over seeds 1-12 of 39,291 against 35,324 without).
pub const PAIR_MAX_TASKS: usize = 100_000;

/// Multisection's top step coarsens deeper ([`MultilevelMapper::top_per_pe`]) only for
/// problem graphs of at most this many tasks: on the 1000x1000 and 100x100x100 grids it
/// raised f_C by 2.4 % on average, up to 4.7 % (seeds 1-2, the three tree targets), as a
/// coarse initial mapping does on regular grids elsewhere.
pub const DEEP_TOP_MAX_TASKS: usize = 100_000;

/// Corridor factor of the flow refinement in the bisections of the default and strong
/// presets (`fast` keeps 1). With 3 instead of 1, over the suite's 224 runs (28 graphs, 8
/// targets, seed 1) f_C fell by 0.27 % for 4.4 % more time (`torus:16x16` 0.86 %,
/// `mesh:8x8x8` 0.22 %, `torus:8x8` unchanged); 5 gained no more (0.28 % for 8.9 %).
pub const BISECTION_FLOW_ALPHA: f64 = 3.0;

/// Corridor factor of the flow refinement in the pairwise rounds of the default and
/// strong presets (`fast`, which runs no pairwise rounds, keeps 1). With 3 in both the
/// bisections and the pairwise rounds, the same 224 runs gave f_C 0.49 % below the old
/// default for 7.0 % more time, against 0.27 % for 4.4 % with 3 in the bisections only
/// (`torus:8x8` 0.36 % and the trees 0.1-0.5 % more).
pub const PAIR_FLOW_ALPHA: f64 = 3.0;

/// The two-dimensional meshes and tori that get [`MultilevelMapper::grid2d_per_pe`] have at
/// most this many PEs: on `torus:16x16` the suite's f_C went from 0.883 of Scotch's to
/// 0.884 with 80 per PE and 0.879 with 40, for 11 % and 16 % more time.
pub const GRID2D_MAX_PES: usize = 128;

/// [`unwrap_by_default`] holds on tori with at least this many dimensions longer than two ...
pub const UNWRAP_MIN_DIMS: usize = 3;

/// ... and a ring of at least this many PEs (`torus:4x4x4` lost 0.7 % with the mesh's
/// domains, `torus:8x8x4` gained 0.4 %).
pub const UNWRAP_MIN_RING: u32 = 8;

/// Whether the even-numbered initial runs split the mesh's domains on `arch` when
/// [`MultilevelMapper::unwrapped_runs_3d`] is set: a torus of at least
/// [`UNWRAP_MIN_DIMS`] dimensions longer than two whose longest ring has at least
/// [`UNWRAP_MIN_RING`] PEs (see the module documentation, step 2).
pub fn unwrap_by_default(arch: &dyn Architecture) -> bool {
    arch.unwrapped().is_some()
        && arch.grid_dims().is_some_and(|d| {
            d.iter().filter(|&&s| s > 2).count() >= UNWRAP_MIN_DIMS
                && d.iter().any(|&s| s >= UNWRAP_MIN_RING)
        })
}

/// The multilevel mapper's configuration (serialised for `taskmap map --dump-config`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MultilevelMapper {
    /// How tasks are grouped on each level of the first coarsening.
    pub coarsening: Coarsening,
    /// A second first coarsening, tried when the graph is coarsened at all: both
    /// hierarchies get their initial mapping and are uncoarsened (or, without
    /// `uncoarsen_both`, only the one with the better initial mapping). `None`: only
    /// `coarsening`.
    pub alt_coarsening: Option<Coarsening>,
    /// How tasks are grouped on each level of a V-cycle.
    pub vcycle_coarsening: Coarsening,
    /// Label-propagation rounds per coarsening level.
    pub cluster_rounds: usize,
    /// Stop coarsening at `coarsest_per_pe · k` tasks ...
    pub coarsest_per_pe: usize,
    /// ... or at `grid2d_per_pe · k` tasks when that is fewer and the target is a
    /// two-dimensional mesh or torus of at most [`GRID2D_MAX_PES`] PEs (0: off) ...
    pub grid2d_per_pe: usize,
    /// ... but not below this many tasks ...
    pub min_coarsest: usize,
    /// ... and not above `max(max_coarsest, f·k)` tasks, `f` = [`MIN_COARSEST_PER_PE`],
    /// [`TORUS_MIN_COARSEST_PER_PE`] or [`MULTISECTION_MIN_COARSEST_PER_PE`] (bounds the
    /// initial DRB's time on large graphs and targets).
    pub max_coarsest: usize,
    /// At most this many coarse levels.
    pub max_levels: usize,
    /// Largest cluster weight, relative to the mean weight of a coarsest-graph task.
    pub cluster_weight_factor: f64,
    /// Independent initial mappings of the coarsest graph (each DRB + refinement).
    pub initial_runs: usize,
    /// Small coarsest graphs get more runs: `initial_run_work / n` of them (at most
    /// [`MAX_ADAPTIVE_RUNS`]) when that is more than `initial_runs`, except when the
    /// problem's target has all its PEs equally far apart. 0 turns this off.
    pub initial_run_work: usize,
    /// On a target with wrap-around links (a torus), the even-numbered initial runs (run 0
    /// first) split the domains of the same target without them (see
    /// `Architecture::unwrapped`).
    pub unwrapped_runs: bool,
    /// The same on the tori of [`unwrap_by_default`] only (the default; spec `unwrap=0`
    /// turns both off).
    pub unwrapped_runs_3d: bool,
    /// On a target with a mesh layout (a hypercube's Gray-code mesh, see
    /// `Architecture::mesh_layout`), one more initial run, which splits the layout's
    /// domains (not in `fast`). The suite's 28 graphs, seeds 1-2, onto `hypercube:8`: f_C
    /// 0.981 in 1.25 times the time (the 1000x1000 grid 0.71, the 100x100 grid 0.87-0.89,
    /// `delaunay_n15` and `whitaker3` 0.93-0.94, no run worse; seed 1 onto `hypercube:6`
    /// and `hypercube:10`: 0.990 and 0.982 in 1.23 and 1.26 times). Splitting the
    /// layout's domains in every other run instead, in 1.02 times the time, gave 0.991
    /// with losses of up to 5 %.
    pub layout_runs: bool,
    /// The bipartitioner of the initial DRB.
    pub bipartitioner: Bipartitioner,
    /// The refiner used on every level.
    pub refiner: KwayRefiner,
    /// V-cycles after the first uncoarsening: coarsen again with clusters inside one PE
    /// (so the mapping carries over to every level unchanged), refine on every level, keep
    /// the result when it is no worse.
    pub vcycles: usize,
    /// A V-cycle coarsens to about `vcycle_per_pe · k` tasks (at least `min_coarsest`).
    pub vcycle_per_pe: usize,
    /// On targets whose PEs fall into nested groups (the subtrees of a tree), when the
    /// initial mapping is not by `multisection`: for every level of groups, from the top,
    /// refine which group every task is in, as a partition with the groups' summed
    /// bounds, then place the tasks that changed group and refine on the PEs; kept when
    /// no worse. See [`refine_groups`].
    pub group_levels: bool,
    /// With two first coarsenings, uncoarsen (and refine) both hierarchies and keep the
    /// better mapping, instead of only the one whose initial mapping is better.
    pub uncoarsen_both: bool,
    /// With two first coarsenings, label propagation and a matching, a graph of at least
    /// this many tasks (0: never) builds only one hierarchy, the one a probe chooses (see
    /// [`probe_coarsenings`]); when the matching is chosen, no V-cycle follows. Default
    /// [`PROBE_TASKS`]; off in `strong`.
    pub probe_tasks: usize,
    /// On targets whose PEs fall into nested groups (the subtrees of a tree), and without
    /// fixed tasks: the initial mapping by multisection (see [`multisection`]) instead of
    /// coarsening and DRB onto the whole target.
    pub multisection: bool,
    /// Multisection's top step, for a problem graph of at most [`DEEP_TOP_MAX_TASKS`]
    /// tasks and a step graph it would coarsen anyway (more than its usual coarsest size),
    /// coarsens to `top_per_pe · g` tasks for `g` top-level groups (at least
    /// `min_coarsest`) and maps that with `top_runs` initial runs of `top_coarse_tries`
    /// coarse tries per split (used when above `tries`, as always; 0: off, the top step
    /// then runs as the whole graph would).
    pub top_per_pe: usize,
    /// See [`MultilevelMapper::top_per_pe`].
    pub top_runs: usize,
    /// See [`MultilevelMapper::top_per_pe`].
    pub top_coarse_tries: usize,
    /// Memetic mode when at least 2: this many whole runs, then `combines` recombinations
    /// of two of them (see [`evolve`]); 1: one run, the plain mapper.
    pub population: usize,
    /// Recombinations in memetic mode (`population` ≥ 2); `None`: [`evolve::COMBINES_PER_MEMBER`]
    /// per member.
    pub combines: Option<usize>,
    /// Recombinations drawn and run together, in parallel (`None`:
    /// [`evolve::COMBINE_BATCH`]); the mapping depends on it, not on the thread count.
    pub combine_batch: Option<usize>,
    /// Simulated annealing of the final mapping, this many proposals per task (0: off;
    /// see [`crate::multilevel::anneal`]).
    #[serde(default)]
    pub anneal: u64,
}

impl Default for MultilevelMapper {
    fn default() -> Self {
        Self {
            coarsening: Coarsening::LabelPropagation,
            alt_coarsening: Some(Coarsening::OrderedMatching),
            vcycle_coarsening: Coarsening::LabelPropagation,
            cluster_rounds: 3,
            coarsest_per_pe: 1000,
            grid2d_per_pe: 160,
            min_coarsest: 1024,
            max_coarsest: 32768,
            max_levels: 40,
            cluster_weight_factor: 1.5,
            initial_runs: 2,
            initial_run_work: 60_000,
            unwrapped_runs: false,
            unwrapped_runs_3d: true,
            layout_runs: true,
            bipartitioner: Bipartitioner {
                coarsen_to: 200,
                coarse_tries: 16,
                flow_alpha: BISECTION_FLOW_ALPHA,
                coarse_islands: true,
                ..Bipartitioner::default()
            },
            refiner: KwayRefiner {
                pair_rounds: 1,
                pair: PairPass {
                    flow_alpha: PAIR_FLOW_ALPHA,
                    ..PairPass::default()
                },
                ..KwayRefiner::default()
            },
            vcycles: 4,
            vcycle_per_pe: 8,
            group_levels: true,
            uncoarsen_both: true,
            probe_tasks: PROBE_TASKS,
            multisection: true,
            top_per_pe: 128,
            top_runs: 8,
            top_coarse_tries: 4,
            population: 1,
            combines: None,
            combine_batch: None,
            anneal: 0,
        }
    }
}

impl MultilevelMapper {
    /// Preset `fast`: the default with one initial run (none on a hypercube's mesh
    /// layout), one FM pass per level, no
    /// V-cycle, no group levels, and one coarsening, the ordered matching (the cheaper of
    /// the two, and the better on average alone: on the suite's seven graphs above 32,768
    /// tasks, with the default otherwise, f_C 0.955 of Scotch's against 0.978 for label
    /// propagation alone, though 11 % worse on `finan512`). 100x100x100 grid onto
    /// `torus:8x8x8`: f_C 239,396-277,661 (seeds 0-3) in 1.2-1.4 s, whole process
    /// (`docs/benchmarks.md`, "The large grids and million-task graphs"); with label
    /// propagation instead 291,299-310,983 in 1.8-1.9 s. Coarsening further (16 tasks per
    /// PE, two tries, no flow, no coarse tries) takes 0.06 of Scotch's time on the quick
    /// suite but gives f_C 1.086 of Scotch's.
    /// Its one initial run splits the mesh's domains where the default's even-numbered
    /// runs do, on the tori of [`unwrap_by_default`] (with the torus's own, that grid gave
    /// 284,260-361,518, seeds 0-2), and the torus's own elsewhere: against the mesh's
    /// domains on every torus (`unwrap=1`), the torus's own give f_C 0.9785 onto
    /// `torus:8x8` and 0.9751 onto `torus:16x16` (the suite's 28 graphs, seeds 1-2, the
    /// same time). On trees it multisections as the default
    /// does (`crack`, `3elt` and `fe_sphere` onto `tree:4:8:6/1:10:100`: the same f_C
    /// within 2 % either way, in about the same time).
    #[allow(clippy::field_reassign_with_default)] // presets edit the default, by design
    pub fn fast() -> Self {
        let mut c = Self::default();
        c.initial_runs = 1;
        c.initial_run_work = 0;
        c.grid2d_per_pe = 0;
        c.bipartitioner.flow_alpha = 1.0;
        c.refiner.pair.flow_alpha = 1.0;
        c.refiner.fm_passes = 1;
        c.refiner.pair_rounds = 0;
        c.vcycles = 0;
        c.group_levels = false;
        c.coarsening = Coarsening::OrderedMatching;
        c.alt_coarsening = None;
        c.top_per_pe = 0;
        c.layout_runs = false;
        c
    }

    /// Preset `strong`: more initial runs and tries, longer FM, swaps, up to 8 V-cycles.
    #[allow(clippy::field_reassign_with_default)] // presets edit the default, by design
    pub fn strong() -> Self {
        let mut c = Self::default();
        c.initial_runs = 8;
        c.initial_run_work = 0;
        c.bipartitioner.tries = 8;
        c.bipartitioner.coarse_tries = 32;
        c.bipartitioner.fm_passes = 10;
        c.bipartitioner.fm_stall = 200;
        c.refiner.fm_passes = 8;
        c.refiner.fm_stall = 1000;
        c.refiner.swap_rounds = 3;
        c.vcycles = 8;
        c.top_per_pe = 0;
        c.probe_tasks = 0;
        c
    }

    /// The preset of that name (`fast`, `default`, `strong`).
    pub fn preset(name: &str) -> Option<Self> {
        match name {
            "fast" => Some(Self::fast()),
            "default" => Some(Self::default()),
            "strong" => Some(Self::strong()),
            _ => None,
        }
    }
}

/// The registry form of the multilevel mapper: a preset and optional overrides, parsed from
/// `multilevel,preset=strong,runs=4,...`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MultilevelSpec {
    /// `fast`, `default` or `strong`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// First coarsening: `lp` (label propagation), `hem` (heavy-edge matching, random
    /// order) or `ordered` (heavy-edge matching in input order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coarsening: Option<String>,
    /// The second first coarsening, the same choices or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coarsening2: Option<String>,
    /// Coarsening of the V-cycles, the same choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vcoarsening: Option<String>,
    /// Initial DRB runs on the coarsest graph.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<usize>,
    /// Bipartitioning tries per split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tries: Option<usize>,
    /// FM passes of the k-way refiner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fm: Option<usize>,
    /// Label-propagation rounds of the k-way refiner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lp: Option<usize>,
    /// Swap rounds of the k-way refiner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swaps: Option<usize>,
    /// Coarsest graph size per PE (on every target: it also turns `per_pe2d` off unless
    /// that is given too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_pe: Option<usize>,
    /// Coarsest graph size per PE on small two-dimensional meshes and tori (see
    /// [`MultilevelMapper::grid2d_per_pe`]; 0: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_pe2d: Option<usize>,
    /// Bipartitioning tries on the coarsest graph of a multilevel bipartition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coarse_tries: Option<usize>,
    /// Flow refinement of the bipartitions: corridor size factor (0: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<usize>,
    /// Flow refinement of the pairwise rounds: corridor size factor (0: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_flow: Option<usize>,
    /// Multilevel bipartitioning in the initial DRB: coarsen task sets larger than this
    /// (0: flat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coarsen_to: Option<usize>,
    /// FM runs only on levels with at most this many tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fm_max: Option<usize>,
    /// Largest coarsest graph (the initial DRB's input), raised to 32·k (8·k on a torus
    /// with a ring of more than two PEs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_coarsest: Option<usize>,
    /// Graphs of at least this many tasks build one first hierarchy, chosen by a probe
    /// (see [`MultilevelMapper::probe_tasks`]; 0: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<usize>,
    /// 1: on a torus, the even-numbered initial runs use the mesh's domains; 0: never
    /// (unset: the preset's choice, by default only on the tori of [`unwrap_by_default`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unwrap: Option<u8>,
    /// 1: on a hypercube, one more initial run splits the domains of its Gray-code mesh
    /// (see [`MultilevelMapper::layout_runs`]); 0: no such run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<u8>,
    /// V-cycles after the first uncoarsening.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vcycles: Option<usize>,
    /// 1: refine the tree levels' groups (see [`MultilevelMapper::group_levels`]); 0: not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<u8>,
    /// 1: uncoarsen both first hierarchies and keep the better mapping (see
    /// [`MultilevelMapper::uncoarsen_both`]); 0: only the one with the better initial
    /// mapping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub both: Option<u8>,
    /// More bipartitioning tries where the tries' median cost exceeds the best by more than
    /// this many percent (0: off; see `Bipartitioner::more_tries_spread`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<usize>,
    /// 1: the initial mapping onto a target of nested groups by multisection (see
    /// [`MultilevelMapper::multisection`]); 0: by DRB onto the whole target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multisection: Option<u8>,
    /// Rounds of pairwise refinement per level (see `KwayRefiner::pair_rounds`; 0: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<usize>,
    /// 1: island removal on the coarsest sets of multilevel bipartitions (see
    /// `Bipartitioner::coarse_islands`); 0: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub islands: Option<u8>,
    /// Coarsest size per top-level group of multisection's top step (see
    /// [`MultilevelMapper::top_per_pe`]; 0: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_per_pe: Option<usize>,
    /// Initial runs of that top step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_runs: Option<usize>,
    /// Coarse tries per split in that top step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_coarse_tries: Option<usize>,
    /// Memetic mode: whole runs in the population (1: off; see [`evolve`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub population: Option<usize>,
    /// Memetic mode: recombinations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub combines: Option<usize>,
    /// Memetic mode: recombinations run together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<usize>,
    /// Annealing of the final mapping: proposals per task (0: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anneal: Option<u64>,
}

/// Parses `key=value` parameters, giving a [`Error::Config`] that names the algorithm.
pub(crate) fn parse_usize(alg: &str, key: &str, value: &str) -> Result<usize, Error> {
    value.trim().parse().map_err(|_| {
        Error::Config(format!(
            "{}: parameter \"{}\" expects a non-negative integer, got \"{}\"",
            alg, key, value
        ))
    })
}

/// [`parse_usize`] for a count of at most `max` (a larger one is an error, not a run that
/// does not end).
pub(crate) fn parse_at_most(alg: &str, key: &str, value: &str, max: usize) -> Result<usize, Error> {
    let v = parse_usize(alg, key, value)?;
    if v > max {
        return Err(Error::Config(format!(
            "{alg}: {key}={v} is more than the {max} allowed"
        )));
    }
    Ok(v)
}

/// A count of runs or tries, 1 to `max`.
pub(crate) fn parse_count(alg: &str, key: &str, value: &str, max: usize) -> Result<usize, Error> {
    let v = parse_at_most(alg, key, value, max)?;
    if v == 0 {
        return Err(Error::Config(format!(
            "{alg}: {key} must be at least 1, got 0"
        )));
    }
    Ok(v)
}

/// The most bipartitioning tries (`tries`, `coarse_tries`) a spec may ask for.
pub const MAX_TRIES: usize = 1024;

/// The most initial runs (`runs`) a spec may ask for.
pub const MAX_RUNS: usize = 1024;

/// The most V-cycles (`vcycles`) or pairwise rounds per level (`pairs`) a spec may ask for.
pub const MAX_ROUNDS: usize = 64;

impl MultilevelSpec {
    /// Applies one `key=value` parameter.
    pub fn set(&mut self, param: &str) -> Result<(), Error> {
        let Some((key, value)) = crate::mapper::key_value("multilevel", param)? else {
            return Ok(());
        };
        match key {
            "preset" => {
                if MultilevelMapper::preset(value).is_none() {
                    return Err(Error::Config(format!(
                        "multilevel: unknown preset \"{}\"; known: fast, default, strong",
                        value
                    )));
                }
                self.preset = Some(value.to_string());
            }
            "coarsening" | "coarsening2" | "vcoarsening" => {
                if Coarsening::from_name(value).is_none() && !(key == "coarsening2" && value == "none")
                {
                    return Err(Error::Config(format!(
                        "multilevel: {} must be lp, hem or ordered{}, got \"{}\"",
                        key,
                        if key == "coarsening2" { " or none" } else { "" },
                        value
                    )));
                }
                let slot = match key {
                    "coarsening" => &mut self.coarsening,
                    "coarsening2" => &mut self.coarsening2,
                    _ => &mut self.vcoarsening,
                };
                *slot = Some(value.to_string());
            }
            "runs" => self.runs = Some(parse_count("multilevel", key, value, MAX_RUNS)?),
            "top_per_pe" | "top-per-pe" => {
                self.top_per_pe = Some(parse_usize("multilevel", key, value)?)
            }
            "top_runs" | "top-runs" => {
                self.top_runs = Some(parse_count("multilevel", key, value, MAX_RUNS)?)
            }
            "top_coarse_tries" | "top-coarse-tries" => {
                self.top_coarse_tries = Some(parse_at_most("multilevel", key, value, MAX_TRIES)?)
            }
            "tries" => self.tries = Some(parse_count("multilevel", key, value, MAX_TRIES)?),
            "population" => {
                self.population =
                    Some(parse_count("multilevel", key, value, evolve::MAX_POPULATION)?)
            }
            "combines" => {
                self.combines =
                    Some(parse_at_most("multilevel", key, value, evolve::MAX_COMBINES)?)
            }
            "batch" => {
                self.batch = Some(parse_count("multilevel", key, value, evolve::MAX_BATCH)?)
            }
            "anneal" => {
                self.anneal = Some(parse_at_most("multilevel", key, value, MAX_ANNEAL)? as u64)
            }
            "flow" => self.flow = Some(parse_usize("multilevel", key, value)?),
            "pair_flow" | "pair-flow" => {
                self.pair_flow = Some(parse_usize("multilevel", key, value)?)
            }
            "coarse_tries" | "coarse-tries" => {
                self.coarse_tries = Some(parse_at_most("multilevel", key, value, MAX_TRIES)?)
            }
            "fm" => self.fm = Some(parse_usize("multilevel", key, value)?),
            "lp" => self.lp = Some(parse_usize("multilevel", key, value)?),
            "swaps" => self.swaps = Some(parse_usize("multilevel", key, value)?),
            "per_pe" | "per-pe" => self.per_pe = Some(parse_usize("multilevel", key, value)?),
            "per_pe2d" | "per-pe2d" => {
                self.per_pe2d = Some(parse_usize("multilevel", key, value)?)
            }
            "fm_max" | "fm-max" => self.fm_max = Some(parse_usize("multilevel", key, value)?),
            "max_coarsest" | "max-coarsest" => {
                self.max_coarsest = Some(parse_usize("multilevel", key, value)?)
            }
            "probe" => self.probe = Some(parse_usize("multilevel", key, value)?),
            "coarsen_to" | "coarsen-to" => {
                self.coarsen_to = Some(parse_usize("multilevel", key, value)?)
            }
            "spread" => {
                let v = parse_usize("multilevel", key, value)?;
                if v > 1000 {
                    return Err(Error::Config(format!(
                        "multilevel: spread is a percentage (0 = off), at most 1000, got {v}"
                    )));
                }
                self.spread = Some(v);
            }
            "unwrap" | "layout" | "groups" | "both" | "multisection" | "islands" => {
                let v = parse_usize("multilevel", key, value)?;
                if v > 1 {
                    return Err(Error::Config(format!(
                        "multilevel: {} must be 0 or 1, got \"{}\"",
                        key, value
                    )));
                }
                let slot = match key {
                    "unwrap" => &mut self.unwrap,
                    "layout" => &mut self.layout,
                    "groups" => &mut self.groups,
                    "both" => &mut self.both,
                    "islands" => &mut self.islands,
                    _ => &mut self.multisection,
                };
                *slot = Some(v as u8);
            }
            "vcycles" | "pairs" => {
                let v = parse_at_most("multilevel", key, value, MAX_ROUNDS)?;
                let slot = if key == "pairs" {
                    &mut self.pairs
                } else {
                    &mut self.vcycles
                };
                *slot = Some(v);
            }
            _ => {
                return Err(Error::Config(format!(
                    "multilevel: unknown parameter \"{}\"; known: preset, coarsening, coarsening2, vcoarsening, runs, tries, coarse_tries, flow, pair_flow, fm, lp, swaps, per_pe, per_pe2d, coarsen_to, fm_max, max_coarsest, probe, unwrap, vcycles, groups, both, spread, multisection, pairs, islands, top_per_pe, top_runs, top_coarse_tries, population, combines, batch, anneal",
                    key
                )))
            }
        }
        Ok(())
    }

    /// The configuration: the preset, then the overrides.
    pub fn to_mapper(&self) -> MultilevelMapper {
        let mut m = self
            .preset
            .as_deref()
            .and_then(MultilevelMapper::preset)
            .unwrap_or_default();
        if let Some(c) = self.coarsening.as_deref().and_then(Coarsening::from_name) {
            m.coarsening = c;
        }
        match self.coarsening2.as_deref() {
            Some("none") => m.alt_coarsening = None,
            Some(c) => {
                if let Some(c) = Coarsening::from_name(c) {
                    m.alt_coarsening = Some(c);
                }
            }
            None => {}
        }
        if let Some(c) = self.vcoarsening.as_deref().and_then(Coarsening::from_name) {
            m.vcycle_coarsening = c;
        }
        if let Some(v) = self.runs {
            m.initial_runs = v.max(1);
            m.initial_run_work = 0;
        }
        if let Some(v) = self.tries {
            m.bipartitioner.tries = v.max(1);
        }
        if let Some(v) = self.coarse_tries {
            m.bipartitioner.coarse_tries = v;
        }
        if let Some(v) = self.flow {
            m.bipartitioner.flow_alpha = v.min(1 << 20) as f64;
        }
        if let Some(v) = self.pair_flow {
            m.refiner.pair.flow_alpha = v.min(1 << 20) as f64;
        }
        if let Some(v) = self.fm {
            m.refiner.fm_passes = v;
        }
        if let Some(v) = self.lp {
            m.refiner.lp_rounds = v;
        }
        if let Some(v) = self.swaps {
            m.refiner.swap_rounds = v;
        }
        if let Some(v) = self.per_pe {
            m.coarsest_per_pe = v.max(1);
            m.grid2d_per_pe = 0;
        }
        if let Some(v) = self.per_pe2d {
            m.grid2d_per_pe = v;
        }
        if let Some(v) = self.coarsen_to {
            m.bipartitioner.coarsen_to = v;
        }
        if let Some(v) = self.fm_max {
            m.refiner.fm_max_tasks = v;
        }
        if let Some(v) = self.max_coarsest {
            m.max_coarsest = v;
        }
        if let Some(v) = self.probe {
            m.probe_tasks = v;
        }
        if let Some(v) = self.unwrap {
            m.unwrapped_runs = v != 0;
            m.unwrapped_runs_3d = v != 0;
        }
        if let Some(v) = self.layout {
            m.layout_runs = v != 0;
        }
        if let Some(v) = self.vcycles {
            m.vcycles = v;
        }
        if let Some(v) = self.groups {
            m.group_levels = v != 0;
        }
        if let Some(v) = self.both {
            m.uncoarsen_both = v != 0;
        }
        if let Some(v) = self.multisection {
            m.multisection = v != 0;
        }
        if let Some(v) = self.pairs {
            m.refiner.pair_rounds = v;
        }
        if let Some(v) = self.islands {
            m.bipartitioner.coarse_islands = v != 0;
        }
        if let Some(v) = self.top_per_pe {
            m.top_per_pe = v;
        }
        if let Some(v) = self.top_runs {
            m.top_runs = v.max(1);
        }
        if let Some(v) = self.top_coarse_tries {
            m.top_coarse_tries = v;
        }
        if let Some(v) = self.population {
            m.population = v.max(1);
        }
        if let Some(v) = self.combines {
            m.combines = Some(v);
        }
        if let Some(v) = self.batch {
            m.combine_batch = Some(v);
        }
        if let Some(v) = self.anneal {
            m.anneal = v;
        }
        if let Some(v) = self.spread {
            m.bipartitioner.more_tries_spread = if v == 0 { 0.0 } else { 1.0 + v as f64 / 100.0 };
        }
        m
    }
}

impl Mapper for MultilevelMapper {
    fn name(&self) -> &'static str {
        "multilevel"
    }

    fn map(&self, problem: &Problem, ctx: &mut RunContext) -> Result<Mapping, Error> {
        problem.check_with_fixed()?;
        if (self.combines.is_some() || self.combine_batch.is_some()) && self.population < 2 {
            return Err(Error::Config(
                "multilevel: combines and batch need the memetic mode, population=2 or more".into(),
            ));
        }
        if let Some(b) = self
            .combine_batch
            .filter(|b| !(1..=evolve::MAX_BATCH).contains(b))
        {
            return Err(Error::Config(format!(
                "multilevel: batch must be 1 to {}, got {b}",
                evolve::MAX_BATCH
            )));
        }
        let part = multilevel_map(self, problem, ctx);
        Ok(Mapping::new(part.into_iter().map(PeId).collect()))
    }
}

/// Why [`MultilevelMapper::refine_mapping`] refuses the memetic mode.
pub const REFINE_ONE_RUN: &str =
    "multilevel: refining a given mapping is one run; population is not supported with it";

impl MultilevelMapper {
    /// Improves a given mapping (ours; KaHIP and Mt-KaHyPar refine an input partition
    /// likewise): fixed tasks go to their PEs, a broken balance is repaired by single
    /// moves, the k-way refiner runs on the input graph, then V-cycles (the
    /// configuration's `vcycles`, at least one, though none starts that is not expected to
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
            cfg.refiner.refine(&mut st, &mut ctx.rng);
            st.part
        });
        let part = vcycles(cfg, inst, &dist, part, cfg.vcycles.max(1), ctx);
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
fn anchored(inst: &Instance<'_>, part: &[u32], migration: u64) -> (TaskGraph, Vec<u32>, Vec<u32>) {
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

/// One level of the hierarchy: a coarse graph, the cluster of every finer task, and the
/// PE every coarse task is fixed to (empty when no task is fixed).
pub(super) struct Level {
    pub(super) graph: TaskGraph,
    pub(super) cluster: Vec<u32>,
    pub(super) fixed: Vec<u32>,
    /// The PE of every coarse task in a V-cycle (empty otherwise).
    pub(super) part: Vec<u32>,
}

/// The largest cluster weight per constraint when coarsening to `target` tasks: about
/// `cluster_weight_factor · total / target`, at most half the smallest positive bound and
/// at least the heaviest task.
pub(super) fn max_cluster_weights(
    cfg: &MultilevelMapper,
    graph: &TaskGraph,
    bound: &[u64],
    k: usize,
    target: usize,
) -> Vec<u64> {
    let ncon = graph.ncon();
    (0..ncon)
        .map(|c| {
            let total = graph.total_vertex_weight(c);
            let maxvw = (0..graph.num_tasks() as u32)
                .map(|v| graph.vertex_weight(v, c))
                .max()
                .unwrap_or(0);
            let min_bound = (0..k)
                .map(|p| bound[p * ncon + c])
                .filter(|&b| b > 0)
                .min()
                .unwrap_or(1);
            let w = (cfg.cluster_weight_factor * total as f64 / target as f64).ceil() as u64;
            w.min(min_bound / 2).max(maxvw).max(1)
        })
        .collect()
}

/// Coarsens `graph` level by level until it has at most `target` tasks, a level barely
/// shrinks, or `max_levels` is reached. Pinned tasks stay single and pass their pin on.
/// With `part` non-empty (a V-cycle), clusters stay inside one PE and every level carries
/// the mapping.
#[allow(clippy::too_many_arguments)]
pub(super) fn coarsen_levels(
    cfg: &MultilevelMapper,
    scheme: Coarsening,
    graph: &TaskGraph,
    fixed0: &[u32],
    part0: &[u32],
    target: usize,
    mcw: &[u64],
    rng: &mut impl Rng,
) -> Vec<Level> {
    let mut levels: Vec<Level> = Vec::new();
    loop {
        let cur = levels.last().map_or(graph, |l| &l.graph);
        let cur_fixed = levels.last().map_or(fixed0, |l| &l.fixed[..]);
        let cur_part = levels.last().map_or(part0, |l| &l.part[..]);
        let n = cur.num_tasks();
        if n <= target || levels.len() >= cfg.max_levels {
            break;
        }
        let (cluster, nc) = match scheme {
            Coarsening::LabelPropagation => {
                label_propagation_clusters(cur, mcw, cfg.cluster_rounds, cur_fixed, cur_part, rng)
            }
            Coarsening::HeavyEdgeMatching | Coarsening::OrderedMatching => {
                let ordered = scheme == Coarsening::OrderedMatching;
                heavy_edge_matching(cur, mcw, cur_fixed, cur_part, ordered, rng)
            }
        };
        if nc as f64 > 0.95 * n as f64 {
            break;
        }
        let coarse = contract(cur, &cluster, nc);
        // Fixed tasks stay single, so their coarse task inherits the pin.
        let mut fixed = Vec::new();
        if !cur_fixed.is_empty() {
            fixed = vec![FREE; nc];
            for (v, &p) in cur_fixed.iter().enumerate() {
                if p != FREE {
                    fixed[cluster[v] as usize] = p;
                }
            }
        }
        let mut part = Vec::new();
        if !cur_part.is_empty() {
            part = vec![0u32; nc];
            for (v, &p) in cur_part.iter().enumerate() {
                part[cluster[v] as usize] = p;
            }
        }
        levels.push(Level {
            graph: coarse,
            cluster,
            fixed,
            part,
        });
    }
    levels
}

/// (unbalanced, f_C) of mapping `part` of `graph` (smaller is better), and `part` handed
/// back.
pub(super) fn scored(
    graph: &TaskGraph,
    dist: &DistTable<'_>,
    bound: &[u64],
    part: Vec<u32>,
) -> ((bool, u64), Vec<u32>) {
    let st = KwayState::new(graph, dist, bound, part);
    ((!st.is_balanced(), st.comm_cost()), st.part)
}

/// Projects `part` (a mapping of the coarsest level) through `levels` to `graph`,
/// repairing the balance where needed and refining on every level; returns the mapping of
/// `graph`.
pub(super) fn uncoarsen(
    cfg: &MultilevelMapper,
    levels: &[Level],
    graph: &TaskGraph,
    fixed0: &[u32],
    dist: &DistTable<'_>,
    bound: &[u64],
    mut part: Vec<u32>,
    rng: &mut impl Rng,
) -> Vec<u32> {
    for i in (0..levels.len()).rev() {
        let fine = if i == 0 { graph } else { &levels[i - 1].graph };
        let fine_fixed = if i == 0 {
            fixed0
        } else {
            &levels[i - 1].fixed[..]
        };
        let cl = &levels[i].cluster;
        let projected: Vec<u32> = cl.iter().map(|&c| part[c as usize]).collect();
        let mut st = KwayState::new(fine, dist, bound, projected).with_fixed(fine_fixed);
        if !st.is_balanced() {
            rebalance(&mut st);
        }
        cfg.refiner.refine(&mut st, rng);
        part = st.part;
    }
    let mut st = KwayState::new(graph, dist, bound, part).with_fixed(fixed0);
    if !st.is_balanced() {
        rebalance(&mut st);
    }
    st.part
}

/// The group levels of a tree-like target: for every distance `D` above the smallest
/// positive one, from the largest down, the classes of "at distance below `D`", when they
/// are an equivalence with at least two and fewer than `k` classes and every two PEs of
/// two classes are as far apart as any other two (so the classes form a target of their
/// own), as `(class of every PE, number of classes)`; at most `max_levels` of them, from
/// the top. Empty when the largest distance does not split the PEs that way (meshes,
/// tori, hypercubes, complete graphs) and without a distance table (k > 4096). O(k²) per
/// level examined.
fn group_levels(dist: &DistTable<'_>, max_levels: usize) -> Vec<(Vec<u32>, u32)> {
    let k = dist.k();
    let classes = |d: u64| -> Option<(Vec<u32>, u32)> {
        let mut group = vec![u32::MAX; k as usize];
        let mut rep = Vec::new();
        for a in 0..k {
            if group[a as usize] != u32::MAX {
                continue;
            }
            for b in a..k {
                if dist.get(a, b) < d {
                    if group[b as usize] != u32::MAX {
                        return None;
                    }
                    group[b as usize] = rep.len() as u32;
                }
            }
            rep.push(a);
        }
        let g = rep.len() as u32;
        if g < 2 || g >= k {
            return None;
        }
        for a in 0..k {
            let ga = group[a as usize];
            for b in a + 1..k {
                let (gb, dab) = (group[b as usize], dist.get(a, b));
                let ok = if ga == gb {
                    dab < d
                } else {
                    dab >= d && dab == dist.get(rep[ga as usize], rep[gb as usize])
                };
                if !ok {
                    return None;
                }
            }
        }
        Some((group, g))
    };
    let Some(dmax) = dist.max_distance() else {
        return Vec::new();
    };
    if max_levels == 0 {
        return Vec::new();
    }
    let Some(top) = classes(dmax) else {
        return Vec::new();
    };
    let mut out = vec![top];
    if max_levels == 1 {
        return out;
    }
    // The distinct distances (a tree has one per level).
    let mut ds: Vec<u64> = Vec::new();
    for a in 0..k {
        for b in a + 1..k {
            let d = dist.get(a, b);
            if d < dmax && !ds.contains(&d) {
                if ds.len() == 64 {
                    return out;
                }
                ds.push(d);
            }
        }
    }
    ds.sort_unstable();
    // The smallest positive distance makes every PE its own class.
    for &d in ds.iter().skip(1).rev() {
        if out.len() == max_levels {
            break;
        }
        if let Some(level) = classes(d) {
            out.push(level);
        }
    }
    out
}

/// Group-level refinement (see [`MultilevelMapper::group_levels`]): a V-cycle on the
/// partition of the tasks into the `g` groups of `group` (two groups are as far apart as
/// any PE of one from any PE of the other; a group's bound is the sum of its PEs'), which
/// is not held back by the per-PE bounds that block single moves between full PEs; then
/// every task that changed group goes to the PE of its new group where it costs least
/// among those with room (the least loaded when none has), and the mapping is rebalanced
/// and refined on the PEs. The result is kept when it is no worse (balance first, then
/// f_C).
#[allow(clippy::too_many_arguments)]
fn refine_groups(
    cfg: &MultilevelMapper,
    graph: &TaskGraph,
    dist: &DistTable<'_>,
    bound: &[u64],
    group: &[u32],
    g: u32,
    part: Vec<u32>,
    rng: &mut Xoshiro256PlusPlus,
) -> Vec<u32> {
    let ncon = graph.ncon();
    let k = dist.k() as usize;
    let score = |st: &KwayState<'_>| (!st.is_balanced(), st.comm_cost());
    let start = KwayState::new(graph, dist, bound, part);
    let before = score(&start);
    let part = start.part;

    let mut rep = vec![0u32; g as usize];
    for p in (0..k as u32).rev() {
        rep[group[p as usize] as usize] = p;
    }
    let qd: Vec<u64> = (0..g as usize)
        .flat_map(|x| (0..g as usize).map(move |y| (x, y)))
        .map(|(x, y)| dist.get(rep[x], rep[y]))
        .collect();
    let qarch = taskmap_arch::DistanceMatrix::new(g, qd).expect("a group distance matrix");
    let qdist = DistTable::new(&qarch);
    let mut qbound = vec![0u64; g as usize * ncon];
    for p in 0..k {
        for c in 0..ncon {
            qbound[group[p] as usize * ncon + c] += bound[p * ncon + c];
        }
    }
    let nodes: Vec<u32> = part.iter().map(|&p| group[p as usize]).collect();
    let target = cfg.vcycle_per_pe.saturating_mul(k).max(cfg.min_coarsest);
    let mcw = max_cluster_weights(cfg, graph, &qbound, g as usize, target);
    let levels = coarsen_levels(
        cfg,
        cfg.vcycle_coarsening,
        graph,
        &[],
        &nodes,
        target,
        &mcw,
        rng,
    );
    let nodes = match levels.last() {
        Some(top) => {
            let mut st = KwayState::new(&top.graph, &qdist, &qbound, top.part.clone());
            cfg.refiner.refine(&mut st, rng);
            uncoarsen(cfg, &levels, graph, &[], &qdist, &qbound, st.part, rng)
        }
        None => {
            let mut st = KwayState::new(graph, &qdist, &qbound, nodes);
            cfg.refiner.refine(&mut st, rng);
            st.part
        }
    };
    drop(levels);

    let mut members: Vec<Vec<u32>> = vec![Vec::new(); g as usize];
    for p in 0..k as u32 {
        members[group[p as usize] as usize].push(p);
    }
    // How full a PE would be with `v` on it: its fullest constraint, relative to the bound.
    let fill = |st: &KwayState<'_>, v: u32, q: u32| -> f64 {
        let w = graph.vertex_weights(v);
        (0..ncon)
            .map(|c| {
                let i = q as usize * ncon + c;
                (st.loads[i] + w[c]) as f64 / bound[i].max(1) as f64
            })
            .fold(0.0, f64::max)
    };
    let mut st = KwayState::new(graph, dist, bound, part.clone());
    let mut cand: Vec<u32> = Vec::new();
    for v in 0..graph.num_tasks() as u32 {
        let x = nodes[v as usize];
        if group[st.part[v as usize] as usize] == x {
            continue;
        }
        // The PEs of the new group that hold neighbours, scored by their gain; else the
        // emptiest PE of the group.
        cand.clear();
        for &u in graph.neighbors(v) {
            let q = st.part[u as usize];
            if group[q as usize] == x && !cand.contains(&q) {
                cand.push(q);
            }
        }
        let mut best: Option<(i64, u32)> = None;
        for &q in &cand {
            if st.fits(v, q) {
                let gain = st.move_gain(v, q);
                if best.is_none_or(|(bg, bq)| gain > bg || (gain == bg && q < bq)) {
                    best = Some((gain, q));
                }
            }
        }
        let q = best.map(|(_, q)| q).unwrap_or_else(|| {
            let m = &members[x as usize];
            let emptiest = |fits_only: bool| {
                m.iter()
                    .copied()
                    .filter(|&q| !fits_only || st.fits(v, q))
                    .min_by(|&a, &b| fill(&st, v, a).total_cmp(&fill(&st, v, b)))
            };
            emptiest(true)
                .or_else(|| emptiest(false))
                .expect("a group has PEs")
        });
        st.apply(v, q);
    }
    if !st.is_balanced() {
        rebalance(&mut st);
    }
    cfg.refiner.refine(&mut st, rng);
    if score(&st) <= before {
        st.part
    } else {
        part
    }
}

/// Multisection (see [`MultilevelMapper::multisection`]): the initial mapping onto a
/// target whose PEs fall into nested groups `levels` (top first, from [`group_levels`]).
/// The tasks are mapped onto the top level's groups as a target of their own (two groups
/// as far apart as their PEs, a group's bound the sum of its PEs'), then the tasks of each
/// group onto that group's subgroups, and so on down to the PEs, each step a whole
/// multilevel run on the subgraph the tasks induce (the top step with the budgets of the
/// whole input, the steps below with `initial_runs` runs and no extra coarse tries). The
/// groups of a step below the top are independent problems (every edge between two of
/// them costs the same, whatever PEs its ends land on), solved in parallel on the
/// context's pool, each on one thread with a seed drawn beforehand, so they do not depend
/// on the thread count; the top step uses the pool as any multilevel run does.
/// `input_tasks` is the task count of the problem's graph before coarsening (it decides
/// [`deep_top_step`]).
fn multisection(
    cfg: &MultilevelMapper,
    inst: &Instance<'_>,
    dist: &DistTable<'_>,
    levels: &[(Vec<u32>, u32)],
    input_tasks: usize,
    ctx: &mut RunContext,
) -> Vec<u32> {
    let graph = inst.graph;
    let n = graph.num_tasks();
    let k = dist.k();
    let ncon = graph.ncon();
    let mut part = vec![0u32; n];
    // The steps run the ordinary mapper (no multisection, no fixed task) on one group.
    let mut sub = cfg.clone();
    sub.multisection = false;
    // (tasks, PEs) of every group of the current level.
    let mut jobs: Vec<(Vec<u32>, Vec<u32>)> = vec![((0..n as u32).collect(), (0..k).collect())];
    for depth in 0..=levels.len() {
        // The class of every PE on this level: its group, or itself below the last level.
        let class = |p: u32| levels.get(depth).map_or(p, |(g, _)| g[p as usize]);
        let seeds: Vec<u64> = jobs.iter().map(|_| ctx.rng.gen()).collect();
        // Maps one group's tasks onto its classes; hands the pool it was lent back.
        let step =
            |(tasks, pes): &(Vec<u32>, Vec<u32>), seed: u64, pool: Option<rayon::ThreadPool>| {
                // The classes of this group's PEs, in order of first appearance.
                let mut ids: Vec<u32> = Vec::new();
                let mut members: Vec<Vec<u32>> = Vec::new();
                for &p in pes {
                    let c = class(p);
                    match ids.iter().position(|&x| x == c) {
                        Some(i) => members[i].push(p),
                        None => {
                            ids.push(c);
                            members.push(vec![p]);
                        }
                    }
                }
                let g = members.len();
                if g == 1 || tasks.is_empty() {
                    return (members, vec![0u32; tasks.len()], pool);
                }
                let qd: Vec<u64> = (0..g)
                    .flat_map(|x| (0..g).map(move |y| (x, y)))
                    .map(|(x, y)| dist.get(members[x][0], members[y][0]))
                    .collect();
                let qarch = taskmap_arch::DistanceMatrix::new(g as u32, qd)
                    .expect("the groups of a level form a distance matrix");
                let mut qbound = vec![0u64; g * ncon];
                for (x, m) in members.iter().enumerate() {
                    for &p in m {
                        for c in 0..ncon {
                            qbound[x * ncon + c] += inst.bound[p as usize * ncon + c];
                        }
                    }
                }
                let mut child = RunContext::new(seed);
                child.pool = pool;
                // The top step, whose groups are the farthest apart, runs as the input
                // graph would; the steps below get the fixed count of runs (`initial_runs`)
                // and no extra coarse tries (DRB onto the whole target gives those only to
                // its largest domains); no step gets more V-cycles than the input would.
                let mut c = sub.clone();
                if depth > 0 {
                    c.initial_run_work = 0;
                    c.bipartitioner.coarse_tries = 0;
                } else if deep_top_step(&c, tasks.len(), g, input_tasks) {
                    c.coarsest_per_pe = c.top_per_pe;
                    c.grid2d_per_pe = 0;
                    c.initial_runs = c.top_runs;
                    c.initial_run_work = 0;
                    c.bipartitioner.coarse_tries = c.top_coarse_tries;
                }
                c.vcycles = cfg.vcycles.min((VCYCLE_WORK / n.max(1)).max(1));
                let owned;
                let sg = if tasks.len() == n {
                    graph
                } else {
                    let mut local = vec![u32::MAX; n];
                    owned = graph.induced(tasks, &mut local);
                    &owned
                };
                let q = map_instance(
                    &c,
                    &Instance {
                        graph: sg,
                        arch: &qarch,
                        whole: false,
                        epsilon: inst.epsilon,
                        fixed: &[],
                        bound: qbound,
                    },
                    &mut child,
                );
                (members, q, child.pool.take())
            };
        let results: Vec<(Vec<Vec<u32>>, Vec<u32>)> = if depth == 0 {
            // The top step, the only job of its level, gets the pool for its initial runs.
            let (members, q, pool) = step(&jobs[0], seeds[0], ctx.pool.take());
            ctx.pool = pool;
            vec![(members, q)]
        } else {
            let run = |(j, &s): (&(Vec<u32>, Vec<u32>), &u64)| {
                let (members, q, _) = step(j, s, None);
                (members, q)
            };
            match &ctx.pool {
                Some(pool) => pool.install(|| jobs.par_iter().zip(&seeds).map(run).collect()),
                None => jobs.iter().zip(&seeds).map(run).collect(),
            }
        };
        let mut next = Vec::new();
        for ((tasks, _), (members, q)) in jobs.iter().zip(results) {
            let mut split: Vec<Vec<u32>> = vec![Vec::new(); members.len()];
            for (&t, &x) in tasks.iter().zip(&q) {
                split[x as usize].push(t);
            }
            for (ts, m) in split.into_iter().zip(members) {
                if m.len() == 1 {
                    for &t in &ts {
                        part[t as usize] = m[0];
                    }
                } else if !ts.is_empty() {
                    next.push((ts, m));
                }
            }
        }
        jobs = next;
        if jobs.is_empty() {
            break;
        }
    }
    part
}

/// The best of the independent initial mappings (DRB, rebalance, refinement) of the
/// coarsest graph of `levels`, or, when `sections` (the target's nested groups) is not
/// empty, its [`multisection`] (rebalanced and refined): whether it is balanced, its f_C
/// and the PE of every coarse task.
fn initial_mapping(
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
        cfg.refiner.refine(&mut st, &mut ctx.rng);
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
    let layout = arch.mesh_layout().filter(|_| cfg.layout_runs);
    if layout.is_some() {
        seeds.push(seeds[0] ^ LAYOUT_SEED_SALT);
    }
    let epsilon = inst.epsilon;
    // With a run budget of at least SMALL_GRAPH_BUDGET (at most 1,875 tasks by
    // default), every split also gets the strong preset's tries.
    let mut bip = cfg.bipartitioner.clone();
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
    // `Architecture::unwrapped`.
    let unwrapped = arch
        .unwrapped()
        .filter(|_| cfg.unwrapped_runs || (cfg.unwrapped_runs_3d && unwrap_by_default(arch)));
    // The runs refine without pairwise rounds: only the best run goes on, and the
    // uncoarsening, the V-cycles and multisection's steps refine with them (on the best
    // run alone they gained nothing on the small graphs, which the V-cycles refine).
    let run_refiner = KwayRefiner {
        pair_rounds: 0,
        ..cfg.refiner.clone()
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
const LAYOUT_SEED_SALT: u64 = 0x6a09_e667_f3bc_c908;

/// Whether multisection's top step, of `n` tasks onto `g` groups, coarsens deeper (see
/// [`MultilevelMapper::top_per_pe`]): when it is on, the problem's graph has at most
/// [`DEEP_TOP_MAX_TASKS`] tasks (`input_tasks`; the step maps its coarsest graph), and
/// the step's usual coarsest size is below `n`.
fn deep_top_step(cfg: &MultilevelMapper, n: usize, g: usize, input_tasks: usize) -> bool {
    let usual = coarsest_size(cfg, cfg.coarsest_per_pe, MIN_COARSEST_PER_PE, g);
    cfg.top_per_pe > 0 && input_tasks <= DEEP_TOP_MAX_TASKS && n > usual
}

/// What one mapping run works on: the task graph, the target, the imbalance DRB splits
/// with, the fixed tasks (empty: none) and the PEs' load bounds (`bound[pe * ncon + c]`).
/// `whole` is set for the problem's own target, not for a level of groups that
/// multisection maps (whose groups are all equally far apart).
pub(super) struct Instance<'a> {
    pub(super) graph: &'a TaskGraph,
    pub(super) arch: &'a dyn Architecture,
    pub(super) whole: bool,
    pub(super) epsilon: f64,
    pub(super) fixed: &'a [u32],
    pub(super) bound: Vec<u64>,
}

fn multilevel_map(cfg: &MultilevelMapper, problem: &Problem, ctx: &mut RunContext) -> Vec<u32> {
    let inst = instance(problem);
    // one distance table for the run, its annealing included
    let dist = ctx.timed("distance-table", |_| DistTable::new(inst.arch));
    let part = match large_config(cfg, problem) {
        Some(large) => map_or_evolve(&large, &inst, &dist, ctx),
        None => map_or_evolve(cfg, &inst, &dist, ctx),
    };
    anneal_final(cfg, &inst, &dist, part, ctx)
}

/// Most annealing proposals per task (`anneal`).
pub const MAX_ANNEAL: usize = 1_000_000;

/// The final mapping annealed for `cfg.anneal` proposals per task (when positive),
/// until the run's deadline at most.
fn anneal_final(
    cfg: &MultilevelMapper,
    inst: &Instance<'_>,
    dist: &DistTable<'_>,
    part: Vec<u32>,
    ctx: &mut RunContext,
) -> Vec<u32> {
    if cfg.anneal == 0 {
        return part;
    }
    ctx.timed("anneal", |ctx| {
        let mut st = KwayState::new(inst.graph, dist, &inst.bound, part).with_fixed(inst.fixed);
        let proposals = cfg.anneal.saturating_mul(inst.graph.num_tasks() as u64);
        crate::multilevel::anneal::anneal(&mut st, proposals, ctx.deadline, &mut ctx.rng);
        st.part
    })
}

/// The whole problem as the mapper sees it.
fn instance(problem: &Problem) -> Instance<'_> {
    Instance {
        graph: &problem.graph,
        arch: problem.arch.as_ref(),
        whole: true,
        epsilon: problem.epsilon,
        fixed: problem.fixed.as_deref().unwrap_or(&[]),
        bound: load_bounds(problem),
    }
}

/// Above [`PAIR_MAX_TASKS`] tasks: the configuration without pairwise rounds and coarse
/// island removal, when it has them.
fn large_config(cfg: &MultilevelMapper, problem: &Problem) -> Option<MultilevelMapper> {
    (problem.graph.num_tasks() > PAIR_MAX_TASKS
        && (cfg.refiner.pair_rounds > 0 || cfg.bipartitioner.coarse_islands))
        .then(|| {
            let mut large = cfg.clone();
            large.refiner.pair_rounds = 0;
            large.bipartitioner.coarse_islands = false;
            large
        })
}

/// The memetic mapper ([`evolve`]) with a population of at least 2, else one run.
fn map_or_evolve(
    cfg: &MultilevelMapper,
    inst: &Instance<'_>,
    dist: &DistTable<'_>,
    ctx: &mut RunContext,
) -> Vec<u32> {
    if cfg.population >= 2 {
        evolve::evolve(cfg, inst, dist, ctx)
    } else {
        map_instance_with(cfg, inst, dist, ctx)
    }
}

/// The size the first coarsening stops at for `per_pe` tasks per PE on `k` PEs, its cap
/// `max_coarsest` raised to `floor` tasks per PE:
/// `min(max(per_pe · k, min_coarsest), max(max_coarsest, floor · k))`.
fn coarsest_size(cfg: &MultilevelMapper, per_pe: usize, floor: usize, k: usize) -> usize {
    per_pe
        .saturating_mul(k)
        .max(cfg.min_coarsest)
        .min(cfg.max_coarsest.max(floor.saturating_mul(k)))
}

/// The tasks per PE to which the coarsest size's cap is raised on `arch`:
/// [`MULTISECTION_MIN_COARSEST_PER_PE`] when the initial mapping is by multisection
/// (`nested`), [`TORUS_MIN_COARSEST_PER_PE`] on a torus with a ring of more than two PEs,
/// else [`MIN_COARSEST_PER_PE`].
fn min_coarsest_per_pe(arch: &dyn Architecture, nested: bool) -> usize {
    if nested {
        MULTISECTION_MIN_COARSEST_PER_PE
    } else if arch.unwrapped().is_some() {
        TORUS_MIN_COARSEST_PER_PE
    } else {
        MIN_COARSEST_PER_PE
    }
}

/// Tasks per PE of the coarsest graph: [`MultilevelMapper::grid2d_per_pe`] on a
/// two-dimensional mesh or torus of at most [`GRID2D_MAX_PES`] PEs when it is set and
/// smaller, else [`MultilevelMapper::coarsest_per_pe`].
fn coarsest_tasks_per_pe(cfg: &MultilevelMapper, arch: &dyn Architecture) -> usize {
    let grid2d = arch
        .grid_dims()
        .is_some_and(|d| d.iter().filter(|&&s| s > 1).count() == 2)
        && arch.pe_count() as usize <= GRID2D_MAX_PES;
    if grid2d && cfg.grid2d_per_pe > 0 {
        cfg.coarsest_per_pe.min(cfg.grid2d_per_pe)
    } else {
        cfg.coarsest_per_pe
    }
}

/// The initial mapping through coarsening: every first coarsening's hierarchy, DRB on its
/// coarsest graph, and refinement on every level while uncoarsening (see the module
/// documentation, steps 1-3).
///
/// Returns the mapping and whether a probe kept the matching's hierarchy alone (see
/// [`probe_coarsenings`]).
fn coarsen_and_map(
    cfg: &MultilevelMapper,
    inst: &Instance<'_>,
    dist: &DistTable<'_>,
    ctx: &mut RunContext,
) -> (Vec<u32>, bool) {
    // A target of nested groups gets multisection instead of DRB (fixed tasks: DRB).
    let sections = if cfg.multisection && inst.fixed.is_empty() {
        group_levels(dist, usize::MAX)
    } else {
        Vec::new()
    };
    let nested = !sections.is_empty();
    match probe_coarsenings(cfg, inst, dist, nested, ctx) {
        Some((kept, levels)) => {
            let matching = levels.is_some();
            (
                coarsen_and_map_from(&kept, inst, dist, &sections, ctx, levels),
                matching,
            )
        }
        None => (
            coarsen_and_map_from(cfg, inst, dist, &sections, ctx, None),
            false,
        ),
    }
}

/// The size the first coarsening stops at for `cfg` onto the problem's target (see
/// [`coarsest_size`]).
fn first_target(cfg: &MultilevelMapper, inst: &Instance<'_>, k: usize, nested: bool) -> usize {
    coarsest_size(
        cfg,
        coarsest_tasks_per_pe(cfg, inst.arch),
        min_coarsest_per_pe(inst.arch, nested),
        k,
    )
}

/// [`coarsen_and_map`] with `cfg` as it is; `sections`: the target's nested groups when
/// the initial mapping is by multisection (else empty); `prebuilt`: the hierarchy of
/// `cfg.coarsening`, already built.
fn coarsen_and_map_from(
    cfg: &MultilevelMapper,
    inst: &Instance<'_>,
    dist: &DistTable<'_>,
    sections: &[(Vec<u32>, u32)],
    ctx: &mut RunContext,
    mut prebuilt: Option<Vec<Level>>,
) -> Vec<u32> {
    let (graph, fixed0, bound) = (inst.graph, inst.fixed, &inst.bound);
    let k = dist.k() as usize;
    // Coarsening: one hierarchy per scheme (`coarsening`, then `alt_coarsening`), each
    // with its initial mapping; both are uncoarsened and the better result is kept
    // (`uncoarsen_both`), or only the hierarchy whose initial mapping is better (balanced
    // first, then f_C, which projection keeps).
    let target = first_target(cfg, inst, k, !sections.is_empty());
    let mcw = max_cluster_weights(cfg, graph, bound, k, target);
    let unc = |levels: &[Level], part: Vec<u32>, rng: &mut Xoshiro256PlusPlus| {
        uncoarsen(cfg, levels, graph, fixed0, dist, bound, part, rng)
    };
    // Either the hierarchy with the better initial mapping, uncoarsened after the loop, or
    // (`uncoarsen_both`) every hierarchy uncoarsened at once and the better result kept.
    let mut best: Option<(bool, u64, Vec<Level>, Vec<u32>)> = None;
    let mut best_final: Option<((bool, u64), Vec<u32>)> = None;
    let schemes = std::iter::once(cfg.coarsening).chain(
        cfg.alt_coarsening
            .filter(|&c| c != cfg.coarsening && graph.num_tasks() > target),
    );
    for (i, scheme) in schemes.enumerate() {
        let phases = if i == 0 {
            ("coarsen", "initial", "refine")
        } else {
            ("coarsen-2", "initial-2", "refine-2")
        };
        let levels = match prebuilt.take() {
            Some(levels) => levels,
            None => ctx.timed(phases.0, |ctx| {
                coarsen_levels(cfg, scheme, graph, fixed0, &[], target, &mcw, &mut ctx.rng)
            }),
        };
        // A second scheme that stalls far above the target (matching on a graph with
        // hubs barely shrinks it) would make DRB run on a large graph: skip it.
        let coarsest_n = levels
            .last()
            .map_or(graph.num_tasks(), |l| l.graph.num_tasks());
        if i > 0 && coarsest_n > 2 * target {
            continue;
        }
        let (ok, cost, part) = ctx.timed(phases.1, |ctx| {
            initial_mapping(cfg, inst, &levels, dist, sections, ctx)
        });
        if cfg.uncoarsen_both {
            let fine = ctx.timed(phases.2, |ctx| unc(&levels, part, &mut ctx.rng));
            drop(levels);
            let st = KwayState::new(graph, dist, bound, fine);
            let sc = (!st.is_balanced(), st.comm_cost());
            if best_final.as_ref().is_none_or(|b| sc < b.0) {
                best_final = Some((sc, st.part));
            }
        } else if best.as_ref().is_none_or(|b| (!ok, cost) < (!b.0, b.1)) {
            best = Some((ok, cost, levels, part));
        }
    }
    match best_final {
        Some((_, part)) => part,
        None => {
            let (_, _, levels, part) = best.expect("at least one coarsening");
            // Uncoarsening with refinement on every level.
            ctx.timed("refine", |ctx| unc(&levels, part, &mut ctx.rng))
        }
    }
}

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
/// stalls above twice its target size loses without a probe). Projection keeps
/// f_C, so both are costs of mappings of the input graph. The matching, when kept, gets
/// twice the initial runs, on a coarsest graph of half the usual size where no floor per
/// PE binds (then about the same work; on grids the DRB runs' spread is what decides),
/// and no V-cycle follows (see [`map_instance`]); label propagation, when kept, builds its
/// hierarchy from the input graph as usual.
fn probe_coarsenings(
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
        let levels = coarsen_levels(&kept, matching, graph, &[], &[], target, &mcw, &mut ctx.rng);
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
            let more = coarsen_levels(cfg, scheme, g, &[], &[], probe_target, &pmcw, rng);
            let pg = more.last().map_or(g, |l| &l.graph);
            let mut run_rng = Xoshiro256PlusPlus::seed_from_u64(rng.gen());
            let bip = &cfg.bipartitioner;
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
        let matching_cost = probe(matching, top, &mut ctx.rng);
        let shared = levels
            .get(PROBE_SHARED_LEVELS.min(levels.len()).saturating_sub(1))
            .map_or(graph, |l| &l.graph);
        let lp_cost = probe(lp, shared, &mut ctx.rng);
        if lp_cost < matching_cost {
            Some((lp_only, None))
        } else {
            Some((kept, Some(levels)))
        }
    })
}

pub(super) fn map_instance(
    cfg: &MultilevelMapper,
    inst: &Instance<'_>,
    ctx: &mut RunContext,
) -> Vec<u32> {
    let dist = ctx.timed("distance-table", |_| DistTable::new(inst.arch));
    map_instance_with(cfg, inst, &dist, ctx)
}

/// [`map_instance`] with the distance table of `inst.arch` given.
pub(super) fn map_instance_with(
    cfg: &MultilevelMapper,
    inst: &Instance<'_>,
    dist: &DistTable<'_>,
    ctx: &mut RunContext,
) -> Vec<u32> {
    let (graph, fixed0, bound) = (inst.graph, inst.fixed, &inst.bound);
    let (mut part, matching_kept) = coarsen_and_map(cfg, inst, dist, ctx);
    // After multisection the levels are mapped already (refining them again lowered
    // f_C by 0.09 % on the 63 small tree runs, for 14 % more time).
    if cfg.group_levels && !cfg.multisection && fixed0.is_empty() {
        // Each level costs about a V-cycle: a graph of n tasks gets at most
        // VCYCLE_WORK / n levels (at least one), from the top.
        let count = (VCYCLE_WORK / graph.num_tasks().max(1)).max(1);
        let levels = group_levels(dist, count);
        if !levels.is_empty() {
            part = ctx.timed("group-levels", |ctx| {
                for (group, g) in levels {
                    part = refine_groups(cfg, graph, dist, bound, &group, g, part, &mut ctx.rng);
                }
                part
            });
        }
    }

    // V-cycles: coarsen again inside the PEs, refine on every level, keep when no worse.
    // Not after a probe kept the matching's hierarchy: on the million-task grids the
    // cycle gained 0.1-0.3 % for 40 % more time (label propagation's, on the netlist, 2.3 %).
    if cfg.vcycles > 0 && !matching_kept {
        part = vcycles(cfg, inst, dist, part, cfg.vcycles, ctx);
    }
    part
}

/// The mean duration of the steps done so far, to tell whether one more fits before a
/// deadline.
#[derive(Default)]
pub(crate) struct Pace {
    spent: Duration,
    steps: u32,
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
fn vcycles(
    cfg: &MultilevelMapper,
    inst: &Instance<'_>,
    dist: &DistTable<'_>,
    mut part: Vec<u32>,
    count: usize,
    ctx: &mut RunContext,
) -> Vec<u32> {
    let (graph, fixed0, bound) = (inst.graph, inst.fixed, &inst.bound);
    let k = inst.arch.pe_count() as usize;
    let unc = |levels: &[Level], part: Vec<u32>, rng: &mut Xoshiro256PlusPlus| {
        uncoarsen(cfg, levels, graph, fixed0, dist, bound, part, rng)
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
        for _ in 0..cycles {
            if !pace.fits(ctx.deadline) {
                break;
            }
            let t = Instant::now();
            let levels = coarsen_levels(
                cfg,
                cfg.vcycle_coarsening,
                graph,
                fixed0,
                &part,
                target,
                &mcw,
                &mut ctx.rng,
            );
            let Some(top) = levels.last() else { break };
            let mut st =
                KwayState::new(&top.graph, dist, bound, top.part.clone()).with_fixed(&top.fixed);
            cfg.refiner.refine(&mut st, &mut ctx.rng);
            let (sc, cand) = score(unc(&levels, st.part, &mut ctx.rng));
            pace.add(t.elapsed());
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

#[cfg(test)]
mod tests {
    use super::*;
    use taskmap_arch::parse_arch;

    /// A step fits before a deadline when the mean of the recorded steps ends by it;
    /// always without a deadline, and before the first step only until the deadline.
    #[test]
    fn pace_fits_the_mean_step_before_the_deadline() {
        let now = Instant::now();
        let mut pace = Pace::default();
        assert!(pace.fits(None));
        assert!(pace.fits(Some(now + Duration::from_secs(60))));
        if let Some(past) = now.checked_sub(Duration::from_secs(1)) {
            assert!(!pace.fits(Some(past)));
        }
        pace.add(Duration::from_secs(10));
        pace.add(Duration::from_secs(30));
        assert!(pace.fits(None));
        // mean 20 s
        assert!(!pace.fits(Some(now)));
        assert!(!pace.fits(Some(now + Duration::from_secs(19))));
        assert!(pace.fits(Some(now + Duration::from_secs(25))));
    }

    /// A tree's levels become nested groups of the right sizes, consistent with the
    /// distances; other targets have none.
    #[test]
    fn group_levels_of_trees_only() {
        let a = parse_arch("tree:4:8:6/1:10:100").unwrap();
        let dist = DistTable::new(a.as_ref());
        let levels = group_levels(&dist, usize::MAX);
        let sizes: Vec<u32> = levels.iter().map(|(_, g)| *g).collect();
        assert_eq!(sizes, [6, 48]);
        for (level, (group, _)) in levels.iter().enumerate() {
            let d = [100, 10][level];
            for p in 0..192 {
                for q in 0..192 {
                    let same = group[p as usize] == group[q as usize];
                    assert_eq!(same, dist.get(p, q) < d, "level {level}: PEs {p} {q}");
                }
            }
        }
        for spec in [
            "torus:4x4",
            "mesh:3x5",
            "hypercube:4",
            "complete:8",
            "wcomplete:1,2,3,4",
            "tree:8/5",
        ] {
            let a = parse_arch(spec).unwrap();
            assert!(
                group_levels(&DistTable::new(a.as_ref()), usize::MAX).is_empty(),
                "{spec}"
            );
        }
    }

    /// The coarsest graph's tasks per PE: `grid2d_per_pe` on two-dimensional meshes and
    /// tori of at most GRID2D_MAX_PES PEs (also behind the distance cache), the usual
    /// size elsewhere, and never more than `coarsest_per_pe`.
    #[test]
    fn coarsest_size_on_small_two_dimensional_grids() {
        let cfg = MultilevelMapper::default();
        for (spec, want) in [
            ("torus:8x8", 160),
            ("mesh:8x8", 160),
            ("torus:8x16", 160),
            ("mesh:1x8x1x8", 160),
            ("torus:16x16", 1000),
            ("torus:4x4x4", 1000),
            ("mesh:64", 1000),
            ("hypercube:6", 1000),
            ("complete:64", 1000),
            ("tree:8/5", 1000),
            ("sub:0-63:torus:8x8", 1000),
        ] {
            let a = parse_arch(spec).unwrap();
            assert_eq!(coarsest_tasks_per_pe(&cfg, a.as_ref()), want, "{spec}");
            let cached = taskmap_arch::Precomputed::new(parse_arch(spec).unwrap());
            assert_eq!(coarsest_tasks_per_pe(&cfg, &cached), want, "{spec} cached");
        }
        let torus = parse_arch("torus:8x8").unwrap();
        let off = MultilevelMapper {
            grid2d_per_pe: 0,
            ..MultilevelMapper::default()
        };
        assert_eq!(coarsest_tasks_per_pe(&off, torus.as_ref()), 1000);
        let small = MultilevelMapper {
            coarsest_per_pe: 50,
            ..MultilevelMapper::default()
        };
        assert_eq!(coarsest_tasks_per_pe(&small, torus.as_ref()), 50);
    }

    /// The coarsest size: `max_coarsest` up to 1,024 PEs, 32 tasks per PE above (8 on a
    /// torus with a ring of more than two PEs), `min_coarsest` on few PEs; 64 per PE on
    /// targets of nested groups (above 512 PEs).
    #[test]
    fn coarsest_size_floor_per_pe() {
        let cfg = MultilevelMapper::default();
        for (spec, want) in [
            ("torus:16x16", 32_768),
            // Targets of nested groups (multisection): 64 per PE.
            ("tree:4:16:16/1:10:100", 65_536),
            ("tree:4:8:8/1:10:100", 32_768),
            ("hypercube:10", 32_768),
            ("hypercube:11", 65_536),
            ("hypercube:12", 131_072),
            ("mesh:16x16x16", 131_072),
            ("tree:8:16:32/1:10:100", 262_144),
            ("complete:4096", 131_072),
            // A hypercube is a torus of rings of two: the usual floor.
            ("torus:2x2x2x2x2x2x2x2x2x2x2x2", 131_072),
            ("torus:64x64", 32_768),
            ("torus:32x128", 32_768),
            ("torus:16x16x32", 65_536),
            ("complete:8", 8_000),
            ("complete:1", 1_024),
        ] {
            let a = parse_arch(spec).unwrap();
            let k = a.pe_count() as usize;
            let per_pe = coarsest_tasks_per_pe(&cfg, a.as_ref());
            let nested = !group_levels(&DistTable::new(a.as_ref()), usize::MAX).is_empty();
            assert_eq!(
                coarsest_size(&cfg, per_pe, min_coarsest_per_pe(a.as_ref(), nested), k),
                want,
                "{spec}"
            );
        }
    }

    /// The group refinement never returns a worse mapping than it was given (balance
    /// first, then f_C), level by level, and improves a round-robin start.
    #[test]
    fn group_refinement_never_worsens() {
        let cfg = MultilevelMapper::default();
        for (seed, spec) in [
            (1u64, "tree:2:3:4/1:10:100"),
            (2, "tree:4:4/1:7"),
            (3, "tree:2:2:2:2/1:3:9:27"),
        ] {
            let a = parse_arch(spec).unwrap();
            let k = a.pe_count();
            let g = taskmap_graph::gen::random_geometric(1500, 7.0, seed);
            let problem = Problem::new(g.clone(), parse_arch(spec).unwrap());
            let bound = load_bounds(&problem);
            let dist = DistTable::new(a.as_ref());
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            // A balanced start: round robin, then one with the tree's own DRB.
            let rr: Vec<u32> = (0..g.num_tasks() as u32).map(|v| v % k).collect();
            let drb_start = drb(
                &g,
                a.as_ref(),
                &bound,
                problem.epsilon,
                &cfg.bipartitioner,
                &mut Xoshiro256PlusPlus::seed_from_u64(seed),
                None,
                None,
            );
            for (i, start) in [rr, drb_start].into_iter().enumerate() {
                let score = |p: &[u32]| {
                    let st = KwayState::new(&g, &dist, &bound, p.to_vec());
                    (!st.is_balanced(), st.comm_cost())
                };
                let before = score(&start);
                let mut part = start;
                for (group, ng) in group_levels(&dist, usize::MAX) {
                    let out =
                        refine_groups(&cfg, &g, &dist, &bound, &group, ng, part.clone(), &mut rng);
                    assert!(score(&out) <= score(&part), "{spec}: a level made it worse");
                    part = out;
                }
                assert!(score(&part) <= before, "{spec}");
                if i == 0 {
                    // Round robin cuts nearly every edge at the top: the groups gain.
                    assert!(score(&part).1 < before.1, "{spec}: nothing gained");
                }
            }
        }
    }

    /// The deep top step applies between the step's usual coarsest size and
    /// `DEEP_TOP_MAX_TASKS` input tasks, and not when `top_per_pe` is 0.
    #[test]
    fn deep_top_step_bounds() {
        let cfg = MultilevelMapper::default();
        // Eight groups: the usual coarsest size is 8,000 tasks.
        assert!(!deep_top_step(&cfg, 8_000, 8, 8_000));
        assert!(deep_top_step(&cfg, 8_001, 8, 8_001));
        assert!(deep_top_step(&cfg, 30_000, 8, DEEP_TOP_MAX_TASKS));
        assert!(!deep_top_step(&cfg, 30_000, 8, DEEP_TOP_MAX_TASKS + 1));
        // Two groups: the usual coarsest size is 2,000 tasks (1,000 per group).
        assert!(!deep_top_step(&cfg, 2_000, 2, 2_000));
        assert!(deep_top_step(&cfg, 2_001, 2, 2_001));
        let off = MultilevelMapper {
            top_per_pe: 0,
            ..MultilevelMapper::default()
        };
        assert!(!deep_top_step(&off, 30_000, 8, 30_000));
        assert!(!deep_top_step(&MultilevelMapper::fast(), 30_000, 8, 30_000));
        assert!(!deep_top_step(
            &MultilevelMapper::strong(),
            30_000,
            8,
            30_000
        ));
    }

    /// Multisection on four disjoint 8x4 grids onto a tree of four groups of 8 PEs: each
    /// grid lands in one group (no edge at the top distance), and every PE stays within
    /// its bound.
    #[test]
    fn multisection_keeps_components_in_groups() {
        let grid = taskmap_graph::gen::grid(&[8, 4], false);
        let (gx, gadj, _, _) = grid.csr();
        let (mut xadj, mut adj) = (vec![0usize], Vec::new());
        for c in 0..4u32 {
            for u in 0..32 {
                adj.extend(gadj[gx[u]..gx[u + 1]].iter().map(|&v| v + 32 * c));
                xadj.push(adj.len());
            }
        }
        let ew = vec![1; adj.len()];
        let g = TaskGraph::from_csr(xadj, adj, ew, vec![1; 128], 1).unwrap();
        let problem = Problem::new(g, parse_arch("tree:4:2:4/1:10:100").unwrap());
        let dist = DistTable::new(problem.arch.as_ref());
        let levels = group_levels(&dist, usize::MAX);
        assert_eq!(levels.iter().map(|l| l.1).collect::<Vec<_>>(), [4, 8]);
        let inst = Instance {
            graph: &problem.graph,
            arch: problem.arch.as_ref(),
            whole: true,
            epsilon: problem.epsilon,
            fixed: &[],
            bound: load_bounds(&problem),
        };
        for seed in 0..4 {
            let mut ctx = RunContext::new(seed);
            let part = multisection(
                &MultilevelMapper::default(),
                &inst,
                &dist,
                &levels,
                problem.graph.num_tasks(),
                &mut ctx,
            );
            let mut loads = [0u64; 32];
            for &p in &part {
                loads[p as usize] += 1;
            }
            assert!(
                loads.iter().zip(&inst.bound).all(|(l, b)| l <= b),
                "{loads:?}"
            );
            let top = &levels[0].0;
            for c in 0..4 {
                let gr = top[part[32 * c] as usize];
                assert!(
                    (0..32).all(|u| top[part[32 * c + u] as usize] == gr),
                    "seed {seed}"
                );
            }
        }
    }

    /// A star of `n` tasks: task 0 joined to every other.
    fn star(n: usize) -> TaskGraph {
        let mut xadj = vec![0usize, n - 1];
        let mut adj: Vec<u32> = (1..n as u32).collect();
        for _ in 1..n {
            adj.push(0);
            xadj.push(adj.len());
        }
        let ew = vec![1; adj.len()];
        TaskGraph::from_csr(xadj, adj, ew, vec![1; n], 1).unwrap()
    }

    /// Above `probe_tasks` the probe keeps the ordered matching's hierarchy (built with
    /// half the usual `max_coarsest`, with twice the initial runs) on a grid numbered row-major,
    /// and label propagation on a circuit netlist and on a star (where the matching
    /// stalls); below it, or with fixed tasks, it does
    /// not run. A probed mapping is balanced, has no V-cycle after the matching is kept,
    /// and is the same for the same seed.
    #[test]
    fn probe_keeps_the_matching_on_a_grid_and_label_propagation_on_a_netlist() {
        let cfg = MultilevelMapper::default();
        let cases = [
            (
                taskmap_graph::gen::grid(&[120, 120], false),
                Coarsening::OrderedMatching,
            ),
            (
                crate::mappers::berger::netlist::circuit_netlist(20_000, 1),
                Coarsening::LabelPropagation,
            ),
            // A star: the matching pairs the hub with one leaf and stalls.
            (star(20_000), Coarsening::LabelPropagation),
        ];
        for (graph, want) in cases {
            let problem = Problem::new(graph, parse_arch("torus:4x4").unwrap());
            let arch = problem.arch.as_ref();
            let dist = DistTable::new(arch);
            let bound = load_bounds(&problem);
            let pins = vec![FREE; problem.graph.num_tasks()];
            for (fixed, threshold) in [(&[][..], 10_000), (&pins[..], 10_000), (&[][..], 20_001)] {
                let inst = Instance {
                    graph: &problem.graph,
                    arch,
                    whole: true,
                    epsilon: problem.epsilon,
                    fixed,
                    bound: bound.clone(),
                };
                let c = MultilevelMapper {
                    probe_tasks: threshold,
                    ..cfg.clone()
                };
                let got = probe_coarsenings(&c, &inst, &dist, false, &mut RunContext::new(5));
                if !fixed.is_empty() || threshold > 20_000 {
                    assert!(got.is_none(), "{want:?}: probed");
                    continue;
                }
                let (kept, levels) = got.expect("probed");
                assert_eq!((kept.coarsening, kept.alt_coarsening), (want, None));
                match levels {
                    Some(levels) => {
                        assert_eq!(want, Coarsening::OrderedMatching);
                        assert_eq!(kept.initial_runs, 2 * cfg.initial_runs);
                        assert_eq!(kept.max_coarsest, cfg.max_coarsest / 2);
                        let top = levels.last().expect("coarsened").graph.num_tasks();
                        assert!(top <= first_target(&kept, &inst, 16, false), "{top}");
                    }
                    None => {
                        assert_eq!(want, Coarsening::LabelPropagation);
                        assert_eq!(kept.initial_runs, cfg.initial_runs);
                    }
                }
            }
            let c = MultilevelMapper {
                probe_tasks: 10_000,
                ..cfg.clone()
            };
            let mapped = |seed: u64| {
                let mut ctx = RunContext::new(seed);
                let part = multilevel_map(&c, &problem, &mut ctx);
                let phases: Vec<String> = ctx.timings.iter().map(|(p, _)| p.clone()).collect();
                (part, phases)
            };
            let (part, phases) = mapped(3);
            let has = |p: &str| phases.iter().any(|x| x == p);
            assert!(has("probe") && !has("coarsen-2"), "{phases:?}");
            assert_eq!(
                has("v-cycles"),
                want == Coarsening::LabelPropagation,
                "{phases:?}"
            );
            assert!(KwayState::new(&problem.graph, &dist, &bound, part.clone()).is_balanced());
            assert!(
                part == mapped(3).0,
                "{want:?}: another mapping for the same seed"
            );
        }
    }
}
