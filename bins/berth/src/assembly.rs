//! `berth assembly validate|plan|scale`: TNC-O assembly descriptors.

use std::collections::BTreeMap;
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
    /// Evaluate the scale policies on current metrics: each policy's decision (nodes
    /// before and after) and where its smoothing window stands.
    Scale {
        /// Descriptor file (YAML).
        file: PathBuf,
        /// Property value for the instantiation request: `-p name=value`.
        #[arg(short = 'p', long = "property", value_name = "NAME=VALUE", value_parser = parse_kv)]
        properties: Vec<(String, String)>,
        /// Samples of a policy's metric, oldest first: `--metric A.load=95,96,97`.
        #[arg(long = "metric", value_name = "OWNER.METRIC=V,V,...", value_parser = parse_series)]
        metric: Vec<(String, Vec<f64>)>,
        /// Samples from a file: a mapping of `owner.metric` to a list of numbers (YAML/JSON).
        #[arg(long, value_name = "FILE")]
        metrics: Option<PathBuf>,
        /// Current nodes of a clustered component: `--nodes B=3` (default: its
        /// initial-quantity).
        #[arg(long = "nodes", value_name = "COMPONENT=N", value_parser = parse_nodes)]
        nodes: Vec<(String, u32)>,
    },
}

fn parse_series(s: &str) -> Result<(String, Vec<f64>), String> {
    let (k, v) = parse_kv(s)?;
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.parse::<f64>() {
            Ok(x) if x.is_finite() => out.push(x),
            _ => {
                return Err(format!(
                    "`{part}` in `{k}` is not a number; expected e.g. {k}=95,96,97"
                ));
            }
        }
    }
    Ok((k, out))
}

fn parse_nodes(s: &str) -> Result<(String, u32), String> {
    let (k, v) = parse_kv(s)?;
    v.trim()
        .parse::<u32>()
        .map(|n| (k.clone(), n))
        .map_err(|_| format!("`{v}` is not a node count; expected e.g. {k}=3"))
}

/// Samples per `owner.metric`, oldest first.
type Series = Vec<(String, Vec<f64>)>;

/// `--metrics FILE`: `owner.metric: [numbers]`, every problem with its line:column.
fn read_metrics(path: &Path) -> Result<std::result::Result<Series, Vec<Diagnostic>>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read metrics {}", path.display()))?;
    let doc = match berth_doc::parse(&text) {
        Ok(d) => d,
        Err(d) => return Ok(Err(vec![d])),
    };
    let root = berth_doc::Path::root();
    let Some(map) = doc.as_map() else {
        return Ok(Err(vec![Diagnostic::error(
            &root,
            doc.pos,
            format!(
                "expected a mapping of `owner.metric` to a list of numbers; found a {}",
                doc.type_name()
            ),
        )]));
    };
    let mut out = Vec::new();
    let mut diags = Vec::new();
    for (k, v) in map.iter() {
        let p = root.key(k.name.as_str());
        let Some(items) = v.as_seq() else {
            diags.push(Diagnostic::error(
                &p,
                v.pos,
                format!("expected a list of numbers; found a {}", v.type_name()),
            ));
            continue;
        };
        let mut series = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match item.as_f64() {
                Some(x) if x.is_finite() => series.push(x),
                _ => diags.push(Diagnostic::error(
                    &p.index(i),
                    item.pos,
                    format!(
                        "expected a number; found `{}`",
                        item.scalar_text()
                            .unwrap_or_else(|| item.type_name().to_owned())
                    ),
                )),
            }
        }
        out.push((k.name.clone(), series));
    }
    Ok(if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    })
}

/// The text view of `scale`: one line per policy, then its scale events.
fn render_scale(outcomes: &[berth_assembly::ScaleOutcome]) -> String {
    let mut out = String::new();
    if outcomes.is_empty() {
        out.push_str("no scale policies\n");
    }
    for o in outcomes {
        out.push_str(&format!(
            "{} ({}, {} samples): {}\n",
            o.policy, o.metric, o.samples, o.summary
        ));
        for d in &o.decisions {
            let (verb, at, from, to) = match d {
                berth_assembly::ScaleDecision::ScaleOut { at, from, to } => {
                    ("scale out", at, from, to)
                }
                berth_assembly::ScaleDecision::ScaleIn { at, from, to } => {
                    ("scale in", at, from, to)
                }
            };
            out.push_str(&format!(
                "  sample {}: {verb} {} {from} -> {to}\n",
                at + 1,
                o.target
            ));
        }
    }
    out
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
        Command::Scale {
            file,
            properties,
            metric,
            metrics,
            nodes,
        } => {
            let request = properties.iter().cloned().collect();
            let source = read(file)?;
            let mut series: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            if let Some(path) = metrics {
                match read_metrics(path)? {
                    Ok(list) => series.extend(list),
                    Err(diags) => {
                        let text = std::fs::read_to_string(path).unwrap_or_default();
                        return Ok(Done::new(
                            diagnostics_report(path, &text, &diags, ui),
                            exit::DOMAIN,
                        ));
                    }
                }
            }
            // Samples on the command line follow the file's.
            for (k, v) in metric {
                series
                    .entry(k.clone())
                    .or_default()
                    .extend(v.iter().copied());
            }
            let nodes: BTreeMap<String, u32> = nodes.iter().cloned().collect();
            let plan = match berth_assembly::plan_text(&source, &request) {
                Ok(plan) => plan,
                Err(diags) => {
                    return Ok(Done::new(
                        diagnostics_report(file, &source, &diags, ui),
                        exit::DOMAIN,
                    ));
                }
            };
            match berth_assembly::scale(&plan, &series, &nodes) {
                Ok(outcomes) => {
                    let report = Report::one(&outcomes, View::Text(render_scale(&outcomes)))?;
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
