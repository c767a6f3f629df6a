//! The multilevel mapper's configuration: its parameters ([`MultilevelMapper`], one flat
//! struct whose serde names are the keys of `multilevel,key=value,...`), the presets
//! (`fast`, `default`, `strong`: functions that edit the default) and the tuning
//! constants, each with the measurement that chose it. The driver builds the phases'
//! own configurations from it ([`MultilevelMapper::bipartitioner`],
//! [`MultilevelMapper::refiner`]).

use serde::{Deserialize, Serialize};
use taskmap_arch::Architecture;

use crate::multilevel::bipart::Bipartitioner;
use crate::multilevel::coarsen::Coarsening;
use crate::multilevel::refine::kway::KwayRefiner;
use crate::multilevel::refine::pairs::PairPass;

use crate::multilevel::coarsen::probe::*;
use crate::multilevel::driver::*;
use crate::multilevel::evolve;
use crate::registry::params::Preset;
use crate::registry::{ParamDoc, Params};

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

/// Whether the even-numbered initial runs split the mesh's domains on `arch` under
/// [`Unwrap::Auto`], the default: a torus of at least
/// [`UNWRAP_MIN_DIMS`] dimensions longer than two whose longest ring has at least
/// [`UNWRAP_MIN_RING`] PEs (see the module documentation, step 2).
pub fn unwrap_by_default(arch: &dyn Architecture) -> bool {
    let shape = arch.shape();
    shape.unwrapped().is_some()
        && shape.grid_dims().is_some_and(|d| {
            d.iter().filter(|&&s| s > 2).count() >= UNWRAP_MIN_DIMS
                && d.iter().any(|&s| s >= UNWRAP_MIN_RING)
        })
}

/// On a torus, which initial runs split the domains of the mesh without its wrap-around
/// links (see `Shape::unwrapped`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unwrap {
    /// The even-numbered runs (run 0 first), on the tori of [`unwrap_by_default`] only.
    #[serde(rename = "auto")]
    Auto,
    /// No run.
    #[serde(rename = "0")]
    Never,
    /// The even-numbered runs, on every torus.
    #[serde(rename = "1")]
    Always,
}

/// The multilevel mapper's configuration: its parameters, by the names of
/// `multilevel,key=value,...` (serialised for `taskmap map --dump-config`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MultilevelMapper {
    /// How tasks are grouped on each level of the first coarsening.
    pub coarsening: Coarsening,
    /// A second first coarsening, tried when the graph is coarsened at all: both
    /// hierarchies get their initial mapping and are uncoarsened (or, without
    /// `uncoarsen_both`, only the one with the better initial mapping). `None`: only
    /// `coarsening`.
    #[serde(rename = "coarsening2")]
    pub alt_coarsening: Option<Coarsening>,
    /// How tasks are grouped on each level of a V-cycle.
    #[serde(rename = "vcoarsening")]
    pub vcycle_coarsening: Coarsening,
    /// Label-propagation rounds per coarsening level.
    pub cluster_rounds: usize,
    /// Stop coarsening at `coarsest_per_pe · k` tasks ...
    #[serde(rename = "per_pe")]
    pub coarsest_per_pe: usize,
    /// ... or at `grid2d_per_pe · k` tasks when that is fewer and the target is a
    /// two-dimensional mesh or torus of at most [`GRID2D_MAX_PES`] PEs (0: off) ...
    #[serde(rename = "per_pe2d")]
    pub grid2d_per_pe: usize,
    /// On a graph of more than [`LP_DEEP_MIN_TASKS`] tasks, with DRB as the initial
    /// mapping of the problem's own target (not a multisection step) and the matching's
    /// hierarchy built too (a graph without hubs), label propagation's hierarchy goes on
    /// to `lp_per_pe · k` tasks when that is fewer (0: off), so that the two hierarchies
    /// differ in depth as well: the matching's maps a large coarsest graph by DRB, as
    /// Scotch does, label propagation's a small one refined k-way on every level, as
    /// KaMinPar does. The same when a probe keeps label propagation alone.
    pub lp_per_pe: usize,
    /// ... but not below this many tasks ...
    pub min_coarsest: usize,
    /// ... and not above `max(max_coarsest, f·k)` tasks, `f` = [`MIN_COARSEST_PER_PE`],
    /// [`TORUS_MIN_COARSEST_PER_PE`] or [`MULTISECTION_MIN_COARSEST_PER_PE`] (bounds the
    /// initial DRB's time on large graphs and targets).
    pub max_coarsest: usize,
    /// At most this many coarse levels.
    pub max_levels: usize,
    /// Largest cluster weight, relative to the mean weight of a coarsest-graph task.
    #[serde(rename = "cluster_weight")]
    pub cluster_weight_factor: f64,
    /// Independent initial mappings of the coarsest graph (each DRB + refinement).
    #[serde(rename = "runs")]
    pub initial_runs: usize,
    /// Small coarsest graphs get more runs: `initial_run_work / n` of them (at most
    /// [`MAX_ADAPTIVE_RUNS`]) when that is more than `initial_runs`, except when the
    /// problem's target has all its PEs equally far apart. 0 turns this off, as giving
    /// `runs` does.
    #[serde(rename = "run_work")]
    pub initial_run_work: usize,
    /// On a torus, which initial runs split the domains of the mesh without wrap-around
    /// links.
    pub unwrap: Unwrap,
    /// On a target with a mesh layout (a hypercube's Gray-code mesh, see
    /// `Shape::mesh_layout`), one more initial run, which splits the layout's
    /// domains (not in `fast`). The suite's 28 graphs, seeds 1-2, onto `hypercube:8`: f_C
    /// 0.981 in 1.25 times the time (the 1000x1000 grid 0.71, the 100x100 grid 0.87-0.89,
    /// `delaunay_n15` and `whitaker3` 0.93-0.94, no run worse; seed 1 onto `hypercube:6`
    /// and `hypercube:10`: 0.990 and 0.982 in 1.23 and 1.26 times). Splitting the
    /// layout's domains in every other run instead, in 1.02 times the time, gave 0.991
    /// with losses of up to 5 %.
    #[serde(rename = "layout")]
    pub layout_runs: bool,
    /// Bipartitioning tries per split of the initial DRB (see [`Bipartitioner::tries`]).
    pub tries: usize,
    /// FM passes per bipartitioning try.
    #[serde(rename = "bfm")]
    pub bisection_fm_passes: usize,
    /// Moves without a new best that end a bipartitioning FM pass.
    #[serde(rename = "bfm_stall")]
    pub bisection_fm_stall: usize,
    /// Multilevel bipartitioning: coarsen task sets larger than this (0: flat).
    pub coarsen_to: usize,
    /// Tries on the coarsest graph of a multilevel bipartition.
    pub coarse_tries: usize,
    /// Corridor factor of the bisections' flow refinement (below 1: off).
    #[serde(rename = "flow")]
    pub flow_alpha: f64,
    /// More bipartitioning tries where the tries' median cost exceeds the best by more
    /// than this many percent (0: off; see `Bipartitioner::more_tries_spread`).
    pub spread: u32,
    /// Island removal on the coarsest sets of multilevel bipartitions (see
    /// `Bipartitioner::coarse_islands`).
    #[serde(rename = "islands")]
    pub coarse_islands: bool,
    /// FM passes of the k-way refiner on every level.
    #[serde(rename = "fm")]
    pub fm_passes: usize,
    /// Moves without a new best that end a k-way FM pass.
    pub fm_stall: usize,
    /// k-way FM runs only on levels with at most this many tasks.
    #[serde(rename = "fm_max")]
    pub fm_max_tasks: usize,
    /// Levels of at least this many tasks run Jet refinement (parallel) instead of FM.
    #[serde(rename = "jet")]
    pub jet_min_tasks: usize,
    /// Label-propagation rounds of the k-way refiner.
    #[serde(rename = "lp")]
    pub lp_rounds: usize,
    /// Swap rounds of the k-way refiner.
    #[serde(rename = "swaps")]
    pub swap_rounds: usize,
    /// Rounds of pairwise refinement per level (see `KwayRefiner::pair_rounds`; 0: off).
    #[serde(rename = "pairs")]
    pub pair_rounds: usize,
    /// Corridor factor of the pairwise rounds' flow refinement (below 1: off).
    #[serde(rename = "pair_flow")]
    pub pair_flow_alpha: f64,
    /// V-cycles after the first uncoarsening: coarsen again with clusters inside one PE
    /// (so the mapping carries over to every level unchanged), refine on every level, keep
    /// the result when it is no worse.
    pub vcycles: usize,
    /// At most this many of them on a graph with hubs ([`TaskGraph::has_hubs`]): there
    /// a cycle costs about a whole run (FM and the pairwise rounds around the hubs'
    /// PEs), and the cycles after the first gained 0.3 % (R-MAT and Barabási-Albert
    /// graphs of 65,536 tasks onto four targets: f_C 1.003 of four cycles' in 0.51 of
    /// the time).
    ///
    /// [`TaskGraph::has_hubs`]: taskmap_graph::TaskGraph::has_hubs
    pub hub_vcycles: usize,
    /// A V-cycle coarsens to about `vcycle_per_pe · k` tasks (at least `min_coarsest`).
    pub vcycle_per_pe: usize,
    /// On targets whose PEs fall into nested groups (the subtrees of a tree), when the
    /// initial mapping is not by `multisection`: for every level of groups, from the top,
    /// refine which group every task is in, as a partition with the groups' summed
    /// bounds, then place the tasks that changed group and refine on the PEs; kept when
    /// no worse. See `refine_groups`.
    #[serde(rename = "groups")]
    pub group_levels: bool,
    /// With two first coarsenings, uncoarsen (and refine) both hierarchies and keep the
    /// better mapping, instead of only the one whose initial mapping is better.
    #[serde(rename = "both")]
    pub uncoarsen_both: bool,
    /// With two first coarsenings, label propagation and a matching, a graph of at least
    /// this many tasks (0: never) builds only one hierarchy, the one a probe chooses (see
    /// `probe_coarsenings`); when the matching is chosen, no V-cycle follows. Default
    /// [`PROBE_TASKS`]; off in `strong`.
    #[serde(rename = "probe")]
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
    #[serde(rename = "batch")]
    pub combine_batch: Option<usize>,
    /// Simulated annealing of the final mapping, this many proposals per task (0: off;
    /// see [`crate::multilevel::anneal`]).
    pub anneal: u64,
}

impl Default for MultilevelMapper {
    fn default() -> Self {
        let bip = Bipartitioner::default();
        let kway = KwayRefiner::default();
        Self {
            coarsening: Coarsening::LabelPropagation,
            alt_coarsening: Some(Coarsening::OrderedMatching),
            vcycle_coarsening: Coarsening::LabelPropagation,
            cluster_rounds: 3,
            coarsest_per_pe: 1000,
            grid2d_per_pe: 160,
            lp_per_pe: 20,
            min_coarsest: 1024,
            max_coarsest: 32768,
            max_levels: 40,
            cluster_weight_factor: 1.5,
            initial_runs: 2,
            initial_run_work: 60_000,
            unwrap: Unwrap::Auto,
            layout_runs: true,
            tries: bip.tries,
            bisection_fm_passes: bip.fm_passes,
            bisection_fm_stall: bip.fm_stall,
            coarsen_to: 200,
            coarse_tries: 16,
            flow_alpha: BISECTION_FLOW_ALPHA,
            spread: 0,
            coarse_islands: true,
            fm_passes: kway.fm_passes,
            fm_stall: kway.fm_stall,
            fm_max_tasks: kway.fm_max_tasks,
            jet_min_tasks: kway.jet_min_tasks,
            lp_rounds: kway.lp_rounds,
            swap_rounds: kway.swap_rounds,
            pair_rounds: 1,
            pair_flow_alpha: PAIR_FLOW_ALPHA,
            vcycles: 4,
            hub_vcycles: 1,
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
    /// The bipartitioner of the initial DRB.
    pub fn bipartitioner(&self) -> Bipartitioner {
        Bipartitioner {
            tries: self.tries,
            fm_passes: self.bisection_fm_passes,
            fm_stall: self.bisection_fm_stall,
            coarsen_to: self.coarsen_to,
            coarse_tries: self.coarse_tries,
            flow_alpha: self.flow_alpha,
            more_tries_spread: if self.spread == 0 {
                0.0
            } else {
                1.0 + f64::from(self.spread) / 100.0
            },
            coarse_islands: self.coarse_islands,
        }
    }

    /// The k-way refiner of every level.
    pub fn refiner(&self) -> KwayRefiner {
        let kway = KwayRefiner::default();
        KwayRefiner {
            lp_rounds: self.lp_rounds,
            fm_passes: self.fm_passes,
            fm_stall: self.fm_stall,
            fm_max_tasks: self.fm_max_tasks,
            jet_min_tasks: self.jet_min_tasks,
            swap_rounds: self.swap_rounds,
            pair_rounds: self.pair_rounds,
            pair: PairPass {
                flow_alpha: self.pair_flow_alpha,
                ..kway.pair
            },
            ..kway
        }
    }

    /// Whether the even-numbered initial runs split the mesh's domains on `arch`.
    pub fn unwrapped_runs(&self, arch: &dyn Architecture) -> bool {
        match self.unwrap {
            Unwrap::Never => false,
            Unwrap::Always => true,
            Unwrap::Auto => unwrap_by_default(arch),
        }
    }

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
    pub fn fast() -> Self {
        let mut c = Self::default();
        c.make_fast();
        c
    }

    /// Edits `self` into preset `fast` (see [`MultilevelMapper::fast`]).
    fn make_fast(&mut self) {
        self.initial_runs = 1;
        self.initial_run_work = 0;
        self.grid2d_per_pe = 0;
        self.flow_alpha = 1.0;
        self.pair_flow_alpha = 1.0;
        self.fm_passes = 1;
        self.pair_rounds = 0;
        self.vcycles = 0;
        self.group_levels = false;
        self.coarsening = Coarsening::OrderedMatching;
        self.alt_coarsening = None;
        self.top_per_pe = 0;
        self.layout_runs = false;
    }

    /// Preset `strong`: more initial runs and tries, longer FM, swaps, up to 8 V-cycles.
    pub fn strong() -> Self {
        let mut c = Self::default();
        c.make_strong();
        c
    }

    /// Edits `self` into preset `strong` (see [`MultilevelMapper::strong`]).
    fn make_strong(&mut self) {
        self.initial_runs = 8;
        self.initial_run_work = 0;
        self.tries = 8;
        self.coarse_tries = 32;
        self.bisection_fm_passes = 10;
        self.bisection_fm_stall = 200;
        self.fm_passes = 8;
        self.fm_stall = 1000;
        self.swap_rounds = 3;
        self.vcycles = 8;
        self.hub_vcycles = 8;
        self.top_per_pe = 0;
        self.probe_tasks = 0;
    }

    /// The preset of that name (`fast`, `default`, `strong`).
    pub fn preset(name: &str) -> Option<Self> {
        crate::registry::params::preset(name)
    }
}

/// The most bipartitioning tries (`tries`, `coarse_tries`) a spec may ask for.
pub const MAX_TRIES: usize = 1024;

/// The most initial runs (`runs`) a spec may ask for.
pub const MAX_RUNS: usize = 1024;

/// [`MultilevelMapper::lp_per_pe`] applies to graphs of more than this many tasks. On the
/// random geometric graph of 250,000 tasks (20 tasks per PE, seeds 1-5) it gave f_C 0.920,
/// 0.751 and 0.825 of before onto `complete:64`, `torus:16x16` and `mesh:8x8x8`, on the
/// 500x500 grid 0.996, 1.040 and 1.014 (where f_C swings by a third from seed to seed),
/// and on the million-task one 0.93 and 0.80 onto the first two; on the mid-size suite's
/// graphs (at most 74,752 tasks, outside the million-task grids) it was even overall,
/// 0.9997, from 0.92 (`rgg_n_2_15_s0` onto `torus:8x8`) to 1.106 (`finan512` onto
/// `torus:8x8`), so it stays off there.
pub const LP_DEEP_MIN_TASKS: usize = 100_000;

/// The most V-cycles (`vcycles`) or pairwise rounds per level (`pairs`) a spec may ask for.
pub const MAX_ROUNDS: usize = 64;

/// The largest corridor factor (`flow`, `pair_flow`).
pub const MAX_FLOW_ALPHA: f64 = (1u32 << 20) as f64;

/// Checks a count of runs or tries: 1 to `max`.
pub(crate) fn check_count(key: &str, v: usize, max: usize) -> Result<(), String> {
    if v == 0 {
        return Err(format!("{key} must be at least 1, got 0"));
    }
    check_at_most(key, v, max)
}

/// Checks a count of at most `max` (a larger one is an error, not a run that does not
/// end).
pub(crate) fn check_at_most(key: &str, v: usize, max: usize) -> Result<(), String> {
    if v > max {
        return Err(format!("{key}={v} is more than the {max} allowed"));
    }
    Ok(())
}

/// A documented key of the multilevel mapper.
const fn key(name: &'static str, doc: &'static str) -> ParamDoc {
    ParamDoc {
        name,
        aliases: &[],
        doc,
    }
}

impl Params for MultilevelMapper {
    const PRESET_KEY: Option<&'static str> = Some("preset");
    const PRESETS: &'static [Preset<Self>] = &[
        ("default", |_| {}),
        ("fast", Self::make_fast),
        ("strong", Self::make_strong),
    ];
    const DOCS: &'static [ParamDoc] = &[
        key("preset", "the configuration the other keys edit: fast, default or strong"),
        key("coarsening", "first coarsening: lp (label propagation), hem (heavy-edge matching) or ordered (heavy-edge matching in input order)"),
        key("coarsening2", "a second first coarsening, the same choices or none; both hierarchies get an initial mapping"),
        key("vcoarsening", "coarsening of the V-cycles"),
        key("cluster_rounds", "label-propagation rounds per coarsening level"),
        key("per_pe", "coarsest graph size per PE (giving it sets per_pe2d to 0 unless that is given too)"),
        key("per_pe2d", "coarsest size per PE on 2-D meshes and tori of at most 128 PEs (0: off)"),
        key("lp_per_pe", "graphs above 100,000 tasks, with DRB and both first hierarchies built: label propagation's coarsens on to this many tasks per PE (0: off)"),
        key("min_coarsest", "coarsest graph: at least this many tasks"),
        key("max_coarsest", "coarsest graph: at most this many tasks, raised to 32-64 per PE"),
        key("max_levels", "at most this many coarse levels"),
        key("cluster_weight", "largest cluster weight, relative to a coarsest-graph task's mean weight"),
        key("runs", "initial runs on the coarsest graph, 1 to 1024 (giving it sets run_work to 0 unless that is given too)"),
        key("run_work", "small coarsest graphs get run_work / n runs, at most 4 (0: off)"),
        key("unwrap", "on a torus, even-numbered initial runs split the mesh's domains: auto (tori of 3+ dimensions longer than 2 with a ring of 8+ PEs), 0 never, 1 always"),
        key("layout", "on a hypercube, one more initial run splits its Gray-code mesh's domains"),
        key("tries", "bipartitioning tries per split, 1 to 1024"),
        key("bfm", "FM passes per bipartitioning try"),
        key("bfm_stall", "moves without a new best that end a bipartitioning FM pass"),
        key("coarsen_to", "multilevel bipartitioning of task sets larger than this (0: flat)"),
        key("coarse_tries", "tries on the coarsest set of a multilevel bipartition, at most 1024"),
        key("flow", "corridor factor of the bisections' flow refinement (below 1: off), at most 2^20"),
        key("spread", "percent: more tries where the tries' median exceeds the best by more (0: off), at most 1000"),
        key("islands", "island removal in the bisections (graphs above 100,000 tasks: off)"),
        key("fm", "k-way FM passes per level"),
        key("fm_stall", "moves without a new best that end a k-way FM pass"),
        key("fm_max", "k-way FM only on levels of at most this many tasks"),
        key("jet", "levels of at least this many tasks run Jet refinement (parallel) instead of k-way FM"),
        key("lp", "k-way label-propagation rounds per level"),
        key("swaps", "k-way swap rounds per level"),
        key("pairs", "pairwise FM+flow rounds per level, at most 64 (graphs above 100,000 tasks: off)"),
        key("pair_flow", "corridor factor of the pairwise rounds' flow refinement (below 1: off), at most 2^20"),
        key("vcycles", "V-cycles after the first uncoarsening, at most 64"),
        key("hub_vcycles", "at most this many V-cycles on a graph with hubs, at most 64"),
        key("vcycle_per_pe", "a V-cycle coarsens to about this many tasks per PE"),
        key("groups", "with multisection=0: refine the tree levels' groups"),
        key("both", "uncoarsen both first hierarchies and keep the better mapping (0: only the better initial mapping's)"),
        key("probe", "graphs of at least this many tasks build one first hierarchy, chosen by a probe (0: never)"),
        key("multisection", "the initial mapping onto a tree by multisection along its levels"),
        key("top_per_pe", "multisection's top step on graphs of at most 100,000 tasks: coarsest size per top-level group (0: off)"),
        key("top_runs", "initial runs of that top step, 1 to 1024"),
        key("top_coarse_tries", "coarse tries of that top step, at most 1024"),
        key("population", "memetic mode when at least 2: this many whole runs, at most 256"),
        key("combines", "memetic mode: recombinations (none: 8 per member), at most 100,000"),
        key("batch", "memetic mode: recombinations run together (none: 2), 1 to 1024"),
        key("anneal", "simulated annealing of the final mapping, proposals per task (0: off), at most 10^6"),
    ];

    fn imply(&mut self, given: &[&'static str]) {
        if given.contains(&"runs") && !given.contains(&"run_work") {
            self.initial_run_work = 0;
        }
        if given.contains(&"per_pe") && !given.contains(&"per_pe2d") {
            self.grid2d_per_pe = 0;
        }
    }

    fn validate(&self) -> Result<(), String> {
        check_count("runs", self.initial_runs, MAX_RUNS)?;
        check_count("tries", self.tries, MAX_TRIES)?;
        check_count("top_runs", self.top_runs, MAX_RUNS)?;
        check_at_most("coarse_tries", self.coarse_tries, MAX_TRIES)?;
        check_at_most("top_coarse_tries", self.top_coarse_tries, MAX_TRIES)?;
        check_at_most("vcycles", self.vcycles, MAX_ROUNDS)?;
        check_at_most("hub_vcycles", self.hub_vcycles, MAX_ROUNDS)?;
        check_at_most("pairs", self.pair_rounds, MAX_ROUNDS)?;
        check_count("population", self.population, evolve::MAX_POPULATION)?;
        check_at_most("anneal", self.anneal as usize, MAX_ANNEAL)?;
        check_at_most("spread", self.spread as usize, 1000)?;
        if self.coarsest_per_pe == 0 {
            return Err("per_pe must be at least 1, got 0".into());
        }
        if let Some(c) = self.combines {
            check_at_most("combines", c, evolve::MAX_COMBINES)?;
        }
        if let Some(b) = self.combine_batch {
            check_count("batch", b, evolve::MAX_BATCH)?;
        }
        if (self.combines.is_some() || self.combine_batch.is_some()) && self.population < 2 {
            return Err("combines and batch need the memetic mode, population=2 or more".into());
        }
        for (k, v) in [
            ("flow", self.flow_alpha),
            ("pair_flow", self.pair_flow_alpha),
            ("cluster_weight", self.cluster_weight_factor),
        ] {
            if !(0.0..=MAX_FLOW_ALPHA).contains(&v) {
                return Err(format!("{k} must be a number from 0 to 2^20, got {v}"));
            }
        }
        Ok(())
    }
}
