//! A generator of circuit-like task graphs, for scaling runs of the mappers of Berger et
//! al. 2014 beyond the largest ITC'99 netlists.
//!
//! Gates are laid out row-major on a virtual square of side `⌈√n⌉`. Every gate reads 1, 2
//! or 3 inputs (probabilities 0.3, 0.5, 0.2, mean 1.9 arcs per gate; ITC'99 b17/b18 have
//! 2.2): an input comes from a gate at most `radius` = 4 rows and columns away (local
//! fan-in), with probability 0.05 from one of the nearby "flip-flops" (every 61st gate, so
//! these get a large fan-out like the registers of a netlist), and with probability 0.01
//! from any gate (a long wire). As in the ITC'99 task graphs, the weight of an edge is the
//! number of arcs between the two gates. Every task weighs 1. O(n) time and memory.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use taskmap_graph::{GraphBuilder, TaskGraph};

/// A circuit-like netlist of `n` tasks, reproducible from `seed`.
pub fn circuit_netlist(n: u32, seed: u64) -> TaskGraph {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let side = ((n as f64).sqrt().ceil() as i64).max(1);
    let radius = 4i64;
    let hub_every = 61i64;
    let mut b = GraphBuilder::new(n as usize, 1);
    b.reserve_edges(2 * n as usize);
    let nn = n as i64;
    for g in 0..nn {
        let (x, y) = (g % side, g / side);
        let r: f64 = rng.gen();
        let fan_in = if r < 0.3 {
            1
        } else if r < 0.8 {
            2
        } else {
            3
        };
        for _ in 0..fan_in {
            let kind: f64 = rng.gen();
            let src = if kind < 0.01 {
                rng.gen_range(0..nn)
            } else {
                let sx = (x + rng.gen_range(-radius..=radius)).clamp(0, side - 1);
                let sy = (y + rng.gen_range(-radius..=radius)).clamp(0, side - 1);
                let mut s = sy * side + sx;
                if kind < 0.06 {
                    s -= s % hub_every;
                }
                s.min(nn - 1)
            };
            if src != g {
                b.add_edge(src as u32, g as u32, 1);
            }
        }
    }
    b.build()
}
