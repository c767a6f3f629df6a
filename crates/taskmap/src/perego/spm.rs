//! The Synchronous Phases Model and the mapping evaluation function `F` of De Petris &
//! Perego (1994, §3.2 and §4, equations 2-10).
//!
//! [`SpmModel::build`] runs the program on the ideal machine ([`simulate_ideal`]) and
//! derives the busy cycles `w_i` of every task, per channel `i → j` its messages `m_ij`,
//! their mean length `l_ij` in flits and the cycles `q_ij` the receiver waited for them,
//! the slack of every message, and the phases: the classes of messages whose network
//! intervals on the ideal machine overlap for more than `overlap_fraction`.
//!
//! [`SpmModel::evaluate_partial`], the paper's F, which the greedy mapper minimises (and
//! [`super::f`] maintains), computes for a mapping `m`, per PE `n` (all in cycles):
//!
//! ```text
//! R(m,n) = Σ_{m(j)=n} (w_j + q_j)                                        (eq. 3)
//!        + Σ_{m(j)=n} Σ_{m(i)≠m(j)} m_ij · T_c · (d(m(i),m(j)) − 1)      (eq. 4)
//!        − Σ_{m(j)=n} Σ_{m(i)=m(j)} min(m_ij · l_ij · (T_c − c_loc), q_ij) (eq. 5)
//!        + Σ_{m(j)=n} Σ_{m(i)≠n} Σ_h Σ_{(s,t)∈S^h(i,j), (s,t)≠(i,j)} T_c · v^h_st / (2 |S^h(i,j)|)  (eq. 9)
//! F(m) = max_n R(m,n)   (eq. 2)        F_sum(m) = Σ_n R(m,n)   (§5.2)
//! ```
//!
//! with `c_loc` the memory-copy cost per flit of a local message, `S^h(i,j)` the
//! interference class of `(i,j)` in phase `h` (routes sharing a directed link, closed
//! transitively) and `v^h_st` the flits `(s,t)` sends in phase `h`.
//!
//! [`SpmModel::evaluate`], the estimate of the completion time of a complete mapping, also
//! lets the receivers' slack absorb the delays: a message that had arrived `s` cycles
//! before its receiver asked for it on the ideal machine delays the receiver only by
//! `max(0, δ − s)` when the mapping makes it `δ` cycles slower (the paper's case analysis
//! for eq. 5, applied to a slower remote message). Without it F overestimates on the
//! accuracy experiment. The absorbed cycles are reported in `slack` and in `multitasking`.
//!
//! Complexity of `evaluate`: O(T + a·D + Σ_h a_h·D·α), D the diameter. The model, the
//! phases, slack absorption and the accuracy measured: `docs/simulation.md`, "The
//! Synchronous Phases Model and F".

use taskmap_arch::{Architecture, LinkId, PeId};

use super::wormhole::{simulate_ideal, SimReport, WormholeParams};
use crate::error::Error;
use crate::mapping::Mapping;
use crate::perego::program::Program;

/// Parameters of the phase decomposition and of `F`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SpmParams {
    /// Two messages are in the same phase when they overlap for more than this fraction of
    /// the longer minimal latency. Default 0.5.
    pub overlap_fraction: f64,
    /// The machine: `T_c`, overheads, local copy cost (the ideal run uses the same values).
    pub machine: WormholeParams,
}

impl Default for SpmParams {
    fn default() -> Self {
        Self {
            overlap_fraction: 0.5,
            machine: WormholeParams::default(),
        }
    }
}

/// One channel `src → dst` of the model.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct SpmChannel {
    pub src: u32,
    pub dst: u32,
    /// `m_ij`: messages sent.
    pub messages: u64,
    /// Total flits (`m_ij · l_ij`).
    pub flits: u64,
    /// `q_ij`: cycles the receiver waited for this channel on the ideal machine.
    pub wait: u64,
}

impl SpmChannel {
    /// The other end of the channel seen from task `t` (one of its ends), and whether the
    /// channel comes in to `t`.
    #[inline]
    pub fn other_end(&self, t: u32) -> (u32, bool) {
        if self.dst == t {
            (self.src, true)
        } else {
            (self.dst, false)
        }
    }

    /// `l_ij`: mean message length in flits.
    pub fn mean_flits(&self) -> f64 {
        self.flits as f64 / self.messages.max(1) as f64
    }
}

/// The Synchronous Phases Model of a program.
#[derive(Clone, Debug)]
pub struct SpmModel {
    params: SpmParams,
    /// `w_i`.
    pub work: Vec<u64>,
    /// `q_i`.
    pub wait: Vec<u64>,
    /// The channels, sorted by `(src, dst)`.
    pub channels: Vec<SpmChannel>,
    /// Phase `h` holds `phase_entries[phase_start[h]..phase_start[h+1]]`: (channel, flits
    /// of that channel in the phase).
    pub phase_start: Vec<u32>,
    pub phase_entries: Vec<(u32, u64)>,
    /// Per phase entry: the messages of the channel in the phase.
    pub entry_messages: Vec<u32>,
    /// Per phase entry: the slack of its messages on the ideal machine, summed, in cycles:
    /// how long before the receiver reached the matching `RECEIVE` each one had arrived
    /// (0 for a message the receiver waited for; `u64::MAX` when one is never received).
    pub entry_slack: Vec<u64>,
    /// Completion time on the ideal machine.
    pub ideal_completion: u64,
    /// Per message of the program: its phase entry (an index of `phase_entries`;
    /// `u32::MAX` for a message never delivered). Empty for a model without a program
    /// ([`Self::from_task_graph`]).
    pub msg_entry: Vec<u32>,
    /// Per message: its latency on the ideal machine (delivery − injection), cycles.
    pub msg_latency: Vec<u64>,
}

/// The value of `F` for one mapping.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FEstimate {
    /// `F(m) = max_n R(m, n)`, cycles.
    pub f: f64,
    /// `Σ_n R(m, n)`, cycles.
    pub f_sum: f64,
    /// The PE reaching the maximum.
    pub argmax: u32,
    /// The four terms summed over all PEs: compute and idle, distance, multitasking saving,
    /// contention.
    pub comp_idle: f64,
    pub distance: f64,
    pub multitasking: f64,
    pub contention: f64,
    /// Part of `multitasking` that is not eq. 5: the delay of remote messages (distance and
    /// contention) absorbed by the receivers' slack ([`SpmModel::evaluate`] only; 0 in
    /// [`SpmModel::evaluate_partial`]).
    pub slack: f64,
    /// `R(m, n)` per PE.
    pub per_pe: Vec<f64>,
}

/// Reusable buffers of [`SpmModel::evaluate_partial_with`].
#[derive(Clone, Debug, Default)]
pub struct PartialScratch {
    r: Vec<f64>,
    route_start: Vec<u32>,
    routes: Vec<LinkId>,
    stamp: Vec<u32>,
    owner: Vec<u32>,
    epoch: u32,
    uf: UnionFind,
    size: Vec<u32>,
    vol: Vec<u64>,
}

impl PartialScratch {
    /// `R(m, n)` per PE of the last evaluation.
    pub fn per_pe(&self) -> &[f64] {
        &self.r
    }

    /// Directed links crossed by the routes of the last evaluation (with repeats).
    pub fn route_links(&self) -> usize {
        self.routes.len()
    }
}

impl SpmModel {
    /// Runs the program on the ideal machine and derives the model. Errors if the program
    /// deadlocks (it cannot: [`Program`] construction checks it).
    pub fn build(program: &Program, params: &SpmParams) -> Result<Self, Error> {
        if !(0.0..=1.0).contains(&params.overlap_fraction) {
            return Err(Error::Config(format!(
                "overlap_fraction must be in 0..=1, got {}",
                params.overlap_fraction
            )));
        }
        let mut mp = params.machine.clone();
        mp.record_messages = true;
        let ideal = simulate_ideal(program, &mp)?;
        Ok(Self::from_ideal(program, &ideal, params))
    }

    /// Derives the model from an ideal-machine run made with `record_messages`.
    pub fn from_ideal(program: &Program, ideal: &SimReport, params: &SpmParams) -> Self {
        let times = ideal
            .messages
            .as_ref()
            .expect("the ideal run must record messages");
        let msgs = program.messages();
        let mut chan_of_msg = vec![0u32; msgs.len()];
        let mut channels = Vec::with_capacity(program.channels().len());
        for (ci, c) in program.channels().iter().enumerate() {
            let mut ch = SpmChannel {
                src: c.src,
                dst: c.dst,
                messages: u64::from(c.count),
                flits: 0,
                wait: 0,
            };
            for m in c.first_msg..c.first_msg + c.count {
                chan_of_msg[m as usize] = ci as u32;
                ch.flits += u64::from(msgs[m as usize].flits);
                ch.wait += times[m as usize].wait;
            }
            channels.push(ch);
        }
        let slack = message_slack(program, times, &params.machine);
        // Phases: sweep the messages in injection order; union overlapping ones.
        let tc = params.machine.flit_cycles;
        let mut order: Vec<u32> = (0..msgs.len() as u32)
            .filter(|&m| times[m as usize].deliver != u64::MAX)
            .collect();
        order.sort_unstable_by_key(|&m| (times[m as usize].inject, m));
        let mut uf = UnionFind::new(msgs.len());
        union_overlapping(&order, times, msgs, tc, params.overlap_fraction, &mut uf);
        // Number phases by their first message in time.
        let mut phase_of_root = vec![u32::MAX; msgs.len()];
        let mut nphases = 0u32;
        let mut phase_of_msg = vec![u32::MAX; msgs.len()];
        for &m in &order {
            let r = uf.find(m) as usize;
            if phase_of_root[r] == u32::MAX {
                phase_of_root[r] = nphases;
                nphases += 1;
            }
            phase_of_msg[m as usize] = phase_of_root[r];
        }
        // (phase, channel, message), aggregated per (phase, channel).
        let mut triples: Vec<(u32, u32, u32)> = order
            .iter()
            .map(|&m| (phase_of_msg[m as usize], chan_of_msg[m as usize], m))
            .collect();
        triples.sort_unstable_by_key(|&(h, c, _)| (h, c));
        let mut phase_start = vec![0u32];
        let mut phase_entries: Vec<(u32, u64)> = Vec::new();
        let mut entry_messages: Vec<u32> = Vec::new();
        let mut entry_slack: Vec<u64> = Vec::new();
        let mut cur = (u32::MAX, u32::MAX);
        let mut msg_entry = vec![u32::MAX; msgs.len()];
        for (h, c, m) in triples {
            let f = u64::from(msgs[m as usize].flits);
            msg_entry[m as usize] = if (h, c) == cur {
                phase_entries.len() as u32 - 1
            } else {
                phase_entries.len() as u32
            };
            if (h, c) == cur {
                phase_entries.last_mut().expect("an entry").1 += f;
                *entry_messages.last_mut().expect("an entry") += 1;
                let sl = entry_slack.last_mut().expect("an entry");
                *sl = sl.saturating_add(slack[m as usize]);
                continue;
            }
            while phase_start.len() <= h as usize {
                phase_start.push(phase_entries.len() as u32);
            }
            cur = (h, c);
            phase_entries.push((c, f));
            entry_messages.push(1);
            entry_slack.push(slack[m as usize]);
        }
        phase_start.push(phase_entries.len() as u32);
        let n = program.num_tasks();
        SpmModel {
            params: params.clone(),
            work: ideal.pe_busy[..n].to_vec(),
            wait: ideal.task_wait.clone(),
            channels,
            phase_start,
            phase_entries,
            entry_messages,
            entry_slack,
            ideal_completion: ideal.completion,
            msg_entry,
            msg_latency: times
                .iter()
                .map(|t| match t.deliver {
                    u64::MAX => 0,
                    d => d.saturating_sub(t.inject),
                })
                .collect(),
        }
    }

    /// `P`, the number of phases.
    pub fn num_phases(&self) -> usize {
        self.phase_start.len() - 1
    }

    /// The parameters the model was built with.
    pub fn params(&self) -> &SpmParams {
        &self.params
    }

    /// `F` and its terms for `mapping` on `arch` (which needs routes), as an estimate of the
    /// completion time: eq. 2-10 where the delay a remote message gets from the mapping
    /// (distance and contention, `δ`) only counts beyond its slack on the ideal machine,
    /// `max(0, δ − slack)` per phase entry (the case analysis of eq. 5 applied to a slower
    /// message instead of a faster one). The absorbed part is in `slack` and, as a saving,
    /// in `multitasking`.
    pub fn evaluate(&self, arch: &dyn Architecture, mapping: &Mapping) -> Result<FEstimate, Error> {
        let pes = super::routed_mapping(self.work.len(), arch, mapping, "F")?;
        let mut sc = PartialScratch::default();
        let mut est = self.evaluate_inner(arch, &pes, &mut sc, true);
        est.per_pe = sc.r;
        Ok(est)
    }

    /// The paper's `F` (eq. 2-10, without the slack absorption of [`Self::evaluate`]) of a
    /// complete mapping, checked as [`Self::evaluate`] checks it.
    pub fn evaluate_paper(
        &self,
        arch: &dyn Architecture,
        mapping: &Mapping,
    ) -> Result<FEstimate, Error> {
        let pes = super::routed_mapping(self.work.len(), arch, mapping, "F")?;
        Ok(self.evaluate_partial(arch, &pes))
    }

    /// The paper's `F` (eq. 2-10, without the slack absorption of [`Self::evaluate`]) for a
    /// partial mapping: `pes[t]` is the PE of task `t` or `u32::MAX` when `t` is not mapped
    /// yet; unmapped tasks and the channels touching them count for nothing (the paper's F
    /// over partial mappings, §2). This is what the greedy mapper minimises and what
    /// [`super::f::IncrementalF`] maintains (absorption is not linear in
    /// the contention shares, so `F_sum` would lose its closed-form update). `arch` must
    /// have routes and every mapped PE must exist (callers check).
    pub fn evaluate_partial(&self, arch: &dyn Architecture, pes: &[u32]) -> FEstimate {
        let mut sc = PartialScratch::default();
        let mut est = self.evaluate_partial_with(arch, pes, &mut sc);
        est.per_pe = sc.r;
        est
    }

    /// [`Self::evaluate_partial`] with reused buffers (for callers that evaluate many
    /// mappings on one target): the same values, except that `per_pe` is left empty (the
    /// values per PE are in [`PartialScratch::per_pe`]). After the first call it allocates
    /// nothing and costs O(T + k + Σ route lengths + entries·α), independent of the number
    /// of links.
    pub fn evaluate_partial_with(
        &self,
        arch: &dyn Architecture,
        pes: &[u32],
        sc: &mut PartialScratch,
    ) -> FEstimate {
        self.evaluate_inner(arch, pes, sc, false)
    }

    /// Eq. 2-10 on a partial mapping; with `absorb`, the delay of every remote phase entry
    /// counts only beyond its slack (see [`Self::evaluate`]).
    fn evaluate_inner(
        &self,
        arch: &dyn Architecture,
        pes: &[u32],
        sc: &mut PartialScratch,
        absorb: bool,
    ) -> FEstimate {
        let n = self.work.len();
        let k = arch.pe_count();
        let unmapped = u32::MAX;
        let tc = self.params.machine.flit_cycles as f64;
        let r = &mut sc.r;
        r.clear();
        r.resize(k as usize, 0.0);
        let mut est = FEstimate {
            f: 0.0,
            f_sum: 0.0,
            argmax: 0,
            comp_idle: 0.0,
            distance: 0.0,
            multitasking: 0.0,
            contention: 0.0,
            slack: 0.0,
            per_pe: Vec::new(),
        };
        for j in 0..n {
            if pes[j] == unmapped {
                continue;
            }
            let v = (self.work[j] + self.wait[j]) as f64;
            r[pes[j] as usize] += v;
            est.comp_idle += v;
        }
        // Routes of the remote channels (CSR), distance and multitasking terms.
        self.channel_routes(arch, pes, &mut sc.route_start, &mut sc.routes);
        let (route_start, routes) = (&sc.route_start, &sc.routes);
        for (ci, c) in self.channels.iter().enumerate() {
            let (pi, pj) = (pes[c.src as usize], pes[c.dst as usize]);
            if pi == unmapped || pj == unmapped {
                // no route: the channel is ignored
            } else if pi != pj {
                let d = (route_start[ci + 1] - route_start[ci]) as f64;
                let v = c.messages as f64 * tc * (d - 1.0);
                r[pj as usize] += v;
                est.distance += v;
            } else {
                let save = self.local_saving(c);
                r[pj as usize] -= save;
                est.multitasking += save;
            }
        }
        // Contention, phase by phase. A link's stamp is the epoch of the phase that last
        // used it (epochs run on across calls, so the table is never cleared).
        let links = super::routes(arch).link_count() as usize;
        if sc.stamp.len() != links {
            sc.stamp.clear();
            sc.stamp.resize(links, 0);
            sc.owner.clear();
            sc.owner.resize(links, 0);
            sc.epoch = 0;
        }
        let (stamp, owner, uf) = (&mut sc.stamp, &mut sc.owner, &mut sc.uf);
        let (size, vol) = (&mut sc.size, &mut sc.vol);
        for h in 0..self.num_phases() {
            if sc.epoch == u32::MAX {
                stamp.iter_mut().for_each(|x| *x = 0);
                sc.epoch = 0;
            }
            sc.epoch += 1;
            let epoch = sc.epoch;
            let entries =
                &self.phase_entries[self.phase_start[h] as usize..self.phase_start[h + 1] as usize];
            uf.reset(entries.len());
            for (e, &(c, _)) in entries.iter().enumerate() {
                let c = c as usize;
                for &l in &routes[route_start[c] as usize..route_start[c + 1] as usize] {
                    let l = l as usize;
                    if stamp[l] == epoch {
                        uf.union(owner[l], e as u32);
                    } else {
                        stamp[l] = epoch;
                        owner[l] = e as u32;
                    }
                }
            }
            size.clear();
            size.resize(entries.len(), 0);
            vol.clear();
            vol.resize(entries.len(), 0);
            for (e, &(c, f)) in entries.iter().enumerate() {
                if route_start[c as usize] == route_start[c as usize + 1] {
                    continue; // local channel: no path
                }
                let root = uf.find(e as u32) as usize;
                size[root] += 1;
                vol[root] += f;
            }
            let base = self.phase_start[h] as usize;
            for (e, &(c, f)) in entries.iter().enumerate() {
                let (lo, hi) = (route_start[c as usize], route_start[c as usize + 1]);
                if lo == hi {
                    continue;
                }
                let root = uf.find(e as u32) as usize;
                let v = if size[root] < 2 {
                    0.0
                } else {
                    tc * (vol[root] - f) as f64 / (2.0 * size[root] as f64)
                };
                let recv = pes[self.channels[c as usize].dst as usize] as usize;
                r[recv] += v;
                est.contention += v;
                if absorb {
                    // δ of the entry: its messages' distance overhead and its share.
                    let hops = f64::from(hi - lo);
                    let delay = f64::from(self.entry_messages[base + e]) * tc * (hops - 1.0) + v;
                    let a = delay.min(self.entry_slack[base + e] as f64);
                    r[recv] -= a;
                    est.multitasking += a;
                    est.slack += a;
                }
            }
        }
        let mut best = 0usize;
        for (p, &v) in r.iter().enumerate() {
            est.f_sum += v;
            if v > r[best] {
                best = p;
            }
        }
        est.f = r[best];
        est.argmax = best as u32;
        est
    }

    /// The routes of the remote channels as CSR (`routes[route_start[c]..route_start[c+1]]`
    /// for channel `c`; empty for a local channel or one with an unmapped end, `u32::MAX`
    /// in `pes`).
    pub(crate) fn channel_routes(
        &self,
        arch: &dyn Architecture,
        pes: &[u32],
        route_start: &mut Vec<u32>,
        routes: &mut Vec<LinkId>,
    ) {
        route_start.clear();
        route_start.resize(self.channels.len() + 1, 0);
        routes.clear();
        let routing = arch.routing();
        for (ci, c) in self.channels.iter().enumerate() {
            let (pi, pj) = (pes[c.src as usize], pes[c.dst as usize]);
            if pi != u32::MAX && pj != u32::MAX && pi != pj {
                routing
                    .expect("a target with routes (check_routed_target)")
                    .route(PeId(pi), PeId(pj), routes);
            }
            route_start[ci + 1] = routes.len() as u32;
        }
    }

    /// Eq. 5 for one channel whose two ends share a PE: the cycles its receiver saves,
    /// `min(m_ij · l_ij · (T_c − c_loc), q_ij)`, at least 0.
    #[inline]
    pub fn local_saving(&self, c: &SpmChannel) -> f64 {
        let m = &self.params.machine;
        let (tc, cloc) = (m.flit_cycles as f64, m.local_cycles_per_flit as f64);
        (c.flits as f64 * (tc - cloc)).min(c.wait as f64).max(0.0)
    }

    /// A degenerate model of a static task graph, for mapping graphs without a program:
    /// `w_i` = vertex weight 0, no waiting, one message per edge and direction of
    /// `edge_weight / 2` flits (at least 1), all channels in one phase.
    pub fn from_task_graph(graph: &taskmap_graph::TaskGraph, params: &SpmParams) -> Self {
        let n = graph.num_tasks();
        let mut channels = Vec::new();
        for u in 0..n as u32 {
            for (&v, &w) in graph.neighbors(u).iter().zip(graph.edge_weights(u)) {
                channels.push(SpmChannel {
                    src: u,
                    dst: v,
                    messages: 1,
                    flits: (w / 2).max(1),
                    wait: 0,
                });
            }
        }
        channels.sort_unstable_by_key(|c| (c.src, c.dst));
        let phase_entries: Vec<(u32, u64)> = channels
            .iter()
            .enumerate()
            .map(|(i, c)| (i as u32, c.flits))
            .collect();
        SpmModel {
            params: params.clone(),
            work: (0..n as u32).map(|t| graph.vertex_weight(t, 0)).collect(),
            wait: vec![0; n],
            channels,
            phase_start: vec![0, phase_entries.len() as u32],
            entry_messages: vec![1; phase_entries.len()],
            entry_slack: vec![0; phase_entries.len()],
            phase_entries,
            ideal_completion: 0,
            msg_entry: Vec::new(),
            msg_latency: Vec::new(),
        }
    }
}

/// Per message, its slack on the ideal machine in cycles: how long before its receiver
/// reached the matching `RECEIVE` it had been delivered (0 when the receiver waited for it,
/// `u64::MAX` when nobody receives it). Replays every task alone on its PE, as the ideal
/// machine runs it, in O(instructions).
fn message_slack(
    program: &Program,
    times: &[super::wormhole::MessageTimes],
    machine: &WormholeParams,
) -> Vec<u64> {
    use crate::perego::program::Op;
    let mut slack = vec![u64::MAX; program.messages().len()];
    let msg_of_op = program.msg_of_op();
    for t in 0..program.num_tasks() as u32 {
        let base = program.op_start(t) as usize;
        let mut now = 0u64;
        for (k, op) in program.task_ops(t).iter().enumerate() {
            match *op {
                Op::Compute(c) => now = now.saturating_add(u64::from(c)),
                Op::Send { .. } => now = now.saturating_add(machine.send_overhead),
                Op::Recv { .. } => {
                    let m = msg_of_op[base + k] as usize;
                    let d = times[m].deliver;
                    debug_assert_eq!(times[m].wait, d.saturating_sub(now));
                    slack[m] = now.saturating_sub(d);
                    now = now.max(d).saturating_add(machine.recv_overhead);
                }
            }
        }
    }
    slack
}

/// Joins `a` and `b` (messages in `order`, which is sorted by injection time) whenever `a`
/// comes first, is still in the network when `b` is injected, and their network intervals
/// overlap for more than `phi` times the longer of their minimal latencies.
///
/// The messages still in the network are kept per class (a circular doubly-linked list at
/// each union-find root, newest first, expired messages unlinked at once), so `b` is
/// tested against the members of each other class only until one qualifies: the classes
/// are those of testing every pair, in O(M log M + Σ tested pairs) instead of O(M·A).
fn union_overlapping(
    order: &[u32],
    times: &[super::wormhole::MessageTimes],
    msgs: &[crate::perego::program::Message],
    tc: u64,
    phi: f64,
    uf: &mut UnionFind,
) {
    const NONE: u32 = u32::MAX;
    let n = msgs.len();
    let mut next = vec![NONE; n];
    let mut prev = vec![NONE; n];
    let mut head = vec![NONE; n];
    let mut alive = vec![0u32; n];
    let mut live: Vec<u32> = Vec::new();
    let mut scratch: Vec<u32> = Vec::new();
    let mut expiry: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u32)>> =
        std::collections::BinaryHeap::new();
    let lat = |m: u32| tc * u64::from(msgs[m as usize].flits);
    for &b in order {
        let tb = times[b as usize];
        // Messages delivered by now leave the network (and their class's list).
        while let Some(&std::cmp::Reverse((d, m))) = expiry.peek() {
            if d > tb.inject {
                break;
            }
            expiry.pop();
            let r = uf.find(m) as usize;
            alive[r] -= 1;
            if alive[r] == 0 {
                head[r] = NONE;
            } else {
                let (p, q) = (prev[m as usize], next[m as usize]);
                next[p as usize] = q;
                prev[q as usize] = p;
                if head[r] == m {
                    head[r] = q;
                }
            }
        }
        let lat_b = lat(b);
        // Every live class with a member that overlaps b enough joins b's class.
        scratch.clear();
        std::mem::swap(&mut scratch, &mut live);
        for &r in &scratch {
            if uf.find(r) != r || alive[r as usize] == 0 || head[r as usize] == NONE {
                continue;
            }
            if uf.find(b) == r {
                continue;
            }
            let h = head[r as usize];
            let mut a = h;
            let mut hit = false;
            loop {
                let ta = times[a as usize];
                let overlap = ta.deliver.min(tb.deliver) - tb.inject;
                if overlap as f64 > phi * lat(a).max(lat_b) as f64 {
                    hit = true;
                    break;
                }
                a = next[a as usize];
                if a == h {
                    break;
                }
            }
            if !hit {
                live.push(r);
                continue;
            }
            let rb = uf.find(b);
            uf.union(r, rb);
            let root = uf.find(r);
            let other = if root == r { rb } else { r };
            // Splice the two circular lists at the new root.
            let (ha, hb) = (head[root as usize], head[other as usize]);
            let merged = match (ha, hb) {
                (NONE, x) | (x, NONE) => x,
                (ha, hb) => {
                    let (la, lb) = (prev[ha as usize], prev[hb as usize]);
                    next[la as usize] = hb;
                    prev[hb as usize] = la;
                    next[lb as usize] = ha;
                    prev[ha as usize] = lb;
                    ha
                }
            };
            alive[root as usize] += alive[other as usize];
            alive[other as usize] = 0;
            head[other as usize] = NONE;
            head[root as usize] = merged;
        }
        // b joins its class's list as the newest member.
        let r = uf.find(b) as usize;
        match head[r] {
            NONE => {
                next[b as usize] = b;
                prev[b as usize] = b;
            }
            h => {
                let l = prev[h as usize];
                next[l as usize] = b;
                prev[b as usize] = l;
                next[b as usize] = h;
                prev[h as usize] = b;
            }
        }
        head[r] = b;
        alive[r] += 1;
        // b's class is new or made of classes just taken out of `live`.
        live.push(r as u32);
        expiry.push(std::cmp::Reverse((tb.deliver, b)));
    }
}

/// The root of `x` in the union-find forest `parent`, with path halving (shared by
/// [`UnionFind`] and the incremental F's classes).
pub(crate) fn find_root(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let p = parent[x as usize];
        parent[x as usize] = parent[p as usize];
        x = p;
    }
    x
}

/// Union-find with path halving and union by size.
#[derive(Clone, Debug, Default)]
struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        Self {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    fn reset(&mut self, n: usize) {
        self.parent.clear();
        self.parent.extend(0..n as u32);
        self.size.clear();
        self.size.resize(n, 1);
    }

    fn find(&mut self, x: u32) -> u32 {
        find_root(&mut self.parent, x)
    }

    fn union(&mut self, a: u32, b: u32) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        if self.size[a as usize] < self.size[b as usize] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b as usize] = a;
        self.size[a as usize] += self.size[b as usize];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perego::gen::generate_program;

    /// The classes of [`union_overlapping`] equal those of testing every pair of messages
    /// in the network at the same time (the definition).
    #[test]
    fn phase_sweep_equals_all_pairs() {
        let specs = [
            "random:60,seed=1",
            "random:120,seed=2,flits=8",
            "random:40,seed=3,flits=128,rounds=6",
            "mesh:6x7",
            "ring:30,rounds=7",
            "butterfly:5",
            "tree:40",
        ];
        for spec in specs {
            let prog = generate_program(spec).unwrap();
            for phi in [0.0, 0.25, 0.5, 0.75, 1.0] {
                let mp = WormholeParams {
                    record_messages: true,
                    ..WormholeParams::default()
                };
                let ideal = simulate_ideal(&prog, &mp).unwrap();
                let times = ideal.messages.as_ref().unwrap();
                let msgs = prog.messages();
                let mut order: Vec<u32> = (0..msgs.len() as u32)
                    .filter(|&m| times[m as usize].deliver != u64::MAX)
                    .collect();
                order.sort_unstable_by_key(|&m| (times[m as usize].inject, m));
                let tc = mp.flit_cycles;
                let mut fast = UnionFind::new(msgs.len());
                union_overlapping(&order, times, msgs, tc, phi, &mut fast);
                let mut naive = UnionFind::new(msgs.len());
                let mut active: Vec<u32> = Vec::new();
                for &b in &order {
                    let tb = times[b as usize];
                    let lat_b = tc * u64::from(msgs[b as usize].flits);
                    active.retain(|&a| times[a as usize].deliver > tb.inject);
                    for &a in &active {
                        let ta = times[a as usize];
                        let overlap = ta.deliver.min(tb.deliver) - tb.inject;
                        let lat_a = tc * u64::from(msgs[a as usize].flits);
                        if overlap as f64 > phi * lat_a.max(lat_b) as f64 {
                            naive.union(a, b);
                        }
                    }
                    active.push(b);
                }
                let mut classes = 0;
                for &a in &order {
                    for &b in &order {
                        assert_eq!(
                            fast.find(a) == fast.find(b),
                            naive.find(a) == naive.find(b),
                            "{spec}, overlap fraction {phi}: messages {a} and {b}"
                        );
                    }
                    if naive.find(a) == a {
                        classes += 1;
                    }
                }
                assert!(classes > 0);
            }
        }
    }
}
