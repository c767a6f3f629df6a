//! Tests of the mappers of Berger et al. 2014: GTWP, Subgraph placement, P&P, and their
//! variants.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use taskmap::mappers::berger::common::BergerDist;
use taskmap::mappers::berger::gtwp::{affinity_key, naive_affinities, DistanceAffinities};
use taskmap::mappers::berger::netlist::circuit_netlist;
use taskmap::mappers::berger::pnp::{anneal_qap, qap_cost, swap_delta, PnpMapper};
use taskmap::{evaluate, AlgorithmSpec, Capacities, EvalOptions, Mapper, Problem, RunContext};
use taskmap_graph::{gen, TaskGraph};

const BERGER: &[&str] = &[
    "gtwp",
    "gtwp,saturated=keep",
    "gtwp-fit",
    "subgraph",
    "subgraph-dist",
    "pnp",
];

fn arch(spec: &str) -> Box<dyn taskmap::Architecture> {
    taskmap_arch::parse_arch(spec).expect("valid spec")
}

/// The structure of `g` with random edge weights 1..=5 and `ncon` random vertex weights
/// 1..=4 (1 when `unit`).
fn weighted(g: &TaskGraph, seed: u64, ncon: usize, unit: bool) -> TaskGraph {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (xadj, adjncy, _, _) = g.csr();
    let n = g.num_tasks();
    let mut ew = Vec::with_capacity(adjncy.len());
    for u in 0..n {
        for &v in &adjncy[xadj[u]..xadj[u + 1]] {
            let (a, b) = ((u as u64).min(v as u64), (u as u64).max(v as u64));
            ew.push(1 + (a.wrapping_mul(2654435761) ^ b.wrapping_mul(40503) ^ seed) % 5);
        }
    }
    let vw: Vec<u64> = (0..n * ncon)
        .map(|_| if unit { 1 } else { rng.gen_range(1..5) })
        .collect();
    TaskGraph::from_csr(xadj.to_vec(), adjncy.to_vec(), ew, vw, ncon).expect("valid graph")
}

/// A problem with hard capacities `slack · total / k` (rounded up, at least the heaviest
/// task plus one) per resource.
fn capacitated(g: TaskGraph, spec: &str, slack: f64) -> Problem {
    let a = arch(spec);
    let k = a.pe_count();
    let caps: Vec<u64> = (0..g.ncon())
        .map(|c| {
            let total = g.total_vertex_weight(c);
            let maxw = (0..g.num_tasks() as u32)
                .map(|t| g.vertex_weight(t, c))
                .max()
                .unwrap_or(1);
            ((slack * total as f64 / k as f64).ceil() as u64).max(maxw + 1)
        })
        .collect();
    let mut p = Problem::new(g, a);
    p.capacities = Some(Capacities::uniform(k, &caps));
    p
}

fn run(alg: &str, p: &Problem, seed: u64) -> Result<taskmap::Mapping, taskmap::Error> {
    let spec: AlgorithmSpec = alg.parse().expect("registered");
    spec.map(p, &mut RunContext::new(seed))
}

fn respects(p: &Problem, m: &taskmap::Mapping) -> bool {
    let opts = EvalOptions {
        epsilon: None,
        capacities: p.capacities.clone(),
    };
    let e = evaluate(&p.graph, p.arch.as_ref(), m, &opts).expect("evaluates");
    e.capacities_respected == Some(true)
}

#[test]
fn every_mapper_respects_hard_capacities() {
    let targets = ["torus:4x4", "mesh:3x5", "hypercube:3", "torus:8x8"];
    for seed in 0..6u64 {
        for (i, spec) in targets.iter().enumerate() {
            let base = if seed % 2 == 0 {
                gen::random_graph(300 + 97 * seed as u32, 5.0, seed)
            } else {
                gen::random_geometric(400 + 53 * seed as u32, 6.0, seed)
            };
            // Unit weights with 3 % slack, and 1-2 resources of random weights with 30 %.
            let cases = [(1usize, true, 1.03), (1, false, 1.3), (2, false, 1.3)];
            for &(ncon, unit, slack) in &cases {
                let g = weighted(&base, seed * 31 + i as u64, ncon, unit);
                let p = capacitated(g, spec, slack);
                for alg in BERGER.iter().chain(&["multilevel"]) {
                    let m = run(alg, &p, seed).unwrap_or_else(|e| {
                        panic!("{} on {} (ncon {}, seed {}): {}", alg, spec, ncon, seed, e)
                    });
                    assert_eq!(m.len(), p.graph.num_tasks());
                    assert!(
                        respects(&p, &m),
                        "{} breaks a capacity on {} (ncon {}, seed {})",
                        alg,
                        spec,
                        ncon,
                        seed
                    );
                }
            }
        }
    }
}

#[test]
fn exactly_full_capacities_are_respected() {
    // 144 unit tasks on 4 PEs of capacity 36: no slack at all.
    let g = gen::grid(&[12, 12], false);
    let mut p = Problem::new(g, arch("torus:2x2"));
    p.capacities = Some(Capacities::uniform(4, &[36]));
    for alg in BERGER {
        let m = run(alg, &p, 1).unwrap_or_else(|e| panic!("{}: {}", alg, e));
        assert!(respects(&p, &m), "{}", alg);
    }
}

#[test]
fn incremental_affinities_equal_naive_recomputation() {
    for (seed, spec, excluded) in [
        (1u64, "torus:4x4", &[][..]),
        (2, "mesh:3x5", &[]),
        (3, "torus:8x8", &[]),
        (4, "hypercube:4", &[]),
        // `gtwp,saturated=drop`: PEs left out of the best PE.
        (5, "torus:4x4", &[0u32, 1, 5, 6, 9][..]),
        (6, "mesh:3x5", &[7, 2]),
    ] {
        let g = weighted(&gen::random_graph(200, 6.0, seed), seed, 1, true);
        let a = arch(spec);
        let dist = BergerDist::new(a.as_ref());
        let k = dist.k();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut order: Vec<u32> = (0..g.num_tasks() as u32).collect();
        order.shuffle(&mut rng);
        let mut pe_of = vec![u32::MAX; g.num_tasks()];
        let mut aff = DistanceAffinities::new(&g);
        for &p in excluded {
            aff.exclude(k, p);
        }
        for (step, &v) in order.iter().enumerate() {
            let pe = rng.gen_range(0..k);
            pe_of[v as usize] = pe;
            for (&u, &q) in g.neighbors(v).iter().zip(g.edge_weights(v)) {
                if pe_of[u as usize] == u32::MAX {
                    aff.add(u, pe, q, &dist);
                }
            }
            if step % 10 != 0 {
                continue;
            }
            for t in 0..g.num_tasks() as u32 {
                if pe_of[t as usize] != u32::MAX {
                    continue;
                }
                let naive = naive_affinities(&g, &dist, &pe_of, t);
                for n in 0..k {
                    let x = naive[n as usize];
                    let y = aff.value(t, n, &dist);
                    assert!(
                        (x - y).abs() <= 1e-9 * x.max(1.0),
                        "β_{}{}: {} vs {}",
                        t,
                        n,
                        x,
                        y
                    );
                    if let Some(s) = aff.stored(t, n) {
                        assert!((x - s).abs() <= 1e-9 * x.max(1.0), "stored β_{}{}", t, n);
                    }
                }
                let allowed = |n: &u32| !excluded.contains(n);
                let best = (0..k)
                    .filter(allowed)
                    .map(|n| affinity_key(naive[n as usize]))
                    .max()
                    .unwrap();
                let first = (0..k)
                    .filter(allowed)
                    .find(|&n| affinity_key(naive[n as usize]) == best)
                    .unwrap();
                let (bp, bv) = aff.best(t);
                if best > 0 {
                    assert_eq!(affinity_key(bv), best, "best affinity of task {}", t);
                    assert_eq!(aff.best_key(t), best, "stored key of task {}", t);
                    assert_eq!(bp, first, "best PE of task {} (ties: lowest id)", t);
                }
            }
        }
    }
}

#[test]
fn same_seed_same_mapping() {
    let g = weighted(&gen::random_geometric(700, 6.0, 9), 9, 1, true);
    let p = capacitated(g, "torus:4x4", 1.05);
    for alg in BERGER {
        let a = run(alg, &p, 17).unwrap();
        let b = run(alg, &p, 17).unwrap();
        assert_eq!(a, b, "{} is not deterministic", alg);
    }
}

#[test]
fn annealing_never_returns_worse_than_its_start_and_deltas_are_exact() {
    for (seed, spec) in [(1u64, "torus:4x4"), (2, "torus:6x6"), (3, "mesh:2x7")] {
        let a = arch(spec);
        let dist = BergerDist::new(a.as_ref());
        let k = dist.k() as usize;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut w = vec![0u64; k * k];
        for i in 0..k {
            for j in i + 1..k {
                if rng.gen_bool(0.3) {
                    let x = rng.gen_range(1..20);
                    w[i * k + j] = x;
                    w[j * k + i] = x;
                }
            }
        }
        let mut start: Vec<u32> = (0..k as u32).collect();
        start.shuffle(&mut rng);
        // Swap gains equal the cost difference.
        for _ in 0..200 {
            let (x, y) = (rng.gen_range(0..k), rng.gen_range(0..k));
            if x == y {
                continue;
            }
            let mut q = start.clone();
            q.swap(x, y);
            let d = qap_cost(&w, k, &dist, &q) as i64 - qap_cost(&w, k, &dist, &start) as i64;
            assert_eq!(swap_delta(&w, k, &dist, &start, x, y), d);
        }
        for moves in [1usize, 10, 1000, 20000] {
            let cfg = PnpMapper {
                sa_moves: moves,
                stages: 10,
                ..PnpMapper::default()
            };
            let best = anneal_qap(
                &w,
                k,
                &dist,
                &start,
                &cfg,
                &mut rng,
                &|_, _| true,
                None,
                &std::sync::atomic::AtomicBool::new(false),
                &taskmap::NoProgress,
            );
            let mut sorted = best.clone();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                (0..k as u32).collect::<Vec<_>>(),
                "not a permutation"
            );
            assert!(qap_cost(&w, k, &dist, &best) <= qap_cost(&w, k, &dist, &start));
        }
    }
}

#[test]
fn infeasible_total_capacity_is_a_clear_error() {
    let g = gen::grid(&[10, 10], false);
    let mut p = Problem::new(g, arch("torus:3x3"));
    p.capacities = Some(Capacities::uniform(9, &[11])); // 99 < 100 tasks
    for alg in BERGER {
        let e = run(alg, &p, 0).expect_err("infeasible");
        let msg = e.to_string();
        assert!(
            msg.contains("infeasible") && msg.contains("100") && msg.contains("99"),
            "{}: unclear message \"{}\"",
            alg,
            msg
        );
    }
}

#[test]
fn an_unpackable_instance_is_an_error_not_a_violation() {
    // Three tasks of weight 2 on two PEs of capacity 3: 6 ≤ 6 in total, but no packing.
    let g = weighted(&gen::ring(3), 0, 1, true);
    let (xadj, adjncy, ew, _) = g.csr();
    let g =
        TaskGraph::from_csr(xadj.to_vec(), adjncy.to_vec(), ew.to_vec(), vec![2; 3], 1).unwrap();
    let mut p = Problem::new(g, arch("complete:2"));
    p.capacities = Some(Capacities::uniform(2, &[3]));
    for alg in BERGER {
        let e = run(alg, &p, 0).expect_err("cannot pack");
        assert!(e.to_string().contains("fits on no PE"), "{}: {}", alg, e);
    }
}

#[test]
fn literal_algorithms_on_a_small_grid() {
    // grid12x12 on a 2x2 torus with capacity 40 (Table I of the paper): every PE used,
    // the greedy placements stay within 5x of a quadrant mapping (f_C = 24).
    let g = gen::grid(&[12, 12], false);
    let mut p = Problem::new(g, arch("torus:2x2"));
    p.capacities = Some(Capacities::uniform(4, &[40]));
    for alg in BERGER {
        let m = run(alg, &p, 0).unwrap();
        let e = evaluate(&p.graph, p.arch.as_ref(), &m, &EvalOptions::default()).unwrap();
        assert!(
            e.comm_cost >= 24 && e.comm_cost <= 120,
            "{}: f_C {}",
            alg,
            e.comm_cost
        );
    }
}

/// The two readings of GTWP's saturated nodes give different, fixed results on
/// grid12x12 (docs/berger.md): dropping a saturated PE from the best-PE choice keeps the
/// growth compact (f_C 51; the paper's GTWP: 41), keeping it fragments the frontier (87).
#[test]
fn gtwp_saturated_readings() {
    let g = gen::grid(&[12, 12], false);
    let mut p = Problem::new(g, arch("torus:2x2"));
    p.capacities = Some(Capacities::uniform(4, &[40]));
    let f_c = |alg: &str| {
        let m = run(alg, &p, 0).unwrap();
        assert!(respects(&p, &m), "{alg}");
        evaluate(&p.graph, p.arch.as_ref(), &m, &EvalOptions::default())
            .unwrap()
            .comm_cost
    };
    assert_eq!(f_c("gtwp"), 51);
    assert_eq!(f_c("gtwp,saturated=drop"), 51);
    assert_eq!(f_c("gtwp,saturated=keep"), 87);
    assert!("gtwp,saturated=maybe".parse::<AlgorithmSpec>().is_err());
    assert!("gtwp-fit,saturated=keep".parse::<AlgorithmSpec>().is_err());
}

#[test]
fn circuit_netlist_is_reproducible_and_sparse() {
    let a = circuit_netlist(20_000, 5);
    let b = circuit_netlist(20_000, 5);
    assert_eq!(a.csr(), b.csr());
    assert_eq!(a.num_tasks(), 20_000);
    let arcs = a.total_edge_weight() as f64 / 20_000.0;
    assert!((1.7..2.1).contains(&arcs), "{} arcs per task", arcs);
    let maxdeg = (0..20_000).map(|t| a.degree(t)).max().unwrap();
    assert!(
        maxdeg >= 20,
        "flip-flops should have a large fan-out, max degree {}",
        maxdeg
    );
}

/// Every Berger mapper's f_C on two fixed instances, pinned: the speed work on these
/// mappers must not change a mapping (docs/berger.md). grid23x23 onto a 4x4 torus with
/// capacity 40 gives the values of the table in docs/berger.md; a random geometric graph
/// with edge weights 1-5 onto `torus:4x4` exercises weighted affinities and ties. Both
/// columns were the same before the speed work (commit 2eae484).
#[test]
fn berger_mappings_are_pinned() {
    let g = gen::grid(&[23, 23], false);
    let mut grid = Problem::new(g, arch("torus:4x4"));
    grid.capacities = Some(Capacities::uniform(16, &[40]));
    let rgg = capacitated(
        weighted(&gen::random_geometric(700, 6.0, 9), 9, 1, true),
        "torus:4x4",
        1.05,
    );
    let f_c = |p: &Problem, alg: &str| {
        let m = run(alg, p, 0).unwrap();
        assert!(respects(p, &m), "{alg}");
        evaluate(&p.graph, p.arch.as_ref(), &m, &EvalOptions::default())
            .unwrap()
            .comm_cost
    };
    let got: Vec<(u64, u64)> = BERGER
        .iter()
        .map(|alg| (f_c(&grid, alg), f_c(&rgg, alg)))
        .collect();
    let want = [
        (471, 1125), // gtwp
        (667, 1522), // gtwp,saturated=keep
        (316, 690),  // gtwp-fit
        (458, 1503), // subgraph
        (345, 1034), // subgraph-dist
        (237, 763),  // pnp
    ];
    assert_eq!(
        got, want,
        "(grid23x23, rgg) per mapper, in the order of BERGER"
    );
}
