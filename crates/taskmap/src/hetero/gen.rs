//! Random heterogeneous programs and platforms, for tests and experiments.

use crate::hetero::ttigha::*;

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

/// A random platform and program (deterministic per seed). Times are whole numbers
/// (`round(base · slowness)`), so simulated times are exact sums.
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
