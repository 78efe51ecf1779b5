//! Bringing the calendar in line with the log: restore from the newest usable snapshot plus
//! the tail (falling back to older snapshots, then to a full replay), catch up with other
//! writers, and write snapshots.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use berth_calendar::{Calendar, Command, LogEntry};
use berth_store::{StoreError, SubscriptionKind};
use chrono::{DateTime, Utc};

use super::{Core, Inner, Webhook};
use crate::ServiceError;

/// A calendar restored from a snapshot, with the head it reflects after the tail.
struct Restored {
    cal: Calendar,
    head: u64,
}

impl Core {
    /// Rebuilds the calendar from the store (newest usable snapshot + tail, else the whole
    /// log) and reloads the webhooks.
    pub(super) async fn rebuild(&self, inner: &mut Inner) -> Result<(), ServiceError> {
        metrics::counter!("berth_calendar_rebuilds_total").increment(1);
        self.rebuilds.fetch_add(1, Ordering::Relaxed);
        let (cal, seq, snapshot_seq) = self.load().await?;
        inner.cal = cal;
        inner.seq = seq;
        inner.snapshot_seq = snapshot_seq;
        inner.stale = false;
        inner.advanced = false;
        inner.quiet = 0;
        self.reload_hooks(inner).await
    }

    /// The calendar at the head of the stream, its head and the snapshot it started from (0:
    /// none). A snapshot that cannot be read, parsed, restored or continued is skipped with a
    /// warning; a log that does not replay is an error.
    async fn load(&self) -> Result<(Calendar, u64, u64), ServiceError> {
        let stream = &self.opts.stream;
        // A commit sent by a writer that died (a killed predecessor, a dropped connection) may
        // still land: wait for it, or a write nobody was told about could appear after we load.
        // Not fatal: a read-only database refuses the wait (and has no writer to wait for),
        // and any other failure shows again in the reads below.
        if let Err(e) = self.store.settled_head(stream).await {
            tracing::warn!(stream = %stream, error = %e, "cannot wait for writes under way; loading without");
        }
        let seqs = match self.store.snapshot_seqs(stream).await {
            Ok(seqs) => seqs,
            Err(e) => {
                tracing::warn!(stream = %stream, error = %e, "cannot list snapshots; replaying the whole log");
                Vec::new()
            }
        };
        for seq in seqs {
            match self.restore(seq).await {
                Ok(Some(r)) => {
                    tracing::debug!(stream = %stream, snapshot = seq, head = r.head, "calendar restored from a snapshot");
                    return Ok((r.cal, r.head, seq));
                }
                Ok(None) => {}
                Err(why) => {
                    metrics::counter!("berth_snapshots_skipped_total").increment(1);
                    tracing::warn!(stream = %stream, snapshot = seq, reason = %why, "snapshot unusable; falling back to an older one or a full replay");
                }
            }
        }
        let (cal, seq) =
            berth_store::load_calendar(&*self.store, stream, self.opts.policy.clone()).await?;
        Ok((cal, seq, 0))
    }

    /// The calendar from the snapshot at `seq` plus the commands after it; `Ok(None)` when the
    /// snapshot is gone, `Err` (a reason) when it is unusable.
    async fn restore(&self, seq: u64) -> Result<Option<Restored>, String> {
        let stream = &self.opts.stream;
        let Some(stored) = self
            .store
            .snapshot_at(stream, seq)
            .await
            .map_err(|e| e.to_string())?
        else {
            return Ok(None);
        };
        let snap: berth_calendar::Snapshot =
            serde_json::from_str(&stored.state).map_err(|e| format!("unreadable: {e}"))?;
        let mut cal = Calendar::restore(snap).map_err(|e| format!("not restorable: {e}"))?;
        if cal.policy() != &self.opts.policy {
            // A full replay applies the configured policy; so must a restore.
            return Err("taken under another reservation policy".to_owned());
        }
        let head = self.store.head(stream).await.map_err(|e| e.to_string())?;
        if head < seq {
            return Err(format!("ahead of the log (head {head})"));
        }
        let mut at = seq;
        for c in self
            .store
            .commands_since(stream, seq)
            .await
            .map_err(|e| e.to_string())?
        {
            cal.apply(c.entry.command, c.entry.at)
                .map_err(|e| format!("command {} does not apply after it: {e}", c.seq))?;
            at = c.seq;
        }
        Ok(Some(Restored { cal, head: at }))
    }

    pub(super) async fn reload_hooks(&self, inner: &mut Inner) -> Result<(), ServiceError> {
        let mut hooks = BTreeMap::new();
        for s in self.store.list_subscriptions(None).await? {
            let filter = match s.kind {
                SubscriptionKind::Reservation => {
                    Some(serde_json::from_value(s.spec).unwrap_or_default())
                }
                _ => None,
            };
            hooks.insert(
                s.id.clone(),
                Webhook {
                    id: s.id,
                    callback: s.callback_url,
                    filter,
                },
            );
        }
        inner.hooks = hooks;
        Ok(())
    }

    /// Applies what other writers appended since `inner.seq`; rebuilds when that fails (an
    /// unlogged advance may have moved this calendar past their times) or when stale.
    pub(super) async fn catch_up(&self, inner: &mut Inner) -> Result<(), ServiceError> {
        if inner.stale {
            return self.rebuild(inner).await;
        }
        for c in self
            .store
            .commands_since(&self.opts.stream, inner.seq)
            .await?
        {
            if inner.cal.apply(c.entry.command, c.entry.at).is_err() {
                return self.rebuild(inner).await;
            }
            inner.seq = c.seq;
            inner.quiet = 0;
        }
        Ok(())
    }

    /// After a failed commit: back to the log's state now, or at the next use.
    pub(super) async fn recover(&self, inner: &mut Inner) {
        inner.stale = true;
        if let Err(e) = self.rebuild(inner).await {
            tracing::warn!(stream = %self.opts.stream, error = %e, "cannot reload the calendar; retrying at the next request");
        }
    }

    pub(super) fn now(&self, inner: &Inner) -> DateTime<Utc> {
        let wall = self.clock.now();
        inner.cal.clock().map_or(wall, |c| c.max(wall))
    }

    /// Logs an unlogged advance (an `Advance` at the calendar's clock), so the calendar equals
    /// a replay of the log again.
    pub(super) async fn log_advance(&self, inner: &mut Inner) -> Result<(), ServiceError> {
        let Some(at) = inner.cal.clock().filter(|_| inner.advanced) else {
            return Ok(());
        };
        let entry = LogEntry {
            at,
            command: Command::Advance,
        };
        match self
            .store
            .append_commands(&self.opts.stream, inner.seq, std::slice::from_ref(&entry))
            .await
        {
            Ok(seq) => {
                inner.seq = seq;
                inner.advanced = false;
                Ok(())
            }
            Err(StoreError::Conflict { .. }) => {
                // Another writer moved on; its log is the truth, without our advance.
                self.rebuild(inner).await
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Starts writing a snapshot in the background when `snapshot_every` commands were logged
    /// since the last one. Call right after a commit: the calendar equals the log's replay.
    pub(super) fn snapshot_if_due(self: &Arc<Self>, inner: &mut Inner) {
        let every = self.opts.snapshot_every;
        if every == 0
            || inner.stale
            || inner.advanced
            || inner.seq < inner.snapshot_seq.saturating_add(every)
            || self.snapshotting.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let (seq, snap) = (inner.seq, inner.cal.snapshot());
        inner.snapshot_seq = seq;
        let core = Arc::clone(self);
        tokio::spawn(async move {
            if let Err(e) = core.persist_snapshot(seq, snap).await {
                tracing::warn!(stream = %core.opts.stream, seq, error = %e, "cannot write a snapshot");
            }
            core.snapshotting.store(false, Ordering::Release);
        });
    }

    /// Serializes `snap` (off the async threads) and stores it as the snapshot at `seq`.
    pub(super) async fn persist_snapshot(
        &self,
        seq: u64,
        snap: berth_calendar::Snapshot,
    ) -> Result<(), ServiceError> {
        let started = std::time::Instant::now();
        let text = tokio::task::spawn_blocking(move || serde_json::to_string(&snap))
            .await
            .map_err(ServiceError::store)?
            .map_err(ServiceError::store)?;
        self.store
            .put_snapshot(&self.opts.stream, seq, &text, self.clock.now())
            .await?;
        self.snapshots.fetch_add(1, Ordering::Relaxed);
        metrics::histogram!("berth_snapshot_duration_seconds")
            .record(started.elapsed().as_secs_f64());
        tracing::info!(stream = %self.opts.stream, seq, bytes = text.len(), "snapshot written");
        Ok(())
    }
}
