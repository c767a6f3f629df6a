//! The golden set: every CLI run of `fixtures/golden/cases.txt` must give the output
//! recorded in `fixtures/golden/expected/NAME.txt` (exit code, stdout, stderr, every file
//! it writes), apart from wall times. It pins the behaviour of every subcommand and every
//! registered algorithm through refactors.
//!
//! After an intended change of behaviour, record the outputs anew with
//! `TASKMAP_GOLDEN=bless cargo test -p taskmap-cli --test cli golden` and review the diff
//! (that run fails on purpose, so that a stray setting cannot pass for a check).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// JSON keys whose values are wall times.
const TIMING_KEYS: &[&str] = &["timings_ms", "map_time_ms", "time_ms", "wall_seconds"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The cases: (name, arguments) in file order.
fn cases() -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(root().join("fixtures/golden/cases.txt"))
        .expect("read fixtures/golden/cases.txt");
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, args) = line
            .split_once('\t')
            .unwrap_or_else(|| panic!("cases.txt:{}: expected NAME<TAB>ARGS", i + 1));
        assert!(
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_".contains(&b)),
            "cases.txt:{}: bad case name {:?}",
            i + 1,
            name
        );
        assert!(
            out.iter().all(|(n, _)| n != name),
            "cases.txt:{}: case {} twice",
            i + 1,
            name
        );
        out.push((
            name.to_string(),
            args.split_whitespace().map(str::to_string).collect(),
        ));
    }
    out
}

/// Drops the times of a JSON value, recursively: the timing keys go, except that the
/// `[phase, ms]` pairs of `timings_ms` keep their phase names.
fn strip_times(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            if let Some(serde_json::Value::Array(phases)) = m.get("timings_ms") {
                let names: Vec<serde_json::Value> =
                    phases.iter().filter_map(|p| p.get(0).cloned()).collect();
                m.insert("phases".into(), serde_json::Value::Array(names));
            }
            m.retain(|k, _| !TIMING_KEYS.contains(&k.as_str()));
            m.values_mut().for_each(strip_times);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_times),
        _ => {}
    }
}

/// Stdout without its wall times: a JSON document with the timing keys dropped, or human
/// text with the times of `map` (its `time ... ms` line), `sim` (`... events in X s`) and
/// `compare` (the last column after a `time_ms` header) masked.
fn normalise_stdout(s: &str) -> String {
    let t = s.trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        if let Ok(mut v) = serde_json::from_str::<serde_json::Value>(s) {
            strip_times(&mut v);
            // The value is printed with sorted keys; the keys' order in the output is
            // kept apart, so that a reordering shows too.
            return serde_json::to_string_pretty(&v).unwrap()
                + "\n--- key order\n"
                + &key_order(s).join(" ")
                + "\n";
        }
    }
    let mut out = String::new();
    let mut timed_table = false;
    for line in s.lines() {
        let mut l = line.to_string();
        if l.starts_with("time ") && l.contains(" ms") {
            l = "time <masked>".into();
        } else if let Some(p) = l.find(" events in ").filter(|_| l.ends_with(" s")) {
            l = format!("{} events in <masked> s", &l[..p]);
        } else if timed_table {
            if let Some((head, last)) = l.rsplit_once(' ') {
                if last.parse::<f64>().is_ok() {
                    // Right-aligned: the padding depends on the time's width.
                    l = format!("{} <masked>", head.trim_end());
                }
            }
        }
        if line.trim_end().ends_with("time_ms") {
            timed_table = true;
        } else if line.trim().is_empty() {
            timed_table = false;
        }
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// The object keys of a JSON text in the order they appear (`"key":`), the timing keys left
/// out.
fn key_order(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut keys = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'"' {
            i += 1;
            continue;
        }
        // A string: find its end, skipping escapes.
        let start = i + 1;
        let mut j = start;
        while j < b.len() && b[j] != b'"' {
            j += if b[j] == b'\\' { 2 } else { 1 };
        }
        let key = &s[start..j.min(s.len())];
        let mut k = j + 1;
        while k < b.len() && b[k].is_ascii_whitespace() {
            k += 1;
        }
        if k < b.len() && b[k] == b':' && !TIMING_KEYS.contains(&key) {
            keys.push(key.to_string());
        }
        i = j + 1;
    }
    keys
}

/// The exit code a case's name promises: 2 for `err-*`, 1 for `*-exit1`, else 0.
fn promised_exit(name: &str) -> i32 {
    if name.starts_with("err-") {
        2
    } else if name.ends_with("-exit1") {
        1
    } else {
        0
    }
}

/// Runs one case in a fresh output directory and renders everything it produced.
fn run_case(args: &[String]) -> String {
    let dir = tempfile::tempdir().expect("temporary directory");
    let d = dir.path().display().to_string();
    let args: Vec<String> = args.iter().map(|a| a.replace("{out}", &d)).collect();
    let o = Command::new(env!("CARGO_BIN_EXE_taskmap"))
        .args(&args)
        .current_dir(root())
        .output()
        .expect("run taskmap");
    let mut s = String::new();
    let _ = writeln!(s, "exit {:?}", o.status.code());
    s.push_str("--- stdout\n");
    s.push_str(&normalise_stdout(
        &String::from_utf8_lossy(&o.stdout).replace(&d, "{out}"),
    ));
    s.push_str("--- stderr\n");
    s.push_str(&String::from_utf8_lossy(&o.stderr).replace(&d, "{out}"));
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![dir.path().to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).expect("read the output directory") {
            let path = e.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    for f in files {
        let rel = f.strip_prefix(dir.path()).unwrap().display().to_string();
        let bytes = std::fs::read(&f).expect("read an output file");
        match String::from_utf8(bytes) {
            Ok(text) if !text.contains('\0') => {
                let _ = writeln!(s, "--- file {}", rel);
                s.push_str(&text);
                if !text.ends_with('\n') {
                    s.push_str("\n--- (no newline at the end)\n");
                }
            }
            Ok(text) => {
                let _ = writeln!(s, "--- file {} (binary)\n{}", rel, hex(text.as_bytes()));
            }
            Err(e) => {
                let _ = writeln!(s, "--- file {} (binary)\n{}", rel, hex(e.as_bytes()));
            }
        }
    }
    s
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(2 * bytes.len() + bytes.len() / 32 + 1);
    for (i, b) in bytes.iter().enumerate() {
        let _ = write!(s, "{:02x}", b);
        if i % 32 == 31 {
            s.push('\n');
        }
    }
    s
}

#[test]
fn golden_outputs_are_unchanged() {
    let expected = root().join("fixtures/golden/expected");
    let bless = std::env::var("TASKMAP_GOLDEN").is_ok_and(|v| v == "bless");
    let cases = cases();
    assert!(cases.len() >= 60, "only {} golden cases", cases.len());
    let mut failed = Vec::new();
    for (name, args) in &cases {
        let got = run_case(args);
        assert!(
            got.starts_with(&format!("exit Some({})\n", promised_exit(name))),
            "golden case {name}: its name promises exit {} but it gave {}",
            promised_exit(name),
            got.lines().next().unwrap_or("")
        );
        let path = expected.join(format!("{}.txt", name));
        if bless {
            std::fs::create_dir_all(&expected).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if got != want {
            let line = got
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| got.lines().count().min(want.lines().count()));
            eprintln!(
                "golden case {} differs from {} at line {}:\n  got:  {}\n  want: {}",
                name,
                path.display(),
                line + 1,
                got.lines().nth(line).unwrap_or("<end>"),
                want.lines().nth(line).unwrap_or("<end>")
            );
            failed.push(name.clone());
        }
    }
    if !bless {
        // No stale expectations: every expected file belongs to a case.
        for e in std::fs::read_dir(&expected).expect("fixtures/golden/expected") {
            let f = e.unwrap().file_name().to_string_lossy().into_owned();
            let n = f.trim_end_matches(".txt");
            assert!(
                cases.iter().any(|(c, _)| c == n),
                "fixtures/golden/expected/{} has no case",
                f
            );
        }
    }
    assert!(failed.is_empty(), "golden cases differ: {:?}", failed);
    // Recording is not checking: a stray TASKMAP_GOLDEN=bless must not pass for a check.
    assert!(
        !bless,
        "recorded {} golden cases; review the diff, then run without TASKMAP_GOLDEN",
        cases.len()
    );
}

#[test]
fn normalising_masks_times_only() {
    let j = "{\"z\": 1, \"map_time_ms\": 2.5, \"timings_ms\": [[\"coarsen\", 1.5]], \"rows\": [{\"time_ms\": 3, \"f\": \"a:\\\"b\"}]}";
    assert_eq!(
        normalise_stdout(j),
        "{\n  \"phases\": [\n    \"coarsen\"\n  ],\n  \"rows\": [\n    {\n      \"f\": \"a:\\\"b\"\n    }\n  ],\n  \"z\": 1\n}\n--- key order\nz rows f\n"
    );
    let h = "graph g\ntime 9.2 ms  coarsen 0.1 ms\nalgorithm  f_C  time_ms\ndrb  503    14.7\nx  1 failed\n\nsimulated    348 events in 0.000 s\n";
    assert_eq!(
        normalise_stdout(h),
        "graph g\ntime <masked>\nalgorithm  f_C  time_ms\ndrb  503 <masked>\nx  1 failed\n\nsimulated    348 events in <masked> s\n"
    );
}
