//! Fuzz target: ISCAS-89 netlists (.bench).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::bench(data));
