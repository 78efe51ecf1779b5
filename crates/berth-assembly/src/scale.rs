//! Scale policy evaluation: metric series -> ScaleOut/ScaleIn decisions within cluster bounds,
//! and [`scale`]: every policy of a plan on current metrics, with where its smoothing stands.

use std::collections::BTreeMap;

use berth_doc::{Diagnostic, Diagnostics, Path, Pos};
use serde::{Deserialize, Serialize};

use crate::plan::Plan;
use crate::policy::{ClusterSpec, ScalePolicy};

#[cfg(test)]
mod tests;

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
    replay(policy, cluster, current_nodes, series).decisions
}

/// Which threshold a run of breaches is against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Above `scaleOut_threshold`.
    Out,
    /// Below `scaleIn_threshold`.
    In,
}

/// Where the smoothing window stands after the last sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Smoothing {
    /// Consecutive breaches needed to act (`smoothing`).
    pub needed: u32,
    /// Consecutive breaches since the last trigger or break, ending at the last sample.
    pub breaches: u32,
    /// The threshold those breaches are against; `None` when the last sample breaches none.
    pub direction: Option<Direction>,
}

/// The node count a replay ends with, its decisions, and the window it leaves open.
#[derive(Debug, Clone, PartialEq)]
struct Replay {
    decisions: Vec<ScaleDecision>,
    nodes: u32,
    smoothing: Smoothing,
    /// The last trigger could not move: the cluster was at this bound.
    held_at_bound: Option<(Direction, usize)>,
}

fn replay(
    policy: &ScalePolicy,
    cluster: &ClusterSpec,
    current_nodes: u32,
    series: &[f64],
) -> Replay {
    let need = policy.smoothing.max(1);
    let step = cluster.increment.max(1);
    let max = cluster.maximum.unwrap_or(u32::MAX);
    let mut nodes = current_nodes;
    let (mut out_run, mut in_run) = (0u32, 0u32);
    let mut decisions = Vec::new();
    let mut held_at_bound = None;
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
            held_at_bound = None;
            if nodes < max {
                let to = nodes.saturating_add(step).min(max);
                decisions.push(ScaleDecision::ScaleOut {
                    at,
                    from: nodes,
                    to,
                });
                nodes = to;
            } else {
                held_at_bound = Some((Direction::Out, at));
            }
        } else if in_run >= need {
            in_run = 0;
            held_at_bound = None;
            if nodes > cluster.minimum {
                let to = nodes.saturating_sub(step).max(cluster.minimum);
                decisions.push(ScaleDecision::ScaleIn {
                    at,
                    from: nodes,
                    to,
                });
                nodes = to;
            } else {
                held_at_bound = Some((Direction::In, at));
            }
        }
    }
    let (breaches, direction) = if out_run > 0 {
        (out_run, Some(Direction::Out))
    } else if in_run > 0 {
        (in_run, Some(Direction::In))
    } else {
        (0, None)
    };
    Replay {
        decisions,
        nodes,
        smoothing: Smoothing {
            needed: need,
            breaches,
            direction,
        },
        held_at_bound,
    }
}

/// What one scale policy decides on the current metrics ([`scale`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleOutcome {
    /// The policy's name.
    pub policy: String,
    /// The metric read, `owner.metric`.
    pub metric: String,
    /// The clustered component scaled.
    pub target: String,
    /// Samples given, oldest first.
    pub samples: usize,
    /// Nodes before the samples.
    pub nodes: u32,
    /// Every scale event the samples trigger, in order (`at` indexes the samples).
    pub decisions: Vec<ScaleDecision>,
    /// Nodes after them: the decision to enact.
    pub result: u32,
    /// The window the last samples leave: breaches counted toward the next decision.
    pub smoothing: Smoothing,
    /// One sentence: what to do and why.
    pub summary: String,
}

/// Evaluates every scale policy of `plan` on current metrics: `metrics` maps `owner.metric`
/// (a policy's `metric`, e.g. `A.load`) to its samples, oldest first; `nodes` the current
/// node count of clustered components (default: the cluster's `initial-quantity`).
///
/// Returns every problem at once: a metric no policy reads, a component that is not a
/// scaled cluster. A policy whose metric has no samples holds, and says so.
pub fn scale(
    plan: &Plan,
    metrics: &BTreeMap<String, Vec<f64>>,
    nodes: &BTreeMap<String, u32>,
) -> Result<Vec<ScaleOutcome>, Vec<Diagnostic>> {
    let mut diags = Diagnostics::new();
    let read: Vec<String> = plan
        .policies
        .iter()
        .map(|p| format!("{}.{}", p.metric_owner, p.metric))
        .collect();
    let expected = |items: &[String]| {
        if items.is_empty() {
            "none (the descriptor has no scale policy)".to_owned()
        } else {
            items.join(", ")
        }
    };
    for name in metrics.keys() {
        if !read.contains(name) {
            diags.error(
                &Path::root().key("metrics").key(name.clone()),
                Pos::UNKNOWN,
                format!(
                    "no scale policy reads metric `{name}`; expected one of {}",
                    expected(&read)
                ),
            );
        }
    }
    let mut targets: Vec<String> = plan.policies.iter().map(|p| p.target.clone()).collect();
    targets.sort();
    targets.dedup();
    for name in nodes.keys() {
        if !targets.contains(name) {
            diags.error(
                &Path::root().key("nodes").key(name.clone()),
                Pos::UNKNOWN,
                format!(
                    "no scale policy scales component `{name}`; expected one of {}",
                    expected(&targets)
                ),
            );
        }
    }
    if diags.has_errors() {
        return Err(diags.into_vec());
    }
    let mut out = Vec::new();
    for (policy, metric) in plan.policies.iter().zip(read) {
        let Some(cluster) = plan.cluster(&policy.target) else {
            continue;
        };
        let start = nodes
            .get(&policy.target)
            .copied()
            .unwrap_or(cluster.initial);
        let series = metrics.get(&metric).map_or(&[][..], Vec::as_slice);
        let r = replay(policy, cluster, start, series);
        let summary = summary(policy, cluster, &metric, series.len(), start, &r);
        out.push(ScaleOutcome {
            policy: policy.name.clone(),
            metric,
            target: policy.target.clone(),
            samples: series.len(),
            nodes: start,
            decisions: r.decisions,
            result: r.nodes,
            smoothing: r.smoothing,
            summary,
        });
    }
    Ok(out)
}

fn threshold(policy: &ScalePolicy, d: Direction) -> String {
    let (word, t) = match d {
        Direction::Out => ("above", policy.scale_out_threshold),
        Direction::In => ("below", policy.scale_in_threshold),
    };
    t.map_or_else(String::new, |t| format!("{word} {t}"))
}

fn summary(
    policy: &ScalePolicy,
    cluster: &ClusterSpec,
    metric: &str,
    samples: usize,
    start: u32,
    r: &Replay,
) -> String {
    let target = &policy.target;
    if samples == 0 {
        return format!("hold {target} at {start}: no samples of `{metric}`");
    }
    let window = |s: &Smoothing| match s.direction {
        Some(d) => format!(
            "{} of {} breaches {} so far",
            s.breaches,
            s.needed,
            threshold(policy, d)
        ),
        None => format!(
            "the last sample breaches no threshold (smoothing {})",
            s.needed
        ),
    };
    let last_at = |d: Direction| {
        r.decisions.iter().rev().find_map(|x| match (x, d) {
            (ScaleDecision::ScaleOut { at, .. }, Direction::Out)
            | (ScaleDecision::ScaleIn { at, .. }, Direction::In) => Some(*at),
            _ => None,
        })
    };
    let acted = |verb: &str, d: Direction| {
        let events = r.decisions.len();
        format!(
            "{verb} {target} from {start} to {}: {} consecutive breaches {} (smoothing) at sample {}{}",
            r.nodes,
            r.smoothing.needed,
            threshold(policy, d),
            last_at(d).map_or(0, |at| at + 1),
            if events > 1 {
                format!(", {events} scale events in all")
            } else {
                String::new()
            }
        )
    };
    let text = if r.nodes > start {
        acted("scale out", Direction::Out)
    } else if r.nodes < start {
        acted("scale in", Direction::In)
    } else if !r.decisions.is_empty() {
        format!(
            "hold {target} at {start}: the samples scaled it and back ({} scale events)",
            r.decisions.len()
        )
    } else {
        match r.held_at_bound {
            Some((d, _)) => format!(
                "hold {target} at {start}: {} breaches {} but the cluster is at its {} ({})",
                r.smoothing.needed,
                threshold(policy, d),
                match d {
                    Direction::Out => "maximum-nodes",
                    Direction::In => "minimum-nodes",
                },
                match d {
                    Direction::Out => cluster.maximum.unwrap_or(u32::MAX),
                    Direction::In => cluster.minimum,
                }
            ),
            None => format!("hold {target} at {start}: {}", window(&r.smoothing)),
        }
    };
    if r.decisions.is_empty() || r.smoothing.breaches == 0 {
        text
    } else {
        format!("{text}; then {}", window(&r.smoothing))
    }
}
