//! Tests of slice-profile generation and of the examples/slicing requests through `plan`.

use std::sync::Arc;

use berth_inventory::{AttrValue, InventoryType, StaticProvider};
use indexmap::IndexMap;
use serde_json::{Value, json};

use super::*;
use crate::{EngineError, FixedClock, PlanOptions, PlanOutcome, Status, plan};

const INVENTORY: &str = include_str!("../../../../examples/slicing/inventory.yaml");

fn map(v: Value) -> IndexMap<String, Opaque> {
    match v {
        Value::Object(m) => m.into_iter().collect(),
        _ => IndexMap::new(),
    }
}

fn attr(c: &Candidate, k: &str) -> Option<AttrValue> {
    c.attributes.get(k).cloned()
}

fn subnets() -> Value {
    json!({
        "core": {"latency": {"min": 4, "max": 12, "steps": 4}, "reliability": {"values": [99.99]}},
        "ran": {"latency": {"min": 5, "max": 15, "steps": 5}, "throughput": {"values": [200, 100]}},
        "transport": {"latency": {"values": [6]}, "throughput": {"values": [150]}}
    })
}

#[test]
fn generates_every_combination_within_the_service_profile() {
    let filtering = map(json!({
        "subnets": subnets(),
        "service_profile": {"latency": {"value": 20, "operator": "lte"}}
    }));
    let defaults = map(json!({"creation_cost": 0.9}));
    let cs = generate(
        "s",
        "demands.s[1]",
        Some("generator"),
        &filtering,
        &defaults,
    )
    .unwrap();
    // core 4|8, ran 5|10 x throughput 200|100, transport 6: 8 combinations; latency sums
    // 15, 15, 20, 20, 19, 19, 24, 24: the two 24s fail `lte 20`.
    assert_eq!(cs.len(), 6);
    let ids: Vec<&str> = cs.iter().map(|c| c.candidate_id.as_str()).collect();
    assert_eq!(ids[0], "s-slice-profile-1");
    assert_eq!(ids[5], "s-slice-profile-6");
    let first = &cs[0];
    assert_eq!(first.inventory_type, InventoryType::SliceProfiles);
    assert_eq!(first.inventory_provider.as_deref(), Some("generator"));
    assert_eq!(attr(first, "latency"), Some(AttrValue::Int(15)));
    assert_eq!(attr(first, "core_latency"), Some(AttrValue::Int(4)));
    assert_eq!(attr(first, "ran_latency"), Some(AttrValue::Int(5)));
    assert_eq!(attr(first, "transport_latency"), Some(AttrValue::Int(6)));
    // Throughput is the smallest subnet's; reliability the first subnet's that has one.
    assert_eq!(attr(first, "throughput"), Some(AttrValue::Int(150)));
    assert_eq!(attr(&cs[1], "throughput"), Some(AttrValue::Int(100)));
    assert_eq!(attr(first, "reliability"), Some(AttrValue::Float(99.99)));
    assert_eq!(attr(first, "creation_cost"), Some(AttrValue::Float(0.9)));
    assert!(
        cs.iter()
            .all(|c| matches!(attr(c, "latency"), Some(AttrValue::Int(l)) if l <= 20))
    );
}

#[test]
fn range_excludes_max_and_bad_specs_name_their_path() {
    let filtering = map(json!({"subnets": {"core": {"latency": {"min": 1, "max": 4}}}}));
    let cs = generate("d", "demands.d[0]", None, &filtering, &IndexMap::new()).unwrap();
    let lat: Vec<_> = cs.iter().filter_map(|c| attr(c, "latency")).collect();
    assert_eq!(
        lat,
        vec![AttrValue::Int(1), AttrValue::Int(2), AttrValue::Int(3)]
    );

    let bad = map(json!({
        "subnets": {"core": {"latency": {"min": 1, "max": 4, "steps": 0}, "jitter": "fast"}},
        "service_profile": {"latency": {"value": 3, "operator": "below"}},
        "colour": "red"
    }));
    let err = generate("d", "demands.d[0]", None, &bad, &IndexMap::new()).unwrap_err();
    assert_eq!(
        err,
        vec![
            "demands.d[0].filtering_attributes.subnets.core.latency.steps: 0; expected a positive step",
            "demands.d[0].filtering_attributes.subnets.core.jitter: expected {values: [numbers]} or {min, max, steps}",
            "demands.d[0].filtering_attributes.service_profile.latency: expected {value: <number>, operator: lte|gte|eq|lt|gt}",
            "demands.d[0].filtering_attributes.colour: unknown key for generated slice profiles; expected subnets or service_profile",
        ]
    );
}

#[test]
fn too_many_combinations_is_an_error_not_a_blowup() {
    let big = json!({"min": 0, "max": 100, "steps": 1});
    let filtering = map(json!({"subnets": {
        "a": {"latency": big.clone()}, "b": {"latency": big.clone()}, "c": {"latency": big}
    }}));
    let err = generate("d", "demands.d[0]", None, &filtering, &IndexMap::new()).unwrap_err();
    assert_eq!(
        err,
        vec![
            "demands.d[0].filtering_attributes.subnets: 1000000 combinations; expected at most 100000"
        ]
    );
}

#[test]
fn defaults_fill_in_missing_attributes_only() {
    let mut c = Candidate::new("x", InventoryType::Nsi);
    c.attributes
        .insert("creation_cost".into(), AttrValue::Int(3));
    with_defaults(
        &mut c,
        &map(json!({"creation_cost": 0.1, "sharing": "shared"})),
    );
    assert_eq!(attr(&c, "creation_cost"), Some(AttrValue::Int(3)));
    assert_eq!(attr(&c, "sharing"), Some(AttrValue::Str("shared".into())));
}

fn solve(template: &str) -> Result<PlanOutcome, EngineError> {
    let provider = StaticProvider::parse(INVENTORY).unwrap();
    let t = berth_template::load(template, &Default::default()).unwrap();
    let opts = PlanOptions {
        clock: Some(Arc::new(FixedClock)),
        ..PlanOptions::default()
    };
    plan(&t, &provider, &opts)
}

fn placed(o: &PlanOutcome, demand: &str) -> Value {
    serde_json::to_value(&o.solutions[0].placements[demand]).unwrap()
}

#[test]
fn example_nsi_reuse_picks_the_existing_instance_within_thresholds() {
    let o = solve(include_str!("../../../../examples/slicing/nsi_reuse.yaml")).unwrap();
    assert_eq!(o.status, Status::Solved);
    let p = placed(&o, "urllc_slice");
    assert_eq!(p["inventory_type"], "nsi");
    assert_eq!(p["attributes"]["instance_name"], "nsi_factory_a");
    assert_eq!(p["attributes"]["creation_cost"], 0.1);
    let removed = &o.triage["urllc_slice"].removed;
    // nsi_factory_b is too slow (45 ms); nsi_stadium has other model ids.
    assert_eq!(
        removed["6b1c1f0e-1f43-4a51-9d0a-0a1e5e0c7102"],
        "urllc_threshold"
    );
    assert_eq!(
        removed["6b1c1f0e-1f43-4a51-9d0a-0a1e5e0c7103"],
        "inventory:attributes"
    );
}

#[test]
fn example_nsi_create_and_no_nsi_pick_a_generated_slice_profile() {
    for (text, latency) in [
        (
            include_str!("../../../../examples/slicing/nsi_create.yaml"),
            24,
        ),
        (include_str!("../../../../examples/slicing/no_nsi.yaml"), 15),
    ] {
        let o = solve(text).unwrap();
        assert_eq!(o.status, Status::Solved);
        let p = placed(&o, "urllc_slice");
        assert_eq!(p["inventory_type"], "slice_profiles");
        assert_eq!(p["inventory_provider"], "generator");
        assert_eq!(p["attributes"]["creation_cost"], 0.9);
        assert_eq!(p["attributes"]["latency"], latency);
        assert_eq!(p["attributes"]["transport_latency"], 6);
    }
}

#[test]
fn example_nssi_minimizes_latency_and_unmatched_is_not_found() {
    let o = solve(include_str!("../../../../examples/slicing/nssi.yaml")).unwrap();
    assert_eq!(o.status, Status::Solved);
    let p = placed(&o, "urllc_core");
    assert_eq!(p["inventory_type"], "nssi");
    assert_eq!(p["attributes"]["instance_name"], "nssi_core_west");
    assert_eq!(o.solutions[0].objective, 8.0);

    let o = solve(include_str!(
        "../../../../examples/slicing/nssi_unmatched.yaml"
    ))
    .unwrap();
    assert_eq!(o.status, Status::NotFound);
    assert!(o.solutions.is_empty());
    assert!(o.message.contains("core_threshold"), "{}", o.message);
}

#[test]
fn example_nst_filters_by_region_and_minimizes_latency() {
    let o = solve(include_str!("../../../../examples/slicing/nst.yaml")).unwrap();
    assert_eq!(o.status, Status::Solved);
    let p = placed(&o, "urllc_template");
    assert_eq!(p["inventory_type"], "nst");
    assert_eq!(p["attributes"]["model_name"], "nst_urllc_low_latency");
    assert_eq!(
        o.triage["urllc_template"].removed["1a3c5e70-2b4d-4f68-8a0c-3e5f7a9b0303"],
        "inventory:attributes"
    );
}

#[test]
fn transport_and_vfmodule_resolve_from_the_inventory() {
    for (ty, id) in [
        ("transport", "tn-link-east-west"),
        ("vfmodule", "vfm-firewall-01"),
    ] {
        let o = solve(&format!(
            "homing_template_version: 2020-08-13\ndemands: {{d: [{{inventory_provider: aai, inventory_type: {ty}}}]}}\n"
        ))
        .unwrap();
        assert_eq!(o.status, Status::Solved, "{ty}");
        assert_eq!(placed(&o, "d")["candidate_id"], id);
    }
}

fn solve_on(inventory: &str, template: &str) -> Result<PlanOutcome, EngineError> {
    let provider = StaticProvider::parse(inventory).unwrap();
    let t = berth_template::load(template, &Default::default()).unwrap();
    let opts = PlanOptions {
        clock: Some(Arc::new(FixedClock)),
        ..PlanOptions::default()
    };
    plan(&t, &provider, &opts)
}

/// HAS serves every inventory type: a type the inventory holds no candidate of is an empty
/// set, so the plan is `not found` and the triage says no candidate of that type exists.
#[test]
fn a_type_the_inventory_holds_none_of_is_not_found_with_its_triage_line() {
    let o = solve(
        "homing_template_version: 2020-08-13\ndemands: {vG: [{inventory_provider: aai, inventory_type: cloud}]}\n",
    )
    .unwrap();
    assert_eq!(o.status, Status::NotFound);
    assert_eq!(
        o.triage["vG"].absent,
        vec![
            "demands.vG[0]: no candidate of inventory type `cloud` under provider `aai` exists in the inventory"
        ]
    );
    assert!(
        o.message.contains(
            "demand `vG` has no candidates: demands.vG[0]: no candidate of inventory type `cloud`"
        ),
        "{}",
        o.message
    );
    // One requirement with candidates is enough: the empty one just offers nothing.
    let o = solve(
        "homing_template_version: 2020-08-13\ndemands: {d: [{inventory_provider: aai, inventory_type: cloud}, {inventory_provider: aai, inventory_type: nssi}]}\n",
    )
    .unwrap();
    assert_eq!(o.status, Status::Solved);
    assert!(o.triage["d"].absent.is_empty());
}

/// ONAP CSIT's slicing requests on an inventory without slicing candidates end `not found`
/// as in HAS, each naming the missing type; removed candidates are not called absent.
#[test]
fn csit_slicing_requests_without_slicing_candidates_are_not_found() {
    let cloud_only = "candidates:\n  - {candidate_id: c1, inventory_type: cloud}\n";
    for (file, text, demand, ty) in [
        (
            "nssi",
            include_str!("../../../../examples/slicing/nssi.yaml"),
            "urllc_core",
            "nssi",
        ),
        (
            "nssi_unmatched",
            include_str!("../../../../examples/slicing/nssi_unmatched.yaml"),
            "urllc_core",
            "nssi",
        ),
        (
            "nst",
            include_str!("../../../../examples/slicing/nst.yaml"),
            "urllc_template",
            "nst",
        ),
    ] {
        let o = solve_on(cloud_only, text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(o.status, Status::NotFound, "{file}");
        assert_eq!(
            o.triage[demand].absent,
            vec![format!(
                "demands.{demand}[0]: no candidate of inventory type `{ty}` under provider `aai` exists in the inventory"
            )],
            "{file}"
        );
    }
    let o = solve_on(
        "candidates:\n  - {candidate_id: n1, inventory_type: nssi, attributes: {model-invariant-id: x}}\n",
        include_str!("../../../../examples/slicing/nssi.yaml"),
    )
    .unwrap();
    assert_eq!(o.status, Status::NotFound);
    assert!(o.triage["urllc_core"].absent.is_empty());
    assert_eq!(o.triage["urllc_core"].removed["n1"], "inventory:attributes");
}

/// Two demands, a weighted sum of their latencies; `unique` (written as HAS does, a string)
/// on the slice demand only.
fn two_demands(unique: &str) -> String {
    format!(
        r#"homing_template_version: 2020-08-13
demands:
  slice:
    - inventory_provider: aai
      inventory_type: nsi
      unique: "{unique}"
      filtering_attributes:
        model-invariant-id: 3f0e8c8a-7a44-4b63-a2b5-5a9c6e7d1001
        service-role: [nsi, nssi]
  template:
    - {{inventory_provider: aai, inventory_type: nst, region: RegionOne, unique: "false"}}
optimization:
  goal: minimize
  operation_function:
    operator: sum
    operands:
      - {{function: attribute, weight: 2, params: {{demand: slice, attribute: latency}}}}
      - {{function: attribute, weight: 1, params: {{demand: template, attribute: latency}}}}
"#
    )
}

fn objectives(unique: &str) -> Vec<(f64, String)> {
    let provider = StaticProvider::parse(INVENTORY).unwrap();
    let t = berth_template::load(&two_demands(unique), &Default::default()).unwrap();
    let opts = PlanOptions {
        clock: Some(Arc::new(FixedClock)),
        solutions: 3,
        ..PlanOptions::default()
    };
    let o = plan(&t, &provider, &opts).unwrap();
    o.solutions
        .iter()
        .map(|s| {
            let name = s.placements["slice"]["attributes"]["instance_name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (s.objective, name)
        })
        .collect()
}

#[test]
fn weighted_attribute_objective_and_unique_as_has() {
    // Slices: factory_a 18 ms, factory_b 45 ms; templates in RegionOne: 10 ms, 28 ms.
    // 2*18+10 = 46, 2*18+28 = 64, 2*45+10 = 100.
    let a = "nsi_factory_a".to_owned();
    let b = "nsi_factory_b".to_owned();
    assert_eq!(
        objectives("false"),
        vec![(46.0, a.clone()), (64.0, a.clone()), (100.0, b.clone())]
    );
    // A unique slice candidate used by one plan is not offered to the next: two plans only.
    assert_eq!(objectives("true"), vec![(46.0, a), (100.0, b)]);
}

#[test]
fn an_instance_with_profiles_is_offered_once_per_profile() {
    let o = solve(
        "homing_template_version: 2020-08-13
demands:
  campus:
    - inventory_provider: aai
      inventory_type: nsi
      filtering_attributes: {model-invariant-id: 3f0e8c8a-7a44-4b63-a2b5-5a9c6e7d3001}
constraints:
  t: {type: threshold, demands: [campus], properties: {evaluate: [{attribute: latency, operator: lte, threshold: 20, unit: ms}]}}
",
    )
    .unwrap();
    assert_eq!(o.status, Status::Solved);
    let p = placed(&o, "campus");
    assert_eq!(p["candidate_id"], "sp-campus-robots");
    assert_eq!(
        p["attributes"]["instance_id"],
        "6b1c1f0e-1f43-4a51-9d0a-0a1e5e0c7104"
    );
    assert_eq!(p["attributes"]["instance_name"], "nsi_campus");
    assert_eq!(p["attributes"]["latency"], 12);
    assert_eq!(
        o.triage["campus"].removed["sp-campus-video"], "t",
        "the 35 ms profile fails the threshold"
    );
}
