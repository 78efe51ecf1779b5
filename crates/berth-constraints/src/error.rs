//! The crate's error type: a template constraint or objective that cannot be lowered.

/// Why a constraint or objective term could not be turned into solver constraints.
///
/// Infeasibility is never an error (the solver answers it); these are inputs the plugins cannot
/// interpret or data they need and do not have.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConstraintError {
    /// A constraint or objective names a demand the search space does not have.
    #[error("`{origin}` refers to unknown demand `{demand}`; expected a declared demand")]
    UnknownDemand {
        /// Constraint name, or `optimization`.
        origin: String,
        /// The demand.
        demand: String,
    },
    /// A location that has no coordinates (not given, or not resolvable by the inventory).
    #[error(
        "`{origin}` needs the coordinates of location `{location}`; expected a location with latitude/longitude or one the inventory can resolve"
    )]
    UnlocatedLocation {
        /// Constraint name, or `optimization`.
        origin: String,
        /// The location.
        location: String,
    },
    /// Latency is needed between candidates without a topology path and no latency model is set.
    #[error(
        "`{origin}` needs network latency but {reason}; expected a topology linking the candidates or a latency-per-km model"
    )]
    NoLatencyModel {
        /// Constraint name, or `optimization`.
        origin: String,
        /// Which candidates lack a path.
        reason: String,
    },
    /// Bandwidth is needed between candidates that are not linked through a topology.
    #[error(
        "`{origin}` needs network bandwidth but {reason}; expected every candidate to name a topology node"
    )]
    NoTopology {
        /// Constraint name.
        origin: String,
        /// Which candidates lack a topology node.
        reason: String,
    },
    /// A controller request that is not a mapping of dimensions to non-negative integers.
    #[error("`{origin}` has a bad request: {reason}")]
    BadRequest {
        /// Constraint name.
        origin: String,
        /// What was expected.
        reason: String,
    },
    /// A license id the inventory does not know.
    #[error(
        "`{origin}` needs license `{id}`, which the inventory does not list; expected one of its `licenses`"
    )]
    UnknownLicense {
        /// Constraint name.
        origin: String,
        /// The license id.
        id: String,
    },
    /// A property combination the plugins do not support (said plainly, never silently passed).
    #[error("`{origin}` is not supported: {reason}")]
    Unsupported {
        /// Constraint name, or `optimization`.
        origin: String,
        /// What is missing.
        reason: String,
    },
}

impl ConstraintError {
    /// Whether the template alone is at fault: no inventory, topology or latency model could
    /// make it lowerable. `berth validate` reports exactly these (see `berth-engine`'s `check`).
    pub fn is_template_error(&self) -> bool {
        matches!(
            self,
            ConstraintError::UnknownDemand { .. }
                | ConstraintError::BadRequest { .. }
                | ConstraintError::Unsupported { .. }
        )
    }

    /// The constraint name, or `optimization`, the error is about.
    pub fn origin(&self) -> &str {
        match self {
            ConstraintError::UnknownDemand { origin, .. }
            | ConstraintError::UnlocatedLocation { origin, .. }
            | ConstraintError::NoLatencyModel { origin, .. }
            | ConstraintError::NoTopology { origin, .. }
            | ConstraintError::BadRequest { origin, .. }
            | ConstraintError::UnknownLicense { origin, .. }
            | ConstraintError::Unsupported { origin, .. } => origin,
        }
    }
}
