//! The web console: pages embedded in the binary (`crates/berth-api/ui/`, plain HTML, JS and
//! CSS with no build step) under `/ui/`, and the read-only JSON and event routes they use under
//! `/ui/api/`. Same auth as the rest of the API (a browser sends HTTP Basic).
//!
//! - `GET /ui/api/calendar?from=&to=`: pools with their utilization timeline, reservations,
//!   allocations, capacity changes and preemptions over a window.
//! - `GET /ui/api/plans`: every plan with its outcome (recommendations, objective, proof,
//!   triage).
//! - `GET /ui/api/events`: server-sent events, one per calendar or plan change.
//! - `GET /ui/api/session`: what the caller's credentials allow (the page shows action buttons
//!   only to writers; the actions themselves go to the Promise and HAS routes).
//! - `GET|POST /ui/api/place`: the daemon's datacenter topology, and a Heat template placed on
//!   it with the rack diagram (berth-placement's SVG renderer).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Redirect, Response};
use berth_calendar::{
    AllocationId, CancelReason, CapacityQuery, ReservationQuery, Scope, TerminationReason, Window,
};
use berth_service::Change;
use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, watch};
use utoipa::ToSchema;

use crate::{ApiError, AppState, Dialect};

const D: Dialect = Dialect::Problem;
type Result<T> = std::result::Result<T, ApiError>;

/// Most reservations (and, separately, allocations) one calendar view returns.
pub const MAX_RECORDS: usize = 5000;
/// Most plans the plan list returns (the newest).
pub const MAX_PLANS: usize = 500;
/// Longest window one calendar view covers.
const MAX_WINDOW_DAYS: i64 = 366;
/// Longest improvement phase of a console placement.
const MAX_PLACE_MS: u64 = 10_000;

#[derive(rust_embed::Embed)]
#[folder = "ui/"]
struct Assets;

/// The topology the console places Heat templates on, and a sample template for it.
#[derive(Debug, Clone)]
pub struct PlacementSite {
    /// The datacenter.
    pub topology: Arc<berth_topology::Topology>,
    /// Where it came from (a file path, or `bundled example`).
    pub source: String,
    /// A Heat template that fits it, offered as a starting point.
    pub example: String,
}

/// A page a browser shows instead of the console: why it may not enter, and where to go.
/// Self-contained: without credentials the console's stylesheet is not served either. With
/// `challenge`, a 401 carrying the console's realm: the browser asks for credentials (and drops
/// the ones it holds, which is how HTTP Basic signs out); without, the browser shows the page.
fn door(title: &str, text: &str, challenge: bool) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Berth: {title}</title>\
         <style>main{{max-width:36rem;margin:4rem auto;padding:0 1rem;font-family:sans-serif}}\
         h1{{text-transform:capitalize}}</style></head>\
         <body class=\"door\"><main><h1>{title}</h1><p id=\"door-text\">{text}</p>\
         <p><a id=\"sign-in\" href=\"/ui/login\">Sign in</a></p></main></body></html>\n"
    );
    let mut r = (StatusCode::UNAUTHORIZED, html).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if challenge {
        h.insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"berth\""),
        );
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r.extensions_mut().insert(crate::error::Shaped(D));
    r
}

/// The console's answer to a browser without accepted credentials: none asks for them;
/// wrong ones are said to be wrong on a page the browser shows, whose link asks again.
pub fn sign_in(wrong: bool) -> Response {
    if wrong {
        door(
            "wrong credentials",
            "The user name or password was not accepted. Sign in with the credentials berthd \
             was configured with (<code>[auth] basic</code>).",
            false,
        )
    } else {
        door(
            "sign in",
            "The console needs the user name and password berthd was configured with.",
            true,
        )
    }
}

/// `GET /ui/login` (open): accepted credentials go on to the console; any others are asked
/// for again.
pub async fn login(State(st): State<AppState>, headers: axum::http::HeaderMap) -> Response {
    let h = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if st.auth.access(h).is_some() {
        return Redirect::to("/ui/").into_response();
    }
    door(
        "sign in",
        "The console needs the user name and password berthd was configured with.",
        true,
    )
}

/// `GET /ui/logout` (open): signs the browser out, with or without credentials.
pub async fn logout() -> Response {
    door(
        "signed out",
        "You are signed out of the Berth console.",
        true,
    )
}

/// `GET /ui`: the console lives at `/ui/` (relative links need the slash).
pub async fn root() -> Response {
    Redirect::permanent("/ui/").into_response()
}

/// `GET /ui/` and `GET /ui/{*path}`: an embedded page or asset.
pub async fn asset(path: Option<Path<String>>) -> Response {
    let path = path.map(|Path(p)| p).unwrap_or_default();
    let path = if path.is_empty() { "index.html" } else { &path };
    let Some(file) = Assets::get(path) else {
        return ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no console asset `{path}`"),
            D,
        )
        .into_response();
    };
    let kind = match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    };
    let mut r = (StatusCode::OK, Body::from(file.data.into_owned())).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // The pages load only their own scripts and styles and talk only to this origin.
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// `GET /ui/api/session`: what the caller may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SessionView {
    /// `read` (no action buttons; writes answer 403), `write` or `admin`.
    pub access: String,
}

/// `GET /ui/api/session`.
pub async fn session(State(st): State<AppState>, headers: axum::http::HeaderMap) -> Response {
    let h = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let access = match st.auth.access(h) {
        Some(crate::Access::Admin) => "admin",
        Some(crate::Access::Write) => "write",
        // The auth layer let the request through, so it can read.
        Some(crate::Access::Read) | None => "read",
    };
    axum::Json(SessionView {
        access: access.to_owned(),
    })
    .into_response()
}

/// Utilization levels of one dimension from a step's instant on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct LevelsView {
    /// Capacity.
    pub total: i64,
    /// Held by reservations.
    pub reserved: i64,
    /// Allocated, with and without reservation.
    pub usage: i64,
    /// What a new reservation could still take (negative only under a flagged decrease).
    pub available: i64,
}

/// One step of a pool's utilization timeline.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct StepView {
    /// When the step starts (it lasts until the next one).
    pub at: DateTime<Utc>,
    /// Levels per dimension.
    pub levels: BTreeMap<String, LevelsView>,
}

/// A pool (one provider's capacity in one zone) over the window.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PoolView {
    /// `zone/provider`, as the Promise routes name it.
    pub id: String,
    /// Zone.
    pub zone: String,
    /// Provider id.
    pub provider: String,
    /// The provider's name given at `add-provider` (`null`: none was given).
    pub provider_name: Option<String>,
    /// The provider's type (`openstack`, `inventory`, `static`, …; `null`: not registered).
    pub provider_type: Option<String>,
    /// The provider's tenant given at `add-provider`.
    pub tenant: Option<String>,
    /// The provider's region.
    pub region: Option<String>,
    /// Dimensions tracked.
    pub dimensions: Vec<String>,
    /// Utilization timeline over the window.
    pub timeline: Vec<StepView>,
}

/// A reservation overlapping the window.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ReservationView {
    /// Id (`r<n>`).
    pub id: String,
    /// Pool id.
    pub pool: String,
    /// Start.
    pub start: DateTime<Utc>,
    /// End (`null`: open).
    pub end: Option<DateTime<Utc>>,
    /// Expiry of the unallocated rest.
    pub expiry: Option<DateTime<Utc>>,
    /// `initialized`, `active`, `expired`, `ended` or `cancelled`.
    pub state: String,
    /// `low`, `normal` or `high`.
    pub priority: String,
    /// Reserved amounts.
    pub amounts: BTreeMap<String, u64>,
    /// Held by live allocations.
    pub allocated: BTreeMap<String, u64>,
    /// Owner.
    pub tenant: Option<String>,
    /// A capacity decrease left less than it holds somewhere in its window.
    pub at_risk: bool,
    /// The reservation that preempted it.
    pub preempted_by: Option<String>,
}

/// An allocation (an instance) overlapping the window.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct AllocationView {
    /// Id (`a<n>`).
    pub id: String,
    /// Pool id.
    pub pool: String,
    /// The reservation it draws from.
    pub reservation: Option<String>,
    /// Start of its lifetime.
    pub start: DateTime<Utc>,
    /// End of its lifetime (`null`: unbounded).
    pub end: Option<DateTime<Utc>>,
    /// `active`, `destroyed` or `terminated`.
    pub state: String,
    /// Amounts.
    pub amounts: BTreeMap<String, u64>,
    /// Flagged by a capacity decrease.
    pub at_risk: bool,
    /// The reservation that preempted it.
    pub preempted_by: Option<String>,
}

/// A change of a pool's capacity in one dimension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct CapacityChangeView {
    /// Pool id.
    pub pool: String,
    /// When.
    pub at: DateTime<Utc>,
    /// Dimension.
    pub dimension: String,
    /// Capacity before.
    pub from: i64,
    /// Capacity from then on.
    pub to: i64,
}

/// `GET /ui/api/calendar`: the calendar over a window.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CalendarView {
    /// The calendar's clock.
    pub now: DateTime<Utc>,
    /// Window start.
    pub from: DateTime<Utc>,
    /// Window end.
    pub to: DateTime<Utc>,
    /// Pools, in pool order.
    pub pools: Vec<PoolView>,
    /// Reservations overlapping the window, by id.
    pub reservations: Vec<ReservationView>,
    /// Allocations overlapping the window, by id.
    pub allocations: Vec<AllocationView>,
    /// Capacity changes inside the window, by time.
    pub capacity_changes: Vec<CapacityChangeView>,
    /// More than `MAX_RECORDS` reservations or allocations matched; the first ones are given.
    pub truncated: bool,
}

fn amounts(a: &berth_calendar::Amounts) -> BTreeMap<String, u64> {
    a.iter().map(|(d, q)| (d.0.clone(), *q)).collect()
}

fn word<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

fn overlaps(
    start: DateTime<Utc>,
    end: Option<DateTime<Utc>>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> bool {
    start < to && end.is_none_or(|e| e > from)
}

/// `from`/`to` of a query string; RFC 3339 instants.
fn window(query: Option<&str>, now: DateTime<Utc>) -> Result<(DateTime<Utc>, DateTime<Utc>)> {
    let (mut from, mut to) = (now - TimeDelta::hours(6), now + TimeDelta::days(2));
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = v
            .replace("%3A", ":")
            .replace("%3a", ":")
            .replace("%2B", "+")
            .replace("%2b", "+");
        let at = || {
            DateTime::parse_from_rfc3339(&v)
                .map(|t| t.with_timezone(&Utc))
                .map_err(|e| {
                    ApiError::bad_field(
                        k,
                        format!("`{k}` is `{v}` ({e}); expected an RFC 3339 instant such as 2030-01-01T00:00:00Z"),
                        D,
                    )
                })
        };
        match k {
            "from" => from = at()?,
            "to" => to = at()?,
            _ => {
                return Err(ApiError::bad_field(
                    k,
                    format!("unknown query parameter `{k}`; expected from or to"),
                    D,
                ));
            }
        }
    }
    if to <= from {
        return Err(ApiError::bad_field(
            "to",
            format!("`to` ({to}) is not after `from` ({from}); expected a non-empty window"),
            D,
        ));
    }
    if to - from > TimeDelta::days(MAX_WINDOW_DAYS) {
        return Err(ApiError::bad_field(
            "to",
            format!(
                "the window from {from} to {to} is longer than {MAX_WINDOW_DAYS} days; expected a shorter one"
            ),
            D,
        ));
    }
    Ok((from, to))
}

/// `GET /ui/api/calendar`.
pub async fn calendar(State(st): State<AppState>, RawQuery(q): RawQuery) -> Result<Response> {
    let now = st
        .reservations
        .read_all(|_, c| c.clock())
        .await
        .map_err(|e| ApiError::from_service(&e, D))?
        .into_iter()
        .flatten()
        .max()
        .unwrap_or_else(Utc::now);
    let (from, to) = window(q.as_deref(), now)?;
    let views = st
        .reservations
        .read_all(|p, c| calendar_view(c, now, from, to).map(|v| (p.map(str::to_owned), v)))
        .await
        .map_err(|e| ApiError::from_service(&e, D))?;
    let mut merged: Option<CalendarView> = None;
    for v in views {
        let (p, mut v) = v.map_err(|e| ApiError::bad_request(e.to_string(), D))?;
        // Partitions number their records alike: ids outside carry the partition.
        if let Some(p) = p.as_deref() {
            let q = |id: &mut String| *id = berth_service::qualify(Some(p), &*id);
            v.reservations.iter_mut().for_each(|r| {
                q(&mut r.id);
                r.preempted_by.iter_mut().for_each(q);
            });
            v.allocations.iter_mut().for_each(|a| {
                q(&mut a.id);
                a.reservation.iter_mut().for_each(q);
            });
        }
        match &mut merged {
            None => merged = Some(v),
            Some(m) => {
                m.pools.extend(v.pools);
                m.reservations.extend(v.reservations);
                m.allocations.extend(v.allocations);
                m.capacity_changes.extend(v.capacity_changes);
                m.truncated |= v.truncated;
            }
        }
    }
    let Some(mut view) = merged else {
        let empty = berth_calendar::Calendar::new(Default::default());
        let view = calendar_view(&empty, now, from, to)
            .map_err(|e| ApiError::bad_request(e.to_string(), D))?;
        return Ok(axum::Json(view).into_response());
    };
    view.pools.sort_by(|a, b| a.id.cmp(&b.id));
    name_providers(&st, &mut view.pools).await?;
    view.capacity_changes
        .sort_by(|a, b| (a.at, &a.pool, &a.dimension).cmp(&(b.at, &b.pool, &b.dimension)));
    for list_len in [view.reservations.len(), view.allocations.len()] {
        view.truncated |= list_len > MAX_RECORDS;
    }
    view.reservations.truncate(MAX_RECORDS);
    view.allocations.truncate(MAX_RECORDS);
    Ok(axum::Json(view).into_response())
}

/// Fills in what `add-provider` (or the configuration) said of each pool's provider.
async fn name_providers(st: &AppState, pools: &mut [PoolView]) -> Result<()> {
    let known = st
        .reservations
        .all_providers()
        .await
        .map_err(|e| ApiError::from_service(&e, D))?;
    for p in pools {
        if let Some(i) = known.iter().find(|i| i.id == p.provider) {
            p.provider_name.clone_from(&i.name);
            p.provider_type = Some(i.provider_type.clone()).filter(|t| !t.is_empty());
            p.tenant.clone_from(&i.tenant);
            p.region.clone_from(&i.region);
        } else if p.provider == berth_service::DEFAULT_PROVIDER {
            p.provider_type = Some("static".into());
        }
    }
    Ok(())
}

fn calendar_view(
    c: &berth_calendar::Calendar,
    now: DateTime<Utc>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> std::result::Result<CalendarView, berth_calendar::CalendarError> {
    let report = c.query_capacity(&CapacityQuery {
        zone: None,
        provider: None,
        window: Window {
            start: from,
            end: Some(to),
        },
        timeline: true,
    })?;
    let mut pools = Vec::new();
    let mut changes = Vec::new();
    for p in report.pools {
        let id = p.pool.to_string();
        let mut last: BTreeMap<String, i64> = BTreeMap::new();
        let mut timeline = Vec::new();
        for (i, step) in p.timeline.into_iter().enumerate() {
            let mut levels = BTreeMap::new();
            for (d, l) in step.levels {
                let prev = last.insert(d.0.clone(), l.total);
                if let Some(prev) = prev.filter(|p| *p != l.total)
                    && i > 0
                {
                    changes.push(CapacityChangeView {
                        pool: id.clone(),
                        at: step.at,
                        dimension: d.0.clone(),
                        from: prev,
                        to: l.total,
                    });
                }
                levels.insert(
                    d.0,
                    LevelsView {
                        total: l.total,
                        reserved: l.reserved,
                        usage: l.usage,
                        available: l.available,
                    },
                );
            }
            timeline.push(StepView {
                at: step.at,
                levels,
            });
        }
        pools.push(PoolView {
            id,
            zone: p.pool.zone.0.clone(),
            provider: p.pool.provider.0.clone(),
            provider_name: None,
            provider_type: None,
            tenant: None,
            region: None,
            dimensions: p.summary.keys().map(|d| d.0.clone()).collect(),
            timeline,
        });
    }
    changes.sort_by(|a, b| (a.at, &a.pool, &a.dimension).cmp(&(b.at, &b.pool, &b.dimension)));
    // Filtered before any record is rendered: this runs under the calendar's lock.
    let matching = c.query_reservations(&ReservationQuery {
        window: Some((
            Window {
                start: from,
                end: Some(to),
            },
            Scope::Inclusive,
        )),
        ..ReservationQuery::default()
    });
    let mut truncated = false;
    let mut reservations = Vec::new();
    for r in &matching {
        if reservations.len() == MAX_RECORDS {
            truncated = true;
            break;
        }
        reservations.push(ReservationView {
            id: r.id.to_string(),
            pool: r.pool.to_string(),
            start: r.start,
            end: r.end,
            expiry: r.expiry,
            state: r.state.to_string(),
            priority: word(&r.priority),
            amounts: amounts(&r.amounts),
            allocated: amounts(&r.allocated),
            tenant: r.tenant.as_ref().map(|t| t.0.clone()),
            at_risk: r.at_risk,
            preempted_by: match r.cancel_reason {
                Some(CancelReason::Preempted { by }) => Some(by.to_string()),
                _ => None,
            },
        });
    }
    let mut allocations = Vec::new();
    // Allocation ids are dense (`a1`, `a2`, … in creation order, never removed).
    let every = (1..).map_while(|n| c.allocation(AllocationId(n)));
    for a in every.filter(|a| overlaps(a.start, a.end, from, to)) {
        if allocations.len() == MAX_RECORDS {
            truncated = true;
            break;
        }
        allocations.push(AllocationView {
            id: a.id.to_string(),
            pool: a.pool.to_string(),
            reservation: a.reservation.map(|r| r.to_string()),
            start: a.start,
            end: a.end,
            state: a.state.to_string(),
            amounts: amounts(&a.amounts),
            at_risk: a.at_risk,
            preempted_by: match a.termination {
                Some(TerminationReason::Preempted { by }) => Some(by.to_string()),
                _ => None,
            },
        });
    }
    Ok(CalendarView {
        now,
        from,
        to,
        pools,
        reservations,
        allocations,
        capacity_changes: changes,
        truncated,
    })
}

/// A plan with its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PlanView {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// HAS status: `template`, `translating`, …, `done`, `not found`, `error`.
    pub status: String,
    /// Why it failed, or what was found.
    pub message: Option<String>,
    /// The engine's outcome once solved (`berth solve` JSON: `status`, `optimal`, `message`,
    /// `solutions[{objective, placements}]`, `triage{demand: {candidates, removed}}`,
    /// `stats`).
    #[schema(value_type = Object)]
    pub outcome: Option<serde_json::Value>,
    /// Reservations made for it.
    pub reservations: Vec<String>,
    /// When accepted.
    pub created: DateTime<Utc>,
    /// Last change.
    pub updated: DateTime<Utc>,
}

/// `GET /ui/api/plans`: the newest [`MAX_PLANS`] plans, newest first.
pub async fn plans(State(st): State<AppState>) -> Result<Response> {
    let mut list = st
        .plans
        .list()
        .await
        .map_err(|e| ApiError::from_service(&e, D))?;
    list.reverse();
    let views: Vec<PlanView> = list
        .into_iter()
        .take(MAX_PLANS)
        .map(|p| PlanView {
            id: p.id,
            name: p.name,
            status: p.status.as_str().to_owned(),
            message: p.message,
            outcome: p.outcome,
            reservations: p.reservations,
            created: p.created,
            updated: p.updated,
        })
        .collect();
    Ok(axum::Json(views).into_response())
}

/// `GET /ui/api/events`: `ready` once, then `calendar` (`{"kind": "calendar", "seq"}`) and
/// `plan` (`{"kind": "plan", "id", "status"}`) notices, `lagged` when notices were lost
/// (refetch everything). The stream ends when the daemon shuts down.
pub async fn events(State(st): State<AppState>) -> Response {
    let rx = st.reservations.changes();
    let seq = st.reservations.seq().await;
    let stop = st.stop.clone();
    let ready = Event::default()
        .event("ready")
        .data(serde_json::json!({"seq": seq}).to_string());
    let stream = futures_util::stream::unfold(
        (Some(ready), rx, stop),
        |(first, mut rx, mut stop)| async move {
            if let Some(ev) = first {
                return Some((Ok::<_, Infallible>(ev), (None, rx, stop)));
            }
            let next = tokio::select! {
                r = rx.recv() => r,
                () = stopped(&mut stop) => return None,
            };
            let ev = match next {
                Ok(change) => {
                    let name = match change {
                        Change::Calendar { .. } => "calendar",
                        Change::Plan { .. } => "plan",
                    };
                    Event::default()
                        .event(name)
                        .data(serde_json::to_string(&change).unwrap_or_default())
                }
                Err(broadcast::error::RecvError::Lagged(n)) => Event::default()
                    .event("lagged")
                    .data(serde_json::json!({"missed": n}).to_string()),
                Err(broadcast::error::RecvError::Closed) => return None,
            };
            Some((Ok(ev), (None, rx, stop)))
        },
    );
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// Resolves once the daemon stops (never without a stop signal).
pub(crate) async fn stopped(stop: &mut Option<watch::Receiver<bool>>) {
    match stop {
        Some(rx) => {
            let _ = rx.wait_for(|s| *s).await;
        }
        None => std::future::pending().await,
    }
}

/// `GET /ui/api/place`: the topology placements go to.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SiteView {
    /// Where the topology came from.
    pub source: String,
    /// Location levels, coarsest first.
    pub levels: Vec<String>,
    /// Leaves (hosts, storage boxes).
    pub leaves: usize,
    /// A Heat template that fits it.
    pub example: String,
}

/// `POST /ui/api/place` body.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlaceBody {
    /// Heat template (YAML or JSON text) with seed 004 groups and policies.
    pub template: String,
    /// `pack` (fewest hosts, the default) or `spread` (balanced load).
    #[serde(default)]
    pub objective: Option<String>,
    /// Seed of the neighbourhood search (0 by default).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Milliseconds for the improvement phase (1000 by default, at most 10000).
    #[serde(default)]
    pub time_limit_ms: Option<u64>,
}

/// `POST /ui/api/place` answer.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PlaceView {
    /// `placed`, `infeasible` or `unsolved`.
    pub status: String,
    /// The placement (`berth place` JSON: placements, objective, hosts used, violations…).
    #[schema(value_type = Object)]
    pub placement: serde_json::Value,
    /// Rack diagram (SVG).
    pub svg: String,
}

fn site(st: &AppState) -> Result<Arc<PlacementSite>> {
    st.site.clone().ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "this daemon has no datacenter topology for placements",
            D,
        )
    })
}

/// `GET /ui/api/place`.
pub async fn place_site(State(st): State<AppState>) -> Result<Response> {
    let s = site(&st)?;
    let t = &s.topology;
    let view = SiteView {
        source: s.source.clone(),
        levels: t
            .levels()
            .iter()
            .map(|l| t.levels().name(l).to_owned())
            .collect(),
        leaves: t.leaf_count(),
        example: s.example.clone(),
    };
    Ok(axum::Json(view).into_response())
}

/// `POST /ui/api/place`: places a Heat template on the daemon's topology (nothing is stored).
pub async fn place(State(st): State<AppState>, body: Bytes) -> Result<Response> {
    let s = site(&st)?;
    let b: PlaceBody = crate::error::parse_body(&body, D)?;
    let objective = match b.objective.as_deref() {
        None | Some("pack") => berth_placement::Objective::Pack,
        Some("spread") => berth_placement::Objective::Spread,
        Some(o) => {
            return Err(ApiError::bad_field(
                "objective",
                format!("`objective` is `{o}`; expected pack or spread"),
                D,
            ));
        }
    };
    let ms = b.time_limit_ms.unwrap_or(1000);
    if ms > MAX_PLACE_MS {
        return Err(ApiError::bad_field(
            "time_limit_ms",
            format!("`time_limit_ms` is {ms}; expected at most {MAX_PLACE_MS}"),
            D,
        ));
    }
    let loaded = berth_heat::load(&b.template);
    let Some(template) = loaded.template else {
        let mut e = ApiError::bad_request(
            "the Heat template has errors; expected a valid template (see diagnostics)",
            D,
        );
        e.diagnostics = loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == berth_doc::Severity::Error)
            .map(|d| crate::DiagnosticBody {
                path: format!("template.{}", d.path)
                    .trim_end_matches('.')
                    .to_owned(),
                line: d.line,
                column: d.column,
                message: d.message.clone(),
            })
            .collect();
        return Err(e);
    };
    let instance = berth_placement::Instance::from_template(
        &template,
        Arc::clone(&s.topology),
        &berth_placement::Catalog::default(),
        &BTreeMap::new(),
    )
    .map_err(|e| ApiError::bad_field("template", e.to_string(), D))?;
    let opts = berth_placement::Options {
        objective,
        seed: b.seed.unwrap_or(0),
        deadline: Some(Arc::new(Instant::now() + Duration::from_millis(ms))),
        ..berth_placement::Options::default()
    };
    let view = tokio::task::spawn_blocking(move || {
        let solution = berth_placement::solve(&instance, &opts);
        let placement = berth_placement::Placement::new(&instance, &solution);
        PlaceView {
            status: solution.status.as_str().to_owned(),
            placement: placement.to_json(),
            svg: berth_placement::render_svg(&instance, &solution.assignment),
        }
    })
    .await
    .map_err(|e| {
        tracing::error!(error = %e, "a placement task failed");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error", D)
    })?;
    Ok(axum::Json(view).into_response())
}

#[cfg(test)]
mod tests;
