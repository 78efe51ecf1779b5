//! The independent checker: every hard policy and the cost of a complete or partial
//! placement, recomputed from scratch with explicit pairs (no code shared with the search).

use std::collections::{BTreeMap, BTreeSet};

use berth_topology::LeafId;

use crate::instance::{Instance, RuleKind};
use crate::state::{Objective, Weights};

/// A broken hard requirement.
#[derive(Clone, Debug, PartialEq)]
pub struct HardViolation {
    /// Policy type name, or `capacity` / `placement` / `fixed`.
    pub kind: String,
    /// The policy's label (metadata description or path), empty for capacity.
    pub policy: String,
    /// What is broken.
    pub message: String,
}

/// A soft policy that the placement does not satisfy.
#[derive(Clone, Debug, PartialEq)]
pub struct SoftViolation {
    /// Policy type name.
    pub type_name: String,
    /// Metadata description or field path.
    pub label: String,
    /// Field path in the template.
    pub path: String,
    /// Violated primitive applications (pairs, excess members, …; for bandwidth, the
    /// overflowing fraction of each requirement's Mbit/s summed over the links of its path).
    pub violations: f64,
    /// Penalty counted in the objective: `weights.soft * weight * violations`.
    pub penalty: f64,
}

/// The cost terms of a placement.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Cost {
    /// Leaves with at least one item.
    pub hosts_used: usize,
    /// Sum over leaves and dimensions of squared utilisation.
    pub balance: f64,
    /// License charges.
    pub license: f64,
    /// Sum of soft weights times violations (before `weights.soft`).
    pub soft: f64,
    /// The weighted total the solver minimises.
    pub total: f64,
}

/// What the checker found.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Report {
    /// Every hard violation (empty = valid placement).
    pub hard: Vec<HardViolation>,
    /// Every violated soft policy, aggregated per policy, in policy order.
    pub soft: Vec<SoftViolation>,
    /// Cost terms.
    pub cost: Cost,
}

impl Report {
    /// Whether every item is placed and no hard policy is violated.
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.hard.is_empty()
    }
}

/// Checks a placement (`assignment[item]`, `None` = unplaced) against every hard policy and
/// computes its cost.
#[must_use]
pub fn check(
    inst: &Instance,
    assignment: &[Option<LeafId>],
    objective: Objective,
    w: Weights,
) -> Report {
    let topo = &*inst.topo;
    let mut hard = Vec::new();
    let at = |i: u32| assignment.get(i as usize).copied().flatten();
    for (i, it) in inst.items.iter().enumerate() {
        match at(i as u32) {
            None => hard.push(HardViolation {
                kind: "placement".into(),
                policy: String::new(),
                message: format!("`{}` is not placed", it.name),
            }),
            Some(l) => {
                if l.index() >= topo.leaf_count() {
                    hard.push(HardViolation {
                        kind: "placement".into(),
                        policy: String::new(),
                        message: format!("`{}` is on a leaf that does not exist", it.name),
                    });
                }
                if let Some(f) = it.fixed
                    && f != l
                {
                    hard.push(HardViolation {
                        kind: "OS::VolNotMoved".into(),
                        policy: String::new(),
                        message: format!("`{}` moved from `{}`", it.name, topo.leaf_name(f)),
                    });
                }
            }
        }
    }
    if !hard.is_empty()
        && assignment
            .iter()
            .flatten()
            .any(|l| l.index() >= topo.leaf_count())
    {
        return Report {
            hard,
            ..Report::default()
        };
    }
    // Capacity.
    let mut load: BTreeMap<LeafId, Vec<i64>> = BTreeMap::new();
    for (i, it) in inst.items.iter().enumerate() {
        if let Some(l) = at(i as u32) {
            let v = load.entry(l).or_insert_with(|| vec![0; inst.dims]);
            for (k, d) in it.demand.iter().enumerate() {
                v[k] += d;
            }
        }
    }
    let mut balance = 0.0;
    for (l, v) in &load {
        let cap = topo.leaf_capacity(*l);
        for (k, &x) in v.iter().enumerate() {
            if x > cap[k] {
                hard.push(HardViolation {
                    kind: "capacity".into(),
                    policy: String::new(),
                    message: format!(
                        "`{}` holds {x} {} of {}",
                        topo.leaf_name(*l),
                        topo.dimensions()[k],
                        cap[k]
                    ),
                });
            }
            if cap[k] > 0 {
                let u = x as f64 / cap[k] as f64;
                balance += u * u;
            }
        }
    }
    // Rules. Bandwidth loads per network edge: hard and soft reservations apart.
    let mut edge_hard: BTreeMap<u32, u64> = BTreeMap::new();
    let mut edge_soft: BTreeMap<u32, u64> = BTreeMap::new();
    for rule in &inst.rules {
        if let RuleKind::Bandwidth { a, b, mbps } = rule.kind
            && let (Some(x), Some(y)) = (at(a), at(b))
        {
            let map = if rule.hard {
                &mut edge_hard
            } else {
                &mut edge_soft
            };
            for e in topo.path_edges(x, y) {
                let slot = map.entry(e.0).or_default();
                *slot = slot.saturating_add(mbps);
            }
        }
    }
    for (&e, &used) in &edge_hard {
        if let Some(cap) = topo.edge_link(berth_topology::NetEdgeId(e)).bandwidth_mbps
            && used > cap
        {
            hard.push(HardViolation {
                kind: "OS::NetBandwidth".into(),
                policy: String::new(),
                message: format!(
                    "link above `{}` carries {used} Mbit/s of {cap}",
                    topo.net_name(berth_topology::NetVertexId(e))
                ),
            });
        }
    }
    let loads = Loads {
        hard: &edge_hard,
        soft: &edge_soft,
    };
    let mut per_policy: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
    let mut soft_total = 0.0;
    for rule in &inst.rules {
        let bandwidth = matches!(rule.kind, RuleKind::Bandwidth { .. });
        // Hard bandwidth is judged per link above, not per rule.
        if rule.hard && bandwidth {
            continue;
        }
        let v = violation(inst, &rule.kind, assignment, &loads);
        if v == 0.0 {
            continue;
        }
        let label = inst
            .policies
            .get(rule.policy as usize)
            .map(|p| p.label.clone())
            .unwrap_or_default();
        if rule.hard {
            hard.push(HardViolation {
                kind: type_of(inst, rule.policy),
                policy: label,
                message: describe(inst, &rule.kind, v),
            });
        } else {
            let penalty = rule.weight * v;
            soft_total += penalty;
            let e = per_policy.entry(rule.policy).or_default();
            e.0 += v;
            e.1 += penalty * w.soft;
        }
    }
    let soft = per_policy
        .into_iter()
        .map(|(p, (violations, penalty))| {
            let l = inst.policies.get(p as usize);
            SoftViolation {
                type_name: l.map(|l| l.type_name.clone()).unwrap_or_default(),
                label: l.map(|l| l.label.clone()).unwrap_or_default(),
                path: l.map(|l| l.path.clone()).unwrap_or_default(),
                violations,
                penalty,
            }
        })
        .collect();
    let mut licensed: BTreeSet<(u32, LeafId)> = BTreeSet::new();
    for (i, it) in inst.items.iter().enumerate() {
        if let Some(l) = at(i as u32) {
            for &p in &it.licenses {
                licensed.insert((p, l));
            }
        }
    }
    let license: f64 = licensed
        .iter()
        .map(|(p, l)| inst.licenses[*p as usize].charge[l.index()])
        .sum();
    let hosts_used = load.len();
    let primary = match objective {
        Objective::Pack => hosts_used as f64,
        Objective::Spread => balance,
    };
    Report {
        hard,
        soft,
        cost: Cost {
            hosts_used,
            balance,
            license,
            soft: soft_total,
            total: w.objective * primary + w.license * license + w.soft * soft_total,
        },
    }
}

fn type_of(inst: &Instance, policy: u32) -> String {
    inst.policies
        .get(policy as usize)
        .map(|p| p.type_name.clone())
        .unwrap_or_default()
}

fn describe(inst: &Instance, kind: &RuleKind, v: f64) -> String {
    let name = |i: u32| inst.items.get(i as usize).map_or("?", |x| x.name.as_str());
    let level = |l: berth_topology::LevelId| inst.topo.levels().name(l).to_owned();
    match kind {
        RuleKind::Spread { level: l, .. } => format!("{v} pairs share a {} vertex", level(*l)),
        RuleKind::Together { level: l, .. } => {
            format!("{v} pairs are not in one {} vertex", level(*l))
        }
        RuleKind::Llmn { l1, l2, n, cap, .. } => format!(
            "{v} violations of at least {n} {} vertices, at most {cap} per {}, one per {}",
            level(*l1),
            level(*l1),
            level(*l2)
        ),
        RuleKind::Pair {
            a,
            b,
            level: l,
            same,
        } => format!(
            "`{}` and `{}` are {} at {}",
            name(*a),
            name(*b),
            if *same { "apart" } else { "together" },
            level(*l)
        ),
        RuleKind::MaxHops { a, b, hops } => format!(
            "`{}` and `{}` are more than {hops} hops apart",
            name(*a),
            name(*b)
        ),
        RuleKind::Bandwidth { a, b, mbps } => format!(
            "{mbps} Mbit/s between `{}` and `{}` overflows a link",
            name(*a),
            name(*b)
        ),
        RuleKind::VolExclusive { item } => format!(
            "volume `{}` shares its leaf with another volume",
            name(*item)
        ),
    }
}

/// Mbit/s reserved per network edge (keyed by edge id) by hard and by soft bandwidth rules.
struct Loads<'a> {
    hard: &'a BTreeMap<u32, u64>,
    soft: &'a BTreeMap<u32, u64>,
}

/// Violation of one rule by explicit enumeration.
fn violation(inst: &Instance, kind: &RuleKind, asg: &[Option<LeafId>], loads: &Loads<'_>) -> f64 {
    let topo = &*inst.topo;
    let at = |i: u32| asg.get(i as usize).copied().flatten();
    let cross = |parts: &[Vec<u32>], bad: &dyn Fn(LeafId, LeafId) -> bool| -> f64 {
        let mut n = 0u64;
        for (i, p) in parts.iter().enumerate() {
            for q in &parts[i + 1..] {
                for &x in p {
                    for &y in q {
                        if let (Some(a), Some(b)) = (at(x), at(y))
                            && bad(a, b)
                        {
                            n += 1;
                        }
                    }
                }
            }
        }
        n as f64
    };
    match kind {
        RuleKind::Spread { level, parts } => cross(parts, &|a, b| topo.same_at_level(a, b, *level)),
        RuleKind::Together { level, parts } => {
            cross(parts, &|a, b| !topo.same_at_level(a, b, *level))
        }
        RuleKind::Pair { a, b, level, same } => match (at(*a), at(*b)) {
            (Some(x), Some(y)) if topo.same_at_level(x, y, *level) != *same => 1.0,
            _ => 0.0,
        },
        RuleKind::Llmn {
            l1,
            l2,
            n,
            cap,
            members,
        } => {
            let mut c1: BTreeMap<u32, u32> = BTreeMap::new();
            let mut c2: BTreeMap<u32, u32> = BTreeMap::new();
            let mut unplaced = 0i64;
            for &m in members {
                match at(m) {
                    None => unplaced += 1,
                    Some(l) => {
                        *c1.entry(topo.vertex_at_level(l, *l1).0).or_default() += 1;
                        *c2.entry(topo.vertex_at_level(l, *l2).0).or_default() += 1;
                    }
                }
            }
            let over1: u32 = c1.values().map(|c| c.saturating_sub(*cap)).sum();
            let over2: u32 = c2.values().map(|c| c.saturating_sub(1)).sum();
            let deficit = (i64::from(*n) - c1.len() as i64 - unplaced).max(0);
            f64::from(over1 + over2) + deficit as f64
        }
        RuleKind::MaxHops { a, b, hops } => match (at(*a), at(*b)) {
            (Some(x), Some(y)) if topo.hops(x, y) > *hops => 1.0,
            _ => 0.0,
        },
        // Soft: on each link of the path, the soft Mbit/s that do not fit beside the hard
        // ones are shared among the soft reservations by Mbit/s; the rule's violation is its
        // overflowing share over its own Mbit/s, summed over the links.
        RuleKind::Bandwidth { a, b, .. } => match (at(*a), at(*b)) {
            (Some(x), Some(y)) => topo
                .path_edges(x, y)
                .filter_map(|e| {
                    let cap = topo.edge_link(e).bandwidth_mbps?;
                    let soft = loads.soft.get(&e.0).copied().unwrap_or(0);
                    let hard = loads.hard.get(&e.0).copied().unwrap_or(0);
                    let free = cap.saturating_sub(hard);
                    let over = soft.saturating_sub(free);
                    (soft > 0).then(|| over as f64 / soft as f64)
                })
                .sum(),
            _ => 0.0,
        },
        RuleKind::VolExclusive { item } => match at(*item) {
            Some(l) => {
                let shared = inst
                    .items
                    .iter()
                    .enumerate()
                    .any(|(j, it)| j as u32 != *item && it.volume && at(j as u32) == Some(l));
                if shared { 1.0 } else { 0.0 }
            }
            None => 0.0,
        },
    }
}
