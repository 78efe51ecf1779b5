//! `berth validate`: every diagnostic of every template, and of the inventory given with
//! `--inventory` (with its capacity keys no template's request uses), text or JSON.

use std::path::PathBuf;

use anyhow::{Context, Result};
use berth_doc::Diagnostic;
use berth_inventory::{Inventory, StaticProvider};

use crate::output::{Data, Done, Format, Report, Table, View};
use crate::{Ui, diagnostics, exit, input};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Template files (YAML or JSON); none with `--inventory` checks the inventory alone.
    #[arg(required_unless_present = "inventory")]
    templates: Vec<PathBuf>,
    /// Override a parameter: `-p name=value` (value read as YAML: 250, true, [a, b], text).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE", value_parser = input::parse_param)]
    params: Vec<(String, serde_json::Value)>,
    /// Directory `get_file` paths are relative to (default: each template's directory).
    #[arg(long, value_name = "DIR")]
    files_dir: Option<PathBuf>,
    /// Inventory file: check it too (capacity keys naming no known dimension that no
    /// template's request uses are warnings), and check each template against it as
    /// `solve` would: locations it cannot resolve and licenses it lacks are errors, demands
    /// asking for an inventory type it holds no candidate of are warnings.
    #[arg(long, value_name = "FILE")]
    inventory: Option<PathBuf>,
}

pub fn run(args: &Args, ui: Ui) -> Result<Done> {
    let inventory = match &args.inventory {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read inventory {}", path.display()))?;
            match Inventory::parse(&text) {
                Ok(inv) => Some((path, text, inv)),
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
    let provider = inventory
        .as_ref()
        .map(|(_, _, inv)| StaticProvider::new(inv.clone()));
    // Loaded templates, whose requests tell which inventory capacity keys are used.
    let mut loaded_templates = Vec::new();
    let color = ui.format == Format::Text && diagnostics::stdout_color();
    let mut all_valid = true;
    let mut out = Out {
        records: Vec::new(),
        table: Table::new(&["file", "severity", "line:column", "path", "message"]),
        text: String::new(),
    };
    for path in &args.templates {
        let loaded = input::read_template(path, args.files_dir.as_deref())?;
        let opts = berth_template::LoadOptions {
            parameters: input::params(&args.params),
            files: loaded.files,
            ..Default::default()
        };
        let diags = berth_engine::validate(&loaded.text, &opts);
        let valid = !diags.iter().any(berth_doc::Diagnostic::is_error);
        let template = berth_template::load(&loaded.text, &opts).ok();
        // With an inventory: what `solve` would refuse against it (`plan`'s own steps: an
        // unresolvable `host_name`, an unknown license), demands it offers nothing, and
        // request keys that no candidate's capacity has.
        let served = match (&provider, &template) {
            (Some(p), Some(t)) => {
                let doc = berth_doc::parse(&loaded.text).ok();
                let mut d = if valid {
                    berth_engine::check_inventory(t, doc.as_ref(), p)
                } else {
                    Vec::new()
                };
                d.extend(berth_engine::request_diagnostics(
                    t,
                    doc.as_ref(),
                    p.inventory(),
                ));
                d
            }
            _ => Vec::new(),
        };
        loaded_templates.extend(template);
        let valid = valid && !served.iter().any(Diagnostic::is_error);
        let diags: Vec<Diagnostic> = diags.into_iter().chain(served).collect();
        all_valid &= valid;
        let file = path.display().to_string();
        add_file(&mut out, &file, &loaded.text, valid, &diags, color);
    }
    // The inventory, checked against the requests of every loaded template.
    if let Some((path, text, inv)) = &inventory {
        let refs: Vec<&berth_template::Template> = loaded_templates.iter().collect();
        let diags = berth_engine::inventory_diagnostics(inv, &refs);
        add_file(
            &mut out,
            &path.display().to_string(),
            text,
            true,
            &diags,
            color,
        );
    }
    let Out {
        records,
        table,
        text,
    } = out;
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

/// What `validate` prints, gathered file by file.
struct Out {
    records: Vec<serde_json::Value>,
    table: Table,
    text: String,
}

/// One file's record, table rows and rendered diagnostics.
fn add_file(
    out: &mut Out,
    file: &str,
    source: &str,
    valid: bool,
    diags: &[Diagnostic],
    color: bool,
) {
    let Out {
        records,
        table,
        text,
    } = out;
    let file = file.to_owned();
    records.push(serde_json::json!({
        "file": file,
        "valid": valid,
        "diagnostics": diags.iter().map(berth_doc::Diagnostic::to_json).collect::<Vec<_>>(),
    }));
    for d in diags {
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
    text.push_str(&diagnostics::render(&file, source, diags, color));
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
