//! `AtMostCount`: at most `k` variables take a value of a set (licenses).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::{Assignment, Conflict, Constraint, Ctx, Value, VarId};

/// At most `limit` variables of the scope take a value in their set (`in_set[i][value]`),
/// e.g. demands using a license of which `limit` are available. One reversible counter; when
/// it reaches `limit` the set's values are removed from every unassigned variable.
pub struct AtMostCount {
    vars: Vec<VarId>,
    in_set: Vec<Arc<[bool]>>,
    members: Vec<Arc<[u32]>>,
    limit: u32,
}

impl std::fmt::Debug for AtMostCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtMostCount")
            .field("vars", &self.vars)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl AtMostCount {
    /// `in_set[i]` marks the values of `vars[i]` that count; share the `Arc` between variables
    /// with the same candidates.
    pub fn new(vars: Vec<VarId>, in_set: Vec<Arc<[bool]>>, limit: u32) -> AtMostCount {
        let mut by_ptr: BTreeMap<usize, Arc<[u32]>> = BTreeMap::new();
        let members = in_set
            .iter()
            .map(|s| {
                let addr = Arc::as_ptr(s) as *const bool as usize;
                by_ptr
                    .entry(addr)
                    .or_insert_with(|| {
                        s.iter()
                            .enumerate()
                            .filter(|(_, b)| **b)
                            .map(|(v, _)| v as u32)
                            .collect()
                    })
                    .clone()
            })
            .collect();
        AtMostCount {
            vars,
            in_set,
            members,
            limit,
        }
    }

    fn counts(&self, i: usize, v: Value) -> bool {
        self.in_set
            .get(i)
            .and_then(|s| s.get(v.index()))
            .copied()
            .unwrap_or(false)
    }

    /// Removes the set's values from the unassigned variables (and from the assigned ones at
    /// the root, where nothing has been counted yet).
    fn close(&self, ctx: &mut Ctx<'_>, with_assigned: bool) -> Result<(), Conflict> {
        for (j, &y) in self.vars.iter().enumerate() {
            if !with_assigned && ctx.value(y).is_some() {
                continue;
            }
            if let Some(m) = self.members.get(j) {
                for &v in m.iter() {
                    ctx.remove(y, Value(v))?;
                }
            }
        }
        Ok(())
    }
}

impl Constraint for AtMostCount {
    fn scope(&self) -> &[VarId] {
        &self.vars
    }

    fn validate(&self, sizes: &[u32]) -> Result<(), String> {
        super::check_scope(&self.vars, sizes)?;
        if self.in_set.len() != self.vars.len() {
            return Err(format!(
                "{} sets for {} variables; expected one per variable",
                self.in_set.len(),
                self.vars.len()
            ));
        }
        for (x, s) in self.vars.iter().zip(&self.in_set) {
            let want = sizes.get(x.index()).copied().unwrap_or(0) as usize;
            if s.len() != want {
                return Err(format!(
                    "set of {x} has {} entries; expected {want} (the domain size)",
                    s.len()
                ));
            }
        }
        Ok(())
    }

    fn initial_state(&self, _universe: &[u32]) -> Vec<i64> {
        vec![0]
    }

    fn propagate(&self, ctx: &mut Ctx<'_>) -> Result<(), Conflict> {
        if self.limit == 0 {
            self.close(ctx, true)
        } else {
            Ok(())
        }
    }

    fn on_assign(&self, ctx: &mut Ctx<'_>, var: VarId, value: Value) -> Result<(), Conflict> {
        let Some(i) = self.vars.iter().position(|&x| x == var) else {
            return Ok(());
        };
        if !self.counts(i, value) {
            return Ok(());
        }
        let n = ctx.state().first().copied().unwrap_or(0) + 1;
        ctx.set_state(0, n);
        match n.cmp(&i64::from(self.limit)) {
            std::cmp::Ordering::Greater => Err(ctx.fail()),
            std::cmp::Ordering::Equal => self.close(ctx, false),
            std::cmp::Ordering::Less => Ok(()),
        }
    }

    /// The count, while an unassigned variable can still raise it.
    fn residual(&self, ctx: &Ctx<'_>, out: &mut Vec<i64>) -> bool {
        let open = self.vars.iter().enumerate().any(|(j, &y)| {
            ctx.value(y).is_none()
                && self
                    .members
                    .get(j)
                    .is_some_and(|m| m.iter().any(|&v| ctx.contains(y, Value(v))))
        });
        if open {
            out.push(ctx.state().first().copied().unwrap_or(0));
        }
        true
    }

    fn violation(&self, a: &Assignment<'_>) -> f64 {
        let n = self
            .vars
            .iter()
            .enumerate()
            .filter(|(i, x)| a.get(**x).is_some_and(|v| self.counts(*i, v)))
            .count() as u32;
        f64::from(n.saturating_sub(self.limit))
    }
}
