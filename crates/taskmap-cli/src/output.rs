//! What the commands share on the way out: the output format, JSON printing, the progress
//! display, output files written atomically and never over an input, and the temporary
//! files that a signal removes.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressFinish, ProgressStyle};
use taskmap::TaskGraph;
use taskmap_graph::{GraphFormat, Staged};

use crate::input::*;

/// The report format of every subcommand (`-f`).
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub(crate) enum OutputFormat {
    /// For people.
    Human,
    /// The whole report as JSON.
    Json,
    /// The report's values as CSV: a header line, then a line per record (a list of
    /// records, as `compare` gives, or the one report); nested fields as `a.b`, lists of
    /// numbers joined by spaces, lists of records left out.
    Csv,
}

/// Prints `v` in `format`, which is JSON or CSV (the human form is each command's own).
pub(crate) fn print_data<T: serde::Serialize>(v: &T, format: OutputFormat) -> Result<()> {
    match format {
        OutputFormat::Csv => print_csv(&serde_json::to_value(v)?),
        _ => print_json(v),
    }
}

pub(crate) fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    outln!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

/// Prints `v` as CSV (see [`OutputFormat::Csv`]).
pub(crate) fn print_csv(v: &serde_json::Value) -> Result<()> {
    let records: Vec<&serde_json::Value> = match v {
        serde_json::Value::Array(items) => items.iter().collect(),
        v => vec![v],
    };
    let rows: Vec<Vec<(String, String)>> = records
        .iter()
        .map(|r| {
            let mut row = Vec::new();
            flatten("", r, &mut row);
            row
        })
        .collect();
    let mut header: Vec<&str> = Vec::new();
    for (k, _) in rows.iter().flatten() {
        if !header.contains(&k.as_str()) {
            header.push(k);
        }
    }
    let line = |cells: Vec<&str>| {
        cells
            .into_iter()
            .map(csv_field)
            .collect::<Vec<_>>()
            .join(",")
    };
    outln!("{}", line(header.clone()));
    for row in &rows {
        let cells = header
            .iter()
            .map(|h| {
                row.iter()
                    .find(|(k, _)| k == h)
                    .map_or("", |(_, v)| v.as_str())
            })
            .collect();
        outln!("{}", line(cells));
    }
    Ok(())
}

/// The scalar fields of `v` under `prefix`, nested objects as `a.b`.
fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    use serde_json::Value;
    let key = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                flatten(&key(k), x, out);
            }
        }
        Value::Array(items) if items.iter().all(|x| !x.is_object() && !x.is_array()) => {
            let joined: Vec<String> = items.iter().map(scalar).collect();
            out.push((prefix.to_string(), joined.join(" ")));
        }
        Value::Array(_) => {}
        x => out.push((prefix.to_string(), scalar(x))),
    }
}

fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The progress of a run on stderr (crate `indicatif`): what runs, its phase, and the
/// steps of the phase as `i/n` (a percentage above 1,000 steps). Drawn only when stderr is
/// a terminal; otherwise, or when not `shown`, it prints nothing at all.
pub(crate) struct Bar {
    bar: ProgressBar,
    /// The steps of the phase running now; `u64::MAX` before its first step.
    total: AtomicU64,
}

impl Bar {
    /// A display labelled `label` (the algorithm or the subcommand).
    pub(crate) fn start(label: &str, shown: bool) -> Arc<Bar> {
        let bar = if shown && std::io::stderr().is_terminal() {
            let bar = ProgressBar::new_spinner()
                .with_style(style(false))
                .with_prefix(label.to_string())
                .with_finish(ProgressFinish::AndClear);
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        } else {
            ProgressBar::hidden()
        };
        Arc::new(Bar {
            bar,
            total: AtomicU64::new(u64::MAX),
        })
    }

    /// Labels the next run `label`.
    pub(crate) fn relabel(&self, label: &str) {
        taskmap::Progress::phase(self, "");
        self.bar.set_prefix(label.to_string());
    }

    /// Clears the display, before the results are printed.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The bar's style: a spinner, the label, the phase, and with `steps`, a bar and its steps.
fn style(steps: bool) -> ProgressStyle {
    let template = if steps {
        "{spinner} {prefix} {msg} [{bar:30}] {steps} {elapsed}"
    } else {
        "{spinner} {prefix} {msg} {elapsed}"
    };
    ProgressStyle::with_template(template)
        .expect("a valid template")
        .progress_chars("=> ")
        .with_key(
            "steps",
            |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = match s.len() {
                    Some(n) if n > 1000 => write!(w, "{:.0}%", s.fraction() * 100.0),
                    Some(n) => write!(w, "{}/{n}", s.pos()),
                    None => Ok(()),
                };
            },
        )
}

impl taskmap::Progress for Bar {
    fn phase(&self, name: &str) {
        if self.total.swap(u64::MAX, Ordering::Relaxed) != u64::MAX {
            self.bar.set_style(style(false));
        }
        self.bar.set_message(name.to_string());
    }

    fn step(&self, done: u64, total: u64) {
        // position and length first, so that a new bar never shows the last phase's
        let before = self.total.swap(total, Ordering::Relaxed);
        self.bar.set_position(done);
        if before != total {
            self.bar.set_length(total);
        }
        if before == u64::MAX {
            self.bar.set_style(style(true));
        }
    }
}

/// The temporary files of the outputs this process has staged, which the handler of
/// SIGINT, SIGTERM and SIGHUP removes. A file is created and registered, and renamed, under
/// this lock. None is unregistered: one renamed or removed since is simply gone.
static TEMPORARY_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporary_files() -> MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARY_FILES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Set once an output of this run is in place: from then on a signal lets the run finish,
/// so that its exit code tells what happened to its outputs.
static COMMITTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// For the signal handler: `false` when an output is already in place (the run goes on to
/// its own exit code); else removes the temporary files being written (an interrupted
/// write leaves no `.NAME.PID.XXXXXX.tmp` file behind), keeps the lock for good so that
/// no temporary file is created or renamed afterwards, and returns `true`: the handler
/// then ends the process.
pub(crate) fn stop_writes() -> bool {
    let files = temporary_files();
    if COMMITTED.load(Ordering::SeqCst) {
        return false;
    }
    for f in files.iter() {
        let _ = std::fs::remove_file(f);
    }
    std::mem::forget(files);
    true
}

/// For the allocator's failure: removes the temporary files being written, unless the
/// list is locked (the failure came while it was changed; the next write to the same
/// name removes them, as it does a killed writer's).
pub(crate) fn abandon_writes() {
    if let Ok(files) = TEMPORARY_FILES.try_lock() {
        for f in files.iter() {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// Writes `path` through `write` to its temporary file, registered for the signal handler
/// (or in place, for a device or a descriptor); [`commit`] renames it.
pub(crate) fn stage(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<Staged> {
    // `-` is standard output, written in place as its descriptor's path is.
    let path = if is_stdout(path) {
        Path::new("/dev/stdout")
    } else {
        path
    };
    // A device, FIFO or descriptor is opened in place, outside the lock: opening a FIFO
    // blocks until a reader comes, and the signal handler must not wait for it. Nothing is
    // registered.
    let mut staged = if taskmap_graph::writes_in_place(path) {
        Staged::create(path)?
    } else {
        let mut files = temporary_files();
        let staged = Staged::create(path)?;
        files.extend(staged.temporary_path().map(Path::to_path_buf));
        staged
    };
    staged.write_with(write)?;
    Ok(staged)
}

/// Renames a staged file over its destination, unless a signal has stopped the process.
pub(crate) fn commit(staged: Staged) -> io::Result<()> {
    let _files = temporary_files();
    staged.commit()?;
    COMMITTED.store(true, Ordering::SeqCst);
    Ok(())
}

/// Writes every `(path, bytes)`: the regular files all or none (each goes to its
/// temporary file first, and only when all are written are they renamed over their
/// paths), then the devices and descriptors (standard output, FIFOs), written in place
/// once the files are in place. The error names the path.
pub(crate) fn write_files(files: &[(&Path, &[u8])]) -> Result<(), taskmap::Error> {
    let error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| taskmap::Error::Io { path, source }
    };
    let in_place = |p: &Path| is_stdout(p) || taskmap_graph::writes_in_place(p);
    for pass in [false, true] {
        let mut staged = Vec::with_capacity(files.len());
        for &(path, bytes) in files.iter().filter(|(p, _)| in_place(p) == pass) {
            staged.push((
                path,
                stage(path, |w| w.write_all(bytes)).map_err(error(path))?,
            ));
        }
        for (path, s) in staged {
            commit(s).map_err(error(path))?;
        }
    }
    Ok(())
}

/// Whether `path` is `-`, standard output.
pub(crate) fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// When one of `outputs` is `-` (standard output carries the data), the reports go to
/// standard error from now on.
pub(crate) fn claim_stdout(outputs: &[Option<&PathBuf>]) {
    if outputs.iter().flatten().any(|p| is_stdout(p)) {
        crate::REPORTS_TO_STDERR.store(true, Ordering::Relaxed);
    }
}

/// Writes `bytes` to `path` as [`write_files`] does.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), taskmap::Error> {
    write_files(&[(path, bytes)])
}

/// An error when `output` is the same file as one of `inputs` (writing it would destroy
/// the input): the same path, or the same file through another path or a link.
pub(crate) fn refuse_overwriting_inputs(output: &Path, inputs: &[Option<&PathBuf>]) -> Result<()> {
    let Ok(out_meta) = std::fs::metadata(output) else {
        return Ok(()); // a new file
    };
    if !out_meta.is_file() {
        return Ok(()); // a device such as /dev/null
    }
    for input in inputs.iter().flatten() {
        let same = match std::fs::metadata(input) {
            #[cfg(unix)]
            Ok(m) => {
                use std::os::unix::fs::MetadataExt;
                (m.dev(), m.ino()) == (out_meta.dev(), out_meta.ino())
            }
            #[cfg(not(unix))]
            Ok(_) => std::fs::canonicalize(input).ok() == std::fs::canonicalize(output).ok(),
            Err(_) => false,
        };
        if same {
            bail!(
                "the output {} is the input file {}; choose another output path",
                output.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// Errors when two of the named output files are one file, however their paths are
/// spelt (`x`, `./x`, `dir/../x`, a symbolic link to the other): each is compared by its
/// canonical path when it exists, else by its directory's canonical path and its name.
/// Outputs that exist and are no regular file (`/dev/null`) may repeat.
pub(crate) fn refuse_same_outputs(outputs: &[(&str, Option<&PathBuf>)]) -> Result<()> {
    let special = |p: &Path| std::fs::metadata(p).is_ok_and(|m| !m.is_file());
    let key = |p: &Path| -> Option<PathBuf> {
        if let Ok(c) = std::fs::canonicalize(p) {
            return Some(c);
        }
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = p.file_name()?;
        Some(std::fs::canonicalize(dir).ok()?.join(name))
    };
    let keys: Vec<(&str, &PathBuf, Option<PathBuf>)> = outputs
        .iter()
        .filter_map(|&(flag, p)| p.filter(|p| !special(p)).map(|p| (flag, p, key(p))))
        .collect();
    for (i, (flag, path, k)) in keys.iter().enumerate() {
        let clash = keys[..i]
            .iter()
            .find(|(_, p, q)| *p == *path || (k.is_some() && q == k));
        if let Some((other, _, _)) = clash {
            bail!(
                "{other} and {flag} name the same file {}; give two paths",
                path.display()
            );
        }
    }
    Ok(())
}

pub(crate) fn output_format(path: &Path, to: Option<&str>) -> Result<GraphFormat> {
    match to {
        Some(f) => parse_format(f),
        None => GraphFormat::from_path(path).ok_or_else(|| {
            anyhow!(
                "cannot tell the graph format of {} from its extension; use --to",
                path.display()
            )
        }),
    }
}

pub(crate) fn write_graph(path: &Path, g: &TaskGraph, format: GraphFormat) -> Result<u8> {
    let write = taskmap_graph::graph_file_writer(path, g, format)?;
    stage(path, write)
        .and_then(commit)
        .map_err(|source| taskmap_graph::GraphError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    errln!(
        "wrote {}: {} tasks, {} edges",
        path.display(),
        g.num_tasks(),
        g.num_edges()
    );
    Ok(0)
}

/// Rows of each table `--show-model` prints without `--full`.
pub(crate) const SHOWN_ROWS: usize = 40;

/// Prints a table of `rows` under `header`, the first `left` columns left-aligned (names)
/// and the others right-aligned, with a line saying how many of `total` `what` were left
/// out when `rows` holds fewer.
pub(crate) fn print_table(
    header: &[String],
    rows: &[Vec<String>],
    left: usize,
    total: usize,
    what: &str,
) {
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut out = String::from("  ");
        for (i, (c, w)) in cells.iter().zip(&width).enumerate() {
            let pad = w - c.chars().count();
            if i > 0 {
                out.push_str("  ");
            }
            if i < left {
                out.push_str(c);
                out.push_str(&" ".repeat(pad));
            } else {
                out.push_str(&" ".repeat(pad));
                out.push_str(c);
            }
        }
        out.trim_end().to_string()
    };
    outln!("{}", line(header));
    for r in rows {
        outln!("{}", line(r));
    }
    if rows.len() < total {
        outln!(
            "  ... {} more {} ({} in all; --full shows every row, -f json gives them all)",
            total - rows.len(),
            what,
            total
        );
    }
}

/// A time for people: whole numbers as such, others with at most 3 decimals; very large
/// ones in exponent form.
pub(crate) fn num(x: f64) -> String {
    if x.abs() >= 1e15 {
        return format!("{x:.6e}");
    }
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}
