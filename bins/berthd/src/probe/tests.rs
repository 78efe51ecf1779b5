//! The probe against a loopback server: 2xx passes, other statuses and closed ports fail.

use super::*;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;

#[tokio::test]
async fn a_2xx_passes_and_anything_else_fails_naming_the_url() {
    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/readyz",
            get(|| async { (StatusCode::SERVICE_UNAVAILABLE, "starting") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let t = Duration::from_secs(5);

    assert_eq!(
        probe(&format!("http://{addr}/healthz"), t).await.unwrap(),
        200
    );
    let e = probe(&format!("http://{addr}/readyz"), t)
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "health check http://{addr}/readyz: answered 503 Service Unavailable; expected 2xx"
        )
    );

    // A port nobody listens on: bound, then released.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let e = probe(&format!("http://{closed}/healthz"), t)
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("health check http://{closed}/healthz: no answer")
    );

    let e = probe("127.0.0.1:8091/healthz", t).await.unwrap_err();
    assert!(
        e.to_string()
            .starts_with("health check URL `127.0.0.1:8091/healthz`: expected")
    );
}
