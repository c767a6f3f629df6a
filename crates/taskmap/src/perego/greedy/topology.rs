//! The target as the greedy mapper sees it: fast distances from PE coordinates (meshes,
//! tori, hypercubes; any other target with routes through [`Architecture::distance`]), the
//! physical neighbours of every PE, degree sums within a distance, the PE centre, and the
//! bounding rectangle of a set of PEs.

use taskmap_arch::{Architecture, PeId, Shape};

/// PEs up to which the centre of a target other than a k-ary n-cube is found exactly
/// (O(k²) distances).
pub(crate) const EXACT_CENTRE_MAX_PES: usize = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Mesh,
    Torus,
    Hypercube,
    Other,
}

/// Distances, neighbours and coordinates of the PEs of a k-ary n-cube.
pub(crate) struct Topo<'a> {
    arch: &'a dyn Architecture,
    kind: Kind,
    /// Extent of every dimension (2 for each hypercube dimension).
    dims: Vec<u32>,
    /// `coords[pe * nd + i]`.
    coords: Vec<u32>,
    k: usize,
    nbr_start: Vec<u32>,
    nbr: Vec<u32>,
}

impl<'a> Topo<'a> {
    pub(crate) fn new(arch: &'a dyn Architecture) -> Self {
        let k = arch.pe_count() as usize;
        let (kind, dims) = match arch.shape() {
            Shape::Grid { dims, torus: true } => (Kind::Torus, dims.to_vec()),
            Shape::Grid { dims, torus: false } => (Kind::Mesh, dims.to_vec()),
            Shape::Hypercube { dim } => (Kind::Hypercube, vec![2; dim as usize]),
            Shape::Other => (Kind::Other, Vec::new()),
        };
        let product = dims
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d as usize));
        let (kind, dims) = if kind != Kind::Other && product == Some(k) {
            (kind, dims)
        } else {
            (Kind::Other, Vec::new())
        };
        let nd = dims.len();
        let mut coords = vec![0u32; k * nd];
        for p in 0..k {
            let mut x = p;
            for (i, &d) in dims.iter().enumerate() {
                coords[p * nd + i] = (x % d as usize) as u32;
                x /= d as usize;
            }
        }
        // Physical neighbours from the links (deduplicated: a ring of two has one).
        let routes = crate::perego::routes(arch);
        let mut pairs: Vec<(u32, u32)> = (0..routes.link_count())
            .filter_map(|l| routes.link_endpoints(l))
            .filter(|(a, b)| a != b)
            .map(|(a, b)| (a.0, b.0))
            .collect();
        if pairs.is_empty() {
            for a in 0..k as u32 {
                for b in 0..k as u32 {
                    if a != b && arch.distance(PeId(a), PeId(b)) == 1 {
                        pairs.push((a, b));
                    }
                }
            }
        }
        let (nbr_start, nbr) = super::tasks::adjacency(k, pairs);
        Self {
            arch,
            kind,
            dims,
            coords,
            k,
            nbr_start,
            nbr,
        }
    }

    /// `n` of the k-ary n-cube (number of dimensions; 2 when unknown).
    pub(crate) fn n_dims(&self) -> usize {
        if self.kind == Kind::Other {
            2
        } else {
            self.dims.len()
        }
    }

    /// Hop distance.
    #[inline]
    pub(crate) fn dist(&self, a: u32, b: u32) -> u64 {
        let nd = self.dims.len();
        match self.kind {
            Kind::Hypercube => u64::from((a ^ b).count_ones()),
            Kind::Mesh => {
                let (ca, cb) = (a as usize * nd, b as usize * nd);
                (0..nd)
                    .map(|i| u64::from(self.coords[ca + i].abs_diff(self.coords[cb + i])))
                    .sum()
            }
            Kind::Torus => {
                let (ca, cb) = (a as usize * nd, b as usize * nd);
                (0..nd)
                    .map(|i| {
                        let d = self.coords[ca + i].abs_diff(self.coords[cb + i]);
                        u64::from(d.min(self.dims[i] - d))
                    })
                    .sum()
            }
            Kind::Other => self.arch.distance(PeId(a), PeId(b)),
        }
    }

    /// The physical neighbours of `pe`.
    #[inline]
    pub(crate) fn neighbours(&self, pe: u32) -> &[u32] {
        &self.nbr[self.nbr_start[pe as usize] as usize..self.nbr_start[pe as usize + 1] as usize]
    }

    /// The moves the exchange passes try for task `u` with `partners` under `pes`: when a
    /// partner is farther than distance 1, the PEs next to the partners' PEs, sorted and
    /// without repeats, into `out` (`true`); otherwise `false` and `out` is left empty.
    pub(crate) fn exchange_candidates(
        &self,
        pes: &[u32],
        u: u32,
        partners: &[u32],
        out: &mut Vec<u32>,
    ) -> bool {
        out.clear();
        let pu = pes[u as usize];
        if !partners.iter().any(|&v| self.dist(pu, pes[v as usize]) > 1) {
            return false;
        }
        for &v in partners {
            out.extend_from_slice(self.neighbours(pes[v as usize]));
        }
        out.sort_unstable();
        out.dedup();
        true
    }

    /// The PE with the smallest total distance to all PEs (lowest id on ties).
    ///
    /// Closed forms on k-ary n-cubes, O(n): on a mesh the total distance is separable and
    /// each term `Σ_y |x − y|` is least at the median, so the lowest centre has
    /// coordinate `⌊(d − 1)/2⌋` in every dimension; tori and hypercubes are
    /// vertex-transitive, so every PE is a centre and PE 0 is the lowest. Other targets:
    /// O(k²) distances up to [`EXACT_CENTRE_MAX_PES`] PEs, PE 0 beyond.
    pub(crate) fn centre(&self) -> u32 {
        let k = self.k;
        match self.kind {
            Kind::Mesh => {
                // Id of the PE with coordinates c: Σ_i c_i · Π_{j<i} d_j.
                let mut id = 0u64;
                let mut stride = 1u64;
                for &d in &self.dims {
                    id += u64::from(d.saturating_sub(1) / 2) * stride;
                    stride *= u64::from(d);
                }
                id as u32
            }
            Kind::Torus | Kind::Hypercube => 0,
            Kind::Other if k <= EXACT_CENTRE_MAX_PES => (0..k as u32)
                .min_by_key(|&p| (0..k as u32).map(|q| self.dist(p, q)).sum::<u64>())
                .unwrap_or(0),
            Kind::Other => 0,
        }
    }

    /// For every PE, the sum of the degrees of the PEs at distance below `g` (itself
    /// included when `g ≥ 1`). Breadth-first to depth `g − 1` from every PE, the radius
    /// halved while that passes [`BALL_MAX_STEPS`] (see [`ball_sums`]).
    /// Returns the radius used with the sums.
    pub(crate) fn degree_sums(&self, g: u32) -> (Vec<u64>, u32) {
        let deg = |p: u32| self.neighbours(p).len() as u64;
        ball_sums(self.k, g, |p| self.neighbours(p), deg)
    }

    /// Bounding-rectangle state of a set of PEs.
    pub(crate) fn new_box(&self) -> BoxState {
        let nd = self.dims.len();
        BoxState {
            lo: vec![u32::MAX; nd],
            hi: vec![0; nd],
            occ: if self.kind == Kind::Torus {
                self.dims.iter().map(|&d| vec![0u32; d as usize]).collect()
            } else {
                Vec::new()
            },
        }
    }

    /// Adds `pe` to the box.
    pub(crate) fn box_add(&self, b: &mut BoxState, pe: u32) {
        let nd = self.dims.len();
        for i in 0..nd {
            let x = self.coords[pe as usize * nd + i];
            b.lo[i] = b.lo[i].min(x);
            b.hi[i] = b.hi[i].max(x);
            if let Some(o) = b.occ.get_mut(i) {
                o[x as usize] += 1;
            }
        }
    }

    /// `(volume, Σ extents)` of the box with `pe` added (extents on a torus: the shortest
    /// circular arc holding the coordinates). `(0, 0)` for targets without coordinates.
    pub(crate) fn box_with(&self, b: &BoxState, pe: u32) -> (f64, u64) {
        let nd = self.dims.len();
        let mut vol = 1.0f64;
        let mut sum = 0u64;
        for i in 0..nd {
            let x = self.coords[pe as usize * nd + i];
            let ext = if self.kind == Kind::Torus {
                let d = self.dims[i] as usize;
                let occ = &b.occ[i];
                // The largest run of empty coordinates (circular) once x is occupied.
                let mut best_gap = 0usize;
                let mut run = 0usize;
                let mut first_run = None;
                for y in 0..d {
                    if occ[y] == 0 && y != x as usize {
                        run += 1;
                    } else {
                        if first_run.is_none() {
                            first_run = Some(run);
                        }
                        best_gap = best_gap.max(run);
                        run = 0;
                    }
                }
                // Wrap the trailing run into the leading one.
                best_gap = best_gap.max(run + first_run.unwrap_or(0));
                (d - best_gap.min(d)) as u64
            } else {
                let (lo, hi) = (b.lo[i].min(x), b.hi[i].max(x));
                u64::from(hi - lo + 1)
            };
            vol *= ext as f64;
            sum += ext;
        }
        if nd == 0 {
            (0.0, 0)
        } else {
            (vol, sum)
        }
    }
}

/// Bounding box of the PEs used so far.
pub(crate) struct BoxState {
    lo: Vec<u32>,
    hi: Vec<u32>,
    occ: Vec<Vec<u32>>,
}

/// The most steps (nodes and neighbour entries visited) [`ball_sums`] takes at one radius.
pub(crate) const BALL_MAX_STEPS: u64 = 1 << 27;

/// For every node of a graph of `n` nodes, the sum of `weight` over the nodes at hop
/// distance below `g` (breadth-first from every node, depth `g − 1`; O(n·ball) steps).
/// When that would take more than [`BALL_MAX_STEPS`] steps, the radius is halved until it
/// does not (so at most about `BALL_MAX_STEPS · log₂ g + n` steps in all); the radius used
/// is returned with the sums.
pub(crate) fn ball_sums<'n, F, W>(n: usize, g: u32, nbrs: F, weight: W) -> (Vec<u64>, u32)
where
    F: Fn(u32) -> &'n [u32],
    W: Fn(u32) -> u64,
{
    let mut g = g;
    loop {
        if let Some(out) = ball_sums_within(n, g, &nbrs, &weight, BALL_MAX_STEPS) {
            return (out, g);
        }
        g /= 2;
    }
}

/// [`ball_sums`] at radius `g`, or `None` once more than `max_steps` steps are taken
/// (never for `g ≤ 1`: n steps).
fn ball_sums_within<'n, F, W>(
    n: usize,
    g: u32,
    nbrs: &F,
    weight: &W,
    max_steps: u64,
) -> Option<Vec<u64>>
where
    F: Fn(u32) -> &'n [u32],
    W: Fn(u32) -> u64,
{
    let mut out = vec![0u64; n];
    if g == 0 {
        return Some(out);
    }
    let mut steps = 0u64;
    let mut seen = vec![u32::MAX; n];
    let mut frontier: Vec<u32> = Vec::new();
    let mut next: Vec<u32> = Vec::new();
    for s in 0..n as u32 {
        seen[s as usize] = s;
        frontier.clear();
        frontier.push(s);
        let mut total = weight(s);
        for _ in 1..g {
            next.clear();
            for &u in &frontier {
                let nb = nbrs(u);
                steps += nb.len() as u64 + 1;
                for &v in nb {
                    if seen[v as usize] != s {
                        seen[v as usize] = s;
                        total += weight(v);
                        next.push(v);
                    }
                }
            }
            if steps > max_steps {
                return None;
            }
            std::mem::swap(&mut frontier, &mut next);
            if frontier.is_empty() {
                break;
            }
        }
        out[s as usize] = total;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed-form centre is the lowest PE with the smallest total distance (checked
    /// against every PE's total); it is O(n) on huge targets, where the per-dimension sums
    /// took O(d²) steps (10^12 on `torus:1000000`, which would not finish).
    #[test]
    fn centre_closed_form() {
        for spec in [
            "mesh:1",
            "mesh:2",
            "mesh:5",
            "mesh:4x4",
            "mesh:5x4",
            "mesh:3x6x2",
            "mesh:7x1",
            "torus:4x4",
            "torus:5x3",
            "torus:2x7",
            "hypercube:0",
            "hypercube:4",
        ] {
            let arch = taskmap_arch::parse_arch(spec).unwrap();
            let topo = Topo::new(arch.as_ref());
            let k = arch.pe_count();
            let naive = (0..k)
                .min_by_key(|&p| (0..k).map(|q| topo.dist(p, q)).sum::<u64>())
                .unwrap();
            assert_eq!(topo.centre(), naive, "{spec}");
        }
        for (spec, centre) in [
            ("torus:1000000", 0),
            ("mesh:1000000", 499_999),
            ("mesh:1000x1000", 499_499),
        ] {
            let arch = taskmap_arch::parse_arch(spec).unwrap();
            assert_eq!(Topo::new(arch.as_ref()).centre(), centre, "{spec}");
        }
    }
}
