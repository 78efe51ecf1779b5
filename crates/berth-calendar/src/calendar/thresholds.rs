//! Capacity-threshold subscriptions: every crossing between two clock values, reported at the
//! instant it happens, found by walking the watched profiles' breakpoints in time order.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use super::{Calendar, time};
use crate::model::{Event, ThresholdSubscription};
use crate::types::SubscriptionId;

/// The subscriptions' below-states while the clock moves, with the next breakpoint of every
/// watched profile. Built at the previous clock, committed once the command succeeded.
pub(super) struct Watch {
    /// Subscriptions in id order with their below-state so far.
    subs: Vec<(SubscriptionId, bool)>,
    /// Per watched (pool, dimension) profile, the subscriptions (indices into `subs`) that
    /// sum it.
    watchers: Vec<((u32, u16), Vec<usize>)>,
    /// Next breakpoint of each watched profile, earliest first. Timers only ever remove
    /// breakpoints (never add one ahead of the clock), so a key here may have gone since it
    /// was read; popping it then costs one idle evaluation, never a missed crossing.
    next: BinaryHeap<Reverse<(i64, usize)>>,
}

impl Watch {
    fn peek(&self) -> Option<i64> {
        self.next.peek().map(|Reverse((k, _))| *k)
    }
}

impl Calendar {
    /// Available of the subscription's dimension at `t`, summed over its pools (0 when it
    /// names no pool or no known dimension).
    pub(super) fn sub_avail(&self, spec: &ThresholdSubscription, t: i64) -> i64 {
        let Some(&d) = self.dim_ix.get(&spec.dimension) else {
            return 0;
        };
        self.candidate_pools(&spec.zone, spec.provider.as_ref())
            .unwrap_or_default()
            .iter()
            .map(|&p| self.profile(p, d).map_or(0, |pr| pr.avail_at(t)))
            .sum()
    }

    /// The watch at `from`: current below-states, watched profiles and their first
    /// breakpoints after `from`. O(s·p + w log n) for s subscriptions over p pools and w
    /// watched profiles.
    pub(super) fn watch(&self, from: i64) -> Watch {
        let mut index: BTreeMap<(u32, u16), usize> = BTreeMap::new();
        let mut watchers: Vec<((u32, u16), Vec<usize>)> = Vec::new();
        let mut subs = Vec::with_capacity(self.subs.len());
        for (i, (id, sub)) in self.subs.iter().enumerate() {
            subs.push((*id, sub.below));
            let Some(&d) = self.dim_ix.get(&sub.spec.dimension) else {
                continue;
            };
            let pools = self
                .candidate_pools(&sub.spec.zone, sub.spec.provider.as_ref())
                .unwrap_or_default();
            for p in pools {
                if self.profile(p, d).is_none() {
                    continue;
                }
                let slot = *index.entry((p, d)).or_insert_with(|| {
                    watchers.push(((p, d), Vec::new()));
                    watchers.len() - 1
                });
                watchers[slot].1.push(i);
            }
        }
        let next = watchers
            .iter()
            .enumerate()
            .filter_map(|(slot, ((p, d), _))| {
                let k = self.profile(*p, *d)?.next_after(from)?;
                Some(Reverse((k, slot)))
            })
            .collect();
        Watch {
            subs,
            watchers,
            next,
        }
    }

    /// Takes the breakpoints at `at` off the heap (queueing each profile's next one) and
    /// returns the profiles they belong to.
    fn pop_at(&self, w: &mut Watch, at: i64) -> Vec<usize> {
        let mut touched = Vec::new();
        while let Some(&Reverse((k, slot))) = w.next.peek()
            && k == at
        {
            w.next.pop();
            touched.push(slot);
            let ((p, d), _) = w.watchers[slot];
            if let Some(n) = self.profile(p, d).and_then(|pr| pr.next_after(at)) {
                w.next.push(Reverse((n, slot)));
            }
        }
        touched
    }

    /// Evaluates the subscriptions at `at` — all of them, or those summing one of the
    /// `touched` profiles — and reports each change of side, in subscription order.
    fn evaluate(&self, w: &mut Watch, touched: Option<&[usize]>, at: i64, ev: &mut Vec<Event>) {
        let mut which: Vec<usize> = match touched {
            None => (0..w.subs.len()).collect(),
            Some(slots) => slots
                .iter()
                .flat_map(|&s| w.watchers[s].1.iter().copied())
                .collect(),
        };
        which.sort_unstable();
        which.dedup();
        for i in which {
            let (id, was) = w.subs[i];
            let Some(sub) = self.subs.get(&id) else {
                continue;
            };
            let spec = &sub.spec;
            let available = self.sub_avail(spec, at);
            let below = available < i64::try_from(spec.below).unwrap_or(i64::MAX);
            if below != was {
                w.subs[i].1 = below;
                ev.push(Event::CapacityThreshold {
                    at: time(at),
                    subscription: id,
                    zone: spec.zone.clone(),
                    dimension: spec.dimension.clone(),
                    available,
                    below,
                });
            }
        }
    }

    /// Crossings at the breakpoints strictly before `until`, from the profiles as they stand
    /// (no timer fires): the clock move of a command other than `advance`.
    pub(super) fn walk_until(&self, w: &mut Watch, until: i64, ev: &mut Vec<Event>) {
        while let Some(k) = w.peek()
            && k < until
        {
            let touched = self.pop_at(w, k);
            self.evaluate(w, Some(&touched), k, ev);
        }
    }

    /// `advance`: timers and crossings up to `now` in time order. Timers a clock-moving
    /// command left due fire first, and what they release counts from the clock on; then
    /// every instant in `(clock, now]` holding a timer or a watched breakpoint is visited,
    /// its timers fired and the subscriptions evaluated after them. O((t + k) log n) for t
    /// timers and k breakpoints (times the subscriptions and pools watching them).
    pub(super) fn advance_to(&mut self, now: i64, ev: &mut Vec<Event>) {
        let Some(clock) = self.clock else {
            // Nothing applied yet: no records, no timers, no subscriptions.
            self.fire_due(now, ev);
            return;
        };
        let mut w = self.watch(clock);
        if self.fire_due(clock, ev) {
            self.evaluate(&mut w, None, clock, ev);
        }
        loop {
            let timer = self.timers.first().map(|t| t.0).filter(|t| *t <= now);
            let breakpoint = w.peek().filter(|k| *k <= now);
            let Some(at) = timer.into_iter().chain(breakpoint).min() else {
                break;
            };
            let fired = self.fire_due(at, ev);
            let touched = self.pop_at(&mut w, at);
            self.evaluate(&mut w, (!fired).then_some(&touched[..]), at, ev);
        }
        self.commit(w);
    }

    /// Stores the below-states a walk ended with (subscriptions removed meanwhile are gone).
    pub(super) fn commit(&mut self, w: Watch) {
        for (id, below) in w.subs {
            if let Some(s) = self.subs.get_mut(&id) {
                s.below = below;
            }
        }
    }

    /// Evaluates every subscription at `now`, after the command: what the command itself
    /// changed at `now` is reported here, at `now`.
    pub(super) fn eval_thresholds(&mut self, now: i64, ev: &mut Vec<Event>) {
        let mut w = Watch {
            subs: self.subs.iter().map(|(id, s)| (*id, s.below)).collect(),
            watchers: Vec::new(),
            next: BinaryHeap::new(),
        };
        self.evaluate(&mut w, None, now, ev);
        self.commit(w);
    }
}
