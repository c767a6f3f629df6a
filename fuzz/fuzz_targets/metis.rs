//! Fuzz target: METIS / Chaco graphs.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::metis(data));
