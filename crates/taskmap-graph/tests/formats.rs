//! Readers, writers and format selection, on the fixtures in `/fixtures` and, when present,
//! on the public data in `../shared/data`.

use std::io::Write;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use taskmap_graph::*;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(rel)
}

/// `../shared/data/<rel>` if the shared data set is present.
/// A file of `../shared/data`, `None` (the test skips it) only when that directory is
/// absent: a file missing from a present directory is a wrong path, and fails.
fn shared(rel: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    let p = root.join(rel);
    if p.exists() {
        Some(p)
    } else if root.is_dir() {
        panic!("{} is missing from {}", rel, root.display());
    } else {
        eprintln!("skipping: {} not present", p.display());
        None
    }
}

fn read(rel: &str) -> TaskGraph {
    let p = fixture(rel);
    read_graph(&p, None).unwrap_or_else(|e| panic!("{e}"))
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn sorted(g: &TaskGraph, u: u32) -> Vec<(u32, u64)> {
    let mut v: Vec<(u32, u64)> = g
        .neighbors(u)
        .iter()
        .copied()
        .zip(g.edge_weights(u).iter().copied())
        .collect();
    v.sort();
    v
}

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("taskmap-graph-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

// ---------------------------------------------------------------- METIS

/// The METIS-manual graph (page 11) with an isolated 8th vertex, 0-based neighbour lists.
const MANUAL: [&[u32]; 8] = [
    &[4, 2, 1],
    &[0, 2, 3],
    &[4, 3, 1, 0],
    &[1, 2, 5, 6],
    &[0, 2, 5],
    &[4, 3, 6],
    &[5, 3],
    &[],
];

fn check_manual(g: &TaskGraph, n: usize) {
    assert_eq!(g.num_tasks(), n);
    assert_eq!(g.num_edges(), 11);
    for u in 0..n {
        assert_eq!(g.neighbors(u as u32), MANUAL[u], "vertex {}", u + 1);
    }
}

#[test]
fn metis_mtkahypar_valid_instances() {
    let g = read("mtkahypar/unweighted_graph.graph");
    check_manual(&g, 8);
    assert!(!g.has_edge_weights() && !g.has_vertex_weights());

    let g = read("mtkahypar/graph_with_edge_weights.graph");
    check_manual(&g, 8);
    assert_eq!(g.edge_weights(0), &[1, 2, 1]);
    assert_eq!(g.edge_weights(3), &[1, 2, 2, 5]);
    assert_eq!(g.edge_weights(6), &[6, 5]);
    assert_eq!(g.total_edge_weight(), 27);
    assert_eq!(g.total_vertex_weight(0), 8);

    let vw = [4u64, 2, 5, 3, 1, 6, 2, 1];
    for f in [
        "mtkahypar/graph_with_node_weights.graph",
        "mtkahypar/graph_with_node_and_edge_weights.graph",
    ] {
        let g = read(f);
        check_manual(&g, 8);
        for u in 0..8 {
            assert_eq!(g.vertex_weight(u as u32, 0), vw[u], "{f}");
        }
        assert_eq!(g.total_vertex_weight(0), 24);
    }
    let g = read("mtkahypar/graph_with_node_and_edge_weights.graph");
    assert_eq!(g.edge_weights(3), &[1, 2, 2, 5]);
    assert_eq!(g.total_edge_weight(), 27);

    // No final newline, LF and CRLF: the 7-vertex manual graph.
    let a = read("mtkahypar/graph_no_newline.graph");
    let b = read("mtkahypar/graph_no_newline_windows.graph");
    check_manual(&a, 7);
    assert_eq!(a, b);

    // 3 vertex lines, 11 empty lines ended by '\n', then the empty unterminated 15th line.
    let g = read("mtkahypar/graph_empty_lines.graph");
    assert_eq!((g.num_tasks(), g.num_edges()), (15, 3));
    assert!((3..15).all(|u| g.degree(u) == 0));
}

#[test]
fn delaunay_n10_fixture() {
    let g = read("delaunay_n10.graph");
    assert_eq!((g.num_tasks(), g.num_edges()), (1024, 3056));
    g.validate().unwrap();
}

/// Every malformed fixture, with the exact message it must produce.
const BAD: &[(&str, &str)] = &[
    ("mtkahypar_graph_id_overflow.graph", "4:1: neighbour 4294967296 out of range 1..=5 (does not fit in 32 bits)"),
    ("mtkahypar_graph_one_line_too_few.graph", "2:1: expected 6 vertex lines, file ended after 5"),
    ("mtkahypar_graph_too_few_edges.graph", "2:3: header says 6 edges (12 adjacency entries) but the vertex lines list 10 entries"),
    ("mtkahypar_graph_too_many_edges.graph", "2:3: header says 4 edges (8 adjacency entries) but the vertex lines list 10 entries"),
    ("mtkahypar_graph_too_few_lines.graph", "3:1: expected 17 vertex lines, file ended after 3"),
    ("mtkahypar_graph_too_few_lines_windows.graph", "3:1: expected 17 vertex lines, file ended after 3"),
    ("mtkahypar_target_asymmetric_weights.graph", "2:1: edge 1-2 has weight 8 (line 2) but 2-1 has weight 10 (line 3)"),
    ("metis_asymmetric_weight.graph", "3:5: edge 2-3 has weight 5 (line 3) but 3-2 has weight 4 (line 4)"),
    ("metis_bad_fmt.graph", "1:5: format `2` must be at most 3 binary digits (size, vertex weights, edge weights)"),
    ("metis_bad_token.graph", "3:3: expected neighbour id (an integer), found '3x'"),
    ("metis_duplicate_neighbour.graph", "2:3: vertex 1 lists neighbour 2 twice (first at 2:1)"),
    ("metis_extra_line.graph", "5:1: unexpected data after the last of the 3 vertex lines"),
    ("metis_missing_edge_weight.graph", "3:6: neighbour 3 has no edge weight"),
    ("metis_missing_reverse.graph", "3:3: edge 1-3 has no reverse edge 3-1 (the neighbours of 3 start on line 5)"),
    ("metis_negative_edge_weight.graph", "2:3: edge weight must be at least 1, found -4"),
    ("metis_self_loop.graph", "4:3: vertex 2 lists itself (self-loop)"),
    ("metis_zero_edge_weight.graph", "2:3: edge weight must be at least 1, found 0"),
    ("scotch_arc_count.grf", "2:3: header says 6 arcs but the degrees add up to 4"),
    ("scotch_bad_version.grf", "1:1: Scotch graph format version 1 is not supported (expected 0)"),
    ("scotch_base_value.grf", "3:1: base value 18446744073709551615 is too large (usually 0 or 1; at most 2^32-1)"),
    ("scotch_neighbour_out_of_range.grf", "5:5: neighbour 4 out of range 1..=3"),
    ("scotch_unknown_label.grf", "6:6: no vertex has label 99"),
    ("mtx_bad_value.mtx", "4:5: expected a real value, found `abc`"),
    ("mtx_real_too_large.mtx", "3:5: value 1000000000000000000000000000000 does not fit in 64 bits"),
    ("mtx_sum_overflow.mtx", "4:5: the entries' weights add up to more than 2^64-1 (an edge's entries are summed)"),
    ("mtx_complex.mtx", "1:34: field `complex` is not supported (expected pattern, integer or real)"),
    ("mtx_not_square.mtx", "2:3: the matrix is 3 x 4; a task graph needs a square matrix"),
    ("mtx_too_few_entries.mtx", "2:1: expected 3 entries, file ended after 2"),
    ("mtx_too_many_rows.mtx", "2:1: 4000000000 rows but only 0 entries (at most 2·nnz + 2^24 = 16777216 tasks)"),
    ("edges_id_too_large.edges", "2:3: task id 4000000000 implies 4000000001 tasks but the file has only 1 edge(s) (at most 2·edges + 2^24 = 16777218 tasks)"),
    ("edges_conflicting_weights.edges", "3:1: edge 1-0 has weight 4 but 0-1 on line 1 has weight 3"),
    ("edges_same_direction_twice.edges", "3:1: edge 0-1 is listed again (first on line 1); list a pair once, or once in each direction"),
    ("edges_self_loop.edges", "3:3: self-loop 2-2"),
    ("edges_zero_weight.edges", "1:5: edge weight must be at least 1, found 0"),
    ("mpip_no_section.graphStats.txt", "1:1: no `--- Graph Information ---` line: not a graphStats file of mpiP communication volumes"),
    ("mpip_unclosed.graphStats.txt", "2:1: the `Graph Information` section is never closed by a `--- Graph info end ---` line (is the file truncated?)"),
    ("mpip_bad_separator.graphStats.txt", "3:3: expected `,` after the first rank (an edge line is `u , v = volume`), found `;`"),
    ("mpip_negative_volume.graphStats.txt", "2:9: volume must not be negative, found -5.0"),
    ("mpip_trailing_text.graphStats.txt", "2:13: unexpected `MB` after `u , v = volume`"),
    ("mpip_nan_volume.graphStats.txt", "2:9: value NaN is not finite"),
    ("mpip_empty_section.graphStats.txt", "1:1: the `Graph Information` section holds no edge, so the number of ranks is unknown"),
    ("mpip_sum_overflow.graphStats.txt", "3:9: the volumes add up to 2^64 or more (weights are rounded volumes, summed per pair)"),
    ("mpip_second_section.graphStats.txt", "4:1: a second `Graph Information` section (are two files joined?); a file holds one graph"),
    ("mpip_cr_only.graphStats.txt", "1:1: the lines end in CR alone (classic Mac OS); taskmap reads LF or CRLF line ends"),
    ("mpip_rank_too_large.graphStats.txt", "2:5: second rank 4294967295 is too large (at most 4294967294)"),
    ("mpip_volume_overflow.graphStats.txt", "2:9: value 1e400 does not fit in 64 bits"),
    ("mpip_control_byte.graphStats.txt", "2:9: expected a volume (a number), found `5\\u{1b}[31m`"),
    ("bench_redefined_signal.bench", "3:1: signal `x` is defined again (already defined at 2:1)"),
    ("bench_syntax.bench", "2:9: expected `(`, found `a`"),
    ("bench_undefined_signal.bench", "3:12: signal `y` is never defined (no INPUT and no gate drives it)"),
];

#[test]
fn malformed_fixtures_give_exact_messages() {
    for &(file, msg) in BAD {
        let p = fixture(&format!("bad/{file}"));
        let err = read_graph(&p, None).expect_err(file);
        assert!(matches!(err, GraphError::Parse { .. }), "{file}: {err:?}");
        assert_eq!(err.to_string(), format!("{}:{msg}", p.display()), "{file}");
        // The same error from gzip-compressed bytes, under the same name.
        let bytes = std::fs::read(&p).unwrap();
        let err = read_graph_from_bytes(&gzip(&bytes), file, None).expect_err(file);
        assert_eq!(err.to_string(), format!("{file}:{msg}"));
    }
}

#[test]
fn metis_lexical_rules() {
    let r = |s: &str| read_graph_from_bytes(s.as_bytes(), "t.graph", None);
    // Comments anywhere, also indented; CRLF; blank line = isolated vertex; trailing blanks.
    let g = r("% c\n  % c\r\n3 1\r\n 2 \r\n  % c\n1\r\n\r\n\n  \n% end").unwrap();
    assert_eq!((g.num_tasks(), g.num_edges()), (3, 1));
    assert_eq!(g.degree(2), 0);
    // A UTF-8 byte-order mark before the header is skipped, in every text format.
    for (text, name) in [
        ("3 2\n2\n1 3\n2\n", "t.graph"),
        ("0\n3 4\n0 000\n1 1\n2 0 2\n1 1\n", "t.grf"),
        ("1 2\n2 3\n", "t.edges"),
    ] {
        let plain = read_graph_from_bytes(text.as_bytes(), name, None).unwrap();
        let bom = [&[0xEF, 0xBB, 0xBF][..], text.as_bytes()].concat();
        let with_bom = read_graph_from_bytes(&bom, name, None).unwrap();
        assert_eq!(with_bom, plain, "{name}");
    }
    // Elsewhere it is an error.
    assert!(r("3 2\n\u{FEFF}2\n1 3\n2\n").is_err());
    // Vertex sizes are read and ignored; ncon = 2 vertex weights, zero allowed.
    let g = r("2 1 111 2\n9 0 5 2 3\n9 1 1 1 3\n").unwrap();
    assert_eq!(g.ncon(), 2);
    assert_eq!(g.vertex_weights(0), &[0, 5]);
    assert_eq!(g.vertex_weights(1), &[1, 1]);
    assert_eq!(g.edge_weights(0), &[3]);
    // fmt "1" and "001" agree.
    assert_eq!(
        r("2 1 1\n2 4\n1 4").unwrap(),
        r("2 1 001\n2 4\n1 4").unwrap()
    );
    // Empty graph, header only.
    assert_eq!(r("0 0").unwrap().num_tasks(), 0);
    let err = |s: &str| r(s).unwrap_err().to_string();
    assert_eq!(
        err("2 1 0 2\n2\n1\n"),
        "t.graph:1:7: ncon is given but the format has no vertex weights (middle digit 0)"
    );
    assert_eq!(
        err("2 1 10\n\n1 1\n"),
        "t.graph:2:1: expected vertex weight, found end of line"
    );
    assert_eq!(
        err("2 1 10\n-1 2\n1 1\n"),
        "t.graph:2:1: vertex weight must not be negative, found -1"
    );
    assert_eq!(
        err("2 1\n3\n1\n"),
        "t.graph:2:1: neighbour 3 out of range 1..=2"
    );
    assert_eq!(
        err("2 1\n0\n1\n"),
        "t.graph:2:1: neighbour 0 out of range 1..=2"
    );
    assert_eq!(
        err("2 1\n99999999999999999999\n"),
        "t.graph:2:1: neighbour id 99999999999999999999 is too large"
    );
    assert_eq!(
        err("% only a comment\n"),
        "t.graph:2:1: no header line (expected `n m [fmt [ncon]]`)"
    );
    assert_eq!(
        err("4294967296 0\n"),
        "t.graph:1:1: 4294967296 vertices do not fit in 32-bit ids"
    );
    // The fast path hands unusual tokens to the checked path, which names them.
    assert_eq!(
        err("2 1 1\n2 1x\n1 1\n"),
        "t.graph:2:3: expected edge weight (an integer), found '1x'"
    );
    assert_eq!(
        err("2 1\n\t2\t+1\n1\n"),
        "t.graph:2:4: expected neighbour id (an integer), found '+1'"
    );
    assert_eq!(
        err("2 1\n0000000000000000000002 7\n1\n"),
        "t.graph:2:24: neighbour 7 out of range 1..=2"
    );
    let g = r("2 1 1\n\t2\t0000000000000000000003 \r\n1 3").unwrap();
    assert_eq!(g.edge_weights(1), &[3]);
}

// ---------------------------------------------------------------- Scotch

#[test]
fn scotch_labels_loads_and_spread_tokens() {
    let g = read("small_labels.grf");
    assert_eq!((g.num_tasks(), g.num_edges()), (4, 4));
    assert_eq!(
        (0..4).map(|u| g.vertex_weight(u, 0)).collect::<Vec<_>>(),
        vec![5, 1, 2, 7]
    );
    assert_eq!(sorted(&g, 0), vec![(1, 1), (2, 3)]);
    assert_eq!(sorted(&g, 2), vec![(0, 3), (1, 4), (3, 1)]);
    // Base 1 vs base 0 and free token layout give the same graph.
    let a = read_graph_from_bytes(b"0 3 4 1 000 1 2 2 1 3 1 2", "a.grf", None).unwrap();
    let b =
        read_graph_from_bytes(b"0\n3\t4\n0\t000\n1\t1\n2\t0\t2\n1\t1\n", "b.grf", None).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.neighbors(1), &[0, 2]);
    // Flags as a plain integer: 10 = edge loads.
    let c = read_graph_from_bytes(b"0\n2 2\n0 10\n1 7 1\n1 7 0\n", "c.grf", None).unwrap();
    assert_eq!(c.edge_weights(0), &[7]);
    let e = read_graph_from_bytes(b"0\n2 2\n0 10\n1 7 1\n1 6 0\n", "c.grf", None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "c.grf:4:5: edge 0-1 has weight 7 (line 4) but 1-0 has weight 6 (line 5)"
    );
    let e = read_graph_from_bytes(b"0\n2 2\n0 000\n3 1 1 1\n0\n", "d.grf", None).unwrap_err();
    assert_eq!(e.to_string(), "d.grf:4:1: degree 3 of vertex 0 exceeds the 2 arcs announced in the header (0 used so far)");
    let e = read_graph_from_bytes(b"0\n2 2\n0 000\n1 1\n1 0\n7", "d.grf", None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "d.grf:6:1: unexpected data after the last of the 2 vertices"
    );
    let e = read_graph_from_bytes(b"0\n2 2\n0 100\n5 1 5\n5 1 5\n", "l.grf", None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "l.grf:5:1: vertex label 5 is used twice (first on line 4)"
    );
}

#[test]
fn scotch_writer_matches_scotch_layout() {
    let mut b = GraphBuilder::new(3, 1);
    b.add_edge(0, 1, 1);
    b.add_edge(1, 2, 1);
    let g = b.build();
    let mut out = Vec::new();
    write_scotch(&g, &mut out).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "0\n3\t4\n0\t000\n1\t1\n2\t0\t2\n1\t1\n"
    );
    let mut b = GraphBuilder::new(2, 1);
    b.add_edge(0, 1, 5);
    b.set_vertex_weight(1, 0, 3);
    let g = b.build();
    let mut out = Vec::new();
    write_scotch(&g, &mut out).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "0\n2\t2\n0\t011\n1\t1\t5\t1\n3\t1\t5\t0\n"
    );
    let g2 = GraphBuilder::new(2, 2).build();
    assert!(write_scotch(&g2, &mut Vec::new()).is_err());
}

#[test]
fn metis_writer_header() {
    let w = |g: &TaskGraph| {
        let mut out = Vec::new();
        write_metis(g, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    let mut b = GraphBuilder::new(3, 1);
    b.add_edge(0, 1, 1);
    assert_eq!(w(&b.clone().build()), "3 1\n2\n1\n\n");
    b.add_edge(1, 2, 4);
    assert_eq!(w(&b.clone().build()), "3 2 1\n2 1\n1 1 3 4\n2 4\n");
    b.set_vertex_weight(2, 0, 0);
    assert_eq!(w(&b.build()), "3 2 11\n1 2 1\n1 1 1 3 4\n0 2 4\n");
    let mut b = GraphBuilder::new(2, 2);
    b.add_edge(0, 1, 1);
    assert_eq!(w(&b.build()), "2 1 10 2\n1 1 2\n1 1 1\n");
}

// ---------------------------------------------------------------- Matrix Market

#[test]
fn matrix_market_rules() {
    let g = read("small_general_real.mtx");
    assert_eq!((g.num_tasks(), g.num_edges()), (4, 3));
    // a12 = 0.4 -> 1, a21 = 2.6 -> 3: {1,2} = 4; a34 = -1.5 -> 2; a14 = 3; a33 and 0.0 dropped.
    assert_eq!(sorted(&g, 0), vec![(1, 4), (3, 3)]);
    assert_eq!(sorted(&g, 2), vec![(3, 2)]);
    let r = |s: &str| read_graph_from_bytes(s.as_bytes(), "m.mtx", None).unwrap();
    let g = r("%%MatrixMarket matrix coordinate integer symmetric\n% c\n\n3 3 4\n1 1 5\n2 1 -3\n3 2 0\n3 1 2\n");
    assert_eq!(sorted(&g, 0), vec![(1, 3), (2, 2)]);
    assert_eq!(g.degree(1), 1);
    let g = r("%%matrixmarket MATRIX Coordinate Pattern Skew-Symmetric\n3 3 2\n2 1\n3 2\n");
    assert_eq!(g.num_edges(), 2);
    assert!(!g.has_edge_weights());
    let g = r("%%MatrixMarket matrix coordinate pattern general\n2 2 3\n1 2\n2 1\n1 2\n");
    assert_eq!(g.edge_weights(0), &[3]);
    let e = read_graph_from_bytes(
        b"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n2 1\n",
        "m.mtx",
        None,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "m.mtx:4:1: more entries than the 1 announced in the size line"
    );
    let e = read_graph_from_bytes(
        b"%%MatrixMarket matrix array real general\n2 2\n",
        "m.mtx",
        None,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "m.mtx:1:23: format `array` is not supported (expected `coordinate`)"
    );
    // rows <= 2·nnz + 2^24, checked on the size line; an inflated nnz fails on the entries.
    let g = r("%%MatrixMarket matrix coordinate pattern general\n16777218 16777218 1\n1 2\n");
    assert_eq!(g.num_tasks(), (1 << 24) + 2);
    let e = read_graph_from_bytes(
        b"%%MatrixMarket matrix coordinate pattern general\n% c\n16777219 16777219 1\n1 2\n",
        "m.mtx",
        None,
    )
    .map(|_| ()) // the graph itself is too large to print
    .expect_err("rows = 2^24 + 3 with one entry");
    assert!(e.to_string().starts_with("m.mtx:3:1: 16777219 rows"), "{e}");
    let e = read_graph_from_bytes(
        b"%%MatrixMarket matrix coordinate pattern general\n4000000000 4000000000 2000000000\n1 2\n",
        "m.mtx",
        None,
    )
    .map(|_| ()) // the graph itself is too large to print
    .expect_err("an inflated nnz");
    assert_eq!(
        e.to_string(),
        "m.mtx:2:1: expected 2000000000 entries, file ended after 1"
    );
}

// ---------------------------------------------------------------- edge lists

#[test]
fn edge_list_rules() {
    let g = read("small.edges");
    assert_eq!((g.num_tasks(), g.num_edges()), (3, 3));
    assert_eq!(sorted(&g, 0), vec![(1, 2), (2, 1)]);
    assert_eq!(sorted(&g, 1), vec![(0, 2), (2, 3)]);
    let g = read_graph_from_bytes(b"", "e.edges", None).unwrap();
    assert_eq!(g.num_tasks(), 0);
    let g = read_graph_from_bytes(b"# c\n5 2", "e.el", None).unwrap();
    assert_eq!((g.num_tasks(), g.num_edges()), (6, 1));
    // n <= 2·edges + 2^24: the largest id allowed with one edge, and one more.
    let g = read_graph_from_bytes(b"0 16777217\n", "e.el", None).unwrap();
    assert_eq!(g.num_tasks(), (1 << 24) + 2);
    let e = read_graph_from_bytes(b"# c\n0 16777218\n", "e.el", None)
        .map(|_| ()) // the graph itself is too large to print
        .expect_err("n = 2^24 + 3 with one edge");
    assert!(
        e.to_string().starts_with("e.el:2:3: task id 16777218"),
        "{e}"
    );
}

// ---------------------------------------------------------------- .bench

#[test]
fn bench_rules() {
    let p = fixture("small.bench");
    let (g, names) = read_bench_with_names(&std::fs::read(&p).unwrap(), &p).unwrap();
    assert_eq!(names, vec!["x", "y", "q", "r", "q2"]);
    assert_eq!((g.num_tasks(), g.num_edges()), (5, 4));
    assert_eq!(sorted(&g, 1), vec![(0, 2), (2, 2)]); // y: x twice, q -> y and y -> q
    assert_eq!(sorted(&g, 4), vec![(0, 1), (2, 1)]);
    assert_eq!(g.degree(3), 0); // r = DFF(r): self-arc dropped
}

// ---------------------------------------------------------------- mpiP graphStats

#[test]
fn mpip_rules() {
    let g = read("small.graphStats.txt");
    g.validate().unwrap();
    // Rank 4 counts although its only listed volume to 3 is 0.
    assert_eq!((g.num_tasks(), g.num_edges()), (6, 6));
    // 0.3 -> 1 (a volume is at least 1); 3-1 and 1-3 summed; 12.5 rounds away from zero.
    assert_eq!(sorted(&g, 0), vec![(1, 1000), (2, 1), (5, 40)]);
    assert_eq!(sorted(&g, 1), vec![(0, 1000), (2, 250), (3, 1500)]);
    assert_eq!(sorted(&g, 2), vec![(0, 1), (1, 250)]); // 2 , 2 dropped
    assert_eq!(sorted(&g, 4), vec![(5, 13)]);
    assert_eq!(g.total_edge_weight(), 2804);
    // Chosen by the name's end, with or without .gz; by name otherwise.
    let f = |p: &str| GraphFormat::from_path(Path::new(p));
    assert_eq!(f("AMG_64ranks.graphStats.txt.gz"), Some(GraphFormat::MpiP));
    assert_eq!(f("graphstats.TXT"), Some(GraphFormat::MpiP));
    assert_eq!(f("stats.txt"), Some(GraphFormat::EdgeList));
    let bytes = std::fs::read(fixture("small.graphStats.txt")).unwrap();
    let h = read_graph_from_bytes(&bytes, "x.txt", Some(GraphFormat::MpiP)).unwrap();
    assert_eq!(h, g);
    // Compact separators and CRLF line ends read the same.
    let crlf = String::from_utf8(bytes)
        .unwrap()
        .replace(" , ", ",")
        .replace(" = ", "=");
    let h = read_graph_from_bytes(
        crlf.replace('\n', "\r\n").as_bytes(),
        "a.graphStats.txt",
        None,
    )
    .unwrap();
    assert_eq!(h, g);
    // Zero as written: `-0` adds no edge, `1e-400` (0 as a float) weighs 1.
    let h = read_graph_from_bytes(
        b"--- Graph Information ---\n0 , 1 = -0\n1 , 2 = 1e-400\n2 , 3 = 7\n--- Graph info end ---\n",
        "z.graphStats.txt",
        None,
    )
    .unwrap();
    assert_eq!((h.num_tasks(), h.num_edges()), (4, 2));
    assert_eq!(sorted(&h, 1), vec![(2, 1)]);
    // mpiP content under an edge list's name: a hint, not a number error.
    let e = read_graph_from_bytes(b"--- Graph Information ---\n0 , 1 = 5\n", "z.txt", None)
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("z.txt:1:1: this is an mpiP graphStats file"),
        "{e}"
    );
    // The fixture copy of a real run: 64 ranks of NPB CG.
    let g = read("NPB-cg_64ranks.graphStats.txt.gz");
    assert_eq!((g.num_tasks(), g.num_edges()), (64, 184));
    assert_eq!(g.total_edge_weight(), 73_513_504_500);
    assert_eq!(
        sorted(&g, 57).iter().find(|&&(v, _)| v == 61),
        Some(&(61, 592_865_664))
    );
}

#[test]
fn shared_mpi_comm_graphs() {
    for (f, n, m, total) in [
        ("AMG2013_64ranks", 64, 1899, 10_038_944_317u64),
        ("miniFE_1024ranks", 1024, 11636, 143_282_383_200),
    ] {
        let Some(p) = shared(&format!("mpi_comm_graphs/graphs/{f}.graphStats.txt.gz")) else {
            continue;
        };
        let g = read_graph(&p, None).unwrap_or_else(|e| panic!("{e}"));
        g.validate().unwrap();
        assert_eq!((g.num_tasks(), g.num_edges()), (n, m), "{f}");
        assert_eq!(g.total_edge_weight(), total, "{f}");
    }
}

// ---------------------------------------------------------------- selection, files

#[test]
fn format_names_and_extensions() {
    let f = |p: &str| GraphFormat::from_path(Path::new(p));
    assert_eq!(f("a/b.graph"), Some(GraphFormat::Metis));
    assert_eq!(f("b.GRAPH.gz"), Some(GraphFormat::Metis));
    assert_eq!(f("b.chaco"), Some(GraphFormat::Metis));
    assert_eq!(f("b.grf.gz"), Some(GraphFormat::Scotch));
    assert_eq!(f("b.src"), Some(GraphFormat::Scotch));
    assert_eq!(f("b.mtx"), Some(GraphFormat::MatrixMarket));
    assert_eq!(f("b.el"), Some(GraphFormat::EdgeList));
    assert_eq!(f("b17_opt.bench.gz"), Some(GraphFormat::Bench));
    assert_eq!(f("b.gz"), None);
    assert_eq!(f("b.xyz"), None);
    for fmt in GraphFormat::ALL {
        assert_eq!(fmt.name().parse::<GraphFormat>(), Ok(fmt));
        assert_eq!(
            fmt.to_string().to_uppercase().parse::<GraphFormat>(),
            Ok(fmt)
        );
        for a in fmt.aliases() {
            assert_eq!(a.parse::<GraphFormat>(), Ok(fmt));
        }
    }
    assert!("nope".parse::<GraphFormat>().is_err());
    let e = read_graph_from_bytes(b"1 0\n\n", "x.foo", None).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("x.foo: cannot tell the graph format"),
        "{e}"
    );
    // An explicit format wins over the extension; gzip is found by magic bytes.
    let g =
        read_graph_from_bytes(&gzip(b"2 1\n2\n1\n"), "x.foo", Some(GraphFormat::Metis)).unwrap();
    assert_eq!(g.num_edges(), 1);
    let e = read_graph(Path::new("/nonexistent/x.graph"), None).unwrap_err();
    assert!(matches!(e, GraphError::Io { .. }));
}

#[test]
fn write_graph_file_is_atomic_and_gzips() {
    let dir = tmp_dir("write");
    let g = gen::random_graph(200, 5.0, 3);
    for (name, fmt) in [
        ("g.graph", GraphFormat::Metis),
        ("g.graph.gz", GraphFormat::Metis),
        ("g.grf", GraphFormat::Scotch),
        ("g.mtx.gz", GraphFormat::MatrixMarket),
        ("g.edges", GraphFormat::EdgeList),
    ] {
        let p = dir.join(name);
        write_graph_file(&p, &g, fmt).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(
            name.ends_with(".gz"),
            bytes.starts_with(&[0x1f, 0x8b]),
            "{name}"
        );
        let back = read_graph(&p, None).unwrap();
        assert_eq!(
            back.with_sorted_neighbors(),
            g.clone().with_sorted_neighbors(),
            "{name}"
        );
    }
    // Only the outputs are left, no temporary files.
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(
        left,
        vec!["g.edges", "g.graph", "g.graph.gz", "g.grf", "g.mtx.gz"]
    );
    // Failure leaves the old file untouched.
    let p = dir.join("g.grf");
    let before = std::fs::read(&p).unwrap();
    let two = GraphBuilder::new(3, 2).build();
    assert!(write_graph_file(&p, &two, GraphFormat::Scotch).is_err());
    assert_eq!(std::fs::read(&p).unwrap(), before);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 5);
    assert!(write_graph_file(&dir.join("x.bench"), &g, GraphFormat::Bench).is_err());
    assert!(write_graph_file(
        Path::new("/nonexistent/dir/g.graph"),
        &g,
        GraphFormat::Metis
    )
    .is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------- shared data

#[test]
fn shared_mtkahypar_instances() {
    let Some(dir) = shared("mtkahypar_instances") else {
        return;
    };
    let ok: &[(&str, usize, usize, u64, u64)] = &[
        ("graph_empty_lines.graph", 15, 3, 3, 15),
        ("graph_no_newline.graph", 7, 11, 11, 7),
        ("graph_no_newline_windows.graph", 7, 11, 11, 7),
        ("graph_with_edge_weights.graph", 8, 11, 27, 8),
        ("graph_with_node_and_edge_weights.graph", 8, 11, 27, 24),
        ("graph_with_node_weights.graph", 8, 11, 11, 24),
        ("unweighted_graph.graph", 8, 11, 11, 8),
    ];
    for &(f, n, m, ew, vw) in ok {
        let g = read_graph(&dir.join(f), None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (
                g.num_tasks(),
                g.num_edges(),
                g.total_edge_weight(),
                g.total_vertex_weight(0)
            ),
            (n, m, ew, vw),
            "{f}"
        );
    }
    for &(file, msg) in BAD.iter().filter(|(f, _)| f.starts_with("mtkahypar_")) {
        let upstream = file
            .trim_start_matches("mtkahypar_")
            .replace("target_asymmetric_weights", "target");
        let p = dir.join(&upstream);
        let e = read_graph(&p, None).unwrap_err();
        assert_eq!(e.to_string(), format!("{}:{msg}", p.display()));
    }
}

#[test]
fn shared_itc99_bench() {
    for (f, n, pairs, arcs) in [
        ("itc99/b12.bench", 1065, 2070, 2071),
        ("itc99/b17_opt.bench.gz", 24171, 52780, 52876),
    ] {
        let Some(p) = shared(f) else {
            continue;
        };
        let g = read_graph(&p, None).unwrap_or_else(|e| panic!("{e}"));
        g.validate().unwrap();
        assert_eq!((g.num_tasks(), g.num_edges()), (n, pairs), "{f}");
        assert_eq!(g.total_edge_weight(), arcs, "{f}");
    }
}

#[test]
fn shared_metis_graphs() {
    for (f, n, m) in [
        ("dimacs10/delaunay_n15.graph.gz", 32768, 98274),
        ("dimacs10/rgg_n_2_15_s0.graph.gz", 32768, 160240),
        ("walshaw/graphs/add20.graph.gz", 2395, 7462),
        ("walshaw/graphs/4elt.graph.gz", 15606, 45878),
    ] {
        let Some(p) = shared(f) else {
            continue;
        };
        let g = read_graph(&p, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((g.num_tasks(), g.num_edges()), (n, m), "{f}");
    }
}

// ---------------------------------------------------------------- round trips

prop_compose! {
    fn arb_graph(max_n: usize, max_ncon: usize)
        (n in 2..max_n, ncon in 1..=max_ncon, unit in any::<bool>())
        (edges in prop::collection::vec((0..n as u32, 0..n as u32, 1..20u64), 0..4 * n),
         vw in prop::collection::vec(0..9u64, n * ncon),
         n in Just(n), ncon in Just(ncon), unit in Just(unit))
        -> TaskGraph
    {
        let mut b = GraphBuilder::new(n, ncon);
        for &(u, v, w) in &edges {
            b.add_edge(u, v, if unit { 1 } else { w });
        }
        // The last task has an edge, so that an edge list gives the same n.
        b.add_edge(0, n as u32 - 1, 1);
        if !unit {
            for u in 0..n {
                b.set_vertex_weights(u as u32, &vw[u * ncon..(u + 1) * ncon]);
            }
        }
        b.build()
    }
}

fn round_trip(g: &TaskGraph, fmt: GraphFormat) -> TaskGraph {
    let mut out = Vec::new();
    write_graph(g, fmt, &mut out).unwrap();
    fmt.read(&out, Path::new("roundtrip")).unwrap_or_else(|e| {
        panic!("{e}\n{}", String::from_utf8_lossy(&out));
    })
}

proptest! {
    #[test]
    fn metis_round_trip(g in arb_graph(40, 3)) {
        prop_assert_eq!(round_trip(&g, GraphFormat::Metis), g);
    }

    #[test]
    fn scotch_round_trip(g in arb_graph(40, 1)) {
        prop_assert_eq!(round_trip(&g, GraphFormat::Scotch), g);
    }

    #[test]
    fn edge_list_round_trip(g in arb_graph(40, 1)) {
        let (x, a, e, _) = g.csr();
        let unit = TaskGraph::from_csr(x.to_vec(), a.to_vec(), e.to_vec(), vec![1; g.num_tasks()], 1).unwrap();
        prop_assert_eq!(round_trip(&unit, GraphFormat::EdgeList).with_sorted_neighbors(), unit.with_sorted_neighbors());
    }

    #[test]
    fn matrix_market_round_trip(g in arb_graph(40, 1)) {
        let (x, a, e, _) = g.csr();
        let unit = TaskGraph::from_csr(x.to_vec(), a.to_vec(), e.to_vec(), vec![1; g.num_tasks()], 1).unwrap();
        prop_assert_eq!(round_trip(&unit, GraphFormat::MatrixMarket).with_sorted_neighbors(), unit.with_sorted_neighbors());
    }

    #[test]
    fn builder_output_is_valid(g in arb_graph(30, 2)) {
        prop_assert!(g.validate().is_ok());
    }
}

// ---------------------------------------------------------------- MPI volumes

proptest! {
    /// A sparse list and a dense matrix of the same directed volumes read as one graph,
    /// whose edge `{u, v}` weighs the volume from `u` to `v` plus the one back (rounded),
    /// recomputed naively; self-volumes and zeros add nothing.
    #[test]
    fn volumes_are_made_symmetric_by_addition(
        n in 1usize..9,
        cells in proptest::collection::vec((0u32..4, 0u64..1000), 81),
        csv in any::<bool>(),
    ) {
        let vol = |i: usize, j: usize| -> u64 {
            let (kind, x) = cells[i * 9 + j];
            if kind == 0 { 0 } else { x }
        };
        let sep = if csv { "," } else { " " };
        let mut dense = String::from("# TreeMatch matrix\n");
        let mut sparse = String::from(if csv { "src,dst,bytes\n" } else { "" });
        for i in 0..n {
            let row: Vec<String> = (0..n).map(|j| vol(i, j).to_string()).collect();
            dense.push_str(&row.join(sep));
            dense.push('\n');
            for j in 0..n {
                sparse.push_str(&format!("{i}{sep}{j}{sep}{}.0\n", vol(i, j)));
            }
        }
        let d = read_dense_matrix(dense.as_bytes(), Path::new("m.mat")).unwrap();
        let s = read_volumes(&gzip(sparse.as_bytes()), Path::new("v.csv")).unwrap();
        prop_assert_eq!(d.num_tasks(), n);
        prop_assert_eq!(s.num_tasks(), n);
        for u in 0..n {
            let want: Vec<(u32, u64)> = (0..n)
                .filter(|&v| v != u && vol(u, v) + vol(v, u) > 0)
                .map(|v| (v as u32, vol(u, v) + vol(v, u)))
                .collect();
            prop_assert_eq!(sorted(&d, u as u32), want.clone());
            prop_assert_eq!(sorted(&s, u as u32), want);
        }
    }
}

#[test]
fn volume_lists_dense_matrices_and_task_weights_name_the_place_of_errors() {
    let bad: [(&str, &[u8], &str); 8] = [
        (
            "v.csv",
            b"src,dst,bytes\n0,1,5\n1,x,2\n",
            "v.csv:3:3: expected destination rank (an integer), found `x`",
        ),
        (
            "v.csv",
            b"0 1 -3\n",
            "v.csv:1:5: volume must not be negative, found -3",
        ),
        (
            "v.csv",
            b"0 1 2 3\n",
            "v.csv:1:7: unexpected `3` after `src dst bytes`",
        ),
        ("v.csv", b"# nothing\n", "no volume line"),
        (
            "m.mat",
            b"0 1\n1 0 4\n",
            "m.mat:2:5: row 2 has more than 2 entries",
        ),
        (
            "m.mat",
            b"0 1 2\n1 0\n",
            "m.mat:2:4: row 2 has 2 entries; the first row has 3",
        ),
        (
            "m.mat",
            b"0 1\n1 0\n1 1\n",
            "m.mat:3:1: line 3 of a 2x2 matrix (one too many)",
        ),
        (
            "m.mat",
            b"0 1 2\n1 0 3\n",
            "m.mat:2:1: 2 rows, but the rows have 3 entries: a dense matrix is square",
        ),
    ];
    for (name, bytes, want) in bad {
        let e = read_graph_from_bytes(bytes, name, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e}\nwanted {want}");
    }
    // Dense matrices keep ranks that communicate with none.
    let g = read_graph_from_bytes(b"0 2 0\n1 0 0\n0 0 0\n", "m.dense", None).unwrap();
    assert_eq!((g.num_tasks(), g.num_edges()), (3, 1));
    assert_eq!(sorted(&g, 0), [(1, 3)]);
    // Task weights: one line per task, as many weights on each.
    let w = |text: &[u8], n| read_task_weights(text, Path::new("w.txt"), n);
    assert_eq!(w(b"# ranks\n3 1\n4,1\n", 2).unwrap(), (2, vec![3, 1, 4, 1]));
    for (text, n, want) in [
        (
            &b"1\n2 3\n"[..],
            2,
            "w.txt:2:3: task 2 has more than 1 weights",
        ),
        (
            b"1 2\n3\n",
            2,
            "w.txt:2:2: task 2 has 1 weights; the first line has 2",
        ),
        (b"1\n2\n", 3, "2 task lines, but the graph has 3 tasks"),
        (
            b"1\n2\n",
            1,
            "w.txt:2:1: a line for task 2 but the graph has 1 tasks",
        ),
        (b"1\n-2\n", 2, "w.txt:2:1:"),
    ] {
        let e = w(text, n).unwrap_err().to_string();
        assert!(e.contains(want), "{e}\nwanted {want}");
    }
    let g = g.with_vertex_weights(1, vec![5, 6, 7]);
    assert_eq!((g.ncon(), g.total_vertex_weight(0)), (1, 18));
}
