//! The architecture spec parser (CLI specs and Scotch target files) and the Scotch writer.

use std::str::FromStr;

use crate::explicit::{lines, read_input, tokens};
use crate::machine::{parse_level_list, LevelKind, Machine};
use crate::tree::MAX_TREE_LEVELS;
use crate::{
    ArchError, Architecture, Complete, DistanceMatrix, ExplicitGraph, Hypercube, LabelledTree,
    Mesh, PeId, Subset, Torus, Tree, WeightedComplete,
};

/// Most dimensions accepted for a mesh or torus.
const MAX_DIMS: usize = 1024;

/// Parses an architecture spec.
///
/// CLI specs (`kind:args`):
///
/// | spec | architecture |
/// |---|---|
/// | `complete:K` (or `cmplt:K`) | [`Complete`] on `K` PEs |
/// | `wcomplete:W0,W1,...` (or `cmpltw:...`) | [`WeightedComplete`], one capacity per PE |
/// | `hypercube:D` (or `hcub:D`) | [`Hypercube`] of dimension `D` |
/// | `mesh:D0xD1x...` | [`Mesh`], any number of dimensions (`mesh:16` is 1-D) |
/// | `torus:D0xD1x...` | [`Torus`] |
/// | `tree:C0:C1:.../T0:T1:...` | [`Tree`], counts bottom-up, `Ti` the distance of PEs whose highest differing level is `i` |
/// | `graph:FILE` | [`ExplicitGraph`] from a METIS graph (`n m [fmt [ncon]]`, edge weights = link costs, first vertex weight = capacity, gzip allowed) |
/// | `matrix:FILE` | [`DistanceMatrix`] (see its format) |
/// | `sub:LIST:INNER` | [`Subset`]: `LIST` = inner PE ids and ranges `a-b`, comma separated, `INNER` any spec: `sub:0-3,8-11:torus:8x8` |
/// | `tgt:FILE` | a Scotch target file |
/// | `hwloc:FILE[,pe=pu][,LEVEL=DIST..]` | a [`Machine`] from hwloc XML (`lstopo --of xml`): PEs are cores (or PUs), levels package, die, NUMA, L3, core, PU |
/// | `LEVEL:COUNT,..[/DIST,..]` | a [`Machine`] given top-down: `nodes:4,package:2,core:8/100,10,1` (levels node, package, die, numa, l3, core, pu) |
///
/// Otherwise, when `spec` names an existing file, it is read as a Scotch target file
/// (gzip allowed); and a string whose first word is a Scotch target name is read as an
/// inline Scotch target (`"torus2D 8 8"`, `"tleaf 3 8 90 8 9 4 1"`). Scotch targets:
/// `cmplt k`, `cmpltw k w0 .. w(k-1)`, `hcub dim`, `mesh2D x y`, `mesh3D x y z`,
/// `meshXD n d0 .. d(n-1)`, `torus2D`, `torus3D`, `torusXD` (same arguments), `tleaf L s0 c0
/// .. s(L-1) c(L-1)` (levels top-down, cumulative distances, see [`Tree::from_tleaf`]),
/// `ltleaf` (a `tleaf` followed by `permnbr perm0 ..`: the labels of the leaves of each
/// block of `permnbr` leaves, so that PE `L` is leaf `L - L % permnbr + perm⁻¹[L % permnbr]`),
/// `deco 0`, `deco 1` and `deco 2` (decomposition-defined targets, as `amk_grf` writes them;
/// read into a [`Decomposition`](crate::Decomposition), see `docs/formats.md`),
/// `sub n p0 .. p(n-1) INNER` (Scotch 6/7 layout; `sub INNER n p0 ..` is accepted too).
/// Names are case-insensitive; `#` starts a comment.
pub fn parse_arch(spec: &str) -> Result<Box<dyn Architecture>, ArchError> {
    parse_nested(spec, 0)
}

/// The machine of an `hwloc:` spec or a level list (`nodes:4,package:2,core:8`), with
/// `nodes` (a Slurm node list, `node[01-04]`) naming its nodes: a node level is put above
/// the topology, with one hwloc file for every node, or one per node (`%n` in the file
/// name, or a directory of `NAME.xml` files). `None` for the other specs, which have no
/// hosts; a node list with them is an error.
pub fn parse_machine(spec: &str, nodes: Option<&str>) -> Result<Option<Machine>, ArchError> {
    let s = spec.trim();
    let names = match nodes {
        Some(n) => Some(crate::machine::expand_node_list(n)?),
        None => None,
    };
    if let Some((kind, rest)) = s.split_once(':') {
        if kind.eq_ignore_ascii_case("hwloc") {
            return crate::hwloc::parse_hwloc_spec(rest, spec, names.as_deref()).map(Some);
        }
        if LevelKind::parse(kind).is_some() {
            return parse_level_list(s, names.as_deref()).map(Some);
        }
    }
    match nodes {
        Some(_) => Err(ArchError::spec(
            spec,
            "a node list applies to hwloc:FILE and to level lists (package:2,core:8), not to this target",
        )),
        None => Ok(None),
    }
}

/// Most nested `sub` levels accepted.
const MAX_NESTING: u32 = 32;

fn parse_nested(spec: &str, depth: u32) -> Result<Box<dyn Architecture>, ArchError> {
    if depth > MAX_NESTING {
        return Err(ArchError::spec(spec, "subsets nested too deeply"));
    }
    let s = spec.trim();
    if s.is_empty() {
        return Err(ArchError::spec(spec, "empty spec"));
    }
    if let Some((kind, rest)) = s.split_once(':') {
        if let Some(r) = parse_cli(&kind.to_ascii_lowercase(), rest, spec, depth) {
            return r;
        }
    }
    if std::path::Path::new(s).is_file() {
        return parse_scotch_file(s);
    }
    let first = s.split_ascii_whitespace().next().unwrap_or("");
    if is_scotch_name(first) {
        let toks: Vec<(u32, u32, &str)> = scotch_tokens(s.as_bytes())
            .into_iter()
            .map(|(l, c, t)| (l, c, std::str::from_utf8(t).unwrap_or("?")))
            .collect();
        return Toks {
            toks,
            pos: 0,
            src: Src::Inline(spec),
            depth,
        }
        .whole();
    }
    let kind = s.split(':').next().unwrap_or(s);
    if std::path::Path::new(s).is_dir() {
        return Err(ArchError::spec(
            spec,
            "this is a directory, not a target file or spec",
        ));
    }
    Err(ArchError::spec(
        spec,
        format!(
            "unknown architecture kind \"{kind}\" and no such file (expected complete:K, \
             wcomplete:W,.., hypercube:D, mesh:AxB, torus:AxB, tree:C:../D:.., graph:FILE, \
             matrix:FILE, sub:LIST:SPEC, tgt:FILE, hwloc:FILE, node:N,package:P,core:C or a \
             Scotch target)"
        ),
    ))
}

/// The Scotch target text (one target, ending in a newline) of cmplt, cmpltw, hcub,
/// mesh/torus (`mesh2D`/`mesh3D` for 2 and 3 dimensions, `meshXD` otherwise; note that
/// Scotch builds accept at most 5 dimensions by default), tleaf (when the tree distances
/// increase strictly upwards) and sub (when the inner target has one) architectures;
/// `None` for the others.
pub fn write_scotch_target(arch: &dyn Architecture) -> Option<String> {
    arch.scotch_target().map(|s| s + "\n")
}

fn num<T: FromStr>(tok: &str, what: &str, spec: &str) -> Result<T, ArchError> {
    let t = tok.trim();
    if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
        return Err(ArchError::spec(
            spec,
            format!("{what} \"{t}\" is not a non-negative integer"),
        ));
    }
    t.parse()
        .map_err(|_| ArchError::spec(spec, format!("{what} \"{t}\" is too large")))
}

fn num_list<T: FromStr>(s: &str, sep: char, what: &str, spec: &str) -> Result<Vec<T>, ArchError> {
    if s.trim().is_empty() {
        return Err(ArchError::spec(spec, format!("missing {what} list")));
    }
    s.split(sep).map(|t| num(t, what, spec)).collect()
}

/// Parses `a,b-c,...` into PE ids.
fn pe_list(s: &str, spec: &str) -> Result<Vec<PeId>, ArchError> {
    let mut out = Vec::new();
    if s.trim().is_empty() {
        return Err(ArchError::spec(spec, "empty PE list"));
    }
    for item in s.split(',') {
        match item.split_once('-') {
            Some((a, b)) => {
                let a: u32 = num(a, "PE", spec)?;
                let b: u32 = num(b, "PE", spec)?;
                if b < a {
                    return Err(ArchError::spec(
                        spec,
                        format!("descending PE range {a}-{b}"),
                    ));
                }
                if out.len() as u64 + u64::from(b - a) >= 1 << 26 {
                    return Err(ArchError::spec(spec, "PE list too long"));
                }
                out.extend((a..=b).map(PeId));
            }
            None => out.push(PeId(num(item, "PE", spec)?)),
        }
    }
    Ok(out)
}

fn parse_cli(
    kind: &str,
    rest: &str,
    spec: &str,
    depth: u32,
) -> Option<Result<Box<dyn Architecture>, ArchError>> {
    fn boxed<A: Architecture + 'static>(
        r: Result<A, ArchError>,
        spec: &str,
    ) -> Result<Box<dyn Architecture>, ArchError> {
        r.map(|a| Box::new(a) as Box<dyn Architecture>)
            .map_err(|e| e.in_spec(spec))
    }
    let r = (|| match kind {
        "complete" | "cmplt" => boxed(Complete::new(num(rest, "PE count", spec)?), spec),
        "wcomplete" | "cmpltw" => boxed(
            WeightedComplete::new(num_list(rest, ',', "capacity", spec)?),
            spec,
        ),
        "hypercube" | "hcub" => boxed(Hypercube::new(num(rest, "dimension", spec)?), spec),
        "mesh" | "torus" => {
            let dims: Vec<u32> = num_list(&rest.to_ascii_lowercase(), 'x', "dimension", spec)?;
            if dims.len() > MAX_DIMS {
                return Err(ArchError::spec(spec, "too many dimensions"));
            }
            if kind == "mesh" {
                boxed(Mesh::new(dims), spec)
            } else {
                boxed(Torus::new(dims), spec)
            }
        }
        "tree" => {
            let (c, d) = rest.split_once('/').ok_or_else(|| {
                ArchError::spec(
                    spec,
                    "expected tree:COUNTS/DISTANCES, e.g. tree:4:8:6/1:10:100",
                )
            })?;
            if c.split(':').count() > MAX_TREE_LEVELS {
                return Err(ArchError::spec(spec, "too many tree levels"));
            }
            boxed(
                Tree::new(
                    num_list(c, ':', "count", spec)?,
                    num_list(d, ':', "distance", spec)?,
                ),
                spec,
            )
        }
        "graph" => {
            if rest.is_empty() {
                return Err(ArchError::spec(spec, "missing file name"));
            }
            ExplicitGraph::from_file(rest).map(|a| Box::new(a) as Box<dyn Architecture>)
        }
        "matrix" => {
            if rest.is_empty() {
                return Err(ArchError::spec(spec, "missing file name"));
            }
            DistanceMatrix::from_file(rest).map(|a| Box::new(a) as Box<dyn Architecture>)
        }
        "tgt" => {
            if rest.is_empty() {
                return Err(ArchError::spec(spec, "missing file name"));
            }
            parse_scotch_file(rest)
        }
        "sub" => {
            let (list, inner) = rest.split_once(':').ok_or_else(|| {
                ArchError::spec(
                    spec,
                    "expected sub:PE_LIST:INNER_SPEC, e.g. sub:0-3,8-11:torus:8x8",
                )
            })?;
            let pes = pe_list(list, spec)?;
            let inner = parse_nested(inner, depth + 1)?;
            boxed(Subset::new(inner, pes), spec)
        }
        "hwloc" => crate::hwloc::parse_hwloc_spec(rest, spec, None)?.architecture(),
        k if LevelKind::parse(k).is_some() => parse_level_list(spec.trim(), None)?.architecture(),
        _ => Err(ArchError::spec(spec, "")),
    })();
    match r {
        Err(ArchError::Spec { msg, .. }) if msg.is_empty() => None,
        r => Some(r),
    }
}

fn is_scotch_name(t: &str) -> bool {
    matches!(
        t.to_ascii_lowercase().as_str(),
        "cmplt"
            | "cmpltw"
            | "hcub"
            | "mesh2d"
            | "mesh3d"
            | "meshxd"
            | "torus2d"
            | "torus3d"
            | "torusxd"
            | "tleaf"
            | "ltleaf"
            | "deco"
            | "sub"
    )
}

fn scotch_tokens(bytes: &[u8]) -> Vec<(u32, u32, &[u8])> {
    let mut out = Vec::new();
    for (l, line) in lines(bytes) {
        for (c, t) in tokens(line) {
            if t.starts_with(b"#") {
                break;
            }
            out.push((l, c, t));
        }
    }
    out
}

fn parse_scotch_file(path: &str) -> Result<Box<dyn Architecture>, ArchError> {
    let bytes = read_input(path)?;
    let raw = scotch_tokens(&bytes);
    let mut toks = Vec::with_capacity(raw.len());
    for (l, c, t) in raw {
        match std::str::from_utf8(t) {
            Ok(s) => toks.push((l, c, s)),
            Err(_) => return Err(ArchError::file(path, l, c, "invalid UTF-8")),
        }
    }
    Toks {
        toks,
        pos: 0,
        src: Src::File(path),
        depth: 0,
    }
    .whole()
}

pub(crate) enum Src<'a> {
    File(&'a str),
    Inline(&'a str),
}

pub(crate) struct Toks<'a> {
    pub(crate) toks: Vec<(u32, u32, &'a str)>,
    pub(crate) pos: usize,
    pub(crate) src: Src<'a>,
    /// Nesting depth of `sub` targets.
    pub(crate) depth: u32,
}

impl<'a> Toks<'a> {
    pub(crate) fn err_at(&self, i: usize, msg: impl Into<String>) -> ArchError {
        let msg = msg.into();
        match self.src {
            Src::File(f) => {
                let (l, c) = match self.toks.get(i) {
                    Some(&(l, c, _)) => (l, c),
                    None => self
                        .toks
                        .last()
                        .map_or((1, 1), |&(l, c, t)| (l, c + t.len() as u32)),
                };
                ArchError::file(f, l, c, msg)
            }
            Src::Inline(s) => ArchError::spec(s, format!("word {}: {msg}", i + 1)),
        }
    }

    fn whole(mut self) -> Result<Box<dyn Architecture>, ArchError> {
        let a = self.arch()?;
        if self.pos < self.toks.len() {
            return Err(self.err_at(
                self.pos,
                format!("unexpected \"{}\" after the target", self.toks[self.pos].2),
            ));
        }
        Ok(a)
    }

    pub(crate) fn word(&mut self, what: &str) -> Result<&'a str, ArchError> {
        match self.toks.get(self.pos) {
            Some(&(_, _, t)) => {
                self.pos += 1;
                Ok(t)
            }
            None => Err(self.err_at(self.pos, format!("missing {what} (unexpected end)"))),
        }
    }

    pub(crate) fn num<T: FromStr>(&mut self, what: &str) -> Result<T, ArchError> {
        let i = self.pos;
        let t = self.word(what)?;
        if !t.bytes().all(|c| c.is_ascii_digit()) {
            return Err(self.err_at(
                i,
                format!("{what}: expected a non-negative integer, found \"{t}\""),
            ));
        }
        t.parse()
            .map_err(|_| self.err_at(i, format!("{what}: number \"{t}\" is too large")))
    }

    /// The levels of a `tleaf`: `L`, then `L` pairs of size and link cost.
    fn tleaf_levels(&mut self) -> Result<(Vec<u32>, Vec<u64>), ArchError> {
        let i = self.pos;
        let l: usize = self.num("number of levels")?;
        if l == 0 || l > MAX_TREE_LEVELS {
            return Err(self.err_at(
                i,
                format!("bad number of levels {l} (1 to {MAX_TREE_LEVELS})"),
            ));
        }
        let (mut s, mut c) = (Vec::new(), Vec::new());
        for _ in 0..l {
            s.push(self.num("level size")?);
            c.push(self.num("link cost")?);
        }
        Ok((s, c))
    }

    /// The permutation of an `ltleaf` (`permnbr perm0 ..`) of a tree with `k` leaves:
    /// every block of `permnbr` consecutive leaves is relabelled within itself, so
    /// `permnbr` must divide `k`, and the list must be a permutation of `0..permnbr`.
    fn ltleaf_perm(&mut self, k: u32) -> Result<Vec<u32>, ArchError> {
        let i = self.pos;
        let p: u32 = self.num("permutation size")?;
        if p == 0 || !k.is_multiple_of(p) {
            return Err(self.err_at(
                i,
                format!("permutation size {p} does not divide the {k} leaves of the tree"),
            ));
        }
        // Every index is a token of its own: a size beyond the tokens left is cut short
        // before anything of that size is allocated.
        if p as usize > self.toks.len() - self.pos {
            return Err(self.err_at(
                i,
                format!(
                    "permutation size {p}, but only {} indices follow",
                    self.toks.len() - self.pos
                ),
            ));
        }
        let mut seen = vec![false; p as usize];
        let mut perm = Vec::with_capacity(p as usize);
        for _ in 0..p {
            let j = self.pos;
            let v: u32 = self.num("permutation index")?;
            if v >= p {
                return Err(self.err_at(j, format!("permutation index {v} is not below {p}")));
            }
            if std::mem::replace(&mut seen[v as usize], true) {
                return Err(self.err_at(j, format!("permutation index {v} is listed twice")));
            }
            perm.push(v);
        }
        Ok(perm)
    }

    /// A signed integer (Scotch writes -1 for "none").
    pub(crate) fn int(&mut self, what: &str) -> Result<i64, ArchError> {
        let i = self.pos;
        let t = self.word(what)?;
        let digits = t.strip_prefix('-').unwrap_or(t);
        if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return Err(self.err_at(i, format!("{what}: expected an integer, found \"{t}\"")));
        }
        t.parse()
            .map_err(|_| self.err_at(i, format!("{what}: number \"{t}\" is too large")))
    }

    /// Fails unless `n` more words of `per` tokens each can follow (so that counts read
    /// from the file never size an allocation beyond the file).
    pub(crate) fn need(&self, at: usize, n: u64, per: u64, what: &str) -> Result<(), ArchError> {
        let left = (self.toks.len() - self.pos) as u64;
        if n.checked_mul(per).is_none_or(|t| t > left) {
            return Err(self.err_at(
                at,
                format!("{n} {what} announced, but the file holds only {left} more numbers"),
            ));
        }
        Ok(())
    }

    /// The file a top-level target was read from.
    pub(crate) fn top_path(&self, at: usize) -> Option<String> {
        match self.src {
            Src::File(f) if at == 0 && self.depth == 0 => Some(f.to_string()),
            _ => None,
        }
    }

    pub(crate) fn arch(&mut self) -> Result<Box<dyn Architecture>, ArchError> {
        let at = self.pos;
        if self.depth > MAX_NESTING {
            return Err(self.err_at(at, "subsets nested too deeply"));
        }
        let name = self.word("target name")?.to_ascii_lowercase();
        // A constructor's error, placed at the target's name.
        fn located<A>(t: &Toks<'_>, at: usize, r: Result<A, ArchError>) -> Result<A, ArchError> {
            r.map_err(|e| match e {
                ArchError::Invalid(m) => t.err_at(at, m),
                e => e,
            })
        }
        fn boxed<A: Architecture + 'static>(
            t: &Toks<'_>,
            at: usize,
            r: Result<A, ArchError>,
        ) -> Result<Box<dyn Architecture>, ArchError> {
            located(t, at, r).map(|a| Box::new(a) as Box<dyn Architecture>)
        }
        match name.as_str() {
            "cmplt" => {
                let k = self.num("PE count")?;
                boxed(self, at, Complete::new(k))
            }
            "cmpltw" => {
                let k: u32 = self.num("PE count")?;
                let mut w = Vec::new();
                for _ in 0..k {
                    w.push(self.num("PE weight")?);
                }
                boxed(self, at, WeightedComplete::new(w))
            }
            "hcub" => {
                let d = self.num("dimension")?;
                boxed(self, at, Hypercube::new(d))
            }
            "mesh2d" | "mesh3d" | "meshxd" | "torus2d" | "torus3d" | "torusxd" => {
                let n = match &name[name.len() - 2..] {
                    "2d" => 2,
                    "3d" => 3,
                    _ => {
                        let i = self.pos;
                        let n: usize = self.num("number of dimensions")?;
                        if n == 0 || n > MAX_DIMS {
                            return Err(self.err_at(i, format!("bad number of dimensions {n}")));
                        }
                        n
                    }
                };
                let mut dims = Vec::new();
                for _ in 0..n {
                    dims.push(self.num("dimension size")?);
                }
                if name.starts_with("mesh") {
                    boxed(self, at, Mesh::new(dims))
                } else {
                    boxed(self, at, Torus::new(dims))
                }
            }
            "tleaf" => {
                let (sizes, costs) = self.tleaf_levels()?;
                boxed(self, at, Tree::from_tleaf(sizes, costs))
            }
            "ltleaf" => {
                let (sizes, costs) = self.tleaf_levels()?;
                let tree = located(self, at, Tree::from_tleaf(sizes, costs))?;
                let perm = self.ltleaf_perm(tree.pe_count())?;
                boxed(self, at, LabelledTree::new(tree, perm))
            }
            "deco" => {
                let i = self.pos;
                match self.num::<u32>("decomposition type")? {
                    0 => self.deco0(at),
                    1 => self.deco1(at),
                    2 => self.deco2(at),
                    t => Err(self.err_at(i, format!("decomposition type {t}: expected 0, 1 or 2"))),
                }
            }
            "sub" => {
                self.depth += 1;
                let numeric = self
                    .toks
                    .get(self.pos)
                    .is_some_and(|t| t.2.bytes().all(|c| c.is_ascii_digit()));
                let inner_first = if numeric { None } else { Some(self.arch()?) };
                let n: u32 = self.num("number of PEs")?;
                let mut pes = Vec::new();
                for _ in 0..n {
                    pes.push(PeId(self.num("PE number")?));
                }
                let inner = match inner_first {
                    Some(a) => a,
                    None => self.arch()?,
                };
                boxed(self, at, Subset::new(inner, pes))
            }
            _ => Err(self.err_at(
                at,
                format!("unknown or unsupported Scotch target \"{name}\""),
            )),
        }
    }
}
