//! The fixed policy JSON Schema and the translation of its errors into diagnostics.

use std::sync::OnceLock;

use berth_doc::{Diagnostic, Diagnostics, Path, Pos, Value};
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::{Location, LocationSegment};
use jsonschema::{JsonType, ValidationError, Validator};

use crate::error::CloudPolicyError;

/// The text of the fixed cloud selection policy schema (JSON Schema draft 2020-12).
pub const POLICY_SCHEMA: &str = include_str!("../schema/cloud-selection-policy.schema.json");

/// The schema parsed and compiled once; an error means the built-in schema is broken.
fn compiled() -> Result<&'static (serde_json::Value, Validator), CloudPolicyError> {
    static CELL: OnceLock<Result<(serde_json::Value, Validator), String>> = OnceLock::new();
    let built = CELL.get_or_init(|| {
        let schema: serde_json::Value =
            serde_json::from_str(POLICY_SCHEMA).map_err(|e| e.to_string())?;
        let validator = jsonschema::draft202012::new(&schema).map_err(|e| e.to_string())?;
        Ok((schema, validator))
    });
    built.as_ref().map_err(|reason| CloudPolicyError::Schema {
        reason: reason.clone(),
    })
}

/// The fixed policy schema as JSON (for publishing, e.g. by an API).
pub fn policy_schema() -> Result<serde_json::Value, CloudPolicyError> {
    compiled().map(|(schema, _)| schema.clone())
}

/// Validates `doc` against the fixed schema and adds one diagnostic per problem.
pub(crate) fn check(doc: &Value, diags: &mut Diagnostics) -> Result<(), CloudPolicyError> {
    let (schema, validator) = compiled()?;
    let instance = doc.to_json();
    for error in validator.iter_errors(&instance) {
        translate(&error, schema, doc, diags);
    }
    Ok(())
}

/// Where a JSON pointer points in the spanned document.
struct Located<'a> {
    path: Path,
    value: Option<&'a Value>,
}

fn locate<'a>(doc: &'a Value, location: &Location) -> Located<'a> {
    let mut path = Path::root();
    let mut value = Some(doc);
    for seg in location.segments() {
        match seg {
            LocationSegment::Property(name) => {
                value = value.and_then(Value::as_map).and_then(|m| m.get(&name));
                path = path.key(name.as_ref());
            }
            LocationSegment::Index(i) => {
                value = value.and_then(Value::as_seq).and_then(|s| s.get(i));
                path = path.index(i);
            }
        }
    }
    Located { path, value }
}

fn pos_of(value: Option<&Value>) -> Pos {
    value.map_or(Pos::UNKNOWN, |v| v.pos)
}

/// The schema node at a schema location.
fn schema_at<'s>(
    schema: &'s serde_json::Value,
    location: &Location,
) -> Option<&'s serde_json::Value> {
    let mut node = schema;
    for seg in location.segments() {
        node = match seg {
            LocationSegment::Property(name) => node.get(name.as_ref())?,
            LocationSegment::Index(i) => node.get(i)?,
        };
    }
    Some(node)
}

fn type_word(t: JsonType) -> &'static str {
    match t {
        JsonType::Null => "null",
        JsonType::Boolean => "a boolean",
        JsonType::Integer => "an integer",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "a list",
        JsonType::Object => "a mapping",
    }
}

fn found(value: Option<&Value>) -> String {
    match value {
        Some(v) => match v.scalar_text() {
            Some(text) if !v.is_null() => format!("`{text}`"),
            _ => a_type(v),
        },
        None => "nothing".to_owned(),
    }
}

/// The value's type with its article: `a string`, `an integer`.
pub(crate) fn a_type(v: &Value) -> String {
    let name = v.type_name();
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

fn quoted_list(values: &[serde_json::Value]) -> String {
    values
        .iter()
        .map(|v| match v {
            serde_json::Value::String(s) => format!("`{s}`"),
            other => format!("`{other}`"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn translate(
    error: &ValidationError<'_>,
    schema: &serde_json::Value,
    doc: &Value,
    diags: &mut Diagnostics,
) {
    let at = locate(doc, error.instance_path());
    let pos = pos_of(at.value);
    let message = match error.kind() {
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => type_word(*t).to_owned(),
                TypeKind::Multiple(set) => {
                    set.iter().map(type_word).collect::<Vec<_>>().join(" or ")
                }
            };
            let actual = at.value.map_or_else(|| "nothing".to_owned(), a_type);
            // The seed writes lists as Python sets (`{"VMware VIO"}`); YAML reads that
            // as a mapping of null values.
            let set_like = at
                .value
                .and_then(Value::as_map)
                .filter(|m| !m.is_empty() && m.iter().all(|(_, v)| v.is_null()))
                .map(|m| m.iter().map(|(k, _)| k.name.as_str()).collect::<Vec<_>>());
            match (kind, set_like) {
                (TypeKind::Single(JsonType::Array), Some(names)) => format!(
                    "expected {expected}; found {actual} (a Python-style set); write `[{}]`",
                    names.join(", ")
                ),
                _ => format!("expected {expected}; found {actual}"),
            }
        }
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            format!("missing required field `{name}`")
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let mut parent = error.schema_path().segments().collect::<Vec<_>>();
            parent.pop();
            let allowed = parent.into_iter().collect::<Location>().join("properties");
            let names = schema_at(schema, &allowed)
                .and_then(serde_json::Value::as_object)
                .map(|props| {
                    props
                        .keys()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            let map = at.value.and_then(Value::as_map);
            for name in unexpected {
                let key_pos = map.and_then(|m| m.entry(name)).map_or(pos, |(k, _)| k.pos);
                diags.error(
                    &at.path.key(name.as_str()),
                    key_pos,
                    format!("unknown field `{name}`; expected one of {names}"),
                );
            }
            return;
        }
        ValidationErrorKind::Enum { options } => match options.as_array() {
            Some(items) => format!(
                "expected one of {}; found {}",
                quoted_list(items),
                found(at.value)
            ),
            None => format!("expected {options}; found {}", found(at.value)),
        },
        ValidationErrorKind::Constant { expected_value } => {
            format!("expected `{expected_value}`; found {}", found(at.value))
        }
        ValidationErrorKind::Minimum { limit } => {
            format!(
                "expected a number of at least {limit}; found {}",
                found(at.value)
            )
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!(
                "expected a number greater than {limit}; found {}",
                found(at.value)
            )
        }
        ValidationErrorKind::Maximum { limit } => {
            format!(
                "expected a number of at most {limit}; found {}",
                found(at.value)
            )
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!(
                "expected a number less than {limit}; found {}",
                found(at.value)
            )
        }
        ValidationErrorKind::MinItems { limit } => {
            format!("expected at least {limit} item(s); found an empty list")
        }
        ValidationErrorKind::MinLength { limit: 1 } => "expected a non-empty string".to_owned(),
        ValidationErrorKind::MinLength { limit } => {
            format!("expected a string of at least {limit} characters")
        }
        ValidationErrorKind::UniqueItems => {
            let items = at.value.and_then(Value::as_seq).unwrap_or_default();
            let mut seen = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let json = item.to_json();
                if seen.contains(&json) {
                    diags.error(
                        &at.path.index(i),
                        item.pos,
                        format!(
                            "duplicate item {}; expected unique items",
                            found(Some(item))
                        ),
                    );
                    return;
                }
                seen.push(json);
            }
            "expected unique items".to_owned()
        }
        ValidationErrorKind::Not { schema: forbidden } => {
            // Point at the forbidden field when the `not` names one.
            let field = forbidden
                .get("required")
                .and_then(serde_json::Value::as_array)
                .and_then(|r| r.first())
                .and_then(serde_json::Value::as_str);
            let message = forbidden
                .get("description")
                .and_then(serde_json::Value::as_str)
                .map_or_else(
                    || format!("expected a value not matching {forbidden}"),
                    str::to_owned,
                );
            let map = at.value.and_then(Value::as_map);
            match field.and_then(|f| map.and_then(|m| m.entry(f))) {
                Some((key, _)) => diags.error(&at.path.key(key.name.as_str()), key.pos, message),
                None => diags.error(&at.path, pos, message),
            }
            return;
        }
        _ => error.to_string(),
    };
    diags.push(Diagnostic::error(&at.path, pos, message));
}
