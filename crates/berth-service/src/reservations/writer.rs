//! Group commit: the one writer task takes every queued request, checks each in order on the
//! calendar (each sees the effects of the earlier ones), appends the accepted ones in ONE
//! transaction, and only then answers every caller.
//!
//! Rollback is by rebuild, not by copy: the common path applies each command once and clones
//! nothing. When the transaction fails (or another daemon appended first), the calendar is
//! rebuilt from the store — newest snapshot plus the log's tail — which is exactly the
//! pre-batch state (plus, after a conflict, the other writer's commands). Only a request of
//! several commands (a plan's reservations) copies the calendar before it is applied, so a
//! refusal of its last command can undo its first ones without undoing the rest of the batch.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use berth_calendar::{Calendar, CalendarError, Command, LogEntry, Outcome};
use berth_store::{
    Append, BatchOutcome, Fence, IdempotencyRecord, IdempotentResponse, RecordKind, StoreError,
    WriteBatch,
};
use chrono::{DateTime, Utc};
use tokio::sync::{mpsc, oneshot};

use super::{Core, IdempotencyKey, Inner, MAX_ATTEMPTS, replayed};
use crate::ServiceError;
use crate::notify::Notification;

/// What a request gets back: its outcomes, and whether they are a replay of an earlier one.
pub(super) type Answer = Result<(Vec<Outcome>, bool), ServiceError>;

/// One request waiting for the writer: commands applied all or none.
pub(super) struct Pending {
    pub(super) commands: Vec<Command>,
    pub(super) idem: Option<IdempotencyKey>,
    pub(super) reply: oneshot::Sender<Answer>,
}

/// The verdict on one request of a batch, before the commit.
enum Verdict {
    /// Applied to the calendar; acknowledged if the commit succeeds.
    Accepted(Vec<Outcome>),
    /// Same key and request as the accepted request at this index: its outcome, replayed.
    SameAs(usize),
    /// Answered without the commit (refused, or replayed from the store) — unless the commit
    /// fails, which turns every answer into the failure.
    Done(Answer),
}

/// The writer: runs until every sender of `rx` is gone.
pub(super) async fn run(core: Arc<Core>, mut rx: mpsc::Receiver<Pending>) {
    while let Some(first) = rx.recv().await {
        // Requests queued while we wait for the calendar join this batch.
        let mut inner = core.inner.lock().await;
        let mut size = first.commands.len();
        let mut batch = vec![first];
        while size < core.opts.max_batch.max(1) {
            match rx.try_recv() {
                Ok(p) => {
                    size += p.commands.len();
                    batch.push(p);
                }
                Err(_) => break,
            }
        }
        let before = inner.seq;
        let (answers, notes) = core.commit_batch(&mut inner, &batch).await;
        core.snapshot_if_due(&mut inner);
        let seq = inner.seq;
        drop(inner);
        if seq != before {
            core.announce(crate::changes::Change::Calendar { seq });
        }
        for (p, answer) in batch.into_iter().zip(answers) {
            // A caller that went away still had its request committed (or refused).
            let _ = p.reply.send(answer);
        }
        core.notifier.send_all(notes);
    }
}

impl Core {
    /// Checks, commits and answers `batch`; returns one answer per request and the
    /// notifications to send. On a failed commit every request gets the error and the
    /// calendar is back at the log's state.
    async fn commit_batch(
        &self,
        inner: &mut Inner,
        batch: &[Pending],
    ) -> (Vec<Answer>, Vec<Notification>) {
        let fail = |e: ServiceError| (vec![Err(e); batch.len()], Vec::new());
        let keys: Vec<String> = {
            let mut k: Vec<String> = batch
                .iter()
                .filter_map(|p| p.idem.as_ref().map(|i| i.key.clone()))
                .collect();
            k.sort();
            k.dedup();
            k
        };
        for attempt in 1..=MAX_ATTEMPTS {
            // In a cluster only the lease holder writes, and every commit carries its token.
            let token = match &self.opts.ownership {
                None => None,
                Some(o) => match o.token() {
                    Some(t) => Some(t),
                    None => return fail(not_owner(o)),
                },
            };
            let trusted = !inner.stale && inner.quiet >= super::QUIET_COMMITS;
            if !trusted && let Err(e) = self.catch_up(inner).await {
                return fail(e);
            }
            let known: BTreeMap<String, IdempotencyRecord> = if keys.is_empty() {
                BTreeMap::new()
            } else {
                match self.store.lookup_idempotent_many(&keys).await {
                    Ok(found) => found.into_iter().map(|r| (r.key.clone(), r)).collect(),
                    Err(e) => return fail(e.into()),
                }
            };
            let now = self.now(inner);
            let mut events = match inner.cal.advance(now) {
                Ok(ev) => ev,
                Err(e) => return fail(e.into()),
            };
            if !events.is_empty() {
                inner.advanced = true;
            }
            // From here until the commit the calendar may hold unlogged commands.
            inner.stale = true;
            let mut verdicts = Vec::with_capacity(batch.len());
            let mut entries = Vec::new();
            if inner.advanced {
                entries.push(LogEntry {
                    at: now,
                    command: Command::Advance,
                });
            }
            let mut remember = Vec::new();
            let mut accepted_keys: BTreeMap<&str, usize> = BTreeMap::new();
            for (i, p) in batch.iter().enumerate() {
                if let Some(k) = &p.idem {
                    if let Some(rec) = known.get(&k.key) {
                        let response = super::partitions::unwrap_response(rec.response.clone()).1;
                        let answer = replayed(k, &rec.request_hash, response);
                        verdicts.push(Verdict::Done(answer));
                        continue;
                    }
                    if let Some(&j) = accepted_keys.get(k.key.as_str()) {
                        let same = batch[j]
                            .idem
                            .as_ref()
                            .is_some_and(|first| first.request_hash == k.request_hash);
                        verdicts.push(if same {
                            Verdict::SameAs(j)
                        } else {
                            Verdict::Done(Err(ServiceError::KeyReused { key: k.key.clone() }))
                        });
                        continue;
                    }
                }
                match apply_all(&mut inner.cal, &p.commands, now) {
                    Ok(outcomes) => {
                        for o in &outcomes {
                            events.extend(o.events.iter().cloned());
                        }
                        entries.extend(p.commands.iter().map(|c| LogEntry {
                            at: now,
                            command: c.clone(),
                        }));
                        if let Some(k) = &p.idem {
                            let response = match serde_json::to_value(outcomes.first()) {
                                Ok(v) => {
                                    super::partitions::wrap_response(self.partition.as_deref(), v)
                                }
                                Err(e) => {
                                    self.recover(inner).await;
                                    return fail(ServiceError::store(e));
                                }
                            };
                            remember.push(IdempotentResponse {
                                key: k.key.clone(),
                                request_hash: k.request_hash.clone(),
                                response,
                                created_at: now,
                            });
                            accepted_keys.insert(k.key.as_str(), i);
                        }
                        verdicts.push(Verdict::Accepted(outcomes));
                    }
                    Err(e) => {
                        if matches!(e, CalendarError::Conflict(_)) {
                            metrics::counter!("berth_admission_conflicts_total").increment(1);
                        }
                        verdicts.push(Verdict::Done(Err(e.into())));
                    }
                }
            }
            if !verdicts.iter().any(|v| matches!(v, Verdict::Accepted(_))) {
                // Nothing to log: refusals changed nothing, an advance may stay unlogged.
                inner.stale = false;
                return (answers(verdicts), inner.notifications(&events));
            }
            let expected = inner.seq;
            let fence = token.map(|token| Fence {
                lease: &self.opts.stream,
                token,
            });
            let written = self
                .store
                .write(WriteBatch {
                    append: Some(Append {
                        stream: &self.opts.stream,
                        expected_seq: expected,
                        entries: &entries,
                    }),
                    remember: &remember,
                    fences: fence.as_slice(),
                    ..WriteBatch::default()
                })
                .await;
            match written {
                Ok(BatchOutcome::Committed { seq, .. }) => {
                    inner.seq = seq.unwrap_or(expected + entries.len() as u64);
                    inner.advanced = false;
                    inner.stale = false;
                    inner.quiet = inner.quiet.saturating_add(1);
                    self.commits.fetch_add(1, Ordering::Relaxed);
                    self.requests
                        .fetch_add(batch.len() as u64, Ordering::Relaxed);
                    metrics::counter!("berth_commits_total").increment(1);
                    metrics::histogram!("berth_commit_batch_requests").record(batch.len() as f64);
                    return (answers(verdicts), inner.notifications(&events));
                }
                Err(StoreError::Conflict { .. })
                | Err(StoreError::Duplicate {
                    kind: RecordKind::IdempotencyKey,
                    ..
                }) => {
                    // Another daemon wrote first: start over from the log's state.
                    tracing::debug!(stream = %self.opts.stream, attempt, "append conflict; re-checking the batch");
                    metrics::counter!("berth_append_conflicts_total").increment(1);
                    if let Err(e) = self.rebuild(inner).await {
                        inner.stale = true;
                        return fail(e);
                    }
                }
                Err(StoreError::Fenced { token, .. }) => {
                    // Another daemon took the lease: nothing was written; it answers now.
                    metrics::counter!("berth_fenced_commits_total").increment(1);
                    self.recover(inner).await;
                    return match &self.opts.ownership {
                        Some(o) => {
                            o.lost(token);
                            fail(not_owner(o))
                        }
                        None => fail(ServiceError::store("fenced commit without a lease")),
                    };
                }
                Ok(BatchOutcome::Replayed(_)) => {
                    self.recover(inner).await;
                    return fail(ServiceError::store("unexpected idempotent replay"));
                }
                Err(e) => {
                    tracing::warn!(stream = %self.opts.stream, requests = batch.len(), error = %e, cause = ?std::error::Error::source(&e).map(ToString::to_string), "group commit failed; nothing acknowledged");
                    let e = ServiceError::from(e);
                    self.recover(inner).await;
                    return fail(e);
                }
            }
        }
        self.recover(inner).await;
        fail(ServiceError::Contention {
            stream: self.opts.stream.clone(),
            attempts: MAX_ATTEMPTS,
        })
    }
}

/// The answer of a daemon that does not hold the stream's lease (a 503: retry, or send the
/// request to the holder; berthd forwards it there itself).
pub(super) fn not_owner(o: &crate::ownership::Ownership) -> ServiceError {
    let holder = match o.owner() {
        crate::ownership::Owner::Other { node, url } => format!("`{node}` at {url} holds it"),
        _ => "its holder is not known yet".to_owned(),
    };
    ServiceError::Unavailable {
        message: format!(
            "this daemon does not hold the lease of calendar stream `{}`; {holder}; expected the request at the holder, retry shortly",
            o.options().lease
        ),
    }
}

/// Applies `commands` in order, all or none: a refusal of a later command undoes the earlier
/// ones (from a copy, only when there are several).
pub(super) fn apply_all(
    cal: &mut Calendar,
    commands: &[Command],
    now: DateTime<Utc>,
) -> Result<Vec<Outcome>, CalendarError> {
    match commands {
        [] => return Ok(Vec::new()),
        [one] => return cal.apply(one.clone(), now).map(|o| vec![o]),
        _ => {}
    }
    let backup = cal.clone();
    let mut outcomes = Vec::with_capacity(commands.len());
    for c in commands {
        match cal.apply(c.clone(), now) {
            Ok(o) => outcomes.push(o),
            Err(e) => {
                *cal = backup;
                return Err(e);
            }
        }
    }
    Ok(outcomes)
}

/// The answers of a committed batch.
fn answers(verdicts: Vec<Verdict>) -> Vec<Answer> {
    let wanted: std::collections::BTreeSet<usize> = verdicts
        .iter()
        .filter_map(|v| match v {
            Verdict::SameAs(j) => Some(*j),
            _ => None,
        })
        .collect();
    let firsts: BTreeMap<usize, Vec<Outcome>> = wanted
        .into_iter()
        .filter_map(|j| match verdicts.get(j) {
            Some(Verdict::Accepted(o)) => Some((j, o.clone())),
            _ => None,
        })
        .collect();
    verdicts
        .into_iter()
        .map(|v| match v {
            Verdict::Accepted(o) => Ok((o, false)),
            Verdict::SameAs(j) => firsts
                .get(&j)
                .map(|o| (o.clone(), true))
                .ok_or_else(|| ServiceError::store("replayed request has no outcome")),
            Verdict::Done(a) => a,
        })
        .collect()
}
