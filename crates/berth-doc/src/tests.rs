//! Tests of parsing, scalar typing, positions, limits and paths.

use proptest::prelude::*;

use crate::{Kind, Limits, Path, Pos, Value, parse, parse_with};

fn get<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.as_map().and_then(|m| m.get(key)).unwrap()
}

#[test]
fn core_schema_scalars() {
    let doc = parse(
        "a: 2017-10-10\nb: 1.1\nc: 42\nd: True\ne: ~\nf: '7'\ng: 0x1F\nh: -3.5e2\ni: .inf\nj: yes\nk:\n",
    )
    .unwrap();
    assert_eq!(get(&doc, "a").as_str(), Some("2017-10-10"));
    assert_eq!(get(&doc, "b").as_f64(), Some(1.1));
    assert_eq!(get(&doc, "c").as_i64(), Some(42));
    assert_eq!(get(&doc, "d").as_bool(), Some(true));
    assert!(get(&doc, "e").is_null());
    assert_eq!(get(&doc, "f").as_str(), Some("7"));
    assert_eq!(get(&doc, "g").as_i64(), Some(31));
    assert_eq!(get(&doc, "h").as_f64(), Some(-350.0));
    assert_eq!(get(&doc, "i").as_f64(), Some(f64::INFINITY));
    assert_eq!(get(&doc, "j").as_str(), Some("yes"));
    assert!(get(&doc, "k").is_null());
    assert_eq!(get(&doc, "b").scalar_text().as_deref(), Some("1.1"));
}

#[test]
fn positions_are_one_based_lines_and_columns() {
    let doc = parse("top:\n  inner:\n    - x\n    - {y: 2}\n").unwrap();
    let top = get(&doc, "top");
    let (key, inner) = top.as_map().unwrap().entry("inner").unwrap();
    assert_eq!(key.pos, Pos { line: 2, column: 3 });
    let items = inner.as_seq().unwrap();
    assert_eq!(items[0].pos, Pos { line: 3, column: 7 });
    assert_eq!(
        get(&items[1], "y").pos,
        Pos {
            line: 4,
            column: 11
        }
    );
}

#[test]
fn json_is_accepted_even_with_tabs() {
    let doc = parse("{\n\t\"a\": [1, 2.5, \"x\"],\n\t\"b\": null\n}").unwrap();
    assert_eq!(get(&doc, "a").as_seq().map(<[Value]>::len), Some(3));
    assert!(get(&doc, "b").is_null());
}

#[test]
fn duplicate_keys_are_errors_with_position() {
    let err = parse("a: 1\nb: 2\na: 3\n").unwrap_err();
    assert_eq!(err.message, "duplicate key `a`");
    assert_eq!((err.line, err.column), (3, 1));
}

#[test]
fn syntax_errors_carry_position() {
    let err = parse("a: [1, 2\nb: 3\n").unwrap_err();
    assert!(err.message.starts_with("invalid YAML"), "{}", err.message);
    assert!(err.line >= 1);
}

#[test]
fn several_documents_are_refused() {
    let err = parse("a: 1\n---\nb: 2\n").unwrap_err();
    assert!(err.message.contains("single document"), "{}", err.message);
}

#[test]
fn aliases_expand_and_bombs_are_bounded() {
    let doc = parse("base: &b {x: 1}\nuse: *b\n").unwrap();
    assert_eq!(get(&doc, "use").to_json(), serde_json::json!({"x": 1}));
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let prev = (b'a' + i - 1) as char;
        let name = (b'a' + i) as char;
        bomb.push_str(&format!("{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    let err = parse(&bomb).unwrap_err();
    assert!(
        err.message.contains("more than 1000000 nodes"),
        "{}",
        err.message
    );
}

#[test]
fn depth_is_bounded_without_recursion() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let err = parse(&deep).unwrap_err();
    assert!(
        err.message.contains("nesting deeper than 128"),
        "{}",
        err.message
    );
    // Far deeper input is refused by the scanner's own guard before a tree is built.
    let deeper = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let err = parse(&deeper).unwrap_err();
    assert!(err.message.contains("nesting deeper") || err.message.contains("recursion limit"));
    let limits = Limits {
        max_depth: 3,
        ..Limits::default()
    };
    assert!(parse_with("a: {b: {c: 1}}", &limits).is_ok());
    assert!(parse_with("a: {b: {c: [1]}}", &limits).is_err());
}

#[test]
fn size_is_bounded() {
    let limits = Limits {
        max_bytes: 4,
        ..Limits::default()
    };
    let err = parse_with("a: 12345", &limits).unwrap_err();
    assert_eq!(err.message, "document is 8 bytes; expected at most 4");
}

#[test]
fn empty_document_is_null() {
    assert!(parse("").unwrap().is_null());
    assert!(parse("# only a comment\n").unwrap().is_null());
}

#[test]
fn non_scalar_keys_are_refused() {
    let err = parse("? [a, b]\n: 1\n").unwrap_err();
    assert_eq!(err.message, "mapping key is a list; expected a scalar");
}

#[test]
fn paths_display_like_field_paths() {
    let p = Path::root()
        .key("constraints")
        .key("vnf_distance")
        .key("properties")
        .key("distance");
    assert_eq!(
        p.to_string(),
        "constraints.vnf_distance.properties.distance"
    );
    assert_eq!(
        Path::root().key("demands").key("vG").index(0).to_string(),
        "demands.vG[0]"
    );
    assert_eq!(Path::root().key("a.b").key("c").to_string(), "\"a.b\".c");
    assert_eq!(Path::root().to_string(), "");
}

#[test]
fn diagnostic_display_forms() {
    let p = Path::root().key("demands");
    let d = crate::Diagnostic::error(&p, Pos { line: 3, column: 5 }, "expected a mapping");
    assert_eq!(d.to_string(), "demands (3:5): expected a mapping");
    let d = crate::Diagnostic::error(&p, Pos::UNKNOWN, "expected a mapping");
    assert_eq!(d.to_string(), "demands: expected a mapping");
    assert_eq!(d.to_json()["severity"], "error");
}

fn arb_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(serde_json::Value::from),
        (-1e9f64..1e9).prop_map(serde_json::Value::from),
        "[a-zA-Z0-9 _.:-]{0,12}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..5)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn json_text_round_trips(v in arb_json()) {
        let text = serde_json::to_string_pretty(&v).unwrap();
        let parsed = parse(&text).unwrap();
        prop_assert_eq!(parsed.to_json(), v.clone());
        prop_assert_eq!(Value::from_json(&v).to_json(), v);
    }

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
        // Either a tree or a positioned error; both are fine, a panic is not.
        match parse(&s) {
            Ok(v) => prop_assert!(v.node_count() >= 1),
            Err(d) => prop_assert!(!d.message.is_empty()),
        }
    }

    #[test]
    fn plain_scalar_kinds_match_rust_parsing(i in any::<i64>(), f in -1e12f64..1e12) {
        let doc = parse(&format!("i: {i}\nf: {f:?}\n")).unwrap();
        prop_assert_eq!(get(&doc, "i").as_i64(), Some(i));
        let parsed = get(&doc, "f");
        prop_assert!(matches!(parsed.kind, Kind::Float(_) | Kind::Int(_)));
        prop_assert_eq!(parsed.as_f64(), Some(f));
    }
}

#[test]
fn large_mappings_stay_correct_past_the_index_threshold() {
    let mut text = String::new();
    for i in 0..100 {
        text.push_str(&format!("k{i}: {i}\n"));
    }
    let doc = parse(&text).unwrap();
    let m = doc.as_map().unwrap();
    assert_eq!(m.len(), 100);
    for i in 0..100 {
        assert_eq!(m.get(&format!("k{i}")).and_then(Value::as_i64), Some(i));
    }
    assert!(m.get("k100").is_none());
    text.push_str("k50: again\n");
    assert_eq!(parse(&text).unwrap_err().message, "duplicate key `k50`");
}

#[test]
fn unclosed_flow_collections_name_where_they_were_opened() {
    let msg = |text: &str| parse(text).map(|_| ()).unwrap_err().to_string();
    expect_test::expect![[r#"
        (5:1): invalid YAML: invalid indentation; the flow sequence `[` opened at 3:7 is never closed (expected `]`)
    "#]]
    .assert_eq(&format!(
        "{}\n",
        msg("version: 1\ndemands:\n  vG: [{inventory_provider: aai,\n    inventory_type: cloud}\nconstraints: {}\n")
    ));
    expect_test::expect![[r#"
        invalid YAML: invalid indentation in flow construct; the flow mapping `{` opened at 2:9 is never closed (expected `}`)
    "#]]
    .assert_eq(&format!(
        "{}\n",
        parse("a: 1\nparams: {x: 1, y: \"}\"\nother: 2\n").unwrap_err().message
    ));
    // Closed collections and brackets inside scalars or comments are not blamed.
    let e = parse("a: [1, 2]\nb: 'x[' # {\nc: [\n").unwrap_err();
    assert!(e.message.contains("`[` opened at 3:4"), "{}", e.message);
    let e = parse("a: {b: [1, 2]}\nc: d: e\n").unwrap_err();
    assert!(!e.message.contains("opened at"), "{}", e.message);
    // JSON text too, with brackets inside strings ignored.
    let e = parse("{\"demands\": {\"vG\": [\n  {\"x\": \"[{\"}\n}\n").unwrap_err();
    assert!(e.message.contains("`[` opened at 1:20"), "{}", e.message);
}
