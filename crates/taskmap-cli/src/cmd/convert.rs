//! `taskmap convert`: a graph from one file format to another.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::input::*;
use crate::output::*;

#[derive(Args)]
pub(crate) struct ConvertArgs {
    /// Input graph file (`-`: standard input, METIS unless --from says otherwise).
    #[arg(short, long, value_name = "INPUT", required_unless_present = "input")]
    pub(crate) graph: Option<PathBuf>,
    /// Output graph file (.graph METIS, .grf Scotch, .mtx Matrix Market, .edges edge list;
    /// .gz compresses; `-`: standard output, give --to).
    #[arg(
        short,
        long,
        value_name = "OUTPUT",
        conflicts_with = "output_positional",
        required_unless_present = "output_positional",
        required_unless_present_all = ["graph", "input"]
    )]
    pub(crate) output: Option<PathBuf>,
    /// The first positional path (the old spelling): the input, or the output when `-g`
    /// gives the input.
    #[arg(hide = true, value_name = "INPUT")]
    pub(crate) input: Option<PathBuf>,
    /// The second positional path (the old spelling): the output.
    #[arg(hide = true, value_name = "OUTPUT", conflicts_with_all = ["graph", "output"])]
    pub(crate) output_positional: Option<PathBuf>,
    /// Input format, when the extension does not tell.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) from: Option<String>,
    /// Output format, when the extension does not tell.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) to: Option<String>,
}

impl ConvertArgs {
    /// The input and output paths: `-g` and `-o`, the positional paths filling, in order,
    /// whichever of the two the flags leave out. `Err` with the path one too many when
    /// `-g`, `-o` and a positional path are all given (clap refuses the other miscounts).
    pub(crate) fn paths(&self) -> Result<(&PathBuf, &PathBuf), &PathBuf> {
        let mut positional = self.input.iter().chain(&self.output_positional);
        let input = match &self.graph {
            Some(g) => g,
            None => positional
                .next()
                .expect("clap requires -g or the input path"),
        };
        let output = match &self.output {
            Some(o) => o,
            None => positional
                .next()
                .expect("clap requires -o or the output path"),
        };
        match positional.next() {
            Some(extra) => Err(extra),
            None => Ok((input, output)),
        }
    }
}

pub(crate) fn cmd_convert(a: ConvertArgs) -> Result<u8> {
    let (input, output) = a
        .paths()
        .map_err(|extra| anyhow::anyhow!("{}: one path too many", extra.display()))?;
    claim_stdout(&[Some(output)]);
    refuse_overwriting_inputs(output, &[Some(input)])?;
    let g = read_graph(input, a.from.as_deref(), None)?;
    let format = output_format(output, a.to.as_deref())?;
    write_graph(output, &g, format)
}
