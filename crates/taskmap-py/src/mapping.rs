//! `taskmap.map` and `taskmap.evaluate`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use taskmap::problem::FREE;
use taskmap::report::{LaunchFiles, LaunchReport};
use taskmap::{
    evaluate as evaluate_mapping, evaluate_on, AlgorithmSpec, Architecture, Capacities,
    EvalOptions, Mapper, Mapping, PeId, Problem, RunContext, TaskGraph,
};

use crate::arch::{check_pes, ArchArg};
use crate::errors::{to_py, value_error};
use crate::graph::{helper, ids, GraphArg};

/// Maps `graph` onto `arch` and returns the PE of every task (`uint32`).
///
/// `algorithm` is `name[,key=value...]` (see `taskmap.algorithms()`), `preset` the
/// multilevel mapper's (fast, default, strong). `epsilon` bounds every PE's load to
/// ⌊(1+ε)·⌈W/k⌉⌋ (default 0.03; with `capacities`, only when given). `capacities`: the
/// hard capacity of every PE, a scalar, k values, or a k × ncon array. `fixed`: the PE of
/// every task, or -1 where the mapper chooses. `time_limit`: seconds after which the
/// multilevel mapper starts no more V-cycles or memetic rounds. The same seed and thread
/// count give the same mapping. The run releases the GIL; Ctrl-C raises
/// `KeyboardInterrupt` at once (the run stops its V-cycles, memetic rounds and annealing;
/// the pass under way finishes in the background).
#[pyfunction]
#[pyo3(signature = (graph, arch, algorithm="multilevel", preset=None, epsilon=None, seed=0,
    threads=1, capacities=None, fixed=None, time_limit=None))]
pub(crate) fn map<'py>(
    py: Python<'py>,
    graph: GraphArg<'_>,
    arch: ArchArg<'_>,
    algorithm: &str,
    preset: Option<&str>,
    epsilon: Option<f64>,
    seed: u64,
    threads: usize,
    capacities: Option<&Bound<'_, PyAny>>,
    fixed: Option<&Bound<'_, PyAny>>,
    time_limit: Option<f64>,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    // The run's pool reads the graph too.
    let mut ctx = RunContext::new(seed)
        .with_threads(threads)
        .map_err(|e| to_py(py, e))?;
    let graph = graph.get(py, ctx.pool.as_ref())?;
    let arch = arch.get(py)?;
    let spec = AlgorithmSpec::parse_with_preset(algorithm, preset).map_err(|e| to_py(py, e))?;
    let problem = problem(py, graph, arch, epsilon, capacities, fixed)?;
    if let Some(t) = time_limit {
        if !(t > 0.0 && t <= taskmap::mapper::MAX_TIME_LIMIT_SECONDS) {
            return Err(value_error(format!(
                "time_limit must be a positive number of seconds (at most a year), not {t}"
            )));
        }
        ctx.deadline = Some(Instant::now() + Duration::from_secs_f64(t));
    }
    for s in problem.capacity_shortfalls() {
        warn(
            py,
            &format!(
                "infeasible: the PEs can carry {} of vertex weight {} in all but the tasks weigh {}; mapping anyway",
                s.capacity, s.constraint, s.weight
            ),
        )?;
    }
    if time_limit.is_some() && !spec.honours_deadline() {
        warn(
            py,
            &format!("time_limit applies to pnp and to the multilevel mapper's V-cycles, memetic mode and annealing; {algorithm} ignores it"),
        )?;
    }
    let stop = ctx.stop.clone();
    let run_problem = problem.clone();
    let mapping = crate::run::detached(py, stop, move || spec.map(&run_problem, &mut ctx))?
        .map_err(|e| to_py(py, e))?;
    let opts = problem.eval_options(epsilon);
    let e = evaluate_mapping(&problem.graph, problem.arch.as_ref(), &mapping, &opts)
        .map_err(|e| to_py(py, e))?;
    if !e.feasible() {
        let what = match e.capacities_respected {
            Some(false) => "a PE is above its capacity",
            _ => "a PE is above its (1+epsilon) share",
        };
        warn(
            py,
            &format!("constraint violated: {what}; the best mapping found is returned"),
        )?;
    }
    Ok(pes_array(py, &mapping))
}

/// A `RuntimeWarning` at the caller of the binding.
fn warn(py: Python<'_>, message: &str) -> PyResult<()> {
    let category = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
    py.import("warnings")?
        .call_method1("warn", (message, category, 1))
        .map(drop)
}

/// The mapping as a `uint32` array.
pub(crate) fn pes_array<'py>(py: Python<'py>, mapping: &Mapping) -> Bound<'py, PyArray1<u32>> {
    PyArray1::from_vec(py, mapping.as_slice().iter().map(|p| p.0).collect())
}

/// The checked problem, as the CLI's `load_problem` makes it.
fn problem(
    py: Python<'_>,
    graph: Arc<TaskGraph>,
    arch: Arc<dyn Architecture>,
    epsilon: Option<f64>,
    capacities: Option<&Bound<'_, PyAny>>,
    fixed: Option<&Bound<'_, PyAny>>,
) -> PyResult<Problem> {
    let k = arch.pe_count();
    let caps = capacities
        .map(|c| capacities_of(py, c, k, graph.ncon()))
        .transpose()?;
    taskmap::problem::check_weights(&graph, arch.as_ref()).map_err(|e| to_py(py, e))?;
    let mut problem = Problem::new(graph, arch).with_constraints(epsilon, caps);
    match fixed {
        Some(f) => {
            let a = helper(py, "signed_array", (f, "fixed"))?;
            let a: PyReadonlyArray1<i64> = a.extract()?;
            let pes = a
                .as_slice()?
                .iter()
                .enumerate()
                .map(|(i, &p)| match p {
                    -1 => Ok(FREE),
                    p if (0..i64::from(k)).contains(&p) => Ok(p as u32),
                    p => Err(value_error(format!(
                        "fixed[{i}] = {p}: expected a PE below {k}, or -1 for a free task"
                    ))),
                })
                .collect::<PyResult<Vec<u32>>>()?;
            problem.fixed = Some(pes);
            problem.check_with_fixed()
        }
        None => problem.check(),
    }
    .map_err(|e| to_py(py, e))?;
    Ok(problem)
}

/// Hard capacities from a scalar, k values (one constraint) or a k × ncon array.
fn capacities_of(
    py: Python<'_>,
    c: &Bound<'_, PyAny>,
    k: u32,
    ncon: usize,
) -> PyResult<Capacities> {
    let a = helper(py, "capacities", (c, k, ncon))?;
    let a: PyReadonlyArray2<i64> = a.extract()?;
    let caps = a.as_slice()?.iter().map(|&v| v as u64).collect();
    Ok(Capacities::from_vec(caps, ncon))
}

/// Scores `mapping` (the PE of every task) of `graph` on `arch`: a dict with the keys of
/// `taskmap eval --format json` (`comm_cost` is f_C = Σ w(e)·dist, each edge once), and
/// `congestion` (link loads under the target's routing) when asked for and the target
/// has routes. `epsilon` and `capacities` are checked when given. `threads` threads
/// evaluate it (the same numbers on any).
#[pyfunction]
#[pyo3(signature = (graph, arch, mapping, epsilon=None, capacities=None, congestion=false,
    threads=1))]
pub(crate) fn evaluate<'py>(
    py: Python<'py>,
    graph: GraphArg<'_>,
    arch: ArchArg<'_>,
    mapping: &Bound<'_, PyAny>,
    epsilon: Option<f64>,
    capacities: Option<&Bound<'_, PyAny>>,
    congestion: bool,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let pool = crate::run::context(py, threads)?.pool;
    let graph = graph.get(py, pool.as_ref())?;
    let (arch, machine) = arch.target(py)?;
    let k = arch.pe_count();
    let pes = ids(py, mapping, "mapping")?;
    if pes.len() != graph.num_tasks() {
        return Err(value_error(format!(
            "the mapping has {} entries for {} tasks",
            pes.len(),
            graph.num_tasks()
        )));
    }
    check_pes(&pes, k)?;
    let mapping = Mapping::new(pes.into_iter().map(PeId).collect());
    let caps = capacities
        .map(|c| capacities_of(py, c, k, graph.ncon()))
        .transpose()?;
    let opts = EvalOptions {
        epsilon,
        capacities: caps,
    };
    // As text, which holds the 128-bit sums that a serde_json::Value cannot.
    let (evaluation, launch, congestion) = py
        .detach(|| -> Result<_, taskmap::Error> {
            let e = evaluate_on(&graph, arch.as_ref(), &mapping, &opts, pool.as_ref())?;
            let launch = machine
                .as_deref()
                .map(|m| {
                    let files = LaunchFiles::default();
                    LaunchReport::new(
                        &graph,
                        arch.as_ref(),
                        &mapping,
                        e.comm_cost,
                        Some(m),
                        &files,
                    )
                })
                .transpose()?;
            let c = congestion
                .then(|| taskmap::congestion::congestion(&graph, arch.as_ref(), &mapping))
                .flatten();
            Ok((
                json_text(&e),
                launch.map(|l| json_text(&l)),
                c.map(|c| json_text(&c)),
            ))
        })
        .map_err(|e| to_py(py, e))?;
    let dict = from_json(py, &evaluation)?;
    if let Some(l) = launch {
        dict.set_item("launch", from_json(py, &l)?)?;
    }
    if let Some(c) = congestion {
        dict.set_item("congestion", from_json(py, &c)?)?;
    }
    Ok(dict)
}

/// `value` as JSON text.
fn json_text(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).expect("a report serialises")
}

/// JSON text as Python objects.
fn from_json<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// A JSON value as Python objects (dicts, lists, numbers, strings, None).
pub(crate) fn to_python<'py>(
    py: Python<'py>,
    value: &serde_json::Value,
) -> PyResult<Bound<'py, PyAny>> {
    from_json(py, &json_text(value))
}

/// The names of the algorithms that map task graphs (`algorithm=` of `taskmap.map`).
#[pyfunction]
pub(crate) fn algorithms() -> Vec<&'static str> {
    taskmap::registry::ALGORITHMS
        .iter()
        .filter(|r| r.family.maps_task_graphs())
        .map(|r| r.name)
        .collect()
}
