//! The exhaustive search of the Algorithm Mapper's assignments (`amap --optimal`) against
//! every assignment scored one by one.

use taskmap::houstis::exhaustive::Exhaustive;
use taskmap::houstis::interconnect::Interconnect;
use taskmap::houstis::machine::Machine;
use taskmap::houstis::mapper::{evaluate_assignment, memory_excess};
use taskmap::houstis::precedence::PrecedenceGraph;
use taskmap::houstis::spec::PrecedenceSpec;

/// A random DAG with some EOR forks, memories 1 to 3.
fn graph(n: usize, seed: u64) -> PrecedenceGraph {
    let mut g = crate::amap_eor::random_eor_dag(n, 0.25, 0.35, seed);
    let mut r = crate::support::SplitMix(seed);
    g.memory
        .iter_mut()
        .for_each(|m| *m = (1 + r.below(3)) as f64);
    g
}

#[test]
fn the_search_finds_the_least_t_real_of_every_assignment() {
    for seed in 0..24u64 {
        let n = 3 + (seed as usize % 5);
        let g = graph(n, seed + 1);
        let det = g.deterministic().unwrap();
        let k = 2 + (seed as u32 % 2);
        let ic: Interconnect = ["bus", "dual-bus", "banyan", "multibus:2"][seed as usize % 4]
            .parse()
            .unwrap();
        let memory = (seed % 3 == 0).then_some(5.0);
        let mut m = Machine::new(k, ic, 0.2, memory).unwrap();
        if seed % 2 == 1 {
            let speeds: Vec<f64> = (0..k).map(|p| if p == 0 { 2.0 } else { 1.0 }).collect();
            m = m.with_speeds(speeds).unwrap();
        }
        // every assignment, k^n of them.
        let mut best = f64::INFINITY;
        let mut fitting = 0u64;
        for code in 0..(k as u64).pow(n as u32) {
            let proc: Vec<u32> = (0..n)
                .map(|i| (code / (k as u64).pow(i as u32) % k as u64) as u32)
                .collect();
            if memory_excess(&g, &m, &proc).is_some() {
                continue;
            }
            fitting += 1;
            best = best.min(evaluate_assignment(&g, &det, &m, proc).unwrap().t_real);
        }
        let found = Exhaustive::default().run(&g, &det, &m, None);
        if fitting == 0 {
            assert!(found.is_err(), "seed {seed}");
            continue;
        }
        let opt = found.unwrap();
        assert_eq!(opt.result.t_real, best, "seed {seed}");
        assert!(memory_excess(&g, &m, &opt.result.processor).is_none());
        assert!(
            opt.evaluated <= fitting,
            "symmetric assignments are skipped"
        );
        if memory.is_none() && seed % 2 == 0 {
            // set partitions into at most k blocks
            let mut s = vec![vec![0u64; k as usize + 1]; n + 1];
            s[0][0] = 1;
            for i in 1..=n {
                for j in 1..=k as usize {
                    s[i][j] = j as u64 * s[i - 1][j] + s[i - 1][j - 1];
                }
            }
            assert_eq!(opt.evaluated, s[n].iter().sum::<u64>(), "seed {seed}");
        }
        // the heuristics never beat it (when they find an assignment that fits).
        for spec in ["alloc", "alloc-ls"] {
            let spec: PrecedenceSpec = spec.parse().unwrap();
            if let Ok(r) = spec.run(&g, &det, &m, None, &taskmap::mapper::NoProgress) {
                assert!(r.t_real >= opt.result.t_real * (1.0 - 1e-12), "seed {seed}");
            }
        }
    }
}

#[test]
fn the_search_does_not_depend_on_the_threads_and_keeps_to_its_limit() {
    let g = graph(9, 7);
    let det = g.deterministic().unwrap();
    let m = Machine::new(3, "dual-bus".parse().unwrap(), 0.1, None).unwrap();
    let one = Exhaustive::default().run(&g, &det, &m, None).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let two = Exhaustive::default()
        .run(&g, &det, &m, Some(&pool))
        .unwrap();
    assert_eq!(one, two);
    // S(9,1) + S(9,2) + S(9,3) = 1 + 255 + 3025
    assert_eq!(one.evaluated, 3281);
    let e = Exhaustive { limit: 3280 }
        .run(&g, &det, &m, None)
        .unwrap_err();
    assert!(e.to_string().contains("more than the limit 3280"), "{e}");
    assert!(Exhaustive { limit: 3281 }.run(&g, &det, &m, None).is_ok());
}
