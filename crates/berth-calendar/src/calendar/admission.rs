//! Admission: validating a reservation request against policy and fitting it into a pool.

use super::{Calendar, Qty, ceil_div, tick, time};
use crate::error::CalendarError;
use crate::model::{RecordRef, ReservationRequest};
use crate::policy::PolicyRule;
use crate::profile::{OPEN, Profile};
use crate::types::{Dimension, PoolKey, Priority, ProviderId, ReservationId, ZoneId};

pub(super) const DAY: i64 = 86_400_000_000;
pub(super) const HOUR: i64 = 3_600_000_000;
pub(super) const MINUTE: i64 = 60_000_000;
pub(super) const SECOND: i64 = 1_000_000;

#[derive(Clone, Debug)]
pub(super) struct Spec {
    pub(super) start: i64,
    pub(super) end: i64,
    pub(super) expiry: Option<i64>,
    pub(super) soon: Option<i64>,
    pub(super) qty: Qty,
}

impl Calendar {
    pub(super) fn candidate_pools(
        &self,
        zone: &ZoneId,
        provider: Option<&ProviderId>,
    ) -> Result<Vec<u32>, CalendarError> {
        if let Some(p) = provider {
            let key = PoolKey {
                zone: zone.clone(),
                provider: p.clone(),
            };
            return self
                .pool_ix
                .get(&key)
                .map(|i| vec![*i])
                .ok_or(CalendarError::UnknownPool {
                    zone: zone.clone(),
                    provider: p.clone(),
                });
        }
        let from = PoolKey {
            zone: zone.clone(),
            provider: ProviderId(String::new()),
        };
        let v: Vec<u32> = self
            .pool_ix
            .range(from..)
            .take_while(|(k, _)| &k.zone == zone)
            .map(|(_, i)| *i)
            .collect();
        if v.is_empty() {
            return Err(CalendarError::UnknownZone { zone: zone.clone() });
        }
        Ok(v)
    }

    #[inline]
    pub(super) fn profile(&self, pool: u32, d: u16) -> Option<&Profile> {
        self.pools[pool as usize].profiles.get(&d)
    }

    pub(super) fn first_shortage(
        &self,
        pool: u32,
        start: i64,
        end: i64,
        need: &Qty,
    ) -> Option<(u16, i64, i64)> {
        for &(d, q) in need {
            match self.profile(pool, d) {
                None => return Some((d, start, 0)),
                Some(p) => {
                    if let Some(t) = p.first_below(start, end, q) {
                        return Some((d, t, p.avail_at(t)));
                    }
                }
            }
        }
        None
    }

    #[inline]
    pub(super) fn fits(&self, pool: u32, start: i64, end: i64, need: &Qty) -> bool {
        self.first_shortage(pool, start, end, need).is_none()
    }

    pub(super) fn spec(
        &self,
        req: &ReservationRequest,
        now: i64,
        locked_start: Option<i64>,
    ) -> Result<(Spec, Vec<(Dimension, u64)>), CalendarError> {
        let start = match locked_start {
            Some(s) => {
                if let Some(t) = req.start
                    && tick(t) != s
                {
                    return Err(CalendarError::StartLocked {
                        id: ReservationId(0),
                    });
                }
                s
            }
            None => {
                let s = req.start.map_or(now, tick);
                if s < now {
                    return Err(CalendarError::StartInPast {
                        start: time(s),
                        now: time(now),
                    });
                }
                s
            }
        };
        let end = req.end.map_or(OPEN, tick);
        if end <= start {
            return Err(CalendarError::EmptyWindow {
                start: time(start),
                end: time(end),
            });
        }
        if end <= now {
            return Err(CalendarError::EndInPast {
                end: time(end),
                now: time(now),
            });
        }
        let p = &self.policy;
        if locked_start.is_none()
            && let Some(days) = p.max_future_start_days
            && start.saturating_sub(now) > i64::from(days) * DAY
        {
            return Err(CalendarError::Policy {
                rule: PolicyRule::MaxFutureStartRange,
                limit: u64::from(days),
                requested: Some(ceil_div(start.saturating_sub(now), DAY)),
            });
        }
        if let Some(days) = p.max_future_end_days
            && (end == OPEN || end.saturating_sub(now) > i64::from(days) * DAY)
        {
            return Err(CalendarError::Policy {
                rule: PolicyRule::MaxFutureEndRange,
                limit: u64::from(days),
                requested: (end != OPEN).then(|| ceil_div(end.saturating_sub(now), DAY)),
            });
        }
        if let Some(hours) = p.max_duration_hours
            && (end == OPEN || end.saturating_sub(start) > i64::from(hours) * HOUR)
        {
            return Err(CalendarError::Policy {
                rule: PolicyRule::MaxDuration,
                limit: u64::from(hours),
                requested: (end != OPEN).then(|| ceil_div(end.saturating_sub(start), HOUR)),
            });
        }
        let expiry = match req.expiry {
            Some(x) => {
                let x = tick(x);
                if x < start || x > end {
                    return Err(CalendarError::ExpiryOutsideWindow { expiry: time(x) });
                }
                Some(x)
            }
            None => p
                .default_expiry_minutes
                .map(|m| start.saturating_add(i64::from(m) * MINUTE).min(end)),
        };
        let lead = i64::try_from(p.expiry_notice_seconds).unwrap_or(i64::MAX / 2);
        let soon = expiry
            .filter(|_| lead > 0)
            .map(|x| x.saturating_sub(lead.saturating_mul(SECOND)).max(start));
        let (qty, unknown) = self.resolve(&req.amounts)?;
        Ok((
            Spec {
                start,
                end,
                expiry,
                soon,
                qty,
            },
            unknown,
        ))
    }

    pub(super) fn admit(
        &mut self,
        pools: &[u32],
        spec: &Spec,
        unknown: &[(Dimension, u64)],
        prio: Option<Priority>,
        now: i64,
        exclude: Option<ReservationId>,
    ) -> Result<(u32, Vec<RecordRef>), CalendarError> {
        if unknown.is_empty() {
            for &p in pools {
                if self.fits(p, spec.start, spec.end, &spec.qty) {
                    return Ok((p, Vec::new()));
                }
            }
            let pre = self.policy.preemption;
            if let Some(prio) = prio
                && (pre.cancel_pending_reservations || pre.terminate_unreserved_allocations)
            {
                for &p in pools {
                    if let Some(v) = self.find_victims(p, spec, prio, now, exclude) {
                        return Ok((p, v));
                    }
                }
            }
        }
        Err(self.conflict(pools, spec.start, spec.end, &spec.qty, unknown))
    }
}
