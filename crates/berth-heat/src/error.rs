//! `HeatError`, the crate's one error type.

use berth_doc::Diagnostic;

/// Why a template could not be loaded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HeatError {
    /// The template has errors; every diagnostic (errors and warnings) is listed by position.
    #[error("invalid heat template ({} diagnostics): {}", diagnostics.len(), join(diagnostics))]
    Invalid {
        /// All diagnostics, sorted by position.
        diagnostics: Vec<Diagnostic>,
    },
}

fn join(items: &[Diagnostic]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}
