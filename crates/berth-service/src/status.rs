//! A plan's status, as ONAP HAS names them.

use serde::{Deserialize, Serialize};

/// Plan statuses, as ONAP HAS names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum PlanStatus {
    /// Accepted, waiting for a worker.
    #[serde(rename = "template")]
    Template,
    /// The template is being read.
    #[serde(rename = "translating")]
    Translating,
    /// The template was read.
    #[serde(rename = "translated")]
    Translated,
    /// The solver runs.
    #[serde(rename = "solving")]
    Solving,
    /// Plans were found.
    #[serde(rename = "solved")]
    Solved,
    /// The template's reservations are being made.
    #[serde(rename = "reserving")]
    Reserving,
    /// Finished: plans found and reservations (if any) made.
    #[serde(rename = "done")]
    Done,
    /// No plan satisfies the constraints.
    #[serde(rename = "not found")]
    NotFound,
    /// The plan failed (see its message).
    #[serde(rename = "error")]
    Error,
}

impl PlanStatus {
    /// Every status, in lifecycle order.
    pub const ALL: [PlanStatus; 9] = [
        PlanStatus::Template,
        PlanStatus::Translating,
        PlanStatus::Translated,
        PlanStatus::Solving,
        PlanStatus::Solved,
        PlanStatus::Reserving,
        PlanStatus::Done,
        PlanStatus::NotFound,
        PlanStatus::Error,
    ];

    /// The status as HAS writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            PlanStatus::Template => "template",
            PlanStatus::Translating => "translating",
            PlanStatus::Translated => "translated",
            PlanStatus::Solving => "solving",
            PlanStatus::Solved => "solved",
            PlanStatus::Reserving => "reserving",
            PlanStatus::Done => "done",
            PlanStatus::NotFound => "not found",
            PlanStatus::Error => "error",
        }
    }

    /// True for `done`, `not found` and `error`.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            PlanStatus::Done | PlanStatus::NotFound | PlanStatus::Error
        )
    }
}
