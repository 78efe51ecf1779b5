//! Diagnostics: severity, field path, line:column and message.

use std::fmt;

use crate::{Path, Pos};

/// How serious a [`Diagnostic`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The document is not valid.
    Error,
    /// The document is valid but probably not what was meant.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One problem found in a document.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Field path, e.g. `constraints.vnf_distance.properties.distance` (empty for the root).
    pub path: String,
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// 1-based column, 0 when unknown.
    pub column: u32,
    /// What is wrong and what was expected; lowercase, no trailing period.
    pub message: String,
}

impl Diagnostic {
    /// An error at `path`, `pos`.
    pub fn error(path: &Path, pos: Pos, msg: impl Into<String>) -> Self {
        Self::new(Severity::Error, path, pos, msg)
    }

    /// A warning at `path`, `pos`.
    pub fn warning(path: &Path, pos: Pos, msg: impl Into<String>) -> Self {
        Self::new(Severity::Warning, path, pos, msg)
    }

    fn new(severity: Severity, path: &Path, pos: Pos, msg: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            path: path.to_string(),
            line: pos.line,
            column: pos.column,
            message: msg.into(),
        }
    }

    /// Where it stands.
    pub fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column,
        }
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The diagnostic as JSON: `{"severity","path","line","column","message"}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "severity": self.severity.to_string(),
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "message": self.message,
        })
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pos = self.pos();
        match (self.path.is_empty(), pos.is_known()) {
            (false, true) => write!(f, "{} ({pos}): {}", self.path, self.message),
            (false, false) => write!(f, "{}: {}", self.path, self.message),
            (true, true) => write!(f, "({pos}): {}", self.message),
            (true, false) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Diagnostic {}

/// Diagnostics gathered in one pass.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// An empty collection.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one.
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    /// Adds an error.
    pub fn error(&mut self, path: &Path, pos: Pos, msg: impl Into<String>) {
        self.push(Diagnostic::error(path, pos, msg));
    }

    /// Adds a warning.
    pub fn warning(&mut self, path: &Path, pos: Pos, msg: impl Into<String>) {
        self.push(Diagnostic::warning(path, pos, msg));
    }

    /// Whether any is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The diagnostics, sorted by position then path (stable, so output is deterministic).
    pub fn into_vec(mut self) -> Vec<Diagnostic> {
        self.0.sort_by(|a, b| {
            (a.line, a.column, &a.path, &a.message).cmp(&(b.line, b.column, &b.path, &b.message))
        });
        self.0
    }

    /// Iterates in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter()
    }
}

impl Extend<Diagnostic> for Diagnostics {
    fn extend<T: IntoIterator<Item = Diagnostic>>(&mut self, iter: T) {
        self.0.extend(iter);
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}
