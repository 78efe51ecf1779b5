//! Versioned snapshots of a calendar's complete state and their validated restore.
//!
//! A snapshot holds the records (policy, clock, id counters, dimensions, pools with their
//! capacity change history, reservations, allocations, subscriptions with their below-state);
//! everything derived from them — profiles, timer queue, live index, the pools' increase
//! totals — is rebuilt by [`Calendar::restore`], which checks every record first.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{
    AllocRec, Calendar, CapacityStep, MAX_POOL_TOTAL, MAX_QUANTITY, OPEN, Pool, Qty, ResRec, Sub,
    end_time, get, tick, time,
};
use crate::error::{CalendarError, SnapshotProblem, SnapshotRecord};
use crate::model::{
    AllocationState, CancelReason, RecordRef, ReservationState, TerminationReason,
    ThresholdSubscription,
};
use crate::policy::Policy;
use crate::profile::{CAP, Levels, Profile, RES, UNRES, USED};
use crate::types::{
    AllocationId, Amounts, Dimension, ElementId, PoolKey, Priority, ReservationId, SubscriptionId,
    TenantId,
};

/// The snapshot format [`Calendar::snapshot`] writes and [`Calendar::restore`] reads.
pub const SNAPSHOT_FORMAT: u32 = 1;

/// The complete state of a [`Calendar`], serde-serializable: restoring it and applying more
/// commands behaves exactly like the calendar it was taken from. Made by
/// [`Calendar::snapshot`]; read back by [`Calendar::restore`], which validates every record.
/// Only `format` is public; the records are opaque but plain JSON (instants in RFC 3339).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// Format version; [`Calendar::restore`] accepts only [`SNAPSHOT_FORMAT`].
    pub format: u32,
    policy: Policy,
    clock: Option<DateTime<Utc>>,
    /// Dimensions in interning order.
    dimensions: Vec<Dimension>,
    /// Last ids issued.
    last_reservation: u64,
    last_allocation: u64,
    last_subscription: u64,
    pools: Vec<PoolSnap>,
    reservations: Vec<ReservationSnap>,
    allocations: Vec<AllocationSnap>,
    subscriptions: Vec<SubscriptionSnap>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PoolSnap {
    key: PoolKey,
    /// Every accepted capacity change, in order.
    capacity: Vec<CapacitySnap>,
    /// The capacity its source last declared, if it ever did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    declared: Option<Amounts>,
    /// When it was retired, unless it sells again since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retired: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CapacitySnap {
    dimension: Dimension,
    start: DateTime<Utc>,
    end: Option<DateTime<Utc>>,
    /// Positive for an increase, negative for a decrease.
    change: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReservationSnap {
    id: ReservationId,
    pool: PoolKey,
    start: DateTime<Utc>,
    end: Option<DateTime<Utc>>,
    expiry: Option<DateTime<Utc>>,
    /// When the "expiring soon" notice is due; `None` once sent (or when there is none).
    notice: Option<DateTime<Utc>>,
    amounts: Amounts,
    allocated: Amounts,
    released: Amounts,
    priority: Priority,
    tenant: Option<TenantId>,
    attributes: BTreeMap<String, String>,
    elements: BTreeSet<ElementId>,
    state: ReservationState,
    cancel_reason: Option<CancelReason>,
    at_risk: bool,
    /// Live allocations drawing from it, in creation order.
    allocations: Vec<AllocationId>,
    created_on: DateTime<Utc>,
    modified_on: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AllocationSnap {
    id: AllocationId,
    pool: PoolKey,
    reservation: Option<ReservationId>,
    amounts: Amounts,
    start: DateTime<Utc>,
    /// End of its lifetime: its own end, cut at its reservation's end.
    end: Option<DateTime<Utc>>,
    /// Its own end as requested.
    requested_end: Option<DateTime<Utc>>,
    priority: Priority,
    state: AllocationState,
    termination: Option<TerminationReason>,
    at_risk: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SubscriptionSnap {
    id: SubscriptionId,
    subscription: ThresholdSubscription,
    /// Whether available was below the threshold at the clock.
    below: bool,
}

fn bad(record: SnapshotRecord, problem: SnapshotProblem) -> CalendarError {
    CalendarError::InvalidSnapshot { record, problem }
}

fn open_end(t: Option<DateTime<Utc>>) -> i64 {
    t.map_or(OPEN, tick)
}

/// One profile's contribution boundaries while restoring: key and level change (each within
/// `MAX_QUANTITY`, so their sums, taken wide, cannot overflow before they are checked).
type Points = Vec<(i64, Levels)>;

impl Calendar {
    /// The complete state as a [`Snapshot`]. O(records).
    pub fn snapshot(&self) -> Snapshot {
        let dim = |d: u16| self.dims[d as usize].clone();
        Snapshot {
            format: SNAPSHOT_FORMAT,
            policy: self.policy.clone(),
            clock: self.clock.map(time),
            dimensions: self.dims.clone(),
            last_reservation: self.next_res,
            last_allocation: self.next_alloc,
            last_subscription: self.next_sub,
            pools: self
                .pools
                .iter()
                .map(|p| PoolSnap {
                    declared: p.declared.as_ref().map(|q| self.amounts(q)),
                    retired: p.retired.map(time),
                    key: p.key.clone(),
                    capacity: p
                        .history
                        .iter()
                        .map(|c| CapacitySnap {
                            dimension: dim(c.dim),
                            start: time(c.start),
                            end: end_time(c.end),
                            change: c.change,
                        })
                        .collect(),
                })
                .collect(),
            reservations: self
                .reservations
                .iter()
                .map(|(id, r)| ReservationSnap {
                    id: *id,
                    pool: self.pools[r.pool as usize].key.clone(),
                    start: time(r.start),
                    end: end_time(r.end),
                    expiry: r.expiry.map(time),
                    notice: r.soon.map(time),
                    amounts: self.amounts(&r.amounts),
                    allocated: self.amounts(&r.allocated),
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
                })
                .collect(),
            allocations: self
                .allocations
                .iter()
                .map(|(id, a)| AllocationSnap {
                    id: *id,
                    pool: self.pools[a.pool as usize].key.clone(),
                    reservation: a.reservation,
                    amounts: self.amounts(&a.amounts),
                    start: time(a.start),
                    end: end_time(a.end),
                    requested_end: end_time(a.own_end),
                    priority: a.priority,
                    state: a.state,
                    termination: a.termination,
                    at_risk: a.at_risk,
                })
                .collect(),
            subscriptions: self
                .subs
                .iter()
                .map(|(id, s)| SubscriptionSnap {
                    id: *id,
                    subscription: s.spec.clone(),
                    below: s.below,
                })
                .collect(),
        }
    }

    /// Rebuilds a calendar from a [`Snapshot`]: validates every record (format version, ids
    /// against the counters and each other, references, windows, amounts, allocations
    /// against their reservations, capacity and commitments, subscription states), then
    /// rebuilds the profiles with one sorted load each, the timer queue and the live index.
    /// O(n log n) for n records. The first problem found is returned, naming its record; on
    /// any input this returns an error rather than panicking.
    pub fn restore(snapshot: Snapshot) -> Result<Calendar, CalendarError> {
        if snapshot.format != SNAPSHOT_FORMAT {
            return Err(CalendarError::SnapshotFormat {
                found: snapshot.format,
                expected: SNAPSHOT_FORMAT,
            });
        }
        let s = snapshot;
        let mut cal = Calendar::new(s.policy);
        cal.clock = s.clock.map(tick);
        cal.next_res = s.last_reservation;
        cal.next_alloc = s.last_allocation;
        cal.next_sub = s.last_subscription;
        if cal.clock.is_none() && !(s.pools.is_empty() && s.subscriptions.is_empty()) {
            return Err(bad(
                SnapshotRecord::Calendar,
                SnapshotProblem::Inconsistent { field: "clock" },
            ));
        }
        for d in s.dimensions {
            if cal.dim_ix.contains_key(&d) {
                return Err(bad(
                    SnapshotRecord::Dimension(d),
                    SnapshotProblem::Duplicate,
                ));
            }
            let i = u16::try_from(cal.dims.len()).map_err(|_| CalendarError::TooManyDimensions)?;
            cal.dim_ix.insert(d.clone(), i);
            cal.dims.push(d);
        }
        for p in s.pools {
            cal.restore_pool(p)?;
        }
        for r in s.reservations {
            cal.restore_reservation(r)?;
        }
        for a in s.allocations {
            cal.restore_allocation(a)?;
        }
        cal.check_reservations()?;
        for sub in s.subscriptions {
            let record = SnapshotRecord::Subscription(sub.id);
            if sub.id.0 == 0 || sub.id.0 > cal.next_sub {
                let counter = cal.next_sub;
                return Err(bad(record, SnapshotProblem::IdOutOfRange { counter }));
            }
            if cal.subs.contains_key(&sub.id) {
                return Err(bad(record, SnapshotProblem::Duplicate));
            }
            let restored = Sub {
                spec: sub.subscription,
                below: sub.below,
            };
            cal.subs.insert(sub.id, restored);
        }
        cal.rebuild()?;
        Ok(cal)
    }

    fn restore_pool(&mut self, p: PoolSnap) -> Result<(), CalendarError> {
        let record = || SnapshotRecord::Pool(p.key.clone());
        if self.pool_ix.contains_key(&p.key) {
            return Err(bad(record(), SnapshotProblem::Duplicate));
        }
        let mut pool = Pool::new(p.key.clone());
        pool.history.reserve(p.capacity.len());
        if let Some(r) = p.retired {
            if self.clock.is_none_or(|c| tick(r) > c) || p.declared.is_some() {
                return Err(bad(
                    record(),
                    SnapshotProblem::Inconsistent { field: "retired" },
                ));
            }
            pool.retired = Some(tick(r));
        }
        for c in &p.capacity {
            let dimension = c.dimension.clone();
            let Some(&dim) = self.dim_ix.get(&c.dimension) else {
                return Err(bad(
                    record(),
                    SnapshotProblem::UnknownDimension { dimension },
                ));
            };
            let (start, end) = (tick(c.start), open_end(c.end));
            if end <= start {
                return Err(bad(record(), SnapshotProblem::EmptyWindow));
            }
            let value = c.change.unsigned_abs();
            if value == 0 {
                return Err(bad(record(), SnapshotProblem::ZeroAmount { dimension }));
            }
            if value > MAX_QUANTITY {
                let max = MAX_QUANTITY;
                let problem = SnapshotProblem::QuantityTooLarge {
                    dimension,
                    value,
                    max,
                };
                return Err(bad(record(), problem));
            }
            if c.change > 0 {
                let total = pool.increases.entry(dim).or_insert(0);
                *total += value;
                if *total > MAX_POOL_TOTAL {
                    let (value, max) = (*total, MAX_POOL_TOTAL);
                    let problem = SnapshotProblem::QuantityTooLarge {
                        dimension,
                        value,
                        max,
                    };
                    return Err(bad(record(), problem));
                }
            }
            pool.profiles.entry(dim).or_default();
            pool.history.push(CapacityStep {
                dim,
                start,
                end,
                change: c.change,
            });
        }
        let ix = self.pools.len() as u32;
        self.pool_ix.insert(p.key.clone(), ix);
        self.pools.push(pool);
        if let Some(declared) = &p.declared {
            let q = self.restore_qty(declared, ix, &record())?;
            self.pools[ix as usize].declared = Some(q);
        }
        Ok(())
    }

    /// Amounts as interned quantities of `pool`'s dimensions, all positive and in range.
    fn restore_qty(
        &self,
        a: &Amounts,
        pool: u32,
        record: &SnapshotRecord,
    ) -> Result<Qty, CalendarError> {
        let mut q = Vec::new();
        for (d, &v) in a.iter() {
            let dimension = d.clone();
            let Some(&i) = self
                .dim_ix
                .get(d)
                .filter(|i| self.pools[pool as usize].profiles.contains_key(i))
            else {
                return Err(bad(
                    record.clone(),
                    SnapshotProblem::UnknownDimension { dimension },
                ));
            };
            if v == 0 {
                return Err(bad(
                    record.clone(),
                    SnapshotProblem::ZeroAmount { dimension },
                ));
            }
            if v > MAX_QUANTITY {
                let max = MAX_QUANTITY;
                let problem = SnapshotProblem::QuantityTooLarge {
                    dimension,
                    value: v,
                    max,
                };
                return Err(bad(record.clone(), problem));
            }
            q.push((i, v as i64));
        }
        q.sort_unstable();
        Ok(q)
    }

    fn restore_pool_ref(
        &self,
        key: &PoolKey,
        record: &SnapshotRecord,
    ) -> Result<u32, CalendarError> {
        self.pool_ix.get(key).copied().ok_or_else(|| {
            bad(
                record.clone(),
                SnapshotProblem::UnknownPool { pool: key.clone() },
            )
        })
    }

    /// Checks a time against the clock (a snapshot without a clock has no records).
    fn not_after_clock(
        &self,
        t: i64,
        field: &'static str,
        record: &SnapshotRecord,
    ) -> Result<(), CalendarError> {
        if self.clock.is_some_and(|c| t <= c) {
            Ok(())
        } else {
            Err(bad(record.clone(), SnapshotProblem::AfterClock { field }))
        }
    }

    fn restore_reservation(&mut self, r: ReservationSnap) -> Result<(), CalendarError> {
        let record = SnapshotRecord::Reservation(r.id);
        let inconsistent = |field| bad(record.clone(), SnapshotProblem::Inconsistent { field });
        if r.id.0 == 0 || r.id.0 > self.next_res {
            let counter = self.next_res;
            return Err(bad(record, SnapshotProblem::IdOutOfRange { counter }));
        }
        if self.reservations.contains_key(&r.id) {
            return Err(bad(record, SnapshotProblem::Duplicate));
        }
        let pool = self.restore_pool_ref(&r.pool, &record)?;
        let (start, end) = (tick(r.start), open_end(r.end));
        if end <= start {
            return Err(bad(record, SnapshotProblem::EmptyWindow));
        }
        let expiry = r.expiry.map(tick);
        if expiry.is_some_and(|x| x < start || x > end) {
            let problem = SnapshotProblem::OutsideWindow { field: "expiry" };
            return Err(bad(record, problem));
        }
        let soon = r.notice.map(tick);
        if let Some(n) = soon
            && expiry.is_none_or(|x| n < start || n > x)
        {
            let problem = SnapshotProblem::OutsideWindow { field: "notice" };
            return Err(bad(record, problem));
        }
        let amounts = self.restore_qty(&r.amounts, pool, &record)?;
        let allocated = self.restore_qty(&r.allocated, pool, &record)?;
        let released = self.restore_qty(&r.released, pool, &record)?;
        if r.cancel_reason.is_some() != (r.state == ReservationState::Cancelled) {
            return Err(inconsistent("cancel_reason"));
        }
        let started = matches!(
            r.state,
            ReservationState::Active | ReservationState::Expired
        );
        if (started && self.clock.is_none_or(|c| start > c))
            || (r.state == ReservationState::Expired && expiry.is_none())
        {
            return Err(inconsistent("state"));
        }
        let (created, modified) = (tick(r.created_on), tick(r.modified_on));
        if created > modified {
            return Err(inconsistent("created_on"));
        }
        self.not_after_clock(modified, "modified_on", &record)?;
        let mut seen = BTreeSet::new();
        if !r.allocations.iter().all(|a| seen.insert(*a)) {
            return Err(inconsistent("allocations"));
        }
        self.reservations.insert(
            r.id,
            ResRec {
                pool,
                start,
                end,
                expiry,
                soon,
                amounts,
                allocated,
                released,
                priority: r.priority,
                tenant: r.tenant,
                attributes: r.attributes,
                elements: r.elements,
                state: r.state,
                cancel_reason: r.cancel_reason,
                at_risk: r.at_risk,
                allocations: r.allocations,
                created,
                modified,
            },
        );
        Ok(())
    }

    fn restore_allocation(&mut self, a: AllocationSnap) -> Result<(), CalendarError> {
        let record = SnapshotRecord::Allocation(a.id);
        let inconsistent = |field| bad(record.clone(), SnapshotProblem::Inconsistent { field });
        if a.id.0 == 0 || a.id.0 > self.next_alloc {
            let counter = self.next_alloc;
            return Err(bad(record, SnapshotProblem::IdOutOfRange { counter }));
        }
        if self.allocations.contains_key(&a.id) {
            return Err(bad(record, SnapshotProblem::Duplicate));
        }
        let pool = self.restore_pool_ref(&a.pool, &record)?;
        let amounts = self.restore_qty(&a.amounts, pool, &record)?;
        let (start, end, own_end) = (tick(a.start), open_end(a.end), open_end(a.requested_end));
        if end <= start {
            return Err(bad(record, SnapshotProblem::EmptyWindow));
        }
        if own_end < end {
            return Err(inconsistent("end"));
        }
        self.not_after_clock(start, "start", &record)?;
        if (a.state == AllocationState::Terminated) != a.termination.is_some() {
            return Err(inconsistent("termination"));
        }
        if let Some(TerminationReason::Preempted { by }) = a.termination
            && !self.reservations.contains_key(&by)
        {
            return Err(bad(record, SnapshotProblem::UnknownReservation { id: by }));
        }
        let live = a.state == AllocationState::Active;
        match a.reservation {
            Some(rid) => {
                let Some(r) = self.reservations.get(&rid) else {
                    return Err(bad(record, SnapshotProblem::UnknownReservation { id: rid }));
                };
                if a.priority != Priority::High {
                    return Err(inconsistent("priority"));
                }
                if r.pool != pool {
                    return Err(inconsistent("pool"));
                }
                if live && !r.live() {
                    return Err(inconsistent("state"));
                }
                if live && (start < r.start || end != own_end.min(r.end)) {
                    return Err(inconsistent("end"));
                }
            }
            None => {
                if a.priority > Priority::Normal {
                    return Err(inconsistent("priority"));
                }
                if end != own_end {
                    return Err(inconsistent("end"));
                }
            }
        }
        self.allocations.insert(
            a.id,
            AllocRec {
                pool,
                reservation: a.reservation,
                amounts,
                start,
                end,
                own_end,
                priority: a.priority,
                state: a.state,
                termination: a.termination,
                at_risk: a.at_risk,
            },
        );
        Ok(())
    }

    /// Cross-checks reservations against each other and their allocations: preemptors
    /// exist, live allocations fit the reservation, `allocated` and `allocations` match them.
    fn check_reservations(&self) -> Result<(), CalendarError> {
        let mut held: BTreeMap<ReservationId, (Qty, BTreeSet<AllocationId>)> = BTreeMap::new();
        for (id, a) in &self.allocations {
            if let Some(rid) = a.reservation
                && a.state == AllocationState::Active
            {
                let (q, ids) = held.entry(rid).or_default();
                for &(d, v) in &a.amounts {
                    match q.iter_mut().find(|(x, _)| *x == d) {
                        Some(e) => e.1 = e.1.saturating_add(v),
                        None => q.push((d, v)),
                    }
                }
                ids.insert(*id);
            }
        }
        let none = (Vec::new(), BTreeSet::new());
        for (id, r) in &self.reservations {
            let record = SnapshotRecord::Reservation(*id);
            if let Some(CancelReason::Preempted { by }) = r.cancel_reason
                && !self.reservations.contains_key(&by)
            {
                return Err(bad(record, SnapshotProblem::UnknownReservation { id: by }));
            }
            let (q, ids) = held.get(id).unwrap_or(&none);
            let mut q = q.clone();
            q.sort_unstable();
            for &(d, v) in &q {
                let reserved = get(&r.amounts, d);
                if v > reserved {
                    let problem = SnapshotProblem::ExceedsReservation {
                        dimension: self.dims[d as usize].clone(),
                        allocated: v.max(0) as u64,
                        reserved: reserved.max(0) as u64,
                    };
                    return Err(bad(record, problem));
                }
            }
            if q != r.allocated {
                let problem = SnapshotProblem::Inconsistent { field: "allocated" };
                return Err(bad(record, problem));
            }
            if r.allocations.len() != ids.len() || !r.allocations.iter().all(|a| ids.contains(a)) {
                let problem = SnapshotProblem::Inconsistent {
                    field: "allocations",
                };
                return Err(bad(record, problem));
            }
        }
        Ok(())
    }

    /// Rebuilds what the records imply: live index and timers (inserted in sorted order),
    /// then every profile from its capacity history and the live records, checking levels,
    /// unflagged excess and the subscriptions' below-states.
    fn rebuild(&mut self) -> Result<(), CalendarError> {
        let mut live: Vec<(u32, i64, RecordRef)> = Vec::new();
        let mut timers = Vec::new();
        let mut points: BTreeMap<(u32, u16), Points> = BTreeMap::new();
        // (pool, dimension) -> windows of flagged live records holding it
        let mut flagged: BTreeMap<(u32, u16), Vec<(i64, i64)>> = BTreeMap::new();
        let mut push = |key: (u32, u16), s: i64, e: i64, l: Levels| {
            let list = points.entry(key).or_default();
            list.push((s, l));
            if e != OPEN {
                list.push((e, l.map(|x| -x)));
            }
        };
        for (p, pool) in self.pools.iter().enumerate() {
            for c in &pool.history {
                push((p as u32, c.dim), c.start, c.end, [c.change, 0, 0, 0]);
            }
        }
        for (id, r) in &self.reservations {
            if !r.live() {
                continue;
            }
            let me = RecordRef::Reservation(*id);
            live.push((r.pool, r.start, me));
            timers.extend(r.timers(id.0));
            for (d, l) in r.contrib() {
                push((r.pool, d), r.start, r.end, l);
                if r.at_risk {
                    flagged
                        .entry((r.pool, d))
                        .or_default()
                        .push((r.start, r.end));
                }
            }
        }
        for (id, a) in &self.allocations {
            if a.state != AllocationState::Active {
                continue;
            }
            live.push((a.pool, a.start, RecordRef::Allocation(*id)));
            timers.extend(a.timer(id.0));
            for (d, l) in a.contrib() {
                push((a.pool, d), a.start, a.end, l);
                if a.at_risk {
                    flagged
                        .entry((a.pool, d))
                        .or_default()
                        .push((a.start, a.end));
                }
            }
        }
        for ((p, d), mut list) in points {
            let entries = self.profile_entries(p, d, &mut list)?;
            let spans = negative_spans(&entries);
            let mut cover = flagged.remove(&(p, d)).unwrap_or_default();
            if let Some(at) = first_uncovered(&spans, &mut cover) {
                let problem = SnapshotProblem::OverCapacity {
                    dimension: self.dims[d as usize].clone(),
                    at: time(at),
                };
                return Err(bad(
                    SnapshotRecord::Pool(self.pools[p as usize].key.clone()),
                    problem,
                ));
            }
            let mut prof = Profile::new();
            prof.build(&entries);
            self.pools[p as usize].profiles.insert(d, prof);
        }
        self.insert_indexes(timers, live);
        if let Some(clock) = self.clock {
            for (id, sub) in &self.subs {
                let available = self.sub_avail(&sub.spec, clock);
                let below = available < i64::try_from(sub.spec.below).unwrap_or(i64::MAX);
                if below != sub.below {
                    let problem = SnapshotProblem::ThresholdState { available };
                    return Err(bad(SnapshotRecord::Subscription(*id), problem));
                }
            }
        }
        Ok(())
    }

    /// Sorts and merges one profile's points and checks its levels: capacity never below
    /// zero, commitments and usage within [`MAX_POOL_TOTAL`] (what normal operation keeps,
    /// and what keeps every sum in the tree inside `i64`).
    fn profile_entries(
        &self,
        p: u32,
        d: u16,
        list: &mut Points,
    ) -> Result<Vec<(i64, Levels, u32)>, CalendarError> {
        list.sort_unstable_by_key(|e| e.0);
        let record = || SnapshotRecord::Pool(self.pools[p as usize].key.clone());
        let dimension = || self.dims[d as usize].clone();
        let mut entries = Vec::with_capacity(list.len());
        let mut level = [0i128; 4];
        let mut i = 0;
        while i < list.len() {
            let key = list[i].0;
            let mut change = [0i128; 4];
            let mut refs = 0u32;
            while i < list.len() && list[i].0 == key {
                for (c, x) in change.iter_mut().zip(list[i].1) {
                    *c += i128::from(x);
                }
                refs = refs.saturating_add(1);
                i += 1;
            }
            for (l, c) in level.iter_mut().zip(change) {
                *l += c;
            }
            if level[CAP] < 0 {
                let problem = SnapshotProblem::NegativeCapacity {
                    dimension: dimension(),
                    at: time(key),
                };
                return Err(bad(record(), problem));
            }
            let committed = (level[RES] + level[UNRES]).max(level[USED]);
            if committed > i128::from(MAX_POOL_TOTAL) {
                let problem = SnapshotProblem::QuantityTooLarge {
                    dimension: dimension(),
                    value: u64::try_from(committed).unwrap_or(u64::MAX),
                    max: MAX_POOL_TOTAL,
                };
                return Err(bad(record(), problem));
            }
            // Levels before and after lie in [0, MAX_POOL_TOTAL], so each change fits.
            entries.push((key, change.map(|c| i64::try_from(c).unwrap_or(0)), refs));
        }
        Ok(entries)
    }
}

/// Maximal spans `[a, b)` where available is negative, in order.
fn negative_spans(entries: &[(i64, Levels, u32)]) -> Vec<(i64, i64)> {
    let mut spans: Vec<(i64, i64)> = Vec::new();
    let mut level = 0i64;
    for (i, (k, l, _)) in entries.iter().enumerate() {
        level += l[CAP] - l[RES] - l[UNRES];
        if level < 0 {
            let next = entries.get(i + 1).map_or(OPEN, |e| e.0);
            match spans.last_mut() {
                Some((_, b)) if *b == *k => *b = next,
                _ => spans.push((*k, next)),
            }
        }
    }
    spans
}

/// The first instant of `spans` no window of `cover` contains.
fn first_uncovered(spans: &[(i64, i64)], cover: &mut [(i64, i64)]) -> Option<i64> {
    cover.sort_unstable();
    let mut union: Vec<(i64, i64)> = Vec::new();
    for &(s, e) in cover.iter() {
        match union.last_mut() {
            Some((_, b)) if s <= *b => *b = (*b).max(e),
            _ => union.push((s, e)),
        }
    }
    for &(a, b) in spans {
        let i = union.partition_point(|&(s, _)| s <= a);
        match i.checked_sub(1).map(|j| union[j]) {
            Some((_, e)) if e > a => {
                if e < b {
                    return Some(e);
                }
            }
            _ => return Some(a),
        }
    }
    None
}

#[cfg(test)]
mod tests;
