//! `plan`: resolve the inventory, lower the constraints, solve, and report the outcome.

use std::collections::BTreeSet;
use std::sync::Arc;

use berth_constraints::{Environment, Lowered, lower};
use berth_inventory::{Candidate, InventoryProvider};
use berth_solver::{
    Expr, Outcome, Problem, Sense, SolveOptions, StopReason, Triage, Unique, VarId,
};
use berth_template::Template;
use indexmap::IndexMap;

use crate::cloud;
use crate::options::{ClockDeadline, SystemClock};
use crate::outcome::{DemandTriage, PlanOutcome, PlanSolution, PlanStats, Status};
use crate::resolve::{Resolution, resolve};
use crate::{Clock, EngineError, PlanOptions};

/// Homes the demands of a resolved `template` onto candidates of `provider`.
///
/// Returns a [`PlanOutcome`] whenever the question could be asked: "solved" (the k best
/// plans, `optimal` when the search completed), or "not found" (infeasible, with the
/// constraints that together leave no plan in the message; or stopped by a limit first).
/// Errors are for input that cannot be interpreted ([`EngineError::code`] classifies them).
pub fn plan(
    template: &Template,
    provider: &dyn InventoryProvider,
    opts: &PlanOptions,
) -> Result<PlanOutcome, EngineError> {
    let clock: Arc<dyn Clock> = opts
        .clock
        .clone()
        .unwrap_or_else(|| Arc::new(SystemClock::new()));
    let start = clock.now();
    if opts.solutions == 0 {
        return Err(EngineError::invalid(
            "asked for 0 solutions; expected at least 1",
        ));
    }
    if !opts.existing_bonus.is_finite() {
        return Err(EngineError::invalid(format!(
            "existing placement bonus is {}; expected a finite number",
            opts.existing_bonus
        )));
    }
    if let Some(m) = opts.latency
        && !(m.ms_per_km.is_finite()
            && m.ms_per_km >= 0.0
            && m.fixed_ms.is_finite()
            && m.fixed_ms >= 0.0)
    {
        return Err(EngineError::invalid(
            "latency model has a negative or non-finite term; expected finite numbers >= 0",
        ));
    }
    let unserved = crate::resolve::unserved(template, provider);
    if !unserved.is_empty() {
        return Err(EngineError::InvalidInput {
            problems: unserved.iter().map(ToString::to_string).collect(),
        });
    }
    let mut res = resolve(template, provider)?;
    let applied = match &opts.cloud_policy {
        Some(input) => Some(cloud::apply(&mut res, input, template)?),
        None => None,
    };
    let env = Environment {
        provider,
        controllers: opts.controllers.clone(),
        topology: opts.topology.clone(),
        latency: opts.latency,
        existing_bonus: opts.existing_bonus,
    };
    let mut lowered = lower(template, &res.space, &env).map_err(EngineError::from_constraints)?;
    if let Some(applied) = &applied {
        add_net_value(&mut lowered.problem, applied);
    }
    let unique = if opts.unique {
        Unique::All
    } else if res.unique.is_empty() {
        Unique::Off
    } else {
        Unique::Vars(res.unique.iter().map(|&d| VarId(d as u32)).collect())
    };
    let deadline = opts.time_limit.map(|t| {
        Arc::new(ClockDeadline {
            clock: clock.clone(),
            at: start + t,
        }) as Arc<dyn berth_solver::Deadline>
    });
    let solve_opts = SolveOptions {
        solutions: opts.solutions,
        unique,
        node_limit: opts.node_limit,
        deadline,
        stop_at_first: opts.first_plan,
        progress: opts.progress.clone(),
        threads: opts.threads,
        ..SolveOptions::default()
    };
    let outcome = lowered
        .problem
        .solve(&solve_opts)
        .map_err(|e| EngineError::Internal {
            message: format!("the solver rejected the lowered problem: {e}"),
        })?;
    let mut out = report(&res, &lowered, applied.as_ref(), &outcome);
    add_demand_echoes(&mut out, template);
    out.stats.elapsed_ms =
        u64::try_from(clock.now().saturating_sub(start).as_millis()).unwrap_or(u64::MAX);
    Ok(out)
}

/// What HAS echoes from a demand into its recommendation: `service_resource_id` (the
/// first requirement's that has one) and `passthrough_attributes` (all requirements', first
/// wins), copied into the demand's placements under those names.
fn add_demand_echoes(out: &mut PlanOutcome, template: &Template) {
    for demand in template.demands.values() {
        let mut pass = serde_json::Map::new();
        for r in &demand.requirements {
            for (k, v) in &r.passthrough_attributes {
                pass.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        let resource_id = demand
            .requirements
            .iter()
            .find_map(|r| r.service_resource_id.clone());
        for s in &mut out.solutions {
            let Some(p) = s.placements.get_mut(&demand.name) else {
                continue;
            };
            if !pass.is_empty() {
                p.insert(
                    "passthrough_attributes".to_owned(),
                    serde_json::Value::Object(pass.clone()),
                );
            }
            if let Some(id) = &resource_id {
                p.insert(
                    "service_resource_id".to_owned(),
                    serde_json::Value::String(id.clone()),
                );
            }
        }
    }
}

/// Adds each cloud policy demand's net value as a unary term: lower is better, so it is
/// subtracted when the template maximizes. Unary terms keep the solver's bounds admissible.
fn add_net_value(p: &mut Problem, applied: &cloud::Applied) {
    let sign = match p.sense() {
        Sense::Minimize => 1.0,
        Sense::Maximize => -1.0,
    };
    let mut terms = vec![(1.0, p.objective().clone())];
    for (d, scores) in applied.iter().enumerate() {
        let Some(scores) = scores else { continue };
        if scores.is_empty() {
            continue;
        }
        let costs: Vec<f64> = scores
            .iter()
            .map(|s| s.as_ref().map_or(0.0, |s| s.objective_term))
            .collect();
        terms.push((sign, Expr::unary(VarId(d as u32), costs)));
    }
    if terms.len() > 1 {
        let sense = p.sense();
        p.set_objective(sense, Expr::sum(terms));
    }
}

fn limit_name(s: Option<StopReason>) -> &'static str {
    match s {
        Some(StopReason::NodeLimit) => "node limit",
        Some(StopReason::FirstPlan) => "first-plan option",
        _ => "time limit",
    }
}

fn report(
    res: &Resolution,
    lowered: &Lowered,
    applied: Option<&cloud::Applied>,
    outcome: &Outcome,
) -> PlanOutcome {
    let p = &lowered.problem;
    let stats = outcome.stats();
    let (status, optimal, message, triage) = match outcome {
        Outcome::Solved {
            solutions,
            optimal,
            triage,
            stats,
            ..
        } => {
            let n = solutions.len();
            let plans = if n == 1 {
                "1 plan".to_owned()
            } else {
                format!("{n} plans")
            };
            let msg = if *optimal {
                format!("{plans} found, proven optimal")
            } else {
                format!(
                    "{plans} found; the {} stopped the search before optimality was proven",
                    limit_name(stats.stopped)
                )
            };
            (Status::Solved, *optimal, msg, triage)
        }
        Outcome::Infeasible { explanation, .. } => {
            let mut names: Vec<&str> = Vec::new();
            let mut seen = BTreeSet::new();
            for c in &explanation.conflict {
                let name = p.constraint_name(*c);
                if seen.insert(name) {
                    names.push(name);
                }
            }
            let mut msg = match names.as_slice() {
                [] => "no plan".to_owned(),
                [one] => format!("no plan: constraint `{one}` leaves no plan"),
                many => format!(
                    "no plan: constraints {} together leave no plan",
                    many.iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            if !explanation.minimal && !names.is_empty() {
                msg.push_str(" (not proven minimal)");
            }
            if let Some(w) = explanation.wiped_out {
                let d = w.index();
                let name = p.var_name(w);
                let offered = res.inventory.get(d).map_or(0, |i| i.0);
                let absent = absent_notes(res, d, name);
                if offered == 0 && !absent.is_empty() {
                    msg.push_str(&format!(
                        "; demand `{name}` has no candidates: {}",
                        absent.join("; ")
                    ));
                } else if p.domain_size(w) == 0 {
                    msg.push_str(&format!("; demand `{name}` has no candidates ({offered} offered, all removed by inventory filters)"));
                } else {
                    msg.push_str(&format!("; demand `{name}` has no candidate left"));
                }
            }
            (Status::NotFound, false, msg, &explanation.triage)
        }
        Outcome::Stopped { triage, stats } => (
            Status::NotFound,
            false,
            format!(
                "no plan found before the {} stopped the search",
                limit_name(stats.stopped)
            ),
            triage,
        ),
    };
    let solutions = outcome
        .solutions()
        .iter()
        .map(|s| PlanSolution {
            objective: s.objective,
            placements: p
                .vars()
                .map(|x| {
                    (
                        p.var_name(x).to_owned(),
                        placement(
                            res,
                            lowered,
                            applied,
                            x,
                            s.values.get(x.index()).map_or(0, |v| v.index()),
                        ),
                    )
                })
                .collect(),
        })
        .collect();
    // The bound is the solver's on the score, which is the objective: the lowered problem
    // has no soft constraint.
    let bound = outcome.bound();
    let gap = bound
        .zip(outcome.solutions().first())
        .map(|(b, s)| crate::outcome::relative_gap(s.score, b));
    PlanOutcome {
        status,
        optimal,
        bound,
        gap,
        message,
        solutions,
        triage: triage_map(res, p, triage),
        stats: PlanStats {
            nodes: stats.nodes,
            elapsed_ms: 0,
        },
    }
}

/// The candidate's fields as JSON (nulls, empty collections and flavors left out), plus the
/// HPA flavors chosen when an `hpa` constraint applies (`flavor_map`, `hpa_score`, HAS's
/// `directives`), plus the realized intent, cost and
/// net value when a cloud policy applies.
fn placement(
    res: &Resolution,
    lowered: &Lowered,
    applied: Option<&cloud::Applied>,
    x: VarId,
    v: usize,
) -> serde_json::Map<String, serde_json::Value> {
    let d = x.index();
    let Some(c) = res.space.demands.get(d).and_then(|ds| ds.candidates.get(v)) else {
        return serde_json::Map::new();
    };
    let mut m = candidate_json(c);
    if let Some(h) = lowered
        .hpa
        .get(d)
        .and_then(Option::as_ref)
        .and_then(|h| h.get(v))
        .and_then(Option::as_ref)
    {
        let map: serde_json::Map<String, serde_json::Value> = h
            .flavors
            .iter()
            .map(|(k, f)| (k.clone(), serde_json::Value::String(f.clone())))
            .collect();
        m.insert("flavor_map".to_owned(), serde_json::Value::Object(map));
        m.insert("hpa_score".to_owned(), serde_json::json!(h.score));
        m.insert(
            "directives".to_owned(),
            serde_json::json!({"directives": h.directives}),
        );
    }
    if let Some(p) = applied
        .and_then(|a| a.get(d))
        .and_then(Option::as_ref)
        .and_then(|s| s.get(v))
        .and_then(Option::as_ref)
    {
        let s = &p.scored;
        if let Ok(r) = serde_json::to_value(&s.realized) {
            m.insert("realized_intent".to_owned(), r);
        }
        if let Some(c) = s.cost.as_ref().and_then(|c| serde_json::to_value(c).ok()) {
            m.insert("deployment_cost".to_owned(), c);
        }
        m.insert("cloud_net_value".to_owned(), serde_json::json!(s.net_value));
        m.insert(
            "cloud_objective_term".to_owned(),
            serde_json::json!(p.objective_term),
        );
    }
    m
}

/// A candidate as a JSON object: `candidate_id` first, then its set fields.
pub fn candidate_json(c: &Candidate) -> serde_json::Map<String, serde_json::Value> {
    let mut out = serde_json::Map::new();
    if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(c) {
        for (k, v) in m {
            let empty = match &v {
                serde_json::Value::Null => true,
                serde_json::Value::Array(a) => a.is_empty(),
                serde_json::Value::Object(o) => o.is_empty(),
                _ => false,
            };
            if !empty && k != "flavors" {
                out.insert(k, v);
            }
        }
    }
    out
}

/// The triage lines of a demand whose inventory offered nothing: `demands.D[i]: why`.
fn absent_notes(res: &Resolution, d: usize, name: &str) -> Vec<String> {
    res.absent.get(d).map_or_else(Vec::new, |a| {
        a.iter()
            .map(|(ri, why)| format!("demands.{name}[{ri}]: {why}"))
            .collect()
    })
}

fn triage_map(res: &Resolution, p: &Problem, t: &Triage) -> IndexMap<String, DemandTriage> {
    let mut out = IndexMap::new();
    for x in p.vars() {
        let d = x.index();
        let mut removed = IndexMap::new();
        let (offered, inv) = res
            .inventory
            .get(d)
            .map_or((0, &[][..]), |(n, r)| (*n, r.as_slice()));
        for (id, why) in inv {
            removed.insert(id.to_string(), why.clone());
        }
        if let Some(vt) = t.vars.get(d) {
            for (val, c) in &vt.removed {
                removed
                    .entry(p.value_label(x, *val))
                    .or_insert_with(|| p.constraint_name(*c).to_owned());
            }
        }
        out.insert(
            p.var_name(x).to_owned(),
            DemandTriage {
                candidates: offered,
                removed,
                absent: absent_notes(res, d, p.var_name(x)),
            },
        );
    }
    out
}
