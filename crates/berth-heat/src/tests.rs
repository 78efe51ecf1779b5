//! Unit tests of template loading and policy expansion.

use std::collections::BTreeSet;

use expect_test::expect;
use proptest::prelude::*;

use crate::{
    Member, PolicyKind, Reference, ResourceId, ResourceKind, Subject, Template, load, parse,
};

const HADOOP: &str = include_str!("../../../examples/heat/hadoop-5vm.json");
const HA: &str = include_str!("../../../examples/heat/ha-clusters.yaml");
const BROKEN: &str = include_str!("../../../examples/heat/broken.yaml");

fn names(t: &Template, ids: &[ResourceId]) -> Vec<String> {
    ids.iter()
        .filter_map(|&r| t.resource(r).map(|x| x.name.clone()))
        .collect()
}

#[test]
fn seed_hadoop_example_loads_with_its_policies() {
    let loaded = load(HADOOP);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let t = loaded.template.unwrap();
    assert_eq!(t.resources.len(), 13);
    assert_eq!(t.groups.len(), 3);
    assert_eq!(t.groups[0].id, "hadoop-1.1.2-wcc");
    let dn = t.resource_id("WCA4-hadoop-datanode-4").unwrap();
    let vol = t
        .resource_id("Storage volume used by datanode server_0")
        .unwrap();
    assert!(matches!(&t.resources["$vtid_15"].kind,
        ResourceKind::VolumeAttachment { instance, volume }
            if *instance == crate::Endpoint::Resource(dn) && *volume == crate::Endpoint::Resource(vol)));
    assert_eq!(
        t.resources["Storage volume used by datanode server_0"].kind,
        ResourceKind::Volume { size_gib: 300 }
    );
    let apps = t.applications();
    let anti: Vec<_> = apps
        .iter()
        .filter(|a| {
            matches!(
                t.policies[a.policy.index()].kind,
                PolicyKind::AntiCoLocation { .. }
            )
        })
        .collect();
    assert_eq!(anti.len(), 1);
    let anti_policy = &t.policies[anti[0].policy.index()];
    assert!(!anti_policy.hard);
    assert_eq!(anti_policy.label(), "AntiColocationConstraint_$vtid_17");
    let Subject::Across(parts) = &anti[0].subject else {
        panic!("expected parts")
    };
    assert_eq!(parts.len(), 4);
    assert!(parts.iter().all(|p| p.len() == 1));
    let hops: Vec<_> = apps
        .iter()
        .filter(|a| t.policies[a.policy.index()].kind == PolicyKind::NetMaxHops { hops: 0 })
        .collect();
    assert_eq!(hops.len(), 4);
    assert!(
        hops.iter()
            .any(|a| a.subject == Subject::Across(vec![vec![dn], vec![vol]]))
    );
    let count = |k: PolicyKind| {
        apps.iter()
            .filter(|a| t.policies[a.policy.index()].kind == k)
            .count()
    };
    assert_eq!(count(PolicyKind::VolExclusive), 4);
    assert_eq!(count(PolicyKind::VolNotMoved), 4);
}

#[test]
fn ha_clusters_expand_to_three_llmn_groups_of_four() {
    let t = parse(HA).unwrap();
    assert_eq!(
        t.resources["M23"].kind,
        ResourceKind::Server {
            flavor: "m1.large".into()
        }
    );
    let apps = t.applications();
    assert_eq!(apps.len(), 3);
    for (i, a) in apps.iter().enumerate() {
        assert_eq!(
            t.policies[a.policy.index()].kind,
            PolicyKind::Llmn {
                l1: "rack".into(),
                l2: "PM".into(),
                n: 2
            }
        );
        let Subject::Members(m) = &a.subject else {
            panic!("expected members")
        };
        let want: Vec<String> = (1..=4).map(|k| format!("M{}{k}", i + 1)).collect();
        assert_eq!(names(&t, m), want);
    }
}

#[test]
fn yaml_and_json_give_the_same_template() {
    let yaml = parse(HA).unwrap();
    let json_text = berth_doc::parse(HA).unwrap().to_json().to_string();
    let json = parse(&json_text).unwrap();
    assert_eq!(yaml.resources, json.resources);
    assert_eq!(yaml.groups, json.groups);
    let kinds = |t: &Template| {
        t.policies
            .iter()
            .map(|p| (p.kind.clone(), p.hard, p.path.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(kinds(&yaml), kinds(&json));
}

#[test]
fn broken_template_reports_every_problem() {
    let loaded = load(BROKEN);
    assert!(loaded.template.is_none());
    let text: String = loaded
        .diagnostics
        .iter()
        .map(|d| format!("{}: {d}\n", d.severity))
        .collect();
    expect![[r#"
        error: resources.web2.properties.flavor (5:47): parameter `nope` has no default; expected a flavor name
        error: resources.db.properties (6:7): missing property `flavor`; expected a flavor name
        error: resources.db.policies[0].type (6:75): policy `OS::AntiCoLocation` relates two resources; expected it in a relationship, on a group or on a volume attachment
        error: resources.vol.properties.size (7:54): `size` is an integer `-5`; expected a size in GiB (a positive integer)
        error: resources.orphan (8:3): resource `orphan` is in no group; expected every resource in exactly one group
        error: resources.attach.properties.instance_uuid.get_resource (11:48): resource `vol` is of type `OS::Cinder::Volume`; expected a server (OS::Nova::Server or AWS::EC2::Instance)
        error: resources.attach.policies[0].type (12:23): policy `OS::VolExclusive` is about one resource; expected a policy relating the instance and the volume on a volume attachment
        error: groups.members[0].members[2].get_resource (17:76): unknown resource `ghost`; expected a resource of this template
        error: groups.members[0].policies[0].properties (19:11): missing property `level` of `OS::AntiCoLocation`
        error: groups.members[0].policies[0].properties.hardConstraint (19:67): `hardConstraint` is a string `maybe`; expected true or false
        error: groups.members[0].policies[1].properties.n (20:78): value is an integer `0`; expected a positive integer
        error: groups.members[0].policies[2].type (21:18): unknown policy type `OS::Firewall`; expected one of OS::CoLocation, OS::AntiCoLocation, OS::LLMNAntiCoLocation, OS::NetMaxHops, OS::NetBandwidth, OS::NetReachability, OS::NetEndpointAccess, OS::LicensedProduct, OS::VolExclusive, OS::VolNotMoved
        error: groups.members[0].policies[3].type (22:18): policy `OS::NetEndpointAccess` is asymmetric; expected it in a relationship, not on a group
        error: groups.members[1].id (23:11): duplicate group id `web` (first at 16:11); expected unique group ids
        error: groups.members[1].members[1].get_resource (24:52): resource `web1` is already a member of group `web` (at groups.members[0].members[0]); expected every resource in exactly one group, found it again in `web`
        error: groups.members[1].relationships[0].related.get_group (26:32): unknown group `nowhere`; expected one of root, web
        error: groups.members[1].relationships[0].policies[0].properties.burst (27:84): unknown property `burst` of `OS::NetBandwidth`; expected one of bytes_per_second, hardConstraint, weight
        error: groups.members[1].relationships[1].policies[0].type (29:29): policy `OS::VolNotMoved` is not about a pair; expected a policy relating two resources in a relationship
    "#]]
    .assert_eq(&text);
}

#[test]
fn nested_groups_apply_across_direct_members_only() {
    let t = parse(
        r"
heat_template_version: 2013-05-23
resources:
  R1: {type: OS::Nova::Server, properties: {flavor: f}}
  R2: {type: OS::Nova::Server, properties: {flavor: f}}
  R3: {type: OS::Nova::Server, properties: {flavor: f}}
  R4: {type: OS::Nova::Server, properties: {flavor: f}}
  V: {type: OS::Cinder::Volume, properties: {size: 1}}
groups:
  id: GP
  policies: [{type: OS::AntiCoLocation, properties: {level: rack}}, {type: OS::LicensedProduct, properties: {catalog: c, product: p}}]
  relationships: [{related: ext-123, policies: [{type: OS::NetReachability}]}]
  members:
    - {id: GL, members: [{get_resource: R1}, {get_resource: R2}], relationships: [{related: {get_group: GR}, policies: [{type: OS::NetMaxHops, properties: {hops: 2}}]}]}
    - {id: GR, members: [{get_resource: R3}, {get_resource: R4}]}
    - {get_resource: V}
",
    )
    .unwrap();
    let r = |n: &str| t.resource_id(n).unwrap();
    assert_eq!(
        t.groups[1].relationships[0].related,
        Reference::Group(t.group_id("GR").unwrap())
    );
    let apps = t.applications();
    let got: Vec<(String, Subject)> = apps
        .iter()
        .map(|a| {
            (
                t.policies[a.policy.index()].kind.type_name().to_owned(),
                a.subject.clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "OS::AntiCoLocation".into(),
                Subject::Across(vec![
                    vec![r("R1"), r("R2")],
                    vec![r("R3"), r("R4")],
                    vec![r("V")]
                ])
            ),
            ("OS::LicensedProduct".into(), Subject::One(r("R1"))),
            ("OS::LicensedProduct".into(), Subject::One(r("R2"))),
            ("OS::LicensedProduct".into(), Subject::One(r("R3"))),
            ("OS::LicensedProduct".into(), Subject::One(r("R4"))),
            (
                "OS::NetReachability".into(),
                Subject::External(
                    vec![r("R1"), r("R2"), r("R3"), r("R4"), r("V")],
                    "ext-123".into()
                )
            ),
            (
                "OS::NetMaxHops".into(),
                Subject::Across(vec![vec![r("R1"), r("R2")], vec![r("R3"), r("R4")]])
            ),
        ]
    );
}

#[test]
fn without_groups_an_implicit_root_holds_every_resource() {
    let t = parse("heat_template_version: 2013-05-23\nresources:\n  a: {type: OS::Nova::Server, properties: {flavor: x}}\n  n: {type: OS::Neutron::Net}\n").unwrap();
    assert_eq!(t.groups.len(), 1);
    assert!(t.groups[0].implicit);
    assert_eq!(
        t.groups[0].members,
        vec![
            Member::Resource(ResourceId(0)),
            Member::Resource(ResourceId(1))
        ]
    );
    assert_eq!(t.resources["n"].kind, ResourceKind::Other);
}

#[test]
fn missing_and_repeated_membership_are_errors() {
    let text = "heat_template_version: 2013-05-23\nresources:\n  a: {type: OS::Nova::Server, properties: {flavor: x}}\n  b: {type: OS::Nova::Server, properties: {flavor: x}}\ngroups:\n  id: g\n  members: [{get_resource: a}, {id: h, members: [{get_resource: a}]}]\n";
    let d = load(text).diagnostics;
    let msgs: Vec<String> = d.iter().map(ToString::to_string).collect();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(
        msgs[0].starts_with("resources.b (4:3): resource `b` is in no group"),
        "{msgs:?}"
    );
    assert!(
        msgs[1].contains("resource `a` is already a member of group `g`"),
        "{msgs:?}"
    );
}

#[test]
fn a_text_that_is_not_a_template_is_one_diagnostic() {
    let d = load("[1, 2").diagnostics;
    assert_eq!(d.len(), 1);
    let d = load("- a\n- b\n").diagnostics;
    assert_eq!(d[0].message, "template is a list; expected a mapping");
}

/// A random group tree over `n` resources: `parent_of[i]` for group i > 0 is a smaller index;
/// `home[r]` is the group of resource r.
fn tree_text(parent_of: &[usize], home: &[usize]) -> String {
    fn emit(g: usize, parent_of: &[usize], home: &[usize], out: &mut String, depth: usize) {
        let pad = "  ".repeat(depth);
        out.push_str(&format!("{pad}id: g{g}\n{pad}members:\n"));
        out.push_str(&format!("{pad}  - {{get_resource: pad{g}}}\n"));
        for (r, h) in home.iter().enumerate() {
            if *h == g {
                out.push_str(&format!("{pad}  - {{get_resource: r{r}}}\n"));
            }
        }
        for (c, p) in parent_of.iter().enumerate().skip(1) {
            if *p == g {
                out.push_str(&format!("{pad}  -\n"));
                emit(c, parent_of, home, out, depth + 2);
            }
        }
        if g == 0 {
            out.push_str(&format!(
                "{pad}policies: [{{type: OS::AntiCoLocation, properties: {{level: host}}}}]\n"
            ));
        }
    }
    let mut out = String::from("heat_template_version: 2013-05-23\nresources:\n");
    for r in 0..home.len() {
        out.push_str(&format!(
            "  r{r}: {{type: OS::Nova::Server, properties: {{flavor: f}}}}\n"
        ));
    }
    for g in 0..parent_of.len() {
        // Non-placed padding resources keep every group non-empty.
        out.push_str(&format!("  pad{g}: {{type: OS::Neutron::Port}}\n"));
    }
    out.push_str("groups:\n");
    emit(0, parent_of, home, &mut out, 1);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Oracle: a symmetric policy on the root covers {x, y} iff x and y sit under different
    /// direct members of the root (seed 004 recursion), and every resource is in one group.
    #[test]
    fn group_expansion_matches_the_pair_oracle(
        parents in proptest::collection::vec(0usize..100, 1..6),
        homes in proptest::collection::vec(0usize..100, 0..9),
    ) {
        let parent_of: Vec<usize> = std::iter::once(0)
            .chain(parents.iter().enumerate().map(|(i, p)| p % (i + 1)))
            .collect();
        let home: Vec<usize> = homes.iter().map(|h| h % parent_of.len()).collect();
        let t = parse(&tree_text(&parent_of, &home)).unwrap();
        // Top-level member under the root of each group (root maps to itself).
        let top = |mut g: usize| { while g != 0 && parent_of[g] != 0 { g = parent_of[g]; } g };
        let mut want = BTreeSet::new();
        for x in 0..home.len() {
            for y in x + 1..home.len() {
                let (a, b) = (home[x], home[y]);
                if a == 0 || b == 0 || top(a) != top(b) {
                    want.insert((format!("r{x}"), format!("r{y}")));
                }
            }
        }
        let mut got = BTreeSet::new();
        for app in t.applications() {
            if let Subject::Across(parts) = app.subject {
                for (i, p) in parts.iter().enumerate() {
                    for q in &parts[i + 1..] {
                        for &x in p {
                            for &y in q {
                                let (nx, ny) = (t.resource(x).unwrap().name.clone(), t.resource(y).unwrap().name.clone());
                                let key = if nx.len() < ny.len() || (nx.len() == ny.len() && nx < ny) { (nx, ny) } else { (ny, nx) };
                                prop_assert!(got.insert(key), "a pair appears twice");
                            }
                        }
                    }
                }
            }
        }
        prop_assert_eq!(got, want);
        for r in t.resources.values() {
            let holders = t.groups.iter().filter(|g| g.members.iter().any(|m| matches!(m, Member::Resource(x) if t.resource(*x).map(|y| &y.name) == Some(&r.name)))).count();
            prop_assert_eq!(holders, 1);
        }
    }
}

fn rendered(text: &str) -> String {
    load(text)
        .diagnostics
        .iter()
        .map(|d| format!("{}: {d}\n", d.severity))
        .collect()
}

#[test]
fn a_misspelt_type_in_a_policy_group_is_refused_by_name() {
    let text = HA.replace(
        "M34: {type: OS::Nova::Server",
        "M34: {type: OS::Nova::Servr",
    );
    let loaded = load(&text);
    assert!(loaded.template.is_none());
    expect![[r#"
        error: resources.M34.type (22:15): resource `M34` has unknown type `OS::Nova::Servr` and it is a member of policy group `G3`, so it would be left out of the placement; did you mean `OS::Nova::Server`?
    "#]]
    .assert_eq(&rendered(&text));
}

#[test]
fn unknown_types_outside_policies_are_judged_by_how_near_they_are() {
    let text = "heat_template_version: 2013-05-23
resources:
  a: {type: OS::Nova::Server, properties: {flavor: m1.small}, relationships: [{related: {get_resource: p}, policies: [{type: OS::CoLocation, properties: {level: host}}]}]}
  p: {type: My::Probe}
  n: {type: OS::Neutron::Nett}
  c: {type: Acme::Custom::Thing}
  s: {type: nested/stack.yaml}
  k: {type: OS::Neutron::Port}
";
    expect![[r#"
        error: resources.p.type (4:13): resource `p` has unknown type `My::Probe` and a relationship names it, so it would be left out of the placement; expected a placed type (OS::Nova::Server, AWS::EC2::Instance, OS::Cinder::Volume, AWS::EC2::Volume) or another Heat resource type
        error: resources.n.type (5:13): resource `n` has unknown type `OS::Neutron::Nett`; did you mean `OS::Neutron::Net`?
        warning: resources.c.type (6:13): resource `c` has unknown type `Acme::Custom::Thing`; it is not placed (placed types: OS::Nova::Server, AWS::EC2::Instance, OS::Cinder::Volume, AWS::EC2::Volume)
    "#]]
    .assert_eq(&rendered(text));
}

#[test]
fn a_nested_stack_in_a_policy_group_is_refused() {
    let text = "heat_template_version: 2013-05-23
resources:
  a: {type: OS::Nova::Server, properties: {flavor: m1.small}}
  b: {type: web_tier.yaml}
groups:
  id: g
  members: [{get_resource: a}, {get_resource: b}]
  policies: [{type: OS::AntiCoLocation, properties: {level: host}}]
";
    expect![[r#"
        error: resources.b.type (4:13): resource `b` is a nested stack (`web_tier.yaml`) and it is a member of policy group `g`, but policies do not reach the resources inside a nested stack; expected its servers and volumes in this template
    "#]]
    .assert_eq(&rendered(text));
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

const KEYED: &str = "heat_template_version: 2013-05-23
resources:
  a:
    type: OS::Nova::Server
    properties: {flavor: m1.small}
  b:
    type: OS::Nova::Server
    properties: {flavor: m1.small}
groups:
  id: g
  members: [{get_resource: a}, {get_resource: b}]
  policies:
    - type: OS::AntiCoLocation
      properties: {level: host}
";

proptest! {
    /// A random unknown or near-miss key added to the root, a resource, a group or a policy
    /// is named by its field path and line:column; a near miss with the key it likely meant.
    #[test]
    fn unknown_and_near_miss_keys_are_named_where_they_stand(
        site in 0usize..4,
        near in any::<bool>(),
        random in "[a-z][a-z_]{2,11}",
        pick in any::<prop::sample::Index>(),
        kind in 0u8..4,
        at in 0usize..32,
        c in proptest::char::range('a', 'z'),
    ) {
        use crate::load::{GROUP_KEYS, POLICY_KEYS, RESOURCE_KEYS, TOP_KEYS};
        // (keys allowed there, line the key lands on, indentation, path prefix)
        let (allowed, line, indent, prefix) = [
            (TOP_KEYS, 2, 0, ""),
            (RESOURCE_KEYS, 5, 4, "resources.a."),
            (GROUP_KEYS, 11, 2, "groups."),
            (POLICY_KEYS, 14, 6, "groups.policies[0]."),
        ][site];
        let key = if near { edited(allowed[pick.index(allowed.len())], kind, at, c) } else { random };
        prop_assume!(!allowed.contains(&key.as_str()) && !["null", "true", "false"].contains(&key.as_str()));
        let mut lines: Vec<String> = KEYED.lines().map(str::to_owned).collect();
        lines.insert(line - 1, format!("{}{key}: 1", " ".repeat(indent)));
        let text = lines.join("\n") + "\n";
        let diags = load(&text).diagnostics;
        let named = diags.iter().find(|d| d.path == format!("{prefix}{key}"));
        prop_assert!(named.is_some(), "{text}\n{diags:#?}");
        let d = named.unwrap();
        prop_assert!(d.is_error());
        prop_assert_eq!((d.line as usize, d.column as usize), (line, indent + 1));
        prop_assert!(d.message.starts_with(&format!("unknown key `{key}`; ")), "{}", d.message);
        if near {
            prop_assert!(d.message.contains("did you mean `"), "{}", d.message);
        }
    }
}
