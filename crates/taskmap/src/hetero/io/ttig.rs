//! The `.ttig` model files (PROCTYPE, COMM, LINK, TASK, SUBTASK and SEND lines) and the
//! platform files (their PROCTYPE, COMM and LINK lines alone), read with every error at its
//! line and column.

use std::collections::HashMap;
use std::path::Path;

use crate::error::Error;
use crate::hetero::ttigha::*;

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
pub(crate) type Tok<'a> = (usize, &'a str);

/// Parses TTIGHa text; `path` names the input in errors.
pub fn parse_ttigha(text: &str, path: &Path) -> Result<Ttigha, Error> {
    let (platform, program) = parse_parts(text, path, false)?;
    Ok(Ttigha {
        platform,
        program: program.expect("a program was asked for"),
    })
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
pub(crate) fn parse_parts(
    text: &str,
    path: &Path,
    platform_only: bool,
) -> Result<(Platform, Option<HeteroProgram>), Error> {
    let mut r = TtigReader::new(path, platform_only);
    let mut last_line = 0usize;
    for (li, raw) in text.lines().enumerate() {
        let line = li + 1;
        last_line = line;
        r.read_line(line, raw)?;
    }
    let end = last_line.max(1);
    r.check_declarations(end)?;
    let table = r.link_table()?;
    r.check_links(&table, end)?;
    let ntypes = r.type_names.len();
    let platform = r.take_platform(table);
    let messages = r.messages(&platform)?;
    if platform_only {
        return Ok((platform, None));
    }
    let sends = &r.sends;
    let program = HeteroProgram::new(ntypes, r.tasks, messages).map_err(|e| {
        let (line, toks) = &sends[e.message as usize];
        Error::parse(path, *line, toks[0].0, format!(
            "this message lies on a cycle of dependencies ({} -> {} and back): the program would deadlock",
            toks[0].1, toks[1].1
        ))
    })?;
    Ok((platform, Some(program)))
}

/// The declarations of a `.ttig` file read so far, with the indexes that resolve names;
/// `LINK` and `SEND` lines are kept as tokens until every name is known.
struct TtigReader<'t, 'p> {
    /// Names the input in errors.
    path: &'p Path,
    /// Whether `TASK`, `SUBTASK` and `SEND` lines are refused.
    platform_only: bool,
    /// Processor type names, in declaration order.
    type_names: Vec<String>,
    /// Line of each processor type.
    type_line: Vec<usize>,
    /// Type of each processor.
    proc_type: Vec<u32>,
    /// Communication types: name, startup time, time per byte.
    comms: Vec<(String, f64, f64)>,
    /// Index of each communication type by name.
    comm_index: HashMap<String, u32>,
    /// The `LINK` lines: line and the three argument tokens.
    links: Vec<(usize, Vec<Tok<'t>>)>,
    /// Tasks and their sub-tasks.
    tasks: Vec<TaskSpec>,
    /// Line of each task.
    task_line: Vec<usize>,
    /// Index of each task by name.
    task_index: HashMap<String, usize>,
    /// Number and line of each sub-task by name.
    sub_index: HashMap<String, (u32, usize)>,
    /// Sub-tasks so far.
    nsub: u32,
    /// The `SEND` lines: line and the three argument tokens.
    sends: Vec<(usize, Vec<Tok<'t>>)>,
    /// Every sub-task's longest time plus every message's longest time: the simulated
    /// final time stays below this, so it must be finite.
    total: f64,
}

impl<'t, 'p> TtigReader<'t, 'p> {
    /// An empty reader for `path`.
    fn new(path: &'p Path, platform_only: bool) -> Self {
        TtigReader {
            path,
            platform_only,
            type_names: Vec::new(),
            type_line: Vec::new(),
            proc_type: Vec::new(),
            comms: Vec::new(),
            comm_index: HashMap::new(),
            links: Vec::new(),
            tasks: Vec::new(),
            task_line: Vec::new(),
            task_index: HashMap::new(),
            sub_index: HashMap::new(),
            nsub: 0,
            sends: Vec::new(),
            total: 0.0,
        }
    }

    /// The parse error at `line` and `column`.
    fn err(&self, line: usize, column: usize, message: String) -> Error {
        Error::parse(self.path, line, column, message)
    }

    /// Reads line `line` of the file: its keyword, its number of values and the
    /// declaration it makes.
    fn read_line(&mut self, line: usize, raw: &'t str) -> Result<(), Error> {
        if let Some(c) = raw.find('\r') {
            return Err(self.err(
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
            return Ok(());
        };
        let kw_up = kw.to_ascii_uppercase();
        self.check_arity(line, body, &toks, &kw_up)?;
        match kw_up.as_str() {
            "PROCTYPE" => self.proctype(line, kcol, &toks),
            "COMM" => self.comm(line, &toks),
            "LINK" => {
                self.links.push((line, toks[1..].to_vec()));
                Ok(())
            }
            "SEND" => {
                self.sends.push((line, toks[1..].to_vec()));
                Ok(())
            }
            "TASK" => self.task(line, &toks),
            "SUBTASK" => self.subtask(line, kcol, &toks),
            _ => unreachable!(),
        }
    }

    /// Checks that the keyword `kw_up` (the first of `toks`, upper-cased) is known, allowed
    /// in this file and followed by the number of values it takes.
    fn check_arity(&self, line: usize, body: &str, toks: &[Tok], kw_up: &str) -> Result<(), Error> {
        let (kcol, kw) = toks[0];
        if self.platform_only && matches!(kw_up, "TASK" | "SUBTASK" | "SEND") {
            return Err(self.err(
                line,
                kcol,
                format!("{kw_up} in a platform file (it holds PROCTYPE, COMM and LINK lines only)"),
            ));
        }
        let nargs = match kw_up {
            "TASK" => 1,
            "PROCTYPE" => 2,
            "LINK" | "COMM" | "SEND" => 3,
            "SUBTASK" if self.type_names.is_empty() => {
                return Err(self.err(line, kcol, "SUBTASK before any PROCTYPE".into()))
            }
            "SUBTASK" => 1 + self.type_names.len(),
            _ => {
                return Err(self.err(
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
                    self.type_names.len()
                )
            } else {
                format!("{nargs} value(s)")
            };
            return Err(self.err(line, c, format!("{what}: {kw_up} takes {needs}")));
        }
        Ok(())
    }

    /// The token `(c, t)` as a name of `what`, which must not be `*` or look like a number.
    fn name(&self, line: usize, (c, t): Tok, what: &str) -> Result<String, Error> {
        if t == "*" || t.starts_with(|ch: char| ch.is_ascii_digit() || ch == '-') {
            return Err(self.err(
                line,
                c,
                format!("{what} must not be \"*\" or start with a digit or '-', found \"{t}\""),
            ));
        }
        Ok(t.to_string())
    }

    /// The token `(c, t)` as a time of `what`: a finite real `>= 0`.
    fn real(&self, line: usize, (c, t): Tok, what: &str) -> Result<f64, Error> {
        time_value(t).ok_or_else(|| {
            self.err(
                line,
                c,
                format!("expected {what} (a finite real >= 0), found \"{t}\""),
            )
        })
    }

    /// A `PROCTYPE` line: a new processor type and its machines.
    fn proctype(&mut self, line: usize, kcol: usize, toks: &[Tok]) -> Result<(), Error> {
        if self.nsub > 0 {
            return Err(self.err(line, kcol, "PROCTYPE after the first SUBTASK (sub-tasks give one time per type, so the types come first)".into()));
        }
        let n = self.name(line, toks[1], "a processor type name")?;
        if let Some(i) = self.type_names.iter().position(|x| *x == n) {
            return Err(self.err(
                line,
                toks[1].0,
                format!(
                    "processor type \"{n}\" is declared twice (first at line {})",
                    self.type_line[i]
                ),
            ));
        }
        let (c, t) = toks[2];
        let have = self.proc_type.len();
        let count = match t.parse::<usize>() {
            Ok(v) if v >= 1 && v <= MAX_PROCESSORS - have => v,
            _ if have == MAX_PROCESSORS => {
                return Err(self.err(line, c, format!(
                    "the platform already has {MAX_PROCESSORS} processors, the most it may have"
                )))
            }
            _ => {
                return Err(self.err(line, c, format!(
                    "expected a machine count from 1 to {} (at most {MAX_PROCESSORS} processors in all), found \"{t}\"",
                    MAX_PROCESSORS - have
                )))
            }
        };
        self.proc_type
            .extend(std::iter::repeat_n(self.type_names.len() as u32, count));
        self.type_names.push(n);
        self.type_line.push(line);
        Ok(())
    }

    /// A `COMM` line: a new communication type.
    fn comm(&mut self, line: usize, toks: &[Tok]) -> Result<(), Error> {
        let n = self.name(line, toks[1], "a communication type name")?;
        if self.comm_index.contains_key(&n) {
            return Err(self.err(
                line,
                toks[1].0,
                format!("communication type \"{n}\" is declared twice"),
            ));
        }
        let startup = self.real(line, toks[2], "a startup time")?;
        let per_byte = self.real(line, toks[3], "a time per byte")?;
        self.comm_index.insert(n.clone(), self.comms.len() as u32);
        self.comms.push((n, startup, per_byte));
        Ok(())
    }

    /// A `TASK` line: a new task, without sub-tasks yet.
    fn task(&mut self, line: usize, toks: &[Tok]) -> Result<(), Error> {
        let n = self.name(line, toks[1], "a task name")?;
        if let Some(&i) = self.task_index.get(&n) {
            return Err(self.err(
                line,
                toks[1].0,
                format!(
                    "task \"{n}\" is declared twice (first at line {})",
                    self.task_line[i]
                ),
            ));
        }
        self.task_index.insert(n.clone(), self.tasks.len());
        self.tasks.push((n, Vec::new()));
        self.task_line.push(line);
        Ok(())
    }

    /// A `SUBTASK` line: a new sub-task of the last task, with a time per processor type.
    fn subtask(&mut self, line: usize, kcol: usize, toks: &[Tok]) -> Result<(), Error> {
        if self.tasks.is_empty() {
            return Err(self.err(line, kcol, "SUBTASK outside a TASK".into()));
        }
        let n = self.name(line, toks[1], "a sub-task name")?;
        if let Some(&(_, l)) = self.sub_index.get(&n) {
            return Err(self.err(
                line,
                toks[1].0,
                format!("sub-task \"{n}\" is declared twice (first at line {l})"),
            ));
        }
        let times = (0..self.type_names.len())
            .map(|p| self.real(line, toks[2 + p], "a time"))
            .collect::<Result<Vec<f64>, Error>>()?;
        self.total += times.iter().copied().fold(0.0, f64::max);
        if !self.total.is_finite() {
            return Err(self.err(line, toks[2].0, TOO_LONG.into()));
        }
        self.sub_index.insert(n.clone(), (self.nsub, line));
        self.nsub = self
            .nsub
            .checked_add(1)
            .ok_or_else(|| self.err(line, kcol, "too many sub-tasks".into()))?;
        let task = self.tasks.last_mut().expect("checked above");
        task.1.push((n, times));
        Ok(())
    }

    /// Checks, once every line is read, that there are processors, tasks (unless the file
    /// is a platform) and a sub-task in every task; `end` is the last line.
    fn check_declarations(&self, end: usize) -> Result<(), Error> {
        if self.type_names.is_empty() {
            return Err(self.err(end, 1, "no PROCTYPE: the platform has no processors".into()));
        }
        if self.tasks.is_empty() && !self.platform_only {
            return Err(self.err(end, 1, "no TASK: the program is empty".into()));
        }
        if let Some(t) = self.tasks.iter().position(|t| t.1.is_empty()) {
            return Err(self.err(
                self.task_line[t],
                1,
                format!("task \"{}\" has no SUBTASK", self.tasks[t].0),
            ));
        }
        Ok(())
    }

    /// The processors a `LINK` token names: `*`, a processor type, a processor or a range.
    fn link_set(&self, line: usize, (c, t): Tok) -> Result<Vec<usize>, Error> {
        let m = self.proc_type.len();
        if t == "*" {
            return Ok((0..m).collect());
        }
        if let Some(p) = self.type_names.iter().position(|x| x == t) {
            return Ok((0..m)
                .filter(|&i| self.proc_type[i] as usize == p)
                .collect());
        }
        let (a, b) = match t.split_once('-') {
            Some((a, b)) => (a, b),
            None => (t, t),
        };
        match (a.parse::<usize>(), b.parse::<usize>()) {
            (Ok(a), Ok(b)) if a <= b && b < m => Ok((a..=b).collect()),
            _ => Err(self.err(line, c, format!(
                "expected \"*\", a processor type, a processor or a range i-j of processors 0-{}, found \"{t}\"",
                m - 1
            ))),
        }
    }

    /// The communication type of each ordered pair of processors, from the `LINK` lines in
    /// file order, later ones overriding.
    fn link_table(&self) -> Result<Vec<u32>, Error> {
        let m = self.proc_type.len();
        let mut table = vec![NO_LINK; m * m];
        let mut pairs = 0u64;
        for (line, toks) in &self.links {
            let line = *line;
            let (xs, ys) = (self.link_set(line, toks[0])?, self.link_set(line, toks[1])?);
            pairs += (xs.len() * ys.len()) as u64;
            if pairs > MAX_LINK_PAIRS {
                return Err(self.err(line, toks[0].0, format!(
                    "the LINK lines name more than {MAX_LINK_PAIRS} (2^26) processor pairs in all; give the common case with \"*\" first"
                )));
            }
            let (c, t) = toks[2];
            let Some(&ct) = self.comm_index.get(t) else {
                return Err(self.err(
                    line,
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
        Ok(table)
    }

    /// Checks that `table` gives every pair of distinct processors a communication type;
    /// `end` is the last line.
    fn check_links(&self, table: &[u32], end: usize) -> Result<(), Error> {
        let m = self.proc_type.len();
        for s in 0..m {
            for d in s + 1..m {
                if table[s * m + d] == NO_LINK {
                    return Err(self.err(
                        end,
                        1,
                        format!(
                        "no LINK gives the communication type between processors {s} ({}) and {d} ({})",
                        self.type_names[self.proc_type[s] as usize], self.type_names[self.proc_type[d] as usize]
                    ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The platform: the processor and communication types move out of the reader.
    fn take_platform(&mut self, link: Vec<u32>) -> Platform {
        let comms = std::mem::take(&mut self.comms);
        Platform {
            type_names: std::mem::take(&mut self.type_names),
            proc_type: std::mem::take(&mut self.proc_type),
            startup: comms.iter().map(|c| c.1).collect(),
            per_byte: comms.iter().map(|c| c.2).collect(),
            comm_names: comms.into_iter().map(|c| c.0).collect(),
            link,
        }
    }

    /// The messages of the `SEND` lines, each between sub-tasks of two different tasks and
    /// added to the total at its longest time on `platform`.
    fn messages(&mut self, platform: &Platform) -> Result<Vec<SubtaskMessage>, Error> {
        let mut sub_task_of = Vec::with_capacity(self.nsub as usize);
        for (t, task) in self.tasks.iter().enumerate() {
            sub_task_of.extend(std::iter::repeat_n(t, task.1.len()));
        }
        let mut messages = Vec::with_capacity(self.sends.len());
        for (line, toks) in &self.sends {
            let line = *line;
            let sub = |(c, t): Tok| -> Result<u32, Error> {
                self.sub_index
                    .get(t)
                    .map(|&(i, _)| i)
                    .ok_or_else(|| self.err(line, c, format!("unknown sub-task \"{t}\"")))
            };
            let (from, to) = (sub(toks[0])?, sub(toks[1])?);
            if sub_task_of[from as usize] == sub_task_of[to as usize] {
                return Err(self.err(line, toks[1].0, format!(
                    "\"{}\" and \"{}\" both belong to task \"{}\"; a task's sub-tasks already run in order",
                    toks[0].1, toks[1].1, self.tasks[sub_task_of[from as usize]].0
                )));
            }
            let (c, t) = toks[2];
            let bytes = t.parse::<u64>().map_err(|_| {
                self.err(
                    line,
                    c,
                    format!("expected a byte count (an integer in 0..2^64), found \"{t}\""),
                )
            })?;
            self.total += platform.worst_message(bytes);
            if !self.total.is_finite() {
                return Err(self.err(line, c, TOO_LONG.into()));
            }
            messages.push(SubtaskMessage { from, to, bytes });
        }
        Ok(messages)
    }
}

/// Writes `model` as a `.ttig` file, atomically (a temporary file renamed into place), in
/// the text of [`ttigha_text`]; errors, before anything is written, when the format cannot
/// hold the model.
pub fn write_ttigha(model: &Ttigha, path: &Path) -> Result<(), Error> {
    let text = ttigha_text(model)?;
    crate::error::write_atomically(path, text.as_bytes())
}

/// The `.ttig` text of `model`, which [`parse_ttigha`] reads back to an equal model (the
/// same names, times, messages in the same order, and so the same priority order). Errors
/// when the format cannot hold the model: a name that is empty, holds white space or `#`,
/// is `*`, starts with a digit or `-`, or is given twice within its kind; a processor type
/// without processors, or processors not numbered type by type in declaration order (more
/// than [`MAX_PROCESSORS`] in all); links that are not symmetric or miss a pair; a negative
/// or non-finite startup or time per byte; a program without tasks, a task without
/// sub-tasks, times for another number of processor types than the platform's.
///
/// The platform is written with a `LINK` line per pair of processor types (the
/// communication type most of their processor pairs have), then a `LINK` line per pair of
/// processors that differs from it. Reals are written in Rust's shortest form that reads
/// back to the same value (`1.2`, `100`, `1e-9`). `O(M² + S · types + messages)`.
pub fn ttigha_text(model: &Ttigha) -> Result<String, Error> {
    check_writable(model)?;
    Ok(format_ttigha(model))
}

/// The text of `model` without the checks of [`ttigha_text`] (for [`Ttigha::to_text`]).
pub(crate) fn format_ttigha(model: &Ttigha) -> String {
    use std::fmt::Write as _;
    let (pl, pr) = (&model.platform, &model.program);
    let mut s = String::new();
    let count = pl.type_counts();
    for (t, n) in pl.type_names.iter().enumerate() {
        let _ = writeln!(s, "PROCTYPE {n} {}", count[t]);
    }
    for (c, n) in pl.comm_names.iter().enumerate() {
        let _ = writeln!(
            s,
            "COMM {n} {} {}",
            real(pl.startup[c]),
            real(pl.per_byte[c])
        );
    }
    write_links(pl, &mut s);
    for t in 0..pr.tasks() {
        let _ = writeln!(s, "TASK {}", pr.task_names[t]);
        for sub in pr.subtasks_of(t) {
            let _ = write!(s, "  SUBTASK {}", pr.subtask_names[sub]);
            for p in 0..pr.types {
                let _ = write!(s, " {}", real(pr.time(sub, p)));
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

/// The `LINK` lines of `pl`: per pair of processor types (in declaration order), the
/// communication type most of their pairs of distinct processors have (ties: the first
/// declared), then every pair of processors of theirs with another one. Processors of one
/// type are contiguous when the model was read from a file; otherwise each pair is written
/// on its own line.
fn write_links(pl: &Platform, s: &mut String) {
    use std::fmt::Write as _;
    let m = pl.processors();
    let grouped = pl.proc_type.windows(2).all(|w| w[0] <= w[1]);
    if !grouped {
        for a in 0..m {
            for b in a + 1..m {
                if let Some(c) = pl.link(a, b) {
                    let _ = writeln!(s, "LINK {a} {b} {}", pl.comm_names[c as usize]);
                }
            }
        }
        return;
    }
    let mut first = vec![0usize; pl.types() + 1];
    for &t in &pl.proc_type {
        first[t as usize + 1] += 1;
    }
    for t in 0..pl.types() {
        first[t + 1] += first[t];
    }
    let first = &first;
    let mut votes = vec![0usize; pl.comm_names.len()];
    for x in 0..pl.types() {
        for y in x..pl.types() {
            // The pairs (a, b), a < b, with a of type x and b of type y.
            let pairs = || {
                (first[x]..first[x + 1]).flat_map(move |a| {
                    (first[y]..first[y + 1])
                        .filter(move |&b| b > a)
                        .map(move |b| (a, b))
                })
            };
            votes.iter_mut().for_each(|v| *v = 0);
            for (a, b) in pairs() {
                if let Some(c) = pl.link(a, b) {
                    votes[c as usize] += 1;
                }
            }
            let Some(common) = (0..votes.len())
                .filter(|&c| votes[c] > 0)
                .max_by_key(|&c| (votes[c], std::cmp::Reverse(c)))
            else {
                continue; // a type of one processor with itself: no pair
            };
            let _ = writeln!(
                s,
                "LINK {} {} {}",
                pl.type_names[x], pl.type_names[y], pl.comm_names[common]
            );
            for (a, b) in pairs() {
                match pl.link(a, b) {
                    Some(c) if c as usize != common => {
                        let _ = writeln!(s, "LINK {a} {b} {}", pl.comm_names[c as usize]);
                    }
                    _ => {}
                }
            }
        }
    }
}

/// `x` (finite, `>= 0`) in the shortest text that reads back to it: plain decimals from
/// 1e-5 to 1e16, exponent form outside.
fn real(x: f64) -> String {
    if x == 0.0 || (1e-5..1e16).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// Why [`ttigha_text`] cannot write `model`, if it cannot.
fn check_writable(model: &Ttigha) -> Result<(), Error> {
    let (pl, pr) = (&model.platform, &model.program);
    let refuse = |m: String| {
        Err(Error::Config(format!(
            "cannot write the model as a .ttig file: {m}"
        )))
    };
    let kinds: [(&str, &[String]); 4] = [
        ("processor type", &pl.type_names),
        ("communication type", &pl.comm_names),
        ("task", &pr.task_names),
        ("sub-task", &pr.subtask_names),
    ];
    for (what, names) in kinds {
        let mut seen = std::collections::HashSet::with_capacity(names.len());
        for n in names {
            if n.is_empty()
                || n == "*"
                || n.starts_with(|c: char| c.is_ascii_digit() || c == '-')
                || n.contains(|c: char| c.is_whitespace() || c == '#')
            {
                return refuse(format!(
                    "the {what} name {n:?} is empty, \"*\", starts with a digit or '-', or holds white space or '#', which the format cannot hold"
                ));
            }
            if !seen.insert(n.as_str()) {
                return refuse(format!("the {what} name {n:?} is given twice"));
            }
        }
    }
    let m = pl.processors();
    if m == 0 || m > MAX_PROCESSORS {
        return refuse(format!(
            "the platform has {m} processors (1 to {MAX_PROCESSORS})"
        ));
    }
    if let Some(t) = pl.type_counts().iter().position(|&c| c == 0) {
        return refuse(format!(
            "processor type \"{}\" has no processors",
            pl.type_names[t]
        ));
    }
    if pl.proc_type.windows(2).any(|w| w[0] > w[1]) {
        return refuse(
            "the processors are not numbered type by type in the order of the types".into(),
        );
    }
    for c in 0..pl.comm_names.len() {
        let time = |x: f64| x.is_finite() && x >= 0.0;
        if !time(pl.startup[c]) || !time(pl.per_byte[c]) {
            return refuse(format!(
                "communication type \"{}\" has a negative or non-finite time",
                pl.comm_names[c]
            ));
        }
    }
    for a in 0..m {
        for b in a + 1..m {
            let (x, y) = (pl.link(a, b), pl.link(b, a));
            if x.is_none() || x != y {
                return refuse(format!(
                    "processors {a} and {b} have no communication type, or one per direction"
                ));
            }
        }
    }
    if pr.types != pl.types() {
        return refuse(format!(
            "the program gives times for {} processor types, the platform has {}",
            pr.types,
            pl.types()
        ));
    }
    if pr.tasks() == 0 {
        return refuse("the program has no tasks".into());
    }
    if let Some(t) = (0..pr.tasks()).find(|&t| pr.subtasks_of(t).is_empty()) {
        return refuse(format!("task \"{}\" has no sub-tasks", pr.task_names[t]));
    }
    Ok(())
}
