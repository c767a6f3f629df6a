//! The hetero family's algorithms by their registry names: one call that allocates a
//! program's tasks to a platform's processors with MATEHa, HEFT, PEFT or our searches.

use crate::error::Error;
use crate::hetero::heft::{heft, heft_ls, peft};
use crate::hetero::mateha::{iterated_local_search, levels, mateha, SearchParams};
use crate::hetero::ttigha::Ttigha;
use crate::registry::{find, Family};

/// An allocation and what came with it.
#[derive(Clone, Debug)]
pub struct Allocation {
    /// The registry name of the algorithm.
    pub algorithm: &'static str,
    /// The processor of every task.
    pub alloc: Vec<u32>,
    /// The order each processor runs its sub-tasks in, when the algorithm plans one (HEFT,
    /// PEFT, heft-ls); `None`: the simulator's priority order.
    pub order: Option<Vec<Vec<u32>>>,
    /// The level of every task (MATEHa's levels of the TTIGHa graph).
    pub levels: Vec<u32>,
}

/// Allocates `model`'s tasks with the hetero algorithm named `name` (or an alias);
/// `search` drives the local searches of `mateha-ls` and `heft-ls`.
pub fn allocate(name: &str, model: &Ttigha, search: &SearchParams) -> Result<Allocation, Error> {
    let row = find(name, &[Family::Hetero])?;
    let pr = &model.program;
    let (alloc, order, levels) = match row.name {
        "mateha" => {
            let r = mateha(model);
            (r.alloc, None, r.level)
        }
        "mateha-ls" => {
            let r = mateha(model);
            let mut alloc = r.alloc;
            iterated_local_search(model, &mut alloc, search);
            (alloc, None, r.level)
        }
        "heft-ls" => {
            let (alloc, order) = heft_ls(model, search);
            (alloc, Some(order), levels(pr))
        }
        "heft" | "peft" => {
            let h = if row.name == "heft" {
                heft(model)
            } else {
                peft(model)
            };
            (h.alloc, Some(h.order), levels(pr))
        }
        other => unreachable!("{other} is a registry row of the hetero family without a run"),
    };
    Ok(Allocation {
        algorithm: row.name,
        alloc,
        order,
        levels,
    })
}
