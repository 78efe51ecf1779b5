//! Embedding Berth in an orchestrator's own code: its sites become inventory candidates, a
//! homing template is planned with `berth-engine` (no daemon, no runtime), and the chosen sites'
//! capacity is reserved in a `berth-calendar` the orchestrator keeps.

use std::error::Error;
use std::sync::Arc;

use berth_calendar::chrono::{DateTime, TimeDelta, TimeZone, Utc};
use berth_calendar::{
    Amounts, Calendar, CalendarError, CapacityChange, Policy, PoolKey, ReservationId,
    ReservationRequest,
};
use berth_engine::{FixedClock, PlanOptions, Status};
use berth_inventory::{Candidate, InventoryType, StaticProvider};

/// A site as the orchestrator knows it: its own type, not Berth's.
#[derive(Debug, Clone, Copy)]
pub struct Site {
    pub name: &'static str,
    pub latitude: f64,
    pub longitude: f64,
    /// Relative price of running there.
    pub cost: f64,
    /// vCPUs the orchestrator may hand out there.
    pub vcpus: u64,
}

/// The orchestrator's sites.
pub const SITES: &[Site] = &[
    Site {
        name: "dallas",
        latitude: 32.90,
        longitude: -97.04,
        cost: 10.0,
        vcpus: 16,
    },
    Site {
        name: "houston",
        latitude: 29.76,
        longitude: -95.37,
        cost: 8.0,
        vcpus: 64,
    },
    Site {
        name: "chicago",
        latitude: 41.88,
        longitude: -87.63,
        cost: 6.0,
        vcpus: 64,
    },
    Site {
        name: "newark",
        latitude: 40.74,
        longitude: -74.17,
        cost: 5.0,
        vcpus: 128,
    },
];

/// The service to home: a firewall and a router near a customer in Dallas, at most 400 km
/// apart; nearest to the customer first.
pub const TEMPLATE: &str = "
homing_template_version: 2017-10-10
locations:
  customer: {latitude: 32.78, longitude: -96.80}
demands:
  vfw: [{inventory_provider: aai, inventory_type: cloud}]
  vrouter: [{inventory_provider: aai, inventory_type: cloud}]
constraints:
  close_pair:
    type: distance_between_demands
    demands: [vfw, vrouter]
    properties: {distance: < 400 km}
optimization:
  minimize:
    sum:
      - {distance_between: [customer, vfw]}
      - {distance_between: [customer, vrouter]}
";

/// vCPUs each demand needs.
pub const VCPUS_PER_DEMAND: u64 = 8;

/// The orchestrator's provider name for its pools: one pool per site.
pub const PROVIDER: &str = "orchestrator";

/// What the run decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Demand -> site, in template order.
    pub placements: Vec<(String, String)>,
    /// The plan's objective (total km to the customer) and whether it is proven optimal.
    pub objective: f64,
    pub optimal: bool,
    /// Demand -> reservation made for it at its site.
    pub reservations: Vec<(String, ReservationId)>,
    /// Another 8 vCPUs at the first site in the same window: the calendar's counter-offer
    /// (the most reservable in that window, the earliest start of the full amount).
    pub offer: Option<(u64, Option<DateTime<Utc>>)>,
}

fn candidates(sites: &[Site]) -> Vec<Candidate> {
    sites
        .iter()
        .map(|s| {
            let mut c = Candidate::new(s.name, InventoryType::Cloud);
            c.latitude = Some(s.latitude);
            c.longitude = Some(s.longitude);
            c.cost = Some(s.cost);
            c.location_id = Some(s.name.to_owned());
            c.cloud_owner = Some(PROVIDER.to_owned());
            c
        })
        .collect()
}

/// Plans [`TEMPLATE`] over [`SITES`], then reserves each placement's vCPUs for a day starting
/// in an hour, and asks for 8 more at the first placement's site to show a conflict's offer.
pub fn run(now: DateTime<Utc>) -> Result<Report, Box<dyn Error>> {
    let inventory = StaticProvider::from_candidates(candidates(SITES))?;
    let template = berth_template::load(TEMPLATE, &Default::default())
        .map_err(|diags| format!("invalid template: {diags:?}"))?;
    // A fixed clock: no deadline cuts the search, so the same input gives the same plan.
    let opts = PlanOptions {
        clock: Some(Arc::new(FixedClock)),
        ..PlanOptions::default()
    };
    let outcome = berth_engine::plan(&template, &inventory, &opts)?;
    if outcome.status != Status::Solved {
        return Err(format!("no plan: {}", outcome.message).into());
    }
    let best = &outcome.solutions[0];
    let placements: Vec<(String, String)> = best
        .placements
        .iter()
        .map(|(demand, p)| {
            let site = p
                .get("candidate_id")
                .and_then(|v| v.as_str())
                .unwrap_or_default();
            (demand.clone(), site.to_owned())
        })
        .collect();

    let mut calendar = Calendar::new(Policy::default());
    for s in SITES {
        calendar.increase_capacity(
            CapacityChange {
                pool: PoolKey::new(s.name, PROVIDER),
                start: now,
                end: None,
                amounts: Amounts::new().with("vcpu", s.vcpus),
            },
            now,
        )?;
    }
    let (start, end) = (now + TimeDelta::hours(1), now + TimeDelta::hours(25));
    let mut reservations = Vec::new();
    for (demand, site) in &placements {
        let request =
            ReservationRequest::new(site.as_str(), Amounts::new().with("vcpu", VCPUS_PER_DEMAND))
                .provider(PROVIDER)
                .window(start, end);
        let (id, _) = calendar.create_reservation(request, now)?;
        reservations.push((demand.clone(), id));
    }
    let more = ReservationRequest::new(
        placements[0].1.as_str(),
        Amounts::new().with("vcpu", VCPUS_PER_DEMAND),
    )
    .provider(PROVIDER)
    .window(start, end);
    let offer = match calendar.create_reservation(more, now) {
        Ok(_) => None,
        Err(CalendarError::Conflict(c)) => c
            .offers
            .first()
            .map(|o| (o.max_reservable.get("vcpu"), o.earliest_start)),
        Err(e) => return Err(e.into()),
    };
    Ok(Report {
        placements,
        objective: best.objective,
        optimal: outcome.optimal,
        reservations,
        offer,
    })
}

/// The instant the example starts at (fixed, so its output is the same on every run).
pub fn example_now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_else(Utc::now)
}

#[cfg(test)]
mod tests;
