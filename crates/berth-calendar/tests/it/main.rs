//! Integration tests of berth-calendar: Promise scenarios, the model-based oracle (threshold
//! crossings included), replay, snapshots, bulk loading.

// Helpers outside `#[test]` functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used, clippy::type_complexity)]

mod bulk;
mod declare;
mod model;
mod replay;
mod scenarios;
mod snapshot;

use berth_calendar::{Amounts, Calendar, CapacityChange, Policy, PoolKey};
use chrono::{DateTime, TimeDelta, TimeZone, Utc};

/// 2016-02-01T00:00:00Z, the date of Promise's examples.
pub fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2016, 2, 1, 0, 0, 0)
        .single()
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// `t0 + n` hours.
pub fn h(n: i64) -> DateTime<Utc> {
    t0() + TimeDelta::hours(n)
}

/// The Promise test pool: 20 cores, 51200 MB RAM, 10 instances, 10 addresses, from t0 on.
pub fn promise_calendar(policy: Policy) -> Calendar {
    let mut cal = Calendar::new(policy);
    cal.increase_capacity(
        CapacityChange {
            pool: PoolKey::new("zone-1", "openstack"),
            start: t0(),
            end: None,
            amounts: Amounts::promise(20, 51200, 10, 10),
        },
        t0(),
    )
    .unwrap();
    cal
}
