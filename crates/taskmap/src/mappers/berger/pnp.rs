//! Partition and Place (P&P), the comparison point of Berger et al. 2014 (after R. Sirdey,
//! HDR thesis, 2011): a GRASP partitioning of the tasks into as many capacity-feasible parts
//! as there are PEs, then a simulated-annealing quadratic assignment of the parts to the PEs.
//!
//! 1. **GRASP partitioning** (`runs` independent starts, the one with the smallest edge cut
//!    kept). Parts are built one after the other, part `p` with the capacities of PE `p`:
//!    a random unplaced task seeds the part; then, repeatedly, one of the `rcl` boundary
//!    tasks with the highest affinity `α(t, part) = Σ_{t' ∈ part} q_tt'` that still fit is
//!    drawn uniformly at random and added (a restricted candidate list); when no boundary
//!    task fits, a new random seed that fits joins the part; the part closes when no
//!    unplaced task fits. Tasks that fit in no part at the end go to the part with the
//!    highest affinity that has room. Distances play no role in this phase.
//! 2. **Simulated annealing** of the part → PE permutation (quadratic assignment, cost
//!    `Σ_{a<b} W_ab · d(π(a), π(b))`, W = traffic between parts), starting from part `p` on
//!    PE `p`. A move swaps the PEs of two random parts (only when both parts fit on their new
//!    PEs); its gain is computed in O(k). Temperature: `T0` makes the mean uphill move of a
//!    sample of 1,000 random swaps accepted with probability `initial_acceptance`; `stages`
//!    geometric stages `T ← cooling · T` of `sa_moves / stages` moves each (`sa_moves = 0`:
//!    `2000 · k`). The best permutation seen is returned, so never a worse one than the start.
//!
//! Every random choice draws from the run's generator. Complexity:
//! O(runs · (n + m) · rcl · |boundary|) for the GRASP, O(sa_moves · k) for the annealing,
//! O(k²) memory for W.

use rand::Rng;
use serde::{Deserialize, Serialize};
use taskmap_arch::PeId;
use taskmap_graph::TaskGraph;

use crate::error::Error;
use crate::mapper::{Mapper, Progress, RunContext};
use crate::mappers::berger::common::{check_pes, BergerDist, Loads};
use crate::mapping::Mapping;
use crate::problem::Problem;
use crate::registry::{ParamDoc, Params};

const UNPLACED: u32 = u32::MAX;

/// The P&P mapper's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PnpMapper {
    /// GRASP starts; the partition with the smallest edge cut is kept.
    pub runs: usize,
    /// Size of the restricted candidate list (1: greedy).
    pub rcl: usize,
    /// Swap proposals of the annealing; 0: `2000 · k`.
    #[serde(alias = "moves")]
    pub sa_moves: usize,
    /// Temperature stages.
    pub stages: usize,
    /// Geometric cooling factor per stage.
    pub cooling: f64,
    /// Probability of accepting the mean uphill move at the initial temperature.
    #[serde(alias = "accept")]
    pub initial_acceptance: f64,
}

impl Default for PnpMapper {
    fn default() -> Self {
        Self {
            runs: 10,
            rcl: 3,
            sa_moves: 0,
            stages: 100,
            cooling: 0.93,
            initial_acceptance: 0.5,
        }
    }
}

impl Params for PnpMapper {
    const DOCS: &'static [ParamDoc] = &[
        ParamDoc {
            name: "runs",
            aliases: &[],
            doc: "GRASP starts; the partition of the smallest edge cut is kept (1 to 2^20)",
        },
        ParamDoc {
            name: "rcl",
            aliases: &[],
            doc: "size of the restricted candidate list (1: greedy), at most 2^16",
        },
        ParamDoc {
            name: "sa_moves",
            aliases: &["moves"],
            doc: "swap proposals of the annealing (0: 2000 per PE), at most 2^30",
        },
        ParamDoc {
            name: "stages",
            aliases: &[],
            doc: "temperature stages, 1 to 2^20",
        },
        ParamDoc {
            name: "cooling",
            aliases: &[],
            doc: "geometric cooling factor per stage, in (0, 1)",
        },
        ParamDoc {
            name: "initial_acceptance",
            aliases: &["accept"],
            doc: "probability of accepting the mean uphill move at the initial temperature, in (0, 1)",
        },
    ];

    fn validate(&self) -> Result<(), String> {
        for (key, v, max) in [
            ("rcl", self.rcl, 1usize << 16),
            ("runs", self.runs, 1 << 20),
            ("stages", self.stages, 1 << 20),
            ("moves", self.sa_moves, 1 << 30),
        ] {
            if v > max {
                return Err(format!("{key}={v} is more than the {max} allowed"));
            }
        }
        if self.runs == 0 || self.rcl == 0 || self.stages == 0 {
            return Err("runs, rcl and stages must be at least 1".into());
        }
        if !(self.cooling > 0.0 && self.cooling < 1.0) {
            return Err(format!("cooling must be in (0, 1), got {}", self.cooling));
        }
        if !(self.initial_acceptance > 0.0 && self.initial_acceptance < 1.0) {
            return Err(format!(
                "accept must be in (0, 1), got {}",
                self.initial_acceptance
            ));
        }
        Ok(())
    }
}

impl Mapper for PnpMapper {
    fn name(&self) -> &'static str {
        "pnp"
    }

    /// The GRASP starts and the annealing stop at the deadline.
    fn honours_deadline(&self) -> bool {
        true
    }

    fn map(&self, problem: &Problem, ctx: &mut RunContext) -> Result<Mapping, Error> {
        problem.check()?;
        self.validate()
            .map_err(|e| Error::Config(format!("pnp: {e}")))?;
        check_pes(problem, "pnp")?;
        let g = &problem.graph;
        let n = g.num_tasks();
        let loads = Loads::new(problem, "pnp")?;
        if n == 0 {
            return Ok(Mapping::new(Vec::new()));
        }
        let k = problem.arch.pe_count() as usize;
        let mut best: Option<(u64, Vec<u32>, Loads)> = None;
        ctx.timed("grasp", |ctx| -> Result<(), Error> {
            for run in 1..=self.runs {
                let (part, pl) = grasp_partition(g, &loads, self.rcl, &mut ctx.rng)?;
                ctx.progress.step(run as u64, self.runs as u64);
                let cut = edge_cut(g, &part);
                if best.as_ref().is_none_or(|(c, _, _)| cut < *c) {
                    best = Some((cut, part, pl));
                }
                if ctx.out_of_time() {
                    break;
                }
            }
            Ok(())
        })?;
        let (_, part, part_loads) = best.expect("at least one GRASP run");
        let dist = BergerDist::new(problem.arch.as_ref());
        let w = part_traffic(g, &part, k);
        let start: Vec<u32> = (0..k as u32).collect();
        let ncon = loads.ncon;
        let fits = |a: u32, node: u32| {
            (0..ncon).all(|r| {
                part_loads.load[a as usize * ncon + r] <= loads.bound[node as usize * ncon + r]
            })
        };
        let (deadline, stop) = (ctx.deadline, ctx.stop.clone());
        let perm = ctx.timed("anneal", |ctx| {
            let (rng, progress) = (&mut ctx.rng, &*ctx.progress);
            anneal_qap(
                &w, k, &dist, &start, self, rng, &fits, deadline, &stop, progress,
            )
        });
        let pes = part.iter().map(|&p| PeId(perm[p as usize])).collect();
        Ok(Mapping::new(pes))
    }
}

/// Total weight of the edges between different parts.
pub fn edge_cut(g: &TaskGraph, part: &[u32]) -> u64 {
    g.edges()
        .filter(|&(u, v, _)| part[u as usize] != part[v as usize])
        .map(|(_, _, w)| w)
        .sum()
}

/// The k × k traffic matrix between parts (row-major, symmetric, zero diagonal).
pub fn part_traffic(g: &TaskGraph, part: &[u32], k: usize) -> Vec<u64> {
    let mut w = vec![0u64; k * k];
    for (u, v, q) in g.edges() {
        let (a, b) = (part[u as usize] as usize, part[v as usize] as usize);
        if a != b {
            w[a * k + b] += q;
            w[b * k + a] += q;
        }
    }
    w
}

/// One GRASP construction: part `p` filled up to the bounds of PE `p` in `caps`. Returns
/// the part of every task and the loads of the parts.
pub fn grasp_partition(
    g: &TaskGraph,
    caps: &Loads,
    rcl: usize,
    rng: &mut impl Rng,
) -> Result<(Vec<u32>, Loads), Error> {
    let n = g.num_tasks();
    let ncon = caps.ncon;
    let k = caps.bound.len() / ncon;
    let mut loads = caps.clone();
    loads.load.iter_mut().for_each(|l| *l = 0);
    let mut part = vec![UNPLACED; n];
    // Unplaced tasks, for random seeds (swap-remove with positions).
    let mut unplaced: Vec<u32> = (0..n as u32).collect();
    let mut upos: Vec<u32> = (0..n as u32).collect();
    let mut aff = vec![0u64; n];
    let mut boundary: Vec<u32> = Vec::new();
    let mut bpos = vec![UNPLACED; n];
    let min_w: Vec<u64> = (0..ncon)
        .map(|r| {
            (0..n as u32)
                .map(|t| g.vertex_weight(t, r))
                .min()
                .unwrap_or(0)
        })
        .collect();
    let mut top: Vec<(u64, u32)> = Vec::with_capacity(rcl + 1);

    for p in 0..k as u32 {
        if unplaced.is_empty() {
            break;
        }
        loop {
            if (0..ncon).any(|r| loads.remaining(p, r) < min_w[r]) {
                break;
            }
            // The restricted candidate list: the rcl fitting boundary tasks of highest α.
            top.clear();
            for (i, &t) in boundary.iter().enumerate() {
                let a = aff[t as usize];
                if top.len() == rcl && a <= top[rcl - 1].0 {
                    continue;
                }
                if !loads.fits(p, g.vertex_weights(t)) {
                    continue;
                }
                let at = top.partition_point(|&(x, _)| x >= a);
                top.insert(at, (a, i as u32));
                top.truncate(rcl);
            }
            let t = if !top.is_empty() {
                boundary[top[rng.gen_range(0..top.len())].1 as usize]
            } else {
                // A random seed that fits: a few random draws, then a scan.
                let mut found = None;
                for _ in 0..8 {
                    let t = unplaced[rng.gen_range(0..unplaced.len())];
                    if loads.fits(p, g.vertex_weights(t)) {
                        found = Some(t);
                        break;
                    }
                }
                if found.is_none() {
                    let off = rng.gen_range(0..unplaced.len());
                    found = (0..unplaced.len())
                        .map(|i| unplaced[(off + i) % unplaced.len()])
                        .find(|&t| loads.fits(p, g.vertex_weights(t)));
                }
                match found {
                    Some(t) => t,
                    None => break,
                }
            };
            // Add t to part p.
            part[t as usize] = p;
            loads.add(p, g.vertex_weights(t));
            let i = upos[t as usize] as usize;
            let last = *unplaced.last().expect("t is unplaced");
            unplaced.swap_remove(i);
            if i < unplaced.len() {
                upos[last as usize] = i as u32;
            }
            if bpos[t as usize] != UNPLACED {
                let i = bpos[t as usize] as usize;
                let last = *boundary.last().expect("t is in the boundary");
                boundary.swap_remove(i);
                if i < boundary.len() {
                    bpos[last as usize] = i as u32;
                }
                bpos[t as usize] = UNPLACED;
            }
            for (&u, &q) in g.neighbors(t).iter().zip(g.edge_weights(t)) {
                if part[u as usize] != UNPLACED {
                    continue;
                }
                aff[u as usize] += q;
                if bpos[u as usize] == UNPLACED {
                    bpos[u as usize] = boundary.len() as u32;
                    boundary.push(u);
                }
            }
            if unplaced.is_empty() {
                break;
            }
        }
        for &t in &boundary {
            aff[t as usize] = 0;
            bpos[t as usize] = UNPLACED;
        }
        boundary.clear();
    }
    // Leftovers: the part of highest affinity with room, else the first with room.
    let mut acc = vec![0u64; k];
    for t in unplaced {
        let w = g.vertex_weights(t);
        for (&u, &q) in g.neighbors(t).iter().zip(g.edge_weights(t)) {
            if part[u as usize] != UNPLACED {
                acc[part[u as usize] as usize] += q;
            }
        }
        let mut best: Option<(u64, u32)> = None;
        for p in 0..k as u32 {
            if loads.fits(p, w) && best.is_none_or(|(a, _)| acc[p as usize] > a) {
                best = Some((acc[p as usize], p));
            }
        }
        for &u in g.neighbors(t) {
            if part[u as usize] != UNPLACED {
                acc[part[u as usize] as usize] = 0;
            }
        }
        let placed = part.iter().filter(|&&p| p != UNPLACED).count();
        let (_, p) = best.ok_or_else(|| loads.stuck("pnp", t, w, placed, n))?;
        part[t as usize] = p;
        loads.add(p, w);
    }
    Ok((part, loads))
}

/// `Σ_{a<b} W_ab · d(π(a), π(b))` for a part → PE permutation `perm`.
pub fn qap_cost(w: &[u64], k: usize, dist: &BergerDist<'_>, perm: &[u32]) -> u64 {
    let mut c = 0u64;
    for a in 0..k {
        for b in a + 1..k {
            let x = w[a * k + b];
            if x != 0 {
                c += x * dist.get(perm[a], perm[b]);
            }
        }
    }
    c
}

/// The change of [`qap_cost`] when parts `a` and `b` exchange their PEs. O(k).
pub fn swap_delta(
    w: &[u64],
    k: usize,
    dist: &BergerDist<'_>,
    perm: &[u32],
    a: usize,
    b: usize,
) -> i64 {
    let (pa, pb) = (perm[a], perm[b]);
    let (ra, rb) = (&w[a * k..(a + 1) * k], &w[b * k..(b + 1) * k]);
    let mut delta = 0i64;
    for c in 0..k {
        if c == a || c == b {
            continue;
        }
        let diff = ra[c] as i64 - rb[c] as i64;
        if diff != 0 {
            let pc = perm[c];
            delta += diff * (dist.get(pb, pc) as i64 - dist.get(pa, pc) as i64);
        }
    }
    delta
}

/// Simulated annealing of the quadratic assignment from `start` (see the module
/// documentation); `fits(part, pe)` tells whether a part may go on a PE, and `progress` is
/// told of the moves made after each stage. Returns the best permutation seen (never
/// costlier than `start`).
pub fn anneal_qap(
    w: &[u64],
    k: usize,
    dist: &BergerDist<'_>,
    start: &[u32],
    cfg: &PnpMapper,
    rng: &mut impl Rng,
    fits: &dyn Fn(u32, u32) -> bool,
    deadline: Option<std::time::Instant>,
    stop: &std::sync::atomic::AtomicBool,
    progress: &dyn Progress,
) -> Vec<u32> {
    let mut perm = start.to_vec();
    if k < 2 {
        return perm;
    }
    let mut cost = qap_cost(w, k, dist, &perm) as i64;
    let mut best = perm.clone();
    let mut best_cost = cost;
    let moves = if cfg.sa_moves == 0 {
        2000 * k
    } else {
        cfg.sa_moves
    };
    let legal =
        |perm: &[u32], a: usize, b: usize| fits(a as u32, perm[b]) && fits(b as u32, perm[a]);
    // Initial temperature from a sample of uphill moves.
    let mut up = 0f64;
    let mut n_up = 0usize;
    for _ in 0..1000.min(moves) {
        let a = rng.gen_range(0..k);
        let b = rng.gen_range(0..k);
        if a != b && legal(&perm, a, b) {
            let d = swap_delta(w, k, dist, &perm, a, b);
            if d > 0 {
                up += d as f64;
                n_up += 1;
            }
        }
    }
    let mut temp = if n_up > 0 {
        (up / n_up as f64) / (1.0 / cfg.initial_acceptance).ln()
    } else {
        1.0
    };
    let per_stage = (moves / cfg.stages).max(1);
    let mut done = 0usize;
    while done < moves {
        for _ in 0..per_stage.min(moves - done) {
            let a = rng.gen_range(0..k);
            let b = rng.gen_range(0..k);
            if a == b || !legal(&perm, a, b) {
                continue;
            }
            let d = swap_delta(w, k, dist, &perm, a, b);
            if d <= 0 || rng.gen::<f64>() < (-(d as f64) / temp).exp() {
                perm.swap(a, b);
                cost += d;
                if cost < best_cost {
                    best_cost = cost;
                    best.copy_from_slice(&perm);
                }
            }
        }
        done += per_stage;
        progress.step(done.min(moves) as u64, moves as u64);
        temp *= cfg.cooling;
        if deadline.is_some_and(|d| std::time::Instant::now() >= d)
            || stop.load(std::sync::atomic::Ordering::Relaxed)
        {
            break;
        }
    }
    debug_assert_eq!(best_cost as u64, qap_cost(w, k, dist, &best));
    best
}
