//! End-to-end tests of the `taskmap` binary: exit codes, errors, outputs, and the golden
//! set (`golden`).

mod conformance;
mod golden;
mod readme;
mod spellings;

use std::path::Path;
use std::process::{Command, Output};

fn taskmap(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_taskmap"))
        .args(args)
        .output()
        .expect("run taskmap")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
        .display()
        .to_string()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{}: {}", e, stdout(o)))
}

/// `map -g graph -a arch -A alg [extra] -o out --format json`, then `eval` of `out` on the
/// same target: both must exit 0; returns the two JSON reports.
fn map_then_eval(
    graph: &str,
    arch: &str,
    alg: &str,
    extra: &[&str],
    out: &str,
) -> (serde_json::Value, serde_json::Value) {
    let mut args = vec!["map", "-g", graph, "-a", arch, "-A", alg];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-o", out, "--format", "json"]);
    let o = taskmap(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report = json(&o);
    let o = taskmap(&[
        "eval", "-g", graph, "-a", arch, "-m", out, "--format", "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (report, json(&o))
}

#[test]
fn map_without_input_maps_the_embedded_example() {
    let o = taskmap(&["map"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("delaunay_n10"), "{}", s);
    assert!(s.contains("comm cost f_C"), "{}", s);
}

#[test]
fn map_then_eval_agree() {
    let dir = tempfile::tempdir().unwrap();
    let g = fixture("delaunay_n10.graph");
    for (name, alg) in [("a.map", "random"), ("b.pes", "block")] {
        let out = dir.path().join(name).display().to_string();
        let (report, e) = map_then_eval(&g, "torus:4x4", alg, &[], &out);
        assert_eq!(report["evaluation"]["comm_cost"], e["comm_cost"]);
        assert_eq!(report["evaluation"]["edge_cut"], e["edge_cut"]);
        assert_eq!(e["tasks"], 1024);
        // The same mapping scored on a mesh costs at least as much as on the torus.
        let o = taskmap(&[
            "eval", "-g", &g, "-a", "mesh:4x4", "-m", &out, "--format", "json",
        ]);
        let m = json(&o);
        assert!(m["comm_cost"].as_u64().unwrap() >= e["comm_cost"].as_u64().unwrap());
    }
}

/// MPI ranks from an mpiP communication graph, one per core: `map` reads the graphStats
/// file directly, respects `--capacity 1`, and `eval` scores the written mapping alike; the
/// multilevel mapper beats placing the ranks in order on this 64-rank CG run.
#[test]
fn mpip_graph_maps_one_rank_per_core() {
    let dir = tempfile::tempdir().unwrap();
    let g = fixture("NPB-cg_64ranks.graphStats.txt.gz");
    let mut f_c = Vec::new();
    for alg in ["multilevel", "block"] {
        let out = dir.path().join(format!("{alg}.pes")).display().to_string();
        let (report, e) = map_then_eval(&g, "torus:4x4x4", alg, &["--capacity", "1"], &out);
        assert_eq!(report["evaluation"]["loads"][0]["max"], 1);
        assert_eq!(report["evaluation"]["comm_cost"], e["comm_cost"]);
        f_c.push(e["comm_cost"].as_u64().unwrap());
    }
    assert!(
        f_c[0] < f_c[1],
        "multilevel {} against block {}",
        f_c[0],
        f_c[1]
    );
}

/// A graph file of more than 1 MiB is read in pieces and evaluated on the threads of
/// `eval -t`; the report is the same as on one thread, and so is the error on a broken copy.
#[test]
fn eval_reports_the_same_on_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("rgg.graph").display().to_string();
    let o = taskmap(&["gen", "rgg", "150000", "-o", &g]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::metadata(&g).unwrap().len() > 1 << 20);
    let m = dir.path().join("g.map").display().to_string();
    let o = taskmap(&["map", "-g", &g, "-a", "torus:4x4", "-A", "block", "-o", &m]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let eval = |graph: &str, t: &str| {
        taskmap(&[
            "eval",
            "-g",
            graph,
            "-a",
            "torus:4x4",
            "-m",
            &m,
            "-f",
            "json",
            "-t",
            t,
        ])
    };
    let one = eval(&g, "1");
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    for t in ["2", "3"] {
        let o = eval(&g, t);
        assert_eq!(stdout(&o), stdout(&one), "{t} threads");
    }
    // One neighbour id of a line near the end changed by one: no reverse edge.
    let mut text = std::fs::read_to_string(&g).unwrap();
    let at = text.len() - 200 + text[text.len() - 200..].find(' ').unwrap();
    let digit = at - 1;
    let d = text.as_bytes()[digit];
    let swapped = if d == b'9' { b'8' } else { d + 1 } as char;
    text.replace_range(digit..digit + 1, &swapped.to_string());
    let bad = dir.path().join("bad.graph").display().to_string();
    std::fs::write(&bad, text).unwrap();
    let one = eval(&bad, "1");
    assert_eq!(one.status.code(), Some(2), "{}", stderr(&one));
    assert!(stderr(&one).contains("bad.graph:"), "{}", stderr(&one));
    assert_eq!(stderr(&eval(&bad, "3")), stderr(&one));
    // Weighted rows out of order whose reverse weights differ, read in pieces (comments
    // make the file long enough): refused on every thread count.
    let mut text = String::from("3 3 1\n3 2 2 1\n1 2 3 2\n2 2 1 2\n");
    text.push_str(&format!("%{}\n", "x".repeat(99)).repeat(12_000));
    let w = dir.path().join("w.graph").display().to_string();
    std::fs::write(&w, text).unwrap();
    for t in ["1", "2"] {
        let o = taskmap(&["map", "-g", &w, "-a", "complete:2", "-A", "block", "-t", t]);
        assert_eq!(o.status.code(), Some(2), "{t} threads: {}", stderr(&o));
        assert!(
            stderr(&o).contains("w.graph:2:5: edge 1-2 has weight 1"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn eval_exits_1_when_balance_or_capacity_is_violated() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("ring.graph").display().to_string();
    let o = taskmap(&["gen", "ring", "10", "-o", &g]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m = dir.path().join("m.pes");
    std::fs::write(&m, "0\n0\n0\n0\n0\n0\n0\n1\n1\n1\n").unwrap();
    let m = m.display().to_string();
    let ok = taskmap(&["eval", "-g", &g, "-a", "complete:2", "-m", &m]);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let bad = taskmap(&[
        "eval",
        "-g",
        &g,
        "-a",
        "complete:2",
        "-m",
        &m,
        "--epsilon",
        "0.1",
    ]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stdout(&bad).contains("VIOLATED"));
    let cap = taskmap(&[
        "eval",
        "-g",
        &g,
        "-a",
        "complete:2",
        "-m",
        &m,
        "--capacity",
        "6",
    ]);
    assert_eq!(cap.status.code(), Some(1));
    let cap = taskmap(&[
        "eval",
        "-g",
        &g,
        "-a",
        "complete:2",
        "-m",
        &m,
        "--capacity",
        "7",
    ]);
    assert_eq!(cap.status.code(), Some(0));
}

#[test]
fn bad_inputs_exit_2_with_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.graph");
    std::fs::write(&bad, "3 2\n2\n1 3\n9\n").unwrap();
    let o = taskmap(&["map", "-g", bad.to_str().unwrap(), "-a", "torus:2x2"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("bad.graph:4:1"), "{}", e);
    let o = taskmap(&[
        "map",
        "-g",
        &fixture("delaunay_n10.graph"),
        "-a",
        "torus:4xx4",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("torus:4xx4"), "{}", stderr(&o));
    // A bad mapping line, and a mapping for another graph or target: the line that does
    // not fit.
    for (name, text, place) in [
        ("m.map", "2\n0 1\n1 x\n", "m.map:3:3"),
        ("m.pes", "0\n1\n16\n", "m.pes:3:1: PE 16"),
        ("m.pes", "0\n1\n", "m.pes:2:1"),
        (
            "h.map",
            "2\n0 1\n1 2\n",
            "h.map:1:1: the header announces 2",
        ),
    ] {
        let m = dir.path().join(name);
        std::fs::write(&m, text).unwrap();
        let o = taskmap(&[
            "eval",
            "-g",
            &fixture("delaunay_n10.graph"),
            "-a",
            "torus:4x4",
            "-m",
            m.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains(place), "{}", stderr(&o));
    }
    let o = taskmap(&["map", "-g", "/nonexistent/x.graph", "-a", "torus:4x4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/x.graph"));
    let o = taskmap(&["map", "-A", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown algorithm"));
}

#[test]
fn a_failed_write_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("missing-dir").join("out.map");
    let o = taskmap(&["map", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());
    // The output path is an existing directory: the temporary file is written in full, the
    // final rename fails, and the temporary file must be gone afterwards.
    let blocker = dir.path().join("taken.map");
    std::fs::create_dir(&blocker).unwrap();
    std::fs::write(blocker.join("keep"), "x").unwrap();
    let o = taskmap(&["map", "-o", blocker.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("taken.map"), "{}", stderr(&o));
    assert!(blocker.join("keep").exists());
    let assert_no_tmp = |d: &Path| {
        let names: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{:?}", names);
    };
    assert_no_tmp(dir.path());
    // A good write leaves the file and nothing else; also with a name of 250 bytes (the
    // temporary file's name, the destination's cut short plus six random characters,
    // still fits the 255-byte limit of a name).
    for name in ["out.map".to_string(), format!("{}.map", "n".repeat(246))] {
        let good = dir.path().join(name);
        let o = taskmap(&["map", "-o", good.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(
            std::fs::read_to_string(&good).unwrap().lines().count(),
            1025
        );
        assert_no_tmp(dir.path());
    }
}

#[test]
fn gen_and_convert_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("g.graph").display().to_string();
    let b = dir.path().join("g.grf").display().to_string();
    let c = dir.path().join("g2.graph.gz").display().to_string();
    assert_eq!(
        taskmap(&["gen", "torus", "6x5", "-o", &a]).status.code(),
        Some(0)
    );
    let o = taskmap(&["convert", &a, &b]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = taskmap(&["convert", &b, &c]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The block mapping gives the same score whatever format the graph came from.
    let score = |g: &str| {
        let o = taskmap(&["map", "-g", g, "-a", "mesh:2x3", "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        json(&o)["evaluation"]["comm_cost"].as_u64().unwrap()
    };
    assert_eq!(score(&a), score(&b));
    assert_eq!(score(&a), score(&c));
    // A degree beyond n - 1 gives the complete graph (it once overflowed the size check
    // and aborted on a 40 GB allocation).
    let d = dir.path().join("k10.graph").display().to_string();
    let o = taskmap(&["gen", "rgg", "10", "--degree", "1e38", "-o", &d]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = taskmap(&["info", &d, "--format", "json"]);
    assert_eq!(json(&o)["edges"], 45, "{}", stdout(&o));
}

/// `arch` counts the directed links that exist, not the ids of a mesh's boundary PEs:
/// 2 · 2 · 8 · 7 on an 8x8 mesh, 4 per PE on a torus whose rings pass 2 PEs, 3 per PE on
/// a 3-cube.
#[test]
fn arch_counts_the_links_that_exist() {
    for (spec, links) in [
        ("mesh:8x8", 224),
        ("torus:4x4", 64),
        ("hypercube:3", 24),
        ("mesh:5", 8),
    ] {
        let o = taskmap(&["arch", spec, "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(json(&o)["links"], links, "{spec}");
    }
}

#[test]
fn arch_reports_distances() {
    let o = taskmap(&[
        "arch",
        "torus:4x4",
        "--distance",
        "0",
        "10",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(r["pes"], 16);
    assert_eq!(r["diameter"], 4);
    // PE 10 = (2, 2): two hops each way.
    assert_eq!(r["distance"][2], 4);
    let o = taskmap(&["arch", "torus:4x4", "--distance", "0", "16"]);
    assert_eq!(o.status.code(), Some(2));
    let o = taskmap(&["arch", "tree:4:8:8/1:10:100", "--scotch"]);
    assert_eq!(stdout(&o).trim(), "tleaf 3 8 90 8 9 4 1");
}

#[test]
fn dump_config_and_presets() {
    let o = taskmap(&["map", "--preset", "strong", "--seed", "5", "--dump-config"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let c = json(&o);
    assert_eq!(c["seed"], 5);
    assert_eq!(c["target"], "torus:4x4");
    assert_eq!(c["algorithm"], "multilevel,preset=strong");
    // The effective parameters: the strong preset's, with an override on top.
    assert_eq!(c["parameters"]["runs"], 8);
    assert_eq!(c["parameters"]["vcycles"], 8);
    let o = taskmap(&[
        "map",
        "-A",
        "multilevel,vcycles=3",
        "-P",
        "strong",
        "--dump-config",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let c = json(&o);
    assert_eq!(c["parameters"]["vcycles"], 3);
    assert_eq!(c["parameters"]["coarse_tries"], 32);
    let o = taskmap(&["map", "-A", "random", "--preset", "fast"]);
    assert_eq!(o.status.code(), Some(2));
    // The memetic mode's parameters and the time limit.
    let o = taskmap(&[
        "map",
        "-A",
        "multilevel,population=6,combines=40",
        "--time-limit",
        "2.5",
        "--dump-config",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let c = json(&o);
    assert_eq!(c["parameters"]["population"], 6);
    assert_eq!(c["parameters"]["combines"], 40);
    assert_eq!(c["time_limit"], 2.5);
}

#[test]
fn infeasible_capacities_exit_1_and_still_write_the_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.pes");
    // 1,024 tasks on 16 PEs that can carry 50 each: infeasible.
    let o = taskmap(&[
        "map",
        "--capacity",
        "50",
        "-o",
        out.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("infeasible"), "{}", stderr(&o));
    assert_eq!(json(&o)["evaluation"]["capacities_respected"], false);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 1024);
    // A feasible capacity: exit 0 and every PE within it.
    let o = taskmap(&["map", "--capacity", "66", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = json(&o);
    assert_eq!(e["evaluation"]["capacities_respected"], true);
    assert!(e["evaluation"]["loads"][0]["max"].as_u64().unwrap() <= 66);
}

/// The memetic mode maps within the capacities, with and without a time limit; a time
/// limit on an algorithm that ignores it draws a warning; `combines` alone is refused.
#[test]
fn memetic_mode_and_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.map");
    let base = ["map", "--capacity", "66", "--format", "json", "-o"];
    let run = |extra: &[&str]| {
        // Each run writes the mapping anew.
        let _ = std::fs::remove_file(&out);
        let mut args: Vec<&str> = base.to_vec();
        args.push(out.to_str().unwrap());
        args.extend_from_slice(extra);
        let o = taskmap(&args);
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", stderr(&o));
        let e = json(&o);
        assert_eq!(e["evaluation"]["capacities_respected"], true, "{extra:?}");
        assert!(out.exists());
        (e["evaluation"]["comm_cost"].as_u64().unwrap(), stderr(&o))
    };
    let (one, _) = run(&[]);
    let (evo, _) = run(&["-A", "multilevel,population=3,combines=6"]);
    assert!(evo <= one, "{evo} > {one}");
    let (_, err) = run(&["-A", "multilevel,population=3", "--time-limit", "0.5"]);
    assert!(!err.contains("warning"), "{err}");
    let (_, err) = run(&["--time-limit", "0.5"]);
    assert!(!err.contains("warning"), "{err}");
    let (_, err) = run(&["-A", "gtwp", "--time-limit", "0.5"]);
    assert!(err.contains("--time-limit applies to pnp"), "{err}");
    let (_, err) = run(&["-A", "multilevel,vcycles=0", "--time-limit", "0.5"]);
    assert!(err.contains("this configuration has none"), "{err}");
    // annealing takes the limit without a warning, and is never worse than the run it
    // starts from
    let (annealed, err) = run(&["-A", "multilevel,anneal=2000", "--time-limit", "30"]);
    assert!(!err.contains("warning"), "{err}");
    assert!(annealed <= one, "{annealed} > {one}");
    let o = taskmap(&["map", "-A", "multilevel,combines=6"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("need the memetic mode"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn compare_runs_every_algorithm_and_scores_it_like_eval() {
    let o = taskmap(&["compare", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = json(&o);
    let rows = rows.as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["algorithm"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"block") && names.contains(&"multilevel"),
        "{:?}",
        names
    );
    assert!(!names.contains(&"greedy-perego"), "{:?}", names);
    // The same algorithm and seed through `map` gives the same f_C.
    let o = taskmap(&["map", "-A", "random", "--seed", "0", "--format", "json"]);
    let random = rows.iter().find(|r| r["algorithm"] == "random").unwrap();
    assert_eq!(json(&o)["evaluation"]["comm_cost"], random["comm_cost"]);
    // Multilevel is far better than random on the embedded mesh-like graph.
    let ml = rows
        .iter()
        .find(|r| r["algorithm"] == "multilevel")
        .unwrap();
    assert!(ml["comm_cost"].as_u64().unwrap() * 2 < random["comm_cost"].as_u64().unwrap());
    // Exit 1, like `map`, when no algorithm keeps the constraints (greedy-perego leaves the
    // loads of a static graph unbalanced), 0 when one does.
    let o = taskmap(&["compare", "-A", "greedy-perego", "--format", "json"]);
    assert_eq!(json(&o)[0]["feasible"], false, "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = taskmap(&["compare", "-A", "greedy-perego", "-A", "block"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Exit 2 when no algorithm could map (greedy-perego needs routes), 1 when one could.
    let o = taskmap(&["compare", "-A", "greedy-perego", "-a", "complete:16"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stdout(&o).contains("not applicable"), "{}", stdout(&o));
    let o = taskmap(&[
        "compare",
        "-A",
        "greedy-perego",
        "-A",
        "greedy-perego",
        "-a",
        "torus:4x4",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn oversized_or_bad_requests_exit_2_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g.graph").display().to_string();
    for args in [
        vec!["gen", "hypercube", "32", "-o", &out],
        vec!["gen", "butterfly", "29", "-o", &out],
        vec!["gen", "grid", "70000x70000", "-o", &out],
        vec!["gen", "stencil27", "2000x2000x2000", "-o", &out],
        vec!["map", "-A", "multilevel,runs=1000000000000"],
        vec!["map", "-A", "pnp,rcl=1000000000000000000"],
        vec!["map", "-A", "multilevel,tries=4294967296"],
        vec!["map", "-A", "multilevel,coarse_tries=1025"],
        vec!["map", "-A", "drb,tries=99999999999"],
        vec!["map", "-A", "pnp,moves=4294967296"],
        vec!["map", "-a", "hypercube:31"],
        vec!["map", "-a", "hypercube:31", "--capacity", "5"],
        vec!["map", "--threads", "4294967296"],
        vec!["map", "--epsilon", "NaN"],
    ] {
        let o = taskmap(&args);
        assert_eq!(o.status.code(), Some(2), "{:?}: {}", args, stderr(&o));
        assert!(
            stderr(&o).starts_with("taskmap: error:"),
            "{:?}: {}",
            args,
            stderr(&o)
        );
    }
    // Each with its own message.
    for (args, msg) in [
        (vec!["map", "--threads", "0"], "0 threads"),
        // --dump-config refuses what a run would refuse.
        (vec!["map", "--dump-config", "--threads", "0"], "0 threads"),
        (
            vec!["map", "--dump-config", "--epsilon", "-1"],
            "epsilon must be a non-negative number",
        ),
        (vec!["map", "--dump-config", "-a", "torus:0x4"], "torus"),
        (
            vec!["map", "--dump-config", "--capacity", "x"],
            "--capacity",
        ),
        // A count of runs or tries is at least 1.
        (
            vec!["map", "-A", "multilevel,tries=0"],
            "tries must be at least 1",
        ),
        (
            vec!["map", "-A", "multilevel,runs=0"],
            "runs must be at least 1",
        ),
        (vec!["map", "-A", "drb,tries=0"], "tries must be at least 1"),
        (
            vec![
                "sim",
                "--gen",
                "ring:4",
                "--ideal",
                "--overlap-fraction",
                "2",
            ],
            "--overlap-fraction must be in 0..=1",
        ),
        (
            vec![
                "sim",
                "--gen",
                "ring:4",
                "--arch",
                "torus:2x2",
                "--epsilon",
                "0.5",
            ],
            "--epsilon applies to --algorithm only",
        ),
        (
            vec!["map", "--epsilon", "-1"],
            "epsilon must be a non-negative number",
        ),
        (
            vec!["map", "-A", "multilevel,runs=1,runs=2"],
            "\"runs\" is given twice",
        ),
        (
            vec!["map", "-A", "ml,per_pe=4,per-pe=8"],
            "\"per_pe\" is given twice",
        ),
        (
            vec!["map", "-A", "multilevel,preset=strong", "--preset", "fast"],
            "conflicts with the preset",
        ),
        (vec!["map", "-a", "wcomplete:"], "missing capacity list"),
        (
            vec!["map", "-a", "complete:8192", "-A", "gtwp"],
            "at most 4096 PEs",
        ),
        (
            vec!["map", "-a", "torus:128x128", "-A", "pnp"],
            "at most 4096 PEs",
        ),
        (vec!["map", "-a", "/"], "is a directory"),
        (
            vec!["map", "--time-limit", "0"],
            "expected a positive number of seconds",
        ),
        (
            vec!["map", "--time-limit", "nan"],
            "expected a positive number of seconds",
        ),
        (
            vec!["map", "-A", "multilevel,population=0"],
            "population must be at least 1",
        ),
        (
            vec!["gen", "program", "ring:4", "-o", &out],
            "a program is written",
        ),
    ] {
        let o = taskmap(&args);
        assert_eq!(o.status.code(), Some(2), "{:?}: {}", args, stderr(&o));
        assert!(stderr(&o).contains(msg), "{:?}: {}", args, stderr(&o));
    }
    assert!(!Path::new(&out).exists());
    // --preset works with the algorithm's alias too.
    let o = taskmap(&["map", "-A", "ml", "--preset", "fast", "--dump-config"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// `sim --algorithm` takes the mappers' balance bound: GTWP cannot pack a random program
/// within the default 3 %, and can with `--epsilon 0.5`.
#[test]
fn sim_passes_epsilon_to_the_mapper() {
    let args = [
        "sim",
        "--gen",
        "random:64",
        "--arch",
        "torus:4x4",
        "--algorithm",
        "gtwp",
    ];
    let o = taskmap(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("give more room"), "{}", stderr(&o));
    let o = taskmap(&[&args[..], &["--epsilon", "0.5"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // --write-program writes the program once the run has succeeded, not before a
    // failure.
    let dir = tempfile::tempdir().unwrap();
    let prog = dir.path().join("p.prog");
    let p = prog.to_str().unwrap();
    for arch in ["torus:0x2", "torus:2x2"] {
        let o = taskmap(&[
            "sim",
            "--gen",
            "ring:4",
            "--arch",
            arch,
            "--write-program",
            p,
        ]);
        let ok = arch == "torus:2x2";
        assert_eq!(
            o.status.code(),
            Some(if ok { 0 } else { 2 }),
            "{}",
            stderr(&o)
        );
        assert_eq!(prog.exists(), ok);
    }
}

#[test]
fn map_of_a_program_is_sims_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let prog = dir.path().join("r.prog").display().to_string();
    let o = taskmap(&["gen", "program", "random:24,seed=3", "-o", &prog]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = |n: &str| dir.path().join(n).display().to_string();
    let (s, m) = (out("sim.pes"), out("map.pes"));
    let o = taskmap(&[
        "sim",
        "--program",
        &prog,
        "-a",
        "mesh:5x5",
        "-A",
        "greedy-perego",
        "-o",
        &s,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // `map --program` with greedy-perego uses the program's phases, as sim does.
    let o = taskmap(&[
        "map",
        "--program",
        &prog,
        "-a",
        "mesh:5x5",
        "-A",
        "greedy-perego",
        "-o",
        &m,
    ]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert_eq!(std::fs::read(&s).unwrap(), std::fs::read(&m).unwrap());
    // Other mappers map the program's task graph: the same f_C as eval of the program.
    let o = taskmap(&[
        "map",
        "--program",
        &prog,
        "-a",
        "mesh:5x5",
        "-o",
        &m,
        "--format",
        "json",
    ]);
    // (Tasks heavier than a PE's share leave the balance rule out of reach: exit 1.)
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let fc = json(&o)["evaluation"]["comm_cost"].clone();
    let o = taskmap(&[
        "eval",
        "--program",
        &prog,
        "-a",
        "mesh:5x5",
        "-m",
        &m,
        "--format",
        "json",
    ]);
    assert_eq!(json(&o)["comm_cost"], fc);
    // A target is needed, and a program is not a graph.
    let o = taskmap(&["map", "--program", &prog]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--arch is required"), "{}", stderr(&o));
}

#[test]
fn eval_of_a_program_reports_f_like_sim() {
    let dir = tempfile::tempdir().unwrap();
    let prog = dir.path().join("ring.prog").display().to_string();
    let o = taskmap(&["gen", "program", "ring:16", "-o", &prog]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Task i on PE (5 i) mod 16: a scattered mapping, so distance and contention matter.
    let m = dir.path().join("m.pes");
    let text: String = (0..16).map(|t| format!("{}\n", (5 * t) % 16)).collect();
    std::fs::write(&m, text).unwrap();
    let m = m.display().to_string();
    let o = taskmap(&[
        "eval",
        "--program",
        &prog,
        "-a",
        "torus:4x4",
        "-m",
        &m,
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = json(&o);
    // `taskmap sim` of the program under a mapping file, with more arguments.
    let sim = |mapping: &str, more: &[&str]| {
        let mut args = vec![
            "sim",
            "--program",
            &prog,
            "--arch",
            "torus:4x4",
            "--mapping",
            mapping,
        ];
        args.extend_from_slice(more);
        taskmap(&args)
    };
    // `taskmap sim --f` as JSON.
    let sim_f = |mapping: &str| {
        let o = sim(mapping, &["--f", "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        json(&o)
    };
    let s = sim_f(&m);
    assert_eq!(e["perego_f_slack"]["f"], s["f"]["f_slack"]);
    assert_eq!(e["perego_f_paper"]["f"], s["f"]["f_paper"]);
    assert_eq!(e["perego_f_slack"]["contention"], s["f"]["contention"]);
    // Eq. 2-10 never absorbs: it is at least the slack version.
    assert!(s["f"]["f_paper"].as_f64().unwrap() >= s["f"]["f_slack"].as_f64().unwrap());
    // F_prop too (one task per PE), and it is at least the ideal machine's time.
    let fp = s["f"]["f_prop"].as_f64().unwrap();
    assert_eq!(e["perego_f_prop"]["f_prop"].as_f64(), Some(fp));
    let ideal = taskmap(&["sim", "--program", &prog, "--ideal", "--format", "json"]);
    assert!(fp >= json(&ideal)["completion"].as_f64().unwrap());
    // Two tasks on one PE: no F_prop.
    let m2 = dir.path().join("m2.pes");
    let text: String = (0..16).map(|t| format!("{}\n", t / 2)).collect();
    std::fs::write(&m2, text).unwrap();
    assert!(sim_f(&m2.display().to_string())["f"]
        .get("f_prop")
        .is_none());
    // A mapping with too few lines or a PE the target lacks: exit 2 at the line.
    for (text, place) in [("0\n1\n", "m3.pes:2:1"), ("0\n16\n", "m3.pes:2:1: PE 16")] {
        let m3 = dir.path().join("m3.pes");
        std::fs::write(&m3, text).unwrap();
        let o = sim(&m3.display().to_string(), &[]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains(place), "{}", stderr(&o));
    }
    // The static metrics are those of the program's task graph: 16 ring edges.
    assert_eq!(e["edges"], 16);
    assert!(e["comm_cost"].as_u64().unwrap() > 0);
    // --program and --graph together are refused.
    let o = taskmap(&[
        "eval",
        "--program",
        &prog,
        "-g",
        &prog,
        "-a",
        "torus:4x4",
        "-m",
        &m,
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn hard_capacities_replace_the_default_epsilon() {
    // 1,024 tasks on 16 PEs: capacity 70 allows loads above the default ε bound (66), which
    // must not count as a violation; an explicit --epsilon is still checked.
    let o = taskmap(&["map", "-A", "block", "--capacity", "70", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["evaluation"]["epsilon"], serde_json::Value::Null);
    let o = taskmap(&[
        "compare",
        "-A",
        "block",
        "--capacity",
        "70",
        "--format",
        "json",
    ]);
    assert_eq!(json(&o)[0]["feasible"], true);
    let o = taskmap(&[
        "map",
        "--capacity",
        "70",
        "--epsilon",
        "0.03",
        "--format",
        "json",
    ]);
    assert_eq!(json(&o)["evaluation"]["epsilon"], 0.03);
    // A capacity that never binds and an explicit ε: the mappers keep the ε bound (66).
    for alg in ["multilevel", "drb"] {
        let o = taskmap(&[
            "map",
            "-A",
            alg,
            "--capacity",
            "1000",
            "-e",
            "0.03",
            "--format",
            "json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{alg}: {}", stderr(&o));
        let max = json(&o)["evaluation"]["loads"][0]["max"].as_u64().unwrap();
        assert!(max <= 66, "{alg}: {max}");
    }
    // Capacities beyond the total weight (1,024) map as the total itself, even where their
    // sum passes 2^64.
    let cost = |cap: &str| {
        let o = taskmap(&["map", "--capacity", cap, "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{cap}: {}", stderr(&o));
        json(&o)["evaluation"]["comm_cost"].clone()
    };
    assert_eq!(cost("18446744073709551615"), cost("1024"));
    assert_eq!(cost("5089654412038363649"), cost("1024"));
}

#[test]
fn fixed_tasks_stay_on_their_pes_and_bad_pin_files_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let g = fixture("delaunay_n10.graph");
    let pins = dir.path().join("pins.map");
    std::fs::write(&pins, "% task pe\n3\n0 15\n1023 0\n512 7\n").unwrap();
    let out = dir.path().join("m.pes");
    for alg in ["multilevel", "drb", "multilevel,per_pe=2"] {
        let o = taskmap(&[
            "map",
            "-g",
            &g,
            "-a",
            "torus:4x4",
            "-A",
            alg,
            "--fixed",
            pins.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{alg}: {}", stderr(&o));
        let pes: Vec<u32> = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect();
        assert_eq!((pes[0], pes[1023], pes[512]), (15, 0, 7), "{alg}");
    }
    // Malformed pin files: the place and what is wrong, exit 2, and a mapper that cannot
    // honour pins is refused.
    for (text, msg) in [
        ("2\n0 1\n", "announces 2 fixed tasks but the file has 1"),
        ("1\n0 16\n", "PE 16 out of range"),
        ("2\n5 1\n5 2\n", "task 5 is fixed twice"),
        ("1\n1024 1\n", "task 1024 out of range"),
        ("1\nx 1\n", "expected a task id"),
        ("1\n0 1 2\n", "expected \"task pe\""),
        ("3\n-1\n2\n", "one line per task"),
    ] {
        std::fs::write(&pins, text).unwrap();
        let o = taskmap(&[
            "map",
            "-g",
            &g,
            "-a",
            "torus:4x4",
            "--fixed",
            pins.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{text:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("pins.map:"), "{text:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(msg), "{text:?}: {}", stderr(&o));
    }
    std::fs::write(&pins, "1\n0 1\n").unwrap();
    let o = taskmap(&[
        "map",
        "-g",
        &g,
        "-a",
        "torus:4x4",
        "-A",
        "gtwp",
        "--fixed",
        pins.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("drb, multilevel and exact"),
        "{}",
        stderr(&o)
    );
}

/// Outputs never destroy what they should not: a link is followed (its target gets the
/// mapping), a device is written in place (not replaced by a file), an existing file keeps
/// its permissions, and an output that is one of the inputs is refused.
#[cfg(unix)]
#[test]
fn outputs_follow_links_keep_devices_and_modes_and_spare_inputs() {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    // A link to a file: the target is replaced, the link stays a link.
    std::fs::write(p("real.map"), "old\n").unwrap();
    std::os::unix::fs::symlink("real.map", p("link.map")).unwrap();
    let o = taskmap(&["map", "-o", p("link.map").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(p("link.map"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(p("real.map"))
            .unwrap()
            .lines()
            .count(),
        1025
    );
    // An existing file keeps its mode.
    std::fs::write(p("private.map"), "").unwrap();
    std::fs::set_permissions(p("private.map"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = taskmap(&["map", "-o", p("private.map").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mode = std::fs::metadata(p("private.map"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // /dev/null stays a character device (it is not renamed over).
    let o = taskmap(&["map", "-o", "/dev/null"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    // `-o /dev/stdout` with stdout appended to a log: the log keeps its first line and
    // gains the mapping (a rename would have replaced the log).
    std::fs::write(p("log.txt"), "first line\n").unwrap();
    let log = std::fs::OpenOptions::new()
        .append(true)
        .open(p("log.txt"))
        .unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_taskmap"))
        .args(["map", "--quiet", "-o", "/dev/stdout"])
        .stdout(log)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let text = std::fs::read_to_string(p("log.txt")).unwrap();
    assert!(text.starts_with("first line\n"), "{text}");
    assert!(
        text.lines().count() > 1024,
        "{} lines",
        text.lines().count()
    );
    // The output is an input, by its own path or through a link: exit 2, input intact.
    let graph = p("g.graph");
    std::fs::copy(fixture("delaunay_n10.graph"), &graph).unwrap();
    let before = std::fs::read(&graph).unwrap();
    std::os::unix::fs::symlink("g.graph", p("g-link.map")).unwrap();
    for out in [graph.clone(), p("g-link.map")] {
        let o = taskmap(&[
            "map",
            "-g",
            graph.to_str().unwrap(),
            "-a",
            "torus:4x4",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("is the input file"), "{}", stderr(&o));
        let o = taskmap(&["convert", graph.to_str().unwrap(), out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&graph).unwrap(), before);
}

/// A graph of no tasks maps to a mapping file that `eval` reads back.
#[test]
fn an_empty_graph_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("zero.graph");
    let m = dir.path().join("zero.map");
    std::fs::write(&g, "0 0\n").unwrap();
    let (g, m) = (g.to_str().unwrap(), m.to_str().unwrap());
    let o = taskmap(&["map", "-g", g, "-a", "torus:2x2", "-o", m]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = taskmap(&["eval", "-g", g, "-a", "torus:2x2", "-m", m]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// Formats that cannot hold a graph's vertex weights or its last isolated task refuse it
/// (exit 2, no file) instead of dropping them.
#[test]
fn convert_refuses_to_lose_data() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("vw.graph");
    std::fs::write(&src, "3 2 010\n2 2\n3 1 3\n1 2\n").unwrap();
    let lone = dir.path().join("lone.graph");
    std::fs::write(&lone, "3 1\n2\n1\n\n").unwrap();
    for (input, out) in [(&src, "vw.mtx"), (&src, "vw.edges"), (&lone, "lone.edges")] {
        let out = dir.path().join(out);
        let o = taskmap(&["convert", input.to_str().unwrap(), out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(!out.exists());
    }
    // Without weights the Matrix Market copy reads back the same graph.
    let plain = dir.path().join("lone.mtx");
    let o = taskmap(&["convert", lone.to_str().unwrap(), plain.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = taskmap(&["info", plain.to_str().unwrap()]);
    assert!(
        stdout(&o).contains("tasks               3"),
        "{}",
        stdout(&o)
    );
}

/// SIGTERM during a write removes the temporary file and leaves no output: a generated
/// grid is stopped once its temporary file exists (a larger grid is tried when the write
/// ended first).
#[cfg(unix)]
#[test]
fn a_stopped_write_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g.graph");
    let tmp_exists = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".tmp"))
    };
    for size in ["1000x1000", "2000x2000", "3000x3000"] {
        let _ = std::fs::remove_file(&out);
        let mut child = Command::new(env!("CARGO_BIN_EXE_taskmap"))
            .args(["gen", "grid", size, "-o", out.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        while !tmp_exists() && child.try_wait().unwrap().is_none() {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        if child.try_wait().unwrap().is_some() {
            assert!(!tmp_exists());
            continue; // the write ended before it was seen: try a larger one
        }
        let kill = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "{status:?}");
        assert!(!tmp_exists(), "the temporary file was left behind");
        // Stopped mid-write: no output, unless the rename came just before the signal
        // (then the output is whole).
        if out.exists() {
            let o = taskmap(&["info", out.to_str().unwrap()]);
            let tasks: u64 = size.split('x').map(|d| d.parse::<u64>().unwrap()).product();
            assert!(stdout(&o).contains(&tasks.to_string()), "{}", stdout(&o));
        }
        return;
    }
    panic!("every write ended before its temporary file was seen");
}

/// A signal ends a run that waits to open a FIFO for its output (no reader yet): opening it
/// must not hold what the signal handler needs.
#[test]
fn a_signal_ends_a_write_waiting_on_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.graph");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_taskmap"))
        .args(["gen", "ring", "10", "-o", fifo.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Give it time to block on the FIFO's open.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "it did not wait for a reader"
    );
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > std::time::Duration::from_secs(10) {
            let _ = child.kill();
            panic!("SIGTERM did not end a write waiting on a FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(child.wait().unwrap().code(), Some(130));
}

#[test]
fn hetero_allocates_simulates_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture("hetero/two_clusters.ttig");
    let out = dir.path().join("alloc.txt");
    let out = out.to_str().unwrap();
    let o = taskmap(&["hetero", &model, "-f", "json", "-o", out]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let a = json(&o);
    assert_eq!(a["allocation_source"], "mateha");
    assert_eq!(a["tasks"].as_array().unwrap().len(), 12);
    assert_eq!(a["subtasks"].as_array().unwrap().len(), 18);
    let ms = a["makespan"].as_f64().unwrap();
    let latest = a["subtasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["finish"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(ms, latest);
    // The written allocation, simulated again, gives the same final time.
    let o = taskmap(&["hetero", &model, "--mapping", out, "-f", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let b = json(&o);
    assert_eq!(
        (b["allocation_source"].as_str(), b["makespan"].as_f64()),
        (Some("file"), Some(ms))
    );
    assert_eq!(a["tasks"], b["tasks"]);
    // mateha-ls starts from MATEHa's allocation and never worsens it.
    let o = taskmap(&["hetero", &model, "-A", "mateha-ls", "-f", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(json(&o)["makespan"].as_f64().unwrap() <= ms);
    // The worked example: the optimum puts everything on the fast processor.
    let o = taskmap(&[
        "hetero",
        &fixture("hetero/small.ttig"),
        "--optimal",
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = json(&o);
    assert_eq!(s["makespan"].as_f64(), Some(12.0));
    assert_eq!(s["optimal"]["makespan"].as_f64(), Some(12.0));
    assert_eq!(s["optimal"]["evaluated"].as_u64(), Some(4));
    // An STG task graph on a platform file.
    let o = taskmap(&[
        "hetero",
        "--stg",
        &fixture("hetero/rand0000.stg"),
        "--platform",
        &fixture("hetero/two_clusters.platform"),
        "--slowness",
        "1,1.2",
        "--bytes",
        "500",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o)
            .contains("50 tasks, 50 sub-tasks, 96 messages; 30 processors (20 p4, 10 celeron)"),
        "{}",
        stdout(&o)
    );
    // Messages that overflow only through the platform's COMM line: the error names the
    // platform file as well as the program's.
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.platform");
    let text = std::fs::read_to_string(fixture("hetero/two_clusters.platform")).unwrap();
    std::fs::write(
        &huge,
        text.replace("COMM switch 200 0.16", "COMM switch 1e308 1e-7"),
    )
    .unwrap();
    let o = taskmap(&[
        "hetero",
        "--stg",
        &fixture("hetero/rand0000.stg"),
        "--platform",
        huge.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("huge.platform") && e.contains("rand0000.stg:"),
        "{e}"
    );
    assert!(e.contains("slowest communication"), "{e}");
}

#[test]
fn hetero_reads_pegasus_workflows() {
    let o = taskmap(&[
        "hetero",
        "--dax",
        &fixture("hetero/Montage_25.xml"),
        "--platform",
        &fixture("hetero/two_clusters.platform"),
        "--slowness",
        "1,1.5",
        "-A",
        "mateha-ls",
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["tasks"].as_array().unwrap().len(), 25);
    assert_eq!(j["allocation_source"], "mateha-ls");
    // A WfCommons instance through --workflow (--dax is its other name).
    let o = taskmap(&[
        "hetero",
        "--workflow",
        &fixture("hetero/montage-chameleon-2mass-005d-001.json.gz"),
        "--platform",
        &fixture("hetero/two_sites.platform"),
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["tasks"].as_array().unwrap().len(), 58);
    // HEFT follows its own order; heft-ls is never longer; --kicks is heft-ls's, not HEFT's.
    let montage = fixture("hetero/montage-chameleon-2mass-005d-001.json.gz");
    let platform = fixture("hetero/two_sites.platform");
    let run = |extra: &[&str]| {
        let mut args = vec!["hetero", "--workflow", &montage, "--platform", &platform];
        args.extend_from_slice(extra);
        taskmap(&args)
    };
    let o = run(&["-A", "heft", "--kicks", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("apply to -A mateha-ls and heft-ls only"),
        "{}",
        stderr(&o)
    );
    let mut times = Vec::new();
    for extra in [&["-A", "heft"][..], &["-A", "heft-ls", "--kicks", "5"]] {
        let o = run(&[extra, &["-f", "json"]].concat());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(json(&o)["allocation_source"], extra[1]);
        times.push(json(&o)["makespan"].as_f64().unwrap());
    }
    assert!(times[1] <= times[0], "{times:?}");
    // The written allocation and order replay heft-ls's schedule.
    let dir = tempfile::tempdir().unwrap();
    let (alloc, order) = (dir.path().join("a.txt"), dir.path().join("o.txt"));
    let (alloc, order) = (alloc.to_str().unwrap(), order.to_str().unwrap());
    let o = run(&[
        "-A",
        "heft-ls",
        "--kicks",
        "5",
        "-o",
        alloc,
        "--write-order",
        order,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&["--mapping", alloc, "--order", order, "-f", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["makespan"].as_f64().unwrap(), times[1]);
    // --priority rank: HEFT follows its own order either way, MATEHa's run accepts it; an
    // unknown priority is refused.
    let o = run(&["-A", "heft", "--priority", "rank", "-f", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["makespan"].as_f64().unwrap(), times[0]);
    let o = run(&["--priority", "rank", "-f", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&["--priority", "deadline"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown --priority \"deadline\" (file, rank)"),
        "{}",
        stderr(&o)
    );
    // One file under two spellings, and a name an order file cannot hold: refused, and
    // nothing written.
    let same = dir.path().join("same.txt");
    let same_too = dir.path().join(".").join("same.txt");
    let o = run(&[
        "-A",
        "heft",
        "-o",
        same.to_str().unwrap(),
        "--write-order",
        same_too.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("-o and --write-order name the same file"),
        "{}",
        stderr(&o)
    );
    assert!(!same.exists());
    // a link to the other output is the same file too
    #[cfg(unix)]
    {
        let target = dir.path().join("target.txt");
        std::fs::write(&target, "old\n").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let o = run(&[
            "-A",
            "heft",
            "-o",
            link.to_str().unwrap(),
            "--write-order",
            target.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("name the same file"), "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old\n");
    }
    let unnamed = dir.path().join("unnamed.json");
    let text = std::fs::read_to_string(fixture("bad/wfc_negative_size.json"))
        .unwrap()
        .replace("\"a\"", "\"\"")
        .replace("-10", "10");
    std::fs::write(&unnamed, text).unwrap();
    let map = dir.path().join("unnamed.map");
    let o = taskmap(&[
        "hetero",
        "--workflow",
        unnamed.to_str().unwrap(),
        "--platform",
        &platform,
        "-A",
        "heft",
        "-o",
        map.to_str().unwrap(),
        "--write-order",
        order,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--write-order: the sub-task name \"\""),
        "{}",
        stderr(&o)
    );
    assert!(!map.exists());
    // An output that cannot be written (its directory does not exist) leaves none of the
    // others behind, nor a temporary file.
    let (svg, missing) = (dir.path().join("s.svg"), dir.path().join("no/o.txt"));
    let o = run(&[
        "-A",
        "heft",
        "--svg",
        svg.to_str().unwrap(),
        "-o",
        map.to_str().unwrap(),
        "--write-order",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no/o.txt"), "{}", stderr(&o));
    assert!(!svg.exists() && !map.exists());
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // --slowness and --bytes belong to --stg and --workflow.
    let o = taskmap(&["hetero", &fixture("hetero/small.ttig"), "--slowness", "1,2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--slowness applies to --stg and --workflow only"),
        "{}",
        stderr(&o)
    );
    for (file, want) in [
        ("bad/dax_unknown_ref.xml", "dax_unknown_ref.xml:10:5: no job has the id \"C\""),
        ("bad/wfc_unknown_parent.json", "wfc_unknown_parent.json:23:7: task \"b\" lists \"c\" as a parent, but no task has that id"),
    ] {
        let o = taskmap(&[
            "hetero",
            "--workflow",
            &fixture(file),
            "--platform",
            &fixture("hetero/two_clusters.platform"),
        ]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
}

#[test]
fn hetero_bad_inputs_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture("hetero/two_clusters.ttig");
    let o = taskmap(&["hetero", &fixture("bad/ttigha_cycle.ttig")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("ttigha_cycle.ttig:12:6: this message lies on a cycle"),
        "{}",
        stderr(&o)
    );
    let o = taskmap(&["hetero", &model, "--optimal", "--limit", "10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("more than the limit 10"),
        "{}",
        stderr(&o)
    );
    let short = dir.path().join("short.txt");
    std::fs::write(&short, "0\n1\n").unwrap();
    let o = taskmap(&["hetero", &model, "--mapping", short.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("short.txt:2:"), "{}", stderr(&o));
    let o = taskmap(&["hetero", &model, "-A", "cpop"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("invalid value 'cpop' for '--algorithm"),
        "{}",
        stderr(&o)
    );
    let o = taskmap(&[
        "hetero",
        "--stg",
        &fixture("bad/stg_cycle.stg"),
        "--platform",
        &fixture("hetero/two_clusters.platform"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("stg_cycle.stg:3:9:"), "{}", stderr(&o));
    // Outputs that would overwrite an input, or each other, are refused.
    let copy = dir.path().join("m.ttig");
    std::fs::copy(&model, &copy).unwrap();
    let copy = copy.to_str().unwrap();
    for args in [vec!["-o", copy], vec!["--svg", copy]] {
        let mut all = vec!["hetero", copy];
        all.extend(args);
        let o = taskmap(&all);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("is the input file"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(copy).unwrap(), std::fs::read(&model).unwrap());
    let both = dir.path().join("both.out");
    let both = both.to_str().unwrap();
    let o = taskmap(&["hetero", copy, "-o", both, "--svg", both]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("name the same file"), "{}", stderr(&o));
    // Flags of the other inputs are refused, not ignored.
    for args in [
        vec!["hetero", copy, "--platform", copy],
        vec!["hetero", copy, "--optimal", "--order", copy],
        vec!["hetero", copy, "--kicks", "5"],
        vec!["hetero", copy, "-A", "mateha", "--seed", "2"],
    ] {
        assert_eq!(taskmap(&args).status.code(), Some(2), "{args:?}");
    }
    // A failed write leaves no file.
    let out = dir.path().join("missing-dir/alloc.txt");
    let o = taskmap(&["hetero", &model, "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());
}

#[test]
fn hetero_draws_the_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("s.svg");
    let o = taskmap(&[
        "hetero",
        &fixture("hetero/two_clusters.ttig"),
        "--svg",
        svg.to_str().unwrap(),
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    // A bar per sub-task, with its times in the tooltip; a row per processor.
    assert_eq!(text.matches(r#"class="busy""#).count(), 18);
    assert_eq!(text.matches(r#"class="waiting""#).count(), 8);
    for s in j["subtasks"].as_array().unwrap() {
        let tip = format!(
            "<title>{} ({}): {} - {}</title>",
            s["name"].as_str().unwrap(),
            s["task"].as_str().unwrap(),
            s["start"].as_f64().unwrap(),
            s["finish"].as_f64().unwrap()
        );
        assert!(text.contains(&tip), "{tip}");
    }
}

#[test]
fn hetero_follows_a_given_order() {
    let dir = tempfile::tempdir().unwrap();
    let model = fixture("hetero/small.ttig");
    let alloc = dir.path().join("alloc.txt");
    std::fs::write(&alloc, "0\n0\n").unwrap();
    let alloc = alloc.to_str().unwrap();
    let run = |order: &str| {
        let path = dir.path().join("order.txt");
        std::fs::write(&path, order).unwrap();
        taskmap(&[
            "hetero",
            &model,
            "--mapping",
            alloc,
            "--order",
            path.to_str().unwrap(),
            "-f",
            "json",
        ])
    };
    // b1 before a2 on the fast processor: a1 0-4, b1 4-10, a2 10-12.
    let o = run("a1 b1 a2   # processor 0\n\n");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let finish: Vec<f64> = j["subtasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["finish"].as_f64().unwrap())
        .collect();
    assert_eq!(finish, vec![4.0, 12.0, 10.0]);
    assert_eq!(
        j["processors"][0]["order"],
        serde_json::json!(["a1", "b1", "a2"])
    );
    // b1 first waits for a1 forever; an unknown name; a sub-task on the wrong processor,
    // listed twice or missing.
    for (order, want) in [
        (
            "b1 a1 a2\n",
            "order.txt:1:1: the order never finishes: processor 0 waits here for sub-task \"b1\", whose inputs depend on sub-tasks queued behind others",
        ),
        (
            "a1 b1   # a2 \n",
            "order.txt:1:1: the line of processor 0 does not list sub-task \"a2\"",
        ),
        ("a1 zz\n", "order.txt:1:4: unknown sub-task \"zz\""),
        (
            "a1 a2\nb1\n",
            "order.txt:2:1: sub-task \"b1\" is on the line of processor 1, but its task B is allocated to processor 0",
        ),
        (
            "a1 b1 a2 b1\n",
            "order.txt:1:10: sub-task \"b1\" is listed a second time (first at 1:4)",
        ),
        (
            "a1 a2   # b1 forgotten\n\n",
            "order.txt:1:1: the line of processor 0 does not list sub-task \"b1\" (of task B, allocated to processor 0)",
        ),
        (
            "a1 a2 b1\n\nb1\n",
            "order.txt:3:1: a line for processor 2, but the platform has 2",
        ),
    ] {
        let o = run(order);
        assert_eq!(o.status.code(), Some(2), "{order}");
        assert!(stderr(&o).contains(want), "{order}: {}", stderr(&o));
    }
}

#[test]
fn amap_shows_the_preprocessors_outputs() {
    // realtime.amg: f_track = 0.8 + 0.5 f_check and f_check = f_track + 0.2, so f_check
    // = 2, f_track = 1.8, f_log = 1; l'(track, check) = 1.8 x 10 + 2 x 0.5 x 5 = 23.
    let model = fixture("amap/realtime.amg");
    let o = taskmap(&["amap", &model, "-k", "2", "--show-model", "-f", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    let p = &r["preprocessor"];
    let module = |name: &str| {
        p["modules"]
            .as_array()
            .unwrap()
            .iter()
            .position(|m| m["name"] == name)
            .unwrap()
    };
    let f = |name: &str| p["modules"][module(name)]["f"].as_f64().unwrap();
    for (name, want) in [("sense", 1.0), ("track", 1.8), ("check", 2.0), ("log", 1.0)] {
        assert!((f(name) - want).abs() < 1e-9, "f_{name} = {}", f(name));
    }
    assert!((p["modules"][module("track")]["m_prime"].as_f64().unwrap() - 54.0).abs() < 1e-9);
    let (t, c) = (module("track") as u64, module("check") as u64);
    let l = p["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["a"].as_u64() == Some(t.min(c)) && l["b"].as_u64() == Some(t.max(c)))
        .unwrap();
    assert!((l["l_prime"].as_f64().unwrap() - 23.0).abs() < 1e-9, "{l}");
    // The filters may run in parallel; the exclusive branches track and alarm may not.
    let pairs: Vec<(u64, u64)> = p["parallel"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x[0].as_u64().unwrap(), x[1].as_u64().unwrap()))
        .collect();
    let pair = |a: &str, b: &str| {
        let (x, y) = (module(a) as u64, module(b) as u64);
        (x.min(y), x.max(y))
    };
    assert!(pairs.contains(&pair("filterA", "filterB")), "{pairs:?}");
    assert!(!pairs.contains(&pair("track", "alarm")), "{pairs:?}");
    // The human report prints the tables; without --show-model nothing changes.
    let o = taskmap(&["amap", &model, "-k", "2", "--show-model"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        text.contains("m'_i = m_i f_i") && text.contains("of modules may run in parallel"),
        "{text}"
    );
    let o = taskmap(&["amap", &model, "-k", "2", "-f", "json"]);
    assert!(json(&o).get("preprocessor").is_none());
    assert_eq!(taskmap(&["amap", &model, "--full"]).status.code(), Some(2));
}

#[test]
fn amap_maps_reports_and_writes_the_assignment() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("procs.txt");
    let out = out.to_str().unwrap();
    let model = fixture("amap/cholesky4.amg");
    let o = taskmap(&[
        "amap",
        &model,
        "-k",
        "4",
        "--system",
        "multibus:2",
        "--itu-time",
        "0.1",
        "-f",
        "json",
        "-o",
        out,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(
        (r["modules"].as_u64(), r["links"].as_u64()),
        (Some(20), Some(30))
    );
    let (t_seq, t_par, t_real) = (
        r["t_seq"].as_f64().unwrap(),
        r["t_par"].as_f64().unwrap(),
        r["t_real"].as_f64().unwrap(),
    );
    assert_eq!(t_seq, 574.0);
    assert!(t_real >= t_par && r["bounds_hold"] == true, "{r}");
    // the written assignment lists a processor per module, as reported.
    let written: Vec<u64> = std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let reported: Vec<u64> = r["processor_of"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(written, reported);
    // alloc-ls never loses to the paper's ALLOC.
    let o = taskmap(&[
        "amap",
        &model,
        "-k",
        "4",
        "--system",
        "multibus:2",
        "--itu-time",
        "0.1",
        "-f",
        "json",
        "-A",
        "alloc-ls",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(json(&o)["t_real"].as_f64().unwrap() <= t_real);
    // The human report, on the stochastic example and on an STG graph.
    let o = taskmap(&[
        "amap",
        &fixture("amap/realtime.amg"),
        "-k",
        "2",
        "--system",
        "bus",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("*** PROCESSOR UTILIZATION ***"),
        "{}",
        stdout(&o)
    );
    let o = taskmap(&[
        "amap",
        "--stg",
        &fixture("hetero/rand0000.stg"),
        "-k",
        "8",
        "--system",
        "banyan",
        "--itus",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("50 modules, 96 links; 8 processors, banyan"),
        "{}",
        stdout(&o)
    );
    // A WfCommons trace: a module per task, a link per parent-child pair.
    let o = taskmap(&[
        "amap",
        "--workflow",
        &fixture("hetero/montage-chameleon-2mass-005d-001.json.gz"),
        "-k",
        "4",
        "--itu-bytes",
        "1e6",
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(
        (r["modules"].as_u64(), r["links"].as_u64()),
        (Some(58), Some(114))
    );
    // The delay table, with the queue simulated beside it.
    let o = taskmap(&[
        "delay",
        "--system",
        "bus",
        "-k",
        "4",
        "--rho",
        "0.5",
        "--simulate",
        "20000",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let row: Vec<f64> = stdout(&o)
        .lines()
        .last()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    // ρ, AP, u, D, AP and D simulated: the single bus is exact up to the noise.
    assert_eq!(row.len(), 6);
    assert!((row[1] - row[4]).abs() < 0.05 * row[1] && (row[3] - row[5]).abs() < 0.05 * row[3]);
}

#[test]
fn amap_bad_inputs_exit_2() {
    let model = fixture("amap/cholesky4.amg");
    let bad = fixture("bad/amg_unknown_module.amg");
    for (args, want) in [
        (
            vec!["amap", &bad, "-k", "2"],
            "amg_unknown_module.amg:3:8: no module is named \"c\"",
        ),
        (
            vec!["amap", &model, "-k", "6", "--system", "banyan"],
            "a Banyan network joins a power of two",
        ),
        (
            vec!["amap", &model, "-k", "2", "--system", "ring"],
            "interconnect \"ring\"",
        ),
        (
            vec!["amap", &model, "-k", "2", "--itu-time=-1"],
            "the ITU time must be finite and >= 0",
        ),
        (
            vec!["amap", &model, "-k", "2", "--tolerance", "1e-20"],
            "the frame tolerance must lie in [1e-12, 1)",
        ),
        (
            vec!["amap", &model, "-k", "2", "--budget", "5"],
            "--budget applies to -A alloc-ls only",
        ),
        (
            vec!["amap", &model, "-k", "2", "-A", "heft"],
            "invalid value 'heft' for '--algorithm",
        ),
        (
            vec!["amap", &model, "-k", "5000"],
            "the models take 1 to 4096",
        ),
        (
            vec!["amap", &model, "-k", "2", "-o", &model],
            "is the input file",
        ),
        (
            vec!["delay", "--system", "bus", "-k", "4", "--rho", "0"],
            "--rho takes loads from 10^-9",
        ),
        (
            // 1 / rho overflows: the simulation would never end
            vec![
                "delay",
                "--system",
                "bus",
                "-k",
                "2",
                "--rho",
                "1e-308",
                "--simulate",
                "10",
            ],
            "--rho takes loads from 10^-9",
        ),
        (
            vec!["amap", &model, "-k", "2", "--itus", "5"],
            "--itus applies to --stg only",
        ),
        (
            vec!["amap", &model, "-k", "2", "--negative-as-zero"],
            "apply to --workflow only",
        ),
        (
            vec!["amap", &model, "-k", "4", "--speeds", "1,2"],
            "--speeds gives 2 processors, not the 4 of -k",
        ),
        (
            vec!["amap", &model, "-k", "2", "--speeds", "1:2,3"],
            "--speeds gives more than the 2 processors",
        ),
        (
            vec!["amap", &model, "-k", "2", "--speeds", "1:99999999999"],
            "--speeds gives more than the 2 processors",
        ),
        (
            vec!["amap", &model, "-k", "2", "--speeds", "0"],
            "--speeds: a speed must be a number above 0, not \"0\"",
        ),
        (
            vec!["amap", &model, "-k", "2", "--speeds", "2:0"],
            "\"2:0\" needs a whole count of processors of at least 1",
        ),
        (
            vec!["amap", &model, "-k", "2", "--speeds", "inf"],
            "a speed must be a number above 0, not \"inf\"",
        ),
        (
            vec!["amap", &model, "-k", "2", "--assignment", &model],
            "cholesky4.amg:4:1: expected a number",
        ),
        (
            vec!["amap", &model, "-k", "2", "--delay-model", "Paper"],
            "invalid value 'Paper' for '--delay-model <MODEL>'",
        ),
        (
            vec![
                "delay",
                "--system",
                "bus",
                "-k",
                "4",
                "--delay-model",
                "printed",
            ],
            "[possible values: queue, paper]",
        ),
        (
            vec!["delay", "--system", "bus", "-k", "4", "--delay-model="],
            "a value is required for '--delay-model <MODEL>'",
        ),
        (
            vec![
                "amap",
                &model,
                "-k",
                "2",
                "--assignment",
                &model,
                "-A",
                "alloc",
            ],
            "cannot be used with",
        ),
    ] {
        let o = taskmap(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
    // an overflowing model is refused, not simulated.
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.amg");
    std::fs::write(
        &big,
        "MODULE a 1\nMODULE b 1\nMODULE c 1\nLINK a b 1e308\nLINK a c 1e308\n",
    )
    .unwrap();
    let o = taskmap(&["amap", big.to_str().unwrap(), "-k", "2"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("big.amg: the processing and communication times add up beyond"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn delay_model_flag_chooses_the_reading() {
    let model = fixture("amap/cholesky4.amg");
    let run = |args: &[&str]| {
        let o = taskmap(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        json(&o)
    };
    let delay = [
        "delay", "--system", "dual-bus", "-k", "4", "--rho", "1", "-f", "json",
    ];
    let queue = run(&delay);
    let paper = run(&[&delay[..], &["--delay-model", "paper"]].concat());
    assert_eq!(
        (&queue["delay_model"], &paper["delay_model"]),
        (&serde_json::json!("queue"), &serde_json::json!("paper"))
    );
    // the paper's D_2 at k = 4, ρ = 1: 237/52; the queue's 49/16.
    let d = |v: &serde_json::Value| v["rows"][0]["delay"].as_f64().unwrap();
    assert!((d(&paper) - 237.0 / 52.0).abs() < 1e-12, "{}", d(&paper));
    assert!((d(&queue) - 49.0 / 16.0).abs() < 1e-12, "{}", d(&queue));
    let amap = [
        "amap",
        &model,
        "-k",
        "4",
        "--system",
        "banyan",
        "--itu-time",
        "0.1",
        "-f",
        "json",
    ];
    let explicit = run(&[&amap[..], &["--delay-model", "queue"]].concat());
    assert_eq!(run(&amap), explicit, "queue is the default");
    let printed = run(&[&amap[..], &["--delay-model=paper"]].concat());
    assert_eq!(printed["delay_model"], "paper");
    assert_ne!(printed["delay"], explicit["delay"]);
    let o = taskmap(&["amap", &model, "-k", "2", "--delay-model", "paper"]);
    assert!(
        stdout(&o).contains("ITU times (delay model paper, load rho"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn amap_speeds_and_given_assignments() {
    let dir = tempfile::tempdir().unwrap();
    let blind = dir.path().join("blind.txt");
    let blind = blind.to_str().unwrap();
    let model = fixture("amap/cholesky4.amg");
    let base = ["amap", &model, "-k", "4", "--itu-time", "0.1", "-f", "json"];
    let run = |extra: &[&str]| {
        let o = taskmap(&[&base[..], extra].concat());
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", stderr(&o));
        json(&o)
    };
    let mapped = run(&["-o", blind]);
    // scoring the mapper's own assignment gives its report again.
    let scored = run(&["--assignment", blind]);
    for key in ["t_seq", "t_par", "t_real", "processor_of", "delay"] {
        assert_eq!(mapped[key], scored[key], "{key}");
    }
    assert_eq!(scored["reduced"], false, "no step ran");
    // one processor three times faster: the speed-blind assignment scored on it, and the
    // mapper told the speeds.
    let blind_fast = run(&["--assignment", blind, "--speeds", "3,1:3"]);
    let aware = run(&["--speeds", "3,1:3"]);
    assert_eq!(aware["speeds"], serde_json::json!([3.0, 1.0, 1.0, 1.0]));
    let t_seq = aware["t_seq"].as_f64().unwrap();
    assert!((t_seq - 574.0 / 3.0).abs() < 1e-9, "T_seq on the fastest");
    let (tb, ta) = (
        blind_fast["t_real"].as_f64().unwrap(),
        aware["t_real"].as_f64().unwrap(),
    );
    assert!(
        tb < mapped["t_real"].as_f64().unwrap(),
        "a faster processor helps"
    );
    assert!(ta < tb, "knowing the speeds helps: {ta} >= {tb}");
    assert_eq!(aware["bounds_hold"], true, "{aware}");
    // the human report shows the speeds.
    let o = taskmap(&["amap", &model, "-k", "4", "--speeds", "3,1:3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("processor speeds: 3,1:3 (T_seq on the fastest)"),
        "{text}"
    );
    assert!(text.contains("  speed  total (%)"), "{text}");
    // an assignment that overfills a processor's memory is scored, with exit code 1.
    let small = dir.path().join("small.amg");
    std::fs::write(&small, "MODULE a 1 mem=4\nMODULE b 1 mem=4\nLINK a b 1\n").unwrap();
    let both = dir.path().join("both.txt");
    std::fs::write(&both, "0\n0\n").unwrap();
    let args = |mem: &str| {
        taskmap(&[
            "amap",
            small.to_str().unwrap(),
            "-k",
            "2",
            "--memory",
            mem,
            "--assignment",
            both.to_str().unwrap(),
        ])
    };
    let o = args("6");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("processor 0 (id 1 in the report) holds modules of memory 8, above its 6"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("T_REAL"));
    assert!(stdout(&o).contains("steps 1-3: skipped (the assignment is given)"));
    assert_eq!(args("8").status.code(), Some(0));
}

#[test]
fn map_refines_an_initial_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let g = fixture("delaunay_n10.graph");
    let start = dir.path().join("start.map");
    let start = start.to_str().unwrap();
    let out = dir.path().join("out.pes");
    let out = out.to_str().unwrap();
    // a poor start: contiguous blocks of task ids
    let o = taskmap(&[
        "map",
        "-g",
        &g,
        "-a",
        "torus:4x4",
        "-A",
        "block",
        "-o",
        start,
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let before = json(&o)["evaluation"]["comm_cost"].as_u64().unwrap();
    let o = taskmap(&[
        "map",
        "-g",
        &g,
        "-a",
        "torus:4x4",
        "--initial",
        start,
        "-o",
        out,
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    let after = r["evaluation"]["comm_cost"].as_u64().unwrap();
    assert_eq!(r["initial"]["comm_cost"].as_u64(), Some(before));
    assert!(after < before, "{after} >= {before}");
    // the moved count is the number of tasks whose PE differs between the two files
    let read = |p: &str, scotch: bool| -> Vec<u32> {
        let text = std::fs::read_to_string(p).unwrap();
        let lines = text.lines().skip(usize::from(scotch));
        lines
            .map(|l| l.split_whitespace().last().unwrap().parse().unwrap())
            .collect()
    };
    let (a, b) = (read(start, true), read(out, false));
    let moved = a.iter().zip(&b).filter(|(x, y)| x != y).count() as u64;
    assert_eq!(r["initial"]["moved_tasks"].as_u64(), Some(moved));
    assert!(moved > 0);
    // refining the result again is no worse, and the human report names the start
    let o = taskmap(&[
        "map",
        "-g",
        &g,
        "-a",
        "torus:4x4",
        "--initial",
        out,
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let again = json(&o);
    assert_eq!(again["initial"]["comm_cost"].as_u64(), Some(after));
    assert!(again["evaluation"]["comm_cost"].as_u64().unwrap() <= after);
    let o = taskmap(&["map", "-g", &g, "-a", "torus:4x4", "--initial", out]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("initial mapping") && stdout(&o).contains("tasks moved"),
        "{}",
        stdout(&o)
    );
    // a migration cost: the report's migration is the cost times the hops moved, the
    // sum with f_C is below the start's f_C, fewer tasks move than without, and the
    // human report gives the sum
    let refine_at = |c: &str, extra: &[&str]| {
        let args = ["map", "-g", &g, "-a", "torus:4x4", "--initial", start];
        let o = taskmap(&[&args[..], &["--migration-cost", c], extra].concat());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        o
    };
    let with_cost = |c: &str| json(&refine_at(c, &["-f", "json"]));
    let m = with_cost("2");
    let i = &m["initial"];
    let hops = i["moved_hops"].as_u64().unwrap();
    assert_eq!(i["migration_cost"].as_u64(), Some(2));
    assert_eq!(i["migration"].as_u64(), Some(2 * hops));
    assert!(m["evaluation"]["comm_cost"].as_u64().unwrap() + 2 * hops <= before);
    assert!(i["moved_tasks"].as_u64().unwrap() < moved);
    assert_eq!(
        with_cost("0")["initial"]["moved_tasks"].as_u64(),
        Some(moved)
    );
    let o = refine_at("2", &[]);
    assert!(stdout(&o).contains("f_C + migration"), "{}", stdout(&o));
    // the memetic mode is refused before --dump-config prints anything
    let o = taskmap(&[
        "map",
        "-g",
        &g,
        "-a",
        "torus:4x4",
        "-A",
        "multilevel,population=2",
        "--initial",
        start,
        "--dump-config",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // refused: another algorithm, the memetic mode, a malformed or mismatched file
    let bad = dir.path().join("bad.pes");
    std::fs::write(&bad, "0\n1\nx\n").unwrap();
    let short = dir.path().join("short.pes");
    std::fs::write(&short, "0\n1\n").unwrap();
    for (args, want) in [
        (
            vec!["-A", "drb", "--initial", start],
            "--initial applies to -A multilevel",
        ),
        (
            vec!["-A", "multilevel,population=2", "--initial", start],
            "population is not supported",
        ),
        (vec!["--initial", bad.to_str().unwrap()], "bad.pes:3:1"),
        (vec!["--initial", short.to_str().unwrap()], "short.pes"),
        (vec!["--initial", start, "-o", start], "is the input file"),
        (
            vec!["--migration-cost", "1"],
            "--migration-cost applies to --initial only",
        ),
        (
            vec!["--initial", start, "--migration-cost", "4294967297"],
            "--migration-cost must be at most 2^32",
        ),
    ] {
        let o = taskmap(&[&["map", "-g", &g, "-a", "torus:4x4"][..], &args[..]].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

/// Shell completions and the manual page come from the same command definitions.
#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = taskmap(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        let s = stdout(&o);
        assert!(s.contains("taskmap") && s.contains("--graph"), "{shell}");
    }
    assert_eq!(taskmap(&["completions", "tcsh"]).status.code(), Some(2));
    let o = taskmap(&["man"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(
        s.contains(".TH taskmap 1") && s.contains("SUBCOMMANDS"),
        "{s}"
    );
    // One page per subcommand, with its options.
    let o = taskmap(&["man", "map"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(
        s.contains(".TH taskmap-map 1") && s.contains("\\-\\-preset"),
        "{s}"
    );
    let o = taskmap(&["man", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("known: map"), "{}", stderr(&o));
    // -q is accepted by every subcommand.
    let o = taskmap(&["arch", "-q", "torus:2x2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// `-` is standard input for a graph and standard output for a written file (the report
/// then goes to standard error), and `-f csv` gives a header and a line per record.
#[test]
fn dash_is_stdin_and_stdout_and_csv_reports() {
    use std::io::Write as _;
    let gen = taskmap(&["gen", "grid", "8x8", "-o", "-", "--to", "metis"]);
    assert_eq!(gen.status.code(), Some(0), "{}", stderr(&gen));
    assert!(stdout(&gen).starts_with("64 112"), "{}", stdout(&gen));
    let mut child = Command::new(env!("CARGO_BIN_EXE_taskmap"))
        .args(["map", "-g", "-", "-a", "torus:2x2", "-o", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&gen.stdout).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let pes: Vec<u32> = stdout(&o).lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(pes.len(), 64);
    assert!(pes.iter().all(|&p| p < 4));
    assert!(stderr(&o).contains("comm cost f_C"), "{}", stderr(&o));
    let o = taskmap(&["compare", "-A", "block", "-A", "drb", "-f", "csv"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].starts_with("algorithm,comm_cost,"), "{}", lines[0]);
    assert!(lines[1].starts_with("block,") && lines[2].starts_with("drb,"));
    let o = taskmap(&["map", "-f", "csv"]);
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let header: Vec<&str> = lines[0].split(',').collect();
    let values: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(header.len(), values.len());
    let col = header
        .iter()
        .position(|h| *h == "evaluation.comm_cost")
        .unwrap();
    assert!(values[col].parse::<u64>().unwrap() > 0);
}

/// `-t` of `hetero`, `amap` and `sim` is checked before any work: 0 or more than 1024 threads is
/// an error with exit code 2, with or without the parallel part.
#[test]
fn threads_are_checked_first() {
    let (model, amg) = (fixture("hetero/small.ttig"), fixture("amap/realtime.amg"));
    let assign = fixture("golden/inputs/realtime_k2.assign");
    for args in [
        vec!["hetero", &model, "-t", "0"],
        vec!["hetero", &model, "--optimal", "-t", "2000"],
        vec!["amap", &amg, "-k", "2", "-t", "0"],
        vec!["amap", &amg, "-k", "2", "-m", &assign, "-t", "5000"],
        vec![
            "sim",
            "--gen",
            "ring:8",
            "-a",
            "torus:2x2",
            "-A",
            "drb",
            "-t",
            "0",
        ],
    ] {
        let o = taskmap(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("threads"), "{args:?}: {}", stderr(&o));
    }
    let o = taskmap(&["hetero", &model, "--optimal", "-t", "2", "-f", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"optimal\""), "{}", stdout(&o));
}

/// `hetero -A NAME,KEY=VALUE`: the keys give what the old flags gave; a flag and a key for
/// the same parameter, a key the algorithm does not take and a wrong name are refused.
#[test]
fn hetero_keys_follow_the_algorithm() {
    let model = fixture("hetero/two_clusters.ttig");
    let run = |extra: &[&str]| taskmap(&[&["hetero", &model, "-f", "json"][..], extra].concat());
    for (keys, flags) in [
        (
            "mateha-ls,kicks=10,seed=1",
            &["-A", "mateha-ls", "--kicks", "10", "-s", "1"][..],
        ),
        (
            "heft-ls,kicks=5,budget=1000000,seed=3",
            &[
                "-A", "heft-ls", "--kicks", "5", "--budget", "1000000", "--seed", "3",
            ],
        ),
        // Flags are laid over the keys they do not give.
        (
            "mateha-ls,kicks=7,seed=2",
            &["-A", "mateha-ls,kicks=7", "-s", "2"],
        ),
    ] {
        let by_keys = run(&["-A", keys]);
        assert_eq!(by_keys.status.code(), Some(0), "{}", stderr(&by_keys));
        let by_flags = run(flags);
        assert_eq!(by_flags.status.code(), Some(0), "{}", stderr(&by_flags));
        assert_eq!(stdout(&by_keys), stdout(&by_flags), "{keys}");
    }
    // The seed defaults to 0, with or without keys.
    assert_eq!(
        stdout(&run(&["-A", "mateha-ls,kicks=10"])),
        stdout(&run(&["-A", "mateha-ls,kicks=10,seed=0"]))
    );
    for (args, says) in [
        (
            &["-A", "mateha-ls,kicks=5", "--kicks", "6"][..],
            "mateha-ls: parameter \"kicks\" is given twice",
        ),
        (
            &["-A", "heft-ls,seed=1", "-s", "1"],
            "heft-ls: parameter \"seed\" is given twice",
        ),
        (
            &["-A", "mateha,kicks=5"],
            "mateha: unknown parameter \"kicks\"; known: none",
        ),
        (&["-A", "peft,seed=2"], "peft: unknown parameter \"seed\""),
        (
            &["-A", "mateha-ls,samples=4"],
            "mateha-ls: unknown parameter \"samples\"; known: kicks, budget, seed, rounds",
        ),
        (
            &["-A", "mateha-ls,kicks=-1"],
            "\"kicks\" expects a non-negative integer",
        ),
        (
            &["-A", "cpop,kicks=5"],
            "unknown algorithm \"cpop\"; known: mateha, mateha-ls, heft, heft-ls, peft",
        ),
        (
            &["-A", "heft", "--budget", "5"],
            "apply to -A mateha-ls and heft-ls only",
        ),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    // The old flags are hidden from the help.
    let help = stdout(&taskmap(&["hetero", "--help"]));
    assert!(
        help.contains("--algorithm") && !help.contains("--kicks"),
        "{help}"
    );
}

/// `amap -A NAME,KEY=VALUE`: the keys give what the old flags gave; a flag and a key for
/// the same parameter and a key the algorithm does not take are refused.
#[test]
fn amap_keys_follow_the_algorithm() {
    let model = fixture("amap/realtime.amg");
    let run = |extra: &[&str]| {
        taskmap(
            &[
                &[
                    "amap",
                    &model,
                    "-k",
                    "3",
                    "--system",
                    "multibus:2:4",
                    "-f",
                    "json",
                ][..],
                extra,
            ]
            .concat(),
        )
    };
    for (keys, flags) in [
        (
            "alloc,parallelism=2,tolerance=0.001,samples=8",
            &[
                "--parallelism",
                "2",
                "--tolerance",
                "0.001",
                "--samples",
                "8",
            ][..],
        ),
        ("alloc,no-parallelism=1", &["--no-parallelism"]),
        (
            "alloc-ls,budget=100000,samples=2",
            &["-A", "alloc-ls", "--budget", "100000", "--samples", "2"],
        ),
        (
            "alloc-ls,budget=1000,tolerance=0.01",
            &["-A", "alloc-ls,budget=1000", "--tolerance", "0.01"],
        ),
    ] {
        let by_keys = run(&["-A", keys]);
        assert_eq!(by_keys.status.code(), Some(0), "{}", stderr(&by_keys));
        let by_flags = run(flags);
        assert_eq!(by_flags.status.code(), Some(0), "{}", stderr(&by_flags));
        assert_eq!(stdout(&by_keys), stdout(&by_flags), "{keys}");
        assert_eq!(json(&by_keys)["algorithm"], keys.split(',').next().unwrap());
    }
    for (args, says) in [
        (
            &["-A", "alloc,samples=8", "--samples", "8"][..],
            "alloc: parameter \"samples\" is given twice",
        ),
        (
            &["-A", "alloc-ls,budget=5", "--budget", "5"],
            "alloc-ls: parameter \"budget\" is given twice",
        ),
        (
            &["-A", "alloc,budget=5"],
            "alloc: unknown parameter \"budget\"; known: parallelism, no_parallelism, tolerance, samples",
        ),
        (&["-A", "alloc,kicks=5"], "alloc: unknown parameter \"kicks\""),
        (&["-A", "alloc,parallelism=0"], "parallelism must be at least 1"),
        (
            &["-A", "alloc,no_parallelism=1", "--parallelism", "2"],
            "parallelism does not go with no_parallelism",
        ),
        (&["-A", "alloc,samples=0"], "samples takes 1 to 1024, not 0"),
        (&["--samples", "2000"], "samples takes 1 to 1024, not 2000"),
        (&["--budget", "5"], "--budget applies to -A alloc-ls only"),
        (
            &["-A", "mateha"],
            "unknown algorithm \"mateha\"; known: alloc, alloc-ls",
        ),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    let help = stdout(&taskmap(&["amap", "--help"]));
    assert!(
        help.contains("no_parallelism") && !help.contains("--samples"),
        "{help}"
    );
}

/// `taskmap algorithms` lists the keys of the hetero and precedence families.
#[test]
fn algorithms_lists_hetero_and_precedence_keys() {
    let o = taskmap(&["algorithms", "mateha-ls"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = stdout(&o);
    for line in [
        "  kicks = 100:",
        "  budget = 100000000:",
        "  seed = 0:",
        "  rounds = 20:",
    ] {
        assert!(s.contains(line), "{s}");
    }
    let s = stdout(&taskmap(&["algorithms", "mateha"]));
    assert!(s.contains("no parameters"), "{s}");
    let o = taskmap(&["algorithms", "--family", "precedence", "-f", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = json(&o);
    let keys = |i: usize| -> Vec<String> {
        rows[i]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["key"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        keys(0),
        ["parallelism", "no_parallelism", "tolerance", "samples"]
    );
    assert_eq!(
        keys(1),
        [
            "parallelism",
            "no_parallelism",
            "tolerance",
            "samples",
            "budget"
        ]
    );
}

/// The MPI journey: an mpiP graph of 64 ranks onto four nodes of an hwloc topology (two
/// packages of eight cores), with a rankfile, a Slurm hostfile and the rank reordering,
/// each consistent with the mapping written; the launch report's ranks in order scored as
/// `eval` scores them.
#[test]
fn mpi_journey_writes_launch_files_that_agree_with_the_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let graph = fixture("NPB-cg_64ranks.graphStats.txt.gz");
    let arch = format!("hwloc:{}", fixture("hwloc/synthetic-2x8.xml"));
    let o = taskmap(&[
        "map",
        "-g",
        &graph,
        "-a",
        &arch,
        "--nodes",
        "node[01-04]",
        "-o",
        &p("cg.txt"),
        "--rankfile",
        &p("cg.rankfile"),
        "--slurm-hostfile",
        &p("cg.hosts"),
        "--permutation",
        &p("cg.perm"),
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report = json(&o);
    let pes: Vec<u32> = std::fs::read_to_string(p("cg.txt"))
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(pes.len(), 64);
    let rankfile = std::fs::read_to_string(p("cg.rankfile")).unwrap();
    let hosts = std::fs::read_to_string(p("cg.hosts")).unwrap();
    let perm = std::fs::read_to_string(p("cg.perm")).unwrap();
    let mut seen = std::collections::HashSet::new();
    for (r, ((line, host), perm)) in rankfile
        .lines()
        .zip(hosts.lines())
        .zip(perm.lines())
        .enumerate()
    {
        let pe = pes[r];
        let node = format!("node{:02}", pe / 16 + 1);
        assert_eq!(
            line,
            format!("rank {r}={node} slot={}:{}", pe % 16 / 8, pe % 8)
        );
        assert_eq!(host, node);
        assert_eq!(
            perm,
            pe.to_string(),
            "one rank per core: the mapping itself"
        );
        assert!(seen.insert(pe), "two ranks on PE {pe}");
    }
    assert_eq!(seen.len(), 64);
    let launch = &report["launch"];
    assert_eq!(launch["hosts_used"], 4);
    let commands = launch["commands"].as_array().unwrap();
    assert!(commands[0].as_str().unwrap().starts_with("mpirun -np 64 "));
    assert!(commands[1].as_str().unwrap().contains("--rankfile "));
    assert!(commands[2]
        .as_str()
        .unwrap()
        .contains("srun -n 64 --distribution=arbitrary"));
    // The ranks in order, scored by eval.
    let in_order: String = (0..64).map(|r| format!("{r}\n")).collect();
    std::fs::write(p("order.txt"), in_order).unwrap();
    let o = taskmap(&[
        "eval",
        "-g",
        &graph,
        "-a",
        &arch,
        "--nodes",
        "node[01-04]",
        "-m",
        &p("order.txt"),
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = json(&o);
    assert_eq!(launch["in_order_comm_cost"], e["comm_cost"]);
    assert_eq!(e["launch"]["in_order_comm_cost"], e["comm_cost"]);
    assert!(
        report["evaluation"]["comm_cost"].as_u64() <= e["comm_cost"].as_u64(),
        "the mapping is worse than the ranks in order"
    );
    // A level list of the same machine gives the same target and the same mapping.
    let o = taskmap(&[
        "map",
        "-g",
        &graph,
        "-a",
        "package:2,core:8/20,2",
        "--nodes",
        "node[01-04]",
        "-o",
        &p("list.txt"),
        "--rankfile",
        &p("list.rankfile"),
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(p("list.rankfile")).unwrap(),
        rankfile
    );
}

#[test]
fn launch_files_need_hosts_and_bad_machines_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let graph = fixture("NPB-cg_64ranks.graphStats.txt.gz");
    let topo = fixture("hwloc/synthetic-2x8.xml");
    std::fs::write(
        p("bad.xml"),
        "<topology>\n<object type=\"Machine\">\n</topology>\n",
    )
    .unwrap();
    let cases: [(Vec<String>, &str); 5] = [
        (
            vec!["-a".into(), "torus:8x8".into(), "--rankfile".into(), p("r")],
            "--rankfile needs a target with hosts",
        ),
        (
            vec![
                "-a".into(),
                "torus:8x8".into(),
                "--nodes".into(),
                "n[1-2]".into(),
            ],
            "a node list applies to hwloc:FILE",
        ),
        (
            vec!["-a".into(), format!("hwloc:{}", p("bad.xml"))],
            "bad.xml:3:",
        ),
        (
            vec![
                "-a".into(),
                format!("hwloc:{topo}"),
                "--nodes".into(),
                "n[1-2".into(),
            ],
            "'[' without ']'",
        ),
        (
            vec![
                "-a".into(),
                format!("hwloc:{topo}"),
                "--rankfile".into(),
                graph.clone(),
            ],
            "is the input file",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec![
            "map".to_string(),
            "-g".into(),
            graph.clone(),
            "-o".into(),
            p("out.map"),
        ];
        args.extend(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = taskmap(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert!(!dir.path().join("out.map").exists() && !dir.path().join("r").exists());
    }
}

/// The researcher's loop: several graphs, several seeds, every row naming its graph,
/// target and seed; `--rank-by` orders each graph and seed's rows; CSV has the same rows.
#[test]
fn compare_runs_several_graphs_and_seeds_and_ranks_by_congestion() {
    let cg = fixture("NPB-cg_64ranks.graphStats.txt.gz");
    let dl = fixture("delaunay_n10.graph");
    let args = [
        "compare",
        "-g",
        &cg,
        "-g",
        &dl,
        "-a",
        "torus:8x8",
        "-A",
        "block",
        "-A",
        "drb",
        "-A",
        "random",
        "--seed",
        "5",
        "--seeds",
        "2",
        "--rank-by",
        "congestion",
    ];
    let mut with_json = args.to_vec();
    with_json.extend(["--format", "json"]);
    let o = taskmap(&with_json);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = json(&o);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2 * 2 * 3);
    let groups: Vec<(String, u64)> = rows
        .chunks(3)
        .map(|g| {
            (
                g[0]["graph"].as_str().unwrap().to_string(),
                g[0]["seed"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        [
            (cg.clone(), 5),
            (cg.clone(), 6),
            (dl.clone(), 5),
            (dl.clone(), 6)
        ]
    );
    for g in rows.chunks(3) {
        assert!(g.iter().all(|r| r["target"] == "torus:8x8"));
        assert!(g
            .iter()
            .all(|r| r["graph"] == g[0]["graph"] && r["seed"] == g[0]["seed"]));
        let c: Vec<f64> = g
            .iter()
            .map(|r| r["max_congestion"].as_f64().unwrap())
            .collect();
        assert!(c.windows(2).all(|w| w[0] <= w[1]), "{c:?}");
    }
    // random depends on the seed: the two seeds give different mappings.
    let random: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r["algorithm"] == "random" && r["graph"] == dl.as_str())
        .collect();
    assert_ne!(random[0]["comm_cost"], random[1]["comm_cost"]);
    // The congestion column is eval's largest link load.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("drb.txt").display().to_string();
    let o = taskmap(&[
        "map",
        "-g",
        &dl,
        "-a",
        "torus:8x8",
        "-A",
        "drb",
        "-s",
        "6",
        "-o",
        &out,
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = taskmap(&[
        "eval",
        "-g",
        &dl,
        "-a",
        "torus:8x8",
        "-m",
        &out,
        "--congestion",
        "-f",
        "json",
    ]);
    let e = json(&o);
    let drb = rows
        .iter()
        .find(|r| r["algorithm"] == "drb" && r["graph"] == dl.as_str() && r["seed"] == 6)
        .unwrap();
    assert_eq!(drb["max_congestion"], e["congestion"]["max_load"]);
    let mut with_csv = args.to_vec();
    with_csv.extend(["--format", "csv"]);
    let o = taskmap(&with_csv);
    let csv = stdout(&o);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for column in ["graph", "target", "seed", "algorithm", "max_congestion"] {
        assert!(header.contains(&column), "{csv}");
    }
    assert_eq!(csv.lines().count(), 1 + 12);
}

/// The HTML pages of `map` and `eval`: one file, inline SVG, nothing fetched; a square per
/// PE on a 2-D torus, a 3-D mesh, a tree, a machine and a complete target; the comparison
/// with the ranks in order. Rendered in headless Chromium when it is installed (`.ci/run`
/// installs it where it can): the page loads without console errors and its SVG is in
/// the DOM.
#[test]
fn html_pages_draw_the_target_and_render_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let cg = fixture("NPB-cg_64ranks.graphStats.txt.gz");
    let machine = format!("hwloc:{}", fixture("hwloc/synthetic-2x8.xml"));
    let cases: [(&str, Vec<&str>, u32); 5] = [
        ("torus.html", vec!["-a", "torus:8x8"], 64),
        ("mesh3.html", vec!["-a", "mesh:4x4x4"], 64),
        ("tree.html", vec!["-a", "tree:8:2:4/1:10:100"], 64),
        (
            "machine.html",
            vec!["-a", &machine, "--nodes", "n[1-4]"],
            64,
        ),
        ("complete.html", vec!["-a", "complete:64"], 64),
    ];
    let mut pages = Vec::new();
    for (name, target, pes) in &cases {
        let mut args = vec!["map", "-g", &cg, "--html"];
        let path = p(name);
        args.push(&path);
        args.extend(target.iter().copied());
        let o = taskmap(&args);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        let html = std::fs::read_to_string(&path).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
        assert_eq!(html.matches("<svg").count(), 3, "{name}");
        assert_eq!(html.matches("</svg>").count(), 3, "{name}");
        assert_eq!(html.matches("class=\"pe\"").count() as u32, *pes, "{name}");
        assert!(html.contains("against ranks in order"), "{name}");
        for fetch in ["http:", "https:", "src=", "href=", "<script"] {
            assert!(!html.contains(fetch), "{name} has {fetch}");
        }
        // Every SVG is well-formed XML.
        for part in html.split("<svg").skip(1) {
            let svg = format!("<svg{}</svg>", part.split("</svg>").next().unwrap());
            let mut reader = quick_xml::Reader::from_str(&svg);
            let mut depth = 0i32;
            loop {
                match reader.read_event() {
                    Ok(quick_xml::events::Event::Start(_)) => depth += 1,
                    Ok(quick_xml::events::Event::End(_)) => depth -= 1,
                    Ok(quick_xml::events::Event::Eof) => break,
                    Ok(_) => {}
                    Err(e) => panic!("{name}: {e}"),
                }
            }
            assert_eq!(depth, 0, "{name}");
        }
        pages.push(path);
    }
    let tree = std::fs::read_to_string(p("tree.html")).unwrap();
    assert_eq!(
        tree.matches("class=\"group\"").count(),
        4 + 8,
        "4 groups of 2 x 8 PEs"
    );
    let torus = std::fs::read_to_string(p("torus.html")).unwrap();
    assert_eq!(torus.matches("class=\"link\"").count(), 128);
    // eval writes the same page for a mapping read back.
    let out = p("cg.txt");
    let o = taskmap(&["map", "-g", &cg, "-a", "torus:8x8", "-o", &out, "-q"]);
    assert_eq!(o.status.code(), Some(0));
    let page = p("eval.html");
    let o = taskmap(&[
        "eval",
        "-g",
        &cg,
        "-a",
        "torus:8x8",
        "-m",
        &out,
        "--html",
        &page,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("class=\"pe\"").count(), 64);
    pages.push(page);
    // compare: a table and bars per graph and seed (greedy-perego cannot map onto a
    // complete target: a row without a bar).
    let page = p("compare.html");
    let dl = fixture("delaunay_n10.graph");
    let o = taskmap(&[
        "compare",
        "-g",
        &cg,
        "-g",
        &dl,
        "-a",
        "complete:16",
        "-A",
        "block",
        "-A",
        "drb",
        "-A",
        "greedy-perego",
        "--html",
        &page,
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<svg").count(), 2);
    assert_eq!(html.matches("class=\"bar\"").count(), 4);
    assert_eq!(html.matches("not applicable").count(), 2);
    assert!(!html.contains("http:") && !html.contains("<script"));
    pages.push(page);
    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        eprintln!("skipping the render in Chromium: no chromium installed");
        return;
    };
    for page in &pages {
        // A minute at most per page: a Chromium that hangs is killed and fails the test.
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--enable-logging=stderr",
                "--v=0",
                "--dump-dom",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("file://{page}"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The pipes are drained as Chromium writes (a full pipe would stall it).
        let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(mut r) = r {
                    let _ = r.read_to_end(&mut buf);
                }
                buf
            })
        };
        let out = drain(child.stdout.take().map(|r| Box::new(r) as _));
        let err = drain(child.stderr.take().map(|r| Box::new(r) as _));
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > std::time::Duration::from_secs(60) {
                let _ = child.kill();
                panic!("{page}: chromium did not finish in 60 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
        let dom = String::from_utf8_lossy(&stdout);
        let log = String::from_utf8_lossy(&stderr);
        assert!(status.success(), "{page}: {log}");
        let drawn = dom.contains("class=\"pe\"") || page.ends_with("compare.html");
        assert!(dom.contains("<svg") && drawn, "{page}");
        for line in log.lines().filter(|l| l.contains("CONSOLE")) {
            assert!(!line.to_lowercase().contains("error"), "{page}: {line}");
        }
    }
}

/// The JSON report of `taskmap hetero ARGS -f json`, which must exit 0, without its
/// `model` member (the input's name).
fn hetero_report(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["hetero"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-f", "json"]);
    let o = taskmap(&all);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    let mut v = json(&o);
    v.as_object_mut().unwrap().remove("model");
    v
}

#[test]
fn hetero_write_ttig_gives_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("model.ttig");
    let out = out.to_str().unwrap();
    let (clusters, sites) = (
        fixture("hetero/two_clusters.platform"),
        fixture("hetero/two_sites.platform"),
    );
    let (model, stg, dax, wfc) = (
        fixture("hetero/two_clusters.ttig"),
        fixture("hetero/rand0000.stg"),
        fixture("hetero/Montage_25.xml"),
        fixture("hetero/montage-chameleon-2mass-005d-001.json.gz"),
    );
    let inputs: [Vec<&str>; 5] = [
        vec!["-g", &model],
        vec![
            "--stg",
            &stg,
            "--platform",
            &clusters,
            "--slowness",
            "1,1.2",
            "--bytes",
            "500",
        ],
        vec![
            "--workflow",
            &dax,
            "--platform",
            &sites,
            "--slowness",
            "1,1.5",
        ],
        vec!["--workflow", &wfc, "--platform", &sites],
        vec![
            "--workflow",
            &wfc,
            "--platform",
            &sites,
            "--priority",
            "rank",
            "-A",
            "heft-ls,kicks=3",
        ],
    ];
    for input in &inputs {
        let mut first = input.clone();
        first.extend_from_slice(&["--write-ttig", out]);
        let a = hetero_report(&first);
        // The model written reads back to the same allocation, schedule and final time,
        // under the same options (the file holds the model before --priority reorders it).
        let rest: Vec<&str> = input
            .iter()
            .skip_while(|s| !s.starts_with("--priority") && !s.starts_with("-A"))
            .copied()
            .collect();
        let mut again = vec!["-g", out];
        again.extend_from_slice(&rest);
        let b = hetero_report(&again);
        assert!(a["makespan"].as_f64().unwrap() > 0.0);
        assert_eq!(a["makespan"], b["makespan"], "{input:?}");
        assert_eq!(a, b, "{input:?}");
        // Written again from the file, the same bytes.
        let text = std::fs::read(out).unwrap();
        let copy = dir.path().join("copy.ttig");
        let copy = copy.to_str().unwrap();
        hetero_report(&["-g", out, "--write-ttig", copy]);
        assert_eq!(std::fs::read(copy).unwrap(), text, "{input:?}");
    }
    // To standard output: the file, and the report on standard error.
    let o = taskmap(&["hetero", "-g", &model, "--write-ttig", "-"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("PROCTYPE p4 2\nPROCTYPE celeron 6\n"),
        "{}",
        stdout(&o)
    );
    assert!(stderr(&o).contains("final time"), "{}", stderr(&o));
}

#[test]
fn hetero_write_ttig_refuses_bad_outputs_and_models() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.ttig");
    std::fs::copy(fixture("hetero/two_clusters.ttig"), &model).unwrap();
    let model = model.to_str().unwrap();
    let o = taskmap(&["hetero", "-g", model, "--write-ttig", model]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is the input file"), "{}", stderr(&o));
    let same = dir.path().join("same.out");
    let same = same.to_str().unwrap();
    let o = taskmap(&["hetero", "-g", model, "-o", same, "--write-ttig", same]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("name the same file"), "{}", stderr(&o));
    // A workflow whose task names the format cannot hold: refused before anything is
    // written, -o included.
    let text = std::fs::read_to_string(fixture("hetero/wfcommons14.json")).unwrap();
    let json_path = dir.path().join("digit.json");
    std::fs::write(&json_path, text.replace("\"a\"", "\"1 a\"")).unwrap();
    let (ttig, alloc) = (dir.path().join("w.ttig"), dir.path().join("w.alloc"));
    let o = taskmap(&[
        "hetero",
        "--workflow",
        json_path.to_str().unwrap(),
        "--platform",
        &fixture("hetero/two_sites.platform"),
        "--write-ttig",
        ttig.to_str().unwrap(),
        "-o",
        alloc.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "--write-ttig: cannot write the model as a .ttig file: the task name \"1 a\""
        ),
        "{}",
        stderr(&o)
    );
    assert!(!ttig.exists() && !alloc.exists());
}

#[test]
fn hetero_show_model_prints_the_matrices() {
    let (stg, clusters) = (
        fixture("hetero/rand0000.stg"),
        fixture("hetero/two_clusters.platform"),
    );
    let base = [
        "hetero",
        "--stg",
        &stg,
        "--platform",
        &clusters,
        "--slowness",
        "1,1.2",
    ];
    // Human: the tables after the model line, 40 rows each and a note.
    let mut args = base.to_vec();
    args.push("--show-model");
    let o = taskmap(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = stdout(&o);
    let lines: Vec<&str> = s.lines().collect();
    assert!(lines[1].starts_with("TTIGHa graph  w_p(T)"), "{s}");
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>(),
        ["task", "p4", "celeron"]
    );
    assert!(
        s.contains("  ... 10 more tasks (50 in all; --full shows every row"),
        "{s}"
    );
    assert!(
        s.contains("T_i  T_j  messages  bytes  C[lan]  C[switch]  p[p4,p4]"),
        "{s}"
    );
    assert!(s.contains("more pairs (192 in all"), "{s}");
    args.push("--full");
    let full = stdout(&taskmap(&args));
    assert!(
        !full.contains("more tasks") && !full.contains("more pairs"),
        "{full}"
    );
    // Every task's w row and every pair's row, then the allocation's task rows.
    let rows = full
        .lines()
        .filter(|l| l.starts_with("  t") && !l.starts_with("  task"))
        .count();
    assert_eq!(rows, 50 + 192 + 50, "{full}");
    // Without --show-model the report is the same without the tables.
    let plain = stdout(&taskmap(&base));
    let tables_end = lines
        .iter()
        .position(|l| l.starts_with("allocation"))
        .unwrap();
    let mut without: Vec<&str> = vec![lines[0]];
    without.extend_from_slice(&lines[tables_end..]);
    assert_eq!(plain.lines().collect::<Vec<_>>(), without);
    // JSON: the member "ttigha" only when asked, every row.
    let rest = &base[1..];
    let plain = hetero_report(rest);
    assert!(plain.get("ttigha").is_none());
    let mut with = rest.to_vec();
    with.push("--show-model");
    let mut v = hetero_report(&with);
    let m = v.as_object_mut().unwrap().remove("ttigha").unwrap();
    assert_eq!(v, plain);
    assert_eq!(m["processor_types"], serde_json::json!(["p4", "celeron"]));
    assert_eq!(
        m["communication_types"],
        serde_json::json!(["lan", "switch"])
    );
    let w = m["w"].as_array().unwrap();
    assert_eq!(w.len(), 50);
    // w_celeron = 1.2 · w_p4 (one sub-task per task).
    for row in w {
        let (a, b) = (row[0].as_f64().unwrap(), row[1].as_f64().unwrap());
        assert!((b - 1.2 * a).abs() < 1e-9, "{row}");
    }
    let edges = m["edges"].as_array().unwrap();
    assert_eq!(edges.len(), 192);
    // 96 arcs of 1000 bytes, each listed from its sender with C = startup + 1000 · per byte.
    let sent: Vec<_> = edges.iter().filter(|e| e["messages"] == 1).collect();
    assert_eq!(sent.len(), 96);
    for e in sent {
        assert_eq!(e["bytes"], 1000);
        assert_eq!(
            e["C"],
            serde_json::json!([50.0 + 1000.0 * 0.08, 200.0 + 1000.0 * 0.16])
        );
        assert_eq!(e["p"].as_array().unwrap().len(), 2);
    }
    // A model file and a workflow too.
    for input in [
        vec!["-g", &fixture("hetero/small.ttig")],
        vec![
            "--workflow",
            &fixture("hetero/Montage_25.xml"),
            "--platform",
            &fixture("hetero/two_sites.platform"),
        ],
    ] {
        let mut args = input.clone();
        args.push("--show-model");
        let v = hetero_report(&args);
        assert_eq!(
            v["ttigha"]["w"].as_array().unwrap().len(),
            v["tasks"].as_array().unwrap().len()
        );
    }
    // --full alone is refused.
    let o = taskmap(&["hetero", "-g", &fixture("hetero/small.ttig"), "--full"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--show-model"), "{}", stderr(&o));
}

#[test]
fn gen_ttig_is_deterministic_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = |n: &str| dir.path().join(n).display().to_string();
    let gen = |spec: &str, extra: &[&str], out: &str| {
        let mut args = vec!["gen", "ttig", spec, "-o", out];
        args.extend_from_slice(extra);
        let o = taskmap(&args);
        assert_eq!(o.status.code(), Some(0), "{spec}: {}", stderr(&o));
        o
    };
    let spec = "15,subtasks=3,procs=2:3,prob=0.2";
    gen(spec, &["-s", "7"], &path("a.ttig"));
    gen(&format!("{spec},seed=7"), &[], &path("b.ttig"));
    let o = gen(spec, &["--seed", "7"], "-");
    let a = std::fs::read(path("a.ttig")).unwrap();
    assert_eq!(std::fs::read(path("b.ttig")).unwrap(), a);
    assert_eq!(o.stdout, a);
    assert!(
        stderr(&o).starts_with("wrote -: 15 tasks"),
        "{}",
        stderr(&o)
    );
    gen(spec, &["-s", "8"], &path("c.ttig"));
    assert_ne!(std::fs::read(path("c.ttig")).unwrap(), a);
    // The default seed is 0.
    gen("6", &[], &path("d.ttig"));
    gen("6,seed=0", &[], &path("e.ttig"));
    assert_eq!(
        std::fs::read(path("d.ttig")).unwrap(),
        std::fs::read(path("e.ttig")).unwrap()
    );
    let text = String::from_utf8(a).unwrap();
    assert!(text.starts_with("PROCTYPE c1 2\nPROCTYPE c2 3\nCOMM lan 50 0.08\nCOMM switch 200 0.16\nLINK c1 c1 lan\nLINK c1 c2 switch\nLINK c2 c2 lan\nTASK t0\n"), "{text}");
    // It reads back, and --write-ttig writes it again byte for byte.
    let v = hetero_report(&["-g", &path("a.ttig"), "--write-ttig", &path("again.ttig")]);
    assert_eq!(v["tasks"].as_array().unwrap().len(), 15);
    assert_eq!(std::fs::read_to_string(path("again.ttig")).unwrap(), text);
    // Bad arguments: exit 2, a message, no file.
    for (args, want) in [
        (vec!["0"], "expected a task count"),
        (vec!["6,procs=2:0"], "has no machines"),
        (vec!["6,nope=1"], "unknown key \"nope\""),
        (
            vec!["6,seed=1", "-s", "1"],
            "both as -s/--seed and as the key seed=",
        ),
        (
            vec!["6", "--to", "metis"],
            "--to \"metis\" applies to graphs",
        ),
        (vec!["100000"], "more than the limit 50000"),
    ] {
        let mut all = vec!["gen", "ttig"];
        all.push(args[0]);
        let out = path("bad.ttig");
        all.extend_from_slice(&["-o", &out]);
        all.extend_from_slice(&args[1..]);
        let o = taskmap(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert!(!Path::new(&out).exists());
    }
    let o = taskmap(&["gen", "ttig", "6", "-o", &path("x.graph")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give a .ttig path"), "{}", stderr(&o));
}

#[test]
fn compare_program_ranks_by_the_completion_sim_gives() {
    let dir = tempfile::tempdir().unwrap();
    let prog = dir.path().join("mesh.prog");
    let prog = prog.to_str().unwrap();
    let o = taskmap(&["gen", "program", "mesh:8x4,rounds=2", "-o", prog]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = taskmap(&[
        "compare",
        "--program",
        prog,
        "-a",
        "torus:4x4",
        "-A",
        "multilevel",
        "-A",
        "random",
        "-A",
        "greedy-perego",
        "-f",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = json(&o);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let done: Vec<u64> = rows
        .iter()
        .map(|r| r["completion"].as_u64().unwrap())
        .collect();
    assert!(done.windows(2).all(|w| w[0] <= w[1]), "ranked: {done:?}");
    for r in rows {
        assert!(r["max_congestion"].as_f64().is_some());
        // the same mapping simulated by `sim` completes at the same time.
        let alg = r["algorithm"].as_str().unwrap();
        let pes = dir.path().join(format!("{alg}.pes"));
        let pes = pes.to_str().unwrap();
        let o = taskmap(&[
            "map",
            "--program",
            prog,
            "-a",
            "torus:4x4",
            "-A",
            alg,
            "-o",
            pes,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = taskmap(&[
            "sim",
            "-g",
            prog,
            "-a",
            "torus:4x4",
            "-m",
            pes,
            "-f",
            "json",
        ]);
        assert_eq!(json(&o)["completion"], r["completion"], "{alg}");
    }
    // --program needs a target; ranking by completion needs a program.
    let o = taskmap(&["compare", "--program", prog]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--arch is required with --program"));
    let o = taskmap(&["compare", "-a", "torus:4x4", "--rank-by", "completion"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs --program"));
}

#[test]
fn read_only_outputs_are_refused_and_killed_writers_files_removed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g.graph");
    std::fs::write(&out, "old\n").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o444)).unwrap();
    let o = taskmap(&["gen", "grid", "4x4", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("read-only"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
    // A writer killed mid-write (a process that is gone) left its temporary file; one of a
    // live process (this test's) stays.
    let fresh = dir.path().join("h.graph");
    let gone = dir.path().join(".h.graph.4294967.AbCdEf.tmp");
    let live = dir
        .path()
        .join(format!(".h.graph.{}.AbCdEf.tmp", std::process::id()));
    std::fs::write(&gone, "partial").unwrap();
    std::fs::write(&live, "partial").unwrap();
    let o = taskmap(&["gen", "grid", "4x4", "-o", fresh.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!gone.exists(), "the dead writer's file is removed");
    assert!(live.exists(), "a live writer's file stays");
    assert!(fresh.exists());
}

/// `taskmap` with `TASKMAP_MEMORY_LIMIT` set, or run under `ulimit -v KIB` by `sh`.
fn taskmap_within(memory: &str, ulimit_kib: Option<u64>, args: &[&str]) -> Output {
    let bin = env!("CARGO_BIN_EXE_taskmap");
    let mut cmd = match ulimit_kib {
        Some(kib) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
                .arg(bin);
            c
        }
        None => Command::new(bin),
    };
    cmd.args(args)
        .env("TASKMAP_MEMORY_LIMIT", memory)
        .output()
        .expect("run taskmap")
}

#[test]
fn too_little_memory_is_an_error_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    // Checked before the work starts, against the memory left, with what and how much.
    let o = taskmap_within(
        "64M",
        None,
        &["gen", "random", "10000000", "-o", &path("r.graph")],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("random 10000000 needs about")
            && stderr(&o).contains("TASKMAP_MEMORY_LIMIT leaves 64.0 MiB"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("r.graph").exists());
    let o = taskmap_within("64M", None, &["arch", "hypercube:20", "--links"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("the link list of hypercube:20 needs about 160.0 MiB"));
    // A gzip file that expands beyond the memory left is told apart from a corrupt one.
    // The limit lets the file be read (5 times its size) but not expand (to 6.5 MB, more
    // than half the limit).
    let gz = path("grid.graph.gz");
    assert!(taskmap(&["gen", "grid", "500x500", "-o", &gz])
        .status
        .success());
    let limit = std::fs::metadata(&gz).unwrap().len() * 5 + (1 << 20);
    assert!(limit < 12 << 20, "{limit}");
    let o = taskmap_within(&limit.to_string(), None, &["info", &gz]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("gzip data expands to more than") && !stderr(&o).contains("corrupt"),
        "{}",
        stderr(&o)
    );
    let mut bytes = std::fs::read(&gz).unwrap();
    let mid = bytes.len() / 2;
    bytes.truncate(mid);
    std::fs::write(&gz, &bytes).unwrap();
    let o = taskmap(&["info", &gz]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("truncated or corrupt"),
        "{}",
        stderr(&o)
    );
    // Under `ulimit -v`, an allocation the system refuses ends the run with exit 2 and a
    // message, never with an abort (134); the output is not written.
    let big = path("big.graph");
    assert!(taskmap(&["gen", "grid", "600x600", "-o", &big])
        .status
        .success());
    for (kib, args) in [
        (60_000, vec!["info", big.as_str()]),
        (
            60_000,
            vec!["map", "-g", &big, "-a", "torus:4x4", "-o", &path("big.map")],
        ),
        (
            60_000,
            vec!["gen", "grid", "2000x2000", "-o", &path("g.graph")],
        ),
        (60_000, vec!["arch", "hypercube:22", "--links"]),
    ] {
        let o = taskmap_within("1T", Some(kib), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.starts_with("taskmap: error:")
                && (err.contains("out of memory") || err.contains("needs about")),
            "{args:?}: {err}"
        );
    }
    assert!(!dir.path().join("big.map").exists() && !dir.path().join("g.graph").exists());
}

#[test]
fn weights_are_judged_on_the_values_computed() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    // Two edges of 2^62 on a path: f_C of one mapping is 2^63, which fits in 64 bits,
    // though the bound (total times diameter) is 2^63 too and map refuses it.
    let w = 1u64 << 62;
    let g = path("w.graph", &format!("3 2 001\n2 {w}\n1 {w} 3 {w}\n2 {w}\n"));
    let m = path("w.map", "0\n1\n0\n");
    let o = taskmap(&[
        "eval",
        "-g",
        &g,
        "-a",
        "complete:2",
        "-m",
        &m,
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["comm_cost"], serde_json::json!(1u64 << 63));
    // f_C of 3 · 2^63 does not fit: the error says so.
    let g3 = path(
        "w3.graph",
        &format!("4 3 001\n2 {w}\n1 {w} 3 {w}\n2 {w} 4 {w}\n3 {w}\n"),
    );
    let m3 = path("w3.map", "0\n2\n0\n2\n");
    let o = taskmap(&["eval", "-g", &g3, "-a", "mesh:3", "-m", &m3]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("f_C of this mapping is 27670116110564327424"),
        "{}",
        stderr(&o)
    );
    // The ranks in order may cost more than 2^64 - 1 where the mapping costs 0: the
    // launch report counts them exactly (rank 3 on PE 2, two hops from rank 0).
    let g4 = path(
        "w4.graph",
        &format!("4 1 001\n4 {}\n\n\n1 {}\n", 1u64 << 63, 1u64 << 63),
    );
    let m4 = path("w4.map", "0\n0\n0\n0\n");
    let perm = dir.path().join("p.txt");
    let o = taskmap(&[
        "eval",
        "-g",
        &g4,
        "-a",
        "mesh:3",
        "-m",
        &m4,
        "--permutation",
        perm.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = json(&o);
    assert_eq!(e["comm_cost"], serde_json::json!(0));
    // A JSON number beyond 64 bits, as comm_cost_j is.
    assert!(
        stdout(&o).contains("\"in_order_comm_cost\": 18446744073709551616"),
        "{}",
        stdout(&o)
    );
    assert!(perm.exists());
    // info refuses what no target can be mapped with, naming the file.
    let max = u64::MAX;
    let big = path("max.graph", &format!("2 1 001\n2 {max}\n1 {max}\n"));
    let o = taskmap(&["info", &big]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("max.graph: the edge weights add up to 18446744073709551615"),
        "{}",
        stderr(&o)
    );
    let o = taskmap(&["map", "-g", &big, "-a", "complete:2"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn per_node_hwloc_files_are_inputs_no_output_may_replace() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let topo = std::fs::read(fixture("hwloc/synthetic-2x8.xml")).unwrap();
    for n in ["n1", "n2"] {
        std::fs::write(p(&format!("{n}.xml")), &topo).unwrap();
    }
    let graph = fixture("NPB-cg_64ranks.graphStats.txt.gz");
    for spec in [format!("hwloc:{}", p("%n.xml")), format!("hwloc:{}", p(""))] {
        for (cmd, flag) in [("map", "-o"), ("map", "--rankfile"), ("map", "--html")] {
            let o = taskmap(&[
                cmd,
                "-g",
                &graph,
                "-a",
                &spec,
                "--nodes",
                "n[1-2]",
                flag,
                &p("n2.xml"),
            ]);
            assert_eq!(o.status.code(), Some(2), "{spec} {flag}: {}", stderr(&o));
            assert!(stderr(&o).contains("is the input file"), "{}", stderr(&o));
        }
        let m = p("m.txt");
        let o = taskmap(&[
            "map", "-g", &graph, "-a", &spec, "--nodes", "n[1-2]", "-o", &m,
        ]);
        assert_eq!(o.status.code(), Some(0), "{spec}: {}", stderr(&o));
        let o = taskmap(&[
            "eval",
            "-g",
            &graph,
            "-a",
            &spec,
            "--nodes",
            "n[1-2]",
            "-m",
            &m,
            "--rankfile",
            &p("n1.xml"),
        ]);
        assert_eq!(o.status.code(), Some(2), "{spec}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read(p("n2.xml")).unwrap(), topo);
    assert_eq!(std::fs::read(p("n1.xml")).unwrap(), topo);
}
