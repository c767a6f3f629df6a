//! Incremental evaluation of De Petris & Perego's `F` over a growing partial mapping (the
//! paper's §5.3: "we can derive F values from the value assumed on the previous partial
//! mapping by storing the state of some data structures each time a new allocation is
//! decided").
//!
//! [`IncrementalF`] holds a partial mapping and everything [`SpmModel::evaluate_partial`]
//! would compute from it: `R(m, n)` per PE (eq. 10) and eq. 6 alone per PE, `F_sum`, the
//! interference classes of every phase (a union-find over the model's phase entries), the
//! owner of every `(phase, directed link)` already used, and a max-tree over `R`. Tasks are
//! only ever added, so classes only merge and union-find suffices.
//!
//! * [`IncrementalF::assign`] maps one more task: its new remote channels are routed once,
//!   the classes their links meet are merged, and the members of the enlarged classes get
//!   their new share of the contention.
//! * [`IncrementalF::trial`] gives `F` and `F_sum` with one more task `t → p` without
//!   changing the state: exact new values on the PEs with a direct change or a member in a
//!   small changed class, a bound on every other PE, and those PEs visited best-first only
//!   while the bound can beat the best value found, so the maximum is exact.
//!
//! Costs, with `D(t)` the task's channels, `e` phase entries per channel, `δ` the route
//! length: `trial` is O(D(t)·e·δ·α + Σ small classes + (|E| + scanned PEs)·(large changed
//! classes) + scanned·log k), whatever the number of tasks per PE; `assign` adds the
//! members of every class it enlarges (O(a_h) in the worst case, when one class spans a
//! phase) and the PEs of every class a union absorbs (each entry's PE moves O(log entries)
//! times, union by size). Memory: O(entries + k + links·P).
//!
//! The values equal [`SpmModel::evaluate_partial`] up to floating-point rounding of the
//! sums (tested on random partial mappings, `tests/sim_greedy.rs`). The state, the shares,
//! the bound and the measurements in full: `docs/simulation.md`, "The greedy mapper",
//! "Incremental F".

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::max_tree::MaxTree;
use rustc_hash::FxHashMap as KeyMap;

use taskmap_arch::{Architecture, LinkId, PeId, Routing};

use super::spm::{find_root as find, SpmModel};
use crate::error::Error;

const NONE: u32 = u32::MAX;

/// `F` and `F_sum` of a (partial) mapping, cycles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FValue {
    /// `max_n R(m, n)`.
    pub f: f64,
    /// `Σ_n R(m, n)`.
    pub f_sum: f64,
}

/// A growing partial mapping with its `F`, updated incrementally (see the module
/// documentation). Cloning copies the whole state (O(entries + k + links·P)).
#[derive(Clone)]
pub struct IncrementalF<'a> {
    model: &'a SpmModel,
    /// The target's routes (a routed target: checked in [`Self::new`]).
    routes: &'a dyn Routing,
    k: usize,
    tc: f64,
    /// Classes larger than this are bounded rather than enumerated in [`Self::trial`].
    small_class: u32,
    // Static structure of the model.
    in_start: Vec<u32>,
    in_chan: Vec<u32>,
    out_start: Vec<u32>,
    out_chan: Vec<u32>,
    ent_start: Vec<u32>,
    ent_ids: Vec<u32>,
    entry_phase: Vec<u32>,
    phase_max_in: Vec<u64>,
    phase_max_in_flits: Vec<u64>,
    // The partial mapping.
    pe_of: Vec<u32>,
    tasks_on: Vec<u32>,
    max_tasks_on: u32,
    mapped: usize,
    r: Vec<f64>,
    r6: Vec<f64>,
    f_sum: f64,
    // Interference classes over the phase entries.
    parent: Vec<u32>,
    csize: Vec<u32>,
    cvol: Vec<u64>,
    next: Vec<u32>,
    /// The PE receiving each active entry.
    ent_pe: Vec<u32>,
    /// Per class, the members each PE receives.
    class_pes: ClassPes,
    owners: LinkOwners,
    link_use: Vec<u32>,
    tree: MaxTree,
    s: Scratch,
}

/// One remote channel that the planned assignment activates.
#[derive(Clone, Copy, Debug)]
struct NewChan {
    recv_pe: u32,
    route_lo: u32,
    route_hi: u32,
}

/// A class that the planned assignment enlarges: its root and its size and volume before
/// and after.
#[derive(Clone, Copy, Debug)]
struct Change {
    root: u32,
    phase: u32,
    s_old: u32,
    vol_old: u64,
    s_new: u32,
    vol_new: u64,
}

/// One new entry (a phase of a new remote channel) and its class after the assignment.
#[derive(Clone, Copy, Debug)]
struct NewEntry {
    phase: u32,
    entry: u32,
    nc: u32,
}

#[derive(Clone, Default)]
struct Scratch {
    plan_stamp: u32,
    group_stamp: u32,
    routes: Vec<LinkId>,
    new_chans: Vec<NewChan>,
    /// (pe, value) of eq. 3-5 changes.
    direct: Vec<(u32, f64)>,
    new_entries: Vec<NewEntry>,
    /// Scratch union-find of one phase group: nodes `0..g` are the group's new entries,
    /// then one node per old root met.
    tparent: Vec<u32>,
    tnode_root: Vec<u32>,
    tsize: Vec<u32>,
    tvol: Vec<u64>,
    changes: Vec<Change>,
    /// The changes of classes above `small_class` members (bounded, not enumerated).
    large: Vec<Change>,
    /// Contention of the new entries: (receiving pe, value).
    new_share: Vec<(u32, f64)>,
    root_stamp: Vec<u32>,
    root_node: Vec<u32>,
    change_of_root: Vec<u32>,
    link_stamp: Vec<u32>,
    link_tmp: Vec<u32>,
    pe_stamp: Vec<u32>,
    pe_delta: Vec<f64>,
    pe_list: Vec<u32>,
    heap: BinaryHeap<(OrdF64, u32)>,
    /// Total change of `F_sum`.
    sum_delta: f64,
    /// Bound on the change of any PE outside `pe_list`.
    bound: f64,
}

impl<'a> IncrementalF<'a> {
    /// An empty partial mapping of `model`'s tasks onto `arch`, which needs routes and at
    /// most [`MAX_ROUTED_LINKS`](super::MAX_ROUTED_LINKS) directed links and PEs (its
    /// tables are sized by the target); errors otherwise.
    pub fn new(model: &'a SpmModel, arch: &'a dyn Architecture) -> Result<Self, Error> {
        super::check_routed_target(arch, "F")?;
        let n = model.work.len();
        let k = arch.pe_count() as usize;
        let nch = model.channels.len();
        let csr = |key: &dyn Fn(usize) -> usize| {
            let mut start = vec![0u32; n + 1];
            for c in 0..nch {
                start[key(c) + 1] += 1;
            }
            for i in 0..n {
                start[i + 1] += start[i];
            }
            let mut fill = start.clone();
            let mut ids = vec![0u32; nch];
            for c in 0..nch {
                let t = key(c);
                ids[fill[t] as usize] = c as u32;
                fill[t] += 1;
            }
            (start, ids)
        };
        let (in_start, in_chan) = csr(&|c| model.channels[c].dst as usize);
        let (out_start, out_chan) = csr(&|c| model.channels[c].src as usize);
        let ne = model.phase_entries.len();
        let np = model.num_phases();
        let mut entry_phase = vec![0u32; ne];
        for h in 0..np {
            for e in model.phase_start[h]..model.phase_start[h + 1] {
                entry_phase[e as usize] = h as u32;
            }
        }
        let mut ent_start = vec![0u32; nch + 1];
        for &(c, _) in &model.phase_entries {
            ent_start[c as usize + 1] += 1;
        }
        for c in 0..nch {
            ent_start[c + 1] += ent_start[c];
        }
        let mut fill = ent_start.clone();
        let mut ent_ids = vec![0u32; ne];
        for (e, &(c, _)) in model.phase_entries.iter().enumerate() {
            ent_ids[fill[c as usize] as usize] = e as u32;
            fill[c as usize] += 1;
        }
        // The most entries and flits one task receives in one phase.
        let mut phase_max_in = vec![0u64; np];
        let mut phase_max_in_flits = vec![0u64; np];
        let mut cnt = vec![0u64; np];
        let mut fl = vec![0u64; np];
        let mut touched: Vec<u32> = Vec::new();
        for j in 0..n {
            for &c in &in_chan[in_start[j] as usize..in_start[j + 1] as usize] {
                let c = c as usize;
                for &e in &ent_ids[ent_start[c] as usize..ent_start[c + 1] as usize] {
                    let h = entry_phase[e as usize] as usize;
                    if cnt[h] == 0 {
                        touched.push(h as u32);
                    }
                    cnt[h] += 1;
                    fl[h] = fl[h].saturating_add(model.phase_entries[e as usize].1);
                }
            }
            for &h in &touched {
                let h = h as usize;
                phase_max_in[h] = phase_max_in[h].max(cnt[h]);
                phase_max_in_flits[h] = phase_max_in_flits[h].max(fl[h]);
                cnt[h] = 0;
                fl[h] = 0;
            }
            touched.clear();
        }
        let links = super::routes(arch).link_count() as usize;
        let s = Scratch {
            root_stamp: vec![0; ne],
            root_node: vec![0; ne],
            change_of_root: vec![0; ne],
            link_stamp: vec![0; links],
            link_tmp: vec![0; links],
            pe_stamp: vec![0; k],
            pe_delta: vec![0.0; k],
            ..Scratch::default()
        };
        let machine = &model.params().machine;
        Ok(Self {
            model,
            routes: super::routes(arch),
            k,
            tc: machine.flit_cycles as f64,
            small_class: 64,
            in_start,
            in_chan,
            out_start,
            out_chan,
            ent_start,
            ent_ids,
            entry_phase,
            phase_max_in,
            phase_max_in_flits,
            pe_of: vec![NONE; n],
            tasks_on: vec![0; k],
            max_tasks_on: 0,
            mapped: 0,
            r: vec![0.0; k],
            r6: vec![0.0; k],
            f_sum: 0.0,
            parent: (0..ne as u32).collect(),
            csize: vec![0; ne],
            cvol: vec![0; ne],
            next: (0..ne as u32).collect(),
            ent_pe: vec![NONE; ne],
            class_pes: ClassPes::new(ne),
            owners: LinkOwners::new(links, np),
            link_use: vec![0; links],
            tree: MaxTree::new(k, 0.0),
            s,
        })
    }

    /// Classes with more remote members than `limit` are bounded instead of enumerated in
    /// [`Self::trial`] (default 64; any value gives the same results, only the speed
    /// changes).
    pub fn set_small_class(&mut self, limit: u32) {
        self.small_class = limit;
    }

    /// The PE of every task, `u32::MAX` for unmapped ones.
    pub fn pes(&self) -> &[u32] {
        &self.pe_of
    }

    /// Number of mapped tasks.
    pub fn mapped(&self) -> usize {
        self.mapped
    }

    /// Tasks mapped on `pe`.
    pub fn tasks_on(&self, pe: u32) -> u32 {
        self.tasks_on[pe as usize]
    }

    /// `R(m, n)` of the current partial mapping, per PE (eq. 10).
    pub fn per_pe(&self) -> &[f64] {
        &self.r
    }

    /// Eq. 6 alone (computation, idle, distance and multitasking; no contention), per PE.
    pub fn per_pe_eq6(&self) -> &[f64] {
        &self.r6
    }

    /// How many committed remote channels cross each directed link (any phase).
    pub fn link_use(&self) -> &[u32] {
        &self.link_use
    }

    /// `F` and `F_sum` of the current partial mapping.
    pub fn value(&self) -> FValue {
        FValue {
            f: self.tree.max().max(0.0),
            f_sum: self.f_sum,
        }
    }

    /// `F` and `F_sum` if `task` (unmapped) were mapped on `pe`; the state is unchanged.
    pub fn trial(&mut self, task: u32, pe: u32) -> FValue {
        assert!(
            self.pe_of[task as usize] == NONE && (pe as usize) < self.k,
            "trial of a mapped task or a PE out of range"
        );
        self.plan(task, pe);
        let stamp = self.s.plan_stamp;
        // PEs of small changed classes join the exactly computed set.
        let mut bound = 0.0f64;
        let tc = self.tc;
        self.s.large.clear();
        for ci in 0..self.s.changes.len() {
            let ch = self.s.changes[ci];
            if ch.s_old <= self.small_class {
                // Member by member: its PE joins the exactly computed set, with the change
                // of the member's share.
                let mut e = ch.root;
                loop {
                    let pe = self.ent_pe[e as usize];
                    self.touch(pe);
                    let f = self.model.phase_entries[e as usize].1;
                    self.s.pe_delta[pe as usize] +=
                        share(tc, ch.vol_new, f, ch.s_new) - share(tc, ch.vol_old, f, ch.s_old);
                    e = self.next[e as usize];
                    if e == ch.root {
                        break;
                    }
                }
            } else {
                self.s.large.push(ch);
                let (a, b) = self.change_coefficients(&ch);
                let h = ch.phase as usize;
                // In f64: the products of counts and flits may pass 2^64.
                let m = f64::from(self.max_tasks_on);
                bound += a.max(0.0) * (m * self.phase_max_in[h] as f64)
                    + (-b).max(0.0) * (m * self.phase_max_in_flits[h] as f64);
            }
        }
        self.s.bound = bound;
        // Exact values on the touched PEs.
        let mut best = f64::NEG_INFINITY;
        for &n in &self.s.pe_list {
            let v = self.r[n as usize] + self.s.pe_delta[n as usize] + self.large_delta(n);
            best = best.max(v);
        }
        // The others, in decreasing committed R, while they can still matter.
        let mut heap = std::mem::take(&mut self.s.heap);
        heap.clear();
        heap.push((OrdF64(self.tree.node(1)), 1));
        while let Some((OrdF64(v), node)) = heap.pop() {
            if v + bound <= best {
                break;
            }
            if let Some(n) = self.tree.leaf(node) {
                if n >= self.k || self.s.pe_stamp[n] == stamp {
                    continue;
                }
                let exact = self.r[n] + self.large_delta(n as u32);
                best = best.max(exact);
            } else {
                heap.push((OrdF64(self.tree.node(2 * node)), 2 * node));
                heap.push((OrdF64(self.tree.node(2 * node + 1)), 2 * node + 1));
            }
        }
        self.s.heap = heap;
        FValue {
            f: best.max(0.0),
            f_sum: self.f_sum + self.s.sum_delta,
        }
    }

    /// Maps `task` (unmapped) on `pe` and updates every value.
    pub fn assign(&mut self, task: u32, pe: u32) {
        assert!(
            self.pe_of[task as usize] == NONE && (pe as usize) < self.k,
            "assignment of a mapped task or a PE out of range"
        );
        self.plan(task, pe);
        let mut touched: Vec<u32> = std::mem::take(&mut self.s.pe_list);
        // Direct terms (already in pe_delta for the touched PEs, which include every PE of
        // `direct` and `new_share`), eq. 6 alone from `direct`.
        for &(n, v) in &self.s.direct {
            self.r6[n as usize] += v;
        }
        for &n in &touched {
            self.r[n as usize] += self.s.pe_delta[n as usize];
        }
        // Members of the enlarged classes: each member's share changes by `A − v·B`.
        let mut many = false;
        for ci in 0..self.s.changes.len() {
            let ch = self.s.changes[ci];
            let (a, b) = self.change_coefficients(&ch);
            let mut e = ch.root;
            loop {
                let f = self.model.phase_entries[e as usize].1 as f64;
                let n = self.ent_pe[e as usize];
                self.r[n as usize] += a - f * b;
                if !many {
                    if self.s.pe_stamp[n as usize] != self.s.plan_stamp {
                        self.s.pe_stamp[n as usize] = self.s.plan_stamp;
                        touched.push(n);
                    }
                    many = touched.len() > self.k / 16;
                }
                e = self.next[e as usize];
                if e == ch.root {
                    break;
                }
            }
        }
        // Unions, new members and link owners.
        let s = &mut self.s;
        for ne in &s.new_entries {
            let e = ne.entry as usize;
            self.ent_pe[e] = s.new_chans[ne.nc as usize].recv_pe;
            self.parent[e] = e as u32;
            self.next[e] = e as u32;
            self.csize[e] = 1;
            self.cvol[e] = self.model.phase_entries[e].1;
            self.class_pes
                .add(e as u32, self.ent_pe[e], 1, self.cvol[e]);
        }
        for i in 0..s.new_entries.len() {
            let ne = s.new_entries[i];
            let nc = s.new_chans[ne.nc as usize];
            for &l in &s.routes[nc.route_lo as usize..nc.route_hi as usize] {
                match self.owners.get(ne.phase, l) {
                    Some(o) => {
                        if let Some((kept, absorbed)) = union(
                            &mut self.parent,
                            &mut self.csize,
                            &mut self.cvol,
                            &mut self.next,
                            o,
                            ne.entry,
                        ) {
                            self.class_pes.merge(kept, absorbed);
                        }
                    }
                    None => self.owners.set(ne.phase, l, ne.entry),
                }
            }
        }
        for nc in &s.new_chans {
            for &l in &s.routes[nc.route_lo as usize..nc.route_hi as usize] {
                self.link_use[l as usize] += 1;
            }
        }
        debug_assert!(s.changes.iter().all(|c| {
            let r = find(&mut self.parent, c.root) as usize;
            self.csize[r] == c.s_new && self.cvol[r] == c.vol_new
        }));
        self.f_sum += s.sum_delta;
        // The mapping itself.
        let p = pe as usize;
        self.pe_of[task as usize] = pe;
        self.tasks_on[p] += 1;
        self.max_tasks_on = self.max_tasks_on.max(self.tasks_on[p]);
        self.mapped += 1;
        if many {
            self.tree.rebuild(&self.r);
        } else {
            for &n in &touched {
                self.tree.set(n as usize, self.r[n as usize]);
            }
        }
        touched.clear();
        self.s.pe_list = touched;
    }

    /// Adds `n` to the exactly computed PEs of the current plan.
    #[inline]
    fn touch(&mut self, n: u32) {
        let i = n as usize;
        if self.s.pe_stamp[i] != self.s.plan_stamp {
            self.s.pe_stamp[i] = self.s.plan_stamp;
            self.s.pe_delta[i] = 0.0;
            self.s.pe_list.push(n);
        }
    }

    /// `(A, B)` with the change of a member's share `A − v·B` (a class of one had no
    /// share).
    fn change_coefficients(&self, ch: &Change) -> (f64, f64) {
        let tc = self.tc;
        let mut a = tc * ch.vol_new as f64 / (2.0 * ch.s_new as f64);
        let mut b = tc / (2.0 * ch.s_new as f64);
        if ch.s_old >= 2 {
            a -= tc * ch.vol_old as f64 / (2.0 * ch.s_old as f64);
            b -= tc / (2.0 * ch.s_old as f64);
        }
        (a, b)
    }

    /// The change of PE `n`'s contention through the large enlarged classes of the current
    /// plan (the small ones are in `pe_delta`): per class, from the number of members `n`
    /// receives and their flits, `Σ_members (share_new − share_old)` in one step.
    fn large_delta(&self, n: u32) -> f64 {
        let tc = self.tc;
        let mut d = 0.0;
        for ch in &self.s.large {
            let (cnt, flits) = self.class_pes.get(ch.root, n);
            if cnt == 0 {
                continue;
            }
            // Σ (vol − f) over the members, exact in 128 bits (every f is at most vol).
            let rest = |vol: u64| (u128::from(cnt) * u128::from(vol) - u128::from(flits)) as f64;
            d += tc * rest(ch.vol_new) / (2.0 * ch.s_new as f64);
            if ch.s_old >= 2 {
                d -= tc * rest(ch.vol_old) / (2.0 * ch.s_old as f64);
            }
        }
        d
    }

    fn bump_stamps(&mut self) {
        let s = &mut self.s;
        if s.plan_stamp == u32::MAX - 1 {
            s.plan_stamp = 0;
            s.root_stamp.iter_mut().for_each(|x| *x = 0);
            s.pe_stamp.iter_mut().for_each(|x| *x = 0);
        }
        s.plan_stamp += 1;
    }

    /// Computes what mapping `task` on `pe` changes, into the scratch: the direct terms,
    /// the new remote channels and their routes, the merged classes, the new entries'
    /// shares, and the exactly computed PEs with their direct changes (`pe_list`,
    /// `pe_delta`).
    fn plan(&mut self, task: u32, pe: u32) {
        self.bump_stamps();
        let tc = self.tc;
        let model = self.model;
        let t = task as usize;
        {
            let s = &mut self.s;
            s.routes.clear();
            s.new_chans.clear();
            s.direct.clear();
            s.new_entries.clear();
            s.changes.clear();
            s.new_share.clear();
            s.pe_list.clear();
            s.sum_delta = 0.0;
            s.bound = 0.0;
            s.direct.push((pe, (model.work[t] + model.wait[t]) as f64));
        }
        // Channels into the task, then out of it.
        for dir in 0..2 {
            let (start, ids) = if dir == 0 {
                (&self.in_start, &self.in_chan)
            } else {
                (&self.out_start, &self.out_chan)
            };
            for &c in &ids[start[t] as usize..start[t + 1] as usize] {
                let ch = &model.channels[c as usize];
                let other = if dir == 0 { ch.src } else { ch.dst };
                let q = self.pe_of[other as usize];
                if q == NONE {
                    continue;
                }
                let recv = if dir == 0 { pe } else { q };
                if q == pe {
                    let save = model.local_saving(ch);
                    self.s.direct.push((recv, -save));
                    continue;
                }
                let (from, to) = if dir == 0 { (q, pe) } else { (pe, q) };
                let lo = self.s.routes.len() as u32;
                self.routes.route(PeId(from), PeId(to), &mut self.s.routes);
                let hi = self.s.routes.len() as u32;
                let d = (hi - lo) as f64;
                self.s
                    .direct
                    .push((recv, ch.messages as f64 * tc * (d - 1.0)));
                let nc = self.s.new_chans.len() as u32;
                self.s.new_chans.push(NewChan {
                    recv_pe: recv,
                    route_lo: lo,
                    route_hi: hi,
                });
                for &e in &self.ent_ids
                    [self.ent_start[c as usize] as usize..self.ent_start[c as usize + 1] as usize]
                {
                    self.s.new_entries.push(NewEntry {
                        phase: self.entry_phase[e as usize],
                        entry: e,
                        nc,
                    });
                }
            }
        }
        for i in 0..self.s.direct.len() {
            let (n, v) = self.s.direct[i];
            self.touch(n);
            self.s.pe_delta[n as usize] += v;
            self.s.sum_delta += v;
        }
        // Phase by phase: merge the new entries with the classes their links meet.
        self.s
            .new_entries
            .sort_unstable_by_key(|e| (e.phase, e.entry));
        let mut lo = 0;
        while lo < self.s.new_entries.len() {
            let h = self.s.new_entries[lo].phase;
            let mut hi = lo + 1;
            while hi < self.s.new_entries.len() && self.s.new_entries[hi].phase == h {
                hi += 1;
            }
            self.plan_group(lo, hi);
            lo = hi;
        }
        for i in 0..self.s.new_share.len() {
            let (n, v) = self.s.new_share[i];
            self.s.pe_delta[n as usize] += v;
            self.s.sum_delta += v;
        }
    }

    /// Merges of the new entries `new_entries[lo..hi]` (one phase).
    fn plan_group(&mut self, lo: usize, hi: usize) {
        let tc = self.tc;
        let plan = self.s.plan_stamp;
        let s = &mut self.s;
        if s.group_stamp == u32::MAX - 1 {
            s.group_stamp = 0;
            s.link_stamp.iter_mut().for_each(|x| *x = 0);
        }
        s.group_stamp += 1;
        let gstamp = s.group_stamp;
        let g = hi - lo;
        let h = s.new_entries[lo].phase;
        s.tparent.clear();
        s.tparent.extend(0..g as u32);
        s.tnode_root.clear();
        s.tnode_root.resize(g, NONE);
        for i in 0..g {
            let ne = s.new_entries[lo + i];
            let nc = s.new_chans[ne.nc as usize];
            for li in nc.route_lo..nc.route_hi {
                let l = s.routes[li as usize];
                if let Some(o) = self.owners.get(h, l) {
                    let root = find(&mut self.parent, o);
                    let node = if s.root_stamp[root as usize] == plan {
                        s.root_node[root as usize]
                    } else {
                        let node = s.tparent.len() as u32;
                        s.tparent.push(node);
                        s.tnode_root.push(root);
                        s.root_stamp[root as usize] = plan;
                        s.root_node[root as usize] = node;
                        s.change_of_root[root as usize] = NONE;
                        node
                    };
                    tunion(&mut s.tparent, i as u32, node);
                }
                let l = l as usize;
                if s.link_stamp[l] == gstamp {
                    tunion(&mut s.tparent, i as u32, s.link_tmp[l]);
                } else {
                    s.link_stamp[l] = gstamp;
                    s.link_tmp[l] = i as u32;
                }
            }
        }
        // Sizes and volumes of the scratch classes.
        let nodes = s.tparent.len();
        s.tsize.clear();
        s.tsize.resize(nodes, 0);
        s.tvol.clear();
        s.tvol.resize(nodes, 0);
        for node in 0..nodes {
            let r = find(&mut s.tparent, node as u32) as usize;
            if node < g {
                let e = s.new_entries[lo + node].entry as usize;
                s.tsize[r] += 1;
                s.tvol[r] += self.model.phase_entries[e].1;
            } else {
                let root = s.tnode_root[node] as usize;
                s.tsize[r] += self.csize[root];
                s.tvol[r] += self.cvol[root];
            }
        }
        let first_change = s.changes.len();
        for node in g..nodes {
            let r = find(&mut s.tparent, node as u32) as usize;
            let root = s.tnode_root[node];
            s.change_of_root[root as usize] = s.changes.len() as u32;
            s.changes.push(Change {
                root,
                phase: h,
                s_old: self.csize[root as usize],
                vol_old: self.cvol[root as usize],
                s_new: s.tsize[r],
                vol_new: s.tvol[r],
            });
        }
        for i in 0..g {
            let r = find(&mut s.tparent, i as u32) as usize;
            let ne = s.new_entries[lo + i];
            let f = self.model.phase_entries[ne.entry as usize].1;
            let v = share(tc, s.tvol[r], f, s.tsize[r]);
            if v != 0.0 {
                s.new_share.push((s.new_chans[ne.nc as usize].recv_pe, v));
            }
        }
        let mut total = 0.0;
        for ch in &s.changes[first_change..] {
            // Σ over the old members of the new share minus the old one; the products of
            // sizes and volumes in u128 (exact: they may pass 2^64).
            let s_old = u128::from(ch.s_old);
            let (vol_old, vol_new) = (u128::from(ch.vol_old), u128::from(ch.vol_new));
            total += tc * (s_old * vol_new - vol_old) as f64 / (2.0 * ch.s_new as f64)
                - tc * ((s_old - 1) * vol_old) as f64 / (2.0 * ch.s_old as f64);
        }
        s.sum_delta += total;
    }
}

/// A member's contention share `T_c·(Σv − v)/(2|S|)` (0 for a class of one).
#[inline]
fn share(tc: f64, vol: u64, f: u64, size: u32) -> f64 {
    if size < 2 {
        0.0
    } else {
        tc * (vol - f) as f64 / (2.0 * size as f64)
    }
}

/// Union by size of the classes of `a` and `b`, keeping sizes, volumes and the circular
/// member lists at the root; returns the root kept and the root absorbed (`None` when they
/// were one class).
fn union(
    parent: &mut [u32],
    size: &mut [u32],
    vol: &mut [u64],
    next: &mut [u32],
    a: u32,
    b: u32,
) -> Option<(u32, u32)> {
    let (mut a, mut b) = (find(parent, a), find(parent, b));
    if a == b {
        return None;
    }
    if size[a as usize] < size[b as usize] {
        std::mem::swap(&mut a, &mut b);
    }
    parent[b as usize] = a;
    size[a as usize] += size[b as usize];
    vol[a as usize] += vol[b as usize];
    next.swap(a as usize, b as usize);
    Some((a, b))
}

/// Per interference class (keyed by its root) and PE: how many members the PE receives
/// and their flits, so that a class's change on one PE is one lookup. A root's PEs form a
/// list in one slab; a union moves the absorbed root's PEs to the kept root (union by
/// size: an entry's PE moves O(log entries) times in all).
#[derive(Clone)]
struct ClassPes {
    at: KeyMap<u64, (u32, u64)>,
    /// Per root, the first node of its list (`NONE`: empty).
    head: Vec<u32>,
    /// `(pe, next)` list nodes.
    nodes: Vec<(u32, u32)>,
}

impl ClassPes {
    fn new(entries: usize) -> Self {
        Self {
            at: KeyMap::default(),
            head: vec![NONE; entries],
            nodes: Vec::new(),
        }
    }

    #[inline]
    fn key(root: u32, pe: u32) -> u64 {
        u64::from(root) << 32 | u64::from(pe)
    }

    /// Adds `cnt` members of `flits` flits in all, received by `pe`, to class `root`.
    fn add(&mut self, root: u32, pe: u32, cnt: u32, flits: u64) {
        match self.at.entry(Self::key(root, pe)) {
            std::collections::hash_map::Entry::Occupied(mut o) => {
                let v = o.get_mut();
                v.0 += cnt;
                v.1 += flits;
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert((cnt, flits));
                self.nodes.push((pe, self.head[root as usize]));
                self.head[root as usize] = (self.nodes.len() - 1) as u32;
            }
        }
    }

    /// The members of class `root` that `pe` receives: their number and flits.
    #[inline]
    fn get(&self, root: u32, pe: u32) -> (u32, u64) {
        self.at.get(&Self::key(root, pe)).copied().unwrap_or((0, 0))
    }

    /// Moves the members of root `from` to root `to`.
    fn merge(&mut self, to: u32, from: u32) {
        let mut j = std::mem::replace(&mut self.head[from as usize], NONE);
        while j != NONE {
            let (pe, next) = self.nodes[j as usize];
            if let Some((cnt, flits)) = self.at.remove(&Self::key(from, pe)) {
                self.add(to, pe, cnt, flits);
            }
            j = next;
        }
    }
}

/// Union of the scratch classes of `a` and `b`, the smaller root becoming the parent.
fn tunion(parent: &mut [u32], a: u32, b: u32) {
    let (a, b) = (find(parent, a), find(parent, b));
    if a != b {
        parent[a.max(b) as usize] = a.min(b);
    }
}

/// `f64` ordered by `total_cmp`, for the heap.
#[derive(Clone, Copy, Debug, PartialEq)]
struct OrdF64(f64);

impl Eq for OrdF64 {}

impl PartialOrd for OrdF64 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrdF64 {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The entry that first used each `(phase, directed link)`.
#[derive(Clone)]
enum LinkOwners {
    Dense { links: usize, v: Vec<u32> },
    Sparse(KeyMap<u64, u32>),
}

impl LinkOwners {
    const DENSE_MAX: usize = 1 << 24;

    fn new(links: usize, phases: usize) -> Self {
        match links.checked_mul(phases) {
            Some(n) if n <= Self::DENSE_MAX => LinkOwners::Dense {
                links,
                v: vec![NONE; n],
            },
            _ => LinkOwners::Sparse(KeyMap::default()),
        }
    }

    #[inline]
    fn get(&self, phase: u32, link: LinkId) -> Option<u32> {
        let o = match self {
            LinkOwners::Dense { links, v } => v[phase as usize * links + link as usize],
            LinkOwners::Sparse(m) => *m
                .get(&(u64::from(phase) << 32 | u64::from(link)))
                .unwrap_or(&NONE),
        };
        (o != NONE).then_some(o)
    }

    #[inline]
    fn set(&mut self, phase: u32, link: LinkId, entry: u32) {
        match self {
            LinkOwners::Dense { links, v } => v[phase as usize * *links + link as usize] = entry,
            LinkOwners::Sparse(m) => {
                m.insert(u64::from(phase) << 32 | u64::from(link), entry);
            }
        }
    }
}
