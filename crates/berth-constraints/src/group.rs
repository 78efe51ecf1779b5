//! `CommonGroup`: every demand's candidate belongs to one shared inventory group.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use berth_solver::{Assignment, Conflict, Constraint, Ctx, Domains, Linear, Value, VarId};

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

    /// Swapping the values of two members with the same group lists keeps every shared group.
    fn symmetric(&self, a: VarId, b: VarId) -> bool {
        let i = self.vars.iter().position(|&x| x == a);
        let j = self.vars.iter().position(|&x| x == b);
        match (i, j) {
            (Some(i), Some(j)) => {
                Arc::ptr_eq(&self.groups[i], &self.groups[j])
                    || self.groups[i][..] == self.groups[j][..]
            }
            _ => false,
        }
    }

    /// A member on a value whose only group is `g` needs every other member in `g`:
    /// `Σ_(groups(v) = {g}) [x = v] − Σ_(g ∈ groups(w)) [y = w] ≤ 0` for every group `g` and
    /// ordered pair of members. Where every value has one group these are the equalities of a
    /// single-key `SameGroup`.
    fn linear(&self, domains: &Domains<'_>) -> Vec<Linear> {
        let mut rows = Vec::new();
        for (i, &x) in self.vars.iter().enumerate() {
            let mut only: BTreeMap<u32, Vec<(VarId, Value, f64)>> = BTreeMap::new();
            for v in domains.values(x) {
                if let [g] = self.of(i, v) {
                    only.entry(*g).or_default().push((x, v, 1.0));
                }
            }
            for (j, &y) in self.vars.iter().enumerate() {
                if j == i || y == x {
                    continue;
                }
                for (&g, lhs) in &only {
                    let mut terms = lhs.clone();
                    terms.extend(
                        domains
                            .values(y)
                            .filter(|&w| self.of(j, w).contains(&g))
                            .map(|w| (y, w, -1.0)),
                    );
                    rows.push(Linear {
                        terms,
                        rhs: 0.0,
                        equal: false,
                    });
                }
            }
        }
        rows
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

    proptest::proptest! {
        /// With the LP bound always on, the optimum over random group lists and costs is the
        /// brute-force one: the rows cut off no plan.
        #[test]
        fn the_lp_rows_keep_every_plan(
            sizes in proptest::collection::vec(1usize..=4, 3),
            groups in proptest::collection::vec(proptest::collection::vec(0u32..8, 4), 3),
            costs in proptest::collection::vec(proptest::collection::vec(0u32..20, 4), 3),
        ) {
            use berth_solver::{Expr, Sense};
            // A value's groups: the bits of its mask over 3 groups.
            let sets: Vec<GroupSets> = (0..3)
                .map(|i| {
                    (0..sizes[i])
                        .map(|v| (0..3).filter(|g| groups[i][v] & (1 << g) != 0).collect())
                        .collect::<Vec<Vec<u32>>>()
                        .into()
                })
                .collect();
            let mut p = Problem::new();
            let vars: Vec<VarId> = (0..3).map(|i| p.add_var(format!("x{i}"), sizes[i] as u32)).collect();
            // As the lowering states an inventory group: pairs with the first member.
            for j in 1..3 {
                p.add_constraint(
                    format!("g{j}"),
                    CommonGroup::new(vec![vars[0], vars[j]], vec![sets[0].clone(), sets[j].clone()], 3),
                );
            }
            let cost = |i: usize| -> Vec<f64> { costs[i][..sizes[i]].iter().map(|&c| f64::from(c)).collect() };
            p.set_objective(
                Sense::Minimize,
                Expr::sum((0..3).map(|i| (1.0, Expr::unary(vars[i], cost(i)))).collect::<Vec<_>>()),
            );
            let mut best: Option<f64> = None;
            for a in 0..sizes[0] {
                for b in 0..sizes[1] {
                    for c in 0..sizes[2] {
                        let share = |x: &[u32], y: &[u32]| x.iter().any(|g| y.contains(g));
                        if share(&sets[0][a], &sets[1][b]) && share(&sets[0][a], &sets[2][c]) {
                            let v = f64::from(costs[0][a] + costs[1][b] + costs[2][c]);
                            best = Some(best.map_or(v, |w: f64| w.min(v)));
                        }
                    }
                }
            }
            let opts = SolveOptions { lp_min_values: Some(0), ..SolveOptions::default() };
            match p.solve(&opts) {
                Ok(Outcome::Solved { solutions, optimal, .. }) => {
                    proptest::prop_assert!(optimal);
                    proptest::prop_assert_eq!(Some(solutions[0].objective), best);
                }
                Ok(Outcome::Infeasible { .. }) => proptest::prop_assert_eq!(best, None),
                other => proptest::prop_assert!(false, "unexpected outcome {:?}", other.map(|_| ())),
            }
        }
    }
}
