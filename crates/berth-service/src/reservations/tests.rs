//! Tests of the reservation service: last-unit races, restarts, idempotency, catch-up between
//! two writers, journal failures, batches, the timer and webhooks.

use std::sync::atomic::{AtomicUsize, Ordering};

use berth_calendar::{
    AllocationRequest, Amounts, CapacityChange, Dimension, PoolKey, ReservationQuery,
    ReservationRequest, ThresholdSubscription, ZoneId,
};
use chrono::TimeZone;

use super::writer::Pending;
use super::*;
use crate::notify::NotifyConfig;
use crate::provider::DEFAULT_PROVIDER;
use crate::{ManualClock, ProviderFlavor};
use berth_calendar::Applied;
use tokio::sync::oneshot;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default()
}

fn h(n: i64) -> DateTime<Utc> {
    t0() + chrono::TimeDelta::hours(n)
}

fn capacity(zone: &str, amounts: Amounts) -> Command {
    Command::IncreaseCapacity(CapacityChange {
        pool: PoolKey::new(zone, "os"),
        start: t0(),
        end: None,
        amounts,
    })
}

fn reserve(zone: &str, n: u64) -> Command {
    Command::CreateReservation(
        ReservationRequest::new(zone, Amounts::new().with("instances", n)).window(h(1), h(5)),
    )
}

async fn open(j: Arc<dyn Store>, clock: &ManualClock) -> Arc<ReservationService> {
    ReservationService::open(
        j,
        ReservationOptions::default(),
        Arc::new(clock.clone()),
        Notifier::disabled(),
    )
    .await
    .unwrap()
}

async fn memory() -> Arc<dyn Store> {
    berth_store::open("sqlite::memory:").await.unwrap()
}

async fn live(svc: &ReservationService) -> Vec<String> {
    svc.read(|c| {
        c.query_reservations(&ReservationQuery::default())
            .into_iter()
            .filter(|r| r.state != berth_calendar::ReservationState::Cancelled)
            .map(|r| r.id.to_string())
            .collect()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_racers_for_the_last_unit_exactly_one_wins() {
    let clock = ManualClock::new(t0());
    let svc = open(memory().await, &clock).await;
    svc.command(capacity("z", Amounts::new().with("instances", 1)), None)
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for _ in 0..64 {
        let svc = Arc::clone(&svc);
        tasks.push(tokio::spawn(async move {
            svc.command(reserve("z", 1), None).await
        }));
    }
    let mut ok = 0;
    let mut conflicts = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => ok += 1,
            Err(e) if e.conflict().is_some() => conflicts += 1,
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    assert_eq!((ok, conflicts), (1, 63));
    assert_eq!(live(&svc).await.len(), 1);
}

fn url(dir: &tempfile::TempDir) -> String {
    format!("sqlite://{}", dir.path().join("berth.db").display())
}

#[tokio::test]
async fn state_survives_a_restart_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(t0());
    let j = berth_store::open(&url(&dir)).await.unwrap();
    let svc = open(Arc::clone(&j), &clock).await;
    svc.command(capacity("z", Amounts::new().with("instances", 3)), None)
        .await
        .unwrap();
    svc.command(reserve("z", 2), None).await.unwrap();
    let r2 = svc.command(reserve("z", 1), None).await.unwrap();
    svc.command(
        Command::CancelReservation {
            id: berth_calendar::ReservationId(1),
        },
        None,
    )
    .await
    .unwrap();
    let seq = svc.seq().await;
    drop(svc);
    j.close().await.unwrap();
    let j = berth_store::open(&url(&dir)).await.unwrap();
    let again = open(j, &clock).await;
    assert_eq!(again.seq().await, seq);
    assert_eq!(live(&again).await, vec!["r2".to_owned()]);
    assert!(
        matches!(r2.outcome.applied, Applied::ReservationCreated { id, .. } if id.to_string() == "r2")
    );
    // The cancelled reservation's units are free again: 2 more fit, 3 do not.
    assert!(again.command(reserve("z", 3), None).await.is_err());
    assert!(again.command(reserve("z", 2), None).await.is_ok());
}

#[tokio::test]
async fn idempotency_key_returns_the_first_outcome_and_refuses_other_bodies() {
    let clock = ManualClock::new(t0());
    let j = memory().await;
    let svc = open(Arc::clone(&j), &clock).await;
    svc.command(capacity("z", Amounts::new().with("instances", 5)), None)
        .await
        .unwrap();
    let a = svc
        .command(reserve("z", 1), Some("k1".into()))
        .await
        .unwrap();
    let b = svc
        .command(reserve("z", 1), Some("k1".into()))
        .await
        .unwrap();
    assert!(!a.replayed);
    assert!(b.replayed);
    assert_eq!(a.outcome, b.outcome);
    assert_eq!(live(&svc).await.len(), 1);
    let e = svc
        .command(reserve("z", 2), Some("k1".into()))
        .await
        .unwrap_err();
    assert!(matches!(e, ServiceError::KeyReused { .. }));
    // Keys are durable with their effect.
    let again = open(j, &clock).await;
    assert!(
        again
            .command(reserve("z", 1), Some("k1".into()))
            .await
            .unwrap()
            .replayed
    );
}

#[tokio::test]
async fn a_second_writer_catches_up_and_sees_the_conflict() {
    let clock = ManualClock::new(t0());
    let j = memory().await;
    let a = open(Arc::clone(&j), &clock).await;
    let b = open(Arc::clone(&j), &clock).await;
    a.command(capacity("z", Amounts::new().with("instances", 1)), None)
        .await
        .unwrap();
    // `b` has not seen the capacity: its first attempt conflicts on append, it catches up.
    b.command(reserve("z", 1), None).await.unwrap();
    // `a` is now behind; it admits on its stale calendar, conflicts, catches up and refuses.
    let e = a.command(reserve("z", 1), None).await.unwrap_err();
    assert!(e.conflict().is_some(), "{e}");
    assert_eq!(live(&a).await, live(&b).await);
    assert_eq!(j.head("calendar").await.unwrap(), 2);
}

#[tokio::test]
async fn a_writer_that_stopped_reading_before_its_commits_still_sees_another_writers() {
    let clock = ManualClock::new(t0());
    let j = memory().await;
    let a = open(Arc::clone(&j), &clock).await;
    let b = open(Arc::clone(&j), &clock).await;
    let quiet = u64::from(super::QUIET_COMMITS);
    for _ in 0..quiet {
        a.command(capacity("z", Amounts::new().with("instances", 1)), None)
            .await
            .unwrap();
    }
    let rebuilt = a.writer_stats().rebuilds;
    // `b` takes every unit; `a` commits without reading first, its compare-and-set is
    // refused, it rebuilds from the log and refuses the reservation.
    b.command(reserve("z", quiet), None).await.unwrap();
    let e = a.command(reserve("z", 1), None).await.unwrap_err();
    assert!(e.conflict().is_some(), "{e}");
    assert_eq!(a.writer_stats().rebuilds, rebuilt + 1);
    assert_eq!(live(&a).await, live(&b).await);
    assert_eq!(j.head("calendar").await.unwrap(), quiet + 1);
    // Having seen another writer, `a` reads the log before its commits again.
    b.command(capacity("z", Amounts::new().with("instances", 1)), None)
        .await
        .unwrap();
    a.command(reserve("z", 1), None).await.unwrap();
    assert_eq!(a.writer_stats().rebuilds, rebuilt + 1);
    assert_eq!(live(&a).await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_writers_racing_for_the_last_unit_book_it_once() {
    let clock = ManualClock::new(t0());
    let j = memory().await;
    let a = open(Arc::clone(&j), &clock).await;
    let b = open(Arc::clone(&j), &clock).await;
    a.command(capacity("z", Amounts::new().with("instances", 3)), None)
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for i in 0..40 {
        let svc = Arc::clone(if i % 2 == 0 { &a } else { &b });
        tasks.push(tokio::spawn(async move {
            svc.command(reserve("z", 1), None).await.is_ok()
        }));
    }
    let mut ok = 0;
    for t in tasks {
        ok += usize::from(t.await.unwrap());
    }
    assert_eq!(ok, 3);
    let fresh = open(j, &clock).await;
    assert_eq!(live(&fresh).await.len(), 3);
}

#[tokio::test]
async fn a_failed_append_leaves_no_trace() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(t0());
    let j = berth_store::open(&url(&dir)).await.unwrap();
    let svc = open(Arc::clone(&j), &clock).await;
    svc.command(capacity("z", Amounts::new().with("instances", 1)), None)
        .await
        .unwrap();
    j.close().await.unwrap();
    let e = svc.command(reserve("z", 1), None).await.unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::Unavailable, "{e}");
    let e = svc
        .batch(vec![reserve("z", 1), reserve("z", 0)])
        .await
        .unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::Unavailable, "{e}");
    let j = berth_store::open(&url(&dir)).await.unwrap();
    let svc = open(j, &clock).await;
    assert!(live(&svc).await.is_empty());
    svc.command(reserve("z", 1), None).await.unwrap();
    assert_eq!(live(&svc).await, vec!["r1".to_owned()]);
}

#[tokio::test]
async fn a_batch_is_all_or_nothing() {
    let clock = ManualClock::new(t0());
    let svc = open(memory().await, &clock).await;
    svc.command(capacity("z", Amounts::new().with("instances", 2)), None)
        .await
        .unwrap();
    let e = svc
        .batch(vec![reserve("z", 1), reserve("z", 1), reserve("z", 1)])
        .await
        .unwrap_err();
    assert!(e.conflict().is_some());
    assert!(live(&svc).await.is_empty());
    assert_eq!(
        svc.batch(vec![reserve("z", 1), reserve("z", 1)])
            .await
            .unwrap()
            .len(),
        2
    );
    assert_eq!(live(&svc).await.len(), 2);
}

#[tokio::test]
async fn allocations_and_providers_round_trip() {
    let clock = ManualClock::new(t0());
    let j = memory().await;
    let svc = open(Arc::clone(&j), &clock).await;
    let p = ProviderInfo {
        id: String::new(),
        name: None,
        provider_type: "openstack".into(),
        endpoint: None,
        region: None,
        tenant: Some("t".into()),
        flavors: vec![ProviderFlavor {
            id: "1".into(),
            name: "m1.small".into(),
            vcpus: 1,
            ram: 2048,
            disk: 20,
        }],
    };
    let p1 = svc
        .add_provider(p.clone(), Some("secret".into()))
        .await
        .unwrap();
    let p2 = svc.add_provider(p, None).await.unwrap();
    assert_ne!(p1, p2);
    svc.command(capacity("z", Amounts::new().with("instances", 2)), None)
        .await
        .unwrap();
    let c = svc
        .command(
            Command::CreateAllocation(AllocationRequest::unreserved(
                "z",
                Amounts::new().with("instances", 2),
            )),
            None,
        )
        .await
        .unwrap();
    assert!(matches!(
        c.outcome.applied,
        Applied::AllocationCreated { .. }
    ));
    assert!(svc.command(reserve("z", 1), None).await.is_err());
    let again = open(Arc::clone(&j), &clock).await;
    let providers = again.providers().await.unwrap();
    assert_eq!(providers.len(), 2);
    assert!(
        providers
            .iter()
            .all(|p| p.provider_type == "openstack" && p.tenant.as_deref() == Some("t"))
    );
    // Without a credential key nothing secret was stored.
    assert!(
        j.list_providers()
            .await
            .unwrap()
            .iter()
            .all(|p| !p.has_credentials)
    );
    assert!(again.command(reserve("z", 1), None).await.is_err());
}

/// A loopback webhook receiver that refuses the first `fail_first` posts.
async fn receiver(fail_first: usize) -> (String, Arc<std::sync::Mutex<Vec<serde_json::Value>>>) {
    let got = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::new(AtomicUsize::new(0));
    let g = Arc::clone(&got);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |axum::Json(v): axum::Json<serde_json::Value>| {
            let g = Arc::clone(&g);
            let seen = Arc::clone(&seen);
            async move {
                if seen.fetch_add(1, Ordering::SeqCst) < fail_first {
                    return axum::http::StatusCode::INTERNAL_SERVER_ERROR;
                }
                g.lock().unwrap().push(v);
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/hook"), got)
}

async fn wait_for(
    got: &std::sync::Mutex<Vec<serde_json::Value>>,
    n: usize,
) -> Vec<serde_json::Value> {
    for _ in 0..200 {
        let v = got.lock().unwrap().clone();
        if v.len() >= n {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    got.lock().unwrap().clone()
}

#[tokio::test]
async fn the_timer_drives_events_to_webhooks_with_retries() {
    let (url, got) = receiver(2).await;
    let clock = ManualClock::new(t0());
    let cfg = NotifyConfig {
        initial_backoff: Duration::from_millis(10),
        allow_private_callbacks: true,
        ..NotifyConfig::default()
    };
    let svc = ReservationService::open(
        memory().await,
        ReservationOptions::default(),
        Arc::new(clock.clone()),
        Notifier::spawn(cfg),
    )
    .await
    .unwrap();
    svc.command(capacity("z", Amounts::new().with("instances", 4)), None)
        .await
        .unwrap();
    let id = svc
        .subscribe_reservations(
            ReservationFilter {
                events: vec!["reservation-started".into()],
                ..Default::default()
            },
            url.clone(),
        )
        .await
        .unwrap();
    assert!(id.starts_with("w-"));
    let sub = ThresholdSubscription {
        zone: ZoneId::new("z"),
        provider: None,
        dimension: Dimension::instances(),
        below: 2,
    };
    let sid = svc.subscribe_capacity(sub, url.clone()).await.unwrap();
    svc.command(reserve("z", 3), None).await.unwrap();
    clock.set(h(1));
    let (tx, rx) = tokio::sync::watch::channel(false);
    let timer = svc.spawn_timer(Duration::from_millis(10), rx);
    let events = wait_for(&got, 2).await;
    let _ = tx.send(true);
    let _ = timer.await;
    let names: Vec<&str> = events
        .iter()
        .filter_map(|v| v["event"]["event"].as_str())
        .collect();
    assert!(names.contains(&"reservation-started"), "{events:?}");
    assert!(names.contains(&"capacity-threshold"), "{events:?}");
    assert!(events.iter().any(|v| v["subscription-id"] == sid.as_str()));
    svc.unsubscribe(&id).await.unwrap();
    svc.unsubscribe(&sid).await.unwrap();
    assert!(svc.webhooks().await.is_empty());
    assert!(matches!(
        svc.unsubscribe("w9").await,
        Err(ServiceError::NotFound { .. })
    ));
    assert!(
        svc.subscribe_reservations(ReservationFilter::default(), "ftp://x".into())
            .await
            .is_err()
    );
}

// ----- group commit ------------------------------------------------------------------------

/// A reservation tagged `req = tag`, to find its command in the log.
fn tagged(zone: &str, n: u64, tag: &str) -> Command {
    let mut r =
        ReservationRequest::new(zone, Amounts::new().with("instances", n)).window(h(1), h(5));
    r.attributes.insert("req".into(), tag.into());
    Command::CreateReservation(r)
}

fn tag_of(c: &Command) -> Option<&str> {
    match c {
        Command::CreateReservation(r) => r.attributes.get("req").map(String::as_str),
        _ => None,
    }
}

async fn log(j: &dyn Store) -> Vec<berth_store::StoredCommand> {
    j.commands_since("calendar", 0).await.unwrap()
}

/// The live calendar equals a replay of the whole log.
async fn assert_matches_replay(svc: &ReservationService, j: &dyn Store) {
    let replayed = Calendar::replay(Policy::default(), log(j).await.into_iter().map(|c| c.entry))
        .unwrap()
        .state();
    let live = svc.read(|c| c.state()).await.unwrap();
    assert_eq!(live, replayed);
}

/// Queues requests in this order while the calendar is locked, so the writer takes them as
/// one batch; returns the answers in order.
async fn one_batch(
    svc: &ReservationService,
    requests: Vec<(Vec<Command>, Option<&str>)>,
) -> Vec<writer::Answer> {
    let part = svc.all_parts().remove(0);
    let guard = part.core.inner.lock().await;
    let mut answers = Vec::new();
    for (commands, key) in requests {
        let idem = key.and_then(|k| commands.first().map(|c| IdempotencyKey::for_command(k, c)));
        let (reply, answer) = oneshot::channel();
        part.queue
            .send(Pending {
                commands,
                idem,
                reply,
            })
            .await
            .unwrap();
        answers.push(answer);
    }
    drop(guard);
    let mut out = Vec::new();
    for a in answers {
        out.push(a.await.unwrap());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_clients_are_committed_in_groups_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(t0());
    let j = berth_store::open(&url(&dir)).await.unwrap();
    let svc = open(Arc::clone(&j), &clock).await;
    svc.command(capacity("z", Amounts::new().with("instances", 300)), None)
        .await
        .unwrap();
    let before = svc.writer_stats();
    // 48 clients x 10 requests for 1..=3 units of 300: some fit, the rest conflict; every
    // third request carries an idempotency key and is sent twice.
    let mut tasks = Vec::new();
    for client in 0..48u64 {
        let svc = Arc::clone(&svc);
        tasks.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            for i in 0..10u64 {
                let tag = format!("c{client}-{i}");
                let cmd = tagged("z", 1 + (client + i) % 3, &tag);
                let key = (i % 3 == 0).then(|| format!("key-{tag}"));
                let first = svc.command(cmd.clone(), key.clone()).await;
                let mut answer = first.as_ref().ok().map(|c| c.outcome.clone());
                if key.is_some() {
                    match (&first, svc.command(cmd, key).await) {
                        (Ok(a), Ok(b)) => {
                            assert!(b.replayed && !a.replayed);
                            assert_eq!(a.outcome, b.outcome);
                        }
                        // A refused request leaves no key: the retry is checked afresh.
                        (Err(_), Ok(b)) => {
                            assert!(!b.replayed);
                            answer = Some(b.outcome);
                        }
                        (_, Err(e)) => assert!(e.conflict().is_some(), "{e}"),
                    }
                }
                match (answer, first) {
                    (Some(outcome), _) => acked.push((tag, outcome)),
                    (None, Err(e)) => assert!(e.conflict().is_some(), "{e}"),
                    (None, Ok(_)) => unreachable!(),
                }
            }
            acked
        }));
    }
    let mut acked = Vec::new();
    for t in tasks {
        acked.extend(t.await.unwrap());
    }
    let stats = svc.writer_stats();
    let (commits, requests) = (
        stats.commits - before.commits,
        stats.requests - before.requests,
    );
    assert!(
        commits < requests,
        "no batching: {commits} commits for {requests} requests"
    );
    // Every acknowledged request is in the log exactly once.
    let entries = log(&*j).await;
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for c in &entries {
        if let Some(t) = tag_of(&c.entry.command) {
            *count.entry(t.to_owned()).or_default() += 1;
        }
    }
    for (tag, outcome) in &acked {
        assert!(matches!(
            outcome.applied,
            Applied::ReservationCreated { .. }
        ));
        assert_eq!(count.get(tag), Some(&1), "{tag}");
    }
    // Nothing else is logged, and nothing is double-booked.
    assert_eq!(
        count
            .keys()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>(),
        acked.iter().map(|(t, _)| t.clone()).collect()
    );
    let units: u64 = svc
        .read(|c| {
            c.query_reservations(&ReservationQuery::default())
                .iter()
                .map(|r| r.amounts.get("instances"))
                .sum()
        })
        .await
        .unwrap();
    assert!(units <= 300, "{units} units booked of 300");
    assert_eq!(live(&svc).await.len(), count.values().sum::<usize>());
    assert!(count.values().all(|n| *n == 1));
    assert_matches_replay(&svc, &*j).await;
    // A restart sees the same state.
    let again = open(Arc::clone(&j), &clock).await;
    assert_eq!(
        again.read(|c| c.state()).await.unwrap(),
        svc.read(|c| c.state()).await.unwrap()
    );
}

#[tokio::test]
async fn a_batch_is_checked_in_order_and_refusals_change_nothing() {
    let clock = ManualClock::new(t0());
    let j = memory().await;
    let svc = open(Arc::clone(&j), &clock).await;
    svc.command(capacity("z", Amounts::new().with("instances", 2)), None)
        .await
        .unwrap();
    let head = j.head("calendar").await.unwrap();
    let commits = svc.writer_stats().commits;
    let cancel_r1 = Command::CancelReservation {
        id: berth_calendar::ReservationId(1),
    };
    let answers = one_batch(
        &svc,
        vec![
            (vec![reserve("z", 1)], None),
            (vec![reserve("z", 1)], None),
            // Full: refused, and it takes nothing.
            (vec![reserve("z", 1)], None),
            // All or nothing: the second part does not fit, so the first is undone.
            (vec![cancel_r1.clone(), reserve("z", 3)], None),
            (vec![cancel_r1], None),
            // Sees the cancel just before it.
            (vec![reserve("z", 1)], None),
        ],
    )
    .await;
    let ok: Vec<bool> = answers.iter().map(Result::is_ok).collect();
    assert_eq!(ok, [true, true, false, false, true, true]);
    assert!(answers[2].as_ref().unwrap_err().conflict().is_some());
    assert!(answers[3].as_ref().unwrap_err().conflict().is_some());
    assert!(matches!(
        answers[5].as_ref().unwrap().0[0].applied,
        Applied::ReservationCreated { id, .. } if id.to_string() == "r3"
    ));
    assert_eq!(svc.writer_stats().commits, commits + 1);
    assert_eq!(j.head("calendar").await.unwrap(), head + 4);
    assert_eq!(live(&svc).await, ["r2", "r3"]);
    assert_matches_replay(&svc, &*j).await;
}

#[tokio::test]
async fn one_key_twice_in_a_batch_takes_effect_once() {
    let clock = ManualClock::new(t0());
    let j = memory().await;
    let svc = open(Arc::clone(&j), &clock).await;
    svc.command(capacity("z", Amounts::new().with("instances", 9)), None)
        .await
        .unwrap();
    let known = svc
        .command(reserve("z", 1), Some("stored".into()))
        .await
        .unwrap();
    let answers = one_batch(
        &svc,
        vec![
            (vec![reserve("z", 2)], Some("k")),
            (vec![reserve("z", 2)], Some("k")),
            (vec![reserve("z", 2)], Some("k")),
            // Same key, another request: refused, the first stands.
            (vec![reserve("z", 3)], Some("k")),
            // A key committed by an earlier batch replays inside this one.
            (vec![reserve("z", 1)], Some("stored")),
            (vec![reserve("z", 3)], Some("other")),
        ],
    )
    .await;
    let first = answers[0].as_ref().unwrap();
    assert!(!first.1);
    for a in &answers[1..3] {
        let (outcomes, replayed) = a.as_ref().unwrap();
        assert!(*replayed);
        assert_eq!(outcomes, &first.0);
    }
    assert!(matches!(answers[3], Err(ServiceError::KeyReused { .. })));
    let (outcomes, replayed) = answers[4].as_ref().unwrap();
    assert!(*replayed);
    assert_eq!(outcomes[0], known.outcome);
    assert!(!answers[5].as_ref().unwrap().1);
    // One reservation per key: stored (r1), k (r2), other (r3).
    assert_eq!(live(&svc).await, ["r1", "r2", "r3"]);
    assert_matches_replay(&svc, &*j).await;
    // The key is durable with its effect.
    let again = svc
        .command(reserve("z", 2), Some("k".into()))
        .await
        .unwrap();
    assert!(again.replayed);
    assert_eq!(again.outcome, first.0[0]);
}

#[tokio::test]
async fn a_failed_group_commit_acknowledges_nothing_and_the_next_one_commits() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(t0());
    let sqlite = berth_store::SqliteStore::open(&url(&dir), &Default::default())
        .await
        .unwrap();
    let pool = sqlite.pool().clone();
    let j: Arc<dyn Store> = Arc::new(sqlite);
    let svc = open(Arc::clone(&j), &clock).await;
    svc.command(capacity("z", Amounts::new().with("instances", 10)), None)
        .await
        .unwrap();
    svc.command(reserve("z", 1), None).await.unwrap();
    let head = j.head("calendar").await.unwrap();
    let state = svc.read(|c| c.state()).await.unwrap();
    // The third command of the next batch fails to insert: the transaction dies mid-way.
    sqlx::query(&format!(
        "CREATE TRIGGER fail_mid_batch BEFORE INSERT ON commands WHEN NEW.seq = {} \
         BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
        head + 3
    ))
    .execute(&pool)
    .await
    .unwrap();
    let batch = || {
        vec![
            (vec![reserve("z", 1)], Some("a")),
            (vec![reserve("z", 1)], None),
            (vec![reserve("z", 20)], None),
            (vec![reserve("z", 1)], None),
            (vec![reserve("z", 1), reserve("z", 1)], None),
        ]
    };
    let answers = one_batch(&svc, batch()).await;
    for a in &answers {
        let e = a.as_ref().unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Unavailable, "{e}");
    }
    assert_eq!(j.head("calendar").await.unwrap(), head);
    assert_eq!(j.lookup_idempotent("a").await.unwrap(), None);
    assert_eq!(svc.read(|c| c.state()).await.unwrap(), state);
    assert_eq!(svc.seq().await, head);
    sqlx::query("DROP TRIGGER fail_mid_batch")
        .execute(&pool)
        .await
        .unwrap();
    let answers = one_batch(&svc, batch()).await;
    let ok: Vec<bool> = answers.iter().map(Result::is_ok).collect();
    assert_eq!(ok, [true, true, false, true, true]);
    assert_eq!(j.head("calendar").await.unwrap(), head + 5);
    assert_eq!(live(&svc).await, ["r1", "r2", "r3", "r4", "r5", "r6"]);
    assert_matches_replay(&svc, &*j).await;
}

// ----- snapshots -----------------------------------------------------------------------------

async fn open_with(
    j: Arc<dyn Store>,
    clock: &ManualClock,
    opts: ReservationOptions,
) -> Arc<ReservationService> {
    ReservationService::open(j, opts, Arc::new(clock.clone()), Notifier::disabled())
        .await
        .unwrap()
}

/// A mixed history: capacity, creates, an update, cancels, allocations, time passing.
async fn history(svc: &ReservationService, clock: &ManualClock, rounds: i64) {
    svc.command(capacity("z", Amounts::new().with("instances", 40)), None)
        .await
        .unwrap();
    for i in 0..rounds {
        let now = clock.now();
        let req =
            ReservationRequest::new("z", Amounts::new().with("instances", 1 + (i as u64 % 3)))
                .window(
                    now + chrono::TimeDelta::minutes(30),
                    now + chrono::TimeDelta::hours(3),
                );
        let r = svc
            .command(
                Command::CreateReservation(req),
                Some(format!("h-{}-{i}", now.timestamp())),
            )
            .await
            .unwrap();
        let Applied::ReservationCreated { id, .. } = r.outcome.applied else {
            panic!("{r:?}");
        };
        if i % 4 == 1 {
            svc.command(Command::CancelReservation { id }, None)
                .await
                .unwrap();
        }
        if i % 5 == 2 {
            svc.command(
                Command::CreateAllocation(AllocationRequest::unreserved(
                    "z",
                    Amounts::new().with("instances", 1),
                )),
                None,
            )
            .await
            .unwrap();
        }
        if i % 6 == 3 {
            // Time passes: reservations start, expire and end.
            clock.set(now + chrono::TimeDelta::minutes(97));
        }
    }
}

/// A replay of the whole log, brought to `now` as a live calendar is when read.
async fn replay_state_at(j: &dyn Store, now: DateTime<Utc>) -> berth_calendar::CalendarState {
    let mut cal =
        Calendar::replay(Policy::default(), log(j).await.into_iter().map(|c| c.entry)).unwrap();
    cal.advance(now).unwrap();
    cal.state()
}

async fn snapshot_seq(svc: &ReservationService) -> u64 {
    svc.all_parts()[0].core.inner.lock().await.snapshot_seq
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_plus_the_tail_equals_a_full_replay() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(t0());
    let j = berth_store::open(&url(&dir)).await.unwrap();
    let opts = ReservationOptions {
        snapshot_every: 7,
        ..ReservationOptions::default()
    };
    let svc = open_with(Arc::clone(&j), &clock, opts.clone()).await;
    history(&svc, &clock, 30).await;
    // Snapshots are written in the background (one at a time; a due one is skipped while
    // another is in flight): wait until at least three are written and the count settles.
    let mut settled = 0;
    for _ in 0..500 {
        let before = svc.writer_stats().snapshots;
        tokio::time::sleep(Duration::from_millis(20)).await;
        if before >= 3 && svc.writer_stats().snapshots == before {
            settled += 1;
            if settled == 3 {
                break;
            }
        } else {
            settled = 0;
        }
    }
    assert!(
        svc.writer_stats().snapshots >= 3,
        "{:?}",
        svc.writer_stats()
    );
    // Where the newest snapshot lands depends on which ones were skipped; make sure a tail
    // follows it (one command is far from the next due snapshot, seven commands away).
    if j.snapshot_seqs("calendar").await.unwrap().first()
        == Some(&j.head("calendar").await.unwrap())
    {
        let start = clock.now() + chrono::TimeDelta::hours(1);
        let req = ReservationRequest::new("z", Amounts::new().with("instances", 1))
            .window(start, start + chrono::TimeDelta::hours(1));
        svc.command(Command::CreateReservation(req), None)
            .await
            .unwrap();
    }
    let seqs = j.snapshot_seqs("calendar").await.unwrap();
    assert_eq!(seqs.len(), berth_store::SNAPSHOTS_KEPT);
    let head = j.head("calendar").await.unwrap();
    assert!(seqs[0] < head, "no tail after the newest snapshot");
    drop(svc);
    let again = open_with(Arc::clone(&j), &clock, opts).await;
    assert_eq!(snapshot_seq(&again).await, seqs[0]);
    assert_eq!(again.seq().await, head);
    let expected = replay_state_at(&*j, clock.now()).await;
    assert_eq!(again.read(|c| c.state()).await.unwrap(), expected);
    // And it keeps working from there: the next ids follow on.
    let start = clock.now() + chrono::TimeDelta::hours(1);
    let req = ReservationRequest::new("z", Amounts::new().with("instances", 1))
        .window(start, start + chrono::TimeDelta::hours(1));
    let r = again
        .command(Command::CreateReservation(req), None)
        .await
        .unwrap();
    let created = expected.reservations.len() + 1;
    assert!(
        matches!(r.outcome.applied, Applied::ReservationCreated { id, .. } if id.to_string() == format!("r{created}")),
        "{r:?}"
    );
    assert_matches_replay(&again, &*j).await;
}

#[tokio::test]
async fn an_explicit_snapshot_logs_a_pending_advance_first() {
    let clock = ManualClock::new(t0());
    let j = memory().await;
    let opts = ReservationOptions {
        snapshot_every: 0,
        ..ReservationOptions::default()
    };
    let svc = open_with(Arc::clone(&j), &clock, opts.clone()).await;
    assert_eq!(svc.snapshot().await.unwrap(), None);
    svc.command(capacity("z", Amounts::new().with("instances", 4)), None)
        .await
        .unwrap();
    svc.command(reserve("z", 2), None).await.unwrap();
    assert_eq!(svc.writer_stats().snapshots, 0);
    // The reservation starts when the clock passes h(1): an advance not logged yet.
    clock.set(h(2));
    assert_eq!(live(&svc).await.len(), 1);
    let head = j.head("calendar").await.unwrap();
    assert_eq!(svc.snapshot().await.unwrap(), Some(head + 1));
    assert!(matches!(
        log(&*j).await.last().map(|c| &c.entry.command),
        Some(Command::Advance)
    ));
    let again = open_with(Arc::clone(&j), &clock, opts).await;
    assert_eq!(snapshot_seq(&again).await, head + 1);
    assert_eq!(
        again.read(|c| c.state()).await.unwrap(),
        svc.read(|c| c.state()).await.unwrap()
    );
}

#[tokio::test]
async fn unusable_snapshots_fall_back_to_older_ones_then_to_a_full_replay() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(t0());
    let sqlite = berth_store::SqliteStore::open(&url(&dir), &Default::default())
        .await
        .unwrap();
    let pool = sqlite.pool().clone();
    let j: Arc<dyn Store> = Arc::new(sqlite);
    let opts = ReservationOptions {
        snapshot_every: 0,
        ..ReservationOptions::default()
    };
    let svc = open_with(Arc::clone(&j), &clock, opts.clone()).await;
    history(&svc, &clock, 6).await;
    let good = svc.snapshot().await.unwrap().unwrap();
    history(&svc, &clock, 4).await;
    drop(svc);
    let head = j.head("calendar").await.unwrap();
    let expected = replay_state_at(&*j, clock.now()).await;
    let reopen = || open_with(Arc::clone(&j), &clock, opts.clone());
    // Newest: not JSON at all (its checksum is right: the store cannot tell).
    j.put_snapshot("calendar", head, "{not json", t0())
        .await
        .unwrap();
    let again = reopen().await;
    assert_eq!(snapshot_seq(&again).await, good);
    assert_eq!(again.read(|c| c.state()).await.unwrap(), expected);
    // Newest: a snapshot of a format this build does not read.
    let mut future: serde_json::Value = serde_json::from_str(
        &j.snapshot_at("calendar", good)
            .await
            .unwrap()
            .unwrap()
            .state,
    )
    .unwrap();
    future["format"] = serde_json::json!(99);
    j.put_snapshot("calendar", head, &future.to_string(), t0())
        .await
        .unwrap();
    let again = reopen().await;
    assert_eq!(snapshot_seq(&again).await, good);
    assert_eq!(again.read(|c| c.state()).await.unwrap(), expected);
    // The good one damaged on disk too (checksum mismatch): a full replay, still a start.
    sqlx::query(&format!(
        "UPDATE snapshots SET state = replace(state, '\"z\"', '\"y\"') WHERE seq = {good}"
    ))
    .execute(&pool)
    .await
    .unwrap();
    assert!(j.snapshot_at("calendar", good).await.is_err());
    let again = reopen().await;
    assert_eq!(snapshot_seq(&again).await, 0);
    assert_eq!(again.read(|c| c.state()).await.unwrap(), expected);
    // A snapshot taken under another policy is not used: the configured one applies.
    again.snapshot().await.unwrap();
    let policy = Policy {
        max_future_start_days: Some(3650),
        ..Policy::default()
    };
    let other = open_with(
        Arc::clone(&j),
        &clock,
        ReservationOptions {
            policy: policy.clone(),
            ..opts.clone()
        },
    )
    .await;
    assert_eq!(snapshot_seq(&other).await, 0);
    assert_eq!(other.read(|c| c.policy().clone()).await.unwrap(), policy);
    drop(other);
    let again = reopen().await;
    assert!(snapshot_seq(&again).await > good);
    assert_eq!(
        again.read(|c| c.state()).await.unwrap(),
        replay_state_at(&*j, clock.now()).await
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_daemons_group_committing_on_one_database_agree() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(t0());
    // Two stores on one file: two processes as far as the database can tell.
    let ja = berth_store::open(&url(&dir)).await.unwrap();
    let jb = berth_store::open(&url(&dir)).await.unwrap();
    let a = open(Arc::clone(&ja), &clock).await;
    let b = open(Arc::clone(&jb), &clock).await;
    a.command(capacity("z", Amounts::new().with("instances", 50)), None)
        .await
        .unwrap();
    // Every request goes to both daemons at once, with one key: one effect, one answer.
    let mut tasks = Vec::new();
    for i in 0..40u64 {
        for svc in [&a, &b] {
            let svc = Arc::clone(svc);
            tasks.push(tokio::spawn(async move {
                let tag = format!("t{i}");
                let cmd = tagged("z", 1 + i % 2, &tag);
                (
                    tag.clone(),
                    svc.command(cmd, Some(format!("k-{tag}"))).await,
                )
            }));
        }
    }
    let mut answers: BTreeMap<String, Vec<Outcome>> = BTreeMap::new();
    for t in tasks {
        let (tag, r) = t.await.unwrap();
        match r {
            Ok(c) => answers.entry(tag).or_default().push(c.outcome),
            Err(e) => assert!(e.conflict().is_some(), "{e}"),
        }
    }
    let entries = log(&*ja).await;
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for c in &entries {
        if let Some(t) = tag_of(&c.entry.command) {
            *count.entry(t.to_owned()).or_default() += 1;
        }
    }
    for (tag, outcomes) in &answers {
        assert_eq!(count.get(tag), Some(&1), "{tag}");
        assert!(
            outcomes.windows(2).all(|w| w[0] == w[1]),
            "{tag}: {outcomes:?}"
        );
    }
    assert_eq!(count.len(), answers.len());
    assert_matches_replay(&a, &*ja).await;
    assert_matches_replay(&b, &*jb).await;
    let booked: u64 = a
        .read(|c| {
            c.query_reservations(&ReservationQuery::default())
                .iter()
                .map(|r| r.amounts.get("instances"))
                .sum()
        })
        .await
        .unwrap();
    assert!(booked <= 50, "{booked} of 50 booked");
}

#[tokio::test]
async fn registered_configured_and_default_providers_are_known_with_their_flavors() {
    let clock = ManualClock::new(t0());
    let j = memory().await;
    let configured = ProviderInfo {
        id: "inventory".into(),
        name: None,
        provider_type: "static".into(),
        endpoint: None,
        region: None,
        tenant: None,
        flavors: Vec::new(),
    };
    let opts = ReservationOptions {
        static_providers: vec![configured.clone()],
        ..ReservationOptions::default()
    };
    let svc = ReservationService::open(j, opts, Arc::new(clock.clone()), Notifier::disabled())
        .await
        .unwrap();
    let flavor = ProviderFlavor {
        id: "f2".into(),
        name: "m1.medium".into(),
        vcpus: 2,
        ram: 4096,
        disk: 40,
    };
    let id = svc
        .add_provider(
            ProviderInfo {
                id: String::new(),
                name: None,
                provider_type: "openstack".into(),
                endpoint: None,
                region: None,
                tenant: None,
                flavors: vec![flavor.clone()],
            },
            None,
        )
        .await
        .unwrap();
    let p = svc.provider(&id).await.unwrap().unwrap();
    assert_eq!(p.flavors, vec![flavor.clone()]);
    assert!(p.flavors[0].is("m1.medium") && p.flavors[0].is("f2") && !p.flavors[0].is("x"));
    assert_eq!(svc.provider("inventory").await.unwrap(), Some(configured));
    assert_eq!(
        svc.provider(DEFAULT_PROVIDER).await.unwrap().map(|p| p.id),
        Some("default".to_owned())
    );
    assert_eq!(svc.provider("phantom").await.unwrap(), None);
    let all: Vec<String> = svc
        .all_providers()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(all, vec!["inventory".to_owned(), id]);
}

#[tokio::test]
async fn a_reservation_without_end_lasts_the_policy_max_duration_from_now() {
    let clock = ManualClock::new(t0());
    let j = memory().await;
    let svc = open(Arc::clone(&j), &clock).await;
    svc.command(capacity("z", Amounts::new().with("instances", 4)), None)
        .await
        .unwrap();
    let now = ReservationRequest::new("z", Amounts::new().with("instances", 1));
    let later = now.clone().starting(h(10));
    for (req, start) in [(now, t0()), (later, h(10))] {
        let c = svc
            .command(Command::CreateReservation(req), Some(format!("k{start}")))
            .await
            .unwrap();
        let Applied::ReservationCreated { id, .. } = c.outcome.applied else {
            panic!("not created: {:?}", c.outcome.applied);
        };
        let r = svc.read(|c| c.reservation(id)).await.unwrap().unwrap();
        assert_eq!(
            (r.start, r.end),
            (start, Some(start + chrono::TimeDelta::hours(8760)))
        );
    }
    // The log holds the resolved end: a replay (another process) sees the same reservation.
    clock.set(h(100));
    let again = open(j, &clock).await;
    let ends: Vec<_> = again
        .read(|c| {
            c.query_reservations(&ReservationQuery::default())
                .into_iter()
                .map(|r| r.end)
                .collect::<Vec<_>>()
        })
        .await
        .unwrap();
    assert_eq!(ends, vec![Some(h(8760)), Some(h(8770))]);
}
