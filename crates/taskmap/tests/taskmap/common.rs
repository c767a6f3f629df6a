//! Helpers shared by the integration tests (and by the example `perego_accuracy`, which
//! includes this file with `#[path]`).

use std::collections::HashSet;

use taskmap::perego::spm::SpmModel;
use taskmap::{Architecture, Mapping};

/// The set of directed links of the route of every phase entry `(channel, flits)` under
/// `mapping`.
pub fn entry_routes(
    arch: &dyn Architecture,
    model: &SpmModel,
    mapping: &Mapping,
    entries: &[(u32, u64)],
) -> Vec<HashSet<u32>> {
    entries
        .iter()
        .map(|&(c, _)| {
            let ch = model.channels[c as usize];
            let mut v = Vec::new();
            arch.routing()
                .unwrap()
                .route(mapping.pe(ch.src), mapping.pe(ch.dst), &mut v);
            v.into_iter().collect()
        })
        .collect()
}

/// The classes of the transitive closure of "the routes share a link", found by graph
/// search over every pair (the naive counterpart of the union-find in `sim::perego`):
/// `class[e]` is the smallest index in `e`'s class.
pub fn route_classes(routes: &[HashSet<u32>]) -> Vec<usize> {
    let mut class = vec![usize::MAX; routes.len()];
    for s in 0..routes.len() {
        if class[s] != usize::MAX {
            continue;
        }
        let mut stack = vec![s];
        class[s] = s;
        while let Some(x) = stack.pop() {
            for y in 0..routes.len() {
                if class[y] == usize::MAX && !routes[x].is_disjoint(&routes[y]) {
                    class[y] = s;
                    stack.push(y);
                }
            }
        }
    }
    class
}
