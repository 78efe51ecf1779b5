//! Claims: what Berth should hold in Placement for its reservations (pure), as allocations of
//! consumers whose UUIDs Berth derives from the reservation, so it recognises its own.

use std::collections::BTreeMap;

use berth_calendar::{Calendar, ProviderId, ReservationQuery, ReservationState};

use crate::names::{fnv64, resource_class};

/// The first 12 hex digits of every consumer UUID Berth writes: `be27be27-be27-…`.
const MARKER: &str = "be27be27-be27-";

/// The consumer UUID of reservation `record` (qualified id, `r4` or `zone-a:r4`) of
/// deployment `scope` (the stream name): the marker, then 80 bits of a hash, so the same
/// reservation always has the same consumer and Berth's consumers are told apart from
/// Nova's random ones (a random UUID starts with the marker once in 2^48).
pub fn consumer_id(scope: &str, record: &str) -> String {
    let key = format!("berth:{scope}:{record}");
    let a = fnv64(key.as_bytes(), 0xcbf2_9ce4_8422_2325);
    let b = fnv64(key.as_bytes(), 0x8422_2325_cbf2_9ce4);
    // 20 hex digits: 4 from the top of `a`, 16 from `b`.
    let h = format!("{:04x}{:016x}", a >> 48, b);
    format!("{MARKER}{}-{}-{}", &h[..4], &h[4..8], &h[8..])
}

/// Whether a consumer UUID is one Berth writes.
pub fn is_berth_consumer(uuid: &str) -> bool {
    uuid.len() == 36 && uuid.starts_with(MARKER)
}

/// One claim Berth should hold: a reservation's unallocated rest on one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The reservation, qualified (`r4`, `zone-a:r4`).
    pub record: String,
    /// The host (the pool's zone, a resource provider's name).
    pub host: String,
    /// Units per resource class.
    pub resources: BTreeMap<String, u64>,
}

/// The claims of every active reservation of `provider` in `cal` (partition `partition`),
/// by consumer UUID: the reservation's remaining amounts (what it holds and its instances do
/// not, since Nova holds theirs) in Placement's resource classes. Dimensions without a
/// resource class (`instances`) are left out; reservations whose rest is zero hold nothing.
pub fn desired(
    cal: &Calendar,
    provider: &str,
    partition: Option<&str>,
    scope: &str,
) -> BTreeMap<String, Claim> {
    let q = ReservationQuery {
        provider: Some(ProviderId::new(provider)),
        states: [ReservationState::Active].into(),
        ..ReservationQuery::default()
    };
    let mut out = BTreeMap::new();
    for r in cal.query_reservations(&q) {
        let resources: BTreeMap<String, u64> = r
            .remaining
            .iter()
            .filter(|(_, v)| **v > 0)
            .filter_map(|(d, v)| resource_class(&d.0).map(|rc| (rc, *v)))
            .collect();
        if resources.is_empty() {
            continue;
        }
        let record = berth_service::qualify(partition, r.id);
        out.insert(
            consumer_id(scope, &record),
            Claim {
                record,
                host: r.pool.zone.0.clone(),
                resources,
            },
        );
    }
    out
}

/// What to write to bring Placement's Berth consumers in line with `desired`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClaimPlan {
    /// Consumers to write (new, or holding something else).
    pub put: Vec<String>,
    /// Consumers to remove (their reservation ended, was cancelled or is gone).
    pub delete: Vec<String>,
}

/// Compares `desired` with what Berth's consumers hold now (`held`: consumer -> host ->
/// resources, as read from the providers' allocations).
pub fn plan(
    desired: &BTreeMap<String, Claim>,
    held: &BTreeMap<String, BTreeMap<String, BTreeMap<String, u64>>>,
) -> ClaimPlan {
    let mut out = ClaimPlan::default();
    for (c, claim) in desired {
        let want: BTreeMap<String, BTreeMap<String, u64>> =
            [(claim.host.clone(), claim.resources.clone())].into();
        if held.get(c) != Some(&want) {
            out.put.push(c.clone());
        }
    }
    for c in held.keys() {
        if !desired.contains_key(c) {
            out.delete.push(c.clone());
        }
    }
    out
}

/// Checks `amount` of `rc` against a provider's inventory rules, as Placement will:
/// within `min_unit..=max_unit` and a multiple of `step_size`.
pub fn check_units(rc: &str, amount: u64, inv: &crate::wire::Inventory) -> Result<(), String> {
    let max = inv.max_unit.unwrap_or(inv.total);
    if amount < inv.min_unit {
        return Err(format!(
            "{rc} {amount} is below min_unit {}; expected at least {}",
            inv.min_unit, inv.min_unit
        ));
    }
    if amount > max {
        return Err(format!(
            "{rc} {amount} is above max_unit {max}; expected at most {max} in one allocation"
        ));
    }
    if inv.step_size > 1 && !amount.is_multiple_of(inv.step_size) {
        return Err(format!(
            "{rc} {amount} is not a multiple of step_size {}",
            inv.step_size
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
