//! Fuzz target: mapping files (Scotch .map and PE lists).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::mapping(data));
