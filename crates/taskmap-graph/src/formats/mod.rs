//! Graph file formats: one module per format, plus format selection and file helpers.

mod bench;
mod dense;
mod edgelist;
mod metis;
mod mpip;
mod mtx;
mod scotch;
mod staged;
mod text;
mod volumes;
mod weights;

use std::fmt;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::str::FromStr;

use rayon::ThreadPool;

pub use bench::{read_bench, read_bench_with_names};
pub use dense::{read_dense_matrix, DENSE_MAX_RANKS};
pub use edgelist::{read_edge_list, write_edge_list};
pub use metis::{read_metis, read_metis_on, write_metis};
pub use mpip::read_mpip;
pub use mtx::{read_matrix_market, write_matrix_market};
pub use scotch::{read_scotch, write_scotch};
pub use staged::{write_atomically_with, writes_in_place, Staged};
pub use text::{decompress, line_col};
pub use volumes::read_volumes;
pub use weights::read_task_weights;

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
    /// Directed volumes `src dst bytes`, CSV or whitespace (`.csv`, `.vol`); read only.
    Volumes,
    /// A dense communication matrix, TreeMatch's format (`.mat`, `.dense`); read only.
    Dense,
}

impl GraphFormat {
    /// Every format, in the order of the documentation table.
    pub const ALL: [GraphFormat; 8] = [
        GraphFormat::Metis,
        GraphFormat::Scotch,
        GraphFormat::MatrixMarket,
        GraphFormat::EdgeList,
        GraphFormat::Bench,
        GraphFormat::MpiP,
        GraphFormat::Volumes,
        GraphFormat::Dense,
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
            GraphFormat::Volumes => "volumes",
            GraphFormat::Dense => "dense",
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
            GraphFormat::Volumes => &["csv", "vol", "sparse"],
            GraphFormat::Dense => &["treematch", "mat"],
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
            GraphFormat::Volumes => &["csv", "vol"],
            GraphFormat::Dense => &["mat", "dense"],
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
            GraphFormat::Volumes => {
                "directed volumes `src dst bytes`, CSV or whitespace, made symmetric (.csv .vol)"
            }
            GraphFormat::Dense => {
                "dense communication matrix, n rows of n volumes, TreeMatch's (.mat .dense)"
            }
        }
    }

    /// Whether [`write_graph`] can write this format.
    pub fn can_write(self) -> bool {
        !matches!(
            self,
            GraphFormat::Bench | GraphFormat::MpiP | GraphFormat::Volumes | GraphFormat::Dense
        )
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
        self.read_on(bytes, name, None)
    }

    /// [`GraphFormat::read`] on `pool`'s threads where the reader has parallel parts
    /// (METIS: [`read_metis_on`]); the same graph or error.
    pub fn read_on(
        self,
        bytes: &[u8],
        name: &Path,
        pool: Option<&ThreadPool>,
    ) -> Result<TaskGraph, GraphError> {
        match self {
            GraphFormat::Metis => read_metis_on(bytes, name, pool),
            GraphFormat::Scotch => read_scotch(bytes, name),
            GraphFormat::MatrixMarket => read_matrix_market(bytes, name),
            GraphFormat::EdgeList => read_edge_list(bytes, name),
            GraphFormat::Bench => read_bench(bytes, name),
            GraphFormat::MpiP => read_mpip(bytes, name),
            GraphFormat::Volumes => read_volumes(bytes, name),
            GraphFormat::Dense => read_dense_matrix(bytes, name),
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
    read_graph_on(path, format, None)
}

/// [`read_graph`] on `pool`'s threads (see [`GraphFormat::read_on`]).
pub fn read_graph_on(
    path: &Path,
    format: Option<GraphFormat>,
    pool: Option<&ThreadPool>,
) -> Result<TaskGraph, GraphError> {
    let format = resolve(path, format)?;
    // The file's bytes, the arrays parsed from them and the structure check's scratch
    // take about five times the file's size (measured on METIS grids; gzip: checked again
    // as it expands).
    if let Ok(meta) = fs::metadata(path) {
        crate::memory::ensure(u128::from(meta.len()) * 5, || {
            format!(
                "reading {} ({}, about 5 times its size)",
                path.display(),
                crate::memory::human_bytes(u128::from(meta.len()))
            )
        })
        .map_err(|e| GraphError::Invalid {
            path: None,
            message: e.to_string(),
        })?;
    }
    let bytes = fs::read(path).map_err(|source| GraphError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    format.read_on(&bytes, path, pool)
}

/// Reads a graph from bytes (gzip or plain). `name_for_errors` stands for the file in error
/// messages and, when `format` is `None`, gives the extension to guess the format from.
pub fn read_graph_from_bytes(
    bytes: &[u8],
    name_for_errors: &str,
    format: Option<GraphFormat>,
) -> Result<TaskGraph, GraphError> {
    read_graph_from_bytes_on(bytes, name_for_errors, format, None)
}

/// [`read_graph_from_bytes`] on `pool`'s threads (see [`GraphFormat::read_on`]).
pub fn read_graph_from_bytes_on(
    bytes: &[u8],
    name_for_errors: &str,
    format: Option<GraphFormat>,
    pool: Option<&ThreadPool>,
) -> Result<TaskGraph, GraphError> {
    let name = Path::new(name_for_errors);
    resolve(name, format)?.read_on(bytes, name, pool)
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
        GraphFormat::Bench | GraphFormat::MpiP | GraphFormat::Volumes | GraphFormat::Dense => {
            Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                format!("the {format} format can be read but not written"),
            ))
        }
    }
}

/// Writes `g` to `path` in `format`, gzip-compressed (fast level) if the path ends in `.gz`,
/// through [`write_atomically_with`]: `path` never holds a half-written graph.
pub fn write_graph_file(path: &Path, g: &TaskGraph, format: GraphFormat) -> Result<(), GraphError> {
    let write = graph_file_writer(path, g, format)?;
    write_atomically_with(path, write).map_err(|source| GraphError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// What [`write_graph_file`] writes to `path`, for a caller that stages the file itself;
/// an error when `format` cannot be written.
pub fn graph_file_writer<'g>(
    path: &Path,
    g: &'g TaskGraph,
    format: GraphFormat,
) -> Result<impl FnOnce(&mut dyn Write) -> std::io::Result<()> + 'g, GraphError> {
    if !format.can_write() {
        return Err(GraphError::Invalid {
            path: Some(path.to_path_buf()),
            message: format!("the {format} format can be read but not written"),
        });
    }
    let gz = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().to_ascii_lowercase().ends_with(".gz"));
    Ok(move |w: &mut dyn Write| {
        if gz {
            let mut enc = flate2::write::GzEncoder::new(w, flate2::Compression::fast());
            write_graph(g, format, &mut enc)?;
            enc.finish()?;
            Ok(())
        } else {
            write_graph(g, format, &mut { w })
        }
    })
}
