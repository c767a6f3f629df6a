//! Property and unit tests of every architecture kind.

use std::collections::BTreeSet;

use proptest::prelude::*;

use crate::*;

fn fixture(name: &str) -> String {
    format!("{}/../../fixtures/arch/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Checks the invariants every architecture must keep. `metric`: also the triangle
/// inequality; `hops`: routes have `distance` links.
fn check_arch(a: &dyn Architecture, metric: bool, hops: bool) {
    let k = a.pe_count();
    assert!(k >= 1);
    let pes: Vec<PeId> = (0..k).map(PeId).collect();
    // Distances.
    for &x in &pes {
        for &y in &pes {
            let d = a.distance(x, y);
            assert_eq!(d, a.distance(y, x), "{}: asymmetric {x:?} {y:?}", a.spec());
            assert_eq!(d == 0, x == y, "{}: zero iff equal {x:?} {y:?}", a.spec());
        }
    }
    // Rows of distances, whole and cut short, equal the pairwise calls.
    let mut row = vec![u64::MAX; k as usize];
    for &x in &pes {
        let want: Vec<u64> = pes.iter().map(|&y| a.distance(x, y)).collect();
        a.distances_from(x, &mut row);
        assert_eq!(row, want, "{}: distances_from({x:?})", a.spec());
        // Cuts inside the first row of a mesh and inside a later one.
        for cut in [1, (k as usize).div_ceil(2), (k as usize) * 2 / 3 + 1] {
            let cut = cut.min(k as usize);
            row.fill(u64::MAX);
            a.distances_from(x, &mut row[..cut]);
            assert_eq!(
                row[..cut],
                want[..cut],
                "{}: distances_from({x:?}) cut at {cut}",
                a.spec()
            );
        }
    }
    if metric && k <= 64 {
        for &x in &pes {
            for &y in &pes {
                for &z in &pes {
                    assert!(a.distance(x, z) <= a.distance(x, y) + a.distance(y, z));
                }
            }
        }
    }
    // Domains.
    let mut leaves = Vec::new();
    let mut stack = vec![a.root()];
    let mut buf = Vec::new();
    while let Some(d) = stack.pop() {
        buf.clear();
        a.domain_pes(&d, &mut buf);
        assert_eq!(buf.len() as u32, a.domain_size(&d), "{}", a.spec());
        assert_eq!(
            buf.iter().map(|&p| a.pe_capacity(p)).sum::<u64>(),
            a.domain_capacity(&d)
        );
        assert_eq!(a.domain_distance(&d, &d), 0);
        let parent: BTreeSet<PeId> = buf.iter().copied().collect();
        assert_eq!(parent.len(), buf.len(), "duplicate PEs in a domain");
        match a.bipartition(&d) {
            None => {
                assert_eq!(
                    buf.len(),
                    1,
                    "{}: unsplittable domain of {} PEs",
                    a.spec(),
                    buf.len()
                );
                leaves.push((buf[0], d));
            }
            Some((d0, d1)) => {
                let (mut v0, mut v1) = (Vec::new(), Vec::new());
                a.domain_pes(&d0, &mut v0);
                a.domain_pes(&d1, &mut v1);
                assert!(!v0.is_empty() && !v1.is_empty(), "{}: empty half", a.spec());
                let s0: BTreeSet<PeId> = v0.iter().copied().collect();
                let s1: BTreeSet<PeId> = v1.iter().copied().collect();
                assert!(s0.is_disjoint(&s1));
                let u: BTreeSet<PeId> = s0.union(&s1).copied().collect();
                assert_eq!(u, parent, "{}: halves do not make the parent", a.spec());
                stack.push(d0);
                stack.push(d1);
            }
        }
    }
    leaves.sort_by_key(|l| l.0);
    assert_eq!(leaves.iter().map(|l| l.0).collect::<Vec<_>>(), pes);
    for (p, dp) in &leaves {
        for (q, dq) in &leaves {
            assert_eq!(
                a.domain_distance(dp, dq),
                a.distance(*p, *q),
                "{}: domain distance {p:?} {q:?}",
                a.spec()
            );
        }
    }
    // Link graph.
    if let Some(g) = explicit_graph_of(a) {
        for &x in &pes {
            let sp = g.shortest_paths(x.0);
            for &y in &pes {
                assert_eq!(
                    sp[y.idx()],
                    g.scale * a.distance(x, y),
                    "{}: shortest path {x:?} {y:?}",
                    a.spec()
                );
            }
        }
    }
    // Routes: targets measured in hops (meshes, tori, hypercubes) route every pair.
    let routing = a.routing();
    assert!(routing.is_some() || !hops, "{}: no routes", a.spec());
    let mut r = Vec::new();
    for &x in &pes {
        for &y in &pes {
            let Some(routing) = routing else {
                continue;
            };
            r.clear();
            routing.route(x, y, &mut r);
            if hops {
                assert_eq!(
                    r.len() as u64,
                    a.distance(x, y),
                    "{}: route length",
                    a.spec()
                );
            }
            let mut cur = x;
            for &l in &r {
                assert!(l < routing.link_count());
                let (s, t) = routing
                    .link_endpoints(l)
                    .expect("route uses a non-existent link");
                assert_eq!(s, cur, "{}: links not consecutive", a.spec());
                assert_eq!(a.distance(s, t), 1);
                cur = t;
            }
            assert_eq!(cur, y);
        }
    }
    // Spec round trip.
    let spec = a.spec();
    if !spec.contains("<memory>") {
        let b = parse_arch(&spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_same(a, &*b);
        assert_eq!(b.spec(), spec);
    }
    if let Some(t) = write_scotch_target(a) {
        let b = parse_arch(&t).unwrap_or_else(|e| panic!("{t}: {e}"));
        assert_same(a, &*b);
    }
}

fn assert_same(a: &dyn Architecture, b: &dyn Architecture) {
    assert_eq!(a.pe_count(), b.pe_count(), "{} vs {}", a.spec(), b.spec());
    for x in 0..a.pe_count() {
        assert_eq!(a.pe_capacity(PeId(x)), b.pe_capacity(PeId(x)));
        for y in 0..a.pe_count() {
            assert_eq!(
                a.distance(PeId(x), PeId(y)),
                b.distance(PeId(x), PeId(y)),
                "{} vs {}",
                a.spec(),
                b.spec()
            );
        }
    }
}

fn dims_strategy() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(1u32..=5, 1..=4)
        .prop_filter("small", |d| d.iter().product::<u32>() <= 150)
}

fn tree_strategy() -> impl Strategy<Value = (Vec<u32>, Vec<u64>)> {
    (1usize..=3).prop_flat_map(|l| {
        (
            prop::collection::vec(1u32..=4, l),
            prop::collection::vec(1u64..=20, l),
        )
            .prop_map(|(c, inc)| {
                let mut acc = 0;
                let d = inc.iter().map(|x| {
                    acc += x;
                    acc
                });
                (c, d.collect())
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn mesh_invariants(dims in dims_strategy()) {
        check_arch(&Mesh::new(dims).unwrap(), true, true);
    }

    #[test]
    fn torus_invariants(dims in dims_strategy()) {
        check_arch(&Torus::new(dims).unwrap(), true, true);
    }

    #[test]
    fn torus_unwraps_to_its_mesh(dims in dims_strategy()) {
        let t = Torus::new(dims.clone()).unwrap();
        let m = Mesh::new(dims.clone()).unwrap();
        prop_assert!(m.shape().unwrapped().is_none());
        match t.shape().unwrapped() {
            // Rings of at most 2 PEs have no wrap-around of their own.
            None => prop_assert!(dims.iter().all(|&d| d <= 2)),
            Some(u) => {
                prop_assert_eq!(u.pe_count(), t.pe_count());
                prop_assert_eq!(u.spec(), m.spec());
                for a in 0..t.pe_count() {
                    for b in 0..t.pe_count() {
                        let (a, b) = (PeId(a), PeId(b));
                        prop_assert_eq!(u.distance(a, b), m.distance(a, b));
                        prop_assert!(u.distance(a, b) >= t.distance(a, b));
                    }
                }
            }
        }
    }

    #[test]
    fn hypercube_invariants(dim in 0u32..=6) {
        check_arch(&Hypercube::new(dim).unwrap(), true, true);
    }

    #[test]
    fn complete_invariants(k in 1u32..=20) {
        check_arch(&Complete::new(k).unwrap(), true, false);
    }

    #[test]
    fn wcomplete_invariants(caps in prop::collection::vec(1u64..=10, 1..=12)) {
        let a = WeightedComplete::new(caps.clone()).unwrap();
        check_arch(&a, true, false);
        // LPT split: halves differ by at most the largest capacity.
        if let Some((d0, d1)) = a.bipartition(&a.root()) {
            let max = *caps.iter().max().unwrap();
            prop_assert!(a.domain_capacity(&d0).abs_diff(a.domain_capacity(&d1)) <= max);
        }
    }

    #[test]
    fn tree_invariants((counts, dists) in tree_strategy()) {
        let t = Tree::new(counts.clone(), dists.clone()).unwrap();
        check_arch(&t, true, false);
        // tleaf conversion round trip.
        if let Some((s, c)) = t.tleaf_levels() {
            let u = Tree::from_tleaf(s, c).unwrap();
            assert_same(&t, &u);
        }
    }

    #[test]
    fn subset_invariants(dims in dims_strategy(), pick in prop::collection::vec(any::<prop::sample::Index>(), 1..12), torus in any::<bool>()) {
        let k: u32 = dims.iter().product();
        let mut pes: Vec<PeId> = pick.iter().map(|i| PeId(i.index(k as usize) as u32)).collect();
        let mut seen = BTreeSet::new();
        pes.retain(|p| seen.insert(*p));
        let inner: Box<dyn Architecture> = if torus { Box::new(Torus::new(dims).unwrap()) } else { Box::new(Mesh::new(dims).unwrap()) };
        let s = Subset::new(inner, pes.clone()).unwrap();
        for (i, &p) in pes.iter().enumerate() {
            for (j, &q) in pes.iter().enumerate() {
                prop_assert_eq!(s.distance(PeId(i as u32), PeId(j as u32)), s.inner().distance(p, q));
            }
        }
        check_arch(&s, true, false);
    }

    #[test]
    fn explicit_graph_matches_link_graph(dims in dims_strategy(), w in prop::collection::vec(1u64..=9, 400)) {
        // A mesh's links with random weights: distances must be Dijkstra distances.
        let m = Mesh::new(dims).unwrap();
        let g = explicit_graph_of(&m).unwrap();
        let links: Vec<(u32, u32, u64)> = g.edges.iter().enumerate().map(|(i, &(a, b, _))| (a, b, w[i % w.len()])).collect();
        let e = ExplicitGraph::new(m.pe_count(), links.clone(), Vec::new()).unwrap();
        // Against Dijkstra on the links as given, not on what the target stored.
        let reference = LinkGraph::new(m.pe_count(), links, 1);
        for a in 0..m.pe_count() {
            let d = reference.shortest_paths(a);
            for b in 0..m.pe_count() {
                prop_assert_eq!(e.distance(PeId(a), PeId(b)), d[b as usize]);
            }
        }
        check_arch(&e, true, false);
        let p = Precomputed::new(Box::new(e));
        check_arch(&p, true, false);
    }

    #[test]
    fn matrix_from_mesh(dims in dims_strategy()) {
        let m = Torus::new(dims).unwrap();
        let k = m.pe_count();
        let v = (0..k).flat_map(|a| (0..k).map(move |b| (a, b))).map(|(a, b)| m.distance(PeId(a), PeId(b))).collect();
        let x = DistanceMatrix::new(k, v).unwrap();
        assert_same(&m, &x);
        check_arch(&x, true, false);
    }

    #[test]
    fn spec_strings_round_trip(dims in dims_strategy(), dim in 0u32..=5) {
        let d: Vec<String> = dims.iter().map(|x| x.to_string()).collect();
        for spec in [format!("mesh:{}", d.join("x")), format!("torus:{}", d.join("x")), format!("hypercube:{dim}")] {
            let a = parse_arch(&spec).unwrap();
            prop_assert_eq!(a.spec(), spec.clone());
            let b = parse_arch(&write_scotch_target(&*a).unwrap()).unwrap();
            assert_same(&*a, &*b);
        }
    }
}

#[test]
fn tleaf_equals_tree_doc_example() {
    let t = parse_arch("tree:4:8:8/1:10:100").unwrap();
    let s = parse_arch("tleaf 3 8 90 8 9 4 1").unwrap();
    assert_same(&*t, &*s);
    assert_eq!(t.pe_count(), 256);
    assert_eq!(t.distance(PeId(0), PeId(3)), 1);
    assert_eq!(t.distance(PeId(0), PeId(4)), 10);
    assert_eq!(t.distance(PeId(0), PeId(31)), 10);
    assert_eq!(t.distance(PeId(0), PeId(32)), 100);
    assert_eq!(s.spec(), "tree:4:8:8/1:10:100");
    assert_eq!(write_scotch_target(&*t).unwrap(), "tleaf 3 8 90 8 9 4 1\n");
    let f = parse_arch(&fixture("tleaf3.tgt")).unwrap();
    assert_same(&*t, &*f);
    // 192 PEs example of the brief.
    assert_eq!(parse_arch("tree:4:8:6/1:10:100").unwrap().pe_count(), 192);
    // Not increasing: no tleaf form.
    assert!(write_scotch_target(&*parse_arch("tree:2:2/5:3").unwrap()).is_none());
}

#[test]
fn distance_rows_beyond_eight_dimensions() {
    // Nine dimensions take the per-PE fallback of the grid's row walk.
    for spec in ["mesh:2x2x2x2x2x2x2x2x2", "torus:3x1x2x2x2x2x2x2x3"] {
        let a = parse_arch(spec).unwrap();
        let k = a.pe_count();
        let mut row = vec![0u64; k as usize];
        for x in [0, 1, k / 2, k - 1] {
            a.distances_from(PeId(x), &mut row);
            for y in 0..k {
                assert_eq!(row[y as usize], a.distance(PeId(x), PeId(y)), "{spec}");
            }
        }
    }
}

#[test]
fn scotch_numbering() {
    // Scotch mesh2D X Y: t(x, y) = y * X + x.
    let m = parse_arch("mesh2D 4 3").unwrap();
    let pe = |x: u32, y: u32| PeId(y * 4 + x);
    assert_eq!(m.distance(pe(0, 0), pe(3, 2)), 5);
    assert_eq!(m.distance(pe(1, 0), pe(1, 2)), 2);
    assert_eq!(m.distance(PeId(3), PeId(4)), 4); // (3,0) to (0,1)
    let t = parse_arch("torus3D 4 4 4").unwrap();
    let pe3 = |x: u32, y: u32, z: u32| PeId(x + 4 * (y + 4 * z));
    assert_eq!(t.distance(pe3(0, 0, 0), pe3(3, 3, 3)), 3);
    assert_eq!(t.distance(pe3(0, 0, 0), pe3(2, 2, 2)), 6);
    let x = parse_arch("meshXD 3 2 3 4").unwrap();
    assert_same(&*x, &*parse_arch("mesh:2x3x4").unwrap());
    assert_same(
        &*parse_arch("torusXD 2 5 3").unwrap(),
        &*parse_arch("torus2D 5 3").unwrap(),
    );
    assert_eq!(
        write_scotch_target(&*parse_arch("mesh:2x3").unwrap()).unwrap(),
        "mesh2D 2 3\n"
    );
    assert_eq!(
        write_scotch_target(&*parse_arch("torus:16").unwrap()).unwrap(),
        "torusXD 1 16\n"
    );
    assert_eq!(
        write_scotch_target(&*parse_arch("mesh:2x2x2x2").unwrap()).unwrap(),
        "meshXD 4 2 2 2 2\n"
    );
    // Hypercube labels.
    let h = parse_arch("hcub 4").unwrap();
    assert_eq!(h.distance(PeId(0b0101), PeId(0b1010)), 4);
    assert_eq!(write_scotch_target(&*h).unwrap(), "hcub 4\n");
    // Scotch's first mesh split: lower half in x (the larger dimension) gets ceil.
    let (d0, d1) = m.bipartition(&m.root()).unwrap();
    assert_eq!((m.domain_size(&d0), m.domain_size(&d1)), (6, 6));
}

#[test]
fn complete_and_weighted() {
    let c = parse_arch("cmplt 5").unwrap();
    assert_same(&*c, &*parse_arch("complete:5").unwrap());
    let w = parse_arch("wcomplete:1,1,2,4").unwrap();
    assert_eq!(w.pe_capacity(PeId(3)), 4);
    assert_eq!(w.domain_capacity(&w.root()), 8);
    let (d0, d1) = w.bipartition(&w.root()).unwrap();
    assert_eq!((w.domain_capacity(&d0), w.domain_capacity(&d1)), (4, 4));
    assert_same(&*w, &*parse_arch("cmpltw 4 1 1 2 4").unwrap());
    assert_eq!(write_scotch_target(&*w).unwrap(), "cmpltw 4 1 1 2 4\n");
    assert!(!w.is_uniform());
}

#[test]
fn torus_routes_and_links() {
    let t = Torus::new(vec![4, 2, 1]).unwrap();
    check_arch(&t, true, true);
    // Tie (|dx| = d/2) goes towards +.
    let mut r = Vec::new();
    let rt = t.routing().unwrap();
    rt.route(PeId(0), PeId(2), &mut r);
    assert_eq!(r.len(), 2);
    assert_eq!(rt.link_endpoints(r[0]), Some((PeId(0), PeId(1))));
    // Size-2 dimension: + and - reach the same neighbour through distinct links.
    let plus = rt
        .link_endpoints(2) /* (pe 0, dim 1, +) */
        .unwrap();
    let minus = rt
        .link_endpoints(3) /* (pe 0, dim 1, -) */
        .unwrap();
    assert_eq!(plus, minus);
    assert_eq!(rt.link_count(), 8 * 3 * 2);
    // Mesh boundary link ids exist but go nowhere.
    let m = Mesh::new(vec![3]).unwrap();
    let mr = m.routing().unwrap();
    assert_eq!(mr.link_endpoints(2 * 2), None);
    assert_eq!(mr.link_endpoints(1), None);
}

#[test]
fn domain_distances_on_boxes() {
    let m = Mesh::new(vec![8, 8]).unwrap();
    let (l, r) = m.bipartition(&m.root()).unwrap();
    assert_eq!(m.domain_distance(&l, &r), 4);
    let t = Torus::new(vec![8]).unwrap();
    let (l, r) = t.bipartition(&t.root()).unwrap();
    let (ll, lr) = t.bipartition(&l).unwrap();
    let (_, rr) = t.bipartition(&r).unwrap();
    assert_eq!(t.domain_distance(&l, &r), 4);
    // Quarters [0,1] and [6,7] are neighbours around the ring: centres 0.5 and 6.5.
    assert_eq!(t.domain_distance(&ll, &rr), 2);
    assert_eq!(t.domain_distance(&ll, &lr), 2);
    let h = Hypercube::new(3).unwrap();
    let (a, b) = h.bipartition(&h.root()).unwrap();
    assert_eq!(h.domain_distance(&a, &b), 1);
}

#[test]
fn explicit_graph_file() {
    let g = parse_arch(&format!("graph:{}", fixture("ring8w.graph"))).unwrap();
    assert_eq!(g.pe_count(), 8);
    // 1-2 (1), 2-3 (2): PEs 0 and 2 at distance 3; 0 to 4 through the chord (5) or the ring.
    assert_eq!(g.distance(PeId(0), PeId(2)), 3);
    assert_eq!(g.distance(PeId(0), PeId(4)), 5);
    assert_eq!(g.distance(PeId(0), PeId(7)), 3);
    check_arch(&*g, true, false);
    let c = parse_arch(&format!("graph:{}", fixture("caps4.graph"))).unwrap();
    assert_eq!(
        (0..4).map(|p| c.pe_capacity(PeId(p))).collect::<Vec<_>>(),
        vec![2, 1, 1, 4]
    );
    check_arch(&*c, true, false);
    assert!(write_scotch_target(&*c).is_none());
}

#[test]
fn gzip_files() {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("taskmap-arch-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("ring.graph.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&std::fs::read(fixture("ring8w.graph")).unwrap())
        .unwrap();
    std::fs::write(&p, e.finish().unwrap()).unwrap();
    let g = parse_arch(&format!("graph:{}", p.display())).unwrap();
    assert_eq!(g.distance(PeId(0), PeId(4)), 5);
    let t = dir.join("t.tgt.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(b"torus2D 4 4\n").unwrap();
    std::fs::write(&t, e.finish().unwrap()).unwrap();
    assert_eq!(
        parse_arch(&t.display().to_string()).unwrap().spec(),
        "torus:4x4"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn large_explicit_graph_uses_row_cache() {
    // A ring above the full-matrix limit.
    let k = crate::explicit::FULL_MATRIX_MAX_PES + 10;
    let links: Vec<(u32, u32, u64)> = (0..k).map(|i| (i, (i + 1) % k, 1)).collect();
    let g = ExplicitGraph::new(k, links, Vec::new()).unwrap();
    for (a, b) in [
        (0, 1),
        (0, k / 2),
        (5, k - 5),
        (100, 4000),
        (k - 1, 0),
        (7, 7),
    ] {
        let d = a.abs_diff(b);
        assert_eq!(g.distance(PeId(a), PeId(b)), u64::from(d.min(k - d)));
    }
    // Every PE is a leaf exactly once, halves are non-empty.
    let mut count = 0;
    let mut stack = vec![g.root()];
    while let Some(d) = stack.pop() {
        match g.bipartition(&d) {
            None => count += 1,
            Some((a, b)) => {
                assert!(g.domain_size(&a) > 0 && g.domain_size(&b) > 0);
                stack.extend([a, b]);
            }
        }
    }
    assert_eq!(count, k);
    let (a, b) = g.bipartition(&g.root()).unwrap();
    assert!(g.domain_size(&a).abs_diff(g.domain_size(&b)) <= 2);
}

#[test]
fn matrix_file() {
    let m = parse_arch(&format!("matrix:{}", fixture("small.mat"))).unwrap();
    assert_eq!(m.pe_count(), 4);
    assert_eq!(m.distance(PeId(0), PeId(2)), 5);
    let (a, b) = m.bipartition(&m.root()).unwrap();
    let (mut va, mut vb) = (Vec::new(), Vec::new());
    m.domain_pes(&a, &mut va);
    m.domain_pes(&b, &mut vb);
    va.sort();
    vb.sort();
    assert!(
        va == vec![PeId(0), PeId(1)] && vb == vec![PeId(2), PeId(3)]
            || vb == vec![PeId(0), PeId(1)] && va == vec![PeId(2), PeId(3)]
    );
    assert_eq!(m.domain_distance(&a, &b), 5);
    check_arch(&*m, true, false);
}

#[test]
fn scotch_sub_files() {
    let s = parse_arch(&fixture("sub4.tgt")).unwrap();
    assert_eq!(s.spec(), "sub:0-1,4-5:mesh:4x4");
    assert_eq!(s.distance(PeId(1), PeId(2)), 2); // (1,0) to (0,1)
    check_arch(&*s, true, false);
    // Inner target first is accepted too.
    let t = parse_arch("sub mesh2D 4 4 4 0 1 4 5").unwrap();
    assert_same(&*s, &*t);
    assert_eq!(
        write_scotch_target(&*s).unwrap(),
        "sub 4 0 1 4 5\nmesh2D 4 4\n"
    );
    let nested = parse_arch("sub:2,0:sub:0-1,4-5:mesh:4x4").unwrap();
    assert_eq!(nested.distance(PeId(0), PeId(1)), 1);
    check_arch(&*nested, true, false);
    let f = parse_arch(&format!("tgt:{}", fixture("torus4x4.tgt"))).unwrap();
    assert_eq!(f.spec(), "torus:4x4");
}

#[test]
fn scotch_decompositions() {
    // amk_m2 3 2 (deco 0), amk_grf of the same 3x2 grid (deco 1, and deco 2 with -2):
    // all three are mesh:3x2, labels = PEs.
    let mesh = parse_arch("mesh:3x2").unwrap();
    for f in ["deco0", "deco1", "deco2"] {
        let a = parse_arch(&fixture(&format!("mesh3x2.{f}.tgt"))).unwrap();
        assert_same(&*mesh, &*a);
        check_arch(&*a, true, false);
        assert!(a.spec().starts_with("tgt:"), "{}", a.spec());
    }
    let d0 = parse_arch(&fixture("mesh3x2.deco0.tgt")).unwrap();
    assert_eq!(d0.name(), "deco");
    // The Scotch text written back is a deco 0 of the same target.
    let back = parse_arch(&write_scotch_target(&*d0).unwrap()).unwrap();
    assert_same(&*d0, &*back);
    // Its tree: the root splits {0,1,3,4} (domain 2) from {2,5} (domain 3).
    let (h0, h1) = d0.bipartition(&d0.root()).unwrap();
    let pes = |d| {
        let mut v = Vec::new();
        d0.domain_pes(&d, &mut v);
        v.sort();
        v
    };
    assert_eq!(pes(h0), [PeId(0), PeId(1), PeId(3), PeId(4)]);
    assert_eq!(pes(h1), [PeId(2), PeId(5)]);
    // Labels 10, 20, 30 are PEs 0, 1, 2 by rank; weights are capacities; a tree with an
    // unused half (number 3 absent) still splits into non-empty domains.
    let d = parse_arch("deco 0 3 13 30 2 13 10 1 4 20 1 5 5 3 4").unwrap();
    assert_eq!(d.pe_count(), 3);
    assert_eq!(d.pe_capacity(PeId(2)), 2);
    assert_eq!(d.distance(PeId(2), PeId(0)), 5); // d(30, 10): the first distance
    assert_eq!(d.distance(PeId(2), PeId(1)), 3); // d(30, 20)
    assert_eq!(d.distance(PeId(1), PeId(0)), 4); // d(20, 10)
    check_arch(&*d, false, false);
    let (a, b) = d.bipartition(&d.root()).unwrap();
    assert_eq!((d.domain_size(&a), d.domain_size(&b)), (2, 1));
    // A deco 2 of a 4x4 grid restricted to vertices 0 3 5 10 15 (amk_grf -l).
    let sub = parse_arch(&fixture("mesh4x4sub.deco2.tgt")).unwrap();
    assert_same(&*parse_arch("sub:0,3,5,10,15:mesh:4x4").unwrap(), &*sub);
    // ltleaf: leaf i has label i - i%4 + perm[i%4]; PE = label.
    let lt = parse_arch("ltleaf 2 2 10 4 1 4 3 2 1 0").unwrap();
    let tree = parse_arch("tleaf 2 2 10 4 1").unwrap();
    for a in 0..8 {
        for b in 0..8 {
            let leaf = |l: u32| l - l % 4 + 3 - l % 4;
            assert_eq!(
                lt.distance(PeId(a), PeId(b)),
                tree.distance(PeId(leaf(a)), PeId(leaf(b)))
            );
        }
    }
    // Leaf i has label i + 1 (leaf 7 label 0): label L sits on leaf L - 1, so labels 0
    // and 1 are in different groups, labels 1 and 2 in the same one (a cycle, not its
    // own inverse: reading perm the other way round would put 0 and 1 together).
    let lt = parse_arch("ltleaf 2 2 10 4 1 8 1 2 3 4 5 6 7 0").unwrap();
    assert_eq!(lt.distance(PeId(0), PeId(1)), 11);
    assert_eq!(lt.distance(PeId(1), PeId(2)), 1);
    assert_eq!(lt.distance(PeId(4), PeId(5)), 11);
    assert_eq!(lt.distance(PeId(5), PeId(6)), 1);
    assert_eq!(lt.distance(PeId(0), PeId(5)), 1);
    check_arch(&*lt, false, false);
    for bad in [
        "ltleaf 2 2 10 4 1 3 0 1 2",
        "ltleaf 1 4 1 2 0 2",
        // A permutation size beyond the indices given, refused before any allocation.
        "ltleaf 1 4000000000 1 4000000000 0 1",
        "deco 0 0 1",
        "deco 0 2 1 0 1 1 1 1 2 1",
        "deco 0 2 3 0 1 2 1 1 3",
        "deco 0 2 3 0 0 2 1 1 3 1",
        "deco 1 1 1 0 2 1",
        "deco 2 1 1 1 0 0 1 1 1 0 -1 -1 -1 0 0 0 1 0 000 0 1",
        "deco 2 1 1 9999999999 0 0",
    ] {
        assert!(parse_arch(bad).is_err(), "{bad:?} should fail");
    }
    assert_eq!(
        parse_arch("deco 2 1 1 1 0 0 1 1 1 0 -1 -1 -1 0 0 0 1 0 0 000 0 1 0")
            .unwrap()
            .pe_count(),
        1
    );
}

#[test]
fn stats() {
    let m = parse_arch("mesh:4x4").unwrap();
    assert_eq!(diameter(&*m), 6);
    let c = parse_arch("complete:7").unwrap();
    assert_eq!(mean_distance(&*c), 1.0);
    assert_eq!(mean_distance(&*parse_arch("complete:1").unwrap()), 0.0);
    // Ring of 4: distances 1,2,1 from each PE.
    let t = parse_arch("torus:4").unwrap();
    assert!((mean_distance(&*t) - 4.0 / 3.0).abs() < 1e-12);
    let g = parse_arch(&format!("graph:{}", fixture("ring8w.graph"))).unwrap();
    let mut max = 0;
    for a in 0..8 {
        for b in 0..8 {
            max = max.max(g.distance(PeId(a), PeId(b)));
        }
    }
    assert_eq!(diameter(&*g), max);
    // Sampled regime is deterministic.
    let big = parse_arch("torus:128x64").unwrap();
    let (x, y) = (mean_distance(&*big), mean_distance(&*big));
    assert_eq!(x, y);
    assert!((x - 48.0).abs() < 0.5, "{x}");
}

#[test]
fn precomputed_forwards() {
    let p = Precomputed::new(parse_arch("tree:2:3/1:7").unwrap());
    assert!(p.is_cached());
    check_arch(&p, true, false);
    assert_eq!(p.spec(), "tree:2:3/1:7");
}

#[test]
fn bad_specs() {
    for s in [
        "",
        "torus:8xx8",
        "mesh:0x4",
        "mesh:",
        "mesh:4x-1",
        "complete:0",
        "complete:abc",
        "complete:99999999999999",
        "hypercube:32",
        "mesh:65536x65536x2",
        "tree:4:8/1",
        "tree:4:8:6",
        "tree:4:0/1:2",
        "tree:4:4/0:2",
        "tree:65536:65536:2/1:2:3",
        "wcomplete:1,0",
        "wcomplete:",
        "sub:0-3",
        "sub:3-1:mesh:4",
        "sub:0,0:mesh:4",
        "sub:9:mesh:4",
        "nosuchkind:3",
        "graph:/no/such/file",
        "matrix:",
        "tleaf 3 8 90 8",
        "tleaf 99999999999 2 1",
        "tleaf 1 0 1",
        "tleaf 2 65536 1 65536 1",
        "cmpltw 3 1 1",
        "cmpltw 4000000000",
        "meshXD 0",
        "meshXD 99999999 2",
        "torus2D 4",
        "mesh2D 4 4 extra",
        "hcub x",
        "sub 2 0 1",
        "sub 2 0 0 mesh2D 2 2",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        "sub:0:".repeat(100) + "complete:1",
        "sub 1 0 ".repeat(100) + "cmplt 1",
        "sub ".repeat(100) + "cmplt 1",
    ]) {
        let s = s.as_str();
        let e = parse_arch(s);
        assert!(e.is_err(), "{s:?} should fail");
        let msg = e.unwrap_err().to_string();
        assert!(!msg.is_empty());
    }
    // Big tori must not overflow.
    let t = Torus::new(vec![3_000_000_000]).unwrap();
    assert_eq!(t.distance(PeId(0), PeId(2_999_999_999)), 1);
    let (a, b) = t.bipartition(&t.root()).unwrap();
    assert_eq!(t.domain_distance(&a, &b), 1_500_000_000);
    assert!(t.routing().is_none(), "link ids above 2^32");
    let e = parse_arch("torus:8xx8").unwrap_err().to_string();
    assert!(e.starts_with("bad architecture spec \"torus:8xx8\""), "{e}");
}

#[test]
fn bad_files() {
    let expect = |name: &str, prefix: &str, line: u32, col: u32| {
        let path = fixture(&format!("bad/{name}"));
        let spec = format!("{prefix}{path}");
        let e = parse_arch(&spec)
            .err()
            .unwrap_or_else(|| panic!("{name} should fail"));
        match &e {
            ArchError::File {
                line: l,
                column: c,
                file,
                ..
            } => {
                assert_eq!((*l, *c), (line, col), "{name}: {e}");
                assert_eq!(file, &path);
            }
            ArchError::FileContent { .. } if line == 0 => {}
            _ => panic!("{name}: unexpected error {e}"),
        }
        assert!(e.to_string().contains(name), "{e}");
    };
    expect("disconnected.graph", "graph:", 0, 0);
    expect("asymmetric.graph", "graph:", 5, 1);
    expect("neighbour_range.graph", "graph:", 4, 3);
    expect("not_a_number.graph", "graph:", 4, 3);
    expect("asymmetric.mat", "matrix:", 4, 3);
    expect("diagonal.mat", "matrix:", 2, 1);
    expect("short.mat", "matrix:", 4, 1);
    expect("truncated_tleaf.tgt", "", 1, 15);
    expect("zero_mesh.tgt", "", 1, 1);
    expect("unknown_kind.tgt", "tgt:", 1, 1);
    expect("not_a_number.tgt", "", 1, 11);
    expect("link_weights_overflow.graph", "graph:", 0, 0);
    expect("deco0_truncated.tgt", "", 1, 11);
    expect("deco0_nested.tgt", "", 3, 1);
    expect("deco0_label_twice.tgt", "", 4, 1);
    expect("deco0_zero_distance.tgt", "tgt:", 5, 1);
    expect("deco_type.tgt", "", 1, 6);
    expect("ltleaf_perm_twice.tgt", "", 1, 20);
    expect("deco2_one_sided.tgt", "", 27, 3);
    let e = parse_arch(&format!("graph:{}", fixture("bad/disconnected.graph"))).unwrap_err();
    assert!(e.to_string().contains("disconnected"), "{e}");
    let e = parse_arch(&format!(
        "graph:{}",
        fixture("bad/link_weights_overflow.graph")
    ))
    .unwrap_err();
    assert!(e.to_string().contains("distances could overflow"), "{e}");
}

// Machines: hwloc topologies, level lists and node lists.

fn hwloc_fixture(name: &str) -> String {
    format!("{}/../../fixtures/hwloc/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn machine(spec: &str, nodes: Option<&str>) -> Machine {
    parse_machine(spec, nodes).unwrap().unwrap()
}

#[test]
fn hwloc_synthetic_topology_gives_levels_and_sites() {
    let f = hwloc_fixture("synthetic-2x8x2.xml");
    let m = machine(&format!("hwloc:{f}"), None);
    assert_eq!(m.levels(), [LevelKind::Package, LevelKind::Core]);
    assert_eq!(m.counts(), [2, 8]);
    assert_eq!(m.distances(), [20, 2]);
    assert_eq!(m.hosts(), ["localhost"]);
    for (i, s) in m.sites().iter().enumerate() {
        let i = i as u32;
        assert_eq!((s.package, s.core, s.pu), (i / 8, i % 8, 0));
        assert_eq!((s.cpu, s.os_cpu), (2 * i, Some(2 * i)));
    }
    assert_eq!(m.architecture().unwrap().spec(), "tree:8:2/2:20");
    let m = machine(&format!("hwloc:{f},pe=pu,package=50,core=3"), None);
    assert_eq!(m.counts(), [2, 8, 2]);
    assert_eq!(m.distances(), [50, 3, 1]);
    let s = &m.sites()[3];
    assert_eq!((s.package, s.core, s.pu, s.cpu), (0, 1, 1, 3));
    assert_eq!(
        m.rankfile(&[3, 16]),
        "rank 0=localhost slot=3\nrank 1=localhost slot=16\n"
    );
    check_arch(m.architecture().unwrap().as_ref(), true, false);
}

/// The distance of two PEs is the distance of the highest level at which they differ,
/// recomputed from the sites of a topology with NUMA groups and L3 domains, on three nodes.
#[test]
fn hwloc_distance_is_that_of_the_highest_differing_level() {
    let f = hwloc_fixture("synthetic-snc.xml"); // package:2 group:2 numa:1 l3:2 core:2 pu:2
    let m = machine(&format!("hwloc:{f},l3=7"), Some("n[1-3]"));
    assert_eq!(
        m.levels(),
        [
            LevelKind::Node,
            LevelKind::Package,
            LevelKind::Numa,
            LevelKind::L3,
            LevelKind::Core
        ]
    );
    assert_eq!(m.hosts(), ["n1", "n2", "n3"]);
    let a = m.architecture().unwrap();
    assert_eq!(a.pe_count(), 48);
    let s = m.sites();
    for x in 0..48u32 {
        for y in 0..48u32 {
            let (p, q) = (&s[x as usize], &s[y as usize]);
            let want = if x == y {
                0
            } else if p.host != q.host {
                100
            } else if p.package != q.package {
                20
            } else if p.core / 4 != q.core / 4 {
                10
            } else if p.core / 2 != q.core / 2 {
                7
            } else {
                2
            };
            assert_eq!(a.distance(PeId(x), PeId(y)), want, "{x} {y}");
        }
    }
    check_arch(a.as_ref(), true, false);
}

#[test]
fn hwloc_leaves_out_disallowed_pus_and_reads_hwloc_1() {
    let text = std::fs::read_to_string(hwloc_fixture("synthetic-2x8x2.xml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // PUs 0-3 (cores 0 and 1) not allowed: 14 cores of the 2 x 8 envelope.
    let restricted = text.replacen(
        "allowed_cpuset=\"0xffffffff\"",
        "allowed_cpuset=\"0xfffffff0\"",
        1,
    );
    assert_ne!(restricted, text);
    let f = dir.path().join("r.xml");
    std::fs::write(&f, &restricted).unwrap();
    let m = machine(&format!("hwloc:{}", f.display()), None);
    assert_eq!(m.pe_count(), 14);
    assert_eq!(m.sites()[0].os_cpu, Some(4));
    assert_eq!((m.sites()[0].core, m.sites()[0].cpu), (0, 0));
    let a = m.architecture().unwrap();
    assert_eq!(a.distance(PeId(0), PeId(5)), 2);
    assert_eq!(a.distance(PeId(0), PeId(6)), 20);
    check_arch(a.as_ref(), true, false);
    // Only PU 0 gone: core 0 stays with its PU 1, as logical PU 0.
    let one = text.replacen(
        "allowed_cpuset=\"0xffffffff\"",
        "allowed_cpuset=\"0xfffffffe\"",
        1,
    );
    std::fs::write(&f, &one).unwrap();
    let m = machine(&format!("hwloc:{}", f.display()), None);
    assert_eq!(m.pe_count(), 16);
    assert_eq!((m.sites()[0].cpu, m.sites()[0].os_cpu), (0, Some(1)));
    let m = machine(&format!("hwloc:{},pe=pu", f.display()), None);
    assert_eq!(m.pe_count(), 31);
    // hwloc 1.x: NUMA nodes hold their packages.
    let v1 = r#"<?xml version="1.0"?>
<topology>
  <object type="Machine" os_index="0">
    <info name="HostName" value="old"/>
    <object type="NUMANode" os_index="0"><object type="Socket" os_index="0">
      <object type="Core" os_index="0"><object type="PU" os_index="0"/></object>
      <object type="Core" os_index="1"><object type="PU" os_index="1"/></object>
    </object></object>
    <object type="NUMANode" os_index="1"><object type="Socket" os_index="1">
      <object type="Core" os_index="2"><object type="PU" os_index="2"/></object>
      <object type="Core" os_index="3"><object type="PU" os_index="3"/></object>
    </object></object>
  </object>
</topology>
"#;
    std::fs::write(&f, v1).unwrap();
    let m = machine(&format!("hwloc:{}", f.display()), None);
    assert_eq!(m.levels(), [LevelKind::Numa, LevelKind::Core]);
    // Crossing these NUMA nodes crosses packages: the package's distance.
    assert_eq!(m.distances(), [20, 2]);
    assert_eq!(m.hosts(), ["old"]);
    assert_eq!(
        m.rankfile(&[3, 0]),
        "rank 0=old slot=1:1\nrank 1=old slot=0:0\n"
    );
}

#[test]
fn hwloc_per_node_files_make_one_machine() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        hwloc_fixture("synthetic-2x8.xml"),
        dir.path().join("big.xml"),
    )
    .unwrap();
    std::fs::copy(hwloc_fixture("epyc-vm.xml"), dir.path().join("small.xml")).unwrap();
    let spec = format!("hwloc:{}", dir.path().display());
    let m = machine(&spec, Some("small,big"));
    assert_eq!(m.pe_count(), 18);
    assert_eq!(m.slurm_hostfile(&[0, 1, 2, 17]), "small\nsmall\nbig\nbig\n");
    let a = m.architecture().unwrap();
    assert_eq!(a.distance(PeId(0), PeId(1)), 2);
    assert_eq!(a.distance(PeId(1), PeId(2)), 100);
    assert_eq!(a.distance(PeId(2), PeId(10)), 20);
    check_arch(a.as_ref(), true, false);
    let pattern = format!("hwloc:{}/%n.xml", dir.path().display());
    assert_eq!(machine(&pattern, Some("small,big")).sites(), m.sites());
    // One directory needs the node names; a missing node file is named.
    assert!(parse_machine(&spec, None).is_err());
    let e = parse_machine(&pattern, Some("small,other"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("other.xml"), "{e}");
}

#[test]
fn hwloc_errors_name_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.xml");
    let spec = format!("hwloc:{}", f.display());
    let cases: [(&str, &str); 6] = [
        ("<topology>\n<object type=\"Machine\">\n", ":3:1: the file ends inside 2 element(s)"),
        ("<topology>\n<object type=\"Machine\">\n</topology>", ":3:"),
        ("<topology>\n<object os_index=\"0\"/>\n</topology>", ":2:1: <object> without a type"),
        (
            "<topology><object type=\"Machine\"><object type=\"PU\" os_index=\"x\"/></object></topology>",
            "os_index \"x\"",
        ),
        ("<topology></topology>", "no <object>"),
        (
            "<topology><object type=\"Machine\"><object type=\"PU\" os_index=\"0\"/></object></topology>",
            "pe=pu",
        ),
    ];
    for (xml, want) in cases {
        std::fs::write(&f, xml).unwrap();
        let e = parse_machine(&spec, None).unwrap_err().to_string();
        assert!(e.contains(want), "{xml}: {e}");
    }
    let e = parse_arch(&format!("{spec},bogus=1"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown key \"bogus\""), "{e}");
    let e = parse_machine("torus:4x4", Some("a,b"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("node list applies to hwloc"), "{e}");
}

#[test]
fn level_lists_are_trees_with_sites() {
    let m = machine("nodes:4,package:2,core:8/100,10,1", None);
    let tree = parse_arch("tree:8:2:4/1:10:100").unwrap();
    let a = m.architecture().unwrap();
    for x in 0..64 {
        for y in 0..64 {
            assert_eq!(
                a.distance(PeId(x), PeId(y)),
                tree.distance(PeId(x), PeId(y))
            );
        }
    }
    assert_eq!(m.hosts()[3], "node3");
    assert_eq!(
        m.rankfile(&[0, 9, 63]),
        "rank 0=node0 slot=0:0\nrank 1=node0 slot=1:1\nrank 2=node3 slot=1:7\n"
    );
    let m = machine("package:2,l3:2,core:4", Some("c[1-2]"));
    assert_eq!(m.levels()[0], LevelKind::Node);
    assert_eq!(m.distances(), [100, 20, 5, 2]);
    let s = &m.sites()[13]; // node 0, package 1, L3 1, core 1
    assert_eq!((s.host, s.package, s.core), (0, 1, 5));
    assert_eq!(m.hosts(), ["c1", "c2"]);
    // A node level put above a level list is at least as far as the level below it.
    assert_eq!(
        machine("package:2,core:2/300,1", Some("a,b")).distances(),
        [300, 300, 1]
    );
    for (bad, want) in [
        (
            "numa:2,package:2,core:2",
            "level package after numa: levels go top-down",
        ),
        ("core:4,package:2", "level package after core"),
        ("core:16777216,pu:2", "33554432 PEs: at most 16777216"),
        ("nodes:4,package:2/100", "2 levels but 1 distances"),
        ("core:0", "count 0"),
        ("core:2,core:2", "given twice"),
        ("package:2,node:2", "level node after package"),
        ("socket:2,blade:2", "unknown level \"blade\""),
        ("core:8/0", "not a positive integer"),
    ] {
        let e = parse_arch(bad).unwrap_err().to_string();
        assert!(e.contains(want), "{bad}: {e}");
    }
    let e = parse_machine("nodes:4,core:2", Some("a,b"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("4 nodes, but the node list names 2"), "{e}");
}

#[test]
fn slurm_node_lists_expand() {
    let x = |s: &str| expand_node_list(s).unwrap();
    assert_eq!(
        x("node[01-04,07]"),
        ["node01", "node02", "node03", "node04", "node07"]
    );
    assert_eq!(x("a[1-2]b[3-4]"), ["a1b3", "a1b4", "a2b3", "a2b4"]);
    assert_eq!(x("login,n[8-10]"), ["login", "n8", "n9", "n10"]);
    assert_eq!(x("n[098-100]"), ["n098", "n099", "n100"]);
    for (bad, want) in [
        ("n[1-2", "'[' without ']'"),
        ("n1-2]", "']' without '['"),
        ("n[2-1]", "descending"),
        ("n[a]", "not a number"),
        ("n1,,n2", "empty node name"),
        ("n[1-2],n1", "listed twice"),
        ("n[0-99999999]", "more than"),
        ("n[0-9999][0-9999][0-9999][0-9999]", "more than"),
    ] {
        let e = expand_node_list(bad).unwrap_err().to_string();
        assert!(e.contains(want), "{bad}: {e}");
    }
}

#[test]
fn rank_reordering_places_tasks_by_pe() {
    assert_eq!(rank_reordering(&[2, 0, 3, 1]), [2, 0, 3, 1]);
    // Two tasks per PE: tasks sorted by PE, then by id.
    assert_eq!(rank_reordering(&[1, 0, 1, 0]), [2, 0, 3, 1]);
}

#[test]
fn hwloc_reads_gapped_bitmaps_hwloc_1_groups_and_skipped_levels() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.xml");
    let spec = format!("hwloc:{}", f.display());
    let core =
        |i: u32| format!("<object type=\"Core\"><object type=\"PU\" os_index=\"{i}\"/></object>");
    // PUs 0-1 and 64-65 allowed (an empty word between), 66 PUs in all.
    let cores: String = (0..66).map(core).collect();
    let xml = format!(
        "<topology version=\"2.0\"><object type=\"Machine\" \
         allowed_cpuset=\"0x00000003,,0x00000003\">{cores}</object></topology>"
    );
    std::fs::write(&f, &xml).unwrap();
    let m = machine(&spec, None);
    let os: Vec<Option<u32>> = m.sites().iter().map(|s| s.os_cpu).collect();
    assert_eq!(os, [Some(0), Some(1), Some(64), Some(65)]);
    std::fs::write(
        &f,
        xml.replace("0x00000003,,0x00000003", "0xf...f,,0x00000001"),
    )
    .unwrap();
    assert_eq!(machine(&spec, None).pe_count(), 3);
    // hwloc 1: a Group (from NUMA distances) above the NUMA nodes is no level.
    let numa = |i: u32| {
        format!(
            "<object type=\"NUMANode\" os_index=\"{i}\">{}{}</object>",
            core(2 * i),
            core(2 * i + 1)
        )
    };
    let xml = format!(
        "<topology><object type=\"Machine\"><object type=\"Group\">{}{}</object>\
         <object type=\"Group\">{}{}</object></object></topology>",
        numa(0),
        numa(1),
        numa(2),
        numa(3)
    );
    std::fs::write(&f, &xml).unwrap();
    let m = machine(&spec, None);
    assert_eq!(m.levels(), [LevelKind::Numa, LevelKind::Core]);
    assert_eq!(m.pe_count(), 8);
    // hwloc 1 on a KNL: a CPU-less NUMA node (MCDRAM) beside each one with cores.
    let xml = xml.replace(
        "<object type=\"Group\">",
        "<object type=\"Group\"><object type=\"NUMANode\" os_index=\"9\"/>",
    );
    std::fs::write(&f, &xml).unwrap();
    let m = machine(&spec, None);
    assert_eq!(m.levels(), [LevelKind::Numa, LevelKind::Core]);
    assert_eq!(m.pe_count(), 8);
    // hwloc 2: memory behind a memory-side cache still marks its group.
    let group = |i: u32| {
        format!(
            "<object type=\"Group\"><object type=\"MemCache\"><object type=\"NUMANode\" \
             os_index=\"{i}\"/></object>{}{}</object>",
            core(2 * i),
            core(2 * i + 1)
        )
    };
    let xml = format!(
        "<topology version=\"2.0\"><object type=\"Machine\"><object type=\"Package\">{}{}\
         </object></object></topology>",
        group(0),
        group(1)
    );
    std::fs::write(&f, &xml).unwrap();
    assert_eq!(
        machine(&spec, None).levels(),
        [LevelKind::Numa, LevelKind::Core]
    );
    // Cores beside an L3 (hybrid chips): one more L3 position, no clash.
    let xml = format!(
        "<topology version=\"2.0\"><object type=\"Machine\"><object type=\"Package\">\
         <object type=\"L3Cache\">{}{}</object>{}{}</object></object></topology>",
        core(0),
        core(1),
        core(2),
        core(3)
    );
    std::fs::write(&f, &xml).unwrap();
    let m = machine(&spec, None);
    assert_eq!(m.levels(), [LevelKind::L3, LevelKind::Core]);
    let a = m.architecture().unwrap();
    assert_eq!(a.pe_count(), 4);
    assert_eq!(a.distance(PeId(0), PeId(1)), 2);
    assert_eq!(a.distance(PeId(1), PeId(2)), 5);
    assert_eq!(a.distance(PeId(2), PeId(3)), 2);
    let cores: Vec<u32> = m.sites().iter().map(|s| s.core).collect();
    assert_eq!(cores, [0, 1, 2, 3]);
    // A package inside a package is refused at its line.
    std::fs::write(
        &f,
        "<topology>\n<object type=\"Machine\">\n<object type=\"Package\">\n\
         <object type=\"Package\">\n<object type=\"PU\" os_index=\"0\"/></object></object>\
         </object></topology>",
    )
    .unwrap();
    let e = parse_machine(&format!("{spec},pe=pu"), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(":4:1: a package inside the package of line 3"),
        "{e}"
    );
    // Too many PEs over the nodes, refused before they are built.
    let fixture = format!("hwloc:{},pe=pu", hwloc_fixture("synthetic-2x8x2.xml"));
    let e = parse_machine(&fixture, Some("n[1-1048576]"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("33554432 PEs on 1048576 node(s)"), "{e}");
}

#[test]
fn subsets_keep_only_the_links_their_pes_can_use() {
    let count = |spec: &str| {
        let a = parse_arch(spec).unwrap();
        let r = a.traffic_routes().unwrap();
        (0..r.link_count()).filter(|&l| r.exists(l)).count()
    };
    // Complete: the pairs of the subset; trees: the links above its PEs; meshes: all
    // (unused PEs still route).
    assert_eq!(count("sub:0,2,3:complete:5"), 6);
    assert_eq!(count("complete:5"), 20);
    assert_eq!(count("sub:0,1,4:tree:2:2:2/1:2:3"), 2 * (3 + 2 + 2));
    assert_eq!(count("sub:0,1:mesh:2x2"), count("mesh:2x2"));
    // Names use the subset's PE ids.
    let a = parse_arch("sub:4,5:tree:2:2:2/1:2:3").unwrap();
    let r = a.traffic_routes().unwrap();
    let names: Vec<String> = (0..r.link_count())
        .filter(|&l| r.exists(l))
        .map(|l| r.link_name(l))
        .collect();
    assert!(names.contains(&"PE 0 up".to_string()), "{names:?}");
    assert!(names.contains(&"PE 1 down".to_string()), "{names:?}");
}

/// The closed forms of the link count and the total capacity equal counting them.
#[test]
fn closed_forms_equal_counting() {
    for spec in [
        "mesh:1",
        "mesh:5",
        "mesh:4x3",
        "mesh:2x3x4",
        "mesh:1x6",
        "torus:2",
        "torus:5",
        "torus:2x3",
        "torus:4x4x1",
        "torus:3x3x3",
        "hypercube:0",
        "hypercube:1",
        "hypercube:5",
        "complete:7",
        "tree:2:3/1:10",
        "wcomplete:3,1,4",
    ] {
        let a = parse_arch(spec).unwrap();
        let counted: u128 = (0..a.pe_count())
            .map(|p| u128::from(a.pe_capacity(PeId(p))))
            .sum();
        assert_eq!(a.total_capacity(), counted, "{spec}");
        if let Some(r) = a.routing() {
            let counted = (0..r.link_count())
                .filter(|&l| r.link_endpoints(l).is_some())
                .count() as u64;
            assert_eq!(r.physical_link_count(), counted, "{spec}");
        }
    }
}

/// A level list names at most as many nodes as a node list may.
#[test]
fn level_lists_name_at_most_max_nodes() {
    assert!(parse_arch(&format!("nodes:{MAX_NODES},core:2")).is_ok());
    let e = parse_arch(&format!("nodes:{}", MAX_NODES + 1)).unwrap_err();
    assert!(e.to_string().contains("nodes: at most 1048576"), "{e}");
}

/// An `ltleaf` is the tree read through its labels: the same distances, capacities,
/// domains (each domain's PEs the labels of the tree's leaves in it) and domain
/// distances as the subset of the tree listing the leaf of every label, which is how it
/// was built before; its spec and Scotch text read back to it; and a tree of 44 million
/// leaves is read without a table per leaf (that subset took 38 s and 5.8 GB).
#[test]
fn ltleaf_is_the_tree_through_its_labels() {
    for (levels, p) in [
        ("3 2 20 3 5 4 1", 4u32),
        ("2 4 10 6 1", 12),
        ("1 6 7", 6),
        ("2 3 9 2 2", 1),
    ] {
        // A permutation of 0..p (5 is prime to every p here).
        let perm: Vec<u32> = (0..p).map(|i| (5 * i + 3) % p).collect();
        let list: Vec<String> = perm.iter().map(|v| v.to_string()).collect();
        let text = format!("ltleaf {levels} {p} {}", list.join(" "));
        let lt = parse_arch(&text).unwrap();
        let tree = parse_arch(&format!("tleaf {levels}")).unwrap();
        let k = tree.pe_count();
        // Leaf i has label i - i%p + perm[i%p]; the subset lists the leaf of each label.
        let mut leaf_of = vec![PeId(0); k as usize];
        for i in 0..k {
            leaf_of[(i - i % p + perm[(i % p) as usize]) as usize] = PeId(i);
        }
        let sub = Subset::new(parse_arch(&format!("tleaf {levels}")).unwrap(), leaf_of).unwrap();
        assert_same(&*lt, &sub);
        check_arch(&*lt, false, false);
        // The same domains, level by level.
        let mut stack = vec![(lt.root(), sub.root())];
        while let Some((a, b)) = stack.pop() {
            let (mut pa, mut pb) = (Vec::new(), Vec::new());
            lt.domain_pes(&a, &mut pa);
            sub.domain_pes(&b, &mut pb);
            pa.sort_unstable();
            pb.sort_unstable();
            assert_eq!(pa, pb, "{text}");
            assert_eq!(lt.domain_size(&a), sub.domain_size(&b));
            match (lt.bipartition(&a), sub.bipartition(&b)) {
                (Some((a0, a1)), Some((b0, b1))) => {
                    assert_eq!(lt.domain_distance(&a0, &a1), sub.domain_distance(&b0, &b1));
                    stack.push((a0, b0));
                    stack.push((a1, b1));
                }
                (None, None) => {}
                _ => panic!("{text}: one splits and the other does not"),
            }
        }
        assert_eq!(lt.spec(), text);
        assert_same(&*lt, &*parse_arch(&lt.spec()).unwrap());
        assert_eq!(lt.scotch_target().as_deref(), Some(text.as_str()));
    }
    // The constructor checks what the reader checks.
    let tree = || Tree::from_tleaf(vec![2, 4], vec![10, 1]).unwrap();
    assert!(LabelledTree::new(tree(), vec![0, 1, 2]).is_err());
    assert!(LabelledTree::new(tree(), vec![0, 1, 1, 2]).is_err());
    assert!(LabelledTree::new(tree(), vec![]).is_err());
    assert!(LabelledTree::new(tree(), vec![1, 0]).is_ok());
    // A tree of one leaf has no tleaf levels: its spec is the subset's, and reads back.
    let one = parse_arch("ltleaf 1 1 5 1 0").unwrap();
    assert_eq!(one.pe_count(), 1);
    assert_eq!(parse_arch(&one.spec()).unwrap().pe_count(), 1);
    // Blocks of 8 leaves, two groups of 4: leaves 0 and 4 of each block swap labels, so
    // label 0 sits on leaf 4 (the second group) and label 4 on leaf 0 (the first).
    let big = parse_arch("ltleaf 2 11111136 2 4 1 8 4 1 2 3 0 5 6 7").unwrap();
    assert_eq!(big.pe_count(), 44_444_544);
    let last = 44_444_544 - 8;
    for base in [0, last] {
        assert_eq!(big.distance(PeId(base), PeId(base + 1)), 3);
        assert_eq!(big.distance(PeId(base + 4), PeId(base + 1)), 1);
        assert_eq!(big.distance(PeId(base), PeId(base + 5)), 1);
    }
    let (a, b) = big.bipartition(&big.root()).unwrap();
    assert_eq!(big.domain_size(&a) + big.domain_size(&b), 44_444_544);
}
