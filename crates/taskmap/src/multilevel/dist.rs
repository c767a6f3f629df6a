//! A local distance table: for `k <= 4096` PEs the `k × k` distances are read once through
//! the [`Architecture`] trait into a `u32` table, so hot loops make no virtual call. Larger
//! targets (or distances above `u32::MAX`) fall back to the trait.

use taskmap_arch::{Architecture, PeId};

/// Largest `k` for which a table is built (4096² · 4 bytes = 64 MiB).
pub const MAX_TABLE_PES: u32 = 4096;

/// Distances between PEs, as a table when small enough.
#[derive(Debug)]
pub struct DistTable<'a> {
    k: u32,
    table: Vec<u32>,
    arch: &'a dyn Architecture,
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
        Self { k, table, arch }
    }

    /// Number of PEs.
    #[inline]
    pub fn k(&self) -> u32 {
        self.k
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
        let mut total = 0u64;
        for u in 0..graph.num_tasks() as u32 {
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
