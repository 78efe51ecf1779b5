//! Last-unit races against the real daemon: 64 clients at once ask for the last units of a
//! pool, round after round, with one unit, with several, with overlapping windows of different
//! shapes, and while growing reservations through `update-reservation`. The grants are checked
//! against a model: never more than the pool at any instant, and every refusal really did not
//! fit (grants only grow here, so a request refused then must still conflict with the final
//! grants). The daemon's own view must equal what the clients were told.

use std::collections::BTreeMap;
use std::sync::{Arc, Barrier, Mutex};

use chrono::{DateTime, TimeDelta, Utc};
use reqwest::blocking::Client;
use serde_json::{Value, json};

use super::{Daemon, TOKEN, client, free_port, post, site, start, terminate};
use crate::db::Db;

const CLIENTS: usize = 64;

/// Rounds per run: `BERTH_CHAOS_ROUNDS`, 100 by default.
fn rounds() -> usize {
    std::env::var("BERTH_CHAOS_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}

/// A deterministic stream of small numbers (SplitMix64), one per seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n.max(1)
    }
}

/// One client's request in a round.
#[derive(Debug, Clone)]
struct Ask {
    amount: u64,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
}

/// Peak use of `grants` over any instant (half-open windows).
fn peak(grants: &[&Ask]) -> u64 {
    let mut steps = BTreeMap::<DateTime<Utc>, i128>::new();
    for g in grants {
        *steps.entry(g.start).or_default() += i128::from(g.amount);
        *steps.entry(g.end).or_default() -= i128::from(g.amount);
    }
    let (mut level, mut top) = (0i128, 0i128);
    for d in steps.values() {
        level += d;
        top = top.max(level);
    }
    u64::try_from(top).unwrap_or(0)
}

/// Peak use of `grants` plus `ask` within `ask`'s window.
fn peak_with(grants: &[&Ask], ask: &Ask) -> u64 {
    let inside: Vec<&Ask> = grants
        .iter()
        .copied()
        .filter(|g| g.start < ask.end && ask.start < g.end)
        .collect();
    let clipped: Vec<Ask> = inside
        .iter()
        .map(|g| Ask {
            amount: g.amount,
            start: g.start.max(ask.start),
            end: g.end.min(ask.end),
        })
        .collect();
    let mut all: Vec<&Ask> = clipped.iter().collect();
    all.push(ask);
    peak(&all)
}

/// Sends `asks` at once (one thread each, released together, spread over the daemons at
/// `bases`) and returns each answer.
fn race(clients: &[Client], bases: &[String], zone: &str, asks: &[Ask]) -> Vec<(u16, Value)> {
    let barrier = Arc::new(Barrier::new(asks.len()));
    let answers = Arc::new(Mutex::new(vec![(0u16, Value::Null); asks.len()]));
    let threads: Vec<_> = asks
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, a)| {
            let (barrier, answers, base, zone, c) = (
                Arc::clone(&barrier),
                Arc::clone(&answers),
                bases[i % bases.len()].clone(),
                zone.to_owned(),
                clients[i % clients.len()].clone(),
            );
            std::thread::spawn(move || {
                let body = json!({"zone": zone, "capacity": {"units": a.amount},
                    "start": a.start.to_rfc3339(), "end": a.end.to_rfc3339()});
                barrier.wait();
                let r = c
                    .post(format!("{base}/create-reservation"))
                    .bearer_auth(TOKEN)
                    .json(&body)
                    .send()
                    .unwrap();
                let s = r.status().as_u16();
                answers.lock().unwrap()[i] = (s, r.json().unwrap_or(Value::Null));
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    Arc::try_unwrap(answers).unwrap().into_inner().unwrap()
}

/// Granted ids the daemon reports live in `zone`.
fn live(c: &Client, d: &Daemon, zone: &str) -> Vec<String> {
    let (s, v) = post(c, d, "/query-reservation", json!({"zone": zone}));
    assert_eq!(s, 200, "{v}");
    let mut ids: Vec<String> = v["details"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|r| r["state"] != "cancelled")
        .filter_map(|r| r["id"].as_u64().map(|n| format!("r{n}")))
        .collect();
    ids.sort();
    ids
}

/// Checks one round's answers against the model and the daemon; returns the number granted.
fn check_round(
    c: &Client,
    d: &Daemon,
    zone: &str,
    cap: u64,
    asks: &[Ask],
    answers: &[(u16, Value)],
) -> usize {
    let mut granted = Vec::new();
    let mut ids = Vec::new();
    let mut refused = Vec::new();
    for (a, (s, v)) in asks.iter().zip(answers) {
        match s {
            200 => {
                granted.push(a);
                ids.push(v["reservation-id"].as_str().unwrap_or_default().to_owned());
            }
            409 => {
                assert_eq!(v["result"], "conflict", "{v}");
                refused.push(a);
            }
            _ => panic!("{zone}: unexpected answer {s}: {v}"),
        }
    }
    let top = peak(&granted);
    assert!(
        top <= cap,
        "{zone}: {top} of {cap} units granted at one instant: {granted:?}"
    );
    for r in &refused {
        let with = peak_with(&granted, r);
        assert!(
            with > cap,
            "{zone}: {r:?} was refused although it fits beside the grants (peak {with} of {cap})"
        );
    }
    ids.sort();
    let unique = ids.iter().collect::<std::collections::BTreeSet<_>>().len();
    assert_eq!(unique, ids.len(), "{zone}: one id granted twice: {ids:?}");
    assert_eq!(
        live(c, d, zone),
        ids,
        "{zone}: the daemon's reservations differ from the grants"
    );
    granted.len()
}

fn last_unit_races(dir: &std::path::Path, db: &Db, daemons: usize) {
    let mut all: Vec<Daemon> = (0..daemons).map(|_| start(dir, free_port(), db)).collect();
    let bases: Vec<String> = all.iter().map(|d| d.base.clone()).collect();
    let c = client();
    // One client per racer, kept across rounds (a blocking client owns a runtime).
    let pool: Vec<Client> = (0..CLIENTS).map(|_| client()).collect();
    let t0 = Utc::now() + TimeDelta::days(1);
    for round in 0..rounds() {
        let mut rng = Rng(round as u64);
        let cap = 1 + rng.below(20);
        let zone = format!("race{round}");
        let (s, v) = post(
            &c,
            &all[0],
            "/increase-capacity",
            json!({"zone": zone, "capacity": {"units": cap}}),
        );
        assert_eq!(s, 200, "{v}");
        let shape = round % 3;
        let asks: Vec<Ask> = (0..CLIENTS)
            .map(|_| match shape {
                // The same window, one unit each: exactly `cap` grants.
                0 => Ask {
                    amount: 1,
                    start: t0,
                    end: t0 + TimeDelta::hours(2),
                },
                // The same window, 1..=3 units each.
                1 => Ask {
                    amount: 1 + rng.below(3),
                    start: t0,
                    end: t0 + TimeDelta::hours(2),
                },
                // Overlapping windows of different shapes.
                _ => {
                    let start = t0 + TimeDelta::minutes(30 * rng.below(12) as i64);
                    let len = TimeDelta::minutes(30 * (1 + rng.below(8)) as i64);
                    Ask {
                        amount: 1 + rng.below(3),
                        start,
                        end: start + len,
                    }
                }
            })
            .collect();
        let answers = race(&pool, &bases, &zone, &asks);
        // Every daemon must agree with the model, not only the one that granted.
        for d in &all {
            let n = check_round(&c, d, &zone, cap, &asks, &answers);
            if shape == 0 {
                assert_eq!(n as u64, cap, "{zone}: {n} granted of {cap} free units");
            }
        }
    }
    for d in &mut all {
        terminate(d);
    }
}

/// Reservations grow through `update-reservation` while new ones are created, all at once.
fn growth_races(dir: &std::path::Path, db: &Db) {
    let mut d = start(dir, free_port(), db);
    let c = client();
    let pool: Vec<Client> = (0..CLIENTS).map(|_| client()).collect();
    let t0 = Utc::now() + TimeDelta::days(1);
    let window = (t0, t0 + TimeDelta::hours(4));
    for round in 0..rounds().div_ceil(10) {
        let mut rng = Rng(1000 + round as u64);
        let zone = format!("grow{round}");
        let cap = 40;
        assert_eq!(
            post(
                &c,
                &d,
                "/increase-capacity",
                json!({"zone": zone, "capacity": {"units": cap}})
            )
            .0,
            200
        );
        let mut existing = Vec::new();
        for _ in 0..16 {
            let (s, v) = post(
                &c,
                &d,
                "/create-reservation",
                json!({"zone": zone, "capacity": {"units": 1},
                "start": window.0.to_rfc3339(), "end": window.1.to_rfc3339()}),
            );
            assert_eq!(s, 200, "{v}");
            existing.push(v["reservation-id"].as_str().unwrap_or_default().to_owned());
        }
        // 16 clients grow their own reservation to 2..=6 units; 48 create one more unit each.
        let grow: Vec<u64> = (0..16).map(|_| 2 + rng.below(5)).collect();
        let barrier = Arc::new(Barrier::new(CLIENTS));
        let answers = Arc::new(Mutex::new(vec![(0u16, Value::Null); CLIENTS]));
        let threads: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let (barrier, answers, base, zone) = (
                    Arc::clone(&barrier),
                    Arc::clone(&answers),
                    d.base.clone(),
                    zone.clone(),
                );
                let body = if i < 16 {
                    (
                        "/update-reservation",
                        json!({"reservation-id": existing[i], "capacity": {"units": grow[i]}}),
                    )
                } else {
                    (
                        "/create-reservation",
                        json!({"zone": zone, "capacity": {"units": 1},
                        "start": window.0.to_rfc3339(), "end": window.1.to_rfc3339()}),
                    )
                };
                let c = pool[i].clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    let r = c
                        .post(format!("{base}{}", body.0))
                        .bearer_auth(TOKEN)
                        .json(&body.1)
                        .send()
                        .unwrap();
                    let s = r.status().as_u16();
                    answers.lock().unwrap()[i] = (s, r.json().unwrap_or(Value::Null));
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let answers = Arc::try_unwrap(answers).unwrap().into_inner().unwrap();
        // Final amounts as the clients were told.
        let mut amount: BTreeMap<String, u64> = existing.iter().map(|id| (id.clone(), 1)).collect();
        let mut refused_growth = Vec::new();
        let mut refused_new = 0;
        for (i, (s, v)) in answers.iter().enumerate() {
            match (i < 16, s) {
                (true, 200) => {
                    amount.insert(existing[i].clone(), grow[i]);
                }
                (false, 200) => {
                    amount.insert(
                        v["reservation-id"].as_str().unwrap_or_default().to_owned(),
                        1,
                    );
                }
                (true, 409) => refused_growth.push(i),
                (false, 409) => refused_new += 1,
                _ => panic!("{zone}: unexpected answer {s}: {v}"),
            }
        }
        let total: u64 = amount.values().sum();
        assert!(
            total <= cap,
            "{zone}: {total} of {cap} units granted: {amount:?}"
        );
        for i in &refused_growth {
            let more = grow[*i] - amount[&existing[*i]];
            assert!(
                total + more > cap,
                "{zone}: growing {} by {more} was refused with {total} of {cap} used",
                existing[*i]
            );
        }
        if refused_new > 0 {
            assert!(
                total + 1 > cap,
                "{zone}: a 1-unit reservation was refused with {total} of {cap} used"
            );
        }
        let mut ids: Vec<String> = amount.keys().cloned().collect();
        ids.sort();
        assert_eq!(live(&c, &d, &zone), ids);
        let (_, v) = post(
            &c,
            &d,
            "/query-capacity",
            json!({"zone": zone,
            "window": {"start": window.0.to_rfc3339(), "end": window.1.to_rfc3339()}}),
        );
        let pool = v["capacity"]
            .as_object()
            .and_then(|m| m.values().next())
            .cloned()
            .unwrap_or(Value::Null);
        assert_eq!(
            pool["units"]["reserved"].as_u64(),
            Some(total),
            "{zone}: {v}"
        );
    }
    terminate(&mut d);
}

on_both_stores!(
    last_unit_races_on_sqlite,
    last_unit_races_on_postgres,
    "races",
    |dir, db| last_unit_races(dir, db, 1)
);

on_both_stores!(
    growth_races_on_sqlite,
    growth_races_on_postgres,
    "growth",
    |dir, db| growth_races(dir, db)
);

#[cfg(berth_test_postgres)]
#[test]
fn last_unit_races_across_two_daemons_on_postgres() {
    let dir = site();
    let db = Db::postgres("races2");
    last_unit_races(dir.path(), &db, 2);
    db.drop_schema();
}
