//! `attribute` operators and HAS `threshold` checks evaluated against one candidate.

use berth_inventory::{AttrValue, Candidate};
use berth_template::{AttributeOp, CompareOp, ThresholdCheck};
use berth_units::{Quantity, Threshold, Unit};

use crate::ConstraintError;

/// An attribute operator ready to evaluate (regexes compiled once).
#[derive(Debug, Clone)]
pub(crate) enum Op {
    Eq(Option<AttrValue>),
    Ne(Option<AttrValue>),
    Lt(f64),
    Gt(f64),
    Lte(f64),
    Gte(f64),
    Any(Vec<AttrValue>),
    All(Vec<AttrValue>),
    Regex(regex::Regex),
}

/// An opaque template value as an attribute value; `None` for null and mappings, which no
/// candidate attribute can equal.
pub fn attr_value(v: &serde_json::Value) -> Option<AttrValue> {
    Some(match v {
        serde_json::Value::Bool(b) => AttrValue::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => AttrValue::Int(i),
            None => AttrValue::Float(n.as_f64()?),
        },
        serde_json::Value::String(s) => AttrValue::Str(s.clone()),
        serde_json::Value::Array(items) => {
            AttrValue::List(items.iter().map(attr_value).collect::<Option<Vec<_>>>()?)
        }
        serde_json::Value::Null | serde_json::Value::Object(_) => return None,
    })
}

/// A number from an attribute: numbers, and strings that parse as finite numbers.
pub fn number(v: &AttrValue) -> Option<f64> {
    match v {
        AttrValue::Int(i) => Some(*i as f64),
        AttrValue::Float(f) => Some(*f),
        AttrValue::Str(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        AttrValue::Bool(_) | AttrValue::List(_) => None,
    }
}

fn text(v: &AttrValue) -> Vec<String> {
    match v {
        AttrValue::List(items) => items.iter().flat_map(text).collect(),
        other => vec![other.to_string()],
    }
}

impl Op {
    pub(crate) fn new(op: &AttributeOp, origin: &str) -> Result<Op, ConstraintError> {
        let list = |xs: &[serde_json::Value]| xs.iter().filter_map(attr_value).collect();
        Ok(match op {
            AttributeOp::Eq(v) => Op::Eq(attr_value(v)),
            AttributeOp::Ne(v) => Op::Ne(attr_value(v)),
            AttributeOp::Lt(x) => Op::Lt(*x),
            AttributeOp::Gt(x) => Op::Gt(*x),
            AttributeOp::Lte(x) => Op::Lte(*x),
            AttributeOp::Gte(x) => Op::Gte(*x),
            AttributeOp::Any(xs) => Op::Any(list(xs)),
            AttributeOp::All(xs) => Op::All(list(xs)),
            AttributeOp::Regex(p) => {
                Op::Regex(p.compile().map_err(|e| ConstraintError::Unsupported {
                    origin: origin.to_owned(),
                    reason: format!(
                        "pattern `{}` does not compile within the size limit: {e}",
                        p.pattern
                    ),
                })?)
            }
        })
    }

    /// Whether the candidate's value (or its absence) passes. A missing attribute fails every
    /// operator except `ne`.
    pub(crate) fn admits(&self, value: Option<&AttrValue>) -> bool {
        let Some(v) = value else {
            return matches!(self, Op::Ne(_));
        };
        match self {
            Op::Eq(w) => w.as_ref().is_some_and(|w| v.matches(w)),
            Op::Ne(w) => !w.as_ref().is_some_and(|w| v.matches(w)),
            Op::Lt(x) => number(v).is_some_and(|n| n < *x),
            Op::Gt(x) => number(v).is_some_and(|n| n > *x),
            Op::Lte(x) => number(v).is_some_and(|n| n <= *x),
            Op::Gte(x) => number(v).is_some_and(|n| n >= *x),
            Op::Any(ws) => ws.iter().any(|w| v.matches(w)),
            Op::All(ws) => ws.iter().all(|w| v.matches(w)),
            Op::Regex(re) => text(v).iter().any(|t| re.is_match(t)),
        }
    }
}

/// A compiled `attribute` constraint: every operator of every attribute must pass.
#[derive(Debug, Clone)]
pub(crate) struct AttributeRule {
    pub(crate) checks: Vec<(String, Vec<Op>)>,
}

/// The candidate field HAS's attribute constraint means by `key` when the candidate has no
/// attribute of that name (`complex` is the complex name, `cloud_version` the region version,
/// `cloud-region` the region id).
fn has_alias(key: &str) -> Option<&'static str> {
    match key {
        "complex" => Some("complex_name"),
        "cloud_version" | "cloud-version" => Some("cloud_region_version"),
        "cloud-region" | "cloud_region" => Some("location_id"),
        _ => None,
    }
}

/// HAS ignores an attribute whose wanted value is the empty string.
pub(crate) fn is_blank(op: &AttributeOp) -> bool {
    matches!(op, AttributeOp::Eq(serde_json::Value::String(s)) if s.is_empty())
}

impl AttributeRule {
    pub(crate) fn admits(&self, c: &Candidate) -> bool {
        self.checks.iter().all(|(key, ops)| {
            let v = c
                .attribute(key)
                .or_else(|| has_alias(key).and_then(|a| c.attribute(a)));
            ops.iter().all(|op| op.admits(v.as_deref()))
        })
    }
}

/// The candidate's attribute as a quantity: a number in `unit`, or a string such as `25 ms`.
fn quantity(v: &AttrValue, unit: Unit) -> Option<Quantity> {
    if let Some(n) = number(v) {
        return Some(Quantity::new(n, unit));
    }
    let AttrValue::Str(s) = v else { return None };
    match Threshold::parse_any(s).ok()? {
        Threshold::Compare {
            op: berth_units::Op::Eq,
            value,
        } if value.unit == Unit::One => Some(Quantity::new(value.value, unit)),
        Threshold::Compare {
            op: berth_units::Op::Eq,
            value,
        } => Some(value),
        _ => None,
    }
}

/// Whether a candidate passes one HAS `threshold` check (units honoured). A candidate without
/// the attribute, or with a value of another family, fails.
pub(crate) fn threshold_admits(check: &ThresholdCheck, c: &Candidate) -> bool {
    let Some(v) = c.attribute(&check.attribute) else {
        return false;
    };
    let unit = check
        .bound
        .map(|b| b.unit())
        .or_else(|| check.unit.as_deref().and_then(Unit::lookup))
        .unwrap_or(Unit::One);
    let Some(q) = quantity(&v, unit) else {
        return false;
    };
    if let Some(bound) = check.bound
        && check.operator != CompareOp::Ne
    {
        return bound.admits(&q);
    }
    let Ok(q) = q.to(unit) else { return false };
    let ord = berth_units::compare_base(q.value, check.value);
    match check.operator {
        CompareOp::Eq => ord.is_eq(),
        CompareOp::Ne => ord.is_ne(),
        CompareOp::Lt => ord.is_lt(),
        CompareOp::Gt => ord.is_gt(),
        CompareOp::Lte => ord.is_le(),
        CompareOp::Gte => ord.is_ge(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_inventory::InventoryType;
    use berth_template::Pattern;
    use serde_json::json;

    fn cand() -> Candidate {
        let mut c = Candidate::new("c1", InventoryType::Cloud);
        c.attributes
            .insert("version".into(), AttrValue::Str("1.1".into()));
        c.attributes
            .insert("flavor".into(), AttrValue::Str("SRIOV".into()));
        c.attributes
            .insert("tags".into(), AttrValue::List(vec!["a".into(), "b".into()]));
        c.attributes
            .insert("latency".into(), AttrValue::Str("25 ms".into()));
        c.attributes.insert("speed".into(), AttrValue::Int(2));
        c.cloud_owner = Some("att-aic".into());
        c
    }

    fn ok(op: AttributeOp, key: &str) -> bool {
        let c = cand();
        Op::new(&op, "t")
            .unwrap()
            .admits(c.attribute(key).as_deref())
    }

    #[test]
    fn operators() {
        assert!(ok(AttributeOp::Eq(json!(1.1)), "version"));
        assert!(ok(AttributeOp::Eq(json!("att-aic")), "cloud_owner"));
        assert!(!ok(AttributeOp::Eq(json!("aws")), "cloud_owner"));
        assert!(ok(AttributeOp::Ne(json!("aws")), "cloud_owner"));
        assert!(ok(AttributeOp::Ne(json!("x")), "missing"));
        assert!(!ok(AttributeOp::Eq(json!("x")), "missing"));
        assert!(ok(AttributeOp::Gt(1.0), "version"));
        assert!(!ok(AttributeOp::Lt(1.0), "version"));
        assert!(ok(AttributeOp::Lte(1.1), "version"));
        assert!(ok(AttributeOp::Gte(2.0), "speed"));
        assert!(!ok(AttributeOp::Gt(1.0), "flavor"));
        assert!(ok(
            AttributeOp::Any(vec![json!("x"), json!("SRIOV")]),
            "flavor"
        ));
        assert!(ok(AttributeOp::All(vec![json!("a"), json!("b")]), "tags"));
        assert!(!ok(AttributeOp::All(vec![json!("a"), json!("c")]), "tags"));
        let re = |p: &str, i| {
            AttributeOp::Regex(Pattern {
                pattern: p.into(),
                case_insensitive: i,
            })
        };
        assert!(ok(re("^sriov$", true), "flavor"));
        assert!(!ok(re("^sriov$", false), "flavor"));
        assert!(ok(re("^b$", false), "tags"));
    }

    #[test]
    fn thresholds_honour_units() {
        let c = cand();
        let check = |op, value, unit: Option<&str>, attr: &str| {
            let u = unit.and_then(Unit::lookup).unwrap_or(Unit::One);
            let bound = match op {
                CompareOp::Lte => {
                    Threshold::compare(berth_units::Op::Le, Quantity::new(value, u)).ok()
                }
                CompareOp::Gt => {
                    Threshold::compare(berth_units::Op::Gt, Quantity::new(value, u)).ok()
                }
                _ => None,
            };
            threshold_admits(
                &ThresholdCheck {
                    attribute: attr.into(),
                    operator: op,
                    value,
                    unit: unit.map(str::to_owned),
                    bound,
                },
                &c,
            )
        };
        assert!(check(CompareOp::Lte, 30.0, Some("ms"), "latency"));
        assert!(!check(CompareOp::Lte, 20.0, Some("ms"), "latency"));
        assert!(check(CompareOp::Lte, 0.03, Some("sec"), "latency"));
        assert!(!check(CompareOp::Lte, 30.0, Some("km"), "latency"));
        assert!(check(CompareOp::Gt, 1.0, None, "speed"));
        assert!(check(CompareOp::Ne, 3.0, None, "speed"));
        assert!(!check(CompareOp::Eq, 3.0, None, "speed"));
        assert!(!check(CompareOp::Lte, 30.0, Some("ms"), "missing"));
    }
}
