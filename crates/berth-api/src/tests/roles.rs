//! Read-only credentials: every read answers, every write is a 403 in the route's dialect,
//! and read-write credentials still write.

use axum::http::Method;
use serde_json::json;

use super::{app, call_with};

const RO_TOKEN: Option<&str> = Some("Bearer ro");
// viewer:vpw
const RO_BASIC: Option<&str> = Some("Basic dmlld2VyOnZwdw==");

#[tokio::test]
async fn read_only_credentials_read_everything_and_write_nothing() {
    let app = app().await;
    for auth in [RO_TOKEN, RO_BASIC] {
        for (method, path) in [
            (Method::GET, "/"),
            (Method::GET, "/v1/plans"),
            (Method::GET, "/openapi.json"),
            (Method::GET, "/metrics"),
            (Method::OPTIONS, "/v1/plans"),
            (Method::POST, "/query-capacity"),
            (Method::POST, "/query-reservation"),
        ] {
            let body = (method == Method::POST).then(|| json!({}));
            let (s, v, _) = call_with(&app, method.clone(), path, body, auth).await;
            assert!(matches!(s, 200 | 204), "{method} {path}: {s} {v}");
        }
        let (s, v, _) = call_with(
            &app,
            Method::POST,
            "/v1/plans",
            Some(json!({"name": "p", "template": {}})),
            auth,
        )
        .await;
        assert_eq!(s, 403, "{v}");
        assert_eq!(
            v["error_message"]["explanation"],
            "these credentials may only read; expected read-write credentials for POST /v1/plans"
        );
        assert_eq!(v["error_message"]["error"]["type"], "HTTPForbidden");
        let (s, v, _) = call_with(
            &app,
            Method::POST,
            "/increase-capacity",
            Some(json!({"capacity": {"cores": 1}})),
            auth,
        )
        .await;
        assert_eq!((s, v["result"].as_str()), (403, Some("error")), "{v}");
        let (s, _, _) = call_with(&app, Method::DELETE, "/v1/plans/x", None, auth).await;
        assert_eq!(s, 403);
    }
    // Nothing was written by the refused requests; read-write credentials do write.
    let (_, v, _) = call_with(
        &app,
        Method::POST,
        "/query-capacity",
        Some(json!({})),
        RO_TOKEN,
    )
    .await;
    assert_eq!(v["collections"], json!([]), "{v}");
    let (s, v, _) = call_with(
        &app,
        Method::POST,
        "/increase-capacity",
        Some(json!({"capacity": {"cores": 1}})),
        Some("Bearer tok"),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    // A wrong password of a read-only user is no access at all.
    let (s, _, _) = call_with(
        &app,
        Method::GET,
        "/v1/plans",
        None,
        Some("Basic dmlld2VyOndyb25n"),
    )
    .await;
    assert_eq!(s, 401);
}
