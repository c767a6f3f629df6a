//! The `taskmap` command: one library call per subcommand.

/// `print!` to stdout that ends the process quietly (exit 0) when the reader has gone away
/// (`taskmap ... | head`), instead of panicking.
macro_rules! out {
    ($($t:tt)*) => { $crate::emit(format_args!($($t)*)) };
}

/// `println!` with the behaviour of [`out!`].
macro_rules! outln {
    () => { $crate::emit(format_args!("\n")) };
    ($fmt:literal $($t:tt)*) => { $crate::emit(format_args!(concat!($fmt, "\n") $($t)*)) };
}

/// `eprintln!` that never panics: a message that cannot reach stderr (closed, full) is
/// dropped, and the exit code still tells the outcome.
macro_rules! errln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

mod cli;
mod cmd;
mod input;
mod launch;
mod oom;
mod output;

#[global_allocator]
static ALLOCATOR: oom::ExitOnFailure = oom::ExitOnFailure;

/// Set when standard output carries an output file (`-o -`): reports then go to stderr.
pub(crate) static REPORTS_TO_STDERR: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Writes to stdout (to stderr when [`REPORTS_TO_STDERR`]); on a closed pipe exits with
/// code 0, on another error with code 2.
pub(crate) fn emit(args: std::fmt::Arguments) {
    use std::io::Write;
    let written = if REPORTS_TO_STDERR.load(std::sync::atomic::Ordering::Relaxed) {
        std::io::stderr().lock().write_fmt(args)
    } else {
        std::io::stdout().lock().write_fmt(args)
    };
    if let Err(e) = written {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        errln!("taskmap: error: writing the output: {}", e);
        std::process::exit(2);
    }
}

use std::process::ExitCode;

fn main() -> ExitCode {
    // Stopped by SIGINT, SIGTERM or SIGHUP (ctrlc's `termination`): remove the outputs being
    // written (their temporary files; the destinations were never touched) and end with the
    // shell's code for an interrupt; once an output is in place, the run finishes instead,
    // with the exit code of what it did.
    let _ = ctrlc::set_handler(|| {
        if output::stop_writes() {
            std::process::exit(130);
        }
    });
    match cli::run() {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            errln!("taskmap: error: {}", message(&e));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes on one line, leaving out a cause whose text the message already
/// holds (the library's I/O errors print their cause in their own message).
fn message(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if msg.contains(&text) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&text);
    }
    msg
}
