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
use crate::slicing;

/// The search space plus what the inventory removed and which demands are `unique`.
pub(crate) struct Resolution {
    pub(crate) space: Space,
    /// Per demand: candidates offered before any removal, and the inventory's removals.
    pub(crate) inventory: Vec<(usize, Vec<(CandidateId, String)>)>,
    /// Per demand whose inventory offered nothing: each requirement (by position) that drew
    /// on no candidate at all, with why (its inventory holds none of the type asked for).
    pub(crate) absent: Vec<Vec<(usize, String)>>,
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

/// The inventory's name for a template inventory type (every type has one).
fn inventory_type(t: TType) -> InventoryType {
    match t {
        TType::Cloud => InventoryType::Cloud,
        TType::Service => InventoryType::Service,
        TType::Transport => InventoryType::Transport,
        TType::Vfmodule => InventoryType::Vfmodule,
        TType::Nssi => InventoryType::Nssi,
        TType::Nsi => InventoryType::Nsi,
        TType::SliceProfiles => InventoryType::SliceProfiles,
        TType::Nst => InventoryType::Nst,
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
        .map(inventory_type)
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
    let ty = r
        .inventory_type
        .map_or(InventoryType::Cloud, inventory_type);
    let mut req =
        DemandRequirement::new(demand, r.inventory_provider.clone().unwrap_or_default(), ty);
    // HAS looks up cloud regions whatever `service_type`/`service_id` say (OSDF sends them on
    // every demand); they select existing service instances only.
    if ty != InventoryType::Cloud {
        req.service_type.clone_from(&r.service_type);
        req.service_id.clone_from(&r.service_id);
    }
    req.default_cost = r.default_cost;
    let generated = slicing::generates(ty, &r.filtering_attributes);
    let filtering = r.filtering_attributes.iter().filter(|_| !generated);
    for (k, v) in r.attributes.iter().chain(filtering) {
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
    // HAS: on a cloud demand `region` is a cloud region id and `complex` a complex (CLLI) id;
    // service and slicing candidates carry their own `region` / `complex_name`.
    let (region_key, complex_key) = if ty == InventoryType::Cloud {
        ("location_id", "physical_location_id")
    } else {
        ("region", "complex_name")
    };
    for (key, v) in [(region_key, &r.region), (complex_key, &r.complex)] {
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

/// A requirement no configured inventory provider serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unserved {
    /// The demand's name.
    pub demand: String,
    /// The requirement's position in the demand's list.
    pub requirement: usize,
    /// The inventory type asked for.
    pub inventory_type: InventoryType,
    /// The inventory provider name asked for (empty when none was given).
    pub provider: String,
}

impl Unserved {
    /// The field path of the requirement's `inventory_type`: `demands.vG[0].inventory_type`.
    pub fn path(&self) -> String {
        format!(
            "demands.{}[{}].inventory_type",
            self.demand, self.requirement
        )
    }

    /// What is wrong, without the path.
    pub fn message(&self) -> String {
        format!(
            "no configured inventory provider serves inventory type `{}` under provider `{}`; expected an inventory with candidates of that type",
            self.inventory_type, self.provider
        )
    }
}

impl std::fmt::Display for Unserved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path(), self.message())
    }
}

/// The requirements no provider serves, for demands none of whose requirements is served.
/// A demand with one served requirement is fine (the others just offer nothing, as in HAS);
/// generated slice profiles and explicit `candidates` need no provider.
pub fn unserved(template: &Template, provider: &dyn InventoryProvider) -> Vec<Unserved> {
    let mut out = Vec::new();
    for demand in template.demands.values() {
        let mut missing = Vec::new();
        for (i, r) in demand.requirements.iter().enumerate() {
            let ty = r
                .inventory_type
                .map_or(InventoryType::Cloud, inventory_type);
            let name = r.inventory_provider.as_deref().unwrap_or_default();
            if r.candidates.is_empty()
                && !slicing::generates(ty, &r.filtering_attributes)
                && !provider.serves(name, ty)
            {
                missing.push(Unserved {
                    demand: demand.name.clone(),
                    requirement: i,
                    inventory_type: ty,
                    provider: name.to_owned(),
                });
            }
        }
        if !demand.requirements.is_empty() && missing.len() == demand.requirements.len() {
            out.append(&mut missing);
        }
    }
    out
}

/// Resolves every demand through the provider and locates every location it can.
pub(crate) fn resolve(
    template: &Template,
    provider: &dyn InventoryProvider,
) -> Result<Resolution, EngineError> {
    let mut problems = Vec::new();
    let mut space = Space::default();
    let mut inventory = Vec::new();
    let mut absents = Vec::new();
    let mut unique = Vec::new();
    for (d, demand) in template.demands.values().enumerate() {
        let mut kept: Vec<Arc<Candidate>> = Vec::new();
        let mut kept_ids: BTreeSet<CandidateId> = BTreeSet::new();
        let mut removed: Vec<(CandidateId, String)> = Vec::new();
        let mut existing = None;
        let mut absent = Vec::new();
        for (ri, r) in demand.requirements.iter().enumerate() {
            let mut req = match requirement(&demand.name, r, provider) {
                Ok(req) => req,
                Err(mut e) => {
                    problems.append(&mut e);
                    continue;
                }
            };
            let path = format!("demands.{}[{ri}]", demand.name);
            if slicing::generates(req.inventory_type, &r.filtering_attributes) {
                match slicing::generate(
                    &demand.name,
                    &path,
                    r.inventory_provider.as_deref(),
                    &r.filtering_attributes,
                    &r.default_attributes,
                ) {
                    Ok(cs) if cs.is_empty() => continue,
                    Ok(cs) => req.candidates = cs,
                    Err(mut e) => {
                        problems.append(&mut e);
                        continue;
                    }
                }
            }
            let resolved = provider
                .resolve_demand(&req)
                .map_err(|e| EngineError::Unavailable {
                    message: format!("inventory provider failed on demand `{}`: {e}", demand.name),
                })?;
            if existing.is_none() {
                existing = req.existing_placement.clone();
            }
            if req.candidates.is_empty()
                && resolved.candidates.is_empty()
                && resolved.removed.is_empty()
            {
                absent.push((
                    ri,
                    format!(
                        "no candidate of inventory type `{}` under provider `{}` exists in the inventory",
                        req.inventory_type, req.inventory_provider
                    ),
                ));
            }
            for mut c in resolved.candidates {
                if kept_ids.insert(c.candidate_id.clone()) {
                    if !r.default_attributes.is_empty() {
                        slicing::with_defaults(Arc::make_mut(&mut c), &r.default_attributes);
                    }
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
        if !kept.is_empty() {
            absent.clear();
        }
        absents.push(absent);
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
        absent: absents,
        unique,
    })
}
