//! `CommonGroup`: every demand's candidate belongs to one shared inventory group.

use std::collections::BTreeSet;
use std::sync::Arc;

use berth_solver::{Assignment, Conflict, Constraint, Ctx, Value, VarId};

/// The groups of each value of one variable (sorted group ids).
pub type GroupSets = Arc<[Vec<u32>]>;

/// All variables take values whose group sets share at least one group (candidates may be in
/// several groups, so this is not a single-key `SameGroup`).
///
/// State: cell 0 counts assigned variables, cell `1 + g` how many of them are in group `g`.
/// A group is still possible when its count equals the assigned count; after each assignment
/// the unassigned variables keep only values in a possible group. Root: values in no group
/// that every domain can reach are removed.
#[derive(Debug, Clone)]
pub struct CommonGroup {
    vars: Vec<VarId>,
    groups: Vec<GroupSets>,
    n_groups: usize,
}

impl CommonGroup {
    /// `groups[i][value]` lists the groups of `vars[i]`'s value (ids below `n_groups`).
    pub fn new(vars: Vec<VarId>, groups: Vec<GroupSets>, n_groups: usize) -> CommonGroup {
        CommonGroup {
            vars,
            groups,
            n_groups,
        }
    }

    fn of(&self, i: usize, v: Value) -> &[u32] {
        self.groups
            .get(i)
            .and_then(|g| g.get(v.index()))
            .map_or(&[], Vec::as_slice)
    }
}

impl Constraint for CommonGroup {
    fn scope(&self) -> &[VarId] {
        &self.vars
    }

    fn validate(&self, sizes: &[u32]) -> Result<(), String> {
        if self.groups.len() != self.vars.len() {
            return Err(format!(
                "{} group lists for {} variables; expected one per variable",
                self.groups.len(),
                self.vars.len()
            ));
        }
        for (x, g) in self.vars.iter().zip(&self.groups) {
            let want = sizes.get(x.index()).copied().unwrap_or(0) as usize;
            if g.len() != want {
                return Err(format!(
                    "group list of {x} has {} entries; expected {want}",
                    g.len()
                ));
            }
            if g.iter().flatten().any(|&k| k as usize >= self.n_groups) {
                return Err(format!(
                    "a group of {x} is out of range; expected ids below {}",
                    self.n_groups
                ));
            }
        }
        Ok(())
    }

    fn initial_state(&self, _universe: &[u32]) -> Vec<i64> {
        vec![0; self.n_groups + 1]
    }

    fn propagate(&self, ctx: &mut Ctx<'_>) -> Result<(), Conflict> {
        let mut common: Option<BTreeSet<u32>> = None;
        for (i, &x) in self.vars.iter().enumerate() {
            let reach: BTreeSet<u32> = ctx
                .values(x)
                .flat_map(|v| self.of(i, v).iter().copied())
                .collect();
            common = Some(match common {
                None => reach,
                Some(c) => c.intersection(&reach).copied().collect(),
            });
        }
        let common = common.unwrap_or_default();
        for (i, &x) in self.vars.iter().enumerate() {
            ctx.retain(x, |v| self.of(i, v).iter().any(|g| common.contains(g)))?;
        }
        Ok(())
    }

    fn on_assign(&self, ctx: &mut Ctx<'_>, var: VarId, value: Value) -> Result<(), Conflict> {
        let Some(i) = self.vars.iter().position(|&x| x == var) else {
            return Ok(());
        };
        let assigned = ctx.state().first().copied().unwrap_or(0) + 1;
        ctx.set_state(0, assigned);
        for &g in self.of(i, value) {
            let n = ctx.state().get(1 + g as usize).copied().unwrap_or(0) + 1;
            ctx.set_state(1 + g as usize, n);
        }
        let open: Vec<bool> = (0..self.n_groups)
            .map(|g| ctx.state().get(1 + g).copied() == Some(assigned))
            .collect();
        if !open.iter().any(|&o| o) {
            return Err(ctx.fail());
        }
        for (j, &y) in self.vars.iter().enumerate() {
            if ctx.value(y).is_none() {
                ctx.retain(y, |v| {
                    self.of(j, v)
                        .iter()
                        .any(|&g| open.get(g as usize).copied().unwrap_or(false))
                })?;
            }
        }
        Ok(())
    }

    /// The groups still shared by every assigned value, while a variable is open: values
    /// each in one of them may still share none.
    fn residual(&self, ctx: &Ctx<'_>, out: &mut Vec<i64>) -> bool {
        let assigned = ctx.state().first().copied().unwrap_or(0);
        if assigned > 0 && self.vars.iter().any(|&x| ctx.value(x).is_none()) {
            let counts = ctx.state().get(1..).unwrap_or(&[]);
            out.extend(
                (0..self.n_groups)
                    .filter(|&g| counts.get(g) == Some(&assigned))
                    .map(|g| g as i64),
            );
        }
        true
    }

    fn violation(&self, a: &Assignment<'_>) -> f64 {
        let mut common: Option<BTreeSet<u32>> = None;
        for (i, &x) in self.vars.iter().enumerate() {
            if let Some(v) = a.get(x) {
                let mine: BTreeSet<u32> = self.of(i, v).iter().copied().collect();
                common = Some(match common {
                    None => mine,
                    Some(c) => c.intersection(&mine).copied().collect(),
                });
            }
        }
        match common {
            Some(c) if c.is_empty() => 1.0,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_solver::{Outcome, Problem, SolveOptions};

    #[test]
    fn members_share_a_group() {
        let mut p = Problem::new();
        let a = p.add_var("a", 3);
        let b = p.add_var("b", 3);
        // a: v0 in {0}, v1 in {1, 2}, v2 in {}; b: v0 in {2}, v1 in {0}, v2 in {3}
        let ga: GroupSets = vec![vec![0], vec![1, 2], vec![]].into();
        let gb: GroupSets = vec![vec![2], vec![0], vec![3]].into();
        p.add_constraint("group", CommonGroup::new(vec![a, b], vec![ga, gb], 4));
        let Ok(Outcome::Solved {
            solutions, triage, ..
        }) = p.solve(&SolveOptions {
            solutions: 5,
            ..SolveOptions::default()
        })
        else {
            panic!("expected solutions");
        };
        let mut got: Vec<(u32, u32)> = solutions
            .iter()
            .map(|s| (s.values[0].0, s.values[1].0))
            .collect();
        got.sort();
        assert_eq!(got, vec![(0, 1), (1, 0)]);
        for s in &solutions {
            assert!(p.check(&s.values).is_empty());
        }
        // Root removals: a's v2 (no group) and b's v2 (group 3 unreachable from a).
        assert_eq!(triage.vars[0].removed.len(), 1);
        assert_eq!(triage.vars[1].removed.len(), 1);
    }
}
