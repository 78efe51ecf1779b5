//! Promise shim routes (seed 001 Annex C): reservations, instances, capacity, providers and
//! subscriptions, with `result: ok|conflict|error` bodies and capacities given as numbers or
//! numeric strings (`"cores": "5"`).
//!
//! Pool identity: a pool is the capacity one provider offers in one zone, and its canonical id
//! is `<zone>/<provider-id>` (e.g. `default/5f0c…`). `increase-capacity` answers that id as
//! `pool-id`, `query-capacity` lists it as `ResourcePool:<pool-id>`, and every `source` (capacity
//! changes, subscriptions) accepts it in any of these forms: `"<pool-id>"`,
//! `"ResourcePool:<pool-id>"`, `"<provider-id>"`, `"ResourceProvider:<provider-id>"`, or an
//! object `{"id": …}` holding one of those strings (Promise clients send the provider record).
//! A provider id alone (no `/`) names its pool in the request's `zone` (default `default`).
//! Provider ids never contain `/`; a pool id is split at its last `/`.
//!
//! Dimensions: capacity keys go through the dimension registry (`berth_units::dimension`),
//! so Promise's `cores`, `ram`, `gigabytes`, `instances`, `addresses` and every other alias
//! (`vcpus`, `VCPU`, `MEMORY_MB`, `disk`, …) name the dimensions the inventory's pools have
//! (`vcpu`, `ram_mib`, `disk_gib`, …). Answers name them as Promise does, from the
//! registry's one table ([`berth_units::dimension::Dialect::Promise`]); other dimensions
//! keep their names.
//!
//! Layout: one file per resource (`reservations`, `instances`, `capacity`, `providers`,
//! `queries`, `subscriptions`) over the request `bodies`, their `amounts`, the pool a `source`
//! names and the reads across calendar `partitions`; this file holds the checks and replies
//! every route shares.

mod amounts;
mod bodies;
mod capacity;
mod instances;
mod partitions;
mod providers;
mod queries;
mod reservations;
mod source;
mod subscriptions;

use axum::Json;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::error::{ApiError, Dialect};

pub use amounts::Quantity;
// Outside this module only the unknown-field tests name it.
#[cfg(test)]
pub(crate) use bodies::IdBody;
pub use bodies::{
    CapacityBody, CapacitySubscribeBody, ElementsBody, FilterBody, FlavorBody, InstanceBody,
    ProviderBody, QueryBody, ReservationBody, ReservationSubscribeBody, WindowBody,
};
pub use capacity::{decrease_capacity, increase_capacity};
pub use instances::{create_instance, destroy_instance};
pub use providers::add_provider;
pub use queries::{query_capacity, query_reservation};
pub use reservations::{cancel_reservation, create_reservation, update_reservation};
pub use subscriptions::{
    RESERVATION_EVENTS, capacity_subscribe, reservation_subscribe, unsubscribe,
};

const D: Dialect = Dialect::Promise;
/// Zone used when a request names none.
pub const DEFAULT_ZONE: &str = "default";
/// Provider used when a capacity request names none (always known).
pub const DEFAULT_PROVIDER: &str = berth_service::DEFAULT_PROVIDER;

type Result<T> = std::result::Result<T, ApiError>;

/// Checks client-given names (`zone`, `provider`, …): printable, bounded, not empty.
fn names(fields: &[(&str, Option<&str>)]) -> Result<()> {
    for (field, value) in fields {
        if let Some(v) = value {
            berth_service::check_name(field, v).map_err(|m| ApiError::bad_field(field, m, D))?;
        }
    }
    Ok(())
}

/// `end` after `start` when both are given; `field` names the end.
fn ordered(start: Option<DateTime<Utc>>, end: Option<DateTime<Utc>>, field: &str) -> Result<()> {
    match (start, end) {
        (Some(s), Some(e)) if e <= s => Err(ApiError::bad_field(
            field,
            format!("`{field}` {e} is not after the start {s}; expected an end after the start"),
            D,
        )),
        _ => Ok(()),
    }
}

/// A service error about the record or value in `field`: not found or invalid names it.
fn svc_err_at(e: &berth_service::ServiceError, field: &str) -> ApiError {
    use berth_service::ErrorKind;
    let err = svc_err(e);
    match e.kind() {
        ErrorKind::NotFound | ErrorKind::InvalidInput => err.at(field),
        _ => err,
    }
}

fn not_found(message: String) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, message, D)
}

fn ok(mut body: Value, message: &str) -> Response {
    body["result"] = json!("ok");
    body["message"] = json!(message);
    (StatusCode::OK, Json(body)).into_response()
}

fn idem_key(headers: &HeaderMap) -> Option<String> {
    headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .filter(|k| !k.is_empty())
}

fn svc_err(e: &berth_service::ServiceError) -> ApiError {
    ApiError::from_service(e, D)
}
