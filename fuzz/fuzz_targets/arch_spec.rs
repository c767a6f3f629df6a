//! Fuzz target: target specs and inline Scotch targets.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::arch_spec(data));
