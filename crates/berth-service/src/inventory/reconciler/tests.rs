//! The reconciler over a source that changes: a good load is reconciled then served, a bad
//! one changes nothing and is kept for status, the drift shows changes made behind its back.

use std::sync::Mutex;

use berth_calendar::{Amounts, CapacityChange, Command, PoolKey};
use berth_inventory::StaticProvider;

use super::*;
use crate::{ManualClock, Notifier, ReservationOptions};

/// A source serving whatever text it holds now.
struct Text(Mutex<String>);

impl InventorySource for Text {
    fn name(&self) -> String {
        "test text".into()
    }

    fn load(
        &self,
    ) -> Pin<Box<dyn Future<Output = Result<LoadedInventory, ServiceError>> + Send + '_>> {
        let text = self.0.lock().map(|t| t.clone()).unwrap_or_default();
        Box::pin(async move {
            let inv = berth_inventory::Inventory::parse(&text).map_err(|e| {
                ServiceError::InvalidInventory {
                    origin: self.name(),
                    message: e.to_string(),
                    diagnostics: match e {
                        berth_inventory::InventoryError::Invalid { diagnostics } => diagnostics,
                        _ => Vec::new(),
                    },
                }
            })?;
            Ok(LoadedInventory {
                pools: InventoryPools::from_candidates("inventory", inv.candidates.values()),
                candidates: inv.candidates.len(),
                fingerprint: text.len().to_string(),
                warnings: Vec::new(),
                catalog: None,
                provider: Arc::new(StaticProvider::new(inv)),
            })
        })
    }
}

fn candidates(list: &[(&str, u64)]) -> String {
    let mut s = String::from("candidates:\n");
    for (id, vcpu) in list {
        s.push_str(&format!(
            "  - {{candidate_id: {id}, inventory_type: cloud, latitude: 1, longitude: 1, capacity: {{vcpu: {vcpu}}}}}\n"
        ));
    }
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_reload_changes_nothing_and_a_good_one_is_reconciled_then_served() {
    let store = berth_store::open("sqlite::memory:").await.unwrap();
    let clock = ManualClock::new(chrono::Utc::now());
    let svc = ReservationService::open(
        Arc::clone(&store),
        ReservationOptions::default(),
        Arc::new(clock),
        Notifier::disabled(),
    )
    .await
    .unwrap();
    let source = Arc::new(Text(Mutex::new(candidates(&[("a", 8)]))));
    let rec = InventoryReconciler::start(Arc::clone(&svc), source.clone(), true)
        .await
        .unwrap();
    let shared = rec.shared();
    assert!(shared.current().candidate("a").is_some());
    let status = rec.status().await;
    let last = status.last.unwrap();
    assert_eq!((last.trigger, last.diff.added.len()), (Trigger::Start, 1));
    assert!(status.drift.unwrap().is_empty());

    // A file with an error: refused with its line and column; nothing changes.
    *source.0.lock().unwrap() =
        "candidates:\n  - {candidate_id: b, inventory_type: clowd, latitude: 1, longitude: 1}\n"
            .into();
    let head = store.head("calendar").await.unwrap();
    let e = rec.reload(Trigger::Request).await.unwrap_err();
    let ServiceError::InvalidInventory { diagnostics, .. } = &e else {
        panic!("{e}");
    };
    assert!(
        diagnostics.iter().any(|d| d.line == 2 && d.column > 0),
        "{diagnostics:?}"
    );
    assert_eq!(store.head("calendar").await.unwrap(), head);
    assert!(shared.current().candidate("a").is_some());
    assert!(shared.current().candidate("b").is_none());
    let status = rec.status().await;
    assert_eq!(status.failed.map(|f| f.trigger), Some(Trigger::Request));
    assert_eq!(status.last.map(|l| l.trigger), Some(Trigger::Start));

    // A good one: the pools change first, then plans see the new candidates.
    *source.0.lock().unwrap() = candidates(&[("b", 4)]);
    let done = rec.reload(Trigger::Signal).await.unwrap();
    assert_eq!(done.diff.added.len(), 1);
    assert_eq!(done.diff.removed.len(), 1);
    assert!(shared.current().candidate("b").is_some());
    assert!(shared.current().candidate("a").is_none());
    assert!(rec.status().await.failed.is_none());

    // A change made by hand to an inventory pool shows as drift.
    svc.command(
        Command::IncreaseCapacity(CapacityChange {
            pool: PoolKey::new("b", "inventory"),
            start: svc.now(),
            end: None,
            amounts: Amounts::new().with("vcpu", 1),
        }),
        None,
    )
    .await
    .unwrap();
    let drift = rec.status().await.drift.unwrap();
    assert!(
        drift.is_empty(),
        "a hand increase keeps the declaration: {drift:?}"
    );
    svc.command(
        Command::RetirePool {
            pool: PoolKey::new("b", "inventory"),
        },
        None,
    )
    .await
    .unwrap();
    let drift = rec.status().await.drift.unwrap();
    assert_eq!(drift.added.len(), 1, "{drift:?}");
}
