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

#[test]
fn the_local_url_follows_listen_and_tls() {
    let cfg = |listen: &str, tls: bool| {
        let mut c = Config {
            listen: listen.parse().unwrap(),
            ..Config::default()
        };
        if tls {
            c.server.tls_cert = Some("c.pem".into());
            c.server.tls_key = Some("k.pem".into());
        }
        c
    };
    assert_eq!(
        local_url(&cfg("0.0.0.0:8091", false)),
        "http://127.0.0.1:8091/healthz"
    );
    assert_eq!(
        local_url(&cfg("[::]:9000", true)),
        "https://[::1]:9000/healthz"
    );
    assert_eq!(
        local_url(&cfg("10.1.2.3:8091", false)),
        "http://10.1.2.3:8091/healthz"
    );
    assert_eq!(
        local_url(&cfg("127.0.0.1:1", true)),
        "https://127.0.0.1:1/healthz"
    );
}

#[test]
fn only_this_host_is_loopback() {
    let lo = |u: &str| is_loopback(&reqwest::Url::parse(u).unwrap());
    assert!(lo("https://127.0.0.1:8091/healthz"));
    assert!(lo("https://[::1]:8091/healthz"));
    assert!(lo("https://localhost:8091/healthz"));
    assert!(!lo("https://10.0.0.1:8091/healthz"));
    assert!(!lo("https://berth.example:8091/healthz"));
}
