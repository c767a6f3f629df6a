//! The wormhole simulator against hand-computed timings, and the evaluation function F.

use std::path::Path;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use taskmap::perego::gen::{random, ring, GenParams};
use taskmap::perego::program::parse_program;
use taskmap::perego::spm::{SpmModel, SpmParams};
use taskmap::perego::wormhole::{simulate, simulate_ideal, ReadyPolicy, WormholeParams};
use taskmap::{parse_arch, Mapping, PeId};

fn prog(text: &str) -> taskmap::perego::Program {
    parse_program(text, Path::new("t.prog")).unwrap()
}

fn map(pes: &[u32]) -> Mapping {
    Mapping::new(pes.iter().map(|&p| PeId(p)).collect())
}

#[test]
fn one_message_over_d_hops() {
    let p = prog("PROCESS 0\n SEND 1 16\nSTOP\nPROCESS 1\n RECEIVE 0 16\nSTOP\n");
    let arch = parse_arch("mesh:8").unwrap();
    for (tc, d) in [(1u64, 1u32), (1, 3), (2, 3), (3, 7)] {
        let params = WormholeParams {
            flit_cycles: tc,
            send_overhead: 10,
            recv_overhead: 7,
            ..WormholeParams::default()
        };
        let r = simulate(&p, arch.as_ref(), &map(&[0, d]), &params).unwrap();
        let expect = 10 + tc * (16 + u64::from(d) - 1) + 7;
        assert_eq!(r.completion, expect, "T_c {tc}, d {d}");
        assert_eq!(r.latency.max, tc * (16 + u64::from(d) - 1));
        assert_eq!(r.task_wait[1], tc * (16 + u64::from(d) - 1) + 10);
        assert_eq!(r.pe_busy[0], 10);
        assert_eq!(r.pe_busy[d as usize], 7);
        // Every link of the path was held for L flit times.
        let held: u64 = r.link_busy.iter().sum();
        assert_eq!(held, tc * 16 * u64::from(d));
    }
    // A short message (L < d): links are freed before the header arrives.
    let p = prog("PROCESS 0\n SEND 1 2\nSTOP\nPROCESS 1\n RECEIVE 0 2\nSTOP\n");
    let r = simulate(&p, arch.as_ref(), &map(&[0, 6]), &WormholeParams::default()).unwrap();
    assert_eq!(r.latency.max, 2 + 6 - 1);
    assert_eq!(r.link_busy.iter().sum::<u64>(), 6 * 2);
}

#[test]
fn two_messages_contending_for_a_link_serialise() {
    // Task 0 on PE 0 and task 1 on PE 1 both send 16 flits to task 2 on PE 3 of a linear
    // array; both inject at t = 10. Message 1->2 takes link (1,2) at 10; the header of
    // 0->2 reaches PE 1 at 11 and waits until the tail of 1->2 leaves (1,2) at 26, then
    // reaches PE 3 at 27+... : delivered at 27 + 16 = 43 instead of 28.
    let p = prog(
        "PROCESS 0\n SEND 2 16\nSTOP\nPROCESS 1\n SEND 2 16\nSTOP\nPROCESS 2\n RECEIVE 1 16\n RECEIVE 0 16\nSTOP\n",
    );
    let arch = parse_arch("mesh:8").unwrap();
    let r = simulate(
        &p,
        arch.as_ref(),
        &map(&[0, 1, 3]),
        &WormholeParams::default(),
    )
    .unwrap();
    assert_eq!(r.latency.min, 17);
    assert_eq!(r.latency.max, 33);
    assert_eq!(r.completion, 43 + 10);
    assert_eq!(r.contention_free_latency_sum, 17 + 18);
    // Disjoint paths (task 1 on PE 4 sends over (4,3)): no wait. Task 2 receives from 1
    // at 26, busy to 36, then from 0 (there since 28), busy to 46.
    let r = simulate(
        &p,
        arch.as_ref(),
        &map(&[0, 4, 3]),
        &WormholeParams::default(),
    )
    .unwrap();
    assert_eq!(r.latency.max, 18);
    assert_eq!(r.completion, 46);
}

#[test]
fn blocked_header_keeps_its_links() {
    // Figure 1 of the paper on a 5-PE linear array: (3,4) holds (3->4); (2,4) waits for it
    // holding (2->3); (1,3) needs (2->3) and waits for both although path(1,3) and
    // path(3,4) are disjoint.
    let p = prog(
        "PROCESS 0\n SEND 3 8\nSTOP\nPROCESS 1\n INT_OP 1\n SEND 3 8\nSTOP\nPROCESS 2\n SEND 3 8\nSTOP\nPROCESS 3\n RECEIVE 2 8\n RECEIVE 1 8\n RECEIVE 0 8\nSTOP\n",
    );
    // Tasks 0, 1, 2 on PEs 1, 2, 3 all send 8 flits to task 3 on PE 4. Task 2's message
    // holds (3->4) from 10 to 18. Task 1's (injected at 11, one INT_OP cycle later) takes
    // (2->3) at 11 and waits for (3->4) until 18 while holding (2->3); task 0's header
    // reaches PE 2 at 11 (its request comes after task 1's) and waits for (2->3).
    let arch = parse_arch("mesh:5").unwrap();
    let r = simulate(
        &p,
        arch.as_ref(),
        &map(&[1, 2, 3, 4]),
        &WormholeParams::default(),
    )
    .unwrap();
    // 1->4: (3->4) at 18, delivered 26; its tail leaves (2->3) at a_{0+8-1} + 1 = 25
    // (a_j = 18 + (j - 1) past the last link). 0->4: (2->3) at 25, (3->4) at 26 (freed by
    // 1->4 at 26), delivered 34: latency 24. Task 3 receives at 18, 28, 38: done at 48.
    let mut lat: Vec<u64> = Vec::new();
    let ideal = simulate_ideal(&p, &WormholeParams::default()).unwrap();
    assert_eq!(ideal.latency.max, 8);
    lat.push(r.latency.min);
    lat.push(r.latency.max);
    assert_eq!(lat, vec![8, 24]);
    assert_eq!(r.completion, 48);
}

#[test]
fn ring_with_dilation_one_has_no_contention() {
    let gp = GenParams {
        rounds: 5,
        ..GenParams::default()
    };
    let params = WormholeParams::default();
    // 1-D torus, identity.
    let p = ring(16, &gp);
    let ideal = simulate_ideal(&p, &params).unwrap();
    let arch = parse_arch("torus:16").unwrap();
    let ident: Vec<u32> = (0..16).collect();
    let r = simulate(&p, arch.as_ref(), &map(&ident), &params).unwrap();
    assert_eq!(r.completion, ideal.completion);
    assert_eq!(r.latency.max, 32);
    // A snake through a 4x4 torus (the wrap-around closes the ring).
    let snake: Vec<u32> = (0..16u32)
        .map(|i| {
            let (y, x) = (i / 4, i % 4);
            let x = if y % 2 == 0 { x } else { 3 - x };
            x + 4 * y
        })
        .collect();
    let arch = parse_arch("torus:4x4").unwrap();
    let r = simulate(&p, arch.as_ref(), &map(&snake), &params).unwrap();
    assert_eq!(r.completion, ideal.completion);
    assert_eq!(r.latency.min, 32);
    assert_eq!(r.latency.max, 32);
    // A scattered mapping is slower. On the torus it deadlocks without virtual channels
    // (2-hop routes around 4-PE rings), which the simulator reports; the dateline virtual
    // channels (the default) avoid it.
    let bad: Vec<u32> = (0..16u32).map(|i| (i * 5) % 16).collect();
    let mesh = parse_arch("mesh:4x4").unwrap();
    let r = simulate(&p, mesh.as_ref(), &map(&bad), &params).unwrap();
    assert!(r.completion > ideal.completion);
    let r = simulate(&p, arch.as_ref(), &map(&bad), &params).unwrap();
    assert!(r.completion > ideal.completion);
    let no_vc = WormholeParams {
        torus_virtual_channels: false,
        ..params.clone()
    };
    let e = simulate(&p, arch.as_ref(), &map(&bad), &no_vc).unwrap_err();
    assert!(e.to_string().contains("deadlocked"), "{e}");
}

#[test]
fn tasks_sharing_a_pe_run_one_at_a_time() {
    let p = prog(
        "PROCESS 0\n INT_OP 100\n SEND 1 8\nSTOP\nPROCESS 1\n INT_OP 50\n RECEIVE 0 8\nSTOP\nPROCESS 2\n INT_OP 30\nSTOP\n",
    );
    let arch = parse_arch("mesh:2").unwrap();
    let params = WormholeParams::default();
    // FIFO: 0 runs 100 + 10 (send), then 1 runs 50, finds the local message there, 10.
    let r = simulate(&p, arch.as_ref(), &map(&[0, 0, 1]), &params).unwrap();
    assert_eq!(r.task_finish, vec![110, 170, 30]);
    assert_eq!(r.local_messages, 1);
    assert_eq!(r.pe_busy, vec![170, 30]);
    assert_eq!(r.pe_idle, vec![0, 140]);
    // Lowest id first is the same here; round robin interleaves instructions.
    let rr = WormholeParams {
        ready_policy: ReadyPolicy::RoundRobin,
        ..params.clone()
    };
    let r = simulate(&p, arch.as_ref(), &map(&[0, 0, 1]), &rr).unwrap();
    // 0: INT_OP 0..100; 1: INT_OP 100..150; 0: SEND 150..160; 1: RECEIVE 160..170.
    assert_eq!(r.task_finish, vec![160, 170, 30]);
    // A local copy cost delays the receiver.
    let slow = WormholeParams {
        local_cycles_per_flit: 5,
        ..params
    };
    let p2 = prog("PROCESS 0\n SEND 1 8\nSTOP\nPROCESS 1\n RECEIVE 0 8\nSTOP\n");
    let r = simulate(&p2, arch.as_ref(), &map(&[1, 1]), &slow).unwrap();
    assert_eq!(r.completion, 10 + 40 + 10);
}

fn random_mapping(n: usize, k: u32, seed: u64) -> Mapping {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut pes: Vec<u32> = (0..k).collect();
    pes.shuffle(&mut rng);
    map(&pes[..n])
}

#[test]
fn same_inputs_same_output() {
    let p = random(60, &GenParams::default());
    let arch = parse_arch("mesh:8x8").unwrap();
    let m = random_mapping(60, 64, 3);
    let a = simulate(&p, arch.as_ref(), &m, &WormholeParams::default()).unwrap();
    let b = simulate(&p, arch.as_ref(), &m, &WormholeParams::default()).unwrap();
    assert_eq!(a.completion, b.completion);
    assert_eq!(a.task_finish, b.task_finish);
    assert_eq!(a.link_busy, b.link_busy);
    assert_eq!(a.latency, b.latency);
    assert!(a.latency.max > a.latency.min);
    // Hypercube too.
    let h = parse_arch("hypercube:6").unwrap();
    let c = simulate(&p, h.as_ref(), &m, &WormholeParams::default()).unwrap();
    let d = simulate(&p, h.as_ref(), &m, &WormholeParams::default()).unwrap();
    assert_eq!(c.task_finish, d.task_finish);
}

#[test]
fn input_mismatches_are_errors() {
    let p = ring(4, &GenParams::default());
    let arch = parse_arch("mesh:2x2").unwrap();
    assert!(simulate(
        &p,
        arch.as_ref(),
        &map(&[0, 1, 2]),
        &WormholeParams::default()
    )
    .is_err());
    assert!(simulate(
        &p,
        arch.as_ref(),
        &map(&[0, 1, 2, 4]),
        &WormholeParams::default()
    )
    .is_err());
    let c = parse_arch("complete:4").unwrap();
    assert!(simulate(
        &p,
        c.as_ref(),
        &map(&[0, 1, 2, 3]),
        &WormholeParams::default()
    )
    .is_err());
}

#[test]
fn f_terms_by_hand() {
    // 0 -> 1, one message of 16 flits. Ideal: 10 + 16 + 10 = 36; w_0 = 10, w_1 = 10,
    // q_1 = 26.
    let p = prog("PROCESS 0\n SEND 1 16\nSTOP\nPROCESS 1\n RECEIVE 0 16\nSTOP\n");
    let model = SpmModel::build(&p, &SpmParams::default()).unwrap();
    assert_eq!(model.work, vec![10, 10]);
    assert_eq!(model.wait, vec![0, 26]);
    assert_eq!(model.ideal_completion, 36);
    let arch = parse_arch("mesh:8").unwrap();
    let f = model.evaluate(arch.as_ref(), &map(&[0, 3])).unwrap();
    // R(3) = 10 + 26 + (3 - 1) = 38 = the simulated completion minus nothing.
    assert_eq!(f.f, 38.0);
    assert_eq!(f.per_pe[0], 10.0);
    let sim = simulate(&p, arch.as_ref(), &map(&[0, 3]), &WormholeParams::default()).unwrap();
    assert_eq!(sim.completion, 38);
    // Same PE: saving min(16, 26) = 16: R = 10 + 10 + 26 - 16 = 30. The simulation gives
    // 20 (the receiver's wait for the send overhead overlaps the sender's run): F is an
    // estimate.
    let f = model.evaluate(arch.as_ref(), &map(&[2, 2])).unwrap();
    assert_eq!(f.f, 30.0);
    assert_eq!(f.multitasking, 16.0);
    let sim = simulate(&p, arch.as_ref(), &map(&[2, 2]), &WormholeParams::default()).unwrap();
    assert_eq!(sim.completion, 20);
    // Contention: the two-sender example; one phase, one class of 2 channels of 16
    // flits each: each receiver channel gets 16 / (2 * 2) = 4.
    let p = prog(
        "PROCESS 0\n SEND 2 16\nSTOP\nPROCESS 1\n SEND 2 16\nSTOP\nPROCESS 2\n RECEIVE 1 16\n RECEIVE 0 16\nSTOP\n",
    );
    let model = SpmModel::build(&p, &SpmParams::default()).unwrap();
    assert_eq!(model.num_phases(), 1);
    let f = model.evaluate(arch.as_ref(), &map(&[0, 1, 3])).unwrap();
    assert_eq!(f.contention, 8.0);
    assert_eq!(f.distance, 2.0 + 1.0);
    // Disjoint routes: no contention.
    let f = model.evaluate(arch.as_ref(), &map(&[0, 4, 3])).unwrap();
    assert_eq!(f.contention, 0.0);
}

#[test]
fn torus_dateline_virtual_channels() {
    // On an 8-PE ring, 6->1 crosses the wrap-around link 7->0 and continues on virtual
    // channel 1 over 0->1; 0->2 uses channel 0 of the same link: no blocking. Without
    // virtual channels, 6->1 waits at PE 0 until the tail of 0->2 leaves 0->1 at 26.
    let p = prog(
        "PROCESS 0\n SEND 2 16\nSTOP\nPROCESS 1\n SEND 3 16\nSTOP\nPROCESS 2\n RECEIVE 0 16\nSTOP\nPROCESS 3\n RECEIVE 1 16\nSTOP\n",
    );
    let arch = parse_arch("torus:8").unwrap();
    let m = map(&[6, 0, 1, 2]);
    let vc = simulate(&p, arch.as_ref(), &m, &WormholeParams::default()).unwrap();
    assert_eq!((vc.latency.min, vc.latency.max), (17, 18));
    // Link statistics are per physical link (both channels summed).
    assert_eq!(
        vc.link_busy.len(),
        arch.routing().unwrap().link_count() as usize
    );
    assert_eq!(vc.link_flits.iter().sum::<u64>(), 16 * 5);
    let no_vc = WormholeParams {
        torus_virtual_channels: false,
        ..WormholeParams::default()
    };
    let r = simulate(&p, arch.as_ref(), &m, &no_vc).unwrap();
    assert_eq!((r.latency.min, r.latency.max), (17, 32));
}

/// Times that would pass 2^64 − 2 cycles are an error, not a saturated report: 3,000
/// messages of 2^32 − 1 flits at 2^32 cycles a flit need about 2^75 cycles.
#[test]
fn overflowing_times_are_an_error() {
    let mut text = String::from("PROCESS 0\n");
    text.push_str(&" SEND 1 4294967295\n".repeat(3000));
    text.push_str("STOP\nPROCESS 1\n");
    text.push_str(&" RECEIVE 0 4294967295\n".repeat(3000));
    text.push_str("STOP\n");
    let p = prog(&text);
    let arch = parse_arch("torus:8x8").unwrap();
    let params = WormholeParams {
        flit_cycles: 1 << 32,
        ..WormholeParams::default()
    };
    let e = simulate(&p, arch.as_ref(), &map(&[0, 15]), &params).unwrap_err();
    assert!(e.to_string().contains("overflow 64 bits"), "{e}");
    // One such message at 2^31 cycles a flit fits, close to 2^63 cycles.
    let one = prog("PROCESS 0\n SEND 1 4294967295\nSTOP\nPROCESS 1\n RECEIVE 0 4294967295\nSTOP\n");
    let half = WormholeParams {
        flit_cycles: 1 << 31,
        ..WormholeParams::default()
    };
    let r = simulate(&one, arch.as_ref(), &map(&[0, 15]), &half).unwrap();
    assert!(r.completion > (1u64 << 62), "{}", r.completion);
}
