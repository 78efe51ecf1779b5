//! Read-only queries: records, reservation filters, capacity and timelines, offers, windows.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Calendar, OPEN, Qty, ResRec, add_into, end_time, tick, time};
use crate::error::CalendarError;
use crate::model::{
    Allocation, CapacityLevels, CapacityQuery, CapacityReport, DeclaredPool, FoundWindow, Offer,
    PoolCapacity, Reservation, ReservationQuery, ReservationRequest, ReservationState, Scope,
    ThresholdSubscription, UtilizationStep, WindowQuery,
};
use crate::policy::Policy;
use crate::profile::{CAP, Levels, RES, UNRES, USED};
use crate::types::{
    AllocationId, Dimension, ElementId, PoolKey, ReservationId, SubscriptionId, Window,
};

/// Everything observable in a calendar; two calendars with equal states answer every query
/// alike. Used to check that replaying a log reproduces the state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalendarState {
    /// Latest `now` applied.
    pub clock: Option<DateTime<Utc>>,
    /// Policy.
    pub policy: Policy,
    /// Every reservation, by id.
    pub reservations: Vec<Reservation>,
    /// Every allocation, by id.
    pub allocations: Vec<Allocation>,
    /// Subscriptions with their last known "below" state.
    pub subscriptions: Vec<(SubscriptionId, ThresholdSubscription, bool)>,
    /// Full utilization timeline of every pool.
    pub capacity: CapacityReport,
    /// Every pool as its source declared it.
    pub declared: Vec<DeclaredPool>,
}

fn levels(l: &Levels) -> CapacityLevels {
    CapacityLevels {
        total: l[CAP],
        reserved: l[RES],
        usage: l[USED],
        available: l[CAP] - l[RES] - l[UNRES],
    }
}

impl Calendar {
    fn view_reservation(&self, id: ReservationId, r: &ResRec) -> Reservation {
        let mut remaining: Qty = Vec::new();
        if matches!(
            r.state,
            ReservationState::Initialized | ReservationState::Active
        ) {
            remaining = r.amounts.clone();
            for &(d, q) in &r.allocated {
                add_into(&mut remaining, d, -q);
            }
        }
        Reservation {
            id,
            pool: self.pools[r.pool as usize].key.clone(),
            start: time(r.start),
            end: end_time(r.end),
            expiry: r.expiry.map(time),
            amounts: self.amounts(&r.amounts),
            allocated: self.amounts(&r.allocated),
            remaining: self.amounts(&remaining),
            released: self.amounts(&r.released),
            priority: r.priority,
            tenant: r.tenant.clone(),
            attributes: r.attributes.clone(),
            elements: r.elements.clone(),
            state: r.state,
            cancel_reason: r.cancel_reason,
            at_risk: r.at_risk,
            allocations: r.allocations.clone(),
            created_on: time(r.created),
            modified_on: time(r.modified),
        }
    }

    /// One reservation.
    pub fn reservation(&self, id: ReservationId) -> Option<Reservation> {
        self.reservations
            .get(&id)
            .map(|r| self.view_reservation(id, r))
    }

    /// One allocation.
    pub fn allocation(&self, id: AllocationId) -> Option<Allocation> {
        let a = self.allocations.get(&id)?;
        Some(Allocation {
            id,
            pool: self.pools[a.pool as usize].key.clone(),
            reservation: a.reservation,
            amounts: self.amounts(&a.amounts),
            start: time(a.start),
            end: end_time(a.end),
            priority: a.priority,
            state: a.state,
            termination: a.termination,
            at_risk: a.at_risk,
        })
    }

    /// The request that would recreate reservation `id` as it is now; patch it and pass it to
    /// [`Calendar::update_reservation`].
    pub fn request_of(&self, id: ReservationId) -> Option<ReservationRequest> {
        let r = self.reservations.get(&id)?;
        let key = &self.pools[r.pool as usize].key;
        Some(ReservationRequest {
            zone: key.zone.clone(),
            provider: Some(key.provider.clone()),
            start: Some(time(r.start)),
            end: end_time(r.end),
            expiry: r.expiry.map(time),
            amounts: self.amounts(&r.amounts),
            priority: r.priority,
            tenant: r.tenant.clone(),
            attributes: r.attributes.clone(),
            elements: r.elements.clone(),
        })
    }

    /// `query-reservation`: matching reservations in id order.
    pub fn query_reservations(&self, q: &ReservationQuery) -> Vec<Reservation> {
        let window = q
            .window
            .map(|(w, s)| (tick(w.start), w.end.map_or(OPEN, tick), s));
        self.reservations
            .iter()
            .filter(|(id, r)| {
                let key = &self.pools[r.pool as usize].key;
                q.zone.as_ref().is_none_or(|z| &key.zone == z)
                    && q.provider.as_ref().is_none_or(|p| &key.provider == p)
                    && !q.without.contains(id)
                    && (q.states.is_empty() || q.states.contains(&r.state))
                    && q.tenant
                        .as_ref()
                        .is_none_or(|t| r.tenant.as_ref() == Some(t))
                    && (q.elements_some.is_empty()
                        || q.elements_some.iter().any(|e| r.elements.contains(e)))
                    && q.elements_every.iter().all(|e| r.elements.contains(e))
                    && window.is_none_or(|(ws, we, scope)| match scope {
                        Scope::Exclusive => r.start >= ws && r.end <= we,
                        Scope::Inclusive => r.start < we && r.end > ws,
                    })
            })
            .map(|(id, r)| self.view_reservation(*id, r))
            .collect()
    }

    /// Live reservations protecting `element`.
    pub fn protected_by(&self, element: &ElementId) -> Vec<ReservationId> {
        self.reservations
            .iter()
            .filter(|(_, r)| r.live() && r.elements.contains(element))
            .map(|(id, _)| *id)
            .collect()
    }

    /// `query-capacity`: per pool, the least total and available and the most reserved and
    /// usage over the window, and the utilization timeline when asked.
    pub fn query_capacity(&self, q: &CapacityQuery) -> Result<CapacityReport, CalendarError> {
        let start = tick(q.window.start);
        let end = q.window.end.map_or(OPEN, tick);
        if end <= start {
            return Err(CalendarError::EmptyWindow {
                start: time(start),
                end: time(end),
            });
        }
        let mut pools = Vec::new();
        for (key, &p) in &self.pool_ix {
            if q.zone.as_ref().is_some_and(|z| &key.zone != z)
                || q.provider.as_ref().is_some_and(|pr| &key.provider != pr)
            {
                continue;
            }
            // A retired pool sells nothing after its retirement: it is shown only while a
            // live record still holds part of it.
            if self.pools[p as usize].retired.is_some_and(|r| start >= r)
                && !self.holds_live(p, start, end)
            {
                continue;
            }
            pools.push(self.pool_capacity(p, start, end, q.timeline));
        }
        Ok(CapacityReport { pools })
    }

    fn pool_capacity(&self, p: u32, start: i64, end: i64, timeline: bool) -> PoolCapacity {
        let pool = &self.pools[p as usize];
        let mut summary = BTreeMap::new();
        let mut per_dim: Vec<(Dimension, Vec<(i64, Levels)>)> = Vec::new();
        for (&d, prof) in &pool.profiles {
            let steps = prof.steps(start, end);
            let mut s = levels(&steps[0].1);
            for (_, l) in &steps[1..] {
                let l = levels(l);
                s.total = s.total.min(l.total);
                s.available = s.available.min(l.available);
                s.reserved = s.reserved.max(l.reserved);
                s.usage = s.usage.max(l.usage);
            }
            let dim = self.dims[d as usize].clone();
            summary.insert(dim.clone(), s);
            if timeline {
                per_dim.push((dim, steps));
            }
        }
        let mut steps = Vec::new();
        if timeline {
            let mut times: BTreeSet<i64> = per_dim
                .iter()
                .flat_map(|(_, s)| s.iter().map(|(t, _)| *t))
                .collect();
            times.insert(start);
            let mut cursor = vec![0usize; per_dim.len()];
            for t in times {
                let mut lv = BTreeMap::new();
                for (i, (dim, s)) in per_dim.iter().enumerate() {
                    while cursor[i] + 1 < s.len() && s[cursor[i] + 1].0 <= t {
                        cursor[i] += 1;
                    }
                    lv.insert(dim.clone(), levels(&s[cursor[i]].1));
                }
                let prev = steps.last().map(|s: &UtilizationStep| &s.levels);
                if prev != Some(&lv) {
                    steps.push(UtilizationStep {
                        at: time(t),
                        levels: lv,
                    });
                }
            }
        }
        PoolCapacity {
            pool: pool.key.clone(),
            summary,
            timeline: steps,
        }
    }

    /// Admission check without committing or preempting: the pool the request would use, or
    /// the conflict with its offers.
    pub fn check_reservation(
        &self,
        req: &ReservationRequest,
        now: DateTime<Utc>,
    ) -> Result<PoolKey, CalendarError> {
        let (spec, unknown) = self.spec(req, tick(now), None)?;
        let pools = self.candidate_pools(&req.zone, req.provider.as_ref())?;
        if unknown.is_empty()
            && let Some(&p) = pools
                .iter()
                .find(|&&p| self.fits(p, spec.start, spec.end, &spec.qty))
        {
            return Ok(self.pools[p as usize].key.clone());
        }
        Err(self.conflict(&pools, spec.start, spec.end, &spec.qty, &unknown))
    }

    /// "Give me an offer" for a request, one per candidate pool, whether it fits or not.
    pub fn offer(
        &self,
        req: &ReservationRequest,
        now: DateTime<Utc>,
    ) -> Result<Vec<Offer>, CalendarError> {
        let (spec, unknown) = self.spec(req, tick(now), None)?;
        let pools = self.candidate_pools(&req.zone, req.provider.as_ref())?;
        Ok(pools
            .iter()
            .map(|&p| self.offer_for(p, spec.start, spec.end, &spec.qty, &unknown))
            .collect())
    }

    /// `find-window`: the earliest window at or after `not_before` where the amounts fit for
    /// the duration, over the zone's pools (ties go to the first pool).
    pub fn find_window(&self, q: &WindowQuery) -> Result<Option<FoundWindow>, CalendarError> {
        let dur = match q.duration {
            None => None,
            Some(d) => {
                let us = d.num_microseconds().ok_or(CalendarError::TimeOutOfRange)?;
                if us <= 0 {
                    let s = q.not_before;
                    return Err(CalendarError::EmptyWindow { start: s, end: s });
                }
                Some(us)
            }
        };
        let (qty, unknown) = self.resolve(&q.amounts)?;
        let pools = self.candidate_pools(&q.zone, q.provider.as_ref())?;
        if !unknown.is_empty() {
            return Ok(None);
        }
        let from = tick(q.not_before);
        let best = pools
            .iter()
            .filter_map(|&p| self.earliest(p, from, dur, &qty).map(|s| (s, p)))
            .min_by_key(|&(s, _)| s);
        Ok(best.map(|(s, p)| FoundWindow {
            pool: self.pools[p as usize].key.clone(),
            window: Window {
                start: time(s),
                end: dur.map(|d| time(s.saturating_add(d))),
            },
        }))
    }

    /// Snapshot of everything observable.
    pub fn state(&self) -> CalendarState {
        let start = tick(DateTime::<Utc>::MIN_UTC);
        CalendarState {
            clock: self.clock(),
            policy: self.policy.clone(),
            reservations: self
                .reservations
                .iter()
                .map(|(id, r)| self.view_reservation(*id, r))
                .collect(),
            allocations: self
                .allocations
                .keys()
                .filter_map(|id| self.allocation(*id))
                .collect(),
            subscriptions: self
                .subs
                .iter()
                .map(|(id, s)| (*id, s.spec.clone(), s.below))
                .collect(),
            capacity: CapacityReport {
                pools: self
                    .pool_ix
                    .values()
                    .map(|&p| self.pool_capacity(p, start, OPEN, true))
                    .collect(),
            },
            declared: self.declared_pools(None),
        }
    }
}
