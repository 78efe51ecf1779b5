//! Tests of the reservation service: last-unit races, restarts, idempotency, catch-up between
//! two writers, journal failures, batches, the timer and webhooks.

use std::sync::atomic::{AtomicUsize, Ordering};

use berth_calendar::{
    AllocationRequest, Amounts, CapacityChange, Dimension, PoolKey, ReservationQuery,
    ReservationRequest, ThresholdSubscription, ZoneId,
};
use chrono::TimeZone;

use super::*;
use crate::notify::NotifyConfig;

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
        provider_type: "openstack".into(),
        endpoint: None,
        region: None,
        tenant: Some("t".into()),
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
