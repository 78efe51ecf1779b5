//! The `berth` command line: parse arguments, read files, call the libraries, set the exit code.

mod assembly;
mod client;
mod diagnostics;
mod doctor;
mod generate;
mod input;
mod output;
mod place;
mod progress;
mod route;
mod solve;
mod validate;
mod when;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::output::{Done, Format, Report, View};

/// Exit codes shared by every command.
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// A domain failure: invalid input, infeasible, conflict.
    pub const DOMAIN: u8 = 1;
    /// Usage or IO error.
    pub const USAGE: u8 = 2;
}

#[derive(Parser, Debug)]
#[command(
    name = "berth",
    version,
    about = "Placement and reservation engine for telecom clouds"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Output format of commands that print data (default: each command's usual view:
    /// text for validate, assembly and doctor, table for solve, JSON for the others).
    /// `--format` is the older spelling.
    #[arg(
        short = 'o',
        long = "output",
        alias = "format",
        global = true,
        value_enum,
        value_name = "FORMAT"
    )]
    output: Option<Format>,
    /// No progress display on stderr.
    #[arg(short = 'q', long, global = true)]
    quiet: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check homing templates; print every diagnostic.
    Validate(validate::Args),
    /// Home a template's demands onto an inventory's candidates.
    Solve(solve::Args),
    /// Place a Heat template's resources onto a datacenter topology under its policies.
    Place(place::Args),
    /// Print the JSON Schema of the homing template format.
    Schema,
    /// TNC-O assembly descriptors: validate, plan.
    #[command(subcommand)]
    Assembly(assembly::Command),
    /// Homing plans on a running berthd: create, get, list, delete.
    Plan(client::PlanArgs),
    /// Reservations on a running berthd: create, update, cancel, query.
    Reservation(client::ReservationArgs),
    /// Capacity on a running berthd: query, increase, decrease.
    Capacity(client::CapacityArgs),
    /// Instances (allocations) on a running berthd: create, destroy.
    Instance(client::InstanceArgs),
    /// Check a berthd setup: config, auth, database, inventory, TLS files, a running daemon.
    Doctor(doctor::Args),
    /// Print a shell completion script.
    Completions(generate::CompletionsArgs),
    /// Write man pages (berth.1 and one per subcommand), or print berth.1.
    Man(generate::ManArgs),
}

/// How a command should print and show progress.
#[derive(Clone, Copy, Debug)]
pub struct Ui {
    /// `-o`, or the command's usual format.
    pub format: Format,
    /// `--quiet`.
    pub quiet: bool,
}

fn run(command: Command, ui: Ui) -> anyhow::Result<Done> {
    match command {
        Command::Validate(args) => validate::run(&args, ui),
        Command::Solve(args) => solve::run(&args, ui),
        Command::Place(args) => place::run(&args, ui),
        Command::Assembly(cmd) => assembly::run(&cmd, ui),
        Command::Plan(a) => client::plan(a, ui.quiet),
        Command::Reservation(a) => client::reservation(a),
        Command::Capacity(a) => client::capacity(a),
        Command::Instance(a) => client::instance(a),
        Command::Doctor(a) => doctor::run(&a),
        Command::Completions(a) => generate::completions(&a),
        Command::Man(a) => generate::man(&a),
        Command::Schema => {
            let schema = berth_template::json_schema();
            let text = serde_json::to_string_pretty(&schema)
                .map_err(|e| anyhow::anyhow!("cannot render the schema: {e}"))?;
            Ok(Done::new(
                Report::one(&schema, View::Text(text + "\n"))?,
                exit::OK,
            ))
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let default = match &cli.command {
        Command::Validate(_) | Command::Assembly(_) | Command::Doctor(_) => Format::Text,
        Command::Solve(_) => Format::Table,
        _ => Format::Json,
    };
    let ui = Ui {
        format: cli.output.unwrap_or(default),
        quiet: cli.quiet,
    };
    // A daemon's refusal reads as a sentence; its JSON only when asked for by `-o json|yaml`.
    let data_asked = cli.output.is_some_and(Format::is_data);
    let result = run(cli.command, ui).and_then(|done| {
        match (&done.error, &done.report) {
            (Some(error), _) if !data_asked => eprintln!("berth: {error}"),
            (_, Some(report)) => output::emit(&report.render(ui.format)?)?,
            _ => {}
        }
        Ok(done.code)
    });
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("berth: {e:#}");
            ExitCode::from(exit::USAGE)
        }
    }
}
