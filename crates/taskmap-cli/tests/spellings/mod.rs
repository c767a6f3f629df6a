//! The main input's one spelling, `-g/--graph FILE`, in `sim`, `hetero`, `amap` and
//! `convert` (and `-o/--output FILE` for convert's output). The old spellings (`sim
//! --program`, the positional model of `hetero` and `amap`, convert's positional INPUT
//! OUTPUT) still work and give byte-identical reports and files; they are hidden from the
//! help; a main input given both ways is refused with clap's exit code 2.

use std::path::PathBuf;
use std::process::Command;

use super::fixture;

/// What a run gives: exit code, stdout (wall times masked), stderr (the output directory
/// as `{out}`) and every file it wrote, by name.
#[derive(Debug, PartialEq)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    files: Vec<(String, Vec<u8>)>,
}

/// The value of every `"wall_seconds":` replaced by 0 (the one field of these reports that
/// varies between runs).
fn mask_wall_seconds(s: &str) -> String {
    const KEY: &str = "\"wall_seconds\":";
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(KEY) {
        let (head, tail) = rest.split_at(i + KEY.len());
        out.push_str(head);
        let tail = tail.trim_start();
        let end = tail
            .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
            .unwrap_or(tail.len());
        out.push('0');
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// Runs `taskmap ARGS` in a fresh directory, `{out}` in an argument standing for it.
fn run(args: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().display().to_string();
    let args: Vec<String> = args.iter().map(|a| a.replace("{out}", &out)).collect();
    let o = Command::new(env!("CARGO_BIN_EXE_taskmap"))
        .args(&args)
        .current_dir(dir.path())
        .output()
        .expect("run taskmap");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| {
            let path: PathBuf = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    Run {
        code: o.status.code(),
        stdout: mask_wall_seconds(&String::from_utf8_lossy(&o.stdout)),
        stderr: String::from_utf8_lossy(&o.stderr).replace(&out, "{out}"),
        files,
    }
}

/// Every spelling of a run gives what the first gives, which succeeds and writes files.
fn same_runs(spellings: &[Vec<&str>]) {
    let first = run(&spellings[0]);
    assert_eq!(first.code, Some(0), "{:?}: {}", spellings[0], first.stderr);
    assert!(!first.files.is_empty(), "{:?} wrote no file", spellings[0]);
    for args in &spellings[1..] {
        assert_eq!(run(args), first, "{args:?} against {:?}", spellings[0]);
    }
}

/// Exit code 2 with clap's message holding `says`, and no file written.
fn refused(args: &[&str], says: &str) {
    let r = run(args);
    assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
    assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
    assert!(r.files.is_empty(), "{args:?} wrote {:?}", r.files);
}

fn help(subcommand: &str) -> String {
    let r = run(&[subcommand, "--help"]);
    assert_eq!(r.code, Some(0));
    r.stdout
}

#[test]
fn sim_takes_g_and_the_old_program_flag() {
    let prog = fixture("programs/pingpong.prog");
    let rest = [
        "-a",
        "mesh:2x2",
        "-A",
        "drb",
        "--f",
        "-o",
        "{out}/p.map",
        "-f",
        "json",
    ];
    let with = |flag: &'static str| [&["sim", flag, &prog][..], &rest].concat();
    same_runs(&[with("-g"), with("--graph"), with("--program")]);
    // Human report too (its last line holds the wall time: compared up to it).
    let human = |flag: &'static str| {
        let r = run(&["sim", flag, &prog, "-a", "mesh:2x2"]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let cut = r.stdout.rfind("simulated").expect("the events line");
        r.stdout[..cut].to_string()
    };
    assert_eq!(human("-g"), human("--program"));
    let h = help("sim");
    assert!(h.contains("-g, --graph <PROGRAM>"), "{h}");
    assert!(!h.contains("--program"), "{h}");
    refused(
        &["sim", "-g", &prog, "--program", &prog, "-a", "mesh:2x2"],
        "cannot be used multiple times",
    );
    refused(
        &["sim", "-g", &prog, "--gen", "ring:4", "-a", "mesh:2x2"],
        "cannot be used with",
    );
}

#[test]
fn hetero_takes_g_and_the_old_positional_model() {
    let model = fixture("hetero/two_clusters.ttig");
    let rest = [
        "-A",
        "heft",
        "-o",
        "{out}/alloc.txt",
        "--write-order",
        "{out}/order.txt",
        "--svg",
        "{out}/schedule.svg",
        "-f",
        "json",
    ];
    same_runs(&[
        [&["hetero", "-g", &model][..], &rest].concat(),
        [&["hetero", "--graph", &model][..], &rest].concat(),
        [&["hetero", &model][..], &rest].concat(),
    ]);
    let small = fixture("hetero/small.ttig");
    assert_eq!(
        run(&["hetero", "-g", &small, "--optimal"]),
        run(&["hetero", &small, "--optimal"])
    );
    let h = help("hetero");
    assert!(h.contains("-g, --graph <MODEL>"), "{h}");
    assert!(!h.contains("[MODEL]") && !h.contains("Arguments:"), "{h}");
    refused(&["hetero", "-g", &small, &small], "cannot be used with");
    refused(&["hetero"], "--graph <MODEL>");
    let stg = fixture("hetero/rand0000.stg");
    let platform = fixture("hetero/two_clusters.platform");
    refused(
        &[
            "hetero",
            "-g",
            &small,
            "--stg",
            &stg,
            "--platform",
            &platform,
        ],
        "cannot be used with",
    );
    refused(
        &["hetero", "-g", &small, "--platform", &platform],
        "cannot be used with",
    );
}

#[test]
fn amap_takes_g_and_the_old_positional_graph() {
    let graph = fixture("amap/realtime.amg");
    let rest = [
        "-k",
        "2",
        "--system",
        "bus",
        "--itu-time",
        "0.1",
        "-A",
        "alloc-ls,budget=100000",
        "-o",
        "{out}/assign.map",
        "-f",
        "json",
    ];
    same_runs(&[
        [&["amap", "-g", &graph][..], &rest].concat(),
        [&["amap", "--graph", &graph][..], &rest].concat(),
        [&["amap", &graph][..], &rest].concat(),
    ]);
    let h = help("amap");
    assert!(h.contains("-g, --graph <GRAPH>"), "{h}");
    assert!(!h.contains("[MODEL]") && !h.contains("Arguments:"), "{h}");
    refused(
        &["amap", "-g", &graph, &graph, "-k", "2"],
        "cannot be used with",
    );
    refused(&["amap", "-k", "2"], "--graph <GRAPH>");
    let stg = fixture("hetero/rand0000.stg");
    refused(
        &["amap", "-g", &graph, "--stg", &stg, "-k", "2"],
        "cannot be used with",
    );
}

#[test]
fn convert_takes_g_and_o_and_the_old_positional_paths() {
    let input = fixture("small.bench");
    let out = "{out}/small.graph";
    same_runs(&[
        vec!["convert", "-g", &input, "-o", out],
        vec!["convert", "--graph", &input, "--output", out],
        vec!["convert", &input, out],
        vec!["convert", &input, "-o", out],
        vec!["convert", "-g", &input, out],
        vec!["convert", "-o", out, &input],
    ]);
    let mtx = fixture("small_general_real.mtx");
    same_runs(&[
        vec!["convert", "-g", &mtx, "-o", "{out}/x.out", "--to", "scotch"],
        vec!["convert", &mtx, "{out}/x.out", "--to", "scotch"],
    ]);
    // `-` for standard input and output, in either spelling.
    let grid = std::fs::read(fixture("golden/inputs/grid16.graph")).unwrap();
    let piped = |args: &[&str]| {
        use std::io::Write as _;
        let mut child = Command::new(env!("CARGO_BIN_EXE_taskmap"))
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run taskmap");
        child.stdin.take().unwrap().write_all(&grid).unwrap();
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert!(!o.stdout.is_empty(), "{args:?}");
        o.stdout
    };
    assert_eq!(
        piped(&["convert", "-g", "-", "-o", "-", "--to", "scotch"]),
        piped(&["convert", "-", "-", "--to", "scotch"])
    );
    let h = help("convert");
    assert!(
        h.contains("-g, --graph <INPUT>") && h.contains("-o, --output <OUTPUT>"),
        "{h}"
    );
    assert!(
        !h.contains("Arguments:") && !h.contains("<INPUT> <OUTPUT>"),
        "{h}"
    );
    // Each of the input and the output exactly once.
    for (args, says) in [
        (
            vec!["convert", "-g", &input, &input, out],
            "cannot be used with",
        ),
        (
            vec!["convert", &input, out, "-o", out],
            "cannot be used with",
        ),
        (
            vec!["convert", "-g", &input, "-g", &input, "-o", out],
            "multiple times",
        ),
        (
            vec!["convert", "-g", &input, "-o", out, "{out}/extra.graph"],
            "cannot be used with both '--graph <INPUT>' and '--output <OUTPUT>'",
        ),
        (vec!["convert", "-g", &input], "--output <OUTPUT>"),
        (vec!["convert", &input], "--output <OUTPUT>"),
        (vec!["convert", "-o", out], "--graph <INPUT>"),
        (vec!["convert"], "--graph <INPUT>"),
    ] {
        refused(&args, says);
    }
}

#[test]
fn wall_seconds_are_masked() {
    assert_eq!(
        mask_wall_seconds("{\"a\": 1, \"wall_seconds\": 0.0123e-2, \"b\": 2}"),
        "{\"a\": 1, \"wall_seconds\":0, \"b\": 2}"
    );
}
