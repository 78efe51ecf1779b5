//! Cloud selection policy (seed 002) applied during homing: dropped regions in the triage,
//! the net value as an objective term, realized intents in the placements.

use std::sync::Arc;

use berth_cloudpolicy::Workload;
use berth_engine::{CloudPolicyInput, PlanOptions, Status};

use crate::{chosen, opts, run};

const POLICY: &str = r#"
service: cloudSelectionPolicy
policyName: vgw-burstable
content:
  vnfc: VGW
  cloud-cost-evaluation: true
  cloud-deployment-intent:
    Infrastructure Resource Isolation for VNF: Burstable QoS
    Infrastructure Resource Isolation for VNF - Burstable QoS Oversubscription Percentage: 25
resources: [vgw]
"#;

const OWNERS: &str = "
owners:
  cheap: {burstable_qos: {percentages: [25, 50]}}
  mid: {burstable_qos: {percentages: [25]}}
  dear: {burstable_qos: {percentages: [25]}}
  nobursting: {guaranteed_qos: true}
";

/// The seed's worked example: `$100, 100 km`, `$150, 80 km`, `$50, 190 km`.
const COSTS: &str = "
unit: USD/hour
default_fixed_cost: 1000
owners:
  dear: {fixed_cost: 150}
  mid: {fixed_cost: 100}
  cheap: {fixed_cost: 50}
";

/// Regions on the equator east of the customer at 0,0 (1 degree = 111.195 km).
const REGIONS: &str = "
candidates:
  - {candidate_id: a, inventory_type: cloud, cloud_owner: mid, latitude: 0.0, longitude: 0.9,
     attributes: {is_public: true}}
  - {candidate_id: b, inventory_type: cloud, cloud_owner: dear, latitude: 0.0, longitude: 0.72,
     attributes: {is_public: true}}
  - {candidate_id: c, inventory_type: cloud, cloud_owner: cheap, latitude: 0.0, longitude: 1.71,
     attributes: {is_public: true}}
  - {candidate_id: n, inventory_type: cloud, cloud_owner: nobursting, latitude: 0.0, longitude: 0.1,
     attributes: {is_public: true}}
";

const TEMPLATE: &str = "
homing_template_version: 2017-10-10
locations:
  customer: {latitude: 0.0, longitude: 0.0}
demands:
  vgw: [{inventory_provider: aai, inventory_type: cloud}]
  other: [{inventory_provider: aai, inventory_type: cloud}]
optimization:
  minimize:
    sum:
      - {distance_between: [customer, vgw]}
";

/// Great-circle distance along the equator from 0,0 (the engine's earth radius).
fn km(longitude: f64) -> f64 {
    6371.0088 * longitude.to_radians()
}

fn with_policy() -> PlanOptions {
    let mut input = CloudPolicyInput::parse(POLICY, OWNERS, COSTS).expect("valid documents");
    input.workload = Workload {
        instance_type: Some("flavor-xyz".into()),
        ..Workload::default()
    };
    PlanOptions {
        cloud_policy: Some(Arc::new(input)),
        ..opts()
    }
}

#[test]
fn owner_without_the_intent_is_dropped_and_named_in_the_triage() {
    let without = run(TEMPLATE, REGIONS, &opts()).unwrap();
    assert_eq!(chosen(&without, 0, "vgw"), "n");

    let out = run(TEMPLATE, REGIONS, &with_policy()).unwrap();
    assert_eq!(out.status, Status::Solved);
    let t = &out.triage["vgw"];
    assert_eq!(t.candidates, 4);
    assert_eq!(
        t.removed.get("n").map(String::as_str),
        Some("cloud-policy:intent_unsupported")
    );
    assert_eq!(t.removed.len(), 1);
    assert_ne!(chosen(&out, 0, "vgw"), "n");
    // The policy names `vgw` only: the other demand keeps every region.
    assert!(out.triage["other"].removed.is_empty());
    assert!(
        !out.solutions[0].placements["other"].contains_key("realized_intent"),
        "{:?}",
        out.solutions[0].placements["other"]
    );
}

#[test]
fn net_value_alone_picks_the_seeds_region() {
    // Without an optimization section the net value is the whole objective.
    let t = TEMPLATE.replace(
        "optimization:\n  minimize:\n    sum:\n      - {distance_between: [customer, vgw]}\n",
        "",
    );
    assert!(!t.contains("optimization"));
    let without = run(&t, REGIONS, &opts()).unwrap();
    assert_eq!(without.solutions[0].objective, 0.0);

    // Net values 2*cost + km: a = 300.08, b = 380.06, c = 290.14; the seed picks c.
    let out = run(&t, REGIONS, &with_policy()).unwrap();
    assert!(out.optimal);
    assert_eq!(chosen(&out, 0, "vgw"), "c");
    let expected = 2.0 * 50.0 + km(1.71);
    let objective = out.solutions[0].objective;
    assert!(
        (objective - expected).abs() < 1e-6,
        "{objective} vs {expected}"
    );

    let p = &out.solutions[0].placements["vgw"];
    let ri = &p["realized_intent"];
    assert_eq!(ri["cloud_owner"], "cheap");
    assert_eq!(ri["region_id"], "c");
    assert_eq!(ri["flavor"], "flavor-xyz-25-percent-oversubscription");
    assert_eq!(ri["capacity"]["check"], "public_cloud");
    assert_eq!(p["deployment_cost"]["total"], 50.0);
    let nv = p["cloud_net_value"].as_f64().expect("net value");
    assert!((nv - expected).abs() < 1e-6, "{nv}");
}

#[test]
fn net_value_changes_the_chosen_region_without_counting_distance_twice() {
    // Nearest among the seed's three once `n` is excluded: `b` at 80 km.
    let no_n = TEMPLATE.replace(
        "vgw: [{inventory_provider: aai, inventory_type: cloud}]",
        "vgw: [{inventory_provider: aai, inventory_type: cloud, excluded_candidates: [{candidate_id: [n]}]}]",
    );
    let nearest = run(&no_n, REGIONS, &opts()).unwrap();
    assert_eq!(chosen(&nearest, 0, "vgw"), "b");
    assert!((nearest.solutions[0].objective - km(0.72)).abs() < 1e-6);

    // The template weighs the distance customer-vgw itself, so the policy adds only its cost
    // part: a = 100.08 + 200, b = 80.06 + 300, c = 190.14 + 100; the seed's choice, c.
    let out = run(TEMPLATE, REGIONS, &with_policy()).unwrap();
    assert!(out.optimal);
    assert_eq!(chosen(&out, 0, "vgw"), "c");
    let expected = km(1.71) + 2.0 * 50.0;
    let objective = out.solutions[0].objective;
    assert!(
        (objective - expected).abs() < 1e-6,
        "{objective} vs {expected}"
    );
    // The placement shows the policy's net value and the part the objective took.
    let p = &out.solutions[0].placements["vgw"];
    let nv = p["cloud_net_value"].as_f64().expect("net value");
    let term = p["cloud_objective_term"].as_f64().expect("objective term");
    assert!((nv - (2.0 * 50.0 + km(1.71))).abs() < 1e-6, "{nv}");
    assert!((term - 2.0 * 50.0).abs() < 1e-6, "{term}");
}

#[test]
fn distance_to_another_location_keeps_the_policys_distance() {
    // The objective measures from `office`, not from the policy's `customer`: the two
    // distances are different quantities and both count.
    let t = TEMPLATE
        .replace(
            "customer: {latitude: 0.0, longitude: 0.0}",
            "customer: {latitude: 0.0, longitude: 0.0}\n  office: {latitude: 0.0, longitude: 2.0}",
        )
        .replace("[customer, vgw]", "[office, vgw]");
    let mut input = CloudPolicyInput::parse(POLICY, OWNERS, COSTS).expect("valid documents");
    input.location = Some("customer".into());
    let o = PlanOptions {
        cloud_policy: Some(Arc::new(input)),
        ..opts()
    };
    let out = run(&t, REGIONS, &o).unwrap();
    // office distance + 2 * cost + customer distance: a = 122.4 + 200 + 100.1,
    // b = 142.3 + 300 + 80.1, c = 32.2 + 100 + 190.1; c.
    assert_eq!(chosen(&out, 0, "vgw"), "c");
    let expected = km(2.0 - 1.71) + 2.0 * 50.0 + km(1.71);
    let objective = out.solutions[0].objective;
    assert!(
        (objective - expected).abs() < 1e-6,
        "{objective} vs {expected}"
    );
    let p = &out.solutions[0].placements["vgw"];
    assert_eq!(p["cloud_objective_term"], p["cloud_net_value"]);
}

#[test]
fn maximizing_subtracts_the_net_value() {
    let t = TEMPLATE.replace("minimize:", "maximize:");
    // km - 2 * cost (distance is the template's): a = 100.08 - 200, b = 80.06 - 300,
    // c = 190.14 - 100 = 90.14.
    let out = run(&t, REGIONS, &with_policy()).unwrap();
    assert_eq!(chosen(&out, 0, "vgw"), "c");
    let expected = km(1.71) - 100.0;
    assert!((out.solutions[0].objective - expected).abs() < 1e-6);
}

#[test]
fn private_region_without_capacity_is_dropped() {
    let inv = REGIONS.replace(
        "cloud_owner: cheap, latitude: 0.0, longitude: 1.71,\n     attributes: {is_public: true}}",
        "cloud_owner: cheap, latitude: 0.0, longitude: 1.71,\n     capacity: {vcpu: 2}}",
    );
    let mut input = CloudPolicyInput::parse(POLICY, OWNERS, COSTS).expect("valid documents");
    input.workload.demand.insert("vcpu".into(), 4);
    let o = PlanOptions {
        cloud_policy: Some(Arc::new(input)),
        ..opts()
    };
    let out = run(TEMPLATE, &inv, &o).unwrap();
    assert_eq!(
        out.triage["vgw"].removed.get("c").map(String::as_str),
        Some("cloud-policy:insufficient_capacity")
    );
    assert_eq!(chosen(&out, 0, "vgw"), "a");
}

#[test]
fn invalid_documents_and_unknown_location_are_invalid_input() {
    let e = CloudPolicyInput::parse("service: x", "owners: 3", COSTS).unwrap_err();
    assert_eq!(e.code(), berth_engine::ErrorCode::InvalidInput);
    let msg = e.to_string();
    assert!(msg.contains("owners"), "{msg}");

    let mut input = CloudPolicyInput::parse(POLICY, OWNERS, COSTS).expect("valid documents");
    input.location = Some("nowhere".into());
    let o = PlanOptions {
        cloud_policy: Some(Arc::new(input)),
        ..opts()
    };
    let e = run(TEMPLATE, REGIONS, &o).unwrap_err();
    assert!(e.to_string().contains("`nowhere`"), "{e}");
}
