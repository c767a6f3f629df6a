//! The registry: every algorithm of every system, in one table ([`ALGORITHMS`]).
//!
//! A row gives an algorithm's name, its aliases, its family (what it maps), one line of
//! help and its parameters ([`params`]), parsed from `name,key=value,...`: into a
//! configured mapper for the static and program families ([`AlgorithmSpec`]), into
//! [`HeteroSpec`](crate::hetero::allocate::HeteroSpec) and
//! [`PrecedenceSpec`](crate::houstis::spec::PrecedenceSpec) for the others. The CLI's lists
//! and help, `taskmap algorithms` and the parameter tables of `docs/algorithms.md` all
//! come from this table. Adding a static mapper is its file, its row here and its line in
//! the docs.

pub mod doc;
pub mod params;

use std::any::Any;
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::Error;
use crate::hetero::mateha::SearchParams;
use crate::houstis::alloc::AllocOptions;
use crate::houstis::schedule::AllocLsOptions;
use crate::mapper::Mapper;
use crate::mappers::berger::{gtwp, pnp, subgraph};
use crate::mappers::{block, drb, exact, random, round_robin};
use crate::multilevel::config::MultilevelMapper;
use crate::perego::greedy::GreedyPerego;
pub use params::{NoParams, ParamDoc, Params};

/// What an algorithm maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Task graphs onto target architectures (`taskmap map`, `compare`, `sim`).
    Static,
    /// Message-passing programs onto wormhole machines, by their completion time (`taskmap
    /// sim`; also task graphs through `map`).
    Program,
    /// Programs of sub-tasks onto heterogeneous multi-clusters (`taskmap hetero`).
    Hetero,
    /// Precedence graphs onto shared-memory machines (`taskmap amap`).
    Precedence,
}

impl Family {
    /// Every family, in the order of the documentation.
    pub const ALL: [Family; 4] = [
        Family::Static,
        Family::Program,
        Family::Hetero,
        Family::Precedence,
    ];

    /// Its name, as `taskmap algorithms --family` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Family::Static => "static",
            Family::Program => "program",
            Family::Hetero => "hetero",
            Family::Precedence => "precedence",
        }
    }

    /// Whether `taskmap map`, `compare` and `sim` run the family's algorithms.
    pub fn maps_task_graphs(self) -> bool {
        matches!(self, Family::Static | Family::Program)
    }
}

/// An algorithm's parameters, for the documentation.
#[derive(Clone, Copy)]
pub struct ParamSet {
    /// The key that picks a preset, if any.
    pub preset_key: Option<&'static str>,
    /// The presets' names.
    pub presets: fn() -> Vec<&'static str>,
    /// Every key.
    pub docs: &'static [ParamDoc],
    /// The default of every field, as `--dump-config` prints them.
    pub defaults: fn() -> serde_json::Value,
}

impl ParamSet {
    /// The parameters of `P`.
    pub const fn of<P: Params>() -> Self {
        Self {
            preset_key: P::PRESET_KEY,
            presets: params::preset_names::<P>,
            docs: P::DOCS,
            defaults: defaults::<P>,
        }
    }
}

fn defaults<P: Params>() -> serde_json::Value {
    serde_json::to_value(P::default()).unwrap_or(serde_json::Value::Null)
}

/// Builds a configured mapper from a row, the parameters after the name, and a preset
/// given apart (`--preset`).
pub type Build = fn(&Algorithm, &[&str], Option<&str>) -> Result<Box<dyn Configured>, Error>;

/// One row of the registry.
pub struct Algorithm {
    /// The name (`-A NAME`).
    pub name: &'static str,
    /// Other names it answers to.
    pub aliases: &'static [&'static str],
    /// What it maps.
    pub family: Family,
    /// One line of help.
    pub summary: &'static str,
    /// Its parameters (`None`: none).
    pub params: Option<ParamSet>,
    /// Builds it from `name,key=value,...` (the static and program families).
    pub build: Option<Build>,
    /// Whether `taskmap compare` runs it when no algorithm is named (not the exact
    /// search, which is for small instances and may run long).
    pub compared_by_default: bool,
}

impl fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// The row's builder for a mapper that is its own parameter struct.
pub fn build<P: Params + Mapper + 'static>(
    row: &Algorithm,
    params: &[&str],
    preset: Option<&str>,
) -> Result<Box<dyn Configured>, Error> {
    let spec = std::iter::once(row.name)
        .chain(params.iter().copied())
        .collect::<Vec<_>>()
        .join(",");
    let p: P = params::parse_params(row.name, &spec, params, preset)?;
    Ok(Box::new(p))
}

/// The row of a mapper that is its own parameter struct `P`.
const fn mapper<P: Params + Mapper + 'static>(
    name: &'static str,
    aliases: &'static [&'static str],
    family: Family,
    summary: &'static str,
) -> Algorithm {
    Algorithm {
        name,
        aliases,
        family,
        summary,
        params: Some(ParamSet::of::<P>()),
        build: Some(build::<P>),
        compared_by_default: true,
    }
}

/// The row of an algorithm its subcommand runs, with its parameter struct `P`.
const fn run_with<P: Params>(
    name: &'static str,
    family: Family,
    summary: &'static str,
) -> Algorithm {
    Algorithm {
        name,
        aliases: &[],
        family,
        summary,
        params: Some(ParamSet::of::<P>()),
        build: None,
        compared_by_default: false,
    }
}

/// Every algorithm.
pub static ALGORITHMS: &[Algorithm] = &[
    mapper::<block::BlockMapper>(
        "block",
        &["identity"],
        Family::Static,
        "contiguous blocks of tasks in id order, sized by PE capacity (identity when n = k)",
    ),
    mapper::<round_robin::RoundRobinMapper>(
        "round-robin",
        &["rr"],
        Family::Static,
        "task i on PE i mod k",
    ),
    mapper::<random::RandomMapper>(
        "random",
        &[],
        Family::Static,
        "random permutation of the tasks, then blocks (balanced, seeded)",
    ),
    mapper::<drb::DrbMapper>(
        "drb",
        &[],
        Family::Static,
        "dual recursive bipartitioning of tasks and target (Scotch's method)",
    ),
    mapper::<MultilevelMapper>(
        "multilevel",
        &["ml"],
        Family::Static,
        "multilevel: coarsen, map the coarsest graph (DRB, or multisection along a tree's levels), refine f_C on every level, V-cycles",
    ),
    Algorithm {
        compared_by_default: false,
        ..mapper::<exact::ExactMapper>(
            "exact",
            &["bnb"],
            Family::Static,
            "branch and bound for the least f_C under the balance or capacity rule (small instances: at most 64 tasks); a node or time limit gives the best mapping found and a proven lower bound",
        )
    },
    mapper::<GreedyPerego>(
        "greedy-perego",
        &["perego"],
        Family::Program,
        "De Petris & Perego's greedy mapper minimising their completion-time estimate F on wormhole k-ary n-cubes (mesh, torus, hypercube)",
    ),
    mapper::<gtwp::GtwpMapper>(
        "gtwp",
        &[],
        Family::Static,
        "greedy task-wise placement with distance affinities (Berger et al. 2014, Alg. 1, literal); respects --capacity",
    ),
    mapper::<gtwp::GtwpFitMapper>(
        "gtwp-fit",
        &[],
        Family::Static,
        "GTWP choosing the best PE among those the task fits on, no BFT jumps (ours)",
    ),
    mapper::<subgraph::SubgraphMapper>(
        "subgraph",
        &[],
        Family::Static,
        "subgraph placement (Berger et al. 2014, Alg. 2, literal): BFS subgraphs of factor x max remaining capacity to the PE of highest affinity",
    ),
    mapper::<subgraph::SubgraphDistMapper>(
        "subgraph-dist",
        &[],
        Family::Static,
        "subgraph placement choosing the PE by distance affinity (ours)",
    ),
    mapper::<pnp::PnpMapper>(
        "pnp",
        &["p&p"],
        Family::Static,
        "partition and place: GRASP partitioning into capacity-feasible parts, simulated-annealing QAP placement",
    ),
    run_with::<NoParams>(
        "mateha",
        Family::Hetero,
        "MATEHa, De Giusti et al.'s allocation by levels of the TTIGHa graph (the default)",
    ),
    run_with::<SearchParams>(
        "mateha-ls",
        Family::Hetero,
        "MATEHa, then an iterated local search guided by SIMULHa (ours; keys kicks, budget, seed, rounds)",
    ),
    run_with::<NoParams>(
        "heft",
        Family::Hetero,
        "Topcuoglu et al.'s HEFT list scheduler, for comparison (the simulation follows its order unless --order is given)",
    ),
    run_with::<SearchParams>(
        "heft-ls",
        Family::Hetero,
        "HEFT, then mateha-ls's search in HEFT's priority order from the better of HEFT's and MATEHa's allocations (ours; keys kicks, budget, seed, rounds)",
    ),
    run_with::<NoParams>(
        "peft",
        Family::Hetero,
        "Arabnejad & Barbosa's PEFT lookahead list scheduler, followed in its order like heft",
    ),
    run_with::<AllocOptions>(
        "alloc",
        Family::Precedence,
        "Houstis et al.'s ALLOC: clustering under a time frame, then assignment by the queueing delay model (the default)",
    ),
    run_with::<AllocLsOptions>(
        "alloc-ls",
        Family::Precedence,
        "ALLOC, then a local search on the simulated schedule (ours; alloc's keys and budget)",
    ),
];

/// The row named `name` (or one of its aliases) in `family`, or an error that lists the
/// family's names.
pub fn find(name: &str, families: &[Family]) -> Result<&'static Algorithm, Error> {
    let name = name.trim();
    ALGORITHMS
        .iter()
        .filter(|a| families.contains(&a.family))
        .find(|a| a.name == name || a.aliases.contains(&name))
        .ok_or_else(|| {
            Error::Config(format!(
                "unknown algorithm \"{name}\"; known: {}",
                names(families).join(", ")
            ))
        })
}

/// The row of `text` (`name,key=value,...`) in `families` and its `key=value` entries.
pub fn split<'t>(
    text: &'t str,
    families: &[Family],
) -> Result<(&'static Algorithm, Vec<&'t str>), Error> {
    let mut parts = text.split(',');
    let row = find(parts.next().unwrap_or(""), families)?;
    Ok((row, parts.collect()))
}

/// The names of the static mappers `taskmap compare` runs when none is named.
pub fn compared_by_default() -> Vec<&'static str> {
    compared_by_default_in(&[Family::Static])
}

/// The names of the mappers of `families` that `taskmap compare` runs when none is named
/// (`compare --program` adds the program family: greedy-perego).
pub fn compared_by_default_in(families: &[Family]) -> Vec<&'static str> {
    ALGORITHMS
        .iter()
        .filter(|a| families.contains(&a.family) && a.compared_by_default)
        .map(|a| a.name)
        .collect()
}

/// The names of the algorithms of `families`, in the table's order.
pub fn names(families: &[Family]) -> Vec<&'static str> {
    ALGORITHMS
        .iter()
        .filter(|a| families.contains(&a.family))
        .map(|a| a.name)
        .collect()
}

/// A configured mapper: a [`Mapper`] that is also its parameters.
pub trait Configured: Mapper {
    /// The effective parameters, as JSON (every field, defaults included; `{}` when there
    /// are none).
    fn parameters(&self) -> serde_json::Value;
    /// The mapper, to look at its type.
    fn as_any(&self) -> &dyn Any;
}

impl<T: Mapper + Serialize + 'static> Configured for T {
    fn parameters(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A mapper of the static or program family, configured from `name,key=value,...`.
pub struct AlgorithmSpec {
    row: &'static Algorithm,
    mapper: Box<dyn Configured>,
}

impl AlgorithmSpec {
    /// Parses `text` (`name` or `name,key=value,...`) with a preset given apart
    /// (`--preset`; an error for an algorithm without presets, or with one in `text`).
    pub fn parse_with_preset(text: &str, preset: Option<&str>) -> Result<Self, Error> {
        let (row, params) = split(text, &[Family::Static, Family::Program])?;
        if preset.is_some() && row.params.and_then(|p| p.preset_key).is_none() {
            return Err(Error::Config(format!("{}: takes no preset", row.name)));
        }
        let build = row
            .build
            .ok_or_else(|| Error::Config(format!("{} is not run by name", row.name)))?;
        Ok(Self {
            row,
            mapper: build(row, &params, preset)?,
        })
    }

    /// Its registry row.
    pub fn row(&self) -> &'static Algorithm {
        self.row
    }

    /// The configured mapper.
    pub fn mapper(&self) -> &dyn Mapper {
        self.mapper.as_ref()
    }

    /// The configured mapper as a `T`, if it is one.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        self.mapper.as_any().downcast_ref()
    }

    /// The effective parameters: the preset and the keys applied, every field, defaults
    /// included (`{}` for an algorithm without parameters). What the multilevel mapper
    /// decides per problem (its adaptive runs and tries, coarsest size and V-cycle count,
    /// see [`crate::multilevel::driver`]) applies on top.
    pub fn parameters(&self) -> serde_json::Value {
        self.mapper.parameters()
    }
}

impl Mapper for AlgorithmSpec {
    fn name(&self) -> &'static str {
        self.row.name
    }

    fn map(
        &self,
        problem: &crate::Problem,
        ctx: &mut crate::RunContext,
    ) -> Result<crate::Mapping, Error> {
        self.mapper.map(problem, ctx)
    }

    fn honours_deadline(&self) -> bool {
        self.mapper.honours_deadline()
    }
}

impl FromStr for AlgorithmSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Self::parse_with_preset(s, None)
    }
}

impl fmt::Debug for AlgorithmSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.row.name, self.parameters())
    }
}

impl PartialEq for AlgorithmSpec {
    fn eq(&self, other: &Self) -> bool {
        self.row.name == other.row.name && self.parameters() == other.parameters()
    }
}

impl Serialize for AlgorithmSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.row.name)
    }
}
