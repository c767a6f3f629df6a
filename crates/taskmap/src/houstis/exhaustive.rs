//! The least `T_REAL` of a small precedence graph, by simulating every assignment (ours,
//! as `hetero --optimal` does for SIMULHa): the optimum the Algorithm Mapper's heuristics
//! are measured against.
//!
//! Processors of equal speed are interchangeable (one memory size and a delay that
//! depends on the load alone), so the search takes them in order: a module goes to a
//! processor already used, or to the first unused one of each speed. Assignments that
//! overfill a processor's memory are cut as soon as they do. The search is cut into a
//! few hundred subtrees shared among the threads; ties go to the first assignment in the
//! search's order, whatever the threads.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::houstis::alloc::Instance;
use crate::houstis::machine::{memory_cap, Machine};
use crate::houstis::mapper::{check_inputs, evaluate, module_comm, AmapResult};
use crate::houstis::precedence::{Deterministic, PrecedenceGraph};
use crate::houstis::schedule::ScheduleSim;

/// The most modules the search takes (it recurses once per module).
pub const MAX_MODULES: usize = 4096;

/// The search: the most assignments it may simulate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Exhaustive {
    /// Refuses graphs with more assignments (up to interchangeable processors) than this.
    pub limit: u64,
}

impl Default for Exhaustive {
    fn default() -> Self {
        Exhaustive { limit: 100_000_000 }
    }
}

/// The optimum: the result of the best assignment, and the assignments simulated.
#[derive(Clone, Debug, PartialEq)]
pub struct Optimum {
    pub result: AmapResult,
    pub evaluated: u64,
}

/// The processors of every speed, fastest first, each list in processor order.
fn speed_classes(machine: &Machine) -> Vec<Vec<u32>> {
    let mut order: Vec<u32> = (0..machine.processors).collect();
    order.sort_by(|&a, &b| {
        machine.speeds[b as usize]
            .total_cmp(&machine.speeds[a as usize])
            .then(a.cmp(&b))
    });
    let mut classes: Vec<Vec<u32>> = Vec::new();
    for p in order {
        match classes.last_mut() {
            Some(c) if machine.speeds[c[0] as usize] == machine.speeds[p as usize] => c.push(p),
            _ => classes.push(vec![p]),
        }
    }
    classes
}

/// How many assignments of `n` modules the search visits at most (memory aside): set
/// partitions into blocks, each block a processor of some class, the blocks of a class at
/// most its size. `Σ_J S(n, J)·J!·[x^J] Π_c Σ_{j ≤ s_c} x^j/j!`, in floating point.
fn assignments(n: usize, classes: &[Vec<u32>]) -> f64 {
    // J is at most the processors: S(n, J) for J ≤ min(n, k), in O(n·k).
    let top = n.min(classes.iter().map(Vec::len).sum());
    let mut s = vec![0.0f64; top + 1];
    s[0] = 1.0;
    for i in 1..=n {
        for j in (1..=i.min(top)).rev() {
            s[j] = j as f64 * s[j] + s[j - 1];
        }
        s[0] = 0.0;
    }
    // [x^J] of the product, times J!.
    let mut poly = vec![0.0f64; n + 1];
    poly[0] = 1.0;
    for c in classes {
        let mut next = vec![0.0f64; n + 1];
        for (a, &pa) in poly.iter().enumerate() {
            let mut f = 1.0;
            for j in 0..=c.len().min(n - a) {
                if j > 0 {
                    f /= j as f64;
                }
                next[a + j] += pa * f;
            }
        }
        poly = next;
    }
    let mut fact = 1.0;
    let mut total = 0.0;
    for j in 1..=top {
        fact *= j as f64;
        total += s[j] * fact * poly[j];
    }
    // an overflow (infinity, or infinity times 0) is beyond any limit.
    if total.is_nan() {
        f64::INFINITY
    } else {
        total
    }
}

/// One thread's search state.
struct Search<'a> {
    g: &'a PrecedenceGraph,
    det: &'a Deterministic,
    modules: &'a Instance<'a>,
    machine: &'a Machine,
    classes: &'a [Vec<u32>],
    /// The class of every processor and its place in it.
    places: &'a [(usize, usize)],
    cap: f64,
    sim: ScheduleSim,
    comm: Vec<f64>,
    dur: Vec<f64>,
    mem: Vec<f64>,
    /// The processors of each class used so far (a prefix of its list).
    used: Vec<usize>,
    assignment: Vec<u32>,
    best: (f64, Vec<u32>),
    evaluated: u64,
}

impl Search<'_> {
    /// The processors module `i` may go to: those used, then the first unused of each
    /// class.
    fn choices(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for (c, list) in self.classes.iter().enumerate() {
            out.extend_from_slice(&list[..self.used[c]]);
        }
        for (c, list) in self.classes.iter().enumerate() {
            if let Some(&p) = list.get(self.used[c]) {
                out.push(p);
            }
        }
        out
    }

    /// The class of processor `p` and its place in it.
    fn place(&self, p: u32) -> (usize, usize) {
        self.places[p as usize]
    }

    /// Simulates the full assignment and keeps it when it is the best so far.
    fn score(&mut self) {
        module_comm(self.modules, self.machine, &self.assignment, &mut self.comm);
        for i in 0..self.assignment.len() {
            let p = self.assignment[i] as usize;
            self.dur[i] = self.det.time[i] / self.machine.speeds[p] + self.comm[i];
        }
        let (t, _) = self.sim.run(&self.assignment, &self.dur);
        self.evaluated += 1;
        if t < self.best.0 {
            self.best = (t, self.assignment.clone());
        }
    }

    /// Every assignment of modules `i..` after the current ones.
    fn search(&mut self, i: usize) {
        if i == self.assignment.len() {
            self.score();
            return;
        }
        for p in self.choices() {
            let need = self.g.memory[i];
            if self.mem[p as usize] + need > self.cap {
                continue;
            }
            let (c, at) = self.place(p);
            let before = self.used[c];
            self.used[c] = before.max(at + 1);
            self.mem[p as usize] += need;
            self.assignment[i] = p;
            self.search(i + 1);
            self.mem[p as usize] -= need;
            self.used[c] = before;
        }
    }
}

impl Exhaustive {
    /// The assignment of least `T_REAL` of `g` on `machine`, on `pool`'s threads when given.
    /// Errors when there are more than `self.limit` assignments to simulate, or when no
    /// assignment fits the memory.
    pub fn run(
        &self,
        g: &PrecedenceGraph,
        det: &Deterministic,
        machine: &Machine,
        pool: Option<&rayon::ThreadPool>,
    ) -> Result<Optimum, Error> {
        check_inputs(g, det, machine, &Default::default())?;
        let n = g.modules();
        if n > MAX_MODULES {
            return Err(Error::Config(format!(
                "the exhaustive search takes at most {MAX_MODULES} modules, not {n}"
            )));
        }
        let classes = speed_classes(machine);
        let count = assignments(n, &classes);
        if count.is_nan() || count > self.limit as f64 {
            return Err(Error::Config(format!(
                "the exhaustive search would simulate about {count:.3e} assignments ({n} modules, {} processors), more than the limit {}",
                machine.processors, self.limit
            )));
        }
        let modules = Instance::of_modules(g, det, None);
        let k = machine.processors as usize;
        let mut places = vec![(0, 0); k];
        for (c, list) in classes.iter().enumerate() {
            for (i, &p) in list.iter().enumerate() {
                places[p as usize] = (c, i);
            }
        }
        let fresh = || Search {
            g,
            det,
            modules: &modules,
            machine,
            classes: &classes,
            places: &places,
            cap: memory_cap(machine.memory),
            sim: ScheduleSim::new(g, det, k),
            comm: vec![0.0; n],
            dur: vec![0.0; n],
            mem: vec![0.0; k],
            used: vec![0; classes.len()],
            assignment: vec![0; n],
            best: (f64::INFINITY, Vec::new()),
            evaluated: 0,
        };
        // Prefixes of the first modules, enough to share among the threads.
        let mut prefixes: Vec<Vec<u32>> = vec![Vec::new()];
        let mut s = fresh();
        while prefixes.len() < 256 && prefixes[0].len() < n {
            let mut next = Vec::new();
            for prefix in &prefixes {
                s.load(prefix);
                let i = prefix.len();
                for p in s.choices() {
                    if s.mem[p as usize] + g.memory[i] <= s.cap {
                        let mut longer = prefix.clone();
                        longer.push(p);
                        next.push(longer);
                    }
                }
            }
            prefixes = next;
            if prefixes.is_empty() {
                break;
            }
        }
        let work = |search: &mut Search, prefix: &Vec<u32>| {
            search.load(prefix);
            search.best = (f64::INFINITY, Vec::new());
            search.evaluated = 0;
            search.search(prefix.len());
            (search.best.clone(), search.evaluated)
        };
        let found: Vec<((f64, Vec<u32>), u64)> = match pool {
            Some(pool) => pool.install(|| prefixes.par_iter().map_init(fresh, work).collect()),
            None => {
                let mut s = fresh();
                prefixes.iter().map(|p| work(&mut s, p)).collect()
            }
        };
        let evaluated = found.iter().map(|f| f.1).sum();
        // the first least, in the search's order.
        let best = found
            .into_iter()
            .map(|f| f.0)
            .filter(|b| !b.1.is_empty())
            .reduce(|a, b| if b.0 < a.0 { b } else { a })
            .ok_or_else(|| Error::Mismatch("no assignment fits the processors' memory".into()))?;
        let result = evaluate(g, det, &modules, machine, best.1)?;
        Ok(Optimum { result, evaluated })
    }
}

impl Search<'_> {
    /// Sets the first modules to `prefix`, with the memory and classes they use.
    fn load(&mut self, prefix: &[u32]) {
        self.mem.iter_mut().for_each(|m| *m = 0.0);
        self.used.iter_mut().for_each(|u| *u = 0);
        for (i, &p) in prefix.iter().enumerate() {
            let (c, at) = self.place(p);
            self.used[c] = self.used[c].max(at + 1);
            self.mem[p as usize] += self.g.memory[i];
            self.assignment[i] = p;
        }
    }
}
