//! Tasks without edges, set aside while the rest is mapped and packed into the room left.
//!
//! A task with no edge adds nothing to `f_C` wherever it goes, so the multilevel mapper
//! maps the graph of the other tasks under the same load bounds and then fills the PEs'
//! remaining room with the isolated tasks (KaMinPar does the same). Coarsening,
//! refinement and the V-cycles then neither carry them nor spend the slack on them: an
//! R-MAT graph of 262,144 tasks has 111,022 of them (42 %). The connected tasks get the
//! slack the isolated ones leave, though refinement soon fills it: onto `torus:16x16`, 92
//! of the 256 PEs were full after the last projection (108 with the isolated tasks kept).

use taskmap_graph::TaskGraph;

use crate::multilevel::refine::kway::KwayState;
use crate::multilevel::refine::rebalance::rebalance;
use crate::multilevel::DistTable;

/// Isolated tasks are set aside when they are at least this fraction of the tasks.
pub const MIN_ISOLATED_SHARE: f64 = 0.01;

/// The split of a graph into its connected tasks (a subgraph to map) and its isolated
/// ones.
pub struct IsolatedTasks {
    /// The tasks with at least one edge, in id order: task `i` of [`Self::graph`].
    pub kept: Vec<u32>,
    /// The tasks without edges, heaviest first (constraint 0, then id).
    pub isolated: Vec<u32>,
    /// The subgraph induced by `kept`.
    pub graph: TaskGraph,
}

impl IsolatedTasks {
    /// The split of `graph` when it has at least [`MIN_ISOLATED_SHARE`] isolated tasks
    /// and no task is fixed (`fixed` empty); `None` otherwise.
    pub fn split(graph: &TaskGraph, fixed: &[u32]) -> Option<Self> {
        let n = graph.num_tasks();
        if !fixed.is_empty() || n == 0 {
            return None;
        }
        let (isolated, kept): (Vec<u32>, Vec<u32>) =
            (0..n as u32).partition(|&v| graph.degree(v) == 0);
        if (isolated.len() as f64) < MIN_ISOLATED_SHARE * n as f64 || isolated.is_empty() {
            return None;
        }
        let mut isolated = isolated;
        isolated.sort_by_key(|&v| (std::cmp::Reverse(graph.vertex_weight(v, 0)), v));
        let mut local = vec![u32::MAX; n];
        let sub = graph.induced(&kept, &mut local);
        Some(Self {
            kept,
            isolated,
            graph: sub,
        })
    }

    /// The mapping of the whole graph from `sub` (the PE of every kept task): each
    /// isolated task, heaviest first, goes to the PE with the most room left in
    /// constraint 0 among those it fits (ties: the lower id). A task that fits nowhere
    /// goes to the PE with the most room, and [`rebalance`] then repairs the loads; `None`
    /// when it cannot (the heavy isolated tasks need room the submapping did not leave,
    /// and the caller maps the whole graph instead). O(n + k + isolated · log k) when
    /// every task fits where it is sent first.
    pub fn place(
        &self,
        graph: &TaskGraph,
        dist: &DistTable<'_>,
        bound: &[u64],
        sub: &[u32],
    ) -> Option<Vec<u32>> {
        let n = graph.num_tasks();
        let k = dist.k() as usize;
        let ncon = graph.ncon();
        let mut part = vec![0u32; n];
        let mut load = vec![0u64; k * ncon];
        for (&v, &p) in self.kept.iter().zip(sub) {
            part[v as usize] = p;
            for (c, &w) in graph.vertex_weights(v).iter().enumerate() {
                load[p as usize * ncon + c] += w;
            }
        }
        let room = |load: &[u64], p: usize, c: usize| {
            bound[p * ncon + c].saturating_sub(load[p * ncon + c])
        };
        // A max-heap of (room in constraint 0, lower id first).
        let mut heap: std::collections::BinaryHeap<(u64, std::cmp::Reverse<u32>)> = (0..k)
            .map(|p| (room(&load, p, 0), std::cmp::Reverse(p as u32)))
            .collect();
        let mut skipped: Vec<(u64, std::cmp::Reverse<u32>)> = Vec::new();
        let mut overflow = false;
        for &v in &self.isolated {
            let w = graph.vertex_weights(v);
            // Pop PEs until one fits; the others go back afterwards.
            let mut chosen = None;
            while let Some(top) = heap.pop() {
                let p = top.1 .0 as usize;
                if (0..ncon).all(|c| w[c] <= room(&load, p, c)) {
                    chosen = Some(p);
                    break;
                }
                skipped.push(top);
            }
            let p = chosen.unwrap_or_else(|| {
                overflow = true;
                // The most room, as the heap had it.
                skipped
                    .iter()
                    .max_by_key(|e| (e.0, e.1))
                    .map_or(0, |e| e.1 .0 as usize)
            });
            skipped.retain(|e| e.1 .0 as usize != p);
            heap.extend(skipped.drain(..));
            part[v as usize] = p as u32;
            for (c, &wc) in w.iter().enumerate() {
                load[p * ncon + c] += wc;
            }
            heap.push((room(&load, p, 0), std::cmp::Reverse(p as u32)));
        }
        if overflow {
            let mut st = KwayState::new(graph, dist, bound, part);
            if !rebalance(&mut st) {
                return None;
            }
            part = st.part;
        }
        Some(part)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Isolated tasks of mixed weights fill the room the connected tasks leave: every PE
    /// within its bound, the kept tasks where the submapping put them, and `f_C` that of
    /// the submapping.
    #[test]
    fn isolated_tasks_fill_the_room_left() {
        let arch = taskmap_arch::parse_arch("torus:4x4").unwrap();
        let dist = DistTable::new(arch.as_ref());
        // A path of 40 tasks (weight 1) and 60 isolated tasks of weights 1-4.
        let n = 100u32;
        let mut b = taskmap_graph::GraphBuilder::new(n as usize, 1);
        for v in 0..39 {
            b.add_edge(v, v + 1, 3);
        }
        for v in 40..n {
            b.set_vertex_weight(v, 0, u64::from(1 + v % 4));
        }
        let g = b.build();
        let total = g.total_vertex_weight(0);
        let bound = vec![(total * 103 / 100).div_ceil(16) + 1; 16];
        let split = IsolatedTasks::split(&g, &[]).expect("60 % isolated");
        assert_eq!(split.kept, (0..40).collect::<Vec<u32>>());
        assert_eq!(split.graph.num_tasks(), 40);
        assert_eq!(split.graph.num_edges(), 39);
        // The path on four PEs only (10 of their 14): the others must take most of the
        // isolated tasks.
        let sub: Vec<u32> = (0..40).map(|v| v / 10).collect();
        let part = split.place(&g, &dist, &bound, &sub).unwrap();
        let st = KwayState::new(&g, &dist, &bound, part.clone());
        assert!(st.is_balanced(), "{:?}", st.loads);
        assert_eq!(&part[..40], &sub[..]);
        let sub_cost = dist.comm_cost(&split.graph, &sub);
        assert_eq!(st.comm_cost(), sub_cost);
        // Fixed tasks, or too few isolated ones, keep the graph whole.
        assert!(IsolatedTasks::split(&g, &vec![crate::problem::FREE; 100]).is_none());
        let path = taskmap_graph::gen::grid(&[10, 10], false);
        assert!(IsolatedTasks::split(&path, &[]).is_none());
    }
}
