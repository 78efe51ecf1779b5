//! The placement instance: items with demand vectors, compiled rules, licenses. Its
//! construction from a Heat template is in `instance/template.rs`.

use std::collections::HashMap;
use std::sync::Arc;

use berth_topology::{LeafId, LevelId, Topology};

use crate::error::{PlacementError, Problem};

mod template;

pub use template::policy_warnings;

/// An item to place (a server or a volume), by position in [`Instance::items`].
pub type ItemId = u32;

/// Something placed on one leaf.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// Resource name.
    pub name: String,
    /// Demand vector, one entry per topology dimension.
    pub demand: Vec<i64>,
    /// A storage volume (for `OS::VolExclusive`).
    pub volume: bool,
    /// Must be placed on this leaf (a `OS::VolNotMoved` volume with a current location).
    pub fixed: Option<LeafId>,
    /// False for `OS::VolNotMoved` volumes: once placed, never moved.
    pub movable: bool,
    /// Licensed products running on it (indexes into [`Instance::licenses`]).
    pub licenses: Vec<u32>,
}

/// What a compiled rule requires.
#[derive(Clone, Debug, PartialEq)]
pub enum RuleKind {
    /// Anti-collocation at `level` of every pair of items from different parts.
    Spread {
        /// Location level.
        level: LevelId,
        /// Disjoint, non-empty parts.
        parts: Vec<Vec<ItemId>>,
    },
    /// Collocation at `level` of every pair of items from different parts.
    Together {
        /// Location level.
        level: LevelId,
        /// Disjoint, non-empty parts.
        parts: Vec<Vec<ItemId>>,
    },
    /// LLMN anti-collocation over `members`.
    Llmn {
        /// Coarse level.
        l1: LevelId,
        /// Fine level.
        l2: LevelId,
        /// Least number of level-`l1` vertices (already capped at the member count).
        n: u32,
        /// Most members per level-`l1` vertex: `ceil(M / n)`.
        cap: u32,
        /// The members.
        members: Vec<ItemId>,
    },
    /// The pair is anti-collocated (`same = false`) or collocated (`same = true`) at `level`.
    Pair {
        /// First item.
        a: ItemId,
        /// Second item.
        b: ItemId,
        /// Location level.
        level: LevelId,
        /// Collocation rather than anti-collocation.
        same: bool,
    },
    /// At most `hops` network edges between the pair.
    MaxHops {
        /// First item.
        a: ItemId,
        /// Second item.
        b: ItemId,
        /// Largest hop count.
        hops: u32,
    },
    /// `mbps` reserved on every network edge between the pair.
    Bandwidth {
        /// First item.
        a: ItemId,
        /// Second item.
        b: ItemId,
        /// Mbit/s each direction.
        mbps: u64,
    },
    /// The volume is the only volume on its leaf.
    VolExclusive {
        /// The volume.
        item: ItemId,
    },
}

/// A rule with its hardness and the policy it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// What it requires.
    pub kind: RuleKind,
    /// Hard (required) or soft (penalised).
    pub hard: bool,
    /// Penalty per unit of violation of a soft rule.
    pub weight: f64,
    /// Index into [`Instance::policies`].
    pub policy: u32,
}

/// Where a rule came from, for reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyLabel {
    /// Policy type name.
    pub type_name: String,
    /// Metadata description or field path.
    pub label: String,
    /// Field path in the template.
    pub path: String,
}

/// A connectivity requirement recorded for the network layer (reachability, endpoints).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connectivity {
    /// Policy type name.
    pub type_name: String,
    /// Initiator side (resource names or an external id).
    pub from: Vec<String>,
    /// Other side.
    pub to: Vec<String>,
    /// Protocols allowed (empty = all for reachability).
    pub protocols: Vec<String>,
    /// `protocol/port` endpoints.
    pub endpoints: Vec<String>,
    /// Symmetric (reachability) or not.
    pub symmetric: bool,
}

/// A licensed product and its charge on each leaf.
#[derive(Clone, Debug, PartialEq)]
pub struct License {
    /// `catalog/product`.
    pub name: String,
    /// Charge per leaf that runs it (index = leaf).
    pub charge: Vec<f64>,
}

/// A compiled placement problem over one topology.
///
/// Invariants: every item's demand has one entry per topology dimension; rule item ids index
/// `items`; `item_rules[i]` lists the rules naming item `i`; spread/together parts are
/// disjoint.
#[derive(Clone, Debug)]
pub struct Instance {
    pub(crate) topo: Arc<Topology>,
    pub(crate) items: Vec<Item>,
    pub(crate) rules: Vec<Rule>,
    pub(crate) policies: Vec<PolicyLabel>,
    pub(crate) licenses: Vec<License>,
    pub(crate) connectivity: Vec<Connectivity>,
    pub(crate) item_rules: Vec<Vec<u32>>,
    /// Part of each item in each spread/together rule: `(rule, item) -> part`.
    pub(crate) part: HashMap<(u32, ItemId), u32>,
    pub(crate) dims: usize,
}

impl Instance {
    /// Builds an instance from items and rules (checked: ids in range, vectors of the right
    /// length, levels of the topology).
    ///
    /// # Errors
    /// [`PlacementError::Invalid`] listing every problem.
    pub fn new(
        topo: Arc<Topology>,
        items: Vec<Item>,
        rules: Vec<Rule>,
        policies: Vec<PolicyLabel>,
        licenses: Vec<License>,
    ) -> Result<Instance, PlacementError> {
        let dims = topo.dimensions().len();
        let mut problems = Vec::new();
        let n = items.len() as u32;
        for it in &items {
            if it.demand.len() != dims || it.demand.iter().any(|&d| d < 0) {
                problems.push(Problem {
                    subject: format!("resources.{}", it.name),
                    message: format!(
                        "demand vector {:?}; expected {dims} non-negative integers",
                        it.demand
                    ),
                });
            }
            if it.licenses.iter().any(|&l| l as usize >= licenses.len()) {
                problems.push(Problem {
                    subject: format!("resources.{}", it.name),
                    message: "license index out of range; expected an index into the license table"
                        .into(),
                });
            }
        }
        let levels = topo.levels().len();
        let mut item_rules = vec![Vec::new(); items.len()];
        let mut part = HashMap::new();
        for (r, rule) in rules.iter().enumerate() {
            let r32 = r as u32;
            let mut named: Vec<ItemId> = Vec::new();
            let mut lvls: Vec<LevelId> = Vec::new();
            match &rule.kind {
                RuleKind::Spread { level, parts } | RuleKind::Together { level, parts } => {
                    lvls.push(*level);
                    for (p, list) in parts.iter().enumerate() {
                        for &i in list {
                            if part.insert((r32, i), p as u32).is_some() {
                                problems.push(Problem {
                                    subject: format!("rule {r}"),
                                    message: format!(
                                        "item {i} is in two parts; expected disjoint parts"
                                    ),
                                });
                            }
                            named.push(i);
                        }
                    }
                }
                RuleKind::Llmn {
                    l1, l2, members, ..
                } => {
                    lvls.extend([*l1, *l2]);
                    named.extend(members);
                }
                RuleKind::Pair { a, b, level, .. } => {
                    lvls.push(*level);
                    named.extend([*a, *b]);
                }
                RuleKind::MaxHops { a, b, .. } | RuleKind::Bandwidth { a, b, .. } => {
                    named.extend([*a, *b])
                }
                RuleKind::VolExclusive { item } => {
                    named.push(*item);
                    if items.get(*item as usize).is_some_and(|it| !it.volume) {
                        problems.push(Problem {
                            subject: format!("rule {r}"),
                            message: format!(
                                "item {item} is exclusive but not a volume; expected a volume"
                            ),
                        });
                    }
                }
            }
            if lvls.iter().any(|l| l.index() >= levels)
                || rule.policy as usize >= policies.len().max(1)
            {
                problems.push(Problem {
                    subject: format!("rule {r}"),
                    message: "level or policy out of range; expected ids of this topology and policy table".into(),
                });
            }
            if !(rule.weight.is_finite() && rule.weight >= 0.0) {
                problems.push(Problem {
                    subject: format!("rule {r}"),
                    message: format!("weight {}; expected a non-negative number", rule.weight),
                });
            }
            named.sort_unstable();
            named.dedup();
            for i in named {
                match item_rules.get_mut(i as usize) {
                    Some(list) => list.push(r32),
                    None => problems.push(Problem {
                        subject: format!("rule {r}"),
                        message: format!("item {i} does not exist; expected 0..{n}"),
                    }),
                }
            }
        }
        if !problems.is_empty() {
            return Err(PlacementError::Invalid { problems });
        }
        Ok(Instance {
            topo,
            items,
            rules,
            policies,
            licenses,
            connectivity: Vec::new(),
            item_rules,
            part,
            dims,
        })
    }

    /// The topology.
    #[must_use]
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// The items in order.
    #[must_use]
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// The compiled rules.
    #[must_use]
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Policy labels (rules point into this table).
    #[must_use]
    pub fn policies(&self) -> &[PolicyLabel] {
        &self.policies
    }

    /// Licensed products.
    #[must_use]
    pub fn licenses(&self) -> &[License] {
        &self.licenses
    }

    /// Connectivity requirements recorded from reachability and endpoint policies.
    #[must_use]
    pub fn connectivity(&self) -> &[Connectivity] {
        &self.connectivity
    }

    /// The item's demand vector.
    #[must_use]
    pub fn demand(&self, item: ItemId) -> &[i64] {
        self.items
            .get(item as usize)
            .map_or(&[], |i| i.demand.as_slice())
    }

    /// Lower bound on the hosts needed: per dimension, the fewest leaves whose largest
    /// capacities cover the total demand (`ceil(sum / capacity)` for identical hosts); the
    /// largest over dimensions. `None` when the total exceeds every leaf together: no
    /// placement exists.
    #[must_use]
    pub fn hosts_lower_bound(&self) -> Option<usize> {
        let mut best = 0usize;
        for d in 0..self.dims {
            let total: i64 = self.items.iter().map(|i| i.demand[d]).sum();
            if total == 0 {
                continue;
            }
            let mut caps: Vec<i64> = self
                .topo
                .leaves()
                .map(|l| self.topo.leaf_capacity(l)[d])
                .collect();
            caps.sort_unstable_by(|a, b| b.cmp(a));
            let mut acc = 0i64;
            let mut k = 0usize;
            for c in caps {
                if acc >= total {
                    break;
                }
                acc += c;
                k += 1;
            }
            if acc < total {
                return None;
            }
            best = best.max(k);
        }
        Some(best)
    }
}
