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

use std::collections::{BTreeMap, BTreeSet};

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use berth_calendar::{
    AllocationId, AllocationRequest, Amounts, Applied, CapacityChange, CapacityLevels,
    CapacityQuery, Command, Dimension, ElementId, PoolCapacity, PoolKey, Priority, ProviderId,
    Reservation, ReservationId, ReservationQuery, ReservationRequest, ReservationState, Scope,
    TenantId, ThresholdSubscription, Window, ZoneId,
};
use berth_service::{ProviderFlavor, ProviderInfo, ReservationFilter};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::AppState;
use crate::error::{ApiError, Dialect, parse_body};
use crate::promise_wire::{promise_amounts, promise_name};

const D: Dialect = Dialect::Promise;
/// Zone used when a request names none.
pub const DEFAULT_ZONE: &str = "default";
/// Provider used when a capacity request names none (always known).
pub const DEFAULT_PROVIDER: &str = berth_service::DEFAULT_PROVIDER;

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

impl Quantity {
    /// The value; `field` names it in the error.
    fn value(&self, field: &str) -> Result<u64> {
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
fn amount(key: &str, q: &Quantity, field: &str) -> Result<(Dimension, u64)> {
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
fn amounts(cap: &BTreeMap<String, Quantity>, field: &str) -> Result<Amounts> {
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

/// What a `source` names: a pool id, or a provider whose pool is in the request's zone.
#[derive(Debug, Clone, PartialEq, Eq)]
enum SourceRef {
    Pool(PoolKey),
    Provider(String),
}

/// Reads a `source` (see the module docs for the accepted forms); `field` names it in errors.
fn source_ref(v: &Value, field: &str) -> Result<SourceRef> {
    let text = match v {
        Value::String(s) => s.as_str(),
        Value::Object(o) => match o.get("id") {
            Some(Value::String(s)) => s.as_str(),
            _ => {
                return Err(ApiError::bad_request(
                    format!(
                        "`{field}.id` is missing or not a string; expected a provider or pool id"
                    ),
                    D,
                ));
            }
        },
        _ => {
            return Err(ApiError::bad_request(
                format!("`{field}` is {v}; expected a provider or pool id, or an object with `id`"),
                D,
            ));
        }
    };
    let text = text.trim();
    let pool = |id: &str| match id.rsplit_once('/') {
        Some((z, p)) if !z.is_empty() && !p.is_empty() => Ok(SourceRef::Pool(PoolKey::new(z, p))),
        Some(_) => Err(ApiError::bad_request(
            format!("`{field}` is `{text}`; expected a pool id `<zone>/<provider-id>`"),
            D,
        )),
        None => Ok(SourceRef::Provider(id.to_owned())),
    };
    if let Some(id) = text.strip_prefix("ResourcePool:") {
        pool(id)
    } else if let Some(id) = text.strip_prefix("ResourceProvider:") {
        if id.is_empty() || id.contains('/') {
            return Err(ApiError::bad_request(
                format!("`{field}` is `{text}`; expected `ResourceProvider:<provider-id>`"),
                D,
            ));
        }
        Ok(SourceRef::Provider(id.to_owned()))
    } else if text.is_empty() {
        Err(ApiError::bad_request(
            format!("`{field}` is empty; expected a provider or pool id"),
            D,
        ))
    } else {
        pool(text)
    }
}

/// The pool a capacity request or subscription names: `source`, else `provider`, in `zone`.
fn pool_of(
    source: Option<&Value>,
    zone: Option<&str>,
    provider: Option<&str>,
    field: &str,
) -> Result<PoolKey> {
    let zone = zone.unwrap_or(DEFAULT_ZONE);
    match source.map(|s| source_ref(s, field)).transpose()? {
        Some(SourceRef::Pool(k)) => Ok(k),
        Some(SourceRef::Provider(p)) => Ok(PoolKey::new(zone, p)),
        None => Ok(PoolKey::new(zone, provider.unwrap_or(DEFAULT_PROVIDER))),
    }
}

/// Refuses a provider the daemon does not know (`field` names where it came from).
async fn known_provider(st: &AppState, id: &str, field: &str) -> Result<ProviderInfo> {
    st.reservations
        .provider(id)
        .await
        .map_err(|e| svc_err(&e))?
        .ok_or_else(|| {
            not_found(format!(
                "`{field}`: provider `{id}` is unknown; register it with add-provider or list it in the inventory"
            ))
        })
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
    /// Provider (pool) in the zone. `provider-id` is accepted alike.
    #[serde(alias = "provider-id")]
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
            format!("`priority` is `{o}`; expected low, normal or high"),
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

/// A reservation id with its partition: `r<n>`, or `<partition>:r<n>` when the calendar is
/// partitioned.
fn reservation_id(st: &AppState, s: Option<&str>) -> Result<(Option<String>, ReservationId)> {
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
async fn capacity(
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

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct IdBody {
    reservation_id: Option<String>,
    instance_id: Option<String>,
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

/// `query-reservation` / `query-capacity` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct QueryBody {
    /// Zone.
    pub zone: Option<String>,
    /// Provider. `provider-id` is accepted alike.
    #[serde(alias = "provider-id")]
    pub provider: Option<String>,
    /// Include the utilization timeline (default true, as in Promise's YANG).
    pub show_utilization: Option<bool>,
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

/// `create-instance` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct InstanceBody {
    /// Provider; `provider` is accepted alike.
    #[serde(alias = "provider")]
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

/// The amounts one instance of `flavor` consumes: its vCPUs (`vcpu`, Promise's `cores`) and
/// memory (`ram_mib`, `ram`); one `instances` when the pool (or the reservation drawn from)
/// counts instances, and its disk (`disk_gib`, `gigabytes`) when the flavor gives one and the
/// pool tracks disk. Pools seeded from an inventory name the same dimensions.
fn flavor_amounts(f: &ProviderFlavor, pool_dims: &BTreeSet<Dimension>) -> Amounts {
    let mut a = Amounts::new();
    a.set(Dimension::vcpu(), f.vcpus);
    a.set(Dimension::ram_mib(), f.ram);
    if pool_dims.contains(&Dimension::instances()) {
        a.set(Dimension::instances(), 1);
    }
    if f.disk > 0 && pool_dims.contains(&Dimension::disk_gib()) {
        a.set(Dimension::disk_gib(), f.disk);
    }
    a
}

/// Finds `name` in `provider`'s catalog, or (no provider) in the first known provider that
/// offers it; answers the provider id with the flavor.
async fn find_flavor(
    st: &AppState,
    name: &str,
    provider: Option<&ProviderInfo>,
) -> Result<(String, ProviderFlavor)> {
    if let Some(p) = provider {
        return p
            .flavors
            .iter()
            .find(|f| f.is(name))
            .map(|f| (p.id.clone(), f.clone()))
            .ok_or_else(|| {
                let known: Vec<&str> = p.flavors.iter().map(|f| f.name.as_str()).collect();
                ApiError::bad_request(
                    format!(
                        "`flavor`: flavor `{name}` is unknown to provider `{}`; expected one of [{}]",
                        p.id,
                        known.join(", ")
                    ),
                    D,
                )
            });
    }
    let all = st
        .reservations
        .all_providers()
        .await
        .map_err(|e| svc_err(&e))?;
    all.iter()
        .find_map(|p| {
            p.flavors
                .iter()
                .find(|f| f.is(name))
                .map(|f| (p.id.clone(), f.clone()))
        })
        .ok_or_else(|| {
            ApiError::bad_request(
                format!("`flavor`: no known provider offers flavor `{name}`"),
                D,
            )
        })
}

/// The calendar's now (never before the wall clock the service reads).
async fn calendar_now(st: &AppState) -> Result<DateTime<Utc>> {
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
async fn pool_dimensions(st: &AppState, pool: &PoolKey) -> Result<BTreeSet<Dimension>> {
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

/// `POST /create-instance`: draws the flavor's amounts (or `capacity`) from the pool at low
/// priority, or from `reservation-id` at high priority (ending with the reservation).
pub async fn create_instance(
    State(st): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response> {
    let b: InstanceBody = parse_body(&body, D)?;
    names(&[
        ("zone", b.zone.as_deref()),
        ("provider-id", b.provider_id.as_deref()),
        ("name", b.name.as_deref()),
        ("flavor", b.flavor.as_deref()),
    ])?;
    let provider = match &b.provider_id {
        Some(p) => Some(known_provider(&st, p, "provider-id").await?),
        None => None,
    };
    let rid = b
        .reservation_id
        .as_deref()
        .map(|r| reservation_id(&st, Some(r)))
        .transpose()?;
    let partition = rid.as_ref().and_then(|(p, _)| p.clone());
    let rid = rid.map(|(_, id)| id);
    // The pool and dimensions of the reservation drawn from.
    let reserved = match rid {
        Some(id) => Some(
            st.reservations
                .read_at(partition.as_deref(), |c| {
                    c.reservation(id).map(|r| {
                        let dims: BTreeSet<Dimension> =
                            r.amounts.iter().map(|(d, _)| d.clone()).collect();
                        (r.pool, dims)
                    })
                })
                .await
                .map_err(|e| svc_err(&e))?
                .ok_or_else(|| {
                    not_found(format!("`reservation-id`: reservation `{id}` is unknown"))
                })?,
        ),
        None => None,
    };
    // Without `provider-id`, an unreserved instance of a flavor goes to the provider offering
    // it (Promise takes the first provider).
    let mut provider_id = b.provider_id.clone();
    let amounts = match (&b.capacity, &b.flavor) {
        (Some(c), _) => amounts(c, "capacity")?,
        (None, Some(name)) => {
            let catalog = match (&provider, &reserved) {
                (Some(p), _) => Some(p.clone()),
                (None, Some((pool, _))) => {
                    Some(known_provider(&st, &pool.provider.0, "reservation-id").await?)
                }
                (None, None) => None,
            };
            let (pid, flavor) = find_flavor(&st, name, catalog.as_ref()).await?;
            let dims = match &reserved {
                Some((_, dims)) => dims.clone(),
                None => {
                    let zone = b.zone.as_deref().unwrap_or(DEFAULT_ZONE);
                    let dims = pool_dimensions(&st, &PoolKey::new(zone, pid.as_str())).await?;
                    provider_id.get_or_insert(pid);
                    dims
                }
            };
            flavor_amounts(&flavor, &dims)
        }
        (None, None) => Amounts::new().with(Dimension::instances().0, 1),
    };
    let mut req = match rid {
        Some(r) => AllocationRequest::reserved(r, amounts),
        None => AllocationRequest::unreserved(b.zone.as_deref().unwrap_or(DEFAULT_ZONE), amounts),
    };
    req.provider = provider_id.map(ProviderId);
    req.end = b.end;
    let c = st
        .reservations
        .command_at(
            partition.as_deref(),
            Command::CreateAllocation(req),
            idem_key(&headers),
        )
        .await
        .map_err(|e| svc_err(&e))?;
    let Applied::AllocationCreated { id, .. } = c.outcome.applied else {
        return Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error",
            D,
        ));
    };
    let record = st
        .reservations
        .read_at(c.partition.as_deref(), |c| c.allocation(id))
        .await
        .map_err(|e| svc_err(&e))?;
    let part = c.partition.as_deref();
    let instance = berth_service::qualify(part, id);
    // A pool of a real cloud: the server boots on its host, or the instance is undone.
    let vim = record.as_ref().and_then(|a| {
        st.reservations
            .vim()
            .filter(|v| v.serves(&a.pool.provider.0))
    });
    let booted = match (vim, &record) {
        (Some(vim), Some(a)) => {
            let Some(flavor) = b.flavor.clone() else {
                undo_instance(&st, part, id).await;
                return Err(ApiError::bad_request(
                    format!(
                        "`flavor` is missing; provider `{}` boots servers, which need a flavor",
                        a.pool.provider
                    ),
                    D,
                ));
            };
            let req = berth_service::BootRequest {
                instance: instance.clone(),
                host: a.pool.zone.0.clone(),
                name: b
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("berth-{instance}")),
                flavor,
                image: b.image.clone(),
            };
            match vim.boot(&req).await {
                Ok(v) => Some(v),
                Err(e) => {
                    undo_instance(&st, part, id).await;
                    return Err(svc_err_at(&e, "flavor"));
                }
            }
        }
        _ => None,
    };
    let mut body = json!({"instance-id": instance});
    if let Some(v) = booted {
        body["server-id"] = json!(v.server);
        body["host"] = json!(v.host);
        body["status"] = json!(v.status);
    }
    if let Some(a) = record {
        body["priority"] = serde_json::to_value(a.priority).unwrap_or_default();
        body["pool-id"] = json!(a.pool.to_string());
        body["capacity"] = promise_amounts(&a.amounts);
        body["reservation-id"] = json!(a.reservation.map(|r| berth_service::qualify(part, r)));
        body["end"] = json!(a.end);
    }
    Ok(ok(body, "created-instance request accepted"))
}

/// Destroys an instance whose server could not boot (logged if even that fails).
async fn undo_instance(st: &AppState, partition: Option<&str>, id: AllocationId) {
    if let Err(e) = st
        .reservations
        .command_at(partition, Command::DestroyAllocation { id }, None)
        .await
    {
        tracing::warn!(instance = %id, error = %e, "an instance whose server did not boot is left in the calendar");
    }
}

/// `POST /destroy-instance`: deletes the instance's server first when its provider is a real
/// cloud, then releases its amounts.
pub async fn destroy_instance(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: IdBody = parse_body(&body, D)?;
    let s = b
        .instance_id
        .ok_or_else(|| ApiError::bad_request("`instance-id` is missing", D))?;
    let (partition, local) = st
        .reservations
        .split_id(&s)
        .map_err(|e| not_found(format!("`instance-id`: instance `{s}` is unknown ({e})")))?;
    let id = local
        .strip_prefix('a')
        .and_then(|n| n.parse().ok())
        .map(AllocationId)
        .ok_or_else(|| not_found(format!("`instance-id`: instance `{s}` is unknown")))?;
    if let Some(vim) = st.reservations.vim() {
        let pool = st
            .reservations
            .read_at(partition.as_deref(), |c| c.allocation(id).map(|a| a.pool))
            .await
            .map_err(|e| svc_err(&e))?;
        if pool.is_some_and(|p| vim.serves(&p.provider.0)) {
            let instance = berth_service::qualify(partition.as_deref(), id);
            vim.destroy(&instance)
                .await
                .map_err(|e| svc_err_at(&e, "instance-id"))?;
        }
    }
    st.reservations
        .command_at(
            partition.as_deref(),
            Command::DestroyAllocation { id },
            None,
        )
        .await
        .map_err(|e| svc_err_at(&e, "instance-id"))?;
    Ok(ok(
        json!({}),
        "instance destroyed and resource released back to pool",
    ))
}

/// `increase-capacity` / `decrease-capacity` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct CapacityBody {
    /// The pool: a pool id, `ResourcePool:<pool-id>`, a provider id,
    /// `ResourceProvider:<provider-id>`, or an object `{"id": …}` with one of those.
    #[schema(value_type = Object)]
    pub source: Option<Value>,
    /// Zone of the pool (when `source` names a provider).
    pub zone: Option<String>,
    /// Provider of the pool (instead of `source`). `provider-id` is accepted alike.
    #[serde(alias = "provider-id")]
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

/// `add-provider` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct ProviderBody {
    /// `openstack`, ...
    pub provider_type: String,
    /// A name people read (the console shows it; the id stays the key).
    pub name: Option<String>,
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
    /// Flavor catalog (what Promise discovers from Nova): `[{id?, name?, vcpus, ram, disk?}]`.
    pub flavors: Option<Vec<FlavorBody>>,
}

/// One flavor of an `add-provider` catalog.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct FlavorBody {
    /// Id (defaults to the name).
    pub id: Option<String>,
    /// Name (defaults to the id).
    pub name: Option<String>,
    /// Virtual CPUs.
    #[schema(value_type = Object)]
    pub vcpus: Quantity,
    /// Memory, MB.
    #[schema(value_type = Object)]
    pub ram: Quantity,
    /// Root disk, GB.
    #[schema(value_type = Object)]
    pub disk: Option<Quantity>,
}

fn flavors(list: Vec<FlavorBody>) -> Result<Vec<ProviderFlavor>> {
    let mut out: Vec<ProviderFlavor> = Vec::new();
    for (i, f) in list.into_iter().enumerate() {
        let at = format!("flavors[{i}]");
        let (id, name) = match (f.id, f.name) {
            (Some(id), Some(name)) => (id, name),
            (Some(x), None) | (None, Some(x)) => (x.clone(), x),
            (None, None) => {
                return Err(ApiError::bad_request(
                    format!("`{at}` has neither `id` nor `name`; expected at least one"),
                    D,
                ));
            }
        };
        if out.iter().any(|o| o.is(&id) || o.is(&name)) {
            return Err(ApiError::bad_request(
                format!("`{at}`: flavor `{name}` is listed twice"),
                D,
            ));
        }
        out.push(ProviderFlavor {
            vcpus: f.vcpus.value(&format!("{at}.vcpus"))?,
            ram: f.ram.value(&format!("{at}.ram"))?,
            disk: f
                .disk
                .map(|d| d.value(&format!("{at}.disk")))
                .transpose()?
                .unwrap_or(0),
            id,
            name,
        });
    }
    Ok(out)
}

/// `POST /add-provider`.
pub async fn add_provider(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let b: ProviderBody = parse_body(&body, D)?;
    names(&[
        ("provider-type", Some(b.provider_type.as_str())),
        ("name", b.name.as_deref()),
        ("region", b.region.as_deref()),
        ("username", b.username.as_deref()),
    ])?;
    let tenant = b
        .tenant
        .as_ref()
        .and_then(|t| t.get("name").or_else(|| t.get("id")))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let given_flavors = b.flavors.is_some();
    let info = ProviderInfo {
        id: String::new(),
        name: b.name,
        provider_type: b.provider_type,
        endpoint: b.endpoint,
        region: b.region,
        tenant,
        flavors: flavors(b.flavors.unwrap_or_default())?,
    };
    // A Keystone v3 endpoint and no catalog in the body: the cloud is asked.
    let v3 = info
        .endpoint
        .as_deref()
        .is_some_and(|e| e.trim_end_matches('/').ends_with("/v3"));
    let discovery = match (st.reservations.vim(), v3 && !given_flavors) {
        (Some(vim), true) => {
            let (Some(username), Some(password)) = (b.username.clone(), b.password.clone()) else {
                return Err(ApiError::bad_request(
                    "`username` and `password` are needed to discover a Keystone v3 endpoint; or give `flavors` to register it as written",
                    D,
                ));
            };
            let d = berth_service::Discovery {
                endpoint: info.endpoint.clone().unwrap_or_default(),
                username,
                password,
                tenant: info.tenant.clone(),
                region: info.region.clone(),
            };
            Some(
                vim.discover(&d)
                    .await
                    .map_err(|e| svc_err_at(&e, "endpoint"))?,
            )
        }
        _ => None,
    };
    let mut info = info;
    if let Some(d) = &discovery {
        info.flavors = d.info.flavors.clone();
        info.region = info.region.or_else(|| d.info.region.clone());
    }
    let credentials = match (b.username, b.password) {
        (Some(u), Some(p)) => Some(json!({"username": u, "password": p}).to_string()),
        _ => None,
    };
    let flavors = info.flavors.clone();
    let id = st
        .reservations
        .add_provider(info, credentials)
        .await
        .map_err(|e| svc_err(&e))?;
    let pool = PoolKey::new(DEFAULT_ZONE, id.as_str()).to_string();
    let mut body = json!({"provider-id": id, "pool-id": pool});
    if let Some(d) = discovery {
        // Each host's free capacity becomes pool `<host>/<provider-id>`.
        let mut pools = berth_service::InventoryPools::new(id.clone());
        pools.pools = d.capacity.clone();
        st.reservations
            .reconcile(&pools)
            .await
            .map_err(|e| svc_err(&e))?;
        let capacity: serde_json::Map<String, Value> = d
            .capacity
            .iter()
            .map(|(host, a)| {
                (
                    PoolKey::new(host.as_str(), id.as_str()).to_string(),
                    promise_amounts(a),
                )
            })
            .collect();
        if let Some(first) = capacity.keys().next() {
            body["pool-id"] = json!(first);
        }
        body["capacity"] = Value::Object(capacity);
        body["flavors"] = json!(flavors
            .iter()
            .map(|f| json!({"id": f.id, "name": f.name, "vcpus": f.vcpus, "ram": f.ram, "disk": f.disk}))
            .collect::<Vec<_>>());
    }
    Ok(ok(body, "provider added"))
}

/// `POST /capacity/{kind}/subscribe` body.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct CapacitySubscribeBody {
    /// Zone watched.
    pub zone: Option<String>,
    /// Provider watched (default: the zone's sum). `provider-id` is accepted alike.
    #[serde(alias = "provider-id")]
    pub provider: Option<String>,
    /// The pool watched, in any `source` form (pool id, `ResourcePool:…`, provider id,
    /// `ResourceProvider:…`, `{"id": …}`); overrides `provider`.
    #[schema(value_type = Object)]
    pub source: Option<Value>,
    /// Dimension, any alias (default per kind: compute `cores`, network `addresses`, storage
    /// `gigabytes`, that is `vcpu`, `addresses`, `disk_gib`).
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
