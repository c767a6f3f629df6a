//! Ours: `F_prop`, the phase model's delays propagated along the program, an estimate of
//! the completion time of a one-task-per-PE mapping.
//!
//! F (eq. 2-10, [`SpmModel::evaluate`]) adds per PE the delays its task's messages get
//! from the mapping. It cannot see a delay travel: a sender that received late sends late,
//! and its receiver waits for that too. On the accuracy experiment this is what is left of
//! F's error (it underestimates 38 of 40 programs; `docs/simulation.md`). `F_prop` keeps
//! the model's quantities and replays the ideal machine's run with them:
//!
//! * every remote message `m` of phase entry `(h, i→j)` is late by
//!   `δ_m = T_c·(d(m(i), m(j)) − 1) + (l_m / v^h_ij) · T_c · Σ v^h_st / 2`, the distance
//!   overhead of eq. 4 and its flit share of eq. 8's contention, summed over the channels
//!   `(s,t) ≠ (i,j)` of phase `h` whose routes share a directed link with the route of
//!   `(i,j)` (eq. 7's `≡_h`, the direct overlaps; eq. 9's division by the class size is
//!   not applied, the replay itself spreads the delays);
//! * each task runs its instructions alone on its PE as on the ideal machine: `INT_OP p`
//!   takes `p`, a `SEND` the send overhead, after which the message arrives
//!   `latency_ideal(m) + δ_m` later; a `RECEIVE` waits for its message, then takes the
//!   receive overhead. A wait absorbs earlier delays, a late sender passes its lateness on.
//!
//! `F_prop` is the latest finishing time. It is defined for mappings with at most one task
//! per PE (the paper's accuracy experiment): with several, the tasks of a PE share it,
//! which this replay does not model (use F or the simulator).
//!
//! Cost: O(instructions + Σ route lengths + Σ_h Σ_links u_h(l)²), `u_h(l)` the channels
//! of phase `h` whose routes use link `l`.

use taskmap_arch::{Architecture, LinkId, PeId};

use super::perego::SpmModel;
use crate::error::Error;
use crate::mapping::Mapping;
use crate::model::program::{Op, Program};

/// `F_prop` of one mapping.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PropagatedEstimate {
    /// The estimated completion time (the latest task), cycles.
    pub f_prop: f64,
    /// The task finishing last.
    pub argmax_task: u32,
    /// `Σ_m δ_m`: the delays the mapping adds to the messages, before any is absorbed.
    pub added_delay: f64,
}

/// Sentinel of a delivery time not known yet.
const UNKNOWN: f64 = f64::INFINITY;
const NONE: u32 = u32::MAX;

impl SpmModel {
    /// `F_prop` of `mapping` (see the module documentation); `Ok(None)` when a PE holds
    /// more than one task or the model was built without a program. `program` must be the
    /// one the model was built from.
    pub fn evaluate_propagated(
        &self,
        program: &Program,
        arch: &dyn Architecture,
        mapping: &Mapping,
    ) -> Result<Option<PropagatedEstimate>, Error> {
        let n = program.num_tasks();
        if n != self.work.len() || program.messages().len() != self.msg_entry.len() {
            return Err(Error::Mismatch(format!(
                "F_prop: the model has {} tasks and {} messages, the program {} and {}",
                self.work.len(),
                self.msg_entry.len(),
                n,
                program.messages().len()
            )));
        }
        let pes = super::routed_mapping(n, arch, mapping, "F_prop")?;
        let mut used = vec![false; arch.pe_count() as usize];
        for &p in &pes {
            if std::mem::replace(&mut used[p as usize], true) {
                return Ok(None);
            }
        }
        let entry_delay = self.entry_delays(arch, &pes);
        Ok(Some(self.replay(program, &entry_delay)))
    }

    /// Per phase entry: the delay of all its messages together, distance overhead plus the
    /// halved flits of the entries of its phase whose routes share a link with its route.
    fn entry_delays(&self, arch: &dyn Architecture, pes: &[u32]) -> Vec<f64> {
        let tc = self.params().machine.flit_cycles as f64;
        // Routes of the remote channels (CSR).
        let mut route_start = vec![0u32; self.channels.len() + 1];
        let mut routes: Vec<LinkId> = Vec::new();
        for (ci, c) in self.channels.iter().enumerate() {
            let (pi, pj) = (pes[c.src as usize], pes[c.dst as usize]);
            if pi != pj {
                arch.route(PeId(pi), PeId(pj), &mut routes);
            }
            route_start[ci + 1] = routes.len() as u32;
        }
        let route = |c: u32| {
            &routes[route_start[c as usize] as usize..route_start[c as usize + 1] as usize]
        };
        let mut delay = vec![0.0f64; self.phase_entries.len()];
        // Per phase: the (link, entry) pairs sorted by link; a link's entries are a run.
        let links = arch.link_count() as usize;
        let mut run_of = vec![(0u32, 0u32); links];
        let mut run_stamp = vec![u32::MAX; links];
        let mut seen = vec![u32::MAX; self.phase_entries.len()];
        let mut pairs: Vec<(LinkId, u32)> = Vec::new();
        for h in 0..self.num_phases() {
            let (lo, hi) = (
                self.phase_start[h] as usize,
                self.phase_start[h + 1] as usize,
            );
            pairs.clear();
            for e in lo..hi {
                let (c, _) = self.phase_entries[e];
                pairs.extend(route(c).iter().map(|&l| (l, e as u32)));
            }
            pairs.sort_unstable();
            let mut i = 0;
            while i < pairs.len() {
                let l = pairs[i].0;
                let mut j = i;
                while j < pairs.len() && pairs[j].0 == l {
                    j += 1;
                }
                run_of[l as usize] = (i as u32, j as u32);
                run_stamp[l as usize] = h as u32;
                i = j;
            }
            for e in lo..hi {
                let (c, _) = self.phase_entries[e];
                let r = route(c);
                if r.is_empty() {
                    continue;
                }
                seen[e] = e as u32;
                let mut others = 0u64;
                for &l in r {
                    debug_assert_eq!(run_stamp[l as usize], h as u32);
                    let (a, b) = run_of[l as usize];
                    for &(_, x) in &pairs[a as usize..b as usize] {
                        if seen[x as usize] != e as u32 {
                            seen[x as usize] = e as u32;
                            others += self.phase_entries[x as usize].1;
                        }
                    }
                }
                let hops = r.len() as f64;
                delay[e] = f64::from(self.entry_messages[e]) * tc * (hops - 1.0)
                    + tc * others as f64 / 2.0;
            }
        }
        delay
    }

    /// Replays the program with every message late by its share of its entry's delay.
    fn replay(&self, program: &Program, entry_delay: &[f64]) -> PropagatedEstimate {
        let m = &self.params().machine;
        let (send, recv) = (m.send_overhead as f64, m.recv_overhead as f64);
        let msgs = program.messages();
        let msg_of_op = program.msg_of_op();
        let n = program.num_tasks();
        let mut deliver = vec![UNKNOWN; msgs.len()];
        let mut waiter = vec![NONE; msgs.len()];
        let mut pc = vec![0u32; n];
        let mut now = vec![0.0f64; n];
        let mut added_delay = 0.0;
        let mut stack: Vec<u32> = (0..n as u32).rev().collect();
        while let Some(t) = stack.pop() {
            let base = program.op_start(t) as usize;
            let ops = program.task_ops(t);
            let mut k = pc[t as usize] as usize;
            let mut clock = now[t as usize];
            while k < ops.len() {
                match ops[k] {
                    Op::Compute(c) => clock += f64::from(c),
                    Op::Send { .. } => {
                        clock += send;
                        let mi = msg_of_op[base + k] as usize;
                        let e = self.msg_entry[mi];
                        let late = if e == NONE {
                            0.0
                        } else {
                            let fl = self.phase_entries[e as usize].1.max(1) as f64;
                            entry_delay[e as usize] * f64::from(msgs[mi].flits) / fl
                        };
                        added_delay += late;
                        deliver[mi] = clock + self.msg_latency[mi] as f64 + late;
                        if waiter[mi] != NONE {
                            stack.push(waiter[mi]);
                            waiter[mi] = NONE;
                        }
                    }
                    Op::Recv { .. } => {
                        let mi = msg_of_op[base + k] as usize;
                        if deliver[mi] == UNKNOWN {
                            waiter[mi] = t;
                            break;
                        }
                        clock = clock.max(deliver[mi]) + recv;
                    }
                }
                k += 1;
            }
            pc[t as usize] = k as u32;
            now[t as usize] = clock;
        }
        debug_assert!((0..n).all(|t| pc[t] as usize == program.task_ops(t as u32).len()));
        let (mut argmax, mut f_prop) = (0u32, 0.0f64);
        for (t, &c) in now.iter().enumerate() {
            if c > f_prop {
                (argmax, f_prop) = (t as u32, c);
            }
        }
        PropagatedEstimate {
            f_prop,
            argmax_task: argmax,
            added_delay,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::program_gen::generate_program;
    use crate::sim::perego::SpmParams;
    use crate::sim::wormhole::simulate_ideal;
    use rand::seq::SliceRandom;
    use rand::SeedableRng;

    fn random_mapping(n: usize, k: u32, seed: u64) -> Mapping {
        let mut pes: Vec<u32> = (0..k).collect();
        pes.shuffle(&mut rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed));
        Mapping::new(pes[..n].iter().map(|&p| PeId(p)).collect())
    }

    /// With no delay the replay is the ideal machine's run: the same completion time.
    #[test]
    fn replay_without_delays_is_the_ideal_run() {
        for spec in [
            "random:50,seed=4",
            "tree:31",
            "butterfly:4",
            "ring:12,rounds=3",
        ] {
            let prog = generate_program(spec).unwrap();
            let params = SpmParams::default();
            let model = SpmModel::build(&prog, &params).unwrap();
            let zero = vec![0.0; model.phase_entries.len()];
            let r = model.replay(&prog, &zero);
            let ideal = simulate_ideal(&prog, &params.machine).unwrap();
            assert_eq!(r.f_prop, ideal.completion as f64, "{spec}");
            assert_eq!(r.added_delay, 0.0);
        }
    }

    /// The entry delays equal a naive recomputation (every pair of entries of a phase
    /// tested for a shared link), and F_prop is never below the ideal machine's time.
    #[test]
    fn entry_delays_equal_pairwise_overlaps() {
        for (spec, side, seed) in [
            ("random:40,seed=2", 7u32, 1u64),
            ("random:90,seed=9", 10, 2),
        ] {
            let prog = generate_program(spec).unwrap();
            let arch = crate::parse_arch(&format!("mesh:{side}x{side}")).unwrap();
            let model = SpmModel::build(&prog, &SpmParams::default()).unwrap();
            let mapping = random_mapping(prog.num_tasks(), side * side, seed);
            let pes: Vec<u32> = mapping.as_slice().iter().map(|p| p.0).collect();
            let got = model.entry_delays(arch.as_ref(), &pes);
            let route = |c: u32| {
                let ch = &model.channels[c as usize];
                let mut r = Vec::new();
                if pes[ch.src as usize] != pes[ch.dst as usize] {
                    arch.route(
                        PeId(pes[ch.src as usize]),
                        PeId(pes[ch.dst as usize]),
                        &mut r,
                    );
                }
                r
            };
            for h in 0..model.num_phases() {
                let range = model.phase_start[h] as usize..model.phase_start[h + 1] as usize;
                for e in range.clone() {
                    let re = route(model.phase_entries[e].0);
                    if re.is_empty() {
                        assert_eq!(got[e], 0.0);
                        continue;
                    }
                    let others: u64 = range
                        .clone()
                        .filter(|&x| x != e)
                        .filter(|&x| {
                            route(model.phase_entries[x].0)
                                .iter()
                                .any(|l| re.contains(l))
                        })
                        .map(|x| model.phase_entries[x].1)
                        .sum();
                    let want = f64::from(model.entry_messages[e]) * (re.len() as f64 - 1.0)
                        + others as f64 / 2.0;
                    assert!(
                        (got[e] - want).abs() < 1e-9,
                        "{spec} entry {e}: {} vs {want}",
                        got[e]
                    );
                }
            }
            let est = model
                .evaluate_propagated(&prog, arch.as_ref(), &mapping)
                .unwrap()
                .unwrap();
            assert!(est.f_prop >= model.ideal_completion as f64);
            assert!(est.added_delay > 0.0);
        }
    }

    /// A ring embedded with every partner at distance 1 on disjoint links gets no delay;
    /// a PE with two tasks gives no estimate; a model of another program is an error.
    #[test]
    fn contention_free_embedding_and_refusals() {
        let prog = generate_program("ring:16").unwrap();
        let arch = crate::parse_arch("mesh:4x4").unwrap();
        let model = SpmModel::build(&prog, &SpmParams::default()).unwrap();
        // A Hamiltonian cycle of the 4x4 mesh.
        let cycle = [0u32, 1, 2, 3, 7, 11, 15, 14, 13, 12, 8, 9, 10, 6, 5, 4];
        let m = Mapping::new(cycle.iter().map(|&p| PeId(p)).collect());
        let est = model
            .evaluate_propagated(&prog, arch.as_ref(), &m)
            .unwrap()
            .unwrap();
        assert_eq!(est.f_prop, model.ideal_completion as f64);
        let mut two = cycle;
        two[1] = 0;
        let m2 = Mapping::new(two.iter().map(|&p| PeId(p)).collect());
        assert!(model
            .evaluate_propagated(&prog, arch.as_ref(), &m2)
            .unwrap()
            .is_none());
        let other = generate_program("ring:12").unwrap();
        assert!(model
            .evaluate_propagated(&other, arch.as_ref(), &m)
            .is_err());
    }
}
