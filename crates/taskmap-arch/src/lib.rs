//! Target architectures for taskmap: processing elements (PEs), distances between them,
//! domains with a bipartition (for recursive mappers), and deterministic routes.
//!
//! Every architecture implements the object-safe [`Architecture`] trait. [`parse_arch`]
//! reads a CLI spec (`torus:16x16`, `tree:4:8:6/1:10:100`, `graph:FILE`, ...) or a Scotch
//! target file (`torus2D 16 16`, `tleaf 3 8 90 8 9 4 1`, ...).
//!
//! | kind | CLI spec | Scotch target |
//! |---|---|---|
//! | [`Complete`] | `complete:64` | `cmplt 64` |
//! | [`WeightedComplete`] | `wcomplete:1,1,2,4` (one capacity per PE) | `cmpltw 4 1 1 2 4` |
//! | [`Hypercube`] | `hypercube:6` | `hcub 6` |
//! | [`Mesh`] | `mesh:8x8x8`, `mesh:16` | `mesh2D 8 8`, `mesh3D 8 8 8`, `meshXD 4 2 2 2 2` |
//! | [`Torus`] | `torus:16x16` | `torus2D 16 16`, `torus3D ...`, `torusXD n d0 ...` |
//! | [`Tree`] | `tree:4:8:6/1:10:100` (counts bottom-up, distance of the highest differing level) | `tleaf 3 6 90 8 9 4 1` (top-down, cumulative costs) |
//! | [`ExplicitGraph`] | `graph:FILE` (METIS target graph) | none |
//! | [`DistanceMatrix`] | `matrix:FILE` | none |
//! | [`Subset`] | `sub:0-3,8-11:torus:8x8` (PE list, then the inner spec) | `sub 8 0 1 2 3 8 9 10 11` + inner target |
//! | [`LabelledTree`] | its Scotch text | `ltleaf 2 2 10 4 1 4 3 2 1 0` (a `tleaf`, then a permutation of each block of leaves) |
//!
//! A file name (or `tgt:FILE`) holding a Scotch target, and a Scotch target written inline
//! (`"torus2D 8 8"`), are accepted too. See [`parse_arch`] for the details of every syntax.
//!
//! PE numbering is Scotch's everywhere: meshes and tori are row-major with dimension 0
//! fastest (`pe = x0 + d0 * (x1 + d1 * (x2 + ...))`, Scotch's `t(x, y) = y * dX + x`),
//! hypercube PEs are their binary labels, and tree leaves of one lowest group are
//! consecutive.

mod complete;
mod deco;
mod domtree;
mod error;
mod explicit;
mod graymesh;
mod hwloc;
mod hypercube;
mod ltleaf;
mod machine;
mod matrix;
mod mesh;
mod precomputed;
mod routes;
mod spec;
mod stats;
mod subset;
mod torus;
mod tree;
mod wcomplete;

#[cfg(test)]
mod tests;

pub use complete::Complete;
pub use deco::{DecoTerminal, Decomposition, DECO_MAX_TERMINALS};
pub use error::ArchError;
pub use explicit::{ExplicitGraph, FULL_MATRIX_MAX_PES};
pub use graymesh::GrayMesh;
pub use hypercube::Hypercube;
pub use ltleaf::LabelledTree;
pub use machine::{expand_node_list, rank_reordering, LevelKind, Machine, Site, MAX_NODES};
pub use matrix::DistanceMatrix;
pub use mesh::Mesh;
pub use precomputed::{Precomputed, PRECOMPUTED_MAX_PES};
pub use routes::{TrafficRoutes, MAX_TRAFFIC_LINKS};
pub use spec::{parse_arch, parse_machine, write_scotch_target};
pub use stats::{
    diameter, explicit_graph_of, mean_distance, LinkGraph, EXACT_STATS_MAX_PES, STATS_SAMPLES,
};
pub use subset::{Subset, SUBSET_MAX_INNER_PES};
pub use torus::Torus;
pub use tree::{Tree, MAX_TREE_LEVELS};
pub use wcomplete::WeightedComplete;

use std::fmt::Debug;

/// A processing element id, `0..pe_count()`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PeId(pub u32);

impl PeId {
    /// The id as an index.
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

/// A directed link id of an architecture with routes, `0..link_count()`.
pub type LinkId = u32;

/// A set of PEs that a recursive mapper can split in two. A small `Copy` value that only
/// the architecture that made it interprets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Domain {
    /// Architecture-specific words (for example an index into a precomputed domain tree).
    pub a: u32,
    pub b: u32,
    pub c: u32,
}

/// Deterministic message routes over a target's directed links: dimension order on meshes
/// and tori, e-cube on hypercubes. The wormhole simulator, the contention model F and link
/// loads use them; [`Architecture::routing`] gives them where a target has them.
pub trait Routing {
    /// Number of directed links, ids `0..link_count()`.
    fn link_count(&self) -> u32;
    /// Appends the directed links of the route from `a` to `b` to `out`.
    fn route(&self, a: PeId, b: PeId, out: &mut Vec<LinkId>);
    /// The PEs a directed link goes from and to. Links that exist as ids but not
    /// physically (the `+` link of a mesh PE on the upper boundary) give `None`.
    fn link_endpoints(&self, link: LinkId) -> Option<(PeId, PeId)>;
    /// The directed links that exist physically (the ids whose
    /// [`Routing::link_endpoints`] is `Some`): counted by default, in closed form where the
    /// target has one.
    fn physical_link_count(&self) -> u64 {
        (0..self.link_count())
            .filter(|&l| self.link_endpoints(l).is_some())
            .count() as u64
    }
}

/// The shape of a target, as far as mappers exploit it: the hints that its PE ids lie on
/// a grid or a hypercube. [`Architecture::shape`] gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape<'a> {
    /// A mesh (`torus: false`) or torus of these dimension sizes (dimension 0 first, the
    /// PE id in mixed radix, dimension 0 fastest).
    Grid {
        /// The dimension sizes.
        dims: &'a [u32],
        /// Whether it has wrap-around links.
        torus: bool,
    },
    /// A hypercube of `2^dim` PEs.
    Hypercube {
        /// Its dimension.
        dim: u32,
    },
    /// No shape the mappers use.
    Other,
}

impl Shape<'_> {
    /// The dimension sizes of a mesh or torus.
    pub fn grid_dims(&self) -> Option<&[u32]> {
        match self {
            Shape::Grid { dims, .. } => Some(dims),
            _ => None,
        }
    }

    /// The same PEs (same ids) without wrap-around links, for a torus with a ring of more
    /// than two PEs: its mesh. Its distances are at least the torus's, so a mapping made
    /// for it costs at most as much on the torus. Recursive mappers use its domains for
    /// task graphs that are not periodic themselves: on a torus, the two halves of a split
    /// ring are equally close to either end of the other half, and bipartitioning cannot
    /// tell which end a cut should face (Scotch's 100x100 grid onto `torus2D 16 16` suffers
    /// from this).
    pub fn unwrapped(&self) -> Option<Box<dyn Architecture>> {
        match self {
            Shape::Grid { dims, torus: true } if dims.iter().any(|&d| d > 2) => {
                let mesh = Mesh::new(dims.to_vec()).ok()?;
                Some(Box::new(mesh))
            }
            _ => None,
        }
    }

    /// The same PEs (same ids) laid out as a two-dimensional mesh whose distances are at
    /// least the target's, for a hypercube: its Gray-code mesh ([`GrayMesh`]). Recursive
    /// mappers may split its domains instead of the hypercube's, whose halves are all
    /// alike, so that the splits of a mesh-like task graph drift into strips (the
    /// 1000x1000 grid onto `hypercube:8` cut 41,432 edges, where 16x16 blocks cut 30,000).
    pub fn mesh_layout(&self) -> Option<Box<dyn Architecture>> {
        match self {
            Shape::Hypercube { dim } => {
                GrayMesh::new(*dim).map(|g| Box::new(g) as Box<dyn Architecture>)
            }
            _ => None,
        }
    }
}

/// A target architecture, modelled on Scotch's target abstraction.
pub trait Architecture: Debug + Send + Sync {
    /// Number of PEs, `k`.
    fn pe_count(&self) -> u32;
    /// Distance (communication cost per unit of edge weight) between two PEs; 0 iff `a == b`.
    fn distance(&self, a: PeId, b: PeId) -> u64;
    /// The distances from `a` to the first `out.len()` PEs: `out[b] = distance(a, b)`. The
    /// default makes one [`Architecture::distance`] call per PE; meshes and tori walk the
    /// coordinates instead (distance tables are built row by row with it).
    fn distances_from(&self, a: PeId, out: &mut [u64]) {
        for (b, o) in out.iter_mut().enumerate() {
            *o = self.distance(a, PeId(b as u32));
        }
    }
    /// Capacity (relative speed / load weight) of a PE. 1 unless the target says otherwise.
    fn pe_capacity(&self, _pe: PeId) -> u64 {
        1
    }
    /// The domain holding every PE.
    fn root(&self) -> Domain;
    /// Splits a domain in two non-empty halves; `None` for a single PE.
    fn bipartition(&self, d: &Domain) -> Option<(Domain, Domain)>;
    /// Distance between two domains (an average-like distance used by recursive mappers;
    /// for single-PE domains it equals [`Architecture::distance`]).
    fn domain_distance(&self, a: &Domain, b: &Domain) -> u64;
    /// Number of PEs in a domain.
    fn domain_size(&self, d: &Domain) -> u32;
    /// Appends the PEs of a domain to `out`.
    fn domain_pes(&self, d: &Domain, out: &mut Vec<PeId>);
    /// Sum of the PE capacities: a loop over the PEs unless the target knows it (every
    /// PE of capacity 1: the PE count).
    fn total_capacity(&self) -> u128 {
        (0..self.pe_count())
            .map(|p| u128::from(self.pe_capacity(PeId(p))))
            .sum()
    }
    /// Sum of the PE capacities of a domain.
    fn domain_capacity(&self, d: &Domain) -> u64 {
        let mut v = Vec::new();
        self.domain_pes(d, &mut v);
        v.iter().map(|&p| self.pe_capacity(p)).sum()
    }
    /// The routes over its links, when it has them (meshes, tori and hypercubes whose
    /// link ids fit in 32 bits).
    fn routing(&self) -> Option<&dyn Routing> {
        None
    }
    /// The routes traffic takes, for link congestion ([`TrafficRoutes`]): dimension order
    /// where the target has [`Architecture::routing`], up and down the levels of a tree,
    /// shortest paths with ties split evenly on an explicit graph, the direct link on a
    /// complete target; `None` for targets without links (distance matrices).
    fn traffic_routes(&self) -> Option<Box<dyn TrafficRoutes + '_>> {
        self.routing()
            .map(|r| Box::new(routes::DimensionOrder(r)) as Box<dyn TrafficRoutes + '_>)
    }
    /// The canonical CLI spec of this architecture; `parse_arch(spec)` gives it back.
    fn spec(&self) -> String;

    /// Short name of the architecture kind (`"mesh"`, `"torus"`, ...).
    fn name(&self) -> &'static str {
        "custom"
    }
    /// The largest distance between two PEs when a closed form is known.
    fn known_diameter(&self) -> Option<u64> {
        None
    }
    /// Whether every PE has the same capacity.
    fn is_uniform(&self) -> bool {
        (0..self.pe_count()).all(|p| self.pe_capacity(PeId(p)) == self.pe_capacity(PeId(0)))
    }
    /// The physical link graph, see [`explicit_graph_of`].
    fn link_graph(&self) -> Option<LinkGraph> {
        None
    }
    /// The Scotch target text, see [`write_scotch_target`].
    fn scotch_target(&self) -> Option<String> {
        None
    }
    /// Its shape, as far as mappers use it (a grid, a hypercube).
    fn shape(&self) -> Shape<'_> {
        Shape::Other
    }
}
