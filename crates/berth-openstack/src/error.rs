//! `OpenStackError`: what went wrong talking to Keystone, Placement or Nova.

/// Why a call to the cloud failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum OpenStackError {
    /// An answer that does not have the shape the API documents.
    #[error("unexpected {what} answer at `{path}`: {message}")]
    Wire {
        /// Which answer (`keystone token`, `placement inventories`).
        what: &'static str,
        /// Field path in the answer (`inventories.VCPU.total`), `.` at the top.
        path: String,
        /// What was found and what was expected.
        message: String,
    },
    /// The service answered with an error status.
    #[error("{method} {url} answered {status}: {message}")]
    Status {
        /// The request's method.
        method: &'static str,
        /// The URL called.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The error's title or detail as the service wrote it (or the body's start).
        message: String,
        /// Placement's error code (`placement.concurrent_update`), when given.
        code: Option<String>,
    },
    /// The service could not be reached or did not answer in time.
    #[error("cannot reach {url}: {message}")]
    Transport {
        /// The URL called.
        url: String,
        /// The transport's reason.
        message: String,
    },
    /// The catalog has no endpoint of a service for the interface and region asked.
    #[error("the service catalog has no {interface} endpoint of `{service}`{}", region.as_deref().map(|r| format!(" in region `{r}`")).unwrap_or_default())]
    NoEndpoint {
        /// Service type (`placement`, `compute`).
        service: String,
        /// Interface (`public`, `internal`).
        interface: String,
        /// Region, when one was asked.
        region: Option<String>,
    },
    /// Configuration that cannot work (no credentials, a bad URL).
    #[error("{field}: {message}")]
    Config {
        /// The setting at fault.
        field: &'static str,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A server went to ERROR, or was not ACTIVE by the deadline.
    #[error("server `{server}` {message}")]
    Boot {
        /// The server's id.
        server: String,
        /// What happened (`went to ERROR: No valid host was found`).
        message: String,
    },
    /// A claim could not be written: the provider lacks the capacity asked.
    #[error("placement refused the claim of consumer `{consumer}` on `{provider}`: {message}")]
    ClaimRefused {
        /// The consumer.
        consumer: String,
        /// The resource provider's name.
        provider: String,
        /// Placement's reason.
        message: String,
    },
}

impl OpenStackError {
    /// The HTTP status of a [`OpenStackError::Status`].
    pub fn status(&self) -> Option<u16> {
        match self {
            OpenStackError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether Placement refused a write because a generation moved (re-read and retry).
    pub fn is_generation_conflict(&self) -> bool {
        matches!(self, OpenStackError::Status { status: 409, code: Some(c), .. } if c == "placement.concurrent_update")
    }
}
