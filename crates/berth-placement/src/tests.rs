//! Unit tests of placement: the seed 004 use cases, the state against the checker, exact
//! search against brute force, every heuristic placement against the checker.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use berth_topology::{LeafId, Link, Topology, TopologyBuilder};
use proptest::prelude::*;

mod uneven;

use crate::state::State;
use crate::{
    Catalog, ExactMode, Instance, Item, Objective, Options, Placement, PlacementError, PolicyLabel,
    Rule, RuleKind, Status, Weights, check, greedy, render_svg, solve, synth,
};

const HA: &str = include_str!("../../../examples/heat/ha-clusters.yaml");
const HA_TOPO: &str = include_str!("../../../examples/heat/room-rack-pm.yaml");
const HADOOP: &str = include_str!("../../../examples/heat/hadoop-5vm.json");
const HADOOP_TOPO: &str = include_str!("../../../examples/heat/hadoop-topology.yaml");

fn instance(template: &str, topo: &str) -> Instance {
    let t = berth_heat::parse(template).unwrap();
    let topo = Arc::new(berth_topology::load(topo).unwrap());
    Instance::from_template(&t, topo, &Catalog::default(), &BTreeMap::new()).unwrap()
}

#[test]
fn ha_clusters_spread_over_racks_and_pms_on_four_hosts() {
    let inst = instance(HA, HA_TOPO);
    let sol = solve(&inst, &Options::default());
    assert_eq!(sol.status, Status::Placed, "{:?}", sol.report.hard);
    assert!(sol.report.soft.is_empty());
    let topo = inst.topology();
    let rack = topo.level("rack").unwrap();
    for c in 1..=3 {
        let leaves: Vec<LeafId> = (1..=4)
            .map(|k| {
                let i = inst
                    .items()
                    .iter()
                    .position(|it| it.name == format!("M{c}{k}"))
                    .unwrap();
                sol.assignment[i].unwrap()
            })
            .collect();
        let pms: BTreeSet<_> = leaves.iter().collect();
        assert_eq!(pms.len(), 4, "cluster {c}: no two VMs on one PM");
        let mut per_rack: BTreeMap<_, usize> = BTreeMap::new();
        for l in &leaves {
            *per_rack
                .entry(topo.ancestor_at_level(*l, rack).unwrap())
                .or_default() += 1;
        }
        assert!(
            per_rack.len() >= 2 && per_rack.values().all(|&n| n <= 2),
            "cluster {c}: {per_rack:?}"
        );
    }
    // 12 m1.large VMs, 4 per PM, each cluster on 4 distinct PMs: 4 hosts, proven optimal.
    assert_eq!(sol.report.cost.hosts_used, 4);
    assert!(sol.optimal);
}

#[test]
fn hadoop_volumes_sit_on_their_datanodes_alone() {
    let inst = instance(HADOOP, HADOOP_TOPO);
    let sol = solve(&inst, &Options::default());
    assert_eq!(sol.status, Status::Placed, "{:?}", sol.report.hard);
    let leaf = |name: &str| {
        let i = inst.items().iter().position(|it| it.name == name).unwrap();
        sol.assignment[i].unwrap()
    };
    for (dn, vol) in [(4, 0), (1, 3), (3, 1), (2, 2)] {
        assert_eq!(
            leaf(&format!("WCA4-hadoop-datanode-{dn}")),
            leaf(&format!("Storage volume used by datanode server_{vol}")),
            "hop count 0 puts volume {vol} on datanode {dn}'s node"
        );
    }
    let vols: BTreeSet<LeafId> = (0..4)
        .map(|v| leaf(&format!("Storage volume used by datanode server_{v}")))
        .collect();
    assert_eq!(vols.len(), 4, "each volume alone on its disk");
    // The soft anti-collocation is met (it costs more than a host), so nothing is reported.
    assert!(sol.report.soft.is_empty(), "{:?}", sol.report.soft);
    let p = Placement::new(&inst, &sol);
    assert_eq!(p.not_movable.len(), 4);
    let json = p.to_json();
    assert_eq!(json["status"], "placed");
    assert_eq!(json["placements"].as_object().unwrap().len(), 9);
    let svg = render_svg(&inst, &sol.assignment);
    assert!(
        svg.starts_with("<svg") && svg.contains("rack1") && svg.contains("WCA4-hadoop-namenode_1")
    );
}

#[test]
fn hadoop_on_two_nodes_is_proven_infeasible() {
    // Volumes are exclusive and hop-bound to their datanodes: 4 volumes cannot share 2 nodes.
    let topo = "levels: [room, rack, compute_node]\nfiner_than: [[rack, room], [compute_node, rack]]\ndimensions: [vcpu, ram_mib, disk_gib]\nflavors: {m1.medium: {vcpu: 2, ram_mib: 4096, disk_gib: 40}}\nlocation: {id: r, level: room, children: [{id: k1, level: rack, children: [{id: n1, level: compute_node, capacity: {vcpu: 64, ram_mib: 262144, disk_gib: 4000}}]}, {id: k2, level: rack, children: [{id: n2, level: compute_node, capacity: {vcpu: 64, ram_mib: 262144, disk_gib: 4000}}]}]}\nnetwork: [{id: sw}, {leaf: n1, parent: sw}, {leaf: n2, parent: sw}]\n";
    let inst = instance(HADOOP, topo);
    let sol = solve(&inst, &Options::default());
    assert_eq!(sol.status, Status::Infeasible);
    assert!(!sol.report.is_valid());
}

#[test]
fn soft_policy_that_cannot_hold_is_reported() {
    let t = "heat_template_version: 2013-05-23\nresources:\n  a: {type: OS::Nova::Server, properties: {flavor: m1.small}}\n  b: {type: OS::Nova::Server, properties: {flavor: m1.small}}\n  c: {type: OS::Nova::Server, properties: {flavor: m1.small}}\ngroups: {id: g, members: [{get_resource: a}, {get_resource: b}, {get_resource: c}], policies: [{type: OS::AntiCoLocation, properties: {level: rack, hardConstraint: false, weight: 2}, metadata: {description: apart}}]}\n";
    // Three racks exist but the pack objective with a tiny soft weight prefers one host.
    let inst = instance(t, HA_TOPO);
    let opts = Options {
        weights: Weights {
            soft: 0.1,
            ..Weights::default()
        },
        ..Options::default()
    };
    let sol = solve(&inst, &opts);
    assert_eq!(sol.status, Status::Placed);
    assert_eq!(sol.report.cost.hosts_used, 1);
    assert_eq!(sol.report.soft.len(), 1);
    assert_eq!(sol.report.soft[0].label, "apart");
    assert_eq!(sol.report.soft[0].violations, 3.0);
    assert!((sol.report.soft[0].penalty - 0.6).abs() < 1e-9);
    // With the default weight the policy wins over packing.
    let sol = solve(&inst, &Options::default());
    assert!(sol.report.soft.is_empty());
    assert_eq!(sol.report.cost.hosts_used, 3);
}

#[test]
fn unknown_flavor_and_level_are_reported_together() {
    let t = berth_heat::parse("heat_template_version: 2013-05-23\nresources:\n  a: {type: OS::Nova::Server, properties: {flavor: m9.huge}}\n  b: {type: OS::Nova::Server, properties: {flavor: m1.large}}\ngroups: {id: g, members: [{get_resource: a}, {get_resource: b}], policies: [{type: OS::AntiCoLocation, properties: {level: chassis}}]}\n").unwrap();
    let topo = Arc::new(berth_topology::load(HA_TOPO).unwrap());
    let Err(PlacementError::Invalid { problems }) =
        Instance::from_template(&t, topo, &Catalog::default(), &BTreeMap::new())
    else {
        panic!("expected problems");
    };
    let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
    expect_test::expect![[r#"
        [
            "resources.a: unknown flavor `m9.huge`; expected one of m1.large, m1.medium, m1.small",
            "groups.policies[0]: unknown level `chassis`; expected one of room, rack, PM",
        ]
    "#]]
    .assert_debug_eq(&text);
}

#[test]
fn catalog_flavors_and_licenses_are_used() {
    let cat = Catalog::parse("flavors: {tiny: {vcpu: 1, ram_mib: 512}}\nlicenses: {ibm/was: {x86-small: 100, default: 7}}\n").unwrap();
    assert_eq!(cat.charge("ibm/was", Some("x86-small")), 100.0);
    assert_eq!(cat.charge("ibm/was", Some("other")), 7.0);
    let t = berth_heat::parse("heat_template_version: 2013-05-23\nresources:\n  a: {type: OS::Nova::Server, properties: {flavor: tiny}}\n  b: {type: OS::Nova::Server, properties: {flavor: tiny}}\ngroups: {id: g, members: [{get_resource: a}, {get_resource: b}], policies: [{type: OS::LicensedProduct, properties: {catalog: ibm, product: was}}]}\n").unwrap();
    let topo = Arc::new(berth_topology::load(HA_TOPO).unwrap());
    let inst = Instance::from_template(&t, topo, &cat, &BTreeMap::new()).unwrap();
    assert_eq!(inst.items()[0].demand, vec![1, 512, 0]);
    let sol = solve(&inst, &Options::default());
    assert_eq!(sol.status, Status::Placed);
    // Both on one host: one license charge.
    assert_eq!(sol.report.cost.license, 100.0);
    let bad = Catalog::parse("flavors: {tiny: {vcpu: -1}}\ncolour: red\n");
    assert!(matches!(bad, Err(PlacementError::Catalog { diagnostics }) if diagnostics.len() == 2));
}

#[test]
fn greedy_meets_policies_on_a_synthetic_datacenter() {
    let topo = Arc::new(synth::datacenter(400).unwrap());
    let inst = synth::workload(topo, &synth::WorkloadSpec::with_groups(1_500, 7)).unwrap();
    let a = greedy(&inst, Objective::Pack, Weights::default());
    let r = check(&inst, &a, Objective::Pack, Weights::default());
    assert!(r.is_valid(), "{:?}", &r.hard[..r.hard.len().min(3)]);
    assert!(Some(r.cost.hosts_used) >= inst.hosts_lower_bound());
    // The incremental state agrees with the checker.
    let mut st = State::new(&inst, Objective::Pack, Weights::default());
    for (i, l) in a.iter().enumerate() {
        st.place(i as u32, l.unwrap().0);
    }
    assert!((st.cost() - r.cost.total).abs() < 1e-6);
    let opts = Options {
        max_iterations: Some(300),
        exact: ExactMode::Off,
        ..Options::default()
    };
    let s1 = solve(&inst, &opts);
    let s2 = solve(&inst, &opts);
    assert_eq!(
        s1.assignment, s2.assignment,
        "deterministic per seed and budget"
    );
    assert!(s1.report.cost.hosts_used <= r.cost.hosts_used);
}

/// Two racks behind 60 Mbit/s uplinks: rack 0 with two hosts of capacity 6, rack 1 with one
/// of capacity 10. Items A (6), B (6), C (4) and a soft 100 Mbit/s requirement between A
/// and B of the given weight. Two hosts force A and B into different racks.
fn bandwidth_tradeoff(weight: f64) -> Instance {
    let mut b = TopologyBuilder::new();
    b.level("room").level("rack").level("host");
    b.finer_than("rack", "room").finer_than("host", "rack");
    b.dimension("a");
    b.location("room", None, "room");
    b.switch("core", None, Link::default());
    for (rack, caps) in [("k0", &[6, 6][..]), ("k1", &[10][..])] {
        b.location(rack, Some("room"), "rack");
        b.switch(format!("t{rack}"), Some("core"), Link::new(60, 0));
        for (h, &c) in caps.iter().enumerate() {
            let id = format!("{rack}h{h}");
            b.location(id.clone(), Some(rack), "host").capacity("a", c);
            b.network_leaf(id, Some(&format!("t{rack}")), Link::default());
        }
    }
    let topo = Arc::new(b.build().unwrap());
    let items = [("A", 6), ("B", 6), ("C", 4)]
        .iter()
        .map(|&(name, d)| Item {
            name: name.into(),
            demand: vec![d],
            volume: false,
            fixed: None,
            movable: true,
            licenses: Vec::new(),
        })
        .collect();
    let rules = vec![Rule {
        kind: RuleKind::Bandwidth {
            a: 0,
            b: 1,
            mbps: 100,
        },
        hard: false,
        weight,
        policy: 0,
    }];
    let policies = vec![PolicyLabel {
        type_name: "OS::NetBandwidth".into(),
        label: "a-b".into(),
        path: "groups.policies[0]".into(),
    }];
    Instance::new(topo, items, rules, policies, Vec::new()).unwrap()
}

#[test]
fn soft_bandwidth_overflow_is_weighed_against_an_extra_host() {
    // Across racks the 100 Mbit/s overflow two 60 Mbit/s uplinks by 40 each: violation
    // 0.4 + 0.4 = 0.8, penalty 10 * weight * 0.8. Keeping A and B in rack 0 takes 3 hosts.
    for (weight, want_cost, want_hosts) in [(0.1, 2.8, 2), (1.0, 3.0, 3), (0.125, 3.0, 2)] {
        let inst = bandwidth_tradeoff(weight);
        let brute = brute_force(&inst, Objective::Pack).unwrap();
        assert!(
            (brute - want_cost).abs() < 1e-9,
            "brute force {brute} at {weight}"
        );
        let g = greedy(&inst, Objective::Pack, Weights::default());
        let rg = check(&inst, &g, Objective::Pack, Weights::default());
        assert!(
            (rg.cost.total - (2.0 + 8.0 * weight)).abs() < 1e-9,
            "greedy packs first"
        );
        for exact in [ExactMode::Only, ExactMode::Off, ExactMode::Auto] {
            let sol = solve(
                &inst,
                &Options {
                    exact,
                    ..Options::default()
                },
            );
            assert_eq!(sol.status, Status::Placed);
            let cost = sol.report.cost.total;
            assert!(
                (cost - want_cost).abs() < 1e-9,
                "{exact:?} at {weight}: {cost}"
            );
            if weight != 0.125 {
                assert_eq!(
                    sol.report.cost.hosts_used, want_hosts,
                    "{exact:?} at {weight}"
                );
            }
            if want_hosts == 2 && weight != 0.125 {
                let v = &sol.report.soft;
                assert_eq!(v.len(), 1);
                assert!((v[0].violations - 0.8).abs() < 1e-9);
                assert!((v[0].penalty - 0.8).abs() < 1e-9);
            }
        }
    }
}

#[test]
fn soft_bandwidth_overflow_is_shared_by_mbps_among_the_reservations_of_a_link() {
    // Two soft requirements from `A` (on rack 1) to `B` and `C` (on rack 0): 30 + 50 Mbit/s
    // over 60 Mbit/s uplinks overflow each by 20; weights 1 and 3: per link 20 * 4 / 80 = 1.
    let inst = bandwidth_tradeoff(1.0);
    let mut rules = inst.rules().to_vec();
    rules[0].kind = RuleKind::Bandwidth {
        a: 0,
        b: 1,
        mbps: 30,
    };
    rules.push(Rule {
        kind: RuleKind::Bandwidth {
            a: 0,
            b: 2,
            mbps: 50,
        },
        hard: false,
        weight: 3.0,
        policy: 0,
    });
    let inst = Instance::new(
        inst.topo.clone(),
        inst.items().to_vec(),
        rules,
        inst.policies().to_vec(),
        Vec::new(),
    )
    .unwrap();
    let topo = inst.topology();
    let leaf = |n: &str| topo.leaf(n).unwrap();
    let a = vec![Some(leaf("k1h0")), Some(leaf("k0h0")), Some(leaf("k0h1"))];
    let r = check(&inst, &a, Objective::Pack, Weights::default());
    assert!((r.cost.soft - 2.0).abs() < 1e-9, "{:?}", r.cost);
    // Each rule overflows 20/80 of its Mbit/s on each of the two links: 0.5 + 0.5.
    assert!((r.soft[0].violations - 1.0).abs() < 1e-9, "{:?}", r.soft);
    let mut st = State::new(&inst, Objective::Pack, Weights::default());
    for (i, l) in a.iter().enumerate() {
        st.place(i as u32, l.unwrap().0);
    }
    assert!((st.cost() - r.cost.total).abs() < 1e-9);
    // A hard 40 Mbit/s reservation on the same links leaves 20 free: 60 of the 80 soft
    // Mbit/s overflow, 60 * 4 / 80 = 3 per link.
    let mut rules = inst.rules().to_vec();
    rules.push(Rule {
        kind: RuleKind::Bandwidth {
            a: 2,
            b: 0,
            mbps: 40,
        },
        hard: true,
        weight: 1.0,
        policy: 0,
    });
    let inst = Instance::new(
        inst.topo.clone(),
        inst.items().to_vec(),
        rules,
        inst.policies().to_vec(),
        Vec::new(),
    )
    .unwrap();
    let r = check(&inst, &a, Objective::Pack, Weights::default());
    assert!(r.is_valid());
    assert!((r.cost.soft - 6.0).abs() < 1e-9, "{:?}", r.cost);
}

#[test]
fn construction_packs_close_to_the_lower_bound_deterministically() {
    // Policy-free VMs are packed bin-centrically; policy-bound ones first spread within a
    // share of each host. The former best-fit-decreasing construction was ~19% over here.
    for spec in [
        synth::WorkloadSpec::packing(2_000, 3),
        synth::WorkloadSpec::with_groups(2_000, 3),
    ] {
        let topo = Arc::new(synth::datacenter(500).unwrap());
        let inst = synth::workload(topo, &spec).unwrap();
        let a = greedy(&inst, Objective::Pack, Weights::default());
        let r = check(&inst, &a, Objective::Pack, Weights::default());
        assert!(r.is_valid(), "{:?}", &r.hard[..r.hard.len().min(3)]);
        let lb = inst.hosts_lower_bound().unwrap();
        let used = r.cost.hosts_used;
        assert!(
            used as f64 <= 1.06 * lb as f64,
            "{} groups: {used} hosts for a lower bound of {lb}",
            spec.anti_groups
        );
        assert_eq!(a, greedy(&inst, Objective::Pack, Weights::default()));
    }
}

// ---- random small instances -----------------------------------------------------------

fn small_topology(racks: usize, hosts: usize, caps: &[(i64, i64)]) -> Topology {
    let mut b = TopologyBuilder::new();
    b.level("room").level("rack").level("host");
    b.finer_than("rack", "room").finer_than("host", "rack");
    b.dimension("a").dimension("b");
    b.location("room", None, "room");
    b.switch("core", None, Link::default());
    let mut k = 0;
    for r in 0..racks {
        b.location(format!("k{r}"), Some("room"), "rack");
        b.switch(format!("t{r}"), Some("core"), Link::new(12, 0));
        for h in 0..hosts {
            let (ca, cb) = caps[k % caps.len()];
            k += 1;
            b.location(format!("k{r}h{h}"), Some(&format!("k{r}")), "host")
                .capacity("a", ca)
                .capacity("b", cb)
                .machine_type(if h % 2 == 0 { "even" } else { "odd" });
            b.network_leaf(
                format!("k{r}h{h}"),
                Some(&format!("t{r}")),
                Link::new(10, 0),
            );
        }
    }
    b.build().unwrap()
}

#[derive(Debug, Clone)]
struct Case {
    racks: usize,
    hosts: usize,
    caps: Vec<(i64, i64)>,
    demands: Vec<(i64, i64, bool, bool)>,
    rules: Vec<(u8, Vec<usize>, bool, u8)>,
    spread: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        1usize..3,
        1usize..3,
        proptest::collection::vec((2i64..6, 2i64..6), 1..4),
        proptest::collection::vec((0i64..4, 0i64..4, any::<bool>(), any::<bool>()), 1..5),
        proptest::collection::vec(
            (
                0u8..7,
                proptest::collection::vec(0usize..5, 1..4),
                any::<bool>(),
                0u8..3,
            ),
            0..4,
        ),
        any::<bool>(),
    )
        .prop_map(|(racks, hosts, caps, demands, rules, spread)| Case {
            racks,
            hosts,
            caps,
            demands,
            rules,
            spread,
        })
}

fn build(c: &Case) -> Instance {
    build_with(c, &[])
}

/// Extra bandwidth requirements: `(a, b, hard, Mbit/s, weight)`, ends taken modulo the items.
type Extra = (usize, usize, bool, u64, u8);

fn build_with(c: &Case, extra: &[Extra]) -> Instance {
    let topo = Arc::new(small_topology(c.racks, c.hosts, &c.caps));
    let n = c.demands.len();
    let items: Vec<Item> = c
        .demands
        .iter()
        .enumerate()
        .map(|(i, &(a, b, vol, lic))| Item {
            name: format!("i{i}"),
            demand: vec![a, b],
            volume: vol,
            fixed: None,
            movable: true,
            licenses: if lic { vec![0] } else { Vec::new() },
        })
        .collect();
    let host = topo.level("host").unwrap();
    let rack = topo.level("rack").unwrap();
    let mut rules = Vec::new();
    for (kind, members, hard, x) in &c.rules {
        let mut m: Vec<u32> = members.iter().map(|&i| (i % n) as u32).collect();
        m.sort_unstable();
        m.dedup();
        let level = if *x == 0 { rack } else { host };
        let rk = match kind {
            0 if m.len() >= 2 => RuleKind::Spread {
                level,
                parts: m.iter().map(|&i| vec![i]).collect(),
            },
            1 if m.len() >= 2 => RuleKind::Together {
                level: rack,
                parts: m.iter().map(|&i| vec![i]).collect(),
            },
            2 => {
                let nn = u32::from(*x).clamp(1, m.len() as u32);
                RuleKind::Llmn {
                    l1: rack,
                    l2: host,
                    n: nn,
                    cap: (m.len() as u32).div_ceil(nn),
                    members: m,
                }
            }
            3 if m.len() >= 2 => RuleKind::MaxHops {
                a: m[0],
                b: m[1],
                hops: u32::from(*x),
            },
            4 if m.len() >= 2 => RuleKind::Pair {
                a: m[0],
                b: m[1],
                level,
                same: *x == 2,
            },
            5 if m.len() >= 2 => RuleKind::Bandwidth {
                a: m[0],
                b: m[1],
                mbps: 4 + u64::from(*x),
            },
            6 => match m.iter().find(|&&i| c.demands[i as usize].2) {
                Some(&item) => RuleKind::VolExclusive { item },
                None => continue,
            },
            _ => continue,
        };
        rules.push(Rule {
            kind: rk,
            hard: *hard,
            weight: 1.0 + f64::from(*x),
            policy: 0,
        });
    }
    let policies = vec![PolicyLabel {
        type_name: "test".into(),
        label: "test".into(),
        path: "test".into(),
    }];
    let licenses = vec![crate::License {
        name: "c/p".into(),
        charge: topo
            .leaves()
            .map(|l| if l.0 % 2 == 0 { 3.0 } else { 5.0 })
            .collect(),
    }];
    for &(a, b, hard, mbps, w) in extra {
        rules.push(Rule {
            kind: RuleKind::Bandwidth {
                a: (a % n) as u32,
                b: (b % n) as u32,
                mbps,
            },
            hard,
            weight: 0.5 + f64::from(w),
            policy: 0,
        });
    }
    Instance::new(topo, items, rules, policies, licenses).unwrap()
}

fn brute_force(inst: &Instance, objective: Objective) -> Option<f64> {
    let n = inst.items().len();
    let leaves = inst.topology().leaf_count();
    let mut best: Option<f64> = None;
    let mut idx = vec![0usize; n];
    loop {
        let a: Vec<Option<LeafId>> = idx.iter().map(|&l| Some(LeafId(l as u32))).collect();
        let r = check(inst, &a, objective, Weights::default());
        if r.is_valid() && best.is_none_or(|b| r.cost.total < b) {
            best = Some(r.cost.total);
        }
        let mut k = 0;
        while k < n {
            idx[k] += 1;
            if idx[k] < leaves {
                break;
            }
            idx[k] = 0;
            k += 1;
        }
        if k == n {
            return best;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn exact_mode_equals_brute_force(c in case()) {
        let inst = build(&c);
        let objective = if c.spread { Objective::Spread } else { Objective::Pack };
        let want = brute_force(&inst, objective);
        // Counting proofs are sound, and so is optimality claimed at the bound.
        if !crate::explain::counting(&inst).is_empty() {
            prop_assert!(want.is_none(), "{:?}", crate::explain::counting(&inst));
        }
        let h = solve(&inst, &Options { objective, exact: ExactMode::Off, max_iterations: Some(30), ..Options::default() });
        if h.optimal {
            prop_assert!(want.is_some_and(|b| (h.report.cost.total - b).abs() < 1e-6));
        }
        let opts = Options { objective, exact: ExactMode::Only, ..Options::default() };
        let sol = solve(&inst, &opts);
        match want {
            None => prop_assert_ne!(sol.status, Status::Placed),
            Some(best) => {
                prop_assert_eq!(sol.status, Status::Placed);
                prop_assert!(sol.optimal);
                prop_assert!((sol.report.cost.total - best).abs() < 1e-6, "exact {} vs brute force {}", sol.report.cost.total, best);
            }
        }
    }

    #[test]
    fn state_and_its_deltas_match_the_checker_on_any_assignment(
        c in case(),
        extra in proptest::collection::vec((0usize..5, 0usize..5, any::<bool>(), 2u64..9, 0u8..3), 0..5),
        at in proptest::collection::vec(0u32..64, 5),
    ) {
        let inst = build_with(&c, &extra);
        let objective = if c.spread { Objective::Spread } else { Objective::Pack };
        let w = Weights::default();
        let leaves = inst.topology().leaf_count() as u32;
        let mut asg: Vec<Option<LeafId>> =
            (0..inst.items().len()).map(|i| Some(LeafId(at[i] % leaves))).collect();
        let mut st = State::new(&inst, objective, w);
        for (i, l) in asg.iter().enumerate() {
            st.place(i as u32, l.unwrap().0);
        }
        let agree = |st: &State<'_>, asg: &[Option<LeafId>]| -> Result<(), TestCaseError> {
            let r = check(&inst, asg, objective, w);
            prop_assert!((st.cost() - r.cost.total).abs() < 1e-6, "state {} vs checker {}", st.cost(), r.cost.total);
            let rule_hard = r.hard.iter().any(|h| h.kind != "capacity");
            prop_assert_eq!(st.hard > 1e-9, rule_hard, "{:?}", r.hard);
            Ok(())
        };
        agree(&st, &asg)?;
        // Moving any item anywhere: the predicted delta is the change, the checker agrees.
        for i in 0..inst.items().len() as u32 {
            let home = asg[i as usize];
            st.remove(i);
            let (cost0, hard0) = (st.cost(), st.hard);
            for l in 0..leaves {
                let d = st.delta(i, l);
                st.place(i, l);
                prop_assert!((st.cost() - cost0 - d.cost).abs() < 1e-6, "delta {} vs {}", d.cost, st.cost() - cost0);
                prop_assert!((st.hard - hard0 - d.hard).abs() < 1e-9);
                asg[i as usize] = Some(LeafId(l));
                agree(&st, &asg)?;
                st.remove(i);
                prop_assert!((st.cost() - cost0).abs() < 1e-6);
            }
            asg[i as usize] = home;
            st.place(i, home.unwrap().0);
        }
        agree(&st, &asg)?;
    }

    #[test]
    fn exact_mode_with_bandwidth_equals_brute_force(
        c in case(),
        extra in proptest::collection::vec((0usize..5, 0usize..5, any::<bool>(), 2u64..9, 0u8..3), 1..4),
    ) {
        let inst = build_with(&c, &extra);
        let objective = if c.spread { Objective::Spread } else { Objective::Pack };
        let want = brute_force(&inst, objective);
        let opts = Options { objective, exact: ExactMode::Only, ..Options::default() };
        let sol = solve(&inst, &opts);
        match want {
            None => prop_assert_ne!(sol.status, Status::Placed),
            Some(best) => {
                prop_assert_eq!(sol.status, Status::Placed);
                prop_assert!(sol.optimal);
                prop_assert!((sol.report.cost.total - best).abs() < 1e-6, "exact {} vs brute force {}", sol.report.cost.total, best);
                // The heuristic never beats the optimum and passes the checker.
                let h = solve(&inst, &Options { objective, exact: ExactMode::Off, max_iterations: Some(100), ..Options::default() });
                if h.status == Status::Placed {
                    prop_assert!(h.report.cost.total >= best - 1e-6);
                }
            }
        }
    }

    #[test]
    fn every_heuristic_placement_passes_the_checker(c in case(), seed in 0u64..4) {
        let inst = build(&c);
        let objective = if c.spread { Objective::Spread } else { Objective::Pack };
        let opts = Options { objective, seed, exact: ExactMode::Off, max_iterations: Some(50), ..Options::default() };
        let sol = solve(&inst, &opts);
        let r = check(&inst, &sol.assignment, objective, Weights::default());
        prop_assert_eq!(sol.status == Status::Placed, r.is_valid());
        if sol.status == Status::Placed {
            // The incremental state agrees with the checker on the final placement.
            let mut st = State::new(&inst, objective, Weights::default());
            for (i, l) in sol.assignment.iter().enumerate() {
                st.place(i as u32, l.unwrap().0);
            }
            prop_assert!((st.cost() - r.cost.total).abs() < 1e-6, "state {} vs checker {}", st.cost(), r.cost.total);
            prop_assert!(st.hard.abs() < 1e-9);
            // Removing and re-placing restores the cost.
            let before = st.cost();
            st.remove(0);
            st.place(0, sol.assignment[0].unwrap().0);
            prop_assert!((st.cost() - before).abs() < 1e-6);
        }
    }
}

/// Records what the search reports.
#[derive(Default)]
struct Recorder(std::sync::Mutex<Vec<(f64, Option<f64>)>>);

impl berth_solver::Progress for Recorder {
    fn improved(&self, best: f64, bound: Option<f64>) {
        self.0.lock().unwrap().push((best, bound));
    }
}

#[test]
fn progress_hears_the_greedy_cost_then_each_improvement() {
    let topo = Arc::new(synth::datacenter(40).unwrap());
    let inst = synth::workload(topo, &synth::WorkloadSpec::packing(150, 3)).unwrap();
    let rec = Arc::new(Recorder::default());
    let opts = Options {
        exact: ExactMode::Off,
        max_iterations: Some(400),
        progress: Some(rec.clone()),
        ..Options::default()
    };
    let sol = solve(&inst, &opts);
    let seen = rec.0.lock().unwrap().clone();
    let greedy_cost = check(
        &inst,
        &greedy(&inst, Objective::Pack, Weights::default()),
        Objective::Pack,
        Weights::default(),
    )
    .cost
    .total;
    assert!(
        (seen[0].0 - greedy_cost).abs() < 1e-6,
        "{seen:?} vs {greedy_cost}"
    );
    assert!(seen.windows(2).all(|w| w[1].0 <= w[0].0 + 1e-6), "{seen:?}");
    let last = seen.last().unwrap().0;
    assert!(
        (last - sol.report.cost.total).abs() < 1e-6,
        "{last} vs {}",
        sol.report.cost.total
    );
    let lb = inst.hosts_lower_bound().unwrap() as f64;
    assert!(
        seen.iter().all(|&(c, b)| b == Some(lb) && lb <= c + 1e-9),
        "{seen:?}"
    );
}

// ---- explanations, proofs and bounds -------------------------------------------------

fn four_vms(policy: &str) -> String {
    format!(
        "heat_template_version: 2013-05-23
resources:
  V1: {{type: OS::Nova::Server, properties: {{flavor: m1.large}}}}
  V2: {{type: OS::Nova::Server, properties: {{flavor: m1.large}}}}
  V3: {{type: OS::Nova::Server, properties: {{flavor: m1.large}}}}
  V4: {{type: OS::Nova::Server, properties: {{flavor: m1.large}}}}
groups: {{id: g, members: [{{get_resource: V1}}, {{get_resource: V2}}, {{get_resource: V3}}, {{get_resource: V4}}], policies: [{policy}]}}
"
    )
}

#[test]
fn llmn_over_more_racks_than_exist_is_proven_infeasible_by_counting() {
    let t = four_vms(
        "{type: OS::LLMNAntiCoLocation, properties: {l1: rack, l2: PM, n: 4}, metadata: {description: four racks}}",
    );
    let inst = instance(&t, HA_TOPO);
    for exact in [ExactMode::Off, ExactMode::Auto] {
        let sol = solve(
            &inst,
            &Options {
                exact,
                ..Options::default()
            },
        );
        assert_eq!(sol.status, Status::Infeasible, "{exact:?}");
        let e = sol.explanation.as_ref().expect("explained");
        assert!(e.proven);
        assert_eq!(e.reasons.len(), 1, "{:?}", e.reasons);
        let r = &e.reasons[0];
        assert_eq!(r.kind, "OS::LLMNAntiCoLocation");
        assert_eq!(r.policy, "four racks");
        assert_eq!(r.path, "groups.policies[0]");
        assert_eq!(
            r.message,
            "its 4 members need at least 4 rack places; only 3 can hold one"
        );
        assert_eq!(sol.stats.iterations, 0, "no search once proven");
    }
    let text = Placement::new(&inst, &solve(&inst, &Options::default())).to_table();
    assert!(
        text.contains("status infeasible (proven)")
            && text.contains("proof: OS::LLMNAntiCoLocation four racks (groups.policies[0]): its 4 members need at least 4 rack places; only 3 can hold one"),
        "{text}"
    );
}

#[test]
fn demand_beyond_every_leaf_has_no_bound_and_is_proven_infeasible() {
    // 12 PMs of 16 vCPU hold 192; 4 VMs of 64 vCPU each need a PM each but fit none.
    let t =
        four_vms("{type: OS::AntiCoLocation, properties: {level: PM}}").replace("m1.large", "huge");
    let topo = Arc::new(berth_topology::load(HA_TOPO).unwrap());
    let cat = Catalog::parse("flavors: {huge: {vcpu: 64, ram_mib: 1024}}\n").unwrap();
    let inst = Instance::from_template(
        &berth_heat::parse(&t).unwrap(),
        topo,
        &cat,
        &BTreeMap::new(),
    )
    .unwrap();
    assert_eq!(inst.hosts_lower_bound(), None);
    let sol = solve(&inst, &Options::default());
    assert_eq!(sol.status, Status::Infeasible);
    let e = sol.explanation.as_ref().expect("explained");
    let msgs: Vec<&str> = e.reasons.iter().map(|r| r.message.as_str()).collect();
    assert!(
        msgs.contains(&"`V1` needs 64 vcpu, more than any leaf has (16)"),
        "{msgs:?}"
    );
    assert!(
        msgs.contains(&"the items need 256 vcpu, the leaves have 192 in all"),
        "{msgs:?}"
    );
    let p = Placement::new(&inst, &sol);
    assert_eq!(
        p.to_json()["stats"]["lower_bound_hosts"],
        serde_json::Value::Null
    );
    assert!(!p.to_table().contains("18446744073709551615"));
    // Every unplaced VM's leaves, each removed by capacity.
    assert_eq!(e.triage.len(), 4);
    assert_eq!(e.triage[0].removed.get("capacity (vcpu)"), Some(&12));
}

#[test]
fn a_placement_at_the_host_bound_is_optimal_without_exact_search() {
    // 4 VMs of 4 vCPU collocated in a rack, PMs of 16 vCPU: the bound is 1 host, and the
    // heuristic reaches it.
    let inst = instance(
        &four_vms("{type: OS::CoLocation, properties: {level: rack}}"),
        HA_TOPO,
    );
    let lb = inst.hosts_lower_bound().unwrap();
    let sol = solve(
        &inst,
        &Options {
            exact: ExactMode::Off,
            max_iterations: Some(400),
            ..Options::default()
        },
    );
    assert_eq!(sol.status, Status::Placed);
    assert_eq!((lb, sol.report.cost.hosts_used), (1, 1));
    assert!(sol.optimal, "hosts equal the lower bound");
    // A spread objective has no such bound.
    let sol = solve(
        &inst,
        &Options {
            exact: ExactMode::Off,
            objective: Objective::Spread,
            max_iterations: Some(50),
            ..Options::default()
        },
    );
    assert!(!sol.optimal);
}

#[test]
fn an_exact_proof_names_the_policies_and_the_triage_names_each_leafs_remover() {
    // Hadoop on two nodes: the conflict names the exclusive volumes; each unplaced item's
    // leaves are removed by a policy or by capacity, never left unexplained.
    let topo = "levels: [room, rack, compute_node]\nfiner_than: [[rack, room], [compute_node, rack]]\ndimensions: [vcpu, ram_mib, disk_gib]\nflavors: {m1.medium: {vcpu: 2, ram_mib: 4096, disk_gib: 40}}\nlocation: {id: r, level: room, children: [{id: k1, level: rack, children: [{id: n1, level: compute_node, capacity: {vcpu: 64, ram_mib: 262144, disk_gib: 4000}}]}, {id: k2, level: rack, children: [{id: n2, level: compute_node, capacity: {vcpu: 64, ram_mib: 262144, disk_gib: 4000}}]}]}\nnetwork: [{id: sw}, {leaf: n1, parent: sw}, {leaf: n2, parent: sw}]\n";
    let inst = instance(HADOOP, topo);
    let sol = solve(&inst, &Options::default());
    assert_eq!(sol.status, Status::Infeasible);
    let e = sol.explanation.as_ref().expect("explained");
    assert!(e.proven);
    let kinds: BTreeSet<&str> = e.reasons.iter().map(|r| r.kind.as_str()).collect();
    assert!(kinds.contains("OS::VolExclusive"), "{:?}", e.reasons);
    assert!(!e.triage.is_empty());
    for t in &e.triage {
        assert_eq!(t.removed.values().sum::<usize>(), t.leaves, "{t:?}");
        assert!(
            t.removed
                .keys()
                .all(|k| k.starts_with("OS::") || k.starts_with("capacity")),
            "{t:?}"
        );
    }
}

#[test]
fn llmn_policies_placement_reinterprets_are_warned_at_the_policy() {
    let topo = berth_topology::load(HA_TOPO).unwrap();
    let t = berth_heat::parse(HA).unwrap();
    assert!(crate::policy_warnings(&t, &topo).is_empty());
    let text = HA
        .replacen("{l1: rack, l2: PM, n: 2}", "{l1: PM, l2: rack, n: 2}", 1)
        .replacen("{l1: rack, l2: PM, n: 2}", "{l1: rack, l2: PM, n: 5}", 1)
        .replacen("{l1: rack, l2: PM, n: 2}", "{l1: rack, l2: rack, n: 2}", 1);
    let t = berth_heat::parse(&text).unwrap();
    let shown: Vec<String> = crate::policy_warnings(&t, &topo)
        .iter()
        .map(|d| format!("{} {}:{} {}", d.path, d.line, d.column, d.message))
        .collect();
    assert_eq!(
        shown,
        [
            "groups.members[0].policies[0] 29:11 `l2` level `rack` is not finer than `l1` level `PM`; expected l2 finer than l1 (such as l1: rack, l2: PM): members are kept off a shared `rack`, which already spreads them over `PM`s",
            "groups.members[2].policies[0] 37:11 `l1` and `l2` are both `rack`; expected l2 finer than l1: members are kept off a shared `rack`, so n adds nothing",
            "groups.members[1].policies[0] 33:11 n = 5 but the group has 4 members; at most 4 `rack`s can hold them, so n is taken as 4 (each member in its own `rack`)",
        ]
    );
}

/// Seed 004: relationships to a pre-existing resource hold against the location `current`
/// gives it; without one, each such policy is refused by name.
#[test]
fn relationships_to_a_pre_existing_resource_hold_at_its_current_leaf() {
    let text = |policy: &str| {
        format!(
            "heat_template_version: 2013-05-23
resources:
  a:
    type: OS::Nova::Server
    properties: {{flavor: m1.large}}
    relationships:
      - related: ext-db-7
        policies: [{policy}]
  b:
    type: OS::Nova::Server
    properties: {{flavor: m1.large}}
    relationships:
      - related: ext-db-7
        policies: [{{type: OS::NetMaxHops, properties: {{hops: 0}}}}]
"
        )
    };
    let topo = Arc::new(berth_topology::load(HA_TOPO).unwrap());
    let place = |policy: &str, at: Option<&str>| {
        let t = berth_heat::parse(&text(policy)).unwrap();
        let current: BTreeMap<String, String> = at
            .map(|l| ("ext-db-7".to_owned(), l.to_owned()))
            .into_iter()
            .collect();
        Instance::from_template(&t, Arc::clone(&topo), &Catalog::default(), &current)
    };
    let leaf_of = |inst: &Instance, sol: &crate::Solution, name: &str| {
        let i = inst.items().iter().position(|it| it.name == name).unwrap();
        inst.topology()
            .leaf_name(sol.assignment[i].unwrap())
            .to_owned()
    };
    // Hard CoLocation (rack) and hops = 0: `b` on the external's leaf, `a` in its rack.
    let inst = place(
        "{type: OS::CoLocation, properties: {level: rack}}",
        Some("rack3-pm2"),
    )
    .unwrap();
    let sol = solve(&inst, &Options::default());
    assert_eq!(sol.status, Status::Placed, "{:?}", sol.report.hard);
    assert_eq!(leaf_of(&inst, &sol, "ext-db-7"), "rack3-pm2");
    assert_eq!(leaf_of(&inst, &sol, "b"), "rack3-pm2");
    assert!(leaf_of(&inst, &sol, "a").starts_with("rack3-"));
    // AntiCoLocation (rack): `a` leaves the external's rack.
    let inst = place(
        "{type: OS::AntiCoLocation, properties: {level: rack}}",
        Some("rack3-pm2"),
    )
    .unwrap();
    let sol = solve(&inst, &Options::default());
    assert_eq!(sol.status, Status::Placed, "{:?}", sol.report.hard);
    assert!(!leaf_of(&inst, &sol, "a").starts_with("rack3-"));
    // No location: refused, naming each policy and what to give.
    let err = place("{type: OS::CoLocation, properties: {level: rack}}", None)
        .unwrap_err()
        .to_string();
    for part in [
        "resources.a.relationships[0].policies[0]: `OS::CoLocation` relates to pre-existing resource `ext-db-7`, whose location is not given; expected `ext-db-7: LEAF_ID` in the current placement (--current)",
        "resources.b.relationships[0].policies[0]: `OS::NetMaxHops` relates to pre-existing resource `ext-db-7`",
    ] {
        assert!(err.contains(part), "{part} in {err}");
    }
}
