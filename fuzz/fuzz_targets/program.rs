//! Fuzz target: timed programs (.prog).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::program(data));
