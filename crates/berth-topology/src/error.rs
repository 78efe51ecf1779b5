//! `TopologyError`, the crate's one error type.

use berth_doc::Diagnostic;

use crate::problem::Problem;

/// Why a topology could not be built or loaded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// The builder's content is inconsistent; every problem is listed.
    #[error("invalid topology ({} problems): {}", problems.len(), join(problems))]
    Invalid {
        /// All problems, in a deterministic order.
        problems: Vec<Problem>,
    },
    /// A document could not be loaded; every problem is listed with path and line:column.
    #[error("invalid topology document ({} problems): {}", diagnostics.len(), join(diagnostics))]
    Document {
        /// All diagnostics, sorted by position.
        diagnostics: Vec<Diagnostic>,
    },
}

fn join<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}
