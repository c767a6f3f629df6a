//! Tori of any number of dimensions (Scotch `torus2D`, `torus3D`, `torusXD`).

use crate::mesh::{grid_arch, Grid};
use crate::ArchError;

/// A torus (k-ary n-cube with wrap-around) of any number of dimensions.
///
/// PE numbering is row-major with dimension 0 fastest, as for [`crate::Mesh`] and Scotch.
/// The distance is `sum_i min(|dx_i|, d_i - |dx_i|)`, in O(dims) arithmetic.
///
/// Domains are boxes that never wrap (`Domain.a`/`Domain.b` = lower/upper corner PE), split
/// as in a mesh. The domain distance is the wrap-around Manhattan distance between box
/// centres, rounded half up per axis.
///
/// Routes are dimension ordered, taking the shorter way round each ring; when both ways
/// are equally long (`|dx| = d/2`) the route goes in the `+` direction. Link ids are as in
/// a mesh: `(pe * dims + i) * 2 + s`, `s = 0` for `+`. In a dimension of size 2 the `+` and
/// `-` links of a PE reach the same neighbour; they remain two distinct link ids. In a
/// dimension of size 1 there are no usable links.
#[derive(Clone, Debug)]
pub struct Torus {
    pub(crate) grid: Grid,
}

impl Torus {
    /// Dimension sizes, dimension 0 first; every size >= 1, at least one dimension,
    /// product within `u32`.
    pub fn new(dims: Vec<u32>) -> Result<Self, ArchError> {
        Ok(Torus {
            grid: Grid::new(dims, true)?,
        })
    }

    /// The dimension sizes.
    pub fn dims(&self) -> &[u32] {
        &self.grid.dims
    }
}

grid_arch!(Torus, "torus");
