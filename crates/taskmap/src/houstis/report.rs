//! What `taskmap amap` reports as data, for the CLI and the bindings alike.

use serde_json::json;

use crate::houstis::machine::Machine;
use crate::houstis::mapper::AmapResult;
use crate::houstis::precedence::PrecedenceGraph;

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
/// `path`) on machine `m`: step 1's frame, the clustering, the delay model's values, the
/// times, the speed-up and its bounds, and every processor's load and modules.
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
