//! The program language: reader, errors with places, matching, deadlock detection,
//! generators and the reduction to a task graph.

use std::path::{Path, PathBuf};

use taskmap::perego::gen::{
    butterfly, generate_program, mesh2d, random, ring, tree_reduce, GenParams,
};
use taskmap::perego::program::{parse_program, read_program, Op, ProgramBuilder};
use taskmap::Error;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/programs")
        .join(name)
}

fn place(e: &Error) -> (usize, usize, String) {
    match e {
        Error::Parse {
            line,
            column,
            message,
            ..
        } => (*line, *column, message.clone()),
        other => panic!("expected a parse error with a place, got {other:?}"),
    }
}

fn parse(text: &str) -> Result<taskmap::perego::Program, Error> {
    parse_program(text, Path::new("test.prog"))
}

#[test]
fn reads_the_pingpong_fixture() {
    let p = read_program(&fixture("pingpong.prog")).unwrap();
    assert_eq!(p.num_tasks(), 2);
    assert_eq!(p.messages().len(), 4);
    assert_eq!(p.channels().len(), 2);
    assert_eq!(p.task_ops(1)[1], Op::Compute(50));
    assert_eq!(p.compute_cycles(0), 200);
    assert_eq!(p.unmatched_sends(), 0);
    // Round trip through the writer.
    let q = parse(&p.to_text()).unwrap();
    assert_eq!(q.ops(), p.ops());
    assert_eq!(q.messages(), p.messages());
}

#[test]
fn blocks_in_any_order_and_comments() {
    let p =
        parse("% header\nPROCESS 1\n RECEIVE 0 4 # from 0\nSTOP\n\nPROCESS 0\n SEND 1 4\nSTOP\n")
            .unwrap();
    assert_eq!(p.task_ops(0), &[Op::Send { to: 1, flits: 4 }]);
    assert_eq!(p.task_ops(1), &[Op::Recv { from: 0, flits: 4 }]);
}

#[test]
fn unknown_task_names_line_and_column() {
    let e = read_program(&fixture("unknown_task.prog")).unwrap_err();
    let (l, c, m) = place(&e);
    assert_eq!((l, c), (2, 8), "{m}");
    assert!(m.contains("unknown task 7"), "{m}");
    assert!(e.to_string().contains("unknown_task.prog:2:8"), "{e}");
}

#[test]
fn receive_without_send_names_its_line() {
    let e = read_program(&fixture("unmatched.prog")).unwrap_err();
    let (l, c, m) = place(&e);
    assert_eq!((l, c), (6, 11), "{m}");
    assert!(m.contains("no matching SEND"), "{m}");
}

#[test]
fn deadlock_names_the_blocked_tasks() {
    let e = read_program(&fixture("deadlock.prog")).unwrap_err();
    let (l, _, m) = place(&e);
    assert_eq!(l, 3, "{m}");
    assert!(m.contains("deadlock"), "{m}");
    assert!(m.contains("task 0") && m.contains("task 1"), "{m}");
    assert!(m.contains(":7:"), "the second blocked task's line: {m}");
}

#[test]
fn malformed_lines() {
    let cases: &[(&str, (usize, usize), &str)] = &[
        ("PROCESS 0\n  SEND 1\nSTOP\n", (2, 9), "takes 2 argument"),
        ("PROCESS 0\n  SEND 1 x\nSTOP\n", (2, 10), "found \"x\""),
        ("PROCESS 0\n  JUMP 3\nSTOP\n", (2, 3), "unknown instruction"),
        (
            "PROCESS 0\n  INT_OP 3 4\nSTOP\n",
            (2, 12),
            "unexpected \"4\"",
        ),
        ("  INT_OP 3\n", (1, 3), "outside a PROCESS"),
        ("PROCESS 0\nPROCESS 1\nSTOP\n", (2, 1), "before the STOP"),
        (
            "PROCESS 0\nSTOP\nPROCESS 0\nSTOP\n",
            (3, 9),
            "described twice",
        ),
        (
            "PROCESS 0\nSTOP\nPROCESS 2\nSTOP\n",
            (4, 1),
            "task 1 has no PROCESS",
        ),
        ("PROCESS 0\n INT_OP 1\n", (1, 1), "no STOP"),
        ("PROCESS 0\n SEND 0 3\nSTOP\n", (2, 7), "itself"),
        (
            "PROCESS 0\n SEND 1 0\nSTOP\nPROCESS 1\nSTOP\n",
            (2, 7),
            "at least 1 flit",
        ),
        (
            "PROCESS 0\n SEND 1 3\nSTOP\nPROCESS 1\n RECEIVE 0 4\nSTOP\n",
            (5, 10),
            "matches a SEND of 3",
        ),
    ];
    for (text, at, what) in cases {
        let e = parse(text).unwrap_err();
        let (l, c, m) = place(&e);
        assert_eq!((l, c), *at, "{text:?}: {m}");
        assert!(m.contains(what), "{text:?}: {m}");
    }
}

#[test]
fn fifo_matching_per_channel() {
    let p = parse(
        "PROCESS 0\n SEND 1 3\n SEND 1 5\n SEND 2 7\nSTOP\nPROCESS 1\n RECEIVE 0 3\n RECEIVE 0 5\nSTOP\nPROCESS 2\n RECEIVE 0 7\nSTOP\n",
    )
    .unwrap();
    let m = p.messages();
    assert_eq!(m.len(), 3);
    // Channel-major: (0,1) twice in send order, then (0,2).
    assert_eq!((m[0].flits, m[1].flits, m[2].flits), (3, 5, 7));
    assert_eq!(m[0].recv_op, p.op_start(1));
    assert_eq!(m[1].recv_op, p.op_start(1) + 1);
    assert_eq!(p.msg_of_op()[0], 0);
    assert_eq!(p.msg_of_op()[2], 2);
}

#[test]
fn builder_errors_name_task_and_instruction() {
    let mut b = ProgramBuilder::new();
    b.process();
    b.recv(1, 4);
    b.process();
    b.compute(3);
    let e = b.build().unwrap_err();
    assert!(matches!(e, Error::Mismatch(_)), "{e:?}");
    assert!(e.to_string().contains("task 0, instruction 0"), "{e}");
}

#[test]
fn task_graph_volumes() {
    let p = parse(
        "PROCESS 0\n INT_OP 10\n SEND 1 3\n SEND 1 5\n RECEIVE 1 2\nSTOP\nPROCESS 1\n RECEIVE 0 3\n INT_OP 7\n RECEIVE 0 5\n SEND 0 2\n SEND 2 9\nSTOP\nPROCESS 2\n RECEIVE 1 9\n INT_OP 4\n INT_OP 4\nSTOP\n",
    )
    .unwrap();
    let g = p.to_task_graph();
    assert_eq!(g.num_tasks(), 3);
    assert_eq!(g.num_edges(), 2);
    let mut edges: Vec<(u32, u32, u64)> = g.edges().collect();
    edges.sort();
    assert_eq!(edges, vec![(0, 1, 10), (1, 2, 9)]);
    assert_eq!(
        (0..3).map(|t| g.vertex_weight(t, 0)).collect::<Vec<_>>(),
        vec![10, 7, 8]
    );
}

#[test]
fn generators_have_the_expected_shape() {
    let gp = GenParams {
        rounds: 3,
        ..GenParams::default()
    };
    let r = ring(10, &gp);
    assert_eq!(r.messages().len(), 30);
    assert_eq!(r.to_task_graph().num_edges(), 10);
    let m = mesh2d(4, 5, &gp);
    assert_eq!(m.to_task_graph().num_edges(), 4 * 4 + 3 * 5);
    assert_eq!(m.messages().len(), 3 * 2 * 31);
    let b = butterfly(4, &gp);
    assert_eq!(b.to_task_graph().num_edges(), 16 * 4 / 2);
    let t = tree_reduce(15, &gp);
    assert_eq!(t.to_task_graph().num_edges(), 14);
    let x = random(200, &gp);
    let g = x.to_task_graph();
    let mean_degree = 2.0 * g.num_edges() as f64 / 200.0;
    assert!((6.9..=7.1).contains(&mean_degree), "{mean_degree}");
    let small = random(4, &gp);
    assert_eq!(small.to_task_graph().num_edges(), 6);
    // Same seed, same program.
    assert_eq!(random(50, &gp).ops(), random(50, &gp).ops());
    let spec = generate_program("mesh:3x4,rounds=2,flits=8").unwrap();
    assert_eq!(spec.messages().len(), 2 * 2 * 17);
    assert!(generate_program("hexagon:3").is_err());
    assert!(generate_program("ring:64,colour=3").is_err());
}

#[test]
fn huge_task_id_is_an_error_at_its_place_without_allocating() {
    // Used to resize a table to the id (~1.6 GB) before failing.
    let e = parse("PROCESS 100000000\n").unwrap_err();
    let (l, c, m) = place(&e);
    assert_eq!((l, c), (1, 9), "{m}");
    assert!(
        m.contains("task id 100000000 but the file has only 1 lines"),
        "{m}"
    );
    let e = parse("PROCESS 4294967294\nSTOP\n").unwrap_err();
    assert_eq!(place(&e).0, 1);
    // The largest id a file allows: a gap is still reported as a missing task.
    let e = parse("PROCESS 0\nSTOP\nPROCESS 3\nSTOP\n").unwrap_err();
    let (l, c, m) = place(&e);
    assert_eq!((l, c), (4, 1), "{m}");
    assert!(m.contains("task 1 has no PROCESS"), "{m}");
    assert!(m.contains("0..4"), "{m}");
    // Ids in any order still work.
    let p = parse("PROCESS 2\nSTOP\nPROCESS 0\nSTOP\nPROCESS 1\nSTOP\n").unwrap();
    assert_eq!(p.num_tasks(), 3);
}

#[test]
fn huge_generator_specs_are_errors_not_panics() {
    for spec in [
        "random:50000000,partners=50000000",
        "random:7000,partners=4000000000,rounds=0",
        "ring:50000000,rounds=1000000",
        "ring:1000,rounds=4000000000",
        "ring:100,rounds=2000000",
        "mesh:7000x7000",
        "mesh:100000x100000",
        "butterfly:24,rounds=1000",
        "butterfly:25",
        "tree:4294967295",
        "tree:1",
        "ring:0",
        "mesh:1x1",
    ] {
        let e = generate_program(spec).expect_err(spec);
        assert!(matches!(e, Error::Config(_)), "{spec}: {e:?}");
        assert!(e.to_string().contains(spec), "{spec}: {e}");
    }
    let e = generate_program("random:50000000,partners=50000000").unwrap_err();
    assert!(e.to_string().contains("instructions"), "{e}");
    // Partners above n-1 are capped: a complete partner graph.
    let p = generate_program("random:5,partners=1000,rounds=1").unwrap();
    assert_eq!(p.to_task_graph().num_edges(), 10);
    // Extreme but in-range parameters do not overflow.
    let p =
        generate_program("random:3,flits=4294967295,cycles_per_flit=4294967295,rounds=1").unwrap();
    assert_eq!(p.num_tasks(), 3);
    assert!(taskmap::perego::gen::try_ring(1, &GenParams::default()).is_err());
}
