//! The inventory reconcile over the store: worked out and committed under the locks of every
//! calendar it may touch, in one transaction, by the spanning protocol (so any daemon may run
//! it, and a race among daemons applies it once).

use std::collections::BTreeSet;
use std::sync::Arc;

use berth_calendar::{Amounts, Calendar, Command, Declaration, PoolKey};

use super::spanning::{self, Computed};
use super::{Part, ReservationService};
use crate::ServiceError;
use crate::inventory::{InventoryDiff, InventoryPools, reconcile_calendar};

impl ReservationService {
    /// Brings the calendar's pools of `pools.provider` in line with `pools`, from now on:
    /// pools are declared for new zones and changed capacities, and retired for zones that are
    /// gone (see [`crate::inventory::reconcile_calendar`]); pools of other providers are not
    /// touched. Every partition concerned changes in one transaction or none does. Idempotent
    /// and safe to run from several daemons at once: each attempt computes the change from
    /// the calendars at the head of their streams, a lost race recomputes, so the change lands
    /// once and the others find nothing left to do (an empty diff).
    pub async fn reconcile(&self, pools: &InventoryPools) -> Result<InventoryDiff, ServiceError> {
        let parts = self.reconcile_parts(pools, true).await?;
        let key = self.opts.partition_key;
        let names: Vec<String> = parts.iter().map(|(n, _)| n.clone()).collect();
        let compute = |i: usize, cal: &mut Calendar, now| {
            let name = &names[i];
            let in_scope = |p: &PoolKey| key.is_none_or(|k| &k.of_pool(p) == name);
            let partition = key.map(|_| name.as_str());
            let r = reconcile_calendar(cal, pools, &in_scope, partition, now)?;
            Ok(Computed {
                commands: r.commands,
                events: r.events,
                value: r.diff,
            })
        };
        let diffs =
            spanning::commit_with(self, &parts, None, compute, |_| Ok(serde_json::Value::Null))
                .await?
                .unwrap_or_default();
        Ok(merged(pools, diffs))
    }

    /// What [`ReservationService::reconcile`] would change now, changing nothing (each
    /// calendar concerned is reconciled on a copy).
    pub async fn reconcile_preview(
        &self,
        pools: &InventoryPools,
    ) -> Result<InventoryDiff, ServiceError> {
        let parts = self.reconcile_parts(pools, false).await?;
        let key = self.opts.partition_key;
        let mut diffs = Vec::new();
        let mut seen = BTreeSet::new();
        for (name, part) in &parts {
            seen.insert(name.clone());
            let in_scope = |p: &PoolKey| key.is_none_or(|k| &k.of_pool(p) == name);
            let partition = key.map(|_| name.as_str());
            let now = self.clock.now();
            let r = part
                .read(|cal| {
                    let mut copy = cal.clone();
                    let at = cal.clock().map_or(now, |c| c.max(now));
                    reconcile_calendar(&mut copy, pools, &in_scope, partition, at)
                })
                .await??;
            diffs.push(r.diff);
        }
        // Partitions nobody has written yet start from an empty calendar.
        if let Some(k) = key {
            let fresh: BTreeSet<String> = pools
                .pools
                .iter()
                .filter(|(_, a)| !a.is_zero())
                .map(|(z, _)| k.of_pool(&PoolKey::new(z.clone(), pools.provider.clone())))
                .filter(|n| !seen.contains(n))
                .collect();
            for name in fresh {
                let in_scope = |p: &PoolKey| k.of_pool(p) == name;
                let mut empty = Calendar::new(self.opts.policy.clone());
                let r = reconcile_calendar(
                    &mut empty,
                    pools,
                    &in_scope,
                    Some(&name),
                    self.clock.now(),
                )?;
                diffs.push(r.diff);
            }
        }
        Ok(merged(pools, diffs))
    }

    /// The calendars a reconcile of `pools` may touch, in name order: the one calendar, or
    /// every partition this daemon follows plus those of `pools`' zones (opened when `open`,
    /// else left out).
    async fn reconcile_parts(
        &self,
        pools: &InventoryPools,
        open: bool,
    ) -> Result<Vec<(String, Arc<Part>)>, ServiceError> {
        let Some(key) = self.opts.partition_key else {
            return Ok(vec![(String::new(), self.open_part(None).await?)]);
        };
        self.discover().await?;
        let mut names: BTreeSet<String> = self.partitions().into_iter().collect();
        if open {
            for (zone, amounts) in &pools.pools {
                if amounts.is_zero() {
                    continue;
                }
                let pool = PoolKey::new(zone.clone(), pools.provider.clone());
                let name = key.of_pool(&pool);
                if !names.contains(&name) {
                    let probe = Command::DeclareCapacity(Declaration {
                        pool,
                        amounts: Amounts::new(),
                    });
                    self.part_for(&name, &probe).await?;
                    names.insert(name);
                }
            }
        }
        Ok(names
            .into_iter()
            .filter_map(|n| self.part(&n).map(|p| (n, p)))
            .collect())
    }
}

fn merged(pools: &InventoryPools, diffs: Vec<InventoryDiff>) -> InventoryDiff {
    let mut out = InventoryDiff {
        provider: pools.provider.clone(),
        ..InventoryDiff::default()
    };
    for d in diffs {
        out.merge(d);
    }
    out
}

#[cfg(test)]
mod tests;
