//! `query-reservation` and `query-capacity`: reservations and pool levels over a window, with
//! Promise's utilization timeline.

use std::collections::BTreeSet;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use berth_calendar::{
    CapacityLevels, CapacityQuery, ElementId, PoolCapacity, ProviderId, Reservation, ReservationId,
    ReservationQuery, ReservationState, Scope, Window, ZoneId,
};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::bodies::{QueryBody, WindowBody};
use super::partitions::{calendar_now, capacity, reservation_id};
use super::{D, Result, ordered, svc_err};
use crate::AppState;
use crate::error::{ApiError, parse_body};
use crate::promise_wire::{promise_amounts, promise_name};

fn window(w: Option<&WindowBody>, now: DateTime<Utc>) -> Result<Option<(Window, Scope)>> {
    let Some(w) = w else { return Ok(None) };
    let scope = match w.scope.as_deref() {
        None | Some("inclusive") => Scope::Inclusive,
        Some("exclusive") => Scope::Exclusive,
        Some(o) => {
            return Err(ApiError::bad_request(
                format!("`window.scope` is `{o}`; expected inclusive or exclusive"),
                D,
            ));
        }
    };
    let start = w.start.unwrap_or(now);
    ordered(Some(start), w.end, "window.end")?;
    Ok(Some((Window { start, end: w.end }, scope)))
}

/// One metric of `l`, or all four when none is asked.
fn level(l: &CapacityLevels, metric: Option<&str>) -> Value {
    match metric {
        Some("total") => json!(l.total),
        Some("reserved") => json!(l.reserved),
        Some("usage") => json!(l.usage),
        Some(_) => json!(l.available),
        None => serde_json::to_value(l).unwrap_or_default(),
    }
}

/// Promise's `utilization`: per pool, one entry per change of its levels over the window,
/// `{"timestamp", "pool-id", "capacity": {dimension: value}}`.
fn utilization(pools: &[PoolCapacity], metric: Option<&str>) -> Vec<Value> {
    let mut out = Vec::new();
    for p in pools {
        for step in &p.timeline {
            let capacity: serde_json::Map<String, Value> = step
                .levels
                .iter()
                .map(|(d, l)| (promise_name(d), level(l, metric)))
                .collect();
            out.push(json!({
                "timestamp": step.at,
                "pool-id": p.pool.to_string(),
                "capacity": capacity,
            }));
        }
    }
    out
}

/// A reservation as `query-reservation` details it: the calendar record plus Promise's names
/// (`reservation-id`, `pool-id`, `capacity`, `active`).
fn reservation_detail(r: &Reservation, now: DateTime<Utc>) -> Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    let active =
        r.state == ReservationState::Active && r.start <= now && r.end.is_none_or(|e| e > now);
    v["reservation-id"] = json!(r.id.to_string());
    v["pool-id"] = json!(r.pool.to_string());
    v["zone"] = json!(r.pool.zone.0);
    v["provider"] = json!(r.pool.provider.0);
    v["capacity"] = promise_amounts(&r.amounts);
    for (field, a) in [
        ("amounts", &r.amounts),
        ("allocated", &r.allocated),
        ("remaining", &r.remaining),
        ("released", &r.released),
    ] {
        v[field] = promise_amounts(a);
    }
    v["allocations"] = json!(
        r.allocations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    );
    v["active"] = json!(active);
    v
}

/// `POST /query-reservation`: Promise's query-capacity with `capacity: reserved`. Cancelled
/// reservations are gone (Promise destroys them); ended ones are listed with `active: false`.
pub async fn query_reservation(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: QueryBody = if body.is_empty() {
        QueryBody::default()
    } else {
        parse_body(&body, D)?
    };
    let now = calendar_now(&st).await?;
    let elements = b.elements.unwrap_or_default();
    let mut without_in: BTreeSet<(Option<String>, ReservationId)> = BTreeSet::new();
    for w in &b.without {
        without_in.insert(reservation_id(&st, Some(w))?);
    }
    let without = BTreeSet::new();
    let win = window(b.window.as_ref(), now)?;
    let zone = b.zone.map(ZoneId);
    let provider = b.provider.map(ProviderId);
    let q = ReservationQuery {
        zone: zone.clone(),
        provider: provider.clone(),
        window: win,
        elements_some: elements.some.into_iter().map(ElementId).collect(),
        elements_every: elements.every.into_iter().map(ElementId).collect(),
        without,
        states: [
            ReservationState::Initialized,
            ReservationState::Active,
            ReservationState::Expired,
            ReservationState::Ended,
        ]
        .into_iter()
        .collect(),
        ..ReservationQuery::default()
    };
    let show = b.show_utilization.unwrap_or(true);
    let cq = CapacityQuery {
        zone,
        provider,
        window: win.map_or(
            Window {
                start: now,
                end: None,
            },
            |(w, _)| w,
        ),
        timeline: show,
    };
    let parts = st
        .reservations
        .read_all(|p, c| {
            let mut q = q.clone();
            q.without = without_in
                .iter()
                .filter(|(wp, _)| wp.as_deref() == p)
                .map(|(_, id)| *id)
                .collect();
            let found: Vec<(String, Reservation)> = c
                .query_reservations(&q)
                .into_iter()
                .map(|r| (berth_service::qualify(p, r.id), r))
                .collect();
            (found, c.query_capacity(&cq), c.clock().unwrap_or(now))
        })
        .await
        .map_err(|e| svc_err(&e))?;
    let now = parts.iter().map(|(_, _, t)| *t).max().unwrap_or(now);
    let mut found = Vec::new();
    let mut report = berth_calendar::CapacityReport { pools: Vec::new() };
    for (f, r, _) in parts {
        found.extend(f);
        let r = r.map_err(|e| ApiError::bad_request(format!("`window`: {e}"), D))?;
        report.pools.extend(r.pools);
    }
    report.pools.sort_by(|a, b| a.pool.cmp(&b.pool));
    let ids: Vec<String> = found.iter().map(|(id, _)| id.clone()).collect();
    let details: Vec<Value> = found
        .iter()
        .map(|(id, r)| {
            let mut v = reservation_detail(r, now);
            v["reservation-id"] = json!(id);
            v
        })
        .collect();
    let utilization = if show {
        utilization(&report.pools, Some("reserved"))
    } else {
        Vec::new()
    };
    Ok((
        StatusCode::OK,
        Json(json!({"reservations": ids, "details": details, "utilization": utilization})),
    )
        .into_response())
}

/// `POST /query-capacity`.
pub async fn query_capacity(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: QueryBody = if body.is_empty() {
        QueryBody::default()
    } else {
        parse_body(&body, D)?
    };
    let now = calendar_now(&st).await?;
    let (w, _) = window(b.window.as_ref(), now)?.unwrap_or((
        Window {
            start: now,
            end: None,
        },
        Scope::Inclusive,
    ));
    let field = b.capacity.clone();
    if let Some(f) = &field
        && !["total", "reserved", "usage", "available"].contains(&f.as_str())
    {
        return Err(ApiError::bad_request(
            format!("`capacity` is `{f}`; expected total, reserved, usage or available"),
            D,
        ));
    }
    let show = b.show_utilization.unwrap_or(true);
    let q = CapacityQuery {
        zone: b.zone.map(ZoneId),
        provider: b.provider.map(ProviderId),
        window: w,
        timeline: show,
    };
    let report = capacity(&st, &q)
        .await?
        .map_err(|e| ApiError::bad_request(format!("`window`: {e}"), D))?;
    let collections: Vec<String> = report
        .pools
        .iter()
        .map(|p| format!("ResourcePool:{}", p.pool))
        .collect();
    let mut capacity = serde_json::Map::new();
    for p in &report.pools {
        let summary: serde_json::Map<String, Value> = p
            .summary
            .iter()
            .map(|(d, l)| (promise_name(d), level(l, field.as_deref())))
            .collect();
        capacity.insert(p.pool.to_string(), Value::Object(summary));
    }
    let utilization = utilization(&report.pools, field.as_deref());
    Ok((
        StatusCode::OK,
        Json(json!({"collections": collections, "capacity": capacity, "utilization": utilization})),
    )
        .into_response())
}
