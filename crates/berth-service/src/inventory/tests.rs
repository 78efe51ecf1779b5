//! The reconcile of one calendar against a naive oracle: random calendars (inventory pools
//! and others, windowed changes by hand, reservations, earlier declarations and
//! retirements), random inventories; the pools before and after must differ exactly as the
//! inventory says, and the diff must say so.

use std::collections::{BTreeMap, BTreeSet};

use berth_calendar::{
    Amounts, Applied, Calendar, CapacityChange, CapacityQuery, Command, Declaration, Dimension,
    LogEntry, Policy, PoolKey, RecordRef, ReservationRequest, Window,
};
use chrono::{DateTime, TimeZone, Utc};
use proptest::prelude::*;

use super::*;

const INV: &str = "inventory";
const ZONES: [&str; 4] = ["z0", "z1", "z2", "z3"];
const DIMS: [&str; 2] = ["vcpu", "ram_mib"];

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default()
}

fn h(n: i64) -> DateTime<Utc> {
    t0() + chrono::TimeDelta::hours(n)
}

#[derive(Debug, Clone)]
enum Op {
    /// By hand: `increase` or decrease `zone`'s pool of `provider` over `[start, start+len)`.
    Change {
        increase: bool,
        zone: usize,
        other: bool,
        start: i64,
        len: Option<i64>,
        vcpu: u64,
        ram: u64,
    },
    Reserve {
        zone: usize,
        other: bool,
        start: i64,
        len: i64,
        vcpu: u64,
    },
    Declare {
        zone: usize,
        vcpu: Option<u64>,
        ram: Option<u64>,
    },
    Retire(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<bool>(), 0usize..4, prop::bool::weighted(0.3), 0i64..20, prop::option::weighted(0.6, 1i64..10), 0u64..12, 0u64..8)
            .prop_map(|(increase, zone, other, start, len, vcpu, ram)| Op::Change { increase, zone, other, start, len, vcpu, ram }),
        3 => (0usize..4, prop::bool::weighted(0.2), 0i64..20, 1i64..30, 1u64..8)
            .prop_map(|(zone, other, start, len, vcpu)| Op::Reserve { zone, other, start, len, vcpu }),
        2 => (0usize..4, prop::option::weighted(0.8, 0u64..14), prop::option::weighted(0.5, 0u64..9))
            .prop_map(|(zone, vcpu, ram)| Op::Declare { zone, vcpu, ram }),
        1 => (0usize..4).prop_map(Op::Retire),
    ]
}

/// An inventory: per zone absent, or its capacity (possibly empty).
fn inventory() -> impl Strategy<Value = InventoryPools> {
    prop::collection::vec(
        prop::option::weighted(
            0.7,
            (
                prop::option::weighted(0.8, 0u64..14),
                prop::option::weighted(0.5, 0u64..9),
            ),
        ),
        4,
    )
    .prop_map(|zones| {
        let mut inv = InventoryPools::new(INV);
        for (z, entry) in ZONES.iter().zip(zones) {
            if let Some((vcpu, ram)) = entry {
                let mut a = Amounts::new();
                if let Some(v) = vcpu {
                    a.set(Dimension::new("vcpu"), v);
                }
                if let Some(r) = ram {
                    a.set(Dimension::new("ram_mib"), r);
                }
                inv.pools.insert((*z).to_owned(), a);
            }
        }
        inv
    })
}

/// Applies `ops` from `t0` (one hour apart; refusals are skipped) and returns the log.
fn build(ops: &[Op]) -> (Calendar, Vec<LogEntry>) {
    let mut cal = Calendar::new(Policy::default());
    let mut log = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let now = h(i as i64);
        let provider = |other: bool| if other { "other" } else { INV };
        let cmd = match op {
            Op::Change {
                increase,
                zone,
                other,
                start,
                len,
                vcpu,
                ram,
            } => {
                let c = CapacityChange {
                    pool: PoolKey::new(ZONES[*zone], provider(*other)),
                    start: now + chrono::TimeDelta::hours(*start),
                    end: len.map(|l| now + chrono::TimeDelta::hours(start + l)),
                    amounts: Amounts::new().with("vcpu", *vcpu).with("ram_mib", *ram),
                };
                if *increase {
                    Command::IncreaseCapacity(c)
                } else {
                    Command::DecreaseCapacity(c)
                }
            }
            Op::Reserve {
                zone,
                other,
                start,
                len,
                vcpu,
            } => Command::CreateReservation(
                ReservationRequest::new(ZONES[*zone], Amounts::new().with("vcpu", *vcpu))
                    .provider(provider(*other))
                    .window(
                        now + chrono::TimeDelta::hours(*start),
                        now + chrono::TimeDelta::hours(start + len),
                    ),
            ),
            Op::Declare { zone, vcpu, ram } => {
                let mut amounts = Amounts::new();
                if let Some(v) = vcpu {
                    amounts.set(Dimension::new("vcpu"), *v);
                }
                if let Some(r) = ram {
                    amounts.set(Dimension::new("ram_mib"), *r);
                }
                Command::DeclareCapacity(Declaration {
                    pool: PoolKey::new(ZONES[*zone], INV),
                    amounts,
                })
            }
            Op::Retire(zone) => Command::RetirePool {
                pool: PoolKey::new(ZONES[*zone], INV),
            },
        };
        if cal.apply(cmd.clone(), now).is_ok() {
            log.push(LogEntry {
                at: now,
                command: cmd,
            });
        }
    }
    (cal, log)
}

/// Every pool's capacity per dimension at each instant of `at`, brute force from timelines.
fn levels(
    cal: &Calendar,
    at: &BTreeSet<DateTime<Utc>>,
) -> BTreeMap<(PoolKey, String, DateTime<Utc>), i64> {
    let mut out = BTreeMap::new();
    let report = cal
        .query_capacity(&CapacityQuery {
            zone: None,
            provider: None,
            window: Window::open(h(-1000)),
            timeline: true,
        })
        .unwrap_or_else(|e| panic!("{e}"));
    for p in report.pools {
        for t in at {
            let step = p.timeline.iter().rev().find(|s| s.at <= *t);
            for d in DIMS {
                let v = step
                    .and_then(|s| s.levels.get(&Dimension::new(d)))
                    .map_or(0, |l| l.total);
                out.insert((p.pool.clone(), d.to_owned(), *t), v);
            }
        }
    }
    out
}

/// Every instant where some pool's capacity may change: the timelines' steps, and `now`.
fn instants(cals: &[&Calendar], now: DateTime<Utc>) -> BTreeSet<DateTime<Utc>> {
    let mut at = BTreeSet::from([now, h(-1000)]);
    for cal in cals {
        let report = cal
            .query_capacity(&CapacityQuery {
                zone: None,
                provider: None,
                window: Window::open(h(-1000)),
                timeline: true,
            })
            .unwrap_or_else(|e| panic!("{e}"));
        for p in report.pools {
            at.extend(p.timeline.iter().map(|s| s.at));
        }
    }
    at
}

fn wanted(inv: &InventoryPools, zone: &str) -> Option<BTreeMap<Dimension, u64>> {
    inv.pools.get(zone).map(|a| {
        a.iter()
            .filter(|(_, v)| **v > 0)
            .map(|(d, v)| (d.clone(), *v))
            .collect()
    })
}

fn check(ops: Vec<Op>, inv: InventoryPools) -> Result<(), TestCaseError> {
    let (before, mut log) = build(&ops);
    let now = h(ops.len() as i64);
    let mut after = before.clone();
    let all = |_: &PoolKey| true;
    let r = reconcile_calendar(&mut after, &inv, &all, None, now)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;

    let declared_before: BTreeMap<String, berth_calendar::DeclaredPool> = before
        .declared_pools(Some(&ProviderId::new(INV)))
        .into_iter()
        .map(|d| (d.pool.zone.0.clone(), d))
        .collect();
    let at = instants(&[&before, &after], now);
    let lv_before = levels(&before, &at);
    let lv_after = levels(&after, &at);
    let mut want_added = Vec::new();
    let mut want_changed = Vec::new();
    let mut want_removed = Vec::new();
    let mut want_unchanged = 0;
    for zone in ZONES {
        let pool = PoolKey::new(zone, INV);
        let had = declared_before.get(zone).filter(|d| d.retired.is_none());
        let want = wanted(&inv, zone);
        // The delta per dimension the oracle expects from now on; `None`: retired.
        let delta: Option<BTreeMap<String, i64>> = match (had, &want) {
            (None, None) => Some(BTreeMap::new()),
            (None, Some(w)) => {
                if !w.is_empty() {
                    want_added.push(zone);
                }
                Some(w.iter().map(|(d, v)| (d.0.clone(), *v as i64)).collect())
            }
            (Some(_), None) => {
                want_removed.push(zone);
                None
            }
            (Some(have), Some(w)) => {
                let dims: BTreeSet<&Dimension> = have.capacity.0.keys().chain(w.keys()).collect();
                let d: BTreeMap<String, i64> = dims
                    .into_iter()
                    .map(|d| {
                        let old = have.capacity.0.get(d).copied().unwrap_or(0) as i64;
                        let new = w.get(d).copied().unwrap_or(0) as i64;
                        (d.0.clone(), new - old)
                    })
                    .filter(|(_, v)| *v != 0)
                    .collect();
                if d.is_empty() {
                    want_unchanged += 1;
                } else {
                    want_changed.push(zone);
                }
                Some(d)
            }
        };
        for t in &at {
            for dim in DIMS {
                let k = (pool.clone(), dim.to_owned(), *t);
                let old = lv_before.get(&k).copied().unwrap_or(0);
                let new = lv_after.get(&k).copied().unwrap_or(0);
                let expect = if *t < now {
                    old
                } else {
                    match &delta {
                        None => 0,
                        Some(d) => (old + d.get(dim).copied().unwrap_or(0)).max(0),
                    }
                };
                prop_assert_eq!(new, expect, "{} {} at {}", pool, dim, t);
            }
        }
        // The pool as declared afterwards.
        let now_declared = after
            .declared_pools(Some(&ProviderId::new(INV)))
            .into_iter()
            .find(|d| d.pool == pool);
        match (&want, &now_declared) {
            (Some(w), Some(d)) if !w.is_empty() || had.is_some() => {
                prop_assert_eq!(&d.capacity.0, w);
                prop_assert!(d.declared && d.retired.is_none());
            }
            (None, Some(d)) if had.is_some() => {
                prop_assert_eq!(d.retired, Some(now));
            }
            _ => {}
        }
    }
    // Other providers' pools are untouched.
    for ((pool, dim, t), v) in &lv_before {
        if pool.provider.0 != INV {
            prop_assert_eq!(lv_after.get(&(pool.clone(), dim.clone(), *t)), Some(v));
        }
    }
    let zones = |v: Vec<&PoolKey>| v.into_iter().map(|p| p.zone.0.clone()).collect::<Vec<_>>();
    prop_assert_eq!(
        zones(r.diff.added.iter().map(|p| &p.pool).collect()),
        want_added
    );
    prop_assert_eq!(
        zones(r.diff.changed.iter().map(|p| &p.pool).collect()),
        want_changed
    );
    prop_assert_eq!(
        zones(r.diff.removed.iter().map(|p| &p.pool).collect()),
        want_removed
    );
    prop_assert_eq!(r.diff.unchanged, want_unchanged);
    // The diff's before → after per dimension, and the records it says are at risk.
    let state = after.state();
    let flagged = |pool: &PoolKey| -> Vec<RecordRef> {
        let mut v: Vec<RecordRef> = state
            .reservations
            .iter()
            .filter(|x| {
                &x.pool == pool
                    && x.at_risk
                    && x.end.is_none_or(|e| e > now)
                    && matches!(
                        x.state,
                        berth_calendar::ReservationState::Initialized
                            | berth_calendar::ReservationState::Active
                            | berth_calendar::ReservationState::Expired
                    )
            })
            .map(|x| RecordRef::Reservation(x.id))
            .collect();
        v.sort();
        v
    };
    for c in &r.diff.changed {
        let had = &declared_before[&c.pool.zone.0].capacity;
        let w = wanted(&inv, &c.pool.zone.0).unwrap_or_default();
        for (d, ch) in &c.dimensions {
            prop_assert_eq!(ch.before, had.0.get(d).copied().unwrap_or(0));
            prop_assert_eq!(ch.after, w.get(d).copied().unwrap_or(0));
            prop_assert_ne!(ch.before, ch.after);
        }
        prop_assert_eq!(&c.at_risk, &flagged(&c.pool));
    }
    for rm in &r.diff.removed {
        prop_assert_eq!(&rm.at_risk, &flagged(&rm.pool));
        let live: Vec<_> = state
            .reservations
            .iter()
            .filter(|x| {
                x.pool == rm.pool
                    && matches!(
                        x.state,
                        berth_calendar::ReservationState::Initialized
                            | berth_calendar::ReservationState::Active
                            | berth_calendar::ReservationState::Expired
                    )
            })
            .map(|x| x.id)
            .collect();
        prop_assert_eq!(&rm.reservations, &live);
    }
    // The commands are the change: replaying the log with them rebuilds the same calendar.
    log.extend(r.commands.iter().map(|c| LogEntry {
        at: now,
        command: c.clone(),
    }));
    let replayed =
        Calendar::replay(Policy::default(), log).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(replayed.state(), after.state());
    // The same inventory again, now or later, changes nothing.
    for later in [now, now + chrono::TimeDelta::hours(3)] {
        let mut again = after.clone();
        let r2 = reconcile_calendar(&mut again, &inv, &all, None, later)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(r2.diff.is_empty(), "{:?}", r2.diff);
        prop_assert!(r2.commands.is_empty(), "{:?}", r2.commands);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn reconcile_changes_the_pools_exactly_as_the_inventory_says(
        ops in prop::collection::vec(op(), 0..24),
        inv in inventory(),
    ) {
        check(ops, inv)?;
    }
}

#[test]
fn pools_out_of_scope_are_left_to_their_own_calendar() {
    let mut cal = Calendar::new(Policy::default());
    let mut inv = InventoryPools::new(INV);
    inv.pools
        .insert("z0".into(), Amounts::new().with("vcpu", 4));
    inv.pools
        .insert("z1".into(), Amounts::new().with("vcpu", 8));
    let only_z1 = |p: &PoolKey| p.zone.0 == "z1";
    let r = reconcile_calendar(&mut cal, &inv, &only_z1, Some("z1"), t0()).unwrap();
    assert_eq!(r.diff.added.len(), 1);
    assert_eq!(r.diff.added[0].pool, PoolKey::new("z1", INV));
    assert_eq!(r.diff.added[0].partition.as_deref(), Some("z1"));
    assert!(matches!(
        &r.commands[..],
        [Command::DeclareCapacity(d)] if d.pool.zone.0 == "z1"
    ));
}

#[test]
fn a_pool_from_before_declarations_is_adopted_silently_when_it_matches() {
    let mut cal = Calendar::new(Policy::default());
    cal.increase_capacity(
        CapacityChange {
            pool: PoolKey::new("z0", INV),
            start: t0(),
            end: None,
            amounts: Amounts::new().with("vcpu", 16),
        },
        t0(),
    )
    .unwrap();
    let mut inv = InventoryPools::new(INV);
    inv.pools
        .insert("z0".into(), Amounts::new().with("vcpu", 16));
    let all = |_: &PoolKey| true;
    let r = reconcile_calendar(&mut cal, &inv, &all, None, h(1)).unwrap();
    assert!(r.diff.is_empty());
    assert_eq!(r.diff.unchanged, 1);
    // Adopted: declared from now on, so the next reconcile writes nothing.
    assert_eq!(r.commands.len(), 1);
    let again = reconcile_calendar(&mut cal, &inv, &all, None, h(2)).unwrap();
    assert!(again.commands.is_empty());
    assert!(matches!(
        cal.apply(
            Command::DeclareCapacity(Declaration {
                pool: PoolKey::new("z0", INV),
                amounts: Amounts::new().with("vcpu", 16)
            }),
            h(3)
        )
        .unwrap()
        .applied,
        Applied::CapacityDeclared { ref before, .. } if before.get("vcpu") == 16
    ));
}

#[test]
fn a_shared_inventory_hands_each_caller_the_provider_of_its_moment() {
    let parse = |text: &str| -> Arc<dyn InventoryProvider> {
        Arc::new(berth_inventory::StaticProvider::parse(text).unwrap())
    };
    let a = parse(
        "candidates:\n  - {candidate_id: a, inventory_type: cloud, latitude: 1, longitude: 1}\n",
    );
    let b = parse(
        "candidates:\n  - {candidate_id: b, inventory_type: cloud, latitude: 1, longitude: 1}\n",
    );
    let shared = SharedInventory::new(a);
    let taken = shared.current();
    shared.replace(b);
    assert!(taken.candidate("a").is_some() && taken.candidate("b").is_none());
    let now = shared.clone().current();
    assert!(now.candidate("b").is_some() && now.candidate("a").is_none());
}
