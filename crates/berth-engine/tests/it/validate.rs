//! `validate` and `plan` agree: every template `validate` accepts (the template crate's
//! fixtures, the bundled examples and the shapes ONAP HAS/OSDF send) lowers and solves against
//! the example inventory without an input error; templates with problems only lowering can
//! see are refused by `validate` with a path and line:column.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use berth_engine::{ErrorCode, LatencyModel, PlanOptions, Status, plan, validate};
use berth_inventory::StaticProvider;
use berth_template::LoadOptions;

use crate::{chosen, opts};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example_inventory() -> StaticProvider {
    let text = std::fs::read_to_string(root().join("examples/inventory.yaml")).unwrap();
    StaticProvider::parse(&text).unwrap()
}

fn files_in(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "json"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// HAS/OSDF request shapes (written for these tests from the public ONAP docs).
const CUSTOMER: &str = "homing_template_version: 2017-10-10
parameters: {customer_lat: 45.40, customer_long: -71.14, REQUIRED_MEM: 4, REQUIRED_DISK: 100}
locations:
  customer_loc: {latitude: {get_param: customer_lat}, longitude: {get_param: customer_long}}
demands:
  vG: [{inventory_provider: aai, inventory_type: cloud}]
";

fn has_shape(body: &str) -> String {
    format!("{CUSTOMER}{body}")
}

const VIM_FIT: &str = "constraints:
  near: {type: distance_to_location, demands: [vG], properties: {distance: < 100 km, location: customer_loc}}
  check_cloud_capacity:
    type: vim_fit
    demands: [vG]
    properties:
      controller: multicloud
      request:
        vCPU: 10
        Memory: {quantity: {get_param: REQUIRED_MEM}, unit: GB}
        Storage: {quantity: {get_param: REQUIRED_DISK}, unit: GB}
optimization: {minimize: {sum: [{distance_between: [customer_loc, vG]}]}}
";

fn hpa(vdu2_features: &str, objective: &str) -> String {
    has_shape(&format!(
        "constraints:
  near: {{type: distance_to_location, demands: [vG], properties: {{distance: < 100 km, location: customer_loc}}}}
  hpa_constraint:
    type: hpa
    demands: [vG]
    properties:
      evaluate:
        - id: vgw_ctl
          type: vnfc
          directives: [{{type: flavor_directives, attributes: [{{attribute_name: label_ctl, attribute_value: ''}}]}}]
          flavorProperties:
            - {{hpa-feature: basicCapabilities, hpa-version: v1, architecture: generic, mandatory: 'True', directives: [],
               hpa-feature-attributes: [{{hpa-attribute-key: numVirtualCpu, hpa-attribute-value: '4', operator: '>='}},
                                        {{hpa-attribute-key: virtualMemSize, hpa-attribute-value: '8', operator: '>=', unit: GB}}]}}
        - id: vgw_data
          type: vnfc
          directives: [{{type: flavor_directives, attributes: [{{attribute_name: label_data, attribute_value: ''}}]}}]
          flavorProperties:
{vdu2_features}
optimization: {objective}
"
    ))
}

const DPDK_OPTIONAL: &str = "            - {hpa-feature: basicCapabilities, hpa-version: v1, architecture: generic, mandatory: 'True', directives: [],
               hpa-feature-attributes: [{hpa-attribute-key: numVirtualCpu, hpa-attribute-value: '8', operator: '>='}]}
            - {hpa-feature: ovsDpdk, hpa-version: v1, architecture: generic, mandatory: 'False', score: '30', directives: [],
               hpa-feature-attributes: [{hpa-attribute-key: dataProcessingAccelerationLibrary, hpa-attribute-value: v18.02, operator: '='}]}
";

fn shapes() -> Vec<(String, String)> {
    vec![
        ("vim_fit".into(), has_shape(VIM_FIT)),
        ("empty_optimization".into(), has_shape("optimization: {}\n")),
        (
            "hpa_multi_objective".into(),
            hpa(
                DPDK_OPTIONAL,
                "{minimize: {sum: [{product: [100, {distance_between: [customer_loc, vG]}]}, {product: [200, {hpa_score: [vG]}]}]}}",
            ),
        ),
        (
            "hpa_distance".into(),
            hpa(
                DPDK_OPTIONAL,
                "{minimize: {sum: [{distance_between: [customer_loc, vG]}]}}",
            ),
        ),
    ]
}

fn load_options(name: &str) -> LoadOptions {
    match name {
        "seed_get_file.yaml" => LoadOptions::default()
            .file(
                "stack_template.yaml",
                "heat_template_version: 2016-10-14\nresources: {}\n",
            )
            .file("http://hostname/environment.yaml", "parameters: {}\n"),
        _ => LoadOptions::default(),
    }
}

#[test]
fn everything_validate_accepts_solves_without_an_input_error() {
    let mut all = files_in(&root().join("crates/berth-template/tests/fixtures"));
    all.extend(files_in(&root().join("examples/templates")));
    all.extend(shapes());
    all.extend(files_in(&root().join("examples/slicing")));
    // One deployment serving every type: the example regions and the slicing candidates.
    let main = std::fs::read_to_string(root().join("examples/inventory.yaml")).unwrap();
    let slicing = std::fs::read_to_string(root().join("examples/slicing/inventory.yaml")).unwrap();
    let (_, slices) = slicing.split_once("candidates:\n").unwrap();
    let (head, rest) = main.split_once("candidates:\n").unwrap();
    let (slices, _) = slices.split_once("\n\n").unwrap_or((slices, ""));
    let inventory = StaticProvider::parse(&format!("{head}candidates:\n{slices}\n{rest}")).unwrap();
    let o = PlanOptions {
        latency: Some(LatencyModel::per_km(0.01)),
        ..opts()
    };
    let mut accepted = 0;
    let mut report = String::new();
    for (name, text) in &all {
        let lo = load_options(name);
        if validate(text, &lo)
            .iter()
            .any(berth_doc::Diagnostic::is_error)
        {
            continue;
        }
        accepted += 1;
        let t = berth_template::load(text, &lo).unwrap();
        // Bandwidth needs a topology: the deployment, not the template, supplies it.
        if let Err(e) = plan(&t, &inventory, &o)
            && e.code() == ErrorCode::InvalidInput
            && !e.to_string().contains("no topology is loaded")
        {
            report.push_str(&format!("{name}: validate accepted, solve refused: {e}\n"));
        }
    }
    assert!(report.is_empty(), "{report}");
    assert!(accepted >= 30, "only {accepted} templates accepted");
}

#[test]
fn validate_reports_what_lowering_refuses_with_its_position() {
    let bad = has_shape(
        "constraints:
  fit:
    type: vim_fit
    demands: [vG]
    properties:
      controller: multicloud
      request: {vCPU: 10, Memory: {quantity: 4, unit: GiB}, Storage: {quantity: 1, unit: furlongs}}
optimization: {minimize: {sum: [{hpa_score: [vG]}]}}
",
    );
    let rendered: Vec<String> = validate(&bad, &LoadOptions::default())
        .iter()
        .map(|d| format!("{} {d}", d.severity))
        .collect();
    expect_test::expect![[r#"
        [
            "warning optimization (14:15): hpa_score of demand `vG` but no hpa constraint applies to it; expected an hpa constraint on that demand",
            "error constraints.fit.properties.request (13:16): `fit` has a bad request: `Storage` has unknown unit `furlongs`; expected one of B, KB, MB, GB, TB (or KiB, MiB, GiB, TiB)",
            "error optimization (14:15): `optimization` is not supported: hpa_score(vG) needs an hpa constraint on demand `vG`",
        ]
    "#]]
    .assert_debug_eq(&rendered);
    // The same template given to `plan` fails for the same reasons.
    let t = berth_template::load(&bad, &LoadOptions::default()).unwrap();
    let e = plan(&t, &example_inventory(), &opts()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidInput);
    assert!(e.to_string().contains("furlongs"), "{e}");
}

#[test]
fn has_shapes_reach_the_expected_regions() {
    let inventory = example_inventory();
    let run = |text: &str| {
        let t = berth_template::load(text, &LoadOptions::default()).unwrap();
        plan(&t, &inventory, &opts()).unwrap()
    };
    // vim_fit: lmg1 is nearest but has 8 vCPUs; ean1 has room for 10 vCPU, 4 GB, 100 GB.
    let out = run(&has_shape(VIM_FIT));
    assert_eq!(out.status, Status::Solved, "{}", out.message);
    assert_eq!(chosen(&out, 0, "vG"), "ean1");
    assert_eq!(out.triage["vG"].removed["lmg1"], "check_cloud_capacity");
    // `optimization: {}` is no objective: a feasible plan, objective 0.
    let out = run(&has_shape("optimization: {}\n"));
    assert_eq!(out.status, Status::Solved, "{}", out.message);
    assert_eq!(out.solutions[0].objective, 0.0);
    // HPA by distance alone: the nearest region whose flavors meet the mandatory features.
    let by_distance = hpa(
        DPDK_OPTIONAL,
        "{minimize: {sum: [{distance_between: [customer_loc, vG]}]}}",
    );
    let out = run(&by_distance);
    assert_eq!(chosen(&out, 0, "vG"), "lmg1");
    let p = &out.solutions[0].placements["vG"];
    assert_eq!(p["flavor_map"]["label_ctl"], "m1.medium");
    assert_eq!(p["flavor_map"]["label_data"], "m1.xlarge");
    assert_eq!(p["hpa_score"], 0.0);
    assert_eq!(
        p["directives"]["directives"][1]["directives"][0]["attributes"],
        serde_json::json!([
            {"attribute_name": "label_data", "attribute_value": "m1.xlarge"},
            {"attribute_name": "flavorId", "attribute_value": "f-lmg-xlarge"}
        ])
    );
    // With the HPA score weighed in (minimize: a higher score is better), the region offering
    // DPDK wins although it is farther: 100 * 59.15 km - 200 * 30 < 100 * 28.13 km - 0.
    let multi = hpa(
        DPDK_OPTIONAL,
        "{minimize: {sum: [{product: [100, {distance_between: [customer_loc, vG]}]}, {product: [200, {hpa_score: [vG]}]}]}}",
    );
    let out = run(&multi);
    assert_eq!(out.status, Status::Solved, "{}", out.message);
    assert_eq!(chosen(&out, 0, "vG"), "shb1");
    let p = &out.solutions[0].placements["vG"];
    assert_eq!(p["hpa_score"], 30.0);
    assert_eq!(p["flavor_map"]["label_data"], "onap.hpa.dpdk.32");
    assert!(out.optimal);
    // Deterministic: the same request gives the same plan.
    assert_eq!(run(&multi).solutions, out.solutions);
}

#[test]
fn has_latency_between_and_fits_without_request_solve_as_in_has() {
    let inventory = example_inventory();
    let run = |text: &str| {
        let t = berth_template::load(text, &LoadOptions::default()).unwrap();
        plan(&t, &inventory, &opts()).unwrap()
    };
    // No topology and no latency model: HAS's latency score, the air distance.
    let out = run(&has_shape(
        "optimization: {minimize: {sum: [{latency_between: [customer_loc, vG]}]}}\n",
    ));
    assert_eq!(out.status, Status::Solved, "{}", out.message);
    assert_eq!(chosen(&out, 0, "vG"), "lmg1");
    assert!(
        (out.solutions[0].objective - 28.06).abs() < 0.01,
        "{}",
        out.solutions[0].objective
    );
    // A fit constraint without `request` (optional in HAS) asks for nothing.
    let out = run(&has_shape(
        "constraints:\n  v: {type: vim_fit, demands: vG, properties: {controller: multicloud}}\noptimization: {minimize: {sum: [{distance_between: [customer_loc, vG]}]}}\n",
    ));
    assert_eq!(chosen(&out, 0, "vG"), "lmg1");
}

#[test]
fn osdf_demand_fields_on_cloud_demands_are_echoed_not_filtered() {
    let text = CUSTOMER.replace(
        "vG: [{inventory_provider: aai, inventory_type: cloud}]",
        "vG: [{inventory_provider: aai, inventory_type: cloud, service_type: vCPE, service_id: vcpe-1,
         service_resource_id: res-9, passthrough_attributes: {tenant-id: t1},
         filtering_attributes: {service-type: vCPE, equipment-role: vG, model-invariant-id: m-1,
           model-version-id: v-1, cloud_owner: CloudOwner}}]",
    ) + "optimization: {minimize: {sum: [{distance_between: [customer_loc, vG]}]}}\n";
    let t = berth_template::load(&text, &LoadOptions::default()).unwrap();
    let out = plan(&t, &example_inventory(), &opts()).unwrap();
    assert_eq!(out.status, Status::Solved, "{}", out.message);
    let p = &out.solutions[0].placements["vG"];
    assert_eq!(p["candidate_id"], "lmg1");
    assert_eq!(p["service_resource_id"], "res-9");
    assert_eq!(
        p["passthrough_attributes"],
        serde_json::json!({"tenant-id": "t1"})
    );
    // Only cloud_owner filtered: the 38 other regions, nothing for the service-only keys.
    assert_eq!(out.triage["vG"].candidates, 41);
    assert_eq!(out.triage["vG"].removed.len(), 38);
    assert!(
        out.triage["vG"]
            .removed
            .values()
            .all(|r| r == "inventory:attributes")
    );
}

#[test]
fn has_attribute_constraint_semantics() {
    let inventory = example_inventory();
    let run = |evaluate: &str| {
        let text = has_shape(&format!(
            "constraints:\n  a: {{type: attribute, demands: [vG], properties: {{evaluate: {{{evaluate}}}}}}}\noptimization: {{minimize: {{sum: [{{distance_between: [customer_loc, vG]}}]}}}}\n"
        ));
        let t = berth_template::load(&text, &LoadOptions::default()).unwrap();
        let out = plan(&t, &inventory, &opts()).unwrap();
        (
            out.status,
            out.solutions
                .first()
                .map(|s| s.placements["vG"]["candidate_id"].clone()),
            out.triage["vG"].removed.len(),
        )
    };
    let id = |s: &str| Some(serde_json::json!(s));
    // An attribute wanted as "" is not checked (HAS skips it).
    assert_eq!(
        run("hypervisor: '', sriov: ''"),
        (Status::Solved, id("lmg1"), 0)
    );
    // HAS's names for candidate fields.
    assert_eq!(
        run("complex: {any: [shb1_sherbrooke_c1, nowhere]}"),
        (Status::Solved, id("shb1"), 40)
    );
    assert_eq!(run("cloud-region: ean1"), (Status::Solved, id("ean1"), 40));
    assert_eq!(
        run("cloud_version: '1.1', country: USA"),
        (Status::Solved, id("nyc1"), 28)
    );
    // A wanted value nobody has: not found, every candidate removed by `a`.
    assert_eq!(run("cloud_type: vmware"), (Status::NotFound, None, 41));
}

#[test]
fn has_demand_region_and_complex_are_region_and_clli_ids() {
    let text = CUSTOMER.replace(
        "vG: [{inventory_provider: aai, inventory_type: cloud}]",
        "vG: [{inventory_provider: aai, inventory_type: cloud, region: shb1}]\n  vH: [{inventory_provider: aai, inventory_type: cloud, complex: ESANQC01}]",
    );
    let t = berth_template::load(&text, &LoadOptions::default()).unwrap();
    let out = plan(&t, &example_inventory(), &opts()).unwrap();
    assert_eq!(out.status, Status::Solved, "{}", out.message);
    assert_eq!(chosen(&out, 0, "vG"), "shb1");
    assert_eq!(chosen(&out, 0, "vH"), "ean1");
    assert_eq!(out.triage["vG"].removed.len(), 40);
}
