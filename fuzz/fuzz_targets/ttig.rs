//! Fuzz target: TTIGHa models (.ttig).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::ttig(data));
