//! The Algorithm Mapper's allocation (Houstis et al. 1989, sections 3-4): ALLOC clusters
//! the modules of a precedence graph under a time frame `T`, a search over `T` finds the
//! shortest frame `T_PAR`, and a simulation of the schedule gives `T_REAL`.
//!
//! * **ALLOC(T)**: every module starts as its own cluster. The pair of clusters with the
//!   most communication (the sum of `l'` between them) merges first, if (a) no two of
//!   their modules can run in parallel (`Δ`, step 1 only), (b) the merged cluster's
//!   processing plus communication time fits in `T`, and (c) its memory fits in a
//!   processor's. A cluster's communication time is its ITUs to other clusters × the time
//!   of an ITU × the interconnect's delay `D` ([`crate::model::interconnect`]). After each
//!   merge the pairs of the new cluster are ranked again. Pairs that do not communicate
//!   come last: they merge first-fit, the heaviest clusters first.
//! * **Delay**: `D` depends on the load `ρ` = (ITUs between clusters × ITU time) /
//!   processing time, and the clustering depends on `D`; ALLOC starts from the load of the
//!   unclustered graph and is run again with the load of its own result until `D` settles
//!   (at most [`DELAY_ROUNDS`] runs).
//! * **The frame**: the paper's multisection. [`SAMPLES`] frames spread over an interval
//!   are clustered in parallel; the interval shrinks to the gap before the smallest frame
//!   that reaches the target number of clusters, until it is shorter than the tolerance.
//! * **Step 1** targets the assigned parallelism (default: the processors). Where `Δ`
//!   keeps more clusters than the target even with an unbounded frame, the target becomes
//!   the fewest clusters reached. **Step 2** (parallelism reduction), when there are more
//!   clusters than processors: the clusters become modules, `Δ` is dropped, and the search
//!   runs again with the processors as target. **Step 3**: cluster `c` (numbered by its
//!   first module) goes to processor `c`.
//! * **Schedule**: every module runs once for `m'_i` plus the communication time of its
//!   ITUs to modules on other processors (the processor is busy while it transfers), when
//!   all its predecessors in the precedence DAG have finished; an idle processor takes its
//!   ready module first in topological order ([`crate::sim::simulha`]).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use rayon::prelude::*;

use crate::error::Error;
use crate::model::interconnect::Interconnect;
use crate::model::precedence::{BitMatrix, Deterministic, ParallelMatrix, PrecedenceGraph};
use crate::model::ttigha::{HeteroProgram, Platform, SubtaskMessage};
use crate::sim::simulha::Simulator;

/// Frames clustered per round of the multisection.
pub const SAMPLES: usize = 8;

/// Most ALLOC runs per frame while the delay settles.
pub const DELAY_ROUNDS: usize = 6;

/// The machine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Machine {
    pub processors: u32,
    pub interconnect: Interconnect,
    /// Transfer time of one ITU without contention (`1/μ`).
    pub itu_time: f64,
    /// Memory of a processor (`None`: unbounded).
    pub memory: Option<f64>,
}

/// Parameters of [`algorithm_mapper`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AllocParams {
    /// Step 1's target (the assigned degree of parallelism); default the processors.
    pub parallelism: Option<u32>,
    /// Relative width of the final frame interval.
    pub tolerance: f64,
}

impl Default for AllocParams {
    fn default() -> Self {
        AllocParams {
            parallelism: None,
            tolerance: 1e-4,
        }
    }
}

/// Modules (or step 1's clusters) as ALLOC sees them.
pub struct Instance<'a> {
    /// Processing time.
    pub proc: Vec<f64>,
    pub mem: Vec<f64>,
    /// Undirected communication `l'`: `adj[first[i]..first[i+1]]` as (neighbour, ITUs),
    /// both directions listed.
    pub first: Vec<u32>,
    pub adj: Vec<(u32, f64)>,
    /// `Δ` (step 1), or none (step 2).
    pub parallel: Option<&'a ParallelMatrix>,
}

impl<'a> Instance<'a> {
    /// The modules of `G'` with `l'_ij = vol(i→j) + vol(j→i)` (self links dropped).
    pub fn of_modules(
        g: &PrecedenceGraph,
        det: &Deterministic,
        parallel: Option<&'a ParallelMatrix>,
    ) -> Self {
        let pairs = g
            .links
            .iter()
            .zip(&det.volume)
            .map(|(l, &v)| (l.from, l.to, v));
        Self::build(det.time.clone(), g.memory.clone(), pairs, parallel)
    }

    fn build(
        proc: Vec<f64>,
        mem: Vec<f64>,
        pairs: impl Iterator<Item = (u32, u32, f64)>,
        parallel: Option<&'a ParallelMatrix>,
    ) -> Self {
        let n = proc.len();
        let mut sum: HashMap<(u32, u32), f64> = HashMap::new();
        for (a, b, v) in pairs {
            if a != b && v > 0.0 {
                *sum.entry((a.min(b), a.max(b))).or_insert(0.0) += v;
            }
        }
        let mut edges: Vec<(u32, u32, f64)> =
            sum.into_iter().map(|((a, b), v)| (a, b, v)).collect();
        edges.sort_by_key(|x| (x.0, x.1));
        let mut first = vec![0u32; n + 1];
        for &(a, b, _) in &edges {
            first[a as usize + 1] += 1;
            first[b as usize + 1] += 1;
        }
        for v in 0..n {
            first[v + 1] += first[v];
        }
        let mut fill = first.clone();
        let mut adj = vec![(0u32, 0.0f64); first[n] as usize];
        for &(a, b, v) in &edges {
            adj[fill[a as usize] as usize] = (b, v);
            fill[a as usize] += 1;
            adj[fill[b as usize] as usize] = (a, v);
            fill[b as usize] += 1;
        }
        Instance {
            proc,
            mem,
            first,
            adj,
            parallel,
        }
    }

    /// Number of modules.
    pub fn len(&self) -> usize {
        self.proc.len()
    }

    /// Whether there are no modules.
    pub fn is_empty(&self) -> bool {
        self.proc.is_empty()
    }

    fn neighbours(&self, i: usize) -> &[(u32, f64)] {
        &self.adj[self.first[i] as usize..self.first[i + 1] as usize]
    }

    /// Total communication `Σ l'` (each pair once).
    fn total_comm(&self) -> f64 {
        self.adj.iter().map(|x| x.1).sum::<f64>() / 2.0
    }

    /// Load `ρ` when the ITUs between clusters are `cut`.
    fn rho(&self, cut: f64, machine: &Machine) -> f64 {
        let work: f64 = self.proc.iter().sum();
        if cut <= 0.0 {
            0.0
        } else if work <= 0.0 {
            1e6
        } else {
            (cut * machine.itu_time / work).min(1e6)
        }
    }
}

/// A clustering of an [`Instance`] under a frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Clustering {
    /// Cluster of each module, numbered `0..count` by their first module.
    pub cluster: Vec<u32>,
    pub count: usize,
    /// Whether every cluster fits in the frame.
    pub feasible: bool,
    /// Load and delay per ITU (in ITU times) the clustering was made with.
    pub rho: f64,
    pub delay: f64,
}

/// A heap entry: a pair of clusters and their communication.
#[derive(PartialEq)]
struct Pair {
    w: f64,
    a: u32,
    b: u32,
    stamp_a: u32,
    stamp_b: u32,
}

impl Eq for Pair {}

impl Ord for Pair {
    fn cmp(&self, o: &Self) -> Ordering {
        self.w.total_cmp(&o.w).then_with(|| {
            (o.a.min(o.b), o.a.max(o.b)).cmp(&(self.a.min(self.b), self.a.max(self.b)))
        })
    }
}

impl PartialOrd for Pair {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// ALLOC's clusters while they merge.
struct Work {
    proc: Vec<f64>,
    mem: Vec<f64>,
    /// ITUs to other clusters.
    ext: Vec<f64>,
    members: Vec<Vec<u32>>,
    adj: Vec<HashMap<u32, f64>>,
    stamp: Vec<u32>,
    alive: Vec<bool>,
    /// Row `c`: the modules some member of cluster `c` can run in parallel with.
    par: Option<BitMatrix>,
    limit: f64,
    cap: f64,
    itu_cost: f64,
}

impl Work {
    fn weight(&self, a: usize, b: usize) -> f64 {
        self.adj[a].get(&(b as u32)).copied().unwrap_or(0.0)
    }

    /// Whether clusters `a` and `b` may merge: time, memory, `Δ`.
    fn fits(&self, a: usize, b: usize) -> bool {
        let w = self.weight(a, b);
        let time = self.proc[a]
            + self.proc[b]
            + (self.ext[a] + self.ext[b] - 2.0 * w).max(0.0) * self.itu_cost;
        if time > self.limit || self.mem[a] + self.mem[b] > self.cap {
            return false;
        }
        let (row, other) = if self.members[a].len() >= self.members[b].len() {
            (a, b)
        } else {
            (b, a)
        };
        match &self.par {
            None => true,
            Some(p) => !self.members[other].iter().any(|&m| p.get(row, m as usize)),
        }
    }

    /// Merges the smaller of `a` and `b` into the other; returns the survivor. With a
    /// heap, pushes the survivor's pairs.
    fn merge(&mut self, a: usize, b: usize, heap: Option<&mut BinaryHeap<Pair>>) -> usize {
        let (big, small) = if self.members[a].len() >= self.members[b].len() {
            (a, b)
        } else {
            (b, a)
        };
        let w = self.weight(big, small);
        self.proc[big] += self.proc[small];
        self.mem[big] += self.mem[small];
        self.ext[big] = (self.ext[big] + self.ext[small] - 2.0 * w).max(0.0);
        let moved = std::mem::take(&mut self.members[small]);
        self.members[big].extend(moved);
        if let Some(p) = &mut self.par {
            p.or_rows(big, small);
        }
        let out = std::mem::take(&mut self.adj[small]);
        self.adj[big].remove(&(small as u32));
        for (c, wc) in out {
            if c as usize == big {
                continue;
            }
            *self.adj[big].entry(c).or_insert(0.0) += wc;
            let nc = &mut self.adj[c as usize];
            nc.remove(&(small as u32));
            *nc.entry(big as u32).or_insert(0.0) += wc;
        }
        self.alive[small] = false;
        self.stamp[big] += 1;
        if let Some(heap) = heap {
            let mut ns: Vec<(u32, f64)> = self.adj[big].iter().map(|(&c, &w)| (c, w)).collect();
            ns.sort_by_key(|x| x.0);
            for (c, w) in ns {
                heap.push(Pair {
                    w,
                    a: big as u32,
                    b: c,
                    stamp_a: self.stamp[big],
                    stamp_b: self.stamp[c as usize],
                });
            }
        }
        big
    }
}

/// ALLOC with a fixed cost per ITU between clusters (`D × ITU time`).
pub fn alloc(inst: &Instance, frame: f64, itu_cost: f64, memory: Option<f64>) -> Clustering {
    let n = inst.len();
    let mut w = Work {
        proc: inst.proc.clone(),
        mem: inst.mem.clone(),
        ext: (0..n)
            .map(|i| inst.neighbours(i).iter().map(|x| x.1).sum())
            .collect(),
        members: (0..n as u32).map(|i| vec![i]).collect(),
        adj: (0..n)
            .map(|i| inst.neighbours(i).iter().copied().collect())
            .collect(),
        stamp: vec![0; n],
        alive: vec![true; n],
        par: inst.parallel.map(|p| p.0.clone()),
        limit: frame * (1.0 + 1e-12),
        cap: memory.unwrap_or(f64::INFINITY) * (1.0 + 1e-12),
        itu_cost,
    };
    let mut heap: BinaryHeap<Pair> = BinaryHeap::new();
    for i in 0..n {
        for &(j, wt) in inst.neighbours(i) {
            if (i as u32) < j {
                heap.push(Pair {
                    w: wt,
                    a: i as u32,
                    b: j,
                    stamp_a: 0,
                    stamp_b: 0,
                });
            }
        }
    }
    while let Some(pair) = heap.pop() {
        let (a, b) = (pair.a as usize, pair.b as usize);
        if !w.alive[a] || !w.alive[b] || w.stamp[a] != pair.stamp_a || w.stamp[b] != pair.stamp_b {
            continue;
        }
        if w.fits(a, b) {
            w.merge(a, b, Some(&mut heap));
        }
    }
    // Pairs without communication between them: first fit, heaviest first.
    let mut rest: Vec<usize> = (0..n).filter(|&i| w.alive[i]).collect();
    let load = |w: &Work, x: usize| w.proc[x] + w.ext[x] * itu_cost;
    rest.sort_by(|&x, &y| load(&w, y).total_cmp(&load(&w, x)).then(x.cmp(&y)));
    let mut kept: Vec<usize> = Vec::new();
    for x in rest {
        match kept.iter().position(|&y| w.fits(y, x)) {
            Some(k) => kept[k] = w.merge(kept[k], x, None),
            None => kept.push(x),
        }
    }
    let mut firsts: Vec<(u32, usize)> = kept
        .iter()
        .map(|&c| {
            (
                *w.members[c].iter().min().expect("a cluster has members"),
                c,
            )
        })
        .collect();
    firsts.sort_unstable();
    let mut cluster = vec![0u32; n];
    let mut feasible = true;
    for (id, &(_, c)) in firsts.iter().enumerate() {
        feasible &= load(&w, c) <= w.limit && w.mem[c] <= w.cap;
        for &m in &w.members[c] {
            cluster[m as usize] = id as u32;
        }
    }
    Clustering {
        cluster,
        count: firsts.len(),
        feasible,
        rho: 0.0,
        delay: 0.0,
    }
}

/// ITUs between different clusters.
fn cut(inst: &Instance, cluster: &[u32]) -> f64 {
    (0..inst.len())
        .map(|i| {
            inst.neighbours(i)
                .iter()
                .filter(|&&(j, _)| cluster[j as usize] != cluster[i])
                .map(|x| x.1)
                .sum::<f64>()
        })
        .sum::<f64>()
        / 2.0
}

/// ALLOC(T) with the delay settled against its own clustering.
pub fn alloc_settled(inst: &Instance, frame: f64, machine: &Machine) -> Clustering {
    let k = machine.processors;
    let ic = machine.interconnect;
    let mut rho = inst.rho(inst.total_comm(), machine);
    let mut delay = ic.analyse(k, rho).delay;
    let mut best = None;
    for _ in 0..DELAY_ROUNDS {
        let mut c = alloc(inst, frame, delay * machine.itu_time, machine.memory);
        c.rho = rho;
        c.delay = delay;
        let new_rho = inst.rho(cut(inst, &c.cluster), machine);
        let new_delay = ic.analyse(k, new_rho).delay;
        let settled = (new_delay - delay).abs() <= 1e-9 * delay.max(1.0);
        best = Some(c);
        if settled {
            break;
        }
        rho = new_rho;
        delay = new_delay;
    }
    best.expect("at least one round")
}

/// The smallest frame (to `tolerance`) whose clustering fits and has at most `target`
/// clusters, by multisection; `None` when even an unbounded frame does not reach it.
pub fn search_frame(
    inst: &Instance,
    machine: &Machine,
    target: usize,
    tolerance: f64,
) -> Option<(f64, Clustering)> {
    let work: f64 = inst.proc.iter().sum();
    let biggest = inst.proc.iter().copied().fold(0.0, f64::max);
    let worst_delay = machine
        .interconnect
        .analyse(machine.processors, inst.rho(inst.total_comm(), machine))
        .delay;
    // With this frame every merge fits in time: all the work and all the communication.
    let mut hi = (work + inst.total_comm() * machine.itu_time * worst_delay) * 1.01 + 1.0;
    let ok = |c: &Clustering| c.feasible && c.count <= target;
    let at_hi = alloc_settled(inst, hi, machine);
    if !ok(&at_hi) {
        return None;
    }
    let mut best = at_hi;
    let mut lo = biggest.max(work / target as f64) * (1.0 - 1e-9);
    while hi - lo > tolerance * hi {
        let frames: Vec<f64> = (1..=SAMPLES)
            .map(|i| lo + (hi - lo) * i as f64 / (SAMPLES + 1) as f64)
            .collect();
        let runs: Vec<Clustering> = frames
            .par_iter()
            .map(|&t| alloc_settled(inst, t, machine))
            .collect();
        match runs.iter().position(ok) {
            Some(i) => {
                if i > 0 {
                    lo = frames[i - 1];
                }
                hi = frames[i];
                best = runs.into_iter().nth(i).expect("i is in range");
            }
            None => lo = frames[SAMPLES - 1],
        }
    }
    Some((hi, best))
}

/// One processor's share of the result.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessorLoad {
    /// Processing time of its modules, `Σ m'`.
    pub processing: f64,
    /// Communication time: its ITUs to other processors × ITU time × delay.
    pub communication: f64,
    /// Its modules, in index order.
    pub modules: Vec<u32>,
}

/// The Algorithm Mapper's result.
#[derive(Clone, Debug, PartialEq)]
pub struct AmapResult {
    /// Processor of each module.
    pub processor: Vec<u32>,
    pub loads: Vec<ProcessorLoad>,
    /// Step 1: its target, its frame and clusters (`None` when `Δ` was not used).
    pub step1: Option<(usize, f64, usize)>,
    /// Whether step 2 (parallelism reduction) ran.
    pub reduced: bool,
    /// `T_seq = Σ m'`, `T_PAR`, `T_REAL`.
    pub t_seq: f64,
    pub t_par: f64,
    pub t_real: f64,
    /// Load and delay per ITU of the final clustering.
    pub rho: f64,
    pub delay: f64,
    /// Network utilisation and active processors of the queueing model at that load.
    pub utilisation: f64,
    pub model_active: f64,
}

impl AmapResult {
    /// `AP = Σ u_p^i`, `u_p^i = processing / T_PAR`.
    pub fn active(&self) -> f64 {
        self.loads.iter().map(|l| l.processing).sum::<f64>() / self.t_par
    }
    /// `S = T_seq / T_REAL`.
    pub fn speedup(&self) -> f64 {
        self.t_seq / self.t_real
    }
}

/// The Algorithm Mapper: steps 1-3 and the schedule's simulation. `parallel` is `Δ`
/// (`None`: map without it, step 2 only).
pub fn algorithm_mapper(
    g: &PrecedenceGraph,
    det: &Deterministic,
    parallel: Option<&ParallelMatrix>,
    machine: &Machine,
    params: &AllocParams,
) -> Result<AmapResult, Error> {
    machine.interconnect.check(machine.processors)?;
    if !(machine.itu_time.is_finite() && machine.itu_time >= 0.0) {
        return Err(Error::Config(format!(
            "the ITU time must be finite and >= 0, not {}",
            machine.itu_time
        )));
    }
    if !(params.tolerance > 0.0 && params.tolerance < 1.0) {
        return Err(Error::Config(format!(
            "the frame tolerance must lie in (0, 1), not {}",
            params.tolerance
        )));
    }
    let n = g.modules();
    let k = machine.processors as usize;
    if let (Some(cap), Some(i)) = (
        machine.memory,
        (0..n).find(|&i| g.memory[i] > machine.memory.unwrap_or(f64::INFINITY)),
    ) {
        return Err(Error::Mismatch(format!(
            "module \"{}\" needs memory {} but a processor has {cap}",
            g.names[i], g.memory[i]
        )));
    }
    let modules = Instance::of_modules(g, det, parallel);
    let (mut cluster, mut frame, step1) = if parallel.is_some() {
        let target = params.parallelism.map_or(k, |p| p as usize).max(1);
        let (frame, c) = match search_frame(&modules, machine, target, params.tolerance) {
            Some(found) => found,
            None => {
                let hi = alloc_settled(&modules, f64::MAX / 4.0, machine);
                search_frame(&modules, machine, hi.count, params.tolerance).ok_or_else(|| {
                    Error::Mismatch("the modules do not fit in the processors' memory".into())
                })?
            }
        };
        let count = c.count;
        (c.cluster, frame, Some((target, frame, count)))
    } else {
        ((0..n as u32).collect::<Vec<u32>>(), 0.0, None)
    };
    let count = cluster.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let reduced = count > k || parallel.is_none();
    if reduced {
        // Step 2: the clusters as modules, without Δ.
        let mut proc = vec![0.0; count];
        let mut mem = vec![0.0; count];
        for i in 0..n {
            proc[cluster[i] as usize] += det.time[i];
            mem[cluster[i] as usize] += g.memory[i];
        }
        let pairs = g
            .links
            .iter()
            .zip(&det.volume)
            .map(|(l, &v)| (cluster[l.from as usize], cluster[l.to as usize], v));
        let coarse = Instance::build(proc, mem, pairs, None);
        let (f, c) = search_frame(&coarse, machine, k, params.tolerance).ok_or_else(|| {
            Error::Mismatch(format!(
                "the modules do not fit in the memory of {k} processors"
            ))
        })?;
        frame = f;
        for x in cluster.iter_mut() {
            *x = c.cluster[*x as usize];
        }
    }
    let count = cluster.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    // The final delay, from the final clustering's load.
    let rho = modules.rho(cut(&modules, &cluster), machine);
    let state = machine.interconnect.analyse(machine.processors, rho);
    let itu_cost = state.delay * machine.itu_time;
    let mut loads: Vec<ProcessorLoad> = (0..k)
        .map(|_| ProcessorLoad {
            processing: 0.0,
            communication: 0.0,
            modules: Vec::new(),
        })
        .collect();
    let mut own_comm = vec![0.0f64; n];
    for i in 0..n {
        let p = cluster[i] as usize;
        own_comm[i] = modules
            .neighbours(i)
            .iter()
            .filter(|&&(j, _)| cluster[j as usize] != cluster[i])
            .map(|x| x.1)
            .sum::<f64>()
            * itu_cost;
        loads[p].processing += det.time[i];
        loads[p].communication += own_comm[i];
        loads[p].modules.push(i as u32);
    }
    debug_assert!(count <= k);
    let t_real = simulate_schedule(g, det, &cluster, &own_comm, k)?;
    Ok(AmapResult {
        processor: cluster,
        loads,
        step1,
        reduced,
        t_seq: det.time.iter().sum(),
        t_par: frame,
        t_real,
        rho,
        delay: state.delay,
        utilisation: state.utilisation,
        model_active: state.active,
    })
}

/// `T_REAL`: the schedule of `G'` with module `i` on `processor[i]` for
/// `m'_i + comm[i]`.
pub fn simulate_schedule(
    g: &PrecedenceGraph,
    det: &Deterministic,
    processor: &[u32],
    comm: &[f64],
    k: usize,
) -> Result<f64, Error> {
    let n = g.modules();
    // Tasks in topological order, so that the simulator's priority is topological.
    let mut pos = vec![0u32; n];
    for (r, &v) in det.order.iter().enumerate() {
        pos[v as usize] = r as u32;
    }
    let tasks = det
        .order
        .iter()
        .map(|&v| {
            let v = v as usize;
            (
                g.names[v].clone(),
                vec![(g.names[v].clone(), vec![det.time[v] + comm[v]])],
            )
        })
        .collect();
    let messages = g
        .links
        .iter()
        .zip(&det.back)
        .filter(|(l, &b)| !b && l.from != l.to)
        .map(|(l, _)| SubtaskMessage {
            from: pos[l.from as usize],
            to: pos[l.to as usize],
            bytes: 0,
        })
        .collect();
    let program = HeteroProgram::new(1, tasks, messages)
        .map_err(|_| Error::Mismatch("the precedence DAG has a cycle".into()))?;
    let platform = Platform::new(
        vec!["pe".into()],
        vec![0; k],
        vec![("bus".into(), 0.0, 0.0)],
        |_, _| 0,
    );
    let alloc: Vec<u32> = det.order.iter().map(|&v| processor[v as usize]).collect();
    let mut sim = Simulator::with(&program, &platform);
    Ok(sim.schedule(&alloc, None)?.makespan)
}
