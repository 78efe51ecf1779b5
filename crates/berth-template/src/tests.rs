//! Unit tests of loading, resolution and validation.

use berth_units::{Family, Unit};
use serde_json::json;

use crate::*;

const HEAD: &str = "homing_template_version: 2017-10-10
demands:
  vG1: [{inventory_provider: aai, inventory_type: cloud}]
  vG2: [{inventory_provider: aai, inventory_type: cloud}]
  vG3: [{inventory_provider: aai, inventory_type: cloud}]
locations:
  cl: {latitude: 32.9, longitude: -97.0}
";

fn diags(text: &str, opts: &LoadOptions) -> Vec<String> {
    validate(text, opts)
        .iter()
        .map(|d| format!("{} {d}", d.severity))
        .collect()
}

fn errors(text: &str) -> Vec<String> {
    validate(text, &LoadOptions::default())
        .iter()
        .filter(|d| d.is_error())
        .map(ToString::to_string)
        .collect()
}

fn ok(text: &str) -> Template {
    match load(text, &LoadOptions::default()) {
        Ok(t) => t,
        Err(d) => panic!("expected a valid template, got {d:#?}"),
    }
}

fn with(body: &str) -> String {
    format!("{HEAD}{body}")
}

#[test]
fn get_param_navigates_dicts_and_lists() {
    let t = ok(&with(
        "parameters:
  info: {costs: [10, 20, 30], nested: {key: SOFTWARE}}
constraints:
  lic:
    type: license
    demands: [vG1]
    properties:
      id: {get_param: [info, nested, key]}
      key: {get_param: [info, costs, 2]}
  svc:
    type: service
    demands: vG2
    properties:
      cost: {get_param: [info, costs, \"1\"]}
",
    ));
    let ConstraintKind::License(l) = &t.constraints["lic"].kind else {
        panic!("license")
    };
    assert_eq!((l.id.as_str(), l.key.as_str()), ("SOFTWARE", "30"));
    let ConstraintKind::Service(s) = &t.constraints["svc"].kind else {
        panic!("service")
    };
    assert_eq!(s.cost, Some(20.0));
}

#[test]
fn get_param_errors_name_the_path() {
    let e = errors(&with(
        "parameters:
  info: {costs: [10, 20]}
constraints:
  a:
    type: license
    demands: [vG1]
    properties:
      id: {get_param: [info, costs, 7]}
      key: {get_param: [info, prices]}
  b:
    type: license
    demands: [vG1]
    properties:
      id: {get_param: inf}
      key: {get_param: 42}
",
    ));
    assert_eq!(
        e,
        [
            "constraints.a.properties.id.get_param[2] (15:37): index 7 out of range: `info[costs]` has 2 items; expected 0..2",
            "constraints.a.properties.key.get_param[1] (16:31): key `prices` not found in `info`; expected one of costs",
            "constraints.b.properties.id.get_param (21:23): undefined parameter `inf` (did you mean `info`?)",
            "constraints.b.properties.key.get_param (22:24): get_param takes a parameter name or a list [name, key-or-index, ...]; found a integer",
        ]
    );
}

#[test]
fn parameter_cycles_are_reported_once() {
    let e = errors(&with(
        "parameters:
  a: {get_param: b}
  b: [{get_param: c}]
  c: {x: {get_param: a}}
  d: 5
",
    ));
    assert_eq!(
        e,
        ["parameters.c.x.get_param (11:22): parameter cycle: a -> b -> c -> a"]
    );
}

#[test]
fn parameter_expansion_is_bounded() {
    // Each parameter doubles the previous one: 2^40 nodes if expanded naively.
    let mut text = with("parameters:\n  p0: [x, y]\n");
    for i in 1..40 {
        text.push_str(&format!(
            "  p{i}: [{{get_param: p{}}}, {{get_param: p{}}}]\n",
            i - 1,
            i - 1
        ));
    }
    let e = errors(&text);
    assert!(
        e.iter()
            .any(|m| m.contains("expands to more than 1000000 nodes")),
        "{e:?}"
    );
}

#[test]
fn overrides_replace_and_add_parameters() {
    let text = with(
        "parameters:
  d: 100
constraints:
  near:
    type: distance_between_demands
    demands: [vG1, vG2]
    properties: {distance: {get_param: d}}
",
    );
    let opts = LoadOptions::default()
        .param_text("d", "< 5 mi")
        .param("extra", json!({"get_param": "d"}));
    let a = RawTemplate::from_value(berth_doc::parse(&text).unwrap()).analyze(&opts);
    let t = a.template.clone().unwrap();
    let ConstraintKind::DistanceBetweenDemands(p) = &t.constraints["near"].kind else {
        panic!()
    };
    assert_eq!(p.distance.to_string(), "<5 mi");
    // Overrides are literal, never evaluated.
    assert_eq!(t.parameters["extra"], json!({"get_param": "d"}));
    let warnings: Vec<String> = a.warnings().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "parameters.extra: parameter `extra` is given at instantiation but not declared in the template"
        ]
    );
}

#[test]
fn get_file_reads_the_files_map() {
    let text = with(
        "constraints:
  fit:
    type: capacity
    demands: [vG1]
    properties:
      template: {get_file: stack.yaml}
      environment: {get_file: http://host/env.yaml}
",
    );
    let opts = LoadOptions::default()
        .file("stack.yaml", "resources: {}")
        .file("http://host/env.yaml", "parameters: {}");
    let t = load(&text, &opts).unwrap();
    let ConstraintKind::Capacity(h) = &t.constraints["fit"].kind else {
        panic!()
    };
    assert_eq!(
        (h.template.as_str(), h.environment.as_deref()),
        ("resources: {}", Some("parameters: {}"))
    );
    let e = diags(&text, &LoadOptions::default().file("stack.yml", "x"));
    assert_eq!(
        e,
        [
            "error constraints.fit.properties.template.get_file (13:28): file `stack.yaml` not found (did you mean `stack.yml`?)",
            "error constraints.fit.properties.environment.get_file (14:31): cannot fetch `http://host/env.yaml`: remote files are not fetched; supply its content in the files map",
        ]
    );
    let dynamic = errors(&with(
        "parameters: {f: a}\nlocations2: {}\nx: {get_file: {get_param: f}}\n",
    ));
    assert!(
        dynamic
            .iter()
            .any(|m| m.contains("get_file takes a static path or URL")),
        "{dynamic:?}"
    );
}

#[test]
fn intrinsics_resolve_in_every_section() {
    let t = ok("homing_template_version: 2017-10-10
parameters: {lat: 10.5, prov: aai, d: vG, w: 3, ctl: sdn-c}
locations:
  cl: {latitude: {get_param: lat}, longitude: 20}
demands:
  vG: [{inventory_provider: {get_param: prov}, inventory_type: cloud}]
reservations:
  r: {type: instance_reservation, demands: [{get_param: d}], properties: {controller: {get_param: ctl}}}
optimization:
  minimize: {product: [{get_param: w}, {distance_between: [cl, {get_param: d}]}]}
");
    assert_eq!(
        t.locations["cl"].coordinate,
        Some(Coordinate {
            latitude: 10.5,
            longitude: 20.0
        })
    );
    assert_eq!(
        t.demands["vG"].requirements[0]
            .inventory_provider
            .as_deref(),
        Some("aai")
    );
    assert_eq!(
        t.reservations.items["r"].controller.as_deref(),
        Some("sdn-c")
    );
    let expr = t.optimization.unwrap().expr;
    assert_eq!(
        expr,
        Expr::Product(vec![
            Expr::Const(3.0),
            Expr::Function(ObjFunction::DistanceBetween {
                a: Endpoint::Location("cl".into()),
                b: Endpoint::Demand("vG".into())
            })
        ])
    );
}

#[test]
fn versions() {
    for v in ["2016-11-01", "2017-10-10", "2018-02-01", "\"2018-02-01\""] {
        let t = ok(&format!(
            "homing_template_version: {v}\ndemands: {{d: {{inventory_provider: aai, inventory_type: cloud}}}}\n"
        ));
        assert_eq!(t.version.as_str(), v.trim_matches('"'));
    }
    assert_eq!(
        errors(
            "homing_template_version: 2019-01-01\ndemands: {d: {inventory_provider: aai, inventory_type: cloud}}\n"
        ),
        [
            "homing_template_version (1:26): unsupported homing_template_version `2019-01-01`; expected one of 2016-11-01, 2017-10-10, 2018-02-01, 2020-08-13"
        ]
    );
    assert_eq!(
        errors("demands: {d: {inventory_provider: aai, inventory_type: cloud}}\n"),
        [
            "(1:1): missing `homing_template_version`; expected one of 2016-11-01, 2017-10-10, 2018-02-01, 2020-08-13"
        ]
    );
    assert_eq!(errors("homing_template_version: 2017\ndemands: {d: {inventory_provider: aai, inventory_type: cloud}}\n").len(), 1);
    assert_eq!(
        errors("- a\n"),
        ["(1:1): expected a homing template mapping; found a list"]
    );
}

#[test]
fn reservation_singular_and_plural_conflict() {
    let e = errors(&with("reservation: {}\nreservations: {}\n"));
    assert_eq!(
        e,
        ["reservations (9:1): both `reservation` and `reservations` given; expected only one"]
    );
}

#[test]
fn json_objects_load_with_unknown_positions() {
    let json = json!({
        "homing_template_version": "2017-10-10",
        "demands": {"vG": [{"inventory_provider": "aai", "inventory_type": "cloud"}]},
        "constraints": {"c": {"type": "zone", "demands": ["vG", "vX"], "properties": {"qualifier": "same", "category": "time_zone"}}}
    });
    let d = validate_json(&json, &LoadOptions::default());
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].to_string(),
        "constraints.c.demands[1]: undefined demand `vX`; expected a demand declared in `demands` (did you mean `vG`?)"
    );
    let mut fixed = json.clone();
    fixed["demands"]["vX"] = json!({"inventory_provider": "aai", "inventory_type": "cloud"});
    let t = load_json(&fixed, &LoadOptions::default()).unwrap();
    let ConstraintKind::Zone(z) = &t.constraints["c"].kind else {
        panic!()
    };
    assert_eq!(
        (z.qualifier, z.category),
        (ZoneQualifier::Same, ZoneCategory::Time)
    );
}

#[test]
fn thresholds_take_the_property_family_and_default_unit() {
    let t = ok(&with(
        "constraints:
  net:
    type: network_to_location
    demands: [vG1]
    properties: {bandwidth: 10, latency: '< 1.5 sec', distance: 10-20 mi, location: cl}
",
    ));
    let ConstraintKind::NetworkToLocation(n) = &t.constraints["net"].kind else {
        panic!()
    };
    let bw = n.network.bandwidth.unwrap();
    assert_eq!((bw.family(), bw.unit()), (Family::Throughput, Unit::Mbps));
    assert_eq!(n.network.latency.unwrap().to_string(), "<1.5 sec");
    assert_eq!(n.network.distance.unwrap().family(), Family::Distance);
    // A unit of the wrong family names both; the column points into the quoted scalar.
    let e = errors(&with(
        "constraints:
  near:
    type: distance_between_demands
    demands: [vG1, vG2]
    properties:
      distance: \"< 25 ms\"
",
    ));
    assert_eq!(e.len(), 1);
    assert!(e[0].starts_with("constraints.near.properties.distance (13:23): invalid distance threshold: unit `ms` is a time unit"), "{e:?}");
}

#[test]
fn pairwise_constraints_need_two_demands() {
    let e = diags(
        &with(
            "constraints:
  z: {type: zone, demands: vG1, properties: {qualifier: same, category: region}}
  g: {type: inventory_group, demands: [vG1, vG2, vG3]}
  d: {type: distance_to_location, demands: vG1, properties: {distance: 1, location: cl}}
  x: {type: inventory_group, demands: [vG1, vG2], properties: {a: 1}}
",
        ),
        &LoadOptions::default(),
    );
    assert_eq!(
        e,
        [
            "error constraints.z.demands (9:28): a zone constraint relates demands pairwise; expected at least two demands, found 1",
            "warning constraints.g.demands (10:39): inventory_group supports pairs only (seed 000): `vG1` and `vG2` share a group; `vG3` is not constrained by it",
            "error constraints.x.properties.a (12:64): unknown key `a` in inventory_group properties; expected none",
        ]
    );
}

#[test]
fn attribute_operators_are_typed() {
    let t = ok(&with(
        "constraints:
  a:
    type: attribute
    demands: [vG1]
    properties:
      evaluate:
        v: {gt: '1.0', lte: 3}
        f: {regex: /^SRIOV$/i}
        s: {any: [US-TX, US-NY]}
        plain: 1.1
        n: {ne: {x: 1}}
",
    ));
    let ConstraintKind::Attribute(a) = &t.constraints["a"].kind else {
        panic!()
    };
    assert_eq!(
        a.evaluate["v"],
        [AttributeOp::Gt(1.0), AttributeOp::Lte(3.0)]
    );
    assert_eq!(
        a.evaluate["f"],
        [AttributeOp::Regex(Pattern {
            pattern: "^SRIOV$".into(),
            case_insensitive: true
        })]
    );
    assert_eq!(
        a.evaluate["s"],
        [AttributeOp::Any(vec![json!("US-TX"), json!("US-NY")])]
    );
    assert_eq!(a.evaluate["plain"], [AttributeOp::Eq(json!(1.1))]);
    assert_eq!(a.evaluate["n"], [AttributeOp::Ne(json!({"x": 1}))]);
}

#[test]
fn candidates_and_overlap() {
    let e = errors(
        "homing_template_version: 2017-10-10
demands:
  vG:
    inventory_provider: aai
    inventory_type: cloud
    required_candidates: [{candidate_id: [a, b]}]
    excluded_candidates: [{candidate_id: b, latitude: 1}]
",
    );
    assert_eq!(
        e,
        [
            "demands.vG.excluded_candidates[0] (7:27): candidate `b` is both required and excluded; expected the lists to be disjoint",
            "demands.vG.excluded_candidates[0] (7:27): candidate has `latitude` but no `longitude`; expected both",
        ]
    );
}

#[test]
fn seed_objective_flattens_nested_sums() {
    let t = ok(&with(
        "optimization:
  maximize:
    sum:
      - {sum: [{cost: vG1}, {sum: [{aic_version: [vG2, vG3]}]}]}
      - {product: [2, {product: ['0.5', {latency_between: [vG1, vG2]}]}]}
",
    ));
    let o = t.optimization.unwrap();
    assert_eq!(o.goal, Goal::Maximize);
    let f = |x| Expr::Function(x);
    assert_eq!(
        o.expr,
        Expr::Sum(vec![
            f(ObjFunction::Cost("vG1".into())),
            f(ObjFunction::AicVersion("vG2".into())),
            f(ObjFunction::AicVersion("vG3".into())),
            Expr::Product(vec![
                Expr::Const(2.0),
                Expr::Const(0.5),
                f(ObjFunction::LatencyBetween {
                    a: Endpoint::Demand("vG1".into()),
                    b: Endpoint::Demand("vG2".into())
                }),
            ]),
        ])
    );
}

#[test]
fn generic_objective_lowers_weights_and_normalization() {
    let text = HEAD.replace("2017-10-10", "2020-08-13")
        + "optimization:
  goal: minimize
  operation_function:
    operator: sum
    operands:
      - {function: distance_between, params: {demand: vG1, location: cl}, weight: 2, normalization: {start: 0, end: 1000}}
      - operation_function: {operator: min, operands: [{function: hpa_score, params: {demand: vG2}}]}
";
    let a = analyze(&text, &LoadOptions::default());
    let warnings: Vec<String> = a.warnings().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "optimization (9:3): hpa_score of demand `vG2` but no hpa constraint applies to it; expected an hpa constraint on that demand"
        ]
    );
    let o = a.template.unwrap().optimization.unwrap();
    assert_eq!(
        o.expr,
        Expr::Sum(vec![
            Expr::Product(vec![
                Expr::Const(2.0),
                Expr::Normalize {
                    expr: Box::new(Expr::Function(ObjFunction::DistanceBetween {
                        a: Endpoint::Location("cl".into()),
                        b: Endpoint::Demand("vG1".into())
                    })),
                    start: 0.0,
                    end: 1000.0
                }
            ]),
            Expr::Min(vec![Expr::Function(ObjFunction::HpaScore("vG2".into()))]),
        ])
    );
    // The forms are tied to versions, as in HAS.
    let seed_form =
        with("optimization: {minimize: {cost: vG1}}\n").replace("2017-10-10", "2020-08-13");
    assert_eq!(
        errors(&seed_form),
        [
            "optimization (8:15): homing_template_version 2020-08-13 takes the `goal`/`operation_function` optimization form; found a seed-form optimization"
        ]
    );
}

#[test]
fn unknown_keys_get_suggestions() {
    let e = errors(&with("constraint: {}\nlocations2: {}\n"));
    assert_eq!(e.len(), 2);
    assert!(e[0].contains("(did you mean `constraints`?)"), "{e:?}");
}

#[test]
fn from_str_wraps_diagnostics_in_template_error() {
    let err = "homing_template_version: 1"
        .parse::<Template>()
        .unwrap_err();
    let TemplateError::Invalid {
        errors,
        first,
        diagnostics,
    } = err;
    assert_eq!(errors, 2, "the version and the missing demands");
    assert_eq!(diagnostics.len(), 2);
    assert_eq!(
        first,
        "undefined demand: the template declares no demands; expected at least one under `demands`"
    );
    assert!(
        diagnostics[1]
            .to_string()
            .starts_with("homing_template_version (1:26): expected a version string"),
        "{diagnostics:?}"
    );
}

#[test]
fn parse_errors_are_diagnostics() {
    let e = Template::parse("a: [1,\n").unwrap_err();
    assert_eq!(e.len(), 1);
    assert!(e[0].message.starts_with("invalid YAML"), "{:?}", e[0]);
    let limits = Limits {
        max_depth: 4,
        ..Limits::default()
    };
    assert!(Template::parse_with("a: [[[[[1]]]]]", &limits).is_err());
}

#[test]
fn empty_optimization_means_no_objective() {
    let t = ok(&with("optimization: {}\n"));
    assert_eq!(t.optimization, None);
    let json = json!({"homing_template_version": "2017-10-10",
        "demands": {"vG": [{"inventory_provider": "aai", "inventory_type": "cloud"}]},
        "optimization": {}});
    assert_eq!(
        load_json(&json, &LoadOptions::default())
            .unwrap()
            .optimization,
        None
    );
    // Only the empty mapping: a mapping without a goal is still an error.
    assert_eq!(
        errors(&with("optimization: {goal2: x}\n"))[0],
        "optimization.goal2 (8:16): unknown goal `goal2`; expected minimize or maximize"
    );
}

#[test]
fn a_template_without_demands_is_an_error() {
    expect_test::expect![[r#"
        [
            "error undefined demand: the template declares no demands; expected at least one under `demands`",
        ]
    "#]]
    .assert_debug_eq(&diags("homing_template_version: 2017-10-10\n", &LoadOptions::default()));
    expect_test::expect![[r#"
        [
            "error demands (2:10): undefined demand: the template declares no demands; expected at least one under `demands`",
        ]
    "#]]
    .assert_debug_eq(&diags(
        "homing_template_version: 2017-10-10\ndemands: {}\n",
        &LoadOptions::default(),
    ));
}

#[test]
fn an_empty_capability_stack_is_valid_with_a_warning() {
    let text = with(
        "constraints:
  cap:
    type: capability
    demands: [vG1]
    properties: {template: {heat_template_version: 2016-10-14, resources: {}}}
  room:
    type: capacity
    demands: [vG2]
    properties:
      template: \"heat_template_version: 2016-10-14\\nresources:\\n  s: {type: OS::Nova::Server, properties: {flavor: m1.small}}\\n\"
",
    );
    let t = ok(&text);
    assert_eq!(t.constraints.len(), 2);
    assert_eq!(
        diags(&text, &LoadOptions::default()),
        vec![
            "warning constraints.cap.properties.template (12:28): the Heat stack declares no OS::Nova::Server; it fits every candidate"
        ]
    );
}

/// `s` with one edit: a character removed, inserted, replaced, or two swapped.
fn edited(s: &str, kind: u8, at: usize, c: char) -> String {
    let mut v: Vec<char> = s.chars().collect();
    let i = at % v.len();
    match kind % 4 {
        0 if v.len() > 2 => {
            v.remove(i);
        }
        0 | 1 => v.insert(i, c),
        2 => v[i] = c,
        _ => {
            let j = if i + 1 < v.len() { i + 1 } else { i - 1 };
            v.swap(i, j);
        }
    }
    v.into_iter().collect()
}

const KEYED: &str = "homing_template_version: 2017-10-10
demands:
  vG:
    - inventory_provider: aai
      inventory_type: cloud
locations:
  cl:
    latitude: 32.9
    longitude: -97.0
constraints:
  near:
    type: distance_to_location
    demands: [vG]
    properties: {distance: < 100 km, location: cl}
";

proptest::proptest! {
    /// A random unknown or near-miss key added to the root, a requirement, a location or a
    /// constraint is named by its field path and line:column; a near miss with the key it
    /// likely meant.
    #[test]
    fn unknown_and_near_miss_keys_are_named_where_they_stand(
        site in 0usize..4,
        near in proptest::bool::ANY,
        random in "[a-z][a-z_]{2,11}",
        pick in proptest::prelude::any::<proptest::sample::Index>(),
        kind in 0u8..4,
        at in 0usize..32,
        c in proptest::char::range('a', 'z'),
    ) {
        use crate::read::{CONSTRAINT_KEYS, LOCATION_KEYS, REQUIREMENT_KEYS, TOP_KEYS};
        // (keys allowed there, line the key lands on, indentation, path prefix)
        let (allowed, line, indent, prefix): (&[&str], usize, usize, &str) = [
            (&TOP_KEYS[..], 2, 0, ""),
            (&REQUIREMENT_KEYS[..], 6, 6, "demands.vG[0]."),
            (&LOCATION_KEYS[..], 9, 4, "locations.cl."),
            (&CONSTRAINT_KEYS[..], 13, 4, "constraints.near."),
        ][site];
        let key = if near { edited(allowed[pick.index(allowed.len())], kind, at, c) } else { random };
        proptest::prop_assume!(!allowed.contains(&key.as_str()) && !["null", "true", "false"].contains(&key.as_str()));
        let mut lines: Vec<String> = KEYED.lines().map(str::to_owned).collect();
        lines.insert(line - 1, format!("{}{key}: 1", " ".repeat(indent)));
        let text = lines.join("\n") + "\n";
        let diags = validate(&text, &LoadOptions::default());
        let named = diags.iter().find(|d| d.path == format!("{prefix}{key}"));
        proptest::prop_assert!(named.is_some(), "{text}\n{diags:#?}");
        let d = named.unwrap();
        proptest::prop_assert_eq!((d.line as usize, d.column as usize), (line, indent + 1));
        proptest::prop_assert!(d.message.contains(&format!("`{key}`")), "{}", d.message);
        if near {
            proptest::prop_assert!(d.message.contains("did you mean `"), "{}", d.message);
        }
    }
}
