//! Monte Carlo `T_REAL` (ours, beyond the paper): runs of the stochastic program itself,
//! each simulated on the assignment, against the expected-value reading of `G'`.
//!
//! A run follows control as the model defines it. Every entry module runs once at the
//! start. When an execution ends, control leaves its module: along every link out of an
//! `AND` module, along one link drawn with the links' probabilities out of an `EOR` module
//! (none with the probability left over). A module with `EOR` input runs once per control
//! transfer that reaches it; one with `AND` input once per complete set of transfers over
//! its forward links, and once per transfer over a back link. Each execution of module `i`
//! on processor `p` takes `m_i / speed_p + c_i / f_i`: its processing time and its share
//! of the expected communication `c_i` of the schedule of `G'` (at the delay of the
//! expected load). Processors run ready executions without preemption, first in
//! topological order of their modules, then in order of readiness.
//!
//! The expected-value reading runs `G'` once with the mean times `m'_i`; the runs show
//! what it leaves out (the mean of a maximum is above the maximum of the means) and the
//! spread. An `AND` join of branches an `EOR` module chose between never gets its complete
//! set in a run, where `f` counts it at the mean of its inputs: the report lists modules
//! whose mean executions differ from `f`.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::houstis::alloc::Instance;
use crate::houstis::machine::Machine;
use crate::houstis::mapper::module_comm;
use crate::houstis::precedence::{csr, Deterministic, Logic, PrecedenceGraph};

/// The most runs one estimate takes (their final times are kept).
pub const MAX_SAMPLES: usize = 100_000_000;

/// The Monte Carlo estimate of `T_REAL`: how many runs, from which seed, and the most
/// executions one run may take.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MonteCarlo {
    /// Runs of the program (2 to [`MAX_SAMPLES`]).
    pub samples: usize,
    /// Seed of the runs; run `r` draws from its own generator, seeded by the seed and `r`,
    /// so the result does not depend on the threads.
    pub seed: u64,
    /// Most module executions in one run (an error beyond: a loop that rarely ends).
    pub max_executions: u64,
}

impl Default for MonteCarlo {
    fn default() -> Self {
        MonteCarlo {
            samples: 1000,
            seed: 0,
            max_executions: 10_000_000,
        }
    }
}

impl MonteCarlo {
    /// Refuses fewer than 2 samples and a zero execution limit.
    pub fn validate(&self) -> Result<(), String> {
        if self.samples > MAX_SAMPLES {
            return Err(format!(
                "samples: at most {MAX_SAMPLES} runs, not {}",
                self.samples
            ));
        }
        if self.samples < 2 {
            return Err(format!(
                "samples: at least 2 runs give a confidence interval, not {}",
                self.samples
            ));
        }
        if self.max_executions == 0 {
            return Err("max_executions: at least 1".into());
        }
        Ok(())
    }
}

/// A module whose mean executions over the runs differ from its expected executions `f`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExecutionGap {
    pub module: u32,
    /// Expected executions `f` of the model.
    pub f: f64,
    /// Mean executions over the runs.
    pub sampled: f64,
}

/// What the runs gave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MonteCarloSummary {
    pub samples: usize,
    pub seed: u64,
    /// Mean `T_REAL` of the runs.
    pub mean: f64,
    /// Standard deviation of the runs' `T_REAL` (with `samples − 1`).
    pub std_dev: f64,
    /// 95 % confidence interval of the mean (normal approximation, `1.96 σ/√samples`).
    pub ci95: [f64; 2],
    pub min: f64,
    pub max: f64,
    /// Mean executions of every module over the runs.
    pub executions: Vec<f64>,
    /// Modules whose mean executions differ from `f` by more than 2 % (of `f`, at least
    /// 0.01) and 4 standard errors.
    pub gaps: Vec<ExecutionGap>,
}

/// The model as one run needs it: links by module, durations per execution.
struct Model<'a> {
    g: &'a PrecedenceGraph,
    back: &'a [bool],
    /// Topological rank of every module.
    rank: Vec<u32>,
    /// Links out of each module: `out_links[out_first[v]..out_first[v + 1]]`.
    out_first: Vec<u32>,
    out_links: Vec<u32>,
    /// Forward links into every `AND`-input module, counted.
    forward_in: Vec<u32>,
    /// Those links: `and_links[and_first[v]..and_first[v + 1]]`.
    and_first: Vec<u32>,
    and_links: Vec<u32>,
    entries: Vec<u32>,
    processor: &'a [u32],
    /// Duration of one execution of every module.
    duration: Vec<f64>,
    k: usize,
    max_executions: u64,
}

/// The buffers of one run, kept between runs.
struct Run {
    /// Ready executions of every processor: (rank of the module, readiness order, module).
    queues: Vec<std::collections::BinaryHeap<std::cmp::Reverse<(u32, u64, u32)>>>,
    busy: Vec<bool>,
    /// Ends of running executions: (time bits, start order, module).
    events: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64, u32)>>,
    /// Transfers waiting on every forward link into an `AND`-input module.
    tokens: Vec<u64>,
    /// Forward links into every `AND`-input module without a waiting transfer.
    missing: Vec<u32>,
    /// Executions of every module in this run.
    count: Vec<u64>,
}

impl Model<'_> {
    /// A run with the generator `rng`: its final time, the executions in `run.count`.
    fn sample(&self, run: &mut Run, rng: &mut Xoshiro256PlusPlus) -> Result<f64, Error> {
        use std::cmp::Reverse;
        run.busy.iter_mut().for_each(|b| *b = false);
        run.events.clear();
        run.queues.iter_mut().for_each(|q| q.clear());
        run.tokens.iter_mut().for_each(|t| *t = 0);
        run.missing.copy_from_slice(&self.forward_in);
        run.count.iter_mut().for_each(|c| *c = 0);
        let mut order = 0u64;
        let mut executions = 0u64;
        let ready = |run: &mut Run, v: u32, order: &mut u64| {
            let p = self.processor[v as usize] as usize;
            run.queues[p].push(Reverse((self.rank[v as usize], *order, v)));
            *order += 1;
            p
        };
        let mut dirty: Vec<usize> = Vec::new();
        for &v in &self.entries {
            dirty.push(ready(run, v, &mut order));
        }
        let mut now = 0.0f64;
        let mut end = 0.0f64;
        loop {
            dirty.sort_unstable();
            dirty.dedup();
            for &p in &dirty {
                if run.busy[p] {
                    continue;
                }
                if let Some(Reverse((_, o, v))) = run.queues[p].pop() {
                    run.busy[p] = true;
                    executions += 1;
                    if executions > self.max_executions {
                        return Err(Error::Config(format!(
                            "a run of the program took more than {} module executions (max_executions); its loops rarely end",
                            self.max_executions
                        )));
                    }
                    let t = now + self.duration[v as usize];
                    run.events.push(Reverse(((t + 0.0).to_bits(), o, v)));
                }
            }
            dirty.clear();
            let Some(&Reverse((t, _, _))) = run.events.peek() else {
                break;
            };
            now = f64::from_bits(t);
            end = now;
            while let Some(&Reverse((t2, _, v))) = run.events.peek() {
                if t2 != t {
                    break;
                }
                run.events.pop();
                let v = v as usize;
                run.count[v] += 1;
                let p = self.processor[v] as usize;
                run.busy[p] = false;
                dirty.push(p);
                let links =
                    &self.out_links[self.out_first[v] as usize..self.out_first[v + 1] as usize];
                let pass = |e: u32, run: &mut Run, order: &mut u64, dirty: &mut Vec<usize>| {
                    let l = &self.g.links[e as usize];
                    let j = l.to as usize;
                    if self.back[e as usize] || self.g.input[j] == Logic::Eor {
                        dirty.push(ready(run, l.to, order));
                        return;
                    }
                    // a forward link into an AND input: run on a complete set.
                    if run.tokens[e as usize] == 0 {
                        run.missing[j] -= 1;
                    }
                    run.tokens[e as usize] += 1;
                    if run.missing[j] == 0 {
                        for &f in &self.and_links
                            [self.and_first[j] as usize..self.and_first[j + 1] as usize]
                        {
                            run.tokens[f as usize] -= 1;
                            if run.tokens[f as usize] == 0 {
                                run.missing[j] += 1;
                            }
                        }
                        dirty.push(ready(run, l.to, order));
                    }
                };
                match self.g.output[v] {
                    Logic::And => {
                        for &e in links {
                            pass(e, run, &mut order, &mut dirty);
                        }
                    }
                    Logic::Eor => {
                        let mut u: f64 = rng.gen();
                        if let Some(&e) = links.iter().find(|&&e| {
                            u -= self.g.links[e as usize].prob;
                            u < 0.0
                        }) {
                            pass(e, run, &mut order, &mut dirty);
                        }
                    }
                }
            }
        }
        Ok(end)
    }
}

impl MonteCarlo {
    /// Runs the program `self.samples` times on `processor` (a processor per module) on
    /// `machine`, on `pool`'s threads when given.
    pub fn run(
        &self,
        g: &PrecedenceGraph,
        det: &Deterministic,
        machine: &Machine,
        processor: &[u32],
        pool: Option<&rayon::ThreadPool>,
    ) -> Result<MonteCarloSummary, Error> {
        self.validate().map_err(Error::Config)?;
        let n = g.modules();
        let k = machine.processors as usize;
        if processor.len() != n || processor.iter().any(|&p| p as usize >= k) {
            return Err(Error::Mismatch(format!(
                "the assignment must give each of the {n} modules one of the {k} processors"
            )));
        }
        let modules = Instance::of_modules(g, det, None);
        let mut comm = vec![0.0f64; n];
        module_comm(&modules, machine, processor, &mut comm);
        let duration: Vec<f64> = (0..n)
            .map(|i| {
                let share = if det.visits[i] > 0.0 {
                    comm[i] / det.visits[i]
                } else {
                    0.0
                };
                g.time[i] / machine.speeds[processor[i] as usize] + share
            })
            .collect();
        if duration.iter().any(|d| !d.is_finite()) {
            return Err(Error::Config(
                "a module's time overflows (beyond about 1.8e308)".into(),
            ));
        }
        let (out_first, out_links) = csr(n, g.links.iter().map(|l| l.from));
        // forward links into AND inputs, as ids of links.
        let and: Vec<u32> = (0..g.links.len() as u32)
            .filter(|&e| {
                !det.back[e as usize] && g.input[g.links[e as usize].to as usize] == Logic::And
            })
            .collect();
        let (and_first, at) = csr(n, and.iter().map(|&e| g.links[e as usize].to));
        let and_links: Vec<u32> = at.iter().map(|&i| and[i as usize]).collect();
        let forward_in: Vec<u32> = (0..n).map(|v| and_first[v + 1] - and_first[v]).collect();
        let mut entered = vec![false; n];
        for l in g.links.iter().filter(|l| l.from != l.to) {
            entered[l.to as usize] = true;
        }
        let entries: Vec<u32> = (0..n as u32).filter(|&v| !entered[v as usize]).collect();
        let model = Model {
            g,
            back: &det.back,
            rank: det.positions(),
            out_first,
            out_links,
            forward_in,
            and_first,
            and_links,
            entries,
            processor,
            duration,
            k,
            max_executions: self.max_executions,
        };
        // Runs in chunks, each with its own buffers; run r draws from seed + r.
        const CHUNK: usize = 16;
        let chunks = 0..self.samples.div_ceil(CHUNK);
        let work = |c: &usize| -> Result<Tally, Error> {
            let mut run = Run {
                queues: vec![std::collections::BinaryHeap::new(); model.k],
                busy: vec![false; model.k],
                events: std::collections::BinaryHeap::new(),
                tokens: vec![0; g.links.len()],
                missing: vec![0; n],
                count: vec![0; n],
            };
            let mut t = Tally::new(n);
            for r in c * CHUNK..((c + 1) * CHUNK).min(self.samples) {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(run_seed(self.seed, r));
                t.times.push(model.sample(&mut run, &mut rng)?);
                for i in 0..n {
                    let x = run.count[i] as f64;
                    t.sum[i] += x;
                    t.sq[i] += x * x;
                }
            }
            Ok(t)
        };
        let parts: Vec<Result<Tally, Error>> = match pool {
            Some(pool) => pool.install(|| chunks.into_par_iter().map(|c| work(&c)).collect()),
            None => chunks.map(|c| work(&c)).collect(),
        };
        // merged in the order of the runs, whatever the threads.
        let mut all = Tally::new(n);
        for part in parts {
            let t = part?;
            all.times.extend(t.times);
            for i in 0..n {
                all.sum[i] += t.sum[i];
                all.sq[i] += t.sq[i];
            }
        }
        Ok(summarise(self, det, &all))
    }
}

/// The seed of run `r`: the seed scrambled, then `r` mixed in (seeds `s` and `s + 1` share
/// no run).
fn run_seed(seed: u64, r: usize) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) ^ r as u64
}

/// What runs gave: their final times, and per module the sum of its executions and of
/// their squares.
struct Tally {
    times: Vec<f64>,
    sum: Vec<f64>,
    sq: Vec<f64>,
}

impl Tally {
    fn new(n: usize) -> Self {
        Tally {
            times: Vec::new(),
            sum: vec![0.0; n],
            sq: vec![0.0; n],
        }
    }
}

/// The statistics of the runs' final times and of every module's executions.
fn summarise(mc: &MonteCarlo, det: &Deterministic, t: &Tally) -> MonteCarloSummary {
    let (times, sum, sq) = (&t.times, &t.sum, &t.sq);
    let s = times.len() as f64;
    let mean = times.iter().sum::<f64>() / s;
    let var = times.iter().map(|t| (t - mean) * (t - mean)).sum::<f64>() / (s - 1.0);
    let std_dev = var.max(0.0).sqrt();
    let h = 1.96 * std_dev / s.sqrt();
    let executions: Vec<f64> = sum.iter().map(|x| x / s).collect();
    let gaps = (0..executions.len())
        .filter_map(|i| {
            let (f, m) = (det.visits[i], executions[i]);
            let var = (sq[i] / s - m * m).max(0.0);
            let se = (var / s).sqrt();
            let off = (m - f).abs();
            (off > 0.02 * f.max(0.5) && off > 4.0 * se).then_some(ExecutionGap {
                module: i as u32,
                f,
                sampled: m,
            })
        })
        .collect();
    MonteCarloSummary {
        samples: mc.samples,
        seed: mc.seed,
        mean,
        std_dev,
        ci95: [mean - h, mean + h],
        min: times.iter().copied().fold(f64::INFINITY, f64::min),
        max: times.iter().copied().fold(0.0, f64::max),
        executions,
        gaps,
    }
}
