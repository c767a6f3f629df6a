//! `taskmap compare`: several algorithms on one problem, tabulated.

use std::time::Instant;

use anyhow::Result;
use clap::Args;
use taskmap::{evaluate, AlgorithmSpec, RunContext};

use crate::input::*;
use crate::output::*;

#[derive(Args)]
pub(crate) struct CompareArgs {
    #[command(flatten)]
    pub(crate) input: GraphInput,
    /// Target architecture spec or Scotch target file (default with no --graph: torus:4x4).
    #[arg(short, long, value_name = "SPEC")]
    pub(crate) arch: Option<String>,
    #[command(flatten)]
    pub(crate) nodes: NodeList,
    /// An algorithm to run, `name[,key=value...]`; repeat the flag for several (default:
    /// every registered algorithm with its default parameters except `greedy-perego`, which
    /// is made for timed programs and leaves loads unbalanced on static graphs).
    #[arg(short = 'A', long = "algorithm")]
    pub(crate) algorithms: Vec<String>,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    #[command(flatten)]
    pub(crate) constraints: Constraints,
    /// Order the rows by this objective, best first (the mappings within the constraints
    /// before the others, ties in the given order); default: the order given.
    #[arg(long, value_enum, value_name = "OBJECTIVE")]
    pub(crate) rank_by: Option<Objective>,
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
}

#[derive(serde::Serialize)]
pub(crate) struct CompareRow {
    pub(crate) algorithm: String,
    pub(crate) comm_cost: Option<u64>,
    /// The largest link load, when the target has routes.
    pub(crate) max_congestion: Option<f64>,
    pub(crate) edge_cut: Option<u64>,
    pub(crate) imbalance: Option<f64>,
    pub(crate) feasible: bool,
    pub(crate) time_ms: f64,
    /// Why the algorithm gave no mapping (it does not apply to this problem).
    pub(crate) error: Option<String>,
}

pub(crate) fn cmd_compare(a: CompareArgs, quiet: bool) -> Result<u8> {
    let spec = arch_spec(a.arch.as_ref(), &a.input)?;
    let (problem, graph_name, _) = load_problem(&a.input, &spec, &a.nodes, &a.constraints)?;
    let names: Vec<String> = if a.algorithms.is_empty() {
        taskmap::registry::names(&[taskmap::registry::Family::Static])
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
    let opts = eval_options(&problem, &a.constraints);
    let has_routes = problem.arch.traffic_routes().is_some();
    let mut rows = Vec::with_capacity(specs.len());
    let progress = Bar::start("compare", !quiet);
    for (i, (name, alg)) in names.iter().zip(&specs).enumerate() {
        progress.relabel(&format!("{name} ({}/{})", i + 1, specs.len()));
        let mut ctx = RunContext::new(a.run.seed).with_threads(a.run.threads)?;
        ctx.progress = progress.clone();
        let t0 = Instant::now();
        let result = alg.mapper().map(&problem, &mut ctx);
        let time_ms = t0.elapsed().as_secs_f64() * 1e3;
        let row = match result {
            Ok(mapping) => {
                let e = evaluate(&problem.graph, problem.arch.as_ref(), &mapping, &opts)?;
                let congestion = if has_routes {
                    taskmap::congestion::congestion(&problem.graph, problem.arch.as_ref(), &mapping)
                        .map(|c| c.max_load)
                } else {
                    None
                };
                CompareRow {
                    algorithm: name.clone(),
                    comm_cost: Some(e.comm_cost),
                    max_congestion: congestion,
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
                max_congestion: None,
                edge_cut: None,
                imbalance: None,
                feasible: false,
                time_ms,
                error: Some(e.to_string()),
            },
        };
        rows.push(row);
    }
    progress.finish();
    if let Some(by) = a.rank_by {
        let key = |r: &CompareRow| -> (bool, f64) {
            let v = match by {
                Objective::CommCost => r.comm_cost.map(|x| x as f64),
                Objective::Congestion => r.max_congestion,
                Objective::Cut => r.edge_cut.map(|x| x as f64),
                Objective::Time => r.error.is_none().then_some(r.time_ms),
            };
            (!r.feasible, v.unwrap_or(f64::INFINITY))
        };
        rows.sort_by(|x, y| {
            let (a, b) = (key(x), key(y));
            a.0.cmp(&b.0).then(a.1.total_cmp(&b.1))
        });
    }
    match a.format {
        OutputFormat::Json | OutputFormat::Csv => print_data(&rows, a.format)?,
        OutputFormat::Human => {
            outln!(
                "graph {}  target {}  seed {}",
                graph_name,
                problem.arch.spec(),
                a.run.seed
            );
            outln!(
                "{:<32} {:>14} {:>14} {:>12} {:>10} {:>9} {:>12}",
                "algorithm",
                "f_C",
                "congestion",
                "cut",
                "imbalance",
                "feasible",
                "time_ms"
            );
            for r in &rows {
                match (&r.error, r.comm_cost, r.edge_cut, r.imbalance) {
                    (None, Some(fc), Some(cut), Some(imb)) => outln!(
                        "{:<32} {:>14} {:>14} {:>12} {:>10.4} {:>9} {:>12.3}",
                        r.algorithm,
                        fc,
                        r.max_congestion.map_or("-".to_string(), |c| c.to_string()),
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
