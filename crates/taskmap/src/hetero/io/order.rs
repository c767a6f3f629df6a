//! Order files: for each processor, the sub-tasks it runs, in order (`--order`,
//! `--write-order`).

use std::collections::HashMap;
use std::path::Path;

use crate::error::Error;
use crate::hetero::io::ttig::*;
use crate::hetero::ttigha::*;

/// Reads an order file for [`crate::hetero::simulha::Simulator::schedule`] and the allocation
/// `alloc`: see [`parse_order`].
pub fn read_order(
    path: &Path,
    program: &HeteroProgram,
    processors: usize,
    alloc: &[u32],
) -> Result<Vec<Vec<u32>>, Error> {
    with_text(path, |text| {
        parse_order(text, path, program, processors, alloc)
    })
}

/// Parses the order of the sub-tasks on each processor: one line per processor, in
/// processor order, with the names of its sub-tasks in the order they are to run
/// (an empty line for a processor without any; `#` starts a comment, so a line holding
/// only a comment still counts as a processor's line). The order must fit the allocation
/// `alloc` (a processor per task): each sub-task listed once, on the line of its task's
/// processor, and no processor waiting forever (for a sub-task whose inputs depend on
/// sub-tasks queued behind others on their processors). Every error names the line and
/// column of the entry (or the line) at fault; an accepted order always simulates.
pub fn parse_order(
    text: &str,
    path: &Path,
    program: &HeteroProgram,
    processors: usize,
    alloc: &[u32],
) -> Result<Vec<Vec<u32>>, Error> {
    if alloc.len() != program.tasks() || alloc.iter().any(|&p| p as usize >= processors) {
        return Err(Error::Mismatch(format!(
            "the allocation for the order {} does not give one of the {processors} processors to each of the {} tasks",
            path.display(),
            program.tasks()
        )));
    }
    let mut r = OrderReader {
        path,
        program,
        alloc,
        processors,
        index: program
            .subtask_names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i as u32))
            .collect(),
        order: Vec::new(),
        places: Vec::new(),
        lines: 0,
        listed: vec![None; program.subtasks()],
    };
    for (li, raw) in text.lines().enumerate() {
        r.lines = li + 1;
        r.read_line(li, raw)?;
    }
    r.check_all_listed()?;
    let mut order = r.order;
    order.resize(processors, Vec::new());
    check_finishes(path, program, &order, &r.places)?;
    Ok(order)
}

/// The lines of an order file read so far.
struct OrderReader<'a> {
    /// Names the input in errors.
    path: &'a Path,
    /// The program ordered.
    program: &'a HeteroProgram,
    /// The processor of each task.
    alloc: &'a [u32],
    /// Processors of the platform.
    processors: usize,
    /// Every sub-task by name.
    index: HashMap<&'a str, u32>,
    /// The sub-tasks of each processor line so far, in order.
    order: Vec<Vec<u32>>,
    /// Line and column of every entry.
    places: Vec<Vec<(usize, usize)>>,
    /// Lines read.
    lines: usize,
    /// Where each sub-task is listed.
    listed: Vec<Option<(usize, usize)>>,
}

impl OrderReader<'_> {
    /// The parse error at `line` and `column`.
    fn err(&self, line: usize, column: usize, message: String) -> Error {
        Error::parse(self.path, line, column, message)
    }

    /// Reads line `li` (0-based), the sub-tasks of processor `li`, in order.
    fn read_line(&mut self, li: usize, raw: &str) -> Result<(), Error> {
        let (program, processors) = (self.program, self.processors);
        if let Some(c) = raw.find('\r') {
            return Err(self.err(
                li + 1,
                c + 1,
                "a carriage return not followed by a line feed".into(),
            ));
        }
        if li >= processors {
            if raw.split('#').next().unwrap_or("").trim().is_empty() {
                return Ok(());
            }
            return Err(self.err(
                li + 1,
                1,
                format!("a line for processor {li}, but the platform has {processors}"),
            ));
        }
        let body = raw.split('#').next().unwrap_or("");
        let (mut list, mut at) = (Vec::new(), Vec::new());
        for t in body.split_whitespace() {
            let c = t.as_ptr() as usize - body.as_ptr() as usize + 1;
            let &s = self
                .index
                .get(t)
                .ok_or_else(|| self.err(li + 1, c, format!("unknown sub-task \"{t}\"")))?;
            if let Some((l0, c0)) = self.listed[s as usize] {
                return Err(self.err(
                    li + 1,
                    c,
                    format!("sub-task \"{t}\" is listed a second time (first at {l0}:{c0})"),
                ));
            }
            let task = program.subtask_task[s as usize] as usize;
            if self.alloc[task] as usize != li {
                return Err(self.err(
                    li + 1,
                    c,
                    format!(
                        "sub-task \"{t}\" is on the line of processor {li}, but its task {} is allocated to processor {}",
                        program.task_names[task], self.alloc[task]
                    ),
                ));
            }
            self.listed[s as usize] = Some((li + 1, c));
            list.push(s);
            at.push((li + 1, c));
        }
        self.order.push(list);
        self.places.push(at);
        Ok(())
    }

    /// Checks, once every line is read, that every sub-task is listed.
    fn check_all_listed(&self) -> Result<(), Error> {
        let program = self.program;
        let lines = self.lines;
        if let Some(s) = self.listed.iter().position(Option::is_none) {
            let task = program.subtask_task[s] as usize;
            let p = self.alloc[task] as usize;
            let (line, what) = if p < lines {
                (p + 1, format!("the line of processor {p}"))
            } else {
                (
                    lines.max(1),
                    format!("the order has no line for processor {p}, which"),
                )
            };
            return Err(self.err(
                line,
                1,
                format!(
                    "{what} does not list sub-task \"{}\" (of task {}, allocated to processor {p})",
                    program.subtask_names[s], program.task_names[task]
                ),
            ));
        }
        Ok(())
    }
}

/// Checks that no processor waits forever under `order` (its entries placed by
/// `places`): that happens iff the dependencies and the processors' orders form a cycle,
/// so they run as a graph (Kahn), each processor's entries one after the other.
fn check_finishes(
    path: &Path,
    program: &HeteroProgram,
    order: &[Vec<u32>],
    places: &[Vec<(usize, usize)>],
) -> Result<(), Error> {
    let n = program.subtasks();
    let mut pending: Vec<u32> = (0..n).map(|s| program.inputs(s)).collect();
    let mut pos = vec![(0u32, 0u32); n];
    for (p, list) in order.iter().enumerate() {
        for (i, &s) in list.iter().enumerate() {
            pos[s as usize] = (p as u32, i as u32);
            pending[s as usize] += u32::from(i > 0);
        }
    }
    let mut ready: Vec<u32> = (0..n as u32)
        .filter(|&s| pending[s as usize] == 0)
        .collect();
    let mut done = vec![false; n];
    while let Some(s) = ready.pop() {
        let s = s as usize;
        done[s] = true;
        let (p, i) = pos[s];
        let after = order[p as usize].get(i as usize + 1).map(|&y| y as usize);
        let chain = program.next_in_task(s);
        let msgs = program.outgoing(s).map(|m| m.to as usize);
        for y in after.into_iter().chain(chain).chain(msgs) {
            pending[y] -= 1;
            if pending[y] == 0 {
                ready.push(y as u32);
            }
        }
    }
    for (p, list) in order.iter().enumerate() {
        if let Some(i) = list.iter().position(|&s| !done[s as usize]) {
            let (l, c) = places[p][i];
            return Err(Error::parse(
                path,
                l,
                c,
                format!(
                    "the order never finishes: processor {p} waits here for sub-task \"{}\", whose inputs depend on sub-tasks queued behind others",
                    program.subtask_names[list[i] as usize]
                ),
            ));
        }
    }
    Ok(())
}
