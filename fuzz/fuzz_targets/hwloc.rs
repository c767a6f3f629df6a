//! Fuzz target: hwloc XML topologies.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::hwloc(data));
