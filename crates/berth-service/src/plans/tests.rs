//! Tests of the plan service: solving, reservations with rollback, bad templates, resume.

use berth_calendar::{CapacityChange, PoolKey};
use berth_inventory::StaticProvider;
use chrono::TimeZone;

use super::*;
use crate::{ManualClock, Notifier, ReservationOptions};
use berth_inventory::InventoryProvider;

const INVENTORY: &str = "
candidates:
  - {candidate_id: dfw, inventory_type: cloud, latitude: 32.9, longitude: -97.0, cost: 10}
  - {candidate_id: nyc, inventory_type: cloud, latitude: 40.7, longitude: -74.0, cost: 5}
";

fn template(reserve_vcpu: u64) -> serde_json::Value {
    serde_json::json!({
        "homing_template_version": "2017-10-10",
        "locations": {"customer": {"latitude": 32.8, "longitude": -96.8}},
        "demands": {"vG": [{"inventory_provider": "aai", "inventory_type": "cloud"}]},
        "optimization": {"minimize": {"sum": [{"distance_between": ["customer", "vG"]}]}},
        "reservations": {"r": {"type": "instance_reservation", "demands": ["vG"], "properties": {"controller": "berth", "request": {"vcpu": reserve_vcpu}}}}
    })
}

fn request(name: &str, t: serde_json::Value) -> PlanRequest {
    PlanRequest {
        name: name.into(),
        id: None,
        template: t,
        num_solution: Some(1),
        timeout: Some(30),
        limit: None,
        files: BTreeMap::new(),
    }
}

struct Fixture {
    store: Arc<dyn Store>,
    res: Arc<ReservationService>,
    clock: ManualClock,
}

async fn fixture(url: &str) -> Fixture {
    let t0 = Utc
        .with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default();
    let clock = ManualClock::new(t0);
    let store = berth_store::open(url).await.unwrap();
    let res = ReservationService::open(
        Arc::clone(&store),
        ReservationOptions::default(),
        Arc::new(clock.clone()),
        Notifier::disabled(),
    )
    .await
    .unwrap();
    if res.seq().await == 0 {
        let grow = |zone: &str| {
            Command::IncreaseCapacity(CapacityChange {
                pool: PoolKey::new(zone, "inventory"),
                start: t0,
                end: None,
                amounts: Amounts::new().with("vcpu", 8),
            })
        };
        res.batch(vec![grow("dfw"), grow("nyc")]).await.unwrap();
    }
    Fixture { store, res, clock }
}

async fn plans(f: &Fixture) -> Arc<PlanService> {
    plans_on(f, "local").await
}

/// A plan service named `node` (its workers poll often, so tests do not wait long).
async fn plans_on(f: &Fixture, node: &str) -> Arc<PlanService> {
    let inv: Arc<dyn InventoryProvider> = Arc::new(StaticProvider::parse(INVENTORY).unwrap());
    PlanService::start(
        Arc::clone(&f.store),
        inv,
        Arc::clone(&f.res),
        Arc::new(f.clock.clone()),
        PlanConfig {
            node: node.to_owned(),
            poll: Duration::from_millis(20),
            ..PlanConfig::default()
        },
    )
    .await
    .unwrap()
}

async fn wait_final(p: &PlanService, id: &str) -> Plan {
    for _ in 0..500 {
        if let Some(plan) = p.get(id).await.unwrap()
            && plan.status.is_final()
        {
            return plan;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("plan {id} did not finish");
}

async fn reserved_vcpu(f: &Fixture, zone: &str) -> u64 {
    f.res
        .read(|c| {
            c.query_reservations(&ReservationQuery::default())
                .iter()
                .filter(|r| r.pool.zone.0 == zone && r.state != ReservationState::Cancelled)
                .map(|r| r.amounts.get("vcpu"))
                .sum()
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn a_plan_is_solved_and_its_reservation_made() {
    let f = fixture("sqlite::memory:").await;
    let p = plans(&f).await;
    let accepted = p.accept(request("p1", template(3))).await.unwrap();
    assert_eq!(accepted.status, PlanStatus::Template);
    let done = wait_final(&p, &accepted.id).await;
    assert_eq!(done.status, PlanStatus::Done, "{:?}", done.message);
    let outcome = done.outcome.unwrap();
    assert_eq!(
        outcome["solutions"][0]["placements"]["vG"]["candidate_id"],
        "dfw"
    );
    assert_eq!(done.reservations.len(), 1);
    assert_eq!(reserved_vcpu(&f, "dfw").await, 3);
    assert_eq!(p.counts().await.unwrap()[&PlanStatus::Done], 1);
    p.delete(&accepted.id).await.unwrap();
    assert!(p.get(&accepted.id).await.unwrap().is_none());
    assert!(matches!(
        p.delete(&accepted.id).await,
        Err(ServiceError::NotFound { .. })
    ));
}

#[tokio::test]
async fn plans_past_the_unfinished_limit_are_refused_until_one_leaves_the_queue() {
    let f = fixture("sqlite::memory:").await;
    let inv: Arc<dyn InventoryProvider> = Arc::new(StaticProvider::parse(INVENTORY).unwrap());
    // No workers: accepted plans stay unfinished.
    let p = PlanService::start(
        Arc::clone(&f.store),
        inv,
        Arc::clone(&f.res),
        Arc::new(f.clock.clone()),
        PlanConfig {
            workers: 0,
            max_pending: 2,
            ..PlanConfig::default()
        },
    )
    .await
    .unwrap();
    let a = p.accept(request("a", template(1))).await.unwrap();
    p.accept(request("b", template(1))).await.unwrap();
    let e = p.accept(request("c", template(1))).await.unwrap_err();
    assert!(
        matches!(&e, ServiceError::Unavailable { message } if message.starts_with("2 plans are queued")),
        "{e}"
    );
    p.delete(&a.id).await.unwrap();
    let c = p.accept(request("c", template(1))).await.unwrap();
    assert_eq!(c.status, PlanStatus::Template);
}

#[tokio::test]
async fn a_reservation_that_does_not_fit_fails_the_plan_and_leaves_nothing() {
    let f = fixture("sqlite::memory:").await;
    let p = plans(&f).await;
    let id = p.accept(request("big", template(9))).await.unwrap().id;
    let plan = wait_final(&p, &id).await;
    assert_eq!(plan.status, PlanStatus::Error);
    assert!(
        plan.message
            .unwrap_or_default()
            .contains("nothing reserved")
    );
    assert_eq!(reserved_vcpu(&f, "dfw").await, 0);
}

#[tokio::test]
async fn bad_requests_and_templates_are_reported() {
    let f = fixture("sqlite::memory:").await;
    let p = plans(&f).await;
    assert!(matches!(
        p.accept(request(" ", template(1))).await,
        Err(ServiceError::Invalid { .. })
    ));
    assert!(matches!(
        p.accept(request("x", serde_json::json!(3))).await,
        Err(ServiceError::Invalid { .. })
    ));
    let mut r = request("x", template(1));
    r.timeout = Some(0);
    assert!(p.accept(r).await.is_err());
    let id = p
        .accept(request(
            "bad",
            serde_json::json!("demands: {vG: [{inventory_type: nope}]}"),
        ))
        .await
        .unwrap()
        .id;
    let plan = wait_final(&p, &id).await;
    assert_eq!(plan.status, PlanStatus::Error);
    assert!(
        plan.message
            .unwrap_or_default()
            .starts_with("invalid template")
    );
    let mut dup = request("dup", template(1));
    dup.id = Some(id.clone());
    assert!(matches!(
        p.accept(dup).await,
        Err(ServiceError::Invalid { .. })
    ));
}

#[tokio::test]
async fn an_accepted_plan_is_solved_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("b.db").display());
    {
        // Accepted but never solved: the process died before a worker ran.
        let f = fixture(&url).await;
        let new = NewPlan {
            id: "resume-me".into(),
            name: "r".into(),
            status: "template".into(),
            request: serde_json::to_value(request("r", template(2))).unwrap(),
            created_at: f.clock.now(),
        };
        f.store.create_plan(&new).await.unwrap();
        f.store.close().await.unwrap();
    }
    let f = fixture(&url).await;
    let p = plans(&f).await;
    let plan = wait_final(&p, "resume-me").await;
    assert_eq!(plan.status, PlanStatus::Done, "{:?}", plan.message);
    assert_eq!(reserved_vcpu(&f, "dfw").await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn plans_accepted_through_two_services_are_each_solved_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("b.db").display());
    let f = fixture(&url).await;
    let (a, b) = (plans_on(&f, "node-a").await, plans_on(&f, "node-b").await);
    let mut ids = Vec::new();
    for i in 0..16 {
        let via = if i % 2 == 0 { &a } else { &b };
        let t = serde_json::json!({
            "homing_template_version": "2017-10-10",
            "locations": {"customer": {"latitude": 32.8, "longitude": -96.8}},
            "demands": {"vG": [{"inventory_provider": "aai", "inventory_type": "cloud"}]},
            "optimization": {"minimize": {"sum": [{"distance_between": ["customer", "vG"]}]}}
        });
        ids.push(via.accept(request(&format!("p{i}"), t)).await.unwrap().id);
    }
    let mut by = BTreeMap::<String, usize>::new();
    for id in &ids {
        let plan = wait_final(&a, id).await;
        assert_eq!(plan.status, PlanStatus::Done, "{:?}", plan.message);
        *by.entry(plan.solved_by.unwrap()).or_default() += 1;
        // Created at version 1, recorded once: a second solve would have moved it further.
        assert_eq!(f.store.get_plan(id).await.unwrap().unwrap().version, 2);
    }
    assert_eq!(by.values().sum::<usize>(), ids.len());
    assert!(by.keys().all(|n| n == "node-a" || n == "node-b"), "{by:?}");
    // A worker takes its plan out of the queue just after recording it.
    let mut left = f.store.queued_plans().await.unwrap();
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        left = f.store.queued_plans().await.unwrap();
    }
    assert!(left.is_empty(), "{left:?}");
}

/// Plan `orphan` (reserving 2 vCPU), queued and claimed for 30 s by daemon `dead`.
async fn orphan(f: &Fixture) {
    let new = NewPlan {
        id: "orphan".into(),
        name: "o".into(),
        status: "template".into(),
        request: serde_json::to_value(request("o", template(2))).unwrap(),
        created_at: f.clock.now(),
    };
    f.store.create_plan(&new).await.unwrap();
    let hold = Duration::from_secs(30);
    let dead = f.store.claim_plan("dead", f.clock.now(), hold).await;
    assert_eq!(dead.unwrap().unwrap().plan_id, "orphan");
}

#[tokio::test]
async fn a_plan_held_by_a_dead_solver_is_taken_over_when_its_claim_runs_out() {
    let f = fixture("sqlite::memory:").await;
    orphan(&f).await;
    let p = plans(&f).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let waiting = p.get("orphan").await.unwrap().unwrap();
    assert_eq!(waiting.status, PlanStatus::Template);
    f.clock.set(f.clock.now() + chrono::TimeDelta::seconds(31));
    let plan = wait_final(&p, "orphan").await;
    assert_eq!(plan.status, PlanStatus::Done, "{:?}", plan.message);
    assert_eq!(plan.solved_by.as_deref(), Some("local"));
    assert_eq!(reserved_vcpu(&f, "dfw").await, 2);
    assert!(f.store.queued_plans().await.unwrap().is_empty());
}

/// A clustered daemon's plan service: its calendar commits only while it holds the lease.
async fn cluster_node(f: &Fixture, id: &str) -> (Arc<crate::Ownership>, Arc<PlanService>) {
    let own = crate::Ownership::new(
        Arc::clone(&f.store),
        Arc::new(f.clock.clone()),
        crate::OwnershipOptions {
            lease: "calendar".into(),
            node_id: id.into(),
            advertise_url: format!("http://{id}"),
            lease_time: Duration::from_secs(3),
        },
    );
    let res = ReservationService::open(
        Arc::clone(&f.store),
        ReservationOptions {
            ownership: Some(Arc::clone(&own)),
            ..ReservationOptions::default()
        },
        Arc::new(f.clock.clone()),
        Notifier::disabled(),
    )
    .await
    .unwrap();
    let inv: Arc<dyn InventoryProvider> = Arc::new(StaticProvider::parse(INVENTORY).unwrap());
    let plans = PlanService::start(
        Arc::clone(&f.store),
        inv,
        res,
        Arc::new(f.clock.clone()),
        PlanConfig {
            node: id.to_owned(),
            poll: Duration::from_millis(20),
            ..PlanConfig::default()
        },
    )
    .await
    .unwrap();
    (own, plans)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_cluster_plans_accepted_anywhere_are_solved_and_reserved_by_the_lease_holder() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("b.db").display());
    let f = fixture(&url).await;
    let (own_a, a) = cluster_node(&f, "a").await;
    let (own_b, b) = cluster_node(&f, "b").await;
    assert!(matches!(
        own_a.refresh().await.unwrap(),
        crate::Owner::Me { .. }
    ));
    assert!(matches!(
        own_b.refresh().await.unwrap(),
        crate::Owner::Other { .. }
    ));
    // Accepted by the daemon that cannot write the calendar: queued, not claimed by it.
    let id = b.accept(request("via-b", template(2))).await.unwrap().id;
    let plan = wait_final(&b, &id).await;
    assert_eq!(plan.status, PlanStatus::Done, "{:?}", plan.message);
    assert_eq!(plan.solved_by.as_deref(), Some("a"));
    assert_eq!(plan.reservations.len(), 1);
    let id = a.accept(request("via-a", template(1))).await.unwrap().id;
    let plan = wait_final(&a, &id).await;
    assert_eq!(plan.status, PlanStatus::Done, "{:?}", plan.message);
    assert_eq!(plan.solved_by.as_deref(), Some("a"));
    assert_eq!(reserved_vcpu(&f, "dfw").await, 3);
}

#[tokio::test]
async fn wait_final_answers_when_the_plan_ends_here_or_elsewhere_or_at_its_deadline() {
    let f = fixture("sqlite::memory:").await;
    orphan(&f).await;
    let p = plans(&f).await;
    // Nobody can solve it yet: the wait ends at its deadline with the plan as it is.
    let started = Instant::now();
    let plan = p.wait_final("orphan", Duration::from_millis(150)).await;
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(plan.unwrap().unwrap().status, PlanStatus::Template);
    // Solved here once the dead daemon's claim runs out: the waiter hears the end.
    let waiter = {
        let p = Arc::clone(&p);
        tokio::spawn(async move { p.wait_final("orphan", Duration::from_secs(30)).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!waiter.is_finished());
    f.clock.set(f.clock.now() + chrono::TimeDelta::seconds(31));
    let plan = waiter.await.unwrap().unwrap().unwrap();
    assert_eq!(plan.status, PlanStatus::Done, "{:?}", plan.message);
    // Another service on the same store (another daemon) hears nothing of this one's
    // plans: it sees a plan end by reading the store again every `poll`.
    let other = plans_on(&f, "other").await;
    let id = p.accept(request("here", template(1))).await.unwrap().id;
    let plan = other
        .wait_final(&id, Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(plan.status, PlanStatus::Done, "{:?}", plan.message);
    // A plan that is not there is answered at once.
    let started = Instant::now();
    assert!(
        p.wait_final("nope", Duration::from_secs(30))
            .await
            .unwrap()
            .is_none()
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}
