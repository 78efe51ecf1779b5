//! The reconcile over a store, on SQLite and on PostgreSQL (when `BERTH_TEST_POSTGRES_URL` is
//! set): what it changes and reports, that a restart finds nothing to do, that several
//! services on one store racing to reconcile apply it once (one calendar, partitions, a lease
//! held by another node), and that a preview changes nothing.

use std::sync::Arc;
use std::time::Duration;

use berth_calendar::{
    Amounts, CapacityChange, CapacityQuery, Command, Dimension, PoolKey, ProviderId, RecordRef,
    ReservationRequest, Window, ZoneId,
};
use berth_store::Store;
use chrono::{DateTime, TimeZone, Utc};

use crate::inventory::InventoryPools;
use crate::reservations::partitions::tests::stores;
use crate::{ClusterOptions, ManualClock, PartitionKey, ReservationOptions, ReservationService};
use crate::{Notifier, Ownership, OwnershipOptions};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default()
}

fn inventory(pools: &[(&str, u64)]) -> InventoryPools {
    let mut inv = InventoryPools::new("inventory");
    for (zone, vcpu) in pools {
        inv.pools
            .insert((*zone).to_owned(), Amounts::new().with("vcpu", *vcpu));
    }
    inv
}

async fn open(
    store: &Arc<dyn Store>,
    clock: &ManualClock,
    key: Option<PartitionKey>,
    ownership: Option<Arc<Ownership>>,
) -> Arc<ReservationService> {
    ReservationService::open(
        Arc::clone(store),
        ReservationOptions {
            partition_key: key,
            ownership,
            cluster: key.map(|_| ClusterOptions {
                node_id: format!("n-{}", uuid::Uuid::new_v4()),
                advertise_url: "http://n".into(),
                lease_time: Duration::from_secs(3),
            }),
            ..ReservationOptions::default()
        },
        Arc::new(clock.clone()),
        Notifier::disabled(),
    )
    .await
    .unwrap()
}

/// Capacity for good of every `inventory` pool sold now: zone → vcpu.
async fn sold(svc: &ReservationService) -> Vec<(String, i64)> {
    let now = svc.now();
    let mut out: Vec<(String, i64)> = svc
        .read_all(|_, cal| {
            cal.query_capacity(&CapacityQuery {
                zone: None,
                provider: Some(ProviderId::new("inventory")),
                window: Window::open(now),
                timeline: true,
            })
            .unwrap()
            .pools
            .into_iter()
            .map(|p| {
                let last = p
                    .timeline
                    .last()
                    .and_then(|s| s.levels.get(&Dimension::new("vcpu")));
                (p.pool.zone.0, last.map_or(0, |l| l.total))
            })
            .collect::<Vec<_>>()
        })
        .await
        .unwrap()
        .concat();
    out.sort();
    out
}

fn zones<'a>(pools: impl Iterator<Item = &'a PoolKey>) -> Vec<&'a str> {
    pools.map(|p| p.zone.0.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_adds_changes_and_retires_and_a_restart_finds_nothing_to_do() {
    for (name, key) in [
        ("reconcile_one", None),
        ("reconcile_zones", Some(PartitionKey::Zone)),
    ] {
        for (label, store) in stores(name).await {
            let clock = ManualClock::new(t0());
            let svc = open(&store, &clock, key, None).await;
            // A pool of another provider is none of the inventory's business.
            svc.command(
                Command::IncreaseCapacity(CapacityChange {
                    pool: PoolKey::new("x", "os"),
                    start: t0(),
                    end: None,
                    amounts: Amounts::new().with("vcpu", 5),
                }),
                None,
            )
            .await
            .unwrap();
            let first = svc
                .reconcile(&inventory(&[("a", 8), ("b", 16)]))
                .await
                .unwrap();
            assert_eq!(
                zones(first.added.iter().map(|p| &p.pool)),
                ["a", "b"],
                "{label}"
            );
            let r = svc
                .command(
                    Command::CreateReservation(
                        ReservationRequest::new("b", Amounts::new().with("vcpu", 12))
                            .provider("inventory")
                            .ending(t0() + chrono::TimeDelta::hours(5)),
                    ),
                    None,
                )
                .await
                .unwrap();
            let qualified = crate::qualify(r.partition.as_deref(), "r1");
            let ra = svc
                .command(
                    Command::CreateReservation(
                        ReservationRequest::new("a", Amounts::new().with("vcpu", 2))
                            .provider("inventory")
                            .ending(t0() + chrono::TimeDelta::hours(5)),
                    ),
                    None,
                )
                .await
                .unwrap();
            clock.set(t0() + chrono::TimeDelta::minutes(1));
            let second = svc
                .reconcile(&inventory(&[("b", 10), ("c", 4)]))
                .await
                .unwrap();
            assert_eq!(
                zones(second.added.iter().map(|p| &p.pool)),
                ["c"],
                "{label}"
            );
            assert_eq!(
                zones(second.changed.iter().map(|p| &p.pool)),
                ["b"],
                "{label}"
            );
            let b = &second.changed[0];
            assert_eq!(
                (
                    b.dimensions[&Dimension::new("vcpu")].before,
                    b.dimensions[&Dimension::new("vcpu")].after
                ),
                (16, 10)
            );
            // 12 reserved of 10: at risk, as decrease-capacity would say.
            assert_eq!(
                b.at_risk,
                [RecordRef::Reservation(berth_calendar::ReservationId(1))],
                "{label}"
            );
            assert_eq!(b.partition, r.partition, "{label}");
            assert_eq!(
                zones(second.removed.iter().map(|p| &p.pool)),
                ["a"],
                "{label}"
            );
            let a = &second.removed[0];
            assert_eq!(a.capacity, Amounts::new().with("vcpu", 8));
            let a_res = match &ra.outcome.applied {
                berth_calendar::Applied::ReservationCreated { id, .. } => *id,
                other => panic!("{other:?}"),
            };
            assert_eq!(a.reservations, [a_res], "{label}");
            assert_eq!(a.at_risk, [RecordRef::Reservation(a_res)], "{label}");
            let mut ids: Vec<String> = second
                .at_risk()
                .into_iter()
                .map(|(_, p, r)| crate::inventory::record_id(p, r))
                .collect();
            ids.sort();
            let mut want = vec![
                crate::inventory::record_id(a.partition.as_deref(), RecordRef::Reservation(a_res)),
                qualified.clone(),
            ];
            want.sort();
            assert_eq!(ids, want, "{label}");
            // `a` is listed, with nothing, while its reservation lives; then it is gone.
            assert_eq!(
                sold(&svc).await,
                [
                    ("a".to_owned(), 0),
                    ("b".to_owned(), 10),
                    ("c".to_owned(), 4)
                ],
                "{label}"
            );
            clock.set(t0() + chrono::TimeDelta::hours(6));
            assert_eq!(
                sold(&svc).await,
                [("b".to_owned(), 10), ("c".to_owned(), 4)],
                "{label}"
            );
            // Once is enough; a restart (a new service on the same store) agrees.
            assert!(
                svc.reconcile(&inventory(&[("b", 10), ("c", 4)]))
                    .await
                    .unwrap()
                    .is_empty()
            );
            let restarted = open(&store, &clock, key, None).await;
            let again = restarted
                .reconcile(&inventory(&[("b", 10), ("c", 4)]))
                .await
                .unwrap();
            assert!(again.is_empty(), "{label}: {again:?}");
            assert_eq!(again.unchanged, 2);
            assert_eq!(sold(&restarted).await, sold(&svc).await);
            // The other provider's pool is as it was.
            let x = restarted
                .read_all(|_, cal| {
                    cal.query_capacity(&CapacityQuery {
                        zone: Some(ZoneId::new("x")),
                        provider: None,
                        window: Window::open(t0()),
                        timeline: false,
                    })
                    .unwrap()
                    .pools
                })
                .await
                .unwrap()
                .concat();
            assert_eq!(x[0].summary[&Dimension::new("vcpu")].total, 5);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn services_racing_to_reconcile_one_store_apply_it_once() {
    for (name, key) in [("race_one", None), ("race_zones", Some(PartitionKey::Zone))] {
        for (label, store) in stores(name).await {
            let clock = ManualClock::new(t0());
            let mut daemons = Vec::new();
            for _ in 0..3 {
                daemons.push(open(&store, &clock, key, None).await);
            }
            let inv = inventory(&[("a", 8), ("b", 16), ("c", 2)]);
            let mut tasks = Vec::new();
            for d in &daemons {
                let (d, inv) = (Arc::clone(d), inv.clone());
                tasks.push(tokio::spawn(async move { d.reconcile(&inv).await }));
            }
            let mut diffs = Vec::new();
            for t in tasks {
                diffs.push(t.await.unwrap().unwrap());
            }
            let applied: Vec<_> = diffs.iter().filter(|d| !d.is_empty()).collect();
            assert_eq!(applied.len(), 1, "{label} {key:?}: {diffs:?}");
            assert_eq!(applied[0].added.len(), 3, "{label}");
            let want = [
                ("a".to_owned(), 8),
                ("b".to_owned(), 16),
                ("c".to_owned(), 2),
            ];
            for d in &daemons {
                assert_eq!(sold(d).await, want, "{label} {key:?}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_without_the_lease_reconciles_under_the_holders_fence() {
    for (label, store) in stores("reconcile_lease").await {
        let clock = ManualClock::new(t0());
        let own = |node: &str| {
            Ownership::new(
                Arc::clone(&store),
                Arc::new(clock.clone()),
                OwnershipOptions {
                    lease: "calendar".into(),
                    node_id: node.into(),
                    advertise_url: format!("http://{node}"),
                    lease_time: Duration::from_secs(30),
                },
            )
        };
        let (o1, o2) = (own("n1"), own("n2"));
        o1.refresh().await.unwrap();
        o2.refresh().await.unwrap();
        assert!(o1.token().is_some() && o2.token().is_none(), "{label}");
        let holder = open(&store, &clock, None, Some(o1)).await;
        let other = open(&store, &clock, None, Some(o2)).await;
        let inv = inventory(&[("a", 8)]);
        assert_eq!(
            other.reconcile(&inv).await.unwrap().added.len(),
            1,
            "{label}"
        );
        assert!(holder.reconcile(&inv).await.unwrap().is_empty(), "{label}");
        assert_eq!(sold(&holder).await, [("a".to_owned(), 8)], "{label}");
        // The holder's own writes go on after the other node's append.
        holder
            .command(
                Command::IncreaseCapacity(CapacityChange {
                    pool: PoolKey::new("y", "os"),
                    start: t0(),
                    end: None,
                    amounts: Amounts::new().with("vcpu", 1),
                }),
                None,
            )
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preview_says_what_a_reconcile_would_do_and_changes_nothing() {
    for (name, key) in [
        ("preview_one", None),
        ("preview_zones", Some(PartitionKey::Zone)),
    ] {
        for (label, store) in stores(name).await {
            let clock = ManualClock::new(t0());
            let svc = open(&store, &clock, key, None).await;
            svc.reconcile(&inventory(&[("a", 8), ("b", 4)]))
                .await
                .unwrap();
            let streams = store.streams("").await.unwrap();
            let next = inventory(&[("b", 6), ("c", 1)]);
            let preview = svc.reconcile_preview(&next).await.unwrap();
            assert_eq!(store.streams("").await.unwrap(), streams, "{label}");
            assert_eq!(svc.reconcile_preview(&next).await.unwrap(), preview);
            let done = svc.reconcile(&next).await.unwrap();
            assert_eq!(preview, done, "{label} {key:?}");
            assert!(svc.reconcile_preview(&next).await.unwrap().is_empty());
        }
    }
}
