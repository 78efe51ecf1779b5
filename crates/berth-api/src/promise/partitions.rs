//! Reads across the calendar's partitions: reservation ids with their partition, the
//! calendar's now, capacity over every partition and the dimensions a pool tracks.

use std::collections::BTreeSet;

use berth_calendar::{CapacityQuery, Dimension, PoolKey, ReservationId, Window};
use chrono::{DateTime, Utc};

use super::{D, Result, not_found, svc_err};
use crate::AppState;
use crate::error::ApiError;

/// A reservation id with its partition: `r<n>`, or `<partition>:r<n>` when the calendar is
/// partitioned.
pub(super) fn reservation_id(
    st: &AppState,
    s: Option<&str>,
) -> Result<(Option<String>, ReservationId)> {
    let s = s.ok_or_else(|| ApiError::bad_request("`reservation-id` is missing", D))?;
    let (partition, local) = st.reservations.split_id(s).map_err(|e| {
        not_found(format!(
            "`reservation-id`: reservation `{s}` is unknown ({e})"
        ))
    })?;
    local
        .strip_prefix('r')
        .and_then(|n| n.parse().ok())
        .map(|n| (partition, ReservationId(n)))
        .ok_or_else(|| not_found(format!("`reservation-id`: reservation `{s}` is unknown")))
}

/// Capacity over every partition, pools in pool order.
pub(super) async fn capacity(
    st: &AppState,
    q: &CapacityQuery,
) -> Result<std::result::Result<berth_calendar::CapacityReport, berth_calendar::CalendarError>> {
    let parts = st
        .reservations
        .read_all(|_, c| c.query_capacity(q))
        .await
        .map_err(|e| svc_err(&e))?;
    let mut pools = Vec::new();
    for r in parts {
        match r {
            Ok(r) => pools.extend(r.pools),
            Err(e) => return Ok(Err(e)),
        }
    }
    pools.sort_by(|a, b| a.pool.cmp(&b.pool));
    Ok(Ok(berth_calendar::CapacityReport { pools }))
}

/// The calendar's now (never before the wall clock the service reads).
pub(super) async fn calendar_now(st: &AppState) -> Result<DateTime<Utc>> {
    Ok(st
        .reservations
        .read_all(|_, c| c.clock())
        .await
        .map_err(|e| svc_err(&e))?
        .into_iter()
        .flatten()
        .max()
        .unwrap_or_else(Utc::now))
}

/// Dimensions `pool` tracks now.
pub(super) async fn pool_dimensions(st: &AppState, pool: &PoolKey) -> Result<BTreeSet<Dimension>> {
    let cq = CapacityQuery {
        zone: Some(pool.zone.clone()),
        provider: Some(pool.provider.clone()),
        window: Window {
            start: calendar_now(st).await?,
            end: None,
        },
        timeline: false,
    };
    Ok(capacity(st, &cq)
        .await?
        .map(|r| {
            r.pools
                .iter()
                .flat_map(|p| p.summary.keys().cloned())
                .collect()
        })
        .unwrap_or_default())
}
