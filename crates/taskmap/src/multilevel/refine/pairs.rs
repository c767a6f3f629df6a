//! Pairwise refinement: the tasks of two PEs near their frontier re-split by the
//! bipartitioner's FM and flow.
//!
//! For a pair of PEs `p`, `q` that share cut edges, the tasks of `p` and `q` within
//! `depth` hops of their common frontier (a corridor; hubs, tasks of more than
//! max(128, 8 × the mean degree) neighbours, left out) form a [`SubProblem`]: its internal
//! edges are the edges between corridor tasks, a task's external cost on side 0 (`p`) is
//! the weight of its other edges times the distance from `p` to the PE at their other end
//! (from `q` on side 1), and a cut edge costs `dist(p, q)`. Every other task stays where
//! it is, so the sub-problem's cost differs from `f_C` by a constant and a better split
//! lowers `f_C` by exactly the cost it saves. Each side's bound is its PE's bound less the
//! load of its tasks outside the corridor. The split runs the bipartitioner's FM passes,
//! then its flow refinement (a minimum cut in a corridor around the frontier, as KaFFPa's
//! pairwise flows, here with the mapping's costs), then one more FM pass; the pair keeps
//! the result when it is cheaper and within the bounds (a pair with a PE over a bound is
//! skipped).
//!
//! Pairs are taken by decreasing `f_C` between them, in batches of pairs with no PE in
//! common: each batch's first pair not yet taken, then every later one whose PEs are both
//! still free. The pairs of a batch are re-split at once on the state's pool, each from
//! the mapping as the batch found it; their moves are then applied in batch order, each
//! pair's with its gain taken again move by move, and undone when that exact gain is not
//! positive (a pair's external costs change when a pair next to it moved). A pair's PEs
//! are its own within the batch, so its bounds hold. The batches, and so the mapping, do
//! not depend on the thread count.

use std::sync::Mutex;

use rustc_hash::FxHashMap;

use super::kway::{fm_hub_degree, KwayState};
use crate::multilevel::bipart::fm::{fm_passes, fm_passes_measured};
use crate::multilevel::bipart::{BipartScratch, SubProblem, FREE_SIDE};
use crate::multilevel::flow::flow_refine_from;

/// Scratch space for [`pair_pass`], reused across calls.
#[derive(Debug, Default)]
pub struct PairScratch {
    /// One per thread of the pool: the scratch of the pair it re-splits.
    workers: Vec<Mutex<PairWorker>>,
    /// Frontier tasks of every pair (CSR by pair).
    fr_start: Vec<usize>,
    fr: Vec<u32>,
    /// The cut edges of the mapping, `(pair, v, u)`.
    cut: Vec<(u32, u32, u32)>,
}

/// The scratch of re-splitting one pair at a time.
#[derive(Debug, Default)]
struct PairWorker {
    bip: BipartScratch,
    sp: SubProblem,
    /// Local index of every task of the current corridor.
    loc: Vec<u32>,
    /// Stamp of the pair whose corridor holds a task.
    mark: Vec<u32>,
    stamp: u32,
    tasks: Vec<u32>,
    side: Vec<u8>,
    /// The load of each side's corridor tasks, per constraint.
    inside: [Vec<u64>; 2],
}

impl PairWorker {
    /// Ready for a new corridor of a graph of `n` tasks.
    fn next(&mut self, n: usize) {
        if self.mark.len() != n {
            self.mark = vec![0; n];
            self.loc = vec![0; n];
            self.stamp = 0;
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.mark.fill(0);
            self.stamp = 1;
        }
    }
}

/// The parameters of one pairwise round.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PairPass {
    /// FM passes on a pair before its flow refinement (one more follows it).
    pub fm_passes: usize,
    /// An FM pass stops after this many moves without a new best.
    pub fm_stall: usize,
    /// The flow's corridor size (see [`crate::multilevel::flow`]; below 1: no flow).
    pub flow_alpha: f64,
    /// The pair's tasks within this many hops of their common frontier take part.
    pub depth: usize,
    /// At most `pairs_per_pe · k` pairs per round, those with the most `f_C` between
    /// them (on dense graphs nearly every two PEs share an edge).
    pub pairs_per_pe: usize,
}

impl Default for PairPass {
    fn default() -> Self {
        Self {
            fm_passes: 2,
            fm_stall: 100,
            flow_alpha: 1.0,
            depth: 4,
            pairs_per_pe: 2,
        }
    }
}

/// One round over the PE pairs with cut edges, in batches (see the module's notes),
/// skipping pairs with a PE over a bound; returns the `f_C` decrease (never negative;
/// every PE of a re-split pair ends within its bounds).
pub fn pair_pass(st: &mut KwayState<'_>, cfg: &PairPass, sc: &mut PairScratch) -> i64 {
    let n = st.graph.num_tasks();
    let k = st.dist.k() as usize;
    let pairs = cut_pairs(st, sc);
    let mut order: Vec<u32> = (0..pairs.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| pairs[b as usize].cmp(&pairs[a as usize]));
    order.truncate(cfg.pairs_per_pe.saturating_mul(k));
    // A pair with a PE over a bound is left to rebalancing: trading overload between the
    // two could raise f_C or move the overload onto the other PE. (No pair of the round
    // changes such a PE's load, so this holds for the whole round.)
    order.retain(|&i| {
        let (_, p, q) = pairs[i as usize];
        !st.overloaded(p) && !st.overloaded(q)
    });
    let pool = st.pool;
    let hub = fm_hub_degree(st.graph);
    let threads = pool.map_or(1, |p| p.current_num_threads()).max(1);
    while sc.workers.len() < threads {
        sc.workers.push(Mutex::default());
    }
    // The batch that took each PE last.
    let mut taken = vec![u32::MAX; k];
    let mut total = 0i64;
    let mut batch_no = 0u32;
    while !order.is_empty() {
        let mut batch = Vec::new();
        order.retain(|&i| {
            let (_, p, q) = pairs[i as usize];
            if taken[p as usize] == batch_no || taken[q as usize] == batch_no {
                return true;
            }
            taken[p as usize] = batch_no;
            taken[q as usize] = batch_no;
            batch.push(i);
            false
        });
        batch_no += 1;
        let seen: &KwayState<'_> = st;
        let (fr, fr_start, workers) = (&sc.fr, &sc.fr_start, &sc.workers);
        let splits = crate::par::map_blocks(
            pool,
            batch.len(),
            1,
            || (),
            |_, r| {
                let mine = rayon::current_thread_index().unwrap_or(0) % threads;
                let mut w = workers[mine].lock().unwrap_or_else(|e| e.into_inner());
                r.map(|j| {
                    let i = batch[j] as usize;
                    let (_, p, q) = pairs[i];
                    w.next(n);
                    corridor(
                        seen,
                        cfg.depth,
                        hub,
                        &mut w,
                        &fr[fr_start[i]..fr_start[i + 1]],
                        p,
                        q,
                    );
                    pair_subproblem(seen, &mut w, p, q);
                    split_pair(seen, cfg, &mut w, p, q)
                })
                .collect::<Vec<_>>()
            },
        );
        for moves in splits.into_iter().flatten() {
            total += apply_if_gaining(st, &moves);
        }
    }
    total
}

/// Applies `moves` (task, PE) one by one with their exact gains; undoes them all unless
/// their sum is positive. Returns the `f_C` decrease (0 when undone).
fn apply_if_gaining(st: &mut KwayState<'_>, moves: &[(u32, u32)]) -> i64 {
    let mut gain = 0i64;
    let mut from = Vec::with_capacity(moves.len());
    for &(t, to) in moves {
        gain += st.move_gain(t, to);
        from.push(st.part[t as usize]);
        st.apply(t, to);
    }
    if gain > 0 {
        return gain;
    }
    for (&(t, _), &p) in moves.iter().zip(&from).rev() {
        st.apply(t, p);
    }
    0
}

/// The pairs of PEs joined by cut edges as `(f_C between them, p, q)` with `p < q`, and
/// every pair's frontier tasks in `sc.fr` (one scan of the edges; the cut edges, with
/// their pair, are then bucketed by pair in scan order).
fn cut_pairs(st: &KwayState<'_>, sc: &mut PairScratch) -> Vec<(u64, u32, u32)> {
    let graph = st.graph;
    let mut index: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    let mut pairs: Vec<(u64, u32, u32)> = Vec::new();
    sc.cut.clear();
    for v in 0..graph.num_tasks() as u32 {
        let p = st.part[v as usize];
        for (&u, &w) in graph.neighbors(v).iter().zip(graph.edge_weights(v)) {
            let q = st.part[u as usize];
            if u > v && q != p {
                let key = (p.min(q), p.max(q));
                let i = *index.entry(key).or_insert_with(|| {
                    pairs.push((0, key.0, key.1));
                    (pairs.len() - 1) as u32
                });
                pairs[i as usize].0 += w * st.dist.get(p, q);
                sc.cut.push((i, v, u));
            }
        }
    }
    sc.fr_start.clear();
    sc.fr_start.resize(pairs.len() + 1, 0);
    for &(i, _, _) in &sc.cut {
        sc.fr_start[i as usize + 1] += 2;
    }
    for i in 0..pairs.len() {
        sc.fr_start[i + 1] += sc.fr_start[i];
    }
    sc.fr.clear();
    sc.fr.resize(sc.fr_start[pairs.len()], 0);
    let mut fill: Vec<usize> = sc.fr_start[..pairs.len()].to_vec();
    for &(i, v, u) in &sc.cut {
        let at = &mut fill[i as usize];
        sc.fr[*at] = v;
        sc.fr[*at + 1] = u;
        *at += 2;
    }
    pairs
}

/// The corridor of PEs `p` and `q`, whose frontier tasks are `frontier`, into
/// `sc.tasks`, marked with `sc.stamp` and numbered in `sc.loc`: breadth-first from the
/// frontier, inside `p` and `q`, up to `depth` hops, leaving out tasks of more than `hub`
/// neighbours. A hub stays where it is, as a task outside the corridor: its PE is in
/// many pairs, and reading its row for each of them dominated the rounds on power-law
/// graphs.
fn corridor(
    st: &KwayState<'_>,
    depth: usize,
    hub: usize,
    sc: &mut PairWorker,
    frontier: &[u32],
    p: u32,
    q: u32,
) {
    let graph = st.graph;
    let stamp = sc.stamp;
    sc.tasks.clear();
    for &t in frontier {
        let r = st.part[t as usize];
        if (r == p || r == q) && sc.mark[t as usize] != stamp && graph.degree(t) <= hub {
            sc.mark[t as usize] = stamp;
            sc.tasks.push(t);
        }
    }
    let mut lo = 0;
    for _ in 0..depth {
        let hi = sc.tasks.len();
        if lo == hi {
            break;
        }
        for j in lo..hi {
            let t = sc.tasks[j];
            for &u in graph.neighbors(t) {
                let r = st.part[u as usize];
                if (r == p || r == q) && sc.mark[u as usize] != stamp && graph.degree(u) <= hub {
                    sc.mark[u as usize] = stamp;
                    sc.tasks.push(u);
                }
            }
        }
        lo = hi;
    }
    for (j, &t) in sc.tasks.iter().enumerate() {
        sc.loc[t as usize] = j as u32;
    }
}

/// The sub-problem of the corridor in `sc.tasks` between PEs `p` (side 0) and `q`
/// (side 1) into `sc.sp`, and its tasks' current sides into `sc.side`.
fn pair_subproblem(st: &KwayState<'_>, sc: &mut PairWorker, p: u32, q: u32) {
    let graph = st.graph;
    let ncon = graph.ncon();
    let stamp = sc.stamp;
    let sp = &mut sc.sp;
    sp.clear();
    sp.ncon = ncon;
    sp.cut_dist = st.dist.get(p, q);
    sp.xadj.push(0);
    let mut any_fixed = false;
    let inside = &mut sc.inside;
    for side in inside.iter_mut() {
        side.clear();
        side.resize(ncon, 0);
    }
    for &t in &sc.tasks {
        let (mut e0, mut e1) = (0u64, 0u64);
        for (&u, &w) in graph.neighbors(t).iter().zip(graph.edge_weights(t)) {
            if sc.mark[u as usize] == stamp {
                sp.adjncy.push(sc.loc[u as usize]);
                sp.edge_weight.push(w);
            } else {
                let r = st.part[u as usize];
                e0 += w * st.dist.get(p, r);
                e1 += w * st.dist.get(q, r);
            }
        }
        sp.xadj.push(sp.adjncy.len());
        let s = usize::from(st.part[t as usize] == q);
        for (c, &w) in graph.vertex_weights(t).iter().enumerate() {
            inside[s][c] += w;
        }
        sp.vertex_weight.extend_from_slice(graph.vertex_weights(t));
        sp.ext[0].push(e0);
        sp.ext[1].push(e1);
        any_fixed |= !st.movable(t);
    }
    if any_fixed {
        sp.fixed = sc
            .tasks
            .iter()
            .map(|&t| match st.movable(t) {
                true => FREE_SIDE,
                false => u8::from(st.part[t as usize] == q),
            })
            .collect();
    }
    // Each side's bound, less the load its PE keeps outside the corridor.
    for (s, pe) in [p, q].into_iter().enumerate() {
        for c in 0..ncon {
            let at = pe as usize * ncon + c;
            let outside = st.loads[at] - inside[s][c];
            sp.bound[s].push(st.bound[at].saturating_sub(outside));
        }
    }
    let (b0, b1) = (sp.bound[0][0] as f64, sp.bound[1][0] as f64);
    sp.share0 = if b0 + b1 > 0.0 { b0 / (b0 + b1) } else { 0.5 };
    sc.side.clear();
    sc.side
        .extend(sc.tasks.iter().map(|&t| u8::from(st.part[t as usize] == q)));
}

/// Re-splits the sub-problem in `sc` with FM, flow and one more FM pass; returns the
/// moves `(task, PE)` of the split when it is cheaper and within the bounds (none
/// otherwise).
fn split_pair(
    st: &KwayState<'_>,
    cfg: &PairPass,
    sc: &mut PairWorker,
    p: u32,
    q: u32,
) -> Vec<(u32, u32)> {
    let sp = &sc.sp;
    let (cost0, mut cost) =
        fm_passes_measured(sp, &mut sc.side, cfg.fm_passes, cfg.fm_stall, &mut sc.bip);
    if cfg.flow_alpha >= 1.0 && sp.ncon == 1 {
        if let Some(c) = flow_refine_from(sp, &mut sc.side, cfg.flow_alpha, &mut sc.bip.flow, cost)
        {
            debug_assert_eq!(c, sp.cost(&sc.side), "the flow's cost");
            cost = fm_passes(sp, &mut sc.side, 1, cfg.fm_stall, &mut sc.bip);
        }
    }
    if cost >= cost0 || sp.violation(&sp.loads(&sc.side)) > 0 {
        return Vec::new();
    }
    sc.tasks
        .iter()
        .zip(&sc.side)
        .map(|(&t, &s)| (t, if s == 0 { p } else { q }))
        .filter(|&(t, to)| st.part[t as usize] != to)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multilevel::DistTable;

    /// A corridor takes every task of the two PEs within `depth` hops of their frontier
    /// except the hubs (more than `hub` neighbours), which stay outside it as fixed
    /// tasks, and does not go on through them.
    #[test]
    fn corridors_leave_hubs_out() {
        // A ring of tasks 1..400 cut into two halves (PE 0: 1..200, PE 1: 200..400),
        // and task 0 joined to every task, on PE 0.
        let n = 400u32;
        let mut b = taskmap_graph::GraphBuilder::new(n as usize, 1);
        for v in 1..n {
            b.add_edge(v, if v + 1 == n { 1 } else { v + 1 }, 1);
            b.add_edge(0, v, 1);
        }
        let g = b.build();
        let arch = taskmap_arch::parse_arch("complete:2").unwrap();
        let dist = DistTable::new(arch.as_ref());
        let part: Vec<u32> = (0..n).map(|v| u32::from(v >= 200)).collect();
        let bound = vec![u64::MAX; 2];
        let st = KwayState::new(&g, &dist, &bound, part);
        let hub = fm_hub_degree(&g);
        assert!(g.degree(0) > hub && (1..n).all(|v| g.degree(v) <= hub));
        // The frontier: the ends of the cut edges, hub edges included.
        let frontier: Vec<u32> = (0..n)
            .filter(|&v| {
                g.neighbors(v)
                    .iter()
                    .any(|&u| st.part[u as usize] != st.part[v as usize])
            })
            .collect();
        let mut w = PairWorker::default();
        let run = |w: &mut PairWorker, hub: usize| {
            w.next(n as usize);
            corridor(&st, 2, hub, w, &frontier, 0, 1);
            let mut t = w.tasks.clone();
            t.sort_unstable();
            t
        };
        // The frontier is every task of PE 1 (each is joined to the hub), the hub and
        // the ring's ends on PE 0 (1 and 199). Without the hub, two hops along the ring
        // add 2, 3, 197 and 198 and nothing else.
        let with_rule = run(&mut w, hub);
        let want: Vec<u32> = [1, 2, 3].into_iter().chain(197..n).collect();
        assert_eq!(with_rule, want);
        let local: Vec<u32> = with_rule.iter().map(|&t| w.loc[t as usize]).collect();
        assert!(local.iter().all(|&l| (l as usize) < with_rule.len()));
        // Without the rule the hub is in, and every task one hop from it.
        let without = run(&mut w, usize::MAX);
        assert_eq!(without, (0..n).collect::<Vec<_>>());
    }
}
