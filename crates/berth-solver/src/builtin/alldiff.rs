//! `AllDifferent` (distinct values) and `AllDifferentGroup` (distinct keys, e.g. zones).

use std::collections::BTreeMap;

use crate::keys::{KeyIndex, Keys, NO_KEY, both, index_all, same_keys};
use crate::{Assignment, Conflict, Constraint, Ctx, Domains, Linear, Value, VarId};

/// No two variables of the scope take the same value index (candidates shared by index, e.g.
/// HAS `unique` across demands with one candidate list). Forward checking on assignment.
#[derive(Debug, Clone)]
pub struct AllDifferent {
    vars: Vec<VarId>,
}

impl AllDifferent {
    /// Over `vars`.
    pub fn new(vars: Vec<VarId>) -> AllDifferent {
        AllDifferent { vars }
    }
}

impl Constraint for AllDifferent {
    fn scope(&self) -> &[VarId] {
        &self.vars
    }

    fn validate(&self, sizes: &[u32]) -> Result<(), String> {
        super::check_scope(&self.vars, sizes)
    }

    fn propagate(&self, _: &mut Ctx<'_>) -> Result<(), Conflict> {
        // Assigned variables are all reported through `on_assign`.
        Ok(())
    }

    fn on_assign(&self, ctx: &mut Ctx<'_>, var: VarId, value: Value) -> Result<(), Conflict> {
        for &y in &self.vars {
            if y != var {
                ctx.remove(y, value)?;
            }
        }
        Ok(())
    }

    /// Checked forward on assignment: nothing beyond the domains.
    fn residual(&self, _: &Ctx<'_>, _: &mut Vec<i64>) -> bool {
        true
    }

    fn violation(&self, a: &Assignment<'_>) -> f64 {
        let mut count: BTreeMap<Value, u32> = BTreeMap::new();
        for v in self.vars.iter().filter_map(|&x| a.get(x)) {
            *count.entry(v).or_default() += 1;
        }
        count.values().map(|&n| f64::from(n - 1)).sum()
    }

    fn symmetric(&self, a: VarId, b: VarId) -> bool {
        both(&self.vars, a, b).is_some()
    }

    /// Each value is taken at most once: `Σ_x [x = v] ≤ 1`.
    fn linear(&self, domains: &Domains<'_>) -> Vec<Linear> {
        crate::constraint::at_most_one_per_key(
            self.vars
                .iter()
                .flat_map(|&x| domains.values(x).map(move |v| (v.0, x, v))),
        )
    }
}

/// No two variables of the scope take values with the same key (zone `different`). Values
/// with [`NO_KEY`] are unrestricted. Forward checking through an inverted key index.
pub struct AllDifferentGroup {
    vars: Vec<VarId>,
    of_var: Vec<u32>,
    tables: Vec<KeyIndex>,
}

impl std::fmt::Debug for AllDifferentGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AllDifferentGroup")
            .field("vars", &self.vars)
            .finish_non_exhaustive()
    }
}

impl AllDifferentGroup {
    /// `keys[i]` maps the values of `vars[i]` to their group keys.
    pub fn new(vars: Vec<VarId>, keys: Vec<Keys>) -> AllDifferentGroup {
        let (of_var, tables) = index_all(keys);
        AllDifferentGroup {
            vars,
            of_var,
            tables,
        }
    }

    fn table(&self, i: usize) -> Option<&KeyIndex> {
        self.tables.get(*self.of_var.get(i)? as usize)
    }

    fn key(&self, i: usize, v: Value) -> u32 {
        self.table(i).map_or(NO_KEY, |t| t.key(v))
    }
}

impl Constraint for AllDifferentGroup {
    fn scope(&self) -> &[VarId] {
        &self.vars
    }

    fn validate(&self, sizes: &[u32]) -> Result<(), String> {
        super::check_scope(&self.vars, sizes)?;
        key_sizes(&self.vars, &self.of_var, &self.tables, sizes)
    }

    fn propagate(&self, _: &mut Ctx<'_>) -> Result<(), Conflict> {
        Ok(())
    }

    fn on_assign(&self, ctx: &mut Ctx<'_>, var: VarId, value: Value) -> Result<(), Conflict> {
        let Some(i) = self.vars.iter().position(|&x| x == var) else {
            return Ok(());
        };
        let g = self.key(i, value);
        if g == NO_KEY {
            return Ok(());
        }
        for (j, &y) in self.vars.iter().enumerate() {
            if j == i {
                continue;
            }
            if let Some(vy) = ctx.value(y) {
                if self.key(j, vy) == g {
                    return Err(ctx.fail());
                }
                continue;
            }
            if let Some(t) = self.table(j) {
                for &v in t.values_with(g) {
                    ctx.remove(y, Value(v))?;
                }
            }
        }
        Ok(())
    }

    /// Checked forward on assignment: nothing beyond the domains.
    fn residual(&self, _: &Ctx<'_>, _: &mut Vec<i64>) -> bool {
        true
    }

    fn violation(&self, a: &Assignment<'_>) -> f64 {
        let mut count: BTreeMap<u32, u32> = BTreeMap::new();
        for (i, &x) in self.vars.iter().enumerate() {
            if let Some(v) = a.get(x) {
                let g = self.key(i, v);
                if g != NO_KEY {
                    *count.entry(g).or_default() += 1;
                }
            }
        }
        count.values().map(|&n| f64::from(n - 1)).sum()
    }

    fn symmetric(&self, a: VarId, b: VarId) -> bool {
        both(&self.vars, a, b).is_some_and(|(i, j)| same_keys(&self.of_var, &self.tables, i, j))
    }

    fn distinct_keys(&self) -> Option<Vec<Keys>> {
        self.of_var
            .iter()
            .map(|&t| self.tables.get(t as usize).map(|t| t.keys().clone()))
            .collect()
    }
}

/// Every key table covers its variable's domain.
pub(crate) fn key_sizes(
    vars: &[VarId],
    of_var: &[u32],
    tables: &[KeyIndex],
    sizes: &[u32],
) -> Result<(), String> {
    if of_var.len() != vars.len() {
        return Err(format!(
            "{} key lists for {} variables; expected one per variable",
            of_var.len(),
            vars.len()
        ));
    }
    for (x, t) in vars.iter().zip(of_var) {
        let have = tables.get(*t as usize).map_or(0, KeyIndex::len);
        let want = sizes.get(x.index()).copied().unwrap_or(0) as usize;
        if have != want {
            return Err(format!(
                "key list of {x} has {have} entries; expected {want} (the domain size)"
            ));
        }
    }
    Ok(())
}
