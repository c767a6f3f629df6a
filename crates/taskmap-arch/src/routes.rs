//! The routes traffic takes, for link congestion: dimension order on meshes, tori and
//! hypercubes; up and down the levels of a tree; shortest paths with ties split evenly on
//! explicit target graphs; the direct link on complete targets.
//! [`Architecture::traffic_routes`] gives a target's.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::{PeId, Routing};

/// Most directed links a target may have for congestion (one load per link is kept).
pub const MAX_TRAFFIC_LINKS: u64 = 1 << 24;

/// How traffic between PEs spreads over a target's directed links.
pub trait TrafficRoutes {
    /// The routing, in words (`"dimension order"`, ...).
    fn kind(&self) -> &'static str;
    /// Number of directed links, ids `0..link_count()`.
    fn link_count(&self) -> u64;
    /// Adds the traffic from `a` to every `(b, w)` of `demands` (`b != a`) to the loads of
    /// the links it crosses, `load[link]` (split evenly over equal routes).
    fn spread(&self, a: PeId, demands: &[(PeId, f64)], load: &mut [f64]);
    /// A name of the link for reports (`"3->4"`, `"level-1 group 2 up"`).
    fn link_name(&self, link: u64) -> String;
    /// Whether the link id is a link (a mesh's id space holds the `+` links of its upper
    /// boundary, which do not exist).
    fn exists(&self, _link: u64) -> bool {
        true
    }
    /// For a tree, which links have one of `pes` below them (the others lead only to
    /// positions a subset leaves empty); `None` when every link stays.
    fn links_below(&self, _pes: &[PeId]) -> Option<Vec<bool>> {
        None
    }
}

/// Dimension-order routes of a target with [`Routing`].
pub(crate) struct DimensionOrder<'a>(pub &'a dyn Routing);

impl TrafficRoutes for DimensionOrder<'_> {
    fn kind(&self) -> &'static str {
        "dimension order"
    }
    fn link_count(&self) -> u64 {
        u64::from(self.0.link_count())
    }
    fn spread(&self, a: PeId, demands: &[(PeId, f64)], load: &mut [f64]) {
        let mut route = Vec::new();
        for &(b, w) in demands {
            route.clear();
            self.0.route(a, b, &mut route);
            for l in &route {
                load[*l as usize] += w;
            }
        }
    }
    fn link_name(&self, link: u64) -> String {
        match self.0.link_endpoints(link as crate::LinkId) {
            Some((p, q)) => format!("{}->{}", p.0, q.0),
            None => format!("link {link}"),
        }
    }
    fn exists(&self, link: u64) -> bool {
        self.0.link_endpoints(link as crate::LinkId).is_some()
    }
}

/// Up and down links of a tree: every node below the root (PEs at level 0, groups above)
/// has a link up to its parent and one down from it. Traffic between two PEs whose
/// highest differing level is `h` climbs from the first through levels `0..=h` and comes
/// down to the second through the same levels.
pub(crate) struct TreeRoutes {
    /// PEs below one node of each level (`block[0] = 1`), as [`crate::Tree`] keeps them.
    pub block: Vec<u32>,
    /// Number of levels.
    pub levels: usize,
    /// First link id of each level: its up links, then its down links.
    pub offset: Vec<u64>,
}

impl TreeRoutes {
    /// The routes of a tree with `block` (one entry per level and one for the root).
    pub(crate) fn new(block: &[u32]) -> Self {
        let levels = block.len() - 1;
        let k = u64::from(block[levels]);
        let mut offset = Vec::with_capacity(levels + 1);
        let mut next = 0u64;
        for &b in &block[..levels] {
            offset.push(next);
            next += 2 * (k / u64::from(b));
        }
        offset.push(next);
        TreeRoutes {
            block: block.to_vec(),
            levels,
            offset,
        }
    }

    fn nodes(&self, level: usize) -> u64 {
        (self.offset[level + 1] - self.offset[level]) / 2
    }
}

impl TrafficRoutes for TreeRoutes {
    fn kind(&self) -> &'static str {
        "tree: up and down links per level"
    }
    fn link_count(&self) -> u64 {
        self.offset[self.levels]
    }
    fn spread(&self, a: PeId, demands: &[(PeId, f64)], load: &mut [f64]) {
        for &(b, w) in demands {
            for i in 0..self.levels {
                let (na, nb) = (a.0 / self.block[i], b.0 / self.block[i]);
                if na == nb {
                    break;
                }
                load[(self.offset[i] + u64::from(na)) as usize] += w;
                load[(self.offset[i] + self.nodes(i) + u64::from(nb)) as usize] += w;
            }
        }
    }
    fn links_below(&self, pes: &[PeId]) -> Option<Vec<bool>> {
        let mut mask = vec![false; self.link_count() as usize];
        for p in pes {
            for i in 0..self.levels {
                let node = u64::from(p.0 / self.block[i]);
                mask[(self.offset[i] + node) as usize] = true;
                mask[(self.offset[i] + self.nodes(i) + node) as usize] = true;
            }
        }
        Some(mask)
    }
    fn link_name(&self, link: u64) -> String {
        let i = self.offset.partition_point(|&o| o <= link) - 1;
        let within = link - self.offset[i];
        let (dir, node) = if within < self.nodes(i) {
            ("up", within)
        } else {
            ("down", within - self.nodes(i))
        };
        if i == 0 {
            format!("PE {node} {dir}")
        } else {
            format!("level-{i} group {node} {dir}")
        }
    }
}

/// Direct links of a complete target: link `a·k + b` from `a` to `b`.
pub(crate) struct DirectLinks {
    pub k: u32,
}

impl TrafficRoutes for DirectLinks {
    fn kind(&self) -> &'static str {
        "direct links"
    }
    fn link_count(&self) -> u64 {
        u64::from(self.k) * u64::from(self.k)
    }
    fn spread(&self, a: PeId, demands: &[(PeId, f64)], load: &mut [f64]) {
        for &(b, w) in demands {
            load[(u64::from(a.0) * u64::from(self.k) + u64::from(b.0)) as usize] += w;
        }
    }
    fn link_name(&self, link: u64) -> String {
        let k = u64::from(self.k);
        format!("{}->{}", link / k, link % k)
    }
    fn exists(&self, link: u64) -> bool {
        let k = u64::from(self.k);
        link / k != link % k
    }
    fn links_below(&self, pes: &[PeId]) -> Option<Vec<bool>> {
        // Only links between two PEs of the subset exist for it.
        let k = u64::from(self.k);
        let mut mask = vec![false; self.link_count() as usize];
        for a in pes {
            for b in pes {
                if a != b {
                    mask[(u64::from(a.0) * k + u64::from(b.0)) as usize] = true;
                }
            }
        }
        Some(mask)
    }
}

/// Shortest paths over weighted links (CSR, link id = adjacency index, every link listed
/// both ways with one weight), the traffic of a pair split evenly over all its shortest
/// paths.
pub(crate) struct ShortestPaths<'a> {
    xadj: &'a [usize],
    adj: &'a [u32],
    wgt: &'a [u64],
    /// The id of the reverse of every link.
    rev: Vec<usize>,
}

impl<'a> ShortestPaths<'a> {
    /// The routes of a symmetric CSR graph.
    pub(crate) fn new(xadj: &'a [usize], adj: &'a [u32], wgt: &'a [u64]) -> Self {
        let mut at: std::collections::HashMap<(u32, u32), usize> =
            std::collections::HashMap::with_capacity(adj.len());
        for u in 0..xadj.len() - 1 {
            for e in xadj[u]..xadj[u + 1] {
                at.insert((u as u32, adj[e]), e);
            }
        }
        let mut rev = vec![0usize; adj.len()];
        for u in 0..xadj.len() - 1 {
            for e in xadj[u]..xadj[u + 1] {
                rev[e] = at[&(adj[e], u as u32)];
            }
        }
        ShortestPaths {
            xadj,
            adj,
            wgt,
            rev,
        }
    }
}

/// `ln(e^a + e^b)`.
fn log_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    hi + (lo - hi).exp().ln_1p()
}

impl TrafficRoutes for ShortestPaths<'_> {
    fn kind(&self) -> &'static str {
        "shortest paths, ties split evenly"
    }
    fn link_count(&self) -> u64 {
        self.adj.len() as u64
    }
    fn spread(&self, a: PeId, demands: &[(PeId, f64)], load: &mut [f64]) {
        let n = self.xadj.len() - 1;
        // Dijkstra from a, with the logarithm of the number of shortest paths to every
        // vertex (counts overflow a float on large grids; only their ratios matter).
        let mut dist = vec![u64::MAX; n];
        let mut paths = vec![f64::NEG_INFINITY; n];
        let mut order: Vec<u32> = Vec::with_capacity(n);
        let mut heap = BinaryHeap::new();
        dist[a.idx()] = 0;
        paths[a.idx()] = 0.0;
        heap.push(Reverse((0u64, a.0)));
        while let Some(Reverse((d, u))) = heap.pop() {
            if d > dist[u as usize] {
                continue;
            }
            order.push(u);
            for e in self.xadj[u as usize]..self.xadj[u as usize + 1] {
                let v = self.adj[e] as usize;
                let nd = d.saturating_add(self.wgt[e]);
                if nd < dist[v] {
                    dist[v] = nd;
                    paths[v] = paths[u as usize];
                    heap.push(Reverse((nd, v as u32)));
                } else if nd == dist[v] {
                    paths[v] = log_add(paths[v], paths[u as usize]);
                }
            }
        }
        // Back from the farthest vertex: the traffic through v to the vertices beyond it,
        // shared among v's predecessors in proportion to their path counts.
        let mut through = vec![0f64; n];
        for &(b, w) in demands {
            through[b.idx()] += w;
        }
        for &v in order.iter().rev() {
            let v = v as usize;
            if through[v] == 0.0 || v == a.idx() {
                continue;
            }
            for e in self.xadj[v]..self.xadj[v + 1] {
                let u = self.adj[e] as usize;
                // u precedes v when a shortest path to v ends with the link u -> v (the
                // same weight as v -> u).
                if dist[u] == u64::MAX || dist[u].saturating_add(self.wgt[e]) != dist[v] {
                    continue;
                }
                let share = through[v] * (paths[u] - paths[v]).exp();
                load[self.rev[e]] += share;
                through[u] += share;
            }
        }
    }
    fn link_name(&self, link: u64) -> String {
        let e = link as usize;
        let u = self.xadj.partition_point(|&x| x <= e) - 1;
        format!("{}->{}", u, self.adj[e])
    }
}

/// The routes of a subset's inner target, with its PEs renamed. Links of a tree that no
/// PE of the subset lies below do not exist (the empty positions of a machine's envelope
/// tree); the other targets keep every inner link (unused PEs of a mesh still route).
pub(crate) struct SubsetRoutes<'a> {
    inner: Box<dyn TrafficRoutes + 'a>,
    /// The inner PE of every PE of the subset.
    pes: std::borrow::Cow<'a, [PeId]>,
    /// Which inner links exist, when not all do.
    mask: Option<Vec<bool>>,
    /// The subset id of every inner PE in the subset.
    local: std::collections::HashMap<u32, u32>,
}

impl<'a> SubsetRoutes<'a> {
    pub(crate) fn new(
        inner: Box<dyn TrafficRoutes + 'a>,
        pes: impl Into<std::borrow::Cow<'a, [PeId]>>,
    ) -> Self {
        let pes = pes.into();
        let mask = inner.links_below(&pes);
        let local = pes
            .iter()
            .enumerate()
            .map(|(i, p)| (p.0, i as u32))
            .collect();
        SubsetRoutes {
            inner,
            pes,
            mask,
            local,
        }
    }
}

impl TrafficRoutes for SubsetRoutes<'_> {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    fn link_count(&self) -> u64 {
        self.inner.link_count()
    }
    fn spread(&self, a: PeId, demands: &[(PeId, f64)], load: &mut [f64]) {
        let inner: Vec<(PeId, f64)> = demands
            .iter()
            .map(|&(b, w)| (self.pes[b.idx()], w))
            .collect();
        self.inner.spread(self.pes[a.idx()], &inner, load);
    }
    fn link_name(&self, link: u64) -> String {
        // PE names are the subset's.
        let name = self.inner.link_name(link);
        let pe = |t: &str| match t.parse::<u32>().ok().and_then(|p| self.local.get(&p)) {
            Some(l) => l.to_string(),
            None => format!("(inner {t})"),
        };
        if let Some(rest) = name.strip_prefix("PE ") {
            let (p, dir) = rest.split_once(' ').unwrap_or((rest, ""));
            return format!("PE {} {dir}", pe(p)).trim_end().to_string();
        }
        match name.split_once("->") {
            Some((p, q)) => format!("{}->{}", pe(p), pe(q)),
            None => name,
        }
    }
    fn exists(&self, link: u64) -> bool {
        self.mask.as_ref().is_none_or(|m| m[link as usize]) && self.inner.exists(link)
    }
}
