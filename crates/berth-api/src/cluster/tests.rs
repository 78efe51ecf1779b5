//! Tests of the partition map: routing writes by it, and `GET /v1/cluster` of a single daemon
//! and of a partitioned cluster daemon.

use std::sync::Arc;
use std::time::Duration;

use axum::http::Method;
use berth_service::{
    ClusterOptions, ManualClock, Notifier, PlanConfig, PlanService, ReservationOptions,
    ReservationService,
};
use serde_json::json;

use super::*;
use crate::tests::{INVENTORY, call};
use crate::{ApiConfig, AuthConfig, router};

fn holder(partition: Option<&str>, url: &str) -> PartitionHolderView {
    PartitionHolderView {
        partition: partition.map(str::to_owned),
        holder: format!("node-{url}"),
        url: url.to_owned(),
        token: 1,
        expires_at: "2030-01-01T00:00:03.000Z".into(),
    }
}

#[test]
fn writes_are_routed_to_their_partitions_holder() {
    let map = ClusterView {
        node: Some("n1".into()),
        partition_key: "zone".into(),
        partitions: vec![
            holder(Some("a"), "http://n1"),
            holder(Some("b"), "http://n2"),
        ],
    };
    let route = |body: Value| map.route(&body).map(str::to_owned);
    assert_eq!(
        route(json!({"zone": "b", "capacity": {}})).as_deref(),
        Some("http://n2")
    );
    assert_eq!(
        route(json!({"reservation-id": "a:r4"})).as_deref(),
        Some("http://n1")
    );
    assert_eq!(
        route(json!({"source": "ResourcePool:b/os"})).as_deref(),
        Some("http://n2")
    );
    // No holder for `c` yet, no partition in a plan, an unqualified id: any daemon.
    assert_eq!(route(json!({"zone": "c"})), None);
    assert_eq!(route(json!({"name": "p", "template": {}})), None);
    assert_eq!(route(json!({"reservation-id": "r4"})), None);
}

#[test]
fn one_calendar_routes_every_write_to_its_holder_and_no_cluster_routes_nothing() {
    let one = ClusterView {
        node: Some("n2".into()),
        partition_key: "none".into(),
        partitions: vec![holder(None, "http://n1")],
    };
    assert_eq!(one.route(&json!({"name": "p"})), Some("http://n1"));
    assert_eq!(one.route(&json!({"zone": "a"})), Some("http://n1"));
    let single = ClusterView {
        node: None,
        partition_key: "none".into(),
        partitions: Vec::new(),
    };
    assert_eq!(single.route(&json!({"zone": "a"})), None);
    let by_provider = ClusterView {
        node: Some("n1".into()),
        partition_key: "provider".into(),
        partitions: vec![holder(Some("os"), "http://n3")],
    };
    assert_eq!(
        by_provider.route(&json!({"zone": "a", "provider": "os"})),
        Some("http://n3")
    );
    // A zone alone may lie in several provider partitions.
    assert_eq!(by_provider.route(&json!({"zone": "a"})), None);
}

#[tokio::test]
async fn a_single_daemon_publishes_an_empty_map() {
    let app = crate::tests::app().await;
    let (s, v, _) = call(&app, Method::GET, "/v1/cluster", None).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v, json!({"partition_key": "none", "partitions": []}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_daemon_publishes_its_leases() {
    let clock = ManualClock::new(
        chrono::DateTime::parse_from_rfc3339("2030-01-01T00:00:00Z")
            .map(|t| t.to_utc())
            .unwrap_or_default(),
    );
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("berth.db").display());
    let store = berth_store::open(&url).await.unwrap();
    let res = ReservationService::open(
        Arc::clone(&store),
        ReservationOptions {
            partition_key: Some(PartitionKey::Zone),
            cluster: Some(ClusterOptions {
                node_id: "n1".into(),
                advertise_url: "http://127.0.0.1:9".into(),
                lease_time: Duration::from_secs(3),
            }),
            ..ReservationOptions::default()
        },
        Arc::new(clock.clone()),
        Notifier::disabled(),
    )
    .await
    .unwrap();
    let inv: Arc<dyn berth_inventory::InventoryProvider> =
        Arc::new(berth_inventory::StaticProvider::parse(INVENTORY).unwrap());
    let plans = PlanService::start(
        store,
        inv,
        Arc::clone(&res),
        Arc::new(clock.clone()),
        PlanConfig::default(),
    )
    .await
    .unwrap();
    let app = router(
        crate::AppState::new(Arc::clone(&res), plans, None),
        ApiConfig {
            auth: AuthConfig::disabled(),
            ..ApiConfig::default()
        },
    );
    for zone in ["b", "a"] {
        let body = json!({"zone": zone, "capacity": {"instances": 4}});
        let (s, v, _) = call(&app, Method::POST, "/increase-capacity", Some(body)).await;
        assert_eq!(s, 200, "{v}");
    }
    let (s, v, _) = call(&app, Method::GET, "/v1/cluster", None).await;
    assert_eq!(s, 200, "{v}");
    let map: ClusterView = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(
        (map.node.as_deref(), map.partition_key.as_str()),
        (Some("n1"), "zone")
    );
    let rows: Vec<(Option<&str>, &str, &str, u64)> = map
        .partitions
        .iter()
        .map(|p| {
            (
                p.partition.as_deref(),
                p.holder.as_str(),
                p.url.as_str(),
                p.token,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (Some("a"), "n1", "http://127.0.0.1:9", 1),
            (Some("b"), "n1", "http://127.0.0.1:9", 1)
        ],
        "{v}"
    );
    assert_eq!(map.partitions[0].expires_at, "2030-01-01T00:00:03.000Z");
    assert_eq!(map.route(&json!({"zone": "b"})), Some("http://127.0.0.1:9"));
    // Once the leases lapse (no daemon refreshes them) the map has no holders.
    clock.set(berth_service::WallClock::now(&clock) + chrono::TimeDelta::seconds(10));
    let (_, v, _) = call(&app, Method::GET, "/v1/cluster", None).await;
    assert_eq!(v["partitions"], json!([]), "{v}");
}
