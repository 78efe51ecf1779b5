//! Runs the machine reassignment search on one ROADEF/EURO 2012 instance, writes the
//! solution file, reads it back and checks it with the independent checker; prints one JSON
//! line. `cargo xtask bench-roadef` drives it:
//! `cargo run --release -p berth-placement --example roadef -- MODEL ASSIGNMENT OUT [--seconds S] [--seed N] [--iterations TRIES] [--threads N] [--history H] [--stall N] [--start SOLUTION]`
//! (`--history` and `--stall` fix what the search otherwise sizes to the run; `--start` goes
//! on from a solution file, an earlier run's `OUT` say, the move costs still counted from
//! `ASSIGNMENT`).
//! `--threads` (default: the cores available) runs that many searches at once, one per thread,
//! and keeps the cheapest.

use std::sync::Arc;
use std::time::{Duration, Instant};

use berth_placement::PlacementError;
use berth_placement::roadef::{LnsOptions, Model, check, improve, render_solution};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // A flag given with a missing or unreadable value is an error, not the default.
    let flag = |name: &str| {
        let k = args.iter().position(|a| a == name)?;
        let value = args.get(k + 1);
        match value.and_then(|s| s.parse::<f64>().ok()) {
            Some(v) if v.is_finite() && v >= 0.0 => Some(v),
            _ => {
                eprintln!(
                    "roadef: {name}: expected a number at least 0, found {}",
                    value.map_or("nothing".to_string(), |s| format!("`{s}`"))
                );
                std::process::exit(2)
            }
        }
    };
    let [model_path, assignment_path, out_path] = [0, 1, 2].map(|k| {
        args.get(k).cloned().unwrap_or_else(|| {
            eprintln!(
                "usage: roadef MODEL ASSIGNMENT OUT [--seconds S] [--seed N] [--iterations TRIES] [--threads N] [--history H] [--stall N] [--start SOLUTION]"
            );
            std::process::exit(2)
        })
    });
    let seconds = flag("--seconds").unwrap_or(10.0);
    let seed = flag("--seed").map_or(1, |s| s as u64);
    let read = |p: &str| {
        std::fs::read_to_string(p).unwrap_or_else(|e| {
            eprintln!("roadef: cannot read {p}: {e}");
            std::process::exit(2)
        })
    };
    // The search knows assignments only; the files an infeasible one came from are named here.
    let fail_in = |file: Option<&str>, e: PlacementError| -> ! {
        match file {
            Some(file) => eprintln!("roadef: {file}: {e}"),
            None => eprintln!("roadef: {e}"),
        }
        std::process::exit(1)
    };
    let fail = |e: PlacementError| -> ! { fail_in(None, e) };
    let started = Instant::now();
    let model = Model::parse(&model_path, &read(&model_path)).unwrap_or_else(|e| fail(e));
    let initial = model
        .parse_assignment(&assignment_path, &read(&assignment_path))
        .unwrap_or_else(|e| fail(e));
    let start_path = args.iter().position(|a| a == "--start").map(|k| {
        args.get(k + 1).unwrap_or_else(|| {
            eprintln!("roadef: --start: expected a solution file, found nothing");
            std::process::exit(2)
        })
    });
    let start = start_path.map(|path| {
        model
            .parse_assignment(path, &read(path))
            .unwrap_or_else(|e| fail(e))
    });
    let options = LnsOptions {
        seed,
        history: flag("--history").map(|h| h as usize),
        stall: flag("--stall").map(|h| h as u64),
        iterations: flag("--iterations").map(|n| n as u64),
        start,
        threads: flag("--threads").map_or_else(
            || std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            |n| (n as usize).max(1),
        ),
        deadline: Some(Arc::new(started + Duration::from_secs_f64(seconds))),
    };
    let out = improve(&model, &initial, &options).unwrap_or_else(|e| {
        let file = match &e {
            PlacementError::RoadefInfeasible { .. } => Some(assignment_path.as_str()),
            PlacementError::RoadefStartInfeasible { .. } => start_path.map(String::as_str),
            _ => None,
        };
        fail_in(file, e)
    });
    let elapsed = started.elapsed().as_secs_f64();
    std::fs::write(&out_path, render_solution(&out.assignment)).unwrap_or_else(|e| {
        eprintln!("roadef: cannot write {out_path}: {e}");
        std::process::exit(2)
    });
    // The independent check reads the written file back, as the challenge's checker did.
    let written = model
        .parse_assignment(&out_path, &read(&out_path))
        .unwrap_or_else(|e| fail(e));
    let verdict = check(&model, &initial, &written);
    let line = serde_json::json!({
        "initial": out.initial_cost,
        "start": out.start_cost,
        "cost": out.cost,
        "checked_cost": verdict.cost.as_ref().map(|c| c.total),
        "feasible": verdict.feasible(),
        "terms": verdict.cost.as_ref().map(|c| serde_json::json!({
            "load": c.load, "balance": c.balance, "process_move": c.process_move,
            "service_move": c.service_move, "machine_move": c.machine_move,
        })),
        "violations": verdict.violations.iter().take(5).map(ToString::to_string).collect::<Vec<_>>(),
        "iterations": out.iterations,
        "kicks": out.kicks,
        "threads": options.threads,
        "thread": out.thread,
        "history": out.history,
        "polished": out.polished,
        "tried": out.tried,
        "seconds": elapsed,
    });
    println!("{line}");
}
