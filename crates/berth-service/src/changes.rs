//! Change announcements for live views (the web console's event stream): a broadcast that
//! says *what* changed, never the data itself, so a slow listener only misses notices and
//! refetches; nothing waits on listeners.

use serde::Serialize;

use crate::status::PlanStatus;

/// Notices kept for a listener that lags; past this it is told it lagged and refetches.
pub(crate) const CAPACITY: usize = 256;

/// What changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// The calendar changed (a commit, another daemon's append, or timers that fired):
    /// reservations, allocations or capacity; `seq` is the log position it reflects.
    Calendar {
        /// Last sequence number applied.
        seq: u64,
    },
    /// A plan was accepted, changed status, finished or was deleted (`status` is `None`).
    Plan {
        /// Plan id.
        id: String,
        /// Its status now; `None` once deleted.
        status: Option<PlanStatus>,
    },
}

#[cfg(test)]
mod tests;
