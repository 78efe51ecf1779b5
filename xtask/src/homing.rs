//! `cargo xtask bench-homing`: Berth and CP-SAT side by side on seeded homing instances.
//!
//! The instances are written once as JSON (`target/bench-homing/instances/`); Berth
//! (`berth-benches` example `homing`, release build, in-process solver API) and CP-SAT
//! (`benches/homing/cpsat.py`, OR-Tools in a venv under `target/bench-homing/venv`, never a
//! product dependency) read the same file, one after the other, with the same time limit.
//! Fails when Berth returns a plan its checker rejects, or proves an optimum different from one
//! CP-SAT proves, or proves infeasible what CP-SAT solved (or the reverse).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::{cargo, root, run};

/// One solver's answer on one instance.
struct Answer {
    status: String,
    objective: Option<f64>,
    seconds: f64,
}

fn parse(out: &[u8]) -> Result<Answer> {
    let text = String::from_utf8_lossy(out);
    let line = text.lines().last().context("no output")?;
    let v: Value = serde_json::from_str(line).with_context(|| format!("bad line `{line}`"))?;
    Ok(Answer {
        status: v["status"].as_str().unwrap_or("?").to_string(),
        objective: v["objective"].as_f64(),
        seconds: v["seconds"].as_f64().unwrap_or(f64::NAN),
    })
}

fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|k| args.get(k + 1))
        .map(String::as_str)
}

/// The venv's python with ortools, installing it on first use; `None` (with the reason
/// printed) when it cannot be installed.
fn ortools_python(dir: &Path) -> Option<PathBuf> {
    let venv = dir.join("venv");
    let py = venv.join("bin/python");
    let has = |py: &Path| {
        Command::new(py)
            .args(["-c", "import ortools.sat.python.cp_model"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if has(&py) {
        return Some(py);
    }
    eprintln!("==> installing ortools into {}", venv.display());
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success());
    let installed = made
        && Command::new(venv.join("bin/pip"))
            .args(["install", "-q", "ortools"])
            .status()
            .is_ok_and(|s| s.success());
    if installed && has(&py) {
        Some(py)
    } else {
        eprintln!(
            "bench-homing: ortools could not be installed (python3 -m venv + pip install ortools \
             failed); running Berth alone, without the CP-SAT column"
        );
        None
    }
}

fn show(a: Option<&Answer>) -> String {
    match a {
        None => "| - | - | - ".to_string(),
        Some(a) => format!(
            "| {} | {} | {:.4} ",
            a.status,
            a.objective.map_or("-".to_string(), |o| format!("{o}")),
            a.seconds
        ),
    }
}

pub(crate) fn bench(args: &[String]) -> Result<()> {
    let limit = flag(args, "--limit").unwrap_or("20");
    let workers = flag(args, "--workers").unwrap_or("2");
    // Both sides get the same cores unless told otherwise.
    let threads = flag(args, "--threads").unwrap_or(workers);
    // Under the target directory cargo builds into (`CARGO_TARGET_DIR` when set).
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map_or_else(|| root().join("target"), |t| root().join(t));
    let dir = target.join("bench-homing");
    let inst_dir = dir.join("instances");
    let mut b = cargo();
    b.args([
        "build",
        "--release",
        "-q",
        "-p",
        "berth-benches",
        "--example",
        "homing",
    ]);
    run("build the Berth runner (release)", b)?;
    let exe = target.join("release/examples/homing");
    let mut gen_cmd = Command::new(&exe);
    gen_cmd.arg("gen").arg(&inst_dir);
    for f in ["--sizes", "--seeds"] {
        if let Some(v) = flag(args, f) {
            gen_cmd.args([f, v]);
        }
    }
    let out = gen_cmd.output().context("cannot run the Berth runner")?;
    if !out.status.success() {
        bail!("instance generation failed");
    }
    let files: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    let py = if args.iter().any(|a| a == "--no-cpsat") {
        None
    } else {
        ortools_python(&dir)
    };
    let script = root().join("benches/homing/cpsat.py");
    println!(
        "\ntime limit {limit} s each; CP-SAT with {workers} workers, Berth with {threads} threads; ratio = CP-SAT time / Berth time\n"
    );
    println!(
        "| instance | CP-SAT status | CP-SAT objective | CP-SAT s | Berth status | Berth objective | Berth s | ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut bugs = Vec::new();
    let (mut t_cp, mut t_berth) = (0.0, 0.0);
    let mut pairs: Vec<(String, Answer, Answer)> = Vec::new();
    for f in &files {
        let name = Path::new(f)
            .file_stem()
            .map_or(f.clone(), |s| s.to_string_lossy().into_owned());
        let cp = match &py {
            Some(py) => {
                let o = Command::new(py)
                    .arg(&script)
                    .arg(f)
                    .args(["--limit", limit, "--workers", workers])
                    .output()
                    .context("cannot run the CP-SAT script")?;
                if !o.status.success() {
                    bail!(
                        "CP-SAT script failed on {name}: {}",
                        String::from_utf8_lossy(&o.stderr)
                    );
                }
                Some(parse(&o.stdout)?)
            }
            None => None,
        };
        let o = Command::new(&exe)
            .args(["solve", f, "--limit", limit, "--threads", threads])
            .output()
            .context("cannot run the Berth runner")?;
        if !o.status.success() {
            bail!(
                "Berth runner failed on {name}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let berth = parse(&o.stdout)?;
        let ratio = cp.as_ref().map_or("-".to_string(), |c| {
            format!("{:.1}", c.seconds / berth.seconds)
        });
        println!(
            "| {name} {}{}| {ratio} |",
            show(cp.as_ref()),
            show(Some(&berth))
        );
        if let Some(c) = &cp {
            t_cp += c.seconds;
            if c.status == "OPTIMAL" && berth.status == "OPTIMAL" && c.objective != berth.objective
            {
                bugs.push(format!(
                    "{name}: Berth proves {:?}, CP-SAT proves {:?}",
                    berth.objective, c.objective
                ));
            }
            let solved = |s: &str| s == "OPTIMAL" || s == "FEASIBLE";
            if (c.status == "INFEASIBLE" && solved(&berth.status))
                || (berth.status == "INFEASIBLE" && solved(&c.status))
            {
                bugs.push(format!(
                    "{name}: Berth {}, CP-SAT {}",
                    berth.status, c.status
                ));
            }
        }
        t_berth += berth.seconds;
        if berth.status == "WRONG" {
            bugs.push(format!("{name}: Berth's plan fails the instance checker"));
        }
        if let Some(c) = cp {
            pairs.push((name, c, berth));
        }
    }
    let total_ratio = if py.is_some() {
        format!("{:.1}", t_cp / t_berth)
    } else {
        "-".to_string()
    };
    println!(
        "| **total** | | | {} | | | {t_berth:.3} | {total_ratio} |",
        if py.is_some() {
            format!("{t_cp:.3}")
        } else {
            "-".to_string()
        }
    );
    if !pairs.is_empty() {
        println!();
        for line in summary(&pairs) {
            println!("{line}");
        }
    }
    if !bugs.is_empty() {
        bail!("Berth disagrees:\n  {}", bugs.join("\n  "));
    }
    Ok(())
}

/// The targets read off one table: time on the instances both prove (in total and
/// the slowest ratio), and the objectives where either stopped at the limit (every
/// instance of this family minimizes).
fn summary(pairs: &[(String, Answer, Answer)]) -> Vec<String> {
    let proven = |a: &Answer| a.status == "OPTIMAL";
    let both: Vec<&(String, Answer, Answer)> = pairs
        .iter()
        .filter(|(_, c, b)| proven(c) && proven(b))
        .collect();
    let mut out = Vec::new();
    if !both.is_empty() {
        let cp: f64 = both.iter().map(|t| t.1.seconds).sum();
        let berth: f64 = both.iter().map(|t| t.2.seconds).sum();
        let slowest = both
            .iter()
            .map(|(n, c, b)| (c.seconds / b.seconds, n))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        out.push(format!(
            "proven by both: {} instances, CP-SAT {cp:.4} s, Berth {berth:.4} s, {:.1}x in total; slowest ratio {}",
            both.len(),
            cp / berth,
            slowest.map_or("-".to_string(), |(r, n)| format!("{r:.1} ({n})"))
        ));
    }
    let only: Vec<&str> = pairs
        .iter()
        .filter(|(_, c, b)| proven(b) && !proven(c))
        .map(|t| t.0.as_str())
        .collect();
    if !only.is_empty() {
        out.push(format!("proven by Berth only: {}", only.join(", ")));
    }
    let open: Vec<&(String, Answer, Answer)> = pairs
        .iter()
        .filter(|(_, c, b)| !(proven(c) && proven(b)))
        .collect();
    if !open.is_empty() {
        let (mut better, mut equal, mut worse) = (0, 0, Vec::new());
        for (n, c, b) in &open {
            match (b.objective, c.objective) {
                (Some(x), Some(y)) if x < y => better += 1,
                (Some(x), Some(y)) if x == y => equal += 1,
                (Some(_), None) => better += 1,
                (None, None) => equal += 1,
                (x, y) => {
                    let show = |o: Option<f64>| o.map_or("no plan".to_string(), |v| format!("{v}"));
                    worse.push(format!("{n} ({} against {})", show(x), show(y)));
                }
            }
        }
        out.push(format!(
            "at the limit (not proven by both): Berth better on {better}, equal on {equal}, worse on {}{}",
            worse.len(),
            if worse.is_empty() {
                String::new()
            } else {
                format!(": {}", worse.join(", "))
            }
        ));
    }
    out
}
