//! Fuzz target: dense matrices (TreeMatch's format).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::dense(data));
