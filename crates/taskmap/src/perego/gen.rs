//! Program generators for the communication patterns of De Petris & Perego (1994, §4.1,
//! §6.2): ring, 2-D mesh (4-neighbour exchange), butterfly (FFT), binary-tree reduce, and
//! random programs with about 7 partners per task.
//!
//! Every generator repeats `rounds` iterations of "compute, send to every partner, receive
//! from every partner" (sends first, so no generated program deadlocks). Spec strings, as
//! accepted by [`generate_program`]:
//!
//! | spec | tasks | pattern |
//! |---|---|---|
//! | `ring:N` | N | task i sends to i+1 mod N, receives from i-1 mod N |
//! | `mesh:RxC` | R·C | 4-neighbour exchange on an R×C grid (no wrap-around), row-major ids |
//! | `butterfly:K` | 2^K | K stages per round; stage s exchanges with `i xor 2^s` |
//! | `tree:N` | N | binary-tree reduce, heap numbering (parent of i is (i-1)/2) |
//! | `random:N` | N | random partner graph of mean degree `partners`, exchange with every partner |
//!
//! Options follow as `,key=value`: `rounds` (default 4), `compute` (INT_OP cycles per round,
//! default 200; for `random` the compute is `cycles_per_flit` × flits sent in the round, with
//! ±50 % jitter), `flits` (message length, default 32; for `random` lengths are uniform in
//! `flits/2 ..= 3·flits/2`), `partners` (default 7), `cycles_per_flit` (default 8), `seed`
//! (default 1). `partners` is capped to N−1.
//!
//! Limits, checked before anything is generated (an error, never a panic, from
//! [`generate_program`] and the `try_*` generators): 2 to [`MAX_TASKS`] tasks, at most
//! [`MAX_ROUNDS`] rounds and at most [`MAX_INSTRUCTIONS`] instructions in all.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::program::{Program, ProgramBuilder};
use crate::error::Error;

/// Parameters shared by the generators.
#[derive(Clone, Debug, PartialEq)]
pub struct GenParams {
    /// Iterations of the compute/send/receive body.
    pub rounds: u32,
    /// INT_OP cycles per round (regular patterns).
    pub compute: u32,
    /// Message length in flits (mean length for `random`).
    pub flits: u32,
    /// Mean number of partners per task (`random`).
    pub partners: u32,
    /// Compute cycles per flit sent (`random`): the paper's "a byte every eight cycles".
    pub cycles_per_flit: u32,
    /// Seed of the random generator (`random`).
    pub seed: u64,
}

impl Default for GenParams {
    fn default() -> Self {
        Self {
            rounds: 4,
            compute: 200,
            flits: 32,
            partners: 7,
            cycles_per_flit: 8,
            seed: 1,
        }
    }
}

/// Largest number of tasks of a generated program.
pub const MAX_TASKS: u64 = 50_000_000;
/// Largest `rounds` of a generated program.
pub const MAX_ROUNDS: u32 = 1_000_000;
/// Largest number of instructions of a generated program (12 bytes each, about 30 bytes
/// per instruction while the program is built and checked: ~1.5 GB at the limit).
pub const MAX_INSTRUCTIONS: u64 = 50_000_000;

/// Checks the size of a program before it is generated: `tasks` in `2..=MAX_TASKS`,
/// `rounds <= MAX_ROUNDS`, `rounds · per_round + extra <= MAX_INSTRUCTIONS` (saturating).
fn check_size(
    pattern: &str,
    tasks: u64,
    per_round: u64,
    extra: u64,
    p: &GenParams,
) -> Result<(), Error> {
    if !(2..=MAX_TASKS).contains(&tasks) {
        return Err(Error::Config(format!(
            "{pattern}: {tasks} tasks (need 2..={MAX_TASKS})"
        )));
    }
    if p.rounds > MAX_ROUNDS {
        return Err(Error::Config(format!(
            "{pattern}: rounds={} is more than the limit {MAX_ROUNDS}",
            p.rounds
        )));
    }
    let total = u64::from(p.rounds)
        .saturating_mul(per_round)
        .saturating_add(extra);
    if total > MAX_INSTRUCTIONS {
        let shown = if total == u64::MAX {
            "more than 2^64".to_string()
        } else {
            total.to_string()
        };
        return Err(Error::Config(format!(
            "{pattern}: the program would have {shown} instructions ({} rounds × {per_round}), more than the limit {MAX_INSTRUCTIONS}; use fewer tasks, rounds or partners",
            p.rounds
        )));
    }
    Ok(())
}

/// Panics with the error's message: for the infallible generator wrappers.
fn or_panic(r: Result<Program, Error>) -> Program {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// Ring: task i sends to i+1 mod n and receives from i-1 mod n, `rounds` times.
///
/// # Panics
/// When [`try_ring`] fails (`n < 2`, or the program exceeds the size limits).
pub fn ring(n: u32, p: &GenParams) -> Program {
    or_panic(try_ring(n, p))
}

/// As [`ring`], with errors for sizes out of range (see [`MAX_TASKS`], [`MAX_ROUNDS`],
/// [`MAX_INSTRUCTIONS`]).
pub fn try_ring(n: u32, p: &GenParams) -> Result<Program, Error> {
    check_size("ring", u64::from(n), 3 * u64::from(n), 0, p)?;
    let mut b = ProgramBuilder::new();
    for i in 0..n {
        b.process();
        for _ in 0..p.rounds {
            b.compute(p.compute)
                .send(((u64::from(i) + 1) % u64::from(n)) as u32, p.flits)
                .recv(
                    ((u64::from(i) + u64::from(n) - 1) % u64::from(n)) as u32,
                    p.flits,
                );
        }
    }
    b.build()
}

/// 2-D mesh, 4-neighbour exchange on a `rows × cols` grid, row-major ids.
///
/// # Panics
/// When [`try_mesh2d`] fails (fewer than 2 tasks, or the program exceeds the size limits).
pub fn mesh2d(rows: u32, cols: u32, p: &GenParams) -> Program {
    or_panic(try_mesh2d(rows, cols, p))
}

/// As [`mesh2d`], with errors for sizes out of range.
pub fn try_mesh2d(rows: u32, cols: u32, p: &GenParams) -> Result<Program, Error> {
    let (r64, c64) = (u64::from(rows), u64::from(cols));
    let n = r64 * c64;
    // Per round: one INT_OP per task, a SEND and a RECEIVE per directed grid edge.
    let grid_edges = (r64 * c64.saturating_sub(1)).saturating_add(c64 * r64.saturating_sub(1));
    check_size(
        "mesh",
        n,
        n.saturating_add(grid_edges.saturating_mul(4)),
        0,
        p,
    )?;
    let mut b = ProgramBuilder::new();
    for r in 0..rows {
        for c in 0..cols {
            b.process();
            let mut nb = Vec::with_capacity(4);
            if r > 0 {
                nb.push((r - 1) * cols + c);
            }
            if c > 0 {
                nb.push(r * cols + c - 1);
            }
            if c + 1 < cols {
                nb.push(r * cols + c + 1);
            }
            if r + 1 < rows {
                nb.push((r + 1) * cols + c);
            }
            for _ in 0..p.rounds {
                b.compute(p.compute);
                for &v in &nb {
                    b.send(v, p.flits);
                }
                for &v in &nb {
                    b.recv(v, p.flits);
                }
            }
        }
    }
    b.build()
}

/// Butterfly (FFT): `2^dim` tasks; per round, `dim` stages exchanging with `i xor 2^s`.
///
/// # Panics
/// When [`try_butterfly`] fails (`dim` not in `1..=24`, or the program exceeds the size
/// limits).
pub fn butterfly(dim: u32, p: &GenParams) -> Program {
    or_panic(try_butterfly(dim, p))
}

/// As [`butterfly`], with errors for sizes out of range.
pub fn try_butterfly(dim: u32, p: &GenParams) -> Result<Program, Error> {
    if !(1..=24).contains(&dim) {
        return Err(Error::Config(format!(
            "butterfly: dimension {dim} (need 1..=24)"
        )));
    }
    let n = 1u32 << dim;
    check_size(
        "butterfly",
        u64::from(n),
        3 * u64::from(dim) * u64::from(n),
        0,
        p,
    )?;
    let mut b = ProgramBuilder::new();
    for i in 0..n {
        b.process();
        for _ in 0..p.rounds {
            for s in 0..dim {
                let v = i ^ (1 << s);
                b.compute(p.compute).send(v, p.flits).recv(v, p.flits);
            }
        }
    }
    b.build()
}

/// Binary-tree reduce over `n` tasks (heap numbering): per round every task computes,
/// receives from its children, and sends to its parent.
///
/// # Panics
/// When [`try_tree_reduce`] fails (`n < 2`, or the program exceeds the size limits).
pub fn tree_reduce(n: u32, p: &GenParams) -> Program {
    or_panic(try_tree_reduce(n, p))
}

/// As [`tree_reduce`], with errors for sizes out of range.
pub fn try_tree_reduce(n: u32, p: &GenParams) -> Result<Program, Error> {
    let n64 = u64::from(n);
    check_size("tree", n64, n64 + 2 * n64.saturating_sub(1), 0, p)?;
    let mut b = ProgramBuilder::new();
    for i in 0..n {
        b.process();
        for _ in 0..p.rounds {
            b.compute(p.compute);
            for c in [2 * u64::from(i) + 1, 2 * u64::from(i) + 2] {
                if c < n64 {
                    b.recv(c as u32, p.flits);
                }
            }
            if i > 0 {
                b.send((i - 1) / 2, p.flits);
            }
        }
    }
    b.build()
}

/// Random program: a random partner graph with mean degree `min(partners, n-1)`; each round
/// every task computes `cycles_per_flit` × (flits it sends in the round) cycles (±50 %),
/// sends one message to every partner (random order, length uniform in
/// `flits/2 ..= 3·flits/2`), then receives one from every partner (random order).
///
/// # Panics
/// When [`try_random`] fails (`n < 2`, or the program exceeds the size limits).
pub fn random(n: u32, p: &GenParams) -> Program {
    or_panic(try_random(n, p))
}

/// As [`random`], with errors for sizes out of range. `partners` is capped to `n - 1`;
/// the partner graph counts against [`MAX_INSTRUCTIONS`] even with `rounds = 0`.
pub fn try_random(n: u32, p: &GenParams) -> Result<Program, Error> {
    let nn = u64::from(n);
    let partners = u64::from(p.partners).min(nn.saturating_sub(1));
    let max_edges = nn * nn.saturating_sub(1) / 2;
    let want = (nn * partners).div_ceil(2).min(max_edges);
    // Per round: one INT_OP per task, a SEND and a RECEIVE per partner pair and direction.
    check_size(
        "random",
        nn,
        nn.saturating_add(want.saturating_mul(4)),
        0,
        p,
    )?;
    if want.saturating_mul(4) > MAX_INSTRUCTIONS {
        return Err(Error::Config(format!(
            "random: {n} tasks with {partners} partners each make {want} partner pairs, more than the limit {}",
            MAX_INSTRUCTIONS / 4
        )));
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(p.seed);
    let mut edges = std::collections::HashSet::new();
    if want * 2 > max_edges {
        // Dense: shuffle all pairs (at most 2 · want of them, bounded above).
        let mut all: Vec<(u32, u32)> = (0..n)
            .flat_map(|u| (u + 1..n).map(move |v| (u, v)))
            .collect();
        all.shuffle(&mut rng);
        all.truncate(want as usize);
        for (u, v) in all {
            edges.insert((u, v));
        }
    } else {
        while (edges.len() as u64) < want {
            let u = rng.gen_range(0..n);
            let v = rng.gen_range(0..n);
            if u != v {
                edges.insert((u.min(v), u.max(v)));
            }
        }
    }
    let mut sorted: Vec<(u32, u32)> = edges.into_iter().collect();
    sorted.sort_unstable();
    // Adjacency in CSR form; every list is sorted (pairs (a, x) with a < x come before the
    // pairs (x, b) in the sorted order).
    let mut adj_start = vec![0usize; n as usize + 1];
    for &(u, v) in &sorted {
        adj_start[u as usize + 1] += 1;
        adj_start[v as usize + 1] += 1;
    }
    for i in 0..n as usize {
        adj_start[i + 1] += adj_start[i];
    }
    let mut adj = vec![0u32; adj_start[n as usize]];
    let mut fill = adj_start.clone();
    for &(u, v) in &sorted {
        adj[fill[u as usize]] = v;
        fill[u as usize] += 1;
        adj[fill[v as usize]] = u;
        fill[v as usize] += 1;
    }
    drop(sorted);
    let nbrs = |u: u32| &adj[adj_start[u as usize]..adj_start[u as usize + 1]];
    // Message lengths per (round, task, partner index), drawn in that order.
    let lo = (p.flits / 2).max(1);
    let hi = (u64::from(p.flits) + u64::from(p.flits / 2)).min(u64::from(u32::MAX)) as u32;
    let hi = hi.max(lo);
    let per_round = adj.len();
    let mut len: Vec<u32> = Vec::with_capacity(per_round * p.rounds as usize);
    for _ in 0..p.rounds {
        for _ in 0..per_round {
            len.push(rng.gen_range(lo..=hi));
        }
    }
    // Length of the message of round r from u to its partner v.
    let len_of = |r: u32, u: u32, v: u32| -> u32 {
        let k = nbrs(u).binary_search(&v).expect("v is a partner of u");
        len[r as usize * per_round + adj_start[u as usize] + k]
    };
    let mut b = ProgramBuilder::new();
    for u in 0..n {
        b.process();
        let mut out = nbrs(u).to_vec();
        let mut inn = out.clone();
        for r in 0..p.rounds {
            let sent: u64 = out.iter().map(|&v| u64::from(len_of(r, u, v))).sum();
            let base = sent.saturating_mul(u64::from(p.cycles_per_flit));
            let c = (base as f64 * rng.gen_range(0.5..1.5)).round() as u64;
            b.compute(c.min(u64::from(u32::MAX)) as u32);
            out.shuffle(&mut rng);
            inn.shuffle(&mut rng);
            for &v in &out {
                b.send(v, len_of(r, u, v));
            }
            for &v in &inn {
                b.recv(v, len_of(r, v, u));
            }
        }
    }
    b.build()
}

/// Generates a program from a spec such as `ring:64`, `mesh:8x8,rounds=10`,
/// `butterfly:6`, `tree:63`, `random:200,partners=7,seed=3` (see the module table).
pub fn generate_program(spec: &str) -> Result<Program, Error> {
    let bad = |m: String| Error::Config(format!("program spec \"{spec}\": {m}"));
    let mut parts = spec.split(',');
    let head = parts.next().unwrap_or("").trim();
    let (kind, size) = head.split_once(':').ok_or_else(|| {
        bad("expected KIND:SIZE (ring:64, mesh:8x8, butterfly:6, tree:63, random:200)".into())
    })?;
    let mut p = GenParams::default();
    let entries = crate::registry::params::key_values(parts)
        .map_err(|kv| bad(format!("expected key=value, found \"{kv}\"")))?;
    for (k, v) in entries {
        let num = v.parse::<u64>().map_err(|_| {
            bad(format!(
                "\"{k}\" needs a non-negative integer, found \"{v}\""
            ))
        })?;
        let small = || u32::try_from(num).map_err(|_| bad(format!("\"{k}\" too large")));
        match k {
            "rounds" => p.rounds = small()?,
            "compute" => p.compute = small()?,
            "flits" => p.flits = small()?.max(1),
            "partners" => p.partners = small()?,
            "cycles_per_flit" => p.cycles_per_flit = small()?,
            "seed" => p.seed = num,
            other => {
                return Err(bad(format!(
                    "unknown option \"{other}\" (rounds, compute, flits, partners, cycles_per_flit, seed)"
                )))
            }
        }
    }
    let int = |s: &str| {
        s.trim()
            .parse::<u32>()
            .map_err(|_| bad(format!("expected a size, found \"{s}\"")))
    };
    // Sizes are checked (tasks, rounds, instructions) by the generators before any memory
    // is allocated; their errors are reported under the spec.
    let in_spec = |e: Error| match e {
        Error::Config(m) => bad(m),
        other => other,
    };
    match kind.trim() {
        "ring" => try_ring(int(size)?, &p),
        "mesh" => {
            let (r, c) = size
                .split_once('x')
                .ok_or_else(|| bad("mesh size is RxC".into()))?;
            try_mesh2d(int(r)?, int(c)?, &p)
        }
        "butterfly" => try_butterfly(int(size)?, &p),
        "tree" => try_tree_reduce(int(size)?, &p),
        "random" => try_random(int(size)?, &p),
        other => {
            return Err(bad(format!(
                "unknown pattern \"{other}\" (ring, mesh, butterfly, tree, random)"
            )))
        }
    }
    .map_err(in_spec)
}
