//! `ServiceError`: every way a service call can fail, with a neutral code the API maps to HTTP.

use berth_calendar::{CalendarError, Conflict};

/// A neutral error class; the API maps it to a status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The request is malformed or inconsistent.
    InvalidInput,
    /// The request names something that does not exist.
    NotFound,
    /// The request does not fit (capacity) or reuses an idempotency key with another body.
    Conflict,
    /// The journal or a dependency could not answer.
    Unavailable,
    /// A bug.
    Internal,
}

/// Why a service call failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// The calendar refused the command (nothing changed); a capacity conflict carries offers.
    #[error("{source}")]
    Calendar {
        /// The calendar's reason.
        source: CalendarError,
    },
    /// Malformed input.
    #[error("invalid input: {message}")]
    Invalid {
        /// What is wrong, one sentence.
        message: String,
        /// The request field it is about, when there is one (`name`, `template`).
        field: Option<&'static str>,
    },
    /// Unknown id.
    #[error("{what} `{id}` not found")]
    NotFound {
        /// Kind of thing (`plan`, `subscription`).
        what: &'static str,
        /// The id asked for.
        id: String,
    },
    /// An idempotency key was reused with a different request.
    #[error("idempotency key `{key}` was used with a different request")]
    KeyReused {
        /// The key.
        key: String,
    },
    /// The store failed; the request was not applied.
    #[error("store unavailable: {message}")]
    Store {
        /// What failed.
        message: String,
    },
    /// Other writers kept appending; the request was not applied.
    #[error(
        "too much contention on stream `{stream}`; expected to commit within {attempts} attempts"
    )]
    Contention {
        /// The stream.
        stream: String,
        /// Attempts made.
        attempts: u32,
    },
    /// The service is shutting down or overloaded.
    /// The store refuses writes (full or read-only); reads keep working.
    #[error("writes are refused: {refusal}")]
    WritesRefused {
        /// Why.
        refusal: berth_store::Refusal,
    },
    #[error("service unavailable: {message}")]
    Unavailable {
        /// Why.
        message: String,
    },
    /// An inventory that cannot be served (nothing was changed; the inventory served stays):
    /// every problem found, with its line and column.
    #[error("invalid inventory {origin}: {message}")]
    InvalidInventory {
        /// Where it was read from (`file /etc/berth/inventory.yaml`).
        origin: String,
        /// What is wrong: the first errors, in document order.
        message: String,
        /// Every problem found (errors and warnings), in document order.
        diagnostics: Vec<berth_doc::Diagnostic>,
    },
    /// A stored record could not be read back.
    #[error("corrupt record {seq} of `{stream}`: {message}")]
    Corrupt {
        /// The stream.
        stream: String,
        /// Sequence number of the record.
        seq: u64,
        /// What is wrong.
        message: String,
    },
}

impl ServiceError {
    /// The neutral class of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ServiceError::Calendar { source } => match source {
                // The request is well formed; the reservation's state or what it has left
                // refuses it, as a full pool refuses a reservation.
                CalendarError::Conflict(_)
                | CalendarError::ExceedsRemaining { .. }
                | CalendarError::ReservationNotActive { .. } => ErrorKind::Conflict,
                CalendarError::UnknownZone { .. }
                | CalendarError::UnknownPool { .. }
                | CalendarError::UnknownReservation { .. }
                | CalendarError::UnknownAllocation { .. }
                | CalendarError::UnknownSubscription { .. } => ErrorKind::NotFound,
                _ => ErrorKind::InvalidInput,
            },
            ServiceError::Invalid { .. } | ServiceError::InvalidInventory { .. } => {
                ErrorKind::InvalidInput
            }
            ServiceError::NotFound { .. } => ErrorKind::NotFound,
            ServiceError::KeyReused { .. } => ErrorKind::Conflict,
            ServiceError::Store { .. }
            | ServiceError::WritesRefused { .. }
            | ServiceError::Contention { .. }
            | ServiceError::Unavailable { .. } => ErrorKind::Unavailable,
            ServiceError::Corrupt { .. } => ErrorKind::Internal,
        }
    }

    /// The capacity conflict with its offers, when this is one.
    pub fn conflict(&self) -> Option<&Conflict> {
        match self {
            ServiceError::Calendar {
                source: CalendarError::Conflict(c),
            } => Some(c.as_ref()),
            _ => None,
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> ServiceError {
        ServiceError::Invalid {
            message: message.into(),
            field: None,
        }
    }

    /// Invalid input in the request field `field`.
    pub(crate) fn invalid_at(field: &'static str, message: impl Into<String>) -> ServiceError {
        ServiceError::Invalid {
            message: message.into(),
            field: Some(field),
        }
    }

    /// The request field this error is about, if any.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            ServiceError::Invalid { field, .. } => *field,
            _ => None,
        }
    }

    pub(crate) fn store(message: impl std::fmt::Display) -> ServiceError {
        ServiceError::Store {
            message: message.to_string(),
        }
    }
}

impl From<berth_store::StoreError> for ServiceError {
    fn from(e: berth_store::StoreError) -> Self {
        use berth_store::StoreError as S;
        match e {
            S::IdempotencyConflict { key } => ServiceError::KeyReused { key },
            S::NotFound { kind, id } => ServiceError::NotFound {
                what: kind_name(kind),
                id,
            },
            S::Refused { refusal, .. } => ServiceError::WritesRefused { refusal },
            S::Corrupt { what, detail } => ServiceError::Corrupt {
                stream: what.to_owned(),
                seq: 0,
                message: detail,
            },
            other => ServiceError::store(other),
        }
    }
}

fn kind_name(k: berth_store::RecordKind) -> &'static str {
    use berth_store::RecordKind as K;
    match k {
        K::Plan => "plan",
        K::Subscription => "subscription",
        K::Provider => "provider",
        K::Stream => "stream",
        K::IdempotencyKey => "idempotency key",
        _ => "record",
    }
}

impl From<CalendarError> for ServiceError {
    fn from(source: CalendarError) -> Self {
        ServiceError::Calendar { source }
    }
}

/// Longest name or id a client may give (zones, providers, plan names and ids).
pub const MAX_NAME: usize = 255;

/// Checks a name or id given by a client: not empty, at most [`MAX_NAME`] characters, no
/// control characters. `Err` holds the message, naming `field` and what was expected.
pub fn check_name(field: &str, value: &str) -> Result<(), String> {
    let n = value.chars().count();
    if value.trim().is_empty() {
        Err(format!("`{field}` is empty; expected a name"))
    } else if n > MAX_NAME {
        Err(format!(
            "`{field}` has {n} characters; expected at most {MAX_NAME}"
        ))
    } else if let Some(c) = value.chars().find(|c| c.is_control()) {
        Err(format!(
            "`{field}` contains the control character U+{:04X}; expected printable text",
            u32::from(c)
        ))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
