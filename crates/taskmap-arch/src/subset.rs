//! A subset of the PEs of another architecture (Scotch `sub`).

use crate::domtree::DomainTree;
use crate::{ArchError, Architecture, Domain, PeId};

/// Largest inner architecture a subset may be taken from (the construction marks inner
/// PEs in a table of this size at most).
pub const SUBSET_MAX_INNER_PES: u32 = 1 << 26;

/// The PEs `pes[0], pes[1], ...` of an inner architecture, renumbered `0, 1, ...` in that
/// order. Distances and capacities are the inner ones.
///
/// Bipartition (precomputed at construction): the inner domains are split recursively and
/// restricted to the subset; a split leaving one side empty is skipped (the non-empty side
/// is split again), so no domain is ever empty. Each node remembers the inner domain it
/// came from; the distance of two domains is the inner domain distance of those inner
/// domains, and the inner distance itself when both are single PEs.
///
/// CLI syntax: `sub:LIST:INNER` where `LIST` is a comma-separated list of inner PE ids and
/// inclusive ascending ranges `a-b`, and `INNER` any spec (`sub:0-3,8-11:torus:8x8`).
/// Scotch syntax: `sub n p0 .. p(n-1)` followed by the inner target.
#[derive(Debug)]
pub struct Subset {
    inner: Box<dyn Architecture>,
    pes: Vec<PeId>,
    tree: DomainTree,
    inner_dom: Vec<Domain>,
    /// The spec, when the subset was read from a file that names it whole (a `deco 2`).
    spec: Option<String>,
}

impl Subset {
    /// The listed inner PEs (at least one, each `< inner.pe_count()`, no duplicate); the
    /// inner architecture has at most [`SUBSET_MAX_INNER_PES`] PEs.
    pub fn new(inner: Box<dyn Architecture>, pes: Vec<PeId>) -> Result<Self, ArchError> {
        let ik = inner.pe_count();
        if pes.is_empty() {
            return Err(ArchError::invalid("a subset needs at least one PE"));
        }
        if ik > SUBSET_MAX_INNER_PES {
            return Err(ArchError::invalid(format!(
                "subsets of architectures with more than {SUBSET_MAX_INNER_PES} PEs are not supported"
            )));
        }
        let mut seen = vec![false; ik as usize];
        for &p in &pes {
            if p.0 >= ik {
                return Err(ArchError::invalid(format!(
                    "subset PE {} is out of range (the inner architecture has {ik} PEs)",
                    p.0
                )));
            }
            if std::mem::replace(&mut seen[p.idx()], true) {
                return Err(ArchError::invalid(format!(
                    "subset PE {} is listed twice",
                    p.0
                )));
            }
        }
        let n = pes.len() as u32;
        let mut mark = vec![0u32; ik as usize];
        let mut stamp = 0u32;
        let mut buf = Vec::new();
        let (tree, inner_dom) = DomainTree::build(
            (0..n).map(PeId).collect(),
            inner.root(),
            |p| inner.pe_capacity(pes[p.idx()]),
            |slice, dom| {
                let mut dom = *dom;
                loop {
                    let (h0, h1) = inner
                        .bipartition(&dom)
                        .expect("inner architecture cannot split a domain holding two PEs");
                    // Mark the smaller half.
                    let small0 = inner.domain_size(&h0) <= inner.domain_size(&h1);
                    stamp += 1;
                    buf.clear();
                    inner.domain_pes(if small0 { &h0 } else { &h1 }, &mut buf);
                    for p in &buf {
                        mark[p.idx()] = stamp;
                    }
                    let in0 = |s: PeId| (mark[pes[s.idx()].idx()] == stamp) == small0;
                    let n0 = slice.iter().filter(|&&s| in0(s)).count();
                    if n0 == 0 {
                        dom = h1;
                    } else if n0 == slice.len() {
                        dom = h0;
                    } else {
                        let mut v: Vec<PeId> = slice.iter().copied().filter(|&s| in0(s)).collect();
                        v.extend(slice.iter().copied().filter(|&s| !in0(s)));
                        slice.copy_from_slice(&v);
                        return (n0, h0, h1);
                    }
                }
            },
        );
        Ok(Subset {
            inner,
            pes,
            tree,
            inner_dom,
            spec: None,
        })
    }

    /// Gives the subset the spec it was read with (a target file that holds it whole).
    pub(crate) fn with_spec(mut self, spec: String) -> Self {
        self.spec = Some(spec);
        self
    }

    /// The inner architecture.
    pub fn inner(&self) -> &dyn Architecture {
        &*self.inner
    }

    /// The inner PE of every subset PE.
    pub fn pes(&self) -> &[PeId] {
        &self.pes
    }
}

/// Formats a PE list with ascending runs as ranges: `0-3,8,10-11`.
pub(crate) fn format_pe_list(pes: &[PeId]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < pes.len() {
        let mut j = i;
        while j + 1 < pes.len() && pes[j + 1].0 == pes[j].0.wrapping_add(1) {
            j += 1;
        }
        if j > i {
            out.push(format!("{}-{}", pes[i].0, pes[j].0));
        } else {
            out.push(pes[i].0.to_string());
        }
        i = j + 1;
    }
    out.join(",")
}

// `unwrapped` is not forwarded: the inner target's PE ids are not this target's; nor is
// `grid_dims`: a subset of a mesh or torus is not one.
impl Architecture for Subset {
    fn traffic_routes(&self) -> Option<Box<dyn crate::TrafficRoutes + '_>> {
        let inner = self.inner.traffic_routes()?;
        if inner.link_count() > crate::MAX_TRAFFIC_LINKS {
            return None;
        }
        Some(Box::new(crate::routes::SubsetRoutes::new(inner, &self.pes)))
    }
    fn pe_count(&self) -> u32 {
        self.pes.len() as u32
    }
    #[inline]
    fn distance(&self, a: PeId, b: PeId) -> u64 {
        self.inner.distance(self.pes[a.idx()], self.pes[b.idx()])
    }
    fn pe_capacity(&self, pe: PeId) -> u64 {
        self.inner.pe_capacity(self.pes[pe.idx()])
    }
    crate::domtree::tree_domains!();
    fn domain_distance(&self, a: &Domain, b: &Domain) -> u64 {
        if a.a == b.a {
            return 0;
        }
        let (na, nb) = (self.tree.node(a), self.tree.node(b));
        if na.len == 1 && nb.len == 1 {
            return self.distance(
                self.tree.order[na.first as usize],
                self.tree.order[nb.first as usize],
            );
        }
        self.inner
            .domain_distance(&self.inner_dom[a.a as usize], &self.inner_dom[b.a as usize])
    }
    fn spec(&self) -> String {
        match &self.spec {
            Some(s) => s.clone(),
            None => format!("sub:{}:{}", format_pe_list(&self.pes), self.inner.spec()),
        }
    }
    fn name(&self) -> &'static str {
        "sub"
    }
    fn scotch_target(&self) -> Option<String> {
        let inner = self.inner.scotch_target()?;
        let list: Vec<String> = self.pes.iter().map(|p| p.0.to_string()).collect();
        Some(format!(
            "sub {} {}\n{inner}",
            self.pes.len(),
            list.join(" ")
        ))
    }
}
