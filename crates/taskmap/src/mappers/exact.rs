//! Exact static mapping by branch and bound: the mapping of least f_C under the balance or
//! capacity rule, for small instances, with a proven lower bound when a limit stops it.
//!
//! Tasks are placed one at a time in a fixed order: the task of largest weighted degree
//! first (after the fixed tasks), then always
//! the task with the most edge weight to the tasks already placed (ties: larger weighted
//! degree, then smaller id), so that costs show early. Each node keeps, for every task
//! still to place and every PE, the cost its edges to the placed tasks would have there;
//! the node's bound is the cost so far plus, for every task still to place, the least such
//! cost over the PEs it still fits on (edges between two unplaced tasks count 0). A node
//! whose bound reaches the best mapping found is cut, and so is one where a task fits
//! nowhere. The children are tried cheapest first, and only one child per class of PEs
//! that a symmetry of the node maps onto each other: empty PEs the target cannot tell
//! apart (the same distances to every other PE, the same load limits), and the symmetries
//! of a mesh, torus or hypercube of at most 64 PEs (reflections, rotations, relabelled
//! axes of equal size, XOR masks) that fix every PE already used. The search starts from
//! the multilevel mapper's mapping when it respects the constraints.
//!
//! When the node limit, the time limit or a stop request ends the search early, the best
//! mapping found is returned, and the proven lower bound is the least bound of the nodes
//! left unexplored (at most the best f_C). [`RunContext::optimality`] carries both.

use serde::{Deserialize, Serialize};
use taskmap_arch::{Architecture, PeId, Shape};

use crate::error::Error;
use crate::mapper::{Mapper, Optimality, RunContext};
use crate::mapping::Mapping;
use crate::multilevel::config::MultilevelMapper;
use crate::problem::Problem;
use crate::registry::{ParamDoc, Params};

/// Largest number of tasks the exact search takes.
pub const EXACT_MAX_TASKS: usize = 64;
/// Largest number of PEs the exact search takes.
pub const EXACT_MAX_PES: u32 = 256;

/// The exact branch-and-bound mapper.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExactMapper {
    /// Nodes of the search tree to visit at most (0: no limit).
    pub nodes: u64,
    /// Whether to start from the multilevel mapper's mapping.
    pub warm_start: bool,
}

impl Default for ExactMapper {
    fn default() -> Self {
        Self {
            nodes: 100_000_000,
            warm_start: true,
        }
    }
}

impl Params for ExactMapper {
    const DOCS: &'static [ParamDoc] = &[
        ParamDoc {
            name: "nodes",
            aliases: &[],
            doc: "search-tree nodes to visit at most; 0 for no limit (default 100000000)",
        },
        ParamDoc {
            name: "warm_start",
            aliases: &["warm-start"],
            doc: "start from the multilevel mapper's mapping when it respects the constraints (default true)",
        },
    ];
}

impl Mapper for ExactMapper {
    fn name(&self) -> &'static str {
        "exact"
    }

    fn honours_deadline(&self) -> bool {
        true
    }

    fn map(&self, problem: &Problem, ctx: &mut RunContext) -> Result<Mapping, Error> {
        problem.check_with_fixed()?;
        let n = problem.graph.num_tasks();
        let k = problem.arch.pe_count();
        if n > EXACT_MAX_TASKS || k > EXACT_MAX_PES {
            return Err(Error::Config(format!(
                "the exact search takes at most {EXACT_MAX_TASKS} tasks and {EXACT_MAX_PES} PEs \
                 (this problem has {n} tasks and {k} PEs)"
            )));
        }
        let mut s = Search::new(problem);
        if let Some(i) = s.load.iter().zip(&s.limit).position(|(l, m)| l > m) {
            return Err(Error::Config(format!(
                "the fixed tasks alone put PE {} above its load limit for vertex weight {} ({} > {})",
                i / s.ncon,
                i % s.ncon,
                s.load[i],
                s.limit[i]
            )));
        }
        if self.warm_start {
            let start = ctx.timed("warm start", |ctx| {
                MultilevelMapper::default().map(problem, ctx)
            })?;
            s.offer(start.as_slice());
        }
        s.node_limit = if self.nodes == 0 {
            u64::MAX
        } else {
            self.nodes
        };
        ctx.timed("branch and bound", |ctx| s.run(ctx));
        let Some(best) = s.best_map.clone() else {
            return Err(if s.stopped {
                Error::Config(format!(
                    "the exact search stopped after {} nodes without finding a mapping that \
                     respects the constraints",
                    s.visited
                ))
            } else {
                Error::Config(
                    "no mapping respects the constraints (the exact search tried them all)".into(),
                )
            });
        };
        let lower = if s.stopped {
            s.open_bound.min(s.best)
        } else {
            s.best
        };
        ctx.optimality = Some(Optimality {
            comm_cost: s.best,
            lower_bound: lower,
            optimal: lower == s.best,
            nodes: s.visited,
        });
        Ok(Mapping::new(best.into_iter().map(PeId).collect()))
    }
}

const NONE: u32 = u32::MAX;

/// The state of the search.
struct Search<'a> {
    problem: &'a Problem,
    n: usize,
    k: usize,
    ncon: usize,
    /// `k x k` distances.
    dist: Vec<u64>,
    /// Load limit of every PE and constraint, at `p * ncon + c`.
    limit: Vec<u64>,
    /// The class of every PE: PEs of one class are interchangeable while empty.
    class: Vec<u32>,
    /// Tasks in placement order (fixed tasks are placed before the search).
    order: Vec<u32>,
    /// The PE of every task, `NONE` while unplaced.
    pe: Vec<u32>,
    /// Tasks on every PE.
    count: Vec<u32>,
    /// Load of every PE and constraint.
    load: Vec<u64>,
    /// For every task and PE, the cost of the task's edges to placed tasks if it went
    /// there, at `t * k + p`.
    partial: Vec<u64>,
    /// f_C of the placed tasks.
    cost: u64,
    best: u64,
    best_map: Option<Vec<u32>>,
    visited: u64,
    node_limit: u64,
    stopped: bool,
    /// The least bound of the nodes left unexplored when the search stopped early.
    open_bound: u64,
    /// Inner nodes whose bound was computed (the clock is read every 64).
    ticks: u64,
    /// Every task's neighbours, heaviest edge first.
    heavy: Vec<Vec<(u64, u32)>>,
    /// The weight of every task when all tasks weigh the same on every constraint (then a
    /// PE's room is a number of tasks), else `None`.
    unit: Option<Vec<u64>>,
    /// The least distance between two distinct PEs.
    dmin: u64,
    /// Permutations of the PEs that keep every distance and load limit (not the
    /// identity).
    syms: Vec<Vec<u32>>,
}

impl<'a> Search<'a> {
    fn new(problem: &'a Problem) -> Self {
        let g = &problem.graph;
        let (n, k, ncon) = (g.num_tasks(), problem.arch.pe_count() as usize, g.ncon());
        let mut dist = vec![0u64; k * k];
        for a in 0..k {
            problem
                .arch
                .distances_from(PeId(a as u32), &mut dist[a * k..(a + 1) * k]);
        }
        let mut limit = vec![0u64; k * ncon];
        for c in 0..ncon {
            for (p, m) in problem.max_loads(c).into_iter().enumerate() {
                limit[p * ncon + c] = m;
            }
        }
        // Interchangeable PEs: equal limits and equal distances to every third PE.
        let mut class = vec![NONE; k];
        let mut next = 0;
        for p in 0..k {
            if class[p] != NONE {
                continue;
            }
            class[p] = next;
            for q in p + 1..k {
                let same = class[q] == NONE
                    && limit[p * ncon..(p + 1) * ncon] == limit[q * ncon..(q + 1) * ncon]
                    && (0..k).all(|r| r == p || r == q || dist[p * k + r] == dist[q * k + r]);
                if same {
                    class[q] = next;
                }
            }
            next += 1;
        }
        let mut s = Search {
            problem,
            n,
            k,
            ncon,
            dist,
            limit,
            class,
            order: Vec::with_capacity(n),
            pe: vec![NONE; n],
            count: vec![0; k],
            load: vec![0; k * ncon],
            partial: vec![0; n * k],
            cost: 0,
            best: u64::MAX,
            best_map: None,
            visited: 0,
            node_limit: u64::MAX,
            stopped: false,
            open_bound: u64::MAX,
            ticks: 0,
            heavy: (0..n as u32)
                .map(|t| {
                    let mut v: Vec<(u64, u32)> = g
                        .neighbors(t)
                        .iter()
                        .zip(g.edge_weights(t))
                        .map(|(&v, &w)| (w, v))
                        .collect();
                    v.sort_unstable_by(|a, b| b.cmp(a));
                    v
                })
                .collect(),
            unit: (n > 0)
                .then(|| g.vertex_weights(0).to_vec())
                .filter(|w0| (0..n as u32).all(|t| g.vertex_weights(t) == &w0[..])),
            dmin: 0,
            syms: Vec::new(),
        };
        s.dmin = (0..k)
            .flat_map(|a| (0..k).filter(move |&b| b != a).map(move |b| (a, b)))
            .map(|(a, b)| s.dist[a * k + b])
            .min()
            .unwrap_or(0);
        s.syms = symmetries(problem.arch.as_ref())
            .into_iter()
            .filter(|g| {
                (0..k).all(|a| {
                    let ga = g[a] as usize;
                    s.limit[a * ncon..(a + 1) * ncon] == s.limit[ga * ncon..(ga + 1) * ncon]
                        && (0..k).all(|b| s.dist[ga * k + g[b] as usize] == s.dist[a * k + b])
                })
            })
            .collect();
        for t in 0..n as u32 {
            if let Some(p) = problem.fixed_pe(t) {
                s.place(t, p);
            }
        }
        s.order = s.placement_order();
        s
    }

    /// The free tasks, heaviest-connected to the placed ones first.
    fn placement_order(&self) -> Vec<u32> {
        let g = &self.problem.graph;
        let wdeg = |t: u32| {
            g.edge_weights(t)
                .iter()
                .map(|&w| u128::from(w))
                .sum::<u128>()
        };
        let mut to_placed = vec![0u128; self.n];
        let mut done: Vec<bool> = self.pe.iter().map(|&p| p != NONE).collect();
        for t in 0..self.n as u32 {
            if done[t as usize] {
                for (&v, &w) in g.neighbors(t).iter().zip(g.edge_weights(t)) {
                    to_placed[v as usize] += u128::from(w);
                }
            }
        }
        let mut order = Vec::new();
        while let Some(t) = (0..self.n as u32)
            .filter(|&t| !done[t as usize])
            .max_by_key(|&t| (to_placed[t as usize], wdeg(t), std::cmp::Reverse(t)))
        {
            done[t as usize] = true;
            order.push(t);
            for (&v, &w) in g.neighbors(t).iter().zip(g.edge_weights(t)) {
                to_placed[v as usize] += u128::from(w);
            }
        }
        order
    }

    #[inline]
    fn fits(&self, t: u32, p: usize) -> bool {
        let w = self.problem.graph.vertex_weights(t);
        (0..self.ncon).all(|c| self.load[p * self.ncon + c] + w[c] <= self.limit[p * self.ncon + c])
    }

    fn place(&mut self, t: u32, p: u32) {
        let (k, ncon) = (self.k, self.ncon);
        let g = &self.problem.graph;
        self.cost += self.partial[t as usize * k + p as usize];
        self.pe[t as usize] = p;
        self.count[p as usize] += 1;
        for (c, &w) in g.vertex_weights(t).iter().enumerate() {
            self.load[p as usize * ncon + c] += w;
        }
        for (&v, &w) in g.neighbors(t).iter().zip(g.edge_weights(t)) {
            let row = &self.dist[p as usize * k..(p as usize + 1) * k];
            for (x, &d) in self.partial[v as usize * k..(v as usize + 1) * k]
                .iter_mut()
                .zip(row)
            {
                *x += w * d;
            }
        }
    }

    fn unplace(&mut self, t: u32) {
        let (k, ncon) = (self.k, self.ncon);
        let g = &self.problem.graph;
        let p = self.pe[t as usize];
        for (&v, &w) in g.neighbors(t).iter().zip(g.edge_weights(t)) {
            let row = &self.dist[p as usize * k..(p as usize + 1) * k];
            for (x, &d) in self.partial[v as usize * k..(v as usize + 1) * k]
                .iter_mut()
                .zip(row)
            {
                *x -= w * d;
            }
        }
        for (c, &w) in g.vertex_weights(t).iter().enumerate() {
            self.load[p as usize * ncon + c] -= w;
        }
        self.count[p as usize] -= 1;
        self.pe[t as usize] = NONE;
        self.cost -= self.partial[t as usize * k + p as usize];
    }

    /// Takes a complete mapping as the best one if it respects the limits and is cheaper.
    fn offer(&mut self, map: &[PeId]) {
        let fixed_ok = (0..self.n as u32).all(|t| {
            self.problem
                .fixed_pe(t)
                .is_none_or(|p| p == map[t as usize].0)
        });
        let mut load = vec![0u64; self.k * self.ncon];
        let g = &self.problem.graph;
        for (t, p) in map.iter().enumerate() {
            for (c, &w) in g.vertex_weights(t as u32).iter().enumerate() {
                load[p.idx() * self.ncon + c] += w;
            }
        }
        if !fixed_ok || load.iter().zip(&self.limit).any(|(l, m)| l > m) {
            return;
        }
        let cost = crate::metrics::comm_cost(g, self.problem.arch.as_ref(), map);
        if cost < self.best {
            self.best = cost;
            self.best_map = Some(map.iter().map(|p| p.0).collect());
        }
    }

    /// A lower bound on the f_C of every completion of this node; `None` when an unplaced
    /// task fits on no PE.
    ///
    /// The cost so far, plus for every unplaced task `u` the least over the PEs `q` it
    /// fits on of: the cost of its edges to the placed tasks if it went to `q`, plus (when
    /// all tasks weigh the same, so that a PE's room is a number of tasks `r(q)`) half of
    /// `dmin` times the weight of its edges to unplaced tasks beyond the `r(q) - 1`
    /// heaviest ones. On `q`, `u` shares its PE with at most `r(q) - 1` unplaced
    /// neighbours, so its other unplaced edges are cut and cost at least `dmin` each; each
    /// such edge is counted from both ends, hence the half.
    fn bound(&self, depth: usize) -> Option<u64> {
        let room: Vec<u64> = match &self.unit {
            Some(w) => (0..self.k)
                .map(|p| {
                    (0..self.ncon)
                        .filter(|&c| w[c] > 0)
                        .map(|c| {
                            let i = p * self.ncon + c;
                            (self.limit[i] - self.load[i].min(self.limit[i])) / w[c]
                        })
                        .min()
                        .unwrap_or(u64::MAX)
                })
                .collect(),
            None => Vec::new(),
        };
        // Twice the bound, so that the halves stay exact.
        let mut twice = 2 * u128::from(self.cost);
        let mut lighter = Vec::new();
        for &t in &self.order[depth..] {
            // lighter[j]: the weight of t's unplaced edges beyond its j heaviest.
            lighter.clear();
            if !room.is_empty() {
                let mut rest: u128 = self.heavy[t as usize]
                    .iter()
                    .filter(|&&(_, v)| self.pe[v as usize] == NONE)
                    .map(|&(w, _)| u128::from(w))
                    .sum();
                lighter.push(rest);
                for &(w, v) in &self.heavy[t as usize] {
                    if self.pe[v as usize] == NONE {
                        rest -= u128::from(w);
                        lighter.push(rest);
                    }
                }
            }
            let row = &self.partial[t as usize * self.k..(t as usize + 1) * self.k];
            let least = (0..self.k)
                .filter(|&p| self.fits(t, p))
                .map(|p| {
                    let mut c = 2 * u128::from(row[p]);
                    let shared = room.get(p).map(|r| r.saturating_sub(1));
                    if let Some(&l) = shared.and_then(|j| lighter.get(usize::try_from(j).ok()?)) {
                        c += l * u128::from(self.dmin);
                    }
                    c
                })
                .min()?;
            twice += least;
        }
        Some(u64::try_from(twice / 2).unwrap_or(u64::MAX))
    }

    fn run(&mut self, ctx: &mut RunContext) {
        // The symmetries that fix the PEs of the fixed tasks.
        let stab: Vec<u32> = (0..self.syms.len() as u32)
            .filter(|&i| {
                let g = &self.syms[i as usize];
                (0..self.k).all(|p| self.count[p] == 0 || g[p] as usize == p)
            })
            .collect();
        self.descend(0, &stab, ctx);
    }

    /// Explores the subtree below the first `depth` free tasks placed; `stab` holds the
    /// symmetries that fix every PE used.
    fn descend(&mut self, depth: usize, stab: &[u32], ctx: &RunContext) {
        let Some(bound) = self.bound(depth) else {
            return;
        };
        if bound >= self.best {
            return;
        }
        if depth == self.order.len() {
            // A complete mapping, cheaper than the best: kept even at a limit.
            self.best = self.cost;
            self.best_map = Some(self.pe.clone());
            return;
        }
        self.ticks += 1;
        if self.stopped || self.visited >= self.node_limit || self.out_of_time(ctx) {
            self.stopped = true;
            self.open_bound = self.open_bound.min(bound);
            return;
        }
        self.visited += 1;
        let t = self.order[depth];
        // Classes of PEs a symmetry of this node maps onto each other (union-find).
        let mut root: Vec<u32> = (0..self.k as u32).collect();
        fn find(root: &mut [u32], mut p: u32) -> u32 {
            while root[p as usize] != p {
                root[p as usize] = root[root[p as usize] as usize];
                p = root[p as usize];
            }
            p
        }
        let mut first_empty = vec![NONE; self.k];
        for p in 0..self.k {
            if self.count[p] == 0 {
                let c = self.class[p] as usize;
                if first_empty[c] == NONE {
                    first_empty[c] = p as u32;
                } else {
                    let (a, b) = (find(&mut root, first_empty[c]), find(&mut root, p as u32));
                    root[a.max(b) as usize] = a.min(b);
                }
            }
        }
        for &i in stab {
            for (p, &q) in self.syms[i as usize].iter().enumerate() {
                let (a, b) = (find(&mut root, p as u32), find(&mut root, q));
                root[a.max(b) as usize] = a.min(b);
            }
        }
        let mut taken = vec![false; self.k];
        let mut children: Vec<(u64, u32)> = Vec::with_capacity(self.k);
        for p in 0..self.k {
            if !self.fits(t, p)
                || std::mem::replace(&mut taken[find(&mut root, p as u32) as usize], true)
            {
                continue;
            }
            children.push((self.partial[t as usize * self.k + p], p as u32));
        }
        children.sort_unstable();
        let mut child_stab = Vec::new();
        for &(_, p) in &children {
            if self.stopped {
                // The children not tried stay open: their bounds are at least this node's.
                self.open_bound = self.open_bound.min(bound);
                return;
            }
            child_stab.clear();
            child_stab.extend(
                stab.iter()
                    .copied()
                    .filter(|&i| self.syms[i as usize][p as usize] == p),
            );
            self.place(t, p);
            let cs = std::mem::take(&mut child_stab);
            self.descend(depth + 1, &cs, ctx);
            child_stab = cs;
            self.unplace(t);
        }
    }

    /// Checks the deadline and the stop flag every 64 bounds computed.
    fn out_of_time(&self, ctx: &RunContext) -> bool {
        self.ticks.is_multiple_of(64) && ctx.out_of_time()
    }
}

/// Most symmetries taken from a target's shape.
const MAX_SYMMETRIES: usize = 4096;

/// Candidate symmetries of a mesh, torus or hypercube of at most 64 PEs, from its shape
/// (the caller keeps those that preserve its distances and load limits): a mesh's
/// reflections along each axis, a torus's rotations and reflections, and the relabelling
/// of axes of equal size; a hypercube's XOR masks and relabelled axes. Fewer (no axis
/// relabelling, then no rotation) where the full group would exceed
/// [`MAX_SYMMETRIES`]. Empty for other targets.
fn symmetries(arch: &dyn Architecture) -> Vec<Vec<u32>> {
    let k = arch.pe_count() as usize;
    if k > 64 {
        return Vec::new();
    }
    let (dims, torus): (Vec<u32>, bool) = match arch.shape() {
        Shape::Grid { dims, torus } => (dims.to_vec(), torus),
        Shape::Hypercube { dim } => (vec![2; dim as usize], false),
        Shape::Other => return Vec::new(),
    };
    let d = dims.len();
    if d > 12 {
        return Vec::new();
    }
    // Axis relabellings that keep the sizes.
    let mut perms: Vec<Vec<usize>> = Vec::new();
    let mut cur: Vec<usize> = Vec::new();
    fn extend(dims: &[u32], cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if out.len() > MAX_SYMMETRIES {
            return;
        }
        if cur.len() == dims.len() {
            out.push(cur.clone());
            return;
        }
        for a in 0..dims.len() {
            if !cur.contains(&a) && dims[a] == dims[cur.len()] {
                cur.push(a);
                extend(dims, cur, out);
                cur.pop();
            }
        }
    }
    extend(&dims, &mut cur, &mut perms);
    let shifts: u64 = if torus {
        dims.iter().map(|&x| u64::from(x)).product()
    } else {
        1
    };
    let flips = 1u64 << d.min(20);
    if (perms.len() as u64) * shifts * flips > MAX_SYMMETRIES as u64 {
        perms.truncate(1);
    }
    let shifts = if shifts * flips > MAX_SYMMETRIES as u64 {
        1
    } else {
        shifts
    };
    if flips > MAX_SYMMETRIES as u64 {
        return Vec::new();
    }
    let coords = |mut p: usize| -> Vec<u32> {
        dims.iter()
            .map(|&x| {
                let c = (p % x as usize) as u32;
                p /= x as usize;
                c
            })
            .collect()
    };
    let id = |c: &[u32]| -> u32 {
        c.iter()
            .zip(&dims)
            .rev()
            .fold(0u64, |acc, (&x, &s)| acc * u64::from(s) + u64::from(x)) as u32
    };
    let mut out = Vec::new();
    for perm in &perms {
        for shift in 0..shifts {
            let sh = coords(shift as usize);
            for flip in 0..flips {
                let g: Vec<u32> = (0..k)
                    .map(|p| {
                        let c = coords(p);
                        let mut n = vec![0u32; d];
                        for (a, &x) in c.iter().enumerate() {
                            let s = dims[a];
                            let mut y = (x + sh[a]) % s;
                            if flip >> a & 1 == 1 {
                                y = s - 1 - y;
                            }
                            n[perm[a]] = y;
                        }
                        id(&n)
                    })
                    .collect();
                if g.iter().enumerate().any(|(p, &q)| q as usize != p) {
                    out.push(g);
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}
