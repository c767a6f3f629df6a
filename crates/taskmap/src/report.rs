//! Reports: the human table and the JSON form of an evaluation or a mapping run.

use std::fmt::Write;

use serde::Serialize;

use crate::error::Error;
use crate::mapping::Mapping;
use crate::metrics::{evaluate, EvalOptions, Evaluation};
use crate::problem::Problem;

/// A mapping run: what ran, how long each phase took, and the evaluation of the result.
#[derive(Clone, Debug, Serialize)]
pub struct MapReport {
    pub graph: String,
    pub target: String,
    pub algorithm: String,
    pub seed: u64,
    pub threads: usize,
    /// Phase timings in milliseconds, in order.
    pub timings_ms: Vec<(String, f64)>,
    /// Total wall time of the mapper in milliseconds.
    pub map_time_ms: f64,
    pub evaluation: Evaluation,
    /// The mapping refined, when one was given (`taskmap map --initial`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial: Option<InitialReport>,
    /// The ranks in order and the launch files, on a machine with hosts or when a launch
    /// file was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch: Option<LaunchReport>,
    /// Link loads, when asked for (`map --congestion`) and the target has routes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub congestion: Option<crate::congestion::Congestion>,
    /// What an exact search proved (`-A exact`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optimality: Option<crate::mapper::Optimality>,
}

/// A mapping of MPI ranks (task `r` is rank `r`) against the ranks placed in order, and
/// how to launch the job with the files written.
#[derive(Clone, Debug, Serialize)]
pub struct LaunchReport {
    /// f_C of the ranks in order: rank `r` of `n` on PE `floor(r·k/n)`, as a launcher
    /// places ranks by core.
    pub in_order_comm_cost: u128,
    /// The mapping's f_C against it, in percent (negative: better); none when it is 0.
    pub change_percent: Option<f64>,
    /// Hosts that carry a rank, when the target has hosts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts_used: Option<usize>,
    /// The launch files written: (`rankfile`, `slurm_hostfile` or `permutation`, path).
    pub files: Vec<(String, String)>,
    /// Command lines that launch the job with them (`./app` stands for the program).
    pub commands: Vec<String>,
}

/// The launch files a run writes.
#[derive(Clone, Debug, Default)]
pub struct LaunchFiles {
    /// Open MPI rankfile.
    pub rankfile: Option<String>,
    /// Slurm hostfile (one host per rank).
    pub slurm_hostfile: Option<String>,
    /// Rank reordering (line `t + 1`: the rank in launch order that runs task `t`).
    pub permutation: Option<String>,
}

impl LaunchReport {
    /// `mapping` of `graph` on `arch`, of f_C `comm_cost` (its evaluation's), against the
    /// ranks in order, with the `files` written for `machine` (the hosts of `arch`'s PEs,
    /// when it has them).
    pub fn new(
        graph: &crate::TaskGraph,
        arch: &dyn crate::Architecture,
        mapping: &Mapping,
        comm_cost: u64,
        machine: Option<&crate::Machine>,
        files: &LaunchFiles,
    ) -> Result<Self, Error> {
        let n = mapping.len() as u64;
        let k = u64::from(arch.pe_count());
        // Exact: the ranks in order may cost more than 2^64 - 1 where the mapping does not.
        let in_order = |r: u32| crate::PeId((u64::from(r) * k / n.max(1)) as u32);
        let base: u128 = graph
            .edges()
            .map(|(u, v, w)| {
                let (pu, pv) = (in_order(u), in_order(v));
                let d = if pu == pv { 0 } else { arch.distance(pu, pv) };
                u128::from(w) * u128::from(d)
            })
            .sum();
        let now = comm_cost;
        let change_percent = (base > 0).then(|| (now as f64 - base as f64) / base as f64 * 100.0);
        let hosts_used = machine.map(|m| {
            let mut used = vec![false; m.hosts().len()];
            for p in mapping.as_slice() {
                used[m.sites()[p.idx()].host as usize] = true;
            }
            used.iter().filter(|&&u| u).count()
        });
        let pu = machine.is_some_and(|m| m.pe_is_pu());
        let mut commands = Vec::new();
        let mut listed = Vec::new();
        if let Some(f) = &files.rankfile {
            let hw = if pu { " --use-hwthread-cpus" } else { "" };
            commands.push(format!(
                "mpirun -np {n}{hw} --map-by rankfile:file={} ./app",
                shell_word(f)
            ));
            commands.push(format!(
                "mpirun -np {n}{hw} --rankfile {} ./app   # Open MPI 4",
                shell_word(f)
            ));
            listed.push(("rankfile".to_string(), f.clone()));
        }
        if let Some(f) = &files.slurm_hostfile {
            commands.push(format!(
                "SLURM_HOSTFILE={} srun -n {n} --distribution=arbitrary ./app",
                shell_word(f)
            ));
            listed.push(("slurm_hostfile".to_string(), f.clone()));
        }
        if let Some(f) = &files.permutation {
            listed.push(("permutation".to_string(), f.clone()));
        }
        Ok(LaunchReport {
            in_order_comm_cost: base,
            change_percent,
            hosts_used,
            files: listed,
            commands,
        })
    }
}

/// `s` as one shell word: as it is when it has only safe characters, else single-quoted.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"_./-+=:,@%".contains(&c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The lines congestion adds to a human report.
pub fn render_congestion(c: &crate::congestion::Congestion) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "congestion ({}): max link load {}, mean {:.2} over {} links ({} used)",
        c.routing, c.max_load, c.mean_load, c.links, c.links_used
    );
    let busiest: Vec<String> = c
        .busiest
        .iter()
        .map(|b| format!("{} {}", b.name, b.load))
        .collect();
    if !busiest.is_empty() {
        let _ = writeln!(s, "  busiest: {}", busiest.join(", "));
    }
    s
}

/// The lines a launch report adds to a human report.
pub fn render_launch(l: &LaunchReport) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "ranks in order (rank r on PE r*k/n): f_C {}",
        l.in_order_comm_cost
    );
    if let Some(c) = l.change_percent {
        let _ = write!(s, "; this mapping {c:+.1} %");
    }
    if let Some(h) = l.hosts_used {
        let _ = write!(s, "; {h} hosts used");
    }
    let _ = writeln!(s);
    for (kind, path) in &l.files {
        let _ = writeln!(s, "{} written to {}", kind.replace('_', " "), path);
    }
    if l.files.iter().any(|(k, _)| k == "permutation") {
        let _ = writeln!(
            s,
            "permutation: line t+1 is the rank (in launch order) that runs task t"
        );
    }
    for c in &l.commands {
        let _ = writeln!(s, "launch: {c}");
    }
    s
}

/// One run of `taskmap compare`: an algorithm on a graph, target and seed.
#[derive(Clone, Debug, Serialize)]
pub struct CompareRow {
    /// The graph and seed this row belongs to (its table), in the order run.
    #[serde(skip)]
    pub group: usize,
    pub graph: String,
    pub target: String,
    pub seed: u64,
    pub algorithm: String,
    pub comm_cost: Option<u64>,
    /// The largest link load, when the target has routes.
    pub max_congestion: Option<f64>,
    pub edge_cut: Option<u64>,
    pub imbalance: Option<f64>,
    pub feasible: bool,
    pub time_ms: f64,
    /// Why the algorithm gave no mapping (it does not apply to this problem).
    pub error: Option<String>,
    /// The lower bound on f_C an exact search proved (its row only).
    pub lower_bound: Option<u64>,
    /// `100 (f_C - bound) / bound` against the best bound of the group, when an exact
    /// search ran: the gap to the optimum, or at most that when the search stopped early.
    pub gap_percent: Option<f64>,
    /// The simulated completion time of the program under the mapping, in cycles
    /// (`compare --program` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion: Option<u64>,
    /// A lower bound on the completion time of every mapping onto the target (`compare
    /// --program` only): the critical path with every message at its cheapest, or the busy
    /// cycles shared by the PEs ([`crate::perego::wormhole::completion_lower_bound`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_bound: Option<u64>,
    /// `100 (completion - bound) / bound`: at least the gap to the least completion time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_gap_percent: Option<f64>,
}

/// The mapping a run refined, against the result.
#[derive(Clone, Debug, Serialize)]
pub struct InitialReport {
    pub file: String,
    /// Its f_C, and whether it met the constraints.
    pub comm_cost: u64,
    pub feasible: bool,
    /// The hops of the moved tasks (the distance between a task's two PEs, summed), the
    /// cost per task and hop (`--migration-cost`, 0 without) and what the result pays
    /// for them, `migration_cost · moved_hops`.
    pub moved_hops: u128,
    pub migration_cost: u64,
    pub migration: u128,
    /// Tasks on another PE in the result, and their weight (one sum per vertex weight).
    pub moved_tasks: u64,
    pub moved_weight: Vec<u64>,
}

impl InitialReport {
    /// The mapping `given` (read from `file`) that a run refined into `result`, on
    /// `problem`, with `migration_cost` per task and hop moved; `opts` as the result's
    /// evaluation.
    pub fn new(
        problem: &Problem,
        given: &Mapping,
        result: &Mapping,
        file: String,
        migration_cost: u64,
        opts: &EvalOptions,
    ) -> Result<Self, Error> {
        let arch = problem.arch.as_ref();
        let before = evaluate(&problem.graph, arch, given, opts)?;
        let moved: Vec<u32> = (0..problem.graph.num_tasks() as u32)
            .filter(|&t| given.pe(t) != result.pe(t))
            .collect();
        let hops: u128 = moved
            .iter()
            .map(|&t| u128::from(arch.distance(given.pe(t), result.pe(t))))
            .sum();
        Ok(Self {
            file,
            comm_cost: before.comm_cost,
            feasible: before.feasible(),
            moved_hops: hops,
            migration_cost,
            migration: u128::from(migration_cost) * hops,
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
}

/// The human table of an evaluation, in the spirit of Scotch's `gmtst`.
pub fn render_evaluation(e: &Evaluation) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "tasks {}  edges {}  PEs {} ({} used)",
        e.tasks, e.edges, e.pes, e.pes_used
    );
    let _ = writeln!(
        s,
        "comm cost f_C      {:>16}   (J = 2 f_C = {})",
        e.comm_cost, e.comm_cost_j
    );
    let _ = writeln!(
        s,
        "Berger objective   {:>16}   (ordered pairs, 2 f_C; their published tables count f_C)",
        e.berger_objective
    );
    let pct = if e.total_edge_weight > 0 {
        100.0 * e.edge_cut as f64 / e.total_edge_weight as f64
    } else {
        0.0
    };
    let _ = writeln!(
        s,
        "edge cut           {:>16}   ({} edges, {:.2}% of weight {})",
        e.edge_cut, e.cut_edges, pct, e.total_edge_weight
    );
    let _ = writeln!(
        s,
        "dilation           mean {:.4}  max {}",
        e.dilation_mean, e.dilation_max
    );
    let _ = writeln!(
        s,
        "expansion          mean {:.4}  ratio {:.4}",
        e.expansion_mean, e.expansion_ratio
    );
    for l in &e.loads {
        let _ = writeln!(
            s,
            "load[{}]            min {}  max {}  avg {:.2}  total {}",
            l.constraint, l.min, l.max, l.avg, l.total
        );
        let _ = writeln!(
            s,
            "  normalised       min {:.4}  max {:.4}  imbalance {:.4}  mu_map {:.4}  delta_map {:.4}",
            l.min_normalised, l.max_normalised, l.imbalance, l.mu_map, l.delta_map
        );
        if let Some(o) = l.overloaded_pes {
            let _ = writeln!(s, "  PEs above (1+eps) share: {}", o);
        }
        if l.crowded_pes > 0 {
            let _ = writeln!(
                s,
                "  {} PEs above their rounded-up share while {} PEs are empty",
                l.crowded_pes,
                e.pes - e.pes_used
            );
        }
        if let (Some(o), Some(x)) = (l.over_capacity_pes, l.max_capacity_excess) {
            let _ = writeln!(s, "  PEs above capacity: {}  (largest excess {})", o, x);
        }
    }
    let _ = writeln!(
        s,
        "neighbour PEs      min {}  max {}  avg {:.2}  sum {}",
        e.neighbours_min, e.neighbours_max, e.neighbours_avg, e.neighbours_sum
    );
    let _ = writeln!(
        s,
        "part diameter      min {}  max {}  avg {:.4}  (gmtst's PartDiam)",
        e.part_diameters.min, e.part_diameters.max, e.part_diameters.avg
    );
    let _ = writeln!(s, "comm weight by distance:");
    let _ = writeln!(
        s,
        "  {:>10} {:>12} {:>16} {:>7}",
        "distance", "edges", "weight", "%"
    );
    for b in &e.distance_histogram {
        let p = if e.total_edge_weight > 0 {
            100.0 * b.weight as f64 / e.total_edge_weight as f64
        } else {
            0.0
        };
        let _ = writeln!(
            s,
            "  {:>10} {:>12} {:>16} {:>7.2}",
            b.distance, b.edges, b.weight, p
        );
    }
    if let (Some(eps), Some(b)) = (e.epsilon, e.balanced) {
        let _ = writeln!(
            s,
            "balance (eps {})   {}",
            eps,
            if b { "holds" } else { "VIOLATED" }
        );
    }
    if let Some(c) = e.capacities_respected {
        let _ = writeln!(
            s,
            "capacities         {}",
            if c { "respected" } else { "VIOLATED" }
        );
    }
    s
}

/// The human report of a mapping run.
pub fn render_map_report(r: &MapReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "graph {}  target {}  algorithm {}  seed {}  threads {}",
        r.graph, r.target, r.algorithm, r.seed, r.threads
    );
    let _ = write!(s, "time {:.3} ms", r.map_time_ms);
    for (phase, ms) in &r.timings_ms {
        let _ = write!(s, "  {} {:.3} ms", phase, ms);
    }
    let _ = writeln!(s);
    if let Some(o) = &r.optimality {
        if o.optimal {
            let _ = writeln!(
                s,
                "exact search: f_C {} is optimal ({} nodes)",
                o.comm_cost, o.nodes
            );
        } else {
            let _ = writeln!(
                s,
                "exact search stopped after {} nodes: f_C {}, lower bound {} (gap at most {})",
                o.nodes,
                o.comm_cost,
                o.lower_bound,
                o.gap_percent()
                    .map_or("unbounded".to_string(), |g| format!("{g:.2} %"))
            );
        }
    }
    if let Some(i) = &r.initial {
        let _ = writeln!(
            s,
            "initial mapping {}: comm cost f_C {}{}; {} tasks moved (vertex weight {}; {} hops)",
            i.file,
            i.comm_cost,
            if i.feasible {
                ""
            } else {
                " (outside the constraints)"
            },
            i.moved_tasks,
            i.moved_weight
                .iter()
                .map(|w| w.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            i.moved_hops
        );
        if i.migration_cost > 0 {
            let _ = writeln!(
                s,
                "migration {} ({} per task and hop); f_C + migration {}",
                i.migration,
                i.migration_cost,
                u128::from(r.evaluation.comm_cost) + i.migration
            );
        }
    }
    s.push_str(&render_evaluation(&r.evaluation));
    if let Some(c) = &r.congestion {
        s.push_str(&render_congestion(c));
    }
    if let Some(l) = &r.launch {
        s.push_str(&render_launch(l));
    }
    s
}
