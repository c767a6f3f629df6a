//! The initial bisections: greedy growing of one side from a seed, in order of the
//! weighted gain, until its share of every constraint is reached.

use rand::Rng;

use crate::multilevel::bipart::fm::*;
use crate::multilevel::bipart::*;

/// Normalised weight of `v`: Σ_c w_c(v) / total_c (1/n when every weight is zero).
pub(crate) fn norm_weights(sp: &SubProblem) -> Vec<f64> {
    let n = sp.n();
    let mut tot = vec![0u64; sp.ncon];
    for v in 0..n {
        for c in 0..sp.ncon {
            tot[c] += sp.vertex_weight[v * sp.ncon + c];
        }
    }
    let active = tot.iter().filter(|&&t| t > 0).count();
    (0..n)
        .map(|v| {
            if active == 0 {
                return 1.0 / n as f64;
            }
            let mut s = 0.0;
            for c in 0..sp.ncon {
                if tot[c] > 0 {
                    s += sp.vertex_weight[v * sp.ncon + c] as f64 / tot[c] as f64;
                }
            }
            s / active as f64
        })
        .collect()
}

/// Greedy graph growing of side `g = t % 2` from a seed task (`nw`: the tasks'
/// [`norm_weights`]); returns the cost of the result, kept up to date move by move (the
/// cost with every task on the other side, less the gain of each move), and leaves every
/// task's gain in `scratch.gain` for [`fm_passes_with_gains`].
pub(crate) fn grow(
    sp: &SubProblem,
    nw: &[f64],
    t: usize,
    side: &mut [u8],
    scratch: &mut BipartScratch,
    rng: &mut impl Rng,
) -> u64 {
    let n = sp.n();
    let g = (t % 2) as u8;
    let target = if g == 0 { sp.share0 } else { 1.0 - sp.share0 };
    side.fill(1 - g);
    let ncon = sp.ncon;
    let mut w = vec![0u64; ncon];
    let mut cost = init_gains(sp, side, scratch) as i64;
    let heap = &mut scratch.heaps[0];
    heap.reset(n);
    let mut acc = 0.0;
    // Tasks fixed to the growing side join first.
    if !sp.fixed.is_empty() {
        for v in 0..n {
            if sp.fixed[v] != g {
                continue;
            }
            cost -= scratch.gain[v];
            acc += nw[v];
            for c in 0..ncon {
                w[c] += sp.vertex_weight[v * ncon + c];
            }
            move_task(sp, side, &mut scratch.gain, v, |_, _, _| {});
        }
    }
    if t == 0 {
        for v in 0..n {
            if side[v] != g {
                heap.set(v as u32, scratch.gain[v]);
            }
        }
    } else {
        let seed = rng.gen_range(0..n) as u32;
        heap.set(seed, i64::MAX);
    }
    let mut pending_rest = t != 0;
    while acc < target - 1e-12 {
        let v = match heap.pop() {
            Some((v, _)) => v as usize,
            None if pending_rest => {
                // The seed's component is exhausted or blocked: open every task.
                pending_rest = false;
                for u in 0..n {
                    if side[u] != g {
                        heap.set(u as u32, scratch.gain[u]);
                    }
                }
                continue;
            }
            None => break,
        };
        if side[v] == g || sp.fixed_side(v).is_some() {
            continue;
        }
        if (0..ncon).any(|c| w[c] + sp.vertex_weight[v * ncon + c] > sp.bound[g as usize][c]) {
            continue;
        }
        cost -= scratch.gain[v];
        acc += nw[v];
        for c in 0..ncon {
            w[c] += sp.vertex_weight[v * ncon + c];
        }
        // Neighbours still on the other side are queued with their new gains.
        move_task(sp, side, &mut scratch.gain, v, |u, gu, su| {
            if su != g {
                heap.set(u as u32, gu);
            }
        });
    }
    heap.clear();
    cost as u64
}
