//! The inventory provider trait and the built-in static provider backed by an inventory file.

use std::collections::BTreeMap;

use crate::error::InventoryError;
use crate::filter::{DemandRequirement, Resolved, resolve_from};
use crate::load::Inventory;
use crate::model::{Candidate, CandidateId, Coordinates, LicenseInfo};

/// A source of candidates and locations. Sync and object-safe, so the core needs no async
/// runtime; a remote provider can block or serve from a cache filled ahead of time.
pub trait InventoryProvider: Send + Sync {
    /// Resolves one requirement of a demand into candidates plus the triage of removals.
    fn resolve_demand(&self, req: &DemandRequirement) -> Result<Resolved, InventoryError>;

    /// Coordinates of a `host_name` location.
    fn locate_host(&self, host_name: &str) -> Option<Coordinates>;

    /// Coordinates of a `clli_code` location.
    fn locate_clli(&self, clli_code: &str) -> Option<Coordinates>;

    /// Candidate ids in an inventory group, in inventory order; empty if unknown.
    fn group_members(&self, group_id: &str) -> Vec<CandidateId>;

    /// License availability of a software id.
    fn license(&self, software_id: &str) -> Option<LicenseInfo>;

    /// One candidate by id, whatever demand it may serve.
    fn candidate(&self, id: &str) -> Option<Candidate>;
}

/// The built-in provider serving an [`Inventory`] loaded from a file.
///
/// It answers for every provider name, except that a candidate naming its
/// `inventory_provider` is served only under that name.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticProvider {
    inventory: Inventory,
    groups: BTreeMap<String, Vec<CandidateId>>,
}

impl StaticProvider {
    /// Serves `inventory`.
    pub fn new(inventory: Inventory) -> Self {
        let mut groups: BTreeMap<String, Vec<CandidateId>> = BTreeMap::new();
        for c in inventory.candidates.values() {
            for g in &c.groups {
                groups
                    .entry(g.clone())
                    .or_default()
                    .push(c.candidate_id.clone());
            }
        }
        Self { inventory, groups }
    }

    /// Parses an inventory document (YAML or JSON) and serves it.
    pub fn parse(text: &str) -> Result<Self, InventoryError> {
        Inventory::parse(text).map(Self::new)
    }

    /// Builds a provider from candidates alone; errors on a duplicate id.
    pub fn from_candidates(
        candidates: impl IntoIterator<Item = Candidate>,
    ) -> Result<Self, InventoryError> {
        let mut inv = Inventory::default();
        for mut c in candidates {
            c.apply_zone_defaults();
            if inv.candidates.contains_key(&c.candidate_id) {
                return Err(InventoryError::DuplicateCandidate {
                    candidate_id: c.candidate_id,
                });
            }
            inv.candidates.insert(c.candidate_id.clone(), c);
        }
        Ok(Self::new(inv))
    }

    /// The inventory served.
    pub fn inventory(&self) -> &Inventory {
        &self.inventory
    }

    /// All candidates in document order.
    pub fn candidates(&self) -> impl Iterator<Item = &Candidate> {
        self.inventory.candidates.values()
    }

    /// The inline topology, if any.
    pub fn topology(&self) -> Option<&berth_topology::Topology> {
        self.inventory.topology.as_ref()
    }

    /// The topology file path, if any.
    pub fn topology_file(&self) -> Option<&str> {
        self.inventory.topology_file.as_deref()
    }

    /// Inventory group ids and their members.
    pub fn groups(&self) -> &BTreeMap<String, Vec<CandidateId>> {
        &self.groups
    }
}

impl InventoryProvider for StaticProvider {
    fn resolve_demand(&self, req: &DemandRequirement) -> Result<Resolved, InventoryError> {
        let pool = self
            .inventory
            .candidates
            .values()
            .filter(|c| c.inventory_type == req.inventory_type)
            .filter(|c| c.served_by(&req.inventory_provider));
        Ok(resolve_from(req, pool))
    }

    fn locate_host(&self, host_name: &str) -> Option<Coordinates> {
        self.inventory.host_locations.get(host_name).copied()
    }

    fn locate_clli(&self, clli_code: &str) -> Option<Coordinates> {
        self.inventory
            .clli_locations
            .get(clli_code)
            .copied()
            .or_else(|| {
                // Fall back to a candidate sited at that CLLI code.
                self.inventory
                    .candidates
                    .values()
                    .filter(|c| c.physical_location_id.as_deref() == Some(clli_code))
                    .find_map(Candidate::coordinates)
            })
    }

    fn group_members(&self, group_id: &str) -> Vec<CandidateId> {
        self.groups.get(group_id).cloned().unwrap_or_default()
    }

    fn license(&self, software_id: &str) -> Option<LicenseInfo> {
        self.inventory.licenses.get(software_id).copied()
    }

    fn candidate(&self, id: &str) -> Option<Candidate> {
        self.inventory.candidates.get(id).cloned()
    }
}

#[cfg(test)]
mod tests;
