//! The application model of the Algorithm Mapper (Houstis et al. 1989): a stochastic
//! AND/EOR precedence graph of program modules.
//!
//! A module has a processing time `m_i` and a memory need; a link `i → j` passes control
//! with probability `p_ij` and carries `γ_ij` ITUs (units of information transfer). A
//! module's output logic says where control goes: `AND` to every successor (a fork: they
//! may run in parallel), `EOR` to exactly one of them, chosen with the links'
//! probabilities (they may sum to less than 1: the rest ends the program). Its input logic
//! says when it runs: `EOR` on any input, `AND` once all have arrived.
//!
//! [`PrecedenceGraph::deterministic`] turns the stochastic graph into the paper's `G'`:
//! the expected number of executions `f_i` of every module (the Markov chain of control
//! transfers), `m'_i = m_i·f_i`, and the volume `f_i·p_ij·γ_ij` of every link (the paper's
//! `l'_ij` is the sum over both directions). [`ParallelMatrix`] is the paper's `Δ`: the
//! pairs of modules that can run in parallel.
//!
//! Where the paper is silent: the links back to a module on a depth-first path from the
//! entry modules are back links, which count for `f` and the volumes but not for
//! precedence (without them the graph is a DAG, which orders `Δ` and the schedule); `f` is
//! solved exactly, loop by loop (an `AND`-input module runs once per complete set of
//! inputs, read as the mean over its forward links); two modules can run in parallel
//! unless one reaches the other in the DAG, or they lie on different branches only of an
//! `EOR` module that dominates both. Cost: `Δ` is built in two n×n bit matrices, kept in one.
//!
//! The readings in full: `docs/algorithm-mapper.md`, "Readings where the paper is silent";
//! the `.amg` file format: `docs/formats.md`, "Algorithm Mapper graphs".

use std::collections::HashMap;

use crate::error::Error;
use crate::hetero::ttigha::HeteroProgram;

/// Input or output logic of a module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logic {
    And,
    Eor,
}

/// A link: control and data from one module to another.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    pub from: u32,
    pub to: u32,
    /// Expected ITUs carried per transfer of control, `γ`.
    pub itus: f64,
    /// Probability of passing control along the link, `p` (1 out of an `AND` module).
    pub prob: f64,
}

/// Most modules of one loop (a strongly connected set), solved by dense elimination.
pub const MAX_LOOP_MODULES: usize = 2000;

/// Most modules [`ParallelMatrix::new`] takes: it holds two n×n bit matrices (1 GiB at
/// this size; a 50,000-module graph mapped with `Δ` peaked at 612 MB).
pub const MAX_PARALLEL_MODULES: usize = 65_536;

/// A stochastic AND/EOR precedence graph.
#[derive(Clone, Debug, PartialEq)]
pub struct PrecedenceGraph {
    pub names: Vec<String>,
    /// Processing time per execution, `m_i`.
    pub time: Vec<f64>,
    /// Memory need.
    pub memory: Vec<f64>,
    pub input: Vec<Logic>,
    pub output: Vec<Logic>,
    pub links: Vec<Link>,
}

/// The deterministic graph `G'` of a [`PrecedenceGraph`].
#[derive(Clone, Debug, PartialEq)]
pub struct Deterministic {
    /// Expected executions `f_i`.
    pub visits: Vec<f64>,
    /// Total processing time `m'_i = m_i·f_i`.
    pub time: Vec<f64>,
    /// Expected ITUs over each link, `f_from·p·γ` (index as [`PrecedenceGraph::links`]).
    pub volume: Vec<f64>,
    /// Whether each link is a loop's back link (left out of the precedence DAG).
    pub back: Vec<bool>,
    /// A topological order of the DAG, declaration order where it allows.
    pub order: Vec<u32>,
}

impl Deterministic {
    /// The place of every module in [`Deterministic::order`].
    pub fn positions(&self) -> Vec<u32> {
        let mut at = vec![0u32; self.order.len()];
        for (r, &v) in self.order.iter().enumerate() {
            at[v as usize] = r as u32;
        }
        at
    }
}

/// Why [`PrecedenceGraph::deterministic`] failed: the module it concerns and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelError {
    pub module: u32,
    pub message: String,
}

/// The expected executions of the modules, solved component by component of the link
/// graph (in reverse order of Tarjan's numbering, so every inflow from outside a
/// component is known when it is solved).
struct VisitSolver<'a> {
    /// The graph.
    g: &'a PrecedenceGraph,
    /// Links into each module: `in_links[in_first[j]..in_first[j + 1]]`.
    in_first: &'a [u32],
    in_links: &'a [u32],
    /// Links out of each module: `out_links[out_first[j]..out_first[j + 1]]`.
    out_first: &'a [u32],
    out_links: &'a [u32],
    /// The strong component of each module.
    comp: &'a [u32],
    /// Whether each module is an entry (no link from another module).
    is_entry: &'a [bool],
    /// Whether each link is a loop's back link.
    back: &'a [bool],
    /// Forward links into each module.
    forward_in: &'a [f64],
    /// Expected executions of each module, 0 until its component is solved.
    visits: Vec<f64>,
}

impl VisitSolver<'_> {
    /// The share of its source's executions that link `e` passes on to its destination:
    /// its probability, split among the forward links of an AND input.
    #[inline]
    fn weight(&self, e: usize) -> f64 {
        let l = &self.g.links[e];
        let to = l.to as usize;
        match self.g.input[to] {
            Logic::And if !self.back[e] => l.prob / self.forward_in[to],
            _ => l.prob,
        }
    }

    /// The executions of module `j` of component `c` started from outside the component
    /// (already solved) and, for an entry, by the program's start.
    fn inflow(&self, j: usize, c: usize) -> f64 {
        let links = &self.g.links;
        let entry = if self.is_entry[j] { 1.0 } else { 0.0 };
        entry
            + self.in_links[self.in_first[j] as usize..self.in_first[j + 1] as usize]
                .iter()
                .filter(|&&e| self.comp[links[e as usize].from as usize] as usize != c)
                .map(|&e| self.visits[links[e as usize].from as usize] * self.weight(e as usize))
                .sum::<f64>()
    }

    /// Solves component `c` of the single module `j` (which may loop back to itself).
    fn solve_single(&mut self, j: usize, c: usize) -> Result<(), ModelError> {
        let links = &self.g.links;
        let self_w: f64 = self.out_links
            [self.out_first[j] as usize..self.out_first[j + 1] as usize]
            .iter()
            .filter(|&&e| links[e as usize].to as usize == j)
            .map(|&e| self.weight(e as usize))
            .sum();
        let inflow_j = self.inflow(j, c);
        if inflow_j == 0.0 {
            return Ok(()); // never reached: it never runs
        }
        if 1.0 - self_w <= f64::EPSILON {
            return Err(ModelError {
                module: j as u32,
                message: format!(
                    "module \"{}\" loops back to itself with probability {self_w}, so it repeats forever",
                    self.g.names[j]
                ),
            });
        }
        self.visits[j] = inflow_j / (1.0 - self_w);
        Ok(())
    }

    /// Solves component `c` of the modules `ms`, a loop: `(I − W^T) f = inflow` over the
    /// component, dense.
    fn solve_loop(&mut self, ms: &[u32], c: usize) -> Result<(), ModelError> {
        let names = &self.g.names;
        let inflows: Vec<f64> = ms.iter().map(|&m| self.inflow(m as usize, c)).collect();
        if inflows.iter().all(|&x| x == 0.0) {
            return Ok(()); // a loop control never enters: it never runs
        }
        if ms.len() > MAX_LOOP_MODULES {
            return Err(ModelError {
                module: ms[0],
                message: format!(
                    "module \"{}\" is on a loop of {} modules; loops may hold at most {MAX_LOOP_MODULES}",
                    names[ms[0] as usize],
                    ms.len()
                ),
            });
        }
        let s = ms.len();
        let pos: HashMap<u32, usize> = ms.iter().enumerate().map(|(a, &m)| (m, a)).collect();
        let mut a = vec![0.0f64; s * (s + 1)];
        for (r, &m) in ms.iter().enumerate() {
            a[r * (s + 1) + r] = 1.0;
            a[r * (s + 1) + s] = inflows[r];
            for &e in &self.in_links
                [self.in_first[m as usize] as usize..self.in_first[m as usize + 1] as usize]
            {
                if let Some(&col) = pos.get(&self.g.links[e as usize].from) {
                    a[r * (s + 1) + col] -= self.weight(e as usize);
                }
            }
        }
        match solve_dense(&mut a, s) {
            Some(f) if f.iter().all(|v| v.is_finite() && *v >= -1e-9) => {
                for (r, &m) in ms.iter().enumerate() {
                    self.visits[m as usize] = f[r].max(0.0);
                }
                Ok(())
            }
            _ => Err(ModelError {
                module: ms[0],
                message: format!(
                    "module \"{}\" is on a loop that control never leaves (its probabilities of going round add up to 1), so it repeats forever",
                    names[ms[0] as usize]
                ),
            }),
        }
    }
}

impl PrecedenceGraph {
    /// Number of modules.
    pub fn modules(&self) -> usize {
        self.names.len()
    }

    /// `G'`: expected executions, totals, volumes, back links and a topological order.
    pub fn deterministic(&self) -> Result<Deterministic, ModelError> {
        let n = self.modules();
        let (out_first, out_links) = csr(n, self.links.iter().map(|l| l.from));
        let (in_first, in_links) = csr(n, self.links.iter().map(|l| l.to));
        let comp = strong_components(n, &out_first, &out_links, &self.links);
        let ncomp = comp.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
        // Entries: no link from another module.
        let is_entry: Vec<bool> = (0..n)
            .map(|j| {
                in_links[in_first[j] as usize..in_first[j + 1] as usize]
                    .iter()
                    .all(|&e| self.links[e as usize].from as usize == j)
            })
            .collect();
        if !is_entry.iter().any(|&x| x) {
            return Err(ModelError {
                module: 0,
                message: "no entry module (every module has an incoming link from another), so nothing starts the program".into(),
            });
        }
        let back = back_links(n, &out_first, &out_links, &self.links, &is_entry);
        // AND input waits for its forward links; a back link (a loop's return) passes
        // control on its own.
        let forward_in: Vec<f64> = (0..n)
            .map(|j| {
                in_links[in_first[j] as usize..in_first[j + 1] as usize]
                    .iter()
                    .filter(|&&e| !back[e as usize])
                    .count() as f64
            })
            .collect();
        // Members of each component; components are numbered in reverse topological
        // order (Tarjan), so solve from the last.
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); ncomp];
        for (i, &c) in comp.iter().enumerate() {
            members[c as usize].push(i as u32);
        }
        let mut vs = VisitSolver {
            g: self,
            in_first: &in_first,
            in_links: &in_links,
            out_first: &out_first,
            out_links: &out_links,
            comp: &comp,
            is_entry: &is_entry,
            back: &back,
            forward_in: &forward_in,
            visits: vec![0.0f64; n],
        };
        for c in (0..ncomp).rev() {
            let ms = &members[c];
            if ms.len() == 1 {
                vs.solve_single(ms[0] as usize, c)?;
            } else {
                vs.solve_loop(ms, c)?;
            }
        }
        let visits = vs.visits;
        let time: Vec<f64> = (0..n).map(|i| self.time[i] * visits[i]).collect();
        let volume: Vec<f64> = self
            .links
            .iter()
            .map(|l| visits[l.from as usize] * l.prob * l.itus)
            .collect();
        if let Some(i) = (0..n).find(|&i| !time[i].is_finite()) {
            return Err(ModelError {
                module: i as u32,
                message: format!(
                    "module \"{}\" runs {} times on average: its total time overflows",
                    self.names[i], visits[i]
                ),
            });
        }
        let order = topological(n, &out_first, &out_links, &self.links, &back);
        Ok(Deterministic {
            visits,
            time,
            volume,
            back,
            order,
        })
    }

    /// The graph of a heterogeneous program whose tasks have one sub-task each (as read
    /// from STG and DAX files): a module per task with its time on processor type 0, an
    /// `AND` link per message with `bytes / itu_bytes` ITUs.
    ///
    /// # Panics
    ///
    /// If a task has more than one sub-task or `itu_bytes` is not positive.
    pub fn from_program(program: &HeteroProgram, itu_bytes: f64) -> Self {
        assert!(itu_bytes > 0.0, "an ITU holds some bytes");
        let n = program.tasks();
        assert_eq!(program.subtasks(), n, "one sub-task per task");
        PrecedenceGraph {
            names: program.task_names.clone(),
            time: (0..n).map(|t| program.time(t, 0)).collect(),
            memory: vec![0.0; n],
            input: vec![Logic::And; n],
            output: vec![Logic::And; n],
            links: program
                .messages
                .iter()
                .map(|m| Link {
                    from: program.subtask_task[m.from as usize],
                    to: program.subtask_task[m.to as usize],
                    itus: m.bytes as f64 / itu_bytes,
                    prob: 1.0,
                })
                .collect(),
        }
    }

    /// The graph as `.amg` text (read back equal).
    pub fn to_text(&self) -> String {
        let mut s = String::from("# Algorithm Mapper graph\n");
        let logic = |l: Logic| if l == Logic::And { "and" } else { "eor" };
        for i in 0..self.modules() {
            s.push_str(&format!(
                "MODULE {} {} mem={} in={} out={}\n",
                self.names[i],
                self.time[i],
                self.memory[i],
                logic(self.input[i]),
                logic(self.output[i])
            ));
        }
        for l in &self.links {
            s.push_str(&format!(
                "LINK {} {} {} {}\n",
                self.names[l.from as usize], self.names[l.to as usize], l.itus, l.prob
            ));
        }
        s
    }
}

/// Compressed rows: `first[v]..first[v+1]` index `items` (the positions of `keys` equal
/// to `v`, in order).
pub(crate) fn csr(n: usize, keys: impl Iterator<Item = u32> + Clone) -> (Vec<u32>, Vec<u32>) {
    let mut first = vec![0u32; n + 1];
    for k in keys.clone() {
        first[k as usize + 1] += 1;
    }
    for v in 0..n {
        first[v + 1] += first[v];
    }
    let mut fill = first.clone();
    let mut items = vec![0u32; first[n] as usize];
    for (e, k) in keys.enumerate() {
        items[fill[k as usize] as usize] = e as u32;
        fill[k as usize] += 1;
    }
    (first, items)
}

/// Tarjan's strongly connected components, iteratively; numbered in reverse topological
/// order of the condensation.
pub(crate) fn strong_components(n: usize, first: &[u32], out: &[u32], links: &[Link]) -> Vec<u32> {
    const NONE: u32 = u32::MAX;
    let (mut index, mut low, mut comp) = (vec![NONE; n], vec![0u32; n], vec![NONE; n]);
    let (mut on_stack, mut stack) = (vec![false; n], Vec::new());
    let (mut next, mut ncomp) = (0u32, 0u32);
    let mut call: Vec<(u32, u32)> = Vec::new();
    for root in 0..n as u32 {
        if index[root as usize] != NONE {
            continue;
        }
        call.push((root, first[root as usize]));
        index[root as usize] = next;
        low[root as usize] = next;
        next += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (v, ref mut e)) = call.last_mut() {
            if *e < first[v as usize + 1] {
                let w = links[out[*e as usize] as usize].to;
                *e += 1;
                if index[w as usize] == NONE {
                    index[w as usize] = next;
                    low[w as usize] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    call.push((w, first[w as usize]));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
                continue;
            }
            call.pop();
            if let Some(&(u, _)) = call.last() {
                low[u as usize] = low[u as usize].min(low[v as usize]);
            }
            if low[v as usize] == index[v as usize] {
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w as usize] = false;
                    comp[w as usize] = ncomp;
                    if w == v {
                        break;
                    }
                }
                ncomp += 1;
            }
        }
    }
    comp
}

/// The back links of a depth-first search from the entries (in index order), then from
/// any module not reached: links to a module on the search's path (self links too).
/// Without them the graph is acyclic; for a loop entered at one module (its head), the
/// back links are the links into the head from the loop, whatever the search order.
pub(crate) fn back_links(
    n: usize,
    first: &[u32],
    out: &[u32],
    links: &[Link],
    is_entry: &[bool],
) -> Vec<bool> {
    const NEW: u8 = 0;
    const OPEN: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; n];
    let mut back = vec![false; links.len()];
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let roots = (0..n)
        .filter(|&v| is_entry[v])
        .chain((0..n).filter(|&v| !is_entry[v]));
    for root in roots {
        if state[root] != NEW {
            continue;
        }
        state[root] = OPEN;
        stack.push((root as u32, first[root]));
        while let Some(&mut (v, ref mut e)) = stack.last_mut() {
            if *e == first[v as usize + 1] {
                state[v as usize] = DONE;
                stack.pop();
                continue;
            }
            let link = out[*e as usize] as usize;
            *e += 1;
            let w = links[link].to as usize;
            match state[w] {
                OPEN => back[link] = true,
                NEW => {
                    state[w] = OPEN;
                    stack.push((w as u32, first[w]));
                }
                _ => {}
            }
        }
    }
    back
}

/// Gaussian elimination with partial pivoting of the `s × (s+1)` augmented system `a`;
/// `None` if it is singular.
pub(crate) fn solve_dense(a: &mut [f64], s: usize) -> Option<Vec<f64>> {
    let w = s + 1;
    for col in 0..s {
        let piv = (col..s).max_by(|&x, &y| {
            a[x * w + col]
                .abs()
                .partial_cmp(&a[y * w + col].abs())
                .unwrap_or(std::cmp::Ordering::Equal)
        })?;
        if a[piv * w + col].abs() < 1e-12 {
            return None;
        }
        if piv != col {
            for c in 0..w {
                a.swap(piv * w + c, col * w + c);
            }
        }
        for r in 0..s {
            if r != col {
                let f = a[r * w + col] / a[col * w + col];
                if f != 0.0 {
                    for c in col..w {
                        a[r * w + c] -= f * a[col * w + c];
                    }
                }
            }
        }
    }
    Some((0..s).map(|r| a[r * w + s] / a[r * w + r]).collect())
}

/// A topological order of the links that are not back links (the smallest ready index
/// first); `first`/`out` list each module's outgoing links.
pub(crate) fn topological(
    n: usize,
    first: &[u32],
    out: &[u32],
    links: &[Link],
    back: &[bool],
) -> Vec<u32> {
    let mut indeg = vec![0u32; n];
    for (l, &b) in links.iter().zip(back) {
        if !b {
            indeg[l.to as usize] += 1;
        }
    }
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<u32>> = (0..n as u32)
        .filter(|&v| indeg[v as usize] == 0)
        .map(std::cmp::Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(std::cmp::Reverse(v)) = ready.pop() {
        order.push(v);
        for &e in &out[first[v as usize] as usize..first[v as usize + 1] as usize] {
            if !back[e as usize] {
                let to = links[e as usize].to as usize;
                indeg[to] -= 1;
                if indeg[to] == 0 {
                    ready.push(std::cmp::Reverse(to as u32));
                }
            }
        }
    }
    debug_assert_eq!(order.len(), n, "without back links the graph is acyclic");
    order
}

/// The precedence DAG of `G'` (the links that are not back links) as successor and
/// predecessor lists, a link listed once per occurrence.
#[derive(Clone, Debug, PartialEq)]
pub struct Dag {
    pub(crate) first_succ: Vec<u32>,
    pub(crate) succ: Vec<u32>,
    pub(crate) first_pred: Vec<u32>,
    pub(crate) pred: Vec<u32>,
}

impl Dag {
    /// The DAG of `g` without `det`'s back links.
    pub fn new(g: &PrecedenceGraph, det: &Deterministic) -> Self {
        let n = g.modules();
        let dag: Vec<&Link> = g
            .links
            .iter()
            .zip(&det.back)
            .filter(|(_, &b)| !b)
            .map(|(l, _)| l)
            .collect();
        let (first_succ, out) = csr(n, dag.iter().map(|l| l.from));
        let (first_pred, inn) = csr(n, dag.iter().map(|l| l.to));
        Dag {
            first_succ,
            succ: out.iter().map(|&e| dag[e as usize].to).collect(),
            first_pred,
            pred: inn.iter().map(|&e| dag[e as usize].from).collect(),
        }
    }

    /// Successors of module `v`.
    pub fn succs(&self, v: usize) -> &[u32] {
        &self.succ[self.first_succ[v] as usize..self.first_succ[v + 1] as usize]
    }

    /// Predecessors of module `v`.
    pub fn preds(&self, v: usize) -> &[u32] {
        &self.pred[self.first_pred[v] as usize..self.first_pred[v + 1] as usize]
    }
}

/// A square bit matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct BitMatrix {
    pub(crate) n: usize,
    pub(crate) words: usize,
    pub(crate) bits: Vec<u64>,
}

impl BitMatrix {
    pub(crate) fn new(n: usize) -> Self {
        Self::rect(n, n)
    }
    /// `rows` rows of `cols` bits (`len()` is the rows).
    fn rect(rows: usize, cols: usize) -> Self {
        let words = cols.div_ceil(64);
        BitMatrix {
            n: rows,
            words,
            bits: vec![0; rows * words],
        }
    }
    /// Whether bit `(i, j)` is set.
    pub fn get(&self, i: usize, j: usize) -> bool {
        self.bits[i * self.words + j / 64] >> (j % 64) & 1 == 1
    }
    fn set(&mut self, i: usize, j: usize, v: bool) {
        let w = &mut self.bits[i * self.words + j / 64];
        if v {
            *w |= 1 << (j % 64);
        } else {
            *w &= !(1 << (j % 64));
        }
    }
    /// Row `i` as words.
    pub fn row(&self, i: usize) -> &[u64] {
        &self.bits[i * self.words..(i + 1) * self.words]
    }
    fn row_mut(&mut self, i: usize) -> &mut [u64] {
        &mut self.bits[i * self.words..(i + 1) * self.words]
    }
    /// `row(dst) |= row(src)`.
    fn or_rows(&mut self, dst: usize, src: usize) {
        let w = self.words;
        let (a, b) = (dst * w, src * w);
        for k in 0..w {
            self.bits[a + k] |= self.bits[b + k];
        }
    }
    /// Side length.
    pub fn len(&self) -> usize {
        self.n
    }
    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}

/// The paper's `Δ`: `get(i, j)` when modules `i` and `j` can run in parallel.
#[derive(Clone, Debug, PartialEq)]
pub struct ParallelMatrix(pub BitMatrix);

impl ParallelMatrix {
    /// `Δ` of `g` with the back links of `det`; errors above [`MAX_PARALLEL_MODULES`].
    pub fn new(g: &PrecedenceGraph, det: &Deterministic) -> Result<Self, Error> {
        let n = g.modules();
        if n > MAX_PARALLEL_MODULES {
            return Err(Error::Config(format!(
                "the parallelism constraint (the paper's Δ) takes at most {MAX_PARALLEL_MODULES} modules; this graph has {n}"
            )));
        }
        let dag = Dag::new(g, det);
        let desc = descendants(n, &dag, det);
        let mut par = unordered_pairs(n, &desc);
        exclude_eor_branches(n, &Exclusion::new(g, det, &dag), &mut par);
        Ok(ParallelMatrix(par))
    }

    /// Whether modules `i` and `j` can run in parallel.
    pub fn parallel(&self, i: usize, j: usize) -> bool {
        self.0.get(i, j)
    }
}

/// The descendants of every module in the DAG, found in reverse topological order.
fn descendants(n: usize, dag: &Dag, det: &Deterministic) -> BitMatrix {
    let mut desc = BitMatrix::new(n);
    for &v in det.order.iter().rev() {
        let v = v as usize;
        for &s in dag.succs(v) {
            let s = s as usize;
            desc.or_rows(v, s);
            desc.set(v, s, true);
        }
    }
    desc
}

/// The pairs of distinct modules neither of which descends from the other (`desc`).
fn unordered_pairs(n: usize, desc: &BitMatrix) -> BitMatrix {
    let mut par = BitMatrix::new(n);
    for i in 0..n {
        let (d, p) = (i * desc.words, i * par.words);
        for k in 0..par.words {
            par.bits[p + k] = !desc.bits[d + k];
        }
        if !n.is_multiple_of(64) {
            par.bits[p + par.words - 1] &= (1u64 << (n % 64)) - 1;
        }
        par.set(i, i, false);
    }
    for i in 0..n {
        for k in 0..desc.words {
            let mut w = desc.bits[i * desc.words + k];
            while w != 0 {
                let j = k * 64 + w.trailing_zeros() as usize;
                w &= w - 1;
                par.set(j, i, false);
            }
        }
    }
    par
}

/// The immediate dominator of every module in the DAG, `u32::MAX` for the virtual root
/// before the entries.
fn dominator_tree(n: usize, dag: &Dag, det: &Deterministic) -> Vec<u32> {
    const ROOT: u32 = u32::MAX;
    let mut idom = vec![ROOT; n];
    let mut depth = vec![0u32; n];
    for &v in &det.order {
        let v = v as usize;
        let mut d: Option<u32> = None;
        for &u in dag.preds(v) {
            d = Some(match d {
                None => u,
                Some(x) => lca(&idom, &depth, x, u),
            });
            if d == Some(ROOT) {
                break;
            }
        }
        idom[v] = d.unwrap_or(ROOT);
        depth[v] = if idom[v] == ROOT {
            1
        } else {
            depth[idom[v] as usize] + 1
        };
    }
    idom
}

/// The `EOR` branches of a precedence DAG: which modules may never run at the same time
/// because they lie on different branches of an `EOR` module (at most one branch runs).
///
/// A branch of `EOR` module `e` starts at a successor `s` whose only DAG predecessor is
/// `e` (one link) and holds the modules `s` dominates. These are exactly the modules that
/// `e` dominates and that only one of its successors reaches: a module reached from two
/// of them has a path into `s` from a predecessor other than `e`, and a module inside
/// `e`'s reach but outside every such dominator subtree is reached from two successors.
/// Two modules exclude each other when some `EOR` module has them on different branches.
/// Cost: `O(n + links)` plus the dominator tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Exclusion {
    /// The immediate dominator of every module (`u32::MAX` for the virtual root before
    /// the entries).
    pub(crate) idom: Vec<u32>,
    /// The nearest branch start at or above every module in the dominator tree, or
    /// `u32::MAX`.
    pub(crate) head: Vec<u32>,
    /// Whether any module lies on a branch.
    any: bool,
    /// The branches of all the modules, counted (what a schedule pays to check them).
    pub(crate) memberships: u64,
}

impl Exclusion {
    /// The branches of `dag` (a topological order in `det`).
    pub fn new(g: &PrecedenceGraph, det: &Deterministic, dag: &Dag) -> Self {
        let n = g.modules();
        let forks = (0..n).any(|e| g.output[e] == Logic::Eor && dag.succs(e).len() >= 2);
        if !forks {
            // no EOR fork, no branch: the dominator tree is not needed.
            return Exclusion {
                idom: Vec::new(),
                head: vec![u32::MAX; n],
                any: false,
                memberships: 0,
            };
        }
        let idom = dominator_tree(n, dag, det);
        let mut head = vec![u32::MAX; n];
        let mut any = false;
        for &v in &det.order {
            let v = v as usize;
            let starts = match *dag.preds(v) {
                [e] => g.output[e as usize] == Logic::Eor && dag.succs(e as usize).len() >= 2,
                _ => false,
            };
            head[v] = if starts {
                any = true;
                v as u32
            } else if idom[v] == u32::MAX {
                u32::MAX
            } else {
                head[idom[v] as usize]
            };
        }
        let mut ex = Exclusion {
            idom,
            head,
            any,
            memberships: 0,
        };
        ex.memberships = (0..n).map(|v| ex.branches(v).count() as u64).sum();
        ex
    }

    /// Whether some module lies on an `EOR` branch.
    pub fn is_empty(&self) -> bool {
        !self.any
    }

    /// The branches module `v` lies on, innermost first: `(e, s)`, the branch of `EOR`
    /// module `e` that starts at `s`.
    pub fn branches(&self, v: usize) -> impl Iterator<Item = (u32, u32)> + '_ {
        let mut s = self.head[v];
        std::iter::from_fn(move || {
            if s == u32::MAX {
                return None;
            }
            let e = self.idom[s as usize];
            let item = (e, s);
            s = self.head[e as usize];
            Some(item)
        })
    }

    /// Whether modules `a` and `b` lie on different branches of one `EOR` module.
    pub fn exclusive(&self, a: usize, b: usize) -> bool {
        self.branches(a)
            .any(|(e, s)| self.branches(b).any(|(f, t)| f == e && t != s))
    }
}

/// Clears in `par` the pairs of modules on different branches of an `EOR` module
/// ([`Exclusion`]): at most one branch runs. A branch is a subtree of the dominator tree,
/// a range of its preorder, so the extra memory is `O(n)` whatever the nesting.
fn exclude_eor_branches(n: usize, ex: &Exclusion, par: &mut BitMatrix) {
    if ex.is_empty() {
        return;
    }
    let (tin, tout, preorder) = dominator_preorder(n, &ex.idom);
    let subtree = |s: u32| &preorder[tin[s as usize] as usize..tout[s as usize] as usize];
    // The branch starts of every EOR module.
    let mut by_eor: Vec<Vec<u32>> = vec![Vec::new(); n];
    for s in (0..n as u32).filter(|&v| ex.head[v as usize] == v) {
        by_eor[ex.idom[s as usize] as usize].push(s);
    }
    let mut all = vec![0u64; n.div_ceil(64)];
    let mut mine = vec![0u64; n.div_ceil(64)];
    let set = |bits: &mut [u64], vs: &[u32], on: bool| {
        for &v in vs {
            if on {
                bits[v as usize / 64] |= 1 << (v % 64);
            } else {
                bits[v as usize / 64] = 0;
            }
        }
    };
    for list in by_eor.iter().filter(|l| l.len() >= 2) {
        for &s in list {
            set(&mut all, subtree(s), true);
        }
        for &s in list {
            let branch = subtree(s);
            set(&mut mine, branch, true);
            for &v in branch {
                for (k, w) in par.row_mut(v as usize).iter_mut().enumerate() {
                    *w &= !(all[k] & !mine[k]);
                }
            }
            set(&mut mine, branch, false);
        }
        for &s in list {
            set(&mut all, subtree(s), false);
        }
    }
}

/// A preorder walk of the dominator tree `idom` (`u32::MAX`: the virtual root): every
/// module's entry and exit places in the walk, and the walk; a module's subtree is
/// `walk[entry..exit]`.
fn dominator_preorder(n: usize, idom: &[u32]) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    const ROOT: u32 = u32::MAX;
    let children: Vec<u32> = (0..n as u32)
        .filter(|&v| idom[v as usize] != ROOT)
        .collect();
    let (first, kids) = csr(n, children.iter().map(|&v| idom[v as usize]));
    let (mut tin, mut tout) = (vec![0u32; n], vec![0u32; n]);
    let mut walk = Vec::with_capacity(n);
    let mut stack: Vec<(u32, u32)> = Vec::new();
    for r in (0..n).filter(|&v| idom[v] == ROOT) {
        tin[r] = walk.len() as u32;
        walk.push(r as u32);
        stack.push((r as u32, first[r]));
        while let Some(&mut (v, ref mut c)) = stack.last_mut() {
            if *c == first[v as usize + 1] {
                tout[v as usize] = walk.len() as u32;
                stack.pop();
                continue;
            }
            let w = children[kids[*c as usize] as usize];
            *c += 1;
            tin[w as usize] = walk.len() as u32;
            walk.push(w);
            stack.push((w, first[w as usize]));
        }
    }
    (tin, tout, walk)
}

/// Lowest common ancestor in the dominator tree (`u32::MAX` is the root).
pub(crate) fn lca(idom: &[u32], depth: &[u32], mut a: u32, mut b: u32) -> u32 {
    let d = |x: u32| if x == u32::MAX { 0 } else { depth[x as usize] };
    while a != b {
        if d(a) >= d(b) {
            a = if a == u32::MAX { a } else { idom[a as usize] };
        } else {
            b = idom[b as usize];
        }
    }
    a
}
