//! Fuzz target: per-task weight side files.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::task_weights(data));
