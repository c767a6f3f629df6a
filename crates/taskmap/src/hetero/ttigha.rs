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

/// Most processors a platform may have (its link table has one entry per ordered pair).
pub const MAX_PROCESSORS: usize = 4096;

/// Most processor pairs the `LINK` lines of a file may name in all (each costs a write).
pub(crate) const MAX_LINK_PAIRS: u64 = 1 << 26;

/// A time as written: a finite real `>= 0` (`-0` read as 0), or `None`.
pub(crate) fn time_value(t: &str) -> Option<f64> {
    t.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v + 0.0)
}

/// The error when times add up beyond the largest float.
pub(crate) const TOO_LONG: &str = "the times add up beyond the largest float (about 1.8e308), so the final time could not be computed";

/// The error when the task times and the messages, each at the platform's slowest
/// communication, add up beyond the largest float: the platform's COMM lines are to blame
/// as much as the program.
pub const TOO_LONG_COMM: &str = "the task times and the messages, each at the platform's slowest communication (a COMM line's startup + bytes × time per byte), add up beyond the largest float (about 1.8e308), so the final time could not be computed";

/// Marks "no communication type" on the diagonal of [`Platform::link`].
pub(crate) const NO_LINK: u32 = u32::MAX;

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
    pub(crate) link: Vec<u32>,
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

impl Ttigha {
    /// The file text of this model, unchecked: [`crate::hetero::io::ttig::ttigha_text`]
    /// gives it after checking that the format can hold the model (its names, processor
    /// numbering and links), and then [`crate::hetero::io::ttig::parse_ttigha`] reads it
    /// back to an equal model.
    pub fn to_text(&self) -> String {
        crate::hetero::io::ttig::format_ttigha(self)
    }
}
