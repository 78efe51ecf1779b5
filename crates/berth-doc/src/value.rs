//! The spanned value tree.

use std::fmt;

/// A position in the source text: 1-based line and column (in characters); `0:0` is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// 1-based column in characters, 0 when unknown.
    pub column: u32,
}

impl Pos {
    /// A position that is not known (values built from JSON objects or in code).
    pub const UNKNOWN: Pos = Pos { line: 0, column: 0 };

    /// Whether the position points into a source text.
    pub fn is_known(&self) -> bool {
        self.line > 0
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A node of a parsed document and where it stood.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// What the node is.
    pub kind: Kind,
    /// Where it started.
    pub pos: Pos,
}

/// The shape of a [`Value`].
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `null`, `~` or nothing.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer that fits `i64`.
    Int(i64),
    /// Any other number.
    Float(f64),
    /// A string (every quoted scalar, and plain scalars that are not null, bool or number).
    Str(String),
    /// A list.
    Seq(Vec<Value>),
    /// A mapping.
    Map(Map),
}

/// A mapping key and where it stood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// The key as text.
    pub name: String,
    /// Where the key started.
    pub pos: Pos,
}

/// Mappings up to this many entries are searched linearly.
const LINEAR_SCAN_MAX: usize = 16;

/// A mapping in document order, keys unique.
#[derive(Debug, Clone, Default)]
pub struct Map {
    entries: Vec<(Key, Value)>,
    // Built once a mapping outgrows a linear scan, so a huge mapping cannot make loading
    // quadratic while the many small ones cost no hash table.
    index: Option<std::collections::HashMap<String, usize>>,
}

impl PartialEq for Map {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl Map {
    /// The value under `k`.
    pub fn get(&self, k: &str) -> Option<&Value> {
        self.entry(k).map(|(_, v)| v)
    }

    /// The key and value under `k`.
    pub fn entry(&self, k: &str) -> Option<(&Key, &Value)> {
        let found = match &self.index {
            Some(index) => self.entries.get(*index.get(k)?),
            None => self.entries.iter().find(|(key, _)| key.name == k),
        };
        found.map(|(key, value)| (key, value))
    }

    /// Entries in document order.
    pub fn iter(&self) -> impl Iterator<Item = (&Key, &Value)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Appends an entry, replacing an existing one of the same name in place.
    pub fn insert(&mut self, key: Key, value: Value) {
        let existing = match &self.index {
            Some(index) => index.get(&key.name).copied(),
            None => self.entries.iter().position(|(k, _)| k.name == key.name),
        };
        match existing.and_then(|i| self.entries.get_mut(i)) {
            Some(slot) => *slot = (key, value),
            None => {
                if let Some(index) = &mut self.index {
                    index.insert(key.name.clone(), self.entries.len());
                }
                self.entries.push((key, value));
                if self.index.is_none() && self.entries.len() > LINEAR_SCAN_MAX {
                    let index = self.entries.iter().enumerate();
                    self.index = Some(index.map(|(i, (k, _))| (k.name.clone(), i)).collect());
                }
            }
        }
    }
}

impl Value {
    /// A value with an unknown position.
    pub fn new(kind: Kind) -> Self {
        Value {
            kind,
            pos: Pos::UNKNOWN,
        }
    }

    /// The string, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The number, if this is an integer or a float.
    pub fn as_f64(&self) -> Option<f64> {
        match self.kind {
            Kind::Int(i) => Some(i as f64),
            Kind::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The integer, if this is one.
    pub fn as_i64(&self) -> Option<i64> {
        match self.kind {
            Kind::Int(i) => Some(i),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self.kind {
            Kind::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The items, if this is a list.
    pub fn as_seq(&self) -> Option<&[Value]> {
        match &self.kind {
            Kind::Seq(items) => Some(items),
            _ => None,
        }
    }

    /// The mapping, if this is one.
    pub fn as_map(&self) -> Option<&Map> {
        match &self.kind {
            Kind::Map(m) => Some(m),
            _ => None,
        }
    }

    /// Whether this is null.
    pub fn is_null(&self) -> bool {
        matches!(self.kind, Kind::Null)
    }

    /// The name of the shape, for messages ("expected a list, found a mapping").
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            Kind::Null => "null",
            Kind::Bool(_) => "boolean",
            Kind::Int(_) => "integer",
            Kind::Float(_) => "number",
            Kind::Str(_) => "string",
            Kind::Seq(_) => "list",
            Kind::Map(_) => "mapping",
        }
    }

    /// The text form of a scalar (`1.1` -> "1.1", `true` -> "true", null -> "null").
    pub fn scalar_text(&self) -> Option<String> {
        match &self.kind {
            Kind::Null => Some("null".to_owned()),
            Kind::Bool(b) => Some(b.to_string()),
            Kind::Int(i) => Some(i.to_string()),
            Kind::Float(f) => Some(format_float(*f)),
            Kind::Str(s) => Some(s.clone()),
            Kind::Seq(_) | Kind::Map(_) => None,
        }
    }

    /// Nodes in this subtree, counting this one.
    pub fn node_count(&self) -> usize {
        let mut count = 0usize;
        let mut todo = vec![self];
        while let Some(v) = todo.pop() {
            count += 1;
            match &v.kind {
                Kind::Seq(items) => todo.extend(items.iter()),
                Kind::Map(m) => todo.extend(m.iter().map(|(_, v)| v)),
                _ => {}
            }
        }
        count
    }

    /// Converts to JSON; non-finite floats become null.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.kind {
            Kind::Null => J::Null,
            Kind::Bool(b) => J::Bool(*b),
            Kind::Int(i) => J::from(*i),
            Kind::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            Kind::Str(s) => J::String(s.clone()),
            Kind::Seq(items) => J::Array(items.iter().map(Value::to_json).collect()),
            Kind::Map(m) => J::Object(
                m.iter()
                    .map(|(k, v)| (k.name.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }

    /// Builds a tree from JSON; positions are unknown.
    pub fn from_json(v: &serde_json::Value) -> Value {
        use serde_json::Value as J;
        let kind = match v {
            J::Null => Kind::Null,
            J::Bool(b) => Kind::Bool(*b),
            J::Number(n) => match n.as_i64() {
                Some(i) => Kind::Int(i),
                None => Kind::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            J::String(s) => Kind::Str(s.clone()),
            J::Array(items) => Kind::Seq(items.iter().map(Value::from_json).collect()),
            J::Object(o) => {
                let mut m = Map::default();
                for (k, v) in o {
                    m.insert(
                        Key {
                            name: k.clone(),
                            pos: Pos::UNKNOWN,
                        },
                        Value::from_json(v),
                    );
                }
                Kind::Map(m)
            }
        };
        Value::new(kind)
    }
}

fn format_float(f: f64) -> String {
    if f.is_nan() {
        ".nan".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 {
            ".inf".to_owned()
        } else {
            "-.inf".to_owned()
        }
    } else {
        // `{}` on f64 is the shortest text that reads back to the same value.
        format!("{f}")
    }
}
