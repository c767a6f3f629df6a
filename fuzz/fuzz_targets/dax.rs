//! Fuzz target: Pegasus DAX workflows.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::dax(data));
