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
