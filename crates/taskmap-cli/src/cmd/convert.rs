//! `taskmap convert`: a graph from one file format to another.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::input::*;
use crate::output::*;

#[derive(Args)]
pub(crate) struct ConvertArgs {
    /// Input graph file (`-`: standard input, METIS unless --from says otherwise).
    pub(crate) input: PathBuf,
    /// Output graph file (.graph METIS, .grf Scotch, .mtx Matrix Market, .edges edge list;
    /// .gz compresses; `-`: standard output, give --to).
    pub(crate) output: PathBuf,
    /// Input format, when the extension does not tell.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) from: Option<String>,
    /// Output format, when the extension does not tell.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) to: Option<String>,
}

pub(crate) fn cmd_convert(a: ConvertArgs) -> Result<u8> {
    claim_stdout(&[Some(&a.output)]);
    refuse_overwriting_inputs(&a.output, &[Some(&a.input)])?;
    let g = read_graph(&a.input, a.from.as_deref())?;
    let format = output_format(&a.output, a.to.as_deref())?;
    write_graph(&a.output, &g, format)
}
