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
//!   `mateha-ls` ([`iterated_local_search`]) from the better (in SIMULHa's default order)
//!   of HEFT's and MATEHa's allocations; the better of HEFT's and the search's schedules.
//!
//! Cost: `O(S log S + E · M)` for the ranks and the ready times of `S` sub-tasks with `E`
//! messages on `M` processors, plus the gap searches, `O(S)` per processor at worst
//! (`O(S² · M)` in all; the scan starts at the first sub-task ending after the ready time,
//! found by bisection).

use crate::mappers::mateha::{iterated_local_search, SearchParams};
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
    // Busy intervals (start, finish, sub-task) of each processor, sorted.
    let mut busy: Vec<Vec<(f64, f64, u32)>> = vec![Vec::new(); m];
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
            let (at, slot) = earliest_gap(&busy[p], ready, w);
            if at + w < best.0 {
                best = (at + w, at, p, slot);
            }
        }
        let (end, at, p, slot) = best;
        busy[p].insert(slot, (at, end, s as u32));
        proc_of[s] = p as u32;
        alloc[task] = p as u32;
        start[s] = at;
        finish[s] = end;
        makespan = makespan.max(end);
    }
    let order = busy
        .into_iter()
        .map(|b| b.into_iter().map(|(_, _, s)| s).collect())
        .collect();
    Heft {
        alloc,
        order,
        start,
        finish,
        makespan,
    }
}

/// HEFT, then [`iterated_local_search`] (which simulates in SIMULHa's default order) from
/// the better of HEFT's and MATEHa's allocations in that order (ties: HEFT's): the
/// allocation of the shorter schedule, with HEFT's order when HEFT's own schedule
/// (simulated in its order) is at most as long, else `None` (the default order). Never
/// longer than HEFT's schedule, nor than MATEHa's in the default order.
pub fn heft_ls(model: &Ttigha, params: &SearchParams) -> (Vec<u32>, Option<Vec<Vec<u32>>>) {
    let h = heft(model);
    let mut sim = Simulator::new(model);
    let planned = sim
        .schedule(&h.alloc, Some(&h.order))
        .expect("HEFT's order is feasible")
        .makespan;
    let m = crate::mappers::mateha::mateha(model).alloc;
    let mut alloc = if sim.makespan(&m) < sim.makespan(&h.alloc) {
        m
    } else {
        h.alloc.clone()
    };
    let searched = iterated_local_search(model, &mut alloc, params);
    if planned <= searched {
        (h.alloc, Some(h.order))
    } else {
        (alloc, None)
    }
}

/// The earliest start `>= ready` of a sub-task of length `w` between the sorted,
/// non-overlapping intervals `busy`, and the index at which it is inserted. A gap of
/// length 0 (`w = 0`) may sit where one interval ends and the next starts.
fn earliest_gap(busy: &[(f64, f64, u32)], ready: f64, w: f64) -> (f64, usize) {
    // Intervals ending by `ready` cannot delay it.
    let mut i = busy.partition_point(|iv| iv.1 <= ready);
    let mut at = ready;
    while let Some(&(a, b, _)) = busy.get(i) {
        if at + w <= a {
            break;
        }
        at = at.max(b);
        i += 1;
    }
    (at, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps() {
        let busy = [(0.0, 2.0, 0), (5.0, 6.0, 1), (6.0, 9.0, 2)];
        assert_eq!(earliest_gap(&busy, 0.0, 3.0), (2.0, 1));
        assert_eq!(earliest_gap(&busy, 0.0, 4.0), (9.0, 3));
        assert_eq!(earliest_gap(&busy, 2.5, 2.5), (2.5, 1));
        assert_eq!(earliest_gap(&busy, 5.5, 0.0), (6.0, 2));
        assert_eq!(earliest_gap(&busy, 1.0, 0.0), (2.0, 1));
        assert_eq!(earliest_gap(&[], 3.0, 1.0), (3.0, 0));
    }
}
