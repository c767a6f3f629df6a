//! The machine the Algorithm Mapper maps onto: processors (of one or several speeds, with
//! an optional memory each) joined by one of the interconnects of
//! [`crate::houstis::interconnect`], and the speed levels and slack tree that keep Hall's
//! condition while ALLOC assigns clusters to processors of several speeds.

use crate::error::Error;
use crate::houstis::interconnect::{DelayModel, DelayReading, Interconnect};

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
    /// The interconnect's delay model for the processors, in the queue reading unless
    /// [`Machine::with_delay_reading`] chose another.
    pub model: DelayModel,
}

/// A processor's memory with room for rounding (infinite when unbounded).
pub(crate) fn memory_cap(memory: Option<f64>) -> f64 {
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

    /// The machine with its interconnect's delay in `reading`.
    pub fn with_delay_reading(mut self, reading: DelayReading) -> Result<Self, Error> {
        self.model = DelayModel::with_reading(self.interconnect, self.processors, reading)?;
        Ok(self)
    }

    /// One speed per processor, each finite and above 0.
    pub(crate) fn check_speeds(&self) -> Result<(), Error> {
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
    pub(crate) fn mean_speed(&self) -> f64 {
        self.speeds.iter().sum::<f64>() / self.speeds.len().max(1) as f64
    }

    /// The sum of the `count` fastest speeds (beyond `k`, the slowest again).
    pub(crate) fn fastest_sum(&self, count: usize) -> f64 {
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
    pub(crate) speed: Vec<f64>,
    /// `upto[l]`: processors of speed at least `speed[l]`.
    pub(crate) upto: Vec<u32>,
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
    pub(crate) fn class(&self, proc: f64, comm: f64, limit: f64) -> Option<usize> {
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
pub(crate) struct Slack {
    pub(crate) n: usize,
    pub(crate) min: Vec<i64>,
    pub(crate) add: Vec<i64>,
}

impl Slack {
    pub(crate) fn new(init: &[i64]) -> Self {
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

    pub(crate) fn build(&mut self, node: usize, lo: usize, hi: usize, init: &[i64]) {
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
    pub(crate) fn add_from(&mut self, from: usize, d: i64) {
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
    pub(crate) fn min_in(&self, lo: usize, hi: usize) -> i64 {
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
