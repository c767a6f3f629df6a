//! A fast multiplicative hasher for integer keys (the maps of the simulators and of
//! ALLOC hold millions of small integer keys; the standard SipHash dominates their time).

use std::hash::Hasher;

/// Multiplicative hashing of keys made of one integer (each integer written replaces the
/// state, so not for tuples; not for keys an adversary chooses).
#[derive(Clone, Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (x ^ (x >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
}

/// A `HashMap` with [`KeyHasher`].
pub(crate) type KeyMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<KeyHasher>>;
