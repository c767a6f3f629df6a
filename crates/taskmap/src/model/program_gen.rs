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
//! (default 1).

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

/// Ring: task i sends to i+1 mod n and receives from i-1 mod n, `rounds` times.
pub fn ring(n: u32, p: &GenParams) -> Program {
    assert!(n >= 2, "a ring needs at least 2 tasks");
    let mut b = ProgramBuilder::new();
    for i in 0..n {
        b.process();
        for _ in 0..p.rounds {
            b.compute(p.compute)
                .send((i + 1) % n, p.flits)
                .recv((i + n - 1) % n, p.flits);
        }
    }
    b.build().expect("a generated ring is valid")
}

/// 2-D mesh, 4-neighbour exchange on a `rows × cols` grid, row-major ids.
pub fn mesh2d(rows: u32, cols: u32, p: &GenParams) -> Program {
    assert!(rows * cols >= 2, "a mesh needs at least 2 tasks");
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
    b.build().expect("a generated mesh is valid")
}

/// Butterfly (FFT): `2^dim` tasks; per round, `dim` stages exchanging with `i xor 2^s`.
pub fn butterfly(dim: u32, p: &GenParams) -> Program {
    assert!((1..=24).contains(&dim), "butterfly dimension in 1..=24");
    let n = 1u32 << dim;
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
    b.build().expect("a generated butterfly is valid")
}

/// Binary-tree reduce over `n` tasks (heap numbering): per round every task computes,
/// receives from its children, and sends to its parent.
pub fn tree_reduce(n: u32, p: &GenParams) -> Program {
    assert!(n >= 2, "a tree needs at least 2 tasks");
    let mut b = ProgramBuilder::new();
    for i in 0..n {
        b.process();
        for _ in 0..p.rounds {
            b.compute(p.compute);
            for c in [2 * i + 1, 2 * i + 2] {
                if c < n {
                    b.recv(c, p.flits);
                }
            }
            if i > 0 {
                b.send((i - 1) / 2, p.flits);
            }
        }
    }
    b.build().expect("a generated tree is valid")
}

/// Random program: a random partner graph with mean degree `min(partners, n-1)`; each round
/// every task computes `cycles_per_flit` × (flits it sends in the round) cycles (±50 %),
/// sends one message to every partner (random order, length uniform in
/// `flits/2 ..= 3·flits/2`), then receives one from every partner (random order).
pub fn random(n: u32, p: &GenParams) -> Program {
    assert!(n >= 2, "a random program needs at least 2 tasks");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(p.seed);
    let nn = u64::from(n);
    let max_edges = nn * (nn - 1) / 2;
    let want = ((nn * u64::from(p.partners)).div_ceil(2)).min(max_edges);
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    let mut edges = std::collections::HashSet::new();
    if want * 2 > max_edges {
        // Dense: shuffle all pairs.
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
    for &(u, v) in &sorted {
        adj[u as usize].push(v);
        adj[v as usize].push(u);
    }
    // Message lengths per (round, task, partner index).
    let lo = (p.flits / 2).max(1);
    let hi = (p.flits + p.flits / 2).max(lo);
    let mut len = std::collections::HashMap::new();
    for r in 0..p.rounds {
        for u in 0..n {
            for &v in &adj[u as usize] {
                len.insert((r, u, v), rng.gen_range(lo..=hi));
            }
        }
    }
    let mut b = ProgramBuilder::new();
    for u in 0..n {
        b.process();
        let mut out = adj[u as usize].clone();
        let mut inn = adj[u as usize].clone();
        for r in 0..p.rounds {
            let sent: u64 = out.iter().map(|&v| u64::from(len[&(r, u, v)])).sum();
            let base = sent * u64::from(p.cycles_per_flit);
            let c = (base as f64 * rng.gen_range(0.5..1.5)).round() as u64;
            b.compute(c.min(u64::from(u32::MAX)) as u32);
            out.shuffle(&mut rng);
            inn.shuffle(&mut rng);
            for &v in &out {
                b.send(v, len[&(r, u, v)]);
            }
            for &v in &inn {
                b.recv(v, len[&(r, v, u)]);
            }
        }
    }
    b.build().expect("a generated random program is valid")
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
    for kv in parts {
        let kv = kv.trim();
        if kv.is_empty() {
            continue;
        }
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| bad(format!("expected key=value, found \"{kv}\"")))?;
        let num = v.trim().parse::<u64>().map_err(|_| {
            bad(format!(
                "\"{k}\" needs a non-negative integer, found \"{v}\""
            ))
        })?;
        let small = || u32::try_from(num).map_err(|_| bad(format!("\"{k}\" too large")));
        match k.trim() {
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
    let limit = |n: u64| {
        if !(2..=50_000_000).contains(&n) {
            Err(bad(format!("{n} tasks: need 2..=50000000")))
        } else {
            Ok(())
        }
    };
    Ok(match kind.trim() {
        "ring" => {
            let n = int(size)?;
            limit(u64::from(n))?;
            ring(n, &p)
        }
        "mesh" => {
            let (r, c) = size
                .split_once('x')
                .ok_or_else(|| bad("mesh size is RxC".into()))?;
            let (r, c) = (int(r)?, int(c)?);
            limit(u64::from(r) * u64::from(c))?;
            mesh2d(r, c, &p)
        }
        "butterfly" => {
            let d = int(size)?;
            if !(1..=24).contains(&d) {
                return Err(bad("butterfly dimension in 1..=24".into()));
            }
            butterfly(d, &p)
        }
        "tree" => {
            let n = int(size)?;
            limit(u64::from(n))?;
            tree_reduce(n, &p)
        }
        "random" => {
            let n = int(size)?;
            limit(u64::from(n))?;
            random(n, &p)
        }
        other => {
            return Err(bad(format!(
                "unknown pattern \"{other}\" (ring, mesh, butterfly, tree, random)"
            )))
        }
    })
}
