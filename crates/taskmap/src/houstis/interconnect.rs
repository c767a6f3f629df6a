//! Queueing-delay models of shared-memory interconnects (Houstis et al. 1989, section
//! 4.2.3): the delay `D(u)` a unit of information (ITU) meets on its way between
//! processors, as a function of the load.
//!
//! Every system is read as a closed (finite-source) queue: each of `k` processors computes
//! for an exponential time of rate `λ`, then issues one transfer of exponential length
//! `1/μ` (one ITU) and waits, computing nothing, until the transfer ends. With
//! `ρ = λ/μ` and `j` transfers outstanding, the interconnect completes transfers at rate
//! `μ·c(j)`; the state probabilities are
//!
//! ```text
//! P_j = P_0 · k!/(k−j)! · ρ^j / (c(1)·c(2)···c(j))
//! ```
//!
//! and the paper's measures follow: `AP = Σ (k−j)·P_j` active processors, throughput
//! `ρ·AP` transfers per `1/μ`, and by Little's law the delay per transfer
//! `D = (k − AP)/(ρ·AP)` in units of `1/μ` (at least 1: the transfer itself).
//!
//! * [`Interconnect::Bus`] (system 1, single bus and common memory): `c(j) = 1`; an ITU
//!   crosses the bus twice (into the common memory and out of it), so `D_1 = 2(k−AP)/(ρ·AP)`,
//!   which is the paper's `(k − AP_1)/u` with `u = ρ·AP_1/2`. `AP_1` is the paper's formula.
//! * [`Interconnect::DualPortBus`] (system 2, single bus and dual-port memories): the
//!   message is written once, straight into the receiver's memory: `c(j) = 1` and one
//!   crossing. (The printed `AP_2` is damaged beyond the `k!/(k−j)!` repair: as printed it is
//!   the constant `(1−ρ)/ρ`.)
//! * [`Interconnect::MultiBus`] (system 3, `k×m×b`): `c(j) = β_j`, the expected number of
//!   busy buses when `j` requests go to `m` memories at random, `E[min(b, distinct
//!   memories)]` (the paper's `β_l`, counted over random destinations).
//! * [`Interconnect::Banyan`] (system 4, `log2 k` stages of 2×2 switches): `c(j) =
//!   φ^(log2 k)(j)`, the paper's `φ(i) = i(2k − 0.5i − 1.5)/(2(k − 1))` (the requests
//!   left after one stage's conflicts) applied once per stage.
//! * [`Interconnect::Ideal`]: no delay at all (the paper's "system: none", figure 11).
//!
//! This is [`DelayReading::Queue`], the default. [`DelayReading::Paper`] evaluates the
//! paper's printed formulas instead ([`crate::houstis::paper_delay`]).
//!
//! [`crate::houstis::bus_queue`] simulates the systems themselves (buses, memories, switch
//! paths) to check both readings; docs/algorithm-mapper.md gives the agreement.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;
use crate::houstis::paper_delay;

/// Most processors a model may have.
pub const MAX_PROCESSORS: u32 = 4096;

/// A shared-memory interconnect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interconnect {
    /// System 1: one bus to one common memory.
    Bus,
    /// System 2: one bus, a dual-port memory per processor.
    DualPortBus,
    /// System 3: `buses` buses between the processors and `memories` memories.
    MultiBus { buses: u32, memories: u32 },
    /// System 4: an Omega (Banyan) network of 2×2 switches; `k` must be a power of two.
    Banyan,
    /// No queueing delay and no transfer time.
    Ideal,
}

impl FromStr for Interconnect {
    type Err = Error;
    /// `bus`, `dual-bus`, `multibus:B` (as many memories as processors) or
    /// `multibus:B:M`, `banyan`, `ideal`.
    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = |why: &str| {
            Error::Config(format!(
                "interconnect \"{s}\": {why} (expected bus, dual-bus, multibus:B, multibus:B:M, banyan or ideal)"
            ))
        };
        let mut parts = s.split(':');
        let kind = parts.next().unwrap_or("").to_ascii_lowercase();
        let rest: Vec<&str> = parts.collect();
        let count = |t: &str, what: &str| -> Result<u32, Error> {
            match t.parse::<u32>() {
                Ok(v) if (1..=MAX_PROCESSORS).contains(&v) => Ok(v),
                _ => Err(bad(&format!(
                    "the {what} must be a whole number from 1 to {MAX_PROCESSORS}, found \"{t}\""
                ))),
            }
        };
        let ic = match (kind.as_str(), rest.as_slice()) {
            ("bus", []) => Interconnect::Bus,
            ("dual-bus", []) => Interconnect::DualPortBus,
            ("banyan", []) => Interconnect::Banyan,
            ("ideal", []) => Interconnect::Ideal,
            ("multibus", [b]) => Interconnect::MultiBus {
                buses: count(b, "number of buses")?,
                memories: 0,
            },
            ("multibus", [b, m]) => Interconnect::MultiBus {
                buses: count(b, "number of buses")?,
                memories: count(m, "number of memories")?,
            },
            ("multibus", _) => return Err(bad("give the buses, and optionally the memories")),
            ("bus" | "dual-bus" | "banyan" | "ideal", _) => {
                return Err(bad("this kind takes no parameters"))
            }
            _ => return Err(bad("unknown kind")),
        };
        Ok(ic)
    }
}

impl fmt::Display for Interconnect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Interconnect::Bus => write!(f, "bus"),
            Interconnect::DualPortBus => write!(f, "dual-bus"),
            Interconnect::MultiBus { buses, memories } if *memories == 0 => {
                write!(f, "multibus:{buses}")
            }
            Interconnect::MultiBus { buses, memories } => write!(f, "multibus:{buses}:{memories}"),
            Interconnect::Banyan => write!(f, "banyan"),
            Interconnect::Ideal => write!(f, "ideal"),
        }
    }
}

/// The steady state of an interconnect under a load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueState {
    /// `ρ = λ/μ`.
    pub rho: f64,
    /// Average number of active (computing) processors, `AP`.
    pub active: f64,
    /// Probability that no transfer is outstanding, `P_0`.
    pub idle: f64,
    /// Utilisation of the interconnect: transfers in progress over its transfer capacity
    /// (`1 − P_0` for a single bus).
    pub utilisation: f64,
    /// Delay per ITU (queueing and transfer) in units of one ITU's transfer time `1/μ`.
    pub delay: f64,
}

impl Interconnect {
    /// Checks that the interconnect suits `k` processors (a Banyan needs a power of two
    /// from 2 on).
    pub fn check(&self, k: u32) -> Result<(), Error> {
        if k == 0 || k > MAX_PROCESSORS {
            return Err(Error::Config(format!(
                "{k} processors: the models take 1 to {MAX_PROCESSORS}"
            )));
        }
        if *self == Interconnect::Banyan && (k < 2 || !k.is_power_of_two()) {
            return Err(Error::Config(format!(
                "a Banyan network joins a power of two (at least 2) of processors, not {k}"
            )));
        }
        Ok(())
    }

    /// Memories of a multiple-bus system with `k` processors.
    pub fn memories(&self, k: u32) -> u32 {
        match *self {
            Interconnect::MultiBus { memories: 0, .. } => k,
            Interconnect::MultiBus { memories, .. } => memories,
            _ => k,
        }
    }

    /// Bus crossings per ITU.
    pub(crate) fn crossings(&self) -> f64 {
        if *self == Interconnect::Bus {
            2.0
        } else {
            1.0
        }
    }

    /// Transfers the interconnect can carry at once when enough are outstanding.
    pub(crate) fn capacity(&self, k: u32) -> f64 {
        match *self {
            Interconnect::Bus | Interconnect::DualPortBus => 1.0,
            Interconnect::MultiBus { buses, .. } => f64::from(buses.min(self.memories(k))),
            Interconnect::Banyan | Interconnect::Ideal => f64::from(k),
        }
    }

    /// `c(j)` for `j = 0..=k`: transfers completing in parallel with `j` outstanding.
    pub fn service_rates(&self, k: u32) -> Vec<f64> {
        let k_us = k as usize;
        match *self {
            Interconnect::Bus | Interconnect::DualPortBus => {
                (0..=k_us).map(|j| if j == 0 { 0.0 } else { 1.0 }).collect()
            }
            Interconnect::Ideal => (0..=k_us).map(|j| j as f64).collect(),
            Interconnect::MultiBus { buses, .. } => {
                // dist[x]: probability that x distinct memories are asked for.
                let m = self.memories(k) as usize;
                let b = buses as usize;
                let mut dist = vec![0.0; m + 1];
                dist[0] = 1.0;
                let mut rates = vec![0.0; k_us + 1];
                for rate in rates.iter_mut().skip(1) {
                    for x in (0..=m).rev() {
                        let stay = dist[x] * x as f64 / m as f64;
                        let up = if x > 0 {
                            dist[x - 1] * (m - x + 1) as f64 / m as f64
                        } else {
                            0.0
                        };
                        dist[x] = stay + up;
                    }
                    *rate = dist
                        .iter()
                        .enumerate()
                        .map(|(x, p)| p * x.min(b) as f64)
                        .sum();
                }
                rates
            }
            Interconnect::Banyan => {
                let stages = k.trailing_zeros();
                let kf = f64::from(k);
                let phi = |i: f64| {
                    if i <= 1.0 {
                        i
                    } else {
                        i * (2.0 * kf - 0.5 * i - 1.5) / (2.0 * (kf - 1.0))
                    }
                };
                (0..=k_us)
                    .map(|j| (0..stages).fold(j as f64, |i, _| phi(i)))
                    .collect()
            }
        }
    }

    /// The steady state with `k` processors at load `ρ = λ/μ >= 0` (finite).
    ///
    /// # Panics
    ///
    /// If `k` does not suit the interconnect (see [`Interconnect::check`]) or `ρ` is
    /// negative or not finite.
    pub fn analyse(&self, k: u32, rho: f64) -> QueueState {
        DelayModel::new(*self, k)
            .expect("processors suit the interconnect")
            .analyse(rho)
    }
}

/// Which reading of the interconnects' delay a [`DelayModel`] evaluates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DelayReading {
    /// Every system as a closed finite-source queue with completion rate `μ·c(j)`, the
    /// delay by Little's law (this module's reading; the default).
    #[default]
    Queue,
    /// The paper's printed formulas `AP_i`, `u` and `D_i(u)`, with the repairs
    /// docs/algorithm-mapper.md lists ([`crate::houstis::paper_delay`]).
    Paper,
}

impl DelayReading {
    /// Every reading, in the order the CLI lists them.
    pub const ALL: [DelayReading; 2] = [DelayReading::Queue, DelayReading::Paper];

    /// The reading's name, as [`FromStr`] takes it: `queue` or `paper`.
    pub fn name(self) -> &'static str {
        match self {
            DelayReading::Queue => "queue",
            DelayReading::Paper => "paper",
        }
    }
}

impl FromStr for DelayReading {
    type Err = Error;
    /// `queue` or `paper`.
    fn from_str(s: &str) -> Result<Self, Error> {
        match DelayReading::ALL.into_iter().find(|r| r.name() == s) {
            Some(r) => Ok(r),
            None => Err(Error::Config(format!(
                "delay model \"{s}\": unknown (expected queue or paper)"
            ))),
        }
    }
}

impl fmt::Display for DelayReading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The probabilities `P_0..=P_k` of `j` transfers outstanding in the closed queue of `k`
/// processors at load `ρ > 0` whose interconnect completes `c(j)` transfers at once:
/// `P_j ∝ k!/(k−j)! · ρ^j / (c(1)···c(j))`, summed in logarithms (the weights overflow
/// quickly).
pub(crate) fn state_probabilities(k: u32, rho: f64, c: &[f64]) -> Vec<f64> {
    let mut logw = Vec::with_capacity(k as usize + 1);
    logw.push(0.0f64);
    for j in 1..=k as usize {
        let prev = logw[j - 1];
        logw.push(prev + ((k as usize - j + 1) as f64 * rho / c[j]).ln());
    }
    let top = logw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = logw.iter().map(|l| (l - top).exp()).collect();
    let total: f64 = w.iter().sum();
    w.iter().map(|x| x / total).collect()
}

/// An interconnect with its processors, the reading of its delay, and the service rates
/// `c(j)` of that reading, computed once (the multiple bus's take `O(k·m)`).
#[derive(Clone, Debug, PartialEq)]
pub struct DelayModel {
    /// The interconnect.
    pub interconnect: Interconnect,
    /// Its processors, `k`.
    pub processors: u32,
    /// The reading [`DelayModel::analyse`] evaluates.
    pub reading: DelayReading,
    rates: Vec<f64>,
}

impl DelayModel {
    /// The queue reading of `interconnect` with `k` processors; errors if they do not
    /// suit.
    pub fn new(interconnect: Interconnect, k: u32) -> Result<Self, Error> {
        Self::with_reading(interconnect, k, DelayReading::Queue)
    }

    /// The model of `interconnect` with `k` processors in `reading`; errors if they do not
    /// suit.
    pub fn with_reading(
        interconnect: Interconnect,
        k: u32,
        reading: DelayReading,
    ) -> Result<Self, Error> {
        interconnect.check(k)?;
        let rates = match reading {
            DelayReading::Queue => interconnect.service_rates(k),
            DelayReading::Paper => paper_delay::service_rates(interconnect, k),
        };
        Ok(DelayModel {
            interconnect,
            processors: k,
            reading,
            rates,
        })
    }

    /// The service rates `c(0..=k)` of the reading: transfers completing in parallel with
    /// `j` outstanding (the paper's `β_j` for the multiple bus in the paper's reading).
    pub fn rates(&self) -> &[f64] {
        &self.rates
    }

    /// The steady state at load `ρ = λ/μ >= 0` (finite), in the model's reading.
    ///
    /// # Panics
    ///
    /// If `ρ` is negative or not finite.
    pub fn analyse(&self, rho: f64) -> QueueState {
        assert!(rho.is_finite() && rho >= 0.0, "rho must be finite and >= 0");
        match self.reading {
            DelayReading::Queue => self.analyse_queue(rho),
            DelayReading::Paper => {
                paper_delay::analyse(self.interconnect, self.processors, &self.rates, rho)
            }
        }
    }

    /// [`DelayModel::analyse`] in the queue reading.
    fn analyse_queue(&self, rho: f64) -> QueueState {
        let ic = self.interconnect;
        let k = self.processors;
        let kf = f64::from(k);
        if ic == Interconnect::Ideal {
            return QueueState {
                rho,
                active: kf,
                idle: 1.0,
                utilisation: 0.0,
                delay: 0.0,
            };
        }
        if rho == 0.0 {
            return QueueState {
                rho,
                active: kf,
                idle: 1.0,
                utilisation: 0.0,
                delay: ic.crossings(),
            };
        }
        let c = &self.rates;
        let p = state_probabilities(k, rho, c);
        // transfers outstanding, summed directly (k − AP cancels at light loads).
        let outstanding: f64 = p.iter().enumerate().map(|(j, pj)| j as f64 * pj).sum();
        let active = kf - outstanding;
        let carried: f64 = p.iter().zip(c).map(|(pj, cj)| pj * cj).sum();
        // Little: outstanding transfers over throughput (ρ·AP per 1/μ).
        let delay = if active > 0.0 {
            ic.crossings() * outstanding / (rho * active)
        } else {
            f64::INFINITY
        };
        QueueState {
            rho,
            active,
            idle: p[0],
            utilisation: carried / ic.capacity(k),
            delay,
        }
    }
}

/// The paper's closed form for system 1, `AP_1 = (Σ_j ρ^j k!/(k−j)! − 1)/(ρ Σ_j ρ^j
/// k!/(k−j)!)`, written out separately so that a test can hold it against
/// [`Interconnect::analyse`].
pub fn paper_active_bus(k: u32, rho: f64) -> f64 {
    let mut term = 1.0f64;
    let mut sum = 1.0f64;
    for j in 1..=k {
        term *= f64::from(k - j + 1) * rho;
        sum += term;
    }
    (sum - 1.0) / (rho * sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        for s in [
            "bus",
            "dual-bus",
            "multibus:8",
            "multibus:2:16",
            "banyan",
            "ideal",
        ] {
            assert_eq!(s.parse::<Interconnect>().unwrap().to_string(), s);
        }
        for s in ["", "bus:2", "multibus", "multibus:0", "multibus:x", "ring"] {
            assert!(s.parse::<Interconnect>().is_err(), "{s}");
        }
        assert!(Interconnect::Banyan.check(12).is_err());
        assert!(Interconnect::Banyan.check(1).is_err());
        assert!(Interconnect::Banyan.check(16).is_ok());
    }

    #[test]
    fn multibus_rates_match_enumeration() {
        // 3 memories, 2 buses: enumerate all destinations of j requests.
        let ic = Interconnect::MultiBus {
            buses: 2,
            memories: 3,
        };
        let rates = ic.service_rates(4);
        for (j, rate) in rates.iter().enumerate().skip(1) {
            let mut total = 0.0;
            let cases = 3usize.pow(j as u32);
            for code in 0..cases {
                let mut seen = [false; 3];
                let mut c = code;
                for _ in 0..j {
                    seen[c % 3] = true;
                    c /= 3;
                }
                total += seen.iter().filter(|&&s| s).count().min(2) as f64;
            }
            assert!((rate - total / cases as f64).abs() < 1e-12, "j={j}");
        }
    }

    #[test]
    fn bus_matches_the_paper_and_limits() {
        for k in [1u32, 2, 5, 13] {
            for rho in [0.01, 0.1, 0.5, 2.0] {
                let s = Interconnect::Bus.analyse(k, rho);
                let paper = paper_active_bus(k, rho);
                assert!(
                    (s.active - paper).abs() < 1e-9 * paper.max(1.0),
                    "k={k} rho={rho}"
                );
                assert!(s.delay >= 2.0 - 1e-9);
                // the bus carries ρ·AP transfers per 1/μ: its utilisation.
                assert!((s.utilisation - rho * s.active).abs() < 1e-9);
            }
        }
        // a light load leaves every processor active and the transfer alone.
        let s = Interconnect::DualPortBus.analyse(8, 1e-9);
        assert!((s.active - 8.0).abs() < 1e-6 && (s.delay - 1.0).abs() < 1e-6);
        // more buses never slow the transfers down.
        let one = Interconnect::MultiBus {
            buses: 1,
            memories: 0,
        }
        .analyse(8, 0.3);
        let eight = Interconnect::MultiBus {
            buses: 8,
            memories: 0,
        }
        .analyse(8, 0.3);
        let bus = Interconnect::DualPortBus.analyse(8, 0.3);
        assert!((one.delay - bus.delay).abs() < 1e-9);
        assert!(eight.delay < one.delay && eight.active > one.active);
        // heavy loads: large k and ρ neither overflow nor lose the order.
        let s = Interconnect::Banyan.analyse(4096, 50.0);
        assert!(s.active.is_finite() && s.delay.is_finite() && s.delay > 1.0);
        // very light loads: the transfer alone, without cancellation.
        for ic in [
            Interconnect::Bus,
            Interconnect::DualPortBus,
            Interconnect::Banyan,
        ] {
            let s = ic.analyse(8, 1e-20);
            assert!((s.delay - ic.crossings()).abs() < 1e-9, "{ic}: {}", s.delay);
        }
    }
}
