//! Writing a topology back out as a document value (nested or flat) and as YAML text.

use serde_json::{Map, Value, json};

use crate::ids::{LocVertexId, NetVertexId};
use crate::topology::Topology;

/// Above this depth `DocumentForm::Nested` falls back to the flat form, so that neither the
/// writer nor a later parse has to recurse deeply.
const MAX_NESTED_DEPTH: u32 = 32;

/// How the trees are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocumentForm {
    /// Each vertex lists its `children` (the tree's shape is the document's shape).
    Nested,
    /// Each tree is a list of vertices naming their `parent` (better for large trees).
    Flat,
}

impl Topology {
    /// The topology as a document value that [`crate::load`] accepts and that loads back to
    /// an equal topology. Nested form is used only for trees at most 32 deep.
    #[must_use]
    pub fn to_document(&self, form: DocumentForm) -> Value {
        let mut doc = Map::new();
        let levels = self.levels();
        doc.insert(
            "levels".into(),
            levels.iter().map(|l| Value::from(levels.name(l))).collect(),
        );
        doc.insert(
            "finer_than".into(),
            levels
                .declared()
                .iter()
                .map(|&(f, c)| json!([levels.name(f), levels.name(c)]))
                .collect(),
        );
        doc.insert(
            "dimensions".into(),
            self.dimensions()
                .iter()
                .map(|d| Value::from(d.as_str()))
                .collect(),
        );
        if self.flavors().len() > 0 {
            let mut flavors = Map::new();
            for (name, vector) in self.flavors() {
                let demand: Map<String, Value> = self
                    .dimensions()
                    .iter()
                    .zip(vector)
                    .map(|(d, &v)| (d.clone(), Value::from(v)))
                    .collect();
                flavors.insert(name.to_owned(), Value::Object(demand));
            }
            doc.insert("flavors".into(), Value::Object(flavors));
        }
        let max_loc = (0..self.loc_count())
            .map(|v| self.loc_depth(LocVertexId(v as u32)))
            .max();
        let max_net = (0..self.net_count())
            .map(|v| self.net_depth(NetVertexId(v as u32)))
            .max();
        let nested = form == DocumentForm::Nested
            && max_loc.unwrap_or(0) <= MAX_NESTED_DEPTH
            && max_net.unwrap_or(0) <= MAX_NESTED_DEPTH;
        let loc_entries: Vec<Map<String, Value>> = (0..self.loc_count())
            .map(|v| self.location_entry(LocVertexId(v as u32), !nested))
            .collect();
        let net_entries: Vec<Map<String, Value>> = (0..self.net_count())
            .map(|v| self.network_entry(NetVertexId(v as u32), !nested))
            .collect();
        if nested {
            let loc_parents: Vec<Option<usize>> = (0..self.loc_count())
                .map(|v| self.loc_parent(LocVertexId(v as u32)).map(|p| p.index()))
                .collect();
            let net_parents: Vec<Option<usize>> = (0..self.net_count())
                .map(|v| self.net_parent(NetVertexId(v as u32)).map(|p| p.index()))
                .collect();
            doc.insert("location".into(), nest(loc_entries, &loc_parents));
            doc.insert("network".into(), nest(net_entries, &net_parents));
        } else {
            doc.insert(
                "location".into(),
                loc_entries.into_iter().map(Value::Object).collect(),
            );
            doc.insert(
                "network".into(),
                net_entries.into_iter().map(Value::Object).collect(),
            );
        }
        Value::Object(doc)
    }

    fn location_entry(&self, v: LocVertexId, flat: bool) -> Map<String, Value> {
        let mut e = Map::new();
        e.insert("id".into(), self.loc_name(v).into());
        if flat && let Some(p) = self.loc_parent(v) {
            e.insert("parent".into(), self.loc_name(p).into());
        }
        e.insert("level".into(), self.levels().name(self.loc_level(v)).into());
        if let Some(c) = self.loc_own_coordinates(v) {
            e.insert("lat".into(), c.lat.into());
            e.insert("lon".into(), c.lon.into());
        }
        if let Some(leaf) = self.loc_leaf(v) {
            let capacity: Map<String, Value> = self
                .dimensions()
                .iter()
                .zip(self.leaf_capacity(leaf))
                .filter(|(_, a)| **a != 0)
                .map(|(d, &a)| (d.clone(), a.into()))
                .collect();
            if !capacity.is_empty() {
                e.insert("capacity".into(), Value::Object(capacity));
            }
            if let Some(m) = self.leaf_machine_type(leaf) {
                e.insert("machine_type".into(), m.into());
            }
        }
        let attributes = self.loc_attributes(v);
        if !attributes.is_empty() {
            e.insert(
                "attributes".into(),
                attributes
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            );
        }
        e
    }

    fn network_entry(&self, w: NetVertexId, flat: bool) -> Map<String, Value> {
        let mut e = Map::new();
        let key = if self.net_leaf(w).is_some() {
            "leaf"
        } else {
            "id"
        };
        e.insert(key.into(), self.net_name(w).into());
        if flat && let Some(p) = self.net_parent(w) {
            e.insert("parent".into(), self.net_name(p).into());
        }
        if let Some(edge) = self.uplink(w) {
            let link = self.edge_link(edge);
            if let Some(b) = link.bandwidth_mbps {
                e.insert("bandwidth_mbps".into(), b.into());
            }
            if link.latency_ns != 0 {
                e.insert("latency_ms".into(), (link.latency_ns as f64 / 1e6).into());
            }
        }
        e
    }
}

/// Folds preorder entries into nested `children` lists (reverse preorder: children first).
fn nest(mut entries: Vec<Map<String, Value>>, parents: &[Option<usize>]) -> Value {
    let mut kids: Vec<Vec<Value>> = vec![Vec::new(); entries.len()];
    for v in (0..entries.len()).rev() {
        let mut entry = std::mem::take(&mut entries[v]);
        let mut children = std::mem::take(&mut kids[v]);
        if !children.is_empty() {
            children.reverse();
            entry.insert("children".into(), Value::Array(children));
        }
        match parents[v] {
            Some(p) => kids[p].push(Value::Object(entry)),
            None => return Value::Object(entry),
        }
    }
    Value::Null
}

/// Renders a JSON value as block-style YAML (small scalar collections in flow style). Strings
/// are written JSON-quoted, which YAML reads back unchanged.
#[must_use]
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(m) if !m.is_empty() => write_map(&mut out, m, 0, false),
        Value::Array(a) if !a.is_empty() => write_seq(&mut out, a, 0),
        other => {
            out.push_str(&flow(other, usize::MAX).unwrap_or_default());
            out.push('\n');
        }
    }
    out
}

const FLOW_WIDTH: usize = 100;

fn write_map(out: &mut String, m: &Map<String, Value>, indent: usize, mut inline_first: bool) {
    for (k, v) in m {
        if inline_first {
            inline_first = false;
        } else {
            push_indent(out, indent);
        }
        out.push_str(&key(k));
        out.push(':');
        if let Some(text) = flow(v, FLOW_WIDTH) {
            out.push(' ');
            out.push_str(&text);
            out.push('\n');
            continue;
        }
        out.push('\n');
        match v {
            Value::Object(m) => write_map(out, m, indent + 2, false),
            Value::Array(a) => write_seq(out, a, indent + 2),
            _ => {}
        }
    }
}

fn write_seq(out: &mut String, a: &[Value], indent: usize) {
    for item in a {
        push_indent(out, indent);
        out.push_str("- ");
        if let Some(text) = flow(item, FLOW_WIDTH) {
            out.push_str(&text);
            out.push('\n');
            continue;
        }
        match item {
            Value::Object(m) => write_map(out, m, indent + 2, true),
            Value::Array(a) => {
                out.push('\n');
                write_seq(out, a, indent + 2);
            }
            _ => {}
        }
    }
}

fn push_indent(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// The flow-style text of `v` if it fits in `budget` characters.
fn flow(v: &Value, budget: usize) -> Option<String> {
    let text = match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Array(a) => {
            if a.len() > budget / 3 {
                return None;
            }
            let mut parts = Vec::with_capacity(a.len());
            let mut used = 2;
            for item in a {
                let t = flow(item, budget.saturating_sub(used))?;
                used += t.len() + 2;
                parts.push(t);
            }
            format!("[{}]", parts.join(", "))
        }
        Value::Object(m) => {
            if m.len() > budget / 5 {
                return None;
            }
            let mut parts = Vec::with_capacity(m.len());
            let mut used = 2;
            for (k, item) in m {
                let t = format!("{}: {}", key(k), flow(item, budget.saturating_sub(used))?);
                used += t.len() + 2;
                parts.push(t);
            }
            format!("{{{}}}", parts.join(", "))
        }
    };
    (text.len() <= budget).then_some(text)
}

fn key(k: &str) -> String {
    let plain = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !matches!(k.to_ascii_lowercase().as_str(), "true" | "false" | "null");
    if plain {
        k.to_owned()
    } else {
        Value::String(k.to_owned()).to_string()
    }
}
