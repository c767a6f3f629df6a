//! Uncoarsening: the mapping projected from each level to the next finer one and refined
//! there ([`kway`]: the k-way refiner with its pairwise rounds, [`pairs`]).

pub mod gain_cache;
pub mod jet;
pub mod kway;
pub mod pairs;
pub mod pipeline;
pub mod rebalance;

use rand::Rng;
use taskmap_graph::TaskGraph;

use crate::mapper::Progress;
use crate::multilevel::refine::kway::KwayState;
use crate::multilevel::refine::rebalance::rebalance;
use crate::multilevel::DistTable;

use crate::multilevel::coarsen::hierarchy::*;
use crate::multilevel::refine::pipeline::{RefineScratch, Refiner};

/// (unbalanced, f_C) of mapping `part` of `graph` (smaller is better), and `part` handed
/// back.
pub(crate) fn scored(
    graph: &TaskGraph,
    dist: &DistTable<'_>,
    bound: &[u64],
    part: Vec<u32>,
) -> ((bool, u64), Vec<u32>) {
    let st = KwayState::new(graph, dist, bound, part);
    ((!st.is_balanced(), st.comm_cost()), st.part)
}

/// Projects `part` (a mapping of the coarsest level) through `levels` to `graph`,
/// repairing the balance where needed and refining on every level with `refiner`; returns
/// the mapping of `graph`, label propagation on `pool`. Tells `progress` of each level done.
pub(crate) fn uncoarsen(
    refiner: &impl Refiner,
    levels: &[Level],
    graph: &TaskGraph,
    fixed0: &[u32],
    dist: &DistTable<'_>,
    bound: &[u64],
    mut part: Vec<u32>,
    pool: Option<&rayon::ThreadPool>,
    rng: &mut impl Rng,
    progress: &dyn Progress,
) -> Vec<u32> {
    let n = levels.len() as u64;
    for i in (0..levels.len()).rev() {
        let fine = if i == 0 { graph } else { &levels[i - 1].graph };
        let fine_fixed = if i == 0 {
            fixed0
        } else {
            &levels[i - 1].fixed[..]
        };
        let cl = &levels[i].cluster;
        let projected: Vec<u32> = cl.iter().map(|&c| part[c as usize]).collect();
        let mut st = KwayState::new(fine, dist, bound, projected)
            .with_fixed(fine_fixed)
            .with_pool(pool);
        if !st.is_balanced() {
            rebalance(&mut st);
        }
        refiner.refine(&mut st, &mut RefineScratch::default(), rng);
        part = st.part;
        progress.step(n - i as u64, n);
    }
    let mut st = KwayState::new(graph, dist, bound, part).with_fixed(fixed0);
    if !st.is_balanced() {
        rebalance(&mut st);
    }
    st.part
}
