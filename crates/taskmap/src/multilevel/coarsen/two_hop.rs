//! Two-hop clustering of the tasks that label propagation left alone (KaMinPar's rule for
//! power-law graphs).
//!
//! On a power-law graph, label propagation stalls: the hubs' clusters reach the weight
//! limit at once, and the many tasks of degree one or two whose only neighbours are hubs
//! (or the tasks with no neighbour at all) stay single, so a level shrinks the graph by a
//! few percent and coarsening stops far above its target (an R-MAT graph of 262,144 tasks,
//! 42 % of them isolated, stopped at 147,567). Two single tasks that prefer the same
//! cluster are two hops apart through it; [`TwoHop`] puts them into one cluster, and the
//! isolated tasks of a part into clusters of their own, all within the weight limit.

use taskmap_graph::TaskGraph;

use super::rating::RatingMap;
use super::{fits, LpView};

/// Tasks per parallel block of the preferred-cluster pass.
const BLOCK: usize = 4096;

/// Two-hop clustering applies when label propagation left more than this fraction of the
/// clusters it started with.
pub const TWO_HOP_MIN_SHRINK: f64 = 0.5;

/// The two-hop clustering of single tasks.
#[derive(Clone, Copy, Debug, Default)]
pub struct TwoHop;

impl TwoHop {
    /// Merges single tasks of `cluster` (labels are task ids; `cw` the clusters' weights
    /// per constraint): those whose most strongly connected cluster is the same, and
    /// those with no free neighbour that sit in the same part, fill clusters up to
    /// `max_weight` in task order. Pinned tasks stay alone. The preferred clusters are
    /// found in parallel blocks on `pool`, the groups in one pass: the same clusters for
    /// every thread count.
    pub(crate) fn merge(
        &self,
        view: &LpView<'_>,
        cluster: &mut [u32],
        cw: &mut [u64],
        pool: Option<&rayon::ThreadPool>,
    ) {
        let g: &TaskGraph = view.graph;
        let n = g.num_tasks();
        let ncon = g.ncon();
        let mut size = vec![0u32; n];
        for &c in cluster.iter() {
            size[c as usize] += 1;
        }
        const ALONE: u32 = u32::MAX;
        const PINNED: u32 = u32::MAX - 1;
        // Per task: the cluster a single task prefers (`ALONE`: it has no free neighbour;
        // `PINNED`: it stays as it is, as does every task of a larger cluster).
        let cl = &*cluster;
        let size = &size;
        let prefer: Vec<u32> =
            crate::par::map_blocks(pool, n, BLOCK, RatingMap::new, |map, range| {
                range
                    .map(|v| {
                        let v = v as u32;
                        if size[cl[v as usize] as usize] != 1 || view.pinned(v) {
                            return PINNED;
                        }
                        view.strongest(cl, v, map).unwrap_or(ALONE)
                    })
                    .collect::<Vec<u32>>()
            })
            .concat();
        // The open group of every preferred cluster, and of the isolated tasks per part.
        let mut open = vec![u32::MAX; n];
        let mut open_alone: Vec<u32> = Vec::new();
        for v in 0..n as u32 {
            let c = prefer[v as usize];
            if c == PINNED {
                continue;
            }
            let slot = if c == ALONE {
                let p = if view.part.is_empty() {
                    0
                } else {
                    view.part[v as usize] as usize
                };
                if open_alone.len() <= p {
                    open_alone.resize(p + 1, u32::MAX);
                }
                &mut open_alone[p]
            } else {
                &mut open[c as usize]
            };
            let leader = *slot;
            if leader != u32::MAX && fits(g, cw, leader as usize, v, view.max_weight) {
                let own = cluster[v as usize] as usize;
                for (i, &w) in g.vertex_weights(v).iter().enumerate() {
                    cw[own * ncon + i] -= w;
                    cw[leader as usize * ncon + i] += w;
                }
                cluster[v as usize] = leader;
            } else {
                *slot = cluster[v as usize];
            }
        }
    }
}
