//! Random mapping: a uniformly random permutation of the tasks (from the run's seeded
//! generator), then block mapping in that order, so the result is balanced like
//! [`super::block`] and as far from locality as chance makes it. O(n log k).

use rand::seq::SliceRandom;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::mapper::{Mapper, RunContext};
use crate::mappers::block::block_in_order;
use crate::mapping::Mapping;
use crate::problem::Problem;
use crate::registry::{ParamDoc, Params};

/// The random mapper. No parameters; the seed comes from the run.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomMapper {}

impl Params for RandomMapper {
    const DOCS: &'static [ParamDoc] = &[];
}

impl Mapper for RandomMapper {
    fn name(&self) -> &'static str {
        "random"
    }

    fn map(&self, problem: &Problem, ctx: &mut RunContext) -> Result<Mapping, Error> {
        problem.check()?;
        let mut order: Vec<u32> = (0..problem.graph.num_tasks() as u32).collect();
        order.shuffle(&mut ctx.rng);
        Ok(block_in_order(problem, &order))
    }
}
