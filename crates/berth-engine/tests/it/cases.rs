//! Constraint semantics end to end: each case a small template + inventory.

use berth_engine::{ErrorCode, LatencyModel, PlanOptions, Status};

use crate::{chosen, opts, run};

/// Three sites on the equator, 0, ~111 and ~222 km east of the customer at 0,0.
const SITES: &str = "
candidates:
  - {candidate_id: a, inventory_type: cloud, latitude: 0.0, longitude: 0.0, cost: 30, complex_name: cx1, region: r1,
     cloud_region_version: '2.0', capacity: {vcpu: 6}, groups: [g1, g2], attributes: {flavor: SRIOV-xl, tier: 1},
     zones: {disaster: d1}}
  - {candidate_id: b, inventory_type: cloud, latitude: 0.0, longitude: 1.0, cost: 10, complex_name: cx1, region: r2,
     cloud_region_version: '3.1', capacity: {vcpu: 4}, groups: [g2], attributes: {flavor: basic, tier: 2},
     zones: {disaster: d1}}
  - {candidate_id: c, inventory_type: cloud, latitude: 0.0, longitude: 2.0, cost: 20, complex_name: cx2, region: r3,
     cloud_region_version: '1.0', capacity: {vcpu: 8}, groups: [g3], attributes: {flavor: sriov, tier: 3},
     zones: {disaster: d2}}
licenses:
  sw: {available: 1}
  none: {available: 0}
host_locations:
  CUSTOMERHOST: {latitude: 0.0, longitude: 0.0}
";

fn template(demands: &[&str], constraints: &str, objective: &str) -> String {
    let mut t = String::from(
        "homing_template_version: 2017-10-10\nlocations:\n  home: {host_name: CUSTOMERHOST}\ndemands:\n",
    );
    for d in demands {
        t.push_str(&format!(
            "  {d}: [{{inventory_provider: aai, inventory_type: cloud}}]\n"
        ));
    }
    if !constraints.is_empty() {
        t.push_str("constraints:\n");
        t.push_str(constraints);
    }
    if !objective.is_empty() {
        t.push_str("optimization:\n");
        t.push_str(objective);
    }
    t
}

const NEAREST: &str = "  minimize:\n    sum:\n      - {distance_between: [home, x]}\n";

#[test]
fn cost_is_not_mixed_into_distance() {
    let out = run(&template(&["x"], "", NEAREST), SITES, &opts()).unwrap();
    assert_eq!(chosen(&out, 0, "x"), "a");
    assert_eq!(out.solutions[0].objective, 0.0);
    let cheapest = "  minimize: {sum: [{cost: x}]}\n";
    let out = run(&template(&["x"], "", cheapest), SITES, &opts()).unwrap();
    assert_eq!(chosen(&out, 0, "x"), "b");
    assert_eq!(out.solutions[0].objective, 10.0);
}

#[test]
fn attribute_operators_and_regex() {
    let c = "  sriov:\n    type: attribute\n    demands: [x]\n    properties:\n      evaluate:\n        flavor: {regex: '/^sriov/i'}\n        tier: {gte: 2}\n";
    let out = run(&template(&["x"], c, NEAREST), SITES, &opts()).unwrap();
    assert_eq!(chosen(&out, 0, "x"), "c");
    let removed = &out.triage["x"].removed;
    assert_eq!(removed["a"], "sriov");
    assert_eq!(removed["b"], "sriov");
}

#[test]
fn distance_between_demands_both_ways() {
    let c = "  apart:\n    type: distance_between_demands\n    demands: [x, y]\n    properties: {distance: '>= 200 km'}\n";
    let obj = "  minimize:\n    sum:\n      - {distance_between: [home, x]}\n      - {distance_between: [home, y]}\n";
    let out = run(&template(&["x", "y"], c, obj), SITES, &opts()).unwrap();
    let pair = (chosen(&out, 0, "x"), chosen(&out, 0, "y"));
    assert!(
        pair == ("a".into(), "c".into()) || pair == ("c".into(), "a".into()),
        "{pair:?}"
    );
    assert!(
        (out.solutions[0].objective - 222.39).abs() < 0.1,
        "{}",
        out.solutions[0].objective
    );
}

#[test]
fn zone_same_and_different_categories() {
    let same = "  z:\n    type: zone\n    demands: [x, y]\n    properties: {qualifier: same, category: complex}\n";
    let obj = "  minimize:\n    sum:\n      - {distance_between: [home, y]}\n      - {product: [-1, {distance_between: [home, x]}]}\n";
    let out = run(&template(&["x", "y"], same, obj), SITES, &opts()).unwrap();
    // x as far as possible within y's complex: y = a, x = b (cx1).
    assert_eq!(
        (chosen(&out, 0, "x"), chosen(&out, 0, "y")),
        ("b".into(), "a".into())
    );
    let diff = "  z:\n    type: zone\n    demands: [x, y, w]\n    properties: {qualifier: different, category: disaster}\n";
    let out = run(&template(&["x", "y", "w"], diff, ""), SITES, &opts()).unwrap();
    assert_eq!(out.status, Status::NotFound);
    assert!(out.message.contains("`z`"), "{}", out.message);
}

#[test]
fn inventory_group_with_three_demands_groups_the_first_two_as_the_seed_says() {
    let g = "  grp:\n    type: inventory_group\n    demands: [x, y, w]\n";
    let o = PlanOptions {
        solutions: 20,
        ..opts()
    };
    let t = template(&["x", "y", "w"], g, "");
    let warnings = berth_template::validate(&t, &berth_template::LoadOptions::default());
    assert!(
        warnings.iter().any(|d| d
            .message
            .contains("`x` and `y` share a group; `w` is not constrained")),
        "{warnings:?}"
    );
    let out = run(&t, SITES, &o).unwrap();
    // x and y share a group (a/a, a/b, b/a, b/b through g2, c/c through g3); w is free.
    assert_eq!(out.solutions.len(), 15);
    let on = |s: &berth_engine::PlanSolution, d: &str| s.placements[d]["candidate_id"].clone();
    for s in &out.solutions {
        assert_eq!(on(s, "x") == "c", on(s, "y") == "c", "{s:?}");
    }
    assert!(
        out.solutions
            .iter()
            .any(|s| on(s, "w") == "c" && on(s, "x") != "c"),
        "w is not grouped with x and y"
    );
}

#[test]
fn region_fit_sums_demands_on_one_candidate() {
    let c = "  fit:\n    type: region_fit\n    demands: [x, y]\n    properties: {controller: sdn-c, request: {vcpu: 4}}\n";
    let obj = "  minimize:\n    sum:\n      - {distance_between: [home, x]}\n      - {distance_between: [home, y]}\n";
    let out = run(&template(&["x", "y"], c, obj), SITES, &opts()).unwrap();
    let (x, y) = (chosen(&out, 0, "x"), chosen(&out, 0, "y"));
    assert_ne!(x, y, "a (6 vcpu) cannot hold 2 x 4");
    assert!([x.as_str(), y.as_str()].contains(&"a") && [x.as_str(), y.as_str()].contains(&"b"));
    let big = "  fit:\n    type: instance_fit\n    demands: [x]\n    properties: {controller: sdn-c, request: {vcpu: 7}}\n";
    let out = run(&template(&["x"], big, NEAREST), SITES, &opts()).unwrap();
    assert_eq!(chosen(&out, 0, "x"), "c");
    assert_eq!(out.triage["x"].removed["a"], "fit");
    let bad = "  fit:\n    type: instance_fit\n    demands: [x]\n    properties: {controller: sdn-c, request: {vcpu: lots}}\n";
    let err = run(&template(&["x"], bad, ""), SITES, &opts()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(err.to_string().contains("non-negative integer"), "{err}");
}

#[test]
fn license_counts_and_existing_placement() {
    let c = "  lic:\n    type: license\n    demands: [x, y]\n    properties: {id: sw, key: k}\n";
    let out = run(&template(&["x", "y"], c, ""), SITES, &opts()).unwrap();
    assert_eq!(out.status, Status::NotFound, "{}", out.message);
    assert!(out.message.contains("`lic`"), "{}", out.message);
    // y staying on its existing placement uses no new license.
    let t = template(&["x", "y"], c, "").replace(
        "  y: [{inventory_provider: aai, inventory_type: cloud}]",
        "  y: [{inventory_provider: aai, inventory_type: cloud, existing_placement: {candidate_id: b}}]",
    );
    let out = run(
        &t,
        SITES,
        &PlanOptions {
            solutions: 10,
            ..opts()
        },
    )
    .unwrap();
    assert_eq!(out.status, Status::Solved);
    for (i, _) in out.solutions.iter().enumerate() {
        assert_eq!(chosen(&out, i, "y"), "b");
    }
    let none = "  lic:\n    type: license\n    demands: [x]\n    properties: {id: none, key: k}\n";
    let out = run(&template(&["x"], none, ""), SITES, &opts()).unwrap();
    assert_eq!(out.status, Status::NotFound);
    assert_eq!(out.triage["x"].removed.len(), 3);
    let unknown =
        "  lic:\n    type: license\n    demands: [x]\n    properties: {id: nope, key: k}\n";
    assert_eq!(
        run(&template(&["x"], unknown, ""), SITES, &opts())
            .unwrap_err()
            .code(),
        ErrorCode::NotFound
    );
}

#[test]
fn existing_placement_bonus_is_configurable() {
    let t = template(&["x"], "", NEAREST).replace(
        "  x: [{inventory_provider: aai, inventory_type: cloud}]",
        "  x: [{inventory_provider: aai, inventory_type: cloud, existing_placement: {candidate_id: c}}]",
    );
    let out = run(&t, SITES, &opts()).unwrap();
    assert_eq!(chosen(&out, 0, "x"), "a");
    let o = PlanOptions {
        existing_bonus: 500.0,
        ..opts()
    };
    let out = run(&t, SITES, &o).unwrap();
    assert_eq!(chosen(&out, 0, "x"), "c");
    assert!(out.solutions[0].objective < 0.0);
}

#[test]
fn network_constraints_need_a_model_or_a_topology() {
    let c = "  lat:\n    type: network_to_location\n    demands: [x]\n    properties: {latency: '< 1 ms', location: home}\n";
    let err = run(&template(&["x"], c, NEAREST), SITES, &opts()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidInput);
    assert!(err.to_string().contains("latency-per-km"), "{err}");
    let o = PlanOptions {
        latency: Some(LatencyModel::per_km(0.005)),
        ..opts()
    };
    let out = run(&template(&["x"], c, NEAREST), SITES, &o).unwrap();
    // 0.005 ms/km: a (0 km) and b (111 km, 0.56 ms) pass; c (222 km, 1.1 ms) does not.
    assert_eq!(
        out.triage["x"].removed.keys().collect::<Vec<_>>(),
        vec!["c"]
    );
    let bw = "  bw:\n    type: network_between_demands\n    demands: [x, y]\n    properties: {bandwidth: '>= 1 Gbps'}\n";
    let err = run(&template(&["x", "y"], bw, ""), SITES, &o).unwrap_err();
    assert!(err.to_string().contains("bandwidth"), "{err}");
}

#[test]
fn network_over_a_topology() {
    let inv = "
candidates:
  - {candidate_id: h1, inventory_type: cloud, topology_node: h1}
  - {candidate_id: h2, inventory_type: cloud, topology_node: h2}
  - {candidate_id: h3, inventory_type: cloud, topology_node: h3}
";
    let topo = berth_topology::load(
        "
levels: [dc, host]
finer_than: [[host, dc]]
dimensions: [vcpu]
location:
  id: dc1
  level: dc
  lat: 0.0
  lon: 0.0
  children:
    - {id: h1, level: host}
    - {id: h2, level: host}
    - {id: h3, level: host}
network:
  - id: core
  - {id: tor1, parent: core, bandwidth_mbps: 40000, latency_ms: 1}
  - {leaf: h1, parent: tor1, bandwidth_mbps: 10000, latency_ms: 0.5}
  - {leaf: h2, parent: tor1, bandwidth_mbps: 10000, latency_ms: 0.5}
  - {leaf: h3, parent: core, bandwidth_mbps: 100, latency_ms: 0.5}
",
    )
    .unwrap();
    let c = "  net:\n    type: network_between_demands\n    demands: [x, y]\n    properties: {bandwidth: '>= 1 Gbps', latency: '<= 2 ms'}\n  apart:\n    type: zone\n    demands: [x, y]\n    properties: {qualifier: different, category: time}\n";
    let inv = inv
        .replace(
            "topology_node: h1}",
            "topology_node: h1, zones: {time: t1}}",
        )
        .replace(
            "topology_node: h2}",
            "topology_node: h2, zones: {time: t2}}",
        )
        .replace(
            "topology_node: h3}",
            "topology_node: h3, zones: {time: t3}}",
        );
    let o = PlanOptions {
        topology: Some(std::sync::Arc::new(topo)),
        solutions: 10,
        ..opts()
    };
    let out = run(&template(&["x", "y"], c, ""), &inv, &o).unwrap();
    // Only h1-h2 share 10 Gbps within 2 ms; h3 hangs off a 100 Mbps link.
    assert_eq!(out.solutions.len(), 2);
    for (i, _) in out.solutions.iter().enumerate() {
        assert_ne!(chosen(&out, i, "x"), "h3");
        assert_ne!(chosen(&out, i, "y"), "h3");
    }
}

#[test]
fn hpa_flavors_and_score() {
    let inv = "
candidates:
  - candidate_id: plain
    inventory_type: cloud
    flavors:
      - {name: small, capabilities: [{feature: basicCapabilities, attributes: {numVirtualCpu: 4}}]}
  - candidate_id: fancy
    inventory_type: cloud
    flavors:
      - {name: small, capabilities: [{feature: basicCapabilities, attributes: {numVirtualCpu: 4}}]}
      - name: sriov
        capabilities:
          - {feature: basicCapabilities, attributes: {numVirtualCpu: 4}}
          - {feature: sriovNICNetwork, attributes: {pciVendorId: '8086'}}
  - candidate_id: tiny
    inventory_type: cloud
    flavors:
      - {name: xs, capabilities: [{feature: basicCapabilities, attributes: {numVirtualCpu: 1}}]}
";
    let c = "  hpa:
    type: hpa
    demands: [x]
    properties:
      evaluate:
        - id: vdu1
          type: tosca.nodes.nfv.Vdu.Compute
          directives: []
          flavorProperties:
            - {hpa-feature: basicCapabilities, hpa-version: v1, architecture: generic, mandatory: 'True', directives: [],
               hpa-feature-attributes: [{hpa-attribute-key: numVirtualCpu, hpa-attribute-value: '4', operator: '>=', unit: ''}]}
            - {hpa-feature: sriovNICNetwork, hpa-version: v1, architecture: generic, mandatory: 'False', score: '100', directives: [],
               hpa-feature-attributes: [{hpa-attribute-key: pciVendorId, hpa-attribute-value: '8086', operator: '=', unit: ''}]}
";
    let obj = "  maximize: {sum: [{hpa_score: x}]}\n";
    let t = template(&["x"], c, obj).replace("2017-10-10", "2018-02-01");
    let out = run(&t, inv, &opts()).unwrap();
    assert_eq!(out.status, Status::Solved, "{}", out.message);
    assert_eq!(chosen(&out, 0, "x"), "fancy");
    assert_eq!(out.solutions[0].objective, 100.0);
    assert_eq!(
        out.solutions[0].placements["x"]["flavor_map"]["vdu1"],
        "sriov"
    );
    assert_eq!(out.triage["x"].removed["tiny"], "hpa");
}

#[test]
fn k_best_and_unique() {
    let obj = "  minimize:\n    sum:\n      - {distance_between: [home, x]}\n      - {distance_between: [home, y]}\n";
    let o = PlanOptions {
        solutions: 3,
        ..opts()
    };
    let out = run(&template(&["x", "y"], "", obj), SITES, &o).unwrap();
    let objs: Vec<f64> = out.solutions.iter().map(|s| s.objective).collect();
    assert_eq!(objs.len(), 3);
    assert!(objs.windows(2).all(|w| w[0] <= w[1]), "{objs:?}");
    assert_eq!(objs[0], 0.0);
    let o = PlanOptions {
        solutions: 3,
        unique: true,
        ..opts()
    };
    let out = run(&template(&["x", "y"], "", obj), SITES, &o).unwrap();
    // Each plan uses candidates the previous ones did not: a/a, b/b, c/c.
    let firsts: Vec<String> = (0..out.solutions.len())
        .map(|i| chosen(&out, i, "x"))
        .collect();
    assert_eq!(firsts, vec!["a", "b", "c"]);
}

#[test]
fn limits_and_determinism() {
    let obj = "  minimize:\n    sum:\n      - {distance_between: [home, x]}\n      - {distance_between: [home, y]}\n      - {distance_between: [x, y]}\n";
    let t = template(&["x", "y", "w"], "", obj);
    let a = run(
        &t,
        SITES,
        &PlanOptions {
            solutions: 4,
            ..opts()
        },
    )
    .unwrap();
    let b = run(
        &t,
        SITES,
        &PlanOptions {
            solutions: 4,
            ..opts()
        },
    )
    .unwrap();
    assert_eq!(a, b);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    let stopped = run(
        &t,
        SITES,
        &PlanOptions {
            node_limit: Some(1),
            ..opts()
        },
    )
    .unwrap();
    assert!(!stopped.optimal);
    assert!(
        stopped.message.contains("node limit"),
        "{}",
        stopped.message
    );
    let zero = run(
        &t,
        SITES,
        &PlanOptions {
            time_limit: Some(std::time::Duration::ZERO),
            ..opts()
        },
    )
    .unwrap();
    assert!(!zero.optimal);
}

#[test]
fn inventory_removals_are_named() {
    let t = template(&["x"], "", NEAREST).replace(
        "  x: [{inventory_provider: aai, inventory_type: cloud}]",
        "  x: [{inventory_provider: aai, inventory_type: cloud, excluded_candidates: [{candidate_id: a}], attributes: {tier: {any: [1, 2]}}}]",
    );
    let out = run(&t, SITES, &opts()).unwrap();
    assert_eq!(chosen(&out, 0, "x"), "b");
    assert_eq!(out.triage["x"].candidates, 3);
    assert_eq!(
        out.triage["x"].removed["a"],
        "inventory:excluded_candidates"
    );
    assert_eq!(out.triage["x"].removed["c"], "inventory:attributes");
}

#[test]
fn unlocated_location_is_not_found() {
    let t = template(&["x"], "", NEAREST).replace("host_name: CUSTOMERHOST", "host_name: NOWHERE");
    let err = run(&t, SITES, &opts()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    assert!(err.to_string().contains("`home`"), "{err}");
}

#[test]
fn aic_version_and_attribute_objectives() {
    let newest = "  maximize: {sum: [{aic_version: x}]}\n";
    let out = run(&template(&["x"], "", newest), SITES, &opts()).unwrap();
    assert_eq!(chosen(&out, 0, "x"), "b");
    assert!((out.solutions[0].objective - 3.1).abs() < 1e-9);
    let tier = "  maximize: {sum: [{attribute: [x, tier]}]}\n";
    let out = run(&template(&["x"], "", tier), SITES, &opts()).unwrap();
    assert_eq!(chosen(&out, 0, "x"), "c");
}
