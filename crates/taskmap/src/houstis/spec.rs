//! The precedence family's algorithms by their registry names, configured from
//! `name,key=value,...`: `alloc` ([`AllocOptions`]) and `alloc-ls` ([`AllocLsOptions`]).

use std::str::FromStr;

use crate::error::Error;
use crate::houstis::alloc::AllocOptions;
use crate::houstis::machine::Machine;
use crate::houstis::mapper::{algorithm_mapper_observed, AmapResult};
use crate::houstis::precedence::{Deterministic, ParallelMatrix, PrecedenceGraph};
use crate::houstis::schedule::{alloc_ls_observed, AllocLsOptions};
use crate::mapper::Progress;
use crate::registry::params::parse_params;
use crate::registry::{split, Family};

/// A precedence-family algorithm with its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PrecedenceSpec {
    /// `alloc`, the paper's Algorithm Mapper.
    Alloc(AllocOptions),
    /// `alloc-ls`, ours.
    AllocLs(AllocLsOptions),
}

impl PrecedenceSpec {
    /// Its registry name.
    pub fn name(&self) -> &'static str {
        match self {
            PrecedenceSpec::Alloc(_) => "alloc",
            PrecedenceSpec::AllocLs(_) => "alloc-ls",
        }
    }

    /// Its ALLOC keys.
    pub fn alloc(&self) -> AllocOptions {
        match self {
            PrecedenceSpec::Alloc(o) => *o,
            PrecedenceSpec::AllocLs(o) => o.alloc(),
        }
    }

    /// The effective parameters, every field.
    pub fn parameters(&self) -> serde_json::Value {
        match self {
            PrecedenceSpec::Alloc(o) => serde_json::to_value(o),
            PrecedenceSpec::AllocLs(o) => serde_json::to_value(o),
        }
        .unwrap_or(serde_json::Value::Null)
    }

    /// `Δ` of `g`, unless the keys say `no_parallelism=1`.
    pub fn parallel(
        &self,
        g: &PrecedenceGraph,
        det: &Deterministic,
    ) -> Result<Option<ParallelMatrix>, Error> {
        if self.alloc().no_parallelism {
            return Ok(None);
        }
        ParallelMatrix::new(g, det).map(Some).map_err(|e| {
            Error::Config(format!(
                "{e}; {},no_parallelism=1 maps without it",
                self.name()
            ))
        })
    }

    /// Maps `g` onto `machine`: builds `Δ` (unless `no_parallelism`), then runs the
    /// algorithm, its frames clustered on `pool`.
    pub fn run(
        &self,
        g: &PrecedenceGraph,
        det: &Deterministic,
        machine: &Machine,
        pool: Option<&rayon::ThreadPool>,
        progress: &dyn Progress,
    ) -> Result<AmapResult, Error> {
        let options = self.alloc();
        let parallel = self.parallel(g, det)?;
        let params = options.params(pool);
        match self {
            PrecedenceSpec::Alloc(_) => {
                algorithm_mapper_observed(g, det, parallel.as_ref(), machine, &params, progress)
            }
            PrecedenceSpec::AllocLs(o) => alloc_ls_observed(
                g,
                det,
                parallel.as_ref(),
                machine,
                &params,
                o.budget,
                progress,
            ),
        }
    }
}

impl FromStr for PrecedenceSpec {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        let (row, params) = split(text, &[Family::Precedence])?;
        Ok(match row.name {
            "alloc" => PrecedenceSpec::Alloc(parse_params(row.name, text, &params, None)?),
            "alloc-ls" => PrecedenceSpec::AllocLs(parse_params(row.name, text, &params, None)?),
            other => {
                unreachable!("{other} is a registry row of the precedence family without a run")
            }
        })
    }
}
