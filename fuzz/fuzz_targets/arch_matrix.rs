//! Fuzz target: distance matrices (matrix:FILE).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::arch_matrix(data));
