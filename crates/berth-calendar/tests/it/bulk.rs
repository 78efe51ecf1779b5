//! `create_reservations` against one-by-one creates: same results, same state, same log.

use berth_calendar::chrono::TimeDelta;
use berth_calendar::*;
use proptest::prelude::*;

use crate::{h, t0};

/// A calendar with two pools in zone-1, a capacity dip in pool `a` (possibly below what is
/// committed), a few reservations and an unreserved allocation.
fn base(cores: u64, dip: u64, subscribe: bool) -> Calendar {
    let mut cal = Calendar::new(Policy {
        max_duration_hours: None,
        preemption: Preemption {
            cancel_pending_reservations: true,
            terminate_unreserved_allocations: false,
        },
        ..Policy::default()
    });
    for (p, c) in [("a", cores), ("b", cores / 2 + 1)] {
        cal.increase_capacity(
            CapacityChange {
                pool: PoolKey::new("zone-1", p),
                start: t0(),
                end: None,
                amounts: Amounts::new().with("cores", c).with("ram", 64 * c),
            },
            t0(),
        )
        .unwrap();
    }
    let _ = cal.create_reservation(
        ReservationRequest::new("zone-1", Amounts::new().with("cores", 2)).window(h(3), h(9)),
        t0(),
    );
    let _ = cal.create_allocation(
        AllocationRequest::unreserved("zone-1", Amounts::new().with("cores", 1)).ending(h(5)),
        t0(),
    );
    let _ = cal.decrease_capacity(
        CapacityChange {
            pool: PoolKey::new("zone-1", "a"),
            start: h(40),
            end: Some(h(44)),
            amounts: Amounts::new().with("cores", dip),
        },
        t0(),
    );
    if subscribe {
        let sub = ThresholdSubscription {
            zone: ZoneId::new("zone-1"),
            provider: None,
            dimension: Dimension::vcpu(),
            below: cores / 2,
        };
        cal.subscribe(sub, t0()).unwrap();
    }
    cal
}

/// Mostly valid requests; some start in the past, name an unknown dimension or pool, or
/// come with high priority (preemption is on).
fn request() -> impl Strategy<Value = ReservationRequest> {
    (
        0i64..60,
        1i64..20,
        0u64..6,
        0u64..200,
        0u8..20,
        prop::bool::weighted(0.1),
    )
        .prop_map(|(s, len, cores, ram, kind, open)| {
            let amounts = Amounts::new().with("cores", cores).with("ram", ram);
            let mut r = ReservationRequest::new("zone-1", amounts).starting(h(s));
            if !open {
                r = r.ending(h(s + len));
            }
            match kind {
                0 => r.start = Some(t0() - TimeDelta::hours(1)),
                1 => r.amounts = r.amounts.with("gpus", 1),
                2 => r = r.provider("b"),
                3 => r = r.provider("nowhere"),
                4 => r = r.priority(Priority::High),
                5 => r.start = Some(t0()),
                _ => {}
            }
            r
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn bulk_load_equals_one_by_one(
        cores in 1u64..80,
        dip in 0u64..4,
        subscribe in prop::bool::weighted(0.2),
        batch in prop::collection::vec(request(), 0..40),
        late in prop::bool::ANY,
        clean in prop::bool::ANY,
    ) {
        // Half the batches hold only valid requests, so the sorted path is taken often.
        let batch: Vec<ReservationRequest> = batch
            .into_iter()
            .filter(|r| {
                !clean
                    || (r.start >= Some(h(1))
                        && r.amounts.get("gpus") == 0
                        && r.provider.as_ref().is_none_or(|p| p.0 != "nowhere"))
            })
            .collect();
        let now = if late { h(1) } else { t0() };
        let mut bulk = base(cores, dip, subscribe);
        let mut one = bulk.clone();
        let got = bulk.create_reservations(batch.clone(), now);
        let want: Vec<_> = batch.iter().map(|r| one.create_reservation(r.clone(), now)).collect();
        prop_assert_eq!(&got, &want);
        prop_assert_eq!(bulk.state(), one.state());
        // Both keep behaving alike afterwards (same profiles, timers and indexes).
        let probe = ReservationRequest::new("zone-1", Amounts::new().with("cores", 3)).window(h(2), h(50));
        prop_assert_eq!(bulk.check_reservation(&probe, now), one.check_reservation(&probe, now));
        if let Some(Ok((id, _))) = got.first() {
            prop_assert_eq!(bulk.cancel_reservation(*id, now), one.cancel_reservation(*id, now));
        }
        prop_assert_eq!(bulk.advance(h(45)), one.advance(h(45)));
        prop_assert_eq!(bulk.state(), one.state());
    }
}

#[test]
fn a_load_that_fits_is_replayable_from_single_creates() {
    let mut cal = base(1_000, 0, false);
    let log_base = cal.state();
    let batch: Vec<ReservationRequest> = (0..500i64)
        .map(|i| {
            ReservationRequest::new("zone-1", Amounts::new().with("cores", 1 + i as u64 % 3))
                .window(h(i % 50), h(i % 50 + 1 + i % 7))
        })
        .collect();
    let results = cal.create_reservations(batch.clone(), t0());
    assert!(results.iter().all(|r| r.is_ok()));
    let ids: Vec<u64> = results.iter().flatten().map(|(id, _)| id.0).collect();
    assert_eq!(ids, (2..502).collect::<Vec<u64>>());
    let mut again = base(1_000, 0, false);
    assert_eq!(again.state(), log_base);
    for r in batch {
        again.create_reservation(r, t0()).unwrap();
    }
    assert_eq!(cal.state(), again.state());
}

#[test]
fn a_load_that_does_not_fit_together_is_admitted_in_order() {
    let mut cal = base(10, 0, false);
    // Each fits alone in pool a; together the third does not, and goes to pool b.
    let r = |c: u64| {
        ReservationRequest::new("zone-1", Amounts::new().with("cores", c)).window(h(20), h(30))
    };
    let got = cal.create_reservations(vec![r(4), r(5), r(4), r(9)], t0());
    let pools: Vec<Option<String>> = got
        .iter()
        .map(|x| match x {
            Ok((_, o)) => match &o.applied {
                Applied::ReservationCreated { pool, .. } => Some(pool.provider.0.clone()),
                _ => None,
            },
            Err(_) => None,
        })
        .collect();
    let some = |s: &str| Some(s.to_string());
    assert_eq!(pools, vec![some("a"), some("a"), some("b"), None]);
    assert!(matches!(got[3], Err(CalendarError::Conflict(_))));
}
