//! Why there is no placement: counting arguments checked before any search (each one a
//! proof), the exact search's conflict set named by policy, and a triage of every unplaced
//! item's leaves (which policy or capacity removes each, given where the others are).

use std::collections::{BTreeMap, BTreeSet};

use berth_topology::{LeafId, LevelId, LocVertexId};

use crate::instance::{Instance, ItemId, Rule, RuleKind};
use crate::state::{Block, Objective, State, Weights};

/// One reason there is no placement: a policy (or `capacity`) and what it asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reason {
    /// Policy type name, or `capacity`.
    pub kind: String,
    /// The policy's label (metadata description or path); empty for capacity.
    pub policy: String,
    /// The policy's field path in the template; empty for capacity.
    pub path: String,
    /// What it asks that cannot be given.
    pub message: String,
}

/// The leaves of one unplaced item and what removes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemTriage {
    /// The item's name.
    pub item: String,
    /// Leaves of the topology.
    pub leaves: usize,
    /// Leaves removed, by reason (`capacity (vcpu)`, `OS::AntiCoLocation apart`, ...).
    pub removed: BTreeMap<String, usize>,
}

/// Why a solve did not place everything.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Explanation {
    /// The reasons prove that no placement exists (a counting argument or a completed
    /// exact search); otherwise the search stopped without one.
    pub proven: bool,
    /// The proof: the policies (or capacity) that together leave no placement.
    pub reasons: Vec<Reason>,
    /// Per unplaced item, its leaves and what removes each.
    pub triage: Vec<ItemTriage>,
}

fn name(inst: &Instance, i: ItemId) -> &str {
    inst.items.get(i as usize).map_or("?", |x| x.name.as_str())
}

fn level(inst: &Instance, l: LevelId) -> String {
    inst.topo.levels().name(l).to_owned()
}

/// A reason naming the policy of `rule`.
fn of_rule(inst: &Instance, rule: &Rule, message: String) -> Reason {
    let p = inst.policies.get(rule.policy as usize);
    Reason {
        kind: p.map(|p| p.type_name.clone()).unwrap_or_default(),
        policy: p.map(|p| p.label.clone()).unwrap_or_default(),
        path: p.map(|p| p.path.clone()).unwrap_or_default(),
        message,
    }
}

fn capacity(message: String) -> Reason {
    Reason {
        kind: "capacity".into(),
        policy: String::new(),
        path: String::new(),
        message,
    }
}

/// What a rule asks, in a few words.
pub(crate) fn asks(inst: &Instance, kind: &RuleKind) -> String {
    match kind {
        RuleKind::Spread { level: l, parts } => format!(
            "its {} parts in different {} places",
            parts.len(),
            level(inst, *l)
        ),
        RuleKind::Together { level: l, parts } => {
            format!("its {} parts in one {} place", parts.len(), level(inst, *l))
        }
        RuleKind::Llmn {
            l1,
            l2,
            n,
            cap,
            members,
        } => format!(
            "its {} members over at least {n} {} places, at most {cap} per {}, one per {}",
            members.len(),
            level(inst, *l1),
            level(inst, *l1),
            level(inst, *l2)
        ),
        RuleKind::Pair {
            a,
            b,
            level: l,
            same,
        } => format!(
            "`{}` and `{}` {} at {}",
            name(inst, *a),
            name(inst, *b),
            if *same { "together" } else { "apart" },
            level(inst, *l)
        ),
        RuleKind::MaxHops { a, b, hops } => format!(
            "`{}` and `{}` within {hops} network hops",
            name(inst, *a),
            name(inst, *b)
        ),
        RuleKind::Bandwidth { a, b, mbps } => format!(
            "{mbps} Mbit/s between `{}` and `{}`",
            name(inst, *a),
            name(inst, *b)
        ),
        RuleKind::VolExclusive { item } => format!(
            "volume `{}` alone among the volumes of its leaf",
            name(inst, *item)
        ),
    }
}

/// Whether item `i` fits leaf `l` alone (capacity, and its fixed leaf).
fn fits_alone(inst: &Instance, i: ItemId, l: LeafId) -> bool {
    let it = &inst.items[i as usize];
    it.fixed.is_none_or(|f| f == l)
        && inst
            .topo
            .leaf_capacity(l)
            .iter()
            .zip(&it.demand)
            .all(|(c, d)| d <= c)
}

/// The places at `lv` where some of `items` fits alone.
fn places(inst: &Instance, items: &[ItemId], lv: LevelId) -> BTreeSet<LocVertexId> {
    let topo = &inst.topo;
    topo.leaves()
        .filter(|&l| items.iter().any(|&i| fits_alone(inst, i, l)))
        .map(|l| topo.vertex_at_level(l, lv))
        .collect()
}

/// Necessary conditions of any placement, checked by counting; each one that fails is a
/// proof that none exists. Empty when all hold (which proves nothing).
pub(crate) fn counting(inst: &Instance) -> Vec<Reason> {
    let topo = &inst.topo;
    let dims = topo.dimensions();
    let mut out = Vec::new();
    for (i, it) in inst.items.iter().enumerate() {
        if topo.leaves().any(|l| fits_alone(inst, i as ItemId, l)) {
            continue;
        }
        let max = |k: usize| topo.leaves().map(|l| topo.leaf_capacity(l)[k]).max();
        let short = it
            .demand
            .iter()
            .enumerate()
            .find(|&(k, &d)| max(k).is_none_or(|m| d > m));
        let message = match (it.fixed, short) {
            (Some(f), _) => format!(
                "`{}` stays on `{}` (OS::VolNotMoved), which has not the room for it",
                it.name,
                topo.leaf_name(f)
            ),
            (None, Some((k, &d))) => format!(
                "`{}` needs {d} {}, more than any leaf has ({})",
                it.name,
                dims[k],
                max(k).unwrap_or(0)
            ),
            (None, None) => format!("`{}` fits no single leaf in every dimension", it.name),
        };
        out.push(capacity(message));
    }
    for (k, dim) in dims.iter().enumerate() {
        let need: i64 = inst.items.iter().map(|it| it.demand[k]).sum();
        let have: i64 = topo.leaves().map(|l| topo.leaf_capacity(l)[k]).sum();
        if need > have {
            out.push(capacity(format!(
                "the items need {need} {dim}, the leaves have {have} in all"
            )));
        }
    }
    for rule in inst.rules.iter().filter(|r| r.hard) {
        let mut fail = |message: String| out.push(of_rule(inst, rule, message));
        match &rule.kind {
            RuleKind::Llmn {
                l1,
                l2,
                n,
                cap,
                members,
            } => {
                let m = members.len();
                let p1 = places(inst, members, *l1);
                if p1.len() < *n as usize {
                    fail(format!(
                        "its {m} members need at least {n} {} places; only {} can hold one",
                        level(inst, *l1),
                        p1.len()
                    ));
                    continue;
                }
                let p2 = places(inst, members, *l2);
                if p2.len() < m {
                    fail(format!(
                        "no two of its {m} members may share a {} place; only {} can hold one",
                        level(inst, *l2),
                        p2.len()
                    ));
                    continue;
                }
                // Each L1 place holds at most `cap` members, one per L2 place within it.
                let mut per1: BTreeMap<LocVertexId, BTreeSet<LocVertexId>> = BTreeMap::new();
                for l in topo.leaves() {
                    if members.iter().any(|&i| fits_alone(inst, i, l)) {
                        per1.entry(topo.vertex_at_level(l, *l1))
                            .or_default()
                            .insert(topo.vertex_at_level(l, *l2));
                    }
                }
                let most: usize = per1.values().map(|s| s.len().min(*cap as usize)).sum();
                if most < m {
                    fail(format!(
                        "with at most {cap} per {} place and one per {} place, the topology holds {most} of its {m} members",
                        level(inst, *l1),
                        level(inst, *l2)
                    ));
                }
            }
            RuleKind::Spread { level: lv, parts } => {
                let all: Vec<ItemId> = parts.iter().flatten().copied().collect();
                let p = places(inst, &all, *lv);
                if p.len() < parts.len() {
                    fail(format!(
                        "its {} parts must be in different {} places; only {} can hold one",
                        parts.len(),
                        level(inst, *lv),
                        p.len()
                    ));
                }
            }
            RuleKind::Together { level: lv, parts } => {
                let all: Vec<ItemId> = parts.iter().flatten().copied().collect();
                let mut common: Option<BTreeSet<LocVertexId>> = None;
                for &i in &all {
                    let p = places(inst, &[i], *lv);
                    common = Some(match common {
                        None => p,
                        Some(c) => c.intersection(&p).copied().collect(),
                    });
                }
                let common = common.unwrap_or_default();
                if common.is_empty() {
                    fail(format!(
                        "no {} place can hold each of its {} members",
                        level(inst, *lv),
                        all.len()
                    ));
                    continue;
                }
                let need: Vec<i64> = (0..dims.len())
                    .map(|k| all.iter().map(|&i| inst.items[i as usize].demand[k]).sum())
                    .collect();
                let room = |v: LocVertexId| -> Vec<i64> {
                    let mut r = vec![0i64; dims.len()];
                    for l in topo.leaves_under(v) {
                        for (k, c) in topo.leaf_capacity(LeafId(l)).iter().enumerate() {
                            r[k] += c;
                        }
                    }
                    r
                };
                let fits = common
                    .iter()
                    .any(|&v| room(v).iter().zip(&need).all(|(r, n)| n <= r));
                if !fits
                    && let Some(k) =
                        (0..dims.len()).find(|&k| common.iter().all(|&v| room(v)[k] < need[k]))
                {
                    let most = common.iter().map(|&v| room(v)[k]).max().unwrap_or(0);
                    fail(format!(
                        "its members need {} {} in one {} place; the most any has is {most}",
                        need[k],
                        dims[k],
                        level(inst, *lv)
                    ));
                }
            }
            RuleKind::Pair {
                a,
                b,
                level: lv,
                same,
            } => {
                let (pa, pb) = (places(inst, &[*a], *lv), places(inst, &[*b], *lv));
                if *same && pa.is_disjoint(&pb) {
                    fail(format!(
                        "`{}` and `{}` must share a {} place; none can hold both",
                        name(inst, *a),
                        name(inst, *b),
                        level(inst, *lv)
                    ));
                } else if !same && pa.len() == 1 && pa == pb {
                    fail(format!(
                        "`{}` and `{}` must be in different {} places; one place can hold them",
                        name(inst, *a),
                        name(inst, *b),
                        level(inst, *lv)
                    ));
                }
            }
            RuleKind::MaxHops { a, b, hops: 0 } => {
                let shared = topo
                    .leaves()
                    .any(|l| fits_alone(inst, *a, l) && fits_alone(inst, *b, l));
                if !shared {
                    fail(format!(
                        "`{}` and `{}` must share a leaf (0 hops); no leaf can hold either beside the other",
                        name(inst, *a),
                        name(inst, *b)
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

/// The exact search's conflict set (solver constraint names, as `exact::encode` gives them)
/// as reasons, one per policy or capacity.
pub(crate) fn conflict(inst: &Instance, names: &[String]) -> Vec<Reason> {
    let mut out: Vec<Reason> = Vec::new();
    let mut push = |r: Reason| {
        if !out.contains(&r) {
            out.push(r);
        }
    };
    for n in names {
        if let Some(rest) = n.strip_prefix("rule ") {
            let id = rest.split(' ').next().and_then(|x| x.parse::<usize>().ok());
            if let Some(rule) = id.and_then(|r| inst.rules.get(r)) {
                push(of_rule(inst, rule, asks(inst, &rule.kind)));
            }
        } else if n == "capacity" {
            push(capacity("the leaves' capacity".into()));
        } else if n == "bandwidth" {
            push(Reason {
                kind: "OS::NetBandwidth".into(),
                policy: String::new(),
                path: String::new(),
                message: "the links' bandwidth".into(),
            });
        } else if let Some(item) = n.strip_suffix(" fixed") {
            push(capacity(format!(
                "`{item}` stays on its leaf (OS::VolNotMoved), on a leaf with room"
            )));
        }
    }
    out
}

/// For every unplaced item of `assignment`: its leaves, and the first reason each is
/// removed given where the placed items are.
pub(crate) fn triage(inst: &Instance, assignment: &[Option<LeafId>]) -> Vec<ItemTriage> {
    let mut st = State::new(inst, Objective::Pack, Weights::default());
    for (i, l) in assignment.iter().enumerate() {
        if let Some(l) = l
            && l.index() < inst.topo.leaf_count()
        {
            st.place(i as ItemId, l.0);
        }
    }
    let dims = inst.topo.dimensions();
    let mut out = Vec::new();
    for (i, it) in inst.items.iter().enumerate() {
        if assignment.get(i).copied().flatten().is_some() {
            continue;
        }
        let mut removed: BTreeMap<String, usize> = BTreeMap::new();
        for l in inst.topo.leaves() {
            let why = match st.blocking(i as ItemId, l.0) {
                None => continue,
                Some(Block::Fixed) => "OS::VolNotMoved".to_owned(),
                Some(Block::Capacity(k)) => format!("capacity ({})", dims[k]),
                Some(Block::Rule(r)) => {
                    let p = inst
                        .rules
                        .get(r as usize)
                        .and_then(|r| inst.policies.get(r.policy as usize));
                    match p {
                        Some(p) if p.label.is_empty() => p.type_name.clone(),
                        Some(p) => format!("{} {}", p.type_name, p.label),
                        None => format!("rule {r}"),
                    }
                }
            };
            *removed.entry(why).or_default() += 1;
        }
        out.push(ItemTriage {
            item: it.name.clone(),
            leaves: inst.topo.leaf_count(),
            removed,
        });
    }
    out
}
