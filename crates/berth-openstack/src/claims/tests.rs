//! `claims`: consumer ids, the claims of a calendar, and the plan to write them.

use berth_calendar::{Amounts, Command, Declaration, Policy, PoolKey, ReservationRequest};
use chrono::TimeZone;

use super::*;

#[test]
fn consumer_ids_are_stable_marked_and_distinct() {
    let a = consumer_id("calendar", "r1");
    assert_eq!(a, consumer_id("calendar", "r1"));
    assert_eq!(a.len(), 36);
    assert!(is_berth_consumer(&a), "{a}");
    assert_ne!(a, consumer_id("calendar", "r2"));
    assert_ne!(a, consumer_id("other", "r1"));
    let groups: Vec<usize> = a.split('-').map(str::len).collect();
    assert_eq!(groups, [8, 4, 4, 4, 12]);
    assert!(a.chars().all(|c| c == '-' || c.is_ascii_hexdigit()));
    assert!(!is_berth_consumer("69c0c34e-7318-436a-8802-36a0ed95b13f"));
}

#[test]
fn active_reservations_claim_their_rest() {
    let t0 = chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let mut cal = Calendar::new(Policy::default());
    let amounts = Amounts::new()
        .with("vcpu", 16)
        .with("ram_mib", 8192)
        .with("instances", 4);
    for (host, p) in [
        ("cpu1", "openstack"),
        ("cpu2", "openstack"),
        ("dfw1", "inventory"),
    ] {
        cal.apply(
            Command::DeclareCapacity(Declaration {
                pool: PoolKey::new(host, p),
                amounts: amounts.clone(),
            }),
            t0,
        )
        .unwrap();
    }
    let reserve = |zone: &str, p: &str, start| {
        Command::CreateReservation(
            ReservationRequest::new(
                zone,
                Amounts::new()
                    .with("vcpu", 2)
                    .with("ram_mib", 1024)
                    .with("instances", 1),
            )
            .provider(p)
            .window(start, start + chrono::TimeDelta::hours(2)),
        )
    };
    cal.apply(reserve("cpu1", "openstack", t0), t0).unwrap();
    cal.apply(
        reserve("cpu2", "openstack", t0 + chrono::TimeDelta::hours(1)),
        t0,
    )
    .unwrap();
    cal.apply(reserve("dfw1", "inventory", t0), t0).unwrap();
    let want = desired(&cal, "openstack", None, "calendar");
    assert_eq!(
        want.len(),
        1,
        "only the started reservation of openstack: {want:?}"
    );
    let (c, claim) = want.iter().next().unwrap();
    assert_eq!(c, &consumer_id("calendar", "r1"));
    assert_eq!(claim.host, "cpu1");
    assert_eq!(
        claim.resources,
        BTreeMap::from([("MEMORY_MB".into(), 1024), ("VCPU".into(), 2)])
    );
    // An hour on the second starts; the first is still active.
    cal.advance(t0 + chrono::TimeDelta::hours(1)).unwrap();
    assert_eq!(desired(&cal, "openstack", Some("p"), "calendar").len(), 2);
    assert!(
        desired(&cal, "openstack", Some("p"), "calendar")
            .values()
            .all(|c| c.record.starts_with("p:r"))
    );
    // Both ended.
    cal.advance(t0 + chrono::TimeDelta::hours(4)).unwrap();
    assert!(desired(&cal, "openstack", None, "calendar").is_empty());
}

#[test]
fn the_plan_writes_what_differs_and_removes_the_rest() {
    let claim = |host: &str, v: u64| Claim {
        record: "r1".into(),
        host: host.into(),
        resources: [("VCPU".to_owned(), v)].into(),
    };
    let desired = BTreeMap::from([
        ("a".to_owned(), claim("cpu1", 2)),
        ("b".to_owned(), claim("cpu1", 3)),
        ("c".to_owned(), claim("cpu2", 1)),
    ]);
    let held = BTreeMap::from([
        (
            "a".to_owned(),
            BTreeMap::from([("cpu1".to_owned(), BTreeMap::from([("VCPU".to_owned(), 2)]))]),
        ),
        (
            "b".to_owned(),
            BTreeMap::from([("cpu1".to_owned(), BTreeMap::from([("VCPU".to_owned(), 1)]))]),
        ),
        (
            "z".to_owned(),
            BTreeMap::from([("cpu2".to_owned(), BTreeMap::from([("VCPU".to_owned(), 1)]))]),
        ),
    ]);
    let p = plan(&desired, &held);
    assert_eq!(p.put, ["b", "c"]);
    assert_eq!(p.delete, ["z"]);
    assert_eq!(plan(&desired, &BTreeMap::new()).put.len(), 3);
}

#[test]
fn units_follow_the_inventory() {
    let inv = crate::wire::Inventory {
        total: 64,
        reserved: 0,
        min_unit: 2,
        max_unit: Some(16),
        step_size: 2,
        allocation_ratio: 1.0,
    };
    assert!(check_units("VCPU", 4, &inv).is_ok());
    assert_eq!(
        check_units("VCPU", 1, &inv).unwrap_err(),
        "VCPU 1 is below min_unit 2; expected at least 2"
    );
    assert_eq!(
        check_units("VCPU", 18, &inv).unwrap_err(),
        "VCPU 18 is above max_unit 16; expected at most 16 in one allocation"
    );
    assert_eq!(
        check_units("VCPU", 5, &inv).unwrap_err(),
        "VCPU 5 is not a multiple of step_size 2"
    );
}
