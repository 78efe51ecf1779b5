//! The `Constraint` trait that every plugin implements, and the propagation context it works on.

use std::ops::Range;

use crate::state::{Conflict, DomainIter, State};
use crate::{ConstraintId, Value, VarId};

/// A full or partial assignment, as seen by [`Constraint::violation`].
#[derive(Clone, Copy, Debug)]
pub struct Assignment<'a> {
    values: &'a [Option<Value>],
}

impl<'a> Assignment<'a> {
    /// Wraps one optional value per variable (index = [`VarId`]).
    pub fn new(values: &'a [Option<Value>]) -> Self {
        Assignment { values }
    }

    /// The value of `var`, if assigned (and `var` exists).
    pub fn get(&self, var: VarId) -> Option<Value> {
        self.values.get(var.index()).copied().flatten()
    }

    /// Every value, one per variable.
    pub fn as_slice(&self) -> &'a [Option<Value>] {
        self.values
    }
}

/// A hard or soft constraint over some variables. Object safe: the solver holds `dyn Constraint`.
///
/// Contract (the search relies on it; the checker does not):
/// - **Soundness**: propagation only removes values that belong to no solution extending the
///   current node. Propagation may be weak: every complete assignment is verified with
///   [`Constraint::violation`] before it is accepted.
/// - **Events**: [`Constraint::propagate`] runs once at the root, before any
///   [`Constraint::on_assign`]. After that, every assignment of a scope variable (a search
///   decision or a domain reduced to one value) is reported exactly once through `on_assign`.
/// - **State**: a constraint keeps its incremental state (counters, loads) in the integer
///   cells of [`Ctx::state`], written with [`Ctx::set_state`]. Every write is trailed, so on
///   backtrack the state and the domains return to what they were: there is no separate
///   unassign hook to get wrong.
/// - **Violation**: on a partial assignment, `violation` considers only assigned variables and
///   never exceeds the violation of any completion (it is a lower bound). Hard constraints
///   are satisfied iff `violation == 0`; soft ones add `weight * violation` to the cost.
pub trait Constraint: Send + Sync {
    /// The variables the constraint reads. Events fire for these only.
    fn scope(&self) -> &[VarId];

    /// Checks the constraint's data against the domain sizes (index = [`VarId`]).
    fn validate(&self, domain_sizes: &[u32]) -> Result<(), String> {
        let _ = domain_sizes;
        Ok(())
    }

    /// Initial content of the constraint's reversible cells (their number is the length),
    /// given each variable's universe size (index = [`VarId`]).
    fn initial_state(&self, universe: &[u32]) -> Vec<i64> {
        let _ = universe;
        Vec::new()
    }

    /// Root propagation: prune what the constraint forbids regardless of decisions.
    fn propagate(&self, ctx: &mut Ctx<'_>) -> Result<(), Conflict>;

    /// `var` (in scope) has just been assigned `value`: update state, prune the others.
    fn on_assign(&self, ctx: &mut Ctx<'_>, var: VarId, value: Value) -> Result<(), Conflict> {
        let _ = (var, value);
        self.propagate(ctx)
    }

    /// Whether [`Constraint::on_domain_change`] should be called (arc consistency).
    fn wants_domain_events(&self) -> bool {
        false
    }

    /// Values were removed from the unassigned `var` (in scope), by anyone.
    fn on_domain_change(&self, ctx: &mut Ctx<'_>, var: VarId) -> Result<(), Conflict> {
        let _ = (ctx, var);
        Ok(())
    }

    /// How much the (partial) assignment violates the constraint; `0.0` = satisfied.
    fn violation(&self, assignment: &Assignment<'_>) -> f64;

    /// If the constraint (when hard) forces the scope variables onto pairwise distinct keys,
    /// the key of each value, one table per scope variable ([`NO_KEY`](crate::NO_KEY) =
    /// unrestricted). The search then bounds their unary costs by a min-cost matching of
    /// variables to distinct keys. Must be exact: every solution has distinct keys.
    fn distinct_keys(&self) -> Option<Vec<crate::Keys>> {
        None
    }

    /// Whether swapping the values of `a` and `b` in any assignment leaves the violation
    /// unchanged (asked only when `a` or `b` is in scope). Interchangeable variables are
    /// ordered by the search; `false` (the default) is always safe.
    fn symmetric(&self, a: VarId, b: VarId) -> bool {
        let _ = (a, b);
        false
    }

    /// Linear rows (when hard) that every solution satisfies, over the indicators
    /// `[x = v]` of the values in `domains` (the root domains after propagation: a value
    /// outside them is never taken). They feed the LP bound, so they must be valid for
    /// every solution; stronger rows give a stronger bound. The default (none) is always
    /// sound. Rows about values that are not [`Domains::wanted`] may be left out.
    fn linear(&self, domains: &Domains<'_>) -> Vec<Linear> {
        let _ = domains;
        Vec::new()
    }

    /// What the constraint (when hard) still asks of the unassigned variables beyond their
    /// current domains, pushed onto `out` as words: at two nodes where the unassigned
    /// variables have the same domains and every constraint pushes the same words, the same
    /// completions satisfy it. The search then refutes a subtree once, not at every node
    /// that leads to it again. A rule checked forward on assignment (the values an assigned
    /// variable rules out are removed from its partners) pushes nothing; a count or a load
    /// that can still decide pushes its value. Words need only be equal where the
    /// requirements are, so they may be left out where nothing can still overflow.
    /// `false` (the default) when the constraint cannot tell: the search then remembers no
    /// subtree.
    fn residual(&self, ctx: &Ctx<'_>, out: &mut Vec<i64>) -> bool {
        let _ = (ctx, out);
        false
    }
}

/// `Σ coef · [var = value] ≤ rhs`, or `= rhs` when `equal`: a row of the LP relaxation (see
/// [`Constraint::linear`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Linear {
    /// `(variable, value, coefficient)`.
    pub terms: Vec<(VarId, Value, f64)>,
    /// The right-hand side.
    pub rhs: f64,
    /// An equality instead of `≤`.
    pub equal: bool,
}

/// One row `Σ [x = v] ≤ 1` per key held by two or more of the `(key, variable, value)`
/// triples: at most one of them is taken (distinct values, distinct keys).
pub(crate) fn at_most_one_per_key(
    triples: impl IntoIterator<Item = (u32, VarId, Value)>,
) -> Vec<Linear> {
    let mut per: std::collections::BTreeMap<u32, Vec<(VarId, Value, f64)>> =
        std::collections::BTreeMap::new();
    for (k, x, v) in triples {
        per.entry(k).or_default().push((x, v, 1.0));
    }
    per.into_values()
        .filter(|terms| terms.len() > 1)
        .map(|terms| Linear {
            terms,
            rhs: 1.0,
            equal: false,
        })
        .collect()
}

/// The domains a constraint's [`Constraint::linear`] rows range over.
pub struct Domains<'a> {
    pub(crate) st: &'a State,
    /// Per variable, the values rows are wanted about (increasing); `None`: all.
    pub(crate) wanted: Option<&'a [Vec<u32>]>,
}

impl Domains<'_> {
    /// Whether rows about value `value` of `var` are wanted. The LP may be solved over some
    /// values only (column generation), and there a row that the assignment rows already
    /// imply over the wanted values (one whose only positive term is on an unwanted value,
    /// or a clique of values of one variable and unwanted ones) may be left out: it can
    /// never bind. Every value is wanted outside column generation; leaving nothing out is
    /// always sound.
    pub fn wanted(&self, var: VarId, value: Value) -> bool {
        self.wanted.is_none_or(|w| {
            w.get(var.index())
                .is_some_and(|vs| vs.binary_search(&value.0).is_ok())
        })
    }

    /// Current values of `var`, increasing.
    pub fn values(&self, var: VarId) -> DomainIter<'_> {
        self.st.values(var.0)
    }

    /// Current domain size of `var`.
    pub fn size(&self, var: VarId) -> u32 {
        self.st.size(var.0)
    }
}

/// What a constraint sees during propagation: domains, assignment, its own reversible cells.
pub struct Ctx<'a> {
    pub(crate) st: &'a mut State,
    pub(crate) cid: ConstraintId,
    pub(crate) cells: Range<usize>,
    pub(crate) root: bool,
}

impl Ctx<'_> {
    /// The constraint being run (removals are attributed to it in the triage).
    pub fn constraint(&self) -> ConstraintId {
        self.cid
    }

    /// True during root propagation (before any search decision).
    pub fn is_root(&self) -> bool {
        self.root
    }

    /// The value of `var` if assigned.
    pub fn value(&self, var: VarId) -> Option<Value> {
        self.st.value(var.0)
    }

    /// Whether `value` is still in the domain of `var`.
    pub fn contains(&self, var: VarId, value: Value) -> bool {
        self.st.contains(var.0, value.0)
    }

    /// Current domain size of `var` (1 when assigned).
    pub fn size(&self, var: VarId) -> u32 {
        self.st.size(var.0)
    }

    /// Initial domain size of `var` (values are `0..universe`).
    pub fn universe(&self, var: VarId) -> u32 {
        self.st.universe(var.0)
    }

    /// Current values of `var`, increasing.
    pub fn values(&self, var: VarId) -> DomainIter<'_> {
        self.st.values(var.0)
    }

    /// Removes `value` from `var`; `Ok(true)` if it was there. Removing an assigned variable's
    /// value, or the last value, is a conflict.
    pub fn remove(&mut self, var: VarId, value: Value) -> Result<bool, Conflict> {
        self.st.remove(var.0, value.0, self.cid)
    }

    /// Keeps only the values of `var` for which `keep` is true.
    pub fn retain(
        &mut self,
        var: VarId,
        mut keep: impl FnMut(Value) -> bool,
    ) -> Result<(), Conflict> {
        let drop: Vec<Value> = self.st.values(var.0).filter(|&v| !keep(v)).collect();
        for v in drop {
            self.st.remove(var.0, v.0, self.cid)?;
        }
        Ok(())
    }

    /// The constraint's reversible cells.
    pub fn state(&self) -> &[i64] {
        self.st.cells.get(self.cells.clone()).unwrap_or(&[])
    }

    /// Sets cell `i` (trailed; out-of-range writes are ignored).
    pub fn set_state(&mut self, i: usize, value: i64) {
        if i < self.cells.len() {
            self.st.set_cell(self.cells.start + i, value);
        }
    }

    /// A conflict not tied to one variable (e.g. a count exceeded).
    pub fn fail(&self) -> Conflict {
        Conflict { var: None }
    }
}
