//! Unit tests for the inventory loader: values, defaults and diagnostics.

use super::candidates::CANDIDATE_KEYS;
use super::*;
use crate::model::{AttrValue, InventoryType, ZoneCategory};
use expect_test::{Expect, expect};

fn check_diags(text: &str, want: Expect) {
    let got = match Inventory::parse(text) {
        Ok(inv) => std::iter::once("ok\n".to_owned())
            .chain(
                inv.warnings
                    .iter()
                    .map(|d| format!("{}: {d}\n", d.severity)),
            )
            .collect(),
        Err(InventoryError::Invalid { diagnostics }) => diagnostics
            .iter()
            .map(|d| format!("{}: {d}\n", d.severity))
            .collect(),
        Err(other) => format!("unexpected error {other}"),
    };
    want.assert_eq(&got);
}

#[test]
fn profiles_make_one_candidate_each_over_the_instance() {
    let inv = Inventory::parse(
        r#"candidates:
  - candidate_id: nsi-1
    inventory_type: nsi
    inventory_provider: aai
    attributes: {instance_name: campus, latency: 99, service-role: nsi}
    profiles:
      - {profile_id: sp-a, attributes: {latency: 12}}
      - profile_id: sp-b
"#,
    )
    .expect("valid");
    let ids: Vec<&str> = inv.candidates.keys().map(CandidateId::as_str).collect();
    assert_eq!(ids, ["sp-a", "sp-b"]);
    let a = &inv.candidates["sp-a"];
    assert_eq!(a.inventory_type, InventoryType::Nsi);
    assert_eq!(a.inventory_provider.as_deref(), Some("aai"));
    let attr = |c: &Candidate, k: &str| c.attributes.get(k).cloned();
    assert_eq!(attr(a, "latency"), Some(AttrValue::Int(12)));
    assert_eq!(attr(a, "instance_id"), Some(AttrValue::Str("nsi-1".into())));
    assert_eq!(attr(a, "profile_id"), Some(AttrValue::Str("sp-a".into())));
    assert_eq!(
        attr(a, "instance_name"),
        Some(AttrValue::Str("campus".into()))
    );
    assert_eq!(
        attr(&inv.candidates["sp-b"], "latency"),
        Some(AttrValue::Int(99))
    );
    check_diags(
        r#"candidates:
  - candidate_id: nsi-1
    inventory_type: nsi
    profiles:
      - {profile_id: sp-a, colour: red}
      - {attributes: {latency: 1}}
      - {profile_id: ""}
      - just-a-name
      - {profile_id: nsi-2}
  - {candidate_id: nsi-2, inventory_type: nsi}
  - {candidate_id: nsi-3, inventory_type: nsi, profiles: []}
"#,
        expect![[r#"
            error: candidates[0].profiles[0].colour (5:28): unknown key `colour`; expected one of profile_id, attributes
            error: candidates[0].profiles[1] (6:9): missing `profile_id`
            error: candidates[0].profiles[2].profile_id (7:22): expected a non-empty profile id
            error: candidates[0].profiles[3] (8:9): expected a profile (a mapping), found string
            error: candidates[1].candidate_id (10:20): duplicate candidate id `nsi-2`; first defined at 9:9
            error: candidates[2].profiles (11:58): expected a non-empty list of profiles {profile_id, attributes}, found an empty list
        "#]],
    );
}

#[test]
fn broken_inventory_reports_every_problem() {
    check_diags(
        r#"candidates:
  - candidate_id: dfw1
    inventory_type: cloud
    latitude: 132.9
    longitude: -97.0
    cost: -5
    capacity: {vcpu: -4, ram_mib: lots}
    zones: {disaster: us-gulf, galaxy: milky-way}
    lattitude: 1
  - candidate_id: dfw1
    inventory_type: cloud
  - candidate_id: nyc1
    inventory_type: clown
    latitude: 40.7
    attributes: {a: {nested: map}, b: [1, [2]]}
    flavors:
      - capabilities: []
      - name: m1
        capabilities:
          - feature: sriov
            attributes: {pciCount: {unit: x}}
  - inventory_type: service
  - just a string
host_locations:
  HOST1: {latitude: 10}
  HOST2: {latitude: 1, longitude: "east"}
clli_locations:
  DLLSTX5: {latitude: 32.8, longitude: -97.0}
licenses:
  sw1: {available: -1}
  sw2: {count: 3}
topology: {levels: []}
topology_file: dc.yaml
extra: 1
"#,
        expect![[r#"
            error: candidates[0].latitude (4:15): latitude 132.9 out of range; expected -90..=90
            error: candidates[0].cost (6:11): cost -5 is negative; expected a cost of at least 0
            error: candidates[0].capacity.vcpu (7:22): `vcpu` is -4; expected a non-negative integer amount
            error: candidates[0].capacity.ram_mib (7:35): `ram_mib` is "lots"; expected a non-negative amount: a number (MiB), `16 GB`, or {quantity: 16, unit: GB}
            error: candidates[0].zones.galaxy (8:32): unknown zone category `galaxy`; expected one of disaster, region, complex, country, time, maintenance
            error: candidates[0].lattitude (9:5): unknown key `lattitude`; did you mean `latitude`?
            error: candidates[1].candidate_id (10:19): duplicate candidate id `dfw1`; first defined at 2:5
            error: candidates[2] (12:5): `latitude` given without `longitude`
            error: candidates[2].inventory_type (13:21): unknown inventory_type `clown`; expected one of cloud, service, transport, vfmodule, nssi, nsi, slice_profiles, nst
            error: candidates[2].attributes.a (15:21): expected a scalar or a list of scalars, found mapping
            error: candidates[2].attributes.b[1] (15:43): expected a scalar, found list
            error: candidates[2].flavors[0] (17:9): missing flavor `name`
            error: candidates[2].flavors[1].capabilities[0].attributes.pciCount (21:36): missing `value`
            error: candidates[3] (22:5): missing `candidate_id`
            error: candidates[4] (23:5): expected a candidate (a mapping), found string
            error: host_locations.HOST1 (25:10): `latitude` given without `longitude`
            error: host_locations.HOST2.longitude (26:35): expected a finite number, found string `east`
            error: clli_locations.DLLSTX5 (28:3): clli code `DLLSTX5` must be 8 letters or digits, found 7 characters
            error: licenses.sw1.available (30:20): expected a non-negative integer count, found -1
            error: licenses.sw2 (31:8): missing `available`
            error: licenses.sw2.count (31:9): unknown key `count`; expected one of available
            error: topology (32:11): missing required key `location`
            error: topology (32:11): missing required key `network`
            error: extra (34:1): unknown key `extra`; expected one of candidates, host_locations, clli_locations, licenses, topology, topology_file
        "#]],
    );
}

#[test]
fn top_level_and_candidates_shape_errors() {
    check_diags(
        "- 1\n",
        expect![[r#"
            error: (1:1): expected an inventory document (a mapping), found list
        "#]],
    );
    check_diags(
        "host_locations: {}\n",
        expect![[r#"
            error: (1:1): missing `candidates`
        "#]],
    );
    check_diags(
        "candidates: {a: 1}\n",
        expect![[r#"
            error: candidates (1:13): expected a list of candidates, found mapping
        "#]],
    );
    check_diags(
        "candidates: [\n",
        expect![[r#"
            error: (2:1): invalid YAML: while parsing a node, did not find expected node content; the flow sequence `[` opened at 1:13 is never closed (expected `]`)
        "#]],
    );
}

#[test]
fn warnings_do_not_fail_loading() {
    check_diags(
        "candidates:\n  - {candidate_id: a, inventory_type: cloud, physical_location_id: DALLAS, groups: [g1]}\n",
        expect![[r#"
            ok
            warning: candidates[0].physical_location_id (2:68): physical_location_id `DALLAS` is not a CLLI code; expected 8 letters or digits
            warning: candidates[0].groups (2:84): inventory group `g1` has only one member (`a`); expected a pair
        "#]],
    );
}

#[test]
fn seed_candidate_with_quoted_numbers_loads() {
    // Seed 000's candidate example, in JSON with quoted numbers.
    let text = r#"{"candidates": [{
        "candidate_id": "1ac71fb8-ad43-4e16-9459-c3f372b8236d",
        "candidate_type": "service", "inventory_type": "service",
        "inventory_provider": "aai", "host_id": "vnf_123456", "cost": "100",
        "location_id": "DLLSTX9A", "location_type": "azure",
        "latitude": "32.897480", "longitude": "-97.040443",
        "city": "Dallas", "state": "TX", "country": "USA", "region": "US",
        "complex_name": "dalls_one", "cloud_owner": "att-aic",
        "cloud_region_version": "1.1", "physical_location_id": "DLLSTX9A"}]}"#;
    let inv = Inventory::parse(text).expect("valid");
    let c = inv
        .candidate("1ac71fb8-ad43-4e16-9459-c3f372b8236d")
        .expect("present");
    assert_eq!(c.cost, Some(100.0));
    assert_eq!(
        c.coordinates(),
        Some(Coordinates {
            latitude: 32.89748,
            longitude: -97.040443
        })
    );
    assert_eq!(c.candidate_type, InventoryType::Service);
    assert_eq!(c.inventory_provider.as_deref(), Some("aai"));
    assert_eq!(c.zone(ZoneCategory::Region), Some("US"));
    assert_eq!(c.zone(ZoneCategory::Complex), Some("dalls_one"));
    assert_eq!(c.zone(ZoneCategory::Country), Some("USA"));
    assert!(inv.warnings.is_empty());
}

#[test]
fn values_zones_flavors_and_clli_fill() {
    let text = r#"
candidates:
  - candidate_id: dfw1
    candidate_type: cloud
    region: us-central
    cloud_region_version: 1.1
    physical_location_id: DLLSTX55
    zones: {disaster_zone: us-plains, region: central-explicit, time_zone: America/Chicago}
    capacity: {vcpu: 64}
    attributes: {sriov: true, tags: [a, 2]}
    flavors:
      - name: hpa.sriov
        capabilities:
          - feature: basicCapabilities
            attributes: {numVirtualCpu: 8, virtualMemSize: {value: 16, unit: GB}}
    groups: [g1, g1]
    topology_node: rack-7
clli_locations:
  DLLSTX55: {latitude: 32.9, longitude: -97.0}
topology_file: dc.yaml
"#;
    let inv = Inventory::parse(text).expect("valid");
    let c = inv.candidate("dfw1").expect("present");
    assert_eq!(c.inventory_type, InventoryType::Cloud);
    assert_eq!(c.cloud_region_version.as_deref(), Some("1.1"));
    assert_eq!(c.latitude, Some(32.9));
    assert_eq!(c.zone(ZoneCategory::Disaster), Some("us-plains"));
    assert_eq!(c.zone(ZoneCategory::Region), Some("central-explicit"));
    assert_eq!(c.zone(ZoneCategory::Time), Some("America/Chicago"));
    assert_eq!(c.capacity.get("vcpu"), Some(&64));
    assert_eq!(
        c.attributes.get("tags"),
        Some(&AttrValue::List(vec!["a".into(), AttrValue::Int(2)]))
    );
    let f = &c.flavors[0];
    assert_eq!(f.id, "hpa.sriov");
    let mem = f
        .attribute("basicCapabilities", "virtualMemSize")
        .expect("attribute");
    assert_eq!(mem.unit.as_deref(), Some("GB"));
    assert_eq!(f.capabilities[0].version, "v1");
    assert_eq!(f.capabilities[0].architecture, "generic");
    assert_eq!(c.groups, ["g1"]);
    assert_eq!(c.topology_node.as_deref(), Some("rack-7"));
    assert_eq!(inv.topology_file.as_deref(), Some("dc.yaml"));
    assert!(inv.topology.is_none());
}

const TOPOLOGY: &str = "
  levels: [site, host]
  finer_than: [[host, site]]
  dimensions: [vcpu]
  location:
    id: s1
    level: site
    children:
      - {id: h1, level: host, capacity: {vcpu: 8}}
      - {id: h2, level: host, capacity: {vcpu: 8}}
  network:
    id: tor
    children: [{leaf: h1}, {leaf: h2}]
";

#[test]
fn inline_topology_is_loaded_and_node_references_checked() {
    let text = format!(
        "candidates:\n  - {{candidate_id: a, inventory_type: cloud, topology_node: h1}}\n  - {{candidate_id: b, inventory_type: cloud, topology_node: s1}}\ntopology:{TOPOLOGY}"
    );
    let inv = Inventory::parse(&text).expect("valid");
    let topo = inv.topology.as_ref().expect("loaded");
    assert_eq!(topo.leaf_count(), 2);
    let h1 = topo.leaf("h1").expect("h1");
    let h2 = topo.leaf("h2").expect("h2");
    assert_eq!(topo.hops(h1, h2), 2);

    check_diags(
        &format!(
            "candidates:\n  - {{candidate_id: a, inventory_type: cloud, topology_node: h9}}\ntopology:{TOPOLOGY}"
        ),
        expect![[r#"
            error: candidates[0].topology_node (2:61): `h9` is not a vertex of the inline topology; expected a leaf or location id
        "#]],
    );
}

#[test]
fn inline_topology_problems_are_reported_under_its_key() {
    let broken = TOPOLOGY.replace(
        "level: host, capacity: {vcpu: 8}}\n      - {id: h2",
        "level: rack, capacity: {vcpu: 8}}\n      - {id: h2",
    );
    let err = Inventory::parse(&format!("candidates: []\ntopology:{broken}")).expect_err("invalid");
    let InventoryError::Invalid { diagnostics } = err else {
        panic!("expected diagnostics, got {err}")
    };
    assert!(
        diagnostics
            .iter()
            .any(|d| d.path.starts_with("topology.location")
                && d.message.contains("rack")
                && d.line > 0),
        "{diagnostics:#?}"
    );
}

#[test]
fn clli_shape() {
    assert!(is_clli("DLLSTX55"));
    assert!(!is_clli("DLLSTX5"));
    assert!(!is_clli("DLLSTX-5"));
    assert!(!is_clli("DLLSTXÄ5"));
}

#[test]
fn nearest_key_suggestion() {
    let closest = |name: &str| berth_doc::closest(name, CANDIDATE_KEYS.iter().copied());
    assert_eq!(closest("lattitude"), Some("latitude"));
    assert_eq!(closest("zzzzzzzz"), None);
}

proptest::proptest! {
    #[test]
    fn loader_never_panics_on_token_soup(
        tokens in proptest::collection::vec(
            proptest::sample::select(vec![
                "candidates:", "\n  - ", "candidate_id: a", "inventory_type: cloud", "{", "}",
                "[", "]", ", ", "latitude: 95", "longitude: -1e400", "capacity: {v: -1}",
                "zones: {time: x}", "flavors: [{name: f}]", "groups: [g]", "\n", "  ", ": ",
                "clli_locations: {X: 1}", "licenses: {s: {available: x}}", "&a ", "*a", "null",
            ]),
            0..40,
        ),
    ) {
        let text: String = tokens.concat();
        match Inventory::parse(&text) {
            Ok(inv) => proptest::prop_assert!(inv.candidates.values().all(|c| c.coordinates().is_some() == c.latitude.is_some())),
            Err(InventoryError::Invalid { diagnostics }) => proptest::prop_assert!(!diagnostics.is_empty()),
            Err(other) => proptest::prop_assert!(false, "unexpected {other}"),
        }
    }
}

#[test]
fn capacity_keys_and_units_go_through_the_dimension_registry() {
    let inv = Inventory::parse(
        r#"candidates:
  - candidate_id: nova
    inventory_type: cloud
    capacity: {vcpus: 16, ram: 32768, disk: 200, instances: 10}
  - candidate_id: placement
    inventory_type: cloud
    capacity: {VCPU: 8, MEMORY_MB: 16384, DISK_GB: 100}
  - candidate_id: multicloud
    inventory_type: cloud
    capacity: {vCPU: 4, Memory: {quantity: 16, unit: GB}, Storage: "1 TB", sriov_vf: 2}
  - candidate_id: promise
    inventory_type: cloud
    capacity: {cores: "20", ram: 51200, gigabytes: 10, addresses: 3}
"#,
    )
    .expect("valid");
    let cap = |id: &str| -> Vec<(String, i64)> {
        inv.candidates[id]
            .capacity
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect()
    };
    let own = |v: &[(&str, i64)]| -> Vec<(String, i64)> {
        v.iter().map(|(k, n)| ((*k).to_owned(), *n)).collect()
    };
    assert_eq!(
        cap("nova"),
        own(&[
            ("disk_gib", 200),
            ("instances", 10),
            ("ram_mib", 32768),
            ("vcpu", 16)
        ])
    );
    assert_eq!(
        cap("placement"),
        own(&[("disk_gib", 100), ("ram_mib", 16384), ("vcpu", 8)])
    );
    assert_eq!(
        cap("multicloud"),
        own(&[
            ("disk_gib", 1024),
            ("ram_mib", 16384),
            ("sriov_vf", 2),
            ("vcpu", 4)
        ])
    );
    assert_eq!(
        cap("promise"),
        own(&[
            ("addresses", 3),
            ("disk_gib", 10),
            ("ram_mib", 51200),
            ("vcpu", 20)
        ])
    );
    assert!(inv.warnings.is_empty(), "{:?}", inv.warnings);
    // Only the custom dimension is remembered, with where it stands.
    let custom: Vec<String> = inv
        .custom_capacity
        .iter()
        .map(|k| format!("{} {} {}:{}", k.key, k.path, k.pos.line, k.pos.column))
        .collect();
    assert_eq!(custom, ["sriov_vf candidates[2].capacity.sriov_vf 10:76"]);
}

#[test]
fn capacity_problems_name_keys_and_positions() {
    check_diags(
        r#"candidates:
  - candidate_id: a
    inventory_type: cloud
    capacity: {vcpus: 16, vCPU: 8, ram: 2048, Memory: 2}
  - candidate_id: b
    inventory_type: cloud
    capacity: {vcpu: 2.5, ram: {quantity: 4, unit: GX}, disk: [1], x: {quantity: 1, units: GB}, gpu: 2 GB}
"#,
        expect![[r#"
            error: candidates[0].capacity.vCPU (4:27): `vcpus` and `vCPU` both name dimension `vcpu`; expected one of them (`vcpus` is at 4:16)
            error: candidates[0].capacity.Memory (4:47): `ram` and `Memory` both name dimension `ram_mib`; expected one of them (`ram` is at 4:36)
            error: candidates[1].capacity.vcpu (7:22): `vcpu` is 2.5; expected a non-negative integer amount
            error: candidates[1].capacity.ram (7:32): `ram` has unknown unit `GX`; expected one of B, KB, MB, GB, TB (or KiB, MiB, GiB, TiB)
            error: candidates[1].capacity.disk (7:63): `disk` is list; expected a non-negative amount: a number (GiB), `16 GB`, or {quantity: 16, unit: GB}
            error: candidates[1].capacity.x.units (7:85): unknown key `units`; did you mean `unit`?
            error: candidates[1].capacity.gpu (7:102): `gpu` has unit `GB`; expected a plain count (units apply to memory and disk)
        "#]],
    );
    // A fraction of a base unit is dropped, and said so.
    check_diags(
        "candidates:\n  - {candidate_id: a, inventory_type: cloud, capacity: {disk: 1000 MB, ram: 1.5 GB}}\n",
        expect![[r#"
            ok
            warning: candidates[0].capacity.disk (2:63): capacity `disk` is "1000 MB", not a whole number of GiB; counted as 0 GiB
        "#]],
    );
}

#[test]
fn custom_capacity_no_request_uses_is_a_warning_with_a_suggestion() {
    let inv = Inventory::parse(
        "candidates:\n  - candidate_id: a\n    inventory_type: cloud\n    capacity: {vcpsu: 16, ram: 1024, sriov_vf: 4, GPU: 1}\n",
    )
    .expect("valid");
    let show = |used: &[&str]| -> Vec<String> {
        inv.capacity_warnings(used.iter().copied())
            .iter()
            .map(|d| format!("{}: {d}", d.severity))
            .collect()
    };
    expect![[r#"
        [
            "warning: candidates[0].capacity.vcpsu (4:16): capacity `vcpsu` is used by no request; did you mean `vcpu`?",
            "warning: candidates[0].capacity.sriov_vf (4:38): capacity `sriov_vf` is used by no request; it is no known dimension (known: vcpu, ram_mib, disk_gib, instances, addresses)",
            "warning: candidates[0].capacity.GPU (4:51): capacity `GPU` is used by no request; it is no known dimension (known: vcpu, ram_mib, disk_gib, instances, addresses)",
        ]
    "#]]
    .assert_debug_eq(&show(&[]));
    // A request using a dimension silences it; one spelling it otherwise is suggested.
    expect![[r#"
        [
            "warning: candidates[0].capacity.vcpsu (4:16): capacity `vcpsu` is used by no request; did you mean `vcpu`?",
            "warning: candidates[0].capacity.GPU (4:51): capacity `GPU` is used by no request; did you mean `gpu`?",
        ]
    "#]]
    .assert_debug_eq(&show(&["sriov_vf", "gpu", "vcpu"]));
}

#[test]
fn a_custom_capacity_on_many_candidates_is_one_warning_at_its_first_place() {
    let inv = Inventory::parse(
        "candidates:\n  - {candidate_id: a, inventory_type: cloud, capacity: {sessions: 5}}\n  - {candidate_id: b, inventory_type: cloud, capacity: {sessions: 6, vcpsu: 2}}\n  - {candidate_id: c, inventory_type: cloud, capacity: {sessions: 7}}\n",
    )
    .expect("valid");
    let shown: Vec<String> = inv
        .capacity_warnings(["vcpu"])
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        shown,
        [
            "candidates[0].capacity.sessions (2:57): capacity `sessions` (and on 2 more candidate(s)) is used by no request; it is no known dimension (known: vcpu, ram_mib, disk_gib, instances, addresses)",
            "candidates[1].capacity.vcpsu (3:70): capacity `vcpsu` is used by no request; did you mean `vcpu`?",
        ]
    );
}

#[test]
fn flavor_sizes_are_read_through_the_registry() {
    let inv = Inventory::parse(
        r#"candidates:
  - candidate_id: a
    inventory_type: cloud
    flavors:
      - name: m1.large
        capabilities:
          - feature: basicCapabilities
            attributes:
              numVirtualCpu: 4
              virtualMemSize: {value: 8, unit: GB}
              diskSize: {value: 40, unit: GB}
              cpuArchitecture: x86
      - name: m1.mib
        capabilities:
          - {feature: basicCapabilities, attributes: {numVirtualCpu: "2", virtualMemSize: 2048}}
"#,
    )
    .expect("valid");
    let f = &inv.candidates["a"].flavors;
    assert_eq!(
        f[0].size().into_iter().collect::<Vec<_>>(),
        [("disk_gib", 40), ("ram_mib", 8192), ("vcpu", 4)]
    );
    assert_eq!(
        f[1].size().into_iter().collect::<Vec<_>>(),
        [("ram_mib", 2048), ("vcpu", 2)]
    );
    check_diags(
        r#"candidates:
  - candidate_id: a
    inventory_type: cloud
    flavors:
      - name: bad
        capabilities:
          - feature: basicCapabilities
            attributes: {numVirtualCpu: 2.5, vcpus: 2, virtualMemSize: {value: 8, unit: GX}, diskSize: true}
"#,
        expect![[r#"
            error: candidates[0].flavors[0].capabilities[0].attributes.numVirtualCpu (8:41): `numVirtualCpu` is 2.5; expected a non-negative integer amount
            error: candidates[0].flavors[0].capabilities[0].attributes.vcpus (8:46): `numVirtualCpu` and `vcpus` both name dimension `vcpu`; expected one of them (`numVirtualCpu` is at 8:26)
            error: candidates[0].flavors[0].capabilities[0].attributes.virtualMemSize (8:72): `virtualMemSize` has unknown unit `GX`; expected one of B, KB, MB, GB, TB (or KiB, MiB, GiB, TiB)
            error: candidates[0].flavors[0].capabilities[0].attributes.diskSize (8:104): `diskSize` is true; expected a non-negative amount: a number (GiB), `16 GB`, or {quantity: 16, unit: GB}
        "#]],
    );
}

/// One random edit (delete, insert, substitute, swap neighbours) of `s`.
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

fn any_alias() -> impl proptest::strategy::Strategy<Value = &'static str> {
    proptest::sample::select(
        berth_units::dimension::DIMENSIONS
            .iter()
            .flat_map(|d| d.aliases.iter().map(|a| a.name))
            .collect::<Vec<_>>(),
    )
}

proptest::proptest! {
    /// Random spellings of known dimensions load as the dimension; random near misses are
    /// kept as written and named at their line:column with a suggestion.
    #[test]
    fn near_miss_capacity_keys_are_named_with_a_suggestion(
        known in any_alias(),
        upper in proptest::collection::vec(proptest::bool::ANY, 32),
        typo_of in any_alias(),
        kind in 0u8..4,
        at in 0usize..32,
        c in proptest::char::range('a', 'z'),
        indent in 0usize..4,
    ) {
        let cased: String = known
            .chars()
            .zip(&upper)
            .map(|(ch, up)| if *up { ch.to_ascii_uppercase() } else { ch.to_ascii_lowercase() })
            .collect();
        let typo = edited(typo_of, kind, at, c);
        proptest::prop_assume!(berth_units::dimension::lookup(&typo).is_none());
        proptest::prop_assume!(typo.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_'));
        proptest::prop_assume!(berth_units::dimension::fold(&typo).len() > 3);
        let pad = " ".repeat(indent);
        let text = format!(
            "candidates:\n  - candidate_id: a\n    inventory_type: cloud\n    capacity:\n      {pad}{cased}: 7\n      {pad}{typo}: 3\n"
        );
        let inv = Inventory::parse(&text).map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e:?}\n{text}")))?;
        let dim = berth_units::dimension::canonical(known).into_owned();
        let c0 = &inv.candidates["a"];
        // 7 in the alias's unit: 7 of a count, 7 MiB or GiB, or 7 GB as MiB.
        proptest::prop_assert!(matches!(c0.capacity.get(&dim), Some(7 | 7168)), "{:?}", c0.capacity);
        proptest::prop_assert_eq!(c0.capacity.get(&typo), Some(&3));
        let w = inv.capacity_warnings([]);
        proptest::prop_assert_eq!(w.len(), 1);
        let col = u32::try_from(7 + indent).unwrap_or(0);
        proptest::prop_assert_eq!((w[0].line, w[0].column), (6, col));
        let head = format!("capacity `{typo}` is used by no request; did you mean `");
        proptest::prop_assert!(w[0].message.starts_with(&head), "{}", w[0].message);
    }
}

proptest::proptest! {
    /// A random unknown or near-miss key added to the root or to a candidate is named by its
    /// field path and line:column; a near miss with the key it likely meant.
    #[test]
    fn unknown_and_near_miss_keys_are_named_where_they_stand(
        site in 0usize..2,
        near in proptest::bool::ANY,
        random in "[a-z][a-z_]{2,11}",
        pick in proptest::prelude::any::<proptest::sample::Index>(),
        kind in 0u8..4,
        at in 0usize..32,
        c in proptest::char::range('a', 'z'),
    ) {
        let base = "candidates:\n  - candidate_id: c1\n    inventory_type: cloud\n    cost: 1\n";
        // (keys allowed there, line the key lands on, indentation, path prefix)
        let (allowed, line, indent, prefix) = [
            (super::TOP_KEYS, 1, 0, ""),
            (CANDIDATE_KEYS, 4, 4, "candidates[0]."),
        ][site];
        let key = if near { edited(allowed[pick.index(allowed.len())], kind, at, c) } else { random };
        proptest::prop_assume!(!allowed.contains(&key.as_str()) && !["null", "true", "false"].contains(&key.as_str()));
        let mut lines: Vec<String> = base.lines().map(str::to_owned).collect();
        lines.insert(line - 1, format!("{}{key}: 1", " ".repeat(indent)));
        let text = lines.join("\n") + "\n";
        let diags = match Inventory::parse(&text) {
            Err(crate::InventoryError::Invalid { diagnostics }) => diagnostics,
            other => return Err(proptest::test_runner::TestCaseError::fail(format!("{other:?}\n{text}"))),
        };
        let named = diags.iter().find(|d| d.path == format!("{prefix}{key}"));
        proptest::prop_assert!(named.is_some(), "{text}\n{diags:#?}");
        let d = named.unwrap();
        proptest::prop_assert_eq!((d.line as usize, d.column as usize), (line, indent + 1));
        proptest::prop_assert!(d.message.starts_with(&format!("unknown key `{key}`; ")), "{}", d.message);
        if near {
            proptest::prop_assert!(d.message.contains("did you mean `"), "{}", d.message);
        }
    }
}
