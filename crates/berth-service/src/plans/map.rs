//! Where a plan's points lie, for the console's map: the template's locations and, per demand,
//! the chosen candidate and the candidates the triage removed, with the inventory's
//! coordinates. Points without coordinates are left out.

use berth_inventory::InventoryProvider;
use berth_template::Template;
use serde_json::{Value, json};

/// `outcome` with `map: {locations: [{name, latitude, longitude}], candidates: [{id, demand,
/// latitude, longitude, chosen, removed}]}` (`removed`: the constraint that removed it, or
/// `null`), when any point has coordinates.
pub(super) fn with_map(
    mut outcome: Value,
    template: &Template,
    inv: &dyn InventoryProvider,
) -> Value {
    let mut locations = Vec::new();
    for (name, l) in &template.locations {
        let at = l
            .coordinate
            .as_ref()
            .map(|c| (c.latitude, c.longitude))
            .or_else(|| {
                let host = l.host_name.as_deref().and_then(|h| inv.locate_host(h));
                let clli = || l.clli_code.as_deref().and_then(|c| inv.locate_clli(c));
                host.or_else(clli).map(|c| (c.latitude, c.longitude))
            });
        if let Some((latitude, longitude)) = at {
            locations.push(json!({"name": name, "latitude": latitude, "longitude": longitude}));
        }
    }
    let mut candidates = Vec::new();
    for demand in template.demands.keys() {
        let chosen = outcome["solutions"][0]["placements"][demand]["candidate_id"]
            .as_str()
            .map(|c| (c.to_owned(), None));
        let removed = outcome["triage"][demand]["removed"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(c, why)| (c.clone(), why.as_str().map(str::to_owned)));
        for (id, why) in chosen.into_iter().chain(removed) {
            let Some(c) = inv.candidate(&id) else {
                continue;
            };
            let (Some(latitude), Some(longitude)) = (c.latitude, c.longitude) else {
                continue;
            };
            candidates.push(json!({
                "id": id, "demand": demand, "latitude": latitude, "longitude": longitude,
                "chosen": why.is_none(), "removed": why,
            }));
        }
    }
    if let Some(o) = outcome.as_object_mut()
        && !(locations.is_empty() && candidates.is_empty())
    {
        o.insert(
            "map".into(),
            json!({"locations": locations, "candidates": candidates}),
        );
    }
    outcome
}
