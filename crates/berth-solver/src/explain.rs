//! Triage (which constraint removed which value) and conflict sets for infeasible problems.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::expr::Compiled;
use crate::search::{Engine, RunConfig, SEARCH};
use crate::{ConstraintId, Problem, SolveOptions, Stats, Value, VarId};

/// Root-level removals: for every variable, every value removed and the constraint that
/// removed it (removals caused by propagation are attributed to the propagating constraint).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Triage {
    /// One entry per variable, in order.
    pub vars: Vec<VarTriage>,
}

/// Triage of one variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarTriage {
    /// The variable.
    pub var: VarId,
    /// Its domain size before any removal.
    pub candidates: u32,
    /// Removed values (increasing) and the constraint that removed each.
    pub removed: Vec<(Value, ConstraintId)>,
}

impl Triage {
    pub(crate) fn new(p: &Problem, record: &[(VarId, Value, ConstraintId)]) -> Triage {
        let mut vars: Vec<VarTriage> = p
            .vars()
            .map(|var| VarTriage {
                var,
                candidates: p.domain_size(var),
                removed: Vec::new(),
            })
            .collect();
        for &(x, v, c) in record {
            if c == SEARCH {
                continue;
            }
            if let Some(t) = vars.get_mut(x.index()) {
                t.removed.push((v, c));
            }
        }
        for t in &mut vars {
            // First reason wins: a value is removed once; a later entry is the conflict itself.
            t.removed.sort_by_key(|r| r.0);
            t.removed.dedup_by_key(|r| r.0);
        }
        Triage { vars }
    }
}

/// Why there is no plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// Hard constraints that together leave no plan (every other constraint can be dropped and
    /// the problem stays infeasible).
    pub conflict: Vec<ConstraintId>,
    /// Whether `conflict` is proven minimal (dropping any one member makes it feasible); false
    /// when a feasibility check hit its budget.
    pub minimal: bool,
    /// The variable left with no value by root propagation, if that is how it failed.
    pub wiped_out: Option<VarId>,
    /// The root-level removals.
    pub triage: Triage,
}

/// Outcome of one feasibility check: `Some(true)` feasible, `Some(false)` infeasible, `None`
/// unknown (budget).
fn feasible(
    p: &Problem,
    obj: &Compiled,
    subset: &[ConstraintId],
    opts: &SolveOptions,
    stats: &mut Stats,
) -> Option<bool> {
    let mut active = vec![false; p.constraint_count()];
    for c in subset {
        if let Some(a) = active.get_mut(c.index()) {
            *a = true;
        }
    }
    let cfg = RunConfig {
        active: &active,
        with_objective: false,
        soft: false,
        vars: None,
        terms: None,
        comps: None,
        first_only: true,
        k: 1,
        node_limit: Some(opts.explain_node_limit),
        deadline: opts.deadline.as_deref(),
        remember: false,
    };
    let mut e = Engine::new(p, obj, &cfg);
    stats.explain_checks += 1;
    let r = if e.root(&[], false).is_err() {
        Some(false)
    } else {
        e.dfs(0);
        if !e.found.is_empty() {
            Some(true)
        } else if e.stats.stopped.is_some() {
            None
        } else {
            Some(false)
        }
    };
    e.stats.stopped = None;
    e.stats.explain_checks = 0;
    stats.add_search(&e.stats);
    r
}

/// A conflict set by deletion: start from the constraints that emptied the wiped-out
/// variable (when they suffice) or from every hard constraint, and drop each member whose
/// removal keeps the rest infeasible. Each kept member is then necessary.
pub(crate) fn explain(
    p: &Problem,
    obj: &Compiled,
    record: &[(VarId, Value, ConstraintId)],
    wiped_out: Option<VarId>,
    opts: &SolveOptions,
    stats: &mut Stats,
) -> Explanation {
    let hard: Vec<ConstraintId> = (0..p.constraint_count() as u32)
        .map(ConstraintId)
        .filter(|&c| p.soft_weight(c).is_none())
        .collect();
    let mut set = hard.clone();
    let mut minimal = true;
    let mut checks = 0u32;
    if let Some(w) = wiped_out {
        let seed: BTreeSet<ConstraintId> = record
            .iter()
            .filter(|r| r.0 == w && r.2 != SEARCH)
            .map(|r| r.2)
            .collect();
        let seed: Vec<ConstraintId> = seed.into_iter().collect();
        if seed.len() < set.len() && checks < opts.explain_checks {
            checks += 1;
            if feasible(p, obj, &seed, opts, stats) == Some(false) {
                set = seed;
            }
        }
    }
    let mut i = 0;
    while i < set.len() {
        if checks >= opts.explain_checks || opts.deadline.as_ref().is_some_and(|d| d.expired()) {
            minimal = false;
            break;
        }
        checks += 1;
        let trial: Vec<ConstraintId> = set
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, c)| *c)
            .collect();
        match feasible(p, obj, &trial, opts, stats) {
            Some(false) => set = trial,
            Some(true) => i += 1,
            None => {
                minimal = false;
                i += 1;
            }
        }
    }
    Explanation {
        conflict: set,
        minimal,
        wiped_out,
        triage: Triage::new(p, record),
    }
}

impl Stats {
    fn add_search(&mut self, o: &Stats) {
        self.nodes += o.nodes;
        self.fails += o.fails;
        self.leaves += o.leaves;
        self.rejected += o.rejected;
        self.propagations += o.propagations;
        self.removals += o.removals;
    }
}

impl Problem {
    /// The triage as text: one block per variable with removals, values by label.
    pub fn render_triage(&self, t: &Triage) -> String {
        let mut out = String::new();
        for v in &t.vars {
            if v.removed.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "{}: {} of {} candidates removed",
                self.var_name(v.var),
                v.removed.len(),
                v.candidates
            );
            for (val, c) in &v.removed {
                let _ = writeln!(
                    out,
                    "  {} by {}",
                    self.value_label(v.var, *val),
                    self.constraint_name(*c)
                );
            }
        }
        out
    }

    /// The explanation as text: the conflict set, then the wiped-out variable's removals.
    pub fn render_explanation(&self, e: &Explanation) -> String {
        let mut out = String::new();
        let names: Vec<&str> = e
            .conflict
            .iter()
            .map(|c| self.constraint_name(*c))
            .collect();
        match names.len() {
            0 => out.push_str("no plan: a variable has no candidates\n"),
            _ => {
                let _ = writeln!(
                    out,
                    "no plan: {} together leave no plan{}",
                    names.join(", "),
                    if e.minimal {
                        ""
                    } else {
                        " (not proven minimal)"
                    }
                );
            }
        }
        if let Some(w) = e.wiped_out {
            let _ = writeln!(out, "{} has no candidate left:", self.var_name(w));
            if let Some(t) = e.triage.vars.get(w.index()) {
                for (val, c) in &t.removed {
                    let _ = writeln!(
                        out,
                        "  {} by {}",
                        self.value_label(w, *val),
                        self.constraint_name(*c)
                    );
                }
            }
        }
        out
    }
}
