//! Async orchestration over a `berth_store::Store`: the reservation calendar, plans on a worker
//! pool, and webhook notifications.
//!
//! Key types:
//! - [`ReservationService`]: one in-memory `berth_calendar::Calendar` per command stream,
//!   rebuilt from the store's log. Every mutation runs under one mutex: check by applying to
//!   the calendar, append with `expected_seq` (with the idempotency record, one transaction),
//!   acknowledge; on a concurrent append it catches up from the log and retries; on a store
//!   error it restores the calendar. Time-driven changes are logged as `Advance` entries
//!   ahead of the next command, so plain `Calendar::replay` of the log rebuilds the state.
//! - [`PlanService`]: accepted plans are journaled before the caller hears back, solved by a
//!   bounded pool of workers (the engine in `spawn_blocking`, `timeout` enforced), and resumed
//!   after a restart; a template's `reservations` are made in one all-or-nothing batch.
//! - [`Notifier`]: webhook POSTs with bounded retries and exponential backoff.
//!
//! Invariants:
//! - Nothing is acknowledged before it is durable in the store; a failed request leaves no
//!   trace in the calendar or the store.
//! - No double booking: admission and commit happen under one writer per stream, and a stream
//!   shared by several processes is serialized by the optimistic append.
//! - The service reads the clock (a [`WallClock`]); time never goes backwards for the calendar
//!   (`now` is the later of the wall clock and the calendar's clock).

mod error;
mod notify;
mod plans;
mod reservations;

pub use error::{ErrorKind, ServiceError};
pub use notify::{Notification, Notifier, NotifyConfig, backoff};
pub use plans::{Plan, PlanConfig, PlanRequest, PlanService, PlanStatus};
pub use reservations::{
    Committed, IdempotencyKey, ManualClock, ProviderInfo, ReservationFilter, ReservationOptions,
    ReservationService, SystemClock, WallClock, Webhook,
};
