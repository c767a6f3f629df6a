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
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// `bytes` as UTF-8 text, or a parse error at the line and column of the first byte that
/// is not UTF-8 (`path` names the input).
pub(crate) fn utf8_text<'b>(bytes: &'b [u8], path: &std::path::Path) -> Result<&'b str, Error> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        Error::Parse {
            path: path.into(),
            line: good.iter().filter(|&&b| b == b'\n').count() + 1,
            column: good.len() - line_start + 1,
            message: format!("invalid UTF-8 (byte 0x{:02x})", bytes[e.valid_up_to()]),
        }
    })
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so
/// that a reader never sees a half-written file.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> Result<(), Error> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{}.{}.tmp", name, std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}
