//! Berth's side of `cargo xtask bench-homing`: writes the seeded instances as JSON, and solves
//! one instance file, printing one JSON line (status, objective, seconds, nodes).
//!
//! `homing gen DIR [--sizes 4x20,15x150,50x600p] [--seeds N]` (a `p` after a size: the instance
//! with pair-distance terms, `berth_benches::homing::with_pair_terms`; each instance as `NAME.json`, and as the
//! files a user gives `berth solve`: `NAME.template.yaml` and `NAME.inventory.yaml`, see
//! `berth_benches::homing_files`), `homing check FILE OUTCOME` (`berth solve -o json`'s
//! outcome for the instance's files, re-checked against the instance alone: one JSON line as
//! `solve` prints, without seconds) and `homing solve FILE --limit SECONDS [--node-limit N] [--threads N] [--seed N] [--lp N|off] [--forget] [--trace] [--explain] [--stats] [--plan OUT]` (`--explain`: why
//! an infeasible instance is infeasible, on stderr; `--plan`: the plan found, each demand's
//! candidate, as a JSON array; `--node-limit`: stop after N nodes of all threads, the
//! same search run after run; `--stats`: the search's counters, on stderr; `--forget`: no
//! memory of refuted subtrees, [`SolveOptions::remember`] off, to compare).
//! The time counts building the model from the parsed instance and solving it, as the CP-SAT
//! script counts its own model building and solving.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use berth_benches::homing::{Instance, SIZES, check, generate, to_problem, with_pair_terms};
use berth_benches::homing_files::to_files;
use berth_solver::{Outcome, Progress, SolveOptions};

/// `--trace`: each better plan on stderr, with the seconds since the start and the bound.
struct Trace(Instant);

impl Progress for Trace {
    fn improved(&self, best: f64, bound: Option<f64>) {
        let bound = bound.map_or("-".to_string(), |b| format!("{b}"));
        eprintln!(
            "{:.3} s: {best} (bound {bound})",
            self.0.elapsed().as_secs_f64()
        );
    }
}

fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|k| args.get(k + 1))
        .map(String::as_str)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match (args.first().map(String::as_str), args.get(1)) {
        (Some("gen"), Some(dir)) => gen_all(dir, &args),
        (Some("solve"), Some(file)) => solve(file, &args),
        (Some("check"), Some(file)) => check_outcome(file, args.get(2)),
        _ => {
            eprintln!(
                "usage: homing gen DIR [--sizes 4x20,...] [--seeds N] | homing solve FILE --limit SECONDS [--threads N]"
            );
            ExitCode::from(2)
        }
    }
}

fn gen_all(dir: &str, args: &[String]) -> ExitCode {
    // `50x600p`: the instance with pair-distance terms.
    let sizes: Vec<(usize, usize, bool)> = match arg(args, "--sizes") {
        Some(s) => s
            .split(',')
            .filter_map(|t| {
                let (a, b) = t.split_once('x')?;
                let (b, pairs) = b.strip_suffix('p').map_or((b, false), |b| (b, true));
                Some((a.parse().ok()?, b.parse().ok()?, pairs))
            })
            .collect(),
        None => SIZES.iter().map(|&(n, m)| (n, m, false)).collect(),
    };
    let seeds: u64 = arg(args, "--seeds")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("cannot create {dir}: {e}");
        return ExitCode::from(2);
    }
    for &(n, m, pairs) in &sizes {
        for seed in 1..=seeds {
            let inst = generate(n, m, seed);
            let inst = if pairs { with_pair_terms(inst) } else { inst };
            let path = format!("{dir}/{}.json", inst.name);
            let (template, inventory) = match to_files(&inst) {
                Ok(f) => f,
                Err(e) => {
                    eprintln!("cannot write {} as files: {e}", inst.name);
                    return ExitCode::from(2);
                }
            };
            let text = serde_json::to_string(&inst).unwrap_or_default();
            for (p, t) in [
                (path.clone(), text),
                (format!("{dir}/{}.template.yaml", inst.name), template),
                (format!("{dir}/{}.inventory.yaml", inst.name), inventory),
            ] {
                if let Err(e) = std::fs::write(&p, t) {
                    eprintln!("cannot write {p}: {e}");
                    return ExitCode::from(2);
                }
            }
            println!("{path}");
        }
    }
    ExitCode::SUCCESS
}

fn solve(file: &str, args: &[String]) -> ExitCode {
    let limit: f64 = arg(args, "--limit")
        .and_then(|s| s.parse().ok())
        .unwrap_or(20.0);
    let inst: Instance = match std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(i) => i,
        Err(e) => {
            eprintln!("cannot read {file}: {e}");
            return ExitCode::from(2);
        }
    };
    let start = Instant::now();
    let p = to_problem(&inst);
    let threads: usize = arg(args, "--threads")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let seed: u64 = arg(args, "--seed")
        .and_then(|s| s.parse().ok())
        .unwrap_or(SolveOptions::default().seed);
    let progress: Option<Arc<dyn Progress>> = args
        .iter()
        .any(|a| a == "--trace")
        .then(|| Arc::new(Trace(start)) as Arc<dyn Progress>);
    // `--lp N`: the LP bound from N values on; `--lp off`: never.
    let lp_min_values = match arg(args, "--lp") {
        Some("off") => None,
        Some(n) => match n.parse() {
            Ok(n) => Some(n),
            Err(_) => {
                eprintln!("--lp: expected a number of values or `off`, got `{n}`");
                return ExitCode::from(2);
            }
        },
        None => SolveOptions::default().lp_min_values,
    };
    let node_limit = match arg(args, "--node-limit").map(str::parse::<u64>) {
        None => None,
        Some(Ok(n)) => Some(n),
        Some(Err(_)) => {
            eprintln!("--node-limit: expected a number of nodes");
            return ExitCode::from(2);
        }
    };
    let opts = SolveOptions {
        deadline: Some(Arc::new(start + Duration::from_secs_f64(limit))),
        node_limit,
        threads,
        seed,
        progress,
        lp_min_values,
        remember: !args.iter().any(|a| a == "--forget"),
        ..SolveOptions::default()
    };
    let out = p.solve(&opts);
    let secs = start.elapsed().as_secs_f64();
    if args.iter().any(|a| a == "--stats")
        && let Ok(o) = &out
    {
        eprintln!("{:?}", o.stats());
    }
    let bound = out.as_ref().ok().and_then(Outcome::bound);
    let (status, objective, values, nodes) = match &out {
        Ok(Outcome::Solved {
            solutions,
            optimal,
            stats,
            ..
        }) => {
            let s = &solutions[0];
            let values: Vec<u32> = s.values.iter().map(|v| v.0).collect();
            let status = if *optimal { "OPTIMAL" } else { "FEASIBLE" };
            (status, Some(s.objective), Some(values), stats.nodes)
        }
        Ok(Outcome::Infeasible { stats, explanation }) => {
            if args.iter().any(|a| a == "--explain") {
                eprintln!("{}", p.render_explanation(explanation));
            }
            ("INFEASIBLE", None, None, stats.nodes)
        }
        Ok(Outcome::Stopped { stats, .. }) => ("UNKNOWN", None, None, stats.nodes),
        Err(e) => {
            eprintln!("solver error: {e}");
            return ExitCode::from(1);
        }
    };
    // The plan is checked against the instance alone; a mismatch is a bug.
    let checked = values.as_deref().map(|v| check(&inst, v));
    let status = match checked {
        Some(None) => "WRONG",
        Some(Some(c)) if Some(c) != objective => "WRONG",
        _ => status,
    };
    if let (Some(path), Some(v)) = (arg(args, "--plan"), &values)
        && let Err(e) = std::fs::write(path, serde_json::json!(v).to_string())
    {
        eprintln!("cannot write {path}: {e}");
        return ExitCode::from(2);
    }
    let line = serde_json::json!({
        "name": inst.name,
        "status": status,
        "objective": objective,
        "bound": bound,
        "seconds": secs,
        "nodes": nodes,
    });
    println!("{line}");
    ExitCode::SUCCESS
}

fn read_instance(file: &str) -> Result<Instance, String> {
    std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        .map_err(|e| format!("cannot read {file}: {e}"))
}

/// `berth solve`'s outcome on the instance's files, its plan re-checked against the instance.
fn check_outcome(file: &str, outcome: Option<&String>) -> ExitCode {
    let inst = match read_instance(file) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let Some(o) = outcome else {
        eprintln!("usage: homing check FILE OUTCOME");
        return ExitCode::from(2);
    };
    let v: serde_json::Value = match std::fs::read_to_string(o)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("cannot read {o}: {e}");
            return ExitCode::from(2);
        }
    };
    let best = &v["solutions"][0];
    let objective = best["objective"].as_f64();
    // Each demand's candidate `c<i>` back to the instance's value `i`.
    let values: Option<Vec<u32>> = (0..inst.demands.len())
        .map(|d| {
            best["placements"][format!("d{d}")]["candidate_id"]
                .as_str()?
                .strip_prefix('c')?
                .parse()
                .ok()
        })
        .collect();
    let status = match (v["status"].as_str(), v["optimal"].as_bool()) {
        (Some("solved"), Some(true)) => "OPTIMAL",
        (Some("solved"), _) => "FEASIBLE",
        (Some("not found"), _)
            if v["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("no plan:")) =>
        {
            "INFEASIBLE"
        }
        (Some("not found"), _) => "UNKNOWN",
        _ => "ERROR",
    };
    let status = match (status, values.as_deref().map(|x| check(&inst, x))) {
        ("OPTIMAL" | "FEASIBLE", Some(Some(c))) if Some(c) == objective => status,
        ("OPTIMAL" | "FEASIBLE", _) => "WRONG",
        (s, _) => s,
    };
    let line = serde_json::json!({
        "name": inst.name,
        "status": status,
        "objective": objective,
        "bound": v["bound"],
        "nodes": v["stats"]["nodes"],
    });
    println!("{line}");
    ExitCode::SUCCESS
}
