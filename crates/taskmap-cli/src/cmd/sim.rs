//! `taskmap sim`: simulates a program (De Petris & Perego's language) under a mapping on a
//! wormhole k-ary n-cube, or on the ideal machine, and optionally evaluates the cost model
//! `F`. Also [`gen_program`], for `taskmap gen` to write generated programs.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{bail, Context, Result};
use clap::Args;
use taskmap::perego::gen::generate_program;
use taskmap::perego::greedy::{greedy_map_program, GreedyPerego};
use taskmap::perego::program::{read_program, Program};
use taskmap::perego::spm::{FEstimate, SpmModel, SpmParams};
use taskmap::perego::wormhole::{simulate_observed, ReadyPolicy, SimReport, WormholeParams};
use taskmap::{AlgorithmSpec, Mapping, MappingFormat, PeId, Problem, RunContext};

/// Arguments of `taskmap sim`.
#[derive(Args, Debug)]
pub struct SimArgs {
    /// Program file (PROCESS / INT_OP / SEND / RECEIVE / STOP, see docs/simulation.md).
    // `--program`, the old spelling, stays as a hidden alias.
    #[arg(
        short = 'g',
        long = "graph",
        alias = "program",
        value_name = "PROGRAM",
        conflicts_with = "gen"
    )]
    pub program: Option<PathBuf>,
    /// Generate the program instead: ring:N, mesh:RxC, butterfly:K, tree:N, random:N, with
    /// options ,rounds=,compute=,flits=,partners=,cycles_per_flit=,seed=.
    #[arg(long)]
    pub gen: Option<String>,
    /// Write the (generated) program to this file.
    #[arg(long)]
    pub write_program: Option<PathBuf>,
    /// Target: mesh:8x8, torus:8x8, hypercube:6 (needs routes). Not needed with --ideal.
    #[arg(short, long)]
    pub arch: Option<String>,
    /// Mapping file (Scotch .map or one PE per line). Without it and without --algorithm:
    /// task i on PE i mod k. Not with --ideal.
    #[arg(short, long, conflicts_with_all = ["algorithm", "ideal"])]
    pub mapping: Option<PathBuf>,
    /// Map the program's task graph with this algorithm first (e.g. multilevel, drb;
    /// greedy-perego uses the program's phase model). Not with --ideal.
    #[arg(short = 'A', long, conflicts_with = "ideal")]
    pub algorithm: Option<String>,
    /// Write the mapping that was simulated here (.map: Scotch format, else one PE per
    /// line), once the simulation has succeeded. Not with --ideal.
    #[arg(short, long, value_name = "FILE", conflicts_with = "ideal")]
    pub output: Option<PathBuf>,
    /// Seed for --algorithm.
    #[arg(short, long, default_value_t = 0)]
    pub seed: u64,
    /// Threads for --algorithm's parallel phases (1 to 1024).
    #[arg(short, long, default_value_t = 1)]
    pub threads: usize,
    /// Allowed imbalance for --algorithm: load(p) <= floor((1+eps) * ceil(share of p)) (default
    /// 0.03; the mappers that do not balance, greedy-perego among them, ignore it).
    #[arg(long, value_name = "EPS")]
    pub epsilon: Option<f64>,
    /// Simulate on the ideal machine (every task on its own PE, no contention, distance 1).
    #[arg(long)]
    pub ideal: bool,
    /// Also compute the evaluation function F (De Petris & Perego eq. 2-10) and, with one
    /// task per PE, our propagated estimate F_prop. Not with --ideal (F needs a target and
    /// a mapping).
    #[arg(long, conflicts_with = "ideal")]
    pub f: bool,
    /// Phase overlap fraction for F.
    #[arg(long, default_value_t = 0.5)]
    pub overlap_fraction: f64,
    /// T_c: cycles per flit per link (1..=2^32).
    #[arg(long, default_value_t = 1)]
    pub flit_cycles: u64,
    /// Cycles a SEND keeps its task busy (at most 2^32).
    #[arg(long, default_value_t = 10)]
    pub send_overhead: u64,
    /// Cycles a RECEIVE keeps its task busy once the message is there (at most 2^32).
    #[arg(long, default_value_t = 10)]
    pub recv_overhead: u64,
    /// Cycles per flit of a message between tasks of the same PE (at most 2^32).
    #[arg(long, default_value_t = 0)]
    pub local_cycles_per_flit: u64,
    /// Cycles a PE needs to switch to another task (at most 2^32).
    #[arg(long, default_value_t = 0)]
    pub switch_cycles: u64,
    /// On tori, do not use the two dateline virtual channels per link (the simulation can
    /// then deadlock, which is reported as an error).
    #[arg(long)]
    pub no_virtual_channels: bool,
    /// Ready-queue policy: fifo, round-robin, lowest-id.
    #[arg(long, default_value = "fifo")]
    pub ready_policy: String,
    /// Report format: human, json or csv.
    #[arg(short, long, value_enum, default_value = "human")]
    pub format: crate::output::OutputFormat,
}

#[derive(serde::Serialize)]
struct SimOutput<'a> {
    tasks: usize,
    messages: usize,
    flits: u64,
    target: String,
    params: &'a WormholeParams,
    completion: u64,
    pe_busy: Summary,
    pe_idle: Summary,
    links_used: usize,
    link_utilisation_mean: f64,
    link_utilisation_max: f64,
    network_messages: u64,
    local_messages: u64,
    latency: taskmap::perego::wormhole::Stats,
    contention_free_latency_mean: f64,
    events: u64,
    wall_seconds: f64,
    f: Option<FOutput>,
}

#[derive(serde::Serialize)]
struct FOutput {
    f: f64,
    f_sum: f64,
    argmax_pe: u32,
    comp_idle: f64,
    distance: f64,
    multitasking: f64,
    contention: f64,
    phases: usize,
    overlap_fraction: f64,
    relative_error: f64,
    /// `F_prop` (ours; one task per PE only).
    #[serde(skip_serializing_if = "Option::is_none")]
    f_prop: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    f_prop_relative_error: Option<f64>,
}

#[derive(serde::Serialize, Default)]
struct Summary {
    min: u64,
    mean: f64,
    max: u64,
}

fn summary(v: &[u64]) -> Summary {
    if v.is_empty() {
        return Summary::default();
    }
    Summary {
        min: *v.iter().min().unwrap_or(&0),
        mean: v.iter().sum::<u64>() as f64 / v.len() as f64,
        max: *v.iter().max().unwrap_or(&0),
    }
}

/// Generates a program from `spec` (see `taskmap::perego::gen`) and writes it to
/// `out`. For `taskmap gen`.
pub fn gen_program(spec: &str, out: &Path) -> Result<Program> {
    // `.txt` names edge lists and programs alike: only the other graph extensions refuse.
    let txt = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("txt"));
    if let Some(f) = taskmap_graph::GraphFormat::from_path(out).filter(|_| !txt) {
        bail!(
            "{}: a program is written in the program language, not as a {} graph; give a .prog path (`taskmap convert` makes graphs)",
            out.display(),
            f
        );
    }
    let p = generate_program(spec)?;
    crate::output::write_file(out, p.to_text().as_bytes())
        .with_context(|| format!("writing {}", out.display()))?;
    Ok(p)
}

/// Runs `taskmap sim`. Exit code 0.
pub fn cmd_sim(a: SimArgs, quiet: bool) -> Result<u8> {
    crate::output::claim_stdout(&[a.output.as_ref(), a.write_program.as_ref()]);
    let json = a.format != crate::output::OutputFormat::Human;
    check_args(&a)?;
    let program = match (&a.program, &a.gen) {
        (Some(p), None) => read_program(p)?,
        (None, Some(spec)) => generate_program(spec)?,
        _ => bail!("give -g/--graph PROGRAM or --gen SPEC"),
    };
    // The program is staged now (a path that cannot be written fails before the run) and
    // renamed into place once the run has succeeded: a failed run leaves no file behind.
    // The target's file (graph:, matrix:, a Scotch target file) is an input too.
    let target = a.arch.as_deref().and_then(crate::input::target_file);
    let inputs = [a.program.as_ref(), a.mapping.as_ref(), target.as_ref()];
    let staged = match &a.write_program {
        Some(out) => {
            crate::output::refuse_overwriting_inputs(out, &inputs)?;
            let text = program.to_text();
            let s = crate::output::stage(out, |w| w.write_all(text.as_bytes()))
                .with_context(|| format!("writing {}", out.display()))?;
            Some((out, s))
        }
        None => None,
    };
    let params = WormholeParams {
        flit_cycles: a.flit_cycles,
        send_overhead: a.send_overhead,
        recv_overhead: a.recv_overhead,
        local_cycles_per_flit: a.local_cycles_per_flit,
        switch_cycles: a.switch_cycles,
        ready_policy: ReadyPolicy::from_str(&a.ready_policy)?,
        record_messages: false,
        torus_virtual_channels: !a.no_virtual_channels,
    };
    if let Some(out) = &a.output {
        crate::output::refuse_overwriting_inputs(out, &inputs)?;
        crate::output::refuse_same_outputs(&[
            ("--output", Some(out)),
            ("--write-program", a.write_program.as_ref()),
        ])?;
    }
    let t0 = std::time::Instant::now();
    let progress = crate::output::Bar::start("sim", !quiet);
    let simulate = |target| {
        taskmap::Progress::phase(&*progress, "simulate");
        simulate_observed(&program, target, &params, &*progress)
    };
    let (report, target, f, mapping): (SimReport, String, Option<FOutput>, Option<Mapping>) =
        if a.ideal {
            let r = simulate(None)?;
            (r, "ideal machine".to_string(), None, None)
        } else {
            let arch_spec = match &a.arch {
                Some(s) => s,
                None => bail!("--arch is required (or --ideal)"),
            };
            let arch = taskmap::parse_arch(arch_spec)?;
            let mapping = mapping_for(&a, &program, arch_spec, arch.as_ref(), &params, &progress)?;
            let r = simulate(Some((arch.as_ref(), &mapping)))?;
            let f = if a.f {
                Some(f_estimate(
                    &a,
                    &program,
                    arch.as_ref(),
                    &mapping,
                    &params,
                    r.completion,
                )?)
            } else {
                None
            };
            (r, arch.spec(), f, Some(mapping))
        };
    progress.finish();
    let wall = t0.elapsed().as_secs_f64();
    if let (Some(out), Some(m)) = (&a.output, &mapping) {
        let text = m.to_text(MappingFormat::from_path(out));
        crate::output::write_file(out, text.as_bytes()).context("writing the mapping")?;
    }
    if let Some((out, s)) = staged {
        crate::output::commit(s).with_context(|| format!("writing {}", out.display()))?;
    }
    let out = SimOutput {
        tasks: program.num_tasks(),
        messages: program.messages().len(),
        flits: program.total_flits(),
        target,
        params: &params,
        completion: report.completion,
        pe_busy: summary(&report.pe_busy),
        pe_idle: summary(&report.pe_idle),
        links_used: report.link_busy.iter().filter(|&&b| b > 0).count(),
        link_utilisation_mean: report.link_utilisation_mean,
        link_utilisation_max: report.link_utilisation_max,
        network_messages: report.network_messages,
        local_messages: report.local_messages,
        latency: report.latency,
        contention_free_latency_mean: report.contention_free_latency_sum as f64
            / report.network_messages.max(1) as f64,
        events: report.events,
        wall_seconds: wall,
        f,
    };
    if json {
        crate::output::print_data(&out, a.format)?;
    } else {
        print_human(&out);
    }
    Ok(0)
}

/// Refuses option values the simulator cannot take.
fn check_args(a: &SimArgs) -> Result<()> {
    if a.threads == 0 || a.threads > taskmap::mapper::MAX_THREADS {
        bail!(
            "--threads takes 1 to {}, not {}",
            taskmap::mapper::MAX_THREADS,
            a.threads
        );
    }
    // Bounded so that simulated times (sums and products of these with 32-bit instruction
    // arguments) stay far from overflow; the simulator also saturates.
    const MAX_CYCLES: u64 = 1 << 32;
    for (name, v) in [
        ("--flit-cycles", a.flit_cycles),
        ("--send-overhead", a.send_overhead),
        ("--recv-overhead", a.recv_overhead),
        ("--local-cycles-per-flit", a.local_cycles_per_flit),
        ("--switch-cycles", a.switch_cycles),
    ] {
        if v > MAX_CYCLES {
            bail!("{name} {v} is too large (at most 2^32 = {MAX_CYCLES} cycles)");
        }
    }
    if a.flit_cycles == 0 {
        bail!("--flit-cycles must be at least 1");
    }
    if !(0.0..=1.0).contains(&a.overlap_fraction) {
        bail!(
            "--overlap-fraction must be in 0..=1, got {}",
            a.overlap_fraction
        );
    }
    if a.epsilon.is_some() && a.algorithm.is_none() {
        bail!("--epsilon applies to --algorithm only");
    }
    Ok(())
}

/// The mapping simulated: the given one (`-m`), the algorithm's (`-A`; greedy-perego
/// with the program's own phase model), or task i on PE i mod k.
fn mapping_for(
    a: &SimArgs,
    program: &Program,
    arch_spec: &str,
    arch: &dyn taskmap::Architecture,
    params: &WormholeParams,
    progress: &std::sync::Arc<crate::output::Bar>,
) -> Result<Mapping> {
    let k = arch.pe_count();
    Ok(if let Some(path) = &a.mapping {
        Mapping::read_for(path, program.num_tasks(), k)?
    } else if let Some(alg) = &a.algorithm {
        let alg_spec = AlgorithmSpec::from_str(alg)?;
        if let Some(g) = alg_spec.get::<GreedyPerego>() {
            // With the program at hand, use its full phase model rather than the graph's.
            let g = GreedyPerego {
                spm: SpmParams {
                    overlap_fraction: a.overlap_fraction,
                    machine: params.clone(),
                },
                ..g.clone()
            };
            greedy_map_program(program, arch, &g)?
        } else {
            let mut problem =
                Problem::new(program.to_task_graph(), taskmap::parse_arch(arch_spec)?);
            if let Some(eps) = a.epsilon {
                problem.epsilon = eps;
            }
            let mut ctx = RunContext::new(a.seed).with_threads(a.threads)?;
            ctx.progress = progress.clone();
            alg_spec
                .mapper()
                .map(&problem, &mut ctx)
                .with_context(|| format!("mapping with {alg}"))?
        }
    } else {
        Mapping::new(
            (0..program.num_tasks() as u32)
                .map(|t| PeId(t % k))
                .collect(),
        )
    })
}

/// De Petris & Perego's estimate F of `mapping` (and F_prop), against the simulated
/// `completion` time (`--f`).
fn f_estimate(
    a: &SimArgs,
    program: &Program,
    arch: &dyn taskmap::Architecture,
    mapping: &Mapping,
    params: &WormholeParams,
    completion: u64,
) -> Result<FOutput> {
    let sp = SpmParams {
        overlap_fraction: a.overlap_fraction,
        machine: params.clone(),
    };
    let model = SpmModel::build(program, &sp)?;
    let e: FEstimate = model.evaluate(arch, mapping)?;
    let prop = model
        .evaluate_propagated(program, arch, mapping)?
        .map(|p| p.f_prop);
    let rel = |f: f64| (f - completion as f64) / (completion.max(1) as f64);
    Ok(FOutput {
        f: e.f,
        f_sum: e.f_sum,
        argmax_pe: e.argmax,
        comp_idle: e.comp_idle,
        distance: e.distance,
        multitasking: e.multitasking,
        contention: e.contention,
        phases: model.num_phases(),
        overlap_fraction: a.overlap_fraction,
        relative_error: rel(e.f),
        f_prop: prop,
        f_prop_relative_error: prop.map(rel),
    })
}

fn print_human(o: &SimOutput) {
    outln!(
        "program      {} tasks, {} messages, {} flits",
        o.tasks,
        o.messages,
        o.flits
    );
    outln!("target       {}", o.target);
    outln!("completion   {} cycles", o.completion);
    outln!(
        "PE busy      min {} / mean {:.1} / max {} cycles",
        o.pe_busy.min,
        o.pe_busy.mean,
        o.pe_busy.max
    );
    outln!(
        "PE idle      min {} / mean {:.1} / max {} cycles",
        o.pe_idle.min,
        o.pe_idle.mean,
        o.pe_idle.max
    );
    outln!(
        "links        {} used, utilisation mean {:.2} % / max {:.2} %",
        o.links_used,
        100.0 * o.link_utilisation_mean,
        100.0 * o.link_utilisation_max
    );
    outln!(
        "messages     {} over the network, {} local",
        o.network_messages,
        o.local_messages
    );
    outln!(
        "latency      min {} / mean {:.1} / max {} cycles (contention-free mean {:.1})",
        o.latency.min,
        o.latency.mean,
        o.latency.max,
        o.contention_free_latency_mean
    );
    if let Some(f) = &o.f {
        outln!(
            "F            {:.1} cycles ({:+.2} % vs simulation), F_sum {:.1}, max on PE {}",
            f.f,
            100.0 * f.relative_error,
            f.f_sum,
            f.argmax_pe
        );
        outln!(
            "F terms      comp+idle {:.1}, distance {:.1}, multitasking -{:.1}, contention {:.1} ({} phases, overlap fraction {})",
            f.comp_idle, f.distance, f.multitasking, f.contention, f.phases, f.overlap_fraction
        );
        if let (Some(p), Some(e)) = (f.f_prop, f.f_prop_relative_error) {
            outln!(
                "F_prop       {:.1} cycles ({:+.2} % vs simulation; the model's delays propagated along the program)",
                p,
                100.0 * e
            );
        }
    }
    outln!(
        "simulated    {} events in {:.3} s",
        o.events,
        o.wall_seconds
    );
}
