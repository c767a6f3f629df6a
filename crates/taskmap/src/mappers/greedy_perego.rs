//! The greedy contention-aware mapper of De Petris & Perego (1994, §5), simplified.
//!
//! Start with the centre of the task graph (smallest total hop distance to the other
//! tasks) on the centre PE (smallest total distance to the other PEs). Then repeatedly take
//! the unmapped task with the most mapped partners (ties: higher degree, then lower id; an
//! unconnected task when none has a mapped partner), rank every PE by the cheap `F'` (the
//! increase of eq. 6 on the candidate and its partners' PEs; with no more tasks than PEs
//! only free PEs are candidates — the mapping is one-to-one —, with more tasks than PEs,
//! when the usage factor — mapped tasks / occupied PEs — is below `T/N`, occupied PEs come
//! first), evaluate the full `F` of the partial mapping on the first
//! `s = (2·dims + 1)·|C(t)|` candidates (at least `min_candidates`) and keep the smallest;
//! near-ties (relative 1e-9) are broken by `F_sum`, then by the difference between the
//! task's degree and the PE's physical degree, then by the total distance to the PEs
//! already used (a stand-in for the paper's bounding box), then by the lowest PE id.
//!
//! Results (`tests/sim_greedy.rs`, completion time against the ideal machine): optimal for a
//! 16-ring on `mesh:4x4`, 2-D meshes on `mesh:4x4`, `mesh:8x8` and `hypercube:4`,
//! butterflies on `hypercube:4` and `hypercube:6`, a 31-task reduce tree on `mesh:8x8`;
//! not optimal for larger rings on meshes (+0.2-0.4 %), rings on hypercubes and tori (+3.3 %:
//! the ring does not close without the look-ahead), an 8×8 mesh on `hypercube:6` (+6.7 %)
//! and a 16-task butterfly on `mesh:4x4` (+3 %).
//!
//! Not implemented from the paper: the look-ahead tie-breaker (a distance-only version made
//! meshes worse and did not close rings, so it was left out), the bounding box (see
//! above), degrees within distance g (plain degrees are compared), the connectivity-within-D/4 task tie-breaker (degree is used),
//! the memory bound M, and incremental evaluation of F (each candidate's F is recomputed,
//! O(a·D + Σ_h a_h·D·α)); the whole run is O(T·s·(a·D)) plus O(T·a + k²) for the centres.
//!
//! Run as a registered algorithm on a task graph, it uses
//! [`SpmModel::from_task_graph`] (one phase, no waiting); [`greedy_map_program`] uses the
//! program's full phase model.

use taskmap_arch::{Architecture, PeId};

use crate::error::Error;
use crate::mapper::{Mapper, RunContext};
use crate::mapping::Mapping;
use crate::problem::Problem;
use crate::sim::perego::{SpmModel, SpmParams};

const UNMAPPED: u32 = u32::MAX;

/// The greedy mapper. Parameters public with defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct GreedyPerego {
    /// Phase and machine parameters of F.
    pub spm: SpmParams,
    /// Fewest candidates re-ranked by F. Default 4.
    pub min_candidates: usize,
}

impl Default for GreedyPerego {
    fn default() -> Self {
        Self {
            spm: SpmParams::default(),
            min_candidates: 4,
        }
    }
}

impl Mapper for GreedyPerego {
    fn name(&self) -> &'static str {
        "greedy-perego"
    }

    fn map(&self, problem: &Problem, _ctx: &mut RunContext) -> Result<Mapping, Error> {
        problem.check()?;
        let model = SpmModel::from_task_graph(&problem.graph, &self.spm);
        greedy_map(&model, problem.arch.as_ref(), self.min_candidates)
    }
}

/// Maps a program with its full phase model (see the module documentation).
pub fn greedy_map_program(
    program: &crate::model::Program,
    arch: &dyn Architecture,
    params: &GreedyPerego,
) -> Result<Mapping, Error> {
    let model = SpmModel::build(program, &params.spm)?;
    greedy_map(&model, arch, params.min_candidates)
}

fn dims_of(arch: &dyn Architecture) -> usize {
    let spec = arch.spec();
    match spec.split_once(':') {
        Some(("hypercube", d)) => d.trim().parse().unwrap_or(2),
        Some((_, d)) => d.split('x').count(),
        None => 2,
    }
}

/// The greedy mapping of `model` onto `arch`.
pub fn greedy_map(
    model: &SpmModel,
    arch: &dyn Architecture,
    min_candidates: usize,
) -> Result<Mapping, Error> {
    let n = model.work.len();
    let k = arch.pe_count() as usize;
    let mut probe = Vec::new();
    if !arch.route(PeId(0), PeId(0), &mut probe) {
        return Err(Error::Config(format!(
            "greedy-perego needs a target with routes (mesh, torus, hypercube), got {}",
            arch.spec()
        )));
    }
    if n == 0 {
        return Ok(Mapping::new(Vec::new()));
    }
    // Undirected partner lists with the cost of each direction (messages).
    let mut partners: Vec<Vec<(u32, u64)>> = vec![Vec::new(); n];
    for c in &model.channels {
        partners[c.src as usize].push((c.dst, c.messages));
        partners[c.dst as usize].push((c.src, c.messages));
    }
    for p in &mut partners {
        p.sort_unstable_by_key(|&(v, _)| v);
        p.dedup_by(|a, b| {
            if a.0 == b.0 {
                b.1 += a.1;
                true
            } else {
                false
            }
        });
    }
    let first_task = task_centre(&partners);
    let first_pe = (0..k as u32)
        .min_by_key(|&p| {
            (0..k as u32)
                .map(|q| arch.distance(PeId(p), PeId(q)))
                .sum::<u64>()
        })
        .unwrap_or(0);
    let mut pes = vec![UNMAPPED; n];
    let mut mapped_partners = vec![0u32; n];
    let mut tasks_on = vec![0u32; k];
    let mut r6 = vec![0.0f64; k]; // eq. 6 per PE for the current partial mapping
    let tc = model.params().machine.flit_cycles as f64;
    let dims = dims_of(arch);
    let assign = |t: usize,
                  p: u32,
                  pes: &mut Vec<u32>,
                  mapped_partners: &mut Vec<u32>,
                  tasks_on: &mut Vec<u32>,
                  r6: &mut Vec<f64>| {
        pes[t] = p;
        tasks_on[p as usize] += 1;
        r6[p as usize] += (model.work[t] + model.wait[t]) as f64;
        for &(v, m) in &partners[t] {
            mapped_partners[v as usize] += 1;
            let pv = pes[v as usize];
            if pv != UNMAPPED && pv != p {
                let d = arch.distance(PeId(p), PeId(pv)) as f64;
                // Half the round-trip cost to each side (the direction split is unknown here).
                let v2 = m as f64 * tc * (d - 1.0) / 2.0;
                r6[p as usize] += v2;
                r6[pv as usize] += v2;
            }
        }
    };
    assign(
        first_task,
        first_pe,
        &mut pes,
        &mut mapped_partners,
        &mut tasks_on,
        &mut r6,
    );
    let mut mapped = 1usize;
    let mut mapped_pes: Vec<u32> = vec![first_pe];
    // Physical degree of every PE (number of PEs at distance 1).
    let pe_degree: Vec<u64> = (0..k as u32)
        .map(|p| {
            let mut d = 0;
            for q in 0..k as u32 {
                if arch.distance(PeId(p), PeId(q)) == 1 {
                    d += 1;
                }
            }
            d
        })
        .collect();
    let mut order: Vec<(bool, f64, u32)> = Vec::with_capacity(k);
    while mapped < n {
        // Select_Task.
        let t = (0..n)
            .filter(|&t| pes[t] == UNMAPPED)
            .max_by_key(|&t| (mapped_partners[t], partners[t].len(), std::cmp::Reverse(t)))
            .expect("an unmapped task");
        // F' for every PE.
        let occupied = tasks_on.iter().filter(|&&c| c > 0).count();
        let favour_used = n > k && (mapped as f64 / occupied.max(1) as f64) < n as f64 / k as f64;
        order.clear();
        for p in 0..k as u32 {
            if n <= k && tasks_on[p as usize] > 0 {
                continue; // room for one task per PE: keep the mapping one-to-one
            }
            let mut inc = (model.work[t] + model.wait[t]) as f64;
            let mut worst = r6[p as usize];
            for &(v, m) in &partners[t] {
                let pv = pes[v as usize];
                if pv != UNMAPPED && pv != p {
                    let d = arch.distance(PeId(p), PeId(pv)) as f64;
                    let v2 = m as f64 * tc * (d - 1.0) / 2.0;
                    inc += v2;
                    worst = worst.max(r6[pv as usize] + v2);
                }
            }
            let fprime = (r6[p as usize] + inc).max(worst);
            let demote = favour_used && tasks_on[p as usize] == 0;
            order.push((demote, fprime, p));
        }
        order.sort_unstable_by(|a, b| {
            (a.0, a.1, a.2)
                .partial_cmp(&(b.0, b.1, b.2))
                .expect("F' is finite")
        });
        let s = ((2 * dims + 1) * mapped_partners[t] as usize)
            .max(min_candidates)
            .min(order.len());
        let mut best: Option<Key> = None;
        let tdeg = partners[t].len() as u64;
        for &(_, _, p) in &order[..s] {
            pes[t] = p;
            let e = model.evaluate_partial(arch, &pes);
            let key = (
                e.f,
                e.f_sum,
                tdeg.abs_diff(pe_degree[p as usize]),
                mapped_pes
                    .iter()
                    .map(|&q| arch.distance(PeId(p), PeId(q)))
                    .sum::<u64>(),
                p,
            );
            if best.is_none_or(|b| better(&key, &b)) {
                best = Some(key);
            }
        }
        pes[t] = UNMAPPED;
        let p = best.expect("at least one candidate").4;
        if tasks_on[p as usize] == 0 {
            mapped_pes.push(p);
        }
        assign(t, p, &mut pes, &mut mapped_partners, &mut tasks_on, &mut r6);
        mapped += 1;
    }
    Ok(Mapping::new(pes.into_iter().map(PeId).collect()))
}

/// Lexicographic comparison with a relative tolerance on the two F values.
type Key = (f64, f64, u64, u64, u32);

fn better(a: &Key, b: &Key) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0);
    if !close(a.0, b.0) {
        return a.0 < b.0;
    }
    if !close(a.1, b.1) {
        return a.1 < b.1;
    }
    (a.2, a.3, a.4) < (b.2, b.3, b.4)
}

/// The task with the smallest total hop distance to all tasks it reaches (BFS from every
/// task; unreachable tasks count `n` hops). O(T·a).
fn task_centre(partners: &[Vec<(u32, u64)>]) -> usize {
    let n = partners.len();
    let mut dist = vec![u32::MAX; n];
    let mut queue = Vec::with_capacity(n);
    let mut best = (u64::MAX, 0usize);
    for s in 0..n {
        dist.iter_mut().for_each(|d| *d = u32::MAX);
        queue.clear();
        dist[s] = 0;
        queue.push(s as u32);
        let mut head = 0;
        let mut total = 0u64;
        while head < queue.len() {
            let u = queue[head] as usize;
            head += 1;
            total += u64::from(dist[u]);
            for &(v, _) in &partners[u] {
                if dist[v as usize] == u32::MAX {
                    dist[v as usize] = dist[u] + 1;
                    queue.push(v);
                }
            }
        }
        total += (n - queue.len()) as u64 * n as u64;
        if total < best.0 {
            best = (total, s);
        }
    }
    best.1
}
