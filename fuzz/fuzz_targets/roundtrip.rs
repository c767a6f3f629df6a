//! Fuzz target: property: parse, print and parse again is stable.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::roundtrip(data));
