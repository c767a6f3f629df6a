//! `taskmap hetero`: a heterogeneous program on a multi-cluster (De Giusti et al.'s TTIGHa
//! model): allocates its tasks with MATEHa, HEFT, PEFT or our searches (or reads an
//! allocation), simulates it with SIMULHa, and optionally finds the best allocation by
//! exhaustive search; shows the TTIGHa graph's matrices (`--show-model`) and writes the
//! model as a `.ttig` file (`--write-ttig`). Also `taskmap gen ttig`'s generator.

use std::path::PathBuf;

use crate::output::num;
use anyhow::{bail, Result};
use clap::Args;
use taskmap::hetero::allocate::HeteroSpec;
use taskmap::hetero::gen::{try_random_ttigha, RandomTtigha};
use taskmap::hetero::heft::heft;
use taskmap::hetero::io::order::read_order;
use taskmap::hetero::io::stg::read_stg_program;
use taskmap::hetero::io::ttig::{read_platform, read_ttigha, ttigha_text};
use taskmap::hetero::io::wfcommons::read_workflow_program;
use taskmap::hetero::mateha::{exhaustive_observed, Optimum};
use taskmap::hetero::report::{gap, matrices_json, report_json, ttigha_matrices, TtigMatrices};
use taskmap::hetero::simulha::{schedule_svg, Schedule, Simulator};
use taskmap::hetero::ttigha::{HeteroProgram, Ttigha, TOO_LONG_COMM};
use taskmap::registry::{self, Family};
use taskmap::{Mapping, MappingFormat, PeId};

/// Arguments of `taskmap hetero`.
#[derive(Args, Debug)]
pub struct HeteroArgs {
    /// Model file: PROCTYPE, COMM, LINK, TASK, SUBTASK and SEND lines (docs/formats.md).
    #[arg(
        short,
        long,
        value_name = "MODEL",
        required_unless_present_any = ["model", "stg", "workflow"],
        conflicts_with_all = ["model", "stg", "workflow"]
    )]
    pub graph: Option<PathBuf>,
    /// The model file as a positional argument (the old spelling of `-g`).
    #[arg(hide = true, conflicts_with_all = ["graph", "stg", "workflow"])]
    pub model: Option<PathBuf>,
    /// Read the program from a Kasahara STG task graph instead (a task of one sub-task per
    /// STG task, a message per arc; the dummy entry and exit left out); needs --platform.
    #[arg(long, requires = "platform", conflicts_with = "workflow")]
    pub stg: Option<PathBuf>,
    /// Read the program from a workflow instead, Pegasus DAX (XML) or WfCommons (JSON),
    /// plain or gzip (a task of one sub-task per job, its runtime as time; a message per
    /// parent-child pair carrying the files the parent writes and the child reads); needs
    /// --platform.
    #[arg(long, visible_alias = "dax", requires = "platform")]
    pub workflow: Option<PathBuf>,
    /// For --workflow: read negative file sizes and runtimes as 0 instead of refusing the
    /// file.
    #[arg(long, requires = "workflow", conflicts_with_all = ["stg", "graph", "model"])]
    pub negative_as_zero: bool,
    /// Platform file for --stg and --workflow: PROCTYPE, COMM and LINK lines.
    #[arg(long, conflicts_with_all = ["graph", "model"])]
    pub platform: Option<PathBuf>,
    /// For --stg and --workflow: the time factor of each processor type, comma-separated
    /// (default 1 for every type).
    #[arg(long, value_delimiter = ',')]
    pub slowness: Vec<f64>,
    /// For --stg: bytes of every message (default 1000).
    #[arg(long, requires = "stg", conflicts_with_all = ["workflow", "graph", "model"])]
    pub bytes: Option<u64>,
    /// Allocation file (a processor per task, one per line, or Scotch .map) to simulate
    /// instead of computing one.
    #[arg(short, long, conflicts_with = "algorithm")]
    pub mapping: Option<PathBuf>,
    /// Allocation algorithm of the hetero family, `name[,key=value...]` (default mateha):
    /// mateha, mateha-ls, heft, heft-ls or peft; mateha-ls and heft-ls take the keys kicks,
    /// budget, seed and rounds (`taskmap algorithms mateha-ls`).
    #[arg(short = 'A', long, value_parser = parse_spec)]
    pub algorithm: Option<String>,
    /// The key kicks of mateha-ls and heft-ls (old spelling).
    #[arg(long, hide = true)]
    pub kicks: Option<usize>,
    /// The key budget of mateha-ls and heft-ls (old spelling).
    #[arg(long, hide = true)]
    pub budget: Option<u64>,
    /// The key seed of mateha-ls and heft-ls (old spelling).
    #[arg(short, long, hide = true)]
    pub seed: Option<u64>,
    /// Run every algorithm of the hetero family (default keys) and rank them by the
    /// simulated final time (SIMULHa's makespan, each in its own order), with the time
    /// taken; with --optimal, each one's gap to the optimum of the default order.
    #[arg(long, conflicts_with_all = ["mapping", "algorithm", "order", "output", "svg", "write_order", "write_ttig", "show_model", "kicks", "budget", "seed"])]
    pub rank: bool,
    /// Also search every allocation (up to interchangeable processors) for the least final
    /// time, and compare (in the default order, so not with --order).
    #[arg(long, conflicts_with = "order")]
    pub optimal: bool,
    /// Threads of the --optimal search (1 to 1024; the optimum does not depend on them).
    #[arg(short, long, default_value_t = 1)]
    pub threads: usize,
    /// Most allocations --optimal may simulate.
    #[arg(long, default_value_t = 100_000_000)]
    pub limit: u64,
    /// Write the allocation (the algorithm's, or the given one) to this file, a processor per
    /// line.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Order file: line p lists the sub-tasks processor p runs, strictly in that order
    /// (default: HEFT's planned order for heft, peft and heft-ls; otherwise an idle
    /// processor runs its ready sub-task of highest priority, see --priority).
    #[arg(long)]
    pub order: Option<PathBuf>,
    /// Priority of the default order, in which an idle processor starts its ready sub-task
    /// of highest priority: file (the program's order, the paper's) or rank (HEFT's upward
    /// rank, a critical-path priority); every algorithm and the simulation use it.
    #[arg(long, default_value = "file")]
    pub priority: String,
    /// Write the order each processor ran its sub-tasks in, as an order file for --order
    /// (with -o and --mapping it replays the same schedule, HEFT's too).
    #[arg(long)]
    pub write_order: Option<PathBuf>,
    /// Write the schedule as an SVG picture (a row per processor, a bar per sub-task) to
    /// this file.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Write the TTIGHa model the run used (read from the model file, or built from --stg
    /// or --workflow and --platform) as a .ttig file, which -g reads back to the same model.
    #[arg(long, value_name = "FILE")]
    pub write_ttig: Option<PathBuf>,
    /// Show the TTIGHa graph's matrices in the report: w_p(T) per task and processor type;
    /// per ordered pair of adjacent tasks its messages and bytes c, C_sd per communication
    /// type and p_sd per pair of processor types (the first 40 rows of each table in the
    /// human report, unless --full; every row in JSON, as the member "ttigha").
    #[arg(long)]
    pub show_model: bool,
    /// With --show-model: every row of the human report's tables.
    #[arg(long, requires = "show_model")]
    pub full: bool,
    /// Report format: human, json or csv.
    #[arg(short, long, value_enum, default_value = "human")]
    pub format: crate::output::OutputFormat,
}

impl HeteroArgs {
    /// The model file, given as `-g` or as the positional old spelling.
    fn model_file(&self) -> Option<&PathBuf> {
        self.graph.as_ref().or(self.model.as_ref())
    }
}

/// Runs `taskmap hetero`.
pub fn cmd_hetero(a: HeteroArgs, quiet: bool) -> Result<u8> {
    crate::output::claim_stdout(&[
        a.output.as_ref(),
        a.svg.as_ref(),
        a.write_order.as_ref(),
        a.write_ttig.as_ref(),
    ]);
    // The threads of --optimal, checked before any work.
    let ctx = taskmap::RunContext::new(0).with_threads(a.threads)?;
    let inputs = [
        a.model_file(),
        a.stg.as_ref(),
        a.workflow.as_ref(),
        a.platform.as_ref(),
        a.mapping.as_ref(),
        a.order.as_ref(),
    ];
    let outputs = [
        ("-o", a.output.as_ref()),
        ("--svg", a.svg.as_ref()),
        ("--write-order", a.write_order.as_ref()),
        ("--write-ttig", a.write_ttig.as_ref()),
    ];
    for out in outputs.iter().filter_map(|o| o.1) {
        crate::output::refuse_overwriting_inputs(out, &inputs)?;
    }
    crate::output::refuse_same_outputs(&outputs)?;
    let spec = algorithm(&a)?;
    if !a.slowness.is_empty() && a.stg.is_none() && a.workflow.is_none() {
        bail!("--slowness applies to --stg and --workflow only (a model file gives its own times)");
    }
    let (model, model_path) = load_model(&a)?;
    // The model as read (before --priority changes its order), checked before any work:
    // a model the format cannot hold stops the run with nothing written.
    let ttig_text = match &a.write_ttig {
        Some(_) => Some(ttigha_text(&model).map_err(|e| anyhow::anyhow!("--write-ttig: {e}"))?),
        None => None,
    };
    let mut model = model;
    match a.priority.as_str() {
        "file" => {}
        "rank" => model.program.rank = heft(&model).priority,
        other => bail!("unknown --priority \"{other}\" (file, rank)"),
    }
    let model = model;
    if a.rank {
        return rank(&a, &model, &model_path, &ctx, quiet);
    }
    // The TTIGHa graph as MATEHa reads it.
    let matrices = a.show_model.then(|| ttigha_matrices(&model));
    let (pr, pl) = (&model.program, &model.platform);
    // HEFT plans an order with its allocation; the simulation follows it.
    let mut planned_order = None;
    let (alloc, source, levels) = match &a.mapping {
        Some(path) => {
            let m = Mapping::read_for(path, pr.tasks(), pl.processors() as u32)?;
            let v: Vec<u32> = m.as_slice().iter().map(|p| p.0).collect();
            (v, "file", taskmap::hetero::mateha::levels(pr))
        }
        None => {
            let r = spec.allocate(&model);
            if a.order.is_none() {
                planned_order = r.order;
            }
            (r.alloc, r.algorithm, r.levels)
        }
    };
    let order = match &a.order {
        Some(path) => Some(read_order(path, pr, pl.processors(), &alloc)?),
        None => planned_order,
    };
    let schedule = Simulator::new(&model)
        .schedule(&alloc, order.as_deref())
        .map_err(|e| match &a.order {
            Some(path) => anyhow::anyhow!("{}: {e}", path.display()),
            None => e.into(),
        })?;
    let optimum = if a.optimal {
        let progress = crate::output::Bar::start("hetero", !quiet);
        taskmap::Progress::phase(&*progress, "exhaustive search");
        let optimum = exhaustive_observed(&model, a.limit, ctx.pool.as_ref(), &*progress)?;
        progress.finish();
        Some(optimum)
    } else {
        None
    };
    let order_text = match &a.write_order {
        Some(_) => Some(order_file_text(pr, &schedule)?),
        None => None,
    };
    // All the outputs or none: a run that cannot write one leaves none behind.
    let svg_text = a.svg.as_ref().map(|_| schedule_svg(&model, &schedule));
    let alloc_text = a.output.as_ref().map(|out| {
        Mapping::new(alloc.iter().map(|&p| PeId(p)).collect())
            .to_text(MappingFormat::from_path(out))
    });
    let outputs: Vec<(&std::path::Path, &[u8])> = [
        (&a.svg, &svg_text),
        (&a.output, &alloc_text),
        (&a.write_order, &order_text),
        (&a.write_ttig, &ttig_text),
    ]
    .into_iter()
    .filter_map(|(path, text)| Some((path.as_deref()?, text.as_deref()?.as_bytes())))
    .collect();
    crate::output::write_files(&outputs)?;
    print_report(
        &a,
        &model,
        &model_path,
        source,
        &levels,
        &alloc,
        &schedule,
        optimum.as_ref(),
        matrices.as_ref(),
    )?;
    Ok(0)
}

/// One row of `--rank`.
#[derive(serde::Serialize)]
struct RankRow {
    algorithm: String,
    makespan: f64,
    time_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    gap_percent: Option<f64>,
}

/// `--rank`: every hetero-family algorithm, least simulated final time first.
fn rank(
    a: &HeteroArgs,
    model: &Ttigha,
    model_path: &str,
    ctx: &taskmap::RunContext,
    quiet: bool,
) -> Result<u8> {
    let optimum = if a.optimal {
        let progress = crate::output::Bar::start("hetero", !quiet);
        taskmap::Progress::phase(&*progress, "exhaustive search");
        let o = exhaustive_observed(model, a.limit, ctx.pool.as_ref(), &*progress)?;
        progress.finish();
        Some(o)
    } else {
        None
    };
    let mut rows = Vec::new();
    for name in registry::names(&[Family::Hetero]) {
        let spec: HeteroSpec = name.parse()?;
        let t0 = std::time::Instant::now();
        let r = spec.allocate(model);
        let schedule = Simulator::new(model).schedule(&r.alloc, r.order.as_deref())?;
        let time_ms = t0.elapsed().as_secs_f64() * 1e3;
        rows.push(RankRow {
            algorithm: name.to_string(),
            makespan: schedule.makespan,
            time_ms,
            gap_percent: optimum.as_ref().map(|o| gap(schedule.makespan, o.makespan)),
        });
    }
    rows.sort_by(|x, y| x.makespan.total_cmp(&y.makespan));
    if a.format != crate::output::OutputFormat::Human {
        crate::output::print_data(
            &serde_json::json!({
                "model": model_path,
                "rows": rows,
                "optimal": optimum.as_ref().map(|o| serde_json::json!({
                    "makespan": o.makespan,
                    "evaluated": o.evaluated,
                    "alloc": o.alloc,
                })),
            }),
            a.format,
        )?;
        return Ok(0);
    }
    outln!(
        "{}: {} tasks, {} processors; ranked by the simulated final time",
        model_path,
        model.program.tasks(),
        model.platform.processors()
    );
    let s = |x: &str| x.to_string();
    let mut header = vec![s("algorithm"), s("makespan")];
    if optimum.is_some() {
        header.push(s("gap_%"));
    }
    header.push(s("time_ms"));
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut row = vec![r.algorithm.clone(), num(r.makespan)];
            if let Some(g) = r.gap_percent {
                row.push(format!("{g:.2}"));
            }
            row.push(format!("{:.3}", r.time_ms));
            row
        })
        .collect();
    crate::output::print_table(&header, &table, 1, table.len(), "algorithms");
    if let Some(o) = &optimum {
        outln!(
            "optimal makespan {} ({} allocations simulated, in the default order; HEFT's own order may beat it)",
            num(o.makespan),
            o.evaluated
        );
    }
    Ok(0)
}

/// `taskmap gen ttig SPEC`: the random model of `spec` (`RandomTtigha::parse_spec`) with
/// the seed of `-s` or of the key seed= (0 by default, not both), written to `out` as a
/// .ttig file (`-` for standard output).
pub(crate) fn gen_ttig(spec: &str, seed: Option<u64>, out: &std::path::Path) -> Result<Ttigha> {
    let (params, key) = RandomTtigha::parse_spec(spec)?;
    let seed = match (seed, key) {
        (Some(_), Some(_)) => bail!(
            "the seed is given both as -s/--seed and as the key seed= of \"{spec}\"; give one"
        ),
        (s, k) => s.or(k).unwrap_or(0),
    };
    let txt = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("txt"));
    if let Some(f) = taskmap_graph::GraphFormat::from_path(out).filter(|_| !txt) {
        bail!(
            "{}: a heterogeneous program is written as a .ttig file, not as a {} graph; give a .ttig path",
            out.display(),
            f
        );
    }
    let model = try_random_ttigha(&params, seed)
        .map_err(|e| anyhow::anyhow!("ttig spec \"{spec}\": {e}"))?;
    let text = ttigha_text(&model)?;
    crate::output::write_file(out, text.as_bytes())?;
    Ok(model)
}

/// `-A`'s value: a hetero-family algorithm with valid keys.
fn parse_spec(text: &str) -> Result<String, String> {
    text.parse::<HeteroSpec>()
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
}

/// The algorithm of `-A` (default mateha) with the old flags `--kicks`, `--budget` and
/// `--seed` added as its keys (a key given both ways is refused).
fn algorithm(a: &HeteroArgs) -> Result<HeteroSpec> {
    let text = a.algorithm.as_deref().unwrap_or("mateha");
    let flags = [
        ("kicks", a.kicks.map(|v| v.to_string())),
        ("budget", a.budget.map(|v| v.to_string())),
        ("seed", a.seed.map(|v| v.to_string())),
    ];
    let Some(full) = crate::input::spec_with_flags(text, &flags) else {
        return Ok(text.parse()?);
    };
    let (row, _) = registry::split(text, &[Family::Hetero])?;
    if !matches!(row.name, "mateha-ls" | "heft-ls") {
        bail!("--kicks, --budget and --seed apply to -A mateha-ls and heft-ls only");
    }
    Ok(full.parse()?)
}

/// The program and platform: a model file, or a program file (STG, workflow) with a
/// platform file; and the name of the file the program came from.
fn load_model(a: &HeteroArgs) -> Result<(Ttigha, String)> {
    Ok(match (a.model_file(), &a.stg, &a.workflow, &a.platform) {
        (Some(m), _, _, _) => (read_ttigha(m)?, m.display().to_string()),
        (None, stg, workflow, Some(plat)) => {
            let platform = read_platform(plat)?;
            let slowness = if a.slowness.is_empty() {
                vec![1.0; platform.types()]
            } else {
                a.slowness.clone()
            };
            // an overflow through the messages is the platform's COMM lines as much as the
            // program's: name the platform file too
            let blame = |e: taskmap::Error| {
                let platform_too =
                    matches!(&e, taskmap::Error::Parse { message, .. } if message == TOO_LONG_COMM);
                let e = anyhow::Error::new(e);
                if platform_too {
                    e.context(format!("with the platform {}", plat.display()))
                } else {
                    e
                }
            };
            match (stg, workflow) {
                (Some(f), _) => (
                    read_stg_program(f, platform, &slowness, a.bytes.unwrap_or(1000))
                        .map_err(blame)?,
                    f.display().to_string(),
                ),
                (None, Some(f)) => (
                    read_workflow_program(f, platform, &slowness, a.negative_as_zero)
                        .map_err(blame)?,
                    f.display().to_string(),
                ),
                (None, None) => bail!("give -g/--graph MODEL, --stg FILE or --workflow FILE"),
            }
        }
        _ => bail!("give -g/--graph MODEL, or --stg FILE or --workflow FILE with --platform FILE"),
    })
}

/// The text of the order file (`--write-order`) of `schedule`, made before any output is
/// written: a sub-task name it cannot hold stops the run with nothing written.
fn order_file_text(pr: &HeteroProgram, schedule: &Schedule) -> Result<String> {
    let unreadable = |n: &&String| {
        n.is_empty()
            || n.starts_with('\u{feff}')
            || n.contains(|c: char| c.is_whitespace() || c == '#')
    };
    if let Some(n) = pr.subtask_names.iter().find(unreadable) {
        bail!(
            "--write-order: the sub-task name \"{n}\" is empty, holds white space or '#', or starts with a byte-order mark, which an order file cannot hold"
        );
    }
    let text: String = schedule
        .order
        .iter()
        .map(|list| {
            let names: Vec<&str> = list
                .iter()
                .map(|&s| pr.subtask_names[s as usize].as_str())
                .collect();
            names.join(" ") + "\n"
        })
        .collect();
    Ok(text)
}

/// Prints the report: the schedule of `alloc`, and the optimum when searched.
fn print_report(
    a: &HeteroArgs,
    model: &Ttigha,
    model_path: &str,
    source: &str,
    levels: &[u32],
    alloc: &[u32],
    schedule: &Schedule,
    optimum: Option<&Optimum>,
    matrices: Option<&TtigMatrices>,
) -> Result<()> {
    if a.format != crate::output::OutputFormat::Human {
        let mut v = report_json(model, model_path, source, levels, alloc, schedule, optimum);
        if let Some(m) = matrices {
            v["ttigha"] = matrices_json(model, m);
        }
        crate::output::print_data(&v, a.format)?;
    } else {
        let tables = matrices.map(|m| (m, a.full));
        print_human(model, model_path, source, levels, alloc, schedule, tables);
        if let Some(o) = optimum {
            // The optimum is in the default order; HEFT's own order may beat it.
            let g = gap(schedule.makespan, o.makespan);
            outln!(
                "optimal       {} ({} allocations simulated, in the default order): {} is {:.2} % {} it",
                num(o.makespan),
                o.evaluated,
                label(source),
                g.abs(),
                if g < 0.0 { "below" } else { "above" }
            );
            let names: Vec<String> = o.alloc.iter().map(|p| p.to_string()).collect();
            outln!("              allocation {}", names.join(" "));
        }
    }
    Ok(())
}

/// How the report names where the allocation came from.
fn label(source: &str) -> &'static str {
    match source {
        "file" => "the given allocation",
        "mateha-ls" => "mateha-ls",
        "heft" => "HEFT",
        "peft" => "PEFT",
        "heft-ls" => "heft-ls",
        _ => "MATEHa",
    }
}

fn print_human(
    model: &Ttigha,
    path: &str,
    source: &str,
    levels: &[u32],
    alloc: &[u32],
    s: &Schedule,
    matrices: Option<(&TtigMatrices, bool)>,
) {
    let (pr, pl) = (&model.program, &model.platform);
    let count = pl.type_counts();
    let kinds: Vec<String> = pl
        .type_names
        .iter()
        .zip(&count)
        .map(|(n, c)| format!("{c} {n}"))
        .collect();
    outln!(
        "model         {}: {} tasks, {} sub-tasks, {} message{}; {} processors ({})",
        path,
        pr.tasks(),
        pr.subtasks(),
        pr.messages.len(),
        if pr.messages.len() == 1 { "" } else { "s" },
        pl.processors(),
        kinds.join(", ")
    );
    if let Some((m, full)) = matrices {
        print_matrices(model, m, full);
    }
    outln!("allocation    {}", label(source));
    let w = pr
        .task_names
        .iter()
        .map(|n| n.len())
        .max()
        .unwrap_or(4)
        .max(4);
    outln!("  {:<w$}  level  processor", "task", w = w);
    for t in 0..pr.tasks() {
        let p = alloc[t] as usize;
        outln!(
            "  {:<w$}  {:>5}  {} ({})",
            pr.task_names[t],
            levels[t],
            p,
            pl.type_names[pl.proc_type[p] as usize],
            w = w
        );
    }
    outln!("simulation    SIMULHa");
    outln!("  processor  type        busy     waiting         end  order");
    for p in 0..pl.processors() {
        let order: Vec<&str> = s.order[p]
            .iter()
            .map(|&x| pr.subtask_names[x as usize].as_str())
            .collect();
        let line = format!(
            "  {:>9}  {:<8} {:>8} {:>11} {:>11}  {}",
            p,
            pl.type_names[pl.proc_type[p] as usize],
            num(s.busy(p)),
            num(s.waiting(p)),
            num(s.end(p)),
            order.join(" ")
        );
        outln!("{}", line.trim_end());
    }
    outln!("final time    {}", num(s.makespan));
}

/// The TTIGHa graph's tables (`--show-model`): `w_p(T)`, then the pairs of adjacent tasks
/// with `c`, `C_sd` per communication type and `p_sd` per pair of processor types; at most
/// [`crate::output::SHOWN_ROWS`] rows each unless `full`.
fn print_matrices(model: &Ttigha, m: &TtigMatrices, full: bool) {
    let names = &model.program.task_names;
    let limit = if full {
        usize::MAX
    } else {
        crate::output::SHOWN_ROWS
    };
    let table =
        |header: Vec<String>, rows: Vec<Vec<String>>, left: usize, total: usize, what: &str| {
            crate::output::print_table(&header, &rows, left, total, what)
        };
    outln!("TTIGHa graph  w_p(T): time of each task on each processor type (eq. 1)");
    let mut header = vec!["task".to_string()];
    header.extend(m.types.iter().cloned());
    let rows =
        m.w.iter()
            .enumerate()
            .take(limit)
            .map(|(t, w)| {
                let mut r = vec![names[t].clone()];
                r.extend(w.iter().map(|&x| num(x)));
                r
            })
            .collect();
    table(header, rows, 1, m.w.len(), "tasks");
    outln!(
        "              per ordered pair of adjacent tasks: c = messages and bytes from T_i to T_j (eq. 2);"
    );
    outln!(
        "              C[k] = C_sd(T_i,T_j) for s != d joined by communication type k (eq. 3; 0 when s = d);"
    );
    outln!(
        "              p[a,b] = p_sd(T_i,T_j) for s of type a, d of type b (eq. 4: TP_sd / w_d(T_j))"
    );
    let mut header = vec![
        "T_i".to_string(),
        "T_j".to_string(),
        "messages".to_string(),
        "bytes".to_string(),
    ];
    header.extend(m.comms.iter().map(|k| format!("C[{k}]")));
    for a in &m.types {
        for b in &m.types {
            header.push(format!("p[{a},{b}]"));
        }
    }
    let rows = m
        .edges
        .iter()
        .take(limit)
        .map(|e| {
            let mut r = vec![
                names[e.from as usize].clone(),
                names[e.to as usize].clone(),
                e.messages.to_string(),
                e.bytes.to_string(),
            ];
            r.extend(e.comm_time.iter().map(|&x| num(x)));
            r.extend(e.concurrency.iter().flatten().map(|&x| num(x)));
            r
        })
        .collect();
    table(header, rows, 2, m.edges.len(), "pairs");
}
