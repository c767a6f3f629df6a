//! The paper's printed delay formulas (Houstis et al. 1989, section 4.2.3): the reading
//! [`DelayReading::Paper`](crate::houstis::interconnect::DelayReading::Paper) of the
//! interconnects of [`crate::houstis::interconnect`].
//!
//! `ρ = λ/μ` is the load as everywhere else (transfer time asked for per unit of computing
//! time). The print is damaged in places; what is repaired, and why, follows each system.
//! `P_n` is the probability of `n` transfers outstanding in the closed queue of
//! [`crate::houstis::interconnect`], `P_n ∝ k!/(k−n)! · ρ^n / (c(1)···c(n))`.
//!
//! * System 1 (single bus, common memory): `AP_1 = (Σ_j ρ^j k!/(k−j)! − 1)/(ρ Σ_j ρ^j
//!   k!/(k−j)!)`, `u = ρ·AP_1/2`, `D_1 = (k − AP_1)/u`, as printed. `AP_1` and `D_1` equal
//!   the queue reading's; only `u` differs (half of the bus's busy time).
//! * System 2 (single bus, dual-port memories): `ρ₂ = λ/(λ + 2μ) = ρ/(ρ + 2)`,
//!   `AP_2 = (1−ρ₂)·(Σ_{j≥1} t_j)/(ρ₂ Σ_{j≥0} t_j)` with `t_j = ρ₂^j k!/(k−j)!`,
//!   `u = AP_2·ρ₂/(1−ρ₂)`, `D_2 = (k − AP_2)/(1−ρ₂)/u`. The print has `k!/(j−k)!` (read
//!   `k!/(k−j)!`) and the same sum over `j ≥ 0` above and below the fraction bar, which makes
//!   `AP_2` the constant `(1−ρ₂)/ρ₂`; the numerator's sum is read from `j = 1`, the `− 1`
//!   of `AP_1`, which makes `u` the bus's busy probability `1 − P_0`.
//! * System 3 (`k×m×b` multiple bus): `p_j(l)` are the partitions of `l` into exactly `j`
//!   parts (the printed recurrence with `p_0(0) = 1`), and `c(l) = β_l` as printed
//!   ([`partition_beta`]). `u = 1 − P_0` with `P_0` the state where no transfer is
//!   outstanding (the printed `P'_k`, all `k` processors active), and `D_3 = (k − u/ρ)/u`.
//!   The printed `AP_3 = Σ_{i=1}^{k} P_i` (over the states of `i` active processors) is a
//!   probability; it is read as `Σ i·P_i`, the mean active processors. The product of the
//!   printed `P_i` starts at `β_0^{-1}`, read from `β_1` as in `P'_k`. More buses than
//!   memories count as `min(b, m)` buses.
//! * System 4 (Banyan): `c(j)` is [`Interconnect::service_rates`]'s `φ` applied `log2 k`
//!   times, `L = Σ max(i − c(i), 0)·P_i`, `u = 1 − P_0`, `D_4 = (k + L·ρ)/(k − L)`, as
//!   printed. The printed `AP_4 = Σ i·P_i` is the mean number of transfers outstanding;
//!   the active processors are `k − Σ i·P_i`.
//!
//! At `ρ = 0` the measures are their limits as `ρ → 0`. docs/algorithm-mapper.md measures
//! both readings against [`crate::houstis::bus_queue`]'s simulation.

use crate::houstis::interconnect::{state_probabilities, Interconnect, QueueState};

/// The service rates `c(0..=k)` of the paper's reading: the multiple bus's `β_l`
/// ([`partition_beta`]), the queue reading's rates otherwise.
pub(crate) fn service_rates(ic: Interconnect, k: u32) -> Vec<f64> {
    match ic {
        Interconnect::MultiBus { buses, .. } => partition_beta(k, buses, ic.memories(k)),
        _ => ic.service_rates(k),
    }
}

/// The paper's `β_l` for `l = 0..=k` requests outstanding on `buses` buses and `memories`
/// memories (`β_0 = 0`, where the printed fraction is `0/0`):
///
/// ```text
/// β_l = (Σ_{j=1}^{b−1} j·p_j(l) + b·Σ_{j=0}^{l−b} p_b(j+b)·p_{m−b}(l−2b−j+m))
///     / (Σ_{j=1}^{b−1}   p_j(l) +   Σ_{j=0}^{l−b} p_b(j+b)·p_{m−b}(l−2b−j+m))
/// ```
///
/// with `p_j(l)` the partitions of `l` into exactly `j` parts and `b = min(buses,
/// memories)`. `p_j(l)` is the number of partitions of `l − j` into at most `j` parts;
/// these are counted column by column in `O(k·min(k, m))`, the second sum in `O(k²)`.
///
/// # Panics
///
/// If `buses` or `memories` is 0.
pub fn partition_beta(k: u32, buses: u32, memories: u32) -> Vec<f64> {
    assert!(
        buses >= 1 && memories >= 1,
        "a multiple bus needs buses and memories"
    );
    let k = k as usize;
    let b = buses.min(memories) as usize;
    let rest = memories as usize - b;
    // col[y] after step n: partitions of y into at most n parts (q(y, n)); p_j(l) =
    // q(l − j, j). Beyond n = k the columns no longer change (y <= k).
    let mut col = vec![0.0f64; k + 1];
    col[0] = 1.0;
    let (mut num, mut den) = (vec![0.0f64; k + 1], vec![0.0f64; k + 1]);
    let mut at_b: Option<Vec<f64>> = None;
    let mut at_rest: Option<Vec<f64>> = (rest == 0).then(|| col.clone());
    for n in 1..=b.max(rest).min(k) {
        for y in n..=k {
            col[y] += col[y - n];
        }
        if n < b {
            for l in n..=k {
                let p = col[l - n];
                num[l] += n as f64 * p;
                den[l] += p;
            }
        }
        if n == b.min(k) {
            at_b = Some(col.clone());
        }
        if n == rest.min(k) {
            at_rest = Some(col.clone());
        }
    }
    let (at_b, at_rest) = (
        at_b.expect("b >= 1 is reached"),
        at_rest.expect("rest is reached"),
    );
    let mut beta = vec![0.0f64; k + 1];
    for l in 1..=k {
        // p_b(j+b) = q(j, b); p_{m−b}(l−2b−j+m) = q(l−b−j, m−b).
        let second: f64 = if l >= b {
            (0..=l - b).map(|j| at_b[j] * at_rest[l - b - j]).sum()
        } else {
            0.0
        };
        beta[l] = (num[l] + b as f64 * second) / (den[l] + second);
    }
    beta
}

/// The measures of the paper's reading for `ic` with `k` processors at load `rho >= 0`,
/// with `rates` from [`service_rates`].
pub(crate) fn analyse(ic: Interconnect, k: u32, rates: &[f64], rho: f64) -> QueueState {
    let kf = f64::from(k);
    let light = |delay: f64| QueueState {
        rho,
        active: kf,
        idle: 1.0,
        utilisation: 0.0,
        delay,
    };
    let mean = |p: &[f64]| -> f64 { p.iter().enumerate().map(|(n, x)| n as f64 * x).sum() };
    match ic {
        Interconnect::Ideal => light(0.0),
        Interconnect::Bus => {
            if rho == 0.0 {
                return light(2.0);
            }
            let p = state_probabilities(k, rho, rates);
            let waiting = mean(&p);
            let active = kf - waiting;
            let u = rho * active / 2.0;
            QueueState {
                rho,
                active,
                idle: p[0],
                utilisation: u,
                // (k − AP_1)/u
                delay: waiting / u,
            }
        }
        Interconnect::DualPortBus => {
            if rho == 0.0 {
                return light(2.0);
            }
            // ρ₂ = λ/(λ + 2μ) and 1 − ρ₂, each without cancellation.
            let r = rho / (rho + 2.0);
            let rest = 2.0 / (rho + 2.0);
            let p = state_probabilities(k, r, rates);
            let waiting = mean(&p);
            // (Σ_{j≥1} t_j)/(ρ₂ Σ t_j) = (1 − P_0)/ρ₂ = k − Σ j·P_j.
            let thinking = kf - waiting;
            let active = rest * thinking;
            let u = r * thinking;
            // k − AP_2 = ρ₂·k + (1 − ρ₂)·Σ j·P_j
            let delay = (r * kf + rest * waiting) / (rest * u);
            QueueState {
                rho,
                active,
                idle: p[0],
                utilisation: u,
                delay,
            }
        }
        Interconnect::MultiBus { .. } => {
            if rho == 0.0 {
                // (k − u/ρ)/u → k − (k − 1)/β_2 (β_1 = 1)
                return light(if k == 1 {
                    1.0
                } else {
                    kf - (kf - 1.0) / rates[2]
                });
            }
            let p = state_probabilities(k, rho, rates);
            let busy: f64 = p[1..].iter().sum();
            let beyond_one: f64 = p.get(2..).map_or(0.0, |t| t.iter().sum());
            // k·ρ − u, split so that light loads do not cancel: k·ρ·P_0 − P_1 =
            // k·ρ·P_0·(1 − 1/β_1), then k·ρ·(1 − P_0) − Σ_{n≥2} P_n.
            let excess = kf * rho * p[0] * (1.0 - 1.0 / rates[1]) + (kf * rho * busy - beyond_one);
            QueueState {
                rho,
                active: kf - mean(&p),
                idle: p[0],
                utilisation: busy,
                // (k − u/ρ)/u
                delay: excess / (rho * busy),
            }
        }
        Interconnect::Banyan => {
            if rho == 0.0 {
                return light(1.0);
            }
            let p = state_probabilities(k, rho, rates);
            let blocked: f64 = p
                .iter()
                .zip(rates)
                .enumerate()
                .map(|(n, (pn, c))| (n as f64 - c).max(0.0) * pn)
                .sum();
            QueueState {
                rho,
                active: kf - mean(&p),
                idle: p[0],
                utilisation: p[1..].iter().sum(),
                delay: (kf + blocked * rho) / (kf - blocked),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `p_j(l)` by the printed recurrence `p_j(l) = p_j(l−j) + p_{j−1}(l−j) + ... +
    /// p_0(l−j)`, `p_j(l) = 0` for `l < j`, `p_0(l) = 0` for `l > 0`, `p_0(0) = 1`.
    fn printed_p(j: i64, l: i64) -> f64 {
        if j < 0 || l < j {
            return 0.0;
        }
        if j == 0 {
            return if l == 0 { 1.0 } else { 0.0 };
        }
        (0..=j).map(|i| printed_p(i, l - j)).sum()
    }

    /// `β_l` by the printed sums over [`printed_p`].
    fn printed_beta(l: i64, b: i64, m: i64) -> f64 {
        let mut num: f64 = (1..b).map(|j| j as f64 * printed_p(j, l)).sum();
        let mut den: f64 = (1..b).map(|j| printed_p(j, l)).sum();
        for j in 0..=(l - b) {
            let t = printed_p(b, j + b) * printed_p(m - b, l - 2 * b - j + m);
            num += b as f64 * t;
            den += t;
        }
        num / den
    }

    #[test]
    fn beta_follows_the_printed_sums() {
        // p_j(l) counts partitions into exactly j parts: 8 into 3 parts is 5 ways.
        assert_eq!(printed_p(3, 8), 5.0);
        for (k, b, m) in [
            (6u32, 1u32, 6u32),
            (6, 2, 4),
            (7, 3, 7),
            (8, 8, 8),
            (9, 4, 12),
        ] {
            let beta = partition_beta(k, b, m);
            for l in 1..=k as i64 {
                let want = printed_beta(l, b as i64, m as i64);
                assert!(
                    (beta[l as usize] - want).abs() < 1e-12,
                    "k={k} b={b} m={m} l={l}"
                );
            }
        }
        // b = 2, m = 4 by hand: β_1 = 1, β_2 = 3/2, β_3 = 5/3, β_4 = 11/6.
        let beta = partition_beta(4, 2, 4);
        for (l, want) in [(1, 1.0), (2, 1.5), (3, 5.0 / 3.0), (4, 11.0 / 6.0)] {
            assert!((beta[l] - want).abs() < 1e-12, "l={l}");
        }
        // one bus serves one transfer at a time; more buses than memories count as m.
        assert!(partition_beta(7, 1, 7)[1..].iter().all(|&x| x == 1.0));
        assert_eq!(partition_beta(6, 9, 4), partition_beta(6, 4, 4));
        // the largest machine stays finite (the partitions of 4096 are about 10^66).
        let big = partition_beta(4096, 64, 4096);
        assert!(big.iter().all(|x| x.is_finite()) && big[4096] <= 64.0);
    }
}
