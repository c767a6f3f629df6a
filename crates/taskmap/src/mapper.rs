//! The mapper role and the run context. The registry of algorithms is
//! [`crate::registry`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::error::Error;
use crate::mapping::Mapping;
use crate::problem::Problem;

/// A mapping algorithm.
pub trait Mapper: Send + Sync {
    /// The registry name.
    fn name(&self) -> &'static str;
    /// Maps every task of `problem` to a PE.
    fn map(&self, problem: &Problem, ctx: &mut RunContext) -> Result<Mapping, Error>;
    /// Whether it stops improving at [`RunContext::deadline`] (default: it ignores it).
    fn honours_deadline(&self) -> bool {
        false
    }
}

/// An observer of a run's progress, for a display (the CLI draws a bar on a terminal).
/// Runs report their phases and coarse steps only (a level, a V-cycle, a member of the
/// population, a few thousand annealing moves, a batch of simulated events), so an
/// observer costs nothing worth measuring. Both methods do nothing by default.
pub trait Progress: Send + Sync {
    /// A phase starts (the names of [`RunContext::timed`]).
    fn phase(&self, _name: &str) {}
    /// `done` of the `total` steps of the phase are done.
    fn step(&self, _done: u64, _total: u64) {}
}

/// The observer of a run nobody watches.
pub struct NoProgress;

impl Progress for NoProgress {}

/// What a run carries: the seeded generator, the thread pool, a deadline, the timings of
/// its phases, an observer of its progress and a flag that stops it.
pub struct RunContext {
    /// The seed the generator started from.
    pub seed: u64,
    /// Every random choice draws from this generator.
    pub rng: Xoshiro256PlusPlus,
    /// The pool parallel phases run in (`pool.install`); `None` runs on the caller's thread.
    pub pool: Option<rayon::ThreadPool>,
    /// Stop improving after this instant.
    pub deadline: Option<Instant>,
    /// Phase timings, in order.
    pub timings: Vec<(String, Duration)>,
    /// Told each phase that [`RunContext::timed`] starts, and the steps within it.
    pub progress: Arc<dyn Progress>,
    /// Set from another thread to end the run early: the runs that honour a deadline
    /// treat it as one that has passed (the mapping under way is still completed, and
    /// a caller that stops a run usually discards it).
    pub stop: Arc<AtomicBool>,
    /// What the run proved about the optimum, when it searched exactly (`exact`).
    pub optimality: Option<Optimality>,
}

/// What an exact search proved: the f_C of the mapping it returned, and a lower bound on
/// every mapping's (equal to it when the search finished).
#[derive(Clone, Debug, serde::Serialize, PartialEq, Eq)]
pub struct Optimality {
    /// f_C of the mapping returned.
    pub comm_cost: u64,
    /// No mapping that respects the constraints has a smaller f_C.
    pub lower_bound: u64,
    /// Whether the mapping is proven optimal (`lower_bound == comm_cost`).
    pub optimal: bool,
    /// Search-tree nodes visited.
    pub nodes: u64,
}

impl Optimality {
    /// The largest gap of the returned mapping to the optimum, `100 (f_C − bound) /
    /// bound` in percent (as `compare`'s `gap_%`); `None` when the bound is 0 and the
    /// mapping's f_C is not.
    pub fn gap_percent(&self) -> Option<f64> {
        match self.lower_bound {
            0 => (self.comm_cost == 0).then_some(0.0),
            lb => Some(100.0 * (self.comm_cost - lb) as f64 / lb as f64),
        }
    }
}

/// The longest time limit a run takes, in seconds (a year).
pub const MAX_TIME_LIMIT_SECONDS: f64 = 365.0 * 86_400.0;

/// The most threads a [`RunContext`] starts.
pub const MAX_THREADS: usize = 1024;

impl RunContext {
    /// A context seeded with `seed`, one thread, no deadline.
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            pool: None,
            deadline: None,
            timings: Vec::new(),
            progress: Arc::new(NoProgress),
            stop: Arc::new(AtomicBool::new(false)),
            optimality: None,
        }
    }

    /// Whether [`RunContext::stop`] was set.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Whether the run should start no more optional work: stopped, or past its deadline.
    pub fn out_of_time(&self) -> bool {
        self.stopped() || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Uses a pool of `threads` threads for parallel phases (1 to [`MAX_THREADS`]; 0 is an
    /// error).
    pub fn with_threads(mut self, threads: usize) -> Result<Self, Error> {
        if threads > MAX_THREADS {
            return Err(Error::Config(format!(
                "{threads} threads is more than the {MAX_THREADS} allowed"
            )));
        }
        if threads == 0 {
            return Err(Error::Config(
                "0 threads: give at least 1 (--threads 1 runs on the calling thread)".into(),
            ));
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| Error::Config(format!("cannot start {} threads: {}", threads, e)))?;
        self.pool = Some(pool);
        Ok(self)
    }

    /// Runs `f` and records its wall time under `phase`.
    pub fn timed<T>(&mut self, phase: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        self.progress.phase(phase);
        let t0 = Instant::now();
        let r = f(self);
        self.timings.push((phase.to_string(), t0.elapsed()));
        r
    }
}
