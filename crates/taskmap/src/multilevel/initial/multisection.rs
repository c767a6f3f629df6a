//! Multisection along a tree target's hierarchy (the approach of KaHIP's
//! `global_multisection` and SharedMap): the coarsest graph split into the top level's
//! groups, then each group into its subtrees, one level after the other.

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use taskmap_graph::TaskGraph;

use crate::mapper::{NoProgress, RunContext};
use crate::multilevel::refine::kway::KwayState;
use crate::multilevel::refine::rebalance::rebalance;
use crate::multilevel::DistTable;

use crate::multilevel::coarsen::hierarchy::*;
use crate::multilevel::config::*;
use crate::multilevel::driver::*;
use crate::multilevel::initial::*;
use crate::multilevel::phases::Clustering;
use crate::multilevel::refine::*;

/// The group levels of a tree-like target: for every distance `D` above the smallest
/// positive one, from the largest down, the classes of "at distance below `D`", when they
/// are an equivalence with at least two and fewer than `k` classes and every two PEs of
/// two classes are as far apart as any other two (so the classes form a target of their
/// own), as `(class of every PE, number of classes)`; at most `max_levels` of them, from
/// the top. Empty when the largest distance does not split the PEs that way (meshes,
/// tori, hypercubes, complete graphs) and without a distance table (k > 4096). O(k²) per
/// level examined.
pub(crate) fn group_levels(dist: &DistTable<'_>, max_levels: usize) -> Vec<(Vec<u32>, u32)> {
    let k = dist.k();
    let classes = |d: u64| -> Option<(Vec<u32>, u32)> {
        let mut group = vec![u32::MAX; k as usize];
        let mut rep = Vec::new();
        for a in 0..k {
            if group[a as usize] != u32::MAX {
                continue;
            }
            for b in a..k {
                if dist.get(a, b) < d {
                    if group[b as usize] != u32::MAX {
                        return None;
                    }
                    group[b as usize] = rep.len() as u32;
                }
            }
            rep.push(a);
        }
        let g = rep.len() as u32;
        if g < 2 || g >= k {
            return None;
        }
        for a in 0..k {
            let ga = group[a as usize];
            for b in a + 1..k {
                let (gb, dab) = (group[b as usize], dist.get(a, b));
                let ok = if ga == gb {
                    dab < d
                } else {
                    dab >= d && dab == dist.get(rep[ga as usize], rep[gb as usize])
                };
                if !ok {
                    return None;
                }
            }
        }
        Some((group, g))
    };
    let Some(dmax) = dist.max_distance() else {
        return Vec::new();
    };
    if max_levels == 0 {
        return Vec::new();
    }
    let Some(top) = classes(dmax) else {
        return Vec::new();
    };
    let mut out = vec![top];
    if max_levels == 1 {
        return out;
    }
    // The distinct distances (a tree has one per level).
    let mut ds: Vec<u64> = Vec::new();
    for a in 0..k {
        for b in a + 1..k {
            let d = dist.get(a, b);
            if d < dmax && !ds.contains(&d) {
                if ds.len() == 64 {
                    return out;
                }
                ds.push(d);
            }
        }
    }
    ds.sort_unstable();
    // The smallest positive distance makes every PE its own class.
    for &d in ds.iter().skip(1).rev() {
        if out.len() == max_levels {
            break;
        }
        if let Some(level) = classes(d) {
            out.push(level);
        }
    }
    out
}

/// Group-level refinement (see [`MultilevelMapper::group_levels`]): a V-cycle on the
/// partition of the tasks into the `g` groups of `group` (two groups are as far apart as
/// any PE of one from any PE of the other; a group's bound is the sum of its PEs'), which
/// is not held back by the per-PE bounds that block single moves between full PEs; then
/// every task that changed group goes to the PE of its new group where it costs least
/// among those with room (the least loaded when none has), and the mapping is rebalanced
/// and refined on the PEs. The result is kept when it is no worse (balance first, then
/// f_C).
#[allow(clippy::too_many_arguments)]
pub(crate) fn refine_groups(
    cfg: &MultilevelMapper,
    graph: &TaskGraph,
    dist: &DistTable<'_>,
    bound: &[u64],
    group: &[u32],
    g: u32,
    part: Vec<u32>,
    rng: &mut Xoshiro256PlusPlus,
) -> Vec<u32> {
    let ncon = graph.ncon();
    let k = dist.k() as usize;
    let score = |st: &KwayState<'_>| (!st.is_balanced(), st.comm_cost());
    let start = KwayState::new(graph, dist, bound, part);
    let before = score(&start);
    let part = start.part;

    let mut rep = vec![0u32; g as usize];
    for p in (0..k as u32).rev() {
        rep[group[p as usize] as usize] = p;
    }
    let qd: Vec<u64> = (0..g as usize)
        .flat_map(|x| (0..g as usize).map(move |y| (x, y)))
        .map(|(x, y)| dist.get(rep[x], rep[y]))
        .collect();
    let qarch = taskmap_arch::DistanceMatrix::new(g, qd).expect("a group distance matrix");
    let qdist = DistTable::new(&qarch);
    let mut qbound = vec![0u64; g as usize * ncon];
    for p in 0..k {
        for c in 0..ncon {
            qbound[group[p] as usize * ncon + c] += bound[p * ncon + c];
        }
    }
    let nodes: Vec<u32> = part.iter().map(|&p| group[p as usize]).collect();
    let target = cfg.vcycle_per_pe.saturating_mul(k).max(cfg.min_coarsest);
    let mcw = max_cluster_weights(cfg, graph, &qbound, g as usize, target);
    let clustering = Clustering::new(cfg, cfg.vcycle_coarsening, target, &mcw);
    let levels = coarsen_levels(&clustering, graph, &[], &nodes, None, rng);
    let nodes = match levels.last() {
        Some(top) => {
            let mut st = KwayState::new(&top.graph, &qdist, &qbound, top.part.clone());
            cfg.refiner().refine(&mut st, rng);
            uncoarsen(
                &cfg.refiner(),
                &levels,
                graph,
                &[],
                &qdist,
                &qbound,
                st.part,
                None,
                rng,
                &NoProgress,
            )
        }
        None => {
            let mut st = KwayState::new(graph, &qdist, &qbound, nodes);
            cfg.refiner().refine(&mut st, rng);
            st.part
        }
    };
    drop(levels);

    let mut members: Vec<Vec<u32>> = vec![Vec::new(); g as usize];
    for p in 0..k as u32 {
        members[group[p as usize] as usize].push(p);
    }
    // How full a PE would be with `v` on it: its fullest constraint, relative to the bound.
    let fill = |st: &KwayState<'_>, v: u32, q: u32| -> f64 {
        let w = graph.vertex_weights(v);
        (0..ncon)
            .map(|c| {
                let i = q as usize * ncon + c;
                (st.loads[i] + w[c]) as f64 / bound[i].max(1) as f64
            })
            .fold(0.0, f64::max)
    };
    let mut st = KwayState::new(graph, dist, bound, part.clone());
    let mut cand: Vec<u32> = Vec::new();
    for v in 0..graph.num_tasks() as u32 {
        let x = nodes[v as usize];
        if group[st.part[v as usize] as usize] == x {
            continue;
        }
        // The PEs of the new group that hold neighbours, scored by their gain; else the
        // emptiest PE of the group.
        cand.clear();
        for &u in graph.neighbors(v) {
            let q = st.part[u as usize];
            if group[q as usize] == x && !cand.contains(&q) {
                cand.push(q);
            }
        }
        let mut best: Option<(i64, u32)> = None;
        for &q in &cand {
            if st.fits(v, q) {
                let gain = st.move_gain(v, q);
                if best.is_none_or(|(bg, bq)| gain > bg || (gain == bg && q < bq)) {
                    best = Some((gain, q));
                }
            }
        }
        let q = best.map(|(_, q)| q).unwrap_or_else(|| {
            let m = &members[x as usize];
            let emptiest = |fits_only: bool| {
                m.iter()
                    .copied()
                    .filter(|&q| !fits_only || st.fits(v, q))
                    .min_by(|&a, &b| fill(&st, v, a).total_cmp(&fill(&st, v, b)))
            };
            emptiest(true)
                .or_else(|| emptiest(false))
                .expect("a group has PEs")
        });
        st.apply(v, q);
    }
    if !st.is_balanced() {
        rebalance(&mut st);
    }
    cfg.refiner().refine(&mut st, rng);
    if score(&st) <= before {
        st.part
    } else {
        part
    }
}

/// Multisection (see [`MultilevelMapper::multisection`]): the initial mapping onto a
/// target whose PEs fall into nested groups `levels` (top first, from [`group_levels`]).
/// The tasks are mapped onto the top level's groups as a target of their own (two groups
/// as far apart as their PEs, a group's bound the sum of its PEs'), then the tasks of each
/// group onto that group's subgroups, and so on down to the PEs, each step a whole
/// multilevel run on the subgraph the tasks induce (the top step with the budgets of the
/// whole input, the steps below with `initial_runs` runs and no extra coarse tries). The
/// groups of a step below the top are independent problems (every edge between two of
/// them costs the same, whatever PEs its ends land on), solved in parallel on the
/// context's pool, each on one thread with a seed drawn beforehand, so they do not depend
/// on the thread count; the top step uses the pool as any multilevel run does.
/// `input_tasks` is the task count of the problem's graph before coarsening (it decides
/// [`deep_top_step`]).
pub(crate) fn multisection(
    cfg: &MultilevelMapper,
    inst: &Instance<'_>,
    dist: &DistTable<'_>,
    levels: &[(Vec<u32>, u32)],
    input_tasks: usize,
    ctx: &mut RunContext,
) -> Vec<u32> {
    let graph = inst.graph;
    let n = graph.num_tasks();
    let k = dist.k();
    let ncon = graph.ncon();
    let mut part = vec![0u32; n];
    // The steps run the ordinary mapper (no multisection, no fixed task) on one group.
    let mut sub = cfg.clone();
    sub.multisection = false;
    // (tasks, PEs) of every group of the current level.
    let mut jobs: Vec<(Vec<u32>, Vec<u32>)> = vec![((0..n as u32).collect(), (0..k).collect())];
    for depth in 0..=levels.len() {
        // The class of every PE on this level: its group, or itself below the last level.
        let class = |p: u32| levels.get(depth).map_or(p, |(g, _)| g[p as usize]);
        let seeds: Vec<u64> = jobs.iter().map(|_| ctx.rng.gen()).collect();
        // Maps one group's tasks onto its classes; hands the pool it was lent back.
        let step =
            |(tasks, pes): &(Vec<u32>, Vec<u32>), seed: u64, pool: Option<rayon::ThreadPool>| {
                // The classes of this group's PEs, in order of first appearance.
                let mut ids: Vec<u32> = Vec::new();
                let mut members: Vec<Vec<u32>> = Vec::new();
                for &p in pes {
                    let c = class(p);
                    match ids.iter().position(|&x| x == c) {
                        Some(i) => members[i].push(p),
                        None => {
                            ids.push(c);
                            members.push(vec![p]);
                        }
                    }
                }
                let g = members.len();
                if g == 1 || tasks.is_empty() {
                    return (members, vec![0u32; tasks.len()], pool);
                }
                let qd: Vec<u64> = (0..g)
                    .flat_map(|x| (0..g).map(move |y| (x, y)))
                    .map(|(x, y)| dist.get(members[x][0], members[y][0]))
                    .collect();
                let qarch = taskmap_arch::DistanceMatrix::new(g as u32, qd)
                    .expect("the groups of a level form a distance matrix");
                let mut qbound = vec![0u64; g * ncon];
                for (x, m) in members.iter().enumerate() {
                    for &p in m {
                        for c in 0..ncon {
                            qbound[x * ncon + c] += inst.bound[p as usize * ncon + c];
                        }
                    }
                }
                let mut child = RunContext::new(seed);
                child.pool = pool;
                // The top step, whose groups are the farthest apart, runs as the input
                // graph would; the steps below get the fixed count of runs (`initial_runs`)
                // and no extra coarse tries (DRB onto the whole target gives those only to
                // its largest domains); no step gets more V-cycles than the input would.
                let mut c = sub.clone();
                if depth > 0 {
                    c.initial_run_work = 0;
                    c.coarse_tries = 0;
                } else if deep_top_step(&c, tasks.len(), g, input_tasks) {
                    c.coarsest_per_pe = c.top_per_pe;
                    c.grid2d_per_pe = 0;
                    c.initial_runs = c.top_runs;
                    c.initial_run_work = 0;
                    c.coarse_tries = c.top_coarse_tries;
                }
                c.vcycles = cfg.vcycles.min((VCYCLE_WORK / n.max(1)).max(1));
                let owned;
                let sg = if tasks.len() == n {
                    graph
                } else {
                    let mut local = vec![u32::MAX; n];
                    owned = graph.induced(tasks, &mut local);
                    &owned
                };
                let q = map_instance(
                    &c,
                    &Instance {
                        graph: sg,
                        arch: &qarch,
                        whole: false,
                        epsilon: inst.epsilon,
                        fixed: &[],
                        bound: qbound,
                    },
                    &mut child,
                );
                (members, q, child.pool.take())
            };
        let results: Vec<(Vec<Vec<u32>>, Vec<u32>)> = if depth == 0 {
            // The top step, the only job of its level, gets the pool for its initial runs.
            let (members, q, pool) = step(&jobs[0], seeds[0], ctx.pool.take());
            ctx.pool = pool;
            vec![(members, q)]
        } else {
            let run = |(j, &s): (&(Vec<u32>, Vec<u32>), &u64)| {
                let (members, q, _) = step(j, s, None);
                (members, q)
            };
            match &ctx.pool {
                Some(pool) => pool.install(|| jobs.par_iter().zip(&seeds).map(run).collect()),
                None => jobs.iter().zip(&seeds).map(run).collect(),
            }
        };
        let mut next = Vec::new();
        for ((tasks, _), (members, q)) in jobs.iter().zip(results) {
            let mut split: Vec<Vec<u32>> = vec![Vec::new(); members.len()];
            for (&t, &x) in tasks.iter().zip(&q) {
                split[x as usize].push(t);
            }
            for (ts, m) in split.into_iter().zip(members) {
                if m.len() == 1 {
                    for &t in &ts {
                        part[t as usize] = m[0];
                    }
                } else if !ts.is_empty() {
                    next.push((ts, m));
                }
            }
        }
        jobs = next;
        if jobs.is_empty() {
            break;
        }
    }
    part
}
