//! The TTIGHa model, SIMULHa, MATEHa and the exhaustive search (De Giusti et al.).

use std::path::Path;

use taskmap::hetero::gen::{random_ttigha, RandomTtigha};
use taskmap::hetero::io::ttig::parse_ttigha;
use taskmap::hetero::mateha::{
    exhaustive, exhaustive_count, levels, mateha, mateha_with, TtigGraph,
};
use taskmap::hetero::simulha::{Schedule, Simulator};
use taskmap::hetero::ttigha::{HeteroProgram, Platform, SubtaskMessage, TaskSpec, Ttigha};

const SMALL: &str = "\
PROCTYPE fast 1
PROCTYPE slow 1
COMM net 10 0.5
LINK * * net
TASK A
  SUBTASK a1 4 8
  SUBTASK a2 2 4
TASK B
  SUBTASK b1 6 12
SEND a1 b1 20
";

fn small() -> Ttigha {
    parse_ttigha(SMALL, Path::new("small.ttig")).unwrap()
}

#[test]
fn small_model_by_hand() {
    let m = small();
    let mut sim = Simulator::new(&m);
    // a1 0-4 on fast; the message arrives at 4 + 10 + 20 * 0.5 = 24; b1 runs 24-36 on slow.
    assert_eq!(sim.makespan(&[0, 1]), 36.0);
    // All on fast: a1 0-4, then a2 (first in priority) 4-6, b1 6-12.
    let s = sim.schedule(&[0, 0], None).unwrap();
    assert_eq!(
        (s.start.clone(), s.finish.clone()),
        (vec![0.0, 4.0, 6.0], vec![4.0, 6.0, 12.0])
    );
    assert_eq!(s.order, vec![vec![0, 1, 2], vec![]]);
    assert_eq!(sim.makespan(&[1, 0]), 34.0);
    assert_eq!(sim.makespan(&[1, 1]), 24.0);
    // A given order is followed strictly: b1 before a2 on the fast processor.
    let s = sim
        .schedule(&[0, 0], Some(&[vec![0, 2, 1], vec![]]))
        .unwrap();
    assert_eq!(s.finish, vec![4.0, 12.0, 10.0]);
    // An order that waits for a sub-task queued behind it never finishes.
    let e = sim
        .schedule(&[0, 0], Some(&[vec![2, 0, 1], vec![]]))
        .unwrap_err();
    assert!(e.to_string().contains("never finishes"), "{e}");

    // TTIGHa: w, and TP of A on fast with B on slow: A runs [0,4] [4,6], B [4,16]: 2.
    let g = TtigGraph::new(&m.program);
    assert_eq!(
        (g.time(0, 0), g.time(0, 1), g.time(1, 1)),
        (6.0, 12.0, 12.0)
    );
    assert_eq!(g.concurrency(0, 0, 1, 1), 2.0 / 12.0);
    // MATEHa: A (level 0) to fast (6 against 12); then B: fast 6 + 6, slow 12 + 6·(1 − 1/6)
    // + 20 = 37; so fast.
    let r = mateha(&m);
    assert_eq!(r.level, vec![0, 1]);
    assert_eq!(r.alloc, vec![0, 0]);
    let o = exhaustive(&m, 1000).unwrap();
    assert_eq!(
        (o.makespan, o.alloc.clone(), o.evaluated),
        (12.0, vec![0, 0], 4)
    );
}

/// Checks that `s` is the schedule SIMULHa's default order gives: every sub-task starts
/// after its inputs, runs its time, processors run one sub-task at a time, never idle while
/// one of theirs is ready, and start the ready one first in priority.
fn check_list_schedule(m: &Ttigha, alloc: &[u32], s: &Schedule) {
    let (pr, pl) = (&m.program, &m.platform);
    let n = pr.subtasks();
    let ready: Vec<f64> = (0..n)
        .map(|x| {
            let mut r = pr.previous(x).map_or(0.0, |p| s.finish[p]);
            for msg in pr.incoming(x) {
                let (a, b) = (s.processor[msg.from as usize], s.processor[x]);
                r = r.max(
                    s.finish[msg.from as usize]
                        + pl.comm_time(a as usize, b as usize, 1, msg.bytes),
                );
            }
            r
        })
        .collect();
    for x in 0..n {
        let p = alloc[pr.subtask_task[x] as usize];
        assert_eq!(s.processor[x], p);
        assert!(
            s.start[x] >= ready[x] - 1e-9,
            "sub-task {x} starts before its inputs"
        );
        let t = pr.time(x, pl.proc_type[p as usize] as usize);
        assert!((s.finish[x] - s.start[x] - t).abs() < 1e-9);
    }
    for (p, order) in s.order.iter().enumerate() {
        let mut sorted = order.clone();
        sorted.sort_by(|&a, &b| s.start[a as usize].total_cmp(&s.start[b as usize]));
        assert_eq!(&sorted, order, "order is by start time");
        for w in order.windows(2) {
            assert!(
                s.start[w[1] as usize] >= s.finish[w[0] as usize] - 1e-9,
                "overlap on {p}"
            );
        }
        for &x in order {
            let x = x as usize;
            // Busy throughout [ready, start): every moment is covered by another sub-task
            // of p, each of which had priority or started before x was ready.
            let mut t = ready[x];
            for &y in order {
                let y = y as usize;
                if y != x && s.start[y] <= t + 1e-9 && s.finish[y] > t && s.start[y] < s.start[x] {
                    assert!(
                        s.start[y] < ready[x] - 1e-9 || pr.rank[y] < pr.rank[x],
                        "sub-task {y} started over the higher-priority {x}"
                    );
                    t = s.finish[y];
                }
            }
            assert!(
                t >= s.start[x] - 1e-9,
                "processor {p} idles while {x} is ready"
            );
        }
    }
    let ms = s.finish.iter().copied().fold(0.0, f64::max);
    assert_eq!(s.makespan, ms);
}

fn params(tasks: usize, c1: usize, c2: usize) -> RandomTtigha {
    let mut p = RandomTtigha {
        tasks,
        max_subtasks: 3,
        message_probability: 0.2,
        ..RandomTtigha::default()
    };
    p.types[0].1 = c1;
    p.types[1].1 = c2;
    p.types.retain(|t| t.1 > 0);
    p
}

#[test]
fn simulation_is_a_list_schedule_and_replays() {
    for seed in 0..40u64 {
        let m = random_ttigha(&params(9, 2, 3), seed);
        let mut sim = Simulator::new(&m);
        let k = m.platform.processors() as u64;
        let alloc: Vec<u32> = (0..m.program.tasks() as u64)
            .map(|t| ((t * 7 + seed) % k) as u32)
            .collect();
        let s = sim.schedule(&alloc, None).unwrap();
        check_list_schedule(&m, &alloc, &s);
        assert_eq!(sim.makespan(&alloc), s.makespan);
        // Replaying the order it used, strictly, gives the same times.
        let again = sim.schedule(&alloc, Some(&s.order)).unwrap();
        assert_eq!(again, s);
        for p in 0..m.platform.processors() {
            assert!((s.busy(p) + s.waiting(p) - s.end(p)).abs() < 1e-9);
        }
    }
}

#[test]
fn file_text_round_trips() {
    for seed in 0..10 {
        let m = random_ttigha(&params(12, 3, 2), seed);
        let text = m.to_text();
        let back = parse_ttigha(&text, Path::new("x.ttig")).unwrap();
        assert_eq!(back, m, "seed {seed}");
    }
}

/// Every allocation, without symmetry breaking.
fn brute_force(m: &Ttigha) -> (f64, u64) {
    let (nt, k) = (m.program.tasks(), m.platform.processors() as u32);
    let mut sim = Simulator::new(m);
    let mut alloc = vec![0u32; nt];
    let (mut best, mut count) = (f64::INFINITY, 0u64);
    loop {
        best = best.min(sim.makespan(&alloc));
        count += 1;
        let mut i = 0;
        while i < nt && alloc[i] + 1 == k {
            alloc[i] = 0;
            i += 1;
        }
        if i == nt {
            return (best, count);
        }
        alloc[i] += 1;
    }
}

#[test]
fn exhaustive_search_matches_brute_force() {
    for (c1, c2) in [(4, 0), (2, 2), (1, 3), (3, 1)] {
        for seed in 0..6 {
            let m = random_ttigha(&params(6, c1, c2), seed);
            let (best, all) = brute_force(&m);
            let o = exhaustive(&m, 1 << 20).unwrap();
            assert_eq!(o.makespan, best, "conf {c1}+{c2} seed {seed}");
            assert_eq!(Simulator::new(&m).makespan(&o.alloc), o.makespan);
            assert_eq!(o.evaluated, exhaustive_count(&m));
            assert!(o.evaluated < all);
            // Symmetry: 4 identical processors give the set partitions into <= 4 blocks.
            if c1 == 4 {
                assert_eq!(o.evaluated, 1 + 31 + 90 + 65);
            }
        }
    }
    let m = random_ttigha(&params(12, 2, 2), 1);
    let e = exhaustive(&m, 1000).unwrap_err().to_string();
    assert!(e.contains("more than the limit 1000"), "{e}");
}

/// MATEHa recomputing every cost from the formulas at each step.
fn naive_mateha(m: &Ttigha) -> Vec<u32> {
    let (pr, pl) = (&m.program, &m.platform);
    let g = TtigGraph::new(pr);
    let lv = levels(pr);
    let (nt, mp) = (pr.tasks(), pl.processors());
    let mut alloc = vec![u32::MAX; nt];
    let mut t_acum = vec![0.0; mp];
    let maxl = *lv.iter().max().unwrap();
    let bytes = |a: usize, b: usize| {
        let mut c = (0u64, 0u64);
        for msg in &pr.messages {
            if pr.subtask_task[msg.from as usize] as usize == a
                && pr.subtask_task[msg.to as usize] as usize == b
            {
                c.0 += 1;
                c.1 += msg.bytes;
            }
        }
        c
    };
    for l in 0..=maxl {
        loop {
            let mut best: Option<(f64, usize, usize)> = None;
            for t in (0..nt).filter(|&t| lv[t] == l && alloc[t] == u32::MAX) {
                let cost: Vec<f64> = (0..mp)
                    .map(|mm| {
                        let tm = pl.proc_type[mm] as usize;
                        let mut c = g.time(t, tm) + t_acum[mm];
                        for j in 0..nt {
                            let q = alloc[j];
                            if q == u32::MAX || q as usize == mm || j == t {
                                continue;
                            }
                            let (jt, tj) = (bytes(j, t), bytes(t, j));
                            if jt.0 + tj.0 == 0 {
                                continue;
                            }
                            let q = q as usize;
                            let tq = pl.proc_type[q] as usize;
                            c += g.time(j, tq) * (1.0 - g.concurrency(j, tq, t, tm))
                                + pl.comm_time(q, mm, jt.0, jt.1)
                                + pl.comm_time(mm, q, tj.0, tj.1);
                        }
                        c
                    })
                    .collect();
                let (mut lo, mut arg) = (f64::INFINITY, 0);
                for (i, &c) in cost.iter().enumerate() {
                    if c < lo {
                        (lo, arg) = (c, i);
                    }
                }
                let gain = cost.iter().copied().fold(f64::NEG_INFINITY, f64::max) - lo;
                if best.is_none_or(|b| gain > b.0) {
                    best = Some((gain, t, arg));
                }
            }
            let Some((_, t, p)) = best else { break };
            alloc[t] = p as u32;
            t_acum[p] += g.time(t, pl.proc_type[p] as usize);
        }
    }
    alloc
}

#[test]
fn mateha_matches_the_formulas() {
    for seed in 0..40 {
        // From seed 30 on, equal times and few messages: many tasks share a cost row
        // (the groups MATEHa scans once per step).
        let mut p = params(14, 3, 3);
        if seed >= 30 {
            p.tasks = 24;
            p.time = (50, 50);
            p.max_subtasks = 1;
            p.message_probability = 0.1;
        }
        let m = random_ttigha(&p, seed);
        let r = mateha(&m);
        assert_eq!(r.alloc, naive_mateha(&m), "seed {seed}");
        assert_eq!(r, mateha_with(&m, &TtigGraph::new(&m.program)));
        // Levels: initial tasks are 0, others one more than their lowest-level sender.
        let pr = &m.program;
        for t in 0..pr.tasks() {
            let senders: Vec<u32> = pr
                .subtasks_of(t)
                .flat_map(|s| {
                    pr.incoming(s)
                        .map(|msg| r.level[pr.subtask_task[msg.from as usize] as usize])
                })
                .collect();
            let first_receives = pr.incoming(pr.task_first[t] as usize).next().is_some();
            if first_receives {
                assert_eq!(r.level[t], senders.iter().min().unwrap() + 1, "task {t}");
            } else {
                assert_eq!(r.level[t], 0);
            }
        }
        // The allocation order goes level by level.
        assert!(r
            .sequence
            .windows(2)
            .all(|w| r.level[w[0] as usize] <= r.level[w[1] as usize]));
    }
}

#[test]
fn concurrency_equals_an_isolated_simulation() {
    for seed in 0..20 {
        let m = random_ttigha(&params(8, 1, 1), seed);
        let pr = &m.program;
        let g = TtigGraph::new(pr);
        for t in 0..pr.tasks() {
            for e in g.adj_first[t] as usize..g.adj_first[t + 1] as usize {
                let j = g.adj[e] as usize;
                // The two tasks alone, their messages free, t on type a, j on type b.
                let keep =
                    |x: usize| pr.subtask_task[x] as usize == t || pr.subtask_task[x] as usize == j;
                let (lo, hi) = (t.min(j), t.max(j));
                let sub = |x: usize| (pr.task_names[pr.subtask_task[x] as usize].clone(), x);
                let tasks: Vec<TaskSpec> = [lo, hi]
                    .iter()
                    .map(|&u| {
                        (
                            pr.task_names[u].clone(),
                            pr.subtasks_of(u)
                                .map(|x| {
                                    (
                                        pr.subtask_names[x].clone(),
                                        (0..2).map(|p| pr.time(x, p)).collect(),
                                    )
                                })
                                .collect(),
                        )
                    })
                    .collect();
                let base = |x: usize| {
                    let (_, x) = sub(x);
                    let u = pr.subtask_task[x] as usize;
                    let off = if u == lo { 0 } else { pr.subtasks_of(lo).len() };
                    (off + x - pr.task_first[u] as usize) as u32
                };
                let msgs: Vec<SubtaskMessage> = pr
                    .messages
                    .iter()
                    .filter(|msg| keep(msg.from as usize) && keep(msg.to as usize))
                    .map(|msg| SubtaskMessage {
                        from: base(msg.from as usize),
                        to: base(msg.to as usize),
                        bytes: msg.bytes,
                    })
                    .collect();
                let prog = HeteroProgram::new(2, tasks, msgs).unwrap();
                let plat = Platform::new(
                    vec!["c1".into(), "c2".into()],
                    vec![0, 0, 1, 1],
                    vec![("free".into(), 0.0, 0.0)],
                    |_, _| 0,
                );
                for a in 0..2 {
                    for b in 0..2 {
                        // t on processor 2a (type a), j on processor 2b + 1 (type b).
                        let (pt, pj) = (2 * a as u32, 2 * b as u32 + 1);
                        let alloc = if t == lo { vec![pt, pj] } else { vec![pj, pt] };
                        let s = Simulator::with(&prog, &plat)
                            .schedule(&alloc, None)
                            .unwrap();
                        let iv = |p: u32| -> Vec<(f64, f64)> {
                            s.order[p as usize]
                                .iter()
                                .map(|&x| (s.start[x as usize], s.finish[x as usize]))
                                .collect()
                        };
                        let (x, y) = (iv(pt), iv(pj));
                        let overlap: f64 = x
                            .iter()
                            .flat_map(|&(a0, a1)| {
                                y.iter()
                                    .map(move |&(b0, b1)| (a1.min(b1) - a0.max(b0)).max(0.0))
                            })
                            .sum();
                        let want = if g.time(j, b) > 0.0 {
                            overlap / g.time(j, b)
                        } else {
                            0.0
                        };
                        assert!(
                            (g.concurrency(t, a, j, b) - want).abs() < 1e-12,
                            "seed {seed} tasks {t} {j} types {a} {b}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn same_seed_same_model_and_allocation() {
    let p = params(30, 4, 4);
    let (a, b) = (random_ttigha(&p, 7), random_ttigha(&p, 7));
    assert_eq!(a, b);
    assert_eq!(mateha(&a), mateha(&b));
    assert_ne!(random_ttigha(&p, 8), a);
}

/// Malformed files in `fixtures/bad`, one defect each, and the error each gives.
const BAD_MODELS: &[(&str, &str)] = &[
    ("ttigha_byte_count.ttig", "9:12: expected a byte count (an integer in 0..2^64), found \"1.5\""),
    ("ttigha_cr_only.ttig", "1:16: a carriage return not followed by a line feed"),
    ("ttigha_cycle.ttig", "12:6: this message lies on a cycle of dependencies (b2 -> a1 and back): the program would deadlock"),
    ("ttigha_cycle_downstream.ttig", "12:6: this message lies on a cycle of dependencies (y1 -> x1 and back): the program would deadlock"),
    ("ttigha_times_overflow.ttig", "6:14: the times add up beyond the largest float (about 1.8e308), so the final time could not be computed"),
    ("ttigha_duplicate_subtask.ttig", "8:11: sub-task \"a1\" is declared twice (first at line 6)"),
    ("ttigha_duplicate_task.ttig", "7:6: task \"A\" is declared twice (first at line 5)"),
    ("ttigha_empty_task.ttig", "5:1: task \"A\" has no SUBTASK"),
    ("ttigha_extra_value.ttig", "1:17: unexpected \"2\": PROCTYPE takes 2 value(s)"),
    ("ttigha_link_processor_range.ttig", "3:8: expected \"*\", a processor type, a processor or a range i-j of processors 0-1, found \"2\""),
    ("ttigha_name_digit.ttig", "1:10: a processor type name must not be \"*\" or start with a digit or '-', found \"4fast\""),
    ("ttigha_nan_per_byte.ttig", "2:13: expected a time per byte (a finite real >= 0), found \"nan\""),
    ("ttigha_negative_time.ttig", "6:16: expected a time (a finite real >= 0), found \"-4\""),
    ("ttigha_no_link.ttig", "6:1: no LINK gives the communication type between processors 1 (slow) and 2 (slow)"),
    ("ttigha_no_task.ttig", "4:1: no TASK: the program is empty"),
    ("ttigha_proctype_after_subtask.ttig", "7:1: PROCTYPE after the first SUBTASK (sub-tasks give one time per type, so the types come first)"),
    ("ttigha_send_within_task.ttig", "8:9: \"a1\" and \"a2\" both belong to task \"A\"; a task's sub-tasks already run in order"),
    ("ttigha_subtask_outside_task.ttig", "5:1: SUBTASK outside a TASK"),
    ("ttigha_subtask_times.ttig", "6:15: missing value: SUBTASK takes a name and one time per processor type (2 type(s) declared)"),
    ("ttigha_unknown_comm.ttig", "3:10: unknown communication type \"wan\" (declare it with COMM)"),
    ("ttigha_unknown_keyword.ttig", "6:3: unknown keyword \"SUBTSK\" (expected PROCTYPE, COMM, LINK, TASK, SUBTASK or SEND)"),
    ("ttigha_unknown_subtask.ttig", "9:9: unknown sub-task \"c1\""),
    ("ttigha_zero_machines.ttig", "1:15: expected a machine count from 1 to 4096 (at most 4096 processors in all), found \"0\""),
];

const BAD_STG: &[(&str, &str)] = &[
    (
        "stg_truncated_file.stg",
        "1:1: the count line announces 5 tasks but the file has 3 records (5 or 7 expected: truncated?)",
    ),
    (
        "stg_time_overflow.stg",
        "4:1: the times add up beyond the largest float (about 1.8e308), so the final time could not be computed",
    ),
    (
        "stg_exit_on_cycle.stg",
        "3:7: task 1 and its predecessor 3 lie on a cycle of precedences",
    ),
    (
        "stg_bad_time.stg",
        "3:3: expected the time of task 1 (a finite real >= 0), found \"x5\"",
    ),
    (
        "stg_cycle.stg",
        "3:9: task 1 and its predecessor 2 lie on a cycle of precedences",
    ),
    ("stg_empty.stg", "1:1: empty file: expected the task count"),
    (
        "stg_id_order.stg",
        "3:1: expected task id 1 (ids run 0, 1, ... in order), found 2",
    ),
    ("stg_no_records.stg", "2:1: no task records"),
    (
        "stg_predecessor_range.stg",
        "3:7: predecessor 7 is not a task (the ids run 0-2)",
    ),
    (
        "stg_self_predecessor.stg",
        "3:7: task 1 lists itself as a predecessor",
    ),
    (
        "stg_truncated_record.stg",
        "3:1: the record of task 1 ends early: expected another predecessor",
    ),
];

fn fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(rel)
}

#[test]
fn malformed_files_name_the_place_and_the_defect() {
    use taskmap::hetero::io::stg::read_stg_program;
    use taskmap::hetero::io::ttig::{read_platform, read_ttigha};
    for (file, want) in BAD_MODELS {
        let path = fixture(&format!("bad/{file}"));
        let e = read_ttigha(&path).unwrap_err().to_string();
        assert_eq!(e, format!("{}:{want}", path.display()), "{file}");
    }
    let platform = read_platform(&fixture("hetero/two_clusters.platform")).unwrap();
    assert_eq!((platform.processors(), platform.types()), (30, 2));
    for (file, want) in BAD_STG {
        let path = fixture(&format!("bad/{file}"));
        let e = read_stg_program(&path, platform.clone(), &[1.2, 1.0], 10)
            .unwrap_err()
            .to_string();
        assert_eq!(e, format!("{}:{want}", path.display()), "{file}");
    }
    let path = fixture("bad/platform_with_task.platform");
    let e = read_platform(&path).unwrap_err().to_string();
    assert!(
        e.ends_with(":5:1: TASK in a platform file (it holds PROCTYPE, COMM and LINK lines only)"),
        "{e}"
    );
    let e = read_stg_program(&fixture("hetero/rand0000.stg"), platform, &[1.0], 10)
        .unwrap_err()
        .to_string();
    assert!(e.contains("give one slowness"), "{e}");
    // A platform whose messages overflow the times: the error names the platform's
    // communication, at the STG's count line.
    let huge = taskmap::hetero::io::ttig::parse_platform(
        "PROCTYPE a 2\nCOMM wan 1e308 1e-7\nLINK * * wan\n",
        Path::new("huge.platform"),
    )
    .unwrap();
    let path = fixture("hetero/rand0000.stg");
    let e = read_stg_program(&path, huge, &[1.0], 10)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("{}:1:", path.display()))
            && e.contains("each at the platform's slowest communication (a COMM line's"),
        "{e}"
    );
}

/// The count of non-dummy arcs in an STG file's trailer (`#   Edges : 96 / 1225 (+dummy ...`).
fn trailer_edges(text: &str) -> Option<usize> {
    let line = text
        .lines()
        .find(|l| l.starts_with('#') && l.contains("Edges"))?;
    line.split(':')
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[test]
fn stg_programs_keep_every_task_and_arc() {
    use taskmap::hetero::io::stg::parse_stg_program;
    use taskmap::hetero::io::ttig::read_platform;
    let platform = read_platform(&fixture("hetero/two_clusters.platform")).unwrap();
    let mut files = vec![fixture("hetero/rand0000.stg")];
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/stg");
    if shared.is_dir() {
        for dir in ["rnc50", "rnc100", "app"] {
            let mut v: Vec<_> = std::fs::read_dir(shared.join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            v.sort();
            files.extend(v);
        }
    } else {
        eprintln!(
            "skipping the shared STG files: {} is absent",
            shared.display()
        );
    }
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let m = parse_stg_program(&text, f, platform.clone(), &[1.0, 1.5], 64).unwrap();
        // Records after the count line and before the trailer; the first and the last
        // are the dummies.
        let recs: Vec<Vec<f64>> = text
            .lines()
            .skip(1)
            .take_while(|l| !l.trim_start().starts_with('#'))
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
            .collect();
        let pr = &m.program;
        assert_eq!(pr.tasks(), recs.len() - 2, "{}", f.display());
        for t in 0..pr.tasks() {
            assert_eq!(pr.time(t, 0), recs[t + 1][1]);
            assert_eq!(pr.time(t, 1), recs[t + 1][1] * 1.5);
        }
        let arcs: usize = recs[1..recs.len() - 1]
            .iter()
            .map(|r| r[3..].iter().filter(|&&p| p != 0.0).count())
            .sum();
        assert_eq!(pr.messages.len(), arcs, "{}", f.display());
        if let Some(e) = trailer_edges(&text) {
            assert_eq!(pr.messages.len(), e, "{}", f.display());
            checked += 1;
        }
        assert!(pr
            .messages
            .iter()
            .all(|msg| msg.bytes == 64 && msg.from < msg.to));
    }
    assert!(checked >= 1);
}

#[test]
fn local_search_never_worsens_and_repeats_per_seed() {
    use taskmap::hetero::mateha::{iterated_local_search, local_search, SearchParams};
    let limits = |kicks, seed| SearchParams {
        kicks,
        seed,
        ..SearchParams::default()
    };
    for seed in 0..20 {
        let m = random_ttigha(&params(12, 2, 3), seed);
        let start = mateha(&m).alloc;
        let mut sim = Simulator::new(&m);
        let before = sim.makespan(&start);
        let mut a = start.clone();
        let v = local_search(&m, &mut a, &limits(0, 0));
        assert_eq!(v, sim.makespan(&a));
        assert!(v <= before, "seed {seed}: {v} > {before}");
        let mut b = start.clone();
        let w = iterated_local_search(&m, &mut b, &limits(50, seed));
        assert_eq!(w, sim.makespan(&b));
        assert!(w <= v, "seed {seed}: kicks made it worse");
        let mut c = start.clone();
        assert_eq!(iterated_local_search(&m, &mut c, &limits(50, seed)), w);
        assert_eq!(b, c);
    }
}

#[test]
fn exhaustive_keeps_the_lexicographically_first_optimum() {
    for seed in 0..8 {
        let m = random_ttigha(&params(6, 2, 2), seed);
        let (nt, k) = (m.program.tasks(), m.platform.processors() as u32);
        let mut sim = Simulator::new(&m);
        // Brute force, keeping the least (time, allocation).
        let mut best: Option<(f64, Vec<u32>)> = None;
        let total = (k as usize).pow(nt as u32);
        for code in 0..total {
            let mut c = code;
            let alloc: Vec<u32> = (0..nt)
                .map(|_| {
                    let p = (c % k as usize) as u32;
                    c /= k as usize;
                    p
                })
                .rev()
                .collect();
            let ms = sim.makespan(&alloc);
            if best
                .as_ref()
                .is_none_or(|(b, a)| ms < *b || (ms == *b && alloc < *a))
            {
                best = Some((ms, alloc));
            }
        }
        let (ms, alloc) = best.unwrap();
        let o = exhaustive(&m, 1 << 20).unwrap();
        assert_eq!((o.makespan, o.alloc), (ms, alloc), "seed {seed}");
    }
}

#[test]
fn huge_times_give_an_answer_and_a_finite_picture() {
    use taskmap::hetero::simulha::schedule_svg;
    // Two chained sub-tasks of 1e308 each: the final time is infinite, yet the search
    // returns an allocation and the picture is drawn.
    let platform = Platform::new(
        vec!["a".into()],
        vec![0, 0],
        vec![("n".into(), 1.0, 0.0)],
        |_, _| 0,
    );
    for (t0, t1) in [
        (1e308, 1e308),
        (5e-324, 5e-324),
        (0.0, 0.0),
        (f64::MAX, 0.0),
    ] {
        let prog = HeteroProgram::new(
            1,
            vec![(
                "A".into(),
                vec![("a1".into(), vec![t0]), ("a2".into(), vec![t1])],
            )],
            vec![],
        )
        .unwrap();
        let m = Ttigha {
            platform: platform.clone(),
            program: prog,
        };
        let o = exhaustive(&m, 10).unwrap();
        assert_eq!(o.alloc, vec![0]);
        let s = Simulator::new(&m).schedule(&o.alloc, None).unwrap();
        let svg = schedule_svg(&m, &s);
        assert!(svg.ends_with("</svg>\n") && svg.len() < 10_000, "{t0} {t1}");
        assert!(
            s.busy(1).is_sign_positive(),
            "an idle processor is busy 0, not -0"
        );
    }
}

#[test]
fn counting_many_processor_classes_is_quick() {
    // 24 processor types of one machine each and 24 tasks: 24^24 allocations at least.
    let mut p = params(24, 1, 0);
    p.types = (0..24)
        .map(|i| (format!("k{i}"), 1, 1.0 + i as f64 / 10.0))
        .collect();
    let m = random_ttigha(&p, 3);
    assert_eq!(
        m.platform.symmetry_classes().iter().max(),
        Some(&23),
        "24 classes"
    );
    assert_eq!(exhaustive_count(&m), u64::MAX);
    assert!(exhaustive(&m, 1_000_000).is_err());
    // One processor: one allocation, whatever the number of tasks.
    let mut p = params(5000, 1, 0);
    p.message_probability = 0.0;
    let m = random_ttigha(&p, 1);
    assert_eq!(exhaustive_count(&m), 1);
    // Two identical processors and 3 tasks: {abc}, {ab|c}, {ac|b}, {a|bc}.
    let m = random_ttigha(&params(3, 2, 0), 1);
    assert_eq!(exhaustive_count(&m), 4);
}

const BAD_DAX: &[(&str, &str)] = &[
    ("dax_truncated.xml", "7:1: the file ends inside the <job> opened at line 6 (truncated?)"),
    ("dax_second_root.xml", "5:1: a second root element (the workflow ended before)"),
    ("dax_duplicate_attribute.xml", "3:3: XML attribute: position 23: duplicated attribute, previous declaration at position 11"),
    ("dax_wrong_root.xml", "2:1: the root element is <workflow>, not <adag>"),
    ("dax_cycle.xml", "9:5: this dependency lies on a cycle of jobs"),
    ("dax_duplicate_id.xml", "4:3: a second job with id \"A\""),
    ("dax_missing_runtime.xml", "3:3: <job> without a runtime attribute"),
    ("dax_negative_runtime.xml", "3:3: the runtime of job \"A\" is -2, below 0 (--negative-as-zero reads negative sizes and runtimes as 0)"),
    ("dax_negative_size.xml", "4:5: the size of file \"f\" is -10, below 0 (--negative-as-zero reads negative sizes and runtimes as 0)"),
    ("dax_no_jobs.xml", "4:1: no <job>: the workflow is empty"),
    ("dax_parent_outside_child.xml", "4:3: <parent> outside a <child>"),
    ("dax_syntax.xml", "4:3: XML: ill-formed document: expected `</job>`, but `</jb>` was found"),
    ("dax_unknown_ref.xml", "10:5: no job has the id \"C\""),
];

#[test]
fn dax_workflows_keep_jobs_files_and_dependencies() {
    use taskmap::hetero::io::dax::read_dax_program;
    use taskmap::hetero::io::ttig::read_platform;
    let platform = read_platform(&fixture("hetero/two_clusters.platform")).unwrap();
    for (file, want) in BAD_DAX {
        let path = fixture(&format!("bad/{file}"));
        let e = read_dax_program(&path, platform.clone(), &[1.0, 1.2], false)
            .unwrap_err()
            .to_string();
        assert_eq!(e, format!("{}:{want}", path.display()), "{file}");
    }
    let ok = read_dax_program(
        &fixture("bad/dax_negative_size.xml"),
        platform.clone(),
        &[1.0, 1.2],
        true,
    );
    assert_eq!(ok.unwrap().program.tasks(), 1);
    // Montage, 25 jobs: counts, runtimes and bytes (the sizes the writing parents declare)
    // against Python's xml.etree.
    let m = read_dax_program(
        &fixture("hetero/Montage_25.xml"),
        platform.clone(),
        &[1.0, 2.0],
        false,
    )
    .unwrap();
    let pr = &m.program;
    assert_eq!((pr.tasks(), pr.messages.len()), (25, 45));
    let bytes: u64 = pr.messages.iter().map(|x| x.bytes).sum();
    assert_eq!(bytes, 322_367_526);
    let (t0, t1): (f64, f64) = (0..pr.tasks())
        .map(|t| (pr.time(t, 0), pr.time(t, 1)))
        .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
    assert!(
        (t0 - 227.75).abs() < 1e-9 && (t1 - 455.5).abs() < 1e-9,
        "{t0} {t1}"
    );
    // The whole Pegasus set: jobs and edges as listed in ../shared/data/README.md.
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/workflows/pegasus_dax");
    if !dir.is_dir() {
        eprintln!("skipping the shared workflows: {} is absent", dir.display());
        return;
    }
    let expected: &[(&str, usize, usize)] = &[
        ("CyberShake_30.xml", 30, 52),
        ("CyberShake_50.xml", 50, 88),
        ("CyberShake_100.xml", 100, 180),
        ("CyberShake_1000.xml.gz", 1000, 1988),
        ("Epigenomics_24.xml", 24, 27),
        ("Epigenomics_46.xml", 47, 54),
        ("Epigenomics_100.xml", 100, 122),
        ("Epigenomics_997.xml.gz", 997, 1234),
        ("Inspiral_30.xml", 30, 35),
        ("Inspiral_50.xml", 50, 60),
        ("Inspiral_100.xml", 100, 119),
        ("Inspiral_1000.xml.gz", 1000, 1233),
        ("Montage_25.xml", 25, 45),
        ("Montage_50.xml", 50, 106),
        ("Montage_100.xml", 100, 233),
        ("Montage_1000.xml.gz", 1000, 2485),
        ("Sipht_30.xml.gz", 29, 33),
        ("Sipht_60.xml.gz", 58, 66),
        ("Sipht_100.xml.gz", 97, 109),
        ("HEFT_paper.xml", 10, 15),
        ("floodplain.xml", 7, 10),
    ];
    for &(file, jobs, edges) in expected {
        let path = dir.join(file);
        let negative = file.starts_with("Epigenomics_997");
        if negative {
            let e = read_dax_program(&path, platform.clone(), &[1.0, 1.2], false)
                .unwrap_err()
                .to_string();
            assert!(e.contains("below 0"), "{e}");
        }
        let m = read_dax_program(&path, platform.clone(), &[1.0, 1.2], negative).unwrap();
        assert_eq!(
            (m.program.tasks(), m.program.messages.len()),
            (jobs, edges),
            "{file}"
        );
    }
}

/// Malformed WfCommons instances and the error each gives (`fixtures/bad/wfc*.json`).
const BAD_WFCOMMONS: &[(&str, &str)] = &[
    ("wfc_syntax.json", "21:6: JSON: expected `,` or `}`"),
    ("wfc_truncated.json", "25:10: JSON: EOF while parsing a string (truncated?)"),
    ("wfc_not_object.json", "1:1: the instance is an array, not an object"),
    ("wfc_no_workflow.json", "1:1: the instance has no \"workflow\" member (is this a WfCommons instance?)"),
    ("wfc_no_execution.json", "4:14: workflow has no \"execution\" member (is this a WfCommons instance?)"),
    ("wfc_no_runtime.json", "19:5: task \"b\" has no entry in workflow.execution.tasks, so no runtime"),
    ("wfc_negative_runtime.json", "48:26: the runtime of task \"b\" is -2, below 0 (--negative-as-zero reads negative sizes and runtimes as 0)"),
    ("wfc_runtime_string.json", "48:26: the \"runtimeInSeconds\" of task \"b\" is a string, not a number"),
    ("wfc_negative_size.json", "35:21: the size of file \"f\" is -10, below 0 (--negative-as-zero reads negative sizes and runtimes as 0)"),
    ("wfc_fractional_size.json", "35:21: the size of file \"f\" is 10.5, not an integer of at most 64 bits"),
    ("wfc_unknown_parent.json", "23:7: task \"b\" lists \"c\" as a parent, but no task has that id"),
    ("wfc_unlisted_file.json", "27:7: task \"b\" reads file \"g\", which workflow.specification.files does not list"),
    ("wfc_duplicate_task.json", "31:5: a second task with id \"b\""),
    ("wfc_duplicate_file.json", "37:5: a second file with id \"f\""),
    ("wfc_cycle.json", "11:7: this dependency lies on a cycle of tasks"),
    ("wfc_self_parent.json", "11:7: task \"a\" is its own parent"),
    ("wfc_parents_not_array.json", "22:17: \"parents\" of task \"b\" is a string, not an array"),
    ("wfc_task_without_id.json", "19:5: a task of workflow.specification.tasks has no \"id\" member"),
    ("wfc14_no_name.json", "20:4: a task of workflow.tasks has no \"name\" member"),
    ("wfc14_no_link.json", "28:6: file \"f\" of task \"b\" has no \"link\" member"),
    ("wfc_empty_tasks.json", "6:13: workflow.specification.tasks is empty: the workflow has no task"),
    ("wfc_unknown_execution.json", "50:5: workflow.execution.tasks has task \"c\", which workflow.specification.tasks does not"),
    ("wfc14_bad_link.json", "29:15: the link of file \"f\" of task \"b\" is \"inptu\", not input or output"),
    ("wfc14_duplicate_id.json", "35:11: a second task with id \"x\""),
    ("wfc14_no_tasks.json", "4:14: workflow has no \"specification\" (schema 1.5) nor \"tasks\" (earlier schemas) member (is this a WfCommons instance?)"),
];

/// A WfCommons 1.5 instance recomputed naively with serde_json: (runtime of each task id,
/// bytes of each (parent, child) pair from either side's list).
#[allow(clippy::type_complexity)]
fn naive_wfcommons(
    path: &Path,
) -> (
    std::collections::BTreeMap<String, f64>,
    std::collections::BTreeMap<(String, String), u64>,
) {
    let raw = std::fs::read(path).unwrap();
    let raw = taskmap_graph::decompress(&raw, path).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&raw).unwrap();
    let spec = &v["workflow"]["specification"];
    let size = |f: &str| {
        spec["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["id"] == f)
            .unwrap()["sizeInBytes"]
            .as_u64()
            .unwrap()
    };
    let tasks = spec["tasks"].as_array().unwrap();
    let task = |id: &str| tasks.iter().find(|t| t["id"] == id).unwrap();
    let names = |t: &serde_json::Value, k: &str| -> Vec<String> {
        t[k].as_array()
            .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let mut runtime = std::collections::BTreeMap::new();
    for t in v["workflow"]["execution"]["tasks"].as_array().unwrap() {
        runtime.insert(
            t["id"].as_str().unwrap().to_string(),
            t["runtimeInSeconds"].as_f64().unwrap(),
        );
    }
    let mut pairs = std::collections::BTreeMap::new();
    for t in tasks {
        let id = t["id"].as_str().unwrap().to_string();
        let mut arcs: Vec<(String, String)> = names(t, "parents")
            .into_iter()
            .map(|p| (p, id.clone()))
            .collect();
        arcs.extend(names(t, "children").into_iter().map(|c| (id.clone(), c)));
        for (p, c) in arcs {
            let (outs, ins) = (
                names(task(&p), "outputFiles"),
                names(task(&c), "inputFiles"),
            );
            let mut shared: Vec<&String> = outs.iter().filter(|f| ins.contains(f)).collect();
            shared.sort();
            shared.dedup();
            pairs.insert((p, c), shared.iter().map(|f| size(f)).sum());
        }
    }
    (runtime, pairs)
}

#[test]
fn wfcommons_instances_keep_tasks_files_and_dependencies() {
    use taskmap::hetero::io::ttig::read_platform;
    use taskmap::hetero::io::wfcommons::read_workflow_program;
    let platform = read_platform(&fixture("hetero/two_clusters.platform")).unwrap();
    for (file, want) in BAD_WFCOMMONS {
        let path = fixture(&format!("bad/{file}"));
        let e = read_workflow_program(&path, platform.clone(), &[1.0, 1.2], false)
            .unwrap_err()
            .to_string();
        assert_eq!(e, format!("{}:{want}", path.display()), "{file}");
    }
    for file in ["wfc_negative_size.json", "wfc_negative_runtime.json"] {
        let ok = read_workflow_program(
            &fixture(&format!("bad/{file}")),
            platform.clone(),
            &[1.0, 1.2],
            true,
        )
        .unwrap();
        assert_eq!(
            (ok.program.tasks(), ok.program.messages.len()),
            (2, 1),
            "{file}"
        );
    }
    // The two layouts: a → b carrying file f of 100 bytes, runtimes 1.5 and 2.
    for path in [
        fixture("bad/wfc_negative_size.json"),
        fixture("hetero/wfcommons14.json"),
    ] {
        let negative = path.ends_with("wfc_negative_size.json");
        let m = read_workflow_program(&path, platform.clone(), &[1.0, 2.0], negative).unwrap();
        let pr = &m.program;
        assert_eq!(pr.task_names, ["a", "b"]);
        assert_eq!((pr.time(0, 1), pr.time(1, 0)), (3.0, 2.0));
        let want = if negative { 0 } else { 100 };
        assert_eq!(
            pr.messages
                .iter()
                .map(|x| (x.from, x.to, x.bytes))
                .collect::<Vec<_>>(),
            [(0, 1, want)]
        );
    }
    // Real traces: every runtime and every pair's bytes against the naive reading.
    let mut files = vec![
        fixture("hetero/montage-chameleon-2mass-005d-001.json.gz"),
        fixture("hetero/helloworld-forkjoin-10-chameleon.json.gz"),
    ];
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/workflows/wfinstances");
    // Tasks and edges as listed in ../shared/data/README.md.
    let expected: &[(&str, usize, usize)] = &[
        ("montage-chameleon-2mass-005d-001", 58, 114),
        ("montage-chameleon-2mass-01d-001", 103, 231),
        ("montage-chameleon-2mass-015d-001", 310, 798),
        ("montage-chameleon-dss-05d-001", 58, 114),
        ("montage-chameleon-dss-075d-001", 178, 444),
        ("epigenomics-chameleon-hep-1seq-100k-001", 41, 48),
        ("epigenomics-chameleon-hep-2seq-100k-001", 119, 144),
        ("epigenomics-chameleon-ilmn-1seq-100k-001", 125, 153),
        ("seismology-chameleon-100p-001", 101, 100),
        ("seismology-chameleon-200p-001", 201, 200),
        ("soykb-chameleon-10fastq-10ch-001", 96, 194),
        ("1000genome-chameleon-2ch-100k-001", 52, 76),
        ("1000genome-chameleon-4ch-100k-001", 104, 152),
        ("srasearch-chameleon-10a-001", 22, 30),
        ("srasearch-chameleon-50a-001", 104, 152),
        ("cycles-chameleon-1l-1c-9p-001", 67, 97),
        ("blast-chameleon-small-001", 43, 120),
        ("bwa-chameleon-small-001", 104, 400),
        ("bacass-dirt02-001", 11, 14),
        ("scrnaseq-dirt02-001", 14, 17),
        ("helloworld-chain-5-chameleon", 5, 4),
        ("helloworld-forkjoin-10-chameleon", 10, 16),
    ];
    if dir.is_dir() {
        for &(name, tasks, edges) in expected {
            let path = dir.join(format!("{name}.json.gz"));
            let m = read_workflow_program(&path, platform.clone(), &[1.0, 1.2], false).unwrap();
            assert_eq!(
                (m.program.tasks(), m.program.messages.len()),
                (tasks, edges),
                "{name}"
            );
            files.push(path);
        }
    } else {
        eprintln!("skipping the shared workflows: {} is absent", dir.display());
    }
    for path in files {
        let m = read_workflow_program(&path, platform.clone(), &[1.0, 1.2], false).unwrap();
        let pr = &m.program;
        let (runtime, pairs) = naive_wfcommons(&path);
        for (t, name) in pr.task_names.iter().enumerate() {
            assert_eq!(pr.time(t, 0), runtime[name], "{}", path.display());
            assert!((pr.time(t, 1) - 1.2 * runtime[name]).abs() <= 1e-12 * runtime[name]);
        }
        let ours: std::collections::BTreeMap<(String, String), u64> = pr
            .messages
            .iter()
            .map(|x| {
                let n = |i: u32| pr.task_names[i as usize].clone();
                ((n(x.from), n(x.to)), x.bytes)
            })
            .collect();
        assert_eq!(ours.len(), pr.messages.len(), "one message per pair");
        assert!(ours.values().sum::<u64>() > 0, "{}", path.display());
        assert_eq!(ours, pairs, "{}", path.display());
    }
}

/// HEFT's and PEFT's plans are feasible schedules (each sub-task on its task's processor
/// for its time there, after its task's previous sub-task and after every input has
/// arrived, no two overlapping on a processor), and SIMULHa run strictly in their order
/// starts no sub-task later than planned; both are deterministic.
#[test]
fn heft_plans_feasible_schedules_that_simulha_meets() {
    use taskmap::hetero::heft::{heft, peft};
    for (seed, plan) in (0..120u64).map(|s| (s / 2, if s % 2 == 0 { heft } else { peft })) {
        let mut p = params(
            6 + (seed % 20) as usize,
            1 + (seed % 3) as usize,
            (seed % 4) as usize,
        );
        if seed % 5 == 0 {
            p.time = (0, 3); // zero times and ties
        }
        let m = random_ttigha(&p, seed);
        let (pr, pl) = (&m.program, &m.platform);
        let h = plan(&m);
        assert_eq!(h, plan(&m), "deterministic");
        let eps = 1e-9 * (1.0 + h.makespan);
        let proc_of = |s: usize| h.alloc[pr.subtask_task[s] as usize] as usize;
        let mut listed = vec![0; pr.subtasks()];
        for (q, list) in h.order.iter().enumerate() {
            for w in list.windows(2) {
                let (a, b) = (w[0] as usize, w[1] as usize);
                assert!(
                    h.finish[a] <= h.start[b] + eps,
                    "seed {seed}: overlap on {q}"
                );
            }
            for &s in list {
                listed[s as usize] += 1;
                assert_eq!(proc_of(s as usize), q);
            }
        }
        assert!(
            listed.iter().all(|&c| c == 1),
            "seed {seed}: every sub-task once"
        );
        for s in 0..pr.subtasks() {
            let q = proc_of(s);
            let t = pr.time(s, pl.proc_type[q] as usize);
            assert!((h.finish[s] - h.start[s] - t).abs() <= eps);
            if let Some(r) = pr.previous(s) {
                assert!(h.finish[r] <= h.start[s] + eps);
            }
            for msg in pr.incoming(s) {
                let f = msg.from as usize;
                let arrive = h.finish[f] + pl.comm_time(proc_of(f), q, 1, msg.bytes);
                assert!(
                    arrive <= h.start[s] + eps,
                    "seed {seed}: sub-task {s} starts early"
                );
            }
        }
        let makespan = h.finish.iter().copied().fold(0.0, f64::max);
        assert_eq!(makespan, h.makespan);
        let sched = Simulator::new(&m)
            .schedule(&h.alloc, Some(&h.order))
            .unwrap();
        for s in 0..pr.subtasks() {
            assert!(sched.start[s] <= h.start[s] + eps, "seed {seed}: {s} late");
        }
        assert!(sched.makespan <= h.makespan + eps);
    }
}

/// heft-ls is never longer than HEFT's own schedule nor than MATEHa's allocation run in
/// HEFT's priority order, and its order replays to its time (HEFT's or the search's, which
/// wins on some of these programs).
#[test]
fn heft_ls_never_loses_to_heft_or_mateha() {
    use taskmap::hetero::heft::{heft, heft_ls};
    let search = taskmap::hetero::mateha::SearchParams {
        kicks: 5,
        seed: 1,
        ..Default::default()
    };
    let mut searched = 0;
    for seed in 0..25u64 {
        let m = random_ttigha(&params(10, 2, 2), seed);
        let mut sim = Simulator::new(&m);
        let h = heft(&m);
        let planned = sim.schedule(&h.alloc, Some(&h.order)).unwrap().makespan;
        let mut ranked = m.program.clone();
        ranked.rank.clone_from(&h.priority);
        let matehas = Simulator::with(&ranked, &m.platform).makespan(&mateha(&m).alloc);
        let (alloc, order) = heft_ls(&m, &search);
        let t = sim.schedule(&alloc, Some(&order)).unwrap().makespan;
        assert!(
            t <= planned && t <= matehas,
            "seed {seed}: {t} {planned} {matehas}"
        );
        // The search's schedule, in the order it ran in, replays to a shorter time.
        searched += usize::from(t < planned);
    }
    assert!(searched > 0, "the search never beat HEFT");
}

/// An order file is accepted exactly when SIMULHa can run it: random orders (each
/// processor's sub-tasks in declaration order, then two random entries of a random processor
/// swapped) of random programs and allocations, the parser's deadlock check against the
/// simulation.
#[test]
fn order_files_are_accepted_exactly_when_they_simulate() {
    use rand::{Rng, SeedableRng};
    use taskmap::hetero::io::order::parse_order;
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
    let (mut accepted, mut refused) = (0, 0);
    for seed in 0..200u64 {
        let m = random_ttigha(&params(5, 1, 2), seed);
        let (pr, k) = (&m.program, m.platform.processors());
        let alloc: Vec<u32> = (0..pr.tasks())
            .map(|_| rng.gen_range(0..k as u32))
            .collect();
        let mut lines: Vec<Vec<&str>> = vec![Vec::new(); k];
        for s in 0..pr.subtasks() {
            let p = alloc[pr.subtask_task[s] as usize] as usize;
            lines[p].push(&pr.subtask_names[s]);
        }
        let p = rng.gen_range(0..k);
        if lines[p].len() > 1 {
            let (i, j) = (
                rng.gen_range(0..lines[p].len()),
                rng.gen_range(0..lines[p].len()),
            );
            lines[p].swap(i, j);
        }
        let text: String = lines.iter().map(|l| l.join(" ") + "\n").collect();
        let parsed = parse_order(&text, Path::new("o.txt"), pr, k, &alloc);
        let order: Vec<Vec<u32>> = lines
            .iter()
            .map(|l| {
                l.iter()
                    .map(|n| pr.subtask_names.iter().position(|x| x == n).unwrap() as u32)
                    .collect()
            })
            .collect();
        let simulated = Simulator::new(&m).schedule(&alloc, Some(&order));
        assert_eq!(parsed.is_ok(), simulated.is_ok(), "seed {seed}: {text}");
        match parsed {
            Ok(o) => {
                assert_eq!(o, order);
                accepted += 1;
            }
            Err(e) => {
                assert!(e.to_string().contains("never finishes"), "{e}");
                refused += 1;
            }
        }
    }
    assert!(accepted > 20 && refused > 20, "{accepted} {refused}");
}

/// HEFT on the example of its paper (Topcuoglu, Hariri & Wu 2002, Figure 2, in
/// `fixtures/hetero/topcuoglu.ttig`): the published allocation and makespan 80.
#[test]
fn heft_reproduces_its_papers_example() {
    use taskmap::hetero::heft::heft;
    let text = std::fs::read_to_string(fixture("hetero/topcuoglu.ttig")).unwrap();
    let m = parse_ttigha(&text, Path::new("topcuoglu.ttig")).unwrap();
    let h = heft(&m);
    assert_eq!(h.makespan, 80.0);
    // n1, n3, n5, n7 on P3; n2, n8 on P1; n4, n6, n9, n10 on P2.
    assert_eq!(h.alloc, [2, 0, 2, 1, 2, 1, 2, 0, 1, 1]);
    let s = Simulator::new(&m)
        .schedule(&h.alloc, Some(&h.order))
        .unwrap();
    assert_eq!(s.makespan, 80.0);
}

/// PEFT's optimistic cost table by type equals the definition over processors: OCT(s, p)
/// is the largest, over the successors y, of the least over processors q of OCT(y, q) +
/// time of y on q + the mean message time when q != p (the next sub-task of the same task
/// must stay on p, without message), computed naively on random programs.
#[test]
fn peft_cost_table_matches_its_definition() {
    use taskmap::hetero::heft::optimistic_cost_table;
    for seed in 0..30u64 {
        let m = random_ttigha(
            &params(8, 1 + (seed % 3) as usize, (seed % 3) as usize),
            seed,
        );
        let (pr, pl) = (&m.program, &m.platform);
        let (n, k, types) = (pr.subtasks(), pl.processors(), pl.types());
        let pairs: Vec<(usize, usize)> = (0..k)
            .flat_map(|a| (0..k).filter(move |&b| b != a).map(move |b| (a, b)))
            .collect();
        let mean = |bytes: u64| {
            if pairs.is_empty() {
                return 0.0;
            }
            pairs
                .iter()
                .map(|&(a, b)| pl.comm_time(a, b, 1, bytes))
                .sum::<f64>()
                / pairs.len() as f64
        };
        let time = |s: usize, q: usize| pr.time(s, pl.proc_type[q] as usize);
        let mut oct = vec![vec![f64::NAN; k]; n];
        // Sub-tasks in reverse priority order (successors first).
        let mut topo: Vec<usize> = (0..n).collect();
        topo.sort_by_key(|&s| std::cmp::Reverse(pr.rank[s]));
        for s in topo {
            for p in 0..k {
                let mut v: f64 = 0.0;
                if let Some(y) = pr.next_in_task(s) {
                    v = v.max(oct[y][p] + time(y, p));
                }
                for msg in pr.outgoing(s) {
                    let y = msg.to as usize;
                    let best = (0..k)
                        .map(|q| {
                            oct[y][q] + time(y, q) + if q == p { 0.0 } else { mean(msg.bytes) }
                        })
                        .fold(f64::INFINITY, f64::min);
                    v = v.max(best);
                }
                oct[s][p] = v;
            }
        }
        let table = optimistic_cost_table(&m);
        for s in 0..n {
            for p in 0..k {
                let t = table[s * types + pl.proc_type[p] as usize];
                assert!(
                    (t - oct[s][p]).abs() <= 1e-9 * (1.0 + t),
                    "seed {seed}: {s} {p}"
                );
            }
        }
    }
}

/// A spec's keys run the search the same parameters run; the algorithms without a search
/// run as by name.
#[test]
fn specs_run_as_their_parameters() {
    use taskmap::hetero::allocate::{allocate, HeteroSpec};
    use taskmap::hetero::mateha::SearchParams;
    let search = SearchParams {
        kicks: 5,
        budget: 1_000_000,
        seed: 3,
        ..SearchParams::default()
    };
    for seed in 0..5u64 {
        let m = random_ttigha(&params(10, 2, 2), seed);
        for name in ["mateha-ls", "heft-ls"] {
            let spec: HeteroSpec = format!("{name},kicks=5,budget=1000000,seed=3")
                .parse()
                .unwrap();
            assert_eq!(spec.search(), search);
            let a = spec.allocate(&m);
            let b = allocate(name, &m, &search).unwrap();
            assert_eq!(
                (a.algorithm, &a.alloc, &a.order),
                (name, &b.alloc, &b.order)
            );
        }
        for name in ["mateha", "heft", "peft"] {
            let a = name.parse::<HeteroSpec>().unwrap().allocate(&m);
            let b = allocate(name, &m, &SearchParams::default()).unwrap();
            assert_eq!(
                (&a.alloc, &a.order, &a.levels),
                (&b.alloc, &b.order, &b.levels)
            );
        }
    }
}

/// The models of the fixtures: `.ttig` files, an STG graph and the workflows (DAX,
/// WfCommons 1.5 gzipped and 1.4) on their platforms.
fn fixture_models() -> Vec<(String, Ttigha)> {
    use taskmap::hetero::io::stg::read_stg_program;
    use taskmap::hetero::io::ttig::{read_platform, read_ttigha};
    use taskmap::hetero::io::wfcommons::read_workflow_program;
    let mut out = Vec::new();
    for f in ["small.ttig", "two_clusters.ttig", "topcuoglu.ttig"] {
        out.push((
            f.to_string(),
            read_ttigha(&fixture(&format!("hetero/{f}"))).unwrap(),
        ));
    }
    let clusters = read_platform(&fixture("hetero/two_clusters.platform")).unwrap();
    let stg = fixture("hetero/rand0000.stg");
    out.push((
        "rand0000.stg".into(),
        read_stg_program(&stg, clusters, &[1.0, 1.2], 500).unwrap(),
    ));
    let sites = read_platform(&fixture("hetero/two_sites.platform")).unwrap();
    for f in [
        "Montage_25.xml",
        "montage-chameleon-2mass-005d-001.json.gz",
        "helloworld-forkjoin-10-chameleon.json.gz",
        "wfcommons14.json",
    ] {
        let path = fixture(&format!("hetero/{f}"));
        let m = read_workflow_program(&path, sites.clone(), &[1.0, 1.5], true).unwrap();
        out.push((f.to_string(), m));
    }
    out
}

#[test]
fn ttig_writer_round_trips_the_fixtures_and_random_models() {
    use taskmap::hetero::io::ttig::{read_ttigha, ttigha_text, write_ttigha};
    let dir = tempfile::tempdir().unwrap();
    let mut models = fixture_models();
    for seed in 0..10 {
        models.push((
            format!("random {seed}"),
            random_ttigha(&params(12, 3, 2), seed),
        ));
    }
    // A platform whose links differ within a pair of types: the writer's exceptions.
    let comms = vec![
        ("a".to_string(), 1.0, 0.25),
        ("b".to_string(), 3.5, 1e-9),
        ("c".to_string(), 0.0, 0.0),
    ];
    let platform = Platform::new(
        vec!["x".into(), "y".into(), "z".into()],
        vec![0, 0, 0, 1, 1, 2],
        comms,
        |s, d| ((s * d + s + d) % 3) as u32,
    );
    let program = random_ttigha(
        &RandomTtigha {
            types: vec![
                ("x".into(), 3, 1.0),
                ("y".into(), 2, 0.3),
                ("z".into(), 1, 7.25),
            ],
            tasks: 9,
            ..RandomTtigha::default()
        },
        5,
    )
    .program;
    models.push(("irregular links".into(), Ttigha { platform, program }));
    for (name, m) in &models {
        let text = ttigha_text(m).unwrap_or_else(|e| panic!("{name}: {e}"));
        let back =
            parse_ttigha(&text, Path::new("x.ttig")).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&back, m, "{name}");
        // The same text again (the writer is a function of the model), and the same
        // allocation and final time.
        assert_eq!(ttigha_text(&back).unwrap(), text, "{name}");
        let (a, b) = (mateha(m).alloc, mateha(&back).alloc);
        assert_eq!(a, b, "{name}");
        assert_eq!(
            Simulator::new(m).makespan(&a),
            Simulator::new(&back).makespan(&b),
            "{name}"
        );
        let path = dir.path().join("model.ttig");
        write_ttigha(m, &path).unwrap();
        assert_eq!(&read_ttigha(&path).unwrap(), m, "{name}");
    }
    // A LINK line per pair of types when the links follow the types; lines for the pairs
    // of processors that differ from their types' line otherwise.
    let text = ttigha_text(&models[1].1).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with("LINK")).count(), 3);
    let text = ttigha_text(&models.last().unwrap().1).unwrap();
    assert!(text.lines().any(|l| l.starts_with("LINK 0 ")), "{text}");
}

#[test]
fn ttig_writer_refuses_what_the_format_cannot_hold() {
    use taskmap::hetero::io::ttig::{ttigha_text, write_ttigha};
    let m = small();
    let refused = |m: &Ttigha, want: &str| {
        let e = ttigha_text(m).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    };
    for (name, what) in [
        ("a b", "task name \"a b\""),
        ("1a", "task name \"1a\""),
        ("-a", "task name \"-a\""),
        ("a#b", "task name \"a#b\""),
        ("*", "task name \"*\""),
        ("", "task name \"\""),
        ("B", "task name \"B\" is given twice"),
    ] {
        let mut bad = m.clone();
        bad.program.task_names[0] = name.into();
        refused(&bad, what);
    }
    let mut bad = m.clone();
    bad.program.subtask_names[1] = "a 2".into();
    refused(&bad, "sub-task name \"a 2\"");
    let mut bad = m.clone();
    bad.platform.comm_names[0] = "n\tet".into();
    refused(&bad, "communication type name");
    // A type without processors, processors out of type order.
    let two = |proc_type: Vec<u32>| Ttigha {
        platform: Platform::new(
            vec!["fast".into(), "slow".into()],
            proc_type,
            vec![("net".into(), 10.0, 0.5)],
            |_, _| 0,
        ),
        program: m.program.clone(),
    };
    refused(
        &two(vec![0, 0]),
        "processor type \"slow\" has no processors",
    );
    refused(&two(vec![1, 0]), "not numbered type by type");
    assert!(ttigha_text(&two(vec![0, 1, 1])).is_ok());
    // Nothing is written when the model is refused.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.ttig");
    assert!(write_ttigha(&two(vec![0, 0]), &path).is_err());
    assert!(!path.exists());
}

#[test]
fn ttigha_matrices_follow_their_definitions() {
    use taskmap::hetero::report::{matrices_json, ttigha_matrices};
    // The worked example: A -> B carries 20 bytes; C = 10 + 20 · 0.5; A (fast) and B
    // (slow) run 2 time units in parallel, B takes 12 on the slow processor.
    let m = small();
    let x = ttigha_matrices(&m);
    assert_eq!(x.w, vec![vec![6.0, 12.0], vec![6.0, 12.0]]);
    assert_eq!(x.edges.len(), 2);
    let ab = &x.edges[0];
    assert_eq!((ab.from, ab.to, ab.messages, ab.bytes), (0, 1, 1, 20));
    assert_eq!(ab.comm_time, vec![20.0]);
    assert_eq!(ab.concurrency[0][1], 2.0 / 12.0);
    assert_eq!(ab.concurrency[0][0], 2.0 / 6.0);
    let ba = &x.edges[1];
    assert_eq!((ba.from, ba.to, ba.messages, ba.bytes), (1, 0, 0, 0));
    let v = matrices_json(&m, &x);
    assert_eq!(v["edges"][0]["from"], "A");
    assert_eq!(v["edges"][0]["p"][0][1].as_f64(), Some(2.0 / 12.0));
    assert_eq!(v["processor_types"][1], "slow");
    // Every model: w against the sub-tasks' times; the pairs, messages and bytes against
    // the messages; C_sd and p_sd against the platform and TtigGraph for every pair of
    // distinct processors.
    let mut models = fixture_models();
    for seed in 0..6 {
        models.push((
            format!("random {seed}"),
            random_ttigha(&params(10, 2, 3), seed),
        ));
    }
    for (name, m) in &models {
        let (pr, pl) = (&m.program, &m.platform);
        let x = ttigha_matrices(m);
        let g = TtigGraph::new(pr);
        for t in 0..pr.tasks() {
            for p in 0..pr.types {
                let naive: f64 = pr.subtasks_of(t).map(|s| pr.time(s, p)).sum();
                assert_eq!(x.w[t][p], naive, "{name}");
            }
        }
        let mut naive = std::collections::BTreeMap::new();
        for msg in &pr.messages {
            let (a, b) = (
                pr.subtask_task[msg.from as usize],
                pr.subtask_task[msg.to as usize],
            );
            let e = naive.entry((a, b)).or_insert((0u64, 0u64));
            e.0 += 1;
            e.1 += msg.bytes;
            naive.entry((b, a)).or_insert((0, 0));
        }
        let got: Vec<_> = x
            .edges
            .iter()
            .map(|e| ((e.from, e.to), (e.messages, e.bytes)))
            .collect();
        assert_eq!(got, naive.into_iter().collect::<Vec<_>>(), "{name}");
        // Processor pairs: all of them on small platforms, a sample on large ones.
        let mp = pl.processors();
        let step = (mp / 12).max(1);
        for e in &x.edges {
            let (t, j) = (e.from as usize, e.to as usize);
            for s in (0..mp).step_by(step) {
                for d in (0..mp).step_by(step).filter(|&d| d != s) {
                    let k = pl.link(s, d).unwrap() as usize;
                    assert_eq!(
                        e.comm_time[k],
                        pl.comm_time(s, d, e.messages, e.bytes),
                        "{name}"
                    );
                    let (a, b) = (pl.proc_type[s] as usize, pl.proc_type[d] as usize);
                    assert_eq!(e.concurrency[a][b], g.concurrency(t, a, j, b), "{name}");
                }
            }
        }
    }
}

#[test]
fn ttig_specs_give_the_documented_models() {
    use taskmap::hetero::gen::try_random_ttigha;
    use taskmap::hetero::io::ttig::ttigha_text;
    // The defaults, with the task count.
    let (p, seed) = RandomTtigha::parse_spec("12").unwrap();
    assert_eq!(seed, None);
    let d = RandomTtigha {
        tasks: 12,
        ..RandomTtigha::default()
    };
    assert_eq!(format!("{p:?}"), format!("{d:?}"));
    // Every key.
    let (p, seed) = RandomTtigha::parse_spec(
        "7,subtasks=3,procs=1:2:3,slowness=1:1.5:2,time=10:20,prob=0.3,bytes=1:9,lan=1:0.5,switch=2:0.25,seed=4",
    )
    .unwrap();
    assert_eq!(seed, Some(4));
    assert_eq!(
        p.types,
        vec![
            ("c1".to_string(), 1, 1.0),
            ("c2".to_string(), 2, 1.5),
            ("c3".to_string(), 3, 2.0)
        ]
    );
    assert_eq!(
        (p.tasks, p.max_subtasks, p.time, p.bytes, p.lan, p.switch),
        (7, 3, (10, 20), (1, 9), (1.0, 0.5), (2.0, 0.25))
    );
    assert_eq!(p.message_probability, 0.3);
    // The recipe: times are round(base · slowness), a base in the range; messages go
    // forward between tasks with bytes in their range; lan inside a type, switch between.
    for seed in 0..5 {
        let m = try_random_ttigha(&p, seed).unwrap();
        let (pr, pl) = (&m.program, &m.platform);
        assert_eq!(pr.tasks(), 7);
        for s in 0..pr.subtasks() {
            let base = pr.time(s, 0);
            assert!((10.0..=20.0).contains(&base));
            assert_eq!(pr.time(s, 1), (base * 1.5).round());
            assert_eq!(pr.time(s, 2), (base * 2.0).round());
        }
        assert!((0..7).all(|t| (1..=3).contains(&pr.subtasks_of(t).len())));
        for msg in &pr.messages {
            assert!(msg.from < msg.to && (1..=9).contains(&msg.bytes));
        }
        for s in 0..6 {
            for d in (0..6).filter(|&d| d != s) {
                let want = u32::from(pl.proc_type[s] != pl.proc_type[d]);
                assert_eq!(pl.link(s, d), Some(want));
            }
        }
        // The same seed, the same text; it reads back.
        let text = ttigha_text(&m).unwrap();
        assert_eq!(
            ttigha_text(&try_random_ttigha(&p, seed).unwrap()).unwrap(),
            text
        );
        assert_eq!(parse_ttigha(&text, Path::new("g.ttig")).unwrap(), m);
    }
    assert_ne!(
        try_random_ttigha(&p, 0).unwrap(),
        try_random_ttigha(&p, 1).unwrap()
    );
    for (spec, want) in [
        ("0", "expected a task count"),
        ("x", "expected a task count"),
        ("5,bogus=1", "unknown key \"bogus\""),
        ("5,seed=1,seed=2", "\"seed\" is given twice"),
        (
            "5,procs=1:1:1",
            "3 processor type(s) (procs, 2 by default) and 0 slowness",
        ),
        (
            "5,slowness=1",
            "2 processor type(s) (procs, 2 by default) and 1 slowness",
        ),
        ("5,procs=1:1,slowness=1:1:1", "and 3 slowness factor(s)"),
        ("5,time=3", "takes two values"),
        ("5,prob=-1", "finite reals >= 0"),
        ("5,seed=-1", "whole numbers"),
    ] {
        let e = RandomTtigha::parse_spec(spec).unwrap_err().to_string();
        assert!(e.contains(want), "{spec}: {e}");
    }
    for (spec, want) in [
        ("5,procs=2:0", "has no machines"),
        ("5,procs=4000:97", "the most a platform may have is 4096"),
        ("5,prob=1.5", "from 0 to 1"),
        ("5,time=9:3", "low end above the high end"),
        ("5,bytes=9:3", "low end above the high end"),
        ("5,subtasks=0", "subtasks >= 1"),
        ("30000", "more than the limit 50000"),
        ("6000", "expect up to"),
        ("400,slowness=1:1e305", "beyond the largest float"),
    ] {
        let (p, seed) = RandomTtigha::parse_spec(spec).unwrap();
        let e = try_random_ttigha(&p, seed.unwrap_or(0))
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{spec}: {e}");
    }
}
