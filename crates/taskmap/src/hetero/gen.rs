//! Random heterogeneous programs and platforms, for tests, experiments and `taskmap gen
//! ttig`.
//!
//! The recipe ([`random_ttigha`]): processor types `c1`, `c2`, ... with their machine
//! counts and slowness; communication type `lan` between two processors of one type,
//! `switch` between types. Task `t` (named `t<t>`) gets 1 to `max_subtasks` sub-tasks
//! (`t<t>s<i>`), each with a base time drawn from `time` and a time `round(base ·
//! slowness)` per type; then every sub-task, in declaration order, receives from each
//! earlier sub-task of another task with probability `message_probability` a message of a
//! byte count drawn from `bytes` (messages go forward, so the program never deadlocks).
//! Everything is drawn from one Xoshiro256++ generator seeded by the seed, in that order:
//! the same parameters and seed give the same model on every machine.
//!
//! Spec strings, as [`RandomTtigha::parse_spec`] reads them (`taskmap gen ttig SPEC`):
//! `TASKS[,key=value...]` with the keys `subtasks=K`, `procs=N1:N2:...` (machine counts of
//! `c1`, `c2`, ...), `slowness=F1:F2:...`, `time=LO:HI`, `prob=P`, `bytes=LO:HI`,
//! `lan=STARTUP:PER_BYTE`, `switch=STARTUP:PER_BYTE` and `seed=S`.

use crate::error::Error;
use crate::hetero::ttigha::*;

/// Most sub-tasks a generated program may have (`tasks · max_subtasks`): the generator
/// draws once per pair of sub-tasks, `O(S²)`.
pub const MAX_GEN_SUBTASKS: u64 = 50_000;

/// Most messages a generated program may expect at its largest (`message_probability · S ·
/// (S − 1) / 2` for `S = tasks · max_subtasks`): about 16 bytes each, and a line of the file.
pub const MAX_GEN_MESSAGES: f64 = 1e7;

/// Parameters of [`random_ttigha`]: a multi-cluster and a random program for it.
#[derive(Clone, Debug)]
pub struct RandomTtigha {
    /// Processor types: name, machine count, slowness (time factor against the base time).
    pub types: Vec<(String, usize, f64)>,
    /// Startup and per-byte time inside a type's cluster (`lan`) and between clusters
    /// (`switch`).
    pub lan: (f64, f64),
    pub switch: (f64, f64),
    /// Number of tasks.
    pub tasks: usize,
    /// Sub-tasks per task: 1 to this.
    pub max_subtasks: usize,
    /// Base time of a sub-task: an integer from `time.0` to `time.1`.
    pub time: (u64, u64),
    /// Each sub-task receives from each earlier sub-task of another task with this
    /// probability.
    pub message_probability: f64,
    /// Bytes of a message: an integer from `bytes.0` to `bytes.1`.
    pub bytes: (u64, u64),
}

impl Default for RandomTtigha {
    /// The paper's machines, 2 of each: cluster 1 (Pentium IV 2.4 GHz) and cluster 2
    /// (Celeron 2 GHz, 1.2 times slower), 100 Mbit/s Ethernet inside a cluster (0.08 time
    /// units per byte, startup 50) and a slower switch between them; 8 tasks.
    fn default() -> Self {
        RandomTtigha {
            types: vec![("c1".into(), 2, 1.0), ("c2".into(), 2, 1.2)],
            lan: (50.0, 0.08),
            switch: (200.0, 0.16),
            tasks: 8,
            max_subtasks: 2,
            time: (20, 200),
            message_probability: 0.15,
            bytes: (100, 2000),
        }
    }
}

impl RandomTtigha {
    /// Reads a spec `TASKS[,key=value...]` (see the module documentation) over the
    /// defaults; returns the parameters and the seed if the spec gives one. The default
    /// slowness (1 and 1.2) goes with two processor types: `procs` with another number of
    /// types needs `slowness` too.
    pub fn parse_spec(spec: &str) -> Result<(RandomTtigha, Option<u64>), Error> {
        let bad = |m: String| Error::Config(format!("ttig spec \"{spec}\": {m}"));
        let mut parts = spec.split(',');
        let head = parts.next().unwrap_or("").trim();
        let mut p = RandomTtigha {
            tasks: head
                .parse::<usize>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| {
                    bad(format!(
                        "expected a task count (a whole number from 1) first, found \"{head}\""
                    ))
                })?,
            ..RandomTtigha::default()
        };
        let (mut seed, mut procs, mut slowness) = (None, None, None);
        let mut seen: Vec<&str> = Vec::new();
        let entries = crate::registry::params::key_values(parts)
            .map_err(|kv| bad(format!("expected key=value, found \"{kv}\"")))?;
        for (k, v) in entries {
            if seen.contains(&k) {
                return Err(bad(format!("\"{k}\" is given twice")));
            }
            seen.push(k);
            let whole = |x: &str| {
                x.parse::<u64>().map_err(|_| {
                    bad(format!(
                        "\"{k}\" needs whole numbers (0 to 2^64 - 1), found \"{x}\""
                    ))
                })
            };
            let real = |x: &str| {
                x.parse::<f64>()
                    .ok()
                    .filter(|r| r.is_finite() && *r >= 0.0)
                    .ok_or_else(|| bad(format!("\"{k}\" needs finite reals >= 0, found \"{x}\"")))
            };
            let pair = || {
                v.split_once(':')
                    .ok_or_else(|| bad(format!("\"{k}\" takes two values A:B, found \"{v}\"")))
            };
            match k {
                "subtasks" => {
                    p.max_subtasks = usize::try_from(whole(v)?)
                        .map_err(|_| bad(format!("\"{k}\" is too large")))?;
                }
                "procs" => {
                    procs = Some(
                        v.split(':')
                            .map(|x| {
                                whole(x).and_then(|n| {
                                    usize::try_from(n)
                                        .map_err(|_| bad(format!("\"{k}\" is too large")))
                                })
                            })
                            .collect::<Result<Vec<usize>, Error>>()?,
                    );
                }
                "slowness" => {
                    slowness = Some(v.split(':').map(real).collect::<Result<Vec<f64>, Error>>()?);
                }
                "time" => {
                    let (a, b) = pair()?;
                    p.time = (whole(a)?, whole(b)?);
                }
                "bytes" => {
                    let (a, b) = pair()?;
                    p.bytes = (whole(a)?, whole(b)?);
                }
                "lan" | "switch" => {
                    let (a, b) = pair()?;
                    let c = (real(a)?, real(b)?);
                    if k == "lan" {
                        p.lan = c;
                    } else {
                        p.switch = c;
                    }
                }
                "prob" => p.message_probability = real(v)?,
                "seed" => seed = Some(whole(v)?),
                other => {
                    return Err(bad(format!(
                        "unknown key \"{other}\" (subtasks, procs, slowness, time, prob, bytes, lan, switch, seed)"
                    )))
                }
            }
        }
        // Two types by default, with their slowness; other counts name their own.
        let counts = procs.unwrap_or_else(|| p.types.iter().map(|t| t.1).collect());
        let factors = match slowness {
            Some(f) => f,
            None if counts.len() == p.types.len() => p.types.iter().map(|t| t.2).collect(),
            None => Vec::new(),
        };
        if factors.len() != counts.len() {
            return Err(bad(format!(
                "{} processor type(s) (procs, 2 by default) and {} slowness factor(s) (slowness, given with procs for other than 2 types): give one factor per type",
                counts.len(),
                factors.len()
            )));
        }
        p.types = counts
            .iter()
            .zip(&factors)
            .enumerate()
            .map(|(i, (&n, &f))| (format!("c{}", i + 1), n, f))
            .collect();
        Ok((p, seed))
    }

    /// Checks the parameters: at least one processor type, each with 1 or more machines
    /// and at most [`MAX_PROCESSORS`] in all, a finite slowness `>= 0`, type names the
    /// `.ttig` format can hold; finite times `>= 0` of `lan` and `switch`; at least one task
    /// and one sub-task per task, at most [`MAX_GEN_SUBTASKS`] sub-tasks and
    /// [`MAX_GEN_MESSAGES`] expected messages; ranges with low ends at most their high
    /// ends; a probability from 0 to 1.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |m: String| Err(Error::Config(m));
        if self.types.is_empty() {
            return bad("no processor types".into());
        }
        let mut total = 0usize;
        for (name, n, f) in &self.types {
            if name.is_empty()
                || name == "*"
                || name.starts_with(|c: char| c.is_ascii_digit() || c == '-')
                || name.contains(|c: char| c.is_whitespace() || c == '#')
            {
                return bad(format!("processor type name {name:?} cannot be written"));
            }
            if *n == 0 {
                return bad(format!(
                    "processor type {name} has no machines (procs: 1 or more each)"
                ));
            }
            if !(f.is_finite() && *f >= 0.0 && (self.time.1 as f64 * f).is_finite()) {
                return bad(format!(
                    "processor type {name}: slowness {f:?} (a finite real >= 0 whose product with the longest base time is finite)"
                ));
            }
            total = total.saturating_add(*n);
        }
        if total > MAX_PROCESSORS {
            return bad(format!(
                "{total} processors; the most a platform may have is {MAX_PROCESSORS}"
            ));
        }
        if self
            .types
            .iter()
            .enumerate()
            .any(|(i, t)| self.types[..i].iter().any(|u| u.0 == t.0))
        {
            return bad("two processor types have the same name".into());
        }
        for (what, (a, b)) in [("lan", self.lan), ("switch", self.switch)] {
            if !(a.is_finite() && a >= 0.0 && b.is_finite() && b >= 0.0) {
                return bad(format!("{what}: {a:?}:{b:?} (finite reals >= 0)"));
            }
        }
        if self.tasks == 0 || self.max_subtasks == 0 {
            return bad(
                "a program needs 1 task or more, each of 1 sub-task or more (subtasks >= 1)".into(),
            );
        }
        let subtasks = (self.tasks as u64).saturating_mul(self.max_subtasks as u64);
        if subtasks > MAX_GEN_SUBTASKS {
            return bad(format!(
                "{} tasks of up to {} sub-tasks: up to {subtasks} sub-tasks, more than the limit {MAX_GEN_SUBTASKS} (the generator draws once per pair of sub-tasks)",
                self.tasks, self.max_subtasks
            ));
        }
        if !(0.0..=1.0).contains(&self.message_probability) {
            return bad(format!(
                "message probability {:?} (from 0 to 1)",
                self.message_probability
            ));
        }
        let expected = self.message_probability * subtasks as f64 * (subtasks as f64 - 1.0) / 2.0;
        if expected > MAX_GEN_MESSAGES {
            return bad(format!(
                "up to {subtasks} sub-tasks with message probability {} would expect up to {expected:.0} messages, more than the limit {MAX_GEN_MESSAGES:.0}; lower prob or the size",
                self.message_probability
            ));
        }
        for (what, (a, b)) in [("time", self.time), ("bytes", self.bytes)] {
            if a > b {
                return bad(format!("{what}: {a}:{b}, the low end above the high end"));
            }
        }
        Ok(())
    }
}

/// [`random_ttigha`] after [`RandomTtigha::validate`], and an error when the model's times
/// add up beyond the largest float (its file would not read back).
pub fn try_random_ttigha(params: &RandomTtigha, seed: u64) -> Result<Ttigha, Error> {
    params.validate()?;
    let m = random_ttigha(params, seed);
    let pr = &m.program;
    let work: f64 = (0..pr.subtasks())
        .map(|s| (0..pr.types).map(|p| pr.time(s, p)).fold(0.0, f64::max))
        .sum();
    let comm: f64 = pr
        .messages
        .iter()
        .map(|x| m.platform.worst_message(x.bytes))
        .sum();
    if !(work + comm).is_finite() {
        return Err(Error::Config(TOO_LONG.into()));
    }
    Ok(m)
}

/// A random platform and program (deterministic per seed), by the recipe of the module
/// documentation. Times are whole numbers (`round(base · slowness)`), so simulated times
/// are exact sums. [`try_random_ttigha`] checks the parameters first.
///
/// # Panics
///
/// When a time `round(base · slowness)` is negative or not finite.
pub fn random_ttigha(params: &RandomTtigha, seed: u64) -> Ttigha {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let type_names: Vec<String> = params.types.iter().map(|t| t.0.clone()).collect();
    let proc_type: Vec<u32> = params
        .types
        .iter()
        .enumerate()
        .flat_map(|(i, t)| std::iter::repeat_n(i as u32, t.1))
        .collect();
    let comms = vec![
        ("lan".to_string(), params.lan.0, params.lan.1),
        ("switch".to_string(), params.switch.0, params.switch.1),
    ];
    let pt = proc_type.clone();
    let platform = Platform::new(type_names, proc_type, comms, move |s, d| {
        u32::from(pt[s] != pt[d])
    });
    let mut tasks = Vec::with_capacity(params.tasks);
    let mut owner = Vec::new();
    for t in 0..params.tasks {
        let k = rng.gen_range(1..=params.max_subtasks.max(1));
        let subs = (0..k)
            .map(|i| {
                let base = rng.gen_range(params.time.0..=params.time.1.max(params.time.0)) as f64;
                let times = params
                    .types
                    .iter()
                    .map(|ty| (base * ty.2).round())
                    .collect();
                owner.push(t);
                (format!("t{t}s{i}"), times)
            })
            .collect();
        tasks.push((format!("t{t}"), subs));
    }
    let mut messages = Vec::new();
    for to in 0..owner.len() {
        for from in 0..to {
            if owner[from] != owner[to] && rng.gen_bool(params.message_probability.clamp(0.0, 1.0))
            {
                let bytes = rng.gen_range(params.bytes.0..=params.bytes.1.max(params.bytes.0));
                messages.push(SubtaskMessage {
                    from: from as u32,
                    to: to as u32,
                    bytes,
                });
            }
        }
    }
    let program = HeteroProgram::new(params.types.len(), tasks, messages)
        .expect("messages go forward in declaration order");
    Ttigha { platform, program }
}
