//! The command line: the subcommands and their dispatch. No algorithm lives here; each
//! subcommand is a file of `cmd/`.

use anyhow::Result;
use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};

use crate::cmd::*;

#[derive(Parser)]
#[command(
    name = "taskmap",
    version,
    about = "Static task mapping: place communicating tasks on the PEs of a parallel machine",
    long_about = "Static task mapping: place communicating tasks on the PEs of a parallel machine.\n\nExit codes: 0 success, 1 the run finished but a constraint (epsilon, capacity) is violated, 2 error, 130 stopped by SIGINT, SIGTERM or SIGHUP."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Never show a progress display (it appears only on a terminal).
    #[arg(short, long, global = true)]
    quiet: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Map a task graph onto a target (with no --graph: an embedded example).
    Map(MapArgs),
    /// Score a mapping on a target (the target may differ from the one it was made for).
    Eval(EvalArgs),
    /// Run several algorithms on one problem and tabulate their results (exit 1 when none
    /// of them gives a mapping within the constraints, 2 when none could map).
    Compare(CompareArgs),
    /// Simulate a timed program under a mapping on a wormhole-routed k-ary n-cube.
    Sim(SimArgs),
    /// Allocate a heterogeneous program's tasks to a multi-cluster (MATEHa, HEFT, PEFT or
    /// our searches, or read an allocation), simulate it with SIMULHa, optionally against
    /// the exhaustive optimum.
    Hetero(HeteroArgs),
    /// Map a precedence graph onto a shared-memory machine with the Algorithm Mapper
    /// (Houstis et al.): clustering under a time frame, queueing delays, the schedule.
    Amap(AmapArgs),
    /// Tabulate an interconnect's queueing delay D and active processors AP against the
    /// load, optionally against a simulation of the queue.
    Delay(DelayArgs),
    /// Show a target architecture: PE count, diameter, mean distance, distances.
    Arch(ArchArgs),
    /// Generate a task graph.
    Gen(GenArgs),
    /// Convert a graph between file formats.
    Convert(ConvertArgs),
    /// Load a graph and print its size and weights (checks the file).
    Info(InfoArgs),
    /// List the registered algorithms of every system, or one with its parameters.
    Algorithms(AlgorithmsArgs),
    /// Print a shell completion script (bash, elvish, fish, powershell, zsh) to stdout.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print a manual page (roff) to stdout: `taskmap man > taskmap.1`, or one
    /// subcommand's: `taskmap man map > taskmap-map.1`.
    Man {
        /// The subcommand (default: the whole program).
        subcommand: Option<String>,
    },
}

/// Parses the arguments and runs the subcommand. Returns the exit code.
pub fn run() -> Result<u8> {
    let cli = Cli::parse();
    match cli.command {
        Command::Map(a) => cmd_map(a, cli.quiet),
        Command::Eval(a) => cmd_eval(a),
        Command::Compare(a) => cmd_compare(a, cli.quiet),
        Command::Sim(a) => cmd_sim(a, cli.quiet),
        Command::Hetero(a) => cmd_hetero(a, cli.quiet),
        Command::Amap(a) => cmd_amap(a, cli.quiet),
        Command::Delay(a) => cmd_delay(a),
        Command::Arch(a) => cmd_arch(a),
        Command::Gen(a) => cmd_gen(a),
        Command::Convert(a) => {
            // `-g`, `-o` and a positional path: three paths for two places, the one miscount
            // clap's rules cannot tell (any two of them are a valid mix).
            if let Err(extra) = a.paths() {
                usage_error(
                    "convert",
                    ErrorKind::ArgumentConflict,
                    format!(
                        "the path '{}' cannot be used with both '--graph <INPUT>' and '--output <OUTPUT>'",
                        extra.display()
                    ),
                )
                .exit();
            }
            cmd_convert(a)
        }
        Command::Info(a) => cmd_info(a),
        Command::Algorithms(a) => cmd_algorithms(a),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "taskmap", &mut out);
            out!("{}", String::from_utf8_lossy(&out));
            Ok(0)
        }
        Command::Man { subcommand } => {
            let top = Cli::command();
            let page = match subcommand {
                None => top,
                Some(name) => {
                    let Some(sub) = top.find_subcommand(&name) else {
                        let names: Vec<&str> =
                            top.get_subcommands().map(|c| c.get_name()).collect();
                        anyhow::bail!("no subcommand \"{name}\"; known: {}", names.join(", "));
                    };
                    // A process prints one page: the name may live to its end.
                    let title: &'static str = format!("taskmap-{name}").leak();
                    sub.clone().name(title)
                }
            };
            let mut out = Vec::new();
            clap_mangen::Man::new(page).render(&mut out)?;
            out!("{}", String::from_utf8_lossy(&out));
            Ok(0)
        }
    }
}

/// An error of `subcommand`'s arguments, formatted as clap formats its own (with the
/// subcommand's usage); its `exit` ends the process with code 2.
fn usage_error(subcommand: &str, kind: ErrorKind, message: String) -> clap::Error {
    let mut top = Cli::command();
    top.build();
    top.find_subcommand_mut(subcommand)
        .expect("a subcommand of taskmap")
        .error(kind, message)
}
