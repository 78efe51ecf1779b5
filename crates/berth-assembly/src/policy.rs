//! What a descriptor declares for scaling, resolved to numbers: a component's cluster bounds
//! and its scale policies.

use serde::{Deserialize, Serialize};

/// A component's cluster bounds, resolved to numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterSpec {
    /// Instances created at install (`initial-quantity`, default `minimum-nodes`).
    pub initial: u32,
    /// `minimum-nodes` (default 1).
    pub minimum: u32,
    /// `maximum-nodes` (`None`: unbounded).
    pub maximum: Option<u32>,
    /// `scaling-increment` (default 1, at least 1).
    pub increment: u32,
}

/// A resolved `policy::scale`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalePolicy {
    /// The policy's name.
    pub name: String,
    /// The component or reference emitting the metric (`A` of `A.load`).
    pub metric_owner: String,
    /// The metric (`load` of `A.load`).
    pub metric: String,
    /// The clustered component scaled.
    pub target: String,
    /// A value strictly above this is a scale-out breach.
    pub scale_out_threshold: Option<f64>,
    /// A value strictly below this is a scale-in breach.
    pub scale_in_threshold: Option<f64>,
    /// Consecutive breaches needed before acting (at least 1).
    pub smoothing: u32,
}
