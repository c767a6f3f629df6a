//! `taskmap amap` and `taskmap delay`: the Algorithm Mapper of Houstis et al. (1989) on a
//! shared-memory machine, and its interconnect delay models.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use serde_json::json;
use taskmap::hetero::io::stg::read_stg_program;
use taskmap::hetero::io::wfcommons::read_workflow_program;
use taskmap::hetero::report::gap;
use taskmap::hetero::ttigha::Platform;
use taskmap::houstis::amg::read_amg_model;
use taskmap::houstis::bus_queue::simulate;
use taskmap::houstis::exhaustive::{Exhaustive, Optimum};
use taskmap::houstis::frame::{at_frame, frame_range, frame_sweep, FrameRow};
use taskmap::houstis::interconnect::{DelayModel, DelayReading, Interconnect};
use taskmap::houstis::machine::Machine;
use taskmap::houstis::mapper::{evaluate_assignment, memory_excess, AmapResult};
use taskmap::houstis::monte_carlo::{MonteCarlo, MonteCarloSummary};
use taskmap::houstis::precedence::{Deterministic, PrecedenceGraph};
use taskmap::houstis::report::{bounds, preprocessor, report_json, Preprocessor};
use taskmap::houstis::spec::PrecedenceSpec;
use taskmap::registry::{self, Family};
use taskmap::{Mapping, MappingFormat, PeId};

/// Arguments of `taskmap amap`.
#[derive(Args, Debug)]
pub struct AmapArgs {
    /// Graph file (.amg): MODULE and LINK lines (docs/formats.md).
    #[arg(
        short,
        long,
        value_name = "GRAPH",
        required_unless_present_any = ["model", "stg", "workflow"],
        conflicts_with_all = ["model", "stg", "workflow"]
    )]
    pub graph: Option<PathBuf>,
    /// The graph file as a positional argument (the old spelling of `-g`).
    #[arg(hide = true, conflicts_with_all = ["graph", "stg", "workflow"])]
    pub model: Option<PathBuf>,
    /// Read a Kasahara STG task graph instead (AND logic, a link per arc with --itus ITUs;
    /// the dummy entry and exit left out).
    #[arg(long, conflicts_with = "workflow")]
    pub stg: Option<PathBuf>,
    /// Read a workflow instead, Pegasus DAX (XML) or WfCommons (JSON), plain or gzip (a
    /// link per parent-child pair carrying its files, --itu-bytes bytes per ITU).
    #[arg(long, visible_alias = "dax")]
    pub workflow: Option<PathBuf>,
    /// For --stg: ITUs of every arc (default 1).
    #[arg(long)]
    pub itus: Option<u64>,
    /// For --workflow: bytes per ITU (default 1000).
    #[arg(long)]
    pub itu_bytes: Option<f64>,
    /// For --workflow: read negative file sizes and runtimes as 0 instead of refusing the
    /// file.
    #[arg(long)]
    pub negative_as_zero: bool,
    /// Number of processors.
    #[arg(short = 'k', long)]
    pub processors: u32,
    /// Interconnect: bus (single bus, common memory), dual-bus (single bus, dual-port
    /// memories), multibus:B or multibus:B:M (B buses, M memories), banyan, ideal.
    #[arg(long, default_value = "dual-bus")]
    pub system: String,
    /// Transfer time of one ITU without contention.
    #[arg(long, default_value_t = 1.0)]
    pub itu_time: f64,
    /// Delay model of the interconnect: queue (every system as a closed queue, the delay
    /// by Little's law) or paper (the paper's printed formulas, repaired where the print
    /// is damaged; docs/algorithm-mapper.md).
    #[arg(long, value_name = "MODEL", default_value = "queue", value_parser = delay_reading())]
    pub delay_model: DelayReading,
    /// Memory of a processor (default unbounded).
    #[arg(long)]
    pub memory: Option<f64>,
    /// Relative processor speeds (a module of time m runs in m / speed): one value for
    /// all, or comma-separated values, `S:N` standing for N processors of speed S, adding
    /// up to the processors (e.g. `4:2,1:6`). Default 1.
    #[arg(long)]
    pub speeds: Option<String>,
    /// The key parallelism of -A (old spelling).
    #[arg(long, hide = true, conflicts_with = "no_parallelism")]
    pub parallelism: Option<u32>,
    /// The key no_parallelism=1 of -A (old spelling).
    #[arg(long, hide = true)]
    pub no_parallelism: bool,
    /// The key tolerance of -A (old spelling).
    #[arg(long, hide = true)]
    pub tolerance: Option<f64>,
    /// Algorithm of the precedence family, `name[,key=value...]`: alloc, the paper's ALLOC
    /// with its time-frame search and parallelism reduction, or alloc-ls, ours: the same for
    /// k, k/2, ... 1 processors, the best schedule of these, then a local search of the
    /// simulated schedule's length. Keys (`taskmap algorithms --family precedence`):
    /// parallelism, no_parallelism, tolerance and samples; alloc-ls also budget (e.g.
    /// `alloc-ls,samples=8,budget=1000000`).
    #[arg(short = 'A', long, default_value = "alloc", value_parser = parse_spec)]
    pub algorithm: String,
    /// Score this assignment instead of mapping: a processor per module, one per line, in
    /// module order, or Scotch's "index processor" lines (as -o writes). Exit code 1 when
    /// it overfills a processor's memory.
    #[arg(short, long, alias = "assignment", conflicts_with_all = ["algorithm", "budget", "parallelism", "no_parallelism", "tolerance", "samples"])]
    pub mapping: Option<PathBuf>,
    /// The key budget of -A alloc-ls (old spelling).
    #[arg(long, hide = true)]
    pub budget: Option<u64>,
    /// The key samples of -A (old spelling).
    #[arg(long, hide = true)]
    pub samples: Option<usize>,
    /// Write the processor of every module to this file, one per line (Scotch's
    /// "index processor" lines for a name ending in .map).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Threads that cluster a round's frames (1 to 1024; the assignment does not depend
    /// on them).
    #[arg(short, long, default_value_t = 1)]
    pub threads: usize,
    /// Show the preprocessor's outputs: per module m_i, the expected executions f_i and
    /// m'_i = m_i f_i (M'); per pair of linked modules l'_ij (L'); and the pairs that may
    /// run in parallel (Δ). The first 40 rows of each table in the human report unless
    /// --full; every row in JSON, as the member "preprocessor".
    #[arg(long)]
    pub show_model: bool,
    /// Cluster at this time frame T instead of searching for the smallest (ALLOC, steps 2
    /// and 3 as the mapper takes them). -A alloc only.
    #[arg(long, value_name = "T", conflicts_with_all = ["mapping", "sweep"])]
    pub frame: Option<f64>,
    /// Tabulate clusters, delay and T_REAL over N frames instead of mapping (after the
    /// paper's figure 4): `N` frames in geometric steps from the smallest frame that holds
    /// every module to one that holds the whole program, `FROM:TO:N` over a range. Adds
    /// the frame the mapper's own step 1 stops at. -A alloc only.
    #[arg(long, value_name = "N|FROM:TO:N", conflicts_with_all = ["mapping", "monte_carlo", "output", "show_model"])]
    pub sweep: Option<String>,
    /// Run every algorithm of the precedence family (alloc, alloc-ls; default keys, -t
    /// threads) and rank them by T_REAL, with T_PAR, speed-up and time; with --optimal,
    /// each one's gap to the optimum.
    #[arg(long, conflicts_with_all = ["mapping", "frame", "sweep", "output", "monte_carlo", "show_model", "algorithm", "parallelism", "no_parallelism", "tolerance", "samples", "budget"])]
    pub rank: bool,
    /// Also simulate every assignment (up to processors of equal speed) for the least
    /// T_REAL, and compare: for small graphs (see --limit).
    #[arg(long, conflicts_with = "sweep")]
    pub optimal: bool,
    /// Most assignments --optimal may simulate (it refuses larger graphs).
    #[arg(long, default_value_t = 100_000_000, requires = "optimal")]
    pub limit: u64,
    /// Also run the stochastic program this many times on the assignment (Monte Carlo):
    /// the mean T_REAL with a 95 % confidence interval, against the expected-value reading
    /// of G' (docs/algorithm-mapper.md, "Monte Carlo T_REAL"). At least 2.
    #[arg(long, value_name = "RUNS")]
    pub monte_carlo: Option<usize>,
    /// Seed of the --monte-carlo runs.
    #[arg(long, default_value_t = 0, requires = "monte_carlo")]
    pub seed: u64,
    /// With --show-model: every row of the human report's tables.
    #[arg(long, requires = "show_model")]
    pub full: bool,
    /// Report format: human, json or csv.
    #[arg(short, long, value_enum, default_value = "human")]
    pub format: crate::output::OutputFormat,
}

impl AmapArgs {
    /// The graph file, given as `-g` or as the positional old spelling.
    fn model_file(&self) -> Option<&PathBuf> {
        self.graph.as_ref().or(self.model.as_ref())
    }
}

/// Reads the graph the arguments name, with its `G'`.
fn read_graph(a: &AmapArgs) -> Result<(PrecedenceGraph, Deterministic, String)> {
    if a.itus.is_some() && a.stg.is_none() {
        bail!("--itus applies to --stg only");
    }
    if (a.itu_bytes.is_some() || a.negative_as_zero) && a.workflow.is_none() {
        bail!("--itu-bytes and --negative-as-zero apply to --workflow only");
    }
    // STG and workflow readers build a program for a platform; one processor is enough.
    let one = || Platform::new(vec!["pe".into()], vec![0], Vec::new(), |_, _| 0);
    let (g, path) = match (a.model_file(), &a.stg, &a.workflow) {
        (Some(m), _, _) => {
            let (g, det) = read_amg_model(m)?;
            return Ok((g, det, m.display().to_string()));
        }
        (None, Some(f), _) => {
            let t = read_stg_program(f, one(), &[1.0], a.itus.unwrap_or(1))?;
            (
                PrecedenceGraph::from_program(&t.program, 1.0),
                f.display().to_string(),
            )
        }
        (None, None, Some(f)) => {
            let itu_bytes = a.itu_bytes.unwrap_or(1000.0);
            if !(itu_bytes.is_finite() && itu_bytes > 0.0) {
                bail!("--itu-bytes must be a positive number, not {itu_bytes}");
            }
            let t = read_workflow_program(f, one(), &[1.0], a.negative_as_zero)?;
            (
                PrecedenceGraph::from_program(&t.program, itu_bytes),
                f.display().to_string(),
            )
        }
        _ => bail!("give -g/--graph GRAPH, --stg FILE or --workflow FILE"),
    };
    let det = g
        .deterministic()
        .map_err(|e| anyhow::anyhow!("{path}: {}", e.message))?;
    Ok((g, det, path))
}

/// Runs `taskmap amap`.
pub fn cmd_amap(a: AmapArgs, quiet: bool) -> Result<u8> {
    crate::output::claim_stdout(&[a.output.as_ref()]);
    // The threads of the frame search, checked before any work.
    let ctx = taskmap::RunContext::new(0).with_threads(a.threads)?;
    let json = a.format != crate::output::OutputFormat::Human;
    if let Some(out) = &a.output {
        crate::output::refuse_overwriting_inputs(
            out,
            &[
                a.model_file(),
                a.stg.as_ref(),
                a.workflow.as_ref(),
                a.mapping.as_ref(),
            ],
        )?;
    }
    let spec = algorithm(&a)?;
    let interconnect: Interconnect = a.system.parse()?;
    let mut machine = Machine::new(a.processors, interconnect, a.itu_time, a.memory)?
        .with_delay_reading(a.delay_model)?;
    if let Some(list) = &a.speeds {
        machine = machine.with_speeds(parse_speeds(list, a.processors)?)?;
    }
    let (g, det, path) = read_graph(&a)?;
    if (a.frame.is_some() || a.sweep.is_some()) && spec.name() != "alloc" {
        bail!(
            "--frame and --sweep run ALLOC: give -A alloc (with its keys), not {}",
            spec.name()
        );
    }
    let at = |e: taskmap::Error| anyhow::anyhow!("{path}: {e}");
    if a.rank {
        return rank(&a, (&g, &det), &machine, &ctx, &path);
    }
    if let Some(list) = &a.sweep {
        let (from, to, n) = parse_sweep(list)?;
        return sweep(&a, (&g, &det), &spec, &machine, &ctx, &path, (from, to, n));
    }
    let (r, label) = match (&a.mapping, a.frame) {
        (Some(file), _) => {
            let given = Mapping::read_for(file, g.modules(), a.processors)?;
            let processor: Vec<u32> = given.as_slice().iter().map(|p| p.0).collect();
            let r = evaluate_assignment(&g, &det, &machine, processor).map_err(at)?;
            (r, format!("assignment {}", file.display()))
        }
        (None, Some(t)) => {
            let parallel = spec.parallel(&g, &det).map_err(at)?;
            let params = spec.alloc().params(ctx.pool.as_ref());
            let r = at_frame(&g, &det, parallel.as_ref(), &machine, &params, t).map_err(at)?;
            (r, spec.name().to_string())
        }
        (None, None) => {
            let progress = crate::output::Bar::start(spec.name(), !quiet);
            let r = spec
                .run(&g, &det, &machine, ctx.pool.as_ref(), &*progress)
                .map_err(at)?;
            progress.finish();
            (r, spec.name().to_string())
        }
    };
    let mc = monte_carlo(&a, (&g, &det), &r, &machine, &ctx, &path)?;
    let opt = optimum(&a, (&g, &det), &machine, &ctx, &path)?;
    let extras = (mc.as_ref(), opt.as_ref());
    report(&a, (&g, &det), &r, extras, &machine, &path, &label, json)?;
    // a given assignment may overfill a memory: exit code 1.
    let excess = a
        .mapping
        .as_ref()
        .and_then(|file| memory_excess(&g, &machine, &r.processor).map(|x| (file, x)));
    Ok(match excess {
        Some((file, (p, need))) => {
            errln!(
                "taskmap: warning: {}: processor {p} (id {} in the report) holds modules of memory {need}, above its {}",
                file.display(),
                p + 1,
                machine.memory.unwrap_or(f64::INFINITY)
            );
            1
        }
        None => 0,
    })
}

/// The first line of the `--rank` and `--sweep` tables: the graph and the machine.
fn header(g: &PrecedenceGraph, machine: &Machine, path: &str) -> String {
    format!(
        "{}: {} modules; {} processors, {}, ITU time {}",
        path,
        g.modules(),
        machine.processors,
        machine.interconnect,
        machine.itu_time
    )
}

/// The machine in the `--rank` and `--sweep` JSON.
fn machine_json(machine: &Machine) -> serde_json::Value {
    json!({
        "processors": machine.processors,
        "system": machine.interconnect.to_string(),
        "itu_time": machine.itu_time,
        "delay_model": machine.model.reading.to_string(),
    })
}

/// One row of `--rank`: an algorithm's result, or why it gave none.
#[derive(serde::Serialize)]
struct RankRow {
    algorithm: String,
    t_real: Option<f64>,
    t_par: Option<f64>,
    speedup: Option<f64>,
    processors_used: Option<usize>,
    time_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    gap_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// `--rank`: every precedence-family algorithm, best `T_REAL` first.
fn rank(
    a: &AmapArgs,
    (g, det): (&PrecedenceGraph, &Deterministic),
    machine: &Machine,
    ctx: &taskmap::RunContext,
    path: &str,
) -> Result<u8> {
    let opt = optimum(a, (g, det), machine, ctx, path)?;
    let best = opt.as_ref().map(|o| o.result.t_real);
    let mut rows: Vec<RankRow> = Vec::new();
    for name in registry::names(&[Family::Precedence]) {
        let spec: PrecedenceSpec = name.parse()?;
        let t0 = std::time::Instant::now();
        let r = spec.run(g, det, machine, ctx.pool.as_ref(), &taskmap::NoProgress);
        let time_ms = t0.elapsed().as_secs_f64() * 1e3;
        rows.push(match r {
            Ok(r) => RankRow {
                algorithm: name.to_string(),
                t_real: Some(r.t_real),
                t_par: Some(r.t_par),
                speedup: Some(r.speedup()),
                processors_used: Some(r.loads.iter().filter(|l| !l.modules.is_empty()).count()),
                time_ms,
                gap_percent: best.map(|b| gap(r.t_real, b)),
                error: None,
            },
            Err(e) => RankRow {
                algorithm: name.to_string(),
                t_real: None,
                t_par: None,
                speedup: None,
                processors_used: None,
                time_ms,
                gap_percent: None,
                error: Some(e.to_string()),
            },
        });
    }
    rows.sort_by(|x, y| {
        let key = |r: &RankRow| r.t_real.unwrap_or(f64::INFINITY);
        key(x).total_cmp(&key(y))
    });
    if a.format != crate::output::OutputFormat::Human {
        crate::output::print_data(
            &json!({
                "graph": path,
                "machine": machine_json(machine),
                "rows": rows,
                "optimal": opt.as_ref().map(|o| json!({
                    "t_real": o.result.t_real,
                    "evaluated": o.evaluated,
                    "processor_of": o.result.processor,
                })),
            }),
            a.format,
        )?;
    } else {
        outln!("{}; ranked by T_REAL", header(g, machine, path));
        let s = |x: &str| x.to_string();
        let num = crate::output::num;
        let mut header = vec![s("algorithm"), s("T_REAL"), s("T_PAR"), s("S"), s("used")];
        if best.is_some() {
            header.push(s("gap_%"));
        }
        header.push(s("time_ms"));
        let table: Vec<Vec<String>> = rows
            .iter()
            .map(|r| match (&r.error, r.t_real) {
                (None, Some(t)) => {
                    let mut row = vec![
                        r.algorithm.clone(),
                        num(t),
                        num(r.t_par.unwrap_or(0.0)),
                        format!("{:.4}", r.speedup.unwrap_or(0.0)),
                        r.processors_used.unwrap_or(0).to_string(),
                    ];
                    if let Some(g) = r.gap_percent {
                        row.push(format!("{g:.2}"));
                    }
                    row.push(format!("{:.3}", r.time_ms));
                    row
                }
                (e, _) => {
                    let mut row = vec![
                        r.algorithm.clone(),
                        format!("failed: {}", e.as_deref().unwrap_or("no result")),
                    ];
                    row.resize(header.len(), String::new());
                    row
                }
            })
            .collect();
        crate::output::print_table(&header, &table, 1, table.len(), "algorithms");
        if let Some(o) = &opt {
            outln!(
                "optimal T_REAL {} ({} assignments simulated)",
                num(o.result.t_real),
                o.evaluated
            );
        }
    }
    Ok(if rows.iter().all(|r| r.error.is_some()) {
        2
    } else {
        0
    })
}

/// `--sweep`'s value: `N` (frames from the smallest that holds every module to one that
/// holds the program) or `FROM:TO:N`; `None` ends stand for those defaults.
fn parse_sweep(text: &str) -> Result<(Option<f64>, Option<f64>, usize)> {
    let parts: Vec<&str> = text.split(':').map(str::trim).collect();
    let count = |x: &str| -> Result<usize> {
        match x.parse::<usize>() {
            Ok(n) if (2..=1000).contains(&n) => Ok(n),
            _ => bail!(
                "--sweep: the number of frames must be a whole number from 2 to 1000, not \"{x}\""
            ),
        }
    };
    let frame = |x: &str| -> Result<f64> {
        match x.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
            _ => bail!("--sweep: a frame must be a number above 0, not \"{x}\""),
        }
    };
    match parts.as_slice() {
        [n] => Ok((None, None, count(n)?)),
        [from, to, n] => {
            let (f, t) = (frame(from)?, frame(to)?);
            if f >= t {
                bail!("--sweep: FROM ({f}) must be below TO ({t})");
            }
            Ok((Some(f), Some(t), count(n)?))
        }
        _ => bail!("--sweep takes N or FROM:TO:N, not \"{text}\""),
    }
}

/// One row of the sweep table and JSON: a frame's outcome, and whether it is the mapper's
/// own step-1 frame.
#[derive(serde::Serialize)]
struct SweepRow {
    #[serde(flatten)]
    row: FrameRow,
    searched: bool,
}

/// `--sweep`: ALLOC at evenly spread frames and at the mapper's own step-1 frame, as a
/// table (or JSON rows).
fn sweep(
    a: &AmapArgs,
    (g, det): (&PrecedenceGraph, &Deterministic),
    spec: &PrecedenceSpec,
    machine: &Machine,
    ctx: &taskmap::RunContext,
    path: &str,
    (from, to, n): (Option<f64>, Option<f64>, usize),
) -> Result<u8> {
    let at = |e: taskmap::Error| anyhow::anyhow!("{path}: {e}");
    let (lo, hi) = frame_range(det, g, machine);
    let (from, to) = (from.unwrap_or(lo), to.unwrap_or(hi));
    // geometric steps: as many frames near the small ones, where the clusters change.
    let ratio = (to / from).powf(1.0 / (n - 1) as f64);
    let frames: Vec<f64> = (0..n)
        .map(|i| {
            if i + 1 == n {
                to
            } else {
                from * ratio.powi(i as i32)
            }
        })
        .collect();
    let parallel = spec.parallel(g, det).map_err(at)?;
    let params = spec.alloc().params(ctx.pool.as_ref());
    let mut rows: Vec<SweepRow> = frame_sweep(g, det, parallel.as_ref(), machine, &params, &frames)
        .map_err(at)?
        .into_iter()
        .map(|row| SweepRow {
            searched: false,
            row,
        })
        .collect();
    // the mapper's own result, at the frame its step 1 stopped at (none without Δ).
    let mapped = spec
        .run(g, det, machine, ctx.pool.as_ref(), &taskmap::NoProgress)
        .map_err(at)?;
    let searched = mapped.step1_frame;
    if let Some(t) = searched {
        let place = rows.partition_point(|r| r.row.frame < t);
        rows.insert(
            place,
            SweepRow {
                row: FrameRow::of(&mapped, true),
                searched: true,
            },
        );
    }
    let best = rows
        .iter()
        .min_by(|x, y| x.row.t_real.total_cmp(&y.row.t_real))
        .map(|r| (r.row.frame, r.row.t_real));
    if a.format != crate::output::OutputFormat::Human {
        crate::output::print_data(
            &json!({
                "graph": path,
                "machine": machine_json(machine),
                "t_seq": mapped.t_seq,
                "searched_frame": searched,
                "rows": rows,
            }),
            a.format,
        )?;
        return Ok(0);
    }
    outln!(
        "{}; ALLOC at {} frames from {} to {}",
        header(g, machine, path),
        rows.len(),
        crate::output::num(rows.first().map_or(from, |r| r.row.frame)),
        crate::output::num(rows.last().map_or(to, |r| r.row.frame))
    );
    let s = |x: &str| x.to_string();
    let num = crate::output::num;
    let yes = |b: bool| s(if b { "yes" } else { "no" });
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                format!("{}{}", num(r.row.frame), if r.searched { " *" } else { "" }),
                r.row.clusters.to_string(),
                yes(r.row.fits),
                yes(r.row.reduced),
                num(r.row.t_par),
                format!("{:.4}", r.row.delay),
                num(r.row.t_real),
                format!("{:.4}", r.row.speedup),
            ]
        })
        .collect();
    crate::output::print_table(
        &[
            s("T"),
            s("clusters"),
            s("fit"),
            s("step 2"),
            s("T_PAR"),
            s("delay"),
            s("T_REAL"),
            s("S"),
        ],
        &table,
        0,
        table.len(),
        "frames",
    );
    if let Some(t) = searched {
        outln!("* the frame the mapper's step 1 stopped at ({})", num(t));
    }
    if let Some((t, real)) = best {
        outln!("least T_REAL {} at T = {}", num(real), num(t));
    }
    Ok(0)
}

/// `--delay-model`'s values, queue or paper.
fn delay_reading() -> impl clap::builder::TypedValueParser<Value = DelayReading> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(DelayReading::ALL.map(DelayReading::name))
        .map(|s| s.parse::<DelayReading>().expect("a listed delay model"))
}

/// `-A`'s value: a precedence-family algorithm with valid keys.
fn parse_spec(text: &str) -> Result<String, String> {
    text.parse::<PrecedenceSpec>()
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
}

/// The algorithm of `-A` with the old flags `--parallelism`, `--no-parallelism`,
/// `--tolerance`, `--samples` and `--budget` added as its keys (a key given both ways is
/// refused).
fn algorithm(a: &AmapArgs) -> Result<PrecedenceSpec> {
    let flags = [
        ("parallelism", a.parallelism.map(|v| v.to_string())),
        ("no_parallelism", a.no_parallelism.then(|| "1".to_string())),
        ("tolerance", a.tolerance.map(|v| v.to_string())),
        ("samples", a.samples.map(|v| v.to_string())),
        ("budget", a.budget.map(|v| v.to_string())),
    ];
    let Some(full) = crate::input::spec_with_flags(&a.algorithm, &flags) else {
        return Ok(a.algorithm.parse()?);
    };
    let (row, _) = registry::split(&a.algorithm, &[Family::Precedence])?;
    if a.budget.is_some() && row.name != "alloc-ls" {
        bail!("--budget applies to -A alloc-ls only");
    }
    Ok(full.parse()?)
}

/// The `--monte-carlo` runs of the program on the assignment of `r`, when asked for.
fn monte_carlo(
    a: &AmapArgs,
    (g, det): (&PrecedenceGraph, &Deterministic),
    r: &AmapResult,
    machine: &Machine,
    ctx: &taskmap::RunContext,
    path: &str,
) -> Result<Option<MonteCarloSummary>> {
    let Some(samples) = a.monte_carlo else {
        return Ok(None);
    };
    let mc = MonteCarlo {
        samples,
        seed: a.seed,
        ..MonteCarlo::default()
    };
    mc.validate()
        .map_err(|e| anyhow::anyhow!("--monte-carlo: {e}"))?;
    Ok(Some(
        mc.run(g, det, machine, &r.processor, ctx.pool.as_ref())
            .map_err(|e| anyhow::anyhow!("{path}: {e}"))?,
    ))
}

/// The `--optimal` search, when asked for.
fn optimum(
    a: &AmapArgs,
    (g, det): (&PrecedenceGraph, &Deterministic),
    machine: &Machine,
    ctx: &taskmap::RunContext,
    path: &str,
) -> Result<Option<Optimum>> {
    if !a.optimal {
        return Ok(None);
    }
    let search = Exhaustive { limit: a.limit };
    Ok(Some(
        search
            .run(g, det, machine, ctx.pool.as_ref())
            .map_err(|e| anyhow::anyhow!("{path}: {e}"))?,
    ))
}

/// Writes the assignment (`-o`) and prints the report.
#[allow(clippy::too_many_arguments)]
fn report(
    a: &AmapArgs,
    (g, det): (&PrecedenceGraph, &Deterministic),
    r: &AmapResult,
    (mc, opt): (Option<&MonteCarloSummary>, Option<&Optimum>),
    machine: &Machine,
    path: &str,
    label: &str,
    json: bool,
) -> Result<()> {
    if let Some(out) = &a.output {
        let text = Mapping::new(r.processor.iter().map(|&p| PeId(p)).collect())
            .to_text(MappingFormat::from_path(out));
        crate::output::write_file(out, text.as_bytes())?;
    }
    let pre = a.show_model.then(|| preprocessor(g, det));
    if json {
        let mut v = report_json(g, r, machine, path, label);
        if let Some(o) = v.as_object_mut() {
            if let Some(p) = &pre {
                o.insert("preprocessor".into(), serde_json::to_value(p)?);
            }
            if let Some(m) = mc {
                o.insert("monte_carlo".into(), serde_json::to_value(m)?);
            }
            if let Some(best) = opt {
                o.insert(
                    "optimal".into(),
                    json!({
                        "t_real": best.result.t_real,
                        "evaluated": best.evaluated,
                        "processor_of": best.result.processor,
                        "gap_percent": gap(r.t_real, best.result.t_real),
                    }),
                );
            }
        }
        crate::output::print_data(&v, a.format)?;
    } else {
        print_report(g, r, machine, path, label, a.mapping.is_some());
        if let Some(best) = opt {
            let list: Vec<String> = best
                .result
                .processor
                .iter()
                .map(|p| (p + 1).to_string())
                .collect();
            outln!(
                "optimal T_REAL {:.6} ({} assignments simulated): this one is {:.2} % above it",
                best.result.t_real,
                best.evaluated,
                gap(r.t_real, best.result.t_real)
            );
            outln!("        processor (id) of every module: {}", list.join(" "));
        }
        if let Some(m) = mc {
            print_monte_carlo(g, r, m);
        }
        if let Some(p) = &pre {
            print_preprocessor(g, p, a.full);
        }
    }
    Ok(())
}

/// The `--monte-carlo` lines: the runs' T_REAL against the expected-value reading, and the
/// modules whose mean executions differ from f.
fn print_monte_carlo(g: &PrecedenceGraph, r: &AmapResult, m: &MonteCarloSummary) {
    outln!(
        "Monte Carlo: {} runs (seed {}): T_REAL mean {:.6}, 95 % CI [{:.6}, {:.6}], std {:.6}, min {:.6}, max {:.6}",
        m.samples,
        m.seed,
        m.mean,
        m.ci95[0],
        m.ci95[1],
        m.std_dev,
        m.min,
        m.max
    );
    outln!(
        "             the expected-value reading (G' once, T_REAL above) is {:.6}, {:+.2} % of the mean",
        r.t_real,
        100.0 * (r.t_real - m.mean) / m.mean
    );
    if !m.gaps.is_empty() {
        let shown: Vec<String> = m
            .gaps
            .iter()
            .take(10)
            .map(|x| {
                format!(
                    "{} (f {}, runs {})",
                    g.names[x.module as usize],
                    crate::output::num(x.f),
                    crate::output::num(x.sampled)
                )
            })
            .collect();
        outln!(
            "             {} {} ran a mean number of times unlike f: {}{}",
            m.gaps.len(),
            if m.gaps.len() == 1 {
                "module"
            } else {
                "modules"
            },
            shown.join(", "),
            if m.gaps.len() > 10 { ", ..." } else { "" }
        );
    }
}

/// The preprocessor's tables (`--show-model`): M', L' and Δ, at most
/// [`crate::output::SHOWN_ROWS`] rows each unless `full`.
fn print_preprocessor(g: &PrecedenceGraph, p: &Preprocessor, full: bool) {
    let limit = if full {
        usize::MAX
    } else {
        crate::output::SHOWN_ROWS
    };
    let s = |x: &str| x.to_string();
    let num = crate::output::num;
    outln!("preprocessor  per module: m_i, the expected executions f_i, m'_i = m_i f_i (M')");
    let rows: Vec<Vec<String>> = p
        .modules
        .iter()
        .take(limit)
        .map(|m| {
            vec![
                m.name.clone(),
                num(m.m),
                num(m.f),
                num(m.m_prime),
                num(m.memory),
            ]
        })
        .collect();
    crate::output::print_table(
        &[s("module"), s("m_i"), s("f_i"), s("m'_i"), s("memory")],
        &rows,
        1,
        p.modules.len(),
        "modules",
    );
    outln!("              per pair of linked modules: l'_ij = f_i p_ij g_ij + f_j p_ji g_ji (L', ITUs)");
    let name = |i: u32| g.names[i as usize].clone();
    let rows: Vec<Vec<String>> = p
        .links
        .iter()
        .take(limit)
        .map(|l| vec![name(l.a), name(l.b), num(l.l_prime)])
        .collect();
    crate::output::print_table(
        &[s("i"), s("j"), s("l'_ij")],
        &rows,
        2,
        p.links.len(),
        "pairs",
    );
    match &p.parallel {
        Some(pairs) => {
            outln!(
                "              Δ: {} {} of modules may run in parallel",
                pairs.len(),
                if pairs.len() == 1 { "pair" } else { "pairs" }
            );
            let rows: Vec<Vec<String>> = pairs
                .iter()
                .take(limit)
                .map(|&(i, j)| vec![name(i), name(j)])
                .collect();
            if !pairs.is_empty() {
                crate::output::print_table(&[s("i"), s("j")], &rows, 2, pairs.len(), "pairs");
            }
        }
        None => outln!("              Δ: not built (too many modules)"),
    }
}

/// `--speeds`: one speed for all `k` processors, or comma-separated `S` and `S:N` items
/// adding up to `k`.
fn parse_speeds(list: &str, k: u32) -> Result<Vec<f64>> {
    let number = |x: &str| -> Result<f64> {
        match x.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
            _ => bail!(
                "--speeds: a speed must be a number above 0, not \"{}\"",
                x.trim()
            ),
        }
    };
    let items: Vec<&str> = list.split(',').collect();
    if items.len() == 1 && !items[0].contains(':') {
        return Ok(vec![number(items[0])?; k as usize]);
    }
    let mut speeds = Vec::new();
    for item in items {
        let (speed, count) = match item.split_once(':') {
            Some((s, n)) => match n.trim().parse::<u64>() {
                Ok(n) if n >= 1 => (number(s)?, n),
                _ => bail!(
                    "--speeds: \"{}\" needs a whole count of processors of at least 1 after ':'",
                    item.trim()
                ),
            },
            None => (number(item)?, 1u64),
        };
        if (speeds.len() as u64).saturating_add(count) > u64::from(k) {
            bail!("--speeds gives more than the {k} processors");
        }
        speeds.extend(std::iter::repeat_n(speed, count as usize));
    }
    if speeds.len() != k as usize {
        bail!(
            "--speeds gives {} processors, not the {k} of -k",
            speeds.len()
        );
    }
    Ok(speeds)
}

/// A speed for the report: at most 4 decimals, or in scientific notation when tiny or
/// huge.
fn show_speed(s: f64) -> String {
    if (1e-3..1e6).contains(&s) {
        let t = format!("{s:.4}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{s:.3e}")
    }
}

/// The human report; `given`: the assignment was read, not made (no steps ran).
fn print_report(
    g: &PrecedenceGraph,
    r: &AmapResult,
    m: &Machine,
    path: &str,
    algorithm: &str,
    given: bool,
) {
    outln!(
        "{}: {} modules, {} links; {} processors, {}, ITU time {}; {}",
        path,
        g.modules(),
        g.links.len(),
        m.processors,
        m.interconnect,
        m.itu_time,
        algorithm
    );
    match r.step1 {
        _ if given => {
            outln!("steps 1-3: skipped (the assignment is given)")
        }
        Some((target, frame, count)) => outln!(
            "step 1: {} clusters at T = {:.6} (assigned parallelism {})",
            count,
            frame,
            target
        ),
        None => outln!("step 1: skipped (no parallelism constraint)"),
    }
    if r.reduced {
        outln!("step 2: parallelism reduced (without Δ)");
    }
    if m.mixed_speeds() || m.speeds[0] != 1.0 {
        print_speeds(m);
    }
    let used = r.loads.iter().filter(|l| !l.modules.is_empty()).count();
    outln!("processors used: {} of {}", used, m.processors);
    outln!(
        "delay per ITU {:.6} ITU times (delay model {}, load rho {:.6}, network utilisation {:.2} %, model AP {:.4})",
        r.delay,
        m.model.reading,
        r.rho,
        100.0 * r.utilisation,
        r.model_active
    );
    outln!();
    print_utilisation(g, r, m);
    outln!();
    print_speedup(r);
}

/// The report's line of processor speeds, as --speeds takes them: runs of equal speeds as
/// S:N (a summary when there are more than 8 runs).
fn print_speeds(m: &Machine) {
    let mut runs: Vec<(f64, usize)> = Vec::new();
    for &s in &m.speeds {
        match runs.last_mut() {
            Some((x, n)) if *x == s => *n += 1,
            _ => runs.push((s, 1)),
        }
    }
    let list: Vec<String> = runs
        .iter()
        .map(|&(s, n)| {
            if n == 1 {
                show_speed(s)
            } else {
                format!("{}:{n}", show_speed(s))
            }
        })
        .collect();
    if list.len() <= 8 {
        outln!(
            "processor speeds: {} (T_seq on the fastest)",
            list.join(",")
        );
    } else {
        let slowest = m.slowest();
        outln!(
            "processor speeds: {} runs from {} to {} (listed by -f json; T_seq on the fastest)",
            list.len(),
            show_speed(slowest),
            show_speed(m.fastest())
        );
    }
}

/// The report's table of processor utilisation: total and processing time of every
/// processor as a share of the frame, its modules, and the averages.
fn print_utilisation(g: &PrecedenceGraph, r: &AmapResult, m: &Machine) {
    let mixed = m.mixed_speeds();
    outln!(
        "*** PROCESSOR UTILIZATION *** (time frame T_PAR = {:.6})",
        r.t_par
    );
    // a speed column when the processors differ
    let speed = |p: usize| {
        if mixed {
            format!("{:>9}  ", show_speed(m.speeds[p]))
        } else {
            String::new()
        }
    };
    outln!(
        "{:>4}  {}{:>9}  {:>9}  modules",
        "id",
        if mixed { "    speed  " } else { "" },
        "total (%)",
        "proc (%)"
    );
    let (mut tot, mut pro) = (0.0, 0.0);
    for (p, l) in r.loads.iter().enumerate() {
        let t = 100.0 * (l.processing + l.communication) / r.t_par;
        let u = 100.0 * l.processing / r.t_par;
        tot += t;
        pro += u;
        let mut names: Vec<&str> = l
            .modules
            .iter()
            .take(30)
            .map(|&i| g.names[i as usize].as_str())
            .collect();
        if l.modules.len() > 30 {
            names.push("...");
        }
        outln!(
            "{:>4}  {}{:>9.2}  {:>9.2}  {}{}",
            p + 1,
            speed(p),
            t,
            u,
            names.join(" "),
            if l.modules.len() > 30 {
                format!(" ({} in all)", l.modules.len())
            } else {
                String::new()
            }
        );
    }
    let k = r.loads.len() as f64;
    outln!(
        "{:>4}  {}{:>9.2}  {:>9.2}",
        "avg",
        if mixed { " ".repeat(11) } else { String::new() },
        tot / k,
        pro / k
    );
}

/// The report's times, speed-up and efficiency, and the bounds they keep.
fn print_speedup(r: &AmapResult) {
    let k = r.loads.len() as f64;
    let (s, ap) = (r.speedup(), r.active());
    outln!(
        "T_seq {:.6}  T_PAR {:.6}  T_REAL {:.6}",
        r.t_seq,
        r.t_par,
        r.t_real
    );
    outln!(
        "AP {:.4}  speed-up S = T_seq/T_REAL {:.4}  efficiency S/k {:.4}",
        ap,
        s,
        s / k
    );
    outln!(
        "1 <= S = {:.4} <= T_seq/T_PAR = {:.4} <= AP = {:.4}: {}",
        s,
        r.t_seq / r.t_par,
        ap,
        bounds(r).1
    );
}

/// Arguments of `taskmap delay`.
#[derive(Args, Debug)]
pub struct DelayArgs {
    /// Interconnect: bus, dual-bus, multibus:B, multibus:B:M, banyan, ideal.
    #[arg(long)]
    pub system: String,
    /// Number of processors.
    #[arg(short = 'k', long)]
    pub processors: u32,
    /// Delay model: queue (every system as a closed queue, the delay by Little's law) or
    /// paper (the paper's printed formulas, repaired where the print is damaged;
    /// docs/algorithm-mapper.md).
    #[arg(long, value_name = "MODEL", default_value = "queue", value_parser = delay_reading())]
    pub delay_model: DelayReading,
    /// Loads ρ = λ/μ to tabulate, comma-separated (10^-9 to 10^6).
    #[arg(long, value_delimiter = ',', default_values_t = [0.01, 0.05, 0.1, 0.2, 0.5, 1.0])]
    pub rho: Vec<f64>,
    /// Also simulate the queue itself for this many transfers per load, and compare.
    #[arg(long)]
    pub simulate: Option<u64>,
    /// Seed of the simulation.
    #[arg(short, long, default_value_t = 0)]
    pub seed: u64,
    /// Report format: human or json.
    #[arg(short, long, value_enum, default_value = "human")]
    pub format: crate::output::OutputFormat,
}

/// One load of `taskmap delay`: the model's values, and the simulated queue's with
/// `--simulate`.
#[derive(serde::Serialize)]
struct DelayRow {
    rho: f64,
    /// AP, the mean number of active processors.
    active: f64,
    utilisation: f64,
    /// D, the mean delay of a transfer, in units of the transfer time.
    delay: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    simulated_active: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    simulated_delay: Option<f64>,
}

/// Runs `taskmap delay`.
pub fn cmd_delay(a: DelayArgs) -> Result<u8> {
    let ic: Interconnect = a.system.parse()?;
    let model = DelayModel::with_reading(ic, a.processors, a.delay_model)?;
    if let Some(&r) = a
        .rho
        .iter()
        .find(|r| !(r.is_finite() && **r >= 1e-9 && **r <= 1e6))
    {
        bail!("--rho takes loads from 10^-9 to 10^6, not {r:?}");
    }
    if let Some(n) = a.simulate {
        if !(10..=1_000_000_000).contains(&n) {
            bail!("--simulate takes 10 to 10^9 transfers, not {n}");
        }
        if a.processors > 1024 {
            bail!(
                "--simulate takes at most 1024 processors, not {}",
                a.processors
            );
        }
        if ic == Interconnect::Ideal {
            bail!("the ideal interconnect has nothing to simulate");
        }
    }
    let rows: Vec<DelayRow> = a
        .rho
        .iter()
        .map(|&rho| {
            let s = model.analyse(rho);
            let q = a
                .simulate
                .map(|n| simulate(ic, a.processors, rho, n, a.seed));
            DelayRow {
                rho,
                active: s.active,
                utilisation: s.utilisation,
                delay: s.delay,
                simulated_active: q.as_ref().map(|q| q.active),
                simulated_delay: q.as_ref().map(|q| q.delay),
            }
        })
        .collect();
    if a.format == crate::output::OutputFormat::Csv {
        crate::output::print_csv(&serde_json::to_value(&rows)?)?;
        return Ok(0);
    }
    if a.format == crate::output::OutputFormat::Json {
        crate::output::print_json(&json!({
            "system": ic.to_string(),
            "delay_model": a.delay_model.to_string(),
            "processors": a.processors,
            "simulated_transfers": a.simulate,
            "seed": a.seed,
            "rows": rows,
        }))?;
        return Ok(0);
    }
    outln!(
        "{} with {} processors, delay model {}",
        ic,
        a.processors,
        a.delay_model
    );
    match a.simulate {
        None => outln!("{:>10}  {:>10}  {:>10}  {:>10}", "rho", "AP", "u", "D"),
        Some(_) => outln!(
            "{:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}",
            "rho",
            "AP",
            "u",
            "D",
            "AP (sim)",
            "D (sim)"
        ),
    }
    for r in &rows {
        match (r.simulated_active, r.simulated_delay) {
            (Some(qa), Some(qd)) => outln!(
                "{:>10.4}  {:>10.4}  {:>10.4}  {:>10.4}  {:>10.4}  {:>10.4}",
                r.rho,
                r.active,
                r.utilisation,
                r.delay,
                qa,
                qd
            ),
            _ => outln!(
                "{:>10.4}  {:>10.4}  {:>10.4}  {:>10.4}",
                r.rho,
                r.active,
                r.utilisation,
                r.delay
            ),
        }
    }
    Ok(0)
}
