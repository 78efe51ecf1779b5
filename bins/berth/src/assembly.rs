//! `berth assembly validate|plan`: TNC-O assembly descriptors.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::exit;

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Check an assembly descriptor; print every diagnostic.
    Validate {
        /// Descriptor file (YAML).
        file: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Print the instantiation plan: instances, prerequisites, lifecycle, placement demands.
    Plan {
        /// Descriptor file (YAML).
        file: PathBuf,
        /// Property value for the instantiation request: `-p name=value`.
        #[arg(short = 'p', long = "property", value_name = "NAME=VALUE", value_parser = parse_kv)]
        properties: Vec<(String, String)>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
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

fn print_diagnostics(file: &std::path::Path, diags: &[berth_doc::Diagnostic], format: Format) {
    match format {
        Format::Json => {
            let valid = !diags.iter().any(berth_doc::Diagnostic::is_error);
            let out = serde_json::json!({
                "file": file.display().to_string(),
                "valid": valid,
                "diagnostics": diags.iter().map(berth_doc::Diagnostic::to_json).collect::<Vec<_>>(),
            });
            println!("{out}");
        }
        Format::Text => {
            for d in diags {
                println!("{}: {}: {d}", file.display(), d.severity);
            }
        }
    }
}

pub fn run(cmd: &Command) -> Result<u8> {
    match cmd {
        Command::Validate { file, format } => {
            let diags = berth_assembly::validate(&read(file)?);
            print_diagnostics(file, &diags, *format);
            let valid = !diags.iter().any(berth_doc::Diagnostic::is_error);
            if valid && *format == Format::Text {
                println!("{}: valid", file.display());
            }
            Ok(if valid { exit::OK } else { exit::DOMAIN })
        }
        Command::Plan {
            file,
            properties,
            format,
        } => {
            let request = properties.iter().cloned().collect();
            match berth_assembly::plan_text(&read(file)?, &request) {
                Ok(plan) => {
                    match format {
                        Format::Text => print!("{}", plan.render()),
                        Format::Json => println!("{}", serde_json::to_string_pretty(&plan)?),
                    }
                    Ok(exit::OK)
                }
                Err(diags) => {
                    print_diagnostics(file, &diags, *format);
                    Ok(exit::DOMAIN)
                }
            }
        }
    }
}
