//! The crate's error type.

use std::fmt;

use berth_doc::Diagnostic;

/// Which document a [`CloudPolicyError::Invalid`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum DocumentKind {
    /// A cloud selection policy ([`crate::CloudSelectionPolicy`]).
    Policy,
    /// An owner capability file ([`crate::OwnerCatalog`]).
    Owners,
    /// A workload deployment cost file ([`crate::CostFile`]).
    Costs,
    /// A workload file ([`crate::WorkloadCatalog`]).
    Workloads,
}

impl fmt::Display for DocumentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Policy => "cloud selection policy",
            Self::Owners => "owner capability file",
            Self::Costs => "cost file",
            Self::Workloads => "workload file",
        })
    }
}

/// Everything that can go wrong loading policies and operator files or setting up the
/// net value.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CloudPolicyError {
    /// A document has problems; all of them, sorted by position.
    #[error("invalid {document}: {}", summarize(diagnostics))]
    Invalid {
        /// Which document.
        document: DocumentKind,
        /// Every problem found (errors and warnings).
        diagnostics: Vec<Diagnostic>,
    },
    /// A net value weight that is negative or not finite.
    #[error("invalid {objective} weight {value}; expected a finite number of at least 0")]
    InvalidWeight {
        /// `cost` or `distance`.
        objective: &'static str,
        /// The value given.
        value: f64,
    },
    /// A normalization scale that is not a finite positive number.
    #[error("invalid {objective} scale {value}; expected a finite number greater than 0")]
    InvalidScale {
        /// `cost` or `distance`.
        objective: &'static str,
        /// The value given.
        value: f64,
    },
    /// The policy schema built into the crate does not compile (a bug in this crate).
    #[error("built-in policy schema does not compile: {reason}")]
    Schema {
        /// The compiler's message.
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
