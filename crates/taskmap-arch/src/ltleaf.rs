//! A tree whose leaves are relabelled block by block (Scotch `ltleaf`).

use crate::subset::format_pe_list;
use crate::tree::Tree;
use crate::{ArchError, Architecture, Domain, PeId};

/// A [`Tree`] whose leaves carry labels: every block of `perm.len()` consecutive leaves is
/// relabelled by `perm`, leaf `i` getting label `i - i % P + perm[i % P]`, and PE `L` is
/// the leaf labelled `L`. Distances, domains and capacities are the tree's, read through
/// the labels; the labelling takes memory for the permutation only, not per leaf, so a
/// tree of tens of millions of leaves costs what the tree costs.
///
/// Scotch syntax: `ltleaf L s0 c0 .. s(L-1) c(L-1) P perm0 .. perm(P-1)`, which is also its
/// spec (see [`Architecture::spec`] below for a tree of one leaf).
#[derive(Debug)]
pub struct LabelledTree {
    tree: Tree,
    /// `perm[slot]`: the label offset of the leaf at offset `slot` of its block.
    perm: Vec<u32>,
    /// The inverse: `inv[offset]` is the slot of the leaf labelled with that offset.
    inv: Vec<u32>,
}

impl LabelledTree {
    /// `tree` with every block of `perm.len()` leaves relabelled by `perm`, which must be
    /// a permutation of `0..P` with `P` dividing the tree's leaf count.
    pub fn new(tree: Tree, perm: Vec<u32>) -> Result<Self, ArchError> {
        let p = perm.len() as u32;
        if p == 0 || !tree.pe_count().is_multiple_of(p) {
            return Err(ArchError::invalid(format!(
                "permutation size {p} does not divide the {} leaves of the tree",
                tree.pe_count()
            )));
        }
        let mut inv = vec![u32::MAX; p as usize];
        for (slot, &v) in perm.iter().enumerate() {
            if v >= p || inv[v as usize] != u32::MAX {
                return Err(ArchError::invalid(format!(
                    "the labels are not a permutation of 0..{p} ({v} at position {slot})"
                )));
            }
            inv[v as usize] = slot as u32;
        }
        Ok(Self { tree, perm, inv })
    }

    /// The leaf of the tree labelled `pe`.
    #[inline]
    fn leaf(&self, pe: PeId) -> PeId {
        let p = self.perm.len() as u32;
        PeId(pe.0 - pe.0 % p + self.inv[(pe.0 % p) as usize])
    }

    /// The label of leaf `leaf` of the tree.
    #[inline]
    fn label(&self, leaf: PeId) -> PeId {
        let p = self.perm.len() as u32;
        PeId(leaf.0 - leaf.0 % p + self.perm[(leaf.0 % p) as usize])
    }

    /// The tree with its leaves in their own order.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }
}

// Like a subset's, its shape is `Shape::Other`: a tree's groups are ranges of leaves, not
// of labels.
impl Architecture for LabelledTree {
    fn pe_count(&self) -> u32 {
        self.tree.pe_count()
    }
    #[inline]
    fn distance(&self, a: PeId, b: PeId) -> u64 {
        self.tree.distance(self.leaf(a), self.leaf(b))
    }
    fn pe_capacity(&self, pe: PeId) -> u64 {
        self.tree.pe_capacity(self.leaf(pe))
    }
    fn root(&self) -> Domain {
        self.tree.root()
    }
    fn bipartition(&self, d: &Domain) -> Option<(Domain, Domain)> {
        self.tree.bipartition(d)
    }
    fn domain_distance(&self, a: &Domain, b: &Domain) -> u64 {
        self.tree.domain_distance(a, b)
    }
    fn domain_size(&self, d: &Domain) -> u32 {
        self.tree.domain_size(d)
    }
    fn domain_pes(&self, d: &Domain, out: &mut Vec<PeId>) {
        let start = out.len();
        self.tree.domain_pes(d, out);
        for pe in &mut out[start..] {
            *pe = self.label(*pe);
        }
    }
    fn total_capacity(&self) -> u128 {
        self.tree.total_capacity()
    }
    fn domain_capacity(&self, d: &Domain) -> u64 {
        self.tree.domain_capacity(d)
    }
    fn traffic_routes(&self) -> Option<Box<dyn crate::TrafficRoutes + '_>> {
        let inner = self.tree.traffic_routes()?;
        if inner.link_count() > crate::MAX_TRAFFIC_LINKS {
            return None;
        }
        let pes: Vec<PeId> = (0..self.pe_count()).map(|l| self.leaf(PeId(l))).collect();
        Some(Box::new(crate::routes::SubsetRoutes::new(inner, pes)))
    }
    /// Its Scotch text; for a tree without `tleaf` levels (a single PE, or a tree not
    /// read from a `tleaf`) the subset of the tree listing the leaf of every label.
    fn spec(&self) -> String {
        self.scotch_target().unwrap_or_else(|| {
            let leaves: Vec<PeId> = (0..self.pe_count()).map(|l| self.leaf(PeId(l))).collect();
            format!("sub:{}:{}", format_pe_list(&leaves), self.tree.spec())
        })
    }
    fn name(&self) -> &'static str {
        "ltleaf"
    }
    fn known_diameter(&self) -> Option<u64> {
        self.tree.known_diameter()
    }
    fn is_uniform(&self) -> bool {
        self.tree.is_uniform()
    }
    fn scotch_target(&self) -> Option<String> {
        let tleaf = self.tree.scotch_target()?;
        let perm: Vec<String> = self.perm.iter().map(|v| v.to_string()).collect();
        Some(format!("l{tleaf} {} {}", self.perm.len(), perm.join(" ")))
    }
}
