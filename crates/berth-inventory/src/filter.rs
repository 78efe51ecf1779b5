//! Demand requirements and the filtering that turns an inventory into a demand's candidates.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::{AttrValue, Candidate, CandidateId, InventoryType};

/// What a demand asks of an inventory provider: one entry of a template demand's list,
/// mapped by the engine into this crate's own terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DemandRequirement {
    /// Demand name, for messages.
    pub demand: String,
    /// Provider name (`aai`, `multicloud`, ...).
    pub inventory_provider: String,
    /// `cloud` or `service`.
    pub inventory_type: InventoryType,
    /// Accepted service types; empty = any.
    pub service_type: Vec<String>,
    /// Accepted service ids; empty = any.
    pub service_id: Vec<String>,
    /// Attribute filters; a candidate must pass all of them.
    pub attributes: BTreeMap<String, AttrFilter>,
    /// If non-empty, only these candidates (and the existing placement) are kept.
    pub required_candidates: Vec<CandidateId>,
    /// Candidates removed from the search space.
    pub excluded_candidates: Vec<CandidateId>,
    /// The demand's current placement.
    pub existing_placement: Option<CandidateId>,
    /// Predetermined candidates: when non-empty they replace the provider's inventory and
    /// skip service-type, service-id and attribute filters (required/excluded still apply).
    pub candidates: Vec<Candidate>,
    /// Cost given to candidates without one.
    pub default_cost: Option<f64>,
}

impl DemandRequirement {
    /// A requirement with only the provider and type set.
    pub fn new(
        demand: impl Into<String>,
        inventory_provider: impl Into<String>,
        inventory_type: InventoryType,
    ) -> Self {
        Self {
            demand: demand.into(),
            inventory_provider: inventory_provider.into(),
            inventory_type,
            service_type: Vec::new(),
            service_id: Vec::new(),
            attributes: BTreeMap::new(),
            required_candidates: Vec::new(),
            excluded_candidates: Vec::new(),
            existing_placement: None,
            candidates: Vec::new(),
            default_cost: None,
        }
    }
}

/// A filter on one attribute, as in HAS: a value, `{any: [...]}` or `{not: [...]}`.
///
/// The attribute is looked up with [`Candidate::attribute`]: the `attributes` map first,
/// then the typed fields (`cloud_owner`, `cloud-owner`, ...).
///
/// Values compare with [`AttrValue::matches`]: loose scalar equality, and list membership
/// when the candidate's attribute is a list. A candidate without the attribute never passes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttrFilter {
    /// The attribute matches this value.
    Eq(AttrValue),
    /// The attribute matches at least one of these values (an empty list accepts any value).
    Any(Vec<AttrValue>),
    /// The attribute matches none of these values.
    Not(Vec<AttrValue>),
}

impl AttrFilter {
    /// Whether a candidate's attribute value passes.
    pub fn accepts(&self, value: &AttrValue) -> bool {
        match self {
            Self::Eq(w) => value.matches(w),
            Self::Any(ws) => ws.is_empty() || ws.iter().any(|w| value.matches(w)),
            Self::Not(ws) => !ws.iter().any(|w| value.matches(w)),
        }
    }
}

impl fmt::Display for AttrFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Eq(v) => write!(f, "{v}"),
            Self::Any(vs) => write!(f, "any of {}", AttrValue::List(vs.clone())),
            Self::Not(vs) => write!(f, "none of {}", AttrValue::List(vs.clone())),
        }
    }
}

/// Why a candidate was removed from a demand's search space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
#[non_exhaustive]
pub enum RemovalReason {
    /// Its service type is not among those asked for.
    ServiceType {
        /// The accepted types.
        expected: Vec<String>,
        /// The candidate's type, if any.
        found: Option<String>,
    },
    /// Its service id is not among those asked for.
    ServiceId {
        /// The accepted ids.
        expected: Vec<String>,
        /// The candidate's id, if any.
        found: Option<String>,
    },
    /// It lacks an attribute the demand filters on.
    MissingAttribute {
        /// Attribute name.
        key: String,
    },
    /// Its attribute value does not pass the filter.
    AttributeMismatch {
        /// Attribute name.
        key: String,
        /// The filter.
        expected: AttrFilter,
        /// The candidate's value.
        found: AttrValue,
    },
    /// It is in `excluded_candidates`.
    Excluded,
    /// `required_candidates` is given and it is not in it.
    NotRequired,
}

impl fmt::Display for RemovalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ServiceType { expected, found } => write!(
                f,
                "service type {} not in [{}]",
                found.as_deref().unwrap_or("(none)"),
                expected.join(", ")
            ),
            Self::ServiceId { expected, found } => write!(
                f,
                "service id {} not in [{}]",
                found.as_deref().unwrap_or("(none)"),
                expected.join(", ")
            ),
            Self::MissingAttribute { key } => write!(f, "no attribute `{key}`"),
            Self::AttributeMismatch {
                key,
                expected,
                found,
            } => write!(f, "attribute `{key}` is {found}; expected {expected}"),
            Self::Excluded => f.write_str("in excluded_candidates"),
            Self::NotRequired => f.write_str("not in required_candidates"),
        }
    }
}

/// What became of a demand's existing placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlacementStatus {
    /// It is among the resolved candidates.
    Kept,
    /// A filter removed it; the reason is in [`Resolved::removed`].
    Removed,
    /// No candidate of this type has that id.
    Unknown,
}

/// The existing placement of a demand and its fate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExistingPlacement {
    /// The candidate id of the current placement.
    pub candidate_id: CandidateId,
    /// Whether it survived the filters.
    pub status: PlacementStatus,
}

/// A demand's candidates after filtering, and the triage of what was removed and why.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Resolved {
    /// Candidates kept, in inventory order.
    pub candidates: Vec<Candidate>,
    /// Candidates removed with the first reason that removed them, in inventory order.
    pub removed: Vec<(CandidateId, RemovalReason)>,
    /// The existing placement, when the demand has one.
    pub existing_placement: Option<ExistingPlacement>,
}

/// Filters `pool` (candidates of the requirement's provider and type, in inventory order)
/// by the requirement: service type and id, attributes, exclusions, required candidates.
///
/// Each removed candidate is reported once with the first failing check. The existing
/// placement is exempt from `required_candidates` (staying put is always an option) but not
/// from the other filters. Candidates without a cost get `default_cost`.
pub fn resolve_from<'a>(
    req: &DemandRequirement,
    pool: impl IntoIterator<Item = &'a Candidate>,
) -> Resolved {
    let explicit = !req.candidates.is_empty();
    let excluded: BTreeSet<&str> = req.excluded_candidates.iter().map(|c| c.as_str()).collect();
    let required: BTreeSet<&str> = req.required_candidates.iter().map(|c| c.as_str()).collect();
    let existing = req.existing_placement.as_ref().map(CandidateId::as_str);
    let mut out = Resolved::default();
    let mut seen_existing = false;
    let pool = (!explicit).then(|| pool.into_iter()).into_iter().flatten();
    for c in req
        .candidates
        .iter()
        .chain(pool.map(|c| -> &Candidate { c }))
    {
        let id = c.candidate_id.as_str();
        let is_existing = existing == Some(id);
        seen_existing |= is_existing;
        let reason = if explicit {
            None
        } else {
            check_filters(req, c)
        }
        .or_else(|| excluded.contains(id).then_some(RemovalReason::Excluded))
        .or_else(|| {
            (!required.is_empty() && !required.contains(id) && !is_existing)
                .then_some(RemovalReason::NotRequired)
        });
        match reason {
            Some(r) => out.removed.push((c.candidate_id.clone(), r)),
            None => {
                let mut kept = c.clone();
                if kept.cost.is_none() {
                    kept.cost = req.default_cost;
                }
                kept.apply_zone_defaults();
                out.candidates.push(kept);
            }
        }
    }
    out.existing_placement = req.existing_placement.as_ref().map(|id| {
        let status = if out.candidates.iter().any(|c| &c.candidate_id == id) {
            PlacementStatus::Kept
        } else if seen_existing {
            PlacementStatus::Removed
        } else {
            PlacementStatus::Unknown
        };
        ExistingPlacement {
            candidate_id: id.clone(),
            status,
        }
    });
    out
}

/// The first service-type, service-id or attribute check a candidate fails.
pub fn check_filters(req: &DemandRequirement, c: &Candidate) -> Option<RemovalReason> {
    if !req.service_type.is_empty()
        && !c
            .service_type
            .as_ref()
            .is_some_and(|t| req.service_type.contains(t))
    {
        return Some(RemovalReason::ServiceType {
            expected: req.service_type.clone(),
            found: c.service_type.clone(),
        });
    }
    if !req.service_id.is_empty()
        && !c
            .service_id
            .as_ref()
            .is_some_and(|t| req.service_id.contains(t))
    {
        return Some(RemovalReason::ServiceId {
            expected: req.service_id.clone(),
            found: c.service_id.clone(),
        });
    }
    for (key, filter) in &req.attributes {
        match c.attribute(key) {
            None => return Some(RemovalReason::MissingAttribute { key: key.clone() }),
            Some(v) if !filter.accepts(&v) => {
                return Some(RemovalReason::AttributeMismatch {
                    key: key.clone(),
                    expected: filter.clone(),
                    found: v.into_owned(),
                });
            }
            Some(_) => {}
        }
    }
    None
}

#[cfg(test)]
mod tests;
