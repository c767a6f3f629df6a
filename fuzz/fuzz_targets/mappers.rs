//! Fuzz target: property: every mapper gives a valid mapping or a clear error.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::mappers(data));
