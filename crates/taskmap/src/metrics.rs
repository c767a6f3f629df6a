//! Evaluation of a mapping: Scotch's metrics (`gmtst`) and more.
//!
//! For a task graph S, a target T and a mapping τ (see `docs/cost-models.md`):
//! * `f_C = Σ_{e={u,v}} w(e) · dist(τ(u), τ(v))`, each undirected edge once; `J = 2·f_C`
//!   (KaHIP, VieM, SharedMap); Berger et al.'s objective sums ordered pairs, `2·f_C` for a
//!   symmetric bandwidth.
//! * dilation `dist(τ(u), τ(v))`, `μ_dil = Σ_e dil(e) / |E|`, `μ_exp = f_C / Σ_e w(e)`,
//!   `δ_exp = μ_exp / μ_dil`.
//! * per vertex-weight constraint: loads per PE, `μ_map = Σ_v w_S(v) / Σ_p w_T(p)`,
//!   `δ_map = Σ_p |load(p)/w_T(p) − μ_map| / Σ_v w_S(v)`, and the imbalance
//!   `max_p load(p)/cap_share(p) − 1` with `cap_share(p) = w_T(p)/Σ w_T · Σ w_S`.

use std::collections::BTreeMap;

use serde::Serialize;
use taskmap_arch::{Architecture, PeId};
use taskmap_graph::TaskGraph;

use crate::error::Error;
use crate::mapping::Mapping;
use crate::problem::{balance_bound, ceil_shares, Capacities};

/// What to check besides computing the metrics.
#[derive(Clone, Debug, Default)]
pub struct EvalOptions {
    /// Check balance for this ε (load(p) ≤ ⌊(1+ε)·⌈cap_share(p)⌉⌋ for every PE).
    pub epsilon: Option<f64>,
    /// Check these hard capacities.
    pub capacities: Option<Capacities>,
}

/// Load statistics of one vertex-weight constraint.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LoadStats {
    /// The constraint (vertex weight index).
    pub constraint: usize,
    /// Σ_v w_S(v).
    pub total: u64,
    /// Smallest and largest load of a PE, and the mean over all PEs.
    pub min: u64,
    pub max: u64,
    pub avg: f64,
    /// Smallest and largest of load(p) / cap_share(p).
    pub min_normalised: f64,
    pub max_normalised: f64,
    /// max_p load(p)/cap_share(p) − 1.
    pub imbalance: f64,
    /// μ_map = Σ_v w_S(v) / Σ_p w_T(p).
    pub mu_map: f64,
    /// δ_map = Σ_p |load(p)/w_T(p) − μ_map| / Σ_v w_S(v).
    pub delta_map: f64,
    /// Number of PEs with a load above the ε bound (when ε was given).
    pub overloaded_pes: Option<u32>,
    /// Number of PEs with a load above `⌈cap_share(p)⌉` while some PE holds no task (0 when
    /// every PE is used): work queues on them while others idle, whatever ε allows.
    pub crowded_pes: u32,
    /// Number of PEs above their hard capacity (when capacities were given).
    pub over_capacity_pes: Option<u32>,
    /// The largest excess over a hard capacity.
    pub max_capacity_excess: Option<u64>,
}

/// Communication weight by distance: how much traffic travels how far.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DistanceBin {
    /// The distance between the two PEs.
    pub distance: u64,
    /// Number of edges at that distance.
    pub edges: u64,
    /// Their total weight.
    pub weight: u64,
}

/// How far apart the tasks of one PE are: Scotch's `PartDiam`, over the PEs holding at
/// least one task (all 0 when none does).
///
/// A part's value is found by breadth-first search inside the part, over unweighted
/// edges: from the part's lowest-numbered task, then again from the farthest task found
/// (among equally far tasks, the first one met of smaller degree in the whole graph),
/// until a search finds no farther task. The distances of a part's first component start
/// at 1, so a connected part scores its pseudo-diameter plus 1; every further component
/// (taken in task order) starts one past the value reached so far, so a part scattered in
/// `c` pieces scores the sum over them of (pseudo-diameter + 1).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PartDiameters {
    pub min: u64,
    pub max: u64,
    pub avg: f64,
}

/// Every metric of a mapping.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Evaluation {
    pub tasks: usize,
    pub edges: usize,
    pub pes: u32,
    /// f_C, the communication cost (each undirected edge once).
    pub comm_cost: u64,
    /// J = 2·f_C, as KaHIP, VieM and SharedMap report it.
    pub comm_cost_j: u128,
    /// Berger et al.'s objective Σ_t Σ_t' q_tt'·d: 2·f_C with q symmetric.
    pub berger_objective: u128,
    /// Total weight of the edges between different PEs.
    pub edge_cut: u64,
    /// Number of edges between different PEs.
    pub cut_edges: u64,
    /// Σ_e w(e).
    pub total_edge_weight: u64,
    /// μ_dil: mean dilation over edges (unweighted).
    pub dilation_mean: f64,
    /// Largest dilation of an edge.
    pub dilation_max: u64,
    /// μ_exp = f_C / Σ_e w(e).
    pub expansion_mean: f64,
    /// δ_exp = μ_exp / μ_dil.
    pub expansion_ratio: f64,
    /// Load statistics per constraint.
    pub loads: Vec<LoadStats>,
    /// PEs with at least one task.
    pub pes_used: u32,
    /// Neighbour PEs per PE (distinct PEs it communicates with): min, max, mean, sum.
    pub neighbours_min: u32,
    pub neighbours_max: u32,
    pub neighbours_avg: f64,
    pub neighbours_sum: u64,
    /// Communication weight by distance, by increasing distance.
    pub distance_histogram: Vec<DistanceBin>,
    /// The pseudo-diameters of the parts, as Scotch's `gmtst` prints them (`PartDiam`).
    pub part_diameters: PartDiameters,
    /// The ε checked, if any, and whether every PE and constraint satisfies it.
    pub epsilon: Option<f64>,
    pub balanced: Option<bool>,
    /// Whether every hard capacity holds (when capacities were given).
    pub capacities_respected: Option<bool>,
}

impl Evaluation {
    /// Whether every requested check (ε, capacities) holds.
    pub fn feasible(&self) -> bool {
        self.balanced.unwrap_or(true) && self.capacities_respected.unwrap_or(true)
    }
}

/// The set of PE pairs joined by at least one edge: a k×k bit matrix when it is at most
/// 8 MiB, otherwise a list sorted at the end.
enum PePairs {
    Bits { k: usize, bits: Vec<u64> },
    List { k: usize, pairs: Vec<(u32, u32)> },
}

impl PePairs {
    fn new(k: u32) -> Self {
        let k = k as usize;
        if k * k <= 64 << 20 {
            PePairs::Bits {
                k,
                bits: vec![0; (k * k).div_ceil(64)],
            }
        } else {
            PePairs::List {
                k,
                pairs: Vec::new(),
            }
        }
    }

    #[inline]
    fn insert(&mut self, a: u32, b: u32) {
        let (a, b) = (a.min(b), a.max(b));
        match self {
            PePairs::Bits { k, bits } => {
                let i = a as usize * *k + b as usize;
                bits[i / 64] |= 1 << (i % 64);
            }
            PePairs::List { pairs, .. } => pairs.push((a, b)),
        }
    }

    /// For every PE, the number of distinct other PEs it is paired with.
    fn neighbour_counts(self) -> Vec<u32> {
        match self {
            PePairs::Bits { k, bits } => {
                let mut nbrs = vec![0u32; k];
                for (w, &word) in bits.iter().enumerate() {
                    let mut x = word;
                    while x != 0 {
                        let i = w * 64 + x.trailing_zeros() as usize;
                        x &= x - 1;
                        nbrs[i / k] += 1;
                        nbrs[i % k] += 1;
                    }
                }
                nbrs
            }
            PePairs::List { k, mut pairs } => {
                pairs.sort_unstable();
                pairs.dedup();
                let mut nbrs = vec![0u32; k];
                for (a, b) in pairs {
                    nbrs[a as usize] += 1;
                    nbrs[b as usize] += 1;
                }
                nbrs
            }
        }
    }
}

/// The communication cost f_C alone.
pub fn comm_cost(graph: &TaskGraph, arch: &dyn Architecture, mapping: &[PeId]) -> u64 {
    let mut total = 0u64;
    for u in 0..graph.num_tasks() as u32 {
        let pu = mapping[u as usize];
        for (&v, &w) in graph.neighbors(u).iter().zip(graph.edge_weights(u)) {
            if u < v {
                let pv = mapping[v as usize];
                if pu != pv {
                    total += w * arch.distance(pu, pv);
                }
            }
        }
    }
    total
}

/// Computes every metric of `mapping`. Errors when the mapping does not fit the graph or
/// the target, or the capacities do not fit them.
pub fn evaluate(
    graph: &TaskGraph,
    arch: &dyn Architecture,
    mapping: &Mapping,
    opts: &EvalOptions,
) -> Result<Evaluation, Error> {
    evaluate_on(graph, arch, mapping, opts, None)
}

/// [`evaluate`] on `pool`'s threads: the edges in blocks and the parts' diameters one part
/// per job. The same numbers on any number of threads.
pub fn evaluate_on(
    graph: &TaskGraph,
    arch: &dyn Architecture,
    mapping: &Mapping,
    opts: &EvalOptions,
    pool: Option<&rayon::ThreadPool>,
) -> Result<Evaluation, Error> {
    let n = graph.num_tasks();
    check_inputs(graph, arch, mapping, opts)?;
    let k = arch.pe_count();
    let map = mapping.as_slice();

    let edges = edge_stats(graph, arch, map, k, pool);
    // Judged on the value of this mapping: weights whose bound (total times diameter)
    // overflows may still give an f_C that fits.
    let comm = u64::try_from(edges.sums.comm).map_err(|_| {
        Error::Config(format!(
            "the communication cost f_C of this mapping is {}, more than 2^64-1",
            edges.sums.comm
        ))
    })?;
    let m = graph.num_edges();
    let total_w = graph.total_edge_weight();
    let dilation_mean = if m > 0 {
        edges.sums.dil_sum as f64 / m as f64
    } else {
        0.0
    };
    let expansion_mean = if total_w > 0 {
        comm as f64 / total_w as f64
    } else {
        0.0
    };
    let expansion_ratio = if dilation_mean > 0.0 {
        expansion_mean / dilation_mean
    } else {
        0.0
    };
    let nbrs = edges.pe_pairs.neighbour_counts();
    let neighbours_sum: u64 = nbrs.iter().map(|&x| x as u64).sum();

    let ncon = graph.ncon();
    let mut used = vec![false; k as usize];
    for p in map {
        used[p.idx()] = true;
    }
    let caps: Vec<u64> = (0..k).map(|p| arch.pe_capacity(PeId(p))).collect();
    let ctx = LoadContext {
        graph,
        arch,
        opts,
        load: pe_loads(graph, map, k),
        ncon,
        k,
        pes_used: used.iter().filter(|&&b| b).count() as u32,
        cap_sum: caps.iter().sum(),
        caps,
    };
    let loads: Vec<LoadStats> = (0..ncon).map(|c| ctx.stats(c)).collect();
    let balanced = loads.iter().all(|l| l.overloaded_pes.unwrap_or(0) == 0);
    let respected = loads.iter().all(|l| l.over_capacity_pes.unwrap_or(0) == 0);

    Ok(Evaluation {
        tasks: n,
        edges: m,
        pes: k,
        comm_cost: comm,
        comm_cost_j: 2 * u128::from(comm),
        berger_objective: 2 * u128::from(comm),
        edge_cut: edges.sums.cut_w,
        cut_edges: edges.sums.cut_n,
        total_edge_weight: total_w,
        dilation_mean,
        dilation_max: edges.sums.dil_max,
        expansion_mean,
        expansion_ratio,
        loads,
        pes_used: ctx.pes_used,
        neighbours_min: nbrs.iter().copied().min().unwrap_or(0),
        neighbours_max: nbrs.iter().copied().max().unwrap_or(0),
        neighbours_avg: neighbours_sum as f64 / k.max(1) as f64,
        neighbours_sum,
        distance_histogram: edges
            .sums
            .hist
            .into_iter()
            .map(|(distance, (edges, weight))| DistanceBin {
                distance,
                edges,
                weight,
            })
            .collect(),
        part_diameters: part_diameters(graph, map, k, pool),
        epsilon: opts.epsilon,
        balanced: opts.epsilon.map(|_| balanced),
        capacities_respected: opts.capacities.as_ref().map(|_| respected),
    })
}

/// Checks that the mapping, ε, weights and capacities fit the graph and the target.
fn check_inputs(
    graph: &TaskGraph,
    arch: &dyn Architecture,
    mapping: &Mapping,
    opts: &EvalOptions,
) -> Result<(), Error> {
    crate::problem::check_pe_count(arch)?;
    mapping.check(graph.num_tasks(), arch)?;
    if let Some(eps) = opts.epsilon {
        crate::problem::check_epsilon(eps)?;
    }
    crate::problem::check_graph_weights(graph)?;
    let k = arch.pe_count();
    if let Some(c) = &opts.capacities {
        if c.pe_count() != k as usize || c.ncon() != graph.ncon() {
            return Err(Error::Mismatch(format!(
                "capacities are given for {} PEs x {} constraints but the target has {} PEs and the graph {} vertex weights",
                c.pe_count(),
                c.ncon(),
                k,
                graph.ncon()
            )));
        }
    }
    Ok(())
}

/// The edge metrics of a mapping, before they are averaged: the sums and the PE pairs.
struct EdgeStats {
    sums: EdgeSums,
    /// The PE pairs joined by an edge.
    pe_pairs: PePairs,
}

/// What [`edge_stats`] adds up over the edges, or over a block of tasks' edges.
#[derive(Default)]
struct EdgeSums {
    /// f_C, exact (the caller checks that it fits in 64 bits).
    comm: u128,
    /// Total weight of the cut edges.
    cut_w: u64,
    /// Number of cut edges.
    cut_n: u64,
    /// Sum of the dilations.
    dil_sum: u128,
    /// Largest dilation.
    dil_max: u64,
    /// Edges and weight by distance.
    hist: BTreeMap<u64, (u64, u64)>,
}

impl EdgeSums {
    /// Counts an edge of weight `w` at distance `d`, `cut` when its ends are on two PEs.
    #[inline]
    fn edge(&mut self, w: u64, d: u64, cut: bool) {
        if cut {
            self.cut_w += w;
            self.cut_n += 1;
        }
        self.comm += u128::from(w) * u128::from(d);
        self.dil_sum += u128::from(d);
        self.dil_max = self.dil_max.max(d);
        let bin = self.hist.entry(d).or_insert((0, 0));
        bin.0 += 1;
        bin.1 += w;
    }

    /// Adds the sums of `o`.
    fn add(&mut self, o: EdgeSums) {
        self.comm += o.comm;
        self.cut_w += o.cut_w;
        self.cut_n += o.cut_n;
        self.dil_sum += o.dil_sum;
        self.dil_max = self.dil_max.max(o.dil_max);
        for (d, (edges, weight)) in o.hist {
            let bin = self.hist.entry(d).or_insert((0, 0));
            bin.0 += edges;
            bin.1 += weight;
        }
    }
}

/// One pass over the edges: f_C, cut, dilation, histogram, PE adjacency pairs; blocks of
/// tasks on `pool`'s threads, added up in block order (each block's PE pairs sorted,
/// without repeats).
fn edge_stats(
    graph: &TaskGraph,
    arch: &dyn Architecture,
    map: &[PeId],
    k: u32,
    pool: Option<&rayon::ThreadPool>,
) -> EdgeStats {
    let n = graph.num_tasks();
    let blocks = crate::par::map_blocks(
        pool,
        n,
        1 << 14,
        || (),
        |_, tasks| {
            let mut sums = EdgeSums::default();
            let mut pairs: Vec<(u32, u32)> = Vec::new();
            for u in tasks.start as u32..tasks.end as u32 {
                let pu = map[u as usize];
                for (&v, &w) in graph.neighbors(u).iter().zip(graph.edge_weights(u)) {
                    if u >= v {
                        continue;
                    }
                    let pv = map[v as usize];
                    if pu == pv {
                        sums.edge(w, 0, false);
                    } else {
                        sums.edge(w, arch.distance(pu, pv), true);
                        pairs.push((pu.0.min(pv.0), pu.0.max(pv.0)));
                    }
                }
            }
            pairs.sort_unstable();
            pairs.dedup();
            pairs.shrink_to_fit();
            (sums, pairs)
        },
    );
    let mut s = EdgeStats {
        sums: EdgeSums::default(),
        pe_pairs: PePairs::new(k),
    };
    for (sums, pairs) in blocks {
        s.sums.add(sums);
        for (a, c) in pairs {
            s.pe_pairs.insert(a, c);
        }
    }
    s
}

/// The [`PartDiameters`] of a mapping, the parts searched at once on `pool`'s threads.
fn part_diameters(
    graph: &TaskGraph,
    map: &[PeId],
    k: u32,
    pool: Option<&rayon::ThreadPool>,
) -> PartDiameters {
    let n = graph.num_tasks();
    // The tasks of every PE, in task order, and each task's PE and place among its PE's
    // (side by side: a search reads both for each neighbour).
    let mut start = vec![0u32; k as usize + 1];
    for p in map {
        start[p.idx() + 1] += 1;
    }
    for p in 0..k as usize {
        start[p + 1] += start[p];
    }
    let mut members = vec![0u32; n];
    let mut slot = vec![[0u32; 2]; n];
    let mut fill = start.clone();
    for (t, p) in map.iter().enumerate() {
        let f = &mut fill[p.idx()];
        members[*f as usize] = t as u32;
        slot[t] = [p.0, *f - start[p.idx()]];
        *f += 1;
    }
    drop(fill);
    let parts = crate::par::map_blocks(pool, k as usize, 1, PartSearch::default, |s, pes| {
        let p = pes.start;
        let part = &members[start[p] as usize..start[p + 1] as usize];
        (!part.is_empty()).then(|| s.far(graph, &slot, p as u32, part))
    });
    let far: Vec<u64> = parts.into_iter().flatten().collect();
    PartDiameters {
        min: far.iter().copied().min().unwrap_or(0),
        max: far.iter().copied().max().unwrap_or(0),
        avg: if far.is_empty() {
            0.0
        } else {
            far.iter().sum::<u64>() as f64 / far.len() as f64
        },
    }
}

/// Scratch of [`part_diameters`] for one part at a time, indexed by a task's place in its
/// part.
#[derive(Default)]
struct PartSearch {
    /// The part's own edges, between places, in the graph's order: rows start at `start`.
    start: Vec<usize>,
    adj: Vec<u32>,
    /// The degree of each task in the whole graph.
    degree: Vec<usize>,
    /// The search that last reached each task (0: none yet).
    seen: Vec<u32>,
    /// Its distance there.
    dist: Vec<u64>,
    queue: Vec<u32>,
}

impl PartSearch {
    /// The diameter estimate of the part of PE `pe` (its tasks `part`; `slot` each task's
    /// PE and index in its PE's tasks): from each task not yet reached, searches restart
    /// from the farthest task (least degree on ties) while that moves, the distances of a
    /// new component counted on from the farthest of the last one. The searches run on a
    /// copy of the part's edges, which stays in cache.
    fn far(&mut self, graph: &TaskGraph, slot: &[[u32; 2]], pe: u32, part: &[u32]) -> u64 {
        self.start.clear();
        self.adj.clear();
        self.degree.clear();
        self.start.push(0);
        for &t in part {
            let row = graph.neighbors(t);
            self.degree.push(row.len());
            for &u in row {
                let [q, i] = slot[u as usize];
                if q == pe {
                    self.adj.push(i);
                }
            }
            self.start.push(self.adj.len());
        }
        self.seen.clear();
        self.seen.resize(part.len(), 0);
        self.dist.clear();
        self.dist.resize(part.len(), 0);
        let mut search = 0u32;
        let mut far = 0u64;
        for root in 0..part.len() {
            if self.seen[root] != 0 {
                continue;
            }
            far += 1;
            let base = far;
            let mut end = root;
            loop {
                search += 1;
                let mut moved = false;
                self.queue.clear();
                self.queue.push(end as u32);
                self.seen[end] = search;
                self.dist[end] = base;
                let mut head = 0;
                while head < self.queue.len() {
                    let v = self.queue[head] as usize;
                    head += 1;
                    let d = self.dist[v];
                    if d > far || (d == far && self.degree[v] < self.degree[end]) {
                        end = v;
                        far = d;
                        moved = true;
                    }
                    for &u in &self.adj[self.start[v]..self.start[v + 1]] {
                        if self.seen[u as usize] < search {
                            self.seen[u as usize] = search;
                            self.dist[u as usize] = d + 1;
                            self.queue.push(u);
                        }
                    }
                }
                if !moved {
                    break;
                }
            }
        }
        far
    }
}

/// The load of every PE for every constraint, at `p * ncon + c`.
fn pe_loads(graph: &TaskGraph, map: &[PeId], k: u32) -> Vec<u64> {
    let ncon = graph.ncon();
    let mut load = vec![0u64; k as usize * ncon];
    for u in 0..graph.num_tasks() as u32 {
        let p = map[u as usize].idx();
        for (c, &w) in graph.vertex_weights(u).iter().enumerate() {
            load[p * ncon + c] += w;
        }
    }
    load
}

/// What the load statistics of every constraint are computed from.
struct LoadContext<'a> {
    /// The graph mapped.
    graph: &'a TaskGraph,
    /// The target.
    arch: &'a dyn Architecture,
    /// The checks asked for.
    opts: &'a EvalOptions,
    /// The load of every PE for every constraint, at `p * ncon + c`.
    load: Vec<u64>,
    /// Vertex weights per task.
    ncon: usize,
    /// Number of PEs.
    k: u32,
    /// PEs with at least one task.
    pes_used: u32,
    /// The capacity of every PE.
    caps: Vec<u64>,
    /// Their sum.
    cap_sum: u64,
}

impl LoadContext<'_> {
    /// The load of PE `p` for constraint `c`.
    #[inline]
    fn lc(&self, p: usize, c: usize) -> u64 {
        self.load[p * self.ncon + c]
    }

    /// The load statistics of constraint `c`.
    fn stats(&self, c: usize) -> LoadStats {
        let k = self.k as usize;
        let total = self.graph.total_vertex_weight(c);
        let min = (0..k).map(|p| self.lc(p, c)).min().unwrap_or(0);
        let max = (0..k).map(|p| self.lc(p, c)).max().unwrap_or(0);
        let avg = total as f64 / self.k as f64;
        let mu_map = total as f64 / self.cap_sum.max(1) as f64;
        let (delta, min_norm, max_norm) = self.normalised(c, total, mu_map);
        let delta_map = if total > 0 { delta / total as f64 } else { 0.0 };
        let ceil_share = ceil_shares(self.graph, self.arch, c);
        let crowded_pes = if self.pes_used < self.k {
            (0..k).filter(|&p| self.lc(p, c) > ceil_share[p]).count() as u32
        } else {
            0
        };
        // The ε bound of every PE (`max_loads` without capacities), from the shares above.
        let overloaded_pes = self.opts.epsilon.map(|eps| {
            (0..k)
                .filter(|&p| self.lc(p, c) > balance_bound(ceil_share[p], eps))
                .count() as u32
        });
        let (over_capacity_pes, max_capacity_excess) = match &self.opts.capacities {
            Some(cap) => {
                let (over, excess) = self.capacity_excess(cap, c);
                (Some(over), Some(excess))
            }
            None => (None, None),
        };
        LoadStats {
            constraint: c,
            total,
            min,
            max,
            avg,
            min_normalised: if min_norm.is_finite() { min_norm } else { 0.0 },
            max_normalised: max_norm,
            // No weight at all (no tasks): nothing is imbalanced.
            imbalance: if total == 0 { 0.0 } else { max_norm - 1.0 },
            mu_map,
            delta_map,
            overloaded_pes,
            crowded_pes,
            over_capacity_pes,
            max_capacity_excess,
        }
    }

    /// For constraint `c` of weight `total`: `Σ_p |load(p)/w_T(p) − mu_map|`, and the
    /// smallest and largest load(p) / cap_share(p).
    fn normalised(&self, c: usize, total: u64, mu_map: f64) -> (f64, f64, f64) {
        let caps = &self.caps;
        let cap_sum = self.cap_sum;
        let mut delta = 0.0;
        let mut min_norm = f64::INFINITY;
        let mut max_norm: f64 = 0.0;
        for p in 0..self.k as usize {
            let lc = self.lc(p, c);
            delta += (lc as f64 / caps[p].max(1) as f64 - mu_map).abs();
            let share = caps[p] as f64 / cap_sum.max(1) as f64 * total as f64;
            let norm = if share > 0.0 {
                lc as f64 / share
            } else if lc == 0 {
                0.0
            } else {
                f64::INFINITY
            };
            min_norm = min_norm.min(norm);
            max_norm = max_norm.max(norm);
        }
        (delta, min_norm, max_norm)
    }

    /// For constraint `c`, the number of PEs above their hard capacity in `cap` and the
    /// largest excess.
    fn capacity_excess(&self, cap: &Capacities, c: usize) -> (u32, u64) {
        let mut over = 0;
        let mut excess = 0;
        for p in 0..self.k {
            let cp = cap.get(PeId(p), c);
            let lc = self.lc(p as usize, c);
            if lc > cp {
                over += 1;
                excess = excess.max(lc - cp);
            }
        }
        (over, excess)
    }
}
