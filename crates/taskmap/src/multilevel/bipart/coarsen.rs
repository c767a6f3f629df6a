//! The bipartitioner's own coarsening of a task set: heavy-edge matching, level by level,
//! down to a few hundred tasks.

use rand::Rng;

use crate::multilevel::bipart::*;

/// One level of heavy-edge matching on a task set; `None` when it barely shrinks.
pub(crate) fn coarsen_sub(
    sp: &SubProblem,
    coarsen_to: usize,
    rng: &mut impl Rng,
) -> Option<(SubProblem, Vec<u32>)> {
    const NONE: u32 = u32::MAX;
    let n = sp.n();
    let ncon = sp.ncon;
    let mut cap = vec![0u64; ncon];
    for c in 0..ncon {
        let tot: u64 = (0..n).map(|v| sp.vertex_weight[v * ncon + c]).sum();
        let maxw = (0..n)
            .map(|v| sp.vertex_weight[v * ncon + c])
            .max()
            .unwrap_or(0);
        cap[c] = ((3 * tot) as f64 / (2 * coarsen_to) as f64).ceil() as u64;
        cap[c] = cap[c].max(maxw).max(1);
    }
    let vsum: Vec<f64> = (0..n)
        .map(|v| {
            sp.vertex_weight[v * ncon..(v + 1) * ncon]
                .iter()
                .sum::<u64>()
                .max(1) as f64
        })
        .collect();
    let order = crate::multilevel::coarsen::local_random_order(n, rng);
    let mut mate = vec![NONE; n];
    for &v in &order {
        let v = v as usize;
        if mate[v] != NONE {
            continue;
        }
        if sp.fixed_side(v).is_some() {
            // Fixed tasks stay single, so a coarse task is fixed exactly when its task is.
            mate[v] = v as u32;
            continue;
        }
        let (mut best, mut best_r) = (NONE, -1.0f64);
        for e in sp.xadj[v]..sp.xadj[v + 1] {
            let u = sp.adjncy[e] as usize;
            if mate[u] != NONE
                || sp.fixed_side(u).is_some()
                || (0..ncon).any(|c| {
                    sp.vertex_weight[v * ncon + c] + sp.vertex_weight[u * ncon + c] > cap[c]
                })
            {
                continue;
            }
            let w = sp.edge_weight[e].max(1) as f64;
            let r = w * w / (vsum[v] * vsum[u]);
            if r > best_r {
                best_r = r;
                best = u as u32;
            }
        }
        if best != NONE {
            mate[v] = best;
            mate[best as usize] = v as u32;
        } else {
            mate[v] = v as u32;
        }
    }
    let mut cluster = vec![0u32; n];
    let mut members: Vec<u32> = Vec::with_capacity(n);
    let mut first = Vec::with_capacity(n / 2 + 1);
    for v in 0..n {
        let m = mate[v] as usize;
        if m >= v {
            let id = first.len() as u32;
            first.push(members.len());
            members.push(v as u32);
            cluster[v] = id;
            if m != v {
                members.push(m as u32);
                cluster[m] = id;
            }
        }
    }
    let nc = first.len();
    if nc as f64 > 0.9 * n as f64 {
        return None;
    }
    first.push(members.len());
    let mut c = SubProblem {
        ncon,
        cut_dist: sp.cut_dist,
        bound: sp.bound.clone(),
        share0: sp.share0,
        ..SubProblem::default()
    };
    c.xadj.push(0);
    let mut pos = vec![usize::MAX; nc];
    let mut w = vec![0u64; ncon];
    c.xadj.reserve(nc);
    c.ext[0].reserve(nc);
    c.ext[1].reserve(nc);
    c.vertex_weight.reserve(nc * ncon);
    for cv in 0..nc {
        let start = c.adjncy.len();
        let (mut e0, mut e1) = (0u64, 0u64);
        w.fill(0);
        for &v in &members[first[cv]..first[cv + 1]] {
            let v = v as usize;
            e0 += sp.ext[0][v];
            e1 += sp.ext[1][v];
            for k in 0..ncon {
                w[k] += sp.vertex_weight[v * ncon + k];
            }
            for e in sp.xadj[v]..sp.xadj[v + 1] {
                let cu = cluster[sp.adjncy[e] as usize] as usize;
                if cu == cv {
                    continue;
                }
                if pos[cu] != usize::MAX && pos[cu] >= start {
                    c.edge_weight[pos[cu]] += sp.edge_weight[e];
                } else {
                    pos[cu] = c.adjncy.len();
                    c.adjncy.push(cu as u32);
                    c.edge_weight.push(sp.edge_weight[e]);
                }
            }
        }
        c.xadj.push(c.adjncy.len());
        c.vertex_weight.extend_from_slice(&w);
        c.ext[0].push(e0);
        c.ext[1].push(e1);
        if !sp.fixed.is_empty() {
            c.fixed.push(sp.fixed[members[first[cv]] as usize]);
        }
    }
    Some((c, cluster))
}
