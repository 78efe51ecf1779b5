//! `CalendarError`: every way a calendar command, query or restore can be refused.

use std::fmt;

use chrono::{DateTime, Utc};

use crate::model::{AllocationState, Conflict, ReservationState};
use crate::policy::PolicyRule;
use crate::types::{
    AllocationId, Dimension, PoolKey, ProviderId, ReservationId, SubscriptionId, ZoneId,
};

/// Why the calendar refused a command or query. Nothing changed when this is returned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CalendarError {
    /// `now` is earlier than the latest `now` already applied.
    #[error("time went backwards: got {now}, expected at or after {clock}")]
    TimeWentBackwards {
        /// The rejected `now`.
        now: DateTime<Utc>,
        /// The latest applied `now`.
        clock: DateTime<Utc>,
    },
    /// No pool exists in the zone.
    #[error("unknown zone `{zone}`; expected a zone with capacity")]
    UnknownZone {
        /// The zone asked for.
        zone: ZoneId,
    },
    /// The zone has no pool from that provider.
    #[error("unknown pool `{zone}/{provider}`; expected a provider with capacity in the zone")]
    UnknownPool {
        /// Zone asked for.
        zone: ZoneId,
        /// Provider asked for.
        provider: ProviderId,
    },
    /// No reservation has the id.
    #[error("unknown reservation `{id}`")]
    UnknownReservation {
        /// The id asked for.
        id: ReservationId,
    },
    /// No allocation has the id.
    #[error("unknown allocation `{id}`")]
    UnknownAllocation {
        /// The id asked for.
        id: AllocationId,
    },
    /// No subscription has the id.
    #[error("unknown subscription `{id}`")]
    UnknownSubscription {
        /// The id asked for.
        id: SubscriptionId,
    },
    /// `end` is not after `start`.
    #[error("empty window: end {end} is not after start {start}; expected end > start")]
    EmptyWindow {
        /// Start of the window.
        start: DateTime<Utc>,
        /// End of the window.
        end: DateTime<Utc>,
    },
    /// A reservation was asked to start before `now`.
    #[error("start {start} is in the past; expected at or after now ({now})")]
    StartInPast {
        /// Requested start.
        start: DateTime<Utc>,
        /// The command's `now`.
        now: DateTime<Utc>,
    },
    /// An end at or before `now`.
    #[error("end {end} is not after now ({now})")]
    EndInPast {
        /// Requested end.
        end: DateTime<Utc>,
        /// The command's `now`.
        now: DateTime<Utc>,
    },
    /// Expiry outside `[start, end]`.
    #[error("expiry {expiry} is outside the reservation window; expected start <= expiry <= end")]
    ExpiryOutsideWindow {
        /// Requested expiry.
        expiry: DateTime<Utc>,
    },
    /// A time computation left the representable range.
    #[error("time out of range; expected instants between years -262143 and 262142")]
    TimeOutOfRange,
    /// A quantity above [`crate::MAX_QUANTITY`], or a pool's total increases above
    /// [`crate::MAX_POOL_TOTAL`].
    #[error("quantity {value} of `{dimension}` is too large; expected at most {max}")]
    QuantityTooLarge {
        /// Dimension.
        dimension: Dimension,
        /// Offending value.
        value: u64,
        /// Limit.
        max: u64,
    },
    /// Too many distinct dimension names.
    #[error("too many dimensions; expected at most 65535 distinct names")]
    TooManyDimensions,
    /// A policy limit was exceeded.
    #[error("reservation violates policy `{rule}`: {} exceeds the limit of {limit} {}", show_requested(.requested), .rule.unit())]
    Policy {
        /// The rule.
        rule: PolicyRule,
        /// The limit in the rule's unit.
        limit: u64,
        /// What was asked, rounded up to the rule's unit; `None` for an open end.
        requested: Option<u64>,
    },
    /// The request does not fit; carries the shortages and the offers.
    #[error("{0}")]
    Conflict(Box<Conflict>),
    /// An allocation named a reservation that is not active at `now`.
    #[error(
        "reservation `{id}` is {state} at this time; expected an active reservation before its expiry"
    )]
    ReservationNotActive {
        /// The reservation.
        id: ReservationId,
        /// Its state.
        state: ReservationState,
    },
    /// An allocation asks more than the reservation has left.
    #[error(
        "allocation needs {requested} `{dimension}` but reservation `{reservation}` has {remaining} left"
    )]
    ExceedsRemaining {
        /// The reservation.
        reservation: ReservationId,
        /// Dimension short.
        dimension: Dimension,
        /// Asked.
        requested: u64,
        /// Left.
        remaining: u64,
    },
    /// The reservation is in a final state.
    #[error("reservation `{id}` is {state}; expected an initialized or active reservation")]
    ReservationClosed {
        /// The reservation.
        id: ReservationId,
        /// Its state.
        state: ReservationState,
    },
    /// An update tried to move the start of a reservation that already started.
    #[error("reservation `{id}` already started; its start cannot change")]
    StartLocked {
        /// The reservation.
        id: ReservationId,
    },
    /// An update asked less than what is already allocated.
    #[error(
        "reservation `{id}` has {allocated} `{dimension}` allocated; expected at least that much"
    )]
    BelowAllocated {
        /// The reservation.
        id: ReservationId,
        /// Dimension.
        dimension: Dimension,
        /// Allocated now.
        allocated: u64,
    },
    /// An update tried to move a reservation with live allocations to another pool.
    #[error("reservation `{id}` has live allocations in `{pool}`; expected the same pool")]
    PoolLocked {
        /// The reservation.
        id: ReservationId,
        /// Its pool.
        pool: PoolKey,
    },
    /// Destroying an allocation that is no longer live.
    #[error("allocation `{id}` is {state}; expected an active allocation")]
    AllocationClosed {
        /// The allocation.
        id: AllocationId,
        /// Its state.
        state: AllocationState,
    },
    /// An unreserved allocation named no zone.
    #[error("allocation without reservation needs a zone")]
    MissingZone,
    /// A capacity decrease would make capacity negative.
    #[error(
        "cannot decrease `{dimension}` in `{pool}` by {decrease} at {at}: capacity there is {capacity}"
    )]
    CapacityUnderflow {
        /// Pool.
        pool: PoolKey,
        /// Dimension.
        dimension: Dimension,
        /// First instant where capacity would go below zero.
        at: DateTime<Utc>,
        /// Capacity there.
        capacity: i64,
        /// Requested decrease.
        decrease: u64,
    },
    /// A log entry failed during replay.
    #[error("replay failed at log entry {index}: {source}")]
    Replay {
        /// Index of the failing entry.
        index: usize,
        /// Its error.
        source: Box<CalendarError>,
    },
    /// A snapshot written in another format version.
    #[error("snapshot format {found} is not supported; expected format {expected}")]
    SnapshotFormat {
        /// The snapshot's `format`.
        found: u32,
        /// The one this build reads ([`crate::SNAPSHOT_FORMAT`]).
        expected: u32,
    },
    /// A snapshot record failed validation; nothing was restored.
    #[error("invalid snapshot: {record} {problem}")]
    InvalidSnapshot {
        /// The offending record.
        record: SnapshotRecord,
        /// What is wrong with it.
        problem: SnapshotProblem,
    },
}

/// The record of a snapshot that [`CalendarError::InvalidSnapshot`] names.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotRecord {
    /// The calendar as a whole (clock, counters).
    Calendar,
    /// An entry of the dimension list.
    Dimension(Dimension),
    /// A pool or one of its capacity changes.
    Pool(PoolKey),
    /// A reservation.
    Reservation(ReservationId),
    /// An allocation.
    Allocation(AllocationId),
    /// A threshold subscription.
    Subscription(SubscriptionId),
}

impl fmt::Display for SnapshotRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotRecord::Calendar => f.write_str("calendar"),
            SnapshotRecord::Dimension(d) => write!(f, "dimension `{d}`"),
            SnapshotRecord::Pool(p) => write!(f, "pool `{p}`"),
            SnapshotRecord::Reservation(id) => write!(f, "reservation `{id}`"),
            SnapshotRecord::Allocation(id) => write!(f, "allocation `{id}`"),
            SnapshotRecord::Subscription(id) => write!(f, "subscription `{id}`"),
        }
    }
}

/// What is wrong with a snapshot record (see [`CalendarError::InvalidSnapshot`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotProblem {
    /// The id or name appears twice.
    Duplicate,
    /// The id is zero or above the counter that issues ids of its kind.
    IdOutOfRange {
        /// The counter (the last id issued).
        counter: u64,
    },
    /// Names a pool the snapshot does not have.
    UnknownPool {
        /// The pool.
        pool: PoolKey,
    },
    /// Names a dimension the snapshot does not list, or one its pool has no capacity in.
    UnknownDimension {
        /// The dimension.
        dimension: Dimension,
    },
    /// Names a reservation the snapshot does not have.
    UnknownReservation {
        /// The reservation.
        id: ReservationId,
    },
    /// An amount or a capacity change of zero.
    ZeroAmount {
        /// Its dimension.
        dimension: Dimension,
    },
    /// A quantity, a pool's total increases or a committed level above the calendar's limits.
    QuantityTooLarge {
        /// Its dimension.
        dimension: Dimension,
        /// The value.
        value: u64,
        /// The limit.
        max: u64,
    },
    /// A window whose end is not after its start.
    EmptyWindow,
    /// An expiry or a notice time outside the reservation's window.
    OutsideWindow {
        /// `expiry` or `notice`.
        field: &'static str,
    },
    /// A time after the snapshot's clock (or any record in a snapshot without a clock).
    AfterClock {
        /// The field.
        field: &'static str,
    },
    /// A field disagrees with the record's state or with the records it references.
    Inconsistent {
        /// The field.
        field: &'static str,
    },
    /// A reservation's live allocations hold more than it reserves.
    ExceedsReservation {
        /// Dimension.
        dimension: Dimension,
        /// Held by its live allocations.
        allocated: u64,
        /// Reserved.
        reserved: u64,
    },
    /// The capacity changes leave a negative capacity.
    NegativeCapacity {
        /// Dimension.
        dimension: Dimension,
        /// First instant where capacity is negative.
        at: DateTime<Utc>,
    },
    /// Commitments exceed capacity where no record is flagged at risk.
    OverCapacity {
        /// Dimension.
        dimension: Dimension,
        /// First such instant.
        at: DateTime<Utc>,
    },
    /// A subscription's below-state disagrees with availability at the clock.
    ThresholdState {
        /// Available at the clock.
        available: i64,
    },
}

impl fmt::Display for SnapshotProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotProblem::Duplicate => {
                f.write_str("appears twice; expected each id or name once")
            }
            SnapshotProblem::IdOutOfRange { counter } => write!(
                f,
                "has an id outside 1..={counter}; expected an id the calendar's counter issued"
            ),
            SnapshotProblem::UnknownPool { pool } => {
                write!(
                    f,
                    "names unknown pool `{pool}`; expected a pool of the snapshot"
                )
            }
            SnapshotProblem::UnknownDimension { dimension } => write!(
                f,
                "names dimension `{dimension}`; expected a listed dimension with capacity in the record's pool"
            ),
            SnapshotProblem::UnknownReservation { id } => write!(
                f,
                "names unknown reservation `{id}`; expected a reservation of the snapshot"
            ),
            SnapshotProblem::ZeroAmount { dimension } => write!(
                f,
                "has a zero amount of `{dimension}`; expected positive amounts only"
            ),
            SnapshotProblem::QuantityTooLarge {
                dimension,
                value,
                max,
            } => write!(f, "has {value} of `{dimension}`; expected at most {max}"),
            SnapshotProblem::EmptyWindow => {
                f.write_str("has an empty window; expected end after start")
            }
            SnapshotProblem::OutsideWindow { field } => write!(
                f,
                "has `{field}` outside its window; expected start <= notice <= expiry <= end"
            ),
            SnapshotProblem::AfterClock { field } => write!(
                f,
                "has `{field}` after the clock; expected it at or before the snapshot's clock"
            ),
            SnapshotProblem::Inconsistent { field } => write!(
                f,
                "has `{field}` disagreeing with its state or the records it references; expected what the calendar would have left"
            ),
            SnapshotProblem::ExceedsReservation {
                dimension,
                allocated,
                reserved,
            } => write!(
                f,
                "has {allocated} `{dimension}` allocated by live allocations but reserves {reserved}; expected at most the reserved amount"
            ),
            SnapshotProblem::NegativeCapacity { dimension, at } => write!(
                f,
                "has capacity of `{dimension}` below zero at {at}; expected capacity >= 0"
            ),
            SnapshotProblem::OverCapacity { dimension, at } => write!(
                f,
                "commits more `{dimension}` than its capacity at {at} with no record there flagged at risk; expected flagged records wherever commitments exceed capacity"
            ),
            SnapshotProblem::ThresholdState { available } => write!(
                f,
                "has a below-state that disagrees with {available} available at the clock; expected the state the last command left"
            ),
        }
    }
}

fn show_requested(r: &Option<u64>) -> String {
    match r {
        Some(v) => v.to_string(),
        None => "an open end".to_owned(),
    }
}
