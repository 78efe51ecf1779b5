//! The resolution algorithm as it was before compiled filters and shared candidates: a
//! test-only reference that checks each filter on each candidate, allocating freely.

use std::borrow::Cow;
use std::collections::BTreeSet;

use crate::filter::{
    AttrFilter, DemandRequirement, ExistingPlacement, PlacementStatus, RemovalReason,
};
use crate::model::{AttrValue, Candidate, CandidateId};

/// What the reference resolves to: owned copies of the kept candidates.
#[derive(Debug)]
pub(super) struct Naive {
    pub(super) candidates: Vec<Candidate>,
    pub(super) removed: Vec<(CandidateId, RemovalReason)>,
    pub(super) existing_placement: Option<ExistingPlacement>,
}

fn canonical_float(f: f64) -> String {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if f.is_finite() && f.fract() == 0.0 && f.abs() < EXACT {
        #[allow(clippy::cast_possible_truncation)]
        let i = f as i64;
        i.to_string()
    } else {
        f.to_string()
    }
}

fn canonical_str(s: &str) -> String {
    let t = s.trim();
    if let Ok(i) = t.parse::<i64>() {
        return i.to_string();
    }
    if t.chars().any(|c| c.is_ascii_digit())
        && let Ok(f) = t.parse::<f64>()
        && f.is_finite()
    {
        return canonical_float(f);
    }
    if t.eq_ignore_ascii_case("true") {
        return "true".to_owned();
    }
    if t.eq_ignore_ascii_case("false") {
        return "false".to_owned();
    }
    s.to_owned()
}

/// The canonical text of a scalar, `None` for a list.
pub(super) fn canonical(v: &AttrValue) -> Option<String> {
    match v {
        AttrValue::Bool(b) => Some(b.to_string()),
        AttrValue::Int(i) => Some(i.to_string()),
        AttrValue::Float(f) => Some(canonical_float(*f)),
        AttrValue::Str(s) => Some(canonical_str(s)),
        AttrValue::List(_) => None,
    }
}

fn loosely_eq(a: &AttrValue, b: &AttrValue) -> bool {
    match (a, b) {
        (AttrValue::List(x), AttrValue::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| loosely_eq(p, q))
        }
        (AttrValue::List(_), _) | (_, AttrValue::List(_)) => false,
        (a, b) => canonical(a) == canonical(b),
    }
}

fn matches(have: &AttrValue, wanted: &AttrValue) -> bool {
    if loosely_eq(have, wanted) {
        return true;
    }
    match (have, wanted) {
        (AttrValue::List(items), w) if !matches!(w, AttrValue::List(_)) => {
            items.iter().any(|i| loosely_eq(i, w))
        }
        _ => false,
    }
}

fn accepts(f: &AttrFilter, value: &AttrValue) -> bool {
    match f {
        AttrFilter::Eq(w) => matches(value, w),
        AttrFilter::Any(ws) => ws.is_empty() || ws.iter().any(|w| matches(value, w)),
        AttrFilter::Not(ws) => !ws.iter().any(|w| matches(value, w)),
    }
}

fn attribute<'c>(c: &'c Candidate, key: &str) -> Option<Cow<'c, AttrValue>> {
    if let Some(v) = c.attributes.get(key) {
        return Some(Cow::Borrowed(v));
    }
    let field = match key.replace('-', "_").as_str() {
        "cost" => return c.cost.map(|c| Cow::Owned(AttrValue::Float(c))),
        "candidate_type" => Some(c.candidate_type.as_str().to_owned()),
        "inventory_type" => Some(c.inventory_type.as_str().to_owned()),
        "inventory_provider" => c.inventory_provider.clone(),
        "host_id" => c.host_id.clone(),
        "location_id" => c.location_id.clone(),
        "location_type" => c.location_type.clone(),
        "city" => c.city.clone(),
        "state" => c.state.clone(),
        "country" => c.country.clone(),
        "region" => c.region.clone(),
        "complex_name" => c.complex_name.clone(),
        "cloud_owner" => c.cloud_owner.clone(),
        "cloud_region_version" => c.cloud_region_version.clone(),
        "physical_location_id" => c.physical_location_id.clone(),
        "service_id" => c.service_id.clone(),
        "service_type" => c.service_type.clone(),
        "topology_node" => c.topology_node.clone(),
        _ => None,
    };
    field.map(|s| Cow::Owned(AttrValue::Str(s)))
}

/// The first service-type, service-id or attribute check a candidate fails.
pub(super) fn check_filters(req: &DemandRequirement, c: &Candidate) -> Option<RemovalReason> {
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
        match attribute(c, key) {
            None => return Some(RemovalReason::MissingAttribute { key: key.clone() }),
            Some(v) if !accepts(filter, &v) => {
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

/// Resolves `req` against every candidate of `inventory` (all types and providers): the
/// reference picks the pool itself, candidate by candidate.
pub(super) fn resolve(req: &DemandRequirement, inventory: &[Candidate]) -> Naive {
    let pool = inventory.iter().filter(|c| {
        c.inventory_type == req.inventory_type
            && c.inventory_provider
                .as_deref()
                .is_none_or(|p| p == req.inventory_provider)
    });
    resolve_from(req, pool)
}

/// Filters a pool given in inventory order.
pub(super) fn resolve_from<'a>(
    req: &DemandRequirement,
    pool: impl IntoIterator<Item = &'a Candidate>,
) -> Naive {
    let explicit = !req.candidates.is_empty();
    let excluded: BTreeSet<&str> = req.excluded_candidates.iter().map(|c| c.as_str()).collect();
    let required: BTreeSet<&str> = req.required_candidates.iter().map(|c| c.as_str()).collect();
    let existing = req.existing_placement.as_ref().map(CandidateId::as_str);
    let mut out = Naive {
        candidates: Vec::new(),
        removed: Vec::new(),
        existing_placement: None,
    };
    let mut seen_existing = false;
    let pool: Vec<&Candidate> = if explicit {
        req.candidates.iter().collect()
    } else {
        pool.into_iter().collect()
    };
    for c in pool {
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
