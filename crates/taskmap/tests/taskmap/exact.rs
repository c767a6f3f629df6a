//! The exact branch and bound (`-A exact`) against brute force on small problems.

use proptest::prelude::*;
use taskmap::mappers::exact::ExactMapper;
use taskmap::metrics::comm_cost;
use taskmap::problem::{Capacities, FREE};
use taskmap::{AlgorithmSpec, Mapper, PeId, Problem, RunContext};
use taskmap_arch::parse_arch;
use taskmap_graph::{gen, GraphBuilder, TaskGraph};

const TARGETS: &[&str] = &[
    "complete:3",
    "mesh:2x2",
    "tree:2:2/1:10",
    "torus:2x2x2",
    "mesh:3x2",
    "wcomplete:1,2,1",
    "hypercube:3",
    "torus:3x3",
];

/// The least f_C over every mapping within the problem's load limits and pins, by
/// enumerating all k^n of them.
fn brute_force(p: &Problem) -> Option<u64> {
    let (n, k) = (p.graph.num_tasks(), p.arch.pe_count() as usize);
    let limits: Vec<Vec<u64>> = (0..p.graph.ncon()).map(|c| p.max_loads(c)).collect();
    let mut m = vec![0u32; n];
    let mut best: Option<u64> = None;
    loop {
        let pinned = (0..n).all(|t| p.fixed_pe(t as u32).is_none_or(|q| q == m[t]));
        let fits = (0..p.graph.ncon()).all(|c| {
            let mut load = vec![0u64; k];
            for (t, &q) in m.iter().enumerate() {
                load[q as usize] += p.graph.vertex_weight(t as u32, c);
            }
            load.iter().zip(&limits[c]).all(|(l, x)| l <= x)
        });
        if pinned && fits {
            let pes: Vec<PeId> = m.iter().map(|&q| PeId(q)).collect();
            let f = comm_cost(&p.graph, p.arch.as_ref(), &pes);
            best = Some(best.map_or(f, |b| b.min(f)));
        }
        let mut i = 0;
        while i < n && m[i] as usize == k - 1 {
            m[i] = 0;
            i += 1;
        }
        if i == n {
            return best;
        }
        m[i] += 1;
    }
}

/// A random graph; when `weighted`, with heavier edges and vertex weights 1..=3 on some
/// tasks, and a second vertex weight (`3 - u % 3`).
fn graph(n: u32, seed: u64, weighted: bool) -> TaskGraph {
    let g = gen::random_graph(n, 3.0, seed);
    if !weighted {
        return g;
    }
    let mut b = GraphBuilder::new(n as usize, 2);
    for (u, v, w) in g.edges() {
        b.add_edge(u, v, w + (u as u64 % 3));
    }
    for u in 0..n {
        b.set_vertex_weights(
            u,
            &[
                1 + u64::from(u % 2) * u64::from(u % 3),
                3 - u64::from(u % 3),
            ],
        );
    }
    b.build()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn exact_equals_brute_force(
        n in 2u32..8,
        seed in 0u64..1000,
        target in 0usize..TARGETS.len(),
        weighted in any::<bool>(),
        eps in prop::sample::select(vec![0.0, 0.03, 0.5]),
        caps in any::<bool>(),
        pin in any::<bool>(),
        warm in any::<bool>(),
    ) {
        let arch = parse_arch(TARGETS[target]).unwrap();
        let k = arch.pe_count();
        // Keep k^n small.
        let n = if k > 6 { n.min(5) } else { n };
        let g = graph(n, seed, weighted);
        let mut p = Problem::new(g, arch);
        p.epsilon = eps;
        if caps {
            let per: Vec<u64> = (0..p.graph.ncon())
                .map(|c| p.graph.total_vertex_weight(c).div_ceil(u64::from(k)) + 1)
                .collect();
            p.capacities = Some(Capacities::uniform(k, &per));
        }
        if pin {
            let mut f = vec![FREE; n as usize];
            f[0] = (seed % u64::from(k)) as u32;
            p.fixed = Some(f);
        }
        let want = brute_force(&p);
        let mut ctx = RunContext::new(seed);
        let exact = ExactMapper { warm_start: warm, ..ExactMapper::default() };
        let got = exact.map(&p, &mut ctx);
        // Stopped early, the bound is still at most the optimum.
        let mut early = RunContext::new(seed);
        if let (Ok(m), Some(best)) = (
            ExactMapper { nodes: 3, warm_start: warm }.map(&p, &mut early),
            want,
        ) {
            let o = early.optimality.unwrap();
            prop_assert!(o.lower_bound <= best && best <= o.comm_cost, "{:?} vs {}", o, best);
            prop_assert_eq!(comm_cost(&p.graph, p.arch.as_ref(), m.as_slice()), o.comm_cost);
        }
        match want {
            None => prop_assert!(got.is_err()),
            Some(best) => {
                let m = got.unwrap();
                prop_assert_eq!(comm_cost(&p.graph, p.arch.as_ref(), m.as_slice()), best);
                let o = ctx.optimality.unwrap();
                prop_assert!(o.optimal);
                prop_assert_eq!((o.comm_cost, o.lower_bound), (best, best));
                // The mapping keeps the limits and pins.
                for c in 0..p.graph.ncon() {
                    let mut load = vec![0u64; k as usize];
                    for (t, q) in m.as_slice().iter().enumerate() {
                        load[q.idx()] += p.graph.vertex_weight(t as u32, c);
                        if let Some(f) = p.fixed_pe(t as u32) {
                            prop_assert_eq!(f, q.0);
                        }
                    }
                    for (l, x) in load.iter().zip(p.max_loads(c)) {
                        prop_assert!(*l <= x);
                    }
                }
                // No other mapper beats it.
                if !pin {
                    for alg in ["multilevel", "drb", "gtwp", "pnp", "block"] {
                        let spec: AlgorithmSpec = alg.parse().unwrap();
                        if let Ok(m) = spec.mapper().map(&p, &mut RunContext::new(seed)) {
                            let f = comm_cost(&p.graph, p.arch.as_ref(), m.as_slice());
                            let fits = (0..p.graph.ncon()).all(|c| {
                                let mut load = vec![0u64; k as usize];
                                for (t, q) in m.as_slice().iter().enumerate() {
                                    load[q.idx()] += p.graph.vertex_weight(t as u32, c);
                                }
                                load.iter().zip(p.max_loads(c)).all(|(a, b)| *a <= b)
                            });
                            if fits {
                                prop_assert!(f >= best, "{} found {} < {}", alg, f, best);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A node limit stops the search with a valid bound: at most the optimum, which is at
/// most the f_C returned.
#[test]
fn node_limit_gives_a_bound() {
    let p = Problem::new(
        gen::random_graph(14, 4.0, 7),
        parse_arch("mesh:2x4").unwrap(),
    );
    let full = {
        let mut ctx = RunContext::new(0);
        ExactMapper::default().map(&p, &mut ctx).unwrap();
        ctx.optimality.unwrap()
    };
    assert!(full.optimal);
    let mut ctx = RunContext::new(0);
    let m = ExactMapper {
        nodes: 50,
        warm_start: false,
    }
    .map(&p, &mut ctx)
    .unwrap();
    let o = ctx.optimality.unwrap();
    assert!(!o.optimal);
    assert!(o.lower_bound <= full.comm_cost, "{o:?} vs {full:?}");
    assert!(full.comm_cost <= o.comm_cost);
    assert_eq!(
        comm_cost(&p.graph, p.arch.as_ref(), m.as_slice()),
        o.comm_cost
    );
    assert_eq!(o.nodes, 50);
    // Too large a problem is refused.
    let big = Problem::new(
        gen::random_graph(65, 4.0, 1),
        parse_arch("complete:4").unwrap(),
    );
    let e = ExactMapper::default()
        .map(&big, &mut RunContext::new(0))
        .unwrap_err();
    assert!(e.to_string().contains("at most 64 tasks"), "{e}");
}
