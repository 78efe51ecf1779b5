//! Capacity declared by a pool's source (an inventory), and retired pools.
//!
//! A declaration moves the pool's capacity by the difference to the previous declaration
//! (or, for a pool never declared, to its capacity for good), from `now` on. Increases are
//! added for good; decreases are cut at zero wherever a windowed change left less, so a
//! maintenance window made by hand still ends as planned and no level goes negative.

use std::collections::{BTreeMap, BTreeSet};

use super::{Calendar, CapacityStep, MAX_POOL_TOTAL, MAX_QUANTITY, Pool, Qty, time};
use crate::error::CalendarError;
use crate::model::{Applied, Declaration, DeclaredPool, Event};
use crate::profile::{CAP, OPEN};
use crate::types::{Amounts, Dimension, PoolKey, ProviderId};

impl Calendar {
    pub(super) fn declare_at(
        &mut self,
        d: Declaration,
        now: i64,
        ev: &mut Vec<Event>,
    ) -> Result<Applied, CalendarError> {
        for (dim, &v) in d.amounts.iter() {
            if v > MAX_QUANTITY {
                return Err(CalendarError::QuantityTooLarge {
                    dimension: dim.clone(),
                    value: v,
                    max: MAX_QUANTITY,
                });
            }
        }
        let existing = self.pool_ix.get(&d.pool).copied();
        let before = existing.map(|p| self.baseline(p)).unwrap_or_default();
        let after: BTreeMap<Dimension, u64> = d
            .amounts
            .iter()
            .filter(|(_, v)| **v > 0)
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        // Validate everything before the first change.
        for (dim, &new) in &after {
            let old = before.get(dim).copied().unwrap_or(0);
            if new <= old {
                continue;
            }
            let so_far = existing
                .zip(self.dim_ix.get(dim))
                .and_then(|(p, di)| self.pools[p as usize].increases.get(di).copied())
                .unwrap_or(0);
            if so_far + (new - old) > MAX_POOL_TOTAL {
                return Err(CalendarError::QuantityTooLarge {
                    dimension: dim.clone(),
                    value: so_far + (new - old),
                    max: MAX_POOL_TOTAL,
                });
            }
        }
        let fresh = after
            .keys()
            .filter(|k| !self.dim_ix.contains_key(*k))
            .count();
        if self.dims.len() + fresh > usize::from(u16::MAX) {
            return Err(CalendarError::TooManyDimensions);
        }
        let p = match existing {
            Some(p) => p,
            None => {
                let i = self.pools.len() as u32;
                self.pools.push(Pool::new(d.pool.clone()));
                self.pool_ix.insert(d.pool.clone(), i);
                i
            }
        };
        let dims: BTreeSet<&Dimension> = before.keys().chain(after.keys()).collect();
        let mut changed = false;
        for dim in dims {
            let old = before.get(dim).copied().unwrap_or(0);
            let new = after.get(dim).copied().unwrap_or(0);
            if old == new {
                continue;
            }
            changed = true;
            let di = self.intern(dim)?;
            if new > old {
                let up = (new - old) as i64;
                let pool = &mut self.pools[p as usize];
                pool.profiles
                    .entry(di)
                    .or_default()
                    .add(now, OPEN, [up, 0, 0, 0]);
                pool.history.push(CapacityStep {
                    dim: di,
                    start: now,
                    end: OPEN,
                    change: up,
                });
                *pool.increases.entry(di).or_insert(0) += new - old;
            } else {
                self.lower(p, di, now, (old - new) as i64);
            }
        }
        let mut declared: Qty = after
            .iter()
            .filter_map(|(k, v)| self.dim_ix.get(k).map(|di| (*di, *v as i64)))
            .collect();
        declared.sort_unstable();
        let pool = &mut self.pools[p as usize];
        pool.declared = Some(declared);
        pool.retired = None;
        let at_risk = if changed {
            self.reflag(p, now, OPEN, now, ev)
        } else {
            Vec::new()
        };
        Ok(Applied::CapacityDeclared {
            pool: d.pool,
            before: Amounts(before),
            after: Amounts(after),
            at_risk,
        })
    }

    pub(super) fn retire_at(
        &mut self,
        key: PoolKey,
        now: i64,
        ev: &mut Vec<Event>,
    ) -> Result<Applied, CalendarError> {
        let p = *self
            .pool_ix
            .get(&key)
            .ok_or_else(|| CalendarError::UnknownPool {
                zone: key.zone.clone(),
                provider: key.provider.clone(),
            })?;
        if self.pools[p as usize].retired.is_some() {
            return Ok(Applied::PoolRetired {
                pool: key,
                before: Amounts::new(),
                at_risk: Vec::new(),
            });
        }
        let before = self.baseline(p);
        let dims: Vec<u16> = self.pools[p as usize].profiles.keys().copied().collect();
        for di in dims {
            self.lower(p, di, now, i64::MAX);
        }
        let pool = &mut self.pools[p as usize];
        pool.declared = None;
        pool.retired = Some(now);
        let at_risk = self.reflag(p, now, OPEN, now, ev);
        Ok(Applied::PoolRetired {
            pool: key,
            before: Amounts(before),
            at_risk,
        })
    }

    /// What the pool's source last declared, else its capacity for good; empty once retired.
    fn baseline(&self, p: u32) -> BTreeMap<Dimension, u64> {
        let pool = &self.pools[p as usize];
        if pool.retired.is_some() {
            return BTreeMap::new();
        }
        let dim = |d: u16| self.dims[d as usize].clone();
        match &pool.declared {
            Some(q) => q.iter().map(|&(d, v)| (dim(d), v.max(0) as u64)).collect(),
            None => pool
                .profiles
                .iter()
                .map(|(&d, prof)| (dim(d), prof.levels_at(OPEN - 1)[CAP]))
                .filter(|(_, v)| *v > 0)
                .map(|(d, v)| (d, v as u64))
                .collect(),
        }
    }

    /// Lowers dimension `di` of pool `p` by `amount` from `from` for good, never below zero:
    /// where less is left (a windowed decrease), only what is left goes.
    fn lower(&mut self, p: u32, di: u16, from: i64, amount: i64) {
        let Some(prof) = self.pools[p as usize].profiles.get(&di) else {
            return;
        };
        let steps = prof.steps(from, OPEN);
        let mut cuts: Vec<(i64, i64, i64)> = Vec::new();
        for (i, (t, l)) in steps.iter().enumerate() {
            let end = steps.get(i + 1).map_or(OPEN, |s| s.0);
            let cut = amount.min(l[CAP].max(0));
            if cut == 0 {
                continue;
            }
            match cuts.last_mut() {
                Some(last) if last.1 == *t && last.2 == cut => last.1 = end,
                _ => cuts.push((*t, end, cut)),
            }
        }
        let pool = &mut self.pools[p as usize];
        for (start, end, cut) in cuts {
            if let Some(prof) = pool.profiles.get_mut(&di) {
                prof.add(start, end, [-cut, 0, 0, 0]);
            }
            pool.history.push(CapacityStep {
                dim: di,
                start,
                end,
                change: -cut,
            });
        }
    }

    /// Whether a live record of pool `p` overlaps `[start, end)`.
    pub(super) fn holds_live(&self, p: u32, start: i64, end: i64) -> bool {
        let upper = (
            end,
            crate::model::RecordRef::Reservation(crate::ReservationId(0)),
        );
        self.pools[p as usize].live.range(..upper).any(|(_, r)| {
            self.record_contrib(*r)
                .is_some_and(|(_, _, e, _)| e > start)
        })
    }

    /// Every pool (of `provider`, when given) as its source last declared it, in pool order:
    /// what an inventory reconcile compares the inventory with.
    pub fn declared_pools(&self, provider: Option<&ProviderId>) -> Vec<DeclaredPool> {
        self.pool_ix
            .iter()
            .filter(|(k, _)| provider.is_none_or(|pr| &k.provider == pr))
            .map(|(k, &p)| {
                let pool = &self.pools[p as usize];
                DeclaredPool {
                    pool: k.clone(),
                    capacity: Amounts(self.baseline(p)),
                    declared: pool.declared.is_some(),
                    retired: pool.retired.map(time),
                }
            })
            .collect()
    }
}
