//! Every line of the README's CLI quick start runs as written, from a fresh clone: each
//! `taskmap ...` command (continuation lines joined, comments dropped) exits 0, run in
//! order in one directory that sees the repository's `fixtures/`.

use std::path::Path;
use std::process::Command;

/// The commands of the code block under `## CLI quick start`, as argument lists.
fn quick_start_commands(readme: &str) -> Vec<Vec<String>> {
    let start = readme
        .find("## CLI quick start")
        .expect("README.md has a \"## CLI quick start\" section");
    let section = &readme[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let mut commands = Vec::new();
    let mut pending = String::new();
    for line in section.lines() {
        let Some(code) = line.strip_prefix("    ") else {
            continue;
        };
        // A comment runs from " #" to the end of the line (no argument holds " #").
        let code = code.split(" #").next().unwrap_or("").trim_end();
        let code = code.strip_prefix('#').map_or(code, |_| "");
        let (code, continued) = match code.strip_suffix('\\') {
            Some(c) => (c, true),
            None => (code, false),
        };
        pending.push_str(code);
        pending.push(' ');
        if !continued {
            // Single quotes around a word (`'node[01-04]'`) are the shell's, not the word's.
            let words: Vec<String> = pending
                .split_whitespace()
                .map(|w| w.trim_matches('\'').to_string())
                .collect();
            pending.clear();
            if words.first().is_some_and(|w| w == "taskmap") {
                commands.push(words);
            }
        }
    }
    commands
}

#[test]
fn readme_quick_start_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let commands = quick_start_commands(&readme);
    assert!(commands.len() >= 25, "only {} commands", commands.len());
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        std::fs::canonicalize(root.join("fixtures")).unwrap(),
        dir.path().join("fixtures"),
    )
    .unwrap();
    for words in &commands {
        // `> FILE` at the end sends stdout to FILE.
        let (args, redirect) = match words.iter().position(|w| w == ">") {
            Some(i) => (&words[1..i], words.get(i + 1)),
            None => (&words[1..], None),
        };
        let o = Command::new(env!("CARGO_BIN_EXE_taskmap"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        if let Some(file) = redirect {
            std::fs::write(dir.path().join(file), &o.stdout).unwrap();
        }
        assert_eq!(
            o.status.code(),
            Some(0),
            "README line `{}` failed: {}",
            words.join(" "),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn quick_start_lines_are_joined_and_stripped() {
    let text = "## CLI quick start\n\n    cargo build   # x\n    taskmap a -b c \\\n        -d e   # f\n                # more comment\n    taskmap g\n\n## Next\n    taskmap h\n";
    assert_eq!(
        quick_start_commands(text),
        vec![
            vec!["taskmap", "a", "-b", "c", "-d", "e"],
            vec!["taskmap", "g"]
        ]
    );
}
