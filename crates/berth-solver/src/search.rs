//! Depth-first branch and bound with propagation, k-best solutions and limits.

use std::ops::Range;
use std::sync::Arc;

use crate::decompose::Components;
use crate::expr::Compiled;
use crate::lagrange::{self, Lagrange};
use crate::lns::Neighbourhoods;
use crate::lockstep::{Lockstep, Post};
use crate::matching::{KeyGroup, group_lb, key_groups};
use crate::memo::Memo;
use crate::state::{Event, State};
use crate::{Assignment, Conflict, Constraint, ConstraintId, Ctx, Problem, Value, VarId};

/// Reason recorded for removals made by the search itself (refutations, `unique` exclusions).
pub(crate) const SEARCH: ConstraintId = ConstraintId(u32::MAX);

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

/// First target of [`Engine::deepen`] above the root bound, relative to it.
const DEEPEN_STEP: f64 = 1e-4;
/// [`Engine::deepen`] stops once a pass would cover more than this share of the gap between
/// the proven floor and the incumbent: such a pass costs about as much as the search below
/// the incumbent, which finds better plans as it goes (60×800 seed 5, one thread: the optimum
/// found at 3.3 s instead of 21 s and proven at 29 s instead of 47 s; the other seeds of
/// 30×300 to 60×800 took the same nodes, but for 8 more on one, and 100×1000 ended at the
/// same plans in 20 s).
const DEEPEN_SHARE: f64 = 0.25;
/// Most passes of [`Engine::deepen`] while no plan is known.
const BLIND_PASSES: u32 = 12;

/// Fewest nodes the canonical pass may take (see [`Engine::canonical`]), on problems of up to
/// 100 000 values left at the root.
const CANONICAL_MIN_NODES: u64 = 10_000;
/// The same floor as work (nodes × values left) on larger problems, whose nodes cost more:
/// 1000×5000 in groups of 5 spent 11 s on 10 000 canonical nodes after a proof in 1 s.
const CANONICAL_MIN_WORK: u64 = 1_000_000_000;

/// Most restarts of the main search (see [`Engine::search`]).
const RESTARTS: u32 = 16;

/// Node LPs run once the domains hold at most this many values in all (one thread, six
/// instances of 60×800 to 100×1000: at 2 000 as many nodes or fewer, no faster; at 600 two
/// of them unproven in 30 s).
const NODE_LP_VALUES: u64 = 1_000;
/// Deepest node whose domains the node LP rows are built on (the nodes below reuse them).
const NODE_LP_BUILD_DEPTH: u32 = 2;
/// How far above a whole number a bound must be to rule it out, relative to the cost: far
/// above the bounds' rounding errors, far below 1.
const WHOLE_SLACK: f64 = 1e-6;
/// Longest node LP solve. They take milliseconds at that size; the limit is far above, so a
/// loaded machine never cuts one and the search stays the same run after run.
const NODE_LP_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// Most [`SolveOptions::threads`]: each runs its own copy of the search state.
pub const MAX_THREADS: usize = 256;

/// Default [`SolveOptions::lp_min_values`]. 30×300 homing instances (about 4 000 values) take
/// 12–23 ms with the LP; without it one seed in six took 18 s (3 million nodes). Below, the
/// LP costs a few milliseconds more than it saves (20×200: 5–20 ms without, 6–28 ms with).
pub const LP_MIN_VALUES: u64 = 3_000;

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

/// A found solution with its internal (minimized) cost and discovery order.
pub(crate) struct Found {
    pub(crate) cost: f64,
    seq: u64,
    pub(crate) solution: Solution,
}

/// Settings of one search run.
#[derive(Clone, Copy)]
pub(crate) struct RunConfig<'a> {
    pub(crate) active: &'a [bool],
    pub(crate) with_objective: bool,
    /// Count soft penalties.
    pub(crate) soft: bool,
    /// Branch on these variables only (a component's search).
    pub(crate) vars: Option<&'a [bool]>,
    /// Count these root terms only (a component's search).
    pub(crate) terms: Option<&'a [usize]>,
    /// Component optima to tighten the bound.
    pub(crate) comps: Option<&'a Components>,
    pub(crate) first_only: bool,
    pub(crate) k: usize,
    pub(crate) node_limit: Option<u64>,
    pub(crate) deadline: Option<&'a dyn Deadline>,
    /// Remember refuted subtrees where that is sound (see `memo.rs`).
    pub(crate) remember: bool,
}

impl<'a> RunConfig<'a> {
    /// A search of the whole problem under `active`: objective and soft penalties counted,
    /// one solution, every plan wanted, no limit.
    pub(crate) fn whole(active: &'a [bool]) -> RunConfig<'a> {
        RunConfig {
            active,
            with_objective: true,
            soft: true,
            vars: None,
            terms: None,
            comps: None,
            first_only: false,
            k: 1,
            node_limit: None,
            deadline: None,
            remember: true,
        }
    }
}

/// One search over one problem.
pub(crate) struct Engine<'p> {
    p: &'p Problem,
    obj: &'p Compiled,
    sign: f64,
    cons: Vec<&'p dyn Constraint>,
    weights: Vec<Option<f64>>,
    active: Vec<u32>,
    watch: Vec<Vec<u32>>,
    dwatch: Vec<Vec<u32>>,
    swatch: Vec<Vec<u32>>,
    ranges: Vec<Range<usize>>,
    soft_cell: Vec<usize>,
    penalty_cell: usize,
    obj_base: usize,
    degree: Vec<u32>,
    pub(crate) st: State,
    root: bool,
    with_objective: bool,
    /// Every plan costs a whole number (see [`Compiled::integral`]), so bounds round up.
    integral: bool,
    first_only: bool,
    k: usize,
    pub(crate) found: Vec<Found>,
    seq: u64,
    pub(crate) stats: Stats,
    node_limit: Option<u64>,
    deadline: Option<&'p dyn Deadline>,
    vars: Option<&'p [bool]>,
    terms: Option<&'p [usize]>,
    comps: Option<&'p Components>,
    seeded: bool,
    /// Matching bounds over distinct-key groups, and each root term's group.
    groups: Vec<KeyGroup>,
    term_group: Vec<u32>,
    /// Per group: its last matching bound (see [`Engine::term_cost`]).
    group_memo: Vec<GroupMemo>,
    /// Classes of interchangeable variables ordered by value, and each variable's
    /// `(class, position)` (`u32::MAX` = none).
    sym_classes: Vec<Vec<u32>>,
    sym: Vec<(u32, u32)>,
    /// Per class, the rank of each value (its position in the value order).
    sym_rank: Vec<Vec<u32>>,
    /// The capacities relaxed into the unary terms (see `lagrange.rs`), once set up.
    lag: Option<Lagrange>,
    /// LP bounds at the nodes once the domains are small (after the root LP paid): the rows
    /// of the last build, reused while they cover the node.
    node_lp: Option<Arc<crate::lp::Relaxation>>,
    node_lp_on: bool,
    /// Cuts of the root LP, valid everywhere: the node LPs add them to their rows.
    cuts: Arc<Vec<crate::Linear>>,
    /// Last-conflict branching: the variable of a decision whose propagation failed, branched
    /// on first while open, and kept (no other recorded) until a decision on it leads to a
    /// node that does not fail (see `Engine::select_var`).
    last_conflict: Option<u32>,
    /// Multipliers of the node LPs solved on the path to this node, by depth.
    node_duals: Vec<(u32, crate::lp::NodeDual)>,
    /// The main search unwinds to the root once the incumbent costs less (see
    /// [`Engine::search`]).
    restart_below: f64,
    /// Told of each new best plan, with [`Engine::proven`].
    progress: Option<&'p dyn Progress>,
    /// A proven lower bound of the minimized cost (the root's, raised by [`Engine::deepen`]);
    /// set by [`Engine::watch`].
    pub(crate) proven: f64,
    /// The threshold while fewer than `k` plans are known (a neighbourhood round's
    /// incumbent, the canonical pass's optimum).
    cap: f64,
    /// A pass of [`Engine::deepen`] prunes at this cost too, but keeps the plans above it.
    target: f64,
    /// How this engine was configured (to build the neighbourhood rounds' engine alike).
    cfg: RunConfig<'p>,
    /// Large-neighbourhood rounds interleaved with this search (see `lns.rs`).
    improver: Option<Box<Improver<'p>>>,
    /// The incumbent shared with the threads of the search (see [`Engine::dfs_top`]).
    shared: Option<&'p Shared>,
    /// Threads that search the subtrees of [`Engine::search`] (see [`Engine::dfs_top`]).
    workers: usize,
    /// Nodes each search from the root runs on this thread alone before the others join.
    alone: u64,
    /// While threads share the tree: the subtrees to search, the decisions from the root
    /// to the current node, and its ancestors' branches (see [`Engine::give`]).
    pool: Option<Arc<Pool>>,
    path: Vec<Step>,
    levels: Vec<Level>,
    /// With a node limit the threads share the tree in lock step instead (see
    /// [`Engine::lockstep_top`]): the meeting point and this thread's number, until a
    /// meeting ends the search; this thread's node count at the last meeting.
    lock: Option<(Arc<Meetings>, usize)>,
    met_at: u64,
    /// Residual problems refuted by subtrees searched to their end (see `memo.rs`).
    memo: Option<Memo>,
}

/// The lock-step meeting point of a search's threads (see `lockstep.rs`); a subtree
/// promised but not found (never, as the giver counted its own) is handed over as `None`.
type Meetings = Lockstep<Option<Vec<Step>>, StopReason>;

/// Subtrees with fewer nodes below their root are not remembered: keying one costs about
/// what searching it does (60×800 seeds 5 and 6: about as many nodes from 1 node as from 2),
/// while remembering only those with 8 nodes or more took 1.6 times the nodes on seed 6.
const REMEMBER_NODES: u64 = 2;

/// Nodes each thread searches between two meetings of a lock-step search: a meeting costs
/// a few microseconds, a node tens.
const MEET_EVERY: u64 = 256;

/// What a meeting tells a thread (see [`Engine::meet`]).
enum Met {
    /// Go on as before.
    On,
    /// Search this subtree.
    Job(Vec<Step>),
    /// The search is over.
    Over,
}

/// A group's matching bound and the state it was computed on: the bound depends only on the
/// members' domains, and a bound check comes many times per node (1000×5000 groups of 5:
/// 200 groups, few touched per node).
#[derive(Clone, Default)]
struct GroupMemo {
    /// [`State::id`] of the state it was computed on (0: none).
    state: u64,
    /// The members' [`State::stamp`]s then.
    stamps: Vec<u64>,
    lb: f64,
}

/// A branch on the current path: `x = v`, tried at `path[at]` (see [`Engine::give`]).
struct Level {
    at: usize,
    x: u32,
    v: u32,
    /// `x` had other values left when `v` was tried.
    open: bool,
    /// Another thread took the untried values.
    given: bool,
}

/// The subtrees threads share, as paths from the root, and how many threads wait for one.
pub(crate) struct Pool {
    jobs: std::sync::Mutex<Jobs>,
    /// [`Jobs::want`] as of the last change, read without the lock.
    want: std::sync::atomic::AtomicIsize,
    threads: usize,
}

struct Jobs {
    queue: std::collections::VecDeque<Vec<Step>>,
    /// Threads waiting for a subtree.
    idle: usize,
}

impl Jobs {
    /// Threads waiting that no queued subtree will serve.
    fn want(&self) -> isize {
        self.idle as isize - self.queue.len() as isize
    }
}

impl Pool {
    /// The whole tree as one subtree, every thread but `busy` of them waiting.
    fn new(threads: usize, busy: usize) -> Pool {
        let jobs = Jobs {
            queue: std::iter::once(Vec::new()).collect(),
            idle: threads.saturating_sub(busy),
        };
        Pool {
            want: std::sync::atomic::AtomicIsize::new(jobs.want()),
            jobs: std::sync::Mutex::new(jobs),
            threads,
        }
    }

    /// Every thread but one waits and nothing is queued: the search ends once that one
    /// asks for work too.
    fn all_wait_but_one(&self) -> bool {
        self.want.load(std::sync::atomic::Ordering::Relaxed) + 1 >= self.threads as isize
    }

    fn hungry(&self) -> bool {
        self.want.load(std::sync::atomic::Ordering::Relaxed) > 0
    }

    fn give(&self, job: Vec<Step>) {
        if let Ok(mut j) = self.jobs.lock() {
            j.queue.push_back(job);
            self.publish(&j);
        }
    }

    /// A subtree, none yet, or the end (every thread waits and none is queued). `idle` is
    /// the caller's state, kept in step with the count.
    fn take(&self, idle: &mut bool) -> Take {
        let Ok(mut j) = self.jobs.lock() else {
            return Take::End;
        };
        let job = j.queue.pop_front();
        // The caller counts as waiting exactly while it has no subtree.
        match (*idle, job.is_some()) {
            (true, true) => j.idle -= 1,
            (false, false) => j.idle += 1,
            _ => {}
        }
        *idle = job.is_none();
        self.publish(&j);
        match job {
            Some(job) => Take::Job(job),
            None if j.idle < self.threads => Take::Wait,
            None => Take::End,
        }
    }

    fn publish(&self, j: &Jobs) {
        self.want
            .store(j.want(), std::sync::atomic::Ordering::Relaxed);
    }
}

/// What [`Pool::take`] hands a thread.
enum Take {
    Job(Vec<Step>),
    Wait,
    End,
}

/// A decision on the path from the root to a subtree: `x = v`, or `x ≠ v` (an earlier
/// sibling refuted).
#[derive(Clone, Copy, Debug)]
enum Step {
    Assign(u32, u32),
    Remove(u32, u32),
}

/// Neighbourhood rounds run by the main search between its own nodes: an engine of their
/// own (from a copy of the root state), the neighbourhood choice and the schedule.
struct Improver<'p> {
    engine: Option<Engine<'p>>,
    root: State,
    nb: Neighbourhoods,
    /// The main search's node count at which the next phase starts, and the phase length.
    next_at: u64,
    gap: u64,
    /// The lower bound at the root (the main search's bound before any branching).
    root_lb: f64,
    /// Rounds run.
    rounds: u64,
    /// Rounds run beside a shared search (see [`Engine::run_beside`]): their nodes, those
    /// nodes when the last one improved the plan, and whether they went stale (they then
    /// run between the second thread's nodes).
    beside_nodes: u64,
    beside_gain: u64,
    beside_stale: bool,
}

/// Round nodes per main-search node in a phase, from the gap between the incumbent and the
/// root bound (in percent, squared, from 1 to 64). At 1 the rounds get about a fifth of the
/// time (a round node costs a quarter of a main-search node): right while the gap is small
/// and the main search may prove (40×500: 0.25%). Past a few percent it will not prove in
/// reasonable time (60×800: 7%), and only the rounds improve the plan. The LP bound is so
/// much tighter that its gaps count four times: 0.07% on 60×800 and 0.15% on 40×500, which
/// it proves, but 2.3% on 100×1000, which it does not.
fn round_share(cost: f64, root_lb: f64, lp: bool) -> u64 {
    if !cost.is_finite() || !root_lb.is_finite() {
        return 1;
    }
    let scale = if lp { 4.0 } else { 1.0 };
    let pct = scale * 100.0 * (cost - root_lb).max(0.0) / cost.abs().max(1.0);
    (pct * pct).clamp(1.0, 64.0) as u64
}

/// Main-search nodes before the first phase of neighbourhood rounds; each phase then runs
/// `round_share` times as many nodes of rounds as the main search ran since the previous
/// one, and the gap doubles.
pub(crate) const FIRST_GAP: u64 = 2_000;
/// Values left at the root from which `early_rounds` runs: 60×800 has 21 000, 100×1000
/// 44 000; 40×500 (8 400) proves in under a second and is better off without.
const EARLY_MIN_VALUES: u64 = 15_000;
/// Node budget of one neighbourhood round: many short rounds beat fewer long ones on
/// 60×800 and 100×1000 (150 against 500: plans 0.07% and 0.3% cheaper on average at 10 s,
/// four seeds).
const ROUND_NODES: u64 = 150;
/// Round nodes in vain after which the rounds beside a shared search go back to running
/// between search nodes (see [`Engine::run_beside`]).
const STALE_BESIDE: u64 = 5_000;

/// The best plan known to every thread of one search.
pub(crate) struct Shared {
    best: std::sync::Mutex<Option<(f64, Vec<Value>)>>,
    /// The best cost's bits (`f64`), read without the lock.
    cost: std::sync::atomic::AtomicU64,
}

impl Shared {
    pub(crate) fn new() -> Shared {
        Shared {
            best: std::sync::Mutex::new(None),
            cost: std::sync::atomic::AtomicU64::new(f64::INFINITY.to_bits()),
        }
    }

    fn cost(&self) -> f64 {
        f64::from_bits(self.cost.load(std::sync::atomic::Ordering::Acquire))
    }

    /// Offers a plan; kept when it is cheaper than the shared one.
    fn offer(&self, cost: f64, values: &[Value]) {
        let Ok(mut best) = self.best.lock() else {
            return;
        };
        if best.as_ref().is_none_or(|b| cost < b.0) {
            *best = Some((cost, values.to_vec()));
            self.cost
                .store(cost.to_bits(), std::sync::atomic::Ordering::Release);
        }
    }

    fn get(&self) -> Option<(f64, Vec<Value>)> {
        self.best.lock().ok().and_then(|b| b.clone())
    }
}

impl<'p> Engine<'p> {
    pub(crate) fn new(p: &'p Problem, obj: &'p Compiled, cfg: &RunConfig<'p>) -> Engine<'p> {
        let n = p.var_count();
        let mut cons = Vec::new();
        let mut weights = Vec::new();
        let mut watch = vec![Vec::new(); n];
        let mut dwatch = vec![Vec::new(); n];
        let mut swatch = vec![Vec::new(); n];
        let mut degree = vec![0u32; n];
        let mut ranges = Vec::new();
        let mut soft_cell = Vec::new();
        let mut cells = Vec::new();
        let mut active = Vec::new();
        let universe = p.sizes();
        for (i, (c, w)) in p.entries().enumerate() {
            cons.push(c);
            weights.push(w);
            let start = cells.len();
            let is_active = w.is_none() && cfg.active.get(i).copied().unwrap_or(false);
            if is_active {
                cells.extend(c.initial_state(&universe));
                active.push(i as u32);
                for x in c.scope() {
                    if let Some(l) = watch.get_mut(x.index()) {
                        l.push(i as u32);
                        degree[x.index()] += 1;
                        if c.wants_domain_events() {
                            dwatch[x.index()].push(i as u32);
                        }
                    }
                }
            }
            ranges.push(start..cells.len());
            if w.is_some() && cfg.with_objective && cfg.soft {
                soft_cell.push(cells.len());
                cells.push(0f64.to_bits() as i64);
                for x in c.scope() {
                    if let Some(l) = swatch.get_mut(x.index()) {
                        l.push(i as u32);
                    }
                }
            } else {
                soft_cell.push(usize::MAX);
            }
        }
        let penalty_cell = cells.len();
        cells.push(0f64.to_bits() as i64);
        let obj_base = cells.len();
        cells.extend(&obj.cells);
        let (groups, term_group) = if cfg.with_objective {
            let set_of = term_sets(obj, cfg);
            key_groups(obj, p.sign(), &cons, &active, &set_of)
        } else {
            (Vec::new(), Vec::new())
        };
        let group_memo = vec![GroupMemo::default(); groups.len()];
        let memo = (cfg.remember
            && cfg.with_objective
            && cfg.k <= 1
            && !cfg.first_only
            && cfg.vars.is_none()
            && cfg.terms.is_none()
            && soft_cell.iter().all(|&c| c == usize::MAX))
        .then(|| Memo::new(obj, p.sign(), n))
        .flatten();
        Engine {
            p,
            obj,
            sign: p.sign(),
            cons,
            weights,
            active,
            watch,
            dwatch,
            swatch,
            ranges,
            soft_cell,
            penalty_cell,
            obj_base,
            degree,
            st: State::new(&p.sizes(), cells),
            root: true,
            with_objective: cfg.with_objective,
            integral: obj.integral() && (!cfg.soft || p.entries().all(|(_, w)| w.is_none())),
            first_only: cfg.first_only,
            k: cfg.k.max(1),
            found: Vec::new(),
            seq: 0,
            stats: Stats::default(),
            node_limit: cfg.node_limit,
            deadline: cfg.deadline,
            vars: cfg.vars,
            terms: cfg.terms,
            comps: cfg.comps,
            seeded: false,
            groups,
            group_memo,
            term_group,
            sym_classes: Vec::new(),
            sym: Vec::new(),
            sym_rank: Vec::new(),
            lag: None,
            node_lp: None,
            node_lp_on: false,
            cuts: Arc::default(),
            last_conflict: None,
            node_duals: Vec::new(),
            restart_below: f64::NEG_INFINITY,
            progress: None,
            proven: f64::NEG_INFINITY,
            cap: f64::INFINITY,
            target: f64::INFINITY,
            cfg: *cfg,
            improver: None,
            shared: None,
            workers: 1,
            alone: 0,
            pool: None,
            path: Vec::new(),
            levels: Vec::new(),
            lock: None,
            met_at: 0,
            memo,
        }
    }

    /// From now on (after root propagation and seeding), interleaves large-neighbourhood
    /// rounds around the incumbent with this search (one thread), the first phase after
    /// `first_gap` nodes. Only for the main search of one optimum.
    pub(crate) fn improve(&mut self, seed: u64, first_gap: u64) {
        let nb = self.neighbourhoods(seed);
        if nb.is_empty() || self.k != 1 || !self.with_objective {
            return;
        }
        let root_lb = self.lower_bound();
        self.improver = Some(Box::new(Improver {
            engine: None,
            root: self.st.clone(),
            nb,
            next_at: self.stats.nodes + first_gap,
            gap: first_gap.max(1),
            root_lb,
            rounds: 0,
            beside_nodes: 0,
            beside_gain: 0,
            beside_stale: false,
        }));
    }

    /// An engine for neighbourhood rounds: same configuration, this engine's root state and
    /// relaxation, no symmetry ordering (rounds only look for cheaper plans).
    pub(crate) fn round_engine(&self, root: State) -> Engine<'p> {
        let cfg = RunConfig {
            first_only: false,
            k: 1,
            node_limit: None,
            ..self.cfg
        };
        let mut e = Engine::new(self.p, self.obj, &cfg);
        e.resume(root);
        e.lag = self.lag.clone();
        e
    }

    /// Shares the incumbent with the other threads (see [`Engine::dfs_top`]).
    pub(crate) fn share(&mut self, shared: &'p Shared) {
        self.shared = Some(shared);
        if let Some(f) = self.found.first() {
            shared.offer(f.cost, &f.solution.values);
        }
    }

    /// One large-neighbourhood round on this root-propagated engine: every variable outside
    /// `free` fixed to its `incumbent` value, the others searched for a plan cheaper than
    /// `cost` within `budget` nodes. The best plan found, and whether the neighbourhood was
    /// searched to the end.
    fn round(
        &mut self,
        incumbent: &[Value],
        cost: f64,
        free: &[bool],
        budget: u64,
    ) -> (Option<(f64, Vec<Value>)>, bool) {
        let mark = self.st.mark();
        self.found.clear();
        self.cap = cost;
        self.stats.stopped = None;
        self.node_limit = Some(self.stats.nodes + budget);
        let mut ok = true;
        for (x, v) in incumbent.iter().enumerate() {
            if free.get(x) == Some(&true) {
                continue;
            }
            if self.st.assign(x as u32, v.0).is_err() || self.run_queue().is_err() {
                ok = false;
                break;
            }
        }
        if ok {
            self.dfs(0);
        }
        self.st.undo_to(mark);
        self.st.clear_events();
        let best = self
            .found
            .first()
            .map(|f| (f.cost, f.solution.values.clone()));
        (best, ok && self.stats.stopped.is_none())
    }

    /// A round on this round engine around `incumbent` (costing `cost`), in the next
    /// neighbourhood of `nb`, which hears how it went: the cheaper plan found, if any, and
    /// the nodes it ran.
    fn round_around(
        &mut self,
        nb: &mut Neighbourhoods,
        incumbent: &[Value],
        cost: f64,
    ) -> (Option<(f64, Vec<Value>)>, u64) {
        let free = nb.pick(incumbent);
        let before = self.stats.nodes;
        let (plan, completed) = self.round(incumbent, cost, &free, nb.budget(ROUND_NODES));
        nb.feedback(plan.is_some(), completed);
        (plan, self.stats.nodes - before)
    }

    /// Searches at most `nodes` nodes from the current (root) node. True when that settled
    /// the search (completed, or stopped by its own limits); otherwise the state is back at
    /// the root, with the plans found kept as incumbents.
    pub(crate) fn probe(&mut self, nodes: u64) -> bool {
        let limit = self.node_limit;
        let end = self.stats.nodes.saturating_add(nodes);
        let mark = self.st.mark();
        self.node_limit = Some(limit.map_or(end, |l| l.min(end)));
        self.dfs(0);
        self.node_limit = limit;
        if self.stats.stopped != Some(StopReason::NodeLimit)
            || limit.is_some_and(|l| self.stats.nodes >= l)
        {
            return true;
        }
        self.stats.stopped = None;
        self.st.undo_to(mark);
        self.st.clear_events();
        false
    }

    /// A phase of neighbourhood rounds, when the schedule says so.
    fn improve_phase(&mut self) {
        let Some(mut imp) = self.improver.take() else {
            return;
        };
        if self.stats.nodes < imp.next_at {
            self.improver = Some(imp);
            return;
        }
        let mut engine = self.engine_of(&mut imp);
        let share = self
            .found
            .first()
            .map_or(1, |f| round_share(f.cost, imp.root_lb, self.node_lp_on));
        imp.rounds += self.run_rounds(&mut engine, &mut imp.nb, imp.gap.saturating_mul(share));
        imp.gap = imp.gap.saturating_mul(2);
        imp.next_at = self.stats.nodes + imp.gap;
        imp.engine = Some(engine);
        self.improver = Some(imp);
    }

    /// Rounds around this search's incumbent on `engine` for about `nodes` nodes (counted
    /// against this search's node limit), each better plan seeded here. Returns the rounds run.
    fn run_rounds(&mut self, engine: &mut Engine<'p>, nb: &mut Neighbourhoods, nodes: u64) -> u64 {
        let end = engine.stats.nodes + nodes;
        let mut rounds = 0;
        while engine.stats.nodes < end {
            let Some((cost, inc)) = self
                .found
                .first()
                .map(|f| (f.cost, f.solution.values.clone()))
            else {
                break;
            };
            let (plan, ran) = engine.round_around(nb, &inc, cost);
            // Round nodes count against the node limit like the search's own.
            self.stats.nodes += ran;
            rounds += 1;
            if let Some((_, values)) = plan {
                self.seed(values);
            }
            if engine.stats.stopped == Some(StopReason::Deadline)
                || self.node_limit.is_some_and(|l| self.stats.nodes >= l)
            {
                break;
            }
        }
        rounds
    }

    /// At the root of a large problem (at least `EARLY_MIN_VALUES` values left), before the
    /// component searches on the Lagrangian costs (2-3 s on 100×1000): `nodes` nodes of
    /// rounds when the incumbent is far above the bound (`round_share` at least 4), so a
    /// short deadline still gets a good plan. True if it ran.
    pub(crate) fn early_rounds(&mut self, seed: u64, nodes: u64) -> bool {
        let Some(cost) = self.found.first().map(|f| f.cost) else {
            return false;
        };
        let values = self.st.values_left();
        if self.k != 1
            || !self.with_objective
            || values < EARLY_MIN_VALUES
            || round_share(cost, self.lower_bound(), self.node_lp_on) < 4
        {
            return false;
        }
        let mut nb = self.neighbourhoods(seed);
        if nb.is_empty() {
            return false;
        }
        let mut engine = self.round_engine(self.st.clone());
        self.run_rounds(&mut engine, &mut nb, nodes);
        true
    }

    /// Neighbourhoods around this engine's root, guided by the relaxation's adjusted costs
    /// when there is one (see [`Neighbourhoods::guide`]).
    fn neighbourhoods(&self, seed: u64) -> Neighbourhoods {
        let sizes: Vec<u32> = (0..self.st.vars() as u32)
            .map(|x| self.st.size(x))
            .collect();
        let mut nb = Neighbourhoods::new(self.p, self.obj, &sizes, seed);
        if let Some(lag) = &self.lag {
            nb.guide(|x| lag.order(x));
        }
        nb
    }

    /// Neighbourhood rounds run by this search so far.
    #[cfg(test)]
    pub(crate) fn improve_rounds(&self) -> u64 {
        self.improver.as_ref().map_or(0, |i| i.rounds)
    }

    /// Takes the shared incumbent when another thread improved it.
    fn pull_shared(&mut self) {
        let Some(sh) = self.shared else { return };
        if sh.cost() < self.incumbent_cost()
            && let Some((_, values)) = sh.get()
        {
            self.seed(values);
        }
    }

    /// After a completed search: searches again from `mark` (its root) for the first plan in
    /// search order that costs the optimum, so the plan returned does not depend on which
    /// thread or round found an optimum first. Keeps the plan found when a limit cuts it.
    pub(crate) fn canonical(&mut self, mark: usize) {
        let Some(best) = self.found.first() else {
            return;
        };
        if self.k != 1 || self.stats.stopped.is_some() || !best.cost.is_finite() {
            return;
        }
        let tol = 2e-9 * best.cost.abs().max(1.0);
        let keep = std::mem::take(&mut self.found);
        self.st.undo_to(mark);
        self.st.clear_events();
        // Rows built on this search's domains, or what it remembered, would make the pass
        // depend on its path (and the plan on the thread count).
        self.node_lp = None;
        if let Some(m) = &mut self.memo {
            m.forget();
        }
        self.cap = keep[0].cost + tol;
        let (first_only, progress) = (self.first_only, self.progress.take());
        self.first_only = true;
        self.improver = None;
        self.shared = None;
        self.seeded = false;
        let limit = self.node_limit;
        let min = CANONICAL_MIN_NODES.min(CANONICAL_MIN_WORK / self.st.values_left().max(1));
        let budget = self.stats.nodes.max(min);
        self.node_limit = Some(limit.unwrap_or(u64::MAX).min(self.stats.nodes + budget));
        self.dfs(0);
        self.node_limit = limit;
        self.first_only = first_only;
        self.progress = progress;
        if self.stats.stopped.is_some() || self.found.is_empty() {
            self.found = keep;
        }
        // The proof was complete: a cut canonical pass does not make it less so.
        self.stats.stopped = None;
    }

    /// After root propagation: orders the values of interchangeable variables (only sound
    /// when one optimum is wanted, not k distinct plans). Returns the number of classes.
    pub(crate) fn break_symmetry(&mut self) -> usize {
        let classes = self.find_classes();
        self.order_classes(&classes)
    }

    /// Classes of interchangeable variables at the current (root) node.
    pub(crate) fn find_classes(&self) -> Vec<Vec<u32>> {
        let hard: Vec<bool> = self.weights.iter().map(Option::is_none).collect();
        crate::symmetry::classes(&self.cons, &hard, self.obj, &self.st)
    }

    /// Orders the values of each class, restricted to the searched variables. Returns the
    /// number of classes kept.
    pub(crate) fn order_classes(&mut self, classes: &[Vec<u32>]) -> usize {
        self.sym_classes = classes
            .iter()
            .map(|c| {
                c.iter()
                    .copied()
                    .filter(|&x| self.vars.is_none_or(|m| m.get(x as usize) == Some(&true)))
                    .collect::<Vec<u32>>()
            })
            .filter(|c| c.len() > 1)
            .collect();
        self.sym = vec![(u32::MAX, 0); self.st.vars()];
        self.sym_rank = Vec::with_capacity(self.sym_classes.len());
        for (c, class) in self.sym_classes.iter().enumerate() {
            for (i, &x) in class.iter().enumerate() {
                self.sym[x as usize] = (c as u32, i as u32);
            }
            // Ranks follow the order values are tried in (members share it), so the first
            // dive is already canonical.
            let x = class[0];
            let n = self.st.universe(x) as usize;
            let order = if self.with_objective {
                self.obj.keys.get(x as usize).and_then(|k| k.order.clone())
            } else {
                None
            };
            let mut rank: Vec<u32> = (0..n as u32).collect();
            if let Some((o, rev)) = order {
                for (i, &v) in o.iter().enumerate() {
                    let r = if rev { n - 1 - i } else { i };
                    if let Some(slot) = rank.get_mut(v as usize) {
                        *slot = r as u32;
                    }
                }
            }
            self.sym_rank.push(rank);
        }
        self.sym_classes.len()
    }

    /// `x = v` in an ordered class: earlier members take values of rank at most `v`'s,
    /// later ones at least.
    fn order_class(&mut self, x: u32, v: u32) -> Result<(), Conflict> {
        let Some(&(c, pos)) = self.sym.get(x as usize) else {
            return Ok(());
        };
        let (Some(class), Some(rank)) = (
            self.sym_classes.get(c as usize),
            self.sym_rank.get(c as usize),
        ) else {
            return Ok(());
        };
        let r = |u: u32| rank.get(u as usize).copied().unwrap_or(u32::MAX);
        let rv = r(v);
        let pos = pos as usize;
        let later = class.get(pos + 1..).unwrap_or(&[]).iter();
        let earlier = class.get(..pos).unwrap_or(&[]).iter().rev();
        for (&y, after) in later.map(|y| (y, true)).chain(earlier.map(|y| (y, false))) {
            let bad = |u: u32| if after { r(u) < rv } else { r(u) > rv };
            if let Some(w) = self.st.value(y) {
                if bad(w.0) {
                    return Err(Conflict {
                        var: Some(VarId(y)),
                    });
                }
                continue;
            }
            let drop: Vec<u32> = self.st.values(y).map(|u| u.0).filter(|&u| bad(u)).collect();
            for u in drop {
                self.st.remove(y, u, SEARCH)?;
            }
        }
        Ok(())
    }

    /// Lower bound of root term `t`; a group's bound is carried by its lead term.
    fn term_cost(&mut self, root: &[(f64, usize)], t: usize) -> f64 {
        match self.term_group.get(t) {
            Some(&g) if g != u32::MAX => match self.groups.get(g as usize) {
                Some(grp) if grp.lead() == t => {
                    let memo = &mut self.group_memo[g as usize];
                    let st = &mut self.st;
                    if memo.state == st.id()
                        && memo
                            .stamps
                            .iter()
                            .copied()
                            .eq(grp.vars().map(|x| st.stamp(x)))
                    {
                        return memo.lb;
                    }
                    let lb = group_lb(grp, self.obj, st, self.obj_base);
                    memo.state = st.id();
                    memo.stamps.clear();
                    memo.stamps.extend(grp.vars().map(|x| st.stamp(x)));
                    memo.lb = lb;
                    lb
                }
                _ => 0.0,
            },
            _ => self
                .obj
                .term_lb(root[t].0, root[t].1, &mut self.st, self.obj_base),
        }
    }

    /// Root propagation, after removing `excluded` values (not attributed to constraints).
    pub(crate) fn root(
        &mut self,
        excluded: &[(VarId, Value)],
        record: bool,
    ) -> Result<(), Conflict> {
        self.root = true;
        if record {
            self.st.record = Some(Vec::new());
        }
        let r = self.root_inner(excluded);
        self.root = false;
        self.stats.removals = self.st.removals;
        r
    }

    /// Starts from a state after root propagation made by an engine of the same layout
    /// (same problem, active constraints and soft setting), instead of [`Engine::root`].
    pub(crate) fn resume(&mut self, st: State) {
        self.st = st;
        self.root = false;
        self.stats.removals = self.st.removals;
    }

    fn root_inner(&mut self, excluded: &[(VarId, Value)]) -> Result<(), Conflict> {
        for x in 0..self.st.vars() as u32 {
            if self.st.size(x) == 0 {
                return Err(Conflict {
                    var: Some(VarId(x)),
                });
            }
        }
        let rec = self.st.record.take();
        for &(x, v) in excluded {
            self.st.remove(x.0, v.0, SEARCH)?;
        }
        self.st.record = rec;
        for i in 0..self.active.len() {
            let c = self.active[i] as usize;
            self.stats.propagations += 1;
            let mut ctx = Ctx {
                st: &mut self.st,
                cid: ConstraintId(c as u32),
                cells: self.ranges[c].clone(),
                root: true,
            };
            if let Err(e) = self.cons[c].propagate(&mut ctx) {
                self.st.clear_events();
                return Err(e);
            }
        }
        self.run_queue()
    }

    fn run_queue(&mut self) -> Result<(), Conflict> {
        let r = self.run_queue_inner();
        if r.is_err() {
            self.st.clear_events();
        }
        r
    }

    fn run_queue_inner(&mut self) -> Result<(), Conflict> {
        while let Some(ev) = self.st.events.pop_front() {
            match ev {
                Event::Assigned(x) => {
                    let Some(val) = self.st.value(x) else {
                        continue;
                    };
                    for j in 0..self.watch[x as usize].len() {
                        let c = self.watch[x as usize][j] as usize;
                        self.stats.propagations += 1;
                        let mut ctx = Ctx {
                            st: &mut self.st,
                            cid: ConstraintId(c as u32),
                            cells: self.ranges[c].clone(),
                            root: self.root,
                        };
                        self.cons[c].on_assign(&mut ctx, VarId(x), val)?;
                    }
                    if !self.root && !self.sym.is_empty() {
                        self.order_class(x, val.0)?;
                    }
                    for j in 0..self.swatch[x as usize].len() {
                        let c = self.swatch[x as usize][j] as usize;
                        let w = self.weights[c].unwrap_or(0.0);
                        let v = w * self.cons[c].violation(&Assignment::new(&self.st.assigned));
                        let cell = self.soft_cell[c];
                        let old = f64::from_bits(self.st.cell(cell) as u64);
                        if v != old {
                            let total =
                                f64::from_bits(self.st.cell(self.penalty_cell) as u64) + v - old;
                            self.st.set_cell(cell, v.to_bits() as i64);
                            self.st.set_cell(self.penalty_cell, total.to_bits() as i64);
                        }
                    }
                }
                Event::Changed(x) => {
                    self.st.dequeued(x);
                    if self.st.value(x).is_some() {
                        continue;
                    }
                    for j in 0..self.dwatch[x as usize].len() {
                        let c = self.dwatch[x as usize][j] as usize;
                        self.stats.propagations += 1;
                        let mut ctx = Ctx {
                            st: &mut self.st,
                            cid: ConstraintId(c as u32),
                            cells: self.ranges[c].clone(),
                            root: self.root,
                        };
                        self.cons[c].on_domain_change(&mut ctx, VarId(x))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Admissible lower bound of the minimized cost at the current node.
    fn lower_bound(&mut self) -> f64 {
        if !self.with_objective {
            return f64::NEG_INFINITY;
        }
        let penalty = f64::from_bits(self.st.cell(self.penalty_cell) as u64);
        let obj = self.obj;
        let Some(root) = obj.root_terms() else {
            let (l, u) = obj.bounds(&mut self.st, self.obj_base);
            return if self.sign > 0.0 { l } else { -u } + penalty;
        };
        let mut lb = penalty;
        if let Some(comps) = self.comps {
            for &t in &comps.loose {
                lb += self.term_cost(root, t);
            }
            for c in &comps.list {
                let s: f64 = c.terms.iter().map(|&t| self.term_cost(root, t)).sum();
                lb += c.opt.map_or(s, |o| o.max(s));
            }
        } else if let Some(terms) = self.terms {
            for &t in terms {
                lb += self.term_cost(root, t);
            }
        } else if !self.groups.is_empty() {
            for t in 0..root.len() {
                lb += self.term_cost(root, t);
            }
        } else {
            let (l, u) = obj.bounds(&mut self.st, self.obj_base);
            lb += if self.sign > 0.0 { l } else { -u };
        }
        if self.lag.is_some() {
            lb = lb.max(penalty + self.lag_bound(root));
        }
        lb
    }

    /// After root propagation, in the main search: relaxes the hard capacities into the unary
    /// terms (multipliers chosen against the current incumbent), or with `lp` (its time
    /// limit) every hard constraint with the LP's multipliers, whichever bounds higher. True
    /// if it pays. Nothing where the bound already meets the incumbent: a relaxation could
    /// only confirm it, and it can cost more than the whole search (the `solve` bench's
    /// 100x1000: 0.33 s of great-circle distances for LP rows, in a search of 0.1 s; the
    /// `solver` bench's 100x1000: 38 ms of subgradient steps, against 10 ms).
    pub(crate) fn relax_capacity(&mut self, lp: Option<std::time::Duration>) -> bool {
        if !self.with_objective || self.vars.is_some() || self.terms.is_some() || self.pruned() {
            return false;
        }
        self.lag = lagrange::setup(self.p, self.obj, &self.st, &self.active, self.threshold());
        if let Some(time) = lp
            && let Some((l, cuts)) = crate::lp::relax(
                self.p,
                self.obj,
                &self.st,
                &self.active,
                self.found.first().map(|f| f.solution.values.as_slice()),
                time,
            )
        {
            let lp_bound = l.bound(&mut self.st);
            let better = match &self.lag {
                Some(sub) => lp_bound > sub.bound(&mut self.st),
                None => lp_bound.is_finite(),
            };
            if better {
                self.lag = Some(l);
                self.cuts = Arc::new(cuts);
                self.stats.lp_bounds += 1;
                self.node_lp_on = true;
            }
        }
        if let Some(l) = &mut self.lag {
            l.attach(&mut self.st);
        }
        self.lag.is_some()
    }

    /// Whether the relaxation in use is the LP's (see [`Engine::relax_capacity`]).
    pub(crate) fn lp_used(&self) -> bool {
        self.node_lp_on
    }

    /// The relaxation's adjusted costs as an objective (see [`Lagrange::adjusted_objective`]).
    pub(crate) fn relaxed_objective(&self) -> Option<crate::Expr> {
        self.lag.as_ref().map(|l| l.adjusted_objective(self.sign))
    }

    /// Groups of variables with the optima of their adjusted costs (see
    /// [`Lagrange::set_groups`]).
    pub(crate) fn relaxed_groups(&mut self, groups: Vec<(Vec<u32>, f64)>) {
        if let Some(l) = &mut self.lag {
            l.set_groups(groups);
        }
    }

    /// The Lagrangian bound plus the other root terms' own bounds.
    fn lag_bound(&mut self, root: &[(f64, usize)]) -> f64 {
        let Some(lag) = &self.lag else {
            return f64::NEG_INFINITY;
        };
        let mut lb = lag.bound(&mut self.st);
        for &t in &lag.others {
            lb += self
                .obj
                .term_lb(root[t].0, root[t].1, &mut self.st, self.obj_base);
        }
        lb
    }

    /// Reduced-cost filtering of the Lagrangian bound against the incumbent.
    fn lag_filter(&mut self) -> Result<(), Conflict> {
        let t = self.bound_limit();
        let Some(root) = self.obj.root_terms() else {
            return Ok(());
        };
        if self.lag.is_none() || t == f64::INFINITY {
            return Ok(());
        }
        let penalty = f64::from_bits(self.st.cell(self.penalty_cell) as u64);
        let total = penalty + self.lag_bound(root);
        let limit = t - 1e-9 * t.abs().max(1.0);
        let drop = match &self.lag {
            Some(lag) => lag.filter(&mut self.st, total, limit),
            None => Vec::new(),
        };
        if drop.is_empty() {
            return Ok(());
        }
        for (x, v) in drop {
            self.st.remove(x, v, SEARCH)?;
        }
        self.run_queue()
    }

    /// Once the domains are small: the LP bound of this node, which prunes it or filters its
    /// values by reduced cost (fresh multipliers, unlike the root's fixed ones).
    ///
    /// The multipliers of the nearest ancestor's node LP are tried first: they bound every
    /// node below it, so they may prune this one, and they filter it where it has too many
    /// values for an LP of its own. Otherwise the node solves its own LP even where the
    /// ancestor's bound it as well as there: reusing them then, as the search did above 3
    /// values a variable, took more nodes and time than the LPs cost once refuted subtrees
    /// are remembered (one thread: 60×800 seed 5, 143 000 nodes and 4.2 s to 17 000 and
    /// 1.5–1.9 s; 80×900 seed 1, 6.9 s to 1.6–2.0 s; 100×1000 seed 1, the one slower,
    /// 3.0 s to 4.1–4.6 s). Applying the ancestor's filter before a node's own LP made
    /// 80×900 seed 1 take five times the nodes.
    fn node_lp_filter(&mut self, depth: u32) -> Result<(), Conflict> {
        // Only ancestors' multipliers stay (every node with children passes here first).
        while self.node_duals.last().is_some_and(|(d, _)| *d >= depth) {
            self.node_duals.pop();
        }
        if !self.node_lp_on || self.st.vars() == 0 {
            return Ok(());
        }
        let t = self.threshold();
        if t == f64::INFINITY {
            return Ok(());
        }
        let penalty = f64::from_bits(self.st.cell(self.penalty_cell) as u64);
        let limit = t - 1e-9 * t.abs().max(1.0) - penalty;
        // A node is pruned at the bound limit, but its values are filtered at the threshold
        // itself: filtering at the limit as well made some trees smaller and others larger
        // (60×800, one thread: seed 6 −7% nodes, seed 5 +13%).
        let prune_at = {
            let b = self.bound_limit();
            b - 1e-9 * b.abs().max(1.0) - penalty
        };
        let values = self.st.values_left();
        if let Some((_, dual)) = self.node_duals.last()
            && let Some((lb, drop)) = dual.filter(&self.st, limit)
        {
            if lb >= prune_at {
                return Err(Conflict { var: None });
            }
            if values > NODE_LP_VALUES {
                return self.drop_values(drop);
            }
        }
        if values > NODE_LP_VALUES {
            return Ok(());
        }
        if !self.node_lp.as_ref().is_some_and(|l| l.covers(&self.st)) {
            // Rows are built near the root only: a deep node's LP rarely pays its build.
            if depth > NODE_LP_BUILD_DEPTH {
                return Ok(());
            }
            self.node_lp = lagrange::unary_costs(self.p, self.obj, &self.st)
                .filter(|(_, others)| others.is_empty())
                .and_then(|(base, _)| {
                    crate::lp::Relaxation::new(self.p, &self.st, &self.active, base, &self.cuts)
                })
                .map(Arc::new);
        }
        let Some((dual, drop)) = self
            .node_lp
            .as_ref()
            .and_then(|lp| lp.node(&self.st, NODE_LP_TIME, limit))
        else {
            return Ok(());
        };
        if dual.lb >= prune_at {
            return Err(Conflict { var: None });
        }
        self.node_duals.push((depth, dual));
        self.drop_values(drop)
    }

    /// Removes values a bound ruled out, then propagates.
    fn drop_values(&mut self, drop: Vec<(u32, u32)>) -> Result<(), Conflict> {
        if drop.is_empty() {
            return Ok(());
        }
        for (x, v) in drop {
            self.st.remove(x, v, SEARCH)?;
        }
        self.run_queue()
    }

    /// The cost a plan must beat to be kept: the k-th best known's, or the cap.
    fn incumbent_cost(&self) -> f64 {
        if self.found.len() < self.k {
            self.cap
        } else {
            self.found
                .last()
                .map_or(f64::INFINITY, |f| f.cost.min(self.cap))
        }
    }

    /// The cost at which the search prunes: the incumbent's, or a deepening pass's target.
    fn threshold(&self) -> f64 {
        self.incumbent_cost().min(self.target)
    }

    /// What bounds are compared with: the threshold, or with whole-number costs a little
    /// above the largest whole number below it, since a bound past that number rules out
    /// every plan the threshold would keep.
    fn bound_limit(&self) -> f64 {
        let t = self.threshold();
        if !self.integral || !t.is_finite() {
            return t;
        }
        let below = t.ceil() - 1.0;
        t.min(below + WHOLE_SLACK * below.abs().max(1.0))
    }

    fn pruned(&mut self) -> bool {
        if !self.with_objective {
            return false;
        }
        let t = self.bound_limit();
        if t == f64::INFINITY && self.comps.is_none() {
            return false;
        }
        let lb = self.lower_bound();
        // An infinite bound is a component with no solution at all.
        lb == f64::INFINITY || (t < f64::INFINITY && lb >= t - 1e-9 * t.abs().max(1.0))
    }

    fn out_of_budget(&mut self) -> bool {
        if self.stats.stopped.is_some() {
            return true;
        }
        if self
            .lock
            .as_ref()
            .is_some_and(|(m, _)| self.stats.nodes - self.met_at >= m.every)
            && matches!(self.meet(false), Met::Over)
        {
            return true;
        }
        if self.node_limit.is_some_and(|l| self.stats.nodes >= l) {
            self.stats.stopped = Some(StopReason::NodeLimit);
            return true;
        }
        if self.stats.nodes.is_multiple_of(64) {
            if self.deadline.is_some_and(|d| d.expired()) {
                self.stats.stopped = Some(StopReason::Deadline);
                return true;
            }
            self.pull_shared();
        }
        if self
            .improver
            .as_ref()
            .is_some_and(|i| self.stats.nodes >= i.next_at)
        {
            // A waiting thread gets work before the rounds hold this one (h60x800-s5 on two
            // threads: 18.0 s to 16.6 s).
            self.give();
            self.improve_phase();
        }
        false
    }

    fn done(&self) -> bool {
        self.stats.stopped.is_some()
            || (self.first_only && !self.found.is_empty())
            || self.threshold() < self.restart_below
    }

    /// The main search from the root at `mark`. With the LP bound it starts again from the
    /// root each time the incumbent has closed a quarter of the gap to the root bound left at
    /// the last start (at most [`RESTARTS`] times): the root's reduced-cost filtering then
    /// removes for the whole search what the better incumbent rules out (100×1000: from
    /// 21 000 values to a few thousand).
    pub(crate) fn search(&mut self, mark: usize) {
        if self.deepen(mark) {
            return;
        }
        let mut restarts = 0;
        loop {
            let t = self.threshold();
            let root_lb = self.lower_bound();
            self.restart_below = if self.node_lp_on && restarts < RESTARTS && t.is_finite() {
                t - 0.25 * (t - root_lb).max(0.0)
            } else {
                f64::NEG_INFINITY
            };
            self.dfs_top();
            let again = self.stats.stopped.is_none() && self.threshold() < self.restart_below;
            self.restart_below = f64::NEG_INFINITY;
            if !again {
                return;
            }
            restarts += 1;
            self.st.undo_to(mark);
            self.st.clear_events();
        }
    }

    /// With the LP bound and one optimum wanted, before the search below the incumbent:
    /// passes that prune at `floor + step` (`floor` the root bound at first, `step` a small
    /// fraction of it, doubling each pass). A pass that completes without a cheaper plan
    /// proves its target a lower bound (the next `floor`); one that finds a plan has proven
    /// it optimal, since it searched everything cheaper. The LP bound is tight (60×800:
    /// 0.06% under the optimum), so a pass with a small target filters nearly every value by
    /// reduced cost, and it finds the optimum where a search pruning only at the incumbent
    /// wanders (60×800, seed 2: 0.6 s instead of 2.5 s). Plans above the target still
    /// become the incumbent. The passes end where the next would reach the incumbent or
    /// cover more than [`DEEPEN_SHARE`] of the gap to it. True when that settled the search
    /// (proven, or stopped).
    fn deepen(&mut self, mark: usize) -> bool {
        if !self.node_lp_on || self.k != 1 || self.first_only {
            return false;
        }
        let mut floor = self.lower_bound();
        if !floor.is_finite() {
            return false;
        }
        let mut step = DEEPEN_STEP * floor.abs().max(1.0);
        for pass in 0.. {
            let target = floor + step;
            // Without an incumbent (none found yet, or no plan at all) the passes stop after
            // a few: the threshold would never end them.
            let t = self.threshold();
            if target >= t
                || target - floor > DEEPEN_SHARE * (t - floor)
                || (pass >= BLIND_PASSES && self.found.is_empty())
            {
                return false;
            }
            self.target = target;
            self.dfs_top();
            self.target = f64::INFINITY;
            self.st.undo_to(mark);
            self.st.clear_events();
            self.stats.deepen_passes += 1;
            if self.stats.stopped.is_some() || self.found.first().is_some_and(|f| f.cost < target) {
                return true;
            }
            floor = target;
            self.proven = self.proven.max(floor);
            if let (Some(p), Some(b)) = (self.progress, self.score_bound(self.proven)) {
                p.bound_raised(b);
            }
            step *= 2.0;
        }
        false
    }

    /// Marks a search cut short by its first plan (before it could prove anything).
    pub(crate) fn cut_at_first(&mut self) {
        if self.first_only && !self.found.is_empty() && self.stats.stopped.is_none() {
            self.stats.stopped = Some(StopReason::FirstPlan);
        }
    }

    /// Smallest domain first. Ties: with the LP's multipliers, the variable whose cheapest
    /// value is furthest below its next (its other branches rise most in bound and are cut
    /// soonest; 60×800 seeds 1–2: 953 and 1 669 nodes to 710 and 1 058); otherwise the one in
    /// most constraints.
    ///
    /// Last conflict first: once a decision's propagation fails, its variable is branched
    /// on first wherever it is still open, until it is assigned without failing. After a
    /// backtrack the search thus asks that variable again at once instead of failing on it
    /// deep in every sibling subtree: on h60x800-s5 the proof shrinks from 1.24 million
    /// nodes to 0.20 million (one thread), while instances proven in a few thousand nodes
    /// stay about as fast. Failures by the bound are not recorded: counting them too
    /// helped some 80×900 instances more but kept h100x1000-s1 from its proof (9 s
    /// without them, none in 40 s with them).
    fn select_var(&self) -> Option<u32> {
        if let Some(x) = self.last_conflict
            && self.st.value(x).is_none()
            && self.vars.is_none_or(|m| m[x as usize])
        {
            return Some(x);
        }
        let lag = self.lag.as_ref().filter(|_| self.node_lp_on);
        // Among equal sizes the larger wins, then the first.
        let tie = |x: u32| match lag {
            Some(l) => l.regret(x, &self.st),
            None => f64::from(self.degree[x as usize]),
        };
        let mut best: Option<(u32, f64, u32)> = None;
        for x in 0..self.st.vars() as u32 {
            if self.st.value(x).is_some() || self.vars.is_some_and(|m| !m[x as usize]) {
                continue;
            }
            let size = self.st.size(x);
            // The tie key only where it can decide (a regret scans the domain).
            if best.is_some_and(|(s, _, _)| size > s) {
                continue;
            }
            let t = tie(x);
            if best.is_none_or(|(s, b, _)| size < s || t > b) {
                best = Some((size, t, x));
            }
        }
        best.map(|b| b.2)
    }

    /// Values of `x` in the order to try them: best static cost first, or sorted by the
    /// objective's local key when pairwise cost terms reach assigned partners, or by the
    /// Lagrangian adjusted cost (values on contended holders later) when capacity is relaxed.
    fn cursor(&self, x: u32) -> Cursor {
        let keys = self.obj.keys.get(x as usize);
        let dynamic =
            self.with_objective && keys.is_some_and(|k| !k.pairs.is_empty()) && self.st.size(x) > 1;
        if dynamic {
            let mut vals: Vec<(f64, u32)> = self
                .st
                .values(x)
                .map(|v| (self.obj.value_key(x, v, &self.st), v.0))
                .collect();
            vals.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            return Cursor::Sorted {
                vals: vals.into_iter().map(|v| v.1).collect(),
                pos: 0,
            };
        }
        if let Some(lag) = &self.lag
            && lag.order(x).is_some()
        {
            return Cursor::Relaxed { pos: 0 };
        }
        let order = if self.with_objective {
            keys.and_then(|k| k.order.clone())
        } else {
            None
        };
        Cursor::Static { order, pos: 0 }
    }

    fn next_value(&self, x: u32, cur: &mut Cursor) -> Option<u32> {
        match cur {
            Cursor::Sorted { vals, pos } => {
                while let Some(&v) = vals.get(*pos) {
                    *pos += 1;
                    if self.st.contains(x, v) {
                        return Some(v);
                    }
                }
                None
            }
            Cursor::Relaxed { pos } => {
                let vals = self.lag.as_ref().and_then(|l| l.order(x)).unwrap_or(&[]);
                while let Some(&v) = vals.get(*pos) {
                    *pos += 1;
                    if self.st.contains(x, v) {
                        return Some(v);
                    }
                }
                None
            }
            Cursor::Static { order, pos } => {
                let n = self.st.universe(x) as usize;
                while *pos < n {
                    let i = *pos;
                    *pos += 1;
                    let v = match order {
                        None => i as u32,
                        Some((o, false)) => o[i],
                        Some((o, true)) => o[n - 1 - i],
                    };
                    if self.st.contains(x, v) {
                        return Some(v);
                    }
                }
                None
            }
        }
    }

    /// From now on the searches from the root run on `threads` threads (this one and
    /// helpers sharing the incumbent through `shared`) once they pass `alone` nodes here
    /// (see [`Engine::dfs_top`]).
    pub(crate) fn parallel(&mut self, threads: usize, alone: u64, shared: &'p Shared) {
        self.workers = threads.max(1);
        self.alone = alone;
        self.share(shared);
    }

    /// The search from the root: on several threads, each takes a subtree from a shared
    /// pool, searches it pruning at the best plan any of them knows, and gives the untried
    /// branches of its shallowest open node to a thread that waits (see [`Engine::give`]).
    /// Sound and complete as the one-thread search is: every branch it would try is
    /// searched by exactly one thread. The neighbourhood rounds run on the second thread
    /// first (see [`Engine::run_beside`]), not between the first thread's nodes.
    fn dfs_top(&mut self) {
        let Some(shared) = self.shared.filter(|_| self.workers >= 2) else {
            self.dfs(0);
            return;
        };
        // A tree searched within its first nodes does not pay the threads' start.
        if self.probe(self.alone) {
            return;
        }
        if self.node_limit.is_some() {
            self.lockstep_top();
            return;
        }
        let beside = self.rounds_beside();
        let busy = beside.as_ref().is_some_and(|b| !b.0.beside_stale);
        let beside = std::sync::Mutex::new(beside);
        let pool = Arc::new(Pool::new(self.workers, usize::from(busy)));
        let mut helpers = self.with_helpers(|e, id| {
            if id != 1 {
                e.subtrees(pool.clone(), true);
                return;
            }
            if let Ok(mut b) = beside.lock() {
                if busy && let Some(r) = b.as_mut() {
                    e.run_beside(r, shared, &pool);
                }
                // Rounds in vain go on between this thread's nodes, as on one thread.
                if b.as_ref().is_some_and(|r| r.0.beside_stale)
                    && let Some((mut imp, engine)) = b.take()
                {
                    imp.engine = Some(engine);
                    imp.next_at = e.stats.nodes + imp.gap;
                    e.improver = Some(imp);
                }
            }
            e.subtrees(pool.clone(), !busy);
        });
        let back = beside
            .into_inner()
            .ok()
            .flatten()
            .map(|(mut imp, engine)| {
                imp.engine = Some(engine);
                imp
            })
            .or_else(|| helpers.first_mut().and_then(|h| h.improver.take()));
        if let Some(mut imp) = back {
            imp.next_at = self.stats.nodes + imp.gap;
            self.improver = Some(imp);
        }
        self.pull_shared();
    }

    /// The neighbourhood rounds, taken from this search for its second thread (see
    /// [`Engine::run_beside`]).
    fn rounds_beside(&mut self) -> Option<(Box<Improver<'p>>, Engine<'p>)> {
        let mut imp = self.improver.take()?;
        let engine = self.engine_of(&mut imp);
        Some((imp, engine))
    }

    /// The improver's round engine, or a new one on its root.
    fn engine_of(&self, imp: &mut Improver<'p>) -> Engine<'p> {
        imp.engine
            .take()
            .unwrap_or_else(|| self.round_engine(imp.root.clone()))
    }

    /// Neighbourhood rounds around the shared plan on the second thread of a shared search
    /// (at least one), each cheaper plan offered to the others; then this thread joins the
    /// search. They end when every other thread waits for work, at the deadline, or once
    /// they have run more nodes in vain than [`STALE_BESIDE`] and than they needed for their
    /// last gain; from then on they run between this thread's nodes, on the schedule one
    /// thread keeps (see [`Engine::improve`]). So the rounds find plans while the other
    /// thread proves: on h60x800-s6 the rounds find the optimum in 60 ms, and proving it
    /// takes seconds (h60x800-s5 on two threads, median of five: 4.7 s to 3.2 s).
    fn run_beside(
        &mut self,
        (imp, engine): &mut (Box<Improver<'p>>, Engine<'p>),
        shared: &Shared,
        pool: &Pool,
    ) {
        loop {
            if self.deadline.is_some_and(|d| d.expired()) {
                return;
            }
            let Some((cost, inc)) = shared.get() else {
                return;
            };
            let (plan, ran) = engine.round_around(&mut imp.nb, &inc, cost);
            self.stats.nodes += ran;
            imp.beside_nodes += ran;
            imp.rounds += 1;
            if let Some((c, values)) = plan {
                shared.offer(c, &values);
                imp.beside_gain = imp.beside_nodes;
            }
            imp.beside_stale =
                imp.beside_nodes - imp.beside_gain > STALE_BESIDE.max(imp.beside_gain);
            if imp.beside_stale || pool.all_wait_but_one() {
                return;
            }
        }
    }

    /// Runs `work` here (thread 0) and on `workers - 1` helpers that start from the current
    /// node (threads 1 and up), then adds the helpers' counters to this engine's. The
    /// helpers are returned for the plans they found.
    fn with_helpers(&mut self, work: impl Fn(&mut Engine<'p>, usize) + Sync) -> Vec<Engine<'p>> {
        let root = self.st.clone();
        let base = root.removals;
        let mut helpers: Vec<Engine<'p>> = (1..self.workers)
            .map(|_| self.subtree_engine(root.clone()))
            .collect();
        std::thread::scope(|s| {
            for (i, h) in helpers.iter_mut().enumerate() {
                let work = &work;
                s.spawn(move || work(h, i + 1));
            }
            work(self, 0);
        });
        for h in &helpers {
            // Their states began as copies of this one: only their own removals count.
            self.st.removals += h.st.removals - base;
            self.stats.add(&Stats {
                removals: 0,
                ..h.stats
            });
        }
        self.stats.removals = self.st.removals;
        helpers
    }

    /// An engine for the subtrees of this one's search (see [`Engine::dfs_top`]): its
    /// relaxation, symmetry ordering, pruning targets and incumbent.
    fn subtree_engine(&self, root: State) -> Engine<'p> {
        let mut e = self.round_engine(root);
        e.node_lp_on = self.node_lp_on;
        e.node_lp = self.node_lp.clone();
        e.cuts = self.cuts.clone();
        e.sym_classes = self.sym_classes.clone();
        e.sym = self.sym.clone();
        e.sym_rank = self.sym_rank.clone();
        e.target = self.target;
        e.cap = self.cap;
        e.restart_below = self.restart_below;
        e.shared = self.shared;
        if let Some(f) = self.found.first() {
            e.seed(f.solution.values.clone());
        }
        e
    }

    /// [`Engine::dfs_top`] under a node limit: the threads share the tree as there, but in
    /// lock step (see `lockstep.rs`), so the search does not depend on timing and a limit
    /// stops it at the same node run after run. Each thread searches [`MEET_EVERY`] of its
    /// own nodes between meetings (or waits there without work); only there does the best
    /// plan pass between threads and do threads without work get subtrees.
    fn lockstep_top(&mut self) {
        let meetings = Arc::new(Meetings::new(
            self.workers,
            MEET_EVERY,
            self.node_limit.map(|l| (l, StopReason::NodeLimit)),
        ));
        // Plans pass only at meetings, not through the shared incumbent.
        let shared = self.shared.take();
        let helpers = self.with_helpers(|e, id| e.in_lockstep(meetings.clone(), id));
        for h in &helpers {
            // The last meeting passed every plan on; a tie keeps the lowest thread's.
            if let Some(f) = h.found.first()
                && f.cost < self.incumbent_cost()
            {
                self.seed(f.solution.values.clone());
            }
        }
        self.shared = shared;
        if let (Some(sh), Some(f)) = (self.shared, self.found.first()) {
            sh.offer(f.cost, &f.solution.values);
        }
    }

    /// One thread of [`Engine::lockstep_top`]: thread 0 starts with the whole tree, the others
    /// without work; each searches what it is given and meets the others until a meeting
    /// ends the search.
    fn in_lockstep(&mut self, meetings: Arc<Meetings>, id: usize) {
        let mark = self.st.mark();
        self.lock = Some((meetings, id));
        self.met_at = self.stats.nodes;
        let mut job = (id == 0).then(Vec::new);
        loop {
            if let Some(path) = job.take() {
                self.search_subtree(path, mark);
            }
            if self.lock.is_none() {
                break;
            }
            match self.meet(true) {
                Met::On => {}
                Met::Job(path) => job = Some(path),
                Met::Over => break,
            }
        }
        self.lock = None;
    }

    /// Meets the other threads of a lock-step search: brings this thread's state, takes the
    /// best plan, gives the subtrees the meeting asks of it and receives one if promised.
    fn meet(&mut self, idle: bool) -> Met {
        let Some((meetings, id)) = self.lock.clone() else {
            return Met::On;
        };
        let open = if idle || self.done() {
            0
        } else {
            self.levels.iter().filter(|l| l.open && !l.given).count()
        };
        let post = Post {
            idle,
            open,
            nodes: self.stats.nodes,
            best: self
                .found
                .first()
                .map(|f| (f.cost, f.solution.values.clone())),
            stopped: self.stats.stopped,
        };
        let verdict = meetings.meet(id, post);
        self.met_at = self.stats.nodes;
        if let Some((cost, plan)) = &verdict.best
            && *cost < self.incumbent_cost()
        {
            self.seed(plan.clone());
        }
        for &to in verdict.give.get(id).map_or(&[][..], Vec::as_slice) {
            let job = self.split();
            meetings.deliver(to, job);
        }
        if let Some(why) = verdict.end {
            self.lock = None;
            if let Some(why) = why {
                self.stats.stopped.get_or_insert(why);
            }
            return Met::Over;
        }
        if verdict.receive.get(id).copied().unwrap_or(false)
            && let Some(job) = meetings.collect(id)
        {
            return Met::Job(job);
        }
        Met::On
    }

    /// Takes subtrees from `pool` until every thread waits for one.
    fn subtrees(&mut self, pool: Arc<Pool>, mut idle: bool) {
        let mark = self.st.mark();
        self.pool = Some(pool.clone());
        loop {
            let path = match pool.take(&mut idle) {
                Take::Job(path) => path,
                Take::Wait => {
                    std::thread::sleep(std::time::Duration::from_micros(50));
                    continue;
                }
                Take::End => break,
            };
            if self.done() {
                continue;
            }
            self.pull_shared();
            self.search_subtree(path, mark);
        }
        self.pool = None;
    }

    /// Searches the subtree at the end of `path` (unless the search is over), then goes back
    /// to the root at `mark`.
    fn search_subtree(&mut self, path: Vec<Step>, mark: usize) {
        if !self.done()
            && let Some(depth) = self.replay(&path)
        {
            self.path = path;
            self.dfs(depth);
        }
        self.st.undo_to(mark);
        self.st.clear_events();
        self.node_duals.clear();
        self.path.clear();
        self.levels.clear();
    }

    /// Follows `path` from the root as [`Engine::dfs_inner`] went down it, each node's
    /// bounds and filters included but the last's (the search of the subtree runs them):
    /// the subtree is then the one the search would meet, not a larger one. The depth
    /// reached, or `None` when the path fails now (a better incumbent prunes it).
    fn replay(&mut self, path: &[Step]) -> Option<u32> {
        let mut depth = 0;
        if !path.is_empty() && self.node_fails(depth) {
            return None;
        }
        for (i, &step) in path.iter().enumerate() {
            let ok = match step {
                Step::Assign(x, v) => {
                    depth += 1;
                    self.st.assign(x, v).is_ok()
                        && self.run_queue().is_ok()
                        && (i + 1 == path.len() || !self.node_fails(depth))
                }
                Step::Remove(x, v) => {
                    self.st.remove(x, v, SEARCH).is_ok() && self.run_queue().is_ok()
                }
            };
            if !ok {
                return None;
            }
        }
        Some(depth)
    }

    /// A node's bound and filters: true when they prune it.
    fn node_fails(&mut self, depth: u32) -> bool {
        self.pruned() || self.lag_filter().is_err() || self.node_lp_filter(depth).is_err()
    }

    /// When a thread waits for work: gives it the untried branches of the shallowest node
    /// on this thread's path that has some (that node with its current branch refuted), and
    /// that node here ends with its current branch.
    fn give(&mut self) {
        if !self.pool.as_ref().is_some_and(|p| p.hungry()) {
            return;
        }
        if let (Some(job), Some(pool)) = (self.split(), &self.pool) {
            pool.give(job);
        }
    }

    /// The untried branches of the shallowest node on the path that has some, as a path
    /// from the root (that node with its current branch refuted); that node here then ends
    /// with its current branch.
    fn split(&mut self) -> Option<Vec<Step>> {
        let level = self.levels.iter_mut().find(|l| l.open && !l.given)?;
        level.given = true;
        let mut job = self.path[..level.at].to_vec();
        job.push(Step::Remove(level.x, level.v));
        self.stats.subtrees_given += 1;
        Some(job)
    }

    /// Depth-first branch and bound from the current node.
    pub(crate) fn dfs(&mut self, depth: u32) {
        // Each search starts without a conflict, so it does not depend on what ran before
        // (the canonical pass, a handed-over subtree).
        self.last_conflict = None;
        self.dfs_inner(depth, None);
        self.stats.removals = self.st.removals;
    }

    /// `decided`: the variable of the decision that led to this node (none at the search's
    /// root).
    /// True when the subtree was searched to its end (not cut by a limit, a restart or
    /// another thread taking branches).
    fn dfs_inner(&mut self, depth: u32, decided: Option<u32>) -> bool {
        // The path to the node, kept when threads share the tree (see `Engine::give`).
        let (path, levels) = (self.path.len(), self.levels.len());
        let complete = self.dfs_node(depth, decided);
        self.path.truncate(path);
        self.levels.truncate(levels);
        complete
    }

    fn dfs_node(&mut self, depth: u32, decided: Option<u32>) -> bool {
        if self.done() || self.out_of_budget() {
            return false;
        }
        self.stats.nodes += 1;
        self.stats.max_depth = self.stats.max_depth.max(depth);
        // The residual problem as entered, before the bound filters the domains (see
        // `memo.rs`); not at the search's root, which no other node shares.
        let (entry, first) = (self.st.mark(), self.stats.nodes);
        let domains = match &mut self.memo {
            Some(m) if depth > 0 => Some(m.domains(&self.st)),
            _ => None,
        };
        // The full key where these domains were met before (kept for the store below).
        let mut entered = None;
        if let Some(d) = domains
            && self.memo.as_ref().is_some_and(|m| m.seen(d))
        {
            entered = self.residual_key(d);
            if let Some((key, g)) = entered
                && self
                    .memo
                    .as_ref()
                    .is_some_and(|m| m.rules_out(key, g, self.threshold()))
            {
                self.stats.fails += 1;
                self.stats.remembered += 1;
                return true;
            }
        }
        if self.node_fails(depth) {
            self.stats.fails += 1;
            return true;
        }
        if decided.is_some() && self.last_conflict == decided {
            self.last_conflict = None;
        }
        let Some(x) = self.select_var() else {
            self.leaf();
            return true;
        };
        let shared_tree = self.pool.is_some() || self.lock.is_some();
        if shared_tree {
            self.give();
        }
        let mut cur = self.cursor(x);
        let mut complete = true;
        while let Some(v) = self.next_value(x, &mut cur) {
            let mark = self.st.mark();
            let open = self.st.size(x) > 1;
            if self.st.assign(x, v).is_ok() && self.run_queue().is_ok() {
                if shared_tree {
                    self.levels.push(Level {
                        at: self.path.len(),
                        x,
                        v,
                        open,
                        given: false,
                    });
                    self.path.push(Step::Assign(x, v));
                }
                complete &= self.dfs_inner(depth + 1, Some(x));
                if shared_tree {
                    self.path.pop();
                    // Another thread took the untried branches.
                    if self.levels.pop().is_some_and(|l| l.given) {
                        self.st.undo_to(mark);
                        return false;
                    }
                }
            } else {
                self.stats.fails += 1;
                self.last_conflict = self.last_conflict.or(Some(x));
            }
            self.st.undo_to(mark);
            if self.done() {
                return false;
            }
            // Two-way branching: refute x = v at this level so siblings propagate it.
            if self.st.remove(x, v, SEARCH).is_err() || self.run_queue().is_err() || self.pruned() {
                break;
            }
            if shared_tree {
                self.path.push(Step::Remove(x, v));
            }
        }
        if complete
            && let Some(d) = domains
            && self.stats.nodes - first >= REMEMBER_NODES
        {
            let t = self.threshold();
            let keyed = entered.or_else(|| {
                // Back to the node as entered (the caller undoes further) to key it.
                self.st.undo_to(entry);
                self.residual_key(d)
            });
            if let Some((key, g)) = keyed
                && let Some(memo) = &mut self.memo
            {
                memo.refute(d, key, g, t);
            }
        }
        complete
    }

    /// The key of this node's residual problem and what its decided part costs, when the
    /// search remembers refuted subtrees (see `memo.rs`).
    fn residual_key(&mut self, domains: crate::memo::Key) -> Option<(crate::memo::Key, f64)> {
        let memo = self.memo.as_mut()?;
        let mut key = domains;
        let mut words = std::mem::take(&mut memo.words);
        for &c in &self.active {
            words.clear();
            let ctx = Ctx {
                st: &mut self.st,
                cid: ConstraintId(c),
                cells: self.ranges[c as usize].clone(),
                root: false,
            };
            if !self.cons[c as usize].residual(&ctx, &mut words) {
                // A constraint that cannot tell now never will.
                self.memo = None;
                return None;
            }
            key = Memo::key(key, c, &words);
        }
        memo.words = words;
        Some((key, memo.decided(self.obj, &self.st)))
    }

    /// Takes the bound at this node (the search's root, relaxed) as [`Engine::proven`], and
    /// from now on tells `progress` of each new best plan (and now of the current one).
    pub(crate) fn watch(&mut self, progress: Option<&'p dyn Progress>) {
        self.proven = self.lower_bound();
        let Some(p) = progress else { return };
        self.progress = Some(p);
        if let Some(f) = self.found.first() {
            p.improved(f.solution.score, self.score_bound(self.proven));
        }
    }

    /// A minimized-cost bound as a score bound (lower when minimizing, upper when
    /// maximizing).
    pub(crate) fn score_bound(&self, lb: f64) -> Option<f64> {
        lb.is_finite().then_some(self.sign * lb)
    }

    /// Adds a known plan as an incumbent (if it passes the checker); the search then only
    /// looks for better ones and skips it when met again.
    pub(crate) fn seed(&mut self, values: Vec<Value>) {
        let full: Vec<Option<Value>> = values.iter().copied().map(Some).collect();
        let a = Assignment::new(&full);
        // Several seeding passes may offer the same plan: the k best hold each plan once.
        if values.len() != self.st.vars()
            || self.found.iter().any(|f| f.solution.values == values)
            || self
                .active
                .iter()
                .any(|&c| self.cons[c as usize].violation(&a) != 0.0)
        {
            return;
        }
        self.seeded = true;
        self.record(values, &full);
    }

    fn leaf(&mut self) {
        self.stats.leaves += 1;
        let a = Assignment::new(&self.st.assigned);
        if self
            .active
            .iter()
            .any(|&c| self.cons[c as usize].violation(&a) != 0.0)
        {
            self.stats.rejected += 1;
            return;
        }
        let values: Vec<Value> = self
            .st
            .assigned
            .iter()
            .map(|v| v.unwrap_or(Value(0)))
            .collect();
        if self.seeded && self.found.iter().any(|f| f.solution.values == values) {
            return;
        }
        let full = std::mem::take(&mut self.st.assigned);
        self.record(values, &full);
        self.st.assigned = full;
    }

    fn record(&mut self, values: Vec<Value>, full: &[Option<Value>]) {
        let e = if let (Some(terms), Some(root)) = (self.terms, self.obj.root_terms()) {
            let objective = terms
                .iter()
                .map(|&t| self.obj.term_eval(root[t].0, root[t].1, full))
                .sum();
            crate::Evaluation {
                objective,
                penalty: 0.0,
                score: objective,
            }
        } else if self.with_objective {
            self.p.evaluate_with(self.obj, full)
        } else {
            crate::Evaluation {
                objective: 0.0,
                penalty: 0.0,
                score: 0.0,
            }
        };
        let cost = if e.score.is_nan() {
            f64::INFINITY
        } else {
            self.sign * e.score
        };
        // A round wants a cheaper plan than its incumbent, the canonical pass one costing
        // the optimum: the bound does not always cut leaves above the cap.
        if cost >= self.cap {
            return;
        }
        self.seq += 1;
        let f = Found {
            cost,
            seq: self.seq,
            solution: Solution {
                values,
                objective: e.objective,
                penalty: e.penalty,
                score: e.score,
            },
        };
        let at = self
            .found
            .partition_point(|g| (g.cost, g.seq) <= (f.cost, f.seq));
        if at < self.k {
            self.found.insert(at, f);
            self.found.truncate(self.k);
            if let (0, Some(sh)) = (at, self.shared) {
                sh.offer(self.found[0].cost, &self.found[0].solution.values);
            }
            if let (0, Some(p)) = (at, self.progress) {
                p.improved(self.found[0].solution.score, self.score_bound(self.proven));
            }
        }
    }
}

/// Which bound set each root term is summed in (a component, the loose terms, the searched
/// terms or all of them); `usize::MAX` = not counted. A group's terms must share one set.
fn term_sets(obj: &Compiled, cfg: &RunConfig<'_>) -> Vec<usize> {
    let n = obj.root_terms().map_or(0, <[_]>::len);
    let mut set = vec![usize::MAX; n];
    let mut put = |t: usize, s: usize| {
        if let Some(x) = set.get_mut(t) {
            *x = s;
        }
    };
    if let Some(comps) = cfg.comps {
        for (i, c) in comps.list.iter().enumerate() {
            for &t in &c.terms {
                put(t, i);
            }
        }
        for &t in &comps.loose {
            put(t, comps.list.len());
        }
    } else if let Some(terms) = cfg.terms {
        for &t in terms {
            put(t, 0);
        }
    } else {
        for t in 0..n {
            put(t, 0);
        }
    }
    set
}

enum Cursor {
    Static {
        order: Option<(Arc<[u32]>, bool)>,
        pos: usize,
    },
    Sorted {
        vals: Vec<u32>,
        pos: usize,
    },
    /// By the Lagrangian adjusted cost (capacity-aware).
    Relaxed {
        pos: usize,
    },
}
