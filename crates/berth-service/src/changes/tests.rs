//! Tests of the change notices: commits, refusals, timers and a plan's life.

use std::collections::BTreeMap;
use std::sync::Arc;

use berth_calendar::{Amounts, CapacityChange, Command, PoolKey, ReservationRequest};
use berth_inventory::{InventoryProvider, StaticProvider};
use chrono::{DateTime, TimeZone, Utc};
use tokio::sync::broadcast::error::TryRecvError;

use super::Change;
use crate::{
    ManualClock, Notifier, PlanConfig, PlanRequest, PlanService, PlanStatus, ReservationOptions,
    ReservationService,
};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default()
}

async fn open(clock: &ManualClock) -> Arc<ReservationService> {
    let store = berth_store::open("sqlite::memory:").await.unwrap();
    ReservationService::open(
        store,
        ReservationOptions::default(),
        Arc::new(clock.clone()),
        Notifier::disabled(),
    )
    .await
    .unwrap()
}

fn grow(zone: &str, vcpu: u64) -> Command {
    Command::IncreaseCapacity(CapacityChange {
        pool: PoolKey::new(zone, "inventory"),
        start: t0(),
        end: None,
        amounts: Amounts::new().with("vcpu", vcpu),
    })
}

#[tokio::test]
async fn a_commit_is_announced_with_its_seq_and_a_refusal_is_not() {
    let clock = ManualClock::new(t0());
    let svc = open(&clock).await;
    let mut rx = svc.changes();
    svc.command(grow("dfw", 4), None).await.unwrap();
    let seq = svc.seq().await;
    assert_eq!(rx.recv().await.unwrap(), Change::Calendar { seq });
    let too_big = Command::CreateReservation(
        ReservationRequest::new("dfw", Amounts::new().with("vcpu", 5))
            .window(t0(), t0() + chrono::TimeDelta::hours(1)),
    );
    assert!(svc.command(too_big, None).await.is_err());
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
}

#[tokio::test]
async fn a_reservation_starting_on_the_clock_is_announced_by_the_next_read() {
    let clock = ManualClock::new(t0());
    let svc = open(&clock).await;
    svc.command(grow("dfw", 4), None).await.unwrap();
    let start = t0() + chrono::TimeDelta::hours(1);
    let later = Command::CreateReservation(
        ReservationRequest::new("dfw", Amounts::new().with("vcpu", 2))
            .window(start, start + chrono::TimeDelta::hours(1)),
    );
    svc.command(later, None).await.unwrap();
    let mut rx = svc.changes();
    svc.tick().await.unwrap();
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty), "nothing was due");
    clock.set(start + chrono::TimeDelta::minutes(1));
    svc.tick().await.unwrap();
    let seq = svc.seq().await;
    assert_eq!(rx.try_recv(), Ok(Change::Calendar { seq }));
}

#[tokio::test]
async fn a_plan_is_announced_from_acceptance_to_deletion() {
    let clock = ManualClock::new(t0());
    let svc = open(&clock).await;
    svc.command(grow("dfw", 8), None).await.unwrap();
    let inv: Arc<dyn InventoryProvider> = Arc::new(
        StaticProvider::parse(
            "candidates:\n  - {candidate_id: dfw, inventory_type: cloud, latitude: 32.9, longitude: -97.0}\n",
        )
        .unwrap(),
    );
    let plans = PlanService::start(
        svc.store().clone(),
        inv,
        Arc::clone(&svc),
        Arc::new(clock.clone()),
        PlanConfig::default(),
    )
    .await
    .unwrap();
    let mut rx = svc.changes();
    let template = serde_json::json!({
        "homing_template_version": "2017-10-10",
        "demands": {"vG": [{"inventory_provider": "aai", "inventory_type": "cloud"}]},
    });
    let plan = plans
        .accept(PlanRequest {
            name: "p".into(),
            id: Some("p1".into()),
            template,
            num_solution: Some(1),
            timeout: Some(30),
            limit: None,
            files: BTreeMap::new(),
        })
        .await
        .unwrap();
    let mut seen = Vec::new();
    while !seen
        .last()
        .is_some_and(|s: &Option<PlanStatus>| s.is_some_and(PlanStatus::is_final))
    {
        let next = tokio::time::timeout(std::time::Duration::from_secs(30), rx.recv())
            .await
            .unwrap()
            .unwrap();
        if let Change::Plan { id, status } = next {
            assert_eq!(id, plan.id);
            seen.push(status);
        }
    }
    assert_eq!(
        seen,
        [
            PlanStatus::Template,
            PlanStatus::Translating,
            PlanStatus::Translated,
            PlanStatus::Solving,
            PlanStatus::Solved,
            PlanStatus::Done,
        ]
        .map(Some)
    );
    plans.delete("p1").await.unwrap();
    let gone = loop {
        if let Change::Plan { id, status } = rx.recv().await.unwrap() {
            break (id, status);
        }
    };
    assert_eq!(gone, ("p1".to_owned(), None));
}
