//! The greedy mapper of De Petris & Perego on a program, and what its mapping gives on the
//! wormhole simulator. Shared by the tests `sim_greedy` and the example
//! `greedy_perego_tables` (which includes this file with `#[path]`).

use taskmap::perego::gen::generate_program;
use taskmap::perego::greedy::{greedy_map_program, GreedyPerego};
use taskmap::perego::wormhole::{simulate, simulate_ideal, WormholeParams};
use taskmap::perego::Program;
use taskmap::{parse_arch, Mapping};

/// Simulated completion, ideal completion, largest dilation, and whether every PE holds
/// at most one task.
#[allow(
    dead_code,
    reason = "the example greedy_perego_tables does not read one_per_pe"
)]
pub struct Outcome {
    pub sim: u64,
    pub ideal: u64,
    pub max_dilation: u64,
    pub one_per_pe: bool,
}

/// The greedy mapper with `params` on the program `gen` onto `arch` (generator and
/// architecture specs), and its outcome.
pub fn run(gen: &str, arch: &str, params: &GreedyPerego) -> Outcome {
    let prog = generate_program(gen).unwrap();
    let arch = parse_arch(arch).unwrap();
    let m = greedy_map_program(&prog, arch.as_ref(), params).unwrap();
    outcome(&prog, arch.as_ref(), &m)
}

/// The outcome of `m` for `prog` on `arch`, with the default wormhole parameters.
pub fn outcome(prog: &Program, arch: &dyn taskmap::Architecture, m: &Mapping) -> Outcome {
    let wp = WormholeParams::default();
    let ideal = simulate_ideal(prog, &wp).unwrap().completion;
    let sim = simulate(prog, arch, m, &wp).unwrap().completion;
    let g = prog.to_task_graph();
    let mut max_dilation = 0;
    for u in 0..g.num_tasks() as u32 {
        for &v in g.neighbors(u) {
            max_dilation = max_dilation.max(arch.distance(m.pe(u), m.pe(v)));
        }
    }
    let mut used: Vec<u32> = m.as_slice().iter().map(|p| p.0).collect();
    used.sort_unstable();
    used.dedup();
    Outcome {
        sim,
        ideal,
        max_dilation,
        one_per_pe: used.len() == m.len(),
    }
}
