//! Two daemons' services on one store: only the lease holder commits; after a takeover the old
//! holder's commits are fenced out and write nothing.

use std::sync::Arc;

use berth_calendar::{Amounts, CapacityChange, Command, PoolKey, ReservationRequest};
use berth_store::Store;
use chrono::{DateTime, TimeZone, Utc};

use super::*;
use crate::{ManualClock, ReservationOptions, ReservationService};
use crate::{Notifier, ServiceError};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default()
}

fn capacity(n: u64) -> Command {
    Command::IncreaseCapacity(CapacityChange {
        pool: PoolKey::new("z", "os"),
        start: t0(),
        end: None,
        amounts: Amounts::new().with("instances", n),
    })
}

fn reserve() -> Command {
    Command::CreateReservation(
        ReservationRequest::new("z", Amounts::new().with("instances", 1)).window(
            t0() + chrono::TimeDelta::hours(1),
            t0() + chrono::TimeDelta::hours(2),
        ),
    )
}

async fn node(
    store: &Arc<dyn Store>,
    clock: &ManualClock,
    id: &str,
) -> (Arc<Ownership>, Arc<ReservationService>) {
    let own = Ownership::new(
        Arc::clone(store),
        Arc::new(clock.clone()),
        OwnershipOptions {
            lease: "calendar".into(),
            node_id: id.into(),
            advertise_url: format!("http://{id}"),
            lease_time: Duration::from_secs(3),
        },
    );
    let svc = ReservationService::open(
        Arc::clone(store),
        ReservationOptions {
            ownership: Some(Arc::clone(&own)),
            ..ReservationOptions::default()
        },
        Arc::new(clock.clone()),
        Notifier::disabled(),
    )
    .await
    .unwrap();
    (own, svc)
}

fn unavailable(r: Result<crate::Committed, ServiceError>) -> String {
    match r {
        Err(ServiceError::Unavailable { message }) => message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_holder_commits_and_a_paused_holder_is_fenced_out() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("b.db").display());
    let store = berth_store::open(&url).await.unwrap();
    let clock = ManualClock::new(t0());
    let (own_a, a) = node(&store, &clock, "a").await;
    let (own_b, b) = node(&store, &clock, "b").await;
    // Nobody holds the lease yet: nobody writes.
    assert!(unavailable(a.command(capacity(2), None).await).contains("not known yet"));
    assert_eq!(own_a.refresh().await.unwrap(), Owner::Me { token: 1 });
    assert_eq!(
        own_b.refresh().await.unwrap(),
        Owner::Other {
            node: "a".into(),
            url: "http://a".into()
        }
    );
    a.command(capacity(5), None).await.unwrap();
    a.command(reserve(), None).await.unwrap();
    let msg = unavailable(b.command(reserve(), None).await);
    assert!(msg.contains("`a` at http://a holds it"), "{msg}");
    // a pauses past its lease; b takes over with a new token and writes.
    clock.set(t0() + chrono::TimeDelta::seconds(4));
    assert_eq!(own_b.refresh().await.unwrap(), Owner::Me { token: 2 });
    b.command(reserve(), None).await.unwrap();
    // a wakes up still believing it holds token 1: its commit is fenced out.
    assert_eq!(own_a.token(), Some(1));
    let msg = unavailable(a.command(reserve(), None).await);
    assert!(msg.contains("does not hold the lease"), "{msg}");
    assert_eq!(own_a.owner(), Owner::Unknown);
    // The log holds exactly the acknowledged commands, and a's calendar agrees with it.
    assert_eq!(store.head("calendar").await.unwrap(), 3);
    let count = |svc: Arc<ReservationService>| async move {
        svc.read(|c| {
            c.query_reservations(&berth_calendar::ReservationQuery::default())
                .len()
        })
        .await
        .unwrap()
    };
    assert_eq!(count(Arc::clone(&a)).await, 2);
    assert_eq!(count(Arc::clone(&b)).await, 2);
    // a learns the new owner at its next refresh, and does not write a snapshot.
    assert_eq!(
        own_a.refresh().await.unwrap(),
        Owner::Other {
            node: "b".into(),
            url: "http://b".into()
        }
    );
    assert_eq!(a.snapshot().await.unwrap(), None);
    assert_eq!(b.snapshot().await.unwrap(), Some(3));
}
