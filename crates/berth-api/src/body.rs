//! Request bodies: strict JSON (a repeated key is refused, not silently overwritten) decoded
//! with the field path of the first problem, so every 400 names where the body is wrong.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// Where a body is wrong: the field path (`demands.vG[0]`, empty for the whole body),
/// line:column (1-based, 0 when unknown) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyProblem {
    /// Field path.
    pub path: String,
    /// Line.
    pub line: usize,
    /// Column.
    pub column: usize,
    /// Message.
    pub message: String,
}

/// Decodes `bytes` as `T`, refusing duplicate object keys anywhere in the document.
pub fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, BodyProblem> {
    check_duplicates(bytes)?;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = render_path(e.path());
        let inner = e.into_inner();
        located(path, &inner)
    })?;
    de.end().map_err(|e| located(String::new(), &e))?;
    Ok(value)
}

fn located(path: String, e: &serde_json::Error) -> BodyProblem {
    let message = strip_position(&e.to_string());
    let message = if path.is_empty() {
        message
    } else {
        format!("`{path}`: {message}")
    };
    BodyProblem {
        path,
        line: e.line(),
        column: e.column(),
        message,
    }
}

/// serde_json appends " at line L column C"; the position travels in its own fields.
fn strip_position(s: &str) -> String {
    match s.rfind(" at line ") {
        Some(i) if s[i..].contains(" column ") => s[..i].to_owned(),
        _ => s.to_owned(),
    }
}

/// `a.b[2].c` from serde_path_to_error's segments (`?` segments are dropped).
fn render_path(p: &serde_path_to_error::Path) -> String {
    let mut out = String::new();
    for seg in p.iter() {
        match seg {
            serde_path_to_error::Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            serde_path_to_error::Segment::Map { key } => push_key(&mut out, key),
            serde_path_to_error::Segment::Enum { variant } => push_key(&mut out, variant),
            serde_path_to_error::Segment::Unknown => {}
        }
    }
    out
}

fn push_key(out: &mut String, key: &str) {
    if !out.is_empty() {
        out.push('.');
    }
    out.push_str(key);
}

fn check_duplicates(bytes: &[u8]) -> Result<(), BodyProblem> {
    let found = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let seed = Node {
        path: String::new(),
        duplicate: &found,
    };
    match seed.deserialize(&mut de) {
        Ok(()) => Ok(()),
        Err(e) => match found.into_inner() {
            Some(path) => Err(BodyProblem {
                message: format!("duplicate key `{path}`; expected each key once per object"),
                path,
                line: e.line(),
                column: e.column(),
            }),
            // Syntax errors are reported by the decoding pass, with the same position.
            None => Ok(()),
        },
    }
}

/// Walks any JSON value, remembering the path of the first repeated key.
struct Node<'a> {
    path: String,
    duplicate: &'a RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            let child = Node {
                path: format!("{}[{i}]", self.path),
                duplicate: self.duplicate,
            };
            if seq.next_element_seed(child)?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let mut path = self.path.clone();
            push_key(&mut path, &key);
            if !seen.insert(key) {
                *self.duplicate.borrow_mut() = Some(path);
                return Err(de::Error::custom("duplicate key"));
            }
            map.next_value_seed(Node {
                path,
                duplicate: self.duplicate,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
