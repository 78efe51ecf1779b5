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

use berth_calendar::{Command, Event, LogEntry};
use berth_store::{
    Append, BatchOutcome, Fence, IdempotentResponse, RecordKind, StoreError, WriteBatch,
};
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
    let mut parts: Vec<(String, Arc<Part>, Vec<usize>)> = Vec::new();
    for (name, idx) in groups {
        let part = svc
            .open_part(Some(name.clone()).filter(|n| !n.is_empty()))
            .await?;
        parts.push((name, part, idx));
    }
    for attempt in 1..=MAX_ATTEMPTS {
        // Name order (BTreeMap) is the lock order.
        let mut guards: Vec<MutexGuard<'_, Inner>> = Vec::with_capacity(parts.len());
        for (_, part, _) in &parts {
            guards.push(part.core.inner.lock().await);
        }
        for ((_, part, _), g) in parts.iter().zip(guards.iter_mut()) {
            part.core.catch_up(g).await?;
        }
        // The tokens the commit must still find: ours where we hold the lease, else the
        // holder's as the lease table has it now.
        let mut tokens: Vec<(String, u64)> = Vec::new();
        for (_, part, _) in &parts {
            let Some(o) = part.ownership() else { continue };
            let token = match o.token() {
                Some(t) => Some(t),
                None => svc
                    .store
                    .lease(&part.core.opts.stream)
                    .await?
                    .map(|l| l.token),
            };
            if let Some(t) = token {
                tokens.push((part.core.opts.stream.clone(), t));
            }
        }
        let now = parts
            .iter()
            .zip(guards.iter())
            .map(|((_, part, _), g)| part.core.now(g))
            .max()
            .unwrap_or_else(|| svc.clock.now());
        let mut outcomes: Vec<Option<Committed>> = vec![None; commands.len()];
        let mut entries: Vec<Vec<LogEntry>> = Vec::with_capacity(parts.len());
        let mut events: Vec<Vec<Event>> = Vec::with_capacity(parts.len());
        let mut refused = None;
        for ((name, _, idx), g) in parts.iter().zip(guards.iter_mut()) {
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
            let mut es = Vec::new();
            if g.advanced {
                es.push(LogEntry {
                    at: now,
                    command: Command::Advance,
                });
            }
            let cmds: Vec<Command> = idx.iter().map(|i| commands[*i].clone()).collect();
            match apply_all(&mut g.cal, &cmds, now) {
                Ok(outs) => {
                    for (i, o) in idx.iter().zip(outs) {
                        ev.extend(o.events.iter().cloned());
                        outcomes[*i] = Some(Committed {
                            outcome: o,
                            replayed: false,
                            partition: svc.opts.partition_key.map(|_| name.clone()),
                        });
                    }
                    es.extend(
                        cmds.into_iter()
                            .map(|command| LogEntry { at: now, command }),
                    );
                }
                Err(e) => {
                    refused = Some(e.into());
                    break;
                }
            }
            entries.push(es);
            events.push(ev);
        }
        if let Some(e) = refused {
            recover_all(&parts, &mut guards).await;
            return Err(e);
        }
        let remember: Vec<IdempotentResponse> = match &idem {
            None => Vec::new(),
            Some(k) => {
                let first = outcomes.iter().flatten().next();
                let response = super::partitions::wrap_response(
                    first.and_then(|c| c.partition.as_deref()),
                    serde_json::to_value(first.map(|c| &c.outcome)).map_err(ServiceError::store)?,
                );
                vec![IdempotentResponse {
                    key: k.key.clone(),
                    request_hash: k.request_hash.clone(),
                    response,
                    created_at: now,
                }]
            }
        };
        let appends: Vec<Append<'_>> = parts
            .iter()
            .zip(guards.iter())
            .zip(entries.iter())
            .map(|(((_, part, _), g), es)| Append {
                stream: &part.core.opts.stream,
                expected_seq: g.seq,
                entries: es,
            })
            .collect();
        let fences: Vec<Fence<'_>> = tokens
            .iter()
            .map(|(lease, token)| Fence {
                lease,
                token: *token,
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
                for (((_, part, _), g), (es, ev)) in parts
                    .iter()
                    .zip(guards.iter_mut())
                    .zip(entries.iter().zip(events.iter()))
                {
                    g.seq += es.len() as u64;
                    g.advanced = false;
                    g.stale = false;
                    part.core.commits.fetch_add(1, Ordering::Relaxed);
                    part.core.snapshot_if_due(g);
                    if part.writes_here() {
                        notes.extend(g.notifications(ev));
                    }
                }
                let seq = guards.iter().map(|g| g.seq).sum();
                drop(guards);
                metrics::counter!("berth_spanning_commits_total").increment(1);
                svc.announce(Change::Calendar { seq });
                svc.notifier.send_all(notes);
                let out: Option<Vec<Committed>> = outcomes.into_iter().collect();
                return out
                    .map(|o| (o, true))
                    .ok_or_else(|| ServiceError::store("a spanning command has no outcome"));
            }
            Err(StoreError::Duplicate {
                kind: RecordKind::IdempotencyKey,
                ..
            }) if idem.is_some() => {
                // Applied before under this key (by another daemon): nothing was written now.
                recover_all(&parts, &mut guards).await;
                return Ok((Vec::new(), false));
            }
            Err(StoreError::Conflict { .. }) | Err(StoreError::Fenced { .. }) => {
                // Another writer appended, or a lease changed hands: re-read and re-check.
                tracing::debug!(attempt, "spanning commit lost a race; re-checking");
                metrics::counter!("berth_append_conflicts_total").increment(1);
                if let Err(StoreError::Fenced { lease, token, .. }) = &written
                    && let Some((_, part, _)) =
                        parts.iter().find(|(_, p, _)| &p.core.opts.stream == lease)
                    && let Some(o) = part.ownership()
                {
                    o.lost(*token);
                }
                recover_all(&parts, &mut guards).await;
            }
            Ok(BatchOutcome::Replayed(_)) => {
                recover_all(&parts, &mut guards).await;
                return Err(ServiceError::store("unexpected idempotent replay"));
            }
            Err(e) => {
                tracing::warn!(partitions = parts.len(), error = %e, "spanning commit failed; nothing acknowledged");
                recover_all(&parts, &mut guards).await;
                return Err(e.into());
            }
        }
    }
    Err(ServiceError::Contention {
        stream: parts
            .iter()
            .map(|(_, p, _)| p.core.opts.stream.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        attempts: MAX_ATTEMPTS,
    })
}

/// Back to the log's state in every touched calendar.
async fn recover_all(
    parts: &[(String, Arc<Part>, Vec<usize>)],
    guards: &mut [MutexGuard<'_, Inner>],
) {
    for ((_, part, _), g) in parts.iter().zip(guards.iter_mut()) {
        part.core.recover(g).await;
    }
}
