//! `Filter`: a unary constraint that removes listed values of one variable.

use crate::{Assignment, Conflict, Constraint, Ctx, Value, VarId};

/// Unary filter: the listed values of `var` are not allowed. The triage attributes each
/// removal to this constraint, so plugins add one filter per reason (e.g. per attribute rule).
#[derive(Debug, Clone)]
pub struct Filter {
    scope: [VarId; 1],
    forbidden: Vec<Value>,
}

impl Filter {
    /// Forbids `values` for `var`.
    pub fn forbid(var: VarId, values: impl IntoIterator<Item = Value>) -> Filter {
        let mut forbidden: Vec<Value> = values.into_iter().collect();
        forbidden.sort_unstable();
        forbidden.dedup();
        Filter {
            scope: [var],
            forbidden,
        }
    }

    /// Allows only the values `0..domain_size` for which `keep` is true.
    pub fn keep(var: VarId, domain_size: u32, mut keep: impl FnMut(Value) -> bool) -> Filter {
        Filter::forbid(var, (0..domain_size).map(Value).filter(|v| !keep(*v)))
    }

    /// The forbidden values, increasing.
    pub fn forbidden(&self) -> &[Value] {
        &self.forbidden
    }
}

impl Constraint for Filter {
    fn scope(&self) -> &[VarId] {
        &self.scope
    }

    fn validate(&self, sizes: &[u32]) -> Result<(), String> {
        super::check_scope(&self.scope, sizes)
    }

    fn propagate(&self, ctx: &mut Ctx<'_>) -> Result<(), Conflict> {
        for &v in &self.forbidden {
            ctx.remove(self.scope[0], v)?;
        }
        Ok(())
    }

    fn on_assign(&self, _: &mut Ctx<'_>, _: VarId, value: Value) -> Result<(), Conflict> {
        // Root propagation removed every forbidden value for good.
        if self.forbidden.binary_search(&value).is_ok() {
            return Err(Conflict {
                var: Some(self.scope[0]),
            });
        }
        Ok(())
    }

    /// Checked forward on assignment: nothing beyond the domains.
    fn residual(&self, _: &Ctx<'_>, _: &mut Vec<i64>) -> bool {
        true
    }

    fn violation(&self, a: &Assignment<'_>) -> f64 {
        match a.get(self.scope[0]) {
            Some(v) if self.forbidden.binary_search(&v).is_ok() => 1.0,
            _ => 0.0,
        }
    }
}
