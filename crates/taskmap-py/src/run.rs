//! Runs that release the GIL and stop on Ctrl-C.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// How often the waiting thread looks for a signal.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// The worker's stack: the CLI's runs have a main thread's 8 MiB, and the deepest
/// recursions (bipartitioning, the searches) must fit as well here.
const WORKER_STACK: usize = 16 << 20;

/// A run context with `threads` threads, for a search run by [`detached`].
pub(crate) fn context(py: Python<'_>, threads: usize) -> PyResult<taskmap::RunContext> {
    taskmap::RunContext::new(0)
        .with_threads(threads)
        .map_err(|e| crate::errors::to_py(py, e))
}

/// Runs `work` on a worker thread while the calling thread, without the GIL, waits for it
/// and looks for signals every [`SIGNAL_POLL`] (Python runs signal handlers on its main
/// thread only: a call from another thread is not interrupted). A signal handler that
/// raises (`KeyboardInterrupt` on Ctrl-C) ends the wait at once with its exception:
/// `stop` is set, so that a run that honours it ([`taskmap::RunContext::stop`]) starts no
/// more optional work, and the worker's result is dropped when it comes; work that does
/// not honour it runs to its end in the background.
pub(crate) fn detached<T: Send + 'static>(
    py: Python<'_>,
    stop: Arc<AtomicBool>,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let (tx, mut rx) = channel();
    std::thread::Builder::new()
        .name("taskmap-run".into())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start a worker thread: {e}")))?;
    loop {
        // The receiver goes to the wait without the GIL and comes back with what it got.
        let (received, back) = py.detach(move || (rx.recv_timeout(SIGNAL_POLL), rx));
        rx = back;
        match received {
            Ok(value) => return Ok(value),
            Err(RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "the run ended without a result (an internal error; please report it)",
                ))
            }
        }
    }
}
