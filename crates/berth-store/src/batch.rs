//! One atomic write: appends to calendar streams, a plan created or updated, a plan claim,
//! the fences it must still hold and idempotency records, and what committing it gave.

use berth_calendar::LogEntry;

use crate::lease::Fence;
use crate::model::{IdempotencyRecord, IdempotentResponse, NewPlan, PlanRecord, PlanUpdate};
use crate::queue::NewClaim;

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
    pub claim_created: Option<NewClaim<'a>>,
    /// Plan to update.
    pub update_plan: Option<PlanChange<'a>>,
    /// Leases the batch must still hold (checked first, rows locked until the commit): a stale
    /// token fails the whole batch with `Fenced`.
    pub fences: &'a [Fence<'a>],
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
