//! Against a real cloud (`.ci/openstack.sh start`, `BERTH_TEST_OPENSTACK=1`): the inventory
//! read live, claims written back and raced by a direct Placement client, servers booted on
//! the host asked. Without a cloud each test says so and passes, except under `CI=true`,
//! where a missing cloud fails it.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use berth_calendar::{Amounts, Applied, Command, ReservationId, ReservationRequest};
use berth_openstack::claims::consumer_id;
use berth_openstack::client::PLACEMENT_VERSION;
use berth_openstack::{Auth, Credentials, Naming, OpenStack};
use berth_service::{
    BootRequest, InventoryReconciler, ManualClock, Notifier, ReservationOptions,
    ReservationService, Vim,
};
use serde_json::json;

/// The cloud's exports, or `None` (said) when there is none; under CI a missing cloud panics.
fn cloud(test: &str) -> Option<OpenStack> {
    if std::env::var("BERTH_TEST_OPENSTACK").as_deref() != Ok("1") {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "`{test}` needs a cloud under CI: run `eval \"$(bash .ci/openstack.sh start)\"` first"
        );
        eprintln!("BERTH_TEST_OPENSTACK unset: `{test}` did not run (no cloud)");
        return None;
    }
    let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} is not set"));
    let auth = Auth {
        auth_url: var("OS_AUTH_URL"),
        credentials: Credentials::Password {
            username: var("OS_USERNAME"),
            password: var("OS_PASSWORD"),
            user_domain: var("OS_USER_DOMAIN_NAME"),
            project: var("OS_PROJECT_NAME"),
            project_domain: var("OS_PROJECT_DOMAIN_NAME"),
        },
        region: std::env::var("OS_REGION_NAME").ok(),
        interface: "public".into(),
        timeout: Duration::from_secs(30),
    };
    let naming = Naming {
        provider: "openstack".into(),
        cloud_owner: Some("lab".into()),
        endpoint: None,
        tenant: None,
    };
    Some(OpenStack::new(auth, naming, format!("it-{test}"), Duration::from_secs(60)).unwrap())
}

/// `BERTH_TEST_OS_COMPUTES`: host -> (vcpus, MiB, GB).
fn computes() -> Vec<(String, u64, u64, u64)> {
    let spec = std::env::var("BERTH_TEST_OS_COMPUTES").unwrap_or_default();
    spec.split_whitespace()
        .map(|h| {
            let p: Vec<&str> = h.split(':').collect();
            (
                p[0].to_owned(),
                p[1].parse().unwrap(),
                p[2].parse().unwrap(),
                p[3].parse().unwrap(),
            )
        })
        .collect()
}

async fn service(scope: &str) -> Arc<ReservationService> {
    let store = berth_store::open("sqlite::memory:").await.unwrap();
    ReservationService::open(
        store,
        ReservationOptions {
            stream: scope.into(),
            ..ReservationOptions::default()
        },
        Arc::new(ManualClock::new(chrono::Utc::now())),
        Notifier::disabled(),
    )
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inventory_is_placement_and_nova_live() {
    let Some(os) = cloud("the_inventory_is_placement_and_nova_live") else {
        return;
    };
    let snap = os.snapshot().await.unwrap();
    let naming = Naming {
        provider: "openstack".into(),
        cloud_owner: None,
        endpoint: None,
        tenant: None,
    };
    let cands = snap.candidates(&naming);
    for (host, vcpus, mib, gb) in computes() {
        let c = cands
            .iter()
            .find(|c| c.candidate_id.as_str() == host)
            .unwrap_or_else(|| panic!("no candidate {host}"));
        let p = snap
            .providers
            .iter()
            .find(|p| p.provider.name == host)
            .unwrap();
        let others = |rc: &str| p.used_by_others(rc, &snap.berth_servers) as i64;
        // Nova's defaults: VCPU ratio 4.0, 512 MiB reserved.
        assert_eq!(
            c.capacity["vcpu"],
            (vcpus * 4) as i64 - others("VCPU"),
            "{host}"
        );
        assert_eq!(
            c.capacity["ram_mib"],
            (mib - 512) as i64 - others("MEMORY_MB"),
            "{host}"
        );
        assert_eq!(
            c.capacity["disk_gib"],
            gb as i64 - others("DISK_GB"),
            "{host}"
        );
        assert!(c.flavors.iter().any(|f| f.name == "m1.tiny"), "{host}");
    }
    let cat = snap.catalog(&naming);
    let tiny = cat.flavors.iter().find(|f| f.name == "m1.tiny").unwrap();
    assert_eq!((tiny.vcpus, tiny.ram, tiny.disk), (1, 512, 1));
    assert_eq!(snap.region.as_deref(), Some("RegionOne"));
}

/// Reserves `gb` disk on `host` now, in the calendar.
async fn reserve(svc: &ReservationService, host: &str, gb: u64) -> ReservationId {
    let c = svc
        .command(
            Command::CreateReservation(
                ReservationRequest::new(host, Amounts::new().with("disk_gib", gb))
                    .provider("openstack"),
            ),
            None,
        )
        .await
        .unwrap();
    let Applied::ReservationCreated { id, .. } = c.outcome.applied else {
        panic!("{:?}", c.outcome.applied);
    };
    id
}

/// DISK_GB `host` holds in all, and its capacity, with who holds it.
async fn disk(os: &OpenStack, host: &str) -> (u64, u64, String) {
    let ps = berth_openstack::fetch::providers(os.session())
        .await
        .unwrap();
    let p = ps.iter().find(|p| p.provider.name == host).unwrap();
    let used = p
        .allocations
        .values()
        .filter_map(|h| h.resources.get("DISK_GB"))
        .sum();
    let who = format!("{:?}", p.allocations);
    (used, p.inventories["DISK_GB"].capacity(), who)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn berth_and_a_direct_client_racing_for_the_last_units_never_overcommit() {
    let test = "berth_and_a_direct_client_racing_for_the_last_units_never_overcommit";
    let Some(os) = cloud(test) else {
        return;
    };
    let os = Arc::new(os);
    let host = "cpu2";
    let svc = service(&format!("it-{test}")).await;
    let rec = InventoryReconciler::start(Arc::clone(&svc), os.clone(), true)
        .await
        .unwrap();
    let (project, user) = os.session().identity().await.unwrap();
    let mut berth_won = 0;
    let mut direct_won = 0;
    for round in 0..6 {
        rec.reload(berth_service::Trigger::Request).await.unwrap();
        let free = svc
            .read(|c| {
                c.declared_pools(Some(&berth_calendar::ProviderId::new("openstack")))
                    .into_iter()
                    .find(|d| d.pool.zone.0 == host)
                    .and_then(|d| {
                        d.capacity
                            .0
                            .get(&berth_calendar::Dimension::disk_gib())
                            .copied()
                    })
            })
            .await
            .unwrap()
            .unwrap_or(0);
        assert!(free > 0, "round {round}: no free disk on {host}");
        let id = reserve(&svc, host, free).await;
        let other = uuid::Uuid::new_v4().to_string();
        let body = json!({
            "allocations": {os.snapshot().await.unwrap().provider_uuid(host).unwrap(): {"resources": {"DISK_GB": free}}},
            "project_id": project, "user_id": user, "consumer_generation": null,
            "consumer_type": "INSTANCE",
        });
        let direct = async {
            // In odd rounds the direct client reads the providers first (twice), so Berth's
            // write tends to leave first: both sides win some rounds.
            if round % 2 == 1 {
                berth_openstack::fetch::providers(os.session())
                    .await
                    .unwrap();
                berth_openstack::fetch::providers(os.session())
                    .await
                    .unwrap();
            }
            os.session()
                .call(
                    reqwest::Method::PUT,
                    "placement",
                    &format!("/allocations/{other}"),
                    PLACEMENT_VERSION,
                    Some(&body),
                )
                .await
                .unwrap()
                .status
        };
        let (synced, status) = tokio::join!(os.sync_claims(&svc), direct);
        let mut synced = synced.unwrap();
        assert!(
            status == 204 || status == 409,
            "round {round}: the direct client got {status}"
        );
        // The claims loop's next pass: Berth finds an over-commit its own check missed.
        let again = os.sync_claims(&svc).await.unwrap();
        if !again.refused.is_empty() {
            synced.written.clear();
            synced.refused.extend(again.refused);
        }
        let (used, cap, who) = disk(&os, host).await;
        assert!(
            used <= cap,
            "round {round}: {used} DISK_GB allocated of {cap}: {who}; berth {synced:?}, direct {status}"
        );
        let berth = synced.written.len() == 1;
        let direct = status == 204;
        assert!(
            berth ^ direct,
            "round {round}: exactly one gets the last {free} GB: berth {berth} ({:?}), direct {status}",
            synced.refused
        );
        if berth {
            berth_won += 1;
        } else {
            direct_won += 1;
            // The capacity gone to the other reaches the calendar: the reservation is at risk.
            rec.reload(berth_service::Trigger::Request).await.unwrap();
            let r = svc.read(|c| c.reservation(id)).await.unwrap().unwrap();
            assert!(r.at_risk, "round {round}: {r:?}");
        }
        // Clean up: the reservation cancelled gives its claim back.
        svc.command(Command::CancelReservation { id }, None)
            .await
            .unwrap();
        let s = os.sync_claims(&svc).await.unwrap();
        assert_eq!(s.removed.len(), usize::from(berth), "round {round}");
        os.session()
            .call(
                reqwest::Method::DELETE,
                "placement",
                &format!("/allocations/{other}"),
                PLACEMENT_VERSION,
                None,
            )
            .await
            .unwrap();
        let consumer = consumer_id(&format!("it-{test}"), &id.to_string());
        let left = os
            .session()
            .get(
                "placement",
                &format!("/allocations/{consumer}"),
                PLACEMENT_VERSION,
            )
            .await
            .unwrap();
        assert!(left.contains("\"allocations\": {}"), "{left}");
    }
    eprintln!("race: berth won {berth_won}, the direct client {direct_won} of 6");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_boots_on_the_host_asked_and_is_deleted() {
    let Some(os) = cloud("a_server_boots_on_the_host_asked_and_is_deleted") else {
        return;
    };
    let req = BootRequest {
        instance: format!("it-{}", uuid::Uuid::new_v4()),
        host: "cpu1".into(),
        name: "berth-it".into(),
        flavor: "m1.tiny".into(),
        image: std::env::var("BERTH_TEST_OS_IMAGE_NAME").ok(),
    };
    let booted = os.boot(&req).await.unwrap();
    assert_eq!(booted.status, "ACTIVE");
    assert_eq!(booted.host.as_deref(), Some("cpu1"));
    // Nova's own allocation for it is in Placement, and Berth counts it as its own.
    let snap = os.snapshot().await.unwrap();
    assert!(snap.berth_servers.contains(&booted.server));
    let p = snap
        .providers
        .iter()
        .find(|p| p.provider.name == "cpu1")
        .unwrap();
    assert_eq!(p.allocations[&booted.server].resources["VCPU"], 1);
    assert!(os.destroy(&req.instance).await.unwrap());
    assert!(
        !os.destroy(&req.instance).await.unwrap(),
        "a second destroy finds nothing"
    );
    let snap = os.snapshot().await.unwrap();
    let p = snap
        .providers
        .iter()
        .find(|p| p.provider.name == "cpu1")
        .unwrap();
    assert!(!p.allocations.contains_key(&booted.server));
    // An unknown flavor is refused before anything is booted.
    let bad = BootRequest {
        flavor: "m9.huge".into(),
        ..req
    };
    let e = os.boot(&bad).await.unwrap_err();
    assert!(e.to_string().contains("flavor `m9.huge` is unknown"), "{e}");
}
