//! The ONAP HAS counter-example: greedy fit-first finds 567 km, Berth the optimal 222 km.

use berth_engine::Status;

use crate::{chosen, opts, run};

const TEMPLATE: &str = include_str!("../../../../examples/templates/has_counterexample.yaml");
const INVENTORY: &str = include_str!("../fixtures/has_counterexample_inventory.yaml");

fn haversine(a: (f64, f64), b: (f64, f64)) -> f64 {
    let r = 6371.0088_f64;
    let (p1, p2) = (a.0.to_radians(), b.0.to_radians());
    let h = ((p2 - p1) / 2.0).sin().powi(2)
        + p1.cos() * p2.cos() * ((b.1 - a.1).to_radians() / 2.0).sin().powi(2);
    2.0 * r * h.sqrt().asin()
}

/// HAS's search as the issue describes it: demands in order, each on its closest candidate
/// consistent with those already placed, no backtracking once a fit is found.
fn greedy_first_fit() -> Option<f64> {
    let inv = berth_inventory::Inventory::parse(INVENTORY).ok()?;
    let pos = |id: &str| {
        let c = &inv.candidates[id];
        (
            c.latitude.unwrap_or(f64::NAN),
            c.longitude.unwrap_or(f64::NAN),
        )
    };
    let complex = |id: &str| inv.candidates[id].complex_name.clone();
    let customer = (0.0, 0.0);
    let by_dist = |ids: &[&'static str]| {
        let mut v = ids.to_vec();
        v.sort_by(|a, b| haversine(customer, pos(a)).total_cmp(&haversine(customer, pos(b))));
        v
    };
    let muxes = by_dist(&["mux-x", "mux-y"]);
    let vgs = by_dist(&["vg-x", "vg-y"]);
    let mux = muxes[0];
    let vg = vgs.iter().find(|v| complex(v) == complex(mux))?;
    Some(haversine(customer, pos(mux)) + haversine(customer, pos(vg)))
}

#[test]
fn greedy_answers_567_km() {
    let greedy = greedy_first_fit().unwrap();
    assert!((greedy - 567.0).abs() < 1e-6, "{greedy}");
}

#[test]
fn berth_finds_the_222_km_plan() {
    let out = run(TEMPLATE, INVENTORY, &opts()).unwrap();
    assert_eq!(out.status, Status::Solved);
    assert!(out.optimal);
    assert!(
        (out.solutions[0].objective - 222.0).abs() < 1e-6,
        "{}",
        out.solutions[0].objective
    );
    assert_eq!(chosen(&out, 0, "vGMuxInfra"), "mux-y");
    assert_eq!(chosen(&out, 0, "vG"), "vg-y");
}

#[test]
fn second_best_is_the_greedy_plan() {
    let o = berth_engine::PlanOptions {
        solutions: 3,
        ..opts()
    };
    let out = run(TEMPLATE, INVENTORY, &o).unwrap();
    // Only two assignments keep both demands in one complex.
    assert_eq!(out.solutions.len(), 2);
    assert!((out.solutions[1].objective - 567.0).abs() < 1e-6);
    assert_eq!(chosen(&out, 1, "vGMuxInfra"), "mux-x");
}

/// Records what the search reports through `PlanOptions::progress`.
#[derive(Default)]
struct Recorder(std::sync::Mutex<Vec<(f64, Option<f64>)>>);

impl berth_engine::Progress for Recorder {
    fn improved(&self, best: f64, bound: Option<f64>) {
        self.0.lock().expect("recorder").push((best, bound));
    }
}

#[test]
fn progress_reports_end_at_the_222_km_plan() {
    let rec = std::sync::Arc::new(Recorder::default());
    let o = berth_engine::PlanOptions {
        progress: Some(rec.clone()),
        ..opts()
    };
    let out = run(TEMPLATE, INVENTORY, &o).unwrap();
    let seen = rec.0.lock().unwrap().clone();
    let (best, bound) = *seen.last().expect("at least one report");
    assert!((best - out.solutions[0].objective).abs() < 1e-6, "{seen:?}");
    assert!((best - 222.0).abs() < 1e-6, "{seen:?}");
    assert!(bound.is_none_or(|b| b <= best + 1e-6), "{seen:?}");
}
