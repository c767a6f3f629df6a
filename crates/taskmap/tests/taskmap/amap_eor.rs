//! The Algorithm Mapper's `EOR` branches: which modules exclude each other, a schedule
//! that never runs them at once, and the Monte Carlo runs of the stochastic program.

use std::path::Path;

use taskmap::houstis::amg::read_amg;
use taskmap::houstis::interconnect::Interconnect;
use taskmap::houstis::machine::Machine;
use taskmap::houstis::mapper::evaluate_assignment;
use taskmap::houstis::monte_carlo::MonteCarlo;
use taskmap::houstis::precedence::{
    Dag, Deterministic, Exclusion, Link, Logic, ParallelMatrix, PrecedenceGraph,
};
use taskmap::houstis::schedule::ScheduleSim;
use taskmap::houstis::spec::PrecedenceSpec;

use crate::support::{fixture, SplitMix as Rng};

/// A random DAG (links from lower to higher index) whose forks are `EOR` with
/// probability `p_eor` (equal probabilities adding up to 1), inputs `AND` or `EOR` at
/// random.
pub(crate) fn random_eor_dag(n: usize, p_link: f64, p_eor: f64, seed: u64) -> PrecedenceGraph {
    let mut r = Rng(seed);
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, o) in out.iter_mut().enumerate() {
        for j in i + 1..n {
            if r.unit() < p_link {
                o.push(j as u32);
            }
        }
        // now and then the same link twice
        if !o.is_empty() && r.below(12) == 0 {
            o.push(o[0]);
        }
    }
    let output: Vec<Logic> = out
        .iter()
        .map(|o| {
            if o.len() >= 2 && r.unit() < p_eor {
                Logic::Eor
            } else {
                Logic::And
            }
        })
        .collect();
    let mut links = Vec::new();
    for (i, o) in out.iter().enumerate() {
        for &j in o {
            links.push(Link {
                from: i as u32,
                to: j,
                itus: (1 + r.below(9)) as f64,
                prob: if output[i] == Logic::Eor {
                    1.0 / o.len() as f64
                } else {
                    1.0
                },
            });
        }
    }
    PrecedenceGraph {
        names: (0..n).map(|i| format!("m{i}")).collect(),
        time: (0..n).map(|_| (1 + r.below(20)) as f64).collect(),
        memory: vec![1.0; n],
        input: (0..n)
            .map(|_| {
                if r.below(2) == 0 {
                    Logic::And
                } else {
                    Logic::Eor
                }
            })
            .collect(),
        output,
        links,
    }
}

/// The modules reached from `start` in the DAG, `start` included, avoiding `skip`.
fn reach(dag: &Dag, n: usize, start: &[usize], skip: Option<usize>) -> Vec<bool> {
    let mut seen = vec![false; n];
    let mut todo: Vec<usize> = start.iter().copied().filter(|&s| Some(s) != skip).collect();
    for &s in &todo {
        seen[s] = true;
    }
    while let Some(v) = todo.pop() {
        for &s in dag.succs(v) {
            let s = s as usize;
            if Some(s) != skip && !seen[s] {
                seen[s] = true;
                todo.push(s);
            }
        }
    }
    seen
}

/// Exclusive pairs by the definition: some `EOR` module `e` dominates both, and each is
/// reached from exactly one of `e`'s successor links, different ones.
fn brute_exclusive(g: &PrecedenceGraph, det: &Deterministic) -> Vec<Vec<bool>> {
    let n = g.modules();
    let dag = Dag::new(g, det);
    let entries: Vec<usize> = (0..n).filter(|&v| dag.preds(v).is_empty()).collect();
    let mut ex = vec![vec![false; n]; n];
    for e in 0..n {
        let succ = dag.succs(e);
        if g.output[e] != Logic::Eor || succ.len() < 2 {
            continue;
        }
        let without = reach(&dag, n, &entries, Some(e));
        let dominated: Vec<bool> = (0..n).map(|v| v != e && !without[v]).collect();
        let reached: Vec<Vec<bool>> = succ
            .iter()
            .map(|&s| reach(&dag, n, &[s as usize], None))
            .collect();
        let label = |v: usize| -> Option<usize> {
            let hits: Vec<usize> = (0..succ.len()).filter(|&b| reached[b][v]).collect();
            (hits.len() == 1 && dominated[v]).then(|| hits[0])
        };
        for a in 0..n {
            for b in 0..n {
                if let (Some(x), Some(y)) = (label(a), label(b)) {
                    if x != y {
                        ex[a][b] = true;
                    }
                }
            }
        }
    }
    ex
}

#[test]
fn exclusion_and_delta_match_the_definition_of_eor_branches() {
    let mut nonempty = 0;
    for seed in 0..60 {
        let n = 8 + (seed as usize % 25);
        let g = random_eor_dag(n, 0.15, 0.6, seed);
        let det = g.deterministic().unwrap();
        let dag = Dag::new(&g, &det);
        let ex = Exclusion::new(&g, &det, &dag);
        let want = brute_exclusive(&g, &det);
        let par = ParallelMatrix::new(&g, &det).unwrap();
        let desc: Vec<Vec<bool>> = (0..n).map(|v| reach(&dag, n, &[v], None)).collect();
        for a in 0..n {
            for b in 0..n {
                assert_eq!(ex.exclusive(a, b), want[a][b], "seed {seed}: {a} {b}");
                let ordered = a == b || desc[a][b] || desc[b][a];
                assert_eq!(
                    par.parallel(a, b),
                    !ordered && !want[a][b],
                    "seed {seed}: Δ({a}, {b})"
                );
                nonempty += usize::from(want[a][b]);
            }
        }
    }
    assert!(nonempty > 100, "the random graphs have exclusive pairs");
}

#[test]
fn the_schedule_never_runs_exclusive_modules_at_once() {
    let mut delayed = 0;
    for seed in 0..80 {
        let n = 10 + (seed as usize % 30);
        let g = random_eor_dag(n, 0.12, 0.7, seed + 1000);
        let det = g.deterministic().unwrap();
        let dag = Dag::new(&g, &det);
        let ex = Exclusion::new(&g, &det, &dag);
        let mut r = Rng(seed);
        let k = 1 + r.below(6) as usize;
        let proc: Vec<u32> = (0..n).map(|_| r.below(k as u64) as u32).collect();
        // whole-number durations, some 0, so that events tie.
        let dur: Vec<f64> = (0..n).map(|_| r.below(7) as f64).collect();
        let mut sim = ScheduleSim::new(&g, &det, k);
        let (end, total) = sim.run(&proc, &dur);
        let (start, finish) = (sim.starts().to_vec(), sim.finishes().to_vec());
        let overlap = |a: usize, b: usize| start[a] < finish[b] && start[b] < finish[a];
        for a in 0..n {
            assert_eq!(finish[a], start[a] + dur[a]);
            for &u in dag.preds(a) {
                assert!(finish[u as usize] <= start[a], "seed {seed}: precedence");
            }
            for b in a + 1..n {
                if proc[a] == proc[b] {
                    assert!(!overlap(a, b), "seed {seed}: processor {}", proc[a]);
                }
                if ex.exclusive(a, b) {
                    assert!(!overlap(a, b), "seed {seed}: {a} and {b} are exclusive");
                }
            }
        }
        assert_eq!(end, finish.iter().copied().fold(0.0, f64::max));
        assert_eq!(total, finish.iter().sum::<f64>());
        // Without the exclusion (all AND) the schedule can only be as long or shorter.
        let mut and = g.clone();
        and.output.iter_mut().for_each(|o| *o = Logic::And);
        let free = ScheduleSim::new(&and, &det, k).run(&proc, &dur).0;
        assert!(free <= end, "seed {seed}: {free} > {end}");
        delayed += usize::from(free < end);
        // the critical path ends at the last module and starts at time 0.
        let path = sim.critical_path();
        assert_eq!(finish[path[0] as usize], end);
        assert_eq!(start[*path.last().unwrap() as usize], 0.0, "seed {seed}");
    }
    assert!(
        delayed > 5,
        "the exclusion delays some schedules: {delayed}"
    );
}

/// The machine of the fixtures' checks.
fn machine(k: u32, system: &str, itu_time: f64) -> Machine {
    let ic: Interconnect = system.parse().unwrap();
    Machine::new(k, ic, itu_time, None).unwrap()
}

#[test]
fn eor2_takes_one_branch_on_every_assignment() {
    let g = read_amg(&fixture("amap/eor2.amg")).unwrap();
    let det = g.deterministic().unwrap();
    assert_eq!(det.visits, vec![1.0, 0.5, 0.5, 1.0]);
    let m = machine(2, "ideal", 1.0);
    for mask in 0..16u32 {
        let proc: Vec<u32> = (0..4).map(|i| mask >> i & 1).collect();
        let r = evaluate_assignment(&g, &det, &m, proc.clone()).unwrap();
        assert_eq!(r.t_real, 102.0, "assignment {proc:?}");
    }
    for spec in ["alloc", "alloc-ls"] {
        let spec: PrecedenceSpec = spec.parse().unwrap();
        let r = spec
            .run(&g, &det, &m, None, &taskmap::mapper::NoProgress)
            .unwrap();
        assert_eq!(r.t_real, 102.0, "{}", spec.name());
        // every run of the program takes E, one branch and J.
        let mc = MonteCarlo::default()
            .run(&g, &det, &m, &r.processor, None)
            .unwrap();
        assert_eq!((mc.min, mc.max), (102.0, 102.0));
        assert!((mc.executions[1] - 0.5).abs() < 0.05, "{:?}", mc.executions);
        assert!(mc.gaps.is_empty());
    }
}

#[test]
fn realtime_t_real_is_never_below_its_expected_longest_path() {
    // sense 5, filterB 25, fuse 10, then track (m' = 54) and alarm (3) one after the
    // other, check 8, log 8: the expected length of the longest path of a run, 113.
    let g = read_amg(&fixture("amap/realtime.amg")).unwrap();
    let det = g.deterministic().unwrap();
    let m = machine(2, "bus", 0.1);
    for mask in 0..256u32 {
        let proc: Vec<u32> = (0..8).map(|i| mask >> i & 1).collect();
        let r = evaluate_assignment(&g, &det, &m, proc.clone()).unwrap();
        assert!(r.t_real >= 113.0 - 1e-9, "{proc:?}: {}", r.t_real);
    }
    let spec: PrecedenceSpec = "alloc-ls".parse().unwrap();
    let r = spec
        .run(&g, &det, &m, None, &taskmap::mapper::NoProgress)
        .unwrap();
    assert!(r.t_real >= 113.0 - 1e-9, "alloc-ls: {}", r.t_real);
}

#[test]
fn monte_carlo_runs_of_a_deterministic_graph_equal_the_schedule() {
    for seed in 0..20 {
        let mut g = random_eor_dag(25, 0.12, 0.0, seed + 77);
        g.input.iter_mut().for_each(|i| *i = Logic::And);
        let det = g.deterministic().unwrap();
        assert!(det.visits.iter().all(|&f| (f - 1.0).abs() < 1e-12));
        let mut r = Rng(seed);
        let k = 1 + r.below(4) as u32;
        let m = machine(k, "dual-bus", 0.05);
        let proc: Vec<u32> = (0..25).map(|_| r.below(u64::from(k)) as u32).collect();
        let want = evaluate_assignment(&g, &det, &m, proc.clone())
            .unwrap()
            .t_real;
        let mc = MonteCarlo {
            samples: 3,
            ..MonteCarlo::default()
        }
        .run(&g, &det, &m, &proc, None)
        .unwrap();
        // equal up to the rounding of f (a mean of its inputs' flows).
        for x in [mc.min, mc.max] {
            assert!(
                (x - want).abs() <= 1e-9 * want,
                "seed {seed}: {x} vs {want}"
            );
        }
        assert!(mc.min == mc.max && mc.gaps.is_empty());
    }
}

#[test]
fn monte_carlo_executions_follow_f_and_the_seed_fixes_the_result() {
    let g = read_amg(&fixture("amap/realtime.amg")).unwrap();
    let det = g.deterministic().unwrap();
    let m = machine(2, "bus", 0.1);
    let proc = vec![0, 0, 1, 0, 1, 0, 1, 0];
    let mc = MonteCarlo {
        samples: 20_000,
        seed: 5,
        ..MonteCarlo::default()
    };
    let one = mc.run(&g, &det, &m, &proc, None).unwrap();
    for (i, (&x, &f)) in one.executions.iter().zip(&det.visits).enumerate() {
        assert!((x - f).abs() <= 0.03 * f, "{}: {x} vs f {f}", g.names[i]);
    }
    assert!(one.gaps.is_empty(), "{:?}", one.gaps);
    assert!(one.ci95[0] < one.mean && one.mean < one.ci95[1]);
    assert!(one.min <= one.mean && one.mean <= one.max && one.min < one.max);
    // the shortest run: sense, filters in parallel, fuse, track, check, log.
    assert!(one.min >= 5.0 + 25.0 + 10.0 + 30.0 + 4.0 + 8.0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let two = mc.run(&g, &det, &m, &proc, Some(&pool)).unwrap();
    assert_eq!(one, two, "the threads do not change the runs");
    let other = MonteCarlo { seed: 6, ..mc }
        .run(&g, &det, &m, &proc, None)
        .unwrap();
    assert_ne!(one.mean, other.mean);
}

#[test]
fn monte_carlo_reports_an_and_join_of_exclusive_branches() {
    // E chooses X or Y; J waits for both (AND input): no run completes its inputs, while
    // f reads J at the mean of its inputs, 0.5.
    let text = "MODULE E 1 out=eor\nMODULE X 3\nMODULE Y 4\nMODULE J 2 in=and\n\
                LINK E X 1 0.5\nLINK E Y 1 0.5\nLINK X J 1\nLINK Y J 1\n";
    let g = taskmap::houstis::amg::parse_amg(text, Path::new("join.amg")).unwrap();
    let det = g.deterministic().unwrap();
    assert_eq!(det.visits[3], 0.5);
    let m = machine(1, "ideal", 1.0);
    let mc = MonteCarlo::default()
        .run(&g, &det, &m, &[0; 4], None)
        .unwrap();
    assert_eq!(mc.executions[3], 0.0);
    assert_eq!(mc.gaps.len(), 1);
    assert_eq!(
        (mc.gaps[0].module, mc.gaps[0].f, mc.gaps[0].sampled),
        (3, 0.5, 0.0)
    );
    // a run is E then X (4) or Y (5).
    assert_eq!((mc.min, mc.max), (4.0, 5.0));
}

#[test]
fn monte_carlo_refuses_bad_options_and_endless_runs() {
    let g = read_amg(&fixture("amap/realtime.amg")).unwrap();
    let det = g.deterministic().unwrap();
    let m = machine(2, "bus", 0.1);
    let proc = vec![0; 8];
    let few = MonteCarlo {
        samples: 1,
        ..MonteCarlo::default()
    };
    assert!(few.run(&g, &det, &m, &proc, None).is_err());
    let tight = MonteCarlo {
        max_executions: 5,
        ..MonteCarlo::default()
    };
    let e = tight.run(&g, &det, &m, &proc, None).unwrap_err();
    assert!(
        e.to_string().contains("more than 5 module executions"),
        "{e}"
    );
    assert!(MonteCarlo::default()
        .run(&g, &det, &m, &[0, 0, 2, 0, 0, 0, 0, 0], None)
        .is_err());
}

#[test]
fn the_critical_path_follows_the_order_modules_of_time_zero_ran_in() {
    // On one processor A runs, then v, w and u at the same moment (time 0), then Z: the
    // order rebuilt from start times made the path loop between them.
    let text = "MODULE A 1\nMODULE u 0\nMODULE v 0\nMODULE w 0\nMODULE Z 1\n\
                LINK w u 1\nLINK v Z 1\n";
    let g = taskmap::houstis::amg::parse_amg(text, Path::new("zero.amg")).unwrap();
    let det = g.deterministic().unwrap();
    let mut sim = ScheduleSim::new(&g, &det, 1);
    let (end, _) = sim.run(&[0; 5], &[1.0, 0.0, 0.0, 0.0, 1.0]);
    assert_eq!(end, 2.0);
    let path = sim.critical_path();
    assert!(path.len() <= 5, "{path:?}");
    assert_eq!(
        sim.starts()[*path.last().unwrap() as usize],
        0.0,
        "{path:?}"
    );
    let m = machine(1, "ideal", 1.0);
    let spec: PrecedenceSpec = "alloc-ls".parse().unwrap();
    let r = spec
        .run(&g, &det, &m, None, &taskmap::mapper::NoProgress)
        .unwrap();
    assert_eq!(r.t_real, 2.0);
}
