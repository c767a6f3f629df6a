//! Kasahara's Standard Task Graph files (`.stg`) as heterogeneous programs: each task's
//! time scaled by a processor type's slowness, every arc a message of `--bytes`.

use std::path::Path;

use crate::error::Error;
use crate::hetero::io::ttig::*;
use crate::hetero::ttigha::*;

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
    let err =
        |line: usize, column: usize, message: String| Error::parse(path, line, column, message);
    check_slowness(path, &platform, slowness)?;
    let (toks, last_line) = stg_tokens(text, path)?;
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
    let mut recs: Vec<Record> = Vec::new();
    while let Some(tok) = it.next() {
        let rec = read_record(&mut it, tok, recs.len(), last_line, path)?;
        recs.push(rec);
    }
    check_records(&recs, announced, (hl, hc), last_line, path)?;
    let (lo, hi) = dummy_range(&recs);
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
    let messages = stg_messages(&recs, lo, hi, bytes);
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

/// A token of an STG file: its line, its column and its text.
type StgTok<'a> = (usize, usize, &'a str);

/// A task record: its time, its line, and its predecessors with their line and column.
type Record = (f64, usize, Vec<(u32, usize, usize)>);

/// The tokens of `text` with their places, up to the first `#` line, and the last line
/// looked at.
fn stg_tokens<'a>(text: &'a str, path: &Path) -> Result<(Vec<StgTok<'a>>, usize), Error> {
    let mut toks: Vec<StgTok> = Vec::new();
    let mut last_line = 1;
    for (li, raw) in text.lines().enumerate() {
        last_line = li + 1;
        if raw.trim_start().starts_with('#') {
            break;
        }
        if let Some(c) = raw.find('\r') {
            return Err(Error::parse(
                path,
                li + 1,
                c + 1,
                "a carriage return not followed by a line feed".into(),
            ));
        }
        for t in raw.split_whitespace() {
            toks.push((li + 1, t.as_ptr() as usize - raw.as_ptr() as usize + 1, t));
        }
    }
    Ok((toks, last_line))
}

/// Reads the record `id time npred pred…` that starts with token `(l, c, t)`, whose id
/// must be `expected`; its other tokens come from `it`. `last_line` places an early end.
fn read_record<'a>(
    it: &mut impl Iterator<Item = StgTok<'a>>,
    (l, c, t): StgTok<'a>,
    expected: usize,
    last_line: usize,
    path: &Path,
) -> Result<Record, Error> {
    let err =
        |line: usize, column: usize, message: String| Error::parse(path, line, column, message);
    let id = t.parse::<u64>().map_err(|_| {
        err(
            l,
            c,
            format!("expected task id {expected} (an integer), found \"{t}\""),
        )
    })?;
    if id != expected as u64 {
        return Err(err(
            l,
            c,
            format!("expected task id {expected} (ids run 0, 1, ... in order), found {id}"),
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
    Ok((time, l, preds))
}

/// Checks the records against the count line (announced at `(hl, hc)`) and that every
/// predecessor is a task; `last_line` places the error of a file without records.
fn check_records(
    recs: &[Record],
    announced: u64,
    (hl, hc): (usize, usize),
    last_line: usize,
    path: &Path,
) -> Result<(), Error> {
    let n = recs.len();
    if n == 0 {
        return Err(Error::parse(path, last_line, 1, "no task records".into()));
    }
    // The count line counts the tasks with or without the two dummies.
    if announced != n as u64 && announced + 2 != n as u64 {
        return Err(Error::parse(path, hl, hc, format!(
            "the count line announces {announced} tasks but the file has {n} records ({announced} or {} expected: truncated?)",
            announced.saturating_add(2)
        )));
    }
    for (_, _, preds) in recs {
        if let Some(&(p, l, c)) = preds.iter().find(|x| x.0 as usize >= n) {
            return Err(Error::parse(
                path,
                l,
                c,
                format!("predecessor {p} is not a task (the ids run 0-{})", n - 1),
            ));
        }
    }
    Ok(())
}

/// The records kept, `lo..hi`: without the dummy entry (a first record of time 0 without
/// predecessors) and exit (a last record of time 0 that is no record's predecessor).
fn dummy_range(recs: &[Record]) -> (usize, usize) {
    let n = recs.len();
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
    (lo, hi)
}

/// A message of `bytes` for every arc between records kept (`lo..hi`), numbered from
/// `lo`; a predecessor listed twice counts once.
fn stg_messages(recs: &[Record], lo: usize, hi: usize, bytes: u64) -> Vec<SubtaskMessage> {
    let keep = |i: usize| i >= lo && i < hi;
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
    messages
}
