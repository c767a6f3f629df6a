//! `taskmap map`: map a task graph onto a target.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use taskmap::multilevel::MultilevelMapper;
use taskmap::registry::Family;
use taskmap::report::{render_map_report, InitialReport, MapReport};
use taskmap::{evaluate, AlgorithmSpec, Mapper, Mapping, MappingFormat, PeId, RunContext};

use crate::input::*;
use crate::output::*;

#[derive(Args)]
pub(crate) struct MapArgs {
    #[command(flatten)]
    pub(crate) input: GraphInput,
    /// Target architecture: a spec (torus:16x16, mesh:8x8x8, hypercube:6, complete:64,
    /// tree:4:8:6/1:10:100, graph:FILE, matrix:FILE, ...) or a Scotch target file.
    #[arg(short, long, value_name = "SPEC")]
    pub(crate) arch: Option<String>,
    /// Mapping algorithm, `name[,key=value...]` (see `taskmap algorithms`).
    #[arg(short = 'A', long, default_value = "multilevel")]
    pub(crate) algorithm: String,
    /// Preset of the algorithm (the multilevel mapper's: fast, default or strong), the
    /// configuration its keys edit.
    #[arg(short = 'P', long, value_name = "PRESET", value_parser = clap::builder::PossibleValuesParser::new(preset_names()))]
    pub(crate) preset: Option<String>,
    /// Fixed tasks: a Scotch fixed-vertex file (a count, then `task pe` lines, as `gmap -f`)
    /// or one line per task with its PE or -1; task ids 0-based (drb and multilevel).
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
    pub(crate) target: String,
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
}

pub(crate) fn cmd_map(a: MapArgs, quiet: bool) -> Result<u8> {
    claim_stdout(&[a.output.as_ref()]);
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
    let algorithm = parse_algorithm(&a.algorithm, a.preset.as_deref())?;
    // The report names the algorithm as given, with the preset given apart.
    let alg_text = match &a.preset {
        Some(p) => format!("{},preset={}", a.algorithm, p),
        None => a.algorithm.clone(),
    };
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
            let Some(ml) = algorithm.get::<MultilevelMapper>() else {
                bail!(
                    "--initial applies to -A multilevel, not to {}",
                    algorithm.name()
                );
            };
            if ml.population >= 2 {
                bail!(taskmap::multilevel::remap::REFINE_ONE_RUN);
            }
            let given = Mapping::read_for(path, problem.graph.num_tasks(), k)?;
            Some((ml, given, path))
        }
    };
    let migration = a.migration_cost.unwrap_or(0);
    if a.migration_cost.is_some() && refine.is_none() {
        bail!("--migration-cost applies to --initial only");
    }
    if migration > taskmap::multilevel::remap::MAX_MIGRATION_COST {
        bail!("--migration-cost must be at most 2^32, not {migration}");
    }
    if refine.is_some() {
        // refused here, before --dump-config, as the run would refuse it
        taskmap::multilevel::remap::effective_migration_cost(&problem, migration)
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
            algorithm: &alg_text,
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
    // --initial always runs a V-cycle, which the limit can end
    if a.time_limit.is_some() && !algorithm.honours_deadline() && refine.is_none() {
        if algorithm.get::<MultilevelMapper>().is_some() {
            errln!("taskmap: warning: --time-limit ends the multilevel mapper's V-cycles, memetic mode and annealing, and this configuration has none; it is ignored");
        } else {
            errln!(
                "taskmap: warning: --time-limit applies to pnp and multilevel; {} ignores it",
                algorithm.name()
            );
        }
    }
    let t0 = Instant::now();
    ctx.deadline = a
        .time_limit
        .map(|secs| t0 + std::time::Duration::from_secs_f64(secs));
    let progress = Bar::start(algorithm.name(), !quiet);
    ctx.progress = progress.clone();
    let mapping = match &refine {
        Some((ml, given, _)) => {
            ml.refine_mapping_migrating(&problem, given, migration, &mut ctx)?
        }
        None => algorithm.map(&problem, &mut ctx)?,
    };
    progress.finish();
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
    match &a.output {
        Some(out) => {
            let text = mapping.to_text(MappingFormat::from_path(out));
            write_file(out, text.as_bytes()).context("writing the mapping")?;
        }
        // Said to a person at a terminal only: scripts read the report.
        None if !quiet && std::io::stderr().is_terminal() => {
            errln!(
                "taskmap: the mapping is not written: -o FILE writes it, -o - to standard output"
            );
        }
        None => {}
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
        OutputFormat::Json | OutputFormat::Csv => print_data(&report, a.format)?,
    }
    Ok(if feasible { 0 } else { 1 })
}
