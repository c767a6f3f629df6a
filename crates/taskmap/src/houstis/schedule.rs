//! Schedules of an assignment: the list schedule, `alloc-ls` (ours: ALLOC for k, k/2, ...
//! processors, then a local search of the simulated schedule's length), and the schedule
//! simulator `ScheduleSim` that gives `T_REAL`.

use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::houstis::alloc::*;
use crate::houstis::machine::*;
use crate::houstis::mapper::*;
use crate::houstis::precedence::{Dag, Deterministic, Exclusion, ParallelMatrix, PrecedenceGraph};
use crate::mapper::{NoProgress, Progress};
use crate::registry::{ParamDoc, Params};

/// A list schedule of `G'` (ours): modules by decreasing bottom level (the longest path
/// of processing times from them to an exit), ties by topological order, each placed on
/// the processor where it would finish first, its links to predecessors on other
/// processors costing ITUs × ITU time × the delay at the load of the unclustered graph.
/// `None` when the memory does not allow it.
pub fn list_schedule(
    g: &PrecedenceGraph,
    det: &Deterministic,
    modules: &Instance,
    machine: &Machine,
) -> Option<Vec<u32>> {
    let n = g.modules();
    let k = machine.processors as usize;
    let cost = machine
        .model
        .analyse(modules.rho(modules.total_comm(), machine))
        .delay
        * machine.itu_time;
    let dag = Dag::new(g, det);
    let mut bottom = vec![0.0f64; n];
    for &v in det.order.iter().rev() {
        let v = v as usize;
        let tail = dag
            .succs(v)
            .iter()
            .map(|&s| bottom[s as usize])
            .fold(0.0, f64::max);
        bottom[v] = det.time[v] + tail;
    }
    let rank = det.positions();
    // ready modules by (bottom level desc, rank asc)
    let mut waiting: Vec<usize> = (0..n).map(|v| dag.preds(v).len()).collect();
    let mut ready: BinaryHeap<(u64, std::cmp::Reverse<u32>, usize)> = BinaryHeap::new();
    for v in 0..n {
        if waiting[v] == 0 {
            ready.push(((bottom[v] + 0.0).to_bits(), std::cmp::Reverse(rank[v]), v));
        }
    }
    let cap = memory_cap(machine.memory);
    let mut avail = vec![0.0f64; k];
    let mut mem = vec![0.0f64; k];
    let mut finish = vec![0.0f64; n];
    let mut processor = vec![0u32; n];
    // The predecessors of the module being placed with their ITUs to it (looked up once,
    // not once per processor).
    let mut preds: Vec<(u32, f64)> = Vec::new();
    while let Some((_, _, v)) = ready.pop() {
        preds.clear();
        preds.extend(dag.preds(v).iter().map(|&u| {
            let w = modules
                .neighbours(v)
                .iter()
                .find(|x| x.0 == u)
                .map_or(0.0, |x| x.1);
            (u, w)
        }));
        let mut best: Option<(f64, usize)> = None;
        for p in 0..k {
            if mem[p] + g.memory[v] > cap {
                continue;
            }
            let mut start = avail[p];
            let mut comm = 0.0;
            for &(u, w) in &preds {
                start = start.max(finish[u as usize]);
                if processor[u as usize] as usize != p {
                    comm += w;
                }
            }
            let end = start + det.time[v] / machine.speeds[p] + comm * cost;
            if best.is_none_or(|(b, _)| end < b) {
                best = Some((end, p));
            }
        }
        let (end, p) = best?;
        processor[v] = p as u32;
        finish[v] = end;
        avail[p] = end;
        mem[p] += g.memory[v];
        for &s in dag.succs(v) {
            let s = s as usize;
            waiting[s] -= 1;
            if waiting[s] == 0 {
                ready.push(((bottom[s] + 0.0).to_bits(), std::cmp::Reverse(rank[s]), s));
            }
        }
    }
    Some(processor)
}

/// Work budget of [`alloc_ls`] by default: each schedule it simulates costs the modules
/// plus the links plus the processors.
pub const LS_BUDGET: u64 = 100_000_000;

/// The keys of `alloc-ls` (`alloc-ls,budget=1000000,samples=8`): `alloc`'s
/// ([`AllocOptions`]) and the local search's work budget.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AllocLsOptions {
    /// [`AllocOptions::parallelism`].
    pub parallelism: Option<u32>,
    /// [`AllocOptions::no_parallelism`].
    pub no_parallelism: bool,
    /// [`AllocOptions::tolerance`].
    pub tolerance: f64,
    /// [`AllocOptions::samples`].
    pub samples: usize,
    /// Work budget of the local search ([`alloc_ls`]).
    pub budget: u64,
}

impl Default for AllocLsOptions {
    fn default() -> Self {
        let d = AllocOptions::default();
        AllocLsOptions {
            parallelism: d.parallelism,
            no_parallelism: d.no_parallelism,
            tolerance: d.tolerance,
            samples: d.samples,
            budget: LS_BUDGET,
        }
    }
}

impl AllocLsOptions {
    /// Its ALLOC part.
    pub fn alloc(&self) -> AllocOptions {
        AllocOptions {
            parallelism: self.parallelism,
            no_parallelism: self.no_parallelism,
            tolerance: self.tolerance,
            samples: self.samples,
        }
    }
}

impl Params for AllocLsOptions {
    const DOCS: &'static [ParamDoc] = &[
        ALLOC_DOCS[0],
        ALLOC_DOCS[1],
        ALLOC_DOCS[2],
        ALLOC_DOCS[3],
        ParamDoc {
            name: "budget",
            aliases: &[],
            doc: "work budget of the local search: a simulated schedule costs the modules + links + processors",
        },
    ];

    fn validate(&self) -> Result<(), String> {
        self.alloc().validate()
    }
}

/// `alloc-ls` (ours, beyond the paper): the paper's steps 1 and 2 for `k`, `k/2`, `k/4`,
/// … 1 processors (a parallel program may run faster on fewer) and a
/// [`list_schedule`], the assignment with the least `T_REAL` of these, then a local search of `T_REAL` itself: a module on the
/// critical path of the simulated schedule moves to the processor of one of its
/// neighbours, or to one of the least busy (any processor when there are at most 16),
/// when that shortens the schedule (or keeps its
/// length and lowers the sum of the finish times). The delay follows the load of every
/// assignment tried. Stops when no critical module can move for the better, or after
/// `budget` units of work.
pub fn alloc_ls(
    g: &PrecedenceGraph,
    det: &Deterministic,
    parallel: Option<&ParallelMatrix>,
    machine: &Machine,
    params: &AllocParams,
    budget: u64,
) -> Result<AmapResult, Error> {
    alloc_ls_observed(g, det, parallel, machine, params, budget, &NoProgress)
}

/// [`alloc_ls`], telling `progress` of its steps, of the rounds of their frame searches and
/// of the local search's budget spent.
pub fn alloc_ls_observed(
    g: &PrecedenceGraph,
    det: &Deterministic,
    parallel: Option<&ParallelMatrix>,
    machine: &Machine,
    params: &AllocParams,
    budget: u64,
    progress: &dyn Progress,
) -> Result<AmapResult, Error> {
    check_inputs(g, det, machine, params)?;
    let modules = Instance::of_modules(g, det, parallel);
    let (cluster, frame1, step1) = step_one(&modules, machine, params, progress)?;
    let (start, reduced) = ls_start(
        g, det, parallel, machine, params, &modules, cluster, frame1, progress,
    )?;
    let processor = local_search(
        g,
        det,
        &modules,
        machine,
        start.processor.clone(),
        budget,
        progress,
    );
    // re-simulate the kept assignment (the last run may have been a refused move).
    let mut r = evaluate(g, det, &modules, machine, processor)?;
    r.step1_frame = step1.map(|_| frame1);
    r.step1 = step1;
    r.reduced = reduced;
    r.frame = start.frame;
    Ok(r)
}

/// The start of the local search: of step 1's clustering reduced to `k`, `k/2`, `k/4`, …
/// 1 processors and of a [`list_schedule`], the assignment with the least `T_REAL`, and
/// whether it is reduced (or without `Δ`).
fn ls_start(
    g: &PrecedenceGraph,
    det: &Deterministic,
    parallel: Option<&ParallelMatrix>,
    machine: &Machine,
    params: &AllocParams,
    modules: &Instance,
    cluster: Vec<u32>,
    frame1: f64,
    progress: &dyn Progress,
) -> Result<(AmapResult, bool), Error> {
    let k = machine.processors as usize;
    let mut targets = vec![k];
    while *targets.last().expect("not empty") > 1 {
        let t = targets.last().expect("not empty").div_ceil(2);
        targets.push(t);
    }
    // Targets of at least step 1's cluster count leave its clustering as it is: only the
    // first of them (k) is evaluated.
    let count = cluster.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut best: Option<(AmapResult, bool)> = None;
    for &t in &targets {
        if t >= count && t != k {
            continue;
        }
        let Ok((c, frame, reduced)) = reduce(
            g,
            det,
            machine,
            params,
            cluster.clone(),
            frame1,
            t,
            progress,
        ) else {
            continue; // memory: too few processors
        };
        let mut r = evaluate(g, det, modules, machine, step_three(modules, machine, c))?;
        r.frame = frame;
        if best.as_ref().is_none_or(|(b, _)| r.t_real < b.t_real) {
            best = Some((r, reduced || parallel.is_none()));
        }
    }
    // A list schedule too: by decreasing bottom level, each module to the processor where
    // it would finish first (paying, on the new processor, its links to predecessors
    // elsewhere at the delay of the unclustered load).
    if let Some(c) = list_schedule(g, det, modules, machine) {
        let r = evaluate(g, det, modules, machine, c)?;
        if best.as_ref().is_none_or(|(b, _)| r.t_real < b.t_real) {
            best = Some((r, parallel.is_none()));
        }
    }
    best.ok_or_else(|| {
        Error::Mismatch(format!(
            "the modules do not fit in the memory of {k} processors"
        ))
    })
}

/// Scores assignments by simulating their schedule, its buffers kept between runs.
struct LsScorer<'a> {
    /// The modules and their communication.
    modules: &'a Instance<'a>,
    /// The machine.
    machine: &'a Machine,
    /// The modules' times.
    det: &'a Deterministic,
    /// The simulation.
    sim: ScheduleSim,
    /// The communication time of each module under the assignment scored.
    comm: Vec<f64>,
    /// The duration of each module under the assignment scored.
    dur: Vec<f64>,
}

impl LsScorer<'_> {
    /// The length of the schedule of `processor` and the sum of its finish times.
    fn score(&mut self, processor: &[u32]) -> (f64, f64) {
        module_comm(self.modules, self.machine, processor, &mut self.comm);
        for (((d, t), c), &p) in self
            .dur
            .iter_mut()
            .zip(&self.det.time)
            .zip(self.comm.iter())
            .zip(processor)
        {
            *d = t / self.machine.speeds[p as usize] + c;
        }
        self.sim.run(processor, &self.dur)
    }

    /// The processors the local search tries for every critical module besides its
    /// neighbours' (all of them on small machines, else the 4 least busy); `busy` is
    /// scratch.
    fn least_busy(&self, processor: &[u32], busy: &mut [f64]) -> Vec<u32> {
        let k = busy.len();
        busy.iter_mut().for_each(|b| *b = 0.0);
        for i in 0..processor.len() {
            let p = processor[i] as usize;
            busy[p] += self.det.time[i] / self.machine.speeds[p] + self.comm[i];
        }
        let mut idle: Vec<u32> = (0..k as u32).collect();
        idle.sort_by(|&a, &b| {
            busy[a as usize]
                .total_cmp(&busy[b as usize])
                .then(a.cmp(&b))
        });
        idle.truncate(if k <= 16 { k } else { 4 });
        idle
    }
}

/// The local search of `T_REAL` from `processor`: a module on the critical path moves to
/// the processor of one of its neighbours or of the least busy, when that shortens the
/// schedule (or keeps its length and lowers the sum of the finish times), until no
/// critical module can move for the better or `budget` units of work are spent.
fn local_search(
    g: &PrecedenceGraph,
    det: &Deterministic,
    modules: &Instance,
    machine: &Machine,
    mut processor: Vec<u32>,
    budget: u64,
    progress: &dyn Progress,
) -> Vec<u32> {
    let n = g.modules();
    let k = machine.processors as usize;
    let cost = (n + g.links.len() + k) as u64;
    let sim = ScheduleSim::new(g, det, k);
    // checking the EOR branches of every start and end costs their count too.
    let cost = cost + sim.ex.memberships;
    let mut spent = 0u64;
    let mut sc = LsScorer {
        modules,
        machine,
        det,
        sim,
        comm: vec![0.0f64; n],
        // The durations of the assignment scored, rewritten in place.
        dur: vec![0.0f64; n],
    };
    let mut mem = vec![0.0f64; k];
    let mut busy = vec![0.0f64; k];
    for i in 0..n {
        mem[processor[i] as usize] += g.memory[i];
    }
    let cap = memory_cap(machine.memory);
    let better = |a: (f64, f64), b: (f64, f64)| {
        a.0 < b.0 * (1.0 - 1e-12) || (a.0 <= b.0 && a.1 < b.1 * (1.0 - 1e-12))
    };
    let mut current = sc.score(&processor);
    spent += cost;
    let mut neighbours = vec![Vec::new(); n];
    for l in &g.links {
        if l.from != l.to {
            neighbours[l.from as usize].push(l.to);
            neighbours[l.to as usize].push(l.from);
        }
    }
    progress.phase("local search");
    'search: while spent < budget {
        progress.step(spent, budget);
        let idle = sc.least_busy(&processor, &mut busy);
        let path = sc.sim.critical_path();
        for &v in &path {
            let v = v as usize;
            let from = processor[v];
            let mut to: Vec<u32> = neighbours[v]
                .iter()
                .map(|&u| processor[u as usize])
                .collect();
            to.extend_from_slice(&idle);
            to.sort_unstable();
            to.dedup();
            for q in to {
                if q == from || mem[q as usize] + g.memory[v] > cap {
                    continue;
                }
                if spent >= budget {
                    break 'search;
                }
                processor[v] = q;
                let s = sc.score(&processor);
                spent += cost;
                if better(s, current) {
                    current = s;
                    mem[from as usize] -= g.memory[v];
                    mem[q as usize] += g.memory[v];
                    continue 'search;
                }
                processor[v] = from;
            }
        }
        break; // no critical module moves for the better
    }
    processor
}

/// The schedule of `G'`: module `i` runs on `processor[i]` for `duration[i]` without
/// preemption once all its predecessors in the precedence DAG have finished, and never
/// while a module on another branch of one of its `EOR` modules runs ([`Exclusion`]: in
/// a run of the program only one branch executes, so the expected times of exclusive
/// branches add up). At every moment, after the modules finishing then are done, each
/// idle processor starts its first ready module in the topological order `det.order` that
/// no running module excludes (processors in the order of their first ready module when
/// the graph has `EOR` branches). Buffers are kept between runs.
pub struct ScheduleSim {
    pub(crate) n: usize,
    pub(crate) k: usize,
    pub(crate) dag: Dag,
    /// The `EOR` branches.
    pub(crate) ex: Exclusion,
    /// Number of DAG predecessors of each module.
    pub(crate) preds: Vec<u32>,
    pub(crate) rank: Vec<u32>,
    pub(crate) pending: Vec<u32>,
    pub(crate) start: Vec<f64>,
    pub(crate) finish: Vec<f64>,
    pub(crate) queues: Vec<BinaryHeap<std::cmp::Reverse<(u32, u32)>>>,
    pub(crate) busy: Vec<bool>,
    pub(crate) events: BinaryHeap<std::cmp::Reverse<(u64, u32)>>,
    /// Per `EOR` module: the running modules on its branches, and the branch (its start).
    running: Vec<(u32, u32)>,
    /// Per `EOR` module: the module whose end last left none of its branches running.
    last_exit: Vec<u32>,
    /// Per module: the module whose end let it start past an `EOR` exclusion, if any.
    blocker: Vec<u32>,
    /// Idle processors whose ready modules are all excluded.
    waiting: Vec<usize>,
    /// Per module: the module its processor ran just before it in the last run.
    before: Vec<u32>,
    /// Per processor: the module it started last.
    last: Vec<u32>,
    /// Ready modules set aside while a processor looks for one it may start.
    held: Vec<std::cmp::Reverse<(u32, u32)>>,
}

impl ScheduleSim {
    /// A simulator of `g`'s DAG (`det`'s back links left out) on `k` processors.
    pub fn new(g: &PrecedenceGraph, det: &Deterministic, k: usize) -> Self {
        let n = g.modules();
        let dag = Dag::new(g, det);
        let ex = Exclusion::new(g, det, &dag);
        let preds = (0..n).map(|v| dag.preds(v).len() as u32).collect();
        let rank = det.positions();
        let regions = if ex.is_empty() { 0 } else { n };
        ScheduleSim {
            n,
            k,
            dag,
            ex,
            preds,
            rank,
            pending: vec![0; n],
            start: vec![0.0; n],
            finish: vec![0.0; n],
            queues: vec![BinaryHeap::new(); k],
            busy: vec![false; k],
            events: BinaryHeap::new(),
            running: vec![(0, u32::MAX); regions],
            last_exit: vec![u32::MAX; regions],
            blocker: vec![u32::MAX; regions],
            waiting: Vec::new(),
            held: Vec::new(),
            before: vec![u32::MAX; n],
            last: vec![u32::MAX; k],
        }
    }

    /// Whether no running module excludes module `v`.
    fn allowed(&self, v: usize) -> bool {
        self.ex.branches(v).all(|(e, s)| {
            matches!(self.running[e as usize], (0, _)) || self.running[e as usize].1 == s
        })
    }

    /// The first ready module of processor `p` that may start, taken off its queue.
    fn pick(&mut self, p: usize) -> Option<usize> {
        use std::cmp::Reverse;
        if self.ex.is_empty() {
            return self.queues[p].pop().map(|Reverse((_, v))| v as usize);
        }
        let mut found = None;
        while let Some(item) = self.queues[p].pop() {
            let Reverse((_, v)) = item;
            if self.allowed(v as usize) {
                found = Some(v as usize);
                break;
            }
            self.held.push(item);
        }
        self.queues[p].extend(self.held.drain(..));
        found
    }

    /// The final time and the sum of the finish times.
    ///
    /// # Panics
    ///
    /// If a processor is out of range or a duration is negative or not finite.
    pub fn run(&mut self, processor: &[u32], duration: &[f64]) -> (f64, f64) {
        use std::cmp::Reverse;
        let key = |t: f64| (t + 0.0).to_bits();
        let exclusive = !self.ex.is_empty();
        self.pending.copy_from_slice(&self.preds);
        self.busy.iter_mut().for_each(|b| *b = false);
        self.events.clear();
        self.queues.iter_mut().for_each(|q| q.clear());
        self.running.iter_mut().for_each(|r| *r = (0, u32::MAX));
        self.last_exit.iter_mut().for_each(|x| *x = u32::MAX);
        self.blocker.iter_mut().for_each(|x| *x = u32::MAX);
        self.waiting.clear();
        self.last.iter_mut().for_each(|x| *x = u32::MAX);
        for v in 0..self.n {
            assert!(
                duration[v].is_finite() && duration[v] >= 0.0,
                "durations are finite"
            );
            if self.pending[v] == 0 {
                self.queues[processor[v] as usize].push(Reverse((self.rank[v], v as u32)));
            }
        }
        let mut dirty: Vec<usize> = (0..self.k).collect();
        let mut now = 0.0f64;
        let (mut makespan, mut total) = (0.0f64, 0.0f64);
        loop {
            if exclusive {
                // the processor with the module first in topological order starts first.
                let queues = &self.queues;
                dirty.sort_by_key(|&p| queues[p].peek().map_or(u32::MAX, |Reverse((r, _))| *r));
            }
            for i in 0..dirty.len() {
                let p = dirty[i];
                if self.busy[p] {
                    continue;
                }
                let Some(v) = self.pick(p) else {
                    if !self.queues[p].is_empty() {
                        self.waiting.push(p);
                    }
                    continue;
                };
                self.busy[p] = true;
                self.before[v] = self.last[p];
                self.last[p] = v as u32;
                self.start[v] = now;
                self.finish[v] = now + duration[v];
                self.events.push(Reverse((key(self.finish[v]), v as u32)));
                if exclusive {
                    for (e, s) in self.ex.branches(v) {
                        let e = e as usize;
                        let x = self.last_exit[e];
                        if x != u32::MAX && self.finish[x as usize] == now {
                            self.blocker[v] = x;
                        }
                        self.running[e] = (self.running[e].0 + 1, s);
                    }
                }
            }
            dirty.clear();
            let Some(&Reverse((t, _))) = self.events.peek() else {
                break;
            };
            now = f64::from_bits(t);
            while let Some(&Reverse((t2, v))) = self.events.peek() {
                if t2 != t {
                    break;
                }
                self.events.pop();
                let v = v as usize;
                makespan = makespan.max(self.finish[v]);
                total += self.finish[v];
                let p = processor[v] as usize;
                self.busy[p] = false;
                dirty.push(p);
                if exclusive {
                    let mut freed = false;
                    for (e, _) in self.ex.branches(v) {
                        let e = e as usize;
                        self.running[e].0 -= 1;
                        if self.running[e].0 == 0 {
                            self.last_exit[e] = v as u32;
                            freed = true;
                        }
                    }
                    if freed {
                        dirty.append(&mut self.waiting);
                    }
                }
                for &s in self.dag.succs(v) {
                    let s = s as usize;
                    self.pending[s] -= 1;
                    if self.pending[s] == 0 {
                        let q = processor[s] as usize;
                        self.queues[q].push(Reverse((self.rank[s], s as u32)));
                        dirty.push(q);
                    }
                }
            }
            dirty.sort_unstable();
            dirty.dedup();
        }
        (makespan, total + 0.0)
    }

    /// Start times of the last run.
    pub fn starts(&self) -> &[f64] {
        &self.start
    }

    /// Finish times of the last run.
    pub fn finishes(&self) -> &[f64] {
        &self.finish
    }

    /// The modules of a critical path of the last run, last first: from the module that
    /// finished last, back through whatever it started on (a predecessor finishing at its
    /// start, else the module before it on its processor, else the module on another
    /// branch of an `EOR` whose end let it start).
    pub fn critical_path(&self) -> Vec<u32> {
        let n = self.n;
        let Some(mut v) =
            (0..n).max_by(|&a, &b| self.finish[a].total_cmp(&self.finish[b]).then(b.cmp(&a)))
        else {
            return Vec::new();
        };
        let mut path = vec![v as u32];
        loop {
            let s = self.start[v];
            if s <= 0.0 {
                break;
            }
            let next = self
                .dag
                .preds(v)
                .iter()
                .copied()
                .find(|&u| self.finish[u as usize] == s)
                .or_else(|| {
                    Some(self.before[v]).filter(|&u| u != u32::MAX && self.finish[u as usize] == s)
                })
                .or_else(|| {
                    // the end that let it past an EOR exclusion.
                    self.blocker
                        .get(v)
                        .copied()
                        .filter(|&u| u != u32::MAX && self.finish[u as usize] == s)
                });
            // every step goes to a module started earlier in the run: at most n steps.
            match next {
                Some(u) if path.len() < n => {
                    v = u as usize;
                    path.push(u);
                }
                _ => break,
            }
        }
        path
    }
}

/// `T_REAL`: the schedule of `G'` on `speeds.len()` processors with module `i` on
/// `processor[i]` for `m'_i / speeds[processor[i]] + comm[i]` (see [`ScheduleSim`]).
pub fn simulate_schedule(
    g: &PrecedenceGraph,
    det: &Deterministic,
    processor: &[u32],
    comm: &[f64],
    speeds: &[f64],
) -> Result<f64, Error> {
    let k = speeds.len();
    if let Some(i) = processor.iter().position(|&p| p as usize >= k) {
        return Err(Error::Mismatch(format!(
            "module {i} is on processor {} but there are {k}",
            processor[i]
        )));
    }
    let duration: Vec<f64> = det
        .time
        .iter()
        .zip(comm)
        .zip(processor)
        .map(|((t, c), &p)| t / speeds[p as usize] + c)
        .collect();
    if duration.iter().any(|d| !d.is_finite()) {
        return Err(Error::Config(
            "a module's time overflows (beyond about 1.8e308)".into(),
        ));
    }
    Ok(ScheduleSim::new(g, det, k).run(processor, &duration).0)
}
