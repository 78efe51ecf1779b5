//! How Promise spells dimensions, amounts and offers on the wire (`cores`, `ram`, `gigabytes`).

use berth_calendar::{Amounts, Dimension};
use serde_json::{Value, json};

/// A dimension as Promise names it (`vcpu` is `cores`, `ram_mib` `ram`, `disk_gib`
/// `gigabytes`); others unchanged.
pub(crate) fn promise_name(d: &Dimension) -> String {
    berth_units::dimension::Dialect::Promise
        .name(&d.0)
        .to_owned()
}

/// Amounts as Promise answers them: `{"cores": 4, "ram": 8192}`.
pub(crate) fn promise_amounts(a: &Amounts) -> Value {
    Value::Object(a.iter().map(|(d, q)| (promise_name(d), json!(q))).collect())
}

/// Conflict offers as Promise answers them (`max_reservable` in Promise's names).
pub(crate) fn promise_offers(offers: &[berth_calendar::Offer]) -> Value {
    Value::Array(
        offers
            .iter()
            .map(|o| {
                let mut v = serde_json::to_value(o).unwrap_or_default();
                v["max_reservable"] = promise_amounts(&o.max_reservable);
                v
            })
            .collect(),
    )
}
