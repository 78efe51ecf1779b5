//! `berth validate`: every diagnostic of every template, text or JSON.

use std::path::PathBuf;

use anyhow::{Context, Result};
use berth_doc::{Diagnostic, Severity};
use berth_inventory::StaticProvider;

use crate::output::{Data, Done, Format, Report, Table, View};
use crate::{Ui, diagnostics, exit, input};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Template files (YAML or JSON).
    #[arg(required = true)]
    templates: Vec<PathBuf>,
    /// Override a parameter: `-p name=value` (value read as YAML: 250, true, [a, b], text).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE", value_parser = input::parse_param)]
    params: Vec<(String, serde_json::Value)>,
    /// Directory `get_file` paths are relative to (default: each template's directory).
    #[arg(long, value_name = "DIR")]
    files_dir: Option<PathBuf>,
    /// Inventory file: also report demands asking for an inventory type (under a provider
    /// name) that nothing in it serves.
    #[arg(long, value_name = "FILE")]
    inventory: Option<PathBuf>,
}

pub fn run(args: &Args, ui: Ui) -> Result<Done> {
    let provider = match &args.inventory {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read inventory {}", path.display()))?;
            match StaticProvider::parse(&text) {
                Ok(p) => Some(p),
                Err(berth_inventory::InventoryError::Invalid { diagnostics }) => {
                    diagnostics::eprint(path, &text, &diagnostics);
                    eprintln!("{}: invalid inventory", path.display());
                    return Ok(Done::code(exit::DOMAIN));
                }
                Err(e) => {
                    eprintln!("{}: error: {e}", path.display());
                    return Ok(Done::code(exit::DOMAIN));
                }
            }
        }
    };
    let color = ui.format == Format::Text && diagnostics::stdout_color();
    let mut all_valid = true;
    let mut records = Vec::new();
    let mut table = Table::new(&["file", "severity", "line:column", "path", "message"]);
    let mut text = String::new();
    for path in &args.templates {
        let loaded = input::read_template(path, args.files_dir.as_deref())?;
        let opts = berth_template::LoadOptions {
            parameters: input::params(&args.params),
            files: loaded.files,
            ..Default::default()
        };
        let diags = berth_engine::validate(&loaded.text, &opts);
        let valid = !diags.iter().any(berth_doc::Diagnostic::is_error);
        // With an inventory: demands that nothing in it serves.
        let served = provider
            .as_ref()
            .map(|p| unserved(&loaded.text, &opts, p))
            .unwrap_or_default();
        let valid = valid && !served.iter().any(Diagnostic::is_error);
        let diags: Vec<Diagnostic> = diags.into_iter().chain(served).collect();
        all_valid &= valid;
        let file = path.display().to_string();
        records.push(serde_json::json!({
            "file": file,
            "valid": valid,
            "diagnostics": diags.iter().map(berth_doc::Diagnostic::to_json).collect::<Vec<_>>(),
        }));
        for d in &diags {
            let at = if d.line == 0 {
                String::new()
            } else {
                format!("{}:{}", d.line, d.column)
            };
            table.row(vec![
                file.clone(),
                d.severity.to_string(),
                at,
                d.path.clone(),
                d.message.clone(),
            ]);
        }
        if diags.is_empty() {
            table.row(vec![
                file.clone(),
                "ok".into(),
                String::new(),
                String::new(),
                "valid".into(),
            ]);
        }
        text.push_str(&diagnostics::render(&file, &loaded.text, &diags, color));
        let errors = diags.iter().filter(|d| d.is_error()).count();
        let warnings = diags.len() - errors;
        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        text.push_str(&match (valid, warnings) {
            (true, 0) => format!("{file}: valid\n"),
            (true, w) => format!("{file}: valid ({})\n", plural(w, "warning")),
            (false, 0) => format!("{file}: invalid ({})\n", plural(errors, "error")),
            (false, w) => format!(
                "{file}: invalid ({}, {})\n",
                plural(errors, "error"),
                plural(w, "warning")
            ),
        });
    }
    let report = Report {
        data: Data::Records(records),
        table: View::Grid(table),
        text: Some(text),
    };
    Ok(Done::new(
        report,
        if all_valid { exit::OK } else { exit::DOMAIN },
    ))
}

/// Demands of a loadable template that no provider of the inventory serves, as errors at
/// the requirement's `inventory_type` (line:column when the template has that key).
fn unserved(
    text: &str,
    opts: &berth_template::LoadOptions,
    provider: &StaticProvider,
) -> Vec<Diagnostic> {
    let Ok(template) = berth_template::load(text, opts) else {
        return Vec::new();
    };
    let doc = berth_doc::parse(text).ok();
    berth_engine::unserved(&template, provider)
        .into_iter()
        .map(|u| {
            let pos = doc
                .as_ref()
                .and_then(|d| d.as_map())
                .and_then(|m| m.get("demands"))
                .and_then(|d| d.as_map())
                .and_then(|m| m.get(&u.demand))
                .and_then(|reqs| match &reqs.kind {
                    berth_doc::Kind::Seq(items) => items.get(u.requirement),
                    _ => None,
                })
                .and_then(|r| r.as_map())
                .and_then(|m| m.get("inventory_type"))
                .map_or(berth_doc::Pos::UNKNOWN, |v| v.pos);
            Diagnostic {
                severity: Severity::Error,
                path: u.path(),
                line: pos.line,
                column: pos.column,
                message: u.message(),
            }
        })
        .collect()
}
