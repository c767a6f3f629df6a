//! Greedy Task-Wise Placement (GTWP), Algorithm 1 of Berger, Galea, Le Cun & Sirdey, "Fast
//! generation of large task network mappings", IPDPSW 2014, and an improved variant.
//!
//! Tasks are placed one at a time. The distance affinity of an unplaced task `t` to PE `n` is
//! `β_tn = Σ_{t' placed on n'} q_tt' / (2·d(n, n') + 1)`.
//!
//! **`gtwp`** (the paper, literally): the task with the largest sum of edge weights goes to
//! PE 0 and its neighbours enter a FIFO queue Q; then the task of Q with the highest
//! affinity `max_n β_tn` goes to its best PE `n` if it fits there, its unplaced neighbours
//! entering Q. Otherwise `n` is saturated: the tasks of Q that prefer it leave Q, and each
//! neighbour PE of `n` with room receives the next unplaced task of a breadth-first order
//! from the first task (`Q_BFT`). When Q runs empty, which the paper leaves open, the next
//! `Q_BFT` task goes to its best PE among those it fits on. Which PEs the best PE ranges
//! over once some are saturated is open too (parameter `saturated`): `drop` (default), a
//! PE found saturated leaves the choice for good, as the paper's prose tells it (near the
//! published values); `keep`, all PEs, saturated or not (the frontier fragments, about
//! twice the published values). With several resources a PE is "saturated" for a task
//! when the task does not fit on it.
//!
//! **`gtwp-fit`** (ours): the best PE of a task ranges over the PEs it still fits on; when
//! a task's best PE fills up, its best fitting PE is recomputed and it goes back into the
//! priority queue. No jumps through the BFT order.
//!
//! Implementation: affinities are kept sparse per task (the PEs holding its placed
//! neighbours, in a slab laid out like the CSR, nothing allocated per edge) and updated in
//! O(h) when a neighbour is placed (h = PEs holding its placed neighbours); `max_n β_tn`
//! over all PEs is exact, but bounds on the PEs holding no neighbour spare most scans of
//! all k PEs. Q is a binary heap with lazy deletion; saturated PEs drain per-PE buckets of
//! the tasks that prefer them. Ties, the bounds and the measurements: `docs/berger.md`,
//! "GTWP step by step" and "Speed".
//!
//! Complexity: O((n + m)·h + m log m) plus O(k·h) per full scan and O(k²) for the distance
//! table.

use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};
use taskmap_arch::PeId;
use taskmap_graph::TaskGraph;

use crate::error::Error;
use crate::mapper::{Mapper, RunContext};
use crate::mappers::berger::common::{bft_order, check_pes, weighted_degree, BergerDist, Loads};
use crate::mapping::Mapping;
use crate::problem::Problem;
use crate::registry::{ParamDoc, Params};

const UNPLACED: u32 = u32::MAX;
const NO_LINK: u32 = u32::MAX;

/// Affinities are compared after rounding to multiples of 2^-32, so that values equal up
/// to floating-point rounding tie (and ties follow the paper's rules). Affinities of 2^32
/// and above all get the largest key.
#[inline]
pub fn affinity_key(x: f64) -> u64 {
    (x * 4_294_967_296.0 + 0.5) as u64
}

/// [`quick_bound`] holds for sums of fewer terms than this.
const QUICK_BOUND_TERMS: usize = 4096;

/// An upper bound, without a division per term, on `Σ_j q_j / (2·dmin_j + 1)` summed in
/// floating point over fewer than [`QUICK_BOUND_TERMS`] hosting PEs `j`, from
/// `qsum = Σ_j q_j`: each term is at most `q_j / min_p (2·dmin_p + 1)`, and the rounding
/// of the sum (one part in 2^53 per operation) and of this product stays below the
/// one part in 2^40 it is raised by.
#[inline]
fn quick_bound(qsum: u64, dist: &BergerDist<'_>) -> f64 {
    qsum as f64 * dist.inv_min_denominator() * (1.0 + 1.0 / (1u64 << 40) as f64)
}

/// `Σ_j q_j / d_j` over the hosting PEs `j` in slot order, `d_j` the `j`-th bound
/// denominator of [`BergerDist::bound_denominators`] (`which` 0 or 1): a bound on the
/// affinity of every PE that holds no neighbour (0) or that is no neighbour of one (1).
fn host_bound(hosts: &[HostSlot], dist: &BergerDist<'_>, which: usize) -> f64 {
    hosts
        .iter()
        .map(|sl| sl.q as f64 / dist.bound_denominators(sl.pe)[which])
        .sum()
}

/// The best PE so far as `(key, PE, affinity)`.
type Best = Option<(u64, u32, f64)>;

/// Offers PE `pe` of affinity `v` to `best`: it wins with a higher key, or the same key
/// and a lower id.
#[inline]
fn offer(best: &mut Best, pe: u32, v: f64) {
    let key = affinity_key(v);
    if best.is_none_or(|(bk, bp, _)| key > bk || (key == bk && pe < bp)) {
        *best = Some((key, pe, v));
    }
}

/// The GTWP mapper, the paper's Algorithm 1 (`gtwp`), and its parameters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GtwpMapper {
    /// The reading of the saturated nodes.
    pub saturated: Saturated,
}

/// What GTWP does with a PE found saturated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Saturated {
    /// It leaves every task's best-PE choice for good (the default).
    #[default]
    Drop,
    /// It stays a candidate (the T2NA matrix over all nodes).
    Keep,
}

impl Params for GtwpMapper {
    const DOCS: &'static [ParamDoc] = &[ParamDoc {
        name: "saturated",
        aliases: &[],
        doc: "drop: a PE found saturated leaves the best-PE choice; keep: it stays a candidate",
    }];
}

impl Mapper for GtwpMapper {
    fn name(&self) -> &'static str {
        "gtwp"
    }

    fn map(&self, problem: &Problem, ctx: &mut RunContext) -> Result<Mapping, Error> {
        problem.check()?;
        let keep = self.saturated == Saturated::Keep;
        let pes = ctx.timed("gtwp", |_| gtwp(problem, false, keep))?;
        Ok(Mapping::new(pes.into_iter().map(PeId).collect()))
    }
}

/// GTWP choosing the best PE among those the task fits on, no BFT jumps (`gtwp-fit`,
/// ours). No parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GtwpFitMapper {}

impl Params for GtwpFitMapper {
    const DOCS: &'static [ParamDoc] = &[];
}

impl Mapper for GtwpFitMapper {
    fn name(&self) -> &'static str {
        "gtwp-fit"
    }

    fn map(&self, problem: &Problem, ctx: &mut RunContext) -> Result<Mapping, Error> {
        problem.check()?;
        let pes = ctx.timed("gtwp", |_| gtwp(problem, true, false))?;
        Ok(Mapping::new(pes.into_iter().map(PeId).collect()))
    }
}

/// A PE holding placed neighbours of a task: the bandwidth `q` to them and the task's
/// affinity `beta` to that PE (together, so an update touches one cache line).
#[derive(Clone, Copy, Debug, Default)]
struct HostSlot {
    beta: f64,
    q: u64,
    pe: u32,
}

/// A task's best PE, that PE's affinity and its key, and its number of hosting PEs
/// (together, as every update reads them all).
#[derive(Clone, Copy, Debug, Default)]
struct TaskAff {
    best_val: f64,
    best_key: u64,
    cnt: u32,
    best_pe: u32,
}

/// Sparse distance affinities `β_tn` of every task to every PE, kept up to date as
/// neighbours are placed (see the module documentation).
#[derive(Clone, Debug)]
pub struct DistanceAffinities {
    off: Vec<usize>,
    /// Per task: its best PE, that PE's affinity, and its number of hosting PEs.
    task: Vec<TaskAff>,
    /// Per task, `deg(t)` slots laid out like the CSR; the first `task[t].cnt` are used.
    slot: Vec<HostSlot>,
    /// PEs left out of the best PE of a task (`gtwp,saturated=drop`: the saturated ones).
    excluded: Vec<bool>,
}

impl DistanceAffinities {
    /// All affinities zero; room for `deg(t)` PEs per task.
    pub fn new(g: &TaskGraph) -> Self {
        let n = g.num_tasks();
        let (xadj, _, _, _) = g.csr();
        let slots = xadj[n];
        Self {
            off: xadj.to_vec(),
            task: vec![TaskAff::default(); n],
            slot: vec![HostSlot::default(); slots],
            excluded: Vec::new(),
        }
    }

    /// A neighbour of `t` with bandwidth `q` has been placed on `pe`: updates `β_t·` and the
    /// best PE of `t` (over all PEs). Returns whether the best PE changed.
    #[inline]
    pub fn add(&mut self, t: u32, pe: u32, q: u64, dist: &BergerDist<'_>) -> bool {
        let ti = t as usize;
        if self.task[ti].cnt == 0
            && q > 0
            && q < 1 << 32
            && (self.excluded.is_empty() || !self.excluded[pe as usize])
            && dist.bound_denominators(pe)[0] >= 3.0
        {
            // The first hosting PE: β = q there, and at most q/3 on every other PE (all at
            // distance 1 or more): it is the best PE, as `add_general` finds with a
            // division (below 2^32 the keys of q and q/3 differ).
            self.slot[self.off[ti]] = HostSlot {
                beta: q as f64,
                q,
                pe,
            };
            let ta = &mut self.task[ti];
            let old = ta.best_pe;
            *ta = TaskAff {
                best_val: q as f64,
                // The key of q (below 2^32): q·2^32 + 0.5 rounds to a value below
                // q·2^32 + 1 (to q·2^32 itself from 2^21 on), which the cast truncates.
                best_key: q << 32,
                cnt: 1,
                best_pe: pe,
            };
            return old != pe;
        }
        self.add_general(t, pe, q, dist)
    }

    /// [`Self::add`] in every case.
    fn add_general(&mut self, t: u32, pe: u32, q: u64, dist: &BergerDist<'_>) -> bool {
        let ti = t as usize;
        let o = self.off[ti];
        let c = self.task[ti].cnt as usize;
        let w = q as f64;
        let excluded = &self.excluded;
        let allowed = |p: u32| excluded.is_empty() || !excluded[p as usize];
        // One pass over the hosting PEs: update their affinities, and find the best of
        // them and the bound on every other PE (the first step of `best_where`).
        let mut found = false;
        let mut new_beta = w;
        let mut best: Best = None;
        // Σ q over the hosting PEs, for a bound on every other PE without a division each.
        let mut qsum = Some(0u64);
        let consider = |best: &mut Best, h: u32, v: f64| {
            if allowed(h) {
                offer(best, h, v);
            }
        };
        for sl in &mut self.slot[o..o + c] {
            let h = sl.pe;
            let aw = dist.affinity_weight(h, pe);
            sl.beta += w * aw;
            if h == pe {
                sl.q += q;
                found = true;
            } else {
                new_beta += sl.q as f64 * aw;
            }
            qsum = qsum.and_then(|s| s.checked_add(sl.q));
            consider(&mut best, h, sl.beta);
        }
        if !found {
            debug_assert!(o + c < self.off[ti + 1], "more hosting PEs than neighbours");
            self.slot[o + c] = HostSlot {
                beta: new_beta,
                q,
                pe,
            };
            self.task[ti].cnt += 1;
            qsum = qsum.and_then(|s| s.checked_add(q));
            consider(&mut best, pe, new_beta);
        }
        let old = self.task[ti].best_pe;
        // The best hosting PE wins when its key beats that of the bound on the other PEs,
        // Σ_j q_j / (2·dmin_j + 1) summed in slot order (as `best_where` does); a key
        // beating `quick_bound` beats it, and the sum is then not needed.
        let n_hosts = self.task[ti].cnt as usize;
        let beats = |bk: u64| {
            (n_hosts < QUICK_BOUND_TERMS
                && qsum.is_some_and(|s| bk > affinity_key(quick_bound(s, dist))))
                || bk > affinity_key(host_bound(&self.slot[o..o + n_hosts], dist, 0))
        };
        match best {
            Some((bk, p, v)) if beats(bk) => {
                let ta = &mut self.task[ti];
                ta.best_pe = p;
                ta.best_val = v;
                ta.best_key = bk;
            }
            _ => self.recompute_best(t, dist),
        }
        old != self.task[ti].best_pe
    }

    fn recompute_best(&mut self, t: u32, dist: &BergerDist<'_>) {
        let excluded = &self.excluded;
        let (pe, val) = if excluded.is_empty() {
            self.best_where(t, dist, |_| true)
        } else {
            self.best_where(t, dist, |p| !excluded[p as usize])
        }
        .unwrap_or((0, 0.0));
        let ta = &mut self.task[t as usize];
        ta.best_pe = pe;
        ta.best_val = val;
        ta.best_key = affinity_key(val);
    }

    /// `β_t,pe` computed from the sparse list (O(h)).
    pub fn value(&self, t: u32, pe: u32, dist: &BergerDist<'_>) -> f64 {
        let t = t as usize;
        let o = self.off[t];
        (o..o + self.task[t].cnt as usize)
            .map(|i| self.slot[i].q as f64 * dist.affinity_weight(self.slot[i].pe, pe))
            .sum()
    }

    /// The best PE among those accepted by `ok`, by a scan: the PEs holding neighbours first,
    /// all PEs only when one of the others could still win. Ties: lowest id.
    pub fn best_where(
        &self,
        t: u32,
        dist: &BergerDist<'_>,
        ok: impl Fn(u32) -> bool,
    ) -> Option<(u32, f64)> {
        let ti = t as usize;
        let o = self.off[ti];
        let c = self.task[ti].cnt as usize;
        if c == 0 {
            // No placed neighbour: every affinity is 0, the lowest id wins.
            return (0..dist.k()).find(|&p| ok(p)).map(|p| (p, 0.0));
        }
        let hosts = &self.slot[o..o + c];
        let mut best: Best = None;
        for sl in hosts {
            if ok(sl.pe) {
                offer(&mut best, sl.pe, sl.beta);
            }
        }
        // A PE holding no neighbour is farther than its minimum distance from every PE
        // that does: β ≤ Σ_j Q_j / (2·dmin_j + 1); and a PE that is not a neighbour of one
        // either is at least dmin_j + 1 away.
        let bound1 = host_bound(hosts, dist, 0);
        if let Some((bk, _, _)) = best {
            if bk > affinity_key(bound1) {
                return best.map(|(_, p, v)| (p, v));
            }
        }
        // The neighbours of the hosting PEs.
        for h in hosts {
            for &pe in dist.neighbours(h.pe) {
                if !hosts.iter().any(|x| x.pe == pe) && ok(pe) {
                    offer(&mut best, pe, self.value(t, pe, dist));
                }
            }
        }
        let bound2 = host_bound(hosts, dist, 1);
        if let Some((bk, _, _)) = best {
            if bk > affinity_key(bound2) {
                return best.map(|(_, p, v)| (p, v));
            }
        }
        let mut best: Best = None;
        for pe in 0..dist.k() {
            if ok(pe) {
                offer(&mut best, pe, self.value(t, pe, dist));
            }
        }
        best.map(|(_, pe, v)| (pe, v))
    }

    /// Leaves `pe` (of `k` PEs) out of the best PE of every task from now on (the best PEs
    /// already stored change when the task's affinities next do).
    pub fn exclude(&mut self, k: u32, pe: u32) {
        if self.excluded.is_empty() {
            self.excluded = vec![false; k as usize];
        }
        self.excluded[pe as usize] = true;
    }

    /// The best PE over all PEs not excluded and its affinity.
    #[inline]
    pub fn best(&self, t: u32) -> (u32, f64) {
        (
            self.task[t as usize].best_pe,
            self.task[t as usize].best_val,
        )
    }

    /// The key ([`affinity_key`]) of the affinity of [`Self::best`].
    #[inline]
    pub fn best_key(&self, t: u32) -> u64 {
        self.task[t as usize].best_key
    }

    /// The stored `β_t,pe` for a PE holding a neighbour of `t`, `None` for other PEs.
    pub fn stored(&self, t: u32, pe: u32) -> Option<f64> {
        let t = t as usize;
        let o = self.off[t];
        (o..o + self.task[t].cnt as usize)
            .find(|&i| self.slot[i].pe == pe)
            .map(|i| self.slot[i].beta)
    }
}

/// `β_tn` for every PE `n`, recomputed from scratch from a partial mapping (`UNPLACED` =
/// `u32::MAX` for unplaced tasks). The reference for tests of [`DistanceAffinities`].
pub fn naive_affinities(g: &TaskGraph, dist: &BergerDist<'_>, pe_of: &[u32], t: u32) -> Vec<f64> {
    let k = dist.k();
    let mut beta = vec![0.0; k as usize];
    for (&u, &q) in g.neighbors(t).iter().zip(g.edge_weights(t)) {
        let p = pe_of[u as usize];
        if p == UNPLACED {
            continue;
        }
        for n in 0..k {
            beta[n as usize] += q as f64 / (2.0 * dist.get(n, p) as f64 + 1.0);
        }
    }
    beta
}

/// A max-heap with a buffer of the entries pushed since the last pop: a pop takes the
/// largest of the buffer when it beats the heap's top (that entry never enters the heap),
/// else it swaps the top for one buffered entry; the rest of the buffer is then pushed.
/// Pops return what a plain heap of all entries would, in the same order.
#[derive(Debug)]
struct BufferedHeap<T> {
    heap: BinaryHeap<T>,
    pending: Vec<T>,
}

impl<T: Ord + Copy> BufferedHeap<T> {
    fn with_capacity(capacity: usize) -> Self {
        Self {
            heap: BinaryHeap::with_capacity(capacity),
            pending: Vec::new(),
        }
    }

    #[inline]
    fn push(&mut self, e: T) {
        self.pending.push(e);
    }

    fn pop(&mut self) -> Option<T> {
        let Some(i) = (0..self.pending.len()).max_by_key(|&i| self.pending[i]) else {
            return self.heap.pop();
        };
        let e = self.pending.swap_remove(i);
        let out = match self.heap.peek_mut() {
            Some(mut top) if *top > e => std::mem::replace(&mut *top, e),
            _ => e,
        };
        for &p in &self.pending {
            self.heap.push(p);
        }
        self.pending.clear();
        Some(out)
    }

    fn len(&self) -> usize {
        self.heap.len() + self.pending.len()
    }

    /// Keeps only the entries accepted by `keep`.
    fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.pending.retain(&mut keep);
        self.heap.retain(keep);
    }
}

/// Q's heap, with lazy deletion. An entry is `affinity_key << s | (2^s - 1 - seq)`, compared
/// as one integer: highest affinity first, then FIFO rank (the lowest `seq`). Entries take
/// 8 bytes when the largest key and rank fit together (`s` bits for the rank), else 16
/// (`s = 64`); both order the same. The task is `seq_task[seq]` and its PE the one of its
/// latest push.
enum QHeap {
    Narrow(BufferedHeap<u64>, u32),
    Wide(BufferedHeap<u128>),
}

impl QHeap {
    /// A heap for keys up to `max_key` and ranks up to `max_seq`.
    fn new(capacity: usize, max_key: u64, max_seq: u64) -> Self {
        let s = 64 - max_seq.leading_zeros();
        if (64 - max_key.leading_zeros()) + s <= 64 {
            QHeap::Narrow(BufferedHeap::with_capacity(capacity), s)
        } else {
            QHeap::Wide(BufferedHeap::with_capacity(capacity))
        }
    }

    #[inline]
    fn push(&mut self, key: u64, seq: u64) {
        match self {
            QHeap::Narrow(h, s) => {
                let mask = (1u64 << *s) - 1;
                h.push(key << *s | (mask - seq));
            }
            QHeap::Wide(h) => h.push(u128::from(key) << 64 | u128::from(!seq)),
        }
    }

    /// Number of entries.
    fn len(&self) -> usize {
        match self {
            QHeap::Narrow(h, _) => h.len(),
            QHeap::Wide(h) => h.len(),
        }
    }

    /// Keeps only the entries whose (key, rank) is accepted by `keep`.
    fn retain(&mut self, keep: impl Fn(u64, u64) -> bool) {
        match self {
            QHeap::Narrow(h, s) => {
                let s = *s;
                h.retain(|&e| {
                    let (key, seq) = narrow_entry(e, s);
                    keep(key, seq)
                });
            }
            QHeap::Wide(h) => h.retain(|&e| {
                let (key, seq) = wide_entry(e);
                keep(key, seq)
            }),
        }
    }

    /// The entry of highest priority: its key and rank.
    #[inline]
    fn pop(&mut self) -> Option<(u64, u64)> {
        match self {
            QHeap::Narrow(h, s) => h.pop().map(|e| narrow_entry(e, *s)),
            QHeap::Wide(h) => h.pop().map(wide_entry),
        }
    }
}

/// The (key, rank) of an 8-byte entry with `s` bits of rank.
#[inline]
fn narrow_entry(e: u64, s: u32) -> (u64, u64) {
    let mask = (1u64 << s) - 1;
    (e >> s, mask - (e & mask))
}

/// The (key, rank) of a 16-byte entry.
#[inline]
fn wide_entry(e: u128) -> (u64, u64) {
    ((e >> 64) as u64, !(e as u64))
}

/// Whether the entry (key `k`, rank `sq`) is current: its task is in Q with that rank and
/// key (see [`State`]). Returns the task.
#[inline]
fn current_task(
    in_q: &[bool],
    seq: &[u64],
    key: &[u64],
    seq_task: &[u32],
    k: u64,
    sq: u64,
) -> Option<u32> {
    let t = seq_task[sq as usize];
    let ti = t as usize;
    (in_q[ti] && seq[ti] == sq && key[ti] == k).then_some(t)
}

struct State<'a> {
    g: &'a TaskGraph,
    dist: BergerDist<'a>,
    loads: Loads,
    aff: DistanceAffinities,
    pe_of: Vec<u32>,
    in_q: Vec<bool>,
    /// Number of tasks in Q.
    in_q_count: usize,
    seq: Vec<u64>,
    /// The task that entered Q with each rank.
    seq_task: Vec<u32>,
    /// Per task: the key and the PE of its latest push. An entry is current when its task
    /// is in Q with the entry's rank and key (an older entry with the same rank and key
    /// stands for the same priority, and its PE is read here).
    key: Vec<u64>,
    queued_pe: Vec<u32>,
    heap: QHeap,
    /// Per PE, the tasks that had it as best PE when they were pushed: a linked list
    /// through `link` (head `NO_LINK`), one slab for all PEs.
    bucket_head: Vec<u32>,
    /// `(task, next)` entries of the buckets; at most one per edge.
    link: Vec<(u32, u32)>,
    placed: usize,
}

impl State<'_> {
    /// Enters `t` into Q's heap with PE `pe` and key `key`.
    fn push(&mut self, t: u32, pe: u32, key: u64) {
        let ti = t as usize;
        self.key[ti] = key;
        self.queued_pe[ti] = pe;
        self.heap.push(key, self.seq[ti]);
    }

    /// Takes the current entry of highest priority out of Q's heap: its task and PE.
    fn pop(&mut self) -> Option<(u32, u32)> {
        // When most entries are stale, dropping them all at once costs less than popping
        // them one by one.
        if self.heap.len() > 2 * self.in_q_count + 16 {
            let (in_q, seq, key, seq_task) = (&self.in_q, &self.seq, &self.key, &self.seq_task);
            self.heap
                .retain(|k, sq| current_task(in_q, seq, key, seq_task, k, sq).is_some());
        }
        while let Some((k, sq)) = self.heap.pop() {
            if let Some(t) = current_task(&self.in_q, &self.seq, &self.key, &self.seq_task, k, sq) {
                return Some((t, self.queued_pe[t as usize]));
            }
        }
        None
    }

    /// Takes `t` out of Q (its entries become stale).
    #[inline]
    fn leave_q(&mut self, t: u32) {
        self.in_q_count -= usize::from(self.in_q[t as usize]);
        self.in_q[t as usize] = false;
    }

    /// Places `v` on `pe`, enqueues its unplaced neighbours and updates their affinities.
    fn place(&mut self, v: u32, pe: u32) {
        let g = self.g;
        self.pe_of[v as usize] = pe;
        self.loads.add(pe, g.vertex_weights(v));
        self.leave_q(v);
        self.placed += 1;
        for (&u, &q) in g.neighbors(v).iter().zip(g.edge_weights(v)) {
            let ui = u as usize;
            if self.pe_of[ui] != UNPLACED {
                continue;
            }
            let changed = self.aff.add(u, pe, q, &self.dist);
            let fresh = !self.in_q[ui];
            if fresh {
                self.in_q[ui] = true;
                self.in_q_count += 1;
                self.seq[ui] = self.seq_task.len() as u64;
                self.seq_task.push(u);
            }
            let bp = self.aff.best(u).0;
            if fresh || changed {
                let head = &mut self.bucket_head[bp as usize];
                self.link.push((u, *head));
                debug_assert!(self.link.len() <= NO_LINK as usize, "bucket slab full");
                *head = (self.link.len() - 1) as u32;
            }
            self.push(u, bp, self.aff.best_key(u));
        }
    }
}

/// Runs GTWP; returns the PE of every task.
fn gtwp(problem: &Problem, fit_only: bool, keep_saturated: bool) -> Result<Vec<u32>, Error> {
    let alg = if fit_only { "gtwp-fit" } else { "gtwp" };
    let g = &problem.graph;
    let n = g.num_tasks();
    let loads = Loads::new(problem, alg)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    check_pes(problem, alg)?;
    let dist = BergerDist::new(problem.arch.as_ref());
    let k = dist.k();
    // Line 11: the task with the largest sum of adjacent edge weights (ties: lowest id).
    let mut v0 = 0u32;
    let mut best_w = 0u64;
    let unit = !g.has_edge_weights();
    for t in 0..n as u32 {
        let w = if unit {
            g.degree(t) as u64
        } else {
            weighted_degree(g, t)
        };
        if w > best_w {
            best_w = w;
            v0 = t;
        }
    }
    // An affinity is at most the task's weighted degree; a task enters Q at most once per
    // edge.
    let heap = QHeap::new(n, affinity_key(best_w as f64), g.num_edges() as u64);
    let drop_saturated = !fit_only && !keep_saturated;
    let mut s = State {
        g,
        dist,
        loads,
        aff: DistanceAffinities::new(g),
        pe_of: vec![UNPLACED; n],
        in_q: vec![false; n],
        in_q_count: 0,
        seq: vec![0; n],
        seq_task: Vec::with_capacity(n),
        key: vec![0; n],
        queued_pe: vec![0; n],
        heap,
        bucket_head: vec![NO_LINK; k as usize],
        link: Vec::with_capacity(g.num_edges()),
        placed: 0,
    };

    let first = (0..k)
        .find(|&p| s.loads.fits(p, g.vertex_weights(v0)))
        .ok_or_else(|| s.loads.stuck(alg, v0, g.vertex_weights(v0), 0, n))?;
    s.place(v0, first);
    let order = bft_order(g, v0);
    let mut bft_ptr = 0usize;

    while s.placed < n {
        // dequeueTaskWithHighestAffinity(Q), lazily skipping stale entries.
        let Some((v, pe)) = s.pop() else {
            // Q is empty: the next unplaced task of the BFT order, on its best fitting PE.
            while s.pe_of[order[bft_ptr] as usize] != UNPLACED {
                bft_ptr += 1;
            }
            let v = order[bft_ptr];
            let w = g.vertex_weights(v);
            let loads = &s.loads;
            let (pe, _) = s
                .aff
                .best_where(v, &s.dist, |p| loads.fits(p, w))
                .ok_or_else(|| s.loads.stuck(alg, v, w, s.placed, n))?;
            s.place(v, pe);
            continue;
        };
        let w = g.vertex_weights(v);
        if s.loads.fits(pe, w) {
            s.place(v, pe);
            continue;
        }
        if fit_only {
            let loads = &s.loads;
            let (bp, bv) = s
                .aff
                .best_where(v, &s.dist, |p| loads.fits(p, w))
                .ok_or_else(|| s.loads.stuck(alg, v, w, s.placed, n))?;
            s.push(v, bp, affinity_key(bv));
            continue;
        }
        // Lines 23-24: the PE is saturated; every task of Q whose best PE it is leaves Q.
        if drop_saturated {
            s.aff.exclude(k, pe);
        }
        s.leave_q(v);
        let mut e = std::mem::replace(&mut s.bucket_head[pe as usize], NO_LINK);
        while e != NO_LINK {
            let (t, next) = s.link[e as usize];
            if s.in_q[t as usize] && s.aff.best(t).0 == pe {
                s.leave_q(t);
            }
            e = next;
        }
        // Lines 25-32: one task of the BFT order on every neighbour PE with room.
        for i in 0..s.dist.neighbours(pe).len() {
            let nb = s.dist.neighbours(pe)[i];
            while bft_ptr < n && s.pe_of[order[bft_ptr] as usize] != UNPLACED {
                bft_ptr += 1;
            }
            if bft_ptr >= n {
                break;
            }
            let u = order[bft_ptr];
            if s.loads.fits(nb, g.vertex_weights(u)) {
                s.place(u, nb);
            }
        }
    }
    Ok(s.pe_of)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// `quick_bound` is at least the bound summed term by term in floating point, for
    /// small and huge bandwidths, on targets whose smallest distances differ by PE.
    #[test]
    fn quick_bound_bounds_the_exact_sum() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for spec in [
            "torus:6x6",
            "mesh:3x5",
            "tree:2:3:2/1:10:100",
            "tree:4:8:6/1:10:100",
            "wcomplete:1,2,3",
        ] {
            let a = taskmap_arch::parse_arch(spec).unwrap();
            let dist = BergerDist::new(a.as_ref());
            let k = dist.k();
            let mut long_sums = 0;
            for round in 0..2000 {
                // Up to 40 terms, and every 100th round just under `QUICK_BOUND_TERMS`,
                // with bandwidths small enough (below 2^51) that the sum fits in 64 bits.
                let long = round % 100 == 99;
                let (c, top) = if long {
                    let top = [2u64, 1000, 1 << 40, 1 << 51][(round / 100) % 4];
                    (QUICK_BOUND_TERMS - 1, top)
                } else {
                    (
                        1 + round % 40,
                        [2u64, 1000, 1 << 40, u64::MAX / 64][round % 4],
                    )
                };
                let hosts: Vec<(u32, u64)> = (0..c)
                    .map(|_| (rng.gen_range(0..k), rng.gen_range(1..=top)))
                    .collect();
                let exact: f64 = hosts
                    .iter()
                    .map(|&(p, q)| q as f64 / dist.bound_denominators(p)[0])
                    .sum();
                let Some(qsum) = hosts.iter().try_fold(0u64, |s, &(_, q)| s.checked_add(q)) else {
                    continue;
                };
                assert!(quick_bound(qsum, &dist) >= exact, "{spec}: {hosts:?}");
                long_sums += usize::from(long);
            }
            assert_eq!(long_sums, 20, "{spec}: every long sum is checked");
        }
    }

    /// The 8-byte and the 16-byte heaps pop the same (key, rank) sequence, also when the
    /// largest key and rank fill the 64 bits exactly.
    #[test]
    fn narrow_and_wide_heaps_pop_alike() {
        for (seed, key_bits, seq_bits) in
            [(1u64, 35u32, 11u32), (2, 40, 24), (3, 1, 63), (4, 60, 4)]
        {
            let max_key = (1u64 << key_bits) - 1;
            let max_seq = (1u64 << seq_bits) - 1;
            let mut narrow = QHeap::new(0, max_key, max_seq);
            assert!(
                matches!(narrow, QHeap::Narrow(..)),
                "{key_bits} + {seq_bits} bits fit"
            );
            let mut wide = QHeap::Wide(BufferedHeap::with_capacity(0));
            // The reference: a plain heap of (key, reversed rank).
            let mut plain: BinaryHeap<(u64, std::cmp::Reverse<u64>)> = BinaryHeap::new();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut popped = 0;
            for step in 0..3000 {
                if step % 3 == 2 {
                    let a = narrow.pop();
                    assert_eq!(a, wide.pop());
                    assert_eq!(a, plain.pop().map(|(k, r)| (k, r.0)));
                    popped += usize::from(a.is_some());
                } else if step % 97 == 0 {
                    // Dropping entries (odd keys and ranks) keeps the others in order.
                    let keep = |key: u64, seq: u64| (key ^ seq) & 1 == 0;
                    narrow.retain(keep);
                    wide.retain(keep);
                    plain.retain(|&(k, r)| keep(k, r.0));
                    assert_eq!(narrow.len(), plain.len());
                    assert_eq!(wide.len(), plain.len());
                } else {
                    // Extremes and duplicates as well as random values.
                    let key = match step % 7 {
                        0 => max_key,
                        1 => 0,
                        _ => rng.gen_range(0..=max_key.min(50)) * (max_key / 50).max(1),
                    };
                    let seq = if step % 5 == 0 {
                        max_seq
                    } else {
                        rng.gen_range(0..=max_seq)
                    };
                    narrow.push(key, seq);
                    wide.push(key, seq);
                    plain.push((key, std::cmp::Reverse(seq)));
                }
            }
            while let Some(x) = wide.pop() {
                assert_eq!(narrow.pop(), Some(x));
                assert_eq!(plain.pop().map(|(k, r)| (k, r.0)), Some(x));
                popped += 1;
            }
            assert_eq!(narrow.pop(), None);
            assert!(popped > 1000);
        }
        // One bit too many: 16-byte entries.
        assert!(matches!(
            QHeap::new(0, u64::MAX >> 10, 1 << 10),
            QHeap::Wide(..)
        ));
    }
}
