//! Policy levels a leaf lacks (location trees of uneven depth): the seed's example by hand,
//! and every rule kind against an oracle that walks the tree itself, by brute force.

use std::collections::BTreeMap;
use std::sync::Arc;

use berth_topology::{LeafId, Link, TopologyBuilder};
use proptest::prelude::*;

use super::instance;
use crate::state::State;
use crate::{
    ExactMode, Instance, Item, Objective, Options, PolicyLabel, Rule, RuleKind, Status, Weights,
    check, solve,
};

/// rack1 > {chassis1 > {pm1, pm2}, pm3}: pm3 is in no chassis and holds two VMs.
const CHASSIS_TOPO: &str = "levels: [room, rack, chassis, PM]
finer_than: [[rack, room], [chassis, rack], [PM, chassis]]
dimensions: [vcpu]
flavors: {m1: {vcpu: 1}}
location:
  id: rack1
  level: rack
  children:
    - id: chassis1
      level: chassis
      children:
        - {id: pm1, level: PM, capacity: {vcpu: 1}}
        - {id: pm2, level: PM, capacity: {vcpu: 1}}
    - {id: pm3, level: PM, capacity: {vcpu: 2}}
network: [{id: sw}, {leaf: pm1, parent: sw}, {leaf: pm2, parent: sw}, {leaf: pm3, parent: sw}]
";

fn two_vms(policy: &str) -> String {
    format!(
        "heat_template_version: 2013-05-23
resources:
  a: {{type: OS::Nova::Server, properties: {{flavor: m1}}}}
  b: {{type: OS::Nova::Server, properties: {{flavor: m1}}}}
groups: {{id: g, members: [{{get_resource: a}}, {{get_resource: b}}], policies: [{{type: {policy}, properties: {{level: chassis}}}}]}}
"
    )
}

#[test]
fn anti_collocation_at_a_level_the_host_lacks_keeps_two_vms_off_one_host() {
    let inst = instance(&two_vms("OS::AntiCoLocation"), CHASSIS_TOPO);
    let sol = solve(&inst, &Options::default());
    assert_eq!(sol.status, Status::Placed);
    assert!(sol.optimal);
    let (a, b) = (sol.assignment[0].unwrap(), sol.assignment[1].unwrap());
    assert_ne!(a, b, "two VMs on one PM are together at every level");
    assert_eq!(sol.report.cost.hosts_used, 2);
    // Both on pm3 is what the checker refuses.
    let pm3 = inst.topology().leaf("pm3").unwrap();
    let r = check(
        &inst,
        &[Some(pm3), Some(pm3)],
        Objective::Pack,
        Weights::default(),
    );
    assert_eq!(r.hard.len(), 1, "{:?}", r.hard);
    assert_eq!(r.hard[0].kind, "OS::AntiCoLocation");
}

#[test]
fn collocation_at_a_level_the_host_lacks_accepts_two_vms_on_that_host() {
    let inst = instance(&two_vms("OS::CoLocation"), CHASSIS_TOPO);
    let sol = solve(&inst, &Options::default());
    assert_eq!(sol.status, Status::Placed);
    assert!(sol.optimal);
    let pm3 = inst.topology().leaf("pm3").unwrap();
    assert_eq!(sol.assignment, vec![Some(pm3), Some(pm3)]);
    assert_eq!(sol.report.cost.hosts_used, 1);
    // pm3 is not in chassis1: one VM there and one in the chassis are apart.
    let pm1 = inst.topology().leaf("pm1").unwrap();
    let r = check(
        &inst,
        &[Some(pm1), Some(pm3)],
        Objective::Pack,
        Weights::default(),
    );
    assert!(!r.is_valid());
}

// ---- the oracle ---------------------------------------------------------------------------

/// Levels from coarsest to finest.
const LEVELS: [&str; 4] = ["room", "rack", "chassis", "pm"];

/// Where a host may hang: the room, a rack, or a chassis in a rack.
const PARENTS: [(&str, usize); 5] = [("room", 0), ("k0", 1), ("k1", 1), ("k0c", 2), ("k1c", 2)];

#[derive(Debug, Clone)]
struct Case {
    /// Per host: index into `PARENTS`, capacity.
    hosts: Vec<(usize, i64)>,
    demands: Vec<i64>,
    /// `(kind, members, hard, level, x)`.
    rules: Vec<(u8, Vec<usize>, bool, usize, u8)>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((0usize..5, 1i64..4), 1..6),
        prop::collection::vec(0i64..3, 1..5),
        prop::collection::vec(
            (
                0u8..4,
                prop::collection::vec(0usize..4, 1..4),
                any::<bool>(),
                0usize..4,
                0u8..4,
            ),
            1..4,
        ),
    )
        .prop_map(|(hosts, demands, rules)| Case {
            hosts,
            demands,
            rules,
        })
}

/// The tree as plain data: `(id, level index, parent)`, parents first; hosts are `h<i>`.
fn tree(c: &Case) -> Vec<(String, usize, Option<String>)> {
    let used = |p: &str| {
        c.hosts
            .iter()
            .any(|&(k, _)| PARENTS[k].0 == p || PARENTS[k].0.starts_with(p))
    };
    let mut out = vec![("room".to_owned(), 0, None)];
    for k in ["k0", "k1"] {
        if used(k) {
            out.push((k.to_owned(), 1, Some("room".to_owned())));
            let ch = format!("{k}c");
            if used(&ch) {
                out.push((ch, 2, Some(k.to_owned())));
            }
        }
    }
    for (i, &(k, _)) in c.hosts.iter().enumerate() {
        out.push((format!("h{i}"), 3, Some(PARENTS[k].0.to_owned())));
    }
    out
}

/// The place of host `h` at `level` by the definition: its ancestor at the level, else the
/// highest of the ancestors from the host up whose levels are finer, else the host.
fn place(t: &[(String, usize, Option<String>)], h: usize, level: usize) -> String {
    let by_id: BTreeMap<&str, &(String, usize, Option<String>)> =
        t.iter().map(|v| (v.0.as_str(), v)).collect();
    let mut path = Vec::new();
    let mut cur = Some(format!("h{h}"));
    while let Some(id) = cur {
        let v = by_id[id.as_str()];
        path.push(v);
        cur = v.2.clone();
    }
    if let Some(v) = path.iter().find(|v| v.1 == level) {
        return v.0.clone();
    }
    let mut best = path[0];
    for v in &path {
        if v.1 <= level {
            break;
        }
        best = v;
    }
    best.0.clone()
}

fn build(c: &Case) -> Instance {
    let mut b = TopologyBuilder::new();
    for l in LEVELS {
        b.level(l);
    }
    b.finer_than("rack", "room")
        .finer_than("chassis", "rack")
        .finer_than("pm", "chassis");
    b.dimension("a");
    b.switch("core", None, Link::default());
    for (id, level, parent) in tree(c) {
        let v = b.location(id.clone(), parent.as_deref(), LEVELS[level]);
        if let Some(h) = id.strip_prefix('h') {
            let h: usize = h.parse().unwrap();
            v.capacity("a", c.hosts[h].1);
            b.network_leaf(id, Some("core"), Link::default());
        }
    }
    let topo = Arc::new(b.build().unwrap());
    let n = c.demands.len();
    let items = c
        .demands
        .iter()
        .enumerate()
        .map(|(i, &d)| Item {
            name: format!("i{i}"),
            demand: vec![d],
            volume: false,
            fixed: None,
            movable: true,
            licenses: Vec::new(),
        })
        .collect();
    let level = |l: usize| topo.level(LEVELS[l]).unwrap();
    let mut rules = Vec::new();
    for (kind, members, hard, l, x) in &c.rules {
        let mut m: Vec<u32> = members.iter().map(|&i| (i % n) as u32).collect();
        m.sort_unstable();
        m.dedup();
        let kind = match kind {
            0 if m.len() >= 2 => RuleKind::Spread {
                level: level(*l),
                parts: m.iter().map(|&i| vec![i]).collect(),
            },
            1 if m.len() >= 2 => RuleKind::Together {
                level: level(*l),
                parts: m.iter().map(|&i| vec![i]).collect(),
            },
            2 if m.len() >= 2 => RuleKind::Pair {
                a: m[0],
                b: m[1],
                level: level(*l),
                same: x % 2 == 0,
            },
            3 => {
                let nn = u32::from(*x).clamp(1, m.len() as u32);
                RuleKind::Llmn {
                    l1: level(*l),
                    l2: level(usize::from(*x) % 4),
                    n: nn,
                    cap: (m.len() as u32).div_ceil(nn),
                    members: m,
                }
            }
            _ => continue,
        };
        rules.push(Rule {
            kind,
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
    Instance::new(topo, items, rules, policies, Vec::new()).unwrap()
}

/// Hard violations other than capacity, whether capacity holds, and the soft penalty
/// (weights included), computed from the case alone. `at[item]` = host index.
fn judge(c: &Case, inst: &Instance, at: &[usize]) -> (f64, bool, f64) {
    let t = tree(c);
    let topo = inst.topology();
    let lvl = |l: berth_topology::LevelId| {
        LEVELS
            .iter()
            .position(|&s| s == topo.levels().name(l))
            .unwrap()
    };
    let p = |i: u32, l| place(&t, at[i as usize], lvl(l));
    let (mut hard, mut soft) = (0.0, 0.0);
    for rule in inst.rules() {
        let v = match &rule.kind {
            RuleKind::Spread { level, parts } | RuleKind::Together { level, parts } => {
                let same = matches!(rule.kind, RuleKind::Together { .. });
                let mut v = 0.0;
                for (i, a) in parts.iter().enumerate() {
                    for b in &parts[i + 1..] {
                        for &x in a {
                            for &y in b {
                                if (p(x, *level) == p(y, *level)) != same {
                                    v += 1.0;
                                }
                            }
                        }
                    }
                }
                v
            }
            RuleKind::Pair { a, b, level, same } => {
                if (p(*a, *level) == p(*b, *level)) != *same {
                    1.0
                } else {
                    0.0
                }
            }
            RuleKind::Llmn {
                l1,
                l2,
                n,
                cap,
                members,
            } => {
                let mut c1: BTreeMap<String, u32> = BTreeMap::new();
                let mut c2: BTreeMap<String, u32> = BTreeMap::new();
                for &m in members {
                    *c1.entry(p(m, *l1)).or_default() += 1;
                    *c2.entry(p(m, *l2)).or_default() += 1;
                }
                let over1: u32 = c1.values().map(|k| k.saturating_sub(*cap)).sum();
                let over2: u32 = c2.values().map(|k| k.saturating_sub(1)).sum();
                f64::from(over1 + over2 + n.saturating_sub(c1.len() as u32))
            }
            _ => unreachable!("the cases hold level rules only"),
        };
        if rule.hard {
            hard += v;
        } else {
            soft += rule.weight * v;
        }
    }
    let mut load = vec![0i64; c.hosts.len()];
    for (i, &h) in at.iter().enumerate() {
        load[h] += c.demands[i];
    }
    let fits = load.iter().zip(&c.hosts).all(|(l, h)| *l <= h.1);
    (hard, fits, soft)
}

fn leaf_of(inst: &Instance, h: usize) -> LeafId {
    inst.topology().leaf(&format!("h{h}")).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn level_rules_on_uneven_trees_match_an_oracle_walking_the_tree(c in case()) {
        let inst = build(&c);
        let (n, hosts) = (c.demands.len(), c.hosts.len());
        let w = Weights::default();
        let mut best: Option<f64> = None;
        let mut idx = vec![0usize; n];
        loop {
            let (hard, fits, soft) = judge(&c, &inst, &idx);
            let asg: Vec<Option<LeafId>> = idx.iter().map(|&h| Some(leaf_of(&inst, h))).collect();
            let r = check(&inst, &asg, Objective::Pack, w);
            prop_assert_eq!(r.is_valid(), hard == 0.0 && fits, "{:?} at {:?}", r.hard, idx);
            let used = {
                let mut u = idx.clone();
                u.sort_unstable();
                u.dedup();
                u.len() as f64
            };
            let cost = used + w.soft * soft;
            prop_assert!((r.cost.total - cost).abs() < 1e-6, "checker {} vs oracle {}", r.cost.total, cost);
            let mut st = State::new(&inst, Objective::Pack, w);
            for (i, &h) in idx.iter().enumerate() {
                st.place(i as u32, leaf_of(&inst, h).0);
            }
            prop_assert_eq!(st.hard > 1e-9, hard > 0.0);
            prop_assert!((st.cost() - cost).abs() < 1e-6, "state {} vs oracle {}", st.cost(), cost);
            if hard == 0.0 && fits && best.is_none_or(|b| cost < b) {
                best = Some(cost);
            }
            let mut k = 0;
            while k < n {
                idx[k] += 1;
                if idx[k] < hosts {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
            if k == n {
                break;
            }
        }
        let exact = solve(&inst, &Options { exact: ExactMode::Only, ..Options::default() });
        match best {
            None => prop_assert_ne!(exact.status, Status::Placed),
            Some(b) => {
                prop_assert_eq!(exact.status, Status::Placed);
                prop_assert!(exact.optimal);
                prop_assert!((exact.report.cost.total - b).abs() < 1e-6, "exact {} vs oracle {}", exact.report.cost.total, b);
            }
        }
        // A counting proof is sound: it never claims what brute force refutes.
        if !crate::explain::counting(&inst).is_empty() {
            prop_assert!(best.is_none(), "proof {:?} but a placement costs {:?}", crate::explain::counting(&inst), best);
        }
        let heuristic = solve(&inst, &Options { exact: ExactMode::Off, max_iterations: Some(40), ..Options::default() });
        if heuristic.optimal {
            prop_assert!(best.is_some_and(|b| (heuristic.report.cost.total - b).abs() < 1e-6), "claimed optimal at {} against {:?}", heuristic.report.cost.total, best);
        }
        if heuristic.status == Status::Placed {
            let at: Vec<usize> = heuristic.assignment.iter().map(|l| {
                let name = inst.topology().leaf_name(l.unwrap()).to_owned();
                name[1..].parse().unwrap()
            }).collect();
            let (hard, fits, _) = judge(&c, &inst, &at);
            prop_assert!(hard == 0.0 && fits, "heuristic placement {:?} breaks a rule", at);
            prop_assert!(best.is_some());
        }
    }
}
