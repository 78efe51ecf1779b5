//! `berth solve`: home a template's demands onto an inventory and print the plan.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use berth_engine::{
    CloudPolicyInput, EngineError, ErrorCode, LatencyModel, PlanOptions, PlanOutcome, Status,
};
use berth_inventory::{Inventory, InventoryError, StaticProvider};

use crate::output::{Done, Format, Report, View};
use crate::{Ui, diagnostics, exit, input, progress};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Template file (YAML or JSON).
    template: PathBuf,
    /// Inventory file (YAML or JSON): candidates, locations, licenses, optional topology.
    #[arg(long, value_name = "FILE")]
    inventory: PathBuf,
    /// Override a parameter: `-p name=value` (value read as YAML: 250, true, [a, b], text).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE", value_parser = input::parse_param)]
    params: Vec<(String, serde_json::Value)>,
    /// How many plans, best first (HAS num_solution).
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    solutions: u32,
    /// Stop after this many seconds and print the best plan found (not proven optimal).
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    time_limit: Option<Duration>,
    /// Stop after this many search nodes (deterministic, unlike --time-limit).
    #[arg(long, value_name = "N")]
    node_limit: Option<u64>,
    /// Stop at the first plan found (fast; not proven optimal).
    #[arg(long)]
    first: bool,
    /// Search threads, sharing the search tree (0: one per core). A proven optimum is the
    /// same plan for any count; a plan cut by --time-limit may differ from run to run.
    /// With --node-limit the threads run in lock step: the same plan run after run.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = parse_threads)]
    threads: usize,
    /// HAS `unique`: a candidate used in one plan is excluded from the next ones.
    #[arg(long)]
    unique: bool,
    /// Latency model for network constraints without a topology path: ms per km.
    #[arg(long, value_name = "MS", value_parser = parse_non_negative)]
    latency_per_km: Option<f64>,
    /// Objective bonus for keeping a demand on its existing placement.
    #[arg(long, value_name = "BONUS", default_value_t = 0.0, value_parser = parse_non_negative)]
    existing_bonus: f64,
    /// Directory `get_file` paths are relative to (default: the template's directory).
    #[arg(long, value_name = "DIR")]
    files_dir: Option<PathBuf>,
    /// Cloud selection policy (seed 002, YAML or JSON) applied to the demands it names;
    /// needs --cloud-owners and --cloud-costs.
    #[arg(long, value_name = "FILE", requires_all = ["cloud_owners", "cloud_costs"])]
    cloud_policy: Option<PathBuf>,
    /// Owner capability file for --cloud-policy: which intents each cloud owner realizes.
    #[arg(long, value_name = "FILE", requires_all = ["cloud_policy", "cloud_costs"])]
    cloud_owners: Option<PathBuf>,
    /// Workload deployment cost file for --cloud-policy.
    #[arg(long, value_name = "FILE", requires_all = ["cloud_policy", "cloud_owners"])]
    cloud_costs: Option<PathBuf>,
    /// Workload file for --cloud-policy: each demand's (or VNFC's) base instance type, per
    /// cloud owner where it differs, and the resources it reserves (checked against private
    /// clouds' free capacity; default: the demand's fit constraints' requests).
    #[arg(long, value_name = "FILE", requires = "cloud_policy")]
    cloud_workloads: Option<PathBuf>,
}

fn parse_non_negative(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("expected a non-negative number, found `{s}`")),
    }
}

fn parse_threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n <= berth_engine::MAX_THREADS => Ok(n),
        _ => Err(format!(
            "expected a number of threads from 0 (one per core) to {}, found `{s}`",
            berth_engine::MAX_THREADS
        )),
    }
}

fn parse_seconds(s: &str) -> Result<Duration, String> {
    let x = parse_non_negative(s)?;
    Duration::try_from_secs_f64(x).map_err(|e| format!("`{s}` is not a duration: {e}"))
}

pub fn run(args: &Args, ui: Ui) -> Result<Done> {
    let loaded = input::read_template(&args.template, args.files_dir.as_deref())?;
    let opts = berth_template::LoadOptions {
        parameters: input::params(&args.params),
        files: loaded.files,
        ..Default::default()
    };
    let analysis = berth_template::analyze(&loaded.text, &opts);
    diagnostics::eprint(&args.template, &loaded.text, &analysis.diagnostics);
    let Some(template) = analysis.template else {
        let errors = analysis.diagnostics.iter().filter(|d| d.is_error()).count();
        let e = EngineError::InvalidInput {
            problems: vec![format!(
                "template {} has {errors} error(s)",
                args.template.display()
            )],
        };
        return Ok(fail(ui.format, &e));
    };
    let text = std::fs::read_to_string(&args.inventory)
        .with_context(|| format!("cannot read inventory {}", args.inventory.display()))?;
    let mut inventory = match Inventory::parse(&text) {
        Ok(inv) => inv,
        Err(e) => {
            report_inventory_error(&args.inventory, &text, &e);
            let err = EngineError::InvalidInput {
                problems: vec![format!("inventory {} is invalid", args.inventory.display())],
            };
            return Ok(fail(ui.format, &err));
        }
    };
    // Loader warnings, capacity keys no request of this template uses, and request keys no
    // candidate has.
    for w in berth_engine::inventory_diagnostics(&inventory, &[&template]) {
        eprintln!("{}: warning: {w}", args.inventory.display());
    }
    let doc = berth_doc::parse(&loaded.text).ok();
    diagnostics::eprint(
        &args.template,
        &loaded.text,
        &berth_engine::request_diagnostics(&template, doc.as_ref(), &inventory),
    );
    let topology = match load_topology(&args.inventory, &mut inventory)? {
        Ok(t) => t,
        Err(problems) => {
            for p in &problems {
                eprintln!("{}: error: {p}", args.inventory.display());
            }
            return Ok(fail(ui.format, &EngineError::InvalidInput { problems }));
        }
    };
    let cloud_policy = match load_cloud_policy(args)? {
        Ok(c) => c,
        Err(e) => {
            if let EngineError::InvalidInput { problems } = &e {
                for p in problems {
                    eprintln!("berth: error: {p}");
                }
            }
            return Ok(fail(ui.format, &e));
        }
    };
    let provider = StaticProvider::new(inventory);
    let plan_opts = PlanOptions {
        solutions: args.solutions as usize,
        time_limit: args.time_limit,
        node_limit: args.node_limit,
        first_plan: args.first,
        unique: args.unique,
        threads: args.threads,
        latency: args.latency_per_km.map(LatencyModel::per_km),
        existing_bonus: args.existing_bonus,
        topology: topology.map(std::sync::Arc::new),
        cloud_policy: cloud_policy.map(std::sync::Arc::new),
        ..PlanOptions::default()
    };
    let live = progress::Live::start("solving", ui.quiet);
    let plan_opts = PlanOptions {
        progress: Some(live.clone()),
        ..plan_opts
    };
    let result = berth_engine::plan(&template, &provider, &plan_opts);
    live.finish();
    match result {
        Ok(outcome) => {
            let code = if outcome.status == Status::Solved {
                exit::OK
            } else {
                exit::DOMAIN
            };
            let report = Report::one(&outcome, View::Text(outcome.render_text()))?;
            Ok(Done::new(report, code))
        }
        Err(e) => Ok(fail(ui.format, &e)),
    }
}

/// The cloud policy and its operator files: all three or none (clap enforces it). IO errors
/// are `Err` (exit 2); invalid documents are `Ok(Err(..))` (exit 1).
fn load_cloud_policy(args: &Args) -> Result<Result<Option<CloudPolicyInput>, EngineError>> {
    let (Some(policy), Some(owners), Some(costs)) =
        (&args.cloud_policy, &args.cloud_owners, &args.cloud_costs)
    else {
        return Ok(Ok(None));
    };
    let read = |p: &PathBuf, what: &str| {
        std::fs::read_to_string(p).with_context(|| format!("cannot read {what} {}", p.display()))
    };
    let (policy, owners, costs) = (
        read(policy, "cloud policy")?,
        read(owners, "cloud owner file")?,
        read(costs, "cloud cost file")?,
    );
    let workloads = args
        .cloud_workloads
        .as_ref()
        .map(|p| read(p, "cloud workload file"))
        .transpose()?;
    Ok(CloudPolicyInput::parse_with(&policy, &owners, &costs, workloads.as_deref()).map(Some))
}

/// An error outcome: the error document for JSON and YAML, the message on stderr otherwise;
/// and the exit code.
fn fail(format: Format, e: &EngineError) -> Done {
    let code = if e.code() == ErrorCode::Unavailable {
        exit::USAGE
    } else {
        exit::DOMAIN
    };
    if format.is_data() {
        Done::new(
            Report::json(PlanOutcome::from_error(e).to_json(), &[]),
            code,
        )
    } else {
        eprintln!("berth: {e}");
        Done::code(code)
    }
}

fn report_inventory_error(path: &Path, text: &str, e: &InventoryError) {
    match e {
        InventoryError::Invalid { diagnostics } => diagnostics::eprint(path, text, diagnostics),
        other => eprintln!("{}: error: {other}", path.display()),
    }
}

/// The inventory's topology: inline (already loaded with the inventory), or `topology_file`
/// read relative to the inventory. IO errors are `Err` (exit 2); an invalid topology file is
/// `Ok(Err(problems))` (exit 1).
fn load_topology(
    path: &Path,
    inv: &mut Inventory,
) -> Result<Result<Option<berth_topology::Topology>, Vec<String>>> {
    if let Some(t) = inv.topology.take() {
        return Ok(Ok(Some(t)));
    }
    let Some(file) = &inv.topology_file else {
        return Ok(Ok(None));
    };
    let full = path.parent().unwrap_or(Path::new("")).join(file);
    let text = std::fs::read_to_string(&full)
        .with_context(|| format!("cannot read topology {}", full.display()))?;
    Ok(berth_topology::load(&text)
        .map(Some)
        .map_err(|e| vec![format!("topology {}: {e}", full.display())]))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_daemon_caps_threads_as_the_solver_does() {
        assert_eq!(berth_config::MAX_PLAN_THREADS, berth_engine::MAX_THREADS);
        assert_eq!(super::parse_threads("256"), Ok(256));
        assert!(super::parse_threads("257").is_err());
    }
}
