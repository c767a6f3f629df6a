//! Fuzz target: directed volumes, CSV or whitespace.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::volumes(data));
