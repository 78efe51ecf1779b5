//! Promise shim routes (seed 001 Annex C): reservations, instances, capacity, providers and
//! subscriptions, with `result: ok|conflict|error` bodies and capacities given as numbers or
//! numeric strings (`"cores": "5"`).

use std::collections::{BTreeMap, BTreeSet};

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use berth_calendar::{
    AllocationId, AllocationRequest, Amounts, Applied, CapacityChange, CapacityQuery, Command,
    Dimension, ElementId, PoolKey, Priority, ProviderId, ReservationId, ReservationQuery,
    ReservationRequest, Scope, TenantId, ThresholdSubscription, Window, ZoneId,
};
use berth_service::{ProviderInfo, ReservationFilter};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::AppState;
use crate::error::{ApiError, Dialect, parse_body};

const D: Dialect = Dialect::Promise;
/// Zone used when a request names none.
pub const DEFAULT_ZONE: &str = "default";
/// Provider used when a capacity request names none.
pub const DEFAULT_PROVIDER: &str = "default";

type Result<T> = std::result::Result<T, ApiError>;

/// A quantity: a JSON number or a numeric string.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum Quantity {
    /// `5`.
    Number(u64),
    /// `"5"`.
    Text(String),
}

fn amounts(cap: &BTreeMap<String, Quantity>) -> Result<Amounts> {
    let mut a = Amounts::new();
    for (k, q) in cap {
        let v = match q {
            Quantity::Number(n) => *n,
            Quantity::Text(s) => s.trim().parse::<u64>().map_err(|_| {
                ApiError::bad_request(
                    format!("capacity `{k}` is `{s}`; expected a non-negative integer"),
                    D,
                )
            })?,
        };
        a.set(Dimension(k.clone()), v);
    }
    Ok(a)
}

/// A time window.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct WindowBody {
    /// Start.
    pub start: Option<DateTime<Utc>>,
    /// End.
    pub end: Option<DateTime<Utc>>,
    /// `inclusive` (overlap) or `exclusive` (inside).
    pub scope: Option<String>,
}

/// Element filters.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct ElementsBody {
    /// Some of these.
    #[serde(default)]
    pub some: Vec<String>,
    /// All of these.
    #[serde(default)]
    pub every: Vec<String>,
}

/// `create-reservation` / `update-reservation` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct ReservationBody {
    /// Reservation to update.
    pub reservation_id: Option<String>,
    /// Availability zone.
    pub zone: Option<String>,
    /// Provider (pool) in the zone.
    pub provider: Option<String>,
    /// Start (default now).
    pub start: Option<DateTime<Utc>>,
    /// End (default open).
    pub end: Option<DateTime<Utc>>,
    /// Expiry.
    pub expiry: Option<DateTime<Utc>>,
    /// Amounts per dimension.
    #[schema(value_type = Object)]
    pub capacity: Option<BTreeMap<String, Quantity>>,
    /// Protected elements.
    pub elements: Option<Vec<String>>,
    /// `low`, `normal` or `high`.
    pub priority: Option<String>,
    /// Owner.
    pub tenant: Option<String>,
}

fn priority(p: Option<&str>) -> Result<Option<Priority>> {
    match p {
        None => Ok(None),
        Some("low") => Ok(Some(Priority::Low)),
        Some("normal") => Ok(Some(Priority::Normal)),
        Some("high") => Ok(Some(Priority::High)),
        Some(o) => Err(ApiError::bad_request(
            format!("priority `{o}` is unknown; expected low, normal or high"),
            D,
        )),
    }
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

fn reservation_id(s: Option<&str>) -> Result<ReservationId> {
    let s = s.ok_or_else(|| ApiError::bad_request("`reservation-id` is missing", D))?;
    s.strip_prefix('r')
        .and_then(|n| n.parse().ok())
        .map(ReservationId)
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                format!("unknown reservation `{s}`"),
                D,
            )
        })
}

/// `POST /create-reservation`.
pub async fn create_reservation(
    State(st): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response> {
    let b: ReservationBody = parse_body(&body, D)?;
    let cap = b
        .capacity
        .as_ref()
        .ok_or_else(|| ApiError::bad_request("`capacity` is missing", D))?;
    let mut req = ReservationRequest::new(b.zone.as_deref().unwrap_or(DEFAULT_ZONE), amounts(cap)?);
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
        json!({"reservation-id": id.to_string()}),
        "reservation request accepted",
    ))
}

/// `POST /update-reservation`: fields given replace the reservation's; others are kept.
pub async fn update_reservation(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: ReservationBody = parse_body(&body, D)?;
    let id = reservation_id(b.reservation_id.as_deref())?;
    let current = st
        .reservations
        .read(|c| c.request_of(id))
        .await
        .map_err(|e| svc_err(&e))?;
    let mut req = current.ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!("unknown reservation `{id}`"),
            D,
        )
    })?;
    if let Some(z) = b.zone {
        req.zone = ZoneId(z);
    }
    if let Some(p) = b.provider {
        req.provider = Some(ProviderId(p));
    }
    if let Some(cap) = &b.capacity {
        req.amounts = amounts(cap)?;
    }
    req.start = b.start.or(req.start);
    req.end = b.end.or(req.end);
    req.expiry = b.expiry.or(req.expiry);
    if let Some(e) = b.elements {
        req.elements = e.into_iter().map(ElementId).collect();
    }
    if let Some(p) = priority(b.priority.as_deref())? {
        req.priority = p;
    }
    st.reservations
        .command(Command::UpdateReservation { id, request: req }, None)
        .await
        .map_err(|e| svc_err(&e))?;
    Ok(ok(json!({}), "reservation update successful"))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
struct IdBody {
    reservation_id: Option<String>,
    instance_id: Option<String>,
}

/// `POST /cancel-reservation`.
pub async fn cancel_reservation(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: IdBody = parse_body(&body, D)?;
    let id = reservation_id(b.reservation_id.as_deref())?;
    st.reservations
        .command(Command::CancelReservation { id }, None)
        .await
        .map_err(|e| svc_err(&e))?;
    Ok(ok(json!({}), "reservation canceled"))
}

/// `query-reservation` / `query-capacity` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct QueryBody {
    /// Zone.
    pub zone: Option<String>,
    /// Provider.
    pub provider: Option<String>,
    /// Include the utilization timeline.
    #[serde(default)]
    pub show_utilization: bool,
    /// Reservation ids to leave out.
    #[serde(default)]
    pub without: Vec<String>,
    /// Element filters.
    pub elements: Option<ElementsBody>,
    /// Time window.
    pub window: Option<WindowBody>,
    /// `total`, `reserved`, `usage` or `available` (query-capacity).
    pub capacity: Option<String>,
}

fn window(w: Option<&WindowBody>, now: DateTime<Utc>) -> Result<Option<(Window, Scope)>> {
    let Some(w) = w else { return Ok(None) };
    let scope = match w.scope.as_deref() {
        None | Some("inclusive") => Scope::Inclusive,
        Some("exclusive") => Scope::Exclusive,
        Some(o) => {
            return Err(ApiError::bad_request(
                format!("window scope `{o}` is unknown; expected inclusive or exclusive"),
                D,
            ));
        }
    };
    Ok(Some((
        Window {
            start: w.start.unwrap_or(now),
            end: w.end,
        },
        scope,
    )))
}

/// `POST /query-reservation`.
pub async fn query_reservation(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: QueryBody = if body.is_empty() {
        QueryBody::default()
    } else {
        parse_body(&body, D)?
    };
    let now = Utc::now();
    let elements = b.elements.unwrap_or_default();
    let mut without = BTreeSet::new();
    for w in &b.without {
        without.insert(reservation_id(Some(w))?);
    }
    let q = ReservationQuery {
        zone: b.zone.map(ZoneId),
        provider: b.provider.map(ProviderId),
        window: window(b.window.as_ref(), now)?,
        elements_some: elements.some.into_iter().map(ElementId).collect(),
        elements_every: elements.every.into_iter().map(ElementId).collect(),
        without,
        ..ReservationQuery::default()
    };
    let found = st
        .reservations
        .read(|c| c.query_reservations(&q))
        .await
        .map_err(|e| svc_err(&e))?;
    let ids: Vec<String> = found.iter().map(|r| r.id.to_string()).collect();
    let details = serde_json::to_value(&found).unwrap_or_default();
    Ok((
        StatusCode::OK,
        Json(json!({"reservations": ids, "details": details, "utilization": []})),
    )
        .into_response())
}

/// `create-instance` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct InstanceBody {
    /// Provider.
    pub provider_id: Option<String>,
    /// Reservation to draw from.
    pub reservation_id: Option<String>,
    /// Zone (without reservation).
    pub zone: Option<String>,
    /// Name.
    pub name: Option<String>,
    /// Image.
    pub image: Option<String>,
    /// Flavor.
    pub flavor: Option<String>,
    /// Amounts (default one instance).
    #[schema(value_type = Object)]
    pub capacity: Option<BTreeMap<String, Quantity>>,
    /// End of the instance's lifetime.
    pub end: Option<DateTime<Utc>>,
}

/// `POST /create-instance`.
pub async fn create_instance(
    State(st): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response> {
    let b: InstanceBody = parse_body(&body, D)?;
    let amounts = match &b.capacity {
        Some(c) => amounts(c)?,
        None => Amounts::new().with("instances", 1),
    };
    let mut req = match &b.reservation_id {
        Some(r) => AllocationRequest::reserved(reservation_id(Some(r))?, amounts),
        None => AllocationRequest::unreserved(b.zone.as_deref().unwrap_or(DEFAULT_ZONE), amounts),
    };
    req.provider = b.provider_id.map(ProviderId);
    req.end = b.end;
    let c = st
        .reservations
        .command(Command::CreateAllocation(req), idem_key(&headers))
        .await
        .map_err(|e| svc_err(&e))?;
    let Applied::AllocationCreated { id, .. } = c.outcome.applied else {
        return Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error",
            D,
        ));
    };
    Ok(ok(
        json!({"instance-id": id.to_string()}),
        "created-instance request accepted",
    ))
}

/// `POST /destroy-instance`.
pub async fn destroy_instance(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: IdBody = parse_body(&body, D)?;
    let s = b
        .instance_id
        .ok_or_else(|| ApiError::bad_request("`instance-id` is missing", D))?;
    let id = s
        .strip_prefix('a')
        .and_then(|n| n.parse().ok())
        .map(AllocationId)
        .ok_or_else(|| {
            ApiError::new(StatusCode::NOT_FOUND, format!("unknown instance `{s}`"), D)
        })?;
    st.reservations
        .command(Command::DestroyAllocation { id }, None)
        .await
        .map_err(|e| svc_err(&e))?;
    Ok(ok(
        json!({}),
        "instance destroyed and resource released back to pool",
    ))
}

/// `increase-capacity` / `decrease-capacity` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct CapacityBody {
    /// `ResourceProvider:<id>` or `ResourcePool:<id>`: the provider of the pool.
    pub source: Option<String>,
    /// Zone of the pool.
    pub zone: Option<String>,
    /// Provider of the pool (instead of `source`).
    pub provider: Option<String>,
    /// Start (default now).
    pub start: Option<DateTime<Utc>>,
    /// End (default for good).
    pub end: Option<DateTime<Utc>>,
    /// Amounts.
    #[schema(value_type = Object)]
    pub capacity: BTreeMap<String, Quantity>,
}

async fn change_capacity(st: AppState, body: Bytes, increase: bool) -> Result<Response> {
    let b: CapacityBody = parse_body(&body, D)?;
    let provider = b
        .provider
        .or_else(|| {
            b.source
                .map(|s| s.split_once(':').map_or(s.clone(), |(_, id)| id.to_owned()))
        })
        .unwrap_or_else(|| DEFAULT_PROVIDER.to_owned());
    let pool = PoolKey::new(b.zone.as_deref().unwrap_or(DEFAULT_ZONE), provider);
    let change = CapacityChange {
        pool: pool.clone(),
        start: b.start.unwrap_or_else(Utc::now),
        end: b.end,
        amounts: amounts(&b.capacity)?,
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
    let at_risk = match &c.outcome.applied {
        Applied::CapacityChanged { at_risk, .. } => {
            serde_json::to_value(at_risk).unwrap_or_default()
        }
        _ => json!([]),
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

/// `POST /query-capacity`.
pub async fn query_capacity(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: QueryBody = if body.is_empty() {
        QueryBody::default()
    } else {
        parse_body(&body, D)?
    };
    let now = Utc::now();
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
            format!("capacity `{f}` is unknown; expected total, reserved, usage or available"),
            D,
        ));
    }
    let q = CapacityQuery {
        zone: b.zone.map(ZoneId),
        provider: b.provider.map(ProviderId),
        window: w,
        timeline: b.show_utilization,
    };
    let report = st
        .reservations
        .read(|c| c.query_capacity(&q))
        .await
        .map_err(|e| svc_err(&e))?
        .map_err(|e| ApiError::bad_request(e.to_string(), D))?;
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
            .map(|(d, l)| {
                let v = match field.as_deref() {
                    Some("total") => json!(l.total),
                    Some("reserved") => json!(l.reserved),
                    Some("usage") => json!(l.usage),
                    Some(_) => json!(l.available),
                    None => serde_json::to_value(l).unwrap_or_default(),
                };
                (d.0.clone(), v)
            })
            .collect();
        capacity.insert(p.pool.to_string(), Value::Object(summary));
    }
    let utilization: Vec<Value> = report
        .pools
        .iter()
        .map(|p| json!({"pool": p.pool.to_string(), "timeline": p.timeline}))
        .collect();
    let utilization = if b.show_utilization {
        utilization
    } else {
        Vec::new()
    };
    Ok((
        StatusCode::OK,
        Json(json!({"collections": collections, "capacity": capacity, "utilization": utilization})),
    )
        .into_response())
}

/// `add-provider` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct ProviderBody {
    /// `openstack`, ...
    pub provider_type: String,
    /// Endpoint URL.
    pub endpoint: Option<String>,
    /// User name.
    pub username: Option<String>,
    /// Password: sealed at rest with the configured key, or not kept; never returned.
    pub password: Option<String>,
    /// Region.
    pub region: Option<String>,
    /// Tenant `{id?, name?}`.
    #[schema(value_type = Object)]
    pub tenant: Option<Value>,
}

/// `POST /add-provider`.
pub async fn add_provider(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: ProviderBody = parse_body(&body, D)?;
    if b.provider_type.trim().is_empty() {
        return Err(ApiError::bad_request("`provider-type` is empty", D));
    }
    let tenant = b
        .tenant
        .as_ref()
        .and_then(|t| t.get("name").or_else(|| t.get("id")))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let info = ProviderInfo {
        id: String::new(),
        provider_type: b.provider_type,
        endpoint: b.endpoint,
        region: b.region,
        tenant,
    };
    let credentials = match (b.username, b.password) {
        (Some(u), Some(p)) => Some(json!({"username": u, "password": p}).to_string()),
        _ => None,
    };
    let id = st
        .reservations
        .add_provider(info, credentials)
        .await
        .map_err(|e| svc_err(&e))?;
    Ok(ok(json!({"provider-id": id}), "provider added"))
}

/// `POST /capacity/{kind}/subscribe` body.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct CapacitySubscribeBody {
    /// Zone watched.
    pub zone: Option<String>,
    /// Provider watched (default: the zone's sum).
    pub provider: Option<String>,
    /// Dimension (default per kind: compute `cores`, network `addresses`, storage `storage`).
    pub dimension: Option<String>,
    /// Notify when available goes below this.
    #[schema(value_type = Object)]
    pub threshold: Quantity,
    /// Where to POST.
    #[serde(alias = "callback-url")]
    pub callback: String,
}

/// `POST /capacity/{kind}/subscribe`.
pub async fn capacity_subscribe(
    State(st): State<AppState>,
    Path(kind): Path<String>,
    body: Bytes,
) -> Result<Response> {
    let default_dim = match kind.as_str() {
        "compute" => "cores",
        "network" => "addresses",
        "storage" => "storage",
        o => {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                format!("capacity kind `{o}` is unknown; expected compute, network or storage"),
                D,
            ));
        }
    };
    let b: CapacitySubscribeBody = parse_body(&body, D)?;
    let below = amounts(&BTreeMap::from([(
        "threshold".to_owned(),
        b.threshold.clone(),
    )]))?
    .get("threshold");
    let sub = ThresholdSubscription {
        zone: ZoneId(b.zone.unwrap_or_else(|| DEFAULT_ZONE.to_owned())),
        provider: b.provider.map(ProviderId),
        dimension: Dimension(b.dimension.unwrap_or_else(|| default_dim.to_owned())),
        below,
    };
    let id = st
        .reservations
        .subscribe_capacity(sub, b.callback)
        .await
        .map_err(|e| svc_err(&e))?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"subscription-id": id, "result": "ok", "message": "subscribed"})),
    )
        .into_response())
}

/// `POST /reservation/subscribe` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct ReservationSubscribeBody {
    /// Filters: `reservation-id`, `zone`, `events`.
    #[serde(default)]
    pub filters: FilterBody,
    /// Where to POST.
    #[serde(alias = "callback-url")]
    pub callback: String,
}

/// Reservation event filters.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct FilterBody {
    /// One reservation.
    pub reservation_id: Option<String>,
    /// One zone.
    pub zone: Option<String>,
    /// Event names.
    #[serde(default)]
    pub events: Vec<String>,
}

/// `POST /reservation/subscribe`.
pub async fn reservation_subscribe(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: ReservationSubscribeBody = parse_body(&body, D)?;
    let f = ReservationFilter {
        reservation: b.filters.reservation_id,
        zone: b.filters.zone,
        events: b.filters.events,
    };
    let id = st
        .reservations
        .subscribe_reservations(f, b.callback)
        .await
        .map_err(|e| svc_err(&e))?;
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
