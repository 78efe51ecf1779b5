//! Scale policy evaluation: metric series -> ScaleOut/ScaleIn decisions within cluster bounds.

use serde::{Deserialize, Serialize};

#[cfg(test)]
mod tests;

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

/// What [`evaluate_scale`] decided at one point of the series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ScaleDecision {
    /// Add nodes.
    ScaleOut {
        /// Index in the series of the breach that completed the smoothing window.
        at: usize,
        /// Nodes before.
        from: u32,
        /// Nodes after.
        to: u32,
    },
    /// Remove nodes.
    ScaleIn {
        /// Index in the series of the breach that completed the smoothing window.
        at: usize,
        /// Nodes before.
        from: u32,
        /// Nodes after.
        to: u32,
    },
}

/// Which threshold a sample breaches: scale-out first, then scale-in; NaN breaches none.
pub fn breach(policy: &ScalePolicy, value: f64) -> Option<bool> {
    if policy.scale_out_threshold.is_some_and(|t| value > t) {
        Some(true)
    } else if policy.scale_in_threshold.is_some_and(|t| value < t) {
        Some(false)
    } else {
        None
    }
}

/// Replays `series` against `policy` starting from `current_nodes`.
///
/// A decision needs `smoothing` consecutive breaches of the same threshold; the run restarts
/// after every trigger, so the next decision needs a fresh window. A step moves by
/// `increment`, clamped to the cluster bounds; a trigger that cannot move (already at the bound)
/// emits nothing. Never moves the node count further outside the bounds than it started.
pub fn evaluate_scale(
    policy: &ScalePolicy,
    cluster: &ClusterSpec,
    current_nodes: u32,
    series: &[f64],
) -> Vec<ScaleDecision> {
    let need = policy.smoothing.max(1);
    let step = cluster.increment.max(1);
    let max = cluster.maximum.unwrap_or(u32::MAX);
    let mut nodes = current_nodes;
    let (mut out_run, mut in_run) = (0u32, 0u32);
    let mut decisions = Vec::new();
    for (at, &value) in series.iter().enumerate() {
        match breach(policy, value) {
            Some(true) => {
                out_run += 1;
                in_run = 0;
            }
            Some(false) => {
                in_run += 1;
                out_run = 0;
            }
            None => {
                out_run = 0;
                in_run = 0;
            }
        }
        if out_run >= need {
            out_run = 0;
            if nodes < max {
                let to = nodes.saturating_add(step).min(max);
                decisions.push(ScaleDecision::ScaleOut {
                    at,
                    from: nodes,
                    to,
                });
                nodes = to;
            }
        } else if in_run >= need {
            in_run = 0;
            if nodes > cluster.minimum {
                let to = nodes.saturating_sub(step).max(cluster.minimum);
                decisions.push(ScaleDecision::ScaleIn {
                    at,
                    from: nodes,
                    to,
                });
                nodes = to;
            }
        }
    }
    decisions
}
