//! Coarsening: group tasks into clusters of bounded weight and contract them.
//!
//! * [`label_propagation_clusters`]: size-constrained label propagation (Meyerhenke,
//!   Sanders & Schulz 2014; KaMinPar): every task joins the neighbouring cluster it is most
//!   strongly connected to, if the cluster stays under the weight limit. O(rounds · m).
//! * [`heavy_edge_matching`]: tasks visited in random order, or in input order
//!   ([`Coarsening::OrderedMatching`]), are matched with the unmatched neighbour of largest
//!   `w(uv)² / (c(u)·c(v))` (Karypis & Kumar 1998; the rating of Holtgrewe, Sanders &
//!   Schulz 2010). O(m).
//! * [`contract`]: builds the coarse graph (weights summed, parallel edges merged,
//!   internal edges dropped). O(n + m).

pub mod hierarchy;
pub mod probe;
mod rating;
pub mod two_hop;

use rand::seq::SliceRandom;
use rand::Rng;
use taskmap_graph::TaskGraph;

use crate::problem::FREE;
use rating::RatingMap;

/// How to group tasks (serialised by its name in specs: `lp`, `hem`, `ordered`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Coarsening {
    /// Size-constrained label propagation clustering.
    #[serde(rename = "lp")]
    LabelPropagation,
    /// Heavy-edge matching (at most two tasks per cluster per level), tasks in random order.
    #[serde(rename = "hem")]
    HeavyEdgeMatching,
    /// Heavy-edge matching with tasks visited in input order and ties going to the first
    /// neighbour in CSR order (see [`heavy_edge_matching`]).
    #[serde(rename = "ordered")]
    OrderedMatching,
}

/// Every scheme by its name in specs.
const COARSENING_NAMES: [(&str, Coarsening); 3] = [
    ("lp", Coarsening::LabelPropagation),
    ("hem", Coarsening::HeavyEdgeMatching),
    ("ordered", Coarsening::OrderedMatching),
];

impl Coarsening {
    /// The scheme named `lp`, `hem` or `ordered`.
    pub fn from_name(name: &str) -> Option<Self> {
        COARSENING_NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, c)| c)
    }

    /// The scheme's name in specs (`lp`, `hem`, `ordered`).
    pub fn name(self) -> &'static str {
        COARSENING_NAMES
            .iter()
            .find(|&&(_, c)| c == self)
            .map_or("", |&(n, _)| n)
    }
}

fn fits(graph: &TaskGraph, cw: &[u64], cluster: usize, v: u32, max: &[u64]) -> bool {
    let ncon = graph.ncon();
    graph
        .vertex_weights(v)
        .iter()
        .enumerate()
        .all(|(c, &w)| cw[cluster * ncon + c] + w <= max[c])
}

/// Vertices per chunk of [`local_random_order`].
pub const ORDER_CHUNK: usize = 256;

/// A random visit order with locality: the ids are cut into chunks of [`ORDER_CHUNK`]
/// consecutive tasks, the chunks are visited in random order and the tasks of a chunk in
/// random order (the scheme of KaMinPar). On large graphs a fully random order is bound by
/// memory latency; this one keeps the rows and labels a chunk reads in cache.
pub fn local_random_order(n: usize, rng: &mut impl Rng) -> Vec<u32> {
    chunk_shuffled(n, |i| i as u32, rng)
}

/// Shuffles a set of task ids with the locality of [`local_random_order`]: sorted, cut
/// into chunks of [`ORDER_CHUNK`] entries, chunks in random order, each chunk shuffled.
/// O(len · log len).
pub fn local_shuffle(ids: &mut Vec<u32>, rng: &mut impl Rng) {
    ids.sort_unstable();
    let sorted = std::mem::take(ids);
    *ids = chunk_shuffled(sorted.len(), |i| sorted[i], rng);
}

/// The ids `id(0..len)` cut into chunks of [`ORDER_CHUNK`] consecutive positions, the
/// chunks in random order, each chunk shuffled.
fn chunk_shuffled(len: usize, id: impl Fn(usize) -> u32, rng: &mut impl Rng) -> Vec<u32> {
    let mut chunks: Vec<u32> = (0..len.div_ceil(ORDER_CHUNK) as u32).collect();
    chunks.shuffle(rng);
    let mut out = Vec::with_capacity(len);
    for &c in &chunks {
        let lo = c as usize * ORDER_CHUNK;
        let hi = (lo + ORDER_CHUNK).min(len);
        let start = out.len();
        out.extend((lo..hi).map(&id));
        out[start..].shuffle(rng);
    }
    out
}

/// A cheap hash for random tie-breaking.
#[inline]
fn mix(a: u64, b: u64) -> u64 {
    let mut x = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_add(0xD1B5_4A32_D192_ED03);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 32)
}

/// Clusters by size-constrained label propagation; returns `(cluster of each task,
/// number of clusters)`, clusters numbered `0..nc` in order of first appearance. Tasks
/// with `fixed[v] != FREE` stay alone in their cluster (`fixed` empty: none is fixed).
/// With `part` non-empty, a cluster holds tasks of one part only (the coarsening of a
/// V-cycle, which keeps a mapping: `part` is the PE of every task).
///
/// Each round visits the tasks in [`local_random_order`] by a sweep (`par::sweep`):
/// in a sub-round every task picks its preferred cluster from the clusters as they were
/// when the sub-round began, in parallel on `pool`; then the moves are applied in visit
/// order, each only if the cluster still has room, nobody left the target cluster and
/// nobody joined the task's own cluster in this sub-round (so a task joins a cluster that
/// still holds the neighbour it was rated by; as in sequential label propagation, only a
/// task that leaves can split a cluster). The same thread count gives the same clusters.
pub fn label_propagation_clusters(
    graph: &TaskGraph,
    max_weight: &[u64],
    rounds: usize,
    fixed: &[u32],
    part: &[u32],
    pool: Option<&rayon::ThreadPool>,
    rng: &mut impl Rng,
) -> (Vec<u32>, usize) {
    let n = graph.num_tasks();
    let ncon = graph.ncon();
    let order = local_random_order(n, rng);
    let mut lp = Clusters {
        cluster: (0..n as u32).collect(),
        cw: graph.csr().3.to_vec(),
        joined: vec![u32::MAX; n],
        left: vec![u32::MAX; n],
        stamp: 0,
        moved: 0,
    };
    for _ in 0..rounds {
        let view = LpView {
            graph,
            max_weight,
            fixed,
            part,
            salt: rng.gen(),
        };
        lp.moved = 0;
        crate::par::sweep(
            pool,
            &order,
            &mut lp,
            RatingMap::new,
            |lp, map, v| view.preferred(&lp.cluster, &lp.cw, v, map),
            |lp, moves| {
                for (v, c) in moves.into_iter().flatten() {
                    let own = lp.cluster[v as usize];
                    if lp.left[c as usize] == lp.stamp
                        || lp.joined[own as usize] == lp.stamp
                        || !fits(graph, &lp.cw, c as usize, v, max_weight)
                    {
                        continue;
                    }
                    for (i, &w) in graph.vertex_weights(v).iter().enumerate() {
                        lp.cw[own as usize * ncon + i] -= w;
                        lp.cw[c as usize * ncon + i] += w;
                    }
                    lp.cluster[v as usize] = c;
                    lp.joined[c as usize] = lp.stamp;
                    lp.left[own as usize] = lp.stamp;
                    lp.moved += 1;
                }
                lp.stamp += 1;
            },
        );
        if lp.moved < n / 100 + 1 {
            break;
        }
    }
    let mut live = vec![false; n];
    for &c in &lp.cluster {
        live[c as usize] = true;
    }
    if live.iter().filter(|&&l| l).count() as f64 > two_hop::TWO_HOP_MIN_SHRINK * n as f64 {
        let view = LpView {
            graph,
            max_weight,
            fixed,
            part,
            salt: 0,
        };
        two_hop::TwoHop.merge(&view, &mut lp.cluster, &mut lp.cw, pool);
    }
    compact(&mut lp.cluster)
}

/// The clustering of a label propagation under way.
struct Clusters {
    cluster: Vec<u32>,
    /// Weight of every cluster per constraint.
    cw: Vec<u64>,
    /// The sub-round in which a cluster last gained or lost a task.
    joined: Vec<u32>,
    left: Vec<u32>,
    /// The current sub-round.
    stamp: u32,
    /// Moves in the current round.
    moved: usize,
}

/// What a round of label propagation rates tasks by, besides the clusters.
pub(crate) struct LpView<'a> {
    graph: &'a TaskGraph,
    max_weight: &'a [u64],
    fixed: &'a [u32],
    part: &'a [u32],
    salt: u64,
}

impl LpView<'_> {
    fn pinned(&self, v: u32) -> bool {
        !self.fixed.is_empty() && self.fixed[v as usize] != FREE
    }

    /// The cluster `v` is most strongly connected to, whatever its weight, among those
    /// it may join (ties to the first neighbour's); `None` without one.
    fn strongest(&self, cluster: &[u32], v: u32, map: &mut RatingMap) -> Option<u32> {
        let g = self.graph;
        let own = cluster[v as usize];
        map.reserve(g.degree(v).min(cluster.len()));
        for (&u, &w) in g.neighbors(v).iter().zip(g.edge_weights(v)) {
            let c = cluster[u as usize];
            if c == own
                || self.pinned(c)
                || (!self.part.is_empty() && self.part[c as usize] != self.part[v as usize])
            {
                continue;
            }
            map.add(c, w.max(1));
        }
        let mut best: Option<(u32, u64)> = None;
        for (c, r) in map.entries() {
            if best.is_none_or(|(_, br)| r > br) {
                best = Some((c, r));
            }
        }
        map.clear();
        best.map(|(c, _)| c)
    }

    /// The cluster `v` prefers to its own, if any: the most strongly connected one that
    /// has room, ties broken at random (a fixed tie order makes clusters grow in one
    /// direction: long stripes on meshes); its own cluster wins a tie.
    fn preferred(
        &self,
        cluster: &[u32],
        cw: &[u64],
        v: u32,
        map: &mut RatingMap,
    ) -> Option<(u32, u32)> {
        if self.pinned(v) {
            return None;
        }
        let g = self.graph;
        let own = cluster[v as usize];
        let unit = !g.has_edge_weights();
        let weights = if unit { &[][..] } else { g.edge_weights(v) };
        map.reserve(g.degree(v).min(cluster.len()));
        for (i, &u) in g.neighbors(v).iter().enumerate() {
            let c = cluster[u as usize];
            // A pinned task's cluster (its own id) takes nobody. A cluster's label is the
            // id of a task of its part (every task that joins it has that part).
            if self.pinned(c)
                || (!self.part.is_empty() && self.part[c as usize] != self.part[v as usize])
            {
                continue;
            }
            // Unit edge weights are not read (on a large mesh that array is half of the
            // memory traffic).
            map.add(c, if unit { 1 } else { weights[i].max(1) });
        }
        let mut best = own;
        let mut best_r = map.get(own);
        let mut best_h = u64::MAX;
        for (c, r) in map.entries() {
            if c == own || r < best_r || (r == best_r && best == own) {
                continue;
            }
            let h = mix(self.salt ^ v as u64, c as u64);
            if (r > best_r || h < best_h) && fits(g, cw, c as usize, v, self.max_weight) {
                best = c;
                best_r = r;
                best_h = h;
            }
        }
        map.clear();
        (best != own).then_some((v, best))
    }
}

/// Heavy-edge matching; returns `(cluster of each task, number of clusters)`. Tasks with
/// `fixed[v] != FREE` stay unmatched (`fixed` empty: none is fixed); with `part`
/// non-empty, only tasks of the same part are matched.
///
/// `ordered = false`: tasks are visited in [`local_random_order`] and ties between equally
/// rated neighbours are broken at random. `ordered = true`: tasks are visited by increasing
/// id and a tie goes to the first neighbour in CSR order. On a graph numbered with
/// locality (a row-major grid, most meshes) the ordered matching pairs every task with
/// the same neighbour direction, and the coarse levels stay regular (2x1, 2x2, 4x2, ...
/// blocks, numbered row-major again), so the coarsest graph keeps the straight frontiers
/// of the input; random matchings and label propagation give clusters of ragged shape
/// whose frontiers recursive bipartitioning cannot straighten.
pub fn heavy_edge_matching(
    graph: &TaskGraph,
    max_weight: &[u64],
    fixed: &[u32],
    part: &[u32],
    ordered: bool,
    rng: &mut impl Rng,
) -> (Vec<u32>, usize) {
    let pinned = |v: u32| !fixed.is_empty() && fixed[v as usize] != FREE;
    let n = graph.num_tasks();
    let ncon = graph.ncon();
    const NONE: u32 = u32::MAX;
    let mut mate = vec![NONE; n];
    // The visit order: ids in random order, or (ordered) id i at position i.
    let order: Vec<u32> = if ordered {
        Vec::new()
    } else {
        local_random_order(n, rng)
    };
    // Drawn in both modes, so the random numbers that follow do not depend on the mode.
    let salt: u64 = rng.gen();
    let tw: Vec<f64> = (0..n as u32)
        .map(|v| graph.vertex_weights(v).iter().sum::<u64>().max(1) as f64)
        .collect();
    let total_w = |v: u32| tw[v as usize];
    for pos in 0..n {
        let v = if ordered { pos as u32 } else { order[pos] };
        if mate[v as usize] != NONE {
            continue;
        }
        if pinned(v) {
            mate[v as usize] = v;
            continue;
        }
        let mut best = NONE;
        let mut best_r = -1.0f64;
        for (&u, &w) in graph.neighbors(v).iter().zip(graph.edge_weights(v)) {
            if mate[u as usize] != NONE
                || u == v
                || pinned(u)
                || (!part.is_empty() && part[u as usize] != part[v as usize])
            {
                continue;
            }
            let ok = (0..ncon)
                .all(|c| graph.vertex_weight(v, c) + graph.vertex_weight(u, c) <= max_weight[c]);
            if !ok {
                continue;
            }
            let wf = w.max(1) as f64;
            let r = wf * wf / (total_w(v) * total_w(u));
            if r > best_r
                || (r == best_r
                    && !ordered
                    && mix(salt ^ v as u64, u as u64) < mix(salt ^ v as u64, best as u64))
            {
                best_r = r;
                best = u;
            }
        }
        if best != NONE {
            mate[v as usize] = best;
            mate[best as usize] = v;
        } else {
            mate[v as usize] = v;
        }
    }
    let mut cluster = vec![0u32; n];
    let mut nc = 0u32;
    let mut id = vec![NONE; n];
    for v in 0..n {
        let rep = v.min(mate[v] as usize);
        if id[rep] == NONE {
            id[rep] = nc;
            nc += 1;
        }
        cluster[v] = id[rep];
    }
    (cluster, nc as usize)
}

/// Renumbers cluster ids to `0..nc` in order of first appearance.
fn compact(cluster: &mut [u32]) -> (Vec<u32>, usize) {
    let n = cluster.len();
    let mut id = vec![u32::MAX; n];
    let mut nc = 0u32;
    for c in cluster.iter_mut() {
        if id[*c as usize] == u32::MAX {
            id[*c as usize] = nc;
            nc += 1;
        }
        *c = id[*c as usize];
    }
    (cluster.to_vec(), nc as usize)
}

/// Coarse tasks per parallel block of [`contract`].
const CONTRACT_BLOCK: usize = 4096;

/// Contracts the clusters into a coarse graph, blocks of coarse tasks in parallel on
/// `pool`. A coarse task's neighbours come in order of first appearance over its members
/// (by increasing id) and their rows: the same coarse graph for every thread count.
pub fn contract(
    graph: &TaskGraph,
    cluster: &[u32],
    nc: usize,
    pool: Option<&rayon::ThreadPool>,
) -> TaskGraph {
    let n = graph.num_tasks();
    let ncon = graph.ncon();
    // Members of each cluster, by counting sort.
    let mut start = vec![0usize; nc + 1];
    for &c in cluster {
        start[c as usize + 1] += 1;
    }
    for i in 0..nc {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut members = vec![0u32; n];
    for v in 0..n {
        let c = cluster[v] as usize;
        members[fill[c]] = v as u32;
        fill[c] += 1;
    }
    drop(fill);
    let blocks = crate::par::map_blocks(pool, nc, CONTRACT_BLOCK, RatingMap::new, |map, cvs| {
        let mut degrees = Vec::with_capacity(cvs.len());
        let mut adjncy: Vec<u32> = Vec::new();
        let mut ew: Vec<u64> = Vec::new();
        let mut vw = vec![0u64; cvs.len() * ncon];
        for (i, cv) in cvs.enumerate() {
            let group = &members[start[cv]..start[cv + 1]];
            map.reserve(
                group
                    .iter()
                    .map(|&v| graph.degree(v))
                    .sum::<usize>()
                    .min(nc),
            );
            for &v in group {
                for (c, &w) in graph.vertex_weights(v).iter().enumerate() {
                    vw[i * ncon + c] += w;
                }
                for (&u, &w) in graph.neighbors(v).iter().zip(graph.edge_weights(v)) {
                    let cu = cluster[u as usize];
                    if cu as usize != cv {
                        map.add(cu, w);
                    }
                }
            }
            let before = adjncy.len();
            for (cu, w) in map.entries() {
                adjncy.push(cu);
                ew.push(w);
            }
            degrees.push(adjncy.len() - before);
            map.clear();
        }
        (degrees, adjncy, ew, vw)
    });
    let edges: usize = blocks.iter().map(|b| b.1.len()).sum();
    let mut xadj = Vec::with_capacity(nc + 1);
    xadj.push(0usize);
    let mut adjncy: Vec<u32> = Vec::with_capacity(edges);
    let mut ew: Vec<u64> = Vec::with_capacity(edges);
    let mut vw: Vec<u64> = Vec::with_capacity(nc * ncon);
    for (degrees, a, w, v) in blocks {
        for d in degrees {
            xadj.push(xadj[xadj.len() - 1] + d);
        }
        adjncy.extend_from_slice(&a);
        ew.extend_from_slice(&w);
        vw.extend_from_slice(&v);
    }
    TaskGraph::from_csr_unchecked(xadj, adjncy, ew, vw, ncon)
}
