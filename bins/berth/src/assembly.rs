//! `berth assembly validate|plan`: TNC-O assembly descriptors.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use berth_doc::Diagnostic;

use crate::output::{Data, Done, Format, Report, Table, View};
use crate::{Ui, diagnostics, exit};

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Check an assembly descriptor; print every diagnostic.
    Validate {
        /// Descriptor file (YAML).
        file: PathBuf,
    },
    /// Print the instantiation plan: instances, prerequisites, lifecycle, placement demands.
    Plan {
        /// Descriptor file (YAML).
        file: PathBuf,
        /// Property value for the instantiation request: `-p name=value`.
        #[arg(short = 'p', long = "property", value_name = "NAME=VALUE", value_parser = parse_kv)]
        properties: Vec<(String, String)>,
    },
}

fn parse_kv(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.to_owned())),
        _ => Err(format!("expected name=value, found `{s}`")),
    }
}

fn read(file: &PathBuf) -> Result<String> {
    std::fs::read_to_string(file)
        .with_context(|| format!("cannot read descriptor {}", file.display()))
}

/// The diagnostics of one descriptor as a report: a record, a table, rendered text.
fn diagnostics_report(file: &Path, source: &str, diags: &[Diagnostic], ui: Ui) -> Report {
    let valid = !diags.iter().any(Diagnostic::is_error);
    let name = file.display().to_string();
    let mut table = Table::new(&["file", "severity", "line:column", "path", "message"]);
    for d in diags {
        let at = if d.line == 0 {
            String::new()
        } else {
            format!("{}:{}", d.line, d.column)
        };
        table.row(vec![
            name.clone(),
            d.severity.to_string(),
            at,
            d.path.clone(),
            d.message.clone(),
        ]);
    }
    let color = ui.format == Format::Text && diagnostics::stdout_color();
    let mut text = diagnostics::render(&name, source, diags, color);
    if valid {
        text.push_str(&format!("{name}: valid\n"));
    }
    Report {
        data: Data::Records(vec![serde_json::json!({
            "file": name,
            "valid": valid,
            "diagnostics": diags.iter().map(Diagnostic::to_json).collect::<Vec<_>>(),
        })]),
        table: View::Grid(table),
        text: Some(text),
    }
}

pub fn run(cmd: &Command, ui: Ui) -> Result<Done> {
    match cmd {
        Command::Validate { file } => {
            let source = read(file)?;
            let diags = berth_assembly::validate(&source);
            let valid = !diags.iter().any(Diagnostic::is_error);
            let report = diagnostics_report(file, &source, &diags, ui);
            Ok(Done::new(
                report,
                if valid { exit::OK } else { exit::DOMAIN },
            ))
        }
        Command::Plan { file, properties } => {
            let request = properties.iter().cloned().collect();
            let source = read(file)?;
            match berth_assembly::plan_text(&source, &request) {
                Ok(plan) => {
                    let report = Report::one(&plan, View::Text(plan.render()))?;
                    Ok(Done::new(report, exit::OK))
                }
                Err(diags) => Ok(Done::new(
                    diagnostics_report(file, &source, &diags, ui),
                    exit::DOMAIN,
                )),
            }
        }
    }
}
