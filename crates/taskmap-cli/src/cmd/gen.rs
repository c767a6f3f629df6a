//! `taskmap gen`: generate a task graph, a timed program or a heterogeneous program.

use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use clap::Args;
use taskmap_graph::gen;

use crate::output::*;

#[derive(Args)]
pub(crate) struct GenArgs {
    /// What to generate: grid, torus, stencil9, stencil27, ring, tree, butterfly,
    /// hypercube, rgg (random geometric), random (uniform), rmat (R-MAT, Graph500's
    /// probabilities), ba (Barabási-Albert); or `program` for a timed program (then
    /// SIZE is a program spec: ring:N, mesh:RxC, butterfly:K, tree:N, random:N[,seed=S,...]);
    /// or `ttig` for a random heterogeneous program and platform, the .ttig file of
    /// `taskmap hetero -g` (then SIZE is TASKS[,key=value...] with the keys subtasks,
    /// procs=N1:N2, slowness=F1:F2, time=LO:HI, prob, bytes=LO:HI, lan=S:B, switch=S:B,
    /// seed; docs/hetero.md).
    pub(crate) kind: String,
    /// Size: dimensions like 100x100 or 100x100x100 (grid, torus, stencils), a task count
    /// (ring, tree, rgg, random, rmat, ba), stages (butterfly) or dimension (hypercube).
    pub(crate) size: String,
    /// Mean degree for rgg, random, rmat and ba (ba: twice the links of a new task,
    /// rounded).
    #[arg(long, default_value_t = 6.0)]
    pub(crate) degree: f64,
    /// Seed for rgg, random, rmat, ba and ttig (default 0; ttig also takes it as the key
    /// seed=, not both ways).
    #[arg(short, long)]
    pub(crate) seed: Option<u64>,
    /// Output file; the extension chooses the format (.graph, .grf, .edges, ...; .gz
    /// compresses); `-` writes to standard output (give --to).
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: PathBuf,
    /// Output format, when the extension does not tell.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) to: Option<String>,
}

pub(crate) fn parse_dims(s: &str) -> Result<Vec<u32>> {
    s.split('x')
        .map(|t| {
            t.parse::<u32>().ok().filter(|&d| d > 0).ok_or_else(|| {
                anyhow!(
                    "bad size \"{}\": expected whole numbers from 1 to 4294967295 like 100x100",
                    s
                )
            })
        })
        .collect()
}

pub(crate) fn parse_count(s: &str) -> Result<u32> {
    s.parse::<u32>().ok().filter(|&d| d > 0).ok_or_else(|| {
        anyhow!(
            "bad size \"{}\": expected a whole number from 1 to 4294967295",
            s
        )
    })
}

pub(crate) fn cmd_gen(a: GenArgs) -> Result<u8> {
    claim_stdout(&[Some(&a.output)]);
    if a.kind == "program" {
        let p = crate::cmd::sim::gen_program(&a.size, &a.output)?;
        errln!(
            "wrote {}: program of {} tasks",
            a.output.display(),
            p.num_tasks()
        );
        return Ok(0);
    }
    if a.kind == "ttig" {
        if let Some(to) = &a.to {
            bail!("--to \"{to}\" applies to graphs; ttig writes the .ttig format");
        }
        let m = crate::cmd::hetero::gen_ttig(&a.size, a.seed, &a.output)?;
        errln!(
            "wrote {}: {} tasks, {} sub-tasks, {} messages; {} processors",
            a.output.display(),
            m.program.tasks(),
            m.program.subtasks(),
            m.program.messages.len(),
            m.platform.processors()
        );
        return Ok(0);
    }
    let format = output_format(&a.output, a.to.as_deref())?;
    check_gen_size(&a)?;
    let seed = a.seed.unwrap_or(0);
    let g = match a.kind.as_str() {
        "grid" | "mesh" => gen::grid(&parse_dims(&a.size)?, false),
        "torus" => gen::grid(&parse_dims(&a.size)?, true),
        "stencil9" => {
            let d = parse_dims(&a.size)?;
            if d.len() != 2 {
                bail!("stencil9 takes two dimensions, like 100x100");
            }
            gen::stencil_2d_9pt(d[0], d[1])
        }
        "stencil27" => {
            let d = parse_dims(&a.size)?;
            if d.len() != 3 {
                bail!("stencil27 takes three dimensions, like 20x20x20");
            }
            gen::stencil_3d_27pt(d[0], d[1], d[2])
        }
        "ring" => gen::ring(parse_count(&a.size)?),
        "tree" => gen::binary_tree(parse_count(&a.size)?),
        "butterfly" => gen::butterfly(parse_count(&a.size)?),
        "hypercube" => gen::hypercube_pattern(parse_count(&a.size)?),
        "rgg" => gen::random_geometric(parse_count(&a.size)?, a.degree, seed),
        "random" => gen::random_graph(parse_count(&a.size)?, a.degree, seed),
        "rmat" => gen::rmat(parse_count(&a.size)?, a.degree, seed),
        "ba" => gen::barabasi_albert(parse_count(&a.size)?, a.degree, seed),
        other => bail!(
            "unknown generator \"{}\"; known: grid, torus, stencil9, stencil27, ring, tree, butterfly, hypercube, rgg, random, rmat, ba, program, ttig",
            other
        ),
    };
    write_graph(&a.output, &g, format)
}

/// Refuses generator sizes whose ids do not fit in 32 bits or whose CSR arrays would not fit
/// in memory (about 16 bytes per task and 12 per adjacency entry, within the memory left:
/// `taskmap_graph::memory::available`).
pub(crate) fn check_gen_size(a: &GenArgs) -> Result<()> {
    let dims =
        |s: &str| -> Result<u128> { Ok(parse_dims(s)?.iter().map(|&d| u128::from(d)).product()) };
    let (tasks, entries): (u128, u128) = match a.kind.as_str() {
        "grid" | "mesh" | "torus" => {
            let d = parse_dims(&a.size)?;
            let n = dims(&a.size)?;
            (n, n * 2 * d.len() as u128)
        }
        "stencil9" => (dims(&a.size)?, dims(&a.size)? * 8),
        "stencil27" => (dims(&a.size)?, dims(&a.size)? * 26),
        "ring" | "tree" => (
            u128::from(parse_count(&a.size)?),
            2 * u128::from(parse_count(&a.size)?),
        ),
        "butterfly" | "hypercube" => {
            let s = parse_count(&a.size)?;
            if s >= 32 {
                bail!("{} {} is too large: ids must fit in 32 bits", a.kind, s);
            }
            let n = if a.kind == "butterfly" {
                (u128::from(s) + 1) << s
            } else {
                1u128 << s
            };
            (n, n * 2 * u128::from(s))
        }
        "rgg" | "random" | "rmat" | "ba" => {
            if !(a.degree.is_finite() && a.degree >= 0.0) {
                bail!("--degree must be a non-negative number, not {}", a.degree);
            }
            let n = u128::from(parse_count(&a.size)?);
            // a task has at most n - 1 neighbours, whatever the degree asked; ba links
            // every task to at least one
            let mut degree = a.degree.min(n.saturating_sub(1) as f64);
            if a.kind == "ba" {
                degree = 2.0 * (degree / 2.0).round().max(1.0);
            }
            let entries = (n as f64 * degree) as u128;
            // random and rmat also hold a set of the pairs drawn and the builder's list
            // (about 28 more bytes per entry), ba its list of edge ends and the builder's
            let scratch = match a.kind.as_str() {
                "random" | "rmat" => 28,
                "ba" => 12,
                _ => 0,
            };
            (n, entries + entries * scratch / 12)
        }
        _ => return Ok(()),
    };
    if tasks >= u128::from(u32::MAX) {
        bail!(
            "{} {} has {} tasks: ids must fit in 32 bits",
            a.kind,
            a.size,
            tasks
        );
    }
    let bytes = tasks
        .saturating_mul(16)
        .saturating_add(entries.saturating_mul(12));
    taskmap_graph::memory::ensure(bytes, || format!("{} {}", a.kind, a.size))?;
    Ok(())
}
