//! Ours, the simulated exchange pass ([`super::GreedyPerego::sim_refine`]): with the
//! program at hand, the moves of the exchange pass scored by the wormhole simulator
//! instead of by F.
//!
//! F is a maximum over PEs of per-PE sums; it does not see a delay travel from one task to
//! the next (a late sender sends late), which is what decides a reduce tree: on
//! `tree:511` / `mesh:16x32` the greedy's F is lower than the multilevel mapping's while
//! the simulated completion is higher. Here every candidate is simulated and kept when it
//! lowers (completion time, sum of the tasks' finishing times), compared in that order, so
//! the secondary sum guides the search across the plateaus of the maximum.
//!
//! Moves: a task with a partner farther than distance 1 goes to a PE next to one of its
//! partners' PEs, or is swapped with the task there (first improvement, tasks by id, passes
//! until one changes nothing). Runs only on one-task-per-PE mappings whose simulated
//! completion is above the ideal machine's. One pass is bounded by `sim_refine · T`
//! simulations and by [`SIM_REFINE_MAX_EVENTS`] simulated events, the ideal machine's run
//! included (with `multilevel_start` there are two passes, each with this budget); a
//! simulation that would cross that bound (at the event count of the mapping's first
//! simulation) is not started, and the pass is skipped when fewer than 16 simulations of
//! two events per instruction fit (programs of more than 262,144 instructions, such as a
//! 10,000-task random program with 600,000).

use taskmap_arch::{Architecture, PeId};

use super::topology::Topo;
use super::UNMAPPED;
use crate::mapping::Mapping;
use crate::perego::wormhole::{simulate, simulate_ideal, WormholeParams};
use crate::perego::Program;

/// The most events the simulations of one simulated exchange pass may process
/// (about a second at the simulator's speed).
pub(crate) const SIM_REFINE_MAX_EVENTS: u64 = 1 << 23;

/// The pass is skipped when the budget would allow fewer simulations than this, a
/// simulation taken to cost at least two events per instruction of the program.
const SIM_REFINE_MIN_SIMS: u64 = 16;

/// The score of a mapping: (completion, sum of finishing times); `None` when the
/// simulation fails (a torus without virtual channels can deadlock).
pub(crate) fn score_of(
    program: &Program,
    arch: &dyn Architecture,
    machine: &WormholeParams,
    pes: &[u32],
    events: &mut u64,
) -> Option<(u64, u128)> {
    let m = Mapping::new(pes.iter().map(|&p| PeId(p)).collect());
    let r = simulate(program, arch, &m, machine).ok()?;
    *events = events.saturating_add(r.events);
    Some((
        r.completion,
        r.task_finish.iter().map(|&t| u128::from(t)).sum(),
    ))
}

/// What one simulated exchange pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SimRefined {
    /// The simulated (completion, sum of finishing times) of the mapping returned; `None`
    /// when the pass did not run (off, not one task per PE, too large, or a failed
    /// simulation).
    pub score: Option<(u64, u128)>,
    /// The mapping returned reaches the ideal machine's completion time (nothing to gain).
    pub ideal: bool,
}

/// Improves the one-task-per-PE mapping `pes` of `program` on `arch` by simulated moves,
/// at most `evals_per_task · T` simulations besides the first two (the ideal machine's and
/// the mapping's; see the module documentation).
pub(crate) fn sim_refine(
    program: &Program,
    arch: &dyn Architecture,
    machine: &WormholeParams,
    pes: &mut [u32],
    evals_per_task: u32,
) -> SimRefined {
    let n = program.num_tasks();
    let k = arch.pe_count() as usize;
    if evals_per_task == 0 || n == 0 || n > k {
        return SimRefined::default();
    }
    let mut task_on = vec![UNMAPPED; k];
    for (t, &p) in pes.iter().enumerate() {
        match task_on.get_mut(p as usize) {
            Some(slot) if *slot == UNMAPPED => *slot = t as u32,
            _ => return SimRefined::default(),
        }
    }
    let min_events = 2 * program.ops().len() as u64;
    if SIM_REFINE_MAX_EVENTS / min_events.max(1) < SIM_REFINE_MIN_SIMS {
        return SimRefined::default();
    }
    let Ok(ideal) = simulate_ideal(program, machine) else {
        return SimRefined::default();
    };
    let mut events = ideal.events;
    let Some(mut cur) = score_of(program, arch, machine, pes, &mut events) else {
        return SimRefined::default();
    };
    if cur.0 <= ideal.completion {
        return SimRefined {
            score: Some(cur),
            ideal: true,
        };
    }
    let per_sim = (events - ideal.events).max(1);
    let mut budget = u64::from(evals_per_task) * n as u64;
    let topo = Topo::new(arch);
    let g = program.to_task_graph();
    let mut cands: Vec<u32> = Vec::new();
    loop {
        let mut improved = false;
        for u in 0..n as u32 {
            if !topo.exchange_candidates(pes, u, g.neighbors(u), &mut cands) {
                continue;
            }
            for &p in &cands {
                let pu = pes[u as usize];
                if p == pu {
                    continue;
                }
                if budget == 0 || events.saturating_add(per_sim) > SIM_REFINE_MAX_EVENTS {
                    return SimRefined {
                        score: Some(cur),
                        ideal: cur.0 <= ideal.completion,
                    };
                }
                budget -= 1;
                let v = task_on[p as usize];
                pes[u as usize] = p;
                if v != UNMAPPED {
                    pes[v as usize] = pu;
                }
                match score_of(program, arch, machine, pes, &mut events) {
                    Some(new) if new < cur => {
                        cur = new;
                        task_on[p as usize] = u;
                        task_on[pu as usize] = v;
                        improved = true;
                    }
                    _ => {
                        pes[u as usize] = pu;
                        if v != UNMAPPED {
                            pes[v as usize] = p;
                        }
                    }
                }
            }
        }
        if !improved {
            return SimRefined {
                score: Some(cur),
                ideal: cur.0 <= ideal.completion,
            };
        }
    }
}
