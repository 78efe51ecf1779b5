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

/// Which database a store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Embedded SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}
