//! One name for one thing (issue 45.6), through the real berthd: `decrease-capacity`'s
//! `at-risk` and webhook payloads carry `r4` ids as every other answer does, cancelling sends an
//! event and lists the instances it ended, a subscription to an unknown event name is refused.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::{client, end, post, site, start_env, terminate};
use crate::db::Db;

/// A webhook receiver on loopback: every body posted to it, in order.
fn receiver() -> (String, mpsc::Receiver<Value>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", l.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; len];
            let _ = r.read_exact(&mut body);
            let mut s = s;
            let _ =
                s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            if let Ok(v) = serde_json::from_slice(&body) {
                let _ = tx.send(v);
            }
        }
    });
    (url, rx)
}

/// The webhooks received until one of event `name` (included), 20 s at most each.
fn until(hooks: &mpsc::Receiver<Value>, name: &str) -> Vec<Value> {
    let mut got = Vec::new();
    while let Ok(h) = hooks.recv_timeout(Duration::from_secs(20)) {
        let done = h["event"]["event"] == name;
        got.push(h);
        if done {
            return got;
        }
    }
    panic!("no `{name}` webhook: {got:?}");
}

fn named_alike(dir: &std::path::Path, db: &Db) {
    let c = client();
    let mut d = start_env(dir, super::free_port(), db, &[]);
    let (url, hooks) = receiver();

    let (s, v) = post(
        &c,
        &d,
        "/reservation/subscribe",
        json!({"filters": {"zone": "dfw", "events": ["reservation-canceled"]}, "callback": url}),
    );
    assert_eq!(s, 400, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("`filters.events[0]` is `reservation-canceled`, no event name; did you mean `reservation-cancelled`?"),
        "{v}"
    );
    let (s, v) = post(
        &c,
        &d,
        "/reservation/subscribe",
        json!({"filters": {"zone": "dfw"}, "callback": url}),
    );
    assert_eq!(s, 201, "{v}");
    let (s, v) = post(
        &c,
        &d,
        "/capacity/compute/subscribe",
        json!({"zone": "dfw", "provider": "inventory", "threshold": 20, "callback": url}),
    );
    assert_eq!(s, 201, "{v}");

    let (s, v) = post(
        &c,
        &d,
        "/create-reservation",
        json!({"zone": "dfw", "capacity": {"cores": 48, "instances": 0}, "end": end()}),
    );
    assert_eq!(s, 200, "{v}");
    let rid = v["reservation-id"].as_str().unwrap().to_owned();
    let (s, v) = post(
        &c,
        &d,
        "/create-instance",
        json!({"reservation-id": rid, "name": "vm1", "capacity": {"cores": 2}}),
    );
    assert_eq!(s, 200, "{v}");
    let iid = v["instance-id"].as_str().unwrap().to_owned();

    let (s, v) = post(
        &c,
        &d,
        "/decrease-capacity",
        json!({"source": "ResourcePool:dfw/inventory", "capacity": {"cores": 32}}),
    );
    assert_eq!(s, 200, "{v}");
    // The reservation and the instance drawing on it, by the ids their own answers gave.
    assert_eq!(v["at-risk"], json!([rid, iid]), "{v}");
    let seen = until(&hooks, "commitment-at-risk");
    let started = seen
        .iter()
        .find(|h| h["event"]["event"] == "reservation-started")
        .unwrap();
    assert_eq!(started["event"]["event"], "reservation-started", "{seen:?}");
    assert_eq!(started["event"]["reservation"], json!(rid), "{seen:?}");
    let risk = seen.last().unwrap();
    assert!(
        [json!(rid), json!(iid)].contains(&risk["event"]["record"]),
        "{risk}"
    );
    assert_eq!(risk["event"]["pool"], "dfw/inventory", "{risk}");

    let (s, v) = post(
        &c,
        &d,
        "/cancel-reservation",
        json!({"reservation-id": rid}),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["instances"], json!([iid]), "{v}");
    let mut got = until(&hooks, "reservation-cancelled");
    let cancelled = got.last().unwrap().clone();
    // Webhooks are delivered concurrently: the instance's may come after.
    if !got
        .iter()
        .any(|h| h["event"]["event"] == "allocation-terminated")
    {
        got.extend(until(&hooks, "allocation-terminated"));
    }
    assert_eq!(
        cancelled["event"]["event"], "reservation-cancelled",
        "{got:?}"
    );
    assert_eq!(cancelled["event"]["reservation"], json!(rid));
    assert_eq!(cancelled["event"]["terminated"], json!([iid]));
    assert!(
        got.iter()
            .any(|h| h["event"]["event"] == "allocation-terminated"
                && h["event"]["allocation"] == json!(iid)
                && h["event"]["reservation"] == json!(rid)),
        "{got:?}"
    );
    // The threshold crossed by the reservation names the pool it watches.
    let mut all: Vec<Value> = seen.into_iter().chain(got).collect();
    if !all
        .iter()
        .any(|h| h["event"]["event"] == "capacity-threshold")
    {
        all.extend(until(&hooks, "capacity-threshold"));
    }
    let t = all
        .iter()
        .find(|h| h["event"]["event"] == "capacity-threshold")
        .unwrap();
    assert_eq!(t["event"]["pool"], "dfw/inventory", "{t}");
    assert_eq!(t["event"]["zone"], "dfw", "{t}");
    assert_eq!(t["event"]["dimension"], "cores", "{t}");
    terminate(&mut d);
}

on_both_stores!(
    answers_and_events_name_records_alike_on_sqlite,
    answers_and_events_name_records_alike_on_postgres,
    "e2e_events",
    |dir, db| named_alike(dir, db)
);
