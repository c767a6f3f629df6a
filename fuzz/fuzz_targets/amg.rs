//! Fuzz target: Algorithm Mapper graphs (.amg).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::amg(data));
