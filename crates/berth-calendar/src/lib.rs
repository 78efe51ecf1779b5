//! Reservation calendar: pools, reservations and allocations over time (seed 001, OPNFV Promise).
//!
//! Pure and deterministic: no IO, no clock. Every command takes `now` as an argument and time
//! only moves through [`Calendar::advance`] (or [`Command::Advance`]).
//!
//! # Model
//! - **Pools** ([`PoolKey`] = zone + provider) have a capacity per [`Dimension`] that is a step
//!   function of time, changed by [`Command::IncreaseCapacity`] / [`Command::DecreaseCapacity`]
//!   over a window (open-ended allowed). Quantities are integers ([`Amounts`]).
//! - **Reservations** hold amounts in one pool over a half-open window `[start, end)` (open end
//!   allowed) with an optional expiry: at expiry the unallocated rest is released. States:
//!   [`ReservationState`] initialized → active → (expired) → ended, or cancelled.
//! - **Allocations** draw from an active reservation (its `remaining` covers them) or from
//!   unreserved capacity, which must be free for the allocation's whole lifetime against every
//!   future reservation (an unbounded allocation needs capacity from now on).
//! - **Policy** ([`Policy`]): max future start/end range, max duration (default 8760 h),
//!   default expiry, expiry notice lead, and the explicit [`Preemption`] choice.
//!
//! # Invariants
//! - At every instant and dimension of every pool, `reserved + unreserved usage <= capacity`,
//!   except where a capacity decrease was accepted; every record whose window meets such an
//!   excess in one of its dimensions is flagged `at_risk` and reported
//!   ([`Event::CommitmentAtRisk`]).
//! - Windows are half-open: `[a, b)` and `[b, c)` both fit at full capacity.
//! - A failed command changes nothing (an update that does not fit leaves the old reservation
//!   exactly as it was).
//! - Every mutation is a serde-serializable [`Command`]; replaying the `(now, command)` log of
//!   the successful commands ([`Calendar::replay`]) reproduces the same [`CalendarState`].
//! - The profiles are forward-looking: a record that ends, is cancelled or destroyed leaves the
//!   profile over its whole window, so queries of the past show only what is still live.
//!
//! # Cost
//! Per pool and dimension a B+-tree of breakpoints (32 entries per node, five levels at a
//! million keys) keeps per entry the sum of availability changes with its prefix-min/max,
//! so admission, commit and cancel cost O(log n) per dimension, a capacity timeline
//! O(log n + k) for k steps, and the earliest-window search jumps from violation to the next
//! breakpoint where it is lifted, never rescanning reservations.
//! [`Calendar::create_reservations`] loads many reservations with one sorted merge per
//! profile when they fit together, with results identical to creating them one by one.
//!
//! Instants are `DateTime<Utc>` kept at microsecond precision (finer parts are truncated).
//!
//! # Example
//! ```
//! use berth_calendar::*;
//! use chrono::{TimeZone, Utc};
//!
//! let t0 = Utc.with_ymd_and_hms(2016, 2, 1, 0, 0, 0).unwrap();
//! let h = |n: i64| t0 + chrono::TimeDelta::hours(n);
//! let mut cal = Calendar::new(Policy::default());
//! let pool = PoolKey::new("zone-1", "openstack");
//! cal.increase_capacity(
//!     CapacityChange { pool, start: t0, end: None, amounts: Amounts::promise(20, 51200, 10, 10) },
//!     t0,
//! )?;
//! let (r1, _) = cal.create_reservation(
//!     ReservationRequest::new("zone-1", Amounts::promise(5, 25600, 3, 3)).window(h(1), h(25)),
//!     t0,
//! )?;
//! // Ten instances during r1 do not fit: the conflict carries an offer.
//! let big = ReservationRequest::new("zone-1", Amounts::new().with("instances", 10)).window(h(2), h(3));
//! let Err(CalendarError::Conflict(c)) = cal.create_reservation(big, t0) else { panic!() };
//! assert_eq!(c.offers[0].max_reservable.get("instances"), 7);
//! assert_eq!(c.offers[0].earliest_start, Some(h(25)));
//! // Time moves only through `advance`, which returns the due events.
//! let events = cal.advance(h(1))?;
//! assert!(matches!(events[0], Event::ReservationStarted { reservation, .. } if reservation == r1));
//! # Ok::<(), CalendarError>(())
//! ```

/// The time crate of the API (`DateTime<Utc>`, `TimeDelta`), re-exported for callers.
pub use chrono;

mod calendar;
mod error;
mod model;
mod policy;
mod profile;
mod types;

pub use calendar::query::CalendarState;
pub use calendar::{Calendar, MAX_POOL_TOTAL, MAX_QUANTITY};
pub use error::CalendarError;
pub use model::{
    Allocation, AllocationRequest, AllocationState, Applied, CancelReason, CapacityChange,
    CapacityLevels, CapacityQuery, CapacityReport, CapacitySummary, Command, Conflict, Event,
    FoundWindow, LogEntry, Offer, Outcome, PoolCapacity, RecordRef, Reservation, ReservationQuery,
    ReservationRequest, ReservationState, Scope, Shortage, TerminationReason,
    ThresholdSubscription, UtilizationStep, WindowQuery,
};
pub use policy::{Policy, PolicyRule, Preemption};
pub use types::{
    AllocationId, Amounts, Dimension, ElementId, PoolKey, Priority, ProviderId, ReservationId,
    SubscriptionId, TenantId, Window, ZoneId,
};
