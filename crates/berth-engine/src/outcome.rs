//! The plan outcome: exactly the JSON contract of `berth solve`, plus a text rendering.

use std::fmt::Write as _;

use indexmap::IndexMap;
use serde::Serialize;

use crate::EngineError;

/// Whether plans were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Status {
    /// At least one plan.
    #[serde(rename = "solved")]
    Solved,
    /// No plan: infeasible, or a limit stopped the search before any was found.
    #[serde(rename = "not found")]
    NotFound,
    /// The plan could not be computed (see `message`).
    #[serde(rename = "error")]
    Error,
}

impl Status {
    /// The status as written in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Solved => "solved",
            Status::NotFound => "not found",
            Status::Error => "error",
        }
    }
}

/// One plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanSolution {
    /// The objective's value (0 without an optimization section).
    pub objective: f64,
    /// Demand -> `{"candidate_id": ..., the candidate's fields}`, in template order.
    pub placements: IndexMap<String, serde_json::Map<String, serde_json::Value>>,
}

/// Which candidates of a demand were removed, and by what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DemandTriage {
    /// Candidates the inventory offered for the demand, before any removal.
    pub candidates: usize,
    /// Candidate id -> name of the constraint (or `inventory:...` filter) that removed it.
    pub removed: IndexMap<String, String>,
    /// When the inventory offered nothing: for each requirement, that no candidate of its
    /// inventory type exists (left out of the JSON when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub absent: Vec<String>,
}

/// Counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PlanStats {
    /// Search nodes visited (explanation checks included).
    pub nodes: u64,
    /// Wall time on the plan's clock, in ms.
    pub elapsed_ms: u64,
}

/// The answer of [`crate::plan`]; serializes to exactly
/// `{status, optimal, bound, gap, message, solutions[{objective, placements}], triage{candidates, removed}, stats{nodes, elapsed_ms}}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanOutcome {
    /// Solved, not found, or error.
    pub status: Status,
    /// The plans are proven best (the search completed).
    pub optimal: bool,
    /// An objective no plan beats, proven by the search (a lower bound when the template
    /// minimizes, an upper bound when it maximizes): the best plan's objective when
    /// `optimal`. `None` without a plan.
    pub bound: Option<f64>,
    /// The best plan's relative distance to `bound` ([`relative_gap`]): 0 when optimal.
    pub gap: Option<f64>,
    /// One sentence: what was found, or which constraints leave no plan.
    pub message: String,
    /// Best first.
    pub solutions: Vec<PlanSolution>,
    /// Per demand, in template order.
    pub triage: IndexMap<String, DemandTriage>,
    /// Counters.
    pub stats: PlanStats,
}

impl PlanOutcome {
    /// The outcome reporting an error (status "error", its message, nothing else).
    pub fn from_error(e: &EngineError) -> PlanOutcome {
        PlanOutcome {
            status: Status::Error,
            optimal: false,
            bound: None,
            gap: None,
            message: e.to_string(),
            solutions: Vec::new(),
            triage: IndexMap::new(),
            stats: PlanStats {
                nodes: 0,
                elapsed_ms: 0,
            },
        }
    }

    /// The outcome as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// This outcome if it has plans; otherwise an [`EngineError::Infeasible`] with its message.
    pub fn require_solved(self) -> Result<PlanOutcome, EngineError> {
        match self.status {
            Status::Solved => Ok(self),
            _ => Err(EngineError::Infeasible {
                message: self.message,
            }),
        }
    }

    /// A human-readable rendering: status, each plan as a table, then the triage.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let optimal = match (self.status, self.optimal) {
            (Status::Solved, true) => " (optimal)",
            (Status::Solved, false) => " (not proven optimal)",
            _ => "",
        };
        let _ = writeln!(out, "status: {}{optimal}", self.status.as_str());
        let _ = writeln!(out, "{}", self.message);
        if let (Some(b), Some(g)) = (self.bound, self.gap) {
            let _ = writeln!(out, "bound {} (gap {})", fmt_num(b), fmt_gap(g));
        }
        for (i, s) in self.solutions.iter().enumerate() {
            let _ = writeln!(out, "\nplan {}: objective {}", i + 1, fmt_num(s.objective));
            let rows: Vec<[String; 4]> = s
                .placements
                .iter()
                .map(|(d, p)| {
                    let field = |k: &str| p.get(k).map(text).unwrap_or_else(|| "-".to_owned());
                    [
                        d.clone(),
                        field("candidate_id"),
                        field("location_id"),
                        field("cost"),
                    ]
                })
                .collect();
            table(&mut out, ["DEMAND", "CANDIDATE", "LOCATION", "COST"], &rows);
        }
        let removed: usize = self
            .triage
            .values()
            .map(|t| t.removed.len() + t.absent.len())
            .sum();
        if removed > 0 {
            let _ = writeln!(out, "\ntriage:");
            for (d, t) in &self.triage {
                for a in &t.absent {
                    let _ = writeln!(out, "  {d}: {a}");
                }
                if t.removed.is_empty() {
                    continue;
                }
                let _ = writeln!(
                    out,
                    "  {d}: {} of {} candidates removed",
                    t.removed.len(),
                    t.candidates
                );
                for (c, by) in &t.removed {
                    let _ = writeln!(out, "    {c} by {by}");
                }
            }
        }
        let _ = writeln!(
            out,
            "\n{} nodes, {} ms",
            self.stats.nodes, self.stats.elapsed_ms
        );
        out
    }
}

/// How far `objective` is from `bound`, relative to the objective: `|objective - bound| /
/// max(1, |objective|)` (as CP-SAT measures it: relative, and absolute near 0, so an
/// objective of 0 has a finite gap). 0 when the plan meets its bound.
pub fn relative_gap(objective: f64, bound: f64) -> f64 {
    let g = (objective - bound).abs() / objective.abs().max(1.0);
    if g.is_finite() { g } else { f64::MAX }
}

/// A gap as a percentage with enough digits to see a small one (`0.012%`), `0%` for none.
pub fn fmt_gap(gap: f64) -> String {
    if gap == 0.0 {
        return "0%".to_owned();
    }
    let pct = 100.0 * gap;
    let s = if pct >= 10.0 {
        format!("{pct:.1}")
    } else if pct >= 0.01 {
        format!("{pct:.3}")
    } else {
        format!("{pct:.2e}")
    };
    let s = if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    };
    format!("{s}%")
}

fn text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), fmt_num),
        other => other.to_string(),
    }
}

/// Numbers with at most 3 decimals, trailing zeros dropped.
fn fmt_num(x: f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

fn table(out: &mut String, head: [&str; 4], rows: &[[String; 4]]) {
    let mut w = head.map(str::len);
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |out: &mut String, cells: [&str; 4]| {
        let mut l = String::from("  ");
        for (i, c) in cells.iter().enumerate() {
            let _ = write!(l, "{c:<width$}  ", width = w[i]);
        }
        let _ = writeln!(out, "{}", l.trim_end());
    };
    line(out, head);
    for r in rows {
        line(
            out,
            [r[0].as_str(), r[1].as_str(), r[2].as_str(), r[3].as_str()],
        );
    }
}
