//! Optimizer core: problem IR, constraint trait, branch and bound, triage.
//!
//! The solver knows nothing of YAML, geography, time, HTTP or storage. It sees:
//!
//! - **Variables** ([`VarId`]) with finite domains of values `0..n` ([`Value`]), optionally
//!   labelled for triage ([`Problem::add_var_labeled`]).
//! - **Constraints** behind one object-safe trait, [`Constraint`]: a scope, root propagation,
//!   incremental hooks ([`Constraint::on_assign`], [`Constraint::on_domain_change`]) working on a
//!   [`Ctx`] (domains plus the constraint's reversible integer cells), and
//!   [`Constraint::violation`] for the independent checker. Hard constraints prune; soft ones
//!   add `weight * violation` to the cost. Built-ins: [`Filter`], [`Pairwise`] (AC-3),
//!   [`AllDifferent`], [`AllDifferentGroup`], [`SameGroup`], [`AtMostCount`], [`Capacity`].
//! - **An objective** [`Expr`] (weighted sums, products, min/max, normalization of unary and
//!   pairwise cost terms) with admissible interval bounds on partial assignments.
//!
//! [`Problem::solve`] runs depth-first branch and bound: fail-first variable order (the
//! variable of the last decision whose propagation failed while it is open, else smallest
//! domain, then, with the LP bound, the largest regret in adjusted cost, else most
//! constraints), best-cost value order, two-way branching, propagation to a
//! fixpoint (unit propagation included), pruning by the bound of the k-th best solution
//! (rounded up to the next whole number when every plan's cost is whole).
//! When the objective is a sum, independent components (linked by terms and small-scope
//! constraints; large ones such as a shared capacity are relaxed) are solved alone first;
//! components whose parts clash are merged and re-solved. Their optima tighten the bound at
//! every node, and when the parts fit together they are the incumbent from the start.
//! Variables that must take distinct keys ([`Constraint::distinct_keys`], e.g.
//! [`AllDifferentGroup`]) have their unary cost terms bounded together by a min-cost matching
//! onto distinct keys, not each by its own cheapest value. When one optimum is wanted,
//! interchangeable variables (equal root domains and costs, every constraint
//! [`Constraint::symmetric`] in them) get their values ordered, so permutations of one plan
//! are searched once; component searches share one root propagation.
//! Hard [`Capacity`] constraints added with [`Problem::add_constraint`] are also relaxed into the
//! unary terms with Lagrange multipliers chosen at the root: a second bound that sees shared
//! capacity, reduced-cost filtering against the incumbent, and a capacity-aware value order
//! (not where the root bound already meets the incumbent, nor for a first plan only).
//! On problems of [`SolveOptions::lp_min_values`] values or more, the linear relaxation of
//! every hard constraint (each constraint's [`Constraint::linear`] rows, the capacities, the
//! distinct keys) is solved once at the root; its dual values are the multipliers of a
//! stronger Lagrangian bound, sound whatever the LP solver's accuracy. Once the domains are
//! small, nodes solve their own LP without their assigned variables, small ones on a dense
//! dual simplex (a node reuses its nearest ancestor's multipliers where they bound it as
//! well as there, unless few values are left). With the LP and one optimum wanted, the search
//! first runs passes that prune at a target just above the root bound, doubling the distance
//! each pass: a completed pass proves its target a bound, and a plan found in one is optimal.
//! They stop where a pass would cover more than a quarter of the gap to the incumbent.
//! Then the main search restarts from the root when the incumbent has closed a quarter of
//! the gap.
//! Where the objective sums unary costs, no soft constraint counts and every hard
//! constraint tells its state ([`Constraint::residual`]), a subtree searched to its end is
//! remembered by its residual problem (the domains of its unassigned variables and what the
//! constraints still ask of them): it proved that the rest costs at least the threshold
//! minus what was decided, so a node that leaves the same problem with a decided part too
//! dear for that is not searched again ([`SolveOptions::remember`]). Siblings that differ
//! in a variable the rest no longer depends on share one proof of the rest.
//! On larger problems a bounded first-plan dive seeds the search, so a plan exists early (a
//! plain dive, then a capacity-aware one if that finds nothing).
//! When one optimum is wanted, large-neighbourhood rounds (a few variables freed around the
//! incumbent, the rest fixed) improve the incumbent between phases of the search. With
//! several threads ([`SolveOptions::threads`]) they share the tree: a thread that waits is
//! given the untried branches of another's shallowest open node, and all prune at the best
//! plan any of them knows (under a node limit in lock step: they meet every few hundred
//! nodes each, and only then pass plans and subtrees). A proven optimum is then searched
//! again, on one thread, for the first optimal plan in search order, so the plan returned
//! is the same for any thread count and seed (that pass stops after as many nodes as the
//! search took, keeping the plan found).
//! [`SolveOptions::stop_at_first`] returns the first plan (one greedy dive when nothing fails).
//! It answers an [`Outcome`]: `Solved` (k best distinct solutions, `optimal` only when the
//! search completed), `Infeasible` (with an [`Explanation`]: a conflict set of constraints,
//! minimal when proven, and the triage) or `Stopped` (a limit hit before any solution).
//!
//! Invariants:
//! - Every returned solution satisfies every hard constraint's `violation == 0`: complete
//!   assignments are checked before they are accepted, whatever the propagators did.
//! - Same problem and options, same outcome: no hash iteration, no randomness but the seeded
//!   rounds', no clock except through the injected [`Deadline`]. With several threads, a
//!   search cut by a deadline may end on a different plan from run to run (the threads share
//!   plans as they find them); a proven optimum does not. Under a node limit the threads
//!   run in lock step (see [`SolveOptions::threads`]), so the outcome is the same.
//! - Undo is exact: domains, assignments and constraint cells are restored from one trail.
//!
//! ```
//! use berth_solver::{AllDifferentGroup, Expr, Outcome, Problem, Sense, SolveOptions, Value};
//! use std::sync::Arc;
//!
//! let mut p = Problem::new();
//! let sites: Arc<[String]> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
//! let web = p.add_var_labeled("web", sites.clone());
//! let db = p.add_var_labeled("db", sites);
//! // Sites a and b share zone 0; c is zone 1. Web and db must be in different zones.
//! let zone: Arc<[u32]> = Arc::from(vec![0, 0, 1]);
//! p.add_constraint("zone different", AllDifferentGroup::new(vec![web, db], vec![zone.clone(), zone]));
//! let cost: Arc<[f64]> = Arc::from(vec![1.0, 2.0, 5.0]);
//! p.set_objective(Sense::Minimize, Expr::sum([(1.0, Expr::unary(web, cost.clone())), (1.0, Expr::unary(db, cost))]));
//!
//! let Ok(Outcome::Solved { solutions, optimal, .. }) = p.solve(&SolveOptions::default()) else {
//!     panic!("expected a plan");
//! };
//! assert!(optimal);
//! assert_eq!(solutions[0].score, 6.0);
//! assert_eq!(solutions[0].values, vec![Value(0), Value(2)]);
//! ```

mod builtin;
mod combine;
mod constraint;
mod decompose;
mod error;
mod explain;
mod expr;
mod ids;
mod keys;
mod lagrange;
mod lns;
mod lockstep;
mod lp;
mod matching;
mod memo;
mod problem;
mod search;
mod simplex;
mod solve;
mod state;
mod symmetry;

#[cfg(test)]
mod tests;

pub use builtin::{
    AllDifferent, AllDifferentGroup, AtMostCount, Capacity, Filter, Pairwise, SameGroup,
};
pub use constraint::{Assignment, Constraint, Ctx, Domains, Linear};
pub use error::SolveError;
pub use explain::{Explanation, Triage, VarTriage};
pub use expr::{Expr, PairFn, Sense};
pub use ids::{ConstraintId, Value, VarId};
pub use keys::{Keys, NO_KEY};
pub use problem::{Evaluation, Problem, Violation};
pub use search::{
    Deadline, MAX_THREADS, Progress, Solution, SolveOptions, Stats, StopReason, Unique,
};
pub use solve::Outcome;
pub use state::{Conflict, DomainIter};
