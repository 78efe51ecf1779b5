//! The daemon commands' output formats against a stand-in daemon: the answer as JSON (the
//! default), YAML, or a table of the answer's list.

use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::fake;

fn berth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_berth"))
        .args(args)
        .output()
        .expect("run berth")
}

fn plans() -> String {
    json!({"plans": [
        {"id": "p1", "name": "vcpe", "status": "done", "transaction_id": "t1"},
        {"id": "p2", "name": "edge", "status": "solving", "transaction_id": "t2"}
    ]})
    .to_string()
}

#[test]
fn plan_list_prints_json_yaml_and_a_table() {
    let (addr, server) = fake::serve(vec![(200, plans()), (200, plans()), (200, plans())]);
    let url = format!("http://{addr}");
    let out = berth(&["plan", "list", "--url", &url]);
    assert_eq!(out.status.code(), Some(0));
    let j: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(j["plans"][1]["status"], "solving");
    let out = berth(&["plan", "list", "--url", &url, "-o", "yaml"]);
    let y: Value = serde_yaml::from_slice(&out.stdout).expect("yaml");
    assert_eq!(y, j);
    let out = berth(&["plan", "-o", "table", "list", "--url", &url]);
    assert_eq!(out.status.code(), Some(0));
    expect_test::expect![[r#"
        ID  NAME  STATUS   TRANSACTION_ID
        p1  vcpe  done     t1
        p2  edge  solving  t2
    "#]]
    .assert_eq(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(server.join().expect("server"), ["GET /v1/plans"; 3]);
}

#[test]
fn a_conflict_is_a_sentence_unless_json_is_asked_for_and_exits_1() {
    let answer = json!({"result": "conflict", "message": "not enough cores in z/p"}).to_string();
    let (addr, server) = fake::serve(vec![(409, answer)]);
    let url = format!("http://{addr}");
    let out = berth(&[
        "reservation",
        "create",
        "--zone",
        "z",
        "-c",
        "cores=5",
        "--url",
        &url,
        "-o",
        "table",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "berth: berthd answered 409 Conflict: not enough cores in z/p\n"
    );
    let seen = server.join().expect("server");
    assert_eq!(seen.len(), 1);
    assert!(
        seen[0].starts_with("POST /create-reservation {"),
        "{seen:?}"
    );
    let body: Value = serde_json::from_str(
        seen[0]
            .split_once(' ')
            .and_then(|(_, r)| r.split_once(' '))
            .map(|(_, b)| b)
            .expect("body"),
    )
    .expect("json body");
    assert_eq!(body, json!({"zone": "z", "capacity": {"cores": 5}}));
}

#[test]
fn queries_tabulate_their_reservations_and_pools() {
    let reservations = json!({
        "reservations": ["r1", "r2"],
        "details": [
            {"id": 1, "reservation-id": "r1", "zone": "z", "provider": "p", "state": "active", "priority": 5,
             "start": "2030-01-01T00:00:00Z", "end": null, "amounts": {"cores": 5, "ram": 2048},
             "capacity": {"cores": 5, "ram": 2048}, "remaining": {"cores": 3}, "active": true},
            {"id": 2, "reservation-id": "r2", "zone": "z", "provider": "p", "state": "ended", "priority": 0,
             "start": "2029-01-01T00:00:00Z", "capacity": {"cores": 1}, "remaining": {}, "active": false}
        ],
        "utilization": [{"pool": "z/p", "points": []}]
    });
    let capacity = json!({
        "collections": ["ResourcePool:z/p"],
        "capacity": {"z/p": {"cores": {"total": 64, "reserved": 6}}},
        "utilization": []
    });
    let (addr, server) = fake::serve(vec![
        (200, reservations.to_string()),
        (200, capacity.to_string()),
    ]);
    let url = format!("http://{addr}");
    let out = berth(&[
        "reservation",
        "query",
        "--zone",
        "z",
        "--provider",
        "p",
        "--url",
        &url,
        "-o",
        "table",
    ]);
    assert_eq!(out.status.code(), Some(0));
    expect_test::expect![[r#"
        ID  ZONE  PROVIDER  STATE   PRIORITY  START                 END  AMOUNTS           REMAINING  ACTIVE
        r1  z     p         active  5         2030-01-01T00:00:00Z       cores=5,ram=2048  cores=3    true
        r2  z     p         ended   0         2029-01-01T00:00:00Z       cores=1                      false
    "#]]
    .assert_eq(&String::from_utf8_lossy(&out.stdout));
    let out = berth(&["capacity", "query", "--url", &url, "-o", "table"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "KEY  CORES.TOTAL  CORES.RESERVED\nz/p  64           6\n"
    );
    let seen = server.join().expect("server");
    assert_eq!(
        body_of(&seen[0]),
        json!({"zone": "z", "provider": "p"}),
        "{seen:?}"
    );
    assert!(seen[0].starts_with("POST /query-reservation"), "{seen:?}");
    assert!(seen[1].starts_with("POST /query-capacity"), "{seen:?}");
}

/// The JSON body of a request the stand-in saw (`METHOD PATH BODY`).
fn body_of(request: &str) -> Value {
    let body = request
        .split_once(' ')
        .and_then(|(_, r)| r.split_once(' '))
        .map(|(_, b)| b)
        .expect("body");
    serde_json::from_str(body).expect("json body")
}

#[test]
fn a_refusal_prints_its_json_with_o_json() {
    let answer = json!({"result": "conflict", "message": "not enough cores in z/p", "offers": [{"start": "x"}]});
    let (addr, server) = fake::serve(vec![(409, answer.to_string()), (409, answer.to_string())]);
    let url = format!("http://{addr}");
    let args = [
        "reservation",
        "create",
        "--zone",
        "z",
        "-c",
        "cores=5",
        "--url",
        &url,
    ];
    let out = berth(&[&args[..], &["-o", "json"]].concat());
    assert_eq!(out.status.code(), Some(1));
    let j: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(j, answer);
    // The default (JSON for data) still speaks a refusal as a sentence, naming the offers.
    let out = berth(&args);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "berth: berthd answered 409 Conflict: not enough cores in z/p; 1 offer(s) would fit (`-o json` shows them)\n"
    );
    assert_eq!(server.join().expect("server").len(), 2);
}

#[test]
fn times_are_read_on_the_client_and_a_typo_never_reaches_the_daemon() {
    let (addr, server) = fake::serve(vec![(201, json!({"reservation-id": "r1"}).to_string())]);
    let url = format!("http://{addr}");
    let out = berth(&[
        "reservation",
        "create",
        "--zone",
        "z",
        "-c",
        "cores=1",
        "--start",
        "tomorow",
        "--url",
        &url,
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`tomorow` is not a time; expected RFC 3339"),
        "{err}"
    );
    let out = berth(&[
        "reservation",
        "create",
        "--zone",
        "z",
        "-c",
        "cores=1",
        "--start",
        "2030-01-01 09:00",
        "--end",
        "2030-01-02T10:00:00+01:00",
        "--url",
        &url,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = server.join().expect("server");
    assert_eq!(seen.len(), 1, "the typo sent nothing: {seen:?}");
    assert_eq!(
        body_of(&seen[0]),
        json!({"zone": "z", "capacity": {"cores": 1}, "start": "2030-01-01T09:00:00Z", "end": "2030-01-02T09:00:00Z"})
    );
}

#[test]
fn instance_create_names_its_provider_flavor_and_name() {
    let (addr, server) = fake::serve(vec![(200, json!({"instance-id": "i1"}).to_string())]);
    let url = format!("http://{addr}");
    let out = berth(&[
        "instance",
        "create",
        "--provider",
        "P2",
        "--flavor",
        "m1.tiny",
        "--name",
        "vm-1",
        "--image",
        "cirros",
        "--url",
        &url,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = server.join().expect("server");
    assert!(seen[0].starts_with("POST /create-instance "), "{seen:?}");
    assert_eq!(
        body_of(&seen[0]),
        json!({"provider-id": "P2", "flavor": "m1.tiny", "name": "vm-1", "image": "cirros"})
    );
}

#[test]
fn a_forwarded_write_loads_the_map_and_the_next_goes_to_the_holder() {
    let cache = tempfile::tempdir().expect("tempdir");
    let created = |id: &str| json!({"reservation-id": id}).to_string();
    let (b, holder) = fake::serve(vec![(200, created("z2:r2"))]);
    let map = json!({"node": "n1", "partition_key": "zone", "partitions": [
        {"partition": "z2", "holder": "n2", "url": format!("http://{b}"), "token": 4,
         "expires_at": "2030-01-01T00:00:00.000Z"}
    ]});
    let (a, entry) = fake::serve_with(vec![
        (200, created("z2:r1"), "x-berth-forwarded-to: n2\r\n".into()),
        (200, map.to_string(), String::new()),
    ]);
    let url = format!("http://{a}");
    let create = || {
        Command::new(env!("CARGO_BIN_EXE_berth"))
            .args([
                "reservation",
                "create",
                "--zone",
                "z2",
                "-c",
                "cores=1",
                "--url",
                &url,
            ])
            .env("XDG_CACHE_HOME", cache.path())
            .output()
            .expect("run berth")
    };
    let out = create();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = create();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(j["reservation-id"], "z2:r2");
    let seen = entry.join().expect("entry");
    assert!(seen[0].starts_with("POST /create-reservation "), "{seen:?}");
    assert_eq!(seen[1], "GET /v1/cluster");
    let seen = holder.join().expect("holder");
    assert!(seen[0].starts_with("POST /create-reservation "), "{seen:?}");
    assert_eq!(body_of(&seen[0])["zone"], "z2");
}
