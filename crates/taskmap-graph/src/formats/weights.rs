//! Side files of task weights (`--task-weights`): the compute weight of every rank.

use std::path::Path;

use super::text::{decompress, Cursor};
use crate::error::GraphError;
use crate::graph::TaskGraph;

/// Most weights per task (as METIS's `ncon`).
const MAX_TASK_WEIGHTS: usize = 1 << 20;

/// Reads task weights for a graph of `n` tasks (gzip-compressed or plain): `(ncon,
/// weights)`, `weights[t·ncon + c]` the weight `c` of task `t`.
///
/// Rules: one line per task, in task order, holding its weights: non-negative integers
/// (scale times, for instance to microseconds), separated by spaces, tabs or commas, as
/// many on every line (one per constraint). Lines starting with `#` or `%` are comments;
/// blank lines are skipped. There must be exactly `n` lines.
pub fn read_task_weights(
    bytes: &[u8],
    name: &Path,
    n: usize,
) -> Result<(usize, Vec<u64>), GraphError> {
    let data = decompress(bytes, name)?;
    let b: &[u8] = &data;
    let mut c = Cursor::new(b, name);
    c.comma = true;
    let mut ncon: Option<usize> = None;
    let mut weights: Vec<u64> = Vec::new();
    let mut tasks = 0usize;
    let mut more = !b.is_empty();
    while more {
        if c.skip_blank_or_comment() {
            more = c.next_line();
            continue;
        }
        if tasks == n {
            return Err(c.err(
                c.pos,
                format!("a line for task {} but the graph has {n} tasks", tasks + 1),
            ));
        }
        let mut count = 0;
        while !c.at_eol() {
            if ncon.is_some_and(|k| count >= k) {
                return Err(c.err(
                    c.pos,
                    format!(
                        "task {} has more than {} weights (the first line's count)",
                        tasks + 1,
                        ncon.unwrap_or(0)
                    ),
                ));
            }
            if count >= MAX_TASK_WEIGHTS {
                return Err(c.err(
                    c.pos,
                    format!("more than {MAX_TASK_WEIGHTS} weights on a line"),
                ));
            }
            weights.push(c.uint("a task weight")?);
            count += 1;
            c.skip_ws();
        }
        match ncon {
            None => ncon = Some(count),
            Some(k) if count < k => {
                return Err(c.err(
                    c.pos,
                    format!(
                        "task {} has {count} weights; the first line has {k}",
                        tasks + 1
                    ),
                ));
            }
            _ => {}
        }
        tasks += 1;
        more = c.next_line();
    }
    if tasks != n {
        return Err(c.err(
            b.len(),
            format!("{tasks} task lines, but the graph has {n} tasks"),
        ));
    }
    Ok((ncon.unwrap_or(1), weights))
}

impl TaskGraph {
    /// The graph with these vertex weights: `ncon >= 1` per task, `weights.len() == n·ncon`.
    pub fn with_vertex_weights(self, ncon: usize, weights: Vec<u64>) -> TaskGraph {
        assert!(ncon >= 1 && weights.len() == self.num_tasks() * ncon);
        let (xadj, adjncy, ew, _, _) = self.into_csr();
        TaskGraph::from_csr_unchecked(xadj, adjncy, ew, weights, ncon)
    }
}
