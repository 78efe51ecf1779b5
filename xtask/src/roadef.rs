//! `cargo xtask bench-roadef`: the machine reassignment search on the ROADEF/EURO 2012
//! instances (`benches/roadef/data/`), each solution checked by the independent checker, in
//! a table next to the winning team's results and the lower bounds (`known.tsv`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::{cargo, root, run};

const SET_A: &str = "a1_1,a1_2,a1_3,a1_4,a1_5,a2_1,a2_2,a2_3,a2_4,a2_5";

fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|k| args.get(k + 1))
        .map(String::as_str)
}

/// `known.tsv`: instance -> (initial cost, winner's cost, lower bound).
fn known(data: &Path) -> Result<BTreeMap<String, [i64; 3]>> {
    let path = data.join("known.tsv");
    let text = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
    let mut out = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 4 {
            bail!(
                "{}: expected 4 tab-separated fields in `{line}`",
                path.display()
            );
        }
        let n = |s: &str| {
            s.parse::<i64>()
                .with_context(|| format!("`{s}` in {}", path.display()))
        };
        out.insert(f[0].to_string(), [n(f[1])?, n(f[2])?, n(f[3])?]);
    }
    Ok(out)
}

/// The model and assignment files of an instance (`a1_1` in `A/`, `b_1` in `B/`, where the
/// files may be numbered `b_1` or `b_01`).
fn files(data: &Path, instance: &str) -> Option<(PathBuf, PathBuf)> {
    let set = if instance.starts_with('b') { "B" } else { "A" };
    let mut names = vec![instance.to_string()];
    if let Some(n) = instance.strip_prefix("b_") {
        names.push(format!("b_{n:0>2}"));
    }
    names.into_iter().find_map(|name| {
        let m = data.join(set).join(format!("model_{name}.txt"));
        let a = data.join(set).join(format!("assignment_{name}.txt"));
        (m.exists() && a.exists()).then_some((m, a))
    })
}

fn gap(ours: i64, reference: i64) -> String {
    if reference == 0 {
        return if ours == 0 {
            "0.00%".into()
        } else {
            "inf".into()
        };
    }
    #[allow(clippy::cast_precision_loss)]
    let g = (ours - reference) as f64 / reference as f64 * 100.0;
    format!("{g:.2}%")
}

pub fn bench(args: &[String]) -> Result<()> {
    let seconds = flag(args, "--seconds").unwrap_or("60");
    let seed = flag(args, "--seed").unwrap_or("1");
    // Without it the example runs one search per core (S41, the winners, ran two at once);
    // the footer reports what the runs say they used.
    let threads = flag(args, "--threads");
    let mut searches = None;
    let instances = flag(args, "--instances").unwrap_or(SET_A);
    let data =
        flag(args, "--data").map_or_else(|| root().join("benches/roadef/data"), PathBuf::from);
    let known = known(&data)?;
    let mut build = cargo();
    build.args([
        "build",
        "--release",
        "--locked",
        "-p",
        "berth-placement",
        "--example",
        "roadef",
    ]);
    run("cargo build --release --example roadef", build)?;
    let target =
        std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), PathBuf::from);
    let exe = target.join("release/examples/roadef");
    let out_dir = target.join("bench-roadef");
    std::fs::create_dir_all(&out_dir)?;
    println!(
        "{:<6} {:>14} {:>14} {:>14} {:>8} {:>14} {:>8} {:>10} {:>10}",
        "inst",
        "initial",
        "berth",
        "winner S41",
        "gap",
        "lower bound",
        "gap LB",
        "moves",
        "polished"
    );
    let mut failures = Vec::new();
    for instance in instances
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let Some((model, assignment)) = files(&data, instance) else {
            println!(
                "{instance:<6} files not found under {} (see its README)",
                data.display()
            );
            continue;
        };
        let out_file = out_dir.join(format!("solution_{instance}.txt"));
        let output = Command::new(&exe)
            .arg(&model)
            .arg(&assignment)
            .arg(&out_file)
            .args(["--seconds", seconds, "--seed", seed])
            .args(threads.map(|t| ["--threads", t]).into_iter().flatten())
            .output()
            .with_context(|| format!("cannot start {}", exe.display()))?;
        if !output.status.success() {
            failures.push(format!(
                "{instance}: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ));
            continue;
        }
        let text = String::from_utf8_lossy(&output.stdout);
        let v: Value = serde_json::from_str(text.lines().last().unwrap_or(""))
            .with_context(|| format!("{instance}: bad output `{text}`"))?;
        let cost = v["cost"].as_i64().unwrap_or(-1);
        searches = searches.or(v["threads"].as_u64());
        if v["feasible"] != Value::Bool(true) || v["checked_cost"].as_i64() != Some(cost) {
            failures.push(format!(
                "{instance}: the checker rejects the solution or disagrees on its cost: {v}"
            ));
        }
        let [initial, winner, bound] = known.get(instance).copied().unwrap_or([-1, -1, -1]);
        if initial >= 0 && v["initial"].as_i64() != Some(initial) {
            failures.push(format!(
                "{instance}: initial cost {} differs from the published {initial}",
                v["initial"]
            ));
        }
        println!(
            "{:<6} {:>14} {:>14} {:>14} {:>8} {:>14} {:>8} {:>10} {:>10}",
            instance,
            v["initial"].as_i64().unwrap_or(-1),
            cost,
            winner,
            gap(cost, winner),
            bound,
            gap(cost, bound),
            v["iterations"].as_u64().unwrap_or(0),
            v["polished"].as_i64().unwrap_or(0),
        );
    }
    println!(
        "({seconds} s per instance, seed {seed}, {} searches at once; solutions in {})",
        searches.map_or_else(|| "?".to_string(), |n| n.to_string()),
        out_dir.display()
    );
    if !failures.is_empty() {
        bail!("{}", failures.join("\n"));
    }
    Ok(())
}
