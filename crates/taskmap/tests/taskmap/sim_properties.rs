//! Properties of the simulator and of F on random programs and mappings: no run beats the
//! ideal machine with one task per PE, no message beats its contention-free latency, and
//! F's distance and contention terms equal a naive recomputation (pairwise route
//! intersections, classes by graph search). PE busy times equal the sum of the instruction
//! costs computed from the program directly.

use crate::common;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use taskmap::perego::gen::{random, GenParams};
use taskmap::perego::program::{Op, Program};
use taskmap::perego::spm::{SpmModel, SpmParams};
use taskmap::perego::wormhole::{simulate, simulate_ideal, WormholeParams};
use taskmap::{parse_arch, Architecture, Mapping, PeId};

fn one_to_one(n: usize, k: u32, rng: &mut Xoshiro256PlusPlus) -> Mapping {
    let mut pes: Vec<u32> = (0..k).collect();
    pes.shuffle(rng);
    Mapping::new(pes[..n].iter().map(|&p| PeId(p)).collect())
}

/// Busy cycles of task `t` counted from its instructions: `INT_OP` cycles, plus the send
/// overhead per `SEND` and the receive overhead per `RECEIVE`.
fn task_work(prog: &Program, t: u32, params: &WormholeParams) -> u64 {
    prog.task_ops(t)
        .iter()
        .map(|op| match *op {
            Op::Compute(c) => u64::from(c),
            Op::Send { .. } => params.send_overhead,
            Op::Recv { .. } => params.recv_overhead,
        })
        .sum()
}

#[test]
fn never_faster_than_the_ideal_machine() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    for (seed, arch) in [
        (1u64, "mesh:6x6"),
        (2, "torus:6x6"),
        (3, "hypercube:5"),
        (4, "torus:4x4x2"),
    ] {
        let arch = parse_arch(arch).unwrap();
        let n = 30.min(arch.pe_count() as usize);
        let prog = random(
            n as u32,
            &GenParams {
                seed,
                flits: 16,
                ..GenParams::default()
            },
        );
        for tc in [1u64, 3] {
            // Distinct overheads, so that a SEND counted as a RECEIVE shows.
            let params = WormholeParams {
                flit_cycles: tc,
                send_overhead: 7,
                recv_overhead: 13,
                ..WormholeParams::default()
            };
            let ideal = simulate_ideal(&prog, &params).unwrap();
            let m = one_to_one(n, arch.pe_count(), &mut rng);
            let r = simulate(&prog, arch.as_ref(), &m, &params).unwrap();
            assert!(r.completion >= ideal.completion, "{}", arch.spec());
            let total = r.latency.mean * r.latency.count as f64;
            assert!(total + 1e-6 >= r.contention_free_latency_sum as f64);
            assert!(r.latency.min >= tc * 8, "shortest message is 8 flits");
            // One task per PE: a PE's busy time is its task's work (no switches), and
            // the PEs without a task are never busy.
            let mut expected = vec![0u64; arch.pe_count() as usize];
            for t in 0..n as u32 {
                expected[m.pe(t).0 as usize] = task_work(&prog, t, &params);
            }
            assert!(expected.iter().any(|&w| w > 0));
            assert_eq!(r.pe_busy, expected, "{}", arch.spec());
            let ideal_expected: Vec<u64> = (0..n as u32)
                .map(|t| task_work(&prog, t, &params))
                .collect();
            assert_eq!(ideal.pe_busy, ideal_expected);
            for rep in [&r, &ideal] {
                for &b in &rep.pe_busy {
                    assert!(
                        b <= rep.completion,
                        "busy {b} > completion {}",
                        rep.completion
                    );
                }
            }
        }
    }
}

/// Naive distance and contention terms of F.
fn naive_terms(model: &SpmModel, arch: &dyn Architecture, m: &Mapping) -> (f64, f64) {
    let tc = model.params().machine.flit_cycles as f64;
    let mut distance = 0.0;
    for c in &model.channels {
        let (a, b) = (m.pe(c.src), m.pe(c.dst));
        if a != b {
            distance += c.messages as f64 * tc * (arch.distance(a, b) as f64 - 1.0);
        }
    }
    let mut contention = 0.0;
    for h in 0..model.num_phases() {
        let entries: Vec<(u32, u64)> = model.phase_entries
            [model.phase_start[h] as usize..model.phase_start[h + 1] as usize]
            .iter()
            .copied()
            .filter(|&(c, _)| {
                let ch = model.channels[c as usize];
                m.pe(ch.src) != m.pe(ch.dst)
            })
            .collect();
        let routes = common::entry_routes(arch, model, m, &entries);
        let class = common::route_classes(&routes);
        for e in 0..entries.len() {
            let members: Vec<usize> = (0..entries.len())
                .filter(|&x| class[x] == class[e])
                .collect();
            let others: u64 = members
                .iter()
                .filter(|&&x| x != e)
                .map(|&x| entries[x].1)
                .sum();
            contention += tc * others as f64 / (2.0 * members.len() as f64);
        }
    }
    (distance, contention)
}

#[test]
fn f_terms_equal_a_naive_recomputation() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
    let mut nonzero = 0;
    for (seed, arch, phi) in [
        (1u64, "mesh:5x5", 0.5),
        (2, "torus:5x5", 0.0),
        (3, "hypercube:5", 0.9),
        (4, "mesh:4x4x2", 0.5),
    ] {
        let arch = parse_arch(arch).unwrap();
        let n = 25.min(arch.pe_count() as usize);
        let prog = random(
            n as u32,
            &GenParams {
                seed,
                rounds: 3,
                ..GenParams::default()
            },
        );
        let params = SpmParams {
            overlap_fraction: phi,
            ..SpmParams::default()
        };
        let model = SpmModel::build(&prog, &params).unwrap();
        // One task per PE, and a many-to-one mapping (tasks i and i+1 often together).
        let m1 = one_to_one(n, arch.pe_count(), &mut rng);
        let m2 = Mapping::new(
            (0..n as u32)
                .map(|t| PeId((t / 2) % arch.pe_count()))
                .collect(),
        );
        for m in [m1, m2] {
            let f = model.evaluate(arch.as_ref(), &m).unwrap();
            let (d, c) = naive_terms(&model, arch.as_ref(), &m);
            if c > 0.0 && (f.multitasking > 0.0 || d > 0.0) {
                nonzero += 1;
            }
            assert!(
                (f.distance - d).abs() < 1e-6,
                "distance {} vs {d}",
                f.distance
            );
            assert!(
                (f.contention - c).abs() < 1e-6 * c.max(1.0),
                "contention {} vs {c}",
                f.contention
            );
            let sum: f64 = f.per_pe.iter().sum();
            assert!((sum - f.f_sum).abs() < 1e-6 * sum.abs().max(1.0));
            assert!(f.per_pe.iter().all(|&r| r <= f.f));
            assert!(
                (f.f_sum - (f.comp_idle + f.distance - f.multitasking + f.contention)).abs()
                    < 1e-6 * f.f_sum
            );
        }
    }
    assert!(nonzero >= 4, "the cases exercise the terms ({nonzero})");
}
