//! A precomputed bipartition tree: the domains of architectures without a closed-form
//! domain shape (weighted complete graphs, explicit graphs, distance matrices, subsets).
//!
//! `Domain.a` is the node index; node 0 is the root. Every node holds a contiguous range of
//! `order` (the PEs in bipartition order), so a domain's PEs are a slice. Memory is O(k):
//! `2k - 1` nodes and one `order` array.

use crate::{Domain, PeId};

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub first: u32,
    pub len: u32,
    /// Index of the first child (the second is `left + 1`), `NONE` for a leaf.
    pub left: u32,
    /// Representative PE (used for domain distances).
    pub rep: PeId,
    pub cap: u64,
}

#[derive(Clone, Debug)]
pub(crate) struct DomainTree {
    pub order: Vec<PeId>,
    pub nodes: Vec<Node>,
}

impl DomainTree {
    /// Builds the tree breadth first. `split` reorders a slice of at least two PEs so that
    /// the first part comes first and returns its length (clamped to `1..len`), with the
    /// per-node states of both parts. Returns the tree and the state of every node.
    pub fn build<S: Clone>(
        order: Vec<PeId>,
        root: S,
        cap: impl Fn(PeId) -> u64,
        mut split: impl FnMut(&mut [PeId], &S) -> (usize, S, S),
    ) -> (DomainTree, Vec<S>) {
        let mut order = order;
        let k = order.len();
        let mut nodes = Vec::with_capacity(2 * k.max(1) - 1);
        let mut states = Vec::with_capacity(2 * k.max(1) - 1);
        nodes.push(Node {
            first: 0,
            len: k as u32,
            left: NONE,
            rep: order.first().copied().unwrap_or_default(),
            cap: 0,
        });
        states.push(root);
        let mut i = 0;
        while i < nodes.len() {
            let Node { first, len, .. } = nodes[i];
            let slice = &mut order[first as usize..(first + len) as usize];
            nodes[i].cap = slice.iter().map(|&p| cap(p)).sum();
            nodes[i].rep = slice[0];
            if len >= 2 {
                let (n0, s0, s1) = split(slice, &states[i]);
                let n0 = n0.clamp(1, len as usize - 1) as u32;
                let left = nodes.len() as u32;
                nodes[i].left = left;
                for (f, l, s) in [(first, n0, s0), (first + n0, len - n0, s1)] {
                    nodes.push(Node {
                        first: f,
                        len: l,
                        left: NONE,
                        rep: PeId(0),
                        cap: 0,
                    });
                    states.push(s);
                }
            }
            i += 1;
        }
        (DomainTree { order, nodes }, states)
    }

    /// Sets every node's representative from its PE slice.
    pub fn set_reps(&mut self, mut rep: impl FnMut(&[PeId]) -> PeId) {
        for i in 0..self.nodes.len() {
            let n = self.nodes[i];
            if n.len > 1 {
                self.nodes[i].rep = rep(&self.order[n.first as usize..(n.first + n.len) as usize]);
            }
        }
    }

    pub fn node(&self, d: &Domain) -> &Node {
        &self.nodes[d.a as usize]
    }

    pub fn root(&self) -> Domain {
        Domain { a: 0, b: 0, c: 0 }
    }

    pub fn bipartition(&self, d: &Domain) -> Option<(Domain, Domain)> {
        let n = self.node(d);
        (n.left != NONE).then(|| {
            (
                Domain {
                    a: n.left,
                    b: 0,
                    c: 0,
                },
                Domain {
                    a: n.left + 1,
                    b: 0,
                    c: 0,
                },
            )
        })
    }

    /// The representative PEs of two different domains (`None` for one domain twice).
    pub fn reps(&self, a: &Domain, b: &Domain) -> Option<(PeId, PeId)> {
        (a.a != b.a).then(|| (self.node(a).rep, self.node(b).rep))
    }

    pub fn pes(&self, d: &Domain) -> &[PeId] {
        let n = self.node(d);
        &self.order[n.first as usize..(n.first + n.len) as usize]
    }
}

/// The member with the smallest sum of distances to the others, evaluated on at most 64
/// evenly spread candidates against at most 256 evenly spread members (deterministic).
pub(crate) fn medoid(pes: &[PeId], dist: impl Fn(PeId, PeId) -> u64) -> PeId {
    let stride = |n: usize, max: usize| n.div_ceil(max).max(1);
    let cs = stride(pes.len(), 64);
    let ms = stride(pes.len(), 256);
    let mut best = (u64::MAX, pes[0]);
    for &c in pes.iter().step_by(cs) {
        let s: u64 = pes
            .iter()
            .step_by(ms)
            .map(|&m| dist(c, m))
            .fold(0u64, |a, b| a.saturating_add(b));
        if s < best.0 {
            best = (s, c);
        }
    }
    best.1
}

/// The domain methods of an [`Architecture`](crate::Architecture) whose domains are the
/// nodes of its `tree` field, a [`DomainTree`]: one copy for every such target
/// (`domain_distance` stays each target's own).
macro_rules! tree_domains {
    () => {
        fn root(&self) -> $crate::Domain {
            self.tree.root()
        }
        fn bipartition(&self, d: &$crate::Domain) -> Option<($crate::Domain, $crate::Domain)> {
            self.tree.bipartition(d)
        }
        fn domain_size(&self, d: &$crate::Domain) -> u32 {
            self.tree.node(d).len
        }
        fn domain_pes(&self, d: &$crate::Domain, out: &mut Vec<$crate::PeId>) {
            out.extend_from_slice(self.tree.pes(d));
        }
        fn domain_capacity(&self, d: &$crate::Domain) -> u64 {
            self.tree.node(d).cap
        }
    };
}
pub(crate) use tree_domains;
