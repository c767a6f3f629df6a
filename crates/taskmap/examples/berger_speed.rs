//! Mapper time of the Berger et al. heuristics on small instances, warm: each mapper runs
//! many times in one process (`ITERS`, default 201; more for a profile) and the median is printed (the CLI's `map_time_ms` is one cold
//! run, where page faults and first allocations dominate below a millisecond).
//!
//! `[ALGS=gtwp,subgraph] [ITERS=201] cargo run --release -p taskmap --example berger_speed [-- ../shared/data/itc99/b12.bench:6:40 ...]`
//! (a case is `FILE:SIDE:CAPACITY` or `grid:N:SIDE:CAPACITY`, mapped onto `torus:SIDExSIDE`).

use std::time::Instant;

use taskmap::{parse_arch, AlgorithmSpec, Capacities, Mapper, Problem, RunContext};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cases: Vec<String> = if args.is_empty() {
        vec![
            "grid:12:2:40".into(),
            "grid:23:4:40".into(),
            "../shared/data/itc99/b12.bench:6:40".into(),
        ]
    } else {
        args
    };
    let iters: usize = std::env::var("ITERS").map_or(Ok(201), |v| v.parse())?;
    for case in &cases {
        let parts: Vec<&str> = case.rsplitn(3, ':').collect();
        let (cap, side, src) = (parts[0].parse::<u64>()?, parts[1].parse::<u32>()?, parts[2]);
        let graph = match src.strip_prefix("grid:") {
            Some(s) => {
                let s: u32 = s.parse()?;
                taskmap_graph::gen::grid(&[s, s], false)
            }
            None => taskmap_graph::read_graph(std::path::Path::new(src), None)?,
        };
        let algs =
            std::env::var("ALGS").unwrap_or_else(|_| "gtwp,gtwp-fit,subgraph,subgraph-dist".into());
        for alg in algs.split(',') {
            let arch = parse_arch(&format!("torus:{side}x{side}"))?;
            let mut problem = Problem::new(graph.clone(), arch);
            problem.capacities = Some(Capacities::uniform(side * side, &[cap]));
            let spec: AlgorithmSpec = alg.parse()?;
            let mapper = &spec;
            let mut times = Vec::new();
            for _ in 0..iters {
                let mut ctx = RunContext::new(0);
                let t = Instant::now();
                let m = mapper.map(&problem, &mut ctx)?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
                std::hint::black_box(m);
            }
            times.sort_by(|a, b| a.total_cmp(b));
            println!(
                "{src} torus:{side}x{side} cap {cap} {alg}: median {:.4} ms, min {:.4} ms, first-run max {:.4} ms",
                times[times.len() / 2],
                times[0],
                times[times.len() - 1]
            );
        }
    }
    Ok(())
}
