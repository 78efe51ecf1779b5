//! The `berth` command line: parse arguments, read files, call the libraries, set the exit code.

mod assembly;
mod client;
mod input;
mod place;
mod solve;
mod validate;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
struct Cli {
    #[command(subcommand)]
    command: Command,
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Validate(args) => validate::run(&args),
        Command::Solve(args) => solve::run(&args),
        Command::Place(args) => place::run(&args),
        Command::Assembly(cmd) => assembly::run(&cmd),
        Command::Plan(a) => client::plan(a),
        Command::Reservation(a) => client::reservation(a),
        Command::Capacity(a) => client::capacity(a),
        Command::Instance(a) => client::instance(a),
        Command::Schema => {
            let schema = berth_template::json_schema();
            match serde_json::to_string_pretty(&schema) {
                Ok(text) => {
                    println!("{text}");
                    Ok(exit::OK)
                }
                Err(e) => Err(anyhow::anyhow!("cannot render the schema: {e}")),
            }
        }
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("berth: {e:#}");
            ExitCode::from(exit::USAGE)
        }
    }
}
