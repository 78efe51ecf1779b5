//! The calendar: pools, reservations, allocations, timers and the command interpreter.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use crate::error::CalendarError;
use crate::model::{
    AllocationRequest, AllocationState, Applied, CancelReason, CapacityChange, Command, Conflict,
    Event, LogEntry, Offer, Outcome, RecordRef, ReservationRequest, ReservationState, Shortage,
    TerminationReason, ThresholdSubscription,
};
use crate::policy::{Policy, PolicyRule};
use crate::profile::{CAP, Levels, OPEN, Profile};
use crate::types::{
    AllocationId, Amounts, Dimension, ElementId, PoolKey, Priority, ProviderId, ReservationId,
    SubscriptionId, TenantId, Window, ZoneId,
};

/// Largest quantity accepted in one amount or capacity change.
pub const MAX_QUANTITY: u64 = 1 << 50;
/// Largest sum of all increases of one dimension in one pool (keeps every level in `i64`).
pub const MAX_POOL_TOTAL: u64 = 1 << 60;

const DAY: i64 = 86_400_000_000;
const HOUR: i64 = 3_600_000_000;
const MINUTE: i64 = 60_000_000;
const SECOND: i64 = 1_000_000;

// Timer kinds, in processing order at one instant: ends before starts (half-open windows).
const T_ALLOC_END: u8 = 0;
const T_RES_END: u8 = 1;
const T_START: u8 = 2;
const T_SOON: u8 = 3;
const T_EXPIRY: u8 = 4;

/// A record's share of the profiles: pool, start, end and the level changes per dimension.
type Contribution = (u32, i64, i64, Vec<(u16, Levels)>);

/// Quantities per interned dimension, sorted by index, all positive.
pub(crate) type Qty = Vec<(u16, i64)>;

pub(crate) fn tick(t: DateTime<Utc>) -> i64 {
    t.timestamp_micros()
}

pub(crate) fn time(t: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(t).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

fn end_time(t: i64) -> Option<DateTime<Utc>> {
    (t != OPEN).then(|| time(t))
}

fn get(q: &Qty, d: u16) -> i64 {
    q.iter().find(|(x, _)| *x == d).map_or(0, |(_, v)| *v)
}

fn add_into(q: &mut Qty, d: u16, v: i64) {
    match q.iter_mut().find(|(x, _)| *x == d) {
        Some(e) => e.1 += v,
        None => {
            q.push((d, v));
            q.sort_unstable();
        }
    }
    q.retain(|(_, v)| *v != 0);
}

fn ceil_div(a: i64, b: i64) -> u64 {
    u64::try_from(a.saturating_add(b - 1) / b).unwrap_or(0)
}

/// One accepted capacity change of one dimension: `change` (negative for a decrease) over
/// `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CapacityStep {
    dim: u16,
    start: i64,
    end: i64,
    change: i64,
}

#[derive(Clone, Debug)]
struct Pool {
    key: PoolKey,
    profiles: BTreeMap<u16, Profile>,
    increases: BTreeMap<u16, u64>,
    /// Every capacity change in order: the capacity part of the profiles, kept for snapshots.
    history: Vec<CapacityStep>,
    /// Records contributing to the profiles, by start.
    live: BTreeSet<(i64, RecordRef)>,
}

#[derive(Clone, Debug)]
struct ResRec {
    pool: u32,
    start: i64,
    end: i64,
    expiry: Option<i64>,
    soon: Option<i64>,
    amounts: Qty,
    allocated: Qty,
    released: Qty,
    priority: Priority,
    tenant: Option<TenantId>,
    attributes: BTreeMap<String, String>,
    elements: BTreeSet<ElementId>,
    state: ReservationState,
    cancel_reason: Option<CancelReason>,
    at_risk: bool,
    allocations: Vec<AllocationId>,
    created: i64,
    modified: i64,
}

impl ResRec {
    fn live(&self) -> bool {
        matches!(
            self.state,
            ReservationState::Initialized | ReservationState::Active | ReservationState::Expired
        )
    }

    fn hold(&self) -> &Qty {
        if self.state == ReservationState::Expired {
            &self.allocated
        } else {
            &self.amounts
        }
    }

    fn contrib(&self) -> Vec<(u16, Levels)> {
        self.hold()
            .iter()
            .map(|&(d, q)| (d, [0, q, 0, 0]))
            .collect()
    }

    fn timers(&self, id: u64) -> Vec<(i64, u8, u64)> {
        let mut t = Vec::new();
        let pending = matches!(
            self.state,
            ReservationState::Initialized | ReservationState::Active
        );
        if self.state == ReservationState::Initialized {
            t.push((self.start, T_START, id));
        }
        if pending {
            if let Some(s) = self.soon {
                t.push((s, T_SOON, id));
            }
            if let Some(x) = self.expiry {
                t.push((x, T_EXPIRY, id));
            }
        }
        if self.live() && self.end != OPEN {
            t.push((self.end, T_RES_END, id));
        }
        t
    }
}

#[derive(Clone, Debug)]
struct AllocRec {
    pool: u32,
    reservation: Option<ReservationId>,
    amounts: Qty,
    start: i64,
    end: i64,
    own_end: i64,
    priority: Priority,
    state: AllocationState,
    termination: Option<TerminationReason>,
    at_risk: bool,
}

impl AllocRec {
    fn contrib(&self) -> Vec<(u16, Levels)> {
        let unres = i64::from(self.reservation.is_none());
        self.amounts
            .iter()
            .map(|&(d, q)| (d, [0, 0, q * unres, q]))
            .collect()
    }

    /// Own end timer: only when the allocation stops before its reservation does.
    fn timer(&self, id: u64) -> Option<(i64, u8, u64)> {
        let follows = self.reservation.is_some() && self.own_end >= self.end;
        (self.state == AllocationState::Active && self.end != OPEN && !follows).then_some((
            self.end,
            T_ALLOC_END,
            id,
        ))
    }
}

#[derive(Clone, Debug)]
struct Sub {
    spec: ThresholdSubscription,
    below: bool,
}

/// A validated reservation request.
#[derive(Clone, Debug)]
struct Spec {
    start: i64,
    end: i64,
    expiry: Option<i64>,
    soon: Option<i64>,
    qty: Qty,
}

/// The reservation calendar. See the crate docs for the model and invariants.
#[derive(Clone, Debug)]
pub struct Calendar {
    policy: Policy,
    clock: Option<i64>,
    dims: Vec<Dimension>,
    dim_ix: BTreeMap<Dimension, u16>,
    pools: Vec<Pool>,
    pool_ix: BTreeMap<PoolKey, u32>,
    reservations: BTreeMap<ReservationId, ResRec>,
    allocations: BTreeMap<AllocationId, AllocRec>,
    subs: BTreeMap<SubscriptionId, Sub>,
    timers: BTreeSet<(i64, u8, u64)>,
    next_res: u64,
    next_alloc: u64,
    next_sub: u64,
}

impl Default for Calendar {
    fn default() -> Self {
        Self::new(Policy::default())
    }
}

fn contrib_apply(pool: &mut Pool, start: i64, end: i64, deltas: &[(u16, Levels)], add: bool) {
    for (d, l) in deltas {
        let p = pool.profiles.entry(*d).or_default();
        if add {
            p.add(start, end, *l);
        } else {
            p.remove(start, end, *l);
        }
    }
}

impl Calendar {
    /// An empty calendar with `policy`.
    pub fn new(policy: Policy) -> Self {
        Calendar {
            policy,
            clock: None,
            dims: Vec::new(),
            dim_ix: BTreeMap::new(),
            pools: Vec::new(),
            pool_ix: BTreeMap::new(),
            reservations: BTreeMap::new(),
            allocations: BTreeMap::new(),
            subs: BTreeMap::new(),
            timers: BTreeSet::new(),
            next_res: 0,
            next_alloc: 0,
            next_sub: 0,
        }
    }

    /// Rebuilds a calendar by applying a command log to `Calendar::new(policy)`.
    pub fn replay(
        policy: Policy,
        log: impl IntoIterator<Item = LogEntry>,
    ) -> Result<Self, CalendarError> {
        let mut cal = Calendar::new(policy);
        for (index, entry) in log.into_iter().enumerate() {
            cal.apply(entry.command, entry.at)
                .map_err(|e| CalendarError::Replay {
                    index,
                    source: Box::new(e),
                })?;
        }
        Ok(cal)
    }

    /// Re-lays every availability profile level by level with nodes three quarters full (no
    /// observable change); worth calling after many mutations, since descents then touch
    /// fewer cache lines. O(breakpoints).
    pub fn compact(&mut self) {
        for pool in &mut self.pools {
            for p in pool.profiles.values_mut() {
                p.compact();
            }
        }
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The latest `now` applied.
    pub fn clock(&self) -> Option<DateTime<Utc>> {
        self.clock.map(time)
    }

    /// Applies one command at `now`. When `now` is past the clock, the threshold crossings in
    /// between come first in the events (only [`Command::Advance`] fires timers). On error
    /// nothing changed.
    pub fn apply(&mut self, cmd: Command, now: DateTime<Utc>) -> Result<Outcome, CalendarError> {
        let now = tick(now);
        if let Some(c) = self.clock
            && now < c
        {
            return Err(CalendarError::TimeWentBackwards {
                now: time(now),
                clock: time(c),
            });
        }
        let mut events = Vec::new();
        if cmd == Command::Advance {
            self.advance_to(now, &mut events);
            self.clock = Some(now);
            self.eval_thresholds(now, &mut events);
            return Ok(Outcome {
                applied: Applied::Advanced,
                events,
            });
        }
        // Threshold crossings between the previous clock and `now`, read from the profiles as
        // they stand (only `advance` fires timers); kept only when the command succeeds.
        let mut watch = self.clock.filter(|c| *c < now).map(|c| self.watch(c));
        if let Some(w) = watch.as_mut() {
            self.walk_until(w, now, &mut events);
        }
        let applied = match cmd {
            Command::IncreaseCapacity(c) => self.change_capacity(c, true, now, &mut events)?,
            Command::DecreaseCapacity(c) => self.change_capacity(c, false, now, &mut events)?,
            Command::CreateReservation(r) => self.create_reservation_at(r, now, &mut events)?,
            Command::UpdateReservation { id, request } => {
                self.update_reservation_at(id, request, now, &mut events)?
            }
            Command::CancelReservation { id } => {
                self.cancel_reservation_at(id, now, &mut events)?
            }
            Command::CreateAllocation(a) => self.create_allocation_at(a, now)?,
            Command::DestroyAllocation { id } => self.destroy_allocation_at(id, now)?,
            Command::Advance => Applied::Advanced,
            Command::SetPolicy(p) => {
                self.policy = p;
                Applied::PolicySet
            }
            Command::Subscribe(s) => {
                self.next_sub += 1;
                let id = SubscriptionId(self.next_sub);
                self.subs.insert(
                    id,
                    Sub {
                        spec: s,
                        below: false,
                    },
                );
                Applied::Subscribed { id }
            }
            Command::Unsubscribe { id } => {
                self.subs
                    .remove(&id)
                    .ok_or(CalendarError::UnknownSubscription { id })?;
                Applied::Unsubscribed { id }
            }
        };
        if let Some(w) = watch {
            self.commit(w);
        }
        self.clock = Some(now);
        self.eval_thresholds(now, &mut events);
        Ok(Outcome { applied, events })
    }

    // ----- typed convenience -------------------------------------------------------------

    /// `increase-capacity`.
    pub fn increase_capacity(
        &mut self,
        change: CapacityChange,
        now: DateTime<Utc>,
    ) -> Result<Outcome, CalendarError> {
        self.apply(Command::IncreaseCapacity(change), now)
    }

    /// `decrease-capacity`: accepted even below commitments; those are flagged and reported.
    pub fn decrease_capacity(
        &mut self,
        change: CapacityChange,
        now: DateTime<Utc>,
    ) -> Result<Outcome, CalendarError> {
        self.apply(Command::DecreaseCapacity(change), now)
    }

    /// `create-reservation`; returns the new id and the outcome.
    pub fn create_reservation(
        &mut self,
        request: ReservationRequest,
        now: DateTime<Utc>,
    ) -> Result<(ReservationId, Outcome), CalendarError> {
        let out = self.apply(Command::CreateReservation(request), now)?;
        let id = match &out.applied {
            Applied::ReservationCreated { id, .. } => *id,
            _ => ReservationId(self.next_res),
        };
        Ok((id, out))
    }

    /// `update-reservation` with the complete new request (see [`Calendar::request_of`]).
    pub fn update_reservation(
        &mut self,
        id: ReservationId,
        request: ReservationRequest,
        now: DateTime<Utc>,
    ) -> Result<Outcome, CalendarError> {
        self.apply(Command::UpdateReservation { id, request }, now)
    }

    /// `cancel-reservation`.
    pub fn cancel_reservation(
        &mut self,
        id: ReservationId,
        now: DateTime<Utc>,
    ) -> Result<Outcome, CalendarError> {
        self.apply(Command::CancelReservation { id }, now)
    }

    /// `create-instance`; returns the new allocation id.
    pub fn create_allocation(
        &mut self,
        request: AllocationRequest,
        now: DateTime<Utc>,
    ) -> Result<(AllocationId, Outcome), CalendarError> {
        let out = self.apply(Command::CreateAllocation(request), now)?;
        let id = match &out.applied {
            Applied::AllocationCreated { id, .. } => *id,
            _ => AllocationId(self.next_alloc),
        };
        Ok((id, out))
    }

    /// `destroy-instance`.
    pub fn destroy_allocation(
        &mut self,
        id: AllocationId,
        now: DateTime<Utc>,
    ) -> Result<Outcome, CalendarError> {
        self.apply(Command::DestroyAllocation { id }, now)
    }

    /// Moves time to `now` and returns the due events in time order: timers and threshold
    /// crossings interleaved, each at the instant it happened.
    pub fn advance(&mut self, now: DateTime<Utc>) -> Result<Vec<Event>, CalendarError> {
        Ok(self.apply(Command::Advance, now)?.events)
    }

    /// Adds a threshold subscription.
    pub fn subscribe(
        &mut self,
        sub: ThresholdSubscription,
        now: DateTime<Utc>,
    ) -> Result<(SubscriptionId, Outcome), CalendarError> {
        let out = self.apply(Command::Subscribe(sub), now)?;
        Ok((SubscriptionId(self.next_sub), out))
    }

    // ----- internal helpers --------------------------------------------------------------

    fn intern(&mut self, d: &Dimension) -> Result<u16, CalendarError> {
        if let Some(i) = self.dim_ix.get(d) {
            return Ok(*i);
        }
        let i = u16::try_from(self.dims.len()).map_err(|_| CalendarError::TooManyDimensions)?;
        self.dims.push(d.clone());
        self.dim_ix.insert(d.clone(), i);
        Ok(i)
    }

    /// Resolves amounts to interned dimensions; unknown dimensions come back separately
    /// (no pool has capacity in them).
    fn resolve(&self, a: &Amounts) -> Result<(Qty, Vec<(Dimension, u64)>), CalendarError> {
        let mut q = Vec::new();
        let mut unknown = Vec::new();
        for (d, &v) in a.iter() {
            if v == 0 {
                continue;
            }
            if v > MAX_QUANTITY {
                return Err(CalendarError::QuantityTooLarge {
                    dimension: d.clone(),
                    value: v,
                    max: MAX_QUANTITY,
                });
            }
            match self.dim_ix.get(d) {
                Some(i) => q.push((*i, v as i64)),
                None => unknown.push((d.clone(), v)),
            }
        }
        q.sort_unstable();
        Ok((q, unknown))
    }

    pub(crate) fn amounts(&self, q: &Qty) -> Amounts {
        q.iter()
            .filter(|(_, v)| *v != 0)
            .map(|&(d, v)| (self.dims[d as usize].clone(), v.max(0) as u64))
            .collect()
    }

    fn candidate_pools(
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

    fn profile(&self, pool: u32, d: u16) -> Option<&Profile> {
        self.pools[pool as usize].profiles.get(&d)
    }

    fn first_shortage(
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

    fn fits(&self, pool: u32, start: i64, end: i64, need: &Qty) -> bool {
        self.first_shortage(pool, start, end, need).is_none()
    }

    /// Earliest start `>= not_before` where `need` fits for `dur` (`None`: open-ended),
    /// jumping past each violation to the next breakpoint where it is lifted.
    fn earliest(&self, pool: u32, not_before: i64, dur: Option<i64>, need: &Qty) -> Option<i64> {
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

    fn offer_for(
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

    fn conflict(
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

    fn spec(
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

    fn victims(
        &self,
        pool: u32,
        spec: &Spec,
        prio: Priority,
        now: i64,
        exclude: Option<ReservationId>,
    ) -> Vec<RecordRef> {
        let pre = self.policy.preemption;
        let shares = |q: &Qty| q.iter().any(|(d, _)| get(&spec.qty, *d) > 0);
        let mut v: Vec<(Priority, Reverse<i64>, RecordRef)> = Vec::new();
        let upper = (spec.end, RecordRef::Reservation(ReservationId(0)));
        for (start, rec) in self.pools[pool as usize].live.range(..upper) {
            match rec {
                RecordRef::Reservation(id) => {
                    let Some(r) = self.reservations.get(id) else {
                        continue;
                    };
                    if pre.cancel_pending_reservations
                        && Some(*id) != exclude
                        && r.state == ReservationState::Initialized
                        && r.start > now
                        && r.priority < prio
                        && r.end > spec.start
                        && shares(&r.amounts)
                    {
                        v.push((r.priority, Reverse(*start), *rec));
                    }
                }
                RecordRef::Allocation(id) => {
                    let Some(a) = self.allocations.get(id) else {
                        continue;
                    };
                    if pre.terminate_unreserved_allocations
                        && a.reservation.is_none()
                        && a.state == AllocationState::Active
                        && a.priority < prio
                        && a.end > spec.start
                        && shares(&a.amounts)
                    {
                        v.push((a.priority, Reverse(*start), *rec));
                    }
                }
            }
        }
        v.sort_by_key(|&(p, s, r)| {
            let kind = matches!(r, RecordRef::Allocation(_)) as u8;
            let id = match r {
                RecordRef::Reservation(i) => i.0,
                RecordRef::Allocation(i) => i.0,
            };
            (p, s, kind, Reverse(id))
        });
        v.into_iter().map(|(_, _, r)| r).collect()
    }

    fn record_contrib(&self, r: RecordRef) -> Option<Contribution> {
        match r {
            RecordRef::Reservation(id) => self
                .reservations
                .get(&id)
                .map(|x| (x.pool, x.start, x.end, x.contrib())),
            RecordRef::Allocation(id) => self
                .allocations
                .get(&id)
                .map(|x| (x.pool, x.start, x.end, x.contrib())),
        }
    }

    fn toggle(&mut self, r: RecordRef, add: bool) {
        if let Some((pool, s, e, c)) = self.record_contrib(r) {
            contrib_apply(&mut self.pools[pool as usize], s, e, &c, add);
        }
    }

    /// Finds a minimal greedy set of victims making `spec` fit in `pool`; the profile is left
    /// exactly as found.
    fn find_victims(
        &mut self,
        pool: u32,
        spec: &Spec,
        prio: Priority,
        now: i64,
        exclude: Option<ReservationId>,
    ) -> Option<Vec<RecordRef>> {
        let cands = self.victims(pool, spec, prio, now, exclude);
        let mut removed = Vec::new();
        for c in cands {
            if self.fits(pool, spec.start, spec.end, &spec.qty) {
                break;
            }
            self.toggle(c, false);
            removed.push(c);
        }
        if !self.fits(pool, spec.start, spec.end, &spec.qty) {
            for c in removed.iter().rev() {
                self.toggle(*c, true);
            }
            return None;
        }
        let mut needed = Vec::new();
        for c in removed.iter().rev() {
            self.toggle(*c, true);
            if !self.fits(pool, spec.start, spec.end, &spec.qty) {
                self.toggle(*c, false);
                needed.push(*c);
            }
        }
        for c in &needed {
            self.toggle(*c, true);
        }
        needed.reverse();
        Some(needed)
    }

    fn admit(
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

    fn schedule(&mut self, r: RecordRef, add: bool) {
        let timers = match r {
            RecordRef::Reservation(id) => self
                .reservations
                .get(&id)
                .map(|x| x.timers(id.0))
                .unwrap_or_default(),
            RecordRef::Allocation(id) => self
                .allocations
                .get(&id)
                .and_then(|x| x.timer(id.0))
                .into_iter()
                .collect(),
        };
        for t in timers {
            if add {
                self.timers.insert(t);
            } else {
                self.timers.remove(&t);
            }
        }
    }

    fn index(&mut self, r: RecordRef, add: bool) {
        let found = match r {
            RecordRef::Reservation(id) => self.reservations.get(&id).map(|x| (x.pool, x.start)),
            RecordRef::Allocation(id) => self.allocations.get(&id).map(|x| (x.pool, x.start)),
        };
        if let Some((pool, start)) = found {
            let live = &mut self.pools[pool as usize].live;
            if add {
                live.insert((start, r));
            } else {
                live.remove(&(start, r));
            }
        }
    }

    /// Takes a live record out of profile, index and timers (before changing it).
    fn detach(&mut self, r: RecordRef) {
        self.toggle(r, false);
        self.index(r, false);
        self.schedule(r, false);
    }

    /// Puts a live record into profile, index and timers (after changing it).
    fn attach(&mut self, r: RecordRef) {
        self.toggle(r, true);
        self.index(r, true);
        self.schedule(r, true);
    }

    fn preempt(&mut self, victims: &[RecordRef], by: ReservationId, now: i64, ev: &mut Vec<Event>) {
        for v in victims {
            match *v {
                RecordRef::Reservation(id) => {
                    self.close_reservation(
                        id,
                        ReservationState::Cancelled,
                        Some(CancelReason::Preempted { by }),
                        now,
                        ev,
                    );
                    ev.push(Event::ReservationPreempted {
                        at: time(now),
                        reservation: id,
                        by,
                    });
                }
                RecordRef::Allocation(id) => {
                    self.end_allocation(
                        id,
                        AllocationState::Terminated,
                        Some(TerminationReason::Preempted { by }),
                        now,
                        ev,
                    );
                }
            }
        }
    }

    /// Ends a live allocation; updates its reservation (and its hold after expiry).
    fn end_allocation(
        &mut self,
        id: AllocationId,
        state: AllocationState,
        reason: Option<TerminationReason>,
        now: i64,
        ev: &mut Vec<Event>,
    ) {
        let Some(a) = self.allocations.get(&id) else {
            return;
        };
        if a.state != AllocationState::Active {
            return;
        }
        let rid = a.reservation;
        let amounts = a.amounts.clone();
        self.detach(RecordRef::Allocation(id));
        if let Some(a) = self.allocations.get_mut(&id) {
            a.state = state;
            a.termination = reason;
        }
        if let Some(rid) = rid {
            let expired = self
                .reservations
                .get(&rid)
                .is_some_and(|r| r.state == ReservationState::Expired);
            if expired {
                self.toggle(RecordRef::Reservation(rid), false);
            }
            if let Some(r) = self.reservations.get_mut(&rid) {
                for &(d, q) in &amounts {
                    add_into(&mut r.allocated, d, -q);
                }
                r.allocations.retain(|x| *x != id);
            }
            if expired {
                self.toggle(RecordRef::Reservation(rid), true);
            }
        }
        if let Some(reason) = reason {
            ev.push(Event::AllocationTerminated {
                at: time(now),
                allocation: id,
                reservation: rid,
                reason,
            });
        }
    }

    /// Moves a live reservation to a final state, terminating its live allocations.
    fn close_reservation(
        &mut self,
        id: ReservationId,
        state: ReservationState,
        reason: Option<CancelReason>,
        now: i64,
        ev: &mut Vec<Event>,
    ) -> Vec<AllocationId> {
        let allocs = self
            .reservations
            .get(&id)
            .map(|r| r.allocations.clone())
            .unwrap_or_default();
        let why = if state == ReservationState::Ended {
            TerminationReason::ReservationEnded
        } else {
            TerminationReason::ReservationCancelled
        };
        for a in &allocs {
            self.end_allocation(*a, AllocationState::Terminated, Some(why), now, ev);
        }
        self.detach(RecordRef::Reservation(id));
        if let Some(r) = self.reservations.get_mut(&id) {
            r.state = state;
            r.cancel_reason = reason;
            r.modified = now;
        }
        allocs
    }

    // ----- commands ----------------------------------------------------------------------

    fn change_capacity(
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
                self.pools.push(Pool {
                    key: c.pool.clone(),
                    profiles: BTreeMap::new(),
                    increases: BTreeMap::new(),
                    history: Vec::new(),
                    live: BTreeSet::new(),
                });
                self.pool_ix.insert(c.pool.clone(), i);
                i
            }
        };
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
    fn reflag(
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

    fn create_reservation_at(
        &mut self,
        req: ReservationRequest,
        now: i64,
        ev: &mut Vec<Event>,
    ) -> Result<Applied, CalendarError> {
        let (spec, unknown) = self.spec(&req, now, None)?;
        let pools = self.candidate_pools(&req.zone, req.provider.as_ref())?;
        let (pool, victims) = self.admit(&pools, &spec, &unknown, Some(req.priority), now, None)?;
        let id = ReservationId(self.next_res + 1);
        self.next_res += 1;
        self.preempt(&victims, id, now, ev);
        self.insert_reservation(id, pool, spec, req, now, ev);
        self.attach(RecordRef::Reservation(id));
        Ok(Applied::ReservationCreated {
            id,
            pool: self.pools[pool as usize].key.clone(),
            preempted: victims,
        })
    }

    /// Stores a new admitted reservation (not yet attached) and reports its start if due.
    fn insert_reservation(
        &mut self,
        id: ReservationId,
        pool: u32,
        spec: Spec,
        req: ReservationRequest,
        now: i64,
        ev: &mut Vec<Event>,
    ) {
        let active = spec.start <= now;
        self.reservations.insert(
            id,
            ResRec {
                pool,
                start: spec.start,
                end: spec.end,
                expiry: spec.expiry,
                soon: spec.soon,
                amounts: spec.qty,
                allocated: Vec::new(),
                released: Vec::new(),
                priority: req.priority,
                tenant: req.tenant,
                attributes: req.attributes,
                elements: req.elements,
                state: if active {
                    ReservationState::Active
                } else {
                    ReservationState::Initialized
                },
                cancel_reason: None,
                at_risk: false,
                allocations: Vec::new(),
                created: now,
                modified: now,
            },
        );
        if active {
            ev.push(Event::ReservationStarted {
                at: time(now),
                reservation: id,
            });
        }
    }

    fn update_reservation_at(
        &mut self,
        id: ReservationId,
        req: ReservationRequest,
        now: i64,
        ev: &mut Vec<Event>,
    ) -> Result<Applied, CalendarError> {
        let r = self
            .reservations
            .get(&id)
            .ok_or(CalendarError::UnknownReservation { id })?;
        if !matches!(
            r.state,
            ReservationState::Initialized | ReservationState::Active
        ) {
            return Err(CalendarError::ReservationClosed { id, state: r.state });
        }
        let locked = (r.state == ReservationState::Active).then_some(r.start);
        let (spec, unknown) = self.spec(&req, now, locked).map_err(|e| match e {
            CalendarError::StartLocked { .. } => CalendarError::StartLocked { id },
            e => e,
        })?;
        for &(d, a) in &r.allocated {
            if get(&spec.qty, d) < a {
                return Err(CalendarError::BelowAllocated {
                    id,
                    dimension: self.dims[d as usize].clone(),
                    allocated: a as u64,
                });
            }
        }
        let mut pools = self.candidate_pools(&req.zone, req.provider.as_ref())?;
        if !r.allocations.is_empty() {
            if !pools.contains(&r.pool) {
                return Err(CalendarError::PoolLocked {
                    id,
                    pool: self.pools[r.pool as usize].key.clone(),
                });
            }
            pools = vec![r.pool];
        }
        let me = RecordRef::Reservation(id);
        self.toggle(me, false);
        let admitted = self.admit(&pools, &spec, &unknown, Some(req.priority), now, Some(id));
        self.toggle(me, true);
        let (pool, victims) = admitted?;
        self.preempt(&victims, id, now, ev);
        self.detach(me);
        let allocs = self
            .reservations
            .get(&id)
            .map(|r| r.allocations.clone())
            .unwrap_or_default();
        for a in &allocs {
            self.detach(RecordRef::Allocation(*a));
        }
        let mut started = false;
        if let Some(r) = self.reservations.get_mut(&id) {
            r.pool = pool;
            r.start = spec.start;
            r.end = spec.end;
            r.expiry = spec.expiry;
            r.soon = spec.soon;
            r.amounts = spec.qty;
            r.priority = req.priority;
            r.tenant = req.tenant;
            r.attributes = req.attributes;
            r.elements = req.elements;
            r.at_risk = false;
            r.modified = now;
            if r.state == ReservationState::Initialized && r.start <= now {
                r.state = ReservationState::Active;
                started = true;
            }
        }
        for a in &allocs {
            if let Some(x) = self.allocations.get_mut(a) {
                x.end = x.own_end.min(spec.end);
            }
        }
        self.attach(me);
        for a in &allocs {
            self.attach(RecordRef::Allocation(*a));
        }
        if started {
            ev.push(Event::ReservationStarted {
                at: time(now),
                reservation: id,
            });
        }
        Ok(Applied::ReservationUpdated {
            id,
            preempted: victims,
        })
    }

    fn cancel_reservation_at(
        &mut self,
        id: ReservationId,
        now: i64,
        ev: &mut Vec<Event>,
    ) -> Result<Applied, CalendarError> {
        let r = self
            .reservations
            .get(&id)
            .ok_or(CalendarError::UnknownReservation { id })?;
        if !r.live() {
            return Err(CalendarError::ReservationClosed { id, state: r.state });
        }
        let terminated = self.close_reservation(
            id,
            ReservationState::Cancelled,
            Some(CancelReason::Requested),
            now,
            ev,
        );
        Ok(Applied::ReservationCancelled { id, terminated })
    }

    fn create_allocation_at(
        &mut self,
        req: AllocationRequest,
        now: i64,
    ) -> Result<Applied, CalendarError> {
        let own_end = req.end.map_or(OPEN, tick);
        if own_end <= now {
            return Err(CalendarError::EndInPast {
                end: time(own_end),
                now: time(now),
            });
        }
        let (qty, unknown) = self.resolve(&req.amounts)?;
        let (pool, rid, end, priority) = match req.reservation {
            Some(rid) => {
                let r = self
                    .reservations
                    .get(&rid)
                    .ok_or(CalendarError::UnknownReservation { id: rid })?;
                let usable = matches!(
                    r.state,
                    ReservationState::Initialized | ReservationState::Active
                ) && r.start <= now
                    && now < r.end
                    && r.expiry.is_none_or(|x| now < x);
                if !usable {
                    let state = if r.state == ReservationState::Active
                        && r.expiry.is_some_and(|x| now >= x)
                    {
                        ReservationState::Expired
                    } else {
                        r.state
                    };
                    return Err(CalendarError::ReservationNotActive { id: rid, state });
                }
                if let Some((d, q)) = unknown.first() {
                    return Err(CalendarError::ExceedsRemaining {
                        reservation: rid,
                        dimension: d.clone(),
                        requested: *q,
                        remaining: 0,
                    });
                }
                for &(d, q) in &qty {
                    let left = get(&r.amounts, d) - get(&r.allocated, d);
                    if q > left {
                        return Err(CalendarError::ExceedsRemaining {
                            reservation: rid,
                            dimension: self.dims[d as usize].clone(),
                            requested: q as u64,
                            remaining: left.max(0) as u64,
                        });
                    }
                }
                (r.pool, Some(rid), own_end.min(r.end), Priority::High)
            }
            None => {
                let zone = req.zone.as_ref().ok_or(CalendarError::MissingZone)?;
                let pools = self.candidate_pools(zone, req.provider.as_ref())?;
                let spec = Spec {
                    start: now,
                    end: own_end,
                    expiry: None,
                    soon: None,
                    qty: qty.clone(),
                };
                let (pool, _) = self.admit(&pools, &spec, &unknown, None, now, None)?;
                (pool, None, own_end, req.priority.min(Priority::Normal))
            }
        };
        let id = AllocationId(self.next_alloc + 1);
        self.next_alloc += 1;
        if let Some(rid) = rid
            && let Some(r) = self.reservations.get_mut(&rid)
        {
            for &(d, q) in &qty {
                add_into(&mut r.allocated, d, q);
            }
            r.allocations.push(id);
        }
        self.allocations.insert(
            id,
            AllocRec {
                pool,
                reservation: rid,
                amounts: qty,
                start: now,
                end,
                own_end,
                priority,
                state: AllocationState::Active,
                termination: None,
                at_risk: false,
            },
        );
        self.attach(RecordRef::Allocation(id));
        Ok(Applied::AllocationCreated {
            id,
            pool: self.pools[pool as usize].key.clone(),
        })
    }

    fn destroy_allocation_at(
        &mut self,
        id: AllocationId,
        now: i64,
    ) -> Result<Applied, CalendarError> {
        let a = self
            .allocations
            .get(&id)
            .ok_or(CalendarError::UnknownAllocation { id })?;
        if a.state != AllocationState::Active {
            return Err(CalendarError::AllocationClosed { id, state: a.state });
        }
        let mut none = Vec::new();
        self.end_allocation(id, AllocationState::Destroyed, None, now, &mut none);
        Ok(Applied::AllocationDestroyed { id })
    }

    /// Fires every timer due at or before `upto`, in order; whether any fired.
    fn fire_due(&mut self, upto: i64, ev: &mut Vec<Event>) -> bool {
        let mut any = false;
        while let Some(&timer) = self.timers.first()
            && timer.0 <= upto
        {
            self.timers.remove(&timer);
            self.fire(timer, ev);
            any = true;
        }
        any
    }

    /// Applies one timer (already taken out of the queue) at its instant.
    fn fire(&mut self, (t, kind, raw): (i64, u8, u64), ev: &mut Vec<Event>) {
        let at = time(t);
        match kind {
            T_ALLOC_END => {
                self.end_allocation(
                    AllocationId(raw),
                    AllocationState::Terminated,
                    Some(TerminationReason::LifetimeEnded),
                    t,
                    ev,
                );
            }
            T_RES_END => {
                let id = ReservationId(raw);
                self.close_reservation(id, ReservationState::Ended, None, t, ev);
                ev.push(Event::ReservationEnded {
                    at,
                    reservation: id,
                });
            }
            T_START => {
                let id = ReservationId(raw);
                if let Some(r) = self.reservations.get_mut(&id)
                    && r.state == ReservationState::Initialized
                {
                    r.state = ReservationState::Active;
                    ev.push(Event::ReservationStarted {
                        at,
                        reservation: id,
                    });
                }
            }
            T_SOON => {
                let id = ReservationId(raw);
                if let Some(r) = self.reservations.get_mut(&id) {
                    r.soon = None;
                    let mut rest = r.amounts.clone();
                    for &(d, q) in &r.allocated {
                        add_into(&mut rest, d, -q);
                    }
                    let expiry = r.expiry.map(time);
                    if let Some(expiry) = expiry
                        && !rest.is_empty()
                    {
                        let unallocated = self.amounts(&rest);
                        ev.push(Event::ReservationExpiringSoon {
                            at,
                            reservation: id,
                            expiry,
                            unallocated,
                        });
                    }
                }
            }
            _ => {
                let id = ReservationId(raw);
                let me = RecordRef::Reservation(id);
                let active = self
                    .reservations
                    .get(&id)
                    .is_some_and(|r| r.state == ReservationState::Active);
                if active {
                    self.detach(me);
                    let mut released = Vec::new();
                    if let Some(r) = self.reservations.get_mut(&id) {
                        released = r.amounts.clone();
                        for &(d, q) in &r.allocated {
                            add_into(&mut released, d, -q);
                        }
                        r.released = released.clone();
                        r.state = ReservationState::Expired;
                    }
                    self.attach(me);
                    let released = self.amounts(&released);
                    ev.push(Event::ReservationExpired {
                        at,
                        reservation: id,
                        released,
                    });
                }
            }
        }
    }
}

mod bulk;
pub(crate) mod query;
pub(crate) mod snapshot;
mod thresholds;
