//! `berth solve` driven as a user would: exit codes, JSON contract, table output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}

fn keys(v: &serde_json::Value) -> Vec<&str> {
    v.as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect()
}

fn counterexample() -> [String; 3] {
    [
        repo("examples/templates/has_counterexample.yaml"),
        "--inventory".to_owned(),
        repo("crates/berth-engine/tests/fixtures/has_counterexample_inventory.yaml"),
    ]
}

#[test]
fn has_counterexample_finds_222_km() {
    let [t, flag, inv] = counterexample();
    let o = berth(&["solve", &t, &flag, &inv, "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = json(&o);
    assert_eq!(v["status"], "solved");
    assert_eq!(v["optimal"], true);
    let objective = v["solutions"][0]["objective"].as_f64().expect("objective");
    assert!((objective - 222.0).abs() < 1e-6, "{objective}");
    // Proven: the bound is the objective, the gap 0.
    assert_eq!(v["bound"].as_f64(), Some(objective));
    assert_eq!(v["gap"].as_f64(), Some(0.0));
    assert_eq!(
        v["solutions"][0]["placements"]["vGMuxInfra"]["candidate_id"],
        "mux-y"
    );
    assert_eq!(
        v["solutions"][0]["placements"]["vG"]["candidate_id"],
        "vg-y"
    );
}

#[test]
fn json_shape_is_the_contract() {
    let o = berth(&[
        "solve",
        &repo("examples/templates/vcpe.yaml"),
        "--inventory",
        &repo("examples/inventory.yaml"),
        "--format",
        "json",
        "--solutions",
        "2",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = json(&o);
    assert_eq!(
        keys(&v),
        [
            "status",
            "optimal",
            "bound",
            "gap",
            "message",
            "solutions",
            "triage",
            "stats"
        ]
    );
    assert_eq!(v["solutions"].as_array().map(Vec::len), Some(2));
    let s = &v["solutions"][0];
    assert_eq!(keys(s), ["objective", "placements"]);
    assert_eq!(keys(&s["placements"]), ["vGMuxInfra", "vG"]);
    assert_eq!(keys(&s["placements"]["vG"])[0], "candidate_id");
    assert!(s["placements"]["vG"]["latitude"].is_number());
    assert!(v["solutions"][0]["objective"].as_f64() <= v["solutions"][1]["objective"].as_f64());
    assert_eq!(keys(&v["triage"]["vG"]), ["candidates", "removed"]);
    assert_eq!(v["triage"]["vG"]["candidates"], 41);
    assert_eq!(v["triage"]["vG"]["removed"]["lon1"], "distance_vg");
    assert_eq!(keys(&v["stats"]), ["nodes", "elapsed_ms"]);
    assert!(v["stats"]["nodes"].as_u64().is_some());
}

#[test]
fn infeasible_exits_1_and_names_the_constraints() {
    let o = berth(&[
        "solve",
        &repo("examples/templates/vcpe.yaml"),
        "--inventory",
        &repo("examples/inventory.yaml"),
        "-p",
        "mux_max_distance=< 0 km",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(v["status"], "not found");
    assert_eq!(v["optimal"], false);
    let msg = v["message"].as_str().expect("message");
    assert!(msg.contains("distance_vgmux"), "{msg}");
    assert_eq!(v["solutions"], serde_json::json!([]));
    assert_eq!(
        v["triage"]["vGMuxInfra"]["removed"]["dfw2"],
        "distance_vgmux"
    );
}

#[test]
fn invalid_template_exits_1_with_diagnostics() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t: PathBuf = dir.path().join("bad.yaml");
    std::fs::write(&t, "homing_template_version: 2017-10-10\ndemands:\n  vG: [{inventory_provider: aai, inventory_type: clowd}]\n").expect("write");
    let o = berth(&[
        "solve",
        &t.display().to_string(),
        "--inventory",
        &repo("examples/inventory.yaml"),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("error") && stderr.contains("clowd"),
        "{stderr}"
    );
    let v = json(&o);
    assert_eq!(v["status"], "error");
    assert_eq!(
        keys(&v),
        [
            "status",
            "optimal",
            "bound",
            "gap",
            "message",
            "solutions",
            "triage",
            "stats"
        ]
    );
}

#[test]
fn invalid_inventory_exits_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inv = dir.path().join("inv.yaml");
    std::fs::write(
        &inv,
        "candidates:\n  - {candidate_id: x, inventory_type: cloud, latitude: 123}\n",
    )
    .expect("write");
    let [t, ..] = counterexample();
    let o = berth(&["solve", &t, "--inventory", &inv.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("latitude"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn usage_and_io_errors_exit_2() {
    let [t, flag, inv] = counterexample();
    assert_eq!(
        berth(&["solve", &t, &flag, "/nonexistent/inventory.yaml"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        berth(&["solve", "/nonexistent/template.yaml", &flag, &inv])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        berth(&["solve", &t, &flag, &inv, "--solutions", "0"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        berth(&["solve", &t, &flag, &inv, "--time-limit", "-1"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(berth(&["solve", &t]).status.code(), Some(2));
}

#[test]
fn table_output_and_limits() {
    let [t, flag, inv] = counterexample();
    let o = berth(&["solve", &t, &flag, &inv, "--time-limit", "30"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("status: solved (optimal)\n"), "{out}");
    assert!(out.contains("\nbound 222 (gap 0%)\n"), "{out}");
    assert!(out.contains("vGMuxInfra  mux-y"), "{out}");
    // Not a terminal: no spinner on stderr.
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = berth(&[
        "solve",
        &t,
        &flag,
        &inv,
        "--node-limit",
        "2",
        "--format",
        "json",
    ]);
    let v = json(&o);
    assert_eq!(
        (&v["status"], &v["optimal"]),
        (&serde_json::json!("solved"), &serde_json::json!(false))
    );
    // Stopped: the bound is proven all the same, at or below the plan, with its gap.
    let objective = v["solutions"][0]["objective"].as_f64().expect("objective");
    let bound = v["bound"].as_f64().expect("a bound");
    let gap = v["gap"].as_f64().expect("a gap");
    assert!(bound <= objective && bound <= 222.0, "{bound} {objective}");
    assert_eq!(gap, (objective - bound) / objective.abs().max(1.0));
    let o = berth(&["solve", &t, &flag, &inv, "--node-limit", "2", "-o", "yaml"]);
    let y: serde_json::Value = serde_yaml::from_slice(&o.stdout).expect("yaml output");
    assert_eq!((&y["bound"], &y["gap"]), (&v["bound"], &v["gap"]));
}

fn cloud_args(policy: &str) -> Vec<String> {
    vec![
        "solve".to_owned(),
        repo("examples/cloud-policy/homing.yaml"),
        "--inventory".to_owned(),
        repo("examples/inventory.yaml"),
        "--cloud-policy".to_owned(),
        repo(policy),
        "--cloud-owners".to_owned(),
        repo("examples/cloud-policy/homing-owners.yaml"),
        "--cloud-costs".to_owned(),
        repo("examples/cloud-policy/homing-costs.yaml"),
        "--cloud-workloads".to_owned(),
        repo("examples/cloud-policy/homing-workloads.yaml"),
        "--format".to_owned(),
        "json".to_owned(),
    ]
}

#[test]
fn cloud_policy_drops_owners_and_prices_regions() {
    let args = cloud_args("examples/cloud-policy/homing-policy.json");
    // Without the policy the nearest region wins: att-aic's dfw1, at the customer.
    let plain: Vec<&str> = args[..4].iter().map(String::as_str).collect();
    let o = berth(&[plain.as_slice(), &["--format", "json"]].concat());
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    assert_eq!(
        v["solutions"][0]["placements"]["vgw"]["candidate_id"],
        "dfw1"
    );
    assert_eq!(v["solutions"][0]["objective"], 0.0);

    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = berth(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = json(&o);
    assert_eq!(v["optimal"], true);
    // att-aic costs 100 (net 200 at 0 km); aws prices the vGW's c5.xlarge at 28, + 5 for
    // burstable-qos-25, so its Dallas region dfw2 (26 km away) nets 66 + 26 km and wins.
    let p = &v["solutions"][0]["placements"]["vgw"];
    assert_eq!(p["candidate_id"], "dfw2");
    assert_eq!(p["cloud_owner"], "aws");
    assert_eq!(p["realized_intent"]["cloud_owner"], "aws");
    assert_eq!(p["realized_intent"]["region_id"], "dfw2");
    assert_eq!(p["realized_intent"]["isolation"]["qos"], "burstable");
    assert_eq!(
        p["realized_intent"]["isolation"]["oversubscription_percent"],
        25
    );
    // aws's instance type for the vGW (the workload file), realized as itself under
    // Burstable QoS (the owner file); dfw2's tenant has room for 4 vCPU and 8 GiB.
    assert_eq!(p["realized_intent"]["flavor"], "c5.xlarge");
    assert_eq!(p["realized_intent"]["capacity"]["check"], "tenant");
    assert_eq!(
        p["deployment_cost"]["source"]["source"],
        "owner_instance_type"
    );
    assert_eq!(p["deployment_cost"]["total"], 33.0);
    let net = p["cloud_net_value"].as_f64().expect("net value");
    let km = net - 66.0;
    assert!(km > 20.0 && km < 30.0, "{km}");
    // The template already weighs the customer-vgw distance, so the objective adds only the
    // policy's cost part: distance counts once.
    assert_eq!(p["cloud_objective_term"], 66.0);
    let objective = v["solutions"][0]["objective"].as_f64().expect("objective");
    assert!((objective - (km + 66.0)).abs() < 1e-9, "{objective}");

    let removed = &v["triage"]["vgw"]["removed"];
    assert_eq!(v["triage"]["vgw"]["candidates"], 43);
    assert_eq!(removed.as_object().map(|m| m.len()), Some(14));
    // The ONAP regions' owner (CloudOwner) is not in the owner catalog.
    assert_eq!(
        removed["ean1"]
            .as_str()
            .map(|r| r.starts_with("cloud-policy:")),
        Some(true)
    );
    assert_eq!(removed["hou2"], "cloud-policy:intent_unsupported"); // azure
    assert_eq!(removed["sfo1"], "cloud-policy:oversubscription_not_offered"); // gcp
}

#[test]
fn cloud_policy_flags_come_together() {
    let mut args = cloud_args("examples/cloud-policy/homing-policy.json");
    args.drain(6..10); // keep --cloud-policy, drop --cloud-owners and --cloud-costs
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = berth(&args);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--cloud-owners") && err.contains("--cloud-costs"),
        "{err}"
    );
}

#[test]
fn invalid_cloud_policy_is_a_domain_failure() {
    let args = cloud_args("examples/cloud-policy/homing-owners.yaml");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = berth(&args);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(v["status"], "error");
    let msg = v["message"].as_str().expect("message");
    assert!(msg.contains("missing required field `content`"), "{msg}");
}

#[test]
fn slicing_examples_solve_against_the_slicing_inventory() {
    let inventory = repo("examples/slicing/inventory.yaml");
    for (name, code, status, demand, inventory_type) in [
        ("nsi_reuse", 0, "solved", "urllc_slice", "nsi"),
        ("nsi_create", 0, "solved", "urllc_slice", "slice_profiles"),
        ("no_nsi", 0, "solved", "urllc_slice", "slice_profiles"),
        ("nssi", 0, "solved", "urllc_core", "nssi"),
        ("nssi_unmatched", 1, "not found", "urllc_core", ""),
        ("nst", 0, "solved", "urllc_template", "nst"),
    ] {
        let out = berth(&[
            "solve",
            &repo(&format!("examples/slicing/{name}.yaml")),
            "--inventory",
            &inventory,
            "--format",
            "json",
        ]);
        assert_eq!(out.status.code(), Some(code), "{name}");
        let v = json(&out);
        assert_eq!(v["status"], status, "{name}: {v}");
        if code == 0 {
            assert_eq!(
                v["solutions"][0]["placements"][demand]["inventory_type"], inventory_type,
                "{name}: {v}"
            );
        }
    }
}

#[test]
fn threads_return_the_plan_of_one_thread() {
    let [t, flag, inv] = counterexample();
    let plan = |threads: &str| {
        let o = berth(&[
            "solve",
            &t,
            &flag,
            &inv,
            "--threads",
            threads,
            "--format",
            "json",
        ]);
        assert_eq!(o.status.code(), Some(0), "--threads {threads}");
        let v = json(&o);
        assert_eq!(v["optimal"], true, "--threads {threads}");
        v["solutions"].clone()
    };
    let one = plan("1");
    assert_eq!(plan("2"), one);
    // 0: one thread per core.
    assert_eq!(plan("0"), one);
    for bad in ["two", "257", "-1"] {
        let arg = format!("--threads={bad}");
        let o = berth(&["solve", &t, &flag, &inv, &arg]);
        assert_eq!(o.status.code(), Some(2), "--threads {bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("--threads") && err.contains("from 0 (one per core) to 256"),
            "{err}"
        );
    }
}

/// Issue 45.1: an inventory naming capacity as Nova, Placement, HAS and Promise do fits a
/// request naming it as HAS does; a capacity key no request uses is named on stderr.
#[test]
fn capacity_keys_of_any_dialect_fit_requests_of_any_other() {
    let dir = tempfile::tempdir().expect("temp dir");
    let t = dir.path().join("t.yaml");
    std::fs::write(
        &t,
        "homing_template_version: 2017-10-10\ndemands:\n  vG:\n    - {inventory_provider: aai, inventory_type: cloud}\nconstraints:\n  fit:\n    type: region_fit\n    demands: [vG]\n    properties: {controller: multicloud, request: {vCPU: 8, Memory: {quantity: 16, unit: GB}, Storage: 100}}\n",
    )
    .expect("write template");
    let inv = dir.path().join("inv.yaml");
    let solve = |capacity: &str| {
        std::fs::write(
            &inv,
            format!(
                "candidates:\n  - candidate_id: small\n    inventory_type: cloud\n    capacity: {{vcpus: 4, ram: 65536, disk: 500}}\n  - candidate_id: big\n    inventory_type: cloud\n    capacity: {capacity}\n"
            ),
        )
        .expect("write inventory");
        let o = berth(&[
            "solve",
            &t.display().to_string(),
            "--inventory",
            &inv.display().to_string(),
            "--format",
            "json",
        ]);
        (
            o.status.code(),
            json(&o),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    for capacity in [
        "{vcpus: 16, ram: 16384, disk: 100}",
        "{VCPU: 16, MEMORY_MB: 16384, DISK_GB: 100}",
        "{vCPU: 16, Memory: {quantity: 16, unit: GB}, Storage: \"100 GB\"}",
        "{cores: 16, ram: \"16 GiB\", gigabytes: 100}",
    ] {
        let (code, v, stderr) = solve(capacity);
        assert_eq!(code, Some(0), "{capacity}: {v} {stderr}");
        assert_eq!(v["status"], "solved", "{capacity}");
        assert_eq!(
            v["solutions"][0]["placements"]["vG"]["candidate_id"], "big",
            "{capacity}"
        );
        assert!(stderr.is_empty(), "{capacity}: {stderr}");
    }
    // One MiB short: no plan, and the fit constraint is named.
    let (code, v, _) = solve("{vcpus: 16, ram: 16383, disk: 100}");
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["status"], "not found", "{v}");
    assert_eq!(v["triage"]["vG"]["removed"]["big"], "fit", "{v}");
    // A misspelt key is a custom dimension no request uses: named with line:column.
    let (_, v, stderr) = solve("{vcpsu: 16, ram: 16384, disk: 100}");
    assert_eq!(v["status"], "not found", "{v}");
    assert!(
        stderr.contains("candidates[1].capacity.vcpsu (7:16): capacity `vcpsu` is used by no request; did you mean `vcpu`?"),
        "{stderr}"
    );
}

/// Seed 002's own documents (instance 2, vCPE with Guaranteed QoS; the operator files of
/// `examples/cloud-policy`; the seed's flavor example as the workload) on three regions:
/// the nearest is private and short of the 16 vCPU, azure's eastus prices flavor-xyz
/// itself.
#[test]
fn cloud_policy_checks_private_capacity_prices_instance_types_and_maps_the_flavor() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write");
        p.display().to_string()
    };
    let template = write(
        "t.yaml",
        "homing_template_version: 2017-10-10\nlocations:\n  customer: {latitude: 0.0, longitude: 0.0}\ndemands:\n  vgw: [{inventory_provider: aai, inventory_type: cloud}]\noptimization:\n  minimize:\n    sum:\n      - {distance_between: [customer, vgw]}\n",
    );
    let inventory = write(
        "inv.yaml",
        "candidates:
  - {candidate_id: near, inventory_type: cloud, cloud_owner: vmware-dc, location_id: dfw1,
     latitude: 0.0, longitude: 0.1, capacity: {vcpu: 8, ram_mib: 65536}}
  - {candidate_id: mid, inventory_type: cloud, cloud_owner: vmware-dc, location_id: dfw2,
     latitude: 0.0, longitude: 0.5, capacity: {vcpu: 32, ram_mib: 65536}}
  - {candidate_id: east, inventory_type: cloud, cloud_owner: azure, location_id: eastus,
     latitude: 0.0, longitude: 0.2, attributes: {is_public: true}}
",
    );
    let base = vec![
        "solve".to_owned(),
        template,
        "--inventory".to_owned(),
        inventory,
        "--cloud-policy".to_owned(),
        repo("examples/cloud-policy/instance2-vcpe-guaranteed.json"),
        "--cloud-owners".to_owned(),
        repo("examples/cloud-policy/owners.yaml"),
        "--cloud-costs".to_owned(),
        repo("examples/cloud-policy/costs.yaml"),
        "--solutions".to_owned(),
        "3".to_owned(),
        "--format".to_owned(),
        "json".to_owned(),
    ];
    let run = |extra: &[String]| {
        let args: Vec<&str> = base.iter().chain(extra).map(String::as_str).collect();
        let o = berth(&args);
        (o.status.code(), json(&o))
    };
    let (code, v) = run(&[
        "--cloud-workloads".to_owned(),
        repo("examples/cloud-policy/workloads.yaml"),
    ]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(
        v["triage"]["vgw"]["removed"]["near"],
        "cloud-policy:insufficient_capacity"
    );
    let plans: Vec<&serde_json::Value> = v["solutions"]
        .as_array()
        .expect("solutions")
        .iter()
        .map(|s| &s["placements"]["vgw"])
        .collect();
    assert_eq!(plans.len(), 2, "{v}");
    // vmware-dc's fixed 12 against azure's eastus price of flavor-xyz, 44 (costs.yaml).
    let by = |id: &str| {
        *plans
            .iter()
            .find(|p| p["candidate_id"] == id)
            .unwrap_or_else(|| panic!("{id} in {v}"))
    };
    let (mid, east) = (by("mid"), by("east"));
    assert_eq!(mid["deployment_cost"]["base"], 12.0);
    assert_eq!(mid["realized_intent"]["capacity"]["tenant"], "mid");
    assert_eq!(east["deployment_cost"]["base"], 44.0);
    assert_eq!(
        east["deployment_cost"]["source"]["source"],
        "region_instance_type"
    );
    assert_eq!(east["realized_intent"]["capacity"]["check"], "public_cloud");
    for p in [mid, east] {
        assert_eq!(
            p["realized_intent"]["flavor"], "flavor-xyz-no-oversubscription",
            "{p}"
        );
    }
    assert_eq!(
        plans[0]["candidate_id"], "mid",
        "2 * 12 + 55.6 km beats 2 * 44 + 22.2 km"
    );

    // Without the workload file nothing says what the vGW reserves: private regions cannot
    // be checked and are dropped by name; the public one stays, at the fixed cost.
    let (code, v) = run(&[]);
    assert_eq!(code, Some(0), "{v}");
    for id in ["near", "mid"] {
        assert_eq!(
            v["triage"]["vgw"]["removed"][id], "cloud-policy:unknown_demand",
            "{v}"
        );
    }
    let p = &v["solutions"][0]["placements"]["vgw"];
    assert_eq!(p["candidate_id"], "east");
    assert_eq!(p["deployment_cost"]["base"], 30.0);
    assert_eq!(p["realized_intent"]["flavor"], serde_json::Value::Null);
}

/// Issue 45.4: an empty Heat stack in a `capability` constraint is a valid stack that needs
/// nothing: every candidate fits, with a warning naming the constraint's template; a
/// misspelt server type in the stack is refused by name.
#[test]
fn an_empty_capability_stack_fits_every_candidate_with_a_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inv = dir.path().join("inv.yaml");
    std::fs::write(
        &inv,
        "candidates:\n  - candidate_id: a\n    inventory_type: cloud\n  - candidate_id: b\n    inventory_type: cloud\n",
    )
    .expect("write inventory");
    let t = dir.path().join("t.yaml");
    let solve = |stack: &str| {
        std::fs::write(
            &t,
            format!("homing_template_version: 2017-10-10\ndemands:\n  vG:\n    - {{inventory_provider: aai, inventory_type: cloud}}\nconstraints:\n  cap:\n    type: capability\n    demands: [vG]\n    properties:\n      template: {stack}\n"),
        )
        .expect("write template");
        let o = berth(&[
            "solve",
            &t.display().to_string(),
            "--inventory",
            &inv.display().to_string(),
            "--format",
            "json",
        ]);
        (
            o.status.code(),
            json(&o),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, v, stderr) = solve("{heat_template_version: 2016-10-14, resources: {}}");
    assert_eq!(code, Some(0), "{v} {stderr}");
    assert_eq!(v["status"], "solved", "{v}");
    assert_eq!(
        v["solutions"][0]["placements"]["vG"]["candidate_id"], "a",
        "{v}"
    );
    assert!(
        stderr.contains("t.yaml:10:17")
            && stderr.contains("at `constraints.cap.properties.template`")
            && stderr
                .contains("the Heat stack declares no OS::Nova::Server; it fits every candidate"),
        "{stderr}"
    );
    let (code, v, stderr) = solve(
        "{heat_template_version: 2016-10-14, resources: {s: {type: OS::Nova::Servr, properties: {flavor: m1.small}}}}",
    );
    assert_ne!(code, Some(0), "{v} {stderr}");
    let all = format!("{v} {stderr}");
    assert!(
        all.contains("resource `s` of the Heat stack has unknown type `OS::Nova::Servr`; did you mean `OS::Nova::Server`?"),
        "{all}"
    );
}

/// Issue 45.5: ONAP CSIT's slicing requests on an inventory without slicing candidates end
/// `not found` as in HAS (exit 1, not an error), the triage saying no candidate of the type
/// exists.
#[test]
fn slicing_requests_without_slicing_candidates_are_not_found_with_a_triage_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let inv = dir.path().join("inv.yaml");
    std::fs::write(
        &inv,
        "candidates:\n  - {candidate_id: c1, inventory_type: cloud}\n",
    )
    .expect("write inventory");
    for (name, demand, ty) in [
        ("nssi", "urllc_core", "nssi"),
        ("nssi_unmatched", "urllc_core", "nssi"),
        ("nst", "urllc_template", "nst"),
    ] {
        let o = berth(&[
            "solve",
            &repo(&format!("examples/slicing/{name}.yaml")),
            "--inventory",
            &inv.display().to_string(),
            "--format",
            "json",
        ]);
        let v = json(&o);
        assert_eq!(o.status.code(), Some(1), "{name}: {v}");
        assert_eq!(v["status"], "not found", "{name}: {v}");
        let line = format!(
            "demands.{demand}[0]: no candidate of inventory type `{ty}` under provider `aai` exists in the inventory"
        );
        assert_eq!(
            v["triage"][demand]["absent"][0],
            line.as_str(),
            "{name}: {v}"
        );
        assert_eq!(v["triage"][demand]["candidates"], 0, "{name}: {v}");
    }
}
