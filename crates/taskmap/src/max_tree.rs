//! A tree of maxima over slots: set a slot, read the maximum, walk the nodes, or find the
//! leftmost slot holding at least a value (`O(log n)` each).

/// Maxima over `size` (a power of two) leaves; node 1 is the root, node `j` has children
/// `2j` and `2j + 1`, leaves are nodes `size..2·size`.
#[derive(Clone)]
pub(crate) struct MaxTree {
    size: usize,
    v: Vec<f64>,
}

impl MaxTree {
    /// `n` slots holding `fill` (the padding slots hold minus infinity).
    pub(crate) fn new(n: usize, fill: f64) -> Self {
        let size = n.next_power_of_two().max(1);
        let mut v = vec![f64::NEG_INFINITY; 2 * size];
        v[size..size + n].fill(fill);
        let mut t = Self { size, v };
        t.fix_all();
        t
    }

    fn fix_all(&mut self) {
        for i in (1..self.size).rev() {
            self.v[i] = self.v[2 * i].max(self.v[2 * i + 1]);
        }
    }

    /// Slots `0..r.len()` take the values of `r`.
    pub(crate) fn rebuild(&mut self, r: &[f64]) {
        self.v[self.size..self.size + r.len()].copy_from_slice(r);
        self.fix_all();
    }

    pub(crate) fn set(&mut self, i: usize, x: f64) {
        let mut j = self.size + i;
        self.v[j] = x;
        while j > 1 {
            j /= 2;
            self.v[j] = self.v[2 * j].max(self.v[2 * j + 1]);
        }
    }

    /// The value of node `j`.
    #[inline]
    pub(crate) fn node(&self, j: u32) -> f64 {
        self.v[j as usize]
    }

    /// The slot of a leaf node, `None` for an inner node.
    #[inline]
    pub(crate) fn leaf(&self, j: u32) -> Option<usize> {
        (j as usize >= self.size).then(|| j as usize - self.size)
    }

    pub(crate) fn max(&self) -> f64 {
        self.v[1]
    }

    /// The leftmost slot `>= from` holding at least `x`.
    pub(crate) fn first_at_least(&self, from: usize, x: f64) -> Option<usize> {
        self.descend(1, 0, self.size, from, x)
    }

    fn descend(&self, node: usize, lo: usize, hi: usize, from: usize, x: f64) -> Option<usize> {
        if hi <= from || self.v[node] < x {
            return None;
        }
        if hi - lo == 1 {
            return Some(lo);
        }
        let mid = (lo + hi) / 2;
        self.descend(2 * node, lo, mid, from, x)
            .or_else(|| self.descend(2 * node + 1, mid, hi, from, x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftmost_slot_at_least_matches_a_scan() {
        let vals = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0];
        let mut t = MaxTree::new(vals.len(), 0.0);
        for (i, &v) in vals.iter().enumerate() {
            t.set(i, v);
        }
        assert_eq!(t.max(), 9.0);
        for from in 0..8 {
            for x in [0.5, 2.0, 3.5, 4.5, 9.0, 10.0] {
                let scan = (from..vals.len()).find(|&i| vals[i] >= x);
                assert_eq!(t.first_at_least(from, x), scan, "from {from} x {x}");
            }
        }
    }
}
