//! A JSON Schema (draft 2020-12) of the homing template format, for editors.
//!
//! The schema checks structure (sections, keys, constraint types and their property names,
//! the two optimization forms) and admits an intrinsic function wherever a value may stand.
//! It is looser than the loader: references, ranges, units and cycles are checked by
//! [`crate::validate`], which also reports line:column.

use serde_json::{Value, json};

use crate::model::{AttributeOp, ConstraintKind, InventoryType, Version, ZoneCategory};
use crate::read::{CANDIDATE_KEYS, LOCATION_KEYS, REQUIREMENT_KEYS, allowed_properties};

/// `{"$ref": "#/$defs/<name>"}`.
fn r(name: &str) -> Value {
    json!({ "$ref": format!("#/$defs/{name}") })
}

/// An object with exactly `keys` as its allowed properties, each of schema `each`.
fn object_of(keys: &[&str], each: &Value) -> Value {
    let props: serde_json::Map<String, Value> = keys
        .iter()
        .map(|k| ((*k).to_owned(), each.clone()))
        .collect();
    json!({ "type": "object", "properties": props, "additionalProperties": false })
}

fn constraint_rules() -> Vec<Value> {
    ConstraintKind::TYPES
        .iter()
        .map(|t| {
            let allowed = allowed_properties(t);
            let mut props = object_of(allowed, &r("any"));
            let specific: Vec<(&str, Value)> = match *t {
                "attribute" => vec![("evaluate", r("attribute_evaluate"))],
                "threshold" => vec![("evaluate", json!({ "type": "array", "minItems": 1, "items": r("threshold_check") }))],
                "hpa" => vec![("evaluate", json!({ "type": "array", "minItems": 1, "items": r("hpa_flavor") }))],
                "zone" => vec![
                    ("qualifier", json!({ "anyOf": [{ "enum": ["same", "different"] }, r("intrinsic")] })),
                    ("category", r("zone_category")),
                ],
                _ => allowed
                    .iter()
                    .filter(|p| matches!(**p, "distance" | "bandwidth" | "latency"))
                    .map(|p| (*p, r("threshold")))
                    .collect(),
            };
            for (k, s) in specific {
                props["properties"][k] = s;
            }
            let required: &[&str] = match *t {
                "attribute" | "threshold" | "hpa" => &["evaluate"],
                "distance_between_demands" => &["distance"],
                "distance_to_location" => &["distance", "location"],
                "instance_fit" | "region_fit" | "vim_fit" => &["controller"],
                "zone" => &["qualifier", "category"],
                "license" => &["id", "key"],
                "network_to_location" => &["location"],
                "capability" | "capacity" => &["template"],
                _ => &[],
            };
            props["required"] = json!(required);
            if *t == "network_between_demands" || *t == "network_to_location" {
                props["anyOf"] =
                    json!([{ "required": ["bandwidth"] }, { "required": ["distance"] }, { "required": ["latency"] }]);
            }
            let needs_properties = !required.is_empty() || t.starts_with("network");
            let mut then = json!({ "properties": { "properties": props } });
            if needs_properties {
                then["required"] = json!(["properties"]);
            }
            json!({ "if": { "properties": { "type": { "const": t } }, "required": ["type"] }, "then": then })
        })
        .collect()
}

/// The JSON Schema of homing templates (draft 2020-12).
pub fn json_schema() -> Value {
    let versions: Vec<&str> = Version::ALL.iter().map(|v| v.as_str()).collect();
    let inventory_types: Vec<&str> = InventoryType::ALL.iter().map(|t| t.as_str()).collect();
    let mut categories: Vec<String> = Vec::new();
    for c in ZoneCategory::ALL {
        categories.push(c.as_str().to_owned());
        categories.push(format!("{}_zone", c.as_str()));
    }
    let operator_keys: Vec<&str> = AttributeOp::NAMES.to_vec();
    let mut requirement = object_of(&REQUIREMENT_KEYS, &r("any"));
    for k in [
        "inventory_provider",
        "region",
        "complex",
        "customer_id",
        "flavor",
    ] {
        requirement["properties"][k] = r("scalar");
    }
    requirement["properties"]["inventory_type"] =
        json!({ "anyOf": [{ "enum": inventory_types }, r("intrinsic")] });
    for k in [
        "attributes",
        "filtering_attributes",
        "passthrough_attributes",
        "default_attributes",
    ] {
        requirement["properties"][k] = json!({ "anyOf": [{ "type": "object" }, r("intrinsic")] });
    }
    for k in ["service_type", "service_id"] {
        requirement["properties"][k] = r("names");
    }
    requirement["properties"]["default_cost"] = r("number");
    for k in ["required_candidates", "excluded_candidates", "candidates"] {
        requirement["properties"][k] = json!({ "anyOf": [{ "type": "array", "items": r("candidate") }, r("candidate"), r("intrinsic")] });
    }
    requirement["properties"]["existing_placement"] =
        json!({ "anyOf": [r("candidate"), r("intrinsic")] });
    let mut candidate = object_of(&CANDIDATE_KEYS, &r("scalar"));
    candidate["properties"]["candidate_id"] = r("names");
    candidate["properties"]["latitude"] = r("number");
    candidate["properties"]["longitude"] = r("number");
    candidate["properties"]["cost"] = r("number");
    candidate["required"] = json!(["candidate_id"]);
    let mut location = object_of(&LOCATION_KEYS, &r("scalar"));
    location["properties"]["latitude"] = r("number");
    location["properties"]["longitude"] = r("number");
    location["properties"]["clli_code"] =
        json!({ "anyOf": [{ "type": "string", "pattern": "^[A-Za-z0-9]{8}$" }, r("intrinsic")] });
    location["minProperties"] = json!(1);

    let mut defs = serde_json::Map::new();
    defs.insert("any".to_owned(), json!({}));
    defs.insert("intrinsic".to_owned(), json!({ "oneOf": [
                { "type": "object", "required": ["get_param"], "additionalProperties": false,
                  "properties": { "get_param": { "anyOf": [{ "type": "string" }, { "type": "array", "minItems": 1 }] } } },
                { "type": "object", "required": ["get_file"], "additionalProperties": false,
                  "properties": { "get_file": { "type": "string" } } }
            ] }));
    defs.insert(
        "scalar".to_owned(),
        json!({ "anyOf": [{ "type": ["string", "number", "boolean"] }, r("intrinsic")] }),
    );
    defs.insert("number".to_owned(), json!({ "anyOf": [{ "type": "number" }, { "type": "string", "pattern": "^\\s*[-+]?[0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?\\s*$" }, r("intrinsic")] }));
    defs.insert("names".to_owned(), json!({ "anyOf": [{ "type": ["string", "number"] }, { "type": "array", "items": r("scalar") }, r("intrinsic")] }));
    defs.insert("threshold".to_owned(), json!({ "anyOf": [{ "type": "number", "minimum": 0 }, { "type": "string", "minLength": 1 }, r("intrinsic")],
                           "description": "[op] number [unit] or low-high unit, e.g. `< 250 km`" }));
    defs.insert(
        "zone_category".to_owned(),
        json!({ "anyOf": [{ "enum": categories }, r("intrinsic")] }),
    );
    defs.insert("requirement".to_owned(), json!(requirement));
    defs.insert("candidate".to_owned(), json!(candidate));
    defs.insert(
        "constraint".to_owned(),
        json!({
            "type": "object",
            "required": ["type", "demands"],
            "additionalProperties": false,
            "properties": {
                "type": { "enum": ConstraintKind::TYPES },
                "demands": r("names"),
                "properties": { "type": ["object", "null"] }
            },
            "allOf": constraint_rules()
        }),
    );
    defs.insert("attribute_evaluate".to_owned(), json!({ "anyOf": [r("intrinsic"), { "type": "object", "minProperties": 1, "additionalProperties": {
                "anyOf": [
                    { "type": ["string", "number", "boolean", "array"] },
                    r("intrinsic"),
                    { "type": "object", "minProperties": 1, "propertyNames": { "enum": operator_keys } }
                ]
            } }] }));
    defs.insert("threshold_check".to_owned(), json!({ "type": "object", "required": ["attribute", "operator", "threshold"], "additionalProperties": false,
                "properties": {
                    "attribute": r("scalar"),
                    "operator": { "anyOf": [{ "enum": ["eq", "ne", "lt", "gt", "lte", "gte"] }, r("intrinsic")] },
                    "threshold": r("number"),
                    "unit": r("scalar")
                } }));
    defs.insert("hpa_flavor".to_owned(), json!({ "type": "object", "required": ["id", "type", "directives", "flavorProperties"], "additionalProperties": false,
                "properties": {
                    "id": r("scalar"), "type": r("scalar"), "directives": { "type": "array" },
                    "flavorProperties": { "type": "array", "minItems": 1, "items": r("hpa_feature") }
                } }));
    defs.insert("hpa_feature".to_owned(), json!({ "type": "object", "additionalProperties": false,
                "required": ["hpa-feature", "hpa-version", "architecture", "mandatory", "hpa-feature-attributes"],
                "properties": {
                    "hpa-feature": r("scalar"), "hpa-version": r("scalar"), "architecture": r("scalar"),
                    "mandatory": r("scalar"), "score": r("number"), "directives": { "type": "array" },
                    "hpa-feature-attributes": { "type": "array", "items": {
                        "type": "object", "additionalProperties": false,
                        "required": ["hpa-attribute-key", "hpa-attribute-value", "operator"],
                        "properties": { "hpa-attribute-key": r("scalar"), "hpa-attribute-value": {}, "operator": r("scalar"), "unit": r("scalar") }
                    } }
                } }));
    defs.insert("reservation".to_owned(), json!({ "type": "object", "required": ["demands"], "additionalProperties": false,
                "properties": { "type": r("scalar"), "demands": r("names"), "properties": { "type": ["object", "null"] } } }));
    defs.insert("reservations".to_owned(), json!({ "anyOf": [
                { "type": "null" },
                { "type": "object", "required": ["service_candidates"], "additionalProperties": false,
                  "properties": { "service_model": {}, "service_candidates": { "type": "object", "additionalProperties": r("reservation") } } },
                { "type": "object", "not": { "anyOf": [{ "required": ["service_candidates"] }, { "required": ["service_model"] }] },
                  "additionalProperties": r("reservation") }
            ] }));
    defs.insert("seed_objective".to_owned(), json!({ "type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": false,
                "properties": { "minimize": r("operand"), "maximize": r("operand") } }));
    defs.insert("operand".to_owned(), json!({ "anyOf": [
                r("number"),
                { "type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": false, "properties": {
                    "sum": { "type": "array", "minItems": 1, "items": r("operand") },
                    "product": { "type": "array", "minItems": 1, "items": r("operand") },
                    "min": { "type": "array", "minItems": 1, "items": r("operand") },
                    "max": { "type": "array", "minItems": 1, "items": r("operand") },
                    "distance_between": { "type": "array", "minItems": 2, "maxItems": 2, "items": r("scalar") },
                    "latency_between": { "type": "array", "minItems": 2, "maxItems": 2, "items": r("scalar") },
                    "cost": r("names"), "hpa_score": r("names"), "aic_version": r("names"),
                    "attribute": { "anyOf": [
                        { "type": "array", "minItems": 2, "maxItems": 2, "items": r("scalar") },
                        { "type": "object", "required": ["demand", "attribute"] }
                    ] }
                } }
            ] }));
    defs.insert("generic_objective".to_owned(), json!({ "type": "object", "required": ["goal", "operation_function"], "additionalProperties": false,
                "properties": {
                    "goal": { "anyOf": [{ "enum": ["minimize", "maximize"] }, r("intrinsic")] },
                    "operation_function": r("operation_function")
                } }));
    defs.insert("operation_function".to_owned(), json!({ "type": "object", "required": ["operator", "operands"], "additionalProperties": false,
                "properties": {
                    "operator": { "enum": ["sum", "min", "max"] },
                    "operands": { "type": "array", "minItems": 1, "items": r("generic_operand") }
                } }));
    defs.insert("generic_operand".to_owned(), json!({ "type": "object", "additionalProperties": false,
                "oneOf": [{ "required": ["function", "params"] }, { "required": ["operation_function"] }],
                "properties": {
                    "function": { "enum": ["distance_between", "latency_between", "cost", "hpa_score", "aic_version", "attribute"] },
                    "params": { "type": "object" },
                    "weight": r("number"),
                    "normalization": { "type": "object", "required": ["start", "end"], "additionalProperties": false,
                        "properties": { "start": r("number"), "end": r("number") } },
                    "operation_function": r("operation_function")
                } }));

    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://berth.invalid/schemas/homing-template.json",
        "title": "Homing template",
        "description": "A homing template (seed 000 format, with the keys ONAP HAS reads). Values may be intrinsic functions ({get_param: ...}, {get_file: ...}).",
        "type": "object",
        "required": ["homing_template_version"],
        "additionalProperties": false,
        "properties": {
            "homing_template_version": { "enum": versions, "description": "Template format version; 2020-08-13 uses the goal/operation_function optimization form." },
            "parameters": { "type": ["object", "null"], "description": "Input parameters, overridable at instantiation." },
            "locations": { "type": ["object", "null"], "additionalProperties": location },
            "demands": { "type": ["object", "null"], "additionalProperties": {
                "anyOf": [{ "type": "array", "minItems": 1, "items": r("requirement") }, r("requirement")]
            } },
            "constraints": { "type": ["object", "null"], "additionalProperties": r("constraint") },
            "reservations": r("reservations"),
            "reservation": r("reservations"),
            "optimization": { "anyOf": [r("seed_objective"), r("generic_objective"), { "type": "null" }] }
        },
        "$defs": defs
    })
}
