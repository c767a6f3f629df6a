//! A local distance table: for `k <= 4096` PEs the `k × k` distances are read once through
//! the [`Architecture`] trait into a `u32` table, so hot loops make no virtual call. Larger
//! targets (or distances above `u32::MAX`) fall back to the trait.

use taskmap_arch::{Architecture, PeId, Shape};

/// Largest `k` for which a table is built (4096² · 4 bytes = 64 MiB).
pub const MAX_TABLE_PES: u32 = 4096;

/// Distances between PEs, as a table when small enough.
#[derive(Debug)]
pub struct DistTable<'a> {
    k: u32,
    table: Vec<u32>,
    arch: &'a dyn Architecture,
    /// The split of the distances by dimension, built on first use (inner `None`: they do
    /// not split).
    separable: std::sync::OnceLock<Option<Separable>>,
}

/// Distances that split by dimension, `d(p, q) = Σ_i f_i(p_i, q_i)` with `p_i` the mixed-radix
/// digits of the PE id (dimension 0 fastest): meshes and tori (the sum of the distances along
/// each axis) and hypercubes (a digit per bit). Built from a [`DistTable`] and checked on
/// three of its rows.
#[derive(Debug)]
pub struct Separable {
    sides: Vec<u32>,
    /// `coords[p * dims + i]`: digit `i` of PE `p`.
    coords: Vec<u32>,
    /// `f_i` as a `side_i × side_i` table at `f_start[i]`.
    f: Vec<u32>,
    f_start: Vec<usize>,
    /// `Σ_{j<i} side_j`: where dimension `i`'s digits start in a slot array of
    /// [`Separable::digit_slots`] entries.
    digit_start: Vec<usize>,
}

impl Separable {
    /// The split of `dist`'s distances, for meshes, tori and hypercubes with a table;
    /// `None` for other targets or when the split does not give the table's distances.
    pub fn of(dist: &DistTable<'_>) -> Option<Self> {
        let arch = dist.arch();
        let k = dist.k();
        dist.row(0)?;
        let sides: Vec<u32> = match arch.shape() {
            Shape::Grid { dims, .. } => dims.to_vec(),
            Shape::Hypercube { .. } if k.is_power_of_two() => vec![2; k.trailing_zeros() as usize],
            _ => return None,
        };
        if sides.is_empty() || sides.iter().map(|&s| u64::from(s)).product::<u64>() != u64::from(k)
        {
            return None;
        }
        let dims = sides.len();
        let mut coords = Vec::with_capacity(k as usize * dims);
        for p in 0..k {
            let mut x = p;
            for &side in &sides {
                coords.push(x % side);
                x /= side;
            }
        }
        let mut f = Vec::new();
        let mut f_start = Vec::with_capacity(dims);
        let mut stride = 1u32;
        for &side in &sides {
            f_start.push(f.len());
            for a in 0..side {
                for b in 0..side {
                    f.push(dist.get(a * stride, b * stride) as u32);
                }
            }
            stride *= side;
        }
        let digit_start = sides
            .iter()
            .scan(0usize, |acc, &s| {
                let start = *acc;
                *acc += s as usize;
                Some(start)
            })
            .collect();
        let sep = Self {
            sides,
            coords,
            f,
            f_start,
            digit_start,
        };
        let check = |p: u32| {
            dist.row(p)
                .is_some_and(|row| (0..k).all(|q| u64::from(row[q as usize]) == sep.distance(p, q)))
        };
        (check(0) && check(k / 2) && check(k - 1)).then_some(sep)
    }

    /// Number of dimensions.
    #[inline]
    pub fn dims(&self) -> usize {
        self.sides.len()
    }

    /// The size of dimension `i`.
    #[inline]
    pub fn side(&self, i: usize) -> u32 {
        self.sides[i]
    }

    /// Where dimension `i`'s digits start among the [`Separable::digit_slots`].
    #[inline]
    pub fn digit_start(&self, i: usize) -> usize {
        self.digit_start[i]
    }

    /// `Σ_i side_i`: one slot per digit of every dimension.
    pub fn digit_slots(&self) -> usize {
        self.sides.iter().map(|&s| s as usize).sum()
    }

    /// Digit `i` of PE `p`.
    #[inline]
    pub fn coord(&self, p: u32, i: usize) -> u32 {
        self.coords[p as usize * self.sides.len() + i]
    }

    /// `f_i(a, b)`: the distance along dimension `i` between digits `a` and `b`.
    #[inline]
    pub fn along(&self, i: usize, a: u32, b: u32) -> u64 {
        u64::from(self.f[self.f_start[i] + (a * self.sides[i] + b) as usize])
    }

    /// `Σ_i f_i(p_i, q_i)`.
    pub fn distance(&self, p: u32, q: u32) -> u64 {
        (0..self.dims())
            .map(|i| self.along(i, self.coord(p, i), self.coord(q, i)))
            .sum()
    }
}

impl<'a> DistTable<'a> {
    /// Builds the table (k rows of [`Architecture::distances_from`]) when
    /// `k <= MAX_TABLE_PES`.
    pub fn new(arch: &'a dyn Architecture) -> Self {
        let k = arch.pe_count();
        let mut table = Vec::new();
        if k <= MAX_TABLE_PES {
            table.reserve(k as usize * k as usize);
            let mut row = vec![0u64; k as usize];
            for a in 0..k {
                arch.distances_from(PeId(a), &mut row);
                if row.iter().any(|&d| d > u32::MAX as u64) {
                    table = Vec::new();
                    break;
                }
                table.extend(row.iter().map(|&d| d as u32));
            }
        }
        Self {
            k,
            table,
            arch,
            separable: std::sync::OnceLock::new(),
        }
    }

    /// Number of PEs.
    #[inline]
    pub fn k(&self) -> u32 {
        self.k
    }

    /// The distances split by dimension ([`Separable::of`]), built once per table.
    pub fn separable(&self) -> Option<&Separable> {
        self.separable.get_or_init(|| Separable::of(self)).as_ref()
    }

    /// The architecture behind the table.
    pub fn arch(&self) -> &'a dyn Architecture {
        self.arch
    }

    /// The largest distance, when the table is built (`None` above `MAX_TABLE_PES`).
    pub fn max_distance(&self) -> Option<u64> {
        self.table.iter().max().map(|&d| u64::from(d))
    }

    /// Whether there are at least two PEs and every two distinct PEs are equally far
    /// apart (a complete or weighted complete target), judged from the table: `false`
    /// when it is not built (above [`MAX_TABLE_PES`] PEs).
    pub fn uniform(&self) -> bool {
        let k = self.k as usize;
        let Some(&d) = self.table.get(1) else {
            return false;
        };
        (0..k).all(|a| (0..k).all(|b| a == b || self.table[a * k + b] == d))
    }

    /// The distances from `a` to every PE, when the table is built.
    #[inline]
    pub fn row(&self, a: u32) -> Option<&[u32]> {
        let k = self.k as usize;
        self.table.get(a as usize * k..(a as usize + 1) * k)
    }

    /// `out[b] = distance(a, b)` for every PE `b` (`out` resized to `k`): a copy of the
    /// table's row, or [`Architecture::distances_from`] (meshes and tori walk
    /// coordinates instead of a call per PE).
    pub fn distances_from(&self, a: u32, out: &mut Vec<u64>) {
        out.resize(self.k as usize, 0);
        match self.row(a) {
            Some(r) => {
                for (o, &d) in out.iter_mut().zip(r) {
                    *o = u64::from(d);
                }
            }
            None => self.arch.distances_from(PeId(a), out),
        }
    }

    /// Distance between PEs `a` and `b`.
    #[inline]
    pub fn get(&self, a: u32, b: u32) -> u64 {
        if self.table.is_empty() {
            self.arch.distance(PeId(a), PeId(b))
        } else {
            self.table[a as usize * self.k as usize + b as usize] as u64
        }
    }

    /// `f_C` of a mapping given as PE numbers.
    pub fn comm_cost(&self, graph: &taskmap_graph::TaskGraph, part: &[u32]) -> u64 {
        self.comm_cost_of(graph, part, 0..graph.num_tasks())
    }

    /// The part of `f_C` on the edges whose lower end is one of the tasks `tasks`.
    pub(crate) fn comm_cost_of(
        &self,
        graph: &taskmap_graph::TaskGraph,
        part: &[u32],
        tasks: std::ops::Range<usize>,
    ) -> u64 {
        let mut total = 0u64;
        for u in tasks.start as u32..tasks.end as u32 {
            let pu = part[u as usize];
            for (&v, &w) in graph.neighbors(u).iter().zip(graph.edge_weights(u)) {
                if u < v {
                    total += w * self.get(pu, part[v as usize]);
                }
            }
        }
        total
    }
}
