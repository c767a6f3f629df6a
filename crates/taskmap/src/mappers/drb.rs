//! Dual recursive bipartitioning (DRB), after F. Pellegrini, "Static mapping by dual
//! recursive bipartitioning of process and architecture graphs", SHPCC 1994, and the
//! Scotch manual §3.1.3.
//!
//! The target's root domain and the whole task set form the first job. A job splits its
//! domain with [`Architecture::bipartition`] and its task set with the
//! [`Bipartitioner`]: tasks go to the side that minimises the internal cut times the
//! distance between the two subdomains plus, for every edge to a task outside the set, the
//! edge weight times the distance from the side to the domain that task is in now. Jobs are
//! processed level by level (all domains of one level before the next), so every outside
//! task already sits in a domain of the current or the next level. A job whose domain is a
//! single PE places its tasks there. Seeing where the earlier jobs of the level put their
//! tasks matters: on a 50³ grid onto `torus:8x8x8`, jobs that see only the previous level
//! cost 127,828 instead of 75,844 (their splits do not align with their neighbours'). With
//! a pool of t threads, a level's jobs form t contiguous chains (cut between sibling
//! pairs) that run in parallel, each job seeing the earlier jobs of its chain.
//!
//! Each side's load bound is the sum of its PEs' bounds, tightened at every level to a
//! slack of (1+ε)^(1/√L) − 1 for the L = ⌈log₂ size⌉ levels below it (the slack that
//! would compound to exactly ε, (1+ε)^(1/L) − 1, leaves FM too little room; it is kept
//! with several vertex weights, where repairs are harder); a final
//! [`rebalance`] repairs what exceeds the bounds.
//!
//! Complexity: O(log k · tries · passes · (n + m) · log n) plus O(m log k) domain distance
//! calls (cached per job).

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use taskmap_arch::{Architecture, Domain, PeId};
use taskmap_graph::TaskGraph;

use crate::error::Error;
use crate::mapper::{Mapper, RunContext};
use crate::mapping::Mapping;
use crate::multilevel::bipart::{BipartScratch, Bipartitioner, SubProblem, FREE_SIDE};
use crate::multilevel::config::{check_count, MAX_TRIES};
use crate::multilevel::refine::kway::{KwayRefiner, KwayState};
use crate::multilevel::refine::rebalance::rebalance;
use crate::multilevel::{load_bounds, DistTable};
use crate::problem::{Problem, FREE};
use crate::registry::{ParamDoc, Params};

/// The DRB mapper and its parameters (`drb,tries=8,fm=4,refine=1`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DrbMapper {
    /// Bipartitioning tries per split (1 to [`MAX_TRIES`]).
    pub tries: usize,
    /// FM passes per try.
    pub fm: usize,
    /// Multilevel bipartitioning: coarsen every task set larger than this (0: flat).
    pub coarsen_to: usize,
    /// Run the k-way `f_C` refiner on the result (off: plain DRB).
    pub refine: bool,
}

impl Default for DrbMapper {
    fn default() -> Self {
        let b = Bipartitioner::default();
        Self {
            tries: b.tries,
            fm: b.fm_passes,
            coarsen_to: b.coarsen_to,
            refine: false,
        }
    }
}

impl Params for DrbMapper {
    const DOCS: &'static [ParamDoc] = &[
        ParamDoc {
            name: "tries",
            aliases: &[],
            doc: "bipartitioning tries per split, 1 to 1024",
        },
        ParamDoc {
            name: "fm",
            aliases: &[],
            doc: "FM passes per try",
        },
        ParamDoc {
            name: "coarsen_to",
            aliases: &[],
            doc: "bipartition task sets larger than this by a multilevel scheme (0: flat)",
        },
        ParamDoc {
            name: "refine",
            aliases: &[],
            doc: "1: run the k-way f_C refiner on the result",
        },
    ];

    fn validate(&self) -> Result<(), String> {
        check_count("tries", self.tries, MAX_TRIES)
    }
}

impl DrbMapper {
    /// The bipartitioner of every split.
    pub fn bipartitioner(&self) -> Bipartitioner {
        Bipartitioner {
            tries: self.tries,
            fm_passes: self.fm,
            coarsen_to: self.coarsen_to,
            ..Bipartitioner::default()
        }
    }
}

impl Mapper for DrbMapper {
    fn name(&self) -> &'static str {
        "drb"
    }

    fn map(&self, problem: &Problem, ctx: &mut RunContext) -> Result<Mapping, Error> {
        problem.check_with_fixed()?;
        let bound = load_bounds(problem);
        let arch = problem.arch.as_ref();
        let dist = ctx.timed("distance-table", |_| DistTable::new(arch));
        let graph = &problem.graph;
        let part = ctx.timed("drb", |ctx| {
            drb(
                graph,
                arch,
                &bound,
                problem.epsilon,
                &self.bipartitioner(),
                &mut ctx.rng,
                ctx.pool.as_ref(),
                problem.fixed.as_deref(),
            )
        });
        let mut state = KwayState::new(graph, &dist, &bound, part)
            .with_fixed(problem.fixed.as_deref().unwrap_or(&[]));
        ctx.timed("rebalance", |_| rebalance(&mut state));
        if self.refine {
            ctx.timed("refine", |ctx| {
                KwayRefiner::default().refine(&mut state, &mut ctx.rng)
            });
        }
        Ok(Mapping::new(state.part.into_iter().map(PeId).collect()))
    }
}

/// Maps `graph` onto `arch` by dual recursive bipartitioning; returns the PE of every task.
/// `bound[pe * ncon + c]` are the per-PE load bounds, `epsilon` the imbalance they allow.
/// Within a level, every job sees the splits of the jobs before it; on a `pool` of t
/// threads the level's jobs form t contiguous chains that run in parallel (a job sees the
/// earlier jobs of its chain), so the result depends on the seed and the thread count.
pub fn drb(
    graph: &TaskGraph,
    arch: &dyn Architecture,
    bound: &[u64],
    epsilon: f64,
    bip: &Bipartitioner,
    rng: &mut impl Rng,
    pool: Option<&rayon::ThreadPool>,
    fixed: Option<&[u32]>,
) -> Vec<u32> {
    let n = graph.num_tasks();
    let mut part = vec![0u32; n];
    if n == 0 {
        return part;
    }
    let mut domains: Vec<Domain> = vec![arch.root()];
    let mut task_dom = vec![0u32; n];
    // Index of every task in its job's task list (valid for the tasks of the current level).
    let mut loc = vec![0u32; n];
    // Job of every task of the current level, and the half it went to (written by the
    // job's chain, read only by later jobs of the same chain).
    let mut job_of = vec![0u32; n];
    let new_dom: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
    let mut level: Vec<(u32, Vec<u32>)> = vec![(0, (0..n as u32).collect())];
    let mut pes: Vec<PeId> = Vec::new();
    while !level.is_empty() {
        // Split the domains (sequentially: cheap), place the tasks of single-PE domains.
        let mut jobs: Vec<Job> = Vec::new();
        for (d, tasks) in level {
            if tasks.is_empty() {
                continue;
            }
            let dom = domains[d as usize];
            let Some((d0, d1)) = arch.bipartition(&dom) else {
                pes.clear();
                arch.domain_pes(&dom, &mut pes);
                let pe = pes.first().map_or(0, |p| p.0);
                for &t in &tasks {
                    part[t as usize] = pe;
                }
                continue;
            };
            let i0 = domains.len() as u32;
            domains.push(d0);
            domains.push(d1);
            for (i, &t) in tasks.iter().enumerate() {
                loc[t as usize] = i as u32;
            }
            jobs.push(Job {
                dom: d,
                first_child: i0,
                tasks,
                seed: rng.gen(),
            });
        }
        // The jobs run in order, each seeing where the earlier jobs of the level put their
        // tasks (a job aligns its split with its neighbours'). With a pool of t threads the
        // job list is cut into t contiguous chains that run in parallel, at sibling-pair
        // boundaries; a job then sees the earlier jobs of its own chain only.
        for (j, job) in jobs.iter().enumerate() {
            for &t in &job.tasks {
                job_of[t as usize] = j as u32;
            }
        }
        let threads = pool.map_or(1, |p| p.current_num_threads()).max(1);
        // Chains start at even jobs, so that siblings (jobs 2i and 2i+1) share a chain.
        let pairs = jobs.len().div_ceil(2);
        let chains = threads.min(pairs).max(1);
        let bounds_of = |c: usize| {
            let at = |c: usize| (2 * (c * pairs / chains)).min(jobs.len());
            (at(c), at(c + 1))
        };
        let ctx = JobContext {
            graph,
            arch,
            bound,
            epsilon,
            bip,
            domains: &domains,
            task_dom: &task_dom,
            loc: &loc,
            job_of: &job_of,
            new_dom: &new_dom,
            jobs: &jobs,
            fixed,
        };
        let run_chain = |c: usize| -> Vec<Vec<u8>> {
            let (lo, hi) = bounds_of(c);
            let mut scratch = BipartScratch::default();
            (lo..hi)
                .map(|j| {
                    let side = ctx.split(j, lo, &mut scratch);
                    let job = &jobs[j];
                    for (i, &t) in job.tasks.iter().enumerate() {
                        new_dom[t as usize].store(job.first_child + side[i] as u32, Relaxed);
                    }
                    side
                })
                .collect()
        };
        let per_chain: Vec<Vec<Vec<u8>>> = match pool {
            Some(pool) if chains > 1 => pool.install(|| {
                use rayon::prelude::*;
                (0..chains).into_par_iter().map(run_chain).collect()
            }),
            _ => (0..chains).map(run_chain).collect(),
        };
        let sides: Vec<Vec<u8>> = per_chain.into_iter().flatten().collect();
        for (job, side) in jobs.iter().zip(&sides) {
            for (i, &t) in job.tasks.iter().enumerate() {
                task_dom[t as usize] = job.first_child + side[i] as u32;
            }
        }
        let mut next: Vec<(u32, Vec<u32>)> = Vec::with_capacity(2 * jobs.len());
        for (job, side) in jobs.into_iter().zip(sides) {
            let mut halves = (Vec::new(), Vec::new());
            for (i, &t) in job.tasks.iter().enumerate() {
                if side[i] == 0 {
                    halves.0.push(t);
                } else {
                    halves.1.push(t);
                }
            }
            next.push((job.first_child, halves.0));
            next.push((job.first_child + 1, halves.1));
        }
        level = next;
    }
    part
}

/// One split of a level: a domain, the ids of its two halves, its tasks (ascending).
struct Job {
    dom: u32,
    first_child: u32,
    tasks: Vec<u32>,
    seed: u64,
}

/// [`Bipartitioner::coarse_tries`] apply to the splits of domains holding at least
/// `1/TOP_SPLIT_FRACTION` of the PEs (the first four levels of a power-of-two target).
pub const TOP_SPLIT_FRACTION: u64 = 8;

/// What every job of a level reads.
struct JobContext<'a> {
    graph: &'a TaskGraph,
    arch: &'a dyn Architecture,
    bound: &'a [u64],
    epsilon: f64,
    bip: &'a Bipartitioner,
    domains: &'a [Domain],
    task_dom: &'a [u32],
    loc: &'a [u32],
    job_of: &'a [u32],
    new_dom: &'a [AtomicU32],
    jobs: &'a [Job],
    fixed: Option<&'a [u32]>,
}

impl JobContext<'_> {
    /// Bipartitions job `j` (of the chain starting at job `chain_start`); returns the
    /// side of every task.
    fn split(&self, j: usize, chain_start: usize, scratch: &mut BipartScratch) -> Vec<u8> {
        let (graph, arch) = (self.graph, self.arch);
        let job = &self.jobs[j];
        let ncon = graph.ncon();
        let dom = self.domains[job.dom as usize];
        let d0 = self.domains[job.first_child as usize];
        let d1 = self.domains[job.first_child as usize + 1];
        let tasks = &job.tasks;
        let mut sp = SubProblem {
            ncon,
            ..SubProblem::default()
        };
        sp.xadj.reserve(tasks.len() + 1);
        sp.ext[0].reserve(tasks.len());
        sp.ext[1].reserve(tasks.len());
        // Distances from the two halves to the domains of outside tasks, cached.
        let mut dcache: std::collections::HashMap<u32, (u64, u64)> =
            std::collections::HashMap::new();
        sp.xadj.push(0);
        for &t in tasks {
            let (mut e0, mut e1) = (0u64, 0u64);
            for (&u, &w) in graph.neighbors(t).iter().zip(graph.edge_weights(t)) {
                let mut x = self.task_dom[u as usize];
                if x == job.dom {
                    sp.adjncy.push(self.loc[u as usize]);
                    sp.edge_weight.push(w);
                } else {
                    let ju = self.job_of[u as usize] as usize;
                    if x == self.jobs.get(ju).map_or(u32::MAX, |jb| jb.dom)
                        && (chain_start..j).contains(&ju)
                    {
                        x = self.new_dom[u as usize].load(Relaxed);
                    }
                    let (a, b) = *dcache.entry(x).or_insert_with(|| {
                        let dx = &self.domains[x as usize];
                        (arch.domain_distance(&d0, dx), arch.domain_distance(&d1, dx))
                    });
                    e0 += w * a;
                    e1 += w * b;
                }
            }
            sp.xadj.push(sp.adjncy.len());
            sp.vertex_weight.extend_from_slice(graph.vertex_weights(t));
            sp.ext[0].push(e0);
            sp.ext[1].push(e1);
        }
        sp.cut_dist = arch.domain_distance(&d0, &d1).max(1);
        // Fixed tasks go to the half that holds their PE.
        if let Some(fixed) = self.fixed {
            if tasks.iter().any(|&t| fixed[t as usize] != FREE) {
                let mut in0 = vec![false; arch.pe_count() as usize];
                let mut pes0: Vec<PeId> = Vec::new();
                arch.domain_pes(&d0, &mut pes0);
                for p in &pes0 {
                    in0[p.idx()] = true;
                }
                sp.fixed = tasks
                    .iter()
                    .map(|&t| match fixed[t as usize] {
                        FREE => FREE_SIDE,
                        p if in0[p as usize] => 0,
                        _ => 1,
                    })
                    .collect();
            }
        }

        // Load bounds of the two sides.
        let mut pes: Vec<PeId> = Vec::new();
        let mut domain_bound = |d: &Domain| -> Vec<u64> {
            pes.clear();
            arch.domain_pes(d, &mut pes);
            let mut b = vec![0u64; ncon];
            for p in pes.iter() {
                for c in 0..ncon {
                    b[c] = b[c].saturating_add(self.bound[p.idx() * ncon + c]);
                }
            }
            b
        };
        let cap = [domain_bound(&d0), domain_bound(&d1)];
        let levels = (arch.domain_size(&dom).max(2) as f64)
            .log2()
            .ceil()
            .max(1.0);
        // Per-level slack (1+ε)^(1/√L) − 1 for the L levels below this domain: looser than
        // the (1+ε)^(1/L) − 1 that would compound to exactly ε, which constrains FM
        // too much (quick suite, three seeds: f_C 0.5 % lower on average); the final
        // rebalance repairs what exceeds the bounds. With several vertex weights the
        // repair is harder, so the slack compounds to ε exactly.
        let depth = if ncon == 1 { levels.sqrt() } else { levels };
        let eps_lvl = (1.0 + self.epsilon).powf(1.0 / depth) - 1.0;
        let mut share_sum = 0.0;
        let mut share_cnt = 0;
        for c in 0..ncon {
            let tot: u64 = tasks.iter().map(|&t| graph.vertex_weight(t, c)).sum();
            let maxw = tasks
                .iter()
                .map(|&t| graph.vertex_weight(t, c))
                .max()
                .unwrap_or(0);
            let capsum = cap[0][c].saturating_add(cap[1][c]);
            for s in 0..2 {
                let frac = if capsum > 0 {
                    cap[s][c] as f64 / capsum as f64
                } else {
                    0.5
                };
                let target = tot as f64 * frac;
                let loose = ((target * (1.0 + eps_lvl)).ceil() as u64)
                    .max((target.ceil() as u64 + maxw).saturating_sub(1));
                sp.bound[s].push(loose.min(cap[s][c].max(target.ceil() as u64)));
                if s == 0 && tot > 0 {
                    share_sum += frac;
                    share_cnt += 1;
                }
            }
        }
        sp.share0 = if share_cnt > 0 {
            share_sum / share_cnt as f64
        } else {
            let s0 = arch.domain_size(&d0) as f64;
            s0 / (s0 + arch.domain_size(&d1) as f64)
        };
        let mut job_rng = Xoshiro256PlusPlus::seed_from_u64(job.seed);
        // The coarse tries go to the splits of the largest domains only: their frontiers
        // are the longest and the most expensive (the largest distances), and there are
        // few of them.
        let top =
            u64::from(arch.domain_size(&dom)) * TOP_SPLIT_FRACTION >= u64::from(arch.pe_count());
        if top || self.bip.coarse_tries <= self.bip.tries {
            self.bip.run(&sp, scratch, &mut job_rng)
        } else {
            let plain = Bipartitioner {
                coarse_tries: 0,
                ..self.bip.clone()
            };
            plain.run(&sp, scratch, &mut job_rng)
        }
    }
}
