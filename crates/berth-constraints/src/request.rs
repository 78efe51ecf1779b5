//! Fit requests (`instance_fit`, `region_fit`, `vim_fit`, `service`, reservations) as integer
//! amounts per capacity dimension, including the multicloud shape HAS and OSDF send:
//! `{vCPU: 10, Memory: {quantity: 16, unit: GB}, Storage: {quantity: 200, unit: GB}}`.

use std::collections::BTreeMap;

use crate::ConstraintError;

/// The candidate capacity dimension a request key stands for, with the base unit's size in
/// bytes when the dimension is an amount of memory or disk. Other keys name a dimension as
/// written and take plain counts.
fn dimension(key: &str) -> (String, Option<u64>) {
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;
    match key.to_ascii_lowercase().as_str() {
        "vcpu" | "vcpus" | "cpu" | "cpus" | "cores" | "numvirtualcpu" => ("vcpu".to_owned(), None),
        "memory" | "mem" | "ram" | "virtualmemsize" => ("ram_mib".to_owned(), Some(MIB)),
        "storage" | "disk" | "sizeofstorage" => ("disk_gib".to_owned(), Some(GIB)),
        _ => (key.to_owned(), None),
    }
}

/// Bytes per unit; the unit HAS's multicloud requests use (GB) is binary, as OpenStack's.
fn unit_bytes(unit: &str) -> Option<u64> {
    let u = unit.trim().to_ascii_uppercase();
    Some(match u.as_str() {
        "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        "T" | "TB" | "TIB" => 1 << 40,
        _ => return None,
    })
}

/// An exact decimal: `digits * 10^exp`.
fn decimal(text: &str) -> Option<(u128, i32)> {
    let t = text.trim();
    let (mant, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    let mant = mant.strip_prefix('+').unwrap_or(mant);
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.is_empty() && frac.is_empty()
        || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
        || int.len() + frac.len() > 30
    {
        return None;
    }
    let digits: u128 = format!("{int}{frac}").parse().ok()?;
    let frac_len = i32::try_from(frac.len()).ok()?;
    Some((digits, exp.checked_sub(frac_len)?))
}

/// `ceil(digits * 10^exp * num / den)` when it fits an `i64`: a request of 1.5 GiB needs
/// 2 GiB of a capacity counted in whole GiB, exactly as 1.5 <= c does for integer c.
fn scaled(digits: u128, exp: i32, num: u64, den: u64) -> Option<i64> {
    let mut n = digits.checked_mul(u128::from(num))?;
    let mut d = u128::from(den);
    if exp >= 0 {
        n = n.checked_mul(10u128.checked_pow(exp.unsigned_abs())?)?;
    } else {
        d = d.checked_mul(10u128.checked_pow(exp.unsigned_abs())?)?;
    }
    i64::try_from(n.div_ceil(d)).ok()
}

/// One amount: a number, a numeric string (optionally with a unit, `16 GB`), or
/// `{quantity, unit}`; converted to the dimension's base unit.
fn amount(key: &str, base: Option<u64>, v: &serde_json::Value) -> Result<i64, String> {
    let expected = match base {
        Some(_) => "a non-negative amount: a number (GB), `16 GB`, or {quantity: 16, unit: GB}",
        None => "a non-negative integer amount",
    };
    let bad = || format!("`{key}` is {v}; expected {expected}");
    let (qty, unit): (String, Option<String>) = match v {
        serde_json::Value::Number(n) => (n.to_string(), None),
        serde_json::Value::String(s) => {
            let s = s.trim();
            let split = s
                .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
                .unwrap_or(s.len());
            let (q, u) = s.split_at(split);
            (
                q.trim().to_owned(),
                Some(u.trim().to_owned()).filter(|u| !u.is_empty()),
            )
        }
        serde_json::Value::Object(m) => {
            let q = match m.get("quantity") {
                Some(serde_json::Value::Number(n)) => n.to_string(),
                Some(serde_json::Value::String(s)) => s.trim().to_owned(),
                _ => return Err(bad()),
            };
            if let Some(k) = m.keys().find(|k| *k != "quantity" && *k != "unit") {
                return Err(format!(
                    "`{key}` has unknown field `{k}`; expected `quantity` and `unit`"
                ));
            }
            let u = match m.get("unit") {
                None | Some(serde_json::Value::Null) => None,
                Some(serde_json::Value::String(u)) => {
                    Some(u.trim().to_owned()).filter(|u| !u.is_empty())
                }
                Some(_) => return Err(bad()),
            };
            (q, u)
        }
        _ => return Err(bad()),
    };
    let (digits, exp) = decimal(&qty).ok_or_else(bad)?;
    let (num, den) = match (base, unit.as_deref()) {
        (None, None) => (1, 1),
        (None, Some(u)) => {
            return Err(format!(
                "`{key}` has unit `{u}`; expected a plain count (units apply to Memory and Storage)"
            ));
        }
        // A bare number is GB, as HAS passes quantities to multicloud.
        (Some(b), None) => (1 << 30, b),
        (Some(b), Some(u)) => {
            let per = unit_bytes(u).ok_or_else(|| {
                format!("`{key}` has unknown unit `{u}`; expected one of B, KB, MB, GB, TB (or KiB, MiB, GiB, TiB)")
            })?;
            (per, b)
        }
    };
    if base.is_none() && exp < 0 && digits % 10u128.pow(exp.unsigned_abs().min(38)) != 0 {
        return Err(bad());
    }
    scaled(digits, exp, num, den).ok_or_else(|| format!("`{key}` is {v}; the amount is too large"))
}

/// A controller request as amounts per capacity dimension (`vcpu`, `ram_mib`, `disk_gib`, or
/// the key as written). Keys naming the same dimension add up; no request asks for nothing.
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
    for (k, v) in map {
        let (dim, base) = dimension(k);
        let n = amount(k, base, v).map_err(bad)?;
        let slot = out.entry(dim).or_insert(0i64);
        *slot = slot.saturating_add(n);
    }
    Ok(out)
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
        // A bare number is GB; `16 GB` text works; 1 byte still needs a whole MiB.
        assert_eq!(
            parsed(json!({"Memory": 2, "Storage": "1 TB", "ram": {"quantity": 1, "unit": "B"}})),
            Ok(vec![("disk_gib".into(), 1024), ("ram_mib".into(), 2049)])
        );
        // Plain dimensions are counts, as before.
        assert_eq!(
            parsed(json!({"vcpu": "4", "sriov_vf": 2, "ram_mib": 10.0})),
            Ok(vec![
                ("ram_mib".into(), 10),
                ("sriov_vf".into(), 2),
                ("vcpu".into(), 4)
            ])
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
                "`fit` has a bad request: `Memory` is {\"quantity\":{\"get_param\":\"X\"},\"unit\":\"GB\"}; expected a non-negative amount: a number (GB), `16 GB`, or {quantity: 16, unit: GB}",
                "`fit` has a bad request: `Memory` has unknown field `units`; expected `quantity` and `unit`",
                "`fit` has a bad request: `vcpu` has unit `GB`; expected a plain count (units apply to Memory and Storage)",
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
