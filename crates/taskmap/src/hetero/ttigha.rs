//! Heterogeneous multi-cluster programs: the TTIGHa model of De Giusti et al. (Temporal
//! Task Interaction Graph in Heterogeneous Architecture).
//!
//! A [`Platform`] has processors of several types (each type with its machine count) and
//! communication types (a startup time and a time per byte), one for every pair of
//! processors. A [`HeteroProgram`] has tasks made of sub-tasks (computation phases, run in
//! their order on the task's processor), a time per processor type for every sub-task, and
//! messages between sub-tasks of different tasks: the receiving sub-task starts once the
//! sending one has finished and the data have arrived.
//!
//! # The file format
//!
//! ```text
//! # platform                    ('#' starts a comment; keywords are case-insensitive)
//! PROCTYPE p4 2                 # a processor type and its machine count: processors 0-1
//! PROCTYPE celeron 2            # processors 2-3
//! COMM lan 50 0.01              # a communication type: startup time, time per byte
//! COMM switch 400 0.08
//! LINK * * switch               # processor set, processor set, communication type
//! LINK p4 p4 lan                # sets: *, a type name, a processor 3 or a range 2-3;
//! LINK celeron celeron lan      # later lines override earlier ones
//! # program
//! TASK A
//!   SUBTASK a1 100 150          # a time per processor type, in PROCTYPE order
//!   SUBTASK a2 50 80
//! TASK B
//!   SUBTASK b1 70 90
//! SEND a1 b1 2000               # a message of 2000 bytes from sub-task a1 to sub-task b1
//! ```
//!
//! * Processors are numbered in `PROCTYPE` order. Every pair of distinct processors needs
//!   a communication type; a message between sub-tasks on one processor costs nothing.
//! * Names are unique within their kind (types, communication types, tasks, sub-tasks).
//! * Times and per-byte times are finite reals `>= 0`; counts and bytes are integers.
//! * A `SEND` joins sub-tasks of two different tasks (a task's own sub-tasks already run
//!   in order). Several `SEND`s between the same pair are separate messages, each paying
//!   the startup time. The sub-tasks and their messages must not form a cycle.
//!
//! Errors name `file:line:column` and what is wrong.

use std::collections::HashMap;
use std::path::Path;

use crate::error::Error;

/// Most processors a platform may have (its link table has one entry per ordered pair).
pub const MAX_PROCESSORS: usize = 4096;

/// Most processor pairs the `LINK` lines of a file may name in all (each costs a write).
const MAX_LINK_PAIRS: u64 = 1 << 26;

/// A time as written: a finite real `>= 0` (`-0` read as 0), or `None`.
pub(crate) fn time_value(t: &str) -> Option<f64> {
    t.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v + 0.0)
}

/// The error when times add up beyond the largest float.
const TOO_LONG: &str = "the times add up beyond the largest float (about 1.8e308), so the final time could not be computed";

/// The error when the task times and the messages, each at the platform's slowest
/// communication, add up beyond the largest float: the platform's COMM lines are to blame
/// as much as the program.
pub const TOO_LONG_COMM: &str = "the task times and the messages, each at the platform's slowest communication (a COMM line's startup + bytes × time per byte), add up beyond the largest float (about 1.8e308), so the final time could not be computed";

/// Marks "no communication type" on the diagonal of [`Platform::link`].
const NO_LINK: u32 = u32::MAX;

/// What the workflow readers add to a negative runtime's or size's error.
pub(crate) const NEGATIVE_HINT: &str =
    "(--negative-as-zero reads negative sizes and runtimes as 0)";

/// The machine: typed processors and a communication type per pair of processors.
#[derive(Clone, Debug, PartialEq)]
pub struct Platform {
    /// Names of the processor types, in declaration order.
    pub type_names: Vec<String>,
    /// Type of each processor.
    pub proc_type: Vec<u32>,
    /// Names of the communication types.
    pub comm_names: Vec<String>,
    /// Startup time of each communication type.
    pub startup: Vec<f64>,
    /// Time per byte of each communication type.
    pub per_byte: Vec<f64>,
    /// Communication type of each ordered pair `s * processors + d` (none on the diagonal).
    link: Vec<u32>,
}

impl Platform {
    /// Builds a platform from its parts; `link(s, d)` gives the communication type of two
    /// distinct processors (it must be symmetric and below `startup.len()`).
    pub fn new(
        type_names: Vec<String>,
        proc_type: Vec<u32>,
        comms: Vec<(String, f64, f64)>,
        link: impl Fn(usize, usize) -> u32,
    ) -> Self {
        let m = proc_type.len();
        let mut table = vec![NO_LINK; m * m];
        for s in 0..m {
            for d in 0..m {
                if s != d {
                    let c = link(s, d);
                    assert!((c as usize) < comms.len(), "link type out of range");
                    table[s * m + d] = c;
                }
            }
        }
        let (comm_names, rest): (Vec<String>, Vec<(f64, f64)>) =
            comms.into_iter().map(|(n, a, b)| (n, (a, b))).unzip();
        let (startup, per_byte) = rest.into_iter().unzip();
        Platform {
            type_names,
            proc_type,
            comm_names,
            startup,
            per_byte,
            link: table,
        }
    }

    /// Number of processors.
    pub fn processors(&self) -> usize {
        self.proc_type.len()
    }

    /// Number of processor types.
    pub fn types(&self) -> usize {
        self.type_names.len()
    }

    /// Number of processors of each type.
    pub fn type_counts(&self) -> Vec<usize> {
        let mut count = vec![0usize; self.types()];
        for &t in &self.proc_type {
            count[t as usize] += 1;
        }
        count
    }

    /// Communication type between two distinct processors (`None` when `s == d`).
    pub fn link(&self, s: usize, d: usize) -> Option<u32> {
        let c = self.link[s * self.processors() + d];
        (c != NO_LINK).then_some(c)
    }

    /// Time of `messages` messages carrying `bytes` bytes in all from processor `s` to
    /// processor `d`: `messages · startup(s,d) + bytes · com(s,d)` (eq. 3), zero when
    /// `s == d`.
    pub fn comm_time(&self, s: usize, d: usize, messages: u64, bytes: u64) -> f64 {
        match self.link(s, d) {
            None => 0.0,
            Some(c) => {
                let c = c as usize;
                messages as f64 * self.startup[c] + bytes as f64 * self.per_byte[c]
            }
        }
    }

    /// The longest time one message of `bytes` bytes can take on any communication type.
    pub fn worst_message(&self, bytes: u64) -> f64 {
        self.startup
            .iter()
            .zip(&self.per_byte)
            .map(|(s, b)| s + bytes as f64 * b)
            .fold(0.0, f64::max)
    }

    /// Classes of interchangeable processors: the class id of each processor. Two
    /// processors are interchangeable when they have the same type and the same
    /// communication type to every other processor.
    pub fn symmetry_classes(&self) -> Vec<u32> {
        let m = self.processors();
        // Interchangeable processors have the same type and the same multiset of
        // communication types to the others: bucket by both (a hash of the sorted row),
        // then compare each processor with the first member of its bucket's classes only
        // (interchangeability is transitive). O(M² log M) to bucket.
        let key = |i: usize| {
            use std::hash::{Hash, Hasher};
            let mut row: Vec<u32> = (0..m)
                .filter(|&r| r != i)
                .map(|r| self.link[i * m + r])
                .collect();
            row.sort_unstable();
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (self.proc_type[i], row).hash(&mut h);
            h.finish()
        };
        let mut buckets: HashMap<u64, Vec<usize>> = HashMap::new();
        for i in 0..m {
            buckets.entry(key(i)).or_default().push(i);
        }
        let same = |a: usize, j: usize| {
            self.proc_type[a] == self.proc_type[j]
                && (0..m)
                    .filter(|&r| r != a && r != j)
                    .all(|r| self.link[a * m + r] == self.link[j * m + r])
        };
        let mut class = vec![u32::MAX; m];
        let mut next = 0u32;
        for i in 0..m {
            if class[i] != u32::MAX {
                continue;
            }
            class[i] = next;
            for &j in &buckets[&key(i)] {
                if j > i && class[j] == u32::MAX && same(i, j) {
                    class[j] = next;
                }
            }
            next += 1;
        }
        class
    }
}

/// A sub-task as given to [`HeteroProgram::new`]: its name and its time per processor type.
pub type SubtaskSpec = (String, Vec<f64>);

/// A task as given to [`HeteroProgram::new`]: its name and its sub-tasks, in order.
pub type TaskSpec = (String, Vec<SubtaskSpec>);

/// A message from one sub-task to a sub-task of another task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubtaskMessage {
    pub from: u32,
    pub to: u32,
    pub bytes: u64,
}

/// The application: tasks of sub-tasks, their times per processor type, their messages.
#[derive(Clone, Debug, PartialEq)]
pub struct HeteroProgram {
    /// Task names, in declaration order.
    pub task_names: Vec<String>,
    /// Sub-tasks of task `t` are `task_first[t]..task_first[t + 1]`, in execution order.
    pub task_first: Vec<u32>,
    /// Sub-task names.
    pub subtask_names: Vec<String>,
    /// Task of each sub-task.
    pub subtask_task: Vec<u32>,
    /// `times[s * types + p]`: time of sub-task `s` on a processor of type `p`.
    pub times: Vec<f64>,
    /// Number of processor types the times are given for.
    pub types: usize,
    /// The messages.
    pub messages: Vec<SubtaskMessage>,
    /// Messages out of sub-task `s`: `out_msgs[out_first[s]..out_first[s + 1]]`.
    pub out_first: Vec<u32>,
    pub out_msgs: Vec<u32>,
    /// Messages into sub-task `s`: `in_msgs[in_first[s]..in_first[s + 1]]`.
    pub in_first: Vec<u32>,
    pub in_msgs: Vec<u32>,
    /// Position of each sub-task in the priority order: a topological order of the
    /// sub-tasks that keeps the declaration order wherever the dependencies allow.
    pub rank: Vec<u32>,
}

/// The program would deadlock: a cycle through these sub-tasks (by message index).
#[derive(Debug)]
pub struct CycleError {
    /// A message on the cycle.
    pub message: u32,
}

impl HeteroProgram {
    /// Builds a program: `tasks[t]` lists the sub-tasks of task `t` as (name, time per
    /// type); `messages` join sub-tasks by their global index (tasks' sub-tasks numbered
    /// in order). Errors with a message on a cycle if the dependencies are cyclic.
    ///
    /// # Panics
    ///
    /// If a message names a sub-task out of range or joins two sub-tasks of one task, or a
    /// time vector's length differs from `types`, or a time is negative or not finite.
    pub fn new(
        types: usize,
        tasks: Vec<TaskSpec>,
        messages: Vec<SubtaskMessage>,
    ) -> Result<Self, CycleError> {
        let mut task_names = Vec::with_capacity(tasks.len());
        let mut task_first = vec![0u32];
        let mut subtask_names = Vec::new();
        let mut subtask_task = Vec::new();
        let mut times = Vec::new();
        for (t, (name, subs)) in tasks.into_iter().enumerate() {
            task_names.push(name);
            for (sname, tv) in subs {
                assert_eq!(tv.len(), types, "one time per processor type");
                assert!(
                    tv.iter().all(|x| x.is_finite() && *x >= 0.0),
                    "times are finite and >= 0"
                );
                subtask_names.push(sname);
                subtask_task.push(t as u32);
                times.extend_from_slice(&tv);
            }
            task_first.push(subtask_names.len() as u32);
        }
        let n = subtask_names.len();
        for m in &messages {
            assert!(
                (m.from as usize) < n && (m.to as usize) < n,
                "sub-task out of range"
            );
            assert_ne!(
                subtask_task[m.from as usize], subtask_task[m.to as usize],
                "a message joins two tasks"
            );
        }
        let csr = |key: &dyn Fn(&SubtaskMessage) -> u32| {
            let mut first = vec![0u32; n + 1];
            for m in &messages {
                first[key(m) as usize + 1] += 1;
            }
            for i in 0..n {
                first[i + 1] += first[i];
            }
            let mut fill = first.clone();
            let mut list = vec![0u32; messages.len()];
            for (i, m) in messages.iter().enumerate() {
                let k = key(m) as usize;
                list[fill[k] as usize] = i as u32;
                fill[k] += 1;
            }
            (first, list)
        };
        let (out_first, out_msgs) = csr(&|m| m.from);
        let (in_first, in_msgs) = csr(&|m| m.to);
        let mut p = HeteroProgram {
            task_names,
            task_first,
            subtask_names,
            subtask_task,
            times,
            types,
            messages,
            out_first,
            out_msgs,
            in_first,
            in_msgs,
            rank: Vec::new(),
        };
        p.rank = p.priority_ranks()?;
        Ok(p)
    }

    /// Number of tasks.
    pub fn tasks(&self) -> usize {
        self.task_names.len()
    }

    /// Number of sub-tasks.
    pub fn subtasks(&self) -> usize {
        self.subtask_names.len()
    }

    /// Sub-tasks of task `t`, in execution order.
    pub fn subtasks_of(&self, t: usize) -> std::ops::Range<usize> {
        self.task_first[t] as usize..self.task_first[t + 1] as usize
    }

    /// Time of sub-task `s` on a processor of type `p`.
    pub fn time(&self, s: usize, p: usize) -> f64 {
        self.times[s * self.types + p]
    }

    /// `w_p(T)`: the time of task `t` on a processor of type `p` (eq. 1).
    pub fn task_time(&self, t: usize, p: usize) -> f64 {
        self.subtasks_of(t).map(|s| self.time(s, p)).sum()
    }

    /// The sub-task before `s` in its task, if any.
    pub fn previous(&self, s: usize) -> Option<usize> {
        (s as u32 > self.task_first[self.subtask_task[s] as usize]).then(|| s - 1)
    }

    /// The sub-task after `s` in its task, if any.
    pub fn next_in_task(&self, s: usize) -> Option<usize> {
        (s + 1 < self.task_first[self.subtask_task[s] as usize + 1] as usize).then_some(s + 1)
    }

    /// Messages out of sub-task `s`.
    pub fn outgoing(&self, s: usize) -> impl Iterator<Item = &SubtaskMessage> {
        self.out_msgs[self.out_first[s] as usize..self.out_first[s + 1] as usize]
            .iter()
            .map(|&i| &self.messages[i as usize])
    }

    /// Messages into sub-task `s`.
    pub fn incoming(&self, s: usize) -> impl Iterator<Item = &SubtaskMessage> {
        self.in_msgs[self.in_first[s] as usize..self.in_first[s + 1] as usize]
            .iter()
            .map(|&i| &self.messages[i as usize])
    }

    /// What sub-task `s` waits for before it can start: its messages in, and the sub-task
    /// before it in its task.
    pub fn inputs(&self, s: usize) -> u32 {
        (self.in_first[s + 1] - self.in_first[s]) + u32::from(self.previous(s).is_some())
    }

    /// Kahn's algorithm over the sub-task dependencies (task order and messages), taking
    /// the lowest ready sub-task first.
    fn priority_ranks(&self) -> Result<Vec<u32>, CycleError> {
        let n = self.subtasks();
        let mut pending: Vec<u32> = (0..n).map(|s| self.inputs(s)).collect();
        let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<u32>> = (0..n as u32)
            .filter(|&s| pending[s as usize] == 0)
            .map(std::cmp::Reverse)
            .collect();
        let mut rank = vec![u32::MAX; n];
        let mut next = 0u32;
        while let Some(std::cmp::Reverse(s)) = heap.pop() {
            let s = s as usize;
            rank[s] = next;
            next += 1;
            for y in self
                .outgoing(s)
                .map(|m| m.to as usize)
                .chain(self.next_in_task(s))
            {
                pending[y] -= 1;
                if pending[y] == 0 {
                    heap.push(std::cmp::Reverse(y as u32));
                }
            }
        }
        if (next as usize) < n {
            // Every unranked sub-task waits for an unranked predecessor: walk back through
            // them until one repeats; the loop holds a message (a task's own order has no
            // cycle).
            let mut x = (0..n)
                .find(|&s| rank[s] == u32::MAX)
                .expect("an unranked sub-task");
            let mut seen_at = vec![usize::MAX; n];
            let mut path: Vec<(usize, Option<u32>)> = Vec::new(); // (sub-task, message into it)
            loop {
                if seen_at[x] != usize::MAX {
                    // The arcs into the sub-tasks from x's first visit on form the loop.
                    let message = path[seen_at[x]..]
                        .iter()
                        .find_map(|&(_, m)| m)
                        .expect("a cycle holds a message");
                    return Err(CycleError { message });
                }
                seen_at[x] = path.len();
                // The predecessor x waits for, and the message from it (None: the sub-task
                // before x in its task).
                let (pred, via) = match self.previous(x).filter(|&p| rank[p] == u32::MAX) {
                    Some(p) => (p, None),
                    None => {
                        let i = self.in_msgs
                            [self.in_first[x] as usize..self.in_first[x + 1] as usize]
                            .iter()
                            .copied()
                            .find(|&i| rank[self.messages[i as usize].from as usize] == u32::MAX)
                            .expect("an unranked sub-task waits for an unranked one");
                        (self.messages[i as usize].from as usize, Some(i))
                    }
                };
                // Record the arc pred -> x on x's entry.
                path.push((x, via));
                x = pred;
            }
        }
        Ok(rank)
    }
}

/// A platform and a program, as read from one file.
#[derive(Clone, Debug, PartialEq)]
pub struct Ttigha {
    pub platform: Platform,
    pub program: HeteroProgram,
}

/// Reads a TTIGHa file (see the module documentation).
pub fn read_ttigha(path: &Path) -> Result<Ttigha, Error> {
    with_text(path, |text| parse_ttigha(text, path))
}

/// Reads `path` (gzip-compressed or not) as UTF-8 text without a byte-order mark and
/// hands it to `parse`.
pub(crate) fn with_text<T>(
    path: &Path,
    parse: impl FnOnce(&str) -> Result<T, Error>,
) -> Result<T, Error> {
    let raw = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let raw = taskmap_graph::decompress(&raw, path)?;
    parse(crate::error::utf8_text(&raw, path)?)
}

/// A token and its 1-based column.
type Tok<'a> = (usize, &'a str);

/// Parses TTIGHa text; `path` names the input in errors.
pub fn parse_ttigha(text: &str, path: &Path) -> Result<Ttigha, Error> {
    let (platform, program) = parse_parts(text, path, false)?;
    Ok(Ttigha {
        platform,
        program: program.expect("a program was asked for"),
    })
}

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
    let err = |line: usize, column: usize, message: String| Error::Parse {
        path: path.to_path_buf(),
        line,
        column,
        message,
    };
    if alloc.len() != program.tasks() || alloc.iter().any(|&p| p as usize >= processors) {
        return Err(Error::Mismatch(format!(
            "the allocation for the order {} does not give one of the {processors} processors to each of the {} tasks",
            path.display(),
            program.tasks()
        )));
    }
    let index: HashMap<&str, u32> = program
        .subtask_names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i as u32))
        .collect();
    let name = |s: u32| &program.subtask_names[s as usize];
    let mut order = Vec::new();
    // Line and column of every entry.
    let mut places: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut lines = 0;
    // Where each sub-task is listed.
    let mut listed: Vec<Option<(usize, usize)>> = vec![None; program.subtasks()];
    for (li, raw) in text.lines().enumerate() {
        lines = li + 1;
        if let Some(c) = raw.find('\r') {
            return Err(err(
                li + 1,
                c + 1,
                "a carriage return not followed by a line feed".into(),
            ));
        }
        if li >= processors {
            if raw.split('#').next().unwrap_or("").trim().is_empty() {
                continue;
            }
            return Err(err(
                li + 1,
                1,
                format!("a line for processor {li}, but the platform has {processors}"),
            ));
        }
        let body = raw.split('#').next().unwrap_or("");
        let (mut list, mut at) = (Vec::new(), Vec::new());
        for t in body.split_whitespace() {
            let c = t.as_ptr() as usize - body.as_ptr() as usize + 1;
            let &s = index
                .get(t)
                .ok_or_else(|| err(li + 1, c, format!("unknown sub-task \"{t}\"")))?;
            if let Some((l0, c0)) = listed[s as usize] {
                return Err(err(
                    li + 1,
                    c,
                    format!("sub-task \"{t}\" is listed a second time (first at {l0}:{c0})"),
                ));
            }
            let task = program.subtask_task[s as usize] as usize;
            if alloc[task] as usize != li {
                return Err(err(
                    li + 1,
                    c,
                    format!(
                        "sub-task \"{t}\" is on the line of processor {li}, but its task {} is allocated to processor {}",
                        program.task_names[task], alloc[task]
                    ),
                ));
            }
            listed[s as usize] = Some((li + 1, c));
            list.push(s);
            at.push((li + 1, c));
        }
        order.push(list);
        places.push(at);
    }
    if let Some(s) = listed.iter().position(Option::is_none) {
        let task = program.subtask_task[s] as usize;
        let p = alloc[task] as usize;
        let (line, what) = if p < lines {
            (p + 1, format!("the line of processor {p}"))
        } else {
            (
                lines.max(1),
                format!("the order has no line for processor {p}, which"),
            )
        };
        return Err(err(
            line,
            1,
            format!(
                "{what} does not list sub-task \"{}\" (of task {}, allocated to processor {p})",
                name(s as u32),
                program.task_names[task]
            ),
        ));
    }
    order.resize(processors, Vec::new());
    // A processor waits forever iff the dependencies and the processors' orders form a
    // cycle: run them as a graph (Kahn), each processor's entries one after the other.
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
            return Err(err(
                l,
                c,
                format!(
                    "the order never finishes: processor {p} waits here for sub-task \"{}\", whose inputs depend on sub-tasks queued behind others",
                    name(list[i])
                ),
            ));
        }
    }
    Ok(order)
}

/// Reads a platform file: the `PROCTYPE`, `COMM` and `LINK` lines of the format, alone.
pub fn read_platform(path: &Path) -> Result<Platform, Error> {
    with_text(path, |text| parse_platform(text, path))
}

/// Parses a platform file; `path` names the input in errors.
pub fn parse_platform(text: &str, path: &Path) -> Result<Platform, Error> {
    Ok(parse_parts(text, path, true)?.0)
}

/// The platform, and unless `platform_only` the program, of a file.
fn parse_parts(
    text: &str,
    path: &Path,
    platform_only: bool,
) -> Result<(Platform, Option<HeteroProgram>), Error> {
    let err = |line: usize, column: usize, message: String| Error::Parse {
        path: path.to_path_buf(),
        line,
        column,
        message,
    };
    let mut type_names: Vec<String> = Vec::new();
    let mut type_line: Vec<usize> = Vec::new();
    let mut proc_type: Vec<u32> = Vec::new();
    let mut comms: Vec<(String, f64, f64)> = Vec::new();
    let mut comm_index: HashMap<String, u32> = HashMap::new();
    let mut links: Vec<(usize, Vec<Tok>)> = Vec::new();
    let mut tasks: Vec<TaskSpec> = Vec::new();
    let mut task_line: Vec<usize> = Vec::new();
    let mut task_index: HashMap<String, usize> = HashMap::new();
    let mut sub_index: HashMap<String, (u32, usize)> = HashMap::new();
    let mut nsub = 0u32;
    let mut sends: Vec<(usize, Vec<Tok>)> = Vec::new();
    let mut last_line = 0usize;
    // Every sub-task's longest time plus every message's longest time: the simulated
    // final time stays below this, so it must be finite.
    let mut total = 0.0f64;
    let mut pairs = 0u64;
    for (li, raw) in text.lines().enumerate() {
        let line = li + 1;
        last_line = line;
        if let Some(c) = raw.find('\r') {
            return Err(err(
                line,
                c + 1,
                "a carriage return not followed by a line feed".into(),
            ));
        }
        let body = raw.split('#').next().unwrap_or("");
        let toks: Vec<Tok> = body
            .split_whitespace()
            .map(|t| (t.as_ptr() as usize - body.as_ptr() as usize + 1, t))
            .collect();
        let Some(&(kcol, kw)) = toks.first() else {
            continue;
        };
        let kw_up = kw.to_ascii_uppercase();
        if platform_only && matches!(kw_up.as_str(), "TASK" | "SUBTASK" | "SEND") {
            return Err(err(
                line,
                kcol,
                format!("{kw_up} in a platform file (it holds PROCTYPE, COMM and LINK lines only)"),
            ));
        }
        let nargs = match kw_up.as_str() {
            "TASK" => 1,
            "PROCTYPE" => 2,
            "LINK" | "COMM" | "SEND" => 3,
            "SUBTASK" if type_names.is_empty() => {
                return Err(err(line, kcol, "SUBTASK before any PROCTYPE".into()))
            }
            "SUBTASK" => 1 + type_names.len(),
            _ => {
                return Err(err(
                    line,
                    kcol,
                    format!(
                        "unknown keyword \"{kw}\" (expected PROCTYPE, COMM, LINK, TASK, SUBTASK or SEND)"
                    ),
                ))
            }
        };
        if toks.len() != nargs + 1 {
            let (c, what) = if toks.len() > nargs + 1 {
                (
                    toks[nargs + 1].0,
                    format!("unexpected \"{}\"", toks[nargs + 1].1),
                )
            } else {
                (body.trim_end().len() + 1, "missing value".to_string())
            };
            let needs = if kw_up == "SUBTASK" {
                format!(
                    "a name and one time per processor type ({} type(s) declared)",
                    type_names.len()
                )
            } else {
                format!("{nargs} value(s)")
            };
            return Err(err(line, c, format!("{what}: {kw_up} takes {needs}")));
        }
        let name = |k: usize, what: &str| -> Result<String, Error> {
            let (c, t) = toks[k];
            if t == "*" || t.starts_with(|ch: char| ch.is_ascii_digit() || ch == '-') {
                return Err(err(
                    line,
                    c,
                    format!("{what} must not be \"*\" or start with a digit or '-', found \"{t}\""),
                ));
            }
            Ok(t.to_string())
        };
        let real = |k: usize, what: &str| -> Result<f64, Error> {
            let (c, t) = toks[k];
            time_value(t).ok_or_else(|| {
                err(
                    line,
                    c,
                    format!("expected {what} (a finite real >= 0), found \"{t}\""),
                )
            })
        };
        match kw_up.as_str() {
            "PROCTYPE" => {
                if nsub > 0 {
                    return Err(err(line, kcol, "PROCTYPE after the first SUBTASK (sub-tasks give one time per type, so the types come first)".into()));
                }
                let n = name(1, "a processor type name")?;
                if let Some(i) = type_names.iter().position(|x| *x == n) {
                    return Err(err(
                        line,
                        toks[1].0,
                        format!(
                            "processor type \"{n}\" is declared twice (first at line {})",
                            type_line[i]
                        ),
                    ));
                }
                let (c, t) = toks[2];
                let count = match t.parse::<usize>() {
                    Ok(v) if v >= 1 && v <= MAX_PROCESSORS - proc_type.len() => v,
                    _ if proc_type.len() == MAX_PROCESSORS => {
                        return Err(err(line, c, format!(
                            "the platform already has {MAX_PROCESSORS} processors, the most it may have"
                        )))
                    }
                    _ => {
                        return Err(err(line, c, format!(
                            "expected a machine count from 1 to {} (at most {MAX_PROCESSORS} processors in all), found \"{t}\"",
                            MAX_PROCESSORS - proc_type.len()
                        )))
                    }
                };
                proc_type.extend(std::iter::repeat_n(type_names.len() as u32, count));
                type_names.push(n);
                type_line.push(line);
            }
            "COMM" => {
                let n = name(1, "a communication type name")?;
                if comm_index.contains_key(&n) {
                    return Err(err(
                        line,
                        toks[1].0,
                        format!("communication type \"{n}\" is declared twice"),
                    ));
                }
                let startup = real(2, "a startup time")?;
                let per_byte = real(3, "a time per byte")?;
                comm_index.insert(n.clone(), comms.len() as u32);
                comms.push((n, startup, per_byte));
            }
            "LINK" => links.push((line, toks[1..].to_vec())),
            "SEND" => sends.push((line, toks[1..].to_vec())),
            "TASK" => {
                let n = name(1, "a task name")?;
                if let Some(&i) = task_index.get(&n) {
                    return Err(err(
                        line,
                        toks[1].0,
                        format!(
                            "task \"{n}\" is declared twice (first at line {})",
                            task_line[i]
                        ),
                    ));
                }
                task_index.insert(n.clone(), tasks.len());
                tasks.push((n, Vec::new()));
                task_line.push(line);
            }
            "SUBTASK" => {
                let Some(task) = tasks.last_mut() else {
                    return Err(err(line, kcol, "SUBTASK outside a TASK".into()));
                };
                let n = name(1, "a sub-task name")?;
                if let Some(&(_, l)) = sub_index.get(&n) {
                    return Err(err(
                        line,
                        toks[1].0,
                        format!("sub-task \"{n}\" is declared twice (first at line {l})"),
                    ));
                }
                let times = (0..type_names.len())
                    .map(|p| real(2 + p, "a time"))
                    .collect::<Result<Vec<f64>, Error>>()?;
                total += times.iter().copied().fold(0.0, f64::max);
                if !total.is_finite() {
                    return Err(err(line, toks[2].0, TOO_LONG.into()));
                }
                sub_index.insert(n.clone(), (nsub, line));
                nsub = nsub
                    .checked_add(1)
                    .ok_or_else(|| err(line, kcol, "too many sub-tasks".into()))?;
                task.1.push((n, times));
            }
            _ => unreachable!(),
        }
    }
    let end = last_line.max(1);
    if type_names.is_empty() {
        return Err(err(
            end,
            1,
            "no PROCTYPE: the platform has no processors".into(),
        ));
    }
    if tasks.is_empty() && !platform_only {
        return Err(err(end, 1, "no TASK: the program is empty".into()));
    }
    if let Some(t) = tasks.iter().position(|t| t.1.is_empty()) {
        return Err(err(
            task_line[t],
            1,
            format!("task \"{}\" has no SUBTASK", tasks[t].0),
        ));
    }
    // Links, in file order, later ones overriding.
    let m = proc_type.len();
    let mut table = vec![NO_LINK; m * m];
    for (line, toks) in &links {
        let set = |(c, t): Tok| -> Result<Vec<usize>, Error> {
            if t == "*" {
                return Ok((0..m).collect());
            }
            if let Some(p) = type_names.iter().position(|x| x == t) {
                return Ok((0..m).filter(|&i| proc_type[i] as usize == p).collect());
            }
            let (a, b) = match t.split_once('-') {
                Some((a, b)) => (a, b),
                None => (t, t),
            };
            match (a.parse::<usize>(), b.parse::<usize>()) {
                (Ok(a), Ok(b)) if a <= b && b < m => Ok((a..=b).collect()),
                _ => Err(err(*line, c, format!(
                    "expected \"*\", a processor type, a processor or a range i-j of processors 0-{}, found \"{t}\"",
                    m - 1
                ))),
            }
        };
        let (xs, ys) = (set(toks[0])?, set(toks[1])?);
        pairs += (xs.len() * ys.len()) as u64;
        if pairs > MAX_LINK_PAIRS {
            return Err(err(*line, toks[0].0, format!(
                "the LINK lines name more than {MAX_LINK_PAIRS} (2^26) processor pairs in all; give the common case with \"*\" first"
            )));
        }
        let (c, t) = toks[2];
        let Some(&ct) = comm_index.get(t) else {
            return Err(err(
                *line,
                c,
                format!("unknown communication type \"{t}\" (declare it with COMM)"),
            ));
        };
        for &x in &xs {
            for &y in &ys {
                if x != y {
                    table[x * m + y] = ct;
                    table[y * m + x] = ct;
                }
            }
        }
    }
    for s in 0..m {
        for d in s + 1..m {
            if table[s * m + d] == NO_LINK {
                return Err(err(
                    end,
                    1,
                    format!(
                    "no LINK gives the communication type between processors {s} ({}) and {d} ({})",
                    type_names[proc_type[s] as usize], type_names[proc_type[d] as usize]
                ),
                ));
            }
        }
    }
    let ntypes = type_names.len();
    let platform = Platform {
        type_names,
        proc_type,
        startup: comms.iter().map(|c| c.1).collect(),
        per_byte: comms.iter().map(|c| c.2).collect(),
        comm_names: comms.into_iter().map(|c| c.0).collect(),
        link: table,
    };
    // Messages.
    let mut sub_task_of = Vec::with_capacity(nsub as usize);
    for (t, task) in tasks.iter().enumerate() {
        sub_task_of.extend(std::iter::repeat_n(t, task.1.len()));
    }
    let mut messages = Vec::with_capacity(sends.len());
    for (line, toks) in &sends {
        let sub = |(c, t): Tok| -> Result<u32, Error> {
            sub_index
                .get(t)
                .map(|&(i, _)| i)
                .ok_or_else(|| err(*line, c, format!("unknown sub-task \"{t}\"")))
        };
        let (from, to) = (sub(toks[0])?, sub(toks[1])?);
        if sub_task_of[from as usize] == sub_task_of[to as usize] {
            return Err(err(*line, toks[1].0, format!(
                "\"{}\" and \"{}\" both belong to task \"{}\"; a task's sub-tasks already run in order",
                toks[0].1, toks[1].1, tasks[sub_task_of[from as usize]].0
            )));
        }
        let (c, t) = toks[2];
        let bytes = t.parse::<u64>().map_err(|_| {
            err(
                *line,
                c,
                format!("expected a byte count (an integer in 0..2^64), found \"{t}\""),
            )
        })?;
        total += platform.worst_message(bytes);
        if !total.is_finite() {
            return Err(err(*line, c, TOO_LONG.into()));
        }
        messages.push(SubtaskMessage { from, to, bytes });
    }
    if platform_only {
        return Ok((platform, None));
    }
    let program = HeteroProgram::new(ntypes, tasks, messages).map_err(|e| {
        let (line, toks) = &sends[e.message as usize];
        err(*line, toks[0].0, format!(
            "this message lies on a cycle of dependencies ({} -> {} and back): the program would deadlock",
            toks[0].1, toks[1].1
        ))
    })?;
    Ok((platform, Some(program)))
}

impl Ttigha {
    /// The file text of this model (read back by [`parse_ttigha`] to an equal model).
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let (pl, pr) = (&self.platform, &self.program);
        let mut s = String::new();
        let count = pl.type_counts();
        for (t, n) in pl.type_names.iter().enumerate() {
            let _ = writeln!(s, "PROCTYPE {n} {}", count[t]);
        }
        for (c, n) in pl.comm_names.iter().enumerate() {
            let _ = writeln!(s, "COMM {n} {:?} {:?}", pl.startup[c], pl.per_byte[c]);
        }
        for a in 0..pl.processors() {
            for b in a + 1..pl.processors() {
                let c = pl.link(a, b).expect("distinct processors have a link");
                let _ = writeln!(s, "LINK {a} {b} {}", pl.comm_names[c as usize]);
            }
        }
        for t in 0..pr.tasks() {
            let _ = writeln!(s, "TASK {}", pr.task_names[t]);
            for sub in pr.subtasks_of(t) {
                let _ = write!(s, "  SUBTASK {}", pr.subtask_names[sub]);
                for p in 0..pr.types {
                    let _ = write!(s, " {:?}", pr.time(sub, p));
                }
                s.push('\n');
            }
        }
        for m in &pr.messages {
            let _ = writeln!(
                s,
                "SEND {} {} {}",
                pr.subtask_names[m.from as usize], pr.subtask_names[m.to as usize], m.bytes
            );
        }
        s
    }
}

/// Parameters of [`random_ttigha`]: a multi-cluster and a random program for it.
#[derive(Clone, Debug)]
pub struct RandomTtigha {
    /// Processor types: name, machine count, slowness (time factor against the base time).
    pub types: Vec<(String, usize, f64)>,
    /// Startup and per-byte time inside a type's cluster (`lan`) and between clusters
    /// (`switch`).
    pub lan: (f64, f64),
    pub switch: (f64, f64),
    /// Number of tasks.
    pub tasks: usize,
    /// Sub-tasks per task: 1 to this.
    pub max_subtasks: usize,
    /// Base time of a sub-task: an integer from `time.0` to `time.1`.
    pub time: (u64, u64),
    /// Each sub-task receives from each earlier sub-task of another task with this
    /// probability.
    pub message_probability: f64,
    /// Bytes of a message: an integer from `bytes.0` to `bytes.1`.
    pub bytes: (u64, u64),
}

impl Default for RandomTtigha {
    /// The paper's machines, 2 of each: cluster 1 (Pentium IV 2.4 GHz) and cluster 2
    /// (Celeron 2 GHz, 1.2 times slower), 100 Mbit/s Ethernet inside a cluster (0.08 time
    /// units per byte, startup 50) and a slower switch between them; 8 tasks.
    fn default() -> Self {
        RandomTtigha {
            types: vec![("c1".into(), 2, 1.0), ("c2".into(), 2, 1.2)],
            lan: (50.0, 0.08),
            switch: (200.0, 0.16),
            tasks: 8,
            max_subtasks: 2,
            time: (20, 200),
            message_probability: 0.15,
            bytes: (100, 2000),
        }
    }
}

/// A random platform and program (deterministic per seed). Times are whole numbers
/// (`round(base · slowness)`), so simulated times are exact sums.
pub fn random_ttigha(params: &RandomTtigha, seed: u64) -> Ttigha {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let type_names: Vec<String> = params.types.iter().map(|t| t.0.clone()).collect();
    let proc_type: Vec<u32> = params
        .types
        .iter()
        .enumerate()
        .flat_map(|(i, t)| std::iter::repeat_n(i as u32, t.1))
        .collect();
    let comms = vec![
        ("lan".to_string(), params.lan.0, params.lan.1),
        ("switch".to_string(), params.switch.0, params.switch.1),
    ];
    let pt = proc_type.clone();
    let platform = Platform::new(type_names, proc_type, comms, move |s, d| {
        u32::from(pt[s] != pt[d])
    });
    let mut tasks = Vec::with_capacity(params.tasks);
    let mut owner = Vec::new();
    for t in 0..params.tasks {
        let k = rng.gen_range(1..=params.max_subtasks.max(1));
        let subs = (0..k)
            .map(|i| {
                let base = rng.gen_range(params.time.0..=params.time.1.max(params.time.0)) as f64;
                let times = params
                    .types
                    .iter()
                    .map(|ty| (base * ty.2).round())
                    .collect();
                owner.push(t);
                (format!("t{t}s{i}"), times)
            })
            .collect();
        tasks.push((format!("t{t}"), subs));
    }
    let mut messages = Vec::new();
    for to in 0..owner.len() {
        for from in 0..to {
            if owner[from] != owner[to] && rng.gen_bool(params.message_probability.clamp(0.0, 1.0))
            {
                let bytes = rng.gen_range(params.bytes.0..=params.bytes.1.max(params.bytes.0));
                messages.push(SubtaskMessage {
                    from: from as u32,
                    to: to as u32,
                    bytes,
                });
            }
        }
    }
    let program = HeteroProgram::new(params.types.len(), tasks, messages)
        .expect("messages go forward in declaration order");
    Ttigha { platform, program }
}

/// Errors unless `slowness` gives one finite factor `>= 0` per processor type.
pub(crate) fn check_slowness(
    path: &Path,
    platform: &Platform,
    slowness: &[f64],
) -> Result<(), Error> {
    if slowness.len() != platform.types() {
        return Err(Error::Config(format!(
            "{}: give one slowness per processor type of the platform ({}), found {}",
            path.display(),
            platform.types(),
            slowness.len()
        )));
    }
    if let Some(s) = slowness.iter().find(|s| !s.is_finite() || **s < 0.0) {
        return Err(Error::Config(format!(
            "{}: a slowness must be a finite real >= 0, found {s}",
            path.display()
        )));
    }
    Ok(())
}

/// Reads a Kasahara STG task graph as a TTIGHa program on `platform`; see
/// [`parse_stg_program`].
pub fn read_stg_program(
    path: &Path,
    platform: Platform,
    slowness: &[f64],
    bytes: u64,
) -> Result<Ttigha, Error> {
    with_text(path, |text| {
        parse_stg_program(text, path, platform, slowness, bytes)
    })
}

/// A Kasahara Standard Task Graph (a count line, then records `id time npred pred…` with
/// ids 0, 1, … in order, then optional `#` lines) as a TTIGHa program: every STG task is a
/// task of one sub-task (named `t<id>`) whose time on processor type `p` is its STG time ×
/// `slowness[p]`, and every precedence arc a message of `bytes` bytes. The dummy entry
/// (the first record, when its time is 0 and it has no predecessor) and exit (the last
/// record, when its time is 0 and no record lists it as a predecessor) and their arcs are
/// left out; a predecessor listed twice counts once.
pub fn parse_stg_program(
    text: &str,
    path: &Path,
    platform: Platform,
    slowness: &[f64],
    bytes: u64,
) -> Result<Ttigha, Error> {
    let err = |line: usize, column: usize, message: String| Error::Parse {
        path: path.to_path_buf(),
        line,
        column,
        message,
    };
    check_slowness(path, &platform, slowness)?;
    // Tokens with their places, up to the first '#' line.
    let mut toks: Vec<(usize, usize, &str)> = Vec::new();
    let mut last_line = 1;
    for (li, raw) in text.lines().enumerate() {
        last_line = li + 1;
        if raw.trim_start().starts_with('#') {
            break;
        }
        if let Some(c) = raw.find('\r') {
            return Err(err(
                li + 1,
                c + 1,
                "a carriage return not followed by a line feed".into(),
            ));
        }
        for t in raw.split_whitespace() {
            toks.push((li + 1, t.as_ptr() as usize - raw.as_ptr() as usize + 1, t));
        }
    }
    let mut it = toks.into_iter();
    let (hl, hc, h) = it
        .next()
        .ok_or_else(|| err(1, 1, "empty file: expected the task count".into()))?;
    let announced = h.parse::<u64>().map_err(|_| {
        err(
            hl,
            hc,
            format!("expected the task count (an integer), found \"{h}\""),
        )
    })?;
    // (time, line, predecessors with their line and column)
    type Record = (f64, usize, Vec<(u32, usize, usize)>);
    let mut recs: Vec<Record> = Vec::new();
    while let Some((l, c, t)) = it.next() {
        let id = t.parse::<u64>().map_err(|_| {
            err(
                l,
                c,
                format!(
                    "expected task id {} (an integer), found \"{t}\"",
                    recs.len()
                ),
            )
        })?;
        if id != recs.len() as u64 {
            return Err(err(
                l,
                c,
                format!(
                    "expected task id {} (ids run 0, 1, ... in order), found {id}",
                    recs.len()
                ),
            ));
        }
        let mut field = |what: &str| {
            it.next().ok_or_else(|| {
                err(
                    last_line,
                    1,
                    format!("the record of task {id} ends early: expected {what}"),
                )
            })
        };
        let (tl, tc, tt) = field("its time")?;
        let time = time_value(tt).ok_or_else(|| {
            err(
                tl,
                tc,
                format!("expected the time of task {id} (a finite real >= 0), found \"{tt}\""),
            )
        })?;
        let (nl, nc, nt) = field("its predecessor count")?;
        let np = nt.parse::<usize>().map_err(|_| {
            err(
                nl,
                nc,
                format!("expected the predecessor count of task {id}, found \"{nt}\""),
            )
        })?;
        let mut preds = Vec::with_capacity(np.min(1024));
        for _ in 0..np {
            let (pl, pc, pt) = field("another predecessor")?;
            let p = pt.parse::<u32>().map_err(|_| {
                err(
                    pl,
                    pc,
                    format!("expected a predecessor of task {id} (a task id), found \"{pt}\""),
                )
            })?;
            if u64::from(p) == id {
                return Err(err(
                    pl,
                    pc,
                    format!("task {id} lists itself as a predecessor"),
                ));
            }
            preds.push((p, pl, pc));
        }
        recs.push((time, l, preds));
    }
    let n = recs.len();
    if n == 0 {
        return Err(err(last_line, 1, "no task records".into()));
    }
    // The count line counts the tasks with or without the two dummies.
    if announced != n as u64 && announced + 2 != n as u64 {
        return Err(err(hl, hc, format!(
            "the count line announces {announced} tasks but the file has {n} records ({announced} or {} expected: truncated?)",
            announced.saturating_add(2)
        )));
    }
    for (_, _, preds) in &recs {
        if let Some(&(p, l, c)) = preds.iter().find(|x| x.0 as usize >= n) {
            return Err(err(
                l,
                c,
                format!("predecessor {p} is not a task (the ids run 0-{})", n - 1),
            ));
        }
    }
    // Dummy entry and exit.
    let lo = usize::from(n > 1 && recs[0].0 == 0.0 && recs[0].2.is_empty());
    // The exit is a sink: a last record that some record lists as a predecessor stays.
    let last_is_pred = recs
        .iter()
        .any(|r| r.2.iter().any(|x| x.0 as usize == n - 1));
    let hi = if n > 1 + lo && recs[n - 1].0 == 0.0 && !last_is_pred {
        n - 1
    } else {
        n
    };
    let keep = |i: usize| i >= lo && i < hi;
    let top = slowness.iter().copied().fold(0.0, f64::max);
    let mut total = 0.0f64;
    for i in lo..hi {
        total += recs[i].0 * top;
        if !total.is_finite() {
            return Err(err(recs[i].1, 1, TOO_LONG.into()));
        }
    }
    let arcs: usize = (lo..hi)
        .map(|i| recs[i].2.iter().filter(|x| keep(x.0 as usize)).count())
        .sum();
    if !(total + arcs as f64 * platform.worst_message(bytes)).is_finite() {
        return Err(err(hl, hc, TOO_LONG_COMM.into()));
    }
    let tasks = (lo..hi)
        .map(|i| {
            let times = slowness.iter().map(|s| recs[i].0 * s).collect();
            (format!("t{i}"), vec![(format!("t{i}"), times)])
        })
        .collect();
    let mut messages = Vec::new();
    for (i, rec) in recs.iter().enumerate().filter(|(i, _)| keep(*i)) {
        let mut preds: Vec<u32> = rec
            .2
            .iter()
            .map(|x| x.0)
            .filter(|&p| keep(p as usize))
            .collect();
        preds.sort_unstable();
        preds.dedup();
        for p in preds {
            messages.push(SubtaskMessage {
                from: p - lo as u32,
                to: (i - lo) as u32,
                bytes,
            });
        }
    }
    let messages_copy = messages.clone();
    let program = HeteroProgram::new(platform.types(), tasks, messages).map_err(|e| {
        let m = &messages_copy[e.message as usize];
        let id = m.to as usize + lo;
        let &(_, l, c) = recs[id]
            .2
            .iter()
            .find(|x| x.0 as usize == m.from as usize + lo)
            .expect("listed");
        err(
            l,
            c,
            format!(
                "task {id} and its predecessor {} lie on a cycle of precedences",
                m.from as usize + lo
            ),
        )
    })?;
    Ok(Ttigha { platform, program })
}

/// Reads a Pegasus DAX workflow (XML, plain or gzip) as a TTIGHa program on `platform`;
/// see [`parse_dax_program`].
pub fn read_dax_program(
    path: &Path,
    platform: Platform,
    slowness: &[f64],
    negative_as_zero: bool,
) -> Result<Ttigha, Error> {
    with_text(path, |text| {
        parse_dax_program(text, path, platform, slowness, negative_as_zero)
    })
}

/// A Pegasus DAX workflow (`<job id runtime>` with `<uses file link=input|output size>`,
/// `<child ref>` with `<parent ref>`) as a TTIGHa program: every job is a task of one
/// sub-task named by its id, its time on processor type `p` its `runtime` × `slowness[p]`;
/// every parent-child pair a message whose bytes are the summed sizes (as the parent
/// declares them) of the files the parent writes and the child reads (0 when they share
/// none: the child still waits for the parent, and a message between processors pays the
/// startup time). Errors name the
/// line and column of the element: XML syntax, a job without an id or runtime, a
/// duplicate id, a `ref` to no job, a negative or non-numeric runtime or size, a
/// `parent` outside a `child`, a job that is its own parent, a cycle, no jobs. With
/// `negative_as_zero`, a negative integer size or negative runtime reads as 0 instead
/// (some generated workflows have them: 209 sizes and 57 runtimes in the Pegasus set's
/// `Epigenomics_997`).
pub fn parse_dax_program(
    text: &str,
    path: &Path,
    platform: Platform,
    slowness: &[f64],
    negative_as_zero: bool,
) -> Result<Ttigha, Error> {
    use quick_xml::events::Event;
    let err = offset_error(text, path);
    check_slowness(path, &platform, slowness)?;
    let mut reader = quick_xml::Reader::from_str(text);
    reader.config_mut().trim_text(true);
    // Jobs: id, runtime, files read, files written (with sizes).
    let mut ids: Vec<String> = Vec::new();
    let mut runtime: Vec<f64> = Vec::new();
    let mut reads: Vec<Vec<String>> = Vec::new();
    let mut writes: Vec<HashMap<String, u64>> = Vec::new();
    let mut job_at: Vec<usize> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    // (child, parent, place of the parent element)
    let mut arcs: Vec<(String, String, usize)> = Vec::new();
    let mut in_job = false;
    let mut child: Option<String> = None;
    // Places and names of the open elements, and the roots seen.
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut roots = 0;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| err(reader.error_position() as usize, format!("XML: {e}")))?;
        let end = reader.buffer_position() as usize;
        let at = text[..end.min(text.len())].rfind('<').unwrap_or(0);
        let (elem, empty) = match &event {
            Event::Start(e) | Event::Empty(e) => {
                // One root, <adag>.
                if open.is_empty() {
                    if roots > 0 {
                        return Err(err(
                            at,
                            "a second root element (the workflow ended before)".into(),
                        ));
                    }
                    if e.local_name().as_ref() != b"adag" {
                        return Err(err(
                            at,
                            format!(
                                "the root element is <{}>, not <adag>",
                                String::from_utf8_lossy(e.local_name().as_ref())
                            ),
                        ));
                    }
                    roots += 1;
                }
                let empty = matches!(event, Event::Empty(_));
                if !empty {
                    open.push((
                        at,
                        String::from_utf8_lossy(e.local_name().as_ref()).into_owned(),
                    ));
                }
                (Some(e.clone()), empty)
            }
            Event::End(e) => {
                open.pop();
                match e.local_name().as_ref() {
                    b"job" => in_job = false,
                    b"child" => child = None,
                    _ => {}
                }
                (None, false)
            }
            Event::Eof => {
                if let Some((at, name)) = open.last() {
                    return Err(err(
                        text.len(),
                        format!(
                            "the file ends inside the <{name}> opened at line {} (truncated?)",
                            taskmap_graph::line_col(text.as_bytes(), *at).0
                        ),
                    ));
                }
                break;
            }
            _ => (None, false),
        };
        let Some(e) = elem else { continue };
        // Every attribute is read, so a duplicate is an error (quick-xml checks them).
        let attr = |name: &str| -> Result<Option<String>, Error> {
            let mut found = None;
            for a in e.attributes() {
                let a = a.map_err(|x| err(at, format!("XML attribute: {x}")))?;
                if found.is_none() && a.key.local_name().as_ref() == name.as_bytes() {
                    let v = a
                        .unescape_value()
                        .map_err(|x| err(at, format!("XML attribute: {x}")))?;
                    found = Some(v.into_owned());
                }
            }
            Ok(found)
        };
        let need = |name: &str, what: &str| -> Result<String, Error> {
            attr(name)?.ok_or_else(|| err(at, format!("<{what}> without a {name} attribute")))
        };
        match e.local_name().as_ref() {
            b"job" => {
                let id = need("id", "job")?;
                if index.contains_key(&id) {
                    return Err(err(at, format!("a second job with id \"{id}\"")));
                }
                let rt = need("runtime", "job")?;
                let r = match (time_value(rt.trim()), rt.trim().parse::<f64>()) {
                    (Some(v), _) => v,
                    (None, Ok(v)) if v.is_finite() && negative_as_zero => 0.0,
                    (None, Ok(v)) if v.is_finite() => {
                        return Err(err(
                            at,
                            format!("the runtime of job \"{id}\" is {rt}, below 0 {NEGATIVE_HINT}"),
                        ))
                    }
                    _ => {
                        return Err(err(
                            at,
                            format!(
                                "the runtime of job \"{id}\" is \"{rt}\", not a finite real >= 0"
                            ),
                        ))
                    }
                };
                index.insert(id.clone(), ids.len());
                ids.push(id);
                job_at.push(at);
                runtime.push(r);
                reads.push(Vec::new());
                writes.push(HashMap::new());
                in_job = !empty;
            }
            b"uses" if in_job => {
                let file = need("file", "uses")?;
                let size = match attr("size")? {
                    None => 0,
                    Some(s) => match (s.trim().parse::<u64>(), s.trim().parse::<i64>()) {
                        (Ok(v), _) => v,
                        (Err(_), Ok(v)) if v < 0 && negative_as_zero => 0,
                        (Err(_), Ok(v)) if v < 0 => {
                            return Err(err(
                                at,
                                format!(
                                    "the size of file \"{file}\" is {s}, below 0 {NEGATIVE_HINT}"
                                ),
                            ))
                        }
                        _ => {
                            return Err(err(
                                at,
                                format!(
                                    "the size of file \"{file}\" is \"{s}\", not an integer >= 0"
                                ),
                            ))
                        }
                    },
                };
                let link = attr("link")?.unwrap_or_default();
                let j = ids.len() - 1;
                match link.as_str() {
                    "input" => reads[j].push(file),
                    "output" => {
                        writes[j].insert(file, size);
                    }
                    _ => {}
                }
            }
            b"child" => {
                let r = need("ref", "child")?;
                child = (!empty).then_some(r);
            }
            b"parent" => {
                let Some(c) = &child else {
                    return Err(err(at, "<parent> outside a <child>".into()));
                };
                let p = need("ref", "parent")?;
                arcs.push((c.clone(), p, at));
            }
            _ => {}
        }
    }
    if ids.is_empty() {
        return Err(err(text.len(), "no <job>: the workflow is empty".into()));
    }
    let mut resolved = Vec::with_capacity(arcs.len());
    for (c, p, at) in &arcs {
        let find = |r: &str| {
            index
                .get(r)
                .copied()
                .ok_or_else(|| err(*at, format!("no job has the id \"{r}\"")))
        };
        let (ci, pi) = (find(c)?, find(p)?);
        // Refused here too, so that the first wrong dependency in the file is named.
        if pi == ci {
            return Err(err(*at, format!("job \"{c}\" is its own parent")));
        }
        resolved.push((pi, ci, *at));
    }
    let jobs = WorkflowJobs {
        what: "job",
        ids,
        at: job_at,
        runtime,
        reads,
        writes,
        arcs: resolved,
    };
    jobs.program(platform, slowness, &err)
}

/// Turns a byte offset into `text` and a message into the error at that line and column.
pub(crate) fn offset_error<'a>(
    text: &'a str,
    path: &'a Path,
) -> impl Fn(usize, String) -> Error + 'a {
    move |pos, message| {
        let (line, column) = taskmap_graph::line_col(text.as_bytes(), pos);
        Error::Parse {
            path: path.to_path_buf(),
            line,
            column,
            message,
        }
    }
}

/// The jobs of a workflow file (Pegasus DAX, WfCommons) and their dependencies, before
/// they become a program.
pub(crate) struct WorkflowJobs {
    /// What the format calls a job ("job", "task"), for error messages.
    pub what: &'static str,
    pub ids: Vec<String>,
    /// Where each job is declared (a byte offset).
    pub at: Vec<usize>,
    pub runtime: Vec<f64>,
    /// The files each job reads.
    pub reads: Vec<Vec<String>>,
    /// The files each job writes, with their sizes in bytes.
    pub writes: Vec<HashMap<String, u64>>,
    /// (parent, child, where the dependency is written), repeats allowed.
    pub arcs: Vec<(usize, usize, usize)>,
}

impl WorkflowJobs {
    /// No jobs yet, room for `n`; `what` names a job in errors.
    pub(crate) fn with_capacity(what: &'static str, n: usize) -> Self {
        WorkflowJobs {
            what,
            ids: Vec::with_capacity(n),
            at: Vec::with_capacity(n),
            runtime: Vec::with_capacity(n),
            reads: Vec::with_capacity(n),
            writes: Vec::with_capacity(n),
            arcs: Vec::new(),
        }
    }

    /// The program: a task of one sub-task per job (named by its id, its time on processor
    /// type `p` its runtime × `slowness[p]`), a message per parent-child pair whose bytes
    /// are the summed sizes (as the parent declares them) of the files the parent writes
    /// and the child reads, each file once. `err` turns a byte offset and a message into
    /// the error.
    pub(crate) fn program(
        mut self,
        platform: Platform,
        slowness: &[f64],
        err: &dyn Fn(usize, String) -> Error,
    ) -> Result<Ttigha, Error> {
        let top = slowness.iter().copied().fold(0.0, f64::max);
        let mut total = 0.0f64;
        for (r, &at) in self.runtime.iter().zip(&self.at) {
            total += r * top;
            if !total.is_finite() {
                return Err(err(at, TOO_LONG.into()));
            }
        }
        let mut writers: HashMap<&str, Vec<(usize, u64)>> = HashMap::new();
        for (j, w) in self.writes.iter().enumerate() {
            for (f, &size) in w {
                writers.entry(f.as_str()).or_default().push((j, size));
            }
        }
        let mut pair_at: HashMap<(usize, usize), usize> = HashMap::new();
        let mut pairs: Vec<(usize, usize, u64, usize)> = Vec::with_capacity(self.arcs.len());
        for &(pi, ci, at) in &self.arcs {
            if ci == pi {
                return Err(err(
                    at,
                    format!("{} \"{}\" is its own parent", self.what, self.ids[ci]),
                ));
            }
            if let std::collections::hash_map::Entry::Vacant(v) = pair_at.entry((pi, ci)) {
                v.insert(pairs.len());
                pairs.push((pi, ci, 0, at));
            }
        }
        for (ci, r) in self.reads.iter_mut().enumerate() {
            r.sort_unstable();
            r.dedup();
            for f in r.iter() {
                for &(pi, size) in writers.get(f.as_str()).map_or(&[][..], |v| &v[..]) {
                    if let Some(&k) = pair_at.get(&(pi, ci)) {
                        pairs[k].2 = pairs[k].2.saturating_add(size);
                    }
                }
            }
        }
        let mut messages = Vec::with_capacity(pairs.len());
        let mut places = Vec::with_capacity(pairs.len());
        for &(pi, ci, bytes, at) in &pairs {
            total += platform.worst_message(bytes);
            if !total.is_finite() {
                return Err(err(at, TOO_LONG_COMM.into()));
            }
            messages.push(SubtaskMessage {
                from: pi as u32,
                to: ci as u32,
                bytes,
            });
            places.push(at);
        }
        let tasks = self
            .ids
            .iter()
            .zip(&self.runtime)
            .map(|(id, &r)| {
                (
                    id.clone(),
                    vec![(id.clone(), slowness.iter().map(|s| r * s).collect())],
                )
            })
            .collect();
        let what = self.what;
        let program = HeteroProgram::new(platform.types(), tasks, messages).map_err(|e| {
            err(
                places[e.message as usize],
                format!("this dependency lies on a cycle of {what}s"),
            )
        })?;
        Ok(Ttigha { platform, program })
    }
}
