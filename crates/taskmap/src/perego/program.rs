//! Programs in the timed communication language of De Petris & Perego (1994, §3.2): per
//! task a sequence of computations, sends and receives.
//!
//! # The language
//!
//! ```text
//! # a two-task ping-pong            (comments start with '#' or '%' and run to the line end)
//! PROCESS 0
//!   INT_OP 100        # busy for 100 CPU cycles
//!   SEND 1 16         # send a message of 16 flits to task 1
//!   RECEIVE 1 16      # wait for a message of 16 flits from task 1
//! STOP
//! PROCESS 1
//!   RECEIVE 0 16
//!   INT_OP 50
//!   SEND 0 16
//! STOP
//! ```
//!
//! One instruction per line; `PROCESS i` … `STOP` describes task `i` (0-based; the blocks
//! describe the tasks `0..T` once each, in any order). Sends never block; sends and
//! receives are matched per ordered channel `(sndr, dest)` in FIFO order, and a `RECEIVE`
//! needs a matching `SEND` of the same length (a `SEND` nobody receives is allowed: see
//! [`Program::unmatched_sends`]). A program whose tasks cannot all reach `STOP` on the
//! ideal machine is rejected (an untimed check, O(instructions)). Errors of a file name
//! `file:line:column`. Every rule of the format: `docs/formats.md`, "Timed programs".
//!
//! Storage is compact: one 12-byte [`Op`] per instruction in task-major (CSR) order, `u32`
//! ids, and a 16-byte [`Message`] per message, so millions of messages fit in tens of
//! megabytes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use taskmap_graph::{GraphBuilder, TaskGraph};

use crate::error::Error;

/// Marks "no message" in [`Program::msg_of_op`] and "not received" in [`Message::recv_op`].
pub const NONE: u32 = u32::MAX;

/// One instruction of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `INT_OP p`: busy `p` CPU cycles.
    Compute(u32),
    /// `SEND to flits`.
    Send { to: u32, flits: u32 },
    /// `RECEIVE from flits`.
    Recv { from: u32, flits: u32 },
}

/// One message: a matched (or unmatched) `SEND`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// Sending task.
    pub src: u32,
    /// Receiving task.
    pub dst: u32,
    /// Length in flits.
    pub flits: u32,
    /// Index (into [`Program::ops`]) of the `RECEIVE` that consumes it, or [`NONE`].
    pub recv_op: u32,
}

/// An ordered channel `src → dst` and its messages, which are the consecutive range
/// `first_msg .. first_msg + count` of [`Program::messages`], in send order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Channel {
    pub src: u32,
    pub dst: u32,
    pub first_msg: u32,
    pub count: u32,
}

/// Where an instruction was read: 1-based line, and the 1-based column of its first
/// argument (of the keyword for `STOP`-less instructions without arguments).
#[derive(Clone, Debug)]
struct Source {
    path: PathBuf,
    op_pos: Vec<(u32, u32)>,
}

/// A program: tasks, their instructions, and the matched messages.
#[derive(Clone, Debug)]
pub struct Program {
    op_start: Vec<u32>,
    ops: Vec<Op>,
    msg_of_op: Vec<u32>,
    messages: Vec<Message>,
    channels: Vec<Channel>,
    source: Option<Source>,
}

/// Builds a [`Program`] task by task, in task order (task 0 first).
#[derive(Clone, Debug, Default)]
pub struct ProgramBuilder {
    op_start: Vec<u32>,
    ops: Vec<Op>,
}

impl ProgramBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts the next task (the first call starts task 0) and returns its id.
    /// Instructions added before the first call belong to task 0.
    pub fn process(&mut self) -> u32 {
        self.op_start.push(self.ops.len() as u32);
        (self.op_start.len() - 1) as u32
    }

    /// Appends `INT_OP p` to the current task.
    pub fn compute(&mut self, p: u32) -> &mut Self {
        self.push(Op::Compute(p))
    }

    /// Appends `SEND to flits` to the current task.
    pub fn send(&mut self, to: u32, flits: u32) -> &mut Self {
        self.push(Op::Send { to, flits })
    }

    /// Appends `RECEIVE from flits` to the current task.
    pub fn recv(&mut self, from: u32, flits: u32) -> &mut Self {
        self.push(Op::Recv { from, flits })
    }

    fn push(&mut self, op: Op) -> &mut Self {
        if self.op_start.is_empty() {
            self.op_start.push(0);
        }
        self.ops.push(op);
        self
    }

    /// Matches the messages and checks the program (see the module documentation).
    pub fn build(self) -> Result<Program, Error> {
        let mut op_start = self.op_start;
        op_start.push(self.ops.len() as u32);
        Program::from_parts(op_start, self.ops, None)
    }
}

impl Program {
    /// Builds a program from its CSR parts: task `t` holds `ops[op_start[t]..op_start[t+1]]`.
    /// Matches messages and checks peers, lengths and deadlock freedom.
    pub fn from_csr(op_start: Vec<u32>, ops: Vec<Op>) -> Result<Self, Error> {
        Self::from_parts(op_start, ops, None)
    }

    fn from_parts(op_start: Vec<u32>, ops: Vec<Op>, source: Option<Source>) -> Result<Self, Error> {
        if ops.len() >= NONE as usize {
            return Err(Error::Config(
                "a program holds at most 2^32-2 instructions".into(),
            ));
        }
        assert!(!op_start.is_empty() && *op_start.last().unwrap() as usize == ops.len());
        let mut p = Program {
            op_start,
            ops,
            msg_of_op: Vec::new(),
            messages: Vec::new(),
            channels: Vec::new(),
            source,
        };
        p.check_peers()?;
        p.match_messages()?;
        p.check_deadlock()?;
        Ok(p)
    }

    /// Number of tasks `T`.
    pub fn num_tasks(&self) -> usize {
        self.op_start.len() - 1
    }

    /// All instructions, task-major.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// The instructions of task `t`.
    pub fn task_ops(&self, t: u32) -> &[Op] {
        &self.ops[self.op_start[t as usize] as usize..self.op_start[t as usize + 1] as usize]
    }

    /// Index of the first instruction of task `t` (`t = T` gives the total).
    pub fn op_start(&self, t: u32) -> u32 {
        self.op_start[t as usize]
    }

    /// For every instruction, the message it sends or receives, or [`NONE`].
    pub fn msg_of_op(&self) -> &[u32] {
        &self.msg_of_op
    }

    /// The messages, channel-major (channels sorted by `(src, dst)`), in send order within
    /// a channel.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The ordered channels that carry at least one message, sorted by `(src, dst)`.
    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    /// Number of messages no `RECEIVE` consumes.
    pub fn unmatched_sends(&self) -> usize {
        self.messages.iter().filter(|m| m.recv_op == NONE).count()
    }

    /// Total compute of task `t`: the sum of its `INT_OP` cycles.
    pub fn compute_cycles(&self, t: u32) -> u64 {
        self.task_ops(t)
            .iter()
            .map(|op| match op {
                Op::Compute(p) => u64::from(*p),
                _ => 0,
            })
            .sum()
    }

    /// Total number of flits sent.
    pub fn total_flits(&self) -> u64 {
        self.messages.iter().map(|m| u64::from(m.flits)).sum()
    }

    /// The task of instruction `op` (binary search).
    pub fn task_of_op(&self, op: u32) -> u32 {
        (self.op_start.partition_point(|&s| s <= op) - 1) as u32
    }

    /// Reduces the program to a static task graph: vertex weight = total `INT_OP` cycles of
    /// the task, edge weight = total flits exchanged between the two tasks (both
    /// directions summed). O(T + ops + channels).
    pub fn to_task_graph(&self) -> TaskGraph {
        let n = self.num_tasks();
        let mut b = GraphBuilder::new(n, 1);
        for t in 0..n as u32 {
            b.set_vertex_weight(t, 0, self.compute_cycles(t));
        }
        b.reserve_edges(self.channels.len());
        for c in &self.channels {
            let vol: u64 = self.messages[c.first_msg as usize..(c.first_msg + c.count) as usize]
                .iter()
                .map(|m| u64::from(m.flits))
                .sum();
            b.add_edge(c.src, c.dst, vol);
        }
        b.build()
    }

    /// Writes the program in the language above.
    pub fn to_text(&self) -> String {
        let mut s = String::with_capacity(self.ops.len() * 12 + self.num_tasks() * 20);
        for t in 0..self.num_tasks() as u32 {
            let _ = writeln!(s, "PROCESS {t}");
            for op in self.task_ops(t) {
                let _ = match op {
                    Op::Compute(p) => writeln!(s, "  INT_OP {p}"),
                    Op::Send { to, flits } => writeln!(s, "  SEND {to} {flits}"),
                    Op::Recv { from, flits } => writeln!(s, "  RECEIVE {from} {flits}"),
                };
            }
            s.push_str("STOP\n");
        }
        s
    }

    /// Writes the program to a file (atomically).
    pub fn write(&self, path: &Path) -> Result<(), Error> {
        crate::error::write_atomically(path, self.to_text().as_bytes())
    }

    /// An error about instruction `op`: at its file place when the program was read from a
    /// file, otherwise naming the task and instruction index.
    fn op_error(&self, op: u32, message: String) -> Error {
        match &self.source {
            Some(src) => {
                let (line, column) = src.op_pos[op as usize];
                Error::Parse {
                    path: src.path.clone(),
                    line: line as usize,
                    column: column as usize,
                    message,
                }
            }
            None => {
                let t = self.task_of_op(op);
                Error::Mismatch(format!(
                    "task {t}, instruction {}: {message}",
                    op - self.op_start[t as usize]
                ))
            }
        }
    }

    /// Describes where instruction `op` is (for messages naming several places).
    fn op_place(&self, op: u32) -> String {
        let t = self.task_of_op(op);
        match &self.source {
            Some(src) => {
                let (line, column) = src.op_pos[op as usize];
                format!("task {t} at {}:{line}:{column}", src.path.display())
            }
            None => format!("task {t} at instruction {}", op - self.op_start[t as usize]),
        }
    }

    fn check_peers(&self) -> Result<(), Error> {
        let n = self.num_tasks() as u32;
        for t in 0..n {
            let base = self.op_start[t as usize];
            for (k, op) in self.task_ops(t).iter().enumerate() {
                let (peer, flits, what) = match *op {
                    Op::Compute(_) => continue,
                    Op::Send { to, flits } => (to, flits, "SEND to"),
                    Op::Recv { from, flits } => (from, flits, "RECEIVE from"),
                };
                let opi = base + k as u32;
                if peer >= n {
                    return Err(self.op_error(
                        opi,
                        format!("{what} unknown task {peer} (the program has tasks 0..{n})"),
                    ));
                }
                if peer == t {
                    return Err(self.op_error(opi, format!("{what} itself (task {t})")));
                }
                if flits == 0 {
                    return Err(self.op_error(opi, "a message has at least 1 flit".into()));
                }
            }
        }
        Ok(())
    }

    /// Matches sends and receives per ordered channel in FIFO order. O(M log M).
    fn match_messages(&mut self) -> Result<(), Error> {
        let mut sends: Vec<(u32, u32, u32)> = Vec::new(); // (src, dst, op)
        let mut recvs: Vec<(u32, u32, u32)> = Vec::new(); // (src, dst, op)
        for t in 0..self.num_tasks() as u32 {
            let base = self.op_start[t as usize];
            for (k, op) in self.task_ops(t).iter().enumerate() {
                match *op {
                    Op::Send { to, .. } => sends.push((t, to, base + k as u32)),
                    Op::Recv { from, .. } => recvs.push((from, t, base + k as u32)),
                    Op::Compute(_) => {}
                }
            }
        }
        if sends.len() >= NONE as usize {
            return Err(Error::Config(
                "a program holds at most 2^32-2 messages".into(),
            ));
        }
        sends.sort_unstable();
        recvs.sort_unstable();
        let mut msg_of_op = vec![NONE; self.ops.len()];
        let mut messages = Vec::with_capacity(sends.len());
        let mut channels: Vec<Channel> = Vec::new();
        let mut r = 0usize;
        let mut i = 0usize;
        while i < sends.len() || r < recvs.len() {
            // The next channel in (src, dst) order among both lists.
            let key = match (sends.get(i), recvs.get(r)) {
                (Some(s), Some(q)) => (s.0, s.1).min((q.0, q.1)),
                (Some(s), None) => (s.0, s.1),
                (None, Some(q)) => (q.0, q.1),
                (None, None) => unreachable!(),
            };
            let s_end = i + sends[i..].partition_point(|s| (s.0, s.1) == key);
            let r_end = r + recvs[r..].partition_point(|q| (q.0, q.1) == key);
            let ns = s_end - i;
            let nr = r_end - r;
            if nr > ns {
                let op = recvs[r + ns].2;
                return Err(self.op_error(
                    op,
                    format!(
                        "RECEIVE from task {} has no matching SEND (task {} sends {} message(s) to task {}, this is receive number {})",
                        key.0, key.0, ns, key.1, ns + 1
                    ),
                ));
            }
            if ns > 0 {
                channels.push(Channel {
                    src: key.0,
                    dst: key.1,
                    first_msg: messages.len() as u32,
                    count: ns as u32,
                });
            }
            for k in 0..ns {
                let sop = sends[i + k].2;
                let flits = match self.ops[sop as usize] {
                    Op::Send { flits, .. } => flits,
                    _ => unreachable!(),
                };
                let recv_op = if k < nr { recvs[r + k].2 } else { NONE };
                if recv_op != NONE {
                    if let Op::Recv { flits: rf, .. } = self.ops[recv_op as usize] {
                        if rf != flits {
                            return Err(self.op_error(
                                recv_op,
                                format!(
                                    "RECEIVE of {rf} flits from task {} matches a SEND of {flits} flits ({})",
                                    key.0,
                                    self.op_place(sop)
                                ),
                            ));
                        }
                    }
                    msg_of_op[recv_op as usize] = messages.len() as u32;
                }
                msg_of_op[sop as usize] = messages.len() as u32;
                messages.push(Message {
                    src: key.0,
                    dst: key.1,
                    flits,
                    recv_op,
                });
            }
            i = s_end;
            r = r_end;
        }
        self.msg_of_op = msg_of_op;
        self.messages = messages;
        self.channels = channels;
        Ok(())
    }

    /// Runs the program on the ideal machine without time (sends never block, so the
    /// outcome does not depend on timing) and reports the tasks that cannot reach `STOP`.
    /// O(ops).
    fn check_deadlock(&self) -> Result<(), Error> {
        let n = self.num_tasks();
        let mut pc: Vec<u32> = self.op_start[..n].to_vec();
        let mut sent = vec![false; self.messages.len()];
        let mut blocked = vec![false; n];
        let mut work: Vec<u32> = (0..n as u32).rev().collect();
        while let Some(t) = work.pop() {
            let end = self.op_start[t as usize + 1];
            blocked[t as usize] = false;
            while pc[t as usize] < end {
                let opi = pc[t as usize];
                let m = self.msg_of_op[opi as usize];
                match self.ops[opi as usize] {
                    Op::Compute(_) => {}
                    Op::Send { to, .. } => {
                        sent[m as usize] = true;
                        // Wake the receiver if it waits for exactly this message.
                        let rop = self.messages[m as usize].recv_op;
                        if rop != NONE && blocked[to as usize] && pc[to as usize] == rop {
                            blocked[to as usize] = false;
                            work.push(to);
                        }
                    }
                    Op::Recv { .. } => {
                        if !sent[m as usize] {
                            blocked[t as usize] = true;
                            break;
                        }
                    }
                }
                pc[t as usize] += 1;
            }
        }
        let stuck: Vec<u32> = (0..n as u32)
            .filter(|&t| pc[t as usize] < self.op_start[t as usize + 1])
            .collect();
        if stuck.is_empty() {
            return Ok(());
        }
        let mut msg = format!(
            "the program deadlocks on the ideal machine: {} task(s) blocked:",
            stuck.len()
        );
        for (k, &t) in stuck.iter().enumerate() {
            if k == 8 {
                let _ = write!(msg, "; ... ({} more)", stuck.len() - 8);
                break;
            }
            if k > 0 {
                msg.push(';');
            }
            let opi = pc[t as usize];
            let from = match self.ops[opi as usize] {
                Op::Recv { from, .. } => from,
                _ => unreachable!(),
            };
            let _ = write!(msg, " {} waits at RECEIVE {from}", self.op_place(opi));
        }
        let first = pc[stuck[0] as usize];
        Err(self.op_error(first, msg))
    }
}

/// Reads a program file (see the module documentation for the syntax).
pub fn read_program(path: &Path) -> Result<Program, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let text = String::from_utf8_lossy(&bytes);
    parse_program(&text, path)
}

/// Parses program text; `path` names the input in errors.
pub fn parse_program(text: &str, path: &Path) -> Result<Program, Error> {
    let mut r = ProgramReader {
        path,
        num_lines: text.lines().count(),
        blocks: Vec::new(),
        ops: Vec::new(),
        pos: Vec::new(),
        open: None,
        seen: std::collections::HashMap::new(),
    };
    let mut last_line = 0usize;
    for (li, raw) in text.lines().enumerate() {
        let line = li + 1;
        last_line = line;
        r.read_line(line, raw)?;
    }
    r.finish(last_line)
}

/// The tokens of a program line's `body` (its comment cut off), with their 1-based columns.
fn program_tokens(body: &str) -> Vec<(usize, &str)> {
    let mut toks: Vec<(usize, &str)> = Vec::with_capacity(3);
    let mut start = None;
    for (i, ch) in body.char_indices() {
        if ch.is_whitespace() {
            if let Some(s) = start.take() {
                toks.push((s + 1, &body[s..i]));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        toks.push((s + 1, &body[s..]));
    }
    toks
}

/// The blocks and instructions of a program file read so far, in file order.
struct ProgramReader<'p> {
    /// Names the input in errors.
    path: &'p Path,
    /// Lines of the file. Every task needs a PROCESS and a STOP line, so a valid task id
    /// is below it; larger ids are refused before any memory depends on them.
    num_lines: usize,
    /// Blocks in file order: (task id, first op, end op).
    blocks: Vec<(u32, u32, u32)>,
    /// The instructions, in file order.
    ops: Vec<Op>,
    /// Line and column of each instruction.
    pos: Vec<(u32, u32)>,
    /// The open block: (task, line of PROCESS).
    open: Option<(u32, usize)>,
    /// Line of the PROCESS of each id seen so far: memory proportional to the blocks read,
    /// whatever the ids.
    seen: std::collections::HashMap<u32, usize>,
}

impl ProgramReader<'_> {
    /// The parse error at `line` and `column`.
    fn err(&self, line: usize, column: usize, message: String) -> Error {
        Error::parse(self.path, line, column, message)
    }

    /// The token `(c, t)` as a number of `what`, an integer in `0..2^32`.
    fn num(&self, line: usize, (c, t): (usize, &str), what: &str) -> Result<u32, Error> {
        t.parse::<u32>().map_err(|_| {
            self.err(
                line,
                c,
                format!("expected {what} (an integer in 0..2^32), found \"{t}\""),
            )
        })
    }

    /// Reads line `line` of the file: an instruction, or nothing when blank or a comment.
    fn read_line(&mut self, line: usize, raw: &str) -> Result<(), Error> {
        let body = match raw.find(['#', '%']) {
            Some(c) => &raw[..c],
            None => raw,
        };
        let toks = program_tokens(body);
        if toks.is_empty() {
            return Ok(());
        }
        let (kcol, kw) = toks[0];
        let kw_up = kw.to_ascii_uppercase();
        let nargs = match kw_up.as_str() {
            "PROCESS" | "INT_OP" => 1,
            "SEND" | "RECEIVE" => 2,
            "STOP" => 0,
            _ => {
                return Err(self.err(
                    line,
                    kcol,
                    format!(
                        "unknown instruction \"{kw}\" (expected PROCESS, INT_OP, SEND, RECEIVE or STOP)"
                    ),
                ))
            }
        };
        if toks.len() < nargs + 1 {
            let col = body.trim_end().len() + 1;
            return Err(self.err(
                line,
                col,
                format!(
                    "{kw_up} takes {nargs} argument(s), found {}",
                    toks.len() - 1
                ),
            ));
        }
        if toks.len() > nargs + 1 {
            let (c, t) = toks[nargs + 1];
            return Err(self.err(
                line,
                c,
                format!("unexpected \"{t}\" after {kw_up} (it takes {nargs} argument(s))"),
            ));
        }
        match kw_up.as_str() {
            "PROCESS" => self.process(line, kcol, &toks),
            "STOP" => self.stop(line, kcol),
            _ => self.instruction(line, kcol, &kw_up, &toks),
        }
    }

    /// A `PROCESS` line: opens the block of a task not described before.
    fn process(&mut self, line: usize, kcol: usize, toks: &[(usize, &str)]) -> Result<(), Error> {
        if let Some((t, l)) = self.open {
            return Err(self.err(
                line,
                kcol,
                format!("PROCESS before the STOP of task {t} (opened at line {l})"),
            ));
        }
        let id = self.num(line, toks[1], "a task id")?;
        if id == NONE {
            return Err(self.err(line, toks[1].0, "task id too large".into()));
        }
        let num_lines = self.num_lines;
        if id as usize >= num_lines {
            return Err(self.err(
                line,
                toks[1].0,
                format!(
                    "task id {id} but the file has only {num_lines} lines (tasks 0..T need a PROCESS and a STOP line each)"
                ),
            ));
        }
        if let Some(&l) = self.seen.get(&id) {
            return Err(self.err(
                line,
                toks[1].0,
                format!("task {id} is described twice (first at line {l})"),
            ));
        }
        self.seen.insert(id, line);
        self.open = Some((id, line));
        let at = self.ops.len() as u32;
        self.blocks.push((id, at, at));
        Ok(())
    }

    /// A `STOP` line: closes the open block.
    fn stop(&mut self, line: usize, kcol: usize) -> Result<(), Error> {
        if self.open.is_none() {
            return Err(self.err(line, kcol, "STOP outside a PROCESS block".into()));
        }
        self.open = None;
        self.blocks.last_mut().expect("a block is open").2 = self.ops.len() as u32;
        Ok(())
    }

    /// An `INT_OP`, `SEND` or `RECEIVE` line (`kw_up`): an instruction of the open block.
    fn instruction(
        &mut self,
        line: usize,
        kcol: usize,
        kw_up: &str,
        toks: &[(usize, &str)],
    ) -> Result<(), Error> {
        if self.open.is_none() {
            return Err(self.err(
                line,
                kcol,
                format!("{kw_up} outside a PROCESS block (after STOP or before the first PROCESS)"),
            ));
        }
        let op = match kw_up {
            "INT_OP" => Op::Compute(self.num(line, toks[1], "a number of cycles")?),
            "SEND" => Op::Send {
                to: self.num(line, toks[1], "a destination task")?,
                flits: self.num(line, toks[2], "a message length in flits")?,
            },
            _ => Op::Recv {
                from: self.num(line, toks[1], "a sender task")?,
                flits: self.num(line, toks[2], "a message length in flits")?,
            },
        };
        self.ops.push(op);
        self.pos.push((line as u32, toks[1].0 as u32));
        if self.ops.len() >= NONE as usize {
            return Err(self.err(line, kcol, "too many instructions".into()));
        }
        Ok(())
    }

    /// The program, once every line (the last is `last_line`) is read: every block closed,
    /// the tasks exactly `0..T`, the blocks put in task order.
    fn finish(self, last_line: usize) -> Result<Program, Error> {
        if let Some((t, l)) = self.open {
            return Err(self.err(
                l,
                1,
                format!("task {t} has no STOP before the end of the file"),
            ));
        }
        let blocks = &self.blocks;
        if blocks.is_empty() {
            return Err(self.err(last_line.max(1), 1, "the program has no PROCESS".into()));
        }
        // Reorder the blocks into task order. The ids are distinct, so they are exactly
        // 0..T when the k-th smallest is k for every k.
        let mut order: Vec<usize> = (0..blocks.len()).collect();
        order.sort_unstable_by_key(|&b| blocks[b].0);
        if let Some(missing) = order
            .iter()
            .enumerate()
            .find(|&(k, &b)| blocks[b].0 as usize != k)
            .map(|(k, _)| k)
        {
            let max_id = blocks[*order.last().expect("blocks is not empty")].0;
            return Err(self.err(
                last_line.max(1),
                1,
                format!(
                    "task {missing} has no PROCESS block (tasks must be numbered 0..{} without gaps)",
                    u64::from(max_id) + 1
                ),
            ));
        }
        let mut op_start = Vec::with_capacity(blocks.len() + 1);
        let mut sorted_ops = Vec::with_capacity(self.ops.len());
        let mut sorted_pos = Vec::with_capacity(self.ops.len());
        op_start.push(0u32);
        for &b in &order {
            let (_, s, e) = blocks[b];
            sorted_ops.extend_from_slice(&self.ops[s as usize..e as usize]);
            sorted_pos.extend_from_slice(&self.pos[s as usize..e as usize]);
            op_start.push(sorted_ops.len() as u32);
        }
        Program::from_parts(
            op_start,
            sorted_ops,
            Some(Source {
                path: self.path.to_path_buf(),
                op_pos: sorted_pos,
            }),
        )
    }
}
