//! Memetic multilevel mapping (`population` ≥ 2): a population of whole multilevel runs,
//! improved by recombining two of them (the combine operator of KaFFPaE, Sanders & Schulz
//! 2012, read for mappings).
//!
//! * **Population**: `population` independent runs of the multilevel mapper, run 0 with
//!   the context's own seed, the others with seeds derived from it. They run in parallel
//!   on the context's pool, each on one thread, so run 0 is the plain mapper's mapping on
//!   one thread: the result is never worse than that.
//! * **Combine**: two parents, each the better of two drawn at random (a tournament).
//!   The graph is coarsened with every cluster inside one PE of *both* parents, so both
//!   mappings carry over to every level (down to `vcycle_per_pe · k` tasks, at most half
//!   the graph); the coarsest level starts from the better parent, and every level is
//!   refined on the way down. The child is therefore never worse than its better parent
//!   (when that one is balanced), and it can take the good regions of either: a move at a
//!   coarse level shifts a whole cluster the two parents agree on.
//! * **Mutation**: a child equal to a member (the population has converged there) is
//!   made again with every coarsest cluster first moved to a random PE with probability
//!   [`KICK`], then the balance repaired and every level refined; it may be worse than its
//!   parents. On b12 onto `torus:6x6` (16 members, 128 combines, seeds 0-4) f_C fell from
//!   827-850 (mean 836) to 806-838 (mean 822) for 1.3 times the time, and with 64 members and
//!   2,048 combines from 807 to 771 (seed 0); on larger graphs children rarely equal a
//!   member (the quick suite onto two tori: 2 of 14 runs changed, both for the better).
//! * **Replacement**: the child replaces the worst member when it is no worse than that
//!   member and differs from every member (so the population keeps its diversity); the
//!   best member never gets worse.
//!
//! Combines run in rounds of `batch` ([`COMBINE_BATCH`] by default), each with parents
//! and a seed drawn beforehand, in parallel on the pool: the result depends on the seed,
//! `population`, `combines` and `batch`, not on the thread count (raise `batch` to use
//! more threads than two). A context's deadline (`taskmap map --time-limit`) ends the
//! population and the combines early: after the first round of members (one member per
//! thread, whose V-cycles stop at the deadline), a round or a batch starts only when it
//! is expected to end by the deadline, at the mean pace of the rounds or batches before
//! (the first batch starts when the deadline has not passed, so it can overrun it by one
//! batch). With a single member built there is no combine: the result is that member
//! (one run of the mapper, its V-cycles cut at the deadline). The result then depends on
//! the machine's speed too.

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

use super::coarsen::hierarchy::*;
use super::config::*;
use super::driver::*;
use super::refine::kway::KwayState;
use super::refine::rebalance::rebalance;
use super::refine::{scored, uncoarsen};
use super::vcycle::Pace;
use super::DistTable;
use crate::mapper::{NoProgress, RunContext};
use crate::multilevel::phases::Clustering;
use crate::problem::FREE;

/// Combines drawn and run together (in parallel) before their children enter the
/// population, by default (`batch`).
pub const COMBINE_BATCH: usize = 2;

/// Recombinations per member when `combines` is not given.
pub const COMBINES_PER_MEMBER: usize = 8;

/// The probability with which a mutation moves each coarsest cluster to a random PE.
pub const KICK: f64 = 0.1;

/// Salts a mutation's seed away from its combine's.
const KICK_SALT: u64 = 0x3c6e_f372_fe94_f82b;

/// The most members `population` may ask for.
pub const MAX_POPULATION: usize = 256;

/// The most recombinations `batch` may run together.
pub const MAX_BATCH: usize = 1024;

/// The most combines `combines` may ask for.
pub const MAX_COMBINES: usize = 100_000;

/// (unbalanced, f_C): smaller is better.
type Score = (bool, u64);

fn score(inst: &Instance<'_>, dist: &DistTable<'_>, part: Vec<u32>) -> (Score, Vec<u32>) {
    scored(inst.graph, dist, &inst.bound, part)
}

/// The seed of population member `i` (`i > 0`), derived from the run's seed.
fn member_seed(seed: u64, i: usize) -> u64 {
    seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Runs `jobs` with `f`, in parallel on `pool` when there is one; results in job order.
fn run_all<J: Sync, T: Send>(
    pool: &Option<rayon::ThreadPool>,
    jobs: &[J],
    f: impl Fn(&J) -> T + Sync + Send,
) -> Vec<T> {
    match pool {
        Some(pool) => pool.install(|| jobs.par_iter().map(&f).collect()),
        None => jobs.iter().map(f).collect(),
    }
}

/// The memetic mapper: see the module documentation.
pub(super) fn evolve(
    cfg: &MultilevelMapper,
    inst: &Instance<'_>,
    dist: &DistTable<'_>,
    ctx: &mut RunContext,
) -> Vec<u32> {
    let size = cfg.population;
    let seeds: Vec<u64> = (0..size).map(|i| member_seed(ctx.seed, i)).collect();
    let mut pop: Vec<(Score, Vec<u32>)> = ctx.timed("population", |ctx| {
        // In rounds of one member per thread, so a deadline can end the population early
        // (on one thread, after the first member); without one, every member is built
        // and the rounds change nothing (each member has its own seed).
        let round = ctx
            .pool
            .as_ref()
            .map_or(1, |p| p.current_num_threads())
            .max(if ctx.deadline.is_some() { 1 } else { 2 });
        // A round starts only when it is expected (at the mean pace of the rounds before)
        // to end before the deadline; the members of the first round see the deadline
        // too (their V-cycles stop at it).
        let mut pop = Vec::with_capacity(size);
        let mut pace = Pace::default();
        let built = std::sync::atomic::AtomicU64::new(0);
        let progress = &*ctx.progress;
        for chunk in seeds.chunks(round) {
            if !pop.is_empty() && (!pace.fits(ctx.deadline) || ctx.stopped()) {
                break;
            }
            let first = pop.is_empty();
            let (deadline, stop) = (ctx.deadline, &ctx.stop);
            let t = Instant::now();
            pop.extend(run_all(&ctx.pool, chunk, |&s| {
                let mut member = RunContext::new(s);
                member.stop = stop.clone();
                if first {
                    member.deadline = deadline;
                }
                let part = map_instance_with(cfg, inst, dist, &mut member);
                let done = built.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress.step(done, size as u64);
                score(inst, dist, part)
            }));
            pace.add(t.elapsed());
        }
        pop
    });
    // Parents exist when at least two members were built (a deadline may stop after one).
    let combines = cfg.combines.unwrap_or(COMBINES_PER_MEMBER * size);
    let batch = cfg.combine_batch.unwrap_or(COMBINE_BATCH).max(1);
    ctx.timed("combine", |ctx| {
        let mut done = 0;
        // Like the members' rounds: a batch starts when expected to end in time.
        let mut pace = Pace::default();
        while done < combines && pop.len() >= 2 && pace.fits(ctx.deadline) && !ctx.stopped() {
            let t = Instant::now();
            let m = batch.min(combines - done);
            let jobs: Vec<(usize, usize, u64)> = (0..m)
                .map(|_| {
                    let (a, b) = parents(&pop, &mut ctx.rng);
                    (a, b, ctx.rng.gen())
                })
                .collect();
            let children = run_all(&ctx.pool, &jobs, |&(a, b, seed)| {
                let (better, other) = if pop[b].0 < pop[a].0 { (b, a) } else { (a, b) };
                let (b, o) = (&pop[better].1, &pop[other].1);
                let mut child = recombine(cfg, inst, dist, b, o, seed, 0.0);
                // A copy of a member would not enter: mutate instead.
                if pop.iter().any(|(_, p)| *p == child) {
                    child = recombine(cfg, inst, dist, b, o, seed ^ KICK_SALT, KICK);
                }
                score(inst, dist, child)
            });
            for child in children {
                insert(&mut pop, child);
            }
            pace.add(t.elapsed());
            done += m;
            ctx.progress.step(done as u64, combines as u64);
        }
    });
    pop.into_iter()
        .min_by_key(|(s, _)| *s)
        .map(|(_, p)| p)
        .unwrap_or_default()
}

/// Two distinct members, each the better of two drawn at random.
fn parents(pop: &[(Score, Vec<u32>)], rng: &mut impl Rng) -> (usize, usize) {
    let n = pop.len();
    let pick = |rng: &mut dyn rand::RngCore| {
        let (i, j) = (rng.gen_range(0..n), rng.gen_range(0..n));
        if pop[j].0 < pop[i].0 {
            j
        } else {
            i
        }
    };
    let a = pick(rng);
    let mut b = pick(rng);
    if b == a {
        b = (a + 1 + rng.gen_range(0..n - 1)) % n;
    }
    (a, b)
}

/// Puts `child` in place of the worst member when it is no worse than that member and
/// differs from every member.
fn insert(pop: &mut [(Score, Vec<u32>)], child: (Score, Vec<u32>)) {
    if pop.iter().any(|(_, p)| *p == child.1) {
        return;
    }
    let worst = (0..pop.len())
        .max_by_key(|&i| pop[i].0)
        .expect("a population has members");
    if child.0 <= pop[worst].0 {
        pop[worst] = child;
    }
}

/// The size a combine coarsens to: `vcycle_per_pe · k` tasks, but at most half the graph,
/// so a graph that small is coarsened too (its clusters are what carries the second parent
/// in), and no fewer than `labels`, the PE pairs the parents use (no cluster spans two).
fn combine_target(cfg: &MultilevelMapper, n: usize, k: usize, labels: usize) -> usize {
    cfg.vcycle_per_pe.saturating_mul(k).min(n / 2).max(labels)
}

/// The mutation: every task not pinned (`fixed`, empty when none is) moves to a PE drawn
/// uniformly from `0..k` with probability `share` (it may draw its own). Nothing with
/// `share` 0.
fn kick_part(part: &mut [u32], fixed: &[u32], share: f64, k: usize, rng: &mut impl Rng) {
    if share <= 0.0 {
        return;
    }
    for (c, p) in part.iter_mut().enumerate() {
        if (fixed.is_empty() || fixed[c] == FREE) && rng.gen_bool(share.min(1.0)) {
            *p = rng.gen_range(0..k as u32);
        }
    }
}

/// The child of `better` and `other` (see the module documentation); never worse than
/// `better` when `better` is balanced and `kick` is 0. With `kick` > 0, a mutation: every
/// coarsest cluster not pinned moves to a random PE with probability `kick` (the tasks
/// themselves when the graph is not coarsened), then the balance is repaired and the
/// level refined.
pub(super) fn recombine(
    cfg: &MultilevelMapper,
    inst: &Instance<'_>,
    dist: &DistTable<'_>,
    better: &[u32],
    other: &[u32],
    seed: u64,
    kick: f64,
) -> Vec<u32> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (graph, bound, fixed0) = (inst.graph, &inst.bound[..], inst.fixed);
    let k = dist.k() as usize;
    // One label per pair (PE in `better`, PE in `other`): clusters stay inside a label;
    // `label_pe` is each label's PE in `better`.
    let mut ids: rustc_hash::FxHashMap<u64, u32> = Default::default();
    let mut label_pe: Vec<u32> = Vec::new();
    let labels: Vec<u32> = better
        .iter()
        .zip(other)
        .map(|(&a, &b)| {
            let next = ids.len() as u32;
            *ids.entry(u64::from(a) << 32 | u64::from(b))
                .or_insert_with(|| {
                    label_pe.push(a);
                    next
                })
        })
        .collect();
    let target = combine_target(cfg, graph.num_tasks(), k, ids.len());
    let mcw = max_cluster_weights(cfg, graph, bound, k, target);
    let clustering = Clustering::new(cfg, cfg.vcycle_coarsening, target, &mcw);
    let levels = coarsen_levels(&clustering, graph, fixed0, &labels, None, &mut rng);
    // The better parent on the coarsest level (each coarse task carries its label), or on
    // the graph itself when it was not coarsened.
    let (g, fixed, mut part) = match levels.last() {
        Some(top) => (
            &top.graph,
            &top.fixed[..],
            top.part.iter().map(|&l| label_pe[l as usize]).collect(),
        ),
        None => (graph, fixed0, better.to_vec()),
    };
    kick_part(&mut part, fixed, kick, k, &mut rng);
    let mut st = KwayState::new(g, dist, bound, part).with_fixed(fixed);
    if !st.is_balanced() {
        rebalance(&mut st);
    }
    cfg.refiner().refine(&mut st, &mut rng);
    if levels.is_empty() {
        st.part
    } else {
        uncoarsen(
            &cfg.refiner(),
            &levels,
            graph,
            fixed0,
            dist,
            bound,
            st.part,
            None,
            &mut rng,
            &NoProgress,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multilevel::load_bounds;
    use crate::problem::Problem;
    use taskmap_arch::{parse_arch, PeId};
    use taskmap_graph::gen;

    /// A child is balanced, never worse than its better parent, keeps the pinned tasks on
    /// their PEs, and its f_C equals a naive recomputation; over the cases the children
    /// improve on their parents somewhere (so the combine does something). A mutant keeps
    /// the balance and the pins (the mutation itself: `kick_moves_the_share_asked_and_no_pin`).
    #[test]
    fn children_never_worse_than_the_better_parent() {
        let mut improved = 0;
        for (gi, (g, spec, cap)) in [
            (gen::random_geometric(1500, 6.0, 3), "torus:6x6", 45),
            (gen::grid(&[40, 40], false), "mesh:4x4", 101),
            (gen::random_graph(1200, 4.0, 5), "tree:2:4/1:10", 160),
            // Fewer tasks than 8 per PE: the combine's target is at most half the graph.
            (gen::random_geometric(600, 6.0, 7), "torus:12x12", 6),
        ]
        .into_iter()
        .enumerate()
        {
            let mut problem = Problem::new(g, parse_arch(spec).unwrap());
            let k = problem.arch.pe_count();
            problem.capacities = Some(crate::Capacities::uniform(k, &[cap]));
            let mut fixed = vec![FREE; problem.graph.num_tasks()];
            fixed[0] = 3;
            fixed[100] = 0;
            problem.fixed = Some(fixed.clone());
            let inst = Instance {
                graph: &problem.graph,
                arch: problem.arch.as_ref(),
                whole: true,
                epsilon: problem.epsilon,
                fixed: &fixed,
                bound: load_bounds(&problem),
            };
            let dist = DistTable::new(inst.arch);
            let cfg = MultilevelMapper::default();
            for seed in 0..3u64 {
                let a = map_instance(&cfg, &inst, &mut RunContext::new(seed));
                let b = map_instance(&cfg, &inst, &mut RunContext::new(seed + 10));
                let (sa, sb) = (
                    score(&inst, &dist, a.clone()).0,
                    score(&inst, &dist, b.clone()).0,
                );
                assert!(!sa.0 && !sb.0, "graph {gi}: a parent is unbalanced");
                let (better, other, best) = if sb < sa { (&b, &a, sb) } else { (&a, &b, sa) };
                let child = recombine(&cfg, &inst, &dist, better, other, seed, 0.0);
                let sc = score(&inst, &dist, child.clone()).0;
                assert!(!sc.0, "graph {gi} seed {seed}: unbalanced child");
                assert!(sc <= best, "graph {gi} seed {seed}: {sc:?} > {best:?}");
                // f_C recomputed naively, edge by edge, from the target's distances.
                let naive: u64 = (0..inst.graph.num_tasks() as u32)
                    .flat_map(|v| {
                        let g = inst.graph;
                        g.neighbors(v)
                            .iter()
                            .zip(g.edge_weights(v))
                            .filter(move |(&u, _)| u > v)
                            .map(move |(&u, &w)| (v, u, w))
                    })
                    .map(|(v, u, w)| {
                        let (p, q) = (PeId(child[v as usize]), PeId(child[u as usize]));
                        w * inst.arch.distance(p, q)
                    })
                    .sum();
                assert_eq!(sc.1, naive, "graph {gi} seed {seed}");
                assert_eq!((child[0], child[100]), (3, 0), "graph {gi}: a pin moved");
                improved += usize::from(sc < best);
                // A mutant keeps the capacities and the pins.
                let mutant = recombine(&cfg, &inst, &dist, better, other, seed, KICK);
                let (sm, _) = score(&inst, &dist, mutant.clone());
                assert!(!sm.0, "graph {gi}: unbalanced mutant");
                assert_eq!((mutant[0], mutant[100]), (3, 0), "graph {gi}: a pin moved");
            }
        }
        assert!(improved > 0, "no child improved on its parents");
    }

    /// The mutation moves each free entry with the given probability, to any PE, and
    /// never a pinned one.
    #[test]
    fn kick_moves_the_share_asked_and_no_pin() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        let (n, k) = (20_000usize, 8usize);
        let start: Vec<u32> = (0..n).map(|i| (i % k) as u32).collect();
        let fixed: Vec<u32> = (0..n)
            .map(|i| if i % 5 == 0 { (i % k) as u32 } else { FREE })
            .collect();
        let mut part = start.clone();
        kick_part(&mut part, &fixed, 0.0, k, &mut rng);
        assert_eq!(part, start, "share 0 moved something");
        for share in [0.1, 0.5] {
            let mut part = start.clone();
            kick_part(&mut part, &fixed, share, k, &mut rng);
            let moved = (0..n).filter(|&i| part[i] != start[i]).count();
            assert!(
                (0..n).step_by(5).all(|i| part[i] == start[i]),
                "a pin moved"
            );
            // A free entry moves with probability share·(1 − 1/k).
            let want = share * (1.0 - 1.0 / k as f64) * (n - n / 5) as f64;
            assert!(
                (moved as f64 - want).abs() < 0.1 * want,
                "share {share}: {moved} moved, about {want} expected"
            );
            assert!(part.iter().all(|&p| (p as usize) < k));
        }
    }

    /// A combine coarsens to `vcycle_per_pe · k` tasks, to half a graph smaller than
    /// twice that, and never below the parents' PE pairs.
    #[test]
    fn combine_target_bounds() {
        let cfg = MultilevelMapper::default();
        assert_eq!(combine_target(&cfg, 100_000, 36, 50), 288);
        assert_eq!(combine_target(&cfg, 600, 144, 200), 300);
        assert_eq!(combine_target(&cfg, 600, 144, 400), 400);
        assert_eq!(combine_target(&cfg, 1065, 36, 100), 288);
    }

    /// The tournament draws two distinct members, also from a population of two.
    #[test]
    fn parents_are_distinct() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for size in [2usize, 3, 8] {
            let pop: Vec<(Score, Vec<u32>)> = (0..size)
                .map(|i| ((false, i as u64 % 3), vec![i as u32]))
                .collect();
            for _ in 0..200 {
                let (a, b) = parents(&pop, &mut rng);
                assert!(a != b && a < size && b < size);
            }
        }
    }

    /// A child enters in place of the worst member only when no worse and new.
    #[test]
    fn insert_replaces_the_worst_with_a_new_child() {
        let mut pop: Vec<(Score, Vec<u32>)> = vec![
            ((false, 5), vec![0]),
            ((false, 9), vec![1]),
            ((true, 1), vec![2]),
        ];
        insert(&mut pop, ((false, 7), vec![1]));
        assert_eq!(pop[2].0, (true, 1), "a copy of a member entered");
        insert(&mut pop, ((false, 9), vec![3]));
        assert_eq!(
            pop[2],
            ((false, 9), vec![3]),
            "the unbalanced member is not the one replaced"
        );
        insert(&mut pop, ((false, 10), vec![4]));
        assert!(
            pop.iter().all(|(_, p)| p != &vec![4]),
            "a worse child entered"
        );
        insert(&mut pop, ((false, 6), vec![5]));
        assert_eq!(pop.iter().map(|(s, _)| s.1).max(), Some(9));
    }
}
