//! The inventory is the source of truth (issue 45.2), through the real berthd: a restart with
//! `BERTH_INVENTORY` pointing at another file reconciles the calendar (new candidates get
//! pools, changed capacities go through the calendar with the reservations put at risk,
//! removed candidates are retired with their reservations listed), and so do
//! `POST /admin/inventory/reload` (admin credentials only) and SIGHUP; an invalid file is
//! refused with file:line:column and changes nothing. Every reconcile is logged.

use std::process::Command;
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use serde_json::{Value, json};

use super::{Daemon, client, end, logs, post, site, start_env, terminate};
use crate::db::Db;

const ADMIN: &str = "e2e-admin";

fn inventory(list: &[(&str, u64)]) -> String {
    let mut s = String::from("candidates:\n");
    for (id, vcpus) in list {
        s.push_str(&format!(
            "  - candidate_id: {id}\n    inventory_type: cloud\n    latitude: 1\n    longitude: 1\n    capacity: {{vcpus: {vcpus}}}\n"
        ));
    }
    s
}

fn admin(c: &Client, d: &Daemon, method: reqwest::Method, path: &str, token: &str) -> (u16, Value) {
    let r = c
        .request(method, format!("{}{path}", d.base))
        .bearer_auth(token)
        .send()
        .unwrap();
    let s = r.status().as_u16();
    (s, r.json().unwrap_or(Value::Null))
}

/// Pool id -> total vCPUs (`cores`) as `/query-capacity` reports them now.
fn totals(c: &Client, d: &Daemon) -> Vec<(String, u64)> {
    let (s, v) = post(c, d, "/query-capacity", json!({"show-utilization": false}));
    assert_eq!(s, 200, "{v}");
    let mut out: Vec<(String, u64)> = v["capacity"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(p, _)| p.ends_with("/inventory"))
        .map(|(p, l)| (p.clone(), l["cores"]["total"].as_u64().unwrap_or(0)))
        .collect();
    out.sort();
    out
}

fn reserve(c: &Client, d: &Daemon, zone: &str, cores: u64) -> String {
    let (s, v) = post(
        c,
        d,
        "/create-reservation",
        json!({"zone": zone, "capacity": {"cores": cores}, "end": end()}),
    );
    assert_eq!(s, 200, "{v}");
    v["reservation-id"].as_str().unwrap().to_owned()
}

fn pool_ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|p| p["pool-id"].as_str().unwrap())
        .collect()
}

fn reconciled(dir: &std::path::Path, db: &Db) {
    let c = client();
    let env = [("BERTH_ADMIN_TOKENS", ADMIN), ("BERTH_LOG", "info")];
    std::fs::write(
        dir.join("inventory.yaml"),
        inventory(&[("dfw", 64), ("nyc", 64), ("lax", 8)]),
    )
    .unwrap();
    let mut d = start_env(dir, super::free_port(), db, &env);
    assert_eq!(
        totals(&c, &d),
        vec![
            ("dfw/inventory".into(), 64),
            ("lax/inventory".into(), 8),
            ("nyc/inventory".into(), 64)
        ]
    );
    let big = reserve(&c, &d, "dfw", 48);
    let in_nyc = reserve(&c, &d, "nyc", 4);
    terminate(&mut d);

    // Restart on another file: dfw shrinks under its reservation, nyc and lax are gone, sea is new.
    let other = dir.join("other.yaml");
    std::fs::write(&other, inventory(&[("dfw", 32), ("sea", 16)])).unwrap();
    let other_env = [env[0], env[1], ("BERTH_INVENTORY", other.to_str().unwrap())];
    let mut d = start_env(dir, super::free_port(), db, &other_env);
    let now = totals(&c, &d);
    assert!(now.contains(&("sea/inventory".into(), 16)), "{now:?}");
    assert!(now.contains(&("dfw/inventory".into(), 32)), "{now:?}");
    assert!(
        !now.iter().any(|(p, _)| p == "lax/inventory"),
        "a removed candidate's pool is still sold: {now:?}"
    );
    let (s, v) = admin(&c, &d, reqwest::Method::GET, "/admin/inventory", ADMIN);
    assert_eq!(s, 200, "{v}");
    let last = &v["last"];
    assert_eq!(last["trigger"], "start", "{v}");
    assert_eq!(last["source"], format!("file {}", other.display()));
    let diff = &last["diff"];
    assert_eq!(pool_ids(&diff["added"]), ["sea/inventory"], "{diff}");
    assert_eq!(pool_ids(&diff["changed"]), ["dfw/inventory"], "{diff}");
    assert_eq!(
        diff["changed"][0]["dimensions"]["vcpu"],
        json!({"before": 64, "after": 32})
    );
    assert_eq!(diff["changed"][0]["at-risk"], json!([big]), "{diff}");
    assert_eq!(
        pool_ids(&diff["removed"]),
        ["lax/inventory", "nyc/inventory"],
        "{diff}"
    );
    assert_eq!(diff["removed"][0]["reservations"], json!([]));
    assert_eq!(
        diff["removed"][1]["reservations"],
        json!([in_nyc]),
        "{diff}"
    );
    assert_eq!(v["drift"]["added"], json!([]), "{v}");
    let log = logs(dir);
    assert!(log.contains("inventory reconciled"), "{log}");
    assert!(log.contains("inventory pool retired"), "{log}");

    // The reload route: admins only; it answers the diff.
    std::fs::write(&other, inventory(&[("dfw", 32), ("sea", 16), ("chi", 4)])).unwrap();
    for token in [super::TOKEN, "nobody"] {
        let (s, v) = admin(
            &c,
            &d,
            reqwest::Method::POST,
            "/admin/inventory/reload",
            token,
        );
        assert_eq!(s, if token == "nobody" { 401 } else { 403 }, "{v}");
    }
    assert!(!totals(&c, &d).iter().any(|(p, _)| p == "chi/inventory"));
    let (s, v) = admin(
        &c,
        &d,
        reqwest::Method::POST,
        "/admin/inventory/reload",
        ADMIN,
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["trigger"], "request");
    assert_eq!(pool_ids(&v["diff"]["added"]), ["chi/inventory"], "{v}");
    assert_eq!(v["diff"]["unchanged"], 2, "{v}");
    assert!(totals(&c, &d).contains(&("chi/inventory".into(), 4)));

    // A bad file is refused with file:line:column; nothing stored changes.
    let before = totals(&c, &d);
    std::fs::write(
        &other,
        "candidates:\n  - candidate_id: x\n    inventory_type: clowd\n",
    )
    .unwrap();
    let (s, v) = admin(
        &c,
        &d,
        reqwest::Method::POST,
        "/admin/inventory/reload",
        ADMIN,
    );
    assert_eq!(s, 400, "{v}");
    let detail = v["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("{}:3:21", other.display())),
        "{detail}"
    );
    assert_eq!(
        (
            v["diagnostics"][0]["line"].as_u64(),
            v["diagnostics"][0]["column"].as_u64()
        ),
        (Some(3), Some(21)),
        "{v}"
    );
    assert_eq!(totals(&c, &d), before);
    let (_, v) = admin(&c, &d, reqwest::Method::GET, "/admin/inventory", ADMIN);
    assert_eq!(v["failed"]["trigger"], "request", "{v}");
    assert_eq!(v["last"]["trigger"], "request", "{v}");

    // SIGHUP reloads too.
    std::fs::write(&other, inventory(&[("dfw", 32), ("sea", 24)])).unwrap();
    let hup = Command::new("kill")
        .arg("-HUP")
        .arg(d.child.id().to_string())
        .status()
        .unwrap();
    assert!(hup.success());
    let t = Instant::now();
    let v = loop {
        let (_, v) = admin(&c, &d, reqwest::Method::GET, "/admin/inventory", ADMIN);
        if v["last"]["trigger"] == "signal" {
            break v;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "SIGHUP did not reload: {v}\n{}",
            logs(dir)
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let diff = &v["last"]["diff"];
    assert_eq!(pool_ids(&diff["changed"]), ["sea/inventory"], "{diff}");
    assert_eq!(pool_ids(&diff["removed"]), ["chi/inventory"], "{diff}");
    assert!(v.get("failed").is_none(), "{v}");
    let now = totals(&c, &d);
    assert!(now.contains(&("sea/inventory".into(), 24)), "{now:?}");
    assert!(!now.iter().any(|(p, _)| p == "chi/inventory"), "{now:?}");
    assert!(logs(dir).contains("trigger=\"signal\""), "{}", logs(dir));
    terminate(&mut d);
}

on_both_stores!(
    the_calendar_follows_the_inventory_on_sqlite,
    the_calendar_follows_the_inventory_on_postgres,
    "e2e_inventory",
    |dir, db| reconciled(dir, db)
);
