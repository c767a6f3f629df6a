//! The process's allocator: the system's, except that an allocation the system refuses
//! (`ulimit -v`, a full machine without overcommit) ends the process with exit code 2 and
//! a message saying how much was asked for, instead of the standard library's abort
//! (SIGABRT, exit 134, and a core dump). The temporary files of outputs being written are
//! removed first, as on a signal; outputs already in place stay.
//!
//! Work whose size follows from the input is checked against the memory left before it
//! starts (`taskmap_graph::memory`), with a message that names the input; this is the
//! backstop for everything else. This module is the only unsafe code of the project: a
//! global allocator is an `unsafe` trait, and each method forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
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
        if p.is_null() {
            failed(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
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
        if p.is_null() {
            failed(new_size);
        }
        p
    }
}

/// Set by the first failure: a second one (while the first is reported) exits at once.
static FAILING: AtomicBool = AtomicBool::new(false);

/// Reports the failed request of `size` bytes and exits with code 2. The message is
/// formatted on the stack; only the cleanup of temporary files may allocate (little).
#[cold]
fn failed(size: usize) -> ! {
    if FAILING.swap(true, Ordering::SeqCst) {
        std::process::exit(2);
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
