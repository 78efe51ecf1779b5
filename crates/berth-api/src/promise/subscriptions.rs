//! Capacity threshold and reservation event subscriptions, and their removal.

use std::collections::BTreeMap;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use berth_calendar::{ProviderId, ThresholdSubscription, ZoneId};
use berth_service::ReservationFilter;
use serde_json::json;

use super::amounts::amount;
use super::bodies::{CapacitySubscribeBody, ReservationSubscribeBody};
use super::source::{known_provider, pool_of};
use super::{D, DEFAULT_ZONE, Result, names, ok, svc_err, svc_err_at};
use crate::AppState;
use crate::error::{ApiError, parse_body};

/// The event names a reservation subscription may filter on (`filters.events`).
pub const RESERVATION_EVENTS: &[&str] = &[
    "allocation-terminated",
    "commitment-at-risk",
    "reservation-cancelled",
    "reservation-ended",
    "reservation-expired",
    "reservation-expiring-soon",
    "reservation-preempted",
    "reservation-started",
];

/// `POST /capacity/{kind}/subscribe`.
pub async fn capacity_subscribe(
    State(st): State<AppState>,
    Path(kind): Path<String>,
    body: Bytes,
) -> Result<Response> {
    let default_dim = match kind.as_str() {
        "compute" => "cores",
        "network" => "addresses",
        "storage" => "gigabytes",
        o => {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                format!("capacity kind `{o}` is unknown; expected compute, network or storage"),
                D,
            ));
        }
    };
    let b: CapacitySubscribeBody = parse_body(&body, D)?;
    names(&[
        ("zone", b.zone.as_deref()),
        ("provider", b.provider.as_deref()),
        ("dimension", b.dimension.as_deref()),
    ])?;
    // The threshold is an amount of the dimension, in the name's unit.
    let dim_key = b
        .dimension
        .clone()
        .unwrap_or_else(|| default_dim.to_owned());
    let (dimension, below) = amount(&dim_key, &b.threshold, "threshold")?;
    let (zone, provider) = match &b.source {
        Some(src) => {
            let pool = pool_of(Some(src), b.zone.as_deref(), None, "source")?;
            known_provider(&st, &pool.provider.0, "source").await?;
            (pool.zone, Some(pool.provider))
        }
        None => (
            ZoneId(b.zone.unwrap_or_else(|| DEFAULT_ZONE.to_owned())),
            b.provider.map(ProviderId),
        ),
    };
    let sub = ThresholdSubscription {
        zone,
        provider,
        dimension,
        below,
    };
    let id = st
        .reservations
        .subscribe_capacity(sub, b.callback)
        .await
        .map_err(|e| svc_err_at(&e, "callback"))?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"subscription-id": id, "result": "ok", "message": "subscribed"})),
    )
        .into_response())
}

/// `POST /reservation/subscribe`.
pub async fn reservation_subscribe(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: ReservationSubscribeBody = parse_body(&body, D)?;
    names(&[("filters.zone", b.filters.zone.as_deref())])?;
    for (i, e) in b.filters.events.iter().enumerate() {
        if !RESERVATION_EVENTS.contains(&e.as_str()) {
            let known: Vec<String> = RESERVATION_EVENTS.iter().map(|s| (*s).to_owned()).collect();
            let near = crate::fields::near_miss(e, &known)
                .map_or_else(String::new, |n| format!("did you mean `{n}`? "));
            return Err(ApiError::bad_field(
                &format!("filters.events[{i}]"),
                format!(
                    "`filters.events[{i}]` is `{e}`, no event name; {near}expected one of {}",
                    RESERVATION_EVENTS.join(", ")
                ),
                D,
            ));
        }
    }
    let f = ReservationFilter {
        reservation: b.filters.reservation_id,
        zone: b.filters.zone,
        events: b.filters.events,
    };
    let id = st
        .reservations
        .subscribe_reservations(f, b.callback)
        .await
        .map_err(|e| svc_err_at(&e, "callback"))?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"subscription-id": id, "result": "ok", "message": "subscribed"})),
    )
        .into_response())
}

/// `DELETE /capacity/{kind}/subscribe/{id}` and `DELETE /reservation/subscribe/{id}`.
pub async fn unsubscribe(
    State(st): State<AppState>,
    Path(params): Path<BTreeMap<String, String>>,
) -> Result<Response> {
    let id = params.get("id").cloned().unwrap_or_default();
    st.reservations
        .unsubscribe(&id)
        .await
        .map_err(|e| svc_err(&e))?;
    Ok(ok(json!({}), "unsubscribed"))
}
