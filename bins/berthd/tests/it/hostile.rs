//! Hostile input against the real daemon: malformed, deep, huge, overflowing, out-of-order,
//! traversing and control-byte requests on every route. Every answer is a 4xx JSON error that
//! names the field (where there is one), none is a 5xx, none hangs, and afterwards the daemon is
//! healthy with what it stored before intact.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use serde_json::{Value, json};

use super::{Daemon, TOKEN, client, end, free_port, post, site};
use crate::db::Db;

/// One hostile request: method, path, body, and the field path its error must name
/// (`""`: the request has no single field to blame).
struct Case {
    method: &'static str,
    path: String,
    body: Vec<u8>,
    field: &'static str,
}

fn case(method: &'static str, path: &str, body: impl Into<Vec<u8>>, field: &'static str) -> Case {
    Case {
        method,
        path: path.to_owned(),
        body: body.into(),
        field,
    }
}

const POST_ROUTES: &[&str] = &[
    "/v1/plans",
    "/add-provider",
    "/create-reservation",
    "/update-reservation",
    "/cancel-reservation",
    "/query-reservation",
    "/create-instance",
    "/destroy-instance",
    "/increase-capacity",
    "/decrease-capacity",
    "/query-capacity",
    "/capacity/compute/subscribe",
    "/reservation/subscribe",
];

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    // Broken JSON on every route that takes a body.
    for r in POST_ROUTES {
        v.push(case("POST", r, "{\"capacity\": {\"cores\": 1", ""));
    }
    // Nesting deeper than any parser should follow.
    let deep = format!("{{\"capacity\": {}{}}}", "[".repeat(5000), "]".repeat(5000));
    for r in ["/create-reservation", "/v1/plans", "/query-capacity"] {
        v.push(case("POST", r, deep.clone(), ""));
    }
    // Not an object at all; wrong body types.
    v.push(case("POST", "/create-reservation", "[1, 2, 3]", ""));
    v.push(case("POST", "/create-reservation", "\"text\"", ""));
    v.push(case("POST", "/create-reservation", "null", ""));
    v.push(case(
        "POST",
        "/v1/plans",
        "{\"name\": \"x\", \"template\": 5}",
        "template",
    ));
    v.push(case(
        "POST",
        "/v1/plans",
        "{\"name\": [], \"template\": {}}",
        "name",
    ));
    v.push(case(
        "POST",
        "/v1/plans",
        "{\"name\": \"x\", \"template\": {}, \"timeout\": -5}",
        "timeout",
    ));
    v.push(case(
        "POST",
        "/v1/plans",
        "{\"name\": \"x\", \"template\": {}, \"timeout\": 1e308}",
        "timeout",
    ));
    v.push(case(
        "POST",
        "/v1/plans",
        "{\"name\": \"x\", \"template\": {}, \"num_solution\": 18446744073709551616}",
        "num_solution",
    ));
    v.push(case(
        "POST",
        "/v1/plans",
        "{\"name\": \"x\", \"template\": {}, \"files\": 7}",
        "files",
    ));
    v.push(case(
        "POST",
        "/v1/plans",
        "{\"name\": \"x\", \"id\": \"../../etc/passwd\", \"template\": {}}",
        "id",
    ));
    v.push(case(
        "POST",
        "/v1/plans",
        "{\"name\": \"x\\u0000y\", \"template\": {}}",
        "name",
    ));
    // Quantities: negative, fractional, huge, overflowing, not numbers.
    for (q, field) in [
        ("-1", "capacity.cores"),
        ("1.5", "capacity.cores"),
        ("1e308", "capacity.cores"),
        ("18446744073709551616", "capacity.cores"),
        ("\"NaN\"", "capacity.cores"),
        ("\"-3\"", "capacity.cores"),
        ("\"inf\"", "capacity.cores"),
        ("true", "capacity.cores"),
        ("{}", "capacity.cores"),
    ] {
        v.push(case(
            "POST",
            "/create-reservation",
            format!(
                "{{\"capacity\": {{\"cores\": {q}}}, \"end\": \"{}\"}}",
                end()
            ),
            field,
        ));
    }
    v.push(case(
        "POST",
        "/increase-capacity",
        "{\"capacity\": {\"cores\": -20}}",
        "capacity.cores",
    ));
    v.push(case(
        "POST",
        "/decrease-capacity",
        "{\"capacity\": {\"cores\": \"x\"}}",
        "capacity.cores",
    ));
    v.push(case(
        "POST",
        "/create-instance",
        "{\"capacity\": {\"instances\": -1}}",
        "capacity.instances",
    ));
    // Times: end before start, not a time, absurd years.
    v.push(case(
        "POST",
        "/create-reservation",
        "{\"capacity\": {\"cores\": 1}, \"start\": \"2031-01-02T00:00:00Z\", \"end\": \"2031-01-01T00:00:00Z\"}",
        "end",
    ));
    v.push(case(
        "POST",
        "/create-reservation",
        "{\"capacity\": {\"cores\": 1}, \"start\": \"yesterday\"}",
        "start",
    ));
    v.push(case(
        "POST",
        "/create-reservation",
        "{\"capacity\": {\"cores\": 1}, \"end\": \"+275760-09-13T00:00:00Z\"}",
        "end",
    ));
    v.push(case(
        "POST",
        "/query-capacity",
        "{\"window\": {\"start\": \"2031-01-02T00:00:00Z\", \"end\": \"2031-01-01T00:00:00Z\"}}",
        "window.end",
    ));
    v.push(case(
        "POST",
        "/query-capacity",
        "{\"capacity\": \"everything\"}",
        "capacity",
    ));
    v.push(case(
        "POST",
        "/create-reservation",
        "{\"capacity\": {\"cores\": 1}, \"priority\": \"urgent\"}",
        "priority",
    ));
    // Unknown ids and ids that try to climb out of their namespace.
    v.push(case(
        "POST",
        "/cancel-reservation",
        "{\"reservation-id\": \"r999999\"}",
        "reservation-id",
    ));
    v.push(case(
        "POST",
        "/cancel-reservation",
        "{\"reservation-id\": \"../../r1\"}",
        "reservation-id",
    ));
    v.push(case(
        "POST",
        "/update-reservation",
        "{\"reservation-id\": \"r18446744073709551616\"}",
        "reservation-id",
    ));
    v.push(case(
        "POST",
        "/destroy-instance",
        "{\"instance-id\": \"a/../../1\"}",
        "instance-id",
    ));
    v.push(case("POST", "/cancel-reservation", "{}", "reservation-id"));
    v.push(case("GET", "/v1/plans/..%2F..%2Fetc%2Fpasswd", "", ""));
    v.push(case("DELETE", "/v1/plans/%00", "", ""));
    v.push(case("GET", "/v1/triage_tool/..%2Fplans", "", ""));
    v.push(case(
        "DELETE",
        "/reservation/subscribe/..%2F..%2Fs1",
        "",
        "",
    ));
    v.push(case("DELETE", "/capacity/compute/subscribe/s99999", "", ""));
    v.push(case(
        "POST",
        "/capacity/warp/subscribe",
        "{\"threshold\": 1, \"callback\": \"http://127.0.0.1:9/\"}",
        "",
    ));
    // Control bytes and oversized names.
    v.push(case(
        "POST",
        "/create-reservation",
        "{\"zone\": \"a\\u0007b\", \"capacity\": {\"cores\": 1}}",
        "zone",
    ));
    v.push(case(
        "POST",
        "/increase-capacity",
        format!(
            "{{\"zone\": \"{}\", \"capacity\": {{\"cores\": 1}}}}",
            "z".repeat(10_000)
        ),
        "zone",
    ));
    v.push(case(
        "POST",
        "/add-provider",
        "{\"provider-type\": \"\"}",
        "provider-type",
    ));
    v.push(case(
        "POST",
        "/add-provider",
        "{\"provider-type\": \"openstack\\u0000\"}",
        "provider-type",
    ));
    // Webhooks that point at files or at unusable schemes.
    v.push(case(
        "POST",
        "/reservation/subscribe",
        "{\"callback\": \"file:///etc/passwd\"}",
        "callback",
    ));
    v.push(case(
        "POST",
        "/capacity/compute/subscribe",
        "{\"threshold\": 1, \"callback\": \"gopher://127.0.0.1/\"}",
        "callback",
    ));
    v.push(case(
        "POST",
        "/capacity/compute/subscribe",
        "{\"threshold\": -1, \"callback\": \"http://127.0.0.1:9/\"}",
        "threshold",
    ));
    // Callbacks into the daemon's own network: the metadata service, loopback, private ranges.
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://127.0.0.1:8091/cancel-reservation",
        "http://localhost/",
        "http://10.0.0.5/hook",
        "http://[::1]/",
    ] {
        v.push(case(
            "POST",
            "/reservation/subscribe",
            format!("{{\"callback\": \"{url}\"}}"),
            "callback",
        ));
    }
    v
}

fn send(c: &Client, d: &Daemon, k: &Case) -> (u16, Value, String, Duration) {
    let url = format!("{}{}", d.base, k.path);
    let req = match k.method {
        "GET" => c.get(url),
        "DELETE" => c.delete(url),
        _ => c
            .post(url)
            .header("content-type", "application/json")
            .body(k.body.clone()),
    };
    let t = Instant::now();
    let r = req.bearer_auth(TOKEN).send().unwrap();
    let elapsed = t.elapsed();
    let status = r.status().as_u16();
    let ctype = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let v: Value = r.json().unwrap_or(Value::Null);
    (status, v, ctype, elapsed)
}

/// The diagnostics of any dialect's error body.
fn diagnostics(v: &Value) -> Vec<Value> {
    let d = v
        .get("diagnostics")
        .or_else(|| v.get("error_message").and_then(|e| e.get("diagnostics")));
    d.and_then(Value::as_array).cloned().unwrap_or_default()
}

fn hostile_input(dir: &std::path::Path, db: &Db) {
    // As deployed: callbacks to private addresses refused.
    let d = super::start_env(
        dir,
        free_port(),
        db,
        &[("BERTH_NOTIFY_ALLOW_PRIVATE", "false")],
    );
    let c = client();
    // Something stored before the attack, to check afterwards.
    let (s, v) = post(
        &c,
        &d,
        "/increase-capacity",
        json!({"zone": "keep", "capacity": {"cores": 8}}),
    );
    assert_eq!(s, 200, "{v}");
    let (s, v) = post(
        &c,
        &d,
        "/create-reservation",
        json!({"zone": "keep", "capacity": {"cores": 3}, "end": end()}),
    );
    assert_eq!(s, 200, "{v}");
    let kept = v["reservation-id"].as_str().unwrap_or_default().to_owned();

    let cases = cases();
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let mut failures = Vec::new();
    for k in &cases {
        let (status, v, ctype, took) = send(&c, &d, k);
        let named = diagnostics(&v)
            .iter()
            .any(|d| d["path"].as_str() == Some(k.field));
        let problem = if !(400..500).contains(&status) {
            Some(format!("status {status}"))
        } else if !ctype.contains("json") || v.is_null() {
            Some(format!("not a JSON error ({ctype})"))
        } else if !k.field.is_empty() && !named {
            Some(format!("does not name `{}`", k.field))
        } else if took > Duration::from_secs(5) {
            Some(format!("took {took:?}"))
        } else {
            None
        };
        if let Some(p) = problem {
            let shown: String = String::from_utf8_lossy(&k.body).chars().take(120).collect();
            failures.push(format!("{} {} {shown}: {p}: {v}", k.method, k.path));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} hostile requests answered badly:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );

    // A body far over the limit is refused before it is read whole.
    let big = vec![b' '; 20 << 20];
    let r = c
        .post(format!("{}/create-reservation", d.base))
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .body(big)
        .send();
    match r {
        Ok(r) => assert_eq!(r.status().as_u16(), 413),
        // The daemon may close the connection once the limit is passed.
        Err(e) => assert!(e.is_request() || e.is_body(), "{e}"),
    }

    // The daemon is healthy and what it stored is intact.
    assert_eq!(
        c.get(format!("{}/readyz", d.base))
            .send()
            .unwrap()
            .status()
            .as_u16(),
        200
    );
    let (s, v) = post(&c, &d, "/query-reservation", json!({"zone": "keep"}));
    assert_eq!((s, v["reservations"].clone()), (200, json!([kept])));
    let (s, v) = post(&c, &d, "/query-capacity", json!({"zone": "keep"}));
    assert_eq!(s, 200);
    assert_eq!(v["capacity"]["keep/default"]["cores"]["reserved"], 3, "{v}");
}

/// Slow clients that never finish their headers neither starve the others nor hold their
/// connections: the header deadline closes them; a body slower than the request timeout is cut
/// off with 408.
fn slowloris(dir: &std::path::Path, db: &Db) {
    let env = [
        ("BERTH_HEADER_TIMEOUT_SECS", "2"),
        ("BERTH_REQUEST_TIMEOUT_SECS", "2"),
    ];
    let d = super::start_env(dir, free_port(), db, &env);
    let addr = d.base.trim_start_matches("http://").to_owned();
    let mut idle = Vec::new();
    for _ in 0..200 {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.write_all(b"POST /create-reservation HTTP/1.1\r\nHost: x\r\nContent-Len")
            .unwrap();
        idle.push(s);
    }
    let c = client();
    let t = Instant::now();
    let (s, _) = post(&c, &d, "/query-capacity", json!({}));
    assert_eq!(s, 200);
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "took {:?}",
        t.elapsed()
    );
    // The header deadline closes every one of them.
    for s in &mut idle {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 256];
        let t = Instant::now();
        let n = s.read(&mut buf).unwrap_or(0);
        let answer = String::from_utf8_lossy(&buf[..n]);
        assert!(n == 0 || answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "a slow header was held {:?}",
            t.elapsed()
        );
    }
    // A body slower than the request timeout is cut off, not waited on.
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(format!("POST /create-reservation HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{").as_bytes()).unwrap();
    let t = Instant::now();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}

#[test]
fn hostile_input_on_sqlite() {
    let dir = site();
    hostile_input(dir.path(), &Db::sqlite(dir.path()));
}

#[test]
fn slowloris_on_sqlite() {
    let dir = site();
    slowloris(dir.path(), &Db::sqlite(dir.path()));
}
