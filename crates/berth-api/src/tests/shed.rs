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

async fn slower() -> &'static str {
    tokio::time::sleep(Duration::from_millis(1000)).await;
    "done"
}

fn limited(n: usize) -> Router {
    limited_waiting(n, 1)
}

/// `n` requests in progress and `waiting` plan reads waiting.
fn limited_waiting(n: usize, waiting: usize) -> Router {
    Router::new()
        .route("/create-reservation", post(slow))
        .route("/v1/plans", get(slow))
        .route("/v1/plans/{id}", get(slower))
        .route("/healthz", get(slow))
        .layer(middleware::from_fn_with_state(
            super::super::Gates {
                in_flight: Some(Arc::new(tokio::sync::Semaphore::new(n))),
                waiting: Arc::new(tokio::sync::Semaphore::new(waiting)),
                max_wait: Duration::from_secs(5),
            },
            super::super::shed,
        ))
}

async fn send(app: &Router, method: &str, uri: &str) -> (u16, Option<String>, String) {
    send_with(app, method, uri, None).await
}

async fn send_with(
    app: &Router,
    method: &str,
    uri: &str,
    prefer: Option<&str>,
) -> (u16, Option<String>, String) {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(p) = prefer {
        req = req.header("prefer", p);
    }
    let req = req.body(Body::empty()).unwrap();
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

#[tokio::test]
async fn a_plan_read_waiting_for_the_end_holds_no_in_flight_place() {
    let app = limited_waiting(1, 1);
    let waiting = {
        let app = app.clone();
        tokio::spawn(async move { send_with(&app, "GET", "/v1/plans/p", Some("wait=3")).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    // The one in-flight place is free for a write while the read waits.
    assert_eq!(send(&app, "POST", "/create-reservation").await.0, 200);
    // With the one waiting place taken, a second waiting read is an ordinary request: it
    // takes the in-flight place, so a write beside it is shed.
    let second = {
        let app = app.clone();
        tokio::spawn(async move { send_with(&app, "GET", "/v1/plans/q", Some("wait=3")).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(send(&app, "POST", "/create-reservation").await.0, 503);
    assert_eq!(waiting.await.unwrap().0, 200);
    assert_eq!(second.await.unwrap().0, 200);
    // A `wait` on anything but a plan read is ordinary too.
    let list = {
        let app = app.clone();
        tokio::spawn(async move { send_with(&app, "GET", "/v1/plans", Some("wait=3")).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(send(&app, "POST", "/create-reservation").await.0, 503);
    assert_eq!(list.await.unwrap().0, 200);
}
