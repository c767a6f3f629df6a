//! Meshes of any number of dimensions (Scotch `mesh2D`, `mesh3D`, `meshXD`), and the grid
//! core shared with [`crate::Torus`].

use crate::{ArchError, Domain, LinkGraph, LinkId, PeId};

/// The shared core of meshes and tori (k-ary n-cubes).
///
/// PE numbering: row-major with dimension 0 fastest,
/// `pe = x0 + d0 * (x1 + d1 * (x2 + ...))` — Scotch's `t(x, y) = y * dX + x`.
///
/// Domains are boxes, encoded by their two corner PEs: `Domain.a` = the lower corner (the
/// smallest PE id of the box), `Domain.b` = the upper corner (the largest). No table is
/// kept, so memory is O(dims).
#[derive(Clone, Debug)]
pub(crate) struct Grid {
    pub dims: Vec<u32>,
    strides: Vec<u32>,
    k: u32,
    pub torus: bool,
}

impl Grid {
    pub fn new(dims: Vec<u32>, torus: bool) -> Result<Self, ArchError> {
        let what = if torus { "torus" } else { "mesh" };
        if dims.is_empty() {
            return Err(ArchError::invalid(format!(
                "a {what} needs at least one dimension"
            )));
        }
        if let Some(i) = dims.iter().position(|&d| d == 0) {
            return Err(ArchError::invalid(format!(
                "{what} dimension {i} has size 0"
            )));
        }
        let mut strides = Vec::with_capacity(dims.len());
        let mut k: u32 = 1;
        for &d in &dims {
            strides.push(k);
            k = k.checked_mul(d).ok_or_else(|| {
                ArchError::invalid(format!("{what} has more than {} PEs", u32::MAX))
            })?;
        }
        Ok(Grid {
            dims,
            strides,
            k,
            torus,
        })
    }

    #[inline]
    fn axis(&self, d: u32, dx: u32) -> u32 {
        if self.torus {
            dx.min(d - dx)
        } else {
            dx
        }
    }

    #[inline]
    pub fn distance(&self, a: PeId, b: PeId) -> u64 {
        let (mut a, mut b) = (a.0, b.0);
        let mut s = 0u64;
        for &d in &self.dims {
            if a == b {
                break;
            }
            let dx = (a % d).abs_diff(b % d);
            s += u64::from(self.axis(d, dx));
            a /= d;
            b /= d;
        }
        s
    }

    /// `out[b] = distance(a, b)` for the first `out.len()` PEs `b`, walking `b`'s
    /// coordinates like an odometer (no division per PE).
    pub fn distances_from(&self, a: PeId, out: &mut [u64]) {
        let nd = self.dims.len();
        let mut ca = [0u32; 8];
        let mut cb = [0u32; 8];
        if nd > ca.len() {
            for (b, o) in out.iter_mut().enumerate() {
                *o = self.distance(a, PeId(b as u32));
            }
            return;
        }
        let mut x = a.0;
        for (i, &d) in self.dims.iter().enumerate() {
            ca[i] = x % d;
            x /= d;
        }
        if nd == 0 || out.is_empty() {
            out.fill(0);
            return;
        }
        // The first axis runs fastest: its distances fill the first row of d0 PEs, and
        // every later row is that row plus the distance along the other axes (an odometer
        // over them rescores only the axes that change). A row cut short by the end of
        // `out` gets its first PEs only.
        let d0 = (self.dims[0] as usize).min(out.len());
        let (first, rest) = out.split_at_mut(d0);
        for (j, o) in first.iter_mut().enumerate() {
            *o = u64::from(self.axis(self.dims[0], ca[0].abs_diff(j as u32)));
        }
        let mut part = [0u64; 8];
        let mut sum = 0u64;
        for i in 1..nd {
            part[i] = u64::from(self.axis(self.dims[i], ca[i]));
            sum += part[i];
        }
        let sum0 = sum;
        for row in rest.chunks_mut(d0) {
            for i in 1..nd {
                cb[i] += 1;
                let wrapped = cb[i] == self.dims[i];
                if wrapped {
                    cb[i] = 0;
                }
                let p = u64::from(self.axis(self.dims[i], ca[i].abs_diff(cb[i])));
                sum = sum - part[i] + p;
                part[i] = p;
                if !wrapped {
                    break;
                }
            }
            for (o, &f) in row.iter_mut().zip(first.iter()) {
                *o = f + sum;
            }
        }
        first.iter_mut().for_each(|o| *o += sum0);
    }

    pub fn root(&self) -> Domain {
        Domain {
            a: 0,
            b: self.k - 1,
            c: 0,
        }
    }

    /// Iterates `(dim index, size, lo, hi)` of a box.
    fn bounds<'s>(&'s self, d: &Domain) -> impl Iterator<Item = (usize, u32, u32, u32)> + 's {
        let (mut lo, mut hi) = (d.a, d.b);
        self.dims.iter().enumerate().map(move |(i, &n)| {
            let r = (i, n, lo % n, hi % n);
            lo /= n;
            hi /= n;
            r
        })
    }

    /// Splits the box along its largest extent (ties: the lowest dimension) into a lower
    /// half of `ceil(n/2)` and an upper half of `floor(n/2)` layers.
    pub fn bipartition(&self, d: &Domain) -> Option<(Domain, Domain)> {
        let mut best: Option<(u32, usize, u32, u32)> = None;
        for (i, _, lo, hi) in self.bounds(d) {
            let ext = hi - lo + 1;
            let better = match best {
                None => true,
                Some(b) => ext > b.0,
            };
            if ext >= 2 && better {
                best = Some((ext, i, lo, hi));
            }
        }
        let (ext, i, lo, hi) = best?;
        let mid = lo + ext.div_ceil(2) - 1;
        let s = self.strides[i];
        Some((
            Domain {
                a: d.a,
                b: d.b - (hi - mid) * s,
                c: 0,
            },
            Domain {
                a: d.a + (mid + 1 - lo) * s,
                b: d.b,
                c: 0,
            },
        ))
    }

    /// Manhattan distance between the box centres (with wrap-around in a torus), each
    /// axis rounded half up as Scotch does.
    pub fn domain_distance(&self, a: &Domain, b: &Domain) -> u64 {
        let mut s = 0u64;
        for ((_, n, lo0, hi0), (_, _, lo1, hi1)) in self.bounds(a).zip(self.bounds(b)) {
            let diff = (u64::from(lo0) + u64::from(hi0)).abs_diff(u64::from(lo1) + u64::from(hi1));
            let diff = if self.torus {
                diff.min(2 * u64::from(n) - diff)
            } else {
                diff
            };
            s += diff.div_ceil(2);
        }
        s
    }

    pub fn domain_size(&self, d: &Domain) -> u32 {
        self.bounds(d).map(|(_, _, lo, hi)| hi - lo + 1).product()
    }

    pub fn domain_pes(&self, d: &Domain, out: &mut Vec<PeId>) {
        let b: Vec<(usize, u32, u32, u32)> = self.bounds(d).collect();
        let mut x: Vec<u32> = b.iter().map(|t| t.2).collect();
        loop {
            let pe: u32 = x.iter().zip(&self.strides).map(|(&c, &s)| c * s).sum();
            out.push(PeId(pe));
            let mut i = 0;
            loop {
                if i == x.len() {
                    return;
                }
                if x[i] < b[i].3 {
                    x[i] += 1;
                    break;
                }
                x[i] = b[i].2;
                i += 1;
            }
        }
    }

    pub(crate) fn links_ok(&self) -> bool {
        u64::from(self.k) * self.dims.len() as u64 * 2 <= u64::from(u32::MAX)
    }

    /// Link id of the link leaving `pe` along dimension `i`, in direction `+` (`neg =
    /// false`) or `-`.
    #[inline]
    fn link(&self, pe: u32, i: usize, neg: bool) -> LinkId {
        (pe * self.dims.len() as u32 + i as u32) * 2 + u32::from(neg)
    }
}

impl crate::Routing for Grid {
    fn link_count(&self) -> u32 {
        if self.links_ok() {
            self.k * self.dims.len() as u32 * 2
        } else {
            0
        }
    }

    fn route(&self, a: PeId, b: PeId, out: &mut Vec<LinkId>) {
        let mut cur = a.0;
        for (i, &n) in self.dims.iter().enumerate() {
            let s = self.strides[i];
            let xa = (cur / s) % n;
            let xb = (b.0 / s) % n;
            if xa == xb {
                continue;
            }
            let (neg, steps) = if self.torus {
                let fwd = ((u64::from(xb) + u64::from(n) - u64::from(xa)) % u64::from(n)) as u32;
                if fwd <= n - fwd {
                    (false, fwd)
                } else {
                    (true, n - fwd)
                }
            } else if xb > xa {
                (false, xb - xa)
            } else {
                (true, xa - xb)
            };
            let mut x = xa;
            for _ in 0..steps {
                out.push(self.link(cur, i, neg));
                let nx = match (neg, x) {
                    (true, 0) => n - 1,
                    (true, _) => x - 1,
                    (false, _) if x + 1 == n => 0,
                    (false, _) => x + 1,
                };
                cur = cur - x * s + nx * s;
                x = nx;
            }
        }
    }

    fn physical_link_count(&self) -> u64 {
        if self.link_count() == 0 {
            return 0;
        }
        // Per dimension of size n: both directions of every PE on a torus ring (n > 1),
        // all but the boundary's on a mesh.
        let k = u64::from(self.k);
        self.dims
            .iter()
            .map(|&n| match (n, self.torus) {
                (1, _) => 0,
                (_, true) => 2 * k,
                (n, false) => 2 * (k / u64::from(n)) * u64::from(n - 1),
            })
            .sum()
    }
    fn link_endpoints(&self, link: LinkId) -> Option<(PeId, PeId)> {
        if link >= self.link_count() {
            return None;
        }
        let nd = self.dims.len() as u32;
        let neg = link % 2 == 1;
        let i = ((link / 2) % nd) as usize;
        let pe = link / 2 / nd;
        let (n, s) = (self.dims[i], self.strides[i]);
        let x = (pe / s) % n;
        let nx = match (neg, self.torus) {
            (false, _) if x + 1 < n => x + 1,
            (false, true) if n > 1 => 0,
            (true, _) if x > 0 => x - 1,
            (true, true) if n > 1 => n - 1,
            _ => return None,
        };
        Some((PeId(pe), PeId(pe - x * s + nx * s)))
    }
}

impl Grid {
    pub fn known_diameter(&self) -> u64 {
        self.dims
            .iter()
            .map(|&d| u64::from(if self.torus { d / 2 } else { d - 1 }))
            .sum()
    }

    pub fn link_graph(&self) -> Option<LinkGraph> {
        if self.k > 1 << 22 {
            return None;
        }
        let mut edges = Vec::new();
        for p in 0..self.k {
            for (i, &n) in self.dims.iter().enumerate() {
                let s = self.strides[i];
                let x = (p / s) % n;
                if x + 1 < n {
                    edges.push((p, p + s, 1));
                } else if self.torus && n > 2 {
                    edges.push((p - x * s, p, 1));
                }
            }
        }
        Some(LinkGraph::new(self.k, edges, 1))
    }

    pub fn dims_spec(&self) -> String {
        let v: Vec<String> = self.dims.iter().map(|d| d.to_string()).collect();
        v.join("x")
    }

    pub fn scotch_target(&self) -> String {
        let base = if self.torus { "torus" } else { "mesh" };
        let v: Vec<String> = self.dims.iter().map(|d| d.to_string()).collect();
        match self.dims.len() {
            2 | 3 => format!("{base}{}D {}", self.dims.len(), v.join(" ")),
            n => format!("{base}XD {n} {}", v.join(" ")),
        }
    }
}

/// A mesh (k-ary n-cube without wrap-around) of any number of dimensions.
///
/// PE numbering is row-major with dimension 0 fastest: `pe = x0 + d0 * (x1 + d1 * (x2 +
/// ...))`, the numbering of Scotch's `mesh2D`/`mesh3D`/`meshXD`. The distance is the
/// Manhattan distance, computed in O(dims) arithmetic without allocation.
///
/// Domains are boxes (`Domain.a` = lower-corner PE, `Domain.b` = upper-corner PE). A box
/// splits along its largest extent (ties: the lowest dimension), the lower half getting
/// `ceil(n/2)` layers. The domain distance is the Manhattan distance between box centres,
/// rounded half up per axis (Scotch's rule); on single PEs it equals the distance.
///
/// Routes are dimension ordered (dimension 0 first). Link ids: `(pe * dims + i) * 2 + s`
/// is the link leaving `pe` along dimension `i`, `s = 0` towards `+`, `s = 1` towards `-`.
/// Ids of links that would leave the mesh exist but are never used.
#[derive(Clone, Debug)]
pub struct Mesh {
    pub(crate) grid: Grid,
}

impl Mesh {
    /// Dimension sizes, dimension 0 first; every size >= 1 (a size of 1 is allowed), at
    /// least one dimension, product within `u32`.
    pub fn new(dims: Vec<u32>) -> Result<Self, ArchError> {
        Ok(Mesh {
            grid: Grid::new(dims, false)?,
        })
    }

    /// The dimension sizes.
    pub fn dims(&self) -> &[u32] {
        &self.grid.dims
    }
}

/// Implements [`Architecture`] for a wrapper around [`Grid`].
macro_rules! grid_arch {
    ($t:ty, $name:literal) => {
        impl $crate::Architecture for $t {
            /// Every PE has capacity 1.
            fn total_capacity(&self) -> u128 {
                u128::from(self.pe_count())
            }
            fn pe_count(&self) -> u32 {
                self.grid.root().b + 1
            }
            #[inline]
            fn distance(&self, a: $crate::PeId, b: $crate::PeId) -> u64 {
                self.grid.distance(a, b)
            }
            fn distances_from(&self, a: $crate::PeId, out: &mut [u64]) {
                self.grid.distances_from(a, out)
            }
            fn root(&self) -> $crate::Domain {
                self.grid.root()
            }
            fn bipartition(&self, d: &$crate::Domain) -> Option<($crate::Domain, $crate::Domain)> {
                self.grid.bipartition(d)
            }
            fn domain_distance(&self, a: &$crate::Domain, b: &$crate::Domain) -> u64 {
                self.grid.domain_distance(a, b)
            }
            fn domain_size(&self, d: &$crate::Domain) -> u32 {
                self.grid.domain_size(d)
            }
            fn domain_pes(&self, d: &$crate::Domain, out: &mut Vec<$crate::PeId>) {
                self.grid.domain_pes(d, out)
            }
            fn domain_capacity(&self, d: &$crate::Domain) -> u64 {
                u64::from(self.grid.domain_size(d))
            }
            fn routing(&self) -> Option<&dyn $crate::Routing> {
                self.grid
                    .links_ok()
                    .then_some(&self.grid as &dyn $crate::Routing)
            }
            fn spec(&self) -> String {
                format!("{}:{}", $name, self.grid.dims_spec())
            }
            fn name(&self) -> &'static str {
                $name
            }
            fn known_diameter(&self) -> Option<u64> {
                Some(self.grid.known_diameter())
            }
            fn is_uniform(&self) -> bool {
                true
            }
            fn link_graph(&self) -> Option<$crate::LinkGraph> {
                self.grid.link_graph()
            }
            fn scotch_target(&self) -> Option<String> {
                Some(self.grid.scotch_target())
            }
            fn shape(&self) -> $crate::Shape<'_> {
                $crate::Shape::Grid {
                    dims: &self.grid.dims,
                    torus: self.grid.torus,
                }
            }
        }
    };
}
pub(crate) use grid_arch;

grid_arch!(Mesh, "mesh");
