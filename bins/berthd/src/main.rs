//! `berthd`: the Berth daemon. Reads config (TOML file, `BERTH_*` env), opens the store, starts
//! the reservation and plan services, serves the API, shuts down gracefully on SIGTERM/SIGINT.

use std::path::PathBuf;
use std::process::ExitCode;

use berthd::{Config, serve, shutdown_signal};
use clap::Parser;

/// Berth daemon: ONAP HAS-compatible homing API and Promise reservation API.
#[derive(Parser, Debug)]
#[command(name = "berthd", version)]
struct Args {
    /// TOML config file (env `BERTH_*` variables override it).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to serve on (overrides config and env).
    #[arg(long, value_name = "ADDR")]
    listen: Option<std::net::SocketAddr>,
    /// Database URL (overrides config and env).
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut cfg = match Config::load(args.config.as_deref(), |k| std::env::var(k).ok()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("berthd: {e:#}");
            return ExitCode::from(2);
        }
    };
    if let Some(l) = args.listen {
        cfg.listen = l;
    }
    if let Some(u) = args.database_url {
        cfg.database_url = u;
    }
    init_tracing(&cfg);
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("berthd: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match rt.block_on(serve(cfg, None, shutdown_signal())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %format!("{e:#}"), "berthd stopped");
            eprintln!("berthd: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn init_tracing(cfg: &Config) {
    let filter = tracing_subscriber::EnvFilter::try_new(&cfg.log.filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    let _ = if cfg.log.json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}
