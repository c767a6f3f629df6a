//! A mapping problem: the task graph, the target, and the constraints.

use std::path::Path;

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
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
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
#[derive(Debug)]
pub struct Problem {
    /// The task graph.
    pub graph: TaskGraph,
    /// The target architecture.
    pub arch: Box<dyn Architecture>,
    /// Allowed imbalance ε relative to each PE's capacity share (default 0.03).
    pub epsilon: f64,
    /// Hard capacities (no PE above them), if any.
    pub capacities: Option<Capacities>,
}

impl Problem {
    /// A problem with the default imbalance 0.03 and no hard capacities.
    pub fn new(graph: TaskGraph, arch: Box<dyn Architecture>) -> Self {
        Self {
            graph,
            arch,
            epsilon: 0.03,
            capacities: None,
        }
    }

    /// Checks that the parts fit together.
    pub fn check(&self) -> Result<(), Error> {
        if self.arch.pe_count() == 0 {
            return Err(Error::Mismatch("the target has no PE".into()));
        }
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

    /// The largest load every PE may carry for constraint `c`: with hard capacities, the
    /// capacity; otherwise the balance bound `⌈(1+ε)·cap_share(p)⌉` where
    /// `cap_share(p) = w_T(p)/Σ w_T · Σ_v w_S(v)`.
    pub fn max_loads(&self, c: usize) -> Vec<u64> {
        max_loads(
            &self.graph,
            self.arch.as_ref(),
            self.epsilon,
            self.capacities.as_ref(),
            c,
        )
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

/// Checks that every cost and load taskmap computes fits in 64 bits: the total vertex weight
/// of each constraint, and the total edge weight times the target's diameter (a bound on
/// f_C). Without it, sums would wrap silently.
pub fn check_weights(graph: &TaskGraph, arch: &dyn Architecture) -> Result<(), Error> {
    let (_, _, ew, vw) = graph.csr();
    let total_w: u128 = ew.iter().map(|&w| u128::from(w)).sum::<u128>() / 2;
    let ncon = graph.ncon();
    for c in 0..ncon {
        let t: u128 = vw
            .iter()
            .skip(c)
            .step_by(ncon)
            .map(|&w| u128::from(w))
            .sum();
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
    if total_w > 0 {
        let diameter = u128::from(taskmap_arch::diameter(arch));
        if total_w * diameter > u128::from(u64::MAX) {
            return Err(Error::Config(format!(
                "edge weights (total {}) times the target's diameter ({}) exceed 2^64-1: the communication cost would overflow",
                total_w, diameter
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
        return (0..k).map(|p| cap.get(PeId(p), c)).collect();
    }
    let total = graph.total_vertex_weight(c) as f64;
    let cap_sum: u64 = (0..k).map(|p| arch.pe_capacity(PeId(p))).sum();
    (0..k)
        .map(|p| {
            let share = arch.pe_capacity(PeId(p)) as f64 / cap_sum.max(1) as f64 * total;
            ((1.0 + epsilon) * share - 1e-9).ceil().max(0.0) as u64
        })
        .collect()
}
