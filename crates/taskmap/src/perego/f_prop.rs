//! Ours: `F_prop`, the phase model's delays propagated along the program, an estimate of
//! the completion time of a one-task-per-PE mapping.
//!
//! F (eq. 2-10, [`SpmModel::evaluate`]) adds per PE the delays its task's messages get
//! from the mapping. It cannot see a delay travel: a sender that received late sends late,
//! and its receiver waits for that too. On the accuracy experiment this is what is left of
//! F's error (it underestimates 38 of 40 programs; `docs/simulation.md`). `F_prop` keeps
//! the model's quantities and replays the ideal machine's run with them:
//!
//! * every remote message `m` of `i → j` in phase `h`, of `l_m` flits, is late by
//!   `δ_m = T_c·(d(m(i), m(j)) − 1) + (l_m / v^h_ij) · T_c · Σ v^h_st / 2`: the distance
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
//! of phase `h` whose routes use link `l`; the last term (the overlap test) is bounded by
//! [`MAX_OVERLAP_STEPS`], beyond which no estimate is given (a dense phase, such as an
//! all-to-all exchange, where F's union-find classes are the affordable model).

use taskmap_arch::{Architecture, LinkId};

use super::spm::SpmModel;
use crate::error::Error;
use crate::mapping::Mapping;
use crate::perego::program::{Op, Program};

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

/// The most steps the overlap test of one estimate may take (entries visited on the
/// links of other entries' routes; a few seconds. A 10,000-task random program with
/// 600,000 messages on `mesh:100x100` takes 6.6·10^8).
pub const MAX_OVERLAP_STEPS: u64 = 1 << 32;

/// Sentinel of a delivery time not known yet.
const UNKNOWN: f64 = f64::INFINITY;
const NONE: u32 = u32::MAX;

impl SpmModel {
    /// `F_prop` of `mapping` (see the module documentation); `Ok(None)` when a PE holds
    /// more than one task or the overlap test would take more than [`MAX_OVERLAP_STEPS`].
    /// An error when the model was not built from `program` (a model of a task graph,
    /// [`Self::from_task_graph`], has no messages to replay) or the target has no routes.
    pub fn evaluate_propagated(
        &self,
        program: &Program,
        arch: &dyn Architecture,
        mapping: &Mapping,
    ) -> Result<Option<PropagatedEstimate>, Error> {
        self.check_program(program)?;
        let pes = super::routed_mapping(program.num_tasks(), arch, mapping, "F_prop")?;
        if !super::one_task_per_pe(&pes, arch.pe_count()) {
            return Ok(None);
        }
        let Some(delays) = self.message_delays(program, arch, &pes) else {
            return Ok(None);
        };
        Ok(Some(self.replay(program, &delays)))
    }

    /// Errors unless every message of `program` belongs to a phase entry of a channel with
    /// its sender and receiver (the model was built from this program).
    fn check_program(&self, program: &Program) -> Result<(), Error> {
        let msgs = program.messages();
        let fits = program.num_tasks() == self.work.len()
            && msgs.len() == self.msg_entry.len()
            && msgs.iter().zip(&self.msg_entry).all(|(m, &e)| {
                e == NONE
                    || self.phase_entries.get(e as usize).is_some_and(|&(c, _)| {
                        let ch = &self.channels[c as usize];
                        (ch.src, ch.dst) == (m.src, m.dst)
                    })
            });
        if fits {
            Ok(())
        } else {
            Err(Error::Mismatch(format!(
                "F_prop: the phase model ({} tasks, {} messages) was not built from this program ({} tasks, {} messages)",
                self.work.len(),
                self.msg_entry.len(),
                program.num_tasks(),
                msgs.len()
            )))
        }
    }

    /// `δ_m` of every message (0 for local ones and those never delivered); `None` when the
    /// overlap test would exceed [`MAX_OVERLAP_STEPS`].
    fn message_delays(
        &self,
        program: &Program,
        arch: &dyn Architecture,
        pes: &[u32],
    ) -> Option<Vec<f64>> {
        let tc = self.params().machine.flit_cycles as f64;
        let (mut route_start, mut routes) = (Vec::new(), Vec::new());
        self.channel_routes(arch, pes, &mut route_start, &mut routes);
        let route = |c: u32| {
            &routes[route_start[c as usize] as usize..route_start[c as usize + 1] as usize]
        };
        // Per phase entry: the flits of the other entries of its phase whose routes share a
        // link with its route. The (link, entry) pairs of a phase sorted by link; the
        // entries on a link are a run of them.
        let mut overlap = vec![0u64; self.phase_entries.len()];
        let links = super::routes(arch).link_count() as usize;
        let mut run_of = vec![(0u32, 0u32); links];
        let mut seen = vec![NONE; self.phase_entries.len()];
        let mut pairs: Vec<(LinkId, u32)> = Vec::new();
        let mut steps = 0u64;
        for h in 0..self.num_phases() {
            let (lo, hi) = (
                self.phase_start[h] as usize,
                self.phase_start[h + 1] as usize,
            );
            pairs.clear();
            for e in lo..hi {
                pairs.extend(
                    route(self.phase_entries[e].0)
                        .iter()
                        .map(|&l| (l, e as u32)),
                );
            }
            pairs.sort_unstable();
            let mut i = 0;
            while i < pairs.len() {
                let l = pairs[i].0;
                let j = i + pairs[i..].iter().take_while(|p| p.0 == l).count();
                run_of[l as usize] = (i as u32, j as u32);
                i = j;
            }
            for e in lo..hi {
                let mut others = 0u64;
                seen[e] = e as u32;
                for &l in route(self.phase_entries[e].0) {
                    let (a, b) = run_of[l as usize];
                    steps += u64::from(b - a);
                    if steps > MAX_OVERLAP_STEPS {
                        return None;
                    }
                    for &(_, x) in &pairs[a as usize..b as usize] {
                        if seen[x as usize] != e as u32 {
                            seen[x as usize] = e as u32;
                            others += self.phase_entries[x as usize].1;
                        }
                    }
                }
                overlap[e] = others;
            }
        }
        let msgs = program.messages();
        Some(
            msgs.iter()
                .zip(&self.msg_entry)
                .map(|(m, &e)| {
                    if e == NONE {
                        return 0.0;
                    }
                    let (c, v) = self.phase_entries[e as usize];
                    let hops = route(c).len() as f64;
                    if hops == 0.0 {
                        return 0.0;
                    }
                    let share = f64::from(m.flits) / v.max(1) as f64;
                    tc * (hops - 1.0) + share * tc * overlap[e as usize] as f64 / 2.0
                })
                .collect(),
        )
    }

    /// Replays the program with every message `delay[m]` cycles late.
    fn replay(&self, program: &Program, delay: &[f64]) -> PropagatedEstimate {
        let m = &self.params().machine;
        let (send, recv) = (m.send_overhead as f64, m.recv_overhead as f64);
        let msgs = program.messages();
        let msg_of_op = program.msg_of_op();
        let n = program.num_tasks();
        let mut deliver = vec![UNKNOWN; msgs.len()];
        let mut waiter = vec![NONE; msgs.len()];
        let mut pc = vec![0u32; n];
        let mut now = vec![0.0f64; n];
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
                        deliver[mi] = clock + self.msg_latency[mi] as f64 + delay[mi];
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
        // Programs are checked deadlock-free on the ideal machine, whose dependencies these
        // are: every task ran to its end.
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
            added_delay: delay.iter().sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perego::gen::generate_program;
    use crate::perego::spm::SpmParams;
    use crate::perego::wormhole::simulate_ideal;
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    use taskmap_arch::PeId;

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
            let zero = vec![0.0; prog.messages().len()];
            let r = model.replay(&prog, &zero);
            let ideal = simulate_ideal(&prog, &params.machine).unwrap();
            assert_eq!(r.f_prop, ideal.completion as f64, "{spec}");
            assert_eq!(r.added_delay, 0.0);
        }
    }

    /// The message delays equal a naive recomputation (per message: its own distance,
    /// and its flit share of the flits of every entry of its phase whose route shares a
    /// link, tested pair by pair), with `T_c` = 2 so that a missing factor shows; F_prop
    /// is never below the ideal machine's time.
    #[test]
    fn message_delays_equal_pairwise_overlaps() {
        for (spec, side, seed) in [
            ("random:40,seed=2,flits=20", 7u32, 1u64),
            ("random:90,seed=9", 10, 2),
        ] {
            let prog = generate_program(spec).unwrap();
            let arch = crate::parse_arch(&format!("mesh:{side}x{side}")).unwrap();
            let mut params = SpmParams::default();
            params.machine.flit_cycles = 2;
            let model = SpmModel::build(&prog, &params).unwrap();
            let mapping = random_mapping(prog.num_tasks(), side * side, seed);
            let pes: Vec<u32> = mapping.as_slice().iter().map(|p| p.0).collect();
            let got = model.message_delays(&prog, arch.as_ref(), &pes).unwrap();
            let route = |c: u32| {
                let ch = &model.channels[c as usize];
                let mut r = Vec::new();
                if pes[ch.src as usize] != pes[ch.dst as usize] {
                    arch.routing().unwrap().route(
                        PeId(pes[ch.src as usize]),
                        PeId(pes[ch.dst as usize]),
                        &mut r,
                    );
                }
                r
            };
            let mut lengths = std::collections::HashSet::new();
            for (mi, msg) in prog.messages().iter().enumerate() {
                let e = model.msg_entry[mi] as usize;
                let (c, v) = model.phase_entries[e];
                let h = model.phase_start.partition_point(|&s| s as usize <= e) - 1;
                let re = route(c);
                let want = if re.is_empty() {
                    0.0
                } else {
                    let range = model.phase_start[h] as usize..model.phase_start[h + 1] as usize;
                    let others: u64 = range
                        .filter(|&x| x != e)
                        .filter(|&x| {
                            route(model.phase_entries[x].0)
                                .iter()
                                .any(|l| re.contains(l))
                        })
                        .map(|x| model.phase_entries[x].1)
                        .sum();
                    2.0 * (re.len() as f64 - 1.0)
                        + f64::from(msg.flits) / v as f64 * 2.0 * others as f64 / 2.0
                };
                assert!(
                    (got[mi] - want).abs() < 1e-9,
                    "{spec} message {mi}: {} vs {want}",
                    got[mi]
                );
                lengths.insert(msg.flits);
            }
            assert!(lengths.len() > 1, "messages of several lengths");
            let est = model
                .evaluate_propagated(&prog, arch.as_ref(), &mapping)
                .unwrap()
                .unwrap();
            assert!(est.f_prop >= model.ideal_completion as f64);
        }
    }

    /// A ring embedded with every partner at distance 1 on disjoint links gets no delay;
    /// a PE with two tasks gives no estimate; a model of another program (or of a task
    /// graph) is an error.
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
        // Another program with as many tasks and messages: the ring the other way round
        // (task ids mirrored, i -> 15 - i).
        let mirror = |w: &str| {
            w.parse::<u32>()
                .map_or(w.to_string(), |i| (15 - i).to_string())
        };
        let text: String = prog
            .to_text()
            .lines()
            .map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                match w.as_slice() {
                    ["PROCESS", i] => format!("PROCESS {}\n", mirror(i)),
                    [op @ ("SEND" | "RECEIVE"), t, f] => format!("{op} {} {f}\n", mirror(t)),
                    _ => format!("{l}\n"),
                }
            })
            .collect();
        let other =
            crate::perego::program::parse_program(&text, std::path::Path::new("mirror")).unwrap();
        assert_eq!(other.messages().len(), prog.messages().len());
        assert!(model
            .evaluate_propagated(&other, arch.as_ref(), &m)
            .is_err());
        let fewer = generate_program("ring:12").unwrap();
        assert!(model
            .evaluate_propagated(&fewer, arch.as_ref(), &m)
            .is_err());
        let tg = SpmModel::from_task_graph(&prog.to_task_graph(), &SpmParams::default());
        assert!(tg.evaluate_propagated(&prog, arch.as_ref(), &m).is_err());
    }
}
