//! K-way refinement that minimises `f_C = Σ_e w(e)·dist(τ(u), τ(v))` directly.
//!
//! The gain of moving task `v` from PE `p` to PE `q` is
//! `Σ_{u∈N(v)} w(uv)·(dist(p, τu) − dist(q, τu))`. It is computed by first summing the
//! edge weights of `v` per neighbouring PE into a scratch array indexed by PE (`conn`), so a
//! gain costs O(deg(v) + t²) where `t` is the number of distinct neighbouring PEs. The
//! candidate targets of `v` are the PEs of its neighbours.
//!
//! Four passes, each of which never increases `f_C` and never breaks a load bound (Jet,
//! [`super::jet`], is the parallel alternative to FM):
//! * **label propagation**: visit tasks, move each to its best feasible PE when the gain is
//!   positive (or zero and the move evens the loads out); later rounds visit only tasks
//!   next to a moved task. O(m) per round.
//! * **FM with rollback**: a global priority queue of boundary tasks keyed by their best
//!   feasible gain; pop, move, lock, update the neighbours; negative moves are allowed to
//!   climb out of local minima; after `fm_stall` moves without a new best the pass stops and
//!   rolls back to the best prefix. O((n + m)·log n) per pass (Fiduccia & Mattheyses 1982,
//!   k-way form as in Sanders & Schulz, KaFFPa, 2011). It runs on every level by default
//!   (`fm_max_tasks` can skip large ones): label propagation moves only with a positive
//!   gain into PEs with room, and stops where the loads sit at their bounds and a boundary
//!   only improves after a run of zero-gain moves, which FM makes (100x100x100 grid onto
//!   `torus:8x8x8`, one run before the coarse tries and flow refinement: 374,368 after label
//!   propagation on the finest level, 321,189 after three FM passes of about 0.4 s each).
//! * **swaps** of two adjacent tasks on different PEs, for cases where every PE is full (one
//!   task per PE): gain `g_v(p→q) + g_u(q→p) − 2·w(uv)·dist(p, q)`.
//! * **pairwise rounds** ([`super::pairs`]): the tasks of two PEs near their frontier
//!   re-split by the bipartitioner's FM and flow, kept when cheaper and within the
//!   bounds (pairs with a PE over a bound are skipped).
//!
//! On dense graphs (at least [`GAIN_CACHE_MIN_DEGREE`] adjacency entries per task on
//! average) FM keeps a [`GainCache`]: each task's neighbouring PEs with their weights and
//! candidate costs, updated in O(t) when a neighbour moves, so the `deg` gains recomputed
//! after a move cost O(t) each instead of O(deg + t²).
//!
//! [`rebalance`](super::rebalance::rebalance) moves tasks out of overloaded PEs at the smallest `f_C` increase.

use rand::Rng;
use taskmap_graph::TaskGraph;

use super::pairs::PairPass;
use super::pipeline::{RefineScratch, Refiner};
use crate::multilevel::coarsen::{local_random_order, local_shuffle};
use crate::multilevel::dist::DistTable;
use crate::multilevel::pq::{clamp_gain, key_gain, lifo_key, IndexedHeap};
use crate::multilevel::refine::gain_cache::*;

/// Tasks per parallel block of [`KwayState::comm_cost`].
const COST_BLOCK: usize = 16384;

/// A mapping under refinement: PE per task, loads per PE and constraint, and the scratch
/// space the gain computations use.
#[derive(Debug)]
pub struct KwayState<'a> {
    /// The task graph (read-only after [`KwayState::new`], which derives the unit-weight
    /// fast path from it).
    pub graph: &'a TaskGraph,
    /// The distances.
    pub dist: &'a DistTable<'a>,
    /// Load bounds, `bound[pe * ncon + c]`.
    pub bound: &'a [u64],
    /// PE of every task.
    pub part: Vec<u32>,
    /// Loads, `loads[pe * ncon + c]`.
    pub loads: Vec<u64>,
    pub(crate) ncon: usize,
    /// Every edge weighs 1: [`KwayState::gather`] need not read the weights (on large
    /// graphs, half of its time went to that array's cache misses).
    pub(crate) unit_edges: bool,
    /// The scratch of the gains computed on this thread.
    pub(crate) gains: Gains,
    /// The threads of the parallel passes (`None`: the caller's thread).
    pub(crate) pool: Option<&'a rayon::ThreadPool>,
    /// PE of every task, [`crate::problem::FREE`] for a task that may move; empty when no
    /// task is fixed. Fixed tasks never move.
    pub(crate) fixed: &'a [u32],
}

impl<'a> KwayState<'a> {
    /// A state for `part` (one PE per task); computes the loads. O(n·ncon + k).
    pub fn new(
        graph: &'a TaskGraph,
        dist: &'a DistTable<'a>,
        bound: &'a [u64],
        part: Vec<u32>,
    ) -> Self {
        let k = dist.k() as usize;
        let ncon = graph.ncon();
        assert_eq!(part.len(), graph.num_tasks());
        assert_eq!(bound.len(), k * ncon);
        let mut st = Self {
            graph,
            dist,
            bound,
            part: Vec::new(),
            loads: vec![0u64; k * ncon],
            ncon,
            unit_edges: !graph.has_edge_weights(),
            gains: Gains::new(k),
            pool: None,
            fixed: &[],
        };
        st.reset_to(part);
        st
    }

    /// Pins tasks: `fixed[v]` is the PE task `v` must stay on, or
    /// [`crate::problem::FREE`]. The refiners and [`rebalance`](super::rebalance::rebalance) never move a pinned task.
    pub fn with_fixed(mut self, fixed: &'a [u32]) -> Self {
        assert!(fixed.is_empty() || fixed.len() == self.part.len());
        self.fixed = fixed;
        self
    }

    /// Runs the parallel passes (label propagation, Jet, the pairwise rounds, rebalancing's
    /// search and [`KwayState::comm_cost`]) on `pool`: the same thread count gives the
    /// same mapping (only label propagation's windows depend on it).
    pub fn with_pool(mut self, pool: Option<&'a rayon::ThreadPool>) -> Self {
        self.pool = pool;
        self
    }

    /// Whether moving `v` to `q` with gain `g` is worth it in label propagation: a
    /// positive gain, or none and a move that evens the loads out (constraint 0).
    fn worth(&self, v: u32, q: u32, g: i64) -> bool {
        let p = self.part[v as usize];
        let w0 = self.graph.vertex_weight(v, 0);
        g > 0
            || (g == 0
                && w0 > 0
                && self.loads[q as usize * self.ncon] + w0 < self.loads[p as usize * self.ncon])
    }

    /// Whether `v` may move.
    #[inline]
    pub fn movable(&self, v: u32) -> bool {
        self.fixed.is_empty() || self.fixed[v as usize] == crate::problem::FREE
    }

    /// The `f_C` change (old − new) of moving `v` to `q`. O(deg(v) + t).
    pub fn move_gain(&mut self, v: u32, q: u32) -> i64 {
        let mut g = std::mem::take(&mut self.gains);
        let gain = g.move_gain(self, v, q);
        self.gains = g;
        gain
    }

    /// The best move of `v` among its neighbours' PEs: `(q, gain)`. With `feasible_only`,
    /// only PEs that can take `v`. Ties go to the PE with the lower load (constraint 0).
    pub(crate) fn best_move(&mut self, v: u32, feasible_only: bool) -> Option<(u32, i64)> {
        let mut g = std::mem::take(&mut self.gains);
        let best = g.best_move(self, v, feasible_only);
        self.gains = g;
        best
    }

    /// Whether `q` can take `v` without exceeding a bound.
    #[inline]
    pub fn fits(&self, v: u32, q: u32) -> bool {
        if self.ncon == 1 {
            // The common case, without the general loop.
            return self.loads[q as usize] + self.graph.vertex_weight(v, 0)
                <= self.bound[q as usize];
        }
        let base = q as usize * self.ncon;
        self.graph
            .vertex_weights(v)
            .iter()
            .enumerate()
            .all(|(c, &w)| self.loads[base + c] + w <= self.bound[base + c])
    }

    /// Whether moving to `q` with gain `g` beats `best`: a higher gain, or the same gain
    /// and a lower load (constraint 0) on `q`.
    #[inline]
    pub(crate) fn beats(&self, q: u32, g: i64, best: Option<(u32, i64)>) -> bool {
        best.is_none_or(|(bq, bg)| {
            g > bg
                || (g == bg
                    && self.loads[q as usize * self.ncon] < self.loads[bq as usize * self.ncon])
        })
    }

    /// Whether `v` and `u` (on different PEs) may swap: each PE stays within its bounds,
    /// or does not grow.
    pub fn swap_fits(&self, v: u32, u: u32) -> bool {
        let (p, q) = (
            self.part[v as usize] as usize,
            self.part[u as usize] as usize,
        );
        let ncon = self.ncon;
        (0..ncon).all(|c| {
            let (wv, wu) = (
                self.graph.vertex_weight(v, c),
                self.graph.vertex_weight(u, c),
            );
            let (lp, lq) = (self.loads[p * ncon + c], self.loads[q * ncon + c]);
            (wu <= wv || lp - wv + wu <= self.bound[p * ncon + c])
                && (wv <= wu || lq - wu + wv <= self.bound[q * ncon + c])
        })
    }

    /// Whether `p` exceeds a bound.
    #[inline]
    pub fn overloaded(&self, p: u32) -> bool {
        let base = p as usize * self.ncon;
        (0..self.ncon).any(|c| self.loads[base + c] > self.bound[base + c])
    }

    /// Whether every PE is within its bounds.
    pub fn is_balanced(&self) -> bool {
        self.loads.iter().zip(self.bound).all(|(l, b)| l <= b)
    }

    /// Moves `v` to `q`, updating the loads.
    #[inline]
    pub fn apply(&mut self, v: u32, q: u32) {
        let p = self.part[v as usize];
        let (bp, bq) = (p as usize * self.ncon, q as usize * self.ncon);
        for (c, &w) in self.graph.vertex_weights(v).iter().enumerate() {
            self.loads[bp + c] -= w;
            self.loads[bq + c] += w;
        }
        self.part[v as usize] = q;
    }

    /// `f_C` of the current mapping, O(m), in parallel blocks on the state's pool.
    pub fn comm_cost(&self) -> u64 {
        let n = self.graph.num_tasks();
        crate::par::map_blocks(
            self.pool,
            n,
            COST_BLOCK,
            || (),
            |_, range| self.dist.comm_cost_of(self.graph, &self.part, range),
        )
        .into_iter()
        .sum()
    }

    /// Replaces the mapping by `part`, recomputing the loads. O(n·ncon + k).
    pub(crate) fn reset_to(&mut self, part: Vec<u32>) {
        debug_assert_eq!(part.len(), self.graph.num_tasks());
        self.loads.fill(0);
        for (v, &p) in part.iter().enumerate() {
            for (c, &w) in self.graph.vertex_weights(v as u32).iter().enumerate() {
                self.loads[p as usize * self.ncon + c] += w;
            }
        }
        self.part = part;
    }

    pub(crate) fn is_boundary(&self, v: u32) -> bool {
        let p = self.part[v as usize];
        self.graph
            .neighbors(v)
            .iter()
            .any(|&u| self.part[u as usize] != p)
    }
}

/// The scratch of one task's gains at a time: its edge weights summed per neighbouring PE
/// (`conn`, indexed by PE, and the `touched` PEs), and the candidates' costs. A thread
/// keeps its own, so several threads can rate tasks of one [`KwayState`] at once.
#[derive(Debug, Default)]
pub(crate) struct Gains {
    pub(crate) conn: Vec<u64>,
    pub(crate) touched: Vec<u32>,
    /// `(PE, conn)` of the touched PEs, contiguous, for [`Gains::best_move`] on tasks
    /// with many neighbouring PEs.
    pub(crate) touched_conn: Vec<(u32, u64)>,
    /// Scratch of [`separable_costs`].
    pub(crate) sep: SepScratch,
}

impl Gains {
    /// Empty scratch for `k` PEs.
    pub(crate) fn new(k: usize) -> Self {
        Self {
            conn: vec![0; k],
            ..Self::default()
        }
    }

    /// Sums the edge weights of `v` per neighbouring PE into `conn`/`touched`.
    #[inline]
    pub(crate) fn gather(&mut self, st: &KwayState<'_>, v: u32) {
        let g = st.graph;
        if st.unit_edges {
            for &u in g.neighbors(v) {
                let r = st.part[u as usize];
                if self.conn[r as usize] == 0 {
                    self.touched.push(r);
                }
                self.conn[r as usize] += 1;
            }
            return;
        }
        for (&u, &w) in g.neighbors(v).iter().zip(g.edge_weights(v)) {
            if w == 0 {
                continue;
            }
            let r = st.part[u as usize];
            if self.conn[r as usize] == 0 {
                self.touched.push(r);
            }
            self.conn[r as usize] += w;
        }
    }

    #[inline]
    pub(crate) fn clear(&mut self) {
        for &r in &self.touched {
            self.conn[r as usize] = 0;
        }
        self.touched.clear();
    }

    /// Σ_{r touched} conn[r]·dist(q, r): the cost of `v`'s edges if `v` sat on `q`.
    #[inline]
    fn cost_at(&self, st: &KwayState<'_>, q: u32) -> u64 {
        let mut s = 0u64;
        for &r in &self.touched {
            s += self.conn[r as usize] * st.dist.get(q, r);
        }
        s
    }

    /// The `f_C` change (old − new) of moving `v` to `q`. O(deg(v) + t).
    pub(crate) fn move_gain(&mut self, st: &KwayState<'_>, v: u32, q: u32) -> i64 {
        self.gather(st, v);
        let p = st.part[v as usize];
        let g = self.cost_at(st, p) as i64 - self.cost_at(st, q) as i64;
        self.clear();
        g
    }

    /// After [`Self::gather`] of a task on `p`: prepares the costs of its candidates.
    /// Every candidate costs a pass over the touched PEs (O(t²) in all): with many of them
    /// (dense graphs), the pass reads contiguous (PE, conn) pairs and one row of the
    /// distance table instead of the sparse `conn` and a lookup per pair (`dense`), and on
    /// meshes, tori and hypercubes the costs of all candidates may come from per-digit sums
    /// instead, O(t·dims + Σ_i digits_i²), when that is cheaper (`split`: `sep` holds them).
    pub(crate) fn prepare_costs(&mut self, st: &KwayState<'_>, p: u32) -> (bool, bool) {
        let dense = self.touched.len() > 8 && st.dist.row(0).is_some();
        if !dense {
            return (false, false);
        }
        self.touched_conn.clear();
        for &r in &self.touched {
            self.touched_conn.push((r, self.conn[r as usize]));
        }
        if let Some(sep) = st.dist.separable() {
            // The digit sums take about 2·t·dims + Σ_i min(t, side_i)² steps.
            let t = self.touched.len();
            let digits: usize = (0..sep.dims())
                .map(|i| t.min(sep.side(i) as usize).pow(2))
                .sum();
            if 2 * t * sep.dims() + digits < t * t {
                separable_costs(sep, &self.touched_conn, p, &mut self.sep);
                return (true, true);
            }
        }
        (true, false)
    }

    /// The cost of the gathered edges at PE `q` (see [`Self::prepare_costs`]).
    #[inline]
    pub(crate) fn cost_for(&self, st: &KwayState<'_>, q: u32, dense: bool) -> u64 {
        match st.dist.row(q).filter(|_| dense) {
            Some(row) => self
                .touched_conn
                .iter()
                .map(|&(r, w)| w * u64::from(row[r as usize]))
                .sum(),
            None => self.cost_at(st, q),
        }
    }

    /// The cost of the gathered edges at the `i`-th touched PE `q`.
    #[inline]
    pub(crate) fn candidate_cost(
        &self,
        st: &KwayState<'_>,
        i: usize,
        q: u32,
        dense: bool,
        split: bool,
    ) -> u64 {
        if split {
            self.sep.cost[i]
        } else {
            self.cost_for(st, q, dense)
        }
    }

    /// The best move of `v` among its neighbours' PEs: `(q, gain)`. With `feasible_only`,
    /// only PEs that can take `v`. Ties go to the PE with the lower load (constraint 0).
    pub(crate) fn best_move(
        &mut self,
        st: &KwayState<'_>,
        v: u32,
        feasible_only: bool,
    ) -> Option<(u32, i64)> {
        self.best_move_inside(st, v, feasible_only)
            .map(|(q, g, _)| (q, g))
    }

    /// [`Self::best_move`], with the weight of `v`'s edges inside its own PE.
    pub(crate) fn best_move_inside(
        &mut self,
        st: &KwayState<'_>,
        v: u32,
        feasible_only: bool,
    ) -> Option<(u32, i64, u64)> {
        if !st.movable(v) {
            return None;
        }
        self.gather(st, v);
        let p = st.part[v as usize];
        let inside = self.conn[p as usize];
        let (dense, split) = self.prepare_costs(st, p);
        let here = if split {
            self.sep.here
        } else {
            self.cost_for(st, p, dense)
        } as i64;
        let mut best: Option<(u32, i64)> = None;
        for i in 0..self.touched.len() {
            let q = self.touched[i];
            if q == p || (feasible_only && !st.fits(v, q)) {
                continue;
            }
            let g = here - self.candidate_cost(st, i, q, dense, split) as i64;
            if st.beats(q, g, best) {
                best = Some((q, g));
            }
        }
        self.clear();
        best.map(|(q, g)| (q, g, inside))
    }
}

/// The k-way refiner's parameters.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct KwayRefiner {
    /// Rounds of label propagation (0 disables it).
    pub lp_rounds: usize,
    /// FM passes with rollback (0 disables FM).
    pub fm_passes: usize,
    /// An FM pass stops after this many moves without a new best `f_C`.
    pub fm_stall: usize,
    /// FM runs only on graphs with at most this many tasks (label propagation alone
    /// refines larger levels). Unlimited by default.
    pub fm_max_tasks: usize,
    /// Levels of at least this many tasks run Jet ([`super::jet`], in parallel) instead
    /// of FM.
    pub jet_min_tasks: usize,
    /// Jet's parameters.
    pub jet: super::jet::Jet,
    /// Rounds of pairwise swaps (0 disables them).
    pub swap_rounds: usize,
    /// Stop repeating passes when one improves `f_C` by less than this fraction.
    pub min_improvement: f64,
    /// Rounds of pairwise refinement after FM ([`super::pairs`]: the tasks of two PEs
    /// near their frontier re-split by the bipartitioner's FM and flow; 0 disables it).
    pub pair_rounds: usize,
    /// The parameters of a pairwise round.
    pub pair: PairPass,
}

impl Default for KwayRefiner {
    fn default() -> Self {
        Self {
            lp_rounds: 6,
            fm_passes: 3,
            fm_stall: 300,
            fm_max_tasks: usize::MAX,
            jet_min_tasks: usize::MAX,
            jet: super::jet::Jet::default(),
            swap_rounds: 0,
            min_improvement: 0.001,
            pair_rounds: 0,
            pair: PairPass::default(),
        }
    }
}

impl KwayRefiner {
    /// Refines `state` in place by the steps of [`KwayRefiner::pipeline`]; returns the
    /// `f_C` decrease (never negative: every pass keeps only improvements, and no move
    /// exceeds a load bound).
    pub fn refine(&self, state: &mut KwayState<'_>, rng: &mut impl Rng) -> i64 {
        Refiner::refine(self, state, &mut RefineScratch::default(), rng)
    }
}

/// Label propagation: positive-gain feasible moves (and zero-gain moves that even loads).
/// Returns the `f_C` decrease.
///
/// Each round is a sweep (`par::sweep`) on the state's pool: in a sub-round every
/// task finds its best move from the mapping as the sub-round found it; the moves are then
/// applied in visit order, each only if the target still has room and the move still
/// gains (its gain taken again when a neighbour of the task moved in this sub-round), so
/// every gain is exact. Later rounds visit the neighbours of moved tasks. The same thread
/// count gives the same mapping.
pub fn lp_pass(state: &mut KwayState<'_>, rounds: usize, rng: &mut impl Rng) -> i64 {
    let n = state.graph.num_tasks();
    let k = state.dist.k() as usize;
    let mut order: Vec<u32> = local_random_order(n, rng);
    order.retain(|&v| state.is_boundary(v));
    let pool = state.pool;
    let mut lp = LpMoves {
        state,
        moved_at: vec![u32::MAX; n],
        active: vec![false; n],
        next: Vec::new(),
        stamp: 0,
        total: 0,
    };
    for _ in 0..rounds {
        if order.is_empty() {
            break;
        }
        crate::par::sweep(
            pool,
            &order,
            &mut lp,
            || Gains::new(k),
            |lp, gains, v| {
                let st = &*lp.state;
                let (q, g) = gains.best_move(st, v, true)?;
                st.worth(v, q, g).then_some((v, q, g))
            },
            |lp, moves| {
                for (v, q, g) in moves.into_iter().flatten() {
                    let st = &mut *lp.state;
                    if !st.fits(v, q) {
                        continue;
                    }
                    // A neighbour moved in this sub-round: the gain is taken again (on
                    // power-law graphs a hub always has one).
                    let stale = st
                        .graph
                        .neighbors(v)
                        .iter()
                        .any(|&u| lp.moved_at[u as usize] == lp.stamp);
                    let g = if stale { st.move_gain(v, q) } else { g };
                    if !st.worth(v, q, g) {
                        continue;
                    }
                    st.apply(v, q);
                    lp.total += g;
                    lp.moved_at[v as usize] = lp.stamp;
                    for &u in st.graph.neighbors(v) {
                        if !lp.active[u as usize] {
                            lp.active[u as usize] = true;
                            lp.next.push(u);
                        }
                    }
                }
                lp.stamp += 1;
            },
        );
        for &u in &lp.next {
            lp.active[u as usize] = false;
        }
        order = std::mem::take(&mut lp.next);
        local_shuffle(&mut order, rng);
    }
    lp.total
}

/// A round of [`lp_pass`] under way.
struct LpMoves<'s, 'a> {
    state: &'s mut KwayState<'a>,
    /// The sub-round in which a task last moved.
    moved_at: Vec<u32>,
    /// Tasks next to a moved task, for the next round (`active`: listed).
    active: Vec<bool>,
    next: Vec<u32>,
    /// The current sub-round.
    stamp: u32,
    /// The `f_C` decrease so far.
    total: i64,
}

/// One FM pass with rollback to the best prefix. Returns the `f_C` decrease (>= 0).
pub fn fm_pass(
    state: &mut KwayState<'_>,
    stall: usize,
    heap: &mut IndexedHeap,
    mut cache: Option<&mut GainCache>,
    rng: &mut impl Rng,
) -> i64 {
    // Entries from before the pass may be stale.
    if let Some(c) = cache.as_deref_mut() {
        c.reset();
    }
    let best_move =
        |state: &mut KwayState<'_>, cache: &mut Option<&mut GainCache>, v: u32| match cache
            .as_deref_mut()
        {
            Some(c) => c.best_move(state, v, true),
            None => state.best_move(v, true),
        };
    let n = state.graph.num_tasks();
    heap.reset(n);
    let mut boundary: Vec<u32> = local_random_order(n, rng);
    boundary.retain(|&v| state.is_boundary(v));
    let mut locked = vec![false; n];
    // A neighbour of a moved task above this degree gets its gain taken again only after
    // every `degree / hub`-th move next to it (and whenever it is popped), so rating a
    // hub of a power-law graph costs about `hub` per move next to it.
    let hub = fm_hub_degree(state.graph);
    let mut skipped = vec![0u32; if hub < n { n } else { 0 }];
    // Moves keep every bound; a prefix is kept only when it has no more overloaded PEs
    // than the start (when the refiner starts from an unbalanced mapping).
    let k = state.dist.k();
    let mut over = (0..k).filter(|&p| state.overloaded(p)).count();
    let over0 = over;
    let mut stamp = 0i64;
    let mut initial: Vec<(u32, i64)> = Vec::with_capacity(boundary.len());
    for &v in &boundary {
        if let Some((_, g)) = best_move(state, &mut cache, v) {
            initial.push((v, lifo_key(g, &mut stamp)));
        }
    }
    heap.build(initial);
    let mut log: Vec<(u32, u32)> = Vec::new();
    let (mut cum, mut best, mut best_len, mut since) = (0i64, 0i64, 0usize, 0usize);
    while let Some((v, key)) = heap.pop() {
        let Some((q, g)) = best_move(state, &mut cache, v) else {
            continue;
        };
        if clamp_gain(g) < key_gain(key) {
            // Feasibility changed since the key was set, or the task is a hub whose key
            // was not updated: requeue with the true gain (as
            // the key holds it: a gain below the clamp would otherwise requeue forever).
            heap.set(v, lifo_key(g, &mut stamp));
            continue;
        }
        let p = state.part[v as usize];
        let (was_p, was_q) = (state.overloaded(p), state.overloaded(q));
        state.apply(v, q);
        if let Some(c) = cache.as_deref_mut() {
            c.moved(state, v, p, q);
        }
        over = over + state.overloaded(p) as usize + state.overloaded(q) as usize
            - was_p as usize
            - was_q as usize;
        locked[v as usize] = true;
        log.push((v, p));
        cum += g;
        if cum > best && over <= over0 {
            best = cum;
            best_len = log.len();
            since = 0;
        } else {
            since += 1;
            if since >= stall {
                break;
            }
        }
        for i in 0..state.graph.degree(v) {
            let u = state.graph.neighbors(v)[i];
            if locked[u as usize] {
                continue;
            }
            let du = state.graph.degree(u);
            if du > hub {
                let s = &mut skipped[u as usize];
                *s += 1;
                if (*s as usize) < du / hub {
                    continue;
                }
                *s = 0;
            }
            match best_move(state, &mut cache, u) {
                Some((_, gu)) => {
                    heap.set(u, lifo_key(gu, &mut stamp));
                }
                None => heap.remove(u),
            }
        }
    }
    heap.clear();
    while log.len() > best_len {
        let (v, p) = log.pop().expect("log is longer than best_len");
        state.apply(v, p);
    }
    best
}

/// FM takes the gain of a moved task's neighbour again after every move only up to this
/// degree `h`, or [`FM_HUB_DEGREE_FACTOR`] times the mean degree when that is more; a
/// neighbour of degree `d > h` on every `(d / h)`-th move next to it and whenever it is
/// popped (a move's own gain is always exact). An R-MAT graph of 262,144 tasks onto
/// `torus:16x16` (seed 0) took 32 s instead of 108 s, f_C 8,794,192 against 8,740,500;
/// taking a hub's gain again only once per pass took 18.5 s but cost 9,893,100.
pub const FM_HUB_MIN_DEGREE: usize = 128;

/// See [`FM_HUB_MIN_DEGREE`].
pub const FM_HUB_DEGREE_FACTOR: usize = 8;

/// The degree above which [`fm_pass`] updates a neighbour's gain lazily.
pub(crate) fn fm_hub_degree(g: &TaskGraph) -> usize {
    let n = g.num_tasks().max(1);
    FM_HUB_MIN_DEGREE.max(FM_HUB_DEGREE_FACTOR * g.csr().0[g.num_tasks()] / n)
}

/// One round of swaps of adjacent tasks on different PEs; returns the `f_C` decrease.
pub fn swap_pass(
    state: &mut KwayState<'_>,
    mut cache: Option<&mut GainCache>,
    rng: &mut impl Rng,
) -> i64 {
    if let Some(c) = cache.as_deref_mut() {
        c.reset();
    }
    let n = state.graph.num_tasks();
    let mut order: Vec<u32> = local_random_order(n, rng);
    order.retain(|&v| state.is_boundary(v));
    let mut gv: Vec<(u32, i64)> = Vec::new();
    let mut total = 0i64;
    for &v in &order {
        if !state.movable(v) {
            continue;
        }
        let p = state.part[v as usize];
        gv.clear();
        match cache.as_deref_mut() {
            Some(c) => c.gains(state, v, &mut gv),
            None => {
                let mut g = std::mem::take(&mut state.gains);
                g.gather(state, v);
                let here = g.cost_at(state, p) as i64;
                for &q in &g.touched {
                    if q != p {
                        gv.push((q, here - g.cost_at(state, q) as i64));
                    }
                }
                g.clear();
                state.gains = g;
            }
        }
        let mut best: Option<(u32, i64)> = None;
        for i in 0..state.graph.degree(v) {
            let u = state.graph.neighbors(v)[i];
            let w = state.graph.edge_weights(v)[i];
            let q = state.part[u as usize];
            if q == p || !state.movable(u) {
                continue;
            }
            let g_v = gv.iter().find(|e| e.0 == q).map_or(0, |e| e.1);
            let g_u = match cache.as_deref_mut() {
                Some(c) => c.gain(state, u, p),
                None => state.move_gain(u, p),
            };
            let g = g_v + g_u - 2 * (w * state.dist.get(p, q)) as i64;
            if g > best.map_or(0, |b| b.1) {
                // Both PEs must stay within bounds (or not grow).
                if state.swap_fits(v, u) {
                    best = Some((u, g));
                }
            }
        }
        if let Some((u, g)) = best {
            let q = state.part[u as usize];
            // One move at a time, so that the cache sees consistent states.
            state.apply(v, q);
            if let Some(c) = cache.as_deref_mut() {
                c.moved(state, v, p, q);
            }
            state.apply(u, p);
            if let Some(c) = cache.as_deref_mut() {
                c.moved(state, u, q, p);
            }
            total += g;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multilevel::dist::Separable;
    use crate::multilevel::refine::rebalance::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// A random graph of `n` tasks and mean degree `degree` with edge weights 1-5, and the
    /// generator that drew the weights (for what the test draws next).
    fn random_weighted(n: u32, degree: f64, seed: u64) -> (TaskGraph, Xoshiro256PlusPlus) {
        use rand::Rng;
        let g0 = taskmap_graph::gen::random_graph(n, degree, seed);
        let mut b = taskmap_graph::GraphBuilder::new(n as usize, 1);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        for u in 0..n {
            for &w in g0.neighbors(u) {
                if u < w {
                    b.add_edge(u, w, rng.gen_range(1..=5));
                }
            }
        }
        (b.build(), rng)
    }

    /// `best_move` on dense graphs (more than 8 neighbouring PEs, so the contiguous and the
    /// per-digit cost paths run) equals a naive selection: the gains of `move_gain` over
    /// the neighbours' PEs in order of first appearance, ties to the lower load, then the
    /// first; on targets whose distances split by dimension and on others.
    #[test]
    fn best_move_on_dense_graphs_equals_a_naive_selection() {
        use rand::Rng;
        for (spec, seed) in [
            ("hypercube:6", 1u64),
            ("torus:8x8", 2),
            ("mesh:4x4x4", 3),
            ("torus:5x3", 4),
            ("tree:4:4:4/1:10:100", 5),
        ] {
            let arch = taskmap_arch::parse_arch(spec).unwrap();
            let dist = DistTable::new(arch.as_ref());
            let k = dist.k();
            let (g, mut rng) = random_weighted(300, 60.0, seed);
            let part: Vec<u32> = (0..300).map(|_| rng.gen_range(0..k)).collect();
            let bound = vec![u64::MAX; k as usize];
            let mut st = KwayState::new(&g, &dist, &bound, part.clone());
            let mut dense = 0;
            for v in 0..300u32 {
                let p = part[v as usize];
                let mut pes: Vec<u32> = Vec::new();
                for &u in g.neighbors(v) {
                    let r = part[u as usize];
                    if !pes.contains(&r) {
                        pes.push(r);
                    }
                }
                dense += usize::from(pes.len() > 8);
                let mut naive: Option<(u32, i64)> = None;
                for &q in pes.iter().filter(|&&q| q != p) {
                    let gq = st.move_gain(v, q);
                    let better = naive.is_none_or(|(bq, bg)| {
                        gq > bg || (gq == bg && st.loads[q as usize] < st.loads[bq as usize])
                    });
                    if better {
                        naive = Some((q, gq));
                    }
                }
                assert_eq!(st.best_move(v, false), naive, "{spec}: task {v}");
            }
            assert!(dense > 250, "{spec}: {dense} dense tasks");
            let split = st.dist.separable().is_some();
            assert_eq!(split, !spec.starts_with("tree"), "{spec}");
        }
    }

    /// The gain cache follows arbitrary moves (to PEs new to a task, and away from a
    /// task's last neighbour on a PE): after every few moves, each task's cached best move
    /// has the largest gain `move_gain` gives over the feasible neighbouring PEs, and that
    /// PE's gain; FM with the cache returns the exact `f_C` decrease.
    #[test]
    fn gain_cache_follows_moves() {
        use rand::Rng;
        // Dense graphs on few PEs, and sparse ones on many, where a task's neighbours often
        // sit on as many PEs as it has edges (its slots full) when one moves to a PE new
        // to it.
        for (spec, seed, degree) in [
            ("torus:4x4", 7u64, 40.0),
            ("tree:4:4/1:10", 8, 40.0),
            ("hypercube:5", 9, 40.0),
            ("torus:16x16", 10, 3.0),
            ("hypercube:8", 11, 6.0),
        ] {
            let arch = taskmap_arch::parse_arch(spec).unwrap();
            let dist = DistTable::new(arch.as_ref());
            let k = dist.k();
            let n = 200u32;
            let (g, mut rng) = random_weighted(n, degree, seed);
            let part: Vec<u32> = (0..n).map(|_| rng.gen_range(0..k)).collect();
            // Bounds that some PEs reach, so feasibility matters.
            let bound = vec![u64::from(n / k + 2); k as usize];
            let mut st = KwayState::new(&g, &dist, &bound, part);
            assert_eq!(GainCache::pays(&st), degree >= 32.0, "{spec}");
            let mut cache = GainCache::new(&st);
            for v in 0..n {
                cache.best_move(&mut st, v, true);
            }
            for round in 0..15 {
                for _ in 0..20 {
                    let v = rng.gen_range(0..n);
                    let p = st.part[v as usize];
                    let q = rng.gen_range(0..k);
                    if q != p {
                        st.apply(v, q);
                        cache.moved(&st, v, p, q);
                    }
                }
                for v in 0..n {
                    let p = st.part[v as usize];
                    let mut best: Option<i64> = None;
                    for &u in g.neighbors(v) {
                        let q = st.part[u as usize];
                        if q != p && st.fits(v, q) {
                            let gq = st.move_gain(v, q);
                            best = Some(best.map_or(gq, |b| b.max(gq)));
                        }
                    }
                    let got = cache.best_move(&mut st, v, true);
                    assert_eq!(got.map(|x| x.1), best, "{spec} round {round} task {v}");
                    // The entries are the neighbouring PEs with their weights and costs.
                    let mut conn: Vec<(u32, u64)> = Vec::new();
                    for (&u, &w) in g.neighbors(v).iter().zip(g.edge_weights(v)) {
                        let r = st.part[u as usize];
                        match conn.iter_mut().find(|x| x.0 == r) {
                            Some(x) => x.1 += w,
                            None => conn.push((r, w)),
                        }
                    }
                    let cost_at =
                        |q: u32| -> u64 { conn.iter().map(|&(r, w)| w * dist.get(q, r)).sum() };
                    let o = g.csr().0[v as usize];
                    let mut listed: Vec<(u32, u64, u64)> = cache.slot
                        [o..o + cache.len[v as usize] as usize]
                        .iter()
                        .map(|e| (e.pe, e.conn, e.cost))
                        .collect();
                    listed.sort_unstable();
                    let mut want: Vec<(u32, u64, u64)> =
                        conn.iter().map(|&(r, w)| (r, w, cost_at(r))).collect();
                    want.sort_unstable();
                    assert_eq!(listed, want, "{spec} round {round} task {v}");
                    assert_eq!(cache.here[v as usize], cost_at(p), "{spec} task {v}");
                    if let Some((q, gq)) = got {
                        assert!(st.fits(v, q));
                        assert_eq!(st.move_gain(v, q), gq, "{spec} task {v}");
                    }
                }
            }
            // Swaps with the cache make the same swaps as without (the same exact gains,
            // the same order).
            for round in 0..2 {
                let mut plain = KwayState::new(&g, &dist, &bound, st.part.clone());
                let before = st.comm_cost() as i64;
                let d = swap_pass(
                    &mut st,
                    Some(&mut cache),
                    &mut Xoshiro256PlusPlus::seed_from_u64(round),
                );
                let d2 = swap_pass(
                    &mut plain,
                    None,
                    &mut Xoshiro256PlusPlus::seed_from_u64(round),
                );
                assert_eq!(
                    (d, &st.part),
                    (d2, &plain.part),
                    "{spec} swap round {round}"
                );
                assert_eq!(before - st.comm_cost() as i64, d, "{spec}");
                assert!(d > 0 || round > 0 || degree < 32.0, "{spec}: no swap");
            }
            for _ in 0..3 {
                let before = st.comm_cost() as i64;
                let mut heap = IndexedHeap::new(n as usize);
                let d = fm_pass(&mut st, 50, &mut heap, Some(&mut cache), &mut rng);
                assert!(d >= 0);
                assert_eq!(before - st.comm_cost() as i64, d, "{spec}");
            }
        }
    }

    /// The per-dimension split of meshes, tori and hypercubes gives the table's distances
    /// on every pair; trees and complete graphs have none.
    #[test]
    fn separable_distances_equal_the_table() {
        for spec in [
            "torus:6x4",
            "mesh:3x5x2",
            "hypercube:5",
            "torus:8x8x8",
            "mesh:7",
        ] {
            let arch = taskmap_arch::parse_arch(spec).unwrap();
            let dist = DistTable::new(arch.as_ref());
            let sep = Separable::of(&dist).unwrap_or_else(|| panic!("{spec}"));
            for p in 0..dist.k() {
                for q in 0..dist.k() {
                    assert_eq!(sep.distance(p, q), dist.get(p, q), "{spec}: {p} {q}");
                }
            }
        }
        for spec in ["tree:4:4/1:10", "complete:8", "wcomplete:1,2,3"] {
            let arch = taskmap_arch::parse_arch(spec).unwrap();
            assert!(
                Separable::of(&DistTable::new(arch.as_ref())).is_none(),
                "{spec}"
            );
        }
    }

    /// The reference search (the one [`rebalance`](super::rebalance::rebalance) made before `NearPes`): for every
    /// task, all PEs sorted by distance.
    struct FullSort;

    impl NearestFit for FullSort {
        fn start_round(&mut self, _: &KwayState<'_>) {}

        fn find(&mut self, state: &KwayState<'_>, p: u32, v: u32) -> Option<u32> {
            let mut l: Vec<u32> = (0..state.dist.k()).filter(|&q| q != p).collect();
            l.sort_by_key(|&q| (state.dist.get(p, q), q));
            l.into_iter().find(|&q| state.fits(v, q))
        }

        fn moved(&mut self, _: &KwayState<'_>, _: u32, _: u32) {}
    }

    /// [`rebalance`](super::rebalance::rebalance) moves the same tasks to the same PEs as the full sort, on targets of
    /// more PEs than [`REBALANCE_NEAR`], with one and two constraints and some heavy
    /// tasks, from starts that pile the tasks onto a few PEs; and it does work (most
    /// starts end balanced). Lists run out and heavy tasks reach the scan of all PEs: a
    /// search that never refills a list, or whose scan takes the PEs in id order, fails
    /// here.
    #[test]
    fn rebalance_matches_the_full_sort() {
        let mut balanced = 0;
        let mut cases = 0;
        for (i, spec) in [
            "torus:10x15",
            "tree:4:5:8/1:10:100",
            "hypercube:8",
            "mesh:9x9",
        ]
        .into_iter()
        .enumerate()
        {
            let arch = taskmap_arch::parse_arch(spec).unwrap();
            let k = arch.pe_count();
            assert!(k as usize > REBALANCE_NEAR, "{spec}");
            let dist = DistTable::new(arch.as_ref());
            for ncon in [1usize, 2] {
                for heavy in [false, true] {
                    let seed = (i * 10 + ncon * 2 + usize::from(heavy)) as u64;
                    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
                    let base = taskmap_graph::gen::random_geometric(3000, 6.0, seed);
                    let (xadj, adjncy, ew, _) = base.csr();
                    let n = base.num_tasks();
                    // Weights 1-3, and with `heavy` every tenth task much heavier.
                    let vw: Vec<u64> = (0..n * ncon)
                        .map(|j| {
                            if heavy && (j / ncon) % 10 == 0 {
                                rng.gen_range(8..40)
                            } else {
                                rng.gen_range(1..4)
                            }
                        })
                        .collect();
                    let g =
                        TaskGraph::from_csr(xadj.to_vec(), adjncy.to_vec(), ew.to_vec(), vw, ncon)
                            .unwrap();
                    let total: Vec<u64> = (0..ncon).map(|c| g.total_vertex_weight(c)).collect();
                    let bound: Vec<u64> = (0..k as usize * ncon)
                        .map(|j| total[j % ncon] * 21 / (20 * k as u64) + 1)
                        .collect();
                    // 60 % of the tasks on the first eighth of the PEs, the rest spread.
                    let part: Vec<u32> = (0..n as u32)
                        .map(|_| {
                            if rng.gen_bool(0.6) {
                                rng.gen_range(0..k / 8)
                            } else {
                                rng.gen_range(0..k)
                            }
                        })
                        .collect();
                    let mut a = KwayState::new(&g, &dist, &bound, part.clone());
                    let mut b = KwayState::new(&g, &dist, &bound, part);
                    let ok_a = rebalance(&mut a);
                    let ok_b = rebalance_by(&mut b, &mut FullSort, None);
                    assert_eq!(a.part, b.part, "{spec}, ncon {ncon}, heavy {heavy}");
                    assert_eq!(ok_a, ok_b);
                    assert_eq!(ok_a, a.is_balanced());
                    balanced += usize::from(ok_a);
                    cases += 1;
                }
            }
        }
        assert!(balanced * 2 > cases, "{balanced} of {cases} balanced");
    }
}
