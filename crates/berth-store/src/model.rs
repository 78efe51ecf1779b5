//! Records the store keeps and the inputs that create them; every record read back carries the
//! schema version it was written with.

use berth_calendar::LogEntry;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::crypto::Secret;

/// Schema version written into every persisted record by this build. Records with a higher
/// version are refused ([`crate::StoreError::SchemaTooNew`]) rather than misread.
pub const SCHEMA_VERSION: u32 = 1;

/// One command of a stream with its sequence number (1-based, contiguous per stream).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCommand {
    /// Sequence number.
    pub seq: u64,
    /// The `(now, command)` log entry, as `Calendar::replay` takes it.
    pub entry: LogEntry,
    /// Schema version of the stored row.
    pub schema_version: u32,
}

/// How many snapshots of a stream [`crate::Store::put_snapshot`] keeps (the newest ones), so a
/// reader that cannot use the newest can fall back to an older one.
pub const SNAPSHOTS_KEPT: usize = 3;

/// A snapshot of a stream: an opaque state the caller wrote after applying `seq`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Stream.
    pub stream: String,
    /// Last sequence number folded into `state`.
    pub seq: u64,
    /// Caller-defined state (JSON text by convention), exactly as written: its checksum was
    /// verified on the way out.
    pub state: String,
    /// When the caller took it.
    pub created_at: DateTime<Utc>,
    /// Schema version of the stored row.
    pub schema_version: u32,
}

/// A plan to create.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewPlan {
    /// Plan id (unique).
    pub id: String,
    /// Plan name.
    pub name: String,
    /// Initial status (the store treats statuses as opaque text).
    pub status: String,
    /// The request as received.
    pub request: Value,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

/// A stored plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRecord {
    /// Plan id.
    pub id: String,
    /// Plan name.
    pub name: String,
    /// Current status.
    pub status: String,
    /// The request as received.
    pub request: Value,
    /// Result (recommendations, triage...), once there is one.
    pub result: Option<Value>,
    /// Human-readable message (error reason...).
    pub message: Option<String>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Time of the last update.
    pub updated_at: DateTime<Utc>,
    /// Optimistic-concurrency version: 1 at creation, +1 per update.
    pub version: u64,
    /// Schema version of the stored row.
    pub schema_version: u32,
}

/// New values of a plan's mutable fields; all of them replace the stored ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanUpdate {
    /// New status.
    pub status: String,
    /// New result (`None` clears it).
    pub result: Option<Value>,
    /// New message (`None` clears it).
    pub message: Option<String>,
    /// Time of the update.
    pub updated_at: DateTime<Utc>,
}

/// The response to remember under an idempotency key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdempotentResponse {
    /// The client's key (scope it, e.g. `route:tenant:key`, if keys may collide).
    pub key: String,
    /// Hash of the request the key was first used with.
    pub request_hash: String,
    /// The response to return to a retry.
    pub response: Value,
    /// When it was first answered.
    pub created_at: DateTime<Utc>,
}

/// A remembered idempotent response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdempotencyRecord {
    /// The key.
    pub key: String,
    /// Hash of the request the key was first used with.
    pub request_hash: String,
    /// The response given then.
    pub response: Value,
    /// When.
    pub created_at: DateTime<Utc>,
    /// Schema version of the stored row.
    pub schema_version: u32,
}

/// What a subscription watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubscriptionKind {
    /// Capacity thresholds (`/capacity/{compute|network|storage}/subscribe`).
    Capacity,
    /// Reservation events matching filters (`/reservation/subscribe`).
    Reservation,
}

impl SubscriptionKind {
    /// Stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            SubscriptionKind::Capacity => "capacity",
            SubscriptionKind::Reservation => "reservation",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "capacity" => Some(SubscriptionKind::Capacity),
            "reservation" => Some(SubscriptionKind::Reservation),
            _ => None,
        }
    }
}

/// A subscription to create.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewSubscription {
    /// Subscription id (unique).
    pub id: String,
    /// What it watches.
    pub kind: SubscriptionKind,
    /// Threshold or filters, as the API layer defines them.
    pub spec: Value,
    /// Where notifications are POSTed.
    pub callback_url: String,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

/// A stored subscription.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionRecord {
    /// Subscription id.
    pub id: String,
    /// What it watches.
    pub kind: SubscriptionKind,
    /// Threshold or filters.
    pub spec: Value,
    /// Where notifications are POSTed.
    pub callback_url: String,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Schema version of the stored row.
    pub schema_version: u32,
}

/// A provider to create or replace. `credentials` are encrypted with the caller's key before
/// they reach the database, and are never part of a [`ProviderRecord`].
#[derive(Debug, Clone, PartialEq)]
pub struct NewProvider {
    /// Provider name (unique).
    pub name: String,
    /// Endpoint (e.g. a Keystone URL).
    pub endpoint: String,
    /// Non-secret settings (region, project, ...).
    pub metadata: Value,
    /// Secret credentials, if any.
    pub credentials: Option<Secret>,
    /// Time of this write.
    pub now: DateTime<Utc>,
}

/// A stored provider, without its credentials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderRecord {
    /// Provider name.
    pub name: String,
    /// Endpoint.
    pub endpoint: String,
    /// Non-secret settings.
    pub metadata: Value,
    /// Whether encrypted credentials are stored (read them with `provider_credentials`).
    pub has_credentials: bool,
    /// First creation time.
    pub created_at: DateTime<Utc>,
    /// Last write time.
    pub updated_at: DateTime<Utc>,
    /// Schema version of the stored row.
    pub schema_version: u32,
}

/// Commands to append to a stream, expecting it at `expected_seq`.
#[derive(Debug, Clone, Copy)]
pub struct Append<'a> {
    /// Stream name (one per calendar).
    pub stream: &'a str,
    /// Sequence number the caller last saw (0 for an empty stream).
    pub expected_seq: u64,
    /// Entries; they get `expected_seq + 1 ..= expected_seq + len`.
    pub entries: &'a [LogEntry],
}

/// An optimistic plan update.
#[derive(Debug, Clone, Copy)]
pub struct PlanChange<'a> {
    /// Plan id.
    pub id: &'a str,
    /// Version the caller last saw.
    pub expected_version: u64,
    /// New values.
    pub update: &'a PlanUpdate,
}

/// Writes committed in ONE transaction: all of them or none. Order inside the transaction:
/// idempotency check, fences, appends (by stream name, so concurrent multi-stream batches lock
/// rows in one order), plan creation, plan update, idempotency records.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteBatch<'a> {
    /// When set and the key is known with the same request hash, nothing is written and the
    /// remembered response comes back ([`BatchOutcome::Replayed`]); with another hash the batch
    /// fails with `IdempotencyConflict`. Otherwise the response is remembered with the rest.
    pub idempotency: Option<&'a IdempotentResponse>,
    /// Commands to append.
    pub append: Option<Append<'a>>,
    /// Plan to create (queued in the plan queue with it).
    pub create_plan: Option<&'a NewPlan>,
    /// With `create_plan`: queue the plan already claimed (the accepting daemon solves it).
    pub claim_created: Option<crate::queue::NewClaim<'a>>,
    /// Plan to update.
    pub update_plan: Option<PlanChange<'a>>,
    /// Leases the batch must still hold (checked first, rows locked until the commit): a stale
    /// token fails the whole batch with `Fenced`.
    pub fences: &'a [crate::Fence<'a>],
    /// Appends to further streams, committed with `append` or not at all (a reservation
    /// spanning partitions). Each stream at most once; each gets `Conflict` like `append`, and
    /// its new head is its `expected_seq` plus its entry count.
    pub also_append: &'a [Append<'a>],
    /// With `update_plan`: take the plan out of the queue if this owner holds its claim (a
    /// solver recording the outcome).
    pub complete_claim: Option<&'a str>,
    /// More responses to remember, unchecked (a group commit checked them with
    /// [`crate::Store::lookup_idempotent_many`] first): a key already stored, or given twice,
    /// fails the whole batch with `Duplicate { kind: IdempotencyKey, .. }`.
    pub remember: &'a [IdempotentResponse],
}

/// Result of a committed batch.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchOutcome {
    /// Everything was written.
    Committed {
        /// New head of the appended stream, when the batch appended.
        seq: Option<u64>,
        /// The created or updated plan (the updated one when the batch did both).
        plan: Option<PlanRecord>,
    },
    /// The idempotency key was known for the same request: nothing was written.
    Replayed(IdempotencyRecord),
}

/// Which database a store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Embedded SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}
