//! Discrete-event simulation of a [`Program`] under a [`Mapping`] on a k-ary n-cube with
//! wormhole flow control (De Petris & Perego 1994, §3.1), and on the ideal machine.
//!
//! # Machine model (all times in CPU cycles)
//!
//! * **Routes**: the architecture's deterministic dimension-order (e-cube) routes over
//!   directed links ([`taskmap_arch::Routing::route`], through `Architecture::routing`);
//!   meshes, tori and hypercubes have them.
//! * **Wormhole flow control**: a message of `L` flits is one packet; one flit per
//!   `flit_cycles` (`T_c`) per link, one packet per link at a time, a one-flit buffer at the
//!   end of every link. A blocked header keeps every link its worm still occupies; a freed
//!   link goes to the header that requested it first. Without contention the latency is
//!   `T_c·(L + d − 1)` (eq. 1 of the paper).
//! * **Processors**: `SEND` is busy `send_overhead` cycles, then the message enters the
//!   network and the task continues; `RECEIVE` waits until the message has been delivered,
//!   then is busy `recv_overhead` cycles; `INT_OP p` is busy `p` cycles. A PE runs one task
//!   at a time, from a ready queue ([`ReadyPolicy`]); switching tasks costs `switch_cycles`.
//!   Tasks on the same PE communicate through memory (`local_cycles_per_flit · L`).
//! * **Ideal machine** ([`simulate_ideal`]): every task on its own PE, fully connected, no
//!   contention, distance 1: every message takes `T_c · L`.
//! * **Tori** get two virtual channels per directed link by the dateline rule
//!   ([`WormholeParams::torus_virtual_channels`]), which makes dimension-order routing
//!   deadlock-free; without them a deadlock stops the simulation with a report of the
//!   blocked tasks and the stuck messages.
//!
//! The header's timing, arbitration, virtual channels and saturation in full:
//! `docs/simulation.md`, "The wormhole simulator".
//!
//! Complexity: O((ops + Σ hops) · log E) time, E the number of pending events (at most
//! PEs + messages in flight), O(T + M + links) memory (24 bytes per message): one event per
//! header hop, link releases in closed form, no event per flit.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use taskmap_arch::{Architecture, LinkId, PeId, Routing};

use crate::error::Error;
use crate::mapper::{NoProgress, Progress};
use crate::mapping::Mapping;
use crate::perego::program::{Op, Program, NONE};

/// Which ready task a PE runs next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadyPolicy {
    /// First come, first served; a task runs until it blocks on a `RECEIVE` or stops.
    #[default]
    Fifo,
    /// As `Fifo`, but a running task goes to the back of the queue after every
    /// instruction.
    RoundRobin,
    /// The ready task with the smallest id; a task runs until it blocks or stops.
    LowestId,
}

impl std::str::FromStr for ReadyPolicy {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "fifo" => Ok(Self::Fifo),
            "round-robin" | "rr" => Ok(Self::RoundRobin),
            "lowest-id" => Ok(Self::LowestId),
            _ => Err(Error::Config(format!(
                "unknown ready policy \"{s}\" (fifo, round-robin, lowest-id)"
            ))),
        }
    }
}

/// The most cycles a timing parameter of [`WormholeParams`] may take (2^32), so that
/// simulated times (sums and products of these with 32-bit instruction arguments) stay far
/// from overflow; the simulator also saturates.
pub const MAX_PARAM_CYCLES: u64 = 1 << 32;

/// Parameters of the machine. Times in CPU cycles.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WormholeParams {
    /// `T_c`: cycles for one flit to cross one link. Default 1.
    pub flit_cycles: u64,
    /// Cycles a task is busy for a `SEND` (any length, any destination). Default 10.
    pub send_overhead: u64,
    /// Cycles a task is busy for a `RECEIVE` once the message is there. Default 10.
    pub recv_overhead: u64,
    /// Cycles per flit of a message between two tasks of the same PE (memory copy).
    /// Default 0, the paper's assumption.
    pub local_cycles_per_flit: u64,
    /// Cycles a PE spends switching to another task than the one it ran last. Default 0.
    pub switch_cycles: u64,
    /// Ready-queue policy of every PE. Default [`ReadyPolicy::Fifo`].
    pub ready_policy: ReadyPolicy,
    /// Keep per-message times in the report ([`SimReport::messages`]). Default false.
    pub record_messages: bool,
    /// On tori, give every directed link two virtual channels used by the dateline rule
    /// (Dally & Seitz): a packet travels on channel 0 in a dimension until it crosses that
    /// dimension's wrap-around link, on channel 1 from there until it turns into the next
    /// dimension. This makes dimension-order wormhole routing on tori deadlock-free. The
    /// two channels of a link are independent resources (their sharing of the link's
    /// bandwidth is not modelled). Default true; false simulates tori without virtual
    /// channels, which can deadlock (reported as an error).
    #[serde(default = "yes")]
    pub torus_virtual_channels: bool,
}

fn yes() -> bool {
    true
}

impl Default for WormholeParams {
    fn default() -> Self {
        Self {
            flit_cycles: 1,
            send_overhead: 10,
            recv_overhead: 10,
            local_cycles_per_flit: 0,
            switch_cycles: 0,
            ready_policy: ReadyPolicy::Fifo,
            record_messages: false,
            torus_virtual_channels: true,
        }
    }
}

/// Times of one message, in cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MessageTimes {
    /// The message entered the network (end of the send overhead).
    pub inject: u64,
    /// Its tail arrived at the destination.
    pub deliver: u64,
    /// How long the receiver waited at its `RECEIVE` for it (0 when it was already there
    /// or never received).
    pub wait: u64,
}

/// Summary statistics of a set of values.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Stats {
    pub count: u64,
    pub min: u64,
    pub mean: f64,
    pub max: u64,
}

impl Stats {
    fn of(values: impl Iterator<Item = u64>) -> Self {
        let mut s = Stats {
            count: 0,
            min: u64::MAX,
            mean: 0.0,
            max: 0,
        };
        let mut sum = 0u128;
        for v in values {
            s.count += 1;
            s.min = s.min.min(v);
            s.max = s.max.max(v);
            sum += u128::from(v);
        }
        if s.count == 0 {
            s.min = 0;
        } else {
            s.mean = sum as f64 / s.count as f64;
        }
        s
    }
}

/// What a simulation measured. Times in cycles.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SimReport {
    /// When the last task executed `STOP`.
    pub completion: u64,
    /// Per task: when it stopped.
    pub task_finish: Vec<u64>,
    /// Per task: total cycles spent blocked in `RECEIVE`.
    pub task_wait: Vec<u64>,
    /// Per PE: cycles spent executing instructions (overheads and switches included).
    pub pe_busy: Vec<u64>,
    /// Per PE: `completion − busy`.
    pub pe_idle: Vec<u64>,
    /// Per directed link: cycles it was held by a packet (header acquired to tail left).
    /// Empty on the ideal machine.
    pub link_busy: Vec<u64>,
    /// Per directed link: flits that crossed it.
    pub link_flits: Vec<u64>,
    /// Mean and largest `link_busy / completion` over the physical links.
    pub link_utilisation_mean: f64,
    pub link_utilisation_max: f64,
    /// Messages that crossed the network.
    pub network_messages: u64,
    /// Messages between tasks of the same PE.
    pub local_messages: u64,
    /// Latency (inject → deliver) of the network messages.
    pub latency: Stats,
    /// Latency without contention, `T_c·(L + d − 1)`, summed over network messages, for
    /// comparison with the measured sum `latency.mean · latency.count`.
    pub contention_free_latency_sum: u64,
    /// Events processed.
    pub events: u64,
    /// Per message times, when [`WormholeParams::record_messages`] was set.
    #[serde(skip)]
    pub messages: Option<Vec<MessageTimes>>,
}

/// Simulates `program` under `mapping` on `arch` (which must have routes). Errors when the
/// inputs do not fit together, when the target has no routes, and when the run deadlocks
/// (only possible on a torus without virtual channels).
///
/// ```
/// use taskmap::perego::gen::{ring, GenParams};
/// use taskmap::perego::wormhole::{simulate, WormholeParams};
/// use taskmap::{Mapping, PeId};
/// let prog = ring(16, &GenParams::default());
/// let arch = taskmap::parse_arch("torus:16").unwrap();
/// let mapping = Mapping::new((0..16).map(PeId).collect());
/// let r = simulate(&prog, arch.as_ref(), &mapping, &WormholeParams::default()).unwrap();
/// assert_eq!(r.latency.max, 32); // one hop, 32 flits: no contention
/// ```
pub fn simulate(
    program: &Program,
    arch: &dyn Architecture,
    mapping: &Mapping,
    params: &WormholeParams,
) -> Result<SimReport, Error> {
    simulate_observed(program, Some((arch, mapping)), params, &NoProgress)
}

/// Simulates `program` on the ideal machine: every task on its own PE, fully connected, no
/// contention, every message `T_c · L` cycles.
pub fn simulate_ideal(program: &Program, params: &WormholeParams) -> Result<SimReport, Error> {
    simulate_observed(program, None, params, &NoProgress)
}

/// A lower bound on the completion time [`simulate`] gives under any mapping onto a target
/// of `pes` PEs, the larger of two:
/// - the critical path: [`simulate_ideal`] with every message at the cheapest rate per flit
///   (the least of `flit_cycles` and `local_cycles_per_flit`); a real run can only add to
///   it, as hops and contention lengthen messages, tasks sharing a PE wait for it, and
///   switches cost time;
/// - the work: every PE runs one task at a time, so the cycles the tasks keep a PE busy
///   (`INT_OP` cycles, and the overheads of each `SEND` and `RECEIVE`), shared evenly.
pub fn completion_lower_bound(
    program: &Program,
    params: &WormholeParams,
    pes: u32,
) -> Result<u64, Error> {
    let cheapest = WormholeParams {
        flit_cycles: params.flit_cycles.min(params.local_cycles_per_flit),
        ..params.clone()
    };
    let path = simulate_ideal(program, &cheapest)?.completion;
    let busy: u128 = program
        .ops()
        .iter()
        .map(|op| match *op {
            Op::Compute(c) => u128::from(c),
            Op::Send { .. } => u128::from(params.send_overhead),
            Op::Recv { .. } => u128::from(params.recv_overhead),
        })
        .sum();
    let work = busy.div_ceil(u128::from(pes.max(1)));
    Ok(path.max(u64::try_from(work).unwrap_or(u64::MAX)))
}

/// [`simulate`] with a target and a mapping, else [`simulate_ideal`]; `progress` is told
/// of the messages delivered, every 4,096 of them.
pub fn simulate_observed(
    program: &Program,
    target: Option<(&dyn Architecture, &Mapping)>,
    params: &WormholeParams,
    progress: &dyn Progress,
) -> Result<SimReport, Error> {
    let n = program.num_tasks();
    let sim = match target {
        Some((arch, mapping)) => {
            let pe_of = super::routed_mapping(n, arch, mapping, "the wormhole simulator")?;
            Sim::new(program, Some(arch), pe_of, arch.pe_count() as usize, params)
        }
        None => Sim::new(program, None, (0..n as u32).collect(), n, params),
    };
    sim.run(progress)
}

/// Latest representable time: sums saturate here, below the `u64::MAX` sentinels.
const T_MAX: u64 = u64::MAX - 1;

/// `a + b`, saturating at [`T_MAX`].
#[inline]
fn tadd(a: u64, b: u64) -> u64 {
    a.saturating_add(b).min(T_MAX)
}

/// `a · b`, saturating at [`T_MAX`].
#[inline]
fn tmul(a: u64, b: u64) -> u64 {
    a.saturating_mul(b).min(T_MAX)
}

/// `Sim::running` of a PE that spends a task switch with no task to run after it.
const SWITCHING: u32 = NONE - 1;

#[derive(PartialEq, Eq)]
struct Ev {
    time: u64,
    seq: u64,
    kind: EvKind,
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum EvKind {
    /// The running task of a PE finished its instruction.
    PeStep(u32),
    /// A message enters the network.
    Inject(u32),
    /// The header of a flight (slot) requests the next link.
    Header(u32),
    /// A message's tail arrived.
    Deliver(u32),
}

impl Ord for Ev {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}
impl PartialOrd for Ev {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

struct Flight {
    msg: u32,
    /// Index of the link the header holds last / requests next.
    hop: u32,
    route: Vec<LinkId>,
}

enum Action {
    Acquire(u32, u64),
    Release(LinkId, u64),
}

struct Sim<'a> {
    prog: &'a Program,
    /// The target's routes; `None`: the ideal machine.
    routes: Option<&'a dyn Routing>,
    p: &'a WormholeParams,
    pe_of: Vec<u32>,
    // events
    heap: BinaryHeap<Ev>,
    seq: u64,
    events: u64,
    // tasks
    pc: Vec<u32>,
    blocked_since: Vec<u64>, // u64::MAX when not blocked
    finish: Vec<u64>,
    task_wait: Vec<u64>,
    // PEs
    running: Vec<u32>,
    last_task: Vec<u32>,
    queue: Vec<VecDeque<u32>>,
    busy: Vec<u64>,
    // messages
    inject: Vec<u64>,
    deliver: Vec<u64>, // u64::MAX until delivered
    wait: Vec<u64>,
    // network
    flights: Vec<Flight>,
    free_flights: Vec<u32>,
    /// Per physical link on a torus with virtual channels: (dimension, wrap-around link).
    vc_info: Option<Vec<(u32, bool)>>,
    /// Resources per physical link (2 with virtual channels, else 1).
    vcs: usize,
    /// Per resource (link × virtual channel) from here on.
    link_until: Vec<u64>, // u64::MAX while held with unknown release
    link_acq: Vec<u64>,
    link_wait: Vec<VecDeque<u32>>,
    link_busy: Vec<u64>,
    link_flits: Vec<u64>,
    actions: Vec<Action>,
    network_messages: u64,
    local_messages: u64,
    free_latency_sum: u64,
}

impl<'a> Sim<'a> {
    fn new(
        prog: &'a Program,
        arch: Option<&'a dyn Architecture>,
        pe_of: Vec<u32>,
        k: usize,
        p: &'a WormholeParams,
    ) -> Self {
        let n = prog.num_tasks();
        let m = prog.messages().len();
        let links = arch.map_or(0, |a| super::routes(a).link_count() as usize);
        let vc_info = match arch {
            Some(a) if a.name() == "torus" && p.torus_virtual_channels => {
                let spec = a.spec();
                let dims =
                    spec.split_once(':')
                        .map_or(1, |(_, d)| d.split('x').count().max(1)) as u32;
                Some(
                    (0..links as u32)
                        .map(|l| {
                            let dim = (l / 2) % dims;
                            let wrap = match super::routes(a).link_endpoints(l) {
                                Some((x, y)) => {
                                    (l % 2 == 0 && y.0 < x.0) || (l % 2 == 1 && y.0 > x.0)
                                }
                                None => false,
                            };
                            (dim, wrap)
                        })
                        .collect(),
                )
            }
            _ => None,
        };
        let vcs = if vc_info.is_some() { 2 } else { 1 };
        let res = links * vcs;
        Sim {
            prog,
            routes: arch.map(super::routes),
            p,
            pe_of,
            heap: BinaryHeap::new(),
            seq: 0,
            events: 0,
            pc: (0..n as u32).map(|t| prog.op_start(t)).collect(),
            blocked_since: vec![u64::MAX; n],
            finish: vec![0; n],
            task_wait: vec![0; n],
            running: vec![NONE; k],
            last_task: vec![NONE; k],
            queue: vec![VecDeque::new(); k],
            busy: vec![0; k],
            inject: vec![0; m],
            deliver: vec![u64::MAX; m],
            wait: vec![0; m],
            flights: Vec::new(),
            free_flights: Vec::new(),
            vc_info,
            vcs,
            link_until: vec![0; res],
            link_acq: vec![0; res],
            link_wait: vec![VecDeque::new(); res],
            link_busy: vec![0; res],
            link_flits: vec![0; res],
            actions: Vec::new(),
            network_messages: 0,
            local_messages: 0,
            free_latency_sum: 0,
        }
    }

    fn push(&mut self, time: u64, kind: EvKind) {
        self.seq += 1;
        self.heap.push(Ev {
            time,
            seq: self.seq,
            kind,
        });
    }

    fn run(mut self, progress: &dyn Progress) -> Result<SimReport, Error> {
        let n = self.prog.num_tasks();
        let (mut delivered, messages) = (0u64, self.prog.messages().len() as u64);
        for t in 0..n as u32 {
            let pe = self.pe_of[t as usize] as usize;
            self.queue[pe].push_back(t);
        }
        for pe in 0..self.running.len() as u32 {
            if !self.queue[pe as usize].is_empty() {
                self.run_pe(pe, 0);
            }
        }
        while let Some(ev) = self.heap.pop() {
            self.events += 1;
            let now = ev.time;
            match ev.kind {
                EvKind::PeStep(pe) => {
                    let t = self.running[pe as usize];
                    if t == SWITCHING {
                        self.running[pe as usize] = NONE;
                    } else if self.p.ready_policy == ReadyPolicy::RoundRobin {
                        self.running[pe as usize] = NONE;
                        self.queue[pe as usize].push_back(t);
                    }
                    self.run_pe(pe, now);
                }
                EvKind::Inject(m) => self.inject_msg(m, now),
                EvKind::Header(slot) => self.request(slot, now),
                EvKind::Deliver(m) => {
                    self.on_deliver(m, now);
                    delivered += 1;
                    if delivered % 4096 == 0 {
                        progress.step(delivered, messages);
                    }
                }
            }
        }
        self.finish_report()
    }

    /// Runs tasks on `pe` from `now` until one is busy or none is ready.
    fn run_pe(&mut self, pe: u32, now: u64) {
        let pei = pe as usize;
        loop {
            if self.running[pei] == NONE {
                let next = match self.p.ready_policy {
                    ReadyPolicy::LowestId => {
                        let q = &mut self.queue[pei];
                        let best = q.iter().enumerate().min_by_key(|(_, &t)| t).map(|(i, _)| i);
                        best.and_then(|i| q.remove(i))
                    }
                    _ => self.queue[pei].pop_front(),
                };
                match next {
                    Some(t) => self.running[pei] = t,
                    None => return,
                }
            }
            let t = self.running[pei];
            let mut extra = 0;
            if self.last_task[pei] != t {
                if self.last_task[pei] != NONE {
                    extra = self.p.switch_cycles;
                }
                self.last_task[pei] = t;
            }
            let opi = self.pc[t as usize];
            if opi == self.prog.op_start(t + 1) {
                self.finish[t as usize] = tadd(now, extra);
                self.busy[pei] = tadd(self.busy[pei], extra);
                self.running[pei] = NONE;
                if extra > 0 {
                    // The switch is PE time; the next task starts after it.
                    self.push_step_idle(pe, tadd(now, extra));
                    return;
                }
                continue;
            }
            let dur = match self.prog.ops()[opi as usize] {
                Op::Compute(c) => u64::from(c),
                Op::Send { .. } => {
                    let m = self.prog.msg_of_op()[opi as usize];
                    let at = tadd(tadd(now, extra), self.p.send_overhead);
                    self.push(at, EvKind::Inject(m));
                    self.p.send_overhead
                }
                Op::Recv { .. } => {
                    let m = self.prog.msg_of_op()[opi as usize];
                    if self.deliver[m as usize] == u64::MAX {
                        self.blocked_since[t as usize] = now;
                        self.running[pei] = NONE;
                        self.busy[pei] = tadd(self.busy[pei], extra);
                        if extra > 0 {
                            self.push_step_idle(pe, tadd(now, extra));
                            return;
                        }
                        continue;
                    }
                    self.p.recv_overhead
                }
            };
            self.pc[t as usize] += 1;
            let d = tadd(dur, extra);
            self.busy[pei] = tadd(self.busy[pei], d);
            if d == 0 && self.p.ready_policy != ReadyPolicy::RoundRobin {
                continue;
            }
            self.push(tadd(now, d), EvKind::PeStep(pe));
            return;
        }
    }

    /// The PE spent a switch on a task that then stopped or blocked: resume scheduling
    /// after it. Implemented as a step with no running task.
    fn push_step_idle(&mut self, pe: u32, at: u64) {
        // A PeStep with no running task just picks the next one. Mark the PE as running a
        // sentinel so that deliveries do not start it in the meantime.
        self.running[pe as usize] = SWITCHING;
        self.push(at, EvKind::PeStep(pe));
    }

    fn inject_msg(&mut self, m: u32, now: u64) {
        let msg = self.prog.messages()[m as usize];
        self.inject[m as usize] = now;
        let len = u64::from(msg.flits);
        let (sp, dp) = (self.pe_of[msg.src as usize], self.pe_of[msg.dst as usize]);
        let routes = match self.routes {
            None => {
                self.network_messages += 1;
                let lat = tmul(len, self.p.flit_cycles);
                self.free_latency_sum = tadd(self.free_latency_sum, lat);
                self.push(tadd(now, lat), EvKind::Deliver(m));
                return;
            }
            Some(a) => a,
        };
        if sp == dp {
            self.local_messages += 1;
            self.push(
                tadd(now, tmul(len, self.p.local_cycles_per_flit)),
                EvKind::Deliver(m),
            );
            return;
        }
        self.network_messages += 1;
        let slot = match self.free_flights.pop() {
            Some(s) => s,
            None => {
                self.flights.push(Flight {
                    msg: 0,
                    hop: 0,
                    route: Vec::new(),
                });
                (self.flights.len() - 1) as u32
            }
        };
        let f = &mut self.flights[slot as usize];
        f.msg = m;
        f.hop = 0;
        f.route.clear();
        routes.route(PeId(sp), PeId(dp), &mut f.route);
        if let Some(info) = &self.vc_info {
            // Links become resources link * 2 + virtual channel (dateline rule).
            let mut vc = 0;
            let mut dim = u32::MAX;
            for l in f.route.iter_mut() {
                let (d, wrap) = info[*l as usize];
                if d != dim {
                    dim = d;
                    vc = 0;
                }
                if wrap {
                    vc = 1;
                }
                *l = *l * 2 + vc;
            }
        }
        let d = f.route.len() as u64;
        debug_assert!(d >= 1);
        self.free_latency_sum = tadd(self.free_latency_sum, tmul(self.p.flit_cycles, len + d - 1));
        self.request(slot, now);
    }

    /// The header of `slot` requests link `hop` at `now`.
    fn request(&mut self, slot: u32, now: u64) {
        let f = &self.flights[slot as usize];
        let l = f.route[f.hop as usize] as usize;
        if self.link_wait[l].is_empty() && self.link_until[l] != u64::MAX {
            let a = now.max(self.link_until[l]);
            self.actions.push(Action::Acquire(slot, a));
            self.drain_actions();
        } else {
            self.link_wait[l].push_back(slot);
        }
    }

    fn drain_actions(&mut self) {
        let tc = self.p.flit_cycles;
        while let Some(act) = self.actions.pop() {
            match act {
                Action::Acquire(slot, a) => {
                    let f = &self.flights[slot as usize];
                    let hop = f.hop as usize;
                    let l = f.route[hop] as usize;
                    let d = f.route.len();
                    let msg = f.msg;
                    let len = self.prog.messages()[msg as usize].flits as usize;
                    self.link_until[l] = u64::MAX;
                    self.link_acq[l] = a;
                    self.link_flits[l] += len as u64;
                    // The tail leaves link hop-(L-1) when the header is one flit past hop.
                    if hop + 1 >= len {
                        let k = hop + 1 - len;
                        let lk = self.flights[slot as usize].route[k];
                        self.actions.push(Action::Release(lk, tadd(a, tc)));
                    }
                    if hop + 1 == d {
                        let first = (d + 1).saturating_sub(len);
                        for k in first..d {
                            let lk = self.flights[slot as usize].route[k];
                            let r = tadd(a, tmul((k + len + 1 - d) as u64, tc));
                            self.actions.push(Action::Release(lk, r));
                        }
                        self.push(tadd(a, tmul(len as u64, tc)), EvKind::Deliver(msg));
                        self.free_flights.push(slot);
                    } else {
                        self.flights[slot as usize].hop += 1;
                        self.push(tadd(a, tc), EvKind::Header(slot));
                    }
                }
                Action::Release(l, r) => {
                    let l = l as usize;
                    self.link_busy[l] = tadd(self.link_busy[l], r - self.link_acq[l]);
                    match self.link_wait[l].pop_front() {
                        Some(w) => self.actions.push(Action::Acquire(w, r)),
                        None => self.link_until[l] = r,
                    }
                }
            }
        }
    }

    fn on_deliver(&mut self, m: u32, now: u64) {
        self.deliver[m as usize] = now;
        let msg = self.prog.messages()[m as usize];
        let t = msg.dst as usize;
        if self.blocked_since[t] != u64::MAX && self.pc[t] == msg.recv_op {
            let w = now - self.blocked_since[t];
            self.wait[m as usize] = w;
            self.task_wait[t] += w;
            self.blocked_since[t] = u64::MAX;
            let pe = self.pe_of[t];
            self.queue[pe as usize].push_back(msg.dst);
            if self.running[pe as usize] == NONE {
                self.run_pe(pe, now);
            }
        }
    }

    fn finish_report(mut self) -> Result<SimReport, Error> {
        if self.vcs > 1 {
            let fold = |v: &[u64], vcs: usize| -> Vec<u64> {
                v.chunks(vcs).map(|c| c.iter().sum()).collect()
            };
            self.link_busy = fold(&self.link_busy, self.vcs);
            self.link_flits = fold(&self.link_flits, self.vcs);
        }
        let n = self.prog.num_tasks();
        let stuck: Vec<u32> = (0..n as u32)
            .filter(|&t| self.pc[t as usize] < self.prog.op_start(t + 1))
            .collect();
        if !stuck.is_empty() {
            let in_flight = self.flights.len() - self.free_flights.len();
            let list: Vec<String> = stuck.iter().take(8).map(|t| t.to_string()).collect();
            return Err(Error::Mismatch(format!(
                "the simulation deadlocked with {} task(s) blocked (tasks {}{}) and {} message(s) stuck in the network{}",
                stuck.len(),
                list.join(", "),
                if stuck.len() > 8 { ", ..." } else { "" },
                in_flight,
                if in_flight > 0 {
                    " (wormhole routing without virtual channels deadlocks on tori)"
                } else {
                    ""
                }
            )));
        }
        let completion = self.finish.iter().copied().max().unwrap_or(0);
        // Times saturate at T_MAX rather than wrap; a run that reached it has no true times.
        if completion >= T_MAX || self.deliver.contains(&T_MAX) {
            return Err(Error::Config(format!(
                "the simulated times overflow 64 bits (more than {T_MAX} cycles): lower the cycle costs or the message sizes"
            )));
        }
        let pe_idle: Vec<u64> = self
            .busy
            .iter()
            .map(|&b| completion.saturating_sub(b))
            .collect();
        let (mut usum, mut umax, mut nl) = (0.0f64, 0.0f64, 0usize);
        if let Some(routes) = self.routes {
            for (l, &b) in self.link_busy.iter().enumerate() {
                if routes.link_endpoints(l as LinkId).is_some() {
                    let u = if completion > 0 {
                        b as f64 / completion as f64
                    } else {
                        0.0
                    };
                    usum += u;
                    umax = umax.max(u);
                    nl += 1;
                }
            }
        }
        let msgs = self.prog.messages();
        let pe_of = &self.pe_of;
        let network = self.routes.is_some();
        let latency = Stats::of((0..msgs.len()).filter_map(|m| {
            let msg = msgs[m];
            let remote = !network || pe_of[msg.src as usize] != pe_of[msg.dst as usize];
            (remote && self.deliver[m] != u64::MAX).then(|| self.deliver[m] - self.inject[m])
        }));
        let messages = self.p.record_messages.then(|| {
            (0..msgs.len())
                .map(|m| MessageTimes {
                    inject: self.inject[m],
                    deliver: self.deliver[m],
                    wait: self.wait[m],
                })
                .collect()
        });
        Ok(SimReport {
            completion,
            task_finish: self.finish,
            task_wait: self.task_wait,
            pe_busy: self.busy,
            pe_idle,
            link_busy: self.link_busy,
            link_flits: self.link_flits,
            link_utilisation_mean: if nl > 0 { usum / nl as f64 } else { 0.0 },
            link_utilisation_max: umax,
            network_messages: self.network_messages,
            local_messages: self.local_messages,
            latency,
            contention_free_latency_sum: self.free_latency_sum,
            events: self.events,
            messages,
        })
    }
}
