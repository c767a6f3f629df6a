//! `taskmap info`: load a graph and print its size and weights.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::input::*;
use crate::output::*;

#[derive(Args)]
pub(crate) struct InfoArgs {
    /// Graph file (`-`: standard input), as `-g` takes it in map, eval and compare.
    #[arg(short, long, value_name = "GRAPH", required_unless_present = "input")]
    pub(crate) graph: Option<PathBuf>,
    /// The graph file as a positional argument (the old spelling of `-g`).
    #[arg(hide = true, conflicts_with = "graph")]
    pub(crate) input: Option<PathBuf>,
    /// Graph file format, when the extension does not tell.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) graph_format: Option<String>,
    /// Report format.
    #[arg(short, long, value_enum, default_value = "human")]
    pub(crate) format: OutputFormat,
}

#[derive(serde::Serialize)]
pub(crate) struct GraphInfo {
    pub(crate) tasks: usize,
    pub(crate) edges: usize,
    pub(crate) ncon: usize,
    /// Exact sums (each within 2^64 - 1, as the mappers need).
    pub(crate) total_vertex_weight: Vec<u128>,
    pub(crate) total_edge_weight: u128,
    pub(crate) max_degree: usize,
}

pub(crate) fn cmd_info(a: InfoArgs) -> Result<u8> {
    let path = a
        .graph
        .as_ref()
        .or(a.input.as_ref())
        .expect("clap requires -g or the positional graph");
    let g = read_graph(path, a.graph_format.as_deref(), None)?;
    // What map checks of a graph alone: its weight sums fit in 64 bits (eval checks that
    // too), and f_C's bound fits the refiners' signed gains on any target of two PEs or
    // more (diameter 1 at least).
    taskmap::problem::check_graph_weights(&g)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if g.edge_weight_sum() > i64::MAX as u128 {
        anyhow::bail!(
            "{}: the edge weights add up to {}, more than 2^63-1: no target of two PEs or more can be mapped (the refiners' signed gains would overflow)",
            path.display(),
            g.edge_weight_sum()
        );
    }
    let info = GraphInfo {
        tasks: g.num_tasks(),
        edges: g.num_edges(),
        ncon: g.ncon(),
        total_vertex_weight: (0..g.ncon()).map(|c| g.vertex_weight_sum(c)).collect(),
        total_edge_weight: g.edge_weight_sum(),
        max_degree: (0..g.num_tasks() as u32)
            .map(|u| g.degree(u))
            .max()
            .unwrap_or(0),
    };
    match a.format {
        OutputFormat::Json | OutputFormat::Csv => print_data(&info, a.format)?,
        OutputFormat::Human => {
            outln!("tasks               {}", info.tasks);
            outln!("edges               {}", info.edges);
            outln!(
                "vertex weights      {} per task, totals {:?}",
                info.ncon,
                info.total_vertex_weight
            );
            outln!("total edge weight   {}", info.total_edge_weight);
            outln!("max degree          {}", info.max_degree);
        }
    }
    Ok(0)
}
