//! Reservation commands: create, update, cancel, and closing a reservation.

use super::{Calendar, ResRec, Spec, get, time};
use crate::error::CalendarError;
use crate::model::{
    AllocationState, Applied, CancelReason, Event, RecordRef, ReservationRequest, ReservationState,
    TerminationReason,
};
use crate::types::{AllocationId, ReservationId};

impl Calendar {
    /// Moves a live reservation to a final state, terminating its live allocations.
    pub(super) fn close_reservation(
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

    pub(super) fn create_reservation_at(
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
    pub(super) fn insert_reservation(
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

    pub(super) fn update_reservation_at(
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
        // Started means the start has passed, even before `Advance` marks it active:
        // allocations may already hold it from that start.
        let locked = (r.state == ReservationState::Active || r.start <= now).then_some(r.start);
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

    pub(super) fn cancel_reservation_at(
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
        ev.push(Event::ReservationCancelled {
            at: time(now),
            reservation: id,
            terminated: terminated.clone(),
        });
        Ok(Applied::ReservationCancelled { id, terminated })
    }
}
