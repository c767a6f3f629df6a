//! `taskmap sim`: simulates a program (De Petris & Perego's language) under a mapping on a
//! wormhole k-ary n-cube, or on the ideal machine, and optionally evaluates the cost model
//! `F`. Also [`gen_program`], for `taskmap gen` to write generated programs.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use taskmap::perego::gen::generate_program;
use taskmap::perego::program::{read_program, Program};
use taskmap::perego::spm::SpmParams;
use taskmap::perego::summary::{map_program, FSummary, ProgramMapping, SimSummary};
use taskmap::perego::wormhole::{simulate_observed, ReadyPolicy, SimReport, WormholeParams};
use taskmap::{Mapping, MappingFormat};

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
    /// Also compute the completion-time estimates: F_paper (De Petris & Perego's F, eq.
    /// 2-10), F_slack (eq. 2-10 with slack absorption) and, with one task per PE, F_prop
    /// (the delays propagated along the program); a warning names what leaves the range
    /// they were validated in. Not with --ideal (F needs a target and a mapping).
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
    let (report, target, f, mapping): (SimReport, String, Option<FSummary>, Option<Mapping>) =
        if a.ideal {
            let r = simulate(None)?;
            (r, "ideal machine".to_string(), None, None)
        } else {
            let arch_spec = match &a.arch {
                Some(s) => s,
                None => bail!("--arch is required (or --ideal)"),
            };
            let arch: Arc<dyn taskmap::Architecture> = taskmap::parse_arch(arch_spec)?.into();
            let mapping = mapping_for(&a, &program, arch.clone(), &params, &progress)?;
            let r = simulate(Some((arch.as_ref(), &mapping)))?;
            let f = if a.f {
                Some(FSummary::new(
                    &program,
                    arch.as_ref(),
                    &mapping,
                    &params,
                    a.overlap_fraction,
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
    let out = SimSummary::new(&program, &report, target, &params, wall, f);
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
    const MAX_CYCLES: u64 = taskmap::perego::wormhole::MAX_PARAM_CYCLES;
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
    arch: Arc<dyn taskmap::Architecture>,
    params: &WormholeParams,
    progress: &Arc<crate::output::Bar>,
) -> Result<Mapping> {
    if let Some(path) = &a.mapping {
        return Ok(Mapping::read_for(
            path,
            program.num_tasks(),
            arch.pe_count(),
        )?);
    }
    let how = ProgramMapping {
        algorithm: a.algorithm.as_deref(),
        seed: a.seed,
        threads: a.threads,
        epsilon: a.epsilon,
        spm: SpmParams {
            overlap_fraction: a.overlap_fraction,
            machine: params.clone(),
        },
        progress: progress.clone(),
        stop: Default::default(),
    };
    map_program(program, arch, &how).with_context(|| match &a.algorithm {
        Some(alg) => format!("mapping with {alg}"),
        None => "mapping".to_string(),
    })
}

fn print_human(o: &SimSummary) {
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
            "F_paper      {:.1} cycles ({:+.2} % vs simulation; De Petris & Perego's F, eq. 2-10)",
            f.f_paper,
            100.0 * f.f_paper_relative_error
        );
        outln!(
            "F_slack      {:.1} cycles ({:+.2} % vs simulation; eq. 2-10 with the receivers' slack absorbing delays), F_sum {:.1}, max on PE {}",
            f.f_slack,
            100.0 * f.f_slack_relative_error,
            f.f_sum,
            f.argmax_pe
        );
        outln!(
            "F_slack terms comp+idle {:.1}, distance {:.1}, multitasking -{:.1}, contention {:.1} ({} phases, overlap fraction {})",
            f.comp_idle, f.distance, f.multitasking, f.contention, f.phases, f.overlap_fraction
        );
        if let (Some(p), Some(e)) = (f.f_prop, f.f_prop_relative_error) {
            outln!(
                "F_prop       {:.1} cycles ({:+.2} % vs simulation; the model's delays propagated along the program)",
                p,
                100.0 * e
            );
        }
        for n in &f.outside_validated_range {
            outln!("warning      outside the estimates' validated range: {}", n);
        }
    }
    outln!(
        "simulated    {} events in {:.3} s",
        o.events,
        o.wall_seconds
    );
}
