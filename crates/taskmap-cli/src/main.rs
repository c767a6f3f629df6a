//! The `taskmap` command: one library call per subcommand.

mod cli;
mod sim;

use std::process::ExitCode;

fn main() -> ExitCode {
    match cli::run() {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("taskmap: error: {}", message(&e));
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
