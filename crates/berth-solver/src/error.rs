//! The crate's error type: problems that are malformed (not infeasible ones, which are answers).

use crate::{ConstraintId, Value, VarId};

/// A malformed problem or option. Infeasibility is never an error: see [`crate::Outcome`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SolveError {
    /// A constraint's scope names a variable the problem does not have.
    #[error("constraint `{name}` refers to unknown variable {var}; expected one of x0..x{vars}")]
    UnknownVar {
        /// The constraint.
        constraint: ConstraintId,
        /// Its name.
        name: String,
        /// The unknown variable.
        var: VarId,
        /// Number of variables of the problem.
        vars: u32,
    },
    /// A constraint rejected its own data against the domain sizes.
    #[error("constraint `{name}` is malformed: {reason}")]
    BadConstraint {
        /// The constraint.
        constraint: ConstraintId,
        /// Its name.
        name: String,
        /// What the constraint expected.
        reason: String,
    },
    /// A soft constraint with a negative or non-finite weight.
    #[error("soft constraint `{name}` has weight {weight}; expected a finite weight >= 0")]
    BadWeight {
        /// The constraint.
        constraint: ConstraintId,
        /// Its name.
        name: String,
        /// The weight given.
        weight: f64,
    },
    /// An objective term refers to a variable the problem does not have.
    #[error("objective refers to unknown variable {var}")]
    ObjectiveUnknownVar {
        /// The variable.
        var: VarId,
    },
    /// A unary cost table whose length differs from the variable's domain size.
    #[error("cost table of {var} has {len} entries; expected {expected} (the domain size)")]
    CostTableSize {
        /// The variable.
        var: VarId,
        /// Entries given.
        len: usize,
        /// Domain size.
        expected: u32,
    },
    /// A cost that is NaN or infinite.
    #[error("cost of {var} = {value} is {cost}; expected a finite number")]
    NonFiniteCost {
        /// The variable.
        var: VarId,
        /// The value.
        value: Value,
        /// The cost found.
        cost: f64,
    },
    /// A non-finite constant, weight, range or normalization bound in the objective.
    #[error("objective {what} is {number}; expected a finite number")]
    NonFiniteNumber {
        /// Which number.
        what: &'static str,
        /// The number.
        number: f64,
    },
    /// A normalization whose start equals its end.
    #[error("normalization has start = end = {start}; expected distinct bounds")]
    EmptyNormalization {
        /// The start (and end).
        start: f64,
    },
    /// A pairwise cost range with lower > upper.
    #[error("pairwise cost range [{lower}, {upper}] is empty; expected lower <= upper")]
    EmptyRange {
        /// Lower bound.
        lower: f64,
        /// Upper bound.
        upper: f64,
    },
    /// A pairwise cost between a variable and itself.
    #[error("pairwise cost between {var} and itself; expected two distinct variables")]
    SelfPair {
        /// The variable.
        var: VarId,
    },
    /// A min or max over no operands.
    #[error("objective {op} has no operands; expected at least one")]
    NoOperands {
        /// `min` or `max`.
        op: &'static str,
    },
    /// `solutions` of zero.
    #[error("asked for 0 solutions; expected at least 1")]
    ZeroSolutions,
    /// More `threads` than [`crate::MAX_THREADS`].
    #[error("asked for {threads} threads; expected at most {max}")]
    TooManyThreads {
        /// The count asked for.
        threads: usize,
        /// [`crate::MAX_THREADS`].
        max: usize,
    },
    /// A `unique` option naming an unknown variable.
    #[error("unique option names unknown variable {var}")]
    UniqueUnknownVar {
        /// The variable.
        var: VarId,
    },
    /// Several of the above, all found in one pass.
    #[error("invalid problem ({} errors): {}", errors.len(), join(errors))]
    Invalid {
        /// Every problem found.
        errors: Vec<SolveError>,
    },
}

fn join(errors: &[SolveError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl SolveError {
    /// One error as itself, several as [`SolveError::Invalid`].
    pub(crate) fn from_list(mut errors: Vec<SolveError>) -> Result<(), SolveError> {
        match errors.len() {
            0 => Ok(()),
            1 => Err(errors.remove(0)),
            _ => Err(SolveError::Invalid { errors }),
        }
    }
}
