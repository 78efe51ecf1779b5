//! `berthd`: the Berth daemon. Reads config (TOML file, `BERTH_*` env), opens the store, starts
//! the reservation and plan services, serves the API, shuts down gracefully on SIGTERM/SIGINT.

use std::path::PathBuf;
use std::process::ExitCode;

use berthd::{Config, serve, shutdown_signal};
use clap::Parser;

// glibc's malloc was an eighth of the daemon's CPU under load (perf); mimalloc's per-thread
// heaps cost less on the many small allocations of a request.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Probe a daemon instead of serving: GET URL (default: `/healthz` of the daemon this
    /// config describes, on loopback, https with TLS), exit 0 on a 2xx answer within 5 s,
    /// else 1. For container health checks where no curl is installed.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    healthcheck: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(url) = &args.healthcheck {
        return healthcheck(&args, url);
    }
    let mut cfg = match Config::load(args.config.as_deref(), |k| std::env::var(k).ok()) {
        Ok(c) => c,
        Err(e) => {
            for p in e.problems() {
                eprintln!("berthd: {p}");
            }
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

/// Exit 0 when the probe passes, 1 otherwise (what container health checks expect).
fn healthcheck(args: &Args, url: &str) -> ExitCode {
    let url = if url.is_empty() {
        match Config::load(args.config.as_deref(), |k| std::env::var(k).ok()) {
            Ok(mut cfg) => {
                cfg.listen = args.listen.unwrap_or(cfg.listen);
                berthd::probe::local_url(&cfg)
            }
            Err(e) => {
                eprintln!("berthd: {e:#}");
                return ExitCode::from(1);
            }
        }
    } else {
        url.to_owned()
    };
    let url = url.as_str();
    let probe = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|rt| rt.block_on(berthd::probe::probe(url, std::time::Duration::from_secs(5))));
    match probe {
        Ok(status) => {
            println!("berthd: {url} answered {status}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("berthd: {e:#}");
            ExitCode::from(1)
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
