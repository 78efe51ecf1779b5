//! The plan queue across daemons on one PostgreSQL database: plans accepted through any of
//! three daemons are each solved exactly once (one recorded outcome, one `plan finished` log
//! line, a `solved_by` naming one daemon), and a plan whose daemon is killed with SIGKILL in
//! the middle of solving it is finished by another daemon once the claim runs out.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Daemon, TEMPLATE, client, free_port, get, logs, post, start_env, wait_plan};
use crate::db::Db;

/// Sixty candidates spread over the continent: enough for a search that runs to its timeout.
fn inventory() -> String {
    let mut s = String::from("candidates:\n");
    let mut x: u64 = 7;
    let mut next = |span: f64| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 11) as f64 / (1u64 << 53) as f64 * span
    };
    for i in 0..60 {
        let (lat, lon) = (25.0 + next(23.0), -120.0 + next(50.0));
        s.push_str(&format!(
            "  - {{candidate_id: c{i}, inventory_type: cloud, latitude: {lat:.3}, longitude: {lon:.3}, cost: {}, capacity: {{vcpu: 64}}}}\n",
            1 + i % 17
        ));
    }
    s
}

/// Sixteen demands pulled apart pairwise: the solver is still improving when `timeout` ends it.
fn slow_template() -> Value {
    const D: usize = 16;
    let demands: serde_json::Map<String, Value> = (0..D)
        .map(|i| {
            (
                format!("d{i}"),
                json!([{"inventory_provider": "aai", "inventory_type": "cloud"}]),
            )
        })
        .collect();
    let pairs: Vec<Value> = (0..D)
        .flat_map(|i| {
            (i + 1..D).map(move |j| json!({"distance_between": [format!("d{i}"), format!("d{j}")]}))
        })
        .collect();
    json!({
        "homing_template_version": "2017-10-10",
        "demands": demands,
        "optimization": {"maximize": {"sum": pairs}},
    })
}

fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("inventory.yaml"), inventory()).unwrap();
    dir
}

/// Daemon `node` with the plan queue settings of these tests.
fn daemon(dir: &std::path::Path, db: &Db, node: &str, claim_secs: &str) -> (Daemon, u16) {
    let port = free_port();
    let d = start_env(
        dir,
        port,
        db,
        &[
            ("BERTH_PLAN_NODE", node),
            ("BERTH_PLAN_CLAIM_SECS", claim_secs),
            ("BERTH_LOG", "info"),
        ],
    );
    (d, port)
}

/// The plan's stored outcome: its version (1 created + 1 per recorded outcome) and solver.
fn stored(db: &Db, id: &str) -> (u64, String) {
    let id = id.to_owned();
    db.block_on(|s| async move {
        let p = s.get_plan(&id).await.unwrap().unwrap();
        let by = p.result.unwrap_or_default()["solved_by"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (p.version, by)
    })
}

fn queue_len(db: &Db) -> usize {
    db.block_on(|s| async move { s.queued_plans().await.unwrap().len() })
}

/// Owner of the claim on plan `id`, if it is claimed.
fn claimed_by(db: &Db, id: &str) -> Option<String> {
    let id = id.to_owned();
    db.block_on(|s| async move {
        s.queued_plans()
            .await
            .unwrap()
            .into_iter()
            .find(|q| q.plan_id == id)
            .and_then(|q| q.claim.map(|c| c.owner))
    })
}

fn plans_solved_once_by_one_of_three_daemons(dir: &std::path::Path, db: &Db) {
    let c = client();
    let mut ds: Vec<Daemon> = ["d0", "d1", "d2"]
        .iter()
        .map(|n| daemon(dir, db, n, "30").0)
        .collect();
    let mut ids = Vec::new();
    for i in 0..36 {
        let d = &ds[i % ds.len()];
        let (s, v) = post(
            &c,
            d,
            "/v1/plans",
            json!({"name": format!("q{i}"), "template": TEMPLATE, "timeout": 30}),
        );
        assert_eq!(s, 201, "{v}");
        ids.push(v["id"].as_str().unwrap().to_owned());
    }
    let mut by = std::collections::BTreeMap::<String, usize>::new();
    for (i, id) in ids.iter().enumerate() {
        // Read through another daemon than the one that accepted it.
        let p = wait_plan(&c, &ds[(i + 1) % ds.len()], id);
        assert_eq!(p["status"], "done", "{p}");
        let (version, solver) = stored(db, id);
        assert_eq!(version, 2, "plan {id} was recorded more than once");
        *by.entry(solver).or_default() += 1;
    }
    assert_eq!(by.values().sum::<usize>(), ids.len());
    assert!(
        by.keys().all(|n| ["d0", "d1", "d2"].contains(&n.as_str())),
        "{by:?}"
    );
    assert!(by.len() >= 2, "one daemon solved everything: {by:?}");
    assert_eq!(queue_len(db), 0);
    for d in &mut ds {
        let _ = d.child.kill();
        let _ = d.child.wait();
    }
    // Each plan was solved by one worker: one `plan finished` line among all daemons' logs.
    let text = logs(dir);
    for id in &ids {
        let n = text
            .lines()
            .filter(|l| l.contains("plan finished") && l.contains(id.as_str()))
            .count();
        assert_eq!(n, 1, "plan {id} finished {n} times");
    }
}

fn a_plan_of_a_killed_daemon_is_finished_by_another(dir: &std::path::Path, db: &Db) {
    let c = client();
    let (mut victim, _) = daemon(dir, db, "victim", "2");
    let (s, v) = post(
        &c,
        &victim,
        "/v1/plans",
        json!({"name": "slow", "template": slow_template(), "timeout": 6, "num_solution": 1}),
    );
    assert_eq!(s, 201, "{v}");
    let id = v["id"].as_str().unwrap().to_owned();
    let t = Instant::now();
    while claimed_by(db, &id).as_deref() != Some("victim") {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the victim never claimed the plan"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (mut survivor, _) = daemon(dir, db, "survivor", "2");
    // The victim is in the middle of the solve (its claim renewed past the 2 s it lasts).
    std::thread::sleep(Duration::from_millis(2500));
    let (s, v) = get(&c, &victim, &format!("/v1/plans/{id}"));
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["plans"][0]["status"], "solving", "{v}");
    assert_eq!(claimed_by(db, &id).as_deref(), Some("victim"));
    victim.child.kill().unwrap();
    victim.child.wait().unwrap();
    let p = wait_plan(&c, &survivor, &id);
    assert_eq!(p["status"], "done", "{p}");
    assert_eq!(stored(db, &id), (2, "survivor".to_owned()));
    assert_eq!(queue_len(db), 0);
    let _ = survivor.child.kill();
    let _ = survivor.child.wait();
    let text = logs(dir);
    assert!(
        text.contains("taking over a plan whose claim ran out"),
        "no takeover logged"
    );
}

#[test]
fn plans_through_three_daemons_are_each_solved_once_on_postgres() {
    let dir = site();
    let db = Db::postgres("planqueue_once");
    plans_solved_once_by_one_of_three_daemons(dir.path(), &db);
    db.drop_schema();
}

#[test]
fn a_plan_whose_daemon_is_killed_mid_solve_is_finished_by_another_on_postgres() {
    let dir = site();
    let db = Db::postgres("planqueue_kill");
    a_plan_of_a_killed_daemon_is_finished_by_another(dir.path(), &db);
    db.drop_schema();
}
