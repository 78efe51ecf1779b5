//! Raw rows as both backends return them, and their checked conversion into records.

use berth_calendar::{Command, LogEntry};
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::StoreError;
use crate::model::{
    IdempotencyRecord, PlanRecord, ProviderRecord, SCHEMA_VERSION, Snapshot, StoredCommand,
    SubscriptionKind, SubscriptionRecord,
};

/// Column lists, shared by every statement that reads a record.
pub(crate) const PLAN_COLUMNS: &str = "id, name, status, request, result, message, created_at_us, updated_at_us, version, schema_version";
pub(crate) const PROVIDER_COLUMNS: &str = "name, endpoint, metadata, CAST(CASE WHEN credentials IS NULL THEN 0 ELSE 1 END AS BIGINT) AS has_credentials, created_at_us, updated_at_us, schema_version";

#[derive(sqlx::FromRow)]
pub(crate) struct CommandRow {
    seq: i64,
    at_us: i64,
    command: String,
    schema_version: i64,
}

#[derive(sqlx::FromRow)]
pub(crate) struct SnapshotRow {
    stream: String,
    seq: i64,
    state: String,
    created_at_us: i64,
    schema_version: i64,
    checksum: Option<String>,
}

#[derive(sqlx::FromRow)]
pub(crate) struct PlanRow {
    id: String,
    name: String,
    status: String,
    request: String,
    result: Option<String>,
    message: Option<String>,
    created_at_us: i64,
    updated_at_us: i64,
    version: i64,
    schema_version: i64,
}

#[derive(sqlx::FromRow)]
pub(crate) struct IdemRow {
    idem_key: String,
    request_hash: String,
    response: String,
    created_at_us: i64,
    schema_version: i64,
}

#[derive(sqlx::FromRow)]
pub(crate) struct SubRow {
    id: String,
    kind: String,
    spec: String,
    callback_url: String,
    created_at_us: i64,
    schema_version: i64,
}

#[derive(sqlx::FromRow)]
pub(crate) struct ProviderRow {
    name: String,
    endpoint: String,
    metadata: String,
    has_credentials: i64,
    created_at_us: i64,
    updated_at_us: i64,
    schema_version: i64,
}

/// `t` truncated to whole microseconds, the precision every backend keeps.
pub(crate) fn micros_floor(t: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(t.timestamp_micros()).unwrap_or(t)
}

pub(crate) fn micros(t: DateTime<Utc>) -> i64 {
    t.timestamp_micros()
}

pub(crate) fn time(what: &'static str, us: i64) -> Result<DateTime<Utc>, StoreError> {
    DateTime::from_timestamp_micros(us).ok_or_else(|| StoreError::Corrupt {
        what,
        detail: format!("timestamp {us} µs is out of range"),
    })
}

pub(crate) fn version(what: &'static str, v: i64) -> Result<u32, StoreError> {
    if v > i64::from(SCHEMA_VERSION) {
        return Err(StoreError::SchemaTooNew {
            what,
            found: v,
            supported: SCHEMA_VERSION,
        });
    }
    u32::try_from(v)
        .ok()
        .filter(|v| *v >= 1)
        .ok_or_else(|| StoreError::Corrupt {
            what,
            detail: format!("schema version {v}; expected 1..={SCHEMA_VERSION}"),
        })
}

pub(crate) fn unsigned(what: &'static str, v: i64) -> Result<u64, StoreError> {
    u64::try_from(v).map_err(|_| StoreError::Corrupt {
        what,
        detail: format!("negative number {v}"),
    })
}

fn json(what: &'static str, text: &str) -> Result<Value, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt {
        what,
        detail: e.to_string(),
    })
}

/// A caller's number as a database integer.
pub(crate) fn signed(what: &'static str, v: u64) -> Result<i64, StoreError> {
    i64::try_from(v).map_err(|_| StoreError::Invalid {
        what,
        reason: format!("{v} is too large; expected at most {}", i64::MAX),
    })
}

/// A value as stored JSON text.
pub(crate) fn to_text<T: serde::Serialize>(
    what: &'static str,
    v: &T,
) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Invalid {
        what,
        reason: format!("cannot serialize: {e}"),
    })
}

impl CommandRow {
    pub(crate) fn into_record(self) -> Result<StoredCommand, StoreError> {
        const W: &str = "command";
        let schema_version = version(W, self.schema_version)?;
        let command: Command =
            serde_json::from_str(&self.command).map_err(|e| StoreError::Corrupt {
                what: W,
                detail: format!("sequence {}: {e}", self.seq),
            })?;
        Ok(StoredCommand {
            seq: unsigned(W, self.seq)?,
            entry: LogEntry {
                at: time(W, self.at_us)?,
                command,
            },
            schema_version,
        })
    }
}

impl SnapshotRow {
    pub(crate) fn into_record(self) -> Result<Snapshot, StoreError> {
        const W: &str = "snapshot";
        // Rows written before the checksum column existed carry none and are taken as they are.
        if let Some(stored) = &self.checksum {
            let actual = checksum(&self.state);
            if *stored != actual {
                return Err(StoreError::Corrupt {
                    what: W,
                    detail: format!(
                        "stream `{}` sequence {}: checksum {actual}; expected {stored}",
                        self.stream, self.seq
                    ),
                });
            }
        }
        Ok(Snapshot {
            schema_version: version(W, self.schema_version)?,
            seq: unsigned(W, self.seq)?,
            created_at: time(W, self.created_at_us)?,
            stream: self.stream,
            state: self.state,
        })
    }
}

/// Checksum of a stored text: FNV-1a 64 in hex. It detects damaged rows (any one changed byte
/// always changes it); it is not a defence against deliberate tampering.
pub(crate) fn checksum(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

impl PlanRow {
    pub(crate) fn into_record(self) -> Result<PlanRecord, StoreError> {
        const W: &str = "plan";
        Ok(PlanRecord {
            schema_version: version(W, self.schema_version)?,
            request: json(W, &self.request)?,
            result: self.result.as_deref().map(|r| json(W, r)).transpose()?,
            created_at: time(W, self.created_at_us)?,
            updated_at: time(W, self.updated_at_us)?,
            version: unsigned(W, self.version)?,
            id: self.id,
            name: self.name,
            status: self.status,
            message: self.message,
        })
    }
}

impl IdemRow {
    pub(crate) fn into_record(self) -> Result<IdempotencyRecord, StoreError> {
        const W: &str = "idempotency record";
        Ok(IdempotencyRecord {
            schema_version: version(W, self.schema_version)?,
            response: json(W, &self.response)?,
            created_at: time(W, self.created_at_us)?,
            key: self.idem_key,
            request_hash: self.request_hash,
        })
    }
}

impl SubRow {
    pub(crate) fn into_record(self) -> Result<SubscriptionRecord, StoreError> {
        const W: &str = "subscription";
        Ok(SubscriptionRecord {
            schema_version: version(W, self.schema_version)?,
            kind: SubscriptionKind::parse(&self.kind).ok_or_else(|| StoreError::Corrupt {
                what: W,
                detail: format!("kind `{}`; expected capacity or reservation", self.kind),
            })?,
            spec: json(W, &self.spec)?,
            created_at: time(W, self.created_at_us)?,
            id: self.id,
            callback_url: self.callback_url,
        })
    }
}

impl ProviderRow {
    pub(crate) fn into_record(self) -> Result<ProviderRecord, StoreError> {
        const W: &str = "provider";
        Ok(ProviderRecord {
            schema_version: version(W, self.schema_version)?,
            metadata: json(W, &self.metadata)?,
            has_credentials: self.has_credentials != 0,
            created_at: time(W, self.created_at_us)?,
            updated_at: time(W, self.updated_at_us)?,
            name: self.name,
            endpoint: self.endpoint,
        })
    }
}

/// Converts rows, failing on the first unreadable one.
pub(crate) fn convert<R, T>(
    rows: Vec<R>,
    f: impl Fn(R) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    rows.into_iter().map(f).collect()
}
