//! The choice of a task's PE: the candidate PEs (within the bounding box and the degree
//! radius, with room), each scored by the incremental `F`, with the look-ahead over the
//! task's unmapped partners breaking ties.

use taskmap_arch::{Architecture, LinkId, PeId};

use crate::error::Error;
use crate::perego::f::IncrementalF;

use super::tasks::Partners;
use super::topology::Topo;
use crate::perego::greedy::exchange::*;
use crate::perego::greedy::*;

/// The first `s` feasible PEs by F' with their F (into `sc.cands`, in F' order).
pub(crate) fn candidates(st: &State, cx: &Ctx, sc: &mut Scratch, t: u32) -> Result<(), Error> {
    let tu = t as usize;
    let model = cx.model;
    let inc = &st.inc;
    sc.cands.clear();
    sc.order.clear();
    if inc.mapped() == 0 && cx.feasible(st, t, cx.first_pe) {
        sc.order.push((false, 0.0, 0.0, cx.first_pe));
        return Ok(());
    }
    let tc = cx.tc;
    let own = (model.work[tu] + model.wait[tu]) as f64;
    let r6 = inc.per_pe_eq6();
    let pes = inc.pes();
    let chans = cx.chans(t);
    // F': eq. 6 on the PEs whose value changes (the candidate and the partners' PEs): the
    // largest new value, then the total increase.
    let fprime = |p: u32, other_pes: &mut Vec<(u32, f64)>| -> (f64, f64) {
        let mut on_p = own;
        other_pes.clear();
        for (ch, q, incoming) in mapped_channels(model, chans, pes, t) {
            if q == p {
                on_p -= model.local_saving(ch);
                continue;
            }
            let v = ch.messages as f64 * tc * (cx.topo.dist(p, q) as f64 - 1.0);
            if incoming {
                on_p += v;
            } else if let Some(e) = other_pes.iter_mut().find(|e| e.0 == q) {
                e.1 += v;
            } else {
                other_pes.push((q, v));
            }
        }
        let mut worst = r6[p as usize] + on_p;
        let mut total = on_p;
        for &(q, v) in other_pes.iter() {
            worst = worst.max(r6[q as usize] + v);
            total += v;
        }
        (worst, total)
    };
    let s = ((2 * cx.nd + 1) * st.mapped_partners[tu] as usize)
        .max(cx.params.min_candidates)
        .max(1);
    if cx.one_to_one && st.mapped_partners[tu] > 0 && !cx.full_scan {
        nearest_candidates(st, cx, sc, t, s, own, fprime);
    } else {
        scan_candidates(st, cx, sc, t, s, fprime);
    }
    if sc.order.is_empty() {
        return Err(Error::Mismatch(format!(
            "greedy-perego: task {} fits on no PE after {} of {} tasks were placed (memory bound or capacities too small)",
            t,
            inc.mapped(),
            cx.n
        )));
    }
    sc.order.sort_unstable_by(candidate_cmp);
    Ok(())
}

/// The order of candidates: demoted last, then by F' (largest value, then total
/// increase), then by PE.
fn candidate_cmp(a: &(bool, f64, f64, u32), b: &(bool, f64, f64, u32)) -> std::cmp::Ordering {
    a.0.cmp(&b.0)
        .then(a.1.total_cmp(&b.1))
        .then(a.2.total_cmp(&b.2))
        .then(a.3.cmp(&b.3))
}

/// The `s` best feasible PEs for `t` by F' (`fprime`) into `sc.order`, with one task per
/// PE and mapped partners: free PEs only, so F' grows with every distance to a partner's
/// PE. The PEs are visited breadth-first from the partners' PEs, stopping once a lower
/// bound for the next distance is above the `s`-th best value: exactly the `s` best of a
/// full scan. `own` is the task's own time.
fn nearest_candidates(
    st: &State,
    cx: &Ctx,
    sc: &mut Scratch,
    t: u32,
    s: usize,
    own: f64,
    fprime: impl Fn(u32, &mut Vec<(u32, f64)>) -> (f64, f64),
) {
    let r6 = st.inc.per_pe_eq6();
    let mut per_in = 0.0;
    let mut per_total = 0.0;
    sc.other_pes.clear();
    sc.seeds.clear();
    for (ch, q, incoming) in mapped_channels(cx.model, cx.chans(t), st.inc.pes(), t) {
        let m = ch.messages as f64 * cx.tc;
        per_total += m;
        if incoming {
            per_in += m;
        } else if let Some(e) = sc.other_pes.iter_mut().find(|e| e.0 == q) {
            e.1 += m;
        } else {
            sc.other_pes.push((q, m));
        }
        sc.seeds.push(q);
    }
    let out_per: Vec<(u32, f64)> = std::mem::take(&mut sc.other_pes);
    let lower = |radius: u32| -> OrdKey {
        let x = f64::from(radius.saturating_sub(1));
        let mut worst = own + per_in * x;
        for &(q, m) in &out_per {
            worst = worst.max(r6[q as usize] + m * x);
        }
        OrdKey(worst, own + per_total * x)
    };
    if sc.bfs_stamp == u32::MAX {
        sc.bfs_stamp = 0;
        sc.seen.iter_mut().for_each(|x| *x = 0);
    }
    sc.bfs_stamp += 1;
    sc.seeds.sort_unstable();
    sc.seeds.dedup();
    sc.level.clear();
    for &q in &sc.seeds {
        sc.seen[q as usize] = sc.bfs_stamp;
        sc.level.push(q);
    }
    let mut radius = 0u32;
    let mut heap = std::mem::take(&mut sc.bfs_heap);
    heap.clear();
    loop {
        for &p in &sc.level {
            if !cx.feasible(st, t, p) {
                continue;
            }
            let (w, tot) = fprime(p, &mut sc.other_pes);
            heap.push((OrdKey(w, tot), p));
            if heap.len() > s {
                heap.pop();
            }
        }
        if heap.len() >= s {
            let worst = heap.peek().map(|e| e.0).expect("a full heap");
            if lower(radius + 1) > worst {
                break;
            }
        }
        sc.next_level.clear();
        for &u in &sc.level {
            for &v in cx.topo.neighbours(u) {
                if sc.seen[v as usize] != sc.bfs_stamp {
                    sc.seen[v as usize] = sc.bfs_stamp;
                    sc.next_level.push(v);
                }
            }
        }
        if sc.next_level.is_empty() {
            break;
        }
        std::mem::swap(&mut sc.level, &mut sc.next_level);
        radius += 1;
    }
    sc.order
        .extend(heap.drain().map(|(OrdKey(w, tot), p)| (false, w, tot, p)));
    sc.bfs_heap = heap;
    sc.other_pes = out_per;
}

/// The `s` best feasible PEs for `t` by F' (`fprime`) into `sc.order`, from a scan of
/// every PE: with many tasks per PE (the usage-factor rule) or no mapped partner.
fn scan_candidates(
    st: &State,
    cx: &Ctx,
    sc: &mut Scratch,
    t: u32,
    s: usize,
    fprime: impl Fn(u32, &mut Vec<(u32, f64)>) -> (f64, f64),
) {
    let inc = &st.inc;
    let favour_used = cx.n > cx.k
        && st.occupied > 0
        && (inc.mapped() as f64 / st.occupied as f64) < cx.n as f64 / cx.k as f64;
    for p in 0..cx.k as u32 {
        if !cx.feasible(st, t, p) {
            continue;
        }
        let (worst, total) = fprime(p, &mut sc.other_pes);
        let demote = favour_used && inc.tasks_on(p) == 0;
        sc.order.push((demote, worst, total, p));
    }
    if s < sc.order.len() {
        sc.order.select_nth_unstable_by(s - 1, candidate_cmp);
        sc.order.truncate(s);
    }
}

/// What the tie-breakers read.
pub(crate) struct ChooseCtx<'c, 'a> {
    pub(crate) inc: &'c IncrementalF<'a>,
    pub(crate) topo: &'c Topo<'a>,
    pub(crate) arch: &'a dyn Architecture,
    pub(crate) partners: &'c Partners,
}

/// The PE for task `t` among the candidates in `sc.order` (F' order): the smallest F;
/// among similar values, the smallest F_sum, then the look-ahead, the degree
/// difference, the bounding box (volume, then the sum of its sides), and the F' order.
pub(crate) fn choose(st: &mut State, cx: &Ctx, sc: &mut Scratch, t: u32) -> u32 {
    let params = cx.params;
    for i in 0..sc.order.len() {
        let p = sc.order[i].3;
        let f = st.inc.trial(t, p);
        sc.cands.push(Cand { pe: p, f });
    }
    let tol = params.tie_tolerance;
    let similar_min = |v: f64, min: f64| v <= min + tol * min.abs().max(1.0);
    let fmin = sc.cands.iter().map(|c| c.f.f).fold(f64::INFINITY, f64::min);
    sc.cands.retain(|c| similar_min(c.f.f, fmin));
    if sc.cands.len() > 1 {
        let smin = sc
            .cands
            .iter()
            .map(|c| c.f.f_sum)
            .fold(f64::INFINITY, f64::min);
        sc.cands.retain(|c| similar_min(c.f.f_sum, smin));
    }
    let ccx = ChooseCtx {
        inc: &st.inc,
        topo: &cx.topo,
        arch: cx.arch,
        partners: &cx.partners,
    };
    if params.lookahead && sc.cands.len() > 1 {
        let route = &mut sc.route;
        keep_min(&mut sc.cands, &mut sc.keys, |c| {
            lookahead(c.pe, t, &ccx, route)
        });
    }
    if params.degree_radius != Some(0) {
        let stt = cx.sigma_task[t as usize];
        keep_min(&mut sc.cands, &mut sc.keys, |c| {
            stt.abs_diff(cx.sigma_pe[c.pe as usize])
        });
    }
    if params.bounding_box && sc.cands.len() > 1 {
        let vmin = sc
            .cands
            .iter()
            .map(|c| cx.topo.box_with(&st.bbox, c.pe).0)
            .fold(f64::INFINITY, f64::min);
        sc.cands
            .retain(|c| cx.topo.box_with(&st.bbox, c.pe).0 <= vmin);
        keep_min(&mut sc.cands, &mut sc.keys, |c| {
            cx.topo.box_with(&st.bbox, c.pe).1
        });
    }
    sc.cands[0].pe
}

/// Keeps the candidates with the least `key`.
pub(crate) fn keep_min(
    cands: &mut Vec<Cand>,
    keys: &mut Vec<u64>,
    mut key: impl FnMut(&Cand) -> u64,
) {
    if cands.len() < 2 {
        return;
    }
    keys.clear();
    keys.extend(cands.iter().map(&mut key));
    let m = keys.iter().copied().min().unwrap_or(0);
    let mut i = 0;
    cands.retain(|_| {
        i += 1;
        keys[i - 1] == m
    });
}

/// The look-ahead of §5.2 for task `t` on PE `j`: for every unmapped partner `c` of `t`
/// and every mapped partner `c'` of `c` (other than `t`), the distance from `j` to `c'`'s
/// PE plus the links of the two routes between them that committed channels already use.
pub(crate) fn lookahead(j: u32, t: u32, cx: &ChooseCtx, route: &mut Vec<LinkId>) -> u64 {
    let pes = cx.inc.pes();
    let used = cx.inc.link_use();
    let mut total = 0u64;
    let routes = crate::perego::routes(cx.arch);
    for &c in cx.partners.of(t) {
        if pes[c as usize] != UNMAPPED {
            continue;
        }
        for &c2 in cx.partners.of(c) {
            let q = pes[c2 as usize];
            if c2 == t || q == UNMAPPED {
                continue;
            }
            total += cx.topo.dist(j, q);
            for (a, b) in [(j, q), (q, j)] {
                route.clear();
                routes.route(PeId(a), PeId(b), route);
                total += route.iter().filter(|&&l| used[l as usize] > 0).count() as u64;
            }
        }
    }
    total
}
