//! The multilevel mapper's configuration: its parameters ([`MultilevelMapper`]), the
//! presets (`fast`, `default`, `strong`), the `name,key=value` spec ([`MultilevelSpec`]) and
//! the tuning constants, each with the measurement that chose it.

use serde::{Deserialize, Serialize};
use taskmap_arch::Architecture;

use crate::error::Error;
use crate::multilevel::bipart::Bipartitioner;
use crate::multilevel::coarsen::Coarsening;
use crate::multilevel::refine::kway::KwayRefiner;
use crate::multilevel::refine::pairs::PairPass;

use crate::multilevel::coarsen::probe::*;
use crate::multilevel::driver::*;
use crate::multilevel::evolve;

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

/// [`MIN_COARSEST_PER_PE`] when the initial mapping is by [`multisection`](crate::multilevel::initial::multisection) (a target of
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
    /// no worse. See `refine_groups`.
    pub group_levels: bool,
    /// With two first coarsenings, uncoarsen (and refine) both hierarchies and keep the
    /// better mapping, instead of only the one whose initial mapping is better.
    pub uncoarsen_both: bool,
    /// With two first coarsenings, label propagation and a matching, a graph of at least
    /// this many tasks (0: never) builds only one hierarchy, the one a probe chooses (see
    /// `probe_coarsenings`); when the matching is chosen, no V-cycle follows. Default
    /// [`PROBE_TASKS`]; off in `strong`.
    pub probe_tasks: usize,
    /// On targets whose PEs fall into nested groups (the subtrees of a tree), and without
    /// fixed tasks: the initial mapping by multisection (see [`multisection`](crate::multilevel::initial::multisection)) instead of
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
