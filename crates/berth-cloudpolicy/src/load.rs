//! Small helpers for walking the operator files with diagnostics.

use berth_doc::{Diagnostics, Map, Path, Value};

use crate::schema::a_type;

/// Reports every key of `map` not in `allowed`.
pub(crate) fn check_keys(map: &Map, allowed: &[&str], path: &Path, diags: &mut Diagnostics) {
    for (key, _) in map.iter() {
        if !allowed.contains(&key.name.as_str()) {
            let expected = allowed
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            diags.error(
                &path.key(key.name.as_str()),
                key.pos,
                format!("unknown field `{}`; expected one of {expected}", key.name),
            );
        }
    }
}

/// The value as a mapping, or an error.
pub(crate) fn expect_map<'a>(
    value: &'a Value,
    path: &Path,
    diags: &mut Diagnostics,
) -> Option<&'a Map> {
    let map = value.as_map();
    if map.is_none() {
        diags.error(
            path,
            value.pos,
            format!("expected a mapping; found {}", a_type(value)),
        );
    }
    map
}

/// The value as a non-empty string, or an error.
pub(crate) fn expect_text<'a>(
    value: &'a Value,
    path: &Path,
    diags: &mut Diagnostics,
) -> Option<&'a str> {
    match value.as_str() {
        Some(s) if !s.trim().is_empty() => Some(s),
        Some(_) => {
            diags.error(path, value.pos, "expected a non-empty string");
            None
        }
        None => {
            diags.error(
                path,
                value.pos,
                format!("expected a string; found {}", a_type(value)),
            );
            None
        }
    }
}

/// The value as a finite number (at least 0 unless `signed`), or an error.
pub(crate) fn expect_price(
    value: &Value,
    signed: bool,
    path: &Path,
    diags: &mut Diagnostics,
) -> Option<f64> {
    match value.as_f64() {
        Some(x) if x.is_finite() && (signed || x >= 0.0) => Some(x),
        Some(x) => {
            let expected = if signed {
                "a finite number"
            } else {
                "a finite number of at least 0"
            };
            diags.error(
                path,
                value.pos,
                format!("invalid price {x}; expected {expected}"),
            );
            None
        }
        None => {
            diags.error(
                path,
                value.pos,
                format!("expected a number; found {}", a_type(value)),
            );
            None
        }
    }
}
