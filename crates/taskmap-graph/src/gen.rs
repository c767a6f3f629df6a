//! Deterministic generators of task graphs: regular communication patterns and random
//! graphs. All edge and vertex weights are 1, `ncon` is 1. Random generators take a seed and
//! draw from [`Xoshiro256PlusPlus`]; the same arguments give the same graph on every
//! platform.
//!
//! Every generator writes the CSR arrays directly (row by row, or through one counting sort),
//! without an allocation per edge.
//!
//! # Panics
//! All generators panic if the number of tasks does not fit in 32-bit ids.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::builder::GraphBuilder;
use crate::graph::TaskGraph;

/// Builds a graph with unit weights row by row: `row(u, adj)` pushes the neighbours of `u`.
/// The caller guarantees symmetry and no loops or repeats.
fn from_rows(
    n: usize,
    entries_hint: usize,
    mut row: impl FnMut(usize, &mut Vec<u32>),
) -> TaskGraph {
    assert!(n <= u32::MAX as usize, "{n} tasks do not fit in 32-bit ids");
    let mut xadj = Vec::with_capacity(n + 1);
    let mut adjncy = Vec::with_capacity(entries_hint);
    xadj.push(0);
    for u in 0..n {
        row(u, &mut adjncy);
        xadj.push(adjncy.len());
    }
    let ew = vec![1u64; adjncy.len()];
    let g = TaskGraph::from_csr_unchecked(xadj, adjncy, ew, vec![1; n], 1);
    debug_assert!(g.validate().is_ok());
    g
}

fn checked_product(dims: &[u32]) -> usize {
    dims.iter()
        .try_fold(1usize, |p, &d| p.checked_mul(d as usize))
        .filter(|&p| p <= u32::MAX as usize)
        .expect("grid too large for 32-bit task ids")
}

/// A `dims.len()`-dimensional grid (mesh) of `dims[0] x dims[1] x ...` tasks, each linked to
/// its 2 neighbours along every dimension (the 5-point stencil in 2-D, 7-point in 3-D).
/// Task ids are row-major with dimension 0 fastest: `id = x0 + d0 * (x1 + d1 * x2 ...)`.
///
/// With `torus`, dimensions of size >= 3 wrap around (every task then has degree
/// `2 * dims.len()`); a dimension of size 2 has its single link (a wrap would repeat it) and
/// a dimension of size 1 none. Edges: `sum_d (d_d - 1) * n / d_d` for a mesh, plus
/// `n / d_d` for every wrapped dimension. An empty `dims` gives one task. O(n * dims).
pub fn grid(dims: &[u32], torus: bool) -> TaskGraph {
    let n = checked_product(dims);
    let mut stride = Vec::with_capacity(dims.len());
    let mut s = 1usize;
    for &d in dims {
        stride.push(s);
        s *= d as usize;
    }
    from_rows(n, 2 * dims.len() * n, |u, adj| {
        for (k, &d) in dims.iter().enumerate() {
            let d = d as usize;
            let x = (u / stride[k]) % d;
            let st = stride[k];
            if x > 0 {
                adj.push((u - st) as u32);
            } else if torus && d >= 3 {
                adj.push((u + (d - 1) * st) as u32);
            }
            if x + 1 < d {
                adj.push((u + st) as u32);
            } else if torus && d >= 3 {
                adj.push((u - (d - 1) * st) as u32);
            }
        }
    })
}

/// The 2-D 9-point stencil on an `x` by `y` mesh: every task is linked to its up to 8
/// neighbours (Moore neighbourhood), no wrap-around. Ids `i + x * j`. O(n).
pub fn stencil_2d_9pt(x: u32, y: u32) -> TaskGraph {
    let (xs, ys) = (x as i64, y as i64);
    let n = checked_product(&[x, y]);
    from_rows(n, 8 * n, |u, adj| {
        let (i, j) = ((u as i64) % xs, (u as i64) / xs);
        for dj in -1..=1 {
            for di in -1..=1 {
                let (a, b) = (i + di, j + dj);
                if (di, dj) != (0, 0) && (0..xs).contains(&a) && (0..ys).contains(&b) {
                    adj.push((a + xs * b) as u32);
                }
            }
        }
    })
}

/// The 3-D 27-point stencil on an `x` by `y` by `z` mesh: every task is linked to its up to
/// 26 neighbours, no wrap-around. Ids `i + x * (j + y * k)`. O(n).
pub fn stencil_3d_27pt(x: u32, y: u32, z: u32) -> TaskGraph {
    let (xs, ys, zs) = (x as i64, y as i64, z as i64);
    let n = checked_product(&[x, y, z]);
    from_rows(n, 26 * n, |u, adj| {
        let u = u as i64;
        let (i, j, k) = (u % xs, (u / xs) % ys, u / (xs * ys));
        for dk in -1..=1 {
            for dj in -1..=1 {
                for di in -1..=1 {
                    let (a, b, c) = (i + di, j + dj, k + dk);
                    if (di, dj, dk) != (0, 0, 0)
                        && (0..xs).contains(&a)
                        && (0..ys).contains(&b)
                        && (0..zs).contains(&c)
                    {
                        adj.push((a + xs * (b + ys * c)) as u32);
                    }
                }
            }
        }
    })
}

/// A ring (cycle) of `n` tasks, `u` linked to `u +- 1 mod n`. `n = 2` gives one edge,
/// `n <= 1` none. Same as `grid(&[n], true)` for `n >= 3`. O(n).
pub fn ring(n: u32) -> TaskGraph {
    grid(&[n], true)
}

/// A binary tree of `n` tasks in heap order: the children of `u` are `2u + 1` and `2u + 2`
/// (when below `n`), the parent of `u > 0` is `(u - 1) / 2`. `n - 1` edges. O(n).
pub fn binary_tree(n: u32) -> TaskGraph {
    let n = n as usize;
    from_rows(n, 2 * n, |u, adj| {
        if u > 0 {
            adj.push(((u - 1) / 2) as u32);
        }
        for c in [2 * u + 1, 2 * u + 2] {
            if c < n {
                adj.push(c as u32);
            }
        }
    })
}

/// The FFT butterfly network with `stages` stages: `stages + 1` levels of `R = 2^stages`
/// tasks, task `(l, r)` has id `l * R + r`. For `l < stages`, task `(l, r)` is linked to
/// `(l + 1, r)` and `(l + 1, r XOR 2^l)`. So `(stages + 1) * 2^stages` tasks and
/// `2 * stages * 2^stages` edges; inner levels have degree 4, the first and last degree 2.
/// This is the dependency graph of a radix-2 FFT of `2^stages` points (Leighton, 1992). O(n).
pub fn butterfly(stages: u32) -> TaskGraph {
    assert!(stages < 32, "butterfly with {stages} stages is too large");
    let r = 1usize << stages;
    let n = (stages as usize + 1)
        .checked_mul(r)
        .filter(|&n| n <= u32::MAX as usize)
        .expect("butterfly too large for 32-bit task ids");
    let s = stages as usize;
    from_rows(n, 4 * n, |u, adj| {
        let (l, row) = (u / r, u % r);
        if l > 0 {
            adj.push(((l - 1) * r + row) as u32);
            adj.push(((l - 1) * r + (row ^ (1 << (l - 1)))) as u32);
        }
        if l < s {
            adj.push(((l + 1) * r + row) as u32);
            adj.push(((l + 1) * r + (row ^ (1 << l))) as u32);
        }
    })
}

/// The hypercube communication pattern of dimension `dim`: `2^dim` tasks, `u` linked to
/// `u XOR 2^b` for every bit `b < dim` (recursive doubling, all-reduce). `dim * 2^(dim-1)`
/// edges. O(n * dim).
pub fn hypercube_pattern(dim: u32) -> TaskGraph {
    assert!(dim < 32, "hypercube of dimension {dim} is too large");
    let n = 1usize << dim;
    from_rows(n, dim as usize * n, |u, adj| {
        for b in 0..dim {
            adj.push((u ^ (1 << b)) as u32);
        }
    })
}

/// Probability that two uniform points of the unit square are within distance `r <= 1`.
fn square_close_probability(r: f64) -> f64 {
    std::f64::consts::PI * r * r - 8.0 / 3.0 * r * r * r + 0.5 * r * r * r * r
}

/// A random geometric graph: `n` points uniform in the unit square, two tasks linked when
/// their distance is at most `r`. The radius is chosen so that the EXPECTED degree equals
/// `mean_degree`, boundary effects included: `(n - 1) * P(dist <= r) = mean_degree` with
/// `P(dist <= r) = pi r^2 - 8/3 r^3 + r^4 / 2` for `r <= 1` (solved by bisection; beyond
/// `P(1) ~ 0.975` the radius is interpolated up to `sqrt 2`, which links all pairs).
///
/// Neighbours are found with a grid of square cells of side `>= r` (at most about `n`
/// cells), scanning the 3 x 3 cells around each point: O(n + m) expected time; one million
/// tasks of mean degree 8 take well under a second in release mode. Task ids follow the
/// order in which the points are drawn (so ids carry no spatial locality).
pub fn random_geometric(n: u32, mean_degree: f64, seed: u64) -> TaskGraph {
    let n = n as usize;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let px: Vec<(f64, f64)> = (0..n)
        .map(|_| (rng.gen::<f64>(), rng.gen::<f64>()))
        .collect();
    if n < 2 {
        return from_rows(n, 0, |_, _| {});
    }
    let p = if mean_degree.is_nan() {
        0.0
    } else {
        (mean_degree / (n - 1) as f64).max(0.0)
    };
    let p1 = square_close_probability(1.0);
    let r = if p >= 1.0 {
        2.0
    } else if p > p1 {
        1.0 + (std::f64::consts::SQRT_2 - 1.0) * (p - p1) / (1.0 - p1)
    } else {
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if square_close_probability(mid) < p {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    };
    let r2 = r * r;
    let max_cells = ((n as f64).sqrt().ceil() as usize).max(1);
    let g = if r > 0.0 {
        ((1.0 / r).floor() as usize).clamp(1, max_cells)
    } else {
        max_cells
    };
    let cell_of = |x: f64| ((x * g as f64) as usize).min(g - 1);
    // Counting sort of the points by cell.
    let mut start = vec![0usize; g * g + 1];
    for &(x, y) in &px {
        start[cell_of(x) + g * cell_of(y) + 1] += 1;
    }
    for c in 0..g * g {
        start[c + 1] += start[c];
    }
    let mut fill = start.clone();
    let mut sorted: Vec<(f64, f64, u32)> = vec![(0.0, 0.0, 0); n];
    for (u, &(x, y)) in px.iter().enumerate() {
        let c = cell_of(x) + g * cell_of(y);
        sorted[fill[c]] = (x, y, u as u32);
        fill[c] += 1;
    }
    drop(fill);
    // a task has at most n - 1 neighbours, whatever the degree asked
    let hint = ((mean_degree.max(0.0) * 1.05 + 4.0).min(n as f64) * n as f64).min(1e10) as usize;
    // Rows in cell order first (neighbouring points are close in memory), holding the
    // original ids; then the rows are copied into original id order.
    let mut sxadj = Vec::with_capacity(n + 1);
    let mut sadj: Vec<u32> = Vec::with_capacity(hint);
    sxadj.push(0usize);
    let mut pos = vec![0u32; n];
    for (k, &(x, y, u)) in sorted.iter().enumerate() {
        pos[u as usize] = k as u32;
        let (cx, cy) = (cell_of(x), cell_of(y));
        for by in cy.saturating_sub(1)..=(cy + 1).min(g - 1) {
            let lo = start[cx.saturating_sub(1) + g * by];
            let hi = start[(cx + 1).min(g - 1) + g * by + 1];
            for &(vx, vy, v) in &sorted[lo..hi] {
                let (dx, dy) = (vx - x, vy - y);
                if v != u && dx * dx + dy * dy <= r2 {
                    sadj.push(v);
                }
            }
        }
        sxadj.push(sadj.len());
    }
    drop(sorted);
    from_rows(n, sadj.len(), |u, adj| {
        let k = pos[u] as usize;
        adj.extend_from_slice(&sadj[sxadj[k]..sxadj[k + 1]]);
    })
}

/// A uniform random graph G(n, m) with `m = round(n * mean_degree / 2)` distinct edges
/// (capped at `n (n - 1) / 2`). Pairs are drawn uniformly; self-loops and pairs already
/// drawn are rejected and drawn again (an open-addressing hash set of pair keys), so the
/// expected time is O(n + m) while `m` is at most half of all pairs. Rows list neighbours in
/// the order the edges were drawn.
pub fn random_graph(n: u32, mean_degree: f64, seed: u64) -> TaskGraph {
    let m = capped_edges(n, mean_degree, 1);
    distinct_edges(n, m, seed, |rng| {
        Some((rng.gen_range(0..n), rng.gen_range(0..n)))
    })
}

/// A graph of `n` tasks and `m` distinct edges of weight 1, each from `draw` (`None`, a
/// loop or a repeat is drawn again), in the order drawn.
fn distinct_edges(
    n: u32,
    m: usize,
    seed: u64,
    mut draw: impl FnMut(&mut Xoshiro256PlusPlus) -> Option<(u32, u32)>,
) -> TaskGraph {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut seen = PairSet::new(n, m);
    let mut b = GraphBuilder::new(n as usize, 1);
    b.reserve_edges(m);
    let mut added = 0usize;
    while added < m {
        if let Some((u, v)) = draw(&mut rng) {
            if u != v && seen.insert(u, v) {
                b.add_edge(u, v, 1);
                added += 1;
            }
        }
    }
    b.build()
}

/// An open-addressing set of undirected pairs (keys `min · n + max`), for generators that
/// draw edges at random and must not repeat one.
struct PairSet {
    table: Vec<u64>,
    bits: u32,
    n: u64,
}

impl PairSet {
    fn new(n: u32, pairs: usize) -> Self {
        let bits = (2 * pairs + 2).next_power_of_two().trailing_zeros().max(4);
        Self {
            table: vec![u64::MAX; 1 << bits],
            bits,
            n: u64::from(n),
        }
    }

    /// Inserts `{u, v}`; false when it was there already.
    fn insert(&mut self, u: u32, v: u32) -> bool {
        let key = u64::from(u.min(v)) * self.n + u64::from(u.max(v));
        let mask = (1usize << self.bits) - 1;
        let mut slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize;
        loop {
            match self.table[slot] {
                u64::MAX => {
                    self.table[slot] = key;
                    return true;
                }
                k if k == key => return false,
                _ => slot = (slot + 1) & mask,
            }
        }
    }
}

/// An R-MAT graph (Chakrabarti, Zhan & Faloutsos 2004) with the Graph500 probabilities
/// (a, b, c, d) = (0.57, 0.19, 0.19, 0.05): `m = round(n · mean_degree / 2)` distinct
/// edges (capped at a sixteenth of all pairs, where repeats cost under ten draws per
/// edge), each drawn by descending the quadrants of
/// the adjacency matrix of the next power of two above `n`; self-loops, repeats and ends
/// of `n` or more are drawn again. Degrees follow a power law; many tasks stay isolated,
/// and low ids have the high degrees (ids are not permuted). Expected O(n + m · log n).
pub fn rmat(n: u32, mean_degree: f64, seed: u64) -> TaskGraph {
    let m = capped_edges(n, mean_degree, 16);
    let levels = u64::from(n).next_power_of_two().trailing_zeros();
    distinct_edges(n, m, seed, |rng| {
        let (mut u, mut v) = (0u32, 0u32);
        for _ in 0..levels {
            let r: f64 = rng.gen();
            let (du, dv) = match r {
                r if r < 0.57 => (0, 0),
                r if r < 0.76 => (0, 1),
                r if r < 0.95 => (1, 0),
                _ => (1, 1),
            };
            u = 2 * u + du;
            v = 2 * v + dv;
        }
        (u < n && v < n).then_some((u, v))
    })
}

/// A Barabási-Albert graph (preferential attachment): tasks `0..=a` form a clique, with
/// `a = max(1, round(mean_degree / 2))`, then every further task links to `a` distinct
/// earlier tasks drawn with probability proportional to their degree (a uniform draw from
/// the list of every edge end so far). Mean degree about `2a`, a power-law tail; the
/// oldest tasks (low ids) are the hubs. Expected O(n · a) (a draw repeats a pick with
/// probability below a half).
pub fn barabasi_albert(n: u32, mean_degree: f64, seed: u64) -> TaskGraph {
    let a = if mean_degree.is_finite() {
        ((mean_degree / 2.0).round() as u64).max(1)
    } else {
        1
    };
    let a = a.min(u64::from(n.saturating_sub(1))) as usize;
    let core = (a + 1).min(n as usize) as u32;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut b = GraphBuilder::new(n as usize, 1);
    b.reserve_edges(n as usize * a);
    let mut ends: Vec<u32> = Vec::with_capacity(2 * n as usize * a);
    for u in 0..core {
        for v in 0..u {
            b.add_edge(u, v, 1);
            ends.extend([u, v]);
        }
    }
    let mut picked: Vec<u32> = Vec::with_capacity(a);
    // mark[t] == u: t is already picked by task u.
    let mut mark = vec![u32::MAX; n as usize];
    for u in core..n {
        picked.clear();
        while picked.len() < a {
            let t = ends[rng.gen_range(0..ends.len())];
            if mark[t as usize] != u {
                mark[t as usize] = u;
                picked.push(t);
            }
        }
        for &t in &picked {
            b.add_edge(u, t, 1);
            ends.extend([u, t]);
        }
    }
    b.build()
}

/// `round(n · mean_degree / 2)` edges, at most `1 / share` of all pairs.
fn capped_edges(n: u32, mean_degree: f64, share: u64) -> usize {
    let nn = u64::from(n);
    let max_m = nn * nn.saturating_sub(1) / 2 / share;
    let want = if mean_degree.is_nan() {
        0.0
    } else {
        (nn as f64 * mean_degree.max(0.0) / 2.0).round()
    };
    (want.min(max_m as f64) as u64).min(max_m) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(g: &TaskGraph) {
        let (x, a, e, v) = g.csr();
        TaskGraph::from_csr(x.to_vec(), a.to_vec(), e.to_vec(), v.to_vec(), g.ncon()).unwrap();
    }

    #[test]
    fn power_law_generators_are_valid_seeded_and_skewed() {
        for (name, g, g2, other) in [
            (
                "rmat",
                rmat(5000, 8.0, 1),
                rmat(5000, 8.0, 1),
                rmat(5000, 8.0, 2),
            ),
            (
                "ba",
                barabasi_albert(5000, 8.0, 1),
                barabasi_albert(5000, 8.0, 1),
                barabasi_albert(5000, 8.0, 2),
            ),
        ] {
            check(&g);
            assert_eq!(
                g.num_edges(),
                20_000 - if name == "ba" { 10 } else { 0 },
                "{name}"
            );
            assert_eq!(g.csr().1, g2.csr().1, "{name}: same seed, other graph");
            assert_ne!(g.csr().1, other.csr().1, "{name}: the seed is ignored");
            let max = (0..5000).map(|v| g.degree(v)).max().unwrap();
            assert!(max > 20 * 8, "{name}: max degree {max}, no hub");
        }
        // Tiny and degenerate sizes stay valid.
        for n in [0, 1, 2, 3] {
            check(&rmat(n, 6.0, 0));
            check(&barabasi_albert(n, 6.0, 0));
        }
    }

    fn mesh_edges(dims: &[u32]) -> usize {
        let n: usize = dims.iter().map(|&d| d as usize).product();
        dims.iter()
            .map(|&d| (d as usize - 1) * n / d as usize)
            .sum()
    }

    #[test]
    fn grid_sizes() {
        for dims in [
            vec![7u32],
            vec![4, 5],
            vec![3, 4, 5],
            vec![2, 3, 2, 3],
            vec![1, 6],
        ] {
            let g = grid(&dims, false);
            check(&g);
            let n: usize = dims.iter().map(|&d| d as usize).product();
            assert_eq!(g.num_tasks(), n);
            assert_eq!(g.num_edges(), mesh_edges(&dims), "{dims:?}");
        }
        let g = grid(&[4, 5], false);
        // Row-major, dimension 0 fastest: task 6 = (2, 1).
        let mut nb = g.neighbors(6).to_vec();
        nb.sort();
        assert_eq!(nb, vec![2, 5, 7, 10]);
        assert_eq!(grid(&[], false).num_tasks(), 1);
        assert_eq!(grid(&[3, 0], false).num_tasks(), 0);
    }

    #[test]
    fn torus_degrees() {
        for dims in [vec![3u32, 4], vec![5, 3, 4], vec![8]] {
            let g = torus_check(&dims);
            for u in 0..g.num_tasks() as u32 {
                assert_eq!(g.degree(u), 2 * dims.len());
            }
            assert_eq!(g.num_edges(), dims.len() * g.num_tasks());
        }
        // Size-2 dimension: one link, no wrap; size 1: none.
        let g = torus_check(&[2, 4]);
        assert_eq!(g.num_edges(), 4 + 8);
        let g = torus_check(&[1, 5]);
        assert_eq!(g.num_edges(), 5);
    }

    fn torus_check(dims: &[u32]) -> TaskGraph {
        let g = grid(dims, true);
        check(&g);
        g
    }

    #[test]
    fn patterns() {
        let g = stencil_2d_9pt(4, 3);
        check(&g);
        // Horizontal 3*3 + vertical 4*2 + 2 diagonals * 3*2.
        assert_eq!(g.num_edges(), 9 + 8 + 12);
        assert_eq!(g.degree(5), 8);
        let g = stencil_3d_27pt(3, 3, 3);
        check(&g);
        assert_eq!(g.degree(13), 26);
        assert_eq!(g.degree(0), 7);
        // Pairs of distinct cells with Chebyshev distance 1 in a 3x3x3 cube: (27*27 - 27 - far)/2.
        let direct: usize = (0..27u32).map(|u| g.degree(u)).sum::<usize>() / 2;
        assert_eq!(g.num_edges(), direct);
        for (n, m) in [(0u32, 0usize), (1, 0), (2, 1), (3, 3), (10, 10)] {
            let g = ring(n);
            check(&g);
            assert_eq!((g.num_tasks(), g.num_edges()), (n as usize, m));
        }
        let g = binary_tree(10);
        check(&g);
        assert_eq!(g.num_edges(), 9);
        assert_eq!(g.neighbors(4), &[1, 9]);
        for s in 0..6u32 {
            let g = butterfly(s);
            check(&g);
            assert_eq!(g.num_tasks(), (s as usize + 1) << s);
            assert_eq!(g.num_edges(), 2 * s as usize * (1 << s));
        }
        for d in 0..7u32 {
            let g = hypercube_pattern(d);
            check(&g);
            assert_eq!(g.num_tasks(), 1 << d);
            assert_eq!(2 * g.num_edges(), d as usize * (1 << d));
        }
    }

    #[test]
    fn random_generators_are_deterministic_and_close_to_the_mean() {
        for n in [0u32, 1, 2, 50] {
            check(&random_geometric(n, 6.0, 1));
            check(&random_graph(n, 6.0, 1));
        }
        let a = random_geometric(20_000, 8.0, 42);
        check(&a);
        assert_eq!(a, random_geometric(20_000, 8.0, 42));
        assert_ne!(a, random_geometric(20_000, 8.0, 43));
        let mean = 2.0 * a.num_edges() as f64 / a.num_tasks() as f64;
        assert!((mean - 8.0).abs() < 0.4, "geometric mean degree {mean}");

        let b = random_graph(20_000, 8.0, 42);
        check(&b);
        assert_eq!(b, random_graph(20_000, 8.0, 42));
        assert_ne!(b, random_graph(20_000, 8.0, 43));
        assert_eq!(b.num_edges(), 80_000);
        // Complete graph when asking for too much.
        let c = random_graph(10, 100.0, 7);
        check(&c);
        assert_eq!(c.num_edges(), 45);
        let d = random_geometric(30, 1000.0, 7);
        assert_eq!(d.num_edges(), 435);
    }
}
