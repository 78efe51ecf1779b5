//! The inventory as the source of truth: the pools an inventory source gives the calendar
//! ([`InventoryPools`]), the reconcile that brings the calendar's pools of that source in line
//! with them ([`reconcile_calendar`], and [`ReservationService::reconcile`] over the store),
//! its typed answer ([`InventoryDiff`]), and the provider plans resolve against, replaced
//! whole when the inventory changes ([`SharedInventory`]).
//!
//! [`ReservationService::reconcile`]: crate::ReservationService::reconcile

mod file;
mod reconciler;

pub use file::{FILE_PROVIDER, FileSource, catalog};

pub use reconciler::{
    FailedReload, InventoryReconciler, InventorySource, InventoryStatus, LoadedInventory,
    ReconcileRecord, Trigger, record_id,
};

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};

use berth_calendar::{
    Amounts, Applied, Calendar, CalendarError, Command, Declaration, Dimension, Event, PoolKey,
    ProviderId, RecordRef, ReservationId, ReservationQuery, ReservationState, ZoneId,
};
use berth_inventory::{Candidate, InventoryProvider};
use serde::{Deserialize, Serialize};

/// The pools one inventory source gives the calendar: pool `<zone>/<provider>` per entry,
/// with its capacity. Where the entries came from (a file, Placement) does not matter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InventoryPools {
    /// The provider of every pool (`inventory` for berthd's inventory file).
    pub provider: String,
    /// Capacity by zone (berthd: one zone per candidate id). A zone with no positive
    /// capacity gets no pool; if it has one, its capacity is declared zero.
    pub pools: BTreeMap<String, Amounts>,
}

impl InventoryPools {
    /// No pools yet, of `provider`.
    pub fn new(provider: impl Into<String>) -> InventoryPools {
        InventoryPools {
            provider: provider.into(),
            pools: BTreeMap::new(),
        }
    }

    /// Each candidate's positive `capacity` as pool `<candidate-id>/<provider>`.
    pub fn from_candidates<'a>(
        provider: impl Into<String>,
        candidates: impl IntoIterator<Item = &'a Candidate>,
    ) -> InventoryPools {
        let mut out = InventoryPools::new(provider);
        for c in candidates {
            let amounts: Amounts = c
                .capacity
                .iter()
                .filter_map(|(d, q)| {
                    u64::try_from(*q)
                        .ok()
                        .filter(|q| *q > 0)
                        .map(|q| (Dimension::new(d.as_str()), q))
                })
                .collect();
            out.pools.insert(c.candidate_id.to_string(), amounts);
        }
        out
    }

    fn wanted(&self, zone: &ZoneId) -> Option<BTreeMap<Dimension, u64>> {
        self.pools.get(&zone.0).map(|a| {
            a.iter()
                .filter(|(_, v)| **v > 0)
                .map(|(d, v)| (d.clone(), *v))
                .collect()
        })
    }
}

/// One dimension's capacity before and after a reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DimensionChange {
    /// Declared before.
    pub before: u64,
    /// Declared now.
    pub after: u64,
}

/// A pool the reconcile created, or a retired one selling again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolAdded {
    /// The pool.
    pub pool: PoolKey,
    /// Its partition, when the calendar is partitioned.
    pub partition: Option<String>,
    /// Its capacity.
    pub capacity: Amounts,
    /// Records still flagged at risk in it (a retired pool's), as `decrease-capacity` lists
    /// them.
    pub at_risk: Vec<RecordRef>,
}

/// A pool whose capacity the reconcile changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolChanged {
    /// The pool.
    pub pool: PoolKey,
    /// Its partition, when the calendar is partitioned.
    pub partition: Option<String>,
    /// Every dimension that changed, before → after (0: absent).
    pub dimensions: BTreeMap<Dimension, DimensionChange>,
    /// Records flagged at risk in it from now on, as `decrease-capacity` lists them.
    pub at_risk: Vec<RecordRef>,
}

/// A pool whose source entry is gone: retired (no capacity from now on, history kept).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolRemoved {
    /// The pool.
    pub pool: PoolKey,
    /// Its partition, when the calendar is partitioned.
    pub partition: Option<String>,
    /// The capacity it had.
    pub capacity: Amounts,
    /// Its live reservations (initialized, active or expired with live instances), by id.
    pub reservations: Vec<ReservationId>,
    /// Records flagged at risk in it from now on, as `decrease-capacity` lists them.
    pub at_risk: Vec<RecordRef>,
}

/// What a reconcile changed (or, as a preview, would change), pools in pool order. Empty when
/// the calendar already matched: reconciling the same inventory twice, the second is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InventoryDiff {
    /// The provider reconciled.
    pub provider: String,
    /// Pools created (or selling again).
    pub added: Vec<PoolAdded>,
    /// Pools whose capacity changed.
    pub changed: Vec<PoolChanged>,
    /// Pools retired because their entry is gone.
    pub removed: Vec<PoolRemoved>,
    /// Pools that already matched.
    pub unchanged: usize,
}

impl InventoryDiff {
    /// True when nothing was (or would be) added, changed or removed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }

    /// Every record at risk after the reconcile, with its pool and partition, in pool order.
    pub fn at_risk(&self) -> Vec<(&PoolKey, Option<&str>, RecordRef)> {
        let added = self
            .added
            .iter()
            .map(|p| (&p.pool, &p.partition, &p.at_risk));
        let changed = self
            .changed
            .iter()
            .map(|p| (&p.pool, &p.partition, &p.at_risk));
        let removed = self
            .removed
            .iter()
            .map(|p| (&p.pool, &p.partition, &p.at_risk));
        let mut out: Vec<(&PoolKey, Option<&str>, RecordRef)> = added
            .chain(changed)
            .chain(removed)
            .flat_map(|(pool, partition, recs)| {
                recs.iter().map(move |r| (pool, partition.as_deref(), *r))
            })
            .collect();
        out.sort_by(|a, b| (a.0, a.2).cmp(&(b.0, b.2)));
        out
    }

    /// Folds in the diff of another partition.
    pub(crate) fn merge(&mut self, other: InventoryDiff) {
        self.added.extend(other.added);
        self.changed.extend(other.changed);
        self.removed.extend(other.removed);
        self.unchanged += other.unchanged;
        self.added.sort_by(|a, b| a.pool.cmp(&b.pool));
        self.changed.sort_by(|a, b| a.pool.cmp(&b.pool));
        self.removed.sort_by(|a, b| a.pool.cmp(&b.pool));
    }
}

/// What [`reconcile_calendar`] did to one calendar.
#[derive(Debug, Clone, PartialEq)]
pub struct Reconciled {
    /// The commands applied, in order: log these to make the change durable.
    pub commands: Vec<Command>,
    /// The events they raised (commitments put at risk, threshold crossings).
    pub events: Vec<Event>,
    /// What changed.
    pub diff: InventoryDiff,
}

/// Brings the pools of `pools.provider` in `cal` in line with `pools` at `now`, as calendar
/// commands applied to `cal`: a zone without a pool (or with a retired one) gets
/// [`Command::DeclareCapacity`] (added), a pool whose declared capacity differs gets one too
/// (changed; a pool made before declarations existed is adopted the same way, and counted
/// unchanged when its capacity already matched), and a pool whose zone is gone gets
/// [`Command::RetirePool`] (removed, with its live reservations). `in_scope` says which of
/// `pools` belong in this calendar (a partition's); pools of other providers are never
/// touched. On error `cal` may hold part of the change: apply to a copy, or rebuild.
pub fn reconcile_calendar(
    cal: &mut Calendar,
    pools: &InventoryPools,
    in_scope: &dyn Fn(&PoolKey) -> bool,
    partition: Option<&str>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Reconciled, CalendarError> {
    let provider = ProviderId::new(pools.provider.clone());
    let current: BTreeMap<ZoneId, berth_calendar::DeclaredPool> = cal
        .declared_pools(Some(&provider))
        .into_iter()
        .map(|d| (d.pool.zone.clone(), d))
        .collect();
    let key = |zone: &ZoneId| PoolKey {
        zone: zone.clone(),
        provider: provider.clone(),
    };
    let mut zones: BTreeSet<ZoneId> = current.keys().cloned().collect();
    zones.extend(
        pools
            .pools
            .keys()
            .map(|z| ZoneId::new(z.clone()))
            .filter(|z| in_scope(&key(z))),
    );
    let partition = partition.map(str::to_owned);
    let mut out = Reconciled {
        commands: Vec::new(),
        events: Vec::new(),
        diff: InventoryDiff {
            provider: pools.provider.clone(),
            ..InventoryDiff::default()
        },
    };
    for zone in zones {
        let pool = key(&zone);
        let want = pools.wanted(&zone).filter(|_| in_scope(&pool));
        let live = current.get(&zone).filter(|d| d.retired.is_none());
        let command = match (live, &want) {
            (None, None) => continue,
            (None, Some(w)) if w.is_empty() => continue,
            (Some(have), Some(w)) if have.declared && &have.capacity.0 == w => {
                out.diff.unchanged += 1;
                continue;
            }
            (_, Some(w)) => Command::DeclareCapacity(Declaration {
                pool: pool.clone(),
                amounts: Amounts(w.clone()),
            }),
            (Some(_), None) => Command::RetirePool { pool: pool.clone() },
        };
        let outcome = cal.apply(command.clone(), now)?;
        out.events.extend(outcome.events);
        out.commands.push(command);
        match outcome.applied {
            Applied::CapacityDeclared {
                before,
                after,
                at_risk,
                ..
            } => {
                if live.is_none() {
                    out.diff.added.push(PoolAdded {
                        pool,
                        partition: partition.clone(),
                        capacity: after,
                        at_risk,
                    });
                    continue;
                }
                let dims: BTreeSet<&Dimension> = before.0.keys().chain(after.0.keys()).collect();
                let dimensions: BTreeMap<Dimension, DimensionChange> = dims
                    .into_iter()
                    .map(|d| {
                        let change = DimensionChange {
                            before: before.0.get(d).copied().unwrap_or(0),
                            after: after.0.get(d).copied().unwrap_or(0),
                        };
                        (d.clone(), change)
                    })
                    .filter(|(_, c)| c.before != c.after)
                    .collect();
                if dimensions.is_empty() {
                    // Adopted: a pool from before declarations, already as declared.
                    out.diff.unchanged += 1;
                } else {
                    out.diff.changed.push(PoolChanged {
                        pool,
                        partition: partition.clone(),
                        dimensions,
                        at_risk,
                    });
                }
            }
            Applied::PoolRetired {
                before, at_risk, ..
            } => {
                let reservations = cal
                    .query_reservations(&ReservationQuery {
                        zone: Some(zone.clone()),
                        provider: Some(provider.clone()),
                        states: [
                            ReservationState::Initialized,
                            ReservationState::Active,
                            ReservationState::Expired,
                        ]
                        .into(),
                        ..ReservationQuery::default()
                    })
                    .into_iter()
                    .map(|r| r.id)
                    .collect();
                out.diff.removed.push(PoolRemoved {
                    pool,
                    partition: partition.clone(),
                    capacity: before,
                    reservations,
                    at_risk,
                });
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The inventory provider plans resolve against, replaced whole when the inventory is
/// reloaded: each plan takes [`SharedInventory::current`] once and resolves every demand
/// against that one inventory, so a plan never mixes two inventories. Cheap to clone (one
/// `Arc`).
#[derive(Clone)]
pub struct SharedInventory {
    current: Arc<RwLock<Arc<dyn InventoryProvider>>>,
}

impl SharedInventory {
    /// Serves `provider` until [`SharedInventory::replace`].
    pub fn new(provider: Arc<dyn InventoryProvider>) -> SharedInventory {
        SharedInventory {
            current: Arc::new(RwLock::new(provider)),
        }
    }

    /// The provider now.
    pub fn current(&self) -> Arc<dyn InventoryProvider> {
        match self.current.read() {
            Ok(g) => Arc::clone(&g),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Serves `provider` from now on (plans already solving keep the one they took).
    pub fn replace(&self, provider: Arc<dyn InventoryProvider>) {
        match self.current.write() {
            Ok(mut g) => *g = provider,
            Err(poisoned) => *poisoned.into_inner() = provider,
        }
    }
}

impl From<Arc<dyn InventoryProvider>> for SharedInventory {
    fn from(provider: Arc<dyn InventoryProvider>) -> SharedInventory {
        SharedInventory::new(provider)
    }
}

impl std::fmt::Debug for SharedInventory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedInventory")
    }
}

#[cfg(test)]
mod tests;
