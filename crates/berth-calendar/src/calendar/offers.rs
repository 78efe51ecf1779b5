//! Offers and conflicts: what a pool could hold instead, and the earliest start that fits.

use super::{Calendar, Qty, end_time, time};
use crate::error::CalendarError;
use crate::model::{Conflict, Offer, Shortage};
use crate::profile::OPEN;
use crate::types::{Amounts, Dimension, Window};

impl Calendar {
    /// Earliest start `>= not_before` where `need` fits for `dur` (`None`: open-ended),
    /// jumping past each violation to the next breakpoint where it is lifted.
    pub(super) fn earliest(
        &self,
        pool: u32,
        not_before: i64,
        dur: Option<i64>,
        need: &Qty,
    ) -> Option<i64> {
        let mut s = not_before;
        loop {
            let e = match dur {
                Some(d) => s.checked_add(d).filter(|e| *e < OPEN)?,
                None => OPEN,
            };
            let mut jump: Option<i64> = None;
            for &(d, q) in need {
                let p = self.profile(pool, d)?;
                if let Some(v) = p.first_below(s, e, q) {
                    let next = p.first_at_least(v, q)?;
                    jump = Some(jump.map_or(next, |j| j.max(next)));
                }
            }
            match jump {
                None => return Some(s),
                Some(j) => s = j,
            }
        }
    }

    pub(super) fn offer_for(
        &self,
        pool: u32,
        start: i64,
        end: i64,
        need: &Qty,
        unknown: &[(Dimension, u64)],
    ) -> Offer {
        let mut max = Amounts::new();
        for &(d, _) in need {
            let m = self
                .profile(pool, d)
                .map_or(0, |p| p.min_avail(start, end).max(0));
            max.set(self.dims[d as usize].clone(), m as u64);
        }
        for (d, _) in unknown {
            max.set(d.clone(), 0);
        }
        let dur = (end != OPEN).then_some(end.saturating_sub(start));
        let earliest = if unknown.is_empty() {
            self.earliest(pool, start, dur, need).map(time)
        } else {
            None
        };
        Offer {
            pool: self.pools[pool as usize].key.clone(),
            max_reservable: max,
            earliest_start: earliest,
        }
    }

    pub(super) fn conflict(
        &self,
        pools: &[u32],
        start: i64,
        end: i64,
        need: &Qty,
        unknown: &[(Dimension, u64)],
    ) -> CalendarError {
        let mut shortages = Vec::new();
        let mut offers = Vec::new();
        for &p in pools {
            let key = &self.pools[p as usize].key;
            for &(d, q) in need {
                let found = match self.profile(p, d) {
                    None => Some((start, 0)),
                    Some(pr) => pr.first_below(start, end, q).map(|t| (t, pr.avail_at(t))),
                };
                if let Some((t, a)) = found {
                    shortages.push(Shortage {
                        pool: key.clone(),
                        dimension: self.dims[d as usize].clone(),
                        at: time(t),
                        needed: q as u64,
                        available: a,
                    });
                }
            }
            for (d, q) in unknown {
                shortages.push(Shortage {
                    pool: key.clone(),
                    dimension: d.clone(),
                    at: time(start),
                    needed: *q,
                    available: 0,
                });
            }
            let first = shortages.len()
                - shortages
                    .iter()
                    .rev()
                    .take_while(|s| &s.pool == key)
                    .count();
            shortages[first..].sort_by(|a, b| a.dimension.cmp(&b.dimension));
            offers.push(self.offer_for(p, start, end, need, unknown));
        }
        CalendarError::Conflict(Box::new(Conflict {
            window: Window {
                start: time(start),
                end: end_time(end),
            },
            shortages,
            offers,
        }))
    }
}
