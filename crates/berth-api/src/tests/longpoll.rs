//! `GET /v1/plans/{id}` with `Prefer: wait=N`: the answer comes when the plan ends or at the
//! deadline, says which preference was applied, and the wait holds no in-flight place.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request};
use berth_service::{ManualClock, PlanConfig, WallClock};
use berth_store::{NewPlan, Store};
use serde_json::{Value, json};
use tower::ServiceExt;

use super::super::*;
use super::{app_on, call};

const TEMPLATE: &str = "homing_template_version: 2017-10-10\nlocations: {customer: {latitude: 32.8, longitude: -96.8}}\ndemands: {vG: [{inventory_provider: aai, inventory_type: cloud}]}\noptimization: {minimize: {sum: [{distance_between: [customer, vG]}]}}\n";

struct Fixture {
    app: Router,
    store: Arc<dyn Store>,
    clock: ManualClock,
}

/// One place in flight, `request_timeout`, and plan workers that look at the queue every 20 ms.
async fn fixture(request_timeout: Duration) -> Fixture {
    let api = ApiConfig {
        auth: AuthConfig::disabled(),
        request_timeout,
        max_in_flight: 1,
        ..ApiConfig::default()
    };
    let plans = PlanConfig {
        poll: Duration::from_millis(20),
        ..PlanConfig::default()
    };
    let (app, clock, store) = app_on(api, plans).await;
    Fixture { app, store, clock }
}

/// A plan claimed by a daemon that died: nobody solves it until the claim runs out (30 s of
/// the manual clock).
async fn orphan(f: &Fixture, id: &str) {
    let request =
        json!({"name": id, "template": TEMPLATE, "num_solution": 1, "timeout": 30, "files": {}});
    let plan = NewPlan {
        id: id.into(),
        name: id.into(),
        status: "template".into(),
        request,
        created_at: f.clock.now(),
    };
    let until = f.clock.now() + chrono::TimeDelta::seconds(30);
    f.store
        .create_plan_claimed(&plan, "dead", until)
        .await
        .unwrap();
}

async fn get(app: &Router, uri: &str, prefer: Option<&str>) -> (u16, Value, Option<String>) {
    let mut req = Request::builder().method(Method::GET).uri(uri);
    if let Some(p) = prefer {
        req = req.header("prefer", p);
    }
    let resp = app
        .clone()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let applied = resp
        .headers()
        .get("preference-applied")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, serde_json::from_slice(&bytes).unwrap(), applied)
}

#[tokio::test]
async fn a_waiting_read_answers_when_the_plan_ends() {
    let f = fixture(Duration::from_secs(30)).await;
    orphan(&f, "o").await;
    let waiting = {
        let app = f.app.clone();
        tokio::spawn(
            async move { get(&app, "/v1/plans/o", Some("respond-async, wait=20; x=y")).await },
        )
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Meanwhile the one in-flight place serves other requests.
    let (s, v, _) = call(&f.app, Method::GET, "/v1/plans", None).await;
    assert_eq!(s, 200, "{v}");
    assert!(!waiting.is_finished());
    // The dead daemon's claim runs out; this daemon takes the plan over and solves it.
    f.clock.set(f.clock.now() + chrono::TimeDelta::seconds(31));
    let started = Instant::now();
    let (s, v, applied) = waiting.await.unwrap();
    assert_eq!(s, 200);
    assert_eq!(v["plans"][0]["status"], "done", "{v}");
    assert_eq!(
        v["plans"][0]["recommendations"][0]["vG"]["candidate"]["candidate_id"],
        "dfw"
    );
    assert_eq!(applied.as_deref(), Some("wait=20"));
    assert!(started.elapsed() < Duration::from_secs(10));
    // A final plan is answered at once, with no preference applied.
    let (s, v, applied) = get(&f.app, "/v1/plans/o", Some("wait=20")).await;
    assert_eq!(
        (s, v["plans"][0]["status"].as_str(), applied),
        (200, Some("done"), None)
    );
}

#[tokio::test]
async fn a_waiting_read_answers_at_its_deadline_capped_below_the_request_timeout() {
    let f = fixture(Duration::from_secs(3)).await;
    orphan(&f, "o").await;
    let started = Instant::now();
    // Asked for a minute; the request timeout of 3 s caps it at 2 s.
    let (s, v, applied) = get(&f.app, "/v1/plans/o", Some("wait=60")).await;
    let waited = started.elapsed();
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["plans"][0]["status"], "template");
    assert_eq!(applied.as_deref(), Some("wait=2"));
    assert!(waited >= Duration::from_secs(2), "{waited:?}");
    assert!(waited < Duration::from_secs(3), "{waited:?}");
    // No wait, an unreadable one, or zero: answered at once.
    for prefer in [
        None,
        Some("wait=soon"),
        Some("wait=0"),
        Some("handling=lenient"),
    ] {
        let started = Instant::now();
        let (s, _, applied) = get(&f.app, "/v1/plans/o", prefer).await;
        assert_eq!((s, applied), (200, None), "{prefer:?}");
        assert!(started.elapsed() < Duration::from_secs(1), "{prefer:?}");
    }
    // An unknown plan is a 404 at once, waiting or not.
    let (s, _, _) = get(&f.app, "/v1/plans/nope", Some("wait=2")).await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn a_plan_deleted_while_read_waits_is_a_404() {
    let f = fixture(Duration::from_secs(30)).await;
    orphan(&f, "o").await;
    let waiting = {
        let app = f.app.clone();
        tokio::spawn(async move { get(&app, "/v1/plans/o", Some("wait=20")).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (s, _, _) = call(&f.app, Method::DELETE, "/v1/plans/o", None).await;
    assert_eq!(s, 204);
    let started = Instant::now();
    let (s, _, _) = waiting.await.unwrap();
    assert_eq!(s, 404);
    assert!(started.elapsed() < Duration::from_secs(10));
}
