//! Simulated annealing of `f_C` on the input graph (ours; the multilevel mapper's
//! `anneal` parameter): for small graphs, where the refiners and the memetic mode stall in
//! a local optimum, a long random walk that also accepts worse mappings finds better
//! ones (b12 onto `torus:6x6`: see `docs/berger.md`).
//!
//! A proposal picks a movable task `v` at random and a PE `q` near it: the PE of a random
//! neighbour (seven times in ten) or a PE at the smallest distance from that one. When `q`
//! can take `v`, the move is proposed; otherwise `v` swaps with a movable neighbour of it
//! on `q`, when both PEs stay within their bounds. A proposal that raises `f_C` by `Δ` is
//! taken with probability `exp(−Δ/T)`. The run has four rounds, each from the best
//! mapping met so far, in which `T` falls geometrically from `T0` to `T0 / 64`: the first
//! with half the proposals and `T0` the mean rise of a sample of proposals, each next
//! with half the temperature and half the proposals left (the last two share them).
//! Netlists gained most from long hot walks, grids and geometric graphs from cooler ones
//! (b12, b17, a 100x100 grid and a random geometric graph of 1,500 tasks: one long hot
//! round was best on the netlists but left the geometric graph as it was). The best
//! mapping met is the result, so it is never worse than the start; the bounds hold
//! throughout, and fixed tasks never move. Each proposal costs the degrees of the tasks
//! it moves.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rand::Rng;

use super::refine::kway::KwayState;
use crate::mapper::Progress;

/// Most PEs kept per PE as "nearest" candidates.
const NEAR: usize = 64;

/// Annealing rounds, each from the best mapping so far and at half the temperature.
const ROUNDS: u32 = 4;

/// Each PE's nearest others (at the smallest positive distance from it), found the
/// first time a proposal needs them: at most [`NEAR`] of them, spread evenly over the
/// PE numbers. O(k) distance calls per PE asked for.
struct Near {
    lists: Vec<Option<Vec<u32>>>,
}

impl Near {
    fn new(k: u32) -> Self {
        Near {
            lists: vec![None; k as usize],
        }
    }

    fn of(&mut self, state: &KwayState<'_>, p: u32) -> &[u32] {
        self.lists[p as usize].get_or_insert_with(|| {
            let k = state.dist.k();
            let d = (0..k)
                .filter(|&q| q != p)
                .map(|q| state.dist.get(p, q))
                .min()
                .unwrap_or(0);
            let all: Vec<u32> = (0..k)
                .filter(|&q| q != p && state.dist.get(p, q) == d)
                .collect();
            if all.len() <= NEAR {
                all
            } else {
                (0..NEAR).map(|i| all[i * all.len() / NEAR]).collect()
            }
        })
    }
}

/// A proposal: moving `v` to `q`, or swapping it with `swap` (on `q`), and the rise of
/// `f_C`.
struct Proposal {
    v: u32,
    q: u32,
    swap: Option<u32>,
    rise: i64,
}

/// Draws a proposal for one of the `tasks` (`None`: nothing to propose this time).
fn propose(
    state: &mut KwayState<'_>,
    tasks: &[u32],
    near: &mut Near,
    rng: &mut impl Rng,
) -> Option<Proposal> {
    let v = tasks[rng.gen_range(0..tasks.len() as u32) as usize];
    let deg = state.graph.degree(v);
    let u = state.graph.neighbors(v)[rng.gen_range(0..deg)];
    let mut q = state.part[u as usize];
    if rng.gen_range(0..10) >= 7 {
        let list = near.of(state, q);
        if !list.is_empty() {
            q = list[rng.gen_range(0..list.len())];
        }
    }
    let p = state.part[v as usize];
    if q == p {
        return None;
    }
    if state.fits(v, q) {
        let rise = -state.move_gain(v, q);
        return Some(Proposal {
            v,
            q,
            swap: None,
            rise,
        });
    }
    // a swap with a random movable neighbour on q, when both bounds hold
    let on_q = state
        .graph
        .neighbors(v)
        .iter()
        .enumerate()
        .filter(|&(_, &y)| state.part[y as usize] == q && state.movable(y));
    let count = on_q.clone().count();
    if count == 0 {
        return None;
    }
    let (i, &y) = on_q.clone().nth(rng.gen_range(0..count)).expect("in range");
    // (the mapping is balanced, so "does not grow" means "within the bound")
    if !state.swap_fits(v, y) {
        return None;
    }
    let w = state.graph.edge_weights(v)[i] as i64;
    let gain = state.move_gain(v, q) + state.move_gain(y, p) - 2 * w * state.dist.get(p, q) as i64;
    Some(Proposal {
        v,
        q,
        swap: Some(y),
        rise: -gain,
    })
}

/// The best mapping met, kept as the tasks moved since it was last met (so a new best
/// costs the moves since the last, not a copy of the whole mapping).
struct Best {
    part: Vec<u32>,
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
}

impl Best {
    fn new(part: &[u32]) -> Self {
        Best {
            part: part.to_vec(),
            dirty: Vec::new(),
            is_dirty: vec![false; part.len()],
        }
    }

    /// Applies a proposal to `state`, noting the tasks it moves.
    fn apply(&mut self, state: &mut KwayState<'_>, pr: &Proposal) {
        let p = state.part[pr.v as usize];
        state.apply(pr.v, pr.q);
        self.touch(pr.v);
        if let Some(y) = pr.swap {
            state.apply(y, p);
            self.touch(y);
        }
    }

    fn touch(&mut self, v: u32) {
        if !self.is_dirty[v as usize] {
            self.is_dirty[v as usize] = true;
            self.dirty.push(v);
        }
    }

    /// The current mapping is the new best.
    fn record(&mut self, state: &KwayState<'_>) {
        for &v in &self.dirty {
            self.part[v as usize] = state.part[v as usize];
            self.is_dirty[v as usize] = false;
        }
        self.dirty.clear();
    }

    /// Puts the best mapping back into `state`.
    fn restore(&mut self, state: &mut KwayState<'_>) {
        for &v in &self.dirty {
            if state.part[v as usize] != self.part[v as usize] {
                state.apply(v, self.part[v as usize]);
            }
            self.is_dirty[v as usize] = false;
        }
        self.dirty.clear();
    }
}

/// Anneals a balanced mapping for `proposals` proposals, or until `deadline` or `stop`
/// (checked every 4,096 proposals, when `progress` is told of the proposals made); returns how much
/// `f_C` fell (0 when the mapping is unbalanced: it is left as it is). Proposals go to the
/// movable tasks with neighbours. The mapping depends on the generator's state, and on the
/// deadline when one passes.
pub fn anneal(
    state: &mut KwayState<'_>,
    proposals: u64,
    deadline: Option<Instant>,
    stop: &AtomicBool,
    rng: &mut impl Rng,
    progress: &dyn Progress,
) -> u64 {
    let tasks: Vec<u32> = (0..state.graph.num_tasks() as u32)
        .filter(|&v| state.movable(v) && state.graph.degree(v) > 0)
        .collect();
    if proposals == 0 || tasks.is_empty() || !state.is_balanced() {
        return 0;
    }
    let mut near = Near::new(state.dist.k());
    // T0: the mean rise of a sample of proposals (not taken)
    let began = Instant::now();
    let (mut sum, mut ups) = (0i64, 0i64);
    for _ in 0..1000 {
        if let Some(pr) = propose(state, &tasks, &mut near, rng) {
            if pr.rise > 0 {
                sum += pr.rise;
                ups += 1;
            }
        }
    }
    if ups == 0 {
        return 0;
    }
    // With a deadline, no more proposals than fit before it (at 1.25 times the sample's
    // time per proposal), so that the walk cools in time.
    let proposals = match deadline {
        Some(d) => {
            let per = began.elapsed().as_secs_f64() / 1000.0 * 1.25;
            let left = d.saturating_duration_since(Instant::now()).as_secs_f64();
            proposals.min((left / per.max(1e-9)) as u64)
        }
        None => proposals,
    };
    let t0 = sum as f64 / ups as f64;
    let start = state.comm_cost();
    let (mut cost, mut best) = (start, start);
    let mut kept = Best::new(&state.part);
    let total: u64 = (0..ROUNDS)
        .map(|r| proposals >> (r + 1).min(ROUNDS - 1))
        .sum();
    let mut made = 0;
    // Rounds from hot to cool, each from the best mapping so far: the first starts at
    // the mean rise with half the proposals, each next at half the temperature of the
    // one before with half the proposals left (the last two share the rest).
    for round in 0..ROUNDS {
        let share = (round + 1).min(ROUNDS - 1);
        let per_round = proposals >> share;
        let cool = (1.0f64 / 64.0).powf(1.0 / per_round.max(1) as f64);
        if round > 0 {
            kept.restore(state);
            cost = best;
        }
        let mut t = t0 / f64::from(1u32 << round);
        for i in 0..per_round {
            if i % 4096 == 0 {
                if deadline.is_some_and(|d| Instant::now() >= d) || stop.load(Ordering::Relaxed) {
                    break;
                }
                progress.step(made + i, total);
            }
            t *= cool;
            let Some(pr) = propose(state, &tasks, &mut near, rng) else {
                continue;
            };
            if pr.rise <= 0 || rng.gen::<f64>() < (-(pr.rise as f64) / t).exp() {
                kept.apply(state, &pr);
                cost = (cost as i64 + pr.rise) as u64;
                if cost < best {
                    best = cost;
                    kept.record(state);
                }
            }
        }
        made += per_round;
    }
    kept.restore(state);
    start - best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multilevel::refine::rebalance::rebalance;
    use crate::multilevel::DistTable;
    use crate::problem::FREE;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;
    use taskmap_graph::gen;

    /// Never worse than the start; the bounds hold; pinned tasks stay; the loads and the
    /// fall reported match a recomputation; the same generator state gives the same
    /// mapping; it improves somewhere.
    #[test]
    fn annealing_never_worsens_and_keeps_the_constraints() {
        let mut improved = 0;
        for (i, spec) in ["torus:4x4", "mesh:3x5", "tree:4:4/1:10", "hypercube:4"]
            .iter()
            .enumerate()
        {
            let arch = taskmap_arch::parse_arch(spec).unwrap();
            let dist = DistTable::new(arch.as_ref());
            let g = gen::random_geometric(600, 6.0, i as u64 + 1);
            let k = dist.k();
            let n = g.num_tasks() as u64;
            let cap = (n * 11).div_ceil(10 * u64::from(k));
            let bound = vec![cap; k as usize];
            let fixed: Vec<u32> = (0..n as u32)
                .map(|t| if t % 37 == 0 { t % k } else { FREE })
                .collect();
            let start: Vec<u32> = (0..n as u32).map(|t| (t * 7 + t / 3) % k).collect();
            let run = |seed: u64| {
                let mut st = KwayState::new(&g, &dist, &bound, start.clone()).with_fixed(&fixed);
                for (t, &f) in fixed.iter().enumerate() {
                    if f != FREE {
                        st.apply(t as u32, f);
                    }
                }
                rebalance(&mut st);
                assert!(st.is_balanced());
                let before = st.comm_cost();
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
                let fell = anneal(
                    &mut st,
                    200 * n,
                    None,
                    &AtomicBool::new(false),
                    &mut rng,
                    &crate::NoProgress,
                );
                (before, fell, st.part.clone(), st.loads.clone())
            };
            let (before, fell, part, loads) = run(5);
            let fresh = KwayState::new(&g, &dist, &bound, part.clone());
            assert_eq!(fresh.loads, loads, "{spec}: loads");
            assert!(fresh.is_balanced(), "{spec}: bounds");
            assert_eq!(
                fresh.comm_cost() + fell,
                before,
                "{spec}: the fall reported"
            );
            for (t, &f) in fixed.iter().enumerate() {
                if f != FREE {
                    assert_eq!(part[t], f, "{spec}: pin of task {t}");
                }
            }
            assert_eq!(run(5).2, part, "{spec}: same seed, same mapping");
            improved += usize::from(fell > 0);
        }
        assert!(improved >= 3, "annealing improved {improved} of 4");
    }

    /// Every proposal's rise (a move, or a swap with a neighbour on the full PE) equals the
    /// recomputed change of `f_C` once it is applied, on every kind of target.
    #[test]
    fn proposal_rise_equals_recomputed_cost_change() {
        let mut swaps = 0;
        for (i, spec) in [
            "torus:4x4",
            "mesh:3x5",
            "tree:4:4/1:10",
            "hypercube:4",
            "wcomplete:1,2,3,4",
        ]
        .iter()
        .enumerate()
        {
            let arch = taskmap_arch::parse_arch(spec).unwrap();
            let dist = DistTable::new(arch.as_ref());
            let g = gen::random_geometric(300, 6.0, i as u64 + 7);
            let k = dist.k();
            let n = g.num_tasks() as u64;
            // Tight bounds, so that many proposals are swaps.
            let cap = (n * 21).div_ceil(20 * u64::from(k));
            let bound = vec![cap; k as usize];
            let start: Vec<u32> = (0..n as u32).map(|t| t % k).collect();
            let mut st = KwayState::new(&g, &dist, &bound, start);
            rebalance(&mut st);
            let tasks: Vec<u32> = (0..n as u32).filter(|&t| g.degree(t) > 0).collect();
            let mut near = Near::new(k);
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(i as u64);
            for _ in 0..2000 {
                let Some(pr) = propose(&mut st, &tasks, &mut near, &mut rng) else {
                    continue;
                };
                let before = st.comm_cost() as i64;
                let p = st.part[pr.v as usize];
                st.apply(pr.v, pr.q);
                if let Some(y) = pr.swap {
                    st.apply(y, p);
                    swaps += 1;
                }
                let after = KwayState::new(&g, &dist, &bound, st.part.clone()).comm_cost() as i64;
                assert_eq!(after - before, pr.rise, "{spec}: task {} to {}", pr.v, pr.q);
                assert!(st.is_balanced(), "{spec}: a proposal broke a bound");
            }
        }
        assert!(swaps > 0, "no swap was proposed");
    }

    /// A deadline already passed leaves no proposal to make (the walk is shortened to what
    /// fits before it), and a stop flag set ends every round at its first check: the
    /// mapping is unchanged, however many proposals were asked for.
    #[test]
    fn a_passed_deadline_stops_annealing() {
        let arch = taskmap_arch::parse_arch("torus:4x4").unwrap();
        let dist = DistTable::new(arch.as_ref());
        let g = gen::grid(&[20, 20], false);
        let bound = vec![30u64; 16];
        let start: Vec<u32> = (0..400u32).map(|t| (t % 20) / 5 + 4 * (t / 100)).collect();
        // a deadline that has passed, or the stop flag set
        for (deadline, stop) in [(Some(Instant::now()), false), (None, true)] {
            let mut st = KwayState::new(&g, &dist, &bound, start.clone());
            assert!(st.is_balanced());
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
            let fell = anneal(
                &mut st,
                u64::MAX,
                deadline,
                &AtomicBool::new(stop),
                &mut rng,
                &crate::NoProgress,
            );
            assert_eq!((fell, &st.part), (0, &start));
        }
    }
}
