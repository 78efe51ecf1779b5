//! Bounds: the lower bound of a node (terms, matching groups, the relaxations), the root and
//! node LPs with their reduced-cost filtering, and the threshold they are compared with.

use std::sync::Arc;

use super::{Engine, RunConfig, SEARCH};
use crate::Conflict;
use crate::expr::Compiled;
use crate::lagrange;
use crate::matching::group_lb;

/// Node LPs run once the domains hold at most this many values in all (one thread, six
/// instances of 60×800 to 100×1000: at 2 000 as many nodes or fewer, no faster; at 600 two
/// of them unproven in 30 s).
const NODE_LP_VALUES: u64 = 1_000;

/// [`NODE_LP_VALUES`] where the root LP absorbed pair terms: the node LPs are then the only
/// bound with fresh multipliers for them (h80x800p-s2, two threads: proven in 4.5 s and
/// 11 764 nodes instead of 22 s and 187 299; the same from 2 000 to 10 000).
const NODE_LP_PAIR_VALUES: u64 = 3_000;

/// Deepest node whose domains the node LP rows are built on (the nodes below reuse them).
const NODE_LP_BUILD_DEPTH: u32 = 2;

/// How far above a whole number a bound must be to rule it out, relative to the cost: far
/// above the bounds' rounding errors, far below 1.
const WHOLE_SLACK: f64 = 1e-6;

/// Longest node LP solve. They take milliseconds at that size; the limit is far above, so a
/// loaded machine never cuts one and the search stays the same run after run.
const NODE_LP_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// A group's matching bound and the state it was computed on: the bound depends only on the
/// members' domains, and a bound check comes many times per node (1000×5000 groups of 5:
/// 200 groups, few touched per node).
#[derive(Clone, Default)]
pub(super) struct GroupMemo {
    /// [`State::id`](crate::state::State::id) of the state it was computed on (0: none).
    state: u64,
    /// The members' [`State::stamp`](crate::state::State::stamp)s then.
    stamps: Vec<u64>,
    lb: f64,
}

impl<'p> Engine<'p> {
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

    /// Admissible lower bound of the minimized cost at the current node.
    pub(super) fn lower_bound(&mut self) -> f64 {
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
            l.pair_up(self.obj, self.sign);
            l.attach(&mut self.st);
        }
        self.lag.is_some()
    }

    /// Whether the relaxation in use is the LP's (see [`Engine::relax_capacity`]).
    pub(crate) fn lp_used(&self) -> bool {
        self.node_lp_on
    }

    /// The relaxation's adjusted costs as an objective (see [`Lagrange::adjusted_objective`]).
    ///
    /// [`Lagrange::adjusted_objective`]: lagrange::Lagrange::adjusted_objective
    pub(crate) fn relaxed_objective(&self) -> Option<crate::Expr> {
        self.lag.as_ref().map(|l| l.adjusted_objective(self.sign))
    }

    /// Groups of variables with the optima of their adjusted costs (see
    /// [`Lagrange::set_groups`]).
    ///
    /// [`Lagrange::set_groups`]: lagrange::Lagrange::set_groups
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
        for t in lag.alone() {
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
        // The LP bounds the unary terms; the others (pair terms) count their own bounds.
        let penalty = f64::from_bits(self.st.cell(self.penalty_cell) as u64) + self.others_lb();
        let limit = t - 1e-9 * t.abs().max(1.0) - penalty;
        // A node is pruned at the bound limit, but its values are filtered at the threshold
        // itself: filtering at the limit as well made some trees smaller and others larger
        // (60×800, one thread: seed 6 −7% nodes, seed 5 +13%).
        let prune_at = {
            let b = self.bound_limit();
            b - 1e-9 * b.abs().max(1.0) - penalty
        };
        let values = self.st.values_left();
        let node_lp_values = match &self.lag {
            Some(l) if l.absorbs_any() => NODE_LP_PAIR_VALUES,
            _ => NODE_LP_VALUES,
        };
        if let Some((_, dual)) = self.node_duals.last()
            && let Some((lb, drop)) = dual.filter(&self.st, limit)
        {
            if lb >= prune_at {
                return Err(Conflict { var: None });
            }
            if values > node_lp_values {
                return self.drop_values(drop);
            }
        }
        if values > node_lp_values {
            return Ok(());
        }
        if !self.node_lp.as_ref().is_some_and(|l| l.covers(&self.st)) {
            // Rows are built near the root only: a deep node's LP rarely pays its build.
            if depth > NODE_LP_BUILD_DEPTH {
                return Ok(());
            }
            // With the pair terms the root LP absorbed (else it sees nothing of them).
            let terms = self
                .lag
                .as_ref()
                .map(|l| l.absorbed_terms())
                .unwrap_or_default();
            let (p, obj, st) = (self.p, self.obj, &self.st);
            self.node_lp = lagrange::unary_costs(p, obj, st)
                .and_then(|(base, _)| {
                    if terms.is_empty() {
                        crate::lp::Relaxation::new(p, st, &self.active, base, &self.cuts)
                    } else {
                        let (active, cuts) = (&self.active, &self.cuts);
                        crate::lp::Relaxation::with_pairs(p, obj, st, active, base, cuts, &terms)
                    }
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

    /// The bounds of the root terms the node LPs leave out (those that are not unary, but
    /// for the pair terms the root LP absorbed, which they take in), summed at this node.
    fn others_lb(&mut self) -> f64 {
        let (Some(root), Some(lag)) = (self.obj.root_terms(), &self.lag) else {
            return 0.0;
        };
        lag.others
            .iter()
            .map(|&t| {
                // An absorbed term is in every node LP: what is left of it counts 0.
                if lag.absorbs(t) {
                    return 0.0;
                }
                self.obj
                    .term_lb(root[t].0, root[t].1, &mut self.st, self.obj_base)
            })
            .sum()
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
    pub(super) fn incumbent_cost(&self) -> f64 {
        if self.found.len() < self.k {
            self.cap
        } else {
            self.found
                .last()
                .map_or(f64::INFINITY, |f| f.cost.min(self.cap))
        }
    }

    /// The cost at which the search prunes: the incumbent's, or a deepening pass's target.
    pub(super) fn threshold(&self) -> f64 {
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

    pub(super) fn pruned(&mut self) -> bool {
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

    /// A node's bound and filters: true when they prune it.
    pub(super) fn node_fails(&mut self, depth: u32) -> bool {
        self.pruned() || self.lag_filter().is_err() || self.node_lp_filter(depth).is_err()
    }
}

/// Which bound set each root term is summed in (a component, the loose terms, the searched
/// terms or all of them); `usize::MAX` = not counted. A group's terms must share one set.
pub(super) fn term_sets(obj: &Compiled, cfg: &RunConfig<'_>) -> Vec<usize> {
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
