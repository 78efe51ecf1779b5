//! One calendar over one command stream: its restore from snapshot and log, its queue to the
//! writer, and its reads.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

use berth_calendar::{Calendar, Command, Outcome};
use berth_store::Store;
use tokio::sync::{Mutex, broadcast, mpsc, oneshot};

use super::writer::{self, Pending};
use super::{Committed, Core, IdempotencyKey, Inner, QUEUE, ReservationOptions};
use crate::ServiceError;
use crate::changes::Change;
use crate::clock::WallClock;
use crate::notify::Notifier;

/// One calendar over one command stream: the whole calendar, or one partition of it.
///
/// Commands go through a queue to one writer task; dropping it closes the queue and the
/// writer ends after answering what was queued.
pub(super) struct Part {
    pub(super) core: Arc<Core>,
    pub(super) queue: mpsc::Sender<Pending>,
}

impl Part {
    /// Opens one calendar: restores it from the newest usable snapshot plus the log's tail
    /// (or replays the whole log), loads the webhooks and starts the writer.
    pub(super) async fn open(
        store: Arc<dyn Store>,
        opts: ReservationOptions,
        clock: Arc<dyn WallClock>,
        notifier: Notifier,
        changes: broadcast::Sender<Change>,
        partition: Option<String>,
    ) -> Result<Part, ServiceError> {
        let inner = Inner {
            prefix: partition
                .as_deref()
                .map(|p| format!("{p}:"))
                .unwrap_or_default(),
            cal: Calendar::new(opts.policy.clone()),
            seq: 0,
            stale: false,
            advanced: false,
            snapshot_seq: 0,
            quiet: 0,
            hooks: BTreeMap::new(),
        };
        let core = Arc::new(Core {
            partition,
            store,
            opts,
            clock,
            notifier,
            inner: Mutex::new(inner),
            snapshotting: AtomicBool::new(false),
            commits: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            snapshots: AtomicU64::new(0),
            rebuilds: AtomicU64::new(0),
            changes,
        });
        {
            let mut inner = core.inner.lock().await;
            core.rebuild(&mut inner).await?;
        }
        let (queue, rx) = mpsc::channel(QUEUE);
        // The writer gets a thread of its own: however many connections the HTTP side is
        // juggling, commits keep their pace (on a shared worker it waits its turn behind them).
        let writer_core = Arc::clone(&core);
        std::thread::Builder::new()
            .name("berth-writer".into())
            .spawn(move || {
                match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt.block_on(writer::run(writer_core, rx)),
                    Err(e) => tracing::error!(error = %e, "cannot start the writer's runtime"),
                }
            })
            .map_err(|e| ServiceError::Unavailable {
                message: format!("cannot start the writer thread: {e}"),
            })?;
        Ok(Part { core, queue })
    }

    /// Queues `commands` (one all-or-nothing request) for the writer and waits for its answer.
    pub(super) async fn submit(
        &self,
        commands: Vec<Command>,
        idem: Option<IdempotencyKey>,
    ) -> Result<(Vec<Outcome>, bool), ServiceError> {
        let (reply, answer) = oneshot::channel();
        let pending = Pending {
            commands,
            idem,
            reply,
        };
        if self.queue.send(pending).await.is_err() {
            return Err(ServiceError::Unavailable {
                message: "the reservation writer has stopped".into(),
            });
        }
        answer.await.unwrap_or_else(|_| {
            Err(ServiceError::Unavailable {
                message: "the reservation writer stopped before answering".into(),
            })
        })
    }

    /// Applies one command (its idempotency key looked up by the caller) durably.
    pub(super) async fn command(
        &self,
        command: Command,
        idem: Option<IdempotencyKey>,
    ) -> Result<Committed, ServiceError> {
        let (outcomes, replayed) = self.submit(vec![command], idem).await?;
        match outcomes.into_iter().next() {
            Some(outcome) => Ok(Committed {
                outcome,
                replayed,
                partition: self.core.partition.clone(),
            }),
            None => Err(ServiceError::Unavailable {
                message: "command produced no outcome".into(),
            }),
        }
    }

    /// Runs `f` on the calendar brought up to now (due events are dispatched).
    pub(super) async fn read<R>(&self, f: impl FnOnce(&Calendar) -> R) -> Result<R, ServiceError> {
        let mut inner = self.core.inner.lock().await;
        let before = inner.seq;
        self.core.catch_up(&mut inner).await?;
        let now = self.core.now(&inner);
        let holder = self.writes_here();
        // A replica stays at its log's state: advanced in place, the holder's next entries
        // (stamped before this `now`) would not apply and force a rebuild from the store.
        let peeked = if holder {
            Err(f)
        } else {
            inner.cal.peek_at(now, f)
        };
        let (r, events) = match peeked {
            Ok(r) => (r, Vec::new()),
            Err(f) => {
                let events = inner.cal.advance(now)?;
                if !events.is_empty() {
                    inner.advanced = true;
                }
                (f(&inner.cal), events)
            }
        };
        let notes = inner.notifications(&events);
        let seq = inner.seq;
        drop(inner);
        if seq != before || !events.is_empty() {
            self.core.announce(Change::Calendar { seq });
        }
        // In a cluster every daemon's timer sees the same events; the lease holder alone
        // delivers their webhooks, so each goes out once.
        if holder {
            self.core.notifier.send_all(notes);
        }
        Ok(r)
    }

    /// Advances the calendar to now and dispatches the due events.
    pub(super) async fn tick(&self) -> Result<(), ServiceError> {
        {
            let mut inner = self.core.inner.lock().await;
            self.core.reload_hooks(&mut inner).await?;
        }
        self.read(|_| ()).await
    }

    /// Whether this daemon holds the stream's lease (always outside a cluster).
    pub(super) fn writes_here(&self) -> bool {
        self.core
            .opts
            .ownership
            .as_ref()
            .is_none_or(|o| o.token().is_some())
    }

    pub(super) fn ownership(&self) -> Option<&Arc<crate::ownership::Ownership>> {
        self.core.opts.ownership.as_ref()
    }

    /// Writes a snapshot now if this daemon writes the stream; see
    /// [`ReservationService::snapshot`].
    pub(super) async fn snapshot(&self) -> Result<Option<u64>, ServiceError> {
        if !self.writes_here() {
            // Only the lease holder writes the stream (its advance) and its snapshots.
            return Ok(None);
        }
        let mut inner = self.core.inner.lock().await;
        self.core.catch_up(&mut inner).await?;
        self.core.log_advance(&mut inner).await?;
        if inner.seq == 0 {
            return Ok(None);
        }
        let (seq, snap) = (inner.seq, inner.cal.snapshot());
        inner.snapshot_seq = seq;
        drop(inner);
        self.core.persist_snapshot(seq, snap).await?;
        Ok(Some(seq))
    }
}
