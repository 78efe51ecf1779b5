//! Unit tests: diagnostics of broken descriptors, resolution rules, lifecycle order and cycles.

use std::collections::BTreeMap;

use expect_test::{Expect, expect};

use crate::{Action, PropertyValue, plan_text, validate};

fn req(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn show(diags: &[crate::Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| format!("{}: {d}\n", d.severity))
        .collect()
}

fn check_validate(text: &str, want: Expect) {
    want.assert_eq(&show(&validate(text)));
}

fn check_plan_err(text: &str, request: &[(&str, &str)], want: Expect) {
    match plan_text(text, &req(request)) {
        Ok(p) => panic!("expected errors, got a plan:\n{}", p.render()),
        Err(d) => {
            let errors: Vec<_> = d.into_iter().filter(|d| d.is_error()).collect();
            want.assert_eq(&show(&errors));
        }
    }
}

const BROKEN: &str = r#"
name: assembly::9lives::1.0.x
properties:
  a.b:
    value: x
  loop1:
    value: ${loop2}
  loop2:
    value: pre-${loop1}
  bad:
    valeu: 3
    required: yes
  dangling:
    value: ${nowhere}-${ghost.id}-${instance.uid}
  unterminated:
    default: ${oops
composition:
  web:
    type: resource::web server::1.0
    quantity: two
  db:
    type: resource::db::^2.0
    quantity: 1
    cluster:
      minimum-nodes: 3
      maximum-nodes: 2
      initial-quantity: 5
      scaling-increment: 0
  source:
    type: resource::x::1.0
  app:
    type: thing::app::1.0
    properties:
      peer:
        value: ${source.ip}
references:
  web:
    type: resource::web::1.0
  store:
    type: assembly::storage::>=1.0 <2.0
operations:
  Add:
    source-operation: nothere.Add
  Bare:
    source-operation: db
metrics:
  load:
    source-metric: ghost.load
relationships:
  r1:
    source-capabilities:
      - db
      - storage.Cap
    target-requirements:
      - store.Req
    source-state: Running
    target-state-modifier: later
    lifecycle:
      Create:
        - elsewhere.Op
      Destroy: []
policies:
  p:
    type: policy::heal
    metric: db
    target: app
    properties:
      scaleOut_threshold: 10
      scaleIn_threshold: 20
      smoothing: 0
      cooldown: 5
extra: 1
"#;

#[test]
fn broken_descriptor_reports_everything_at_once() {
    check_validate(
        BROKEN,
        expect![[r#"
            warning: description (2:1): missing `description`; expected a sentence saying what the assembly is for
            error: name (2:7): invalid name `9lives`; expected a letter first, then letters, digits, `_` or `-`, ending with a letter or digit
            error: properties."a.b" (4:3): invalid name `a.b`; expected a non-empty name without dots
            error: properties.loop1 (6:3): cyclic property reference: properties.loop1 -> properties.loop2 -> properties.loop1
            error: properties.bad.valeu (11:5): unknown key `valeu`; expected one of type, required, default, value, description, read-only
            error: properties.bad.required (12:15): found a string; expected true or false
            error: properties.dangling.value (14:12): unknown `${instance.uid}`; expected `${instance.name}` or `${instance.id}`
            error: properties.dangling.value (14:12): unknown component or reference `ghost` in `${ghost.id}`; expected one of web, db, app, store
            error: properties.dangling.value (14:12): unknown property `nowhere` in `${nowhere}`; expected a top-level property (loop1, loop2, bad, dangling, unterminated)
            error: properties.unterminated.default (16:14): unterminated `${` in `${oops`; expected `}`
            error: composition.web.type (19:11): invalid name `web server`; expected a letter first, then letters, digits, `_` or `-`, ending with a letter or digit
            error: composition.web.quantity (20:15): `two` is not a whole number; expected a count such as 2
            error: composition.db.type (22:11): version range `^2.0` is not allowed here; expected an exact version such as `1.0`
            error: composition.db.cluster (24:5): both `quantity` and `cluster` given; expected one of them
            error: composition.db.cluster.maximum-nodes (26:22): maximum-nodes 2 is below minimum-nodes 3; expected maximum-nodes >= minimum-nodes
            error: composition.db.cluster.initial-quantity (27:25): initial-quantity 5 is out of bounds; expected between 3 and 2
            error: composition.db.cluster.scaling-increment (28:26): scaling-increment is 0; expected at least 1
            error: composition.source (29:3): `source` is reserved; expected a name other than instance, source, target
            error: composition.app.type (32:11): unknown kind `thing`; expected `resource` or `assembly`
            error: composition.app.properties.peer.value (35:16): `${source.ip}` outside a relationship; expected `${source.…}` only in relationship properties
            error: references.web (37:3): `web` is declared in both composition and references; expected unique names
            error: operations.Add.source-operation (43:23): unknown component or reference `nothere`; expected one of web, db, app, store
            error: operations.Bare.source-operation (45:23): malformed `db`; expected `component.operation`
            error: metrics.load.source-metric (48:20): unknown component or reference `ghost`; expected one of web, db, app, store
            error: relationships.r1.target-state (50:3): missing `target-state`; expected Inactive or Active
            error: relationships.r1.source-capabilities[0] (52:9): component `db` without a capability; expected `db.capability`
            warning: relationships.r1.source-capabilities[1] (53:9): unknown component `storage`; expected one of web, db, app, store; this endpoint is skipped
            error: relationships.r1.target-requirements[0] (55:9): reference `store` used as a target; expected references only in source-capabilities
            error: relationships.r1.source-state (56:19): unknown state `Running`; expected Inactive or Active
            error: relationships.r1.target-state-modifier (57:28): unknown modifier `later`; expected pre or post
            error: relationships.r1.lifecycle.Create[0] (60:11): unknown operation owner `elsewhere`; expected source, target or one of web, db, app, store
            error: relationships.r1.lifecycle.Destroy (61:7): unknown key `Destroy`; expected one of Create, Cease
            error: policies.p.type (64:11): unknown policy type `policy::heal`; expected `policy::scale`
            error: policies.p.metric (65:13): malformed `db`; expected `component.metric`
            error: policies.p.target (66:13): component `app` has no `cluster`; expected a clustered component to scale
            error: policies.p.properties.scaleIn_threshold (69:26): scaleIn_threshold 20 is not below scaleOut_threshold 10; expected in < out
            error: policies.p.properties.smoothing (70:18): smoothing is 0; expected at least 1 breach
            error: policies.p.properties.cooldown (71:7): unknown key `cooldown`; expected one of scaleOut_threshold, scaleIn_threshold, smoothing
            error: extra (72:1): unknown key `extra`; expected one of name, description, properties, capabilities, requirements, operations, composition, references, relationships, metrics, policies
        "#]],
    );
}

const STREAMER: &str = include_str!("../../../examples/assemblies/streamer_cluster.yaml");
const H_BTA: &str = include_str!("../../../examples/assemblies/h_bta.yaml");

fn streamer_request() -> Vec<(&'static str, &'static str)> {
    vec![
        ("deploymentLocation", "tenant-a@dc1"),
        ("resourceManager", "rm-1"),
        ("tenant_key_name", "key-a"),
        ("management-network-name", "mgmt"),
        ("public-network-name", "pub"),
    ]
}

#[test]
fn required_properties_need_a_value() {
    check_plan_err(
        STREAMER,
        &[("tenant_key_name", "k")],
        expect![[r#"
            error: properties.deploymentLocation (4:3): required property `deploymentLocation` has no value; expected a `value`, a `default` or a request parameter `deploymentLocation=…`
            error: properties.resourceManager (8:3): required property `resourceManager` has no value; expected a `value`, a `default` or a request parameter `resourceManager=…`
            error: properties.management-network-name (20:3): required property `management-network-name` has no value; expected a `value`, a `default` or a request parameter `management-network-name=…`
            error: properties.public-network-name (24:3): required property `public-network-name` has no value; expected a `value`, a `default` or a request parameter `public-network-name=…`
            error: composition.streamer.properties.deploymentLocation.value (55:16): `${deploymentLocation}` refers to property `deploymentLocation`, which has no value; expected a `value`, a `default` or a request parameter
            error: composition.streamer.properties.resourceManager.value (57:16): `${resourceManager}` refers to property `resourceManager`, which has no value; expected a `value`, a `default` or a request parameter
            error: composition.balancer.properties.deploymentLocation.value (79:16): `${deploymentLocation}` refers to property `deploymentLocation`, which has no value; expected a `value`, a `default` or a request parameter
            error: composition.balancer.properties.resourceManager.value (81:16): `${resourceManager}` refers to property `resourceManager`, which has no value; expected a `value`, a `default` or a request parameter
            error: composition.net_video.properties.deploymentLocation.value (105:16): `${deploymentLocation}` refers to property `deploymentLocation`, which has no value; expected a `value`, a `default` or a request parameter
            error: composition.net_video.properties.resourceManager.value (107:16): `${resourceManager}` refers to property `resourceManager`, which has no value; expected a `value`, a `default` or a request parameter
            error: references.management-network.properties.deploymentLocation.value (125:16): `${deploymentLocation}` refers to property `deploymentLocation`, which has no value; expected a `value`, a `default` or a request parameter
            error: references.management-network.properties.resourceManager.value (127:16): `${resourceManager}` refers to property `resourceManager`, which has no value; expected a `value`, a `default` or a request parameter
            error: references.management-network.properties.name.value (129:16): `${management-network-name}` refers to property `management-network-name`, which has no value; expected a `value`, a `default` or a request parameter
            error: references.public-network.properties.deploymentLocation.value (134:16): `${deploymentLocation}` refers to property `deploymentLocation`, which has no value; expected a `value`, a `default` or a request parameter
            error: references.public-network.properties.resourceManager.value (136:16): `${resourceManager}` refers to property `resourceManager`, which has no value; expected a `value`, a `default` or a request parameter
            error: references.public-network.properties.name.value (138:16): `${public-network-name}` refers to property `public-network-name`, which has no value; expected a `value`, a `default` or a request parameter
        "#]],
    );
}

#[test]
fn request_cannot_set_unknown_properties_and_counts_are_checked() {
    let mut r = streamer_request();
    r.extend([
        ("cluster_public_ip_address", "1.2.3.4"),
        ("numOfStreamer", "3"),
        ("numOfStreamers", "12"),
    ]);
    check_plan_err(
        STREAMER,
        &r,
        expect![[r#"
            error: request.numOfStreamer: unknown property `numOfStreamer`; expected one of deploymentLocation, resourceManager, numOfStreamers, tenant_key_name, management-network-name, public-network-name, max_connections, cluster_public_ip_address, scaleout-threshold, scalein-threshold
            error: composition.streamer.cluster.initial-quantity (49:25): initial-quantity 12 is out of bounds; expected between 2 and 10
        "#]],
    );
}

#[test]
fn request_overrides_defaults_and_expands_clusters() {
    let mut r = streamer_request();
    r.push(("numOfStreamers", "4"));
    let p = plan_text(STREAMER, &req(&r)).unwrap();
    let names: Vec<&str> = p.components[0]
        .instances
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["streamer-1", "streamer-2", "streamer-3", "streamer-4"]
    );
    assert_eq!(p.placement.len(), 6);
    // Request values are data: a `${…}` in them is not interpolated.
    let mut r = streamer_request();
    r.retain(|(k, _)| *k != "tenant_key_name");
    r.push(("tenant_key_name", "${resourceManager}"));
    let p = plan_text(STREAMER, &req(&r)).unwrap();
    assert_eq!(
        p.components[0].instances[0].properties["key_name"],
        PropertyValue::Known("${resourceManager}".into())
    );
}

#[test]
fn plan_is_deterministic_and_serde_round_trips() {
    let r = req(&streamer_request());
    let a = plan_text(STREAMER, &r).unwrap();
    let b = plan_text(STREAMER, &r).unwrap();
    assert_eq!(a, b);
    let json = serde_json::to_string(&a).unwrap();
    let back: crate::Plan = serde_json::from_str(&json).unwrap();
    assert_eq!(back, a);
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
}

const TWO: &str = r#"
name: assembly::two::1.0
description: two components
properties:
  zone:
    default: z1
composition:
  A:
    type: resource::a::1.0
    quantity: 2
    properties:
      host:
        value: a-${instance.name}-${instance.id}
      peer:
        value: ${B.tag}
      deploymentLocation:
        value: ${zone}
  B:
    type: resource::b::1.0
    properties:
      tag:
        value: t-${zone}
      from_a:
        value: ${A.host}
"#;

#[test]
fn instance_values_and_cross_references() {
    let p = plan_text(TWO, &req(&[])).unwrap();
    let a2 = &p.components[0].instances[1];
    assert_eq!(
        a2.properties["host"],
        PropertyValue::Known("a-A-2-i2".into())
    );
    assert_eq!(a2.properties["peer"], PropertyValue::Known("t-z1".into()));
    // A has two instances, each with its own host: only the runtime can say which.
    assert_eq!(
        p.components[1].instances[0].properties["from_a"],
        PropertyValue::Pending {
            text: "${A[*].host}".into(),
            awaits: vec!["A[*].host".into()]
        }
    );
    assert_eq!(p.placement[0].deployment_location.as_deref(), Some("z1"));
    assert_eq!(p.placement[2].deployment_location, None);
    assert!(
        p.warnings
            .iter()
            .any(|w| w.message.contains("no `deploymentLocation`"))
    );
}

#[test]
fn mutual_component_dependencies_are_a_named_cycle() {
    // A uses B's property and B uses A's: neither can be installed first.
    let text = TWO
        .replace("value: ${A.host}", "value: ${A.out}")
        .replace("${B.tag}", "${B.out}");
    check_plan_err(
        &text,
        &[],
        expect![[r#"
            error: composition.B (18:3): lifecycle has a cycle: install B-1 -> install A-1 -> install B-1; expected an order of installs, starts and relationship creations
        "#]],
    );
    let text = TWO
        .replace("value: ${A.host}", "value: ${A.peer}")
        .replace("${B.tag}", "${B.from_a}");
    check_validate(
        &text,
        expect![[r#"
            error: composition.A.properties.peer (14:7): cyclic property reference: composition.A.properties.peer -> composition.B.properties.from_a -> composition.A.properties.peer
        "#]],
    );
}

const RELATED: &str = r#"
name: assembly::rel::1.0
description: relationships ordering
composition:
  A:
    type: resource::a::1.0
  B:
    type: resource::b::1.0
references:
  net:
    type: resource::net::^1.0
relationships:
  ab:
    source-capabilities: [A.out]
    target-requirements: [B.in]
    source-state: Active
    target-state: Inactive
  ba:
    source-capabilities: [B.out]
    target-requirements: [A.in]
    source-state: Active
    target-state: Inactive
"#;

#[test]
fn relationship_states_can_form_a_cycle() {
    check_plan_err(
        RELATED,
        &[],
        expect![[r#"
        error: relationships.ba (18:3): lifecycle has a cycle: create ba (B-1 -> A-1) -> install A-1 -> start A-1 -> create ab (A-1 -> B-1) -> install B-1 -> start B-1 -> create ba (B-1 -> A-1); expected an order of installs, starts and relationship creations
    "#]],
    );
    // `validate` refuses it too: no request can break the cycle.
    check_validate(
        RELATED,
        expect![[r#"
            error: relationships.ba (18:3): lifecycle has a cycle: create ba (B-1 -> A-1) -> install A-1 -> start A-1 -> create ab (A-1 -> B-1) -> install B-1 -> start B-1 -> create ba (B-1 -> A-1); expected an order of installs, starts and relationship creations
        "#]],
    );
    // With `ab` created after B is Active, B no longer waits for A: no cycle.
    let once = RELATED.replacen(
        "    target-state: Inactive\n  ba:",
        "    target-state: Active\n    target-state-modifier: post\n  ba:",
        1,
    );
    assert_order(&plan_text(&once, &req(&[])).unwrap());
    let ok = RELATED.replace(
        "  ba:\n    source-capabilities: [B.out]\n    target-requirements: [A.in]",
        "  ba:\n    source-capabilities: [net]\n    target-requirements: [A.in]",
    );
    let p = plan_text(&ok, &req(&[])).unwrap();
    expect![[r#"
        1. create ba (net -> A-1) after []
        2. install A-1 after [1]
        3. start A-1 after [2]
        4. create ab (A-1 -> B-1) after [3]
        5. install B-1 after [4]
        6. start B-1 after [5]
    "#]]
    .assert_eq(
        &p.lifecycle
            .iter()
            .map(|s| format!("{}. {} after {:?}\n", s.number, s.action, s.after))
            .collect::<String>(),
    );
}

#[test]
fn a_reference_cannot_be_related_before_it_exists() {
    let text = RELATED.replace(
        "  ba:\n    source-capabilities: [B.out]",
        "  ba:\n    source-state-modifier: pre\n    source-capabilities: [net]",
    );
    check_validate(
        &text,
        expect![[r#"
        error: relationships.ba.source-state-modifier (18:3): reference `net` already exists, so `pre` cannot be honoured; expected post
    "#]],
    );
}

#[test]
fn h_bta_policy_drives_evaluate_scale() {
    let p = plan_text(H_BTA, &req(&[])).unwrap();
    let policy = &p.policies[0];
    let cluster = p.cluster(&policy.target).unwrap();
    let series = [
        95.0, 95.0, 95.0, 95.0, 95.0, 95.0, 95.0, 95.0, 5.0, 5.0, 5.0, 5.0,
    ];
    let d = crate::evaluate_scale(policy, cluster, cluster.initial, &series);
    assert_eq!(
        d,
        vec![
            crate::ScaleDecision::ScaleOut {
                at: 3,
                from: 1,
                to: 2
            },
            crate::ScaleDecision::ScaleOut {
                at: 7,
                from: 2,
                to: 3
            },
            crate::ScaleDecision::ScaleIn {
                at: 11,
                from: 3,
                to: 2
            },
        ]
    );
}

#[test]
fn lifecycle_honours_every_relationship_state() {
    for text in [STREAMER, H_BTA] {
        let p = plan_text(text, &req(&streamer_request_for(text))).unwrap();
        assert_order(&p);
    }
}

fn streamer_request_for(text: &str) -> Vec<(&'static str, &'static str)> {
    if text.contains("Streamer_cluster") {
        streamer_request()
    } else {
        Vec::new()
    }
}

/// Checks every step's prerequisites come first and relationship creations sit where their
/// states and modifiers say.
fn assert_order(p: &crate::Plan) {
    let pos = |want: &dyn Fn(&Action) -> bool| p.lifecycle.iter().position(|s| want(&s.action));
    for (i, s) in p.lifecycle.iter().enumerate() {
        assert_eq!(s.number, i + 1);
        assert!(s.after.iter().all(|&a| a < s.number), "{s:?}");
        let Action::CreateRelationship { index, .. } = &s.action else {
            continue;
        };
        let r = &p.relationships[*index];
        for (inst, (state, modifier)) in [(&r.source, r.source_state), (&r.target, r.target_state)]
        {
            let install = pos(&|a| matches!(a, Action::Install { instance } if instance == inst));
            let start = pos(&|a| matches!(a, Action::Start { instance } if instance == inst));
            let (Some(install), Some(start)) = (install, start) else {
                continue;
            };
            let reach = if state == crate::State::Active {
                start
            } else {
                install
            };
            match modifier {
                crate::Modifier::Post => assert!(reach < i, "{r:?}"),
                crate::Modifier::Pre => {
                    assert!(i < reach, "{r:?}");
                    if state == crate::State::Active {
                        assert!(install < i, "{r:?}");
                    }
                }
            }
        }
    }
}

mod random {
    //! Random small assemblies: every plan honours its constraints, or it is a named cycle.
    use proptest::prelude::*;

    use super::*;

    fn arb_assembly() -> impl Strategy<Value = String> {
        let comp = (1u32..3, proptest::bool::ANY);
        let rel = (
            0usize..3,
            0usize..3,
            proptest::bool::ANY,
            proptest::bool::ANY,
            proptest::option::of(proptest::bool::ANY),
            proptest::option::of(proptest::bool::ANY),
        );
        (proptest::collection::vec(comp, 1..4), proptest::collection::vec(rel, 0..5)).prop_map(|(comps, rels)| {
            let mut t = String::from("name: assembly::rnd::1.0\ndescription: random\ncomposition:\n");
            for (i, (q, clustered)) in comps.iter().enumerate() {
                t.push_str(&format!("  c{i}:\n    type: resource::r::1.0\n"));
                if *clustered {
                    t.push_str(&format!("    cluster:\n      minimum-nodes: {q}\n"));
                } else {
                    t.push_str(&format!("    quantity: {q}\n"));
                }
            }
            t.push_str("relationships:\n");
            let state = |b: bool| if b { "Active" } else { "Inactive" };
            let modifier = |b: bool| if b { "pre" } else { "post" };
            for (k, (s, d, ss, ts, sm, tm)) in rels.iter().enumerate() {
                let (s, d) = (s % comps.len(), d % comps.len());
                t.push_str(&format!(
                    "  r{k}:\n    source-capabilities: [c{s}.cap]\n    target-requirements: [c{d}.req]\n    source-state: {}\n    target-state: {}\n",
                    state(*ss),
                    state(*ts)
                ));
                if let Some(m) = sm {
                    t.push_str(&format!("    source-state-modifier: {}\n", modifier(*m)));
                }
                if let Some(m) = tm {
                    t.push_str(&format!("    target-state-modifier: {}\n", modifier(*m)));
                }
            }
            t
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        #[test]
        fn plans_honour_states_or_name_a_cycle(text in arb_assembly()) {
            // `validate` accepts exactly what `plan` (with no request) does not refuse.
            let validated: Vec<_> = validate(&text).into_iter().filter(|d| d.is_error()).collect();
            match plan_text(&text, &BTreeMap::new()) {
                Ok(p) => {
                    prop_assert!(validated.is_empty(), "{:?}", validated);
                    assert_order(&p);
                    let creates = p.lifecycle.iter().filter(|s| matches!(s.action, Action::CreateRelationship { .. })).count();
                    prop_assert_eq!(creates, p.relationships.len());
                }
                Err(d) => {
                    let d: Vec<_> = d.into_iter().filter(|d| d.is_error()).collect();
                    prop_assert_eq!(d.len(), 1);
                    prop_assert!(d[0].message.starts_with("lifecycle has a cycle: "), "{}", d[0]);
                    prop_assert_eq!(&validated, &d);
                }
            }
        }
    }
}

fn chain(n: usize) -> String {
    let mut t = String::from("name: assembly::deep::1.0\ndescription: d\nproperties:\n");
    for i in 0..n {
        t.push_str(&format!("  p{i}:\n    value: x${{p{}}}\n", i + 1));
    }
    t.push_str(&format!("  p{n}:\n    value: end\n"));
    t
}

#[test]
fn long_reference_chains_are_refused_not_overflowed() {
    let d = validate(&chain(5000));
    assert!(
        d.iter().any(|d| d.message.contains("nest deeper than 200")),
        "{d:?}"
    );
    let p = plan_text(&chain(150), &req(&[])).unwrap();
    assert_eq!(
        p.properties["p0"],
        PropertyValue::Known(format!("{}end", "x".repeat(150)))
    );
}

#[test]
fn truncated_and_mangled_seeds_never_panic() {
    for text in [STREAMER, H_BTA, BROKEN] {
        let cuts = text.char_indices().map(|(i, _)| i).step_by(41);
        for i in cuts {
            let _ = validate(&text[..i]);
            let _ = plan_text(&text[..i], &req(&[("deploymentLocation", "x")]));
        }
        let lines: Vec<&str> = text.lines().collect();
        for skip in (0..lines.len()).step_by(3) {
            let mangled: String = lines
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != skip)
                .map(|(_, l)| format!("{l}\n"))
                .collect();
            let diags = validate(&mangled);
            // Diagnostics come sorted by position, and every error has a message.
            assert!(
                diags
                    .windows(2)
                    .all(|w| (w[0].line, w[0].column) <= (w[1].line, w[1].column))
            );
            assert!(diags.iter().all(|d| !d.message.is_empty()));
        }
    }
}

#[test]
fn a_read_only_property_set_by_the_request_is_ignored_with_a_warning() {
    let mut r = streamer_request();
    r.push(("cluster_public_ip_address", "1.2.3.4"));
    let p = plan_text(STREAMER, &req(&r)).unwrap();
    assert_eq!(
        p.properties["cluster_public_ip_address"],
        plan_text(STREAMER, &req(&streamer_request()))
            .unwrap()
            .properties["cluster_public_ip_address"]
    );
    assert!(
        p.warnings.iter().any(|w| w.path == "request.cluster_public_ip_address"
            && w.message == "property `cluster_public_ip_address` is read-only; the request's value is ignored"),
        "{:?}",
        p.warnings
    );
}

const COUNTED: &str = "name: assembly::counted::1.0
description: a count from a property
properties:
  count:
    default: abc
composition:
  web:
    type: resource::web::1.0
    quantity: ${count}
";

#[test]
fn a_bad_default_count_is_a_warning_a_request_can_fix() {
    check_validate(
        COUNTED,
        expect![[r#"
            warning: properties.count.default (5:14): default `abc` of `count` is not a whole number, so a plan needs a request that sets `count`; expected a count such as 2
        "#]],
    );
    let p = plan_text(COUNTED, &req(&[("count", "2")])).unwrap();
    assert_eq!(p.components[0].instances.len(), 2);
    check_plan_err(
        COUNTED,
        &[],
        expect![[r#"
            error: composition.web.quantity (9:15): `${count}` (= `abc`) is not a whole number; expected a count such as 2
        "#]],
    );
    // A `value` is not the request's to change: still an error.
    check_validate(
        &COUNTED.replace("default: abc", "value: abc"),
        expect![[r#"
            error: composition.web.quantity (9:15): `${count}` (= `abc`) is not a whole number; expected a count such as 2
        "#]],
    );
}
