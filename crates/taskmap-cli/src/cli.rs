//! Argument parsing and the subcommands. No algorithm lives here.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use taskmap::report::{render_evaluation, render_map_report, InitialReport, MapReport};
use taskmap::{
    evaluate, AlgorithmSpec, Architecture, Capacities, EvalOptions, Mapping, MappingFormat, PeId,
    Problem, RunContext, TaskGraph,
};
use taskmap_graph::{gen, GraphFormat};

/// The example mapped by `taskmap map` with no input: DIMACS-10 delaunay_n10 (1,024 tasks,
/// 3,056 edges; MIT, from the Mt-KaHyPar test instances).
const EXAMPLE_GRAPH: &[u8] = include_bytes!("../../../fixtures/delaunay_n10.graph");
const EXAMPLE_NAME: &str = "delaunay_n10 (embedded example)";
const EXAMPLE_ARCH: &str = "torus:4x4";

#[derive(Parser)]
#[command(
    name = "taskmap",
    version,
    about = "Static task mapping: place communicating tasks on the PEs of a parallel machine",
    long_about = "Static task mapping: place communicating tasks on the PEs of a parallel machine.\n\nExit codes: 0 success, 1 the run finished but a constraint (epsilon, capacity) is violated, 2 error, 130 stopped by SIGINT, SIGTERM or SIGHUP."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Map a task graph onto a target (with no --graph: an embedded example).
    Map(MapArgs),
    /// Score a mapping on a target (the target may differ from the one it was made for).
    Eval(EvalArgs),
    /// Run several algorithms on one problem and tabulate their results (exit 1 when none
    /// of them gives a mapping within the constraints, 2 when none could map).
    Compare(CompareArgs),
    /// Simulate a timed program under a mapping on a wormhole-routed k-ary n-cube.
    Sim(crate::sim::SimArgs),
    /// Allocate a heterogeneous program's tasks to a multi-cluster (MATEHa, HEFT, PEFT or
    /// our searches, or read an allocation), simulate it with SIMULHa, optionally against
    /// the exhaustive optimum.
    Hetero(crate::hetero::HeteroArgs),
    /// Map a precedence graph onto a shared-memory machine with the Algorithm Mapper
    /// (Houstis et al.): clustering under a time frame, queueing delays, the schedule.
    Amap(crate::amap::AmapArgs),
    /// Tabulate an interconnect's queueing delay D and active processors AP against the
    /// load, optionally against a simulation of the queue.
    Delay(crate::amap::DelayArgs),
    /// Show a target architecture: PE count, diameter, mean distance, distances.
    Arch(ArchArgs),
    /// Generate a task graph.
    Gen(GenArgs),
    /// Convert a graph between file formats.
    Convert(ConvertArgs),
    /// Load a graph and print its size and weights (checks the file).
    Info(InfoArgs),
    /// List the registered mapping algorithms.
    Algorithms,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum OutputFormat {
    Human,
    Json,
}

#[derive(Args)]
struct GraphInput {
    /// Task graph file (METIS/Chaco .graph, Scotch .grf, Matrix Market .mtx, edge list
    /// .edges/.el/.txt, ISCAS .bench, mpiP communication volumes *graphStats.txt; optionally
    /// .gz).
    #[arg(short, long)]
    graph: Option<PathBuf>,
    /// Graph file format, when the extension does not tell.
    #[arg(long, value_name = "FORMAT")]
    graph_format: Option<String>,
}

#[derive(Args)]
struct Constraints {
    /// Allowed imbalance: load(p) <= floor((1+eps) * ceil(capacity share of p)).
    #[arg(short, long, value_name = "EPS", allow_negative_numbers = true)]
    epsilon: Option<f64>,
    /// Hard capacity of every PE (one value per vertex weight, comma-separated).
    #[arg(long, value_name = "C[,C...]", conflicts_with = "capacities")]
    capacity: Option<String>,
    /// File of hard PE capacities: one line per PE (or one line for all), ncon values each.
    #[arg(long, value_name = "FILE")]
    capacities: Option<PathBuf>,
}

#[derive(Args)]
struct MapArgs {
    #[command(flatten)]
    input: GraphInput,
    /// Target architecture: a spec (torus:16x16, mesh:8x8x8, hypercube:6, complete:64,
    /// tree:4:8:6/1:10:100, graph:FILE, matrix:FILE, ...) or a Scotch target file.
    #[arg(short, long, value_name = "SPEC")]
    arch: Option<String>,
    /// Mapping algorithm, `name[,key=value...]` (see `taskmap algorithms`).
    #[arg(short = 'A', long, default_value = "multilevel")]
    algorithm: String,
    /// Preset of the multilevel mapper: fast, default or strong (adds `preset=P`).
    #[arg(short = 'P', long, value_name = "PRESET")]
    preset: Option<String>,
    /// Fixed tasks: a Scotch fixed-vertex file (a count, then `task pe` lines, as `gmap -f`)
    /// or one line per task with its PE or -1; task ids 0-based (drb and multilevel).
    #[arg(long, value_name = "FILE")]
    fixed: Option<PathBuf>,
    /// Refine this mapping instead of mapping from scratch (multilevel, one run): pinned
    /// tasks moved to their PEs, a broken balance repaired (or a new run made when single
    /// moves cannot), then the k-way refiner, V-cycles and, with `anneal`, the annealing;
    /// never worse than a balanced input with its pins in place. The report gives its f_C and the tasks moved.
    /// Scotch's `.map` format or one PE per line.
    #[arg(long, value_name = "FILE")]
    initial: Option<PathBuf>,
    /// With --initial: what a free task pays per hop between its input PE and its new PE,
    /// on top of f_C (integer, 0 to 2^32; default 0; lowered to the total edge weight
    /// times the diameter, plus 1, where no move can pay any more). The refiner moves a
    /// task only when the communication it saves outweighs that; the report gives the
    /// hops moved and the migration.
    #[arg(long, value_name = "COST")]
    migration_cost: Option<u64>,
    /// Print the effective configuration as JSON and exit (after reading and checking the
    /// graph, the target and the constraints, as a run would).
    #[arg(long)]
    dump_config: bool,
    /// Never show a progress display (it appears on a terminal after one second).
    #[arg(long)]
    quiet: bool,
    /// Stop improving after this many seconds: the multilevel mapper starts no V-cycle,
    /// no member of its memetic mode (`population` >= 2) after the first round and no
    /// batch of recombinations unless it is expected to end in time (at the mean pace of
    /// the ones before), and its annealing (`anneal`) stops at the limit; pnp ends its
    /// GRASP runs (after the first) and its annealing. The first mapping is always
    /// completed, so a limit shorter than one run is exceeded. Other algorithms ignore it
    /// (with a warning). The mapping then depends on the machine's speed.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    time_limit: Option<f64>,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    constraints: Constraints,
    /// Write the mapping here (.map: Scotch format; otherwise one PE per line).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Report format.
    #[arg(short, long, value_enum, default_value = "human")]
    format: OutputFormat,
}

/// A time limit: a positive number of seconds, at most a year.
fn parse_seconds(s: &str) -> std::result::Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 365.0 * 86_400.0 => Ok(v),
        _ => Err(format!(
            "expected a positive number of seconds (at most a year), got \"{s}\""
        )),
    }
}

/// How a mapper runs: seed and threads (shared by `map` and `compare`).
#[derive(Args)]
struct RunArgs {
    /// Seed of every random choice.
    #[arg(short, long, default_value_t = 0)]
    seed: u64,
    /// Threads for parallel phases (1 to 1024).
    #[arg(short, long, default_value_t = 1)]
    threads: usize,
}

#[derive(Args)]
struct CompareArgs {
    #[command(flatten)]
    input: GraphInput,
    /// Target architecture spec or Scotch target file (default with no --graph: torus:4x4).
    #[arg(short, long, value_name = "SPEC")]
    arch: Option<String>,
    /// An algorithm to run, `name[,key=value...]`; repeat the flag for several (default:
    /// every registered algorithm with its default parameters except `greedy-perego`, which
    /// is made for timed programs and leaves loads unbalanced on static graphs).
    #[arg(short = 'A', long = "algorithm")]
    algorithms: Vec<String>,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    constraints: Constraints,
    /// Report format.
    #[arg(short, long, value_enum, default_value = "human")]
    format: OutputFormat,
}

#[derive(Args)]
struct EvalArgs {
    #[command(flatten)]
    input: GraphInput,
    /// Target architecture spec or Scotch target file.
    #[arg(short, long, value_name = "SPEC")]
    arch: String,
    /// Mapping file (Scotch .map or one PE per line).
    #[arg(short, long, value_name = "FILE")]
    mapping: PathBuf,
    /// A timed program (PROCESS/INT_OP/SEND/RECEIVE/STOP) instead of --graph: the static
    /// metrics are those of its task graph, and the report adds De Petris & Perego's
    /// completion-time estimate F and, with one task per PE, our propagated estimate
    /// F_prop (default machine parameters, see `taskmap sim`).
    #[arg(long, value_name = "FILE", conflicts_with = "graph")]
    program: Option<PathBuf>,
    #[command(flatten)]
    constraints: Constraints,
    /// Report format.
    #[arg(short, long, value_enum, default_value = "human")]
    format: OutputFormat,
}

/// `taskmap eval`'s report: the evaluation, and F (and F_prop, with one task per PE) when a
/// program was given.
#[derive(serde::Serialize)]
struct EvalReport {
    #[serde(flatten)]
    evaluation: taskmap::Evaluation,
    #[serde(skip_serializing_if = "Option::is_none")]
    perego_f: Option<taskmap::perego::spm::FEstimate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    perego_f_prop: Option<taskmap::perego::PropagatedEstimate>,
}

#[derive(Args)]
struct ArchArgs {
    /// Target architecture spec or Scotch target file.
    spec: String,
    /// Print the distance between these two PEs.
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    distance: Option<Vec<u32>>,
    /// Print the Scotch target description (for gmap) and nothing else.
    #[arg(long)]
    scotch: bool,
    /// Print the physical links between PEs, one `a b weight` line each (0-based), and
    /// nothing else; fails for targets whose links pass through switches (trees).
    #[arg(long, conflicts_with = "scotch")]
    links: bool,
    /// Report format.
    #[arg(short, long, value_enum, default_value = "human")]
    format: OutputFormat,
}

#[derive(Args)]
struct GenArgs {
    /// What to generate: grid, torus, stencil9, stencil27, ring, tree, butterfly,
    /// hypercube, rgg (random geometric), random; or `program` for a timed program (then
    /// SIZE is a program spec: ring:N, mesh:RxC, butterfly:K, tree:N, random:N[,seed=S,...]).
    kind: String,
    /// Size: dimensions like 100x100 or 100x100x100 (grid, torus, stencils), a task count
    /// (ring, tree, rgg, random), stages (butterfly) or dimension (hypercube).
    size: String,
    /// Mean degree for rgg and random.
    #[arg(long, default_value_t = 6.0)]
    degree: f64,
    /// Seed for rgg and random.
    #[arg(short, long, default_value_t = 0)]
    seed: u64,
    /// Output file; the extension chooses the format (.graph, .grf, .edges, ...; .gz compresses).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Output format, when the extension does not tell.
    #[arg(long, value_name = "FORMAT")]
    to: Option<String>,
}

#[derive(Args)]
struct ConvertArgs {
    /// Input graph file.
    input: PathBuf,
    /// Output graph file (.graph METIS, .grf Scotch, .mtx Matrix Market, .edges edge list; .gz compresses).
    output: PathBuf,
    /// Input format, when the extension does not tell.
    #[arg(long, value_name = "FORMAT")]
    from: Option<String>,
    /// Output format, when the extension does not tell.
    #[arg(long, value_name = "FORMAT")]
    to: Option<String>,
}

#[derive(Args)]
struct InfoArgs {
    /// Graph file.
    graph: PathBuf,
    /// Graph file format, when the extension does not tell.
    #[arg(long, value_name = "FORMAT")]
    graph_format: Option<String>,
    /// Report format.
    #[arg(short, long, value_enum, default_value = "human")]
    format: OutputFormat,
}

/// Parses the arguments and runs the subcommand. Returns the exit code.
pub fn run() -> Result<u8> {
    let cli = Cli::parse();
    match cli.command {
        Command::Map(a) => cmd_map(a),
        Command::Eval(a) => cmd_eval(a),
        Command::Compare(a) => cmd_compare(a),
        Command::Sim(a) => crate::sim::cmd_sim(a),
        Command::Hetero(a) => crate::hetero::cmd_hetero(a),
        Command::Amap(a) => crate::amap::cmd_amap(a),
        Command::Delay(a) => crate::amap::cmd_delay(a),
        Command::Arch(a) => cmd_arch(a),
        Command::Gen(a) => cmd_gen(a),
        Command::Convert(a) => cmd_convert(a),
        Command::Info(a) => cmd_info(a),
        Command::Algorithms => {
            for (name, help) in AlgorithmSpec::ALL {
                outln!("{:<14} {}", name, help);
            }
            Ok(0)
        }
    }
}

fn parse_format(s: &str) -> Result<GraphFormat> {
    s.parse::<GraphFormat>()
        .map_err(|e| anyhow!("bad graph format \"{}\": {}", s, e))
}

fn read_graph(path: &Path, format: Option<&str>) -> Result<TaskGraph> {
    let format = format.map(parse_format).transpose()?;
    Ok(taskmap_graph::read_graph(path, format)?)
}

fn load_graph(input: &GraphInput) -> Result<(TaskGraph, String)> {
    match &input.graph {
        Some(p) => Ok((
            read_graph(p, input.graph_format.as_deref())?,
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

fn load_arch(spec: &str) -> Result<Box<dyn Architecture>> {
    Ok(taskmap::parse_arch(spec)?)
}

fn load_capacities(c: &Constraints, k: u32, ncon: usize) -> Result<Option<Capacities>> {
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
fn arch_spec(arch: Option<&String>, input: &GraphInput) -> Result<String> {
    match (arch, &input.graph) {
        (Some(s), _) => Ok(s.clone()),
        (None, None) => Ok(EXAMPLE_ARCH.to_string()),
        (None, Some(_)) => bail!("--arch is required with --graph (e.g. --arch torus:8x8)"),
    }
}

/// What a mapping run is checked against: the hard capacities when given (they replace the
/// balance bound, as in the mappers; ε is then checked only when given explicitly, and
/// the mappers then get the tighter bound, `Problem::epsilon_with_capacities`),
/// otherwise ε (default 0.03).
fn eval_options(problem: &Problem, constraints: &Constraints) -> EvalOptions {
    match &problem.capacities {
        Some(c) => EvalOptions {
            epsilon: constraints.epsilon,
            capacities: Some(c.clone()),
        },
        None => EvalOptions {
            epsilon: Some(problem.epsilon),
            capacities: None,
        },
    }
}

/// Reads the graph, the target and the constraints into a checked problem.
fn load_problem(
    input: &GraphInput,
    spec: &str,
    constraints: &Constraints,
) -> Result<(Problem, String)> {
    let (graph, graph_name) = load_graph(input)?;
    let arch = load_arch(spec)?;
    // Before anything sized by the target (a uniform capacity is one value per PE).
    taskmap::problem::check_pe_count(arch.as_ref())?;
    let capacities = load_capacities(constraints, arch.pe_count(), graph.ncon())?;
    // Weight totals are a property of the graph file: name it.
    taskmap::problem::check_weights(&graph, arch.as_ref())
        .map_err(|e| anyhow!("{}: {}", graph_name, e))?;
    let mut problem = Problem::new(graph, arch);
    if let Some(eps) = constraints.epsilon {
        problem.epsilon = eps;
    }
    // Capacities and an explicit ε both bound the loads: the mappers get the tighter of
    // the two on every PE, as evaluation checks both.
    problem.epsilon_with_capacities = constraints.epsilon.is_some();
    problem.capacities = capacities;
    problem.check()?;
    Ok((problem, graph_name))
}

fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    outln!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

/// The effective configuration of a `map` run, as `--dump-config` prints it.
#[derive(serde::Serialize)]
struct MapConfig<'a> {
    graph: &'a str,
    target: String,
    algorithm: &'a AlgorithmSpec,
    /// Every parameter of the algorithm after its preset and overrides
    /// ([`AlgorithmSpec::parameters`]).
    parameters: serde_json::Value,
    seed: u64,
    threads: usize,
    epsilon: f64,
    capacities: Option<String>,
    fixed: Option<String>,
    /// `--initial`: the mapping refined.
    initial: Option<String>,
    /// `--migration-cost`.
    migration_cost: Option<u64>,
    output: Option<String>,
    /// `--time-limit`, in seconds.
    time_limit: Option<f64>,
}

/// Shows the running phase and the elapsed time on stderr, from one second on, when stderr
/// is a terminal. Dropping it stops the display and clears its line.
struct Progress {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    fn start(phase: std::sync::Arc<std::sync::Mutex<String>>, enabled: bool) -> Self {
        use std::io::IsTerminal;
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let handle = (enabled && std::io::stderr().is_terminal()).then(|| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let t0 = Instant::now();
                let mut shown = false;
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    let el = t0.elapsed().as_secs_f64();
                    if el >= 1.0 && !stop.load(Ordering::Relaxed) {
                        let p = phase.lock().map(|s| s.clone()).unwrap_or_default();
                        let spin = ['|', '/', '-', '\\'][(el * 10.0) as usize % 4];
                        err!("\r\x1b[2K{} mapping: {} {:.1} s", spin, p, el);
                        shown = true;
                    }
                }
                if shown {
                    err!("\r\x1b[2K");
                }
            })
        });
        Progress { stop, handle }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// An error when `output` is the same file as one of `inputs` (writing it would destroy
/// the input): the same path, or the same file through another path or a link.
pub(crate) fn refuse_overwriting_inputs(output: &Path, inputs: &[Option<&PathBuf>]) -> Result<()> {
    let Ok(out_meta) = std::fs::metadata(output) else {
        return Ok(()); // a new file
    };
    if !out_meta.is_file() {
        return Ok(()); // a device such as /dev/null
    }
    for input in inputs.iter().flatten() {
        let same = match std::fs::metadata(input) {
            #[cfg(unix)]
            Ok(m) => {
                use std::os::unix::fs::MetadataExt;
                (m.dev(), m.ino()) == (out_meta.dev(), out_meta.ino())
            }
            #[cfg(not(unix))]
            Ok(_) => std::fs::canonicalize(input).ok() == std::fs::canonicalize(output).ok(),
            Err(_) => false,
        };
        if same {
            bail!(
                "the output {} is the input file {}; choose another output path",
                output.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// Errors when two of the named output files are one file, however their paths are
/// spelt (`x`, `./x`, `dir/../x`, a symbolic link to the other): each is compared by its
/// canonical path when it exists, else by its directory's canonical path and its name.
/// Outputs that exist and are no regular file (`/dev/null`) may repeat.
pub(crate) fn refuse_same_outputs(outputs: &[(&str, Option<&PathBuf>)]) -> Result<()> {
    let special = |p: &Path| std::fs::metadata(p).is_ok_and(|m| !m.is_file());
    let key = |p: &Path| -> Option<PathBuf> {
        if let Ok(c) = std::fs::canonicalize(p) {
            return Some(c);
        }
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = p.file_name()?;
        Some(std::fs::canonicalize(dir).ok()?.join(name))
    };
    let keys: Vec<(&str, &PathBuf, Option<PathBuf>)> = outputs
        .iter()
        .filter_map(|&(flag, p)| p.filter(|p| !special(p)).map(|p| (flag, p, key(p))))
        .collect();
    for (i, (flag, path, k)) in keys.iter().enumerate() {
        let clash = keys[..i]
            .iter()
            .find(|(_, p, q)| *p == *path || (k.is_some() && q == k));
        if let Some((other, _, _)) = clash {
            bail!(
                "{other} and {flag} name the same file {}; give two paths",
                path.display()
            );
        }
    }
    Ok(())
}

/// The file a target spec reads, when it reads one (`graph:F`, `matrix:F`, `tgt:F`, or a
/// Scotch target file named directly).
fn target_file(spec: &str) -> Option<PathBuf> {
    let rest = ["graph:", "matrix:", "tgt:"]
        .iter()
        .find_map(|p| spec.strip_prefix(p))
        .unwrap_or(spec);
    let p = PathBuf::from(rest);
    p.is_file().then_some(p)
}

fn cmd_map(a: MapArgs) -> Result<u8> {
    if let Some(out) = &a.output {
        let target = a.arch.as_deref().and_then(target_file);
        refuse_overwriting_inputs(
            out,
            &[
                a.input.graph.as_ref(),
                a.fixed.as_ref(),
                a.constraints.capacities.as_ref(),
                target.as_ref(),
                a.initial.as_ref(),
            ],
        )?;
    }
    let mut alg_text = a.algorithm.clone();
    let mut algorithm: AlgorithmSpec = alg_text.parse()?;
    if let Some(p) = &a.preset {
        if algorithm.name() != "multilevel" {
            bail!(
                "--preset applies to the multilevel mapper, not to {}",
                alg_text
            );
        }
        if alg_text
            .split(',')
            .skip(1)
            .any(|x| x.trim().starts_with("preset="))
        {
            bail!(
                "--preset {} conflicts with the preset given in --algorithm {}",
                p,
                alg_text
            );
        }
        alg_text.push_str(&format!(",preset={}", p));
        algorithm = alg_text.parse()?;
    }
    let spec = arch_spec(a.arch.as_ref(), &a.input)?;
    // Everything the run would refuse is refused before the configuration is printed too.
    let (mut problem, graph_name) = load_problem(&a.input, &spec, &a.constraints)?;
    let k = problem.arch.pe_count();
    if let Some(path) = &a.fixed {
        problem.fixed = Some(taskmap::problem::read_fixed(
            path,
            problem.graph.num_tasks(),
            k,
        )?);
        problem.check_with_fixed()?;
    }
    // --initial: the mapping to refine, and the multilevel mapper that refines it.
    let refine = match &a.initial {
        None => None,
        Some(path) => {
            let AlgorithmSpec::Multilevel(spec) = &algorithm else {
                bail!(
                    "--initial applies to -A multilevel, not to {}",
                    algorithm.name()
                );
            };
            let ml = spec.to_mapper();
            if ml.population >= 2 {
                bail!(taskmap::multilevel::driver::REFINE_ONE_RUN);
            }
            let given = Mapping::read_for(path, problem.graph.num_tasks(), k)?;
            Some((ml, given, path))
        }
    };
    let migration = a.migration_cost.unwrap_or(0);
    if a.migration_cost.is_some() && refine.is_none() {
        bail!("--migration-cost applies to --initial only");
    }
    if migration > taskmap::multilevel::driver::MAX_MIGRATION_COST {
        bail!("--migration-cost must be at most 2^32, not {migration}");
    }
    if refine.is_some() {
        // refused here, before --dump-config, as the run would refuse it
        taskmap::multilevel::driver::effective_migration_cost(&problem, migration)
            .context("--migration-cost")?;
    }
    let mut ctx = RunContext::new(a.run.seed).with_threads(a.run.threads)?;
    if a.dump_config {
        let graph = a
            .input
            .graph
            .as_ref()
            .map_or(EXAMPLE_NAME.to_string(), |p| p.display().to_string());
        let cfg = MapConfig {
            graph: &graph,
            target: spec,
            algorithm: &algorithm,
            parameters: algorithm.parameters(),
            seed: a.run.seed,
            threads: a.run.threads,
            epsilon: a.constraints.epsilon.unwrap_or(0.03),
            capacities: a
                .constraints
                .capacities
                .as_ref()
                .map(|p| p.display().to_string())
                .or(a.constraints.capacity.clone()),
            fixed: a.fixed.as_ref().map(|p| p.display().to_string()),
            initial: a.initial.as_ref().map(|p| p.display().to_string()),
            migration_cost: a.migration_cost,
            output: a.output.as_ref().map(|p| p.display().to_string()),
            time_limit: a.time_limit,
        };
        print_json(&cfg)?;
        return Ok(0);
    }
    if let Some(c) = &problem.capacities {
        for con in 0..problem.graph.ncon() {
            let total = problem.graph.vertex_weight_sum(con);
            let cap: u128 = (0..k).map(|p| u128::from(c.get(PeId(p), con))).sum();
            if cap < total {
                errln!(
                    "taskmap: warning: infeasible: the PEs can carry {} of vertex weight {} in all but the tasks weigh {}; mapping anyway",
                    cap, con, total
                );
            }
        }
    }
    let phase = std::sync::Arc::new(std::sync::Mutex::new(String::from("start")));
    ctx.progress = Some(phase.clone());
    // --initial always runs a V-cycle, which the limit can end
    if a.time_limit.is_some() && !algorithm.honours_deadline() && refine.is_none() {
        if let AlgorithmSpec::Multilevel(_) = &algorithm {
            errln!("taskmap: warning: --time-limit ends the multilevel mapper's V-cycles, memetic mode and annealing, and this configuration has none; it is ignored");
        } else {
            errln!(
                "taskmap: warning: --time-limit applies to pnp and multilevel; {} ignores it",
                algorithm.name()
            );
        }
    }
    let mapper = algorithm.build();
    let t0 = Instant::now();
    ctx.deadline = a
        .time_limit
        .map(|secs| t0 + std::time::Duration::from_secs_f64(secs));
    let mapping = {
        let _progress = Progress::start(phase, !a.quiet);
        match &refine {
            Some((ml, given, _)) => {
                ml.refine_mapping_migrating(&problem, given, migration, &mut ctx)?
            }
            None => mapper.map(&problem, &mut ctx)?,
        }
    };
    let map_time = t0.elapsed();
    let opts = eval_options(&problem, &a.constraints);
    let evaluation = evaluate(&problem.graph, problem.arch.as_ref(), &mapping, &opts)?;
    let initial = match &refine {
        Some((_, given, path)) => {
            let before = evaluate(&problem.graph, problem.arch.as_ref(), given, &opts)?;
            let moved: Vec<u32> = (0..problem.graph.num_tasks() as u32)
                .filter(|&t| given.pe(t) != mapping.pe(t))
                .collect();
            let arch = problem.arch.as_ref();
            let hops: u128 = moved
                .iter()
                .map(|&t| u128::from(arch.distance(given.pe(t), mapping.pe(t))))
                .sum();
            Some(InitialReport {
                file: path.display().to_string(),
                comm_cost: before.comm_cost,
                feasible: before.feasible(),
                moved_hops: hops,
                migration_cost: migration,
                migration: u128::from(migration) * hops,
                moved_tasks: moved.len() as u64,
                moved_weight: (0..problem.graph.ncon())
                    .map(|c| {
                        moved
                            .iter()
                            .map(|&t| problem.graph.vertex_weight(t, c))
                            .sum()
                    })
                    .collect(),
            })
        }
        None => None,
    };
    if let Some(out) = &a.output {
        mapping
            .write(out, MappingFormat::from_path(out))
            .context("writing the mapping")?;
    }
    let feasible = evaluation.feasible();
    if !feasible {
        let what = match (evaluation.balanced, evaluation.capacities_respected) {
            (_, Some(false)) => "a PE is above its capacity",
            _ => "a PE is above its (1+eps) share",
        };
        errln!(
            "taskmap: constraint violated: {}; the best mapping found is {} (exit code 1)",
            what,
            if a.output.is_some() {
                "written"
            } else {
                "reported"
            }
        );
    }
    let report = MapReport {
        graph: graph_name,
        target: problem.arch.spec(),
        algorithm: alg_text,
        seed: a.run.seed,
        threads: a.run.threads,
        timings_ms: ctx
            .timings
            .iter()
            .map(|(p, d)| (p.clone(), d.as_secs_f64() * 1e3))
            .collect(),
        map_time_ms: map_time.as_secs_f64() * 1e3,
        evaluation,
        initial,
    };
    match a.format {
        OutputFormat::Human => out!("{}", render_map_report(&report)),
        OutputFormat::Json => print_json(&report)?,
    }
    Ok(if feasible { 0 } else { 1 })
}

#[derive(serde::Serialize)]
struct CompareRow {
    algorithm: String,
    comm_cost: Option<u64>,
    edge_cut: Option<u64>,
    imbalance: Option<f64>,
    feasible: bool,
    time_ms: f64,
    /// Why the algorithm gave no mapping (it does not apply to this problem).
    error: Option<String>,
}

fn cmd_compare(a: CompareArgs) -> Result<u8> {
    let spec = arch_spec(a.arch.as_ref(), &a.input)?;
    let (problem, graph_name) = load_problem(&a.input, &spec, &a.constraints)?;
    let names: Vec<String> = if a.algorithms.is_empty() {
        AlgorithmSpec::ALL
            .iter()
            .map(|(n, _)| n.to_string())
            .filter(|n| n != "greedy-perego")
            .collect()
    } else {
        a.algorithms.clone()
    };
    let specs: Vec<AlgorithmSpec> = names
        .iter()
        .map(|n| n.parse::<AlgorithmSpec>())
        .collect::<Result<_, _>>()?;
    let opts = eval_options(&problem, &a.constraints);
    let mut rows = Vec::with_capacity(specs.len());
    for (name, alg) in names.iter().zip(&specs) {
        let mut ctx = RunContext::new(a.run.seed).with_threads(a.run.threads)?;
        let t0 = Instant::now();
        let result = alg.build().map(&problem, &mut ctx);
        let time_ms = t0.elapsed().as_secs_f64() * 1e3;
        let row = match result {
            Ok(mapping) => {
                let e = evaluate(&problem.graph, problem.arch.as_ref(), &mapping, &opts)?;
                CompareRow {
                    algorithm: name.clone(),
                    comm_cost: Some(e.comm_cost),
                    edge_cut: Some(e.edge_cut),
                    imbalance: Some(e.loads.iter().map(|l| l.imbalance).fold(0.0, f64::max)),
                    feasible: e.feasible(),
                    time_ms,
                    error: None,
                }
            }
            Err(e) => CompareRow {
                algorithm: name.clone(),
                comm_cost: None,
                edge_cut: None,
                imbalance: None,
                feasible: false,
                time_ms,
                error: Some(e.to_string()),
            },
        };
        rows.push(row);
    }
    match a.format {
        OutputFormat::Json => print_json(&rows)?,
        OutputFormat::Human => {
            outln!(
                "graph {}  target {}  seed {}",
                graph_name,
                problem.arch.spec(),
                a.run.seed
            );
            outln!(
                "{:<32} {:>14} {:>12} {:>10} {:>9} {:>12}",
                "algorithm",
                "f_C",
                "cut",
                "imbalance",
                "feasible",
                "time_ms"
            );
            for r in &rows {
                match (&r.error, r.comm_cost, r.edge_cut, r.imbalance) {
                    (None, Some(fc), Some(cut), Some(imb)) => outln!(
                        "{:<32} {:>14} {:>12} {:>10.4} {:>9} {:>12.3}",
                        r.algorithm,
                        fc,
                        cut,
                        imb,
                        if r.feasible { "yes" } else { "NO" },
                        r.time_ms
                    ),
                    (err, ..) => outln!(
                        "{:<32} not applicable: {}",
                        r.algorithm,
                        err.as_deref().unwrap_or("no result")
                    ),
                }
            }
        }
    }
    // Like `map`: exit 2 when no algorithm could map at all, 1 when none gave a mapping
    // within the constraints.
    Ok(if rows.iter().all(|r| r.error.is_some()) {
        2
    } else if rows.iter().any(|r| r.error.is_none() && r.feasible) {
        0
    } else {
        1
    })
}

fn cmd_eval(a: EvalArgs) -> Result<u8> {
    let program = a
        .program
        .as_ref()
        .map(|p| taskmap::perego::program::read_program(p))
        .transpose()?;
    let graph = match (&a.input.graph, &program) {
        (Some(_), _) => load_graph(&a.input)?.0,
        (None, Some(p)) => p.to_task_graph(),
        (None, None) => bail!("--graph (or --program) is required"),
    };
    let arch = load_arch(&a.arch)?;
    taskmap::problem::check_pe_count(arch.as_ref())?;
    let mapping = Mapping::read_for(&a.mapping, graph.num_tasks(), arch.pe_count())?;
    let capacities = load_capacities(&a.constraints, arch.pe_count(), graph.ncon())?;
    let opts = EvalOptions {
        epsilon: a.constraints.epsilon,
        capacities,
    };
    let e = evaluate(&graph, arch.as_ref(), &mapping, &opts)
        .with_context(|| format!("evaluating {}", a.mapping.display()))?;
    let (perego_f, perego_f_prop) = match &program {
        Some(p) => {
            let model = taskmap::perego::spm::SpmModel::build(p, &Default::default())?;
            (
                Some(model.evaluate(arch.as_ref(), &mapping)?),
                model.evaluate_propagated(p, arch.as_ref(), &mapping)?,
            )
        }
        None => (None, None),
    };
    let feasible = e.feasible();
    match a.format {
        OutputFormat::Human => {
            out!("{}", render_evaluation(&e));
            if let Some(f) = &perego_f {
                outln!(
                    "F (De Petris & Perego) {:.1} cycles (max on PE {}), F_sum {:.1}",
                    f.f,
                    f.argmax,
                    f.f_sum
                );
                outln!(
                    "  terms: comp+idle {:.1}, distance {:.1}, multitasking {:.1}, contention {:.1}",
                    f.comp_idle,
                    f.distance,
                    f.multitasking,
                    f.contention
                );
            }
            if let Some(f) = &perego_f_prop {
                outln!(
                    "F_prop {:.1} cycles (the model's delays propagated along the program; last task {})",
                    f.f_prop,
                    f.argmax_task
                );
            }
        }
        OutputFormat::Json => print_json(&EvalReport {
            evaluation: e,
            perego_f,
            perego_f_prop,
        })?,
    }
    Ok(if feasible { 0 } else { 1 })
}

#[derive(serde::Serialize)]
struct ArchReport {
    spec: String,
    pes: u32,
    total_capacity: u64,
    diameter: u64,
    mean_distance: f64,
    links: u32,
    distance: Option<(u32, u32, u64)>,
}

fn cmd_arch(a: ArchArgs) -> Result<u8> {
    let arch = load_arch(&a.spec)?;
    if a.scotch {
        let t = taskmap_arch::write_scotch_target(arch.as_ref())
            .ok_or_else(|| anyhow!("{} has no Scotch target description", arch.spec()))?;
        outln!("{}", t.trim_end());
        return Ok(0);
    }
    let k = arch.pe_count();
    if a.links {
        let g = taskmap_arch::explicit_graph_of(arch.as_ref())
            .filter(|g| g.vertex_count == k && g.scale == 1)
            .ok_or_else(|| anyhow!("{} has no link graph between PEs alone", arch.spec()))?;
        let mut out = String::with_capacity(g.edges.len() * 12);
        for (x, y, w) in &g.edges {
            out.push_str(&format!("{} {} {}\n", x, y, w));
        }
        out!("{}", out);
        return Ok(0);
    }
    let distance = match &a.distance {
        Some(v) => {
            for &p in v {
                if p >= k {
                    bail!("PE {} out of range 0..{}", p, k);
                }
            }
            Some((v[0], v[1], arch.distance(PeId(v[0]), PeId(v[1]))))
        }
        None => None,
    };
    let r = ArchReport {
        spec: arch.spec(),
        pes: k,
        total_capacity: (0..k).map(|p| arch.pe_capacity(PeId(p))).sum(),
        diameter: taskmap_arch::diameter(arch.as_ref()),
        mean_distance: taskmap_arch::mean_distance(arch.as_ref()),
        links: arch.link_count(),
        distance,
    };
    match a.format {
        OutputFormat::Json => print_json(&r)?,
        OutputFormat::Human => {
            outln!("target          {}", r.spec);
            outln!("PEs             {}", r.pes);
            outln!("total capacity  {}", r.total_capacity);
            outln!("diameter        {}", r.diameter);
            outln!("mean distance   {:.4}", r.mean_distance);
            if r.links > 0 {
                outln!("directed links  {}", r.links);
            }
            if let Some((x, y, d)) = r.distance {
                outln!("distance({}, {}) = {}", x, y, d);
            }
        }
    }
    Ok(0)
}

fn parse_dims(s: &str) -> Result<Vec<u32>> {
    s.split('x')
        .map(|t| {
            t.parse::<u32>().ok().filter(|&d| d > 0).ok_or_else(|| {
                anyhow!(
                    "bad size \"{}\": expected whole numbers from 1 to 4294967295 like 100x100",
                    s
                )
            })
        })
        .collect()
}

fn parse_count(s: &str) -> Result<u32> {
    s.parse::<u32>().ok().filter(|&d| d > 0).ok_or_else(|| {
        anyhow!(
            "bad size \"{}\": expected a whole number from 1 to 4294967295",
            s
        )
    })
}

fn output_format(path: &Path, to: Option<&str>) -> Result<GraphFormat> {
    match to {
        Some(f) => parse_format(f),
        None => GraphFormat::from_path(path).ok_or_else(|| {
            anyhow!(
                "cannot tell the graph format of {} from its extension; use --to",
                path.display()
            )
        }),
    }
}

fn cmd_gen(a: GenArgs) -> Result<u8> {
    if a.kind == "program" {
        let p = crate::sim::gen_program(&a.size, &a.output)?;
        errln!(
            "wrote {}: program of {} tasks",
            a.output.display(),
            p.num_tasks()
        );
        return Ok(0);
    }
    let format = output_format(&a.output, a.to.as_deref())?;
    check_gen_size(&a)?;
    let g = match a.kind.as_str() {
        "grid" | "mesh" => gen::grid(&parse_dims(&a.size)?, false),
        "torus" => gen::grid(&parse_dims(&a.size)?, true),
        "stencil9" => {
            let d = parse_dims(&a.size)?;
            if d.len() != 2 {
                bail!("stencil9 takes two dimensions, like 100x100");
            }
            gen::stencil_2d_9pt(d[0], d[1])
        }
        "stencil27" => {
            let d = parse_dims(&a.size)?;
            if d.len() != 3 {
                bail!("stencil27 takes three dimensions, like 20x20x20");
            }
            gen::stencil_3d_27pt(d[0], d[1], d[2])
        }
        "ring" => gen::ring(parse_count(&a.size)?),
        "tree" => gen::binary_tree(parse_count(&a.size)?),
        "butterfly" => gen::butterfly(parse_count(&a.size)?),
        "hypercube" => gen::hypercube_pattern(parse_count(&a.size)?),
        "rgg" => gen::random_geometric(parse_count(&a.size)?, a.degree, a.seed),
        "random" => gen::random_graph(parse_count(&a.size)?, a.degree, a.seed),
        other => bail!(
            "unknown generator \"{}\"; known: grid, torus, stencil9, stencil27, ring, tree, butterfly, hypercube, rgg, random",
            other
        ),
    };
    write_graph(&a.output, &g, format)
}

fn write_graph(path: &Path, g: &TaskGraph, format: GraphFormat) -> Result<u8> {
    taskmap_graph::write_graph_file(path, g, format)?;
    errln!(
        "wrote {}: {} tasks, {} edges",
        path.display(),
        g.num_tasks(),
        g.num_edges()
    );
    Ok(0)
}

/// Refuses generator sizes whose ids do not fit in 32 bits or whose CSR arrays would not fit
/// in memory (about 16 bytes per task and 12 per adjacency entry; limit 16 GiB).
fn check_gen_size(a: &GenArgs) -> Result<()> {
    let dims =
        |s: &str| -> Result<u128> { Ok(parse_dims(s)?.iter().map(|&d| u128::from(d)).product()) };
    let (tasks, entries): (u128, u128) = match a.kind.as_str() {
        "grid" | "mesh" | "torus" => {
            let d = parse_dims(&a.size)?;
            let n = dims(&a.size)?;
            (n, n * 2 * d.len() as u128)
        }
        "stencil9" => (dims(&a.size)?, dims(&a.size)? * 8),
        "stencil27" => (dims(&a.size)?, dims(&a.size)? * 26),
        "ring" | "tree" => (
            u128::from(parse_count(&a.size)?),
            2 * u128::from(parse_count(&a.size)?),
        ),
        "butterfly" | "hypercube" => {
            let s = parse_count(&a.size)?;
            if s >= 32 {
                bail!("{} {} is too large: ids must fit in 32 bits", a.kind, s);
            }
            let n = if a.kind == "butterfly" {
                (u128::from(s) + 1) << s
            } else {
                1u128 << s
            };
            (n, n * 2 * u128::from(s))
        }
        "rgg" | "random" => {
            if !(a.degree.is_finite() && a.degree >= 0.0) {
                bail!("--degree must be a non-negative number, not {}", a.degree);
            }
            let n = u128::from(parse_count(&a.size)?);
            // a task has at most n - 1 neighbours, whatever the degree asked
            let degree = a.degree.min(n.saturating_sub(1) as f64);
            (n, (n as f64 * degree) as u128)
        }
        _ => return Ok(()),
    };
    if tasks >= u128::from(u32::MAX) {
        bail!(
            "{} {} has {} tasks: ids must fit in 32 bits",
            a.kind,
            a.size,
            tasks
        );
    }
    let bytes = tasks
        .saturating_mul(16)
        .saturating_add(entries.saturating_mul(12));
    if bytes > 16 << 30 {
        bail!(
            "{} {} would need about {} GiB; the limit is 16 GiB",
            a.kind,
            a.size,
            bytes >> 30
        );
    }
    Ok(())
}

fn cmd_convert(a: ConvertArgs) -> Result<u8> {
    refuse_overwriting_inputs(&a.output, &[Some(&a.input)])?;
    let g = read_graph(&a.input, a.from.as_deref())?;
    let format = output_format(&a.output, a.to.as_deref())?;
    write_graph(&a.output, &g, format)
}

#[derive(serde::Serialize)]
struct GraphInfo {
    tasks: usize,
    edges: usize,
    ncon: usize,
    /// Exact sums (they may exceed 2^64 - 1; the mappers then refuse the graph).
    total_vertex_weight: Vec<u128>,
    total_edge_weight: u128,
    max_degree: usize,
}

fn cmd_info(a: InfoArgs) -> Result<u8> {
    let g = read_graph(&a.graph, a.graph_format.as_deref())?;
    let info = GraphInfo {
        tasks: g.num_tasks(),
        edges: g.num_edges(),
        ncon: g.ncon(),
        total_vertex_weight: (0..g.ncon()).map(|c| g.vertex_weight_sum(c)).collect(),
        total_edge_weight: g.edge_weight_sum(),
        max_degree: (0..g.num_tasks() as u32)
            .map(|u| g.degree(u))
            .max()
            .unwrap_or(0),
    };
    match a.format {
        OutputFormat::Json => print_json(&info)?,
        OutputFormat::Human => {
            outln!("tasks               {}", info.tasks);
            outln!("edges               {}", info.edges);
            outln!(
                "vertex weights      {} per task, totals {:?}",
                info.ncon,
                info.total_vertex_weight
            );
            outln!("total edge weight   {}", info.total_edge_weight);
            outln!("max degree          {}", info.max_degree);
        }
    }
    Ok(0)
}
