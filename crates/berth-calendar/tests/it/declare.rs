//! Capacity declared by a pool's source and retired pools, one named case each (the model
//! test checks them against the naive oracle at random).

use berth_calendar::*;

use crate::{h, promise_calendar, t0};

fn pool() -> PoolKey {
    PoolKey::new("zone-1", "openstack")
}

fn declare(cal: &mut Calendar, amounts: Amounts, at: chrono::DateTime<chrono::Utc>) -> Applied {
    cal.declare_capacity(
        Declaration {
            pool: pool(),
            amounts,
        },
        at,
    )
    .unwrap()
    .applied
}

fn total(cal: &Calendar, dim: &str, from: chrono::DateTime<chrono::Utc>) -> Vec<(i64, i64)> {
    let rep = cal
        .query_capacity(&CapacityQuery {
            zone: None,
            provider: None,
            window: Window::open(from),
            timeline: true,
        })
        .unwrap();
    let mut out: Vec<(i64, i64)> = Vec::new();
    for s in &rep.pools[0].timeline {
        let t = s.levels.get(&Dimension::new(dim)).map_or(0, |l| l.total);
        if out.last().is_none_or(|(_, last)| *last != t) {
            out.push(((s.at - t0()).num_hours(), t));
        }
    }
    out
}

#[test]
fn declaring_the_same_capacity_twice_changes_nothing_the_second_time() {
    let mut cal = promise_calendar(Policy::default());
    let first = declare(&mut cal, Amounts::new().with("cores", 12), h(1));
    assert_eq!(
        first,
        Applied::CapacityDeclared {
            pool: pool(),
            before: Amounts::promise(20, 51200, 10, 10),
            after: Amounts::new().with("cores", 12),
            at_risk: vec![],
        }
    );
    let state = cal.state();
    let again = declare(&mut cal, Amounts::new().with("cores", 12), h(2));
    assert_eq!(
        again,
        Applied::CapacityDeclared {
            pool: pool(),
            before: Amounts::new().with("cores", 12),
            after: Amounts::new().with("cores", 12),
            at_risk: vec![],
        }
    );
    assert_eq!(cal.state().capacity, state.capacity);
    assert_eq!(total(&cal, "cores", h(2)), vec![(2, 12)]);
    assert_eq!(total(&cal, "ram", h(2)), vec![(2, 0)]);
}

#[test]
fn a_lower_declaration_flags_what_decrease_capacity_would() {
    let mut declared = promise_calendar(Policy::default());
    let mut decreased = declared.clone();
    for cal in [&mut declared, &mut decreased] {
        cal.create_reservation(
            ReservationRequest::new("zone-1", Amounts::new().with("cores", 15)).ending(h(20)),
            t0(),
        )
        .unwrap();
    }
    let by_hand = decreased
        .decrease_capacity(
            CapacityChange {
                pool: pool(),
                start: h(1),
                end: None,
                amounts: Amounts::new().with("cores", 10),
            },
            h(1),
        )
        .unwrap();
    let out = declared
        .declare_capacity(
            Declaration {
                pool: pool(),
                amounts: Amounts::promise(10, 51200, 10, 10),
            },
            h(1),
        )
        .unwrap();
    let Applied::CapacityChanged { at_risk, .. } = &by_hand.applied else {
        panic!("{by_hand:?}");
    };
    assert!(!at_risk.is_empty());
    assert!(
        matches!(&out.applied, Applied::CapacityDeclared { at_risk: a, .. } if a == at_risk),
        "{out:?}"
    );
    assert_eq!(out.events, by_hand.events);
    assert_eq!(declared.state().capacity, decreased.state().capacity);
}

#[test]
fn a_maintenance_window_made_by_hand_survives_a_declaration() {
    let mut cal = promise_calendar(Policy::default());
    cal.decrease_capacity(
        CapacityChange {
            pool: pool(),
            start: h(10),
            end: Some(h(20)),
            amounts: Amounts::new().with("cores", 15),
        },
        t0(),
    )
    .unwrap();
    // 20 → 8 from h(1): the window's 5 left drop to 0 (never below), its end still restores.
    declare(&mut cal, Amounts::new().with("cores", 8), h(1));
    assert_eq!(total(&cal, "cores", h(1)), vec![(1, 8), (10, 0), (20, 8)]);
    // Raising it again adds for good: the window keeps its dip below the new level.
    declare(&mut cal, Amounts::new().with("cores", 30), h(2));
    assert_eq!(
        total(&cal, "cores", h(2)),
        vec![(2, 30), (10, 22), (20, 30)]
    );
}

#[test]
fn a_retired_pool_sells_nothing_keeps_its_history_and_can_return() {
    let mut cal = promise_calendar(Policy::default());
    let (r, _) = cal
        .create_reservation(
            ReservationRequest::new("zone-1", Amounts::new().with("cores", 4)).window(h(0), h(5)),
            t0(),
        )
        .unwrap();
    let out = cal.retire_pool(pool(), h(2)).unwrap();
    assert_eq!(
        out.applied,
        Applied::PoolRetired {
            pool: pool(),
            before: Amounts::promise(20, 51200, 10, 10),
            at_risk: vec![RecordRef::Reservation(r)],
        }
    );
    assert!(cal.reservation(r).unwrap().at_risk);
    let listed = |cal: &Calendar, from| {
        cal.query_capacity(&CapacityQuery {
            zone: None,
            provider: None,
            window: Window::open(from),
            timeline: false,
        })
        .unwrap()
        .pools
        .len()
    };
    // Shown while the reservation still holds part of it, and for windows before the retirement.
    assert_eq!(listed(&cal, h(3)), 1);
    assert_eq!(listed(&cal, h(6)), 0);
    assert_eq!(listed(&cal, t0()), 1);
    assert_eq!(total(&cal, "cores", h(2)), vec![(2, 0)]);
    let refused = cal.create_reservation(
        ReservationRequest::new("zone-1", Amounts::new().with("cores", 1)).window(h(6), h(7)),
        h(2),
    );
    assert!(
        matches!(refused, Err(CalendarError::Conflict(_))),
        "{refused:?}"
    );
    assert_eq!(
        cal.declared_pools(None),
        vec![DeclaredPool {
            pool: pool(),
            capacity: Amounts::new(),
            declared: false,
            retired: Some(h(2)),
        }]
    );
    // Retiring again is a no-op; a declaration makes it sell again.
    let again = cal.retire_pool(pool(), h(3)).unwrap();
    assert!(again.events.is_empty());
    assert_eq!(
        again.applied,
        Applied::PoolRetired {
            pool: pool(),
            before: Amounts::new(),
            at_risk: vec![],
        }
    );
    let back = declare(&mut cal, Amounts::new().with("cores", 6), h(6));
    assert!(matches!(back, Applied::CapacityDeclared { ref before, .. } if before.is_zero()));
    assert_eq!(listed(&cal, h(6)), 1);
    assert_eq!(total(&cal, "cores", h(6)), vec![(6, 6)]);
}

#[test]
fn declarations_and_retirements_survive_a_snapshot() {
    let mut cal = promise_calendar(Policy::default());
    declare(&mut cal, Amounts::new().with("cores", 8), h(1));
    cal.increase_capacity(
        CapacityChange {
            pool: PoolKey::new("zone-2", "openstack"),
            start: h(1),
            end: None,
            amounts: Amounts::new().with("cores", 3),
        },
        h(1),
    )
    .unwrap();
    cal.retire_pool(PoolKey::new("zone-2", "openstack"), h(2))
        .unwrap();
    let json = serde_json::to_string(&cal.snapshot()).unwrap();
    let back = Calendar::restore(serde_json::from_str(&json).unwrap()).unwrap();
    assert_eq!(back.state(), cal.state());
    assert_eq!(back.declared_pools(None), cal.declared_pools(None));
    // A snapshot with a retirement after its clock is refused.
    let mut bad: serde_json::Value = serde_json::from_str(&json).unwrap();
    bad["pools"][1]["retired"] = serde_json::json!(h(9));
    let e = Calendar::restore(serde_json::from_value(bad).unwrap()).unwrap_err();
    assert!(e.to_string().contains("retired"), "{e}");
}

#[test]
fn retiring_an_unknown_pool_names_it() {
    let mut cal = promise_calendar(Policy::default());
    let e = cal
        .retire_pool(PoolKey::new("nowhere", "openstack"), h(1))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown pool `nowhere/openstack`; expected a provider with capacity in the zone"
    );
}
