//! Capacity changes and the at-risk flags they raise or clear.

use super::{Calendar, CapacityStep, MAX_POOL_TOTAL, MAX_QUANTITY, Pool, tick, time};
use crate::error::CalendarError;
use crate::model::{Applied, CapacityChange, Event, RecordRef};
use crate::profile::{CAP, OPEN};
use crate::types::{Dimension, ReservationId};

impl Calendar {
    pub(super) fn change_capacity(
        &mut self,
        c: CapacityChange,
        increase: bool,
        now: i64,
        ev: &mut Vec<Event>,
    ) -> Result<Applied, CalendarError> {
        let start = tick(c.start);
        let end = c.end.map_or(OPEN, tick);
        if end <= start {
            return Err(CalendarError::EmptyWindow {
                start: time(start),
                end: time(end),
            });
        }
        for (d, &v) in c.amounts.iter() {
            if v > MAX_QUANTITY {
                return Err(CalendarError::QuantityTooLarge {
                    dimension: d.clone(),
                    value: v,
                    max: MAX_QUANTITY,
                });
            }
        }
        let pool = if increase {
            self.pool_ix.get(&c.pool).copied()
        } else {
            Some(
                *self
                    .pool_ix
                    .get(&c.pool)
                    .ok_or(CalendarError::UnknownPool {
                        zone: c.pool.zone.clone(),
                        provider: c.pool.provider.clone(),
                    })?,
            )
        };
        // Validate everything before the first change.
        for (d, &v) in c.amounts.iter() {
            if v == 0 {
                continue;
            }
            let di = self.dim_ix.get(d).copied();
            let prof = pool.zip(di).and_then(|(p, di)| self.profile(p, di));
            if increase {
                let so_far = pool
                    .zip(di)
                    .and_then(|(p, di)| self.pools[p as usize].increases.get(&di).copied())
                    .unwrap_or(0);
                if so_far + v > MAX_POOL_TOTAL {
                    return Err(CalendarError::QuantityTooLarge {
                        dimension: d.clone(),
                        value: so_far + v,
                        max: MAX_POOL_TOTAL,
                    });
                }
            } else {
                let steps = prof
                    .map(|p| p.steps(start, end))
                    .unwrap_or_else(|| vec![(start, [0; 4])]);
                if let Some((t, l)) = steps.iter().find(|(_, l)| l[CAP] < v as i64) {
                    return Err(CalendarError::CapacityUnderflow {
                        pool: c.pool.clone(),
                        dimension: d.clone(),
                        at: time(*t),
                        capacity: l[CAP],
                        decrease: v,
                    });
                }
            }
        }
        if self.dims.len()
            + c.amounts
                .0
                .keys()
                .filter(|d| !self.dim_ix.contains_key(*d))
                .count()
            > usize::from(u16::MAX)
        {
            return Err(CalendarError::TooManyDimensions);
        }
        let pool = match pool {
            Some(p) => p,
            None => {
                let i = self.pools.len() as u32;
                self.pools.push(Pool::new(c.pool.clone()));
                self.pool_ix.insert(c.pool.clone(), i);
                i
            }
        };
        if increase {
            // Capacity added by hand makes a retired pool sell again.
            self.pools[pool as usize].retired = None;
        }
        for (d, &v) in c.amounts.iter() {
            if v == 0 {
                continue;
            }
            let di = self.intern(d)?;
            let sign = if increase { 1 } else { -1 };
            let p = &mut self.pools[pool as usize];
            p.profiles
                .entry(di)
                .or_default()
                .add(start, end, [sign * v as i64, 0, 0, 0]);
            p.history.push(CapacityStep {
                dim: di,
                start,
                end,
                change: sign * v as i64,
            });
            if increase {
                *p.increases.entry(di).or_insert(0) += v;
            }
        }
        let at_risk = self.reflag(pool, start, end, now, ev);
        Ok(Applied::CapacityChanged {
            pool: c.pool,
            at_risk,
        })
    }

    /// Recomputes the at-risk flag of live records in `pool` overlapping `[start, end)`.
    pub(super) fn reflag(
        &mut self,
        pool: u32,
        start: i64,
        end: i64,
        now: i64,
        ev: &mut Vec<Event>,
    ) -> Vec<RecordRef> {
        let upper = (end, RecordRef::Reservation(ReservationId(0)));
        let recs: Vec<RecordRef> = self.pools[pool as usize]
            .live
            .range(..upper)
            .map(|(_, r)| *r)
            .collect();
        let mut flagged = Vec::new();
        for r in recs {
            let Some((_, s, e, c)) = self.record_contrib(r) else {
                continue;
            };
            if e <= start {
                continue;
            }
            let short: Vec<u16> = c
                .iter()
                .filter(|(d, _)| {
                    self.profile(pool, *d)
                        .is_some_and(|p| p.min_avail(s, e) < 0)
                })
                .map(|(d, _)| *d)
                .collect();
            let risk = !short.is_empty();
            let was = match r {
                RecordRef::Reservation(id) => self.reservations.get_mut(&id).map(|x| {
                    let w = x.at_risk;
                    x.at_risk = risk;
                    w
                }),
                RecordRef::Allocation(id) => self.allocations.get_mut(&id).map(|x| {
                    let w = x.at_risk;
                    x.at_risk = risk;
                    w
                }),
            };
            if risk {
                flagged.push(r);
                if was == Some(false) {
                    ev.push(Event::CommitmentAtRisk {
                        at: time(now),
                        record: r,
                        pool: self.pools[pool as usize].key.clone(),
                        dimensions: {
                            let mut v: Vec<Dimension> = short
                                .iter()
                                .map(|d| self.dims[*d as usize].clone())
                                .collect();
                            v.sort();
                            v
                        },
                    });
                }
            }
        }
        flagged.sort();
        flagged
    }
}
