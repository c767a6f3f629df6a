//! `taskmap.map` and `taskmap.evaluate`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use taskmap::problem::FREE;
use taskmap::{
    evaluate as evaluate_mapping, AlgorithmSpec, Architecture, Capacities, EvalOptions, Mapper,
    Mapping, PeId, Problem, RunContext, TaskGraph,
};

use crate::arch::ArchArg;
use crate::errors::{to_py, value_error};
use crate::graph::{helper, index_values, u32_values, GraphArg};

/// The longest time limit (a year, as the CLI's).
const MAX_TIME_LIMIT: f64 = 365.0 * 86_400.0;

/// Maps `graph` onto `arch` and returns the PE of every task (`uint32`).
///
/// `algorithm` is `name[,key=value...]` (see `taskmap.algorithms()`), `preset` the
/// multilevel mapper's (fast, default, strong). `epsilon` bounds every PE's load to
/// ⌊(1+ε)·⌈W/k⌉⌋ (default 0.03; with `capacities`, only when given). `capacities`: the
/// hard capacity of every PE, a scalar, k values, or a k × ncon array. `fixed`: the PE of
/// every task, or -1 where the mapper chooses. `time_limit`: seconds after which the
/// multilevel mapper starts no more V-cycles or memetic rounds. The same seed and thread
/// count give the same mapping. The run releases the GIL; Ctrl-C stops it.
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
    let graph = graph.get(py)?;
    let arch = arch.get(py)?;
    let spec = AlgorithmSpec::parse_with_preset(algorithm, preset).map_err(|e| to_py(py, e))?;
    let problem = problem(py, graph, arch, epsilon, capacities, fixed)?;
    let mut ctx = RunContext::new(seed)
        .with_threads(threads)
        .map_err(|e| to_py(py, e))?;
    if let Some(t) = time_limit {
        if !(t > 0.0 && t <= MAX_TIME_LIMIT) {
            return Err(value_error(format!(
                "time_limit must be a positive number of seconds (at most a year), not {t}"
            )));
        }
        ctx.deadline = Some(Instant::now() + Duration::from_secs_f64(t));
    }
    let stop = ctx.stop.clone();
    let run_problem = problem.clone();
    let mapping = crate::run::detached(py, stop, move || spec.map(&run_problem, &mut ctx))?
        .map_err(|e| to_py(py, e))?;
    let opts = options(&problem, epsilon);
    let e = evaluate_mapping(&problem.graph, problem.arch.as_ref(), &mapping, &opts)
        .map_err(|e| to_py(py, e))?;
    if !e.feasible() {
        let what = match e.capacities_respected {
            Some(false) => "a PE is above its capacity",
            _ => "a PE is above its (1+epsilon) share",
        };
        let warnings = py.import("warnings")?;
        warnings.call_method1(
            "warn",
            (
                format!("constraint violated: {what}; the best mapping found is returned"),
                py.get_type::<pyo3::exceptions::PyRuntimeWarning>(),
                2,
            ),
        )?;
    }
    Ok(pes_array(py, &mapping))
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
    let mut problem = Problem::new(graph, arch);
    if let Some(eps) = epsilon {
        problem.epsilon = eps;
    }
    problem.epsilon_with_capacities = epsilon.is_some();
    problem.capacities = caps;
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

/// What evaluation checks: the capacities when given (and ε only when given too), else ε
/// (default 0.03), as `taskmap map` reports.
fn options(problem: &Problem, epsilon: Option<f64>) -> EvalOptions {
    match &problem.capacities {
        Some(c) => EvalOptions {
            epsilon,
            capacities: Some(c.clone()),
        },
        None => EvalOptions {
            epsilon: Some(problem.epsilon),
            capacities: None,
        },
    }
}

/// Scores `mapping` (the PE of every task) of `graph` on `arch`: a dict with the keys of
/// `taskmap eval --format json` (`comm_cost` is f_C = Σ w(e)·dist, each edge once), and
/// `congestion` (link loads under the target's routing) when asked for and the target
/// has routes. `epsilon` and `capacities` are checked when given.
#[pyfunction]
#[pyo3(signature = (graph, arch, mapping, epsilon=None, capacities=None, congestion=false))]
pub(crate) fn evaluate<'py>(
    py: Python<'py>,
    graph: GraphArg<'_>,
    arch: ArchArg<'_>,
    mapping: &Bound<'_, PyAny>,
    epsilon: Option<f64>,
    capacities: Option<&Bound<'_, PyAny>>,
    congestion: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let graph = graph.get(py)?;
    let arch = arch.get(py)?;
    let k = arch.pe_count();
    let pes = u32_values(&index_values(py, mapping, "mapping")?, "mapping")?;
    if pes.len() != graph.num_tasks() {
        return Err(value_error(format!(
            "the mapping has {} entries for {} tasks",
            pes.len(),
            graph.num_tasks()
        )));
    }
    if let Some((i, p)) = pes.iter().enumerate().find(|(_, &p)| p >= k) {
        return Err(value_error(format!(
            "mapping[{i}] = {p} is out of range for {k} PEs"
        )));
    }
    let mapping = Mapping::new(pes.into_iter().map(PeId).collect());
    let caps = capacities
        .map(|c| capacities_of(py, c, k, graph.ncon()))
        .transpose()?;
    let opts = EvalOptions {
        epsilon,
        capacities: caps,
    };
    let value = py
        .detach(|| -> Result<serde_json::Value, taskmap::Error> {
            let e = evaluate_mapping(&graph, arch.as_ref(), &mapping, &opts)?;
            let mut v = serde_json::to_value(&e).expect("an evaluation serialises");
            if congestion {
                if let Some(c) = taskmap::congestion::congestion(&graph, arch.as_ref(), &mapping) {
                    v["congestion"] = serde_json::to_value(&c).expect("congestion serialises");
                }
            }
            Ok(v)
        })
        .map_err(|e| to_py(py, e))?;
    to_python(py, &value)
}

/// A JSON value as Python objects (dicts, lists, numbers, strings, None).
pub(crate) fn to_python<'py>(
    py: Python<'py>,
    value: &serde_json::Value,
) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value).expect("a JSON value serialises");
    py.import("json")?.call_method1("loads", (text,))
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
