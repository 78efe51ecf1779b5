//! Load shedding: past the in-flight limit a request is a 503 with `Retry-After` at once, in
//! its route's dialect; probes are never shed; a finished request frees its place.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::Request;
use axum::middleware;
use axum::routing::{get, post};
use tower::ServiceExt;

async fn slow() -> &'static str {
    tokio::time::sleep(Duration::from_millis(300)).await;
    "done"
}

fn limited(n: usize) -> Router {
    Router::new()
        .route("/create-reservation", post(slow))
        .route("/v1/plans", get(slow))
        .route("/healthz", get(slow))
        .layer(middleware::from_fn_with_state(
            Some(Arc::new(tokio::sync::Semaphore::new(n))),
            super::super::shed,
        ))
}

async fn send(app: &Router, method: &str, uri: &str) -> (u16, Option<String>, String) {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .body(Body::empty())
        .unwrap();
    let r = app.clone().oneshot(req).await.unwrap();
    let retry = r
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let status = r.status().as_u16();
    let body = axum::body::to_bytes(r.into_body(), 1 << 16).await.unwrap();
    (status, retry, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn requests_past_the_limit_are_shed_and_probes_are_not() {
    let app = limited(2);
    let busy: Vec<_> = (0..2)
        .map(|_| {
            let app = app.clone();
            tokio::spawn(async move { send(&app, "POST", "/create-reservation").await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = std::time::Instant::now();
    let (s, retry, body) = send(&app, "POST", "/create-reservation").await;
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "shedding waited"
    );
    assert_eq!((s, retry.as_deref()), (503, Some("1")));
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["result"], "error", "{v}");
    let (s, _, body) = send(&app, "GET", "/v1/plans").await;
    assert_eq!(s, 503);
    assert!(body.contains("error_message"), "{body}");
    // The probe answers even now.
    assert_eq!(send(&app, "GET", "/healthz").await.0, 200);
    for b in busy {
        assert_eq!(b.await.unwrap().0, 200);
    }
    // Places are free again.
    assert_eq!(send(&app, "POST", "/create-reservation").await.0, 200);
}
