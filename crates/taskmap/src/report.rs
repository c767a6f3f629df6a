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
    s
}
