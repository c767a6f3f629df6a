//! Incremental construction of a [`TaskGraph`] from an unordered list of undirected edges.

use crate::graph::TaskGraph;

/// What [`GraphBuilder`] does when the same unordered pair `{u, v}` is added more than once.
///
/// Each reader chooses the policy that its file format defines:
///
/// | caller | policy |
/// |---|---|
/// | Matrix Market (`a_ij` and `a_ji` of a general matrix, repeated entries) | [`Sum`](DuplicateEdges::Sum) |
/// | `.bench` netlists (parallel and opposite arcs between two gates) | [`Sum`](DuplicateEdges::Sum) |
/// | edge lists (`u v w` and `v u w` may both appear) | [`MergeReverse`](DuplicateEdges::MergeReverse) |
/// | generators | [`Reject`](DuplicateEdges::Reject) (they never add a pair twice) |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DuplicateEdges {
    /// The weights of all copies are added (saturating at `u64::MAX`).
    #[default]
    Sum,
    /// The largest weight of all copies is kept.
    Max,
    /// The weight of the first copy (in insertion order) is kept.
    KeepFirst,
    /// A pair may be added at most twice, once as `(u, v)` and once as `(v, u)`, and then
    /// with the same weight; the two copies become one edge. Anything else is an
    /// [`EdgeConflict`].
    MergeReverse,
    /// Any repeated pair is an [`EdgeConflict`].
    Reject,
}

/// Two insertions of the same pair that the [`DuplicateEdges`] policy does not allow.
///
/// `first` and `second` are insertion indices (0-based, in the order of
/// [`GraphBuilder::add_edge`] calls), so callers can map them back to file lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeConflict {
    /// Insertion index of the earlier copy.
    pub first: usize,
    /// Insertion index of the later copy.
    pub second: usize,
}

/// Collects undirected edges and vertex weights, then builds a [`TaskGraph`] in O(n + m).
///
/// Edges are kept as three flat arrays (no allocation per edge). [`GraphBuilder::build`]
/// places both directions of every edge with a counting sort by row, then merges repeated
/// pairs in one sweep per row with a marker array (`mark[v]` = slot of `v` in the current
/// row), following the [`DuplicateEdges`] policy. Rows list neighbours in insertion order.
/// Self-loops are ignored (readers that must reject them check before adding).
///
/// ```
/// use taskmap_graph::GraphBuilder;
/// let mut b = GraphBuilder::new(3, 1);
/// b.add_edge(0, 1, 2);
/// b.add_edge(1, 0, 3); // summed with the default policy
/// b.add_edge(1, 2, 1);
/// let g = b.build();
/// assert_eq!(g.num_edges(), 2);
/// assert_eq!(g.edge_weights(0), &[5]);
/// ```
#[derive(Clone, Debug)]
pub struct GraphBuilder {
    n: usize,
    ncon: usize,
    vertex_weight: Vec<u64>,
    tail: Vec<u32>,
    head: Vec<u32>,
    weight: Vec<u64>,
    policy: DuplicateEdges,
}

impl GraphBuilder {
    /// A builder for `n` tasks with `ncon >= 1` vertex weights each, all set to 1, no edges,
    /// and the [`DuplicateEdges::Sum`] policy.
    ///
    /// # Panics
    /// If `ncon == 0` or `n > u32::MAX`.
    pub fn new(n: usize, ncon: usize) -> Self {
        assert!(ncon >= 1, "ncon must be at least 1");
        assert!(n <= u32::MAX as usize, "at most 2^32-1 tasks");
        Self {
            n,
            ncon,
            vertex_weight: vec![1; n * ncon],
            tail: Vec::new(),
            head: Vec::new(),
            weight: Vec::new(),
            policy: DuplicateEdges::Sum,
        }
    }

    /// Sets the policy for repeated pairs.
    pub fn with_duplicates(mut self, policy: DuplicateEdges) -> Self {
        self.policy = policy;
        self
    }

    /// Reserves room for `m` more edges.
    pub fn reserve_edges(&mut self, m: usize) {
        self.tail.reserve(m);
        self.head.reserve(m);
        self.weight.reserve(m);
    }

    /// Number of tasks.
    pub fn num_tasks(&self) -> usize {
        self.n
    }

    /// Number of `add_edge` calls so far (self-loops included).
    pub fn num_added(&self) -> usize {
        self.tail.len()
    }

    /// Sets vertex weight `c` of task `u`.
    pub fn set_vertex_weight(&mut self, u: u32, c: usize, w: u64) {
        assert!(
            c < self.ncon,
            "constraint {c} out of range (ncon {})",
            self.ncon
        );
        self.vertex_weight[u as usize * self.ncon + c] = w;
    }

    /// Sets all `ncon` vertex weights of task `u`.
    pub fn set_vertex_weights(&mut self, u: u32, w: &[u64]) {
        assert_eq!(w.len(), self.ncon, "expected ncon weights");
        let s = u as usize * self.ncon;
        self.vertex_weight[s..s + self.ncon].copy_from_slice(w);
    }

    /// Adds the undirected edge `{u, v}` with weight `w`. A self-loop (`u == v`) is recorded
    /// (it keeps its insertion index) but ignored by `build`.
    ///
    /// # Panics
    /// If `u` or `v` is not below `n` (a caller bug: readers check ids first).
    #[inline]
    pub fn add_edge(&mut self, u: u32, v: u32, w: u64) {
        assert!(
            (u as usize) < self.n && (v as usize) < self.n,
            "edge {u}-{v} out of range 0..{}",
            self.n
        );
        self.tail.push(u);
        self.head.push(v);
        self.weight.push(w);
    }

    /// Builds the graph.
    ///
    /// # Panics
    /// If the policy is [`DuplicateEdges::MergeReverse`] or [`DuplicateEdges::Reject`] and a
    /// conflict exists; use [`GraphBuilder::try_build`] with those policies on user input.
    pub fn build(self) -> TaskGraph {
        match self.try_build() {
            Ok(g) => g,
            Err(c) => panic!(
                "GraphBuilder::build: insertions {} and {} repeat the same pair",
                c.first, c.second
            ),
        }
    }

    /// Builds the graph, or reports the first two insertions that break the policy.
    /// O(n + m) time, O(n + m) extra space.
    pub fn try_build(self) -> Result<TaskGraph, EdgeConflict> {
        let n = self.n;
        let track = matches!(
            self.policy,
            DuplicateEdges::MergeReverse | DuplicateEdges::Reject | DuplicateEdges::KeepFirst
        );
        // Counting sort of both directions by row.
        let mut xadj = vec![0usize; n + 1];
        for (&u, &v) in self.tail.iter().zip(&self.head) {
            if u != v {
                xadj[u as usize + 1] += 1;
                xadj[v as usize + 1] += 1;
            }
        }
        for i in 0..n {
            xadj[i + 1] += xadj[i];
        }
        let total = xadj[n];
        let mut fill = xadj.clone();
        let mut adjncy = vec![0u32; total];
        let mut ew = vec![0u64; total];
        let mut src = if track {
            vec![0usize; total]
        } else {
            Vec::new()
        };
        for (i, ((&u, &v), &w)) in self
            .tail
            .iter()
            .zip(&self.head)
            .zip(&self.weight)
            .enumerate()
        {
            if u == v {
                continue;
            }
            let (pu, pv) = (fill[u as usize], fill[v as usize]);
            fill[u as usize] += 1;
            fill[v as usize] += 1;
            adjncy[pu] = v;
            adjncy[pv] = u;
            ew[pu] = w;
            ew[pv] = w;
            if track {
                src[pu] = i;
                src[pv] = i;
            }
        }
        drop(fill);
        // Merge repeated pairs row by row, compacting in place.
        let mut mark = vec![usize::MAX; n];
        let mut merged = if self.policy == DuplicateEdges::MergeReverse {
            vec![false; total]
        } else {
            Vec::new()
        };
        let mut out = 0usize;
        let mut row_start = 0usize;
        for u in 0..n {
            let (s, t) = (row_start, xadj[u + 1]);
            row_start = t;
            let out_start = out;
            for e in s..t {
                let v = adjncy[e] as usize;
                let w = ew[e];
                let slot = mark[v];
                if slot != usize::MAX && slot >= out_start {
                    match self.policy {
                        DuplicateEdges::Sum => ew[slot] = ew[slot].saturating_add(w),
                        DuplicateEdges::Max => ew[slot] = ew[slot].max(w),
                        DuplicateEdges::KeepFirst => {}
                        DuplicateEdges::Reject => {
                            return Err(EdgeConflict {
                                first: src[slot],
                                second: src[e],
                            })
                        }
                        DuplicateEdges::MergeReverse => {
                            let (i, j) = (src[slot], src[e]);
                            if merged[slot] || self.tail[i] == self.tail[j] || ew[slot] != w {
                                return Err(EdgeConflict {
                                    first: i,
                                    second: j,
                                });
                            }
                            merged[slot] = true;
                            src[slot] = j;
                        }
                    }
                } else {
                    mark[v] = out;
                    adjncy[out] = v as u32;
                    ew[out] = w;
                    if track {
                        src[out] = src[e];
                    }
                    if !merged.is_empty() {
                        merged[out] = false;
                    }
                    out += 1;
                }
            }
            xadj[u + 1] = out;
        }
        adjncy.truncate(out);
        ew.truncate(out);
        adjncy.shrink_to_fit();
        ew.shrink_to_fit();
        Ok(TaskGraph::from_csr_unchecked(
            xadj,
            adjncy,
            ew,
            self.vertex_weight,
            self.ncon,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_validates() {
        let mut b = GraphBuilder::new(4, 2);
        b.add_edge(0, 1, 1);
        b.add_edge(1, 0, 2);
        b.add_edge(2, 3, 4);
        b.add_edge(3, 3, 9);
        b.add_edge(0, 1, 3);
        b.set_vertex_weights(2, &[5, 6]);
        let g = b.build();
        g.validate().unwrap();
        assert_eq!(g.num_edges(), 2);
        assert_eq!(g.edge_weights(0), &[6]);
        assert_eq!(g.edge_weights(1), &[6]);
        assert_eq!(g.vertex_weights(2), &[5, 6]);
        assert_eq!(g.total_vertex_weight(1), 9);
    }

    #[test]
    fn policies() {
        let edges = [(0u32, 1u32, 3u64), (1, 0, 3), (1, 2, 1)];
        let mk = |p| {
            let mut b = GraphBuilder::new(3, 1).with_duplicates(p);
            for &(u, v, w) in &edges {
                b.add_edge(u, v, w);
            }
            b
        };
        assert_eq!(mk(DuplicateEdges::Max).build().edge_weights(0), &[3]);
        assert_eq!(mk(DuplicateEdges::KeepFirst).build().edge_weights(0), &[3]);
        assert_eq!(
            mk(DuplicateEdges::MergeReverse)
                .try_build()
                .unwrap()
                .edge_weights(0),
            &[3]
        );
        assert_eq!(
            mk(DuplicateEdges::Reject).try_build().unwrap_err(),
            EdgeConflict {
                first: 0,
                second: 1
            }
        );
        // Same direction twice, or different weights, or three copies: conflicts.
        for extra in [(0u32, 1u32, 3u64), (2, 1, 2)] {
            let mut b = mk(DuplicateEdges::MergeReverse);
            b.add_edge(extra.0, extra.1, extra.2);
            assert!(b.try_build().is_err());
        }
    }
}
