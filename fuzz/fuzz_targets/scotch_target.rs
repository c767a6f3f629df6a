//! Fuzz target: Scotch target files (tleaf, ltleaf, deco, sub, ...).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::scotch_target(data));
