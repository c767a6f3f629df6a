//! The hetero family's algorithms by their registry names: one call that allocates a
//! program's tasks to a platform's processors with MATEHa, HEFT, PEFT or our searches,
//! configured from `name,key=value,...` ([`HeteroSpec`]).

use std::fmt;
use std::str::FromStr;

use crate::error::Error;
use crate::hetero::heft::{heft, heft_ls, peft};
use crate::hetero::mateha::{iterated_local_search, levels, mateha, SearchParams};
use crate::hetero::ttigha::Ttigha;
use crate::registry::params::parse_params;
use crate::registry::{find, split, Algorithm, Family, NoParams};

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

/// A hetero-family algorithm with its parameters, parsed from `name,key=value,...`:
/// `mateha-ls` and `heft-ls` take [`SearchParams`]' keys, the others none.
#[derive(Clone, Copy)]
pub struct HeteroSpec {
    row: &'static Algorithm,
    /// The searches' parameters (`None`: an algorithm without a search).
    search: Option<SearchParams>,
}

impl HeteroSpec {
    /// Its registry row.
    pub fn row(&self) -> &'static Algorithm {
        self.row
    }

    /// Its registry name.
    pub fn name(&self) -> &'static str {
        self.row.name
    }

    /// The parameters of its search (the default for an algorithm without one).
    pub fn search(&self) -> SearchParams {
        self.search.unwrap_or_default()
    }

    /// The effective parameters, every field (`{}` for an algorithm without any).
    pub fn parameters(&self) -> serde_json::Value {
        match &self.search {
            Some(p) => serde_json::to_value(p).unwrap_or(serde_json::Value::Null),
            None => serde_json::json!({}),
        }
    }

    /// Allocates `model`'s tasks.
    pub fn allocate(&self, model: &Ttigha) -> Allocation {
        run(self.row, model, &self.search())
    }
}

impl FromStr for HeteroSpec {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        let (row, params) = split(text, &[Family::Hetero])?;
        let search = match row.name {
            "mateha-ls" | "heft-ls" => {
                Some(parse_params::<SearchParams>(row.name, text, &params, None)?)
            }
            _ => {
                parse_params::<NoParams>(row.name, text, &params, None)?;
                None
            }
        };
        Ok(HeteroSpec { row, search })
    }
}

impl fmt::Debug for HeteroSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.row.name, self.parameters())
    }
}

impl PartialEq for HeteroSpec {
    fn eq(&self, other: &Self) -> bool {
        self.row.name == other.row.name && self.search == other.search
    }
}

/// Allocates `model`'s tasks with the hetero algorithm named `name` (or an alias);
/// `search` drives the local searches of `mateha-ls` and `heft-ls`.
pub fn allocate(name: &str, model: &Ttigha, search: &SearchParams) -> Result<Allocation, Error> {
    Ok(run(find(name, &[Family::Hetero])?, model, search))
}

/// Runs the algorithm of `row`.
fn run(row: &'static Algorithm, model: &Ttigha, search: &SearchParams) -> Allocation {
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
    Allocation {
        algorithm: row.name,
        alloc,
        order,
        levels,
    }
}
