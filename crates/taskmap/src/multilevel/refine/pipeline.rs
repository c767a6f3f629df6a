//! The refinement phase as data: the [`Refiner`] trait and the steps the k-way refiner
//! runs, in order, on every level ([`KwayRefiner::pipeline`]).
//!
//! A refiner improves a mapping in place and returns the decrease of `f_C`; it never
//! raises `f_C` and never breaks a load bound the mapping kept. The steps: label
//! propagation, Jet (opt-in), FM with rollback, pairwise rounds and swaps
//! ([`super::kway`], [`super::jet`], [`super::pairs`]). Their scratch space
//! ([`RefineScratch`]) lives for one call of the pipeline, so the FM passes and the swaps
//! share one gain cache.

use rand::Rng;

use super::gain_cache::GainCache;
use super::jet::Jet;
use super::kway::{fm_pass, lp_pass, swap_pass, KwayRefiner, KwayState};
use super::pairs::{pair_pass, PairPass, PairScratch};
use crate::multilevel::pq::IndexedHeap;

/// Improves a mapping in place; never makes it worse.
pub trait Refiner {
    /// Refines `state`; returns the `f_C` decrease (never negative).
    fn refine(
        &self,
        state: &mut KwayState<'_>,
        scratch: &mut RefineScratch,
        rng: &mut impl Rng,
    ) -> i64;
}

/// One step of the k-way refinement pipeline.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Rounds of label propagation.
    LabelPropagation {
        /// Rounds (0: off).
        rounds: usize,
    },
    /// FM passes with rollback, each stopping after `stall` moves without a new best;
    /// repeated while a pass gains at least `min_improvement` of the cost.
    Fm {
        /// Passes (0: off).
        passes: usize,
        /// Moves without a new best that end a pass.
        stall: usize,
        /// The least relative gain that earns another pass.
        min_improvement: f64,
    },
    /// Jet refinement ([`super::jet`]): unconstrained moves through an afterburner, then
    /// rebalancing, in parallel.
    Jet(Jet),
    /// Pairwise rounds, repeated while a round gains at least `min_improvement`.
    Pairs {
        /// Rounds (0: off).
        rounds: usize,
        /// A round's parameters.
        pass: PairPass,
        /// The least relative gain that earns another round.
        min_improvement: f64,
    },
    /// Rounds of swaps of two adjacent tasks, each followed by two rounds of label
    /// propagation, while a round gains.
    Swaps {
        /// Rounds (0: off).
        rounds: usize,
    },
}

/// The scratch space of one run of a pipeline.
#[derive(Default)]
pub struct RefineScratch {
    /// `f_C` of the state as the steps leave it.
    cost: Option<i64>,
    heap: Option<IndexedHeap>,
    /// The gain cache, decided on its first use (`None` inside: it does not pay).
    cache: Option<Option<GainCache>>,
    pairs: PairScratch,
}

impl RefineScratch {
    /// The cost of `state`, computed once and then kept up to date by the steps.
    fn cost(&mut self, state: &KwayState<'_>) -> i64 {
        *self.cost.get_or_insert_with(|| state.comm_cost() as i64)
    }

    /// The gain cache of `state`'s graph, when it pays ([`GainCache::pays`]).
    fn cache(&mut self, state: &KwayState<'_>) -> Option<&mut GainCache> {
        self.cache
            .get_or_insert_with(|| GainCache::pays(state).then(|| GainCache::new(state)))
            .as_mut()
    }
}

/// Whether a gain `g` on a cost of `before` is too small for another pass.
fn stalls(g: i64, before: i64, min_improvement: f64) -> bool {
    (g as f64) <= min_improvement * before.max(1) as f64
}

impl Refiner for Step {
    fn refine(
        &self,
        state: &mut KwayState<'_>,
        scratch: &mut RefineScratch,
        rng: &mut impl Rng,
    ) -> i64 {
        match *self {
            Step::LabelPropagation { rounds } => {
                // The later steps' thresholds count from the cost before label
                // propagation.
                scratch.cost(state);
                lp_pass(state, rounds, rng)
            }
            Step::Fm {
                passes,
                stall,
                min_improvement,
            } => {
                let mut total = 0;
                for _ in 0..passes {
                    let before = scratch.cost(state);
                    let n = state.graph.num_tasks();
                    let mut heap = scratch.heap.take().unwrap_or_else(|| IndexedHeap::new(n));
                    let g = fm_pass(state, stall, &mut heap, scratch.cache(state), rng);
                    scratch.heap = Some(heap);
                    total += g;
                    scratch.cost = Some(before - g);
                    if stalls(g, before, min_improvement) {
                        break;
                    }
                }
                total
            }
            Step::Jet(ref jet) => {
                let before = scratch.cost(state);
                let g = jet.refine(state);
                scratch.cost = Some(before - g);
                g
            }
            Step::Pairs {
                rounds,
                ref pass,
                min_improvement,
            } => {
                let mut total = 0;
                for _ in 0..rounds {
                    let before = scratch.cost(state);
                    let g = pair_pass(state, pass, &mut scratch.pairs);
                    total += g;
                    scratch.cost = Some(before - g);
                    if stalls(g, before, min_improvement) {
                        break;
                    }
                }
                total
            }
            Step::Swaps { rounds } => {
                let mut total = 0;
                for _ in 0..rounds {
                    let g = swap_pass(state, scratch.cache(state), rng);
                    total += g;
                    if g == 0 {
                        break;
                    }
                    total += lp_pass(state, 2, rng);
                }
                scratch.cost = None;
                total
            }
        }
    }
}

impl KwayRefiner {
    /// The steps [`KwayRefiner::refine`] runs, in order: label propagation, Jet (on
    /// graphs of at least `jet_min_tasks` tasks) or FM (on the others, up to
    /// `fm_max_tasks` tasks), the pairwise rounds, the swaps.
    pub fn pipeline(&self, tasks: usize) -> Vec<Step> {
        let jet = tasks >= self.jet_min_tasks;
        let mut steps = vec![Step::LabelPropagation {
            rounds: self.lp_rounds,
        }];
        if jet {
            steps.push(Step::Jet(self.jet.clone()));
        }
        steps.extend([
            Step::Fm {
                passes: if tasks <= self.fm_max_tasks && !jet {
                    self.fm_passes
                } else {
                    0
                },
                stall: self.fm_stall,
                min_improvement: self.min_improvement,
            },
            Step::Pairs {
                rounds: self.pair_rounds,
                pass: self.pair.clone(),
                min_improvement: self.min_improvement,
            },
            Step::Swaps {
                rounds: self.swap_rounds,
            },
        ]);
        steps
    }
}

impl Refiner for KwayRefiner {
    fn refine(
        &self,
        state: &mut KwayState<'_>,
        scratch: &mut RefineScratch,
        rng: &mut impl Rng,
    ) -> i64 {
        self.pipeline(state.graph.num_tasks())
            .iter()
            .map(|step| step.refine(state, scratch, rng))
            .sum()
    }
}
