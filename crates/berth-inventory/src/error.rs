//! The crate's error type. It imports only `ids`, so the crate reads top-down:
//! ids, error, model, filter, load, provider, controller.

use std::fmt;

use berth_doc::Diagnostic;
use serde::{Deserialize, Serialize};

use crate::ids::CandidateId;

/// Everything that can go wrong in loading inventories, resolving demands and reserving.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum InventoryError {
    /// The inventory document has problems; all of them, in document order.
    #[error("invalid inventory: {}", summarize(diagnostics))]
    Invalid {
        /// Every problem found (errors and warnings).
        diagnostics: Vec<Diagnostic>,
    },
    /// A name that is not in a fixed vocabulary.
    #[error("unknown {kind} `{name}`; expected one of {expected}")]
    UnknownName {
        /// What kind of name (`zone category`, `inventory type`).
        kind: &'static str,
        /// The name given.
        name: String,
        /// The accepted names, comma separated.
        expected: &'static str,
    },
    /// Latitude or longitude out of range or not finite.
    #[error(
        "coordinates ({latitude}, {longitude}) out of range; expected latitude in -90..=90 and longitude in -180..=180"
    )]
    InvalidCoordinates {
        /// The latitude given.
        latitude: f64,
        /// The longitude given.
        longitude: f64,
    },
    /// Two candidates share an id.
    #[error("duplicate candidate id `{candidate_id}`; expected unique ids")]
    DuplicateCandidate {
        /// The repeated id.
        candidate_id: CandidateId,
    },
    /// A candidate id the provider or controller does not know.
    #[error("unknown candidate `{candidate_id}`")]
    UnknownCandidate {
        /// The id asked for.
        candidate_id: CandidateId,
    },
    /// A request amount below zero.
    #[error(
        "invalid request for `{dimension}` on `{candidate_id}`: {amount}; expected a non-negative amount"
    )]
    InvalidRequest {
        /// The candidate the request was for.
        candidate_id: CandidateId,
        /// The dimension requested.
        dimension: String,
        /// The amount requested.
        amount: i64,
    },
    /// A reservation batch did not fit; nothing was reserved.
    #[error(
        "candidate `{candidate_id}` lacks capacity: {}",
        summarize_shortfalls(shortfalls)
    )]
    InsufficientCapacity {
        /// The first candidate that could not take its share of the batch.
        candidate_id: CandidateId,
        /// What was missing there.
        shortfalls: Vec<Shortfall>,
    },
    /// A reservation token that is not (or no longer) held.
    #[error("unknown reservation token `{token}`")]
    UnknownReservation {
        /// The token given.
        token: String,
    },
    /// A controller refused a request for its own reasons.
    #[error("controller `{controller}` refused: {reason}")]
    Refused {
        /// Controller name.
        controller: String,
        /// Why.
        reason: String,
    },
}

fn summarize(diagnostics: &[Diagnostic]) -> String {
    match diagnostics {
        [] => "no diagnostics".to_owned(),
        [only] => only.to_string(),
        [first, rest @ ..] => format!("{first} (and {} more)", rest.len()),
    }
}

fn summarize_shortfalls(shortfalls: &[Shortfall]) -> String {
    shortfalls
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One missing amount in a fit check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shortfall {
    /// The dimension (`vcpu`, `ram_mib`, ...).
    pub dimension: String,
    /// Amount asked for.
    pub requested: i64,
    /// Amount free; `None` when the candidate does not offer the dimension at all.
    pub available: Option<i64>,
}

impl fmt::Display for Shortfall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.available {
            Some(a) => write!(f, "{} needs {}, has {a}", self.dimension, self.requested),
            None => write!(
                f,
                "{} needs {}, dimension not offered",
                self.dimension, self.requested
            ),
        }
    }
}
