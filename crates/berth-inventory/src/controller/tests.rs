//! Unit tests for the capacity controller: fit checks, reservations and rollback.

use super::*;
use crate::model::InventoryType;

fn cloud(id: &str, cap: &[(&str, i64)]) -> Candidate {
    let mut c = Candidate::new(id, InventoryType::Cloud);
    c.capacity = cap.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect();
    c
}

fn req(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}

fn item(demand: &str, id: &str, pairs: &[(&str, i64)]) -> ReservationItem {
    ReservationItem {
        demand: demand.to_owned(),
        candidate_id: id.into(),
        request: req(pairs),
    }
}

fn setup() -> (Vec<Candidate>, CapacityController) {
    let cands = vec![
        cloud("dfw1", &[("vcpu", 16), ("ram_mib", 32768)]),
        cloud("nyc1", &[("vcpu", 8)]),
    ];
    let ctl = CapacityController::new("capacity", &cands);
    (cands, ctl)
}

#[test]
fn fits_reports_every_shortfall_and_missing_dimension() {
    let (cands, ctl) = setup();
    assert_eq!(ctl.name(), "capacity");
    assert!(ctl.fits(&cands[0], &req(&[("vcpu", 16)])).fits());
    let r = ctl.fits(&cands[1], &req(&[("vcpu", 9), ("ram_mib", 1), ("gpu", 0)]));
    assert_eq!(
        r,
        FitResult::Shortfall {
            shortfalls: vec![
                Shortfall {
                    dimension: "ram_mib".into(),
                    requested: 1,
                    available: None
                },
                Shortfall {
                    dimension: "vcpu".into(),
                    requested: 9,
                    available: Some(8)
                },
            ]
        }
    );
    let neg = ctl.fits(&cands[0], &req(&[("vcpu", -1)]));
    assert!(matches!(neg, FitResult::Rejected { .. }), "{neg:?}");
}

#[test]
fn reserve_deducts_and_rollback_restores() {
    let (cands, ctl) = setup();
    let t = ctl
        .reserve(&[item("vG", "dfw1", &[("vcpu", 10), ("ram_mib", 1024)])])
        .expect("fits");
    assert_eq!(
        ctl.free_capacity("dfw1"),
        Some(req(&[("vcpu", 6), ("ram_mib", 31744)]))
    );
    // Fit checks see the reduced capacity.
    assert!(!ctl.fits(&cands[0], &req(&[("vcpu", 7)])).fits());
    assert_eq!(ctl.held(), vec![t.clone()]);
    ctl.rollback(&t).expect("held");
    assert_eq!(ctl.free_capacity("dfw1"), Some(cands[0].capacity.clone()));
    assert!(ctl.held().is_empty());
    let again = ctl.rollback(&t);
    assert!(matches!(
        again,
        Err(InventoryError::UnknownReservation { .. })
    ));
}

#[test]
fn failed_batch_reserves_nothing() {
    let (cands, ctl) = setup();
    // First item fits alone; second exceeds nyc1.
    let err = ctl
        .reserve(&[
            item("vGMuxInfra", "dfw1", &[("vcpu", 4)]),
            item("vG", "nyc1", &[("vcpu", 9)]),
        ])
        .expect_err("nyc1 too small");
    match err {
        InventoryError::InsufficientCapacity {
            candidate_id,
            shortfalls,
        } => {
            assert_eq!(candidate_id.as_str(), "nyc1");
            assert_eq!(shortfalls.len(), 1);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(ctl.free_capacity("dfw1"), Some(cands[0].capacity.clone()));
    assert_eq!(ctl.free_capacity("nyc1"), Some(cands[1].capacity.clone()));
    assert!(ctl.held().is_empty());
}

#[test]
fn items_on_one_candidate_add_up_within_a_batch() {
    let (cands, ctl) = setup();
    let err = ctl.reserve(&[
        item("a", "nyc1", &[("vcpu", 5)]),
        item("b", "nyc1", &[("vcpu", 4)]),
    ]);
    assert!(matches!(
        err,
        Err(InventoryError::InsufficientCapacity { .. })
    ));
    assert_eq!(ctl.free_capacity("nyc1"), Some(cands[1].capacity.clone()));
    let t = ctl
        .reserve(&[
            item("a", "nyc1", &[("vcpu", 4)]),
            item("b", "nyc1", &[("vcpu", 4)]),
        ])
        .expect("exactly fits");
    assert_eq!(ctl.free_capacity("nyc1"), Some(req(&[("vcpu", 0)])));
    ctl.rollback(&t).expect("held");
    assert_eq!(ctl.free_capacity("nyc1"), Some(req(&[("vcpu", 8)])));
}

#[test]
fn unknown_candidate_or_negative_amount_fails_without_side_effects() {
    let (cands, ctl) = setup();
    let e = ctl.reserve(&[
        item("a", "dfw1", &[("vcpu", 1)]),
        item("b", "mars1", &[("vcpu", 1)]),
    ]);
    assert!(matches!(e, Err(InventoryError::UnknownCandidate { .. })));
    let e = ctl.reserve(&[
        item("a", "dfw1", &[("vcpu", 1)]),
        item("b", "dfw1", &[("vcpu", -3)]),
    ]);
    assert!(matches!(e, Err(InventoryError::InvalidRequest { .. })));
    assert_eq!(ctl.free_capacity("dfw1"), Some(cands[0].capacity.clone()));
}

#[test]
fn tokens_are_distinct_and_rollback_is_per_token() {
    let (_, ctl) = setup();
    let t1 = ctl
        .reserve(&[item("a", "dfw1", &[("vcpu", 2)])])
        .expect("fits");
    let t2 = ctl
        .reserve(&[item("b", "dfw1", &[("vcpu", 3)])])
        .expect("fits");
    assert_ne!(t1, t2);
    ctl.rollback(&t1).expect("held");
    assert_eq!(
        ctl.free_capacity("dfw1")
            .and_then(|m| m.get("vcpu").copied()),
        Some(13)
    );
}

#[test]
fn controller_is_object_safe() {
    let (cands, ctl) = setup();
    let dynctl: &dyn ServiceController = &ctl;
    assert!(dynctl.fits(&cands[1], &req(&[("vcpu", 8)])).fits());
}
