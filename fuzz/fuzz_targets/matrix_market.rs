//! Fuzz target: Matrix Market matrices.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::matrix_market(data));
