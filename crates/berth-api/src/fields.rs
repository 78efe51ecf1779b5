//! Unknown fields in request bodies, named back and never silently dropped: a near miss of a
//! known field (a small edit, or the name a sibling operation uses: `provider` beside
//! `provider-id`, `reservation` beside `reservation-id`) is refused naming both; any other
//! unknown field is refused in Berth's own dialect and, in HAS and Promise bodies (real
//! clients send extras), ignored with a warning in the answer (`warnings`) and a log line.
//! The known fields come from the body's OpenAPI schema, so they cannot drift from the type.

use std::any::TypeId;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, RwLock};

use serde_json::Value;

use crate::dialect::Dialect;

/// Names a body accepts besides its schema's (serde aliases): (schema, alias, field).
const ALIASES: &[(&str, &str, &str)] = &[
    ("CapacitySubscribeBody", "callback-url", "callback"),
    ("ReservationSubscribeBody", "callback-url", "callback"),
    ("InstanceBody", "provider", "provider-id"),
    ("ReservationBody", "provider-id", "provider"),
    ("QueryBody", "provider-id", "provider"),
    ("CapacityBody", "provider-id", "provider"),
    ("CapacitySubscribeBody", "provider-id", "provider"),
];

/// One unknown field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// Its path (`elements.sum`, `flavors[0].vcpu`).
    pub path: String,
    /// The known field it nearly is, if any.
    pub near: Option<String>,
    /// The fields known where it stands.
    pub known: Vec<String>,
}

impl Unknown {
    /// The message for it: a refusal when it is a near miss (or the dialect is strict), else
    /// the warning that it was ignored.
    pub fn message(&self) -> String {
        match &self.near {
            Some(near) => format!("unknown field `{}`; did you mean `{near}`?", self.path),
            None => format!(
                "unknown field `{}` ignored; expected one of {}",
                self.path,
                self.known.join(", ")
            ),
        }
    }

    /// True when the body must be refused for it in `dialect`.
    pub fn refused(&self, dialect: Dialect) -> bool {
        self.near.is_some() || !matches!(dialect, Dialect::Has | Dialect::Promise)
    }
}

/// Every unknown field of `body` against the schema of type `T`, in document order.
pub fn unknown_fields<T: utoipa::ToSchema + 'static>(body: &Value) -> Vec<Unknown> {
    let (schema, doc) = &*schema_of::<T>();
    let mut out = Vec::new();
    doc.walk(body, schema, &T::name(), "", &mut out, 0);
    out
}

/// `T`'s schema and the schemas it refers to (for `$ref`s of nested bodies: `T`'s own, not
/// the whole document's, so that this check needs nothing of the routes), as JSON, built once
/// per type: every write checks its body against them.
fn schema_of<T: utoipa::ToSchema + 'static>() -> Arc<(Value, Components)> {
    type Cache = RwLock<HashMap<TypeId, Arc<(Value, Components)>>>;
    static CACHE: LazyLock<Cache> = LazyLock::new(Default::default);
    let id = TypeId::of::<T>();
    if let Some(hit) = CACHE.read().ok().and_then(|c| c.get(&id).cloned()) {
        return hit;
    }
    let schema = serde_json::to_value(T::schema()).unwrap_or(Value::Null);
    let mut refs = Vec::new();
    T::schemas(&mut refs);
    let doc = Components(
        refs.into_iter()
            .filter_map(|(n, s)| Some((n, serde_json::to_value(s).ok()?)))
            .collect(),
    );
    let built = Arc::new((schema, doc));
    if let Ok(mut c) = CACHE.write() {
        c.entry(id).or_insert_with(|| Arc::clone(&built));
    }
    built
}

/// Component schemas by name.
struct Components(BTreeMap<String, Value>);

impl Components {
    /// The schema `$ref` `r` names.
    fn target(&self, r: &str) -> Option<(&Value, String)> {
        let n = r.rsplit('/').next().unwrap_or_default();
        self.0.get(n).map(|s| (s, n.to_owned()))
    }

    /// The object schema `schema` stands for (through `$ref`, `oneOf`/`anyOf`/`allOf`), with
    /// its component name when it has one.
    fn resolve<'a>(
        &'a self,
        schema: &'a Value,
        name: &str,
        depth: usize,
    ) -> Option<(&'a Value, String)> {
        if depth > 8 {
            return None;
        }
        if schema.get("properties").is_some() {
            return Some((schema, name.to_owned()));
        }
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            let (s, n) = self.target(r)?;
            return self.resolve(s, &n, depth + 1);
        }
        for k in ["oneOf", "anyOf", "allOf"] {
            if let Some(list) = schema.get(k).and_then(Value::as_array)
                && let Some(found) = list.iter().find_map(|s| self.resolve(s, name, depth + 1))
            {
                return Some(found);
            }
        }
        None
    }

    /// The schema of the elements of an array schema (through `oneOf` for an optional one).
    fn items<'a>(&'a self, schema: &'a Value, depth: usize) -> Option<&'a Value> {
        if depth > 8 {
            return None;
        }
        if let Some(i) = schema.get("items") {
            return Some(i);
        }
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            return self.items(self.target(r)?.0, depth + 1);
        }
        ["oneOf", "anyOf", "allOf"].iter().find_map(|k| {
            schema
                .get(*k)
                .and_then(Value::as_array)
                .and_then(|l| l.iter().find_map(|s| self.items(s, depth + 1)))
        })
    }

    fn walk(
        &self,
        body: &Value,
        schema: &Value,
        name: &str,
        path: &str,
        out: &mut Vec<Unknown>,
        depth: usize,
    ) {
        if depth > 16 {
            return;
        }
        match body {
            Value::Object(map) => {
                let Some((obj, name)) = self.resolve(schema, name, 0) else {
                    return;
                };
                let Some(props) = obj["properties"].as_object() else {
                    return;
                };
                let aliases: Vec<(&str, &str)> = ALIASES
                    .iter()
                    .filter(|(s, _, _)| *s == name)
                    .map(|(_, a, f)| (*a, *f))
                    .collect();
                let mut known: Vec<String> = props.keys().cloned().collect();
                known.extend(aliases.iter().map(|(a, _)| (*a).to_owned()));
                known.sort();
                for (k, v) in map {
                    let at = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    let field = aliases
                        .iter()
                        .find(|(a, _)| a == k)
                        .map_or(k.as_str(), |(_, f)| *f);
                    match props.get(field) {
                        Some(s) => self.walk(v, s, "", &at, out, depth + 1),
                        None => out.push(Unknown {
                            path: at,
                            near: near_miss(k, &known).map(str::to_owned),
                            known: known.clone(),
                        }),
                    }
                }
            }
            Value::Array(list) => {
                if let Some(item) = self.items(schema, 0) {
                    for (i, v) in list.iter().enumerate() {
                        self.walk(v, item, "", &format!("{path}[{i}]"), out, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The known field `key` nearly is: one it names with `-id`/`_id` added or dropped (the name
/// a sibling operation uses), else the nearest within one edit per three characters (at
/// least one), separators and case ignored.
pub fn near_miss<'a>(key: &str, known: &'a [String]) -> Option<&'a str> {
    let fold = |s: &str| -> String {
        s.chars()
            .filter(|c| !matches!(c, '-' | '_' | ' '))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let f = fold(key);
    let stem = |s: &str| -> String {
        let s = fold(s);
        s.strip_suffix("id").map_or(s.clone(), str::to_owned)
    };
    if let Some(k) = known.iter().find(|k| fold(k) == f || stem(k) == stem(key)) {
        return Some(k);
    }
    let len = f.chars().count();
    let limit = (len / 3).max(1);
    known
        .iter()
        .map(|k| (berth_doc::edit_distance(&f, &fold(k)), k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| k.as_str())
}

tokio::task_local! {
    /// The warnings of the request being answered (see [`collect`]).
    static WARNINGS: RefCell<Vec<String>>;
}

/// Keeps a warning for the answer of the request being handled (dropped outside
/// [`collect`]).
pub fn warn(message: String) {
    let _ = WARNINGS.try_with(|w| w.borrow_mut().push(message));
}

/// Middleware: the warnings kept while handling a request are added to its JSON answer as
/// `warnings: [..]` (an object answer only; others are left as they are).
pub async fn collect(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let (resp, warnings) = WARNINGS
        .scope(RefCell::new(Vec::new()), async {
            let resp = next.run(req).await;
            let w = WARNINGS.with(|w| std::mem::take(&mut *w.borrow_mut()));
            (resp, w)
        })
        .await;
    if warnings.is_empty() {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 16 << 20).await else {
        return axum::response::Response::from_parts(parts, axum::body::Body::empty());
    };
    let text = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(mut m)) => {
            m.insert("warnings".into(), Value::from(warnings));
            parts.headers.remove(axum::http::header::CONTENT_LENGTH);
            Value::Object(m).to_string().into_bytes()
        }
        _ => bytes.to_vec(),
    };
    axum::response::Response::from_parts(parts, axum::body::Body::from(text))
}

#[cfg(test)]
mod tests;
