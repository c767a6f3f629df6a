//! Fuzz target: edge lists.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::edge_list(data));
