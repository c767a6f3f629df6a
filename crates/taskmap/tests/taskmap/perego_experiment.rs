//! The experiment of De Petris & Perego (1994, §4.1) behind the accuracy of the evaluation
//! function F against the wormhole simulator: random programs of 4-200 tasks (about 7
//! partners per task, a flit sent every 8 compute cycles), each mapped at random onto the
//! smallest square mesh that holds it, and per program the simulated completion time, F,
//! eq. 2-10 alone and `F_prop`. Two sets of 40: the one the model was studied on (program
//! seeds 1-40, mapping seeds 1000-1039) and a held-out one (program seeds 101-140, mapping
//! seeds 1100-1139).
//!
//! Shared by the test `sim_perego_accuracy::accuracy_on_ten_programs` and the example
//! `perego_accuracy` (which includes this file with `#[path]`).

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use taskmap::perego::gen::{random, GenParams};
use taskmap::perego::spm::{SpmModel, SpmParams};
use taskmap::perego::wormhole::simulate;
use taskmap::perego::Program;
use taskmap::{parse_arch, Architecture, Mapping, PeId};

/// The two sets of programs: the studied one and the held-out one.
pub const SETS: [(&str, u64); 2] = [("studied", 0), ("held-out", 100)];

/// Program `i` of `count` in the set with seed offset `off`: tasks, mesh side, program,
/// target, random one-to-one mapping.
pub fn instance(
    i: u32,
    count: u32,
    off: u64,
    gen: &GenParams,
) -> (u32, u32, Program, Box<dyn Architecture>, Mapping) {
    let n = 4 + (i * 196).div_ceil(count.max(2) - 1).min(196);
    let side = (1..).find(|s: &u32| s * s >= n).unwrap();
    let prog = random(
        n,
        &GenParams {
            seed: u64::from(i) + 1 + off,
            ..gen.clone()
        },
    );
    let arch = parse_arch(&format!("mesh:{side}x{side}")).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1000 + u64::from(i) + off);
    let mut pes: Vec<u32> = (0..side * side).collect();
    pes.shuffle(&mut rng);
    let mapping = Mapping::new(pes[..n as usize].iter().map(|&p| PeId(p)).collect());
    (n, side, prog, arch, mapping)
}

/// One program of a set, measured.
#[allow(
    dead_code,
    reason = "the test reads the estimates; the example perego_accuracy prints every field"
)]
pub struct Row {
    pub tasks: u32,
    pub side: u32,
    pub sim: u64,
    /// `SpmModel::evaluate`.
    pub f: f64,
    /// Eq. 2-10 alone (`evaluate_partial`).
    pub f_paper: f64,
    /// `F_prop` (`evaluate_propagated`).
    pub f_prop: f64,
    pub phases: usize,
    /// At the argmax of `f` (one task per PE): w + q, distance, contention, absorbed slack
    /// (cycles), and the task's simulated wait minus q.
    pub terms: [f64; 4],
    pub sim_extra_wait: i64,
    /// The same terms at the argmax of `f_paper`.
    pub paper_terms: [f64; 4],
    pub paper_sim_extra_wait: i64,
}

/// The first `count` programs of the set with seed offset `off`, one row each.
pub fn run(count: u32, off: u64, params: &SpmParams, gen: &GenParams) -> Vec<Row> {
    let mut rows = Vec::new();
    for i in 0..count {
        let (n, side, prog, arch, mapping) = instance(i, count, off, gen);
        let sim = simulate(&prog, arch.as_ref(), &mapping, &params.machine).unwrap();
        let model = SpmModel::build(&prog, params).unwrap();
        let f = model.evaluate(arch.as_ref(), &mapping).unwrap();
        let pes: Vec<u32> = mapping.as_slice().iter().map(|p| p.0).collect();
        let fp = model.evaluate_partial(arch.as_ref(), &pes);
        let f_prop = model
            .evaluate_propagated(&prog, arch.as_ref(), &mapping)
            .unwrap()
            .expect("one task per PE")
            .f_prop;
        // Terms per task (every PE holds at most one task).
        let nt = n as usize;
        let tc = params.machine.flit_cycles as f64;
        let mut dist = vec![0.0; nt];
        for c in &model.channels {
            let d = arch.distance(mapping.pe(c.src), mapping.pe(c.dst)) as f64;
            dist[c.dst as usize] += c.messages as f64 * tc * (d - 1.0);
        }
        let terms_of = |pe: u32| -> ([f64; 4], i64) {
            let t = pes.iter().position(|&p| p == pe).unwrap();
            let own = (model.work[t] + model.wait[t]) as f64;
            let cont = fp.per_pe[pe as usize] - own - dist[t];
            let slack = fp.per_pe[pe as usize] - f.per_pe[pe as usize];
            (
                [own, dist[t], cont, slack],
                sim.task_wait[t] as i64 - model.wait[t] as i64,
            )
        };
        let (terms, sim_extra_wait) = terms_of(f.argmax);
        let (paper_terms, paper_sim_extra_wait) = terms_of(fp.argmax);
        rows.push(Row {
            tasks: n,
            side,
            sim: sim.completion,
            f: f.f,
            f_paper: fp.f,
            f_prop,
            phases: model.num_phases(),
            terms,
            sim_extra_wait,
            paper_terms,
            paper_sim_extra_wait,
        });
    }
    rows
}

/// Which estimate [`errors`] reads.
#[derive(Clone, Copy)]
pub enum Est {
    /// `evaluate`.
    F,
    /// Eq. 2-10 alone.
    Paper,
    /// `evaluate_propagated`.
    Prop,
}

/// Largest and mean |error| of one estimate.
pub fn errors(rows: &[Row], est: Est) -> (f64, f64) {
    let errs: Vec<f64> = rows.iter().map(|r| rel_err(r, est).abs()).collect();
    let max = errs.iter().cloned().fold(0.0, f64::max);
    (max, errs.iter().sum::<f64>() / errs.len() as f64)
}

/// Signed relative error of one estimate against the simulation.
pub fn rel_err(r: &Row, est: Est) -> f64 {
    let f = match est {
        Est::F => r.f,
        Est::Paper => r.f_paper,
        Est::Prop => r.f_prop,
    };
    (f - r.sim as f64) / r.sim as f64
}
