//! `taskmap map`: map a task graph onto a target.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use taskmap::multilevel::MultilevelMapper;
use taskmap::registry::Family;
use taskmap::report::{render_map_report, InitialReport, MapReport};
use taskmap::{evaluate_on, AlgorithmSpec, Mapper, Mapping, MappingFormat, Problem, RunContext};

use crate::input::*;
use crate::launch::LaunchArgs;
use crate::output::*;

#[derive(Args)]
pub(crate) struct MapArgs {
    #[command(flatten)]
    pub(crate) input: GraphInput,
    /// Target architecture: a spec (torus:16x16, mesh:8x8x8, hypercube:6, complete:64,
    /// tree:4:8:6/1:10:100, graph:FILE, matrix:FILE, ...) or a Scotch target file.
    #[arg(short, long, value_name = "SPEC")]
    pub(crate) arch: Option<String>,
    #[command(flatten)]
    pub(crate) nodes: NodeList,
    /// Mapping algorithm, `name[,key=value...]` (see `taskmap algorithms`).
    #[arg(short = 'A', long, default_value = "multilevel")]
    pub(crate) algorithm: String,
    /// A timed program (PROCESS/INT_OP/SEND/RECEIVE/STOP) instead of --graph: its task
    /// graph is mapped (edge weight = the flits two tasks exchange, vertex weight = a
    /// task's compute cycles), and `greedy-perego` maps it with the program's own phases,
    /// as `taskmap sim -A greedy-perego` does.
    #[arg(long, value_name = "FILE", conflicts_with = "graph")]
    pub(crate) program: Option<PathBuf>,
    /// Preset of the algorithm (the multilevel mapper's: fast, default or strong), the
    /// configuration its keys edit.
    #[arg(short = 'P', long, value_name = "PRESET", value_parser = clap::builder::PossibleValuesParser::new(preset_names()))]
    pub(crate) preset: Option<String>,
    /// Fixed tasks: a Scotch fixed-vertex file (a count, then `task pe` lines, as `gmap -f`)
    /// or one line per task with its PE or -1; task ids 0-based (drb, multilevel and exact).
    #[arg(long, value_name = "FILE")]
    pub(crate) fixed: Option<PathBuf>,
    /// Refine this mapping instead of mapping from scratch (multilevel, one run): pinned
    /// tasks moved to their PEs, a broken balance repaired (or a new run made when single
    /// moves cannot), then the k-way refiner, V-cycles and, with `anneal`, the annealing;
    /// never worse than a balanced input with its pins in place. The report gives its f_C and the tasks moved.
    /// Scotch's `.map` format or one PE per line.
    #[arg(long, value_name = "FILE")]
    pub(crate) initial: Option<PathBuf>,
    /// With --initial: what a free task pays per hop between its input PE and its new PE,
    /// on top of f_C (integer, 0 to 2^32; default 0; lowered to the total edge weight
    /// times the diameter, plus 1, where no move can pay any more). The refiner moves a
    /// task only when the communication it saves outweighs that; the report gives the
    /// hops moved and the migration.
    #[arg(long, value_name = "COST")]
    pub(crate) migration_cost: Option<u64>,
    /// Print the effective configuration as JSON and exit (after reading and checking the
    /// graph, the target and the constraints, as a run would).
    #[arg(long)]
    pub(crate) dump_config: bool,
    /// Stop improving after this many seconds: the multilevel mapper starts no V-cycle,
    /// no member of its memetic mode (`population` >= 2) after the first round and no
    /// batch of recombinations unless it is expected to end in time (at the mean pace of
    /// the ones before), and its annealing (`anneal`) stops at the limit; pnp ends its
    /// GRASP runs (after the first) and its annealing. The first mapping is always
    /// completed, so a limit shorter than one run is exceeded. Other algorithms ignore it
    /// (with a warning). The mapping then depends on the machine's speed.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub(crate) time_limit: Option<f64>,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    #[command(flatten)]
    pub(crate) constraints: Constraints,
    /// Write the mapping here (.map: Scotch format; otherwise one PE per line); `-` writes
    /// it to standard output, and the report then goes to standard error.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) launch: LaunchArgs,
    /// Report link congestion: the traffic routed over the target's links (dimension
    /// order on meshes, tori and hypercubes, up and down links on trees, shortest paths
    /// on target graphs), the largest and mean link load and the busiest links.
    #[arg(long)]
    pub(crate) congestion: bool,
    /// Write the mapping as one self-contained HTML page (inline SVG, no network): the
    /// summary and the comparison with the ranks in order, the target drawn with PE loads
    /// and link traffic, a node-to-node traffic heat map, the traffic by distance.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// Report format.
    #[arg(short, long, value_enum, default_value = "human")]
    pub(crate) format: OutputFormat,
}

/// Every preset name of the registry, for `--preset`.
fn preset_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = taskmap::registry::ALGORITHMS
        .iter()
        .filter(|r| r.family.maps_task_graphs())
        .filter_map(|r| r.params)
        .filter(|p| p.preset_key == Some("preset"))
        .flat_map(|p| (p.presets)())
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The algorithm of `-A`, with `--preset` applied.
fn parse_algorithm(text: &str, preset: Option<&str>) -> Result<AlgorithmSpec> {
    let name = text.split(',').next().unwrap_or("").trim();
    let row = taskmap::registry::find(name, &[Family::Static, Family::Program])?;
    if let Some(p) = preset {
        let key = row.params.and_then(|ps| ps.preset_key);
        if key != Some("preset") {
            bail!("--preset applies to the multilevel mapper, not to {text}");
        }
        if text
            .split(',')
            .skip(1)
            .any(|x| x.trim().starts_with("preset="))
        {
            bail!("--preset {p} conflicts with the preset given in --algorithm {text}");
        }
    }
    Ok(AlgorithmSpec::parse_with_preset(text, preset)?)
}

/// The effective configuration of a `map` run, as `--dump-config` prints it.
#[derive(serde::Serialize)]
pub(crate) struct MapConfig<'a> {
    pub(crate) graph: &'a str,
    /// `--task-weights`.
    pub(crate) task_weights: Option<String>,
    pub(crate) target: String,
    /// `--nodes`.
    pub(crate) nodes: Option<String>,
    /// The algorithm as given (`-A`, with `--preset`).
    pub(crate) algorithm: &'a str,
    /// Every parameter of the algorithm after its preset and overrides
    /// ([`AlgorithmSpec::parameters`]).
    pub(crate) parameters: serde_json::Value,
    pub(crate) seed: u64,
    pub(crate) threads: usize,
    pub(crate) epsilon: f64,
    pub(crate) capacities: Option<String>,
    pub(crate) fixed: Option<String>,
    /// `--initial`: the mapping refined.
    pub(crate) initial: Option<String>,
    /// `--migration-cost`.
    pub(crate) migration_cost: Option<u64>,
    pub(crate) output: Option<String>,
    /// `--time-limit`, in seconds.
    pub(crate) time_limit: Option<f64>,
    /// The launch files (`--rankfile`, `--slurm-hostfile`, `--permutation`).
    pub(crate) rankfile: Option<String>,
    pub(crate) slurm_hostfile: Option<String>,
    pub(crate) permutation: Option<String>,
    /// `--congestion`.
    pub(crate) congestion: bool,
    /// `--html`.
    pub(crate) html: Option<String>,
}

pub(crate) fn cmd_map(a: MapArgs, quiet: bool) -> Result<u8> {
    let mut outputs = vec![("--output", a.output.as_ref()), ("--html", a.html.as_ref())];
    outputs.extend(a.launch.outputs());
    refuse_same_outputs(&outputs)?;
    let targets = a
        .arch
        .as_deref()
        .map_or_else(Vec::new, |s| target_files(s, &a.nodes));
    let mut inputs = vec![
        a.input.graph.as_ref(),
        a.input.task_weights.as_ref(),
        a.program.as_ref(),
        a.fixed.as_ref(),
        a.constraints.capacities.as_ref(),
        a.initial.as_ref(),
    ];
    inputs.extend(targets.iter().map(Some));
    for out in outputs.iter().filter_map(|o| o.1) {
        refuse_overwriting_inputs(out, &inputs)?;
    }
    let algorithm = parse_algorithm(&a.algorithm, a.preset.as_deref())?;
    // The report names the algorithm as given, with the preset given apart.
    let alg_text = match &a.preset {
        Some(p) => format!("{},preset={}", a.algorithm, p),
        None => a.algorithm.clone(),
    };
    // The pool reads the graph too.
    let mut ctx = RunContext::new(a.run.seed).with_threads(a.run.threads)?;
    // Everything the run would refuse is refused before the configuration is printed too.
    let (program, spec, (mut problem, graph_name, machine)) = match &a.program {
        Some(path) => {
            if a.input.task_weights.is_some() {
                bail!("--task-weights applies to --graph; a program's tasks carry their own work");
            }
            let Some(spec) = a.arch.clone() else {
                bail!("--arch is required with --program (e.g. --arch torus:8x8)");
            };
            let program = taskmap::perego::program::read_program(path)?;
            let graph = program.to_task_graph();
            let name = path.display().to_string();
            let loaded = problem_of(graph, name, &spec, &a.nodes, &a.constraints)?;
            (Some(program), spec, loaded)
        }
        None => {
            let spec = arch_spec(a.arch.as_ref(), &a.input)?;
            let loaded =
                load_problem(&a.input, &spec, &a.nodes, &a.constraints, ctx.pool.as_ref())?;
            (None, spec, loaded)
        }
    };
    a.launch.check(machine.as_ref())?;
    if let Some(path) = &a.fixed {
        let k = problem.arch.pe_count();
        problem.fixed = Some(taskmap::problem::read_fixed(
            path,
            problem.graph.num_tasks(),
            k,
        )?);
        problem.check_with_fixed()?;
    }
    let refine = refinement(&a, &algorithm, &problem)?;
    if a.dump_config {
        return dump_config(&a, spec, &alg_text, &algorithm);
    }
    claim_stdout(&outputs.iter().map(|o| o.1).collect::<Vec<_>>());
    warn_before_run(&a, &algorithm, &problem, refine.is_some());
    let t0 = Instant::now();
    ctx.deadline = a
        .time_limit
        .map(|secs| t0 + std::time::Duration::from_secs_f64(secs));
    let progress = Bar::start(algorithm.name(), !quiet);
    ctx.progress = progress.clone();
    let mapping = match (&refine, &program) {
        (Some(r), _) => {
            r.mapper
                .refine_mapping_migrating(&problem, &r.given, r.migration, &mut ctx)?
        }
        // The program's own phases for the mapper made for programs.
        (None, Some(p)) if algorithm.name() == "greedy-perego" && problem.fixed.is_none() => {
            let how = taskmap::perego::summary::ProgramMapping {
                algorithm: Some(&alg_text),
                seed: a.run.seed,
                threads: a.run.threads,
                epsilon: a.constraints.epsilon,
                spm: Default::default(),
                progress: progress.clone(),
                stop: ctx.stop.clone(),
            };
            taskmap::perego::summary::map_program(p, problem.arch.clone(), &how)?
        }
        (None, _) => algorithm.map(&problem, &mut ctx)?,
    };
    progress.finish();
    let map_time = t0.elapsed();
    let opts = eval_options(&problem, &a.constraints);
    let evaluation = evaluate_on(
        &problem.graph,
        problem.arch.as_ref(),
        &mapping,
        &opts,
        ctx.pool.as_ref(),
    )?;
    let initial = refine
        .map(|r| {
            let file = r.path.display().to_string();
            InitialReport::new(&problem, &r.given, &mapping, file, r.migration, &opts)
        })
        .transpose()?;
    let congestion = congestion_of(a.congestion, &problem, &mapping);
    let page = a.html.as_ref().map(|_| {
        let name = std::path::Path::new(&graph_name)
            .file_name()
            .map_or(graph_name.clone(), |n| n.to_string_lossy().into_owned());
        let title = format!("taskmap map: {name} onto {spec}");
        taskmap::html::MappingPage {
            title: &title,
            graph_name: &graph_name,
            target: &spec,
            algorithm: Some(&alg_text),
            graph: &problem.graph,
            arch: problem.arch.as_ref(),
            mapping: &mapping,
            evaluation: &evaluation,
            machine: machine.as_ref(),
            congestion: congestion.as_ref(),
        }
        .render()
    });
    write_outputs(&a, machine.as_ref(), &mapping, page, quiet)?;
    let launch = a.launch.report(
        &problem.graph,
        problem.arch.as_ref(),
        machine.as_ref(),
        &mapping,
        evaluation.comm_cost,
    )?;
    let feasible = evaluation.feasible();
    if !feasible {
        let what = match (evaluation.balanced, evaluation.capacities_respected) {
            (_, Some(false)) => "a PE is above its capacity",
            _ => "a PE is above its (1+eps) share",
        };
        let done = if a.output.is_some() {
            "written"
        } else {
            "reported"
        };
        errln!(
            "taskmap: constraint violated: {what}; the best mapping found is {done} (exit code 1)"
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
        launch,
        congestion,
        optimality: ctx.optimality.clone(),
    };
    match a.format {
        OutputFormat::Human => out!("{}", render_map_report(&report)),
        OutputFormat::Json | OutputFormat::Csv => print_data(&report, a.format)?,
    }
    Ok(if feasible { 0 } else { 1 })
}

/// `--initial`: the mapping to refine, the multilevel mapper that refines it, and the
/// migration cost per task and hop.
struct Refinement<'a> {
    mapper: &'a MultilevelMapper,
    given: Mapping,
    path: &'a PathBuf,
    migration: u64,
}

/// The refinement `--initial` asks for, with `--migration-cost`; refuses what the run
/// would refuse.
fn refinement<'a>(
    a: &'a MapArgs,
    algorithm: &'a AlgorithmSpec,
    problem: &Problem,
) -> Result<Option<Refinement<'a>>> {
    let migration = a.migration_cost.unwrap_or(0);
    let Some(path) = &a.initial else {
        if a.migration_cost.is_some() {
            bail!("--migration-cost applies to --initial only");
        }
        return Ok(None);
    };
    let Some(mapper) = algorithm.get::<MultilevelMapper>() else {
        bail!(
            "--initial applies to -A multilevel, not to {}",
            algorithm.name()
        );
    };
    if mapper.population >= 2 {
        bail!(taskmap::multilevel::remap::REFINE_ONE_RUN);
    }
    let k = problem.arch.pe_count();
    let given = Mapping::read_for(path, problem.graph.num_tasks(), k)?;
    if migration > taskmap::multilevel::remap::MAX_MIGRATION_COST {
        bail!("--migration-cost must be at most 2^32, not {migration}");
    }
    taskmap::multilevel::remap::effective_migration_cost(problem, migration)
        .context("--migration-cost")?;
    Ok(Some(Refinement {
        mapper,
        given,
        path,
        migration,
    }))
}

/// Prints the configuration of the run (`--dump-config`).
fn dump_config(
    a: &MapArgs,
    target: String,
    alg_text: &str,
    algorithm: &AlgorithmSpec,
) -> Result<u8> {
    let graph = a
        .input
        .graph
        .as_ref()
        .map_or(EXAMPLE_NAME.to_string(), |p| p.display().to_string());
    let path = |p: Option<&PathBuf>| p.map(|p| p.display().to_string());
    print_json(&MapConfig {
        graph: &graph,
        task_weights: path(a.input.task_weights.as_ref()),
        target,
        nodes: a.nodes.nodes.clone(),
        algorithm: alg_text,
        parameters: algorithm.parameters(),
        seed: a.run.seed,
        threads: a.run.threads,
        epsilon: a.constraints.epsilon.unwrap_or(0.03),
        capacities: path(a.constraints.capacities.as_ref()).or(a.constraints.capacity.clone()),
        fixed: path(a.fixed.as_ref()),
        initial: path(a.initial.as_ref()),
        migration_cost: a.migration_cost,
        output: path(a.output.as_ref()),
        time_limit: a.time_limit,
        rankfile: path(a.launch.rankfile.as_ref()),
        slurm_hostfile: path(a.launch.slurm_hostfile.as_ref()),
        permutation: path(a.launch.permutation.as_ref()),
        congestion: a.congestion,
        html: path(a.html.as_ref()),
    })?;
    Ok(0)
}

/// Warns of hard capacities no mapping can respect, and of a time limit the algorithm
/// ignores.
fn warn_before_run(a: &MapArgs, algorithm: &AlgorithmSpec, problem: &Problem, refining: bool) {
    for s in problem.capacity_shortfalls() {
        errln!(
            "taskmap: warning: infeasible: the PEs can carry {} of vertex weight {} in all but the tasks weigh {}; mapping anyway",
            s.capacity, s.constraint, s.weight
        );
    }
    // --initial always runs a V-cycle, which the limit can end
    if a.time_limit.is_some() && !algorithm.honours_deadline() && !refining {
        if algorithm.get::<MultilevelMapper>().is_some() {
            errln!("taskmap: warning: --time-limit ends the multilevel mapper's V-cycles, memetic mode and annealing, and this configuration has none; it is ignored");
        } else {
            errln!(
                "taskmap: warning: --time-limit applies to pnp and multilevel; {} ignores it",
                algorithm.name()
            );
        }
    }
}

/// Writes the mapping (`-o`), the launch files and the HTML page, the files all or none.
fn write_outputs(
    a: &MapArgs,
    machine: Option<&taskmap::Machine>,
    mapping: &Mapping,
    page: Option<String>,
    quiet: bool,
) -> Result<()> {
    let mut files = a.launch.files(machine, mapping);
    if let (Some(path), Some(page)) = (&a.html, page) {
        files.push((path.clone(), page.into_bytes()));
    }
    match &a.output {
        Some(out) => {
            let text = mapping.to_text(MappingFormat::from_path(out));
            files.insert(0, (out.clone(), text.into_bytes()));
        }
        // Said to a person at a terminal only: scripts read the report.
        None if !quiet && std::io::stderr().is_terminal() => {
            errln!(
                "taskmap: the mapping is not written: -o FILE writes it, -o - to standard output"
            );
        }
        None => {}
    }
    let refs: Vec<(&std::path::Path, &[u8])> = files
        .iter()
        .map(|(p, b)| (p.as_path(), b.as_slice()))
        .collect();
    write_files(&refs).context("writing the mapping")?;
    Ok(())
}

/// The congestion of `mapping` when `asked`; a warning when the target has no routes.
pub(crate) fn congestion_of(
    asked: bool,
    problem: &Problem,
    mapping: &Mapping,
) -> Option<taskmap::congestion::Congestion> {
    if !asked {
        return None;
    }
    let c = taskmap::congestion::congestion(&problem.graph, problem.arch.as_ref(), mapping);
    if c.is_none() {
        warn_no_congestion(problem.arch.as_ref());
    }
    c
}

/// The warning when a target gives no congestion.
pub(crate) fn warn_no_congestion(arch: &dyn taskmap::Architecture) {
    errln!(
        "taskmap: warning: no congestion: target {} has no links to route over (a distance matrix) or more than 2^24 link ids",
        arch.spec()
    );
}
