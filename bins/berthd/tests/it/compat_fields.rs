//! Unknown and misspelt fields in request bodies are named back, never dropped (issue 45.3),
//! through the real berthd: a near miss is a 400 naming both, an extra is accepted with a
//! `warnings` entry in the answer and a log line, and `provider` / `provider-id` are one field.

use serde_json::json;

use super::{client, end, logs, post, site, start_env, terminate};
use crate::db::Db;

fn named_back(dir: &std::path::Path, db: &Db) {
    let c = client();
    let mut d = start_env(dir, super::free_port(), db, &[]);

    let (s, v) = post(
        &c,
        &d,
        "/create-reservation",
        json!({"zone": "dfw", "capcity": {"cores": 1}, "end": end()}),
    );
    assert_eq!(s, 400, "{v}");
    assert_eq!(v["result"], "error");
    assert_eq!(
        v["message"],
        "unknown field `capcity`; did you mean `capacity`?"
    );
    assert_eq!(v["diagnostics"][0]["path"], "capcity");

    let (s, v) = post(
        &c,
        &d,
        "/create-reservation",
        json!({"zone": "dfw", "provider-id": "inventory", "capacity": {"cores": 1}, "end": end(), "client-trace": "t-1"}),
    );
    assert_eq!(s, 200, "{v}");
    let rid = v["reservation-id"].as_str().unwrap().to_owned();
    let w = v["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1, "{v}");
    assert!(
        w[0].as_str()
            .unwrap()
            .starts_with("unknown field `client-trace` ignored; expected one of "),
        "{v}"
    );
    // `provider-id` where `provider` is the field: read, not dropped.
    let (s, v) = post(
        &c,
        &d,
        "/query-reservation",
        json!({"zone": "dfw", "provider-id": "inventory"}),
    );
    assert_eq!((s, v["reservations"].clone()), (200, json!([rid])), "{v}");
    let (s, v) = post(
        &c,
        &d,
        "/query-reservation",
        json!({"zone": "dfw", "provider-id": "elsewhere"}),
    );
    assert_eq!((s, v["reservations"].clone()), (200, json!([])), "{v}");
    // Both names at once is one field twice.
    let (s, v) = post(
        &c,
        &d,
        "/query-reservation",
        json!({"provider": "inventory", "provider-id": "inventory"}),
    );
    assert_eq!(s, 400, "{v}");
    let (s, v) = post(&c, &d, "/cancel-reservation", json!({"reservation": rid}));
    assert_eq!(s, 400, "{v}");
    assert_eq!(
        v["message"],
        "unknown field `reservation`; did you mean `reservation-id`?"
    );

    // HAS: `num_solutions` is HAS's `num_solution` misspelt; other extras are warnings.
    let template = super::TEMPLATE;
    let (s, v) = post(
        &c,
        &d,
        "/v1/plans",
        json!({"name": "p", "template": template, "num_solutions": 1}),
    );
    assert_eq!(s, 400, "{v}");
    assert_eq!(
        v["error_message"]["explanation"],
        "unknown field `num_solutions`; did you mean `num_solution`?"
    );
    let (s, v) = post(
        &c,
        &d,
        "/v1/plans",
        json!({"name": "p", "template": template, "num_solution": "1", "osdf_trace": "x"}),
    );
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(1), "{v}");
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("unknown field `osdf_trace` ignored"),
        "{v}"
    );
    terminate(&mut d);
    let log = logs(dir);
    assert!(
        log.contains("unknown field `client-trace` ignored"),
        "{log}"
    );
    assert!(log.contains("unknown field `osdf_trace` ignored"), "{log}");
}

on_both_stores!(
    unknown_fields_are_named_back_on_sqlite,
    unknown_fields_are_named_back_on_postgres,
    "e2e_fields",
    |dir, db| named_back(dir, db)
);
