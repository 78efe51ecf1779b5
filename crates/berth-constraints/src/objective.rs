//! Lowering the template objective (and the existing-placement bonus) to the solver's `Expr`.

use std::sync::Arc;

use berth_solver::{Expr, Sense, VarId};
use berth_template::{Endpoint, Expr as TExpr, Goal, ObjFunction};

use crate::ConstraintError;
use crate::geo::MAX_DISTANCE_KM;
use crate::lower::Lower;

/// Name of the filters the objective adds for candidates it cannot score (no coordinates,
/// no cost, no such attribute): they show in the triage under this name.
pub const OBJECTIVE: &str = "optimization";

/// Which metric a distance-like function measures.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Metric {
    Distance,
    Latency,
}

/// `cloud_region_version` as a number: `2.0` -> 2.0, `3.1.4` -> 3.1 (major.minor).
pub fn aic_version(text: &str) -> Option<f64> {
    let mut parts = text.trim().trim_start_matches(['v', 'V']).split('.');
    let major: u32 = parts.next()?.trim().parse().ok()?;
    let minor = parts.next().map(str::trim).filter(|s| !s.is_empty());
    match minor {
        Some(m) if m.chars().all(|c| c.is_ascii_digit()) => format!("{major}.{m}").parse().ok(),
        Some(_) => None,
        None => Some(f64::from(major)),
    }
}

impl Lower<'_> {
    /// Sets the problem's objective: the template's (if any) plus the existing-placement bonus.
    pub(crate) fn objective(&mut self) -> Result<(), ConstraintError> {
        let (sense, mut terms) = match &self.template.optimization {
            Some(o) => {
                let sense = match o.goal {
                    Goal::Minimize => Sense::Minimize,
                    Goal::Maximize => Sense::Maximize,
                };
                let e = self.expr(&o.expr)?;
                (sense, vec![(1.0, e)])
            }
            None => (Sense::Minimize, Vec::new()),
        };
        let bonus = self.env.existing_bonus;
        if bonus != 0.0 {
            let sign = if sense == Sense::Minimize { -1.0 } else { 1.0 };
            for (d, ds) in self.space.demands.iter().enumerate() {
                let Some(existing) = &ds.existing else {
                    continue;
                };
                if !ds.candidates.iter().any(|c| &c.candidate_id == existing) {
                    continue;
                }
                let costs: Arc<[f64]> = ds
                    .candidates
                    .iter()
                    .map(|c| {
                        if &c.candidate_id == existing {
                            sign * bonus
                        } else {
                            0.0
                        }
                    })
                    .collect();
                terms.push((1.0, Expr::unary(VarId(d as u32), costs)));
            }
        }
        let expr = match terms.len() {
            0 => Expr::Const(0.0),
            1 if terms[0].0 == 1.0 => terms.remove(0).1,
            _ => Expr::Sum(terms),
        };
        self.problem.set_objective(sense, expr);
        Ok(())
    }

    fn expr(&mut self, e: &TExpr) -> Result<Expr, ConstraintError> {
        Ok(match e {
            TExpr::Const(x) => Expr::Const(*x),
            TExpr::Sum(ts) => {
                let mut out = Vec::with_capacity(ts.len());
                for t in ts {
                    out.push(weighted(self.expr(t)?));
                }
                Expr::Sum(out)
            }
            TExpr::Product(fs) => {
                // Constant factors become the weight of a sum term: better bounds and ordering.
                let mut w = 1.0;
                let mut rest = Vec::new();
                for f in fs {
                    match f {
                        TExpr::Const(x) => w *= x,
                        other => rest.push(self.expr(other)?),
                    }
                }
                match rest.len() {
                    0 => Expr::Const(w),
                    1 => Expr::Sum(vec![(w, rest.remove(0))]),
                    _ => Expr::Sum(vec![(w, Expr::Product(rest))]),
                }
            }
            TExpr::Min(ts) => Expr::Min(ts.iter().map(|t| self.expr(t)).collect::<Result<_, _>>()?),
            TExpr::Max(ts) => Expr::Max(ts.iter().map(|t| self.expr(t)).collect::<Result<_, _>>()?),
            TExpr::Normalize { expr, start, end } => self.expr(expr)?.normalize(*start, *end),
            TExpr::Function(f) => self.function(f)?,
        })
    }

    fn function(&mut self, f: &ObjFunction) -> Result<Expr, ConstraintError> {
        match f {
            ObjFunction::DistanceBetween { a, b } => self.between(Metric::Distance, a, b),
            ObjFunction::LatencyBetween { a, b } => self.between(Metric::Latency, a, b),
            ObjFunction::Cost(d) => self.per_candidate(d, |c| c.cost),
            ObjFunction::AicVersion(d) => self.per_candidate(d, |c| {
                c.cloud_region_version.as_deref().and_then(aic_version)
            }),
            ObjFunction::Attribute { demand, name } => self.per_candidate(demand, |c| {
                c.attribute(name).and_then(|v| crate::attribute::number(&v))
            }),
            ObjFunction::HpaScore(d) => {
                let i = self.demand(OBJECTIVE, d)?;
                let Some(m) = self.hpa[i].clone() else {
                    return Err(ConstraintError::Unsupported {
                        origin: OBJECTIVE.to_owned(),
                        reason: format!("hpa_score({d}) needs an hpa constraint on demand `{d}`"),
                    });
                };
                // A higher HPA score is better: HAS inverts it under `minimize`.
                let sign = match self.template.optimization.as_ref().map(|o| o.goal) {
                    Some(Goal::Maximize) => 1.0,
                    _ => -1.0,
                };
                let costs: Arc<[f64]> = m
                    .iter()
                    .map(|x| x.as_ref().map_or(0.0, |h| sign * h.score))
                    .collect();
                Ok(Expr::unary(VarId(i as u32), costs))
            }
        }
    }

    /// A unary term from a per-candidate number; candidates without one are filtered out.
    fn per_candidate(
        &mut self,
        demand: &str,
        value: impl Fn(&berth_inventory::Candidate) -> Option<f64>,
    ) -> Result<Expr, ConstraintError> {
        let d = self.demand(OBJECTIVE, demand)?;
        let vals: Vec<Option<f64>> = self
            .candidates(d)
            .iter()
            .map(|c| value(c).filter(|x| x.is_finite()))
            .collect();
        self.filter(OBJECTIVE, d, |i, _| vals[i].is_some());
        let costs: Arc<[f64]> = vals.iter().map(|v| v.unwrap_or(0.0)).collect();
        Ok(Expr::unary(VarId(d as u32), costs))
    }

    fn between(
        &mut self,
        metric: Metric,
        a: &Endpoint,
        b: &Endpoint,
    ) -> Result<Expr, ConstraintError> {
        // Without a topology or a latency model, HAS's latency score is the air distance.
        let metric = if metric == Metric::Latency
            && self.env.latency.is_none()
            && self.env.topology.is_none()
        {
            Metric::Distance
        } else {
            metric
        };
        match (a, b) {
            (Endpoint::Demand(x), Endpoint::Demand(y)) => {
                let (i, j) = (self.demand(OBJECTIVE, x)?, self.demand(OBJECTIVE, y)?);
                if i == j {
                    return Ok(Expr::Const(0.0));
                }
                if metric == Metric::Latency {
                    self.need_latency(&[i, j], None)?;
                }
                for d in [i, j] {
                    let pts = self.sites.points[d].clone();
                    let leaves = self.sites.leaves[d].clone();
                    self.filter(OBJECTIVE, d, |k, _| {
                        pts[k].is_some() || (metric == Metric::Latency && leaves[k].is_some())
                    });
                }
                let link = self.link_fn(i, j);
                let upper = match metric {
                    Metric::Distance => MAX_DISTANCE_KM,
                    Metric::Latency => self
                        .env
                        .latency
                        .map_or(1e6, |m| m.latency_ms(MAX_DISTANCE_KM))
                        .max(1e6),
                };
                let cost = move |x: berth_solver::Value, y: berth_solver::Value| {
                    let l = link(x.index(), y.index());
                    let v = match metric {
                        Metric::Distance => l.and_then(|l| l.km),
                        Metric::Latency => l.and_then(|l| l.latency_ms),
                    };
                    v.filter(|v| v.is_finite()).unwrap_or(0.0).clamp(0.0, upper)
                };
                Ok(Expr::pair(
                    VarId(i as u32),
                    VarId(j as u32),
                    0.0,
                    upper,
                    cost,
                ))
            }
            (Endpoint::Location(l), Endpoint::Demand(d))
            | (Endpoint::Demand(d), Endpoint::Location(l)) => {
                let i = self.demand(OBJECTIVE, d)?;
                let leaf = self.env.topology.as_ref().and_then(|t| t.leaf(l));
                let point = self
                    .space
                    .locations
                    .get(l)
                    .map(|&(a, b)| crate::geo::Point::new(a, b));
                if point.is_none() && (metric == Metric::Distance || leaf.is_none()) {
                    return Err(ConstraintError::UnlocatedLocation {
                        origin: OBJECTIVE.to_owned(),
                        location: l.clone(),
                    });
                }
                if metric == Metric::Latency {
                    self.need_latency(&[i], Some(leaf))?;
                }
                let f = self.location_link_fn(i, point, leaf);
                let vals: Vec<Option<f64>> = (0..self.candidates(i).len())
                    .map(|k| {
                        let l = f(k)?;
                        match metric {
                            Metric::Distance => l.km,
                            Metric::Latency => l.latency_ms,
                        }
                    })
                    .collect();
                self.filter(OBJECTIVE, i, |k, _| vals[k].is_some());
                let costs: Arc<[f64]> = vals.iter().map(|v| v.unwrap_or(0.0)).collect();
                Ok(Expr::unary(VarId(i as u32), costs))
            }
            (Endpoint::Location(x), Endpoint::Location(y)) => {
                let p = self.space.locations.get(x).ok_or_else(|| {
                    ConstraintError::UnlocatedLocation {
                        origin: OBJECTIVE.to_owned(),
                        location: x.clone(),
                    }
                })?;
                let q = self.space.locations.get(y).ok_or_else(|| {
                    ConstraintError::UnlocatedLocation {
                        origin: OBJECTIVE.to_owned(),
                        location: y.clone(),
                    }
                })?;
                let km = crate::geo::haversine_km(*p, *q);
                match metric {
                    Metric::Distance => Ok(Expr::Const(km)),
                    Metric::Latency => match self.env.latency {
                        Some(m) => Ok(Expr::Const(m.latency_ms(km))),
                        None => Err(ConstraintError::NoLatencyModel {
                            origin: OBJECTIVE.to_owned(),
                            reason: format!("locations `{x}` and `{y}` have no topology path"),
                        }),
                    },
                }
            }
        }
    }

    /// Latency needs a topology path for every candidate, or a latency model.
    fn need_latency(
        &self,
        ds: &[usize],
        location_leaf: Option<Option<berth_topology::LeafId>>,
    ) -> Result<(), ConstraintError> {
        if self.env.latency.is_some() {
            return Ok(());
        }
        let reason = if self.env.topology.is_none() {
            Some("no topology is loaded".to_owned())
        } else if location_leaf == Some(None) {
            Some("the location is not a topology node".to_owned())
        } else {
            ds.iter().find_map(|&d| {
                self.sites.leaves[d]
                    .iter()
                    .position(Option::is_none)
                    .map(|k| {
                        format!(
                            "candidate `{}` of demand `{}` names no topology node",
                            self.candidates(d)[k].candidate_id,
                            self.space.demands[d].name
                        )
                    })
            })
        };
        match reason {
            Some(reason) => Err(ConstraintError::NoLatencyModel {
                origin: OBJECTIVE.to_owned(),
                reason,
            }),
            None => Ok(()),
        }
    }
}

/// A lowered expression as a sum term: `Sum([(w, e)])` unwraps to `(w, e)`.
fn weighted(e: Expr) -> (f64, Expr) {
    match e {
        Expr::Sum(mut ts) if ts.len() == 1 => ts.remove(0),
        other => (1.0, other),
    }
}

#[cfg(test)]
mod tests {
    use super::aic_version;

    #[test]
    fn versions() {
        assert_eq!(aic_version("2.0"), Some(2.0));
        assert_eq!(aic_version("3.1.4"), Some(3.1));
        assert_eq!(aic_version("v4"), Some(4.0));
        assert_eq!(aic_version("x"), None);
    }
}
