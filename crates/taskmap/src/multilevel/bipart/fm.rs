//! Fiduccia-Mattheyses passes on a bisection with external costs: moves by the best gain
//! under the side bounds, rolled back to the best prefix of each pass.

use crate::multilevel::bipart::*;
use crate::multilevel::pq::lifo_key;

/// Moves `v` to the other side and keeps every gain exact: `v`'s changes sign, and each
/// neighbour's rises by twice the edge's cost when the neighbour is on `v`'s old side
/// (the edge is now cut) and falls by as much otherwise; `each(u, gain, side)` sees every
/// neighbour after its update.
#[inline]
pub(crate) fn move_task(
    sp: &SubProblem,
    side: &mut [u8],
    gain: &mut [i64],
    v: usize,
    mut each: impl FnMut(usize, i64, u8),
) {
    let s = side[v];
    side[v] = 1 - s;
    gain[v] = -gain[v];
    for e in sp.xadj[v]..sp.xadj[v + 1] {
        let u = sp.adjncy[e] as usize;
        let d = 2 * (sp.edge_weight[e] * sp.cut_dist) as i64;
        if side[u] == s {
            gain[u] += d;
        } else {
            gain[u] -= d;
        }
        each(u, gain[u], side[u]);
    }
}

/// Up to `passes` FM passes on `side`; stops after a pass that does not improve
/// (overload, cost). Gains, loads and the cost are computed once, in one scan of the edges
/// ([`init_gains`]), and kept up to date by every move and every rollback; each pass
/// queues only the boundary (tasks with a neighbour on the other side or unequal external
/// costs, told from the gain and the internal weighted degree when every edge weight is
/// positive and `cut_dist > 0`), so a pass costs O(n + moves · deg · log n) rather than
/// O((n + m) · log n). Returns the cost of the result.
pub(crate) fn fm_passes(
    sp: &SubProblem,
    side: &mut [u8],
    passes: usize,
    stall: usize,
    scratch: &mut BipartScratch,
) -> u64 {
    fm_passes_measured(sp, side, passes, stall, scratch).1
}

/// [`fm_passes`], also returning the cost `side` had before (from the same scan of the
/// edges that finds the gains): `(before, after)`.
pub(crate) fn fm_passes_measured(
    sp: &SubProblem,
    side: &mut [u8],
    passes: usize,
    stall: usize,
    scratch: &mut BipartScratch,
) -> (u64, u64) {
    let start = init_gains(sp, side, scratch);
    (
        start,
        fm_passes_with_gains(sp, side, passes, stall, scratch, start),
    )
}

/// Every task's gain ([`SubProblem::gain`]) into `scratch.gain`, and `scratch.wdeg` with
/// `scratch.wdeg_exact`, in one scan of the edges; returns the cost of `side` (the
/// external costs plus `cut_dist` times half the cut weight summed over the tasks, which
/// counts every cut edge from both ends).
pub(crate) fn init_gains(sp: &SubProblem, side: &[u8], scratch: &mut BipartScratch) -> u64 {
    let n = sp.n();
    scratch.gain.clear();
    scratch.wdeg.clear();
    let mut exact = sp.cut_dist > 0;
    let cd = sp.cut_dist as i64;
    let (mut ext, mut cut) = (0u64, 0i64);
    for v in 0..n {
        let s = side[v] as usize;
        let (mut all, mut other) = (0i64, 0i64);
        for e in sp.xadj[v]..sp.xadj[v + 1] {
            let w = sp.edge_weight[e] as i64;
            exact &= w > 0;
            all += w;
            if side[sp.adjncy[e] as usize] as usize != s {
                other += w;
            }
        }
        scratch.wdeg.push(cd * all);
        scratch
            .gain
            .push(sp.ext[s][v] as i64 - sp.ext[1 - s][v] as i64 + cd * (2 * other - all));
        ext += sp.ext[s][v];
        cut += other;
    }
    scratch.wdeg_exact = exact;
    ext + (cd * (cut / 2)) as u64
}

/// [`fm_passes`] from the cost `start` of `side` and with every task's gain already in
/// `scratch.gain` (as [`init_gains`] and [`grow`] leave them, checked here in debug
/// builds against [`SubProblem::cost`] and [`SubProblem::gain`]).
pub(crate) fn fm_passes_with_gains(
    sp: &SubProblem,
    side: &mut [u8],
    passes: usize,
    stall: usize,
    scratch: &mut BipartScratch,
    start: u64,
) -> u64 {
    debug_assert_eq!(start, sp.cost(side));
    debug_assert!((0..sp.n()).all(|v| scratch.gain[v] == sp.gain(side, v)));
    if passes == 0 {
        return start;
    }
    let n = sp.n();
    let w = sp.loads(side);
    let mut st = FmState {
        sp,
        ncon: sp.ncon,
        viol: sp.violation(&w),
        w,
        cost: start as i64,
        stamp: 0,
    };
    scratch.locked.clear();
    scratch.locked.resize(n, false);
    // Fixed tasks stay locked for good (a pass unlocks only the tasks it moved).
    for v in 0..n {
        if sp.fixed_side(v).is_some() {
            scratch.locked[v] = true;
        }
    }
    for s in 0..2 {
        scratch.heaps[s].reset(n);
    }
    let stall = stall.min((n / STALL_DIVISOR).max(MIN_STALL));
    for _ in 0..passes {
        if !st.pass(side, scratch, stall) {
            break;
        }
    }
    st.cost as u64
}

/// Queue keys: gain with LIFO ties for one vertex weight (straighter cuts: quick suite
/// f_C 0.975 -> 0.964 of Scotch); with several, the heap's own order, under which DRB
/// plus rebalancing keeps every constraint on our multi-weight tests (LIFO ties did not).
#[inline]
fn queue_key(ncon: usize, g: i64, stamp: &mut i64) -> i64 {
    if ncon == 1 {
        lifo_key(g, stamp)
    } else {
        g
    }
}

/// The state of FM passes on a bisection: the side loads, the bound violation, the cost
/// and the stamp of the LIFO queue keys.
struct FmState<'a> {
    /// The bisection problem.
    sp: &'a SubProblem,
    /// Vertex weights per task.
    ncon: usize,
    /// The load of each side per constraint.
    w: [Vec<u64>; 2],
    /// How far the loads exceed the side bounds, summed.
    viol: u64,
    /// The cost of the current sides.
    cost: i64,
    /// The stamp of the LIFO queue keys.
    stamp: i64,
}

impl FmState<'_> {
    /// The violation after moving `v` away from side `from`.
    #[inline]
    fn viol_after(&self, v: usize, from: usize) -> u64 {
        let (sp, ncon, w) = (self.sp, self.ncon, &self.w);
        let mut x = 0;
        for c in 0..ncon {
            let vw = sp.vertex_weight[v * ncon + c];
            x += (w[from][c] - vw).saturating_sub(sp.bound[from][c]);
            x += (w[1 - from][c] + vw).saturating_sub(sp.bound[1 - from][c]);
        }
        x
    }

    /// Moves `v` to the other side, updating loads, cost and gains (and, when `QUEUE`,
    /// the queue entries of unlocked neighbours, inserting new boundary tasks).
    #[inline]
    fn flip<const QUEUE: bool>(&mut self, v: usize, side: &mut [u8], scratch: &mut BipartScratch) {
        let (sp, ncon) = (self.sp, self.ncon);
        let s = side[v] as usize;
        self.cost -= scratch.gain[v];
        for c in 0..ncon {
            let vw = sp.vertex_weight[v * ncon + c];
            self.w[s][c] -= vw;
            self.w[1 - s][c] += vw;
        }
        let (heaps, locked) = (&mut scratch.heaps, &scratch.locked);
        let stamp = &mut self.stamp;
        move_task(sp, side, &mut scratch.gain, v, |u, gu, su| {
            if QUEUE && !locked[u] {
                heaps[su as usize].set(u as u32, queue_key(ncon, gu, stamp));
            }
        });
    }

    /// One pass: queues the boundary, moves the best allowed task until `stall` moves
    /// bring nothing, and rolls back to the best prefix. Returns whether the pass
    /// improved (overload, cost).
    fn pass(&mut self, side: &mut [u8], scratch: &mut BipartScratch, stall: usize) -> bool {
        let (start_viol, start_cost) = (self.viol, self.cost);
        scratch.log.clear();
        self.queue_boundary(side, scratch);
        let (best_viol, best_cost, best_len) = self.moves(side, scratch, stall);
        for s in 0..2 {
            scratch.heaps[s].clear();
        }
        for i in 0..scratch.log.len() {
            let v = scratch.log[i] as usize;
            scratch.locked[v] = false;
        }
        while scratch.log.len() > best_len {
            let v = scratch.log.pop().expect("non-empty log") as usize;
            self.flip::<false>(v, side, scratch);
        }
        self.viol = best_viol;
        debug_assert_eq!(self.cost, best_cost);
        debug_assert_eq!(self.cost, self.sp.cost(side) as i64);
        (best_viol, best_cost) < (start_viol, start_cost)
    }

    /// Queues every unlocked boundary task (a neighbour on the other side or unequal
    /// external costs) on its side's heap.
    fn queue_boundary(&mut self, side: &[u8], scratch: &mut BipartScratch) {
        let (sp, ncon) = (self.sp, self.ncon);
        for v in 0..sp.n() {
            if scratch.locked[v] {
                continue;
            }
            // Equal external costs: the gain is -wdeg exactly when no neighbour is on
            // the other side (each such edge adds twice its positive weight).
            let across = || {
                sp.adjncy[sp.xadj[v]..sp.xadj[v + 1]]
                    .iter()
                    .any(|&u| side[u as usize] != side[v])
            };
            debug_assert!(
                !scratch.wdeg_exact
                    || sp.ext[0][v] != sp.ext[1][v]
                    || (scratch.gain[v] != -scratch.wdeg[v]) == across(),
                "the boundary told from the gain"
            );
            let boundary = sp.ext[0][v] != sp.ext[1][v]
                || if scratch.wdeg_exact {
                    scratch.gain[v] != -scratch.wdeg[v]
                } else {
                    across()
                };
            if boundary {
                let key = queue_key(ncon, scratch.gain[v], &mut self.stamp);
                if ncon == 1 {
                    scratch.fill[side[v] as usize].push((v as u32, key));
                } else {
                    scratch.heaps[side[v] as usize].set(v as u32, key);
                }
            }
        }
        // LIFO keys are distinct (until the 24-bit stamp wraps, after 16.7M queue
        // operations), so a bottom-up build pops in the order the sets would.
        for s in 0..2 {
            if !scratch.fill[s].is_empty() {
                scratch.heaps[s].build(scratch.fill[s].drain(..));
            }
        }
    }

    /// The moves of a pass, logged in `scratch.log`, until no move is allowed or `stall`
    /// moves in a row bring nothing. Returns the best (violation, cost) seen and the
    /// length of the log when it was reached.
    fn moves(
        &mut self,
        side: &mut [u8],
        scratch: &mut BipartScratch,
        stall: usize,
    ) -> (u64, i64, usize) {
        let (mut best_viol, mut best_cost, mut best_len) = (self.viol, self.cost, 0usize);
        let mut since = 0usize;
        while let Some((v, _, nv)) = self.pick(scratch) {
            scratch.heaps[side[v] as usize].remove(v as u32);
            scratch.locked[v] = true;
            scratch.log.push(v as u32);
            self.flip::<true>(v, side, scratch);
            self.viol = nv;
            for i in 0..scratch.deferred.len() {
                let u = scratch.deferred[i] as usize;
                let key = queue_key(self.ncon, scratch.gain[u], &mut self.stamp);
                scratch.heaps[side[u] as usize].set(u as u32, key);
            }
            if (self.viol, self.cost) < (best_viol, best_cost) {
                best_viol = self.viol;
                best_cost = self.cost;
                best_len = scratch.log.len();
                since = 0;
            } else {
                since += 1;
                if since >= stall {
                    break;
                }
            }
        }
        (best_viol, best_cost, best_len)
    }

    /// The best allowed move among the two queue tops: (task, gain, violation after).
    /// Blocked tasks set aside on the way are left in `scratch.deferred`.
    #[inline]
    fn pick(&self, scratch: &mut BipartScratch) -> Option<(usize, i64, u64)> {
        let mut pick: Option<(usize, i64, u64)> = None;
        scratch.deferred.clear();
        for s in 0..2 {
            // A blocked top stays queued (dropping blocked tasks would drain the
            // queues under tight bounds): the next move from the other side may unblock
            // it. While a bound is exceeded, a few blocked tasks are set aside (and
            // queued again after the move) to find one whose move repairs the balance.
            let mut skipped = if self.viol > 0 { 0 } else { FM_DEFER };
            while let Some((v, g)) = scratch.heaps[s].peek() {
                let nv = self.viol_after(v as usize, s);
                if nv == 0 || nv < self.viol {
                    if pick.map(|p| g > p.1).unwrap_or(true) {
                        pick = Some((v as usize, g, nv));
                    }
                    break;
                }
                if skipped == FM_DEFER {
                    break;
                }
                skipped += 1;
                scratch.heaps[s].remove(v);
                scratch.deferred.push(v);
            }
        }
        pick
    }
}
