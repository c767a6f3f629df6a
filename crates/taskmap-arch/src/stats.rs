//! Whole-architecture statistics and the physical link graph.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::{Architecture, PeId};

/// Largest `k` for which [`diameter`] and [`mean_distance`] visit every pair.
pub const EXACT_STATS_MAX_PES: u32 = 4096;
/// Number of PE pairs [`mean_distance`] and [`diameter`] sample above
/// [`EXACT_STATS_MAX_PES`].
pub const STATS_SAMPLES: u32 = 1 << 20;

/// The physical link graph of an architecture: vertices `0..k` are the PEs (in PE order),
/// vertices `k..vertex_count` are switches (tree targets). `edges` are undirected
/// `(u, v, weight)` links listed once. For every two PEs, the weighted shortest path
/// equals `scale * distance(a, b)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkGraph {
    /// Number of vertices (PEs first, then switches).
    pub vertex_count: u32,
    /// Undirected weighted links.
    pub edges: Vec<(u32, u32, u64)>,
    /// Shortest path = `scale * distance`.
    pub scale: u64,
}

impl LinkGraph {
    /// Bundles the parts.
    pub fn new(vertex_count: u32, edges: Vec<(u32, u32, u64)>, scale: u64) -> Self {
        LinkGraph {
            vertex_count,
            edges,
            scale,
        }
    }

    /// Dijkstra from `src`: the shortest path length to every vertex (`u64::MAX` when
    /// unreachable). O((V + E) log V), builds the adjacency on each call.
    pub fn shortest_paths(&self, src: u32) -> Vec<u64> {
        let n = self.vertex_count as usize;
        let mut adj: Vec<Vec<(u32, u64)>> = vec![Vec::new(); n];
        for &(u, v, w) in &self.edges {
            adj[u as usize].push((v, w));
            adj[v as usize].push((u, w));
        }
        let mut d = vec![u64::MAX; n];
        let mut heap = BinaryHeap::from([Reverse((0u64, src))]);
        d[src as usize] = 0;
        while let Some(Reverse((du, u))) = heap.pop() {
            if du > d[u as usize] {
                continue;
            }
            for &(v, w) in &adj[u as usize] {
                let nd = du.saturating_add(w);
                if nd < d[v as usize] {
                    d[v as usize] = nd;
                    heap.push(Reverse((nd, v)));
                }
            }
        }
        d
    }
}

/// The physical link graph of mesh, torus, hypercube, complete, weighted complete, tree
/// (with switch vertices, when its distances increase strictly upwards) and explicit graph
/// targets, and of a [`crate::Precomputed`] around one of those. `None` for distance
/// matrices, subsets, and instances too large to list (see each kind).
pub fn explicit_graph_of(arch: &dyn Architecture) -> Option<LinkGraph> {
    arch.link_graph()
}

/// A deterministic splitmix64 stream.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Calls `f(a, b)` on every unordered pair `a < b` when `k <=` [`EXACT_STATS_MAX_PES`],
/// else on [`STATS_SAMPLES`] pseudo-random pairs `a != b` (fixed seed). Returns the
/// number of pairs visited.
fn for_pairs(k: u32, mut f: impl FnMut(PeId, PeId)) -> u64 {
    if k <= EXACT_STATS_MAX_PES {
        for a in 0..k {
            for b in a + 1..k {
                f(PeId(a), PeId(b));
            }
        }
        u64::from(k) * u64::from(k.saturating_sub(1)) / 2
    } else {
        let mut s = 0x005E_ED0F_7A5C_u64;
        let mut n = 0;
        while n < STATS_SAMPLES {
            let a = (splitmix(&mut s) % u64::from(k)) as u32;
            let b = (splitmix(&mut s) % u64::from(k)) as u32;
            if a != b {
                f(PeId(a), PeId(b));
                n += 1;
            }
        }
        u64::from(STATS_SAMPLES)
    }
}

/// The largest distance between two PEs: the closed form when the architecture has one
/// ([`Architecture::known_diameter`]), else exact over all pairs for `k <= 4096`, else the
/// largest distance among 2^20 deterministic pseudo-random pairs (a lower bound).
pub fn diameter(arch: &dyn Architecture) -> u64 {
    if let Some(d) = arch.known_diameter() {
        return d;
    }
    let mut m = 0;
    for_pairs(arch.pe_count(), |a, b| m = m.max(arch.distance(a, b)));
    m
}

/// The mean distance between two distinct PEs (0 when `k = 1`): exact over all pairs for
/// `k <= 4096`, else the mean over 2^20 deterministic pseudo-random pairs of distinct PEs.
pub fn mean_distance(arch: &dyn Architecture) -> f64 {
    let mut sum = 0u128;
    let n = for_pairs(arch.pe_count(), |a, b| {
        sum += u128::from(arch.distance(a, b))
    });
    if n == 0 {
        0.0
    } else {
        sum as f64 / n as f64
    }
}
