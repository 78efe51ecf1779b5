//! `-o json|yaml|table` on solve, place, validate, assembly plan and schema: the same data in
//! every format, `--format` kept as the older spelling, no progress drawn on a pipe.

use std::path::Path;
use std::process::{Command, Output};

use serde::Deserialize as _;
use serde_json::Value;

fn berth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_berth"))
        .args(args)
        .output()
        .expect("run berth")
}

fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
        .display()
        .to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(o)))
}

/// The data without its timing (`stats.elapsed_ms` differs run to run).
fn untimed(mut v: Value) -> Value {
    if let Some(m) = v.as_object_mut() {
        m.remove("stats");
    }
    v
}

fn yaml(o: &Output) -> Value {
    serde_yaml::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not YAML ({e}): {}", stdout(o)))
}

/// Cells of a table: columns are separated by at least two spaces.
fn rows(o: &Output) -> Vec<Vec<String>> {
    stdout(o)
        .lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

fn solve(format: &[&str]) -> Output {
    let t = repo("examples/templates/vcpe.yaml");
    let inv = repo("examples/inventory.yaml");
    let mut args = vec!["solve", t.as_str(), "--inventory", inv.as_str()];
    args.extend(format);
    let o = berth(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

#[test]
fn solve_prints_one_plan_in_every_format() {
    let j = untimed(json(&solve(&["-o", "json"])));
    assert_eq!(j["status"], "solved");
    assert_eq!(j["optimal"], true);
    assert_eq!(
        j["solutions"][0]["placements"]["vG"]["candidate_id"],
        "dfw1"
    );
    // `--format` is the older spelling of `-o`; `--output` the long one.
    assert_eq!(untimed(json(&solve(&["--format", "json"]))), j);
    assert_eq!(untimed(json(&solve(&["--output", "json"]))), j);
    assert_eq!(untimed(yaml(&solve(&["-o", "yaml"]))), j);
    // The table is the plan rendering, the default.
    let table = solve(&["-o", "table"]);
    // (the last line is the run time)
    let untimed_text = |o: &Output| {
        let t = stdout(o);
        t.lines()
            .filter(|l| !l.ends_with(" ms"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(untimed_text(&table), untimed_text(&solve(&[])));
    let r = rows(&table);
    assert_eq!(r[0], ["status: solved (optimal)"]);
    let header = r
        .iter()
        .position(|row| row.first().is_some_and(|c| c == "DEMAND"))
        .expect("plan table");
    assert_eq!(r[header], ["DEMAND", "CANDIDATE", "LOCATION", "COST"]);
    assert_eq!(r[header + 2], ["vG", "dfw1", "dfw1", "100"]);
    // Nothing drawn on stderr when it is not a terminal.
    assert!(
        !table.stderr.contains(&0x1b),
        "{}",
        String::from_utf8_lossy(&table.stderr)
    );
}

fn place(format: &[&str]) -> Output {
    let t = repo("examples/heat/hadoop-5vm.json");
    let topo = repo("examples/heat/hadoop-topology.yaml");
    let mut args = vec![
        "place",
        t.as_str(),
        "--topology",
        topo.as_str(),
        "--time-limit",
        "0.2",
    ];
    args.extend(format);
    let o = berth(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

#[test]
fn place_prints_the_placement_in_every_format() {
    let j = json(&place(&[]));
    assert_eq!(j["status"], "placed");
    assert_eq!(j["hosts_used"], 4);
    // Runs under a deadline may differ in counters and proof; the answer's shape may not.
    let same = |v: &Value| {
        assert_eq!(
            (&v["status"], &v["hosts_used"]),
            (&j["status"], &j["hosts_used"])
        );
        let keys = |v: &Value| {
            v["placements"]
                .as_object()
                .map(|m| m.keys().cloned().collect::<Vec<_>>())
        };
        assert_eq!(keys(v), keys(&j));
    };
    same(&json(&place(&["-o", "json"])));
    same(&yaml(&place(&["-o", "yaml", "--quiet"])));
    let r = rows(&place(&["-o", "table"]));
    assert_eq!(r[0], ["RESOURCE", "LEAF"]);
    let placements = j["placements"].as_object().expect("placements");
    // Rows, a blank line, the summary.
    assert_eq!(r.len(), 1 + placements.len() + 2);
    assert_eq!(
        r[r.len() - 1][0],
        "status placed (optimal), objective 4, hosts used 4 (lower bound 4)"
    );
    for row in &r[1..=placements.len()] {
        assert_eq!(placements[&row[0]], row[1], "{row:?}");
    }
}

#[test]
fn validate_prints_records_in_every_format() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "homing_template_version: 2020-08-13\ndemands:\n  vG:\n    - {inventory_provider: aai, inventory_type: clod}\n",
    )
    .expect("write");
    let good = repo("examples/templates/vcpe.yaml");
    let bad = bad.to_str().expect("utf-8").to_owned();
    let run = |o: &str| {
        let out = berth(&["validate", "-o", o, &good, &bad]);
        assert_eq!(out.status.code(), Some(1));
        out
    };
    // JSON: one compact object per file and line, as before.
    let out = run("json");
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["valid"], true);
    assert_eq!(lines[1]["valid"], false);
    assert_eq!(
        lines[1]["diagnostics"][0]["path"],
        "demands.vG[0].inventory_type"
    );
    assert_eq!(lines[1]["diagnostics"][0]["line"], 4);
    // YAML: one document per file, the same data.
    let out = run("yaml");
    let docs: Vec<Value> = serde_yaml::Deserializer::from_slice(&out.stdout)
        .map(|d| Value::deserialize(d).expect("a YAML document"))
        .collect();
    assert_eq!(docs, lines);
    // Table: a row per diagnostic, `ok` for a clean file.
    let r = rows(&run("table"));
    assert_eq!(r[0], ["FILE", "SEVERITY", "LINE:COLUMN", "PATH", "MESSAGE"]);
    assert_eq!(r[1][..3], [good.as_str(), "ok", "valid"]);
    assert_eq!(
        r[2][..4],
        [
            bad.as_str(),
            "error",
            "4:49",
            "demands.vG[0].inventory_type"
        ]
    );
    assert!(
        r[2][4].starts_with("unknown inventory_type `clod`"),
        "{:?}",
        r[2]
    );
}

#[test]
fn assembly_plan_and_schema_print_yaml_too() {
    let f = repo("examples/assemblies/h_bta.yaml");
    let j = json(&berth(&["assembly", "plan", &f, "-o", "json"]));
    let y = yaml(&berth(&["assembly", "plan", &f, "-o", "yaml"]));
    assert_eq!(j, y);
    assert_eq!(j["assembly"], "h_bta");
    let schema = yaml(&berth(&["schema", "-o", "yaml"]));
    assert_eq!(schema, json(&berth(&["schema"])));
    assert!(schema["properties"]["demands"].is_object());
}

#[test]
fn an_unknown_format_is_a_usage_error() {
    let o = berth(&["schema", "-o", "xml"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("xml") && err.contains("json, yaml"), "{err}");
}

/// `berth ARGS` on a pseudo-terminal (util-linux `script`): what a user sees, stdout and
/// stderr together.
fn on_a_terminal(args: &[String]) -> String {
    let cmd = std::iter::once(env!("CARGO_BIN_EXE_berth").to_owned())
        .chain(args.iter().cloned())
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env_remove("NO_COLOR")
        .env("TERM", "xterm")
        .output()
        .expect("run script (util-linux)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn progress_is_drawn_on_a_terminal_unless_quiet() {
    let args: Vec<String> = [
        "place",
        &repo("examples/heat/ha-clusters.yaml"),
        "--topology",
        &repo("examples/heat/room-rack-pm.yaml"),
        "--time-limit",
        "2",
        "-o",
        "table",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let seen = on_a_terminal(&args);
    // The spinner's line (shown after a moment; the greedy placement's cost is known by then): best cost and host bound, then the placement.
    assert!(seen.contains("placing: best "), "{seen}");
    assert!(
        seen.contains(", bound ") && seen.contains("(gap "),
        "{seen}"
    );
    assert!(seen.contains("RESOURCE"), "{seen}");
    let mut quiet = args.clone();
    quiet.push("--quiet".into());
    let seen = on_a_terminal(&quiet);
    assert!(!seen.contains("placing"), "{seen}");
    assert!(seen.contains("RESOURCE"), "{seen}");
}
