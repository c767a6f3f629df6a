//! K-way refinement that minimises `f_C = Σ_e w(e)·dist(τ(u), τ(v))` directly.
//!
//! The gain of moving task `v` from PE `p` to PE `q` is
//! `Σ_{u∈N(v)} w(uv)·(dist(p, τu) − dist(q, τu))`. It is computed by first summing the
//! edge weights of `v` per neighbouring PE into a scratch array indexed by PE (`conn`), so a
//! gain costs O(deg(v) + t²) where `t` is the number of distinct neighbouring PEs. The
//! candidate targets of `v` are the PEs of its neighbours.
//!
//! Four passes, each of which never increases `f_C` and never breaks a load bound:
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
//! [`rebalance`] moves tasks out of overloaded PEs at the smallest `f_C` increase.

use rand::Rng;
use taskmap_graph::TaskGraph;

use super::coarsen::{local_random_order, local_shuffle};
use super::dist::DistTable;
use super::pairs::{pair_pass, PairPass, PairScratch};
use super::pq::{key_gain, lifo_key, IndexedHeap};

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
    ncon: usize,
    /// Every edge weighs 1: [`KwayState::gather`] need not read the weights (on large
    /// graphs, half of its time went to that array's cache misses).
    unit_edges: bool,
    conn: Vec<u64>,
    touched: Vec<u32>,
    /// PE of every task, [`crate::problem::FREE`] for a task that may move; empty when no
    /// task is fixed. Fixed tasks never move.
    fixed: &'a [u32],
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
        let mut loads = vec![0u64; k * ncon];
        for (v, &p) in part.iter().enumerate() {
            for (c, &w) in graph.vertex_weights(v as u32).iter().enumerate() {
                loads[p as usize * ncon + c] += w;
            }
        }
        Self {
            graph,
            dist,
            bound,
            part,
            loads,
            ncon,
            unit_edges: !graph.has_edge_weights(),
            conn: vec![0; k],
            touched: Vec::new(),
            fixed: &[],
        }
    }

    /// Pins tasks: `fixed[v]` is the PE task `v` must stay on, or
    /// [`crate::problem::FREE`]. The refiners and [`rebalance`] never move a pinned task.
    pub fn with_fixed(mut self, fixed: &'a [u32]) -> Self {
        assert!(fixed.is_empty() || fixed.len() == self.part.len());
        self.fixed = fixed;
        self
    }

    /// Whether `v` may move.
    #[inline]
    pub fn movable(&self, v: u32) -> bool {
        self.fixed.is_empty() || self.fixed[v as usize] == crate::problem::FREE
    }

    /// Sums the edge weights of `v` per neighbouring PE into `conn`/`touched`.
    #[inline]
    fn gather(&mut self, v: u32) {
        let g = self.graph;
        if self.unit_edges {
            for &u in g.neighbors(v) {
                let r = self.part[u as usize];
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
            let r = self.part[u as usize];
            if self.conn[r as usize] == 0 {
                self.touched.push(r);
            }
            self.conn[r as usize] += w;
        }
    }

    #[inline]
    fn clear(&mut self) {
        for &r in &self.touched {
            self.conn[r as usize] = 0;
        }
        self.touched.clear();
    }

    /// Σ_{r touched} conn[r]·dist(q, r): the cost of `v`'s edges if `v` sat on `q`.
    #[inline]
    fn cost_at(&self, q: u32) -> u64 {
        let mut s = 0u64;
        for &r in &self.touched {
            s += self.conn[r as usize] * self.dist.get(q, r);
        }
        s
    }

    /// The `f_C` change (old − new) of moving `v` to `q`. O(deg(v) + t).
    pub fn move_gain(&mut self, v: u32, q: u32) -> i64 {
        self.gather(v);
        let p = self.part[v as usize];
        let g = self.cost_at(p) as i64 - self.cost_at(q) as i64;
        self.clear();
        g
    }

    /// Whether `q` can take `v` without exceeding a bound.
    #[inline]
    pub fn fits(&self, v: u32, q: u32) -> bool {
        let base = q as usize * self.ncon;
        self.graph
            .vertex_weights(v)
            .iter()
            .enumerate()
            .all(|(c, &w)| self.loads[base + c] + w <= self.bound[base + c])
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

    /// `f_C` of the current mapping, O(m).
    pub fn comm_cost(&self) -> u64 {
        self.dist.comm_cost(self.graph, &self.part)
    }

    /// The best move of `v` among its neighbours' PEs: `(q, gain)`. With `feasible_only`,
    /// only PEs that can take `v`. Ties go to the PE with the lower load (constraint 0).
    fn best_move(&mut self, v: u32, feasible_only: bool) -> Option<(u32, i64)> {
        if !self.movable(v) {
            return None;
        }
        self.gather(v);
        let p = self.part[v as usize];
        let here = self.cost_at(p) as i64;
        let mut best: Option<(u32, i64)> = None;
        for i in 0..self.touched.len() {
            let q = self.touched[i];
            if q == p || (feasible_only && !self.fits(v, q)) {
                continue;
            }
            let g = here - self.cost_at(q) as i64;
            let better = match best {
                None => true,
                Some((bq, bg)) => {
                    g > bg
                        || (g == bg
                            && self.loads[q as usize * self.ncon]
                                < self.loads[bq as usize * self.ncon])
                }
            };
            if better {
                best = Some((q, g));
            }
        }
        self.clear();
        best
    }

    fn is_boundary(&self, v: u32) -> bool {
        let p = self.part[v as usize];
        self.graph
            .neighbors(v)
            .iter()
            .any(|&u| self.part[u as usize] != p)
    }
}

/// The k-way refiner's parameters.
#[derive(Clone, Debug, PartialEq)]
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
            swap_rounds: 0,
            min_improvement: 0.001,
            pair_rounds: 0,
            pair: PairPass::default(),
        }
    }
}

impl KwayRefiner {
    /// Refines `state` in place; returns the `f_C` decrease (never negative: every pass
    /// keeps only improvements, and no move exceeds a load bound).
    pub fn refine(&self, state: &mut KwayState<'_>, rng: &mut impl Rng) -> i64 {
        let mut total = 0i64;
        let mut cost = state.comm_cost() as i64;
        total += lp_pass(state, self.lp_rounds, rng);
        let mut heap = IndexedHeap::new(state.graph.num_tasks());
        let fm_passes = if state.graph.num_tasks() <= self.fm_max_tasks {
            self.fm_passes
        } else {
            0
        };
        for _ in 0..fm_passes {
            let g = fm_pass(state, self.fm_stall, &mut heap, rng);
            total += g;
            let before = cost;
            cost -= g;
            if (g as f64) <= self.min_improvement * before.max(1) as f64 {
                break;
            }
        }
        if self.pair_rounds > 0 {
            let mut sc = PairScratch::default();
            for _ in 0..self.pair_rounds {
                let before = cost;
                let g = pair_pass(state, &self.pair, &mut sc);
                total += g;
                cost -= g;
                if (g as f64) <= self.min_improvement * before.max(1) as f64 {
                    break;
                }
            }
        }
        for _ in 0..self.swap_rounds {
            let g = swap_pass(state, rng);
            total += g;
            if g == 0 {
                break;
            }
            total += lp_pass(state, 2, rng);
        }
        total
    }
}

/// Label propagation: positive-gain feasible moves (and zero-gain moves that even loads).
/// Returns the `f_C` decrease.
pub fn lp_pass(state: &mut KwayState<'_>, rounds: usize, rng: &mut impl Rng) -> i64 {
    let n = state.graph.num_tasks();
    let mut order: Vec<u32> = local_random_order(n, rng);
    order.retain(|&v| state.is_boundary(v));
    let mut active = vec![false; n];
    let mut next: Vec<u32> = Vec::new();
    let mut total = 0i64;
    let ncon = state.ncon;
    for _ in 0..rounds {
        if order.is_empty() {
            break;
        }
        for &v in &order {
            let Some((q, g)) = state.best_move(v, true) else {
                continue;
            };
            let p = state.part[v as usize];
            let w0 = state.graph.vertex_weight(v, 0);
            let evens = g == 0
                && w0 > 0
                && state.loads[q as usize * ncon] + w0 < state.loads[p as usize * ncon];
            if g > 0 || evens {
                state.apply(v, q);
                total += g;
                for &u in state.graph.neighbors(v) {
                    if !active[u as usize] {
                        active[u as usize] = true;
                        next.push(u);
                    }
                }
            }
        }
        for &u in &next {
            active[u as usize] = false;
        }
        std::mem::swap(&mut order, &mut next);
        next.clear();
        local_shuffle(&mut order, rng);
    }
    total
}

/// One FM pass with rollback to the best prefix. Returns the `f_C` decrease (>= 0).
pub fn fm_pass(
    state: &mut KwayState<'_>,
    stall: usize,
    heap: &mut IndexedHeap,
    rng: &mut impl Rng,
) -> i64 {
    let n = state.graph.num_tasks();
    heap.reset(n);
    let mut boundary: Vec<u32> = local_random_order(n, rng);
    boundary.retain(|&v| state.is_boundary(v));
    let mut locked = vec![false; n];
    // Moves keep every bound; a prefix is kept only when it has no more overloaded PEs
    // than the start (when the refiner starts from an unbalanced mapping).
    let k = state.dist.k();
    let mut over = (0..k).filter(|&p| state.overloaded(p)).count();
    let over0 = over;
    let mut stamp = 0i64;
    let mut initial: Vec<(u32, i64)> = Vec::with_capacity(boundary.len());
    for &v in &boundary {
        if let Some((_, g)) = state.best_move(v, true) {
            initial.push((v, lifo_key(g, &mut stamp)));
        }
    }
    heap.build(initial);
    let mut log: Vec<(u32, u32)> = Vec::new();
    let (mut cum, mut best, mut best_len, mut since) = (0i64, 0i64, 0usize, 0usize);
    while let Some((v, key)) = heap.pop() {
        let Some((q, g)) = state.best_move(v, true) else {
            continue;
        };
        if g < key_gain(key) {
            // Feasibility changed since the key was set: requeue with the true gain.
            heap.set(v, lifo_key(g, &mut stamp));
            continue;
        }
        let p = state.part[v as usize];
        let (was_p, was_q) = (state.overloaded(p), state.overloaded(q));
        state.apply(v, q);
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
            match state.best_move(u, true) {
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

/// One round of swaps of adjacent tasks on different PEs; returns the `f_C` decrease.
pub fn swap_pass(state: &mut KwayState<'_>, rng: &mut impl Rng) -> i64 {
    let n = state.graph.num_tasks();
    let mut order: Vec<u32> = local_random_order(n, rng);
    order.retain(|&v| state.is_boundary(v));
    let mut gv: Vec<(u32, i64)> = Vec::new();
    let ncon = state.ncon;
    let mut total = 0i64;
    for &v in &order {
        if !state.movable(v) {
            continue;
        }
        let p = state.part[v as usize];
        state.gather(v);
        let here = state.cost_at(p) as i64;
        gv.clear();
        for i in 0..state.touched.len() {
            let q = state.touched[i];
            if q != p {
                gv.push((q, here - state.cost_at(q) as i64));
            }
        }
        state.clear();
        let mut best: Option<(u32, i64)> = None;
        for i in 0..state.graph.degree(v) {
            let u = state.graph.neighbors(v)[i];
            let w = state.graph.edge_weights(v)[i];
            let q = state.part[u as usize];
            if q == p || !state.movable(u) {
                continue;
            }
            let g_v = gv.iter().find(|e| e.0 == q).map_or(0, |e| e.1);
            let g_u = state.move_gain(u, p);
            let g = g_v + g_u - 2 * (w * state.dist.get(p, q)) as i64;
            if g > best.map_or(0, |b| b.1) {
                // Both PEs must stay within bounds (or not grow).
                let ok = (0..ncon).all(|c| {
                    let (wv, wu) = (
                        state.graph.vertex_weight(v, c),
                        state.graph.vertex_weight(u, c),
                    );
                    let lp = state.loads[p as usize * ncon + c];
                    let lq = state.loads[q as usize * ncon + c];
                    (wu <= wv || lp - wv + wu <= state.bound[p as usize * ncon + c])
                        && (wv <= wu || lq - wu + wv <= state.bound[q as usize * ncon + c])
                });
                if ok {
                    best = Some((u, g));
                }
            }
        }
        if let Some((u, g)) = best {
            let q = state.part[u as usize];
            state.apply(v, q);
            state.apply(u, p);
            total += g;
        }
    }
    total
}

/// Moves tasks out of overloaded PEs, each to the feasible PE that costs least (neighbours'
/// PEs first, then any PE by increasing distance). Returns whether every bound holds.
pub fn rebalance(state: &mut KwayState<'_>) -> bool {
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
        // Candidate moves of every task on an overloaded PE, best gain first.
        let mut cands: Vec<(i64, u32, u32)> = Vec::new();
        for v in 0..n as u32 {
            let p = state.part[v as usize];
            if !is_over[p as usize] || !state.movable(v) {
                continue;
            }
            if let Some((q, g)) = state.best_move(v, true) {
                cands.push((g, v, q));
            } else {
                cands.push((i64::MIN, v, u32::MAX));
            }
        }
        cands.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut by_dist: Vec<Option<Vec<u32>>> = vec![None; k as usize];
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
            if q0 != u32::MAX && state.fits(v, q0) {
                state.apply(v, q0);
                continue;
            }
            // Nearest PE that can take v.
            let list = by_dist[p as usize].get_or_insert_with(|| {
                let mut l: Vec<u32> = (0..k).filter(|&q| q != p).collect();
                l.sort_by_key(|&q| (state.dist.get(p, q), q));
                l
            });
            if let Some(&q) = list.iter().find(|&&q| state.fits(v, q)) {
                state.apply(v, q);
            }
        }
    }
    state.is_balanced()
}
