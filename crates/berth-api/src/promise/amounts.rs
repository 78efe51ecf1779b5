//! Amounts as Promise writes them: a quantity is a number or a numeric string, and a capacity
//! map's keys go through the dimension registry (the module docs' "Dimensions").

use std::collections::BTreeMap;

use berth_calendar::{Amounts, Dimension};
use serde::Deserialize;
use utoipa::ToSchema;

use super::{D, Result};
use crate::error::ApiError;

/// A quantity: a JSON number or a numeric string.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum Quantity {
    /// `5`.
    Number(u64),
    /// `"5"`.
    Text(String),
}

impl Quantity {
    /// The value; `field` names it in the error.
    pub(super) fn value(&self, field: &str) -> Result<u64> {
        match self {
            Quantity::Number(n) => Ok(*n),
            Quantity::Text(s) => s.trim().parse::<u64>().map_err(|_| {
                ApiError::bad_request(
                    format!("`{field}` is `{s}`; expected a non-negative integer"),
                    D,
                )
            }),
        }
    }
}

/// One amount of dimension `key` (any alias) in its base unit, exactly: Promise's names take
/// plain numbers in the base unit; a unit (`"16 GB"`) converts, but not to a fraction.
pub(super) fn amount(key: &str, q: &Quantity, field: &str) -> Result<(Dimension, u64)> {
    use berth_units::dimension::{Raw, Round};
    let number;
    let raw = match q {
        Quantity::Number(n) => {
            number = n.to_string();
            Raw::Number(&number)
        }
        Quantity::Text(s) => Raw::Text(s),
    };
    let a = berth_units::dimension::amount(key, raw, Round::Up)
        .map_err(|e| ApiError::bad_field(field, e.with_key(field).to_string(), D))?;
    if !a.exact {
        let unit = berth_units::dimension::by_name(&a.dimension).map_or("unit", |d| d.unit());
        return Err(ApiError::bad_field(
            field,
            format!("`{field}` is {raw}, not a whole number of {unit}; expected whole {unit}"),
            D,
        ));
    }
    Ok((Dimension(a.dimension), a.value))
}

/// The amounts of the `field` map (`capacity`); two keys of one dimension are refused.
pub(super) fn amounts(cap: &BTreeMap<String, Quantity>, field: &str) -> Result<Amounts> {
    let mut a = Amounts::new();
    let mut keys: BTreeMap<Dimension, &str> = BTreeMap::new();
    for (k, q) in cap {
        let at = format!("{field}.{k}");
        let (d, n) = amount(k, q, &at)?;
        if let Some(first) = keys.insert(d.clone(), k) {
            let e = berth_units::DimensionError::Duplicate {
                first: first.to_owned(),
                second: k.clone(),
                dimension: d.0,
            };
            return Err(ApiError::bad_field(&at, format!("`{field}`: {e}"), D));
        }
        a.set(d, n);
    }
    Ok(a)
}
