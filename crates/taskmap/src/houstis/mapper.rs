//! The Algorithm Mapper's steps (Houstis et al. 1989): step 1, ALLOC's clusterings over
//! the searched time frames; step 2, the reduction to as many clusters as processors;
//! step 3, the assignment of clusters to processors (by speed, as a least-bottleneck
//! assignment); and the scoring of a given assignment.

use crate::error::Error;
use crate::houstis::alloc::*;
use crate::houstis::machine::*;
use crate::houstis::precedence::{Deterministic, ParallelMatrix, PrecedenceGraph};
use crate::houstis::schedule::*;
use crate::mapper::{NoProgress, Progress};

/// Step 1's target, the longest time of its clusters, and how many there are.
pub type Step1 = (usize, f64, usize);

/// One processor's share of the result.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessorLoad {
    /// Processing time of its modules, `Σ m' / speed`.
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
    /// Step 1: its target, its longest cluster time and its clusters (`None` without `Δ`).
    pub step1: Option<Step1>,
    /// The frame step 1's search stopped at (`None` without step 1); ALLOC at this frame
    /// gives step 1's clusters.
    pub step1_frame: Option<f64>,
    /// Whether step 2 (parallelism reduction) ran.
    pub reduced: bool,
    /// `T_seq = Σ m'` on the fastest processor; `T_PAR`, the longest processor time (processing and
    /// communication), the shortest frame the final clustering fits in; `T_REAL`.
    pub t_seq: f64,
    pub t_par: f64,
    /// The frame the last search stopped at (for `alloc-ls`, that of its start).
    pub frame: f64,
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
    algorithm_mapper_observed(g, det, parallel, machine, params, &NoProgress)
}

/// [`algorithm_mapper`], telling `progress` of its steps and of the rounds of their frame
/// searches.
pub fn algorithm_mapper_observed(
    g: &PrecedenceGraph,
    det: &Deterministic,
    parallel: Option<&ParallelMatrix>,
    machine: &Machine,
    params: &AllocParams,
    progress: &dyn Progress,
) -> Result<AmapResult, Error> {
    check_inputs(g, det, machine, params)?;
    let k = machine.processors as usize;
    let modules = Instance::of_modules(g, det, parallel);
    let (cluster, frame1, step1) = step_one(&modules, machine, params, progress)?;
    let (cluster, frame, reduced) = reduce(g, det, machine, params, cluster, frame1, k, progress)?;
    let processor = step_three(&modules, machine, cluster);
    let mut r = evaluate(g, det, &modules, machine, processor)?;
    r.step1_frame = step1.map(|_| frame1);
    r.step1 = step1;
    r.reduced = reduced || parallel.is_none();
    r.frame = frame;
    Ok(r)
}

/// The result of a given assignment (a processor per module): loads, delay, `T_PAR`,
/// `T_REAL`, as for the mapper's own ([`algorithm_mapper`]). Errors if a processor is
/// out of range or the times overflow; memory is not checked ([`memory_excess`]).
pub fn evaluate_assignment(
    g: &PrecedenceGraph,
    det: &Deterministic,
    machine: &Machine,
    processor: Vec<u32>,
) -> Result<AmapResult, Error> {
    check_inputs(g, det, machine, &AllocParams::default())?;
    if processor.len() != g.modules() {
        return Err(Error::Mismatch(format!(
            "the assignment has {} entries for {} modules",
            processor.len(),
            g.modules()
        )));
    }
    if let Some(i) = processor.iter().position(|&p| p >= machine.processors) {
        return Err(Error::Mismatch(format!(
            "module \"{}\" is on processor {} but there are {}",
            g.names[i], processor[i], machine.processors
        )));
    }
    let modules = Instance::of_modules(g, det, None);
    evaluate(g, det, &modules, machine, processor)
}

/// The first processor whose modules need more memory than it has, with that need.
pub fn memory_excess(
    g: &PrecedenceGraph,
    machine: &Machine,
    processor: &[u32],
) -> Option<(u32, f64)> {
    let mut need = vec![0.0f64; machine.processors as usize];
    for (i, &p) in processor.iter().enumerate() {
        need[p as usize] += g.memory[i];
    }
    let cap = memory_cap(machine.memory);
    need.iter()
        .position(|&m| m > cap)
        .map(|p| (p as u32, need[p]))
}

/// Checks the parameters, the times' range and the modules' memory.
pub(crate) fn check_inputs(
    g: &PrecedenceGraph,
    det: &Deterministic,
    machine: &Machine,
    params: &AllocParams,
) -> Result<(), Error> {
    if !(params.tolerance >= 1e-12 && params.tolerance < 1.0) {
        return Err(Error::Config(format!(
            "the frame tolerance must lie in [1e-12, 1), not {}",
            params.tolerance
        )));
    }
    let total_volume: f64 = det.volume.iter().sum::<f64>() * 2.0;
    let worst = machine
        .model
        .analyse(1e6)
        .delay
        .max(machine.model.analyse(0.0).delay);
    // the speeds as with_speeds checks them (the field is public)
    machine.check_speeds()?;
    let t_seq: f64 = det.time.iter().sum::<f64>() / machine.slowest();
    // with the frame search's margin (its first frame)
    if !((t_seq + total_volume * machine.itu_time * worst) * 1.01 + 1.0).is_finite() {
        return Err(Error::Config(
            "the processing and communication times add up beyond the largest float (about 1.8e308)".into(),
        ));
    }
    if let (Some(cap), Some(i)) = (
        machine.memory,
        (0..g.modules()).find(|&i| g.memory[i] > machine.memory.unwrap_or(f64::INFINITY)),
    ) {
        return Err(Error::Mismatch(format!(
            "module \"{}\" needs memory {} but a processor has {cap}",
            g.names[i], g.memory[i]
        )));
    }
    Ok(())
}

/// Step 1 (with `Δ`): clusters for the assigned parallelism, their frame, and
/// `(target, T, clusters)`; without `Δ`, every module alone.
pub(crate) fn step_one(
    modules: &Instance,
    machine: &Machine,
    params: &AllocParams,
    progress: &dyn Progress,
) -> Result<(Vec<u32>, f64, Option<Step1>), Error> {
    if modules.parallel.is_none() {
        return Ok(((0..modules.len() as u32).collect(), 0.0, None));
    }
    progress.phase("step 1: frame search");
    let k = machine.processors as usize;
    let target = params.parallelism.map_or(k, |p| p as usize).max(1);
    let search = |t: usize| {
        search_frame(
            modules,
            machine,
            t,
            params.tolerance,
            params.samples,
            params.pool,
            progress,
        )
    };
    let (f1, c) = match search(target) {
        Ok(found) => found,
        Err(at_hi) => search(at_hi.count).map_err(|_| {
            Error::Mismatch("the modules do not fit in the processors' memory".into())
        })?,
    };
    let t1 = max_load(
        modules,
        &c.cluster,
        c.delay * machine.itu_time,
        machine.fastest(),
    );
    Ok((c.cluster, f1, Some((target, t1, c.count))))
}

/// Step 2 when there are more than `target` clusters: the clusters as modules, without
/// `Δ`, clustered again for `target` processors. Returns the clusters, the frame and
/// whether it ran.
pub(crate) fn reduce(
    g: &PrecedenceGraph,
    det: &Deterministic,
    machine: &Machine,
    params: &AllocParams,
    mut cluster: Vec<u32>,
    frame: f64,
    target: usize,
    progress: &dyn Progress,
) -> Result<(Vec<u32>, f64, bool), Error> {
    let count = cluster.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    if count <= target {
        return Ok((cluster, frame, false));
    }
    let mut proc = vec![0.0; count];
    let mut mem = vec![0.0; count];
    for i in 0..g.modules() {
        proc[cluster[i] as usize] += det.time[i];
        mem[cluster[i] as usize] += g.memory[i];
    }
    let pairs = g
        .links
        .iter()
        .zip(&det.volume)
        .map(|(l, &v)| (cluster[l.from as usize], cluster[l.to as usize], v));
    let coarse = Instance::build(proc, mem, pairs, None);
    progress.phase("step 2: frame search");
    let (f, c) = search_frame(
        &coarse,
        machine,
        target,
        params.tolerance,
        params.samples,
        params.pool,
        progress,
    )
    .map_err(|_| {
        Error::Mismatch(format!(
            "the modules do not fit in the memory of {target} processors"
        ))
    })?;
    for x in cluster.iter_mut() {
        *x = c.cluster[*x as usize];
    }
    Ok((cluster, f, true))
}

/// Communication time of every module (its ITUs to modules on other processors × the
/// delay at the assignment's load), and that load's queue state.
pub(crate) fn module_comm(
    modules: &Instance,
    machine: &Machine,
    processor: &[u32],
    comm: &mut [f64],
) -> crate::houstis::interconnect::QueueState {
    let mut cut2 = 0.0;
    for (i, c) in comm.iter_mut().enumerate() {
        *c = outside(modules, processor, i);
        cut2 += *c;
    }
    let work: f64 = modules
        .proc
        .iter()
        .zip(processor)
        .map(|(t, &p)| t / machine.speeds[p as usize])
        .sum();
    let state = machine.model.analyse(rho_of(cut2 / 2.0, work, machine));
    let cost = state.delay * machine.itu_time;
    comm.iter_mut().for_each(|c| *c *= cost);
    state
}

/// Step 3: the processor of each module, given its cluster (at most `k` clusters).
/// With one speed, cluster `c` goes to processor `c`, as in the paper; with several,
/// [`assign`] places the clusters, their communication taken at the delay of the
/// clustering's load.
pub(crate) fn step_three(modules: &Instance, machine: &Machine, cluster: Vec<u32>) -> Vec<u32> {
    if !machine.mixed_speeds() {
        return cluster;
    }
    let count = cluster.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut proc = vec![0.0f64; count];
    let mut ext = vec![0.0f64; count];
    for i in 0..modules.len() {
        proc[cluster[i] as usize] += modules.proc[i];
        ext[cluster[i] as usize] += outside(modules, &cluster, i);
    }
    let cost = machine
        .model
        .analyse(modules.rho(ext.iter().sum::<f64>() / 2.0, machine))
        .delay
        * machine.itu_time;
    let comm: Vec<f64> = ext.iter().map(|e| e * cost).collect();
    let to = assign(&proc, &comm, &machine.speeds);
    cluster.into_iter().map(|c| to[c as usize]).collect()
}

/// The processor of each of at most `speeds.len()` clusters (ours): the assignment with
/// the least longest time `proc[c] / speed + comm[c]`, to a relative `1e-12`. A bisection
/// over that time; for a time `T`, cluster `c` fits on the processors of speed at least
/// `proc[c] / (T − comm[c])`, the fastest ones, so the clusters that fit on fewest
/// processors choose first, each the fastest left (ties: the larger processing first,
/// then the lower cluster; the lower processor).
///
/// # Panics
///
/// If there are more clusters than speeds.
pub fn assign(proc: &[f64], comm: &[f64], speeds: &[f64]) -> Vec<u32> {
    let count = proc.len();
    assert!(count <= speeds.len(), "at most one cluster per processor");
    let mut order: Vec<u32> = (0..speeds.len() as u32).collect();
    order.sort_by(|&a, &b| {
        speeds[b as usize]
            .total_cmp(&speeds[a as usize])
            .then(a.cmp(&b))
    });
    let sorted: Vec<f64> = order.iter().map(|&p| speeds[p as usize]).collect();
    // How many processors cluster c fits on within `t` (a prefix of `sorted`).
    let fits_on = |c: usize, t: f64| -> usize {
        if comm[c] > t {
            return 0;
        }
        sorted.partition_point(|&s| proc[c] / s + comm[c] <= t)
    };
    let picks = |t: f64| -> Option<Vec<u32>> {
        let mut by: Vec<(usize, usize)> = (0..count).map(|c| (fits_on(c, t), c)).collect();
        by.sort_by(|x, y| {
            x.0.cmp(&y.0)
                .then(proc[y.1].total_cmp(&proc[x.1]))
                .then(x.1.cmp(&y.1))
        });
        let mut to = vec![0u32; count];
        for (i, &(room, c)) in by.iter().enumerate() {
            if room <= i {
                return None;
            }
            to[c] = order[i];
        }
        Some(to)
    };
    let slowest = sorted.last().copied().unwrap_or(1.0);
    let mut hi = (0..count)
        .map(|c| proc[c] / slowest + comm[c])
        .fold(0.0, f64::max);
    let mut lo = comm.iter().copied().fold(0.0, f64::max);
    for _ in 0..200 {
        if hi - lo <= 1e-12 * hi {
            break;
        }
        let mid = lo + (hi - lo) / 2.0;
        if picks(mid).is_some() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    picks(hi).expect("every cluster fits on the slowest processor at the top")
}

/// The result of an assignment: loads, delay, `T_PAR`, `T_REAL`.
pub(crate) fn evaluate(
    g: &PrecedenceGraph,
    det: &Deterministic,
    modules: &Instance,
    machine: &Machine,
    processor: Vec<u32>,
) -> Result<AmapResult, Error> {
    let n = g.modules();
    let k = machine.processors as usize;
    let mut comm = vec![0.0f64; n];
    let state = module_comm(modules, machine, &processor, &mut comm);
    let mut loads: Vec<ProcessorLoad> = (0..k)
        .map(|_| ProcessorLoad {
            processing: 0.0,
            communication: 0.0,
            modules: Vec::new(),
        })
        .collect();
    for i in 0..n {
        let p = processor[i] as usize;
        loads[p].processing += det.time[i] / machine.speeds[p];
        loads[p].communication += comm[i];
        loads[p].modules.push(i as u32);
    }
    let t_real = simulate_schedule(g, det, &processor, &comm, &machine.speeds)?;
    // T_PAR: the shortest frame this clustering fits (the search's frame may be longer).
    let t_par = loads
        .iter()
        .map(|l| l.processing + l.communication)
        .fold(0.0, f64::max);
    Ok(AmapResult {
        processor,
        loads,
        step1: None,
        step1_frame: None,
        reduced: false,
        t_seq: det.time.iter().sum::<f64>() / machine.fastest(),
        t_par,
        frame: t_par,
        t_real,
        rho: state.rho,
        delay: state.delay,
        utilisation: state.utilisation,
        model_active: state.active,
    })
}
