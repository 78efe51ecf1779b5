//! Partition leases with fencing tokens: who owns a calendar partition, until when, and the
//! token every write of the owner carries so a writer that lost the lease cannot write.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::StoreError;
use crate::model::SCHEMA_VERSION;

/// A partition's lease as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// Lease name (one per partition).
    pub lease: String,
    /// The daemon holding it (its node id).
    pub owner: String,
    /// Where the owner answers requests (for forwarding).
    pub owner_url: String,
    /// Fencing token: 1 at first acquisition, +1 whenever the lease is taken by a new holder
    /// (or by the same node without its current token); a renewal keeps it.
    pub token: u64,
    /// When the lease lapses unless renewed.
    pub expires_at: DateTime<Utc>,
    /// Schema version of the stored row.
    pub schema_version: u32,
}

impl Lease {
    /// True when `owner` holds it and it has not lapsed at `now`.
    pub fn held_by(&self, owner: &str, now: DateTime<Utc>) -> bool {
        self.owner == owner && self.expires_at > now
    }
}

/// A request to take or renew a lease ([`crate::Store::acquire_lease`]).
#[derive(Debug, Clone, Copy)]
pub struct LeaseRequest<'a> {
    /// Lease name.
    pub lease: &'a str,
    /// The asking daemon's node id.
    pub owner: &'a str,
    /// Where it answers requests.
    pub owner_url: &'a str,
    /// The token the asker holds (a renewal keeps it), or `None` to acquire.
    pub held_token: Option<u64>,
    /// The asker's clock: a lease that lapsed by then may be taken.
    pub now: DateTime<Utc>,
    /// The new expiry when the lease is granted.
    pub expires_at: DateTime<Utc>,
}

/// A write's proof of ownership: the batch commits only if `lease` still has `token`
/// (checked, and the lease row locked, inside the batch's transaction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fence<'a> {
    /// Lease name.
    pub lease: &'a str,
    /// Token the writer was granted.
    pub token: u64,
}

/// Statements of the leases table, shared by both backends.
pub(crate) mod q {
    /// Inserts a new lease, or takes over one that lapsed or is the asker's own. The token
    /// moves unless the asker renews with the current token.
    pub const ACQUIRE: &str = "INSERT INTO leases (lease, owner, owner_url, token, expires_at_us, schema_version) \
         VALUES ($1, $2, $3, 1, $4, $5) ON CONFLICT (lease) DO UPDATE SET owner = excluded.owner, \
         owner_url = excluded.owner_url, expires_at_us = excluded.expires_at_us, schema_version = excluded.schema_version, \
         token = CASE WHEN leases.owner = excluded.owner AND leases.token = $6 THEN leases.token ELSE leases.token + 1 END \
         WHERE leases.owner = excluded.owner OR leases.expires_at_us <= $7 \
         RETURNING lease, owner, owner_url, token, expires_at_us, schema_version";
    pub const GET: &str = "SELECT lease, owner, owner_url, token, expires_at_us, schema_version FROM leases WHERE lease = $1";
    pub const LIST: &str = "SELECT lease, owner, owner_url, token, expires_at_us, schema_version FROM leases ORDER BY lease";
    /// Lapses the lease now if the caller still holds it (a graceful hand-over).
    pub const RELEASE: &str =
        "UPDATE leases SET expires_at_us = $4 WHERE lease = $1 AND owner = $2 AND token = $3";
    /// A no-op update: matches only while the token is current, and locks the row until the
    /// transaction ends, so a takeover waits for (or fences out) the write.
    pub const FENCE: &str = "UPDATE leases SET token = token WHERE lease = $1 AND token = $2";
}

#[derive(sqlx::FromRow)]
pub(crate) struct LeaseRow {
    lease: String,
    owner: String,
    owner_url: String,
    token: i64,
    expires_at_us: i64,
    schema_version: i64,
}

impl LeaseRow {
    pub(crate) fn into_record(self) -> Result<Lease, StoreError> {
        if self.schema_version > i64::from(SCHEMA_VERSION) {
            return Err(StoreError::SchemaTooNew {
                what: "lease",
                found: self.schema_version,
                supported: SCHEMA_VERSION,
            });
        }
        let corrupt = |detail: String| StoreError::Corrupt {
            what: "lease",
            detail,
        };
        Ok(Lease {
            token: u64::try_from(self.token)
                .map_err(|_| corrupt(format!("negative token {}", self.token)))?,
            expires_at: DateTime::from_timestamp_micros(self.expires_at_us).ok_or_else(|| {
                corrupt(format!("expiry {} µs is out of range", self.expires_at_us))
            })?,
            schema_version: u32::try_from(self.schema_version)
                .map_err(|_| corrupt(format!("schema version {}", self.schema_version)))?,
            lease: self.lease,
            owner: self.owner,
            owner_url: self.owner_url,
        })
    }
}

/// The error for a fence that no longer holds: names who holds the lease now.
pub(crate) fn fenced(fence: &Fence<'_>, now: Option<Lease>) -> StoreError {
    StoreError::Fenced {
        lease: fence.lease.to_owned(),
        token: fence.token,
        holder: now.as_ref().map_or_else(String::new, |l| l.owner.clone()),
        actual: now.map_or(0, |l| l.token),
    }
}

/// Runs `f` again, with a short randomized backoff, while it fails with a serialization
/// failure or deadlock (SQLSTATE 40001 / 40P01): under SERIALIZABLE (PostgreSQL on request,
/// CockroachDB and YugabyteDB always) a transaction may be aborted so and is safe to re-run.
pub(crate) async fn retry_serialization<T, F, Fut>(f: F) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    retry_serialization_n(10, f).await
}

/// [`retry_serialization`] with `attempts` tries. A lease takeover gets more: under
/// SERIALIZABLE the first updater wins, so a busy writer still renewing-or-fencing on the
/// row can abort a takeover many times in a row.
pub(crate) async fn retry_serialization_n<T, F, Fut>(
    attempts: u32,
    mut f: F,
) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    let mut attempt = 0;
    loop {
        match f().await {
            Err(e) if attempt + 1 < attempts && e.is_serialization_failure() => {
                attempt += 1;
                backoff(attempt).await;
            }
            other => return other,
        }
    }
}

/// 1, 2, 4 … 64 ms plus up to as much jitter (from the clock's nanoseconds: spreading, not
/// security), so retrying writers do not collide in lock step.
async fn backoff(attempt: u32) {
    let base = 1u64 << attempt.min(6);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    let ms = base + nanos % (base + 1);
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
}
