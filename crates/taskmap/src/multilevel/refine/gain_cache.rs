//! The gain cache of the k-way FM on dense graphs: each task's neighbouring PEs with their
//! weights and candidate costs, updated in O(t) when a neighbour moves (t: the task's
//! neighbouring PEs), so a move's `deg` gains cost O(t) each instead of O(deg + t²).

use crate::multilevel::dist::Separable;
use crate::multilevel::refine::kway::*;

/// A PE next to a task in the [`GainCache`]: the weight of the task's edges to it and the
/// cost of all the task's edges if the task sat on it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CachedPe {
    pub(crate) pe: u32,
    pub(crate) conn: u64,
    pub(crate) cost: u64,
}

/// The candidate costs of tasks, kept up to date as their neighbours move, for FM on dense
/// graphs: a gain then costs O(t) (t = the task's neighbouring PEs) instead of a gather
/// over its edges and O(t²) (or per-digit sums) for the costs of all its candidates. A
/// move of a task updates, for each neighbour whose entry is built, the costs of that
/// neighbour's PEs in O(t) (two rows of the distance table). Entries are built on a
/// task's first query, in slots laid out like the CSR (at most `deg(v)` PEs per task, as
/// a PE is listed while the task has an edge to it), so nothing is allocated per edge.
/// Needs the distance table ([`DistTable::row`](crate::multilevel::DistTable::row)). Memory: 24 bytes per adjacency entry.
#[derive(Debug)]
pub struct GainCache {
    /// Number of PEs listed per task; `UNBUILT` until its first query.
    pub(crate) len: Vec<u32>,
    /// Cost of the task's edges at its own PE.
    pub(crate) here: Vec<u64>,
    /// Per task, `deg(v)` slots at the task's CSR offset.
    pub(crate) slot: Vec<CachedPe>,
    /// Tasks whose entries are built, to reset them.
    pub(crate) built: Vec<u32>,
}

pub(crate) const UNBUILT: u32 = u32::MAX;

impl GainCache {
    /// Whether FM on `state` should keep a cache: the distance table is built, the graph
    /// has at least [`GAIN_CACHE_MIN_DEGREE`] adjacency entries per task on average, or
    /// that mean degree seen from an edge end ([`TaskGraph::edge_mean_degree`]: a
    /// power-law graph, whose hubs FM would gather again and again), and at most
    /// [`GAIN_CACHE_MAX_ENTRIES`] entries in all. On an R-MAT graph of 262,144 tasks (mean
    /// degree 16, 784 from an edge end) onto `torus:16x16` the cache made the run 0.85
    /// times as long.
    ///
    /// [`TaskGraph::edge_mean_degree`]: taskmap_graph::TaskGraph::edge_mean_degree
    pub fn pays(state: &KwayState<'_>) -> bool {
        let g = state.graph;
        let entries = g.csr().0[g.num_tasks()];
        if state.dist.row(0).is_none() || g.num_tasks() == 0 || entries > GAIN_CACHE_MAX_ENTRIES {
            return false;
        }
        entries >= GAIN_CACHE_MIN_DEGREE * g.num_tasks()
            || g.edge_mean_degree() >= GAIN_CACHE_MIN_DEGREE as f64
    }

    /// An empty cache for `state`'s graph. Panics without the distance table
    /// ([`DistTable::row`](crate::multilevel::DistTable::row); [`Self::pays`] checks it).
    pub fn new(state: &KwayState<'_>) -> Self {
        assert!(
            state.dist.row(0).is_some() || state.dist.k() == 0,
            "a gain cache needs the distance table"
        );
        let n = state.graph.num_tasks();
        Self {
            len: vec![UNBUILT; n],
            here: vec![0; n],
            slot: vec![CachedPe::default(); state.graph.csr().0[n]],
            built: Vec::new(),
        }
    }

    /// Forgets every entry (O(entries built)).
    pub fn reset(&mut self) {
        for &v in &self.built {
            self.len[v as usize] = UNBUILT;
        }
        self.built.clear();
    }

    /// Builds the entry of `v` from `state`.
    fn build(&mut self, state: &mut KwayState<'_>, v: u32) {
        let mut g = std::mem::take(&mut state.gains);
        g.gather(state, v);
        let p = state.part[v as usize];
        let (dense, split) = g.prepare_costs(state, p);
        let o = state.graph.csr().0[v as usize];
        for (i, &q) in g.touched.iter().enumerate() {
            self.slot[o + i] = CachedPe {
                pe: q,
                conn: g.conn[q as usize],
                cost: g.candidate_cost(state, i, q, dense, split),
            };
        }
        self.here[v as usize] = if split {
            g.sep.here
        } else {
            g.cost_for(state, p, dense)
        };
        self.len[v as usize] = g.touched.len() as u32;
        self.built.push(v);
        g.clear();
        state.gains = g;
    }

    /// `KwayState::best_move` from the cache (ties between equal gains and loads may go
    /// to another PE: the candidates are in another order).
    pub fn best_move(
        &mut self,
        state: &mut KwayState<'_>,
        v: u32,
        feasible_only: bool,
    ) -> Option<(u32, i64)> {
        if !state.movable(v) {
            return None;
        }
        self.build_if_needed(state, v);
        let p = state.part[v as usize];
        let here = self.here[v as usize] as i64;
        // `KwayState::beats` and `fits`, spelled out on locals: through the methods this
        // loop made AMG2013 onto torus:8x8x16 take 3.74 s instead of 3.37 s.
        let ncon = state.ncon;
        let w0 = state.graph.vertex_weight(v, 0);
        let fits = |q: u32| {
            if ncon == 1 {
                state.loads[q as usize] + w0 <= state.bound[q as usize]
            } else {
                state.fits(v, q)
            }
        };
        let mut best: Option<(u32, i64)> = None;
        for e in &self.slot[self.entries(state, v)] {
            let q = e.pe;
            if q == p {
                continue;
            }
            let g = here - e.cost as i64;
            let better = match best {
                None => true,
                Some((bq, bg)) => {
                    g > bg
                        || (g == bg
                            && state.loads[q as usize * ncon] < state.loads[bq as usize * ncon])
                }
            };
            if better && (!feasible_only || fits(q)) {
                best = Some((q, g));
            }
        }
        best
    }

    /// The gain of moving `v` to each neighbouring PE other than its own, into `out`.
    pub(crate) fn gains(&mut self, state: &mut KwayState<'_>, v: u32, out: &mut Vec<(u32, i64)>) {
        self.build_if_needed(state, v);
        let p = state.part[v as usize];
        let here = self.here[v as usize] as i64;
        for e in &self.slot[self.entries(state, v)] {
            if e.pe != p {
                out.push((e.pe, here - e.cost as i64));
            }
        }
    }

    /// [`KwayState::move_gain`] of moving `v` to `q`, from the cache.
    pub(crate) fn gain(&mut self, state: &mut KwayState<'_>, v: u32, q: u32) -> i64 {
        self.build_if_needed(state, v);
        let cost = self.cost_of(state, v, q);
        self.here[v as usize] as i64 - cost as i64
    }

    /// Builds the entry of `v` unless it is built.
    #[inline]
    fn build_if_needed(&mut self, state: &mut KwayState<'_>, v: u32) {
        if self.len[v as usize] == UNBUILT {
            self.build(state, v);
        }
    }

    /// Where the built entry of `v` lies in `slot`.
    #[inline]
    fn entries(&self, state: &KwayState<'_>, v: u32) -> std::ops::Range<usize> {
        let o = state.graph.csr().0[v as usize];
        o..o + self.len[v as usize] as usize
    }

    /// The cost of `v`'s edges if `v` sat on `q`, from its built entry: the stored cost
    /// when `q` is listed, else summed over the listed PEs.
    fn cost_of(&self, state: &KwayState<'_>, v: u32, q: u32) -> u64 {
        let entries = &self.slot[self.entries(state, v)];
        match entries.iter().find(|e| e.pe == q) {
            Some(e) => e.cost,
            None => entries
                .iter()
                .map(|e| e.conn * state.dist.get(q, e.pe))
                .sum(),
        }
    }

    /// Task `u` has moved from PE `a` to PE `b` (`state` already shows it on `b`): updates
    /// the entries of its neighbours.
    pub fn moved(&mut self, state: &KwayState<'_>, u: u32, a: u32, b: u32) {
        if a == b {
            return;
        }
        let (Some(ra), Some(rb)) = (state.dist.row(a), state.dist.row(b)) else {
            unreachable!("a gain cache needs the distance table");
        };
        let g = state.graph;
        let xadj = g.csr().0;
        let ui = u as usize;
        if self.len[ui] != UNBUILT {
            // `u`'s new cost where it sits (`b` is usually one of its candidates).
            self.here[ui] = self.cost_of(state, u, b);
        }
        for (&v, &w) in g.neighbors(u).iter().zip(g.edge_weights(u)) {
            let vi = v as usize;
            let len = self.len[vi];
            if len == UNBUILT || w == 0 {
                continue;
            }
            let pv = state.part[vi] as usize;
            self.here[vi] = self.here[vi] + w * u64::from(rb[pv]) - w * u64::from(ra[pv]);
            let o = xadj[vi];
            let mut len = len as usize;
            let entries = &mut self.slot[o..o + len];
            let (mut ia, mut ib) = (usize::MAX, usize::MAX);
            for (i, e) in entries.iter_mut().enumerate() {
                let r = e.pe as usize;
                e.cost = e.cost + w * u64::from(rb[r]) - w * u64::from(ra[r]);
                if e.pe == a {
                    ia = i;
                } else if e.pe == b {
                    ib = i;
                }
            }
            debug_assert!(ia != usize::MAX, "a neighbour's old PE is listed");
            entries[ia].conn -= w;
            let a_gone = entries[ia].conn == 0;
            if ib != usize::MAX {
                entries[ib].conn += w;
                if a_gone {
                    len -= 1;
                    entries.swap(ia, len);
                }
            } else {
                // A PE new to `v`: its cost from scratch, with the updated weights. It
                // takes `a`'s slot when `a` has no edge left (with every neighbour on a PE
                // of its own the slots are full), else the next one (`v` then has fewer
                // PEs than edges).
                let cost = entries
                    .iter()
                    .map(|e| e.conn * u64::from(rb[e.pe as usize]))
                    .sum();
                let entry = CachedPe {
                    pe: b,
                    conn: w,
                    cost,
                };
                if a_gone {
                    entries[ia] = entry;
                } else {
                    assert!(o + len < xadj[vi + 1], "more PEs than edges");
                    self.slot[o + len] = entry;
                    len += 1;
                }
            }
            self.len[vi] = len as u32;
        }
    }
}

/// [`GainCache::pays`] from this many adjacency entries per task on average.
pub const GAIN_CACHE_MIN_DEGREE: usize = 32;

/// [`GainCache::pays`] up to this many adjacency entries (24 bytes each: 768 MiB).
pub const GAIN_CACHE_MAX_ENTRIES: usize = 1 << 25;

/// Scratch of [`separable_costs`].
#[derive(Debug, Default)]
pub(crate) struct SepScratch {
    /// Per digit slot: the weight of the touched PEs with that digit.
    pub(crate) agg: Vec<u64>,
    /// Per digit slot: `Σ_c agg[c] · f_i(digit, c)`.
    pub(crate) digit_cost: Vec<u64>,
    /// Per dimension, the digits met.
    pub(crate) digits: Vec<Vec<u32>>,
    /// The cost at each touched PE, in `touched` order.
    pub(crate) cost: Vec<u64>,
    /// The cost at the task's own PE.
    pub(crate) here: u64,
}

/// `Σ_{(r, w) ∈ touched} w · d(q, r)` for every touched PE `q` (into `s.cost`) and for `p`
/// (`s.here`), with distances that split by dimension: the weights are summed per digit of
/// every dimension, and a PE's cost is the sum over dimensions of its digit's cost. The
/// same integers as the direct sums.
pub(crate) fn separable_costs(sep: &Separable, touched: &[(u32, u64)], p: u32, s: &mut SepScratch) {
    let dims = sep.dims();
    s.agg.resize(sep.digit_slots(), 0);
    s.digit_cost.resize(sep.digit_slots(), 0);
    s.digits.resize_with(dims, Vec::new);
    for &(r, w) in touched {
        for i in 0..dims {
            let c = sep.coord(r, i);
            let slot = sep.digit_start(i) + c as usize;
            if s.agg[slot] == 0 {
                s.digits[i].push(c);
            }
            s.agg[slot] += w;
        }
    }
    let mut here = 0u64;
    for i in 0..dims {
        let start = sep.digit_start(i);
        let pi = sep.coord(p, i);
        for &a in &s.digits[i] {
            let mut sum = 0u64;
            for &c in &s.digits[i] {
                sum += s.agg[start + c as usize] * sep.along(i, a, c);
            }
            s.digit_cost[start + a as usize] = sum;
            here += s.agg[start + a as usize] * sep.along(i, pi, a);
        }
    }
    s.here = here;
    s.cost.clear();
    for &(q, _) in touched {
        let c = (0..dims)
            .map(|i| s.digit_cost[sep.digit_start(i) + sep.coord(q, i) as usize])
            .sum();
        s.cost.push(c);
    }
    for i in 0..dims {
        let start = sep.digit_start(i);
        for &c in &s.digits[i] {
            s.agg[start + c as usize] = 0;
        }
        s.digits[i].clear();
    }
}
