//! `SameGroup`: all variables take values with one common key (zone `same`, inventory group).

use std::collections::{BTreeMap, BTreeSet};

use super::alldiff::key_sizes;
use crate::keys::{KeyIndex, Keys, NO_KEY, index_all};
use crate::{Assignment, Conflict, Constraint, Ctx, Domains, Linear, Value, VarId};

/// All variables of the scope take values with the same key; a value with [`NO_KEY`] can be
/// used only when the scope has one variable. Root: generalized arc consistency over keys;
/// search: the first assignment fixes the key (one reversible cell).
pub struct SameGroup {
    vars: Vec<VarId>,
    of_var: Vec<u32>,
    tables: Vec<KeyIndex>,
}

impl std::fmt::Debug for SameGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SameGroup")
            .field("vars", &self.vars)
            .finish_non_exhaustive()
    }
}

const UNSET: i64 = -1;

impl SameGroup {
    /// `keys[i]` maps the values of `vars[i]` to their group keys.
    pub fn new(vars: Vec<VarId>, keys: Vec<Keys>) -> SameGroup {
        let (of_var, tables) = index_all(keys);
        SameGroup {
            vars,
            of_var,
            tables,
        }
    }

    fn key(&self, i: usize, v: Value) -> u32 {
        self.of_var
            .get(i)
            .and_then(|t| self.tables.get(*t as usize))
            .map_or(NO_KEY, |t| t.key(v))
    }
}

impl Constraint for SameGroup {
    fn scope(&self) -> &[VarId] {
        &self.vars
    }

    fn validate(&self, sizes: &[u32]) -> Result<(), String> {
        super::check_scope(&self.vars, sizes)?;
        key_sizes(&self.vars, &self.of_var, &self.tables, sizes)
    }

    fn initial_state(&self, _universe: &[u32]) -> Vec<i64> {
        vec![UNSET]
    }

    fn propagate(&self, ctx: &mut Ctx<'_>) -> Result<(), Conflict> {
        if self.vars.len() < 2 {
            return Ok(());
        }
        // Keys present in every domain.
        let mut common: Option<BTreeSet<u32>> = None;
        for (i, &x) in self.vars.iter().enumerate() {
            let ks: BTreeSet<u32> = ctx
                .values(x)
                .map(|v| self.key(i, v))
                .filter(|&k| k != NO_KEY)
                .collect();
            common = Some(match common {
                None => ks,
                Some(c) => c.intersection(&ks).copied().collect(),
            });
        }
        let common = common.unwrap_or_default();
        for (i, &x) in self.vars.iter().enumerate() {
            ctx.retain(x, |v| common.contains(&self.key(i, v)))?;
        }
        Ok(())
    }

    fn on_assign(&self, ctx: &mut Ctx<'_>, var: VarId, value: Value) -> Result<(), Conflict> {
        let Some(i) = self.vars.iter().position(|&x| x == var) else {
            return Ok(());
        };
        if self.vars.len() < 2 {
            return Ok(());
        }
        let g = self.key(i, value);
        if g == NO_KEY {
            return Err(ctx.fail());
        }
        let chosen = ctx.state().first().copied().unwrap_or(UNSET);
        if chosen == i64::from(g) {
            return Ok(());
        }
        if chosen != UNSET {
            return Err(ctx.fail());
        }
        ctx.set_state(0, i64::from(g));
        for (j, &y) in self.vars.iter().enumerate() {
            if j != i {
                ctx.retain(y, |v| self.key(j, v) == g)?;
            }
        }
        Ok(())
    }

    /// Checked forward on assignment: nothing beyond the domains.
    fn residual(&self, _: &Ctx<'_>, _: &mut Vec<i64>) -> bool {
        true
    }

    fn violation(&self, a: &Assignment<'_>) -> f64 {
        let mut keys = BTreeSet::new();
        let mut assigned = 0u32;
        let mut loose = 0u32;
        for (i, &x) in self.vars.iter().enumerate() {
            if let Some(v) = a.get(x) {
                assigned += 1;
                match self.key(i, v) {
                    NO_KEY => loose += 1,
                    k => {
                        keys.insert(k);
                    }
                }
            }
        }
        if self.vars.len() < 2 || assigned == 0 {
            return 0.0;
        }
        let distinct = keys.len() as u32 + loose;
        if loose > 0 && self.vars.len() >= 2 {
            // A key-less value can never share a key.
            return f64::from(distinct.max(2) - 1);
        }
        f64::from(distinct.saturating_sub(1))
    }

    /// Neighbours in the scope pick each key together: `Σ_{key k} [x_i = v] − Σ_{key k}
    /// [x_(i+1) = w] = 0` for every key `k` (both sides are 1 for the common key, 0 for the
    /// others; key-less values are never taken with two or more variables).
    fn linear(&self, domains: &Domains<'_>) -> Vec<Linear> {
        let mut rows = Vec::new();
        for i in 1..self.vars.len() {
            let (x, y) = (self.vars[i - 1], self.vars[i]);
            if x == y {
                continue;
            }
            let mut by_key: BTreeMap<u32, Vec<(VarId, Value, f64)>> = BTreeMap::new();
            for (j, var, coef) in [(i - 1, x, 1.0), (i, y, -1.0)] {
                for v in domains.values(var) {
                    let k = self.key(j, v);
                    if k != NO_KEY {
                        by_key.entry(k).or_default().push((var, v, coef));
                    }
                }
            }
            rows.extend(by_key.into_values().map(|terms| Linear {
                terms,
                rhs: 0.0,
                equal: true,
            }));
        }
        rows
    }
}
