//! The calendar: its state, the command interpreter (`apply`, the step function) and id/dimension
//! interning. Admission, offers, preemption, capacity changes, reservations, allocations and
//! timers each live in their own submodule.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use crate::error::CalendarError;
use crate::model::{
    AllocationRequest, Applied, CapacityChange, Command, Declaration, Event, LogEntry, Outcome,
    ReservationRequest, ThresholdSubscription,
};
use crate::policy::Policy;
use crate::profile::OPEN;
use crate::types::{AllocationId, Amounts, Dimension, PoolKey, ReservationId, SubscriptionId};

/// Largest quantity accepted in one amount or capacity change.
pub const MAX_QUANTITY: u64 = 1 << 50;
/// Largest sum of all increases of one dimension in one pool (keeps every level in `i64`).
pub const MAX_POOL_TOTAL: u64 = 1 << 60;

/// Quantities per interned dimension, sorted by index, all positive.
pub(crate) type Qty = Vec<(u16, i64)>;

#[inline]
pub(crate) fn tick(t: DateTime<Utc>) -> i64 {
    t.timestamp_micros()
}

#[inline]
pub(crate) fn time(t: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(t).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

#[inline]
fn end_time(t: i64) -> Option<DateTime<Utc>> {
    (t != OPEN).then(|| time(t))
}

#[inline]
fn get(q: &Qty, d: u16) -> i64 {
    q.iter().find(|(x, _)| *x == d).map_or(0, |(_, v)| *v)
}

#[inline]
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

#[inline]
fn ceil_div(a: i64, b: i64) -> u64 {
    u64::try_from(a.saturating_add(b - 1) / b).unwrap_or(0)
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
            Command::DeclareCapacity(d) => self.declare_at(d, now, &mut events)?,
            Command::RetirePool { pool } => self.retire_at(pool, now, &mut events)?,
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

    /// Declares a pool's capacity from `now` on ([`Command::DeclareCapacity`]).
    pub fn declare_capacity(
        &mut self,
        declaration: Declaration,
        now: DateTime<Utc>,
    ) -> Result<Outcome, CalendarError> {
        self.apply(Command::DeclareCapacity(declaration), now)
    }

    /// Retires a pool from `now` on ([`Command::RetirePool`]).
    pub fn retire_pool(
        &mut self,
        pool: PoolKey,
        now: DateTime<Utc>,
    ) -> Result<Outcome, CalendarError> {
        self.apply(Command::RetirePool { pool }, now)
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

    /// Runs `f` on the calendar as [`Calendar::advance`] to `now` would leave it, without
    /// advancing, when that advance would move nothing but the clock: no timer due by `now`,
    /// no threshold subscription, `now` not before the clock. The calendar is as before
    /// afterwards, so a replica kept at its log's state can answer reads at the present and
    /// still apply the log's next entries, stamped before that present. Otherwise `f` comes
    /// back uncalled (advance a copy, or the calendar itself, instead).
    pub fn peek_at<R, F: FnOnce(&Calendar) -> R>(
        &mut self,
        now: DateTime<Utc>,
        f: F,
    ) -> Result<R, F> {
        let at = tick(now);
        let quiet = self.clock.is_none_or(|c| c <= at)
            && self.subs.is_empty()
            && self.timers.first().is_none_or(|t| t.0 > at);
        if !quiet {
            return Err(f);
        }
        let clock = self.clock.replace(at);
        let r = f(self);
        self.clock = clock;
        Ok(r)
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

    /// The threshold subscription `id`, while it exists.
    pub fn threshold_subscription(&self, id: SubscriptionId) -> Option<&ThresholdSubscription> {
        self.subs.get(&id).map(|s| &s.spec)
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
}

mod admission;
mod allocations;
mod bulk;
mod capacity;
mod declare;
mod offers;
mod preemption;
pub(crate) mod query;
mod records;
mod reservations;
pub(crate) mod snapshot;
mod thresholds;
mod timers;

use admission::Spec;
use records::{AllocRec, CapacityStep, Pool, ResRec, Sub};
