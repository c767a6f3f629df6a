//! Errors of the library. User-input problems are `Err` values naming the input and the
//! place; broken internal contracts panic.

use std::path::PathBuf;

/// An error of a taskmap library call.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A task graph could not be read or is invalid.
    #[error(transparent)]
    Graph(#[from] taskmap_graph::GraphError),
    /// A target architecture could not be read or is invalid.
    #[error(transparent)]
    Arch(#[from] taskmap_arch::ArchError),
    /// A file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A defect at a known place in a mapping, capacity or pin file.
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// The inputs do not fit together (a mapping for another graph, a PE out of range...).
    #[error("{0}")]
    Mismatch(String),
    /// A bad parameter value.
    #[error("{0}")]
    Config(String),
}

impl Error {
    /// The parse error at `line` and `column` (1-based) of `path`.
    pub(crate) fn parse(
        path: &std::path::Path,
        line: usize,
        column: usize,
        message: String,
    ) -> Self {
        Error::Parse {
            path: path.to_path_buf(),
            line,
            column,
            message,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// `bytes` as UTF-8 text without a leading byte-order mark, or a parse error at the line
/// and column of the first byte that is not UTF-8 (`path` names the input).
pub(crate) fn utf8_text<'b>(bytes: &'b [u8], path: &std::path::Path) -> Result<&'b str, Error> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        Error::Parse {
            path: path.into(),
            line: good.iter().filter(|&&b| b == b'\n').count() + 1,
            column: good.len() - line_start + 1,
            message: format!("invalid UTF-8 (byte 0x{:02x})", bytes[e.valid_up_to()]),
        }
    })?;
    Ok(text.strip_prefix('\u{FEFF}').unwrap_or(text))
}

/// Writes `bytes` to `path` so that a reader never sees a half-written file (see
/// [`taskmap_graph::Staged`]: a temporary file and a rename; links followed, devices
/// written in place, permissions kept).
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> Result<(), Error> {
    taskmap_graph::write_atomically_with(path, |w| w.write_all(bytes))
        .map_err(|e| Error::io(path, e))
}
