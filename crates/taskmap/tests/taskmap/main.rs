//! The library's integration tests, one binary, a module per part: the static engine
//! (`mapping_engine`, `metrics`, `berger`), De Petris & Perego (`program`, `sim_*`), the
//! Algorithm Mapper (`amap`), heterogeneous multi-clusters (`hetero`), and every file
//! reader fed mutated inputs (`mutated_inputs`).

mod amap;
mod amap_eor;
mod amap_frame;
mod amap_optimal;
mod berger;
mod common;
mod exact;
mod greedy_outcome;
mod hetero;
mod mapping_engine;
mod metrics;
mod mutated_inputs;
mod perego_experiment;
mod program;
mod registry;
mod sim_greedy;
mod sim_perego_accuracy;
mod sim_properties;
mod sim_wormhole;
mod support;
