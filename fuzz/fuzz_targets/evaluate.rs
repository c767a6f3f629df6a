//! Fuzz target: property: evaluate equals a naive recomputation.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::evaluate(data));
