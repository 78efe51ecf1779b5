//! The plan queue: every created plan waits in `plan_queue` until a solver claims it. A claim
//! holds the plan for a while (`claim_until`); the solver renews it while it works and removes
//! the entry when the plan is finished, so a plan is solved once, and a crashed solver's plan
//! is claimed again once its claim expires.
//!
//! Claiming takes the oldest entry that is unclaimed or whose claim expired. On PostgreSQL the
//! candidate row is locked with `FOR UPDATE SKIP LOCKED`, so concurrent claimers (of any daemon)
//! each take a different entry without waiting on each other; on SQLite the claim runs in a
//! `BEGIN IMMEDIATE` transaction, which serializes claimers.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::StoreError;
use crate::model::Backend;
use crate::rows::{time, unsigned, version};

/// A claim on a queued plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanClaim {
    /// The plan claimed.
    pub plan_id: String,
    /// Who holds the claim (a daemon's node name and worker).
    pub owner: String,
    /// When the claim expires unless renewed.
    pub until: DateTime<Utc>,
    /// How many times the plan has been claimed, this claim included (above 1: an earlier
    /// claimer stopped without finishing it).
    pub attempts: u32,
    /// Schema version of the row.
    pub schema_version: u32,
}

pub(crate) mod q {
    /// `$4`/`$5`/`$6`: owner, claim end and attempts of a plan queued already claimed (NULL,
    /// NULL, 0 otherwise).
    pub const ENQUEUE: &str = "INSERT INTO plan_queue (plan_id, owner, claim_until_us, attempts, enqueued_at_us, schema_version) \
         VALUES ($1, $4, $5, $6, $2, $3) ON CONFLICT (plan_id) DO NOTHING";
    /// `$1` owner, `$2` now, `$3` claim end, `$4` schema version; the lock clause is appended
    /// to the inner select per backend.
    const CLAIM_HEAD: &str = "UPDATE plan_queue SET owner = $1, claim_until_us = $3, attempts = attempts + 1, schema_version = $4 \
         WHERE plan_id = (SELECT plan_id FROM plan_queue WHERE claim_until_us IS NULL OR claim_until_us <= $2 \
         ORDER BY enqueued_at_us, plan_id LIMIT 1";
    const CLAIM_TAIL: &str = ") RETURNING plan_id, owner, claim_until_us, attempts, schema_version";
    pub fn claim(lock: &str) -> String {
        format!("{CLAIM_HEAD}{lock}{CLAIM_TAIL}")
    }
    /// Whether anything is claimable, read without a write transaction (idle polls stay
    /// cheap and never take SQLite's write lock).
    pub const ANY_CLAIMABLE: &str = "SELECT plan_id FROM plan_queue WHERE claim_until_us IS NULL OR claim_until_us <= $1 LIMIT 1";
    pub const RENEW: &str = "UPDATE plan_queue SET claim_until_us = $3 WHERE plan_id = $1 AND owner = $2 AND claim_until_us IS NOT NULL";
    pub const COMPLETE: &str = "DELETE FROM plan_queue WHERE plan_id = $1 AND owner = $2";
    pub const RELEASE_OWNER: &str = "UPDATE plan_queue SET claim_until_us = NULL WHERE owner = $1 AND claim_until_us IS NOT NULL";
    pub const LIST: &str = "SELECT plan_id, owner, claim_until_us, attempts, schema_version FROM plan_queue ORDER BY enqueued_at_us, plan_id";
}

/// The claim statement for `backend`.
pub(crate) fn claim_sql(backend: Backend) -> String {
    match backend {
        // Concurrent claimers skip a row another transaction holds instead of queueing on it.
        Backend::Postgres => q::claim(" FOR UPDATE SKIP LOCKED"),
        // Serialized by `BEGIN IMMEDIATE`: no other writer runs between select and update.
        Backend::Sqlite => q::claim(""),
    }
}

/// `now + hold` in microseconds (saturating).
pub(crate) fn claim_end(now: DateTime<Utc>, hold: Duration) -> i64 {
    let hold = i64::try_from(hold.as_micros()).unwrap_or(i64::MAX);
    now.timestamp_micros().saturating_add(hold)
}

/// A claim made together with the plan it claims ([`crate::WriteBatch::claim_created`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewClaim<'a> {
    /// Who holds it.
    pub owner: &'a str,
    /// When it expires unless renewed.
    pub until: DateTime<Utc>,
}

/// A queue row; unclaimed rows have no owner or end.
#[derive(sqlx::FromRow)]
pub(crate) struct ClaimRow {
    plan_id: String,
    owner: Option<String>,
    claim_until_us: Option<i64>,
    attempts: i64,
    schema_version: i64,
}

/// A queue entry as listed: the plan and its claim, if any.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueuedPlan {
    /// The plan waiting or being solved.
    pub plan_id: String,
    /// The current claim (`None`: waiting for a solver).
    pub claim: Option<PlanClaim>,
    /// Claims so far.
    pub attempts: u32,
}

impl ClaimRow {
    pub(crate) fn into_claim(self) -> Result<PlanClaim, StoreError> {
        let id = self.plan_id.clone();
        self.into_queued()?
            .claim
            .ok_or_else(|| StoreError::Corrupt {
                what: "plan claim",
                detail: format!("plan `{id}`: claimed row has no owner or end"),
            })
    }

    pub(crate) fn into_queued(self) -> Result<QueuedPlan, StoreError> {
        const W: &str = "plan claim";
        let schema_version = version(W, self.schema_version)?;
        let attempts = u32::try_from(unsigned(W, self.attempts)?).unwrap_or(u32::MAX);
        let claim = match (self.owner, self.claim_until_us) {
            (Some(owner), Some(until)) => Some(PlanClaim {
                plan_id: self.plan_id.clone(),
                owner,
                until: time(W, until)?,
                attempts,
                schema_version,
            }),
            _ => None,
        };
        Ok(QueuedPlan {
            plan_id: self.plan_id,
            claim,
            attempts,
        })
    }
}
