//! `taskmap eval`: score a mapping (of a graph or of a timed program) on a target.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use taskmap::report::{render_congestion, render_evaluation, render_launch};
use taskmap::{evaluate_on, EvalOptions, Mapping};

use crate::input::*;
use crate::launch::LaunchArgs;
use crate::output::*;

#[derive(Args)]
pub(crate) struct EvalArgs {
    #[command(flatten)]
    pub(crate) input: GraphInput,
    /// Target architecture spec or Scotch target file.
    #[arg(short, long, value_name = "SPEC")]
    pub(crate) arch: String,
    #[command(flatten)]
    pub(crate) nodes: NodeList,
    /// Mapping file (Scotch .map or one PE per line).
    #[arg(short, long, value_name = "FILE")]
    pub(crate) mapping: PathBuf,
    /// A timed program (PROCESS/INT_OP/SEND/RECEIVE/STOP) instead of --graph: the static
    /// metrics are those of its task graph, and the report adds De Petris & Perego's
    /// completion-time estimate F and, with one task per PE, our propagated estimate
    /// F_prop (default machine parameters, see `taskmap sim`).
    #[arg(long, value_name = "FILE", conflicts_with = "graph")]
    pub(crate) program: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) constraints: Constraints,
    #[command(flatten)]
    pub(crate) launch: LaunchArgs,
    /// Report link congestion (see `map --congestion`).
    #[arg(long)]
    pub(crate) congestion: bool,
    /// Write the mapping as one self-contained HTML page (see `map --html`).
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// Report format.
    #[arg(short, long, value_enum, default_value = "human")]
    pub(crate) format: OutputFormat,
    /// Threads for reading the graph and evaluating (1 to 1024; the same report on any).
    #[arg(short, long, default_value_t = 1)]
    pub(crate) threads: usize,
}

/// `taskmap eval`'s report: the evaluation, and F (and F_prop, with one task per PE) when a
/// program was given.
#[derive(serde::Serialize)]
pub(crate) struct EvalReport {
    #[serde(flatten)]
    pub(crate) evaluation: taskmap::Evaluation,
    /// De Petris & Perego's F as printed (eq. 2-10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) perego_f_paper: Option<taskmap::perego::spm::FEstimate>,
    /// Eq. 2-10 with slack absorption.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) perego_f_slack: Option<taskmap::perego::spm::FEstimate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) perego_f_prop: Option<taskmap::perego::PropagatedEstimate>,
    /// Where the program and mapping leave the estimates' validated range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) perego_outside_validated_range: Option<Vec<String>>,
    /// The ranks in order and the launch files, on a machine with hosts or when a launch
    /// file was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) launch: Option<taskmap::report::LaunchReport>,
    /// Link loads (`--congestion`), when the target has routes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) congestion: Option<taskmap::congestion::Congestion>,
}

pub(crate) fn cmd_eval(a: EvalArgs) -> Result<u8> {
    let pool = taskmap::RunContext::new(0).with_threads(a.threads)?.pool;
    let program = a
        .program
        .as_ref()
        .map(|p| taskmap::perego::program::read_program(p))
        .transpose()?;
    let graph = match (&a.input.graph, &program) {
        (Some(_), _) => load_graph(&a.input, pool.as_ref())?.0,
        (None, Some(_)) if a.input.task_weights.is_some() => {
            bail!("--task-weights applies to --graph; a program's tasks carry their own work")
        }
        (None, Some(p)) => p.to_task_graph(),
        (None, None) => bail!("--graph (or --program) is required"),
    };
    let targets = target_files(&a.arch, &a.nodes);
    let mut inputs = vec![
        a.input.graph.as_ref(),
        a.input.task_weights.as_ref(),
        Some(&a.mapping),
        a.program.as_ref(),
        a.constraints.capacities.as_ref(),
    ];
    inputs.extend(targets.iter().map(Some));
    let mut outputs = vec![("--html", a.html.as_ref())];
    outputs.extend(a.launch.outputs());
    refuse_same_outputs(&outputs)?;
    for out in outputs.iter().filter_map(|o| o.1) {
        refuse_overwriting_inputs(out, &inputs)?;
    }
    let (arch, machine) = load_target(&a.arch, &a.nodes)?;
    a.launch.check(machine.as_ref())?;
    taskmap::problem::check_pe_count(arch.as_ref())?;
    let mapping = Mapping::read_for(&a.mapping, graph.num_tasks(), arch.pe_count())?;
    let capacities = load_capacities(&a.constraints, arch.pe_count(), graph.ncon())?;
    let opts = EvalOptions {
        epsilon: a.constraints.epsilon,
        capacities,
    };
    let e = evaluate_on(&graph, arch.as_ref(), &mapping, &opts, pool.as_ref())
        .with_context(|| format!("evaluating {}", a.mapping.display()))?;
    let (perego_f_paper, perego_f_slack, perego_f_prop, perego_notes) = match &program {
        Some(p) => {
            let model = taskmap::perego::spm::SpmModel::build(p, &Default::default())?;
            let slack = model.evaluate(arch.as_ref(), &mapping)?;
            (
                Some(model.evaluate_paper(arch.as_ref(), &mapping)?),
                Some(slack),
                model.evaluate_propagated(p, arch.as_ref(), &mapping)?,
                Some(taskmap::perego::summary::validity_notes(
                    p,
                    &mapping,
                    &Default::default(),
                )),
            )
        }
        None => (None, None, None, None),
    };
    let congestion = match a.congestion {
        true => {
            let c = taskmap::congestion::congestion(&graph, arch.as_ref(), &mapping);
            if c.is_none() {
                super::map::warn_no_congestion(arch.as_ref());
            }
            c
        }
        false => None,
    };
    claim_stdout(&a.launch.outputs().map(|o| o.1));
    claim_stdout(&[a.html.as_ref()]);
    let mut files = a.launch.files(machine.as_ref(), &mapping);
    if let Some(h) = &a.html {
        let graph_name = a
            .input
            .graph
            .as_ref()
            .or(a.program.as_ref())
            .map_or(String::new(), |p| p.display().to_string());
        let title = format!(
            "taskmap eval: {} on {graph_name} onto {}",
            a.mapping.display(),
            a.arch
        );
        let page = taskmap::html::MappingPage {
            title: &title,
            graph_name: &graph_name,
            target: &a.arch,
            algorithm: None,
            graph: &graph,
            arch: arch.as_ref(),
            mapping: &mapping,
            evaluation: &e,
            machine: machine.as_ref(),
            congestion: congestion.as_ref(),
        }
        .render();
        files.push((h.clone(), page.into_bytes()));
    }
    let refs: Vec<(&std::path::Path, &[u8])> = files
        .iter()
        .map(|(p, b)| (p.as_path(), b.as_slice()))
        .collect();
    // The report first: nothing is written when it fails.
    let launch = a.launch.report(
        &graph,
        arch.as_ref(),
        machine.as_ref(),
        &mapping,
        e.comm_cost,
    )?;
    write_files(&refs).context("writing the outputs")?;
    let feasible = e.feasible();
    match a.format {
        OutputFormat::Human => {
            out!("{}", render_evaluation(&e));
            if let Some(c) = &congestion {
                out!("{}", render_congestion(c));
            }
            if let Some(l) = &launch {
                out!("{}", render_launch(l));
            }
            if let Some(f) = &perego_f_paper {
                outln!(
                    "F_paper {:.1} cycles (De Petris & Perego's F, eq. 2-10; max on PE {})",
                    f.f,
                    f.argmax
                );
            }
            if let Some(f) = &perego_f_slack {
                outln!(
                    "F_slack {:.1} cycles (eq. 2-10 with the receivers' slack absorbing delays; max on PE {}), F_sum {:.1}",
                    f.f,
                    f.argmax,
                    f.f_sum
                );
                outln!(
                    "  terms: comp+idle {:.1}, distance {:.1}, multitasking {:.1}, contention {:.1}",
                    f.comp_idle,
                    f.distance,
                    f.multitasking,
                    f.contention
                );
            }
            if let Some(f) = &perego_f_prop {
                outln!(
                    "F_prop {:.1} cycles (the model's delays propagated along the program; last task {})",
                    f.f_prop,
                    f.argmax_task
                );
            }
            for n in perego_notes.iter().flatten() {
                outln!("warning: outside the estimates' validated range: {}", n);
            }
        }
        OutputFormat::Json | OutputFormat::Csv => print_data(
            &EvalReport {
                evaluation: e,
                perego_f_paper,
                perego_f_slack,
                perego_f_prop,
                perego_outside_validated_range: perego_notes,
                launch,
                congestion,
            },
            a.format,
        )?,
    }
    Ok(if feasible { 0 } else { 1 })
}
