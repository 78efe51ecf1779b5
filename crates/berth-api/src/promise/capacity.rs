//! `increase-capacity` and `decrease-capacity`: changes of a pool's capacity over a window.

use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use berth_calendar::{Applied, CapacityChange, Command};
use chrono::Utc;
use serde_json::json;

use super::amounts::amounts;
use super::bodies::CapacityBody;
use super::partitions::pool_dimensions;
use super::source::{known_provider, pool_of};
use super::{D, Result, names, not_found, ok, ordered, svc_err};
use crate::AppState;
use crate::error::parse_body;

async fn change_capacity(st: AppState, body: Bytes, increase: bool) -> Result<Response> {
    let b: CapacityBody = parse_body(&body, D)?;
    names(&[
        ("zone", b.zone.as_deref()),
        ("provider", b.provider.as_deref()),
    ])?;
    ordered(b.start, b.end, "end")?;
    amounts(&b.capacity, "capacity")?;
    let field = if b.source.is_some() {
        "source"
    } else {
        "provider"
    };
    let pool = pool_of(
        b.source.as_ref(),
        b.zone.as_deref(),
        b.provider.as_deref(),
        "source",
    )?;
    known_provider(&st, &pool.provider.0, field).await?;
    if !increase && pool_dimensions(&st, &pool).await?.is_empty() {
        return Err(not_found(format!(
            "`{field}`: pool `{pool}` has no capacity to decrease"
        )));
    }
    let change = CapacityChange {
        pool: pool.clone(),
        start: b.start.unwrap_or_else(Utc::now),
        end: b.end,
        amounts: amounts(&b.capacity, "capacity")?,
    };
    let cmd = if increase {
        Command::IncreaseCapacity(change)
    } else {
        Command::DecreaseCapacity(change)
    };
    let c = st
        .reservations
        .command(cmd, None)
        .await
        .map_err(|e| svc_err(&e))?;
    // Records by the ids every other answer uses (`r4`, `a2`).
    let at_risk: Vec<String> = match &c.outcome.applied {
        Applied::CapacityChanged { at_risk, .. } => at_risk
            .iter()
            .map(|r| berth_service::inventory::record_id(c.partition.as_deref(), *r))
            .collect(),
        _ => Vec::new(),
    };
    let msg = if increase {
        "capacity increase successful"
    } else {
        "capacity decrease successful"
    };
    Ok(ok(
        json!({"pool-id": pool.to_string(), "at-risk": at_risk}),
        msg,
    ))
}

/// `POST /increase-capacity`.
pub async fn increase_capacity(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    change_capacity(st, body, true).await
}

/// `POST /decrease-capacity`.
pub async fn decrease_capacity(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    change_capacity(st, body, false).await
}
