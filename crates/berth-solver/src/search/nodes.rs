//! One node of the depth-first search: the limits, the variable and value order, two-way
//! branching, remembered subtrees, and the plans kept at the leaves.

use std::sync::Arc;

use super::options::{Solution, StopReason};
use super::threads::{Level, Met, Step};
use super::{Engine, Found, SEARCH};
use crate::memo::Memo;
use crate::{Assignment, ConstraintId, Ctx, Value};

/// Subtrees with fewer nodes below their root are not remembered: keying one costs about
/// what searching it does (60×800 seeds 5 and 6: about as many nodes from 1 node as from 2),
/// while remembering only those with 8 nodes or more took 1.6 times the nodes on seed 6.
const REMEMBER_NODES: u64 = 2;

impl<'p> Engine<'p> {
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

    pub(super) fn done(&self) -> bool {
        self.stats.stopped.is_some()
            || (self.first_only && !self.found.is_empty())
            || self.threshold() < self.restart_below
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
