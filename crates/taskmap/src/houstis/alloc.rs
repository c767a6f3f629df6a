//! The Algorithm Mapper's allocation (Houstis et al. 1989, sections 3-4): ALLOC clusters
//! the modules of a precedence graph under a time frame `T`, a search over `T` finds the
//! shortest frame `T_PAR`, and a simulation of the schedule gives `T_REAL`.
//!
//! * **ALLOC(T)**: every module starts as its own cluster. The pair of clusters with the
//!   most communication (the sum of `l'` between them) merges first, if (a) no two of
//!   their modules can run in parallel (`Δ`, step 1 only), (b) the merged cluster's
//!   processing plus communication time fits in `T`, and (c) its memory fits in a
//!   processor's. Communication costs the interconnect's delay `D`
//!   ([`crate::houstis::interconnect`]), which depends on the load of the clustering, so
//!   ALLOC is run again with the load of its own result until `D` settles (at most
//!   [`DELAY_ROUNDS`] runs).
//! * **The frame**: the paper's multisection. [`SAMPLES`] frames (by default) spread over
//!   an interval are clustered (in parallel on `AllocParams::pool`); the interval shrinks
//!   to the gap before the smallest frame that reaches the target number of clusters,
//!   down to the tolerance.
//! * **Steps**: step 1 targets the assigned parallelism (default: the processors); step 2
//!   (parallelism reduction), when there are more clusters than processors, clusters the
//!   clusters again without `Δ`; step 3 gives cluster `c` to processor `c`, or, with
//!   processor speeds (ours), the assignment with the least longest time
//!   ([`assign`](crate::houstis::mapper::assign)).
//! * **Schedule**: every module runs once for `m'_i / speed` plus its communication with
//!   other processors, when all its predecessors in the precedence DAG have finished
//!   ([`ScheduleSim`](crate::houstis::schedule::ScheduleSim)).
//!
//! Complexity: O(F · E log E) for `F` ALLOC runs in the frame search (samples × rounds ×
//! delay rounds) and `E` links; with `Δ` plus O(n / 64) words per merge and n² bits.
//!
//! Every step, the readings where the paper is silent and the measurements:
//! `docs/algorithm-mapper.md`, "ALLOC and the search" and "Processor speeds".

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use crate::max_tree::MaxTree;
use rustc_hash::FxHashMap as KeyMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::houstis::machine::*;
use crate::houstis::precedence::{BitMatrix, Deterministic, ParallelMatrix, PrecedenceGraph};
use crate::mapper::Progress;
use crate::registry::{ParamDoc, Params};

/// Frames clustered per round of the multisection, by default.
pub const SAMPLES: usize = 4;

/// Most ALLOC runs per frame while the delay settles.
pub const DELAY_ROUNDS: usize = 6;

/// Parameters of [`algorithm_mapper`](crate::houstis::mapper::algorithm_mapper).
#[derive(Clone, Copy, Debug)]
pub struct AllocParams<'a> {
    /// Step 1's target (the assigned degree of parallelism); default the processors.
    pub parallelism: Option<u32>,
    /// Relative width of the final frame interval.
    pub tolerance: f64,
    /// Frames clustered per round of the multisection, in parallel on `pool`.
    pub samples: usize,
    /// The threads that cluster a round's frames (`None`: the caller's thread); the
    /// result does not depend on them.
    pub pool: Option<&'a rayon::ThreadPool>,
}

impl Default for AllocParams<'_> {
    fn default() -> Self {
        AllocParams {
            parallelism: None,
            tolerance: 1e-4,
            samples: SAMPLES,
            pool: None,
        }
    }
}

/// The keys of `alloc` (`alloc,parallelism=4,tolerance=1e-4,samples=8`): [`AllocParams`]
/// without the threads, and whether to map without `Δ`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AllocOptions {
    /// Step 1's target (the assigned degree of parallelism); `None`: the processors.
    pub parallelism: Option<u32>,
    /// Map without the parallelism constraint `Δ` (step 2 only).
    pub no_parallelism: bool,
    /// Relative width of the final frame interval.
    pub tolerance: f64,
    /// Frames clustered per round of the multisection.
    pub samples: usize,
}

impl Default for AllocOptions {
    fn default() -> Self {
        let d = AllocParams::default();
        AllocOptions {
            parallelism: d.parallelism,
            no_parallelism: false,
            tolerance: d.tolerance,
            samples: d.samples,
        }
    }
}

impl AllocOptions {
    /// The parameters of a run whose frames are clustered on `pool`.
    pub fn params<'a>(&self, pool: Option<&'a rayon::ThreadPool>) -> AllocParams<'a> {
        AllocParams {
            parallelism: self.parallelism,
            tolerance: self.tolerance,
            samples: self.samples,
            pool,
        }
    }
}

/// The keys of [`AllocOptions`], also `alloc-ls`'s.
pub(crate) const ALLOC_DOCS: [ParamDoc; 4] = [
    ParamDoc {
        name: "parallelism",
        aliases: &[],
        doc: "step 1's number of clusters, the assigned degree of parallelism (none: the processors), at least 1",
    },
    ParamDoc {
        name: "no_parallelism",
        aliases: &[],
        doc: "map without the parallelism constraint Δ (step 2 only; needed above 65,536 modules); not with parallelism",
    },
    ParamDoc {
        name: "tolerance",
        aliases: &[],
        doc: "relative width of the final time-frame interval, in [1e-12, 1)",
    },
    ParamDoc {
        name: "samples",
        aliases: &[],
        doc: "frames clustered in parallel per round of the time-frame search, 1 to 1024 (the result depends on it, not on the threads)",
    },
];

impl Params for AllocOptions {
    const DOCS: &'static [ParamDoc] = &ALLOC_DOCS;

    fn validate(&self) -> Result<(), String> {
        if self.parallelism == Some(0) {
            return Err("parallelism must be at least 1".into());
        }
        if self.parallelism.is_some() && self.no_parallelism {
            return Err("parallelism does not go with no_parallelism".into());
        }
        if !(self.tolerance >= 1e-12 && self.tolerance < 1.0) {
            return Err(format!(
                "the frame tolerance must lie in [1e-12, 1), not {}",
                self.tolerance
            ));
        }
        if !(1..=1024).contains(&self.samples) {
            return Err(format!("samples takes 1 to 1024, not {}", self.samples));
        }
        Ok(())
    }
}

/// Modules (or step 1's clusters) as ALLOC sees them.
pub struct Instance<'a> {
    /// Processing time.
    pub proc: Vec<f64>,
    pub mem: Vec<f64>,
    /// Undirected communication `l'`: `adj[first[i]..first[i+1]]` as (neighbour, ITUs),
    /// both directions listed.
    pub first: Vec<u32>,
    pub adj: Vec<(u32, f64)>,
    /// `Δ` (step 1), or none (step 2).
    pub parallel: Option<&'a ParallelMatrix>,
    /// The pairs, heaviest first (the same for every frame).
    pub(crate) ranked: Vec<Pair>,
}

impl<'a> Instance<'a> {
    /// The modules of `G'` with `l'_ij = vol(i→j) + vol(j→i)` (self links dropped).
    pub fn of_modules(
        g: &PrecedenceGraph,
        det: &Deterministic,
        parallel: Option<&'a ParallelMatrix>,
    ) -> Self {
        let pairs = g
            .links
            .iter()
            .zip(&det.volume)
            .map(|(l, &v)| (l.from, l.to, v));
        Self::build(det.time.clone(), g.memory.clone(), pairs, parallel)
    }

    pub(crate) fn build(
        proc: Vec<f64>,
        mem: Vec<f64>,
        pairs: impl Iterator<Item = (u32, u32, f64)>,
        parallel: Option<&'a ParallelMatrix>,
    ) -> Self {
        let n = proc.len();
        let mut sum: HashMap<(u32, u32), f64> = HashMap::new();
        for (a, b, v) in pairs {
            if a != b && v > 0.0 {
                *sum.entry((a.min(b), a.max(b))).or_insert(0.0) += v;
            }
        }
        let mut edges: Vec<(u32, u32, f64)> =
            sum.into_iter().map(|((a, b), v)| (a, b, v)).collect();
        edges.sort_by_key(|x| (x.0, x.1));
        let mut first = vec![0u32; n + 1];
        for &(a, b, _) in &edges {
            first[a as usize + 1] += 1;
            first[b as usize + 1] += 1;
        }
        for v in 0..n {
            first[v + 1] += first[v];
        }
        let mut fill = first.clone();
        let mut adj = vec![(0u32, 0.0f64); first[n] as usize];
        for &(a, b, v) in &edges {
            adj[fill[a as usize] as usize] = (b, v);
            fill[a as usize] += 1;
            adj[fill[b as usize] as usize] = (a, v);
            fill[b as usize] += 1;
        }
        let mut ranked: Vec<Pair> = edges.iter().map(|&(a, b, w)| Pair { w, a, b }).collect();
        ranked.sort_unstable_by(|x, y| y.cmp(x));
        Instance {
            proc,
            mem,
            first,
            adj,
            parallel,
            ranked,
        }
    }

    /// Number of modules.
    pub fn len(&self) -> usize {
        self.proc.len()
    }

    /// Whether there are no modules.
    pub fn is_empty(&self) -> bool {
        self.proc.is_empty()
    }

    pub(crate) fn neighbours(&self, i: usize) -> &[(u32, f64)] {
        &self.adj[self.first[i] as usize..self.first[i + 1] as usize]
    }

    /// Total communication `Σ l'` (each pair once).
    pub(crate) fn total_comm(&self) -> f64 {
        self.adj.iter().map(|x| x.1).sum::<f64>() / 2.0
    }

    /// Load `ρ` when the ITUs between clusters are `cut` (the processing at the mean
    /// speed, processors not yet chosen).
    pub(crate) fn rho(&self, cut: f64, machine: &Machine) -> f64 {
        let work = self.proc.iter().sum::<f64>() / machine.mean_speed();
        rho_of(cut, work, machine)
    }
}

/// Load `ρ` = (ITUs between processors × ITU time) / processing time.
pub(crate) fn rho_of(cut: f64, work: f64, machine: &Machine) -> f64 {
    if cut <= 0.0 {
        0.0
    } else if work <= 0.0 {
        1e6
    } else {
        (cut * machine.itu_time / work).min(1e6)
    }
}

/// A clustering of an [`Instance`] under a frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Clustering {
    /// Cluster of each module, numbered `0..count` by their first module.
    pub cluster: Vec<u32>,
    pub count: usize,
    /// Whether every cluster fits in the frame.
    pub feasible: bool,
    /// Load and delay per ITU (in ITU times) the clustering was made with.
    pub rho: f64,
    pub delay: f64,
}

/// A heap entry: a pair of clusters and their communication.
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct Pair {
    pub(crate) w: f64,
    pub(crate) a: u32,
    pub(crate) b: u32,
}

impl Eq for Pair {}

impl Ord for Pair {
    fn cmp(&self, o: &Self) -> Ordering {
        self.w.total_cmp(&o.w).then_with(|| {
            (o.a.min(o.b), o.a.max(o.b)).cmp(&(self.a.min(self.b), self.a.max(self.b)))
        })
    }
}

impl PartialOrd for Pair {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// ALLOC's clusters while they merge.
pub(crate) struct Work<'a> {
    pub(crate) proc: Vec<f64>,
    pub(crate) mem: Vec<f64>,
    /// ITUs to other clusters.
    pub(crate) ext: Vec<f64>,
    pub(crate) members: Vec<Vec<u32>>,
    pub(crate) adj: Vec<KeyMap<u32, f64>>,
    pub(crate) alive: Vec<bool>,
    /// Pairs of each cluster refused for their time (the heap gave them up).
    pub(crate) refused: Vec<Vec<u32>>,
    /// `Δ`, whose row `c` serves cluster `c` until it first merges.
    pub(crate) delta: Option<&'a BitMatrix>,
    /// Rows of the clusters that have merged (the modules some member can run in parallel
    /// with), `rows[own[c]]`; `NO_ROW` while the cluster uses `Δ`'s row.
    pub(crate) own: Vec<u32>,
    pub(crate) rows: Vec<u64>,
    pub(crate) words: usize,
    pub(crate) limit: f64,
    pub(crate) cap: f64,
    pub(crate) itu_cost: f64,
    /// The machine's speeds; `fastest` is the first level's.
    pub(crate) levels: &'a SpeedLevels,
    pub(crate) fastest: f64,
    /// The slowest level each cluster fits on (0 when none) and Hall's condition over
    /// them (`None` with one level: nothing to hold).
    pub(crate) class: Vec<u32>,
    pub(crate) slack: Option<Slack>,
}

pub(crate) const NO_ROW: u32 = u32::MAX;

/// Whether two clusters may merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// They fit together.
    Fits,
    /// Their time exceeds the frame (it may drop when they shed communication).
    Time,
    /// They would take a fast processor another cluster needs (Hall's condition; later
    /// merges may free one).
    Hall,
    /// Never: memory or `Δ` (both only grow).
    Never,
}

impl Work<'_> {
    /// Whether some member of cluster `c` can run in parallel with module `m`.
    fn parallel_to(&self, c: usize, m: usize) -> bool {
        match (self.delta, self.own[c]) {
            (None, _) => false,
            (Some(d), NO_ROW) => d.get(c, m),
            (Some(_), r) => self.rows[r as usize * self.words + m / 64] >> (m % 64) & 1 == 1,
        }
    }

    fn weight(&self, a: usize, b: usize) -> f64 {
        self.adj[a].get(&(b as u32)).copied().unwrap_or(0.0)
    }

    /// Whether clusters `a` and `b` may merge: time, memory, `Δ`, Hall's condition.
    fn fits(&self, a: usize, b: usize) -> bool {
        self.verdict(a, b) == Verdict::Fits
    }

    /// Whether clusters `a` and `b` may merge, and if not, why.
    fn verdict(&self, a: usize, b: usize) -> Verdict {
        if self.mem[a] + self.mem[b] > self.cap {
            return Verdict::Never;
        }
        let (row, other) = if self.members[a].len() >= self.members[b].len() {
            (a, b)
        } else {
            (b, a)
        };
        if self.delta.is_some()
            && self.members[other]
                .iter()
                .any(|&m| self.parallel_to(row, m as usize))
        {
            return Verdict::Never;
        }
        let w = self.weight(a, b);
        let proc = self.proc[a] + self.proc[b];
        let comm = (self.ext[a] + self.ext[b] - 2.0 * w).max(0.0) * self.itu_cost;
        if proc / self.fastest + comm > self.limit {
            return Verdict::Time;
        }
        // With several speeds, the merged cluster must leave a processor for every
        // cluster that needs a fast one.
        if let Some(slack) = &self.slack {
            let c = self.levels.class(proc, comm, self.limit).unwrap_or(0);
            let held = self.class[a].min(self.class[b]) as usize;
            if slack.min_in(c, held) < 1 {
                return Verdict::Hall;
            }
        }
        Verdict::Fits
    }

    /// Time of cluster `c` on the fastest processor.
    fn load(&self, c: usize) -> f64 {
        self.time_at(c, self.fastest)
    }

    /// Time of cluster `c` at `speed`: its processing over the speed plus its
    /// communication.
    fn time_at(&self, c: usize, speed: f64) -> f64 {
        self.proc[c] / speed + self.ext[c] * self.itu_cost
    }

    /// Merges the smaller of `a` and `b` into the other; returns the survivor. With a
    /// heap, pushes the survivor's pairs.
    fn merge(&mut self, a: usize, b: usize, heap: Option<&mut BinaryHeap<Pair>>) -> usize {
        let (big, small) = if self.members[a].len() >= self.members[b].len() {
            (a, b)
        } else {
            (b, a)
        };
        let w = self.weight(big, small);
        let before = self.load(big);
        self.proc[big] += self.proc[small];
        self.mem[big] += self.mem[small];
        self.ext[big] = (self.ext[big] + self.ext[small] - 2.0 * w).max(0.0);
        if let Some(slack) = &mut self.slack {
            let c = self
                .levels
                .class(self.proc[big], self.ext[big] * self.itu_cost, self.limit)
                .unwrap_or(0);
            slack.add_from(self.class[big] as usize, 1);
            slack.add_from(self.class[small] as usize, 1);
            slack.add_from(c, -1);
            self.class[big] = c as u32;
        }
        let moved = std::mem::take(&mut self.members[small]);
        self.members[big].extend(moved);
        if let Some(d) = self.delta {
            let w = self.words;
            if self.own[big] == NO_ROW {
                self.own[big] = (self.rows.len() / w) as u32;
                self.rows.extend_from_slice(d.row(big));
            }
            let dst = self.own[big] as usize * w;
            for k in 0..w {
                let bits = match self.own[small] {
                    NO_ROW => d.row(small)[k],
                    r => self.rows[r as usize * w + k],
                };
                self.rows[dst + k] |= bits;
            }
        }
        let out = std::mem::take(&mut self.adj[small]);
        self.adj[big].remove(&(small as u32));
        let mut changed: Vec<u32> = Vec::with_capacity(out.len());
        for (c, wc) in out {
            if c as usize == big {
                continue;
            }
            *self.adj[big].entry(c).or_insert(0.0) += wc;
            let nc = &mut self.adj[c as usize];
            nc.remove(&(small as u32));
            *nc.entry(big as u32).or_insert(0.0) += wc;
            changed.push(c);
        }
        self.alive[small] = false;
        if let Some(heap) = heap {
            // A heap entry stays valid while its weight is the pair's current one. Pairs
            // whose weight changed need a new entry; when the survivor's own time dropped
            // (it shed more communication than it gained processing), the pairs of it
            // refused for their time are ranked again, since they may fit now.
            let after = self.load(big);
            self.refused[small] = Vec::new(); // its pairs are among `changed`
            if after < before {
                let again = std::mem::take(&mut self.refused[big]);
                changed.extend(
                    again
                        .into_iter()
                        .filter(|&c| self.alive[c as usize] && self.adj[big].contains_key(&c)),
                );
            }
            changed.sort_unstable();
            changed.dedup();
            for c in changed {
                heap.push(Pair {
                    w: self.adj[big][&c],
                    a: big as u32,
                    b: c,
                });
            }
        }
        big
    }
}

/// Most distinct speeds for which ALLOC's first fit keeps a tree per class
/// ([`ClassTrees`]); above, it scans the kept clusters, each checked in full.
pub(crate) const CLASS_TREES: usize = 16;

/// ALLOC's first fit (step 2) with several speeds. A newcomer that fits on the slowest
/// processor may join a kept cluster of class `l` (the slowest level it fits on) when
/// the two fit together on level `q[l]`: one above the last level below `l` whose slack
/// in Hall's condition is spent, where the merged cluster takes no processor another
/// needs. One tree per class holds its clusters' slack at that level, so the leftmost
/// such place is found in `O(L log n)` instead of a scan over clusters that fit only on a
/// fast processor already taken.
pub(crate) struct ClassTrees {
    pub(crate) q: Vec<usize>,
    pub(crate) trees: Vec<MaxTree>,
    /// The class each slot's cluster is filed under (`u32::MAX`: empty).
    pub(crate) slot_class: Vec<u32>,
}

impl ClassTrees {
    pub(crate) fn new(w: &Work, slots: usize) -> Self {
        let m = w.levels.speed.len();
        ClassTrees {
            q: Self::levels(w),
            trees: (0..m)
                .map(|_| MaxTree::new(slots, f64::NEG_INFINITY))
                .collect(),
            slot_class: vec![u32::MAX; slots],
        }
    }

    /// `q[l]` for every class `l`.
    fn levels(w: &Work) -> Vec<usize> {
        let slack = w.slack.as_ref().expect("several speeds");
        let m = w.levels.speed.len();
        let mut q = vec![0usize; m];
        for l in 1..m {
            q[l] = if slack.min_in(l - 1, l) <= 0 {
                l
            } else {
                q[l - 1]
            };
        }
        q
    }

    /// Cluster `c`'s slack at level `v`.
    fn slack_at(w: &Work, c: usize, v: usize) -> f64 {
        w.limit - w.time_at(c, w.levels.speed[v])
    }

    /// Files cluster `c` in `slot`, under its class.
    fn place(&mut self, w: &Work, slot: usize, c: usize) {
        let old = self.slot_class[slot];
        if old != u32::MAX {
            self.trees[old as usize].set(slot, f64::NEG_INFINITY);
        }
        let l = w.class[c] as usize;
        self.slot_class[slot] = l as u32;
        self.trees[l].set(slot, Self::slack_at(w, c, self.q[l]));
    }

    /// After Hall's slacks changed: the trees of the classes whose level moved are
    /// filled again.
    fn refresh(&mut self, w: &Work, kept: &[usize]) {
        let q = Self::levels(w);
        for l in 0..q.len() {
            if q[l] == self.q[l] {
                continue;
            }
            let mut vals = vec![f64::NEG_INFINITY; self.slot_class.len()];
            for (slot, &c) in kept.iter().enumerate() {
                if self.slot_class[slot] == l as u32 {
                    vals[slot] = Self::slack_at(w, c, q[l]);
                }
            }
            self.trees[l].rebuild(&vals);
        }
        self.q = q;
    }

    /// The leftmost slot from `from` whose cluster and newcomer `x` fit together on
    /// its class's level (their times summed, without the communication they share).
    fn first(&self, w: &Work, from: usize, x: usize) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (l, t) in self.trees.iter().enumerate() {
            let need = w.time_at(x, w.levels.speed[self.q[l]]);
            if let Some(k) = t.first_at_least(from, need) {
                best = Some(best.map_or(k, |b| b.min(k)));
            }
        }
        best
    }
}

/// ALLOC with a fixed cost per ITU between clusters (`D × ITU time`), processors of
/// speed 1.
pub fn alloc(inst: &Instance, frame: f64, itu_cost: f64, memory: Option<f64>) -> Clustering {
    alloc_with_speeds(inst, frame, itu_cost, memory, &SpeedLevels::uniform())
}

/// ALLOC on processors of several speeds (ours; the paper's examples have one): a
/// cluster's time is its processing at speed 1 divided by a speed, plus its
/// communication. A merge must fit on the fastest processor and keep Hall's condition:
/// for every speed, the clusters that fit on no slower processor are at most the
/// processors that fast, so that the clusters, once at most `k`, can each get a
/// processor they fit on (step 3, [`assign`](crate::houstis::mapper::assign)).
pub fn alloc_with_speeds(
    inst: &Instance,
    frame: f64,
    itu_cost: f64,
    memory: Option<f64>,
    levels: &SpeedLevels,
) -> Clustering {
    alloc_core(inst, frame, itu_cost, memory, levels, CLASS_TREES)
}

/// [`alloc_with_speeds`], its first fit with [`ClassTrees`] up to `tree_levels` distinct
/// speeds (the clustering is the same either way).
pub(crate) fn alloc_core(
    inst: &Instance,
    frame: f64,
    itu_cost: f64,
    memory: Option<f64>,
    levels: &SpeedLevels,
    tree_levels: usize,
) -> Clustering {
    let n = inst.len();
    let ext: Vec<f64> = (0..n)
        .map(|i| inst.neighbours(i).iter().map(|x| x.1).sum())
        .collect();
    let limit = frame * (1.0 + 1e-12);
    let (class, slack) = speed_classes(inst, levels, &ext, itu_cost, limit);
    let mut w = Work {
        proc: inst.proc.clone(),
        mem: inst.mem.clone(),
        ext,
        members: (0..n as u32).map(|i| vec![i]).collect(),
        adj: (0..n)
            .map(|i| inst.neighbours(i).iter().copied().collect())
            .collect(),
        alive: vec![true; n],
        refused: vec![Vec::new(); n],
        delta: inst.parallel.map(|p| &p.0),
        own: vec![NO_ROW; n],
        rows: Vec::new(),
        words: n.div_ceil(64),
        limit,
        cap: memory_cap(memory),
        itu_cost,
        levels,
        fastest: levels.speed[0],
        class,
        slack,
    };
    merge_pairs(inst, &mut w);
    // Without Δ (step 2), pairs without communication between them merge too: first fit,
    // heaviest first.
    let mut rest: Vec<usize> = (0..n).filter(|&i| w.alive[i]).collect();
    rest.sort_by(|&x, &y| w.load(y).total_cmp(&w.load(x)).then(x.cmp(&y)));
    let kept = if w.delta.is_some() {
        rest
    } else {
        first_fit(&mut w, rest, tree_levels)
    };
    clustering_of(&w, &kept, n)
}

/// With several speeds, the slowest level each module fits on (0 when none) and Hall's
/// condition over them; with one speed, nothing.
fn speed_classes(
    inst: &Instance,
    levels: &SpeedLevels,
    ext: &[f64],
    itu_cost: f64,
    limit: f64,
) -> (Vec<u32>, Option<Slack>) {
    if levels.speed.len() <= 1 {
        return (Vec::new(), None);
    }
    let class: Vec<u32> = (0..inst.len())
        .map(|i| {
            levels
                .class(inst.proc[i], ext[i] * itu_cost, limit)
                .unwrap_or(0) as u32
        })
        .collect();
    let m = levels.speed.len() - 1;
    let mut init: Vec<i64> = levels.upto[..m].iter().map(|&u| u as i64).collect();
    let mut below = vec![0i64; m + 1];
    for &c in &class {
        below[c as usize] += 1;
    }
    let mut seen = 0;
    for (l, x) in init.iter_mut().enumerate() {
        seen += below[l];
        *x -= seen;
    }
    (class, Some(Slack::new(&init)))
}

/// Merges communicating clusters, heaviest pair first: the pairs in their first ranking,
/// merged with a heap of the pairs whose weight changed since. Pairs refused for Hall's
/// condition are tried again (after the others) once merges have freed processors, until
/// a pass merges nothing.
fn merge_pairs(inst: &Instance, w: &mut Work) {
    let mut heap: BinaryHeap<Pair> = BinaryHeap::new();
    let mut next = 0;
    let mut pop = |heap: &mut BinaryHeap<Pair>| -> Option<Pair> {
        let first = inst.ranked.get(next);
        match (first, heap.peek()) {
            (Some(f), Some(h)) if h > f => heap.pop(),
            (Some(f), _) => {
                next += 1;
                Some(*f)
            }
            (None, _) => heap.pop(),
        }
    };
    let mut held: Vec<(u32, u32)> = Vec::new();
    loop {
        let mut merged = false;
        while let Some(pair) = pop(&mut heap) {
            let (a, b) = (pair.a as usize, pair.b as usize);
            if !w.alive[a] || !w.alive[b] || w.adj[a].get(&pair.b) != Some(&pair.w) {
                continue;
            }
            match w.verdict(a, b) {
                Verdict::Fits => {
                    w.merge(a, b, Some(&mut heap));
                    merged = true;
                }
                Verdict::Time => {
                    w.refused[a].push(b as u32);
                    w.refused[b].push(a as u32);
                }
                Verdict::Hall => held.push((pair.a, pair.b)),
                Verdict::Never => {}
            }
        }
        if held.is_empty() || !merged {
            break;
        }
        for (a, b) in held.drain(..) {
            if let (true, true, Some(&wt)) = (
                w.alive[a as usize],
                w.alive[b as usize],
                w.adj[a as usize].get(&b),
            ) {
                heap.push(Pair { w: wt, a, b });
            }
        }
    }
}

/// First fit of the clusters `rest` (heaviest first): each goes to the leftmost kept
/// cluster whose slack holds the newcomer's whole time (a tree of slacks finds it), or
/// an earlier one it communicates with (their merge sheds that communication). Returns
/// the clusters kept.
fn first_fit(w: &mut Work, rest: Vec<usize>, tree_levels: usize) -> Vec<usize> {
    let mut kept: Vec<usize> = Vec::new();
    let mut slack = MaxTree::new(rest.len(), f64::NEG_INFINITY);
    let mut at: KeyMap<u32, usize> = KeyMap::default();
    let mut classes = (w.slack.is_some() && w.levels.speed.len() <= tree_levels)
        .then(|| ClassTrees::new(w, rest.len()));
    for x in rest {
        let need = w.load(x);
        // the next place from a slot on: for a newcomer that fits on the slowest
        // processor, among the Hall-safe places only
        let next = |from: usize| match &classes {
            Some(t) if w.class[x] as usize == w.levels.speed.len() - 1 => t.first(w, from, x),
            _ => slack.first_at_least(from, need),
        };
        let mut home = None;
        let mut from = 0;
        while let Some(k) = next(from) {
            if w.fits(kept[k], x) {
                home = Some(k);
                break;
            }
            from = k + 1;
        }
        for &c in w.adj[x].keys() {
            if let Some(&k) = at.get(&c) {
                if home.is_none_or(|h| k < h) && w.fits(kept[k], x) {
                    home = Some(k);
                }
            }
        }
        let k = match home {
            Some(k) => {
                at.remove(&(kept[k] as u32));
                kept[k] = w.merge(kept[k], x, None);
                k
            }
            None => {
                kept.push(x);
                kept.len() - 1
            }
        };
        at.insert(kept[k] as u32, k);
        slack.set(k, w.limit - w.load(kept[k]));
        if let Some(t) = &mut classes {
            t.place(w, k, kept[k]);
            t.refresh(w, &kept);
        }
    }
    kept
}

/// The clustering of the `n` modules into the clusters `kept`, numbered by their
/// smallest member, and whether it fits the frame, the memory and Hall's condition.
fn clustering_of(w: &Work, kept: &[usize], n: usize) -> Clustering {
    let mut firsts: Vec<(u32, usize)> = kept
        .iter()
        .map(|&c| {
            (
                *w.members[c].iter().min().expect("a cluster has members"),
                c,
            )
        })
        .collect();
    firsts.sort_unstable();
    let mut cluster = vec![0u32; n];
    let mut feasible = w
        .slack
        .as_ref()
        .is_none_or(|s| s.min_in(0, usize::MAX) >= 0);
    for (id, &(_, c)) in firsts.iter().enumerate() {
        feasible &= w.load(c) <= w.limit && w.mem[c] <= w.cap;
        for &m in &w.members[c] {
            cluster[m as usize] = id as u32;
        }
    }
    Clustering {
        cluster,
        count: firsts.len(),
        feasible,
        rho: 0.0,
        delay: 0.0,
    }
}

/// ITUs between module `i` and modules of other clusters.
pub(crate) fn outside(inst: &Instance, cluster: &[u32], i: usize) -> f64 {
    inst.neighbours(i)
        .iter()
        .filter(|&&(j, _)| cluster[j as usize] != cluster[i])
        .map(|x| x.1)
        .sum()
}

/// ITUs between different clusters.
pub(crate) fn cut(inst: &Instance, cluster: &[u32]) -> f64 {
    (0..inst.len())
        .map(|i| outside(inst, cluster, i))
        .sum::<f64>()
        / 2.0
}

/// ALLOC(T) with the delay settled against its own clustering, starting from the load
/// `rho`.
pub fn alloc_settled(inst: &Instance, frame: f64, machine: &Machine, rho: f64) -> Clustering {
    let mut rho = rho;
    let mut delay = machine.model.analyse(rho).delay;
    let levels = SpeedLevels::new(&machine.speeds);
    let mut best = None;
    for _ in 0..DELAY_ROUNDS {
        let mut c = alloc_with_speeds(
            inst,
            frame,
            delay * machine.itu_time,
            machine.memory,
            &levels,
        );
        c.rho = rho;
        c.delay = delay;
        let new_rho = inst.rho(cut(inst, &c.cluster), machine);
        let new_delay = machine.model.analyse(new_rho).delay;
        let settled = (new_delay - delay).abs() <= 1e-9 * delay.max(1.0);
        best = Some(c);
        if settled {
            break;
        }
        rho = new_rho;
        delay = new_delay;
    }
    best.expect("at least one round")
}

/// The smallest frame (to `tolerance`) whose clustering fits and has at most `target`
/// clusters, by multisection; `Err` with the clustering of a frame that holds everything
/// when even that does not reach the target.
/// Frames after the first start the delay from the load of the best clustering so far.
/// `progress` is told of each round of frames, of the rounds expected: each round
/// narrows the interval `samples + 1` times, until it is within `tolerance` of its top.
pub fn search_frame(
    inst: &Instance,
    machine: &Machine,
    target: usize,
    tolerance: f64,
    samples: usize,
    pool: Option<&rayon::ThreadPool>,
    progress: &dyn Progress,
) -> Result<(f64, Clustering), Clustering> {
    let samples = samples.max(1);
    let work: f64 = inst.proc.iter().sum();
    let biggest = inst.proc.iter().copied().fold(0.0, f64::max);
    let start_rho = inst.rho(inst.total_comm(), machine);
    let worst_delay = machine.model.analyse(start_rho).delay;
    // With this frame every merge fits in time, on any processor: all the work and all
    // the communication.
    let mut hi = (work / machine.slowest() + inst.total_comm() * machine.itu_time * worst_delay)
        * 1.01
        + 1.0;
    let ok = |c: &Clustering| c.feasible && c.count <= target;
    let at_hi = alloc_settled(inst, hi, machine, start_rho);
    if !ok(&at_hi) {
        return Err(at_hi);
    }
    let mut best = at_hi;
    let mut lo =
        (biggest / machine.fastest()).max(work / machine.fastest_sum(target)) * (1.0 - 1e-9);
    let width = hi - lo;
    let mut round = 0u64;
    while hi - lo > tolerance * hi {
        let frames: Vec<f64> = (1..=samples)
            .map(|i| lo + (hi - lo) * i as f64 / (samples + 1) as f64)
            .collect();
        let rho = best.rho;
        let settle = |&t: &f64| alloc_settled(inst, t, machine, rho);
        let runs: Vec<Clustering> = match pool {
            Some(pool) => pool.install(|| frames.par_iter().map(settle).collect()),
            None => frames.iter().map(settle).collect(),
        };
        let before = (lo, hi);
        match runs.iter().position(ok) {
            Some(i) => {
                if i > 0 {
                    lo = frames[i - 1];
                }
                hi = frames[i];
                best = runs.into_iter().nth(i).expect("i is in range");
            }
            None => lo = frames[samples - 1],
        }
        if (lo, hi) == before {
            break; // the frames no longer move (floating-point spacing)
        }
        round += 1;
        let rounds = (width / (tolerance * hi)).ln() / ((samples + 1) as f64).ln();
        progress.step(round, (rounds.ceil() as u64).max(round));
    }
    Ok((hi, best))
}

/// The longest time of a cluster on the fastest processor: processing plus ITUs to
/// other clusters × `itu_cost`.
pub(crate) fn max_load(inst: &Instance, cluster: &[u32], itu_cost: f64, fastest: f64) -> f64 {
    let count = cluster.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut load = vec![0.0f64; count];
    for i in 0..inst.len() {
        load[cluster[i] as usize] += inst.proc[i] / fastest + outside(inst, cluster, i) * itu_cost;
    }
    load.into_iter().fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator.
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    #[test]
    fn slack_tree_matches_a_plain_array() {
        let mut r = Lcg(3);
        for n in [1usize, 2, 3, 7, 16, 33] {
            let init: Vec<i64> = (0..n).map(|_| r.below(9) as i64 - 2).collect();
            let mut plain = init.clone();
            let mut t = Slack::new(&init);
            for _ in 0..300 {
                let from = r.below(n as u64 + 1) as usize;
                let d = r.below(5) as i64 - 2;
                t.add_from(from, d);
                for x in plain.iter_mut().skip(from) {
                    *x += d;
                }
                let lo = r.below(n as u64 + 1) as usize;
                let hi = r.below(n as u64 + 2) as usize;
                let want = plain[lo.min(n)..hi.clamp(lo.min(n), n)]
                    .iter()
                    .copied()
                    .min()
                    .unwrap_or(i64::MAX);
                assert_eq!(t.min_in(lo, hi), want, "n {n} lo {lo} hi {hi}");
            }
        }
    }

    #[test]
    fn class_trees_give_the_first_fit_of_the_scan() {
        // ALLOC without Δ (its first fit) on random graphs and speeds: the first fit
        // through a tree per class clusters exactly as the plain scan does.
        let mut r = Lcg(11);
        let mut merged = 0;
        for case in 0..200 {
            let n = 20 + r.below(200) as usize;
            let proc: Vec<f64> = (0..n).map(|_| 1.0 + r.below(30) as f64).collect();
            let mem = vec![1.0; n];
            let links = r.below(2 * n as u64) as usize;
            let pairs: Vec<(u32, u32, f64)> = (0..links)
                .map(|_| {
                    (
                        r.below(n as u64) as u32,
                        r.below(n as u64) as u32,
                        1.0 + r.below(5) as f64,
                    )
                })
                .collect();
            let inst = Instance::build(proc.clone(), mem, pairs.into_iter(), None);
            let k = 2 + r.below(12) as usize;
            let palette = [0.5, 1.0, 1.5, 2.0, 3.0, 4.0];
            let mut speeds: Vec<f64> = (0..k)
                .map(|_| palette[r.below(2 + case as u64 % 5) as usize])
                .collect();
            speeds[0] = 4.0; // at least two levels
            speeds[1] = 1.0;
            let levels = SpeedLevels::new(&speeds);
            let work: f64 = proc.iter().sum();
            let frame = work / k as f64 * (0.6 + r.below(100) as f64 / 50.0);
            let memory = (case % 3 == 0).then_some(n as f64 / 3.0);
            let cost = r.below(3) as f64 * 0.5;
            let fast = alloc_core(&inst, frame, cost, memory, &levels, CLASS_TREES);
            let scan = alloc_core(&inst, frame, cost, memory, &levels, 0);
            assert_eq!(fast, scan, "case {case}");
            merged += n - fast.count;
        }
        assert!(merged > 1000, "the cases merge: {merged}");
    }
}
