//! Datacenter placement of Heat policy templates (seed 004) onto a topology, at scale.
//!
//! A template's servers and volumes become [`Item`]s with demand vectors (flavors from the
//! topology's table or the [`Catalog`] side file; volumes by size on the volume dimension);
//! its policies, expanded by `berth_heat::Template::applications`, become [`Rule`]s over
//! location levels and the network tree. [`solve`] places every item on a leaf.
//!
//! # Key types
//! - [`Instance::from_template`] (or [`Instance::new`] for synthetic problems).
//! - [`solve`] with [`Options`]: greedy construction, then large-neighbourhood search.
//!   Construction (pack): policy-bound items first, in bundles (hop- and collocation-bound
//!   partners together), next fit over the open leaves within a share of each leaf's
//!   capacity (1.5 times their share of the demand) so they spread; then the policy-free
//!   items bin-centrically: one leaf at a time, each time the item closest to the leaf's free
//!   capacity in scarcity-weighted squared distance (a k-d tree over demand vectors, a
//!   bounded best-first search). Spread: cheapest leaf per item by decreasing size. Search:
//!   empty a light host / random related items, greedy repair; exact repair of small
//!   neighbourhoods through `berth-solver`; pack repairs find open leaves with room through
//!   a free-capacity segment tree (a bounded walk per item), so a neighbourhood costs O(its
//!   items), not O(all items). Anytime under an injected `berth_solver::Deadline` or an
//!   iteration budget, deterministic per seed and budget.
//!   Small instances are also solved exactly ([`ExactMode`]) so `optimal` can be claimed.
//! - [`check`]: the independent checker of every hard policy, and the cost terms
//!   ([`Report`]); [`solve`] reports through it, never through the search state.
//! - [`Explanation`]: why not everything is placed. Counting arguments run before any
//!   search (an item fitting no leaf, a dimension's total beyond the leaves', an LLMN needing
//!   more L1 places than can hold a member, a spread over more parts than places, members
//!   to collocate that no place holds together); each failing one is a proof, named by its
//!   policy ([`Reason`]), and the search is skipped. A completed exact search's conflict set
//!   is the proof otherwise. Every unplaced item gets a triage ([`ItemTriage`]): its leaves
//!   and what removes each (its fixed leaf, a dimension without room, the first hard policy
//!   it would break), given where the others are.
//! - Bounds: [`Instance::hosts_lower_bound`] (`None` when the demand exceeds every leaf
//!   together); a packing placement whose cost equals the bound times the objective weight
//!   is optimal and ends the search.
//! - [`Placement`]: the answer as JSON/table; [`render_svg`]: a rack diagram.
//! - [`roadef`]: the ROADEF/EURO 2012 machine reassignment benchmark (format, objective,
//!   independent checker, local search).
//! - [`synth`]: deterministic synthetic datacenters and workloads for benches and tests.
//!
//! # Semantics
//! - Capacity: per leaf, the placed demand fits in every dimension.
//! - Levels a leaf lacks: the location tree need not be of uniform depth, so a host may have
//!   no vertex of a policy's level above it (a PM outside any chassis). Such a host is at
//!   that level where its coarsest ancestor strictly finer than the level is, else where it
//!   is itself (`berth_topology::Topology::vertex_at_level`): it stands in for the missing
//!   vertex. Every leaf is thus in exactly one place per level, and two items on one leaf
//!   are together at every level. This keeps the seed's reading of anti-collocation at L
//!   ("differ at L, and thus at every finer level", the PM included) and of collocation at L
//!   ("the same at L, and thus at every coarser level"), and makes the two exact negations
//!   of each other.
//! - `OS::AntiCoLocation` / `OS::CoLocation` at level L: pairs from different parts (direct
//!   members of the group, or the two ends of a relationship) are in different places / the
//!   same place at L.
//! - LLMN (L1, L2, N) over M members: at most `ceil(M/N')` per place at L1, no two per place
//!   at L2, at least `N' = min(N, M)` places at L1. Soft violation = excess members plus the
//!   place deficit. [`policy_warnings`] says so when N > M, and when L2 is not finer than L1
//!   (`berth place` prints them at the policy's line:column).
//! - `OS::NetMaxHops`: network-tree path of at most N edges (0 = same leaf).
//! - `OS::NetBandwidth`: reserved on every edge of the pair's network path (bytes/s rounded
//!   up to Mbit/s); hard reservations must fit link capacities. Soft ones are reserved too;
//!   on each link, the soft Mbit/s beyond what the hard ones leave free overflow, shared
//!   among the soft reservations crossing it in proportion to their Mbit/s. A soft
//!   requirement's violation is its overflowing Mbit/s over its requested Mbit/s, summed over
//!   the links of its path (a link's penalty: `overflow * sum of weights / soft Mbit/s`), so
//!   a requirement that entirely overflows one link costs its weight, like one violated pair
//!   of a soft anti-collocation.
//! - `OS::NetReachability` / `OS::NetEndpointAccess`: recorded as [`Connectivity`].
//! - `OS::LicensedProduct`: charged once per leaf running the product, by machine type
//!   ([`Catalog::licenses`]).
//! - `OS::VolExclusive`: the volume is the only volume on its leaf. `OS::VolNotMoved`: a
//!   volume with a current leaf stays there; every such volume is reported as not movable.
//! - Cost = `weights.objective * (hosts used | sum of squared utilisation)
//!   + weights.license * charges + weights.soft * sum(weight * violation of soft rules)`.
//!
//! # Invariants
//! - A [`Solution`] with [`Status::Placed`] passes [`check`] (the status is decided by it).
//! - Same instance, options and iteration budget: same placement.
//! - No IO, no clock: time only through the injected deadline.

mod catalog;
mod check;
mod error;
mod exact;
mod explain;
mod freetree;
mod instance;
mod pool;
mod report;
pub mod roadef;
mod search;
mod state;
mod svg;
pub mod synth;

#[cfg(test)]
mod tests;

pub use catalog::Catalog;
pub use check::{Cost, HardViolation, Report, SoftViolation, check};
pub use error::{PlacementError, Problem};
pub use explain::{Explanation, ItemTriage, Reason};
pub use instance::{
    Connectivity, Instance, Item, ItemId, License, PolicyLabel, Rule, RuleKind, policy_warnings,
};
pub use report::{Placement, Reservation};
pub use search::{ExactMode, Options, Solution, Stats, Status, greedy, solve};
pub use state::{Objective, Weights};
pub use svg::render_svg;
