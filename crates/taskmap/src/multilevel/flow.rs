//! Flow-based refinement of a bipartition: a minimum cut in a corridor around the
//! frontier.
//!
//! FM moves one task at a time; straightening a frontier that bulges on a mesh needs a
//! long run of zero-gain moves on both sides at once, which FM does not find (a
//! 1000x1000 grid bisected with a cut of 1,300 where a straight line cuts 1,000). A
//! minimum s-t cut finds it in one step (the flow refinement of KaFFPa, Sanders & Schulz
//! 2011). Around the frontier, a region of side 0 and a region of side 1 are grown by
//! breadth-first search up to a weight each; the rest of side 0 becomes the source and the
//! rest of side 1 the sink; edge capacities are the cut costs and the external costs of a
//! task become edges to the terminals (a task on side 0 pays `ext_0`, on side 1 `ext_1`).
//! The minimum cut closest to the source and the one closest to the sink are both tried;
//! a result is kept only when it is no worse than the current bipartition (overload first,
//! then cost). The regions start at `alpha` times the weight the sides may lose and shrink
//! by half while the cuts are unbalanced.
//!
//! Max flow by Dinic's algorithm: O(V² E) in general, fast on these unit-like corridors.

use super::bipart::SubProblem;

const NONE: u32 = u32::MAX;

/// Most flow computations per call of [`flow_refine`].
const MAX_ROUNDS: usize = 8;

/// Flow network scratch.
#[derive(Debug, Default)]
pub struct FlowScratch {
    region: Vec<u32>,
    queue: Vec<u32>,
    head: Vec<u32>,
    next: Vec<u32>,
    to: Vec<u32>,
    cap: Vec<u64>,
    level: Vec<u32>,
    iter: Vec<u32>,
    stack: Vec<(u32, u32)>,
    /// The frontier of the current sides.
    frontier: Vec<u32>,
    /// The corridor's tasks of the last [`corridor_cut`] and their sides in its two cuts.
    band: Vec<u32>,
    label: [Vec<u8>; 2],
}

impl FlowScratch {
    /// The new side of task `v` in cut `which` of the last corridor.
    #[inline]
    fn new_side(&self, side: &[u8], which: usize, v: usize) -> u8 {
        match self.region[v] {
            NONE => side[v],
            li => self.label[which][li as usize],
        }
    }

    /// Change of cost and of the load of side 0 from `side` to cut `which` of the last
    /// corridor: over the tasks that change side, their external costs and their edges
    /// (an edge between two such tasks counted once).
    fn delta(&self, sp: &SubProblem, side: &[u8], which: usize) -> (i128, i128) {
        let (mut d_cost, mut d_load0) = (0i128, 0i128);
        for (li, &v) in self.band.iter().enumerate() {
            let v = v as usize;
            let (old, new) = (side[v], self.label[which][li]);
            if old == new {
                continue;
            }
            let w = sp.vertex_weight[v] as i128;
            d_load0 += if new == 0 { w } else { -w };
            d_cost += sp.ext[new as usize][v] as i128 - sp.ext[old as usize][v] as i128;
            for e in sp.xadj[v]..sp.xadj[v + 1] {
                let u = sp.adjncy[e] as usize;
                let u_new = self.new_side(side, which, u);
                if u_new != side[u] && u < v {
                    continue; // both ends move: counted from the smaller id
                }
                let before = side[v] != side[u];
                let after = new != u_new;
                let c = (sp.edge_weight[e] * sp.cut_dist) as i128;
                d_cost += (i128::from(after) - i128::from(before)) * c;
            }
        }
        (d_cost, d_load0)
    }

    /// Writes cut `which` of the last corridor into `side`.
    fn apply(&self, side: &mut [u8], which: usize) {
        for (li, &v) in self.band.iter().enumerate() {
            side[v as usize] = self.label[which][li];
        }
    }

    fn add_edge(&mut self, a: u32, b: u32, c_ab: u64, c_ba: u64) {
        for (x, y, c) in [(a, b, c_ab), (b, a, c_ba)] {
            self.to.push(y);
            self.cap.push(c);
            self.next.push(self.head[x as usize]);
            self.head[x as usize] = self.to.len() as u32 - 1;
        }
    }

    /// Breadth-first levels from `s` in the residual network: along edges with capacity
    /// left, or with `reverse`, against them (the vertices that reach `s`).
    fn bfs(&mut self, s: u32, reverse: bool) {
        self.level.iter_mut().for_each(|l| *l = NONE);
        self.queue.clear();
        self.level[s as usize] = 0;
        self.queue.push(s);
        let mut i = 0;
        while i < self.queue.len() {
            let v = self.queue[i];
            i += 1;
            let mut e = self.head[v as usize];
            while e != NONE {
                let u = self.to[e as usize];
                // Edge v -> u; its reverse e ^ 1 is u -> v.
                let c = self.cap[(if reverse { e ^ 1 } else { e }) as usize];
                if c > 0 && self.level[u as usize] == NONE {
                    self.level[u as usize] = self.level[v as usize] + 1;
                    self.queue.push(u);
                }
                e = self.next[e as usize];
            }
        }
    }

    /// One blocking flow by iterative depth-first search; returns the flow pushed.
    fn blocking(&mut self, s: u32, t: u32) -> u64 {
        let mut total = 0u64;
        self.iter.clear();
        self.iter.extend_from_slice(&self.head);
        loop {
            // Find a path s -> t along level-increasing edges with capacity.
            self.stack.clear();
            let mut v = s;
            let found = loop {
                if v == t {
                    break true;
                }
                let mut e = self.iter[v as usize];
                while e != NONE {
                    let u = self.to[e as usize];
                    if self.cap[e as usize] > 0
                        && self.level[u as usize] == self.level[v as usize].wrapping_add(1)
                    {
                        break;
                    }
                    e = self.next[e as usize];
                }
                self.iter[v as usize] = e;
                if e == NONE {
                    // Dead end: retreat.
                    self.level[v as usize] = NONE;
                    match self.stack.pop() {
                        Some((pv, _)) => v = pv,
                        None => break false,
                    }
                } else {
                    self.stack.push((v, e));
                    v = self.to[e as usize];
                }
            };
            if !found {
                return total;
            }
            let f = self
                .stack
                .iter()
                .map(|&(_, e)| self.cap[e as usize])
                .min()
                .unwrap_or(0);
            for &(_, e) in &self.stack {
                self.cap[e as usize] -= f;
                self.cap[(e ^ 1) as usize] += f;
            }
            total += f;
        }
    }
}

/// Improves `side` by a minimum cut in a corridor around the frontier (see the module
/// documentation). One vertex weight only. Returns whether `side` changed.
///
/// A candidate differs from `side` only inside the corridor, so its overload and cost are
/// obtained from the corridor's tasks and their edges (`delta`), not recomputed.
pub fn flow_refine(sp: &SubProblem, side: &mut [u8], alpha: f64, sc: &mut FlowScratch) -> bool {
    flow_refine_from(sp, side, alpha, sc, sp.cost(side)).is_some()
}

/// [`flow_refine`] given the cost of `side`; returns the new cost when `side` changed.
pub fn flow_refine_from(
    sp: &SubProblem,
    side: &mut [u8],
    alpha: f64,
    sc: &mut FlowScratch,
    cost: u64,
) -> Option<u64> {
    debug_assert_eq!(cost, sp.cost(side));
    let n = sp.n();
    if n < 8 || sp.ncon != 1 {
        return None;
    }
    let mut loads = sp.loads(side);
    let mut cost = cost;
    let mut best = (sp.violation(&loads), cost);
    let total = loads[0][0] + loads[1][0];
    // Weight each side may lose and stay feasible (from the loads on entry):
    // load_s − (total − bound_{1−s}).
    let may_lose = {
        let l0 = [loads[0][0], loads[1][0]];
        move |s: usize| l0[s].saturating_sub(total.saturating_sub(sp.bound[1 - s][0]))
    };
    let mut a = alpha;
    let mut changed = false;
    sc.region.clear();
    sc.region.resize(n, NONE);
    sc.band.clear();
    find_frontier(sp, side, sc);
    // Each round lowers (overload, cost) or halves the corridor; a few rounds suffice.
    for _ in 0..MAX_ROUNDS {
        if a < 1.0 {
            break;
        }
        let limit = [
            ((may_lose(0) as f64) * a).max(1.0) as u64,
            ((may_lose(1) as f64) * a).max(1.0) as u64,
        ];
        if !corridor_cut(sp, side, limit, sc) {
            return changed.then_some(cost);
        }
        let mut unbalanced = false;
        let mut choice = None;
        for which in 0..2 {
            let (d_cost, d_load0) = sc.delta(sp, side, which);
            let c_loads = [
                vec![(loads[0][0] as i128 + d_load0) as u64],
                vec![(loads[1][0] as i128 - d_load0) as u64],
            ];
            let c_cost = (cost as i128 + d_cost) as u64;
            let k = (sp.violation(&c_loads), c_cost);
            debug_assert_eq!(k, {
                let mut c = side.to_vec();
                sc.apply(&mut c, which);
                (sp.violation(&sp.loads(&c)), sp.cost(&c))
            });
            if k.0 > best.0 {
                unbalanced = true;
            }
            if k < best {
                best = k;
                choice = Some((which, c_loads, c_cost));
            }
        }
        if let Some((which, c_loads, c_cost)) = choice {
            sc.apply(side, which);
            loads = c_loads;
            cost = c_cost;
            changed = true;
            find_frontier(sp, side, sc);
            continue;
        }
        if !unbalanced {
            return changed.then_some(cost);
        }
        a /= 2.0;
    }
    changed.then_some(cost)
}

/// Whether task `v` of `sp` is fixed to a side.
#[inline]
fn is_fixed(sp: &SubProblem, v: usize) -> bool {
    sp.fixed
        .get(v)
        .is_some_and(|&s| s != super::bipart::FREE_SIDE)
}

/// The free tasks with a neighbour on the other side, into `FlowScratch::frontier`.
fn find_frontier(sp: &SubProblem, side: &[u8], sc: &mut FlowScratch) {
    sc.frontier.clear();
    for v in 0..sp.n() {
        if is_fixed(sp, v) {
            continue;
        }
        let s = side[v];
        if sp.adjncy[sp.xadj[v]..sp.xadj[v + 1]]
            .iter()
            .any(|&u| side[u as usize] != s)
        {
            sc.frontier.push(v as u32);
        }
    }
}

/// Computes the two minimum cuts (closest to the source, closest to the sink) of the
/// corridor grown from `FlowScratch::frontier` (the frontier of `side`) whose regions
/// weigh at most `limit[s]` on side `s`: the corridor's tasks in `FlowScratch::band`
/// (their index in `region`, which is `NONE` for every other task on entry and on exit
/// but for the new band) and their new sides in `FlowScratch::label`. `false` when the
/// corridor is empty.
fn corridor_cut(sp: &SubProblem, side: &[u8], limit: [u64; 2], sc: &mut FlowScratch) -> bool {
    let fixed = |v: usize| is_fixed(sp, v);
    // Regions: BFS from the frontier into each side, up to the weight limit.
    let mut band = std::mem::take(&mut sc.band);
    for &v in &band {
        sc.region[v as usize] = NONE;
    }
    band.clear();
    sc.queue.clear();
    sc.queue.extend_from_slice(&sc.frontier);
    let mut grown = [0u64; 2];
    let mut i = 0;
    while i < sc.queue.len() {
        let v = sc.queue[i] as usize;
        i += 1;
        if sc.region[v] != NONE {
            continue;
        }
        let s = side[v] as usize;
        let w = sp.vertex_weight[v];
        if grown[s] + w > limit[s] {
            continue;
        }
        grown[s] += w;
        sc.region[v] = band.len() as u32;
        band.push(v as u32);
        for &u in &sp.adjncy[sp.xadj[v]..sp.xadj[v + 1]] {
            let u = u as usize;
            if side[u] as usize == s && sc.region[u] == NONE && !fixed(u) {
                sc.queue.push(u as u32);
            }
        }
    }
    if band.is_empty() {
        sc.band = band;
        return false;
    }
    // Network: band vertices 0..b, source b, sink b + 1.
    let b = band.len();
    let (src, snk) = (b as u32, b as u32 + 1);
    sc.head.clear();
    sc.head.resize(b + 2, NONE);
    sc.next.clear();
    sc.to.clear();
    sc.cap.clear();
    for (li, &v) in band.iter().enumerate() {
        let v = v as usize;
        let li = li as u32;
        let (mut to_src, mut to_snk) = (0u64, 0u64);
        for e in sp.xadj[v]..sp.xadj[v + 1] {
            let u = sp.adjncy[e] as usize;
            let c = sp.edge_weight[e] * sp.cut_dist;
            match sc.region[u] {
                NONE => {
                    if side[u] == 0 {
                        to_src += c;
                    } else {
                        to_snk += c;
                    }
                }
                lu if lu > li => sc.add_edge(li, lu, c, c),
                _ => {}
            }
        }
        // External costs: on side 1 the task pays ext_1 (cut s -> v), on side 0 ext_0
        // (cut v -> t); only the difference matters.
        let (e0, e1) = (sp.ext[0][v], sp.ext[1][v]);
        let m = e0.min(e1);
        to_src += e1 - m;
        to_snk += e0 - m;
        if to_src > 0 {
            sc.add_edge(src, li, to_src, 0);
        }
        if to_snk > 0 {
            sc.add_edge(li, snk, to_snk, 0);
        }
    }
    sc.level.clear();
    sc.level.resize(b + 2, NONE);
    loop {
        sc.bfs(src, false);
        if sc.level[snk as usize] == NONE || sc.blocking(src, snk) == 0 {
            break;
        }
    }
    // The cut closest to the source: what the source still reaches in the residual
    // network; the one closest to the sink: what still reaches the sink.
    sc.label[0].clear();
    sc.label[1].clear();
    sc.bfs(src, false);
    for li in 0..b {
        sc.label[0].push(u8::from(sc.level[li] == NONE));
    }
    sc.bfs(snk, true);
    for li in 0..b {
        sc.label[1].push(u8::from(sc.level[li] != NONE));
    }
    sc.band = band;
    true
}
