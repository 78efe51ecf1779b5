//! SIGKILL at any instant, again and again: 16 writers create, grow, shrink and cancel
//! reservations and raise capacity while plans are posted; the daemon is killed at a random
//! moment (snapshots every few commands, so some kills land in a snapshot or a group commit),
//! restarted on the same store, and checked against the writers' model of what was
//! acknowledged: every acknowledged write is there with its acknowledged content, a write in
//! flight at the kill is there whole or not at all, no pool is over-committed, every accepted
//! plan finishes.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{TimeDelta, Utc};
use reqwest::blocking::Client;
use serde_json::{Value, json};

use super::{
    Daemon, TEMPLATE, TOKEN, client, free_port, post, site, terminate, wait_plan, wait_ready,
};
use crate::db::Db;

const WRITERS: usize = 16;
const ZONES: usize = 4;
/// Units each zone starts with; writers raise it further.
const BASE_UNITS: u64 = 30;

/// Kill cycles: `BERTH_CHAOS_KILLS`, 50 by default.
fn kills() -> usize {
    std::env::var("BERTH_CHAOS_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50)
}

/// What a writer knows of one reservation: the acknowledged amount (`None`: cancelled) and,
/// while a request is unanswered, the amount it asked for.
#[derive(Debug, Clone)]
struct Known {
    zone: String,
    acked: Option<u64>,
    in_flight: Option<Option<u64>>,
}

#[derive(Default)]
struct Model {
    reservations: BTreeMap<String, Known>,
    /// Creates whose answer never came: (zone, amount).
    unknown_creates: Vec<(String, u64)>,
    /// Capacity raises per zone: acknowledged, and unanswered.
    raised: BTreeMap<String, (u64, u64)>,
    plans: Vec<String>,
}

fn start_with_snapshots(dir: &std::path::Path, port: u16, db: &Db) -> Daemon {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_berthd"));
    cmd.env("BERTH_LISTEN", format!("127.0.0.1:{port}"))
        .env("BERTH_INVENTORY", dir.join("inventory.yaml"))
        .env("BERTH_TOKENS", TOKEN)
        .env("BERTH_LOG", "warn")
        .env("BERTH_SNAPSHOT_EVERY", "25")
        .env("BERTH_MAX_BATCH", "8")
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(super::daemon_log(dir, port));
    db.configure(&mut cmd);
    let d = Daemon {
        child: cmd.spawn().unwrap(),
        base: format!("http://127.0.0.1:{port}"),
    };
    wait_ready(d, &client())
}

fn window() -> (String, String) {
    let t0 = Utc::now() + TimeDelta::days(3);
    (t0.to_rfc3339(), (t0 + TimeDelta::hours(6)).to_rfc3339())
}

/// Sends one request; `None` when no answer came (the daemon died under it).
fn send(c: &Client, base: &str, path: &str, body: &Value) -> Option<(u16, Value)> {
    let r = c
        .post(format!("{base}{path}"))
        .bearer_auth(TOKEN)
        .json(body)
        .send()
        .ok()?;
    let s = r.status().as_u16();
    let v = r.json().ok()?;
    Some((s, v))
}

/// One writer until the daemon stops answering.
fn writer(i: usize, base: String, model: Arc<Mutex<Model>>, seed: u64, alive: Arc<AtomicBool>) {
    let c = Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let (start, end) = window();
    while alive.load(Ordering::Relaxed) {
        let zone = format!("k{}", next(ZONES as u64));
        let mine: Vec<String> = {
            let m = model.lock().unwrap();
            m.reservations
                .iter()
                .filter(|(id, k)| k.acked.is_some() && id.ends_with(&format!("@{i}")))
                .map(|(id, _)| id.clone())
                .collect()
        };
        let op = next(10);
        if i == 0 && op < 2 {
            let units = 1 + next(3);
            model
                .lock()
                .unwrap()
                .raised
                .entry(zone.clone())
                .or_default()
                .1 += units;
            match send(
                &c,
                &base,
                "/increase-capacity",
                &json!({"zone": zone, "capacity": {"units": units}}),
            ) {
                Some((200, _)) => {
                    let mut m = model.lock().unwrap();
                    let e = m.raised.entry(zone).or_default();
                    e.0 += units;
                    e.1 -= units;
                }
                Some((s, v)) => panic!("increase-capacity answered {s}: {v}"),
                None => return,
            }
        } else if i == 1 && op < 2 {
            match send(
                &c,
                &base,
                "/v1/plans",
                &json!({"name": "chaos", "template": TEMPLATE, "timeout": 30}),
            ) {
                Some((201, v)) => model
                    .lock()
                    .unwrap()
                    .plans
                    .push(v["id"].as_str().unwrap_or_default().to_owned()),
                Some((s, v)) => panic!("create plan answered {s}: {v}"),
                None => return,
            }
        } else if mine.is_empty() || op < 5 {
            let units = 1 + next(3);
            let body =
                json!({"zone": zone, "capacity": {"units": units}, "start": start, "end": end});
            model
                .lock()
                .unwrap()
                .unknown_creates
                .push((zone.clone(), units));
            let answer = send(&c, &base, "/create-reservation", &body);
            let mut m = model.lock().unwrap();
            let pos = m
                .unknown_creates
                .iter()
                .position(|(z, u)| *z == zone && *u == units);
            match answer {
                Some((200, v)) => {
                    if let Some(p) = pos {
                        m.unknown_creates.remove(p);
                    }
                    let id = v["reservation-id"].as_str().unwrap_or_default().to_owned();
                    m.reservations.insert(
                        format!("{id}@{i}"),
                        Known {
                            zone,
                            acked: Some(units),
                            in_flight: None,
                        },
                    );
                }
                Some((409, _)) => {
                    if let Some(p) = pos {
                        m.unknown_creates.remove(p);
                    }
                }
                Some((s, v)) => panic!("create-reservation answered {s}: {v}"),
                None => return,
            }
        } else {
            let key = mine[next(mine.len() as u64) as usize].clone();
            let id = key.split('@').next().unwrap_or_default().to_owned();
            let cancel = op >= 8;
            let want = if cancel { None } else { Some(1 + next(4)) };
            model
                .lock()
                .unwrap()
                .reservations
                .get_mut(&key)
                .unwrap()
                .in_flight = Some(want);
            let answer = if cancel {
                send(
                    &c,
                    &base,
                    "/cancel-reservation",
                    &json!({"reservation-id": id}),
                )
            } else {
                send(
                    &c,
                    &base,
                    "/update-reservation",
                    &json!({"reservation-id": id, "capacity": {"units": want}}),
                )
            };
            let mut m = model.lock().unwrap();
            let k = m.reservations.get_mut(&key).unwrap();
            match answer {
                Some((200, _)) => {
                    k.acked = want;
                    k.in_flight = None;
                }
                Some((409, _)) => k.in_flight = None,
                Some((s, v)) => panic!(
                    "{} {id} answered {s}: {v}",
                    if cancel { "cancel" } else { "update" }
                ),
                None => return,
            }
        }
    }
}

/// The daemon's live reservations: id -> (zone, units).
fn live(c: &Client, d: &Daemon) -> BTreeMap<String, (String, u64)> {
    let (s, v) = post(c, d, "/query-reservation", json!({}));
    assert_eq!(s, 200, "{v}");
    v["details"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|r| r["state"] != "cancelled")
        .filter_map(|r| {
            let id = format!("r{}", r["id"].as_u64()?);
            let zone = r["pool"]["zone"].as_str()?.to_owned();
            Some((id, (zone, r["amounts"]["units"].as_u64().unwrap_or(0))))
        })
        .collect()
}

fn check(c: &Client, d: &Daemon, model: &mut Model, cycle: usize) {
    let live = live(c, d);
    let mut explained = std::collections::BTreeSet::new();
    for (key, k) in &mut model.reservations {
        let id = key.split('@').next().unwrap_or_default();
        let now = live.get(id).map(|(_, u)| *u);
        let ok = now == k.acked || k.in_flight.is_some_and(|w| now == w);
        assert!(
            ok,
            "cycle {cycle}: {id} in {} is {now:?}; acknowledged {:?}, in flight {:?}",
            k.zone, k.acked, k.in_flight
        );
        // Whatever the daemon kept is now the known state.
        k.acked = now;
        k.in_flight = None;
        explained.insert(id.to_owned());
    }
    // Reservations nobody was told about: each must be one whole unanswered create.
    let mut unknown = std::mem::take(&mut model.unknown_creates);
    for (id, (zone, units)) in &live {
        if explained.contains(id) {
            continue;
        }
        let pos = unknown.iter().position(|(z, u)| z == zone && u == units);
        assert!(
            pos.is_some(),
            "cycle {cycle}: {id} ({units} in {zone}) was never asked for whole: {unknown:?}"
        );
        if let Some(p) = pos {
            unknown.remove(p);
        }
        model.reservations.insert(
            format!("{id}@adopted"),
            Known {
                zone: zone.clone(),
                acked: Some(*units),
                in_flight: None,
            },
        );
    }
    // Capacity: every acknowledged raise is there; an unanswered one whole or not at all.
    let (s, v) = post(c, d, "/query-capacity", json!({"capacity": "total"}));
    assert_eq!(s, 200, "{v}");
    for z in 0..ZONES {
        let zone = format!("k{z}");
        let total = super::zone_units(&v, &zone);
        let (acked, pending) = model.raised.get(&zone).copied().unwrap_or((0, 0));
        let low = BASE_UNITS + acked;
        assert!(
            total >= low && total <= low + pending,
            "cycle {cycle}: {zone} has {total} units; acknowledged {low}, unanswered {pending}: {v}"
        );
        model.raised.insert(zone.clone(), (total - BASE_UNITS, 0));
        let used: u64 = live
            .values()
            .filter(|(zz, _)| *zz == zone)
            .map(|(_, u)| u)
            .sum();
        assert!(
            used <= total,
            "cycle {cycle}: {zone} commits {used} of {total} units"
        );
    }
}

fn kill_nine_at_any_point(dir: &std::path::Path, db: &Db) {
    let port = free_port();
    let c = client();
    let mut d = start_with_snapshots(dir, port, db);
    for z in 0..ZONES {
        let (s, v) = post(
            &c,
            &d,
            "/increase-capacity",
            json!({"zone": format!("k{z}"), "capacity": {"units": BASE_UNITS}}),
        );
        assert_eq!(s, 200, "{v}");
    }
    let model = Arc::new(Mutex::new(Model::default()));
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    for cycle in 0..kills() {
        let alive = Arc::new(AtomicBool::new(true));
        let threads: Vec<_> = (0..WRITERS)
            .map(|i| {
                let (base, model, alive) = (d.base.clone(), Arc::clone(&model), Arc::clone(&alive));
                let seed = (cycle * WRITERS + i) as u64 + 1;
                std::thread::spawn(move || writer(i, base, model, seed, alive))
            })
            .collect();
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let before = model.lock().unwrap().reservations.len();
        std::thread::sleep(Duration::from_millis(20 + rng % 400));
        // On a loaded machine the random moment may come before any write: wait for one, so
        // every cycle kills a daemon with work behind it.
        let waited = Instant::now();
        while model.lock().unwrap().reservations.len() == before
            && waited.elapsed() < Duration::from_secs(20)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        d.child.kill().unwrap();
        let _ = d.child.wait();
        alive.store(false, Ordering::Relaxed);
        for t in threads {
            t.join().unwrap();
        }
        d = start_with_snapshots(dir, port, db);
        let mut m = model.lock().unwrap();
        check(&c, &d, &mut m, cycle);
    }
    // Every accepted plan finishes: the ones solving at a kill resume.
    let plans = model.lock().unwrap().plans.clone();
    assert!(!plans.is_empty(), "no plan was accepted");
    let t = Instant::now();
    for id in &plans {
        let p = wait_plan(&c, &d, id);
        assert!(
            ["done", "error"].contains(&p["status"].as_str().unwrap_or_default()),
            "{p}"
        );
        if p["status"] == "error" {
            assert!(p["message"].as_str().is_some_and(|m| !m.is_empty()), "{p}");
        }
    }
    assert!(t.elapsed() < Duration::from_secs(60));
    let stored = model.lock().unwrap().reservations.len();
    eprintln!(
        "{} kills: {stored} reservations known, {} plans, {} adopted from unanswered creates",
        kills(),
        plans.len(),
        model
            .lock()
            .unwrap()
            .reservations
            .keys()
            .filter(|k| k.ends_with("@adopted"))
            .count()
    );
    assert!(
        stored > kills(),
        "too little was written to test anything: {stored} reservations"
    );
    terminate(&mut d);
}

on_both_stores!(
    kill_nine_at_any_point_on_sqlite,
    kill_nine_at_any_point_on_postgres,
    "kills",
    |dir, db| kill_nine_at_any_point(dir, db)
);
