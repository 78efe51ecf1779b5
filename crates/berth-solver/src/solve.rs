//! `Problem::solve`: validation, the search runs (k best or `unique` sequence), the outcome.

use crate::combine::{PHASE_LIMIT, pending, solve_components};
use crate::decompose::analyze;
use crate::explain::{Triage, explain};
use crate::expr::Compiled;
use crate::search::{Engine, FIRST_GAP, MAX_THREADS, RunConfig, Shared, StopReason};
use crate::{
    Explanation, Problem, Solution, SolveError, SolveOptions, Stats, Unique, Value, VarId,
};

/// What a solve returns. Never a panic, never a bare "not found".
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// At least one solution, best first. `optimal` is true only when the search completed,
    /// i.e. these are provably the best (k best) solutions.
    Solved {
        /// Best first.
        solutions: Vec<Solution>,
        /// The search completed.
        optimal: bool,
        /// A score no plan beats (a lower bound when minimizing, an upper bound when
        /// maximizing), proven by the search: the best score when `optimal`, otherwise the
        /// relaxed root's bound as the search raised it. `None` when no finite bound is
        /// known.
        bound: Option<f64>,
        /// Root-level removals.
        triage: Triage,
        /// Counters.
        stats: Stats,
    },
    /// Proven: no assignment satisfies the hard constraints.
    Infeasible {
        /// Which constraints leave no plan.
        explanation: Explanation,
        /// Counters.
        stats: Stats,
    },
    /// A limit stopped the search before any solution was found.
    Stopped {
        /// Root-level removals.
        triage: Triage,
        /// Counters (with `stopped` set).
        stats: Stats,
    },
}

impl Outcome {
    /// The solutions (empty unless solved).
    pub fn solutions(&self) -> &[Solution] {
        match self {
            Outcome::Solved { solutions, .. } => solutions,
            _ => &[],
        }
    }

    /// The proven bound of a solved outcome (see [`Outcome::Solved`]).
    pub fn bound(&self) -> Option<f64> {
        match self {
            Outcome::Solved { bound, .. } => *bound,
            _ => None,
        }
    }

    /// The counters.
    pub fn stats(&self) -> &Stats {
        match self {
            Outcome::Solved { stats, .. }
            | Outcome::Infeasible { stats, .. }
            | Outcome::Stopped { stats, .. } => stats,
        }
    }
}

impl Problem {
    /// Solves: the `k` best distinct solutions (or the `unique` sequence), proven optimal when
    /// the search completes within the limits.
    pub fn solve(&self, opts: &SolveOptions) -> Result<Outcome, SolveError> {
        let obj = self.compile()?;
        if opts.solutions == 0 {
            return Err(SolveError::ZeroSolutions);
        }
        if opts.threads > MAX_THREADS {
            return Err(SolveError::TooManyThreads {
                threads: opts.threads,
                max: MAX_THREADS,
            });
        }
        let unique: Vec<VarId> = match &opts.unique {
            Unique::Off => Vec::new(),
            Unique::All => self.vars().collect(),
            Unique::Vars(vs) => {
                if let Some(&var) = vs.iter().find(|v| v.index() >= self.var_count()) {
                    return Err(SolveError::UniqueUnknownVar { var });
                }
                vs.clone()
            }
        };
        let active = vec![true; self.constraint_count()];
        let rounds = if unique.is_empty() { 1 } else { opts.solutions };
        let k = if unique.is_empty() { opts.solutions } else { 1 };
        let mut excluded: Vec<(VarId, Value)> = Vec::new();
        let mut solutions: Vec<Solution> = Vec::new();
        let mut stats = Stats::default();
        let mut triage = Triage::default();
        // The first round's proven bound (minimized cost): the best plan's.
        let mut bound = None;
        for round in 0..rounds {
            let mut comps = if opts.stop_at_first {
                None
            } else {
                analyze(self, &obj)
            };
            let values: u64 = self.sizes().iter().map(|&s| u64::from(s)).sum();
            let quick = if opts.stop_at_first || k > 1 || values < FIRST_MIN_VALUES {
                None
            } else {
                first_plan(self, &obj, &active, &excluded, opts, &mut stats)
            };
            // With hard capacities the components are solved again on the Lagrangian costs
            // (a bound that sees the capacity too), and the LP's bound sees capacity and pair
            // rules: with the LP ahead this first pass only seeds, on a short budget. Without
            // it the components' own optima still bound next to the Lagrangian ones (whose
            // multipliers are chosen against an incumbent, and can bound lower), so each
            // component gets a share: 1000×5000 in groups of 5 was not proven in 20 s with
            // 500 nodes for its 200 components, and is in 1.1 s with 125 each.
            let seed_only = !self.capacities().is_empty() && lp_time(opts, values).is_some();
            let first = if self.capacities().is_empty() {
                PHASE_LIMIT
            } else if seed_only {
                SHORT_PHASE_LIMIT
            } else {
                let n = comps.as_ref().map_or(0, pending) as u64;
                // Under a node limit, most of it is left to the main search.
                let share = opts.node_limit.map_or(PHASE_LIMIT, |l| l / 4);
                n.saturating_mul(SHORT_NODES_PER_COMPONENT)
                    .min(share)
                    .clamp(SHORT_PHASE_LIMIT, PHASE_LIMIT)
            };
            let seed = comps.as_mut().and_then(|c| {
                solve_components(self, &obj, c, &excluded, opts, first, seed_only, &mut stats)
            });
            let node_limit = opts.node_limit.map(|l| l.saturating_sub(stats.nodes));
            let cfg = RunConfig {
                comps: comps.as_ref(),
                first_only: opts.stop_at_first,
                k,
                node_limit,
                deadline: opts.deadline.as_deref(),
                remember: opts.remember,
                ..RunConfig::whole(&active)
            };
            let shared = Shared::new();
            let mut e = Engine::new(self, &obj, &cfg);
            let root = e.root(&excluded, round == 0);
            let record = e.st.record.take().unwrap_or_default();
            if round == 0 {
                triage = Triage::new(self, &record);
            }
            if let Err(conflict) = root {
                stats.add(&e.stats);
                if round == 0 {
                    let explanation = explain(self, &obj, &record, conflict.var, opts, &mut stats);
                    return Ok(Outcome::Infeasible { explanation, stats });
                }
                break;
            }
            // One optimum wanted: interchangeable variables may be ordered.
            if k == 1 && rounds == 1 {
                e.break_symmetry();
            }
            for plan in [quick, seed].into_iter().flatten() {
                e.seed(plan);
            }
            let lp = lp_time(opts, e.st.values_left());
            // A first plan is wanted fast: the relaxation is for the bound, and on large
            // problems it costs more than the dive (1000×5000: 3 s against 0.3 s).
            let relaxed = !opts.stop_at_first && e.relax_capacity(lp);
            // One optimum wanted: neighbourhood rounds improve the incumbent meanwhile, and a
            // proven optimum is searched again for the canonical plan.
            let single = k == 1 && rounds == 1 && !opts.stop_at_first;
            // With the LP the deepening passes find the optimum sooner than rounds would
            // (60×800: 0.2 s of rounds for nothing).
            if relaxed && single && !e.lp_used() {
                e.early_rounds(opts.seed, EARLY_ROUND_NODES);
            }
            // The LP's bound already sees the pair rules: the component searches on its costs
            // only cost time (40×500: 0.72 s to 0.49 s).
            if relaxed
                && !e.lp_used()
                && let Some(expr) = e.relaxed_objective()
                && let Ok(adjusted) = Compiled::new(&expr, self.sign(), &self.sizes())
                && let Some(mut parts) = analyze(self, &adjusted)
            {
                // The components again, now minimizing the adjusted costs under every hard
                // constraint: one bound that sees pair rules and shared capacity together.
                // When their parts fit together, they are a plan too (a seed).
                if let Some(plan) = solve_components(
                    self,
                    &adjusted,
                    &mut parts,
                    &excluded,
                    opts,
                    PHASE_LIMIT,
                    false,
                    &mut stats,
                ) {
                    e.seed(plan);
                }
                e.relaxed_groups(
                    parts
                        .list
                        .iter()
                        .filter_map(|c| c.opt.map(|o| (c.vars.clone(), o)))
                        .collect(),
                );
            }
            e.watch(opts.progress.as_deref());
            let mark = e.st.mark();
            if single {
                e.improve(opts.seed, FIRST_GAP);
                // More threads search the subtrees (a proven optimum is then searched
                // again here alone, so the plan does not depend on their count).
                let threads = match opts.threads {
                    0 => {
                        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
                    }
                    n => n,
                };
                if threads > 1 {
                    e.parallel(threads, opts.helpers_after, &shared);
                }
            }
            e.search(mark);
            if single {
                e.canonical(mark);
            }
            e.cut_at_first();
            if round == 0
                && let Some(best) = e.found.first()
            {
                let lb = if e.stats.stopped.is_none() {
                    best.cost
                } else {
                    // Rounding may put a bound a hair above the plan that meets it.
                    e.proven.min(best.cost)
                };
                bound = e.score_bound(lb);
            }
            stats.add(&e.stats);
            let found = std::mem::take(&mut e.found);
            if found.is_empty() {
                if round > 0 || stats.stopped.is_some() {
                    break;
                }
                let explanation = explain(self, &obj, &record, None, opts, &mut stats);
                return Ok(Outcome::Infeasible { explanation, stats });
            }
            for f in found {
                for &x in &unique {
                    if let Some(&v) = f.solution.values.get(x.index()) {
                        excluded.push((x, v));
                    }
                }
                solutions.push(f.solution);
            }
            if stats.stopped.is_some() {
                break;
            }
        }
        if solutions.is_empty() {
            return Ok(Outcome::Stopped { triage, stats });
        }
        Ok(Outcome::Solved {
            optimal: stats.stopped.is_none(),
            bound,
            solutions,
            triage,
            stats,
        })
    }
}

/// The root LP bound's time limit with `values` left in the domains; `None`: no LP. Building
/// the rows is not under the LP's time limit: a deadline too short for the problem's size
/// goes without.
fn lp_time(opts: &SolveOptions, values: u64) -> Option<std::time::Duration> {
    let left = opts.deadline.as_ref().and_then(|d| d.remaining());
    (!opts.stop_at_first
        && opts.lp_min_values.is_some_and(|m| values >= m)
        && left.is_none_or(|l| l.as_secs_f64() >= values as f64 * LP_SECS_PER_VALUE))
    .then(|| left.map_or(opts.lp_time, |l| opts.lp_time.min(l / 8)))
}

/// Time left per value of the problem below which the LP bound is skipped (60×800, 21 000
/// values: about 0.4 s; its rows take 0.1 s and its LP 0.15 s).
const LP_SECS_PER_VALUE: f64 = 20e-6;

/// Node budget of the first component pass when a second one on adjusted costs follows.
const SHORT_PHASE_LIMIT: u64 = 500;
/// Node share of each component in the first pass when no LP follows (at most
/// [`PHASE_LIMIT`] in all, at least [`SHORT_PHASE_LIMIT`]).
const SHORT_NODES_PER_COMPONENT: u64 = 125;

/// Round nodes on a large problem before the component searches on the Lagrangian costs
/// (see `Engine::early_rounds`).
const EARLY_ROUND_NODES: u64 = 20_000;

/// Node limit of the first-plan dive.
const FIRST_LIMIT: u64 = 20_000;
/// Smaller problems (total domain size) skip the dive: their exact search is as fast.
const FIRST_MIN_VALUES: u64 = 2_000;
/// Node limit per variable of the plain first dive (a straight dive takes one).
const PLAIN_DIVE_NODES_PER_VAR: u64 = 4;

/// A first plan in a few thousand nodes: a depth-first dive (cheapest values first), stopped
/// at its first plan or its node limit. A plain dive first, within a few nodes per variable;
/// only if that fails, one made capacity-aware by the relaxed capacities. The relaxation
/// costs more than a plain dive that succeeds (60×800 to 100×1000: 7–15 ms against under
/// 1.2 ms, every one a straight dive). It seeds the main search (an incumbent from the
/// start, and a target for the multipliers).
fn first_plan(
    p: &Problem,
    obj: &Compiled,
    active: &[bool],
    excluded: &[(VarId, Value)],
    opts: &SolveOptions,
    stats: &mut Stats,
) -> Option<Vec<Value>> {
    let plain = (PLAIN_DIVE_NODES_PER_VAR * p.var_count() as u64).min(FIRST_LIMIT);
    for relaxed in [false, true] {
        let left = opts.node_limit.map_or(FIRST_LIMIT, |l| {
            l.saturating_sub(stats.nodes).min(FIRST_LIMIT)
        });
        let node_limit = if relaxed { left } else { left.min(plain) };
        let cfg = RunConfig {
            first_only: true,
            node_limit: Some(node_limit),
            deadline: opts.deadline.as_deref(),
            ..RunConfig::whole(active)
        };
        let mut e = Engine::new(p, obj, &cfg);
        if e.root(excluded, false).is_err() {
            stats.add(&e.stats);
            return None;
        }
        if relaxed && !e.relax_capacity(None) {
            // Without a relaxation the second dive would repeat the first.
            stats.add(&e.stats);
            return None;
        }
        e.dfs(0);
        // Not the answer: its stop is not the solve's.
        let deadline = e.stats.stopped == Some(StopReason::Deadline);
        e.stats.stopped = None;
        stats.add(&e.stats);
        if let Some(f) = e.found.first() {
            return Some(f.solution.values.clone());
        }
        if deadline {
            return None;
        }
    }
    None
}
