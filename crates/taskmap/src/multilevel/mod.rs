//! Building blocks of the multilevel mapper and of dual recursive bipartitioning: a local
//! distance table, an addressable priority queue, the bipartitioner with external costs, the
//! coarseners (heavy-edge matching in random or input order, size-constrained label
//! propagation), contraction, and the k-way refiner that minimises `f_C` directly.
//!
//! The mappers themselves live in [`crate::mappers::drb`] and [`crate::multilevel::driver`].

pub mod anneal;
pub mod bipart;
pub mod coarsen;
pub mod dist;
pub mod driver;
pub mod evolve;
pub mod flow;
pub mod pairs;
pub mod pq;
pub mod refine;

pub use dist::DistTable;
pub use driver::MultilevelMapper;
pub use refine::{KwayRefiner, KwayState};

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
