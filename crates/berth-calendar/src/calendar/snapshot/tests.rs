//! Restore: the rebuilt internals equal the original's, and one test per problem a
//! hand-edited snapshot can have; mutated JSON never makes restore panic.

use chrono::{TimeDelta, TimeZone};
use proptest::prelude::*;

use super::*;
use crate::model::{AllocationRequest, CapacityChange, ReservationRequest};
use crate::policy::Preemption;
use crate::types::ZoneId;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

fn h(n: i64) -> DateTime<Utc> {
    t0() + TimeDelta::hours(n)
}

fn key() -> PoolKey {
    PoolKey::new("z", "p")
}

fn cores(n: u64) -> Amounts {
    Amounts::new().with("cores", n)
}

/// r1 active [t0, h10) expiring at h5 with a1 drawing 2 cores; r2 (low, future) preempted by
/// r3; a2 unreserved until h8; a capacity dip over [h3, h4) flags what crosses it; one
/// subscription below its threshold (7 cores free at the clock h1, threshold 8).
fn base() -> Calendar {
    let mut cal = Calendar::new(Policy {
        max_duration_hours: None,
        expiry_notice_seconds: 600,
        preemption: Preemption {
            cancel_pending_reservations: true,
            terminate_unreserved_allocations: false,
        },
        ..Policy::default()
    });
    let steps = [
        cal.increase_capacity(
            CapacityChange {
                pool: key(),
                start: t0(),
                end: None,
                amounts: cores(12).with("ram", 100),
            },
            t0(),
        )
        .is_ok(),
        cal.subscribe(
            ThresholdSubscription {
                zone: ZoneId::new("z"),
                provider: None,
                dimension: Dimension::vcpu(),
                below: 8,
            },
            t0(),
        )
        .is_ok(),
        cal.create_reservation(
            ReservationRequest::new("z", cores(4).with("ram", 10))
                .ending(h(10))
                .expiring(h(5)),
            t0(),
        )
        .is_ok(),
        cal.create_allocation(
            AllocationRequest::reserved(ReservationId(1), cores(2)),
            t0(),
        )
        .is_ok(),
        cal.create_reservation(
            ReservationRequest::new("z", cores(3))
                .window(h(2), h(6))
                .priority(Priority::Low),
            t0(),
        )
        .is_ok(),
        cal.create_reservation(
            ReservationRequest::new("z", cores(6))
                .window(h(2), h(4))
                .priority(Priority::High),
            t0(),
        )
        .is_ok(),
        cal.create_allocation(
            AllocationRequest::unreserved("z", cores(1))
                .priority(Priority::Normal)
                .ending(h(8)),
            t0(),
        )
        .is_ok(),
        cal.decrease_capacity(
            CapacityChange {
                pool: key(),
                start: h(3),
                end: Some(h(4)),
                amounts: cores(8),
            },
            t0(),
        )
        .is_ok(),
        cal.advance(h(1)).is_ok(),
    ];
    assert_eq!(steps, [true; 9]);
    cal
}

fn restore_err(s: Snapshot) -> CalendarError {
    match Calendar::restore(s) {
        Ok(_) => panic!("restore accepted a broken snapshot"),
        Err(e) => e,
    }
}

fn invalid(record: SnapshotRecord, problem: SnapshotProblem) -> CalendarError {
    CalendarError::InvalidSnapshot { record, problem }
}

fn res(n: u64) -> SnapshotRecord {
    SnapshotRecord::Reservation(ReservationId(n))
}

fn alloc(n: u64) -> SnapshotRecord {
    SnapshotRecord::Allocation(AllocationId(n))
}

fn pool() -> SnapshotRecord {
    SnapshotRecord::Pool(key())
}

fn inconsistent(field: &'static str) -> SnapshotProblem {
    SnapshotProblem::Inconsistent { field }
}

#[test]
fn base_state_is_what_the_tests_assume() {
    let cal = base();
    let s = cal.snapshot();
    assert_eq!(s.reservations.len(), 3);
    assert_eq!(s.reservations[1].state, ReservationState::Cancelled);
    assert_eq!(
        s.reservations[1].cancel_reason,
        Some(CancelReason::Preempted {
            by: ReservationId(3)
        })
    );
    assert!(s.reservations[0].at_risk && s.reservations[2].at_risk);
    assert_eq!(s.allocations.len(), 2);
    assert!(s.subscriptions[0].below);
}

#[test]
fn restore_rebuilds_identical_internals() {
    let cal = base();
    let back = Calendar::restore(cal.snapshot()).unwrap();
    assert_eq!(back.timers, cal.timers);
    assert_eq!(back.dims, cal.dims);
    assert_eq!(back.pool_ix, cal.pool_ix);
    for (a, b) in back.pools.iter().zip(&cal.pools) {
        assert_eq!(a.live, b.live);
        assert_eq!(a.increases, b.increases);
        assert_eq!(a.history, b.history);
        assert_eq!(a.profiles.len(), b.profiles.len());
        for ((da, pa), (db, pb)) in a.profiles.iter().zip(&b.profiles) {
            assert_eq!(da, db);
            assert_eq!(pa.entries(), pb.entries());
            assert_eq!(pa.check(), Ok(()));
        }
    }
    assert_eq!(back.state(), cal.state());
}

#[test]
fn unknown_format_is_refused() {
    let mut s = base().snapshot();
    s.format = 2;
    assert_eq!(
        restore_err(s),
        CalendarError::SnapshotFormat {
            found: 2,
            expected: 1
        }
    );
}

#[test]
fn records_without_a_clock_are_refused() {
    let mut s = base().snapshot();
    s.clock = None;
    assert_eq!(
        restore_err(s),
        invalid(SnapshotRecord::Calendar, inconsistent("clock"))
    );
}

#[test]
fn duplicated_dimension_is_refused() {
    let mut s = base().snapshot();
    s.dimensions.push(Dimension::vcpu());
    assert_eq!(
        restore_err(s),
        invalid(
            SnapshotRecord::Dimension(Dimension::vcpu()),
            SnapshotProblem::Duplicate
        )
    );
}

#[test]
fn duplicated_pool_is_refused() {
    let mut s = base().snapshot();
    s.pools.push(s.pools[0].clone());
    assert_eq!(restore_err(s), invalid(pool(), SnapshotProblem::Duplicate));
}

#[test]
fn capacity_change_problems_are_named() {
    let gpu = Dimension::new("gpu");
    let mut s = base().snapshot();
    s.pools[0].capacity[0].dimension = gpu.clone();
    assert_eq!(
        restore_err(s),
        invalid(pool(), SnapshotProblem::UnknownDimension { dimension: gpu })
    );
    let mut s = base().snapshot();
    s.pools[0].capacity[0].end = Some(t0());
    assert_eq!(
        restore_err(s),
        invalid(pool(), SnapshotProblem::EmptyWindow)
    );
    let mut s = base().snapshot();
    s.pools[0].capacity[0].change = 0;
    // The first change is memory's: dimensions are in name order.
    let zero = SnapshotProblem::ZeroAmount {
        dimension: Dimension::ram_mib(),
    };
    assert_eq!(restore_err(s), invalid(pool(), zero));
    let mut s = base().snapshot();
    s.pools[0].capacity[0].change = i64::MIN;
    let big = SnapshotProblem::QuantityTooLarge {
        dimension: Dimension::ram_mib(),
        value: 1 << 63,
        max: MAX_QUANTITY,
    };
    assert_eq!(restore_err(s), invalid(pool(), big));
}

#[test]
fn pool_total_above_the_limit_is_refused() {
    let mut s = base().snapshot();
    let step = CapacitySnap {
        dimension: Dimension::vcpu(),
        start: t0(),
        end: Some(h(1)),
        change: MAX_QUANTITY as i64,
    };
    for _ in 0..(MAX_POOL_TOTAL / MAX_QUANTITY) {
        s.pools[0].capacity.push(step.clone());
    }
    let problem = SnapshotProblem::QuantityTooLarge {
        dimension: Dimension::vcpu(),
        value: MAX_POOL_TOTAL + 12,
        max: MAX_POOL_TOTAL,
    };
    assert_eq!(restore_err(s), invalid(pool(), problem));
}

#[test]
fn negative_capacity_is_refused() {
    let mut s = base().snapshot();
    s.pools[0].capacity.push(CapacitySnap {
        dimension: Dimension::new("ram"),
        start: h(20),
        end: Some(h(21)),
        change: -101,
    });
    let problem = SnapshotProblem::NegativeCapacity {
        dimension: Dimension::new("ram"),
        at: h(20),
    };
    assert_eq!(restore_err(s), invalid(pool(), problem));
}

#[test]
fn unflagged_excess_is_refused() {
    let mut s = base().snapshot();
    // The dip [h3, h4) holds r1, r3 and a2; with no record flagged the excess is unexplained.
    for r in &mut s.reservations {
        r.at_risk = false;
    }
    for a in &mut s.allocations {
        a.at_risk = false;
    }
    let problem = SnapshotProblem::OverCapacity {
        dimension: Dimension::vcpu(),
        at: h(3),
    };
    assert_eq!(restore_err(s), invalid(pool(), problem));
}

#[test]
fn committed_level_above_the_limit_is_refused() {
    let mut s = base().snapshot();
    let mut r = s.reservations[2].clone();
    r.amounts = cores(MAX_QUANTITY);
    r.state = ReservationState::Initialized;
    r.cancel_reason = None;
    r.at_risk = true;
    r.start = h(20);
    r.end = Some(h(21));
    r.expiry = None;
    r.notice = None;
    for i in 0..(MAX_POOL_TOTAL / MAX_QUANTITY + 1) {
        s.last_reservation += 1;
        r.id = ReservationId(s.last_reservation);
        s.reservations.push(r.clone());
        assert!(i < 2000);
    }
    let problem = SnapshotProblem::QuantityTooLarge {
        dimension: Dimension::vcpu(),
        value: MAX_POOL_TOTAL + MAX_QUANTITY,
        max: MAX_POOL_TOTAL,
    };
    assert_eq!(restore_err(s), invalid(pool(), problem));
}

#[test]
fn reservation_ids_are_checked_against_the_counter_and_each_other() {
    let mut s = base().snapshot();
    s.reservations[2].id = ReservationId(4);
    assert_eq!(
        restore_err(s),
        invalid(res(4), SnapshotProblem::IdOutOfRange { counter: 3 })
    );
    let mut s = base().snapshot();
    s.reservations[0].id = ReservationId(0);
    assert_eq!(
        restore_err(s),
        invalid(res(0), SnapshotProblem::IdOutOfRange { counter: 3 })
    );
    let mut s = base().snapshot();
    s.reservations[1].id = ReservationId(1);
    assert_eq!(restore_err(s), invalid(res(1), SnapshotProblem::Duplicate));
}

#[test]
fn reservation_references_are_checked() {
    let elsewhere = PoolKey::new("z", "q");
    let mut s = base().snapshot();
    s.reservations[0].pool = elsewhere.clone();
    assert_eq!(
        restore_err(s),
        invalid(res(1), SnapshotProblem::UnknownPool { pool: elsewhere })
    );
    let gpu = Dimension::new("gpu");
    let mut s = base().snapshot();
    s.reservations[0].amounts.set(gpu.clone(), 1);
    assert_eq!(
        restore_err(s),
        invalid(res(1), SnapshotProblem::UnknownDimension { dimension: gpu })
    );
    let mut s = base().snapshot();
    s.reservations[1].cancel_reason = Some(CancelReason::Preempted {
        by: ReservationId(9),
    });
    assert_eq!(
        restore_err(s),
        invalid(
            res(2),
            SnapshotProblem::UnknownReservation {
                id: ReservationId(9)
            }
        )
    );
}

#[test]
fn reservation_amounts_are_checked() {
    let mut s = base().snapshot();
    s.reservations[0].amounts.set(Dimension::new("ram"), 0);
    let zero = SnapshotProblem::ZeroAmount {
        dimension: Dimension::new("ram"),
    };
    assert_eq!(restore_err(s), invalid(res(1), zero));
    let mut s = base().snapshot();
    s.reservations[0]
        .released
        .set(Dimension::vcpu(), MAX_QUANTITY + 1);
    let big = SnapshotProblem::QuantityTooLarge {
        dimension: Dimension::vcpu(),
        value: MAX_QUANTITY + 1,
        max: MAX_QUANTITY,
    };
    assert_eq!(restore_err(s), invalid(res(1), big));
}

#[test]
fn reservation_windows_are_checked() {
    let mut s = base().snapshot();
    s.reservations[0].end = Some(t0());
    assert_eq!(
        restore_err(s),
        invalid(res(1), SnapshotProblem::EmptyWindow)
    );
    let mut s = base().snapshot();
    s.reservations[0].expiry = Some(h(11));
    let outside = SnapshotProblem::OutsideWindow { field: "expiry" };
    assert_eq!(restore_err(s), invalid(res(1), outside));
    let mut s = base().snapshot();
    s.reservations[0].notice = Some(h(6));
    let outside = SnapshotProblem::OutsideWindow { field: "notice" };
    assert_eq!(restore_err(s), invalid(res(1), outside));
}

#[test]
fn reservation_state_fields_are_checked() {
    let mut s = base().snapshot();
    s.reservations[1].cancel_reason = None;
    assert_eq!(
        restore_err(s),
        invalid(res(2), inconsistent("cancel_reason"))
    );
    let mut s = base().snapshot();
    s.reservations[2].state = ReservationState::Active;
    assert_eq!(restore_err(s), invalid(res(3), inconsistent("state")));
    let mut s = base().snapshot();
    s.reservations[0].created_on = h(1);
    s.reservations[0].modified_on = t0();
    assert_eq!(restore_err(s), invalid(res(1), inconsistent("created_on")));
    let mut s = base().snapshot();
    s.reservations[0].modified_on = h(2);
    let after = SnapshotProblem::AfterClock {
        field: "modified_on",
    };
    assert_eq!(restore_err(s), invalid(res(1), after));
}

#[test]
fn reservation_allocations_are_checked() {
    let mut s = base().snapshot();
    s.reservations[0].allocations.clear();
    assert_eq!(restore_err(s), invalid(res(1), inconsistent("allocations")));
    let mut s = base().snapshot();
    s.reservations[0].allocations.push(AllocationId(1));
    assert_eq!(restore_err(s), invalid(res(1), inconsistent("allocations")));
    let mut s = base().snapshot();
    s.reservations[0].allocated = cores(1);
    assert_eq!(restore_err(s), invalid(res(1), inconsistent("allocated")));
    // Live allocations above the reservation's amounts.
    let mut s = base().snapshot();
    s.allocations[0].amounts = cores(5);
    s.reservations[0].allocated = cores(5);
    let over = SnapshotProblem::ExceedsReservation {
        dimension: Dimension::vcpu(),
        allocated: 5,
        reserved: 4,
    };
    assert_eq!(restore_err(s), invalid(res(1), over));
}

#[test]
fn allocation_ids_are_checked() {
    let mut s = base().snapshot();
    s.allocations[1].id = AllocationId(3);
    assert_eq!(
        restore_err(s),
        invalid(alloc(3), SnapshotProblem::IdOutOfRange { counter: 2 })
    );
    let mut s = base().snapshot();
    s.allocations[1].id = AllocationId(1);
    assert_eq!(
        restore_err(s),
        invalid(alloc(1), SnapshotProblem::Duplicate)
    );
}

#[test]
fn allocation_references_are_checked() {
    let mut s = base().snapshot();
    s.allocations[0].reservation = Some(ReservationId(7));
    assert_eq!(
        restore_err(s),
        invalid(
            alloc(1),
            SnapshotProblem::UnknownReservation {
                id: ReservationId(7)
            }
        )
    );
    let mut s = base().snapshot();
    s.allocations[0].reservation = Some(ReservationId(2));
    assert_eq!(restore_err(s), invalid(alloc(1), inconsistent("state")));
    let mut s = base().snapshot();
    s.allocations[1].state = AllocationState::Terminated;
    s.allocations[1].termination = Some(TerminationReason::Preempted {
        by: ReservationId(8),
    });
    assert_eq!(
        restore_err(s),
        invalid(
            alloc(2),
            SnapshotProblem::UnknownReservation {
                id: ReservationId(8)
            }
        )
    );
}

#[test]
fn allocation_fields_are_checked() {
    let mut s = base().snapshot();
    s.allocations[1].end = Some(t0());
    assert_eq!(
        restore_err(s),
        invalid(alloc(2), SnapshotProblem::EmptyWindow)
    );
    let mut s = base().snapshot();
    s.allocations[1].requested_end = Some(h(7));
    assert_eq!(restore_err(s), invalid(alloc(2), inconsistent("end")));
    let mut s = base().snapshot();
    s.allocations[0].end = Some(h(9));
    assert_eq!(restore_err(s), invalid(alloc(1), inconsistent("end")));
    let mut s = base().snapshot();
    s.allocations[1].start = h(2);
    let after = SnapshotProblem::AfterClock { field: "start" };
    assert_eq!(restore_err(s), invalid(alloc(2), after));
    let mut s = base().snapshot();
    s.allocations[1].termination = Some(TerminationReason::LifetimeEnded);
    assert_eq!(
        restore_err(s),
        invalid(alloc(2), inconsistent("termination"))
    );
    let mut s = base().snapshot();
    s.allocations[1].priority = Priority::High;
    assert_eq!(restore_err(s), invalid(alloc(2), inconsistent("priority")));
    let mut s = base().snapshot();
    s.allocations[0].priority = Priority::Low;
    assert_eq!(restore_err(s), invalid(alloc(1), inconsistent("priority")));
    let mut s = base().snapshot();
    s.allocations[1].amounts = Amounts::new();
    s.allocations[1].amounts.set(Dimension::vcpu(), 0);
    let zero = SnapshotProblem::ZeroAmount {
        dimension: Dimension::vcpu(),
    };
    assert_eq!(restore_err(s), invalid(alloc(2), zero));
}

#[test]
fn allocation_in_another_pool_than_its_reservation_is_refused() {
    let mut cal = base();
    let other = CapacityChange {
        pool: PoolKey::new("z", "q"),
        start: t0(),
        end: None,
        amounts: cores(4),
    };
    assert!(cal.increase_capacity(other, h(1)).is_ok());
    let mut s = cal.snapshot();
    s.allocations[0].pool = PoolKey::new("z", "q");
    assert_eq!(restore_err(s), invalid(alloc(1), inconsistent("pool")));
}

#[test]
fn subscription_problems_are_named() {
    let s1 = SnapshotRecord::Subscription(SubscriptionId(1));
    let mut s = base().snapshot();
    s.subscriptions[0].id = SubscriptionId(2);
    assert_eq!(
        restore_err(s),
        invalid(
            SnapshotRecord::Subscription(SubscriptionId(2)),
            SnapshotProblem::IdOutOfRange { counter: 1 }
        )
    );
    let mut s = base().snapshot();
    s.subscriptions.push(s.subscriptions[0].clone());
    assert_eq!(
        restore_err(s),
        invalid(s1.clone(), SnapshotProblem::Duplicate)
    );
    let mut s = base().snapshot();
    // At h1, 12 cores less r1 (4) and a2 (1): 7 available, below the threshold of 8.
    s.subscriptions[0].below = false;
    assert_eq!(
        restore_err(s),
        invalid(s1, SnapshotProblem::ThresholdState { available: 7 })
    );
}

#[test]
fn negative_amounts_and_truncated_json_fail_to_deserialize() {
    let json = serde_json::to_string(&base().snapshot()).unwrap_or_default();
    let negative = json.replacen(r#""vcpu":4"#, r#""vcpu":-4"#, 1);
    assert_ne!(negative, json);
    assert!(serde_json::from_str::<Snapshot>(&negative).is_err());
    for cut in [1, json.len() / 3, json.len() - 1] {
        assert!(serde_json::from_str::<Snapshot>(&json[..cut]).is_err());
    }
    let unknown = json.replacen(r#""format":1,"#, r#""format":1,"extra":0,"#, 1);
    assert!(serde_json::from_str::<Snapshot>(&unknown).is_err());
}

fn leaves(v: &serde_json::Value) -> usize {
    match v {
        serde_json::Value::Array(items) => items.iter().map(leaves).sum(),
        serde_json::Value::Object(map) => map.values().map(leaves).sum(),
        _ => 1,
    }
}

/// Replaces the `pick`-th leaf (in document order) of `v` with `with`.
fn replace_leaf(v: &mut serde_json::Value, pick: &mut usize, with: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Array(items) => items.iter_mut().any(|x| replace_leaf(x, pick, with)),
        serde_json::Value::Object(map) => map.values_mut().any(|x| replace_leaf(x, pick, with)),
        leaf => {
            if *pick == 0 {
                *leaf = with.clone();
                return true;
            }
            *pick -= 1;
            false
        }
    }
}

fn leaf_value() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        any::<i64>().prop_map(serde_json::Value::from),
        any::<u64>().prop_map(serde_json::Value::from),
        (0u64..20).prop_map(serde_json::Value::from),
        (-3i64..3).prop_map(serde_json::Value::from),
        prop::bool::ANY.prop_map(serde_json::Value::from),
        Just(serde_json::Value::Null),
        prop::sample::select(vec![
            "2030-01-01T02:00:00Z",
            "2029-12-31T23:00:00Z",
            "+262000-01-01T00:00:00Z",
            "cores",
            "ram",
            "gpu",
            "z",
            "q",
            "active",
            "expired",
            "cancelled",
            "terminated",
        ])
        .prop_map(serde_json::Value::from),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Hand edits: any leaf replaced by any value. Deserializing may fail; restoring what
    /// deserializes returns a calendar or an error, and a restored calendar keeps working.
    #[test]
    fn edited_snapshots_never_panic(edits in prop::collection::vec((any::<usize>(), leaf_value()), 1..4)) {
        let mut v = serde_json::to_value(base().snapshot()).unwrap_or_default();
        let n = leaves(&v);
        for (pick, with) in &edits {
            let mut pick = *pick % n;
            replace_leaf(&mut v, &mut pick, with);
        }
        if let Ok(s) = serde_json::from_value::<Snapshot>(v)
            && let Ok(mut cal) = Calendar::restore(s.clone())
        {
            prop_assert_eq!(cal.snapshot(), s);
            if cal.advance(h(30)).is_ok() {
                let _ = cal.create_reservation(ReservationRequest::new("z", cores(1)).window(h(31), h(32)), h(30));
                prop_assert_eq!(cal.state().clock, Some(h(30)));
            }
        }
    }
}
