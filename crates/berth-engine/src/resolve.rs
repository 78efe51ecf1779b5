//! From template demands and locations to the search space: each requirement becomes a
//! `DemandRequirement` the inventory provider resolves; locations get coordinates.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use berth_constraints::{DemandSpace, Space, attr_value};
use berth_inventory::{
    AttrFilter, Candidate, CandidateId, DemandRequirement, InventoryProvider, InventoryType,
    RemovalKind, RemovalReason,
};
use berth_template::{Candidate as TCandidate, InventoryType as TType, Requirement, Template};

use crate::EngineError;

/// The search space plus what the inventory removed and which demands are `unique`.
pub(crate) struct Resolution {
    pub(crate) space: Space,
    /// Per demand: candidates offered before any removal, and the inventory's removals.
    pub(crate) inventory: Vec<(usize, Vec<(CandidateId, String)>)>,
    /// Demands whose requirement says `unique: true`.
    pub(crate) unique: Vec<usize>,
}

/// The triage name of an inventory removal.
pub fn removal_name(r: &RemovalReason) -> &'static str {
    kind_name(r.kind())
}

fn kind_name(k: RemovalKind) -> &'static str {
    match k {
        RemovalKind::ServiceType => "inventory:service_type",
        RemovalKind::ServiceId => "inventory:service_id",
        RemovalKind::MissingAttribute | RemovalKind::AttributeMismatch => "inventory:attributes",
        RemovalKind::Excluded => "inventory:excluded_candidates",
        RemovalKind::NotRequired => "inventory:required_candidates",
        _ => "inventory",
    }
}

fn inventory_type(t: TType, demand: &str) -> Result<InventoryType, String> {
    match t {
        TType::Cloud => Ok(InventoryType::Cloud),
        TType::Service => Ok(InventoryType::Service),
        other => Err(format!(
            "demand `{demand}` asks for inventory type `{other}`, which the inventory does not serve; expected cloud or service"
        )),
    }
}

fn attr_filter(
    demand: &str,
    key: &str,
    v: &serde_json::Value,
) -> Result<Option<AttrFilter>, String> {
    let list = |xs: &serde_json::Value| -> Option<Vec<_>> {
        xs.as_array()
            .map(|a| a.iter().filter_map(attr_value).collect())
    };
    let bad = || {
        format!(
            "demand `{demand}` attribute `{key}` is {v}; expected a value, a list, {{any: [...]}} or {{not: [...]}}"
        )
    };
    Ok(Some(match v {
        serde_json::Value::Null => return Ok(None),
        serde_json::Value::Array(_) => AttrFilter::Any(list(v).unwrap_or_default()),
        serde_json::Value::Object(m) if m.len() == 1 => match m.iter().next() {
            Some((k, xs)) if k == "any" => AttrFilter::Any(list(xs).ok_or_else(bad)?),
            Some((k, xs)) if k == "not" => AttrFilter::Not(list(xs).ok_or_else(bad)?),
            _ => return Err(bad()),
        },
        serde_json::Value::Object(_) => return Err(bad()),
        scalar => AttrFilter::Eq(attr_value(scalar).ok_or_else(bad)?),
    }))
}

/// A template candidate as an inventory candidate: the inventory's record of that id (if
/// any) with the fields the template gives laid over it.
fn candidate(
    tc: &TCandidate,
    id: &str,
    fallback: InventoryType,
    provider: &dyn InventoryProvider,
) -> Candidate {
    let ty = tc
        .inventory_type
        .and_then(|t| inventory_type(t, "").ok())
        .or_else(|| tc.candidate_type.as_deref().and_then(|t| t.parse().ok()))
        .unwrap_or(fallback);
    let mut c = provider
        .candidate(id)
        .unwrap_or_else(|| Candidate::new(id, ty));
    let set = |slot: &mut Option<String>, v: &Option<String>| {
        if v.is_some() {
            slot.clone_from(v);
        }
    };
    if let Some(t) = tc.candidate_type.as_deref().and_then(|t| t.parse().ok()) {
        c.candidate_type = t;
    }
    set(&mut c.inventory_provider, &tc.inventory_provider);
    set(&mut c.host_id, &tc.host_id);
    set(&mut c.location_id, &tc.location_id);
    set(&mut c.location_type, &tc.location_type);
    set(&mut c.city, &tc.city);
    set(&mut c.state, &tc.state);
    set(&mut c.country, &tc.country);
    set(&mut c.region, &tc.region);
    set(&mut c.complex_name, &tc.complex_name);
    set(&mut c.cloud_owner, &tc.cloud_owner);
    set(&mut c.cloud_region_version, &tc.cloud_region_version);
    set(&mut c.physical_location_id, &tc.physical_location_id);
    if tc.cost.is_some() {
        c.cost = tc.cost;
    }
    if let Some(p) = tc.coordinate {
        c.latitude = Some(p.latitude);
        c.longitude = Some(p.longitude);
    }
    c
}

fn ids(cs: &[TCandidate]) -> Vec<CandidateId> {
    cs.iter()
        .flat_map(|c| c.candidate_id.iter().map(|s| CandidateId::new(s.as_str())))
        .collect()
}

/// Filtering attributes HAS uses only to find service instances; on a cloud demand (OSDF
/// sends them there too) they select nothing.
const SERVICE_ONLY_FILTERS: [&str; 4] = [
    "service-type",
    "equipment-role",
    "model-invariant-id",
    "model-version-id",
];

fn requirement(
    demand: &str,
    r: &Requirement,
    provider: &dyn InventoryProvider,
) -> Result<DemandRequirement, Vec<String>> {
    let mut problems = Vec::new();
    let ty = match r.inventory_type {
        Some(t) => inventory_type(t, demand).unwrap_or_else(|e| {
            problems.push(e);
            InventoryType::Cloud
        }),
        None => InventoryType::Cloud,
    };
    let mut req =
        DemandRequirement::new(demand, r.inventory_provider.clone().unwrap_or_default(), ty);
    // HAS looks up cloud regions whatever `service_type`/`service_id` say (OSDF sends them on
    // every demand); they select existing service instances only.
    if ty != InventoryType::Cloud {
        req.service_type.clone_from(&r.service_type);
        req.service_id.clone_from(&r.service_id);
    }
    req.default_cost = r.default_cost;
    for (k, v) in r.attributes.iter().chain(&r.filtering_attributes) {
        if ty == InventoryType::Cloud && SERVICE_ONLY_FILTERS.contains(&k.as_str()) {
            continue;
        }
        match attr_filter(demand, k, v) {
            Ok(Some(f)) => {
                req.attributes.insert(k.clone(), f);
            }
            Ok(None) => {}
            Err(e) => problems.push(e),
        }
    }
    // HAS: a demand's `region` is a cloud region id, its `complex` a complex (CLLI) id.
    for (key, v) in [
        ("location_id", &r.region),
        ("physical_location_id", &r.complex),
    ] {
        if let Some(v) = v {
            req.attributes.insert(
                key.to_owned(),
                AttrFilter::Eq(berth_inventory::AttrValue::Str(v.clone())),
            );
        }
    }
    req.required_candidates = ids(&r.required_candidates);
    req.excluded_candidates = ids(&r.excluded_candidates);
    req.existing_placement = r
        .existing_placement
        .as_ref()
        .and_then(|c| c.candidate_id.first())
        .map(|s| CandidateId::new(s.as_str()));
    for tc in &r.candidates {
        for id in &tc.candidate_id {
            req.candidates.push(candidate(tc, id, ty, provider));
        }
    }
    if problems.is_empty() {
        Ok(req)
    } else {
        Err(problems)
    }
}

/// Resolves every demand through the provider and locates every location it can.
pub(crate) fn resolve(
    template: &Template,
    provider: &dyn InventoryProvider,
) -> Result<Resolution, EngineError> {
    let mut problems = Vec::new();
    let mut space = Space::default();
    let mut inventory = Vec::new();
    let mut unique = Vec::new();
    for (d, demand) in template.demands.values().enumerate() {
        let mut kept: Vec<Arc<Candidate>> = Vec::new();
        let mut kept_ids: BTreeSet<CandidateId> = BTreeSet::new();
        let mut removed: Vec<(CandidateId, String)> = Vec::new();
        let mut existing = None;
        for r in &demand.requirements {
            let req = match requirement(&demand.name, r, provider) {
                Ok(req) => req,
                Err(mut e) => {
                    problems.append(&mut e);
                    continue;
                }
            };
            let resolved = provider
                .resolve_demand(&req)
                .map_err(|e| EngineError::Unavailable {
                    message: format!("inventory provider failed on demand `{}`: {e}", demand.name),
                })?;
            if existing.is_none() {
                existing = req.existing_placement.clone();
            }
            for c in resolved.candidates {
                if kept_ids.insert(c.candidate_id.clone()) {
                    kept.push(c);
                }
            }
            for r in resolved.removed.iter() {
                removed.push((r.candidate_id().clone(), kind_name(r.kind()).to_owned()));
            }
        }
        // A candidate kept by one requirement is not removed; report each removal once.
        let mut seen = BTreeSet::new();
        removed.retain(|(id, _)| !kept_ids.contains(id) && seen.insert(id.clone()));
        if demand.requirements.iter().any(|r| r.unique == Some(true)) {
            unique.push(d);
        }
        inventory.push((kept.len() + removed.len(), removed));
        space.demands.push(DemandSpace {
            name: demand.name.clone(),
            candidates: kept,
            existing,
        });
    }
    if !problems.is_empty() {
        return Err(EngineError::InvalidInput { problems });
    }
    let mut located = BTreeMap::new();
    for (name, loc) in &template.locations {
        let at = loc
            .coordinate
            .map(|c| (c.latitude, c.longitude))
            .or_else(|| {
                loc.host_name
                    .as_deref()
                    .and_then(|h| provider.locate_host(h))
                    .map(|c| (c.latitude, c.longitude))
            })
            .or_else(|| {
                loc.clli_code
                    .as_deref()
                    .and_then(|h| provider.locate_clli(h))
                    .map(|c| (c.latitude, c.longitude))
            });
        if let Some(at) = at {
            located.insert(name.clone(), at);
        }
    }
    space.locations = located;
    Ok(Resolution {
        space,
        inventory,
        unique,
    })
}
