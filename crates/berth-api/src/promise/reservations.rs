//! `create-reservation`, `update-reservation` and `cancel-reservation`.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use berth_calendar::{
    Applied, Command, ElementId, Priority, ProviderId, ReservationRequest, TenantId, ZoneId,
};
use serde_json::json;

use super::amounts::amounts;
use super::bodies::{IdBody, ReservationBody};
use super::partitions::reservation_id;
use super::{
    D, DEFAULT_ZONE, Result, idem_key, names, not_found, ok, ordered, svc_err, svc_err_at,
};
use crate::AppState;
use crate::error::{ApiError, parse_body};

fn priority(p: Option<&str>) -> Result<Option<Priority>> {
    match p {
        None => Ok(None),
        Some("low") => Ok(Some(Priority::Low)),
        Some("normal") => Ok(Some(Priority::Normal)),
        Some("high") => Ok(Some(Priority::High)),
        Some(o) => Err(ApiError::bad_request(
            format!("`priority` is `{o}`; expected low, normal or high"),
            D,
        )),
    }
}

/// `POST /create-reservation`.
pub async fn create_reservation(
    State(st): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response> {
    let b: ReservationBody = parse_body(&body, D)?;
    names(&[
        ("zone", b.zone.as_deref()),
        ("provider", b.provider.as_deref()),
        ("tenant", b.tenant.as_deref()),
    ])?;
    ordered(b.start, b.end, "end")?;
    let cap = b
        .capacity
        .as_ref()
        .ok_or_else(|| ApiError::bad_request("`capacity` is missing", D))?;
    let mut req = ReservationRequest::new(
        b.zone.as_deref().unwrap_or(DEFAULT_ZONE),
        amounts(cap, "capacity")?,
    );
    req.provider = b.provider.map(ProviderId);
    req.start = b.start;
    req.end = b.end;
    req.expiry = b.expiry;
    req.tenant = b.tenant.map(TenantId);
    req.elements = b
        .elements
        .unwrap_or_default()
        .into_iter()
        .map(ElementId)
        .collect();
    if let Some(p) = priority(b.priority.as_deref())? {
        req.priority = p;
    }
    let c = st
        .reservations
        .command(Command::CreateReservation(req), idem_key(&headers))
        .await
        .map_err(|e| svc_err(&e))?;
    let Applied::ReservationCreated { id, .. } = c.outcome.applied else {
        return Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error",
            D,
        ));
    };
    metrics::counter!("berth_reservations_created_total").increment(u64::from(!c.replayed));
    Ok(ok(
        json!({"reservation-id": berth_service::qualify(c.partition.as_deref(), id)}),
        "reservation request accepted",
    ))
}

/// `POST /update-reservation`: fields given replace the reservation's; others are kept.
pub async fn update_reservation(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: ReservationBody = parse_body(&body, D)?;
    names(&[
        ("zone", b.zone.as_deref()),
        ("provider", b.provider.as_deref()),
        ("tenant", b.tenant.as_deref()),
    ])?;
    let (partition, id) = reservation_id(&st, b.reservation_id.as_deref())?;
    let current = st
        .reservations
        .read_at(partition.as_deref(), |c| c.request_of(id))
        .await
        .map_err(|e| svc_err(&e))?;
    let shown = berth_service::qualify(partition.as_deref(), id);
    let mut req = current.ok_or_else(|| {
        not_found(format!(
            "`reservation-id`: reservation `{shown}` is unknown"
        ))
    })?;
    if let Some(z) = b.zone {
        req.zone = ZoneId(z);
    }
    if let Some(p) = b.provider {
        req.provider = Some(ProviderId(p));
    }
    if let Some(cap) = &b.capacity {
        req.amounts = amounts(cap, "capacity")?;
    }
    req.start = b.start.or(req.start);
    req.end = b.end.or(req.end);
    ordered(req.start, req.end, "end")?;
    req.expiry = b.expiry.or(req.expiry);
    if let Some(e) = b.elements {
        req.elements = e.into_iter().map(ElementId).collect();
    }
    if let Some(p) = priority(b.priority.as_deref())? {
        req.priority = p;
    }
    st.reservations
        .command_at(
            partition.as_deref(),
            Command::UpdateReservation { id, request: req },
            None,
        )
        .await
        .map_err(|e| match e.kind() {
            berth_service::ErrorKind::NotFound => svc_err_at(&e, "reservation-id"),
            _ => svc_err(&e),
        })?;
    Ok(ok(json!({}), "reservation update successful"))
}

/// `POST /cancel-reservation`.
pub async fn cancel_reservation(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: IdBody = parse_body(&body, D)?;
    let (partition, id) = reservation_id(&st, b.reservation_id.as_deref())?;
    let c = st
        .reservations
        .command_at(
            partition.as_deref(),
            Command::CancelReservation { id },
            None,
        )
        .await
        .map_err(|e| svc_err_at(&e, "reservation-id"))?;
    // The live instances the cancel ended with it.
    let ended: Vec<String> = match &c.outcome.applied {
        Applied::ReservationCancelled { terminated, .. } => terminated
            .iter()
            .map(|a| berth_service::qualify(c.partition.as_deref(), a))
            .collect(),
        _ => Vec::new(),
    };
    Ok(ok(json!({"instances": ended}), "reservation canceled"))
}
