//! Commands spanning partitions (a plan's reservations in several zones), committed all or
//! nothing in ONE store transaction: one append per touched stream (`also_append`), each at
//! the head this daemon's replica of the partition reached, and one fence per touched
//! partition with a lease, at the lease's current token.
//!
//! Any daemon may run it, holder of the partitions or not: the compare-and-set of every head
//! makes it fail (`Conflict`) if anyone appended to a touched stream since the check, and the
//! fences make it fail (`Fenced`) if a lease changed hands since its token was read, so it
//! never interleaves with a holder's commits nor lands after a takeover. A holder whose own
//! append then conflicts rebuilds from the log and re-checks, as after any other writer.
//! Partitions are locked in name order (the store locks streams and leases in name order),
//! so two spanning commits never wait on each other in a circle. On any failure every touched
//! calendar is rebuilt from the store: nothing is half-applied in memory or in the store.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use berth_calendar::{Calendar, Command, Event, LogEntry, Outcome};
use berth_store::{
    Append, BatchOutcome, Fence, IdempotentResponse, RecordKind, StoreError, WriteBatch,
};
use chrono::{DateTime, Utc};
use tokio::sync::MutexGuard;

use super::writer::apply_all;
use super::{Committed, IdempotencyKey, Inner, MAX_ATTEMPTS, Part, ReservationService};
use crate::ServiceError;
use crate::changes::Change;

/// Commits `commands` (grouped by partition: indexes into `commands`) in one transaction;
/// with `idem`, at most once under that key. Returns the outcomes in the commands' order and
/// whether this call applied them (`false`: the key was used before).
pub(super) async fn commit(
    svc: &ReservationService,
    groups: BTreeMap<String, Vec<usize>>,
    commands: Vec<Command>,
    idem: Option<IdempotencyKey>,
) -> Result<(Vec<Committed>, bool), ServiceError> {
    let mut parts: Vec<(String, Arc<Part>)> = Vec::new();
    let mut index: Vec<Vec<usize>> = Vec::new();
    for (name, idx) in groups {
        let part = svc
            .open_part(Some(name.clone()).filter(|n| !n.is_empty()))
            .await?;
        parts.push((name, part));
        index.push(idx);
    }
    let compute = |i: usize, cal: &mut Calendar, now| {
        let cmds: Vec<Command> = index[i].iter().map(|j| commands[*j].clone()).collect();
        let outcomes = apply_all(cal, &cmds, now)?;
        let events = outcomes
            .iter()
            .flat_map(|o| o.events.iter().cloned())
            .collect();
        Ok(Computed {
            commands: cmds,
            events,
            value: outcomes,
        })
    };
    let partition_of = |i: usize| svc.opts.partition_key.map(|_| parts[i].0.clone());
    // The stored answer of a key is the first command's outcome, as for one partition.
    let respond = |outs: &[Vec<Outcome>]| -> Result<serde_json::Value, ServiceError> {
        let first = index
            .iter()
            .enumerate()
            .find_map(|(i, idx)| idx.iter().position(|j| *j == 0).map(|k| (i, k)));
        let (partition, outcome) = match first {
            Some((i, k)) => (partition_of(i), outs[i].get(k)),
            None => (None, None),
        };
        Ok(super::partitions::wrap_response(
            partition.as_deref(),
            serde_json::to_value(outcome).map_err(ServiceError::store)?,
        ))
    };
    let Some(per_part) = commit_with(svc, &parts, idem.as_ref(), compute, respond).await? else {
        return Ok((Vec::new(), false));
    };
    let mut outcomes: Vec<Option<Committed>> = vec![None; commands.len()];
    for (i, outs) in per_part.into_iter().enumerate() {
        for (j, outcome) in index[i].iter().zip(outs) {
            outcomes[*j] = Some(Committed {
                outcome,
                replayed: false,
                partition: partition_of(i),
            });
        }
    }
    let out: Option<Vec<Committed>> = outcomes.into_iter().collect();
    out.map(|o| (o, true))
        .ok_or_else(|| ServiceError::store("a spanning command has no outcome"))
}

/// What one calendar of a spanning commit applied: the commands to log (already applied to
/// the calendar), the events they raised, and what the caller wants back.
pub(super) struct Computed<T> {
    pub(super) commands: Vec<Command>,
    pub(super) events: Vec<Event>,
    pub(super) value: T,
}

/// The spanning protocol with the commands worked out under the partitions' locks, from each
/// calendar as it stands at the head of its stream: `compute(i, calendar, now)` applies what
/// partition `i` needs and says what it applied. A lost race re-reads every calendar and
/// computes again, so a computed change (an inventory reconcile) lands exactly once however
/// many daemons attempt it. Calendars that need nothing are not appended to. With `idem`,
/// `respond` gives the stored answer of the key; `Ok(None)`: the key was used before.
pub(super) async fn commit_with<T>(
    svc: &ReservationService,
    parts: &[(String, Arc<Part>)],
    idem: Option<&IdempotencyKey>,
    mut compute: impl FnMut(usize, &mut Calendar, DateTime<Utc>) -> Result<Computed<T>, ServiceError>,
    respond: impl Fn(&[T]) -> Result<serde_json::Value, ServiceError>,
) -> Result<Option<Vec<T>>, ServiceError> {
    for attempt in 1..=MAX_ATTEMPTS {
        // Name order is the lock order.
        let mut guards: Vec<MutexGuard<'_, Inner>> = Vec::with_capacity(parts.len());
        for (_, part) in parts {
            guards.push(part.core.inner.lock().await);
        }
        for ((_, part), g) in parts.iter().zip(guards.iter_mut()) {
            part.core.catch_up(g).await?;
        }
        // The tokens the commit must still find: ours where we hold the lease, else the
        // holder's as the lease table has it now.
        let mut tokens: Vec<Option<u64>> = Vec::with_capacity(parts.len());
        for (_, part) in parts {
            let token = match part.ownership() {
                None => None,
                Some(o) => match o.token() {
                    Some(t) => Some(t),
                    None => svc
                        .store
                        .lease(&part.core.opts.stream)
                        .await?
                        .map(|l| l.token),
                },
            };
            tokens.push(token);
        }
        let now = parts
            .iter()
            .zip(guards.iter())
            .map(|((_, part), g)| part.core.now(g))
            .max()
            .unwrap_or_else(|| svc.clock.now());
        let mut values: Vec<T> = Vec::with_capacity(parts.len());
        let mut entries: Vec<Vec<LogEntry>> = Vec::with_capacity(parts.len());
        let mut events: Vec<Vec<Event>> = Vec::with_capacity(parts.len());
        let mut refused = None;
        for (i, g) in guards.iter_mut().enumerate() {
            // From here until the commit the calendar may hold unlogged commands.
            g.stale = true;
            let mut ev = match g.cal.advance(now) {
                Ok(ev) => ev,
                Err(e) => {
                    refused = Some(ServiceError::from(e));
                    break;
                }
            };
            if !ev.is_empty() {
                g.advanced = true;
            }
            match compute(i, &mut g.cal, now) {
                Ok(c) => {
                    let mut es = Vec::new();
                    if !c.commands.is_empty() {
                        if g.advanced {
                            es.push(LogEntry {
                                at: now,
                                command: Command::Advance,
                            });
                        }
                        es.extend(
                            c.commands
                                .into_iter()
                                .map(|command| LogEntry { at: now, command }),
                        );
                    }
                    ev.extend(c.events);
                    entries.push(es);
                    events.push(ev);
                    values.push(c.value);
                }
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = refused {
            recover_all(parts, &mut guards).await;
            return Err(e);
        }
        if entries.iter().all(Vec::is_empty) {
            // Nothing to log: each calendar holds at most an advance, which may stay unlogged.
            let mut notes = Vec::new();
            for (((_, part), g), ev) in parts.iter().zip(guards.iter_mut()).zip(events.iter()) {
                g.stale = false;
                if part.writes_here() {
                    notes.extend(g.notifications(ev));
                }
            }
            drop(guards);
            svc.notifier.send_all(notes);
            return Ok(Some(values));
        }
        let remember: Vec<IdempotentResponse> = match idem {
            None => Vec::new(),
            Some(k) => vec![IdempotentResponse {
                key: k.key.clone(),
                request_hash: k.request_hash.clone(),
                response: respond(&values)?,
                created_at: now,
            }],
        };
        let appends: Vec<Append<'_>> = parts
            .iter()
            .zip(guards.iter())
            .zip(entries.iter())
            .filter(|(_, es)| !es.is_empty())
            .map(|(((_, part), g), es)| Append {
                stream: &part.core.opts.stream,
                expected_seq: g.seq,
                entries: es,
            })
            .collect();
        let fences: Vec<Fence<'_>> = parts
            .iter()
            .zip(tokens.iter())
            .zip(entries.iter())
            .filter(|(_, es)| !es.is_empty())
            .filter_map(|(((_, part), token), _)| {
                token.map(|token| Fence {
                    lease: &part.core.opts.stream,
                    token,
                })
            })
            .collect();
        let written = svc
            .store
            .write(WriteBatch {
                append: appends.first().copied(),
                also_append: appends.get(1..).unwrap_or_default(),
                fences: &fences,
                remember: &remember,
                ..WriteBatch::default()
            })
            .await;
        match written {
            Ok(BatchOutcome::Committed { .. }) => {
                let mut notes = Vec::new();
                for (((_, part), g), (es, ev)) in parts
                    .iter()
                    .zip(guards.iter_mut())
                    .zip(entries.iter().zip(events.iter()))
                {
                    g.stale = false;
                    if !es.is_empty() {
                        g.seq += es.len() as u64;
                        g.advanced = false;
                        part.core.commits.fetch_add(1, Ordering::Relaxed);
                        part.core.snapshot_if_due(g);
                    }
                    if part.writes_here() {
                        notes.extend(g.notifications(ev));
                    }
                }
                let seq = guards.iter().map(|g| g.seq).sum();
                drop(guards);
                metrics::counter!("berth_spanning_commits_total").increment(1);
                svc.announce(Change::Calendar { seq });
                svc.notifier.send_all(notes);
                return Ok(Some(values));
            }
            Err(StoreError::Duplicate {
                kind: RecordKind::IdempotencyKey,
                ..
            }) if idem.is_some() => {
                // Applied before under this key (by another daemon): nothing was written now.
                recover_all(parts, &mut guards).await;
                return Ok(None);
            }
            Err(StoreError::Conflict { .. }) | Err(StoreError::Fenced { .. }) => {
                // Another writer appended, or a lease changed hands: re-read and re-check.
                tracing::debug!(attempt, "spanning commit lost a race; re-checking");
                metrics::counter!("berth_append_conflicts_total").increment(1);
                if let Err(StoreError::Fenced { lease, token, .. }) = &written
                    && let Some((_, part)) =
                        parts.iter().find(|(_, p)| &p.core.opts.stream == lease)
                    && let Some(o) = part.ownership()
                {
                    o.lost(*token);
                }
                recover_all(parts, &mut guards).await;
            }
            Ok(BatchOutcome::Replayed(_)) => {
                recover_all(parts, &mut guards).await;
                return Err(ServiceError::store("unexpected idempotent replay"));
            }
            Err(e) => {
                tracing::warn!(partitions = parts.len(), error = %e, "spanning commit failed; nothing acknowledged");
                recover_all(parts, &mut guards).await;
                return Err(e.into());
            }
        }
    }
    Err(ServiceError::Contention {
        stream: parts
            .iter()
            .map(|(_, p)| p.core.opts.stream.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        attempts: MAX_ATTEMPTS,
    })
}

/// Back to the log's state in every touched calendar.
async fn recover_all(parts: &[(String, Arc<Part>)], guards: &mut [MutexGuard<'_, Inner>]) {
    for ((_, part), g) in parts.iter().zip(guards.iter_mut()) {
        part.core.recover(g).await;
    }
}
