//! HEFT (Topcuoglu, Hariri & Wu, "Performance-effective and low-complexity task scheduling
//! for heterogeneous computing", IEEE TPDS 2002), the usual reference point for mapping
//! workflows onto heterogeneous machines, on TTIGHa programs ([`Ttigha`]), so that it can
//! be compared with MATEHa under the same simulator (SIMULHa).
//!
//! * Upward rank of each sub-task: its mean time over the processors, plus the largest
//!   (mean communication time + rank) over its successors. A message's mean time is
//!   `startup + bytes · per_byte` averaged over the ordered pairs of distinct processors;
//!   the next sub-task of the same task is a successor at no communication cost.
//! * Sub-tasks are scheduled by decreasing rank, the ready one of highest rank next (ties:
//!   the program's priority order; with upward ranks this is the sorted sequence, which
//!   is topological even with zero times). The first sub-task of a task goes
//!   to the processor where it finishes earliest, with insertion: it may fill an idle gap
//!   between sub-tasks already placed, when the gap holds it after its inputs have
//!   arrived (ties: the lowest processor). The task's later sub-tasks follow it to that
//!   processor (TTIGHa allocates tasks, not sub-tasks), each at its earliest gap there.
//!   A sub-task of no time may also go at an instant where a sub-task of some time starts
//!   at the start of a gap or ends at its end (between two sub-tasks placed back to back,
//!   at time 0, or next to a sub-task of no time).
//! * The result: the allocation, the planned start and finish of every sub-task, and the
//!   order of each processor's sub-tasks by planned start. SIMULHa run strictly in that
//!   order starts no sub-task later than planned (tested), so its final time is at most
//!   the planned one.
//!
//! * [`peft`]: PEFT (Arabnejad & Barbosa 2014), the same list scheduler with an optimistic
//!   cost table as lookahead, in rank and in the choice of processor.
//! * [`heft_ls`] (ours): HEFT, then the SIMULHa-guided iterated local search of
//!   `mateha-ls` with HEFT's sequence as the priority order (an idle processor runs its
//!   ready sub-task of highest upward rank), from the better of HEFT's and MATEHa's
//!   allocations in that order; the better of HEFT's and the search's schedules, with the
//!   order each ran in.
//!
//! Cost: `O(M² + S · M + S log S + E · M)` for the mean message time, the mean times, the
//! ranks and the ready times of `S` sub-tasks with `E` messages on `M` processors (PEFT
//! adds `O(E · types)` for its table), plus the gap searches: each processor keeps its idle gaps,
//! the search bisects to the first one ending at or after the ready time and scans on
//! from there, so sub-tasks placed back to back cost nothing; `O(S)` per processor at
//! worst, when every placement leaves a gap (`O(S² · M)` in all); those instants add a
//! bisection per sub-task of no time and `O(S)` per processor at worst to keep them sorted.

use crate::hetero::mateha::{iterated_local_search_with, mateha, SearchParams};
use crate::hetero::simulha::Simulator;
use crate::hetero::ttigha::Ttigha;

/// A HEFT schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Heft {
    /// Processor of each task.
    pub alloc: Vec<u32>,
    /// Sub-tasks of each processor, by planned start (an order for
    /// [`crate::hetero::simulha::Simulator::schedule`]).
    pub order: Vec<Vec<u32>>,
    /// Planned start and finish of each sub-task.
    pub start: Vec<f64>,
    pub finish: Vec<f64>,
    /// The planned final time.
    pub makespan: f64,
    /// Position of each sub-task in HEFT's sequence (by decreasing upward rank): a
    /// topological order, usable as a program's priority order `rank`.
    pub priority: Vec<u32>,
}

/// Startup and per-byte time of a message averaged over the ordered pairs of distinct
/// processors (zero on one processor).
fn mean_link(model: &Ttigha) -> (f64, f64) {
    let pl = &model.platform;
    let m = pl.processors();
    let (mut startup, mut per_byte) = (0.0f64, 0.0f64);
    if m > 1 {
        for s in 0..m {
            for d in (0..m).filter(|&d| d != s) {
                let c = pl.link(s, d).expect("distinct processors are linked") as usize;
                startup += pl.startup[c];
                per_byte += pl.per_byte[c];
            }
        }
        let pairs = (m * (m - 1)) as f64;
        startup /= pairs;
        per_byte /= pairs;
    }
    (startup, per_byte)
}

/// The sub-tasks, successors first (reverse priority order, which is topological).
fn reverse_topological(model: &Ttigha) -> Vec<u32> {
    let pr = &model.program;
    let mut topo: Vec<u32> = (0..pr.subtasks() as u32).collect();
    topo.sort_unstable_by_key(|&s| std::cmp::Reverse(pr.rank[s as usize]));
    topo
}

/// Schedules `model` with HEFT (see the module documentation).
pub fn heft(model: &Ttigha) -> Heft {
    let (pr, pl) = (&model.program, &model.platform);
    let (n, m) = (pr.subtasks(), pl.processors());
    let (startup, per_byte) = mean_link(model);
    let mean_time = |s: usize| -> f64 {
        (0..m)
            .map(|p| pr.time(s, pl.proc_type[p] as usize))
            .sum::<f64>()
            / m as f64
    };
    let mut rank = vec![0.0f64; n];
    for s in reverse_topological(model) {
        let s = s as usize;
        let mut tail = pr.next_in_task(s).map_or(0.0, |y| rank[y]);
        for msg in pr.outgoing(s) {
            // The mean message time (0 on one processor: `mean_link` gives 0, 0).
            let c = startup + msg.bytes as f64 * per_byte;
            tail = tail.max(c + rank[msg.to as usize]);
        }
        rank[s] = mean_time(s) + tail;
    }
    list_schedule(model, &rank, None)
}

/// Schedules `model` with PEFT (Arabnejad & Barbosa, "List scheduling algorithm for
/// heterogeneous systems by an optimistic cost table", IEEE TPDS 2014): the optimistic cost
/// table `OCT(s, p)`, the longest over `s`'s successors of the least (their `OCT` + their
/// time + the mean message time when they run on another processor) down to the exits,
/// ranks the sub-tasks by its mean over the processors, and each task goes to the
/// processor of least earliest finish + `OCT`. The next sub-task of the same task must run
/// on the same processor and costs no message. `OCT` depends on a processor only through
/// its type (message times are the means), so the table has a row per type.
pub fn peft(model: &Ttigha) -> Heft {
    let (pr, pl) = (&model.program, &model.platform);
    let (n, m, types) = (pr.subtasks(), pl.processors(), pl.types());
    let oct = optimistic_cost_table(model);
    let count = pl.type_counts();
    let rank: Vec<f64> = (0..n)
        .map(|s| {
            (0..types)
                .map(|t| count[t] as f64 * oct[s * types + t])
                .sum::<f64>()
                / m as f64
        })
        .collect();
    list_schedule(model, &rank, Some(&oct))
}

/// PEFT's optimistic cost table: entry `s · types + t` is `OCT(s, p)` for the processors
/// `p` of type `t` (see [`peft`]; types without a processor get 0).
pub fn optimistic_cost_table(model: &Ttigha) -> Vec<f64> {
    let (pr, pl) = (&model.program, &model.platform);
    let (n, types) = (pr.subtasks(), pl.types());
    let (startup, per_byte) = mean_link(model);
    let count = pl.type_counts();
    let used: Vec<usize> = (0..types).filter(|&t| count[t] > 0).collect();
    // oct[s * types + t]: OCT of sub-task s on a processor of type t.
    let mut oct = vec![0.0f64; n * types];
    let mut row = vec![0.0f64; types];
    for s in reverse_topological(model) {
        let s = s as usize;
        row.iter_mut().for_each(|x| *x = 0.0);
        if let Some(y) = pr.next_in_task(s) {
            for &t in &used {
                row[t] = oct[y * types + t] + pr.time(y, t);
            }
        }
        for msg in pr.outgoing(s) {
            let y = msg.to as usize;
            let c = startup + msg.bytes as f64 * per_byte;
            let elsewhere = used
                .iter()
                .map(|&t| oct[y * types + t] + pr.time(y, t))
                .fold(f64::INFINITY, f64::min)
                + c;
            for &t in &used {
                let here = oct[y * types + t] + pr.time(y, t);
                // `elsewhere` takes its minimum over every type, this one too: exact even
                // when the type has one processor, as `here` is below that term.
                row[t] = row[t].max(here.min(elsewhere));
            }
        }
        oct[s * types..(s + 1) * types].copy_from_slice(&row);
    }
    oct
}

/// The list scheduler of HEFT and PEFT: the ready sub-task of highest `key` next (ties:
/// the program's priority order), its task's processor (for a first sub-task: the one of
/// least earliest finish, plus `lookahead[s · types + type]` when given), the earliest gap
/// there that holds it once its inputs have arrived.
fn list_schedule(model: &Ttigha, key: &[f64], lookahead: Option<&[f64]>) -> Heft {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let (pr, pl) = (&model.program, &model.platform);
    let (n, m, types) = (pr.subtasks(), pl.processors(), pl.types());
    // Ready sub-tasks by key (a total order on the bits of a non-negative float), then
    // priority.
    let mut pending: Vec<u32> = (0..n).map(|s| pr.inputs(s)).collect();
    let entry = |s: usize| ((key[s] + 0.0).to_bits(), Reverse(pr.rank[s]), s as u32);
    let mut ready: BinaryHeap<(u64, Reverse<u32>, u32)> =
        (0..n).filter(|&s| pending[s] == 0).map(entry).collect();
    let mut seq: Vec<u32> = Vec::with_capacity(n);
    let mut alloc = vec![u32::MAX; pr.tasks()];
    let mut proc_of = vec![u32::MAX; n];
    let (mut start, mut finish) = (vec![0.0f64; n], vec![0.0f64; n]);
    // Idle gaps (start, end) of each processor, sorted; the last one never ends. And the
    // instants at the ends of gaps that a sub-task of some time filled up to (sorted):
    // where a sub-task of no time may still go, as between two placed back to back.
    let mut gaps: Vec<Vec<(f64, f64)>> = vec![vec![(0.0, f64::INFINITY)]; m];
    let mut instants: Vec<Vec<f64>> = vec![Vec::new(); m];
    let mut makespan = 0.0f64;
    while let Some((_, _, s)) = ready.pop() {
        seq.push(s);
        let s = s as usize;
        let task = pr.subtask_task[s] as usize;
        let (chain, candidates) = match pr.previous(s) {
            Some(r) => {
                let p = proc_of[r] as usize;
                (finish[r], p..p + 1)
            }
            None => (0.0, 0..m),
        };
        // (objective, finish, start, processor, gap)
        let mut best = (f64::INFINITY, 0.0, 0.0, 0usize, None);
        for p in candidates {
            let mut at = chain;
            for msg in pr.incoming(s) {
                let from = msg.from as usize;
                let q = proc_of[from] as usize;
                at = at.max(finish[from] + pl.comm_time(q, p, 1, msg.bytes));
            }
            let t = pl.proc_type[p] as usize;
            let w = pr.time(s, t);
            let (at, gap) = earliest_slot(&gaps[p], &instants[p], at, w);
            let goal = at + w + lookahead.map_or(0.0, |o| o[s * types + t]);
            if goal < best.0 {
                best = (goal, at + w, at, p, gap);
            }
        }
        let (_, end, at, p, gap) = best;
        if let Some(gap) = gap {
            fill_gap(&mut gaps[p], &mut instants[p], gap, at, end);
        }
        proc_of[s] = p as u32;
        alloc[task] = p as u32;
        start[s] = at;
        finish[s] = end;
        makespan = makespan.max(end);
        let chain = pr.next_in_task(s);
        let msgs = pr.outgoing(s).map(|msg| msg.to as usize);
        for y in chain.into_iter().chain(msgs) {
            pending[y] -= 1;
            if pending[y] == 0 {
                ready.push(entry(y));
            }
        }
    }
    let mut priority = vec![0u32; n];
    for (i, &s) in seq.iter().enumerate() {
        priority[s as usize] = i as u32;
    }
    // Each processor's sub-tasks by planned start, then finish (a sub-task of no time
    // before one starting at the same instant), then sequence (dependencies first).
    let mut order: Vec<Vec<u32>> = vec![Vec::new(); m];
    for &s in &seq {
        order[proc_of[s as usize] as usize].push(s);
    }
    for list in &mut order {
        list.sort_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            start[a]
                .total_cmp(&start[b])
                .then(finish[a].total_cmp(&finish[b]))
                .then(priority[a].cmp(&priority[b]))
        });
    }
    Heft {
        alloc,
        order,
        start,
        finish,
        makespan,
        priority,
    }
}

/// HEFT, then the iterated local search of `mateha-ls`
/// ([`iterated_local_search_with`]) on the program with HEFT's sequence as its priority
/// order, so that SIMULHa's default order runs an idle processor's ready sub-task of
/// highest upward rank; it starts from the better of HEFT's and MATEHa's allocations in
/// that order (ties: HEFT's). Returns the allocation of the shorter schedule, HEFT's
/// (simulated in its planned order) or the search's, and the order it runs in (for
/// [`Simulator::schedule`]). Never longer than HEFT's schedule, nor than MATEHa's
/// allocation run in that priority order.
pub fn heft_ls(model: &Ttigha, params: &SearchParams) -> (Vec<u32>, Vec<Vec<u32>>) {
    let h = heft(model);
    let planned = Simulator::new(model)
        .schedule(&h.alloc, Some(&h.order))
        .expect("HEFT's order is feasible")
        .makespan;
    let mut ranked = model.program.clone();
    ranked.rank.clone_from(&h.priority);
    let mut sim = Simulator::with(&ranked, &model.platform);
    let m = mateha(model).alloc;
    let mut alloc = if sim.makespan(&m) < sim.makespan(&h.alloc) {
        m
    } else {
        h.alloc.clone()
    };
    let searched = iterated_local_search_with(&ranked, &model.platform, &mut alloc, params);
    if planned <= searched {
        (h.alloc, h.order)
    } else {
        let order = sim
            .schedule(&alloc, None)
            .expect("the default order runs")
            .order;
        (alloc, order)
    }
}

/// The earliest start `>= ready` of a sub-task of length `w` in the sorted, disjoint idle
/// `gaps` of a processor (the last one never ends), and the index of its gap. A sub-task
/// of no time may sit at either end of a gap. Only gaps, not busy intervals, are scanned,
/// so sub-tasks placed back to back cost nothing to skip.
fn earliest_gap(gaps: &[(f64, f64)], ready: f64, w: f64) -> (f64, usize) {
    let mut i = gaps.partition_point(|g| g.1 < ready);
    loop {
        let (a, b) = gaps[i];
        let at = ready.max(a);
        if at + w <= b {
            return (at, i);
        }
        i += 1;
    }
}

/// The earliest start `>= ready` of a sub-task of length `w` on a processor with idle
/// `gaps` (see [`earliest_gap`]) and `instants` (see [`fill_gap`]; sorted), and its gap
/// (`None`: one of the instants, which only a sub-task of no time takes). The instants
/// are searched by bisection, so they cost sub-tasks of some time nothing.
fn earliest_slot(
    gaps: &[(f64, f64)],
    instants: &[f64],
    ready: f64,
    w: f64,
) -> (f64, Option<usize>) {
    let (at, gap) = earliest_gap(gaps, ready, w);
    if w == 0.0 {
        let j = instants.partition_point(|&x| x < ready);
        if let Some(&t) = instants.get(j) {
            if t < at {
                return (t, None);
            }
        }
    }
    (at, Some(gap))
}

/// Marks `[at, end]` busy inside gap `i`: the gap keeps its parts before and after (a
/// sub-task of no time inside it splits it in two, so that no later sub-task runs across
/// it; one at either end leaves it as it was). Where a sub-task of some time starts at the
/// gap's start or ends at its end, that instant goes into `instants` (sorted, once each):
/// it stays free for sub-tasks of no time (between two sub-tasks placed back to back, at
/// time 0, or next to a sub-task of no time).
fn fill_gap(gaps: &mut Vec<(f64, f64)>, instants: &mut Vec<f64>, i: usize, at: f64, end: f64) {
    let (a, b) = gaps[i];
    if at < end {
        for t in [a, b] {
            if t == at || t == end {
                let j = instants.partition_point(|&x| x < t);
                if instants.get(j) != Some(&t) {
                    instants.insert(j, t);
                }
            }
        }
    }
    match (a < at, end < b) {
        (true, true) => {
            gaps[i] = (a, at);
            gaps.insert(i + 1, (end, b));
        }
        (true, false) => gaps[i] = (a, at),
        (false, true) => gaps[i] = (end, b),
        (false, false) => {
            gaps.remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps() {
        // Busy 0-2, 5-6 and 6-9.
        let gaps = [(2.0, 5.0), (9.0, f64::INFINITY)];
        assert_eq!(earliest_gap(&gaps, 0.0, 3.0), (2.0, 0));
        assert_eq!(earliest_gap(&gaps, 0.0, 4.0), (9.0, 1));
        assert_eq!(earliest_gap(&gaps, 2.5, 2.5), (2.5, 0));
        // The gaps alone keep no instant between back-to-back sub-tasks.
        assert_eq!(earliest_gap(&gaps, 5.5, 0.0), (9.0, 1));
        assert_eq!(earliest_gap(&gaps, 5.0, 0.0), (5.0, 0));
        assert_eq!(earliest_gap(&gaps, 1.0, 0.0), (2.0, 0));
        // The same processor built by filling: busy 0-2, 5-6 and 6-9.
        let (mut g, mut t) = (vec![(0.0, f64::INFINITY)], Vec::new());
        fill_gap(&mut g, &mut t, 0, 0.0, 2.0);
        fill_gap(&mut g, &mut t, 0, 5.0, 6.0);
        fill_gap(&mut g, &mut t, 1, 6.0, 9.0);
        assert_eq!(g, gaps);
        assert_eq!(t, [0.0, 6.0]);
        // A sub-task of no time goes at 6, between the two placed back to back; one of
        // some time cannot; the instant stays open.
        assert_eq!(earliest_slot(&g, &t, 5.5, 0.0), (6.0, None));
        assert_eq!(earliest_slot(&g, &t, 5.5, 0.5), (9.0, Some(1)));
        assert_eq!(earliest_slot(&g, &t, 0.0, 0.0), (0.0, None));
        assert_eq!(earliest_slot(&g, &t, 1.0, 0.0), (2.0, Some(0)));
        assert_eq!(earliest_slot(&g, &t, 6.5, 0.0), (9.0, Some(1)));
        // Inside a gap one of no time splits it: 1 unit from 3 cannot run across 4.
        fill_gap(&mut g, &mut t, 0, 4.0, 4.0);
        assert_eq!(g[..2], [(2.0, 4.0), (4.0, 5.0)]);
        assert_eq!(t, [0.0, 6.0]);
        assert_eq!(earliest_gap(&g, 3.0, 1.0), (3.0, 0));
        assert_eq!(earliest_gap(&g, 3.5, 1.0), (4.0, 1));
        // Filling a whole gap adds an instant at each end.
        fill_gap(&mut g, &mut t, 0, 2.0, 4.0);
        assert_eq!(g, [(4.0, 5.0), (9.0, f64::INFINITY)]);
        assert_eq!(t, [0.0, 2.0, 4.0, 6.0]);
    }
}
