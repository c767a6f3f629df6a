//! The process's allocator: the system's, except that an allocation the system refuses
//! (`ulimit -v`, a full machine without overcommit) ends the process with exit code 2 and
//! a message saying how much was asked for, instead of the standard library's abort
//! (SIGABRT, exit 134, and a core dump). The temporary files of outputs being written are
//! removed first, as on a signal; outputs already in place stay. Inside
//! `taskmap_graph::memory::fallible` the failure is returned instead, for `try_reserve`.
//!
//! Work whose size follows from the input is checked against the memory left before it
//! starts (`taskmap_graph::memory`), with a message that names the input; this is the
//! backstop for everything else. This module is the only unsafe code of the project: a
//! global allocator is an `unsafe` trait, and each method forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// The system allocator with a failure that exits with code 2.
pub(crate) struct ExitOnFailure;

// SAFETY: every method forwards to `System` with the caller's arguments, and returns its
// result unchanged whenever it is not null.
unsafe impl GlobalAlloc for ExitOnFailure {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is `System.alloc`'s.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() && !taskmap_graph::memory::allocation_may_fail() {
            failed(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() && !taskmap_graph::memory::allocation_may_fail() {
            failed(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator, with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; `new_size` obeys `realloc`'s contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() && !taskmap_graph::memory::allocation_may_fail() {
            failed(new_size);
        }
        p
    }
}

/// Set by the first failure: a failure on another thread then waits for the first to
/// report and exit.
static FAILING: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Set on the thread that reports: a failure there while reporting or exiting (an
    /// allocation in `exit`'s cleanup) ends the process at once.
    static REPORTING: Cell<bool> = const { Cell::new(false) };
}

/// Reports the failed request of `size` bytes and exits with code 2. The message is
/// formatted on the stack; only the cleanup of temporary files may allocate (little).
#[cold]
fn failed(size: usize) -> ! {
    if REPORTING.get() {
        // SAFETY: `_exit` ends the process without running anything of it.
        unsafe { libc::_exit(2) }
    }
    REPORTING.set(true);
    if FAILING.swap(true, Ordering::SeqCst) {
        // Another thread reports and exits the process; should it be stuck (on a lock this
        // thread holds), this one ends it.
        std::thread::sleep(std::time::Duration::from_secs(5));
        // SAFETY: as above.
        unsafe { libc::_exit(2) }
    }
    let mut buf = [0u8; 256];
    let mut w = &mut buf[..];
    let mib = size as f64 / (1024.0 * 1024.0);
    let _ = writeln!(
        w,
        "taskmap: error: out of memory: the system refused {size} bytes ({mib:.1} MiB); \
         raise the limit (ulimit -v) or give a smaller input"
    );
    let left = w.len();
    let _ = std::io::stderr().write_all(&buf[..buf.len() - left]);
    crate::output::abandon_writes();
    std::process::exit(2);
}
