//! Output files that no reader sees half-written: a temporary file (crate `tempfile`) in
//! the destination's directory, renamed over it once whole.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::TempPath;

/// An output file being written: to a temporary file `.NAME.PID.XXXXXX.tmp` beside its
/// destination, which [`Staged::commit`] renames over it and which is removed when dropped
/// uncommitted; or in place, appending, for a device or a FIFO (`/dev/null`) or a path that
/// names an open descriptor (`/dev/stdout`, `/proc/self/fd/1`), which a rename would
/// replace. A symbolic link is followed (a dangling one is replaced by a regular file); the
/// temporary file gets the old file's permissions, and a read-only file is refused, as a
/// shell redirect refuses it. Creating one removes the temporary files of earlier writers
/// of the same name that were killed (their process is gone). Nothing here acts on signals: a program
/// registers [`Staged::temporary_path`] and removes those files in its handler (the CLI).
#[derive(Debug)]
pub struct Staged {
    dest: PathBuf,
    file: File,
    /// The temporary file; `None` when the destination is written in place.
    tmp: Option<TempPath>,
}

impl Staged {
    /// Creates the temporary file of `path` (or opens a device or a descriptor). `NAME` is
    /// the destination's name cut to 96 bytes, so that the temporary name stays within the
    /// usual 255-byte limit wherever the destination's own name fits.
    pub fn create(path: &Path) -> io::Result<Staged> {
        let dest = destination(path);
        let existing = fs::metadata(&dest).ok();
        if let Some(m) = &existing {
            if m.is_dir() {
                return Err(io::Error::other("the output path is a directory"));
            }
            if m.is_file() && m.permissions().readonly() {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "the output file is read-only (a shell redirect would refuse it too); make it writable or remove it first",
                ));
            }
            if in_place(path, &dest, m) {
                let file = fs::OpenOptions::new().append(true).open(&dest)?;
                return Ok(Staged {
                    dest,
                    file,
                    tmp: None,
                });
            }
        }
        let name = dest
            .file_name()
            .ok_or_else(|| io::Error::other("the output path has no file name"))?
            .to_string_lossy();
        let mut cut = name.len().min(96);
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        // The process id in the name: a later run removes the files of writers that are
        // gone (killed before they could clean up).
        let prefix = format!(".{}.", &name[..cut]);
        remove_stale(dir, &prefix);
        // Opened as `File::create` would (mode 0666 less the umask, not tempfile's 0600),
        // and with errors that name no temporary path.
        let file = tempfile::Builder::new()
            .prefix(&format!("{prefix}{}.", std::process::id()))
            .suffix(".tmp")
            .make_in(dir, |p| {
                fs::OpenOptions::new().write(true).create_new(true).open(p)
            })?;
        let (file, tmp) = file.into_parts();
        if let Some(m) = &existing {
            file.set_permissions(m.permissions())?;
        }
        let tmp = Some(tmp);
        Ok(Staged { dest, file, tmp })
    }

    /// The temporary file; `None` when the path is written in place.
    pub fn temporary_path(&self) -> Option<&Path> {
        self.tmp.as_deref()
    }

    /// Writes the contents through `write`, flushed (and a temporary file synced to disk).
    pub fn write_with(
        &mut self,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut w = BufWriter::with_capacity(1 << 16, &self.file);
        write(&mut w)?;
        w.flush()?;
        drop(w);
        match self.tmp {
            Some(_) => self.file.sync_all(),
            None => Ok(()),
        }
    }

    /// Renames the temporary file over the destination (and removes it if that fails).
    pub fn commit(self) -> io::Result<()> {
        drop(self.file);
        match self.tmp {
            Some(tmp) => tmp.persist(&self.dest).map_err(|e| e.error),
            None => Ok(()),
        }
    }
}

/// Removes the temporary files `PREFIX<pid>.XXXXXX.tmp` in `dir` whose process is gone
/// (no `/proc/<pid>`; nothing is removed where `/proc` is missing). A process id reused
/// since keeps its file: the cost is a file left, never a live writer's file removed.
fn remove_stale(dir: &Path, prefix: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
            continue;
        };
        let Some((pid, tail)) = rest.split_once('.') else {
            continue;
        };
        let stale = tail.ends_with(".tmp")
            && !pid.is_empty()
            && pid.bytes().all(|b| b.is_ascii_digit())
            && !Path::new("/proc").join(pid).exists();
        if stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The file `path` writes: a symbolic link's target (a dangling link is replaced itself).
fn destination(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// Whether an existing destination `dest` (of `path`, with metadata `m`) is written in
/// place: a device or a FIFO, or a path that names an open descriptor.
fn in_place(path: &Path, dest: &Path, m: &fs::Metadata) -> bool {
    !m.is_file() || names_a_descriptor(path) || names_a_descriptor(dest)
}

/// Whether [`Staged::create`] writes `path` in place (no temporary file): a device, a FIFO
/// or a descriptor's path. Opening such a path may block (a FIFO waits for a reader).
pub fn writes_in_place(path: &Path) -> bool {
    let dest = destination(path);
    fs::metadata(&dest).is_ok_and(|m| !m.is_dir() && in_place(path, &dest, &m))
}

/// Whether `p` names an open descriptor (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, or
/// anything under `/proc`, where `/dev/stdout` resolves to `/proc/self/fd/1` and then to
/// whatever file stdout is). Regular files elsewhere under `/dev` (`/dev/shm`) are not.
fn names_a_descriptor(p: &Path) -> bool {
    p == Path::new("/dev/stdout")
        || p == Path::new("/dev/stderr")
        || p.starts_with("/dev/fd")
        || p.starts_with("/proc")
}

/// Writes `path` through `write` as a [`Staged`] file, committed when whole: `path` never
/// holds a half-written file, and on an error the temporary file is removed.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut staged = Staged::create(path)?;
    staged.write_with(write)?;
    staged.commit()
}
