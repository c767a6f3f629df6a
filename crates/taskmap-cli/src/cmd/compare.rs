//! `taskmap compare`: several algorithms on one problem, tabulated.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use taskmap::{evaluate_on, AlgorithmSpec, RunContext};

use taskmap::report::CompareRow;

use crate::input::*;
use crate::output::*;

#[derive(Args)]
pub(crate) struct CompareArgs {
    /// Task graph files, any format `map` reads (repeat the flag for several; default:
    /// the embedded example).
    #[arg(short, long = "graph", value_name = "GRAPH")]
    pub(crate) graphs: Vec<PathBuf>,
    /// A timed program (PROCESS/INT_OP/SEND/RECEIVE/STOP) instead of --graph: every
    /// mapping is also simulated on the wormhole network (`taskmap sim`'s machine, its
    /// default parameters), and the rows are ranked by the completion time unless
    /// --rank-by says otherwise; congestion is scored too. greedy-perego maps with the
    /// program's own phases. Needs --arch.
    #[arg(long, value_name = "PROGRAM", conflicts_with_all = ["graphs", "task_weights", "graph_format"])]
    pub(crate) program: Option<PathBuf>,
    /// Graph file format, when the extension does not tell.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) graph_format: Option<String>,
    /// Task weights replacing the graph's vertex weights (one graph only; see `map`).
    #[arg(long, value_name = "FILE")]
    pub(crate) task_weights: Option<PathBuf>,
    /// Target architecture spec or Scotch target file (default with no --graph: torus:4x4).
    #[arg(short, long, value_name = "SPEC")]
    pub(crate) arch: Option<String>,
    #[command(flatten)]
    pub(crate) nodes: NodeList,
    /// An algorithm to run, `name[,key=value...]`; repeat the flag for several (default:
    /// every static mapper with its default parameters except `exact`, the branch and
    /// bound for small instances; name it to get each row's gap to the optimum).
    #[arg(short = 'A', long = "algorithm")]
    pub(crate) algorithms: Vec<String>,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    /// Run every algorithm with this many seeds, `--seed` and the ones after it.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub(crate) seeds: u64,
    #[command(flatten)]
    pub(crate) constraints: Constraints,
    /// Order the rows by this objective, best first (the mappings within the constraints
    /// before the others, ties in the given order); default: the order given.
    #[arg(long, value_enum, value_name = "OBJECTIVE")]
    pub(crate) rank_by: Option<Objective>,
    /// Score every mapping's link congestion too (the largest link load, as `map
    /// --congestion` reports it); implied by `--rank-by congestion`.
    #[arg(long)]
    pub(crate) congestion: bool,
    /// Write the comparison as one self-contained HTML page: per graph and seed, the
    /// table and the f_C of every algorithm as bars.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// Report format.
    #[arg(short, long, value_enum, default_value = "human")]
    pub(crate) format: OutputFormat,
}

/// What `compare` ranks by.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum Objective {
    /// f_C, the communication cost.
    #[value(name = "f_C", alias = "f_c", alias = "comm-cost")]
    CommCost,
    /// The largest link load (`taskmap eval`'s congestion).
    Congestion,
    /// The edge cut.
    Cut,
    /// The time taken.
    Time,
    /// The simulated completion time of the program (with --program).
    Completion,
}

pub(crate) fn cmd_compare(a: CompareArgs, quiet: bool) -> Result<u8> {
    if a.graphs.len() > 1 && a.task_weights.is_some() {
        anyhow::bail!("--task-weights applies to one graph; compare them one at a time");
    }
    let inputs: Vec<GraphInput> = match a.graphs.len() {
        0 => vec![GraphInput {
            graph: None,
            graph_format: a.graph_format.clone(),
            task_weights: a.task_weights.clone(),
        }],
        _ => a
            .graphs
            .iter()
            .map(|g| GraphInput {
                graph: Some(g.clone()),
                graph_format: a.graph_format.clone(),
                task_weights: a.task_weights.clone(),
            })
            .collect(),
    };
    if let Some(h) = &a.html {
        let mut inputs: Vec<Option<&PathBuf>> = a.graphs.iter().map(Some).collect();
        inputs.push(a.program.as_ref());
        inputs.push(a.task_weights.as_ref());
        inputs.push(a.constraints.capacities.as_ref());
        let targets = a
            .arch
            .as_deref()
            .map_or_else(Vec::new, |s| target_files(s, &a.nodes));
        inputs.extend(targets.iter().map(Some));
        refuse_overwriting_inputs(h, &inputs)?;
        claim_stdout(&[Some(h)]);
    }
    // Every graph is read and checked before any algorithm runs (on the runs' threads).
    let pool = RunContext::new(0).with_threads(a.run.threads)?.pool;
    let mut problems = Vec::with_capacity(inputs.len());
    let program = match &a.program {
        Some(path) => {
            let Some(spec) = &a.arch else {
                anyhow::bail!("--arch is required with --program (e.g. --arch torus:8x8)");
            };
            let program = taskmap::perego::program::read_program(path)?;
            let graph = program.to_task_graph();
            let name = path.display().to_string();
            let (problem, graph_name, _) = problem_of(graph, name, spec, &a.nodes, &a.constraints)?;
            problems.push((problem, graph_name));
            Some(program)
        }
        None => {
            for input in &inputs {
                let spec = arch_spec(a.arch.as_ref(), input)?;
                let (problem, graph_name, _) =
                    load_problem(input, &spec, &a.nodes, &a.constraints, pool.as_ref())?;
                problems.push((problem, graph_name));
            }
            None
        }
    };
    if matches!(a.rank_by, Some(Objective::Completion)) && program.is_none() {
        anyhow::bail!("--rank-by completion needs --program");
    }
    let rank_by = a
        .rank_by
        .or(program.as_ref().map(|_| Objective::Completion));
    let sim_params = taskmap::perego::wormhole::WormholeParams::default();
    let completion_bound = program
        .as_ref()
        .map(|p| {
            let pes = problems[0].0.arch.pe_count();
            taskmap::perego::wormhole::completion_lower_bound(p, &sim_params, pes)
        })
        .transpose()?;
    let names: Vec<String> = if a.algorithms.is_empty() {
        use taskmap::registry::Family;
        let families: &[Family] = match &a.program {
            Some(_) => &[Family::Static, Family::Program],
            None => &[Family::Static],
        };
        taskmap::registry::compared_by_default_in(families)
            .into_iter()
            .map(str::to_string)
            .collect()
    } else {
        a.algorithms.clone()
    };
    let specs: Vec<AlgorithmSpec> = names
        .iter()
        .map(|n| n.parse::<AlgorithmSpec>())
        .collect::<Result<_, _>>()?;
    let with_congestion =
        a.congestion || program.is_some() || matches!(rank_by, Some(Objective::Congestion));
    if with_congestion {
        let routed = |p: &taskmap::Problem| {
            p.arch
                .traffic_routes()
                .is_some_and(|r| r.link_count() <= taskmap_arch::MAX_TRAFFIC_LINKS)
        };
        if let Some((p, _)) = problems.iter().find(|(p, _)| !routed(p)) {
            anyhow::bail!(
                "no congestion on target {}: it has no links to route over (a distance matrix) \
                 or more than 2^24 link ids",
                p.arch.spec()
            );
        }
    }
    let mut rows = Vec::new();
    let progress = Bar::start("compare", !quiet);
    let runs = problems.len() as u64 * a.seeds * specs.len() as u64;
    let mut run = 0u64;
    let mut group = 0usize;
    for (problem, graph_name) in &problems {
        let opts = eval_options(problem, &a.constraints);
        for seed in (0..a.seeds).map(|i| a.run.seed.wrapping_add(i)) {
            group += 1;
            for (name, alg) in names.iter().zip(&specs) {
                run += 1;
                progress.relabel(&format!("{name} ({run}/{runs})"));
                let mut ctx = RunContext::new(seed).with_threads(a.run.threads)?;
                ctx.progress = progress.clone();
                let t0 = Instant::now();
                let result = match &program {
                    // the program's own phases for greedy-perego (as `map --program`), the
                    // task graph otherwise.
                    Some(prog) if alg.row().name == "greedy-perego" && problem.fixed.is_none() => {
                        let how = taskmap::perego::summary::ProgramMapping {
                            algorithm: Some(name),
                            seed,
                            threads: a.run.threads,
                            epsilon: a.constraints.epsilon,
                            spm: taskmap::perego::spm::SpmParams {
                                machine: sim_params.clone(),
                                ..Default::default()
                            },
                            progress: progress.clone(),
                            stop: Default::default(),
                        };
                        taskmap::perego::summary::map_program(prog, problem.arch.clone(), &how)
                    }
                    _ => alg.mapper().map(problem, &mut ctx),
                };
                let time_ms = t0.elapsed().as_secs_f64() * 1e3;
                let mut row = CompareRow {
                    group,
                    graph: graph_name.clone(),
                    target: problem.arch.spec(),
                    seed,
                    algorithm: name.clone(),
                    comm_cost: None,
                    max_congestion: None,
                    edge_cut: None,
                    imbalance: None,
                    feasible: false,
                    time_ms,
                    error: None,
                    lower_bound: ctx.optimality.as_ref().map(|o| o.lower_bound),
                    gap_percent: None,
                    completion: None,
                    completion_bound,
                    completion_gap_percent: None,
                };
                match result {
                    Ok(mapping) => {
                        let e = evaluate_on(
                            &problem.graph,
                            problem.arch.as_ref(),
                            &mapping,
                            &opts,
                            ctx.pool.as_ref(),
                        )?;
                        if with_congestion {
                            row.max_congestion = taskmap::congestion::congestion(
                                &problem.graph,
                                problem.arch.as_ref(),
                                &mapping,
                            )
                            .map(|c| c.max_load);
                        }
                        if let Some(prog) = &program {
                            let r = taskmap::perego::wormhole::simulate(
                                prog,
                                problem.arch.as_ref(),
                                &mapping,
                                &sim_params,
                            )?;
                            row.completion = Some(r.completion);
                            row.completion_gap_percent = completion_bound.and_then(|b| match b {
                                0 => (r.completion == 0).then_some(0.0),
                                _ => Some(100.0 * (r.completion as f64 - b as f64) / b as f64),
                            });
                        }
                        row.comm_cost = Some(e.comm_cost);
                        row.edge_cut = Some(e.edge_cut);
                        row.imbalance =
                            Some(e.loads.iter().map(|l| l.imbalance).fold(0.0, f64::max));
                        row.feasible = e.feasible();
                    }
                    Err(e) => row.error = Some(e.to_string()),
                }
                rows.push(row);
            }
        }
    }
    progress.finish();
    // One group per graph and seed, in the order run.
    let same = |x: &CompareRow, y: &CompareRow| x.group == y.group;
    // Against an exact search's lower bound: the gap to the optimum (at most that when
    // the search stopped early).
    for group in rows.chunk_by_mut(same) {
        let Some(lb) = group.iter().filter_map(|r| r.lower_bound).max() else {
            continue;
        };
        for r in group.iter_mut().filter(|r| r.feasible) {
            r.gap_percent = r.comm_cost.and_then(|f| match lb {
                0 => (f == 0).then_some(0.0),
                _ => Some(100.0 * (f as f64 - lb as f64) / lb as f64),
            });
        }
    }
    if let Some(by) = rank_by {
        let key = |r: &CompareRow| -> (bool, f64) {
            let v = match by {
                Objective::CommCost => r.comm_cost.map(|x| x as f64),
                Objective::Congestion => r.max_congestion,
                Objective::Cut => r.edge_cut.map(|x| x as f64),
                Objective::Time => r.error.is_none().then_some(r.time_ms),
                Objective::Completion => r.completion.map(|c| c as f64),
            };
            (!r.feasible, v.unwrap_or(f64::INFINITY))
        };
        for group in rows.chunk_by_mut(same) {
            group.sort_by(|x, y| {
                let (a, b) = (key(x), key(y));
                a.0.cmp(&b.0).then(a.1.total_cmp(&b.1))
            });
        }
    }
    if let Some(h) = &a.html {
        let page = taskmap::html::compare_page("taskmap compare", &rows);
        write_file(h, page.as_bytes()).context("writing the HTML page")?;
    }
    match a.format {
        OutputFormat::Json | OutputFormat::Csv => print_data(&rows, a.format)?,
        OutputFormat::Human => {
            for (g, group) in rows.chunk_by(same).enumerate() {
                if g > 0 {
                    outln!();
                }
                print_group(group, with_congestion);
            }
        }
    }
    // Like `map`, for every graph and seed: exit 2 when no algorithm could map, 1 when
    // none gave a mapping within the constraints.
    let groups: Vec<&[CompareRow]> = rows.chunk_by(same).collect();
    Ok(
        if groups.iter().any(|g| g.iter().all(|r| r.error.is_some())) {
            2
        } else if groups
            .iter()
            .all(|g| g.iter().any(|r| r.error.is_none() && r.feasible))
        {
            0
        } else {
            1
        },
    )
}

/// The human table of one graph and seed (with a congestion column when scored, and a
/// gap column when an exact search bounded the optimum).
fn print_group(rows: &[CompareRow], congestion: bool) {
    let gaps = rows.iter().any(|r| r.lower_bound.is_some());
    outln!(
        "graph {}  target {}  seed {}",
        rows[0].graph,
        rows[0].target,
        rows[0].seed
    );
    let column = |c: String| {
        if congestion {
            format!(" {c:>14}")
        } else {
            String::new()
        }
    };
    let gap = |r: &CompareRow| {
        if !gaps {
            return String::new();
        }
        let g = r.gap_percent.map_or("-".to_string(), |g| format!("{g:.2}"));
        match r.lower_bound {
            Some(lb) if r.comm_cost == Some(lb) => format!(" {g:>8}  (optimal)"),
            Some(lb) => format!(" {g:>8}  (bound {lb})"),
            None => format!(" {g:>8}"),
        }
    };
    let simulated = rows.iter().any(|r| r.completion.is_some());
    if let Some(b) = rows[0].completion_bound {
        outln!(
            "completion lower bound {} cycles (the larger of the critical path, every message at its cheapest, and the busy cycles shared by the PEs)",
            b
        );
    }
    let completion = |r: &CompareRow| {
        if simulated {
            format!(
                "{:>12} {:>8} ",
                r.completion.map_or("-".to_string(), |c| c.to_string()),
                r.completion_gap_percent
                    .map_or("-".to_string(), |g| format!("{g:.1}"))
            )
        } else {
            String::new()
        }
    };
    outln!(
        "{:<32} {}{:>14}{} {:>12} {:>10} {:>9} {:>12}{}",
        "algorithm",
        if simulated {
            format!("{:>12} {:>8} ", "completion", "above_%")
        } else {
            String::new()
        },
        "f_C",
        column("congestion".into()),
        "cut",
        "imbalance",
        "feasible",
        "time_ms",
        if gaps {
            format!(" {:>8}", "gap_%")
        } else {
            String::new()
        }
    );
    for r in rows {
        match (&r.error, r.comm_cost, r.edge_cut, r.imbalance) {
            (None, Some(fc), Some(cut), Some(imb)) => outln!(
                "{:<32} {}{:>14}{} {:>12} {:>10.4} {:>9} {:>12.3}{}",
                r.algorithm,
                completion(r),
                fc,
                column(r.max_congestion.map_or("-".to_string(), |c| c.to_string())),
                cut,
                imb,
                if r.feasible { "yes" } else { "NO" },
                r.time_ms,
                gap(r)
            ),
            (err, ..) => outln!(
                "{:<32} not applicable: {}",
                r.algorithm,
                err.as_deref().unwrap_or("no result")
            ),
        }
    }
}
