//! The registry: every row parses, its documented keys are its fields, every alias sets
//! what its long name sets, presets and keys overlay as documented, and the generated
//! tables of `docs/algorithms.md` are current.

use std::path::Path;

use taskmap::hetero::allocate::HeteroSpec;
use taskmap::houstis::spec::PrecedenceSpec;
use taskmap::multilevel::config::MultilevelMapper;
use taskmap::registry::{doc, find, names, Family, ALGORITHMS};
use taskmap::{AlgorithmSpec, Mapper};

fn parse(s: &str) -> Result<AlgorithmSpec, String> {
    s.parse::<AlgorithmSpec>().map_err(|e| e.to_string())
}

/// The name and effective parameters of `text`, parsed as its family's spec.
fn parse_in(family: Family, text: &str) -> Result<(&'static str, serde_json::Value), String> {
    let e = |e: taskmap::Error| e.to_string();
    match family {
        Family::Static | Family::Program => parse(text).map(|s| (s.name(), s.parameters())),
        Family::Hetero => text
            .parse::<HeteroSpec>()
            .map(|s| (s.name(), s.parameters()))
            .map_err(e),
        Family::Precedence => text
            .parse::<PrecedenceSpec>()
            .map(|s| (s.name(), s.parameters()))
            .map_err(e),
    }
}

/// A value of the key other than its default, by the default's JSON type.
fn other_value(default: &serde_json::Value, key: &str) -> String {
    match (key, default) {
        ("coarsening" | "vcoarsening", _) => "hem".into(),
        ("coarsening2", _) => "none".into(),
        ("unwrap", _) => "1".into(),
        ("saturated", _) => "keep".into(),
        ("endgame", _) => "7".into(),
        ("degree_radius", _) => "2".into(),
        ("combines" | "batch", _) => "3".into(),
        ("parallelism", _) => "2".into(),
        (_, serde_json::Value::Bool(b)) => if *b { "0" } else { "1" }.into(),
        (_, serde_json::Value::Number(n)) if n.is_f64() => {
            let v = n.as_f64().unwrap();
            if v > 0.0 && v < 1.0 {
                format!("{}", v / 2.0)
            } else {
                format!("{}", v + 1.0)
            }
        }
        (_, serde_json::Value::Number(n)) => {
            let v = n.as_u64().unwrap();
            if v == u64::MAX {
                "5".into()
            } else {
                (v + 1).to_string()
            }
        }
        (k, v) => panic!("{k}: no other value for {v}"),
    }
}

/// Every row of every family parses by its name and its aliases (through its family's
/// spec: [`AlgorithmSpec`], [`HeteroSpec`], [`PrecedenceSpec`]), its documented keys are
/// exactly its fields, and each key changes what it names.
#[test]
fn every_row_parses_and_documents_its_fields() {
    for row in ALGORITHMS {
        let parse = |text: &str| parse_in(row.family, text);
        let (name, params) = parse(row.name).unwrap();
        assert_eq!(name, row.name);
        for alias in row.aliases {
            assert_eq!(parse(alias).unwrap(), (name, params.clone()), "{alias}");
        }
        assert!(params.is_object(), "{}: {params}", row.name);
        let fields: Vec<&String> = params.as_object().unwrap().keys().collect();
        let Some(ps) = row.params else {
            assert!(fields.is_empty(), "{}: undocumented {fields:?}", row.name);
            continue;
        };
        let mut documented: Vec<&str> = ps
            .docs
            .iter()
            .map(|d| d.name)
            .filter(|n| Some(*n) != ps.preset_key)
            .collect();
        documented.sort_unstable();
        let mut fields: Vec<&str> = fields.iter().map(|s| s.as_str()).collect();
        fields.sort_unstable();
        assert_eq!(documented, fields, "{}", row.name);
        assert_eq!(params, (ps.defaults)(), "{}: the defaults", row.name);
        for d in ps.docs.iter().filter(|d| Some(d.name) != ps.preset_key) {
            let v = other_value(&params[d.name], d.name);
            // combines and batch apply to the memetic mode only.
            let name = match d.name {
                "combines" | "batch" => format!("{},population=2", row.name),
                _ => row.name.to_string(),
            };
            let set = parse(&format!("{name},{}={v}", d.name))
                .unwrap_or_else(|e| panic!("{e}"))
                .1;
            assert_ne!(set, params, "{}: {}={v} changes nothing", row.name, d.name);
            for alias in d.aliases {
                let by_alias = parse(&format!("{name},{alias}={v}")).unwrap().1;
                assert_eq!(by_alias, set, "{}: {alias}", row.name);
                let e = parse(&format!("{name},{alias}={v},{}={v}", d.name)).unwrap_err();
                assert!(e.contains("given twice"), "{e}");
            }
            // A key given twice, also spelled with '-', is an error.
            let dashed = d.name.replace('_', "-");
            let e = parse(&format!("{name},{}={v},{dashed}={v}", d.name)).unwrap_err();
            assert!(e.contains("given twice"), "{e}");
        }
        let e = parse(&format!("{},no_such_key=1", row.name)).unwrap_err();
        assert!(
            e.contains("unknown parameter \"no_such_key\"") && e.starts_with(row.name),
            "{e}"
        );
    }
}

/// The hetero and precedence families' keys: the searches' seed defaults to 0, a key of
/// another row of the family is refused, and ranges are checked.
#[test]
fn hetero_and_precedence_keys() {
    let h = |s: &str| s.parse::<HeteroSpec>().map_err(|e| e.to_string());
    let p = |s: &str| s.parse::<PrecedenceSpec>().map_err(|e| e.to_string());
    let ls = h("mateha-ls,kicks=5,budget=1000000,seed=3").unwrap();
    assert_eq!(
        (ls.search().kicks, ls.search().budget, ls.search().seed),
        (5, 1_000_000, 3)
    );
    assert_eq!(h("heft-ls").unwrap().search().seed, 0);
    assert_eq!(
        h("heft-ls,rounds=3").unwrap().search(),
        taskmap::hetero::mateha::SearchParams {
            rounds: 3,
            ..Default::default()
        }
    );
    let alloc = p("alloc,parallelism=4,tolerance=1e-3,samples=8").unwrap();
    assert_eq!(
        (
            alloc.alloc().parallelism,
            alloc.alloc().tolerance,
            alloc.alloc().samples
        ),
        (Some(4), 1e-3, 8)
    );
    assert!(
        p("alloc-ls,no-parallelism=1")
            .unwrap()
            .alloc()
            .no_parallelism
    );
    assert_eq!(
        p("alloc-ls,budget=5").unwrap().parameters()["budget"].as_u64(),
        Some(5)
    );
    for (bad, says) in [
        (
            "mateha,kicks=5",
            "mateha: unknown parameter \"kicks\"; known: none",
        ),
        ("heft,seed=1", "heft: unknown parameter \"seed\""),
        ("peft,budget=1", "peft: unknown parameter \"budget\""),
        (
            "mateha-ls,kicks=x",
            "\"kicks\" expects a non-negative integer",
        ),
        ("mateha-ls,kicks=1,kicks=2", "\"kicks\" is given twice"),
        (
            "cpop",
            "unknown algorithm \"cpop\"; known: mateha, mateha-ls, heft",
        ),
        ("alloc", "unknown algorithm \"alloc\""),
    ] {
        let e = h(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
    for (bad, says) in [
        (
            "alloc,budget=5",
            "alloc: unknown parameter \"budget\"; known: parallelism",
        ),
        ("alloc,parallelism=0", "parallelism must be at least 1"),
        (
            "alloc-ls,parallelism=2,no_parallelism=1",
            "parallelism does not go with no_parallelism",
        ),
        (
            "alloc,tolerance=1e-20",
            "the frame tolerance must lie in [1e-12, 1)",
        ),
        ("alloc-ls,samples=0", "samples takes 1 to 1024, not 0"),
        ("alloc,samples=1025", "samples takes 1 to 1024, not 1025"),
        (
            "alloc,parallelism=x",
            "expects a non-negative integer below 2^32",
        ),
        (
            "mateha",
            "unknown algorithm \"mateha\"; known: alloc, alloc-ls",
        ),
    ] {
        let e = p(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

/// The effective parameters follow the preset and the keys given.
#[test]
fn parameters_follow_presets_and_keys() {
    let p = |s: &str| parse(s).unwrap().parameters();
    let d = p("multilevel");
    assert_eq!(d["runs"], 2);
    assert_eq!(d["vcycles"], 4);
    assert_eq!(d["coarsening"], "lp");
    assert_eq!(d["coarsening2"], "ordered");
    assert_eq!(d["tries"], 4);
    let s = p("multilevel,preset=strong");
    assert_eq!(
        (s["runs"].as_u64(), s["vcycles"].as_u64()),
        (Some(8), Some(8))
    );
    assert_eq!(
        (s["swaps"].as_u64(), s["coarse_tries"].as_u64()),
        (Some(3), Some(32))
    );
    let f = p("ml,preset=fast,runs=3,coarsening2=none,vcycles=2");
    assert_eq!(
        (f["runs"].as_u64(), f["vcycles"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(f["coarsening"], "ordered");
    assert!(f["coarsening2"].is_null());
    // A key before the preset still edits the preset.
    assert_eq!(p("multilevel,runs=3,preset=strong")["runs"], 3);
    assert_eq!(p("drb,tries=7,refine=on")["tries"], 7);
    assert_eq!(p("drb,tries=7,refine=on")["refine"], true);
    assert_eq!(p("gtwp,saturated=keep")["saturated"], "keep");
    assert_eq!(p("pnp,moves=7")["sa_moves"], 7);
    assert_eq!(p("greedy-perego,variant=paper")["refine_evals"], 0);
    assert_eq!(p("greedy-perego,variant=paper,refine=5")["refine_evals"], 5);
    assert_eq!(p("greedy-perego,endgame=off")["endgame"], 0);
    assert!(p("greedy-perego,g=auto")["degree_radius"].is_null());
    // The preset given apart (--preset) is the same as the key.
    let a = AlgorithmSpec::parse_with_preset("multilevel,vcycles=2", Some("strong")).unwrap();
    assert_eq!(a, parse("multilevel,preset=strong,vcycles=2").unwrap());
    assert!(AlgorithmSpec::parse_with_preset("multilevel,preset=fast", Some("strong")).is_err());
    assert!(AlgorithmSpec::parse_with_preset("block", Some("fast")).is_err());
    // Mistakes name the algorithm and the key.
    for (bad, says) in [
        ("multilevel,runs", "expected key=value"),
        (
            "multilevel,preset=quick",
            "unknown preset \"quick\"; known: default, fast, strong",
        ),
        (
            "multilevel,runs=x",
            "\"runs\" expects a non-negative integer",
        ),
        ("multilevel,coarsening=x", "expects lp or hem or ordered"),
        ("multilevel,groups=2", "expects 0 or 1"),
        (
            "gtwp-fit,saturated=keep",
            "unknown parameter \"saturated\"; known: none",
        ),
        ("gtwp,saturated=maybe", "expects drop or keep"),
        ("subgraph,factor=2", "size_factor must be in (0, 1]"),
        ("pnp,cooling=1", "cooling must be in (0, 1)"),
        (
            "greedy-perego,endgame=some",
            "expects all, off or a non-negative integer",
        ),
        (
            "bogus",
            "unknown algorithm \"bogus\"; known: block, round-robin",
        ),
        ("mateha", "unknown algorithm \"mateha\""),
    ] {
        let e = parse(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

/// The rows the subcommands look up: every family has its names, and a name of one
/// family is unknown to another.
#[test]
fn families_hold_their_algorithms() {
    assert_eq!(
        names(&[Family::Hetero]),
        ["mateha", "mateha-ls", "heft", "heft-ls", "peft"]
    );
    assert_eq!(names(&[Family::Precedence]), ["alloc", "alloc-ls"]);
    assert_eq!(
        find("perego", &[Family::Program]).unwrap().name,
        "greedy-perego"
    );
    assert!(find("heft", &[Family::Static, Family::Program]).is_err());
    let ml = parse("multilevel").unwrap();
    assert_eq!(
        ml.get::<MultilevelMapper>(),
        Some(&MultilevelMapper::default())
    );
    assert!(!ml.honours_deadline() || MultilevelMapper::default().vcycles > 0);
}

/// `docs/algorithms.md` holds the tables the registry generates.
#[test]
fn docs_tables_are_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/algorithms.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let want = doc::with_tables(&text).expect("docs/algorithms.md has the registry markers");
    if std::env::var("TASKMAP_DOCS").as_deref() == Ok("bless") {
        std::fs::write(&path, &want).unwrap();
        panic!("rewrote {}; run again without TASKMAP_DOCS", path.display());
    }
    assert!(
        text == want,
        "docs/algorithms.md is not current: run TASKMAP_DOCS=bless cargo test -p taskmap --test taskmap registry"
    );
}
