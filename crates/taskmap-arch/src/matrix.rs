//! Explicit distance matrices (`matrix:FILE`).

use crate::domtree::{medoid, DomainTree};
use crate::explicit::{lines, parse_u64, read_input, tokens};
use crate::{ArchError, Architecture, Domain, PeId};

/// A target given by its `k x k` distance matrix.
///
/// File format (`matrix:FILE`, gzip allowed): lines starting with `%` or `#` are comments
/// and blank lines are skipped; an optional first line holding the single number `k`; then
/// `k` lines of `k` non-negative integers (row `i` holds `dist(i, 0) .. dist(i, k-1)`). The
/// matrix must be symmetric with a zero diagonal and positive off-diagonal entries
/// (checked, with the line and column of the first defect). A file of one line holding one
/// number is the `1 x 1` matrix. The triangle inequality is not required.
///
/// Capacities are 1. Bipartition (precomputed): each domain's two seeds are a far pair
/// (the member farthest from the first member, and the member farthest from that one);
/// members are sorted by `dist(v, seed0) - dist(v, seed1)` (ties by id) and the first
/// `ceil(n/2)` form the first half. Domain distance: distance between per-node
/// representatives (the member with the smallest sum of distances to a sample of at most
/// 256 members, among at most 64 candidates); exact on single PEs.
#[derive(Clone, Debug)]
pub struct DistanceMatrix {
    k: u32,
    d: Vec<u64>,
    tree: DomainTree,
    path: Option<String>,
}

impl DistanceMatrix {
    /// `k >= 1` and `values` the row-major `k x k` matrix (symmetric, zero diagonal,
    /// positive elsewhere).
    pub fn new(k: u32, values: Vec<u64>) -> Result<Self, ArchError> {
        if k == 0 {
            return Err(ArchError::invalid(
                "a distance matrix needs at least one PE",
            ));
        }
        if (k as usize).checked_mul(k as usize) != Some(values.len()) {
            return Err(ArchError::invalid(format!(
                "{} values for a {k} x {k} matrix",
                values.len()
            )));
        }
        if let Some((i, j, m)) = check(k as usize, &values) {
            return Err(ArchError::invalid(format!("entry ({i}, {j}): {m}")));
        }
        Ok(Self::build(k, values, None))
    }

    /// Reads a matrix file (format above).
    pub fn from_file(path: &str) -> Result<Self, ArchError> {
        let bytes = read_input(path)?;
        let err = |l: u32, c: u32, m: String| ArchError::file(path, l, c, m);
        type Row<'b> = (u32, Vec<(u32, &'b [u8])>);
        let data: Vec<Row<'_>> = lines(&bytes)
            .filter(|(_, l)| {
                let t = l.trim_ascii();
                !t.is_empty() && !t.starts_with(b"%") && !t.starts_with(b"#")
            })
            .map(|(n, l)| (n, tokens(l).collect()))
            .collect();
        if data.is_empty() {
            return Err(err(1, 1, "empty matrix file".into()));
        }
        let (k, rows) = if data[0].1.len() == 1 && data.len() > 1 {
            let (c, t) = data[0].1[0];
            let k = parse_u64(t).map_err(|m| err(data[0].0, c, m))?;
            if k == 0 || k > 1 << 20 {
                return Err(err(data[0].0, c, format!("bad matrix size {k}")));
            }
            (k as usize, &data[1..])
        } else {
            (data[0].1.len(), &data[..])
        };
        if rows.len() != k {
            let (l, c) = match rows.get(k) {
                Some(r) => (r.0, 1),
                None => (rows.last().map_or(data[0].0, |r| r.0) + 1, 1),
            };
            return Err(err(
                l,
                c,
                format!("expected {k} rows, found {}", rows.len()),
            ));
        }
        let mut values = Vec::new();
        let mut pos = Vec::new();
        for (ln, toks) in rows {
            if toks.len() != k {
                let c = toks.get(k).map_or(1, |t| t.0);
                return Err(err(
                    *ln,
                    c,
                    format!("expected {k} entries in this row, found {}", toks.len()),
                ));
            }
            for &(c, t) in toks {
                values.push(parse_u64(t).map_err(|m| err(*ln, c, m))?);
                pos.push((*ln, c));
            }
        }
        if let Some((i, j, m)) = check(k, &values) {
            let (l, c) = pos[i * k + j];
            return Err(err(l, c, m));
        }
        Ok(Self::build(k as u32, values, Some(path.to_string())))
    }

    fn build(k: u32, d: Vec<u64>, path: Option<String>) -> Self {
        let ku = k as usize;
        let dist = |a: PeId, b: PeId| d[a.idx() * ku + b.idx()];
        let (mut tree, _) = DomainTree::build(
            (0..k).map(PeId).collect(),
            (),
            |_| 1,
            |slice, _| {
                let far = |from: PeId| {
                    *slice
                        .iter()
                        .max_by_key(|&&p| (dist(from, p), std::cmp::Reverse(p.0)))
                        .unwrap_or(&from)
                };
                let s0 = far(slice[0]);
                let s1 = far(s0);
                slice.sort_by_key(|&p| (dist(p, s0) as i128 - dist(p, s1) as i128, p.0));
                (slice.len().div_ceil(2), (), ())
            },
        );
        tree.set_reps(|pes| medoid(pes, dist));
        DistanceMatrix { k, d, tree, path }
    }

    /// The file this matrix was read from, if any.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }
}

/// First defect `(row, column, message)` of a matrix.
fn check(k: usize, v: &[u64]) -> Option<(usize, usize, String)> {
    for i in 0..k {
        for j in 0..k {
            let x = v[i * k + j];
            if i == j && x != 0 {
                return Some((i, j, format!("diagonal entry ({i}, {j}) is {x}, not 0")));
            }
            if i != j && x == 0 {
                return Some((
                    i,
                    j,
                    format!(
                        "entry ({i}, {j}) is 0 (distances between distinct PEs must be positive)"
                    ),
                ));
            }
            if j < i && x != v[j * k + i] {
                return Some((
                    i,
                    j,
                    format!(
                        "not symmetric: entry ({i}, {j}) is {x} but ({j}, {i}) is {}",
                        v[j * k + i]
                    ),
                ));
            }
        }
    }
    None
}

impl Architecture for DistanceMatrix {
    fn pe_count(&self) -> u32 {
        self.k
    }
    #[inline]
    fn distance(&self, a: PeId, b: PeId) -> u64 {
        self.d[a.idx() * self.k as usize + b.idx()]
    }
    crate::domtree::tree_domains!();
    fn domain_distance(&self, a: &Domain, b: &Domain) -> u64 {
        self.tree.reps(a, b).map_or(0, |(x, y)| self.distance(x, y))
    }
    fn spec(&self) -> String {
        format!("matrix:{}", self.path.as_deref().unwrap_or("<memory>"))
    }
    fn name(&self) -> &'static str {
        "matrix"
    }
    fn is_uniform(&self) -> bool {
        true
    }
}
