//! The `Store` trait: one object-safe async interface every backend implements.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use berth_calendar::{Calendar, LogEntry, Policy};
use chrono::{DateTime, Utc};

use crate::StoreError;
use crate::batch::{Append, BatchOutcome, PlanChange, WriteBatch};
use crate::crypto::{CredentialKey, Secret};
use crate::model::{
    Backend, IdempotencyRecord, IdempotentResponse, NewPlan, NewProvider, NewSubscription,
    PlanRecord, PlanUpdate, ProviderRecord, SCHEMA_VERSION, Snapshot, StoredCommand,
    SubscriptionKind, SubscriptionRecord,
};
use crate::queue::{NewClaim, PlanClaim, QueuedPlan};

/// The boxed future every [`Store`] method returns; boxing keeps the trait object-safe so a
/// daemon holds an `Arc<dyn Store>` chosen at run time from a URL.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Durable state of Berth. Every method is one transaction; a failed call changed nothing.
///
/// Required methods are implemented per backend; the provided ones are shorthands for
/// [`Store::write`], the single atomic write primitive.
pub trait Store: Send + Sync + fmt::Debug {
    /// Which database this is.
    fn backend(&self) -> Backend;

    /// Checks the database answers (for readiness probes).
    fn ping(&self) -> StoreFuture<'_, ()>;

    /// Closes the connection pool after in-flight work finishes; later calls fail.
    fn close(&self) -> StoreFuture<'_, ()>;

    /// Commits the batch atomically (see [`WriteBatch`] for the order of its parts).
    ///
    /// Errors: `IdempotencyConflict`, `Conflict { actual }` when the stream moved on,
    /// `Duplicate` for an existing plan id, `NotFound` / `VersionConflict` for the plan update.
    fn write<'a>(&'a self, batch: WriteBatch<'a>) -> StoreFuture<'a, BatchOutcome>;

    /// Sequence number of the last command of `stream` (0 when empty or unknown).
    fn head<'a>(&'a self, stream: &'a str) -> StoreFuture<'a, u64>;

    /// [`head`](Store::head) once every write to `stream` already under way has committed or
    /// rolled back. A writer killed after sending its commit leaves a transaction the database
    /// may still commit after a new process has read the log; a daemon restoring its calendar
    /// waits here first, so an unanswered write is either in what it loads or never appears.
    /// Creates nothing (on SQLite a transaction commits in its own process or never: the same
    /// as `head`).
    fn settled_head<'a>(&'a self, stream: &'a str) -> StoreFuture<'a, u64>;

    /// Commands of `stream` with sequence number above `after_seq`, in order.
    fn commands_since<'a>(
        &'a self,
        stream: &'a str,
        after_seq: u64,
    ) -> StoreFuture<'a, Vec<StoredCommand>>;

    /// Stores a snapshot of `stream` taken after applying `seq` (replacing one at the same
    /// `seq`), with a checksum of `state`; only the newest [`SNAPSHOTS_KEPT`](crate::SNAPSHOTS_KEPT)
    /// of the stream are kept. Fails with `SnapshotAhead` if the stream has not reached `seq`.
    fn put_snapshot<'a>(
        &'a self,
        stream: &'a str,
        seq: u64,
        state: &'a str,
        created_at: DateTime<Utc>,
    ) -> StoreFuture<'a, ()>;

    /// The newest snapshot of `stream`; `Corrupt` when its checksum does not match.
    fn latest_snapshot<'a>(&'a self, stream: &'a str) -> StoreFuture<'a, Option<Snapshot>>;

    /// Sequence numbers of the stored snapshots of `stream`, newest first (to fall back to an
    /// older snapshot without reading every state).
    fn snapshot_seqs<'a>(&'a self, stream: &'a str) -> StoreFuture<'a, Vec<u64>>;

    /// The snapshot of `stream` at `seq`; `Corrupt` when its checksum does not match.
    fn snapshot_at<'a>(&'a self, stream: &'a str, seq: u64) -> StoreFuture<'a, Option<Snapshot>>;

    /// A plan by id.
    fn get_plan<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<PlanRecord>>;

    /// Every plan, ordered by creation time then id.
    fn list_plans(&self) -> StoreFuture<'_, Vec<PlanRecord>>;

    /// Deletes a plan; `NotFound` if absent.
    fn delete_plan<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()>;

    /// The response remembered under `key`.
    fn lookup_idempotent<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<IdempotencyRecord>>;

    /// The records of those `keys` that are known, ordered by key (one round trip per few
    /// hundred keys; unknown keys are left out).
    fn lookup_idempotent_many<'a>(
        &'a self,
        keys: &'a [String],
    ) -> StoreFuture<'a, Vec<IdempotencyRecord>>;

    /// Forgets idempotency keys created before `cutoff`; returns how many.
    fn forget_idempotent_before(&self, cutoff: DateTime<Utc>) -> StoreFuture<'_, u64>;

    /// Creates a subscription; `Duplicate` if the id exists.
    fn create_subscription<'a>(
        &'a self,
        sub: &'a NewSubscription,
    ) -> StoreFuture<'a, SubscriptionRecord>;

    /// A subscription by id.
    fn get_subscription<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<SubscriptionRecord>>;

    /// Subscriptions (of one kind, or all), ordered by creation time then id.
    fn list_subscriptions(
        &self,
        kind: Option<SubscriptionKind>,
    ) -> StoreFuture<'_, Vec<SubscriptionRecord>>;

    /// Deletes a subscription; `NotFound` if absent.
    fn delete_subscription<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()>;

    /// Creates or replaces a provider. Credentials are encrypted with `key` (bound to the
    /// provider name); credentials without a key fail with `CredentialsWithoutKey`.
    fn put_provider<'a>(
        &'a self,
        provider: &'a NewProvider,
        key: Option<&'a CredentialKey>,
    ) -> StoreFuture<'a, ProviderRecord>;

    /// A provider by name, without credentials.
    fn get_provider<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<ProviderRecord>>;

    /// Every provider by name, without credentials.
    fn list_providers(&self) -> StoreFuture<'_, Vec<ProviderRecord>>;

    /// Decrypts a provider's credentials: `NotFound` for an unknown provider, `Ok(None)` when it
    /// has none, `Decrypt` for a wrong key.
    fn provider_credentials<'a>(
        &'a self,
        name: &'a str,
        key: &'a CredentialKey,
    ) -> StoreFuture<'a, Option<Secret>>;

    /// Deletes a provider; `NotFound` if absent.
    fn delete_provider<'a>(&'a self, name: &'a str) -> StoreFuture<'a, ()>;

    /// Claims for `owner`, until `now + hold`, the oldest queued plan that is unclaimed or
    /// whose claim ended by `now`; `None` when there is none. Every created plan is queued
    /// with it (same transaction); concurrent claimers never get the same plan while its claim
    /// lasts.
    fn claim_plan<'a>(
        &'a self,
        owner: &'a str,
        now: DateTime<Utc>,
        hold: Duration,
    ) -> StoreFuture<'a, Option<PlanClaim>>;

    /// Extends `owner`'s claim on `plan_id` to `now + hold`; `false` when the claim is no
    /// longer its own (it ran out and another owner took it, or the entry is gone).
    fn renew_plan_claim<'a>(
        &'a self,
        plan_id: &'a str,
        owner: &'a str,
        now: DateTime<Utc>,
        hold: Duration,
    ) -> StoreFuture<'a, bool>;

    /// Takes a finished plan out of the queue if `owner` holds it; whether it did.
    fn complete_plan_claim<'a>(&'a self, plan_id: &'a str, owner: &'a str)
    -> StoreFuture<'a, bool>;

    /// Ends every claim `owner` holds (a daemon restarting under the same name), so those
    /// plans can be claimed at once; how many.
    fn release_plan_claims<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, u64>;

    /// The plan queue, oldest entry first.
    fn queued_plans(&self) -> StoreFuture<'_, Vec<QueuedPlan>>;

    /// How many plans are queued (not finished: waiting or being solved), counted by the
    /// database over the queue alone, so the cost does not grow with the finished plans kept.
    fn count_queued_plans(&self) -> StoreFuture<'_, u64>;

    /// Takes or renews a partition lease: granted when it is free, lapsed at `req.now`, or
    /// already the asker's (the token moves unless `req.held_token` is the current one).
    /// Returns the lease as it stands afterwards; another node's when refused (compare
    /// `owner`).
    fn acquire_lease<'a>(&'a self, req: crate::LeaseRequest<'a>) -> StoreFuture<'a, crate::Lease>;

    /// A lease by name.
    fn lease<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<crate::Lease>>;

    /// Every lease, by name.
    fn leases(&self) -> StoreFuture<'_, Vec<crate::Lease>>;

    /// The streams whose name starts with `prefix`, by name, with their heads (the calendar's
    /// partitions are the streams under `<stream>/`).
    fn streams<'a>(&'a self, prefix: &'a str) -> StoreFuture<'a, Vec<(String, u64)>>;

    /// Lapses a lease at once if `owner` still holds it with `token` (graceful hand-over);
    /// returns whether it did.
    fn release_lease<'a>(
        &'a self,
        name: &'a str,
        owner: &'a str,
        token: u64,
    ) -> StoreFuture<'a, bool>;

    // ----- provided shorthands over `write` ------------------------------------------------

    /// Appends `entries` to `stream` if it is at `expected_seq`; returns the new head.
    /// `Conflict { actual }` otherwise: re-read [`Store::commands_since`], replay, re-check, retry.
    fn append_commands<'a>(
        &'a self,
        stream: &'a str,
        expected_seq: u64,
        entries: &'a [LogEntry],
    ) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let batch = WriteBatch {
                append: Some(Append {
                    stream,
                    expected_seq,
                    entries,
                }),
                ..WriteBatch::default()
            };
            match self.write(batch).await? {
                BatchOutcome::Committed { seq: Some(seq), .. } => Ok(seq),
                other => Err(unexpected(other)),
            }
        })
    }

    /// [`Store::append_commands`] plus the idempotent response, in one transaction. A known
    /// key with the same request hash appends nothing and returns `Replayed`.
    fn append_commands_idempotent<'a>(
        &'a self,
        stream: &'a str,
        expected_seq: u64,
        entries: &'a [LogEntry],
        idempotency: &'a IdempotentResponse,
    ) -> StoreFuture<'a, BatchOutcome> {
        self.write(WriteBatch {
            idempotency: Some(idempotency),
            append: Some(Append {
                stream,
                expected_seq,
                entries,
            }),
            ..WriteBatch::default()
        })
    }

    /// Creates a plan (version 1); `Duplicate` if the id exists.
    fn create_plan<'a>(&'a self, plan: &'a NewPlan) -> StoreFuture<'a, PlanRecord> {
        Box::pin(async move {
            let batch = WriteBatch {
                create_plan: Some(plan),
                ..WriteBatch::default()
            };
            match self.write(batch).await? {
                BatchOutcome::Committed {
                    plan: Some(plan), ..
                } => Ok(plan),
                other => Err(unexpected(other)),
            }
        })
    }

    /// [`Store::create_plan`] with the plan queued already claimed by `owner` until `until`, in
    /// the same transaction (a daemon solving the plans it accepts claims them for free).
    fn create_plan_claimed<'a>(
        &'a self,
        plan: &'a NewPlan,
        owner: &'a str,
        until: DateTime<Utc>,
    ) -> StoreFuture<'a, PlanRecord> {
        Box::pin(async move {
            let batch = WriteBatch {
                create_plan: Some(plan),
                claim_created: Some(NewClaim { owner, until }),
                ..WriteBatch::default()
            };
            match self.write(batch).await? {
                BatchOutcome::Committed {
                    plan: Some(plan), ..
                } => Ok(plan),
                other => Err(unexpected(other)),
            }
        })
    }

    /// [`Store::update_plan`] that also takes the plan out of the queue if `owner` holds its
    /// claim, in the same transaction (a solver recording the outcome).
    fn finish_plan<'a>(
        &'a self,
        id: &'a str,
        expected_version: u64,
        update: &'a PlanUpdate,
        owner: &'a str,
    ) -> StoreFuture<'a, PlanRecord> {
        Box::pin(async move {
            let batch = WriteBatch {
                update_plan: Some(PlanChange {
                    id,
                    expected_version,
                    update,
                }),
                complete_claim: Some(owner),
                ..WriteBatch::default()
            };
            match self.write(batch).await? {
                BatchOutcome::Committed {
                    plan: Some(plan), ..
                } => Ok(plan),
                other => Err(unexpected(other)),
            }
        })
    }

    /// Updates a plan at `expected_version`; returns it at the next version.
    fn update_plan<'a>(
        &'a self,
        id: &'a str,
        expected_version: u64,
        update: &'a PlanUpdate,
    ) -> StoreFuture<'a, PlanRecord> {
        Box::pin(async move {
            let batch = WriteBatch {
                update_plan: Some(PlanChange {
                    id,
                    expected_version,
                    update,
                }),
                ..WriteBatch::default()
            };
            match self.write(batch).await? {
                BatchOutcome::Committed {
                    plan: Some(plan), ..
                } => Ok(plan),
                other => Err(unexpected(other)),
            }
        })
    }

    /// Remembers a response under its key; returns the record now stored (the earlier one when
    /// the key is known with the same request hash). `IdempotencyConflict` for another hash.
    fn remember_idempotent<'a>(
        &'a self,
        response: &'a IdempotentResponse,
    ) -> StoreFuture<'a, IdempotencyRecord> {
        Box::pin(async move {
            let batch = WriteBatch {
                idempotency: Some(response),
                ..WriteBatch::default()
            };
            match self.write(batch).await? {
                BatchOutcome::Replayed(rec) => Ok(rec),
                BatchOutcome::Committed { .. } => Ok(IdempotencyRecord {
                    key: response.key.clone(),
                    request_hash: response.request_hash.clone(),
                    response: response.response.clone(),
                    created_at: crate::rows::micros_floor(response.created_at),
                    schema_version: SCHEMA_VERSION,
                }),
            }
        })
    }
}

fn unexpected(outcome: BatchOutcome) -> StoreError {
    StoreError::Corrupt {
        what: "write outcome",
        detail: format!("unexpected {outcome:?}"),
    }
}

/// Rebuilds a calendar from the whole command log of `stream` (`Calendar::replay` under
/// `policy`) and returns it with the head it reflects.
pub async fn load_calendar(
    store: &dyn Store,
    stream: &str,
    policy: Policy,
) -> Result<(Calendar, u64), StoreError> {
    let commands = store.commands_since(stream, 0).await?;
    let head = commands.last().map_or(0, |c| c.seq);
    let cal = Calendar::replay(policy, commands.into_iter().map(|c| c.entry)).map_err(|e| {
        StoreError::Corrupt {
            what: "command log",
            detail: e.to_string(),
        }
    })?;
    Ok((cal, head))
}

/// Brings `cal` (reflecting `*seq`) up to the head of `stream` by applying the newer commands.
pub async fn catch_up(
    store: &dyn Store,
    stream: &str,
    cal: &mut Calendar,
    seq: &mut u64,
) -> Result<(), StoreError> {
    for c in store.commands_since(stream, *seq).await? {
        cal.apply(c.entry.command, c.entry.at)
            .map_err(|e| StoreError::Corrupt {
                what: "command log",
                detail: format!("command {}: {e}", c.seq),
            })?;
        *seq = c.seq;
    }
    Ok(())
}
