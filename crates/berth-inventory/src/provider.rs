//! The inventory provider trait and the built-in static provider backed by an inventory file.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::error::InventoryError;
use crate::filter::{
    DemandFilter, DemandRequirement, PoolEntry, Removals, Resolved, Triage, resolve_from,
};
use crate::load::Inventory;
use crate::model::{Candidate, CandidateId, Coordinates, InventoryType, LicenseInfo};

mod index;

use index::AttrIndex;

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

    /// Whether the provider can serve inventory type `ty` under the provider name
    /// `provider` at all; a demand no provider serves is an error, not an empty answer.
    fn serves(&self, provider: &str, ty: InventoryType) -> bool {
        let _ = (provider, ty);
        true
    }
}

/// The built-in provider serving an [`Inventory`] loaded from a file.
///
/// It answers for every provider name, except that a candidate naming its
/// `inventory_provider` is served only under that name.
///
/// Resolution walks only the candidates a requirement can draw from: candidates are indexed
/// by inventory type and provider name, and shared (`Arc`) with the [`Resolved`] sets.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticProvider {
    inventory: Inventory,
    groups: BTreeMap<String, Vec<CandidateId>>,
    /// The inventory's candidates in document order, zone defaults applied.
    shared: Arc<[Arc<Candidate>]>,
    /// Positions in `shared` per inventory type.
    pools: BTreeMap<InventoryType, Pools>,
    /// Attribute values of `shared`, by position.
    index: AttrIndex,
}

/// Positions of one inventory type's candidates, ascending.
#[derive(Debug, Clone, PartialEq, Default)]
struct Pools {
    /// Candidates naming no provider: served under every name.
    open: Vec<usize>,
    /// Candidates naming their provider.
    named: BTreeMap<String, Vec<usize>>,
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
        let mut shared = Vec::with_capacity(inventory.candidates.len());
        let mut pools: BTreeMap<InventoryType, Pools> = BTreeMap::new();
        for (i, c) in inventory.candidates.values().enumerate() {
            let mut c = c.clone();
            // Kept candidates carry zone defaults; applying them once here lets resolution
            // share the candidate instead of copying it.
            c.apply_zone_defaults();
            let pool = pools.entry(c.inventory_type).or_default();
            match &c.inventory_provider {
                None => pool.open.push(i),
                Some(p) => pool.named.entry(p.clone()).or_default().push(i),
            }
            shared.push(Arc::new(c));
        }
        let index = AttrIndex::new(shared.iter().map(|c| &**c));
        Self {
            inventory,
            groups,
            shared: shared.into(),
            pools,
            index,
        }
    }

    /// The candidates of type `ty` served under the provider name `provider`, in inventory
    /// order: the open ones merged with those naming `provider`.
    fn pool<'s>(&'s self, ty: InventoryType, provider: &str) -> impl Iterator<Item = Slot<'s>> {
        let (open, named): (&[usize], &[usize]) = match self.pools.get(&ty) {
            None => (&[], &[]),
            Some(p) => (&p.open, p.named.get(provider).map_or(&[], Vec::as_slice)),
        };
        Merge(open, named).filter_map(|pos| {
            self.shared
                .get(pos)
                .map(|candidate| Slot { pos, candidate })
        })
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
        if !req.candidates.is_empty() {
            // Predetermined candidates replace the inventory.
            return Ok(resolve_from(req, std::iter::empty::<&Candidate>()));
        }
        let filter = DemandFilter::new(req);
        let mut scan = self.index.scan(&filter);
        let removals = Removals::over(Arc::clone(&self.shared), filter.terms().clone());
        let mut triage = Triage::new(req, removals);
        // Id lists as inventory positions; ids the inventory lacks match no candidate.
        let position = |id: &CandidateId| self.inventory.candidates.get_index_of(id);
        let positions =
            |ids: &[CandidateId]| -> BTreeSet<usize> { ids.iter().filter_map(position).collect() };
        let excluded = positions(&req.excluded_candidates);
        let required = positions(&req.required_candidates);
        let existing = req.existing_placement.as_ref().and_then(position);
        for slot in self.pool(req.inventory_type, &req.inventory_provider) {
            // The index answers attribute filters without reading the candidate.
            let filtered = filter
                .service_cause(slot.candidate)
                .or_else(|| self.index.cause(&mut scan, slot.pos));
            let cause = triage.cause(
                filtered,
                existing == Some(slot.pos),
                || excluded.contains(&slot.pos),
                || required.contains(&slot.pos),
            );
            match cause {
                Some(cause) => triage.remove_at(slot.pos, cause),
                None => triage.keep(&slot),
            }
        }
        Ok(triage.finish())
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

    /// A static inventory serves every inventory type under every name, as HAS does: a
    /// type it holds no candidate of is an empty set (a demand without candidates, named
    /// in the triage), not a provider missing from the configuration.
    fn serves(&self, provider: &str, ty: InventoryType) -> bool {
        let _ = (provider, ty);
        true
    }
}

/// A candidate of the static provider and its position in the inventory.
struct Slot<'s> {
    pos: usize,
    candidate: &'s Arc<Candidate>,
}

impl PoolEntry for Slot<'_> {
    fn candidate(&self) -> &Candidate {
        self.candidate
    }
    fn share(&self) -> Arc<Candidate> {
        Arc::clone(self.candidate)
    }
    fn zone_defaults_applied(&self) -> bool {
        // `StaticProvider::new` applied them.
        true
    }
}

/// Merges two ascending position lists into one ascending sequence.
struct Merge<'a>(&'a [usize], &'a [usize]);

impl Iterator for Merge<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let take_first = match (self.0.first(), self.1.first()) {
            (Some(a), Some(b)) => a < b,
            (Some(_), None) => true,
            (None, _) => false,
        };
        let side = if take_first { &mut self.0 } else { &mut self.1 };
        let (&head, rest) = side.split_first()?;
        *side = rest;
        Some(head)
    }
}

#[cfg(test)]
mod tests;
