//! Every reader of user files, fed mutated copies of well-formed fixtures (truncated,
//! a line dropped or repeated, a token replaced by a hostile one, a byte changed): it
//! returns a value or an error that names the file and a line, and never panics. A graph
//! it returns passes `TaskGraph::validate`.

use std::path::{Path, PathBuf};

use taskmap::perego::program::parse_program;
use taskmap::problem::{parse_fixed, FREE};
use taskmap::{Capacities, Mapping};
use taskmap_graph::read_graph_from_bytes;

/// Mutations per fixture.
const ROUNDS: usize = 150;

/// SplitMix64: a deterministic stream of pseudo-random numbers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const HOSTILE: &[&str] = &[
    "-1",
    "0",
    "",
    "x",
    "1.5",
    "nan",
    "1e308",
    "-0",
    "65536",
    "2147483648",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
];

/// One to three mutations of `text`.
fn mutate(text: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut b = text.to_vec();
    for _ in 0..1 + rng.below(3) {
        let lines: Vec<&[u8]> = b.split(|&c| c == b'\n').collect();
        let join = |ls: Vec<Vec<u8>>| ls.join(&b'\n');
        let mut owned: Vec<Vec<u8>> = lines.iter().map(|l| l.to_vec()).collect();
        b = match rng.below(10) {
            0 | 1 => {
                let cut = rng.below(b.len());
                b[..cut].to_vec()
            }
            2 | 3 => {
                owned.remove(rng.below(owned.len()));
                join(owned)
            }
            4 => {
                let i = rng.below(owned.len());
                owned.insert(i, owned[i].clone());
                join(owned)
            }
            5..=8 => {
                let i = rng.below(owned.len());
                let line = String::from_utf8_lossy(&owned[i]).into_owned();
                let mut toks: Vec<&str> = line.split_ascii_whitespace().collect();
                if !toks.is_empty() {
                    let j = rng.below(toks.len());
                    toks[j] = HOSTILE[rng.below(HOSTILE.len())];
                    owned[i] = toks.join(" ").into_bytes();
                }
                join(owned)
            }
            _ => {
                if !b.is_empty() {
                    let i = rng.below(b.len());
                    b[i] = rng.next() as u8;
                }
                b
            }
        };
    }
    b
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
}

/// An error message must start `name:LINE:COLUMN: `.
fn assert_located(msg: &str, name: &str, input: &[u8]) {
    // Strips a decimal number and the character after it, which must be `sep`.
    let number_then = |r: &str, sep: char| -> Option<String> {
        let digits = r.len() - r.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        (digits > 0)
            .then(|| r[digits..].strip_prefix(sep).map(str::to_string))
            .flatten()
    };
    let located = msg
        .strip_prefix(name)
        .and_then(|r| r.strip_prefix(':'))
        .and_then(|r| number_then(r, ':'))
        .and_then(|r| number_then(&r, ':'))
        .is_some_and(|r| r.starts_with(' '));
    assert!(
        located,
        "error without file:line:column: {msg}\ninput:\n{}",
        String::from_utf8_lossy(input)
    );
}

/// Runs `read` on `original`, which must be read, then on `ROUNDS` mutations of it;
/// returns how many mutations were refused.
fn mutations(
    original: &[u8],
    name: &str,
    seed: u64,
    mut read: impl FnMut(&[u8]) -> Result<(), String>,
) -> usize {
    if let Err(msg) = read(original) {
        panic!("{name}: the unmutated input is refused: {msg}");
    }
    let mut rng = Rng(seed);
    let mut refused = 0;
    for _ in 0..ROUNDS {
        let m = mutate(original, &mut rng);
        if let Err(msg) = read(&m) {
            assert_located(&msg, name, &m);
            refused += 1;
        }
    }
    refused
}

/// The mutations are meant to break the files: more than `ROUNDS / divisor` must be
/// refused (edge lists, where a dropped or repeated line is still an edge list, refuse
/// fewer than half).
fn assert_mostly_refused(refused: usize, divisor: usize, what: &str) {
    assert!(
        refused > ROUNDS / divisor,
        "{what}: only {refused} of {ROUNDS} mutations refused"
    );
}

#[test]
fn graph_readers_refuse_mutations_at_a_line() {
    for (i, file) in [
        "delaunay_n10.graph",
        "small_labels.grf",
        "small_general_real.mtx",
        "small.edges",
        "small.bench",
        "small.graphStats.txt",
        "mtkahypar/graph_with_node_and_edge_weights.graph",
    ]
    .iter()
    .enumerate()
    {
        let original = std::fs::read(fixture(file)).unwrap();
        let name = format!("mutated-{}", file.replace('/', "-"));
        let refused = mutations(&original, &name, i as u64, |b| match read_graph_from_bytes(
            b, &name, None,
        ) {
            Ok(g) => {
                g.validate().expect("a graph read is valid");
                Ok(())
            }
            Err(e) => Err(e.to_string()),
        });
        assert_mostly_refused(refused, 3, file);
    }
}

/// A directory removed when dropped (also when a test fails).
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn target_files_refuse_mutations_at_a_line() {
    let dir = TempDir(std::env::temp_dir().join(format!("taskmap-mutated-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    // (fixture, spec prefix): Scotch target files, a distance matrix, a target graph.
    for (i, (file, prefix)) in [
        ("torus4x4.tgt", ""),
        ("tleaf3.tgt", ""),
        ("sub4.tgt", ""),
        ("small.mat", "matrix:"),
        ("ring8w.graph", "graph:"),
    ]
    .iter()
    .enumerate()
    {
        let original = std::fs::read(fixture(&format!("arch/{file}"))).unwrap();
        let path = dir.0.join(file);
        let name = path.to_str().unwrap().to_string();
        let spec = format!("{prefix}{name}");
        let refused = mutations(&original, &name, 100 + i as u64, |b| {
            std::fs::write(&path, b).unwrap();
            taskmap::parse_arch(&spec)
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
        assert_mostly_refused(refused, 2, file);
    }
}

#[test]
fn mapping_capacity_pin_and_program_files_refuse_mutations_at_a_line() {
    let (n, k) = (64usize, 16u32);
    let pes: String = (0..n).map(|t| format!("{}\n", t % 16)).collect();
    let scotch: String = format!("{n}\n")
        + &(0..n)
            .map(|t| format!("{t}\t{}\n", (t * 7) % 16))
            .collect::<String>();
    for (seed, (text, name)) in [(pes, "m.pes"), (scotch, "m.map")].iter().enumerate() {
        let refused = mutations(text.as_bytes(), name, 200 + seed as u64, |b| {
            let m = Mapping::parse_for(b, Path::new(name), n, k).map_err(|e| e.to_string())?;
            assert_eq!(m.len(), n);
            assert!(m.as_slice().iter().all(|p| p.0 < k));
            Ok(())
        });
        assert_mostly_refused(refused, 2, name);
    }
    let caps: String = (0..k).map(|p| format!("{} {}\n", 70 + p, 3)).collect();
    let refused = mutations(caps.as_bytes(), "c.txt", 300, |b| {
        let c = Capacities::parse(b, Path::new("c.txt"), k, 2).map_err(|e| e.to_string())?;
        assert_eq!((c.pe_count(), c.ncon()), (k as usize, 2));
        Ok(())
    });
    assert_mostly_refused(refused, 2, "capacities");
    let pins: String = (0..n)
        .map(|t| {
            if t % 5 == 0 {
                format!("{}\n", t % 16)
            } else {
                "-1\n".into()
            }
        })
        .collect();
    let refused = mutations(pins.as_bytes(), "f.txt", 301, |b| {
        let f = parse_fixed(b, Path::new("f.txt"), n, k).map_err(|e| e.to_string())?;
        assert_eq!(f.len(), n);
        // An accepted file pins tasks to PEs of the target only.
        assert!(f.iter().all(|&p| p == FREE || p < k), "{f:?}");
        Ok(())
    });
    assert_mostly_refused(refused, 2, "pins");
    // (The other program fixtures are refused on purpose: a deadlock, an unknown task.)
    for (i, prog) in ["pingpong.prog"].iter().enumerate() {
        let original = std::fs::read(fixture(&format!("programs/{prog}"))).unwrap();
        let refused = mutations(&original, prog, 400 + i as u64, |b| {
            let p = parse_program(&String::from_utf8_lossy(b), Path::new(prog))
                .map_err(|e| e.to_string())?;
            // An accepted program writes out as text that reads back the same.
            let text = p.to_text();
            let again = parse_program(&text, Path::new(prog)).expect("written program reads");
            assert_eq!(again.to_text(), text);
            Ok(())
        });
        assert_mostly_refused(refused, 2, prog);
    }
}

#[test]
fn heterogeneous_model_platform_and_stg_files_refuse_mutations_at_a_line() {
    use taskmap::hetero::io::stg::parse_stg_program;
    use taskmap::hetero::io::ttig::{parse_platform, parse_ttigha};
    use taskmap::hetero::mateha::mateha;
    use taskmap::hetero::simulha::Simulator;
    for (i, name) in ["two_clusters.ttig", "small.ttig"].iter().enumerate() {
        let original = std::fs::read(fixture(&format!("hetero/{name}"))).unwrap();
        let refused = mutations(&original, name, 500 + i as u64, |b| {
            let m = parse_ttigha(&String::from_utf8_lossy(b), Path::new(name))
                .map_err(|e| e.to_string())?;
            // An accepted model writes out as text that reads back the same, and maps and
            // simulates.
            let again = parse_ttigha(&m.to_text(), Path::new(name)).expect("written model reads");
            assert_eq!(again, m);
            let alloc = mateha(&m).alloc;
            assert!(alloc
                .iter()
                .all(|&p| (p as usize) < m.platform.processors()));
            Simulator::new(&m).makespan(&alloc);
            Ok(())
        });
        assert_mostly_refused(refused, 3, name);
    }
    // An order for the worked example: a1 b1 a2 on processor 0, nothing on processor 1.
    let small = parse_ttigha(
        &std::fs::read_to_string(fixture("hetero/small.ttig")).unwrap(),
        Path::new("small.ttig"),
    )
    .unwrap();
    let refused = mutations(b"a1 b1 a2\n\n", "o.txt", 505, |b| {
        let order = taskmap::hetero::io::order::parse_order(
            &String::from_utf8_lossy(b),
            Path::new("o.txt"),
            &small.program,
            2,
            &[0, 0],
        )
        .map_err(|e| e.to_string())?;
        assert_eq!(order.len(), 2);
        // An accepted order fits the allocation: it simulates.
        Simulator::new(&small)
            .schedule(&[0, 0], Some(&order))
            .expect("an accepted order simulates");
        Ok(())
    });
    assert_mostly_refused(refused, 5, "order");
    let name = "two_clusters.platform";
    let original = std::fs::read(fixture(&format!("hetero/{name}"))).unwrap();
    let refused = mutations(&original, name, 510, |b| {
        let p = parse_platform(&String::from_utf8_lossy(b), Path::new(name))
            .map_err(|e| e.to_string())?;
        assert!(p.processors() >= 1);
        Ok(())
    });
    assert_mostly_refused(refused, 3, name);
    let platform = parse_platform(&String::from_utf8_lossy(&original), Path::new(name)).unwrap();
    let name = "rand0000.stg";
    let original = std::fs::read(fixture(&format!("hetero/{name}"))).unwrap();
    let refused = mutations(&original, name, 520, |b| {
        let m = parse_stg_program(
            &String::from_utf8_lossy(b),
            Path::new(name),
            platform.clone(),
            &[1.0, 1.2],
            100,
        )
        .map_err(|e| e.to_string())?;
        assert!(m.program.tasks() >= 1);
        Simulator::new(&m).makespan(&mateha(&m).alloc);
        Ok(())
    });
    // A dropped or repeated record line shifts the ids, a changed time is still a time:
    // about a third are refused.
    assert_mostly_refused(refused, 5, name);
    // The two workflow formats. XML survives many cuts of attributes' text, pretty-printed
    // JSON loses a comma or a bracket with most dropped or cut lines: a fifth at least are
    // refused.
    type WorkflowReader = fn(
        &str,
        &Path,
        taskmap::hetero::ttigha::Platform,
        &[f64],
        bool,
    ) -> Result<taskmap::hetero::ttigha::Ttigha, taskmap::Error>;
    let readers: [(&str, u64, WorkflowReader); 2] = [
        (
            "Montage_25.xml",
            530,
            taskmap::hetero::io::dax::parse_dax_program,
        ),
        (
            "montage-chameleon-2mass-005d-001.json.gz",
            540,
            taskmap::hetero::io::wfcommons::parse_wfcommons_program,
        ),
    ];
    for (name, seed, read) in readers {
        let raw = std::fs::read(fixture(&format!("hetero/{name}"))).unwrap();
        let original = taskmap_graph::decompress(&raw, Path::new(name)).unwrap();
        let refused = mutations(&original, name, seed, |b| {
            let m = read(
                &String::from_utf8_lossy(b),
                Path::new(name),
                platform.clone(),
                &[1.0, 1.2],
                false,
            )
            .map_err(|e| e.to_string())?;
            Simulator::new(&m).makespan(&mateha(&m).alloc);
            Ok(())
        });
        assert_mostly_refused(refused, 5, name);
    }
}

#[test]
fn algorithm_mapper_graphs_refuse_mutations_at_a_line() {
    use taskmap::houstis::alloc::AllocParams;
    use taskmap::houstis::amg::parse_amg;
    use taskmap::houstis::machine::Machine;
    use taskmap::houstis::mapper::algorithm_mapper;
    use taskmap::houstis::precedence::ParallelMatrix;
    for (i, name) in ["realtime.amg", "cholesky4.amg"].iter().enumerate() {
        let original = std::fs::read(fixture(&format!("amap/{name}"))).unwrap();
        let refused = mutations(&original, name, 700 + i as u64, |b| {
            let g = parse_amg(&String::from_utf8_lossy(b), Path::new(name))
                .map_err(|e| e.to_string())?;
            // An accepted graph writes out as text that reads back the same, and maps.
            let again = parse_amg(&g.to_text(), Path::new(name)).expect("written graph reads");
            assert_eq!(again, g);
            let det = g.deterministic().expect("an accepted graph has its G'");
            let par = ParallelMatrix::new(&g, &det).unwrap();
            let m = Machine::new(2, "bus".parse().unwrap(), 0.1, None).unwrap();
            // mutated numbers may overflow: an error then, never a panic.
            if let Ok(r) = algorithm_mapper(&g, &det, Some(&par), &m, &AllocParams::default()) {
                assert!(r.processor.iter().all(|&p| p < 2));
            }
            Ok(())
        });
        assert_mostly_refused(refused, 4, name);
    }
}
