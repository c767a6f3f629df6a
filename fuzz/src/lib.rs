//! The fuzz targets' bodies: one function per reader and per property, each called by the
//! target of the same name in `fuzz_targets/`.
//!
//! A reader's target feeds the bytes to the reader as a file named [`NAME`] and checks that
//! it returns either a value that holds together or an error that names the file. A panic,
//! an abort, a hang or a failed check is a finding. Readers that take a path get the bytes
//! through a file of this process in the temporary directory.

use std::path::{Path, PathBuf};

use taskmap::hetero::io::{dax, order, stg, ttig, wfcommons};
use taskmap::{evaluate as evaluate_mapping, EvalOptions, Mapping, MappingFormat, PeId, Problem};
use taskmap_graph::{DuplicateEdges, GraphBuilder, GraphFormat, TaskGraph};

/// The name every input goes by in error messages.
pub const NAME: &str = "fuzz.input";

fn name() -> &'static Path {
    Path::new(NAME)
}

/// Panics unless the error message names `file`: every error about a file's content must.
fn names_file(e: &dyn std::fmt::Display, file: &str) {
    let text = e.to_string();
    assert!(
        text.contains(file),
        "the error does not name the file {file}: {text}"
    );
}

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

// ---- graph readers ------------------------------------------------------------------

fn graph(data: &[u8], format: GraphFormat) {
    match format.read(data, name()) {
        Ok(g) => {
            g.validate()
                .expect("a graph that was read is a valid CSR graph");
        }
        Err(e) => names_file(&e, NAME),
    }
}

pub fn metis(data: &[u8]) {
    graph(data, GraphFormat::Metis)
}

pub fn scotch_graph(data: &[u8]) {
    graph(data, GraphFormat::Scotch)
}

pub fn matrix_market(data: &[u8]) {
    graph(data, GraphFormat::MatrixMarket)
}

/// Whether the first two fields of every line are at most 5 digits long. The edge-list
/// and volume readers size the graph by the largest id (up to 2·edges + 2^24 tasks), so
/// inputs with long ids spend their time allocating; they are left out to keep the
/// fuzzer on the parsing (the size limit has its own tests).
fn short_ids(data: &[u8]) -> bool {
    data.split(|&b| b == b'\n').all(|line| {
        line.split(|&b| b.is_ascii_whitespace() || !b.is_ascii_alphanumeric())
            .filter(|t| !t.is_empty())
            .take(2)
            .all(|t| t.len() <= 5 || !t.iter().all(u8::is_ascii_digit))
    })
}

pub fn edge_list(data: &[u8]) {
    if short_ids(data) {
        graph(data, GraphFormat::EdgeList)
    }
}

pub fn bench(data: &[u8]) {
    graph(data, GraphFormat::Bench)
}

pub fn mpip(data: &[u8]) {
    graph(data, GraphFormat::MpiP)
}

pub fn dense(data: &[u8]) {
    graph(data, GraphFormat::Dense)
}

pub fn volumes(data: &[u8]) {
    if short_ids(data) {
        graph(data, GraphFormat::Volumes)
    }
}

/// The first byte is the number of tasks (0-63); the rest is the file.
pub fn task_weights(data: &[u8]) {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let n = usize::from(n % 64);
    match taskmap_graph::read_task_weights(rest, name(), n) {
        Ok((ncon, w)) => assert_eq!(w.len(), n * ncon, "one weight per task and constraint"),
        Err(e) => names_file(&e, NAME),
    }
}

// ---- targets ------------------------------------------------------------------------

/// The bytes in a file of this process, with `ext` as its extension.
fn temp_file(data: &[u8], ext: &str) -> PathBuf {
    // In memory where the machine has it: the file is rewritten for every input.
    let dir = Path::new("/dev/shm");
    let dir = if dir.is_dir() {
        dir.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let path = dir.join(format!("taskmap-fuzz-{}.{ext}", std::process::id()));
    std::fs::write(&path, data).expect("the temporary directory is writable");
    path
}

/// Checks what holds for every target: PEs, symmetric distances of 0 to themselves, and
/// a spec that reads back as the same target.
fn check_arch(arch: &dyn taskmap::Architecture, spec_reads_back: bool) {
    let k = arch.pe_count();
    assert!(k > 0, "a target has PEs");
    for (a, b) in [(0, k - 1), (k / 2, k / 3), (k - 1, k / 2)] {
        let (a, b) = (PeId(a), PeId(b));
        assert_eq!(
            arch.distance(a, b),
            arch.distance(b, a),
            "symmetric distances"
        );
        assert_eq!(arch.distance(a, a), 0, "distance to itself");
    }
    if spec_reads_back {
        let spec = arch.spec();
        let again = taskmap::parse_arch(&spec)
            .unwrap_or_else(|e| panic!("the spec {spec} does not read back: {e}"));
        assert_eq!(again.spec(), spec, "the spec reads back as itself");
        assert_eq!(again.pe_count(), k);
    }
}

fn arch_file(data: &[u8], prefix: &str, ext: &str) {
    let path = temp_file(data, ext);
    let shown = path.display().to_string();
    match taskmap::parse_arch(&format!("{prefix}{shown}")) {
        Ok(arch) => check_arch(arch.as_ref(), false),
        Err(e) => names_file(&e, &shown),
    }
}

pub fn hwloc(data: &[u8]) {
    let path = temp_file(data, "xml");
    let shown = path.display().to_string();
    match taskmap::parse_machine(&format!("hwloc:{shown}"), None) {
        Ok(Some(machine)) => {
            let arch = machine.architecture().expect("a machine read is a target");
            check_arch(arch.as_ref(), false);
            let pes: Vec<u32> = (0..arch.pe_count()).collect();
            let _ = machine.rankfile(&pes);
        }
        Ok(None) => panic!("hwloc: always gives a machine"),
        Err(e) => names_file(&e, &shown),
    }
}

/// A spec as the command line takes it. Specs that name files are left to the file
/// targets (a spec could name `/dev/zero`); trees and level lists keep their `/`.
pub fn arch_spec(data: &[u8]) {
    let Some(s) = text(data) else { return };
    let lower = s.to_ascii_lowercase();
    let names_file = ["graph:", "matrix:", "tgt:", "hwloc:"]
        .iter()
        .any(|k| lower.contains(k));
    let word_is_path = Path::new(s.trim()).exists()
        || s.split(|c: char| c == ':' || c == ',' || c.is_whitespace())
            .any(|w| w.starts_with('/') || w.starts_with('.') || Path::new(w).exists());
    if names_file || word_is_path {
        return;
    }
    if let Ok(arch) = taskmap::parse_arch(s) {
        check_arch(arch.as_ref(), true);
    }
}

pub fn scotch_target(data: &[u8]) {
    arch_file(data, "tgt:", "tgt")
}

pub fn arch_graph(data: &[u8]) {
    arch_file(data, "graph:", "graph")
}

pub fn arch_matrix(data: &[u8]) {
    arch_file(data, "matrix:", "mat")
}

/// Node lists of at most two bracket groups whose numbers have at most 2 digits (and
/// `run.py` keeps them to 64 bytes): larger ones expand to up to 2^20 names, and the
/// fuzzer would spend its time building and sorting them.
pub fn node_list(data: &[u8]) {
    let Some(s) = text(data) else { return };
    let long_number = s.split(|c: char| !c.is_ascii_digit()).any(|r| r.len() > 2);
    if long_number || s.matches('[').count() > 2 {
        return;
    }
    if let Ok(names) = taskmap_arch::expand_node_list(s) {
        assert!(!names.is_empty(), "a node list names a node");
        assert!(names.len() <= taskmap_arch::MAX_NODES);
    }
}

// ---- mappings and constraints -------------------------------------------------------

/// The first two bytes are the task count and the PE count; the rest is the file.
fn sizes(data: &[u8]) -> Option<(usize, u32, &[u8])> {
    let (&[n, k], rest) = data.split_first_chunk::<2>()?;
    Some((usize::from(n), u32::from(k).max(1), rest))
}

pub fn mapping(data: &[u8]) {
    let Some((n, k, rest)) = sizes(data) else {
        return;
    };
    match Mapping::parse_for(rest, name(), n, k) {
        Ok(m) => {
            assert_eq!(m.len(), n);
            assert!(m.as_slice().iter().all(|p| p.0 < k), "PEs in range");
        }
        Err(e) => names_file(&e, NAME),
    }
    if let Err(e) = Mapping::parse(rest, name()) {
        names_file(&e, NAME)
    }
}

pub fn fixed(data: &[u8]) {
    let Some((n, k, rest)) = sizes(data) else {
        return;
    };
    match taskmap::problem::parse_fixed(rest, name(), n, k) {
        Ok(f) => {
            assert_eq!(f.len(), n);
            assert!(f.iter().all(|&p| p < k || p == taskmap::problem::FREE));
        }
        Err(e) => names_file(&e, NAME),
    }
}

pub fn capacities(data: &[u8]) {
    let Some((ncon, k, rest)) = sizes(data) else {
        return;
    };
    let ncon = ncon % 4 + 1;
    match taskmap::Capacities::parse(rest, name(), k, ncon) {
        Ok(c) => {
            assert_eq!(c.pe_count(), k as usize);
            assert_eq!(c.ncon(), ncon);
        }
        Err(e) => names_file(&e, NAME),
    }
}

// ---- models -------------------------------------------------------------------------

pub fn program(data: &[u8]) {
    let Some(s) = text(data) else { return };
    if let Err(e) = taskmap::perego::parse_program(s, name()) {
        names_file(&e, NAME)
    }
}

pub fn ttig(data: &[u8]) {
    let Some(s) = text(data) else { return };
    if let Err(e) = ttig::parse_ttigha(s, name()) {
        names_file(&e, NAME)
    }
}

pub fn platform(data: &[u8]) {
    let Some(s) = text(data) else { return };
    match ttig::parse_platform(s, name()) {
        Ok(p) => assert!(p.types() > 0, "a platform has processor types"),
        Err(e) => names_file(&e, NAME),
    }
}

pub fn amg(data: &[u8]) {
    let Some(s) = text(data) else { return };
    if let Err(e) = taskmap::houstis::amg::parse_amg_model(s, name()) {
        names_file(&e, NAME)
    }
}

/// Reads a program file with `read`, on the platform of the hetero fixtures (parsed
/// once) with a slowness of 1 per processor type; its error must name the file.
fn program_reader(
    data: &[u8],
    read: impl FnOnce(
        &str,
        taskmap::hetero::ttigha::Platform,
        &[f64],
    ) -> Result<taskmap::hetero::ttigha::Ttigha, taskmap::Error>,
) {
    static PLATFORM: std::sync::OnceLock<taskmap::hetero::ttigha::Platform> =
        std::sync::OnceLock::new();
    let Some(s) = text(data) else { return };
    let platform = PLATFORM
        .get_or_init(|| {
            ttig::parse_platform(
                include_str!("../../fixtures/hetero/two_clusters.platform"),
                Path::new("two_clusters.platform"),
            )
            .expect("the fixture platform reads")
        })
        .clone();
    let slowness = vec![1.0; platform.types()];
    if let Err(e) = read(s, platform, &slowness) {
        names_file(&e, NAME)
    }
}

pub fn stg(data: &[u8]) {
    program_reader(data, |s, p, slow| {
        stg::parse_stg_program(s, name(), p, slow, 8)
    })
}

pub fn dax(data: &[u8]) {
    program_reader(data, |s, p, slow| {
        dax::parse_dax_program(s, name(), p, slow, true)
    })
}

pub fn wfcommons(data: &[u8]) {
    program_reader(data, |s, p, slow| {
        wfcommons::parse_wfcommons_program(s, name(), p, slow, true)
    })
}

/// An order file for the fixture `two_clusters.ttig`, everything on processor 0.
pub fn order(data: &[u8]) {
    let Some(s) = text(data) else { return };
    let model = ttig::parse_ttigha(
        include_str!("../../fixtures/hetero/two_clusters.ttig"),
        Path::new("two_clusters.ttig"),
    )
    .expect("the fixture model reads");
    let alloc = vec![0u32; model.program.tasks()];
    let processors = model.platform.processors();
    match order::parse_order(s, name(), &model.program, processors, &alloc) {
        Ok(lists) => {
            let listed: usize = lists.iter().map(Vec::len).sum();
            assert_eq!(
                listed,
                model.program.subtasks(),
                "every sub-task is ordered once"
            );
        }
        Err(e) => names_file(&e, NAME),
    }
}

pub fn algorithm_spec(data: &[u8]) {
    let Some(s) = text(data) else { return };
    let _ = s.parse::<taskmap::AlgorithmSpec>();
}

// ---- properties ---------------------------------------------------------------------

/// Parse, print and parse again: the second print equals the first. The first byte picks
/// the format.
pub fn roundtrip(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match which % 8 {
        f @ 0..=3 => {
            let format = [
                GraphFormat::Metis,
                GraphFormat::Scotch,
                GraphFormat::MatrixMarket,
                GraphFormat::EdgeList,
            ][usize::from(f)];
            let print = |g: &TaskGraph| {
                let mut out = Vec::new();
                taskmap_graph::write_graph(g, format, &mut out).expect("writes to memory");
                out
            };
            fixpoint(rest, |b| format.read(b, name()).ok().map(|g| print(&g)));
        }
        // A lone `0` reads as one task on PE 0 unless the task count (0) is known, so a
        // mapping reads back as itself given its length.
        4 => {
            if let Ok(m) = Mapping::parse(rest, name()) {
                for format in [MappingFormat::Scotch, MappingFormat::PeList] {
                    let text = m.to_text(format);
                    let back = Mapping::parse_for(text.as_bytes(), name(), m.len(), u32::MAX)
                        .unwrap_or_else(|e| panic!("{text:?} does not read back: {e}"));
                    assert_eq!(back.as_slice(), m.as_slice(), "{text:?}");
                }
            }
        }
        5 => fixpoint(rest, |b| {
            let s = text(b)?;
            taskmap::perego::parse_program(s, name())
                .ok()
                .map(|p| p.to_text().into_bytes())
        }),
        6 => fixpoint(rest, |b| {
            let s = text(b)?;
            ttig::parse_ttigha(s, name())
                .ok()
                .map(|m| m.to_text().into_bytes())
        }),
        _ => fixpoint(rest, |b| {
            let s = text(b)?;
            taskmap::houstis::amg::parse_amg(s, name())
                .ok()
                .map(|g| g.to_text().into_bytes())
        }),
    }
}

/// `print(parse(x))` read again prints the same; the printed text must read.
fn fixpoint(data: &[u8], parse_print: impl Fn(&[u8]) -> Option<Vec<u8>>) {
    let Some(first) = parse_print(data) else {
        return;
    };
    let second = parse_print(&first).unwrap_or_else(|| {
        panic!(
            "the printed text does not read back:\n{}",
            String::from_utf8_lossy(&first)
        )
    });
    assert!(
        first == second,
        "printing is not stable:\n{}\n---\n{}",
        String::from_utf8_lossy(&first),
        String::from_utf8_lossy(&second)
    );
}

/// Small targets for the properties.
const TARGETS: [&str; 10] = [
    "complete:5",
    "mesh:3x3",
    "torus:4x2",
    "hypercube:3",
    "tree:2:2:2/1:5:20",
    "wcomplete:1,2,3",
    "mesh:2x2x2",
    "torus:3",
    "sub:0-2,5:torus:3x3",
    "cmplt 1",
];

/// A small graph from bytes: `n`, then `(u, v, w)` triples (self loops skipped, copies
/// summed), then vertex weights while bytes last.
fn small_graph(data: &[u8]) -> Option<(TaskGraph, &[u8])> {
    let (&n, mut rest) = data.split_first()?;
    let n = usize::from(n % 24) + 1;
    let mut b = GraphBuilder::new(n, 1).with_duplicates(DuplicateEdges::Sum);
    let (&m, r) = rest.split_first()?;
    rest = r;
    for _ in 0..m % 48 {
        let Some((&[u, v, w], r)) = rest.split_first_chunk::<3>() else {
            break;
        };
        rest = r;
        let (u, v) = (u32::from(u) % n as u32, u32::from(v) % n as u32);
        if u != v {
            b.add_edge(u, v, u64::from(w) + 1);
        }
    }
    for t in 0..n {
        let Some((&w, r)) = rest.split_first() else {
            break;
        };
        rest = r;
        b.set_vertex_weight(t as u32, 0, u64::from(w % 8));
    }
    Some((b.try_build().ok()?, rest))
}

/// `evaluate` equals a naive recomputation of f_C, the cut, dilation and loads on any
/// mapping.
pub fn evaluate(data: &[u8]) {
    let Some((g, rest)) = small_graph(data) else {
        return;
    };
    let Some((&t, rest)) = rest.split_first() else {
        return;
    };
    let arch = taskmap::parse_arch(TARGETS[usize::from(t) % TARGETS.len()]).expect("a target");
    let k = arch.pe_count();
    let n = g.num_tasks();
    let pes: Vec<PeId> = (0..n)
        .map(|i| PeId(rest.get(i).map_or(0, |&b| u32::from(b) % k)))
        .collect();
    let e = evaluate_mapping(
        &g,
        arch.as_ref(),
        &Mapping::new(pes.clone()),
        &EvalOptions {
            epsilon: Some(0.03),
            capacities: None,
        },
    )
    .expect("a valid mapping evaluates");
    let (mut fc, mut cut, mut cut_edges, mut total, mut dil_max) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for (u, v, w) in g.edges() {
        let d = arch.distance(pes[u as usize], pes[v as usize]);
        fc += w * d;
        total += w;
        dil_max = dil_max.max(d);
        if pes[u as usize] != pes[v as usize] {
            cut += w;
            cut_edges += 1;
        }
    }
    let mut load = vec![0u64; k as usize];
    for (t, p) in pes.iter().enumerate() {
        load[p.0 as usize] += g.vertex_weight(t as u32, 0);
    }
    let used = pes
        .iter()
        .map(|p| p.0)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    assert_eq!(e.comm_cost, fc, "f_C");
    assert_eq!(e.edge_cut, cut, "edge cut");
    assert_eq!(e.cut_edges, cut_edges, "cut edges");
    assert_eq!(e.total_edge_weight, total, "total edge weight");
    assert_eq!(e.dilation_max, dil_max, "largest dilation");
    assert_eq!(e.pes_used as usize, used, "PEs used");
    assert_eq!(e.loads[0].max, *load.iter().max().unwrap(), "largest load");
}

/// Every static mapper, on a small graph and target, with or without hard capacities and
/// fixed tasks, returns a mapping of every task to a PE of the target (fixed tasks where
/// they are fixed) or an error; it never panics.
pub fn mappers(data: &[u8]) {
    let Some((g, rest)) = small_graph(data) else {
        return;
    };
    let Some((&[t, a, flags, seed], rest)) = rest.split_first_chunk::<4>() else {
        return;
    };
    let arch = taskmap::parse_arch(TARGETS[usize::from(t) % TARGETS.len()]).expect("a target");
    let k = arch.pe_count();
    let n = g.num_tasks();
    let names = taskmap::registry::names(&[taskmap::registry::Family::Static]);
    let alg = names[usize::from(a) % names.len()];
    // The exact search on a budget: it is for small instances.
    let alg = if alg == "exact" {
        "exact,nodes=2000".to_string()
    } else {
        alg.to_string()
    };
    let epsilon = [None, Some(0.0), Some(0.03), Some(0.5)][usize::from(flags % 4)];
    let capacities = (flags & 4 != 0).then(|| {
        let caps: Vec<u64> = (0..k as usize)
            .map(|p| rest.get(p).map_or(3, |&b| u64::from(b % 16)))
            .collect();
        taskmap::Capacities::from_vec(caps, 1)
    });
    let mut problem = Problem::new(g, arch).with_constraints(epsilon, capacities);
    if flags & 8 != 0 {
        let fixed: Vec<u32> = (0..n)
            .map(|i| match rest.get(k as usize + i) {
                Some(&b) if b < 64 => u32::from(b) % k,
                _ => taskmap::problem::FREE,
            })
            .collect();
        problem.fixed = Some(fixed);
    }
    let spec: taskmap::AlgorithmSpec = alg.parse().expect("a registered algorithm");
    let mut ctx = taskmap::RunContext::new(u64::from(seed));
    use taskmap::Mapper as _;
    match spec.map(&problem, &mut ctx) {
        Ok(m) => {
            assert_eq!(m.len(), n, "{alg}: one PE per task");
            assert!(m.as_slice().iter().all(|p| p.0 < k), "{alg}: PEs in range");
            if let Some(f) = &problem.fixed {
                for (t, &p) in f.iter().enumerate() {
                    if p != taskmap::problem::FREE {
                        assert_eq!(m.as_slice()[t].0, p, "{alg}: task {t} stays on its PE");
                    }
                }
            }
        }
        Err(e) => assert!(!e.to_string().is_empty(), "{alg}: an error says what"),
    }
}
