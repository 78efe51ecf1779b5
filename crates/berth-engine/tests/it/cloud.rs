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

// ---- what the workload is: the seed's flavor example through a workload file -----------

/// The seed's flavor example, "flavor-xyz" with 16 vCPU and 32 GB, by demand name.
const WORKLOADS: &str = "
workloads:
  vgw:
    instance_type: flavor-xyz
    instance_types: {mid: flavor-mid}
    demand: {vcpu: 16, ram_mib: 32768}
";

/// Seed step 5b: owners priced per instance type (per region first), fixed cost otherwise.
const TYPED_COSTS: &str = "
unit: USD/hour
default_fixed_cost: 1000
owners:
  dear: {fixed_cost: 150}
  mid: {fixed_cost: 100, instance_types: {flavor-mid: 70}}
  cheap:
    fixed_cost: 50
    instance_types: {flavor-xyz: 60}
    regions: {c: {instance_types: {flavor-xyz: 40}}}
";

/// `a`, `b` and `c` as before but private, with their tenants' free capacity; `c` (the
/// seed's pick) lacks room for 16 vCPU.
const PRIVATE: &str = "
candidates:
  - {candidate_id: a, inventory_type: cloud, cloud_owner: mid, latitude: 0.0, longitude: 0.9,
     capacity: {vcpu: 32, ram_mib: 65536}}
  - {candidate_id: b, inventory_type: cloud, cloud_owner: dear, latitude: 0.0, longitude: 0.72,
     capacity: {vcpu: 16, ram_mib: 32768}}
  - {candidate_id: c, inventory_type: cloud, cloud_owner: cheap, latitude: 0.0, longitude: 1.71,
     capacity: {vcpu: 0, ram_mib: 0}}
";

fn policy_with(costs: &str, workloads: Option<&str>) -> PlanOptions {
    let input =
        CloudPolicyInput::parse_with(POLICY, OWNERS, costs, workloads).expect("valid documents");
    PlanOptions {
        cloud_policy: Some(Arc::new(input)),
        ..opts()
    }
}

#[test]
fn the_workload_files_demand_drops_a_private_region_without_room() {
    let out = run(
        TEMPLATE,
        PRIVATE,
        &policy_with(TYPED_COSTS, Some(WORKLOADS)),
    )
    .unwrap();
    assert_eq!(out.status, Status::Solved);
    assert_eq!(
        out.triage["vgw"].removed.get("c").map(String::as_str),
        Some("cloud-policy:insufficient_capacity")
    );
    // a: 2 * 70 (mid's price of its own instance type) + 100 km; b: 2 * 150 + 80 km.
    assert_eq!(chosen(&out, 0, "vgw"), "a");
    let p = &out.solutions[0].placements["vgw"];
    let ri = &p["realized_intent"];
    assert_eq!(ri["flavor"], "flavor-mid-25-percent-oversubscription");
    assert_eq!(ri["capacity"]["check"], "tenant");
    assert_eq!(ri["capacity"]["tenant"], "a");
    assert_eq!(p["deployment_cost"]["base"], 70.0);
    assert_eq!(
        p["deployment_cost"]["source"]["source"],
        "owner_instance_type"
    );
}

#[test]
fn instance_types_are_priced_per_region_and_mapped_to_the_flavor() {
    // All public: the prices decide. a: 2 * 70 (mid's price of its own type) + 100 km = 240,
    // c: 2 * 40 (its region's price of flavor-xyz) + 190 = 270, b: 2 * 150 + 80 = 380.
    let out = run(
        TEMPLATE,
        REGIONS,
        &policy_with(TYPED_COSTS, Some(WORKLOADS)),
    )
    .unwrap();
    assert_eq!(chosen(&out, 0, "vgw"), "a");
    let p = &out.solutions[0].placements["vgw"];
    assert_eq!(
        p["realized_intent"]["flavor"],
        "flavor-mid-25-percent-oversubscription"
    );
    assert_eq!(p["deployment_cost"]["base"], 70.0);
    // Without an instance type the fixed costs are charged and no flavor is realized:
    // c = 2 * 50 + 190 = 290 is the seed's pick again.
    let fixed = run(TEMPLATE, REGIONS, &policy_with(TYPED_COSTS, None)).unwrap();
    assert_eq!(chosen(&fixed, 0, "vgw"), "c");
    let p = &fixed.solutions[0].placements["vgw"];
    assert_eq!(p["deployment_cost"]["source"]["source"], "owner_fixed");
    assert_eq!(p["realized_intent"]["flavor"], serde_json::Value::Null);
    // Only c's region has the regional price.
    let t = TEMPLATE.replace(
        "vgw: [{inventory_provider: aai, inventory_type: cloud}]",
        "vgw: [{inventory_provider: aai, inventory_type: cloud, required_candidates: [{candidate_id: [c]}]}]",
    );
    let out = run(&t, REGIONS, &policy_with(TYPED_COSTS, Some(WORKLOADS))).unwrap();
    let p = &out.solutions[0].placements["vgw"];
    assert_eq!(p["candidate_id"], "c");
    assert_eq!(
        p["realized_intent"]["flavor"],
        "flavor-xyz-25-percent-oversubscription"
    );
    assert_eq!(p["deployment_cost"]["base"], 40.0);
    assert_eq!(
        p["deployment_cost"]["source"]["source"],
        "region_instance_type"
    );
}

#[test]
fn without_a_known_demand_private_regions_are_dropped_by_name() {
    let out = run(TEMPLATE, PRIVATE, &policy_with(COSTS, None)).unwrap();
    assert_eq!(out.status, Status::NotFound);
    for c in ["a", "b", "c"] {
        assert_eq!(
            out.triage["vgw"].removed.get(c).map(String::as_str),
            Some("cloud-policy:unknown_demand"),
            "{c}"
        );
    }
    // A fit constraint's request is the demand: b and a have room for 16 vCPU, c none.
    let t = format!(
        "{TEMPLATE}constraints:\n  room:\n    type: vim_fit\n    demands: [vgw]\n    properties: {{controller: multicloud, request: {{vcpu: 16}}}}\n"
    );
    let out = run(&t, PRIVATE, &policy_with(COSTS, None)).unwrap();
    assert_eq!(out.status, Status::Solved, "{}", out.message);
    assert_eq!(
        out.triage["vgw"].removed.get("c").map(String::as_str),
        Some("cloud-policy:insufficient_capacity")
    );
    assert_eq!(
        out.solutions[0].placements["vgw"]["realized_intent"]["capacity"]["check"],
        "tenant"
    );
}
