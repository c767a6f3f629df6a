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
//! single PE places its tasks there.
//!
//! Each side's load bound is the sum of its PEs' bounds, tightened at every level so that
//! the imbalance compounds to at most ε over the ⌈log₂ k⌉ levels; a final
//! [`rebalance`](crate::multilevel::refine::rebalance) repairs what task granularity left.
//!
//! Complexity: O(log k · tries · passes · (n + m) · log n) plus O(m log k) domain distance
//! calls (cached per job).

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use taskmap_arch::{Architecture, Domain, PeId};
use taskmap_graph::TaskGraph;

use crate::error::Error;
use crate::mapper::{Mapper, RunContext};
use crate::mappers::multilevel::parse_usize;
use crate::mapping::Mapping;
use crate::multilevel::bipart::{BipartScratch, Bipartitioner, SubProblem};
use crate::multilevel::refine::{rebalance, KwayRefiner, KwayState};
use crate::multilevel::{load_bounds, DistTable};
use crate::problem::Problem;

/// The DRB mapper.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DrbMapper {
    /// How each task set is split (tries, FM passes).
    pub bipartitioner: Bipartitioner,
    /// Run the k-way `f_C` refiner on the result (off: plain DRB).
    pub refine: bool,
}

impl Mapper for DrbMapper {
    fn name(&self) -> &'static str {
        "drb"
    }

    fn map(&self, problem: &Problem, ctx: &mut RunContext) -> Result<Mapping, Error> {
        problem.check()?;
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
                &self.bipartitioner,
                &mut ctx.rng,
            )
        });
        let mut state = KwayState::new(graph, &dist, &bound, part);
        ctx.timed("rebalance", |_| rebalance(&mut state));
        if self.refine {
            ctx.timed("refine", |ctx| {
                KwayRefiner::default().refine(&mut state, &mut ctx.rng)
            });
        }
        Ok(Mapping::new(state.part.into_iter().map(PeId).collect()))
    }
}

/// The registry form of the DRB mapper, parsed from `drb,tries=8,fm=4,refine=1`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DrbSpec {
    /// Bipartitioning tries per split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tries: Option<usize>,
    /// FM passes per try.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fm: Option<usize>,
    /// Run the k-way refiner afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refine: Option<bool>,
    /// Multilevel bipartitioning: coarsen every task set larger than this (0: flat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coarsen_to: Option<usize>,
}

impl DrbSpec {
    /// Applies one `key=value` parameter.
    pub fn set(&mut self, param: &str) -> Result<(), Error> {
        let Some((key, value)) = crate::mapper::key_value("drb", param)? else {
            return Ok(());
        };
        match key {
            "tries" => self.tries = Some(parse_usize("drb", key, value)?),
            "fm" => self.fm = Some(parse_usize("drb", key, value)?),
            "coarsen_to" | "coarsen-to" => self.coarsen_to = Some(parse_usize("drb", key, value)?),
            "refine" => {
                self.refine = Some(match value {
                    "1" | "true" | "yes" | "on" => true,
                    "0" | "false" | "no" | "off" => false,
                    _ => {
                        return Err(Error::Config(format!(
                            "drb: refine expects true or false, got \"{}\"",
                            value
                        )))
                    }
                })
            }
            _ => {
                return Err(Error::Config(format!(
                    "drb: unknown parameter \"{}\"; known: tries, fm, refine, coarsen_to",
                    key
                )))
            }
        }
        Ok(())
    }

    /// The configured mapper.
    pub fn to_mapper(&self) -> DrbMapper {
        let mut m = DrbMapper::default();
        if let Some(t) = self.tries {
            m.bipartitioner.tries = t.max(1);
        }
        if let Some(f) = self.fm {
            m.bipartitioner.fm_passes = f;
        }
        if let Some(r) = self.refine {
            m.refine = r;
        }
        if let Some(c) = self.coarsen_to {
            m.bipartitioner.coarsen_to = c;
        }
        m
    }
}

/// Maps `graph` onto `arch` by dual recursive bipartitioning; returns the PE of every task.
/// `bound[pe * ncon + c]` are the per-PE load bounds, `epsilon` the imbalance they allow.
pub fn drb(
    graph: &TaskGraph,
    arch: &dyn Architecture,
    bound: &[u64],
    epsilon: f64,
    bip: &Bipartitioner,
    rng: &mut impl Rng,
) -> Vec<u32> {
    let n = graph.num_tasks();
    let ncon = graph.ncon();
    let mut part = vec![0u32; n];
    if n == 0 {
        return part;
    }
    let mut domains: Vec<Domain> = vec![arch.root()];
    let mut task_dom = vec![0u32; n];
    let mut level: Vec<(u32, Vec<u32>)> = vec![(0, (0..n as u32).collect())];
    let mut glob2loc = vec![u32::MAX; n];
    let mut dstamp: Vec<u32> = Vec::new();
    let mut dcache: Vec<(u64, u64)> = Vec::new();
    let mut stamp = 0u32;
    let mut sp = SubProblem {
        ncon,
        ..SubProblem::default()
    };
    let mut scratch = BipartScratch::default();
    let mut pes: Vec<PeId> = Vec::new();
    let domain_bound = |d: &Domain, pes: &mut Vec<PeId>| -> Vec<u64> {
        pes.clear();
        arch.domain_pes(d, pes);
        let mut b = vec![0u64; ncon];
        for p in pes.iter() {
            for c in 0..ncon {
                b[c] = b[c].saturating_add(bound[p.idx() * ncon + c]);
            }
        }
        b
    };
    while !level.is_empty() {
        let mut next: Vec<(u32, Vec<u32>)> = Vec::new();
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
            dstamp.resize(domains.len(), 0);
            dcache.resize(domains.len(), (0, 0));
            stamp += 1;

            // Local subgraph and external costs.
            sp.clear();
            for (i, &t) in tasks.iter().enumerate() {
                glob2loc[t as usize] = i as u32;
            }
            sp.xadj.push(0);
            for &t in &tasks {
                let (mut e0, mut e1) = (0u64, 0u64);
                for (&u, &w) in graph.neighbors(t).iter().zip(graph.edge_weights(t)) {
                    let l = glob2loc[u as usize];
                    if l != u32::MAX {
                        sp.adjncy.push(l);
                        sp.edge_weight.push(w);
                    } else {
                        let x = task_dom[u as usize] as usize;
                        if dstamp[x] != stamp {
                            dstamp[x] = stamp;
                            dcache[x] = (
                                arch.domain_distance(&d0, &domains[x]),
                                arch.domain_distance(&d1, &domains[x]),
                            );
                        }
                        e0 += w * dcache[x].0;
                        e1 += w * dcache[x].1;
                    }
                }
                sp.xadj.push(sp.adjncy.len());
                sp.vertex_weight.extend_from_slice(graph.vertex_weights(t));
                sp.ext[0].push(e0);
                sp.ext[1].push(e1);
            }
            sp.cut_dist = arch.domain_distance(&d0, &d1).max(1);

            // Load bounds of the two sides.
            let cap = [domain_bound(&d0, &mut pes), domain_bound(&d1, &mut pes)];
            let levels = (arch.domain_size(&dom).max(2) as f64)
                .log2()
                .ceil()
                .max(1.0);
            let eps_lvl = (1.0 + epsilon).powf(1.0 / levels) - 1.0;
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

            let mut job_rng = Xoshiro256PlusPlus::seed_from_u64(rng.gen());
            let side = bip.run(&sp, &mut scratch, &mut job_rng);
            let mut halves = (Vec::new(), Vec::new());
            for (i, &t) in tasks.iter().enumerate() {
                glob2loc[t as usize] = u32::MAX;
                if side[i] == 0 {
                    task_dom[t as usize] = i0;
                    halves.0.push(t);
                } else {
                    task_dom[t as usize] = i0 + 1;
                    halves.1.push(t);
                }
            }
            next.push((i0, halves.0));
            next.push((i0 + 1, halves.1));
        }
        level = next;
    }
    part
}
