//! Reading what the commands take: graphs (or the embedded example), targets, capacities,
//! fixed tasks, and the problem they make.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use clap::Args;
use rayon::ThreadPool;
use taskmap::{Architecture, Capacities, EvalOptions, Machine, Problem, TaskGraph};
use taskmap_graph::GraphFormat;

/// The example mapped by `taskmap map` with no input: DIMACS-10 delaunay_n10 (1,024 tasks,
/// 3,056 edges; MIT, from the Mt-KaHyPar test instances).
pub(crate) const EXAMPLE_GRAPH: &[u8] = include_bytes!("../../../fixtures/delaunay_n10.graph");
pub(crate) const EXAMPLE_NAME: &str = "delaunay_n10 (embedded example)";
pub(crate) const EXAMPLE_ARCH: &str = "torus:4x4";

#[derive(Args)]
pub(crate) struct GraphInput {
    /// Task graph file (METIS/Chaco .graph, Scotch .grf, Matrix Market .mtx, edge list
    /// .edges/.el/.txt, ISCAS .bench, mpiP communication volumes *graphStats.txt, directed
    /// volumes .csv/.vol, a dense matrix .mat/.dense; optionally .gz); `-` reads standard
    /// input (METIS unless --graph-format says otherwise).
    #[arg(short, long)]
    pub(crate) graph: Option<PathBuf>,
    /// Graph file format, when the extension does not tell.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) graph_format: Option<String>,
    /// Task weights replacing the graph's vertex weights: one line per task, in task order,
    /// of non-negative integers (one per constraint; the compute weight of each rank).
    #[arg(long, value_name = "FILE")]
    pub(crate) task_weights: Option<PathBuf>,
}

/// `--nodes`: the nodes of a machine target.
#[derive(Args, Default)]
pub(crate) struct NodeList {
    /// Slurm node list (`node[01-04,07]`, `a[1-2]b[3-4]`, `$SLURM_JOB_NODELIST`): puts a node
    /// level above an hwloc:FILE topology (the same file for every node, or one per node
    /// with %n in the file name or a directory of NAME.xml files) or a level list
    /// (package:2,core:8), and names the hosts of the launch files.
    #[arg(long, value_name = "LIST")]
    pub(crate) nodes: Option<String>,
}

#[derive(Args)]
pub(crate) struct Constraints {
    /// Allowed imbalance: load(p) <= floor((1+eps) * ceil(capacity share of p)).
    #[arg(short, long, value_name = "EPS", allow_negative_numbers = true)]
    pub(crate) epsilon: Option<f64>,
    /// Hard capacity of every PE (one value per vertex weight, comma-separated).
    #[arg(long, value_name = "C[,C...]", conflicts_with = "capacities")]
    pub(crate) capacity: Option<String>,
    /// File of hard PE capacities: one line per PE (or one line for all), ncon values each.
    #[arg(long, value_name = "FILE")]
    pub(crate) capacities: Option<PathBuf>,
}

/// A time limit: a positive number of seconds, at most a year.
pub(crate) fn parse_seconds(s: &str) -> std::result::Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= taskmap::mapper::MAX_TIME_LIMIT_SECONDS => Ok(v),
        _ => Err(format!(
            "expected a positive number of seconds (at most a year), got \"{s}\""
        )),
    }
}

/// How a mapper runs: seed and threads (shared by `map` and `compare`).
#[derive(Args)]
pub(crate) struct RunArgs {
    /// Seed of every random choice.
    #[arg(short, long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Threads for parallel phases (1 to 1024).
    #[arg(short, long, default_value_t = 1)]
    pub(crate) threads: usize,
}

pub(crate) fn parse_format(s: &str) -> Result<GraphFormat> {
    s.parse::<GraphFormat>()
        .map_err(|e| anyhow!("bad graph format \"{}\": {}", s, e))
}

/// Reads a graph file; `-` reads standard input (METIS unless `format` says otherwise).
/// Parallel parts of the reader run on `pool`.
pub(crate) fn read_graph(
    path: &Path,
    format: Option<&str>,
    pool: Option<&ThreadPool>,
) -> Result<TaskGraph> {
    let format = format.map(parse_format).transpose()?;
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes)
            .map_err(|e| anyhow!("reading the graph from standard input: {e}"))?;
        let format = format.unwrap_or(GraphFormat::Metis);
        return Ok(taskmap_graph::read_graph_from_bytes_on(
            &bytes,
            "<stdin>",
            Some(format),
            pool,
        )?);
    }
    Ok(taskmap_graph::read_graph_on(path, format, pool)?)
}

/// The graph of `input` (the embedded example when it names none) with its task weights.
pub(crate) fn load_graph(
    input: &GraphInput,
    pool: Option<&ThreadPool>,
) -> Result<(TaskGraph, String)> {
    let (graph, name) = load_graph_file(input, pool)?;
    let Some(path) = &input.task_weights else {
        return Ok((graph, name));
    };
    let bytes = std::fs::read(path).map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?;
    let (ncon, w) = taskmap_graph::read_task_weights(&bytes, path, graph.num_tasks())?;
    Ok((graph.with_vertex_weights(ncon, w), name))
}

fn load_graph_file(input: &GraphInput, pool: Option<&ThreadPool>) -> Result<(TaskGraph, String)> {
    match &input.graph {
        Some(p) => Ok((
            read_graph(p, input.graph_format.as_deref(), pool)?,
            p.display().to_string(),
        )),
        None => Ok((
            taskmap_graph::read_graph_from_bytes(
                EXAMPLE_GRAPH,
                "delaunay_n10.graph",
                Some(GraphFormat::Metis),
            )?,
            EXAMPLE_NAME.to_string(),
        )),
    }
}

pub(crate) fn load_arch(spec: &str) -> Result<Box<dyn Architecture>> {
    Ok(taskmap::parse_arch(spec)?)
}

/// The target of `spec` with `--nodes`, and its machine when it has hosts (`hwloc:FILE` or
/// a level list).
pub(crate) fn load_target(
    spec: &str,
    nodes: &NodeList,
) -> Result<(Box<dyn Architecture>, Option<Machine>)> {
    match taskmap::parse_machine(spec, nodes.nodes.as_deref())? {
        Some(m) => Ok((m.architecture()?, Some(m))),
        None => Ok((load_arch(spec)?, None)),
    }
}

pub(crate) fn load_capacities(c: &Constraints, k: u32, ncon: usize) -> Result<Option<Capacities>> {
    if let Some(path) = &c.capacities {
        return Ok(Some(Capacities::read(path, k, ncon)?));
    }
    if let Some(s) = &c.capacity {
        let vals: Vec<u64> = s
            .split(',')
            .map(|t| {
                t.trim().parse::<u64>().map_err(|_| {
                    anyhow!("bad --capacity \"{}\": expected non-negative integers", s)
                })
            })
            .collect::<Result<_>>()?;
        if vals.len() != ncon {
            bail!(
                "--capacity gives {} values but the graph has {} vertex weights",
                vals.len(),
                ncon
            );
        }
        return Ok(Some(Capacities::uniform(k, &vals)));
    }
    Ok(None)
}

/// The target spec: the one given, or the embedded example's when no graph is given.
pub(crate) fn arch_spec(arch: Option<&String>, input: &GraphInput) -> Result<String> {
    match (arch, &input.graph) {
        (Some(s), _) => Ok(s.clone()),
        (None, None) => Ok(EXAMPLE_ARCH.to_string()),
        (None, Some(_)) => bail!("--arch is required with --graph (e.g. --arch torus:8x8)"),
    }
}

/// What a mapping run is checked against ([`Problem::eval_options`]).
pub(crate) fn eval_options(problem: &Problem, constraints: &Constraints) -> EvalOptions {
    problem.eval_options(constraints.epsilon)
}

/// Reads the graph (parallel parts on `pool`), the target and the constraints into a
/// checked problem.
pub(crate) fn load_problem(
    input: &GraphInput,
    spec: &str,
    nodes: &NodeList,
    constraints: &Constraints,
    pool: Option<&ThreadPool>,
) -> Result<(Problem, String, Option<Machine>)> {
    let (graph, graph_name) = load_graph(input, pool)?;
    problem_of(graph, graph_name, spec, nodes, constraints)
}

/// The checked problem of a graph already read (named `graph_name`), the target and the
/// constraints.
pub(crate) fn problem_of(
    graph: TaskGraph,
    graph_name: String,
    spec: &str,
    nodes: &NodeList,
    constraints: &Constraints,
) -> Result<(Problem, String, Option<Machine>)> {
    let (arch, machine) = load_target(spec, nodes)?;
    // Before anything sized by the target (a uniform capacity is one value per PE).
    taskmap::problem::check_pe_count(arch.as_ref())?;
    let capacities = load_capacities(constraints, arch.pe_count(), graph.ncon())?;
    // Weight totals are a property of the graph file: name it.
    taskmap::problem::check_weights(&graph, arch.as_ref())
        .map_err(|e| anyhow!("{}: {}", graph_name, e))?;
    // Capacities and an explicit ε both bound the loads: the mappers get the tighter of
    // the two on every PE, as evaluation checks both.
    let problem = Problem::new(graph, arch).with_constraints(constraints.epsilon, capacities);
    problem.check()?;
    Ok((problem, graph_name, machine))
}

/// The file a target spec reads, when it reads one (`graph:F`, `matrix:F`, `tgt:F`,
/// `hwloc:F[,options]`, or a Scotch target file named directly).
pub(crate) fn target_file(spec: &str) -> Option<PathBuf> {
    let rest = ["graph:", "matrix:", "tgt:", "hwloc:"]
        .iter()
        .find_map(|p| spec.strip_prefix(p))
        .unwrap_or(spec);
    let p = PathBuf::from(rest);
    if p.is_file() {
        return Some(p);
    }
    let p = PathBuf::from(rest.split(',').next()?);
    p.is_file().then_some(p)
}

/// Every file a target spec reads: [`target_file`], and for `hwloc:` with a node list, the
/// file of each node when the name holds `%n` or is a directory (`NAME.xml` in it).
pub(crate) fn target_files(spec: &str, nodes: &NodeList) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = target_file(spec).into_iter().collect();
    let (Some(rest), Some(list)) = (spec.strip_prefix("hwloc:"), nodes.nodes.as_deref()) else {
        return files;
    };
    let file = if Path::new(rest).is_file() {
        rest
    } else {
        rest.split(',').next().unwrap_or("")
    };
    let per_node = file.contains("%n") || Path::new(file).is_dir();
    if let (true, Ok(names)) = (per_node, taskmap_arch::expand_node_list(list)) {
        for n in &names {
            let p = if file.contains("%n") {
                PathBuf::from(file.replace("%n", n))
            } else {
                Path::new(file).join(format!("{n}.xml"))
            };
            if p.is_file() {
                files.push(p);
            }
        }
    }
    files
}

/// `spec` with the old flags that were given (`(key, value)`, `None`: not given) added as
/// its keys, so a key given both ways is refused by the spec's parser; `None` when no flag
/// was given.
pub(crate) fn spec_with_flags(spec: &str, flags: &[(&str, Option<String>)]) -> Option<String> {
    let keys: Vec<String> = flags
        .iter()
        .filter_map(|(key, v)| Some(format!("{key}={}", v.as_ref()?)))
        .collect();
    (!keys.is_empty()).then(|| {
        std::iter::once(spec.to_string())
            .chain(keys)
            .collect::<Vec<_>>()
            .join(",")
    })
}
