//! ALLOC at a frame the user gives, and a sweep of frames (ours, after figure 4 of
//! Houstis et al. 1989: the elapsed time and the transfer delay of the clusterings a range
//! of frames gives).
//!
//! The mapper searches the smallest frame `T_PAR` whose clustering has at most the
//! assigned parallelism; the paper checks by simulation that the elapsed time is least
//! there. [`at_frame`] clusters at one frame `T` instead, then takes steps 2 and 3 as the
//! mapper does (more clusters than processors are clustered again for `k`, without `Δ`);
//! [`frame_sweep`] does so at many frames, on the threads of a pool, and tabulates the
//! clusters, the delay and `T_REAL` of each.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::houstis::alloc::{alloc_settled, max_load, AllocParams, Instance};
use crate::houstis::machine::Machine;
use crate::houstis::mapper::{check_inputs, evaluate, reduce, step_three, AmapResult};
use crate::houstis::precedence::{Deterministic, ParallelMatrix, PrecedenceGraph};
use crate::mapper::NoProgress;

/// One frame of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrameRow {
    /// The frame `T` ALLOC clustered at.
    pub frame: f64,
    /// Clusters at that frame.
    pub clusters: usize,
    /// Whether every cluster fits in the frame (a module longer than the frame, or memory,
    /// can keep one from fitting).
    pub fits: bool,
    /// Whether step 2 ran (more clusters than processors).
    pub reduced: bool,
    /// `T_PAR` of the final assignment: the longest processor time.
    pub t_par: f64,
    /// Delay per ITU (in ITU times) at the final assignment's load.
    pub delay: f64,
    /// `T_REAL` of the final assignment.
    pub t_real: f64,
    /// `T_seq / T_REAL`.
    pub speedup: f64,
}

impl FrameRow {
    /// The row of a result whose step 1 clustered at a frame (`r.step1_frame`, else
    /// `r.frame`), and whether its clusters fit that frame.
    pub fn of(r: &AmapResult, fits: bool) -> Self {
        FrameRow {
            frame: r.step1_frame.unwrap_or(r.frame),
            clusters: r.step1.map_or(0, |s| s.2),
            fits,
            reduced: r.reduced,
            t_par: r.t_par,
            delay: r.delay,
            t_real: r.t_real,
            speedup: r.speedup(),
        }
    }
}

/// The frames ALLOC can be asked for on `g`: from the longest time of a module alone on
/// the fastest processor, its communication at the delay of the unclustered load
/// included (the smallest frame that holds every module), to the work on the slowest
/// processor plus all the communication at that delay (a frame that holds the whole
/// program).
pub fn frame_range(det: &Deterministic, g: &PrecedenceGraph, machine: &Machine) -> (f64, f64) {
    let modules = Instance::of_modules(g, det, None);
    let work: f64 = modules.proc.iter().sum();
    let rho = modules.rho(modules.total_comm(), machine);
    let cost = machine.itu_time * machine.model.analyse(rho).delay;
    let lo = (0..modules.len())
        .map(|i| {
            let comm: f64 = modules.neighbours(i).iter().map(|x| x.1).sum();
            modules.proc[i] / machine.fastest() + comm * cost
        })
        .fold(0.0, f64::max);
    let hi = work / machine.slowest() + modules.total_comm() * cost;
    (lo, hi.max(lo))
}

/// ALLOC at `frame` (with `Δ` when `parallel` is given), then steps 2 and 3 as the
/// mapper takes them: more clusters than processors are clustered again for `k` without
/// `Δ`. Errors when a cluster does not fit in the frame.
pub fn at_frame(
    g: &PrecedenceGraph,
    det: &Deterministic,
    parallel: Option<&ParallelMatrix>,
    machine: &Machine,
    params: &AllocParams,
    frame: f64,
) -> Result<AmapResult, Error> {
    let r = cluster_at(g, det, parallel, machine, params, frame)?;
    if !r.1 {
        let (lo, _) = frame_range(det, g, machine);
        let longest = (0..g.modules())
            .max_by(|&a, &b| det.time[a].total_cmp(&det.time[b]).then(b.cmp(&a)))
            .map_or(String::new(), |i| g.names[i].clone());
        return Err(Error::Config(format!(
            "at the frame {frame} some cluster does not fit: the longest module, \"{longest}\", takes {} on the fastest processor, and a module's communication and memory count too; frames from {lo} hold every module alone",
            det.time.iter().copied().fold(0.0, f64::max) / machine.fastest()
        )));
    }
    Ok(r.0)
}

/// [`at_frame`], and whether every cluster fits in the frame.
fn cluster_at(
    g: &PrecedenceGraph,
    det: &Deterministic,
    parallel: Option<&ParallelMatrix>,
    machine: &Machine,
    params: &AllocParams,
    frame: f64,
) -> Result<(AmapResult, bool), Error> {
    check_inputs(g, det, machine, params)?;
    if !(frame.is_finite() && frame > 0.0) {
        return Err(Error::Config(format!(
            "the frame must be a number above 0, not {frame}"
        )));
    }
    let k = machine.processors as usize;
    let modules = Instance::of_modules(g, det, parallel);
    let rho = modules.rho(modules.total_comm(), machine);
    let c = alloc_settled(&modules, frame, machine, rho);
    let target = params.parallelism.map_or(k, |p| p as usize).max(1);
    // step 1's longest cluster time, as the mapper reports it.
    let t1 = max_load(
        &modules,
        &c.cluster,
        c.delay * machine.itu_time,
        machine.fastest(),
    );
    let (cluster, _, reduced) = reduce(g, det, machine, params, c.cluster, frame, k, &NoProgress)?;
    let processor = step_three(&modules, machine, cluster);
    let mut r = evaluate(g, det, &modules, machine, processor)?;
    r.step1 = Some((target, t1, c.count));
    r.step1_frame = Some(frame);
    r.reduced = reduced || parallel.is_none();
    r.frame = frame;
    Ok((r, c.feasible))
}

/// [`at_frame`] at every frame of `frames`, on `params.pool`'s threads when it has one:
/// a row per frame, in their order.
pub fn frame_sweep(
    g: &PrecedenceGraph,
    det: &Deterministic,
    parallel: Option<&ParallelMatrix>,
    machine: &Machine,
    params: &AllocParams,
    frames: &[f64],
) -> Result<Vec<FrameRow>, Error> {
    // one frame at a time inside each row: the rows are the parallel work.
    let inner = AllocParams {
        pool: None,
        ..*params
    };
    let row = |&frame: &f64| -> Result<FrameRow, Error> {
        let (r, fits) = cluster_at(g, det, parallel, machine, &inner, frame)?;
        Ok(FrameRow::of(&r, fits))
    };
    match params.pool {
        Some(pool) => pool.install(|| frames.par_iter().map(row).collect()),
        None => frames.iter().map(row).collect(),
    }
}
