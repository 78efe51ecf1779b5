//! The formatting layer: every format of one report, tables from JSON shapes.

use serde::Deserialize as _;
use serde_json::json;

use super::*;

fn plans() -> Report {
    Report::json(
        json!({"plans": [
            {"id": "p1", "name": "vcpe", "status": "done", "meta": {"k": 1}},
            {"id": "p2", "name": "edge", "status": "solving", "extra": 3}
        ]}),
        &[],
    )
}

#[test]
fn json_is_pretty_and_round_trips() {
    let out = plans().render(Format::Json).unwrap();
    assert!(out.starts_with("{\n  \"plans\": ["), "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["plans"][1]["status"], "solving");
    assert_eq!(v["plans"][0]["meta"]["k"], 1);
}

#[test]
fn yaml_holds_the_same_data_in_order() {
    let out = plans().render(Format::Yaml).unwrap();
    let v: Value = serde_yaml::from_str(&out).unwrap();
    assert_eq!(
        v,
        json!({"plans": [
            {"id": "p1", "name": "vcpe", "status": "done", "meta": {"k": 1}},
            {"id": "p2", "name": "edge", "status": "solving", "extra": 3}
        ]})
    );
    assert!(
        out.find("id: p1").unwrap() < out.find("id: p2").unwrap(),
        "{out}"
    );
}

#[test]
fn a_list_of_objects_is_a_table_with_every_scalar_column() {
    let out = plans().render(Format::Table).unwrap();
    expect_test::expect![[r#"
        ID  NAME  STATUS   META.K  EXTRA
        p1  vcpe  done     1
        p2  edge  solving          3
    "#]]
    .assert_eq(&out);
    // No text view: `text` is the table.
    assert_eq!(plans().render(Format::Text).unwrap(), out);
}

#[test]
fn chosen_columns_reach_into_nested_objects() {
    let t = Table::from_json(
        &json!([{"id": "r1", "capacity": {"cores": 4}}, {"id": "r2"}]),
        &["id", "capacity.cores"],
    );
    assert_eq!(t.headers, ["ID", "CAPACITY.CORES"]);
    assert_eq!(t.rows, [vec!["r1", "4"], vec!["r2", ""]]);
}

#[test]
fn other_objects_are_key_value_rows() {
    let t = Table::from_json(
        &json!({"result": "ok", "pools": [1, 2], "message": null}),
        &[],
    );
    assert_eq!(t.headers, ["KEY", "VALUE"]);
    assert_eq!(
        t.rows,
        [
            vec!["result", "ok"],
            vec!["pools", "[1,2]"],
            vec!["message", ""]
        ]
    );
    // Two lists of objects: no single list to make rows of.
    let two = Table::from_json(&json!({"a": [{"x": 1}], "b": [{"y": 2}]}), &[]);
    assert_eq!(two.headers, ["KEY", "VALUE"]);
    assert_eq!(Table::from_json(&Value::Null, &[]).rows.len(), 0);
}

#[test]
fn records_are_json_lines_and_yaml_documents() {
    let r = Report {
        data: Data::Records(vec![
            json!({"file": "a", "valid": true}),
            json!({"file": "b", "valid": false}),
        ]),
        table: View::Text("t\n".into()),
        text: Some("x\n".into()),
    };
    assert_eq!(
        r.render(Format::Json).unwrap(),
        "{\"file\":\"a\",\"valid\":true}\n{\"file\":\"b\",\"valid\":false}\n"
    );
    let yaml = r.render(Format::Yaml).unwrap();
    let docs: Vec<Value> = serde_yaml::Deserializer::from_str(&yaml)
        .map(|d| Value::deserialize(d).unwrap())
        .collect();
    assert_eq!(
        docs,
        [
            json!({"file": "a", "valid": true}),
            json!({"file": "b", "valid": false})
        ]
    );
    assert_eq!(r.render(Format::Table).unwrap(), "t\n");
    assert_eq!(r.render(Format::Text).unwrap(), "x\n");
}

#[test]
fn rows_are_padded_to_the_headers() {
    let mut t = Table::new(&["a", "b", "c"]);
    t.row(vec!["1".into()]);
    t.row(vec!["1".into(), "2".into(), "3".into(), "4".into()]);
    assert_eq!(t.rows[0], ["1", "", ""]);
    assert_eq!(t.rows[1], ["1", "2", "3"]);
    assert_eq!(t.render(), "A  B  C\n1\n1  2  3\n");
}

#[test]
fn an_object_of_objects_is_a_row_per_key() {
    let capacity = json!({
        "result": "ok",
        "capacity": {
            "z1/p": {"cores": {"total": 64, "reserved": 8}, "ram": 1024},
            "z2/p": {"cores": {"total": 32, "reserved": 0}, "ram": 512}
        }
    });
    let r = Report::json_rows(capacity.clone(), "capacity");
    expect_test::expect![[r#"
        KEY   CORES.TOTAL  CORES.RESERVED  RAM
        z1/p  64           8               1024
        z2/p  32           0               512
    "#]]
    .assert_eq(&r.render(Format::Table).unwrap());
    // The data stays whole.
    assert_eq!(
        serde_json::from_str::<Value>(&r.render(Format::Json).unwrap()).unwrap(),
        capacity
    );
    // No such member: the whole answer.
    let r = Report::json_rows(json!({"result": "ok"}), "capacity");
    assert_eq!(
        r.render(Format::Table).unwrap(),
        "KEY     VALUE\nresult  ok\n"
    );
}
