//! A distance-table cache in front of any architecture.

use crate::{Architecture, Domain, LinkGraph, PeId, Routing};

/// Largest `k` whose `k x k` table is cached (64 MiB as `u32`).
pub const PRECOMPUTED_MAX_PES: u32 = 4096;

/// Wraps an architecture and caches its `k x k` distance table when `k <=`
/// [`PRECOMPUTED_MAX_PES`] (as `u32` when every distance fits, else `u64`); everything else
/// (and every distance when `k` is larger) is forwarded. `spec()` is the inner spec.
#[derive(Debug)]
pub struct Precomputed {
    inner: Box<dyn Architecture>,
    table: Table,
}

#[derive(Debug)]
enum Table {
    None,
    U32(Vec<u32>),
    U64(Vec<u64>),
}

impl Precomputed {
    /// Builds the table (O(k^2) distance calls) when `k` is small enough.
    pub fn new(inner: Box<dyn Architecture>) -> Self {
        let k = inner.pe_count();
        let table = if k <= PRECOMPUTED_MAX_PES {
            let mut v = Vec::with_capacity(k as usize * k as usize);
            for a in 0..k {
                for b in 0..k {
                    v.push(inner.distance(PeId(a), PeId(b)));
                }
            }
            if v.iter().all(|&d| d <= u64::from(u32::MAX)) {
                Table::U32(v.into_iter().map(|d| d as u32).collect())
            } else {
                Table::U64(v)
            }
        } else {
            Table::None
        };
        Precomputed { inner, table }
    }

    /// The wrapped architecture.
    pub fn inner(&self) -> &dyn Architecture {
        &*self.inner
    }

    /// Whether the table is cached.
    pub fn is_cached(&self) -> bool {
        !matches!(self.table, Table::None)
    }
}

impl Architecture for Precomputed {
    fn pe_count(&self) -> u32 {
        self.inner.pe_count()
    }
    #[inline]
    fn distance(&self, a: PeId, b: PeId) -> u64 {
        let k = self.inner.pe_count() as usize;
        match &self.table {
            Table::U32(t) => u64::from(t[a.idx() * k + b.idx()]),
            Table::U64(t) => t[a.idx() * k + b.idx()],
            Table::None => self.inner.distance(a, b),
        }
    }
    fn pe_capacity(&self, pe: PeId) -> u64 {
        self.inner.pe_capacity(pe)
    }
    fn root(&self) -> Domain {
        self.inner.root()
    }
    fn bipartition(&self, d: &Domain) -> Option<(Domain, Domain)> {
        self.inner.bipartition(d)
    }
    fn domain_distance(&self, a: &Domain, b: &Domain) -> u64 {
        self.inner.domain_distance(a, b)
    }
    fn domain_size(&self, d: &Domain) -> u32 {
        self.inner.domain_size(d)
    }
    fn domain_pes(&self, d: &Domain, out: &mut Vec<PeId>) {
        self.inner.domain_pes(d, out)
    }
    fn domain_capacity(&self, d: &Domain) -> u64 {
        self.inner.domain_capacity(d)
    }
    fn routing(&self) -> Option<&dyn Routing> {
        self.inner.routing()
    }
    fn traffic_routes(&self) -> Option<Box<dyn crate::TrafficRoutes + '_>> {
        self.inner.traffic_routes()
    }
    fn spec(&self) -> String {
        self.inner.spec()
    }
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn known_diameter(&self) -> Option<u64> {
        self.inner.known_diameter()
    }
    fn is_uniform(&self) -> bool {
        self.inner.is_uniform()
    }
    fn link_graph(&self) -> Option<LinkGraph> {
        self.inner.link_graph()
    }
    fn scotch_target(&self) -> Option<String> {
        self.inner.scotch_target()
    }
    fn shape(&self) -> crate::Shape<'_> {
        self.inner.shape()
    }
}
