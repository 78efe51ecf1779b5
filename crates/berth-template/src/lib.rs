//! Homing templates (seed 000 and what ONAP HAS accepts): parse, resolve, validate.
//!
//! A homing template is YAML or JSON with the sections `homing_template_version`,
//! `parameters`, `locations`, `demands`, `constraints`, `reservations` (or HAS's singular
//! `reservation`) and `optimization`. Loading runs three steps:
//!
//! 1. **parse** the text with `berth-doc` into a spanned tree ([`Template::parse`] gives a
//!    [`RawTemplate`]; [`Template::from_json`] wraps an already-parsed JSON object);
//! 2. **resolve** the intrinsic functions `get_param` (name or `[name, key-or-index, ...]`) and
//!    `get_file` (looked up in [`LoadOptions::files`]) in every section, applying parameter
//!    overrides ([`LoadOptions::parameters`]);
//! 3. **read** the resolved tree into the typed [`Template`], checking every key, reference
//!    and property schema.
//!
//! Key types: [`Template`] (the resolved model), [`Demand`]/[`Requirement`]/[`Candidate`],
//! [`Constraint`] with [`ConstraintKind`] (one typed properties struct per type),
//! [`Objective`] with one [`Expr`] tree whichever optimization form was written.
//!
//! Invariants:
//! - Validation reports **all** problems in one pass, each a [`Diagnostic`] with severity,
//!   field path and line:column (0:0 for input given as JSON objects).
//! - A [`Template`] exists only for input without errors: every demand and location reference
//!   in it names a declared one, every pairwise constraint has at least two demands, every
//!   threshold is a `berth_units::Threshold` of the property's family (distance km, latency ms,
//!   bandwidth Mbps, cost USD), coordinates are in range.
//! - No input panics; parsing and parameter substitution are bounded in depth and size.
//! - Output order follows the document (`IndexMap`), so results are deterministic.
//!
//! ```
//! use berth_template::{load, LoadOptions, ConstraintKind};
//!
//! let text = "
//! homing_template_version: 2017-10-10
//! parameters: {max_km: 250}
//! demands:
//!   vG1: [{inventory_provider: aai, inventory_type: cloud}]
//!   vG2: {inventory_provider: aai, inventory_type: cloud}
//! constraints:
//!   near:
//!     type: distance_between_demands
//!     demands: [vG1, vG2]
//!     properties: {distance: {get_param: max_km}}
//! ";
//! let template = load(text, &LoadOptions::default().param("max_km", 100)).unwrap();
//! let ConstraintKind::DistanceBetweenDemands(p) = &template.constraints["near"].kind else { panic!() };
//! assert_eq!(p.distance.to_string(), "100 km");
//! ```

mod intrinsic;
mod model;
mod read;
mod schema;
mod suggest;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::str::FromStr;

pub use berth_doc::{Diagnostic, Diagnostics, Limits, Severity};
pub use model::*;
pub use schema::json_schema;

/// The crate's error, for callers that want one `Result` error rather than diagnostics.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// The template has errors; `diagnostics` holds all of them (and any warnings).
    #[error("invalid homing template: {} error(s), first: {}", errors, first)]
    Invalid {
        /// How many diagnostics are errors.
        errors: usize,
        /// The first error, rendered.
        first: String,
        /// Every diagnostic, sorted by position.
        diagnostics: Vec<Diagnostic>,
    },
}

impl TemplateError {
    /// Wraps diagnostics that contain at least one error.
    pub fn from_diagnostics(diagnostics: Vec<Diagnostic>) -> Self {
        let errors = diagnostics.iter().filter(|d| d.is_error()).count();
        let first = diagnostics
            .iter()
            .find(|d| d.is_error())
            .map(ToString::to_string)
            .unwrap_or_default();
        TemplateError::Invalid {
            errors,
            first,
            diagnostics,
        }
    }
}

/// What a template is instantiated with.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadOptions {
    /// Parameter values that override (or add to) the template's `parameters`.
    pub parameters: BTreeMap<String, serde_json::Value>,
    /// Contents for `get_file`, keyed exactly as the template names them.
    pub files: BTreeMap<String, String>,
    /// Parsing limits (depth, nodes after alias expansion, bytes).
    pub limits: Limits,
}

impl LoadOptions {
    /// Sets parameter `name` to `value`.
    #[must_use]
    pub fn param(mut self, name: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        self.parameters.insert(name.into(), value.into());
        self
    }

    /// Sets parameter `name` from command-line text, typed as a YAML scalar or flow value
    /// (`10` is a number, `[a, b]` a list, `abc` a string).
    #[must_use]
    pub fn param_text(mut self, name: impl Into<String>, text: &str) -> Self {
        let value = match berth_doc::parse(text) {
            Ok(v) => v.to_json(),
            Err(_) => serde_json::Value::String(text.to_owned()),
        };
        self.parameters.insert(name.into(), value);
        self
    }

    /// Supplies the content of `get_file` key `key`.
    #[must_use]
    pub fn file(mut self, key: impl Into<String>, content: impl Into<String>) -> Self {
        self.files.insert(key.into(), content.into());
        self
    }
}

/// The outcome of checking a template: every diagnostic, and the model when there is no error.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// The resolved template, present exactly when no diagnostic is an error.
    pub template: Option<Template>,
    /// Errors and warnings, sorted by position then path.
    pub diagnostics: Vec<Diagnostic>,
}

impl Analysis {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The errors only.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }

    /// The warnings only.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| !d.is_error())
    }

    /// The template, or every diagnostic when there are errors.
    pub fn into_result(self) -> Result<Template, Vec<Diagnostic>> {
        match self.template {
            Some(t) => Ok(t),
            None => Err(self.diagnostics),
        }
    }
}

/// A parsed template whose intrinsics are not resolved yet.
#[derive(Debug, Clone, PartialEq)]
pub struct RawTemplate {
    doc: berth_doc::Value,
    source: Option<String>,
}

impl RawTemplate {
    /// Wraps a parsed document (positions are used in diagnostics as they are).
    pub fn from_value(doc: berth_doc::Value) -> Self {
        RawTemplate { doc, source: None }
    }

    /// The parsed document.
    pub fn document(&self) -> &berth_doc::Value {
        &self.doc
    }

    /// The declared `homing_template_version`, as written, if it is a string.
    pub fn version_text(&self) -> Option<&str> {
        self.doc.as_map()?.get("homing_template_version")?.as_str()
    }

    /// Names of the declared parameters, in order.
    pub fn parameter_names(&self) -> Vec<&str> {
        self.doc
            .as_map()
            .and_then(|m| m.get("parameters"))
            .and_then(berth_doc::Value::as_map)
            .map(|m| m.iter().map(|(k, _)| k.name.as_str()).collect())
            .unwrap_or_default()
    }

    /// Resolves and validates with `opts`, returning every diagnostic.
    pub fn analyze(&self, opts: &LoadOptions) -> Analysis {
        let mut diags = Diagnostics::new();
        let template = read::read(
            &self.doc,
            self.source.as_deref(),
            &opts.parameters,
            &opts.files,
            &mut diags,
        );
        let template = if diags.has_errors() { None } else { template };
        Analysis {
            template,
            diagnostics: diags.into_vec(),
        }
    }

    /// Resolves and validates with `opts`: the template, or all diagnostics if any is an error.
    pub fn resolve(&self, opts: &LoadOptions) -> Result<Template, Vec<Diagnostic>> {
        self.analyze(opts).into_result()
    }
}

impl Template {
    /// Parses YAML or JSON text (default limits) without resolving it.
    pub fn parse(text: &str) -> Result<RawTemplate, Vec<Diagnostic>> {
        Template::parse_with(text, &Limits::default())
    }

    /// Parses YAML or JSON text within `limits` without resolving it.
    pub fn parse_with(text: &str, limits: &Limits) -> Result<RawTemplate, Vec<Diagnostic>> {
        match berth_doc::parse_with(text, limits) {
            Ok(doc) => Ok(RawTemplate {
                doc,
                source: Some(text.to_owned()),
            }),
            Err(mut d) => {
                d.message.push_str(&block_indicator_hint(text, d.line));
                Err(vec![d])
            }
        }
    }

    /// Wraps an already-parsed JSON object (as carried by the HTTP API); positions are 0:0.
    pub fn from_json(json: &serde_json::Value) -> RawTemplate {
        RawTemplate::from_value(berth_doc::Value::from_json(json))
    }
}

impl FromStr for Template {
    type Err = TemplateError;

    /// Loads `s` with default options.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        load(s, &LoadOptions::default()).map_err(TemplateError::from_diagnostics)
    }
}

/// A hint for the commonest YAML mistake in templates: a threshold such as `>= 1000 Mbps`
/// written unquoted, where `>` (or `|`) starts a block scalar.
fn block_indicator_hint(text: &str, line: u32) -> String {
    let Some(l) = line
        .checked_sub(1)
        .and_then(|i| text.lines().nth(i as usize))
    else {
        return String::new();
    };
    let value = l
        .split_once(": ")
        .map_or(l.trim_start().trim_start_matches("- "), |(_, v)| v)
        .trim();
    let Some(rest) = value.strip_prefix(['>', '|']) else {
        return String::new();
    };
    let rest = rest
        .trim_start_matches(['-', '+', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'])
        .trim();
    if rest.is_empty() || rest.starts_with('#') {
        return String::new();
    }
    format!(
        "; a value starting with `{}` must be quoted, e.g. \"{value}\"",
        &value[..1]
    )
}

/// Parses, resolves and validates `text`, returning the model (if valid) and all diagnostics.
pub fn analyze(text: &str, opts: &LoadOptions) -> Analysis {
    match Template::parse_with(text, &opts.limits) {
        Ok(raw) => raw.analyze(opts),
        Err(diagnostics) => Analysis {
            template: None,
            diagnostics,
        },
    }
}

/// Loads `text` (YAML or JSON): the resolved template, or every diagnostic if any is an error.
pub fn load(text: &str, opts: &LoadOptions) -> Result<Template, Vec<Diagnostic>> {
    analyze(text, opts).into_result()
}

/// Loads an already-parsed JSON template.
pub fn load_json(
    json: &serde_json::Value,
    opts: &LoadOptions,
) -> Result<Template, Vec<Diagnostic>> {
    Template::from_json(json).resolve(opts)
}

/// Every diagnostic (errors and warnings) of `text`, sorted by position; empty when clean.
pub fn validate(text: &str, opts: &LoadOptions) -> Vec<Diagnostic> {
    analyze(text, opts).diagnostics
}

/// Every diagnostic of an already-parsed JSON template.
pub fn validate_json(json: &serde_json::Value, opts: &LoadOptions) -> Vec<Diagnostic> {
    Template::from_json(json).analyze(opts).diagnostics
}
