//! Fuzz target: WfCommons workflows (JSON).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::wfcommons(data));
