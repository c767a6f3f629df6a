//! Errors of graph construction and graph files.

use std::path::PathBuf;

/// An error while reading, writing or validating a task graph.
///
/// Parse errors carry the file, the 1-based line and column of the defect.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// The file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A defect at a known place in a file.
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// A defect of the graph itself (not tied to one place in a file).
    #[error("{}{message}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Invalid {
        path: Option<PathBuf>,
        message: String,
    },
}

impl GraphError {
    /// A structural defect with no file attached.
    pub fn invalid(message: impl Into<String>) -> Self {
        GraphError::Invalid {
            path: None,
            message: message.into(),
        }
    }

    /// Attaches a file to an `Invalid` error that has none.
    pub fn with_path(self, p: impl Into<PathBuf>) -> Self {
        match self {
            GraphError::Invalid {
                path: None,
                message,
            } => GraphError::Invalid {
                path: Some(p.into()),
                message,
            },
            other => other,
        }
    }
}
