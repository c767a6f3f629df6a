//! Ours, the end-game search: when few tasks remain, a bounded branch-and-bound over their
//! placements on the free PEs, by the completion estimate `F`.

use crate::perego::greedy::exchange::*;
use crate::perego::greedy::*;

/// Ours: an exhaustive search (depth-first; the unmapped task with the fewest options
/// first, options with the fewest free neighbours first) for a completion of the partial
/// mapping that puts every remaining task next to all its mapped partners, within
/// `endgame_budget` nodes per remaining task. The assignments in order, or `None` (none
/// exists, the budget ran out, or a remaining part of the task graph has no mapped task).
pub(crate) fn endgame_completion(st: &State, cx: &Ctx) -> Option<Vec<(u32, u32)>> {
    let pes = st.inc.pes();
    let n = cx.n;
    let mut g = Endgame {
        pes: pes.to_vec(),
        used: (0..cx.k as u32).map(|p| st.inc.tasks_on(p) > 0).collect(),
        task_on: vec![UNMAPPED; cx.k],
        open: vec![0; n],
        mp: vec![0; n],
        frontier: Vec::new(),
        fpos: vec![UNMAPPED; n],
        left: 0,
        tight: cx.n == cx.k,
        min_degree: usize::MAX,
        plan: Vec::new(),
        opts: Vec::new(),
        nodes: 0,
        budget: 0,
        work: 0,
        work_budget: 0,
    };
    for t in 0..n as u32 {
        let p = pes[t as usize];
        if p != UNMAPPED {
            g.task_on[p as usize] = t;
            continue;
        }
        g.left += 1;
        g.min_degree = g.min_degree.min(cx.partners.degree(t) as usize);
        for &v in cx.partners.of(t) {
            if pes[v as usize] == UNMAPPED {
                g.open[t as usize] += 1;
            } else {
                g.mp[t as usize] += 1;
            }
        }
        if g.mp[t as usize] > 0 {
            g.add(t);
        }
    }
    for t in 0..n {
        if pes[t] != UNMAPPED {
            g.open[t] = cx
                .partners
                .of(t as u32)
                .iter()
                .filter(|&&v| pes[v as usize] == UNMAPPED)
                .count() as u32;
        }
    }
    if (0..n as u32)
        .any(|t| pes[t as usize] == UNMAPPED && cx.partners.degree(t) as usize > cx.max_pe_degree)
    {
        return None;
    }
    g.budget = cx
        .params
        .endgame_budget
        .saturating_mul(g.left as u64)
        .min(ENDGAME_MAX_NODES);
    g.work_budget = g
        .budget
        .saturating_mul(ENDGAME_WORK_PER_NODE)
        .min(ENDGAME_MAX_WORK);
    match g.dfs(st, cx) {
        Some(true) => Some(g.plan),
        _ => None,
    }
}

/// The most nodes one end-game search visits, whatever the number of tasks.
pub(crate) const ENDGAME_MAX_NODES: u64 = 1 << 22;

/// Option evaluations one end-game search may make per node of its budget.
pub(crate) const ENDGAME_WORK_PER_NODE: u64 = 64;

/// The most option evaluations one end-game search makes, whatever the number of tasks.
pub(crate) const ENDGAME_MAX_WORK: u64 = 1 << 26;

pub(crate) struct Endgame {
    pub(crate) pes: Vec<u32>,
    pub(crate) used: Vec<bool>,
    /// The task on every used PE (one per PE), `UNMAPPED` for free PEs.
    pub(crate) task_on: Vec<u32>,
    /// Unmapped partners of every task.
    pub(crate) open: Vec<u32>,
    /// Mapped partners of every task.
    pub(crate) mp: Vec<u32>,
    /// Unmapped tasks with a mapped partner, and their positions in it.
    pub(crate) frontier: Vec<u32>,
    pub(crate) fpos: Vec<u32>,
    /// Unmapped tasks.
    pub(crate) left: usize,
    /// Every PE will be used (as many tasks as PEs): a free PE must keep enough
    /// neighbours that are free or hold a task with unmapped partners.
    pub(crate) tight: bool,
    pub(crate) min_degree: usize,
    pub(crate) plan: Vec<(u32, u32)>,
    /// Options of every open level, as a stack.
    pub(crate) opts: Vec<u32>,
    pub(crate) nodes: u64,
    pub(crate) budget: u64,
    /// Option evaluations (a frontier task's free PEs next to its mapped partners): each
    /// node evaluates the options of the whole frontier to find the most constrained task.
    pub(crate) work: u64,
    pub(crate) work_budget: u64,
}

impl Endgame {
    fn add(&mut self, t: u32) {
        self.fpos[t as usize] = self.frontier.len() as u32;
        self.frontier.push(t);
    }

    fn remove(&mut self, t: u32) {
        let i = self.fpos[t as usize] as usize;
        self.frontier.swap_remove(i);
        if i < self.frontier.len() {
            self.fpos[self.frontier[i] as usize] = i as u32;
        }
        self.fpos[t as usize] = UNMAPPED;
    }

    /// Appends the options of frontier task `c` (free feasible PEs at distance 1 from
    /// every mapped partner) to `opts`; returns how many.
    fn options(&mut self, st: &State, cx: &Ctx, c: u32) -> usize {
        let before = self.opts.len();
        let Some(anchor) = cx
            .partners
            .of(c)
            .iter()
            .map(|&v| self.pes[v as usize])
            .find(|&q| q != UNMAPPED)
        else {
            return 0;
        };
        for &x in cx.topo.neighbours(anchor) {
            if self.used[x as usize] || !cx.feasible(st, c, x) {
                continue;
            }
            let ok = cx.partners.of(c).iter().all(|&v| {
                let q = self.pes[v as usize];
                q == UNMAPPED || cx.topo.dist(x, q) == 1
            });
            if ok {
                self.opts.push(x);
            }
        }
        self.opts.len() - before
    }

    fn place(&mut self, cx: &Ctx, c: u32, x: u32) {
        self.remove(c);
        self.left -= 1;
        self.pes[c as usize] = x;
        self.used[x as usize] = true;
        self.task_on[x as usize] = c;
        self.plan.push((c, x));
        for &v in cx.partners.of(c) {
            self.open[v as usize] -= 1;
            self.mp[v as usize] += 1;
            if self.pes[v as usize] == UNMAPPED && self.mp[v as usize] == 1 {
                self.add(v);
            }
        }
    }

    fn unplace(&mut self, cx: &Ctx, c: u32, x: u32) {
        for &v in cx.partners.of(c) {
            self.open[v as usize] += 1;
            self.mp[v as usize] -= 1;
            if self.pes[v as usize] == UNMAPPED && self.mp[v as usize] == 0 {
                self.remove(v);
            }
        }
        self.plan.pop();
        self.task_on[x as usize] = UNMAPPED;
        self.used[x as usize] = false;
        self.pes[c as usize] = UNMAPPED;
        self.left += 1;
        self.add(c);
    }

    /// With as many tasks as PEs, whether placing `c` on `x` left a free PE next to `x`
    /// or to `c`'s partners with fewer usable neighbours (free, or holding a task with
    /// unmapped partners) than the smallest degree of the remaining tasks.
    fn dead_around(&self, cx: &Ctx, c: u32, x: u32) -> bool {
        if !self.tight || self.min_degree == 0 || self.min_degree == usize::MAX {
            return false;
        }
        let usable =
            |y: u32| !self.used[y as usize] || self.open[self.task_on[y as usize] as usize] > 0;
        let dead = |z: u32| {
            !self.used[z as usize]
                && cx.topo.neighbours(z).iter().filter(|&&y| usable(y)).count() < self.min_degree
        };
        let around = |p: u32| cx.topo.neighbours(p).iter().any(|&z| dead(z));
        if around(x) {
            return true;
        }
        cx.partners
            .of(c)
            .iter()
            .map(|&v| self.pes[v as usize])
            .any(|q| q != UNMAPPED && around(q))
    }

    /// `Some(true)`: completed (the assignments are in `plan`); `Some(false)`: no
    /// completion exists; `None`: out of budget, or unmapped tasks none of which has a
    /// mapped partner. Iterative (an explicit stack of levels), so the depth is not limited
    /// by the thread's stack.
    fn dfs(&mut self, st: &State, cx: &Ctx) -> Option<bool> {
        let mut levels: Vec<Level> = Vec::new();
        loop {
            if self.left == 0 {
                return Some(true);
            }
            self.nodes += 1;
            if self.nodes > self.budget || self.frontier.is_empty() {
                return None;
            }
            let chosen = self.most_constrained(st, cx);
            if self.work > self.work_budget {
                return None;
            }
            if let Some(c) = chosen {
                let base = self.opts.len();
                self.options(st, cx, c);
                self.work += 1;
                let hi = self.opts.len();
                // The fewest free neighbours first (Warnsdorff), then the degree rule.
                let used = &self.used;
                let sigma = cx.sigma_task[c as usize];
                let by_degree = cx.params.degree_radius != Some(0);
                self.opts[base..hi].sort_unstable_by_key(|&x| {
                    (
                        cx.topo
                            .neighbours(x)
                            .iter()
                            .filter(|&&y| !used[y as usize])
                            .count(),
                        if by_degree {
                            sigma.abs_diff(cx.sigma_pe[x as usize])
                        } else {
                            0
                        },
                        x,
                    )
                });
                levels.push(Level {
                    task: c,
                    base,
                    hi,
                    next: base,
                    placed: UNMAPPED,
                });
            }
            // The next option of the deepest level, backtracking when one is exhausted.
            loop {
                let Some(l) = levels.last_mut() else {
                    return Some(false);
                };
                let c = l.task;
                if l.placed != UNMAPPED {
                    let x = l.placed;
                    l.placed = UNMAPPED;
                    self.unplace(cx, c, x);
                }
                if l.next == l.hi {
                    let base = l.base;
                    levels.pop();
                    self.opts.truncate(base);
                    continue;
                }
                let x = self.opts[l.next];
                l.next += 1;
                l.placed = x;
                self.place(cx, c, x);
                if !self.dead_around(cx, c, x) {
                    break;
                }
            }
        }
    }

    /// The frontier task with the fewest options (the first on ties), or `None` when one
    /// has none.
    fn most_constrained(&mut self, st: &State, cx: &Ctx) -> Option<u32> {
        let base = self.opts.len();
        let mut best: Option<(u32, usize)> = None;
        for i in 0..self.frontier.len() {
            let c = self.frontier[i];
            let cnt = self.options(st, cx, c);
            self.work += 1;
            self.opts.truncate(base);
            if cnt == 0 {
                return None;
            }
            if best.is_none_or(|b| cnt < b.1) {
                best = Some((c, cnt));
            }
        }
        best.map(|b| b.0)
    }
}
