//! The engine: a resolved homing template plus an inventory in, a plan (or an explanation)
//! out. Pure: no IO, no async; the only time it reads is an injectable [`Clock`].
//!
//! Key types and functions:
//! - [`plan`]`(template, provider, options)`: resolves each demand's requirements through the
//!   [`berth_inventory::InventoryProvider`], lowers constraints and objective with
//!   `berth-constraints`, solves with `berth-solver`, and reports a [`PlanOutcome`].
//! - [`validate`] / [`check`]: the template's diagnostics plus every problem `plan`'s own
//!   resolution and lowering find in the template alone (run against an empty inventory), so
//!   what validates never fails to solve for a reason the template shows.
//! - [`PlanOptions`]: number of plans (k best), time and node limits, HAS `unique`, latency
//!   model, existing-placement bonus, service controllers, topology, clock, and an optional
//!   [`CloudPolicyInput`] (seed 002 cloud selection policy with its owner and cost files).
//! - Cloud policy: for demands the policy applies to, cloud candidates the policy rejects are
//!   removed before lowering (triage `cloud-policy:<reason>`, e.g.
//!   `cloud-policy:intent_unsupported`); each kept one adds its net value (cost and distance,
//!   normalized and weighted) as a unary term to the objective (subtracted when maximizing) —
//!   without the distance part when the template's objective already weighs the distance
//!   between the policy's location and that demand — and its placement reports
//!   `realized_intent`, `deployment_cost`, `cloud_net_value` and `cloud_objective_term`.
//! - Network slicing: `nsi`, `nssi`, `nst`, `slice_profiles`, `transport` and `vfmodule`
//!   requirements resolve like `cloud`/`service` ones; a `slice_profiles` requirement with
//!   `subnets` in its `filtering_attributes` gets generated "create new" candidates (HAS's
//!   `generator`), and `default_attributes` fill in attributes candidates lack. A demand no
//!   requirement of which the provider serves is invalid input ([`unserved`] lists them as
//!   [`Unserved`]); the static inventory serves every type, so a type it holds no candidate
//!   of is an empty set: `not found`, with [`DemandTriage::absent`] saying so.
//! - [`check_inventory`]: what `plan` refuses against a given inventory (an unresolvable
//!   `host_name`, an unknown license), found by `plan`'s own steps, for
//!   `berth validate --inventory`.
//! - [`PlanOutcome`]: serializes to exactly the `berth solve` JSON contract
//!   `{status, optimal, bound, gap, message, solutions[{objective, placements}], triage, stats}`;
//!   status is `"solved"`, `"not found"` or `"error"` ([`PlanOutcome::from_error`]); `bound`
//!   is the objective the search proved no plan beats and `gap` the best plan's
//!   [`relative_gap`] to it (0 when optimal; both `null` without a plan).
//! - [`EngineError`] with a neutral [`ErrorCode`] (invalid input, not found, infeasible,
//!   unavailable, internal).
//!
//! Invariants:
//! - Every plan satisfies every hard constraint (the solver checks complete assignments).
//! - `optimal` is true only when the search completed: the plans are provably the best.
//! - The triage names, for every demand, each removed candidate and the constraint (or
//!   `inventory:...` filter, or `optimization` for candidates the objective cannot score)
//!   that removed it; an infeasible outcome's message names the conflicting constraints.
//! - Deterministic: same template, inventory and options (and a clock that does not cut the
//!   search short), same outcome; all maps reaching output are ordered.
//!
//! ```
//! use berth_engine::{FixedClock, PlanOptions, Status, plan};
//! use berth_inventory::StaticProvider;
//! use std::sync::Arc;
//!
//! let inventory = StaticProvider::parse("
//! candidates:
//!   - {candidate_id: dfw, inventory_type: cloud, latitude: 32.9, longitude: -97.0, cost: 10}
//!   - {candidate_id: nyc, inventory_type: cloud, latitude: 40.7, longitude: -74.0, cost: 5}
//! ")?;
//! let template = berth_template::load("
//! homing_template_version: 2017-10-10
//! locations: {customer: {latitude: 32.8, longitude: -96.8}}
//! demands: {vG: [{inventory_provider: aai, inventory_type: cloud}]}
//! optimization: {minimize: {sum: [{distance_between: [customer, vG]}]}}
//! ", &Default::default()).expect("valid template");
//! let opts = PlanOptions { clock: Some(Arc::new(FixedClock)), ..PlanOptions::default() };
//! let outcome = plan(&template, &inventory, &opts)?;
//! assert_eq!(outcome.status, Status::Solved);
//! assert!(outcome.optimal);
//! assert_eq!(outcome.solutions[0].placements["vG"]["candidate_id"], "dfw");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod check;
mod cloud;
mod error;
mod options;
mod outcome;
mod plan;
mod resolve;
mod slicing;

pub use berth_cloudpolicy::{Normalization, Scaling, Weights, Workload, WorkloadCatalog};
pub use berth_constraints::LatencyModel;
pub use berth_solver::{MAX_THREADS, Progress};
pub use check::{
    check, check_inventory, inventory_diagnostics, request_diagnostics, validate, validate_raw,
};
pub use cloud::{CloudPolicyInput, rejection_name};
pub use error::{EngineError, ErrorCode};
pub use options::{Clock, FixedClock, PlanOptions, SystemClock};
pub use outcome::{
    DemandTriage, PlanOutcome, PlanSolution, PlanStats, Status, fmt_gap, relative_gap,
};
pub use plan::{candidate_json, plan};
pub use resolve::{Unserved, removal_name, unserved};
