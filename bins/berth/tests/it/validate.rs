//! `berth validate`, `berth schema` and `berth assembly` driven as a user would.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn berth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_berth"))
        .args(args)
        .output()
        .expect("run berth")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn example_templates() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("examples/templates"))
        .expect("examples/templates")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "json"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_example_template_is_valid() {
    let files = example_templates();
    assert!(
        files.len() >= 3,
        "expected the bundled examples, found {files:?}"
    );
    for f in files {
        let out = berth(&["validate", f.to_str().expect("utf-8 path")]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            f.display(),
            stdout(&out)
        );
        assert!(stdout(&out).contains(": valid"), "{}", stdout(&out));
    }
}

#[test]
fn validate_with_an_inventory_warns_of_demands_it_holds_no_candidate_for() {
    let dir = tempfile::tempdir().expect("temp dir");
    let t = dir.path().join("t.yaml");
    std::fs::write(
        &t,
        "homing_template_version: 2020-08-13\ndemands:\n  vG:\n    - inventory_provider: aai\n      inventory_type: cloud\n  slice:\n    - {inventory_provider: aai, inventory_type: nsi}\n",
    )
    .expect("write template");
    let inventory = repo().join("examples/slicing/inventory.yaml");
    let inv = inventory.to_str().expect("utf-8 path");
    let out = berth(&[
        "validate",
        "--inventory",
        inv,
        t.to_str().expect("utf-8 path"),
    ]);
    // As `solve` sees it: an empty set of candidates (the plan is `not found`), a warning.
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let text = stdout(&out);
    for part in [
        format!("--> {}:5:23", t.display()),
        "^^^^^ at `demands.vG[0].inventory_type`".to_owned(),
        "warning: no candidate of inventory type `cloud` under provider `aai` exists in the inventory, so demand `vG` finds no plan".to_owned(),
        format!("{}: valid (1 warning)", t.display()),
    ] {
        assert!(text.contains(&part), "{part} in {text}");
    }
    // The same as a table row.
    let out = berth(&[
        "validate",
        "-o",
        "table",
        "--inventory",
        inv,
        t.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let rows: Vec<Vec<String>> = stdout(&out)
        .lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect();
    assert_eq!(
        rows[0],
        ["FILE", "SEVERITY", "LINE:COLUMN", "PATH", "MESSAGE"]
    );
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(
        rows[1][1..4],
        ["warning", "5:23", "demands.vG[0].inventory_type"]
    );
    // Then the inventory itself, checked too.
    assert_eq!(rows[2], [inv, "ok", "valid"]);
    // Every slicing example is valid against the slicing inventory.
    for name in [
        "nsi_reuse",
        "nsi_create",
        "no_nsi",
        "nssi",
        "nssi_unmatched",
        "nst",
    ] {
        let f = repo().join(format!("examples/slicing/{name}.yaml"));
        let out = berth(&[
            "validate",
            "--inventory",
            inv,
            f.to_str().expect("utf-8 path"),
        ]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stdout(&out));
    }
}

const BROKEN: &str = "homing_template_version: 2017-10-10
demands:
  vG:
    - inventory_provider: aai
      inventory_type: cloud
constraints:
  too_far:
    type: distance_to_location
    demands: [vG, ghost]
    properties:
      distance: < 250 kms
      location: nowhere
";

#[test]
fn invalid_template_lists_every_problem_with_positions_and_exits_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("broken.yaml");
    std::fs::write(&path, BROKEN).expect("write");
    // Run in the file's directory so the rendering names `broken.yaml` alone.
    let out = Command::new(env!("CARGO_BIN_EXE_berth"))
        .args(["validate", "broken.yaml"])
        .current_dir(dir.path())
        .env_remove("NO_COLOR")
        .output()
        .expect("run berth");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    // Three independent problems, each with its line, caret, line:column and field path; no
    // color on a pipe.
    expect_test::expect![[r#"
        error: undefined demand `ghost`; expected a demand declared in `demands`
          --> broken.yaml:9:19
          |
        9 |     demands: [vG, ghost]
          |                   ^^^^^ at `constraints.too_far.demands[1]`

        error: invalid distance threshold: unknown unit `kms`; expected one of km, mi, m
           --> broken.yaml:11:23
           |
        11 |       distance: < 250 kms
           |                       ^^^ at `constraints.too_far.properties.distance`

        error: undefined location `nowhere`; expected a location declared in `locations`
           --> broken.yaml:12:17
           |
        12 |       location: nowhere
           |                 ^^^^^^^ at `constraints.too_far.properties.location`

        broken.yaml: invalid (3 errors)
    "#]]
    .assert_eq(&stdout(&out));

    let out = berth(&[
        "validate",
        "--format",
        "json",
        path.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json output");
    assert_eq!(json["valid"], false);
    let diags = json["diagnostics"].as_array().expect("diagnostics");
    assert!(diags.len() >= 3, "{json}");
    for d in diags {
        for key in ["severity", "path", "line", "column", "message"] {
            assert!(d.get(key).is_some(), "missing {key} in {d}");
        }
    }
}

#[test]
fn usage_and_io_errors_exit_2() {
    assert_eq!(
        berth(&["validate", "/nonexistent/template.yaml"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(berth(&["validate"]).status.code(), Some(2));
    assert_eq!(
        berth(&["validate", "-p", "novalue", "x.yaml"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(berth(&["no-such-command"]).status.code(), Some(2));
}

#[test]
fn parameters_override_and_files_are_read_relative_to_the_template() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("t.yaml"),
        "homing_template_version: 2017-10-10
parameters:
  max_km: 100
locations:
  customer_loc: {latitude: 32.89, longitude: -97.04}
demands:
  vG:
    - inventory_provider: aai
      inventory_type: cloud
constraints:
  version:
    type: attribute
    demands: vG
    properties:
      evaluate:
        cloud_region_version: {get_file: version.txt}
  near:
    type: distance_to_location
    demands: vG
    properties:
      distance: {get_param: max_km}
      location: customer_loc
",
    )
    .expect("write");
    std::fs::write(dir.path().join("version.txt"), "1.1").expect("write");
    let t = dir.path().join("t.yaml");
    let out = berth(&[
        "validate",
        "-p",
        "max_km=250",
        t.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    std::fs::remove_file(dir.path().join("version.txt")).expect("remove");
    let out = berth(&["validate", t.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("version.txt"), "{}", stdout(&out));
}

#[test]
fn schema_is_a_json_schema_document() {
    let out = berth(&["schema"]);
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert!(
        json["$schema"]
            .as_str()
            .is_some_and(|s| s.contains("json-schema.org")),
        "{json}"
    );
    assert!(json["properties"]["demands"].is_object(), "{json}");
}

#[test]
fn assembly_examples_validate_and_plan() {
    let streamer_request = [
        "deploymentLocation=dfw1",
        "resourceManager=openstack",
        "tenant_key_name=key1",
        "management-network-name=mgmt",
        "public-network-name=public",
    ];
    for (name, request) in [
        ("h_bta.yaml", &[][..]),
        ("streamer_cluster.yaml", &streamer_request[..]),
    ] {
        let f = repo().join("examples/assemblies").join(name);
        let f = f.to_str().expect("utf-8 path");
        let out = berth(&["assembly", "validate", f]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stdout(&out));
        let mut args = vec!["assembly", "plan", "--format", "json", f];
        for p in request {
            args.extend(["-p", p]);
        }
        let out = berth(&args);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stdout(&out));
        let plan: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json plan");
        assert!(
            plan["lifecycle"].as_array().is_some_and(|l| !l.is_empty()),
            "{plan}"
        );
    }
    // Without its request the streamer cannot be planned: every missing property is named.
    let f = repo().join("examples/assemblies/streamer_cluster.yaml");
    let out = berth(&["assembly", "plan", f.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    for p in ["deploymentLocation", "resourceManager", "tenant_key_name"] {
        assert!(stdout(&out).contains(p), "{}", stdout(&out));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "name: not-an-assembly-name\ncomposition: 7\n").expect("write");
    let out = berth(&["assembly", "validate", bad.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
}

/// Runs `berth validate` on `text` written to a temporary file: exit code and stdout.
fn validate_text(name: &str, text: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write");
    let out = berth(&["validate", path.to_str().expect("utf-8 path")]);
    (
        out.status.code(),
        stdout(&out).replace(&path.display().to_string(), name),
    )
}

#[test]
fn has_issue_12_diagnostics_exit_1_where_solve_would_fail() {
    // No demands: HAS's "Undefined Demand", an error.
    let (code, text) = validate_text("empty.yaml", "homing_template_version: 2017-10-10\n");
    assert_eq!(code, Some(1), "{text}");
    expect_test::expect![[r#"
        error: undefined demand: the template declares no demands; expected at least one under `demands`

        empty.yaml: invalid (1 error)
    "#]]
    .assert_eq(&text);
    // An unclosed flow collection names where it was opened.
    let (code, text) = validate_text(
        "unclosed.yaml",
        "homing_template_version: 2017-10-10\ndemands:\n  vG: [{inventory_provider: aai,\n    inventory_type: cloud}\nconstraints: {}\n",
    );
    assert_eq!(code, Some(1), "{text}");
    expect_test::expect![[r#"
        error: invalid YAML: invalid indentation; the flow sequence `[` opened at 3:7 is never closed (expected `]`)
          --> unclosed.yaml:5:1
          |
        5 | constraints: {}
          | ^^^^^^^^^^^

        unclosed.yaml: invalid (1 error)
    "#]]
    .assert_eq(&text);
    // What only lowering sees (a request unit) is reported by validate too.
    let (code, text) = validate_text(
        "fit.yaml",
        "homing_template_version: 2017-10-10\ndemands: {vG: [{inventory_provider: aai, inventory_type: cloud}]}\nconstraints:\n  cap: {type: vim_fit, demands: [vG], properties: {controller: multicloud, request: {vCPU: 2, Memory: {quantity: 4, unit: GX}}}}\n",
    );
    assert_eq!(code, Some(1), "{text}");
    expect_test::expect![[r#"
        error: `cap` has a bad request: `Memory` has unknown unit `GX`; expected one of B, KB, MB, GB, TB (or KiB, MiB, GiB, TiB)
          --> fit.yaml:4:85
          |
        4 |   cap: {type: vim_fit, demands: [vG], properties: {controller: multicloud, request: {vCPU: 2, Memory: {quantity: 4, unit: GX}}}}
          |                                                                                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ at `constraints.cap.properties.request`

        fit.yaml: invalid (1 error)
    "#]]
    .assert_eq(&text);
    // `optimization: {}` and the multicloud vim_fit shape are valid (and solve).
    let (code, text) = validate_text(
        "ok.yaml",
        "homing_template_version: 2017-10-10\nparameters: {REQUIRED_MEM: 4}\ndemands: {vG: [{inventory_provider: aai, inventory_type: cloud}]}\nconstraints:\n  cap: {type: vim_fit, demands: [vG], properties: {controller: multicloud, request: {vCPU: 2, Memory: {quantity: {get_param: REQUIRED_MEM}, unit: GB}}}}\noptimization: {}\n",
    );
    assert_eq!((code, text.as_str()), (Some(0), "ok.yaml: valid\n"));
}

#[test]
fn an_invalid_inventory_is_shown_like_a_template() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("inv.yaml"),
        "candidates:\n  - candidate_id: a\n    inventory_type: clod\n",
    )
    .expect("write");
    let t = repo().join("examples/templates/vcpe.yaml");
    let out = Command::new(env!("CARGO_BIN_EXE_berth"))
        .args([
            "validate",
            "--inventory",
            "inv.yaml",
            t.to_str().expect("utf-8"),
        ])
        .current_dir(dir.path())
        .output()
        .expect("run berth");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    expect_test::expect![[r#"
        error: unknown inventory_type `clod`; expected one of cloud, service, transport, vfmodule, nssi, nsi, slice_profiles, nst
          --> inv.yaml:3:21
          |
        3 |     inventory_type: clod
          |                     ^^^^ at `candidates[0].inventory_type`

        inv.yaml: invalid inventory
    "#]]
    .assert_eq(&String::from_utf8_lossy(&out.stderr));
}

/// Issue 45.1: `berth validate --inventory` names a capacity key that no registered
/// dimension and no request uses, at its line:column, with what it most likely meant.
#[test]
fn validate_names_capacity_keys_no_request_uses() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("inv.yaml"),
        "candidates:\n  - candidate_id: a\n    inventory_type: cloud\n    capacity: {vcpsu: 16, ram: 16384, sriov_vf: 8}\n",
    )
    .expect("write inventory");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_berth"))
            .args(args)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .output()
            .expect("run berth");
        (out.status.code(), stdout(&out))
    };
    // The inventory alone: every custom key is used by no request.
    let (code, text) = run(&["validate", "--inventory", "inv.yaml"]);
    assert_eq!(code, Some(0), "warnings do not fail: {text}");
    expect_test::expect![[r#"
        warning: capacity `vcpsu` is used by no request; did you mean `vcpu`?
          --> inv.yaml:4:16
          |
        4 |     capacity: {vcpsu: 16, ram: 16384, sriov_vf: 8}
          |                ^^^^^ at `candidates[0].capacity.vcpsu`

        warning: capacity `sriov_vf` is used by no request; it is no known dimension (known: vcpu, ram_mib, disk_gib, instances, addresses)
          --> inv.yaml:4:39
          |
        4 |     capacity: {vcpsu: 16, ram: 16384, sriov_vf: 8}
          |                                       ^^^^^^^^ at `candidates[0].capacity.sriov_vf`

        inv.yaml: valid (2 warnings)
    "#]]
    .assert_eq(&text);
    // With a template whose request uses `sriov_vf` (and `vCPU`), only the typo is left.
    std::fs::write(
        dir.path().join("t.yaml"),
        "homing_template_version: 2017-10-10\ndemands:\n  vG: [{inventory_provider: aai, inventory_type: cloud}]\nconstraints:\n  fit: {type: vim_fit, demands: [vG], properties: {controller: multicloud, request: {vCPU: 2, sriov_vf: 1}}}\n",
    )
    .expect("write template");
    let (code, text) = run(&["validate", "--inventory", "inv.yaml", "t.yaml"]);
    assert_eq!(code, Some(0), "{text}");
    // Both ends of the typo: the request's `vCPU` finds no candidate with `vcpu` ...
    assert!(
        text.contains("warning: request `vCPU` (dimension `vcpu`) names a capacity no candidate of the inventory has, so no candidate fits\n  --> t.yaml:5:86"),
        "{text}"
    );
    assert!(text.contains("t.yaml: valid (1 warning)\n"), "{text}");
    // ... and the inventory's `vcpsu` is used by no request.
    assert!(
        text.contains("warning: capacity `vcpsu` is used by no request; did you mean `vcpu`?\n  --> inv.yaml:4:16"),
        "{text}"
    );
    assert!(!text.contains("sriov_vf` is used"), "{text}");
    assert!(text.contains("inv.yaml: valid (1 warning)"), "{text}");
    // As JSON lines: the inventory is a record with its diagnostics, after the template's.
    let (_, text) = run(&[
        "validate",
        "-o",
        "json",
        "--inventory",
        "inv.yaml",
        "t.yaml",
    ]);
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON record"))
        .collect();
    assert_eq!(records.len(), 2, "{text}");
    let inv = &records[1];
    assert_eq!(inv["file"], "inv.yaml");
    assert_eq!(inv["valid"], true);
    assert_eq!(inv["diagnostics"][0]["line"], 4);
    assert_eq!(inv["diagnostics"][0]["column"], 16);
    assert_eq!(
        inv["diagnostics"][0]["path"],
        "candidates[0].capacity.vcpsu"
    );
    // Two keys of one dimension are an error naming both.
    std::fs::write(
        dir.path().join("dup.yaml"),
        "candidates:\n  - {candidate_id: a, inventory_type: cloud, capacity: {vcpus: 16, VCPU: 8}}\n",
    )
    .expect("write inventory");
    let out = Command::new(env!("CARGO_BIN_EXE_berth"))
        .args(["validate", "--inventory", "dup.yaml"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("run berth");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("error: `vcpus` and `VCPU` both name dimension `vcpu`; expected one of them (`vcpus` is at 2:57)"),
        "{err}"
    );
    assert!(err.contains("dup.yaml:2:68"), "{err}");
}

/// Issue 51.6: `validate --inventory` refuses what `solve` refuses against that inventory
/// (one code path: `plan`'s resolution and lowering): a `host_name` it cannot resolve.
#[test]
fn validate_with_an_inventory_refuses_a_host_name_it_cannot_resolve() {
    let dir = tempfile::tempdir().expect("temp dir");
    let t = dir.path().join("t.yaml");
    let write = |host: &str| {
        std::fs::write(
            &t,
            format!("homing_template_version: 2017-10-10\ndemands:\n  vG:\n    - {{inventory_provider: aai, inventory_type: cloud}}\nlocations:\n  customer_loc:\n    host_name: {host}\nconstraints:\n  near:\n    type: distance_to_location\n    demands: [vG]\n    properties: {{distance: < 100 km, location: customer_loc}}\n"),
        )
        .expect("write template");
    };
    let inv = dir.path().join("inv.yaml");
    std::fs::write(
        &inv,
        "host_locations:\n  known-host: {latitude: 1.0, longitude: 2.0}\ncandidates:\n  - {candidate_id: c1, inventory_type: cloud, latitude: 1.0, longitude: 2.0}\n",
    )
    .expect("write inventory");
    let (t_arg, inv_arg) = (t.display().to_string(), inv.display().to_string());
    write("nowhere-host");
    let validate = berth(&["validate", "--inventory", &inv_arg, &t_arg]);
    let solve = berth(&["solve", &t_arg, "--inventory", &inv_arg]);
    assert_eq!(validate.status.code(), Some(1), "{}", stdout(&validate));
    assert_eq!(solve.status.code(), Some(1));
    let text = stdout(&validate);
    for part in [
        format!("--> {}:7:16", t.display()),
        "at `locations.customer_loc.host_name`".to_owned(),
        "error: host_name `nowhere-host` is not a host location of the inventory; `near` needs the coordinates of location `customer_loc`".to_owned(),
    ] {
        assert!(text.contains(&part), "{part} in {text}");
    }
    // Without the inventory nothing says the host is unknown; with a host it knows, both pass.
    assert_eq!(berth(&["validate", &t_arg]).status.code(), Some(0));
    write("known-host");
    let validate = berth(&["validate", "--inventory", &inv_arg, &t_arg]);
    assert_eq!(validate.status.code(), Some(0), "{}", stdout(&validate));
    let solve = berth(&["solve", &t_arg, "--inventory", &inv_arg]);
    assert_eq!(solve.status.code(), Some(0), "{}", stdout(&solve));
}
