//! The mapper role, the run context, and the registry of algorithms.
//!
//! Adding an algorithm is one file in `mappers/`, one variant of [`AlgorithmSpec`], one row
//! of [`AlgorithmSpec::ALL`] and one arm of [`AlgorithmSpec::build`].

use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::mapping::Mapping;
use crate::problem::Problem;

/// A mapping algorithm.
pub trait Mapper: Send + Sync {
    /// The registry name.
    fn name(&self) -> &'static str;
    /// Maps every task of `problem` to a PE.
    fn map(&self, problem: &Problem, ctx: &mut RunContext) -> Result<Mapping, Error>;
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
/// its phases and an observer of its progress.
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
}

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
        }
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

/// Splits one algorithm parameter `key=value` (both trimmed); `None` for an empty parameter.
/// `alg` names the algorithm in the error.
pub(crate) fn key_value<'a>(
    alg: &str,
    param: &'a str,
) -> Result<Option<(&'a str, &'a str)>, Error> {
    let param = param.trim();
    if param.is_empty() {
        return Ok(None);
    }
    let (key, value) = param
        .split_once('=')
        .ok_or_else(|| Error::Config(format!("{}: expected key=value, got \"{}\"", alg, param)))?;
    Ok(Some((key.trim(), value.trim())))
}

/// The registered algorithms, parseable from `name` or `name,key=value,...`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "algorithm", rename_all = "kebab-case")]
// One spec per run, parsed once: the multilevel variant's size (its optional overrides)
// costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum AlgorithmSpec {
    /// Contiguous blocks of tasks in id order, sized by PE capacity (identity when n = k).
    Block,
    /// Task i on PE i mod k.
    RoundRobin,
    /// A random permutation of the tasks, then blocks: balanced and random.
    Random,
    /// Dual recursive bipartitioning (Scotch's method) on the original graph.
    Drb(crate::mappers::drb::DrbSpec),
    /// Multilevel: coarsening, DRB on the coarsest graph, k-way f_C refinement per level.
    Multilevel(crate::multilevel::config::MultilevelSpec),
    /// De Petris & Perego's greedy contention-aware mapper (F over wormhole routes).
    GreedyPerego(crate::perego::greedy::GreedyPerego),
    /// Greedy task-wise placement, Berger et al. 2014, Algorithm 1 (literal).
    Gtwp(crate::mappers::berger::gtwp::GtwpMapper),
    /// GTWP with the best PE taken among those the task fits on (ours).
    GtwpFit,
    /// Subgraph placement, Berger et al. 2014, Algorithm 2 (literal).
    Subgraph(crate::mappers::berger::subgraph::SubgraphMapper),
    /// Subgraph placement choosing the PE by distance affinity (ours).
    SubgraphDist(crate::mappers::berger::subgraph::SubgraphMapper),
    /// Partition and place: GRASP partitioning, then simulated-annealing QAP placement.
    Pnp(crate::mappers::berger::pnp::PnpMapper),
}

impl AlgorithmSpec {
    /// Every algorithm: name and one line of help. The CLI's list comes from here.
    pub const ALL: &'static [(&'static str, &'static str)] = &[
        (
            "block",
            "contiguous blocks of tasks in id order, sized by PE capacity (identity when n = k)",
        ),
        ("round-robin", "task i on PE i mod k"),
        (
            "random",
            "random permutation of the tasks, then blocks (balanced, seeded)",
        ),
        (
            "drb",
            "dual recursive bipartitioning of tasks and target (Scotch's method); params tries, fm, refine, coarsen_to",
        ),
        (
            "multilevel",
            "multilevel: coarsen, DRB on the coarsest graph (multisection on trees: their levels of subtrees mapped one after the other), k-way f_C refinement, with multisection=0 the levels of a tree's subtrees, V-cycles; params preset=fast|default|strong, coarsening=lp|hem|ordered, coarsening2=lp|hem|ordered|none (a second first coarsening), both=0|1 (uncoarsen both hierarchies and keep the better mapping, default 1; 0: only the better initial mapping's), vcoarsening (V-cycles), runs, tries, coarse_tries, flow (corridor factor of the bisections' flow refinement, default 3, fast 1, 0 off), pair_flow (the pairwise rounds', default 3, fast 1, 0 off), fm, lp, swaps, per_pe, per_pe2d (coarsest size per PE on 2-D meshes and tori of at most 128 PEs, default 160, fast 0), max_coarsest, fm_max, coarsen_to, unwrap=0|1 (on a torus every other initial run splits the mesh's domains; default and fast: only on tori of at least three dimensions longer than two with a ring of at least 8 PEs; 0 never, 1 on every torus), groups=0|1 (tree levels, with multisection=0), multisection=0|1 (default 1), spread (percent: more tries where tries disagree; 0 off), vcycles (<= 64), pairs (pairwise FM+flow rounds per level, default 1, fast 0), islands=0|1 (island removal in the bisections, default 1), layout=0|1 (on a hypercube one more initial run splits its Gray-code mesh's domains; default 1, fast 0), probe (graphs of at least this many tasks build one first hierarchy, chosen by a probe; default 524288, strong 0 = never); graphs above 100,000 tasks get neither pairs nor islands; top_per_pe, top_runs, top_coarse_tries (multisection's top step on graphs of at most 100,000 tasks: coarsest size per top-level group, default 128, 0 off; its runs, default 8; its coarse tries, default 4); population (memetic mode when at least 2: this many whole runs, then `combines` recombinations of two of them, default 8 per member, `batch` at a time in parallel, default 2; 1 = off, the default); anneal (simulated annealing of the final mapping, proposals per task, <= 10^6; 0 = off, the default)",
        ),
        (
            "greedy-perego",
            "De Petris & Perego's greedy mapper minimising their completion-time estimate F (wormhole k-ary n-cubes: mesh, torus, hypercube); variant=default|paper (paper: the paper's rules only; default adds our end-game search and exchange pass), params refine (exchange-pass evaluations per task, 0 off), sim_refine (simulations per task of the simulated exchange pass, programs only, 0 off), endgame, endgame_budget, lookahead, bounding_box, degree_radius, max_tasks_per_pe, candidates, tie_tolerance, one_to_one",
        ),
        (
            "gtwp",
            "greedy task-wise placement with distance affinities (Berger et al. 2014, Alg. 1, literal); respects --capacity; param saturated=drop|keep (drop: a PE found saturated leaves the best-PE choice, the default; keep: it stays a candidate)",
        ),
        (
            "gtwp-fit",
            "GTWP choosing the best PE among those the task fits on, no BFT jumps (ours)",
        ),
        (
            "subgraph",
            "subgraph placement (Berger et al. 2014, Alg. 2, literal): BFS subgraphs of factor x max remaining capacity to the PE of highest affinity; param factor=0.5",
        ),
        (
            "subgraph-dist",
            "subgraph placement choosing the PE by distance affinity (ours); param factor=0.5",
        ),
        (
            "pnp",
            "partition and place: GRASP partitioning into capacity-feasible parts, simulated-annealing QAP placement; params runs=10, rcl=3, moves=0 (0 = 2000 per PE), stages=100, cooling=0.93, accept=0.5",
        ),
    ];

    /// The registry name.
    pub fn name(&self) -> &'static str {
        match self {
            AlgorithmSpec::Block => "block",
            AlgorithmSpec::RoundRobin => "round-robin",
            AlgorithmSpec::Random => "random",
            AlgorithmSpec::Drb(_) => "drb",
            AlgorithmSpec::Multilevel(_) => "multilevel",
            AlgorithmSpec::GreedyPerego(_) => "greedy-perego",
            AlgorithmSpec::Gtwp(_) => "gtwp",
            AlgorithmSpec::GtwpFit => "gtwp-fit",
            AlgorithmSpec::Subgraph(_) => "subgraph",
            AlgorithmSpec::SubgraphDist(_) => "subgraph-dist",
            AlgorithmSpec::Pnp(_) => "pnp",
        }
    }

    /// The effective parameters of the configured mapper, as JSON: for `drb` and
    /// `multilevel` their configuration with the preset and the overrides applied (every
    /// field, defaults included); for the other algorithms their parameters, also with
    /// the defaults; `{}` for those without any. What the multilevel mapper decides per
    /// problem (its adaptive runs and tries, coarsest size and V-cycle count, see
    /// [`crate::multilevel::driver`]) applies on top.
    pub fn parameters(&self) -> serde_json::Value {
        use serde_json::to_value;
        match self {
            AlgorithmSpec::Drb(s) => to_value(s.to_mapper()),
            AlgorithmSpec::Multilevel(s) => to_value(s.to_mapper()),
            AlgorithmSpec::GreedyPerego(g) => to_value(g),
            AlgorithmSpec::Gtwp(g) => to_value(g),
            AlgorithmSpec::Subgraph(s) | AlgorithmSpec::SubgraphDist(s) => to_value(s),
            AlgorithmSpec::Pnp(s) => to_value(s),
            AlgorithmSpec::Block
            | AlgorithmSpec::RoundRobin
            | AlgorithmSpec::Random
            | AlgorithmSpec::GtwpFit => Ok(serde_json::json!({})),
        }
        .unwrap_or(serde_json::Value::Null)
    }

    /// Whether the mapper stops improving at [`RunContext::deadline`]: `pnp`, and
    /// `multilevel` with V-cycles, its memetic mode (`population` of at least 2) or
    /// `anneal`.
    pub fn honours_deadline(&self) -> bool {
        match self {
            AlgorithmSpec::Multilevel(s) => {
                let m = s.to_mapper();
                m.vcycles > 0 || m.population >= 2 || m.anneal > 0
            }
            AlgorithmSpec::Pnp(_) => true,
            _ => false,
        }
    }

    /// Builds the mapper.
    pub fn build(&self) -> Box<dyn Mapper> {
        use crate::mappers;
        match self {
            AlgorithmSpec::Block => Box::new(mappers::block::BlockMapper),
            AlgorithmSpec::RoundRobin => Box::new(mappers::round_robin::RoundRobinMapper),
            AlgorithmSpec::Random => Box::new(mappers::random::RandomMapper),
            AlgorithmSpec::Drb(s) => Box::new(s.to_mapper()),
            AlgorithmSpec::Multilevel(s) => Box::new(s.to_mapper()),
            AlgorithmSpec::GreedyPerego(g) => Box::new(g.clone()),
            AlgorithmSpec::Gtwp(g) => Box::new(g.clone()),
            AlgorithmSpec::GtwpFit => Box::new(mappers::berger::gtwp::GtwpMapper {
                fit_only: true,
                keep_saturated: false,
            }),
            AlgorithmSpec::Subgraph(s) => Box::new(mappers::berger::subgraph::SubgraphMapper {
                distance_affinity: false,
                ..s.clone()
            }),
            AlgorithmSpec::SubgraphDist(s) => Box::new(mappers::berger::subgraph::SubgraphMapper {
                distance_affinity: true,
                ..s.clone()
            }),
            AlgorithmSpec::Pnp(s) => Box::new(s.clone()),
        }
    }
}

/// The parameters' long names by their short aliases, with the algorithms (by their
/// [`canonical_algorithm`] names) whose `set` accepts both. An alias counts only for its
/// own algorithms: `refine` is `greedy-perego`'s `refine_evals` but `drb`'s own parameter.
const KEY_ALIASES: &[(&[&str], &str, &str)] = &[
    (&["pnp"], "moves", "sa_moves"),
    (&["pnp"], "accept", "initial_acceptance"),
    (&["subgraph", "subgraph-dist"], "factor", "size_factor"),
    (&["greedy-perego"], "candidates", "min_candidates"),
    (&["greedy-perego"], "refine", "refine_evals"),
    (&["greedy-perego"], "g", "degree_radius"),
    (&["greedy-perego"], "bbox", "bounding_box"),
    (&["greedy-perego"], "memory", "max_tasks_per_pe"),
];

/// An algorithm's name as [`AlgorithmSpec::ALL`] lists it, from any of its spellings.
fn canonical_algorithm(name: &str) -> &str {
    match name {
        "identity" => "block",
        "rr" => "round-robin",
        "perego" => "greedy-perego",
        "ml" => "multilevel",
        "p&p" => "pnp",
        other => other,
    }
}

/// One name per parameter of algorithm `alg` (a [`canonical_algorithm`] name): `-` as
/// `_`, an alias of `alg` as its long name.
fn canonical_key(alg: &str, key: &str) -> String {
    let k = key.trim().replace('-', "_");
    KEY_ALIASES
        .iter()
        .find(|(algs, alias, _)| *alias == k && algs.contains(&alg))
        .map_or(k, |(_, _, long)| (*long).to_string())
}

impl FromStr for AlgorithmSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let mut parts = s.split(',');
        let name = parts.next().unwrap_or("").trim();
        let alg = canonical_algorithm(name);
        // A parameter given twice is a mistake (the last would win silently), also under
        // two of its names (`per-pe` and `per_pe`, `moves` and `sa_moves`).
        let keys: Vec<String> = s
            .split(',')
            .skip(1)
            .filter_map(|p| p.split_once('=').map(|(k, _)| canonical_key(alg, k)))
            .collect();
        if let Some(k) = keys
            .iter()
            .enumerate()
            .find_map(|(i, k)| keys[..i].contains(k).then_some(k))
        {
            return Err(Error::Config(format!(
                "{name}: parameter \"{k}\" is given twice in \"{s}\""
            )));
        }
        let spec = match alg {
            "block" => AlgorithmSpec::Block,
            "round-robin" => AlgorithmSpec::RoundRobin,
            "random" => AlgorithmSpec::Random,
            "drb" => {
                let mut spec = crate::mappers::drb::DrbSpec::default();
                for p in parts.by_ref() {
                    spec.set(p)?;
                }
                AlgorithmSpec::Drb(spec)
            }
            "greedy-perego" => {
                let mut g = crate::perego::greedy::GreedyPerego::default();
                for p in parts.by_ref() {
                    g.set(p)?;
                }
                AlgorithmSpec::GreedyPerego(g)
            }
            "multilevel" => {
                let mut spec = crate::multilevel::config::MultilevelSpec::default();
                for p in parts.by_ref() {
                    spec.set(p)?;
                }
                if (spec.combines.is_some() || spec.batch.is_some())
                    && spec.population.unwrap_or(1) < 2
                {
                    return Err(Error::Config(format!(
                        "{name}: combines and batch need the memetic mode, population=2 or more, in \"{s}\""
                    )));
                }
                AlgorithmSpec::Multilevel(spec)
            }
            "gtwp" => {
                let mut g = crate::mappers::berger::gtwp::GtwpMapper::default();
                for p in parts.by_ref() {
                    g.set(p)?;
                }
                AlgorithmSpec::Gtwp(g)
            }
            "gtwp-fit" => AlgorithmSpec::GtwpFit,
            "subgraph" | "subgraph-dist" => {
                let mut spec = crate::mappers::berger::subgraph::SubgraphMapper {
                    distance_affinity: alg == "subgraph-dist",
                    ..Default::default()
                };
                for p in parts.by_ref() {
                    spec.set(p)?;
                }
                if spec.distance_affinity {
                    AlgorithmSpec::SubgraphDist(spec)
                } else {
                    AlgorithmSpec::Subgraph(spec)
                }
            }
            "pnp" => {
                let mut spec = crate::mappers::berger::pnp::PnpMapper::default();
                for p in parts.by_ref() {
                    spec.set(p)?;
                }
                AlgorithmSpec::Pnp(spec)
            }
            _ => {
                let names: Vec<&str> = Self::ALL.iter().map(|(n, _)| *n).collect();
                return Err(Error::Config(format!(
                    "unknown algorithm \"{}\"; known: {}",
                    name,
                    names.join(", ")
                )));
            }
        };
        if let Some(extra) = parts.find(|p| !p.trim().is_empty()) {
            return Err(Error::Config(format!(
                "algorithm \"{}\" takes no parameter, got \"{}\"",
                name, extra
            )));
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The effective parameters follow the preset and the overrides, for every algorithm.
    #[test]
    fn parameters_follow_presets_and_overrides() {
        let p = |s: &str| s.parse::<AlgorithmSpec>().unwrap().parameters();
        let d = p("multilevel");
        assert_eq!(d["initial_runs"], 2);
        assert_eq!(d["vcycles"], 4);
        assert_eq!(d["coarsening"], "lp");
        assert_eq!(d["alt_coarsening"], "ordered");
        assert_eq!(d["bipartitioner"]["tries"], 4);
        let s = p("multilevel,preset=strong");
        assert_eq!(s["initial_runs"], 8);
        assert_eq!(s["vcycles"], 8);
        assert_eq!(s["refiner"]["swap_rounds"], 3);
        assert_eq!(s["bipartitioner"]["coarse_tries"], 32);
        let f = p("ml,preset=fast,runs=3,coarsening2=none,vcycles=2");
        assert_eq!(f["initial_runs"], 3);
        assert_eq!(f["vcycles"], 2);
        assert_eq!(f["coarsening"], "ordered");
        assert!(f["alt_coarsening"].is_null());
        assert_eq!(p("drb,tries=7,refine=on")["bipartitioner"]["tries"], 7);
        assert_eq!(p("drb,tries=7,refine=on")["refine"], true);
        assert_eq!(p("gtwp,saturated=keep")["keep_saturated"], true);
        assert_eq!(p("pnp,moves=7")["sa_moves"], 7);
        // Every registered algorithm gives an object.
        for (name, _) in AlgorithmSpec::ALL {
            assert!(p(name).is_object(), "{name}: {}", p(name));
        }
    }

    /// Every alias of [`KEY_ALIASES`] sets what its long name sets, and the two together
    /// are a parameter given twice.
    #[test]
    fn key_aliases_match_the_mappers() {
        // The mapper of each parameter, and a value other than its default.
        let alg_of = |long: &str| match long {
            "sa_moves" => ("pnp", "7"),
            "initial_acceptance" => ("pnp", "0.3"),
            "size_factor" => ("subgraph", "0.25"),
            "min_candidates" => ("greedy-perego", "5"),
            "refine_evals" => ("greedy-perego", "11"),
            "degree_radius" => ("greedy-perego", "3"),
            "bounding_box" => ("greedy-perego", "off"),
            _ => ("greedy-perego", "9"),
        };
        for &(algs, alias, long) in KEY_ALIASES {
            let (alg, v) = alg_of(long);
            assert!(algs.contains(&alg), "{alias} is {alg}'s");
            let a: AlgorithmSpec = format!("{alg},{alias}={v}").parse().unwrap();
            let b: AlgorithmSpec = format!("{alg},{long}={v}").parse().unwrap();
            assert_eq!(a, b, "{alias} and {long}");
            assert_ne!(
                a,
                alg.parse::<AlgorithmSpec>().unwrap(),
                "{alias} sets nothing"
            );
            let e = format!("{alg},{alias}={v},{long}={v}")
                .parse::<AlgorithmSpec>()
                .unwrap_err();
            assert!(e.to_string().contains("given twice"), "{e}");
        }
        assert!("multilevel,per-pe=4,per_pe=8"
            .parse::<AlgorithmSpec>()
            .is_err());
        assert!("multilevel,per_pe=4,runs=2"
            .parse::<AlgorithmSpec>()
            .is_ok());
        // An alias of another algorithm is no alias here: `drb`'s own `refine` and the
        // unknown `refine_evals` are two parameters, and the unknown one is named.
        let e = "drb,refine=on,refine_evals=1"
            .parse::<AlgorithmSpec>()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown parameter") && e.contains("refine_evals"),
            "{e}"
        );
        // Every spelling of an algorithm has its aliases.
        for alg in ["perego", "p&p", "subgraph-dist"] {
            let (alias, long) = match alg {
                "perego" => ("g", "degree_radius"),
                "p&p" => ("moves", "sa_moves"),
                _ => ("factor", "size_factor"),
            };
            let e = format!("{alg},{alias}=3,{long}=3")
                .parse::<AlgorithmSpec>()
                .unwrap_err();
            assert!(e.to_string().contains("given twice"), "{alg}: {e}");
        }
    }
}
