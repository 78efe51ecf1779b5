//! Preemption: choosing lower-priority victims and evicting them.

use std::cmp::Reverse;

use super::{Calendar, Qty, Spec, get, time};
use crate::model::{
    AllocationState, CancelReason, Event, RecordRef, ReservationState, TerminationReason,
};
use crate::types::{Priority, ReservationId};

impl Calendar {
    pub(super) fn victims(
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

    /// Finds a minimal greedy set of victims making `spec` fit in `pool`; the profile is left
    /// exactly as found.
    pub(super) fn find_victims(
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

    pub(super) fn preempt(
        &mut self,
        victims: &[RecordRef],
        by: ReservationId,
        now: i64,
        ev: &mut Vec<Event>,
    ) {
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
}
