//! SIMULHa (De Giusti et al.): discrete-event execution of a heterogeneous program's
//! sub-tasks under an allocation of its tasks to processors.
//!
//! * A sub-task runs on its task's processor for its time on that processor's type, without
//!   preemption, once the sub-task before it in its task has finished and every message into
//!   it has arrived. A message leaves when its sender finishes and takes
//!   `startup + bytes · time per byte` of the pair's communication type (nothing between
//!   sub-tasks of one processor). Sending and receiving do not occupy the processors and
//!   links have no contention (the paper models neither).
//! * Order on a processor: either given (each processor runs its sub-tasks strictly in the
//!   given order, as in the paper's manual mode), or by default the ready sub-task first in
//!   the program's priority order ([`HeteroProgram::rank`]: a topological order keeping the
//!   declaration order). The default run records the order it used, and replaying that
//!   order strictly gives the same times.
//!
//! [`Simulator`] keeps its buffers between runs, so the exhaustive search runs it millions
//! of times without allocating.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::Error;
use crate::hetero::ttigha::{HeteroProgram, Platform, Ttigha};

/// The result of a simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    /// Processor of each sub-task.
    pub processor: Vec<u32>,
    /// Start and finish time of each sub-task.
    pub start: Vec<f64>,
    pub finish: Vec<f64>,
    /// Sub-tasks of each processor in the order they ran.
    pub order: Vec<Vec<u32>>,
    /// The program's final time: the latest finish.
    pub makespan: f64,
}

impl Schedule {
    /// Time processor `p` computed.
    pub fn busy(&self, p: usize) -> f64 {
        // `+ 0.0`: an empty sum of floats is -0.0.
        self.order[p]
            .iter()
            .map(|&s| self.finish[s as usize] - self.start[s as usize])
            .sum::<f64>()
            + 0.0
    }

    /// Finish of processor `p`'s last sub-task (0 if it has none).
    pub fn end(&self, p: usize) -> f64 {
        self.order[p]
            .last()
            .map_or(0.0, |&s| self.finish[s as usize])
    }

    /// Time processor `p` waited between time 0 and its last sub-task's end.
    pub fn waiting(&self, p: usize) -> f64 {
        (self.end(p) - self.busy(p)).max(0.0)
    }
}

/// An event time as an ordered key (times are finite and `>= 0`; `-0.0` becomes `0.0`).
fn key(t: f64) -> u64 {
    (t + 0.0).to_bits()
}

const FINISH: u8 = 0;
const READY: u8 = 1;

/// SIMULHa with reusable buffers.
pub struct Simulator<'a> {
    program: &'a HeteroProgram,
    platform: &'a Platform,
    pending: Vec<u32>,
    avail: Vec<f64>,
    start: Vec<f64>,
    finish: Vec<f64>,
    ready: Vec<bool>,
    events: BinaryHeap<Reverse<(u64, u8, u32)>>,
    queues: Vec<BinaryHeap<Reverse<(u32, u32)>>>,
    idle: Vec<bool>,
    next: Vec<usize>,
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
    proc_of: Vec<u32>,
    ran: Vec<Vec<u32>>,
}

impl<'a> Simulator<'a> {
    /// A simulator of `model`'s program on its platform.
    pub fn new(model: &'a Ttigha) -> Self {
        Self::with(&model.program, &model.platform)
    }

    /// A simulator of `program` on `platform` (their processor types must agree).
    pub fn with(program: &'a HeteroProgram, platform: &'a Platform) -> Self {
        assert_eq!(
            program.types,
            platform.types(),
            "one time per processor type"
        );
        let (n, m) = (program.subtasks(), platform.processors());
        Simulator {
            program,
            platform,
            pending: vec![0; n],
            avail: vec![0.0; n],
            start: vec![0.0; n],
            finish: vec![0.0; n],
            ready: vec![false; n],
            events: BinaryHeap::new(),
            queues: vec![BinaryHeap::new(); m],
            idle: vec![true; m],
            next: vec![0; m],
            dirty: Vec::with_capacity(m),
            is_dirty: vec![false; m],
            proc_of: vec![0; n],
            ran: vec![Vec::new(); m],
        }
    }

    /// The final time of the program with task `t` on processor `alloc[t]`, in the default
    /// order.
    ///
    /// # Panics
    ///
    /// If `alloc` does not give a processor below the platform's count to every task.
    pub fn makespan(&mut self, alloc: &[u32]) -> f64 {
        self.makespan_and_total(alloc).0
    }

    /// The final time and the sum of the sub-tasks' finish times (a tie-breaker for
    /// searches: it drops when sub-tasks off the critical path finish earlier).
    pub fn makespan_and_total(&mut self, alloc: &[u32]) -> (f64, f64) {
        self.run(alloc, None, false)
            .expect("the default order never stalls")
    }

    /// The whole schedule; with `order`, each processor runs its sub-tasks strictly in
    /// `order[p]` (which must list exactly the sub-tasks of the tasks allocated to `p`).
    /// Errors if the allocation or the order is invalid, or if the order makes a
    /// processor wait forever.
    pub fn schedule(
        &mut self,
        alloc: &[u32],
        order: Option<&[Vec<u32>]>,
    ) -> Result<Schedule, Error> {
        let (pr, m) = (self.program, self.platform.processors());
        if alloc.len() != pr.tasks() {
            return Err(Error::Mismatch(format!(
                "the allocation has {} entries but the program has {} tasks",
                alloc.len(),
                pr.tasks()
            )));
        }
        if let Some(t) = alloc.iter().position(|&p| p as usize >= m) {
            return Err(Error::Mismatch(format!(
                "task {} ({}) is allocated to processor {} but the platform has {m} processors",
                t, pr.task_names[t], alloc[t]
            )));
        }
        if let Some(order) = order {
            if order.len() != m {
                return Err(Error::Mismatch(format!(
                    "the order lists {} processors but the platform has {m}",
                    order.len()
                )));
            }
            let mut seen = vec![false; pr.subtasks()];
            for (p, list) in order.iter().enumerate() {
                for &s in list {
                    let Some(t) = pr.subtask_task.get(s as usize) else {
                        return Err(Error::Mismatch(format!(
                            "the order of processor {p} names sub-task {s}, out of range"
                        )));
                    };
                    if alloc[*t as usize] as usize != p || seen[s as usize] {
                        return Err(Error::Mismatch(format!(
                            "the order of processor {p} lists sub-task {} ({}) {}",
                            s,
                            pr.subtask_names[s as usize],
                            if seen[s as usize] {
                                "twice"
                            } else {
                                "of a task allocated elsewhere"
                            }
                        )));
                    }
                    seen[s as usize] = true;
                }
            }
            if let Some(s) = seen.iter().position(|&x| !x) {
                return Err(Error::Mismatch(format!(
                    "the order does not list sub-task {s} ({})",
                    pr.subtask_names[s]
                )));
            }
        }
        let (makespan, _) = self.run(alloc, order, true).map_err(|p| {
            let s = order.expect("only a given order stalls")[p][self.next[p]] as usize;
            Error::Mismatch(format!(
                "the order never finishes: processor {p} waits for sub-task {s} ({}), whose inputs depend on sub-tasks queued behind others",
                pr.subtask_names[s]
            ))
        })?;
        Ok(Schedule {
            processor: self.proc_of.clone(),
            start: self.start.clone(),
            finish: self.finish.clone(),
            order: self.ran.clone(),
            makespan,
        })
    }

    /// Runs the simulation: the final time and the sum of finish times, or `Err(p)` if
    /// processor `p` stalls on a given order.
    fn run(
        &mut self,
        alloc: &[u32],
        order: Option<&[Vec<u32>]>,
        record: bool,
    ) -> Result<(f64, f64), usize> {
        let (pr, pl) = (self.program, self.platform);
        let n = pr.subtasks();
        for t in 0..pr.tasks() {
            for s in pr.subtasks_of(t) {
                self.proc_of[s] = alloc[t];
            }
        }
        for s in 0..n {
            self.pending[s] = pr.inputs(s);
            self.avail[s] = 0.0;
            self.ready[s] = false;
            if self.pending[s] == 0 {
                self.events.push(Reverse((0, READY, s as u32)));
            }
        }
        for p in 0..pl.processors() {
            self.queues[p].clear();
            self.idle[p] = true;
            self.next[p] = 0;
            self.ran[p].clear();
        }
        let mut done = 0usize;
        let (mut makespan, mut total) = (0.0f64, 0.0f64);
        while let Some(&Reverse((now_key, _, _))) = self.events.peek() {
            let now = f64::from_bits(now_key);
            while let Some(&Reverse((k, kind, s))) = self.events.peek() {
                if k != now_key {
                    break;
                }
                self.events.pop();
                let s = s as usize;
                let p = self.proc_of[s] as usize;
                if kind == FINISH {
                    done += 1;
                    makespan = makespan.max(now);
                    total += now;
                    self.idle[p] = true;
                    self.mark(p);
                    let chain = pr.next_in_task(s).map(|y| (y, 0u64, 0u64));
                    let msgs = pr.outgoing(s).map(|m| (m.to as usize, 1, m.bytes));
                    for (y, count, bytes) in chain.into_iter().chain(msgs) {
                        let q = self.proc_of[y] as usize;
                        let arrive = now + pl.comm_time(p, q, count, bytes);
                        self.avail[y] = self.avail[y].max(arrive);
                        self.pending[y] -= 1;
                        if self.pending[y] == 0 {
                            self.events
                                .push(Reverse((key(self.avail[y]), READY, y as u32)));
                        }
                    }
                } else {
                    self.ready[s] = true;
                    if order.is_none() {
                        self.queues[p].push(Reverse((pr.rank[s], s as u32)));
                    }
                    self.mark(p);
                }
            }
            while let Some(p) = self.dirty.pop() {
                let p = p as usize;
                self.is_dirty[p] = false;
                if !self.idle[p] {
                    continue;
                }
                let pick = match order {
                    None => self.queues[p].pop().map(|Reverse((_, s))| s as usize),
                    Some(order) => match order[p].get(self.next[p]) {
                        Some(&s) if self.ready[s as usize] => {
                            self.next[p] += 1;
                            Some(s as usize)
                        }
                        _ => None,
                    },
                };
                if let Some(s) = pick {
                    self.idle[p] = false;
                    let end = now + pr.time(s, pl.proc_type[p] as usize);
                    if record {
                        self.start[s] = now;
                        self.finish[s] = end;
                        self.ran[p].push(s as u32);
                    }
                    self.events.push(Reverse((key(end), FINISH, s as u32)));
                }
            }
        }
        if done < n {
            let order = order.expect("the default order never stalls");
            let p = (0..pl.processors())
                .find(|&p| self.next[p] < order[p].len())
                .expect("a stalled processor");
            return Err(p);
        }
        Ok((makespan, total))
    }

    fn mark(&mut self, p: usize) {
        if !self.is_dirty[p] {
            self.is_dirty[p] = true;
            self.dirty.push(p as u32);
        }
    }
}

/// `s` with the XML special characters escaped.
fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// The colour of task `task` as `#rrggbb`: hues spread by the golden angle, saturation
/// 60 %, lightness 62 % (SVG 1.1 readers do not all take `hsl()`).
fn task_colour(task: usize) -> String {
    let h = (task as f64 * 137.508) % 360.0 / 60.0;
    let (s, l) = (0.6, 0.62);
    let c = (1.0 - (2.0 * l - 1.0f64).abs()) * s;
    let x = c * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    format!("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b))
}

/// A time for a label: rounded to 6 decimals, so sums show no binary noise.
fn short(t: f64) -> f64 {
    (t * 1e6).round() / 1e6
}

/// A round step of about a tenth of `span` (1, 2 or 5 times a power of ten).
fn tick_step(span: f64) -> f64 {
    let raw = span / 10.0;
    if !(raw.is_normal() && raw > 0.0) {
        return span.max(f64::MIN_POSITIVE);
    }
    let p = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * p);
    if step.is_normal() {
        step
    } else {
        span
    }
}

/// The schedule as an SVG picture, the paper's occupation graph: a row per processor, a
/// bar per sub-task (coloured by task, its name, task, start and finish in a tooltip),
/// the processor's waiting time as the grey part of its row up to its end, and a time
/// axis.
pub fn schedule_svg(model: &Ttigha, s: &Schedule) -> String {
    use std::fmt::Write as _;
    let (pr, pl) = (&model.program, &model.platform);
    let (left, width, row, top) = (140.0, 1000.0, 22.0, 40.0);
    let m = pl.processors();
    let span = if s.makespan > 0.0 && s.makespan.is_finite() {
        s.makespan
    } else {
        1.0
    };
    let x = |t: f64| left + width * (t.min(span) / span);
    let height = top + row * m as f64 + 40.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{height}" font-family="sans-serif" font-size="11">"#,
        left + width + 20.0
    );
    let _ = writeln!(
        out,
        r#"<text x="{left}" y="18" font-size="13">SIMULHa: {} tasks, {} sub-tasks on {m} processors; final time {}</text>"#,
        pr.tasks(),
        pr.subtasks(),
        short(s.makespan)
    );
    for p in 0..m {
        let y = top + row * p as f64;
        let _ = writeln!(
            out,
            r#"<text x="4" y="{}">{p} ({})</text>"#,
            y + row * 0.65,
            xml_escape(&pl.type_names[pl.proc_type[p] as usize])
        );
        let _ = writeln!(
            out,
            r##"<rect class="waiting" x="{left}" y="{}" width="{:.2}" height="{}" fill="#e4e4e4"><title>processor {p}: busy {}, waiting {}</title></rect>"##,
            y + 2.0,
            x(s.end(p)) - left,
            row - 4.0,
            short(s.busy(p)),
            short(s.waiting(p))
        );
        for &sub in &s.order[p] {
            let sub = sub as usize;
            let task = pr.subtask_task[sub] as usize;
            let (a, b) = (x(s.start[sub]), x(s.finish[sub]));
            let _ = writeln!(
                out,
                r##"<rect class="busy" x="{a:.2}" y="{}" width="{:.2}" height="{}" fill="{}" stroke="#333" stroke-width="0.3"><title>{} ({}): {} - {}</title></rect>"##,
                y + 2.0,
                (b - a).max(0.5),
                row - 4.0,
                task_colour(task),
                xml_escape(&pr.subtask_names[sub]),
                xml_escape(&pr.task_names[task]),
                short(s.start[sub]),
                short(s.finish[sub])
            );
        }
    }
    let axis = top + row * m as f64 + 6.0;
    let _ = writeln!(
        out,
        r##"<line x1="{left}" y1="{axis}" x2="{}" y2="{axis}" stroke="#333"/>"##,
        left + width
    );
    let step = tick_step(span);
    // At most a dozen ticks (tick_step gives about ten; a step too small to move `t`
    // cannot loop).
    let ticks = ((span / step).floor() as usize).min(12);
    for i in 0..=ticks {
        let t = i as f64 * step;
        let _ = writeln!(
            out,
            r##"<line x1="{0:.2}" y1="{axis}" x2="{0:.2}" y2="{1}" stroke="#333"/><text x="{0:.2}" y="{2}" text-anchor="middle">{3}</text>"##,
            x(t),
            axis + 4.0,
            axis + 16.0,
            short(t)
        );
    }
    out.push_str("</svg>\n");
    out
}
