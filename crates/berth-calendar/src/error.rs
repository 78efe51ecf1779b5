//! `CalendarError`: every way a calendar command or query can be refused.

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
}

fn show_requested(r: &Option<u64>) -> String {
    match r {
        Some(v) => v.to_string(),
        None => "an open end".to_owned(),
    }
}
