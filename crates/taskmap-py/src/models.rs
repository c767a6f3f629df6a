//! The timed-program (De Petris & Perego), heterogeneous (De Giusti et al.) and
//! precedence (Houstis et al.) models: read a file, map, simulate, get a dict with the
//! keys of the CLI's JSON report.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use pyo3::prelude::*;
use taskmap::hetero::allocate::HeteroSpec;
use taskmap::hetero::io::stg::read_stg_program;
use taskmap::hetero::io::ttig::{read_platform, read_ttigha};
use taskmap::hetero::io::wfcommons::read_workflow_program;
use taskmap::hetero::mateha::{exhaustive_observed, levels};
use taskmap::hetero::simulha::Simulator;
use taskmap::hetero::ttigha::Ttigha;
use taskmap::houstis::amg::read_amg_model;
use taskmap::houstis::interconnect::{DelayReading, Interconnect};
use taskmap::houstis::machine::Machine;
use taskmap::houstis::mapper::evaluate_assignment;
use taskmap::houstis::monte_carlo::MonteCarlo;
use taskmap::houstis::spec::PrecedenceSpec;
use taskmap::perego::spm::SpmParams;
use taskmap::perego::summary::{map_program, FSummary, ProgramMapping, SimSummary};
use taskmap::perego::wormhole::{simulate_observed, ReadyPolicy, WormholeParams};
use taskmap::{Error, Mapping, NoProgress, PeId};

use crate::arch::ArchArg;
use crate::errors::{to_py, value_error};
use crate::graph::{ids, Graph};
use crate::mapping::{pes_array, to_python};

/// A timed program in De Petris & Perego's language (`PROCESS`, `INT_OP`, `SEND`,
/// `RECEIVE`, `STOP`): from `taskmap.read_program` or `taskmap.generate_program`.
#[pyclass(module = "taskmap", name = "Program", frozen)]
pub(crate) struct Program {
    inner: Arc<taskmap::perego::Program>,
}

#[pymethods]
impl Program {
    /// Number of tasks (processes).
    #[getter]
    fn num_tasks(&self) -> usize {
        self.inner.num_tasks()
    }

    /// Number of messages.
    #[getter]
    fn num_messages(&self) -> usize {
        self.inner.messages().len()
    }

    /// The program's task graph (communication volumes as edge weights, work as task
    /// weights), for `taskmap.map`.
    fn graph(&self) -> Graph {
        Graph {
            inner: Arc::new(self.inner.to_task_graph()),
        }
    }

    /// The program as text, in the language `read_program` reads.
    fn to_text(&self) -> String {
        self.inner.to_text()
    }

    fn __repr__(&self) -> String {
        format!(
            "taskmap.Program(num_tasks={}, num_messages={})",
            self.inner.num_tasks(),
            self.inner.messages().len()
        )
    }
}

/// Reads a timed program file.
#[pyfunction]
pub(crate) fn read_program(py: Python<'_>, path: PathBuf) -> PyResult<Program> {
    let p = py
        .detach(|| taskmap::perego::read_program(&path))
        .map_err(|e| to_py(py, e))?;
    Ok(Program { inner: Arc::new(p) })
}

/// Generates a program: `ring:N`, `mesh:RxC`, `butterfly:K`, `tree:N`, `random:N`, with
/// options `,rounds=,compute=,flits=,partners=,cycles_per_flit=,seed=` (as `taskmap sim
/// --gen`).
#[pyfunction]
pub(crate) fn generate_program(spec: &str) -> PyResult<Program> {
    let p = taskmap::perego::generate_program(spec).map_err(|e| value_error(e.to_string()))?;
    Ok(Program { inner: Arc::new(p) })
}

/// A program argument: a `Program`, or a path to read.
#[derive(FromPyObject)]
pub(crate) enum ProgramArg<'py> {
    Program(PyRef<'py, Program>),
    Path(PathBuf),
}

/// Simulates `program` on a wormhole-routed mesh, torus or hypercube `arch` (or, with
/// `ideal=True`, on the ideal machine) under `mapping` (the PE of every task), or under
/// the mapping `algorithm` makes (greedy-perego with the program's own phase model), or
/// with task i on PE i mod k. Returns a dict with the keys of `taskmap sim --format json`
/// (times in cycles), plus `mapping`, the mapping simulated (`uint32`). `f=True` adds De
/// Petris & Perego's estimate F (and, with one task per PE, F_prop) beside the
/// simulation. The run releases the GIL; Ctrl-C raises `KeyboardInterrupt` at once (the
/// simulation under way finishes in the background).
#[pyfunction]
#[pyo3(signature = (program, arch=None, mapping=None, algorithm=None, seed=0, threads=1,
    epsilon=None, f=false, ideal=false, overlap_fraction=0.5, flit_cycles=1, send_overhead=10,
    recv_overhead=10, local_cycles_per_flit=0, switch_cycles=0, virtual_channels=true,
    ready_policy="fifo"))]
pub(crate) fn simulate<'py>(
    py: Python<'py>,
    program: ProgramArg<'_>,
    arch: Option<ArchArg<'_>>,
    mapping: Option<&Bound<'_, PyAny>>,
    algorithm: Option<String>,
    seed: u64,
    threads: usize,
    epsilon: Option<f64>,
    f: bool,
    ideal: bool,
    overlap_fraction: f64,
    flit_cycles: u64,
    send_overhead: u64,
    recv_overhead: u64,
    local_cycles_per_flit: u64,
    switch_cycles: u64,
    virtual_channels: bool,
    ready_policy: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let program = match program {
        ProgramArg::Program(p) => p.inner.clone(),
        ProgramArg::Path(p) => read_program(py, p)?.inner,
    };
    const MAX_CYCLES: u64 = taskmap::perego::wormhole::MAX_PARAM_CYCLES;
    for (name, v) in [
        ("flit_cycles", flit_cycles),
        ("send_overhead", send_overhead),
        ("recv_overhead", recv_overhead),
        ("local_cycles_per_flit", local_cycles_per_flit),
        ("switch_cycles", switch_cycles),
    ] {
        if v > MAX_CYCLES {
            return Err(value_error(format!("{name} {v} is above 2^32 cycles")));
        }
    }
    if flit_cycles == 0 {
        return Err(value_error("flit_cycles must be at least 1"));
    }
    if threads == 0 || threads > taskmap::mapper::MAX_THREADS {
        return Err(value_error(format!(
            "threads takes 1 to {}, not {threads}",
            taskmap::mapper::MAX_THREADS
        )));
    }
    if epsilon.is_some() && algorithm.is_none() {
        return Err(value_error("epsilon applies to algorithm only"));
    }
    if !(0.0..=1.0).contains(&overlap_fraction) {
        return Err(value_error(format!(
            "overlap_fraction must be in 0..=1, not {overlap_fraction}"
        )));
    }
    let params = WormholeParams {
        flit_cycles,
        send_overhead,
        recv_overhead,
        local_cycles_per_flit,
        switch_cycles,
        ready_policy: ReadyPolicy::from_str(ready_policy).map_err(|e| to_py(py, e))?,
        record_messages: false,
        torus_virtual_channels: virtual_channels,
    };
    let target = match (ideal, arch) {
        (true, None) if mapping.is_none() && algorithm.is_none() && !f => None,
        (true, _) => {
            return Err(value_error(
                "ideal=True takes no arch, mapping, algorithm or f",
            ))
        }
        (false, Some(a)) => Some(a.get(py)?),
        (false, None) => return Err(value_error("arch is required (or ideal=True)")),
    };
    let given = match (mapping, &target) {
        (Some(_), _) if algorithm.is_some() => {
            return Err(value_error("give mapping or algorithm, not both"))
        }
        (Some(m), Some(t)) => {
            let pes = ids(py, m, "mapping")?;
            crate::arch::check_pes(&pes, t.pe_count())?;
            if pes.len() != program.num_tasks() {
                return Err(value_error(format!(
                    "the mapping has {} entries for {} tasks",
                    pes.len(),
                    program.num_tasks()
                )));
            }
            Some(Mapping::new(pes.into_iter().map(PeId).collect()))
        }
        _ => None,
    };
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let run_stop = stop.clone();
    let result = crate::run::detached(py, stop, move || -> Result<_, Error> {
        let t0 = std::time::Instant::now();
        let Some(arch) = target else {
            let r = simulate_observed(&program, None, &params, &NoProgress)?;
            let s = SimSummary::new(&program, &r, "ideal machine".into(), &params, 0.0, None);
            return Ok((s, None, t0.elapsed().as_secs_f64()));
        };
        let mapping = match given {
            Some(m) => m,
            None => {
                let how = ProgramMapping {
                    algorithm: algorithm.as_deref(),
                    seed,
                    threads,
                    epsilon,
                    spm: SpmParams {
                        overlap_fraction,
                        machine: params.clone(),
                    },
                    progress: Arc::new(NoProgress),
                    stop: run_stop,
                };
                map_program(&program, arch.clone(), &how)?
            }
        };
        let r = simulate_observed(
            &program,
            Some((arch.as_ref(), &mapping)),
            &params,
            &NoProgress,
        )?;
        let fs = f
            .then(|| {
                FSummary::new(
                    &program,
                    arch.as_ref(),
                    &mapping,
                    &params,
                    overlap_fraction,
                    r.completion,
                )
            })
            .transpose()?;
        let s = SimSummary::new(&program, &r, arch.spec(), &params, 0.0, fs);
        Ok((s, Some(mapping), t0.elapsed().as_secs_f64()))
    })?;
    let (mut summary, mapping, wall) = result.map_err(|e| to_py(py, e))?;
    summary.wall_seconds = wall;
    let value = serde_json::to_value(&summary).expect("a summary serialises");
    let dict = to_python(py, &value)?;
    if let Some(m) = mapping {
        dict.set_item("mapping", pes_array(py, &m))?;
    }
    Ok(dict)
}

/// Allocates a heterogeneous program's tasks to a multi-cluster and simulates it with
/// SIMULHa. The program is a TTIGHa model file (`model`, `.ttig`), or an STG or workflow
/// file (Pegasus DAX, WfCommons) with a `platform` file. `algorithm`: mateha, mateha-ls,
/// heft, peft or heft-ls (`name,key=value`); or `allocation`, the processor of every
/// task. `optimal=True` adds the exhaustive optimum (at most `limit` allocations, on
/// `threads` threads). Returns a dict with the keys of `taskmap hetero --format json`.
#[pyfunction]
#[pyo3(signature = (model=None, *, stg=None, workflow=None, platform=None, algorithm="mateha",
    allocation=None, optimal=false, limit=100_000_000, threads=1))]
pub(crate) fn hetero<'py>(
    py: Python<'py>,
    model: Option<PathBuf>,
    stg: Option<PathBuf>,
    workflow: Option<PathBuf>,
    platform: Option<PathBuf>,
    algorithm: &str,
    allocation: Option<&Bound<'_, PyAny>>,
    optimal: bool,
    limit: u64,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let spec: HeteroSpec = algorithm.parse().map_err(|e| to_py(py, e))?;
    let given = allocation.map(|a| ids(py, a, "allocation")).transpose()?;
    let ctx = crate::run::context(py, threads)?;
    let stop = ctx.stop.clone();
    let result = crate::run::detached(py, stop, move || -> Result<_, Error> {
        let (model, path) = load_model(model, stg, workflow, platform)?;
        let pr = &model.program;
        let (alloc, source, levels, order) = match given {
            Some(alloc) => {
                let k = model.platform.processors() as u32;
                if alloc.len() != pr.tasks() {
                    return Err(Error::Mismatch(format!(
                        "the allocation has {} entries for {} tasks",
                        alloc.len(),
                        pr.tasks()
                    )));
                }
                if let Some((i, p)) = alloc.iter().enumerate().find(|(_, &p)| p >= k) {
                    return Err(Error::Mismatch(format!(
                        "allocation[{i}] = {p} is out of range for {k} processors"
                    )));
                }
                (alloc, "file", levels(pr), None)
            }
            None => {
                let r = spec.allocate(&model);
                (r.alloc, r.algorithm, r.levels, r.order)
            }
        };
        let schedule = Simulator::new(&model).schedule(&alloc, order.as_deref())?;
        let optimum = optimal
            .then(|| exhaustive_observed(&model, limit, ctx.pool.as_ref(), &NoProgress))
            .transpose()?;
        Ok(taskmap::hetero::report::report_json(
            &model,
            &path,
            source,
            &levels,
            &alloc,
            &schedule,
            optimum.as_ref(),
        ))
    })?;
    let value = result.map_err(|e| to_py(py, e))?;
    to_python(py, &value)
}

/// The heterogeneous model and the name of its program's file.
fn load_model(
    model: Option<PathBuf>,
    stg: Option<PathBuf>,
    workflow: Option<PathBuf>,
    platform: Option<PathBuf>,
) -> Result<(Ttigha, String), Error> {
    let config = |m: &str| Err(Error::Config(m.into()));
    let program = |f: &PathBuf, p: &PathBuf, stg: bool| -> Result<(Ttigha, String), Error> {
        let platform = read_platform(p)?;
        let slowness = vec![1.0; platform.types()];
        let model = if stg {
            read_stg_program(f, platform, &slowness, 1000)?
        } else {
            read_workflow_program(f, platform, &slowness, false)?
        };
        Ok((model, f.display().to_string()))
    };
    match (model, stg, workflow, platform) {
        (Some(m), None, None, None) => Ok((read_ttigha(&m)?, m.display().to_string())),
        (None, Some(f), None, Some(p)) => program(&f, &p, true),
        (None, None, Some(f), Some(p)) => program(&f, &p, false),
        _ => config("give model=FILE, or stg=FILE or workflow=FILE with platform=FILE"),
    }
}

/// Maps a precedence graph (`.amg`) onto a shared-memory machine of `processors`
/// processors with the Algorithm Mapper: `system` is bus, dual-bus, multibus:B,
/// multibus:B:M, banyan or ideal; `algorithm` alloc or alloc-ls (`name,key=value`); or
/// `assignment`, the processor of every module. `speeds`: one speed per processor.
/// `monte_carlo`: also run the stochastic program this many times on the assignment
/// (seed `seed`), as `taskmap amap --monte-carlo`. `delay_model`: `queue` (the default)
/// or `paper`, the paper's printed delay formulas, as `taskmap amap --delay-model`.
/// Returns a dict with the keys of `taskmap amap --format json`.
#[pyfunction]
#[pyo3(signature = (graph, processors, system="dual-bus", algorithm="alloc", assignment=None,
    itu_time=1.0, memory=None, speeds=None, threads=1, monte_carlo=None, seed=0,
    delay_model="queue"))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn amap<'py>(
    py: Python<'py>,
    graph: PathBuf,
    processors: u32,
    system: &str,
    algorithm: &str,
    assignment: Option<&Bound<'_, PyAny>>,
    itu_time: f64,
    memory: Option<f64>,
    speeds: Option<Vec<f64>>,
    threads: usize,
    monte_carlo: Option<usize>,
    seed: u64,
    delay_model: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let mc = monte_carlo.map(|samples| MonteCarlo {
        samples,
        seed,
        ..MonteCarlo::default()
    });
    if let Some(m) = &mc {
        m.validate()
            .map_err(|e| to_py(py, Error::Config(format!("monte_carlo: {e}"))))?;
    }
    let spec: PrecedenceSpec = algorithm.parse().map_err(|e| to_py(py, e))?;
    let interconnect: Interconnect = system.parse().map_err(|e| to_py(py, e))?;
    let reading: DelayReading = delay_model.parse().map_err(|e| to_py(py, e))?;
    let mut machine = Machine::new(processors, interconnect, itu_time, memory)
        .and_then(|m| m.with_delay_reading(reading))
        .map_err(|e| to_py(py, e))?;
    if let Some(s) = speeds {
        machine = machine.with_speeds(s).map_err(|e| to_py(py, e))?;
    }
    let given = assignment.map(|a| ids(py, a, "assignment")).transpose()?;
    let ctx = crate::run::context(py, threads)?;
    let stop = ctx.stop.clone();
    let result = crate::run::detached(py, stop, move || -> Result<_, Error> {
        let (g, det) = read_amg_model(&graph)?;
        let path = graph.display().to_string();
        let at = |e: Error| Error::Config(format!("{path}: {e}"));
        let (r, label) = match given {
            Some(processor) => (
                evaluate_assignment(&g, &det, &machine, processor).map_err(at)?,
                "assignment".to_string(),
            ),
            None => (
                spec.run(&g, &det, &machine, ctx.pool.as_ref(), &NoProgress)
                    .map_err(at)?,
                spec.name().to_string(),
            ),
        };
        let mut v = taskmap::houstis::report::report_json(&g, &r, &machine, &path, &label);
        if let (Some(m), Some(o)) = (mc, v.as_object_mut()) {
            let s = m
                .run(&g, &det, &machine, &r.processor, ctx.pool.as_ref())
                .map_err(at)?;
            o.insert(
                "monte_carlo".into(),
                serde_json::to_value(s).map_err(|e| Error::Config(e.to_string()))?,
            );
        }
        Ok(v)
    })?;
    let value = result.map_err(|e| to_py(py, e))?;
    to_python(py, &value)
}
