//! A task's neighbourhood rated by cluster: the summed edge weight towards each cluster,
//! as label propagation and contraction need it, in a table reused from task to task.

/// A map from cluster ids to summed weights, in insertion order: open addressing in a
/// power-of-two prefix of a reused table, sized per task and cleared in O(entries).
pub(crate) struct RatingMap {
    keys: Vec<u32>,
    vals: Vec<u64>,
    /// Occupied slots, in insertion order.
    used: Vec<u32>,
    /// Fibonacci-hash shift for the current size (64 − log2 size).
    shift: u32,
}

const EMPTY: u32 = u32::MAX;

impl RatingMap {
    /// An empty map.
    pub(crate) fn new() -> Self {
        let mut map = Self {
            keys: Vec::new(),
            vals: Vec::new(),
            used: Vec::new(),
            shift: 64,
        };
        map.reserve(0);
        map
    }

    /// Makes room for `entries` distinct keys; call while the map is empty.
    pub(crate) fn reserve(&mut self, entries: usize) {
        debug_assert!(self.used.is_empty());
        let size = (2 * entries).next_power_of_two().max(16);
        if self.keys.len() < size {
            self.keys = vec![EMPTY; size];
            self.vals = vec![0; size];
        }
        self.shift = 64 - size.trailing_zeros();
    }

    /// The first slot probed for `key`.
    #[inline]
    fn home(&self, key: u32) -> usize {
        ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Adds `w` to the weight of `key` (`key` < u32::MAX).
    #[inline]
    pub(crate) fn add(&mut self, key: u32, w: u64) {
        let mask = (1usize << (64 - self.shift)) - 1;
        let mut slot = self.home(key);
        loop {
            let k = self.keys[slot];
            if k == key {
                self.vals[slot] += w;
                return;
            }
            if k == EMPTY {
                self.keys[slot] = key;
                self.vals[slot] = w;
                self.used.push(slot as u32);
                return;
            }
            slot = (slot + 1) & mask;
        }
    }

    /// The keys and their weights, in insertion order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.used
            .iter()
            .map(|&s| (self.keys[s as usize], self.vals[s as usize]))
    }

    /// The weight of `key` (0 when absent).
    pub(crate) fn get(&self, key: u32) -> u64 {
        let mask = (1usize << (64 - self.shift)) - 1;
        let mut slot = self.home(key);
        loop {
            match self.keys[slot] {
                k if k == key => return self.vals[slot],
                EMPTY => return 0,
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    /// Empties the map.
    pub(crate) fn clear(&mut self) {
        for &s in &self.used {
            self.keys[s as usize] = EMPTY;
        }
        self.used.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_by_key_in_insertion_order_across_reuse() {
        let mut map = RatingMap::new();
        for round in 0..3u32 {
            map.reserve(40);
            let mut naive = std::collections::BTreeMap::new();
            let mut first = Vec::new();
            for i in 0..200u32 {
                let key = (i * 7919 + round) % 37 * 1_000_003 % 4_000_000_000;
                map.add(key, u64::from(i));
                if !naive.contains_key(&key) {
                    first.push(key);
                }
                *naive.entry(key).or_insert(0u64) += u64::from(i);
            }
            let got: Vec<(u32, u64)> = map.entries().collect();
            let want: Vec<(u32, u64)> = first.iter().map(|k| (*k, naive[k])).collect();
            assert_eq!(got, want);
            assert_eq!(map.get(first[3]), naive[&first[3]]);
            assert_eq!(map.get(5), 0);
            map.clear();
        }
    }
}
