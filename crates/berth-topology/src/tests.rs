//! Unit tests: queries on a hand-built topology, diagnostics snapshots, emitter and generator.

use expect_test::{Expect, expect};

use crate::generate::{DatacenterSpec, datacenter};
use crate::{
    DocumentForm, Link, ProblemKind, Topology, TopologyBuilder, TopologyError, load, to_yaml,
};

const SMALL_DC: &str = include_str!("../../../examples/topology/small-dc.yaml");

/// dc (NYC) > room1 > {rackA: hA1 hA2 sbA, rackB: hB1}; room2 (London) > rackC > hC1.
/// Network: core > agg1 > {torA > hA1 hA2 sbA, torB > hB1}; core > agg2 > hC1.
fn sample() -> Topology {
    let mut b = TopologyBuilder::new();
    for l in ["region", "room", "rack", "host", "storage_box"] {
        b.level(l);
    }
    b.finer_than("room", "region")
        .finer_than("rack", "room")
        .finer_than("host", "rack")
        .finer_than("storage_box", "rack");
    b.dimension("vcpu").dimension("disk_gib");
    b.location("dc", None, "region")
        .coordinates(40.7128, -74.006);
    b.location("room1", Some("dc"), "room");
    b.location("rackA", Some("room1"), "rack");
    b.location("hA1", Some("rackA"), "host")
        .capacity("vcpu", 32)
        .machine_type("x86");
    b.location("hA2", Some("rackA"), "host")
        .capacity("vcpu", 16);
    b.location("sbA", Some("rackA"), "storage_box")
        .capacity("disk_gib", 1000);
    b.location("rackB", Some("room1"), "rack");
    b.location("hB1", Some("rackB"), "host");
    b.location("room2", Some("dc"), "room")
        .coordinates(51.5074, -0.1278);
    b.location("rackC", Some("room2"), "rack");
    b.location("hC1", Some("rackC"), "host");
    b.switch("core", None, Link::default());
    b.switch("agg1", Some("core"), Link::new(100_000, 10_000));
    b.switch("torA", Some("agg1"), Link::new(40_000, 5_000));
    b.network_leaf("hA1", Some("torA"), Link::new(10_000, 1_000));
    b.network_leaf("hA2", Some("torA"), Link::new(25_000, 1_000));
    b.network_leaf(
        "sbA",
        Some("torA"),
        Link {
            bandwidth_mbps: None,
            latency_ns: 1_000,
        },
    );
    b.switch("torB", Some("agg1"), Link::new(40_000, 5_000));
    b.network_leaf("hB1", Some("torB"), Link::new(10_000, 1_000));
    b.switch("agg2", Some("core"), Link::new(50_000, 1_000_000));
    b.network_leaf("hC1", Some("agg2"), Link::new(10_000, 1_000));
    b.build().unwrap()
}

#[test]
fn queries_on_sample() {
    let t = sample();
    let leaf = |s: &str| t.leaf(s).unwrap();
    let (ha1, ha2, sba, hb1, hc1) = (
        leaf("hA1"),
        leaf("hA2"),
        leaf("sbA"),
        leaf("hB1"),
        leaf("hC1"),
    );
    let level = |s: &str| t.level(s).unwrap();

    assert_eq!(t.leaf_count(), 5);
    assert_eq!(t.leaf_capacity(ha1), &[32, 0]);
    assert_eq!(t.leaf_capacity(sba), &[0, 1000]);
    assert_eq!(t.leaf_machine_type(ha1), Some("x86"));
    assert_eq!(t.leaf_machine_type(ha2), None);

    assert_eq!(t.hops(ha1, ha1), 0);
    assert_eq!(t.hops(ha1, ha2), 2);
    assert_eq!(t.hops(ha1, hb1), 4);
    assert_eq!(t.hops(ha1, hc1), 5);
    assert_eq!(t.hops(hc1, ha1), 5);

    assert_eq!(t.path_bottleneck_bandwidth(ha1, ha2), Some(10_000));
    assert_eq!(t.path_bottleneck_bandwidth(ha2, sba), Some(25_000));
    assert_eq!(t.path_bottleneck_bandwidth(sba, sba), None);
    assert_eq!(t.path_bottleneck_bandwidth(ha2, hc1), Some(10_000));
    assert_eq!(
        t.path_latency_ns(ha1, hc1),
        1_000 + 5_000 + 10_000 + 1_000_000 + 1_000
    );
    assert_eq!(t.path_latency_ms(ha1, ha2), 0.002);

    let mut edges: Vec<&str> = t
        .path_edges(ha1, hb1)
        .map(|e| t.net_name(e.child()))
        .collect();
    edges.sort_unstable();
    assert_eq!(edges, ["hA1", "hB1", "torA", "torB"]);
    assert_eq!(t.path_edges(ha1, ha1).count(), 0);

    assert_eq!(
        t.ancestor_at_level(hc1, level("rack"))
            .map(|v| t.loc_name(v)),
        Some("rackC")
    );
    assert_eq!(t.ancestor_at_level(sba, level("host")), None);
    assert_eq!(
        t.ancestor_at_level(ha1, level("host")),
        Some(t.leaf_location(ha1))
    );
    assert!(t.same_at_level(ha1, sba, level("rack")));
    assert!(t.same_at_level(ha1, hb1, level("room")));
    assert!(t.differ_at_level(ha1, hb1, level("rack")));
    assert!(t.same_at_level(ha1, ha1, level("host")));
    assert!(
        t.same_at_level(sba, sba, level("host")),
        "a storage box has no host level above it, yet is in one place with itself"
    );
    assert!(
        t.differ_at_level(sba, ha1, level("host")),
        "a storage box stands for itself at the host level"
    );
    assert_eq!(t.vertex_at_level(sba, level("host")), t.leaf_location(sba));

    assert_eq!(t.loc_name(t.lca_location(ha1, hb1)), "room1");
    assert_eq!(t.loc_name(t.lca_location(ha1, hc1)), "dc");
    assert_eq!(t.net_name(t.lca_network(ha1, hc1)), "core");

    assert_eq!(t.geo_distance_km(ha1, hb1), Some(0.0));
    let london = t.geo_distance_km(ha1, hc1).unwrap();
    assert!((london - 5570.23).abs() < 0.5, "{london}");

    let room1 = t.location("room1").unwrap();
    assert_eq!(t.leaves_under(room1), 0..4);
    let racks: Vec<&str> = t
        .vertices_at_level(level("rack"))
        .iter()
        .map(|&v| t.loc_name(v))
        .collect();
    assert_eq!(racks, ["rackA", "rackB", "rackC"]);
    let kids: Vec<&str> = t
        .loc_children(t.loc_root())
        .map(|v| t.loc_name(v))
        .collect();
    assert_eq!(kids, ["room1", "room2"]);
    assert_eq!(t.switch("torA").map(|v| t.net_children(v).len()), Some(3));
    assert_eq!(t.switch("hA1"), None, "leaves are not switches");
    assert_eq!(t.edge_count(), t.net_count() - 1);
}

#[test]
fn builder_reports_every_problem() {
    let mut b = TopologyBuilder::new();
    b.level("rack").level("host").level("rack");
    b.finer_than("host", "rack").finer_than("host", "nope");
    b.dimension("vcpu");
    b.location("r", None, "rack");
    b.location("h", Some("r"), "host")
        .capacity("vcpu", -1)
        .capacity("gpu", 1);
    b.location("x", Some("h"), "rack");
    b.location("y", Some("missing"), "host");
    b.switch("s", None, Link::new(5, 0));
    b.network_leaf("x", Some("s"), Link::default());
    b.network_leaf("x", Some("s"), Link::default());
    let Err(TopologyError::Invalid { problems }) = b.build() else {
        panic!("expected problems")
    };
    let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
    expect![[r#"
        [
            "duplicate level `rack`; level names must be unique",
            "unknown level `nope`; expected one of rack, host",
            "negative amount -1 for `vcpu`; expected an integer >= 0",
            "unknown dimension `gpu`; expected one of vcpu",
            "unknown parent `missing`; expected the id of a location vertex",
            "`h` has children, so it cannot carry capacity or machine_type; only leaves host resources",
            "`x` (level `rack`) must be finer than its parent `h` (level `host`), but it is coarser",
            "leaf `x` appears twice in the network tree; expected each leaf exactly once",
            "the network root `s` has no parent edge, so it takes no bandwidth_mbps or latency_ms",
        ]
    "#]]
    .assert_debug_eq(&rendered);
    assert!(
        problems
            .iter()
            .any(|p| matches!(p.kind, ProblemKind::NegativeAmount { value: -1, .. }))
    );
}

fn check_diagnostics(text: &str, expect: Expect) {
    let rendered = match load(text) {
        Ok(_) => "ok".to_owned(),
        Err(TopologyError::Document { diagnostics }) => diagnostics
            .iter()
            .map(|d| format!("{d}\n"))
            .collect::<String>(),
        Err(other) => format!("unexpected: {other}"),
    };
    expect.assert_eq(&rendered);
}

#[test]
fn diagnostics_for_a_broken_nested_document() {
    check_diagnostics(
        r#"
levels: [region, room, rack, host, host]
finer_than:
  - [room, region]
  - [rack, room]
  - [host, rack]
  - [disk, shelf]
  - [host]
dimensions: [vcpu, ram_mib]
flavors:
  tiny: {vcpu: 1, gpu: 1}
  bad: {vcpu: -2}
location:
  id: dc
  level: region
  lat: 95.0
  lon: 10
  colour: blue
  children:
    - id: room1
      level: room
      capacity: {vcpu: 4}
      children:
        - id: h1
          level: hots
          capacity: {vcpu: -4, gpu: 2}
        - id: h1
          level: host
        - id: r2
          level: rack
          parent: room1
          children:
            - {id: h3, level: region}
            - {id: h4, level: host, capacity: {vcpu: 1.5}}
        - {level: host}
network:
  id: core
  children:
    - id: tor1
      bandwidth_mbps: -5
      children:
        - {leaf: h1}
        - {leaf: h1}
        - {leaf: room1}
        - {leaf: ghost}
        - {leaf: h3, latency_ms: -1}
        - {id: empty}
"#,
        expect![[r#"
            levels[4] (2:36): duplicate level `host`; level names must be unique
            finer_than[3] (7:5): unknown level `disk`; expected one of region, room, rack, host
            finer_than[3] (7:5): unknown level `shelf`; expected one of region, room, rack, host
            finer_than[4] (8:5): expected a pair [finer, coarser] of level names
            flavors.tiny.gpu (11:19): unknown dimension `gpu`; expected one of vcpu, ram_mib
            flavors.bad.vcpu (12:9): negative amount -2 for `vcpu`; expected an integer >= 0
            location.lat (16:8): coordinates (95, 10) out of range; expected latitude in [-90, 90] and longitude in [-180, 180]
            location.colour (18:3): unknown key `colour`; expected one of id, level, parent, lat, lon, capacity, machine_type, attributes, children
            location.children[0].capacity (22:17): `room1` has children, so it cannot carry capacity or machine_type; only leaves host resources
            location.children[0].children[0].level (25:18): unknown level `hots`; expected one of region, room, rack, host
            location.children[0].children[0].capacity.vcpu (26:22): negative amount -4 for `vcpu`; expected an integer >= 0
            location.children[0].children[0].capacity.gpu (26:32): unknown dimension `gpu`; expected one of vcpu, ram_mib
            location.children[0].children[1].id (27:15): duplicate location vertex id `h1`; ids must be unique within the tree
            location.children[0].children[2].parent (31:19): `parent` is implied by nesting under `room1`; remove it
            location.children[0].children[2].children[0].level (33:31): `h3` (level `region`) must be finer than its parent `r2` (level `rack`), but it is coarser
            location.children[0].children[2].children[1] (34:15): leaf `h4` is missing from the network tree; expected each leaf exactly once
            location.children[0].children[2].children[1].capacity.vcpu (34:54): expected an integer amount in base units, found number `1.5`
            location.children[0].children[3] (35:11): missing required key `id`
            network.children[0].bandwidth_mbps (40:23): expected a non-negative integer (Mbit/s), found integer `-5`
            network.children[0].children[1].leaf (43:18): leaf `h1` appears twice in the network tree; expected each leaf exactly once
            network.children[0].children[2].leaf (44:18): `room1` has children in the location tree; only location leaves attach to the network
            network.children[0].children[3].leaf (45:18): unknown leaf `ghost`; expected the id of a location leaf
            network.children[0].children[4].latency_ms (46:34): expected a non-negative number of milliseconds, found integer `-1`
            network.children[0].children[5].id (47:16): switch `empty` has no children; the network tree's leaves must be location leaves
        "#]],
    );
}

#[test]
fn diagnostics_for_a_broken_flat_json_document() {
    check_diagnostics(
        r#"{
  "levels": ["room", "rack", "host"],
  "finer_than": [["rack", "room"], ["host", "rack"], ["room", "host"]],
  "dimensions": ["vcpu"],
  "location": [
    {"id": "a", "level": "room"},
    {"id": "b", "level": "rack", "parent": "c"},
    {"id": "c", "level": "rack", "parent": "b"},
    {"id": "d", "level": "host", "parent": "zz"},
    {"id": "e", "level": "room"},
    {"id": "f", "level": "host", "parent": "a", "lat": 1.0}
  ],
  "network": [
    {"id": "s1", "parent": "s2"},
    {"id": "s2", "parent": "s1"},
    {"leaf": "f", "parent": "s1"}
  ],
  "extra": 1
}"#,
        expect![[r#"
            finer_than[0] (3:18): finer_than edges form a cycle through levels `rack`, `room`, `host`; the order must be acyclic
            location[1].parent (7:44): cycle in the location tree: b -> c -> b; expected parents to lead to the root
            location[3].parent (9:44): unknown parent `zz`; expected the id of a location vertex
            location[4] (10:5): `e` has no parent but `a` is already the root of the location tree; expected exactly one root
            location[5] (11:5): `lat` given without `lon`; expected both or neither
            network (13:3): the network tree has no root; expected exactly one vertex without a parent
            network[0].parent (14:28): cycle in the network tree: s1 -> s2 -> s1; expected parents to lead to the root
            extra (18:3): unknown key `extra`; expected one of levels, finer_than, dimensions, flavors, location, network
        "#]],
    );
}

#[test]
fn diagnostics_for_unparsable_and_empty_documents() {
    check_diagnostics(
        "levels: [a\nlocation: {",
        expect![[r#"
            (2:9): invalid YAML: illegal placement of ':' indicator; the flow sequence `[` opened at 1:9 is never closed (expected `]`)
        "#]],
    );
    check_diagnostics(
        "- 1\n- 2\n",
        expect![[r#"
        (1:1): expected a mapping with levels, location and network, found list
    "#]],
    );
    check_diagnostics(
        "levels: []\nlocation: []\nnetwork: []\n",
        expect![[r#"
        location (2:1): the location tree is empty; expected at least one vertex
        network (3:1): the network tree is empty; expected at least one vertex
    "#]],
    );
}

#[test]
fn small_dc_example_loads() {
    let t = load(SMALL_DC).unwrap();
    assert_eq!(t.leaf_count(), 16);
    let rack = t.level("rack").unwrap();
    let host = t.level("host").unwrap();
    assert_eq!(t.vertices_at_level(rack).len(), 4);
    assert_eq!(t.vertices_at_level(host).len(), 12);
    let (h11, sb1, h21) = (
        t.leaf("rack1-h1").unwrap(),
        t.leaf("rack1-sb").unwrap(),
        t.leaf("rack2-h1").unwrap(),
    );
    assert!(t.same_at_level(h11, sb1, rack));
    assert_eq!(t.hops(h11, sb1), 2);
    assert_eq!(t.hops(h11, h21), 4);
    assert_eq!(t.path_bottleneck_bandwidth(h11, sb1), Some(25_000));
    assert_eq!(t.path_latency_ns(h11, h21), 2 * (2_000 + 5_000));
    assert_eq!(t.geo_distance_km(h11, h21), Some(0.0));
    assert_eq!(t.leaf_machine_type(h21), Some("x86-large"));
    assert_eq!(t.leaf_capacity(sb1), &[0, 0, 100_000]);
    assert_eq!(
        t.leaf_attributes(h11).get("sriov"),
        Some(&serde_json::Value::Bool(true))
    );
    assert_eq!(t.flavor("m1.medium"), Some(&[2, 4096, 40][..]));
}

#[test]
fn yaml_emitter_round_trips_and_reads_well() {
    let t = sample();
    for form in [DocumentForm::Nested, DocumentForm::Flat] {
        let yaml = to_yaml(&t.to_document(form));
        assert_eq!(load(&yaml).unwrap(), t, "{yaml}");
        let json = t.to_document(form).to_string();
        assert_eq!(load(&json).unwrap(), t, "{json}");
    }
    let mut b = TopologyBuilder::new();
    b.level("rack")
        .level("host")
        .finer_than("host", "rack")
        .dimension("vcpu");
    b.location("r1", None, "rack");
    b.location("h1", Some("r1"), "host")
        .capacity("vcpu", 8)
        .attribute("true", "yes".into());
    b.switch("tor", None, Link::default())
        .network_leaf("h1", Some("tor"), Link::new(10, 1_500));
    let yaml = to_yaml(&b.build().unwrap().to_document(DocumentForm::Nested));
    expect![[r#"
        levels: ["rack", "host"]
        finer_than: [["host", "rack"]]
        dimensions: ["vcpu"]
        location:
          id: "r1"
          level: "rack"
          children: [{id: "h1", level: "host", capacity: {vcpu: 8}, attributes: {"true": "yes"}}]
        network: {id: "tor", children: [{leaf: "h1", bandwidth_mbps: 10, latency_ms: 0.0015}]}
    "#]]
    .assert_eq(&yaml);
}

#[test]
fn generator_is_deterministic_and_valid() {
    let spec = DatacenterSpec {
        storage_per_rack: 2,
        racks_per_room: 5,
        ..DatacenterSpec::with_leaves(2_345)
    };
    let a = datacenter(&spec, 7);
    assert_eq!(a, datacenter(&spec, 7));
    assert_ne!(a, datacenter(&spec, 8));
    let t = a.build().unwrap();
    assert_eq!(t.leaf_count(), 2_345);
    let site = t.level("site").unwrap();
    let rack = t.level("rack").unwrap();
    // 42 leaves per rack, 5 racks per room, 4 rooms per site, 2 sites per region.
    assert_eq!(t.vertices_at_level(rack).len(), 2_345usize.div_ceil(42));
    assert_eq!(
        t.vertices_at_level(site).len(),
        2_345usize.div_ceil(42 * 20)
    );
    assert_eq!(t.vertices_at_level(t.level("region").unwrap()).len(), 2);
    for leaf in t.leaves() {
        assert!(t.leaf_coordinates(leaf).is_some());
        assert!(t.ancestor_at_level(leaf, rack).is_some());
        assert_eq!(
            t.net_depth(t.leaf_network(leaf)),
            4,
            "wan > core > agg > tor > leaf"
        );
    }
    let first = t.leaf("r0-s0-m0-k00-h00").unwrap();
    let other_site = t.leaf("r0-s1-m0-k00-h00").unwrap();
    assert_eq!(t.hops(first, other_site), 8);
    assert_eq!(t.path_bottleneck_bandwidth(first, other_site), Some(25_000));
    assert!(t.geo_distance_km(first, other_site).unwrap() > 1000.0);
}

#[test]
fn level_order_is_transitively_closed() {
    use crate::LevelRelation::{Coarser, Finer, Incomparable, Same};
    let t = sample();
    let lv = t.levels();
    let id = |s: &str| lv.id(s).unwrap();
    assert_eq!(
        lv.relation(id("host"), id("region")),
        Finer,
        "host < rack < room < region"
    );
    assert_eq!(lv.relation(id("region"), id("storage_box")), Coarser);
    assert_eq!(lv.relation(id("host"), id("storage_box")), Incomparable);
    assert_eq!(lv.relation(id("rack"), id("rack")), Same);
    assert_eq!(lv.declared().len(), 4);
}

/// room > {rack1 > {chassis1 > {sled1 > {p1, p2}, p3}, p4}, p5}: hosts at four depths, some
/// outside any chassis or rack (seed 004: "neither tree needs to be of uniform depth").
fn uneven() -> Topology {
    let mut b = TopologyBuilder::new();
    for l in ["room", "rack", "chassis", "sled", "pm"] {
        b.level(l);
    }
    b.finer_than("rack", "room")
        .finer_than("chassis", "rack")
        .finer_than("sled", "chassis")
        .finer_than("pm", "sled");
    b.location("room", None, "room");
    b.location("rack1", Some("room"), "rack");
    b.location("chassis1", Some("rack1"), "chassis");
    b.location("sled1", Some("chassis1"), "sled");
    b.switch("core", None, Link::default());
    for (pm, parent) in [
        ("p1", "sled1"),
        ("p2", "sled1"),
        ("p3", "chassis1"),
        ("p4", "rack1"),
        ("p5", "room"),
    ] {
        b.location(pm, Some(parent), "pm");
        b.network_leaf(pm, Some("core"), Link::default());
    }
    b.build().unwrap()
}

#[test]
fn a_leaf_without_the_level_is_placed_there_by_its_coarsest_finer_ancestor() {
    let t = uneven();
    let leaf = |s: &str| t.leaf(s).unwrap();
    let level = |s: &str| t.level(s).unwrap();
    let place = |l: &str, lv: &str| t.loc_name(t.vertex_at_level(leaf(l), level(lv))).to_owned();
    // p1 has every level: its ancestors.
    assert_eq!(place("p1", "chassis"), "chassis1");
    assert_eq!(place("p1", "rack"), "rack1");
    // p3 has no sled: it stands for itself; p4 and p5 have no chassis either.
    assert_eq!(place("p3", "sled"), "p3");
    assert_eq!(place("p4", "chassis"), "p4");
    assert_eq!(place("p5", "rack"), "p5");
    // p4 has no sled and no chassis, p5 nothing but the room.
    assert_eq!(place("p4", "sled"), "p4");
    assert_eq!(place("p5", "room"), "room");
    // One place per leaf and level: the same leaf is together with itself everywhere.
    for l in ["p1", "p2", "p3", "p4", "p5"] {
        for lv in ["room", "rack", "chassis", "sled", "pm"] {
            assert!(t.same_at_level(leaf(l), leaf(l), level(lv)), "{l} at {lv}");
        }
    }
    assert!(t.same_at_level(leaf("p1"), leaf("p2"), level("chassis")));
    assert!(t.same_at_level(leaf("p1"), leaf("p3"), level("chassis")));
    assert!(t.differ_at_level(leaf("p1"), leaf("p3"), level("sled")));
    assert!(t.differ_at_level(leaf("p4"), leaf("p5"), level("chassis")));
    assert!(t.differ_at_level(leaf("p3"), leaf("p4"), level("chassis")));
    assert!(t.same_at_level(leaf("p3"), leaf("p4"), level("rack")));
    assert!(t.differ_at_level(leaf("p4"), leaf("p5"), level("rack")));
    // The search used for topologies too big for the table gives the same places.
    for l in t.leaves() {
        for lv in t.levels().iter() {
            assert_eq!(
                t.vertex_at_level_untabled(t.leaf_location(l), lv),
                t.vertex_at_level(l, lv)
            );
        }
    }
}

/// Under a sled without a chassis, hosts share the sled, which stands in for their chassis:
/// anti-collocated at the chassis level, they must not share the sled.
#[test]
fn a_finer_vertex_stands_in_for_a_missing_coarser_one() {
    let mut b = TopologyBuilder::new();
    for l in ["rack", "chassis", "sled", "pm"] {
        b.level(l);
    }
    b.finer_than("chassis", "rack")
        .finer_than("sled", "chassis")
        .finer_than("pm", "sled");
    b.location("rack", None, "rack");
    b.location("sled", Some("rack"), "sled");
    b.switch("core", None, Link::default());
    for pm in ["a", "b"] {
        b.location(pm, Some("sled"), "pm");
        b.network_leaf(pm, Some("core"), Link::default());
    }
    let t = b.build().unwrap();
    let (a, bb) = (t.leaf("a").unwrap(), t.leaf("b").unwrap());
    let chassis = t.level("chassis").unwrap();
    assert_eq!(t.loc_name(t.vertex_at_level(a, chassis)), "sled");
    assert!(t.same_at_level(a, bb, chassis));
    assert_eq!(t.ancestor_at_level(a, chassis), None);
}
