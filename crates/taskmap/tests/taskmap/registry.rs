//! The registry: every row parses, its documented keys are its fields, every alias sets
//! what its long name sets, presets and keys overlay as documented, and the generated
//! tables of `docs/algorithms.md` are current.

use std::path::Path;

use taskmap::multilevel::config::MultilevelMapper;
use taskmap::registry::{doc, find, names, Family, ALGORITHMS};
use taskmap::{AlgorithmSpec, Mapper};

fn parse(s: &str) -> Result<AlgorithmSpec, String> {
    s.parse::<AlgorithmSpec>().map_err(|e| e.to_string())
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

/// Every row of the static and program families parses by its name and its aliases, its
/// documented keys are exactly its fields, and each key changes what it names.
#[test]
fn every_row_parses_and_documents_its_fields() {
    for row in ALGORITHMS.iter().filter(|r| r.family.maps_task_graphs()) {
        let spec = parse(row.name).unwrap();
        assert_eq!(spec.name(), row.name);
        for alias in row.aliases {
            assert_eq!(parse(alias).unwrap(), spec, "{alias}");
        }
        let params = spec.parameters();
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
        for d in ps.docs.iter().filter(|d| Some(d.name) != ps.preset_key) {
            let v = other_value(&params[d.name], d.name);
            // combines and batch apply to the memetic mode only.
            let name = match d.name {
                "combines" | "batch" => format!("{},population=2", row.name),
                _ => row.name.to_string(),
            };
            let set = parse(&format!("{name},{}={v}", d.name)).unwrap_or_else(|e| panic!("{e}"));
            assert_ne!(set, spec, "{}: {}={v} changes nothing", row.name, d.name);
            for alias in d.aliases {
                let by_alias = parse(&format!("{name},{alias}={v}")).unwrap();
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
