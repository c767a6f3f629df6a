//! MATEHa against the exhaustive optimum on 4-processor multi-clusters, the experiment of
//! De Giusti et al.'s Table 1: configurations Conf1 (4 processors of cluster 1), Conf2
//! (2 + 2), Conf3 (1 of cluster 1 + 3 of cluster 2) and Conf4 (3 + 1), random programs
//! (`model::ttigha::random_ttigha` with its defaults but for the sizes below), final times
//! by SIMULHa.
//!
//! `[TASKS=10] [SUBTASKS=3] [RUNS=25] [SLOW=1.2] [KICKS=100] [COMM=1] cargo run --release -p taskmap --example mateha_gap`
//! (`COMM` scales every startup and per-byte time) prints per configuration the mean and largest gap of MATEHa above the optimum, how
//! often it is optimal, the same for `mateha-ls` (MATEHa then `iterated_local_search`
//! with `KICKS` kicks, default 100), the same for HEFT and PEFT (each allocation simulated in its own
//! order, which may beat the optimum, an optimum over allocations in SIMULHa's default
//! order: "optimal" then counts schedules at most as long) and the times. `WRITE=file.ttig [SEED=s] [C1=2] [C2=2] [PROB=0.15]` writes
//! one model instead (C1 + C2 processors, each sub-task receiving from each earlier one of
//! another task with probability PROB).

use std::time::Instant;

use taskmap::hetero::gen::{random_ttigha, RandomTtigha};
use taskmap::hetero::heft::{heft, peft};
use taskmap::hetero::mateha::{exhaustive_observed, iterated_local_search, mateha, SearchParams};
use taskmap::hetero::simulha::Simulator;

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (tasks, subtasks, runs) = (
        env("TASKS", 10usize),
        env("SUBTASKS", 3usize),
        env("RUNS", 25u64),
    );
    let slow = env("SLOW", 1.2f64);
    let kicks = env("KICKS", 100usize);
    let comm = env("COMM", 1.0f64);
    // The exhaustive search on every core (its optimum does not depend on the threads).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pool = taskmap::RunContext::new(0).with_threads(cores)?;
    let params = |c1: usize, c2: usize| {
        let mut p = RandomTtigha {
            tasks,
            max_subtasks: subtasks,
            ..RandomTtigha::default()
        };
        p.types[0].1 = c1;
        p.types[1].1 = c2;
        p.types[1].2 = slow;
        p.types.retain(|t| t.1 > 0);
        p.lan = (p.lan.0 * comm, p.lan.1 * comm);
        p.switch = (p.switch.0 * comm, p.switch.1 * comm);
        p
    };
    if let Ok(path) = std::env::var("WRITE") {
        let mut p = params(env("C1", 2usize), env("C2", 2usize));
        p.message_probability = env("PROB", p.message_probability);
        let m = random_ttigha(&p, env("SEED", 0u64));
        std::fs::write(&path, m.to_text())?;
        println!(
            "wrote {path}: {} tasks, {} sub-tasks",
            m.program.tasks(),
            m.program.subtasks()
        );
        return Ok(());
    }
    println!(
        "{tasks} tasks of 1-{subtasks} sub-tasks, {runs} programs per configuration, cluster 2 {slow}x slower, communication times x{comm}"
    );
    println!("| configuration | MATEHa: mean gap | largest | optimal | `mateha-ls`: mean gap | largest | optimal | HEFT: mean gap | largest | optimal | PEFT: mean gap | largest | optimal | allocations searched | MATEHa time | `mateha-ls` time | HEFT time | exhaustive time |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, c1, c2) in [
        ("Conf1", 4, 0),
        ("Conf2", 2, 2),
        ("Conf3", 1, 3),
        ("Conf4", 3, 1),
    ] {
        let (mut sum, mut worst, mut hits, mut evals) = (0.0f64, 0.0f64, 0u64, 0u64);
        let (mut ls_sum, mut ls_worst, mut ls_hits) = (0.0f64, 0.0f64, 0u64);
        let (mut h_sum, mut h_worst, mut h_hits) = (0.0f64, f64::NEG_INFINITY, 0u64);
        let (mut p_sum, mut p_worst, mut p_hits) = (0.0f64, f64::NEG_INFINITY, 0u64);
        let (mut t_mateha, mut t_opt, mut t_ls, mut t_heft) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for seed in 0..runs {
            let m = random_ttigha(&params(c1, c2), seed);
            let t0 = Instant::now();
            let mut alloc = mateha(&m).alloc;
            t_mateha += t0.elapsed().as_secs_f64();
            let ms = Simulator::new(&m).makespan(&alloc);
            let t0 = Instant::now();
            let params = SearchParams {
                kicks,
                seed,
                ..SearchParams::default()
            };
            let ls = iterated_local_search(&m, &mut alloc, &params);
            t_ls += t0.elapsed().as_secs_f64();
            let t0 = Instant::now();
            let h = heft(&m);
            t_heft += t0.elapsed().as_secs_f64();
            let hs = Simulator::new(&m)
                .schedule(&h.alloc, Some(&h.order))?
                .makespan;
            let pf = peft(&m);
            let ps = Simulator::new(&m)
                .schedule(&pf.alloc, Some(&pf.order))?
                .makespan;
            let t0 = Instant::now();
            let o = exhaustive_observed(&m, u64::MAX, pool.pool.as_ref(), &taskmap::NoProgress)?;
            t_opt += t0.elapsed().as_secs_f64();
            let gap = 100.0 * (ms - o.makespan) / o.makespan;
            sum += gap;
            worst = worst.max(gap);
            hits += u64::from(gap == 0.0);
            let ls_gap = 100.0 * (ls - o.makespan) / o.makespan;
            ls_sum += ls_gap;
            ls_worst = ls_worst.max(ls_gap);
            ls_hits += u64::from(ls_gap == 0.0);
            let h_gap = 100.0 * (hs - o.makespan) / o.makespan;
            h_sum += h_gap;
            h_worst = h_worst.max(h_gap);
            h_hits += u64::from(h_gap <= 0.0);
            let p_gap = 100.0 * (ps - o.makespan) / o.makespan;
            p_sum += p_gap;
            p_worst = p_worst.max(p_gap);
            p_hits += u64::from(p_gap <= 0.0);
            evals += o.evaluated;
        }
        println!(
            "| {name} ({c1} + {c2}) | {:.2} % | {:.2} % | {hits} of {runs} | {:.2} % | {:.2} % | {ls_hits} of {runs} | {:.2} % | {:.2} % | {h_hits} of {runs} | {:.2} % | {:.2} % | {p_hits} of {runs} | {} | {:.3} ms | {:.2} ms | {:.3} ms | {:.2} s |",
            sum / runs as f64,
            worst,
            ls_sum / runs as f64,
            ls_worst,
            h_sum / runs as f64,
            h_worst,
            p_sum / runs as f64,
            p_worst,
            evals / runs,
            1e3 * t_mateha / runs as f64,
            1e3 * t_ls / runs as f64,
            1e3 * t_heft / runs as f64,
            t_opt / runs as f64
        );
    }
    Ok(())
}
