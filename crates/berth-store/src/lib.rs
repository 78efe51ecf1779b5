//! Durable state: the [`Store`] trait with SQLite (embedded default) and PostgreSQL backends.
//!
//! # Key types
//! - [`Store`]: object-safe async trait (methods return a boxed [`StoreFuture`]), so a daemon
//!   holds an `Arc<dyn Store>` picked at run time by [`open`] from a URL (`sqlite://…`,
//!   `sqlite::memory:`, `postgres://…`). Backends: [`SqliteStore`], [`PgStore`].
//! - The calendar's **command log** is the system of record: per stream, `(now, Command)`
//!   entries ([`berth_calendar::LogEntry`]) with sequence numbers `1, 2, …`.
//!   [`Store::append_commands`] appends only if the stream is at the caller's `expected_seq`,
//!   else fails with [`StoreError::Conflict`] carrying the actual head. [`load_calendar`] and
//!   [`catch_up`] rebuild or advance an in-memory `Calendar` from it.
//! - [`WriteBatch`] / [`Store::write`]: the one atomic write — idempotency key check, append,
//!   plan create/update and the remembered responses commit together or not at all. A group
//!   commit appends many requests' commands and remembers all their keys
//!   ([`WriteBatch::remember`], checked first with [`Store::lookup_idempotent_many`]).
//! - Snapshots ([`Snapshot`]): opaque state text a caller wrote after applying `seq`, stored
//!   with a checksum that is verified on every read (`Corrupt` when damaged); the newest
//!   [`SNAPSHOTS_KEPT`] per stream are kept, listed newest first by [`Store::snapshot_seqs`],
//!   so a reader can fall back to an older one.
//! - The plan queue ([`Store::claim_plan`], [`PlanClaim`]): every created plan is queued in
//!   the same transaction; solvers of any daemon claim plans with an expiry, renew while they
//!   work and complete when done, so each plan is solved once and a crashed solver's plan is
//!   claimed again after its claim runs out.
//! - Plans ([`PlanRecord`], optimistic `version`), idempotency records, subscriptions,
//!   providers (credentials sealed with a caller's [`CredentialKey`], never listed).
//!
//! # Invariants
//! - Sequence numbers of a stream are contiguous from 1, and `head` equals the last one; among
//!   concurrent appenders expecting the same head exactly one commits, on one process or many
//!   sharing a PostgreSQL database. The admission pattern built on it: read head, apply to the
//!   in-memory calendar, append with `expected_seq = head`; on `Conflict`, [`catch_up`],
//!   re-check and retry. A command is only in the log if its whole request committed.
//! - Every call is one transaction; a failed call changed nothing.
//! - Committed data survives a crash: SQLite runs in WAL mode with `synchronous = FULL`.
//! - Every row carries [`SCHEMA_VERSION`]; rows from a newer schema are refused, not misread.
//!   Schemas are created by embedded migrations (`migrations/sqlite`, `migrations/postgres`).
//! - Times are kept at microsecond precision; lists come back in a deterministic order.
//! - Provider credentials are stored encrypted (XChaCha20-Poly1305, bound to the provider
//!   name) or not at all, and are returned only by [`Store::provider_credentials`].
//!
//! # Using it from a daemon
//! Optimistic appends keep several daemons on one PostgreSQL database correct, but many
//! clients of ONE process racing on one stream mostly retry. Inside a process, funnel
//! admissions through one writer task that checks each request against its in-memory calendar
//! and commits everything queued in one [`Store::write`] (group commit: one fsync for many
//! requests), answering each client after the commit; `Conflict` (or a `Duplicate`
//! idempotency key) then only means another daemon wrote first: rebuild and re-check.
//! `berth_service::ReservationService` does exactly this. `examples/append_load.rs` measures
//! the three patterns (`race`, `serial`, `group`).
//!
//! # Example
//! ```
//! use berth_calendar::{Amounts, CapacityChange, Command, LogEntry, PoolKey, Policy};
//! use berth_calendar::chrono::{TimeZone, Utc};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), berth_store::StoreError> {
//! let store = berth_store::open("sqlite::memory:").await?;
//! let t0 = Utc.with_ymd_and_hms(2016, 2, 1, 0, 0, 0).unwrap();
//! let grow = LogEntry {
//!     at: t0,
//!     command: Command::IncreaseCapacity(CapacityChange {
//!         pool: PoolKey::new("zone-1", "openstack"),
//!         start: t0,
//!         end: None,
//!         amounts: Amounts::new().with("cores", 8),
//!     }),
//! };
//! assert_eq!(store.append_commands("calendar", 0, &[grow.clone()]).await?, 1);
//! // A second writer that also saw head 0 loses and learns the head.
//! let lost = store.append_commands("calendar", 0, &[grow]).await;
//! assert!(matches!(lost, Err(berth_store::StoreError::Conflict { actual: 1, .. })));
//! let (calendar, head) = berth_store::load_calendar(&*store, "calendar", Policy::default()).await?;
//! assert_eq!(head, 1);
//! assert_eq!(calendar.clock(), Some(t0));
//! # Ok(()) }
//! ```

mod batch;
mod crypto;
mod error;
mod lease;
mod model;
mod postgres;
mod queue;
mod rows;
mod sql;
mod sqlite;
mod store;

use std::sync::Arc;
use std::time::Duration;

pub use batch::{Append, BatchOutcome, PlanChange, WriteBatch};
pub use crypto::{CredentialKey, Secret};
pub use error::{RecordKind, Refusal, StoreError};
pub use lease::{Fence, Lease, LeaseRequest};
pub use model::{
    Backend, IdempotencyRecord, IdempotentResponse, NewPlan, NewProvider, NewSubscription,
    PlanRecord, PlanUpdate, ProviderRecord, SCHEMA_VERSION, SNAPSHOTS_KEPT, Snapshot,
    StoredCommand, SubscriptionKind, SubscriptionRecord,
};
pub use postgres::PgStore;
pub use queue::{NewClaim, PlanClaim, QueuedPlan};
pub use sqlite::SqliteStore;
pub use store::{Store, StoreFuture, catch_up, load_calendar};

/// Connection settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// Pool size (an in-memory SQLite database always uses one connection).
    pub max_connections: u32,
    /// How long an SQLite writer waits for the database lock.
    pub busy_timeout: Duration,
    /// How long a call waits for a pooled connection.
    pub acquire_timeout: Duration,
    /// PostgreSQL schema holding the tables (created if missing); `None` uses the default
    /// search path. Lowercase letters, digits and `_`.
    pub pg_schema: Option<String>,
    /// Isolation level of PostgreSQL write transactions. Read committed suffices for every
    /// path (compare-and-set updates and primary keys); serializable is what CockroachDB and
    /// YugabyteDB run, and the store retries its serialization failures.
    pub pg_isolation: Isolation,
    /// Create the missing directories of a SQLite file. Off: a missing directory is an
    /// error (a mistyped path would start an empty store elsewhere).
    pub create_dirs: bool,
}

/// Isolation level of the PostgreSQL backend's write transactions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Isolation {
    /// `READ COMMITTED` (PostgreSQL's default).
    #[default]
    ReadCommitted,
    /// `SERIALIZABLE`; aborted transactions (SQLSTATE 40001) are retried with backoff.
    Serializable,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            max_connections: 8,
            busy_timeout: Duration::from_secs(10),
            acquire_timeout: Duration::from_secs(30),
            pg_schema: None,
            pg_isolation: Isolation::ReadCommitted,
            create_dirs: false,
        }
    }
}

/// Opens the store a URL names, with default options: `sqlite://PATH` (the file created in
/// an existing directory), `sqlite::memory:`, or `postgres://…` / `postgresql://…`.
pub async fn open(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    open_with(url, &StoreOptions::default()).await
}

/// [`open`] with explicit options.
pub async fn open_with(url: &str, options: &StoreOptions) -> Result<Arc<dyn Store>, StoreError> {
    let scheme = url.split(':').next().unwrap_or_default();
    match scheme {
        "sqlite" => Ok(Arc::new(SqliteStore::open(url, options).await?)),
        "postgres" | "postgresql" => Ok(Arc::new(PgStore::connect(url, options).await?)),
        _ => Err(StoreError::UnsupportedUrl {
            scheme: scheme.chars().take(32).collect(),
        }),
    }
}
