//! Strict body decoding: duplicate keys and field paths.

use serde::Deserialize;
use serde_json::Value;

use super::{BodyProblem, decode};

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Plan {
    name: String,
    num_solution: Option<u64>,
    template: Value,
}

#[test]
fn duplicate_top_level_key_is_named_with_its_position() {
    let body = br#"{"name": "p", "template": {"demands": {}},
  "name": "q"}"#;
    let e = decode::<Plan>(body).unwrap_err();
    assert_eq!(e.path, "name");
    assert_eq!((e.line, e.column), (2, 8));
    assert_eq!(
        e.message,
        "duplicate key `name`; expected each key once per object"
    );
}

#[test]
fn duplicate_nested_key_inside_an_untyped_value_is_found() {
    let body = br#"{"name": "p", "template": {"demands": {"a": 1}, "parameters": [{"x": 1}, {"y": 2, "y": 3}], "demands": {}}}"#;
    let e = decode::<Plan>(body).unwrap_err();
    assert_eq!(e.path, "template.parameters[1].y");
}

#[test]
fn the_same_key_in_sibling_objects_is_fine() {
    let body = br#"{"name": "p", "template": {"a": {"k": 1}, "b": {"k": 2}}}"#;
    let p = decode::<Plan>(body).unwrap();
    assert_eq!(p.template["b"]["k"], 2);
}

#[test]
fn a_wrong_type_names_the_field_path() {
    let body = br#"{"name": "p", "template": {}, "num_solution": "x"}"#;
    let e = decode::<Plan>(body).unwrap_err();
    assert_eq!(e.path, "num_solution");
    assert!(
        e.message
            .starts_with("`num_solution`: invalid type: string \"x\", expected u64"),
        "{}",
        e.message
    );
    assert_eq!(e.line, 1);
}

#[test]
fn syntax_errors_keep_their_position_and_trailing_text_is_refused() {
    let e = decode::<Plan>(b"{\"name\": \"p\",\n \"template\": {]}").unwrap_err();
    assert_eq!((e.path.as_str(), e.line), ("template", 2));
    let e = decode::<Plan>(br#"{"name": "p", "template": {}} {}"#).unwrap_err();
    assert_eq!(
        e,
        BodyProblem {
            path: String::new(),
            line: 1,
            column: 31,
            message: "trailing characters".into()
        }
    );
}

#[test]
fn missing_field_is_reported_for_the_object() {
    let e = decode::<Plan>(br#"{"template": {}}"#).unwrap_err();
    assert_eq!(e.message, "missing field `name`");
}
