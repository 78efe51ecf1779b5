//! `PlacementError`, the crate's one error type.

use std::fmt;

use berth_doc::Diagnostic;

/// One reason a template cannot be placed on a topology (before any search).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// What it is about: `resources.NAME`, a policy's field path, `catalog.licenses.X`.
    pub subject: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.subject, self.message)
    }
}

/// Why a placement could not be attempted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PlacementError {
    /// The template does not fit the topology (unknown flavor, unknown level, …); all problems.
    #[error("template cannot be placed on this topology ({} problems): {}", problems.len(), join(problems))]
    Invalid {
        /// Every problem, in template order.
        problems: Vec<Problem>,
    },
    /// The catalog side file is invalid; every diagnostic with path and line:column.
    #[error("invalid placement catalog ({} diagnostics): {}", diagnostics.len(), join(diagnostics))]
    Catalog {
        /// All diagnostics.
        diagnostics: Vec<Diagnostic>,
    },
    /// A machine reassignment (ROADEF/EURO 2012) file is malformed.
    #[error("{file}:{line}:{column}: {field}: {message}")]
    Roadef {
        /// The file's name.
        file: String,
        /// 1-based line (0 when built from parts).
        line: usize,
        /// 1-based column.
        column: usize,
        /// What was being read: `machines[3].capacity[1]`.
        field: String,
        /// What was expected and what was found.
        message: String,
    },
    /// The starting assignment of a machine reassignment search breaks a hard constraint.
    #[error("the initial assignment is infeasible ({}), first: {first}", violations(*count))]
    RoadefInfeasible {
        /// How many violations the checker found.
        count: usize,
        /// The first one.
        first: String,
    },
    /// The assignment a machine reassignment search was asked to start from (an earlier
    /// answer, say) breaks a hard constraint, or is not one machine per process.
    #[error("the starting assignment is infeasible ({}), first: {first}", violations(*count))]
    RoadefStartInfeasible {
        /// How many violations the checker found.
        count: usize,
        /// The first one.
        first: String,
    },
    /// A search thread of a machine reassignment portfolio panicked (a bug): the others'
    /// answer is withheld rather than passed off as the portfolio's.
    #[error(
        "{} of {threads} machine reassignment search threads panicked (a bug; the panic message is on stderr), so no result is returned",
        threads - finished
    )]
    RoadefSearchFailed {
        /// Searches started.
        threads: usize,
        /// Searches that returned.
        finished: usize,
    },
}

fn join<T: fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

fn violations(count: usize) -> String {
    if count == 1 {
        "1 violation".to_owned()
    } else {
        format!("{count} violations")
    }
}
