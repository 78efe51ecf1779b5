//! End-to-end: the real `berthd` binary on a loopback port with a temporary SQLite file (and,
//! when `BERTH_TEST_POSTGRES_URL` is set at build time, a fresh PostgreSQL schema), every route
//! over HTTP, a SIGKILL under load, a restart, and the durability and no-double-booking checks;
//! then a graceful SIGTERM. Two daemons sharing one database race for one pool; on PostgreSQL,
//! several daemons share the plan queue (`planqueue`). `tls` covers
//! the HTTPS listener and start-up errors of bad TLS/CA files.

#![allow(clippy::unwrap_used)]

/// One scenario on both stores: `$sqlite` on a temporary SQLite file and, when PostgreSQL is
/// configured, `$postgres` in a fresh schema `$schema` (dropped afterwards). The body sees the
/// site directory as `$dir: &Path` and the store as `$db: &Db`.
macro_rules! on_both_stores {
    ($sqlite:ident, $postgres:ident, $schema:literal, |$dir:ident, $db:ident| $body:expr) => {
        #[test]
        fn $sqlite() {
            let tmp = site();
            let store = Db::sqlite(tmp.path());
            let ($dir, $db) = (tmp.path(), &store);
            $body;
        }

        #[cfg(berth_test_postgres)]
        #[test]
        fn $postgres() {
            let tmp = site();
            let store = Db::postgres($schema);
            let ($dir, $db) = (tmp.path(), &store);
            $body;
            store.drop_schema();
        }
    };
}

mod compat_dims;
mod compat_events;
mod compat_fields;
mod compat_has;
mod compat_inventory;
mod compat_promise;
mod console;
mod db;
#[cfg(berth_test_mount)]
mod diskfull;
mod failover;
mod healthcheck;
mod hostile;
mod kills;
mod openstack;
mod overload;
mod partitions;
#[cfg(berth_test_postgres)]
mod planqueue;
mod races;
mod secrets;
mod seeding;
mod settings;
#[cfg(berth_test_postgres)]
mod settle;
mod tls;

/// ONAP network-slicing flows (nsi, nssi, nst, generated slice profiles).
mod compat_slicing;

use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use db::Db;

use reqwest::blocking::Client;
use serde_json::{Value, json};

const TOKEN: &str = "e2e-token";

const INVENTORY: &str = "
candidates:
  - {candidate_id: dfw, inventory_type: cloud, latitude: 32.9, longitude: -97.0, cost: 10, cloud_owner: att, location_id: dfw, capacity: {vcpu: 64}}
  - {candidate_id: nyc, inventory_type: cloud, latitude: 40.7, longitude: -74.0, cost: 5, capacity: {vcpu: 64}}
";

const TEMPLATE: &str = "homing_template_version: 2017-10-10\nlocations: {customer: {latitude: 32.8, longitude: -96.8}}\ndemands: {vG: [{inventory_provider: aai, inventory_type: cloud}]}\noptimization: {minimize: {sum: [{distance_between: [customer, vG]}]}}\n";

struct Daemon {
    child: Child,
    base: String,
}

/// A test that ends, however it ends, leaves no daemon running (`kill` on an exited one is a
/// no-op).
impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

fn start(dir: &std::path::Path, port: u16, db: &Db) -> Daemon {
    start_env(dir, port, db, &[])
}

/// [`start`] with more (or overriding) environment variables.
fn start_env(dir: &std::path::Path, port: u16, db: &Db, env: &[(&str, &str)]) -> Daemon {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_berthd"));
    cmd.env("BERTH_LISTEN", format!("127.0.0.1:{port}"))
        .env("BERTH_INVENTORY", dir.join("inventory.yaml"))
        .env("BERTH_TOKENS", TOKEN)
        .env("BERTH_LOG", "warn")
        // The tests' webhook receivers listen on loopback.
        .env("BERTH_NOTIFY_ALLOW_PRIVATE", "true")
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(daemon_log(dir, port));
    db.configure(&mut cmd);
    let d = Daemon {
        child: cmd.spawn().unwrap(),
        base: format!("http://127.0.0.1:{port}"),
    };
    wait_ready(d, &client())
}

/// The daemon's log, `berthd-<port>.log` in the test's directory (kept when a test fails).
fn daemon_log(dir: &std::path::Path, port: u16) -> Stdio {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(format!("berthd-{port}.log")))
        .map_or_else(|_| Stdio::null(), Stdio::from)
}

/// Every daemon log in `dir`, for a failure message.
fn logs(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("berthd-") && name.ends_with(".log") {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            out.push_str(&format!("--- {name}\n{text}"));
        }
    }
    out
}

/// Waits until `d` answers `/readyz` (30 s at most).
fn wait_ready(d: Daemon, c: &Client) -> Daemon {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(30) {
        if c.get(format!("{}/readyz", d.base))
            .send()
            .is_ok_and(|r| r.status().is_success())
        {
            return d;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("berthd did not become ready");
}

fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

fn post(c: &Client, d: &Daemon, path: &str, body: Value) -> (u16, Value) {
    let r = c
        .post(format!("{}{path}", d.base))
        .bearer_auth(TOKEN)
        .json(&body)
        .send()
        .unwrap();
    let s = r.status().as_u16();
    (s, r.json().unwrap_or(Value::Null))
}

fn get(c: &Client, d: &Daemon, path: &str) -> (u16, Value) {
    let r = c
        .get(format!("{}{path}", d.base))
        .bearer_auth(TOKEN)
        .send()
        .unwrap();
    let s = r.status().as_u16();
    (s, r.json().unwrap_or(Value::Null))
}

fn del(c: &Client, d: &Daemon, path: &str) -> u16 {
    c.delete(format!("{}{path}", d.base))
        .bearer_auth(TOKEN)
        .send()
        .unwrap()
        .status()
        .as_u16()
}

/// The `units` of `zone` and its pools in a `/query-capacity` answer.
fn zone_units(answer: &Value, zone: &str) -> u64 {
    answer["capacity"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(p, _)| p.starts_with(&format!("{zone}/")) || p.as_str() == zone)
                .filter_map(|(_, l)| l["units"].as_u64())
                .sum()
        })
        .unwrap_or(0)
}

fn end() -> String {
    (chrono::Utc::now() + chrono::TimeDelta::days(2)).to_rfc3339()
}

fn wait_plan(c: &Client, d: &Daemon, id: &str) -> Value {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(60) {
        let (s, v) = get(c, d, &format!("/v1/plans/{id}"));
        assert_eq!(s, 200, "plan {id} lost: {v}");
        let p = v["plans"][0].clone();
        if ["done", "not found", "error"].contains(&p["status"].as_str().unwrap_or_default()) {
            return p;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("plan {id} never finished");
}

fn every_route(c: &Client, d: &Daemon) {
    assert_eq!(
        c.get(format!("{}/v1/plans", d.base))
            .send()
            .unwrap()
            .status()
            .as_u16(),
        401
    );
    assert_eq!(get(c, d, "/").1["versions"][0]["id"], "v1");
    assert_eq!(get(c, d, "/healthz").0, 200);
    assert_eq!(get(c, d, "/openapi.json").1["openapi"], "3.1.0");
    let (s, v) = post(
        c,
        d,
        "/add-provider",
        json!({"provider-type": "openstack", "endpoint": "http://10.0.2.15:5000/v2.0/tokens", "username": "u", "password": "p", "tenant": {"name": "promise"}}),
    );
    assert_eq!((s, v["result"].as_str()), (200, Some("ok")));
    let os = v["provider-id"].as_str().unwrap().to_owned();
    let (s, v) = post(
        c,
        d,
        "/increase-capacity",
        json!({"zone": "e2e", "source": format!("ResourceProvider:{os}"), "capacity": {"cores": "20", "ram": "51200", "instances": "10", "addresses": "10"}}),
    );
    assert_eq!(
        (s, v["pool-id"].as_str()),
        (200, Some(format!("e2e/{os}").as_str())),
        "{v}"
    );
    let (s, v) = post(
        c,
        d,
        "/create-reservation",
        json!({"zone": "e2e", "capacity": {"cores": "5", "ram": "25600", "addresses": "3", "instances": "3"}, "end": end()}),
    );
    assert_eq!(s, 200, "{v}");
    let rid = v["reservation-id"].as_str().unwrap().to_owned();
    let (s, _) = post(
        c,
        d,
        "/update-reservation",
        json!({"reservation-id": rid, "capacity": {"cores": "1", "ram": "5120", "addresses": "1", "instances": "1"}}),
    );
    assert_eq!(s, 200);
    let (s, v) = post(c, d, "/query-reservation", json!({"zone": "e2e"}));
    assert_eq!((s, v["reservations"].clone()), (200, json!([rid])));
    let (s, v) = post(
        c,
        d,
        "/create-instance",
        json!({"reservation-id": rid, "name": "vm1", "capacity": {"instances": 1, "cores": 1}}),
    );
    assert_eq!(s, 200, "{v}");
    let iid = v["instance-id"].as_str().unwrap().to_owned();
    assert_eq!(
        post(c, d, "/destroy-instance", json!({"instance-id": iid})).0,
        200
    );
    assert_eq!(
        post(c, d, "/cancel-reservation", json!({"reservation-id": rid})).0,
        200
    );
    assert_eq!(
        post(
            c,
            d,
            "/decrease-capacity",
            json!({"source": format!("ResourcePool:e2e/{os}"), "capacity": {"cores": "3"}})
        )
        .0,
        200
    );
    let (s, v) = post(
        c,
        d,
        "/query-capacity",
        json!({"zone": "e2e", "capacity": "total"}),
    );
    assert_eq!(
        (s, v["capacity"][format!("e2e/{os}")]["cores"].as_i64()),
        (200, Some(17)),
        "{v}"
    );
    let (s, v) = post(
        c,
        d,
        "/capacity/compute/subscribe",
        json!({"zone": "e2e", "threshold": "2", "callback": "http://127.0.0.1:9/cb"}),
    );
    assert_eq!(s, 201);
    assert_eq!(
        del(
            c,
            d,
            &format!(
                "/capacity/compute/subscribe/{}",
                v["subscription-id"].as_str().unwrap()
            )
        ),
        200
    );
    let (s, v) = post(
        c,
        d,
        "/reservation/subscribe",
        json!({"filters": {"zone": "e2e"}, "callback": "http://127.0.0.1:9/cb"}),
    );
    assert_eq!(s, 201);
    assert_eq!(
        del(
            c,
            d,
            &format!(
                "/reservation/subscribe/{}",
                v["subscription-id"].as_str().unwrap()
            )
        ),
        200
    );
    let (s, v) = post(
        c,
        d,
        "/v1/plans",
        json!({"name": "e2e", "template": TEMPLATE, "num_solution": "1", "timeout": 30}),
    );
    assert_eq!(s, 201, "{v}");
    let pid = v["id"].as_str().unwrap().to_owned();
    let p = wait_plan(c, d, &pid);
    assert_eq!(
        p["recommendations"][0]["vG"]["candidate"]["candidate_id"],
        "dfw"
    );
    assert_eq!(get(c, d, &format!("/v1/triage_tool/{pid}")).0, 200);
    assert!(
        get(c, d, "/v1/plans").1["plans"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
    );
    assert_eq!(del(c, d, &format!("/v1/plans/{pid}")), 204);
    assert_eq!(get(c, d, &format!("/v1/plans/{pid}")).0, 404);
    let metrics = c
        .get(format!("{}/metrics", d.base))
        .bearer_auth(TOKEN)
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(
        metrics.contains("berth_plan_duration_seconds_bucket"),
        "{metrics}"
    );
    assert!(metrics.contains("berth_plans{status=\"done\"}"));
}

#[test]
fn end_to_end_survives_sigkill_on_sqlite() {
    let dir = site();
    end_to_end_survives_sigkill(dir.path(), &Db::sqlite(dir.path()));
}

#[cfg(berth_test_postgres)]
#[test]
fn end_to_end_survives_sigkill_on_postgres() {
    let dir = site();
    let db = Db::postgres("e2e_sigkill");
    end_to_end_survives_sigkill(dir.path(), &db);
    db.drop_schema();
}

#[test]
fn two_daemons_share_one_pool_on_sqlite() {
    let dir = site();
    two_daemons_share_one_pool(dir.path(), &Db::sqlite(dir.path()));
}

#[cfg(berth_test_postgres)]
#[test]
fn two_daemons_share_one_pool_on_postgres() {
    let dir = site();
    let db = Db::postgres("e2e_two_daemons");
    two_daemons_share_one_pool(dir.path(), &db);
    db.drop_schema();
}

/// A temporary directory holding the test inventory.
fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("inventory.yaml"), INVENTORY).unwrap();
    dir
}

fn end_to_end_survives_sigkill(dir: &std::path::Path, db: &Db) {
    let port = free_port();
    let mut d = start(dir, port, db);
    let c = client();
    every_route(&c, &d);

    // Load: reservations racing for 60 units, and plans, while the daemon is killed.
    assert_eq!(
        post(
            &c,
            &d,
            "/increase-capacity",
            json!({"zone": "load", "capacity": {"instances": 60}})
        )
        .0,
        200
    );
    let acked_res = Arc::new(Mutex::new(Vec::<String>::new()));
    let acked_plans = Arc::new(Mutex::new(Vec::<String>::new()));
    // Reservations start once a plan is acknowledged: a slow plan on a loaded machine must
    // not let the reservations use up the 60 units before the kill.
    let go = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut threads = Vec::new();
    for i in 0..12 {
        let (base, acked_res, acked_plans, go) = (
            d.base.clone(),
            Arc::clone(&acked_res),
            Arc::clone(&acked_plans),
            Arc::clone(&go),
        );
        threads.push(std::thread::spawn(move || {
            let c = Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .unwrap();
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(10) {
                if i % 3 != 0 && !go.load(std::sync::atomic::Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                }
                if i % 3 == 0 {
                    let body = json!({"name": "load", "template": TEMPLATE, "timeout": 30});
                    match c
                        .post(format!("{base}/v1/plans"))
                        .bearer_auth(TOKEN)
                        .json(&body)
                        .send()
                    {
                        Ok(r) if r.status().as_u16() == 201 => {
                            let v: Value = r.json().unwrap_or(Value::Null);
                            if let Some(id) = v["id"].as_str() {
                                acked_plans.lock().unwrap().push(id.to_owned());
                            }
                        }
                        Ok(_) => {}
                        Err(_) => return,
                    }
                } else {
                    let body =
                        json!({"zone": "load", "capacity": {"instances": "1"}, "end": end()});
                    match c
                        .post(format!("{base}/create-reservation"))
                        .bearer_auth(TOKEN)
                        .json(&body)
                        .send()
                    {
                        Ok(r) if r.status().as_u16() == 200 => {
                            let v: Value = r.json().unwrap_or(Value::Null);
                            if let Some(id) = v["reservation-id"].as_str() {
                                acked_res.lock().unwrap().push(id.to_owned());
                            }
                        }
                        Ok(_) => {}
                        Err(_) => return,
                    }
                }
            }
        }));
    }
    // Kill mid-load: after some reservations and a plan were acknowledged, before capacity
    // runs out.
    let t = Instant::now();
    while acked_plans.lock().unwrap().is_empty() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(2));
    }
    go.store(true, std::sync::atomic::Ordering::Release);
    while acked_res.lock().unwrap().len() < 20 && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(1));
    }
    d.child.kill().unwrap(); // SIGKILL
    let _ = d.child.wait();
    for t in threads {
        t.join().unwrap();
    }
    let acked_res: BTreeSet<String> = acked_res.lock().unwrap().iter().cloned().collect();
    let acked_plans: Vec<String> = acked_plans.lock().unwrap().clone();
    assert!(
        !acked_res.is_empty() && !acked_plans.is_empty(),
        "no load was acknowledged before the kill"
    );

    let mut d = start(dir, port, db);
    let (_, v) = post(&c, &d, "/query-reservation", json!({"zone": "load"}));
    let live: BTreeSet<String> = v["details"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["state"] != "cancelled")
        .filter_map(|r| r["reservation-id"].as_str().map(str::to_owned))
        .collect();
    assert!(
        acked_res.is_subset(&live),
        "lost reservations: {:?} in {v}",
        acked_res.difference(&live).collect::<Vec<_>>()
    );
    assert!(
        live.len() <= 60,
        "double booking: {} reservations of 1 unit in 60",
        live.len()
    );
    assert!(
        live.len() < 60,
        "the kill came after the load ran out; nothing was in flight"
    );
    let (_, v) = post(&c, &d, "/query-capacity", json!({"zone": "load"}));
    let levels = &v["capacity"]["load/default"]["instances"];
    assert!(
        levels["reserved"].as_i64() <= levels["total"].as_i64()
            && levels["available"].as_i64() >= Some(0),
        "{v}"
    );
    for id in &acked_plans {
        let p = wait_plan(&c, &d, id);
        assert_eq!(p["status"], "done", "{p}");
    }
    // Graceful stop on SIGTERM writes a calendar snapshot; the next start restores it.
    let before = post(
        &c,
        &d,
        "/query-reservation",
        json!({"show-utilization": false}),
    )
    .1;
    terminate(&mut d);
    let (snapshots, head) = db.block_on(|store| async move {
        let seqs = store.snapshot_seqs("calendar").await.unwrap();
        let head = store.head("calendar").await.unwrap();
        (seqs, head)
    });
    assert_eq!(
        snapshots.first(),
        Some(&head),
        "no snapshot at the head {head}"
    );
    let mut d = start(dir, port, db);
    assert_eq!(
        post(
            &c,
            &d,
            "/query-reservation",
            json!({"show-utilization": false})
        )
        .1,
        before
    );
    terminate(&mut d);
}

/// Graceful stop on SIGTERM (a process this test started, by its id).
fn terminate(d: &mut Daemon) {
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(d.child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let exit = d.child.wait().unwrap();
    assert!(exit.success(), "berthd exited with {exit}");
}

/// Live (not cancelled) reservation ids of `zone` as a daemon reports them.
fn live_in(c: &Client, d: &Daemon, zone: &str) -> BTreeSet<String> {
    let (s, v) = post(c, d, "/query-reservation", json!({"zone": zone}));
    assert_eq!(s, 200, "{v}");
    v["details"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["state"] != "cancelled")
        .filter_map(|r| r["reservation-id"].as_str().map(str::to_owned))
        .collect()
}

/// Two daemons on one database: racing clients on both for a pool of `CAP` units get at most
/// `CAP` (and exactly `CAP` once a sequential fill meets a conflict), and both daemons then
/// report the same reservations.
fn two_daemons_share_one_pool(dir: &std::path::Path, db: &Db) {
    const CAP: usize = 10;
    let c = client();
    let a = start(dir, free_port(), db);
    let b = start(dir, free_port(), db);
    let (s, v) = post(
        &c,
        &a,
        "/increase-capacity",
        json!({"zone": "shared", "capacity": {"instances": CAP}}),
    );
    assert_eq!(s, 200, "{v}");
    let granted = Arc::new(Mutex::new(Vec::<String>::new()));
    let by_daemon = Arc::new(Mutex::new([0usize; 2]));
    let bases = [a.base.clone(), b.base.clone()];
    let mut threads = Vec::new();
    for i in 0..8 {
        let (bases, granted, by_daemon) =
            (bases.clone(), Arc::clone(&granted), Arc::clone(&by_daemon));
        threads.push(std::thread::spawn(move || {
            let c = client();
            for k in 0..6 {
                let which = (i + k) % 2;
                let base = &bases[which];
                let body = json!({"zone": "shared", "capacity": {"instances": "1"}, "end": end()});
                let r = c
                    .post(format!("{base}/create-reservation"))
                    .bearer_auth(TOKEN)
                    .json(&body)
                    .send()
                    .unwrap();
                let status = r.status().as_u16();
                let v: Value = r.json().unwrap_or(Value::Null);
                match status {
                    200 => {
                        by_daemon.lock().unwrap()[which] += 1;
                        granted
                            .lock()
                            .unwrap()
                            .push(v["reservation-id"].as_str().unwrap().to_owned());
                    }
                    // Refused for capacity, or too much contention: nothing was booked.
                    409 | 503 => {}
                    _ => panic!("unexpected {status}: {v}"),
                }
            }
        }));
    }
    for t in threads {
        t.join().unwrap();
    }
    let mut granted = granted.lock().unwrap().clone();
    let by_daemon = *by_daemon.lock().unwrap();
    assert!(granted.len() <= CAP, "double booking: {granted:?}");
    assert!(
        by_daemon.iter().all(|n| *n > 0),
        "one daemon granted nothing in the race: {by_daemon:?}"
    );
    // Fill what is left through both daemons until the pool says no.
    let mut k = 0;
    loop {
        k += 1;
        assert!(k < 100, "the pool never filled: {granted:?}");
        let d = if k % 2 == 0 { &a } else { &b };
        let (s, v) = post(
            &c,
            d,
            "/create-reservation",
            json!({"zone": "shared", "capacity": {"instances": "1"}, "end": end()}),
        );
        match s {
            200 => granted.push(v["reservation-id"].as_str().unwrap().to_owned()),
            409 if v["result"] == "conflict" => break,
            503 => {}
            _ => panic!("unexpected {s}: {v}"),
        }
    }
    let ids: BTreeSet<String> = granted.iter().cloned().collect();
    assert_eq!(
        ids.len(),
        granted.len(),
        "one id granted twice: {granted:?}"
    );
    assert_eq!(ids.len(), CAP, "granted {granted:?} of {CAP}");
    assert_eq!(live_in(&c, &a, "shared"), ids);
    assert_eq!(live_in(&c, &b, "shared"), ids);
    for d in [&a, &b] {
        let (_, v) = post(&c, d, "/query-capacity", json!({"zone": "shared"}));
        let levels = &v["capacity"]["shared/default"]["instances"];
        assert_eq!(
            (levels["reserved"].as_u64(), levels["available"].as_u64()),
            (Some(CAP as u64), Some(0)),
            "{v}"
        );
    }
    let (mut a, mut b) = (a, b);
    terminate(&mut a);
    terminate(&mut b);
}
