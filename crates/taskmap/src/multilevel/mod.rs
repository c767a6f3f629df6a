//! The multilevel mapper: `uncoarsen(initial(coarsen(graph)))`, then V-cycles, minimising
//! `f_C` on every level; presets [`MultilevelMapper::fast`], [`MultilevelMapper::default`],
//! [`MultilevelMapper::strong`]. Parameters, and the design notes with the numbers behind
//! each default: `docs/algorithms.md` (`multilevel`).
//!
//! 1. **Coarsen** by size-constrained label propagation or heavy-edge matching (random or
//!    input order, [`heavy_edge_matching`](coarsen::heavy_edge_matching)) to `max(coarsest_per_pe·k, min_coarsest)`
//!    tasks, capped at `max(max_coarsest, f·k)` with `f` = [`MIN_COARSEST_PER_PE`](config::MIN_COARSEST_PER_PE),
//!    [`TORUS_MIN_COARSEST_PER_PE`](config::TORUS_MIN_COARSEST_PER_PE) or [`MULTISECTION_MIN_COARSEST_PER_PE`](config::MULTISECTION_MIN_COARSEST_PER_PE) (2-D grids of
//!    at most [`GRID2D_MAX_PES`](config::GRID2D_MAX_PES) PEs: `grid2d_per_pe·k`). By default two hierarchies (label
//!    propagation, the ordered matching) are built, mapped and uncoarsened in turn, the
//!    better mapping kept; graphs of at least [`PROBE_TASKS`](coarsen::probe::PROBE_TASKS) tasks build the one a probe
//!    picks (`probe_coarsenings`).
//! 2. **Initial mapping** by dual recursive bipartitioning ([`crate::mappers::drb`]) with
//!    multilevel bisections refined by FM, flow ([`BISECTION_FLOW_ALPHA`](config::BISECTION_FLOW_ALPHA)) and island
//!    removal ([`Bipartitioner`](bipart::Bipartitioner)), in seeded runs on the context's pool (more runs and
//!    tries on small graphs: [`MAX_ADAPTIVE_RUNS`](config::MAX_ADAPTIVE_RUNS), [`SMALL_GRAPH_TRIES`](config::SMALL_GRAPH_TRIES)); on long 3-D
//!    tori ([`unwrap_by_default`](config::unwrap_by_default)) every other run splits the mesh's domains, on hypercubes
//!    one more run the Gray-code mesh's. On targets of nested groups (a tree's subtrees),
//!    without fixed tasks, [`multisection`](initial::multisection) maps down the target's hierarchy instead: the
//!    whole mapper onto the top level's groups, then each group onto its subgroups (the top
//!    step coarsened deeper up to [`DEEP_TOP_MAX_TASKS`](config::DEEP_TOP_MAX_TASKS) tasks, `deep_top_step`).
//! 3. **Uncoarsen**: project, rebalance, refine every level with the k-way `f_C` refiner
//!    ([`KwayRefiner`]: label propagation, FM with rollback, swaps in `strong`) and
//!    pairwise rounds re-splitting two PEs by FM and flow ([`crate::multilevel::refine::pairs`];
//!    graphs of at most [`PAIR_MAX_TASKS`](config::PAIR_MAX_TASKS) tasks).
//! 4. **Group levels** (`multisection=0` only, `group_levels`): per level of groups, a
//!    V-cycle on the partition into groups, the moved tasks then refined on the PEs.
//! 5. **V-cycles** (KaFFPa's iterated scheme): coarsen again inside the PEs, refine every
//!    level, keep when no worse; at most [`VCYCLE_WORK`](config::VCYCLE_WORK) / n, until one gains nothing.
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
//!
//! ## Layout
//!
//! * [`config`]: the parameters (the keys of `multilevel,key=value`) and presets;
//!   [`driver`]: the run (runs, tries, the two hierarchies, the large-graph probe) and the
//!   [`crate::Mapper`]; [`phases`]: the phase traits the driver runs (`Coarsener`,
//!   `InitialMapper`, [`phases::Refiner`]).
//! * [`coarsen`]: clustering and contraction; [`coarsen::hierarchy`]: the levels;
//!   [`coarsen::probe`]: the probe between two first coarsenings.
//! * [`initial`]: the coarsest graph's mapping, by DRB ([`crate::mappers::drb`]) or
//!   [`initial::multisection`]; both split with [`bipart`] (FM, [`flow`], island removal).
//! * [`refine`]: uncoarsening with the k-way refiner ([`refine::kway`]), its pairwise
//!   rounds ([`refine::pairs`]) and its steps as data ([`refine::pipeline`]); [`vcycle`]: V-cycles; [`anneal`]: simulated annealing of the
//!   final mapping; [`evolve`]: the memetic mode; [`remap`]: refining a given mapping.
//! * [`dist`]: distance tables; [`pq`]: the addressable priority queue.

pub mod anneal;
pub mod bipart;
pub mod coarsen;
pub mod config;
pub mod dist;
pub mod driver;
pub mod evolve;
pub mod flow;
pub mod initial;
pub mod phases;
pub mod pq;
pub mod refine;
pub mod remap;
pub mod vcycle;

pub use config::MultilevelMapper;
pub use dist::DistTable;
pub use refine::kway::{KwayRefiner, KwayState};

/// Per-PE load bounds, row-major `bound[pe * ncon + c]`, from [`crate::Problem::max_loads`].
pub fn load_bounds(problem: &crate::Problem) -> Vec<u64> {
    let k = problem.arch.pe_count() as usize;
    let ncon = problem.graph.ncon();
    let mut out = vec![0u64; k * ncon];
    for c in 0..ncon {
        for (p, b) in problem.max_loads(c).into_iter().enumerate() {
            out[p * ncon + c] = b;
        }
    }
    out
}
