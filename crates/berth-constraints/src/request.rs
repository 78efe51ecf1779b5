//! Fit requests (`instance_fit`, `region_fit`, `vim_fit`, `service`, reservations) as integer
//! amounts per capacity dimension, including the multicloud shape HAS and OSDF send:
//! `{vCPU: 10, Memory: {quantity: 16, unit: GB}, Storage: {quantity: 200, unit: GB}}`. Keys
//! and units are the dimension registry's (`berth_units::dimension`), as for inventories.

use std::collections::{BTreeMap, BTreeSet};

use berth_template::{ConstraintKind, Template};
use berth_units::dimension::{self, Raw, Round};

use crate::ConstraintError;

/// One amount: a number, a numeric string (optionally with a unit, `16 GB`), or
/// `{quantity, unit}`; read by the dimension registry into the dimension's base unit, rounded
/// up (a request of 1.5 GiB needs 2 whole GiB).
fn amount(key: &str, v: &serde_json::Value) -> Result<(String, i64), String> {
    let bad = || format!("`{key}` is {v}; expected {}", dimension::expected(key));
    let number;
    let raw = match v {
        serde_json::Value::Number(n) => {
            number = n.to_string();
            Raw::Number(&number)
        }
        serde_json::Value::String(s) => Raw::Text(s),
        serde_json::Value::Object(m) => {
            if let Some(k) = m.keys().find(|k| *k != "quantity" && *k != "unit") {
                return Err(format!(
                    "`{key}` has unknown field `{k}`; expected `quantity` and `unit`"
                ));
            }
            let quantity = match m.get("quantity") {
                Some(serde_json::Value::Number(n)) => {
                    number = n.to_string();
                    number.as_str()
                }
                Some(serde_json::Value::String(s)) => s.as_str(),
                _ => return Err(bad()),
            };
            let unit = match m.get("unit") {
                None | Some(serde_json::Value::Null) => None,
                Some(serde_json::Value::String(u)) => Some(u.as_str()),
                Some(_) => return Err(bad()),
            };
            Raw::Quantity { quantity, unit }
        }
        _ => return Err(bad()),
    };
    let a = dimension::amount(key, raw, Round::Up).map_err(|e| match e {
        // The value as the request wrote it (JSON), not as the registry quotes it.
        berth_units::DimensionError::NotAnAmount { .. } => bad(),
        other => other.to_string(),
    })?;
    // `amount` keeps values at most i64::MAX.
    Ok((a.dimension, i64::try_from(a.value).unwrap_or(i64::MAX)))
}

/// A controller request as amounts per capacity dimension: every key goes through the
/// dimension registry (`vCPU`, `vcpus`, `cores` are `vcpu`; `Memory`, `ram` are `ram_mib`;
/// `Storage`, `disk` are `disk_gib`), other keys name a dimension as written. Two keys naming
/// one dimension are refused; no request asks for nothing.
pub fn parse_request(
    origin: &str,
    request: Option<&serde_json::Value>,
) -> Result<BTreeMap<String, i64>, ConstraintError> {
    let bad = |reason: String| ConstraintError::BadRequest {
        origin: origin.to_owned(),
        reason,
    };
    // HAS makes `request` optional (it then checks nothing); so does Berth.
    let Some(req) = request.filter(|r| !r.is_null()) else {
        return Ok(BTreeMap::new());
    };
    let Some(map) = req.as_object() else {
        return Err(bad(format!(
            "found {req}; expected a mapping of dimension names to amounts, e.g. {{vcpu: 4}}"
        )));
    };
    let mut out = BTreeMap::new();
    let mut keys: BTreeMap<String, &str> = BTreeMap::new();
    for (k, v) in map {
        let (dim, n) = amount(k, v).map_err(bad)?;
        if let Some(first) = keys.insert(dim.clone(), k) {
            return Err(bad(berth_units::DimensionError::Duplicate {
                first: first.to_owned(),
                second: k.clone(),
                dimension: dim,
            }
            .to_string()));
        }
        out.insert(dim, n);
    }
    Ok(out)
}

/// One key of a fit constraint's request: the constraint, the key as written, and the
/// dimension it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestKey {
    /// The constraint's name.
    pub constraint: String,
    /// The key as written (`vCPU`).
    pub key: String,
    /// The dimension (`vcpu`, or the key as written).
    pub dimension: String,
}

/// Every key of the template's fit requests (`instance_fit`, `region_fit`, `vim_fit`,
/// `service`) with the dimension it names, in constraint order. A request that does not read
/// is left out: the template's own diagnostics report it.
pub fn request_keys(template: &Template) -> Vec<RequestKey> {
    let mut out = Vec::new();
    for c in template.constraints.values() {
        let request = match &c.kind {
            ConstraintKind::InstanceFit(p)
            | ConstraintKind::RegionFit(p)
            | ConstraintKind::VimFit(p) => p.request.as_ref(),
            ConstraintKind::Service(p) => p.request.as_ref(),
            _ => None,
        };
        let Some(map) = request
            .filter(|r| parse_request("", Some(r)).is_ok())
            .and_then(|r| r.as_object())
        else {
            continue;
        };
        out.extend(map.keys().map(|k| RequestKey {
            constraint: c.name.clone(),
            key: k.clone(),
            dimension: dimension::canonical(k).into_owned(),
        }));
    }
    out
}

/// The dimensions the template's fit requests ask for (canonical names), for telling which
/// inventory capacity keys no request uses.
pub fn request_dimensions(template: &Template) -> BTreeSet<String> {
    request_keys(template)
        .into_iter()
        .map(|k| k.dimension)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(v: serde_json::Value) -> Result<Vec<(String, i64)>, String> {
        parse_request("fit", Some(&v))
            .map(|m| m.into_iter().collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn multicloud_shape_converts_units_exactly() {
        assert_eq!(
            parsed(
                json!({"vCPU": 10, "Memory": {"quantity": 5, "unit": "GB"}, "Storage": {"quantity": "100", "unit": "GB"}})
            ),
            Ok(vec![
                ("disk_gib".into(), 100),
                ("ram_mib".into(), 5120),
                ("vcpu".into(), 10)
            ])
        );
        assert_eq!(
            parsed(
                json!({"Memory": {"quantity": 1.5, "unit": "GiB"}, "Storage": {"quantity": 512, "unit": "MB"}})
            ),
            Ok(vec![("disk_gib".into(), 1), ("ram_mib".into(), 1536)])
        );
        // HAS's bare `Memory` is GB; `16 GB` text works; 1 byte still needs a whole MiB.
        assert_eq!(
            parsed(json!({"Memory": 2, "Storage": "1 TB"})),
            Ok(vec![("disk_gib".into(), 1024), ("ram_mib".into(), 2048)])
        );
        assert_eq!(
            parsed(json!({"ram": {"quantity": 1, "unit": "B"}})),
            Ok(vec![("ram_mib".into(), 1)])
        );
        // Nova's and Placement's names, in their units (ram MiB, disk GiB).
        assert_eq!(
            parsed(json!({"vcpus": 4, "ram": 8192, "DISK_GB": 40, "MEMORY_MB": null})),
            Err("`fit` has a bad request: `MEMORY_MB` is null; expected a non-negative amount: a number (MiB), `16 GB`, or {quantity: 16, unit: GB}".into())
        );
        assert_eq!(
            parsed(json!({"vcpus": 4, "ram": 8192, "DISK_GB": 40})),
            Ok(vec![
                ("disk_gib".into(), 40),
                ("ram_mib".into(), 8192),
                ("vcpu".into(), 4)
            ])
        );
        // Other dimensions are counts as written.
        assert_eq!(
            parsed(json!({"cores": "4", "sriov_vf": 2, "ram_mib": 10.0})),
            Ok(vec![
                ("ram_mib".into(), 10),
                ("sriov_vf".into(), 2),
                ("vcpu".into(), 4)
            ])
        );
    }

    #[test]
    fn two_keys_for_one_dimension_are_refused() {
        assert_eq!(
            parsed(json!({"vCPU": 2, "vcpus": 2})),
            Err("`fit` has a bad request: `vCPU` and `vcpus` both name dimension `vcpu`; expected one of them".into())
        );
        assert_eq!(
            parsed(json!({"Memory": 2, "ram": 2048})),
            Err("`fit` has a bad request: `Memory` and `ram` both name dimension `ram_mib`; expected one of them".into())
        );
    }

    #[test]
    fn bad_requests_say_what_was_expected() {
        let errs: Vec<String> = [
            json!({"vCPU": -1}),
            json!({"vCPU": 2.5}),
            json!({"Memory": {"quantity": 4, "unit": "parsecs"}}),
            json!({"Memory": {"quantity": {"get_param": "X"}, "unit": "GB"}}),
            json!({"Memory": {"quantity": 4, "units": "GB"}}),
            json!({"vcpu": {"quantity": 4, "unit": "GB"}}),
            json!({"Storage": 1e30}),
            json!([1]),
        ]
        .into_iter()
        .map(|v| parsed(v).unwrap_err())
        .collect();
        expect_test::expect![[r#"
            [
                "`fit` has a bad request: `vCPU` is -1; expected a non-negative integer amount",
                "`fit` has a bad request: `vCPU` is 2.5; expected a non-negative integer amount",
                "`fit` has a bad request: `Memory` has unknown unit `parsecs`; expected one of B, KB, MB, GB, TB (or KiB, MiB, GiB, TiB)",
                "`fit` has a bad request: `Memory` is {\"quantity\":{\"get_param\":\"X\"},\"unit\":\"GB\"}; expected a non-negative amount: a number (GiB), `16 GB`, or {quantity: 16, unit: GB}",
                "`fit` has a bad request: `Memory` has unknown field `units`; expected `quantity` and `unit`",
                "`fit` has a bad request: `vcpu` has unit `GB`; expected a plain count (units apply to memory and disk)",
                "`fit` has a bad request: `Storage` is 1e+30; the amount is too large",
                "`fit` has a bad request: found [1]; expected a mapping of dimension names to amounts, e.g. {vcpu: 4}",
            ]
        "#]]
        .assert_debug_eq(&errs);
        // No request (HAS: optional) asks for nothing.
        assert_eq!(parse_request("fit", None).unwrap(), BTreeMap::new());
        assert_eq!(
            parse_request("fit", Some(&serde_json::Value::Null)).unwrap(),
            BTreeMap::new()
        );
    }
}
