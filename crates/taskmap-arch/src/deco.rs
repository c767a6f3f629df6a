//! Decomposition-defined targets (Scotch `deco`): processors placed at the leaves of a
//! bipartition tree, with a table of distances between them.

use crate::domtree::{medoid, DomainTree};
use crate::spec::Toks;
use crate::{ArchError, Architecture, Domain, ExplicitGraph, PeId, Subset};

/// Largest number of terminals of a decomposition (its distance table has `k(k-1)/2`
/// entries: 2^15 terminals is 4 GiB of `u64`).
pub const DECO_MAX_TERMINALS: u32 = 1 << 15;

/// One processor of a decomposition, as a `deco 0` file lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecoTerminal {
    /// The number mapping files use for it.
    pub label: u64,
    /// Its weight (capacity), at least 1.
    pub weight: u64,
    /// Its place in the bipartition tree, numbered as a heap: the root is 1 and the halves
    /// of domain `i` are `2i` and `2i + 1`.
    pub num: u64,
}

/// A target given by the leaves of a bipartition tree and their distances (Scotch's
/// decomposition-defined architecture, `deco 0` and `deco 1` files; `deco 2` files are
/// read into it as well, see `docs/formats.md`).
///
/// PE `i` is the terminal with the `i`-th smallest label, so when the labels are
/// `0..k-1` (as `amk_grf` writes them for a graph numbered from 0) PE ids and labels are
/// the same numbers, and mapping files mean the same thing for Scotch and taskmap.
/// Capacities are the terminal weights. Bipartition follows the file's tree: a domain
/// splits into the terminals below its two halves, and a half holding no terminal is
/// skipped (the other half is split again), so no domain is empty. Domain distance:
/// between representatives (medoids, as in [`crate::DistanceMatrix`]); exact on single
/// PEs.
#[derive(Clone, Debug)]
pub struct Decomposition {
    terms: Vec<DecoTerminal>,
    /// Lower triangle of the distance table over PE ids: `(a, b)` with `a > b` is at
    /// `a(a-1)/2 + b`.
    d: Vec<u64>,
    tree: DomainTree,
    path: Option<String>,
}

/// Depth of a heap-numbered tree node (the root, 1, is at depth 0).
fn depth(num: u64) -> u32 {
    63 - num.leading_zeros()
}

/// Which half of `node` holds `num` (`Some(false)` for `2 node`, `Some(true)` for
/// `2 node + 1`), `None` when `num` is not strictly below `node`.
fn side(num: u64, node: u64) -> Option<bool> {
    let (dn, dd) = (depth(num), depth(node));
    if dn <= dd || num >> (dn - dd) != node {
        return None;
    }
    Some((num >> (dn - dd - 1)) & 1 == 1)
}

/// The first defect of a terminal list, as `(terminal index, message)`: no terminal, too
/// many, a tree number of 0, a weight of 0, two terminals with one label or one tree
/// number, a terminal whose domain holds another, weights whose sum overflows.
pub(crate) fn check_terminals(terms: &[DecoTerminal]) -> Option<(usize, String)> {
    if terms.is_empty() {
        return Some((0, "a decomposition needs at least one terminal".into()));
    }
    if terms.len() > DECO_MAX_TERMINALS as usize {
        return Some((
            DECO_MAX_TERMINALS as usize,
            format!(
                "{} terminals, more than the {DECO_MAX_TERMINALS} a decomposition may have",
                terms.len()
            ),
        ));
    }
    let mut total = 0u64;
    for (i, t) in terms.iter().enumerate() {
        if t.num == 0 {
            return Some((i, "terminal number 0 (the tree is numbered from 1)".into()));
        }
        if t.weight == 0 {
            return Some((i, format!("terminal {} has weight 0", t.label)));
        }
        total = match total.checked_add(t.weight) {
            Some(s) => s,
            None => return Some((i, "the sum of the terminal weights overflows".into())),
        };
    }
    let mut by_label: Vec<usize> = (0..terms.len()).collect();
    by_label.sort_by_key(|&i| (terms[i].label, i));
    for w in by_label.windows(2) {
        if terms[w[0]].label == terms[w[1]].label {
            return Some((
                w[1],
                format!("label {} is given to two terminals", terms[w[1]].label),
            ));
        }
    }
    // Sorted by (depth, number), an ancestor comes before its descendants; checking each
    // terminal's ancestors against a set of the terminals seen so far finds any nesting.
    let mut by_num: Vec<usize> = (0..terms.len()).collect();
    by_num.sort_by_key(|&i| (depth(terms[i].num), terms[i].num, i));
    let mut seen: std::collections::HashMap<u64, usize> =
        std::collections::HashMap::with_capacity(terms.len());
    for &i in &by_num {
        let n = terms[i].num;
        if seen.contains_key(&n) {
            return Some((i, format!("tree number {n} is given to two terminals")));
        }
        let mut a = n >> 1;
        while a >= 1 {
            if let Some(&j) = seen.get(&a) {
                return Some((
                    i,
                    format!(
                        "terminal {} (tree number {n}) lies inside the domain of terminal {} \
                         (tree number {a})",
                        terms[i].label, terms[j].label
                    ),
                ));
            }
            a >>= 1;
        }
        seen.insert(n, i);
    }
    None
}

impl Decomposition {
    /// Terminals (see [`DecoTerminal`]; checked as listed there) and their distances:
    /// `dist(i, j)` for `i > j` indexes the list, and must be at least 1.
    pub fn new(
        terms: Vec<DecoTerminal>,
        dist: impl Fn(usize, usize) -> u64,
        path: Option<String>,
    ) -> Result<Self, ArchError> {
        if let Some((i, m)) = check_terminals(&terms) {
            return Err(ArchError::invalid(format!("terminal {}: {m}", i + 1)));
        }
        let k = terms.len();
        // PE order: by label.
        let mut order: Vec<usize> = (0..k).collect();
        order.sort_by_key(|&i| terms[i].label);
        let mut d = Vec::new();
        taskmap_graph::memory::fallible(|| d.try_reserve_exact(k * (k - 1) / 2)).map_err(|_| {
            ArchError::invalid(format!(
                "no memory for the {} distances of {k} terminals",
                k * (k - 1) / 2
            ))
        })?;
        for a in 1..k {
            for b in 0..a {
                let (x, y) = (order[a].max(order[b]), order[a].min(order[b]));
                let v = dist(x, y);
                if v == 0 {
                    return Err(ArchError::invalid(format!(
                        "distance 0 between terminals {} and {}",
                        terms[x].label, terms[y].label
                    )));
                }
                d.push(v);
            }
        }
        let terms: Vec<DecoTerminal> = order.iter().map(|&i| terms[i]).collect();
        let (mut tree, _) = DomainTree::build(
            (0..k as u32).map(PeId).collect(),
            1u64,
            |p| terms[p.idx()].weight,
            |slice, &node| {
                let mut node = node;
                loop {
                    // Every terminal of the slice lies strictly below `node` (checked).
                    let ones = slice
                        .iter()
                        .filter(|p| side(terms[p.idx()].num, node) == Some(true))
                        .count();
                    if ones == 0 {
                        node *= 2;
                    } else if ones == slice.len() {
                        node = node * 2 + 1;
                    } else {
                        slice.sort_by_key(|p| (side(terms[p.idx()].num, node), p.0));
                        return (slice.len() - ones, node * 2, node * 2 + 1);
                    }
                }
            },
        );
        let dist_at = |a: PeId, b: PeId| tri(&d, a, b);
        tree.set_reps(|pes| medoid(pes, dist_at));
        Ok(Decomposition {
            terms,
            d,
            tree,
            path,
        })
    }

    /// The terminals in PE order (by label).
    pub fn terminals(&self) -> &[DecoTerminal] {
        &self.terms
    }

    /// The file this target was read from, if any.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }
}

#[inline]
fn tri(d: &[u64], a: PeId, b: PeId) -> u64 {
    let (x, y) = if a.0 > b.0 {
        (a.idx(), b.idx())
    } else if a.0 < b.0 {
        (b.idx(), a.idx())
    } else {
        return 0;
    };
    d[x * (x - 1) / 2 + y]
}

impl Architecture for Decomposition {
    fn pe_count(&self) -> u32 {
        self.terms.len() as u32
    }
    #[inline]
    fn distance(&self, a: PeId, b: PeId) -> u64 {
        tri(&self.d, a, b)
    }
    fn pe_capacity(&self, pe: PeId) -> u64 {
        self.terms[pe.idx()].weight
    }
    crate::domtree::tree_domains!();
    fn domain_distance(&self, a: &Domain, b: &Domain) -> u64 {
        self.tree.reps(a, b).map_or(0, |(x, y)| self.distance(x, y))
    }
    fn spec(&self) -> String {
        match &self.path {
            Some(p) => format!("tgt:{p}"),
            // The Scotch text itself is a spec `parse_arch` reads.
            None => self.scotch_target().unwrap_or_default(),
        }
    }
    fn name(&self) -> &'static str {
        "deco"
    }
    fn is_uniform(&self) -> bool {
        self.terms.iter().all(|t| t.weight == self.terms[0].weight)
    }
    fn scotch_target(&self) -> Option<String> {
        use std::fmt::Write;
        let k = self.terms.len();
        let max = self.terms.iter().map(|t| t.num).max().unwrap_or(1);
        let mut s = format!("deco\n0\n{k}\t{max}\n");
        for t in &self.terms {
            let _ = writeln!(s, "{}\t{}\t{}", t.label, t.weight, t.num);
        }
        for (i, v) in self.d.iter().enumerate() {
            let _ = write!(s, "{v}{}", if i % 8 == 7 { '\n' } else { '\t' });
        }
        while s.ends_with(['\t', '\n']) {
            s.pop();
        }
        Some(s)
    }
}

/// An undirected link `(a, b, weight)`.
type Link = (u32, u32, u64);

/// The readers of the three decomposition file variants, after `deco` and the variant
/// number.
impl Toks<'_> {
    /// Builds a decomposition from terminals (with the token index of each one's line)
    /// and a lower-triangular distance table in terminal order.
    pub(crate) fn deco_build(
        &self,
        at: usize,
        terms: Vec<DecoTerminal>,
        term_at: &[usize],
        d: &[u64],
    ) -> Result<Box<dyn Architecture>, ArchError> {
        if let Some((i, m)) = check_terminals(&terms) {
            return Err(self.err_at(term_at.get(i).copied().unwrap_or(at), m));
        }
        let path = self.top_path(at);
        Decomposition::new(terms, |x, y| d[x * (x - 1) / 2 + y], path)
            .map(|a| Box::new(a) as Box<dyn Architecture>)
            .map_err(|e| match e {
                ArchError::Invalid(m) => self.err_at(at, m),
                e => e,
            })
    }

    /// The header of a decomposition: the terminal count and the largest domain number.
    pub(crate) fn deco_header(&mut self) -> Result<(u32, u64), ArchError> {
        let i = self.pos;
        let k: u32 = self.num("number of terminals")?;
        let j = self.pos;
        let max: u64 = self.num("largest domain number")?;
        if k == 0 || k > DECO_MAX_TERMINALS {
            return Err(self.err_at(
                i,
                format!("bad number of terminals {k} (1 to {DECO_MAX_TERMINALS})"),
            ));
        }
        if max < u64::from(k) {
            return Err(self.err_at(
                j,
                format!("largest domain number {max} is below the number of terminals {k}"),
            ));
        }
        Ok((k, max))
    }

    /// `deco 0`: `k max`, `k` lines `label weight number`, then the `k(k-1)/2` distances
    /// of the terminals, row by row in the order of those lines (lower triangle).
    pub(crate) fn deco0(&mut self, at: usize) -> Result<Box<dyn Architecture>, ArchError> {
        let (k, max) = self.deco_header()?;
        self.need(self.pos, u64::from(k), 3, "terminals")?;
        let mut terms = Vec::with_capacity(k as usize);
        let mut term_at = Vec::with_capacity(k as usize);
        for _ in 0..k {
            term_at.push(self.pos);
            let label = self.num("terminal label")?;
            let weight = self.num("terminal weight")?;
            let j = self.pos;
            let num: u64 = self.num("terminal number")?;
            if num == 0 || num > max {
                return Err(self.err_at(j, format!("terminal number {num} is not in 1..{max}")));
            }
            terms.push(DecoTerminal { label, weight, num });
        }
        let n = u64::from(k) * u64::from(k - 1) / 2;
        self.need(self.pos, n, 1, "distances")?;
        let mut d = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let j = self.pos;
            let v: u64 = self.num("distance")?;
            if v == 0 {
                return Err(self.err_at(j, "distance 0 between two terminals"));
            }
            d.push(v);
        }
        self.deco_build(at, terms, &term_at, &d)
    }

    /// `deco 1` (compiled): `k max`, `max` domain lines `label size weight` (the
    /// terminals are the domains of size 1, domain `i` on line `i`), then the distances
    /// of every pair of domains, `(i, j)` for `i > j` in order.
    pub(crate) fn deco1(&mut self, at: usize) -> Result<Box<dyn Architecture>, ArchError> {
        let (k, max) = self.deco_header()?;
        self.need(self.pos, max, 3, "domains")?;
        let mut terms = Vec::with_capacity(k as usize);
        let mut term_at = Vec::with_capacity(k as usize);
        // Terminal index of each domain, `u32::MAX` for the others.
        let mut term_of = vec![u32::MAX; max as usize];
        for (dom, t) in term_of.iter_mut().enumerate() {
            let line = self.pos;
            let label = self.int("domain label")?;
            let size = self.num::<u64>("domain size")?;
            let weight = self.num("domain weight")?;
            if size == 1 {
                let label = u64::try_from(label).map_err(|_| {
                    self.err_at(line, format!("terminal domain with label {label}"))
                })?;
                if terms.len() == k as usize {
                    return Err(self.err_at(
                        line,
                        format!("more than the {k} announced terminal domains (size 1)"),
                    ));
                }
                *t = terms.len() as u32;
                term_at.push(line);
                terms.push(DecoTerminal {
                    label,
                    weight,
                    num: dom as u64 + 1,
                });
            }
        }
        if terms.len() != k as usize {
            return Err(self.err_at(
                self.pos,
                format!(
                    "{} terminal domains (size 1) where the header announces {k}",
                    terms.len()
                ),
            ));
        }
        let n = max * (max - 1) / 2;
        self.need(self.pos, n, 1, "distances")?;
        let mut d = vec![0u64; k as usize * (k as usize - 1) / 2];
        for i in 1..max as usize {
            for j in 0..i {
                let p = self.pos;
                let v: u64 = self.num("distance")?;
                let (ti, tj) = (term_of[i], term_of[j]);
                if ti != u32::MAX && tj != u32::MAX {
                    if v == 0 {
                        return Err(self.err_at(p, "distance 0 between two terminals"));
                    }
                    let (x, y) = (ti.max(tj) as usize, ti.min(tj) as usize);
                    d[x * (x - 1) / 2 + y] = v;
                }
            }
        }
        self.deco_build(at, terms, &term_at, &d)
    }

    /// `deco 2`: `k levels vnums`, `k` terminal lines `domain vertex`, `2k - 1` domain
    /// lines of 9 numbers (the third is the domain's weight), then `levels` Scotch graphs
    /// each followed by its diameter, then `vnums` numbers. Only level 0 (the machine
    /// graph, edge weights as link costs) and the terminals' vertices and weights are
    /// used: the target is that graph, with shortest-path distances, restricted to the
    /// terminals (PE `t` is terminal `t`).
    pub(crate) fn deco2(&mut self, at: usize) -> Result<Box<dyn Architecture>, ArchError> {
        let i = self.pos;
        let k: u32 = self.num("number of terminals")?;
        let levels: u32 = self.num("number of levels")?;
        let vnums: u64 = self.num("number of vertex indices")?;
        if k == 0 || levels == 0 {
            return Err(self.err_at(i, "a deco 2 target needs a terminal and a level"));
        }
        let domains = 2 * u64::from(k) - 1;
        self.need(self.pos, u64::from(k), 2, "terminals")?;
        let mut term_dom = Vec::with_capacity(k as usize);
        let mut term_vert = Vec::with_capacity(k as usize);
        for _ in 0..k {
            let j = self.pos;
            let d: u64 = self.num("terminal domain")?;
            if d >= domains {
                return Err(self.err_at(j, format!("domain {d} is not below {domains}")));
            }
            term_dom.push(d as usize);
            term_vert.push((self.pos, self.num::<u32>("terminal vertex")?));
        }
        self.need(self.pos, domains, 9, "domains")?;
        let mut weight = Vec::with_capacity(domains as usize);
        for _ in 0..domains {
            self.num::<u64>("domain number")?;
            self.num::<u64>("domain size")?;
            let j = self.pos;
            let w = self.num::<u64>("domain weight")?;
            if w == 0 {
                return Err(self.err_at(j, "domain weight 0"));
            }
            weight.push(w);
            self.num::<u64>("smallest terminal")?;
            for what in ["father", "first half", "second half"] {
                self.int(what)?;
            }
            self.num::<u64>("level")?;
            self.num::<u64>("vertex index")?;
        }
        let (n, links) = self.scotch_graph(true)?;
        self.num::<u64>("diameter")?;
        for _ in 1..levels {
            self.scotch_graph(false)?;
            self.num::<u64>("diameter")?;
        }
        self.need(self.pos, vnums, 1, "vertex indices")?;
        for _ in 0..vnums {
            self.num::<u64>("vertex index")?;
        }
        let mut caps = vec![1u64; n as usize];
        let mut taken = vec![false; n as usize];
        for (&(j, v), &d) in term_vert.iter().zip(&term_dom) {
            if v >= n {
                return Err(self.err_at(j, format!("vertex {v} is not in the {n}-vertex graph")));
            }
            if std::mem::replace(&mut taken[v as usize], true) {
                return Err(self.err_at(j, format!("vertex {v} is the vertex of two terminals")));
            }
            caps[v as usize] = weight[d];
        }
        let spec = match self.top_path(at) {
            Some(p) => format!("tgt:{p}"),
            None => "tgt:<memory>".to_string(),
        };
        let fix = |e: ArchError| match e {
            ArchError::Invalid(m) => self.err_at(at, m),
            e => e,
        };
        let graph = ExplicitGraph::new(n, links, caps).map_err(fix)?;
        let graph = graph.with_spec(spec);
        if k == n
            && term_vert
                .iter()
                .enumerate()
                .all(|(t, &(_, v))| v as usize == t)
        {
            return Ok(Box::new(graph));
        }
        let pes = term_vert.iter().map(|&(_, v)| PeId(v)).collect();
        let spec = graph.spec();
        Subset::new(Box::new(graph), pes)
            .map(|a| Box::new(a.with_spec(spec)) as Box<dyn Architecture>)
            .map_err(fix)
    }

    /// A graph in Scotch's format (`0`, `n arcs`, `base flags`, then per vertex
    /// `[label] [weight] degree ([edge weight] neighbour)..`), as its vertex count and its
    /// undirected edges with their weights (1 when the file has none). With `check`, each
    /// edge must be listed from both ends with one weight, and vertex labels are refused;
    /// without, the graph is only read past.
    fn scotch_graph(&mut self, check: bool) -> Result<(u32, Vec<Link>), ArchError> {
        let i = self.pos;
        if self.num::<u32>("graph version")? != 0 {
            return Err(self.err_at(i, "expected graph version 0"));
        }
        let j = self.pos;
        let n: u32 = self.num("vertex count")?;
        let arcs: u64 = self.num("arc count")?;
        let base: u64 = self.num("base")?;
        let f = self.pos;
        // An integer of at most three digits 0 or 1, as Scotch reads it (`10` is `010`).
        let flags: u32 = self.num("format flags")?;
        let bad = |x: u32| x > 1;
        if flags > 111 || bad(flags / 100) || bad(flags / 10 % 10) || bad(flags % 10) {
            return Err(self.err_at(
                f,
                format!("format flags {flags}: expected up to 3 digits 0 or 1"),
            ));
        }
        let (labels, ewgt, vwgt) = (flags / 100 == 1, flags / 10 % 10 == 1, flags % 10 == 1);
        if check && labels {
            return Err(self.err_at(f, "vertex labels in a deco 2 graph are not supported"));
        }
        if n == 0 {
            return Err(self.err_at(j, "a graph with no vertex"));
        }
        self.need(self.pos, u64::from(n), 1, "vertices")?;
        self.need(self.pos, arcs, 1 + u64::from(ewgt), "arcs")?;
        // (smaller end, larger end, weight, position, listed by the smaller end).
        let mut out: Vec<(u32, u32, u64, usize, bool)> = Vec::new();
        let mut seen = 0u64;
        for u in 0..n {
            if labels {
                self.num::<u64>("vertex label")?;
            }
            if vwgt {
                self.num::<u64>("vertex weight")?;
            }
            let d: u64 = self.num("degree")?;
            seen = seen.checked_add(d).filter(|&s| s <= arcs).ok_or_else(|| {
                self.err_at(self.pos - 1, format!("more than the {arcs} arcs announced"))
            })?;
            for _ in 0..d {
                let q = self.pos;
                let w = if ewgt { self.num("edge weight")? } else { 1 };
                if check && w == 0 {
                    return Err(self.err_at(q, "edge weight 0 (a link cost must be at least 1)"));
                }
                let p = self.pos;
                let v: u64 = self.num("neighbour")?;
                if !check {
                    continue;
                }
                let v = v
                    .checked_sub(base)
                    .filter(|&v| v < u64::from(n))
                    .ok_or_else(|| {
                        self.err_at(
                            p,
                            format!("neighbour {v} is not a vertex (base {base}, {n} vertices)"),
                        )
                    })? as u32;
                if v == u {
                    return Err(self.err_at(p, format!("vertex {u} is its own neighbour")));
                }
                out.push((u.min(v), u.max(v), w, p, u < v));
            }
        }
        if seen != arcs {
            return Err(self.err_at(j, format!("{arcs} arcs announced, {seen} listed")));
        }
        out.sort_unstable();
        let mut links = Vec::with_capacity(out.len() / 2);
        for c in out.chunks(2) {
            let a = c[0];
            match c.get(1) {
                Some(b) if (a.0, a.1, a.2) == (b.0, b.1, b.2) && a.4 != b.4 => {
                    links.push((a.0, a.1, a.2))
                }
                _ => {
                    return Err(self.err_at(
                        a.3,
                        format!(
                            "the edge ({}, {}) of weight {} is not listed from both ends \
                             with that weight",
                            a.0, a.1, a.2
                        ),
                    ))
                }
            }
        }
        Ok((n, links))
    }
}
