//! Reading `optimization` in either form and lowering it to one [`Expr`].
//!
//! Seed form (versions before 2020-08-13): `{minimize|maximize: operand}` where an operand is a
//! number, `{sum|product|min|max: [operands]}` or a function call such as
//! `{distance_between: [cl, vG1]}`. Generic form (2020-08-13): `{goal, operation_function:
//! {operator, operands: [{function, params, weight, normalization} | {operation_function, ...}]}}`.

use berth_doc::{Kind, Map, Path, Value};
use indexmap::IndexMap;

use super::Reader;
use crate::model::{
    Constraint, ConstraintKind, Endpoint, Expr, Goal, ObjFunction, Objective, Version,
};
use crate::suggest::did_you_mean;

const OPERATORS: [&str; 4] = ["sum", "product", "min", "max"];
const FUNCTIONS: [&str; 6] = [
    "distance_between",
    "latency_between",
    "cost",
    "hpa_score",
    "aic_version",
    "attribute",
];
const GENERIC_OPERATORS: [&str; 3] = ["sum", "min", "max"];
const OPERAND_KEYS: [&str; 5] = [
    "function",
    "params",
    "weight",
    "normalization",
    "operation_function",
];

/// Builds `Sum`/`Product`/`Min`/`Max`, splicing nested nodes of the same associative kind.
pub(crate) fn combine(op: &str, terms: Vec<Expr>) -> Expr {
    let mut flat = Vec::with_capacity(terms.len());
    for t in terms {
        match (op, t) {
            ("sum", Expr::Sum(inner)) | ("product", Expr::Product(inner)) => flat.extend(inner),
            ("min", Expr::Min(inner)) | ("max", Expr::Max(inner)) => flat.extend(inner),
            (_, t) => flat.push(t),
        }
    }
    match op {
        "sum" => Expr::Sum(flat),
        "product" => Expr::Product(flat),
        "min" => Expr::Min(flat),
        _ => Expr::Max(flat),
    }
}

impl Reader<'_> {
    pub(crate) fn optimization(
        &mut self,
        v: &Value,
        path: &Path,
        version: Option<Version>,
        constraints: &IndexMap<String, Constraint>,
    ) -> Option<Objective> {
        let m = self.map(v, path, "an optimization mapping")?;
        let generic = m.get("goal").is_some() || m.get("operation_function").is_some();
        if let Some(version) = version
            && generic != version.generic_objective()
        {
            let msg = if generic {
                format!(
                    "the `goal`/`operation_function` optimization form needs homing_template_version 2020-08-13; found {version}"
                )
            } else {
                format!(
                    "homing_template_version {version} takes the `goal`/`operation_function` optimization form; found a seed-form optimization"
                )
            };
            self.error(path, v.pos, msg);
            return None;
        }
        let objective = if generic {
            self.generic(m, path, v)?
        } else {
            self.seed(m, path, v)?
        };
        self.check_hpa_scores(&objective.expr, path, v, constraints);
        Some(objective)
    }

    /// `hpa_score` of a demand no `hpa` constraint applies to is always 0 (HAS rejects it).
    fn check_hpa_scores(
        &mut self,
        e: &Expr,
        path: &Path,
        v: &Value,
        constraints: &IndexMap<String, Constraint>,
    ) {
        let mut todo = vec![e];
        while let Some(e) = todo.pop() {
            match e {
                Expr::Sum(xs) | Expr::Product(xs) | Expr::Min(xs) | Expr::Max(xs) => {
                    todo.extend(xs)
                }
                Expr::Normalize { expr, .. } => todo.push(expr),
                Expr::Function(ObjFunction::HpaScore(d)) => {
                    let covered = constraints
                        .values()
                        .any(|c| matches!(c.kind, ConstraintKind::Hpa(_)) && c.demands.contains(d));
                    if !covered {
                        self.warning(path, v.pos, format!("hpa_score of demand `{d}` but no hpa constraint applies to it; expected an hpa constraint on that demand"));
                    }
                }
                Expr::Const(_) | Expr::Function(_) => {}
            }
        }
    }

    fn seed(&mut self, m: &Map, path: &Path, v: &Value) -> Option<Objective> {
        if m.len() != 1 {
            let keys: Vec<&str> = m.iter().map(|(k, _)| k.name.as_str()).collect();
            self.error(
                path,
                v.pos,
                format!(
                    "expected exactly one goal, `minimize` or `maximize`; found {}",
                    if keys.is_empty() {
                        "none".to_owned()
                    } else {
                        keys.join(", ")
                    }
                ),
            );
            return None;
        }
        let (k, operand) = m.iter().next()?;
        let goal = match k.name.as_str() {
            "minimize" => Goal::Minimize,
            "maximize" => Goal::Maximize,
            other => {
                let msg = format!(
                    "unknown goal `{other}`; expected minimize or maximize{}",
                    did_you_mean(other, ["minimize", "maximize"])
                );
                self.error(&path.key(other), k.pos, msg);
                return None;
            }
        };
        let expr = self.operand(operand, &path.key(&k.name))?;
        Some(Objective { goal, expr })
    }

    /// A seed-form operand.
    fn operand(&mut self, v: &Value, path: &Path) -> Option<Expr> {
        match &v.kind {
            Kind::Int(_) | Kind::Float(_) => Some(Expr::Const(self.number(v, path)?)),
            // HAS writes weights as strings ("1").
            Kind::Str(s) if s.trim().parse::<f64>().is_ok() => {
                Some(Expr::Const(self.number(v, path)?))
            }
            Kind::Map(m) if m.len() == 1 => {
                let (k, arg) = m.iter().next()?;
                let kp = path.key(&k.name);
                let name = k.name.as_str();
                if OPERATORS.contains(&name) {
                    let Some(items) = arg.as_seq() else {
                        self.type_error(&kp, arg, &format!("a list of operands for `{name}`"));
                        return None;
                    };
                    if items.is_empty() {
                        self.error(
                            &kp,
                            arg.pos,
                            format!("`{name}` needs at least one operand; found an empty list"),
                        );
                        return None;
                    }
                    let mut terms = Vec::with_capacity(items.len());
                    let mut ok = true;
                    for (i, item) in items.iter().enumerate() {
                        match self.operand(item, &kp.index(i)) {
                            Some(t) => terms.push(t),
                            None => ok = false,
                        }
                    }
                    return ok.then(|| combine(name, terms));
                }
                if FUNCTIONS.contains(&name) {
                    return self.seed_function(name, arg, &kp);
                }
                let all: Vec<&str> = OPERATORS.iter().chain(FUNCTIONS.iter()).copied().collect();
                let msg = format!(
                    "unknown operator or function `{name}`; expected one of {}{}",
                    all.join(", "),
                    did_you_mean(name, all.iter().copied())
                );
                self.error(&kp, k.pos, msg);
                None
            }
            Kind::Map(m) => {
                let keys: Vec<&str> = m.iter().map(|(k, _)| k.name.as_str()).collect();
                self.error(
                    path,
                    v.pos,
                    format!(
                        "expected one operator or function per mapping; found keys {}",
                        if keys.is_empty() {
                            "(none)".to_owned()
                        } else {
                            keys.join(", ")
                        }
                    ),
                );
                None
            }
            _ => {
                self.type_error(
                    path,
                    v,
                    "a number, an operator (sum, product, min, max) or a function",
                );
                None
            }
        }
    }

    fn seed_function(&mut self, name: &str, arg: &Value, path: &Path) -> Option<Expr> {
        match name {
            "distance_between" | "latency_between" => {
                let pair = match arg.as_seq() {
                    Some([a, b]) => Some((a, b)),
                    _ => None,
                };
                let Some((a, b)) = pair else {
                    self.type_error(
                        path,
                        arg,
                        &format!("a two-element list for `{name}`, e.g. [customer_loc, vG]"),
                    );
                    return None;
                };
                let ea = self.endpoint(a, &path.index(0));
                let eb = self.endpoint(b, &path.index(1));
                self.pair(name, ea?, eb?, path, arg)
            }
            "cost" | "hpa_score" | "aic_version" => {
                let names: Vec<(usize, &Value)> = match &arg.kind {
                    Kind::Seq(items) if !items.is_empty() => items.iter().enumerate().collect(),
                    Kind::Str(_) => vec![(0, arg)],
                    _ => {
                        self.type_error(
                            path,
                            arg,
                            &format!("a demand name or a list of demand names for `{name}`"),
                        );
                        return None;
                    }
                };
                let single = arg.as_str().is_some();
                let mut terms = Vec::new();
                for (i, item) in names {
                    let p = if single { path.clone() } else { path.index(i) };
                    let d = self.demand_ref(item, &p)?;
                    terms.push(Expr::Function(match name {
                        "cost" => ObjFunction::Cost(d),
                        "hpa_score" => ObjFunction::HpaScore(d),
                        _ => ObjFunction::AicVersion(d),
                    }));
                }
                // Several demands mean the sum of their values.
                Some(if terms.len() == 1 {
                    terms.remove(0)
                } else {
                    combine("sum", terms)
                })
            }
            _ => {
                // attribute: [demand, name] or {demand, attribute}.
                let (d, a, dp, ap) = match &arg.kind {
                    Kind::Seq(items) if items.len() == 2 => {
                        (&items[0], &items[1], path.index(0), path.index(1))
                    }
                    Kind::Map(m) if m.get("demand").is_some() && m.get("attribute").is_some() => {
                        self.check_keys(m, path, &["demand", "attribute"], "attribute arguments");
                        (
                            m.get("demand")?,
                            m.get("attribute")?,
                            path.key("demand"),
                            path.key("attribute"),
                        )
                    }
                    _ => {
                        self.type_error(
                            path,
                            arg,
                            "[demand, attribute] or {demand, attribute} for `attribute`",
                        );
                        return None;
                    }
                };
                let demand = self.demand_ref(d, &dp);
                let attr = self.name(a, &ap, "an attribute name");
                Some(Expr::Function(ObjFunction::Attribute {
                    demand: demand?,
                    name: attr?,
                }))
            }
        }
    }

    /// A location or demand name; ambiguous and unknown names are errors.
    fn endpoint(&mut self, v: &Value, path: &Path) -> Option<Endpoint> {
        let name = self.name(v, path, "a location or demand name")?;
        let is_demand = self.demand_names.contains(&name);
        let is_location = self.location_names.contains(&name);
        match (is_demand, is_location) {
            (true, false) => Some(Endpoint::Demand(name)),
            (false, true) => Some(Endpoint::Location(name)),
            (true, true) => {
                self.error(
                    path,
                    v.pos,
                    format!("`{name}` names both a demand and a location; expected distinct names"),
                );
                None
            }
            (false, false) => {
                let all = self
                    .demand_names
                    .iter()
                    .chain(self.location_names.iter())
                    .map(String::as_str)
                    .collect::<Vec<_>>();
                let hint = did_you_mean(&name, all);
                self.error(
                    path,
                    v.pos,
                    format!("undefined `{name}`; expected a declared demand or location{hint}"),
                );
                None
            }
        }
    }

    fn pair(
        &mut self,
        name: &str,
        a: Endpoint,
        b: Endpoint,
        path: &Path,
        v: &Value,
    ) -> Option<Expr> {
        if matches!((&a, &b), (Endpoint::Location(_), Endpoint::Location(_))) {
            self.error(
                path,
                v.pos,
                format!(
                    "`{name}` between two locations is a constant; expected at least one demand"
                ),
            );
            return None;
        }
        Some(Expr::Function(if name == "distance_between" {
            ObjFunction::DistanceBetween { a, b }
        } else {
            ObjFunction::LatencyBetween { a, b }
        }))
    }

    fn generic(&mut self, m: &Map, path: &Path, v: &Value) -> Option<Objective> {
        self.check_keys(
            m,
            path,
            &["goal", "operation_function"],
            "a 2020-08-13 optimization",
        );
        let goal = self
            .required(m, "goal", path, v.pos, "a 2020-08-13 optimization")
            .and_then(|g| match self.text(g, &path.key("goal"))?.as_str() {
                "minimize" => Some(Goal::Minimize),
                "maximize" => Some(Goal::Maximize),
                other => {
                    self.error(
                        &path.key("goal"),
                        g.pos,
                        format!("unknown goal `{other}`; expected minimize or maximize"),
                    );
                    None
                }
            });
        let expr = self
            .required(
                m,
                "operation_function",
                path,
                v.pos,
                "a 2020-08-13 optimization",
            )
            .and_then(|f| self.operation_function(f, &path.key("operation_function")));
        Some(Objective {
            goal: goal?,
            expr: expr?,
        })
    }

    fn operation_function(&mut self, v: &Value, path: &Path) -> Option<Expr> {
        let m = self.map(
            v,
            path,
            "an operation_function mapping {operator, operands}",
        )?;
        self.check_keys(m, path, &["operator", "operands"], "an operation_function");
        let what = "an operation_function";
        let op = self
            .required(m, "operator", path, v.pos, what)
            .and_then(|o| {
                let s = self.text(o, &path.key("operator"))?;
                if GENERIC_OPERATORS.contains(&s.as_str()) {
                    Some(s)
                } else {
                    self.error(
                        &path.key("operator"),
                        o.pos,
                        format!("unknown operator `{s}`; expected one of sum, min, max"),
                    );
                    None
                }
            });
        let op_path = path.key("operands");
        let terms = self
            .required(m, "operands", path, v.pos, what)
            .and_then(|ops| {
                let Some(items) = ops.as_seq() else {
                    self.type_error(&op_path, ops, "a list of operands");
                    return None;
                };
                if items.is_empty() {
                    self.error(
                        &op_path,
                        ops.pos,
                        "expected at least one operand; found an empty list",
                    );
                    return None;
                }
                let mut terms = Vec::new();
                let mut ok = true;
                for (i, item) in items.iter().enumerate() {
                    match self.generic_operand(item, &op_path.index(i)) {
                        Some(t) => terms.push(t),
                        None => ok = false,
                    }
                }
                ok.then_some(terms)
            });
        Some(combine(&op?, terms?))
    }

    fn generic_operand(&mut self, v: &Value, path: &Path) -> Option<Expr> {
        let m = self.map(
            v,
            path,
            "an operand mapping {function, params, weight, normalization}",
        )?;
        self.check_keys(m, path, &OPERAND_KEYS, "an operand");
        let base = match (m.get("function"), m.get("operation_function")) {
            (Some(_), Some(_)) => {
                self.error(
                    path,
                    v.pos,
                    "an operand has both `function` and `operation_function`; expected one",
                );
                return None;
            }
            (Some(f), None) => {
                let fname = self.text(f, &path.key("function"))?;
                self.generic_function(&fname, f, m.get("params"), path, v)
            }
            (None, Some(of)) => self.operation_function(of, &path.key("operation_function")),
            (None, None) => {
                self.error(path, v.pos, "missing `function` (or a nested `operation_function`); an operand requires one");
                None
            }
        };
        let weight = match m.get("weight").filter(|w| !w.is_null()) {
            Some(w) => Some(self.number(w, &path.key("weight"))?),
            None => None,
        };
        let normalization = match m.get("normalization").filter(|n| !n.is_null()) {
            Some(n) => Some(self.normalization(n, &path.key("normalization"))?),
            None => None,
        };
        let mut expr = base?;
        if let Some((start, end)) = normalization {
            expr = Expr::Normalize {
                expr: Box::new(expr),
                start,
                end,
            };
        }
        if let Some(w) = weight {
            expr = combine("product", vec![Expr::Const(w), expr]);
        }
        Some(expr)
    }

    fn normalization(&mut self, v: &Value, path: &Path) -> Option<(f64, f64)> {
        let m = self.map(v, path, "a normalization mapping {start, end}")?;
        self.check_keys(m, path, &["start", "end"], "a normalization");
        let start = self
            .required(m, "start", path, v.pos, "a normalization")
            .and_then(|s| self.number(s, &path.key("start")));
        let end = self
            .required(m, "end", path, v.pos, "a normalization")
            .and_then(|e| self.number(e, &path.key("end")));
        let (start, end) = (start?, end?);
        if start == end {
            self.error(
                path,
                v.pos,
                format!("normalization start and end are both {start}; expected different values"),
            );
            return None;
        }
        Some((start, end))
    }

    fn generic_function(
        &mut self,
        name: &str,
        f: &Value,
        params: Option<&Value>,
        path: &Path,
        v: &Value,
    ) -> Option<Expr> {
        if !FUNCTIONS.contains(&name) {
            let msg = format!(
                "unknown function `{name}`; expected one of {}{}",
                FUNCTIONS.join(", "),
                did_you_mean(name, FUNCTIONS)
            );
            self.error(&path.key("function"), f.pos, msg);
            return None;
        }
        let pp = path.key("params");
        let Some(params) = params.filter(|p| !p.is_null()) else {
            self.error(
                path,
                v.pos,
                format!("missing `params`; function `{name}` requires them"),
            );
            return None;
        };
        let pm = self.map(params, &pp, "a params mapping")?;
        let what = format!("function `{name}`");
        match name {
            "distance_between" | "latency_between" => {
                self.check_keys(
                    pm,
                    &pp,
                    &["demand", "location", "demands"],
                    &format!("{name} params"),
                );
                if let Some(ds) = pm.get("demands") {
                    // Demand-to-demand: `demands: [a, b]`.
                    let dp = pp.key("demands");
                    let pair = match ds.as_seq() {
                        Some([a, b]) => Some((a, b)),
                        _ => None,
                    };
                    let Some((a, b)) = pair else {
                        self.type_error(&dp, ds, "a list of two demand names");
                        return None;
                    };
                    let a = self.demand_ref(a, &dp.index(0));
                    let b = self.demand_ref(b, &dp.index(1));
                    return self.pair(name, Endpoint::Demand(a?), Endpoint::Demand(b?), path, v);
                }
                let d = self
                    .required(pm, "demand", &pp, params.pos, &what)
                    .and_then(|d| self.demand_ref(d, &pp.key("demand")));
                let l = self
                    .required(pm, "location", &pp, params.pos, &what)
                    .and_then(|l| self.location_ref(l, &pp.key("location")));
                self.pair(name, Endpoint::Location(l?), Endpoint::Demand(d?), path, v)
            }
            "attribute" => {
                self.check_keys(pm, &pp, &["demand", "attribute"], "attribute params");
                let d = self
                    .required(pm, "demand", &pp, params.pos, &what)
                    .and_then(|d| self.demand_ref(d, &pp.key("demand")));
                let a = self
                    .required(pm, "attribute", &pp, params.pos, &what)
                    .and_then(|a| self.name(a, &pp.key("attribute"), "an attribute name"));
                Some(Expr::Function(ObjFunction::Attribute {
                    demand: d?,
                    name: a?,
                }))
            }
            _ => {
                self.check_keys(pm, &pp, &["demand"], &format!("{name} params"));
                let d = self
                    .required(pm, "demand", &pp, params.pos, &what)
                    .and_then(|d| self.demand_ref(d, &pp.key("demand")))?;
                Some(Expr::Function(match name {
                    "cost" => ObjFunction::Cost(d),
                    "hpa_score" => ObjFunction::HpaScore(d),
                    _ => ObjFunction::AicVersion(d),
                }))
            }
        }
    }
}
