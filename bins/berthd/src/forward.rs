//! Forwarding in a cluster: a daemon that does not hold the lease a write needs sends it (any
//! method but GET, HEAD, OPTIONS) to the holder's advertised URL and relays the answer, so
//! clients need not know which daemon writes. Unpartitioned, that is the calendar's lease for
//! every write. Partitioned, the write's partition is read from its JSON body (buffered up to
//! the body limit): a partition-qualified `reservation-id` / `instance-id`, else `zone` with
//! `provider` or `source` by the partition key; a write naming no partition (plans,
//! providers, webhooks of reservations) is served here. Credentials travel with the request
//! (the holder checks them); a forwarded request carries `x-berth-forwarded-by` and is never
//! forwarded again, so a stale view cannot bounce a request around. The relayed answer carries
//! `x-berth-forwarded-to: <holder>`: clients routing by `GET /v1/cluster` refresh their map.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use berth_service::{Owner, Ownership, ReservationService};

/// Marks a forwarded request (value: the forwarding node's id).
pub const FORWARDED_BY: &str = "x-berth-forwarded-by";

/// Where writes go.
pub enum Route {
    /// One calendar: every write to the holder of its lease.
    Lease(Arc<Ownership>),
    /// Partitions: each write to the holder of its partition's lease.
    Partitions {
        /// The partitioned calendar (its partitions' leases).
        service: Arc<ReservationService>,
        /// This daemon's node id.
        node_id: String,
    },
}

/// What the forwarding layer needs.
pub struct Forwarder {
    route: Route,
    client: reqwest::Client,
    body_limit: usize,
}

impl Forwarder {
    /// Forwards with `timeout` per request and bodies up to `body_limit` bytes.
    pub fn new(
        route: Route,
        timeout: Duration,
        body_limit: usize,
    ) -> anyhow::Result<Arc<Forwarder>> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(2))
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Arc::new(Forwarder {
            route,
            client,
            body_limit,
        }))
    }
}

/// The middleware: serve here (reads, this daemon holds the lease, or the holder is unknown —
/// then the service answers 503), or relay to the holder.
pub async fn forward(State(f): State<Arc<Forwarder>>, req: Request, next: Next) -> Response {
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS)
        || req.headers().contains_key(FORWARDED_BY)
    {
        return next.run(req).await;
    }
    let (req, owner) = match &f.route {
        Route::Lease(o) => (req, o.owner()),
        Route::Partitions { service, .. } => {
            let (parts, body) = req.into_parts();
            let bytes = match axum::body::to_bytes(body, f.body_limit).await {
                Ok(b) => b,
                Err(e) => {
                    return (
                        StatusCode::PAYLOAD_TOO_LARGE,
                        format!("cannot read the request body: {e}"),
                    )
                        .into_response();
                }
            };
            let owner = match partition_of(service, &bytes) {
                Some(p) => match service.owner_of(&p).await {
                    Ok(o) => o,
                    Err(e) => {
                        tracing::debug!(partition = %p, error = %e, "partition owner unknown; serving here");
                        Owner::Unknown
                    }
                },
                None => Owner::Unknown,
            };
            (Request::from_parts(parts, Body::from(bytes)), owner)
        }
    };
    let Owner::Other { node, url } = owner else {
        return next.run(req).await;
    };
    metrics::counter!("berth_forwarded_requests_total").increment(1);
    match relay(&f, &url, req).await {
        Ok(mut resp) => {
            // Tells a routing client that its partition map is stale.
            if let Ok(v) = HeaderValue::from_str(&node) {
                resp.headers_mut()
                    .insert(HeaderName::from_static(berth_api::cluster::FORWARDED_TO), v);
            }
            resp
        }
        Err(why) => {
            tracing::warn!(owner = %node, url = %url, error = %why, "cannot forward a write to the lease holder");
            unavailable(&format!(
                "the calendar's lease holder `{node}` cannot be reached ({why}); retry shortly"
            ))
        }
    }
}

async fn relay(f: &Forwarder, base: &str, req: Request) -> Result<Response, String> {
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, f.body_limit)
        .await
        .map_err(|e| format!("cannot read the request body: {e}"))?;
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let target = format!("{}{path}", base.trim_end_matches('/'));
    let mut headers = HeaderMap::new();
    for (k, v) in &parts.headers {
        if !hop_by_hop(k) && k != header::HOST && k != header::CONTENT_LENGTH {
            headers.append(k.clone(), v.clone());
        }
    }
    let me = match &f.route {
        Route::Lease(o) => o.options().node_id.clone(),
        Route::Partitions { node_id, .. } => node_id.clone(),
    };
    if let Ok(v) = HeaderValue::from_str(&me) {
        headers.insert(HeaderName::from_static(FORWARDED_BY), v);
    }
    let resp = f
        .client
        .request(parts.method, target)
        .headers(headers)
        .body(bytes)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = resp.status();
    let mut out_headers = HeaderMap::new();
    for (k, v) in resp.headers() {
        if !hop_by_hop(k) && k != header::CONTENT_LENGTH {
            out_headers.append(k.clone(), v.clone());
        }
    }
    let body = resp.bytes().await.map_err(|e| e.to_string())?;
    let mut out = Response::new(Body::from(body));
    *out.status_mut() = status;
    *out.headers_mut() = out_headers;
    Ok(out)
}

/// The partition a write's JSON body names (`berth_api::cluster::partition_of`).
pub fn partition_of(service: &ReservationService, body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    berth_api::cluster::partition_of(service.partition_key(), &v)
}

/// Headers that belong to one connection, not to the request.
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
    )
}

fn unavailable(detail: &str) -> Response {
    let body = serde_json::json!({
        "type": "about:blank",
        "title": "Service Unavailable",
        "status": 503,
        "detail": detail,
    });
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [
            (header::CONTENT_TYPE, "application/problem+json"),
            (header::RETRY_AFTER, "1"),
        ],
        body.to_string(),
    )
        .into_response()
}
