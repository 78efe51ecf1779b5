//! The engine's error type and the neutral codes callers map to exit codes or HTTP statuses.

use std::fmt;

/// A neutral error class: the CLI maps it to an exit code, the API to an HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The template, inventory or options are malformed or inconsistent.
    InvalidInput,
    /// Something the input refers to does not exist (a location, a license).
    NotFound,
    /// No plan satisfies the constraints.
    Infeasible,
    /// A provider or controller could not answer.
    Unavailable,
    /// A bug: the engine built something the solver rejects.
    Internal,
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ErrorCode::InvalidInput => "invalid input",
            ErrorCode::NotFound => "not found",
            ErrorCode::Infeasible => "infeasible",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Internal => "internal",
        })
    }
}

/// Why a plan could not be computed. Infeasibility is normally an answer
/// ([`crate::PlanOutcome`] with status "not found"); [`EngineError::Infeasible`] exists for
/// callers that need a plan or an error ([`crate::PlanOutcome::require_solved`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// Malformed or inconsistent input; `problems` lists every one found.
    #[error("invalid input: {}", problems.join("; "))]
    InvalidInput {
        /// Each problem, one sentence each.
        problems: Vec<String>,
    },
    /// The input names something that does not exist.
    #[error("not found: {}", problems.join("; "))]
    NotFound {
        /// Each missing thing, one sentence each.
        problems: Vec<String>,
    },
    /// No plan exists; `message` names the conflicting constraints.
    #[error("infeasible: {message}")]
    Infeasible {
        /// The explanation.
        message: String,
    },
    /// The inventory provider failed.
    #[error("unavailable: {message}")]
    Unavailable {
        /// What failed.
        message: String,
    },
    /// An engine bug.
    #[error("internal error: {message}")]
    Internal {
        /// What went wrong.
        message: String,
    },
}

impl EngineError {
    /// The neutral code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            EngineError::InvalidInput { .. } => ErrorCode::InvalidInput,
            EngineError::NotFound { .. } => ErrorCode::NotFound,
            EngineError::Infeasible { .. } => ErrorCode::Infeasible,
            EngineError::Unavailable { .. } => ErrorCode::Unavailable,
            EngineError::Internal { .. } => ErrorCode::Internal,
        }
    }

    pub(crate) fn invalid(msg: impl Into<String>) -> EngineError {
        EngineError::InvalidInput {
            problems: vec![msg.into()],
        }
    }

    /// Constraint-lowering errors: not found if every one is a missing reference.
    pub(crate) fn from_constraints(errors: Vec<berth_constraints::ConstraintError>) -> EngineError {
        use berth_constraints::ConstraintError as C;
        let missing = errors
            .iter()
            .all(|e| matches!(e, C::UnknownLicense { .. } | C::UnlocatedLocation { .. }));
        let problems = errors.iter().map(ToString::to_string).collect();
        if missing {
            EngineError::NotFound { problems }
        } else {
            EngineError::InvalidInput { problems }
        }
    }
}
