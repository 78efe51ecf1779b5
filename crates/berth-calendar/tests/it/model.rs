//! Model-based test: random command sequences run against the calendar and against a naive
//! oracle (plain lists of records, availability summed by brute force at every breakpoint);
//! every answer, event and record must agree, and committed usage never exceeds capacity except
//! where a flagged record covers the excess.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use berth_calendar::*;
use chrono::{DateTime, TimeDelta, Utc};
use proptest::prelude::*;

use crate::t0;

const OPEN: i64 = i64::MAX;
const HOUR: i64 = 3_600_000_000;
const MINUTE: i64 = 60_000_000;

type Q = BTreeMap<String, i64>;

fn tk(t: DateTime<Utc>) -> i64 {
    t.timestamp_micros()
}

fn tm(t: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(t).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

fn et(t: i64) -> Option<DateTime<Utc>> {
    (t != OPEN).then(|| tm(t))
}

fn q_of(a: &Amounts) -> Q {
    a.iter()
        .filter(|(_, v)| **v > 0)
        .map(|(d, v)| (d.0.clone(), *v as i64))
        .collect()
}

fn am(q: &Q) -> Amounts {
    q.iter()
        .filter(|(_, v)| **v != 0)
        .map(|(d, v)| (Dimension::new(d.clone()), (*v).max(0) as u64))
        .collect()
}

fn sub_q(a: &Q, b: &Q) -> Q {
    let mut r = a.clone();
    for (d, v) in b {
        *r.entry(d.clone()).or_insert(0) -= v;
    }
    r.retain(|_, v| *v != 0);
    r
}

#[derive(Debug, PartialEq)]
enum MErr {
    Kind(String),
    Conflict(Conflict),
}

fn kind(e: &CalendarError) -> MErr {
    match e {
        CalendarError::Conflict(c) => MErr::Conflict((**c).clone()),
        e => {
            let d = format!("{e:?}");
            MErr::Kind(
                d.split([' ', '{', '('])
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            )
        }
    }
}

fn k(s: &str) -> MErr {
    MErr::Kind(s.to_owned())
}

#[derive(Clone, Debug)]
struct CapRec {
    pool: PoolKey,
    dim: String,
    start: i64,
    end: i64,
    delta: i64,
}

#[derive(Clone, Debug)]
struct MRes {
    pool: PoolKey,
    start: i64,
    end: i64,
    expiry: Option<i64>,
    soon: Option<i64>,
    amounts: Q,
    allocated: Q,
    released: Q,
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

impl MRes {
    fn live(&self) -> bool {
        matches!(
            self.state,
            ReservationState::Initialized | ReservationState::Active | ReservationState::Expired
        )
    }
    fn hold(&self) -> &Q {
        if self.state == ReservationState::Expired {
            &self.allocated
        } else {
            &self.amounts
        }
    }
}

#[derive(Clone, Debug)]
struct MAlloc {
    pool: PoolKey,
    reservation: Option<ReservationId>,
    amounts: Q,
    start: i64,
    end: i64,
    own_end: i64,
    priority: Priority,
    state: AllocationState,
    termination: Option<TerminationReason>,
    at_risk: bool,
}

struct Spec {
    start: i64,
    end: i64,
    expiry: Option<i64>,
    soon: Option<i64>,
    qty: Q,
}

/// The naive oracle.
struct Model {
    policy: Policy,
    clock: Option<i64>,
    caps: Vec<CapRec>,
    pools: BTreeSet<PoolKey>,
    declared: BTreeMap<PoolKey, Q>,
    retired: BTreeMap<PoolKey, i64>,
    known: BTreeSet<String>,
    res: BTreeMap<ReservationId, MRes>,
    allocs: BTreeMap<AllocationId, MAlloc>,
    subs: BTreeMap<SubscriptionId, (ThresholdSubscription, bool)>,
    next_res: u64,
    next_alloc: u64,
    next_sub: u64,
}

type Excl = BTreeSet<RecordRef>;

impl Model {
    fn new(policy: Policy) -> Self {
        Model {
            policy,
            clock: None,
            caps: Vec::new(),
            pools: BTreeSet::new(),
            declared: BTreeMap::new(),
            retired: BTreeMap::new(),
            known: BTreeSet::new(),
            res: BTreeMap::new(),
            allocs: BTreeMap::new(),
            subs: BTreeMap::new(),
            next_res: 0,
            next_alloc: 0,
            next_sub: 0,
        }
    }

    /// Live records with pool, window, and their (dim -> reserved, dim -> unreserved) share.
    fn records(&self) -> Vec<(RecordRef, PoolKey, i64, i64, Q, Q)> {
        let mut v = Vec::new();
        for (id, r) in &self.res {
            if r.live() {
                v.push((
                    RecordRef::Reservation(*id),
                    r.pool.clone(),
                    r.start,
                    r.end,
                    r.hold().clone(),
                    Q::new(),
                ));
            }
        }
        for (id, a) in &self.allocs {
            if a.state == AllocationState::Active {
                let un = if a.reservation.is_none() {
                    a.amounts.clone()
                } else {
                    Q::new()
                };
                v.push((
                    RecordRef::Allocation(*id),
                    a.pool.clone(),
                    a.start,
                    a.end,
                    Q::new(),
                    un,
                ));
            }
        }
        v
    }

    fn cap(&self, pool: &PoolKey, dim: &str, t: i64) -> i64 {
        self.caps
            .iter()
            .filter(|c| &c.pool == pool && c.dim == dim && c.start <= t && t < c.end)
            .map(|c| c.delta)
            .sum()
    }

    fn levels(&self, pool: &PoolKey, dim: &str, t: i64, excl: &Excl) -> CapacityLevels {
        let total = self.cap(pool, dim, t);
        let (mut reserved, mut unres) = (0, 0);
        for (r, p, s, e, rq, uq) in self.records() {
            if &p == pool && s <= t && t < e && !excl.contains(&r) {
                reserved += rq.get(dim).copied().unwrap_or(0);
                unres += uq.get(dim).copied().unwrap_or(0);
            }
        }
        let usage: i64 = self
            .allocs
            .values()
            .filter(|a| {
                a.state == AllocationState::Active && &a.pool == pool && a.start <= t && t < a.end
            })
            .map(|a| a.amounts.get(dim).copied().unwrap_or(0))
            .sum();
        CapacityLevels {
            total,
            reserved,
            usage,
            available: total - reserved - unres,
        }
    }

    fn avail(&self, pool: &PoolKey, dim: &str, t: i64, excl: &Excl) -> i64 {
        self.levels(pool, dim, t, excl).available
    }

    fn breakpoints(&self, pool: &PoolKey) -> BTreeSet<i64> {
        let mut b = BTreeSet::new();
        for c in self.caps.iter().filter(|c| &c.pool == pool) {
            b.insert(c.start);
            b.insert(c.end);
        }
        for (_, p, s, e, _, _) in self.records() {
            if &p == pool {
                b.insert(s);
                b.insert(e);
            }
        }
        b.remove(&OPEN);
        b
    }

    /// Instants to check for `[s, e)`: `s` and every breakpoint inside.
    fn points(&self, pool: &PoolKey, s: i64, e: i64) -> Vec<i64> {
        let mut v = vec![s];
        v.extend(
            self.breakpoints(pool)
                .into_iter()
                .filter(|t| *t > s && *t < e),
        );
        v
    }

    fn first_below(
        &self,
        pool: &PoolKey,
        dim: &str,
        s: i64,
        e: i64,
        need: i64,
        excl: &Excl,
    ) -> Option<(i64, i64)> {
        self.points(pool, s, e)
            .into_iter()
            .map(|t| (t, self.avail(pool, dim, t, excl)))
            .find(|(_, a)| *a < need)
    }

    fn fits(&self, pool: &PoolKey, s: i64, e: i64, need: &Q, excl: &Excl) -> bool {
        need.iter()
            .all(|(d, q)| self.first_below(pool, d, s, e, *q, excl).is_none())
    }

    fn earliest(
        &self,
        pool: &PoolKey,
        s0: i64,
        dur: Option<i64>,
        need: &Q,
        excl: &Excl,
    ) -> Option<i64> {
        let mut cands = vec![s0];
        cands.extend(self.breakpoints(pool).into_iter().filter(|t| *t > s0));
        cands.into_iter().find(|&c| {
            let e = dur.map_or(OPEN, |d| c + d);
            self.fits(pool, c, e, need, excl)
        })
    }

    fn candidate_pools(
        &self,
        zone: &ZoneId,
        provider: Option<&ProviderId>,
    ) -> Result<Vec<PoolKey>, MErr> {
        if let Some(p) = provider {
            let key = PoolKey {
                zone: zone.clone(),
                provider: p.clone(),
            };
            return if self.pools.contains(&key) {
                Ok(vec![key])
            } else {
                Err(k("UnknownPool"))
            };
        }
        let v: Vec<PoolKey> = self
            .pools
            .iter()
            .filter(|p| &p.zone == zone)
            .cloned()
            .collect();
        if v.is_empty() {
            Err(k("UnknownZone"))
        } else {
            Ok(v)
        }
    }

    fn unknown(&self, q: &Q) -> bool {
        q.keys().any(|d| !self.known.contains(d))
    }

    fn offer(&self, pool: &PoolKey, s: i64, e: i64, need: &Q, excl: &Excl) -> Offer {
        let mut max = Amounts::new();
        for d in need.keys() {
            let m = self
                .points(pool, s, e)
                .into_iter()
                .map(|t| self.avail(pool, d, t, excl))
                .min()
                .unwrap_or(0);
            max.set(Dimension::new(d.clone()), m.max(0) as u64);
        }
        let dur = (e != OPEN).then_some(e - s);
        let earliest = if self.unknown(need) {
            None
        } else {
            self.earliest(pool, s, dur, need, excl).map(tm)
        };
        Offer {
            pool: pool.clone(),
            max_reservable: max,
            earliest_start: earliest,
        }
    }

    fn conflict(&self, pools: &[PoolKey], s: i64, e: i64, need: &Q, excl: &Excl) -> MErr {
        let mut shortages = Vec::new();
        let mut offers = Vec::new();
        for p in pools {
            for (d, q) in need {
                if let Some((t, a)) = self.first_below(p, d, s, e, *q, excl) {
                    shortages.push(Shortage {
                        pool: p.clone(),
                        dimension: Dimension::new(d.clone()),
                        at: tm(t),
                        needed: *q as u64,
                        available: a,
                    });
                }
            }
            offers.push(self.offer(p, s, e, need, excl));
        }
        MErr::Conflict(Conflict {
            window: Window {
                start: tm(s),
                end: et(e),
            },
            shortages,
            offers,
        })
    }

    fn spec(&self, req: &ReservationRequest, now: i64, locked: Option<i64>) -> Result<Spec, MErr> {
        let start = match locked {
            Some(s) => {
                if req.start.is_some_and(|t| tk(t) != s) {
                    return Err(k("StartLocked"));
                }
                s
            }
            None => {
                let s = req.start.map_or(now, tk);
                if s < now {
                    return Err(k("StartInPast"));
                }
                s
            }
        };
        let end = req.end.map_or(OPEN, tk);
        if end <= start {
            return Err(k("EmptyWindow"));
        }
        if end <= now {
            return Err(k("EndInPast"));
        }
        let p = &self.policy;
        if locked.is_none()
            && p.max_future_start_days
                .is_some_and(|d| start - now > i64::from(d) * 24 * HOUR)
        {
            return Err(k("Policy"));
        }
        if p.max_future_end_days
            .is_some_and(|d| end == OPEN || end - now > i64::from(d) * 24 * HOUR)
        {
            return Err(k("Policy"));
        }
        if p.max_duration_hours
            .is_some_and(|h| end == OPEN || end - start > i64::from(h) * HOUR)
        {
            return Err(k("Policy"));
        }
        let expiry = match req.expiry {
            Some(x) => {
                let x = tk(x);
                if x < start || x > end {
                    return Err(k("ExpiryOutsideWindow"));
                }
                Some(x)
            }
            None => p
                .default_expiry_minutes
                .map(|m| (start + i64::from(m) * MINUTE).min(end)),
        };
        let lead = p.expiry_notice_seconds as i64 * 1_000_000;
        let soon = expiry.filter(|_| lead > 0).map(|x| (x - lead).max(start));
        Ok(Spec {
            start,
            end,
            expiry,
            soon,
            qty: q_of(&req.amounts),
        })
    }

    fn find_victims(
        &self,
        pool: &PoolKey,
        spec: &Spec,
        prio: Priority,
        now: i64,
        base: &Excl,
    ) -> Option<Vec<RecordRef>> {
        let pre = self.policy.preemption;
        let shares = |q: &Q| q.keys().any(|d| spec.qty.contains_key(d));
        let mut v: Vec<(Priority, Reverse<i64>, u8, Reverse<u64>, RecordRef)> = Vec::new();
        for (id, r) in &self.res {
            if r.live()
                && &r.pool == pool
                && r.start < spec.end
                && pre.cancel_pending_reservations
                && !base.contains(&RecordRef::Reservation(*id))
                && r.state == ReservationState::Initialized
                && r.start > now
                && r.priority < prio
                && r.end > spec.start
                && shares(&r.amounts)
            {
                v.push((
                    r.priority,
                    Reverse(r.start),
                    0,
                    Reverse(id.0),
                    RecordRef::Reservation(*id),
                ));
            }
        }
        for (id, a) in &self.allocs {
            if a.state == AllocationState::Active
                && &a.pool == pool
                && a.start < spec.end
                && pre.terminate_unreserved_allocations
                && a.reservation.is_none()
                && a.priority < prio
                && a.end > spec.start
                && shares(&a.amounts)
            {
                v.push((
                    a.priority,
                    Reverse(a.start),
                    1,
                    Reverse(id.0),
                    RecordRef::Allocation(*id),
                ));
            }
        }
        v.sort();
        let mut excl = base.clone();
        let mut removed = Vec::new();
        for (.., c) in v {
            if self.fits(pool, spec.start, spec.end, &spec.qty, &excl) {
                break;
            }
            excl.insert(c);
            removed.push(c);
        }
        if !self.fits(pool, spec.start, spec.end, &spec.qty, &excl) {
            return None;
        }
        let mut needed = Vec::new();
        for c in removed.iter().rev() {
            excl.remove(c);
            if !self.fits(pool, spec.start, spec.end, &spec.qty, &excl) {
                excl.insert(*c);
                needed.push(*c);
            }
        }
        needed.reverse();
        Some(needed)
    }

    fn admit(
        &self,
        pools: &[PoolKey],
        spec: &Spec,
        prio: Option<Priority>,
        now: i64,
        base: &Excl,
    ) -> Result<(PoolKey, Vec<RecordRef>), MErr> {
        if !self.unknown(&spec.qty) {
            for p in pools {
                if self.fits(p, spec.start, spec.end, &spec.qty, base) {
                    return Ok((p.clone(), Vec::new()));
                }
            }
            let pre = self.policy.preemption;
            if let Some(prio) = prio
                && (pre.cancel_pending_reservations || pre.terminate_unreserved_allocations)
            {
                for p in pools {
                    if let Some(v) = self.find_victims(p, spec, prio, now, base) {
                        return Ok((p.clone(), v));
                    }
                }
            }
        }
        Err(self.conflict(pools, spec.start, spec.end, &spec.qty, base))
    }

    fn end_allocation(
        &mut self,
        id: AllocationId,
        state: AllocationState,
        reason: Option<TerminationReason>,
        now: i64,
        ev: &mut Vec<Event>,
    ) {
        let Some(a) = self.allocs.get_mut(&id) else {
            return;
        };
        if a.state != AllocationState::Active {
            return;
        }
        a.state = state;
        a.termination = reason;
        let (rid, amounts) = (a.reservation, a.amounts.clone());
        if let Some(rid) = rid
            && let Some(r) = self.res.get_mut(&rid)
        {
            r.allocated = sub_q(&r.allocated, &amounts);
            r.allocations.retain(|x| *x != id);
        }
        if let Some(reason) = reason {
            ev.push(Event::AllocationTerminated {
                at: tm(now),
                allocation: id,
                reservation: rid,
                reason,
            });
        }
    }

    fn close(
        &mut self,
        id: ReservationId,
        state: ReservationState,
        reason: Option<CancelReason>,
        now: i64,
        ev: &mut Vec<Event>,
    ) -> Vec<AllocationId> {
        let allocs = self.res[&id].allocations.clone();
        let why = if state == ReservationState::Ended {
            TerminationReason::ReservationEnded
        } else {
            TerminationReason::ReservationCancelled
        };
        for a in &allocs {
            self.end_allocation(*a, AllocationState::Terminated, Some(why), now, ev);
        }
        let r = self.res.get_mut(&id).expect("reservation");
        r.state = state;
        r.cancel_reason = reason;
        r.modified = now;
        allocs
    }

    fn preempt(&mut self, victims: &[RecordRef], by: ReservationId, now: i64, ev: &mut Vec<Event>) {
        for v in victims {
            match *v {
                RecordRef::Reservation(id) => {
                    self.close(
                        id,
                        ReservationState::Cancelled,
                        Some(CancelReason::Preempted { by }),
                        now,
                        ev,
                    );
                    ev.push(Event::ReservationPreempted {
                        at: tm(now),
                        reservation: id,
                        by,
                    });
                }
                RecordRef::Allocation(id) => self.end_allocation(
                    id,
                    AllocationState::Terminated,
                    Some(TerminationReason::Preempted { by }),
                    now,
                    ev,
                ),
            }
        }
    }

    fn apply(&mut self, cmd: &Command, now: i64) -> Result<(Applied, Vec<Event>), MErr> {
        if self.clock.is_some_and(|c| now < c) {
            return Err(k("TimeWentBackwards"));
        }
        let mut ev = Vec::new();
        // Crossings strictly between the clock and `now` (advance walks its own way).
        let mut below = self.below_states();
        if *cmd != Command::Advance
            && let Some(c) = self.clock
        {
            let instants: BTreeSet<i64> = self
                .all_breakpoints()
                .into_iter()
                .filter(|t| *t > c && *t < now)
                .collect();
            for t in instants {
                self.eval_subs(&mut below, t, &mut ev);
            }
        }
        let applied = match cmd {
            Command::IncreaseCapacity(c) => self.capacity(c, true, now, &mut ev)?,
            Command::DecreaseCapacity(c) => self.capacity(c, false, now, &mut ev)?,
            Command::DeclareCapacity(d) => self.declare(d, now, &mut ev)?,
            Command::RetirePool { pool } => self.retire(pool, now, &mut ev)?,
            Command::CreateReservation(req) => {
                let spec = self.spec(req, now, None)?;
                let pools = self.candidate_pools(&req.zone, req.provider.as_ref())?;
                let (pool, victims) =
                    self.admit(&pools, &spec, Some(req.priority), now, &Excl::new())?;
                self.next_res += 1;
                let id = ReservationId(self.next_res);
                self.preempt(&victims, id, now, &mut ev);
                let active = spec.start <= now;
                self.res.insert(
                    id,
                    MRes {
                        pool: pool.clone(),
                        start: spec.start,
                        end: spec.end,
                        expiry: spec.expiry,
                        soon: spec.soon,
                        amounts: spec.qty,
                        allocated: Q::new(),
                        released: Q::new(),
                        priority: req.priority,
                        tenant: req.tenant.clone(),
                        attributes: req.attributes.clone(),
                        elements: req.elements.clone(),
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
                        at: tm(now),
                        reservation: id,
                    });
                }
                Applied::ReservationCreated {
                    id,
                    pool,
                    preempted: victims,
                }
            }
            Command::UpdateReservation { id, request: req } => {
                let id = *id;
                let r = self.res.get(&id).ok_or(k("UnknownReservation"))?;
                if !matches!(
                    r.state,
                    ReservationState::Initialized | ReservationState::Active
                ) {
                    return Err(k("ReservationClosed"));
                }
                let locked =
                    (r.state == ReservationState::Active || r.start <= now).then_some(r.start);
                let spec = self.spec(req, now, locked)?;
                if r.allocated
                    .iter()
                    .any(|(d, a)| spec.qty.get(d).copied().unwrap_or(0) < *a)
                {
                    return Err(k("BelowAllocated"));
                }
                let mut pools = self.candidate_pools(&req.zone, req.provider.as_ref())?;
                if !r.allocations.is_empty() {
                    if !pools.contains(&r.pool) {
                        return Err(k("PoolLocked"));
                    }
                    pools = vec![r.pool.clone()];
                }
                let base: Excl = [RecordRef::Reservation(id)].into();
                let (pool, victims) = self.admit(&pools, &spec, Some(req.priority), now, &base)?;
                self.preempt(&victims, id, now, &mut ev);
                let r = self.res.get_mut(&id).expect("reservation");
                r.pool = pool;
                r.start = spec.start;
                r.end = spec.end;
                r.expiry = spec.expiry;
                r.soon = spec.soon;
                r.amounts = spec.qty;
                r.priority = req.priority;
                r.tenant = req.tenant.clone();
                r.attributes = req.attributes.clone();
                r.elements = req.elements.clone();
                r.at_risk = false;
                r.modified = now;
                let mut started = false;
                if r.state == ReservationState::Initialized && r.start <= now {
                    r.state = ReservationState::Active;
                    started = true;
                }
                let allocs = r.allocations.clone();
                for a in allocs {
                    let x = self.allocs.get_mut(&a).expect("allocation");
                    x.end = x.own_end.min(spec.end);
                }
                if started {
                    ev.push(Event::ReservationStarted {
                        at: tm(now),
                        reservation: id,
                    });
                }
                Applied::ReservationUpdated {
                    id,
                    preempted: victims,
                }
            }
            Command::CancelReservation { id } => {
                let r = self.res.get(id).ok_or(k("UnknownReservation"))?;
                if !r.live() {
                    return Err(k("ReservationClosed"));
                }
                let terminated = self.close(
                    *id,
                    ReservationState::Cancelled,
                    Some(CancelReason::Requested),
                    now,
                    &mut ev,
                );
                ev.push(Event::ReservationCancelled {
                    at: tm(now),
                    reservation: *id,
                    terminated: terminated.clone(),
                });
                Applied::ReservationCancelled {
                    id: *id,
                    terminated,
                }
            }
            Command::CreateAllocation(req) => {
                let own_end = req.end.map_or(OPEN, tk);
                if own_end <= now {
                    return Err(k("EndInPast"));
                }
                let qty = q_of(&req.amounts);
                let (pool, rid, end, priority) = match req.reservation {
                    Some(rid) => {
                        let r = self.res.get(&rid).ok_or(k("UnknownReservation"))?;
                        let usable = matches!(
                            r.state,
                            ReservationState::Initialized | ReservationState::Active
                        ) && r.start <= now
                            && now < r.end
                            && r.expiry.is_none_or(|x| now < x);
                        if !usable {
                            return Err(k("ReservationNotActive"));
                        }
                        let left = sub_q(&r.amounts, &r.allocated);
                        if qty
                            .iter()
                            .any(|(d, q)| *q > left.get(d).copied().unwrap_or(0))
                        {
                            return Err(k("ExceedsRemaining"));
                        }
                        (
                            r.pool.clone(),
                            Some(rid),
                            own_end.min(r.end),
                            Priority::High,
                        )
                    }
                    None => {
                        let zone = req.zone.as_ref().ok_or(k("MissingZone"))?;
                        let pools = self.candidate_pools(zone, req.provider.as_ref())?;
                        let spec = Spec {
                            start: now,
                            end: own_end,
                            expiry: None,
                            soon: None,
                            qty: qty.clone(),
                        };
                        let (pool, _) = self.admit(&pools, &spec, None, now, &Excl::new())?;
                        (pool, None, own_end, req.priority.min(Priority::Normal))
                    }
                };
                self.next_alloc += 1;
                let id = AllocationId(self.next_alloc);
                if let Some(rid) = rid {
                    let r = self.res.get_mut(&rid).expect("reservation");
                    r.allocated = sub_q(
                        &r.allocated,
                        &qty.iter().map(|(d, v)| (d.clone(), -v)).collect(),
                    );
                    r.allocations.push(id);
                }
                self.allocs.insert(
                    id,
                    MAlloc {
                        pool: pool.clone(),
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
                Applied::AllocationCreated { id, pool }
            }
            Command::DestroyAllocation { id } => {
                let a = self.allocs.get(id).ok_or(k("UnknownAllocation"))?;
                if a.state != AllocationState::Active {
                    return Err(k("AllocationClosed"));
                }
                self.end_allocation(*id, AllocationState::Destroyed, None, now, &mut Vec::new());
                Applied::AllocationDestroyed { id: *id }
            }
            Command::Advance => {
                self.advance(now, &mut ev);
                Applied::Advanced
            }
            Command::SetPolicy(p) => {
                self.policy = p.clone();
                Applied::PolicySet
            }
            Command::Subscribe(s) => {
                self.next_sub += 1;
                let id = SubscriptionId(self.next_sub);
                self.subs.insert(id, (s.clone(), false));
                Applied::Subscribed { id }
            }
            Command::Unsubscribe { id } => {
                self.subs.remove(id).ok_or(k("UnknownSubscription"))?;
                Applied::Unsubscribed { id: *id }
            }
        };
        if *cmd != Command::Advance {
            for (id, b) in below {
                if let Some(e) = self.subs.get_mut(&id) {
                    e.1 = b;
                }
            }
        }
        self.clock = Some(now);
        let mut below = self.below_states();
        self.eval_subs(&mut below, now, &mut ev);
        self.subs = self
            .subs
            .iter()
            .map(|(id, (s, _))| (*id, (s.clone(), below[id])))
            .collect();
        Ok((applied, ev))
    }

    fn capacity(
        &mut self,
        c: &CapacityChange,
        increase: bool,
        now: i64,
        ev: &mut Vec<Event>,
    ) -> Result<Applied, MErr> {
        let (start, end) = (tk(c.start), c.end.map_or(OPEN, tk));
        if end <= start {
            return Err(k("EmptyWindow"));
        }
        if !increase {
            if !self.pools.contains(&c.pool) {
                return Err(k("UnknownPool"));
            }
            for (d, v) in c.amounts.iter().filter(|(_, v)| **v > 0) {
                if self
                    .points(&c.pool, start, end)
                    .iter()
                    .any(|t| self.cap(&c.pool, &d.0, *t) < *v as i64)
                {
                    return Err(k("CapacityUnderflow"));
                }
            }
        }
        self.pools.insert(c.pool.clone());
        for (d, v) in c.amounts.iter().filter(|(_, v)| **v > 0) {
            if increase {
                self.known.insert(d.0.clone());
            }
            let delta = if increase { *v as i64 } else { -(*v as i64) };
            self.caps.push(CapRec {
                pool: c.pool.clone(),
                dim: d.0.clone(),
                start,
                end,
                delta,
            });
        }
        if increase {
            self.retired.remove(&c.pool);
        }
        let flagged = self.reflag(&c.pool, start, end, now, ev);
        Ok(Applied::CapacityChanged {
            pool: c.pool.clone(),
            at_risk: flagged,
        })
    }

    /// Re-flags live records of `pool` overlapping `[start, end)`, in (start, record) order.
    fn reflag(
        &mut self,
        pool: &PoolKey,
        start: i64,
        end: i64,
        now: i64,
        ev: &mut Vec<Event>,
    ) -> Vec<RecordRef> {
        let mut recs: Vec<(i64, RecordRef, i64, Q)> = Vec::new();
        for (id, r) in &self.res {
            if r.live() && &r.pool == pool {
                recs.push((
                    r.start,
                    RecordRef::Reservation(*id),
                    r.end,
                    r.hold().clone(),
                ));
            }
        }
        for (id, a) in &self.allocs {
            if a.state == AllocationState::Active && &a.pool == pool {
                recs.push((
                    a.start,
                    RecordRef::Allocation(*id),
                    a.end,
                    a.amounts.clone(),
                ));
            }
        }
        recs.sort_by_key(|r| (r.0, r.1));
        let mut flagged = Vec::new();
        for (s, r, e, dims) in recs {
            if s >= end || e <= start {
                continue;
            }
            let short: Vec<Dimension> = dims
                .keys()
                .filter(|d| {
                    self.points(pool, s, e)
                        .iter()
                        .any(|t| self.avail(pool, d, *t, &Excl::new()) < 0)
                })
                .map(|d| Dimension::new(d.clone()))
                .collect();
            let risk = !short.is_empty();
            let was = match r {
                RecordRef::Reservation(id) => {
                    std::mem::replace(&mut self.res.get_mut(&id).expect("r").at_risk, risk)
                }
                RecordRef::Allocation(id) => {
                    std::mem::replace(&mut self.allocs.get_mut(&id).expect("a").at_risk, risk)
                }
            };
            if risk {
                flagged.push(r);
                if !was {
                    ev.push(Event::CommitmentAtRisk {
                        at: tm(now),
                        record: r,
                        pool: pool.clone(),
                        dimensions: short,
                    });
                }
            }
        }
        flagged.sort();
        flagged
    }

    /// What the pool's source last declared, else its capacity for good; empty once retired.
    fn baseline(&self, pool: &PoolKey) -> Q {
        if self.retired.contains_key(pool) {
            return Q::new();
        }
        if let Some(q) = self.declared.get(pool) {
            return q.clone();
        }
        let mut q = Q::new();
        for c in self
            .caps
            .iter()
            .filter(|c| &c.pool == pool && c.end == OPEN)
        {
            *q.entry(c.dim.clone()).or_insert(0) += c.delta;
        }
        q.retain(|_, v| *v > 0);
        q
    }

    /// Lowers `dim` of `pool` by `amount` from `from` on, never below zero at any instant.
    fn lower(&mut self, pool: &PoolKey, dim: &str, from: i64, amount: i64) {
        let pts = self.points(pool, from, OPEN);
        let mut cuts = Vec::new();
        for (i, t) in pts.iter().enumerate() {
            let end = pts.get(i + 1).copied().unwrap_or(OPEN);
            let cut = amount.min(self.cap(pool, dim, *t).max(0));
            if cut > 0 {
                cuts.push(CapRec {
                    pool: pool.clone(),
                    dim: dim.to_owned(),
                    start: *t,
                    end,
                    delta: -cut,
                });
            }
        }
        self.caps.extend(cuts);
    }

    fn declare(&mut self, d: &Declaration, now: i64, ev: &mut Vec<Event>) -> Result<Applied, MErr> {
        let before = if self.pools.contains(&d.pool) {
            self.baseline(&d.pool)
        } else {
            Q::new()
        };
        let after = q_of(&d.amounts);
        self.pools.insert(d.pool.clone());
        let dims: BTreeSet<String> = before.keys().chain(after.keys()).cloned().collect();
        let mut changed = false;
        for dim in dims {
            let old = before.get(&dim).copied().unwrap_or(0);
            let new = after.get(&dim).copied().unwrap_or(0);
            if old == new {
                continue;
            }
            changed = true;
            if new > old {
                self.known.insert(dim.clone());
                self.caps.push(CapRec {
                    pool: d.pool.clone(),
                    dim,
                    start: now,
                    end: OPEN,
                    delta: new - old,
                });
            } else {
                self.lower(&d.pool, &dim, now, old - new);
            }
        }
        self.declared.insert(d.pool.clone(), after.clone());
        self.retired.remove(&d.pool);
        let at_risk = if changed {
            self.reflag(&d.pool, now, OPEN, now, ev)
        } else {
            Vec::new()
        };
        Ok(Applied::CapacityDeclared {
            pool: d.pool.clone(),
            before: am(&before),
            after: am(&after),
            at_risk,
        })
    }

    fn retire(&mut self, pool: &PoolKey, now: i64, ev: &mut Vec<Event>) -> Result<Applied, MErr> {
        if !self.pools.contains(pool) {
            return Err(k("UnknownPool"));
        }
        if self.retired.contains_key(pool) {
            return Ok(Applied::PoolRetired {
                pool: pool.clone(),
                before: Amounts::new(),
                at_risk: Vec::new(),
            });
        }
        let before = self.baseline(pool);
        let dims: BTreeSet<String> = self
            .caps
            .iter()
            .filter(|c| &c.pool == pool)
            .map(|c| c.dim.clone())
            .collect();
        for dim in dims {
            self.lower(pool, &dim, now, i64::MAX);
        }
        self.declared.remove(pool);
        self.retired.insert(pool.clone(), now);
        let at_risk = self.reflag(pool, now, OPEN, now, ev);
        Ok(Applied::PoolRetired {
            pool: pool.clone(),
            before: am(&before),
            at_risk,
        })
    }

    /// The pools as the calendar's `declared_pools` reports them.
    fn declared_pools(&self) -> Vec<DeclaredPool> {
        self.pools
            .iter()
            .map(|p| DeclaredPool {
                pool: p.clone(),
                capacity: am(&self.baseline(p)),
                declared: self.declared.contains_key(p),
                retired: self.retired.get(p).map(|t| tm(*t)),
            })
            .collect()
    }

    fn next_timer(&self) -> Option<(i64, u8, u64)> {
        let mut t = Vec::new();
        for (id, r) in &self.res {
            let pending = matches!(
                r.state,
                ReservationState::Initialized | ReservationState::Active
            );
            if r.state == ReservationState::Initialized {
                t.push((r.start, 2, id.0));
            }
            if pending {
                if let Some(s) = r.soon {
                    t.push((s, 3, id.0));
                }
                if let Some(x) = r.expiry {
                    t.push((x, 4, id.0));
                }
            }
            if r.live() && r.end != OPEN {
                t.push((r.end, 1, id.0));
            }
        }
        for (id, a) in &self.allocs {
            let follows = a.reservation.is_some() && a.own_end >= a.end;
            if a.state == AllocationState::Active && a.end != OPEN && !follows {
                t.push((a.end, 0, id.0));
            }
        }
        t.into_iter().min()
    }

    fn below_states(&self) -> BTreeMap<SubscriptionId, bool> {
        self.subs.iter().map(|(id, (_, b))| (*id, *b)).collect()
    }

    /// Every breakpoint of every pool, brute force.
    fn all_breakpoints(&self) -> BTreeSet<i64> {
        self.pools
            .iter()
            .flat_map(|p| self.breakpoints(p))
            .collect()
    }

    /// The naive threshold evaluator: availability of every subscription at `t`, summed by
    /// brute force over all records; a change of side is reported at `t`.
    fn eval_subs(&self, below: &mut BTreeMap<SubscriptionId, bool>, t: i64, ev: &mut Vec<Event>) {
        for (id, (s, _)) in &self.subs {
            let avail: i64 = self
                .candidate_pools(&s.zone, s.provider.as_ref())
                .unwrap_or_default()
                .iter()
                .map(|p| self.avail(p, &s.dimension.0, t, &Excl::new()))
                .sum();
            let now_below = avail < s.below as i64;
            let was = below.get(id).copied().unwrap_or(false);
            if now_below != was {
                ev.push(Event::CapacityThreshold {
                    at: tm(t),
                    subscription: *id,
                    zone: s.zone.clone(),
                    dimension: s.dimension.clone(),
                    available: avail,
                    below: now_below,
                });
                below.insert(*id, now_below);
            }
        }
    }

    /// Advance: overdue timers first (then one evaluation at the clock), then each instant
    /// in (clock, now] holding a timer or any breakpoint, timers fired before evaluating.
    fn advance(&mut self, now: i64, ev: &mut Vec<Event>) {
        let Some(clock) = self.clock else {
            self.fire_until(now, ev);
            return;
        };
        let mut below = self.below_states();
        if self.fire_until(clock, ev) {
            self.eval_subs(&mut below, clock, ev);
        }
        let mut cursor = clock;
        loop {
            let timer = self.next_timer().map(|t| t.0).filter(|t| *t <= now);
            let bp = self
                .all_breakpoints()
                .into_iter()
                .find(|t| *t > cursor && *t <= now);
            let Some(x) = timer.into_iter().chain(bp).min() else {
                break;
            };
            self.fire_until(x, ev);
            self.eval_subs(&mut below, x, ev);
            cursor = x;
        }
        for (id, b) in below {
            if let Some(e) = self.subs.get_mut(&id) {
                e.1 = b;
            }
        }
    }

    /// Fires the timers due at or before `upto`, one at a time; whether any fired.
    fn fire_until(&mut self, upto: i64, ev: &mut Vec<Event>) -> bool {
        let mut any = false;
        while let Some((t, kind, raw)) = self.next_timer() {
            if t > upto {
                break;
            }
            any = true;
            match kind {
                0 => self.end_allocation(
                    AllocationId(raw),
                    AllocationState::Terminated,
                    Some(TerminationReason::LifetimeEnded),
                    t,
                    ev,
                ),
                1 => {
                    self.close(ReservationId(raw), ReservationState::Ended, None, t, ev);
                    ev.push(Event::ReservationEnded {
                        at: tm(t),
                        reservation: ReservationId(raw),
                    });
                }
                2 => {
                    self.res.get_mut(&ReservationId(raw)).expect("r").state =
                        ReservationState::Active;
                    ev.push(Event::ReservationStarted {
                        at: tm(t),
                        reservation: ReservationId(raw),
                    });
                }
                3 => {
                    let r = self.res.get_mut(&ReservationId(raw)).expect("r");
                    r.soon = None;
                    let rest = sub_q(&r.amounts, &r.allocated);
                    if let Some(x) = r.expiry
                        && !rest.is_empty()
                    {
                        ev.push(Event::ReservationExpiringSoon {
                            at: tm(t),
                            reservation: ReservationId(raw),
                            expiry: tm(x),
                            unallocated: am(&rest),
                        });
                    }
                }
                _ => {
                    let r = self.res.get_mut(&ReservationId(raw)).expect("r");
                    if r.state == ReservationState::Active {
                        let released = sub_q(&r.amounts, &r.allocated);
                        r.released = released.clone();
                        r.state = ReservationState::Expired;
                        ev.push(Event::ReservationExpired {
                            at: tm(t),
                            reservation: ReservationId(raw),
                            released: am(&released),
                        });
                    } else {
                        // Unreachable by construction (start precedes expiry); keep the oracle total.
                        r.expiry = None;
                    }
                }
            }
        }
        any
    }

    fn view_res(&self, id: ReservationId) -> Reservation {
        let r = &self.res[&id];
        let remaining = if matches!(
            r.state,
            ReservationState::Initialized | ReservationState::Active
        ) {
            sub_q(&r.amounts, &r.allocated)
        } else {
            Q::new()
        };
        Reservation {
            id,
            pool: r.pool.clone(),
            start: tm(r.start),
            end: et(r.end),
            expiry: r.expiry.map(tm),
            amounts: am(&r.amounts),
            allocated: am(&r.allocated),
            remaining: am(&remaining),
            released: am(&r.released),
            priority: r.priority,
            tenant: r.tenant.clone(),
            attributes: r.attributes.clone(),
            elements: r.elements.clone(),
            state: r.state,
            cancel_reason: r.cancel_reason,
            at_risk: r.at_risk,
            allocations: r.allocations.clone(),
            created_on: tm(r.created),
            modified_on: tm(r.modified),
        }
    }

    fn view_alloc(&self, id: AllocationId) -> Allocation {
        let a = &self.allocs[&id];
        Allocation {
            id,
            pool: a.pool.clone(),
            reservation: a.reservation,
            amounts: am(&a.amounts),
            start: tm(a.start),
            end: et(a.end),
            priority: a.priority,
            state: a.state,
            termination: a.termination,
            at_risk: a.at_risk,
        }
    }

    fn capacity_report(&self, zone: Option<&ZoneId>, s: i64, e: i64) -> CapacityReport {
        let mut pools = Vec::new();
        for p in self
            .pools
            .iter()
            .filter(|p| zone.is_none_or(|z| &p.zone == z))
            .filter(|p| {
                self.retired.get(*p).is_none_or(|r| s < *r)
                    || self
                        .records()
                        .iter()
                        .any(|(_, rp, rs, re, _, _)| rp == *p && *rs < e && *re > s)
            })
        {
            let dims: BTreeSet<String> = self
                .caps
                .iter()
                .filter(|c| &c.pool == p && c.delta > 0)
                .map(|c| c.dim.clone())
                .collect();
            let mut summary = BTreeMap::new();
            let mut timeline: Vec<UtilizationStep> = Vec::new();
            let pts = self.points(p, s, e);
            for t in &pts {
                let lv: BTreeMap<Dimension, CapacityLevels> = dims
                    .iter()
                    .map(|d| {
                        (
                            Dimension::new(d.clone()),
                            self.levels(p, d, *t, &Excl::new()),
                        )
                    })
                    .collect();
                if timeline.last().is_none_or(|l| l.levels != lv) {
                    timeline.push(UtilizationStep {
                        at: tm(*t),
                        levels: lv,
                    });
                }
            }
            for d in &dims {
                let all: Vec<CapacityLevels> = pts
                    .iter()
                    .map(|t| self.levels(p, d, *t, &Excl::new()))
                    .collect();
                summary.insert(
                    Dimension::new(d.clone()),
                    CapacityLevels {
                        total: all.iter().map(|l| l.total).min().unwrap_or(0),
                        reserved: all.iter().map(|l| l.reserved).max().unwrap_or(0),
                        usage: all.iter().map(|l| l.usage).max().unwrap_or(0),
                        available: all.iter().map(|l| l.available).min().unwrap_or(0),
                    },
                );
            }
            pools.push(PoolCapacity {
                pool: p.clone(),
                summary,
                timeline,
            });
        }
        CapacityReport { pools }
    }

    /// Committed usage never exceeds capacity except where a flagged record covers the excess.
    fn check_invariant(&self) -> Result<(), String> {
        for p in &self.pools {
            let dims: BTreeSet<&String> = self
                .caps
                .iter()
                .filter(|c| &c.pool == p)
                .map(|c| &c.dim)
                .collect();
            for t in self.breakpoints(p) {
                for d in &dims {
                    if self.avail(p, d, t, &Excl::new()) >= 0 {
                        continue;
                    }
                    let covered = self.res.values().any(|r| {
                        r.live()
                            && &r.pool == p
                            && r.start <= t
                            && t < r.end
                            && r.at_risk
                            && r.hold().get(*d).is_some_and(|q| *q > 0)
                    }) || self.allocs.values().any(|a| {
                        a.state == AllocationState::Active
                            && &a.pool == p
                            && a.start <= t
                            && t < a.end
                            && a.at_risk
                            && a.amounts.contains_key(*d)
                    });
                    if !covered {
                        return Err(format!(
                            "{p} `{d}` over capacity at {} with no flagged record",
                            tm(t)
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

// ----- generated operations ----------------------------------------------------------------

const POOLS: [(&str, &str); 3] = [("z1", "p1"), ("z1", "p2"), ("z2", "p1")];
const ZONES: [&str; 3] = [("z1"), ("z2"), ("z3")];

#[derive(Debug, Clone)]
pub(crate) struct Req {
    zone: usize,
    provider: Option<usize>,
    start: Option<i64>,
    len: Option<i64>,
    expiry: Option<i64>,
    cores: u64,
    ram: u64,
    gpu: bool,
    prio: u8,
}

#[derive(Debug, Clone)]
pub(crate) enum Op {
    Capacity {
        increase: bool,
        pool: usize,
        start: i64,
        len: Option<i64>,
        cores: u64,
        ram: u64,
    },
    Create(Req),
    Update(usize, Req),
    Cancel(usize),
    AllocReserved {
        pick: usize,
        cores: u64,
        ram: u64,
        end: Option<i64>,
    },
    AllocFree {
        zone: usize,
        provider: Option<usize>,
        cores: u64,
        ram: u64,
        end: Option<i64>,
        prio: u8,
    },
    Destroy(usize),
    Advance(i64),
    /// Moves `now` without a command: the next command moves the clock itself.
    Skip(i64),
    Subscribe {
        zone: usize,
        provider: Option<usize>,
        ram: bool,
        below: u64,
    },
    Unsubscribe(usize),
    /// A source declares a pool's capacity (`None`: the dimension is left out).
    Declare {
        pool: usize,
        cores: Option<u64>,
        ram: Option<u64>,
    },
    Retire(usize),
    QueryCapacity {
        zone: Option<usize>,
        start: i64,
        len: Option<i64>,
    },
    Offer(Req),
    FindWindow {
        zone: usize,
        cores: u64,
        ram: u64,
        from: i64,
        len: Option<i64>,
    },
}

fn req() -> impl Strategy<Value = Req> {
    (
        0usize..3,
        prop::option::weighted(0.3, 0usize..2),
        prop::option::weighted(0.7, 0i64..30),
        prop::option::weighted(0.85, 1i64..20),
        prop::option::weighted(0.3, 0i64..6),
        0u64..12,
        0u64..8,
        prop::bool::weighted(0.05),
        0u8..3,
    )
        .prop_map(
            |(zone, provider, start, len, expiry, cores, ram, gpu, prio)| Req {
                zone: if zone == 2 { 0 } else { zone },
                provider,
                start,
                len,
                expiry,
                cores,
                ram,
                gpu,
                prio,
            },
        )
}

pub(crate) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (prop::bool::weighted(0.5), 0usize..3, 0i64..30, prop::option::weighted(0.7, 1i64..20), 0u64..10, 0u64..6)
            .prop_map(|(increase, pool, start, len, cores, ram)| Op::Capacity { increase, pool, start, len, cores, ram }),
        5 => req().prop_map(Op::Create),
        2 => (0usize..16, req()).prop_map(|(i, r)| Op::Update(i, r)),
        1 => (0usize..16).prop_map(Op::Cancel),
        2 => (0usize..16, 0u64..5, 0u64..4, prop::option::of(1i64..30))
            .prop_map(|(pick, cores, ram, end)| Op::AllocReserved { pick, cores, ram, end }),
        2 => (0usize..3, prop::option::weighted(0.3, 0usize..2), 0u64..5, 0u64..4, prop::option::of(1i64..30), 0u8..3)
            .prop_map(|(zone, provider, cores, ram, end, prio)| Op::AllocFree { zone, provider, cores, ram, end, prio }),
        1 => (0usize..16).prop_map(Op::Destroy),
        3 => (0i64..8).prop_map(Op::Advance),
        1 => (1i64..6).prop_map(Op::Skip),
        1 => (0usize..3, prop::option::weighted(0.3, 0usize..2), prop::bool::ANY, 0u64..12)
            .prop_map(|(zone, provider, ram, below)| Op::Subscribe { zone, provider, ram, below }),
        1 => (0usize..4).prop_map(Op::Unsubscribe),
        2 => (0usize..3, prop::option::weighted(0.8, 0u64..14), prop::option::weighted(0.6, 0u64..8))
            .prop_map(|(pool, cores, ram)| Op::Declare { pool, cores, ram }),
        1 => (0usize..3).prop_map(Op::Retire),
        1 => (prop::option::of(0usize..2), 0i64..40, prop::option::of(1i64..30))
            .prop_map(|(zone, start, len)| Op::QueryCapacity { zone, start, len }),
        1 => req().prop_map(Op::Offer),
        1 => (0usize..2, 0u64..12, 0u64..8, 0i64..30, prop::option::of(1i64..20))
            .prop_map(|(zone, cores, ram, from, len)| Op::FindWindow { zone, cores, ram, from, len }),
    ]
}

pub(crate) fn policy() -> impl Strategy<Value = Policy> {
    (
        prop::option::of(Just(30u32)),
        prop::option::weighted(0.2, Just(1u32)),
        prop::option::weighted(0.2, Just(2u32)),
        prop::option::weighted(0.4, Just(90u32)),
        prop::sample::select(vec![0u64, 1800]),
        prop::bool::ANY,
        prop::bool::ANY,
    )
        .prop_map(|(dur, start, end, expiry, lead, a, b)| Policy {
            max_duration_hours: dur,
            max_future_start_days: start,
            max_future_end_days: end,
            default_expiry_minutes: expiry,
            expiry_notice_seconds: lead,
            preemption: Preemption {
                cancel_pending_reservations: a,
                terminate_unreserved_allocations: b,
            },
        })
}

fn prio(p: u8) -> Priority {
    [Priority::Low, Priority::Normal, Priority::High][usize::from(p % 3)]
}

fn at(now: i64, hours: i64) -> DateTime<Utc> {
    tm(now + hours * HOUR)
}

fn request(r: &Req, now: i64) -> ReservationRequest {
    let mut amounts = Amounts::new().with("cores", r.cores).with("ram", r.ram);
    if r.gpu {
        amounts = amounts.with("gpu", 1);
    }
    let mut q = ReservationRequest::new(ZONES[r.zone], amounts).priority(prio(r.prio));
    q.provider = r.provider.map(|p| ProviderId::new(format!("p{}", p + 1)));
    let start = r.start.unwrap_or(0);
    q.start = r.start.map(|s| at(now, s));
    q.end = r.len.map(|l| at(now, start + l));
    q.expiry = r.expiry.map(|e| at(now, start + e));
    q
}

fn pick_res(m: &Model, i: usize) -> ReservationId {
    if m.next_res == 0 {
        ReservationId(99)
    } else {
        ReservationId(1 + (i as u64) % m.next_res)
    }
}

fn pick_alloc(m: &Model, i: usize) -> AllocationId {
    if m.next_alloc == 0 {
        AllocationId(99)
    } else {
        AllocationId(1 + (i as u64) % m.next_alloc)
    }
}

fn compare(cal: &Calendar, m: &Model) -> Result<(), TestCaseError> {
    let state = cal.state();
    let want_r: Vec<Reservation> = m.res.keys().map(|id| m.view_res(*id)).collect();
    prop_assert_eq!(&state.reservations, &want_r);
    let want_a: Vec<Allocation> = m.allocs.keys().map(|id| m.view_alloc(*id)).collect();
    prop_assert_eq!(&state.allocations, &want_a);
    prop_assert_eq!(&state.declared, &m.declared_pools());
    m.check_invariant().map_err(TestCaseError::fail)?;
    Ok(())
}

/// Every command a run attempted, with its `now` and what the calendar answered.
pub(crate) type Trace = Vec<(DateTime<Utc>, Command, Result<Outcome, CalendarError>)>;

/// Runs `ops` against the calendar and the oracle, checking every answer; returns the
/// attempted commands with their results and the final calendar.
pub(crate) fn run(policy: Policy, ops: Vec<Op>) -> Result<(Trace, Calendar), TestCaseError> {
    let mut cal = Calendar::new(policy.clone());
    let mut m = Model::new(policy.clone());
    let mut now = tk(t0());
    let mut log = Vec::new();
    let mut trace = Trace::new();
    let base = [
        Command::IncreaseCapacity(CapacityChange {
            pool: PoolKey::new("z1", "p1"),
            start: tm(now),
            end: None,
            amounts: Amounts::new().with("cores", 10).with("ram", 8),
        }),
        Command::Subscribe(ThresholdSubscription {
            zone: ZoneId::new("z1"),
            provider: None,
            dimension: Dimension::vcpu(),
            below: 3,
        }),
    ];
    for cmd in base {
        let raw = cal.apply(cmd.clone(), tm(now));
        trace.push((tm(now), cmd.clone(), raw.clone()));
        let got = raw.map(|o| (o.applied, o.events)).map_err(|e| kind(&e));
        prop_assert_eq!(&got, &m.apply(&cmd, now));
        log.push(LogEntry {
            at: tm(now),
            command: cmd,
        });
    }
    for op in ops {
        let cmd = match &op {
            Op::Capacity {
                increase,
                pool,
                start,
                len,
                cores,
                ram,
            } => {
                let (z, p) = POOLS[*pool];
                let c = CapacityChange {
                    pool: PoolKey::new(z, p),
                    start: at(now, *start),
                    end: len.map(|l| at(now, start + l)),
                    amounts: Amounts::new().with("cores", *cores).with("ram", *ram),
                };
                if *increase {
                    Command::IncreaseCapacity(c)
                } else {
                    Command::DecreaseCapacity(c)
                }
            }
            Op::Create(r) => Command::CreateReservation(request(r, now)),
            Op::Update(i, r) => {
                let id = pick_res(&m, *i);
                let mut q = request(r, now);
                // Half of the updates keep the start (allowed for active reservations).
                if r.prio == 0
                    && let Some(old) = cal.request_of(id)
                {
                    q.start = old.start;
                    q.end = old.end;
                }
                Command::UpdateReservation { id, request: q }
            }
            Op::Cancel(i) => Command::CancelReservation {
                id: pick_res(&m, *i),
            },
            Op::AllocReserved {
                pick,
                cores,
                ram,
                end,
            } => {
                let mut a = AllocationRequest::reserved(
                    pick_res(&m, *pick),
                    Amounts::new().with("cores", *cores).with("ram", *ram),
                );
                a.end = end.map(|e| at(now, e));
                Command::CreateAllocation(a)
            }
            Op::AllocFree {
                zone,
                provider,
                cores,
                ram,
                end,
                prio: p,
            } => {
                let mut a = AllocationRequest::unreserved(
                    ZONES[*zone],
                    Amounts::new().with("cores", *cores).with("ram", *ram),
                )
                .priority(prio(*p));
                a.provider = provider.map(|p| ProviderId::new(format!("p{}", p + 1)));
                a.end = end.map(|e| at(now, e));
                Command::CreateAllocation(a)
            }
            Op::Destroy(i) => Command::DestroyAllocation {
                id: pick_alloc(&m, *i),
            },
            Op::Advance(hours) => {
                now += hours * HOUR + if *hours % 3 == 1 { 30 * MINUTE } else { 0 };
                Command::Advance
            }
            Op::Skip(hours) => {
                now += hours * HOUR - if *hours % 2 == 1 { 15 * MINUTE } else { 0 };
                continue;
            }
            Op::Subscribe {
                zone,
                provider,
                ram,
                below,
            } => Command::Subscribe(ThresholdSubscription {
                zone: ZoneId::new(ZONES[*zone]),
                provider: provider.map(|p| ProviderId::new(format!("p{}", p + 1))),
                dimension: if *ram {
                    Dimension::ram_mib()
                } else {
                    Dimension::vcpu()
                },
                below: *below,
            }),
            Op::Unsubscribe(i) => Command::Unsubscribe {
                id: SubscriptionId(1 + (*i as u64) % m.next_sub.max(1)),
            },
            Op::Declare { pool, cores, ram } => {
                let (z, p) = POOLS[*pool];
                let mut amounts = Amounts::new();
                if let Some(c) = cores {
                    amounts.set(Dimension::vcpu(), *c);
                }
                if let Some(r) = ram {
                    amounts.set(Dimension::ram_mib(), *r);
                }
                Command::DeclareCapacity(Declaration {
                    pool: PoolKey::new(z, p),
                    amounts,
                })
            }
            Op::Retire(pool) => {
                let (z, p) = POOLS[*pool];
                Command::RetirePool {
                    pool: PoolKey::new(z, p),
                }
            }
            Op::QueryCapacity { zone, start, len } => {
                let s = now + start * HOUR;
                let e = len.map_or(OPEN, |l| s + l * HOUR);
                let z = zone.map(|z| ZoneId::new(ZONES[z]));
                let got = cal
                    .query_capacity(&CapacityQuery {
                        zone: z.clone(),
                        provider: None,
                        window: Window {
                            start: tm(s),
                            end: et(e),
                        },
                        timeline: true,
                    })
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                // An open window reports up to the last change; the oracle stops at the last breakpoint too.
                prop_assert_eq!(got, m.capacity_report(z.as_ref(), s, e));
                continue;
            }
            Op::Offer(r) => {
                let q = request(r, now);
                let got = cal.offer(&q, tm(now)).map_err(|e| kind(&e));
                let want = m.spec(&q, now, None).and_then(|spec| {
                    let pools = m.candidate_pools(&q.zone, q.provider.as_ref())?;
                    Ok(pools
                        .iter()
                        .map(|p| m.offer(p, spec.start, spec.end, &spec.qty, &Excl::new()))
                        .collect::<Vec<_>>())
                });
                prop_assert_eq!(got, want);
                let check = cal.check_reservation(&q, tm(now)).map_err(|e| kind(&e));
                let want = m.spec(&q, now, None).and_then(|spec| {
                    let pools = m.candidate_pools(&q.zone, q.provider.as_ref())?;
                    if !m.unknown(&spec.qty)
                        && let Some(p) = pools
                            .iter()
                            .find(|p| m.fits(p, spec.start, spec.end, &spec.qty, &Excl::new()))
                    {
                        return Ok(p.clone());
                    }
                    Err(m.conflict(&pools, spec.start, spec.end, &spec.qty, &Excl::new()))
                });
                prop_assert_eq!(check, want);
                continue;
            }
            Op::FindWindow {
                zone,
                cores,
                ram,
                from,
                len,
            } => {
                let amounts = Amounts::new().with("cores", *cores).with("ram", *ram);
                let s0 = now + from * HOUR;
                let got = cal
                    .find_window(&WindowQuery {
                        zone: ZoneId::new(ZONES[*zone]),
                        provider: None,
                        amounts: amounts.clone(),
                        not_before: tm(s0),
                        duration: len.map(TimeDelta::hours),
                    })
                    .map_err(|e| kind(&e));
                let want = m
                    .candidate_pools(&ZoneId::new(ZONES[*zone]), None)
                    .map(|pools| {
                        let need = q_of(&amounts);
                        let dur = len.map(|l| l * HOUR);
                        pools
                            .iter()
                            .filter_map(|p| {
                                m.earliest(p, s0, dur, &need, &Excl::new())
                                    .map(|s| (s, p.clone()))
                            })
                            .min_by_key(|(s, _)| *s)
                            .map(|(s, p)| FoundWindow {
                                pool: p,
                                window: Window {
                                    start: tm(s),
                                    end: dur.map(|d| tm(s + d)),
                                },
                            })
                    });
                prop_assert_eq!(got, want);
                continue;
            }
        };
        let raw = cal.apply(cmd.clone(), tm(now));
        trace.push((tm(now), cmd.clone(), raw.clone()));
        let got = raw.map(|o| (o.applied, o.events)).map_err(|e| kind(&e));
        let want = m.apply(&cmd, now);
        prop_assert_eq!(&got, &want, "command {:?}", cmd);
        if got.is_ok() {
            log.push(LogEntry {
                at: tm(now),
                command: cmd,
            });
        }
        compare(&cal, &m)?;
    }
    // Replaying the successful commands reproduces the state.
    let replayed = Calendar::replay(policy, log).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(replayed.state(), cal.state());
    Ok((trace, cal))
}

/// Mostly creations and advances of every length, with clock-moving commands and several
/// subscriptions: many threshold crossings between two advances.
fn threshold_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => req().prop_map(Op::Create),
        1 => (0usize..16).prop_map(Op::Cancel),
        1 => (0usize..16, 0u64..5, 0u64..4, prop::option::of(1i64..30))
            .prop_map(|(pick, cores, ram, end)| Op::AllocReserved { pick, cores, ram, end }),
        1 => (0usize..2, prop::option::weighted(0.3, 0usize..2), 0u64..5, 0u64..4, prop::option::of(1i64..12), 0u8..3)
            .prop_map(|(zone, provider, cores, ram, end, prio)| Op::AllocFree { zone, provider, cores, ram, end, prio }),
        1 => (prop::bool::weighted(0.5), 0usize..3, 0i64..30, prop::option::weighted(0.7, 1i64..20), 0u64..10, 0u64..6)
            .prop_map(|(increase, pool, start, len, cores, ram)| Op::Capacity { increase, pool, start, len, cores, ram }),
        3 => (0i64..30).prop_map(Op::Advance),
        1 => (1i64..12).prop_map(Op::Skip),
        2 => (0usize..3, prop::option::weighted(0.3, 0usize..2), prop::bool::ANY, 0u64..12)
            .prop_map(|(zone, provider, ram, below)| Op::Subscribe { zone, provider, ram, below }),
        1 => (0usize..4).prop_map(Op::Unsubscribe),
        1 => (0usize..3, prop::option::weighted(0.8, 0u64..14), prop::option::weighted(0.6, 0u64..8))
            .prop_map(|(pool, cores, ram)| Op::Declare { pool, cores, ram }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn calendar_agrees_with_naive_oracle(policy in policy(), ops in prop::collection::vec(op(), 1..40)) {
        run(policy, ops)?;
    }

    /// Threshold crossings between two advances (or clock-moving commands) match a naive
    /// evaluator sampling every breakpoint instant, event for event.
    #[test]
    fn threshold_crossings_agree_with_naive_oracle(policy in policy(), ops in prop::collection::vec(threshold_op(), 1..40)) {
        run(policy, ops)?;
    }
}
