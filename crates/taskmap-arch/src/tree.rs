//! Hierarchical (tree) targets: KaHIP/SharedMap `tree:4:8:6/1:10:100` and Scotch `tleaf`.

use crate::{ArchError, Architecture, Domain, LinkGraph, PeId};

/// At most this many levels (more could not multiply to a `u32` PE count unless most
/// counts are 1).
pub const MAX_TREE_LEVELS: usize = 64;

/// A hierarchy of groups, in the KaHIP/SharedMap convention.
///
/// `counts` are listed bottom-up: `counts[0]` PEs form a lowest group, `counts[1]` lowest
/// groups form a level-1 group, and so on; `k` is their product. The distance of two
/// distinct PEs is `dists[i]` for the HIGHEST level `i` at which they differ
/// (non-cumulative). PEs of one lowest group are consecutive, so the numbering equals
/// Scotch's `tleaf` numbering.
///
/// Scotch's `tleaf L s0 c0 ... s(L-1) c(L-1)` lists levels top-down with per-level link
/// costs, and its leaf distance sums the costs of every level crossed: [`Tree::from_tleaf`]
/// converts (`tleaf 3 8 90 8 9 4 1` is `tree:4:8:8/1:10:100`).
///
/// Domains are `count` consecutive subtrees at one depth (`Domain.a` = depth from the
/// root, `.b` = index of the first subtree at that depth, `.c` = count). A single subtree
/// opens its children; a run of `n` subtrees splits into the first `ceil(n/2)` and the
/// last `floor(n/2)` (Scotch's rule). The distance between two disjoint domains is the
/// distance of the level that separates them (every pair of their PEs is at that
/// distance); overlapping distinct domains get half of the distance of their first PEs.
#[derive(Clone, Debug)]
pub struct Tree {
    counts: Vec<u32>,
    dists: Vec<u64>,
    /// `block[i]` = PEs below one level-`i` node = product of `counts[..i]`.
    block: Vec<u32>,
}

impl Tree {
    /// `counts` bottom-up (each >= 1), `dists[i]` (each >= 1) the distance of PEs whose
    /// highest differing level is `i`; equal lengths, 1 to [`MAX_TREE_LEVELS`] levels, the
    /// product of the counts within `u32`.
    pub fn new(counts: Vec<u32>, dists: Vec<u64>) -> Result<Self, ArchError> {
        if counts.is_empty() {
            return Err(ArchError::invalid("a tree needs at least one level"));
        }
        if counts.len() > MAX_TREE_LEVELS {
            return Err(ArchError::invalid(format!(
                "a tree has at most {MAX_TREE_LEVELS} levels, not {}",
                counts.len()
            )));
        }
        if counts.len() != dists.len() {
            return Err(ArchError::invalid(format!(
                "{} level counts but {} distances",
                counts.len(),
                dists.len()
            )));
        }
        if let Some(i) = counts.iter().position(|&c| c == 0) {
            return Err(ArchError::invalid(format!("tree level {i} has count 0")));
        }
        if let Some(i) = dists.iter().position(|&c| c == 0) {
            return Err(ArchError::invalid(format!(
                "tree level {i} has distance 0 (distances must be positive)"
            )));
        }
        let mut block = vec![1u32];
        for &c in &counts {
            let b = block[block.len() - 1].checked_mul(c).ok_or_else(|| {
                ArchError::invalid(format!("tree has more than {} PEs", u32::MAX))
            })?;
            block.push(b);
        }
        Ok(Tree {
            counts,
            dists,
            block,
        })
    }

    /// From Scotch `tleaf`: `sizes` and per-level link `costs` listed top-down; the
    /// distance of two leaves whose deepest common ancestor is at depth `i` is
    /// `costs[i] + costs[i+1] + ... + costs[L-1]`.
    pub fn from_tleaf(sizes: Vec<u32>, costs: Vec<u64>) -> Result<Self, ArchError> {
        if sizes.len() != costs.len() {
            return Err(ArchError::invalid("tleaf needs one cost per level"));
        }
        if let Some(i) = costs.iter().position(|&c| c == 0) {
            return Err(ArchError::invalid(format!(
                "tleaf level {i} has link cost 0"
            )));
        }
        let mut dists = Vec::with_capacity(costs.len());
        let mut acc = 0u64;
        for &c in costs.iter().rev() {
            acc = acc
                .checked_add(c)
                .ok_or_else(|| ArchError::invalid("tleaf distances overflow"))?;
            dists.push(acc);
        }
        Tree::new(sizes.into_iter().rev().collect(), dists)
    }

    /// Level counts, bottom-up.
    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// Level distances, bottom-up.
    pub fn dists(&self) -> &[u64] {
        &self.dists
    }

    /// Scotch `tleaf` sizes and link costs (top-down), when they exist: levels of count 1
    /// are dropped (no PE pair differs there) and the remaining distances must increase
    /// strictly upwards.
    pub fn tleaf_levels(&self) -> Option<(Vec<u32>, Vec<u64>)> {
        let lv: Vec<(u32, u64)> = self
            .counts
            .iter()
            .zip(&self.dists)
            .filter(|(&c, _)| c >= 2)
            .map(|(&c, &d)| (c, d))
            .collect();
        if lv.is_empty() || lv.windows(2).any(|w| w[1].1 <= w[0].1) {
            return None;
        }
        let mut sizes = Vec::new();
        let mut costs = Vec::new();
        for i in (0..lv.len()).rev() {
            sizes.push(lv[i].0);
            costs.push(if i == 0 {
                lv[0].1
            } else {
                lv[i].1 - lv[i - 1].1
            });
        }
        Some((sizes, costs))
    }

    fn levels(&self) -> u32 {
        self.counts.len() as u32
    }

    /// PEs below one node at depth `d` from the root.
    fn node_size(&self, depth: u32) -> u32 {
        self.block[(self.levels() - depth) as usize]
    }

    fn first_pe(&self, d: &Domain) -> u32 {
        d.b * self.node_size(d.a)
    }
}

impl Architecture for Tree {
    /// Every PE has capacity 1.
    fn total_capacity(&self) -> u128 {
        u128::from(self.pe_count())
    }
    fn pe_count(&self) -> u32 {
        self.block[self.counts.len()]
    }
    fn traffic_routes(&self) -> Option<Box<dyn crate::TrafficRoutes + '_>> {
        Some(Box::new(crate::routes::TreeRoutes::new(&self.block)))
    }
    #[inline]
    fn distance(&self, a: PeId, b: PeId) -> u64 {
        if a == b {
            return 0;
        }
        for i in (1..self.counts.len()).rev() {
            let s = self.block[i];
            if a.0 / s != b.0 / s {
                return self.dists[i];
            }
        }
        self.dists[0]
    }
    fn root(&self) -> Domain {
        Domain { a: 0, b: 0, c: 1 }
    }
    fn bipartition(&self, d: &Domain) -> Option<(Domain, Domain)> {
        let (mut depth, mut first, mut count) = (d.a, d.b, d.c);
        while count == 1 {
            if depth == self.levels() {
                return None;
            }
            let s = self.counts[(self.levels() - 1 - depth) as usize];
            first *= s;
            count = s;
            depth += 1;
        }
        let n0 = count.div_ceil(2);
        Some((
            Domain {
                a: depth,
                b: first,
                c: n0,
            },
            Domain {
                a: depth,
                b: first + n0,
                c: count - n0,
            },
        ))
    }
    fn domain_distance(&self, a: &Domain, b: &Domain) -> u64 {
        if a == b {
            return 0;
        }
        let (pa, pb) = (self.first_pe(a), self.first_pe(b));
        let (sa, sb) = (self.domain_size(a), self.domain_size(b));
        let d = self.distance(PeId(pa), PeId(pb));
        if pa >= pb + sb || pb >= pa + sa {
            d
        } else {
            d / 2
        }
    }
    fn domain_size(&self, d: &Domain) -> u32 {
        d.c * self.node_size(d.a)
    }
    fn domain_pes(&self, d: &Domain, out: &mut Vec<PeId>) {
        let f = self.first_pe(d);
        out.extend((f..f + self.domain_size(d)).map(PeId));
    }
    fn domain_capacity(&self, d: &Domain) -> u64 {
        u64::from(self.domain_size(d))
    }
    fn spec(&self) -> String {
        let c: Vec<String> = self.counts.iter().map(|x| x.to_string()).collect();
        let d: Vec<String> = self.dists.iter().map(|x| x.to_string()).collect();
        format!("tree:{}/{}", c.join(":"), d.join(":"))
    }
    fn name(&self) -> &'static str {
        "tree"
    }
    fn known_diameter(&self) -> Option<u64> {
        Some(
            self.counts
                .iter()
                .zip(&self.dists)
                .filter(|(&c, _)| c >= 2)
                .map(|(_, &d)| d)
                .max()
                .unwrap_or(0),
        )
    }
    fn is_uniform(&self) -> bool {
        true
    }
    /// Leaves hang below one switch per group; an edge from a level-`i` switch up to its
    /// parent costs `dists[i+1] - dists[i]`, a leaf edge `dists[0]`, so that shortest paths
    /// are twice the tree distances (`scale = 2`). Only when the distances increase
    /// strictly upwards and `k <= 2^22`.
    fn link_graph(&self) -> Option<LinkGraph> {
        let k = self.pe_count();
        if k > 1 << 22 || self.dists.windows(2).any(|w| w[1] <= w[0]) {
            return None;
        }
        let l = self.counts.len();
        // offset[i]: first vertex id of the level-i switches.
        let mut offset = Vec::with_capacity(l);
        let mut next = k;
        for i in 0..l {
            offset.push(next);
            next += k / self.block[i + 1];
        }
        let mut edges = Vec::new();
        for p in 0..k {
            edges.push((p, offset[0] + p / self.block[1], self.dists[0]));
        }
        for i in 1..l {
            let w = self.dists[i] - self.dists[i - 1];
            for s in 0..k / self.block[i] {
                edges.push((offset[i - 1] + s, offset[i] + s / self.counts[i], w));
            }
        }
        Some(LinkGraph::new(next, edges, 2))
    }
    fn scotch_target(&self) -> Option<String> {
        let (sizes, costs) = self.tleaf_levels()?;
        let mut s = format!("tleaf {}", sizes.len());
        for (a, c) in sizes.iter().zip(&costs) {
            s.push_str(&format!(" {a} {c}"));
        }
        Some(s)
    }
}
