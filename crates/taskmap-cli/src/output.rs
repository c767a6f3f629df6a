//! What the commands share on the way out: the output format, JSON printing, the progress
//! display, output files written atomically and never over an input.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use clap::ValueEnum;
use taskmap::TaskGraph;
use taskmap_graph::GraphFormat;

use crate::input::*;

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub(crate) enum OutputFormat {
    Human,
    Json,
}

pub(crate) fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    outln!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

/// Shows the running phase and the elapsed time on stderr, from one second on, when stderr
/// is a terminal. Dropping it stops the display and clears its line.
pub(crate) struct Progress {
    pub(crate) stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    pub(crate) handle: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    pub(crate) fn start(phase: std::sync::Arc<std::sync::Mutex<String>>, enabled: bool) -> Self {
        use std::io::IsTerminal;
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let handle = (enabled && std::io::stderr().is_terminal()).then(|| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let t0 = Instant::now();
                let mut shown = false;
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    let el = t0.elapsed().as_secs_f64();
                    if el >= 1.0 && !stop.load(Ordering::Relaxed) {
                        let p = phase.lock().map(|s| s.clone()).unwrap_or_default();
                        let spin = ['|', '/', '-', '\\'][(el * 10.0) as usize % 4];
                        err!("\r\x1b[2K{} mapping: {} {:.1} s", spin, p, el);
                        shown = true;
                    }
                }
                if shown {
                    err!("\r\x1b[2K");
                }
            })
        });
        Progress { stop, handle }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
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
    taskmap_graph::write_graph_file(path, g, format)?;
    errln!(
        "wrote {}: {} tasks, {} edges",
        path.display(),
        g.num_tasks(),
        g.num_edges()
    );
    Ok(0)
}
