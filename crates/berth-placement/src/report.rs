//! The answer as operators read it: JSON `{status, optimal, objective, hosts_used,
//! placements, violated_soft, bandwidth, stats}` or a text table.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::json;

use crate::check::{HardViolation, SoftViolation};
use crate::explain::Explanation;
use crate::instance::{Connectivity, Instance, RuleKind};
use crate::search::{Solution, Stats, Status};

/// Bandwidth reserved between two placed items.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reservation {
    /// One end.
    pub from: String,
    /// Other end.
    pub to: String,
    /// Mbit/s each direction.
    pub mbps: u64,
    /// Network links (named by their lower vertex) carrying it.
    pub links: Vec<String>,
    /// A hard requirement.
    pub hard: bool,
}

/// A placement ready to print.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// Outcome.
    pub status: Status,
    /// Proven optimal.
    pub optimal: bool,
    /// Weighted cost (checker's).
    pub objective: f64,
    /// Leaves in use.
    pub hosts_used: usize,
    /// Lower bound on the hosts needed; `None` when the demand exceeds the leaves together.
    pub lower_bound: Option<usize>,
    /// License charges.
    pub license_cost: f64,
    /// Resource -> leaf id, by resource name.
    pub placements: BTreeMap<String, String>,
    /// Resources left unplaced.
    pub unplaced: Vec<String>,
    /// Every violated soft policy.
    pub violated_soft: Vec<SoftViolation>,
    /// Hard violations (only when not placed).
    pub violated_hard: Vec<HardViolation>,
    /// Bandwidth reservations.
    pub bandwidth: Vec<Reservation>,
    /// Connectivity requirements to hand to the network layer.
    pub connectivity: Vec<Connectivity>,
    /// `OS::VolNotMoved` volumes: never to be moved once placed.
    pub not_movable: Vec<String>,
    /// Counters.
    pub stats: Stats,
    /// Why not everything is placed: the proof when infeasible, each unplaced item's triage.
    pub explanation: Option<Explanation>,
}

impl Placement {
    /// Builds the printable answer from a solution.
    #[must_use]
    pub fn new(inst: &Instance, sol: &Solution) -> Placement {
        let topo = &inst.topo;
        let at = |i: u32| sol.assignment.get(i as usize).copied().flatten();
        let mut placements = BTreeMap::new();
        let mut unplaced = Vec::new();
        for (i, it) in inst.items.iter().enumerate() {
            match at(i as u32) {
                Some(l) => {
                    placements.insert(it.name.clone(), topo.leaf_name(l).to_owned());
                }
                None => unplaced.push(it.name.clone()),
            }
        }
        let mut bandwidth = Vec::new();
        for rule in &inst.rules {
            if let RuleKind::Bandwidth { a, b, mbps } = rule.kind
                && let (Some(x), Some(y)) = (at(a), at(b))
            {
                bandwidth.push(Reservation {
                    from: inst.items[a as usize].name.clone(),
                    to: inst.items[b as usize].name.clone(),
                    mbps,
                    links: topo
                        .path_edges(x, y)
                        .map(|e| topo.net_name(e.child()).to_owned())
                        .collect(),
                    hard: rule.hard,
                });
            }
        }
        Placement {
            status: sol.status,
            optimal: sol.optimal,
            objective: sol.report.cost.total,
            hosts_used: sol.report.cost.hosts_used,
            lower_bound: sol.stats.lower_bound,
            license_cost: sol.report.cost.license,
            placements,
            unplaced,
            violated_soft: sol.report.soft.clone(),
            violated_hard: if sol.status == Status::Placed {
                Vec::new()
            } else {
                sol.report.hard.clone()
            },
            bandwidth,
            connectivity: inst.connectivity.clone(),
            not_movable: inst
                .items
                .iter()
                .filter(|i| !i.movable)
                .map(|i| i.name.clone())
                .collect(),
            stats: sol.stats,
            explanation: sol.explanation.clone(),
        }
    }

    /// The JSON form.
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "status": self.status.as_str(),
            "optimal": self.optimal,
            "objective": round(self.objective),
            "hosts_used": self.hosts_used,
            "placements": self.placements,
            "unplaced": self.unplaced,
            "violated_soft": self.violated_soft.iter().map(|s| json!({
                "type": s.type_name, "policy": s.label, "path": s.path,
                "violations": s.violations, "penalty": round(s.penalty),
            })).collect::<Vec<_>>(),
            "violated_hard": self.violated_hard.iter().map(|h| json!({
                "type": h.kind, "policy": h.policy, "message": h.message,
            })).collect::<Vec<_>>(),
            "bandwidth": self.bandwidth.iter().map(|r| json!({
                "from": r.from, "to": r.to, "mbps": r.mbps, "links": r.links, "hard": r.hard,
            })).collect::<Vec<_>>(),
            "connectivity": self.connectivity.iter().map(|c| json!({
                "type": c.type_name, "from": c.from, "to": c.to, "protocols": c.protocols,
                "endpoints": c.endpoints, "symmetric": c.symmetric,
            })).collect::<Vec<_>>(),
            "not_movable": self.not_movable,
            "explanation": self.explanation.as_ref().map(|e| json!({
                "proven": e.proven,
                "reasons": e.reasons.iter().map(|r| json!({
                    "type": r.kind, "policy": r.policy, "path": r.path, "message": r.message,
                })).collect::<Vec<_>>(),
                "triage": e.triage.iter().map(|t| json!({
                    "item": t.item, "leaves": t.leaves, "removed": t.removed,
                })).collect::<Vec<_>>(),
            })),
            "stats": {
                "lower_bound_hosts": self.lower_bound,
                "license_cost": round(self.license_cost),
                "greedy_placed": self.stats.greedy_placed,
                "greedy_hosts": self.stats.greedy_hosts,
                "iterations": self.stats.iterations,
                "improvements": self.stats.improvements,
                "exact_repairs": self.stats.exact_repairs,
                "exact_nodes": self.stats.exact_nodes,
            },
        })
    }

    /// A text table: one line per resource, then the summary and violations.
    #[must_use]
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        let width = self
            .placements
            .keys()
            .map(String::len)
            .max()
            .unwrap_or(8)
            .max(8);
        let _ = writeln!(out, "{:<width$}  LEAF", "RESOURCE");
        for (r, l) in &self.placements {
            let _ = writeln!(out, "{r:<width$}  {l}");
        }
        for r in &self.unplaced {
            let _ = writeln!(out, "{r:<width$}  -");
        }
        let proven = self.explanation.as_ref().is_some_and(|e| e.proven);
        let _ = writeln!(
            out,
            "\nstatus {}{}, objective {}, hosts used {}{}",
            self.status.as_str(),
            if self.optimal {
                " (optimal)"
            } else if proven {
                " (proven)"
            } else {
                ""
            },
            round(self.objective),
            self.hosts_used,
            match self.lower_bound {
                Some(b) => format!(" (lower bound {b})"),
                None => " (no lower bound: the demand exceeds the leaves together)".to_owned(),
            }
        );
        if let Some(e) = &self.explanation {
            for r in &e.reasons {
                let who = match (r.policy.is_empty(), r.path.is_empty()) {
                    (true, _) => r.kind.clone(),
                    (false, true) => format!("{} {}", r.kind, r.policy),
                    (false, false) => format!("{} {} ({})", r.kind, r.policy, r.path),
                };
                let _ = writeln!(
                    out,
                    "{}: {who}: {}",
                    if e.proven { "proof" } else { "why" },
                    r.message
                );
            }
            for t in &e.triage {
                let removed: usize = t.removed.values().sum();
                let by: Vec<String> = t
                    .removed
                    .iter()
                    .map(|(k, n)| format!("{n} by {k}"))
                    .collect();
                let _ = writeln!(
                    out,
                    "triage: `{}`: {removed} of {} leaves removed{}{}",
                    t.item,
                    t.leaves,
                    if by.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", by.join(", "))
                    },
                    if removed < t.leaves {
                        format!(
                            "; {} would take it beside the others as placed",
                            t.leaves - removed
                        )
                    } else {
                        String::new()
                    }
                );
            }
        }
        for s in &self.violated_soft {
            let _ = writeln!(
                out,
                "soft violated: {} {} ({} violations, penalty {})",
                s.type_name,
                s.label,
                s.violations,
                round(s.penalty)
            );
        }
        for h in &self.violated_hard {
            let _ = writeln!(out, "hard violated: {} {}: {}", h.kind, h.policy, h.message);
        }
        for b in &self.bandwidth {
            let _ = writeln!(
                out,
                "bandwidth: {} <-> {} {} Mbit/s over {}",
                b.from,
                b.to,
                b.mbps,
                b.links.join(", ")
            );
        }
        out
    }
}

/// Rounds to 6 decimals so output does not depend on summation order noise.
fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6 + 0.0
}
