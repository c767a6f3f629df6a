//! A mapping problem: the task graph, the target, and the constraints.

use std::path::Path;
use std::sync::Arc;

use taskmap_arch::{Architecture, PeId};
use taskmap_graph::TaskGraph;

use crate::error::Error;

/// Hard capacities: for every PE and every vertex-weight constraint, the largest load it
/// may carry. Row-major: `caps[pe * ncon + c]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capacities {
    caps: Vec<u64>,
    ncon: usize,
}

impl Capacities {
    /// The same capacity vector (one value per constraint) on every one of `k` PEs.
    pub fn uniform(k: u32, per_pe: &[u64]) -> Self {
        let mut caps = Vec::with_capacity(k as usize * per_pe.len());
        for _ in 0..k {
            caps.extend_from_slice(per_pe);
        }
        Self {
            caps,
            ncon: per_pe.len(),
        }
    }

    /// Capacities from a row-major vector of `k * ncon` values.
    pub fn from_vec(caps: Vec<u64>, ncon: usize) -> Self {
        assert!(ncon >= 1 && caps.len().is_multiple_of(ncon));
        Self { caps, ncon }
    }

    /// Reads a capacity file: one line per PE with `ncon` non-negative integers; `%`/`#`
    /// comment lines and empty lines are skipped. A file with a single line gives every PE
    /// the same capacities.
    pub fn read(path: &Path, k: u32, ncon: usize) -> Result<Self, Error> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::parse(&bytes, path, k, ncon)
    }

    /// Parses a capacity file (see [`Capacities::read`]); `path` names the input in errors.
    pub fn parse(bytes: &[u8], path: &Path, k: u32, ncon: usize) -> Result<Self, Error> {
        let text = crate::error::utf8_text(bytes, path)?;
        let mut rows: Vec<Vec<u64>> = Vec::new();
        let mut last_line = 0;
        for (i, raw) in text.lines().enumerate() {
            let t = raw.trim_start();
            if t.is_empty() || t.starts_with('%') || t.starts_with('#') {
                continue;
            }
            last_line = i + 1;
            let mut row = Vec::with_capacity(ncon);
            let mut col = 0;
            for tok in raw.split(|c: char| c.is_ascii_whitespace()) {
                if !tok.is_empty() {
                    let v = tok.parse::<u64>().map_err(|_| Error::Parse {
                        path: path.into(),
                        line: i + 1,
                        column: col + 1,
                        message: format!(
                            "expected a capacity (non-negative integer), found \"{}\"",
                            tok
                        ),
                    })?;
                    row.push(v);
                }
                col += tok.len() + 1;
            }
            if row.len() != ncon {
                return Err(Error::Parse {
                    path: path.into(),
                    line: i + 1,
                    column: 1,
                    message: format!(
                        "expected {} capacities (one per vertex weight), found {}",
                        ncon,
                        row.len()
                    ),
                });
            }
            rows.push(row);
        }
        match rows.len() {
            1 => Ok(Self::uniform(k, &rows[0])),
            n if n == k as usize => Ok(Self::from_vec(rows.concat(), ncon)),
            n => Err(Error::Parse {
                path: path.into(),
                line: last_line.max(1),
                column: 1,
                message: format!(
                    "expected 1 or {} capacity lines (one per PE), found {}",
                    k, n
                ),
            }),
        }
    }

    /// Capacity of `pe` for constraint `c`.
    #[inline]
    pub fn get(&self, pe: PeId, c: usize) -> u64 {
        self.caps[pe.idx() * self.ncon + c]
    }

    /// Number of constraints.
    pub fn ncon(&self) -> usize {
        self.ncon
    }

    /// Number of PEs covered.
    pub fn pe_count(&self) -> usize {
        self.caps.len() / self.ncon
    }
}

/// Everything a mapper needs: the graph, the target and the constraints.
#[derive(Clone, Debug)]
pub struct Problem {
    /// The task graph (shared: a problem is cheap to clone, and a binding can hand the
    /// same graph to several runs).
    pub graph: Arc<TaskGraph>,
    /// The target architecture (shared, as the graph).
    pub arch: Arc<dyn Architecture>,
    /// Allowed imbalance ε relative to each PE's capacity share (default 0.03).
    pub epsilon: f64,
    /// Hard capacities (no PE above them), if any.
    pub capacities: Option<Capacities>,
    /// With hard capacities, whether the ε bound holds too (the CLI sets it when `--epsilon`
    /// is given explicitly): [`Problem::max_loads`] is then the smaller of the two.
    pub epsilon_with_capacities: bool,
    /// Fixed tasks: the PE of every task, [`FREE`] for a task the mapper places
    /// (Scotch's `-f`). Only `drb`, `multilevel` and `exact` accept them.
    pub fixed: Option<Vec<u32>>,
}

/// A task that is not fixed, in [`Problem::fixed`].
pub const FREE: u32 = u32::MAX;

/// A vertex weight the PEs' hard capacities cannot carry: see
/// [`Problem::capacity_shortfalls`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shortfall {
    /// The vertex weight (constraint).
    pub constraint: usize,
    /// What the PEs can carry in all.
    pub capacity: u128,
    /// What the tasks weigh in all.
    pub weight: u128,
}

impl Problem {
    /// The vertex weights whose total exceeds the sum of the hard capacities (no mapping
    /// can respect them; empty without hard capacities).
    pub fn capacity_shortfalls(&self) -> Vec<Shortfall> {
        let Some(c) = &self.capacities else {
            return Vec::new();
        };
        let k = self.arch.pe_count();
        (0..self.graph.ncon())
            .map(|con| Shortfall {
                constraint: con,
                capacity: (0..k).map(|p| u128::from(c.get(PeId(p), con))).sum(),
                weight: self.graph.vertex_weight_sum(con),
            })
            .filter(|s| s.capacity < s.weight)
            .collect()
    }

    /// A problem with the default imbalance 0.03 and no hard capacities.
    pub fn new(graph: impl Into<Arc<TaskGraph>>, arch: impl Into<Arc<dyn Architecture>>) -> Self {
        Self {
            graph: graph.into(),
            arch: arch.into(),
            epsilon: 0.03,
            capacities: None,
            epsilon_with_capacities: false,
            fixed: None,
        }
    }

    /// The problem with its constraints as the CLI and the bindings take them: `epsilon`
    /// when given (default 0.03), `capacities` when given. With capacities, ε bounds the
    /// loads too only when it was given ([`Problem::epsilon_with_capacities`]).
    pub fn with_constraints(
        mut self,
        epsilon: Option<f64>,
        capacities: Option<Capacities>,
    ) -> Self {
        if let Some(eps) = epsilon {
            self.epsilon = eps;
        }
        self.epsilon_with_capacities = epsilon.is_some();
        self.capacities = capacities;
        self
    }

    /// What a mapping of this problem is checked against: the hard capacities when given
    /// (and ε only when `epsilon` was given explicitly, as the mappers then take the
    /// tighter bound), otherwise ε.
    pub fn eval_options(&self, epsilon: Option<f64>) -> crate::EvalOptions {
        match &self.capacities {
            Some(c) => crate::EvalOptions {
                epsilon,
                capacities: Some(c.clone()),
            },
            None => crate::EvalOptions {
                epsilon: Some(self.epsilon),
                capacities: None,
            },
        }
    }

    /// Checks that the parts fit together, for a mapper that cannot honour fixed tasks
    /// (an error when there are some).
    pub fn check(&self) -> Result<(), Error> {
        if self.fixed.is_some() {
            return Err(Error::Config(
                "fixed tasks are supported by the drb, multilevel and exact algorithms only".into(),
            ));
        }
        self.check_with_fixed()
    }

    /// Checks that the parts fit together, fixed tasks included.
    pub fn check_with_fixed(&self) -> Result<(), Error> {
        if let Some(f) = &self.fixed {
            let k = self.arch.pe_count();
            if f.len() != self.graph.num_tasks() {
                return Err(Error::Mismatch(format!(
                    "fixed tasks are given for {} tasks but the graph has {}",
                    f.len(),
                    self.graph.num_tasks()
                )));
            }
            if let Some((t, &p)) = f.iter().enumerate().find(|(_, &p)| p != FREE && p >= k) {
                return Err(Error::Mismatch(format!(
                    "task {} is fixed to PE {} but the target has {} PEs",
                    t, p, k
                )));
            }
        }
        if self.arch.pe_count() == 0 {
            return Err(Error::Mismatch("the target has no PE".into()));
        }
        check_pe_count(self.arch.as_ref())?;
        check_epsilon(self.epsilon)?;
        check_weights(&self.graph, self.arch.as_ref())?;
        if let Some(c) = &self.capacities {
            if c.pe_count() != self.arch.pe_count() as usize || c.ncon() != self.graph.ncon() {
                return Err(Error::Mismatch(format!(
                    "capacities are given for {} PEs x {} constraints but the problem has {} PEs x {} vertex weights",
                    c.pe_count(),
                    c.ncon(),
                    self.arch.pe_count(),
                    self.graph.ncon()
                )));
            }
        }
        Ok(())
    }

    /// The PE task `t` is fixed to, if any.
    #[inline]
    pub fn fixed_pe(&self, t: u32) -> Option<u32> {
        self.fixed
            .as_ref()
            .map(|f| f[t as usize])
            .filter(|&p| p != FREE)
    }

    /// The largest load every PE may carry for constraint `c`: with hard capacities, the
    /// capacity, at most the total weight of constraint `c` (more could never be used, and
    /// sums of capacities then fit in 64 bits), and with
    /// [`Problem::epsilon_with_capacities`] at most the balance bound too; otherwise the
    /// balance bound `⌊(1+ε)·⌈cap_share(p)⌉⌋` where `cap_share(p) = w_T(p)/Σ w_T · Σ_v w_S(v)`
    /// (the rule of KaHIP, METIS and Mt-KaHyPar: with unit weights and no more tasks than
    /// PEs, one task per PE).
    pub fn max_loads(&self, c: usize) -> Vec<u64> {
        let (g, a) = (&self.graph, self.arch.as_ref());
        let mut bounds = max_loads(g, a, self.epsilon, self.capacities.as_ref(), c);
        if self.capacities.is_some() && self.epsilon_with_capacities {
            for (b, e) in bounds
                .iter_mut()
                .zip(max_loads(g, a, self.epsilon, None, c))
            {
                *b = (*b).min(e);
            }
        }
        bounds
    }
}

/// Checks that ε is a non-negative finite number.
pub fn check_epsilon(epsilon: f64) -> Result<(), Error> {
    if epsilon >= 0.0 && epsilon.is_finite() {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "epsilon must be a non-negative number, not {}",
            epsilon
        )))
    }
}

/// The most PEs a target may have for mapping or evaluation: both keep arrays indexed by PE
/// (loads, bounds), so a larger target would exhaust memory rather than fail cleanly.
pub const MAX_MAPPING_PES: u32 = 1 << 24;

/// Errors when `arch` has more than [`MAX_MAPPING_PES`] PEs.
pub fn check_pe_count(arch: &dyn Architecture) -> Result<(), Error> {
    let k = arch.pe_count();
    if k > MAX_MAPPING_PES {
        return Err(Error::Config(format!(
            "the target {} has {k} PEs; mapping and evaluation handle at most {MAX_MAPPING_PES} (2^24)",
            arch.spec()
        )));
    }
    Ok(())
}

/// Checks that every cost and load a mapper computes fits in 64 bits: the total vertex
/// weight of each constraint (2^64 − 1), and the total edge weight times the target's
/// diameter (a bound on f_C) within 2^63 − 1, as the refiners' gains are signed. Without
/// it, sums would wrap silently.
pub fn check_weights(graph: &TaskGraph, arch: &dyn Architecture) -> Result<(), Error> {
    check_weights_within(
        graph,
        Some((arch, i64::MAX as u128)),
        "the refiners' signed gains",
    )
}

/// The checks of [`check_weights`] that need no target: the total vertex weight of each
/// constraint and the total edge weight within 2^64 − 1. An evaluation judges f_C on the
/// value it computes instead of on its bound, and `info` checks these for a graph alone.
pub fn check_graph_weights(graph: &TaskGraph) -> Result<(), Error> {
    check_weights_within(graph, None, "")
}

/// The sums of [`check_graph_weights`], and with `bound = Some((arch, limit))` f_C's
/// bound within `limit`; `what` names what would overflow beyond it.
fn check_weights_within(
    graph: &TaskGraph,
    bound: Option<(&dyn Architecture, u128)>,
    what: &str,
) -> Result<(), Error> {
    let total_w = graph.edge_weight_sum();
    for c in 0..graph.ncon() {
        let t = graph.vertex_weight_sum(c);
        if t > u128::from(u64::MAX) {
            return Err(Error::Config(format!(
                "the vertex weights of constraint {} add up to {}, more than 2^64-1",
                c, t
            )));
        }
    }
    if total_w > u128::from(u64::MAX) {
        return Err(Error::Config(format!(
            "the edge weights add up to {}, more than 2^64-1",
            total_w
        )));
    }
    if let Some((arch, limit)) = bound.filter(|_| total_w > 0) {
        let diameter = u128::from(taskmap_arch::diameter(arch));
        if total_w * diameter > limit {
            return Err(Error::Config(format!(
                "edge weights (total {}) times the target's diameter ({}) exceed {}: {} would overflow",
                total_w, diameter, limit, what
            )));
        }
    }
    Ok(())
}

/// See [`Problem::max_loads`].
pub fn max_loads(
    graph: &TaskGraph,
    arch: &dyn Architecture,
    epsilon: f64,
    caps: Option<&Capacities>,
    c: usize,
) -> Vec<u64> {
    let k = arch.pe_count();
    if let Some(cap) = caps {
        // At least 1, so that capacities stay positive on weightless graphs.
        let total = graph.total_vertex_weight(c).max(1);
        return (0..k).map(|p| cap.get(PeId(p), c).min(total)).collect();
    }
    let shares = ceil_shares(graph, arch, c);
    shares
        .into_iter()
        .map(|share| balance_bound(share, epsilon))
        .collect()
}

/// `⌈cap_share(p)⌉` of every PE for constraint `c`, where
/// `cap_share(p) = w_T(p)/Σ w_T · Σ_v w_S(v)`, computed exactly.
pub fn ceil_shares(graph: &TaskGraph, arch: &dyn Architecture, c: usize) -> Vec<u64> {
    let k = arch.pe_count();
    let total = u128::from(graph.total_vertex_weight(c));
    let cap_sum: u128 = (0..k)
        .map(|p| u128::from(arch.pe_capacity(PeId(p))))
        .sum::<u128>()
        .max(1);
    (0..k)
        .map(|p| {
            let share = (u128::from(arch.pe_capacity(PeId(p))) * total).div_ceil(cap_sum);
            // At most the total, which fits in 64 bits.
            share as u64
        })
        .collect()
}

/// The balance bound of KaHIP, METIS and Mt-KaHyPar on a share: `⌊(1+ε)·⌈share⌉⌋`, given
/// `⌈share⌉`, computed as `⌈share⌉ + ⌊ε·⌈share⌉⌋` with an absolute tolerance of 10^-9 on
/// the second term, so that products such as 0.15·20 (2.9999999999999996 in binary) count
/// as the 3 they are written as, and large shares get no more than the rule allows.
pub fn balance_bound(ceil_share: u64, epsilon: f64) -> u64 {
    let extra = (epsilon * ceil_share as f64 + 1e-9).floor();
    if extra >= u64::MAX as f64 {
        u64::MAX // a huge ε
    } else {
        ceil_share.saturating_add(extra as u64)
    }
}

/// Reads a file of fixed tasks for a graph of `n` tasks and a target of `k` PEs, in one of
/// two forms: Scotch's (a first line with the number of pairs, then `task pe` lines, as
/// for `gmap -f`), or one line per task holding its PE or `-1` for a free task. Task ids are
/// 0-based; `%`/`#` lines and empty lines are skipped. Errors name the line and column.
pub fn read_fixed(path: &Path, n: usize, k: u32) -> Result<Vec<u32>, Error> {
    let text = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    parse_fixed(&text, path, n, k)
}

/// Parses fixed tasks (see [`read_fixed`]); `path` names the input in errors.
pub fn parse_fixed(bytes: &[u8], path: &Path, n: usize, k: u32) -> Result<Vec<u32>, Error> {
    let err = |line: usize, column: usize, message: String| Error::Parse {
        path: path.into(),
        line,
        column,
        message,
    };
    let text = crate::error::utf8_text(bytes, path)?;
    // Data lines: (line number, tokens with their columns).
    let mut rows: Vec<(usize, Vec<(usize, &str)>)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim_start();
        if t.is_empty() || t.starts_with('%') || t.starts_with('#') {
            continue;
        }
        let mut toks = Vec::with_capacity(2);
        let mut start = None;
        for (j, ch) in raw.char_indices().chain(std::iter::once((raw.len(), ' '))) {
            if ch.is_ascii_whitespace() {
                if let Some(s0) = start.take() {
                    toks.push((s0 + 1, &raw[s0..j]));
                }
            } else if start.is_none() {
                start = Some(j);
            }
        }
        rows.push((i + 1, toks));
    }
    let mut fixed = vec![FREE; n];
    let pe_at = |line: usize, col: usize, tok: &str| -> Result<u32, Error> {
        let p: u64 = tok.parse().map_err(|_| {
            err(
                line,
                col,
                format!("expected a PE number, found \"{}\"", tok),
            )
        })?;
        if p >= k as u64 {
            return Err(err(
                line,
                col,
                format!("PE {} out of range 0..{} (the target has {} PEs)", p, k, k),
            ));
        }
        Ok(p as u32)
    };
    let scotch = (rows.len() >= 2 && rows[0].1.len() == 1 && rows[1].1.len() >= 2)
        || (rows.len() == 1 && n != 1 && rows[0].1.len() == 1 && rows[0].1[0].1 == "0");
    if !scotch {
        if rows.len() != n {
            let line = rows.last().map_or(1, |r| r.0);
            return Err(err(
                line,
                1,
                format!(
                    "expected one line per task ({} tasks) or a Scotch fixed-vertex file, found {} data lines",
                    n,
                    rows.len()
                ),
            ));
        }
        for (t, (line, toks)) in rows.iter().enumerate() {
            if toks.len() != 1 {
                return Err(err(
                    *line,
                    toks.get(1).map_or(1, |x| x.0),
                    format!(
                        "expected one PE (or -1) per line, found {} fields",
                        toks.len()
                    ),
                ));
            }
            let (col, tok) = toks[0];
            if tok != "-1" {
                fixed[t] = pe_at(*line, col, tok)?;
            }
        }
        return Ok(fixed);
    }
    let (hline, htoks) = &rows[0];
    let count: usize = htoks[0].1.parse().map_err(|_| {
        err(
            *hline,
            htoks[0].0,
            format!(
                "expected the number of fixed tasks, found \"{}\"",
                htoks[0].1
            ),
        )
    })?;
    if rows.len() - 1 != count {
        return Err(err(
            rows.last().map_or(*hline, |r| r.0),
            1,
            format!(
                "the header announces {} fixed tasks but the file has {} lines",
                count,
                rows.len() - 1
            ),
        ));
    }
    for (line, toks) in &rows[1..] {
        if toks.len() != 2 {
            return Err(err(
                *line,
                toks.first().map_or(1, |x| x.0),
                format!("expected \"task pe\", found {} fields", toks.len()),
            ));
        }
        let (tcol, ttok) = toks[0];
        let t: u64 = ttok.parse().map_err(|_| {
            err(
                *line,
                tcol,
                format!("expected a task id, found \"{}\"", ttok),
            )
        })?;
        if t >= n as u64 {
            return Err(err(
                *line,
                tcol,
                format!("task {} out of range 0..{} (ids are 0-based)", t, n),
            ));
        }
        if fixed[t as usize] != FREE {
            return Err(err(*line, tcol, format!("task {} is fixed twice", t)));
        }
        fixed[t as usize] = pe_at(*line, toks[1].0, toks[1].1)?;
    }
    Ok(fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Totals past 2^64 − 1 are errors naming what overflows; totals just below are not.
    #[test]
    fn check_weights_bounds_the_totals() {
        let arch = taskmap_arch::parse_arch("mesh:2x2").unwrap();
        // A path of three tasks, two constraints.
        let graph = |ew: u64, vw: [u64; 6]| {
            TaskGraph::from_csr(
                vec![0, 1, 3, 4],
                vec![1, 0, 2, 1],
                vec![ew; 4],
                vw.to_vec(),
                2,
            )
            .unwrap()
        };
        let half = u64::MAX / 2;
        assert!(check_weights(&graph(1, [half, 1, half, 1, 1, 1]), arch.as_ref()).is_ok());
        let e = check_weights(&graph(1, [1, half, 1, half, 1, 2]), arch.as_ref()).unwrap_err();
        assert!(e.to_string().contains("constraint 1"), "{e}");
        let e = check_weights(&graph(1 << 63, [1; 6]), arch.as_ref()).unwrap_err();
        assert!(e.to_string().contains("edge weights add up"), "{e}");
        // Total edge weight 2·(2^61) fits, times the diameter 2 (2^63) does not.
        let e = check_weights(&graph(1 << 61, [1; 6]), arch.as_ref()).unwrap_err();
        assert!(e.to_string().contains("diameter"), "{e}");
        let just = (i64::MAX as u64) / 4;
        assert!(check_weights(&graph(just, [1; 6]), arch.as_ref()).is_ok());
        // The graph alone: sums within 2^64 − 1, whatever the diameter.
        assert!(check_graph_weights(&graph(1 << 62, [1; 6])).is_ok());
        let e = check_graph_weights(&graph(1 << 63, [1; 6])).unwrap_err();
        assert!(e.to_string().contains("edge weights add up"), "{e}");
        let e = check_graph_weights(&graph(1, [1, half, 1, half, 1, 2])).unwrap_err();
        assert!(e.to_string().contains("constraint 1"), "{e}");
    }

    /// A byte that is not UTF-8 is an error at its line and column, in capacity and pin
    /// files alike.
    #[test]
    fn bytes_that_are_not_utf8_are_located() {
        let bytes = b"% caps\n5\n7 \xff8\n";
        let e = Capacities::parse(bytes, Path::new("c.txt"), 3, 1).unwrap_err();
        assert_eq!(e.to_string(), "c.txt:3:3: invalid UTF-8 (byte 0xff)");
        let e = parse_fixed(b"-1\n\xc3", Path::new("f.txt"), 2, 4).unwrap_err();
        assert_eq!(e.to_string(), "f.txt:2:1: invalid UTF-8 (byte 0xc3)");
        let c = Capacities::parse(b"5\n7\n8\n", Path::new("c.txt"), 3, 1).unwrap();
        assert_eq!((c.get(PeId(2), 0), c.pe_count()), (8, 3));
        // A leading UTF-8 byte-order mark is skipped.
        let c = Capacities::parse(b"\xef\xbb\xbf5\n7\n8\n", Path::new("c.txt"), 3, 1).unwrap();
        assert_eq!(c.get(PeId(0), 0), 5);
        assert_eq!(
            parse_fixed(b"\xef\xbb\xbf-1\n3\n", Path::new("f.txt"), 2, 4).unwrap(),
            parse_fixed(b"-1\n3\n", Path::new("f.txt"), 2, 4).unwrap()
        );
    }

    /// `⌊(1+ε)·⌈share⌉⌋`, exactly, also where the product lands just below an integer.
    #[test]
    fn balance_bound_floors_the_grown_rounded_share() {
        assert_eq!(balance_bound(1, 0.03), 1);
        assert_eq!(balance_bound(20, 0.03), 20);
        assert_eq!(balance_bound(34, 0.03), 35);
        assert_eq!(balance_bound(20, 0.15), 23); // 1.15 * 20 = 22.999999999999996 in f64
        assert_eq!(balance_bound(5, 0.2), 6);
        assert_eq!(balance_bound(0, 0.5), 0);
        assert_eq!(balance_bound(7, 1e300), u64::MAX);
        // Large shares get exactly the rule, no tolerance on top.
        assert_eq!(balance_bound(10_000_000_000_001, 0.0), 10_000_000_000_001);
        assert_eq!(balance_bound(1_000_000_000_000, 0.03), 1_030_000_000_000);
        // Shares by PE capacity, rounded up exactly: 10 tasks over capacities 1, 2 -> 4, 7.
        let g = taskmap_graph::gen::ring(10);
        let arch = taskmap_arch::parse_arch("wcomplete:1,2").unwrap();
        assert_eq!(ceil_shares(&g, arch.as_ref(), 0), vec![4, 7]);
        let p = Problem::new(g, arch);
        assert_eq!(p.max_loads(0), vec![4, 7]);
    }

    /// A hard capacity counts at most the total weight of its constraint.
    #[test]
    fn capacities_count_at_most_the_total_weight() {
        let g = taskmap_graph::gen::grid(&[4, 4], false);
        let arch = taskmap_arch::parse_arch("torus:2x2").unwrap();
        let mut p = Problem::new(g, arch);
        p.capacities = Some(Capacities::uniform(4, &[u64::MAX]));
        assert_eq!(p.max_loads(0), vec![16; 4]);
        p.capacities = Some(Capacities::uniform(4, &[5]));
        assert_eq!(p.max_loads(0), vec![5; 4]);
    }
}
