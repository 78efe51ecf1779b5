//! Built-in constraint plugins: a homing template's constraints and objective, lowered onto
//! the solver's [`berth_solver::Problem`] over a [`Space`] of inventory candidates.
//!
//! Key types and functions:
//! - [`Space`] / [`DemandSpace`]: one solver variable per demand (template order), one value
//!   per candidate (after inventory filtering); located [`Space::locations`].
//! - [`Environment`]: what some constraints consult: the [`berth_inventory::InventoryProvider`]
//!   (licenses), registered [`berth_inventory::ServiceController`]s, an optional
//!   [`berth_topology::Topology`], a [`LatencyModel`], the existing-placement bonus.
//! - [`lower`]: every constraint and the objective at once, into a [`Lowered`] problem, or
//!   every [`ConstraintError`].
//! - Plugins of the solver's `Constraint` trait written here: [`CommonGroup`] (inventory
//!   groups, a candidate may be in several) and [`ControllerFit`] (shared fit judged by a
//!   registered controller). The rest use the solver's built-ins: `Filter` for unary rules,
//!   `Pairwise` for demand pairs, `SameGroup` / `AllDifferentGroup` for zones, `AtMostCount`
//!   for licenses, `Capacity` for the built-in fit rule.
//!
//! Semantics (each template constraint becomes solver constraints named after it, so the
//! triage says which constraint removed which candidate):
//! - `attribute`: as HAS, an attribute wanted as `""` is not checked, and `complex`,
//!   `cloud_version`, `cloud-region` fall back to the complex name, region version and region
//!   id; every operator of every attribute must pass; a missing attribute fails
//!   every operator but `ne`; regexes compile with the template's size limit (linear time).
//!   `threshold`: numbers compared in the check's unit, strings such as `25 ms` converted.
//! - `distance_to_location`, `distance_between_demands` (every pair, both ways):
//!   great-circle distance with mean Earth radius 6371.0088 km; candidates without
//!   coordinates fail.
//! - `zone`: key per category from the candidate's zones; `same` = one common key (unknown
//!   zones fail), `different` = pairwise distinct keys (unknown zones fail); with a location
//!   (country only) each demand is compared with the location's placemark country.
//! - `inventory_group`: the first two demands listed (seed 000: pairs only, a longer list
//!   uses its first two, which the template loader warns about, naming the rest); their
//!   candidates share at least one group.
//! - `instance_fit` / `region_fit` / `vim_fit` / `service`: `request` is amounts per
//!   dimension: `vcpu` (also `vCPU`, `cores`), `ram_mib` (`Memory`) and `disk_gib` (`Storage`)
//!   take HAS's multicloud shape `{quantity, unit}` (a bare number is GB), converted exactly
//!   and rounded up to whole base units; other keys are plain counts of the dimension they name.
//!   A registered controller judges alone and summed loads; otherwise the built-in
//!   rule: every fit constraint's requests add up per demand, and the demands placed on one
//!   candidate must fit its advertised `capacity` together.
//! - `license`: at most `available` demands use a new license; a demand staying on its
//!   existing placement, or on a candidate whose `licenses` attribute lists the id, uses none.
//! - `network_between_demands` / `network_to_location`: over the topology when both ends are
//!   topology leaves (latency and bottleneck bandwidth of the path), else distance plus the
//!   latency model; bandwidth without a topology, or latency with neither, is an error.
//! - `capability` / `capacity` (Heat): the servers' flavors must be offered (and, for
//!   `capacity`, their summed vCPUs and memory fit the candidate). `hpa`: per requirement set
//!   the best flavor meeting the mandatory features; optional features add their scores.
//! - Objective: `distance_between`, `latency_between`, `cost`, `hpa_score`, `aic_version`,
//!   `attribute`; `latency_between` without a topology or latency model is the air distance
//!   (HAS's latency score); `hpa_score` counts negatively under `minimize` (as HAS: higher is better);
//!   constant factors of a product become term weights. Candidates a function
//!   cannot score are filtered under the name `optimization`. Cost is used only where the
//!   objective names it.
//!
//! Invariants: lowering is deterministic (ordered maps, template order); nothing here
//! panics on any input; every constraint added is named after the template constraint.

mod attribute;
mod error;
mod fit;
pub mod geo;
mod group;
mod heat;
mod hpa;
mod lower;
mod objective;
mod request;
mod space;

pub use attribute::{attr_value, number};
pub use error::ConstraintError;
pub use fit::ControllerFit;
pub use group::{CommonGroup, GroupSets};
pub use heat::{flavor_size, stack_flavors};
pub use hpa::{HpaMatch, flavor_score, match_candidate};
pub use lower::{Lowered, lower};
pub use objective::{OBJECTIVE, aic_version};
pub use request::{RequestKey, parse_request, request_dimensions, request_keys};
pub use space::{DemandSpace, Environment, LatencyModel, Space};
