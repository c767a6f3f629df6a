//! Ours, the exchange pass: pairs of tasks swapped (or a task moved to a free PE) when
//! `F` falls, the candidates ordered by the distance their messages travel.

use crate::perego::spm::PartialScratch;

use crate::perego::greedy::*;

/// One level of the end-game search: its task, its options `opts[base..hi]`, the next one
/// to try, and the PE it holds now (`UNMAPPED` if none).
pub(crate) struct Level {
    pub(crate) task: u32,
    pub(crate) base: usize,
    pub(crate) hi: usize,
    pub(crate) next: usize,
    pub(crate) placed: u32,
}

/// `(worst, total)` of F' ordered lexicographically by `total_cmp`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct OrdKey(pub(crate) f64, pub(crate) f64);

impl Eq for OrdKey {}

impl PartialOrd for OrdKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrdKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.total_cmp(&other.1))
    }
}

/// The change of the distance term (eq. 4, summed over the PEs) when `u` moves to `p` and
/// `v` (the task on `p`, or `UNMAPPED`) moves to `u`'s PE.
pub(crate) fn distance_change(cx: &Ctx, pes: &[u32], u: u32, p: u32, v: u32) -> f64 {
    let pu = pes[u as usize];
    let pe_after = |t: u32| {
        if t == u {
            p
        } else if t == v {
            pu
        } else {
            pes[t as usize]
        }
    };
    let mut d = 0.0;
    for t in [u, v] {
        if t == UNMAPPED {
            continue;
        }
        for &c in cx.chans(t) {
            let ch = &cx.model.channels[c as usize];
            // The channel between u and v is counted once, from u.
            if t == v && (ch.src == u || ch.dst == u) {
                continue;
            }
            let before = cx.topo.dist(pes[ch.src as usize], pes[ch.dst as usize]);
            let after = cx.topo.dist(pe_after(ch.src), pe_after(ch.dst));
            d += ch.messages as f64 * (after as f64 - before as f64);
        }
    }
    d
}

/// The most evaluations of F one exchange pass makes, whatever the number of tasks.
pub(crate) const REFINE_MAX_EVALS: u64 = 1 << 16;

/// The most steps (tasks, PEs, phase entries and route links visited) the evaluations of
/// one exchange pass may take in all.
pub(crate) const REFINE_MAX_WORK: u64 = 1 << 31;

/// Ours, the exchange pass (see [`GreedyPerego::refine_evals`]): first-improvement passes
/// over the tasks with a partner farther than distance 1, until a pass changes nothing or
/// the evaluations run out; changes that lengthen the routes (eq. 4) are scored only once
/// the others bring nothing. One task per PE on entry and on exit.
pub(crate) fn refine(cx: &Ctx, pes: &mut [u32]) {
    if (0..cx.n as u32).any(|t| cx.partners.degree(t) as usize > cx.max_pe_degree) {
        return;
    }
    let mut task_on = vec![UNMAPPED; cx.k];
    for (t, &p) in pes.iter().enumerate() {
        task_on[p as usize] = t as u32;
    }
    let mut sc = PartialScratch::default();
    let eval = |pes: &[u32], sc: &mut PartialScratch| {
        let e = cx.model.evaluate_partial_with(cx.arch, pes, sc);
        (e.f_sum, e.f)
    };
    let mut cur = eval(pes, &mut sc);
    // One pool of `refine_evals · T` evaluations, at most REFINE_MAX_EVALS, and at most
    // REFINE_MAX_WORK steps in all (an evaluation costs about T + k + entries + the
    // links its routes cross).
    let per_eval = (cx.n + cx.k + cx.model.phase_entries.len() + sc.route_links()) as u64;
    let mut budget = (u64::from(cx.params.refine_evals) * cx.n as u64)
        .min(REFINE_MAX_EVALS)
        .min(REFINE_MAX_WORK / per_eval.max(1));
    let mut cands: Vec<u32> = Vec::new();
    // First only changes that do not lengthen the routes, then any.
    let mut filtered = true;
    loop {
        let mut improved = false;
        for u in 0..cx.n as u32 {
            if !cx
                .topo
                .exchange_candidates(pes, u, cx.partners.of(u), &mut cands)
            {
                continue;
            }
            for &p in &cands {
                let pu = pes[u as usize];
                if p == pu {
                    continue;
                }
                let v = task_on[p as usize];
                if filtered && distance_change(cx, pes, u, p, v) > 0.0 {
                    continue;
                }
                if budget == 0 {
                    return;
                }
                budget -= 1;
                pes[u as usize] = p;
                if v != UNMAPPED {
                    pes[v as usize] = pu;
                }
                let new = eval(pes, &mut sc);
                let tol = 1e-9 * cur.0.abs().max(1.0);
                if new.0 < cur.0 - tol && new.1 <= cur.1 + 1e-9 * cur.1.abs().max(1.0) {
                    cur = new;
                    task_on[p as usize] = u;
                    task_on[pu as usize] = v;
                    improved = true;
                } else {
                    pes[u as usize] = pu;
                    if v != UNMAPPED {
                        pes[v as usize] = p;
                    }
                }
            }
        }
        if !improved {
            if !filtered {
                return;
            }
            filtered = false;
        }
    }
}
