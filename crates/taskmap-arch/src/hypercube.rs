//! The binary hypercube (Scotch `hcub`): PE ids are the binary labels, the distance is the
//! Hamming distance.

use crate::{ArchError, Architecture, Domain, LinkGraph, LinkId, PeId, Routing};

/// A `dim`-dimensional binary hypercube with `2^dim` PEs.
///
/// Domains are subcubes: `Domain.a` = number of fixed high bits `f`, `Domain.b` = their
/// value, so a domain is the PE range `b << (dim - f) ..` of length `2^(dim - f)`.
/// Bipartition fixes the next (highest free) bit. Domain distance is the Manhattan distance
/// between the subcube centres (a free bit sits at 1/2), rounded half up.
///
/// Routes are e-cube (the lowest differing bit first). Link `pe * dim + i` goes from `pe`
/// to `pe ^ (1 << i)`.
#[derive(Clone, Debug)]
pub struct Hypercube {
    dim: u32,
}

impl Hypercube {
    /// `dim` in `0..=31` (`2^dim` PEs must fit a `u32`).
    pub fn new(dim: u32) -> Result<Self, ArchError> {
        if dim > 31 {
            return Err(ArchError::invalid(format!(
                "hypercube dimension {dim} is too large (at most 31)"
            )));
        }
        Ok(Hypercube { dim })
    }

    /// The dimension.
    pub fn dim(&self) -> u32 {
        self.dim
    }

    fn links_ok(&self) -> bool {
        (1u64 << self.dim) * u64::from(self.dim) <= u64::from(u32::MAX)
    }
}

impl Architecture for Hypercube {
    /// Every PE has capacity 1.
    fn total_capacity(&self) -> u128 {
        u128::from(self.pe_count())
    }
    fn pe_count(&self) -> u32 {
        1 << self.dim
    }
    #[inline]
    fn distance(&self, a: PeId, b: PeId) -> u64 {
        u64::from((a.0 ^ b.0).count_ones())
    }
    fn root(&self) -> Domain {
        Domain { a: 0, b: 0, c: 0 }
    }
    fn bipartition(&self, d: &Domain) -> Option<(Domain, Domain)> {
        (d.a < self.dim).then(|| {
            (
                Domain {
                    a: d.a + 1,
                    b: d.b << 1,
                    c: 0,
                },
                Domain {
                    a: d.a + 1,
                    b: (d.b << 1) | 1,
                    c: 0,
                },
            )
        })
    }
    fn domain_distance(&self, a: &Domain, b: &Domain) -> u64 {
        let f = a.a.min(b.a);
        let ham = ((a.b >> (a.a - f)) ^ (b.b >> (b.a - f))).count_ones();
        u64::from(ham) + u64::from(a.a.abs_diff(b.a)).div_ceil(2)
    }
    fn domain_size(&self, d: &Domain) -> u32 {
        1 << (self.dim - d.a)
    }
    fn domain_pes(&self, d: &Domain, out: &mut Vec<PeId>) {
        let first = if d.a == 0 { 0 } else { d.b << (self.dim - d.a) };
        out.extend((first..first + self.domain_size(d)).map(PeId));
    }
    fn domain_capacity(&self, d: &Domain) -> u64 {
        u64::from(self.domain_size(d))
    }
    fn routing(&self) -> Option<&dyn Routing> {
        self.links_ok().then_some(self as &dyn Routing)
    }
    fn spec(&self) -> String {
        format!("hypercube:{}", self.dim)
    }
    fn name(&self) -> &'static str {
        "hypercube"
    }
    fn known_diameter(&self) -> Option<u64> {
        Some(u64::from(self.dim))
    }
    fn shape(&self) -> crate::Shape<'_> {
        crate::Shape::Hypercube { dim: self.dim }
    }
    fn is_uniform(&self) -> bool {
        true
    }
    fn link_graph(&self) -> Option<LinkGraph> {
        if self.dim > 24 {
            return None;
        }
        let k = self.pe_count();
        let mut edges = Vec::new();
        for p in 0..k {
            for i in 0..self.dim {
                let q = p ^ (1 << i);
                if p < q {
                    edges.push((p, q, 1));
                }
            }
        }
        Some(LinkGraph::new(k, edges, 1))
    }
    fn scotch_target(&self) -> Option<String> {
        Some(format!("hcub {}", self.dim))
    }
}

impl Routing for Hypercube {
    fn link_count(&self) -> u32 {
        if self.links_ok() {
            (1 << self.dim) * self.dim
        } else {
            0
        }
    }
    fn route(&self, a: PeId, b: PeId, out: &mut Vec<LinkId>) {
        let mut cur = a.0;
        let mut diff = a.0 ^ b.0;
        while diff != 0 {
            let i = diff.trailing_zeros();
            out.push(cur * self.dim + i);
            cur ^= 1 << i;
            diff &= diff - 1;
        }
    }
    fn physical_link_count(&self) -> u64 {
        u64::from(self.link_count())
    }
    fn link_endpoints(&self, link: LinkId) -> Option<(PeId, PeId)> {
        if !self.links_ok() || link >= self.link_count() {
            return None;
        }
        let (pe, i) = (link / self.dim, link % self.dim);
        Some((PeId(pe), PeId(pe ^ (1 << i))))
    }
}
