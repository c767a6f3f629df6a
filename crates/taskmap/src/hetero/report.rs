//! What `taskmap hetero` reports as data, for the CLI and the bindings alike.

use serde_json::json;

use crate::hetero::mateha::{Optimum, TtigGraph};
use crate::hetero::simulha::Schedule;
use crate::hetero::ttigha::Ttigha;

/// The report of an allocation and its schedule: every task's level and processor, every
/// processor's busy, waiting and end times and its order, every sub-task's times, the
/// makespan, the model's file (`model_path`), where the allocation came from (`source`:
/// an algorithm's name or "file"), and the exhaustive optimum when searched.
pub fn report_json(
    model: &Ttigha,
    model_path: &str,
    source: &str,
    levels: &[u32],
    alloc: &[u32],
    s: &Schedule,
    optimum: Option<&Optimum>,
) -> serde_json::Value {
    let (pr, pl) = (&model.program, &model.platform);
    let tasks: Vec<_> = (0..pr.tasks())
        .map(|t| json!({"name": pr.task_names[t], "level": levels[t], "processor": alloc[t]}))
        .collect();
    let procs: Vec<_> = (0..pl.processors())
        .map(|p| {
            json!({
                "id": p,
                "type": pl.type_names[pl.proc_type[p] as usize],
                "busy": s.busy(p),
                "waiting": s.waiting(p),
                "end": s.end(p),
                "order": s.order[p].iter().map(|&x| &pr.subtask_names[x as usize]).collect::<Vec<_>>(),
            })
        })
        .collect();
    let subs: Vec<_> = (0..pr.subtasks())
        .map(|x| {
            json!({
                "name": pr.subtask_names[x],
                "task": pr.task_names[pr.subtask_task[x] as usize],
                "processor": s.processor[x],
                "start": s.start[x],
                "finish": s.finish[x],
            })
        })
        .collect();
    let mut v = json!({
        "tasks": tasks,
        "processors": procs,
        "subtasks": subs,
        "makespan": s.makespan,
        "model": model_path,
        "allocation_source": source,
    });
    if let Some(o) = optimum {
        v["optimal"] = json!({
            "makespan": o.makespan,
            "allocation": o.alloc,
            "evaluated": o.evaluated,
            "gap_percent": gap(s.makespan, o.makespan),
        });
    }
    v
}

/// How far `t` lies above `best`, in per cent.
pub fn gap(t: f64, best: f64) -> f64 {
    if best > 0.0 {
        100.0 * (t - best) / best
    } else {
        0.0
    }
}

/// The TTIGHa graph of a model as matrices (De Giusti et al. §2.1.1; `taskmap hetero
/// --show-model`): per task its time on every processor type, per ordered pair of adjacent
/// tasks (tasks joined by a message either way) its communication and concurrency.
///
/// The paper's `C_sd(Ti,Tj)` and `p_sd(Ti,Tj)` are `#m × #m` matrices over the processors
/// `s` (of `Ti`) and `d` (of `Tj`); `C_sd` depends on `s` and `d` only through their
/// communication type (0 when `s = d`), `p_sd` only through their processor types, so they
/// are given per communication type and per pair of types.
#[derive(Clone, Debug, PartialEq)]
pub struct TtigMatrices {
    /// Processor type names: the columns of `w`, the rows and columns of each `p`.
    pub types: Vec<String>,
    /// Communication type names: the columns of each edge's `comm_time`.
    pub comms: Vec<String>,
    /// `w[t][p]`: `w_p(Tt)`, the time of task `t` on a processor of type `p` (eq. 1).
    pub w: Vec<Vec<f64>>,
    /// One entry per ordered pair of adjacent tasks, by task, then by the other task.
    pub edges: Vec<TtigEdge>,
}

/// One ordered pair of adjacent tasks `(Ti, Tj)` of [`TtigMatrices`].
#[derive(Clone, Debug, PartialEq)]
pub struct TtigEdge {
    /// `Ti` and `Tj` (task numbers).
    pub from: u32,
    pub to: u32,
    /// Messages from `Ti` to `Tj`.
    pub messages: u64,
    /// `c(Ti,Tj)`: their bytes (eq. 2).
    pub bytes: u64,
    /// `C_sd(Ti,Tj)` for processors `s ≠ d` joined by communication type `k`:
    /// `messages · startup(k) + bytes · per_byte(k)` (eq. 3), per type `k`.
    pub comm_time: Vec<f64>,
    /// `p[a][b]`: `p_sd(Ti,Tj)` for `s` of type `a` and `d ≠ s` of type `b`:
    /// `TP_sd(Ti,Tj) / w_b(Tj)` (eq. 4; 0 when `w_b(Tj) = 0`).
    pub concurrency: Vec<Vec<f64>>,
}

/// The matrices of [`TtigMatrices`] for `model`: the TTIGHa graph MATEHa reads
/// ([`TtigGraph`]), with `TP` simulated for every adjacent pair and pair of types.
/// `O(S · types + E log E + E · types² · S_pair)` for `E` adjacent pairs of tasks of
/// `S_pair` sub-tasks and their messages.
pub fn ttigha_matrices(model: &Ttigha) -> TtigMatrices {
    let (pr, pl) = (&model.program, &model.platform);
    let g = TtigGraph::new(pr);
    let types = pr.types;
    let mut end = vec![0.0f64; pr.subtasks()];
    let mut edges = Vec::with_capacity(g.adj.len());
    for t in 0..pr.tasks() {
        for (i, &j) in g.neighbours(t).iter().enumerate() {
            let (messages, bytes) = g.out[g.adj_first[t] as usize + i];
            let comm_time = (0..pl.comm_names.len())
                .map(|k| messages as f64 * pl.startup[k] + bytes as f64 * pl.per_byte[k])
                .collect();
            let j = j as usize;
            let concurrency = (0..types)
                .map(|a| {
                    (0..types)
                        .map(|b| {
                            let wj = g.time(j, b);
                            if wj > 0.0 {
                                g.parallel_time(t, a, j, b, &mut end) / wj
                            } else {
                                0.0
                            }
                        })
                        .collect()
                })
                .collect();
            edges.push(TtigEdge {
                from: t as u32,
                to: j as u32,
                messages,
                bytes,
                comm_time,
                concurrency,
            });
        }
    }
    TtigMatrices {
        types: pl.type_names.clone(),
        comms: pl.comm_names.clone(),
        w: (0..pr.tasks())
            .map(|t| (0..types).map(|p| g.time(t, p)).collect())
            .collect(),
        edges,
    }
}

/// [`TtigMatrices`] as the `ttigha` member of the JSON report (tasks by name; `w` in the
/// tasks' order).
pub fn matrices_json(model: &Ttigha, m: &TtigMatrices) -> serde_json::Value {
    let names = &model.program.task_names;
    let edges: Vec<_> = m
        .edges
        .iter()
        .map(|e| {
            json!({
                "from": names[e.from as usize],
                "to": names[e.to as usize],
                "messages": e.messages,
                "bytes": e.bytes,
                "C": e.comm_time,
                "p": e.concurrency,
            })
        })
        .collect();
    json!({
        "processor_types": m.types,
        "communication_types": m.comms,
        "w": m.w,
        "edges": edges,
    })
}
