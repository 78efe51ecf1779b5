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
fn a_conflict_is_printed_in_the_chosen_format_and_exits_1() {
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
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "KEY      VALUE\nresult   conflict\nmessage  not enough cores in z/p\n"
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
            {"reservation-id": "r1", "zone": "z", "capacity": {"cores": 5, "ram": 2048}, "active": true},
            {"reservation-id": "r2", "zone": "z", "capacity": {"cores": 1}, "active": false}
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
        "--url",
        &url,
        "-o",
        "table",
    ]);
    assert_eq!(out.status.code(), Some(0));
    expect_test::expect![[r#"
        RESERVATION-ID  ZONE  CAPACITY.CORES  CAPACITY.RAM  ACTIVE
        r1              z     5               2048          true
        r2              z     1                             false
    "#]]
    .assert_eq(&String::from_utf8_lossy(&out.stdout));
    let out = berth(&["capacity", "query", "--url", &url, "-o", "table"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "KEY  CORES.TOTAL  CORES.RESERVED\nz/p  64           6\n"
    );
    let seen = server.join().expect("server");
    assert!(seen[0].starts_with("POST /query-reservation"), "{seen:?}");
    assert!(seen[1].starts_with("POST /query-capacity"), "{seen:?}");
}
