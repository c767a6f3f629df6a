//! What `taskmap hetero` reports as data, for the CLI and the bindings alike.

use serde_json::json;

use crate::hetero::mateha::Optimum;
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
