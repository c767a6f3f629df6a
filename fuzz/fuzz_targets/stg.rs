//! Fuzz target: Standard Task Graphs (.stg).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::stg(data));
