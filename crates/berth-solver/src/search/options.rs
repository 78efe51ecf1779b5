//! What a solve is given and reports: its options, the deadline and progress it hears, its
//! counters and solutions.

use std::sync::Arc;

use crate::{Value, VarId};

/// An injected deadline: the only way the core learns about time.
pub trait Deadline: Send + Sync {
    /// True once the search must stop.
    fn expired(&self) -> bool;

    /// Time left, when known: steps that cannot check `expired` as they go (the LP bound)
    /// are given a share of it. `None` (the default) makes them run only within their own
    /// limits.
    fn remaining(&self) -> Option<std::time::Duration> {
        None
    }
}

impl Deadline for std::time::Instant {
    fn expired(&self) -> bool {
        std::time::Instant::now() >= *self
    }

    fn remaining(&self) -> Option<std::time::Duration> {
        Some(self.saturating_duration_since(std::time::Instant::now()))
    }
}

/// Told each time the search finds a better plan (a progress display, a log).
pub trait Progress: Send + Sync {
    /// `best`: the new best plan's score; `bound`: a score no plan beats (a lower bound when
    /// minimizing, an upper bound when maximizing), when one is known.
    fn improved(&self, best: f64, bound: Option<f64>);

    /// The proven bound moved closer to the optimum (a pass of the search below a target
    /// completed) without a better plan.
    fn bound_raised(&self, bound: f64) {
        let _ = bound;
    }
}

/// Why a search stopped before completing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The node limit was reached.
    NodeLimit,
    /// The deadline expired.
    Deadline,
    /// [`SolveOptions::stop_at_first`] was set and a plan was found.
    FirstPlan,
}

/// Counters of one solve (all searches, including explanation checks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Search nodes visited.
    pub nodes: u64,
    /// Nodes where propagation failed or the bound pruned.
    pub fails: u64,
    /// Complete assignments reached.
    pub leaves: u64,
    /// Complete assignments the checker rejected (a propagator weaker than its `violation`).
    pub rejected: u64,
    /// Constraint hook calls.
    pub propagations: u64,
    /// Values removed by propagation.
    pub removals: u64,
    /// Deepest decision level.
    pub max_depth: u32,
    /// Feasibility checks run to explain infeasibility.
    pub explain_checks: u32,
    /// LP bounds solved (see [`SolveOptions::lp_min_values`]) whose multipliers the search
    /// used.
    pub lp_bounds: u32,
    /// Completed or cut passes of the search below a target under the incumbent (with the
    /// LP bound: each raises the proven bound or finds the optimum).
    pub deepen_passes: u32,
    /// Subtrees one thread of the search gave another that waited (see
    /// [`SolveOptions::threads`]).
    pub subtrees_given: u64,
    /// Nodes not searched because a subtree already searched left the same problem and
    /// proved it could not beat the threshold (see [`Constraint::residual`]).
    ///
    /// [`Constraint::residual`]: crate::Constraint::residual
    pub remembered: u64,
    /// Set when a limit stopped the search.
    pub stopped: Option<StopReason>,
}

impl Stats {
    pub(crate) fn add(&mut self, o: &Stats) {
        self.nodes += o.nodes;
        self.fails += o.fails;
        self.leaves += o.leaves;
        self.rejected += o.rejected;
        self.propagations += o.propagations;
        self.removals += o.removals;
        self.max_depth = self.max_depth.max(o.max_depth);
        self.explain_checks += o.explain_checks;
        self.lp_bounds += o.lp_bounds;
        self.deepen_passes += o.deepen_passes;
        self.subtrees_given += o.subtrees_given;
        self.remembered += o.remembered;
        self.stopped = self.stopped.or(o.stopped);
    }
}

/// HAS `unique`: a value used by a variable in one solution is excluded for that variable
/// from the next ones (solutions are then found one after another, each optimal given the
/// exclusions).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Unique {
    /// Plain k best distinct assignments.
    #[default]
    Off,
    /// Every variable is unique.
    All,
    /// These variables are unique.
    Vars(Vec<VarId>),
}

/// Options of [`Problem::solve`].
///
/// [`Problem::solve`]: crate::Problem::solve
#[derive(Clone)]
pub struct SolveOptions {
    /// How many solutions (k best, ranked); at least 1.
    pub solutions: usize,
    /// HAS `unique` semantics.
    pub unique: Unique,
    /// Stop after this many search nodes, all threads together (deterministic, unlike a
    /// deadline, on any number of threads: see `threads`).
    pub node_limit: Option<u64>,
    /// Stop when this says so (checked every 64 nodes).
    pub deadline: Option<Arc<dyn Deadline>>,
    /// Stop at the first plan (a feasible plan fast; not proven optimal).
    pub stop_at_first: bool,
    /// Node limit of each feasibility check while explaining infeasibility.
    pub explain_node_limit: u64,
    /// Most feasibility checks while explaining infeasibility.
    pub explain_checks: u32,
    /// Told when the main search improves its best plan.
    pub progress: Option<Arc<dyn Progress>>,
    /// Threads of the main search (0: one per core). With more than one, and when one optimum
    /// is wanted (`solutions == 1`, no `unique`, not `stop_at_first`), they share the search
    /// tree: each searches a subtree, prunes at the best plan any of them knows, and gives
    /// its untried branches to a thread that waits; the second thread runs neighbourhood
    /// rounds around the best plan first, while they improve it. A proven optimum is the same plan
    /// whatever the count (see [`Problem::solve`]), unless finding the first optimal plan in
    /// search order again takes more nodes than the proof did; a search a deadline cuts may
    /// end on another plan from run to run. With a `node_limit` they run in lock step: each
    /// searches 256 of its own nodes, then all meet, and only at a meeting do plans pass
    /// and waiting threads get subtrees, so the outcome (plans and counters) is the same run
    /// after run for a given count.
    ///
    /// [`Problem::solve`]: crate::Problem::solve
    pub threads: usize,
    /// Nodes each search from the root (a deepening pass, the search below the incumbent)
    /// runs on one thread before the others join: one settled within them does not pay
    /// their start (0: from the root).
    pub helpers_after: u64,
    /// Seed of the large-neighbourhood rounds' random choices (same seed, same rounds).
    pub seed: u64,
    /// The LP bound (see `lp.rs`) on problems with at least this many values left after root
    /// propagation; `None`: never. It costs one LP solve at the root and pays on large problems
    /// whose pair rules and capacities the other bounds miss.
    pub lp_min_values: Option<u64>,
    /// Longest LP solve; with a deadline that knows its remaining time, at most an eighth
    /// of that.
    pub lp_time: std::time::Duration,
    /// Remember the subtrees searched to their end: a node that leaves the same problem as
    /// one of them, with a decided part too costly to beat the threshold there, is not
    /// searched again. Applies where the objective sums unary costs, no soft constraint
    /// counts, and every hard constraint describes its state (see
    /// [`Constraint::residual`]); on the homing benchmark's 60×800 to 100×1000 instances it
    /// takes a quarter to a half of the time (h100x1000-s1 on two threads: 263 000 nodes and
    /// 6.8 s to 19 000 and 1.7 s). Off only to compare.
    ///
    /// [`Constraint::residual`]: crate::Constraint::residual
    pub remember: bool,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            solutions: 1,
            unique: Unique::Off,
            node_limit: None,
            deadline: None,
            stop_at_first: false,
            explain_node_limit: 10_000,
            explain_checks: 200,
            progress: None,
            threads: 1,
            helpers_after: FIRST_GAP,
            seed: 0,
            lp_min_values: Some(LP_MIN_VALUES),
            lp_time: std::time::Duration::from_secs(10),
            remember: true,
        }
    }
}

impl std::fmt::Debug for SolveOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SolveOptions")
            .field("solutions", &self.solutions)
            .field("unique", &self.unique)
            .field("node_limit", &self.node_limit)
            .field("deadline", &self.deadline.is_some())
            .field("stop_at_first", &self.stop_at_first)
            .field("explain_node_limit", &self.explain_node_limit)
            .field("explain_checks", &self.explain_checks)
            .field("progress", &self.progress.is_some())
            .field("threads", &self.threads)
            .field("helpers_after", &self.helpers_after)
            .field("seed", &self.seed)
            .field("lp_min_values", &self.lp_min_values)
            .field("lp_time", &self.lp_time)
            .finish()
    }
}

/// Most [`SolveOptions::threads`]: each runs its own copy of the search state.
pub const MAX_THREADS: usize = 256;

/// Default [`SolveOptions::lp_min_values`]. 30×300 homing instances (about 4 000 values) take
/// 12–23 ms with the LP; without it one seed in six took 18 s (3 million nodes). Below, the
/// LP costs a few milliseconds more than it saves (20×200: 5–20 ms without, 6–28 ms with).
pub const LP_MIN_VALUES: u64 = 3_000;

/// Main-search nodes before the first phase of neighbourhood rounds; each phase then runs
/// `round_share` times as many nodes of rounds as the main search ran since the previous
/// one, and the gap doubles.
pub(crate) const FIRST_GAP: u64 = 2_000;

/// One solution: a value per variable and what it scores.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    /// `values[var]` is the value of `var`.
    pub values: Vec<Value>,
    /// The objective expression.
    pub objective: f64,
    /// Sum of `weight * violation` over soft constraints.
    pub penalty: f64,
    /// What solutions are ranked by: `objective + penalty` (minimize) or `objective - penalty`
    /// (maximize).
    pub score: f64,
}
