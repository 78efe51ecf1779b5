//! Spanned YAML/JSON documents and path + line:column diagnostics.
//!
//! Every Berth input format (homing templates, topologies, inventories) is loaded in two
//! steps: [`parse`] turns text into a [`Value`] tree in which every node remembers where it
//! stood ([`Pos`]), then a format-specific loader walks the tree and reports **all** problems
//! as [`Diagnostic`]s that name the field [`Path`] and the line:column.
//!
//! Invariants:
//! - Parsing never panics and never recurses on input depth: nesting beyond
//!   [`Limits::max_depth`], alias expansion beyond [`Limits::max_nodes`] and input beyond
//!   [`Limits::max_bytes`] are errors, so a "billion laughs" document is refused quickly.
//! - Mappings keep document order; a duplicate key is an error, never a silent overwrite.
//! - Scalars follow the YAML 1.2 core schema: `2017-10-10` is a string, `1.1` a number.
//!
//! ```
//! let doc = berth_doc::parse("demands:\n  vG:\n    - inventory_provider: aai\n").unwrap();
//! let provider = doc.as_map().and_then(|m| m.get("demands"));
//! assert_eq!(provider.map(|v| v.pos.line), Some(2));
//! ```

mod diag;
mod flow;
mod path;
mod suggest;
mod value;

#[cfg(test)]
mod tests;

pub use diag::{Diagnostic, Diagnostics, Severity};
pub use path::{Path, Seg};
pub use suggest::{closest, edit_distance};
pub use value::{Key, Kind, Map, Pos, Value};

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

/// Resource bounds applied while parsing untrusted text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Deepest nesting of lists and mappings.
    pub max_depth: usize,
    /// Most nodes in the tree, counted after alias expansion.
    pub max_nodes: usize,
    /// Largest input accepted, in bytes.
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 128,
            max_nodes: 1_000_000,
            max_bytes: 64 * 1024 * 1024,
        }
    }
}

/// Parses YAML 1.2 (JSON accepted) with the default [`Limits`].
pub fn parse(text: &str) -> Result<Value, Diagnostic> {
    parse_with(text, &Limits::default())
}

/// Parses YAML 1.2 (JSON accepted) within `limits`.
pub fn parse_with(text: &str, limits: &Limits) -> Result<Value, Diagnostic> {
    if text.len() > limits.max_bytes {
        return Err(Diagnostic::error(
            &Path::root(),
            Pos::UNKNOWN,
            format!(
                "document is {} bytes; expected at most {}",
                text.len(),
                limits.max_bytes
            ),
        ));
    }
    match Builder::new(limits).run(text) {
        Ok(v) => Ok(v),
        // Some valid JSON (e.g. tab-indented) trips the YAML scanner; JSON has no anchors or
        // depth bombs beyond what serde_json bounds itself (recursion limit 128).
        Err(yaml_err) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(json) => Ok(Value::from_json(&json)),
            Err(_) => Err(yaml_err),
        },
    }
}

enum Frame {
    Seq {
        pos: Pos,
        anchor: usize,
        items: Vec<Value>,
    },
    Map {
        pos: Pos,
        anchor: usize,
        map: Map,
        key: Option<Key>,
    },
}

struct Builder<'l> {
    limits: &'l Limits,
    stack: Vec<Frame>,
    anchors: std::collections::HashMap<usize, (Value, usize)>,
    nodes: usize,
    root: Option<Value>,
    documents: usize,
}

fn pos_of(span: &Span) -> Pos {
    Pos {
        line: u32::try_from(span.start.line()).unwrap_or(u32::MAX),
        column: u32::try_from(span.start.col() + 1).unwrap_or(u32::MAX),
    }
}

fn err(pos: Pos, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::error(&Path::root(), pos, msg)
}

impl<'l> Builder<'l> {
    fn new(limits: &'l Limits) -> Self {
        Builder {
            limits,
            stack: Vec::new(),
            anchors: std::collections::HashMap::new(),
            nodes: 0,
            root: None,
            documents: 0,
        }
    }

    fn run(mut self, text: &str) -> Result<Value, Diagnostic> {
        let mut parser = Parser::new_from_str(text);
        while let Some(next) = parser.next_event() {
            let (event, span) = next.map_err(|e| {
                let m = e.marker();
                let pos = Pos {
                    line: u32::try_from(m.line()).unwrap_or(u32::MAX),
                    column: u32::try_from(m.col() + 1).unwrap_or(u32::MAX),
                };
                err(
                    pos,
                    format!("invalid YAML: {}{}", e.info(), flow::note(text, pos)),
                )
            })?;
            let pos = pos_of(&span);
            match event {
                Event::StreamEnd => break,
                Event::Nothing | Event::StreamStart | Event::DocumentEnd => {}
                Event::DocumentStart(_) => {
                    self.documents += 1;
                    if self.documents > 1 {
                        return Err(err(pos, "expected a single document; found another `---`"));
                    }
                }
                Event::Alias(id) => {
                    let Some((value, count)) = self.anchors.get(&id).cloned() else {
                        return Err(err(pos, "alias refers to an unknown anchor"));
                    };
                    self.count(count, pos)?;
                    let mut value = value;
                    value.pos = pos;
                    self.push_value(value)?;
                }
                Event::Scalar(text, style, anchor, tag) => {
                    self.count(1, pos)?;
                    let forced_str = tag.as_ref().is_some_and(|t| t.suffix == "str");
                    let kind = if style == ScalarStyle::Plain && !forced_str {
                        resolve_plain(&text)
                    } else {
                        Kind::Str(text.into_owned())
                    };
                    let value = Value { kind, pos };
                    if anchor > 0 {
                        self.anchors.insert(anchor, (value.clone(), 1));
                    }
                    self.push_value(value)?;
                }
                Event::SequenceStart(anchor, _) => {
                    self.open(pos)?;
                    self.stack.push(Frame::Seq {
                        pos,
                        anchor,
                        items: Vec::new(),
                    });
                }
                Event::MappingStart(anchor, _) => {
                    self.open(pos)?;
                    self.stack.push(Frame::Map {
                        pos,
                        anchor,
                        map: Map::default(),
                        key: None,
                    });
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    let (value, anchor) = match self.stack.pop() {
                        Some(Frame::Seq { pos, anchor, items }) => (
                            Value {
                                kind: Kind::Seq(items),
                                pos,
                            },
                            anchor,
                        ),
                        Some(Frame::Map {
                            pos, anchor, map, ..
                        }) => (
                            Value {
                                kind: Kind::Map(map),
                                pos,
                            },
                            anchor,
                        ),
                        None => return Err(err(pos, "unbalanced end of collection")),
                    };
                    if anchor > 0 {
                        let count = value.node_count();
                        self.anchors.insert(anchor, (value.clone(), count));
                    }
                    self.push_value(value)?;
                }
            }
        }
        Ok(self.root.unwrap_or(Value {
            kind: Kind::Null,
            pos: Pos { line: 1, column: 1 },
        }))
    }

    fn count(&mut self, n: usize, pos: Pos) -> Result<(), Diagnostic> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > self.limits.max_nodes {
            return Err(err(
                pos,
                format!(
                    "document expands to more than {} nodes (aliases included)",
                    self.limits.max_nodes
                ),
            ));
        }
        Ok(())
    }

    fn open(&mut self, pos: Pos) -> Result<(), Diagnostic> {
        self.count(1, pos)?;
        if self.stack.len() >= self.limits.max_depth {
            return Err(err(
                pos,
                format!("nesting deeper than {} levels", self.limits.max_depth),
            ));
        }
        Ok(())
    }

    fn push_value(&mut self, value: Value) -> Result<(), Diagnostic> {
        match self.stack.last_mut() {
            None => {
                self.root = Some(value);
                Ok(())
            }
            Some(Frame::Seq { items, .. }) => {
                items.push(value);
                Ok(())
            }
            Some(Frame::Map { map, key, .. }) => match key.take() {
                None => {
                    let name = match value.scalar_text() {
                        Some(s) => s,
                        None => {
                            return Err(err(
                                value.pos,
                                format!(
                                    "mapping key is a {}; expected a scalar",
                                    value.type_name()
                                ),
                            ));
                        }
                    };
                    if map.get(&name).is_some() {
                        return Err(err(value.pos, format!("duplicate key `{name}`")));
                    }
                    *key = Some(Key {
                        name,
                        pos: value.pos,
                    });
                    Ok(())
                }
                Some(k) => {
                    map.insert(k, value);
                    Ok(())
                }
            },
        }
    }
}

/// Resolves a plain scalar by the YAML 1.2 core schema.
fn resolve_plain(s: &str) -> Kind {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Kind::Null,
        _ => {}
    }
    if s.eq_ignore_ascii_case("true") {
        return Kind::Bool(true);
    }
    if s.eq_ignore_ascii_case("false") {
        return Kind::Bool(false);
    }
    if let Some(k) = resolve_int(s) {
        return k;
    }
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    match body {
        ".inf" | ".Inf" | ".INF" => {
            let inf = if s.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
            return Kind::Float(inf);
        }
        ".nan" | ".NaN" | ".NAN" if body.len() == s.len() => return Kind::Float(f64::NAN),
        _ => {}
    }
    if is_float_syntax(body)
        && let Ok(f) = s.parse::<f64>()
    {
        return Kind::Float(f);
    }
    Kind::Str(s.to_owned())
}

fn resolve_int(s: &str) -> Option<Kind> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if let Some(h) = body.strip_prefix("0x") {
        (16, h)
    } else if let Some(o) = body.strip_prefix("0o") {
        (8, o)
    } else {
        (10, body)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    if radix != 10 && body.len() != s.len() {
        return None;
    }
    match i64::from_str_radix(digits, radix) {
        Ok(v) => Some(Kind::Int(if neg { -v } else { v })),
        // Too large for i64: keep the magnitude as a float rather than failing.
        Err(_) => s.parse::<f64>().ok().map(Kind::Float),
    }
}

fn is_float_syntax(body: &str) -> bool {
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let mut parts = mantissa.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next();
    let digits = |t: &str| t.chars().all(|c| c.is_ascii_digit());
    let mantissa_ok = match frac {
        Some(f) => digits(int) && digits(f) && !(int.is_empty() && f.is_empty()),
        None => !int.is_empty() && digits(int),
    };
    let exp_ok = match exp {
        None => true,
        Some(e) => {
            let e = e.strip_prefix(['-', '+']).unwrap_or(e);
            !e.is_empty() && digits(e)
        }
    };
    mantissa_ok && exp_ok
}
