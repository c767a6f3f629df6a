//! The Algorithm Mapper's allocation (Houstis et al. 1989, sections 3-4): ALLOC clusters
//! the modules of a precedence graph under a time frame `T`, a search over `T` finds the
//! shortest frame `T_PAR`, and a simulation of the schedule gives `T_REAL`.
//!
//! * **ALLOC(T)**: every module starts as its own cluster. The pair of clusters with the
//!   most communication (the sum of `l'` between them) merges first, if (a) no two of
//!   their modules can run in parallel (`Δ`, step 1 only), (b) the merged cluster's
//!   processing plus communication time fits in `T`, and (c) its memory fits in a
//!   processor's. A cluster's communication time is its ITUs to other clusters × the time
//!   of an ITU × the interconnect's delay `D` ([`crate::houstis::interconnect`]). After a
//!   merge, the new cluster's pairs whose communication changed are ranked again, and when
//!   its time dropped, so are its pairs refused before for their time. Without `Δ` (step
//!   2), pairs that do not communicate come last: they merge first-fit, the heaviest
//!   clusters first.
//! * **Delay**: `D` depends on the load `ρ` = (ITUs between clusters × ITU time) /
//!   processing time, and the clustering depends on `D`; ALLOC starts from the load of the
//!   unclustered graph (the search's first frame) or of the best clustering so far (its
//!   later frames) and is run again with the load of its own result until `D` settles (at
//!   most [`DELAY_ROUNDS`] runs).
//! * **`T_PAR`**: the shortest frame for which the clusters reach their target, read as
//!   the longest cluster time (processing and communication) of the clustering the search
//!   ends with, at the delay of its load (the search's frame may differ from it when the
//!   delay had not settled).
//! * **The frame**: the paper's multisection. A number of frames ([`SAMPLES`] by default)
//!   spread over an interval are clustered in parallel; the interval shrinks to the gap
//!   before the smallest frame that reaches the target number of clusters, until it is
//!   shorter than the tolerance.
//! * **Step 1** targets the assigned parallelism (default: the processors). Where `Δ`
//!   keeps more clusters than the target even with an unbounded frame, the target becomes
//!   the fewest clusters reached. **Step 2** (parallelism reduction), when there are more
//!   clusters than processors: the clusters become modules, `Δ` is dropped, and the search
//!   runs again with the processors as target. **Step 3**: cluster `c` (numbered by its
//!   first module) goes to processor `c`.
//! * **Speeds** (ours; the paper lists them among ALLOC's inputs, its examples have
//!   none): a module runs in `m'/speed`. ALLOC keeps every merge within the frame on the
//!   fastest processor and under Hall's condition (for every speed, the clusters that fit
//!   on no slower processor are at most the processors that fast), and step 3 becomes the
//!   assignment with the least longest time ([`assign`]).
//! * **Schedule**: every module runs once for `m'_i / speed` plus the communication time of its
//!   ITUs to modules on other processors (the processor is busy while it transfers), when
//!   all its predecessors in the precedence DAG have finished; an idle processor takes its
//!   ready module first in topological order ([`ScheduleSim`]).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use crate::max_tree::MaxTree;
use rustc_hash::FxHashMap as KeyMap;

use rayon::prelude::*;

use crate::error::Error;
use crate::houstis::interconnect::{DelayModel, Interconnect};
use crate::houstis::precedence::{BitMatrix, Dag, Deterministic, ParallelMatrix, PrecedenceGraph};

/// Frames clustered per round of the multisection, by default.
pub const SAMPLES: usize = 4;

/// Most ALLOC runs per frame while the delay settles.
pub const DELAY_ROUNDS: usize = 6;

/// The machine.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    pub processors: u32,
    pub interconnect: Interconnect,
    /// Transfer time of one ITU without contention (`1/μ`).
    pub itu_time: f64,
    /// Memory of a processor (`None`: unbounded).
    pub memory: Option<f64>,
    /// Relative speed of each processor: a module of time `m'` runs there in
    /// `m' / speed` (1 everywhere unless [`Machine::with_speeds`] set them).
    pub speeds: Vec<f64>,
    /// The interconnect's delay model for the processors.
    pub model: DelayModel,
}

/// A processor's memory with room for rounding (infinite when unbounded).
fn memory_cap(memory: Option<f64>) -> f64 {
    memory.unwrap_or(f64::INFINITY) * (1.0 + 1e-12)
}

impl Machine {
    /// A machine; errors if the interconnect does not suit the processors, or the ITU
    /// time or memory is negative or not finite.
    pub fn new(
        processors: u32,
        interconnect: Interconnect,
        itu_time: f64,
        memory: Option<f64>,
    ) -> Result<Self, Error> {
        if !(itu_time.is_finite() && itu_time >= 0.0) {
            return Err(Error::Config(format!(
                "the ITU time must be finite and >= 0, not {itu_time}"
            )));
        }
        if let Some(m) = memory.filter(|m| !(m.is_finite() && *m >= 0.0)) {
            return Err(Error::Config(format!(
                "a processor's memory must be finite and >= 0, not {m}"
            )));
        }
        Ok(Machine {
            processors,
            interconnect,
            itu_time,
            memory,
            speeds: vec![1.0; processors as usize],
            model: DelayModel::new(interconnect, processors)?,
        })
    }

    /// The machine with these processor speeds, one per processor, each finite and
    /// above 0 (a module of time `m'` runs in `m' / speed`; communication does not
    /// depend on them).
    pub fn with_speeds(mut self, speeds: Vec<f64>) -> Result<Self, Error> {
        self.speeds = speeds;
        self.check_speeds()?;
        Ok(self)
    }

    /// One speed per processor, each finite and above 0.
    fn check_speeds(&self) -> Result<(), Error> {
        if self.speeds.len() != self.processors as usize {
            return Err(Error::Config(format!(
                "{} processor speeds given for {} processors",
                self.speeds.len(),
                self.processors
            )));
        }
        if let Some(s) = self.speeds.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
            return Err(Error::Config(format!(
                "a processor's speed must be finite and above 0, not {s}"
            )));
        }
        Ok(())
    }

    /// The fastest speed.
    pub fn fastest(&self) -> f64 {
        self.speeds.iter().copied().fold(0.0, f64::max)
    }

    /// The slowest speed.
    pub fn slowest(&self) -> f64 {
        self.speeds.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// Whether the processors run at different speeds.
    pub fn mixed_speeds(&self) -> bool {
        self.speeds.iter().any(|&s| s != self.speeds[0])
    }

    /// The mean speed: the machine processes `work` in about `work / (k · mean)`.
    fn mean_speed(&self) -> f64 {
        self.speeds.iter().sum::<f64>() / self.speeds.len().max(1) as f64
    }

    /// The sum of the `count` fastest speeds (beyond `k`, the slowest again).
    fn fastest_sum(&self, count: usize) -> f64 {
        let mut s = self.speeds.clone();
        s.sort_by(|a, b| b.total_cmp(a));
        let slowest = s.last().copied().unwrap_or(1.0);
        s.iter().take(count).sum::<f64>() + count.saturating_sub(s.len()) as f64 * slowest
    }
}

/// The distinct speeds of a machine, fastest first, with how many processors run at
/// least as fast: ALLOC's view of who can take a cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeedLevels {
    speed: Vec<f64>,
    /// `upto[l]`: processors of speed at least `speed[l]`.
    upto: Vec<u32>,
}

impl SpeedLevels {
    /// The levels of these speeds (any order; none: [`SpeedLevels::uniform`]).
    pub fn new(speeds: &[f64]) -> Self {
        if speeds.is_empty() {
            return Self::uniform();
        }
        let mut s = speeds.to_vec();
        s.sort_by(|a, b| b.total_cmp(a));
        let mut speed: Vec<f64> = Vec::new();
        let mut upto: Vec<u32> = Vec::new();
        for (i, &x) in s.iter().enumerate() {
            if speed.last() != Some(&x) {
                speed.push(x);
                upto.push(0);
            }
            *upto.last_mut().expect("pushed") = i as u32 + 1;
        }
        SpeedLevels { speed, upto }
    }

    /// Processors of speed 1 only (one level: no constraint between levels).
    pub fn uniform() -> Self {
        SpeedLevels {
            speed: vec![1.0],
            upto: vec![1],
        }
    }

    /// The slowest level on which processing `proc` (at speed 1) plus `comm` fits in
    /// `limit`, or `None` when it does not fit even on the fastest.
    fn class(&self, proc: f64, comm: f64, limit: f64) -> Option<usize> {
        if proc / self.speed[0] + comm > limit {
            return None;
        }
        // the levels it fits on are a prefix: find its end.
        let (mut lo, mut hi) = (0usize, self.speed.len() - 1);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if proc / self.speed[mid] + comm <= limit {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Some(lo)
    }
}

/// Hall's condition for clusters that need a fast processor. For each level `l` but the
/// slowest, `slack[l]` = processors of level `l` or faster − clusters that fit on no
/// slower level; every cluster finds a processor it fits on (with at most `k` clusters)
/// while no slack is negative. A segment tree with additions on suffixes and minima of
/// ranges.
struct Slack {
    n: usize,
    min: Vec<i64>,
    add: Vec<i64>,
}

impl Slack {
    fn new(init: &[i64]) -> Self {
        let n = init.len();
        let mut t = Slack {
            n,
            min: vec![0; 4 * n.max(1)],
            add: vec![0; 4 * n.max(1)],
        };
        if n > 0 {
            t.build(1, 0, n, init);
        }
        t
    }

    fn build(&mut self, node: usize, lo: usize, hi: usize, init: &[i64]) {
        if hi - lo == 1 {
            self.min[node] = init[lo];
            return;
        }
        let mid = (lo + hi) / 2;
        self.build(2 * node, lo, mid, init);
        self.build(2 * node + 1, mid, hi, init);
        self.min[node] = self.min[2 * node].min(self.min[2 * node + 1]);
    }

    /// Adds `d` to the slacks of levels `from..`.
    fn add_from(&mut self, from: usize, d: i64) {
        if from < self.n {
            self.update(1, 0, self.n, from, d);
        }
    }

    fn update(&mut self, node: usize, lo: usize, hi: usize, from: usize, d: i64) {
        if hi <= from {
            return;
        }
        if from <= lo {
            self.min[node] += d;
            self.add[node] += d;
            return;
        }
        let mid = (lo + hi) / 2;
        self.update(2 * node, lo, mid, from, d);
        self.update(2 * node + 1, mid, hi, from, d);
        self.min[node] = self.min[2 * node].min(self.min[2 * node + 1]) + self.add[node];
    }

    /// The least slack of levels `lo..hi` (`i64::MAX` when empty).
    fn min_in(&self, lo: usize, hi: usize) -> i64 {
        let hi = hi.min(self.n);
        if lo >= hi {
            return i64::MAX;
        }
        self.query(1, 0, self.n, lo, hi)
    }

    fn query(&self, node: usize, nlo: usize, nhi: usize, lo: usize, hi: usize) -> i64 {
        if hi <= nlo || nhi <= lo {
            return i64::MAX;
        }
        if lo <= nlo && nhi <= hi {
            return self.min[node];
        }
        let mid = (nlo + nhi) / 2;
        let m =
            self.query(2 * node, nlo, mid, lo, hi)
                .min(self.query(2 * node + 1, mid, nhi, lo, hi));
        if m == i64::MAX {
            m
        } else {
            m + self.add[node]
        }
    }
}

/// Parameters of [`algorithm_mapper`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AllocParams {
    /// Step 1's target (the assigned degree of parallelism); default the processors.
    pub parallelism: Option<u32>,
    /// Relative width of the final frame interval.
    pub tolerance: f64,
    /// Frames clustered (in parallel) per round of the multisection.
    pub samples: usize,
}

impl Default for AllocParams {
    fn default() -> Self {
        AllocParams {
            parallelism: None,
            tolerance: 1e-4,
            samples: SAMPLES,
        }
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
    ranked: Vec<Pair>,
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

    fn build(
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

    fn neighbours(&self, i: usize) -> &[(u32, f64)] {
        &self.adj[self.first[i] as usize..self.first[i + 1] as usize]
    }

    /// Total communication `Σ l'` (each pair once).
    fn total_comm(&self) -> f64 {
        self.adj.iter().map(|x| x.1).sum::<f64>() / 2.0
    }

    /// Load `ρ` when the ITUs between clusters are `cut` (the processing at the mean
    /// speed, processors not yet chosen).
    fn rho(&self, cut: f64, machine: &Machine) -> f64 {
        let work = self.proc.iter().sum::<f64>() / machine.mean_speed();
        rho_of(cut, work, machine)
    }
}

/// Load `ρ` = (ITUs between processors × ITU time) / processing time.
fn rho_of(cut: f64, work: f64, machine: &Machine) -> f64 {
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
struct Pair {
    w: f64,
    a: u32,
    b: u32,
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
struct Work<'a> {
    proc: Vec<f64>,
    mem: Vec<f64>,
    /// ITUs to other clusters.
    ext: Vec<f64>,
    members: Vec<Vec<u32>>,
    adj: Vec<KeyMap<u32, f64>>,
    alive: Vec<bool>,
    /// Pairs of each cluster refused for their time (the heap gave them up).
    refused: Vec<Vec<u32>>,
    /// `Δ`, whose row `c` serves cluster `c` until it first merges.
    delta: Option<&'a BitMatrix>,
    /// Rows of the clusters that have merged (the modules some member can run in parallel
    /// with), `rows[own[c]]`; `NO_ROW` while the cluster uses `Δ`'s row.
    own: Vec<u32>,
    rows: Vec<u64>,
    words: usize,
    limit: f64,
    cap: f64,
    itu_cost: f64,
    /// The machine's speeds; `fastest` is the first level's.
    levels: &'a SpeedLevels,
    fastest: f64,
    /// The slowest level each cluster fits on (0 when none) and Hall's condition over
    /// them (`None` with one level: nothing to hold).
    class: Vec<u32>,
    slack: Option<Slack>,
}

const NO_ROW: u32 = u32::MAX;

/// Whether two clusters may merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
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
const CLASS_TREES: usize = 16;

/// ALLOC's first fit (step 2) with several speeds. A newcomer that fits on the slowest
/// processor may join a kept cluster of class `l` (the slowest level it fits on) when
/// the two fit together on level `q[l]`: one above the last level below `l` whose slack
/// in Hall's condition is spent, where the merged cluster takes no processor another
/// needs. One tree per class holds its clusters' slack at that level, so the leftmost
/// such place is found in `O(L log n)` instead of a scan over clusters that fit only on a
/// fast processor already taken.
struct ClassTrees {
    q: Vec<usize>,
    trees: Vec<MaxTree>,
    /// The class each slot's cluster is filed under (`u32::MAX`: empty).
    slot_class: Vec<u32>,
}

impl ClassTrees {
    fn new(w: &Work, slots: usize) -> Self {
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
/// processor they fit on (step 3, [`assign`]).
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
fn alloc_core(
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
    let (class, slack) = if levels.speed.len() > 1 {
        let class: Vec<u32> = (0..n)
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
    } else {
        (Vec::new(), None)
    };
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
    // The pairs in their first ranking, merged with a heap of the pairs whose weight
    // changed since.
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
    // Pairs refused for Hall's condition, tried again (after the others) once merges
    // have freed processors, until a pass merges nothing.
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
    // Without Δ (step 2), pairs without communication between them merge too: first fit,
    // heaviest first.
    let mut rest: Vec<usize> = (0..n).filter(|&i| w.alive[i]).collect();
    rest.sort_by(|&x, &y| w.load(y).total_cmp(&w.load(x)).then(x.cmp(&y)));
    let mut kept: Vec<usize> = Vec::new();
    if w.delta.is_some() {
        kept = rest;
    } else {
        // First fit: the leftmost kept cluster whose slack holds the newcomer's whole time
        // (a tree of slacks finds it), or an earlier one it communicates with (their
        // merge sheds that communication).
        let mut slack = MaxTree::new(rest.len(), f64::NEG_INFINITY);
        let mut at: KeyMap<u32, usize> = KeyMap::default();
        let mut classes = (w.slack.is_some() && w.levels.speed.len() <= tree_levels)
            .then(|| ClassTrees::new(&w, rest.len()));
        for x in rest {
            let need = w.load(x);
            // the next place from a slot on: for a newcomer that fits on the slowest
            // processor, among the Hall-safe places only
            let next = |from: usize| match &classes {
                Some(t) if w.class[x] as usize == w.levels.speed.len() - 1 => t.first(&w, from, x),
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
                t.place(&w, k, kept[k]);
                t.refresh(&w, &kept);
            }
        }
    }
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
fn outside(inst: &Instance, cluster: &[u32], i: usize) -> f64 {
    inst.neighbours(i)
        .iter()
        .filter(|&&(j, _)| cluster[j as usize] != cluster[i])
        .map(|x| x.1)
        .sum()
}

/// ITUs between different clusters.
fn cut(inst: &Instance, cluster: &[u32]) -> f64 {
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
pub fn search_frame(
    inst: &Instance,
    machine: &Machine,
    target: usize,
    tolerance: f64,
    samples: usize,
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
    while hi - lo > tolerance * hi {
        let frames: Vec<f64> = (1..=samples)
            .map(|i| lo + (hi - lo) * i as f64 / (samples + 1) as f64)
            .collect();
        let rho = best.rho;
        let runs: Vec<Clustering> = frames
            .par_iter()
            .map(|&t| alloc_settled(inst, t, machine, rho))
            .collect();
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
    }
    Ok((hi, best))
}

/// The longest time of a cluster on the fastest processor: processing plus ITUs to
/// other clusters × `itu_cost`.
fn max_load(inst: &Instance, cluster: &[u32], itu_cost: f64, fastest: f64) -> f64 {
    let count = cluster.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut load = vec![0.0f64; count];
    for i in 0..inst.len() {
        load[cluster[i] as usize] += inst.proc[i] / fastest + outside(inst, cluster, i) * itu_cost;
    }
    load.into_iter().fold(0.0, f64::max)
}

/// Step 1's target, the longest time of its clusters, and how many there are.
pub type Step1 = (usize, f64, usize);

/// One processor's share of the result.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessorLoad {
    /// Processing time of its modules, `Σ m' / speed`.
    pub processing: f64,
    /// Communication time: its ITUs to other processors × ITU time × delay.
    pub communication: f64,
    /// Its modules, in index order.
    pub modules: Vec<u32>,
}

/// The Algorithm Mapper's result.
#[derive(Clone, Debug, PartialEq)]
pub struct AmapResult {
    /// Processor of each module.
    pub processor: Vec<u32>,
    pub loads: Vec<ProcessorLoad>,
    /// Step 1: its target, its longest cluster time and its clusters (`None` without `Δ`).
    pub step1: Option<Step1>,
    /// Whether step 2 (parallelism reduction) ran.
    pub reduced: bool,
    /// `T_seq = Σ m'` on the fastest processor; `T_PAR`, the longest processor time (processing and
    /// communication), the shortest frame the final clustering fits in; `T_REAL`.
    pub t_seq: f64,
    pub t_par: f64,
    /// The frame the last search stopped at (for `alloc-ls`, that of its start).
    pub frame: f64,
    pub t_real: f64,
    /// Load and delay per ITU of the final clustering.
    pub rho: f64,
    pub delay: f64,
    /// Network utilisation and active processors of the queueing model at that load.
    pub utilisation: f64,
    pub model_active: f64,
}

impl AmapResult {
    /// `AP = Σ u_p^i`, `u_p^i = processing / T_PAR`.
    pub fn active(&self) -> f64 {
        self.loads.iter().map(|l| l.processing).sum::<f64>() / self.t_par
    }
    /// `S = T_seq / T_REAL`.
    pub fn speedup(&self) -> f64 {
        self.t_seq / self.t_real
    }
}

/// The Algorithm Mapper: steps 1-3 and the schedule's simulation. `parallel` is `Δ`
/// (`None`: map without it, step 2 only).
pub fn algorithm_mapper(
    g: &PrecedenceGraph,
    det: &Deterministic,
    parallel: Option<&ParallelMatrix>,
    machine: &Machine,
    params: &AllocParams,
) -> Result<AmapResult, Error> {
    check_inputs(g, det, machine, params)?;
    let k = machine.processors as usize;
    let modules = Instance::of_modules(g, det, parallel);
    let (cluster, frame1, step1) = step_one(&modules, machine, params)?;
    let (cluster, frame, reduced) = reduce(g, det, machine, params, cluster, frame1, k)?;
    let processor = step_three(&modules, machine, cluster);
    let mut r = evaluate(g, det, &modules, machine, processor)?;
    r.step1 = step1;
    r.reduced = reduced || parallel.is_none();
    r.frame = frame;
    Ok(r)
}

/// The result of a given assignment (a processor per module): loads, delay, `T_PAR`,
/// `T_REAL`, as for the mapper's own ([`algorithm_mapper`]). Errors if a processor is
/// out of range or the times overflow; memory is not checked ([`memory_excess`]).
pub fn evaluate_assignment(
    g: &PrecedenceGraph,
    det: &Deterministic,
    machine: &Machine,
    processor: Vec<u32>,
) -> Result<AmapResult, Error> {
    check_inputs(g, det, machine, &AllocParams::default())?;
    if processor.len() != g.modules() {
        return Err(Error::Mismatch(format!(
            "the assignment has {} entries for {} modules",
            processor.len(),
            g.modules()
        )));
    }
    if let Some(i) = processor.iter().position(|&p| p >= machine.processors) {
        return Err(Error::Mismatch(format!(
            "module \"{}\" is on processor {} but there are {}",
            g.names[i], processor[i], machine.processors
        )));
    }
    let modules = Instance::of_modules(g, det, None);
    evaluate(g, det, &modules, machine, processor)
}

/// The first processor whose modules need more memory than it has, with that need.
pub fn memory_excess(
    g: &PrecedenceGraph,
    machine: &Machine,
    processor: &[u32],
) -> Option<(u32, f64)> {
    let mut need = vec![0.0f64; machine.processors as usize];
    for (i, &p) in processor.iter().enumerate() {
        need[p as usize] += g.memory[i];
    }
    let cap = memory_cap(machine.memory);
    need.iter()
        .position(|&m| m > cap)
        .map(|p| (p as u32, need[p]))
}

/// Checks the parameters, the times' range and the modules' memory.
fn check_inputs(
    g: &PrecedenceGraph,
    det: &Deterministic,
    machine: &Machine,
    params: &AllocParams,
) -> Result<(), Error> {
    if !(params.tolerance >= 1e-12 && params.tolerance < 1.0) {
        return Err(Error::Config(format!(
            "the frame tolerance must lie in [1e-12, 1), not {}",
            params.tolerance
        )));
    }
    let total_volume: f64 = det.volume.iter().sum::<f64>() * 2.0;
    let worst = machine
        .model
        .analyse(1e6)
        .delay
        .max(machine.model.analyse(0.0).delay);
    // the speeds as with_speeds checks them (the field is public)
    machine.check_speeds()?;
    let t_seq: f64 = det.time.iter().sum::<f64>() / machine.slowest();
    // with the frame search's margin (its first frame)
    if !((t_seq + total_volume * machine.itu_time * worst) * 1.01 + 1.0).is_finite() {
        return Err(Error::Config(
            "the processing and communication times add up beyond the largest float (about 1.8e308)".into(),
        ));
    }
    if let (Some(cap), Some(i)) = (
        machine.memory,
        (0..g.modules()).find(|&i| g.memory[i] > machine.memory.unwrap_or(f64::INFINITY)),
    ) {
        return Err(Error::Mismatch(format!(
            "module \"{}\" needs memory {} but a processor has {cap}",
            g.names[i], g.memory[i]
        )));
    }
    Ok(())
}

/// Step 1 (with `Δ`): clusters for the assigned parallelism, their frame, and
/// `(target, T, clusters)`; without `Δ`, every module alone.
fn step_one(
    modules: &Instance,
    machine: &Machine,
    params: &AllocParams,
) -> Result<(Vec<u32>, f64, Option<Step1>), Error> {
    if modules.parallel.is_none() {
        return Ok(((0..modules.len() as u32).collect(), 0.0, None));
    }
    let k = machine.processors as usize;
    let target = params.parallelism.map_or(k, |p| p as usize).max(1);
    let search = |t: usize| search_frame(modules, machine, t, params.tolerance, params.samples);
    let (f1, c) = match search(target) {
        Ok(found) => found,
        Err(at_hi) => search(at_hi.count).map_err(|_| {
            Error::Mismatch("the modules do not fit in the processors' memory".into())
        })?,
    };
    let t1 = max_load(
        modules,
        &c.cluster,
        c.delay * machine.itu_time,
        machine.fastest(),
    );
    Ok((c.cluster, f1, Some((target, t1, c.count))))
}

/// Step 2 when there are more than `target` clusters: the clusters as modules, without
/// `Δ`, clustered again for `target` processors. Returns the clusters, the frame and
/// whether it ran.
fn reduce(
    g: &PrecedenceGraph,
    det: &Deterministic,
    machine: &Machine,
    params: &AllocParams,
    mut cluster: Vec<u32>,
    frame: f64,
    target: usize,
) -> Result<(Vec<u32>, f64, bool), Error> {
    let count = cluster.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    if count <= target {
        return Ok((cluster, frame, false));
    }
    let mut proc = vec![0.0; count];
    let mut mem = vec![0.0; count];
    for i in 0..g.modules() {
        proc[cluster[i] as usize] += det.time[i];
        mem[cluster[i] as usize] += g.memory[i];
    }
    let pairs = g
        .links
        .iter()
        .zip(&det.volume)
        .map(|(l, &v)| (cluster[l.from as usize], cluster[l.to as usize], v));
    let coarse = Instance::build(proc, mem, pairs, None);
    let (f, c) =
        search_frame(&coarse, machine, target, params.tolerance, params.samples).map_err(|_| {
            Error::Mismatch(format!(
                "the modules do not fit in the memory of {target} processors"
            ))
        })?;
    for x in cluster.iter_mut() {
        *x = c.cluster[*x as usize];
    }
    Ok((cluster, f, true))
}

/// Communication time of every module (its ITUs to modules on other processors × the
/// delay at the assignment's load), and that load's queue state.
fn module_comm(
    modules: &Instance,
    machine: &Machine,
    processor: &[u32],
    comm: &mut [f64],
) -> crate::houstis::interconnect::QueueState {
    let mut cut2 = 0.0;
    for (i, c) in comm.iter_mut().enumerate() {
        *c = outside(modules, processor, i);
        cut2 += *c;
    }
    let work: f64 = modules
        .proc
        .iter()
        .zip(processor)
        .map(|(t, &p)| t / machine.speeds[p as usize])
        .sum();
    let state = machine.model.analyse(rho_of(cut2 / 2.0, work, machine));
    let cost = state.delay * machine.itu_time;
    comm.iter_mut().for_each(|c| *c *= cost);
    state
}

/// Step 3: the processor of each module, given its cluster (at most `k` clusters).
/// With one speed, cluster `c` goes to processor `c`, as in the paper; with several,
/// [`assign`] places the clusters, their communication taken at the delay of the
/// clustering's load.
fn step_three(modules: &Instance, machine: &Machine, cluster: Vec<u32>) -> Vec<u32> {
    if !machine.mixed_speeds() {
        return cluster;
    }
    let count = cluster.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut proc = vec![0.0f64; count];
    let mut ext = vec![0.0f64; count];
    for i in 0..modules.len() {
        proc[cluster[i] as usize] += modules.proc[i];
        ext[cluster[i] as usize] += outside(modules, &cluster, i);
    }
    let cost = machine
        .model
        .analyse(modules.rho(ext.iter().sum::<f64>() / 2.0, machine))
        .delay
        * machine.itu_time;
    let comm: Vec<f64> = ext.iter().map(|e| e * cost).collect();
    let to = assign(&proc, &comm, &machine.speeds);
    cluster.into_iter().map(|c| to[c as usize]).collect()
}

/// The processor of each of at most `speeds.len()` clusters (ours): the assignment with
/// the least longest time `proc[c] / speed + comm[c]`, to a relative `1e-12`. A bisection
/// over that time; for a time `T`, cluster `c` fits on the processors of speed at least
/// `proc[c] / (T − comm[c])`, the fastest ones, so the clusters that fit on fewest
/// processors choose first, each the fastest left (ties: the larger processing first,
/// then the lower cluster; the lower processor).
///
/// # Panics
///
/// If there are more clusters than speeds.
pub fn assign(proc: &[f64], comm: &[f64], speeds: &[f64]) -> Vec<u32> {
    let count = proc.len();
    assert!(count <= speeds.len(), "at most one cluster per processor");
    let mut order: Vec<u32> = (0..speeds.len() as u32).collect();
    order.sort_by(|&a, &b| {
        speeds[b as usize]
            .total_cmp(&speeds[a as usize])
            .then(a.cmp(&b))
    });
    let sorted: Vec<f64> = order.iter().map(|&p| speeds[p as usize]).collect();
    // How many processors cluster c fits on within `t` (a prefix of `sorted`).
    let fits_on = |c: usize, t: f64| -> usize {
        if comm[c] > t {
            return 0;
        }
        sorted.partition_point(|&s| proc[c] / s + comm[c] <= t)
    };
    let picks = |t: f64| -> Option<Vec<u32>> {
        let mut by: Vec<(usize, usize)> = (0..count).map(|c| (fits_on(c, t), c)).collect();
        by.sort_by(|x, y| {
            x.0.cmp(&y.0)
                .then(proc[y.1].total_cmp(&proc[x.1]))
                .then(x.1.cmp(&y.1))
        });
        let mut to = vec![0u32; count];
        for (i, &(room, c)) in by.iter().enumerate() {
            if room <= i {
                return None;
            }
            to[c] = order[i];
        }
        Some(to)
    };
    let slowest = sorted.last().copied().unwrap_or(1.0);
    let mut hi = (0..count)
        .map(|c| proc[c] / slowest + comm[c])
        .fold(0.0, f64::max);
    let mut lo = comm.iter().copied().fold(0.0, f64::max);
    for _ in 0..200 {
        if hi - lo <= 1e-12 * hi {
            break;
        }
        let mid = lo + (hi - lo) / 2.0;
        if picks(mid).is_some() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    picks(hi).expect("every cluster fits on the slowest processor at the top")
}

/// The result of an assignment: loads, delay, `T_PAR`, `T_REAL`.
fn evaluate(
    g: &PrecedenceGraph,
    det: &Deterministic,
    modules: &Instance,
    machine: &Machine,
    processor: Vec<u32>,
) -> Result<AmapResult, Error> {
    let n = g.modules();
    let k = machine.processors as usize;
    let mut comm = vec![0.0f64; n];
    let state = module_comm(modules, machine, &processor, &mut comm);
    let mut loads: Vec<ProcessorLoad> = (0..k)
        .map(|_| ProcessorLoad {
            processing: 0.0,
            communication: 0.0,
            modules: Vec::new(),
        })
        .collect();
    for i in 0..n {
        let p = processor[i] as usize;
        loads[p].processing += det.time[i] / machine.speeds[p];
        loads[p].communication += comm[i];
        loads[p].modules.push(i as u32);
    }
    let t_real = simulate_schedule(g, det, &processor, &comm, &machine.speeds)?;
    // T_PAR: the shortest frame this clustering fits (the search's frame may be longer).
    let t_par = loads
        .iter()
        .map(|l| l.processing + l.communication)
        .fold(0.0, f64::max);
    Ok(AmapResult {
        processor,
        loads,
        step1: None,
        reduced: false,
        t_seq: det.time.iter().sum::<f64>() / machine.fastest(),
        t_par,
        frame: t_par,
        t_real,
        rho: state.rho,
        delay: state.delay,
        utilisation: state.utilisation,
        model_active: state.active,
    })
}

/// A list schedule of `G'` (ours): modules by decreasing bottom level (the longest path
/// of processing times from them to an exit), ties by topological order, each placed on
/// the processor where it would finish first, its links to predecessors on other
/// processors costing ITUs × ITU time × the delay at the load of the unclustered graph.
/// `None` when the memory does not allow it.
pub fn list_schedule(
    g: &PrecedenceGraph,
    det: &Deterministic,
    modules: &Instance,
    machine: &Machine,
) -> Option<Vec<u32>> {
    let n = g.modules();
    let k = machine.processors as usize;
    let cost = machine
        .model
        .analyse(modules.rho(modules.total_comm(), machine))
        .delay
        * machine.itu_time;
    let dag = Dag::new(g, det);
    let mut bottom = vec![0.0f64; n];
    for &v in det.order.iter().rev() {
        let v = v as usize;
        let tail = dag
            .succs(v)
            .iter()
            .map(|&s| bottom[s as usize])
            .fold(0.0, f64::max);
        bottom[v] = det.time[v] + tail;
    }
    let rank = det.positions();
    // ready modules by (bottom level desc, rank asc)
    let mut waiting: Vec<usize> = (0..n).map(|v| dag.preds(v).len()).collect();
    let mut ready: BinaryHeap<(u64, std::cmp::Reverse<u32>, usize)> = BinaryHeap::new();
    for v in 0..n {
        if waiting[v] == 0 {
            ready.push(((bottom[v] + 0.0).to_bits(), std::cmp::Reverse(rank[v]), v));
        }
    }
    let cap = memory_cap(machine.memory);
    let mut avail = vec![0.0f64; k];
    let mut mem = vec![0.0f64; k];
    let mut finish = vec![0.0f64; n];
    let mut processor = vec![0u32; n];
    // The predecessors of the module being placed with their ITUs to it (looked up once,
    // not once per processor).
    let mut preds: Vec<(u32, f64)> = Vec::new();
    while let Some((_, _, v)) = ready.pop() {
        preds.clear();
        preds.extend(dag.preds(v).iter().map(|&u| {
            let w = modules
                .neighbours(v)
                .iter()
                .find(|x| x.0 == u)
                .map_or(0.0, |x| x.1);
            (u, w)
        }));
        let mut best: Option<(f64, usize)> = None;
        for p in 0..k {
            if mem[p] + g.memory[v] > cap {
                continue;
            }
            let mut start = avail[p];
            let mut comm = 0.0;
            for &(u, w) in &preds {
                start = start.max(finish[u as usize]);
                if processor[u as usize] as usize != p {
                    comm += w;
                }
            }
            let end = start + det.time[v] / machine.speeds[p] + comm * cost;
            if best.is_none_or(|(b, _)| end < b) {
                best = Some((end, p));
            }
        }
        let (end, p) = best?;
        processor[v] = p as u32;
        finish[v] = end;
        avail[p] = end;
        mem[p] += g.memory[v];
        for &s in dag.succs(v) {
            let s = s as usize;
            waiting[s] -= 1;
            if waiting[s] == 0 {
                ready.push(((bottom[s] + 0.0).to_bits(), std::cmp::Reverse(rank[s]), s));
            }
        }
    }
    Some(processor)
}

/// Work budget of [`alloc_ls`] by default: each schedule it simulates costs the modules
/// plus the links plus the processors.
pub const LS_BUDGET: u64 = 100_000_000;

/// `alloc-ls` (ours, beyond the paper): the paper's steps 1 and 2 for `k`, `k/2`, `k/4`,
/// … 1 processors (a parallel program may run faster on fewer) and a
/// [`list_schedule`], the assignment with the least `T_REAL` of these, then a local search of `T_REAL` itself: a module on the
/// critical path of the simulated schedule moves to the processor of one of its
/// neighbours, or to one of the least busy (any processor when there are at most 16),
/// when that shortens the schedule (or keeps its
/// length and lowers the sum of the finish times). The delay follows the load of every
/// assignment tried. Stops when no critical module can move for the better, or after
/// `budget` units of work.
pub fn alloc_ls(
    g: &PrecedenceGraph,
    det: &Deterministic,
    parallel: Option<&ParallelMatrix>,
    machine: &Machine,
    params: &AllocParams,
    budget: u64,
) -> Result<AmapResult, Error> {
    check_inputs(g, det, machine, params)?;
    let n = g.modules();
    let k = machine.processors as usize;
    let modules = Instance::of_modules(g, det, parallel);
    let (cluster, frame1, step1) = step_one(&modules, machine, params)?;
    let mut targets = vec![k];
    while *targets.last().expect("not empty") > 1 {
        let t = targets.last().expect("not empty").div_ceil(2);
        targets.push(t);
    }
    // Targets of at least step 1's cluster count leave its clustering as it is: only the
    // first of them (k) is evaluated.
    let count = cluster.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut best: Option<(AmapResult, bool)> = None;
    for &t in &targets {
        if t >= count && t != k {
            continue;
        }
        let Ok((c, frame, reduced)) = reduce(g, det, machine, params, cluster.clone(), frame1, t)
        else {
            continue; // memory: too few processors
        };
        let mut r = evaluate(g, det, &modules, machine, step_three(&modules, machine, c))?;
        r.frame = frame;
        if best.as_ref().is_none_or(|(b, _)| r.t_real < b.t_real) {
            best = Some((r, reduced || parallel.is_none()));
        }
    }
    // A list schedule too: by decreasing bottom level, each module to the processor where
    // it would finish first (paying, on the new processor, its links to predecessors
    // elsewhere at the delay of the unclustered load).
    if let Some(c) = list_schedule(g, det, &modules, machine) {
        let r = evaluate(g, det, &modules, machine, c)?;
        if best.as_ref().is_none_or(|(b, _)| r.t_real < b.t_real) {
            best = Some((r, parallel.is_none()));
        }
    }
    let (start, reduced) = best.ok_or_else(|| {
        Error::Mismatch(format!(
            "the modules do not fit in the memory of {k} processors"
        ))
    })?;
    let mut processor = start.processor.clone();
    let cost = (n + g.links.len() + k) as u64;
    let mut spent = 0u64;
    let mut sim = ScheduleSim::new(g, det, k);
    let mut comm = vec![0.0f64; n];
    let mut mem = vec![0.0f64; k];
    let mut busy = vec![0.0f64; k];
    for i in 0..n {
        mem[processor[i] as usize] += g.memory[i];
    }
    let cap = memory_cap(machine.memory);
    // The durations of the assignment scored, rewritten in place.
    let mut dur = vec![0.0f64; n];
    let mut score = |processor: &[u32], sim: &mut ScheduleSim, comm: &mut Vec<f64>| {
        module_comm(&modules, machine, processor, comm);
        for (((d, t), c), &p) in dur
            .iter_mut()
            .zip(&det.time)
            .zip(comm.iter())
            .zip(processor)
        {
            *d = t / machine.speeds[p as usize] + c;
        }
        sim.run(processor, &dur)
    };
    let better = |a: (f64, f64), b: (f64, f64)| {
        a.0 < b.0 * (1.0 - 1e-12) || (a.0 <= b.0 && a.1 < b.1 * (1.0 - 1e-12))
    };
    let mut current = score(&processor, &mut sim, &mut comm);
    spent += cost;
    let neighbours: Vec<Vec<u32>> = {
        let mut nb = vec![Vec::new(); n];
        for l in &g.links {
            if l.from != l.to {
                nb[l.from as usize].push(l.to);
                nb[l.to as usize].push(l.from);
            }
        }
        nb
    };
    'search: while spent < budget {
        busy.iter_mut().for_each(|b| *b = 0.0);
        for i in 0..n {
            let p = processor[i] as usize;
            busy[p] += det.time[i] / machine.speeds[p] + comm[i];
        }
        // the least busy processors (all of them on small machines).
        let mut idle: Vec<u32> = (0..k as u32).collect();
        idle.sort_by(|&a, &b| {
            busy[a as usize]
                .total_cmp(&busy[b as usize])
                .then(a.cmp(&b))
        });
        idle.truncate(if k <= 16 { k } else { 4 });
        let path = sim.critical_path(&processor);
        for &v in &path {
            let v = v as usize;
            let from = processor[v];
            let mut to: Vec<u32> = neighbours[v]
                .iter()
                .map(|&u| processor[u as usize])
                .collect();
            to.extend_from_slice(&idle);
            to.sort_unstable();
            to.dedup();
            for q in to {
                if q == from || mem[q as usize] + g.memory[v] > cap {
                    continue;
                }
                if spent >= budget {
                    break 'search;
                }
                processor[v] = q;
                let s = score(&processor, &mut sim, &mut comm);
                spent += cost;
                if better(s, current) {
                    current = s;
                    mem[from as usize] -= g.memory[v];
                    mem[q as usize] += g.memory[v];
                    continue 'search;
                }
                processor[v] = from;
            }
        }
        break; // no critical module moves for the better
    }
    // re-simulate the kept assignment (the last run may have been a refused move).
    let mut r = evaluate(g, det, &modules, machine, processor)?;
    r.step1 = step1;
    r.reduced = reduced;
    r.frame = start.frame;
    Ok(r)
}

/// The schedule of `G'`: module `i` runs on `processor[i]` for `duration[i]` without
/// preemption once all its predecessors in the precedence DAG have finished; at every
/// moment, after the modules finishing then are done, each idle processor starts its
/// ready module first in the topological order `det.order`. Buffers are kept between
/// runs.
pub struct ScheduleSim {
    n: usize,
    k: usize,
    dag: Dag,
    /// Number of DAG predecessors of each module.
    preds: Vec<u32>,
    rank: Vec<u32>,
    pending: Vec<u32>,
    start: Vec<f64>,
    finish: Vec<f64>,
    queues: Vec<BinaryHeap<std::cmp::Reverse<(u32, u32)>>>,
    busy: Vec<bool>,
    events: BinaryHeap<std::cmp::Reverse<(u64, u32)>>,
}

impl ScheduleSim {
    /// A simulator of `g`'s DAG (`det`'s back links left out) on `k` processors.
    pub fn new(g: &PrecedenceGraph, det: &Deterministic, k: usize) -> Self {
        let n = g.modules();
        let dag = Dag::new(g, det);
        let preds = (0..n).map(|v| dag.preds(v).len() as u32).collect();
        let rank = det.positions();
        ScheduleSim {
            n,
            k,
            dag,
            preds,
            rank,
            pending: vec![0; n],
            start: vec![0.0; n],
            finish: vec![0.0; n],
            queues: vec![BinaryHeap::new(); k],
            busy: vec![false; k],
            events: BinaryHeap::new(),
        }
    }

    /// The final time and the sum of the finish times.
    ///
    /// # Panics
    ///
    /// If a processor is out of range or a duration is negative or not finite.
    pub fn run(&mut self, processor: &[u32], duration: &[f64]) -> (f64, f64) {
        use std::cmp::Reverse;
        let key = |t: f64| (t + 0.0).to_bits();
        self.pending.copy_from_slice(&self.preds);
        self.busy.iter_mut().for_each(|b| *b = false);
        self.events.clear();
        for v in 0..self.n {
            assert!(
                duration[v].is_finite() && duration[v] >= 0.0,
                "durations are finite"
            );
            if self.pending[v] == 0 {
                self.queues[processor[v] as usize].push(Reverse((self.rank[v], v as u32)));
            }
        }
        let mut dirty: Vec<usize> = (0..self.k).collect();
        let mut now = 0.0f64;
        let (mut makespan, mut total) = (0.0f64, 0.0f64);
        loop {
            for &p in &dirty {
                if self.busy[p] {
                    continue;
                }
                if let Some(Reverse((_, v))) = self.queues[p].pop() {
                    let v = v as usize;
                    self.busy[p] = true;
                    self.start[v] = now;
                    self.finish[v] = now + duration[v];
                    self.events.push(Reverse((key(self.finish[v]), v as u32)));
                }
            }
            dirty.clear();
            let Some(&Reverse((t, _))) = self.events.peek() else {
                break;
            };
            now = f64::from_bits(t);
            while let Some(&Reverse((t2, v))) = self.events.peek() {
                if t2 != t {
                    break;
                }
                self.events.pop();
                let v = v as usize;
                makespan = makespan.max(self.finish[v]);
                total += self.finish[v];
                let p = processor[v] as usize;
                self.busy[p] = false;
                dirty.push(p);
                for &s in self.dag.succs(v) {
                    let s = s as usize;
                    self.pending[s] -= 1;
                    if self.pending[s] == 0 {
                        let q = processor[s] as usize;
                        self.queues[q].push(Reverse((self.rank[s], s as u32)));
                        dirty.push(q);
                    }
                }
            }
            dirty.sort_unstable();
            dirty.dedup();
        }
        (makespan, total + 0.0)
    }

    /// Start times of the last run.
    pub fn starts(&self) -> &[f64] {
        &self.start
    }

    /// Finish times of the last run.
    pub fn finishes(&self) -> &[f64] {
        &self.finish
    }

    /// The modules of a critical path of the last run, last first: from the module that
    /// finished last, back through whatever it started on (a predecessor finishing at its
    /// start, else the module before it on its processor).
    pub fn critical_path(&self, processor: &[u32]) -> Vec<u32> {
        let n = self.n;
        let Some(mut v) =
            (0..n).max_by(|&a, &b| self.finish[a].total_cmp(&self.finish[b]).then(b.cmp(&a)))
        else {
            return Vec::new();
        };
        // the module before each one on its processor.
        let mut by_proc: Vec<Vec<u32>> = vec![Vec::new(); self.k];
        for u in 0..n {
            by_proc[processor[u] as usize].push(u as u32);
        }
        let mut before = vec![u32::MAX; n];
        for list in &mut by_proc {
            list.sort_by(|&a, &b| {
                self.start[a as usize]
                    .total_cmp(&self.start[b as usize])
                    .then(a.cmp(&b))
            });
            for w in list.windows(2) {
                before[w[1] as usize] = w[0];
            }
        }
        let mut path = vec![v as u32];
        loop {
            let s = self.start[v];
            if s <= 0.0 {
                break;
            }
            let next = self
                .dag
                .preds(v)
                .iter()
                .copied()
                .find(|&u| self.finish[u as usize] == s)
                .or_else(|| {
                    Some(before[v]).filter(|&u| u != u32::MAX && self.finish[u as usize] == s)
                });
            match next {
                Some(u) => {
                    v = u as usize;
                    path.push(u);
                }
                None => break,
            }
        }
        path
    }
}

/// `T_REAL`: the schedule of `G'` on `speeds.len()` processors with module `i` on
/// `processor[i]` for `m'_i / speeds[processor[i]] + comm[i]` (see [`ScheduleSim`]).
pub fn simulate_schedule(
    g: &PrecedenceGraph,
    det: &Deterministic,
    processor: &[u32],
    comm: &[f64],
    speeds: &[f64],
) -> Result<f64, Error> {
    let k = speeds.len();
    if let Some(i) = processor.iter().position(|&p| p as usize >= k) {
        return Err(Error::Mismatch(format!(
            "module {i} is on processor {} but there are {k}",
            processor[i]
        )));
    }
    let duration: Vec<f64> = det
        .time
        .iter()
        .zip(comm)
        .zip(processor)
        .map(|((t, c), &p)| t / speeds[p as usize] + c)
        .collect();
    if duration.iter().any(|d| !d.is_finite()) {
        return Err(Error::Config(
            "a module's time overflows (beyond about 1.8e308)".into(),
        ));
    }
    Ok(ScheduleSim::new(g, det, k).run(processor, &duration).0)
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
