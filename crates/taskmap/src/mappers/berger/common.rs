//! Pieces shared by the mappers of Berger et al. 2014 ([`crate::mappers::berger::gtwp`],
//! [`crate::mappers::berger::subgraph`], [`crate::mappers::berger::pnp`]): PE loads against per-resource
//! bounds, a local distance table, the distance-affinity weights `1/(2·d+1)`, the neighbour
//! PEs of a PE, and breadth-first orders of the task graph.
//!
//! Reference: K.-E. Berger, F. Galea, B. Le Cun, R. Sirdey, "Fast generation of large task
//! network mappings", IPDPSW 2014.

use crate::multilevel::DistTable;
use taskmap_arch::{Architecture, PeId};
use taskmap_graph::TaskGraph;

use crate::error::Error;
use crate::problem::Problem;

/// Loads of every PE for every resource (vertex-weight constraint), against the bounds of
/// [`Problem::max_loads`] (the hard capacities when the problem has them).
#[derive(Clone, Debug)]
pub struct Loads {
    /// Number of resources.
    pub ncon: usize,
    /// `bound[pe * ncon + r]`.
    pub bound: Vec<u64>,
    /// `load[pe * ncon + r]`.
    pub load: Vec<u64>,
}

impl Loads {
    /// Empty loads for `problem`; an error when the total weight of a resource exceeds the
    /// total capacity (no mapping can exist).
    pub fn new(problem: &Problem, alg: &str) -> Result<Self, Error> {
        let g = &problem.graph;
        let ncon = g.ncon();
        let k = problem.arch.pe_count() as usize;
        let mut bound = vec![0u64; k * ncon];
        for r in 0..ncon {
            let b = problem.max_loads(r);
            let total_cap: u128 = b.iter().map(|&x| x as u128).sum();
            let total = g.total_vertex_weight(r) as u128;
            if total > total_cap {
                return Err(Error::Mismatch(format!(
                    "{}: infeasible: the tasks need {} units of resource {} but the {} PEs offer only {} in total",
                    alg, total, r, k, total_cap
                )));
            }
            for p in 0..k {
                bound[p * ncon + r] = b[p];
            }
        }
        Ok(Self {
            ncon,
            load: vec![0; k * ncon],
            bound,
        })
    }

    /// Whether a task of weights `w` fits on `pe`.
    #[inline]
    pub fn fits(&self, pe: u32, w: &[u64]) -> bool {
        let o = pe as usize * self.ncon;
        (0..self.ncon).all(|r| self.load[o + r] + w[r] <= self.bound[o + r])
    }

    /// Adds weights `w` to `pe`.
    #[inline]
    pub fn add(&mut self, pe: u32, w: &[u64]) {
        let o = pe as usize * self.ncon;
        for r in 0..self.ncon {
            self.load[o + r] += w[r];
        }
    }

    /// Remaining capacity of `pe` for resource `r` (0 when over).
    #[inline]
    pub fn remaining(&self, pe: u32, r: usize) -> u64 {
        let o = pe as usize * self.ncon + r;
        self.bound[o].saturating_sub(self.load[o])
    }

    /// The error for a task that fits on no PE.
    pub fn stuck(&self, alg: &str, task: u32, w: &[u64], placed: usize, n: usize) -> Error {
        let k = self.load.len() / self.ncon.max(1);
        let best: Vec<u64> = (0..self.ncon)
            .map(|r| {
                (0..k as u32)
                    .map(|p| self.remaining(p, r))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        // With several resources the largest rooms may lie on different PEs.
        let room = if self.ncon > 1 {
            format!("largest remaining capacity per resource {best:?}, each the most over all PEs, not necessarily on one PE")
        } else {
            format!("largest remaining capacity {best:?}")
        };
        Error::Mismatch(format!(
            "{}: stuck after placing {} of {} tasks: task {} (weights {:?}) fits on no PE ({}); the greedy cannot pack these capacities, give more room",
            alg, placed, n, task, w, room
        ))
    }
}

/// The most PEs the mappers that read distances through [`BergerDist`] accept: its
/// neighbour lists and P&P's traffic matrix hold up to k² entries (a complete target of
/// 32,768 PEs would need 4 GiB), and building it takes O(k²) distance reads.
pub const MAX_BERGER_PES: u32 = 4096;

/// An error naming `alg` when the target has more than [`MAX_BERGER_PES`] PEs.
pub fn check_pes(problem: &Problem, alg: &str) -> Result<(), Error> {
    let k = problem.arch.pe_count();
    if k > MAX_BERGER_PES {
        return Err(Error::Config(format!(
            "{alg}: the target {} has {k} PEs; this heuristic builds tables of k² entries and handles at most {MAX_BERGER_PES} PEs (the multilevel mapper has no such limit)",
            problem.arch.spec()
        )));
    }
    Ok(())
}

/// Distances between PEs read once into a table (k ≤ 4096), with the distance-affinity
/// weight `1/(2·d+1)` by distance and the neighbour PEs of every PE.
#[derive(Debug)]
pub struct BergerDist<'a> {
    dist: DistTable<'a>,
    inv: Vec<f64>,
    nbr_xadj: Vec<usize>,
    nbr: Vec<u32>,
    /// Per PE: `2·dmin+1` and `2·(dmin+1)+1` (`dmin` its smallest distance to another PE),
    /// whose inverses are the largest weights towards PEs other than itself, and towards
    /// PEs other than itself and its neighbours.
    bound_den: Vec<[f64; 2]>,
    /// `1 / min_pe (2·dmin+1)`.
    inv_min_den: f64,
}

impl<'a> BergerDist<'a> {
    /// Builds the table (k rows of distances) and the neighbour lists: O(k²).
    pub fn new(arch: &'a dyn Architecture) -> Self {
        let k = arch.pe_count();
        let dist = DistTable::new(arch);
        let mut xadj = Vec::with_capacity(k as usize + 1);
        let mut adj = Vec::new();
        let mut bound_den = Vec::with_capacity(k as usize);
        xadj.push(0);
        let mut row = vec![0u64; k as usize];
        let mut dmax = 0u64;
        for a in 0..k {
            // One pass over row a (of the table, or of the architecture when there is no
            // table): the smallest distance to another PE and the PEs at it, by id.
            let start = adj.len();
            let mut dmin: Option<u64> = None;
            let mut scan = |b: u32, d: u64| {
                dmax = dmax.max(d);
                if b == a || dmin.is_some_and(|m| d > m) {
                    return;
                }
                if dmin.is_none_or(|m| d < m) {
                    dmin = Some(d);
                    adj.truncate(start);
                }
                adj.push(b);
            };
            match dist.row(a) {
                Some(r) => (0..k).zip(r).for_each(|(b, &d)| scan(b, u64::from(d))),
                None => {
                    arch.distances_from(PeId(a), &mut row);
                    (0..k).zip(&row).for_each(|(b, &d)| scan(b, d));
                }
            }
            let dmin = dmin.unwrap_or(0);
            xadj.push(adj.len());
            bound_den.push([2.0 * dmin as f64 + 1.0, 2.0 * (dmin + 1) as f64 + 1.0]);
        }
        // Without a table, distances can be too large for a table of weights.
        let inv_len = if dist.row(0).is_some() {
            dmax as usize + 1
        } else {
            0
        };
        let inv = (0..inv_len.min(1 << 20))
            .map(|d| 1.0 / (2.0 * d as f64 + 1.0))
            .collect();
        let min_den = bound_den.iter().map(|d| d[0]).fold(f64::INFINITY, f64::min);
        Self {
            dist,
            inv,
            nbr_xadj: xadj,
            nbr: adj,
            bound_den,
            inv_min_den: if min_den.is_finite() {
                1.0 / min_den
            } else {
                1.0
            },
        }
    }

    /// `[2·dmin+1, 2·(dmin+1)+1]` for `pe`, `dmin` its smallest distance to another PE: the
    /// affinity weight of any other PE towards `pe` is at most the inverse of the first,
    /// and of any PE that is neither `pe` nor one of its neighbours at most the inverse of
    /// the second (divisions, not multiplications by inverses, so the bounds round as
    /// they always did).
    #[inline]
    pub fn bound_denominators(&self, pe: u32) -> [f64; 2] {
        self.bound_den[pe as usize]
    }

    /// `1 / min_pe (2·dmin+1)`: the largest affinity weight between two different PEs
    /// (up to rounding).
    #[inline]
    pub fn inv_min_denominator(&self) -> f64 {
        self.inv_min_den
    }

    /// Number of PEs.
    #[inline]
    pub fn k(&self) -> u32 {
        self.dist.k()
    }

    /// Distance between `a` and `b`.
    #[inline]
    pub fn get(&self, a: u32, b: u32) -> u64 {
        self.dist.get(a, b)
    }

    /// The distance-affinity weight `1/(2·d(a,b)+1)`.
    #[inline]
    pub fn affinity_weight(&self, a: u32, b: u32) -> f64 {
        let d = self.get(a, b) as usize;
        match self.inv.get(d) {
            Some(&x) => x,
            None => 1.0 / (2.0 * d as f64 + 1.0),
        }
    }

    /// The neighbours of `pe`: the other PEs at the smallest distance from it (distance 1 on
    /// meshes and tori), by increasing id.
    #[inline]
    pub fn neighbours(&self, pe: u32) -> &[u32] {
        &self.nbr[self.nbr_xadj[pe as usize]..self.nbr_xadj[pe as usize + 1]]
    }
}

/// Breadth-first order of all tasks from `start`; when a component is exhausted the
/// traversal continues from the lowest-numbered unvisited task. Neighbours are visited in
/// CSR order. O(n + m).
pub fn bft_order(g: &TaskGraph, start: u32) -> Vec<u32> {
    let n = g.num_tasks();
    if n == 0 {
        return Vec::new();
    }
    let (xadj, adjncy, _, _) = g.csr();
    let mut seen = vec![false; n];
    // One spare slot: every neighbour is written at the end and kept only when unseen (no
    // branch to mispredict), so a write may land one past the last task.
    let mut order = vec![0u32; n + 1];
    let mut len = 0usize;
    let mut head = 0usize;
    let mut next_root = 0usize;
    let mut root = start as usize;
    loop {
        if !seen[root] {
            seen[root] = true;
            order[len] = root as u32;
            len += 1;
            while head < len {
                let u = order[head] as usize;
                head += 1;
                for &v in &adjncy[xadj[u]..xadj[u + 1]] {
                    let unseen = !seen[v as usize];
                    order[len] = v;
                    len += usize::from(unseen);
                    seen[v as usize] = true;
                }
            }
        }
        while next_root < n && seen[next_root] {
            next_root += 1;
        }
        if next_root >= n {
            break;
        }
        root = next_root;
    }
    order.truncate(n);
    order
}

/// All tasks by increasing degree, ties by id: a counting sort, O(n + largest degree).
pub fn tasks_by_degree(g: &TaskGraph) -> Vec<u32> {
    let xadj = g.csr().0;
    let n = g.num_tasks();
    let degree = |t: usize| xadj[t + 1] - xadj[t];
    // start[d + 1]: number of tasks of degree d, then (prefix sums) the first position of
    // the tasks of degree d + 1.
    let mut start: Vec<u32> = Vec::new();
    for t in 0..n {
        let d = degree(t);
        if d + 2 > start.len() {
            start.resize(d + 2, 0);
        }
        start[d + 1] += 1;
    }
    for d in 1..start.len() {
        start[d] += start[d - 1];
    }
    let mut order = vec![0u32; n];
    for t in 0..n {
        let slot = &mut start[degree(t)];
        order[*slot as usize] = t as u32;
        *slot += 1;
    }
    order
}

/// Sum of the edge weights of task `u`.
#[inline]
pub fn weighted_degree(g: &TaskGraph, u: u32) -> u64 {
    g.edge_weights(u).iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With one resource the message gives the largest room; with several it says that
    /// the largest rooms per resource may lie on different PEs.
    #[test]
    fn stuck_names_the_largest_rooms() {
        for ncon in [1usize, 2] {
            let mut b = taskmap_graph::GraphBuilder::new(3, ncon);
            b.add_edge(0, 1, 1);
            let g = b.build();
            let arch = taskmap_arch::parse_arch("complete:2").unwrap();
            let mut p = Problem::new(g, arch);
            p.capacities = Some(crate::problem::Capacities::uniform(2, &vec![3; ncon]));
            let mut loads = Loads::new(&p, "gtwp").unwrap();
            loads.add(0, &vec![2; ncon]);
            let msg = loads.stuck("gtwp", 2, &vec![2; ncon], 1, 3).to_string();
            let rooms = if ncon == 1 { "[3]" } else { "[3, 3]" };
            assert!(msg.contains(rooms), "{msg}");
            assert_eq!(msg.contains("not necessarily on one PE"), ncon > 1, "{msg}");
        }
    }

    /// The branch-free traversal equals a textbook breadth-first search with a queue,
    /// restarted from the lowest unvisited task, on graphs with several components.
    #[test]
    fn bft_order_equals_a_queue_bfs() {
        for seed in 0..6u64 {
            // A sparse random graph has isolated tasks and several components.
            let g = taskmap_graph::gen::random_graph(400, 0.5 + seed as f64, seed);
            let n = g.num_tasks();
            let start = (seed * 97 % n as u64) as u32;
            let mut seen = vec![false; n];
            let mut want = Vec::new();
            for root in std::iter::once(start as usize).chain(0..n) {
                if seen[root] {
                    continue;
                }
                seen[root] = true;
                let mut queue = std::collections::VecDeque::from([root as u32]);
                while let Some(u) = queue.pop_front() {
                    want.push(u);
                    for &v in g.neighbors(u) {
                        if !seen[v as usize] {
                            seen[v as usize] = true;
                            queue.push_back(v);
                        }
                    }
                }
            }
            assert_eq!(bft_order(&g, start), want, "seed {seed}");
        }
        assert!(bft_order(&taskmap_graph::gen::grid(&[0], false), 0).is_empty());
    }

    /// Neighbour lists and bound denominators equal those found with the architecture's
    /// distances, with a distance table and without one (distances above `u32::MAX`).
    #[test]
    fn berger_dist_with_and_without_a_table() {
        for spec in [
            "torus:6x6",
            "mesh:3x5",
            "tree:2:3:2/1:10:100",
            "tree:2:3:2/7:9000000000:20000000000",
        ] {
            let a = taskmap_arch::parse_arch(spec).unwrap();
            let d = BergerDist::new(a.as_ref());
            let k = a.pe_count();
            for p in 0..k {
                let dist = |q: u32| a.distance(PeId(p), PeId(q));
                let dmin = (0..k).filter(|&q| q != p).map(dist).min().unwrap_or(0);
                let want: Vec<u32> = (0..k).filter(|&q| q != p && dist(q) == dmin).collect();
                assert_eq!(d.neighbours(p), &want[..], "{spec}: neighbours of {p}");
                let den = d.bound_denominators(p);
                assert_eq!(
                    den,
                    [2.0 * dmin as f64 + 1.0, 2.0 * (dmin + 1) as f64 + 1.0]
                );
                for q in 0..k {
                    assert_eq!(d.get(p, q), dist(q), "{spec}: d({p}, {q})");
                }
            }
        }
    }

    /// The counting sort gives the order of a comparison sort by (degree, id).
    #[test]
    fn tasks_by_degree_equals_a_sort() {
        for seed in 0..5 {
            let g =
                taskmap_graph::gen::random_graph(300 + 50 * seed as u32, 3.0 + seed as f64, seed);
            let mut want: Vec<u32> = (0..g.num_tasks() as u32).collect();
            want.sort_by_key(|&t| (g.degree(t), t));
            assert_eq!(tasks_by_degree(&g), want);
        }
        let empty = taskmap_graph::gen::grid(&[0], false);
        assert!(tasks_by_degree(&empty).is_empty());
    }
}
