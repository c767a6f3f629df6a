//! MATEHa (De Giusti et al.): mapping the tasks of a heterogeneous program onto a
//! multi-cluster by levels and gains, with the TTIGHa graph it reads; and the exhaustive
//! search the paper compares it with.
//!
//! * [`TtigGraph`]: per task its time on every processor type `w_p(T)` (eq. 1); per pair
//!   of adjacent tasks the messages and bytes each way (eq. 2, 3), and on demand the
//!   concurrency `TP_sd(Ti,Tj)`, the time both run in parallel when simulated in isolation
//!   with their mutual dependencies and no communication time;
//!   `p_sd(Ti,Tj) = TP_sd(Ti,Tj) / w_d(Tj)` (eq. 4).
//! * [`mateha`]: levels `LN(T)` = fewest task-to-task arcs from an initial task (one whose
//!   first sub-task receives nothing); then level by level, while tasks of the level are
//!   unallocated: for each, `Cost(t,m) = w_m(t) + tAcum(m) + Σ_{j adjacent, on q ≠ m}
//!   (w_q(j)·(1 − p_qm(j,t)) + C_qm(j,t) + C_mq(t,j))`, `gain = max_m Cost − min_m Cost`;
//!   the task of largest gain goes to its cheapest processor (ties: lower task, lower
//!   processor). Each open task keeps its cost row's minimum and maximum; a row is scanned
//!   again when a neighbour is allocated or its minimum was on the chosen processor, so a
//!   step costs `O(L)` plus `O(M)` per rescanned row (rows shared by tasks without an
//!   allocated neighbour and with equal times are scanned once): `O(Σ_levels L² · M)` at
//!   worst, nearer `O(Σ L²)` when the minima are spread, plus `O(E · (types · S_pair + M))`
//!   for the neighbours' updates.
//! * [`exhaustive`]: every allocation, up to interchangeable processors, simulated with
//!   SIMULHa; the one of least final time (ties: the lexicographically first).

use std::collections::HashMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::hetero::simulha::Simulator;
use crate::hetero::ttigha::{HeteroProgram, Platform, Ttigha};
use crate::mapper::{NoProgress, Progress};
use crate::registry::{ParamDoc, Params};

/// The TTIGHa graph of a program on a platform's processor types. The concurrency `TP`
/// of a pair is simulated when asked for (MATEHa asks once per adjacent pair and type of
/// the processor not yet chosen), not stored for every pair of types.
#[derive(Clone, Debug)]
pub struct TtigGraph<'a> {
    program: &'a HeteroProgram,
    types: usize,
    /// `w[t * types + p]`: time of task `t` on type `p`.
    pub w: Vec<f64>,
    /// Adjacent tasks of `t`: `adj[adj_first[t]..adj_first[t + 1]]`, sorted.
    pub adj_first: Vec<u32>,
    pub adj: Vec<u32>,
    /// Per adjacency entry `(t, j)`: messages and bytes from `t` to `j`.
    pub out: Vec<(u64, u64)>,
    /// Per adjacency entry `(t, j)`: messages and bytes from `j` to `t`.
    pub inn: Vec<(u64, u64)>,
}

impl<'a> TtigGraph<'a> {
    /// Builds the graph of `program` in `O(S · types + E log E)`.
    pub fn new(program: &'a HeteroProgram) -> Self {
        let (nt, types) = (program.tasks(), program.types);
        let w = (0..nt)
            .flat_map(|t| (0..types).map(move |p| program.task_time(t, p)))
            .collect();
        let mut pairs: HashMap<(u32, u32), (u64, u64)> = HashMap::new();
        for m in &program.messages {
            let (a, b) = (
                program.subtask_task[m.from as usize],
                program.subtask_task[m.to as usize],
            );
            let e = pairs.entry((a, b)).or_default();
            e.0 += 1;
            e.1 = e.1.saturating_add(m.bytes);
        }
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); nt];
        for &(a, b) in pairs.keys() {
            lists[a as usize].push(b);
            lists[b as usize].push(a);
        }
        let mut adj_first = vec![0u32];
        let mut adj = Vec::new();
        for l in &mut lists {
            l.sort_unstable();
            l.dedup();
            adj.extend_from_slice(l);
            adj_first.push(adj.len() as u32);
        }
        let get = |a: usize, b: u32| pairs.get(&(a as u32, b)).copied().unwrap_or((0, 0));
        let mut out = Vec::with_capacity(adj.len());
        let mut inn = Vec::with_capacity(adj.len());
        for t in 0..nt {
            for &j in &adj[adj_first[t] as usize..adj_first[t + 1] as usize] {
                out.push(get(t, j));
                inn.push(get(j as usize, t as u32));
            }
        }
        TtigGraph {
            program,
            types,
            w,
            adj_first,
            adj,
            out,
            inn,
        }
    }

    /// The tasks adjacent to `t`, ascending.
    pub fn neighbours(&self, t: usize) -> &[u32] {
        &self.adj[self.adj_first[t] as usize..self.adj_first[t + 1] as usize]
    }

    /// `w_p(t)`.
    pub fn time(&self, t: usize, p: usize) -> f64 {
        self.w[t * self.types + p]
    }

    /// `TP`: the time `t` (on a processor of type `a`) and `j` (type `b`, another
    /// processor) run in parallel when simulated alone; `end` is scratch of one entry per
    /// sub-task. `O(S_t + S_j + their messages)`.
    pub fn parallel_time(&self, t: usize, a: usize, j: usize, b: usize, end: &mut [f64]) -> f64 {
        isolated_overlap(self.program, t, a, j, b, end)
    }

    /// `p_ab(t, j)`: the concurrency degree of `t` on a processor of type `a` and `j` on one
    /// of type `b`, relative to `j`'s time (0 when `j` takes no time or the two do not
    /// communicate). Simulates the pair (`O(S)` scratch).
    pub fn concurrency(&self, t: usize, a: usize, j: usize, b: usize) -> f64 {
        let lo = self.adj_first[t] as usize;
        if self.adj[lo..self.adj_first[t + 1] as usize]
            .binary_search(&(j as u32))
            .is_err()
        {
            return 0.0;
        }
        let wj = self.time(j, b);
        if wj > 0.0 {
            let mut end = vec![0.0; self.program.subtasks()];
            self.parallel_time(t, a, j, b, &mut end) / wj
        } else {
            0.0
        }
    }
}

/// Time tasks `a` (on a processor of type `ta`) and `b` (type `tb`, another processor) run
/// in parallel when simulated alone: each task's sub-tasks in order, as soon as possible,
/// the messages between the two as dependencies taking no time, all other dependencies
/// ignored. (The paper asks for the "maximal" time both can run in parallel; with every
/// sub-task as early as possible, this is the overlap of that one schedule.)
fn isolated_overlap(
    program: &HeteroProgram,
    a: usize,
    ta: usize,
    b: usize,
    tb: usize,
    end: &mut [f64],
) -> f64 {
    // Merge the two chains by priority rank (a topological order, so every dependency
    // comes first); each chain is already in rank order.
    let (mut xa, mut xb) = (program.subtasks_of(a), program.subtasks_of(b));
    let (mut na, mut nb) = (xa.next(), xb.next());
    let mut intervals: [Vec<(f64, f64)>; 2] = [Vec::new(), Vec::new()];
    loop {
        let s = match (na, nb) {
            (Some(x), Some(y)) if program.rank[x] < program.rank[y] => {
                na = xa.next();
                x
            }
            (_, Some(y)) => {
                nb = xb.next();
                y
            }
            (Some(x), None) => {
                na = xa.next();
                x
            }
            (None, None) => break,
        };
        let own = program.subtask_task[s] as usize;
        let other = if own == a { b } else { a };
        let ty = if own == a { ta } else { tb };
        let mut start = program.previous(s).map_or(0.0, |p| end[p]);
        for m in program.incoming(s) {
            if program.subtask_task[m.from as usize] as usize == other {
                start = start.max(end[m.from as usize]);
            }
        }
        end[s] = start + program.time(s, ty);
        intervals[usize::from(own != a)].push((start, end[s]));
    }
    // Both lists are sorted and disjoint: sweep them together.
    let (x, y) = (&intervals[0], &intervals[1]);
    let (mut i, mut k, mut total) = (0, 0, 0.0);
    while i < x.len() && k < y.len() {
        let lo = x[i].0.max(y[k].0);
        let hi = x[i].1.min(y[k].1);
        if hi > lo {
            total += hi - lo;
        }
        if x[i].1 <= y[k].1 {
            i += 1;
        } else {
            k += 1;
        }
    }
    total
}

/// What MATEHa decided.
#[derive(Clone, Debug, PartialEq)]
pub struct Mateha {
    /// Processor of each task.
    pub alloc: Vec<u32>,
    /// `LN(T)` of each task.
    pub level: Vec<u32>,
    /// Tasks in the order they were allocated.
    pub sequence: Vec<u32>,
}

/// `LN(T)`: fewest task-to-task arcs from an initial task (one whose first sub-task
/// receives no message).
pub fn levels(program: &HeteroProgram) -> Vec<u32> {
    let nt = program.tasks();
    let mut succ: Vec<Vec<u32>> = vec![Vec::new(); nt];
    for m in &program.messages {
        let (a, b) = (
            program.subtask_task[m.from as usize],
            program.subtask_task[m.to as usize],
        );
        succ[a as usize].push(b);
    }
    let mut level = vec![u32::MAX; nt];
    let mut queue = std::collections::VecDeque::new();
    for t in 0..nt {
        let first = program.task_first[t] as usize;
        if program.incoming(first).next().is_none() {
            level[t] = 0;
            queue.push_back(t);
        }
    }
    while let Some(t) = queue.pop_front() {
        for &j in &succ[t] {
            if level[j as usize] == u32::MAX {
                level[j as usize] = level[t] + 1;
                queue.push_back(j as usize);
            }
        }
    }
    // Every task is reachable (a sub-task's dependencies lead back to the first sub-task of
    // an initial task); keep any left over last all the same.
    let max = level
        .iter()
        .filter(|&&l| l != u32::MAX)
        .max()
        .copied()
        .unwrap_or(0);
    for l in &mut level {
        if *l == u32::MAX {
            *l = max + 1;
        }
    }
    level
}

/// Maps `model`'s tasks with MATEHa.
pub fn mateha(model: &Ttigha) -> Mateha {
    let graph = TtigGraph::new(&model.program);
    mateha_with(model, &graph)
}

/// [`mateha`] with a prebuilt TTIGHa graph.
pub fn mateha_with(model: &Ttigha, g: &TtigGraph) -> Mateha {
    let (pr, pl) = (&model.program, &model.platform);
    let (nt, mp, types) = (pr.tasks(), pl.processors(), pr.types);
    let level = levels(pr);
    let mut by_level: Vec<u32> = (0..nt as u32).collect();
    by_level.sort_by_key(|&t| (level[t as usize], t));
    let mut alloc = vec![u32::MAX; nt];
    // Adjacency part of each unallocated task's costs, a row per task that has an
    // allocated neighbour (empty: all zero), dropped once the task is allocated: memory
    // for the tasks in waiting, not T · M.
    let mut acc: Vec<Vec<f64>> = vec![Vec::new(); nt];
    let mut t_acum = vec![0.0f64; mp];
    let mut sequence = Vec::with_capacity(nt);
    let mut stats = vec![(0.0f64, 0usize, 0.0f64); nt];
    let mut conc = vec![0.0f64; types];
    let mut end = vec![0.0f64; pr.subtasks()];
    let mut touched = vec![false; nt];
    // Tasks with no allocated neighbour ("clean": no adjacency part in their costs) and
    // the same times on every type have the same cost row: one scan per group and step.
    let mut clean = vec![true; nt];
    let mut group = vec![0u32; nt];
    {
        let mut ids: HashMap<Vec<u64>, u32> = HashMap::new();
        for t in 0..nt {
            let key: Vec<u64> = (0..types).map(|p| g.time(t, p).to_bits()).collect();
            let next = ids.len() as u32;
            group[t] = *ids.entry(key).or_insert(next);
        }
    }
    let mut memo: Vec<(u64, (f64, usize, f64))> = vec![(u64::MAX, (0.0, 0, 0.0)); nt];
    // Cost(t, m) = w_m(t) + tAcum(m) + the adjacency part.
    let cost = |t: usize, m: usize, t_acum: &[f64], acc: &[Vec<f64>]| {
        g.time(t, pl.proc_type[m] as usize) + t_acum[m] + acc[t].get(m).copied().unwrap_or(0.0)
    };
    let mut step = 0u64;
    let mut lo = 0;
    while lo < nt {
        let l = level[by_level[lo] as usize];
        let hi = lo
            + by_level[lo..]
                .iter()
                .take_while(|&&t| level[t as usize] == l)
                .count();
        let mut open: Vec<u32> = by_level[lo..hi].to_vec();
        // Cost row statistics of the open tasks: (min, its processor, max).
        let row = |t: usize, t_acum: &[f64], acc: &[Vec<f64>]| {
            let (mut cmin, mut pmin, mut cmax) = (f64::INFINITY, 0, f64::NEG_INFINITY);
            for m in 0..mp {
                let c = cost(t, m, t_acum, acc);
                if c < cmin {
                    (cmin, pmin) = (c, m);
                }
                cmax = cmax.max(c);
            }
            (cmin, pmin, cmax)
        };
        for &t in &open {
            stats[t as usize] = row(t as usize, &t_acum, &acc);
        }
        while !open.is_empty() {
            // (gain, position in open); the first of the largest gains.
            let mut best: Option<(f64, usize)> = None;
            for (i, &t) in open.iter().enumerate() {
                let (cmin, _, cmax) = stats[t as usize];
                let gain = cmax - cmin;
                if best.is_none_or(|(bg, _)| gain > bg) {
                    best = Some((gain, i));
                }
            }
            let (_, i) = best.expect("open tasks remain");
            let j = open.remove(i) as usize;
            step += 1;
            let q = stats[j].1;
            alloc[j] = q as u32;
            acc[j] = Vec::new();
            sequence.push(j as u32);
            let tq = pl.proc_type[q] as usize;
            let wj = g.time(j, tq);
            t_acum[q] += wj;
            // Neighbours not yet allocated now pay for j on every processor but q.
            for e in g.adj_first[j] as usize..g.adj_first[j + 1] as usize {
                let t = g.adj[e] as usize;
                if alloc[t] != u32::MAX {
                    continue;
                }
                let (out, inn) = (g.out[e], g.inn[e]);
                for (b, p) in conc.iter_mut().enumerate() {
                    let wt = g.time(t, b);
                    *p = if wt > 0.0 {
                        g.parallel_time(j, tq, t, b, &mut end) / wt
                    } else {
                        0.0
                    };
                }
                if acc[t].is_empty() {
                    acc[t] = vec![0.0; mp];
                }
                for m in (0..mp).filter(|&m| m != q) {
                    let p = conc[pl.proc_type[m] as usize];
                    acc[t][m] += wj * (1.0 - p)
                        + pl.comm_time(q, m, out.0, out.1)
                        + pl.comm_time(m, q, inn.0, inn.1);
                }
                clean[t] = false;
                if level[t] == l {
                    stats[t] = row(t, &t_acum, &acc);
                    touched[t] = true;
                }
            }
            // Every open task's cost on q rose by wj: its minimum changes only if it was
            // on q (then the row is scanned again), its maximum at most to the new cost.
            for &t in &open {
                let t = t as usize;
                if touched[t] {
                    touched[t] = false;
                    continue;
                }
                if stats[t].1 == q {
                    stats[t] = if clean[t] {
                        let m = &mut memo[group[t] as usize];
                        if m.0 != step {
                            *m = (step, row(t, &t_acum, &acc));
                        }
                        m.1
                    } else {
                        row(t, &t_acum, &acc)
                    };
                } else {
                    stats[t].2 = stats[t].2.max(cost(t, q, &t_acum, &acc));
                }
            }
        }
        lo = hi;
    }
    Mateha {
        alloc,
        level,
        sequence,
    }
}

/// State of the SIMULHa-guided searches: the simulator, the best (final time, sum of
/// finish times) so far, the tasks on each processor, interchangeable processors, and the
/// pairs of communicating tasks.
struct Search<'a> {
    sim: Simulator<'a>,
    best: (f64, f64),
    used: Vec<u32>,
    class: Vec<u32>,
    pairs: Vec<(u32, u32)>,
    graph: TtigGraph<'a>,
    /// Work so far, the budget, and the work of one simulation (sub-tasks + messages +
    /// processors).
    work: u64,
    budget: u64,
    sim_cost: u64,
    /// Per class of processors, the last `try_moves` call that met an empty one.
    class_seen: Vec<u64>,
    stamp: u64,
}

impl<'a> Search<'a> {
    fn new(pr: &'a HeteroProgram, pl: &'a Platform, alloc: &[u32], budget: u64) -> Self {
        let mut sim = Simulator::with(pr, pl);
        let best = sim.makespan_and_total(alloc);
        // Pairs of communicating tasks (a < b), in ascending order.
        let graph = TtigGraph::new(pr);
        let pairs = (0..pr.tasks())
            .flat_map(|a| {
                graph
                    .neighbours(a)
                    .iter()
                    .filter(move |&&b| b as usize > a)
                    .map(move |&b| (a as u32, b))
            })
            .collect();
        let mut s = Search {
            sim,
            best,
            used: Vec::new(),
            class: pl.symmetry_classes(),
            pairs,
            graph,
            work: 0,
            budget,
            // A simulation walks the sub-tasks, the messages and the processors.
            sim_cost: (pr.subtasks() + pr.messages.len() + pl.processors()) as u64,
            class_seen: vec![0; pl.processors()],
            stamp: 0,
        };
        s.recount(alloc);
        s
    }

    fn recount(&mut self, alloc: &[u32]) {
        self.used.clear();
        self.used.resize(self.class.len(), 0);
        for &p in alloc {
            self.used[p as usize] += 1;
        }
    }

    /// Simulates `alloc` and keeps it as the best if it is better (false once the budget
    /// is spent).
    fn improves(&mut self, alloc: &[u32]) -> bool {
        if self.work >= self.budget {
            return false;
        }
        self.work += self.sim_cost;
        let v = self.sim.makespan_and_total(alloc);
        let better = v.0 < self.best.0 || (v.0 == self.best.0 && v.1 < self.best.1);
        if better {
            self.best = v;
        }
        better
    }

    /// Moves task `t` to the first processor that improves the allocation, if any.
    fn try_moves(&mut self, alloc: &mut [u32], t: usize) -> bool {
        let from = alloc[t] as usize;
        // One empty processor per class is enough: the first one met.
        self.stamp += 1;
        for m in 0..self.class.len() {
            if self.used[m] == 0 {
                let c = self.class[m] as usize;
                if self.class_seen[c] == self.stamp {
                    continue;
                }
                self.class_seen[c] = self.stamp;
            }
            if m == from {
                continue;
            }
            alloc[t] = m as u32;
            if self.improves(alloc) {
                self.used[from] -= 1;
                self.used[m] += 1;
                return true;
            }
        }
        alloc[t] = from as u32;
        false
    }

    /// Rounds of moves of every task, then swaps of communicating tasks, until one changes
    /// nothing or after `rounds`.
    fn descend(&mut self, alloc: &mut [u32], rounds: usize) {
        for _ in 0..rounds {
            let mut changed = false;
            for t in 0..alloc.len() {
                changed |= self.try_moves(alloc, t);
            }
            for i in 0..self.pairs.len() {
                let (a, b) = (self.pairs[i].0 as usize, self.pairs[i].1 as usize);
                if alloc[a] == alloc[b] {
                    continue;
                }
                alloc.swap(a, b);
                if self.improves(alloc) {
                    changed = true;
                } else {
                    alloc.swap(a, b);
                }
            }
            if !changed {
                break;
            }
        }
    }
}

/// Limits of [`local_search`] and [`iterated_local_search`]: the parameters of `mateha-ls`
/// and `heft-ls` (`mateha-ls,kicks=5,budget=1000000,seed=3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchParams {
    /// Rounds of each descent at most (it stops earlier when a round changes nothing).
    pub rounds: usize,
    /// Random kicks of the iterated search.
    pub kicks: usize,
    /// Work budget: each simulation costs the program's sub-tasks + messages + the
    /// platform's processors; the search stops when the budget is spent, so large programs
    /// and platforms end in bounded time (with the default, 10^8, the whole search took
    /// 0.4-0.6 s on STG graphs of 300 tasks and 5.4 s on 20,000 tasks on this project's
    /// 2-core machine), deterministically.
    pub budget: u64,
    /// Seed of the kicks.
    pub seed: u64,
}

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams {
            rounds: 20,
            kicks: 100,
            budget: 100_000_000,
            seed: 0,
        }
    }
}

impl Params for SearchParams {
    const DOCS: &'static [ParamDoc] = &[
        ParamDoc {
            name: "kicks",
            aliases: &[],
            doc: "random kicks of the iterated local search (0: the local search alone)",
        },
        ParamDoc {
            name: "budget",
            aliases: &[],
            doc: "work budget: a simulation costs the program's sub-tasks + messages + the platform's processors; the search stops when it is spent",
        },
        ParamDoc {
            name: "seed",
            aliases: &[],
            doc: "seed of the kicks",
        },
        ParamDoc {
            name: "rounds",
            aliases: &[],
            doc: "rounds of each descent at most (it stops earlier when a round changes nothing)",
        },
    ];
}

/// Improves an allocation by SIMULHa-guided local search (ours, not in the paper): moves of
/// one task to another processor, then swaps of two communicating tasks on different
/// processors, each kept when it lowers the final time, or keeps it and lowers the sum of
/// the sub-tasks' finish times (first improvement; tasks and processors in ascending
/// order), until a round changes nothing, after `params.rounds` rounds, or when
/// `params.budget` is spent. A move onto an unused
/// processor is tried on the first of its class of interchangeable ones only. Never
/// worsens the allocation. A round simulates at most `T · M + P` allocations for `T`
/// tasks, `M` processors and `P` pairs of communicating tasks.
///
/// Returns the final time of the result.
pub fn local_search(model: &Ttigha, alloc: &mut [u32], params: &SearchParams) -> f64 {
    let mut s = Search::new(&model.program, &model.platform, alloc, params.budget);
    s.descend(alloc, params.rounds);
    s.best.0
}

/// [`local_search`], then `params.kicks` times: move 1-3 random tasks to random
/// processors, then try moves of those tasks and their communication partners,
/// `params.rounds` rounds at most, and keep the result if it is better than the best so
/// far (an iterated local search; ours). A kick simulates about `(kicked tasks + their
/// partners) · M` allocations per round. Stops early when the budget is spent.
/// Deterministic per `params.seed`; never worse than `alloc`. Returns the final time.
pub fn iterated_local_search(model: &Ttigha, alloc: &mut [u32], params: &SearchParams) -> f64 {
    iterated_local_search_with(&model.program, &model.platform, alloc, params)
}

/// [`iterated_local_search`] of `program` on `platform` (a program whose priority order
/// `rank` was changed, for instance, so that the default order follows it).
pub fn iterated_local_search_with(
    program: &HeteroProgram,
    platform: &Platform,
    alloc: &mut [u32],
    params: &SearchParams,
) -> f64 {
    use rand::{Rng, SeedableRng};
    let (rounds, kicks) = (params.rounds, params.kicks);
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(params.seed);
    let mut s = Search::new(program, platform, alloc, params.budget);
    s.descend(alloc, rounds);
    let (nt, mp) = (alloc.len(), platform.processors() as u32);
    if nt == 0 {
        return s.best.0;
    }
    let mut trial = alloc.to_vec();
    let mut focus: Vec<usize> = Vec::new();
    for _ in 0..kicks {
        if s.work >= s.budget {
            break;
        }
        trial.copy_from_slice(alloc);
        focus.clear();
        for _ in 0..rng.gen_range(1..=3usize.min(nt)) {
            let t = rng.gen_range(0..nt);
            trial[t] = rng.gen_range(0..mp);
            focus.push(t);
            focus.extend(s.graph.neighbours(t).iter().map(|&j| j as usize));
        }
        focus.sort_unstable();
        focus.dedup();
        let kept = s.best;
        // Judge the kicked allocation on its own, then descend from it.
        s.best = (f64::INFINITY, f64::INFINITY);
        s.improves(&trial);
        s.recount(&trial);
        for _ in 0..rounds {
            let mut changed = false;
            for &t in &focus {
                changed |= s.try_moves(&mut trial, t);
            }
            if !changed {
                break;
            }
        }
        if s.best.0 < kept.0 || (s.best.0 == kept.0 && s.best.1 < kept.1) {
            alloc.copy_from_slice(&trial);
        } else {
            s.best = kept;
        }
    }
    s.best.0
}

/// The best allocation found by [`exhaustive`].
#[derive(Clone, Debug, PartialEq)]
pub struct Optimum {
    /// Processor of each task.
    pub alloc: Vec<u32>,
    /// Its final time (SIMULHa, default order).
    pub makespan: f64,
    /// Allocations simulated.
    pub evaluated: u64,
}

/// The allocations [`exhaustive`] would simulate, saturating at `u64::MAX`: with `n_c`
/// tasks on class `c` of `k_c` interchangeable processors, the sum over the ways to deal
/// the tasks to the classes of `T! / Π n_c!` times `Π_c Σ_{b ≤ k_c} S(n_c, b)` (Stirling
/// numbers of the second kind: the set partitions of a class's tasks into at most `k_c`
/// blocks). `O(C · T²)` for `C` classes, and `O(1)` when the count is sure to exceed
/// `2^64` (`C^T` is a lower bound).
pub fn exhaustive_count(model: &Ttigha) -> u64 {
    let classes = class_lists(model);
    let t = model.program.tasks();
    let c = classes.len();
    // Each task has at least one choice per class.
    if c >= 2 && t >= 64 {
        return u64::MAX;
    }
    if c == 1 && classes[0].len() == 1 {
        return 1;
    }
    if c == 1 && t > 65 {
        return u64::MAX;
    }
    let sat = |x: u128| x.min(u128::from(u64::MAX));
    // Stirling numbers S(n, b) for n, b <= t, saturated.
    let mut stirling = vec![vec![0u128; t + 1]; t + 1];
    stirling[0][0] = 1;
    for n in 1..=t {
        for b in 1..=n {
            stirling[n][b] = sat(stirling[n - 1][b - 1] + (b as u128) * stirling[n - 1][b]);
        }
    }
    let mut binom = vec![vec![0u128; t + 1]; t + 1];
    for n in 0..=t {
        binom[n][0] = 1;
        for k in 1..=n {
            binom[n][k] = sat(binom[n - 1][k - 1] + if k < n { binom[n - 1][k] } else { 0 });
        }
    }
    // f[m]: ways for the classes so far to take m (labelled) tasks.
    let mut f = vec![0u128; t + 1];
    f[0] = 1;
    for list in &classes {
        let k = list.len();
        let part: Vec<u128> = (0..=t)
            .map(|n| sat((0..=k.min(n)).map(|b| stirling[n][b]).sum::<u128>()))
            .collect();
        let mut g = vec![0u128; t + 1];
        for m in 0..=t {
            let mut acc = 0u128;
            for n in 0..=m {
                let term = binom[m][n]
                    .saturating_mul(f[m - n])
                    .min(u128::from(u64::MAX));
                acc = sat(acc + sat(term.saturating_mul(part[n])));
            }
            g[m] = acc;
        }
        f = g;
    }
    f[t] as u64
}

/// Processors of each class of interchangeable processors, ascending.
fn class_lists(model: &Ttigha) -> Vec<Vec<u32>> {
    let class = model.platform.symmetry_classes();
    let n = class.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut lists = vec![Vec::new(); n];
    for (p, &c) in class.iter().enumerate() {
        lists[c as usize].push(p as u32);
    }
    lists
}

/// Simulates every allocation of the tasks to the processors, up to permutations of
/// interchangeable processors, and returns the one of least final time. Errors when there
/// are more than `limit` of them (see [`exhaustive_count`]). Runs on the calling
/// thread; [`exhaustive_observed`] takes a pool (the result does not depend on it).
pub fn exhaustive(model: &Ttigha, limit: u64) -> Result<Optimum, Error> {
    exhaustive_observed(model, limit, None, &NoProgress)
}

/// [`exhaustive`] on the threads of `pool` (`None`: one thread), telling `progress` of
/// the allocations simulated (after each of the few hundred subtrees the search is cut
/// into). The optimum does not depend on the threads.
pub fn exhaustive_observed(
    model: &Ttigha,
    limit: u64,
    pool: Option<&rayon::ThreadPool>,
    progress: &dyn Progress,
) -> Result<Optimum, Error> {
    let count = exhaustive_count(model);
    if count > limit {
        return Err(Error::Config(format!(
            "the exhaustive search would simulate {} allocations ({} tasks, {} processors), more than the limit {limit}",
            if count == u64::MAX { "over 2^64".to_string() } else { count.to_string() },
            model.program.tasks(),
            model.platform.processors()
        )));
    }
    let classes = class_lists(model);
    let nt = model.program.tasks();
    // Prefixes of the first tasks, enough to share among the threads.
    let mut prefixes: Vec<(Vec<u32>, Vec<usize>)> = vec![(Vec::new(), vec![0; classes.len()])];
    while prefixes.len() < 256 && prefixes[0].0.len() < nt {
        prefixes = prefixes
            .into_iter()
            .flat_map(|(alloc, used)| {
                choices(&classes, &used)
                    .into_iter()
                    .map(|(p, c, i)| {
                        let mut a = alloc.clone();
                        a.push(p);
                        let mut u = used.clone();
                        u[c] = u[c].max(i + 1);
                        (a, u)
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
    }
    let simulated = std::sync::atomic::AtomicU64::new(0);
    let one;
    let pool = match pool {
        Some(p) => p,
        None => {
            one = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .map_err(|e| Error::Config(format!("cannot start a thread: {e}")))?;
            &one
        }
    };
    let best = pool.install(|| {
        prefixes
            .par_iter()
            .map_init(
                || Simulator::new(model),
                |sim, (prefix, used)| {
                    let mut alloc = prefix.clone();
                    alloc.resize(nt, 0);
                    let mut best = (f64::INFINITY, Vec::new(), 0u64);
                    search(
                        sim,
                        &classes,
                        &mut alloc,
                        prefix.len(),
                        &mut used.clone(),
                        &mut best,
                    );
                    let before = simulated.fetch_add(best.2, std::sync::atomic::Ordering::Relaxed);
                    progress.step(before + best.2, count);
                    best
                },
            )
            .reduce(
                || (f64::INFINITY, Vec::new(), 0u64),
                |a, b| {
                    let n = a.2 + b.2;
                    if !b.1.is_empty() && comes_first(b.0, &b.1, &a) {
                        (b.0, b.1, n)
                    } else {
                        (a.0, a.1, n)
                    }
                },
            )
    });
    Ok(Optimum {
        alloc: best.1,
        makespan: best.0,
        evaluated: best.2,
    })
}

/// The processors the next task may take, ascending: every used processor of each class,
/// and the first unused one; each with its class and its position in the class.
fn choices(classes: &[Vec<u32>], used: &[usize]) -> Vec<(u32, usize, usize)> {
    let mut v: Vec<(u32, usize, usize)> = Vec::new();
    for (c, list) in classes.iter().enumerate() {
        let k = (used[c] + 1).min(list.len());
        v.extend(list[..k].iter().enumerate().map(|(i, &p)| (p, c, i)));
    }
    v.sort_unstable();
    v
}

/// Whether (`ms`, `alloc`) comes before the best so far: none yet, a lower final time, or
/// the same and lexicographically first (`total_cmp`: an infinite time after every finite
/// one).
fn comes_first(ms: f64, alloc: &[u32], best: &(f64, Vec<u32>, u64)) -> bool {
    best.1.is_empty()
        || ms
            .total_cmp(&best.0)
            .then_with(|| alloc.cmp(&best.1))
            .is_lt()
}

fn search(
    sim: &mut Simulator,
    classes: &[Vec<u32>],
    alloc: &mut [u32],
    t: usize,
    used: &mut Vec<usize>,
    best: &mut (f64, Vec<u32>, u64),
) {
    if t == alloc.len() {
        let ms = sim.makespan(alloc);
        best.2 += 1;
        // The first allocation is kept whatever its time (an infinite final time is
        // still an answer).
        if comes_first(ms, alloc, best) {
            best.0 = ms;
            best.1 = alloc.to_vec();
        }
        return;
    }
    for (p, c, i) in choices(classes, used) {
        alloc[t] = p;
        let before = used[c];
        used[c] = before.max(i + 1);
        search(sim, classes, alloc, t + 1, used, best);
        used[c] = before;
    }
}
