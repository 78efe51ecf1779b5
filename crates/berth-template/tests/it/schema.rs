//! The JSON Schema accepts every valid fixture and rejects broken shapes.

use berth_template::json_schema;

fn validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&json_schema())
        .expect("the schema is a valid draft 2020-12 schema")
}

fn as_json(text: &str) -> serde_json::Value {
    berth_doc::parse(text).expect("fixture parses").to_json()
}

#[test]
fn schema_accepts_every_fixture() {
    let v = validator();
    for (name, text) in super::fixtures::valid_fixtures() {
        let doc = as_json(&text);
        let errors: Vec<String> = v
            .iter_errors(&doc)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
    }
}

#[test]
fn schema_rejects_broken_shapes() {
    let v = validator();
    let dir = super::fixtures::dir().join("invalid");
    for name in [
        "seed_structure_skeleton.yaml",
        "seed_constraint_schema.yaml",
    ] {
        let doc = as_json(&std::fs::read_to_string(dir.join(name)).unwrap());
        assert!(!v.is_valid(&doc), "{name} should not validate");
    }
    let cases = [
        serde_json::json!({"homing_template_version": "2017-10-10", "extra": 1}),
        serde_json::json!({"homing_template_version": "2019-01-01"}),
        serde_json::json!({"homing_template_version": "2017-10-10",
            "constraints": {"c": {"type": "zone", "demands": ["a", "b"], "properties": {"qualifier": "near", "category": "region"}}}}),
        serde_json::json!({"homing_template_version": "2017-10-10",
            "constraints": {"c": {"type": "network_between_demands", "demands": ["a", "b"], "properties": {}}}}),
        serde_json::json!({"homing_template_version": "2017-10-10",
            "demands": {"d": [{"inventory_provider": "aai", "inventory_type": "clouds"}]}}),
        serde_json::json!({"homing_template_version": "2020-08-13",
            "optimization": {"goal": "minimize", "operation_function": {"operator": "avg", "operands": []}}}),
    ];
    for doc in cases {
        assert!(!v.is_valid(&doc), "{doc} should not validate");
    }
}
