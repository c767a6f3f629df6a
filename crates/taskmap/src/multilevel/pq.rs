//! An addressable binary max-heap over items `0..n` with `i64` keys. Ties pop in a
//! deterministic order (they depend only on the sequence of operations).

const NONE: u32 = u32::MAX;

/// Addressable max-heap: push, change key, remove and pop in O(log n).
#[derive(Clone, Debug, Default)]
pub struct IndexedHeap {
    heap: Vec<(i64, u32)>,
    pos: Vec<u32>,
}

impl IndexedHeap {
    /// An empty heap for items `0..n`.
    pub fn new(n: usize) -> Self {
        Self {
            heap: Vec::new(),
            pos: vec![NONE; n],
        }
    }

    /// Grows the item range to at least `n` and empties the heap.
    pub fn reset(&mut self, n: usize) {
        self.clear();
        if self.pos.len() < n {
            self.pos.resize(n, NONE);
        }
    }

    /// Removes every item, O(len).
    pub fn clear(&mut self) {
        for &(_, it) in &self.heap {
            self.pos[it as usize] = NONE;
        }
        self.heap.clear();
    }

    /// Number of items held.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether the heap is empty.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Whether `it` is held.
    #[inline]
    pub fn contains(&self, it: u32) -> bool {
        self.pos[it as usize] != NONE
    }

    /// The largest key and its item.
    pub fn peek(&self) -> Option<(u32, i64)> {
        self.heap.first().map(|&(k, it)| (it, k))
    }

    /// Inserts `it` with `key`, or changes its key when held.
    pub fn set(&mut self, it: u32, key: i64) {
        let p = self.pos[it as usize];
        if p == NONE {
            self.heap.push((key, it));
            let i = self.heap.len() - 1;
            self.pos[it as usize] = i as u32;
            self.sift_up(i);
        } else {
            let i = p as usize;
            let old = self.heap[i].0;
            self.heap[i].0 = key;
            if key > old {
                self.sift_up(i);
            } else {
                self.sift_down(i);
            }
        }
    }

    /// Empties the heap and fills it with `items` (distinct, each once) in O(len)
    /// (Floyd's bottom-up heap construction). With distinct keys, the items then pop in
    /// the same order as after one [`IndexedHeap::set`] each.
    pub fn build(&mut self, items: impl IntoIterator<Item = (u32, i64)>) {
        self.clear();
        for (it, key) in items {
            debug_assert_eq!(self.pos[it as usize], NONE, "item {it} given twice");
            self.pos[it as usize] = self.heap.len() as u32;
            self.heap.push((key, it));
        }
        for i in (0..self.heap.len() / 2).rev() {
            self.sift_down(i);
        }
    }

    /// Removes `it` if held.
    pub fn remove(&mut self, it: u32) {
        let p = self.pos[it as usize];
        if p == NONE {
            return;
        }
        let i = p as usize;
        self.pos[it as usize] = NONE;
        let last = self.heap.pop().expect("a held item");
        if i < self.heap.len() {
            // The last item fills the gap and moves up or down (not both: one that moves
            // up leaves its old parent at `i`, above all of `i`'s subtree).
            self.heap[i] = last;
            if i > 0 && self.heap[(i - 1) / 2].0 < last.0 {
                self.sift_up(i);
            } else {
                self.sift_down(i);
            }
        }
    }

    /// Removes and returns the item with the largest key.
    pub fn pop(&mut self) -> Option<(u32, i64)> {
        let (it, k) = self.peek()?;
        self.remove(it);
        Some((it, k))
    }

    // Both sifts move a hole instead of swapping (each item passed over is written once,
    // with its position), and compare as a swap-based sift would: the same heap results.
    fn sift_up(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            let pe = self.heap[parent];
            if pe.0 >= e.0 {
                break;
            }
            self.heap[i] = pe;
            self.pos[pe.1 as usize] = i as u32;
            i = parent;
        }
        self.heap[i] = e;
        self.pos[e.1 as usize] = i as u32;
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let e = self.heap[i];
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.heap[r].0 > self.heap[l].0 {
                r
            } else {
                l
            };
            let ce = self.heap[c];
            if e.0 >= ce.0 {
                break;
            }
            self.heap[i] = ce;
            self.pos[ce.1 as usize] = i as u32;
            i = c;
        }
        self.heap[i] = e;
        self.pos[e.1 as usize] = i as u32;
    }
}

/// A queue key that orders by gain, then most recently queued first. FM with such LIFO
/// ties follows the moving front along the cut, which straightens cuts on meshes (a 100×100
/// grid bisected: cut 114 with the heap's own tie order, 100 with LIFO ties). Gains are
/// clamped to ±2^38 to leave 24 bits for the stamp, which wraps.
#[inline]
pub fn lifo_key(gain: i64, stamp: &mut i64) -> i64 {
    *stamp = (*stamp + 1) & 0xFF_FFFF;
    (clamp_gain(gain) << 24) | *stamp
}

/// A gain as a [`lifo_key`] holds it (clamped to ±2^38): compare a gain with
/// [`key_gain`] through this, or a gain beyond the clamp never matches its own key.
#[inline]
pub fn clamp_gain(gain: i64) -> i64 {
    gain.clamp(-(1 << 38), 1 << 38)
}

/// The gain of a [`lifo_key`].
#[inline]
pub fn key_gain(key: i64) -> i64 {
    key >> 24
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key gives back its gain as clamped, also for gains beyond ±2^38.
    #[test]
    fn keys_hold_clamped_gains() {
        let mut stamp = 0;
        for g in [
            0i64,
            5,
            -5,
            1 << 38,
            -(1 << 38),
            (1 << 38) + 1,
            -(1 << 40),
            i64::MAX / 2,
        ] {
            let key = lifo_key(g, &mut stamp);
            assert_eq!(key_gain(key), clamp_gain(g), "gain {g}");
            assert!(clamp_gain(g).abs() <= 1 << 38);
        }
    }

    #[test]
    fn pops_in_key_order_after_updates() {
        let mut h = IndexedHeap::new(10);
        for i in 0..10u32 {
            h.set(i, (i as i64 * 7) % 10);
        }
        h.set(3, 100);
        h.set(9, -5);
        h.remove(0);
        let mut prev = i64::MAX;
        let mut count = 0;
        while let Some((_, k)) = h.pop() {
            assert!(k <= prev);
            prev = k;
            count += 1;
        }
        assert_eq!(count, 9);
    }

    /// The swap-based heap the hole-moving sifts replaced: set, remove and pop leave
    /// the same array and positions in both, so ties pop in the same order.
    #[derive(Default)]
    struct SwapHeap {
        heap: Vec<(i64, u32)>,
        pos: Vec<u32>,
    }

    impl SwapHeap {
        fn swap(&mut self, i: usize, j: usize) {
            self.heap.swap(i, j);
            self.pos[self.heap[i].1 as usize] = i as u32;
            self.pos[self.heap[j].1 as usize] = j as u32;
        }
        fn up(&mut self, mut i: usize) {
            while i > 0 && self.heap[(i - 1) / 2].0 < self.heap[i].0 {
                self.swap(i, (i - 1) / 2);
                i = (i - 1) / 2;
            }
        }
        fn down(&mut self, mut i: usize) {
            loop {
                let (l, r) = (2 * i + 1, 2 * i + 2);
                if l >= self.heap.len() {
                    return;
                }
                let c = if r < self.heap.len() && self.heap[r].0 > self.heap[l].0 {
                    r
                } else {
                    l
                };
                if self.heap[i].0 >= self.heap[c].0 {
                    return;
                }
                self.swap(i, c);
                i = c;
            }
        }
        fn set(&mut self, it: u32, key: i64) {
            match self.pos[it as usize] {
                NONE => {
                    self.heap.push((key, it));
                    self.pos[it as usize] = (self.heap.len() - 1) as u32;
                    self.up(self.heap.len() - 1);
                }
                p => {
                    let old = self.heap[p as usize].0;
                    self.heap[p as usize].0 = key;
                    if key > old {
                        self.up(p as usize);
                    } else {
                        self.down(p as usize);
                    }
                }
            }
        }
        fn remove(&mut self, it: u32) {
            let p = self.pos[it as usize];
            if p == NONE {
                return;
            }
            let last = self.heap.len() - 1;
            self.swap(p as usize, last);
            self.heap.pop();
            self.pos[it as usize] = NONE;
            if (p as usize) < self.heap.len() {
                self.up(p as usize);
                self.down(p as usize);
            }
        }
    }

    #[test]
    fn same_array_as_swapping_sifts() {
        let n = 300u32;
        let mut a = IndexedHeap::new(n as usize);
        let mut b = SwapHeap {
            heap: Vec::new(),
            pos: vec![NONE; n as usize],
        };
        // A small key range, so that many keys tie.
        let mut x = 12345u64;
        for step in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let it = ((x >> 33) % n as u64) as u32;
            let key = ((x >> 13) % 17) as i64 - 8;
            match step % 5 {
                0..=2 => {
                    a.set(it, key);
                    b.set(it, key);
                }
                3 => {
                    a.remove(it);
                    b.remove(it);
                }
                _ => {
                    let top = b.heap.first().map(|&(_, t)| t);
                    if let Some(t) = top {
                        b.remove(t);
                    }
                    assert_eq!(a.pop().map(|(t, _)| t), top, "step {step}");
                }
            }
            assert_eq!(a.heap, b.heap, "step {step}");
            assert_eq!(a.pos, b.pos, "step {step}");
        }
    }

    #[test]
    fn build_pops_like_one_set_each() {
        let items: Vec<(u32, i64)> = (0..200u32)
            .map(|i| (i, ((i as i64 * 7919) % 211) * 1000 + i as i64))
            .collect();
        let mut a = IndexedHeap::new(200);
        for &(i, k) in &items {
            a.set(i, k);
        }
        let mut b = IndexedHeap::new(200);
        b.set(5, 1);
        b.build(items.iter().copied());
        assert_eq!(b.len(), 200);
        b.set(17, 1_000_000);
        a.set(17, 1_000_000);
        b.remove(40);
        a.remove(40);
        while let Some(x) = a.pop() {
            assert_eq!(b.pop(), Some(x));
        }
        assert!(b.is_empty());
    }
}
