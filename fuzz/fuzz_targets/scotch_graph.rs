//! Fuzz target: Scotch source graphs (.grf).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::scotch_graph(data));
