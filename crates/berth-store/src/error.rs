//! `StoreError`: every way a store operation can fail, with fields callers branch on.

use std::fmt;

/// Kind of a stored record, named in errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum RecordKind {
    /// A homing plan.
    Plan,
    /// A notification subscription.
    Subscription,
    /// An inventory provider.
    Provider,
    /// A command stream.
    Stream,
    /// An idempotency key.
    IdempotencyKey,
}

impl std::fmt::Display for RecordKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RecordKind::Plan => "plan",
            RecordKind::Subscription => "subscription",
            RecordKind::Provider => "provider",
            RecordKind::Stream => "command stream",
            RecordKind::IdempotencyKey => "idempotency key",
        })
    }
}

/// Error of a store operation. A failed operation changed nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The URL names no supported backend (only its scheme is kept: URLs carry passwords).
    #[error("unsupported database url scheme `{scheme}`; expected sqlite:// or postgres://")]
    UnsupportedUrl {
        /// Scheme of the URL (text before `:`).
        scheme: String,
    },
    /// Optimistic append lost: the stream is not at the expected sequence number. Re-read the
    /// commands after `expected`, replay them, re-check and retry.
    #[error("command stream `{stream}` is at sequence {actual}, not the expected {expected}")]
    Conflict {
        /// The stream.
        stream: String,
        /// Sequence number the caller expected.
        expected: u64,
        /// Sequence number found.
        actual: u64,
    },
    /// A fenced write lost its lease: another daemon took the partition (or the lease was
    /// never granted with this token). Nothing was written; stop writing the partition.
    #[error(
        "lease `{lease}` is no longer held with token {token} (now `{holder}` holds token {actual}); expected the current holder's token"
    )]
    Fenced {
        /// The lease.
        lease: String,
        /// Token the writer presented.
        token: u64,
        /// Node holding the lease now (empty when there is no lease).
        holder: String,
        /// Its token (0 when there is no lease).
        actual: u64,
    },
    /// The idempotency key was already used with a different request.
    #[error("idempotency key `{key}` was already used with a different request")]
    IdempotencyConflict {
        /// The key.
        key: String,
    },
    /// A record with this id exists already.
    #[error("{kind} `{id}` already exists")]
    Duplicate {
        /// Kind of record.
        kind: RecordKind,
        /// Its id.
        id: String,
    },
    /// No record with this id.
    #[error("{kind} `{id}` not found")]
    NotFound {
        /// Kind of record.
        kind: RecordKind,
        /// Its id.
        id: String,
    },
    /// Optimistic update lost: the record is not at the expected version.
    #[error("{kind} `{id}` is at version {actual}, not the expected {expected}")]
    VersionConflict {
        /// Kind of record.
        kind: RecordKind,
        /// Its id.
        id: String,
        /// Version the caller expected.
        expected: u64,
        /// Version found.
        actual: u64,
    },
    /// A snapshot was offered for a sequence number the stream has not reached.
    #[error("snapshot of stream `{stream}` at sequence {seq} is ahead of its head {head}")]
    SnapshotAhead {
        /// The stream.
        stream: String,
        /// Sequence number of the snapshot.
        seq: u64,
        /// Head of the stream.
        head: u64,
    },
    /// An argument is out of range or malformed.
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// What was invalid.
        what: &'static str,
        /// Why, saying what was expected.
        reason: String,
    },
    /// Credentials were given without a key: they are stored encrypted or not at all.
    #[error(
        "credentials of provider `{provider}` need an encryption key; expected a credential key to store them encrypted"
    )]
    CredentialsWithoutKey {
        /// The provider.
        provider: String,
    },
    /// Stored credentials do not open with the given key (wrong key or tampered data).
    #[error(
        "cannot decrypt the credentials of provider `{provider}`; expected the key they were stored with"
    )]
    Decrypt {
        /// The provider.
        provider: String,
    },
    /// A stored record cannot be read back.
    #[error("stored {what} is unreadable: {detail}")]
    Corrupt {
        /// What was being read.
        what: &'static str,
        /// Why.
        detail: String,
    },
    /// A stored record was written by a newer version of Berth.
    #[error("stored {what} has schema version {found}; this build reads up to {supported}")]
    SchemaTooNew {
        /// What was being read.
        what: &'static str,
        /// Version found.
        found: i64,
        /// Newest version this build reads.
        supported: u32,
    },
    /// The database failed (connection, IO, constraint outside the cases above).
    #[error("database error during {operation}")]
    Database {
        /// What the store was doing.
        operation: &'static str,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// The database refuses writes: no space left, or the file system or server is read-only.
    /// Reads still work; writes work again once the cause is gone.
    #[error("the store refuses writes during {operation}: {refusal}")]
    Refused {
        /// What the store was doing.
        operation: &'static str,
        /// Why.
        refusal: Refusal,
    },
    /// Applying the schema migrations failed.
    #[error("cannot migrate the database schema")]
    Migration {
        /// The migrator's error.
        #[source]
        source: sqlx::migrate::MigrateError,
    },
    /// The SQLite file's directory cannot be created.
    #[error("cannot create directory `{path}`")]
    Io {
        /// The directory.
        path: String,
        /// The IO error.
        #[source]
        source: std::io::Error,
    },
}

/// Why a database refuses writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// No space left on the device (SQLite `SQLITE_FULL`, PostgreSQL `disk_full`, `ENOSPC`).
    Full,
    /// Read-only file system or database (SQLite `SQLITE_READONLY`, PostgreSQL
    /// `read_only_sql_transaction`, `EROFS`).
    ReadOnly,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::Full => "no space left on the database's device; free space to resume writes",
            Refusal::ReadOnly => {
                "the database is read-only; make its file system or server writable to resume writes"
            }
        })
    }
}

impl Refusal {
    /// The refusal `e` reports, if it is one.
    pub(crate) fn of(e: &sqlx::Error) -> Option<Refusal> {
        match e {
            sqlx::Error::Database(d) => {
                let code = d.code();
                let code = code.as_deref().unwrap_or_default();
                // SQLite reports (extended) result codes as numbers: primary code in the low byte.
                if let Ok(n) = code.parse::<u32>() {
                    return match n & 0xff {
                        13 => Some(Refusal::Full),
                        8 => Some(Refusal::ReadOnly),
                        _ => None,
                    };
                }
                match code {
                    "53100" => Some(Refusal::Full),
                    "25006" => Some(Refusal::ReadOnly),
                    _ => None,
                }
            }
            sqlx::Error::Io(io) => match io.raw_os_error() {
                Some(28) => Some(Refusal::Full),
                Some(30) => Some(Refusal::ReadOnly),
                _ => None,
            },
            _ => None,
        }
    }
}

impl StoreError {
    /// Wraps a driver error with what the store was doing; a full or read-only database is a
    /// [`StoreError::Refused`] callers can tell apart from an outage.
    pub(crate) fn db(operation: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
        move |source| match Refusal::of(&source) {
            Some(refusal) => StoreError::Refused { operation, refusal },
            None => StoreError::Database { operation, source },
        }
    }
}

impl StoreError {
    /// True for a transaction the database aborted to keep it serializable (SQLSTATE 40001,
    /// or 40P01 for a deadlock): re-running it is safe. The store retries these itself.
    pub fn is_serialization_failure(&self) -> bool {
        match self {
            StoreError::Database {
                source: sqlx::Error::Database(d),
                ..
            } => matches!(d.code().as_deref(), Some("40001" | "40P01")),
            _ => false,
        }
    }
}

/// True when `e` is a unique-constraint violation (the optimistic-concurrency signal).
pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}
