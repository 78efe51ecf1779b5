//! Allocation commands: create, destroy, and ending an allocation.

use super::{AllocRec, Calendar, Spec, add_into, get, tick, time};
use crate::error::CalendarError;
use crate::model::{
    AllocationRequest, AllocationState, Applied, Event, RecordRef, ReservationState,
    TerminationReason,
};
use crate::profile::OPEN;
use crate::types::{AllocationId, Priority};

impl Calendar {
    /// Ends a live allocation; updates its reservation (and its hold after expiry).
    pub(super) fn end_allocation(
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

    pub(super) fn create_allocation_at(
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

    pub(super) fn destroy_allocation_at(
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
}
