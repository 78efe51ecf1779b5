//! What the plugins lower against: the demands' candidates, located locations, and the
//! services (provider, controllers, topology, latency model) some constraints consult.

use std::collections::BTreeMap;
use std::sync::Arc;

use berth_inventory::{Candidate, CandidateId, InventoryProvider, ServiceController};
use berth_topology::{LeafId, Topology};

use crate::geo::Point;

/// The search space: one variable per demand, one value per candidate.
#[derive(Debug, Clone, Default)]
pub struct Space {
    /// Demands in template order; index = solver variable.
    pub demands: Vec<DemandSpace>,
    /// Coordinates of every location that could be located, by name.
    pub locations: BTreeMap<String, (f64, f64)>,
}

/// One demand's candidates after inventory filtering.
#[derive(Debug, Clone, Default)]
pub struct DemandSpace {
    /// The demand's name.
    pub name: String,
    /// Candidates in order; index = solver value. Shared with the inventory provider's
    /// resolution, so a large inventory is not copied per demand.
    pub candidates: Vec<Arc<Candidate>>,
    /// The demand's current placement, if it has one.
    pub existing: Option<CandidateId>,
}

impl Space {
    /// The variable index of a demand.
    pub fn index(&self, demand: &str) -> Option<usize> {
        self.demands.iter().position(|d| d.name == demand)
    }
}

/// Network latency from geographic distance where no topology path is known:
/// `fixed_ms + km * ms_per_km` (one way).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyModel {
    /// Milliseconds per km of great-circle distance (fibre is about 0.005).
    pub ms_per_km: f64,
    /// Milliseconds added to every path (equipment, last mile).
    pub fixed_ms: f64,
}

impl LatencyModel {
    /// `ms_per_km` per km, nothing fixed.
    pub fn per_km(ms_per_km: f64) -> LatencyModel {
        LatencyModel {
            ms_per_km,
            fixed_ms: 0.0,
        }
    }

    /// Latency in ms over `km`.
    pub fn latency_ms(&self, km: f64) -> f64 {
        self.fixed_ms + km * self.ms_per_km
    }
}

/// Services the plugins consult while lowering.
#[derive(Clone)]
pub struct Environment<'a> {
    /// Inventory: licenses, groups.
    pub provider: &'a dyn InventoryProvider,
    /// Service controllers by name. A fit constraint naming a controller not listed here is
    /// judged by the built-in rule: candidates' advertised `capacity`, summed over demands.
    pub controllers: BTreeMap<String, Arc<dyn ServiceController>>,
    /// Network topology that candidates' `topology_node` (and location names) refer to.
    pub topology: Option<Arc<Topology>>,
    /// Latency from distance where no topology path exists.
    pub latency: Option<LatencyModel>,
    /// Objective bonus for keeping a demand on its existing placement (subtracted when
    /// minimizing, added when maximizing).
    pub existing_bonus: f64,
}

impl std::fmt::Debug for Environment<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Environment")
            .field("controllers", &self.controllers.keys().collect::<Vec<_>>())
            .field("topology", &self.topology.is_some())
            .field("latency", &self.latency)
            .field("existing_bonus", &self.existing_bonus)
            .finish_non_exhaustive()
    }
}

/// Per demand, per candidate: prepared coordinates and topology leaf.
pub(crate) struct Sites {
    pub(crate) points: Vec<Arc<[Option<Point>]>>,
    pub(crate) leaves: Vec<Arc<[Option<LeafId>]>>,
}

impl Sites {
    pub(crate) fn new(space: &Space, topology: Option<&Topology>) -> Sites {
        let points = space
            .demands
            .iter()
            .map(|d| {
                d.candidates
                    .iter()
                    .map(|c| c.coordinates().map(|p| Point::new(p.latitude, p.longitude)))
                    .collect()
            })
            .collect();
        let leaves = space
            .demands
            .iter()
            .map(|d| {
                d.candidates
                    .iter()
                    .map(|c| {
                        topology.and_then(|t| c.topology_node.as_deref().and_then(|n| t.leaf(n)))
                    })
                    .collect()
            })
            .collect();
        Sites { points, leaves }
    }
}
