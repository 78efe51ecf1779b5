//! Tests of the partitioned calendar, on SQLite and on PostgreSQL (when
//! `BERTH_TEST_POSTGRES_URL` is set): routing and qualified ids, merged reads, spanning
//! batches all or nothing, the layout check, and lease spreading among daemons.

use std::sync::Arc;
use std::time::Duration;

use berth_calendar::{
    Amounts, Applied, CapacityChange, Command, PoolKey, ReservationQuery, ReservationRequest,
};
use berth_store::Store;
use chrono::{DateTime, TimeZone, Utc};

use crate::ownership::{Ownership, OwnershipOptions};
use crate::{
    ClusterOptions, ManualClock, PartitionKey, ReservationOptions, ReservationService, WallClock,
};
use crate::{Notifier, ServiceError};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default()
}

/// Moves `clock` on by `secs` seconds.
fn later(clock: &ManualClock, secs: i64) -> DateTime<Utc> {
    let t = clock.now() + chrono::TimeDelta::seconds(secs);
    clock.set(t);
    t
}

fn grow(zone: &str, provider: &str, n: u64) -> Command {
    Command::IncreaseCapacity(CapacityChange {
        pool: PoolKey::new(zone, provider),
        start: t0(),
        end: None,
        amounts: Amounts::new().with("instances", n),
    })
}

fn reserve(zone: &str, n: u64) -> Command {
    Command::CreateReservation(
        ReservationRequest::new(zone, Amounts::new().with("instances", n)).window(
            t0() + chrono::TimeDelta::hours(1),
            t0() + chrono::TimeDelta::hours(5),
        ),
    )
}

/// The stores a test runs on: SQLite in memory, and a PostgreSQL schema of its own when the
/// URL is set.
pub(in crate::reservations) async fn stores(test: &str) -> Vec<(String, Arc<dyn Store>)> {
    // A file of its own: in-memory SQLite databases opened together may share a cache.
    let dir: &'static tempfile::TempDir = Box::leak(Box::new(tempfile::tempdir().unwrap()));
    let url = format!("sqlite://{}", dir.path().join("berth.db").display());
    let mut out: Vec<(String, Arc<dyn Store>)> =
        vec![("sqlite".into(), berth_store::open(&url).await.unwrap())];
    match std::env::var("BERTH_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => {
            let schema = format!("svc_{test}_{}", std::process::id());
            {
                use sqlx::Connection;
                let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
                sqlx::query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                    .execute(&mut conn)
                    .await
                    .unwrap();
            }
            let opts = berth_store::StoreOptions {
                pg_schema: Some(schema),
                ..berth_store::StoreOptions::default()
            };
            out.push((
                "postgres".into(),
                berth_store::open_with(&url, &opts).await.unwrap(),
            ));
        }
        _ => eprintln!("BERTH_TEST_POSTGRES_URL unset: `{test}` runs on SQLite only"),
    }
    out
}

async fn open(
    store: &Arc<dyn Store>,
    clock: &ManualClock,
    key: Option<PartitionKey>,
    node: Option<&str>,
) -> Result<Arc<ReservationService>, ServiceError> {
    ReservationService::open(
        Arc::clone(store),
        ReservationOptions {
            partition_key: key,
            cluster: node.map(|n| ClusterOptions {
                node_id: n.to_owned(),
                advertise_url: format!("http://{n}"),
                lease_time: Duration::from_secs(3),
            }),
            ..ReservationOptions::default()
        },
        Arc::new(clock.clone()),
        Notifier::disabled(),
    )
    .await
}

/// Nodes `n1` then `n2` on `store`, partitioned by zone.
async fn two_nodes(
    store: &Arc<dyn Store>,
    clock: &ManualClock,
) -> (Arc<ReservationService>, Arc<ReservationService>) {
    let n1 = open(store, clock, Some(PartitionKey::Zone), Some("n1"))
        .await
        .unwrap();
    let n2 = open(store, clock, Some(PartitionKey::Zone), Some("n2"))
        .await
        .unwrap();
    (n1, n2)
}

fn created(c: &crate::Committed) -> String {
    match &c.outcome.applied {
        Applied::ReservationCreated { id, .. } => crate::qualify(c.partition.as_deref(), id),
        other => format!("not a reservation: {other:?}"),
    }
}

/// Ids of the reservations over all partitions, qualified, in partition order.
async fn ids(svc: &ReservationService, live_only: bool) -> Vec<String> {
    svc.read_all(|p, cal| {
        cal.query_reservations(&ReservationQuery::default())
            .into_iter()
            .filter(|r| !live_only || r.state != berth_calendar::ReservationState::Cancelled)
            .map(|r| crate::qualify(p, r.id))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap()
    .concat()
}

fn cancel(n: u64) -> Command {
    Command::CancelReservation {
        id: berth_calendar::ReservationId(n),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_are_routed_to_their_zones_partition_with_qualified_ids() {
    for (label, store) in stores("routing").await {
        let clock = ManualClock::new(t0());
        let svc = open(&store, &clock, Some(PartitionKey::Zone), None)
            .await
            .unwrap();
        assert!(svc.partitions().is_empty(), "{label}");
        svc.command(grow("b", "os", 2), None).await.unwrap();
        svc.command(grow("a", "os", 1), None).await.unwrap();
        assert_eq!(svc.partitions(), ["a", "b"], "{label}");
        // Each partition numbers its reservations itself.
        let ra = svc.command(reserve("a", 1), None).await.unwrap();
        let rb = svc.command(reserve("b", 2), None).await.unwrap();
        assert_eq!((created(&ra), created(&rb)), ("a:r1".into(), "b:r1".into()));
        // Admission is per partition: `a` is full, `b` is not touched by it.
        let full = svc.command(reserve("a", 1), None).await.unwrap_err();
        assert!(full.conflict().is_some(), "{label}: {full}");
        assert_eq!(
            store.streams("calendar/").await.unwrap(),
            [("calendar/a".to_owned(), 2), ("calendar/b".to_owned(), 2)],
            "{label}"
        );
        assert_eq!(store.head("calendar").await.unwrap(), 0, "{label}");
        assert_eq!(ids(&svc, false).await, ["a:r1", "b:r1"], "{label}");
        // Ids parse back; malformed or unknown partitions are refused by name.
        assert_eq!(
            svc.split_id("b:r1").unwrap(),
            (Some("b".to_owned()), "r1".to_owned())
        );
        let e = svc.split_id("c:r1").unwrap_err().to_string();
        assert!(e.contains("partition `c` is unknown"), "{e}");
        let e = svc.split_id("r1").unwrap_err().to_string();
        assert!(e.contains("expected a partition-qualified id"), "{e}");
        // An id's command goes to its partition.
        svc.command_at(Some("b"), cancel(1), None).await.unwrap();
        let e = svc.command(cancel(1), None).await.unwrap_err().to_string();
        assert!(e.contains("expected a partition-qualified id"), "{e}");
        assert_eq!(ids(&svc, true).await, ["a:r1"], "{label}");
        // An idempotent retry is answered with the partition that took it.
        let k = Some("k1".to_owned());
        let first = svc.command(reserve("b", 1), k.clone()).await.unwrap();
        let again = svc.command(reserve("b", 1), k).await.unwrap();
        assert_eq!(created(&first), created(&again));
        assert!(again.replayed);
        // Capacity webhooks are numbered per partition and qualified; both kinds unsubscribe.
        let sub = berth_calendar::ThresholdSubscription {
            zone: berth_calendar::ZoneId("b".into()),
            provider: None,
            dimension: berth_calendar::Dimension("instances".into()),
            below: 1,
        };
        let cb = "https://hooks.example.com/x".to_owned();
        let s = svc.subscribe_capacity(sub, cb.clone()).await.unwrap();
        assert_eq!(s, "b:s1", "{label}");
        let w = svc
            .subscribe_reservations(crate::ReservationFilter::default(), cb)
            .await
            .unwrap();
        assert_eq!(svc.webhooks().await.len(), 2, "{label}");
        svc.unsubscribe(&s).await.unwrap();
        svc.unsubscribe(&w).await.unwrap();
        assert!(svc.webhooks().await.is_empty(), "{label}");
        // A second service on the store finds the partitions and the same state.
        let other = open(&store, &clock, Some(PartitionKey::Zone), None)
            .await
            .unwrap();
        assert_eq!(other.partitions(), ["a", "b"]);
        assert_eq!(ids(&other, false).await, ids(&svc, false).await);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zone_spread_over_provider_partitions_is_tried_in_name_order() {
    for (label, store) in stores("by_provider").await {
        let clock = ManualClock::new(t0());
        let svc = open(&store, &clock, Some(PartitionKey::Provider), None)
            .await
            .unwrap();
        svc.command(grow("z", "p2", 1), None).await.unwrap();
        svc.command(grow("z", "p1", 1), None).await.unwrap();
        svc.command(grow("y", "p0", 5), None).await.unwrap();
        assert_eq!(svc.partitions(), ["p0", "p1", "p2"], "{label}");
        // `p0` does not know zone `z`, `p1` takes the first, `p2` the second; then none.
        let one = svc.command(reserve("z", 1), None).await.unwrap();
        let two = svc.command(reserve("z", 1), None).await.unwrap();
        assert_eq!(
            (created(&one), created(&two)),
            ("p1:r1".into(), "p2:r1".into())
        );
        let e = svc.command(reserve("z", 1), None).await.unwrap_err();
        assert!(e.conflict().is_some(), "{label}: {e}");
        let e = svc.command(reserve("nowhere", 1), None).await.unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::NotFound, "{label}: {e}");
        // Naming a provider nobody has given capacity opens no partition.
        let mut req = ReservationRequest::new("z", Amounts::new().with("instances", 1));
        req.provider = Some(berth_calendar::ProviderId("p9".into()));
        let e = svc
            .command(Command::CreateReservation(req), None)
            .await
            .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::NotFound, "{label}: {e}");
        assert_eq!(svc.partitions(), ["p0", "p1", "p2"], "{label}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_spanning_partitions_commits_all_in_one_transaction_or_nothing() {
    for (label, store) in stores("spanning").await {
        let clock = ManualClock::new(t0());
        let svc = open(&store, &clock, Some(PartitionKey::Zone), None)
            .await
            .unwrap();
        svc.command(grow("a", "os", 2), None).await.unwrap();
        svc.command(grow("b", "os", 2), None).await.unwrap();
        let out = svc
            .batch(vec![reserve("a", 1), reserve("b", 2), reserve("a", 1)])
            .await
            .unwrap();
        assert_eq!(
            out.iter().map(created).collect::<Vec<_>>(),
            ["a:r1", "b:r1", "a:r2"],
            "{label}"
        );
        assert_eq!(
            store.streams("calendar/").await.unwrap(),
            [("calendar/a".to_owned(), 3), ("calendar/b".to_owned(), 2)],
            "{label}"
        );
        svc.command(grow("a", "os", 1), None).await.unwrap();
        // `b` is full: the batch fails there and `a` keeps nothing either.
        let e = svc
            .batch(vec![reserve("a", 1), reserve("b", 1)])
            .await
            .unwrap_err();
        assert!(e.conflict().is_some(), "{label}: {e}");
        assert_eq!(
            store.streams("calendar/").await.unwrap(),
            [("calendar/a".to_owned(), 4), ("calendar/b".to_owned(), 2)],
            "{label}: nothing appended"
        );
        assert_eq!(ids(&svc, false).await, ["a:r1", "a:r2", "b:r1"], "{label}");
        // The calendar in memory holds nothing of the failed batch: `a`'s unit is still free.
        let r = svc.command(reserve("a", 1), None).await.unwrap();
        assert_eq!(created(&r), "a:r3", "{label}");
        // A replay of the stores agrees with the live calendars.
        let other = open(&store, &clock, Some(PartitionKey::Zone), None)
            .await
            .unwrap();
        assert_eq!(ids(&other, false).await, ids(&svc, false).await, "{label}");
        // Seeding once over several partitions: the second call finds the key.
        let seed = vec![grow("c", "os", 1), grow("d", "os", 1)];
        assert!(svc.batch_once("seed", seed.clone()).await.unwrap());
        assert!(!other.batch_once("seed", seed).await.unwrap());
        other.tick().await.unwrap();
        assert_eq!(other.partitions(), ["a", "b", "c", "d"], "{label}");
        assert_eq!(store.head("calendar/c").await.unwrap(), 1, "{label}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spanning_batch_through_a_non_holder_is_fenced_by_the_holders_tokens() {
    for (label, store) in stores("spanning_fenced").await {
        let clock = ManualClock::new(t0());
        let (n1, n2) = two_nodes(&store, &clock).await;
        // Nobody wrote `a` yet: no owner. n1 creates both partitions and holds them first;
        // n2 follows them.
        assert_eq!(n2.owner_of("a").await.unwrap(), crate::Owner::Unknown);
        assert!(n2.partitions().is_empty(), "{label}");
        n1.command(grow("a", "os", 2), None).await.unwrap();
        n1.command(grow("b", "os", 2), None).await.unwrap();
        assert!(n1.owner_of("a").await.unwrap().is_me(), "{label}");
        assert!(n1.owner_of("b").await.unwrap().is_me(), "{label}");
        assert!(!n2.owner_of("a").await.unwrap().is_me(), "{label}");
        // A single write at the non-holder is refused (berthd forwards it to the holder).
        let e = n2.command(reserve("a", 1), None).await.unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Unavailable, "{label}: {e}");
        // A plan's batch commits anywhere, fenced with the holder's tokens.
        let out = n2
            .batch(vec![reserve("a", 1), reserve("b", 1)])
            .await
            .unwrap();
        assert_eq!(
            out.iter().map(created).collect::<Vec<_>>(),
            ["a:r1", "b:r1"]
        );
        // The holder's writer catches up (its next append conflicts and re-checks).
        let r = n1.command(reserve("a", 1), None).await.unwrap();
        assert_eq!(created(&r), "a:r2", "{label}");
        let e = n1.command(reserve("a", 1), None).await.unwrap_err();
        assert!(e.conflict().is_some(), "{label}: {e}");
        // Another node takes `b` over once its lease lapsed: the old holder's token no longer
        // passes; a spanning batch reads the new token and commits.
        let before = store.lease("calendar/b").await.unwrap().unwrap();
        let thief = Ownership::new(
            Arc::clone(&store),
            Arc::new(ManualClock::new(t0() + chrono::TimeDelta::seconds(10))),
            OwnershipOptions {
                lease: "calendar/b".into(),
                node_id: "n3".into(),
                advertise_url: "http://n3".into(),
                lease_time: Duration::from_secs(3),
            },
        );
        assert!(thief.refresh().await.unwrap().is_me(), "{label}");
        assert!(store.lease("calendar/b").await.unwrap().unwrap().token > before.token);
        let e = n1.command(reserve("b", 1), None).await.unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Unavailable, "{label}: {e}");
        assert_eq!(
            store.head("calendar/b").await.unwrap(),
            2,
            "{label}: fenced"
        );
        let out = n2
            .batch(vec![reserve("a", 1), reserve("b", 1)])
            .await
            .unwrap_err();
        assert!(out.conflict().is_some(), "{label}: `a` is full: {out}");
        let out = n2
            .batch(vec![grow("a", "os", 1), reserve("b", 1)])
            .await
            .unwrap();
        assert_eq!(created(&out[1]), "b:r2", "{label}");
        assert_eq!(store.head("calendar/b").await.unwrap(), 3, "{label}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_follows_the_holder_without_rebuilding() {
    for (label, store) in stores("replica").await {
        // The replica's clock runs ahead: each of its reads is later than the holder's next
        // commit, which must still apply to its copy in order.
        let c1 = ManualClock::new(t0());
        let c2 = ManualClock::new(t0() + chrono::TimeDelta::seconds(90));
        let n1 = open(&store, &c1, Some(PartitionKey::Zone), Some("n1"))
            .await
            .unwrap();
        let n2 = open(&store, &c2, Some(PartitionKey::Zone), Some("n2"))
            .await
            .unwrap();
        n1.command(grow("a", "os", 100), None).await.unwrap();
        assert!(ids(&n2, false).await.is_empty(), "{label}");
        let opened = n2.writer_stats().rebuilds;
        let mut want = Vec::new();
        for round in 0..5 {
            later(&c1, 60);
            later(&c2, 60);
            let r = n1.command(reserve("a", 1), None).await.unwrap();
            want.push(created(&r));
            assert_eq!(ids(&n2, false).await, want, "{label}: round {round}");
            let clock = n2.read_all(|_, c| c.clock()).await.unwrap();
            assert_eq!(
                clock,
                [Some(c2.now())],
                "{label}: reads see the replica's present"
            );
        }
        assert_eq!(
            n2.writer_stats().rebuilds,
            opened,
            "{label}: caught up in order"
        );
        // A due timer (the reservations start at t0 + 1 h) is a real advance; the copy is
        // then rebuilt once when the holder's older entries arrive, and stays right.
        later(&c1, 3600);
        later(&c2, 3600);
        assert_eq!(ids(&n2, false).await, want, "{label}");
        n1.command(grow("a", "os", 1), None).await.unwrap();
        assert_eq!(ids(&n2, false).await, want, "{label}");
        assert_eq!(n2.writer_stats().rebuilds, opened + 1, "{label}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_written_with_another_layout_is_refused() {
    let mut all = stores("layout").await.into_iter();
    let mut second = stores("layout2").await.into_iter();
    while let (Some((label, store)), Some((_, other))) = (all.next(), second.next()) {
        let clock = ManualClock::new(t0());
        let flat = open(&store, &clock, None, None).await.unwrap();
        flat.command(grow("a", "os", 1), None).await.unwrap();
        let m = flat.cluster_map().await.unwrap();
        assert_eq!((m.node, m.holders.len()), (None, 0), "{label}: no cluster");
        drop(flat);
        let e = open(&store, &clock, Some(PartitionKey::Zone), None)
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("holds 1 commands in the unpartitioned calendar stream `calendar`")
                && e.contains("expected no partition key"),
            "{label}: {e}"
        );
        let parted = open(&other, &clock, Some(PartitionKey::Zone), None)
            .await
            .unwrap();
        parted.command(grow("a", "os", 1), None).await.unwrap();
        let e = open(&other, &clock, None, None)
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("partitioned calendar streams (`calendar/a`") && e.contains("partition key"),
            "{label}: {e}"
        );
        // Partitioned by zone, opened by provider: pool `a/os` belongs elsewhere.
        let e = open(&other, &clock, Some(PartitionKey::Provider), None)
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("partition `a` holds pool `a/os`"),
            "{label}: {e}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_spread_to_a_fair_share_and_a_dead_nodes_are_taken_over() {
    for (label, store) in stores("spread").await {
        let clock = ManualClock::new(t0());
        let (n1, n2) = two_nodes(&store, &clock).await;
        let node = |n: &str| {
            Ownership::new(
                Arc::clone(&store),
                Arc::new(clock.clone()),
                OwnershipOptions {
                    lease: format!("node/{n}"),
                    node_id: n.to_owned(),
                    advertise_url: format!("http://{n}"),
                    lease_time: Duration::from_secs(3),
                },
            )
        };
        let (h1, h2) = (node("n1"), node("n2"));
        let seed = ["a", "b", "c", "d"].map(|z| grow(z, "os", 1)).to_vec();
        assert!(n1.batch_once("seed", seed).await.unwrap());
        // Alone, n1 takes every partition.
        assert_eq!(n1.spread(&h1).await.unwrap(), 4, "{label}");
        // n2 arrives: n1 hands over one per round until both hold their share.
        let mut rounds = 0;
        let mut held = (4, 0);
        while held != (2, 2) && rounds < 10 {
            later(&clock, 1);
            held = (n1.spread(&h1).await.unwrap(), n2.spread(&h2).await.unwrap());
            rounds += 1;
        }
        assert_eq!(held, (2, 2), "{label}: after {rounds} rounds");
        let mine = |svc: &ReservationService| {
            svc.ownerships()
                .into_iter()
                .filter(|(_, o)| o.token().is_some())
                .map(|(n, _)| n)
                .collect::<Vec<_>>()
        };
        let (m1, m2) = (mine(&n1), mine(&n2));
        assert!(m1.iter().all(|p| !m2.contains(p)), "{label}: {m1:?} {m2:?}");
        // The partition map, as either daemon reads it from the leases.
        let map = |svc: &Arc<ReservationService>| {
            let svc = Arc::clone(svc);
            async move {
                let m = svc.cluster_map().await.unwrap();
                let rows: Vec<(String, String, String)> = m
                    .holders
                    .iter()
                    .map(|h| {
                        (
                            h.partition.clone().unwrap_or_default(),
                            h.node.clone(),
                            h.url.clone(),
                        )
                    })
                    .collect();
                (m.node, rows)
            }
        };
        let (me, rows) = map(&n2).await;
        assert_eq!(me.as_deref(), Some("n2"), "{label}");
        let expected: Vec<(String, String, String)> = ["a", "b", "c", "d"]
            .iter()
            .map(|p| {
                let n = if m1.iter().any(|m| m == p) {
                    "n1"
                } else {
                    "n2"
                };
                ((*p).to_owned(), n.to_owned(), format!("http://{n}"))
            })
            .collect();
        assert_eq!(rows, expected, "{label}");
        assert_eq!(map(&n1).await.1, expected, "{label}");
        // Each writes its own partitions; n2 knows who holds n1's.
        n2.command(reserve(&m2[0], 1), None).await.unwrap();
        n1.command(reserve(&m1[0], 1), None).await.unwrap();
        assert!(
            matches!(
                n2.owner_of(&m1[0]).await.unwrap(),
                crate::Owner::Other { ref node, .. } if node == "n1"
            ),
            "{label}"
        );
        // n1 dies (no more refreshes): once its leases lapse, n2 takes all of them and sees
        // n1's acknowledged reservation.
        later(&clock, 10);
        let (_, rows) = map(&n2).await;
        assert!(
            rows.is_empty(),
            "{label}: lapsed leases have no holder: {rows:?}"
        );
        assert_eq!(n2.spread(&h2).await.unwrap(), 4, "{label}");
        let (_, rows) = map(&n2).await;
        assert_eq!(rows.len(), 4, "{label}");
        assert!(rows.iter().all(|(_, n, _)| n == "n2"), "{label}: {rows:?}");
        let tokens: Vec<u64> = n2
            .cluster_map()
            .await
            .unwrap()
            .holders
            .iter()
            .map(|h| h.token)
            .collect();
        assert!(
            tokens.iter().all(|t| *t >= 2),
            "{label}: taken over: {tokens:?}"
        );
        let r = n2.command(reserve(&m1[0], 1), None).await;
        assert!(
            r.unwrap_err().conflict().is_some(),
            "{label}: n1's unit is taken"
        );
        assert_eq!(ids(&n2, false).await.len(), 2, "{label}");
        // n1's stale tokens cannot write.
        let e = n1.command(reserve(&m1[1], 1), None).await.unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Unavailable, "{label}: {e}");
    }
}
