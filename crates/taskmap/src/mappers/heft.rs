//! HEFT (Topcuoglu, Hariri & Wu, "Performance-effective and low-complexity task scheduling
//! for heterogeneous computing", IEEE TPDS 2002), the usual reference point for mapping
//! workflows onto heterogeneous machines, on TTIGHa programs ([`Ttigha`]), so that it can
//! be compared with MATEHa under the same simulator (SIMULHa).
//!
//! * Upward rank of each sub-task: its mean time over the processors, plus the largest
//!   (mean communication time + rank) over its successors. A message's mean time is
//!   `startup + bytes · per_byte` averaged over the ordered pairs of distinct processors;
//!   the next sub-task of the same task is a successor at no communication cost.
//! * Sub-tasks are scheduled by decreasing rank (ties: the program's priority order, so
//!   the sequence is topological even with zero times). The first sub-task of a task goes
//!   to the processor where it finishes earliest, with insertion: it may fill an idle gap
//!   between sub-tasks already placed, when the gap holds it after its inputs have
//!   arrived (ties: the lowest processor). The task's later sub-tasks follow it to that
//!   processor (TTIGHa allocates tasks, not sub-tasks), each at its earliest gap there.
//! * The result: the allocation, the planned start and finish of every sub-task, and the
//!   order of each processor's sub-tasks by planned start. SIMULHa run strictly in that
//!   order starts no sub-task later than planned (tested), so its final time is at most
//!   the planned one.
//!
//! * [`heft_ls`] (ours): HEFT, then the SIMULHa-guided iterated local search of
//!   `mateha-ls` with HEFT's sequence as the priority order (an idle processor runs its
//!   ready sub-task of highest upward rank), from the better of HEFT's and MATEHa's
//!   allocations in that order; the better of HEFT's and the search's schedules, with the
//!   order each ran in.
//!
//! Cost: `O(S log S + E · M)` for the ranks and the ready times of `S` sub-tasks with `E`
//! messages on `M` processors, plus the gap searches: each processor keeps its idle gaps,
//! the search bisects to the first one ending at or after the ready time and scans on
//! from there, so sub-tasks placed back to back cost nothing; `O(S)` per processor at
//! worst, when every placement leaves a gap (`O(S² · M)` in all).

use crate::mappers::mateha::{iterated_local_search_with, mateha, SearchParams};
use crate::model::ttigha::Ttigha;
use crate::sim::simulha::Simulator;

/// A HEFT schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Heft {
    /// Processor of each task.
    pub alloc: Vec<u32>,
    /// Sub-tasks of each processor, by planned start (an order for
    /// [`crate::sim::simulha::Simulator::schedule`]).
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

/// Schedules `model` with HEFT (see the module documentation).
pub fn heft(model: &Ttigha) -> Heft {
    let (pr, pl) = (&model.program, &model.platform);
    let (n, m) = (pr.subtasks(), pl.processors());
    // Mean time of a message: startup and per-byte time averaged over ordered pairs.
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
    let mean_time = |s: usize| -> f64 {
        (0..m)
            .map(|p| pr.time(s, pl.proc_type[p] as usize))
            .sum::<f64>()
            / m as f64
    };
    // Upward ranks, successors first (reverse priority order, which is topological).
    let mut topo: Vec<u32> = (0..n as u32).collect();
    topo.sort_unstable_by_key(|&s| pr.rank[s as usize]);
    let mut rank = vec![0.0f64; n];
    for &s in topo.iter().rev() {
        let s = s as usize;
        let mut tail = pr.next_in_task(s).map_or(0.0, |y| rank[y]);
        for msg in pr.outgoing(s) {
            let c = if m > 1 {
                startup + msg.bytes as f64 * per_byte
            } else {
                0.0
            };
            tail = tail.max(c + rank[msg.to as usize]);
        }
        rank[s] = mean_time(s) + tail;
    }
    let mut seq = topo;
    seq.sort_by(|&a, &b| {
        rank[b as usize]
            .total_cmp(&rank[a as usize])
            .then(pr.rank[a as usize].cmp(&pr.rank[b as usize]))
    });
    let mut alloc = vec![u32::MAX; pr.tasks()];
    let mut proc_of = vec![u32::MAX; n];
    let (mut start, mut finish) = (vec![0.0f64; n], vec![0.0f64; n]);
    // Idle gaps (start, end) of each processor, sorted; the last one never ends.
    let mut gaps: Vec<Vec<(f64, f64)>> = vec![vec![(0.0, f64::INFINITY)]; m];
    let mut makespan = 0.0f64;
    for &s in &seq {
        let s = s as usize;
        let task = pr.subtask_task[s] as usize;
        let chain = pr.previous(s).map_or(0.0, |r| finish[r]);
        let candidates = match pr.previous(s) {
            Some(r) => {
                let p = proc_of[r] as usize;
                p..p + 1
            }
            None => 0..m,
        };
        let mut best = (f64::INFINITY, 0.0, 0usize, 0usize);
        for p in candidates {
            let mut ready = chain;
            for msg in pr.incoming(s) {
                let from = msg.from as usize;
                let q = proc_of[from] as usize;
                ready = ready.max(finish[from] + pl.comm_time(q, p, 1, msg.bytes));
            }
            let w = pr.time(s, pl.proc_type[p] as usize);
            let (at, gap) = earliest_gap(&gaps[p], ready, w);
            if at + w < best.0 {
                best = (at + w, at, p, gap);
            }
        }
        let (end, at, p, gap) = best;
        fill_gap(&mut gaps[p], gap, at, end);
        proc_of[s] = p as u32;
        alloc[task] = p as u32;
        start[s] = at;
        finish[s] = end;
        makespan = makespan.max(end);
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

/// Marks `[at, end]` busy inside gap `i`: the gap keeps its parts before and after (a
/// sub-task of no time splits it in two, so that no later sub-task runs across it).
fn fill_gap(gaps: &mut Vec<(f64, f64)>, i: usize, at: f64, end: f64) {
    let (a, b) = gaps[i];
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
        // no gap is kept between back-to-back sub-tasks, even for one of no time.
        assert_eq!(earliest_gap(&gaps, 5.5, 0.0), (9.0, 1));
        assert_eq!(earliest_gap(&gaps, 5.0, 0.0), (5.0, 0));
        assert_eq!(earliest_gap(&gaps, 1.0, 0.0), (2.0, 0));
        let mut g = vec![(0.0, f64::INFINITY)];
        fill_gap(&mut g, 0, 0.0, 2.0);
        assert_eq!(g, [(2.0, f64::INFINITY)]);
        fill_gap(&mut g, 0, 4.0, 4.0);
        assert_eq!(g, [(2.0, 4.0), (4.0, f64::INFINITY)]);
        // a sub-task of no time splits the gap: 1 unit from 3 cannot run across 4.
        assert_eq!(earliest_gap(&g, 3.0, 1.0), (3.0, 0));
        assert_eq!(earliest_gap(&g, 3.5, 1.0), (4.0, 1));
        fill_gap(&mut g, 0, 2.0, 4.0);
        assert_eq!(g, [(4.0, f64::INFINITY)]);
    }
}
