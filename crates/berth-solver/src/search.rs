//! The search engine: its state, and the searches from the root (the deepening passes, the
//! restarts below the incumbent, the canonical pass). Each concern in a file of its own:
//! `options` (what a solve is given and reports), `propagate`, `bounds`, `nodes` (the
//! depth-first search), `rounds` (large-neighbourhood rounds) and `threads`.

mod bounds;
mod nodes;
mod options;
mod propagate;
mod rounds;
mod threads;

use std::ops::Range;
use std::sync::Arc;

use crate::decompose::Components;
use crate::expr::Compiled;
use crate::lagrange::Lagrange;
use crate::matching::{KeyGroup, key_groups};
use crate::memo::Memo;
use crate::state::State;
use crate::{Constraint, ConstraintId, Problem};

use bounds::{GroupMemo, term_sets};
pub(crate) use options::FIRST_GAP;
pub use options::{
    Deadline, MAX_THREADS, Progress, Solution, SolveOptions, Stats, StopReason, Unique,
};
use rounds::Improver;
pub(crate) use threads::Shared;
use threads::{Level, Meetings, Pool, Step};

/// Reason recorded for removals made by the search itself (refutations, `unique` exclusions).
pub(crate) const SEARCH: ConstraintId = ConstraintId(u32::MAX);

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

    /// Marks a search cut short by its first plan (before it could prove anything).
    pub(crate) fn cut_at_first(&mut self) {
        if self.first_only && !self.found.is_empty() && self.stats.stopped.is_none() {
            self.stats.stopped = Some(StopReason::FirstPlan);
        }
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
}
