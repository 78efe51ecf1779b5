//! `cargo xtask bench-homing`: Berth and CP-SAT side by side on seeded homing instances.
//!
//! The instances are written once as JSON (`target/bench-homing/instances/`); Berth
//! (`berth-benches` example `homing`, release build, in-process solver API) and CP-SAT
//! (`benches/homing/cpsat.py`, OR-Tools in a venv under `target/bench-homing/venv`, never a
//! product dependency) read the same file, one after the other, with the same time limit.
//! Each instance is also written as the files a user gives `berth solve` (a template and an
//! inventory, `berth_benches::homing_files`) and solved by the release `berth` binary, a fresh
//! process per instance timed from start to exit, beside the in-process solver API; its plan is
//! re-checked against the instance (`homing check`).
//! Fails when Berth returns a plan its checker rejects (either path), or proves an optimum
//! different from one CP-SAT proves (beyond the tolerance CP-SAT states for its rounded
//! pair-distance costs; exactly, on instances without them), or the solver API and
//! `berth solve` both prove different optima, or one proves infeasible what another solved.
//! `--speedup` also solves each instance with the solver API on one thread, and reports two
//! threads against one in the same run.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::{cargo, root, run};

/// One solver's answer on one instance.
struct Answer {
    status: String,
    objective: Option<f64>,
    /// The proven bound (Berth only).
    bound: Option<f64>,
    /// How far its objective may lie from the exact one (CP-SAT's rounded pair-distance
    /// costs; 0 for Berth and on instances without pair terms).
    tolerance: f64,
    seconds: f64,
}

impl Answer {
    /// The relative gap as `berth solve` reports it.
    fn gap(&self) -> Option<f64> {
        let (o, b) = (self.objective?, self.bound?);
        Some((o - b).abs() / o.abs().max(1.0))
    }
}

fn parse(out: &[u8]) -> Result<Answer> {
    let text = String::from_utf8_lossy(out);
    let line = text.lines().last().context("no output")?;
    let v: Value = serde_json::from_str(line).with_context(|| format!("bad line `{line}`"))?;
    Ok(Answer {
        status: v["status"].as_str().unwrap_or("?").to_string(),
        objective: v["objective"].as_f64(),
        bound: v["bound"].as_f64(),
        tolerance: v["tolerance"].as_f64().unwrap_or(0.0),
        seconds: v["seconds"].as_f64().unwrap_or(f64::NAN),
    })
}

fn gap_text(a: &Answer) -> String {
    match a.gap() {
        None => "-".to_string(),
        Some(0.0) => "0".to_string(),
        Some(g) => format!("{:.3}%", 100.0 * g),
    }
}

/// The Berth runner on `file` through the solver API, in-process.
fn api(exe: &Path, file: &str, limit: &str, threads: &str) -> Result<Answer> {
    let o = Command::new(exe)
        .args(["solve", file, "--limit", limit, "--threads", threads])
        .output()
        .context("cannot run the Berth runner")?;
    if !o.status.success() {
        bail!(
            "Berth runner failed on {file}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    parse(&o.stdout)
}

/// `berth solve` on the instance's files, a fresh process timed from start to exit, its
/// outcome re-checked against the instance by the runner.
fn cli(berth: &Path, runner: &Path, file: &str, limit: &str, threads: &str) -> Result<Answer> {
    let stem = file.strip_suffix(".json").unwrap_or(file);
    let (template, inventory) = (
        format!("{stem}.template.yaml"),
        format!("{stem}.inventory.yaml"),
    );
    let start = std::time::Instant::now();
    let o = Command::new(berth)
        .args(["solve", &template, "--inventory", &inventory])
        .args([
            "--time-limit",
            limit,
            "--threads",
            threads,
            "-o",
            "json",
            "-q",
        ])
        .output()
        .context("cannot run berth solve")?;
    let seconds = start.elapsed().as_secs_f64();
    // 0: a plan; 1: none (infeasible, or none before the limit); anything else is a failure.
    if !matches!(o.status.code(), Some(0 | 1)) {
        bail!(
            "berth solve failed on {template}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let outcome = format!("{stem}.outcome.json");
    std::fs::write(&outcome, &o.stdout).with_context(|| format!("cannot write {outcome}"))?;
    let c = Command::new(runner)
        .args(["check", file, &outcome])
        .output()
        .context("cannot run the Berth runner")?;
    if !c.status.success() {
        bail!(
            "checking berth solve's outcome on {file} failed: {}",
            String::from_utf8_lossy(&c.stderr)
        );
    }
    Ok(Answer {
        seconds,
        ..parse(&c.stdout)?
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

/// Where two answers on one instance contradict each other: proven optima further apart than
/// their tolerances (0 but for CP-SAT's rounded pair-distance costs: exactly equal), or a
/// proof of infeasibility against a plan.
fn disagree(name: &str, (x, a): (&str, &Answer), (y, b): (&str, &Answer)) -> Option<String> {
    let solved = |s: &str| s == "OPTIMAL" || s == "FEASIBLE";
    let apart = match (a.objective, b.objective) {
        (Some(p), Some(q)) => (p - q).abs() > a.tolerance + b.tolerance,
        (p, q) => p != q,
    };
    if a.status == "OPTIMAL" && b.status == "OPTIMAL" && apart {
        return Some(format!(
            "{name}: {x} proves {:?}, {y} proves {:?}",
            a.objective, b.objective
        ));
    }
    ((a.status == "INFEASIBLE" && solved(&b.status))
        || (b.status == "INFEASIBLE" && solved(&a.status)))
    .then(|| format!("{name}: {x} {}, {y} {}", a.status, b.status))
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
    let mut b = cargo();
    b.args(["build", "--release", "-q", "-p", "berth", "--bin", "berth"]);
    run("build berth (release)", b)?;
    let exe = target.join("release/examples/homing");
    let berth_exe = target.join("release/berth");
    let speedup = args.iter().any(|a| a == "--speedup");
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
        "\ntime limit {limit} s each; CP-SAT with {workers} workers, Berth with {threads} threads; \
         Berth: the solver API in-process, then `berth solve` on the instance's files (a fresh \
         process, its whole time); gap: the API's plan to its proven bound; ratio = CP-SAT time / \
         Berth (API) time\n"
    );
    println!(
        "| instance | CP-SAT status | CP-SAT objective | CP-SAT s | Berth status | Berth objective | Berth s | gap | berth solve status | berth solve objective | berth solve s | ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut bugs = Vec::new();
    let (mut t_cp, mut t_berth, mut t_cli) = (0.0, 0.0, 0.0);
    let mut pairs: Vec<(String, Answer, Answer)> = Vec::new();
    let mut threads1: Vec<(String, Answer, Answer)> = Vec::new();
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
        let berth = api(&exe, f, limit, threads)?;
        let user = cli(&berth_exe, &exe, f, limit, threads)?;
        let ratio = cp.as_ref().map_or("-".to_string(), |c| {
            format!("{:.1}", c.seconds / berth.seconds)
        });
        println!(
            "| {name} {}{}| {} {}| {ratio} |",
            show(cp.as_ref()),
            show(Some(&berth)),
            gap_text(&berth),
            show(Some(&user))
        );
        if let Some(c) = &cp {
            t_cp += c.seconds;
            bugs.extend(disagree(&name, ("Berth", &berth), ("CP-SAT", c)));
            bugs.extend(disagree(&name, ("berth solve", &user), ("CP-SAT", c)));
        }
        bugs.extend(disagree(
            &name,
            ("the solver API", &berth),
            ("berth solve", &user),
        ));
        t_berth += berth.seconds;
        t_cli += user.seconds;
        if berth.status == "WRONG" {
            bugs.push(format!("{name}: Berth's plan fails the instance checker"));
        }
        if user.status == "WRONG" || user.status == "ERROR" {
            bugs.push(format!(
                "{name}: berth solve's plan fails the instance checker (or its answer is an error)"
            ));
        }
        if speedup {
            let one = api(&exe, f, limit, "1")?;
            bugs.extend(disagree(
                &name,
                ("one thread", &one),
                ("two threads", &berth),
            ));
            threads1.push((name.clone(), one, api_copy(&berth)));
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
        "| **total** | | | {} | | | {t_berth:.3} | | | | {t_cli:.3} | {total_ratio} |",
        if py.is_some() {
            format!("{t_cp:.3}")
        } else {
            "-".to_string()
        }
    );
    if speedup {
        println!();
        for line in speedup_table(&threads1, threads) {
            println!("{line}");
        }
    }
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

fn api_copy(a: &Answer) -> Answer {
    Answer {
        status: a.status.clone(),
        objective: a.objective,
        bound: a.bound,
        tolerance: a.tolerance,
        seconds: a.seconds,
    }
}

/// One thread against `threads` (the solver API, same run): time to proof where both prove,
/// objective and gap at the limit where either does not.
fn speedup_table(rows: &[(String, Answer, Answer)], threads: &str) -> Vec<String> {
    let mut out = vec![
        format!(
            "| instance | 1 thread status | objective | gap | s | {threads} threads status | objective | gap | s | speedup |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|".to_string(),
    ];
    let (mut t1, mut tn) = (0.0, 0.0);
    for (name, one, many) in rows {
        let proven = one.status == "OPTIMAL" && many.status == "OPTIMAL";
        let speed = if proven {
            t1 += one.seconds;
            tn += many.seconds;
            format!("{:.2}", one.seconds / many.seconds)
        } else {
            "-".to_string()
        };
        let obj = |a: &Answer| a.objective.map_or("-".to_string(), |o| format!("{o}"));
        out.push(format!(
            "| {name} | {} | {} | {} | {:.4} | {} | {} | {} | {:.4} | {speed} |",
            one.status,
            obj(one),
            gap_text(one),
            one.seconds,
            many.status,
            obj(many),
            gap_text(many),
            many.seconds
        ));
    }
    if tn > 0.0 {
        out.push(format!(
            "\nproven by both: 1 thread {t1:.3} s, {threads} threads {tn:.3} s, speedup {:.2}",
            t1 / tn
        ));
    }
    out
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
                // Within CP-SAT's rounding of pair-distance costs counts as equal.
                (Some(x), Some(y)) if x < y - c.tolerance => better += 1,
                (Some(x), Some(y)) if (x - y).abs() <= c.tolerance => equal += 1,
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
