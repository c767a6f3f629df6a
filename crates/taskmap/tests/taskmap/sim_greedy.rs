//! The greedy mapper of De Petris & Perego: its incremental F against a recomputation, the
//! paper's Table II (§6.2) against the ideal machine, feasibility (memory bound, hard
//! capacities), and the registered mapper. The figures of `docs/simulation.md` come from
//! the example `greedy_perego_tables` (`cargo run --release -p taskmap --example
//! greedy_perego_tables -- butterfly|table2|scaling`).

use std::str::FromStr;

use crate::greedy_outcome::{outcome, run};

use rand::{Rng, SeedableRng};
use taskmap::perego::f::IncrementalF;
use taskmap::perego::gen::{generate_program, mesh2d, random, ring, GenParams};
use taskmap::perego::greedy::{greedy_map_program, GreedyPerego};
use taskmap::perego::spm::{SpmModel, SpmParams};
use taskmap::perego::wormhole::{simulate, WormholeParams};
use taskmap::{parse_arch, AlgorithmSpec, Capacities, Mapper, Mapping, PeId, Problem, RunContext};

/// The rows of Table II that the paper maps optimally, at the paper's largest sizes.
const OPTIMAL: &[(&str, &str)] = &[
    ("ring:64", "hypercube:6"),
    ("ring:64", "torus:8x8"),
    ("ring:64", "mesh:8x8"),
    ("ring:512", "hypercube:9"),
    ("ring:512", "torus:8x8x8"),
    ("ring:512", "mesh:16x32"),
    ("ring:512", "mesh:8x8x8"),
    ("mesh:8x8", "hypercube:6"),
    ("mesh:16x16", "hypercube:8"),
    ("mesh:8x8", "mesh:8x8"),
    ("mesh:28x28", "mesh:28x28"),
    ("butterfly:6", "hypercube:6"),
    ("butterfly:9", "hypercube:9"),
];

#[test]
fn table2_optimal_rows_reach_the_ideal_machine() {
    let params = GreedyPerego::default();
    for &(g, a) in OPTIMAL {
        let o = run(g, a, &params);
        assert!(o.one_per_pe, "{g} on {a}: two tasks on a PE");
        assert_eq!(o.max_dilation, 1, "{g} on {a}");
        assert_eq!(o.sim, o.ideal, "{g} on {a}");
    }
}

/// The paper's rules alone (no end-game search): optimal on part of Table II, close on
/// the rest (measured values, see docs/simulation.md).
#[test]
fn table2_with_the_paper_rules_only() {
    let params = GreedyPerego::paper();
    let within = |g: &str, a: &str, slack: f64| {
        let o = run(g, a, &params);
        let bound = (o.ideal as f64 * (1.0 + slack)).floor() as u64;
        assert!(o.sim <= bound, "{g} on {a}: {} vs ideal {}", o.sim, o.ideal);
    };
    for (g, a) in [
        ("ring:64", "hypercube:6"),
        ("ring:64", "torus:8x8"),
        ("mesh:8x8", "hypercube:6"),
        ("mesh:8x8", "mesh:8x8"),
        ("mesh:28x28", "mesh:28x28"),
        ("butterfly:9", "hypercube:9"),
    ] {
        within(g, a, 0.0);
    }
    // Measured +0.3 %, +0.2 %, +0.2 %, +0.1 %, +11.7 %.
    within("ring:64", "mesh:8x8", 0.004);
    within("ring:512", "hypercube:9", 0.003);
    within("ring:512", "torus:8x8x8", 0.003);
    within("ring:512", "mesh:16x32", 0.002);
    within("mesh:16x16", "hypercube:8", 0.12);
}

/// Butterflies and reduce trees on meshes, which no mapping embeds with dilation 1:
/// regression bounds on the measured distance to the ideal machine.
#[test]
fn table2_suboptimal_rows() {
    let params = GreedyPerego::default();
    for (g, a, slack) in [
        ("butterfly:4", "mesh:4x4", 0.022),
        ("butterfly:6", "mesh:8x8", 0.09),
        ("tree:15", "mesh:4x4", 0.065),
        ("tree:31", "mesh:4x8", 0.032),
    ] {
        let o = run(g, a, &params);
        let bound = (o.ideal as f64 * (1.0 + slack)).floor() as u64;
        assert!(o.one_per_pe);
        assert!(o.sim <= bound, "{g} on {a}: {} vs ideal {}", o.sim, o.ideal);
    }
}

/// Butterflies on meshes at the paper's sizes 16, 64 and 256 (4 is the ideal machine,
/// above): within 0.5 % of the best mapping found by the example `greedy_perego_tables
/// -- butterfly` (the paper: at most 1.8 %, mean 0.5 %, above the optimal mappings).
/// Before the multilevel start of the simulated pass they were +0.71 %, +1.61 % and
/// +7.91 % above the best found then (4090, 6479, 9356).
#[test]
fn butterflies_within_the_papers_error_of_best_found() {
    let params = GreedyPerego::default();
    for (g, a, best) in [
        ("butterfly:4", "mesh:4x4", 4090u64),
        ("butterfly:6", "mesh:8x8", 6479),
        ("butterfly:8", "mesh:16x16", 9243),
    ] {
        let o = run(g, a, &params);
        assert!(o.one_per_pe);
        assert!(
            o.sim as f64 <= best as f64 * 1.005,
            "{g} on {a}: {} vs best found {best}",
            o.sim
        );
    }
}

/// Assigns `t` to `p` in `inc` and `pes`, then checks F and F_sum (and, with `per_pe`,
/// every `R`) against a recomputation by `evaluate_partial`.
fn assign_checked(
    inc: &mut IncrementalF,
    model: &SpmModel,
    arch: &dyn taskmap::Architecture,
    pes: &mut [u32],
    t: u32,
    p: u32,
    per_pe: bool,
) {
    inc.assign(t, p);
    pes[t as usize] = p;
    let e = model.evaluate_partial(arch, pes);
    let v = inc.value();
    assert!(close(v.f, e.f), "task {t}: F {} vs {}", v.f, e.f);
    assert!(
        close(v.f_sum, e.f_sum),
        "task {t}: F_sum {} vs {}",
        v.f_sum,
        e.f_sum
    );
    if per_pe {
        for (a, b) in inc.per_pe().iter().zip(&e.per_pe) {
            assert!(close(*a, *b), "task {t}: R {} vs {}", a, b);
        }
    }
}

/// Relative equality for F values.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Checks that `inc.trial(t, p)` gives the F and F_sum of `evaluate_partial` on `pes`
/// with `t` on `p` (`pes[t]` is unmapped before and after).
fn check_trial(
    inc: &mut IncrementalF<'_>,
    model: &SpmModel,
    arch: &dyn taskmap::Architecture,
    pes: &mut [u32],
    t: u32,
    p: u32,
) {
    let v = inc.trial(t, p);
    pes[t as usize] = p;
    let e = model.evaluate_partial(arch, pes);
    pes[t as usize] = u32::MAX;
    assert!(
        close(v.f, e.f),
        "task {t} on {p}: trial F {} vs {}",
        v.f,
        e.f
    );
    assert!(
        close(v.f_sum, e.f_sum),
        "task {t} on {p}: trial F_sum {} vs {}",
        v.f_sum,
        e.f_sum
    );
}

/// The incremental F equals `evaluate_partial` recomputed from scratch: after every
/// assignment (F, F_sum and R per PE) and for trial assignments, on random programs and
/// random partial mappings (one-to-one and many-to-one), with classes enumerated and
/// bounded.
#[test]
fn incremental_f_equals_recomputation() {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
    let cases: &[(&str, u32, &str, bool)] = &[
        ("random", 30, "mesh:6x6", false),
        ("random", 40, "torus:4x4", true),
        ("random", 32, "hypercube:5", false),
        ("mesh", 16, "mesh:4x4", false),
        ("graph", 36, "mesh:3x3x2", true),
    ];
    let mut trials = 0;
    for (ci, &(kind, n, arch, many)) in cases.iter().enumerate() {
        let arch = parse_arch(arch).unwrap();
        let gp = GenParams {
            seed: ci as u64 + 3,
            ..GenParams::default()
        };
        let model = match kind {
            "random" => SpmModel::build(&random(n, &gp), &SpmParams::default()).unwrap(),
            "mesh" => SpmModel::build(&mesh2d(4, 4, &gp), &SpmParams::default()).unwrap(),
            _ => SpmModel::from_task_graph(&random(n, &gp).to_task_graph(), &SpmParams::default()),
        };
        let k = arch.pe_count();
        for small in [0u32, 64] {
            let mut inc = IncrementalF::new(&model, arch.as_ref()).unwrap();
            inc.set_small_class(small);
            let mut order: Vec<u32> = (0..model.work.len() as u32).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, rng.gen_range(0..=i));
            }
            let mut pes = vec![u32::MAX; model.work.len()];
            for &t in &order {
                let pick = |rng: &mut rand_xoshiro::Xoshiro256PlusPlus, inc: &IncrementalF| {
                    let free: Vec<u32> = (0..k).filter(|&p| inc.tasks_on(p) == 0).collect();
                    if many || free.is_empty() {
                        rng.gen_range(0..k)
                    } else {
                        free[rng.gen_range(0..free.len())]
                    }
                };
                for _ in 0..3 {
                    let p = pick(&mut rng, &inc);
                    check_trial(&mut inc, &model, arch.as_ref(), &mut pes, t, p);
                    trials += 1;
                }
                let p = pick(&mut rng, &inc);
                assign_checked(&mut inc, &model, arch.as_ref(), &mut pes, t, p, true);
            }
            assert_eq!(inc.pes(), &pes[..]);
        }
    }
    // Three trials before every assignment, two passes (`small` 0 and 64) per case.
    assert_eq!(trials, 3 * 2 * (30 + 40 + 32 + 16 + 36), "trials");
}

/// Weights near 2^58 (a phase near 2^64 flits in all): the incremental F still equals the
/// recomputation. The products of class sizes and volumes, and of tasks per PE and the
/// flits a task receives, pass 2^64 (they used to wrap in release builds, and the bound of
/// `trial` stopped the scan of the PEs too early).
#[test]
fn incremental_f_with_huge_weights() {
    let n = 40u32;
    // A star (hub 0, 2^58 per edge: the hub receives 39·2^57 flits) and a ring of the
    // leaves (near 2^50).
    let mut b = taskmap_graph::GraphBuilder::new(n as usize, 1);
    for t in 1..n {
        b.add_edge(0, t, 1 << 58);
        b.add_edge(t, 1 + t % (n - 1), (1 << 50) + u64::from(t));
        b.set_vertex_weight(t, 0, (1 << 40) + u64::from(t));
    }
    let model = SpmModel::from_task_graph(&b.build(), &SpmParams::default());
    let total: u128 = model.phase_entries.iter().map(|e| u128::from(e.1)).sum();
    assert!(total < 1 << 64 && total > 1 << 63, "{total}");
    let arch = parse_arch("mesh:2x2").unwrap();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
    for small in [0u32, 64] {
        let mut inc = IncrementalF::new(&model, arch.as_ref()).unwrap();
        inc.set_small_class(small);
        let mut pes = vec![u32::MAX; n as usize];
        for t in 0..n {
            for _ in 0..3 {
                let p = rng.gen_range(0..4);
                check_trial(&mut inc, &model, arch.as_ref(), &mut pes, t, p);
            }
            let p = rng.gen_range(0..4);
            assign_checked(&mut inc, &model, arch.as_ref(), &mut pes, t, p, false);
        }
    }
}

#[test]
fn memory_bound_and_capacities_are_feasibility() {
    // 40 tasks on 16 PEs with the memory bound M = 3 tasks per PE.
    let prog = random(40, &GenParams::default());
    let arch = parse_arch("mesh:4x4").unwrap();
    let params = GreedyPerego {
        max_tasks_per_pe: 3,
        ..GreedyPerego::default()
    };
    let m = greedy_map_program(&prog, arch.as_ref(), &params).unwrap();
    let mut count = [0u32; 16];
    for p in m.as_slice() {
        count[p.idx()] += 1;
    }
    assert!(count.iter().all(|&c| c <= 3), "{count:?}");
    // M = 2 leaves room for 32 tasks only: an error, not a panic.
    let tight = GreedyPerego {
        max_tasks_per_pe: 2,
        ..GreedyPerego::default()
    };
    assert!(greedy_map_program(&prog, arch.as_ref(), &tight).is_err());
    // Hard capacities of a registered run: unit tasks, 2 per PE on a 4x4 torus.
    let g = taskmap_graph::gen::grid(&[8, 4], false);
    let mut problem = Problem::new(g, parse_arch("torus:4x4").unwrap());
    problem.capacities = Some(Capacities::uniform(16, &[2]));
    let spec = AlgorithmSpec::from_str("greedy-perego").unwrap();
    let m = spec.map(&problem, &mut RunContext::new(1)).unwrap();
    let mut count = [0u32; 16];
    for p in m.as_slice() {
        count[p.idx()] += 1;
    }
    assert!(count.iter().all(|&c| c <= 2), "{count:?}");
    problem.capacities = Some(Capacities::uniform(16, &[1]));
    assert!(spec.map(&problem, &mut RunContext::new(1)).is_err());
}

/// A target with more than 2^24 directed links is refused with an error naming it (its
/// tables would take tens of GB: the run used to abort), by the greedy mapper, by the
/// incremental F, by F and by the simulator; 2^24 itself is accepted.
#[test]
fn huge_targets_are_errors() {
    let prog = ring(2, &GenParams::default());
    let model = SpmModel::build(&prog, &SpmParams::default()).unwrap();
    let huge = parse_arch("hypercube:27").unwrap();
    let m = Mapping::new(vec![PeId(0), PeId(1)]);
    let errors = [
        greedy_map_program(&prog, huge.as_ref(), &GreedyPerego::default()).map(|_| ()),
        IncrementalF::new(&model, huge.as_ref()).map(|_| ()),
        model.evaluate(huge.as_ref(), &m).map(|_| ()),
        simulate(&prog, huge.as_ref(), &m, &WormholeParams::default()).map(|_| ()),
    ];
    for e in errors {
        let msg = e.unwrap_err().to_string();
        assert!(
            msg.contains("hypercube:27") && msg.contains("2^24"),
            "{msg}"
        );
    }
    let problem = Problem::new(prog.to_task_graph(), huge);
    let spec = AlgorithmSpec::from_str("greedy-perego").unwrap();
    let msg = spec
        .map(&problem, &mut RunContext::new(1))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("hypercube:27"), "{msg}");
    // 2^19 PEs, 19·2^19 < 2^24 links: fine.
    let big = parse_arch("hypercube:19").unwrap();
    let m = greedy_map_program(&prog, big.as_ref(), &GreedyPerego::default()).unwrap();
    assert_eq!(big.distance(m.pe(0), m.pe(1)), 1);
}

#[test]
fn registered_on_a_task_graph() {
    let prog = ring(12, &GenParams::default());
    let problem = Problem::new(prog.to_task_graph(), parse_arch("mesh:4x4").unwrap());
    let arch = parse_arch("mesh:4x4").unwrap();
    let dilation = |spec: &str| {
        let spec = AlgorithmSpec::from_str(spec).unwrap();
        assert_eq!(spec.name(), "greedy-perego");
        let m = spec.map(&problem, &mut RunContext::new(1)).unwrap();
        assert_eq!(m.len(), 12);
        (0..12u32)
            .map(|i| arch.distance(m.pe(i), m.pe((i + 1) % 12)))
            .sum::<u64>()
    };
    // The ring is closed with dilation 1 (12 tasks on a 4x4 mesh: a 3x4 cycle exists); the
    // paper's rules alone leave one edge of length 3.
    assert_eq!(dilation("greedy-perego"), 12);
    assert_eq!(dilation("greedy-perego,variant=paper"), 14);
    // Parameters reach the mapper: without the end-game search the ring stays open, and a
    // degree radius of 0 (no degree rule) leaves it longer (measured).
    assert_eq!(dilation("greedy-perego,endgame=off"), 14);
    assert_eq!(dilation("greedy-perego,variant=paper,degree_radius=0"), 16);
    assert!(AlgorithmSpec::from_str("greedy-perego,bogus=1").is_err());
    assert!(AlgorithmSpec::from_str("greedy-perego,variant=best").is_err());
    let spec = AlgorithmSpec::from_str("greedy-perego").unwrap();
    let c = parse_arch("complete:4").unwrap();
    let p2 = Problem::new(prog.to_task_graph(), c);
    assert!(spec.map(&p2, &mut RunContext::new(1)).is_err());
}

#[test]
fn beats_a_random_mapping_on_a_random_program() {
    use rand::seq::SliceRandom;
    let prog = random(
        100,
        &GenParams {
            seed: 2,
            ..GenParams::default()
        },
    );
    let arch = parse_arch("mesh:10x10").unwrap();
    let params = WormholeParams::default();
    let g = greedy_map_program(&prog, arch.as_ref(), &GreedyPerego::default()).unwrap();
    let greedy = simulate(&prog, arch.as_ref(), &g, &params)
        .unwrap()
        .completion;
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
    for _ in 0..5 {
        let mut pes: Vec<u32> = (0..100).collect();
        pes.shuffle(&mut rng);
        let m = Mapping::new(pes.into_iter().map(PeId).collect());
        let c = simulate(&prog, arch.as_ref(), &m, &params)
            .unwrap()
            .completion;
        assert!(c > greedy, "random {c} vs greedy {greedy}");
    }
}

/// The "H" mapping of the reduce tree `tree:n` (node `i` has children `2i+1`, `2i+2`) on
/// a `side`×`side` mesh (PE `x + side·y`): every node at the centre of its rectangle (the
/// free PE nearest to it), the rectangle halved for the two subtrees, across the columns
/// and the rows in turn. The reference of the paper's tree rows (§6.2, [13]: Horowitz and
/// Zorat's layout, on a mesh about twice as large as the tree).
fn h_tree_mapping(n: usize, side: u32) -> Mapping {
    fn place(
        i: usize,
        rect: [u32; 4],
        split_columns: bool,
        n: usize,
        side: u32,
        pe: &mut [u32],
        used: &mut [bool],
    ) {
        if i >= n {
            return;
        }
        let [r0, r1, c0, c1] = rect;
        let (cr, cc) = ((r0 + r1 - 1) / 2, (c0 + c1 - 1) / 2);
        let mut best: Option<(u32, u32)> = None;
        for r in r0..r1 {
            for c in c0..c1 {
                let p = r * side + c;
                let d = r.abs_diff(cr) + c.abs_diff(cc);
                if !used[p as usize] && best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, p));
                }
            }
        }
        let (_, p) = best.expect("a free PE in the rectangle");
        used[p as usize] = true;
        pe[i] = p;
        let halves = if split_columns && c1 - c0 >= 2 {
            let m = (c0 + c1) / 2;
            [[r0, r1, c0, m], [r0, r1, m, c1]]
        } else if r1 - r0 >= 2 {
            let m = (r0 + r1) / 2;
            [[r0, m, c0, c1], [m, r1, c0, c1]]
        } else {
            [rect, rect]
        };
        place(2 * i + 1, halves[0], !split_columns, n, side, pe, used);
        place(2 * i + 2, halves[1], !split_columns, n, side, pe, used);
    }
    let mut pe = vec![0u32; n];
    let mut used = vec![false; (side * side) as usize];
    place(0, [0, side, 0, side], true, n, side, &mut pe, &mut used);
    Mapping::new(pe.into_iter().map(PeId).collect())
}

/// Reduce trees (§6.2): the paper's greedy ends at most 6.8 % above contention-free "H"
/// mappings on meshes about twice as large. Ours, on the smallest mesh that holds the
/// tree, against the H mapping on the square mesh of twice that size.
#[test]
fn reduce_trees_within_the_papers_error_of_h_mappings() {
    let wp = WormholeParams::default();
    for (n, arch, h_side) in [
        (7, "mesh:2x4", 4),
        (31, "mesh:4x8", 8),
        (127, "mesh:8x16", 16),
        (511, "mesh:16x32", 32),
    ] {
        let gen = format!("tree:{n}");
        let prog = generate_program(&gen).unwrap();
        let big = parse_arch(&format!("mesh:{h_side}x{h_side}")).unwrap();
        let h = simulate(&prog, big.as_ref(), &h_tree_mapping(n, h_side), &wp).unwrap();
        // The reference is contention-free: every message as fast as its route allows.
        let measured = h.latency.mean * h.latency.count as f64;
        assert!(
            (measured - h.contention_free_latency_sum as f64).abs() < 1e-6 * measured,
            "{gen}: H mapping with contention"
        );
        let o = run(&gen, arch, &GreedyPerego::default());
        assert!(o.one_per_pe);
        assert!(
            o.sim as f64 <= 1.068 * h.completion as f64,
            "{gen} on {arch}: {} vs H {}",
            o.sim,
            h.completion
        );
    }
}

/// The simulated exchange pass never returns a mapping that simulates slower than the
/// greedy's own, and improves where F misjudges (butterflies and a mesh program squeezed
/// onto a narrower mesh; measured with the greedy start alone 4146 → 4119, 5350 → 5304,
/// 1394 → 1358; with the multilevel start too, the butterflies reach 4102 and 5273).
#[test]
fn simulated_exchange_never_worsens() {
    let off = GreedyPerego {
        sim_refine: 0,
        ..GreedyPerego::default()
    };
    let mut improved = 0;
    for (g, a) in [
        ("butterfly:4", "mesh:4x4"),
        ("butterfly:5", "mesh:4x8"),
        ("mesh:5x5", "mesh:4x7"),
        ("tree:15", "mesh:4x4"),
        ("tree:31", "torus:4x8"),
        ("random:20,seed=3", "mesh:5x5"),
        ("random:30,seed=4", "torus:6x6"),
    ] {
        let before = run(g, a, &off);
        let after = run(g, a, &GreedyPerego::default());
        assert!(after.one_per_pe, "{g} on {a}");
        assert!(
            after.sim <= before.sim,
            "{g} on {a}: {} after, {} before",
            after.sim,
            before.sim
        );
        improved += usize::from(after.sim < before.sim);
    }
    assert!(improved >= 3, "only {improved} improved");
}

/// Above the simulated pass's budget (262,144 instructions; `random:5000` has 420,000),
/// the multilevel start is kept when its F_prop is lower: never a higher F_prop than the
/// greedy's, and here a faster mapping (measured 49,523 → 40,599 cycles).
#[test]
fn large_programs_choose_the_start_by_f_prop() {
    let prog = generate_program("random:5000").unwrap();
    let arch = parse_arch("mesh:71x71").unwrap();
    let alone = GreedyPerego {
        multilevel_start: false,
        ..GreedyPerego::default()
    };
    let model = SpmModel::build(&prog, &alone.spm).unwrap();
    let f_prop = |m: &Mapping| {
        model
            .evaluate_propagated(&prog, arch.as_ref(), m)
            .unwrap()
            .expect("one task per PE")
            .f_prop
    };
    let before = greedy_map_program(&prog, arch.as_ref(), &alone).unwrap();
    let after = greedy_map_program(&prog, arch.as_ref(), &GreedyPerego::default()).unwrap();
    assert!(f_prop(&after) <= f_prop(&before));
    let (b, a) = (
        outcome(&prog, arch.as_ref(), &before),
        outcome(&prog, arch.as_ref(), &after),
    );
    assert!(a.one_per_pe);
    assert!(a.sim < b.sim, "{} after, {} before", a.sim, b.sim);
}

#[test]
fn with_several_tasks_per_pe_the_greedy_is_no_slower_than_the_multilevel_mapper() {
    let machine = WormholeParams::default();
    for (spec, target) in [
        ("mesh:16x8", "mesh:8x8"),
        ("tree:127", "mesh:8x8"),
        ("ring:64", "mesh:4x4"),
        ("random:64,seed=3", "torus:4x4"),
    ] {
        let program = generate_program(spec).unwrap();
        let arch = parse_arch(target).unwrap();
        let simulated = |m: &Mapping| {
            simulate(&program, arch.as_ref(), m, &machine)
                .unwrap()
                .completion
        };
        let greedy = greedy_map_program(&program, arch.as_ref(), &GreedyPerego::default()).unwrap();
        let problem = Problem::new(program.to_task_graph(), parse_arch(target).unwrap());
        let ml = AlgorithmSpec::from_str("multilevel")
            .unwrap()
            .mapper()
            .map(&problem, &mut RunContext::new(0))
            .unwrap();
        assert!(simulated(&greedy) <= simulated(&ml), "{spec} on {target}");
        // it keeps the faster of its own construction and the multilevel mapping.
        let alone = GreedyPerego {
            multilevel_start: false,
            ..GreedyPerego::default()
        };
        let own = greedy_map_program(&program, arch.as_ref(), &alone).unwrap();
        assert_eq!(
            simulated(&greedy),
            simulated(&own).min(simulated(&ml)),
            "{spec}"
        );
    }
}

/// `completion_lower_bound` is at most the simulated completion of every mapping: random
/// mappings of generated programs onto meshes, tori and a hypercube, with free and with
/// costly local copies and task switches.
#[test]
fn the_completion_bound_holds_for_every_mapping() {
    use taskmap::perego::wormhole::completion_lower_bound;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for (spec, target) in [
        ("random:24", "mesh:3x3"),
        ("ring:16", "torus:4x2"),
        ("mesh:4x4", "hypercube:3"),
        ("butterfly:3", "mesh:2x4"),
    ] {
        let program = generate_program(spec).unwrap();
        let arch = parse_arch(target).unwrap();
        let n = program.num_tasks();
        for params in [
            WormholeParams::default(),
            WormholeParams {
                local_cycles_per_flit: 3,
                switch_cycles: 20,
                ..Default::default()
            },
        ] {
            let bound = completion_lower_bound(&program, &params, arch.pe_count()).unwrap();
            assert!(bound > 0);
            for trial in 0..12 {
                let pes: Vec<PeId> = (0..n)
                    .map(|t| match trial {
                        0 => PeId(0),
                        1 => PeId(t as u32 % arch.pe_count()),
                        _ => PeId(rng.gen_range(0..arch.pe_count())),
                    })
                    .collect();
                let r = simulate(&program, arch.as_ref(), &Mapping::new(pes), &params).unwrap();
                assert!(
                    r.completion >= bound,
                    "{spec} on {target}, trial {trial}: {} < {bound}",
                    r.completion
                );
            }
        }
    }
}
