//! Timers: scheduling starts, notices, expiries and ends, and firing them in order.

use super::{Calendar, add_into, time};
use crate::model::{AllocationState, Event, RecordRef, ReservationState, TerminationReason};
use crate::types::{AllocationId, ReservationId};

// Timer kinds, in processing order at one instant: ends before starts (half-open windows).
pub(super) const T_ALLOC_END: u8 = 0;
pub(super) const T_RES_END: u8 = 1;
pub(super) const T_START: u8 = 2;
pub(super) const T_SOON: u8 = 3;
pub(super) const T_EXPIRY: u8 = 4;

impl Calendar {
    pub(super) fn schedule(&mut self, r: RecordRef, add: bool) {
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

    /// Fires every timer due at or before `upto`, in order; whether any fired.
    pub(super) fn fire_due(&mut self, upto: i64, ev: &mut Vec<Event>) -> bool {
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
    pub(super) fn fire(&mut self, (t, kind, raw): (i64, u8, u64), ev: &mut Vec<Event>) {
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
