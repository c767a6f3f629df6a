//! Fuzz target: Slurm node lists.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::node_list(data));
