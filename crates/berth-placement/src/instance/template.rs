//! Translation of a Heat template's policy applications onto a topology: demand vectors from
//! flavors, rules from the policies, licenses from the catalog.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use berth_heat::{PolicyKind, ResourceKind, Subject, Template};
use berth_topology::{LevelId, Topology};

use super::*;
use crate::catalog::Catalog;
use crate::error::{PlacementError, Problem};

impl Instance {
    /// Compiles a template onto a topology: demand vectors from flavors (topology table, then
    /// the catalog), rules from the policy applications, licenses from the catalog.
    /// `current` gives the present leaf of resources already placed (`OS::VolNotMoved`
    /// volumes stay there) and of pre-existing resources that relationships name: each
    /// becomes an item of no demand fixed there (so the placement lists it, and its host
    /// counts as used), and the relationship's CoLocation, AntiCoLocation, NetMaxHops and
    /// NetBandwidth policies hold against it.
    ///
    /// # Errors
    /// [`PlacementError::Invalid`] with every problem: unknown flavor or level, a volume
    /// dimension the topology lacks, an unknown current leaf, a pre-existing resource such a
    /// policy relates to whose leaf `current` does not give.
    pub fn from_template(
        template: &Template,
        topo: Arc<Topology>,
        catalog: &Catalog,
        current: &BTreeMap<String, String>,
    ) -> Result<Instance, PlacementError> {
        let dims = topo.dimensions().len();
        let mut problems = Vec::new();
        let mut items: Vec<Item> = Vec::new();
        let mut of_resource: HashMap<u32, ItemId> = HashMap::new();
        let vol_dim_name = catalog.volume_dimension.as_deref().unwrap_or("disk_gib");
        for (ri, r) in template.resources.values().enumerate() {
            let subject = format!("resources.{}", r.name);
            let demand = match &r.kind {
                ResourceKind::Server { flavor } => match topo.flavor(flavor) {
                    Some(v) => Some(v.to_vec()),
                    None => match catalog.flavors.get(flavor) {
                        Some(map) => {
                            let mut v = vec![0; dims];
                            for (d, a) in map {
                                match topo.dimension(d) {
                                    Some(id) => v[id.index()] = *a,
                                    None => problems.push(Problem {
                                        subject: format!("catalog.flavors.{flavor}.{d}"),
                                        message: format!(
                                            "unknown dimension `{d}`; expected one of {}",
                                            topo.dimensions().join(", ")
                                        ),
                                    }),
                                }
                            }
                            Some(v)
                        }
                        None => {
                            let mut known: Vec<String> =
                                topo.flavors().map(|(n, _)| n.to_owned()).collect();
                            known.extend(catalog.flavors.keys().cloned());
                            known.sort();
                            problems.push(Problem {
                                subject: subject.clone(),
                                message: format!(
                                    "unknown flavor `{flavor}`; expected one of {}",
                                    known.join(", ")
                                ),
                            });
                            None
                        }
                    },
                },
                ResourceKind::Volume { size_gib } => match topo.dimension(vol_dim_name) {
                    Some(d) => {
                        let mut v = vec![0; dims];
                        v[d.index()] = *size_gib;
                        Some(v)
                    }
                    None => {
                        problems.push(Problem {
                            subject: subject.clone(),
                            message: format!(
                                "volumes consume dimension `{vol_dim_name}`, which the topology lacks; expected one of {}",
                                topo.dimensions().join(", ")
                            ),
                        });
                        None
                    }
                },
                _ => None,
            };
            if let Some(demand) = demand {
                of_resource.insert(ri as u32, items.len() as ItemId);
                items.push(Item {
                    name: r.name.clone(),
                    demand,
                    volume: matches!(r.kind, ResourceKind::Volume { .. }),
                    fixed: None,
                    movable: true,
                    licenses: Vec::new(),
                });
            }
        }
        // Pre-existing resources that placement rules relate to (hard or soft CoLocation,
        // AntiCoLocation, NetMaxHops, NetBandwidth in a relationship): items of no demand
        // fixed at the leaf `current` gives, or refused by name when it gives none.
        let mut external: BTreeMap<String, ItemId> = BTreeMap::new();
        let mut unknown_leaf = std::collections::BTreeSet::new();
        for app in template.applications() {
            let (Some(p), Subject::External(_, rid)) = (template.policy(app.policy), &app.subject)
            else {
                continue;
            };
            let placed = matches!(
                p.kind,
                PolicyKind::CoLocation { .. }
                    | PolicyKind::AntiCoLocation { .. }
                    | PolicyKind::NetMaxHops { .. }
                    | PolicyKind::NetBandwidth { .. }
            );
            if !placed || external.contains_key(rid) || unknown_leaf.contains(rid) {
                continue;
            }
            if items.iter().any(|i| &i.name == rid) {
                problems.push(Problem {
                    subject: p.path.clone(),
                    message: format!("pre-existing resource `{rid}` has the name of a resource of the template; expected a distinct resource id"),
                });
                continue;
            }
            let Some(leaf) = current.get(rid).and_then(|l| topo.leaf(l)) else {
                if let Some(l) = current.get(rid) {
                    unknown_leaf.insert(rid.clone());
                    problems.push(Problem {
                        subject: format!("current.{rid}"),
                        message: format!("unknown leaf `{l}`; expected a leaf of the topology"),
                    });
                } else {
                    problems.push(Problem {
                        subject: p.path.clone(),
                        message: format!(
                            "`{}` relates to pre-existing resource `{rid}`, whose location is not given; expected `{rid}: LEAF_ID` in the current placement (--current)",
                            p.kind.type_name()
                        ),
                    });
                }
                continue;
            };
            external.insert(rid.clone(), items.len() as ItemId);
            items.push(Item {
                name: rid.clone(),
                demand: vec![0; dims],
                volume: false,
                fixed: Some(leaf),
                movable: false,
                licenses: Vec::new(),
            });
        }
        for (name, leaf) in current {
            if unknown_leaf.contains(name) {
                continue;
            }
            let Some(item) = items.iter().position(|i| &i.name == name) else {
                problems.push(Problem {
                    subject: format!("current.{name}"),
                    message: "not a server or volume of the template, nor a pre-existing resource a placement relationship names; expected a placed resource"
                        .into(),
                });
                continue;
            };
            if topo.leaf(leaf).is_none() {
                problems.push(Problem {
                    subject: format!("current.{name}"),
                    message: format!("unknown leaf `{leaf}`; expected a leaf of the topology"),
                });
            }
            let _ = item;
        }

        let level = |name: &str, path: &str, problems: &mut Vec<Problem>| -> Option<LevelId> {
            let l = topo.level(name);
            if l.is_none() {
                let known: Vec<&str> = topo
                    .levels()
                    .iter()
                    .map(|l| topo.levels().name(l))
                    .collect();
                problems.push(Problem {
                    subject: path.to_owned(),
                    message: format!(
                        "unknown level `{name}`; expected one of {}",
                        known.join(", ")
                    ),
                });
            }
            l
        };
        let mut policies: Vec<PolicyLabel> = template
            .policies
            .iter()
            .map(|p| PolicyLabel {
                type_name: p.kind.type_name().to_owned(),
                label: p.label(),
                path: p.path.clone(),
            })
            .collect();
        if policies.is_empty() {
            policies.push(PolicyLabel {
                type_name: String::new(),
                label: String::new(),
                path: String::new(),
            });
        }
        // Levels are checked once per policy, whether or not it applies to anything.
        let mut levels: Vec<Vec<Option<LevelId>>> = Vec::with_capacity(template.policies.len());
        for p in &template.policies {
            let names: Vec<&str> = match &p.kind {
                PolicyKind::CoLocation { level } | PolicyKind::AntiCoLocation { level } => {
                    vec![level]
                }
                PolicyKind::Llmn { l1, l2, .. } => vec![l1, l2],
                _ => Vec::new(),
            };
            levels.push(
                names
                    .iter()
                    .map(|n| level(n, &p.path, &mut problems))
                    .collect(),
            );
        }
        let mut license_index: BTreeMap<String, u32> = BTreeMap::new();
        let mut licenses: Vec<License> = Vec::new();
        let mut rules = Vec::new();
        let mut connectivity = Vec::new();
        let map = |ids: &[berth_heat::ResourceId]| -> Vec<ItemId> {
            ids.iter()
                .filter_map(|r| of_resource.get(&r.0).copied())
                .collect()
        };
        let rname = |ids: &[berth_heat::ResourceId]| -> Vec<String> {
            ids.iter()
                .filter_map(|r| template.resource(*r).map(|x| x.name.clone()))
                .collect()
        };
        for app in template.applications() {
            let Some(p) = template.policy(app.policy) else {
                continue;
            };
            let lv = levels.get(app.policy.index()).cloned().unwrap_or_default();
            let base = |kind: RuleKind| Rule {
                kind,
                hard: p.hard,
                weight: p.weight,
                policy: app.policy.0,
            };
            let pairs = |subject: &Subject| -> Vec<(ItemId, ItemId)> {
                let mut out = Vec::new();
                match subject {
                    Subject::Across(parts) => {
                        let parts: Vec<Vec<ItemId>> = parts.iter().map(|x| map(x)).collect();
                        for (i, a) in parts.iter().enumerate() {
                            for b in &parts[i + 1..] {
                                for &x in a {
                                    for &y in b {
                                        out.push((x, y));
                                    }
                                }
                            }
                        }
                    }
                    Subject::Between(a, b) => {
                        for &x in &map(a) {
                            for &y in &map(b) {
                                if x != y && !out.contains(&(y, x)) {
                                    out.push((x, y));
                                }
                            }
                        }
                    }
                    Subject::External(a, rid) => {
                        if let Some(&y) = external.get(rid) {
                            out.extend(map(a).into_iter().map(|x| (x, y)));
                        }
                    }
                    _ => {}
                }
                out
            };
            match (&p.kind, &app.subject) {
                (PolicyKind::CoLocation { .. } | PolicyKind::AntiCoLocation { .. }, subject) => {
                    let Some(Some(level)) = lv.first().copied() else {
                        continue;
                    };
                    let same = matches!(p.kind, PolicyKind::CoLocation { .. });
                    match subject {
                        Subject::Across(parts) => {
                            let parts: Vec<Vec<ItemId>> = parts
                                .iter()
                                .map(|x| map(x))
                                .filter(|x| !x.is_empty())
                                .collect();
                            if parts.len() >= 2 {
                                rules.push(base(if same {
                                    RuleKind::Together { level, parts }
                                } else {
                                    RuleKind::Spread { level, parts }
                                }));
                            }
                        }
                        _ => {
                            for (a, b) in pairs(subject) {
                                rules.push(base(RuleKind::Pair { a, b, level, same }));
                            }
                        }
                    }
                }
                (PolicyKind::Llmn { n, .. }, Subject::Members(m)) => {
                    let (Some(Some(l1)), Some(Some(l2))) =
                        (lv.first().copied(), lv.get(1).copied())
                    else {
                        continue;
                    };
                    let members = map(m);
                    let count = members.len() as u32;
                    if count == 0 {
                        continue;
                    }
                    let n = (*n).min(count).max(1);
                    rules.push(base(RuleKind::Llmn {
                        l1,
                        l2,
                        n,
                        cap: count.div_ceil(n),
                        members,
                    }));
                }
                (PolicyKind::NetMaxHops { hops }, subject) => {
                    for (a, b) in pairs(subject) {
                        rules.push(base(RuleKind::MaxHops { a, b, hops: *hops }));
                    }
                }
                (PolicyKind::NetBandwidth { bytes_per_second }, subject) => {
                    let mbps = bytes_per_second.saturating_mul(8).div_ceil(1_000_000);
                    for (a, b) in pairs(subject) {
                        rules.push(base(RuleKind::Bandwidth { a, b, mbps }));
                    }
                }
                (PolicyKind::VolExclusive, Subject::One(r)) => {
                    if let Some(&item) = of_resource.get(&r.0) {
                        rules.push(base(RuleKind::VolExclusive { item }));
                    }
                }
                (PolicyKind::VolNotMoved, Subject::One(r)) => {
                    if let Some(&item) = of_resource.get(&r.0)
                        && let Some(it) = items.get_mut(item as usize)
                    {
                        it.movable = false;
                        it.fixed = current.get(&it.name).and_then(|l| topo.leaf(l));
                    }
                }
                (
                    PolicyKind::LicensedProduct {
                        catalog: c,
                        product,
                    },
                    Subject::One(r),
                ) => {
                    let name = format!("{c}/{product}");
                    let idx = *license_index.entry(name.clone()).or_insert_with(|| {
                        licenses.push(License {
                            charge: topo
                                .leaves()
                                .map(|l| catalog.charge(&name, topo.leaf_machine_type(l)))
                                .collect(),
                            name: name.clone(),
                        });
                        licenses.len() as u32 - 1
                    });
                    if let Some(&item) = of_resource.get(&r.0)
                        && let Some(it) = items.get_mut(item as usize)
                        && !it.licenses.contains(&idx)
                    {
                        it.licenses.push(idx);
                    }
                }
                (PolicyKind::NetReachability | PolicyKind::NetEndpointAccess { .. }, subject) => {
                    let (from, to) = match subject {
                        Subject::Across(parts) => {
                            let mut it = parts.iter();
                            let from = it.next().map(|x| rname(x)).unwrap_or_default();
                            let to: Vec<String> = it.flat_map(|x| rname(x)).collect();
                            (from, to)
                        }
                        Subject::Between(a, b) => (rname(a), rname(b)),
                        Subject::External(a, rid) => (rname(a), vec![rid.clone()]),
                        _ => continue,
                    };
                    let (protocols, endpoints) = match &p.kind {
                        PolicyKind::NetEndpointAccess {
                            protocols,
                            endpoints,
                        } => (
                            protocols.clone(),
                            endpoints.iter().map(|(p, n)| format!("{p}/{n}")).collect(),
                        ),
                        _ => (Vec::new(), Vec::new()),
                    };
                    connectivity.push(Connectivity {
                        type_name: p.kind.type_name().to_owned(),
                        from,
                        to,
                        protocols,
                        endpoints,
                        symmetric: matches!(p.kind, PolicyKind::NetReachability),
                    });
                }
                _ => {}
            }
        }
        if !problems.is_empty() {
            return Err(PlacementError::Invalid { problems });
        }
        let mut inst = Instance::new(topo, items, rules, policies, licenses)?;
        inst.connectivity = connectivity;
        Ok(inst)
    }
}

/// What placement does with a template's policies that differs from what they say, as
/// warnings at each policy's path and line:column (the template is still placed):
/// - LLMN with fewer members M than N: at most M `l1` places can hold them, so N is taken
///   as M (every member in its own `l1` place, at most one per `l1`);
/// - LLMN whose `l2` is not finer than `l1`: "no two on one `l2`" then already spreads the
///   members over at least as many `l1` places as there are members' `l2` places, so the
///   `l1` bound is kept but the intent (racks apart, hosts apart) is likely swapped.
///
/// Levels the topology lacks are left to [`Instance::from_template`], which refuses them.
#[must_use]
pub fn policy_warnings(template: &Template, topo: &Topology) -> Vec<berth_doc::Diagnostic> {
    let mut out = Vec::new();
    let warn = |p: &berth_heat::Policy, message: String| berth_doc::Diagnostic {
        severity: berth_doc::Severity::Warning,
        path: p.path.clone(),
        line: p.line,
        column: p.column,
        message,
    };
    for p in &template.policies {
        if let PolicyKind::Llmn { l1, l2, .. } = &p.kind
            && let (Some(a), Some(b)) = (topo.level(l1), topo.level(l2))
            && !topo.levels().is_finer(b, a)
        {
            let message = if a == b {
                format!(
                    "`l1` and `l2` are both `{l1}`; expected l2 finer than l1: members are kept off a shared `{l1}`, so n adds nothing"
                )
            } else {
                format!(
                    "`l2` level `{l2}` is not finer than `l1` level `{l1}`; expected l2 finer than l1 (such as l1: {l2}, l2: {l1}): members are kept off a shared `{l2}`, which already spreads them over `{l1}`s"
                )
            };
            out.push(warn(p, message));
        }
    }
    for app in template.applications() {
        let (Some(p), Subject::Members(m)) = (template.policy(app.policy), &app.subject) else {
            continue;
        };
        if let PolicyKind::Llmn { l1, n, .. } = &p.kind
            && !m.is_empty()
            && (m.len() as u64) < u64::from(*n)
        {
            let count = m.len();
            out.push(warn(
                p,
                format!(
                    "n = {n} but the group has {count} member{}; at most {count} `{l1}`s can hold them, so n is taken as {count} (each member in its own `{l1}`)",
                    if count == 1 { "" } else { "s" }
                ),
            ));
        }
    }
    out
}
