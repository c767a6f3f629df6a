//! f_C, balance and time of the static mappers, one thread, seed 1, ε = 0.03.
//!
//! - `large-grid`: the default multilevel mapper and its fast preset on a 100×100×100
//!   grid onto `torus:8x8x8`, with the time of each phase; fails if a mapping is not
//!   balanced or its f_C is far above a 3-D block decomposition's (the mapper broke down).
//! - `suite`: the generated 100×100 grid and, when `../shared/data` is present, Walshaw's
//!   `add20`, `3elt` and `4elt`, onto `torus:16x16` and `tree:4:8:6/1:10:100`, per
//!   algorithm of `TASKMAP_ALGS` (`;`-separated, default
//!   `drb;multilevel,preset=fast;multilevel;multilevel,preset=strong`); fails on an
//!   unbalanced mapping.
//!
//! `[TASKMAP_ALGS="drb;multilevel"] cargo run --release -p taskmap --example multilevel_measure -- large-grid|suite`
//! (both, in that order, without an argument).

use std::path::Path;
use std::time::Instant;

use taskmap::{
    evaluate, parse_arch, AlgorithmSpec, EvalOptions, Evaluation, Mapper, Problem, RunContext,
};
use taskmap_graph::{gen, TaskGraph};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which: Vec<&str> = if args.is_empty() {
        vec!["large-grid", "suite"]
    } else {
        args.iter().map(String::as_str).collect()
    };
    for w in which {
        match w {
            "large-grid" => large_grid()?,
            "suite" => suite()?,
            _ => return Err(format!("{w}: give large-grid or suite").into()),
        }
    }
    Ok(())
}

/// Maps `problem` with `alg`: the evaluation of the mapping with ε = 0.03, the seconds and
/// the context (its phase timings).
fn map(problem: &Problem, alg: &str) -> Res<(Evaluation, f64, RunContext)> {
    let mapper = alg.parse::<AlgorithmSpec>()?;
    let mut ctx = RunContext::new(1);
    let t0 = Instant::now();
    let m = mapper.map(problem, &mut ctx)?;
    let t = t0.elapsed().as_secs_f64();
    let eval = evaluate(
        &problem.graph,
        problem.arch.as_ref(),
        &m,
        &EvalOptions {
            epsilon: Some(0.03),
            capacities: None,
        },
    )?;
    Ok((eval, t, ctx))
}

fn large_grid() -> Res<()> {
    let problem = Problem::new(
        gen::grid(&[100, 100, 100], false),
        parse_arch("torus:8x8x8")?,
    );
    for alg in ["multilevel,preset=fast", "multilevel"] {
        let (eval, t, ctx) = map(&problem, alg)?;
        println!(
            "{alg}: fC {} balanced {:?} {t:.3}s {:?}",
            eval.comm_cost, eval.balanced, ctx.timings
        );
        if eval.balanced != Some(true) {
            return Err(format!("{alg}: not balanced").into());
        }
        // A 100^3 grid on 512 PEs: the cut of a 3-D block decomposition is about 3·2·10^4,
        // each crossing at distance 1; far above that means the mapper broke down.
        if eval.comm_cost >= 1_000_000 {
            return Err(format!("{alg}: f_C {}", eval.comm_cost).into());
        }
    }
    Ok(())
}

fn suite() -> Res<()> {
    let mut instances: Vec<(String, TaskGraph)> =
        vec![("grid100x100".into(), gen::grid(&[100, 100], false))];
    for name in ["add20", "3elt", "4elt"] {
        let p = format!(
            "{}/../../../shared/data/walshaw/graphs/{name}.graph.gz",
            env!("CARGO_MANIFEST_DIR")
        );
        if let Ok(g) = taskmap_graph::read_graph(Path::new(&p), None) {
            instances.push((name.into(), g));
        }
    }
    let algs: Vec<String> = std::env::var("TASKMAP_ALGS")
        .unwrap_or_else(|_| "drb;multilevel,preset=fast;multilevel;multilevel,preset=strong".into())
        .split(';')
        .map(String::from)
        .collect();
    for (name, g) in &instances {
        for spec in ["torus:16x16", "tree:4:8:6/1:10:100"] {
            for alg in &algs {
                let problem = Problem::new(g.clone(), parse_arch(spec)?);
                let (eval, t, ctx) = map(&problem, alg)?;
                println!(
                    "{name:12} {spec:22} {alg:34} fC {:>9} bal {:?} {t:.3}s  {:?}",
                    eval.comm_cost,
                    eval.balanced,
                    ctx.timings
                        .iter()
                        .map(|(p, d)| format!("{p}={:.3}", d.as_secs_f64()))
                        .collect::<Vec<_>>()
                );
                if eval.balanced != Some(true) {
                    return Err(format!("{name} {spec} {alg}: not balanced").into());
                }
            }
        }
    }
    Ok(())
}
