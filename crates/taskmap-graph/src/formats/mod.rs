//! Graph file formats: one module per format, plus format selection and file helpers.

mod bench;
mod edgelist;
mod metis;
mod mpip;
mod mtx;
mod scotch;
mod text;

use std::fmt;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use bench::{read_bench, read_bench_with_names};
pub use edgelist::{read_edge_list, write_edge_list};
pub use metis::{read_metis, write_metis};
pub use mpip::read_mpip;
pub use mtx::{read_matrix_market, write_matrix_market};
pub use scotch::{read_scotch, write_scotch};
pub use text::{decompress, line_col};

use crate::error::GraphError;
use crate::graph::TaskGraph;

/// A graph file format. The one registry of names, extensions and help texts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GraphFormat {
    /// METIS / Chaco adjacency lists, 1-based (`.graph`, `.metis`, `.chaco`).
    Metis,
    /// Scotch source graph (`.grf`, `.src`).
    Scotch,
    /// Matrix Market coordinate matrix (`.mtx`).
    MatrixMarket,
    /// One edge `u v [w]` per line, 0-based (`.edges`, `.el`, `.txt`).
    EdgeList,
    /// ISCAS-89 netlist (`.bench`); read only.
    Bench,
    /// MPI communication volumes from mpiP (`*graphStats.txt`); read only.
    MpiP,
}

impl GraphFormat {
    /// Every format, in the order of the documentation table.
    pub const ALL: [GraphFormat; 6] = [
        GraphFormat::Metis,
        GraphFormat::Scotch,
        GraphFormat::MatrixMarket,
        GraphFormat::EdgeList,
        GraphFormat::Bench,
        GraphFormat::MpiP,
    ];

    /// The canonical name, as accepted by `--format`.
    pub fn name(self) -> &'static str {
        match self {
            GraphFormat::Metis => "metis",
            GraphFormat::Scotch => "scotch",
            GraphFormat::MatrixMarket => "mtx",
            GraphFormat::EdgeList => "edges",
            GraphFormat::Bench => "bench",
            GraphFormat::MpiP => "mpip",
        }
    }

    /// Other names accepted by [`FromStr`] (case-insensitive).
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            GraphFormat::Metis => &["chaco", "graph"],
            GraphFormat::Scotch => &["grf", "src"],
            GraphFormat::MatrixMarket => &["matrix-market", "matrixmarket", "mm"],
            GraphFormat::EdgeList => &["edge-list", "edgelist", "el", "txt"],
            GraphFormat::Bench => &["iscas", "iscas89"],
            GraphFormat::MpiP => &["graphstats", "mpi"],
        }
    }

    /// File extensions (without the dot, and without a trailing `.gz`).
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            GraphFormat::Metis => &["graph", "metis", "chaco"],
            GraphFormat::Scotch => &["grf", "src"],
            GraphFormat::MatrixMarket => &["mtx"],
            GraphFormat::EdgeList => &["edges", "el", "txt"],
            GraphFormat::Bench => &["bench"],
            // Recognised by the name's end, `graphStats.txt` (see `from_path`).
            GraphFormat::MpiP => &[],
        }
    }

    /// One line of help.
    pub fn help(self) -> &'static str {
        match self {
            GraphFormat::Metis => "METIS/Chaco adjacency lists, 1-based (.graph .metis .chaco)",
            GraphFormat::Scotch => "Scotch source graph (.grf .src)",
            GraphFormat::MatrixMarket => "Matrix Market coordinate matrix (.mtx)",
            GraphFormat::EdgeList => "edge list `u v [w]`, 0-based (.edges .el .txt)",
            GraphFormat::Bench => "ISCAS-89 netlist, one task per gate and flip-flop (.bench)",
            GraphFormat::MpiP => {
                "MPI communication volumes `u , v = w` from mpiP (*graphStats.txt)"
            }
        }
    }

    /// Whether [`write_graph`] can write this format.
    pub fn can_write(self) -> bool {
        !matches!(self, GraphFormat::Bench | GraphFormat::MpiP)
    }

    /// Guesses the format from the extension of `path`, ignoring a trailing `.gz`
    /// (case-insensitive). `None` if the extension is unknown.
    pub fn from_path(path: &Path) -> Option<GraphFormat> {
        // The extension is ASCII; other bytes of the name (not UTF-8) do not matter.
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if name.ends_with("graphstats.txt") {
            return Some(GraphFormat::MpiP);
        }
        let ext = Path::new(name).extension()?.to_str()?;
        GraphFormat::ALL
            .into_iter()
            .find(|f| f.extensions().contains(&ext))
    }

    /// Reads a graph of this format from bytes (gzip or plain); `name` is used in errors.
    pub fn read(self, bytes: &[u8], name: &Path) -> Result<TaskGraph, GraphError> {
        match self {
            GraphFormat::Metis => read_metis(bytes, name),
            GraphFormat::Scotch => read_scotch(bytes, name),
            GraphFormat::MatrixMarket => read_matrix_market(bytes, name),
            GraphFormat::EdgeList => read_edge_list(bytes, name),
            GraphFormat::Bench => read_bench(bytes, name),
            GraphFormat::MpiP => read_mpip(bytes, name),
        }
    }
}

impl fmt::Display for GraphFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GraphFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.to_ascii_lowercase();
        GraphFormat::ALL
            .into_iter()
            .find(|f| f.name() == s || f.aliases().contains(&s.as_str()))
            .ok_or_else(|| {
                let names: Vec<&str> = GraphFormat::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown graph format `{s}` (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

/// Reads a graph file. The format is `format`, or else guessed from the extension with
/// [`GraphFormat::from_path`]. Gzip-compressed files are recognised by their magic bytes.
pub fn read_graph(path: &Path, format: Option<GraphFormat>) -> Result<TaskGraph, GraphError> {
    let format = resolve(path, format)?;
    let bytes = fs::read(path).map_err(|source| GraphError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    format.read(&bytes, path)
}

/// Reads a graph from bytes (gzip or plain). `name_for_errors` stands for the file in error
/// messages and, when `format` is `None`, gives the extension to guess the format from.
pub fn read_graph_from_bytes(
    bytes: &[u8],
    name_for_errors: &str,
    format: Option<GraphFormat>,
) -> Result<TaskGraph, GraphError> {
    let name = Path::new(name_for_errors);
    resolve(name, format)?.read(bytes, name)
}

fn resolve(path: &Path, format: Option<GraphFormat>) -> Result<GraphFormat, GraphError> {
    match format.or_else(|| GraphFormat::from_path(path)) {
        Some(f) => Ok(f),
        None => {
            let mut exts: Vec<String> = GraphFormat::ALL
                .iter()
                .flat_map(|f| f.extensions().iter().map(|e| format!(".{e}")))
                .collect();
            exts.push("graphStats.txt".to_string());
            Err(GraphError::Invalid {
                path: Some(path.to_path_buf()),
                message: format!(
                    "cannot tell the graph format from the file name (known extensions: {}, optionally followed by .gz); name the format explicitly",
                    exts.join(" ")
                ),
            })
        }
    }
}

/// Writes `g` in `format` to `out`. `.bench` cannot be written.
pub fn write_graph(
    g: &TaskGraph,
    format: GraphFormat,
    out: &mut impl Write,
) -> std::io::Result<()> {
    match format {
        GraphFormat::Metis => write_metis(g, out),
        GraphFormat::Scotch => write_scotch(g, out),
        GraphFormat::MatrixMarket => write_matrix_market(g, out),
        GraphFormat::EdgeList => write_edge_list(g, out),
        GraphFormat::Bench | GraphFormat::MpiP => Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            format!("the {format} format can be read but not written"),
        )),
    }
}

/// The temporary files [`write_atomically_with`] is writing now. A file is created and
/// registered, and renamed (or removed) and unregistered, under this lock.
static TEMPORARY_FILES: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn temporary_files() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARY_FILES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes the temporary files being written now, for a handler of SIGINT or SIGTERM (the
/// CLI installs one) that then ends the process: an interrupted write leaves no hidden
/// `.NAME.PID.N.tmp` file behind. It keeps the registry locked for good, so no write can
/// create or rename a temporary file afterwards; call it only right before the process
/// exits.
pub fn remove_temporary_files() {
    let files = temporary_files();
    for f in files.iter() {
        let _ = fs::remove_file(f);
    }
    std::mem::forget(files);
}

/// Whether `p` names an open descriptor (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, or
/// anything under `/proc`, where `/dev/stdout` resolves to `/proc/self/fd/1` and then to
/// whatever file stdout is): such a path is written in place, never renamed over. Regular
/// files elsewhere under `/dev` (`/dev/shm`) are not descriptors.
fn names_a_descriptor(p: &Path) -> bool {
    p == Path::new("/dev/stdout")
        || p == Path::new("/dev/stderr")
        || p.starts_with("/dev/fd")
        || p.starts_with("/proc")
}

/// Writes a file through `write` so that no reader sees it half-written: into a temporary
/// file in the destination's directory (given the old file's permissions when it exists),
/// then renamed over it. A symbolic link is followed and its target replaced (a dangling
/// link is replaced by a regular file). A path that is not a regular file (a device such
/// as `/dev/null`, a FIFO) or names an open descriptor (`/dev/stdout`, `/proc/self/fd/1`)
/// is written in place, appending, since renaming over it would replace the device or the
/// file the descriptor is open on. On an error the temporary file is removed.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    stage_with(path, write)?.commit()
}

/// A file written to its temporary name by [`stage_with`], not yet renamed over its
/// destination: [`Staged::commit`] renames it; dropped uncommitted, it is removed.
#[derive(Debug)]
pub struct Staged {
    /// `(temporary, destination)`; `None` when the path was written in place.
    rename: Option<(PathBuf, PathBuf)>,
}

impl Staged {
    /// Renames the temporary file over its destination.
    pub fn commit(mut self) -> std::io::Result<()> {
        let Some((tmp, dest)) = self.rename.take() else {
            return Ok(());
        };
        let mut files = temporary_files();
        files.retain(|f| f != &tmp);
        let result = fs::rename(&tmp, &dest);
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some((tmp, _)) = self.rename.take() {
            let mut files = temporary_files();
            let _ = fs::remove_file(&tmp);
            files.retain(|f| f != &tmp);
        }
    }
}

/// The first half of [`write_atomically_with`]: the file written to its temporary name
/// (or in place, for a device or a descriptor), to be renamed by [`Staged::commit`]. Stage
/// every output of a run before committing any, and a run that fails writing one of them
/// leaves none of them behind.
pub fn stage_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<Staged> {
    // The final destination: a link's target (a dangling link is replaced itself).
    let dest = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    };
    let existing = fs::metadata(&dest).ok();
    if let Some(m) = &existing {
        if m.is_dir() {
            return Err(std::io::Error::other("the output path is a directory"));
        }
        if !m.is_file() || names_a_descriptor(path) || names_a_descriptor(&dest) {
            let f = fs::OpenOptions::new().append(true).open(&dest)?;
            let mut w = BufWriter::new(f);
            write(&mut w)?;
            w.flush()?;
            return Ok(Staged { rename: None });
        }
    }
    let file_name = dest
        .file_name()
        .ok_or_else(|| std::io::Error::other("the output path has no file name"))?;
    let dir = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // the destination's name, cut to 96 bytes so that the temporary name stays within the
    // usual 255-byte limit of a file name wherever the destination's own name fits
    let name = file_name.to_string_lossy();
    let mut cut = name.len().min(96);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(&name[..cut]);
    // a count too, so that two files staged at once for one destination (two outputs
    // naming one file through a link) never share a temporary file
    static STAGED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = STAGED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    tmp_name.push(format!(".{}.{seq}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let file = {
        let mut files = temporary_files();
        let file = fs::File::create(&tmp)?;
        files.push(tmp.clone());
        file
    };
    // From here on, an error drops `staged`, which removes the temporary file.
    let staged = Staged {
        rename: Some((tmp, dest)),
    };
    if let Some(m) = &existing {
        file.set_permissions(m.permissions())?;
    }
    let mut w = BufWriter::with_capacity(1 << 16, file);
    write(&mut w)?;
    let file = w.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    drop(file);
    Ok(staged)
}

/// Writes `g` to `path` in `format`, gzip-compressed (fast level) if the path ends in `.gz`,
/// through [`write_atomically_with`]: `path` never holds a half-written graph.
pub fn write_graph_file(path: &Path, g: &TaskGraph, format: GraphFormat) -> Result<(), GraphError> {
    let io_err = |source: std::io::Error| GraphError::Io {
        path: path.to_path_buf(),
        source,
    };
    if !format.can_write() {
        return Err(GraphError::Invalid {
            path: Some(path.to_path_buf()),
            message: format!("the {format} format can be read but not written"),
        });
    }
    let gz = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().to_ascii_lowercase().ends_with(".gz"));
    write_atomically_with(path, |w| {
        if gz {
            let mut enc = flate2::write::GzEncoder::new(w, flate2::Compression::fast());
            write_graph(g, format, &mut enc)?;
            enc.finish()?;
            Ok(())
        } else {
            write_graph(g, format, &mut { w })
        }
    })
    .map_err(io_err)?;
    Ok(())
}
