//! Console routes in process: embedded pages behind auth, the calendar view (reservations,
//! allocations, capacity changes, preemptions), plans, the event stream, placements.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request};
use berth_calendar::{
    AllocationRequest, Amounts, CapacityChange, Command, PoolKey, Preemption, Priority,
    ReservationRequest,
};
use berth_service::{
    ManualClock, Notifier, PlanConfig, PlanService, ReservationOptions, ReservationService,
};
use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use futures_util::StreamExt as _;
use serde_json::json;
use tower::ServiceExt as _;

use crate::tests::{INVENTORY, call, call_with};
use crate::{ApiConfig, AppState, AuthConfig, router};

const TOPOLOGY: &str = include_str!("../../../../examples/heat/room-rack-pm.yaml");
const HEAT: &str = include_str!("../../../../examples/heat/ha-clusters.yaml");

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default()
}

fn h(n: i64) -> DateTime<Utc> {
    t0() + TimeDelta::hours(n)
}

struct Fixture {
    app: Router,
    res: Arc<ReservationService>,
    plans: Arc<PlanService>,
}

async fn fixture(with_site: bool) -> Fixture {
    let clock = Arc::new(ManualClock::new(t0()));
    let store = berth_store::open("sqlite::memory:").await.unwrap();
    let mut opts = ReservationOptions::default();
    opts.policy.preemption = Preemption {
        cancel_pending_reservations: true,
        terminate_unreserved_allocations: true,
    };
    let res = ReservationService::open(
        Arc::clone(&store),
        opts,
        clock.clone(),
        Notifier::disabled(),
    )
    .await
    .unwrap();
    let inv: Arc<dyn berth_inventory::InventoryProvider> =
        Arc::new(berth_inventory::StaticProvider::parse(INVENTORY).unwrap());
    let plans = PlanService::start(store, inv, Arc::clone(&res), clock, PlanConfig::default())
        .await
        .unwrap();
    let mut state = AppState::new(Arc::clone(&res), Arc::clone(&plans), None);
    if with_site {
        state = state.with_placement_site(super::PlacementSite {
            topology: Arc::new(berth_topology::load(TOPOLOGY).unwrap()),
            source: "test room".into(),
            example: HEAT.into(),
        });
    }
    let auth = AuthConfig {
        basic: vec![("admin".into(), "pw".into())],
        tokens: vec!["tok".into()],
        read_only_tokens: vec!["ro".into()],
        ..AuthConfig::default()
    };
    let app = router(
        state,
        ApiConfig {
            auth,
            ..ApiConfig::default()
        },
    );
    Fixture { app, res, plans }
}

async fn raw(app: &Router, uri: &str, auth: Option<&str>) -> (u16, String, String) {
    let mut req = Request::builder().uri(uri);
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    let resp = app
        .clone()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let ctype = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, ctype, String::from_utf8_lossy(&bytes).into_owned())
}

#[tokio::test]
async fn pages_are_embedded_and_guarded_like_the_api() {
    let f = fixture(false).await;
    let basic = "Basic YWRtaW46cHc="; // admin:pw
    let (s, ctype, body) = raw(&f.app, "/ui/", Some(basic)).await;
    assert_eq!((s, ctype.as_str()), (200, "text/html; charset=utf-8"));
    assert!(body.contains("<script src=\"app.js\""), "{body}");
    let (s, ctype, body) = raw(&f.app, "/ui/app.js", Some("Bearer ro")).await;
    assert_eq!((s, ctype.as_str()), (200, "text/javascript; charset=utf-8"));
    assert!(body.contains("EventSource"));
    let (s, ctype, _) = raw(&f.app, "/ui/style.css", Some(basic)).await;
    assert_eq!((s, ctype.as_str()), (200, "text/css; charset=utf-8"));
    let (s, _, body) = raw(&f.app, "/ui/missing.js", Some(basic)).await;
    assert_eq!(s, 404);
    assert!(body.contains("no console asset `missing.js`"), "{body}");
    let (s, _, _) = raw(&f.app, "/ui/", None).await;
    assert_eq!(s, 401);
    let (s, _, _) = raw(&f.app, "/ui/api/calendar", Some("Basic d3Jvbmc6d3Jvbmc=")).await;
    assert_eq!(s, 401);
    let resp = f
        .app
        .clone()
        .oneshot(
            Request::builder()
                .uri("/ui")
                .header("authorization", basic)
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 308);
    assert_eq!(resp.headers()["location"], "/ui/");
}

#[tokio::test]
async fn the_calendar_view_shows_reservations_allocations_capacity_and_preemptions() {
    let f = fixture(false).await;
    let pool = PoolKey::new("edge", "os");
    let grow = |start, end, n| {
        Command::IncreaseCapacity(CapacityChange {
            pool: pool.clone(),
            start,
            end,
            amounts: Amounts::new().with("vcpu", n),
        })
    };
    f.res.command(grow(h(0), None, 8), None).await.unwrap();
    f.res
        .command(grow(h(10), Some(h(20)), 4), None)
        .await
        .unwrap();
    let low = ReservationRequest::new("edge", Amounts::new().with("vcpu", 6))
        .window(h(2), h(8))
        .priority(Priority::Low);
    f.res
        .command(Command::CreateReservation(low), None)
        .await
        .unwrap();
    let now = ReservationRequest::new("edge", Amounts::new().with("vcpu", 2)).window(h(0), h(30));
    f.res
        .command(Command::CreateReservation(now), None)
        .await
        .unwrap();
    f.res
        .command(
            Command::CreateAllocation(AllocationRequest::reserved(
                berth_calendar::ReservationId(2),
                Amounts::new().with("vcpu", 1),
            )),
            None,
        )
        .await
        .unwrap();
    f.res
        .command(
            Command::CreateAllocation(AllocationRequest::reserved(
                berth_calendar::ReservationId(2),
                Amounts::new().with("vcpu", 1),
            )),
            None,
        )
        .await
        .unwrap();
    f.res
        .command(
            Command::DestroyAllocation {
                id: berth_calendar::AllocationId(2),
            },
            None,
        )
        .await
        .unwrap();
    // Takes the pool from r1 (low priority, not started): r1 is preempted.
    let high = ReservationRequest::new("edge", Amounts::new().with("vcpu", 6))
        .window(h(3), h(6))
        .priority(Priority::High);
    f.res
        .command(Command::CreateReservation(high), None)
        .await
        .unwrap();

    let uri = format!(
        "/ui/api/calendar?from={}&to={}",
        (t0() - TimeDelta::hours(1)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        h(24).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    let (s, v, _) = call(&f.app, Method::GET, &uri, None).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["now"], json!(t0()));
    let ids: Vec<&str> = v["reservations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["r1", "r2", "r3"]);
    let r1 = &v["reservations"][0];
    assert_eq!(
        (
            &r1["state"],
            &r1["preempted_by"],
            &r1["priority"],
            &r1["pool"]
        ),
        (
            &json!("cancelled"),
            &json!("r3"),
            &json!("low"),
            &json!("edge/os")
        )
    );
    assert_eq!(v["reservations"][1]["allocated"], json!({"vcpu": 1}));
    assert_eq!(v["reservations"][1]["state"], "active");
    assert_eq!(v["allocations"][0]["reservation"], "r2");
    assert_eq!(v["allocations"][0]["amounts"], json!({"vcpu": 1}));
    let states: Vec<(&str, &str)> = v["allocations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["id"].as_str().unwrap(), a["state"].as_str().unwrap()))
        .collect();
    assert_eq!(states, [("a1", "active"), ("a2", "destroyed")]);
    let changes: Vec<(String, i64, i64)> = v["capacity_changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["at"].as_str().unwrap().to_owned(),
                c["from"].as_i64().unwrap(),
                c["to"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        [
            ("2030-01-01T00:00:00Z".to_owned(), 0, 8),
            ("2030-01-01T10:00:00Z".to_owned(), 8, 12),
            ("2030-01-01T20:00:00Z".to_owned(), 12, 8),
        ]
    );
    let pool = &v["pools"][0];
    assert_eq!(
        (&pool["id"], &pool["dimensions"]),
        (&json!("edge/os"), &json!(["vcpu"]))
    );
    // From 03:00 to 06:00: r2 (2) and r3 (6) of 8 reserved, nothing left.
    let at3 = pool["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["at"] == "2030-01-01T03:00:00Z")
        .unwrap();
    assert_eq!(
        at3["levels"]["vcpu"],
        json!({"total": 8, "reserved": 8, "usage": 1, "available": 0})
    );

    // A window that ends before r1 starts leaves it out.
    let (_, v, _) = call(
        &f.app,
        Method::GET,
        "/ui/api/calendar?from=2030-01-01T00:00:00Z&to=2030-01-01T01:00:00Z",
        None,
    )
    .await;
    assert_eq!(v["reservations"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn the_calendar_names_providers_and_keeps_over_commitment_below_zero() {
    let f = fixture(false).await;
    let (s, v, _) = call(
        &f.app,
        Method::POST,
        "/add-provider",
        Some(json!({"provider-type": "openstack", "name": "ostack-east", "region": "RegionOne", "tenant": {"name": "promise"}})),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let id = v["provider-id"].as_str().unwrap().to_owned();
    let (s, v, _) = call(
        &f.app,
        Method::POST,
        "/add-provider",
        Some(json!({"provider-type": "openstack"})),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let nameless = v["provider-id"].as_str().unwrap().to_owned();
    for (zone, provider) in [("edge", &id), ("core", &nameless)] {
        let (s, v, _) = call(
            &f.app,
            Method::POST,
            "/increase-capacity",
            Some(json!({"zone": zone, "source": format!("ResourceProvider:{provider}"), "capacity": {"cores": "8"}})),
        )
        .await;
        assert_eq!(s, 200, "{v}");
    }
    let pool = format!("edge/{id}");
    let (s, v, _) = call(
        &f.app,
        Method::POST,
        "/create-reservation",
        Some(json!({"zone": "edge", "provider": id, "capacity": {"cores": "6"}, "start": h(1), "end": h(5)})),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    // Takes 4 of the 8 cores the reservation counts on: 2 over.
    let (s, v, _) = call(
        &f.app,
        Method::POST,
        "/decrease-capacity",
        Some(json!({"source": format!("ResourcePool:{pool}"), "capacity": {"cores": "4"}, "start": h(2)})),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let (s, v, _) = call(
        &f.app,
        Method::GET,
        "/ui/api/calendar?from=2030-01-01T00:00:00Z&to=2030-01-01T12:00:00Z",
        None,
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let named = v["pools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == json!(pool))
        .unwrap();
    assert_eq!(
        [
            &named["zone"],
            &named["provider"],
            &named["provider_name"],
            &named["provider_type"],
            &named["tenant"],
            &named["region"]
        ],
        [
            &json!("edge"),
            &json!(id),
            &json!("ostack-east"),
            &json!("openstack"),
            &json!("promise"),
            &json!("RegionOne")
        ]
    );
    let other = v["pools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["provider"] == json!(nameless))
        .unwrap();
    assert_eq!(
        [&other["provider_name"], &other["tenant"], &other["region"]],
        [&json!(null), &json!(null), &json!(null)]
    );
    let levels: Vec<(&str, i64, i64, i64)> = named["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let l = &s["levels"]["vcpu"];
            (
                s["at"].as_str().unwrap(),
                l["total"].as_i64().unwrap(),
                l["reserved"].as_i64().unwrap(),
                l["available"].as_i64().unwrap(),
            )
        })
        .collect();
    assert!(
        levels.contains(&("2030-01-01T02:00:00Z", 4, 6, -2)),
        "{levels:?}"
    );
    assert_eq!(v["reservations"][0]["at_risk"], true);
}

#[tokio::test]
async fn the_session_says_what_the_credentials_allow_and_readers_may_not_act() {
    let f = fixture(false).await;
    let (s, _, body) = raw(&f.app, "/ui/api/session", Some("Basic YWRtaW46cHc=")).await;
    assert_eq!((s, body.as_str()), (200, r#"{"access":"write"}"#));
    let (s, _, body) = raw(&f.app, "/ui/api/session", Some("Bearer ro")).await;
    assert_eq!((s, body.as_str()), (200, r#"{"access":"read"}"#));
    let (s, _, _) = raw(&f.app, "/ui/api/session", None).await;
    assert_eq!(s, 401);
    // The console's actions are the API's routes: a reader's are refused there.
    for (method, uri, body) in [
        (
            Method::POST,
            "/create-reservation",
            Some(json!({"zone": "edge", "capacity": {"cores": "1"}})),
        ),
        (
            Method::POST,
            "/update-reservation",
            Some(json!({"reservation-id": "r1", "end": h(3)})),
        ),
        (
            Method::POST,
            "/cancel-reservation",
            Some(json!({"reservation-id": "r1"})),
        ),
        (Method::DELETE, "/v1/plans/p1", None),
        (
            Method::POST,
            "/v1/plans",
            Some(json!({"name": "x", "template": "homing_template_version: 2017-10-10"})),
        ),
    ] {
        let (s, v, _) = call_with(&f.app, method, uri, body, Some("Bearer ro")).await;
        assert_eq!(s, 403, "{uri}: {v}");
    }
}

#[tokio::test]
async fn calendar_windows_are_checked_and_name_their_parameter() {
    let f = fixture(false).await;
    for (query, path, words) in [
        ("from=yesterday", "from", "expected an RFC 3339 instant"),
        (
            "from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z",
            "to",
            "is not after `from`",
        ),
        (
            "from=2030-01-01T00:00:00Z&to=2032-01-01T00:00:00Z",
            "to",
            "longer than 366 days",
        ),
        ("zone=x", "zone", "unknown query parameter `zone`"),
    ] {
        let (s, v, ctype) = call(
            &f.app,
            Method::GET,
            &format!("/ui/api/calendar?{query}"),
            None,
        )
        .await;
        assert_eq!(
            (s, ctype.as_str()),
            (400, "application/problem+json"),
            "{v}"
        );
        assert_eq!(v["diagnostics"][0]["path"], path, "{v}");
        assert!(v["detail"].as_str().unwrap().contains(words), "{v}");
    }
}

#[tokio::test]
async fn plans_are_listed_newest_first_with_their_outcome() {
    let f = fixture(false).await;
    let template = json!({
        "homing_template_version": "2017-10-10",
        "locations": {"customer": {"latitude": 32.8, "longitude": -96.8}},
        "demands": {"vG": [{"inventory_provider": "aai", "inventory_type": "cloud"}]},
        "optimization": {"minimize": {"sum": [{"distance_between": ["customer", "vG"]}]}},
    });
    for name in ["first", "second"] {
        let (s, v, _) = call(
            &f.app,
            Method::POST,
            "/v1/plans",
            Some(json!({"name": name, "id": name, "template": template, "num_solution": "1"})),
        )
        .await;
        assert_eq!(s, 201, "{v}");
    }
    for _ in 0..500 {
        let done = f
            .plans
            .list()
            .await
            .unwrap()
            .iter()
            .all(|p| p.status.is_final());
        if done {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let (s, v, _) = call(&f.app, Method::GET, "/ui/api/plans", None).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v[0]["id"], "second");
    assert_eq!(v[1]["id"], "first");
    assert_eq!(v[1]["status"], "done");
    assert_eq!(
        v[1]["outcome"]["solutions"][0]["placements"]["vG"]["candidate_id"],
        "dfw"
    );
    assert_eq!(v[1]["outcome"]["optimal"], true);
    assert!(v[1]["outcome"]["triage"]["vG"]["candidates"].is_number());
}

#[tokio::test]
async fn a_plan_carries_its_points_for_the_map() {
    let f = fixture(false).await;
    // Within 500 km of Dallas: New York is removed; Dallas is chosen.
    let template = json!({
        "homing_template_version": "2017-10-10",
        "locations": {"customer": {"latitude": 32.8, "longitude": -96.8}},
        "demands": {"vG": [{"inventory_provider": "aai", "inventory_type": "cloud"}]},
        "constraints": {"near": {"type": "distance_to_location", "demands": ["vG"],
            "properties": {"distance": "< 500 km", "location": "customer"}}},
        "optimization": {"minimize": {"sum": [{"distance_between": ["customer", "vG"]}]}},
    });
    let (s, v, _) = call(
        &f.app,
        Method::POST,
        "/v1/plans",
        Some(json!({"name": "near", "id": "near", "template": template})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    for _ in 0..500 {
        let p = f.plans.get("near").await.unwrap().unwrap();
        if p.status.is_final() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let (s, v, _) = call(&f.app, Method::GET, "/ui/api/plans", None).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        v[0]["outcome"]["map"],
        json!({
            "locations": [{"name": "customer", "latitude": 32.8, "longitude": -96.8}],
            "candidates": [
                {"id": "dfw", "demand": "vG", "latitude": 32.9, "longitude": -97.0, "chosen": true, "removed": null},
                {"id": "nyc", "demand": "vG", "latitude": 40.7, "longitude": -74.0, "chosen": false, "removed": "near"},
            ],
        })
    );
}

#[tokio::test]
async fn the_event_stream_says_ready_then_each_calendar_change() {
    let f = fixture(false).await;
    let resp = f
        .app
        .clone()
        .oneshot(
            Request::builder()
                .uri("/ui/api/events")
                .header("authorization", "Bearer ro")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let mut body = resp.into_body().into_data_stream();
    let mut next = async || {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), body.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        String::from_utf8(chunk.to_vec()).unwrap()
    };
    assert_eq!(next().await, "event: ready\ndata: {\"seq\":0}\n\n");
    f.res
        .command(
            Command::IncreaseCapacity(CapacityChange {
                pool: PoolKey::new("edge", "os"),
                start: t0(),
                end: None,
                amounts: Amounts::new().with("vcpu", 4),
            }),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        next().await,
        "event: calendar\ndata: {\"kind\":\"calendar\",\"seq\":1}\n\n"
    );
}

#[tokio::test]
async fn the_event_stream_ends_when_the_daemon_stops() {
    let f = fixture(false).await;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let state = AppState::new(Arc::clone(&f.res), Arc::clone(&f.plans), None).with_stop(stopped);
    let app = router(
        state,
        ApiConfig {
            auth: AuthConfig::disabled(),
            ..ApiConfig::default()
        },
    );
    let resp = app
        .oneshot(
            Request::builder()
                .uri("/ui/api/events")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    stop.send(true).unwrap();
    let all = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        axum::body::to_bytes(resp.into_body(), 1 << 20),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(String::from_utf8_lossy(&all).starts_with("event: ready\n"));
}

#[tokio::test]
async fn place_puts_a_heat_template_on_the_racks_without_storing_anything() {
    let f = fixture(true).await;
    let (s, v, _) = call(&f.app, Method::GET, "/ui/api/place", None).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["levels"], json!(["room", "rack", "PM"]));
    assert_eq!(v["leaves"], 12);
    // Read-only credentials may preview a placement: nothing is written.
    let (s, v, _) = call_with(
        &f.app,
        Method::POST,
        "/ui/api/place",
        Some(json!({"template": HEAT, "time_limit_ms": 200})),
        Some("Bearer ro"),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["status"], "placed");
    assert_eq!(v["placement"]["placements"].as_object().unwrap().len(), 12);
    assert!(v["svg"].as_str().unwrap().starts_with("<svg"));
    assert!(v["svg"].as_str().unwrap().contains("rack1-pm1"));
    assert_eq!(f.res.seq().await, 0);

    let broken = "heat_template_version: 2013-05-23\nresources:\n  a: {type: OS::Nova::Server, properties: {image: x}}\n";
    let (s, v, _) = call(
        &f.app,
        Method::POST,
        "/ui/api/place",
        Some(json!({"template": broken})),
    )
    .await;
    assert_eq!(s, 400, "{v}");
    let d = &v["diagnostics"][0];
    assert_eq!(
        (&d["path"], &d["line"]),
        (&json!("template.resources.a.properties"), &json!(3)),
        "{v}"
    );
    for (body, path) in [
        (json!({"template": HEAT, "objective": "fast"}), "objective"),
        (
            json!({"template": HEAT, "time_limit_ms": 60_000}),
            "time_limit_ms",
        ),
        (json!({"template": HEAT, "extra": 1}), ""),
    ] {
        let (s, v, _) = call(&f.app, Method::POST, "/ui/api/place", Some(body)).await;
        assert_eq!(s, 400, "{v}");
        if !path.is_empty() {
            assert_eq!(v["diagnostics"][0]["path"], path, "{v}");
        }
    }
    let none = fixture(false).await;
    let (s, v, _) = call(&none.app, Method::GET, "/ui/api/place", None).await;
    assert_eq!(s, 404, "{v}");
}

#[tokio::test]
async fn the_event_stream_outlives_the_request_timeout() {
    let f = fixture(false).await;
    let app = router(
        AppState::new(Arc::clone(&f.res), Arc::clone(&f.plans), None),
        ApiConfig {
            auth: AuthConfig::disabled(),
            request_timeout: std::time::Duration::from_millis(100),
            max_in_flight: 1,
            ..ApiConfig::default()
        },
    );
    let resp = app
        .clone()
        .oneshot(
            Request::builder()
                .uri("/ui/api/events")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let mut body = resp.into_body().into_data_stream();
    body.next().await.unwrap().unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    // The open stream holds no in-flight slot: another request is served, not shed.
    let (s, _, _) = call_with(&app, Method::GET, "/ui/api/plans", None, None).await;
    assert_eq!(s, 200);
    f.res
        .command(
            Command::IncreaseCapacity(CapacityChange {
                pool: PoolKey::new("edge", "os"),
                start: t0(),
                end: None,
                amounts: Amounts::new().with("vcpu", 4),
            }),
            None,
        )
        .await
        .unwrap();
    let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), body.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&chunk).starts_with("event: calendar\n"),
        "{chunk:?}"
    );
}

#[tokio::test]
async fn browsers_may_not_post_from_another_site_with_cached_credentials() {
    let f = fixture(true).await;
    let basic = "Basic YWRtaW46cHc="; // admin:pw
    let post = async |headers: &[(&str, &str)]| {
        let mut req = Request::builder()
            .method(Method::POST)
            .uri("/increase-capacity")
            .header("host", "127.0.0.1:8091")
            .header("authorization", basic)
            .header("content-type", "text/plain");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let body = json!({"zone": "edge", "capacity": {"cores": "4"}}).to_string();
        let resp = f
            .app
            .clone()
            .oneshot(req.body(Body::from(body)).unwrap())
            .await
            .unwrap();
        let status = resp.status().as_u16();
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, String::from_utf8_lossy(&bytes).into_owned())
    };
    for headers in [
        &[("sec-fetch-site", "cross-site")][..],
        &[("sec-fetch-site", "same-site")],
        &[("origin", "http://evil.example")],
        &[("origin", "null")],
        &[("origin", "http://127.0.0.1:9999")],
        &[
            ("sec-fetch-site", "cross-site"),
            ("origin", "http://127.0.0.1:8091"),
        ],
    ] {
        let (s, body) = post(headers).await;
        assert_eq!(s, 403, "{headers:?}: {body}");
        assert!(
            body.contains("refused a cross-site browser request"),
            "{body}"
        );
    }
    assert_eq!(f.res.seq().await, 0, "nothing was written");
    // The console itself (also behind a proxy that rewrites `Host`: the browser's
    // `Sec-Fetch-Site` decides), and clients that are not browsers, write as before.
    for headers in [
        &[
            ("sec-fetch-site", "same-origin"),
            ("origin", "http://127.0.0.1:8091"),
        ][..],
        &[
            ("sec-fetch-site", "same-origin"),
            ("origin", "https://berth.example"),
        ],
        &[("origin", "http://127.0.0.1:8091")],
        &[],
    ] {
        let (s, body) = post(headers).await;
        assert_eq!(s, 200, "{headers:?}: {body}");
    }
    assert_eq!(f.res.seq().await, 4);
}

#[tokio::test]
async fn a_reader_that_falls_behind_is_told_to_refetch() {
    let f = fixture(false).await;
    let resp = f
        .app
        .clone()
        .oneshot(
            Request::builder()
                .uri("/ui/api/events")
                .header("authorization", "Bearer tok")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let mut body = resp.into_body().into_data_stream();
    body.next().await.unwrap().unwrap();
    // More notices than the broadcast keeps, while nobody reads.
    let n = CHANGES_KEPT + 10;
    for _ in 0..n {
        f.res
            .command(
                Command::IncreaseCapacity(CapacityChange {
                    pool: PoolKey::new("edge", "os"),
                    start: t0(),
                    end: None,
                    amounts: Amounts::new().with("vcpu", 1),
                }),
                None,
            )
            .await
            .unwrap();
    }
    let chunk = body.next().await.unwrap().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&chunk),
        "event: lagged\ndata: {\"missed\":10}\n\n"
    );
    let chunk = body.next().await.unwrap().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&chunk),
        "event: calendar\ndata: {\"kind\":\"calendar\",\"seq\":11}\n\n"
    );
}

/// How many notices `berth_service` keeps for a slow reader.
const CHANGES_KEPT: usize = 256;

/// A GET of `path` as a browser sends it (`Accept: text/html`): status, content type, body and
/// the `WWW-Authenticate` header.
async fn browse(app: &Router, path: &str, auth: Option<&str>) -> (u16, String, String, String) {
    let mut req = Request::builder()
        .uri(path)
        .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8");
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    let resp = app
        .clone()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let header = |n: &str| {
        resp.headers()
            .get(n)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    let (status, ctype, challenge) = (
        resp.status().as_u16(),
        header("content-type"),
        header("www-authenticate"),
    );
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    (
        status,
        ctype,
        String::from_utf8_lossy(&bytes).into_owned(),
        challenge,
    )
}

#[tokio::test]
async fn a_browser_without_accepted_credentials_gets_a_page_and_can_sign_out() {
    let f = fixture(false).await;
    let html = "text/html; charset=utf-8";
    let realm = "Basic realm=\"berth\"";
    // No credentials: a sign-in page with the challenge, so the browser asks.
    let (s, ctype, body, challenge) = browse(&f.app, "/ui/", None).await;
    assert_eq!((s, ctype.as_str(), challenge.as_str()), (401, html, realm));
    assert!(body.contains("<title>Berth: sign in</title>"), "{body}");
    // Wrong ones: said so, not a blank page.
    let (s, ctype, body, _) = browse(&f.app, "/ui/", Some("Basic d3Jvbmc6d3Jvbmc=")).await;
    assert_eq!((s, ctype.as_str()), (401, html));
    assert!(
        body.contains("<title>Berth: wrong credentials</title>"),
        "{body}"
    );
    assert!(body.contains("was not accepted"), "{body}");
    // The console's JSON routes keep their problem+json answer for scripts.
    let (s, ctype, _, _) = browse(&f.app, "/ui/api/calendar", None).await;
    assert_eq!((s, ctype.as_str()), (401, "application/problem+json"));
    // Signing out answers 401 for the realm even with good credentials: the browser drops them.
    for auth in [Some("Basic YWRtaW46cHc="), None] {
        let (s, ctype, body, challenge) = browse(&f.app, "/ui/logout", auth).await;
        assert_eq!((s, ctype.as_str(), challenge.as_str()), (401, html, realm));
        assert!(body.contains("You are signed out"), "{body}");
    }
    // The console links to it.
    let (_, _, page, _) = browse(&f.app, "/ui/", Some("Basic YWRtaW46cHc=")).await;
    assert!(page.contains("href=\"/ui/logout\""), "{page}");
}
