//! One million tasks: a generated circuit netlist (`circuit_netlist(1_000_000, 1)`) onto
//! `torus:32x32` with capacity 1,000 per PE (2.3 % slack), one thread. Prints the time to
//! generate it, then per mapper its time (mapper only), f_C and whether the capacities are
//! respected; the run fails if a mapper breaks them (docs/berger.md, "One million tasks").
//!
//! `[BERGER_MILLION_ALGS=gtwp,gtwp-fit,subgraph,subgraph-dist,multilevel] [BERGER_MILLION_OUT=file.graph] cargo run --release -p taskmap --example berger_netlist`
//! (`BERGER_MILLION_OUT` also writes the graph, in METIS format).

use std::time::Instant;

use taskmap::mappers::berger::netlist::circuit_netlist;
use taskmap::{
    evaluate, parse_arch, AlgorithmSpec, Capacities, EvalOptions, Mapper, Problem, RunContext,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let t0 = Instant::now();
    let g = circuit_netlist(1_000_000, 1);
    println!(
        "generated {} tasks, {} edges in {:.2} s",
        g.num_tasks(),
        g.num_edges(),
        t0.elapsed().as_secs_f64()
    );
    if let Ok(path) = std::env::var("BERGER_MILLION_OUT") {
        taskmap_graph::write_graph_file(
            std::path::Path::new(&path),
            &g,
            taskmap_graph::GraphFormat::Metis,
        )?;
    }
    let mut p = Problem::new(g, parse_arch("torus:32x32")?);
    p.capacities = Some(Capacities::uniform(1024, &[1000]));
    let algs = std::env::var("BERGER_MILLION_ALGS")
        .unwrap_or_else(|_| "gtwp,gtwp-fit,subgraph,subgraph-dist,multilevel".into());
    for alg in algs.split(',') {
        let spec: AlgorithmSpec = alg.parse()?;
        let t = Instant::now();
        let m = spec.map(&p, &mut RunContext::new(0))?;
        let secs = t.elapsed().as_secs_f64();
        let opts = EvalOptions {
            epsilon: None,
            capacities: p.capacities.clone(),
        };
        let e = evaluate(&p.graph, p.arch.as_ref(), &m, &opts)?;
        println!(
            "{:<14} {:>8.2} s  f_C {:>10}  capacities respected: {:?}",
            alg, secs, e.comm_cost, e.capacities_respected
        );
        if e.capacities_respected != Some(true) {
            return Err(format!("{alg} does not respect the capacities").into());
        }
    }
    Ok(())
}
