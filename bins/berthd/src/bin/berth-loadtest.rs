//! `berth-loadtest`: drives a daemon (in process by default) with concurrent clients and prints
//! reservations/s and plans/s with p50/p99 latencies (`cargo xtask loadtest` runs it).

use std::process::ExitCode;

use berthd::loadtest::{LoadOptions, run};
use clap::Parser;

/// Load test of the Berth daemon.
#[derive(Parser, Debug)]
#[command(name = "berth-loadtest")]
struct Args {
    /// Daemon URL; by default a daemon is started in process on a temporary SQLite file.
    #[arg(long)]
    url: Option<String>,
    /// Bearer token for `--url`.
    #[arg(long)]
    token: Option<String>,
    /// Concurrent clients.
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// Reservations per client.
    #[arg(long, default_value_t = 50)]
    reservations: usize,
    /// Plans per client.
    #[arg(long, default_value_t = 4)]
    plans: usize,
    /// Plan workers of the in-process daemon.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Commands per transaction of the in-process daemon (1 turns group commit off).
    #[arg(long, default_value_t = berthd::config::Journal::default().max_batch)]
    max_batch: usize,
}

fn main() -> ExitCode {
    let a = Args::parse();
    let opts = LoadOptions {
        url: a.url,
        token: a.token,
        clients: a.clients.max(1),
        reservations_per_client: a.reservations,
        plans_per_client: a.plans,
        plan_workers: a.workers,
        max_batch: a.max_batch.max(1),
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("berth-loadtest: {e}");
            return ExitCode::from(2);
        }
    };
    match rt.block_on(run(&opts)) {
        Ok(report) => {
            println!(
                "{} concurrent clients, up to {} commands per commit",
                opts.clients, opts.max_batch
            );
            for p in &report.phases {
                println!("{p}");
            }
            if let (Some(n), Some(r)) = (report.reservation_commits, report.phases.first()) {
                let per = if n > 0 { r.ok as f64 / n as f64 } else { 0.0 };
                println!("reservations committed in {n} transactions ({per:.1} per commit)");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("berth-loadtest: {e:#}");
            ExitCode::from(2)
        }
    }
}
