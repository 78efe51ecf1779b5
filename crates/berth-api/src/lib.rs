//! HTTP for Berth: ONAP HAS-compatible homing routes, Promise shim reservation routes (seed 001
//! Annex C), health, Prometheus metrics and the OpenAPI document. The only crate that knows
//! the wire.
//!
//! Key items:
//! - [`router`]`(AppState, ApiConfig)`: the axum router with auth (HTTP Basic and bearer
//!   tokens), body size limit, request timeout and a catch-panic layer.
//! - [`AppState`]: the services (`berth_service::ReservationService`, `PlanService`) and the
//!   Prometheus handle.
//! - [`openapi_json`]: the OpenAPI document, committed as `docs/openapi.json`.
//! - [`ui`]: the web console under `/ui/` (embedded pages, read-only JSON, server-sent events).
//!
//! Invariants:
//! - Errors are RFC 9457 problem+json, except on HAS routes (`/` and `/v1/...`) and Promise
//!   routes. HAS routes answer as ONAP HAS does (its `error_wrapper` behind
//!   `ParsableErrorMiddleware`): `{"error_message": {"explanation", "code", "error":
//!   {"message", "type"}, "title"}}` with webob's class name, title and default message for
//!   the status — every error there, including 401, 404 of unknown paths, 405, 408, 413 and
//!   panics. Promise routes answer `{"result": "conflict"|"error", "message", "offers"?}`.
//!   Every dialect may add `diagnostics: [{path, line, column, message}]`. A server-side cause
//!   is logged and never sent.
//! - Auth is off only when [`AuthConfig::disabled`] is configured; `/healthz`, `/readyz` and
//!   HAS's probe `GET /v1/plans/healthcheck` are always open.
//! - JSON bodies are strict: a repeated key is a 400 naming its path, never "last one wins".
//! - No panic reaches a client: a panicking handler becomes a 500 problem.

pub mod admin;
mod body;
pub mod cluster;
mod dialect;
mod error;
pub mod fields;
pub mod has;
mod openapi;
pub mod promise;
mod promise_wire;
pub mod ui;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use base64::Engine as _;
use berth_service::{InventoryReconciler, PlanService, ReservationService};
use metrics_exporter_prometheus::PrometheusHandle;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::timeout::TimeoutLayer;

pub use error::{
    ApiError, DiagnosticBody, Dialect, HasError, HasErrorKind, HasErrorMessage, Problem,
    PromiseError, webob_status,
};
pub use openapi::openapi_json;

/// Who may call the API, and whether they may write.
#[derive(Debug, Clone, Default)]
pub struct AuthConfig {
    /// No checks at all (only for loopback development; the daemon enforces that).
    pub disabled: bool,
    /// HTTP Basic user/password pairs that may read and write.
    pub basic: Vec<(String, String)>,
    /// Bearer tokens that may read and write.
    pub tokens: Vec<String>,
    /// HTTP Basic user/password pairs that may only read (403 on a write).
    pub read_only_basic: Vec<(String, String)>,
    /// Bearer tokens that may only read (403 on a write).
    pub read_only_tokens: Vec<String>,
    /// HTTP Basic user/password pairs that may also call the admin routes.
    pub admin_basic: Vec<(String, String)>,
    /// Bearer tokens that may also call the admin routes.
    pub admin_tokens: Vec<String>,
}

/// What a caller's credentials allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads only: GET, and the Promise queries.
    Read,
    /// Everything but the admin routes (`/admin/...`).
    Write,
    /// Everything.
    Admin,
}

impl AuthConfig {
    /// Auth turned off.
    pub fn disabled() -> AuthConfig {
        AuthConfig {
            disabled: true,
            ..AuthConfig::default()
        }
    }

    /// The access `authorization` grants, `None` when it grants nothing. Every configured
    /// credential is compared (in constant time each), so timing tells nothing of which matched.
    pub fn access(&self, authorization: Option<&str>) -> Option<Access> {
        if self.disabled {
            return Some(Access::Admin);
        }
        let h = authorization?;
        if let Some(token) = h.strip_prefix("Bearer ") {
            let token = token.trim().as_bytes();
            let any = |list: &[String]| {
                list.iter()
                    .fold(false, |hit, t| hit | eq_ct(t.as_bytes(), token))
            };
            return best(
                any(&self.admin_tokens),
                any(&self.tokens),
                any(&self.read_only_tokens),
            );
        }
        let b64 = h.strip_prefix("Basic ")?;
        let raw = base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .ok()?;
        let text = String::from_utf8(raw).ok()?;
        let (u, p) = text.split_once(':')?;
        let any = |list: &[(String, String)]| {
            list.iter().fold(false, |hit, (bu, bp)| {
                hit | (eq_ct(bu.as_bytes(), u.as_bytes()) & eq_ct(bp.as_bytes(), p.as_bytes()))
            })
        };
        best(
            any(&self.admin_basic),
            any(&self.basic),
            any(&self.read_only_basic),
        )
    }
}

fn best(admin: bool, write: bool, read: bool) -> Option<Access> {
    if admin {
        Some(Access::Admin)
    } else if write {
        Some(Access::Write)
    } else if read {
        Some(Access::Read)
    } else {
        None
    }
}

/// True when a request changes state: anything but GET/HEAD/OPTIONS, the Promise queries and
/// the console's placement preview (it stores nothing).
fn is_write(method: &axum::http::Method, path: &str) -> bool {
    use axum::http::Method;
    !(matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
        || matches!(
            path,
            "/query-reservation" | "/query-capacity" | "/ui/api/place"
        ))
}

/// Equality without an early exit on the first differing byte.
fn eq_ct(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Limits and auth of the HTTP layer.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// Who may call.
    pub auth: AuthConfig,
    /// Largest request body in bytes.
    pub body_limit: usize,
    /// Time allowed for one request.
    pub request_timeout: Duration,
    /// Requests served at once; more are shed at once with 503 and `Retry-After` (0: no
    /// limit). Health probes and metrics are never shed.
    pub max_in_flight: usize,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig {
            auth: AuthConfig::default(),
            body_limit: 4 << 20,
            request_timeout: Duration::from_secs(30),
            max_in_flight: 64,
        }
    }
}

/// What the handlers share.
#[derive(Clone)]
pub struct AppState {
    /// The reservation calendar service.
    pub reservations: Arc<ReservationService>,
    /// The plan service.
    pub plans: Arc<PlanService>,
    /// Prometheus recorder handle (`None`: `/metrics` answers empty).
    pub metrics: Option<PrometheusHandle>,
    auth: Arc<AuthConfig>,
    /// Where the console places Heat templates (`None`: no placements).
    site: Option<Arc<ui::PlacementSite>>,
    /// The inventory served and reconciled (`None`: the admin inventory routes answer 404).
    inventory: Option<Arc<InventoryReconciler>>,
    /// Turns true when the daemon stops: open event streams end so shutdown is not held up.
    stop: Option<tokio::sync::watch::Receiver<bool>>,
}

impl AppState {
    /// State over the two services.
    pub fn new(
        reservations: Arc<ReservationService>,
        plans: Arc<PlanService>,
        metrics: Option<PrometheusHandle>,
    ) -> AppState {
        AppState {
            reservations,
            plans,
            metrics,
            auth: Arc::new(AuthConfig::default()),
            site: None,
            inventory: None,
            stop: None,
        }
    }

    /// The inventory reconciler behind `/admin/inventory` and its reload.
    pub fn with_inventory(mut self, inventory: Arc<InventoryReconciler>) -> AppState {
        self.inventory = Some(inventory);
        self
    }

    /// The topology the console places Heat templates on.
    pub fn with_placement_site(mut self, site: ui::PlacementSite) -> AppState {
        self.site = Some(Arc::new(site));
        self
    }

    /// Ends the console's event streams once `stop` turns true (graceful shutdown waits for
    /// open responses).
    pub fn with_stop(mut self, stop: tokio::sync::watch::Receiver<bool>) -> AppState {
        self.stop = Some(stop);
        self
    }
}

/// The whole API.
pub fn router(mut state: AppState, cfg: ApiConfig) -> Router {
    state.auth = Arc::new(cfg.auth.clone());
    Router::new()
        .route("/", get(has::versions))
        .route("/v1", get(has::version_v1))
        .route(
            "/v1/plans",
            post(has::create_plan)
                .get(has::list_plans)
                .options(has::options_plans),
        )
        .route("/v1/plans/healthcheck", get(has::healthcheck))
        .route(
            "/v1/plans/{id}",
            get(has::get_plan)
                .delete(has::delete_plan)
                .options(has::options_plan),
        )
        // OSDF's default `conductorUrl` ends in `/v1/plans/`: HAS answers it like `/v1/plans`.
        .route("/v1/plans/", post(has::create_plan).get(has::list_plans))
        .route("/v1/triage_tool/{id}", get(has::triage))
        .route("/v1/cluster", get(cluster::cluster_map))
        .route("/add-provider", post(promise::add_provider))
        .route("/create-reservation", post(promise::create_reservation))
        .route("/update-reservation", post(promise::update_reservation))
        .route("/cancel-reservation", post(promise::cancel_reservation))
        .route("/query-reservation", post(promise::query_reservation))
        .route("/create-instance", post(promise::create_instance))
        .route("/destroy-instance", post(promise::destroy_instance))
        .route("/increase-capacity", post(promise::increase_capacity))
        .route("/decrease-capacity", post(promise::decrease_capacity))
        .route("/query-capacity", post(promise::query_capacity))
        .route(
            "/capacity/{kind}/subscribe",
            post(promise::capacity_subscribe),
        )
        .route(
            "/capacity/{kind}/subscribe/{id}",
            delete(promise::unsubscribe),
        )
        .route(
            "/reservation/subscribe",
            post(promise::reservation_subscribe),
        )
        .route("/reservation/subscribe/{id}", delete(promise::unsubscribe))
        .route("/admin/inventory", get(admin::inventory_status))
        .route("/admin/inventory/reload", post(admin::reload_inventory))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .route("/openapi.json", get(openapi_doc))
        .route("/ui", get(ui::root))
        .route("/ui/", get(ui::asset))
        .route("/ui/login", get(ui::login))
        .route("/ui/logout", get(ui::logout))
        .route("/ui/api/calendar", get(ui::calendar))
        .route("/ui/api/plans", get(ui::plans))
        .route("/ui/api/events", get(ui::events))
        .route("/ui/api/session", get(ui::session))
        .route("/ui/api/place", get(ui::place_site).post(ui::place))
        .route("/ui/{*path}", get(ui::asset))
        .fallback(not_found)
        .layer(middleware::from_fn(fields::collect))
        .layer(middleware::from_fn_with_state(state.clone(), auth))
        .layer(middleware::from_fn_with_state(Gates::new(&cfg), shed))
        .layer(DefaultBodyLimit::max(cfg.body_limit))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            cfg.request_timeout,
        ))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(middleware::from_fn(error::error_shape))
        .with_state(state)
}

async fn auth(State(st): State<AppState>, req: Request, next: Next) -> Response {
    // HAS's health probe is open too: monitors call it without credentials.
    let open = matches!(
        (req.method(), req.uri().path()),
        (_, "/healthz" | "/readyz")
            | (
                &axum::http::Method::GET,
                "/v1/plans/healthcheck" | "/ui/logout"
            )
    );
    let h = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let dialect = Dialect::of_path(req.uri().path());
    if let Some(why) = cross_site(&req) {
        return ApiError::new(StatusCode::FORBIDDEN, why, dialect).into_response();
    }
    let admin = req.uri().path().starts_with("/admin/") || req.uri().path() == "/admin";
    match (open, st.auth.access(h)) {
        (true, _) | (false, Some(Access::Admin)) => return next.run(req).await,
        (false, Some(Access::Write | Access::Read)) if admin => {
            let detail = format!(
                "these credentials may not call the admin routes; expected admin credentials ([auth] admin_tokens, or a basic user with admin = true) for {} {}",
                req.method(),
                req.uri().path()
            );
            return ApiError::new(StatusCode::FORBIDDEN, detail, dialect).into_response();
        }
        (false, Some(Access::Write)) => return next.run(req).await,
        (false, Some(Access::Read)) => {
            if !is_write(req.method(), req.uri().path()) {
                return next.run(req).await;
            }
            let detail = format!(
                "these credentials may only read; expected read-write credentials for {} {}",
                req.method(),
                req.uri().path()
            );
            return ApiError::new(StatusCode::FORBIDDEN, detail, dialect).into_response();
        }
        (false, None) => {}
    }
    // A browser opening a console page gets a page, not a JSON body it would show blank.
    let path = req.uri().path();
    let page = req.method() == axum::http::Method::GET
        && (path == "/ui" || path.starts_with("/ui/"))
        && !path.starts_with("/ui/api/")
        && req
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("text/html"));
    if page {
        return ui::sign_in(h.is_some());
    }
    // HAS's own words (conductor `plans.check_auth`), on its routes.
    let detail = match (dialect, h) {
        (Dialect::Has, None) => {
            "Unauthorized: The request does not provide any HTTP authentication (basic authentication)"
        }
        (Dialect::Has, Some(_)) => "Invalid credentials: username or password is incorrect",
        _ => "missing or wrong credentials; expected HTTP Basic or a bearer token",
    };
    let mut r = ApiError::new(StatusCode::UNAUTHORIZED, detail, dialect).into_response();
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Basic realm=\"berth\""),
    );
    r
}

/// Why a browser request from another site that would change state is refused, if it is one.
/// A browser that has opened the console keeps its HTTP Basic credentials and would send them
/// with a form another site posts here; browsers say where a request comes from
/// (`Sec-Fetch-Site`, `Origin`), other clients send neither and are not affected.
fn cross_site(req: &Request) -> Option<String> {
    if !is_write(req.method(), req.uri().path()) && req.method() != axum::http::Method::POST {
        return None;
    }
    let headers = req.headers();
    let text = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    let site = text("sec-fetch-site");
    let origin = text("origin");
    let host = text("host");
    // `Sec-Fetch-Site` decides when a browser sends it (a proxy may rewrite `Host`); `Origin`
    // only for browsers too old to send it.
    let foreign = match (site, origin) {
        (Some("same-origin" | "none"), _) => None,
        (Some(s), _) => Some(format!("`Sec-Fetch-Site: {s}`")),
        (None, Some(o))
            if o == "null"
                || host.is_none_or(|h| o.split_once("://").map(|(_, rest)| rest) != Some(h)) =>
        {
            Some(format!("`Origin: {o}`"))
        }
        _ => None,
    }?;
    Some(format!(
        "refused a cross-site browser request ({foreign}); expected the console on this origin or a non-browser client"
    ))
}

/// What `shed` admits: requests in progress, and plan reads waiting for the plan's end.
#[derive(Clone)]
struct Gates {
    in_flight: Option<Arc<tokio::sync::Semaphore>>,
    waiting: Arc<tokio::sync::Semaphore>,
    /// Longest wait granted: below the request timeout, at most a minute.
    max_wait: Duration,
}

impl Gates {
    fn new(cfg: &ApiConfig) -> Gates {
        Gates {
            in_flight: (cfg.max_in_flight > 0)
                .then(|| Arc::new(tokio::sync::Semaphore::new(cfg.max_in_flight))),
            waiting: Arc::new(tokio::sync::Semaphore::new(
                cfg.max_in_flight.saturating_mul(16).clamp(16, 4096),
            )),
            max_wait: cfg
                .request_timeout
                .saturating_sub(Duration::from_secs(1))
                .min(Duration::from_secs(60)),
        }
    }
}

/// A plan read admitted to wait (`Prefer: wait=N`, RFC 7240) for at most `max`. Waiting reads
/// hold a place of their own while they are served, not one of `max_in_flight`: a client
/// waiting on a plan is not load.
#[derive(Clone)]
pub struct Waiting {
    pub(crate) max: Duration,
}

/// Sheds load: past `max_in_flight` requests in progress, a request is answered 503 at once
/// rather than queued, so the accepted ones keep their latency and memory stays bounded.
async fn shed(State(gates): State<Gates>, mut req: Request, next: Next) -> Response {
    let probe = matches!(
        req.uri().path(),
        "/healthz" | "/readyz" | "/metrics" | "/v1/plans/healthcheck"
    );
    if req.method() == axum::http::Method::GET
        && req.uri().path().starts_with("/v1/plans/")
        && let Some(wait) = has::prefer_wait(req.headers())
        && !gates.max_wait.is_zero()
        && let Ok(slot) = Arc::clone(&gates.waiting).try_acquire_owned()
    {
        req.extensions_mut().insert(Waiting {
            max: wait.min(gates.max_wait),
        });
        let r = next.run(req).await;
        drop(slot);
        return r;
    }
    let Some(limit) = gates.in_flight.filter(|_| !probe) else {
        return next.run(req).await;
    };
    match limit.try_acquire_owned() {
        Ok(permit) => {
            let r = next.run(req).await;
            drop(permit);
            r
        }
        Err(_) => {
            metrics::counter!("berth_requests_shed_total").increment(1);
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "overloaded: too many requests in progress; try again after the Retry-After delay",
                Dialect::of_path(req.uri().path()),
            )
            .into_response()
        }
    }
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("a request handler panicked");
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal error",
        Dialect::Problem,
    )
    .into_response()
}

async fn not_found(uri: axum::http::Uri) -> Response {
    let dialect = Dialect::of_path(uri.path());
    ApiError::new(StatusCode::NOT_FOUND, "no such route", dialect).into_response()
}

async fn healthz() -> Response {
    (
        StatusCode::OK,
        axum::Json(serde_json::json!({"status": "ok"})),
    )
        .into_response()
}

async fn readyz(State(st): State<AppState>) -> Response {
    match st.reservations.store().ping().await {
        Ok(()) => (
            StatusCode::OK,
            axum::Json(serde_json::json!({"status": "ready"})),
        )
            .into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "store not ready");
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the store does not answer",
                Dialect::Problem,
            )
            .into_response()
        }
    }
}

async fn metrics_text(State(st): State<AppState>) -> Response {
    if let Ok(counts) = st.plans.counts().await {
        for (status, n) in counts {
            metrics::gauge!("berth_plans", "status" => status.as_str()).set(n as f64);
        }
    }
    let states = st
        .reservations
        .read_all(|_, c| {
            let mut by = std::collections::BTreeMap::<String, usize>::new();
            for r in c.query_reservations(&Default::default()) {
                *by.entry(r.state.to_string()).or_default() += 1;
            }
            by
        })
        .await
        .unwrap_or_default()
        .into_iter()
        .fold(std::collections::BTreeMap::new(), |mut all, by| {
            for (state, n) in by {
                *all.entry(state).or_insert(0usize) += n;
            }
            all
        });
    for (state, n) in states {
        metrics::gauge!("berth_reservations", "state" => state).set(n as f64);
    }
    let text = st
        .metrics
        .as_ref()
        .map(PrometheusHandle::render)
        .unwrap_or_default();
    let mut r = (StatusCode::OK, text).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    r
}

async fn openapi_doc() -> Response {
    let mut r = (StatusCode::OK, openapi_json()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

#[cfg(test)]
mod tests;
