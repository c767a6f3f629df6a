//! What `taskmap amap` reports as data, for the CLI and the bindings alike.

use serde_json::json;

use crate::houstis::machine::Machine;
use crate::houstis::mapper::AmapResult;
use crate::houstis::precedence::{Deterministic, ParallelMatrix, PrecedenceGraph};

/// The bounds `1 ≤ S ≤ T_seq/T_PAR ≤ AP` with the first that fails, if any.
pub fn bounds(r: &AmapResult) -> (bool, &'static str) {
    let (s, q, ap) = (r.speedup(), r.t_seq / r.t_par, r.active());
    let eps = 1e-9;
    if !(s.is_finite() && q.is_finite() && ap.is_finite()) {
        (false, "undefined (no processing time)")
    } else if s < 1.0 - eps {
        (false, "S < 1: slower than one processor")
    } else if s > q * (1.0 + eps) {
        (false, "S > T_seq/T_PAR: the schedule beats the frame")
    } else if q > ap * (1.0 + eps) {
        (false, "T_seq/T_PAR > AP")
    } else {
        (true, "holds")
    }
}

/// The report of an Algorithm Mapper result `r` for the precedence graph `g` (read from
/// `path`) on machine `m`: step 1's frame, the clustering, the delay model (its reading
/// and values), the times, the speed-up and its bounds, and every processor's load and modules.
pub fn report_json(
    g: &PrecedenceGraph,
    r: &AmapResult,
    m: &Machine,
    path: &str,
    algorithm: &str,
) -> serde_json::Value {
    json!({
        "model": path,
        "algorithm": algorithm,
        "modules": g.modules(),
        "links": g.links.len(),
        "processors": m.processors,
        "system": m.interconnect.to_string(),
        "delay_model": m.model.reading.to_string(),
        "itu_time": m.itu_time,
        "speeds": m.speeds,
        "step1": r.step1.map(|(target, frame, count)| json!({
            "target": target, "frame": frame, "clusters": count
        })),
        "reduced": r.reduced,
        "rho": r.rho,
        "delay": r.delay,
        "utilisation": r.utilisation,
        "model_active": r.model_active,
        "t_seq": r.t_seq,
        "t_par": r.t_par,
        "frame": r.frame,
        "t_real": r.t_real,
        "active": r.active(),
        "speedup": r.speedup(),
        "efficiency": r.speedup() / r.loads.len() as f64,
        "bounds_hold": bounds(r).0,
        "processors_detail": r.loads.iter().map(|l| json!({
            "processing": l.processing,
            "communication": l.communication,
            "modules": l.modules.iter().map(|&i| &g.names[i as usize]).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "processor_of": r.processor,
    })
}

/// The preprocessor's outputs (the paper's section 3): per module `m_i`, the expected
/// executions `f_i` and `m'_i = m_i·f_i` (M'); per pair of linked modules
/// `l'_ij = f_i p_ij γ_ij + f_j p_ji γ_ji` (L'); and `Δ`, the pairs of modules that may run
/// in parallel.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Preprocessor {
    pub modules: Vec<ModuleRow>,
    /// One row per unordered pair of linked modules, in order of first link.
    pub links: Vec<PairRow>,
    /// The pairs `(i, j)`, `i < j`, of modules that may run in parallel (`Δ`); `None`
    /// above the size `Δ` is built for.
    pub parallel: Option<Vec<(u32, u32)>>,
}

/// One module's line of [`Preprocessor`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct ModuleRow {
    pub name: String,
    /// Processing time per execution, `m_i`.
    pub m: f64,
    /// Expected executions, `f_i`.
    pub f: f64,
    /// `m'_i = m_i·f_i`.
    pub m_prime: f64,
    pub memory: f64,
}

/// One pair of linked modules of [`Preprocessor`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct PairRow {
    pub a: u32,
    pub b: u32,
    /// `l'_ab`: the expected ITUs between them, both directions.
    pub l_prime: f64,
}

/// The [`Preprocessor`] outputs of `g` with its deterministic graph `det`.
pub fn preprocessor(g: &PrecedenceGraph, det: &Deterministic) -> Preprocessor {
    let modules = (0..g.modules())
        .map(|i| ModuleRow {
            name: g.names[i].clone(),
            m: g.time[i],
            f: det.visits[i],
            m_prime: det.time[i],
            memory: g.memory[i],
        })
        .collect();
    let mut index: std::collections::HashMap<(u32, u32), usize> = Default::default();
    let mut links: Vec<PairRow> = Vec::new();
    for (l, v) in g.links.iter().zip(&det.volume) {
        let key = (l.from.min(l.to), l.from.max(l.to));
        let i = *index.entry(key).or_insert_with(|| {
            links.push(PairRow {
                a: key.0,
                b: key.1,
                l_prime: 0.0,
            });
            links.len() - 1
        });
        links[i].l_prime += v;
    }
    let parallel = ParallelMatrix::new(g, det).ok().map(|p| {
        let n = g.modules();
        (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| p.parallel(i, j))
            .map(|(i, j)| (i as u32, j as u32))
            .collect()
    });
    Preprocessor {
        modules,
        links,
        parallel,
    }
}
