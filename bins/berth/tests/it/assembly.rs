//! `berth assembly scale|validate|plan` driven as a user would: the seed 003 examples'
//! scale policy on current metrics, and what validate and plan must agree on.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn berth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_berth"))
        .args(args)
        .output()
        .expect("run berth")
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/assemblies")
        .join(name)
        .display()
        .to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(o)))
}

/// Writes `text` to a file in `dir`.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

/// The seed's h_bta: `scaleStreamer` scales B (1..=4) on A.load, out above 90, in below 10,
/// smoothing 4 (its property defaults).
#[test]
fn scale_reports_the_decision_and_the_smoothing_window() {
    let f = example("h_bta.yaml");
    let o = berth(&["assembly", "scale", &f, "--metric", "A.load=95,96,97"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(
        stdout(&o),
        "scaleStreamer (A.load, 3 samples): hold B at 1: 3 of 4 breaches above 90 so far\n"
    );
    let o = berth(&[
        "assembly",
        "scale",
        &f,
        "--metric",
        "A.load=95,96,97,98",
        "-o",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v = json(&o);
    let p = &v[0];
    assert_eq!(p["policy"], "scaleStreamer");
    assert_eq!(
        (p["nodes"].as_u64(), p["result"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(p["decisions"][0]["ScaleOut"]["at"], 3);
    assert_eq!(p["smoothing"]["needed"], 4);
    assert_eq!(p["smoothing"]["breaches"], 0);
    // The request's properties reach the policy: smoothing 2, from 3 nodes, scaling in.
    let o = berth(&[
        "assembly",
        "scale",
        &f,
        "-p",
        "scale_smoothing=2",
        "--nodes",
        "B=3",
        "--metric",
        "A.load=5,4",
        "-o",
        "json",
    ]);
    let v = json(&o);
    assert_eq!(v[0]["result"], 2, "{v}");
    // Samples from a file, then the command line's.
    let dir = tempfile::tempdir().expect("tempdir");
    let m = write(dir.path(), "m.yaml", "A.load: [95, 96]\n");
    let o = berth(&[
        "assembly",
        "scale",
        &f,
        "--metrics",
        m.to_str().expect("utf-8"),
        "--metric",
        "A.load=97,98",
        "-o",
        "json",
    ]);
    assert_eq!(json(&o)[0]["samples"], 4);
    assert_eq!(json(&o)[0]["result"], 2);
}

#[test]
fn scale_refuses_metrics_and_components_no_policy_has() {
    let f = example("h_bta.yaml");
    let o = berth(&[
        "assembly", "scale", &f, "--metric", "A.lod=95", "--nodes", "A=2",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("no scale policy reads metric `A.lod`; expected one of A.load")
            && out.contains("no scale policy scales component `A`; expected one of B"),
        "{out}"
    );
    let o = berth(&["assembly", "scale", &f, "--metric", "A.load=ninety"]);
    assert_eq!(o.status.code(), Some(2));
    let dir = tempfile::tempdir().expect("tempdir");
    let m = write(dir.path(), "m.yaml", "A.load: [95, high]\n");
    let o = berth(&[
        "assembly",
        "scale",
        &f,
        "--metrics",
        m.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("expected a number; found `high`"),
        "{}",
        stdout(&o)
    );
}

/// Issue 51.6: a descriptor whose plan always fails on a lifecycle cycle is not valid: both
/// commands refuse it with the same diagnostic (the plan's own check).
#[test]
fn validate_refuses_the_lifecycle_cycle_plan_refuses() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cyclic = write(
        dir.path(),
        "cyclic.yaml",
        "name: assembly::rel::1.0\ndescription: two relationships waiting on each other\ncomposition:\n  A:\n    type: resource::a::1.0\n  B:\n    type: resource::b::1.0\nrelationships:\n  ab:\n    source-capabilities: [A.out]\n    target-requirements: [B.in]\n    source-state: Active\n    target-state: Inactive\n  ba:\n    source-capabilities: [B.out]\n    target-requirements: [A.in]\n    source-state: Active\n    target-state: Inactive\n",
    );
    let f = cyclic.display().to_string();
    let validate = berth(&["assembly", "validate", &f]);
    let plan = berth(&["assembly", "plan", &f]);
    assert_eq!(validate.status.code(), Some(1), "{}", stdout(&validate));
    assert_eq!(plan.status.code(), Some(1));
    let want = "lifecycle has a cycle: create ba (B-1 -> A-1) -> install A-1";
    let said = |o: &Output| format!("{}{}", stdout(o), String::from_utf8_lossy(&o.stderr));
    assert!(said(&validate).contains(want), "{}", said(&validate));
    assert!(
        said(&validate).contains("cyclic.yaml:14:3"),
        "{}",
        said(&validate)
    );
    assert!(said(&plan).contains(want), "{}", said(&plan));
}

/// Issue 51.8: a bad default count is a warning a request fixes (`-p count=2` plans two
/// instances); a request setting a read-only property is ignored with a warning.
#[test]
fn a_request_fixes_a_bad_default_and_read_only_properties_are_ignored() {
    let dir = tempfile::tempdir().expect("temp dir");
    let f = write(
        dir.path(),
        "counted.yaml",
        "name: assembly::counted::1.0\ndescription: a count from a property\nproperties:\n  count:\n    default: abc\n  ip:\n    read-only: true\n    value: 10.0.0.1\ncomposition:\n  web:\n    type: resource::web::1.0\n    quantity: ${count}\n",
    )
    .display()
    .to_string();
    let validate = berth(&["assembly", "validate", &f]);
    assert_eq!(validate.status.code(), Some(0), "{}", stdout(&validate));
    assert!(
        stdout(&validate).contains("default `abc` of `count` is not a whole number"),
        "{}",
        stdout(&validate)
    );
    let plan = berth(&[
        "assembly",
        "plan",
        &f,
        "-p",
        "count=2",
        "-p",
        "ip=1.2.3.4",
        "-o",
        "json",
    ]);
    assert_eq!(plan.status.code(), Some(0), "{}", stdout(&plan));
    let v = json(&plan);
    assert_eq!(
        v["components"][0]["instances"].as_array().map(Vec::len),
        Some(2),
        "{v}"
    );
    assert_eq!(v["properties"]["ip"]["Known"], "10.0.0.1", "{v}");
    assert!(
        v["warnings"]
            .to_string()
            .contains("property `ip` is read-only; the request's value is ignored"),
        "{v}"
    );
    let plan = berth(&["assembly", "plan", &f]);
    assert_eq!(plan.status.code(), Some(1));
}
