//! The error type of this crate.

use thiserror::Error;

/// Errors from building or parsing an architecture. User-input problems only: broken
/// internal contracts panic instead.
#[derive(Debug, Error)]
pub enum ArchError {
    /// A CLI spec or an inline Scotch target string could not be understood.
    #[error("bad architecture spec \"{spec}\": {msg}")]
    Spec {
        /// The spec as given.
        spec: String,
        /// What is wrong with it.
        msg: String,
    },
    /// A defect at a known place of a file (1-based line and column).
    #[error("{file}:{line}:{column}: {msg}")]
    File {
        /// The file name as given.
        file: String,
        /// 1-based line.
        line: u32,
        /// 1-based column (in bytes).
        column: u32,
        /// What is wrong.
        msg: String,
    },
    /// A file whose content is well formed but describes an invalid target
    /// (for example a disconnected target graph).
    #[error("{file}: {msg}")]
    FileContent {
        /// The file name as given.
        file: String,
        /// What is wrong.
        msg: String,
    },
    /// A file could not be read.
    #[error("cannot read {file}: {source}")]
    Io {
        /// The file name as given.
        file: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Invalid parameters given to a constructor.
    #[error("invalid architecture: {0}")]
    Invalid(String),
}

impl ArchError {
    pub(crate) fn invalid(msg: impl Into<String>) -> Self {
        ArchError::Invalid(msg.into())
    }

    pub(crate) fn spec(spec: &str, msg: impl Into<String>) -> Self {
        ArchError::Spec {
            spec: spec.to_string(),
            msg: msg.into(),
        }
    }

    pub(crate) fn file(file: &str, line: u32, column: u32, msg: impl Into<String>) -> Self {
        ArchError::File {
            file: file.to_string(),
            line,
            column,
            msg: msg.into(),
        }
    }

    /// A target file's error from the graph reader, as an error of this crate.
    pub(crate) fn from_graph(e: taskmap_graph::GraphError, file: &str) -> Self {
        use taskmap_graph::GraphError as G;
        match e {
            G::Parse {
                line,
                column,
                message,
                ..
            } => ArchError::file(file, line as u32, column as u32, message),
            G::Io { source, .. } => ArchError::Io {
                file: file.to_string(),
                source,
            },
            G::Invalid { message, .. } => ArchError::FileContent {
                file: file.to_string(),
                msg: message,
            },
        }
    }

    /// Turns a constructor error into a spec error naming `spec`; other errors pass.
    pub(crate) fn in_spec(self, spec: &str) -> Self {
        match self {
            ArchError::Invalid(msg) => ArchError::spec(spec, msg),
            e => e,
        }
    }

    /// Turns a constructor error into a file error naming `file`; other errors pass.
    pub(crate) fn in_file(self, file: &str) -> Self {
        match self {
            ArchError::Invalid(msg) => ArchError::FileContent {
                file: file.to_string(),
                msg,
            },
            e => e,
        }
    }
}
