//! Engine integration tests: the HAS counter-example, constraint semantics end to end,
//! snapshots of outcomes, and the brute-force oracle property test.

mod cases;
mod cloud;
mod counterexample;
mod dims;
mod oracle;
mod snapshots;
mod validate;

use std::sync::Arc;

use berth_engine::{FixedClock, PlanOptions, PlanOutcome, plan};
use berth_inventory::StaticProvider;

/// Options with a clock that never moves (reproducible `elapsed_ms`).
pub fn opts() -> PlanOptions {
    PlanOptions {
        clock: Some(Arc::new(FixedClock)),
        ..PlanOptions::default()
    }
}

/// Loads a template (panicking with its diagnostics if invalid) and an inventory, and plans.
pub fn run(
    template: &str,
    inventory: &str,
    o: &PlanOptions,
) -> Result<PlanOutcome, berth_engine::EngineError> {
    let t = berth_template::load(template, &berth_template::LoadOptions::default())
        .unwrap_or_else(|d| panic!("template invalid: {d:#?}"));
    let p = StaticProvider::parse(inventory).unwrap_or_else(|e| panic!("inventory invalid: {e}"));
    plan(&t, &p, o)
}

/// The chosen candidate id of `demand` in plan `i`.
pub fn chosen(o: &PlanOutcome, i: usize, demand: &str) -> String {
    o.solutions[i].placements[demand]["candidate_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}
