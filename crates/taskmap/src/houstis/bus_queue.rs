//! A direct simulation of the shared-memory interconnects of
//! [`crate::houstis::interconnect`], to check their closed forms.
//!
//! `k` processors each compute for an exponential time (rate `ρ`, with transfers of mean
//! length 1), then issue a transfer and wait for its end. What a transfer holds while it
//! runs:
//!
//! * single bus (systems 1 and 2): the bus. System 1's ITU crosses it twice, so its delay
//!   per ITU is twice the response time of a transfer.
//! * `k×m×b` multiple bus: one of the `b` buses and the destination memory (uniform over
//!   the `m` memories); a memory serves one transfer at a time.
//! * Banyan: the `log2 k` links of its path through an Omega network from its processor to
//!   its destination memory (uniform), destination-tag routed: a circuit, held end to end.
//!
//! Waiting transfers start in arrival order whenever what they need is free (a transfer
//! whose resources are busy does not block the ones behind it). The first tenth of the
//! completions warms the system up and is not measured.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::houstis::interconnect::{Interconnect, QueueState};

/// The line a circuit from input `src` to output `d` uses after stage `stage` (0-based)
/// of an Omega network of `stages` stages (`2^stages` lines): each stage is a perfect
/// shuffle then 2×2 switches set by the destination's bits, top bit first.
fn omega_line(src: usize, d: usize, stage: usize, stages: usize) -> usize {
    let s = stage + 1;
    ((src << s) | (d >> (stages - s))) & ((1 << stages) - 1)
}

/// Simulates `ic` with `k` processors at load `rho` for `completions` transfers.
///
/// # Panics
///
/// If `k` does not suit `ic`, `rho` is not finite and positive with a finite reciprocal
/// (the mean computation time), or `completions < 10`.
pub fn simulate(ic: Interconnect, k: u32, rho: f64, completions: u64, seed: u64) -> QueueState {
    ic.check(k).expect("processors suit the interconnect");
    assert!(
        rho.is_finite() && rho > 0.0 && (1.0 / rho).is_finite(),
        "rho must be finite and > 0, with 1 / rho finite"
    );
    assert!(completions >= 10, "simulate at least 10 transfers");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let exp = |rate: f64, rng: &mut Xoshiro256PlusPlus| -> f64 {
        let u: f64 = rng.gen::<f64>();
        -(1.0 - u).ln() / rate
    };
    let kk = k as usize;
    let memories = ic.memories(k) as usize;
    let stages = if ic == Interconnect::Banyan {
        k.trailing_zeros() as usize
    } else {
        0
    };
    let buses = match ic {
        Interconnect::MultiBus { buses, .. } => buses as usize,
        Interconnect::Ideal => kk,
        _ => 1,
    };
    // Per processor: when its computation ends (f64::INFINITY while it waits or
    // transfers), when its transfer ends, its destination, when it asked.
    let mut think_end: Vec<f64> = (0..kk).map(|_| exp(rho, &mut rng)).collect();
    let mut transfer_end = vec![f64::INFINITY; kk];
    let mut dest = vec![0usize; kk];
    let mut asked = vec![0.0f64; kk];
    let mut waiting: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    let mut free_buses = buses;
    let mut memory_busy = vec![false; memories];
    // link_busy[stage * k + line]: the Omega network's links after each stage.
    let mut link_busy = vec![false; stages * kk];
    let path = |src: usize, d: usize, stage: usize| omega_line(src, d, stage, stages);
    let warm = completions / 10;
    let (mut done, mut now) = (0u64, 0.0f64);
    let (mut t0, mut active_area, mut response_sum, mut carried_area) = (0.0, 0.0, 0.0, 0.0);
    let mut active = kk;
    let mut in_service = 0usize;
    while done < completions + warm {
        // next event: the earliest computation or transfer end.
        let (mut p, mut t, mut is_think) = (0, f64::INFINITY, true);
        for q in 0..kk {
            if think_end[q] < t {
                (p, t, is_think) = (q, think_end[q], true);
            }
            if transfer_end[q] < t {
                (p, t, is_think) = (q, transfer_end[q], false);
            }
        }
        if done >= warm {
            active_area += active as f64 * (t - now);
            carried_area += in_service as f64 * (t - now);
        }
        now = t;
        if is_think {
            think_end[p] = f64::INFINITY;
            active -= 1;
            asked[p] = now;
            dest[p] = rng.gen_range(0..memories);
            waiting.push_back(p);
        } else {
            transfer_end[p] = f64::INFINITY;
            in_service -= 1;
            free_buses += 1;
            match ic {
                Interconnect::MultiBus { .. } => memory_busy[dest[p]] = false,
                Interconnect::Banyan => {
                    for s in 0..stages {
                        link_busy[s * kk + path(p, dest[p], s)] = false;
                    }
                }
                _ => {}
            }
            if done == warm {
                t0 = now;
                active_area = 0.0;
                carried_area = 0.0;
                response_sum = 0.0;
            }
            if done >= warm {
                response_sum += now - asked[p];
            }
            done += 1;
            think_end[p] = now + exp(rho, &mut rng);
            active += 1;
        }
        // start what can start, in arrival order.
        let mut i = 0;
        while i < waiting.len() {
            let q = waiting[i];
            let can = match ic {
                Interconnect::MultiBus { .. } => free_buses > 0 && !memory_busy[dest[q]],
                Interconnect::Banyan => {
                    (0..stages).all(|s| !link_busy[s * kk + path(q, dest[q], s)])
                }
                _ => free_buses > 0,
            };
            if !can {
                i += 1;
                continue;
            }
            waiting.remove(i);
            match ic {
                Interconnect::MultiBus { .. } => {
                    memory_busy[dest[q]] = true;
                    free_buses -= 1;
                }
                Interconnect::Banyan => {
                    for s in 0..stages {
                        link_busy[s * kk + path(q, dest[q], s)] = true;
                    }
                }
                _ => free_buses -= 1,
            }
            in_service += 1;
            transfer_end[q] = now + exp(1.0, &mut rng);
        }
    }
    let span = now - t0;
    let measured = completions as f64;
    let active = active_area / span;
    let (crossings, capacity) = (ic.crossings(), ic.capacity(k));
    QueueState {
        rho,
        active,
        idle: f64::NAN,
        utilisation: carried_area / span / capacity,
        delay: crossings * response_sum / measured,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omega_paths_reach_their_destination_and_conflict_like_switches() {
        // The last stage's line is the destination; two circuits from the two inputs of
        // one first-stage switch to destinations with the same top bit share a link.
        let (k, stages) = (8usize, 3usize);
        let path = |src: usize, d: usize, stage: usize| omega_line(src, d, stage, stages);
        for src in 0..k {
            for d in 0..k {
                assert_eq!(path(src, d, stages - 1), d);
            }
        }
        // inputs 0 and 4 meet at the first shuffle's switch 0 (lines 0 and 1).
        assert_eq!(path(0, 0, 0), path(4, 1, 0));
        assert_ne!(path(0, 0, 0), path(4, 4, 0));
    }
}
