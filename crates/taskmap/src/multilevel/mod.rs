//! The multilevel mapper: `uncoarsen(initial(coarsen(graph)))`, then V-cycles, minimising
//! `f_C` on every level; presets [`MultilevelMapper::fast`], [`MultilevelMapper::default`],
//! [`MultilevelMapper::strong`]. Steps in full, parameters, code layout and the design
//! notes with the numbers behind each default: `docs/algorithms.md`, "`multilevel` in detail".
//!
//! 1. **Coarsen** by label propagation (in parallel sub-rounds; the same clusters for the
//!    same thread count) or heavy-edge matching
//!    ([`heavy_edge_matching`](coarsen::heavy_edge_matching)) to `per_pe·k` tasks, within
//!    floors per PE ([`MIN_COARSEST_PER_PE`](config::MIN_COARSEST_PER_PE) and its torus,
//!    multisection and 2-D grid variants); two hierarchies, the better mapping kept (above
//!    [`LP_DEEP_MIN_TASKS`](config::LP_DEEP_MIN_TASKS) tasks, under DRB, label
//!    propagation's deeper, to `lp_per_pe·k`), or from
//!    [`PROBE_TASKS`](coarsen::probe::PROBE_TASKS) tasks on the one a probe picks.
//! 2. **Initial mapping** by DRB ([`crate::mappers::drb`]) with multilevel bisections
//!    ([`Bipartitioner`](bipart::Bipartitioner): FM, flow, island removal) in seeded runs on
//!    the context's pool; on long 3-D tori ([`unwrap_by_default`](config::unwrap_by_default))
//!    every other run splits the mesh's domains, on hypercubes one more run the Gray-code
//!    mesh's; on a tree's nested groups [`multisection`](initial::multisection) instead.
//! 3. **Uncoarsen**: project, rebalance, refine every level ([`KwayRefiner`]), re-split PE
//!    pairs by FM and flow ([`refine::pairs`]).
//! 4. **Group levels** (`multisection=0` only): a V-cycle per level of a tree's groups.
//! 5. **V-cycles** (KaFFPa's iterated scheme) inside the PEs, at most
//!    [`VCYCLE_WORK`](config::VCYCLE_WORK) / n (`hub_vcycles` on a graph with hubs), until
//!    one gains nothing.
//! 6. **Memetic mode** (`population` ≥ 2, [`evolve`]): KaFFPaE's combine of whole runs.
//! 7. **Annealing** (`anneal` > 0, [`anneal`]) of the final mapping.
//!
//! Why: on the mid-size graphs DRB maps best on the finest graph it can afford and no
//! k-way refiner recovers what a coarse initial mapping loses, so coarsening stops early
//! (on large graphs without hubs a deep hierarchy refined k-way wins often enough to be
//! tried beside it); the two hierarchies' initial mappings do not predict the winner
//! after refinement; multisection makes the top level,
//! whose distances dominate f_C, a k-way partition with room to move; V-cycles and pairwise
//! rounds move clusters and frontiers that single-task FM cannot.
//!
//! Complexity: O((1 + cycles)·(n + m)·levels·(rounds + passes·log n)) plus DRB on the
//! coarsest graph and O(k²) for the distance table (k ≤ 4096).
//!
//! References: Pellegrini, "Static mapping by dual recursive bipartitioning of process and
//! architecture graphs", SHPCC 1994 (Scotch's DRB); Walshaw & Cross, "Multilevel mesh
//! partitioning for heterogeneous communication networks", 2001; Sanders & Schulz, KaFFPa
//! 2011, KaFFPaE 2012 (KaHIP); Meyerhenke, Sanders & Schulz 2014, KaMinPar (label propagation).

pub mod anneal;
pub mod bipart;
pub mod coarsen;
pub mod config;
pub mod dist;
pub mod driver;
pub mod evolve;
pub mod flow;
pub mod initial;
pub mod isolated;
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
