//! Network slicing: "create new" slice-profile candidates generated from a requirement, and
//! `default_attributes` laid over the candidates a requirement resolves to.
//!
//! A `slice_profiles` requirement whose `filtering_attributes` has `subnets` is not looked up
//! in an inventory; its candidates are generated, as HAS's `generator` provider does:
//! - `subnets`: subnet name -> attribute -> either `{values: [..]}` or a range
//!   `{min, max, steps}` (from `min` up to but excluding `max`, `steps` apart; `min`
//!   defaults to 1 and `steps` to 1). Every combination of every subnet's values is one
//!   candidate, at most [`MAX_COMBINATIONS`].
//! - The slice-level value of an attribute aggregates the subnets' values: `latency` and
//!   `jitter` add up, `throughput` takes the smallest, any other the first subnet's (in
//!   document order) that has one.
//! - `service_profile`: attribute -> `{value, operator}` (`lte`, `gte`, `eq`, `lt`, `gt`);
//!   combinations whose slice-level value fails (or lacks) a bound are not offered.
//! - A candidate carries the slice-level attributes, each subnet's as `<subnet>_<name>`, and
//!   the requirement's `default_attributes`; its id is `<demand>-slice-profile-<n>`
//!   (1-based, in generation order), so plans are deterministic.

use std::collections::BTreeMap;

use berth_inventory::{AttrValue, Candidate, InventoryType};
use berth_template::Opaque;
use indexmap::IndexMap;
use serde_json::Value;

/// The most combinations one requirement may generate.
pub const MAX_COMBINATIONS: usize = 100_000;

/// One subnet's attributes and the values each may take.
type Axes = Vec<(String, Vec<f64>)>;

/// Whether a requirement asks for generated slice profiles.
pub(crate) fn generates(ty: InventoryType, filtering: &IndexMap<String, Opaque>) -> bool {
    ty == InventoryType::SliceProfiles && filtering.contains_key("subnets")
}

/// The slice-profile candidates of a generating requirement; `path` names the requirement
/// (`demands.URLLC[1]`) in problems.
pub(crate) fn generate(
    demand: &str,
    path: &str,
    provider: Option<&str>,
    filtering: &IndexMap<String, Opaque>,
    defaults: &IndexMap<String, Opaque>,
) -> Result<Vec<Candidate>, Vec<String>> {
    let mut problems = Vec::new();
    let fpath = format!("{path}.filtering_attributes");
    let subnets = read_subnets(filtering.get("subnets"), &fpath, &mut problems);
    let bounds = read_bounds(filtering.get("service_profile"), &fpath, &mut problems);
    for key in filtering.keys() {
        if key != "subnets" && key != "service_profile" {
            problems.push(format!(
                "{fpath}.{key}: unknown key for generated slice profiles; expected subnets or service_profile"
            ));
        }
    }
    let mut total: usize = 1;
    for (name, axes) in &subnets {
        for (attr, values) in axes {
            total = total.saturating_mul(values.len());
            if values.is_empty() {
                problems.push(format!(
                    "{fpath}.subnets.{name}.{attr}: no values; expected a non-empty list or range"
                ));
            }
        }
    }
    if total > MAX_COMBINATIONS {
        problems.push(format!(
            "{fpath}.subnets: {total} combinations; expected at most {MAX_COMBINATIONS}"
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let defaults: Vec<(String, AttrValue)> = defaults
        .iter()
        .filter_map(|(k, v)| berth_constraints::attr_value(v).map(|a| (k.clone(), a)))
        .collect();
    let mut out = Vec::new();
    for combo in combinations(&subnets) {
        let slice = aggregate(&subnets, &combo);
        if !bounds.iter().all(|(attr, op, bound)| {
            slice
                .get(attr.as_str())
                .is_some_and(|v| op.holds(*v, *bound))
        }) {
            continue;
        }
        let id = format!("{demand}-slice-profile-{}", out.len() + 1);
        let mut c = Candidate::new(id, InventoryType::SliceProfiles);
        c.inventory_provider = provider.map(str::to_owned);
        for (attr, v) in &slice {
            c.attributes.insert((*attr).to_owned(), number(*v));
        }
        for ((subnet, axes), picks) in subnets.iter().zip(&combo) {
            for ((attr, values), &i) in axes.iter().zip(picks) {
                if let Some(v) = values.get(i) {
                    c.attributes.insert(format!("{subnet}_{attr}"), number(*v));
                }
            }
        }
        for (k, v) in &defaults {
            c.attributes.entry(k.clone()).or_insert_with(|| v.clone());
        }
        out.push(c);
    }
    Ok(out)
}

/// `default_attributes` on a resolved candidate: each fills in an attribute it lacks.
pub(crate) fn with_defaults(c: &mut Candidate, defaults: &IndexMap<String, Opaque>) {
    for (k, v) in defaults {
        if c.attribute(k).is_none()
            && let Some(a) = berth_constraints::attr_value(v)
        {
            c.attributes.insert(k.clone(), a);
        }
    }
}

fn number(v: f64) -> AttrValue {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        AttrValue::Int(v as i64)
    } else {
        AttrValue::Float(v)
    }
}

fn read_subnets(v: Option<&Value>, fpath: &str, problems: &mut Vec<String>) -> Vec<(String, Axes)> {
    let Some(Value::Object(m)) = v else {
        problems.push(format!(
            "{fpath}.subnets: expected a mapping of subnet name to attribute ranges"
        ));
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, attrs) in m {
        let p = format!("{fpath}.subnets.{name}");
        let Value::Object(attrs) = attrs else {
            problems.push(format!(
                "{p}: expected a mapping of attribute to values or range"
            ));
            continue;
        };
        let mut axes = Vec::new();
        for (attr, spec) in attrs {
            if let Some(values) = read_axis(spec, &format!("{p}.{attr}"), problems) {
                axes.push((attr.clone(), values));
            }
        }
        out.push((name.clone(), axes));
    }
    out
}

fn read_axis(spec: &Value, p: &str, problems: &mut Vec<String>) -> Option<Vec<f64>> {
    let expected = "expected {values: [numbers]} or {min, max, steps}";
    let Value::Object(m) = spec else {
        problems.push(format!("{p}: {expected}"));
        return None;
    };
    if let Some(values) = m.get("values") {
        let xs: Option<Vec<f64>> = values
            .as_array()
            .map(|a| a.iter().map(Value::as_f64).collect())
            .unwrap_or(None);
        if xs.is_none() {
            problems.push(format!("{p}.values: {expected}"));
        }
        return xs;
    }
    let num = |k: &str, default: Option<f64>| match m.get(k) {
        None => default,
        Some(v) => v.as_f64().filter(|x| x.is_finite()),
    };
    let (Some(min), Some(max), Some(step)) = (
        num("min", Some(1.0)),
        num("max", None),
        num("steps", Some(1.0)),
    ) else {
        problems.push(format!("{p}: {expected}"));
        return None;
    };
    if step <= 0.0 {
        problems.push(format!("{p}.steps: {step}; expected a positive step"));
        return None;
    }
    let count = ((max - min) / step).ceil().max(0.0);
    if count > MAX_COMBINATIONS as f64 {
        problems.push(format!(
            "{p}: {count} values; expected at most {MAX_COMBINATIONS}"
        ));
        return None;
    }
    Some((0..count as usize).map(|i| min + step * i as f64).collect())
}

/// A `service_profile` comparison.
#[derive(Clone, Copy)]
enum Cmp {
    Lte,
    Gte,
    Eq,
    Lt,
    Gt,
}

impl Cmp {
    fn holds(self, v: f64, bound: f64) -> bool {
        match self {
            Cmp::Lte => v <= bound,
            Cmp::Gte => v >= bound,
            Cmp::Eq => v == bound,
            Cmp::Lt => v < bound,
            Cmp::Gt => v > bound,
        }
    }
}

fn read_bounds(
    v: Option<&Value>,
    fpath: &str,
    problems: &mut Vec<String>,
) -> Vec<(String, Cmp, f64)> {
    let Some(v) = v else { return Vec::new() };
    let Value::Object(m) = v else {
        problems.push(format!(
            "{fpath}.service_profile: expected a mapping of attribute to {{value, operator}}"
        ));
        return Vec::new();
    };
    let mut out = Vec::new();
    for (attr, spec) in m {
        let p = format!("{fpath}.service_profile.{attr}");
        if attr == "coverage_area" {
            // Informational in HAS: not a bound on the generated profiles.
            continue;
        }
        let op = match spec.get("operator").and_then(Value::as_str) {
            Some("lte") => Some(Cmp::Lte),
            Some("gte") => Some(Cmp::Gte),
            Some("eq") => Some(Cmp::Eq),
            Some("lt") => Some(Cmp::Lt),
            Some("gt") => Some(Cmp::Gt),
            _ => None,
        };
        let value = spec.get("value").and_then(Value::as_f64);
        match (op, value) {
            (Some(op), Some(value)) => out.push((attr.clone(), op, value)),
            _ => problems.push(format!(
                "{p}: expected {{value: <number>, operator: lte|gte|eq|lt|gt}}"
            )),
        }
    }
    out
}

/// Every combination: per subnet, per attribute, an index into its values.
fn combinations(subnets: &[(String, Axes)]) -> Vec<Vec<Vec<usize>>> {
    let mut out: Vec<Vec<Vec<usize>>> = vec![Vec::new()];
    for (_, axes) in subnets {
        let mut picks: Vec<Vec<usize>> = vec![Vec::new()];
        for (_, values) in axes {
            picks = picks
                .into_iter()
                .flat_map(|p| {
                    (0..values.len()).map(move |i| {
                        let mut q = p.clone();
                        q.push(i);
                        q
                    })
                })
                .collect();
        }
        out = out
            .into_iter()
            .flat_map(|o| {
                picks.iter().map(move |p| {
                    let mut q = o.clone();
                    q.push(p.clone());
                    q
                })
            })
            .collect();
    }
    out
}

/// Slice-level values of one combination.
fn aggregate<'a>(subnets: &'a [(String, Axes)], combo: &[Vec<usize>]) -> BTreeMap<&'a str, f64> {
    let mut out: BTreeMap<&str, f64> = BTreeMap::new();
    for ((_, axes), picks) in subnets.iter().zip(combo) {
        for ((attr, values), &i) in axes.iter().zip(picks) {
            let Some(&v) = values.get(i) else { continue };
            match (attr.as_str(), out.get(attr.as_str())) {
                (_, None) => {
                    out.insert(attr, v);
                }
                ("latency" | "jitter", Some(&acc)) => {
                    out.insert(attr, acc + v);
                }
                ("throughput", Some(&acc)) => {
                    out.insert(attr, acc.min(v));
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
