//! Explicit target graphs (`graph:FILE`): PEs are the vertices of a connected METIS-format
//! graph, link weights are costs, and the distance is the weighted shortest path.

use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use crate::domtree::{medoid, DomainTree};
use crate::{ArchError, Architecture, Domain, LinkGraph, PeId};

/// Largest `k` for which the whole distance matrix is kept (`k*k*4` bytes: 256 MiB).
pub const FULL_MATRIX_MAX_PES: u32 = 8192;
/// Memory budget of the row cache used above [`FULL_MATRIX_MAX_PES`].
const ROW_CACHE_BYTES: usize = 64 << 20;

/// A target given as a connected graph with positive link weights.
///
/// - Distances: weighted shortest paths (Dijkstra; BFS when all weights are 1). Up to
///   [`FULL_MATRIX_MAX_PES`] PEs the full matrix is computed at construction (one search
///   per source, stored as `u32` when the total link weight fits, else `u64`). Above, rows
///   are computed on demand and kept in a bounded cache (64 MiB, at least 4 rows) behind a
///   mutex, so `distance` stays `&self` and thread safe.
/// - Capacities: the vertex weights (the first constraint when there are several), else 1.
/// - Bipartition (precomputed, O(k) memory): recursive graph bisection of each domain's
///   PE set: a breadth-first search from a pseudo-peripheral PE (the last PE reached from
///   the domain's first PE) grows the first half up to half of the capacity, then up to 8
///   greedy passes move boundary PEs with a positive gain in cut links (the number of
///   links, whatever their weights) while the capacity imbalance stays within the largest
///   PE capacity (or does not get worse).
/// - Domain distance: the distance between the domains' representatives, precomputed per
///   node — the member with the smallest sum of distances to (a sample of) the others
///   when the full matrix exists, else the middle of a hop-diameter path of the domain;
///   exact on single PEs, O(1) per query.
#[derive(Debug)]
pub struct ExplicitGraph {
    xadj: Vec<usize>,
    adj: Vec<u32>,
    wgt: Vec<u64>,
    caps: Vec<u64>,
    dist: Dist,
    tree: DomainTree,
    path: Option<String>,
    /// The spec, when it is not `graph:PATH` (a graph read from another format).
    spec: Option<String>,
}

enum Dist {
    Full32(Vec<u32>),
    Full64(Vec<u64>),
    Lazy(RowCache),
}

impl std::fmt::Debug for Dist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dist::Full32(_) => f.write_str("Full32"),
            Dist::Full64(_) => f.write_str("Full64"),
            Dist::Lazy(c) => write!(f, "Lazy(max {} rows)", c.max_rows),
        }
    }
}

type RowMap = HashMap<u32, Arc<Vec<u64>>>;

struct RowCache {
    max_rows: usize,
    /// Cached rows and their insertion order (oldest first, evicted first).
    rows: Mutex<(RowMap, VecDeque<u32>)>,
}

impl ExplicitGraph {
    /// `k` PEs, undirected links `(a, b, weight)` listed once each (no self-loop, no
    /// duplicate, weight >= 1), and one capacity per PE (empty: all 1; each >= 1). The
    /// graph must be connected.
    pub fn new(
        k: u32,
        links: Vec<(u32, u32, u64)>,
        capacities: Vec<u64>,
    ) -> Result<Self, ArchError> {
        if k == 0 {
            return Err(ArchError::invalid("a target graph needs at least one PE"));
        }
        let mut deg = vec![0usize; k as usize + 1];
        for &(a, b, w) in &links {
            if a >= k || b >= k {
                return Err(ArchError::invalid(format!(
                    "link ({a}, {b}) names a PE >= {k}"
                )));
            }
            if a == b {
                return Err(ArchError::invalid(format!("self-loop on PE {a}")));
            }
            if w == 0 {
                return Err(ArchError::invalid(format!("link ({a}, {b}) has weight 0")));
            }
            deg[a as usize + 1] += 1;
            deg[b as usize + 1] += 1;
        }
        for i in 0..k as usize {
            deg[i + 1] += deg[i];
        }
        let xadj = deg;
        let mut pos = xadj.clone();
        let mut adj = vec![0u32; xadj[k as usize]];
        let mut wgt = vec![0u64; xadj[k as usize]];
        for &(a, b, w) in &links {
            for (u, v) in [(a, b), (b, a)] {
                adj[pos[u as usize]] = v;
                wgt[pos[u as usize]] = w;
                pos[u as usize] += 1;
            }
        }
        for u in 0..k as usize {
            let mut nb: Vec<(u32, u64)> =
                (xadj[u]..xadj[u + 1]).map(|i| (adj[i], wgt[i])).collect();
            nb.sort_unstable();
            if let Some(w) = nb.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(ArchError::invalid(format!(
                    "duplicate link ({u}, {})",
                    w[0].0
                )));
            }
            for (j, (v, w)) in nb.into_iter().enumerate() {
                adj[xadj[u] + j] = v;
                wgt[xadj[u] + j] = w;
            }
        }
        let caps = if capacities.is_empty() {
            vec![1; k as usize]
        } else {
            if capacities.len() != k as usize {
                return Err(ArchError::invalid(format!(
                    "{} capacities for {k} PEs",
                    capacities.len()
                )));
            }
            if let Some(i) = capacities.iter().position(|&c| c == 0) {
                return Err(ArchError::invalid(format!("capacity of PE {i} is 0")));
            }
            capacities
        };
        Self::from_csr(xadj, adj, wgt, caps, None)
    }

    /// Reads a METIS-format target graph (see [`crate::parse_arch`], `graph:FILE`).
    pub fn from_file(path: &str) -> Result<Self, ArchError> {
        let bytes = read_input(path)?;
        let graph = taskmap_graph::read_metis(&bytes, std::path::Path::new(path))
            .map_err(|e| ArchError::from_graph(e, path))?;
        let ncon = graph.ncon();
        let (xadj, adj, wgt, weights, _) = graph.into_csr();
        // The first vertex weight is the PE capacity (1 when the file has none).
        let caps: Vec<u64> = weights.iter().step_by(ncon).copied().collect();
        if let Some(p) = caps.iter().position(|&c| c == 0) {
            return Err(ArchError::FileContent {
                file: path.to_string(),
                msg: format!(
                    "vertex {} of the file (PE {p}) has capacity (vertex weight) 0",
                    p + 1
                ),
            });
        }
        Self::from_csr(xadj, adj, wgt, caps, Some(path.to_string())).map_err(|e| e.in_file(path))
    }

    fn from_csr(
        xadj: Vec<usize>,
        adj: Vec<u32>,
        wgt: Vec<u64>,
        caps: Vec<u64>,
        path: Option<String>,
    ) -> Result<Self, ArchError> {
        let k = caps.len() as u32;
        if k == 0 {
            return Err(ArchError::invalid("a target graph needs at least one PE"));
        }
        if caps
            .iter()
            .try_fold(0u64, |a, &c| a.checked_add(c))
            .is_none()
        {
            return Err(ArchError::invalid("the sum of the PE capacities overflows"));
        }
        let mut g = ExplicitGraph {
            xadj,
            adj,
            wgt,
            caps,
            dist: Dist::Full32(Vec::new()),
            tree: DomainTree {
                order: Vec::new(),
                nodes: Vec::new(),
            },
            path,
            spec: None,
        };
        let reached = g
            .hops_from(0, None)
            .iter()
            .filter(|&&h| h != u32::MAX)
            .count();
        if reached != k as usize {
            let lost = g
                .hops_from(0, None)
                .iter()
                .position(|&h| h == u32::MAX)
                .unwrap_or(0);
            return Err(ArchError::invalid(format!(
                "the target graph is disconnected (PE {lost} cannot be reached from PE 0)"
            )));
        }
        // A shortest path uses every link at most once: links adding up to less than
        // 2^64 (counted in both directions, to be safe) keep every distance in 64 bits.
        let arcs: u128 = g.wgt.iter().map(|&w| u128::from(w)).sum();
        if arcs > u128::from(u64::MAX) {
            return Err(ArchError::invalid(format!(
                "the link weights add up to {arcs} (both directions), more than 2^64-1: distances could overflow"
            )));
        }
        g.dist = if k <= FULL_MATRIX_MAX_PES {
            let total: u64 = g.wgt.iter().fold(0u64, |a, &w| a.saturating_add(w));
            if total <= u64::from(u32::MAX) {
                let mut m = Vec::with_capacity(k as usize * k as usize);
                for s in 0..k {
                    m.extend(g.sssp(s).into_iter().map(|d| d as u32));
                }
                Dist::Full32(m)
            } else {
                let mut m = Vec::with_capacity(k as usize * k as usize);
                for s in 0..k {
                    m.extend(g.sssp(s));
                }
                Dist::Full64(m)
            }
        } else {
            Dist::Lazy(RowCache {
                max_rows: (ROW_CACHE_BYTES / (8 * k as usize)).max(4),
                rows: Mutex::new((HashMap::new(), VecDeque::new())),
            })
        };
        g.tree = g.build_tree();
        Ok(g)
    }

    /// The file this target was read from, if any.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// Gives the target the spec it was read with (a target file of another format).
    pub(crate) fn with_spec(mut self, spec: String) -> Self {
        self.spec = Some(spec);
        self
    }

    fn neighbours(&self, u: u32) -> impl Iterator<Item = (u32, u64)> + '_ {
        let r = self.xadj[u as usize]..self.xadj[u as usize + 1];
        self.adj[r.clone()]
            .iter()
            .copied()
            .zip(self.wgt[r].iter().copied())
    }

    /// Hop counts from `src`, restricted to PEs with `inset[v] == stamp` when given.
    fn hops_from(&self, src: u32, set: Option<(&[u32], u32)>) -> Vec<u32> {
        let k = self.caps.len();
        let mut h = vec![u32::MAX; k];
        let mut q = VecDeque::from([src]);
        h[src as usize] = 0;
        while let Some(u) = q.pop_front() {
            for (v, _) in self.neighbours(u) {
                let ok = match set {
                    None => true,
                    Some((s, st)) => s[v as usize] == st,
                };
                if ok && h[v as usize] == u32::MAX {
                    h[v as usize] = h[u as usize] + 1;
                    q.push_back(v);
                }
            }
        }
        h
    }

    /// Single-source shortest path lengths.
    fn sssp(&self, src: u32) -> Vec<u64> {
        if self.wgt.iter().all(|&w| w == 1) {
            return self
                .hops_from(src, None)
                .into_iter()
                .map(u64::from)
                .collect();
        }
        let mut d = vec![u64::MAX; self.caps.len()];
        let mut heap = BinaryHeap::new();
        d[src as usize] = 0;
        heap.push(std::cmp::Reverse((0u64, src)));
        while let Some(std::cmp::Reverse((du, u))) = heap.pop() {
            if du > d[u as usize] {
                continue;
            }
            for (v, w) in self.neighbours(u) {
                let nd = du.saturating_add(w);
                if nd < d[v as usize] {
                    d[v as usize] = nd;
                    heap.push(std::cmp::Reverse((nd, v)));
                }
            }
        }
        d
    }

    fn lazy_distance(&self, c: &RowCache, a: u32, b: u32) -> u64 {
        {
            let g = c.rows.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(r) = g.0.get(&a) {
                return r[b as usize];
            }
            if let Some(r) = g.0.get(&b) {
                return r[a as usize];
            }
        }
        let row = Arc::new(self.sssp(a));
        let d = row[b as usize];
        let mut g = c.rows.lock().unwrap_or_else(|e| e.into_inner());
        if !g.0.contains_key(&a) {
            if g.0.len() >= c.max_rows {
                if let Some(old) = g.1.pop_front() {
                    g.0.remove(&old);
                }
            }
            g.0.insert(a, row);
            g.1.push_back(a);
        }
        d
    }

    fn build_tree(&self) -> DomainTree {
        let k = self.caps.len();
        let mut inset = vec![0u32; k];
        let mut seen = vec![0u32; k];
        let mut side = vec![0u8; k];
        let mut stamp = 0u32;
        let (mut tree, _) = DomainTree::build(
            (0..k as u32).map(PeId).collect(),
            (),
            |p| self.caps[p.idx()],
            |slice, _| {
                stamp += 1;
                for p in slice.iter() {
                    inset[p.idx()] = stamp;
                }
                // Pseudo-peripheral seed.
                let mut order = Vec::with_capacity(slice.len());
                bfs(self, slice[0].0, &inset, stamp, &mut seen, &mut order);
                let seed = order[order.len() - 1];
                stamp += 1;
                for p in slice.iter() {
                    inset[p.idx()] = stamp;
                }
                order.clear();
                bfs(self, seed, &inset, stamp, &mut seen, &mut order);
                for p in slice.iter() {
                    if seen[p.idx()] != stamp {
                        bfs(self, p.0, &inset, stamp, &mut seen, &mut order);
                    }
                }
                // Grow to half the capacity.
                let total: u64 = slice.iter().map(|p| self.caps[p.idx()]).sum();
                let mut best = (u64::MAX, 1usize);
                let mut c0 = 0u64;
                for (i, &v) in order[..order.len() - 1].iter().enumerate() {
                    c0 += self.caps[v as usize];
                    let imb = (2 * c0).abs_diff(total);
                    if imb < best.0 {
                        best = (imb, i + 1);
                    }
                }
                let p = best.1;
                let mut cap0: u64 = order[..p].iter().map(|&v| self.caps[v as usize]).sum();
                let mut n0 = p;
                for (i, &v) in order.iter().enumerate() {
                    side[v as usize] = u8::from(i >= p);
                }
                // Greedy boundary refinement.
                let maxcap = slice.iter().map(|p| self.caps[p.idx()]).max().unwrap_or(1);
                for _ in 0..8 {
                    let mut moved = false;
                    for &v in &order {
                        let s = side[v as usize];
                        let (mut ext, mut int) = (0i64, 0i64);
                        for (u, _) in self.neighbours(v) {
                            if inset[u as usize] == stamp {
                                if side[u as usize] == s {
                                    int += 1;
                                } else {
                                    ext += 1;
                                }
                            }
                        }
                        if ext <= int {
                            continue;
                        }
                        let c = self.caps[v as usize];
                        let (new0, new_n0) = if s == 0 {
                            (cap0 - c, n0 - 1)
                        } else {
                            (cap0 + c, n0 + 1)
                        };
                        if new_n0 == 0 || new_n0 == slice.len() {
                            continue;
                        }
                        let before = (2 * cap0).abs_diff(total);
                        let after = (2 * new0).abs_diff(total);
                        if after <= before.max(2 * maxcap) {
                            side[v as usize] = 1 - s;
                            cap0 = new0;
                            n0 = new_n0;
                            moved = true;
                        }
                    }
                    if !moved {
                        break;
                    }
                }
                let mut i = 0;
                for &v in order.iter().filter(|&&v| side[v as usize] == 0) {
                    slice[i] = PeId(v);
                    i += 1;
                }
                for &v in order.iter().filter(|&&v| side[v as usize] == 1) {
                    slice[i] = PeId(v);
                    i += 1;
                }
                (n0, (), ())
            },
        );
        match self.dist {
            Dist::Lazy(_) => {
                let mut inset = vec![0u32; k];
                let mut stamp = 0u32;
                tree.set_reps(|pes| {
                    stamp += 1;
                    for p in pes {
                        inset[p.idx()] = stamp;
                    }
                    let h = self.hops_from(pes[0].0, Some((&inset, stamp)));
                    let u = *pes
                        .iter()
                        .max_by_key(|p| (h[p.idx()] != u32::MAX, h[p.idx()]))
                        .unwrap_or(&pes[0]);
                    let hu = self.hops_from(u.0, Some((&inset, stamp)));
                    let v = *pes
                        .iter()
                        .max_by_key(|p| (hu[p.idx()] != u32::MAX, hu[p.idx()]))
                        .unwrap_or(&pes[0]);
                    // Walk back from v towards u half way.
                    let mut cur = v.0;
                    let half = hu[v.idx()] / 2;
                    while hu[cur as usize] > half {
                        let next = self.neighbours(cur).map(|(x, _)| x).find(|&x| {
                            inset[x as usize] == stamp && hu[x as usize] + 1 == hu[cur as usize]
                        });
                        match next {
                            Some(x) => cur = x,
                            None => break,
                        }
                    }
                    PeId(cur)
                });
            }
            _ => tree.set_reps(|pes| medoid(pes, |a, b| self.distance(a, b))),
        }
        tree
    }
}

impl Architecture for ExplicitGraph {
    fn traffic_routes(&self) -> Option<Box<dyn crate::TrafficRoutes + '_>> {
        Some(Box::new(crate::routes::ShortestPaths::new(
            &self.xadj, &self.adj, &self.wgt,
        )))
    }
    fn pe_count(&self) -> u32 {
        self.caps.len() as u32
    }
    #[inline]
    fn distance(&self, a: PeId, b: PeId) -> u64 {
        let k = self.caps.len();
        match &self.dist {
            Dist::Full32(m) => u64::from(m[a.idx() * k + b.idx()]),
            Dist::Full64(m) => m[a.idx() * k + b.idx()],
            Dist::Lazy(c) => {
                if a == b {
                    0
                } else {
                    self.lazy_distance(c, a.0, b.0)
                }
            }
        }
    }
    fn pe_capacity(&self, pe: PeId) -> u64 {
        self.caps[pe.idx()]
    }
    crate::domtree::tree_domains!();
    fn domain_distance(&self, a: &Domain, b: &Domain) -> u64 {
        self.tree.reps(a, b).map_or(0, |(x, y)| self.distance(x, y))
    }
    fn spec(&self) -> String {
        match &self.spec {
            Some(s) => s.clone(),
            None => format!("graph:{}", self.path.as_deref().unwrap_or("<memory>")),
        }
    }
    fn name(&self) -> &'static str {
        "graph"
    }
    fn link_graph(&self) -> Option<LinkGraph> {
        let mut edges = Vec::new();
        for u in 0..self.caps.len() as u32 {
            for (v, w) in self.neighbours(u) {
                if u < v {
                    edges.push((u, v, w));
                }
            }
        }
        Some(LinkGraph::new(self.caps.len() as u32, edges, 1))
    }
}

/// Breadth-first search from `src` within the PEs marked `stamp` in `inset`, appending the
/// PEs reached (not yet marked `stamp` in `seen`) to `out`.
fn bfs(
    g: &ExplicitGraph,
    src: u32,
    inset: &[u32],
    stamp: u32,
    seen: &mut [u32],
    out: &mut Vec<u32>,
) {
    let start = out.len();
    seen[src as usize] = stamp;
    out.push(src);
    let mut i = start;
    while i < out.len() {
        let u = out[i];
        for (v, _) in g.neighbours(u) {
            if inset[v as usize] == stamp && seen[v as usize] != stamp {
                seen[v as usize] = stamp;
                out.push(v);
            }
        }
        i += 1;
    }
}

/// Reads a file, gunzipping it when it starts with the gzip magic bytes `1f 8b` (within
/// the memory left, as [`taskmap_graph::decompress`] does).
pub(crate) fn read_input(path: &str) -> Result<Vec<u8>, ArchError> {
    let bytes = std::fs::read(path).map_err(|source| ArchError::Io {
        file: path.to_string(),
        source,
    })?;
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(bytes);
    }
    taskmap_graph::decompress(&bytes, std::path::Path::new(path))
        .map(std::borrow::Cow::into_owned)
        .map_err(|e| ArchError::from_graph(e, path))
}

/// Lines of a byte buffer with their 1-based numbers (a `\r` before `\n` is dropped).
pub(crate) fn lines(bytes: &[u8]) -> impl Iterator<Item = (u32, &[u8])> {
    let n = if bytes.last() == Some(&b'\n') {
        bytes.len() - 1
    } else {
        bytes.len()
    };
    bytes[..n].split(|&c| c == b'\n').enumerate().map(|(i, l)| {
        let l = l.strip_suffix(b"\r").unwrap_or(l);
        (i as u32 + 1, l)
    })
}

/// Whitespace-separated tokens of a line with their 1-based columns.
pub(crate) fn tokens(line: &[u8]) -> impl Iterator<Item = (u32, &[u8])> {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < line.len() && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == line.len() {
            return None;
        }
        let s = i;
        while i < line.len() && !line[i].is_ascii_whitespace() {
            i += 1;
        }
        Some((s as u32 + 1, &line[s..i]))
    })
}

/// Parses a non-negative decimal integer token.
pub(crate) fn parse_u64(tok: &[u8]) -> Result<u64, String> {
    let text = String::from_utf8_lossy(tok);
    if tok.is_empty() || !tok.iter().all(u8::is_ascii_digit) {
        return Err(format!("expected a non-negative integer, found \"{text}\""));
    }
    text.parse::<u64>()
        .map_err(|_| format!("number \"{text}\" is too large"))
}
