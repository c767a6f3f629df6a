//! Conformance: every registered static mapper on every kind of target (each spec form and
//! each target file of `fixtures/arch`). Each run either maps, and then the mapping is valid,
//! the same for the same seed, and balanced exactly when the run exits 0 (exit 1 otherwise,
//! as `eval` agrees), or refuses the combination with exit 2 and a message, never a panic.

use std::path::Path;
use std::process::{Command, Output};

const TARGETS: &[&str] = &[
    "complete:8",
    "wcomplete:1,2,3,2",
    "hypercube:3",
    "mesh:4x2",
    "torus:4x4",
    "mesh:2x2x2",
    "tree:2:2:2/1:10:100",
    "sub:0-3,8-11:torus:4x4",
    "graph:fixtures/arch/caps4.graph",
    "graph:fixtures/arch/ring8w.graph",
    "matrix:fixtures/arch/small.mat",
    "fixtures/arch/sub4.tgt",
    "fixtures/arch/tleaf3.tgt",
    "fixtures/arch/torus4x4.tgt",
];

/// The combinations refused with exit 2: the greedy mapper of De Petris & Perego needs a
/// routed target (mesh, torus, hypercube).
const REFUSED: &[&str] = &[
    "greedy-perego on complete:8",
    "greedy-perego on wcomplete:1,2,3,2",
    "greedy-perego on tree:2:2:2/1:10:100",
    "greedy-perego on sub:0-3,8-11:torus:4x4",
    "greedy-perego on graph:fixtures/arch/caps4.graph",
    "greedy-perego on graph:fixtures/arch/ring8w.graph",
    "greedy-perego on matrix:fixtures/arch/small.mat",
    "greedy-perego on fixtures/arch/sub4.tgt",
    "greedy-perego on fixtures/arch/tleaf3.tgt",
];

fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn taskmap(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_taskmap"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run taskmap")
}

/// The registered mappers of task graphs (the static and program families), from
/// `taskmap algorithms`.
fn algorithms() -> Vec<String> {
    ["static", "program"]
        .iter()
        .flat_map(|f| {
            let o = taskmap(&["algorithms", "--family", f]);
            assert_eq!(o.status.code(), Some(0));
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| l.split_whitespace().next().map(str::to_string))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn every_mapper_on_every_target_kind() {
    let algs = algorithms();
    assert!(algs.len() >= 11, "{algs:?}");
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("g.graph");
    let g = graph.to_str().unwrap();
    assert_eq!(
        taskmap(&["gen", "rgg", "120", "--degree", "6", "-s", "3", "-o", g])
            .status
            .code(),
        Some(0)
    );
    // The exact search takes at most 64 tasks: it gets 10, and a node limit.
    let small = dir.path().join("small.graph");
    let small = small.to_str().unwrap();
    assert_eq!(
        taskmap(&["gen", "rgg", "10", "--degree", "4", "-s", "3", "-o", small])
            .status
            .code(),
        Some(0)
    );
    let mut mapped = 0;
    let mut refused: Vec<String> = Vec::new();
    for alg in &algs {
        let (g, tasks, alg_arg) = match alg.as_str() {
            "exact" => (small, 10, "exact,nodes=20000".to_string()),
            _ => (g, 120, alg.clone()),
        };
        for (ti, spec) in TARGETS.iter().enumerate() {
            let out = |i: usize| dir.path().join(format!("{alg}-{ti}-{i}.map"));
            let (o1, o2) = (out(1), out(2));
            let run = |o: &Path| {
                taskmap(&[
                    "map",
                    "-g",
                    g,
                    "-a",
                    spec,
                    "-A",
                    &alg_arg,
                    "-s",
                    "5",
                    "-o",
                    o.to_str().unwrap(),
                    "-f",
                    "json",
                ])
            };
            let r1 = run(&o1);
            let err = String::from_utf8_lossy(&r1.stderr).into_owned();
            let what = format!("{alg} on {spec}: {err}");
            assert!(!err.contains("panicked"), "{what}");
            match r1.status.code() {
                Some(2) => {
                    assert!(err.starts_with("taskmap: "), "{what}");
                    refused.push(format!("{alg} on {spec}"));
                    continue;
                }
                Some(code @ (0 | 1)) => {
                    mapped += 1;
                    let report: serde_json::Value = serde_json::from_slice(&r1.stdout).unwrap();
                    let e = &report["evaluation"];
                    assert_eq!(e["tasks"], tasks, "{what}");
                    assert_eq!(e["balanced"] == true, code == 0, "{what}: {e}");
                    // The same seed gives the same mapping.
                    let r2 = run(&o2);
                    assert_eq!(r2.status.code(), Some(code), "{what}");
                    assert_eq!(
                        std::fs::read(&o1).unwrap(),
                        std::fs::read(&o2).unwrap(),
                        "{alg} on {spec}: two runs with seed 5 differ"
                    );
                    // The written mapping is valid and scores the same on its own.
                    let ev = taskmap(&[
                        "eval",
                        "-g",
                        g,
                        "-a",
                        spec,
                        "-m",
                        o1.to_str().unwrap(),
                        "-e",
                        "0.03",
                        "-f",
                        "json",
                    ]);
                    assert_eq!(ev.status.code(), Some(code), "{what}");
                    let ev: serde_json::Value = serde_json::from_slice(&ev.stdout).unwrap();
                    assert_eq!(ev["comm_cost"], e["comm_cost"], "{what}");
                }
                other => panic!("{what}: exit {other:?}"),
            }
        }
    }
    // Only the combinations a mapper cannot take are refused: greedy-perego needs routes.
    assert_eq!(mapped + refused.len(), algs.len() * TARGETS.len());
    assert_eq!(refused, REFUSED, "{mapped} mapped");
}
