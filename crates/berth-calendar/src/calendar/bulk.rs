//! Sorted bulk loading of reservations, exactly equal to creating them one by one.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::{Calendar, OPEN, Spec, tick};
use crate::error::CalendarError;
use crate::model::{Applied, Outcome, RecordRef, ReservationRequest};
use crate::profile::{CAP, Levels, RES, UNRES};
use crate::types::ReservationId;

/// Breakpoints of one profile: key, level changes, references.
type Entries = Vec<(i64, Levels, u32)>;

/// A load found to fit: each request's pool and spec, and each touched profile's new content.
struct Plan {
    specs: Vec<(u32, Spec)>,
    profiles: Vec<((u32, u16), Entries)>,
}

/// Maximal spans `[a, b)` where available is negative, in order; `None` on overflow.
fn negative_spans(entries: &[(i64, Levels, u32)]) -> Option<Vec<(i64, i64)>> {
    let mut spans: Vec<(i64, i64)> = Vec::new();
    let mut level = 0i64;
    for (i, (k, l, _)) in entries.iter().enumerate() {
        let d = l[CAP].checked_sub(l[RES])?.checked_sub(l[UNRES])?;
        level = level.checked_add(d)?;
        if level < 0 {
            let next = entries.get(i + 1).map_or(OPEN, |e| e.0);
            match spans.last_mut() {
                Some((_, b)) if *b == *k => *b = next,
                _ => spans.push((*k, next)),
            }
        }
    }
    Some(spans)
}

/// Whether `[start, end)` meets one of the ordered, disjoint `spans`.
fn meets(spans: &[(i64, i64)], start: i64, end: i64) -> bool {
    let i = spans.partition_point(|&(_, b)| b <= start);
    spans.get(i).is_some_and(|&(a, _)| a < end)
}

impl Calendar {
    /// Creates `requests` in order at `now`, with exactly the results, ids, events and final
    /// state of calling [`Calendar::create_reservation`] on each in turn (so a log of one
    /// `CreateReservation` command per success replays it). Meant for loading many
    /// reservations at once: benchmarks, or a daemon restoring its records.
    ///
    /// When every request is valid and all of them fit *together* in the first pool of their
    /// zone, they are loaded with one sorted merge per touched profile, O(breakpoints +
    /// m log m) for m requests; otherwise they are created one by one. The fast path is exact
    /// because a reservation only adds holds: if available stays `>= 0` over every request's
    /// window with all of them in, each one fitted when its turn came, in its first candidate
    /// pool, and nothing was preempted. Subscriptions send it the slow way (their threshold
    /// events are per command).
    pub fn create_reservations(
        &mut self,
        requests: Vec<ReservationRequest>,
        now: DateTime<Utc>,
    ) -> Vec<Result<(ReservationId, Outcome), CalendarError>> {
        match self.bulk_plan(&requests, tick(now)) {
            Some(plan) => self.bulk_commit(requests, plan, tick(now)),
            None => requests
                .into_iter()
                .map(|r| self.create_reservation(r, now))
                .collect(),
        }
    }

    /// Checks that the whole load fits as argued on [`Calendar::create_reservations`]; `None`
    /// sends it the one-by-one way. Changes nothing.
    fn bulk_plan(&self, requests: &[ReservationRequest], now: i64) -> Option<Plan> {
        if requests.is_empty() || !self.subs.is_empty() || self.clock.is_some_and(|c| now < c) {
            return None;
        }
        let mut specs = Vec::with_capacity(requests.len());
        // (pool, dimension, key, change of reserved)
        let mut points: Vec<(u32, u16, i64, i64)> = Vec::new();
        for req in requests {
            let (spec, unknown) = self.spec(req, now, None).ok()?;
            let pool = *self
                .candidate_pools(&req.zone, req.provider.as_ref())
                .ok()?
                .first()?;
            if !unknown.is_empty() {
                return None;
            }
            for &(d, q) in &spec.qty {
                self.profile(pool, d)?;
                points.push((pool, d, spec.start, q));
                if spec.end != OPEN {
                    points.push((pool, d, spec.end, -q));
                }
            }
            specs.push((pool, spec));
        }
        points.sort_unstable_by_key(|&(p, d, k, _)| (p, d, k));
        let mut adds: BTreeMap<(u32, u16), Entries> = BTreeMap::new();
        for (p, d, k, q) in points {
            let list = adds.entry((p, d)).or_default();
            match list.last_mut() {
                Some(e) if e.0 == k => {
                    e.1[RES] = e.1[RES].checked_add(q)?;
                    e.2 = e.2.checked_add(1)?;
                }
                _ => list.push((k, [0, q, 0, 0], 1)),
            }
        }
        let mut profiles = Vec::with_capacity(adds.len());
        let mut spans = BTreeMap::new();
        for ((p, d), list) in adds {
            let merged = self.profile(p, d)?.merged(&list)?;
            spans.insert((p, d), negative_spans(&merged)?);
            profiles.push(((p, d), merged));
        }
        for (pool, spec) in &specs {
            for &(d, _) in &spec.qty {
                if meets(spans.get(&(*pool, d))?, spec.start, spec.end) {
                    return None;
                }
            }
        }
        Some(Plan { specs, profiles })
    }

    fn bulk_commit(
        &mut self,
        requests: Vec<ReservationRequest>,
        plan: Plan,
        now: i64,
    ) -> Vec<Result<(ReservationId, Outcome), CalendarError>> {
        let mut out = Vec::with_capacity(requests.len());
        let mut timers = Vec::new();
        let mut live = Vec::new();
        for (req, (pool, spec)) in requests.into_iter().zip(plan.specs) {
            let id = ReservationId(self.next_res + 1);
            self.next_res += 1;
            let start = spec.start;
            let mut events = Vec::new();
            self.insert_reservation(id, pool, spec, req, now, &mut events);
            if let Some(r) = self.reservations.get(&id) {
                timers.extend(r.timers(id.0));
            }
            live.push((pool, start, RecordRef::Reservation(id)));
            let applied = Applied::ReservationCreated {
                id,
                pool: self.pools[pool as usize].key.clone(),
                preempted: Vec::new(),
            };
            out.push(Ok((id, Outcome { applied, events })));
        }
        for ((p, d), entries) in plan.profiles {
            self.pools[p as usize]
                .profiles
                .entry(d)
                .or_default()
                .build(&entries);
        }
        self.insert_indexes(timers, live);
        self.clock = Some(now);
        out
    }
}

impl Calendar {
    /// Adds many timers and live-index entries. One by one in sorted order (cheap: the
    /// insertion path stays in cache); not `append` or `collect`: those pack the std B-tree
    /// nodes full, and then every later insert splits a node that the matching remove merges
    /// back.
    pub(super) fn insert_indexes(
        &mut self,
        mut timers: Vec<(i64, u8, u64)>,
        mut live: Vec<(u32, i64, RecordRef)>,
    ) {
        timers.sort_unstable();
        for t in timers {
            self.timers.insert(t);
        }
        live.sort_unstable();
        for (p, start, r) in live {
            self.pools[p as usize].live.insert((start, r));
        }
    }
}
