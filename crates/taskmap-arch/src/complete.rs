//! The complete graph `K_k` (Scotch `cmplt`): every two distinct PEs at distance 1.

use crate::{ArchError, Architecture, Domain, LinkGraph, PeId};

/// The complete graph on `k` PEs. Domains are PE ranges (`Domain.a` = first PE,
/// `Domain.b` = count); a range splits into its first `ceil(n/2)` and last `floor(n/2)` PEs.
#[derive(Clone, Debug)]
pub struct Complete {
    k: u32,
}

impl Complete {
    /// `k >= 1` PEs.
    pub fn new(k: u32) -> Result<Self, ArchError> {
        if k == 0 {
            return Err(ArchError::invalid("a complete graph needs at least one PE"));
        }
        Ok(Complete { k })
    }
}

impl Architecture for Complete {
    fn traffic_routes(&self) -> Option<Box<dyn crate::TrafficRoutes + '_>> {
        Some(Box::new(crate::routes::DirectLinks { k: self.k }))
    }
    /// Every PE has capacity 1.
    fn total_capacity(&self) -> u128 {
        u128::from(self.pe_count())
    }
    fn pe_count(&self) -> u32 {
        self.k
    }
    #[inline]
    fn distance(&self, a: PeId, b: PeId) -> u64 {
        u64::from(a != b)
    }
    fn root(&self) -> Domain {
        Domain {
            a: 0,
            b: self.k,
            c: 0,
        }
    }
    fn bipartition(&self, d: &Domain) -> Option<(Domain, Domain)> {
        split_range(d)
    }
    fn domain_distance(&self, a: &Domain, b: &Domain) -> u64 {
        u64::from(a != b)
    }
    fn domain_size(&self, d: &Domain) -> u32 {
        d.b
    }
    fn domain_pes(&self, d: &Domain, out: &mut Vec<PeId>) {
        out.extend((d.a..d.a + d.b).map(PeId));
    }
    fn domain_capacity(&self, d: &Domain) -> u64 {
        u64::from(d.b)
    }
    fn spec(&self) -> String {
        format!("complete:{}", self.k)
    }
    fn name(&self) -> &'static str {
        "complete"
    }
    fn known_diameter(&self) -> Option<u64> {
        Some(u64::from(self.k > 1))
    }
    fn is_uniform(&self) -> bool {
        true
    }
    fn link_graph(&self) -> Option<LinkGraph> {
        let k = self.k;
        if u64::from(k) * u64::from(k) > 1 << 26 {
            return None;
        }
        let edges = (0..k)
            .flat_map(|a| (a + 1..k).map(move |b| (a, b, 1)))
            .collect();
        Some(LinkGraph::new(k, edges, 1))
    }
    fn scotch_target(&self) -> Option<String> {
        Some(format!("cmplt {}", self.k))
    }
}

/// Splits a `(first, count)` range domain into `ceil(count/2)` and `floor(count/2)`.
pub(crate) fn split_range(d: &Domain) -> Option<(Domain, Domain)> {
    (d.b >= 2).then(|| {
        let n0 = d.b.div_ceil(2);
        (
            Domain {
                a: d.a,
                b: n0,
                c: 0,
            },
            Domain {
                a: d.a + n0,
                b: d.b - n0,
                c: 0,
            },
        )
    })
}
