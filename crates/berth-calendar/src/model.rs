//! Requests, records, events, commands and query types of the calendar (all serde-friendly).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::policy::Policy;
use crate::types::{
    AllocationId, Amounts, Dimension, ElementId, PoolKey, Priority, ProviderId, ReservationId,
    SubscriptionId, TenantId, Window, ZoneId,
};

/// A request to reserve amounts in a zone for a window (`create-reservation`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationRequest {
    /// Zone to reserve in.
    pub zone: ZoneId,
    /// Provider; when absent the first pool of the zone (by provider name) that fits is used.
    #[serde(default)]
    pub provider: Option<ProviderId>,
    /// Start; `None` means `now` (reservation for immediate use).
    #[serde(default)]
    pub start: Option<DateTime<Utc>>,
    /// End; `None` means open-ended.
    #[serde(default)]
    pub end: Option<DateTime<Utc>>,
    /// Expiry; `None` uses the policy's default expiry (if any).
    #[serde(default)]
    pub expiry: Option<DateTime<Utc>>,
    /// Amounts per dimension.
    pub amounts: Amounts,
    /// Priority (for preemption).
    #[serde(default)]
    pub priority: Priority,
    /// Owner.
    #[serde(default)]
    pub tenant: Option<TenantId>,
    /// Free-form attributes (DPDK support, hypervisor...).
    #[serde(default)]
    pub attributes: BTreeMap<String, String>,
    /// Pre-existing elements the reservation protects.
    #[serde(default)]
    pub elements: BTreeSet<ElementId>,
}

impl ReservationRequest {
    /// Immediate, open-ended request for `amounts` in `zone`.
    pub fn new(zone: impl Into<String>, amounts: Amounts) -> Self {
        ReservationRequest {
            zone: ZoneId(zone.into()),
            provider: None,
            start: None,
            end: None,
            expiry: None,
            amounts,
            priority: Priority::Normal,
            tenant: None,
            attributes: BTreeMap::new(),
            elements: BTreeSet::new(),
        }
    }

    /// Sets the window `[start, end)`.
    pub fn window(mut self, start: DateTime<Utc>, end: DateTime<Utc>) -> Self {
        self.start = Some(start);
        self.end = Some(end);
        self
    }

    /// Sets the start.
    pub fn starting(mut self, start: DateTime<Utc>) -> Self {
        self.start = Some(start);
        self
    }

    /// Sets the end.
    pub fn ending(mut self, end: DateTime<Utc>) -> Self {
        self.end = Some(end);
        self
    }

    /// Sets the expiry.
    pub fn expiring(mut self, expiry: DateTime<Utc>) -> Self {
        self.expiry = Some(expiry);
        self
    }

    /// Sets the priority.
    pub fn priority(mut self, p: Priority) -> Self {
        self.priority = p;
        self
    }

    /// Sets the provider.
    pub fn provider(mut self, p: impl Into<String>) -> Self {
        self.provider = Some(ProviderId(p.into()));
        self
    }

    /// Sets the tenant.
    pub fn tenant(mut self, t: impl Into<String>) -> Self {
        self.tenant = Some(TenantId(t.into()));
        self
    }

    /// Adds an attribute.
    pub fn attribute(mut self, k: impl Into<String>, v: impl Into<String>) -> Self {
        self.attributes.insert(k.into(), v.into());
        self
    }

    /// Adds an element to protect.
    pub fn element(mut self, e: impl Into<String>) -> Self {
        self.elements.insert(ElementId(e.into()));
        self
    }
}

/// A request to create an instance (`create-instance`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocationRequest {
    /// Reservation to draw from; `None` draws from unreserved capacity.
    #[serde(default)]
    pub reservation: Option<ReservationId>,
    /// Zone (required without reservation; ignored with one).
    #[serde(default)]
    pub zone: Option<ZoneId>,
    /// Provider (optional, as for reservations).
    #[serde(default)]
    pub provider: Option<ProviderId>,
    /// The flavor's amounts.
    pub amounts: Amounts,
    /// End of the allocation's lifetime; `None` for unbounded. With a reservation the lifetime
    /// also stops at the reservation's end.
    #[serde(default)]
    pub end: Option<DateTime<Utc>>,
    /// Priority of an unreserved allocation (`low` by default, as Promise labels it); allocations
    /// against a reservation are always `high`.
    #[serde(default = "low")]
    pub priority: Priority,
}

fn low() -> Priority {
    Priority::Low
}

impl AllocationRequest {
    /// Allocation of `amounts` against reservation `id`.
    pub fn reserved(id: ReservationId, amounts: Amounts) -> Self {
        AllocationRequest {
            reservation: Some(id),
            zone: None,
            provider: None,
            amounts,
            end: None,
            priority: Priority::High,
        }
    }

    /// Unbounded allocation of `amounts` from unreserved capacity in `zone`.
    pub fn unreserved(zone: impl Into<String>, amounts: Amounts) -> Self {
        AllocationRequest {
            reservation: None,
            zone: Some(ZoneId(zone.into())),
            provider: None,
            amounts,
            end: None,
            priority: Priority::Low,
        }
    }

    /// Sets the end of the lifetime.
    pub fn ending(mut self, end: DateTime<Utc>) -> Self {
        self.end = Some(end);
        self
    }

    /// Sets the priority.
    pub fn priority(mut self, p: Priority) -> Self {
        self.priority = p;
        self
    }
}

/// A capacity change (`increase-capacity` / `decrease-capacity`) for a window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapacityChange {
    /// The pool (created by its first increase).
    pub pool: PoolKey,
    /// From when.
    pub start: DateTime<Utc>,
    /// Until when; `None` for good.
    #[serde(default)]
    pub end: Option<DateTime<Utc>>,
    /// Amounts added or removed.
    pub amounts: Amounts,
}

/// What a pool's source (an inventory) says its capacity is from now on
/// (`declare-capacity`): the calendar moves the pool's capacity by the difference to the
/// previous declaration, from the command's `now` for good, so windowed changes made by hand
/// (a maintenance window) keep their effect. Declaring the same amounts again changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declaration {
    /// The pool (created by its first declaration).
    pub pool: PoolKey,
    /// The capacity per dimension; a dimension left out is declared 0.
    pub amounts: Amounts,
}

/// A pool as its source last declared it (see [`Command::DeclareCapacity`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeclaredPool {
    /// The pool.
    pub pool: PoolKey,
    /// The capacity last declared; for a pool never declared (made by `increase-capacity`),
    /// its capacity for good (after its last change); empty once retired.
    pub capacity: Amounts,
    /// Whether `capacity` was declared (`false`: taken from the capacity for good).
    pub declared: bool,
    /// When the pool was retired ([`Command::RetirePool`]), unless it sells again since.
    pub retired: Option<DateTime<Utc>>,
}

/// A subscription to "available below N" of one dimension in a zone (optionally one provider).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThresholdSubscription {
    /// Zone watched.
    pub zone: ZoneId,
    /// Provider watched; `None` sums the zone's pools.
    #[serde(default)]
    pub provider: Option<ProviderId>,
    /// Dimension watched.
    pub dimension: Dimension,
    /// Fires when available goes below this value and again when it recovers, at the instant
    /// it happens (see the crate docs on threshold crossings).
    pub below: u64,
}

/// Every mutation of the calendar. Log `(now, Command)` pairs and replay them to rebuild state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case")]
pub enum Command {
    /// Adds capacity for a window.
    IncreaseCapacity(CapacityChange),
    /// Removes capacity for a window; commitments above the new capacity are flagged.
    DecreaseCapacity(CapacityChange),
    /// Creates a reservation.
    CreateReservation(ReservationRequest),
    /// Replaces a reservation's request, re-checked without itself; atomic.
    UpdateReservation {
        /// The reservation.
        id: ReservationId,
        /// Its new request.
        request: ReservationRequest,
    },
    /// Cancels a reservation (and terminates its live allocations).
    CancelReservation {
        /// The reservation.
        id: ReservationId,
    },
    /// Creates an allocation.
    CreateAllocation(AllocationRequest),
    /// Destroys an allocation.
    DestroyAllocation {
        /// The allocation.
        id: AllocationId,
    },
    /// Processes every timer due at or before `now`, with the threshold crossings in between.
    Advance,
    /// Replaces the policy (affects later requests only).
    SetPolicy(Policy),
    /// Adds a threshold subscription.
    Subscribe(ThresholdSubscription),
    /// Removes a subscription.
    Unsubscribe {
        /// The subscription.
        id: SubscriptionId,
    },
    /// Sets the capacity a pool's source declares, from now for good ([`Declaration`]).
    /// Decreases are cut at zero where a windowed change left less; commitments above the
    /// new capacity are flagged as by `decrease-capacity`. Un-retires a retired pool.
    DeclareCapacity(Declaration),
    /// Retires a pool whose source is gone: from now on its capacity is zero in every
    /// dimension and at every instant, commitments there are flagged, and capacity queries
    /// starting after the retirement leave it out unless a live record still holds part of
    /// it. Its history stays. A later increase or declaration makes it sell again.
    RetirePool {
        /// The pool.
        pool: PoolKey,
    },
}

/// One entry of a command log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEntry {
    /// The `now` the command was applied at.
    pub at: DateTime<Utc>,
    /// The command.
    pub command: Command,
}

/// Lifecycle of a reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReservationState {
    /// Accepted, start in the future.
    Initialized,
    /// Started; allocations may draw from it until expiry and end.
    Active,
    /// Expiry passed: the unallocated rest was released; live allocations keep their share.
    Expired,
    /// End passed.
    Ended,
    /// Cancelled by request or preempted.
    Cancelled,
}

impl fmt::Display for ReservationState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReservationState::Initialized => "initialized",
            ReservationState::Active => "active",
            ReservationState::Expired => "expired",
            ReservationState::Ended => "ended",
            ReservationState::Cancelled => "cancelled",
        })
    }
}

/// Why a reservation was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CancelReason {
    /// `cancel-reservation`.
    Requested,
    /// Preempted by a higher-priority reservation.
    Preempted {
        /// The preempting reservation.
        by: ReservationId,
    },
}

/// A reservation record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reservation {
    /// Id.
    pub id: ReservationId,
    /// Pool it draws from.
    pub pool: PoolKey,
    /// Start.
    pub start: DateTime<Utc>,
    /// End (`None`: open).
    pub end: Option<DateTime<Utc>>,
    /// Expiry (`None`: never releases).
    pub expiry: Option<DateTime<Utc>>,
    /// Reserved amounts.
    pub amounts: Amounts,
    /// Amounts held by live allocations.
    pub allocated: Amounts,
    /// Amounts still allocatable (zero after expiry).
    pub remaining: Amounts,
    /// Amounts released at expiry.
    pub released: Amounts,
    /// Priority.
    pub priority: Priority,
    /// Owner.
    pub tenant: Option<TenantId>,
    /// Attributes.
    pub attributes: BTreeMap<String, String>,
    /// Protected elements.
    pub elements: BTreeSet<ElementId>,
    /// State.
    pub state: ReservationState,
    /// Why it was cancelled.
    pub cancel_reason: Option<CancelReason>,
    /// Flagged: a capacity decrease left less capacity than committed somewhere in its window.
    pub at_risk: bool,
    /// Live allocations drawing from it.
    pub allocations: Vec<AllocationId>,
    /// When created.
    pub created_on: DateTime<Utc>,
    /// When last changed by a command.
    pub modified_on: DateTime<Utc>,
}

/// Lifecycle of an allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AllocationState {
    /// Live.
    Active,
    /// Destroyed by `destroy-instance`.
    Destroyed,
    /// Terminated by the calendar (see the reason).
    Terminated,
}

impl fmt::Display for AllocationState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AllocationState::Active => "active",
            AllocationState::Destroyed => "destroyed",
            AllocationState::Terminated => "terminated",
        })
    }
}

/// Why the calendar terminated an allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TerminationReason {
    /// Its reservation ended.
    ReservationEnded,
    /// Its reservation was cancelled.
    ReservationCancelled,
    /// Its own end arrived.
    LifetimeEnded,
    /// Preempted by a higher-priority reservation.
    Preempted {
        /// The preempting reservation.
        by: ReservationId,
    },
}

/// An allocation record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allocation {
    /// Id.
    pub id: AllocationId,
    /// Pool it draws from.
    pub pool: PoolKey,
    /// Reservation it draws from, if any.
    pub reservation: Option<ReservationId>,
    /// Amounts.
    pub amounts: Amounts,
    /// Start of its lifetime (creation time).
    pub start: DateTime<Utc>,
    /// End of its lifetime (`None`: unbounded).
    pub end: Option<DateTime<Utc>>,
    /// `high` against a reservation, else the requested `low`/`normal`.
    pub priority: Priority,
    /// State.
    pub state: AllocationState,
    /// Why it was terminated.
    pub termination: Option<TerminationReason>,
    /// Flagged by a capacity decrease.
    pub at_risk: bool,
}

/// A record a preemption or a capacity decrease touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "id")]
pub enum RecordRef {
    /// A reservation.
    Reservation(ReservationId),
    /// An allocation.
    Allocation(AllocationId),
}

/// Something the caller must learn about; returned by commands and by `advance`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// A reservation's start arrived.
    ReservationStarted {
        /// When.
        at: DateTime<Utc>,
        /// Which.
        reservation: ReservationId,
    },
    /// Expiry is near and part of the reservation is not allocated.
    ReservationExpiringSoon {
        /// When the notice was due.
        at: DateTime<Utc>,
        /// Which.
        reservation: ReservationId,
        /// Its expiry.
        expiry: DateTime<Utc>,
        /// What is still unallocated.
        unallocated: Amounts,
    },
    /// Expiry arrived; the unallocated rest was released.
    ReservationExpired {
        /// When.
        at: DateTime<Utc>,
        /// Which.
        reservation: ReservationId,
        /// Released amounts.
        released: Amounts,
    },
    /// A reservation's end arrived.
    ReservationEnded {
        /// When.
        at: DateTime<Utc>,
        /// Which.
        reservation: ReservationId,
    },
    /// A reservation was cancelled on request (`cancel-reservation`); its live allocations
    /// ended with it (each an [`Event::AllocationTerminated`] before this).
    ReservationCancelled {
        /// When.
        at: DateTime<Utc>,
        /// Which.
        reservation: ReservationId,
        /// The allocations (instances) it ended.
        terminated: Vec<AllocationId>,
    },
    /// A reservation was cancelled by a higher-priority one.
    ReservationPreempted {
        /// When.
        at: DateTime<Utc>,
        /// Which.
        reservation: ReservationId,
        /// By whom.
        by: ReservationId,
    },
    /// An allocation was ended by the calendar.
    AllocationTerminated {
        /// When.
        at: DateTime<Utc>,
        /// Which.
        allocation: AllocationId,
        /// Its reservation, if any.
        reservation: Option<ReservationId>,
        /// Why.
        reason: TerminationReason,
    },
    /// A capacity decrease left a record's commitment above capacity somewhere in its window.
    CommitmentAtRisk {
        /// When.
        at: DateTime<Utc>,
        /// The record.
        record: RecordRef,
        /// Its pool.
        pool: PoolKey,
        /// Dimensions above capacity.
        dimensions: Vec<Dimension>,
    },
    /// Available capacity crossed a subscription's threshold at `at`: a breakpoint or timer
    /// instant the clock passed, or the command's `now` when the command changed it there.
    CapacityThreshold {
        /// When.
        at: DateTime<Utc>,
        /// The subscription.
        subscription: SubscriptionId,
        /// Zone.
        zone: ZoneId,
        /// Dimension.
        dimension: Dimension,
        /// Available at `at`.
        available: i64,
        /// True when it went below the threshold, false when it recovered.
        below: bool,
    },
}

/// What a command did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "applied", rename_all = "kebab-case")]
pub enum Applied {
    /// Capacity changed; `at_risk` lists records now flagged in the changed window.
    CapacityChanged {
        /// Pool.
        pool: PoolKey,
        /// Flagged records overlapping the change.
        at_risk: Vec<RecordRef>,
    },
    /// Reservation created.
    ReservationCreated {
        /// Its id.
        id: ReservationId,
        /// Its pool.
        pool: PoolKey,
        /// Records preempted to make room.
        preempted: Vec<RecordRef>,
    },
    /// Reservation updated.
    ReservationUpdated {
        /// Its id.
        id: ReservationId,
        /// Records preempted to make room.
        preempted: Vec<RecordRef>,
    },
    /// Reservation cancelled.
    ReservationCancelled {
        /// Its id.
        id: ReservationId,
        /// Allocations terminated with it.
        terminated: Vec<AllocationId>,
    },
    /// Allocation created.
    AllocationCreated {
        /// Its id.
        id: AllocationId,
        /// Its pool.
        pool: PoolKey,
    },
    /// Allocation destroyed.
    AllocationDestroyed {
        /// Its id.
        id: AllocationId,
    },
    /// Timers processed (see the events).
    Advanced,
    /// Policy replaced.
    PolicySet,
    /// Subscription added.
    Subscribed {
        /// Its id.
        id: SubscriptionId,
    },
    /// Subscription removed.
    Unsubscribed {
        /// Its id.
        id: SubscriptionId,
    },
    /// A declaration applied.
    CapacityDeclared {
        /// Pool.
        pool: PoolKey,
        /// The capacity declared before (see [`DeclaredPool::capacity`]); empty for a new or
        /// retired pool.
        before: Amounts,
        /// The capacity declared now.
        after: Amounts,
        /// Flagged records from now on, as `decrease-capacity` reports them; empty when
        /// nothing changed.
        at_risk: Vec<RecordRef>,
    },
    /// A pool retired.
    PoolRetired {
        /// Pool.
        pool: PoolKey,
        /// The capacity declared before (see [`DeclaredPool::capacity`]); empty when it was
        /// retired already.
        before: Amounts,
        /// Flagged records from now on, as `decrease-capacity` reports them.
        at_risk: Vec<RecordRef>,
    },
}

/// Result of a successful command: what it did and the events it produced, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// What was done.
    pub applied: Applied,
    /// Events, in time order: crossings the clock move passed, then the command's own.
    pub events: Vec<Event>,
}

/// A dimension short of capacity in a pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shortage {
    /// Pool.
    pub pool: PoolKey,
    /// Dimension.
    pub dimension: Dimension,
    /// First instant in the window where it is short.
    pub at: DateTime<Utc>,
    /// Needed.
    pub needed: u64,
    /// Available there.
    pub available: i64,
}

/// "Give me an offer" (seed 001 §5.1.3) for one candidate pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Offer {
    /// Pool.
    pub pool: PoolKey,
    /// Most that can be reserved per requested dimension over the whole requested window.
    pub max_reservable: Amounts,
    /// Earliest start at or after the requested one where the whole request fits for the
    /// requested duration; `None` when it never does.
    pub earliest_start: Option<DateTime<Utc>>,
}

/// Why a request does not fit, with offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    /// The requested window.
    pub window: Window,
    /// First shortage per pool and dimension.
    pub shortages: Vec<Shortage>,
    /// One offer per candidate pool.
    pub offers: Vec<Offer>,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "conflict: request does not fit")?;
        if let Some(s) = self.shortages.first() {
            write!(
                f,
                "; `{}` in `{}` needs {} at {} where {} is available",
                s.dimension, s.pool, s.needed, s.at, s.available
            )?;
        }
        if let Some(t) = self.offers.iter().filter_map(|o| o.earliest_start).min() {
            write!(f, "; earliest fitting start {t}")?;
        }
        Ok(())
    }
}

/// How a query window matches records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Records that start and end inside the window.
    Exclusive,
    /// Records that overlap the window.
    #[default]
    Inclusive,
}

/// Filter of `query-reservation`. Empty sets do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReservationQuery {
    /// Zone.
    pub zone: Option<ZoneId>,
    /// Provider.
    pub provider: Option<ProviderId>,
    /// Window and scope.
    pub window: Option<(Window, Scope)>,
    /// Reservations protecting at least one of these.
    pub elements_some: BTreeSet<ElementId>,
    /// Reservations protecting all of these.
    pub elements_every: BTreeSet<ElementId>,
    /// Reservations to leave out.
    pub without: BTreeSet<ReservationId>,
    /// States to keep (empty: all).
    pub states: BTreeSet<ReservationState>,
    /// Owner.
    pub tenant: Option<TenantId>,
}

/// Filter of `query-capacity`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapacityQuery {
    /// Zone (`None`: all).
    pub zone: Option<ZoneId>,
    /// Provider (`None`: all).
    pub provider: Option<ProviderId>,
    /// Window; an open end reports up to the last change.
    pub window: Window,
    /// Include the utilization timeline.
    pub timeline: bool,
}

/// Levels of one dimension at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapacityLevels {
    /// Capacity.
    pub total: i64,
    /// Held by reservations.
    pub reserved: i64,
    /// Allocated (with and without reservation).
    pub usage: i64,
    /// `total - reserved - unreserved usage`; negative only under a flagged decrease.
    pub available: i64,
}

/// Summary of one dimension over a window: the least total and available, the most reserved
/// and usage.
pub type CapacitySummary = CapacityLevels;

/// One step of the utilization timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UtilizationStep {
    /// When the step starts.
    pub at: DateTime<Utc>,
    /// Levels per dimension from `at` until the next step.
    pub levels: BTreeMap<Dimension, CapacityLevels>,
}

/// Capacity of one pool over the queried window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolCapacity {
    /// Pool.
    pub pool: PoolKey,
    /// Summary per dimension.
    pub summary: BTreeMap<Dimension, CapacitySummary>,
    /// Timeline (empty unless asked).
    pub timeline: Vec<UtilizationStep>,
}

/// Answer of `query-capacity`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapacityReport {
    /// Pools matching the filter, in pool order.
    pub pools: Vec<PoolCapacity>,
}

/// A `find-window` query: the earliest start where `amounts` fit for `duration`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowQuery {
    /// Zone.
    pub zone: ZoneId,
    /// Provider (`None`: any pool of the zone).
    pub provider: Option<ProviderId>,
    /// Amounts.
    pub amounts: Amounts,
    /// Earliest acceptable start.
    pub not_before: DateTime<Utc>,
    /// Duration; `None` asks for an open-ended window.
    pub duration: Option<chrono::TimeDelta>,
}

/// Answer of `find-window`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundWindow {
    /// Pool.
    pub pool: PoolKey,
    /// The window.
    pub window: Window,
}
