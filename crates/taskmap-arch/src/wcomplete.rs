//! The weighted complete graph (Scotch `cmpltw`): distance 1 between distinct PEs, and a
//! capacity (relative speed) per PE.

use crate::domtree::DomainTree;
use crate::{ArchError, Architecture, Domain, LinkGraph, PeId};

/// A complete graph whose PEs have capacities.
///
/// Bipartition rule (precomputed at construction): the PEs of a domain are sorted by
/// decreasing capacity (ties by id) and dealt, largest first, to the half with the smaller
/// capacity so far (ties to the first half) — the LPT rule, which keeps the two capacity
/// sums as even as a greedy rule can. Both halves are non-empty since capacities are >= 1.
#[derive(Clone, Debug)]
pub struct WeightedComplete {
    caps: Vec<u64>,
    tree: DomainTree,
}

impl WeightedComplete {
    /// One capacity per PE; at least one PE, every capacity >= 1, total within `u64`.
    pub fn new(capacities: Vec<u64>) -> Result<Self, ArchError> {
        if capacities.is_empty() {
            return Err(ArchError::invalid(
                "a weighted complete graph needs at least one PE",
            ));
        }
        if capacities.len() > u32::MAX as usize {
            return Err(ArchError::invalid("too many PEs"));
        }
        if let Some(i) = capacities.iter().position(|&c| c == 0) {
            return Err(ArchError::invalid(format!("capacity of PE {i} is 0")));
        }
        if capacities
            .iter()
            .try_fold(0u64, |a, &c| a.checked_add(c))
            .is_none()
        {
            return Err(ArchError::invalid("the sum of the capacities overflows"));
        }
        let k = capacities.len() as u32;
        let caps = capacities;
        let (tree, _) = DomainTree::build(
            (0..k).map(PeId).collect(),
            (),
            |p| caps[p.idx()],
            |slice, _| {
                slice.sort_by_key(|p| (std::cmp::Reverse(caps[p.idx()]), p.0));
                let (mut p0, mut p1) = (Vec::new(), Vec::new());
                let (mut c0, mut c1) = (0u64, 0u64);
                for &p in slice.iter() {
                    if c0 <= c1 {
                        c0 += caps[p.idx()];
                        p0.push(p);
                    } else {
                        c1 += caps[p.idx()];
                        p1.push(p);
                    }
                }
                let n0 = p0.len();
                p0.extend(p1);
                slice.copy_from_slice(&p0);
                (n0, (), ())
            },
        );
        Ok(WeightedComplete { caps, tree })
    }

    /// The capacities, one per PE.
    pub fn capacities(&self) -> &[u64] {
        &self.caps
    }
}

impl Architecture for WeightedComplete {
    fn traffic_routes(&self) -> Option<Box<dyn crate::TrafficRoutes + '_>> {
        Some(Box::new(crate::routes::DirectLinks { k: self.pe_count() }))
    }
    fn pe_count(&self) -> u32 {
        self.caps.len() as u32
    }
    #[inline]
    fn distance(&self, a: PeId, b: PeId) -> u64 {
        u64::from(a != b)
    }
    fn pe_capacity(&self, pe: PeId) -> u64 {
        self.caps[pe.idx()]
    }
    crate::domtree::tree_domains!();
    fn domain_distance(&self, a: &Domain, b: &Domain) -> u64 {
        u64::from(a.a != b.a)
    }
    fn spec(&self) -> String {
        let w: Vec<String> = self.caps.iter().map(|c| c.to_string()).collect();
        format!("wcomplete:{}", w.join(","))
    }
    fn name(&self) -> &'static str {
        "wcomplete"
    }
    fn known_diameter(&self) -> Option<u64> {
        Some(u64::from(self.caps.len() > 1))
    }
    fn is_uniform(&self) -> bool {
        self.caps.iter().all(|&c| c == self.caps[0])
    }
    fn link_graph(&self) -> Option<LinkGraph> {
        let k = self.pe_count();
        if u64::from(k) * u64::from(k) > 1 << 26 {
            return None;
        }
        let edges = (0..k)
            .flat_map(|a| (a + 1..k).map(move |b| (a, b, 1)))
            .collect();
        Some(LinkGraph::new(k, edges, 1))
    }
    fn scotch_target(&self) -> Option<String> {
        let w: Vec<String> = self.caps.iter().map(|c| c.to_string()).collect();
        Some(format!("cmpltw {} {}", self.caps.len(), w.join(" ")))
    }
}
