//! The library's errors as Python exceptions: a file that cannot be read is an `OSError`
//! (`FileNotFoundError`, `PermissionError`, ... by its errno) naming the file; a defect
//! in a file is a `taskmap.FormatError` (both `OSError` and `ValueError`) with the file
//! and, where known, the line; anything else is a `ValueError`.

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use taskmap::Error;
use taskmap_arch::ArchError;
use taskmap_graph::GraphError;

/// `e` as the Python exception described in the module documentation.
pub(crate) fn to_py(py: Python<'_>, e: impl Into<Error>) -> PyErr {
    let e: Error = e.into();
    let msg = e.to_string();
    let file = |p: &std::path::Path| p.display().to_string();
    match &e {
        Error::Io { path, source } | Error::Graph(GraphError::Io { path, source }) => {
            io_error(source, msg, file(path))
        }
        Error::Arch(ArchError::Io { file, source }) => io_error(source, msg, file.clone()),
        Error::Parse { path, line, .. } | Error::Graph(GraphError::Parse { path, line, .. }) => {
            format_error(py, msg, file(path), Some(*line as u64))
        }
        Error::Arch(ArchError::File { file, line, .. }) => {
            format_error(py, msg, file.clone(), Some(u64::from(*line)))
        }
        Error::Graph(GraphError::Invalid { path: Some(p), .. }) => {
            format_error(py, msg, file(p), None)
        }
        Error::Arch(ArchError::FileContent { file, .. }) => {
            format_error(py, msg, file.clone(), None)
        }
        _ => PyValueError::new_err(msg),
    }
}

/// `OSError(errno, strerror, filename)`, which Python turns into the subclass of the
/// errno (`[Errno 2] No such file or directory: 'f.graph'`); an error without an errno
/// keeps the whole message.
fn io_error(source: &std::io::Error, msg: String, file: String) -> PyErr {
    match source.raw_os_error() {
        Some(errno) => {
            let text = source.to_string();
            let strerror = text
                .strip_suffix(&format!(" (os error {errno})"))
                .unwrap_or(&text)
                .to_string();
            PyOSError::new_err((errno, strerror, file))
        }
        None => PyOSError::new_err(msg),
    }
}

/// `taskmap.FormatError(message, filename, lineno)`.
fn format_error(py: Python<'_>, msg: String, file: String, line: Option<u64>) -> PyErr {
    match py
        .import("taskmap._errors")
        .and_then(|m| m.getattr("FormatError"))
        .and_then(|t| t.call1((msg.clone(), file, line)))
    {
        Ok(exc) => PyErr::from_value(exc),
        Err(_) => PyValueError::new_err(msg),
    }
}

/// A `ValueError` with `msg`.
pub(crate) fn value_error(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}
