//! The one formatting layer: commands return a [`Report`] (their data and its table view) and
//! this module prints it as JSON, YAML, a table or the command's own text.

use std::io::Write as _;

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;

/// `-o/--output`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The command's human view (diagnostics, plan rendering); a table where it has none.
    Text,
    /// Columns for reading and `grep`/`awk`.
    Table,
    /// JSON (one compact object per line for per-file commands such as `validate`).
    Json,
    /// YAML (one document per file for per-file commands).
    Yaml,
}

impl Format {
    /// JSON or YAML: the data itself, nothing for humans on stdout.
    pub fn is_data(self) -> bool {
        matches!(self, Format::Json | Format::Yaml)
    }
}

/// The data of a report: one document, or one record per input (per-file commands).
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// One document.
    One(Value),
    /// One record per input, in input order.
    Records(Vec<Value>),
}

/// How a report looks as a table: columns built here, or a rendering the domain crate owns.
#[derive(Clone, Debug, PartialEq)]
pub enum View {
    /// Rows under headers.
    Grid(Table),
    /// Text rendered by the library (plan tables, placement tables).
    Text(String),
}

/// What a command prints: its data, its table view and, optionally, its own text view.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// What `json` and `yaml` print.
    pub data: Data,
    /// What `table` prints (and `text` when `text` is `None`).
    pub table: View,
    /// What `text` prints.
    pub text: Option<String>,
}

impl Report {
    /// A report of one serializable value.
    pub fn one(value: &impl Serialize, table: View) -> Result<Report> {
        Ok(Report {
            data: Data::One(serde_json::to_value(value).context("cannot serialize the output")?),
            table,
            text: None,
        })
    }

    /// A report of one JSON value whose table is built from the value itself.
    pub fn json(value: Value, columns: &[&str]) -> Report {
        let table = View::Grid(Table::from_json(&value, columns));
        Report {
            data: Data::One(value),
            table,
            text: None,
        }
    }

    /// A report of one JSON value whose table shows the member `list` (when present): the
    /// rows an answer is about, beside its other members.
    pub fn json_rows(value: Value, list: &str) -> Report {
        let table = View::Grid(Table::from_json(value.get(list).unwrap_or(&value), &[]));
        Report {
            data: Data::One(value),
            table,
            text: None,
        }
    }

    /// The report in `format`.
    pub fn render(&self, format: Format) -> Result<String> {
        match format {
            Format::Json => match &self.data {
                Data::One(v) => {
                    Ok(serde_json::to_string_pretty(v).context("cannot render JSON")? + "\n")
                }
                Data::Records(rs) => rs.iter().try_fold(String::new(), |mut out, r| {
                    out.push_str(&serde_json::to_string(r).context("cannot render JSON")?);
                    out.push('\n');
                    Ok(out)
                }),
            },
            Format::Yaml => match &self.data {
                Data::One(v) => serde_yaml::to_string(v).context("cannot render YAML"),
                Data::Records(rs) => rs.iter().try_fold(String::new(), |mut out, r| {
                    out.push_str("---\n");
                    out.push_str(&serde_yaml::to_string(r).context("cannot render YAML")?);
                    Ok(out)
                }),
            },
            Format::Table => Ok(self.table.render()),
            Format::Text => Ok(match &self.text {
                Some(t) => t.clone(),
                None => self.table.render(),
            }),
        }
    }
}

impl View {
    fn render(&self) -> String {
        match self {
            View::Grid(t) => t.render(),
            View::Text(s) => s.clone(),
        }
    }
}

/// Rows of cells under headers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    /// Column names, upper case as printed.
    pub headers: Vec<String>,
    /// Cells, one `Vec` per row, as many as headers.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these headers (printed upper case).
    pub fn new(headers: &[&str]) -> Table {
        Table {
            headers: headers.iter().map(|h| h.to_uppercase()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (short rows are padded, long ones cut to the headers).
    pub fn row(&mut self, cells: Vec<String>) {
        let mut cells = cells;
        cells.resize(self.headers.len(), String::new());
        self.rows.push(cells);
    }

    /// A table of any JSON value: an array of objects (or an object holding exactly one such
    /// array, like `{"plans": [...]}`) is one row per element; an object of objects (like
    /// `{"pool-a": {...}, "pool-b": {...}}`) is one row per key, the key first; any other
    /// object is one row per key (`KEY`, `VALUE`). `columns` picks and orders the columns of
    /// rows (`a.b` reaches into nested objects); when empty, every scalar field of the
    /// elements and of the objects directly inside them, in order of appearance.
    pub fn from_json(value: &Value, columns: &[&str]) -> Table {
        let keyed = match value {
            Value::Object(m) if !m.is_empty() && m.values().all(Value::is_object) => Some(m),
            _ => None,
        };
        let items: Vec<(Option<&String>, &Value)> = match (row_list(value), keyed) {
            (Some(items), _) => items.iter().map(|v| (None, v)).collect(),
            (None, Some(m)) => m.iter().map(|(k, v)| (Some(k), v)).collect(),
            (None, None) => return key_value(value),
        };
        let keys: Vec<String> = if columns.is_empty() {
            let mut keys: Vec<String> = Vec::new();
            for (_, item) in &items {
                for k in scalar_paths(item) {
                    if !keys.contains(&k) {
                        keys.push(k);
                    }
                }
            }
            keys
        } else {
            columns.iter().map(|c| (*c).to_owned()).collect()
        };
        let mut headers: Vec<&str> = Vec::new();
        if keyed.is_some() && row_list(value).is_none() {
            headers.push("key");
        }
        headers.extend(keys.iter().map(String::as_str));
        let mut t = Table::new(&headers);
        for (name, item) in items {
            let cells = keys.iter().map(|k| cell(pointer(item, k)));
            t.row(name.cloned().into_iter().chain(cells).collect());
        }
        t
    }

    /// Columns separated by two spaces, headers first, no borders (what `awk` and eyes read).
    pub fn render(&self) -> String {
        let mut t = comfy_table::Table::new();
        t.load_style(comfy_table::presets::NOTHING)
            .set_content_arrangement(comfy_table::ContentArrangement::Disabled)
            .set_header(self.headers.iter().map(String::as_str))
            .add_rows(self.rows.iter().map(|r| r.iter().map(String::as_str)));
        let mut out = String::new();
        for line in t.lines() {
            // The preset pads every column; the first pad and trailing blanks carry nothing.
            let line = line.strip_prefix(' ').unwrap_or(&line).trim_end();
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

/// `KEY VALUE` rows of an object (one row for a scalar, none for null).
fn key_value(value: &Value) -> Table {
    let mut t = Table::new(&["key", "value"]);
    match value {
        Value::Object(m) => {
            for (k, v) in m {
                t.row(vec![k.clone(), cell(Some(v))]);
            }
        }
        Value::Null => {}
        other => t.row(vec![String::new(), cell(Some(other))]),
    }
    t
}

/// The scalar fields of an object and of the objects directly inside it (`a`, `b.c`).
fn scalar_paths(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Value::Object(m) = v {
        for (k, v) in m {
            match v {
                Value::Object(inner) => out.extend(
                    inner
                        .iter()
                        .filter(|(_, x)| !(x.is_object() || x.is_array()))
                        .map(|(ik, _)| format!("{k}.{ik}")),
                ),
                Value::Array(_) => {}
                _ => out.push(k.clone()),
            }
        }
    }
    out
}

/// The elements to make rows of: the value itself if an array of objects, or the one array
/// of objects an object holds.
fn row_list(value: &Value) -> Option<&[Value]> {
    let is_rows = |v: &Value| {
        v.as_array()
            .is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_object))
    };
    match value {
        Value::Array(a) if is_rows(value) => Some(a),
        Value::Object(m) => {
            let mut lists = m.values().filter(|v| is_rows(v));
            match (lists.next(), lists.next()) {
                (Some(Value::Array(a)), None) => Some(a),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `a.b` looks into nested objects.
fn pointer<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    key.split('.').try_fold(v, |v, k| v.get(k))
}

fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// Writes to stdout; a closed pipe (`berth ... | head`) is not an error.
pub fn emit(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write to stdout")
        }
        _ => Ok(()),
    }
}

/// What a command ends with: what to print (if anything) and the exit code.
#[derive(Debug)]
pub struct Done {
    /// Printed in the chosen format.
    pub report: Option<Report>,
    /// A refusal in words, printed to stderr instead of the report unless `-o json|yaml` asks
    /// for the data.
    pub error: Option<String>,
    /// Exit code.
    pub code: u8,
}

impl Done {
    /// Print `report`, exit with `code`.
    pub fn new(report: Report, code: u8) -> Done {
        Done {
            report: Some(report),
            error: None,
            code,
        }
    }

    /// Nothing to print (the command said what it had to on stderr).
    pub fn code(code: u8) -> Done {
        Done {
            report: None,
            error: None,
            code,
        }
    }
}

#[cfg(test)]
mod tests;
