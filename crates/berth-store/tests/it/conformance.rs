//! The store conformance suite: every backend must pass each check unchanged.

use std::collections::BTreeSet;
use std::sync::Arc;

use berth_calendar::{
    AllocationRequest, Amounts, Calendar, CalendarError, CapacityChange, Command, Dimension,
    LogEntry, Policy, PoolKey, ReservationId, ReservationRequest, ThresholdSubscription, ZoneId,
};
use berth_store::{
    Append, BatchOutcome, CredentialKey, IdempotentResponse, NewPlan, NewProvider, NewSubscription,
    PlanChange, PlanUpdate, RecordKind, SCHEMA_VERSION, SNAPSHOTS_KEPT, Secret, Store, StoreError,
    SubscriptionKind, WriteBatch, catch_up, load_calendar,
};
use serde_json::json;
use tokio::sync::Barrier;

use crate::fixtures::{h, marker, marker_of, t0};

pub use crate::leases::{
    concurrent_takeover_has_one_winner, leases_and_fencing,
    paused_owner_cannot_write_after_takeover, spanning_appends_are_atomic,
};

pub async fn append_read_and_conflicts(store: Arc<dyn Store>) {
    let s = &*store;
    assert_eq!(s.head("cal").await.unwrap(), 0);
    assert!(s.commands_since("cal", 0).await.unwrap().is_empty());
    let first = [marker(1), marker(2), marker(3)];
    assert_eq!(s.append_commands("cal", 0, &first).await.unwrap(), 3);
    assert_eq!(
        s.append_commands("cal", 3, &[marker(4), marker(5)])
            .await
            .unwrap(),
        5
    );
    let all = s.commands_since("cal", 0).await.unwrap();
    assert_eq!(
        all.iter().map(|c| c.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    assert_eq!(
        all.iter().map(|c| marker_of(&c.entry)).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    assert_eq!(all[0].entry, first[0]);
    assert!(all.iter().all(|c| c.schema_version == SCHEMA_VERSION));
    let tail = s.commands_since("cal", 3).await.unwrap();
    assert_eq!(tail.iter().map(|c| c.seq).collect::<Vec<_>>(), [4, 5]);
    assert!(s.commands_since("cal", 5).await.unwrap().is_empty());
    // Stale and future expectations both lose, reporting the real head; nothing is written.
    for expected in [0, 3, 4, 9] {
        match s.append_commands("cal", expected, &[marker(99)]).await {
            Err(StoreError::Conflict {
                stream,
                expected: e,
                actual,
            }) => {
                assert_eq!((stream.as_str(), e, actual), ("cal", expected, 5));
            }
            other => panic!("expected a conflict at {expected}, got {other:?}"),
        }
    }
    assert_eq!(s.head("cal").await.unwrap(), 5);
    // Nothing open: the settled head is the head, and reading it creates no stream.
    assert_eq!(s.settled_head("cal").await.unwrap(), 5);
    assert_eq!(s.settled_head("never").await.unwrap(), 0);
    assert_eq!(s.streams("never").await.unwrap(), []);
    // An empty append is a head check.
    assert_eq!(s.append_commands("cal", 5, &[]).await.unwrap(), 5);
    assert!(matches!(
        s.append_commands("cal", 4, &[]).await,
        Err(StoreError::Conflict { actual: 5, .. })
    ));
    // Streams are independent.
    assert_eq!(s.head("other").await.unwrap(), 0);
    assert_eq!(
        s.append_commands("other", 0, &[marker(7)]).await.unwrap(),
        1
    );
    assert_eq!(s.head("cal").await.unwrap(), 5);
    // Numbers beyond the database's range are refused, not wrapped.
    assert!(matches!(
        s.append_commands("cal", u64::MAX, &[marker(1)]).await,
        Err(StoreError::Invalid { .. })
    ));
    s.ping().await.unwrap();
}

pub async fn concurrent_appenders_exactly_one_wins(store: Arc<dyn Store>) {
    const N: usize = 24;
    for round in 0..3u64 {
        let barrier = Arc::new(Barrier::new(N));
        let mut tasks = Vec::new();
        for i in 0..N {
            let (store, barrier) = (store.clone(), barrier.clone());
            tasks.push(tokio::spawn(async move {
                barrier.wait().await;
                let entry = [marker(1000 * round + i as u64)];
                store.append_commands("race", round, &entry).await
            }));
        }
        let mut wins = Vec::new();
        for (i, t) in tasks.into_iter().enumerate() {
            match t.await.unwrap() {
                Ok(seq) => wins.push((i, seq)),
                Err(StoreError::Conflict { actual, .. }) => assert_eq!(actual, round + 1),
                Err(e) => panic!("unexpected error {e}"),
            }
        }
        assert_eq!(wins.len(), 1, "round {round}: {wins:?}");
        let log = store.commands_since("race", round).await.unwrap();
        assert_eq!(log.len(), 1);
        assert_eq!(marker_of(&log[0].entry), 1000 * round + wins[0].0 as u64);
    }
    assert_eq!(store.head("race").await.unwrap(), 3);
}

pub async fn concurrent_retries_keep_sequence_contiguous(store: Arc<dyn Store>) {
    const TASKS: u64 = 8;
    const EACH: u64 = 6;
    let barrier = Arc::new(Barrier::new(TASKS as usize));
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let (store, barrier) = (store.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let mut conflicts = 0u32;
            for i in 0..EACH {
                let mut seq = store.head("seq").await.unwrap();
                loop {
                    match store
                        .append_commands("seq", seq, &[marker(100 * t + i)])
                        .await
                    {
                        Ok(_) => break,
                        Err(StoreError::Conflict { actual, .. }) => {
                            conflicts += 1;
                            seq = actual;
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
            }
            conflicts
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let log = store.commands_since("seq", 0).await.unwrap();
    assert_eq!(log.len() as u64, TASKS * EACH);
    assert!(log.iter().zip(1..).all(|(c, n)| c.seq == n));
    let markers: BTreeSet<u64> = log.iter().map(|c| marker_of(&c.entry)).collect();
    let expected: BTreeSet<u64> = (0..TASKS)
        .flat_map(|t| (0..EACH).map(move |i| 100 * t + i))
        .collect();
    assert_eq!(markers, expected);
    // Each task's own entries stay in its order.
    for t in 0..TASKS {
        let mine: Vec<u64> = log
            .iter()
            .map(|c| marker_of(&c.entry))
            .filter(|m| m / 100 == t)
            .collect();
        assert!(mine.windows(2).all(|w| w[0] < w[1]));
    }
}

fn instances(n: u64) -> Amounts {
    Amounts::new().with("instances", n)
}

/// The admission pattern a daemon uses: read, decide in memory, append expecting the head;
/// on conflict catch up and decide again. N clients race for 5 units: exactly 5 get one.
pub async fn no_double_booking_under_contention(store: Arc<dyn Store>) {
    const CLIENTS: usize = 16;
    const UNITS: u64 = 5;
    let grow = LogEntry {
        at: t0(),
        command: Command::IncreaseCapacity(CapacityChange {
            pool: PoolKey::new("zone-1", "openstack"),
            start: t0(),
            end: None,
            amounts: instances(UNITS),
        }),
    };
    store.append_commands("booking", 0, &[grow]).await.unwrap();
    let barrier = Arc::new(Barrier::new(CLIENTS));
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let (store, barrier) = (store.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            let (mut cal, mut seq) = load_calendar(&*store, "booking", Policy::default())
                .await
                .unwrap();
            barrier.wait().await;
            loop {
                let request = ReservationRequest::new("zone-1", instances(1)).window(h(1), h(5));
                let entry = LogEntry {
                    at: t0(),
                    command: Command::CreateReservation(request),
                };
                let mut tentative = cal.clone();
                match tentative.apply(entry.command.clone(), entry.at) {
                    Err(CalendarError::Conflict(_)) => return false,
                    Err(e) => panic!("{e}"),
                    Ok(_) => {}
                }
                match store
                    .append_commands("booking", seq, std::slice::from_ref(&entry))
                    .await
                {
                    Ok(_) => return true,
                    Err(StoreError::Conflict { .. }) => {
                        catch_up(&*store, "booking", &mut cal, &mut seq)
                            .await
                            .unwrap();
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        }));
    }
    let mut granted = 0;
    for t in tasks {
        granted += u64::from(t.await.unwrap());
    }
    assert_eq!(granted, UNITS);
    let (cal, head) = load_calendar(&*store, "booking", Policy::default())
        .await
        .unwrap();
    assert_eq!(head, 1 + UNITS);
    let state = cal.state();
    assert_eq!(state.reservations.len() as u64, UNITS);
    // Nothing is left and nothing is overbooked at any instant of the window.
    let mut probe = cal.clone();
    let more = ReservationRequest::new("zone-1", instances(1)).window(h(1), h(5));
    assert!(matches!(
        probe.create_reservation(more, t0()),
        Err(CalendarError::Conflict(_))
    ));
}

/// A varied command log appended in several batches replays to the same state.
pub async fn replay_reproduces_calendar_state(store: Arc<dyn Store>) {
    let mut cal = Calendar::new(Policy::default());
    let pool = PoolKey::new("zone-1", "openstack");
    let mut log: Vec<LogEntry> = Vec::new();
    let mut apply = |cal: &mut Calendar, at, command: Command| {
        cal.apply(command.clone(), at).unwrap();
        log.push(LogEntry { at, command });
    };
    apply(
        &mut cal,
        t0(),
        Command::IncreaseCapacity(CapacityChange {
            pool: pool.clone(),
            start: t0(),
            end: None,
            amounts: Amounts::promise(20, 51200, 10, 10),
        }),
    );
    apply(
        &mut cal,
        t0(),
        Command::Subscribe(ThresholdSubscription {
            zone: ZoneId::new("zone-1"),
            provider: None,
            dimension: Dimension::instances(),
            below: 4,
        }),
    );
    apply(
        &mut cal,
        t0(),
        Command::CreateReservation(
            ReservationRequest::new("zone-1", Amounts::promise(5, 25600, 3, 3))
                .window(h(1), h(25))
                .tenant("t1"),
        ),
    );
    apply(
        &mut cal,
        t0(),
        Command::CreateReservation(
            ReservationRequest::new("zone-1", Amounts::promise(2, 1024, 2, 1)).window(h(2), h(30)),
        ),
    );
    apply(&mut cal, h(1), Command::Advance);
    apply(
        &mut cal,
        h(1),
        Command::CreateAllocation(AllocationRequest::reserved(
            ReservationId(1),
            Amounts::promise(1, 512, 1, 0),
        )),
    );
    apply(
        &mut cal,
        h(1),
        Command::UpdateReservation {
            id: ReservationId(2),
            request: ReservationRequest::new("zone-1", Amounts::promise(3, 1024, 2, 1))
                .window(h(2), h(40)),
        },
    );
    apply(
        &mut cal,
        h(2),
        Command::CancelReservation {
            id: ReservationId(2),
        },
    );
    apply(
        &mut cal,
        h(3),
        Command::CreateAllocation(
            AllocationRequest::unreserved("zone-1", instances(2)).ending(h(10)),
        ),
    );
    apply(
        &mut cal,
        h(3),
        Command::DecreaseCapacity(CapacityChange {
            pool,
            start: h(20),
            end: Some(h(30)),
            amounts: instances(1),
        }),
    );
    apply(&mut cal, h(26), Command::Advance);
    let mut seq = 0;
    for chunk in log.chunks(3) {
        seq = store.append_commands("replay", seq, chunk).await.unwrap();
    }
    assert_eq!(seq, log.len() as u64);
    let stored: Vec<LogEntry> = store
        .commands_since("replay", 0)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.entry)
        .collect();
    assert_eq!(stored, log);
    let (replayed, head) = load_calendar(&*store, "replay", Policy::default())
        .await
        .unwrap();
    assert_eq!(head, seq);
    assert_eq!(replayed.state(), cal.state());
    assert_eq!(
        Calendar::replay(Policy::default(), stored).unwrap().state(),
        cal.state()
    );
    // Catching up from the middle gives the same state as a full replay.
    let mut partial = Calendar::replay(Policy::default(), log[..4].iter().cloned()).unwrap();
    let mut at = 4;
    catch_up(&*store, "replay", &mut partial, &mut at)
        .await
        .unwrap();
    assert_eq!(at, seq);
    assert_eq!(partial.state(), cal.state());
}

pub async fn snapshots(store: Arc<dyn Store>) {
    let s = &*store;
    assert!(s.latest_snapshot("snap").await.unwrap().is_none());
    assert!(s.snapshot_seqs("snap").await.unwrap().is_empty());
    assert!(matches!(
        s.put_snapshot("snap", 1, "{}", t0()).await,
        Err(StoreError::SnapshotAhead {
            seq: 1,
            head: 0,
            ..
        })
    ));
    let entries: Vec<LogEntry> = (1..=6).map(marker).collect();
    s.append_commands("snap", 0, &entries[..3]).await.unwrap();
    s.put_snapshot("snap", 2, r#"{"at": 2}"#, h(1))
        .await
        .unwrap();
    s.put_snapshot("snap", 3, r#"{"at":3,"nested":[1,2]}"#, h(2))
        .await
        .unwrap();
    assert!(matches!(
        s.put_snapshot("snap", 4, "{}", h(3)).await,
        Err(StoreError::SnapshotAhead {
            seq: 4,
            head: 3,
            ..
        })
    ));
    let snap = s.latest_snapshot("snap").await.unwrap().unwrap();
    assert_eq!((snap.stream.as_str(), snap.seq), ("snap", 3));
    // The state comes back byte for byte.
    assert_eq!(snap.state, r#"{"at":3,"nested":[1,2]}"#);
    assert_eq!(snap.created_at, h(2));
    assert_eq!(snap.schema_version, SCHEMA_VERSION);
    // The newest SNAPSHOTS_KEPT are kept, newest first; older ones stay readable by seq.
    s.append_commands("snap", 3, &entries[3..]).await.unwrap();
    for seq in 4..=6 {
        s.put_snapshot("snap", seq, &format!("{{\"at\":{seq}}}"), h(3))
            .await
            .unwrap();
    }
    let kept: Vec<u64> = (6 - SNAPSHOTS_KEPT as u64 + 1..=6).rev().collect();
    assert_eq!(s.snapshot_seqs("snap").await.unwrap(), kept);
    let older = s.snapshot_at("snap", 5).await.unwrap().unwrap();
    assert_eq!((older.seq, older.state.as_str()), (5, r#"{"at":5}"#));
    assert!(s.snapshot_at("snap", 2).await.unwrap().is_none());
    assert!(s.snapshot_at("other", 5).await.unwrap().is_none());
    // Rewriting a seq replaces it.
    s.put_snapshot("snap", 6, r#"{"again":6}"#, h(4))
        .await
        .unwrap();
    let again = s.latest_snapshot("snap").await.unwrap().unwrap();
    assert_eq!(
        (again.state.as_str(), again.created_at),
        (r#"{"again":6}"#, h(4))
    );
    assert_eq!(s.snapshot_seqs("snap").await.unwrap(), kept);
    // A calendar state survives the round trip through a snapshot.
    let cal = Calendar::replay(
        Policy::default(),
        s.commands_since("snap", 0)
            .await
            .unwrap()
            .into_iter()
            .map(|c| c.entry),
    )
    .unwrap();
    let text = serde_json::to_string(&cal.state()).unwrap();
    s.put_snapshot("snap", 6, &text, h(5)).await.unwrap();
    let back = s.latest_snapshot("snap").await.unwrap().unwrap();
    assert_eq!(
        serde_json::from_str::<berth_calendar::CalendarState>(&back.state).unwrap(),
        cal.state()
    );
}

fn new_plan(id: &str, minute: i64) -> NewPlan {
    NewPlan {
        id: id.to_owned(),
        name: format!("plan {id}"),
        status: "template".to_owned(),
        request: json!({"name": id, "template": {"homing_template_version": "2017-10-10"}, "num_solution": "1"}),
        created_at: t0() + berth_calendar::chrono::TimeDelta::minutes(minute),
    }
}

fn update(status: &str, result: Option<serde_json::Value>, message: Option<&str>) -> PlanUpdate {
    PlanUpdate {
        status: status.to_owned(),
        result,
        message: message.map(str::to_owned),
        updated_at: h(1),
    }
}

pub async fn plans_crud_and_transitions(store: Arc<dyn Store>) {
    let s = &*store;
    let p = s.create_plan(&new_plan("p2", 5)).await.unwrap();
    assert_eq!(
        (p.version, p.status.as_str(), p.schema_version),
        (1, "template", SCHEMA_VERSION)
    );
    assert_eq!(p.result, None);
    assert!(matches!(
        s.create_plan(&new_plan("p2", 9)).await,
        Err(StoreError::Duplicate { kind: RecordKind::Plan, ref id }) if id == "p2"
    ));
    s.create_plan(&new_plan("p1", 5)).await.unwrap();
    s.create_plan(&new_plan("p0", 7)).await.unwrap();
    assert_eq!(s.get_plan("p2").await.unwrap(), Some(p.clone()));
    assert_eq!(s.get_plan("nope").await.unwrap(), None);
    // Ordered by creation time, then id.
    let ids: Vec<String> = s
        .list_plans()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(ids, ["p1", "p2", "p0"]);

    let solving = s
        .update_plan("p2", 1, &update("solving", None, None))
        .await
        .unwrap();
    assert_eq!((solving.version, solving.status.as_str()), (2, "solving"));
    assert_eq!(solving.created_at, p.created_at);
    assert_eq!(solving.updated_at, h(1));
    let result = json!({"recommendations": [{"vG": {"candidate": {"candidate_id": "c1"}}}]});
    let done = s
        .update_plan("p2", 2, &update("done", Some(result.clone()), Some("ok")))
        .await
        .unwrap();
    assert_eq!(
        (done.version, done.result.as_ref(), done.message.as_deref()),
        (3, Some(&result), Some("ok"))
    );
    assert_eq!(s.get_plan("p2").await.unwrap(), Some(done.clone()));
    match s.update_plan("p2", 2, &update("error", None, None)).await {
        Err(StoreError::VersionConflict {
            kind: RecordKind::Plan,
            expected: 2,
            actual: 3,
            ..
        }) => {}
        other => panic!("expected a version conflict, got {other:?}"),
    }
    assert!(matches!(
        s.update_plan("ghost", 1, &update("done", None, None)).await,
        Err(StoreError::NotFound {
            kind: RecordKind::Plan,
            ..
        })
    ));
    // Clearing result and message.
    let cleared = s
        .update_plan("p2", 3, &update("error", None, None))
        .await
        .unwrap();
    assert_eq!((cleared.result, cleared.message), (None, None));

    s.delete_plan("p1").await.unwrap();
    assert_eq!(s.get_plan("p1").await.unwrap(), None);
    assert!(matches!(
        s.delete_plan("p1").await,
        Err(StoreError::NotFound {
            kind: RecordKind::Plan,
            ..
        })
    ));
    assert_eq!(s.list_plans().await.unwrap().len(), 2);
}

/// Several workers claim the same accepted plan by version: exactly one gets it.
pub async fn concurrent_plan_claims(store: Arc<dyn Store>) {
    const N: usize = 12;
    store.create_plan(&new_plan("claim", 0)).await.unwrap();
    let barrier = Arc::new(Barrier::new(N));
    let mut tasks = Vec::new();
    for i in 0..N {
        let (store, barrier) = (store.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let u = update("solving", None, Some(&format!("worker {i}")));
            store.update_plan("claim", 1, &u).await
        }));
    }
    let mut winners = Vec::new();
    for t in tasks {
        match t.await.unwrap() {
            Ok(p) => winners.push(p),
            Err(StoreError::VersionConflict { actual: 2, .. }) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(winners.len(), 1);
    let stored = store.get_plan("claim").await.unwrap().unwrap();
    assert_eq!(stored, winners[0]);
    assert_eq!(stored.version, 2);
}

fn secs(s: i64) -> berth_calendar::chrono::DateTime<berth_calendar::chrono::Utc> {
    t0() + berth_calendar::chrono::TimeDelta::seconds(s)
}

/// The plan queue: oldest first, claims exclude others until they run out, renewals and
/// completions only by the holder, released claims and deleted plans.
pub async fn plan_queue_claims_renews_and_completes(store: Arc<dyn Store>) {
    let s = &*store;
    let hold = std::time::Duration::from_secs(30);
    assert_eq!(s.claim_plan("a", secs(0), hold).await.unwrap(), None);
    s.create_plan(&new_plan("late", 1)).await.unwrap();
    s.create_plan(&new_plan("early", 0)).await.unwrap();
    let a = s.claim_plan("a", secs(0), hold).await.unwrap().unwrap();
    assert_eq!(
        (a.plan_id.as_str(), a.owner.as_str(), a.until, a.attempts),
        ("early", "a", secs(30), 1)
    );
    let b = s.claim_plan("b", secs(0), hold).await.unwrap().unwrap();
    assert_eq!((b.plan_id.as_str(), b.attempts), ("late", 1));
    assert_eq!(s.claim_plan("c", secs(29), hold).await.unwrap(), None);
    // Only the holder renews.
    assert!(
        !s.renew_plan_claim("early", "b", secs(10), hold)
            .await
            .unwrap()
    );
    assert!(
        s.renew_plan_claim("early", "a", secs(10), hold)
            .await
            .unwrap()
    );
    // `late` ran out at 30 s (b stopped renewing); `early` now lasts until 40 s.
    let c = s.claim_plan("c", secs(35), hold).await.unwrap().unwrap();
    assert_eq!(
        (c.plan_id.as_str(), c.owner.as_str(), c.attempts),
        ("late", "c", 2)
    );
    assert!(
        !s.renew_plan_claim("late", "b", secs(36), hold)
            .await
            .unwrap()
    );
    assert!(!s.complete_plan_claim("late", "b").await.unwrap());
    assert!(s.complete_plan_claim("late", "c").await.unwrap());
    assert!(!s.complete_plan_claim("late", "c").await.unwrap());
    let queued = s.queued_plans().await.unwrap();
    assert_eq!(queued.len(), 1);
    assert_eq!(s.count_queued_plans().await.unwrap(), 1);
    assert_eq!(queued[0].plan_id, "early");
    assert_eq!(
        queued[0].claim.as_ref().map(|c| c.owner.as_str()),
        Some("a")
    );
    // A restarted owner gives its claims up; the plan is claimable before the claim ends.
    assert_eq!(s.release_plan_claims("a").await.unwrap(), 1);
    assert_eq!(s.queued_plans().await.unwrap()[0].claim, None);
    let d = s.claim_plan("d", secs(36), hold).await.unwrap().unwrap();
    assert_eq!((d.plan_id.as_str(), d.attempts), ("early", 2));
    // Deleting a plan takes it out of the queue.
    s.delete_plan("early").await.unwrap();
    assert!(s.queued_plans().await.unwrap().is_empty());
    assert_eq!(s.count_queued_plans().await.unwrap(), 0);
    assert_eq!(s.claim_plan("e", secs(100), hold).await.unwrap(), None);

    // A plan created claimed: nobody else claims it before its claim ends; recording the
    // outcome under the claim takes it out of the queue in the same write.
    s.create_plan_claimed(&new_plan("mine", 3), "f", secs(130))
        .await
        .unwrap();
    let q = s.queued_plans().await.unwrap();
    assert_eq!(q.len(), 1);
    let held = q[0].claim.clone().unwrap();
    assert_eq!(
        (held.owner.as_str(), held.until, held.attempts),
        ("f", secs(130), 1)
    );
    assert_eq!(s.claim_plan("g", secs(129), hold).await.unwrap(), None);
    let by_other = s
        .finish_plan("mine", 1, &update("done", None, None), "g")
        .await
        .unwrap();
    assert_eq!(by_other.version, 2);
    assert_eq!(s.queued_plans().await.unwrap().len(), 1);
    assert_eq!(s.count_queued_plans().await.unwrap(), 1);
    s.finish_plan("mine", 2, &update("done", None, None), "f")
        .await
        .unwrap();
    assert!(s.queued_plans().await.unwrap().is_empty());
    assert!(matches!(
        s.finish_plan("mine", 2, &update("done", None, None), "f")
            .await,
        Err(StoreError::VersionConflict { .. })
    ));
}

/// Many claimers at once (as workers of several daemons): every plan is claimed exactly once.
pub async fn concurrent_plan_queue_claims_each_plan_once(store: Arc<dyn Store>) {
    const PLANS: i64 = 40;
    const WORKERS: usize = 8;
    for i in 0..PLANS {
        store
            .create_plan(&new_plan(&format!("q{i:02}"), i))
            .await
            .unwrap();
    }
    let barrier = Arc::new(Barrier::new(WORKERS));
    let mut tasks = Vec::new();
    for w in 0..WORKERS {
        let (store, barrier) = (store.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let owner = format!("worker-{w}");
            let mut got = Vec::new();
            let hold = std::time::Duration::from_secs(60);
            while let Some(c) = store.claim_plan(&owner, secs(0), hold).await.unwrap() {
                assert_eq!(c.attempts, 1);
                got.push(c.plan_id);
            }
            got
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort();
    let expected: Vec<String> = (0..PLANS).map(|i| format!("q{i:02}")).collect();
    assert_eq!(all, expected);
    let queued = store.queued_plans().await.unwrap();
    assert_eq!(queued.len(), expected.len());
    assert!(queued.iter().all(|q| q.claim.is_some()));
}

fn idem(key: &str, hash: &str, response: serde_json::Value) -> IdempotentResponse {
    IdempotentResponse {
        key: key.to_owned(),
        request_hash: hash.to_owned(),
        response,
        created_at: t0(),
    }
}

pub async fn idempotency_keys(store: Arc<dyn Store>) {
    let s = &*store;
    assert_eq!(s.lookup_idempotent("k1").await.unwrap(), None);
    let first = s
        .remember_idempotent(&idem("k1", "h1", json!({"result": "ok"})))
        .await
        .unwrap();
    assert_eq!(
        (first.request_hash.as_str(), first.schema_version),
        ("h1", SCHEMA_VERSION)
    );
    // Same key and request: the first response wins.
    let again = s
        .remember_idempotent(&idem("k1", "h1", json!({"result": "other"})))
        .await
        .unwrap();
    assert_eq!(again.response, json!({"result": "ok"}));
    match s.remember_idempotent(&idem("k1", "h2", json!({}))).await {
        Err(StoreError::IdempotencyConflict { key }) => assert_eq!(key, "k1"),
        other => panic!("expected an idempotency conflict, got {other:?}"),
    }
    let looked = s.lookup_idempotent("k1").await.unwrap().unwrap();
    assert_eq!(looked, first);
    let mut late = idem("k2", "h", json!(2));
    late.created_at = h(10);
    s.remember_idempotent(&late).await.unwrap();
    assert_eq!(s.forget_idempotent_before(h(5)).await.unwrap(), 1);
    assert_eq!(s.lookup_idempotent("k1").await.unwrap(), None);
    assert!(s.lookup_idempotent("k2").await.unwrap().is_some());
}

pub async fn idempotent_appends(store: Arc<dyn Store>) {
    let s = &*store;
    let key = idem("create-1", "hash-a", json!({"result": "ok", "id": "r1"}));
    let out = s
        .append_commands_idempotent("idem", 0, &[marker(1)], &key)
        .await
        .unwrap();
    assert_eq!(
        out,
        BatchOutcome::Committed {
            seq: Some(1),
            plan: None
        }
    );
    // The retry (even with a stale head) appends nothing and gets the first response.
    match s
        .append_commands_idempotent("idem", 0, &[marker(1)], &key)
        .await
        .unwrap()
    {
        BatchOutcome::Replayed(rec) => {
            assert_eq!(rec.response, json!({"result": "ok", "id": "r1"}))
        }
        other => panic!("expected a replay, got {other:?}"),
    }
    assert_eq!(s.head("idem").await.unwrap(), 1);
    let other = idem("create-1", "hash-b", json!({}));
    assert!(matches!(
        s.append_commands_idempotent("idem", 1, &[marker(2)], &other)
            .await,
        Err(StoreError::IdempotencyConflict { .. })
    ));
    assert_eq!(s.head("idem").await.unwrap(), 1);
    // A lost append does not remember its key.
    let fresh = idem("create-2", "hash-c", json!({}));
    assert!(matches!(
        s.append_commands_idempotent("idem", 0, &[marker(3)], &fresh)
            .await,
        Err(StoreError::Conflict { actual: 1, .. })
    ));
    assert_eq!(s.lookup_idempotent("create-2").await.unwrap(), None);
    assert_eq!(
        s.append_commands_idempotent("idem", 1, &[marker(3)], &fresh)
            .await
            .unwrap(),
        BatchOutcome::Committed {
            seq: Some(2),
            plan: None
        }
    );
    assert_eq!(
        s.lookup_idempotent("create-2")
            .await
            .unwrap()
            .unwrap()
            .request_hash,
        "hash-c"
    );
}

/// Many clients retry one create with one key at once: one plan exists and all others replay.
pub async fn concurrent_idempotent_creates(store: Arc<dyn Store>) {
    const N: usize = 10;
    let barrier = Arc::new(Barrier::new(N));
    let mut tasks = Vec::new();
    for i in 0..N {
        let (store, barrier) = (store.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            let plan = new_plan(&format!("plan-{i}"), 0);
            let key = idem("post-plan", "same", json!({"id": format!("plan-{i}")}));
            barrier.wait().await;
            store
                .write(WriteBatch {
                    idempotency: Some(&key),
                    create_plan: Some(&plan),
                    ..WriteBatch::default()
                })
                .await
        }));
    }
    let (mut committed, mut replayed) = (Vec::new(), Vec::new());
    for t in tasks {
        match t.await.unwrap().unwrap() {
            BatchOutcome::Committed { plan: Some(p), .. } => committed.push(p.id),
            BatchOutcome::Replayed(r) => replayed.push(r.response),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(committed.len(), 1);
    assert_eq!(replayed.len(), N - 1);
    assert!(replayed.iter().all(|r| r == &json!({"id": committed[0]})));
    let plans = store.list_plans().await.unwrap();
    assert_eq!(
        plans.iter().map(|p| p.id.clone()).collect::<Vec<_>>(),
        committed
    );
}

/// A batch whose last part fails leaves no trace of its earlier parts.
pub async fn batches_are_atomic(store: Arc<dyn Store>) {
    let s = &*store;
    s.create_plan(&new_plan("taken", 0)).await.unwrap();
    let key = idem("k", "h", json!(1));
    let dup = new_plan("taken", 1);
    let entries = [marker(1)];
    let res = s
        .write(WriteBatch {
            idempotency: Some(&key),
            append: Some(Append {
                stream: "atomic",
                expected_seq: 0,
                entries: &entries,
            }),
            create_plan: Some(&dup),
            ..WriteBatch::default()
        })
        .await;
    assert!(matches!(
        res,
        Err(StoreError::Duplicate {
            kind: RecordKind::Plan,
            ..
        })
    ));
    assert_eq!(s.head("atomic").await.unwrap(), 0);
    assert_eq!(s.lookup_idempotent("k").await.unwrap(), None);
    // A failing plan update undoes the append too.
    let up = update("reserving", None, None);
    let res = s
        .write(WriteBatch {
            append: Some(Append {
                stream: "atomic",
                expected_seq: 0,
                entries: &entries,
            }),
            update_plan: Some(PlanChange {
                id: "taken",
                expected_version: 7,
                update: &up,
            }),
            ..WriteBatch::default()
        })
        .await;
    assert!(matches!(
        res,
        Err(StoreError::VersionConflict { actual: 1, .. })
    ));
    assert_eq!(s.head("atomic").await.unwrap(), 0);
    // The same batch at the right version commits both.
    let res = s
        .write(WriteBatch {
            append: Some(Append {
                stream: "atomic",
                expected_seq: 0,
                entries: &entries,
            }),
            update_plan: Some(PlanChange {
                id: "taken",
                expected_version: 1,
                update: &up,
            }),
            ..WriteBatch::default()
        })
        .await
        .unwrap();
    match res {
        BatchOutcome::Committed {
            seq: Some(1),
            plan: Some(p),
        } => assert_eq!((p.version, p.status.as_str()), (2, "reserving")),
        other => panic!("{other:?}"),
    }
}

/// A group commit: one append with many remembered responses, all or nothing; keys are looked
/// up in bulk.
pub async fn group_commits_remember_many_keys(store: Arc<dyn Store>) {
    let s = &*store;
    let none: Vec<String> = Vec::new();
    assert!(s.lookup_idempotent_many(&none).await.unwrap().is_empty());
    let keys: Vec<IdempotentResponse> = (0..700)
        .map(|i| idem(&format!("g-{i:03}"), &format!("h{i}"), json!({"n": i})))
        .collect();
    let entries: Vec<LogEntry> = (1..=700).map(marker).collect();
    let out = s
        .write(WriteBatch {
            append: Some(Append {
                stream: "group",
                expected_seq: 0,
                entries: &entries,
            }),
            remember: &keys,
            ..WriteBatch::default()
        })
        .await
        .unwrap();
    assert_eq!(
        out,
        BatchOutcome::Committed {
            seq: Some(700),
            plan: None
        }
    );
    // More keys than one statement binds, unknown ones left out, ordered by key.
    let mut asked: Vec<String> = (0..700).rev().map(|i| format!("g-{i:03}")).collect();
    asked.push("unknown".to_owned());
    asked.push("g-001".to_owned());
    let found = s.lookup_idempotent_many(&asked).await.unwrap();
    assert_eq!(found.len(), 700);
    assert_eq!(
        (found[0].key.as_str(), found[0].response.clone()),
        ("g-000", json!({"n": 0}))
    );
    assert!(found.windows(2).all(|w| w[0].key < w[1].key));
    assert_eq!(found[699].request_hash, "h699");
    // A stored key fails the whole batch: no append, no other key.
    let clash = [idem("fresh-1", "x", json!(1)), idem("g-123", "x", json!(2))];
    let res = s
        .write(WriteBatch {
            append: Some(Append {
                stream: "group",
                expected_seq: 700,
                entries: &entries[..2],
            }),
            remember: &clash,
            ..WriteBatch::default()
        })
        .await;
    match res {
        Err(StoreError::Duplicate {
            kind: RecordKind::IdempotencyKey,
            id,
        }) => assert_eq!(id, "g-123"),
        other => panic!("expected a duplicate key, got {other:?}"),
    }
    assert_eq!(s.head("group").await.unwrap(), 700);
    assert_eq!(s.lookup_idempotent("fresh-1").await.unwrap(), None);
    // So does a key given twice.
    let twice = [
        idem("fresh-2", "x", json!(1)),
        idem("fresh-2", "y", json!(2)),
    ];
    let res = s
        .write(WriteBatch {
            append: Some(Append {
                stream: "group",
                expected_seq: 700,
                entries: &entries[..1],
            }),
            remember: &twice,
            ..WriteBatch::default()
        })
        .await;
    assert!(matches!(
        res,
        Err(StoreError::Duplicate { kind: RecordKind::IdempotencyKey, ref id }) if id == "fresh-2"
    ));
    assert_eq!(s.head("group").await.unwrap(), 700);
    assert_eq!(s.lookup_idempotent("fresh-2").await.unwrap(), None);
    // A lost append remembers nothing either.
    let lost = [idem("fresh-3", "x", json!(1))];
    let res = s
        .write(WriteBatch {
            append: Some(Append {
                stream: "group",
                expected_seq: 3,
                entries: &entries[..1],
            }),
            remember: &lost,
            ..WriteBatch::default()
        })
        .await;
    assert!(matches!(res, Err(StoreError::Conflict { actual: 700, .. })));
    assert_eq!(s.lookup_idempotent("fresh-3").await.unwrap(), None);
}

fn new_sub(id: &str, kind: SubscriptionKind, minute: i64) -> NewSubscription {
    NewSubscription {
        id: id.to_owned(),
        kind,
        spec: json!({"zone": "zone-1", "dimension": "cores", "below": 4}),
        callback_url: format!("http://127.0.0.1:9/{id}"),
        created_at: t0() + berth_calendar::chrono::TimeDelta::minutes(minute),
    }
}

pub async fn subscriptions_crud(store: Arc<dyn Store>) {
    let s = &*store;
    let a = s
        .create_subscription(&new_sub("s-b", SubscriptionKind::Capacity, 1))
        .await
        .unwrap();
    assert_eq!(
        (a.kind, a.schema_version),
        (SubscriptionKind::Capacity, SCHEMA_VERSION)
    );
    s.create_subscription(&new_sub("s-a", SubscriptionKind::Reservation, 1))
        .await
        .unwrap();
    s.create_subscription(&new_sub("s-c", SubscriptionKind::Capacity, 0))
        .await
        .unwrap();
    assert!(matches!(
        s.create_subscription(&new_sub("s-a", SubscriptionKind::Capacity, 5))
            .await,
        Err(StoreError::Duplicate {
            kind: RecordKind::Subscription,
            ..
        })
    ));
    assert_eq!(s.get_subscription("s-b").await.unwrap(), Some(a));
    assert_eq!(s.get_subscription("none").await.unwrap(), None);
    let ids =
        |v: Vec<berth_store::SubscriptionRecord>| v.into_iter().map(|s| s.id).collect::<Vec<_>>();
    assert_eq!(
        ids(s.list_subscriptions(None).await.unwrap()),
        ["s-c", "s-a", "s-b"]
    );
    assert_eq!(
        ids(s
            .list_subscriptions(Some(SubscriptionKind::Capacity))
            .await
            .unwrap()),
        ["s-c", "s-b"]
    );
    assert_eq!(
        ids(s
            .list_subscriptions(Some(SubscriptionKind::Reservation))
            .await
            .unwrap()),
        ["s-a"]
    );
    s.delete_subscription("s-c").await.unwrap();
    assert!(matches!(
        s.delete_subscription("s-c").await,
        Err(StoreError::NotFound {
            kind: RecordKind::Subscription,
            ..
        })
    ));
    assert_eq!(
        ids(s.list_subscriptions(None).await.unwrap()),
        ["s-a", "s-b"]
    );
}

pub async fn providers_and_encrypted_credentials(store: Arc<dyn Store>) {
    let s = &*store;
    let key = CredentialKey::new([42; 32]);
    let secret = "s3cr3t-password-for-keystone";
    let mut p = NewProvider {
        name: "openstack".to_owned(),
        endpoint: "http://127.0.0.1:5000/v3".to_owned(),
        metadata: json!({"region": "RegionOne"}),
        credentials: Some(Secret::new(secret)),
        now: t0(),
    };
    // Credentials without a key are refused and nothing is stored.
    assert!(matches!(
        s.put_provider(&p, None).await,
        Err(StoreError::CredentialsWithoutKey { .. })
    ));
    assert_eq!(s.get_provider("openstack").await.unwrap(), None);
    let rec = s.put_provider(&p, Some(&key)).await.unwrap();
    assert!(rec.has_credentials);
    assert_eq!(
        (rec.created_at, rec.updated_at, rec.schema_version),
        (t0(), t0(), SCHEMA_VERSION)
    );
    let listed = s.list_providers().await.unwrap();
    assert_eq!(listed, vec![rec.clone()]);
    // Nothing read back outside `provider_credentials` carries the secret.
    let shown = format!(
        "{listed:?} {:?} {}",
        s.get_provider("openstack").await.unwrap(),
        serde_json::to_string(&listed).unwrap()
    );
    assert!(!shown.contains(secret));
    assert_eq!(
        s.provider_credentials("openstack", &key)
            .await
            .unwrap()
            .unwrap()
            .expose(),
        secret
    );
    let wrong = CredentialKey::new([43; 32]);
    assert!(matches!(
        s.provider_credentials("openstack", &wrong).await,
        Err(StoreError::Decrypt { ref provider }) if provider == "openstack"
    ));
    assert!(matches!(
        s.provider_credentials("ghost", &key).await,
        Err(StoreError::NotFound {
            kind: RecordKind::Provider,
            ..
        })
    ));
    // Replacing keeps the creation time; without credentials none remain.
    p.credentials = None;
    p.now = h(1);
    p.endpoint = "http://127.0.0.1:5001/v3".to_owned();
    let rec2 = s.put_provider(&p, None).await.unwrap();
    assert_eq!(
        (rec2.created_at, rec2.updated_at, rec2.has_credentials),
        (t0(), h(1), false)
    );
    assert_eq!(rec2.endpoint, "http://127.0.0.1:5001/v3");
    assert_eq!(
        s.provider_credentials("openstack", &key).await.unwrap(),
        None
    );
    s.put_provider(
        &NewProvider {
            name: "aws".to_owned(),
            ..p.clone()
        },
        None,
    )
    .await
    .unwrap();
    let names: Vec<String> = s
        .list_providers()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, ["aws", "openstack"]);
    s.delete_provider("aws").await.unwrap();
    assert!(matches!(
        s.delete_provider("aws").await,
        Err(StoreError::NotFound {
            kind: RecordKind::Provider,
            ..
        })
    ));
}
