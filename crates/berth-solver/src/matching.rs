//! Matching bound: unary costs of variables that must take distinct keys (zone `different`).
//!
//! Summing each variable's cheapest live value counts the nearest zone once per variable; a
//! group of interchangeable demands all count the same one. Here the unary terms of such a
//! group are bounded together by a min-cost assignment of its unassigned variables to
//! distinct keys (each at its cheapest live value of that key), plus the assigned ones' costs.
//! Only a relaxation of the real problem, so admissible. A variable needs only its `r`
//! cheapest distinct keys (`r` = unassigned members): of those at most `r - 1` are taken by
//! the others, so some optimal matching uses one of them. A value without key is
//! unrestricted, so the scan stops at the first one.

use crate::expr::Compiled;
use crate::state::State;
use crate::{Constraint, Keys, NO_KEY};

/// Groups with more unassigned members fall back to per-variable minima.
const MAX_OPEN: usize = 8;
/// Search steps of one matching before falling back to per-variable minima.
const STEP_LIMIT: u32 = 20_000;

/// One variable of a group: its unary root term, weighted into the minimized cost.
pub(crate) struct Member {
    term: usize,
    /// `sign * weight` of the term (positive).
    w: f64,
    node: usize,
    keys: Keys,
    var: u32,
}

/// Variables under one distinct-keys constraint whose unary terms are bounded together.
pub(crate) struct KeyGroup {
    members: Vec<Member>,
}

impl KeyGroup {
    /// The root term whose bound carries the whole group's.
    pub(crate) fn lead(&self) -> usize {
        self.members.first().map_or(usize::MAX, |m| m.term)
    }

    /// The members' variables.
    pub(crate) fn vars(&self) -> impl Iterator<Item = u32> + '_ {
        self.members.iter().map(|m| m.var)
    }
}

/// Finds the groups: for each active hard constraint with distinct keys, the scope variables
/// with a direct unary root term (positive weight) not claimed by another group, whose terms
/// all lie in one set of `set_of` (a component's terms; `usize::MAX` = not counted).
/// Returns the groups and, per root term, its group (`u32::MAX` = none).
pub(crate) fn key_groups(
    obj: &Compiled,
    sign: f64,
    cons: &[&dyn Constraint],
    active: &[u32],
    set_of: &[usize],
) -> (Vec<KeyGroup>, Vec<u32>) {
    let Some(root) = obj.root_terms() else {
        return (Vec::new(), Vec::new());
    };
    let mut term_group = vec![u32::MAX; root.len()];
    let mut by_var: Vec<Vec<usize>> = Vec::new();
    for (t, &(w, node)) in root.iter().enumerate() {
        if let Some((var, ..)) = obj.unary_leaf(node)
            && sign * w > 0.0
            && set_of.get(t).is_some_and(|&s| s != usize::MAX)
        {
            let x = var as usize;
            if by_var.len() <= x {
                by_var.resize(x + 1, Vec::new());
            }
            by_var[x].push(t);
        }
    }
    let mut groups = Vec::new();
    for &c in active {
        let Some(k) = cons.get(c as usize) else {
            continue;
        };
        let Some(tables) = k.distinct_keys() else {
            continue;
        };
        if tables.len() != k.scope().len() {
            continue;
        }
        let mut members: Vec<Member> = Vec::new();
        let mut set = usize::MAX;
        for (x, keys) in k.scope().iter().zip(tables) {
            if members.iter().any(|m| {
                obj.unary_leaf(m.node)
                    .is_some_and(|(v, ..)| v as usize == x.index())
            }) {
                continue;
            }
            let Some(&t) = by_var
                .get(x.index())
                .and_then(|ts| ts.iter().find(|&&t| term_group[t] == u32::MAX))
            else {
                continue;
            };
            if set == usize::MAX {
                set = set_of[t];
            } else if set_of[t] != set {
                continue;
            }
            members.push(Member {
                term: t,
                w: sign * root[t].0,
                node: root[t].1,
                keys,
                var: x.0,
            });
        }
        if members.len() >= 2 {
            for m in &members {
                term_group[m.term] = groups.len() as u32;
            }
            groups.push(KeyGroup { members });
        }
    }
    (groups, term_group)
}

/// Admissible lower bound of the group's terms (minimized cost) at the current node;
/// infinite when no matching exists. `base` is the objective's first cell.
pub(crate) fn group_lb(g: &KeyGroup, obj: &Compiled, st: &mut State, base: usize) -> f64 {
    let mut fixed = 0.0;
    let mut used: Vec<u32> = Vec::new();
    let mut open: Vec<&Member> = Vec::new();
    for m in &g.members {
        let Some((var, costs, ..)) = obj.unary_leaf(m.node) else {
            continue;
        };
        match st.value(var) {
            Some(v) => {
                fixed += m.w * costs.get(v.index()).copied().unwrap_or(0.0);
                let k = m.keys.get(v.index()).copied().unwrap_or(NO_KEY);
                if k != NO_KEY {
                    used.push(k);
                }
            }
            None => open.push(m),
        }
    }
    let r = open.len();
    if r == 0 {
        return fixed;
    }
    let mut options: Vec<Vec<(u32, f64)>> = Vec::with_capacity(r);
    let mut free: Vec<f64> = Vec::with_capacity(r);
    let mut mins: Vec<f64> = Vec::with_capacity(r);
    for m in open {
        let Some((var, costs, order, cell)) = obj.unary_leaf(m.node) else {
            continue;
        };
        let mut list: Vec<(u32, f64)> = Vec::new();
        let mut unkeyed = f64::INFINITY;
        let mut first_live = None;
        let start = usize::try_from(st.cell(base + cell)).unwrap_or(0);
        let mut min = f64::INFINITY;
        for (pos, &v) in order.iter().enumerate().skip(start) {
            if !st.contains(var, v) {
                continue;
            }
            let c = m.w * costs.get(v as usize).copied().unwrap_or(0.0);
            if first_live.is_none() {
                first_live = Some(pos);
                min = c;
            }
            let k = m.keys.get(v as usize).copied().unwrap_or(NO_KEY);
            if k == NO_KEY {
                unkeyed = c;
                break;
            }
            if used.contains(&k) || list.iter().any(|e| e.0 == k) {
                continue;
            }
            list.push((k, c));
            if list.len() == r || r > MAX_OPEN {
                break;
            }
        }
        if let Some(pos) = first_live {
            st.set_cell(base + cell, pos as i64);
        }
        let best = list.first().map_or(unkeyed, |e| e.1.min(unkeyed));
        if best == f64::INFINITY {
            return f64::INFINITY;
        }
        // With too many open members only each one's own minimum counts.
        mins.push(if r > MAX_OPEN { min } else { best });
        options.push(list);
        free.push(unkeyed);
    }
    if r > MAX_OPEN {
        return fixed + mins.iter().sum::<f64>();
    }
    let mut suffix = vec![0.0; mins.len() + 1];
    for i in (0..mins.len()).rev() {
        suffix[i] = suffix[i + 1] + mins[i];
    }
    let mut m = Matcher {
        options: &options,
        free: &free,
        suffix: &suffix,
        used: Vec::with_capacity(r),
        best: f64::INFINITY,
        steps: 0,
    };
    m.run(0, 0.0);
    if m.steps > STEP_LIMIT {
        return fixed + suffix[0];
    }
    fixed + m.best
}

/// Exact min-cost assignment by depth-first search with a sum-of-minima bound.
struct Matcher<'a> {
    options: &'a [Vec<(u32, f64)>],
    free: &'a [f64],
    suffix: &'a [f64],
    used: Vec<u32>,
    best: f64,
    steps: u32,
}

impl Matcher<'_> {
    fn run(&mut self, i: usize, acc: f64) {
        self.steps += 1;
        if self.steps > STEP_LIMIT {
            return;
        }
        let Some(list) = self.options.get(i) else {
            self.best = self.best.min(acc);
            return;
        };
        if acc + self.suffix[i] >= self.best {
            return;
        }
        for &(k, c) in list {
            if self.used.contains(&k) {
                continue;
            }
            self.used.push(k);
            self.run(i + 1, acc + c);
            self.used.pop();
        }
        let f = self.free[i];
        if f < f64::INFINITY {
            self.run(i + 1, acc + f);
        }
    }
}
