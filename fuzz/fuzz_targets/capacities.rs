//! Fuzz target: capacity files.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::capacities(data));
