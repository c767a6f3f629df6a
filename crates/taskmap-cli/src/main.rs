//! The `taskmap` command: one library call per subcommand.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    match cli::run() {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // `{:#}` prints the whole chain of causes on one line.
            eprintln!("taskmap: error: {:#}", e);
            ExitCode::from(2)
        }
    }
}
