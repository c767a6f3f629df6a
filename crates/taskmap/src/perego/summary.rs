//! What `taskmap sim` reports, for the CLI and the bindings alike: the simulation's
//! summary ([`SimSummary`]), the estimate F beside it ([`FSummary`]), and the mapping a
//! program is simulated under ([`map_program`]).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use taskmap_arch::{Architecture, PeId};

use crate::error::Error;
use crate::mapper::{Progress, RunContext};
use crate::mapping::Mapping;
use crate::perego::greedy::{greedy_map_program, GreedyPerego};
use crate::perego::program::Program;
use crate::perego::spm::{SpmModel, SpmParams};
use crate::perego::wormhole::{SimReport, Stats, WormholeParams};
use crate::problem::Problem;
use crate::registry::AlgorithmSpec;

/// A simulation's report: the program's size, the target, the machine parameters, and
/// what the simulation measured (times in cycles).
#[derive(serde::Serialize)]
pub struct SimSummary {
    pub tasks: usize,
    pub messages: usize,
    pub flits: u64,
    pub target: String,
    pub params: WormholeParams,
    pub completion: u64,
    pub pe_busy: MinMeanMax,
    pub pe_idle: MinMeanMax,
    pub links_used: usize,
    pub link_utilisation_mean: f64,
    pub link_utilisation_max: f64,
    pub network_messages: u64,
    pub local_messages: u64,
    pub latency: Stats,
    pub contention_free_latency_mean: f64,
    pub events: u64,
    pub wall_seconds: f64,
    pub f: Option<FSummary>,
}

impl SimSummary {
    /// The summary of `report`, the simulation of `program` on `target` (its spec, or
    /// "ideal machine") with `params`, which took `wall_seconds`; `f`: the estimate beside
    /// it, when asked for.
    pub fn new(
        program: &Program,
        report: &SimReport,
        target: String,
        params: &WormholeParams,
        wall_seconds: f64,
        f: Option<FSummary>,
    ) -> Self {
        Self {
            tasks: program.num_tasks(),
            messages: program.messages().len(),
            flits: program.total_flits(),
            target,
            params: params.clone(),
            completion: report.completion,
            pe_busy: MinMeanMax::of(&report.pe_busy),
            pe_idle: MinMeanMax::of(&report.pe_idle),
            links_used: report.link_busy.iter().filter(|&&b| b > 0).count(),
            link_utilisation_mean: report.link_utilisation_mean,
            link_utilisation_max: report.link_utilisation_max,
            network_messages: report.network_messages,
            local_messages: report.local_messages,
            latency: report.latency,
            contention_free_latency_mean: report.contention_free_latency_sum as f64
                / report.network_messages.max(1) as f64,
            events: report.events,
            wall_seconds,
            f,
        }
    }
}

/// The three completion-time estimates of a mapping beside the simulated completion
/// time: De Petris & Perego's F as the paper prints it (eq. 2-10), that F with the
/// receivers' slack absorbing delays (ours, with its terms), and F_prop (ours: the
/// model's delays propagated along the program; one task per PE only).
#[derive(serde::Serialize)]
pub struct FSummary {
    /// The paper's F, eq. 2-10 (what the greedy mapper minimises).
    pub f_paper: f64,
    /// `(F_paper - completion) / completion`.
    pub f_paper_relative_error: f64,
    /// Eq. 2-10 with slack absorption (`SpmModel::evaluate`).
    pub f_slack: f64,
    pub f_slack_relative_error: f64,
    /// The terms of `f_slack`: Σ_n R(m,n), the PE of the largest R, and the four terms.
    pub f_sum: f64,
    pub argmax_pe: u32,
    pub comp_idle: f64,
    pub distance: f64,
    pub multitasking: f64,
    pub contention: f64,
    pub phases: usize,
    pub overlap_fraction: f64,
    /// `F_prop` (ours; one task per PE only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub f_prop: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub f_prop_relative_error: Option<f64>,
    /// Why the estimates may not hold here: the ways the program and mapping leave the
    /// range they were validated in (empty inside it). See [`validity_notes`].
    pub outside_validated_range: Vec<String>,
}

impl FSummary {
    /// The estimates of `mapping` under the phase model with `overlap_fraction` and the
    /// machine `params`, against the simulated `completion` time.
    pub fn new(
        program: &Program,
        arch: &dyn Architecture,
        mapping: &Mapping,
        params: &WormholeParams,
        overlap_fraction: f64,
        completion: u64,
    ) -> Result<Self, Error> {
        let sp = SpmParams {
            overlap_fraction,
            machine: params.clone(),
        };
        let model = SpmModel::build(program, &sp)?;
        let e = model.evaluate(arch, mapping)?;
        let paper = model.evaluate_paper(arch, mapping)?.f;
        let prop = model
            .evaluate_propagated(program, arch, mapping)?
            .map(|p| p.f_prop);
        let rel = |f: f64| (f - completion as f64) / (completion.max(1) as f64);
        Ok(Self {
            f_paper: paper,
            f_paper_relative_error: rel(paper),
            f_slack: e.f,
            f_slack_relative_error: rel(e.f),
            f_sum: e.f_sum,
            argmax_pe: e.argmax,
            comp_idle: e.comp_idle,
            distance: e.distance,
            multitasking: e.multitasking,
            contention: e.contention,
            phases: model.num_phases(),
            overlap_fraction,
            f_prop: prop,
            f_prop_relative_error: prop.map(rel),
            outside_validated_range: validity_notes(program, mapping, params),
        })
    }
}

/// Largest program of the accuracy experiment the estimates were validated on
/// (`docs/simulation.md`, "Accuracy").
pub const VALIDATED_MAX_TASKS: usize = 200;
/// Compute cycles per flit sent below which traffic is heavier than validated: the
/// programs of that experiment have 8 on average (7.8-8.2 per program).
pub const VALIDATED_CYCLES_PER_FLIT: f64 = 6.0;

/// The ways a program and mapping leave the range the three estimates were validated in
/// (the accuracy experiment of `docs/simulation.md`: 4-200 tasks, one task per PE, about 8
/// compute cycles per flit sent, the default machine), each with what was measured
/// outside it; empty inside it.
pub fn validity_notes(
    program: &Program,
    mapping: &Mapping,
    params: &WormholeParams,
) -> Vec<String> {
    let mut notes = Vec::new();
    let n = program.num_tasks();
    if n > VALIDATED_MAX_TASKS {
        notes.push(format!(
            "{n} tasks, beyond the {VALIDATED_MAX_TASKS} of the validated programs: on \
             500-2,000-task programs on meshes and tori F_prop was 22-28 % high on average \
             and the paper's F 20-42 % low"
        ));
    }
    let mut pes: Vec<u32> = mapping.as_slice().iter().map(|p| p.0).collect();
    pes.sort_unstable();
    pes.dedup();
    if pes.len() < n {
        notes.push(
            "several tasks share a PE: F adds up their idle times although the PE runs one \
             while another waits (a random mapping with two tasks on some PEs: +91 %), and \
             F_prop is not defined"
                .to_string(),
        );
    }
    let flits = program.total_flits();
    let cycles: u64 = (0..n as u32).map(|t| program.compute_cycles(t)).sum();
    if flits > 0 {
        let per = cycles as f64 / flits as f64;
        if per < VALIDATED_CYCLES_PER_FLIT {
            notes.push(format!(
                "{per:.1} compute cycles per flit sent, heavier traffic than the validated \
                 programs' 8: at 4 (twice their traffic) the estimates were off by up to \
                 21-33 %"
            ));
        }
    }
    if *params != WormholeParams::default() {
        notes.push(
            "machine parameters other than the defaults the estimates were validated with".into(),
        );
    }
    notes
}

/// The least, mean and largest of a list of times (zeros for an empty list).
#[derive(serde::Serialize, Default)]
pub struct MinMeanMax {
    pub min: u64,
    pub mean: f64,
    pub max: u64,
}

impl MinMeanMax {
    pub fn of(v: &[u64]) -> Self {
        if v.is_empty() {
            return Self::default();
        }
        Self {
            min: *v.iter().min().unwrap_or(&0),
            mean: v.iter().sum::<u64>() as f64 / v.len() as f64,
            max: *v.iter().max().unwrap_or(&0),
        }
    }
}

/// How a program gets the mapping it is simulated under, when none is given.
pub struct ProgramMapping<'a> {
    /// The algorithm (`name[,key=value...]`); `None`: task i on PE i mod k.
    pub algorithm: Option<&'a str>,
    pub seed: u64,
    pub threads: usize,
    /// The imbalance of the algorithm (default 0.03).
    pub epsilon: Option<f64>,
    /// The phase model greedy-perego maps with (the program's own, with these machine
    /// parameters and overlap).
    pub spm: SpmParams,
    pub progress: Arc<dyn Progress>,
    /// Set from another thread to stop the algorithm's optional work
    /// ([`RunContext::stop`]).
    pub stop: Arc<AtomicBool>,
}

/// The mapping `how` makes of `program` onto `arch`: greedy-perego with the program's
/// full phase model, another algorithm on the program's task graph, or task i on PE
/// i mod k.
pub fn map_program(
    program: &Program,
    arch: Arc<dyn Architecture>,
    how: &ProgramMapping<'_>,
) -> Result<Mapping, Error> {
    let k = arch.pe_count();
    let Some(alg) = how.algorithm else {
        return Ok(Mapping::new(
            (0..program.num_tasks() as u32)
                .map(|t| PeId(t % k))
                .collect(),
        ));
    };
    let spec: AlgorithmSpec = alg.parse()?;
    if let Some(g) = spec.get::<GreedyPerego>() {
        // With the program at hand, use its full phase model rather than the graph's.
        let g = GreedyPerego {
            spm: how.spm.clone(),
            ..g.clone()
        };
        return greedy_map_program(program, arch.as_ref(), &g);
    }
    let mut problem = Problem::new(program.to_task_graph(), arch);
    if let Some(eps) = how.epsilon {
        problem.epsilon = eps;
    }
    let mut ctx = RunContext::new(how.seed).with_threads(how.threads)?;
    ctx.progress = how.progress.clone();
    ctx.stop = how.stop.clone();
    spec.mapper().map(&problem, &mut ctx)
}
