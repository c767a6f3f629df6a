//! Subgraph placement, Algorithm 2 of Berger et al. 2014, and an improved variant.
//!
//! **`subgraph`** (the paper, literally):
//! 1. The task with the fewest neighbours (ties: lowest id) goes to the first PE it fits on
//!    (PE 0).
//! 2. While tasks are unplaced: `C_r` = the largest remaining capacity of any PE for
//!    resource `r`; a subgraph is grown by a breadth-first traversal of the unplaced tasks
//!    from a "promising" task until its size reaches `size_factor · C_r` (the paper found
//!    `1/2` best; at least one task); the subgraph goes to the PE with the strongest affinity
//!    `α(V, n) = Σ_{t ∈ V, t' on n} q_tt'` among the PEs with room for it (ties: lowest id).
//! 3. The paper does not define the promising task; we take the first unplaced task left
//!    in the previous traversal's queue (the tasks next to the last subgraph), else the
//!    unplaced task with the fewest neighbours. A traversal stops at the end of a connected
//!    component.
//!
//! The choice of PE ignores distances, as the paper says ("even not taking profit from the
//! node distances"). With several resources, when no PE has room for the whole subgraph, it
//! loses its last tasks until one has.
//!
//! **`subgraph-dist`** (ours): the PE is chosen by the distance affinity
//! `β(V, n) = Σ_{t ∈ V, t' on n'} q_tt' / (2·d(n, n') + 1)`, so a subgraph lands next to its
//! placed neighbours even when their PEs are full.
//!
//! Complexity: O(n + m) for the traversals; per subgraph, O(ncon) for `C` and O(h·ncon +
//! log k) for the choice of PE (h = PEs next to the subgraph), from trees of the remaining
//! capacities (the first PE with room: the leftmost whose first resource has room, checked
//! for the others); `subgraph-dist` O(k·h) per subgraph and O(k²) for its distance table.

use serde::{Deserialize, Serialize};
use taskmap_arch::PeId;
use taskmap_graph::TaskGraph;

use crate::error::Error;
use crate::mapper::{Mapper, RunContext};
use crate::mappers::berger::common::{check_pes, tasks_by_degree, BergerDist, Loads};
use crate::mappers::berger::gtwp::affinity_key;
use crate::mapping::Mapping;
use crate::max_tree::MaxTree;
use crate::problem::Problem;
use crate::registry::{ParamDoc, Params};

const UNPLACED: u32 = u32::MAX;

/// The Subgraph placement mapper with the paper's affinity α (`subgraph`), and its
/// parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SubgraphMapper {
    /// Subgraph size as a fraction of the largest remaining capacity (paper: 0.5).
    #[serde(alias = "factor")]
    pub size_factor: f64,
}

impl Default for SubgraphMapper {
    fn default() -> Self {
        Self { size_factor: 0.5 }
    }
}

impl Params for SubgraphMapper {
    const DOCS: &'static [ParamDoc] = &[ParamDoc {
        name: "size_factor",
        aliases: &["factor"],
        doc: "subgraph size as a fraction of the largest remaining capacity, in (0, 1]",
    }];

    fn validate(&self) -> Result<(), String> {
        if !(self.size_factor > 0.0 && self.size_factor <= 1.0) {
            return Err(format!(
                "size_factor must be in (0, 1], got {}",
                self.size_factor
            ));
        }
        Ok(())
    }
}

impl Mapper for SubgraphMapper {
    fn name(&self) -> &'static str {
        "subgraph"
    }

    fn map(&self, problem: &Problem, ctx: &mut RunContext) -> Result<Mapping, Error> {
        map_subgraphs(problem, ctx, self, false)
    }
}

/// Subgraph placement choosing the PE by distance affinity β (`subgraph-dist`, ours);
/// the same parameters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SubgraphDistMapper(pub SubgraphMapper);

impl Params for SubgraphDistMapper {
    const DOCS: &'static [ParamDoc] = SubgraphMapper::DOCS;

    fn validate(&self) -> Result<(), String> {
        self.0.validate()
    }
}

impl Mapper for SubgraphDistMapper {
    fn name(&self) -> &'static str {
        "subgraph-dist"
    }

    fn map(&self, problem: &Problem, ctx: &mut RunContext) -> Result<Mapping, Error> {
        map_subgraphs(problem, ctx, &self.0, true)
    }
}

/// Runs either variant.
fn map_subgraphs(
    problem: &Problem,
    ctx: &mut RunContext,
    cfg: &SubgraphMapper,
    distance_affinity: bool,
) -> Result<Mapping, Error> {
    problem.check()?;
    let alg = if distance_affinity {
        "subgraph-dist"
    } else {
        "subgraph"
    };
    cfg.validate()
        .map_err(|e| Error::Config(format!("{alg}: {e}")))?;
    let pes = ctx.timed("subgraph", |_| {
        subgraph(problem, cfg, alg, distance_affinity)
    })?;
    Ok(Mapping::new(pes.into_iter().map(PeId).collect()))
}

fn subgraph(
    problem: &Problem,
    cfg: &SubgraphMapper,
    alg: &str,
    distance_affinity: bool,
) -> Result<Vec<u32>, Error> {
    let g = &problem.graph;
    let n = g.num_tasks();
    let ncon = g.ncon();
    let mut loads = Loads::new(problem, alg)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let k = problem.arch.pe_count();
    let dist = if distance_affinity {
        check_pes(problem, alg)?;
        Some(BergerDist::new(problem.arch.as_ref()))
    } else {
        None
    };
    let mut pe_of = vec![UNPLACED; n];
    let mut placed = 0usize;

    // Tasks by increasing degree (ties: id), for the starting tasks once a traversal has
    // left no unplaced task behind; built on first use.
    let mut by_degree: Vec<u32> = Vec::new();
    let mut deg_ptr = 0usize;

    // Line 12-13: the task of lowest degree (ties: lowest id) on the first PE with room.
    let v0 = (0..n as u32).min_by_key(|&t| g.degree(t)).unwrap_or(0);
    let mut free = FreeCapacity::new(&loads, k);
    let p0 = free
        .first_fit(&loads, g.vertex_weights(v0))
        .ok_or_else(|| loads.stuck(alg, v0, g.vertex_weights(v0), 0, n))?;
    pe_of[v0 as usize] = p0;
    loads.add(p0, g.vertex_weights(v0));
    free.update(&loads, p0);
    placed += 1;
    let mut frontier: Vec<u32> = g.neighbors(v0).to_vec();

    let mut tr = Traversal::new(n, ncon, k as usize);
    let mut limit = vec![0u64; ncon];

    while placed < n {
        // Line 15: C = the largest remaining capacity; the subgraph size is factor · C.
        for r in 0..ncon {
            // Non-negative, so the cast rounds down.
            limit[r] = (cfg.size_factor * free.max(r)) as u64;
        }
        // The promising task.
        let start = match frontier
            .iter()
            .copied()
            .find(|&t| pe_of[t as usize] == UNPLACED)
        {
            Some(t) => t,
            None => {
                if by_degree.is_empty() {
                    by_degree = tasks_by_degree(g);
                }
                while pe_of[by_degree[deg_ptr] as usize] != UNPLACED {
                    deg_ptr += 1;
                }
                by_degree[deg_ptr]
            }
        };
        // Line 16: breadth-first traversal of the unplaced tasks up to the size.
        let mut taken = tr.grow(g, start, &limit, &pe_of);
        // Line 17: affinity of the subgraph to every PE, best PE with room.
        let target = loop {
            if taken == 0 {
                let v = tr.queue[0];
                return Err(loads.stuck(alg, v, g.vertex_weights(v), placed, n));
            }
            let choice = match &dist {
                None => tr.best_by_alpha(&loads, &free),
                Some(d) => tr.best_by_beta(&loads, k, d),
            };
            match choice {
                Some(p) => break p,
                None => {
                    // No PE has room for the whole subgraph: drop its last task.
                    taken -= 1;
                    tr.drop_last(g, taken, &pe_of);
                }
            }
        };
        clear_affinity(&mut tr.acc, &mut tr.touched);
        // Line 18: place the subgraph.
        for &t in &tr.queue[..taken] {
            pe_of[t as usize] = target;
            loads.add(target, g.vertex_weights(t));
        }
        free.update(&loads, target);
        placed += taken;
        frontier.clear();
        frontier.extend_from_slice(&tr.queue[taken..]);
    }
    Ok(pe_of)
}

/// The breadth-first traversal that grows a subgraph, and the subgraph's affinity to the
/// PEs of its placed neighbours.
struct Traversal {
    /// `stamp` marks the tasks the current traversal has seen.
    seen: Vec<u32>,
    stamp: u32,
    /// The tasks seen, in order; the first `taken` form the subgraph.
    queue: Vec<u32>,
    /// The subgraph's weight per constraint.
    size: Vec<u64>,
    /// Affinity of the subgraph to every PE, and the PEs it touches (each once).
    acc: Vec<(u64, bool)>,
    touched: Vec<u32>,
}

impl Traversal {
    fn new(n: usize, ncon: usize, k: usize) -> Self {
        Self {
            seen: vec![0; n],
            stamp: 0,
            queue: Vec::new(),
            size: vec![0; ncon],
            acc: vec![(0, false); k],
            touched: Vec::new(),
        }
    }

    /// Traverses the unplaced tasks from `start` until the subgraph reaches `limit` in
    /// every constraint or the next task would exceed it in one (the first task is always
    /// taken); returns how many tasks it took.
    fn grow(&mut self, g: &TaskGraph, start: u32, limit: &[u64], pe_of: &[u32]) -> usize {
        let ncon = self.size.len();
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.iter_mut().for_each(|s| *s = 0);
            self.stamp = 1;
        }
        self.queue.clear();
        self.queue.push(start);
        self.seen[start as usize] = self.stamp;
        self.size.iter_mut().for_each(|s| *s = 0);
        let mut taken = 0usize;
        while taken < self.queue.len() {
            let u = self.queue[taken];
            let w = g.vertex_weights(u);
            if taken > 0 && (0..ncon).any(|r| self.size[r] + w[r] > limit[r]) {
                break;
            }
            for r in 0..ncon {
                self.size[r] += w[r];
            }
            taken += 1;
            // One pass over the edges of u: unplaced neighbours join the traversal,
            // placed ones add to the affinity of their PE.
            for (&x, &q) in g.neighbors(u).iter().zip(g.edge_weights(u)) {
                let p = pe_of[x as usize];
                if p == UNPLACED {
                    if self.seen[x as usize] != self.stamp {
                        self.seen[x as usize] = self.stamp;
                        self.queue.push(x);
                    }
                } else {
                    add_affinity(&mut self.acc, &mut self.touched, p, q);
                }
            }
            if (0..ncon).all(|r| self.size[r] >= limit[r]) {
                break;
            }
        }
        taken
    }

    /// Whether the subgraph fits on PE `p`.
    fn fits(&self, p: u32, loads: &Loads) -> bool {
        self.size
            .iter()
            .enumerate()
            .all(|(r, &s)| s <= loads.remaining(p, r))
    }

    /// The paper's choice: the PE of highest affinity α among those with room (ties: the
    /// lowest id), else the first PE with room.
    fn best_by_alpha(&self, loads: &Loads, free: &FreeCapacity) -> Option<u32> {
        let mut best: Option<(u64, u32)> = None;
        for &p in &self.touched {
            if self.fits(p, loads) {
                let a = self.acc[p as usize].0;
                if best.is_none_or(|(ba, bp)| a > ba || (a == ba && p < bp)) {
                    best = Some((a, p));
                }
            }
        }
        best.map(|(_, p)| p)
            .or_else(|| free.first_fit(loads, &self.size))
    }

    /// Ours: the PE of highest distance affinity β among those with room.
    fn best_by_beta(&self, loads: &Loads, k: u32, d: &BergerDist<'_>) -> Option<u32> {
        let mut best: Option<(u64, u32)> = None;
        for p in 0..k {
            if !self.fits(p, loads) {
                continue;
            }
            let b: f64 = self
                .touched
                .iter()
                .map(|&h| self.acc[h as usize].0 as f64 * d.affinity_weight(h, p))
                .sum();
            let key = affinity_key(b);
            if best.is_none_or(|(bk, _)| key > bk) {
                best = Some((key, p));
            }
        }
        best.map(|(_, p)| p)
    }

    /// Drops the subgraph's task at `taken` (its last) and sums the affinities of the
    /// others again.
    fn drop_last(&mut self, g: &TaskGraph, taken: usize, pe_of: &[u32]) {
        let w = g.vertex_weights(self.queue[taken]);
        for (s, &w) in self.size.iter_mut().zip(w) {
            *s -= w;
        }
        clear_affinity(&mut self.acc, &mut self.touched);
        for &t in &self.queue[..taken] {
            for (&u, &q) in g.neighbors(t).iter().zip(g.edge_weights(t)) {
                let p = pe_of[u as usize];
                if p != UNPLACED {
                    add_affinity(&mut self.acc, &mut self.touched, p, q);
                }
            }
        }
    }
}

/// Adds an edge of weight `q` towards PE `p` to the affinities of the subgraph.
#[inline]
fn add_affinity(acc: &mut [(u64, bool)], touched: &mut Vec<u32>, p: u32, q: u64) {
    let a = &mut acc[p as usize];
    if !a.1 {
        a.1 = true;
        touched.push(p);
    }
    a.0 += q;
}

/// Resets the affinities of the touched PEs to zero.
fn clear_affinity(acc: &mut [(u64, bool)], touched: &mut Vec<u32>) {
    for &p in touched.iter() {
        acc[p as usize] = (0, false);
    }
    touched.clear();
}

/// The remaining capacity of every PE, one tree of maxima per resource: the largest in
/// O(1), the first PE with room in O(log k) (for one resource; with several, the
/// candidates with room for the first are checked in order).
struct FreeCapacity {
    trees: Vec<MaxTree>,
}

impl FreeCapacity {
    fn new(loads: &Loads, k: u32) -> Self {
        let trees = (0..loads.ncon)
            .map(|r| {
                let mut t = MaxTree::new(k as usize, 0.0);
                let free: Vec<f64> = (0..k).map(|p| loads.remaining(p, r) as f64).collect();
                t.rebuild(&free);
                t
            })
            .collect();
        Self { trees }
    }

    /// After the loads of `pe` changed.
    fn update(&mut self, loads: &Loads, pe: u32) {
        for (r, t) in self.trees.iter_mut().enumerate() {
            t.set(pe as usize, loads.remaining(pe, r) as f64);
        }
    }

    /// The largest remaining capacity of resource `r` (as the `f64` it is used as).
    fn max(&self, r: usize) -> f64 {
        self.trees[r].max().max(0.0)
    }

    /// The lowest PE with room for weights `w`. The trees hold the capacities as `f64`,
    /// which rounds monotonically, so no PE with room is skipped; each candidate is checked
    /// exactly.
    fn first_fit(&self, loads: &Loads, w: &[u64]) -> Option<u32> {
        let mut from = 0;
        loop {
            let p = self.trees[0].first_at_least(from, w[0] as f64)? as u32;
            if (0..loads.ncon).all(|r| w[r] <= loads.remaining(p, r)) {
                return Some(p);
            }
            from = p as usize + 1;
        }
    }
}
