//! Snapshots: restoring the snapshot of a replayed prefix and applying the rest of the log
//! behaves exactly like replaying the whole log; the JSON form round-trips.

use berth_calendar::*;
use proptest::prelude::*;

use crate::model::{Trace, op, policy, run};
use crate::{h, promise_calendar, t0};

/// Snapshot, JSON bytes, back, restore: the snapshot survives the trip and the restored
/// calendar has the same state and writes the same snapshot.
fn round_trip(cal: &Calendar) -> Result<Calendar, TestCaseError> {
    let snap = cal.snapshot();
    let bytes = serde_json::to_vec(&snap).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back: Snapshot =
        serde_json::from_slice(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&back, &snap);
    let restored = Calendar::restore(back).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(restored.snapshot(), snap);
    prop_assert_eq!(restored.state(), cal.state());
    Ok(restored)
}

/// Restores the snapshot of `replay(prefix)`, then applies every later command (failed ones
/// too), round-tripping through JSON after each: every result equals the original run's, and
/// the end state equals `replay(full log)`.
fn split_check(policy: Policy, trace: &Trace, split: usize) -> Result<(), TestCaseError> {
    let log = |part: &[(_, Command, Result<Outcome, CalendarError>)]| -> Vec<LogEntry> {
        part.iter()
            .filter(|(_, _, r)| r.is_ok())
            .map(|(at, command, _)| LogEntry {
                at: *at,
                command: command.clone(),
            })
            .collect()
    };
    let prefix = Calendar::replay(policy.clone(), log(&trace[..split]))
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut cal = round_trip(&prefix)?;
    for (at, command, want) in &trace[split..] {
        let got = cal.apply(command.clone(), *at);
        prop_assert_eq!(&got, want, "command {:?} at {}", command, at);
        cal = round_trip(&cal)?;
    }
    let full =
        Calendar::replay(policy, log(trace)).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(cal.state(), full.state());
    prop_assert_eq!(cal.snapshot(), full.snapshot());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn restore_then_suffix_equals_full_replay(
        policy in policy(),
        ops in prop::collection::vec(op(), 1..40),
        split in any::<prop::sample::Index>(),
    ) {
        let (trace, _) = run(policy.clone(), ops)?;
        split_check(policy, &trace, split.index(trace.len() + 1))?;
    }
}

/// `peek_at(now)` shows what `advance(now)` would leave, whenever it answers, and changes
/// nothing: the calendar afterwards writes the same snapshot as before.
fn peek_check(mut cal: Calendar, minutes: i64) -> Result<bool, TestCaseError> {
    let now = cal.clock().unwrap_or_else(t0) + chrono::TimeDelta::minutes(minutes);
    let before = cal.snapshot();
    let seen = cal.peek_at(now, |c| (c.state(), c.snapshot(), c.clock()));
    prop_assert_eq!(cal.snapshot(), before);
    let Ok((state, snap, clock)) = seen else {
        return Ok(false);
    };
    let mut advanced = cal.clone();
    let events = advanced
        .advance(now)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(events.is_empty(), "a quiet advance raised {:?}", events);
    prop_assert_eq!(clock, advanced.clock());
    prop_assert_eq!(state, advanced.state());
    prop_assert_eq!(snap, advanced.snapshot());
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn peek_at_equals_a_quiet_advance(
        policy in policy(),
        ops in prop::collection::vec(op(), 1..40),
        minutes in 0i64..600,
    ) {
        let (_, cal) = run(policy, ops)?;
        peek_check(cal, minutes)?;
    }
}

#[test]
fn peek_at_answers_between_timers_and_refuses_past_one() {
    let mut cal = promise_calendar(Policy::default());
    cal.create_reservation(
        ReservationRequest::new("zone-1", Amounts::new().with("cores", 4)).ending(h(10)),
        t0(),
    )
    .unwrap();
    let free_now = |c: &Calendar| c.clock();
    assert_eq!(cal.peek_at(h(1), free_now).ok(), Some(Some(h(1))));
    assert_eq!(cal.clock(), Some(t0()));
    // The reservation's end is due by h(10): only a real advance may fire it.
    assert!(cal.peek_at(h(10), free_now).is_err());
    // Before the clock nothing can be shown.
    cal.advance(h(2)).unwrap();
    assert!(cal.peek_at(h(1), free_now).is_err());
}

#[test]
fn snapshot_json_names_its_format_first() {
    let cal = promise_calendar(Policy::default());
    let json = serde_json::to_string(&cal.snapshot()).unwrap();
    assert!(json.starts_with(r#"{"format":1,"#), "{json}");
}

#[test]
fn restored_calendar_keeps_pending_notices_and_timers() {
    let policy = Policy {
        expiry_notice_seconds: 3600,
        ..Policy::default()
    };
    let mut cal = promise_calendar(policy);
    let (r, _) = cal
        .create_reservation(
            ReservationRequest::new("zone-1", Amounts::new().with("cores", 4))
                .window(h(1), h(10))
                .expiring(h(5)),
            t0(),
        )
        .unwrap();
    let bytes = serde_json::to_vec(&cal.snapshot()).unwrap();
    let mut back = Calendar::restore(serde_json::from_slice(&bytes).unwrap()).unwrap();
    let want = cal.advance(h(12)).unwrap();
    assert_eq!(back.advance(h(12)).unwrap(), want);
    assert_eq!(
        want.iter()
            .filter(|e| matches!(e, Event::ReservationExpiringSoon { reservation, .. } if *reservation == r))
            .count(),
        1
    );
    assert_eq!(back.state(), cal.state());
}
