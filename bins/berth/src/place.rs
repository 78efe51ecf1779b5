//! `berth place`: put a Heat template's servers and volumes on a datacenter topology under
//! its seed 004 policies; print the placement as JSON or a table, optionally a rack diagram.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use berth_placement::{Catalog, Instance, Objective, Options, Placement, Status};

use crate::output::{Done, Report, View};
use crate::{Ui, diagnostics, exit, progress};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Heat template (YAML or JSON) with seed 004 groups, policies and relationships.
    template: PathBuf,
    /// Topology document (location and network trees, flavors).
    #[arg(long, value_name = "FILE")]
    topology: PathBuf,
    /// Seconds for the improvement phase (the answer is the best found by then).
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    time_limit: f64,
    /// Primary objective: fewest hosts or balanced load.
    #[arg(long, value_enum, default_value_t = ObjectiveArg::Pack)]
    objective: ObjectiveArg,
    /// Seed of the neighbourhood search.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write an SVG rack diagram of the placement to this file.
    #[arg(long, value_name = "FILE.svg")]
    render: Option<PathBuf>,
    /// Side file: extra flavors, volume dimension, license charges per machine type.
    #[arg(long, value_name = "FILE")]
    catalog: Option<PathBuf>,
    /// Current placement (`{RESOURCE: LEAF_ID}`, YAML or JSON): OS::VolNotMoved volumes stay,
    /// and pre-existing resources that relationships name (by resource id) stand there.
    #[arg(long, value_name = "FILE")]
    current: Option<PathBuf>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ObjectiveArg {
    Pack,
    Spread,
}

fn read(path: &PathBuf, what: &str) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {what} {}", path.display()))
}

pub fn run(args: &Args, ui: Ui) -> Result<Done> {
    if !(args.time_limit.is_finite() && args.time_limit >= 0.0) {
        eprintln!(
            "berth: --time-limit {}; expected a non-negative number of seconds",
            args.time_limit
        );
        return Ok(Done::code(exit::USAGE));
    }
    let template_text = read(&args.template, "template")?;
    let topology_text = read(&args.topology, "topology")?;
    let catalog_text = args
        .catalog
        .as_ref()
        .map(|p| read(p, "catalog"))
        .transpose()?;
    let current_text = args
        .current
        .as_ref()
        .map(|p| read(p, "current placement"))
        .transpose()?;

    let loaded = berth_heat::load(&template_text);
    diagnostics::eprint(&args.template, &template_text, &loaded.diagnostics);
    let Some(template) = loaded.template else {
        return Ok(Done::code(exit::DOMAIN));
    };
    let topology = match berth_topology::load(&topology_text) {
        Ok(t) => Arc::new(t),
        Err(e) => {
            eprintln!("{}: {e}", args.topology.display());
            return Ok(Done::code(exit::DOMAIN));
        }
    };
    diagnostics::eprint(
        &args.template,
        &template_text,
        &berth_placement::policy_warnings(&template, &topology),
    );
    let catalog = match catalog_text.as_deref().map(Catalog::parse).transpose() {
        Ok(c) => c.unwrap_or_default(),
        Err(e) => {
            eprintln!(
                "{}: {e}",
                args.catalog
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            );
            return Ok(Done::code(exit::DOMAIN));
        }
    };
    let mut current = BTreeMap::new();
    if let Some(text) = current_text {
        let doc = match berth_doc::parse(&text) {
            Ok(d) => d,
            Err(d) => {
                eprintln!("current placement: {d}");
                return Ok(Done::code(exit::DOMAIN));
            }
        };
        let Some(map) = doc.as_map() else {
            eprintln!(
                "current placement is a {}; expected a mapping RESOURCE: LEAF_ID",
                doc.type_name()
            );
            return Ok(Done::code(exit::DOMAIN));
        };
        for (k, v) in map.iter() {
            match v.as_str() {
                Some(leaf) => {
                    current.insert(k.name.clone(), leaf.to_owned());
                }
                None => {
                    eprintln!(
                        "current placement: {} ({}): expected a leaf id",
                        k.name, v.pos
                    );
                    return Ok(Done::code(exit::DOMAIN));
                }
            }
        }
    }
    let instance = match Instance::from_template(&template, topology, &catalog, &current) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("{}: {e}", args.template.display());
            return Ok(Done::code(exit::DOMAIN));
        }
    };
    let deadline = Instant::now() + Duration::from_secs_f64(args.time_limit.min(86_400.0));
    let live = progress::Live::start("placing", ui.quiet);
    let opts = Options {
        objective: match args.objective {
            ObjectiveArg::Pack => Objective::Pack,
            ObjectiveArg::Spread => Objective::Spread,
        },
        seed: args.seed,
        deadline: Some(Arc::new(deadline)),
        max_iterations: None,
        progress: Some(live.clone()),
        ..Options::default()
    };
    let solution = berth_placement::solve(&instance, &opts);
    live.finish();
    let placement = Placement::new(&instance, &solution);
    if let Some(path) = &args.render {
        let svg = berth_placement::render_svg(&instance, &solution.assignment);
        std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let report = Report::one(&placement.to_json(), View::Text(placement.to_table()))?;
    let code = if solution.status == Status::Placed {
        exit::OK
    } else {
        exit::DOMAIN
    };
    Ok(Done::new(report, code))
}
