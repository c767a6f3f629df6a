//! Round-robin mapping: task i on PE i mod k. Ignores capacities and weights. O(n).

use taskmap_arch::PeId;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::mapper::{Mapper, RunContext};
use crate::mapping::Mapping;
use crate::problem::Problem;
use crate::registry::{ParamDoc, Params};

/// The round-robin mapper. No parameters.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundRobinMapper {}

impl Params for RoundRobinMapper {
    const DOCS: &'static [ParamDoc] = &[];
}

impl Mapper for RoundRobinMapper {
    fn name(&self) -> &'static str {
        "round-robin"
    }

    fn map(&self, problem: &Problem, _ctx: &mut RunContext) -> Result<Mapping, Error> {
        problem.check()?;
        let k = problem.arch.pe_count();
        Ok(Mapping::new(
            (0..problem.graph.num_tasks() as u32)
                .map(|t| PeId(t % k))
                .collect(),
        ))
    }
}
