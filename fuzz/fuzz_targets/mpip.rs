//! Fuzz target: mpiP graphStats volumes.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::mpip(data));
