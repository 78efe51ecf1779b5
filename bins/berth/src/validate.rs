//! `berth validate`: every diagnostic of every template, text or JSON.

use std::path::PathBuf;

use anyhow::Result;

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
