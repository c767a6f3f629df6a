//! `taskmap algorithms`: the registry, every family, or one algorithm with its parameters.

use anyhow::{bail, Result};
use clap::Args;
use taskmap::registry::{self, doc, Family, ALGORITHMS};

use crate::output::{print_data, OutputFormat};

#[derive(Args)]
pub(crate) struct AlgorithmsArgs {
    /// Show this algorithm's parameters (a name or an alias).
    pub(crate) name: Option<String>,
    /// Only this family: static, program, hetero or precedence.
    #[arg(long, value_parser = Family::ALL.map(Family::name))]
    pub(crate) family: Option<String>,
    /// Print the Markdown tables of `docs/algorithms.md`.
    #[arg(long, conflicts_with_all = ["name", "family"])]
    pub(crate) markdown: bool,
    /// Output format.
    #[arg(short, long, value_enum, default_value = "human")]
    pub(crate) format: OutputFormat,
}

/// One algorithm, as `-f json` prints it.
#[derive(serde::Serialize)]
struct Row {
    name: &'static str,
    aliases: &'static [&'static str],
    family: Family,
    summary: &'static str,
    parameters: Vec<Param>,
}

#[derive(serde::Serialize)]
struct Param {
    key: String,
    aliases: String,
    default: String,
    meaning: String,
}

/// Runs `taskmap algorithms`.
pub(crate) fn cmd_algorithms(a: AlgorithmsArgs) -> Result<u8> {
    if a.markdown {
        out!("{}", doc::markdown());
        return Ok(0);
    }
    let families: Vec<Family> = match &a.family {
        Some(f) => Family::ALL.into_iter().filter(|x| x.name() == f).collect(),
        None => Family::ALL.to_vec(),
    };
    let rows: Vec<&registry::Algorithm> = match &a.name {
        Some(n) => vec![registry::find(n, &families)?],
        None => ALGORITHMS
            .iter()
            .filter(|r| families.contains(&r.family))
            .collect(),
    };
    if rows.is_empty() {
        bail!("no algorithm in this family");
    }
    let rows: Vec<Row> = rows
        .into_iter()
        .map(|r| Row {
            name: r.name,
            aliases: r.aliases,
            family: r.family,
            summary: r.summary,
            parameters: doc::param_rows(r)
                .into_iter()
                .map(|(key, aliases, default, meaning)| Param {
                    key,
                    aliases,
                    default,
                    meaning,
                })
                .collect(),
        })
        .collect();
    match a.format {
        OutputFormat::Json | OutputFormat::Csv => print_data(&rows, a.format)?,
        OutputFormat::Human if a.name.is_some() => {
            let r = &rows[0];
            outln!("{} ({} family): {}", r.name, r.family.name(), r.summary);
            if !r.aliases.is_empty() {
                outln!("aliases: {}", r.aliases.join(", "));
            }
            if r.parameters.is_empty() {
                outln!("no parameters");
            }
            for p in &r.parameters {
                let alias = if p.aliases.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", p.aliases)
                };
                outln!("  {}{} = {}: {}", p.key, alias, p.default, p.meaning);
            }
        }
        OutputFormat::Human => {
            for r in &rows {
                outln!("{:<14} {:<11} {}", r.name, r.family.name(), r.summary);
            }
        }
    }
    Ok(0)
}
