//! The admin inventory routes in process: admin credentials only, a reload answers the diff,
//! an invalid file is a located 400 that changes nothing, the status shows the last reconcile.

use std::sync::Arc;

use axum::Router;
use axum::http::Method;
use berth_service::{
    FileSource, InventoryReconciler, ManualClock, Notifier, PlanConfig, PlanService,
    ReservationOptions, ReservationService,
};

use crate::tests::call_with;
use crate::{ApiConfig, AppState, AuthConfig, router};

fn inventory(list: &[(&str, u64)]) -> String {
    let mut s = String::from("candidates:\n");
    for (id, vcpus) in list {
        s.push_str(&format!(
            "  - candidate_id: {id}\n    inventory_type: cloud\n    latitude: 1\n    longitude: 1\n    capacity: {{vcpus: {vcpus}}}\n"
        ));
    }
    s
}

async fn fixture(path: &std::path::Path) -> (Router, Arc<ReservationService>) {
    let clock = Arc::new(ManualClock::new(chrono::Utc::now()));
    let store = berth_store::open("sqlite::memory:").await.unwrap();
    let res = ReservationService::open(
        Arc::clone(&store),
        ReservationOptions::default(),
        clock.clone(),
        Notifier::disabled(),
    )
    .await
    .unwrap();
    let rec = InventoryReconciler::start(Arc::clone(&res), Arc::new(FileSource::file(path)), true)
        .await
        .unwrap();
    let plans = PlanService::start(
        store,
        rec.shared(),
        Arc::clone(&res),
        clock,
        PlanConfig::default(),
    )
    .await
    .unwrap();
    let auth = AuthConfig {
        tokens: vec!["tok".into()],
        read_only_tokens: vec!["ro".into()],
        admin_tokens: vec!["root".into()],
        admin_basic: vec![("boss".into(), "pw".into())],
        ..AuthConfig::default()
    };
    let app = router(
        AppState::new(Arc::clone(&res), plans, None).with_inventory(rec),
        ApiConfig {
            auth,
            ..ApiConfig::default()
        },
    );
    (app, res)
}

const ROOT: Option<&str> = Some("Bearer root");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_admins_reload_and_the_answer_is_the_diff() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inv.yaml");
    std::fs::write(&path, inventory(&[("a", 8), ("b", 4)])).unwrap();
    let (app, _) = fixture(&path).await;

    for auth in [Some("Bearer tok"), Some("Bearer ro")] {
        let (s, v, ctype) =
            call_with(&app, Method::POST, "/admin/inventory/reload", None, auth).await;
        assert_eq!(s, 403, "{v}");
        assert_eq!(ctype, "application/problem+json");
        assert!(
            v["detail"]
                .as_str()
                .unwrap()
                .starts_with("these credentials may not call the admin routes"),
            "{v}"
        );
    }
    let (s, _, _) = call_with(&app, Method::GET, "/admin/inventory", None, None).await;
    assert_eq!(s, 401);

    std::fs::write(&path, inventory(&[("a", 16), ("c", 2)])).unwrap();
    // boss:pw
    let (s, v, _) = call_with(
        &app,
        Method::POST,
        "/admin/inventory/reload",
        None,
        Some("Basic Ym9zczpwdw=="),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["trigger"], "request");
    assert_eq!(v["candidates"], 2);
    let d = &v["diff"];
    assert_eq!(d["added"][0]["pool-id"], "c/inventory");
    assert_eq!(d["added"][0]["capacity"]["vcpu"], 2);
    assert_eq!(d["changed"][0]["pool-id"], "a/inventory");
    assert_eq!(d["changed"][0]["dimensions"]["vcpu"]["before"], 8);
    assert_eq!(d["changed"][0]["dimensions"]["vcpu"]["after"], 16);
    assert_eq!(d["removed"][0]["pool-id"], "b/inventory");
    assert_eq!(d["unchanged"], 0);

    // The same file again: nothing to do.
    let (s, v, _) = call_with(&app, Method::POST, "/admin/inventory/reload", None, ROOT).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["diff"]["unchanged"], 2);
    assert_eq!(v["diff"]["added"].as_array().unwrap().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_file_is_a_located_400_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inv.yaml");
    std::fs::write(&path, inventory(&[("a", 8)])).unwrap();
    let (app, res) = fixture(&path).await;
    let pools = |res: Arc<ReservationService>| async move {
        res.read(|c| {
            c.declared_pools(None)
                .into_iter()
                .map(|d| {
                    (
                        d.pool.to_string(),
                        d.capacity.get("vcpu"),
                        d.retired.is_some(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap()
    };
    let before = pools(Arc::clone(&res)).await;

    std::fs::write(&path, inventory(&[("b", 4)]).replace("cloud", "clowd")).unwrap();
    let (s, v, ctype) = call_with(&app, Method::POST, "/admin/inventory/reload", None, ROOT).await;
    assert_eq!(
        (s, ctype.as_str()),
        (400, "application/problem+json"),
        "{v}"
    );
    let detail = v["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("{}:3:21", path.display())),
        "{detail}"
    );
    assert_eq!(v["diagnostics"][0]["line"], 3, "{v}");
    assert_eq!(v["diagnostics"][0]["column"], 21, "{v}");
    assert_eq!(pools(Arc::clone(&res)).await, before);

    let (s, v, _) = call_with(&app, Method::GET, "/admin/inventory", None, ROOT).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["last"]["trigger"], "start");
    assert_eq!(v["failed"]["trigger"], "request");
    assert_eq!(v["failed"]["diagnostics"][0]["line"], 3);
    assert_eq!(v["drift"]["added"].as_array().unwrap().len(), 0, "{v}");
}
