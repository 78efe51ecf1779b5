//! `berth validate`: every diagnostic of every template, text or JSON.

use std::path::PathBuf;

use anyhow::{Context, Result};
use berth_doc::{Diagnostic, Severity};
use berth_inventory::StaticProvider;

use crate::exit;
use crate::input;

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
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Text,
    Json,
}

pub fn run(args: &Args) -> Result<u8> {
    let provider = match &args.inventory {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read inventory {}", path.display()))?;
            match StaticProvider::parse(&text) {
                Ok(p) => Some(p),
                Err(berth_inventory::InventoryError::Invalid { diagnostics }) => {
                    for d in &diagnostics {
                        eprintln!("{}: {}: {d}", path.display(), d.severity);
                    }
                    return Ok(exit::DOMAIN);
                }
                Err(e) => {
                    eprintln!("{}: error: {e}", path.display());
                    return Ok(exit::DOMAIN);
                }
            }
        }
    };
    let mut all_valid = true;
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
        match args.format {
            Format::Json => {
                let out = serde_json::json!({
                    "file": path.display().to_string(),
                    "valid": valid,
                    "diagnostics": diags.iter().map(berth_doc::Diagnostic::to_json).collect::<Vec<_>>(),
                });
                println!("{out}");
            }
            Format::Text => {
                for d in &diags {
                    println!("{}: {}: {d}", path.display(), d.severity);
                }
                if valid {
                    let warnings = diags.len();
                    let note = if warnings == 0 {
                        String::new()
                    } else {
                        format!(" ({warnings} warnings)")
                    };
                    println!("{}: valid{note}", path.display());
                }
            }
        }
    }
    Ok(if all_valid { exit::OK } else { exit::DOMAIN })
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
