//! Reservation policy (seed 001 YANG `policy/reservation`) and the explicit preemption choice.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Limits applied to every created or updated reservation, relative to `now`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Policy {
    /// `max-future-start-range`: the start may be at most this many days after `now`.
    pub max_future_start_days: Option<u32>,
    /// `max-future-end-range`: the end may be at most this many days after `now`
    /// (an open end is then refused).
    pub max_future_end_days: Option<u32>,
    /// `max-duration`: `end - start` in hours; default 8760 (one year). An open end exceeds any
    /// limit, so open-ended reservations need `None` here.
    pub max_duration_hours: Option<u32>,
    /// `expiry`: minutes after start when unallocated reserved amounts are released, used when
    /// a request names no expiry.
    pub default_expiry_minutes: Option<u32>,
    /// Lead of the "expiring soon" event before a reservation's expiry, in seconds; 0 disables.
    pub expiry_notice_seconds: u64,
    /// What a higher-priority reservation may do when it does not fit.
    pub preemption: Preemption,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            max_future_start_days: None,
            max_future_end_days: None,
            max_duration_hours: Some(8760),
            default_expiry_minutes: None,
            expiry_notice_seconds: 900,
            preemption: Preemption::default(),
        }
    }
}

/// Preemption (seed 001 §3.1.4) as an explicit choice; both are off by default.
///
/// Victims are lower-priority records in the chosen pool overlapping the request window, tried
/// in the order (priority ascending, later start first, reservations before allocations, newer
/// id first); victims that turn out unnecessary are kept. Every action is reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Preemption {
    /// A reservation may cancel not-yet-started reservations of lower priority.
    pub cancel_pending_reservations: bool,
    /// A reservation may terminate allocations without reservation of lower priority.
    pub terminate_unreserved_allocations: bool,
}

/// Which policy limit a request broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum PolicyRule {
    /// `max-future-start-range` (days).
    MaxFutureStartRange,
    /// `max-future-end-range` (days).
    MaxFutureEndRange,
    /// `max-duration` (hours).
    MaxDuration,
}

impl PolicyRule {
    /// Unit of the limit.
    pub fn unit(self) -> &'static str {
        match self {
            PolicyRule::MaxFutureStartRange | PolicyRule::MaxFutureEndRange => "days",
            PolicyRule::MaxDuration => "hours",
        }
    }
}

impl fmt::Display for PolicyRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PolicyRule::MaxFutureStartRange => "max-future-start-range",
            PolicyRule::MaxFutureEndRange => "max-future-end-range",
            PolicyRule::MaxDuration => "max-duration",
        })
    }
}
