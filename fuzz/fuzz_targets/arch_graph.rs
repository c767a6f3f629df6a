//! Fuzz target: target graphs (graph:FILE).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taskmap_fuzz::arch_graph(data));
