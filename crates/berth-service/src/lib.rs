//! Async orchestration over a `berth_store::Store`: the reservation calendar, plans on a worker
//! pool, and webhook notifications.
//!
//! Key types:
//! - [`ReservationService`]: one in-memory `berth_calendar::Calendar` per command stream over
//!   the store's log. Requests queue for ONE writer task that takes everything queued (up to
//!   `max_batch` commands), checks each request in order on the calendar (each sees the
//!   earlier ones; a refused request changes nothing and gets its own error; one idempotency
//!   key twice in a batch takes effect once), appends the accepted ones with all their
//!   idempotency records in ONE transaction (`expected_seq`), and only then answers every
//!   caller (group commit: one fsync for the batch). When the transaction fails nobody is
//!   acknowledged and the calendar is rebuilt from the store; after another daemon's append
//!   it is rebuilt and the batch re-checked. Time-driven changes are logged as `Advance`
//!   entries ahead of the next command, so plain `Calendar::replay` of the log rebuilds the
//!   state. Every `snapshot_every` commands (and on [`ReservationService::snapshot`], at
//!   graceful shutdown) a `berth_calendar::Snapshot` is stored with the seq it covers; opening
//!   restores the newest usable one and replays only the tail, falling back to older snapshots
//!   and then to a full replay, with a warning, when one is damaged, unreadable, of another
//!   format or policy.
//! - [`PlanService`]: accepted plans are journaled before the caller hears back, solved by a
//!   bounded pool of workers (the engine in `spawn_blocking`, `timeout` enforced), and resumed
//!   after a restart; a template's `reservations` are made in one all-or-nothing batch.
//! - [`Change`]: what changed, broadcast to live views by
//!   [`ReservationService::changes`] (calendar commits and timer events, plan changes).
//! - [`Ownership`]: in a cluster, the calendar stream's lease (`berth_store::Lease`): its
//!   holder alone commits, every commit fenced by its token; the others forward writes to it
//!   and take the lease when it lapses (an owner that died), within the lease time.
//! - [`inventory`]: the inventory as the source of truth, whatever it comes from (a file, a
//!   cloud's API). An inventory source turns what it read into [`InventoryPools`] (a provider
//!   name, and per zone the capacity it has); [`ReservationService::reconcile`] brings the
//!   calendar's pools of that provider in line with them and answers an [`InventoryDiff`]
//!   (pools added; pools changed, dimension by dimension before → after, with the records put
//!   at risk exactly as `decrease-capacity` reports them; pools removed, retired with their
//!   live reservations listed; pools unchanged). It runs under the locks of every calendar
//!   concerned and commits in one transaction; a daemon that loses a race recomputes, so
//!   several daemons reconciling one store apply it once, and reconciling the same pools
//!   again is an empty diff. [`ReservationService::reconcile_preview`] says what it would do
//!   without doing it. [`InventoryReconciler`] is the loop around it: an [`InventorySource`]
//!   loads a [`LoadedInventory`] (pools, the `InventoryProvider` plans resolve against, a
//!   flavor catalog), a load that fails changes nothing, a good one is reconciled first and
//!   then served through the [`SharedInventory`] the [`PlanService`] reads (each plan takes
//!   the provider once, so plans and pools agree); every reconcile is logged as structured
//!   events and kept, with the drift since, for status. A live source calls
//!   `reload(Trigger::Refresh)` on its own period:
//!
//!   ```no_run
//!   # async fn refresh(svc: &berth_service::ReservationService) -> Result<(), berth_service::ServiceError> {
//!   use berth_calendar::Amounts;
//!   let mut pools = berth_service::InventoryPools::new("openstack");
//!   pools.pools.insert("compute-1".into(), Amounts::new().with("vcpu", 64).with("ram_mib", 262_144));
//!   let diff = svc.reconcile(&pools).await?;
//!   for p in &diff.changed {
//!       println!("{}: {:?}", p.pool, p.dimensions);
//!   }
//!   # Ok(()) }
//!   ```
//! - [`Notifier`]: webhook POSTs with bounded retries and exponential backoff; `https://`
//!   callbacks verified by rustls (built-in roots plus an optional CA file), `http://` refused
//!   when `require_https` is set.
//!
//! Invariants:
//! - Nothing is acknowledged before it is durable in the store; a failed request leaves no
//!   trace in the calendar or the store. After every commit the calendar equals a replay of
//!   the log (from a snapshot or from the start).
//! - No double booking: admission and commit happen under one writer per stream, and a stream
//!   shared by several processes is serialized by the optimistic append.
//! - The service reads the clock (a [`WallClock`]); time never goes backwards for the calendar
//!   (`now` is the later of the wall clock and the calendar's clock).

mod changes;
mod clock;
mod error;
pub mod inventory;
mod notify;
mod ownership;
mod plans;
mod provider;
mod reservations;
mod status;
pub mod vim;

pub use changes::Change;
pub use clock::{ManualClock, SystemClock, WallClock};
pub use error::{ErrorKind, MAX_NAME, ServiceError, check_name};
pub use inventory::{
    FileSource, InventoryDiff, InventoryPools, InventoryReconciler, InventorySource,
    InventoryStatus, LoadedInventory, ReconcileRecord, SharedInventory, Trigger,
};
pub use notify::{Notification, Notifier, NotifyConfig, NotifyStats, backoff};
pub use ownership::{Owner, Ownership, OwnershipOptions};
pub use plans::{FinalWatch, Plan, PlanConfig, PlanRequest, PlanService};
pub use provider::{DEFAULT_PROVIDER, ProviderFlavor, ProviderInfo};
pub use reservations::{
    ClusterMap, ClusterOptions, Committed, Holder, IdempotencyKey, PartitionKey, ReservationFilter,
    ReservationOptions, ReservationService, Webhook, WriterStats, qualify,
};
pub use status::PlanStatus;
pub use vim::{BootRequest, Booted, Discovered, Discovery, Vim, VimFuture};
