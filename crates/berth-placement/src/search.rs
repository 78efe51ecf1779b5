//! The heuristic: greedy construction (policy-bound items spread within a capacity share,
//! then a bin-centric fill of the policy-free ones; honouring hard policies) and
//! large-neighbourhood search (destroy/repair, exact repair of small neighbourhoods through
//! `berth-solver`), anytime under a deadline, seeded.
//!
//! This file holds the options, the answer and the driver ([`solve`]); the search itself is
//! split by job: `placed` (the `Search` state: placements and the leaf indexes kept in step),
//! `choose` (the leaf for one item), `construct` (greedy construction), `lns` (destroy and
//! repair), `neighbourhood` (exact repair through `berth-solver`) and `rng` (the seeded source).

use std::sync::Arc;

use berth_solver::{Deadline, Outcome, Progress, SolveOptions};
use berth_topology::LeafId;

use crate::check::{Report, check};
use crate::exact::{Scope, encode};
use crate::explain::{self, Explanation};
use crate::instance::Instance;
use crate::state::{Objective, Weights};

mod choose;
mod construct;
mod lns;
mod neighbourhood;
mod placed;
mod rng;

use placed::Search;

/// How hard to try for a proof of optimality.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExactMode {
    /// Exact search on small instances (at most [`Options::exact_max_items`] items and
    /// [`Options::exact_max_leaves`] leaves) after the heuristic; heuristic otherwise.
    #[default]
    Auto,
    /// Heuristic only.
    Off,
    /// Exact search only (whatever the size; limits still apply).
    Only,
}

/// Options of [`solve`].
#[derive(Clone)]
pub struct Options {
    /// Primary objective.
    pub objective: Objective,
    /// Weights of the cost terms.
    pub weights: Weights,
    /// Seed of the neighbourhood choices: same seed and iteration count, same placement.
    pub seed: u64,
    /// Stop the improvement phase when this says so.
    pub deadline: Option<Arc<dyn Deadline>>,
    /// Stop after this many neighbourhoods (deterministic, unlike the deadline).
    pub max_iterations: Option<u64>,
    /// Exact search policy.
    pub exact: ExactMode,
    /// Largest instance (items) solved exactly in [`ExactMode::Auto`].
    pub exact_max_items: usize,
    /// Largest instance (leaves) solved exactly in [`ExactMode::Auto`].
    pub exact_max_leaves: usize,
    /// Node limit of one exact search.
    pub exact_node_limit: u64,
    /// Told when the heuristic improves its placement: the weighted cost and, when packing,
    /// the host lower bound times the objective weight.
    pub progress: Option<Arc<dyn Progress>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            objective: Objective::Pack,
            weights: Weights::default(),
            seed: 0,
            deadline: None,
            max_iterations: Some(2_000),
            exact: ExactMode::Auto,
            exact_max_items: 16,
            exact_max_leaves: 64,
            exact_node_limit: 2_000_000,
            progress: None,
        }
    }
}

/// Whether a placement was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every item placed, every hard policy satisfied (the checker agrees).
    Placed,
    /// Proven: no placement satisfies the hard policies.
    Infeasible,
    /// No valid placement found within the limits (not a proof).
    Unsolved,
}

impl Status {
    /// `placed`, `infeasible` or `unsolved`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Placed => "placed",
            Status::Infeasible => "infeasible",
            Status::Unsolved => "unsolved",
        }
    }
}

/// Counters of one solve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Items placed by the greedy construction.
    pub greedy_placed: usize,
    /// Neighbourhoods tried.
    pub iterations: u64,
    /// Neighbourhoods that improved the cost.
    pub improvements: u64,
    /// Neighbourhoods repaired by the exact search.
    pub exact_repairs: u64,
    /// Search nodes of every exact search.
    pub exact_nodes: u64,
    /// Hosts used after the greedy construction.
    pub greedy_hosts: usize,
    /// Lower bound on hosts ([`Instance::hosts_lower_bound`]); `None` when the demand
    /// exceeds every leaf together (then there is no placement).
    pub lower_bound: Option<usize>,
}

/// A solve's answer.
#[derive(Clone, Debug)]
pub struct Solution {
    /// Outcome.
    pub status: Status,
    /// Proven optimal for the weighted cost: the exact search completed, or the cost is
    /// the lower bound (packing: hosts equal to the host bound, nothing else charged).
    pub optimal: bool,
    /// Leaf of each item (`None` = unplaced).
    pub assignment: Vec<Option<LeafId>>,
    /// The independent checker's verdict and the cost terms.
    pub report: Report,
    /// Counters.
    pub stats: Stats,
    /// Why not everything is placed (`None` when placed): the proof when infeasible, and
    /// each unplaced item's triage.
    pub explanation: Option<Explanation>,
}

/// Greedy construction only (see the crate docs): the assignment before any search.
#[must_use]
pub fn greedy(inst: &Instance, objective: Objective, weights: Weights) -> Vec<Option<LeafId>> {
    let mut s = Search::new(inst, objective, weights, 0);
    s.construct();
    s.assignment()
}

/// Places the instance: counting proofs of infeasibility first, then the heuristic (greedy
/// and LNS) and, for small instances, exact search. A placement whose cost is the lower
/// bound is optimal without more search.
#[must_use]
pub fn solve(inst: &Instance, opts: &Options) -> Solution {
    let small =
        inst.items.len() <= opts.exact_max_items && inst.topo.leaf_count() <= opts.exact_max_leaves;
    let mut stats = Stats {
        lower_bound: inst.hosts_lower_bound(),
        ..Stats::default()
    };
    let proof = explain::counting(inst);
    let lower_bound = stats.lower_bound;
    let at_bound = |r: &Report| {
        opts.objective == Objective::Pack
            && r.is_valid()
            && lower_bound
                .is_some_and(|lb| (r.cost.total - opts.weights.objective * lb as f64).abs() <= 1e-9)
    };
    let mut best: Option<Vec<Option<LeafId>>> = None;
    let mut bound_met = false;
    if opts.exact != ExactMode::Only || !proof.is_empty() {
        let mut s = Search::new(inst, opts.objective, opts.weights, opts.seed);
        s.construct();
        stats.greedy_placed = s.st.placed;
        stats.greedy_hosts = s.st.active;
        s.report(&opts.progress, stats.lower_bound);
        bound_met = at_bound(&check(inst, &s.assignment(), opts.objective, opts.weights));
        // Proven infeasible: the construction shows how far it gets, nothing to improve.
        if proof.is_empty() && !bound_met {
            // Small instances keep most of the budget for the exact search.
            let mut lns = opts.clone();
            if opts.exact == ExactMode::Auto && small {
                lns.max_iterations = Some(opts.max_iterations.unwrap_or(200).min(200));
            }
            s.improve(&lns, &mut stats);
        }
        best = Some(s.assignment());
        bound_met = bound_met
            || best
                .as_ref()
                .is_some_and(|b| at_bound(&check(inst, b, opts.objective, opts.weights)));
    }
    let mut optimal = false;
    let mut conflict: Option<Vec<String>> = None;
    if proof.is_empty()
        && !bound_met
        && (opts.exact == ExactMode::Only || (opts.exact == ExactMode::Auto && small))
    {
        let all: Vec<u32> = (0..inst.topo.leaf_count() as u32).collect();
        let none = vec![None; inst.items.len()];
        let scope = Scope {
            items: (0..inst.items.len() as u32).collect(),
            cands: inst.items.iter().map(|_| all.clone()).collect(),
            fixed: &none,
        };
        let p = encode(inst, &scope, opts.objective, opts.weights);
        let so = SolveOptions {
            node_limit: Some(opts.exact_node_limit),
            deadline: opts.deadline.clone(),
            explain_checks: 64,
            ..SolveOptions::default()
        };
        match p.solve(&so) {
            Ok(Outcome::Solved {
                solutions,
                optimal: opt,
                stats: st,
                ..
            }) => {
                stats.exact_nodes += st.nodes;
                if let Some(sol) = solutions.first() {
                    let a: Vec<Option<LeafId>> = sol
                        .values
                        .iter()
                        .take(inst.items.len())
                        .map(|v| Some(LeafId(v.0)))
                        .collect();
                    let r = check(inst, &a, opts.objective, opts.weights);
                    let better = match &best {
                        Some(b) => {
                            let rb = check(inst, b, opts.objective, opts.weights);
                            !rb.is_valid() || (r.is_valid() && r.cost.total <= rb.cost.total + 1e-9)
                        }
                        None => true,
                    };
                    if r.is_valid() && better {
                        best = Some(a);
                    }
                    optimal = opt && r.is_valid();
                }
            }
            Ok(Outcome::Infeasible {
                stats: st,
                explanation,
            }) => {
                stats.exact_nodes += st.nodes;
                conflict = Some(
                    explanation
                        .conflict
                        .iter()
                        .map(|&c| p.constraint_name(c).to_owned())
                        .collect(),
                );
            }
            Ok(Outcome::Stopped { stats: st, .. }) => stats.exact_nodes += st.nodes,
            // An encoding the solver rejects is a bug of ours; the heuristic answer stands.
            Err(_) => {}
        }
    }
    let assignment = best.unwrap_or_else(|| vec![None; inst.items.len()]);
    let report = check(inst, &assignment, opts.objective, opts.weights);
    let (status, explanation) = if report.is_valid() {
        (Status::Placed, None)
    } else {
        let triage = explain::triage(inst, &assignment);
        if !proof.is_empty() {
            let e = Explanation {
                proven: true,
                reasons: proof,
                triage,
            };
            (Status::Infeasible, Some(e))
        } else if let Some(names) = conflict {
            let e = Explanation {
                proven: true,
                reasons: explain::conflict(inst, &names),
                triage,
            };
            (Status::Infeasible, Some(e))
        } else {
            let e = Explanation {
                proven: false,
                reasons: Vec::new(),
                triage,
            };
            (Status::Unsolved, Some(e))
        }
    };
    let optimal = status == Status::Placed && (optimal || at_bound(&report));
    Solution {
        status,
        optimal,
        assignment,
        report,
        stats,
        explanation,
    }
}
