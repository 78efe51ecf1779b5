//! `Problem`: variables with labelled domains, hard and soft constraints, and the objective.

use std::fmt;
use std::sync::Arc;

use crate::builtin::CapacityData;
use crate::expr::Compiled;
use crate::{Assignment, Constraint, ConstraintId, Expr, Sense, SolveError, Value, VarId};

struct VarSpec {
    name: String,
    size: u32,
    labels: Option<Arc<[String]>>,
}

struct Entry {
    name: String,
    constraint: Box<dyn Constraint>,
    weight: Option<f64>,
}

/// A placement problem: variables, constraints, objective. Knows nothing of what the values
/// mean; plugins translate templates and inventories into it.
pub struct Problem {
    vars: Vec<VarSpec>,
    constraints: Vec<Entry>,
    sense: Sense,
    objective: Expr,
    /// The hard [`Capacity`](crate::Capacity) constraints' data, for the Lagrangian bound.
    capacities: Vec<(ConstraintId, Arc<CapacityData>)>,
}

impl fmt::Debug for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Problem")
            .field("vars", &self.vars.len())
            .field("constraints", &self.constraints.len())
            .field("sense", &self.sense)
            .field("objective", &self.objective)
            .finish()
    }
}

impl Default for Problem {
    fn default() -> Self {
        Problem::new()
    }
}

/// One hard constraint a complete assignment breaks (from [`Problem::check`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// The constraint.
    pub constraint: ConstraintId,
    /// Its name.
    pub name: String,
    /// How much it is violated.
    pub amount: f64,
}

/// The value of a complete assignment (from [`Problem::evaluate`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluation {
    /// The objective expression.
    pub objective: f64,
    /// Sum of `weight * violation` over soft constraints.
    pub penalty: f64,
    /// `objective + penalty` when minimizing, `objective - penalty` when maximizing.
    pub score: f64,
}

impl Problem {
    /// An empty problem minimizing the constant 0 (pure feasibility).
    pub fn new() -> Problem {
        Problem {
            vars: Vec::new(),
            constraints: Vec::new(),
            sense: Sense::Minimize,
            objective: Expr::Const(0.0),
            capacities: Vec::new(),
        }
    }

    /// Adds a variable with values `0..domain_size` (labels `#0`, `#1`...).
    pub fn add_var(&mut self, name: impl Into<String>, domain_size: u32) -> VarId {
        self.vars.push(VarSpec {
            name: name.into(),
            size: domain_size,
            labels: None,
        });
        VarId(self.vars.len() as u32 - 1)
    }

    /// Adds a variable with one value per label (share the `Arc` between variables).
    pub fn add_var_labeled(&mut self, name: impl Into<String>, labels: Arc<[String]>) -> VarId {
        self.vars.push(VarSpec {
            name: name.into(),
            size: labels.len() as u32,
            labels: Some(labels),
        });
        VarId(self.vars.len() as u32 - 1)
    }

    /// Adds a hard constraint.
    pub fn add_constraint(
        &mut self,
        name: impl Into<String>,
        c: impl Constraint + 'static,
    ) -> ConstraintId {
        let data = (&c as &dyn std::any::Any)
            .downcast_ref::<crate::Capacity>()
            .map(|k| Arc::new(k.data()));
        let id = self.add_boxed(name, Box::new(c), None);
        if let Some(d) = data {
            self.capacities.push((id, d));
        }
        id
    }

    /// Adds a soft constraint: `weight * violation` is added to the cost (never propagated).
    pub fn add_soft(
        &mut self,
        name: impl Into<String>,
        weight: f64,
        c: impl Constraint + 'static,
    ) -> ConstraintId {
        self.add_boxed(name, Box::new(c), Some(weight))
    }

    /// Adds a boxed constraint, hard (`weight: None`) or soft.
    pub fn add_boxed(
        &mut self,
        name: impl Into<String>,
        c: Box<dyn Constraint>,
        weight: Option<f64>,
    ) -> ConstraintId {
        self.constraints.push(Entry {
            name: name.into(),
            constraint: c,
            weight,
        });
        ConstraintId(self.constraints.len() as u32 - 1)
    }

    /// Sets the objective.
    pub fn set_objective(&mut self, sense: Sense, expr: Expr) {
        self.sense = sense;
        self.objective = expr;
    }

    /// The objective's sense.
    pub fn sense(&self) -> Sense {
        self.sense
    }

    /// The objective expression.
    pub fn objective(&self) -> &Expr {
        &self.objective
    }

    /// Number of variables.
    pub fn var_count(&self) -> usize {
        self.vars.len()
    }

    /// Every variable, in order.
    pub fn vars(&self) -> impl Iterator<Item = VarId> + '_ {
        (0..self.vars.len() as u32).map(VarId)
    }

    /// Name of a variable (empty if unknown).
    pub fn var_name(&self, var: VarId) -> &str {
        self.vars.get(var.index()).map_or("", |v| v.name.as_str())
    }

    /// Domain size of a variable (0 if unknown).
    pub fn domain_size(&self, var: VarId) -> u32 {
        self.vars.get(var.index()).map_or(0, |v| v.size)
    }

    /// Label of a value, for triage and explanations (`#index` when unlabelled).
    pub fn value_label(&self, var: VarId, value: Value) -> String {
        self.vars
            .get(var.index())
            .and_then(|v| v.labels.as_ref())
            .and_then(|l| l.get(value.index()))
            .cloned()
            .unwrap_or_else(|| value.to_string())
    }

    /// Number of constraints (hard and soft).
    pub fn constraint_count(&self) -> usize {
        self.constraints.len()
    }

    /// Name of a constraint (empty if unknown).
    pub fn constraint_name(&self, c: ConstraintId) -> &str {
        self.constraints
            .get(c.index())
            .map_or("", |e| e.name.as_str())
    }

    /// A constraint.
    pub fn constraint(&self, c: ConstraintId) -> Option<&dyn Constraint> {
        self.constraints
            .get(c.index())
            .map(|e| e.constraint.as_ref())
    }

    /// `Some(weight)` for a soft constraint, `None` for a hard one (or an unknown id).
    pub fn soft_weight(&self, c: ConstraintId) -> Option<f64> {
        self.constraints.get(c.index()).and_then(|e| e.weight)
    }

    pub(crate) fn sizes(&self) -> Vec<u32> {
        self.vars.iter().map(|v| v.size).collect()
    }

    /// The hard capacities' data (see `lagrange.rs`).
    pub(crate) fn capacities(&self) -> &[(ConstraintId, Arc<CapacityData>)] {
        &self.capacities
    }

    pub(crate) fn sign(&self) -> f64 {
        match self.sense {
            Sense::Minimize => 1.0,
            Sense::Maximize => -1.0,
        }
    }

    /// Checks every constraint and the objective; returns all problems found.
    pub fn validate(&self) -> Result<(), SolveError> {
        self.compile().map(|_| ())
    }

    pub(crate) fn compile(&self) -> Result<Compiled, SolveError> {
        let sizes = self.sizes();
        let mut errors = Vec::new();
        for (i, e) in self.constraints.iter().enumerate() {
            let cid = ConstraintId(i as u32);
            if let Some(&var) = e
                .constraint
                .scope()
                .iter()
                .find(|v| v.index() >= sizes.len())
            {
                errors.push(SolveError::UnknownVar {
                    constraint: cid,
                    name: e.name.clone(),
                    var,
                    vars: sizes.len() as u32,
                });
                continue;
            }
            if let Err(reason) = e.constraint.validate(&sizes) {
                errors.push(SolveError::BadConstraint {
                    constraint: cid,
                    name: e.name.clone(),
                    reason,
                });
            }
            if let Some(w) = e.weight
                && !(w.is_finite() && w >= 0.0)
            {
                errors.push(SolveError::BadWeight {
                    constraint: cid,
                    name: e.name.clone(),
                    weight: w,
                });
            }
        }
        let compiled = Compiled::new(&self.objective, self.sign(), &sizes);
        match compiled {
            Ok(c) => {
                SolveError::from_list(errors)?;
                Ok(c)
            }
            Err(more) => {
                errors.extend(more);
                SolveError::from_list(errors)?;
                Err(SolveError::Invalid { errors: Vec::new() })
            }
        }
    }

    /// Independent checker: every hard constraint violated by a complete assignment (one value
    /// per variable), through [`Constraint::violation`] only, not the search.
    pub fn check(&self, values: &[Value]) -> Vec<Violation> {
        let full: Vec<Option<Value>> = values.iter().copied().map(Some).collect();
        let a = Assignment::new(&full);
        let mut out = Vec::new();
        if values.len() != self.vars.len() {
            return vec![Violation {
                constraint: ConstraintId(u32::MAX),
                name: format!(
                    "assignment has {} values; expected {}",
                    values.len(),
                    self.vars.len()
                ),
                amount: 1.0,
            }];
        }
        for (x, v) in values.iter().enumerate() {
            if v.0 >= self.vars[x].size {
                out.push(Violation {
                    constraint: ConstraintId(u32::MAX),
                    name: format!("value {v} of {} outside its domain", VarId(x as u32)),
                    amount: 1.0,
                });
            }
        }
        for (i, e) in self.constraints.iter().enumerate() {
            if e.weight.is_some() {
                continue;
            }
            let amount = e.constraint.violation(&a);
            if amount != 0.0 {
                out.push(Violation {
                    constraint: ConstraintId(i as u32),
                    name: e.name.clone(),
                    amount,
                });
            }
        }
        out
    }

    /// Objective, penalty and score of a complete assignment (`None` if the problem is invalid).
    pub fn evaluate(&self, values: &[Value]) -> Option<Evaluation> {
        let compiled = self.compile().ok()?;
        let full: Vec<Option<Value>> = values.iter().copied().map(Some).collect();
        Some(self.evaluate_with(&compiled, &full))
    }

    pub(crate) fn evaluate_with(&self, compiled: &Compiled, full: &[Option<Value>]) -> Evaluation {
        let objective = compiled.eval(full);
        let penalty = self.penalty(full);
        let score = match self.sense {
            Sense::Minimize => objective + penalty,
            Sense::Maximize => objective - penalty,
        };
        Evaluation {
            objective,
            penalty,
            score,
        }
    }

    fn penalty(&self, full: &[Option<Value>]) -> f64 {
        let a = Assignment::new(full);
        self.constraints
            .iter()
            .filter_map(|e| e.weight.map(|w| w * e.constraint.violation(&a)))
            .sum()
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = (&dyn Constraint, Option<f64>)> + '_ {
        self.constraints
            .iter()
            .map(|e| (e.constraint.as_ref(), e.weight))
    }
}
