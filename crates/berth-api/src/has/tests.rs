//! HAS probes and strict bodies, as OSDF, SO and CSIT call them: the versions list, the open
//! `healthcheck` plan, `OPTIONS` with `Allow`, and a repeated key refused with its path.

use axum::body::Body;
use axum::http::{Method, Request};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::tests::{app, call, call_with, has_error};

#[tokio::test]
async fn versions_document_is_a_list_of_descriptors() {
    let app = app().await;
    let (s, v, _) = call(&app, Method::GET, "/", None).await;
    assert_eq!(s, 200);
    let versions = v["versions"].as_array().cloned().unwrap_or_default();
    assert_eq!(versions.len(), 1, "{v}");
    assert_eq!(versions[0]["id"], "v1");
    assert_eq!(
        versions[0]["links"][0],
        json!({"href": "http://berth.test/v1", "rel": "self"})
    );
    assert_eq!(
        versions[0]["media-types"][0]["type"],
        "application/vnd.onap.has-v1+json"
    );
    let (s, v, _) = call(&app, Method::GET, "/v1", None).await;
    assert_eq!((s, v["version"]["id"].as_str()), (200, Some("v1")));
}

#[tokio::test]
async fn healthcheck_answers_with_and_without_credentials() {
    let app = app().await;
    for auth in [None, Some("Basic YWRtaW46cHc="), Some("Bearer tok")] {
        let (s, v, ct) = call_with(&app, Method::GET, "/v1/plans/healthcheck", None, auth).await;
        assert_eq!((s, ct.as_str()), (200, "application/json"), "{auth:?}");
        assert_eq!(v["plans"][0]["id"], "healthcheck");
        assert_eq!(v["plans"][0]["status"], "solved");
        assert_eq!(
            v["plans"][0]["links"][0][0]["href"],
            "http://berth.test/v1/plans/healthcheck"
        );
    }
    // Only the probe is open: the plan list still needs credentials, and so do other methods.
    let (s, _, _) = call_with(&app, Method::GET, "/v1/plans", None, None).await;
    assert_eq!(s, 401);
    let (s, _, _) = call_with(&app, Method::DELETE, "/v1/plans/healthcheck", None, None).await;
    assert_eq!(s, 401);
}

async fn options(app: &axum::Router, uri: &str) -> (u16, Option<String>, usize) {
    let req = Request::builder()
        .method(Method::OPTIONS)
        .uri(uri)
        .header("authorization", "Bearer tok")
        .body(Body::empty())
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let allow = resp
        .headers()
        .get("allow")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let status = resp.status().as_u16();
    let body = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, allow, body.len())
}

#[tokio::test]
async fn options_lists_the_allowed_methods() {
    let app = app().await;
    assert_eq!(
        options(&app, "/v1/plans").await,
        (204, Some("GET,POST".to_owned()), 0)
    );
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/v1/plans",
        Some(json!({"name": "p", "template": {"homing_template_version": "2017-10-10", "demands": {"vG": [{"inventory_provider": "aai", "inventory_type": "cloud"}]}}})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let id = v["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(
        options(&app, &format!("/v1/plans/{id}")).await,
        (204, Some("GET,DELETE".to_owned()), 0)
    );
    assert_eq!(options(&app, "/v1/plans/nope").await.0, 404);
}

async fn post_raw(app: &axum::Router, uri: &str, body: &'static str) -> (u16, Value) {
    let req = Request::builder()
        .method(Method::POST)
        .uri(uri)
        .header("authorization", "Bearer tok")
        .header("content-type", "application/json")
        .body(Body::from(body))
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status().as_u16();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn a_repeated_key_is_refused_with_its_path() {
    let app = app().await;
    let body = r#"{"name": "p", "template": {"homing_template_version": "2017-10-10",
  "demands": {"vG": [{"inventory_provider": "aai", "inventory_type": "cloud"}]},
  "demands": {}}}"#;
    let (s, v) = post_raw(&app, "/v1/plans", body).await;
    let message = "duplicate key `template.demands`; expected each key once per object";
    let mut want = has_error(400, &format!("invalid JSON body: {message}"));
    want["error_message"]["diagnostics"] =
        json!([{"path": "template.demands", "line": 3, "column": 11, "message": message}]);
    assert_eq!((s, v), (400, want));
    // Nothing was stored by the refused request.
    let (_, v, _) = call(&app, Method::GET, "/v1/plans", None).await;
    assert_eq!(v["plans"], json!([]));
    // The Promise dialect refuses it the same way.
    let (s, v) = post_raw(
        &app,
        "/create-reservation",
        r#"{"capacity": {"cores": 1, "cores": 2}}"#,
    )
    .await;
    assert_eq!(s, 400);
    assert_eq!(v["result"], "error");
    assert_eq!(v["diagnostics"][0]["path"], "capacity.cores");
}

#[tokio::test]
async fn a_wrong_type_names_the_field() {
    let app = app().await;
    let (s, v) = post_raw(&app, "/v1/plans", r#"{"name": 5, "template": {}}"#).await;
    assert_eq!(s, 400);
    assert_eq!(v["error_message"]["diagnostics"][0]["path"], "name");
    assert_eq!(
        v["error_message"]["explanation"],
        "invalid JSON body: `name`: invalid type: integer `5`, expected a string"
    );
}
