//! Fuzz target: algorithm specs (name,key=value).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::algorithm_spec(data));
