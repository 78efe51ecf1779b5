//! Promise's test cases and the issue's edge cases, one named test each.

use berth_calendar::*;
use chrono::{DateTime, TimeDelta, Utc};
use expect_test::expect;

use crate::{h, promise_calendar, t0};

fn pool() -> PoolKey {
    PoolKey::new("zone-1", "openstack")
}

fn available(
    cal: &Calendar,
    start: chrono::DateTime<chrono::Utc>,
    end: chrono::DateTime<chrono::Utc>,
) -> Amounts {
    let rep = cal
        .query_capacity(&CapacityQuery {
            zone: None,
            provider: None,
            window: Window::new(start, end),
            timeline: false,
        })
        .unwrap();
    rep.pools[0]
        .summary
        .iter()
        .map(|(d, s)| (d.clone(), s.available.max(0) as u64))
        .collect()
}

fn conflict(r: Result<(ReservationId, Outcome), CalendarError>) -> Conflict {
    match r {
        Err(CalendarError::Conflict(c)) => *c,
        other => panic!("expected a conflict, got {other:?}"),
    }
}

#[test]
fn promise_pool_has_full_capacity() {
    let cal = promise_calendar(Policy::default());
    assert_eq!(
        available(&cal, h(0), h(48)),
        Amounts::promise(20, 51200, 10, 10)
    );
}

#[test]
fn promise_immediate_reservation_5_25600_3_3() {
    let mut cal = promise_calendar(Policy::default());
    let (id, out) = cal
        .create_reservation(
            ReservationRequest::new("zone-1", Amounts::promise(5, 25600, 3, 3)).ending(h(24)),
            t0(),
        )
        .unwrap();
    assert_eq!(
        out.events,
        vec![Event::ReservationStarted {
            at: t0(),
            reservation: id
        }]
    );
    let r = cal.reservation(id).unwrap();
    assert_eq!(r.state, ReservationState::Active);
    assert_eq!(r.start, t0());
    assert_eq!(r.remaining, Amounts::promise(5, 25600, 3, 3));
    assert_eq!(
        available(&cal, h(0), h(24)),
        Amounts::promise(15, 25600, 7, 7)
    );
    assert_eq!(
        available(&cal, h(24), h(48)),
        Amounts::promise(20, 51200, 10, 10)
    );
}

#[test]
fn promise_future_reservation_queried_updated_cancelled() {
    let mut cal = promise_calendar(Policy::default());
    let req = ReservationRequest::new("zone-1", Amounts::promise(5, 25600, 3, 3))
        .window(h(24), h(48))
        .element("server-7");
    let (id, out) = cal.create_reservation(req, t0()).unwrap();
    assert!(out.events.is_empty());
    // Query by window (inclusive and exclusive), by element, and `without`.
    let q = |w: Window, scope: Scope| ReservationQuery {
        window: Some((w, scope)),
        ..Default::default()
    };
    let ids = |v: Vec<Reservation>| v.iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(
        ids(cal.query_reservations(&q(Window::new(h(0), h(30)), Scope::Inclusive))),
        vec![id]
    );
    assert!(
        cal.query_reservations(&q(Window::new(h(0), h(30)), Scope::Exclusive))
            .is_empty()
    );
    assert_eq!(
        ids(cal.query_reservations(&q(Window::new(h(24), h(48)), Scope::Exclusive))),
        vec![id]
    );
    assert!(
        cal.query_reservations(&q(Window::new(h(0), h(24)), Scope::Inclusive))
            .is_empty()
    );
    let by_el = ReservationQuery {
        elements_some: [ElementId::new("server-7"), ElementId::new("x")].into(),
        ..Default::default()
    };
    assert_eq!(ids(cal.query_reservations(&by_el)), vec![id]);
    let every = ReservationQuery {
        elements_every: [ElementId::new("server-7"), ElementId::new("x")].into(),
        ..Default::default()
    };
    assert!(cal.query_reservations(&every).is_empty());
    let without = ReservationQuery {
        without: [id].into(),
        ..Default::default()
    };
    assert!(cal.query_reservations(&without).is_empty());
    assert_eq!(cal.protected_by(&ElementId::new("server-7")), vec![id]);
    assert_eq!(
        cal.reservation(id).unwrap().state,
        ReservationState::Initialized
    );

    // Update (Annex C example: down to 1/5120/1/1), re-checked without itself.
    let mut upd = cal.request_of(id).unwrap();
    upd.amounts = Amounts::promise(1, 5120, 1, 1);
    cal.update_reservation(id, upd, h(1)).unwrap();
    assert_eq!(
        cal.reservation(id).unwrap().amounts,
        Amounts::promise(1, 5120, 1, 1)
    );
    assert_eq!(
        available(&cal, h(24), h(48)),
        Amounts::promise(19, 46080, 9, 9)
    );
    // Growing to the whole pool fits because the old amounts are not counted twice.
    let mut all = cal.request_of(id).unwrap();
    all.amounts = Amounts::promise(20, 51200, 10, 10);
    cal.update_reservation(id, all, h(1)).unwrap();

    let out = cal.cancel_reservation(id, h(2)).unwrap();
    assert_eq!(
        out.applied,
        Applied::ReservationCancelled {
            id,
            terminated: vec![]
        }
    );
    let r = cal.reservation(id).unwrap();
    assert_eq!(r.state, ReservationState::Cancelled);
    assert_eq!(r.cancel_reason, Some(CancelReason::Requested));
    assert_eq!(
        available(&cal, h(24), h(48)),
        Amounts::promise(20, 51200, 10, 10)
    );
    assert!(matches!(
        cal.cancel_reservation(id, h(2)),
        Err(CalendarError::ReservationClosed {
            state: ReservationState::Cancelled,
            ..
        })
    ));
}

fn promise_with_decreases() -> Calendar {
    let mut cal = promise_calendar(Policy::default());
    cal.create_reservation(
        ReservationRequest::new("zone-1", Amounts::promise(5, 25600, 3, 3)).ending(h(24)),
        t0(),
    )
    .unwrap();
    let dec = |s, e, a| CapacityChange {
        pool: pool(),
        start: h(s),
        end: Some(h(e)),
        amounts: a,
    };
    let out = cal
        .decrease_capacity(
            dec(
                14,
                21,
                Amounts::new()
                    .with("cores", 3)
                    .with("ram", 5120)
                    .with("addresses", 1),
            ),
            t0(),
        )
        .unwrap();
    assert_eq!(
        out.applied,
        Applied::CapacityChanged {
            pool: pool(),
            at_risk: vec![]
        }
    );
    cal.decrease_capacity(dec(30, 45, Amounts::new().with("instances", 5)), t0())
        .unwrap();
    cal
}

#[test]
fn promise_capacity_decreases_14_21h_and_30_45h() {
    let cal = promise_with_decreases();
    let rep = cal
        .query_capacity(&CapacityQuery {
            zone: Some(ZoneId::new("zone-1")),
            provider: None,
            window: Window::new(h(0), h(48)),
            timeline: true,
        })
        .unwrap();
    let lines: Vec<String> = rep.pools[0]
        .timeline
        .iter()
        .map(|s| {
            let l = |d: &str| s.levels[&Dimension::new(d)];
            format!(
                "{} avail cores={} ram={} inst={} addr={} | total cores={} reserved cores={}",
                s.at.format("%dT%H"),
                l("cores").available,
                l("ram").available,
                l("instances").available,
                l("addresses").available,
                l("cores").total,
                l("cores").reserved,
            )
        })
        .collect();
    expect![[r#"
        01T00 avail cores=15 ram=25600 inst=7 addr=7 | total cores=20 reserved cores=5
        01T14 avail cores=12 ram=20480 inst=7 addr=6 | total cores=17 reserved cores=5
        01T21 avail cores=15 ram=25600 inst=7 addr=7 | total cores=20 reserved cores=5
        02T00 avail cores=20 ram=51200 inst=10 addr=10 | total cores=20 reserved cores=0
        02T06 avail cores=20 ram=51200 inst=5 addr=10 | total cores=20 reserved cores=0
        02T21 avail cores=20 ram=51200 inst=10 addr=10 | total cores=20 reserved cores=0"#]]
    .assert_eq(&lines.join("\n"));
    let s = &rep.pools[0].summary[&Dimension::vcpu()];
    assert_eq!((s.total, s.reserved, s.usage, s.available), (17, 5, 0, 12));
}

#[test]
fn promise_ten_instances_now_conflict_with_offer() {
    let mut cal = promise_with_decreases();
    let req =
        ReservationRequest::new("zone-1", Amounts::new().with("instances", 10)).window(t0(), h(2));
    let c = conflict(cal.create_reservation(req, t0()));
    assert_eq!(c.shortages.len(), 1);
    assert_eq!(c.shortages[0].dimension, Dimension::instances());
    assert_eq!((c.shortages[0].at, c.shortages[0].available), (t0(), 7));
    assert_eq!(
        c.offers[0].max_reservable,
        Amounts::new().with("instances", 7)
    );
    assert_eq!(c.offers[0].earliest_start, Some(h(24)));
    assert_eq!(
        c.to_string(),
        "conflict: request does not fit; `instances` in `zone-1/openstack` needs 10 at 2016-02-01 00:00:00 UTC where 7 is available; earliest fitting start 2016-02-02 00:00:00 UTC"
    );
}

#[test]
fn promise_ten_instances_at_30h_conflict_with_offer() {
    let mut cal = promise_with_decreases();
    let req = ReservationRequest::new("zone-1", Amounts::new().with("instances", 10))
        .window(h(30), h(36));
    let c = conflict(cal.create_reservation(req.clone(), t0()));
    assert_eq!(
        c.offers[0].max_reservable,
        Amounts::new().with("instances", 5)
    );
    assert_eq!(c.offers[0].earliest_start, Some(h(45)));
    // The plain find-window query agrees, and the offered window is accepted.
    let found = cal
        .find_window(&WindowQuery {
            zone: ZoneId::new("zone-1"),
            provider: None,
            amounts: Amounts::new().with("instances", 10),
            not_before: h(30),
            duration: Some(TimeDelta::hours(6)),
        })
        .unwrap()
        .unwrap();
    assert_eq!(found.window, Window::new(h(45), h(51)));
    cal.create_reservation(req.window(h(45), h(51)), t0())
        .unwrap();
}

#[test]
fn back_to_back_windows_both_fit_at_full_capacity() {
    let mut cal = promise_calendar(Policy::default());
    let full = Amounts::promise(20, 51200, 10, 10);
    cal.create_reservation(
        ReservationRequest::new("zone-1", full.clone()).window(h(1), h(2)),
        t0(),
    )
    .unwrap();
    cal.create_reservation(
        ReservationRequest::new("zone-1", full.clone()).window(h(2), h(3)),
        t0(),
    )
    .unwrap();
    cal.create_reservation(
        ReservationRequest::new("zone-1", full.clone()).window(t0(), h(1)),
        t0(),
    )
    .unwrap();
    let c = conflict(cal.create_reservation(
        ReservationRequest::new("zone-1", Amounts::new().with("cores", 1)).window(h(1), h(2)),
        t0(),
    ));
    assert_eq!(c.offers[0].earliest_start, Some(h(3)));
}

#[test]
fn same_day_reservation_is_counted() {
    // Promise keyed deltas by date, so a reservation starting and ending on one day vanished.
    let mut cal = promise_calendar(Policy::default());
    cal.create_reservation(
        ReservationRequest::new("zone-1", Amounts::new().with("cores", 15)).window(h(25), h(27)),
        t0(),
    )
    .unwrap();
    let c = conflict(cal.create_reservation(
        ReservationRequest::new("zone-1", Amounts::new().with("cores", 10)).window(h(24), h(48)),
        t0(),
    ));
    assert_eq!(c.shortages[0].at, h(25));
    assert_eq!(c.offers[0].max_reservable, Amounts::new().with("cores", 5));
    assert_eq!(available(&cal, h(25), h(26)).get("cores"), 5);
}

#[test]
fn unreserved_allocation_colliding_with_future_reservation_is_refused() {
    let mut cal = promise_calendar(Policy::default());
    cal.create_reservation(
        ReservationRequest::new("zone-1", Amounts::new().with("instances", 8)).window(h(10), h(20)),
        t0(),
    )
    .unwrap();
    // Free now, but not for the whole (unbounded) lifetime: refused.
    let r = cal.create_allocation(
        AllocationRequest::unreserved("zone-1", Amounts::new().with("instances", 3)),
        t0(),
    );
    let Err(CalendarError::Conflict(c)) = r else {
        panic!("expected conflict, got {r:?}")
    };
    assert_eq!(c.shortages[0].at, h(10));
    assert_eq!(c.offers[0].earliest_start, Some(h(20)));
    // Bounded to end before the reservation starts: accepted.
    let (a, _) = cal
        .create_allocation(
            AllocationRequest::unreserved("zone-1", Amounts::new().with("instances", 3))
                .ending(h(10)),
            t0(),
        )
        .unwrap();
    assert_eq!(cal.allocation(a).unwrap().priority, Priority::Low);
    // Two instances fit for good.
    cal.create_allocation(
        AllocationRequest::unreserved("zone-1", Amounts::new().with("instances", 2)),
        t0(),
    )
    .unwrap();
}

#[test]
fn allocations_track_remaining_and_end_with_the_reservation() {
    let mut cal = promise_calendar(Policy::default());
    let (r, _) = cal
        .create_reservation(
            ReservationRequest::new("zone-1", Amounts::promise(4, 8192, 2, 1)).window(h(1), h(5)),
            t0(),
        )
        .unwrap();
    let flavor = Amounts::new()
        .with("cores", 2)
        .with("ram", 4096)
        .with("instances", 1);
    // Not active yet.
    assert!(matches!(
        cal.create_allocation(AllocationRequest::reserved(r, flavor.clone()), t0()),
        Err(CalendarError::ReservationNotActive {
            state: ReservationState::Initialized,
            ..
        })
    ));
    assert_eq!(
        cal.advance(h(1)).unwrap(),
        vec![Event::ReservationStarted {
            at: h(1),
            reservation: r
        }]
    );
    let (a1, _) = cal
        .create_allocation(AllocationRequest::reserved(r, flavor.clone()), h(1))
        .unwrap();
    let (a2, _) = cal
        .create_allocation(AllocationRequest::reserved(r, flavor.clone()), h(1))
        .unwrap();
    assert_eq!(
        cal.reservation(r).unwrap().remaining,
        Amounts::new().with("addresses", 1)
    );
    let e = cal
        .create_allocation(AllocationRequest::reserved(r, flavor.clone()), h(1))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        // The first dimension short, in name order.
        "allocation needs 1 `instances` but reservation `r1` has 0 left"
    );
    cal.destroy_allocation(a2, h(2)).unwrap();
    assert_eq!(cal.reservation(r).unwrap().remaining.get("cores"), 2);
    assert_eq!(cal.allocation(a1).unwrap().priority, Priority::High);
    let usage = cal
        .query_capacity(&CapacityQuery {
            zone: None,
            provider: None,
            window: Window::new(h(2), h(3)),
            timeline: false,
        })
        .unwrap();
    assert_eq!(usage.pools[0].summary[&Dimension::vcpu()].usage, 2);
    let ev = cal.advance(h(6)).unwrap();
    assert_eq!(
        ev,
        vec![
            Event::AllocationTerminated {
                at: h(5),
                allocation: a1,
                reservation: Some(r),
                reason: TerminationReason::ReservationEnded
            },
            Event::ReservationEnded {
                at: h(5),
                reservation: r
            },
        ]
    );
    assert_eq!(
        cal.allocation(a1).unwrap().state,
        AllocationState::Terminated
    );
}

#[test]
fn expiry_releases_the_unallocated_rest_with_notice() {
    let policy = Policy {
        default_expiry_minutes: Some(60),
        expiry_notice_seconds: 600,
        ..Policy::default()
    };
    let mut cal = promise_calendar(policy);
    let (r, _) = cal
        .create_reservation(
            ReservationRequest::new("zone-1", Amounts::new().with("cores", 10)).window(h(1), h(10)),
            t0(),
        )
        .unwrap();
    assert_eq!(cal.reservation(r).unwrap().expiry, Some(h(2)));
    cal.advance(h(1)).unwrap();
    cal.create_allocation(
        AllocationRequest::reserved(r, Amounts::new().with("cores", 4)),
        h(1),
    )
    .unwrap();
    let ev = cal.advance(h(3)).unwrap();
    let soon = h(2) - TimeDelta::minutes(10);
    assert_eq!(
        ev,
        vec![
            Event::ReservationExpiringSoon {
                at: soon,
                reservation: r,
                expiry: h(2),
                unallocated: Amounts::new().with("cores", 6)
            },
            Event::ReservationExpired {
                at: h(2),
                reservation: r,
                released: Amounts::new().with("cores", 6)
            },
        ]
    );
    let rec = cal.reservation(r).unwrap();
    assert_eq!(rec.state, ReservationState::Expired);
    assert!(rec.remaining.is_zero());
    assert_eq!(available(&cal, h(3), h(10)).get("cores"), 16);
    // No more allocations after expiry.
    assert!(matches!(
        cal.create_allocation(
            AllocationRequest::reserved(r, Amounts::new().with("cores", 1)),
            h(3)
        ),
        Err(CalendarError::ReservationNotActive {
            state: ReservationState::Expired,
            ..
        })
    ));
}

#[test]
fn policy_limits_are_clear_errors() {
    let policy = Policy {
        max_future_start_days: Some(7),
        max_future_end_days: Some(10),
        max_duration_hours: Some(48),
        ..Policy::default()
    };
    let mut cal = promise_calendar(policy);
    let one = Amounts::new().with("cores", 1);
    let err = |cal: &mut Calendar, s: i64, e: Option<i64>| {
        let mut r = ReservationRequest::new("zone-1", one.clone()).starting(h(s));
        r.end = e.map(h);
        cal.create_reservation(r, t0()).unwrap_err().to_string()
    };
    assert_eq!(
        err(&mut cal, 24 * 8, Some(24 * 8 + 1)),
        "reservation violates policy `max-future-start-range`: 8 exceeds the limit of 7 days"
    );
    assert_eq!(
        err(&mut cal, 24 * 6, Some(24 * 11)),
        "reservation violates policy `max-future-end-range`: 11 exceeds the limit of 10 days"
    );
    assert_eq!(
        err(&mut cal, 0, Some(49)),
        "reservation violates policy `max-duration`: 49 exceeds the limit of 48 hours"
    );
    assert_eq!(
        err(&mut cal, 0, None),
        "reservation violates policy `max-future-end-range`: an open end exceeds the limit of 10 days"
    );
    let mut d = promise_calendar(Policy::default());
    assert!(matches!(
        d.create_reservation(ReservationRequest::new("zone-1", one.clone()), t0()),
        Err(CalendarError::Policy {
            rule: PolicyRule::MaxDuration,
            limit: 8760,
            requested: None
        })
    ));
    assert_eq!(
        err(&mut cal, 5, Some(5)),
        "empty window: end 2016-02-01 05:00:00 UTC is not after start 2016-02-01 05:00:00 UTC; expected end > start"
    );
}

#[test]
fn failed_update_leaves_the_reservation_exactly_as_it_was() {
    let mut cal = promise_calendar(Policy::default());
    let (r, _) = cal
        .create_reservation(
            ReservationRequest::new("zone-1", Amounts::new().with("cores", 10)).window(h(1), h(10)),
            t0(),
        )
        .unwrap();
    cal.create_reservation(
        ReservationRequest::new("zone-1", Amounts::new().with("cores", 10)).window(h(5), h(20)),
        t0(),
    )
    .unwrap();
    let before = cal.state();
    let mut up = cal.request_of(r).unwrap();
    up.amounts = Amounts::new().with("cores", 11);
    let c = match cal.update_reservation(r, up, t0()) {
        Err(CalendarError::Conflict(c)) => c,
        other => panic!("{other:?}"),
    };
    // The offer is computed without the reservation itself.
    assert_eq!(c.offers[0].max_reservable.get("cores"), 10);
    assert_eq!(cal.state(), before);
}

#[test]
fn capacity_decrease_below_commitments_flags_and_reports() {
    let mut cal = promise_calendar(Policy::default());
    let (r, _) = cal
        .create_reservation(
            ReservationRequest::new("zone-1", Amounts::new().with("cores", 15))
                .window(h(10), h(20)),
            t0(),
        )
        .unwrap();
    let (other, _) = cal
        .create_reservation(
            ReservationRequest::new("zone-1", Amounts::new().with("ram", 100)).window(h(10), h(20)),
            t0(),
        )
        .unwrap();
    let out = cal
        .decrease_capacity(
            CapacityChange {
                pool: pool(),
                start: h(14),
                end: Some(h(21)),
                amounts: Amounts::new().with("cores", 10),
            },
            t0(),
        )
        .unwrap();
    assert_eq!(
        out.applied,
        Applied::CapacityChanged {
            pool: pool(),
            at_risk: vec![RecordRef::Reservation(r)]
        }
    );
    assert_eq!(
        out.events,
        vec![Event::CommitmentAtRisk {
            at: t0(),
            record: RecordRef::Reservation(r),
            pool: pool(),
            dimensions: vec![Dimension::vcpu()]
        }]
    );
    assert!(cal.reservation(r).unwrap().at_risk);
    assert!(!cal.reservation(other).unwrap().at_risk);
    assert_eq!(
        cal.query_capacity(&CapacityQuery {
            zone: None,
            provider: None,
            window: Window::new(h(14), h(20)),
            timeline: false
        })
        .unwrap()
        .pools[0]
            .summary[&Dimension::vcpu()]
            .available,
        -5
    );
    // Capacity cannot go below zero.
    assert!(matches!(
        cal.decrease_capacity(
            CapacityChange {
                pool: pool(),
                start: h(0),
                end: None,
                amounts: Amounts::new().with("cores", 11)
            },
            t0()
        ),
        Err(CalendarError::CapacityUnderflow { .. })
    ));
    // Restoring capacity clears the flag.
    cal.increase_capacity(
        CapacityChange {
            pool: pool(),
            start: h(14),
            end: Some(h(21)),
            amounts: Amounts::new().with("cores", 10),
        },
        t0(),
    )
    .unwrap();
    assert!(!cal.reservation(r).unwrap().at_risk);
}

#[test]
fn preemption_is_explicit_and_reported() {
    let mut off = promise_calendar(Policy::default());
    let low = ReservationRequest::new("zone-1", Amounts::new().with("cores", 15))
        .window(h(10), h(20))
        .priority(Priority::Low);
    off.create_reservation(low.clone(), t0()).unwrap();
    let high = ReservationRequest::new("zone-1", Amounts::new().with("cores", 10))
        .window(h(12), h(14))
        .priority(Priority::High);
    assert!(matches!(
        off.create_reservation(high.clone(), t0()),
        Err(CalendarError::Conflict(_))
    ));

    let policy = Policy {
        preemption: Preemption {
            cancel_pending_reservations: true,
            terminate_unreserved_allocations: true,
        },
        ..Policy::default()
    };
    let mut cal = promise_calendar(policy);
    let (victim, _) = cal.create_reservation(low, t0()).unwrap();
    let (spare, _) = cal
        .create_reservation(
            ReservationRequest::new("zone-1", Amounts::new().with("cores", 1))
                .window(h(12), h(13))
                .priority(Priority::Low),
            t0(),
        )
        .unwrap();
    let (alloc, _) = cal
        .create_allocation(
            AllocationRequest::unreserved("zone-1", Amounts::new().with("cores", 4)),
            t0(),
        )
        .unwrap();
    let (hid, out) = cal.create_reservation(high, t0()).unwrap();
    // The allocation (4) alone is not enough; the 15-core reservation is; the small one stays.
    assert_eq!(
        out.applied,
        Applied::ReservationCreated {
            id: hid,
            pool: pool(),
            preempted: vec![RecordRef::Reservation(victim)]
        }
    );
    assert_eq!(
        out.events,
        vec![Event::ReservationPreempted {
            at: t0(),
            reservation: victim,
            by: hid
        }]
    );
    assert_eq!(
        cal.reservation(victim).unwrap().cancel_reason,
        Some(CancelReason::Preempted { by: hid })
    );
    assert_eq!(
        cal.reservation(spare).unwrap().state,
        ReservationState::Initialized
    );
    assert_eq!(
        cal.allocation(alloc).unwrap().state,
        AllocationState::Active
    );
    // A normal reservation needing the allocation's cores terminates it.
    let (n, out) = cal
        .create_reservation(
            ReservationRequest::new("zone-1", Amounts::new().with("cores", 20))
                .window(h(30), h(31)),
            t0(),
        )
        .unwrap();
    assert_eq!(
        out.events,
        vec![Event::AllocationTerminated {
            at: t0(),
            allocation: alloc,
            reservation: None,
            reason: TerminationReason::Preempted { by: n }
        }]
    );
}

#[test]
fn capacity_threshold_subscription_fires_both_ways() {
    let mut cal = promise_calendar(Policy::default());
    let (_, out) = cal
        .subscribe(
            ThresholdSubscription {
                zone: ZoneId::new("zone-1"),
                provider: None,
                dimension: Dimension::instances(),
                below: 5,
            },
            t0(),
        )
        .unwrap();
    assert!(out.events.is_empty());
    cal.create_reservation(
        ReservationRequest::new("zone-1", Amounts::new().with("instances", 6)).window(h(1), h(2)),
        t0(),
    )
    .unwrap();
    let ev = cal.advance(h(1)).unwrap();
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::CapacityThreshold {
            available: 4,
            below: true,
            ..
        }
    )));
    let ev = cal.advance(h(2)).unwrap();
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::CapacityThreshold {
            available: 10,
            below: false,
            ..
        }
    )));
}

/// Promise pool watched for fewer than 5 free instances; a reservation of 6 over [h1, h2).
fn watched_dip() -> (Calendar, SubscriptionId, ReservationId) {
    let mut cal = promise_calendar(Policy::default());
    let sub = ThresholdSubscription {
        zone: ZoneId::new("zone-1"),
        provider: None,
        dimension: Dimension::instances(),
        below: 5,
    };
    let (s, _) = cal.subscribe(sub, t0()).unwrap();
    let (r, _) = cal
        .create_reservation(
            ReservationRequest::new("zone-1", Amounts::new().with("instances", 6))
                .window(h(1), h(2)),
            t0(),
        )
        .unwrap();
    (cal, s, r)
}

fn crossing(s: SubscriptionId, at: DateTime<Utc>, available: i64, below: bool) -> Event {
    Event::CapacityThreshold {
        at,
        subscription: s,
        zone: ZoneId::new("zone-1"),
        dimension: Dimension::instances(),
        available,
        below,
    }
}

#[test]
fn dip_between_two_advances_is_reported_at_its_instants() {
    let (mut cal, s, r) = watched_dip();
    assert_eq!(cal.advance(t0()).unwrap(), vec![]);
    // The whole dip lies between the two advances: both crossings, each at its instant,
    // after the timers of that instant.
    assert_eq!(
        cal.advance(h(3)).unwrap(),
        vec![
            Event::ReservationStarted {
                at: h(1),
                reservation: r
            },
            crossing(s, h(1), 4, true),
            Event::ReservationEnded {
                at: h(2),
                reservation: r
            },
            crossing(s, h(2), 10, false),
        ]
    );
    assert!(!cal.state().subscriptions[0].2);
}

#[test]
fn expiry_release_is_a_crossing_at_the_expiry_instant() {
    let mut cal = promise_calendar(Policy::default());
    let sub = ThresholdSubscription {
        zone: ZoneId::new("zone-1"),
        provider: None,
        dimension: Dimension::instances(),
        below: 5,
    };
    let (s, _) = cal.subscribe(sub, t0()).unwrap();
    let (r, _) = cal
        .create_reservation(
            ReservationRequest::new("zone-1", Amounts::new().with("instances", 6))
                .window(h(1), h(10))
                .expiring(h(3)),
            t0(),
        )
        .unwrap();
    assert_eq!(
        cal.advance(h(5)).unwrap(),
        vec![
            Event::ReservationStarted {
                at: h(1),
                reservation: r
            },
            crossing(s, h(1), 4, true),
            Event::ReservationExpiringSoon {
                at: h(3) - TimeDelta::minutes(15),
                reservation: r,
                expiry: h(3),
                unallocated: Amounts::new().with("instances", 6),
            },
            Event::ReservationExpired {
                at: h(3),
                reservation: r,
                released: Amounts::new().with("instances", 6),
            },
            crossing(s, h(3), 10, false),
        ]
    );
}

#[test]
fn clock_moving_command_reports_crossings_before_its_own_events() {
    let (mut cal, s, r) = watched_dip();
    // A command at h3 moves the clock over the dip: the crossings come first, at their
    // instants; it fires no timers (only advance does).
    let (_, out) = cal
        .create_reservation(
            ReservationRequest::new("zone-1", Amounts::new().with("instances", 1)).ending(h(4)),
            h(3),
        )
        .unwrap();
    assert_eq!(
        out.events,
        vec![
            crossing(s, h(1), 4, true),
            crossing(s, h(2), 10, false),
            Event::ReservationStarted {
                at: h(3),
                reservation: ReservationId(2)
            },
        ]
    );
    // The timers the command passed over fire on the next advance; availability at the
    // clock did not change, so no crossing is repeated.
    assert_eq!(
        cal.advance(h(3)).unwrap(),
        vec![
            Event::ReservationStarted {
                at: h(1),
                reservation: r
            },
            Event::ReservationEnded {
                at: h(2),
                reservation: r
            },
        ]
    );
}

#[test]
fn failed_command_keeps_the_crossings_it_passed_for_later() {
    let (mut cal, s, _) = watched_dip();
    let err = cal.cancel_reservation(ReservationId(9), h(3)).unwrap_err();
    assert_eq!(
        err,
        CalendarError::UnknownReservation {
            id: ReservationId(9)
        }
    );
    assert_eq!(cal.clock(), Some(t0()));
    let ev = cal.advance(h(3)).unwrap();
    let crossings: Vec<&Event> = ev
        .iter()
        .filter(|e| matches!(e, Event::CapacityThreshold { .. }))
        .collect();
    assert_eq!(
        crossings,
        vec![&crossing(s, h(1), 4, true), &crossing(s, h(2), 10, false)]
    );
}

#[test]
fn change_made_by_a_command_at_now_is_evaluated_after_it() {
    let (mut cal, s, _) = watched_dip();
    // Removing 6 instances from now on: reported at now, after the command's own events.
    let out = cal
        .decrease_capacity(
            CapacityChange {
                pool: pool(),
                start: t0(),
                end: None,
                amounts: Amounts::new().with("instances", 6),
            },
            t0(),
        )
        .unwrap();
    assert!(matches!(
        out.events.first(),
        Some(Event::CommitmentAtRisk { .. })
    ));
    assert_eq!(out.events.last(), Some(&crossing(s, t0(), 4, true)));
    // A change that only lands in the future is reported when the clock gets there.
    let out = cal
        .increase_capacity(
            CapacityChange {
                pool: pool(),
                start: h(5),
                end: Some(h(6)),
                amounts: Amounts::new().with("instances", 6),
            },
            t0(),
        )
        .unwrap();
    assert!(out.events.is_empty());
    let ev = cal.advance(h(7)).unwrap();
    let crossings: Vec<&Event> = ev
        .iter()
        .filter(|e| matches!(e, Event::CapacityThreshold { .. }))
        .collect();
    assert_eq!(
        crossings,
        vec![&crossing(s, h(5), 10, false), &crossing(s, h(6), 4, true)]
    );
}

#[test]
fn time_never_goes_backwards() {
    let mut cal = promise_calendar(Policy::default());
    cal.advance(h(5)).unwrap();
    assert!(matches!(
        cal.advance(h(4)),
        Err(CalendarError::TimeWentBackwards { .. })
    ));
    assert!(matches!(
        cal.create_reservation(
            ReservationRequest::new("zone-1", Amounts::new().with("cores", 1)).window(h(4), h(6)),
            h(5)
        ),
        Err(CalendarError::StartInPast { .. })
    ));
    assert!(matches!(
        cal.create_reservation(
            ReservationRequest::new("nowhere", Amounts::new().with("cores", 1)).ending(h(6)),
            h(5)
        ),
        Err(CalendarError::UnknownZone { .. })
    ));
}

/// Found by the snapshot property test: a reservation whose start had passed, though no
/// `Advance` had marked it active yet, could move its start past its allocations' start.
#[test]
fn start_is_locked_once_passed_even_before_advance_marks_it_active() {
    let mut cal = promise_calendar(Policy::default());
    let req =
        ReservationRequest::new("zone-1", Amounts::new().with("cores", 2)).window(h(2), h(20));
    let (id, _) = cal.create_reservation(req, t0()).unwrap();
    let alloc = AllocationRequest::reserved(id, Amounts::new().with("cores", 1));
    cal.create_allocation(alloc, h(3)).unwrap();
    let moved =
        ReservationRequest::new("zone-1", Amounts::new().with("cores", 2)).window(h(4), h(20));
    assert_eq!(
        cal.update_reservation(id, moved, h(3)),
        Err(CalendarError::StartLocked { id })
    );
    // Without a start the update keeps the one that passed instead of restarting now.
    let same = ReservationRequest::new("zone-1", Amounts::new().with("cores", 3)).ending(h(20));
    cal.update_reservation(id, same, h(3)).unwrap();
    assert_eq!(cal.reservation(id).unwrap().start, h(2));
    let restored = Calendar::restore(cal.snapshot()).unwrap();
    assert_eq!(restored.state(), cal.state());
}
