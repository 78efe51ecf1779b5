//! The inventory a daemon serves, kept reconciled with the calendar: loaded from its source
//! at start, on a signal, on request or on a source's own refresh; a load that fails changes
//! nothing (the inventory served stays); a load that succeeds is reconciled with the calendar
//! first and then served to plans, so plans never see candidates the calendar has no pools
//! for. Every reconcile is logged as structured events and kept for status.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use berth_calendar::RecordRef;
use berth_inventory::InventoryProvider;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{InventoryDiff, InventoryPools, SharedInventory};
use crate::{ProviderInfo, ReservationService, ServiceError, qualify};

/// Why a reconcile ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trigger {
    /// The daemon started.
    Start,
    /// A signal asked for it (berthd: SIGHUP).
    Signal,
    /// An operator asked for it (`POST /admin/inventory/reload`).
    Request,
    /// The source refreshed itself (a live inventory's period).
    Refresh,
}

impl Trigger {
    /// Its name in logs and answers.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Start => "start",
            Trigger::Signal => "signal",
            Trigger::Request => "request",
            Trigger::Refresh => "refresh",
        }
    }
}

/// An inventory loaded from its source, ready to be reconciled and served.
pub struct LoadedInventory {
    /// The pools it gives the calendar.
    pub pools: InventoryPools,
    /// What plans resolve against.
    pub provider: Arc<dyn InventoryProvider>,
    /// The provider's flavor catalog for the Promise routes (`None`: none).
    pub catalog: Option<ProviderInfo>,
    /// How many candidates it has.
    pub candidates: usize,
    /// A fingerprint of what was loaded (two loads of the same content match).
    pub fingerprint: String,
    /// Warnings found while loading (the inventory is served all the same).
    pub warnings: Vec<String>,
}

/// Where an inventory comes from: a file, a cloud's API. `load` returns the whole inventory
/// or an error that names what is wrong ([`ServiceError::InvalidInventory`] with the
/// diagnostics), never a partial one.
pub trait InventorySource: Send + Sync {
    /// Where it reads from, for logs and status (`file /etc/berth/inventory.yaml`).
    fn name(&self) -> String;

    /// Loads the inventory now.
    fn load(
        &self,
    ) -> Pin<Box<dyn Future<Output = Result<LoadedInventory, ServiceError>> + Send + '_>>;
}

/// One reconcile: when, why, of what, and what it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReconcileRecord {
    /// When it finished.
    pub at: DateTime<Utc>,
    /// Why it ran.
    pub trigger: Trigger,
    /// The source's name.
    pub source: String,
    /// The fingerprint of the inventory reconciled.
    pub fingerprint: String,
    /// Its candidates.
    pub candidates: usize,
    /// Its load warnings.
    pub warnings: Vec<String>,
    /// Whether the calendar was reconciled (`false`: reconciling is switched off and the
    /// inventory only serves plans).
    pub reconciled: bool,
    /// What changed in the calendar.
    pub diff: InventoryDiff,
}

/// A reload that was refused or failed: nothing changed.
#[derive(Debug, Clone)]
pub struct FailedReload {
    /// When.
    pub at: DateTime<Utc>,
    /// Why it ran.
    pub trigger: Trigger,
    /// Why it failed.
    pub error: ServiceError,
}

/// The inventory served, its last reconcile, and what would change if it ran again now.
#[derive(Debug, Clone)]
pub struct InventoryStatus {
    /// The source's name.
    pub source: String,
    /// The reconcile of the inventory served now (`None` before the first).
    pub last: Option<ReconcileRecord>,
    /// The last reload that failed after it, if any (the inventory served is older).
    pub failed: Option<FailedReload>,
    /// What a reconcile of the inventory served would change now (another daemon's
    /// inventory, a pool changed by hand); `Err` when the calendar could not be read.
    pub drift: Result<InventoryDiff, ServiceError>,
}

/// The inventory a daemon serves and reconciles (see the module docs). Share it behind an
/// `Arc`; one reload runs at a time.
pub struct InventoryReconciler {
    reservations: Arc<ReservationService>,
    shared: SharedInventory,
    source: Arc<dyn InventorySource>,
    reconcile: bool,
    /// The pools of the inventory served, for the drift.
    pools: Mutex<Option<InventoryPools>>,
    last: Mutex<Option<ReconcileRecord>>,
    failed: Mutex<Option<FailedReload>>,
    running: tokio::sync::Mutex<()>,
}

impl InventoryReconciler {
    /// Loads the source's inventory, reconciles the calendar with it (when `reconcile`; off,
    /// the inventory only serves plans) and serves it: a daemon's start. A source that fails
    /// to load fails the start.
    pub async fn start(
        reservations: Arc<ReservationService>,
        source: Arc<dyn InventorySource>,
        reconcile: bool,
    ) -> Result<Arc<InventoryReconciler>, ServiceError> {
        let loaded = source.load().await?;
        let me = InventoryReconciler {
            reservations,
            shared: SharedInventory::new(Arc::clone(&loaded.provider)),
            source,
            reconcile,
            pools: Mutex::new(None),
            last: Mutex::new(None),
            failed: Mutex::new(None),
            running: tokio::sync::Mutex::new(()),
        };
        me.apply(loaded, Trigger::Start).await?;
        Ok(Arc::new(me))
    }

    /// The provider plans resolve against (replaced on every successful reload).
    pub fn shared(&self) -> SharedInventory {
        self.shared.clone()
    }

    /// Loads the source again and reconciles and serves it. A load that fails (an invalid
    /// file: [`ServiceError::InvalidInventory`]) or a reconcile that fails changes nothing:
    /// the inventory served stays, and the failure is logged and kept for status.
    pub async fn reload(&self, trigger: Trigger) -> Result<ReconcileRecord, ServiceError> {
        let _one = self.running.lock().await;
        let result = match self.source.load().await {
            Ok(loaded) => self.apply(loaded, trigger).await,
            Err(e) => Err(e),
        };
        if let Err(e) = &result {
            let source = self.source.name();
            tracing::warn!(trigger = trigger.as_str(), source = %source, error = %e, "inventory reload refused; the inventory served is unchanged");
            if let ServiceError::InvalidInventory { diagnostics, .. } = e {
                for d in diagnostics {
                    tracing::warn!(source = %source, line = d.line, column = d.column, path = %d.path, "{}", d.message);
                }
            }
            if let Ok(mut f) = self.failed.lock() {
                *f = Some(FailedReload {
                    at: self.reservations.now(),
                    trigger,
                    error: e.clone(),
                });
            }
        }
        result
    }

    /// Reconciles the calendar with `loaded`, then serves it.
    async fn apply(
        &self,
        loaded: LoadedInventory,
        trigger: Trigger,
    ) -> Result<ReconcileRecord, ServiceError> {
        let source = self.source.name();
        for w in &loaded.warnings {
            tracing::warn!(source = %source, warning = %w, "inventory");
        }
        let diff = if self.reconcile {
            self.reservations.reconcile(&loaded.pools).await?
        } else {
            InventoryDiff {
                provider: loaded.pools.provider.clone(),
                ..InventoryDiff::default()
            }
        };
        // Pools first, then plans: a plan never picks a candidate without its pool.
        self.shared.replace(Arc::clone(&loaded.provider));
        if let Some(info) = loaded.catalog.clone() {
            self.reservations.set_static_provider(info);
        }
        let record = ReconcileRecord {
            at: self.reservations.now(),
            trigger,
            source,
            fingerprint: loaded.fingerprint,
            candidates: loaded.candidates,
            warnings: loaded.warnings,
            reconciled: self.reconcile,
            diff,
        };
        log(&record);
        if let Ok(mut p) = self.pools.lock() {
            *p = Some(loaded.pools);
        }
        if let Ok(mut l) = self.last.lock() {
            *l = Some(record.clone());
        }
        if let Ok(mut f) = self.failed.lock() {
            *f = None;
        }
        Ok(record)
    }

    /// The last reconcile, a failed reload since, and the drift now.
    pub async fn status(&self) -> InventoryStatus {
        let pools = self.pools.lock().ok().and_then(|p| p.clone());
        let drift = match pools {
            Some(p) if self.reconcile => self.reservations.reconcile_preview(&p).await,
            Some(p) => Ok(InventoryDiff {
                provider: p.provider,
                ..InventoryDiff::default()
            }),
            None => Ok(InventoryDiff::default()),
        };
        InventoryStatus {
            source: self.source.name(),
            last: self.last.lock().ok().and_then(|l| l.clone()),
            failed: self.failed.lock().ok().and_then(|f| f.clone()),
            drift,
        }
    }
}

/// A record's id as the API shows it: `r4`, `a2`, qualified by its partition.
pub fn record_id(partition: Option<&str>, r: RecordRef) -> String {
    match r {
        RecordRef::Reservation(id) => qualify(partition, id),
        RecordRef::Allocation(id) => qualify(partition, id),
    }
}

/// The record as structured events: one per pool added, dimension changed, pool removed and
/// commitment at risk, then the summary.
fn log(r: &ReconcileRecord) {
    let d = &r.diff;
    for p in &d.added {
        tracing::info!(pool = %p.pool, capacity = ?p.capacity.0, "inventory pool added");
    }
    for p in &d.changed {
        for (dim, c) in &p.dimensions {
            tracing::warn!(pool = %p.pool, dimension = %dim, before = c.before, after = c.after, "inventory pool capacity changed");
        }
    }
    for p in &d.removed {
        let reservations: Vec<String> = p
            .reservations
            .iter()
            .map(|id| qualify(p.partition.as_deref(), id))
            .collect();
        tracing::warn!(pool = %p.pool, capacity = ?p.capacity.0, reservations = ?reservations, "inventory pool retired: its candidate is gone");
    }
    let at_risk = d.at_risk();
    for (pool, partition, rec) in &at_risk {
        tracing::warn!(pool = %pool, record = %record_id(*partition, *rec), "commitment at risk after the inventory change");
    }
    tracing::info!(
        trigger = r.trigger.as_str(),
        source = %r.source,
        fingerprint = %r.fingerprint,
        candidates = r.candidates,
        reconciled = r.reconciled,
        added = d.added.len(),
        changed = d.changed.len(),
        removed = d.removed.len(),
        unchanged = d.unchanged,
        at_risk = at_risk.len(),
        "inventory reconciled"
    );
}

#[cfg(test)]
mod tests;
