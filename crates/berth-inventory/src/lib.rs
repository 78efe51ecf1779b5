//! Candidates, inventory providers and service controllers: the world the solver places into.
//!
//! Key types:
//! - [`Candidate`]: seed 000's candidate schema (a cloud region or an existing service
//!   instance, or one of HAS's slicing and transport kinds: see [`InventoryType`]) plus
//!   `attributes`, `zones` per [`ZoneCategory`], free `capacity` per dimension, HPA
//!   [`Flavor`]s, inventory `groups` and an optional topology vertex.
//! - [`Inventory`]: an inventory document loaded from YAML or JSON through `berth-doc`,
//!   reporting every problem at once with a field path and line:column.
//! - [`InventoryProvider`]: resolves a [`DemandRequirement`] into a [`Resolved`] set of
//!   candidates with the triage of removed ones, locates `host_name` / `clli_code`
//!   locations, lists inventory group members and licenses. [`StaticProvider`] serves an
//!   [`Inventory`], indexed by inventory type and provider name, with the candidates'
//!   attribute values interned so a filter judges each distinct value once per demand.
//! - [`resolve_from`] filters a pool for a requirement; [`DemandFilter`] is a requirement's
//!   filters compiled once (attribute names resolved, wanted values in canonical form) for
//!   providers that walk their own candidates.
//! - [`ServiceController`]: `instance_fit` / `region_fit` / `vim_fit` checks and
//!   all-or-nothing reservations; [`CapacityController`] checks candidates' `capacity`.
//!
//! Invariants:
//! - Candidate ids are unique within an inventory; coordinates are in range; capacities,
//!   costs and license counts are non-negative.
//! - Capacity keys go through the dimension registry (`berth_units::dimension`): a loaded
//!   candidate's `capacity` is keyed by canonical names (`vcpus: 16` and `VCPU: 16` are
//!   `vcpu`), amounts in base units (`ram: 16 GB` is `ram_mib: 16384`); two keys of one
//!   dimension are an error; keys naming no registered dimension are kept as written and
//!   reported by [`Inventory::capacity_warnings`] when no request uses them. Flavor sizes
//!   ([`Flavor::size`]) are read the same way.
//! - Zones `region`, `complex` and `country` default from the candidate's `region`,
//!   `complex_name` and `country` fields unless given explicitly.
//! - Resolution is deterministic: candidates keep inventory order, and every candidate of
//!   the requirement's provider and type is either kept or listed as removed with a reason.
//! - Kept and removed candidates are `Arc`s shared with the provider; resolution copies a
//!   candidate only to fill in the requirement's `default_cost` (or zone defaults a pool
//!   lacked). [`Removals`] record each failed check compactly (a position and a check) and
//!   spell out the same [`RemovalReason`] the per-candidate [`check_filters`] gives.
//! - A failed reservation leaves no capacity reserved.
//!
//! Modules read top-down, each importing only those before it: `ids`, `error`, `model`,
//! `filter`, `load`, `provider`, `controller`.
//!
//! No IO and no clock: documents come in as text; a `topology_file` is only a path for the
//! caller to read.
//!
//! ```
//! use berth_inventory::{DemandRequirement, InventoryProvider, InventoryType, StaticProvider};
//!
//! let provider = StaticProvider::parse(
//!     "candidates:\n  - {candidate_id: dfw1, inventory_type: cloud, cloud_owner: aws}\n",
//! )?;
//! let req = DemandRequirement::new("vG", "aai", InventoryType::Cloud);
//! let resolved = provider.resolve_demand(&req)?;
//! assert_eq!(resolved.candidates.len(), 1);
//! # Ok::<(), berth_inventory::InventoryError>(())
//! ```

mod controller;
mod error;
mod filter;
mod ids;
mod load;
mod model;
mod provider;

pub use controller::{
    CapacityController, FitResult, ReservationItem, ReservationToken, ServiceController, Shortfall,
};
pub use error::InventoryError;
pub use filter::{
    AttrFilter, DemandFilter, DemandRequirement, ExistingPlacement, PlacementStatus, PoolEntry,
    Removal, RemovalKind, RemovalReason, Removals, Resolved, check_filters, resolve_from,
};
pub use load::{CapacityKey, Inventory, is_clli};
pub use model::{
    AttrValue, BASIC_CAPABILITIES, Candidate, CandidateId, Coordinates, Flavor, HpaAttribute,
    HpaCapability, InventoryType, LicenseInfo, ZoneCategory,
};
pub use provider::{InventoryProvider, StaticProvider};
