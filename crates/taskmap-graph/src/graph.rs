//! The task graph: a symmetric CSR graph with `u32` task ids, `u64` edge weights and
//! `ncon >= 1` vertex weights per task.

use crate::error::GraphError;

/// A task id. `#[repr(transparent)]` so that slices of ids can be reinterpreted cheaply.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TaskId(pub u32);

impl TaskId {
    /// The id as an index.
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

/// An undirected task interaction graph in compressed sparse row form.
///
/// Every undirected edge `{u, v}` is stored twice, once in the row of `u` and once in the
/// row of `v`, with the same weight. There are no self-loops and no duplicate edges.
/// Vertex weights are stored row-major: the `ncon` weights of task `u` are
/// `vertex_weight[u * ncon .. (u + 1) * ncon]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskGraph {
    xadj: Vec<usize>,
    adjncy: Vec<u32>,
    edge_weight: Vec<u64>,
    vertex_weight: Vec<u64>,
    ncon: usize,
    /// Exact sums, computed once: of every vertex weight per constraint, and of the
    /// adjacency's edge weights (each undirected edge counted twice).
    vertex_weight_sums: Vec<u128>,
    adjacency_weight_sum: u128,
    /// Whether some edge weight differs from 1, computed once.
    weighted_edges: bool,
}

impl TaskGraph {
    /// Builds a graph from CSR arrays and checks it: `xadj` monotone with `xadj[0] == 0`,
    /// ids in range, no self-loops, no duplicate edges, symmetric adjacency with equal
    /// weights both ways, `vertex_weight.len() == n * ncon`, `ncon >= 1`.
    pub fn from_csr(
        xadj: Vec<usize>,
        adjncy: Vec<u32>,
        edge_weight: Vec<u64>,
        vertex_weight: Vec<u64>,
        ncon: usize,
    ) -> Result<Self, GraphError> {
        let g = Self::from_csr_unchecked(xadj, adjncy, edge_weight, vertex_weight, ncon);
        g.validate()?;
        Ok(g)
    }

    /// Builds a graph from CSR arrays without checking them. The caller guarantees the
    /// invariants listed at [`TaskGraph::from_csr`]; generators use this.
    pub fn from_csr_unchecked(
        xadj: Vec<usize>,
        adjncy: Vec<u32>,
        edge_weight: Vec<u64>,
        vertex_weight: Vec<u64>,
        ncon: usize,
    ) -> Self {
        debug_assert_eq!(adjncy.len(), edge_weight.len());
        debug_assert_eq!(xadj.last().copied().unwrap_or(0), adjncy.len());
        let vertex_weight_sums = (0..ncon)
            .map(|c| wide_sum(vertex_weight.iter().skip(c).step_by(ncon).copied()))
            .collect();
        let adjacency_weight_sum = wide_sum(edge_weight.iter().copied());
        let weighted_edges = edge_weight.iter().any(|&w| w != 1);
        Self {
            xadj,
            adjncy,
            edge_weight,
            vertex_weight,
            ncon,
            vertex_weight_sums,
            adjacency_weight_sum,
            weighted_edges,
        }
    }

    /// Checks every invariant of the CSR form. Errors name the task (1-based, as in the
    /// files) that breaks it.
    pub fn validate(&self) -> Result<(), GraphError> {
        let n = self.xadj.len().saturating_sub(1);
        if self.xadj.is_empty() || self.xadj[0] != 0 {
            return Err(GraphError::invalid("xadj must start with 0"));
        }
        if self.ncon == 0 {
            return Err(GraphError::invalid("ncon must be at least 1"));
        }
        if self.vertex_weight.len() != n * self.ncon {
            return Err(GraphError::invalid(format!(
                "expected {} vertex weights ({} tasks x ncon {}), found {}",
                n * self.ncon,
                n,
                self.ncon,
                self.vertex_weight.len()
            )));
        }
        if *self.xadj.last().unwrap() != self.adjncy.len()
            || self.adjncy.len() != self.edge_weight.len()
        {
            return Err(GraphError::invalid(
                "xadj, adjncy and edge_weight lengths disagree",
            ));
        }
        if n > u32::MAX as usize {
            return Err(GraphError::invalid("more than 2^32-1 tasks"));
        }
        // Monotone offsets first, so that every row lies within adjncy.
        if let Some(u) = (0..n).find(|&u| self.xadj[u + 1] < self.xadj[u]) {
            return Err(GraphError::invalid(format!(
                "xadj decreases at task {}",
                u + 1
            )));
        }
        // Position marker: last row in which each neighbour was seen.
        let mut seen = vec![u32::MAX; n];
        for u in 0..n {
            for e in self.xadj[u]..self.xadj[u + 1] {
                let v = self.adjncy[e] as usize;
                if v >= n {
                    return Err(GraphError::invalid(format!(
                        "task {} has neighbour {} out of range 1..={}",
                        u + 1,
                        v + 1,
                        n
                    )));
                }
                if v == u {
                    return Err(GraphError::invalid(format!(
                        "task {} has a self-loop",
                        u + 1
                    )));
                }
                if seen[v] == u as u32 {
                    return Err(GraphError::invalid(format!(
                        "task {} lists neighbour {} twice",
                        u + 1,
                        v + 1
                    )));
                }
                seen[v] = u as u32;
            }
        }
        // Symmetry in O(m): bucket every directed edge u->v by its head v (the transpose),
        // then compare row v with the transposed row v using a marker array.
        let mut tcount = vec![0usize; n + 1];
        for &v in &self.adjncy {
            tcount[v as usize + 1] += 1;
        }
        for v in 0..n {
            tcount[v + 1] += tcount[v];
        }
        let mut tfill = tcount.clone();
        let mut tsrc = vec![0u32; self.adjncy.len()];
        let mut tw = vec![0u64; self.adjncy.len()];
        for u in 0..n {
            for e in self.xadj[u]..self.xadj[u + 1] {
                let v = self.adjncy[e] as usize;
                tsrc[tfill[v]] = u as u32;
                tw[tfill[v]] = self.edge_weight[e];
                tfill[v] += 1;
            }
        }
        let mut mark: Vec<Option<u64>> = vec![None; n];
        for v in 0..n {
            for e in self.xadj[v]..self.xadj[v + 1] {
                mark[self.adjncy[e] as usize] = Some(self.edge_weight[e]);
            }
            for t in tcount[v]..tcount[v + 1] {
                let u = tsrc[t] as usize;
                match mark[u] {
                    None => {
                        return Err(GraphError::invalid(format!(
                            "edge {}-{} has no reverse edge {}-{}",
                            u + 1,
                            v + 1,
                            v + 1,
                            u + 1
                        )))
                    }
                    Some(w) if w != tw[t] => {
                        return Err(GraphError::invalid(format!(
                            "edge {}-{} has weight {} but {}-{} has weight {}",
                            u + 1,
                            v + 1,
                            tw[t],
                            v + 1,
                            u + 1,
                            w
                        )))
                    }
                    _ => {}
                }
            }
            if tcount[v + 1] - tcount[v] != self.xadj[v + 1] - self.xadj[v] {
                // Row v has a neighbour u that does not list v.
                for t in tcount[v]..tcount[v + 1] {
                    mark[tsrc[t] as usize] = None;
                }
                for e in self.xadj[v]..self.xadj[v + 1] {
                    let u = self.adjncy[e] as usize;
                    if mark[u].is_some() {
                        return Err(GraphError::invalid(format!(
                            "edge {}-{} has no reverse edge {}-{}",
                            v + 1,
                            u + 1,
                            u + 1,
                            v + 1
                        )));
                    }
                }
            }
            for e in self.xadj[v]..self.xadj[v + 1] {
                mark[self.adjncy[e] as usize] = None;
            }
        }
        Ok(())
    }

    /// Number of tasks.
    #[inline]
    pub fn num_tasks(&self) -> usize {
        self.xadj.len() - 1
    }

    /// Number of undirected edges.
    #[inline]
    pub fn num_edges(&self) -> usize {
        self.adjncy.len() / 2
    }

    /// Number of vertex weights per task.
    #[inline]
    pub fn ncon(&self) -> usize {
        self.ncon
    }

    /// Neighbours of task `u`.
    #[inline]
    pub fn neighbors(&self, u: u32) -> &[u32] {
        let u = u as usize;
        &self.adjncy[self.xadj[u]..self.xadj[u + 1]]
    }

    /// Weights of the edges of task `u`, parallel to [`TaskGraph::neighbors`].
    #[inline]
    pub fn edge_weights(&self, u: u32) -> &[u64] {
        let u = u as usize;
        &self.edge_weight[self.xadj[u]..self.xadj[u + 1]]
    }

    /// Degree of task `u`.
    #[inline]
    pub fn degree(&self, u: u32) -> usize {
        let u = u as usize;
        self.xadj[u + 1] - self.xadj[u]
    }

    /// The mean degree seen from an edge end, `Σ deg² / Σ deg` (0 without edges): the
    /// mean degree itself on a regular graph, far above it on a power-law graph, whose
    /// edges mostly end at hubs. O(n).
    pub fn edge_mean_degree(&self) -> f64 {
        let ends = self.adjncy.len();
        if ends == 0 {
            return 0.0;
        }
        let sq: f64 = self
            .xadj
            .windows(2)
            .map(|w| ((w[1] - w[0]) as f64).powi(2))
            .sum();
        sq / ends as f64
    }

    /// Whether the graph has hubs: [`TaskGraph::edge_mean_degree`] at least 32 and at
    /// least twice the mean degree (an R-MAT graph of mean degree 16: 784; a
    /// Barabási-Albert graph of mean degree 16: 54; a random geometric graph of mean
    /// degree 6: 7.0).
    pub fn has_hubs(&self) -> bool {
        let n = self.num_tasks().max(1) as f64;
        let e = self.edge_mean_degree();
        e >= 32.0 && e >= 2.0 * self.adjncy.len() as f64 / n
    }

    /// The `ncon` vertex weights of task `u`.
    #[inline]
    pub fn vertex_weights(&self, u: u32) -> &[u64] {
        let u = u as usize;
        &self.vertex_weight[u * self.ncon..(u + 1) * self.ncon]
    }

    /// Vertex weight `c` of task `u`.
    #[inline]
    pub fn vertex_weight(&self, u: u32, c: usize) -> u64 {
        self.vertex_weight[u as usize * self.ncon + c]
    }

    /// Sum of vertex weight `c` over all tasks (`u64::MAX` when the sum does not fit; see
    /// [`TaskGraph::vertex_weight_sum`]). O(1): summed at construction.
    pub fn total_vertex_weight(&self, c: usize) -> u64 {
        u64::try_from(self.vertex_weight_sum(c)).unwrap_or(u64::MAX)
    }

    /// Sum of the weights of all undirected edges, each edge once (`u64::MAX` when the sum
    /// does not fit; see [`TaskGraph::edge_weight_sum`]). O(1).
    pub fn total_edge_weight(&self) -> u64 {
        u64::try_from(self.edge_weight_sum()).unwrap_or(u64::MAX)
    }

    /// The exact sum of vertex weight `c` over all tasks.
    #[inline]
    pub fn vertex_weight_sum(&self, c: usize) -> u128 {
        self.vertex_weight_sums[c]
    }

    /// The exact sum of the weights of all undirected edges, each edge once.
    #[inline]
    pub fn edge_weight_sum(&self) -> u128 {
        self.adjacency_weight_sum / 2
    }

    /// Whether any edge weight differs from 1. O(1): found at construction.
    #[inline]
    pub fn has_edge_weights(&self) -> bool {
        self.weighted_edges
    }

    /// Whether any vertex weight differs from 1 (or ncon > 1).
    pub fn has_vertex_weights(&self) -> bool {
        self.ncon > 1 || self.vertex_weight.iter().any(|&w| w != 1)
    }

    /// The raw CSR arrays `(xadj, adjncy, edge_weight, vertex_weight)`.
    pub fn csr(&self) -> (&[usize], &[u32], &[u64], &[u64]) {
        (
            &self.xadj,
            &self.adjncy,
            &self.edge_weight,
            &self.vertex_weight,
        )
    }

    /// Returns the same graph with every row sorted by neighbour id (weights follow their
    /// neighbours). Two graphs with the same edges compare equal after this. O(m log d).
    pub fn with_sorted_neighbors(mut self) -> Self {
        let mut row: Vec<(u32, u64)> = Vec::new();
        for u in 0..self.num_tasks() {
            let (s, t) = (self.xadj[u], self.xadj[u + 1]);
            row.clear();
            row.extend(
                self.adjncy[s..t]
                    .iter()
                    .copied()
                    .zip(self.edge_weight[s..t].iter().copied()),
            );
            row.sort_unstable();
            for (k, &(v, w)) in row.iter().enumerate() {
                self.adjncy[s + k] = v;
                self.edge_weight[s + k] = w;
            }
        }
        self
    }

    /// Consumes the graph and returns its CSR arrays
    /// `(xadj, adjncy, edge_weight, vertex_weight, ncon)`.
    pub fn into_csr(self) -> (Vec<usize>, Vec<u32>, Vec<u64>, Vec<u64>, usize) {
        (
            self.xadj,
            self.adjncy,
            self.edge_weight,
            self.vertex_weight,
            self.ncon,
        )
    }

    /// The subgraph induced by `tasks` (distinct ids): task `i` of the result is
    /// `tasks[i]`, with its vertex weights and the edges to the other tasks of the list,
    /// in the order of its row here. `local` is scratch of one entry per task of this
    /// graph, all `u32::MAX` on entry and on return. O(Σ deg(tasks)).
    pub fn induced(&self, tasks: &[u32], local: &mut [u32]) -> TaskGraph {
        assert_eq!(local.len(), self.num_tasks());
        for (i, &t) in tasks.iter().enumerate() {
            debug_assert_eq!(local[t as usize], u32::MAX, "task {t} listed twice");
            local[t as usize] = i as u32;
        }
        let ncon = self.ncon;
        let mut xadj = Vec::with_capacity(tasks.len() + 1);
        xadj.push(0);
        let mut adjncy = Vec::new();
        let mut edge_weight = Vec::new();
        let mut vertex_weight = Vec::with_capacity(tasks.len() * ncon);
        for &t in tasks {
            let (s, e) = (self.xadj[t as usize], self.xadj[t as usize + 1]);
            for (&v, &w) in self.adjncy[s..e].iter().zip(&self.edge_weight[s..e]) {
                let lv = local[v as usize];
                if lv != u32::MAX {
                    adjncy.push(lv);
                    edge_weight.push(w);
                }
            }
            xadj.push(adjncy.len());
            vertex_weight.extend_from_slice(self.vertex_weights(t));
        }
        for &t in tasks {
            local[t as usize] = u32::MAX;
        }
        TaskGraph::from_csr_unchecked(xadj, adjncy, edge_weight, vertex_weight, ncon)
    }

    /// Iterates over every undirected edge once as `(u, v, w)` with `u < v`.
    pub fn edges(&self) -> impl Iterator<Item = (u32, u32, u64)> + '_ {
        (0..self.num_tasks() as u32).flat_map(move |u| {
            self.neighbors(u)
                .iter()
                .zip(self.edge_weights(u))
                .filter(move |(&v, _)| u < v)
                .map(move |(&v, &w)| (u, v, w))
        })
    }
}

/// The exact sum of `values`: 64-bit additions, the carries counted apart.
fn wide_sum(values: impl Iterator<Item = u64>) -> u128 {
    let (mut low, mut carries) = (0u64, 0u64);
    for w in values {
        let (s, o) = low.overflowing_add(w);
        low = s;
        carries += u64::from(o);
    }
    u128::from(carries) << 64 | u128::from(low)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offsets that run past the adjacency and come back are refused, not read past it.
    #[test]
    fn offsets_that_decrease_are_refused_before_any_row_is_read() {
        let e = TaskGraph::from_csr(vec![0, 5, 2, 2], vec![1, 0], vec![1, 1], vec![1; 3], 1)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "xadj decreases at task 2");
    }

    #[test]
    fn wide_sum_is_exact() {
        assert_eq!(wide_sum([].into_iter()), 0);
        assert_eq!(
            wide_sum([u64::MAX, u64::MAX, 2].into_iter()),
            2 * u128::from(u64::MAX) + 2
        );
        let v = [u64::MAX / 3; 10];
        assert_eq!(wide_sum(v.into_iter()), 10 * u128::from(u64::MAX / 3));
    }

    /// The sums kept at construction equal sums recomputed from the arrays, and survive
    /// sorting the rows.
    #[test]
    fn stored_sums_equal_recomputed_sums() {
        // A path of three tasks, two constraints, edge weights 5 and 2^63.
        let g = TaskGraph::from_csr(
            vec![0, 1, 3, 4],
            vec![1, 0, 2, 1],
            vec![5, 5, 1 << 63, 1 << 63],
            vec![1, u64::MAX, 2, u64::MAX, 3, 7],
            2,
        )
        .unwrap();
        assert_eq!(g.vertex_weight_sum(0), 6);
        assert_eq!(g.vertex_weight_sum(1), 2 * u128::from(u64::MAX) + 7);
        assert_eq!(g.total_vertex_weight(0), 6);
        assert_eq!(g.total_vertex_weight(1), u64::MAX, "saturates");
        assert_eq!(g.edge_weight_sum(), 5 + (1u128 << 63));
        assert_eq!(g.total_edge_weight(), 5 + (1u64 << 63));
        let g = crate::gen::random_graph(500, 6.0, 3);
        let (_, _, ew, vw) = g.csr();
        assert_eq!(
            g.edge_weight_sum(),
            ew.iter().map(|&w| u128::from(w)).sum::<u128>() / 2
        );
        assert_eq!(g.total_vertex_weight(0), vw.iter().sum::<u64>());
        assert_eq!(g.has_edge_weights(), ew.iter().any(|&w| w != 1));
        let sorted = g.clone().with_sorted_neighbors();
        assert_eq!(sorted.edge_weight_sum(), g.edge_weight_sum());
        let unit = crate::gen::grid(&[4, 5], false);
        assert!(!unit.has_edge_weights());
        assert_eq!(unit.edge_weight_sum(), 31);
    }

    /// An induced subgraph holds exactly the edges between listed tasks, with their
    /// weights, the listed tasks' vertex weights, and passes the CSR checks; the scratch
    /// comes back clean.
    #[test]
    fn induced_subgraph_equals_the_filtered_edges() {
        let base = crate::gen::random_graph(300, 5.0, 7);
        let (xadj, adjncy, _, _) = base.csr();
        let n = base.num_tasks();
        // Edge weights from the pair, two vertex weights per task.
        let ew: Vec<u64> = (0..n)
            .flat_map(|u| {
                adjncy[xadj[u]..xadj[u + 1]]
                    .iter()
                    .map(move |&v| (u, v as usize))
            })
            .map(|(u, v)| 1 + ((u.min(v) * 31 + u.max(v) * 7) % 11) as u64)
            .collect();
        let vw: Vec<u64> = (0..2 * n as u64).map(|i| 1 + i % 5).collect();
        let g = TaskGraph::from_csr(xadj.to_vec(), adjncy.to_vec(), ew, vw, 2).unwrap();
        let tasks: Vec<u32> = (0..n as u32).rev().filter(|t| t % 3 != 1).collect();
        let mut local = vec![u32::MAX; n];
        let sub = g.induced(&tasks, &mut local);
        assert!(local.iter().all(|&x| x == u32::MAX));
        sub.validate().unwrap();
        assert_eq!(sub.num_tasks(), tasks.len());
        let mut want: Vec<(u32, u32, u64)> = g
            .edges()
            .filter(|&(u, v, _)| u % 3 != 1 && v % 3 != 1)
            .map(|(u, v, w)| (u.min(v), u.max(v), w))
            .collect();
        let mut got: Vec<(u32, u32, u64)> = sub
            .edges()
            .map(|(a, b, w)| {
                let (u, v) = (tasks[a as usize], tasks[b as usize]);
                (u.min(v), u.max(v), w)
            })
            .collect();
        want.sort_unstable();
        got.sort_unstable();
        assert!(!want.is_empty());
        assert_eq!(got, want);
        for (i, &t) in tasks.iter().enumerate() {
            assert_eq!(sub.vertex_weights(i as u32), g.vertex_weights(t));
        }
    }
}
