//! Replaying the command log reproduces the state; commands round-trip through JSON.

use berth_calendar::*;

use crate::{h, t0};

#[test]
fn replaying_the_log_reproduces_identical_state() {
    let policy = Policy {
        default_expiry_minutes: Some(90),
        ..Policy::default()
    };
    let mut cal = Calendar::new(policy.clone());
    let mut log = Vec::new();
    let mut run = |cal: &mut Calendar, cmd: Command, at| {
        if cal.apply(cmd.clone(), at).is_ok() {
            log.push(LogEntry { at, command: cmd });
        }
    };
    let pool = PoolKey::new("zone-1", "openstack");
    run(
        &mut cal,
        Command::IncreaseCapacity(CapacityChange {
            pool: pool.clone(),
            start: t0(),
            end: None,
            amounts: Amounts::promise(20, 51200, 10, 10),
        }),
        t0(),
    );
    run(
        &mut cal,
        Command::CreateReservation(
            ReservationRequest::new("zone-1", Amounts::promise(5, 25600, 3, 3)).ending(h(24)),
        ),
        t0(),
    );
    run(
        &mut cal,
        Command::CreateReservation(
            ReservationRequest::new("zone-1", Amounts::promise(30, 1, 1, 1)).window(h(2), h(3)),
        ),
        t0(),
    );
    run(
        &mut cal,
        Command::CreateReservation(
            ReservationRequest::new("zone-1", Amounts::promise(10, 1024, 2, 1)).window(h(2), h(30)),
        ),
        t0(),
    );
    run(
        &mut cal,
        Command::CreateAllocation(AllocationRequest::reserved(
            ReservationId(1),
            Amounts::new().with("cores", 2),
        )),
        h(1),
    );
    run(
        &mut cal,
        Command::DecreaseCapacity(CapacityChange {
            pool: pool.clone(),
            start: h(4),
            end: Some(h(8)),
            amounts: Amounts::new().with("cores", 10),
        }),
        h(1),
    );
    run(&mut cal, Command::Advance, h(3));
    run(
        &mut cal,
        Command::CreateAllocation(
            AllocationRequest::unreserved("zone-1", Amounts::new().with("instances", 1))
                .ending(h(20)),
        ),
        h(3),
    );
    run(&mut cal, Command::Advance, h(40));
    let json = serde_json::to_string(&log).unwrap();
    let back: Vec<LogEntry> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, log);
    let replayed = Calendar::replay(policy, back).unwrap();
    assert_eq!(replayed.state(), cal.state());
    assert!(cal.state().reservations.len() >= 2);
}

#[test]
fn replay_reports_the_failing_entry() {
    let log = vec![LogEntry {
        at: t0(),
        command: Command::CancelReservation {
            id: ReservationId(9),
        },
    }];
    let e = Calendar::replay(Policy::default(), log).unwrap_err();
    assert_eq!(
        e.to_string(),
        "replay failed at log entry 0: unknown reservation `r9`"
    );
}

#[test]
fn command_json_shape_is_stable() {
    let cmd = Command::CreateReservation(
        ReservationRequest::new("zone-1", Amounts::promise(5, 25600, 3, 3)).window(h(24), h(48)),
    );
    expect_test::expect![[r#"{"command":"create-reservation","zone":"zone-1","provider":null,"start":"2016-02-02T00:00:00Z","end":"2016-02-03T00:00:00Z","expiry":null,"amounts":{"addresses":3,"instances":3,"ram_mib":25600,"vcpu":5},"priority":"normal","tenant":null,"attributes":{},"elements":[]}"#]]
        .assert_eq(&serde_json::to_string(&cmd).unwrap());
}

/// Logs written with Promise's dimension names (before the dimension registry) replay to the
/// canonical dimensions, so their pools and the inventory's are one; two names of one
/// dimension in one command add up.
#[test]
fn promise_names_in_an_old_log_replay_as_canonical_dimensions() {
    let old = |amounts: &str| -> Command {
        serde_json::from_str(&format!(
            r#"{{"command":"increase-capacity","pool":{{"zone":"z","provider":"p"}},"start":"2016-02-01T00:00:00Z","end":null,"amounts":{amounts}}}"#
        ))
        .unwrap()
    };
    let log = vec![
        LogEntry {
            at: t0(),
            command: old(r#"{"cores":8,"ram":4096,"instances":2,"gigabytes":40,"sriov_vf":1}"#),
        },
        LogEntry {
            at: t0(),
            command: old(r#"{"vcpu":2,"cores":1,"Memory":3}"#),
        },
    ];
    let cal = Calendar::replay(Policy::default(), log).unwrap();
    let q = CapacityQuery {
        zone: None,
        provider: None,
        window: Window {
            start: t0(),
            end: None,
        },
        timeline: false,
    };
    let report = cal.query_capacity(&q).unwrap();
    let totals: Vec<(String, i64)> = report.pools[0]
        .summary
        .iter()
        .map(|(d, s)| (d.0.clone(), s.total))
        .collect();
    assert_eq!(
        totals,
        [
            // `Memory`'s bare numbers are GB: no plain rename, it stays its own name.
            ("Memory".to_owned(), 3),
            ("disk_gib".to_owned(), 40),
            ("instances".to_owned(), 2),
            ("ram_mib".to_owned(), 4096),
            ("sriov_vf".to_owned(), 1),
            ("vcpu".to_owned(), 11),
        ]
    );
    assert_eq!(Amounts::new().with("cores", 3).get("vcpu"), 3);
    assert_eq!(Amounts::new().with("vcpu", 3).get("cores"), 3);
}
