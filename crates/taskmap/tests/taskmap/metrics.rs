//! Property tests of the evaluation: every metric against a naive recomputation.

use proptest::prelude::*;
use taskmap::{
    evaluate, evaluate_on, AlgorithmSpec, EvalOptions, Mapper, Mapping, PeId, Problem, RunContext,
};
use taskmap_arch::parse_arch;
use taskmap_graph::gen;

const SPECS: &[&str] = &[
    "torus:4x4",
    "mesh:3x5",
    "hypercube:4",
    "tree:2:3:2/1:10:100",
    "complete:7",
    "torus:3x2x2",
];

/// f_C through a PE x PE traffic matrix: a different summation order than `evaluate`.
fn naive_comm_cost(
    graph: &taskmap_graph::TaskGraph,
    arch: &dyn taskmap_arch::Architecture,
    m: &[PeId],
) -> (u64, u64) {
    let k = arch.pe_count() as usize;
    let mut traffic = vec![0u64; k * k];
    for (u, v, w) in graph.edges() {
        traffic[m[u as usize].idx() * k + m[v as usize].idx()] += w;
    }
    let mut fc = 0;
    let mut cut = 0;
    for p in 0..k {
        for q in 0..k {
            let t = traffic[p * k + q];
            if p != q {
                fc += t * arch.distance(PeId(p as u32), PeId(q as u32));
                cut += t;
            }
        }
    }
    (fc, cut)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn metrics_match_naive(n in 2u32..300, deg in 1.0f64..8.0, seed in 0u64..1000, spec in 0usize..SPECS.len()) {
        let graph = gen::random_graph(n, deg, seed);
        let arch = parse_arch(SPECS[spec]).unwrap();
        let k = arch.pe_count();
        // A random (unbalanced) mapping from the seed.
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let pes: Vec<PeId> = (0..n).map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            PeId(((x >> 33) % k as u64) as u32)
        }).collect();
        let mapping = Mapping::new(pes.clone());
        let e = evaluate(&graph, arch.as_ref(), &mapping, &EvalOptions::default()).unwrap();
        let (fc, cut) = naive_comm_cost(&graph, arch.as_ref(), &pes);
        prop_assert_eq!(e.comm_cost, fc);
        prop_assert_eq!(e.comm_cost_j, 2 * u128::from(fc));
        prop_assert_eq!(e.edge_cut, cut);
        prop_assert_eq!(taskmap::metrics::comm_cost(&graph, arch.as_ref(), &pes), fc);
        // Histogram: weights add up to the total, distance-weighted to f_C, beyond 0 to the cut.
        let hw: u64 = e.distance_histogram.iter().map(|b| b.weight).sum();
        let hd: u64 = e.distance_histogram.iter().map(|b| b.weight * b.distance).sum();
        let hc: u64 = e.distance_histogram.iter().filter(|b| b.distance > 0).map(|b| b.weight).sum();
        let he: u64 = e.distance_histogram.iter().map(|b| b.edges).sum();
        prop_assert_eq!(hw, graph.total_edge_weight());
        prop_assert_eq!(hd, fc);
        prop_assert_eq!(hc, cut);
        prop_assert_eq!(he as usize, graph.num_edges());
        // Loads.
        let l = &e.loads[0];
        let mut load = vec![0u64; k as usize];
        for (t, p) in pes.iter().enumerate() {
            load[p.idx()] += graph.vertex_weight(t as u32, 0);
        }
        prop_assert_eq!(l.max, *load.iter().max().unwrap());
        prop_assert_eq!(l.min, *load.iter().min().unwrap());
        prop_assert_eq!(l.total, load.iter().sum::<u64>());
        let used = load.iter().filter(|&&x| x > 0).count() as u32;
        prop_assert_eq!(e.pes_used, used);
        // Mean dilation times edge count is the sum of dilations.
        if e.edges > 0 {
            let dil_sum: u64 = e.distance_histogram.iter().map(|b| b.edges * b.distance).sum();
            prop_assert!((e.dilation_mean * e.edges as f64 - dil_sum as f64).abs() < 1e-6 * (1.0 + dil_sum as f64));
        }
    }

    #[test]
    fn block_and_random_are_balanced(n in 1u32..500, seed in 0u64..100, spec in 0usize..SPECS.len()) {
        let graph = gen::random_graph(n.max(2), 3.0, seed);
        for alg in ["block", "random"].map(|a| a.parse::<AlgorithmSpec>().unwrap()) {
            let problem = Problem::new(graph.clone(), parse_arch(SPECS[spec]).unwrap());
            let m = alg.map(&problem, &mut RunContext::new(seed)).unwrap();
            let opts = EvalOptions { epsilon: Some(0.0), capacities: None };
            let e = evaluate(&problem.graph, problem.arch.as_ref(), &m, &opts).unwrap();
            // Unit weights: loads differ by at most one, so every PE is within ceil(share).
            prop_assert!(e.loads[0].max - e.loads[0].min <= 1, "{:?}", e.loads[0]);
            prop_assert_eq!(e.balanced, Some(true));
        }
    }
}

#[test]
fn random_mapper_is_deterministic_per_seed() {
    let graph = gen::grid(&[20, 20], false);
    let run = |seed| {
        let problem = Problem::new(graph.clone(), parse_arch("torus:4x4").unwrap());
        "random"
            .parse::<AlgorithmSpec>()
            .unwrap()
            .map(&problem, &mut RunContext::new(seed))
            .unwrap()
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7), run(8));
}

#[test]
fn torus_never_costs_more_than_mesh() {
    // Scoring one mapping on another target: torus distances never exceed mesh distances.
    let graph = gen::grid(&[16, 16], false);
    let torus = parse_arch("torus:4x4").unwrap();
    let mesh = parse_arch("mesh:4x4").unwrap();
    let problem = Problem::new(graph.clone(), parse_arch("torus:4x4").unwrap());
    let m = "random"
        .parse::<AlgorithmSpec>()
        .unwrap()
        .map(&problem, &mut RunContext::new(1))
        .unwrap();
    let et = evaluate(&graph, torus.as_ref(), &m, &EvalOptions::default()).unwrap();
    let em = evaluate(&graph, mesh.as_ref(), &m, &EvalOptions::default()).unwrap();
    assert!(et.comm_cost <= em.comm_cost);
    assert!(
        et.comm_cost < em.comm_cost,
        "a random mapping uses wrap-around links"
    );
    assert_eq!(et.edge_cut, em.edge_cut);
}

#[test]
fn block_mapping_of_grid_on_matching_mesh_is_perfect() {
    // 16 tasks in a 4x4 grid on a 4x4 mesh with the same numbering: identity, dilation 1.
    let graph = gen::grid(&[4, 4], false);
    let problem = Problem::new(graph, parse_arch("mesh:4x4").unwrap());
    let m = "block"
        .parse::<AlgorithmSpec>()
        .unwrap()
        .map(&problem, &mut RunContext::new(0))
        .unwrap();
    assert_eq!(m.as_slice(), &(0..16).map(PeId).collect::<Vec<_>>()[..]);
    let e = evaluate(
        &problem.graph,
        problem.arch.as_ref(),
        &m,
        &EvalOptions::default(),
    )
    .unwrap();
    assert_eq!(e.comm_cost, 24);
    assert_eq!(e.dilation_max, 1);
    assert_eq!(e.neighbours_max, 4);
    assert_eq!(e.neighbours_min, 2);
}

#[test]
fn capacities_and_epsilon_are_checked() {
    let graph = gen::ring(10);
    let arch = parse_arch("complete:2").unwrap();
    let m = Mapping::new((0..10).map(|t| PeId(u32::from(t >= 7))).collect());
    let opts = EvalOptions {
        epsilon: Some(0.2),
        capacities: Some(taskmap::Capacities::uniform(2, &[7])),
    };
    let e = evaluate(&graph, arch.as_ref(), &m, &opts).unwrap();
    // Loads 7 and 3: share 5, bound floor(1.2 * 5) = 6 -> unbalanced; capacity 7 holds.
    assert_eq!(e.balanced, Some(false));
    assert_eq!(e.capacities_respected, Some(true));
    assert!(!e.feasible());
    assert!((e.loads[0].imbalance - 0.4).abs() < 1e-9);
    let opts = EvalOptions {
        epsilon: None,
        capacities: Some(taskmap::Capacities::uniform(2, &[6])),
    };
    let e = evaluate(&graph, arch.as_ref(), &m, &opts).unwrap();
    assert_eq!(e.capacities_respected, Some(false));
    assert_eq!(e.loads[0].max_capacity_excess, Some(1));
}

#[test]
fn mapping_mismatch_is_an_error() {
    let graph = gen::ring(5);
    let arch = parse_arch("complete:2").unwrap();
    let short = Mapping::new(vec![PeId(0); 4]);
    assert!(evaluate(&graph, arch.as_ref(), &short, &EvalOptions::default()).is_err());
    let out = Mapping::new(vec![PeId(2); 5]);
    let err = evaluate(&graph, arch.as_ref(), &out, &EvalOptions::default()).unwrap_err();
    assert!(err.to_string().contains("PE 2"), "{}", err);
}

/// The balance rule of KaHIP, METIS and Mt-KaHyPar, `load(p) ≤ ⌊(1+ε)·⌈share(p)⌉⌋`: with
/// unit weights and as many tasks as PEs, a PE holding two tasks breaks it, and the
/// evaluation counts the PEs above their rounded-up share while others are empty.
#[test]
fn balance_rule_rounds_the_share_up_then_the_bound_down() {
    let graph = gen::ring(64);
    let arch = parse_arch("torus:8x8").unwrap();
    let eps = EvalOptions {
        epsilon: Some(0.03),
        capacities: None,
    };
    let one_each = Mapping::new((0..64).map(PeId).collect());
    let e = evaluate(&graph, arch.as_ref(), &one_each, &eps).unwrap();
    assert_eq!((e.balanced, e.loads[0].crowded_pes), (Some(true), 0));
    // Two tasks on each of PEs 0..32, none on 32..64: ⌈(1.03)·1⌉ = 2 allowed it before.
    let pairs = Mapping::new((0..64).map(|t| PeId(t / 2)).collect());
    let e = evaluate(&graph, arch.as_ref(), &pairs, &eps).unwrap();
    assert_eq!(e.balanced, Some(false));
    assert_eq!(e.loads[0].overloaded_pes, Some(32));
    assert_eq!(e.loads[0].crowded_pes, 32);
    // With ε = 1, two tasks per PE are allowed, but the report still counts the crowding.
    let loose = EvalOptions {
        epsilon: Some(1.0),
        capacities: None,
    };
    let e = evaluate(&graph, arch.as_ref(), &pairs, &loose).unwrap();
    assert_eq!((e.balanced, e.loads[0].crowded_pes), (Some(true), 32));
    assert!(taskmap::report::render_evaluation(&e)
        .contains("32 PEs above their rounded-up share while 32 PEs are empty"));
    // 65 tasks: ⌈65/64⌉ = 2 per PE is within the bound, and no PE is empty here.
    let graph = gen::ring(65);
    let m = Mapping::new((0..65).map(|t| PeId(t % 64)).collect());
    let e = evaluate(&graph, arch.as_ref(), &m, &eps).unwrap();
    assert_eq!((e.balanced, e.loads[0].crowded_pes), (Some(true), 0));
}

/// Every static mapper that balances uses all 64 PEs for 64 unit tasks on 64 PEs.
#[test]
fn as_many_tasks_as_pes_use_every_pe() {
    let graph = gen::grid(&[8, 8], false);
    for alg in [
        "drb",
        "multilevel",
        "multilevel,preset=fast",
        "gtwp",
        "block",
    ] {
        let problem = Problem::new(graph.clone(), parse_arch("torus:8x8").unwrap());
        let spec: AlgorithmSpec = alg.parse().unwrap();
        let m = spec.map(&problem, &mut RunContext::new(0)).unwrap();
        let e = evaluate(
            &graph,
            problem.arch.as_ref(),
            &m,
            &EvalOptions {
                epsilon: Some(problem.epsilon),
                capacities: None,
            },
        )
        .unwrap();
        assert_eq!((e.pes_used, e.balanced), (64, Some(true)), "{alg}");
    }
}

/// The traffic of every ordered pair of distinct PEs: each task edge `{u, v}` of weight
/// `w` sends `w` each way.
fn directed_traffic(g: &taskmap_graph::TaskGraph, m: &[PeId]) -> Vec<(u32, u32, f64)> {
    let mut out = Vec::new();
    for (u, v, w) in g.edges() {
        let (p, q) = (m[u as usize].0, m[v as usize].0);
        if p != q {
            out.push((p, q, w as f64));
            out.push((q, p, w as f64));
        }
    }
    out
}

/// All shortest paths from `a` to `b` of a METIS target graph given as neighbour lists
/// (`(v, w)`), enumerated by depth-first search: each a list of links `(x, y)`.
fn all_shortest_paths(adj: &[Vec<(u32, u64)>], a: u32, b: u32) -> Vec<Vec<(u32, u32)>> {
    let n = adj.len();
    let mut dist = vec![u64::MAX; n];
    dist[b as usize] = 0;
    // Bellman-Ford from b (tiny graphs).
    for _ in 0..n {
        for x in 0..n {
            for &(y, w) in &adj[x] {
                if dist[y as usize] != u64::MAX {
                    dist[x] = dist[x].min(dist[y as usize] + w);
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut path = Vec::new();
    fn walk(
        adj: &[Vec<(u32, u64)>],
        dist: &[u64],
        x: u32,
        b: u32,
        path: &mut Vec<(u32, u32)>,
        out: &mut Vec<Vec<(u32, u32)>>,
    ) {
        if x == b {
            out.push(path.clone());
            return;
        }
        for &(y, w) in &adj[x as usize] {
            if dist[y as usize] != u64::MAX && dist[y as usize] + w == dist[x as usize] {
                path.push((x, y));
                walk(adj, dist, y, b, path, out);
                path.pop();
            }
        }
    }
    walk(adj, &dist, a, b, &mut path, &mut out);
    out
}

/// Link loads against a naive recomputation, for every kind of route: dimension order
/// (each pair routed alone), trees and a subset of a tree (a link's load is the traffic
/// whose source is below it and destination not, or the reverse), complete targets (the
/// pair's own link), and a target graph with many equal shortest paths (the traffic split
/// evenly over all of them, enumerated). Once with random one-way demands (so that up and
/// down links differ), once through `congestion` on random mappings.
#[test]
fn congestion_equals_a_naive_recomputation() {
    use taskmap::congestion::congestion;
    let dir = tempfile::tempdir().unwrap();
    // A 3x3 grid with one heavy edge: many equal shortest paths, one avoided link.
    let grid = dir.path().join("grid3.graph");
    std::fs::write(
        &grid,
        "9 12 001\n2 1 4 1\n1 1 3 1 5 1\n2 1 6 1\n1 1 5 1 7 1\n2 1 4 1 6 1 8 1\n3 1 5 1 9 1\n4 1 8 1\n5 1 7 1 9 5\n6 1 8 5\n",
    )
    .unwrap();
    let specs = [
        "torus:4x4".to_string(),
        "mesh:3x5".into(),
        "hypercube:3".into(),
        "torus:3x2x2".into(),
        "tree:2:3:2/1:10:100".into(),
        "sub:0-3,7,9-11:tree:2:3:2/1:10:100".into(),
        "complete:5".into(),
        format!("graph:{}", grid.display()),
    ];
    for spec in &specs {
        let arch = parse_arch(spec).unwrap();
        let k = arch.pe_count();
        let routes = arch.traffic_routes().unwrap();
        for seed in 0..6u64 {
            let hash = |x: u64| (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33) as u32;
            // One-way demands, grouped by source as `spread` takes them.
            let mut traffic: Vec<(u32, u32, f64)> = (0..30u64)
                .map(|i| {
                    let p = hash(seed * 1000 + 2 * i) % k;
                    let q = (p + 1 + hash(seed * 1000 + 2 * i + 1) % (k - 1)) % k;
                    (p, q, f64::from(1 + hash(i + seed) % 50))
                })
                .collect();
            traffic.sort_by_key(|a| (a.0, a.1));
            let mut got = vec![0f64; routes.link_count() as usize];
            for group in traffic.chunk_by(|a, b| a.0 == b.0) {
                let demands: Vec<(PeId, f64)> = group.iter().map(|t| (PeId(t.1), t.2)).collect();
                routes.spread(PeId(group[0].0), &demands, &mut got);
            }
            let want = naive_loads(spec, arch.as_ref(), &grid, &traffic);
            assert_loads(spec, seed, &got, &want, routes.as_ref());
            // Through `congestion`, on a random mapping of a random graph.
            let g = gen::random_graph(40, 3.0, seed);
            let m: Vec<PeId> = (0..40u64).map(|t| PeId(hash(t + 100 * seed) % k)).collect();
            let c = congestion(&g, arch.as_ref(), &Mapping::new(m.clone())).unwrap();
            let want = naive_loads(spec, arch.as_ref(), &grid, &directed_traffic(&g, &m));
            let mut dense = vec![0f64; want.len()];
            for &(l, load) in &c.loads {
                dense[l as usize] = load;
            }
            assert_loads(spec, seed, &dense, &want, routes.as_ref());
            assert_eq!(c.links_used as usize, c.loads.len());
            assert!(c.loads.windows(2).all(|w| w[0].0 < w[1].0));
            // Routes that cross `distance` links carry 2 f_C in all.
            if arch.routing().is_some() {
                let fc = naive_comm_cost(&g, arch.as_ref(), &m).0 as f64;
                let total: f64 = c.loads.iter().map(|l| l.1).sum();
                assert_eq!(total, 2.0 * fc, "{spec}");
            }
            let max = want.iter().copied().fold(0.0, f64::max);
            assert!((c.max_load - max).abs() <= 1e-9 * max.max(1.0));
            let mean = want.iter().sum::<f64>() / c.links as f64;
            assert!((c.mean_load - mean).abs() <= 1e-9 * mean.max(1.0));
            // Directed links that exist: a 3x5 mesh has 2 (2·5 + 3·4); a torus 3x2x2 has
            // 2 links each way in every dimension of every PE; complete:5 has 5·4.
            let expected_links = match spec.as_str() {
                "mesh:3x5" => Some(44),
                "complete:5" => Some(20),
                "tree:2:3:2/1:10:100" => Some(2 * (12 + 6 + 2)),
                "hypercube:3" => Some(8 * 3),
                // The inner PEs 0-3, 7, 9-11: 8 below, 5 pairs, 2 halves.
                "sub:0-3,7,9-11:tree:2:3:2/1:10:100" => Some(2 * (8 + 5 + 2)),
                _ => None,
            };
            if let Some(l) = expected_links {
                assert_eq!(c.links, l, "{spec}");
            }
            assert!(c.busiest.windows(2).all(|w| w[0].load >= w[1].load));
            assert_eq!(
                c.busiest.first().map(|b| b.load),
                (max > 0.0).then_some(c.max_load)
            );
        }
    }
    // A distance matrix has no links.
    let m = parse_arch(&format!("matrix:{}", fixture_arch("small.mat"))).unwrap();
    let g = gen::ring(4);
    assert!(congestion(
        &g,
        m.as_ref(),
        &Mapping::new((0..4).map(|t| PeId(t % m.pe_count())).collect())
    )
    .is_none());
}

fn assert_loads(
    spec: &str,
    seed: u64,
    got: &[f64],
    want: &[f64],
    routes: &dyn taskmap_arch::TrafficRoutes,
) {
    assert_eq!(got.len(), want.len());
    for l in 0..got.len() {
        assert!(
            (got[l] - want[l]).abs() <= 1e-9 * want[l].max(1.0),
            "{spec} seed {seed} link {l} ({}): {} != {}",
            routes.link_name(l as u64),
            got[l],
            want[l]
        );
    }
}

/// The loads of `traffic` (`(from, to, w)`) recomputed without the routes' code.
fn naive_loads(
    spec: &str,
    arch: &dyn taskmap_arch::Architecture,
    grid: &std::path::Path,
    traffic: &[(u32, u32, f64)],
) -> Vec<f64> {
    let routes = arch.traffic_routes().unwrap();
    let links = routes.link_count();
    let k = arch.pe_count();
    let mut want = vec![0f64; links as usize];
    if let Some(r) = arch.routing() {
        for &(p, q, w) in traffic {
            let mut route = Vec::new();
            r.route(PeId(p), PeId(q), &mut route);
            for l in route {
                want[l as usize] += w;
            }
        }
    } else if spec.contains("tree") {
        // Subset: the inner PEs of the list.
        let inner: Vec<u32> = if spec.starts_with("sub") {
            vec![0, 1, 2, 3, 7, 9, 10, 11]
        } else {
            (0..k).collect()
        };
        let block = [1u32, 2, 6, 12];
        for l in 0..links {
            // Subsets name their PEs by subset id, and a PE position they leave empty
            // "(inner N)": nothing lies below its links.
            let name = routes.link_name(l);
            if name.contains("(inner") {
                continue;
            }
            let words: Vec<&str> = name.split_whitespace().collect();
            let (level, node, up) = match words.as_slice() {
                ["PE", j, d] => (0usize, j.parse::<u32>().unwrap(), *d == "up"),
                [lv, "group", j, d] => (
                    lv.trim_start_matches("level-").parse().unwrap(),
                    j.parse().unwrap(),
                    *d == "up",
                ),
                _ => panic!("{name}"),
            };
            let below = |p: u32| match level {
                0 => p == node,
                _ => inner[p as usize] / block[level] == node,
            };
            want[l as usize] = traffic
                .iter()
                .filter(|&&(p, q, _)| {
                    if up {
                        below(p) && !below(q)
                    } else {
                        below(q) && !below(p)
                    }
                })
                .map(|t| t.2)
                .sum();
        }
    } else if spec.starts_with("complete") {
        for &(p, q, w) in traffic {
            want[(p * k + q) as usize] += w;
        }
    } else {
        let t = taskmap_graph::read_graph(grid, None).unwrap();
        let adj: Vec<Vec<(u32, u64)>> = (0..9u32)
            .map(|u| {
                t.neighbors(u)
                    .iter()
                    .copied()
                    .zip(t.edge_weights(u).iter().copied())
                    .collect()
            })
            .collect();
        let id = |x: u32, y: u32| {
            (0..links)
                .find(|&l| routes.link_name(l) == format!("{x}->{y}"))
                .unwrap()
        };
        for &(p, q, w) in traffic {
            let paths = all_shortest_paths(&adj, p, q);
            for path in &paths {
                for &(x, y) in path {
                    want[id(x, y) as usize] += w / paths.len() as f64;
                }
            }
        }
    }
    want
}

fn fixture_arch(name: &str) -> String {
    format!("{}/../../fixtures/arch/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Scotch's PartDiam, against the values `gmtst` (Scotch 7.0.3) printed for three mappings
/// of `delaunay_n10` (task ids 0-based) onto `cmplt 16`, and against hand-counted cases.
#[test]
fn part_diameters_match_gmtst() {
    let path = format!(
        "{}/../../fixtures/delaunay_n10.graph",
        env!("CARGO_MANIFEST_DIR")
    );
    let graph = taskmap_graph::read_graph(std::path::Path::new(&path), None).unwrap();
    let arch = parse_arch("complete:16").unwrap();
    type Case = (fn(u32) -> u32, u64, u64, f64);
    let cases: [Case; 3] = [
        (|v| (v * 7) % 16, 63, 64, 63.9375),
        (|v| v / 64, 12, 63, 28.5),
        (|v| (v * v) % 13, 78, 156, 141.285714),
    ];
    for (i, (f, min, max, avg)) in cases.into_iter().enumerate() {
        let m = Mapping::new((0..1024).map(|v| PeId(f(v))).collect());
        let d = evaluate(&graph, arch.as_ref(), &m, &EvalOptions::default())
            .unwrap()
            .part_diameters;
        assert_eq!((d.min, d.max), (min, max), "mapping {i}");
        assert!((d.avg - avg).abs() < 1e-6, "mapping {i}: {}", d.avg);
    }
    // A path 0-1-2-3-4 on one PE scores 4 + 1; split as {0,1,3,4} / {2}, the first part
    // has two pieces of one edge each: (1 + 1) + (1 + 1).
    let mut b = taskmap_graph::GraphBuilder::new(5, 1);
    for u in 0..4 {
        b.add_edge(u, u + 1, 1);
    }
    let path5 = b.build();
    let arch = parse_arch("complete:2").unwrap();
    let one = Mapping::new(vec![PeId(0); 5]);
    let d = evaluate(&path5, arch.as_ref(), &one, &EvalOptions::default()).unwrap();
    assert_eq!((d.part_diameters.min, d.part_diameters.max), (5, 5));
    let split = Mapping::new([0, 0, 1, 0, 0].map(PeId).to_vec());
    let d = evaluate(&path5, arch.as_ref(), &split, &EvalOptions::default()).unwrap();
    assert_eq!((d.part_diameters.min, d.part_diameters.max), (1, 4));
    assert_eq!(d.part_diameters.avg, 2.5);
}

/// The evaluation on 2 and 3 threads equals the one on the calling thread: blocks of edges
/// (several of them here), parts searched at once, and the PE pairs as a bit matrix
/// (`torus:8x8`) or as a list (16,384 PEs).
#[test]
fn evaluation_is_the_same_on_any_thread_count() {
    let pools = crate::support::pools(&[2, 3]);
    let graph = gen::random_graph(60_000, 5.0, 11);
    for spec in ["torus:8x8", "tree:4:4:4/1:10:100", "hypercube:14"] {
        let arch = parse_arch(spec).unwrap();
        let k = arch.pe_count();
        // Blocks of consecutive tasks (parts with several pieces) and scattered tasks.
        let mappings = [
            Mapping::new((0..60_000u32).map(|v| PeId(v * k / 60_000)).collect()),
            Mapping::new((0..60_000u32).map(|v| PeId((v * 7919) % k)).collect()),
        ];
        for m in &mappings {
            let opts = EvalOptions {
                epsilon: Some(0.03),
                capacities: None,
            };
            let one = evaluate(&graph, arch.as_ref(), m, &opts).unwrap();
            assert!(one.cut_edges > 0 && one.part_diameters.max > 1, "{spec}");
            // The blocks' sums against a naive recomputation (and against the one-block
            // sums above, through the histogram).
            let fc = taskmap::metrics::comm_cost(&graph, arch.as_ref(), m.as_slice());
            let cut: Vec<u64> = graph
                .edges()
                .filter(|&(u, v, _)| m.pe(u) != m.pe(v))
                .map(|e| e.2)
                .collect();
            assert_eq!(one.comm_cost, fc, "{spec}");
            assert_eq!(one.edge_cut, cut.iter().sum::<u64>(), "{spec}");
            assert_eq!(one.cut_edges, cut.len() as u64, "{spec}");
            let weight: u64 = one.distance_histogram.iter().map(|b| b.weight).sum();
            assert_eq!(weight, graph.total_edge_weight(), "{spec}");
            for pool in &pools {
                let e = evaluate_on(&graph, arch.as_ref(), m, &opts, Some(pool)).unwrap();
                assert_eq!(e, one, "{spec} on {} threads", pool.current_num_threads());
            }
        }
    }
}
