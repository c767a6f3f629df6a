//! Fuzz target: hetero execution orders.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::order(data));
