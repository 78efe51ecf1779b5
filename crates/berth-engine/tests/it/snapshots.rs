//! Snapshots of rendered outcomes: an explanation with its triage, a solved plan's JSON.

use expect_test::expect;

use crate::{opts, run};

const INVENTORY: &str = "
candidates:
  - {candidate_id: dfw, inventory_type: cloud, latitude: 32.9, longitude: -97.0, cost: 10, complex_name: dfw-c1,
     zones: {disaster: plains}, attributes: {sriov: true}}
  - {candidate_id: hou, inventory_type: cloud, latitude: 29.8, longitude: -95.4, cost: 12, complex_name: hou-c1,
     zones: {disaster: gulf}, attributes: {sriov: false}}
  - {candidate_id: nyc, inventory_type: cloud, latitude: 40.7, longitude: -74.0, cost: 20, complex_name: nyc-c1,
     zones: {disaster: northeast}, attributes: {sriov: true}}
";

const INFEASIBLE: &str = "
homing_template_version: 2017-10-10
locations:
  customer: {latitude: 32.8, longitude: -96.8}
demands:
  vG: [{inventory_provider: aai, inventory_type: cloud, excluded_candidates: [{candidate_id: dfw}]}]
  vGMux: [{inventory_provider: aai, inventory_type: cloud}]
constraints:
  sriov_only:
    type: attribute
    demands: [vG]
    properties: {evaluate: {sriov: true}}
  near_customer:
    type: distance_to_location
    demands: [vG, vGMux]
    properties: {distance: < 1000 km, location: customer}
  diverse:
    type: zone
    demands: [vG, vGMux]
    properties: {qualifier: different, category: disaster}
optimization:
  minimize: {sum: [{distance_between: [customer, vG]}]}
";

#[test]
fn explanation_of_an_infeasible_plan() {
    let out = run(INFEASIBLE, INVENTORY, &opts()).unwrap();
    expect![[r#"
        status: not found
        no plan: constraints `sriov_only`, `near_customer` together leave no plan; demand `vG` has no candidate left

        triage:
          vG: 3 of 3 candidates removed
            dfw by inventory:excluded_candidates
            hou by sriov_only
            nyc by near_customer

        4 nodes, 0 ms
    "#]]
    .assert_eq(&out.render_text());
}

#[test]
fn solved_plan_json() {
    let t = INFEASIBLE.replace(
        "excluded_candidates: [{candidate_id: dfw}]",
        "excluded_candidates: [{candidate_id: nyc}]",
    );
    let out = run(&t, INVENTORY, &opts()).unwrap();
    let json = serde_json::to_string_pretty(&out).unwrap();
    expect![[r#"
        {
          "status": "solved",
          "optimal": true,
          "bound": 21.741485448776558,
          "gap": 0.0,
          "message": "1 plan found, proven optimal",
          "solutions": [
            {
              "objective": 21.741485448776558,
              "placements": {
                "vG": {
                  "candidate_id": "dfw",
                  "candidate_type": "cloud",
                  "inventory_type": "cloud",
                  "cost": 10.0,
                  "latitude": 32.9,
                  "longitude": -97.0,
                  "complex_name": "dfw-c1",
                  "attributes": {
                    "sriov": true
                  },
                  "zones": {
                    "disaster": "plains",
                    "complex": "dfw-c1"
                  }
                },
                "vGMux": {
                  "candidate_id": "hou",
                  "candidate_type": "cloud",
                  "inventory_type": "cloud",
                  "cost": 12.0,
                  "latitude": 29.8,
                  "longitude": -95.4,
                  "complex_name": "hou-c1",
                  "attributes": {
                    "sriov": false
                  },
                  "zones": {
                    "disaster": "gulf",
                    "complex": "hou-c1"
                  }
                }
              }
            }
          ],
          "triage": {
            "vG": {
              "candidates": 3,
              "removed": {
                "nyc": "inventory:excluded_candidates",
                "hou": "sriov_only"
              }
            },
            "vGMux": {
              "candidates": 3,
              "removed": {
                "dfw": "diverse",
                "nyc": "near_customer"
              }
            }
          },
          "stats": {
            "nodes": 2,
            "elapsed_ms": 0
          }
        }"#]]
    .assert_eq(&json);
}

#[test]
fn solved_plan_text_shows_bound_and_gap() {
    let t = INFEASIBLE.replace(
        "excluded_candidates: [{candidate_id: dfw}]",
        "excluded_candidates: [{candidate_id: nyc}]",
    );
    let out = run(&t, INVENTORY, &opts()).unwrap();
    expect![[r#"
        status: solved (optimal)
        1 plan found, proven optimal
        bound 21.741 (gap 0%)

        plan 1: objective 21.741
          DEMAND  CANDIDATE  LOCATION  COST
          vG      dfw        -         10
          vGMux   hou        -         12

        triage:
          vG: 2 of 3 candidates removed
            nyc by inventory:excluded_candidates
            hou by sriov_only
          vGMux: 2 of 3 candidates removed
            dfw by diverse
            nyc by near_customer

        2 nodes, 0 ms
    "#]]
    .assert_eq(&out.render_text());
}

#[test]
fn gaps_are_relative_and_absolute_near_zero() {
    use berth_engine::{fmt_gap, relative_gap};
    assert_eq!(relative_gap(200.0, 150.0), 0.25);
    assert_eq!(relative_gap(-200.0, -150.0), 0.25);
    // Near 0 the gap is absolute: finite where a plan costs nothing.
    assert_eq!(relative_gap(0.0, -0.5), 0.5);
    assert_eq!(relative_gap(7.0, 7.0), 0.0);
    assert_eq!(fmt_gap(0.0), "0%");
    assert_eq!(fmt_gap(0.25), "25%");
    assert_eq!(fmt_gap(0.012_34), "1.234%");
    assert_eq!(fmt_gap(0.000_4), "0.04%");
    assert_eq!(fmt_gap(0.000_001_234), "1.23e-4%");
}
