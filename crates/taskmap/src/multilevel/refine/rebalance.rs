//! Rebalancing: tasks moved out of overloaded PEs at the smallest `f_C` increase, to the
//! nearest PEs with room (found lazily, in distance order, per overloaded PE).

use rustc_hash::FxHashMap as KeyMap;

use crate::multilevel::refine::kway::*;

/// Moves tasks out of overloaded PEs, each to the feasible PE that costs least (neighbours'
/// PEs first, then any PE by increasing distance, ties to the lowest id). Returns whether
/// every bound holds.
///
/// The PEs by distance from an overloaded PE `p` are kept only [`REBALANCE_NEAR`] at a
/// time: the nearest of those not yet dead (see `NearPes`). Sorting all
/// `k` PEs for every overloaded PE cost O(k² log k) distance calls on large targets (the
/// 1000x1000 grid onto `torus:128x128` took 440 s with it, 16.8 s without).
pub fn rebalance(state: &mut KwayState<'_>) -> bool {
    rebalance_by(state, &mut NearFinder::default(), None)
}

/// [`rebalance`], and every task it moves appended to `log` with the exact `f_C` change
/// (old − new) of its move.
pub(crate) fn rebalance_logged(state: &mut KwayState<'_>, log: &mut Vec<(u32, i64)>) -> bool {
    rebalance_by(state, &mut NearFinder::default(), Some(log))
}

/// How [`rebalance_by`] finds the nearest PE that can take a task. It asks only for tasks
/// with weight in a constraint their PE exceeds, and the loads change only by its moves
/// of such tasks out of overloaded PEs, each reported through [`NearestFit::moved`].
pub(crate) trait NearestFit {
    /// A round begins: whatever was kept for the last one may be dropped.
    fn start_round(&mut self, state: &KwayState<'_>);
    /// The first PE, by `(distance from p, id)`, other than `p` that can take `v`.
    fn find(&mut self, state: &KwayState<'_>, p: u32, v: u32) -> Option<u32>;
    /// A task moved from `p` to `q`.
    fn moved(&mut self, state: &KwayState<'_>, p: u32, q: u32);
}

/// Tasks per parallel block of [`rebalance_by`]'s search for candidate moves.
const CANDIDATE_BLOCK: usize = 4096;

/// [`rebalance`] with the nearest PEs found by `finder`; with a `log`, the tasks it moves
/// are appended to it with the exact gain of each move.
pub(crate) fn rebalance_by(
    state: &mut KwayState<'_>,
    finder: &mut impl NearestFit,
    mut log: Option<&mut Vec<(u32, i64)>>,
) -> bool {
    let n = state.graph.num_tasks();
    let k = state.dist.k();
    let ncon = state.ncon;
    for _round in 0..4 {
        let over: Vec<u32> = (0..k).filter(|&p| state.overloaded(p)).collect();
        if over.is_empty() {
            return true;
        }
        let mut is_over = vec![false; k as usize];
        for &p in &over {
            is_over[p as usize] = true;
        }
        // Candidate moves of every task on an overloaded PE, best gain first (found in
        // parallel blocks on the state's pool; the order is total, so the same for any
        // thread count).
        let seen: &KwayState<'_> = state;
        let blocks = crate::par::map_blocks(
            state.pool,
            n,
            CANDIDATE_BLOCK,
            || Gains::new(k as usize),
            |gains, range| {
                let mut cands: Vec<(i64, u32, u32)> = Vec::new();
                for v in range.start as u32..range.end as u32 {
                    let p = seen.part[v as usize];
                    if !is_over[p as usize] || !seen.movable(v) {
                        continue;
                    }
                    cands.push(match gains.best_move(seen, v, true) {
                        Some((q, g)) => (g, v, q),
                        None => (i64::MIN, v, u32::MAX),
                    });
                }
                cands
            },
        );
        let mut cands: Vec<(i64, u32, u32)> = blocks.concat();
        cands.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        finder.start_round(state);
        let mut moves = 0usize;
        for &(_, v, q0) in &cands {
            let p = state.part[v as usize];
            if !state.overloaded(p) {
                continue;
            }
            // Only tasks that carry weight in an overloaded constraint help.
            let helps = (0..ncon).any(|c| {
                state.loads[p as usize * ncon + c] > state.bound[p as usize * ncon + c]
                    && state.graph.vertex_weight(v, c) > 0
            });
            if !helps {
                continue;
            }
            let q = if q0 != u32::MAX && state.fits(v, q0) {
                Some(q0)
            } else {
                // Nearest PE that can take v.
                finder.find(state, p, v)
            };
            if let Some(q) = q {
                if let Some(log) = log.as_deref_mut() {
                    log.push((v, state.move_gain(v, q)));
                }
                state.apply(v, q);
                finder.moved(state, p, q);
                moves += 1;
            }
        }
        if moves == 0 {
            break; // nothing changed, so another round would find the same nothing
        }
    }
    state.is_balanced()
}

/// [`rebalance`]'s [`NearestFit`]: a `NearPes` per overloaded PE asked about (a map,
/// not an array of `k`: on a target of millions of PEs few are overloaded), and the
/// largest rooms, built the first time they are needed in a round.
#[derive(Default)]
pub(crate) struct NearFinder {
    pub(crate) near: KeyMap<u32, NearPes>,
    pub(crate) scratch: NearScratch,
}

impl NearestFit for NearFinder {
    fn start_round(&mut self, _: &KwayState<'_>) {
        self.near.clear();
        self.scratch.room = RoomMax::default();
    }

    fn find(&mut self, state: &KwayState<'_>, p: u32, v: u32) -> Option<u32> {
        self.near
            .entry(p)
            .or_default()
            .nearest_fit(state, p, v, &mut self.scratch)
    }

    fn moved(&mut self, state: &KwayState<'_>, p: u32, q: u32) {
        self.scratch.room.update(state, p);
        self.scratch.room.update(state, q);
    }
}

/// How many of the nearest PEs `NearPes` keeps at a time.
pub const REBALANCE_NEAR: usize = 64;

/// The PEs nearest to an overloaded PE `p` during one round of [`rebalance`], by
/// `(distance, id)`, among those still alive: a PE is dead when it has no room in any
/// constraint and is not overloaded. Within a round only overloaded PEs lose load, so a
/// dead PE stays dead and can take no task that helps (one with weight in a constraint
/// `p` exceeds, so a PE with no room there cannot fit it); the first PE of this order that
/// fits a task is therefore the first of the order of all PEs that fits it.
#[derive(Clone, Debug, Default)]
pub(crate) struct NearPes {
    /// Up to [`REBALANCE_NEAR`] alive PEs, nearest first, as `(distance, id)`.
    pub(crate) list: Vec<(u64, u32)>,
    /// Entries before this one are dead.
    pub(crate) cursor: usize,
    /// Whether `list` holds every alive PE other than `p`.
    pub(crate) complete: bool,
}

impl NearPes {
    /// The first PE, by `(distance from p, id)`, that can take `v`.
    fn nearest_fit(
        &mut self,
        state: &KwayState<'_>,
        p: u32,
        v: u32,
        scratch: &mut NearScratch,
    ) -> Option<u32> {
        loop {
            while self
                .list
                .get(self.cursor)
                .is_some_and(|&(_, q)| dead(state, q))
            {
                self.cursor += 1;
            }
            if self.cursor == self.list.len() {
                if self.complete {
                    return None;
                }
                self.refill(state, p, scratch);
                continue;
            }
            if let Some(&(_, q)) = self.list[self.cursor..]
                .iter()
                .find(|&&(_, q)| state.fits(v, q))
            {
                return Some(q);
            }
            // No kept PE fits v (it is heavier than their room): every alive PE, in order,
            // unless no PE has the room v needs in some constraint.
            if self.complete || !scratch.room.may_fit(state, v) {
                return None;
            }
            state.dist.distances_from(p, &mut scratch.row);
            let row = &scratch.row;
            return (0..state.dist.k())
                .filter(|&q| q != p && state.fits(v, q))
                .min_by_key(|&q| (row[q as usize], q));
        }
    }

    /// Keeps the [`REBALANCE_NEAR`] nearest alive PEs other than `p` (gathered in
    /// `scratch`, so each list holds no more than those, and its capacity stays there).
    fn refill(&mut self, state: &KwayState<'_>, p: u32, scratch: &mut NearScratch) {
        state.dist.distances_from(p, &mut scratch.row);
        let (row, buf) = (&scratch.row, &mut scratch.buf);
        buf.clear();
        buf.extend(
            (0..state.dist.k())
                .filter(|&q| q != p && !dead(state, q))
                .map(|q| (row[q as usize], q)),
        );
        self.complete = buf.len() <= REBALANCE_NEAR;
        if !self.complete {
            buf.select_nth_unstable(REBALANCE_NEAR - 1);
            buf.truncate(REBALANCE_NEAR);
        }
        buf.sort_unstable();
        self.list.clear();
        self.list.extend_from_slice(buf);
        self.cursor = 0;
    }
}

/// Scratch space of [`rebalance`]'s searches for a PE (the buffers kept across rounds;
/// the rooms rebuilt every round).
#[derive(Default)]
pub(crate) struct NearScratch {
    /// Space for [`NearPes::refill`].
    pub(crate) buf: Vec<(u64, u32)>,
    /// A row of distances.
    pub(crate) row: Vec<u64>,
    pub(crate) room: RoomMax,
}

/// The largest room `bound − load` of any PE in every constraint, kept exactly through
/// lazy max-heaps (an entry is current when it still equals the PE's room): a task heavier
/// in some constraint than every PE's room there fits nowhere, which saves a scan of all
/// PEs per such task.
#[derive(Default)]
pub(crate) struct RoomMax {
    /// Empty until the first [`RoomMax::may_fit`] builds them (O(k)).
    pub(crate) heaps: Vec<std::collections::BinaryHeap<(i128, u32)>>,
}

impl RoomMax {
    /// Records the rooms of `q` after a move (nothing before the heaps are built: they
    /// will be built from the rooms of then).
    fn update(&mut self, state: &KwayState<'_>, q: u32) {
        for (c, h) in self.heaps.iter_mut().enumerate() {
            h.push((room(state, q, c), q));
        }
    }

    /// Whether every constraint has a PE with the room `v` needs there.
    fn may_fit(&mut self, state: &KwayState<'_>, v: u32) -> bool {
        if self.heaps.is_empty() {
            let k = state.dist.k();
            self.heaps = (0..state.ncon)
                .map(|c| (0..k).map(|q| (room(state, q, c), q)).collect())
                .collect();
        }
        for (c, h) in self.heaps.iter_mut().enumerate() {
            while let Some(&(r, q)) = h.peek() {
                if r == room(state, q, c) {
                    break;
                }
                h.pop();
            }
            let w = state.graph.vertex_weight(v, c);
            if w > 0 && h.peek().is_none_or(|&(r, _)| r < i128::from(w)) {
                return false;
            }
        }
        true
    }
}

/// `bound − load` of `q` in constraint `c`.
#[inline]
pub(crate) fn room(state: &KwayState<'_>, q: u32, c: usize) -> i128 {
    let i = q as usize * state.ncon + c;
    i128::from(state.bound[i]) - i128::from(state.loads[i])
}

/// Whether `q` has no room in any constraint and is not overloaded (see `NearPes`).
#[inline]
pub(crate) fn dead(state: &KwayState<'_>, q: u32) -> bool {
    let base = q as usize * state.ncon;
    (0..state.ncon).all(|c| state.loads[base + c] == state.bound[base + c])
}
