//! Router tests, in process (`tower::ServiceExt::oneshot`): every route, auth, and errors.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request};
use berth_service::{ManualClock, Notifier, PlanConfig, ReservationOptions};
use chrono::TimeZone;
use serde_json::{Value, json};
use tower::ServiceExt;

use super::*;

mod dims;
mod longpoll;
mod roles;
mod shed;

pub(crate) const INVENTORY: &str = "
candidates:
  - {candidate_id: dfw, inventory_type: cloud, latitude: 32.9, longitude: -97.0, cost: 10, cloud_owner: att, location_id: dfw, physical_location_id: DLLSTX}
  - {candidate_id: nyc, inventory_type: cloud, latitude: 40.7, longitude: -74.0, cost: 5}
";

pub(crate) async fn app() -> Router {
    app_with_clock().await.0
}

fn t0() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc
        .with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default()
}

/// The router and the clock its services read (starts at [`t0`]).
async fn app_with_clock() -> (Router, ManualClock) {
    let auth = AuthConfig {
        disabled: false,
        basic: vec![("admin".into(), "pw".into())],
        tokens: vec!["tok".into()],
        read_only_basic: vec![("viewer".into(), "vpw".into())],
        read_only_tokens: vec!["ro".into()],
        admin_basic: Vec::new(),
        admin_tokens: vec!["root".into()],
    };
    let api = ApiConfig {
        auth,
        body_limit: 64 * 1024,
        ..ApiConfig::default()
    };
    let (app, clock, _) = app_on(api, PlanConfig::default()).await;
    (app, clock)
}

/// The router with `api` over fresh services (plans under `plans`, [`INVENTORY`]) on an
/// in-memory store: the router, the clock its services read (starts at [`t0`]), the store.
pub(crate) async fn app_on(
    api: ApiConfig,
    plans: PlanConfig,
) -> (Router, ManualClock, Arc<dyn berth_store::Store>) {
    let manual = ManualClock::new(t0());
    let clock = Arc::new(manual.clone());
    let store = berth_store::open("sqlite::memory:").await.unwrap();
    let res = ReservationService::open(
        Arc::clone(&store),
        ReservationOptions::default(),
        clock.clone(),
        Notifier::disabled(),
    )
    .await
    .unwrap();
    let inv: Arc<dyn berth_inventory::InventoryProvider> =
        Arc::new(berth_inventory::StaticProvider::parse(INVENTORY).unwrap());
    let plans = PlanService::start(Arc::clone(&store), inv, Arc::clone(&res), clock, plans)
        .await
        .unwrap();
    let app = router(AppState::new(res, plans, None), api);
    (app, manual, store)
}

pub(crate) async fn call(
    app: &Router,
    method: Method,
    uri: &str,
    body: Option<Value>,
) -> (u16, Value, String) {
    call_with(app, method, uri, body, Some("Bearer tok")).await
}

pub(crate) async fn call_with(
    app: &Router,
    method: Method,
    uri: &str,
    body: Option<Value>,
    auth: Option<&str>,
) -> (u16, Value, String) {
    let mut req = Request::builder()
        .method(method)
        .uri(uri)
        .header("host", "berth.test");
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    let req = match body {
        Some(b) => req
            .header("content-type", "application/json")
            .body(Body::from(b.to_string()))
            .unwrap(),
        None => req.body(Body::empty()).unwrap(),
    };
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status().as_u16();
    let ctype = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 24)
        .await
        .unwrap();
    let v = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, v, ctype)
}

/// The body HAS writes for `code` with `explanation` (webob's class, title and message).
pub(crate) fn has_error(code: u16, explanation: &str) -> Value {
    let status = axum::http::StatusCode::from_u16(code).unwrap();
    let (kind, title, message) = webob_status(status);
    json!({"error_message": {
        "explanation": explanation,
        "code": code,
        "error": {"message": message, "type": kind},
        "title": title,
    }})
}

fn post(uri: &str) -> (Method, &str) {
    (Method::POST, uri)
}

#[tokio::test]
async fn auth_is_required_except_for_health() {
    let app = app().await;
    // On HAS routes, as HAS answers it.
    let (s, v, ct) = call_with(&app, Method::GET, "/v1/plans", None, None).await;
    assert_eq!((s, ct.as_str()), (401, "application/json"));
    assert_eq!(
        v,
        has_error(
            401,
            "Unauthorized: The request does not provide any HTTP authentication (basic authentication)"
        )
    );
    let (s, v, _) = call_with(&app, Method::GET, "/v1/plans", None, Some("Bearer nope")).await;
    assert_eq!(
        (s, v),
        (
            401,
            has_error(
                401,
                "Invalid credentials: username or password is incorrect"
            )
        )
    );
    // On Promise routes in Promise's shape; elsewhere a problem.
    let (s, v, ct) = call_with(&app, Method::POST, "/query-capacity", Some(json!({})), None).await;
    assert_eq!((s, ct.as_str()), (401, "application/json"));
    assert_eq!(v["result"], "error");
    let (s, v, ct) = call_with(&app, Method::GET, "/metrics", None, None).await;
    assert_eq!((s, ct.as_str()), (401, "application/problem+json"));
    assert_eq!(v["status"], 401);
    assert_eq!(
        call_with(
            &app,
            Method::GET,
            "/v1/plans",
            None,
            Some("Basic YWRtaW46cHc=")
        )
        .await
        .0,
        200
    );
    assert_eq!(
        call_with(
            &app,
            Method::GET,
            "/v1/plans",
            None,
            Some("Basic YWRtaW46eA==")
        )
        .await
        .0,
        401
    );
    assert_eq!(
        call_with(&app, Method::GET, "/healthz", None, None).await.0,
        200
    );
    assert_eq!(
        call_with(&app, Method::GET, "/readyz", None, None).await.0,
        200
    );
}

#[tokio::test]
async fn promise_reservation_lifecycle() {
    let app = app().await;
    let os = add_provider(&app, json!([])).await;
    let (m, u) = post("/increase-capacity");
    let (s, v, _) = call(&app, m, u, Some(json!({"source": format!("ResourceProvider:{os}"), "capacity": {"cores": "20", "ram": "51200", "instances": "10", "addresses": "10"}}))).await;
    assert_eq!((s, v["result"].as_str()), (200, Some("ok")), "{v}");
    assert_eq!(v["pool-id"], format!("default/{os}"));
    let body = json!({"capacity": {"cores": "5", "ram": 25600, "addresses": "3", "instances": "3"}, "start": "2030-01-02T00:00:00Z", "end": "2030-01-03T00:00:00Z"});
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/create-reservation",
        Some(body.clone()),
    )
    .await;
    assert_eq!((s, v["result"].as_str()), (200, Some("ok")), "{v}");
    let rid = v["reservation-id"].as_str().unwrap().to_owned();
    // Too big: a conflict with an offer.
    let big = json!({"capacity": {"instances": "8"}, "start": "2030-01-02T00:00:00Z", "end": "2030-01-03T00:00:00Z"});
    let (s, v, _) = call(&app, Method::POST, "/create-reservation", Some(big)).await;
    assert_eq!((s, v["result"].as_str()), (409, Some("conflict")), "{v}");
    assert_eq!(v["offers"][0]["max_reservable"]["instances"], 7);
    // Bad quantities and bodies are errors in the Promise shape.
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/create-reservation",
        Some(json!({"capacity": {"cores": "five"}})),
    )
    .await;
    assert_eq!((s, v["result"].as_str()), (400, Some("error")));
    let (s, v, _) = call(&app, Method::POST, "/create-reservation", Some(json!([1]))).await;
    assert_eq!((s, v["result"].as_str()), (400, Some("error")));
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/update-reservation",
        Some(json!({"reservation-id": rid, "capacity": {"cores": "1", "instances": "1"}})),
    )
    .await;
    assert_eq!(
        (s, v["message"].as_str()),
        (200, Some("reservation update successful")),
        "{v}"
    );
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/query-reservation",
        Some(json!({"window": {"start": "2030-01-01T00:00:00Z", "end": "2030-01-04T00:00:00Z"}})),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(v["reservations"], json!([rid]));
    assert_eq!(v["details"][0]["amounts"]["cores"], 1);
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/query-capacity",
        Some(json!({"capacity": "total"})),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        v["collections"],
        json!([format!("ResourcePool:default/{os}")])
    );
    assert_eq!(v["capacity"][format!("default/{os}")]["cores"], 20);
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/query-capacity",
        Some(json!({"capacity": "bogus"})),
    )
    .await;
    assert_eq!((s, v["result"].as_str()), (400, Some("error")));
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/decrease-capacity",
        Some(json!({"source": format!("ResourcePool:{os}"), "capacity": {"cores": "3"}})),
    )
    .await;
    assert_eq!(
        (s, v["message"].as_str()),
        (200, Some("capacity decrease successful"))
    );
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/cancel-reservation",
        Some(json!({"reservation-id": rid})),
    )
    .await;
    assert_eq!(
        (s, v["message"].as_str()),
        (200, Some("reservation canceled"))
    );
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/cancel-reservation",
        Some(json!({"reservation-id": "r999"})),
    )
    .await;
    assert_eq!((s, v["result"].as_str()), (404, Some("error")));
    let (s, _, _) = call(&app, Method::POST, "/cancel-reservation", Some(json!({}))).await;
    assert_eq!(s, 400);
}

#[tokio::test]
async fn idempotency_key_header_replays_creates() {
    let app = app().await;
    call(
        &app,
        Method::POST,
        "/increase-capacity",
        Some(json!({"capacity": {"instances": 5}})),
    )
    .await;
    let req = |key: &str, n: u64| {
        Request::builder()
            .method(Method::POST)
            .uri("/create-reservation")
            .header("authorization", "Bearer tok")
            .header("idempotency-key", key)
            .body(Body::from(
                json!({"capacity": {"instances": n}, "end": "2030-06-01T00:00:00Z"}).to_string(),
            ))
            .unwrap()
    };
    let read = |r: axum::response::Response| async move {
        let s = r.status().as_u16();
        let b = axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap();
        (s, serde_json::from_slice::<Value>(&b).unwrap())
    };
    let (s1, a) = read(app.clone().oneshot(req("k", 1)).await.unwrap()).await;
    let (s2, b) = read(app.clone().oneshot(req("k", 1)).await.unwrap()).await;
    assert_eq!((s1, s2), (200, 200));
    assert_eq!(a["reservation-id"], b["reservation-id"]);
    let (s3, c) = read(app.clone().oneshot(req("k", 2)).await.unwrap()).await;
    assert_eq!((s3, c["result"].as_str()), (409, Some("conflict")));
    let (_, v, _) = call(&app, Method::POST, "/query-reservation", None).await;
    assert_eq!(v["reservations"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn instances_providers_and_subscriptions() {
    let app = app().await;
    call(
        &app,
        Method::POST,
        "/increase-capacity",
        Some(json!({"zone": "z1", "capacity": {"instances": 2, "cores": 4}})),
    )
    .await;
    let (s, v, _) = call(&app, Method::POST, "/add-provider", Some(json!({"provider-type": "openstack", "endpoint": "http://10.0.2.15:5000/v2.0/tokens", "username": "u", "password": "secret", "tenant": {"name": "promise"}}))).await;
    assert_eq!((s, v["result"].as_str()), (200, Some("ok")));
    assert!(!v.to_string().contains("secret"));
    assert_eq!(
        call(
            &app,
            Method::POST,
            "/add-provider",
            Some(json!({"provider-type": ""}))
        )
        .await
        .0,
        400
    );
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/create-instance",
        Some(json!({"zone": "z1", "name": "vm1", "capacity": {"instances": "1", "cores": "2"}})),
    )
    .await;
    assert_eq!((s, v["result"].as_str()), (200, Some("ok")), "{v}");
    let iid = v["instance-id"].as_str().unwrap().to_owned();
    let (s, _, _) = call(
        &app,
        Method::POST,
        "/create-instance",
        Some(json!({"zone": "z1", "capacity": {"cores": "3"}})),
    )
    .await;
    assert_eq!(s, 409);
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/destroy-instance",
        Some(json!({"instance-id": iid})),
    )
    .await;
    assert_eq!((s, v["result"].as_str()), (200, Some("ok")));
    assert_eq!(
        call(
            &app,
            Method::POST,
            "/destroy-instance",
            Some(json!({"instance-id": "zz"}))
        )
        .await
        .0,
        404
    );
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/capacity/compute/subscribe",
        Some(json!({"zone": "z1", "threshold": "1", "callback": "http://127.0.0.1:9/x"})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    let sid = v["subscription-id"].as_str().unwrap().to_owned();
    assert_eq!(
        call(
            &app,
            Method::POST,
            "/capacity/gpu/subscribe",
            Some(json!({"threshold": 1, "callback": "http://x"}))
        )
        .await
        .0,
        404
    );
    assert_eq!(
        call(
            &app,
            Method::POST,
            "/capacity/compute/subscribe",
            Some(json!({"threshold": 1, "callback": "nope"}))
        )
        .await
        .0,
        400
    );
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/reservation/subscribe",
        Some(json!({"filters": {"zone": "z1"}, "callback": "http://127.0.0.1:9/y"})),
    )
    .await;
    assert_eq!(s, 201);
    let wid = v["subscription-id"].as_str().unwrap().to_owned();
    assert_eq!(
        call(
            &app,
            Method::DELETE,
            &format!("/capacity/compute/subscribe/{sid}"),
            None
        )
        .await
        .0,
        200
    );
    assert_eq!(
        call(
            &app,
            Method::DELETE,
            &format!("/reservation/subscribe/{wid}"),
            None
        )
        .await
        .0,
        200
    );
    assert_eq!(
        call(
            &app,
            Method::DELETE,
            &format!("/reservation/subscribe/{wid}"),
            None
        )
        .await
        .0,
        404
    );
}

pub(crate) async fn wait_plan(app: &Router, id: &str) -> Value {
    for _ in 0..300 {
        let (_, v, _) = call(app, Method::GET, &format!("/v1/plans/{id}"), None).await;
        let st = v["plans"][0]["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if ["done", "not found", "error"].contains(&st.as_str()) {
            return v["plans"][0].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("plan {id} did not finish");
}

#[tokio::test]
async fn has_plan_routes() {
    let app = app().await;
    let (s, v, _) = call(&app, Method::GET, "/", None).await;
    assert_eq!((s, v["versions"][0]["id"].as_str()), (200, Some("v1")));
    let template = "homing_template_version: 2017-10-10\nlocations: {customer: {latitude: 32.8, longitude: -96.8}}\ndemands: {vG: [{inventory_provider: aai, inventory_type: cloud}]}\noptimization: {minimize: {sum: [{distance_between: [customer, vG]}]}}\n";
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/v1/plans",
        Some(json!({"name": "p", "template": template, "num_solution": "2", "timeout": 60})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["status"], "template");
    let id = v["id"].as_str().unwrap().to_owned();
    assert_eq!(
        v["links"][0][0]["href"],
        format!("http://berth.test/v1/plans/{id}")
    );
    let plan = wait_plan(&app, &id).await;
    assert_eq!(plan["status"], "done", "{plan}");
    let rec = &plan["recommendations"][0]["vG"];
    assert_eq!(rec["candidate"]["candidate_id"], "dfw");
    assert_eq!(rec["candidate"]["vim-id"], "att_dfw");
    assert_eq!(rec["attributes"]["physical-location-id"], "DLLSTX");
    assert_eq!(rec["inventory_provider"], "aai");
    assert_eq!(plan["recommendations"].as_array().map(Vec::len), Some(2));
    assert_eq!(plan["optimal"], true);
    // Proven: the bound is the best objective, the gap 0.
    assert_eq!(plan["bound"], plan["objectives"][0], "{plan}");
    assert!(plan["bound"].is_number(), "{plan}");
    assert_eq!(plan["gap"], 0.0);
    let (s, v, _) = call(&app, Method::GET, &format!("/v1/triage_tool/{id}"), None).await;
    assert_eq!((s, v["plan_id"].as_str()), (200, Some(id.as_str())));
    let (_, v, _) = call(&app, Method::GET, "/v1/plans", None).await;
    assert_eq!(v["plans"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["plans"][0]["id"], id.as_str());
    // HAS-shaped errors.
    let (s, v, ct) = call(&app, Method::GET, "/v1/plans/nope", None).await;
    assert_eq!((s, ct.as_str()), (404, "application/json"));
    assert_eq!(v, has_error(404, "plan `nope` not found"));
    assert_eq!(
        v["error_message"]["error"],
        json!({"type": "HTTPNotFound", "message": "The resource could not be found."})
    );
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/v1/plans",
        Some(json!({"name": "p", "template": template, "num_solution": "many"})),
    )
    .await;
    let explanation = "`num_solution` is `many`; expected a non-negative integer or `all`";
    let mut want = has_error(400, explanation);
    want["error_message"]["diagnostics"] =
        json!([{"path": "num_solution", "line": 0, "column": 0, "message": explanation}]);
    assert_eq!((s, v), (400, want));
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/v1/plans",
        Some(json!({"template": {}})),
    )
    .await;
    assert_eq!(s, 400);
    assert_eq!(v["error_message"]["error"]["type"], "HTTPBadRequest");
    assert_eq!(v["error_message"]["title"], "Bad Request");
    assert_eq!(v["error_message"]["diagnostics"][0]["line"], 1);
    // Errors the router writes are reshaped too: an unknown method, an unknown path.
    let (s, v, _) = call(&app, Method::PUT, "/v1/plans", Some(json!({}))).await;
    assert_eq!(
        (s, v),
        (405, has_error(405, "The PUT method is not allowed."))
    );
    let (s, v, _) = call(&app, Method::GET, "/v1/nowhere", None).await;
    assert_eq!((s, v), (404, has_error(404, "no such route")));
    assert_eq!(
        call(&app, Method::DELETE, &format!("/v1/plans/{id}"), None)
            .await
            .0,
        204
    );
    assert_eq!(
        call(&app, Method::DELETE, &format!("/v1/plans/{id}"), None)
            .await
            .0,
        404
    );
}

#[tokio::test]
async fn limits_fallback_metrics_and_openapi() {
    let app = app().await;
    let big = json!({"name": "x".repeat(100 * 1024), "template": {}});
    let (s, v, ct) = call(&app, Method::POST, "/v1/plans", Some(big.clone())).await;
    assert_eq!((s, ct.as_str()), (413, "application/json"));
    assert_eq!(
        v["error_message"]["error"]["type"],
        "HTTPRequestEntityTooLarge"
    );
    assert_eq!(v["error_message"]["code"], 413);
    assert!(v["error_message"]["explanation"].is_string());
    let (s, v, _) = call(&app, Method::POST, "/create-reservation", Some(big)).await;
    assert_eq!(s, 413);
    assert!(v.get("error_message").is_none(), "{v}");
    let (s, v, ct) = call(&app, Method::GET, "/nowhere", None).await;
    assert_eq!((s, ct.as_str()), (404, "application/problem+json"));
    assert_eq!(
        v,
        json!({"type": "about:blank", "title": "Not Found", "status": 404, "detail": "no such route"})
    );
    let (s, _, ct) = call(&app, Method::GET, "/metrics", None).await;
    assert_eq!((s, ct.starts_with("text/plain")), (200, true));
    let (s, v, _) = call(&app, Method::GET, "/openapi.json", None).await;
    assert_eq!(s, 200);
    assert!(v["paths"]["/create-reservation"]["post"].is_object());
    assert!(v["components"]["schemas"]["ReservationBody"].is_object());
    assert_eq!(
        v["paths"]["/v1/plans"]["post"]["responses"]["default"]["content"]["application/json"]["schema"]
            ["$ref"],
        "#/components/schemas/HasError"
    );
    assert!(v["components"]["schemas"]["HasErrorMessage"]["properties"]["explanation"].is_object());
}

#[test]
fn committed_openapi_document_is_fresh() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == openapi_json(),
        "docs/openapi.json is stale; run `cargo run -p berth-api --bin berth-openapi > docs/openapi.json`"
    );
}

#[test]
fn every_schema_reference_in_the_openapi_document_resolves() {
    let doc = openapi_json();
    let v: Value = serde_json::from_str(&doc).unwrap();
    let schemas = v["components"]["schemas"].as_object().unwrap();
    let dangling: std::collections::BTreeSet<&str> = doc
        .split("\"#/components/schemas/")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|name| !schemas.contains_key(*name))
        .collect();
    assert!(
        dangling.is_empty(),
        "dangling schema references: {dangling:?}"
    );
}

#[test]
fn slicing_recommendations_carry_attributes_in_the_candidate_as_has() {
    let outcome = json!({"solutions": [{"placements": {
        "URLLC": {
            "candidate_id": "nsi-1", "inventory_type": "nsi", "inventory_provider": "aai",
            "attributes": {"instance_name": "nsi_a", "latency": 18}
        },
        "vG": {
            "candidate_id": "dfw", "inventory_type": "cloud",
            "attributes": {"sriov": true}
        }
    }}]});
    let recs = has::recommendations(Some(&outcome));
    let nsi = &recs[0]["URLLC"];
    assert_eq!(nsi["candidate"]["instance_name"], "nsi_a");
    assert_eq!(nsi["candidate"]["latency"], 18);
    assert_eq!(nsi["candidate"]["inventory_type"], "nsi");
    assert_eq!(nsi["attributes"]["instance_name"], "nsi_a");
    // Cloud candidates keep HAS's cloud shape: attributes only under `attributes`.
    assert_eq!(recs[0]["vG"]["candidate"].get("sriov"), None);
    assert_eq!(recs[0]["vG"]["attributes"]["sriov"], true);
}

/// Registers an OpenStack provider with `flavors`; returns its id.
pub(crate) async fn add_provider(app: &Router, flavors: Value) -> String {
    let (s, v, _) = call(
        app,
        Method::POST,
        "/add-provider",
        Some(json!({"provider-type": "openstack", "endpoint": "http://10.0.2.15:5000/v2.0/tokens", "username": "u", "password": "p", "tenant": {"name": "promise"}, "flavors": flavors})),
    )
    .await;
    assert_eq!((s, v["result"].as_str()), (200, Some("ok")), "{v}");
    let id = v["provider-id"].as_str().unwrap().to_owned();
    assert_eq!(v["pool-id"], format!("default/{id}"));
    id
}

pub(crate) async fn promise(app: &Router, uri: &str, body: Value) -> (u16, Value) {
    let (s, v, _) = call(app, Method::POST, uri, Some(body)).await;
    (s, v)
}

#[tokio::test]
async fn promise_pool_ids_round_trip_in_every_source_form() {
    let app = app().await;
    let pid = add_provider(&app, json!([])).await;
    let pool = format!("default/{pid}");
    let (s, v) = promise(&app, "/increase-capacity", json!({"source": {"id": pid}, "capacity": {"cores": 20, "ram": 51200, "instances": 10, "addresses": 10}})).await;
    assert_eq!(
        (s, v["pool-id"].as_str()),
        (200, Some(pool.as_str())),
        "{v}"
    );
    let (_, v) = promise(&app, "/query-capacity", json!({"capacity": "total"})).await;
    assert_eq!(v["collections"], json!([format!("ResourcePool:{pool}")]));
    let forms = [
        json!(pool),
        json!(format!("ResourcePool:{pool}")),
        json!(pid),
        json!(format!("ResourceProvider:{pid}")),
        json!({"id": pid}),
        json!({"id": format!("ResourcePool:{pool}")}),
    ];
    for form in &forms {
        let (s, v) = promise(
            &app,
            "/decrease-capacity",
            json!({"source": form, "capacity": {"cores": 1}}),
        )
        .await;
        assert_eq!(
            (s, v["pool-id"].as_str()),
            (200, Some(pool.as_str())),
            "{form}: {v}"
        );
    }
    let (_, v) = promise(&app, "/query-capacity", json!({"capacity": "total"})).await;
    assert_eq!(v["capacity"][&pool]["cores"], 14, "{v}");
    // Subscriptions take the same forms.
    let (s, v) = promise(
        &app,
        "/capacity/compute/subscribe",
        json!({"source": {"id": pid}, "threshold": 2, "callback": "http://127.0.0.1:9/x"}),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    // Unknown providers are refused by name and create nothing.
    for (uri, body) in [
        (
            "/increase-capacity",
            json!({"source": {"id": "phantom"}, "capacity": {"cores": 1}}),
        ),
        (
            "/increase-capacity",
            json!({"source": "ResourceProvider:phantom", "capacity": {"cores": 1}}),
        ),
        (
            "/decrease-capacity",
            json!({"source": "ResourcePool:z9/phantom", "capacity": {"cores": 1}}),
        ),
        (
            "/capacity/compute/subscribe",
            json!({"source": "phantom", "threshold": 1, "callback": "http://127.0.0.1:9/x"}),
        ),
    ] {
        let (s, v) = promise(&app, uri, body).await;
        assert_eq!(
            (s, v["result"].as_str()),
            (404, Some("error")),
            "{uri}: {v}"
        );
        assert_eq!(
            v["message"],
            "`source`: provider `phantom` is unknown; register it with add-provider or list it in the inventory"
        );
    }
    let (_, v) = promise(&app, "/query-capacity", json!({})).await;
    assert_eq!(v["collections"], json!([format!("ResourcePool:{pool}")]));
    // A known provider without a pool in that zone has nothing to decrease.
    let (s, v) = promise(
        &app,
        "/decrease-capacity",
        json!({"source": format!("elsewhere/{pid}"), "capacity": {"cores": 1}}),
    )
    .await;
    assert_eq!(
        (s, v["message"].as_str()),
        (
            404,
            Some(format!("`source`: pool `elsewhere/{pid}` has no capacity to decrease").as_str())
        )
    );
    // Malformed sources name the field.
    for (src, msg) in [
        (
            json!(5),
            "`source` is 5; expected a provider or pool id, or an object with `id`",
        ),
        (
            json!({"name": "x"}),
            "`source.id` is missing or not a string; expected a provider or pool id",
        ),
        (
            json!("ResourcePool:/x"),
            "`source` is `ResourcePool:/x`; expected a pool id `<zone>/<provider-id>`",
        ),
        (
            json!(""),
            "`source` is empty; expected a provider or pool id",
        ),
    ] {
        let (s, v) = promise(
            &app,
            "/increase-capacity",
            json!({"source": src, "capacity": {"cores": 1}}),
        )
        .await;
        assert_eq!(
            (s, v["result"].as_str(), v["message"].as_str()),
            (400, Some("error"), Some(msg)),
            "{src}"
        );
    }
    let (s, v) = promise(
        &app,
        "/increase-capacity",
        json!({"source": pid, "capacity": {"cores": "many"}}),
    )
    .await;
    assert_eq!(
        (s, v["message"].as_str()),
        (
            400,
            Some("`capacity.cores` is \"many\"; expected a non-negative integer amount")
        )
    );
}

#[tokio::test]
async fn promise_reservations_default_to_max_duration_and_leave_query_when_cancelled() {
    let (app, clock) = app_with_clock().await;
    let (s, _) = promise(
        &app,
        "/increase-capacity",
        json!({"capacity": {"cores": 20, "instances": 10}}),
    )
    .await;
    assert_eq!(s, 200);
    let (s, v) = promise(
        &app,
        "/create-reservation",
        json!({"capacity": {"cores": 5, "instances": 3}}),
    )
    .await;
    assert_eq!((s, v["result"].as_str()), (200, Some("ok")), "{v}");
    let open = v["reservation-id"].as_str().unwrap().to_owned();
    let start = t0() + chrono::TimeDelta::hours(1);
    let end = t0() + chrono::TimeDelta::hours(2);
    let (s, v) = promise(
        &app,
        "/create-reservation",
        json!({"capacity": {"cores": 1}, "start": start, "end": end}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let short = v["reservation-id"].as_str().unwrap().to_owned();
    let (s, v) = promise(&app, "/query-reservation", json!({})).await;
    assert_eq!(s, 200);
    assert_eq!(v["reservations"], json!([open, short]));
    let d = &v["details"][0];
    assert_eq!(
        (d["reservation-id"].as_str(), d["pool-id"].as_str()),
        (Some(open.as_str()), Some("default/default"))
    );
    assert_eq!(d["end"], json!(t0() + chrono::TimeDelta::hours(8760)));
    assert_eq!(
        (d["active"].as_bool(), v["details"][1]["active"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(d["capacity"], json!({"cores": 5, "instances": 3}));
    // Utilization (on by default) is the reserved timeline: 5 cores, 6 while both overlap.
    let steps: Vec<(Value, Value)> = v["utilization"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["timestamp"].clone(), u["capacity"]["cores"].clone()))
        .collect();
    assert_eq!(
        steps,
        vec![
            (json!(t0()), json!(5)),
            (json!(start), json!(6)),
            (json!(end), json!(5)),
            (json!(t0() + chrono::TimeDelta::hours(8760)), json!(0)),
        ]
    );
    let (_, v) = promise(
        &app,
        "/query-reservation",
        json!({"show-utilization": false}),
    )
    .await;
    assert_eq!(v["utilization"], json!([]));
    // An instance drawn from the open reservation ends with it.
    let (s, v) = promise(
        &app,
        "/create-instance",
        json!({"reservation-id": open, "capacity": {"cores": 1, "instances": 1}}),
    )
    .await;
    assert_eq!((s, v["priority"].as_str()), (200, Some("high")), "{v}");
    assert_eq!(v["reservation-id"], json!(open));
    assert_eq!(v["end"], json!(t0() + chrono::TimeDelta::hours(8760)));
    // Once its end passed, the short one is listed but not active.
    clock.set(t0() + chrono::TimeDelta::hours(3));
    let (_, v) = promise(&app, "/query-reservation", json!({})).await;
    assert_eq!(v["reservations"], json!([open, short]));
    assert_eq!(
        (
            v["details"][1]["state"].as_str(),
            v["details"][1]["active"].as_bool()
        ),
        (Some("ended"), Some(false))
    );
    assert_eq!(v["details"][0]["active"], true);
    // Cancelled: gone from every query, as Promise destroys the record.
    let (s, _) = promise(&app, "/cancel-reservation", json!({"reservation-id": open})).await;
    assert_eq!(s, 200);
    let (_, v) = promise(&app, "/query-reservation", json!({})).await;
    assert_eq!(v["reservations"], json!([short]));
    let (s, v) = promise(
        &app,
        "/query-reservation",
        json!({"window": {"scope": "partial"}}),
    )
    .await;
    assert_eq!(
        (s, v["message"].as_str()),
        (
            400,
            Some("`window.scope` is `partial`; expected inclusive or exclusive")
        )
    );
    let (s, v) = promise(
        &app,
        "/update-reservation",
        json!({"reservation-id": "r77", "capacity": {"cores": 1}}),
    )
    .await;
    assert_eq!(
        (s, v["message"].as_str()),
        (404, Some("`reservation-id`: reservation `r77` is unknown"))
    );
}

#[tokio::test]
async fn promise_instances_consume_and_free_their_flavor() {
    let app = app().await;
    let pid = add_provider(&app, json!([{"id": "1", "name": "m1.small", "vcpus": 1, "ram": 2048, "disk": 20}, {"name": "m1.xlarge", "vcpus": "8", "ram": 16384}])).await;
    let pool = format!("default/{pid}");
    let (s, _) = promise(&app, "/increase-capacity", json!({"source": {"id": pid}, "capacity": {"cores": 4, "ram": 8192, "instances": 10, "gigabytes": 100}})).await;
    assert_eq!(s, 200);
    let (s, v) = promise(
        &app,
        "/create-instance",
        json!({"provider-id": pid, "name": "vm", "image": "cirros", "flavor": "m1.small"}),
    )
    .await;
    assert_eq!((s, v["priority"].as_str()), (200, Some("low")), "{v}");
    assert_eq!(
        v["capacity"],
        json!({"cores": 1, "gigabytes": 20, "instances": 1, "ram": 2048})
    );
    assert_eq!(
        (v["pool-id"].as_str(), &v["reservation-id"]),
        (Some(pool.as_str()), &Value::Null)
    );
    let low = v["instance-id"].as_str().unwrap().to_owned();
    let (s, v) = promise(
        &app,
        "/create-reservation",
        json!({"provider": pid, "capacity": {"cores": 2, "ram": 4096, "instances": 2}}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let rid = v["reservation-id"].as_str().unwrap().to_owned();
    // By id, from the reservation's provider catalog; the reservation's pool has no disk limit.
    let (s, v) = promise(
        &app,
        "/create-instance",
        json!({"reservation-id": rid, "flavor": "1"}),
    )
    .await;
    assert_eq!((s, v["priority"].as_str()), (200, Some("high")), "{v}");
    let high = v["instance-id"].as_str().unwrap().to_owned();
    let (_, v) = promise(&app, "/query-reservation", json!({})).await;
    assert_eq!(v["details"][0]["allocations"], json!([high]));
    assert_eq!(
        v["details"][0]["remaining"],
        json!({"cores": 1, "instances": 1, "ram": 2048}),
        "{v}"
    );
    let (_, v) = promise(&app, "/query-capacity", json!({"capacity": "usage"})).await;
    assert_eq!(
        v["capacity"][&pool],
        json!({"cores": 2, "gigabytes": 20, "instances": 2, "ram": 4096}),
        "{v}"
    );
    let (_, v) = promise(&app, "/query-capacity", json!({"capacity": "available"})).await;
    assert_eq!(v["capacity"][&pool]["cores"], 1, "{v}");
    // Too big for what is left: Promise's conflict.
    let (s, v) = promise(
        &app,
        "/create-instance",
        json!({"provider-id": pid, "flavor": "m1.xlarge"}),
    )
    .await;
    assert_eq!((s, v["result"].as_str()), (409, Some("conflict")), "{v}");
    // Unknown flavor and provider name themselves.
    let (s, v) = promise(
        &app,
        "/create-instance",
        json!({"provider-id": pid, "flavor": "m1.huge"}),
    )
    .await;
    assert_eq!((s, v["message"].as_str()), (400, Some(format!("`flavor`: flavor `m1.huge` is unknown to provider `{pid}`; expected one of [m1.small, m1.xlarge]").as_str())));
    // Without provider-id the provider offering the flavor is used (a default pool exists too).
    let (s, _) = promise(
        &app,
        "/increase-capacity",
        json!({"capacity": {"cores": 9}}),
    )
    .await;
    assert_eq!(s, 200);
    let (s, v) = promise(&app, "/create-instance", json!({"flavor": "m1.small"})).await;
    assert_eq!(
        (s, v["pool-id"].as_str()),
        (200, Some(pool.as_str())),
        "{v}"
    );
    let third = v["instance-id"].as_str().unwrap().to_owned();
    let (s, _) = promise(&app, "/destroy-instance", json!({"instance-id": third})).await;
    assert_eq!(s, 200);
    let (s, v) = promise(&app, "/create-instance", json!({"flavor": "m1.huge"})).await;
    assert_eq!(
        (s, v["message"].as_str()),
        (
            400,
            Some("`flavor`: no known provider offers flavor `m1.huge`")
        )
    );
    let (s, v) = promise(
        &app,
        "/create-instance",
        json!({"provider-id": "nova9", "flavor": "m1.small"}),
    )
    .await;
    assert_eq!((s, v["result"].as_str()), (404, Some("error")));
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .starts_with("`provider-id`: provider `nova9` is unknown")
    );
    // Destroying frees what the flavors took.
    for id in [&low, &high] {
        let (s, _) = promise(&app, "/destroy-instance", json!({"instance-id": id})).await;
        assert_eq!(s, 200);
    }
    let (_, v) = promise(&app, "/query-capacity", json!({"capacity": "usage"})).await;
    assert_eq!(
        v["capacity"][&pool],
        json!({"cores": 0, "gigabytes": 0, "instances": 0, "ram": 0})
    );
    // Catalog errors name the entry.
    let (s, v, _) = call(
        &app,
        Method::POST,
        "/add-provider",
        Some(json!({"provider-type": "openstack", "flavors": [{"vcpus": 1, "ram": 1}]})),
    )
    .await;
    assert_eq!(
        (s, v["message"].as_str()),
        (
            400,
            Some("`flavors[0]` has neither `id` nor `name`; expected at least one")
        )
    );
    let (s, v, _) = call(&app, Method::POST, "/add-provider", Some(json!({"provider-type": "openstack", "flavors": [{"name": "a", "vcpus": "x", "ram": 1}]}))).await;
    assert_eq!(
        (s, v["message"].as_str()),
        (
            400,
            Some("`flavors[0].vcpus` is `x`; expected a non-negative integer")
        )
    );
}
