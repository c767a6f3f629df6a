//! Block mapping: tasks in id order fill the PEs in id order, each PE receiving a share of
//! the total load (vertex weight 0) proportional to its capacity: its load bound of
//! constraint 0 under hard capacities (`Problem::max_loads`), else the target's PE
//! capacity. With as many unit tasks as PEs of equal capacity this is the identity.
//! O(n log k).

use taskmap_arch::PeId;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::mapper::{Mapper, RunContext};
use crate::mapping::Mapping;
use crate::problem::Problem;
use crate::registry::{ParamDoc, Params};

/// The block (identity) mapper. No parameters.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockMapper {}

impl Params for BlockMapper {
    const DOCS: &'static [ParamDoc] = &[];
}

impl Mapper for BlockMapper {
    fn name(&self) -> &'static str {
        "block"
    }

    fn map(&self, problem: &Problem, _ctx: &mut RunContext) -> Result<Mapping, Error> {
        problem.check()?;
        let order: Vec<u32> = (0..problem.graph.num_tasks() as u32).collect();
        Ok(block_in_order(problem, &order))
    }
}

/// Assigns the tasks in `order` to PEs in id order so that the cumulative load follows the
/// cumulative capacity: a task goes to the PE whose capacity interval holds the midpoint of
/// the task's load interval (unit-weight tasks use their rank).
pub(crate) fn block_in_order(problem: &Problem, order: &[u32]) -> Mapping {
    let g = &problem.graph;
    let arch = problem.arch.as_ref();
    let k = arch.pe_count();
    // The shares: the hard capacities of constraint 0 when there are some, as the mappers
    // bound loads with them (`Problem::max_loads`: at most the total weight each; a PE of
    // capacity 0 gets nothing, unless all are 0), else the target's PE capacities.
    let hard = problem
        .capacities
        .as_ref()
        .map(|_| problem.max_loads(0))
        .filter(|m| m.iter().any(|&c| c > 0));
    let share = |p: u32| match &hard {
        Some(m) => m[p as usize],
        None => arch.pe_capacity(PeId(p)).max(1),
    };
    let mut cum_cap = Vec::with_capacity(k as usize);
    let mut acc = 0u128;
    for p in 0..k {
        acc += u128::from(share(p));
        cum_cap.push(acc as f64);
    }
    let cap_sum = acc as f64;
    // Zero-weight tasks count as weight 1 so that they spread too.
    let weight = |t: u32| g.vertex_weight(t, 0).max(1);
    let total: f64 = order.iter().map(|&t| weight(t) as f64).sum();
    let mut pes = vec![PeId(0); g.num_tasks()];
    let mut before = 0.0;
    for &t in order {
        let w = weight(t) as f64;
        let x = (before + w / 2.0) / total * cap_sum;
        let p = cum_cap.partition_point(|&c| c <= x);
        pes[t as usize] = PeId((p as u32).min(k - 1));
        before += w;
    }
    Mapping::new(pes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Capacities;

    /// With hard capacities the shares follow them: a PE of capacity 0 gets no task and
    /// no PE gets more than its capacity when the tasks fill them exactly.
    #[test]
    fn shares_follow_hard_capacities() {
        let g = taskmap_graph::gen::ring(8);
        let arch = taskmap_arch::parse_arch("complete:4").unwrap();
        let mut problem = Problem::new(g, arch);
        problem.capacities = Some(Capacities::from_vec(vec![1, 3, 0, 4], 1));
        let m = block_in_order(&problem, &(0..8).collect::<Vec<u32>>());
        let pes: Vec<u32> = m.as_slice().iter().map(|p| p.0).collect();
        assert_eq!(pes, vec![0, 1, 1, 1, 3, 3, 3, 3]);
        // Capacities far above the load count as the load (they once summed past 2^64
        // and sent every task to PE 0).
        problem.capacities = Some(Capacities::from_vec(vec![u64::MAX; 4], 1));
        let m = block_in_order(&problem, &(0..8).collect::<Vec<u32>>());
        let pes: Vec<u32> = m.as_slice().iter().map(|p| p.0).collect();
        assert_eq!(pes, vec![0, 0, 1, 1, 2, 2, 3, 3]);
        // Without them, equal shares.
        problem.capacities = None;
        let m = block_in_order(&problem, &(0..8).collect::<Vec<u32>>());
        let pes: Vec<u32> = m.as_slice().iter().map(|p| p.0).collect();
        assert_eq!(pes, vec![0, 0, 1, 1, 2, 2, 3, 3]);
    }
}
