//! Records behind the calendar (pools, reservations, allocations) and their share of the profiles.

use std::collections::{BTreeMap, BTreeSet};

use super::timers::{T_ALLOC_END, T_EXPIRY, T_RES_END, T_SOON, T_START};
use super::{Calendar, Qty};
use crate::model::{
    AllocationState, CancelReason, RecordRef, ReservationState, TerminationReason,
    ThresholdSubscription,
};
use crate::profile::{Levels, OPEN, Profile};
use crate::types::{AllocationId, ElementId, PoolKey, Priority, ReservationId, TenantId};

/// A record's share of the profiles: pool, start, end and the level changes per dimension.
pub(super) type Contribution = (u32, i64, i64, Vec<(u16, Levels)>);

/// One accepted capacity change of one dimension: `change` (negative for a decrease) over
/// `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct CapacityStep {
    pub(super) dim: u16,
    pub(super) start: i64,
    pub(super) end: i64,
    pub(super) change: i64,
}

#[derive(Clone, Debug)]
pub(super) struct Pool {
    pub(super) key: PoolKey,
    pub(super) profiles: BTreeMap<u16, Profile>,
    pub(super) increases: BTreeMap<u16, u64>,
    /// Every capacity change in order: the capacity part of the profiles, kept for snapshots.
    pub(super) history: Vec<CapacityStep>,
    /// Records contributing to the profiles, by start.
    pub(super) live: BTreeSet<(i64, RecordRef)>,
    /// The capacity its source last declared (positive quantities), if it ever did.
    pub(super) declared: Option<Qty>,
    /// When it was retired, unless it sells again since.
    pub(super) retired: Option<i64>,
}

impl Pool {
    /// A pool with nothing in it yet.
    pub(super) fn new(key: PoolKey) -> Pool {
        Pool {
            key,
            profiles: BTreeMap::new(),
            increases: BTreeMap::new(),
            history: Vec::new(),
            live: BTreeSet::new(),
            declared: None,
            retired: None,
        }
    }
}

#[derive(Clone, Debug)]
pub(super) struct ResRec {
    pub(super) pool: u32,
    pub(super) start: i64,
    pub(super) end: i64,
    pub(super) expiry: Option<i64>,
    pub(super) soon: Option<i64>,
    pub(super) amounts: Qty,
    pub(super) allocated: Qty,
    pub(super) released: Qty,
    pub(super) priority: Priority,
    pub(super) tenant: Option<TenantId>,
    pub(super) attributes: BTreeMap<String, String>,
    pub(super) elements: BTreeSet<ElementId>,
    pub(super) state: ReservationState,
    pub(super) cancel_reason: Option<CancelReason>,
    pub(super) at_risk: bool,
    pub(super) allocations: Vec<AllocationId>,
    pub(super) created: i64,
    pub(super) modified: i64,
}

impl ResRec {
    #[inline]
    pub(super) fn live(&self) -> bool {
        matches!(
            self.state,
            ReservationState::Initialized | ReservationState::Active | ReservationState::Expired
        )
    }

    #[inline]
    pub(super) fn hold(&self) -> &Qty {
        if self.state == ReservationState::Expired {
            &self.allocated
        } else {
            &self.amounts
        }
    }

    pub(super) fn contrib(&self) -> Vec<(u16, Levels)> {
        self.hold()
            .iter()
            .map(|&(d, q)| (d, [0, q, 0, 0]))
            .collect()
    }

    pub(super) fn timers(&self, id: u64) -> Vec<(i64, u8, u64)> {
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
pub(super) struct AllocRec {
    pub(super) pool: u32,
    pub(super) reservation: Option<ReservationId>,
    pub(super) amounts: Qty,
    pub(super) start: i64,
    pub(super) end: i64,
    pub(super) own_end: i64,
    pub(super) priority: Priority,
    pub(super) state: AllocationState,
    pub(super) termination: Option<TerminationReason>,
    pub(super) at_risk: bool,
}

impl AllocRec {
    pub(super) fn contrib(&self) -> Vec<(u16, Levels)> {
        let unres = i64::from(self.reservation.is_none());
        self.amounts
            .iter()
            .map(|&(d, q)| (d, [0, 0, q * unres, q]))
            .collect()
    }

    /// Own end timer: only when the allocation stops before its reservation does.
    pub(super) fn timer(&self, id: u64) -> Option<(i64, u8, u64)> {
        let follows = self.reservation.is_some() && self.own_end >= self.end;
        (self.state == AllocationState::Active && self.end != OPEN && !follows).then_some((
            self.end,
            T_ALLOC_END,
            id,
        ))
    }
}

#[derive(Clone, Debug)]
pub(super) struct Sub {
    pub(super) spec: ThresholdSubscription,
    pub(super) below: bool,
}

pub(super) fn contrib_apply(
    pool: &mut Pool,
    start: i64,
    end: i64,
    deltas: &[(u16, Levels)],
    add: bool,
) {
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
    #[inline]
    pub(super) fn record_contrib(&self, r: RecordRef) -> Option<Contribution> {
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

    #[inline]
    pub(super) fn toggle(&mut self, r: RecordRef, add: bool) {
        if let Some((pool, s, e, c)) = self.record_contrib(r) {
            contrib_apply(&mut self.pools[pool as usize], s, e, &c, add);
        }
    }

    pub(super) fn index(&mut self, r: RecordRef, add: bool) {
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
    pub(super) fn detach(&mut self, r: RecordRef) {
        self.toggle(r, false);
        self.index(r, false);
        self.schedule(r, false);
    }

    /// Puts a live record into profile, index and timers (after changing it).
    pub(super) fn attach(&mut self, r: RecordRef) {
        self.toggle(r, true);
        self.index(r, true);
        self.schedule(r, true);
    }
}
