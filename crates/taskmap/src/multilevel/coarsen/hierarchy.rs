//! The hierarchy of coarser graphs: one level per clustering and contraction, until the
//! coarsest size or until a level shrinks too little.

use rand::Rng;
use taskmap_graph::TaskGraph;

use crate::multilevel::coarsen::{
    contract, heavy_edge_matching, label_propagation_clusters, Coarsening,
};
use crate::multilevel::phases::Clustering;
use crate::problem::FREE;

use crate::multilevel::config::*;

/// One level of the hierarchy: a coarse graph, the cluster of every finer task, and the
/// PE every coarse task is fixed to (empty when no task is fixed).
pub(crate) struct Level {
    pub(crate) graph: TaskGraph,
    pub(crate) cluster: Vec<u32>,
    pub(crate) fixed: Vec<u32>,
    /// The PE of every coarse task in a V-cycle (empty otherwise).
    pub(crate) part: Vec<u32>,
}

/// The largest cluster weight per constraint when coarsening to `target` tasks: about
/// `cluster_weight_factor · total / target`, at most half the smallest positive bound and
/// at least the heaviest task.
pub(crate) fn max_cluster_weights(
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

/// Coarsens `graph` level by level with `c`'s scheme until it has at most `c.target`
/// tasks, a level barely shrinks, or `max_levels` is reached, clustering and contracting
/// in parallel on `pool`. Pinned tasks stay single and pass their pin on. With `part0`
/// non-empty (a V-cycle), clusters stay inside one PE and every level carries the mapping.
pub(crate) fn coarsen_levels(
    c: &Clustering<'_>,
    graph: &TaskGraph,
    fixed0: &[u32],
    part0: &[u32],
    pool: Option<&rayon::ThreadPool>,
    rng: &mut impl Rng,
) -> Vec<Level> {
    let (cfg, scheme, target, mcw) = (c.cfg, c.scheme, c.target, c.max_cluster_weights);
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
            Coarsening::LabelPropagation => label_propagation_clusters(
                cur,
                mcw,
                cfg.cluster_rounds,
                cur_fixed,
                cur_part,
                pool,
                rng,
            ),
            Coarsening::HeavyEdgeMatching | Coarsening::OrderedMatching => {
                let ordered = scheme == Coarsening::OrderedMatching;
                heavy_edge_matching(cur, mcw, cur_fixed, cur_part, ordered, rng)
            }
        };
        if nc as f64 > 0.95 * n as f64 {
            break;
        }
        let coarse = contract(cur, &cluster, nc, pool);
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
