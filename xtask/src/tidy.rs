//! `xtask tidy`: the layering rule from `cargo metadata`, file headers, banned test attributes,
//! and (in `files.rs`) the file DAG and line budget of every crate.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// Layer of every workspace library; a crate may depend only on crates of a lower layer.
/// Constraints sit above inventory because plugins are built from its candidates.
/// Bins, benches and xtask sit above everything and are not listed.
const LAYERS: &[(&str, u8)] = &[
    ("berth-doc", 0),
    ("berth-units", 0),
    ("berth-template", 1),
    ("berth-topology", 1),
    ("berth-calendar", 1),
    ("berth-assembly", 1),
    ("berth-cloudpolicy", 1),
    ("berth-solver", 1),
    ("berth-heat", 1),
    ("berth-inventory", 2),
    ("berth-constraints", 3),
    ("berth-placement", 2),
    ("berth-store", 2),
    ("berth-config", 2),
    ("berth-engine", 4),
    ("berth-service", 5),
    ("berth-api", 6),
    // A cloud underneath: implements the service's inventory source and VIM traits.
    ("berth-openstack", 6),
];

/// Runtime, storage and wire crates only the engine and above may use.
const IO_CRATES: &[&str] = &[
    "tokio",
    "sqlx",
    "axum",
    "hyper",
    "reqwest",
    "tower",
    "tower-http",
];

/// The persistence boundary: the one crate below the engine that may use a runtime and a
/// database driver. It knows no HTTP.
const IO_EXCEPTIONS: &[(&str, &[&str])] = &[("berth-store", &["tokio", "sqlx"])];

pub fn run(root: &Path) -> Result<()> {
    let mut problems = Vec::new();
    layering(root, &mut problems)?;
    sources(root, &mut problems)?;
    crate::files::check(root, &mut problems)?;
    if problems.is_empty() {
        eprintln!("tidy: ok");
        return Ok(());
    }
    for p in &problems {
        eprintln!("tidy: {p}");
    }
    bail!("{} tidy problem(s)", problems.len())
}

fn layer_of(name: &str) -> Option<u8> {
    LAYERS.iter().find(|(n, _)| *n == name).map(|&(_, l)| l)
}

fn layering(root: &Path, problems: &mut Vec<String>) -> Result<()> {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .context("cannot run cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let packages = meta["packages"].as_array().cloned().unwrap_or_default();
    let mut seen = BTreeMap::new();
    for pkg in &packages {
        let name = pkg["name"].as_str().unwrap_or_default().to_owned();
        let is_lib = pkg["targets"].as_array().is_some_and(|ts| {
            ts.iter().any(|t| {
                t["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "lib"))
            })
        });
        let dir = Path::new(pkg["manifest_path"].as_str().unwrap_or_default())
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let in_crates = dir.parent().is_some_and(|p| p.ends_with("crates"));
        if in_crates {
            if !is_lib {
                problems.push(format!(
                    "crates/{name}: every package under crates/ is a library"
                ));
            }
            if dir.file_name().and_then(|f| f.to_str()) != Some(name.as_str()) {
                problems.push(format!(
                    "{}: directory name must equal package name `{name}`",
                    dir.display()
                ));
            }
            if !name.starts_with("berth-") {
                problems.push(format!("crates/{name}: library names start with `berth-`"));
            }
        }
        let Some(layer) = layer_of(&name) else {
            if in_crates {
                problems.push(format!(
                    "{name}: no layer assigned in xtask/src/tidy.rs LAYERS"
                ));
            }
            continue;
        };
        seen.insert(name.clone(), layer);
        for dep in pkg["dependencies"].as_array().into_iter().flatten() {
            let dname = dep["name"].as_str().unwrap_or_default();
            let kind = dep["kind"].as_str().unwrap_or("normal");
            if let Some(dl) = layer_of(dname)
                && dl >= layer
            {
                problems.push(format!(
                    "{name} (layer {layer}) depends on {dname} (layer {dl}) as a {kind} dependency; \
                     expected only lower layers"
                ));
            }
            let excepted = IO_EXCEPTIONS
                .iter()
                .any(|(c, deps)| *c == name && deps.contains(&dname));
            if layer < 4 && kind != "dev" && IO_CRATES.contains(&dname) && !excepted {
                problems.push(format!(
                    "{name} (layer {layer}) depends on `{dname}`; runtime, storage and HTTP \
                     crates belong to berth-engine and above"
                ));
            }
        }
    }
    Ok(())
}

fn sources(root: &Path, problems: &mut Vec<String>) -> Result<()> {
    let mut files = Vec::new();
    for dir in ["crates", "bins", "benches", "xtask", "fuzz"] {
        collect_rs(&root.join(dir), &mut files)?;
    }
    // Split so this file does not flag itself.
    let banned = [concat!("#[", "ignore"), concat!("#[", "should_panic")];
    for file in files {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let rel = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let first = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("#!["));
        if !first.is_some_and(|l| l.starts_with("//!")) {
            problems.push(format!(
                "{rel}: expected a `//!` line saying what the file is for"
            ));
        }
        for (i, line) in text.lines().enumerate() {
            for b in banned {
                if line.contains(b) {
                    problems.push(format!(
                        "{rel}:{}: `{b}]` is not allowed; check the Err instead",
                        i + 1
                    ));
                }
            }
        }
    }
    Ok(())
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let path = entry?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            if matches!(name, "target" | "corpus" | "artifacts") || name.starts_with('.') {
                continue;
            }
            collect_rs(&path, out)?;
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
    out.sort();
    Ok(())
}
