//! Jet refinement: unconstrained moves filtered by an afterburner, then rebalancing,
//! repeated while the mapping improves (Gilbert, Madduri, Boman and Rajamanickam, "Jet:
//! Multilevel Graph Partitioning on Graphics Processing Units", 2024), here for `f_C`.
//!
//! An iteration:
//! 1. **Proposals.** Every active task that did not move in the last iteration finds its
//!    best PE among its neighbours' PEs, ignoring the bounds, with gain `g`. It proposes
//!    the move when `g > 0`, or when the loss `−g` is below `temperature` times the cost
//!    its edges inside its PE would take on: `conn(v, p)·dist(p, q)` (for the edge cut,
//!    `dist = 1`, this is Jet's rule). Negative moves let groups of tasks cross together.
//! 2. **Afterburner.** Each proposal's gain is taken again as if every neighbour with a
//!    better proposal (a higher gain, ties to the lower id) had moved first; only moves
//!    whose gain stays positive are kept.
//! 3. The kept moves are applied at once, and [`rebalance`](super::rebalance::rebalance)
//!    repairs the bounds they broke.
//!
//! The best balanced mapping seen is kept and returned, so the refiner never makes a
//! mapping worse; it leaves a mapping that starts over a bound as it is. It stops after
//! `stall` iterations without lowering the best `f_C` below `tolerance` times the best at
//! the last such improvement. The tasks next to a task moved in an iteration (by a
//! proposal or by rebalancing), and the tasks its proposals moved the iteration before,
//! are the next iteration's active tasks; the first iteration takes every boundary task. Steps 1 and 2 run in parallel
//! blocks on the state's pool and only read the mapping, so the result does not depend on
//! the thread count.

use super::kway::{Gains, KwayState};
use super::rebalance::rebalance_logged;
use crate::par::map_blocks;

/// Tasks per parallel block of a Jet iteration.
const BLOCK: usize = 2048;

/// No proposal.
const NONE: u32 = u32::MAX;

/// Jet's parameters.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Jet {
    /// At most this many iterations.
    pub iterations: usize,
    /// Iterations without a new best that end the refinement.
    pub stall: usize,
    /// The share of a task's internal cost a proposal may lose.
    pub temperature: f64,
    /// A new best counts as progress when below this share of the last one.
    pub tolerance: f64,
}

impl Default for Jet {
    fn default() -> Self {
        Self {
            iterations: 64,
            stall: 12,
            temperature: 0.25,
            tolerance: 0.999,
        }
    }
}

impl Jet {
    /// Refines `st` in place; returns the `f_C` decrease (never negative).
    pub fn refine(&self, st: &mut KwayState<'_>) -> i64 {
        let n = st.graph.num_tasks();
        let k = st.dist.k() as usize;
        // From a mapping over its bounds Jet could trade overload between PEs; it is left
        // to the other steps.
        if n == 0 || k < 2 || !st.is_balanced() {
            return 0;
        }
        let start = st.comm_cost();
        let mut best = start;
        // The best mapping, when the state has moved on from it.
        let mut best_part = st.part.clone();
        let mut at_best = true;
        let mut mark = best;
        let mut stalls = 0;
        // The PE each task proposes (NONE: none) and the gain, read by the afterburner.
        let mut dest = vec![NONE; n];
        let mut gain = vec![0i64; n];
        // Tasks moved by the last iteration's proposals (locked for this one).
        let mut locked = vec![false; n];
        let mut moved: Vec<u32> = Vec::new();
        let mut listed = vec![false; n];
        let mut active: Vec<u32> = boundary(st);
        let mut cost = start as i64;
        let mut shifted: Vec<(u32, i64)> = Vec::new();
        for _ in 0..self.iterations {
            if active.is_empty() {
                break;
            }
            // 1. Proposals.
            let seen: &KwayState<'_> = st;
            let props: Vec<(u32, u32, i64)> = map_blocks(
                st.pool,
                active.len(),
                BLOCK,
                || Gains::new(k),
                |gains, range| {
                    active[range]
                        .iter()
                        .filter(|&&v| !locked[v as usize])
                        .filter_map(|&v| self.propose(seen, gains, v).map(|(q, g)| (v, q, g)))
                        .collect::<Vec<_>>()
                },
            )
            .concat();
            for &(v, q, g) in &props {
                dest[v as usize] = q;
                gain[v as usize] = g;
            }
            // 2. Afterburner.
            let (dest_r, gain_r) = (&dest, &gain);
            let kept: Vec<(u32, u32)> = map_blocks(
                st.pool,
                props.len(),
                BLOCK,
                || (),
                |_, range| {
                    props[range]
                        .iter()
                        .filter(|&&(v, q, g)| afterburn(seen, dest_r, gain_r, v, q, g) > 0)
                        .map(|&(v, q, _)| (v, q))
                        .collect::<Vec<_>>()
                },
            )
            .concat();
            for &(v, _, _) in &props {
                dest[v as usize] = NONE;
            }
            // 3. Apply (the exact f_C change of the moves at once first), then rebalance.
            for &(v, q) in &kept {
                dest[v as usize] = q;
            }
            let dest_r = &dest;
            let delta: i64 = map_blocks(
                st.pool,
                kept.len(),
                BLOCK,
                || (),
                |_, range| {
                    kept[range]
                        .iter()
                        .map(|&(v, q)| applied_gain(seen, dest_r, v, q))
                        .sum::<i64>()
                },
            )
            .into_iter()
            .sum();
            for &(v, _) in &kept {
                dest[v as usize] = NONE;
            }
            for &v in &moved {
                locked[v as usize] = false;
            }
            let mut next = std::mem::take(&mut moved);
            for &(v, q) in &kept {
                st.apply(v, q);
                locked[v as usize] = true;
                moved.push(v);
            }
            cost -= delta;
            shifted.clear();
            let balanced = st.is_balanced() || rebalance_logged(st, &mut shifted);
            cost -= shifted.iter().map(|&(_, g)| g).sum::<i64>();
            debug_assert_eq!(cost, st.comm_cost() as i64, "Jet's running cost");
            if balanced && (cost as u64) < best {
                best = cost as u64;
                best_part.copy_from_slice(&st.part);
                at_best = true;
            } else {
                at_best = false;
            }
            if best < (self.tolerance * mark as f64) as u64 {
                mark = best;
                stalls = 0;
            } else {
                stalls += 1;
                if stalls >= self.stall {
                    break;
                }
            }
            // The next active tasks: the last moved (now unlocked), and the neighbours of
            // every task moved now.
            for v in moved.iter().copied().chain(shifted.iter().map(|&(v, _)| v)) {
                next.extend_from_slice(st.graph.neighbors(v));
            }
            next.retain(|&u| !std::mem::replace(&mut listed[u as usize], true));
            for &u in &next {
                listed[u as usize] = false;
            }
            next.sort_unstable();
            active = next;
        }
        if !at_best {
            st.reset_to(best_part);
        }
        start as i64 - best as i64
    }

    /// The move `v` proposes, `(q, gain)`: its best PE among its neighbours' PEs,
    /// ignoring the bounds, when the gain is positive or the loss small enough.
    fn propose(&self, st: &KwayState<'_>, gains: &mut Gains, v: u32) -> Option<(u32, i64)> {
        let (q, g, inside) = gains.best_move_inside(st, v, false)?;
        let p = st.part[v as usize];
        let allowed = self.temperature * (inside * st.dist.get(p, q)) as f64;
        (g > 0 || ((-g) as f64) < allowed).then_some((q, g))
    }
}

/// The gain of moving `v` to `q` if every neighbour with a better proposal (higher gain,
/// ties to the lower id) had moved first.
fn afterburn(st: &KwayState<'_>, dest: &[u32], gain: &[i64], v: u32, q: u32, g: i64) -> i64 {
    let graph = st.graph;
    let p = st.part[v as usize];
    let mut total = 0i64;
    for (i, &u) in graph.neighbors(v).iter().enumerate() {
        let w = if st.unit_edges {
            1
        } else {
            graph.edge_weights(v)[i]
        };
        let (du, gu) = (dest[u as usize], gain[u as usize]);
        let at = if du != NONE && (gu > g || (gu == g && u < v)) {
            du
        } else {
            st.part[u as usize]
        };
        total += (w * st.dist.get(p, at)) as i64 - (w * st.dist.get(q, at)) as i64;
    }
    total
}

/// The `f_C` change (old − new) on the edges of `v` when every task `u` with
/// `dest[u] != NONE` moves to `dest[u]` at once, `v` to `q` among them; an edge between two
/// moved tasks counts at its lower end only.
fn applied_gain(st: &KwayState<'_>, dest: &[u32], v: u32, q: u32) -> i64 {
    let graph = st.graph;
    let p = st.part[v as usize];
    let mut total = 0i64;
    for (i, &u) in graph.neighbors(v).iter().enumerate() {
        let du = dest[u as usize];
        if du != NONE && u < v {
            continue;
        }
        let w = if st.unit_edges {
            1
        } else {
            graph.edge_weights(v)[i]
        };
        let (old_u, new_u) = (
            st.part[u as usize],
            if du != NONE { du } else { st.part[u as usize] },
        );
        total += (w * st.dist.get(p, old_u)) as i64 - (w * st.dist.get(q, new_u)) as i64;
    }
    total
}

/// The tasks with a neighbour on another PE, in id order (in parallel blocks).
fn boundary(st: &KwayState<'_>) -> Vec<u32> {
    map_blocks(
        st.pool,
        st.graph.num_tasks(),
        4 * BLOCK,
        || (),
        |_, range| {
            (range.start as u32..range.end as u32)
                .filter(|&v| st.is_boundary(v))
                .collect::<Vec<_>>()
        },
    )
    .into_iter()
    .flatten()
    .collect()
}
