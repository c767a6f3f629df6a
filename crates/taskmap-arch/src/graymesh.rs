//! A hypercube's PEs laid out as a two-dimensional mesh by Gray codes: the domains a
//! recursive mapper splits a hypercube by when the task graph is mesh-like.

use crate::{Architecture, Domain, Mesh, PeId};

/// The reflected binary Gray code of `x`.
#[inline]
fn gray(x: u32) -> u32 {
    x ^ (x >> 1)
}

/// The `x` whose Gray code is `g`.
#[inline]
fn gray_inverse(mut g: u32) -> u32 {
    let mut x = g;
    while g > 1 {
        g >>= 1;
        x ^= g;
    }
    x
}

/// The PEs of `hypercube:d` (`d ≥ 2`) as the mesh `2^a x 2^b`, `a = ⌈d/2⌉`, `b = ⌊d/2⌋`:
/// the mesh PE at `(x, y)` is the hypercube PE `gray(x) | gray(y) << a`. Consecutive
/// Gray codes differ in one bit, so two PEs next to each other on the mesh are next to
/// each other on the hypercube, and every mesh distance is at least the hypercube's
/// (Hamming) distance: a mapping made for this target costs at most as much on the
/// hypercube. Its domains are the mesh's boxes (each a subcube of the hypercube when
/// both sides are aligned powers of two, as the mesh's halving makes them), its distances
/// the mesh's; PE ids are the hypercube's.
#[derive(Clone, Debug)]
pub struct GrayMesh {
    dim: u32,
    mesh: Mesh,
    /// Bits of the first mesh coordinate, `a`.
    low: u32,
}

impl GrayMesh {
    /// The layout of `hypercube:dim`; `None` below two dimensions (nothing to lay out).
    pub fn new(dim: u32) -> Option<Self> {
        if !(2..=31).contains(&dim) {
            return None;
        }
        let low = dim.div_ceil(2);
        let mesh = Mesh::new(vec![1 << low, 1 << (dim - low)]).ok()?;
        Some(GrayMesh { dim, mesh, low })
    }

    /// The hypercube PE of a mesh PE.
    #[inline]
    fn outer(&self, p: PeId) -> PeId {
        let x = p.0 & ((1 << self.low) - 1);
        let y = p.0 >> self.low;
        PeId(gray(x) | (gray(y) << self.low))
    }

    /// The mesh PE of a hypercube PE.
    #[inline]
    fn inner(&self, p: PeId) -> PeId {
        let x = gray_inverse(p.0 & ((1 << self.low) - 1));
        let y = gray_inverse(p.0 >> self.low);
        PeId(x | (y << self.low))
    }
}

impl Architecture for GrayMesh {
    /// Every PE has capacity 1.
    fn total_capacity(&self) -> u128 {
        u128::from(self.pe_count())
    }
    fn pe_count(&self) -> u32 {
        1 << self.dim
    }
    fn distance(&self, a: PeId, b: PeId) -> u64 {
        self.mesh.distance(self.inner(a), self.inner(b))
    }
    fn root(&self) -> Domain {
        self.mesh.root()
    }
    fn bipartition(&self, d: &Domain) -> Option<(Domain, Domain)> {
        self.mesh.bipartition(d)
    }
    fn domain_distance(&self, a: &Domain, b: &Domain) -> u64 {
        self.mesh.domain_distance(a, b)
    }
    fn domain_size(&self, d: &Domain) -> u32 {
        self.mesh.domain_size(d)
    }
    fn domain_pes(&self, d: &Domain, out: &mut Vec<PeId>) {
        let start = out.len();
        self.mesh.domain_pes(d, out);
        for p in &mut out[start..] {
            *p = self.outer(*p);
        }
    }
    fn domain_capacity(&self, d: &Domain) -> u64 {
        u64::from(self.mesh.domain_size(d))
    }
    fn spec(&self) -> String {
        format!("hypercube:{}", self.dim)
    }
    fn name(&self) -> &'static str {
        "hypercube-gray-mesh"
    }
    fn known_diameter(&self) -> Option<u64> {
        self.mesh.known_diameter()
    }
    fn is_uniform(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Hypercube;

    #[test]
    fn gray_codes_round_trip_and_step_by_one_bit() {
        for x in 0..1024u32 {
            assert_eq!(gray_inverse(gray(x)), x);
            assert_eq!((gray(x) ^ gray(x + 1)).count_ones(), 1);
        }
    }

    /// Every hypercube PE appears once; mesh neighbours are hypercube neighbours; mesh
    /// distances bound the hypercube's from above; the domains of a full bipartition hold
    /// the PEs of subcubes.
    #[test]
    fn lays_out_every_pe_once_with_larger_distances() {
        for dim in 2..=9 {
            let h = Hypercube::new(dim).unwrap();
            let g = GrayMesh::new(dim).unwrap();
            let mut all = Vec::new();
            g.domain_pes(&g.root(), &mut all);
            let mut sorted: Vec<u32> = all.iter().map(|p| p.0).collect();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..1u32 << dim).collect::<Vec<_>>(), "dim {dim}");
            for a in 0..1u32 << dim {
                assert_eq!(g.outer(g.inner(PeId(a))), PeId(a));
                for b in 0..1u32 << dim {
                    let (dg, dh) = (g.distance(PeId(a), PeId(b)), h.distance(PeId(a), PeId(b)));
                    assert!(dg >= dh, "dim {dim}: {a} {b}");
                    if dg == 1 {
                        assert_eq!(dh, 1);
                    }
                }
            }
            // Halves of halves: each domain's PEs agree on the bits the splits fixed.
            let mut stack = vec![g.root()];
            while let Some(d) = stack.pop() {
                let mut pes = Vec::new();
                g.domain_pes(&d, &mut pes);
                let and = pes.iter().fold(u32::MAX, |m, p| m & p.0);
                let or = pes.iter().fold(0, |m, p| m | p.0);
                assert_eq!(1usize << (and ^ or).count_ones(), pes.len(), "a subcube");
                if let Some((a, b)) = g.bipartition(&d) {
                    stack.push(a);
                    stack.push(b);
                }
            }
        }
        assert!(GrayMesh::new(1).is_none());
    }
}
