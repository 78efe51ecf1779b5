//! `berth-loadtest`: drives a daemon (in process by default) with concurrent clients and prints
//! reservations/s and plans/s with p50/p99 latencies (`cargo xtask loadtest` runs it).

use std::process::ExitCode;

use berthd::loadtest::{
    ClusterDb, ClusterOptions, LoadOptions, OverloadOptions, cluster, overload, run,
};
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
    /// Requests the in-process daemon serves at once before shedding with 503 (0: no limit).
    #[arg(long, default_value_t = berthd::config::Limits::default().max_in_flight)]
    max_in_flight: usize,
    /// Instead of the phases: measure the saturation rate, then offer FACTOR times it
    /// open-loop and report accepted/shed, latencies, memory and losses.
    #[arg(long, value_name = "FACTOR")]
    overload: Option<f64>,
    /// Seconds of the overload.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// The `berthd` binary the overload starts (default: beside this program).
    #[arg(long, value_name = "PATH")]
    daemon: Option<std::path::PathBuf>,
    /// Most connections the overload generator opens.
    #[arg(long, default_value_t = 4096)]
    max_connections: usize,
    /// Cluster run: start this many `berthd` processes on one database and drive them all
    /// for `--seconds`; prints one JSON line.
    #[arg(long)]
    daemons: Option<usize>,
    /// Cluster run: zones (partitions), one pool each.
    #[arg(long, default_value_t = 1)]
    partitions: usize,
    /// Cluster run: `sqlite` (a new file) or `postgres` (needs `--pg-url`).
    #[arg(long, default_value = "sqlite")]
    store: String,
    /// Cluster run: PostgreSQL URL (each run makes a schema of its own).
    #[arg(long)]
    pg_url: Option<String>,
    /// Cluster run: every N-th request of a client is a plan (0: none).
    #[arg(long, default_value_t = 10)]
    plan_every: usize,
    /// Cluster run: seconds each plan read asks the daemon to wait for the plan's end
    /// (`Prefer: wait`); 0: plain reads every 10 ms.
    #[arg(long, default_value_t = berthd::loadtest::PLAN_WAIT_SECS)]
    plan_wait: u64,
    /// Cluster run: daemons in `[cluster]` mode (one holds the calendar's lease, the others
    /// forward writes to it); without it every daemon appends to the shared stream.
    #[arg(long)]
    cluster: bool,
    /// Cluster run: the daemons' `[cluster] partition_key` (`zone`, `provider`, `pool`,
    /// `none`; default `zone`).
    #[arg(long, value_name = "KEY")]
    partition_key: Option<String>,
    /// Cluster run: the PostgreSQL data directory (holding `postmaster.pid`), to count the CPU
    /// time of its processes.
    #[arg(long, value_name = "DIR")]
    pg_data: Option<std::path::PathBuf>,
    /// Cluster run: send requests round-robin over the daemons instead of each write to its
    /// partition's holder by `GET /v1/cluster` (the daemons then forward what they do not hold).
    #[arg(long)]
    no_route: bool,
    /// Cluster run: SIGKILL the holder of the first zone this many seconds in; every write is
    /// then retried under its idempotency key until acknowledged, and the report gives each
    /// partition's write-unavailability window and the acknowledged-then-lost count.
    #[arg(long, value_name = "SECONDS")]
    kill_after: Option<f64>,
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
        max_in_flight: a.max_in_flight,
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
    if let Some(daemons) = a.daemons {
        let daemon = a.daemon.clone().unwrap_or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(|d| d.join("berthd")))
                .unwrap_or_else(|| "berthd".into())
        });
        let db = match (a.store.as_str(), a.pg_url.clone()) {
            ("sqlite", _) => ClusterDb::Sqlite,
            ("postgres", Some(url)) => ClusterDb::Postgres { url },
            ("postgres", None) => {
                eprintln!("berth-loadtest: --store postgres needs --pg-url");
                return ExitCode::from(2);
            }
            (other, _) => {
                eprintln!("berth-loadtest: unknown --store `{other}`; expected sqlite or postgres");
                return ExitCode::from(2);
            }
        };
        let o = ClusterOptions {
            daemon,
            daemons,
            partitions: a.partitions,
            clients: opts.clients,
            seconds: a.seconds,
            db,
            plan_every: a.plan_every,
            plan_wait: a.plan_wait,
            workers: opts.plan_workers,
            lease: a.cluster,
            partition_key: a.partition_key.clone(),
            pg_data: a.pg_data.clone(),
            route: !a.no_route,
            kill_after: a.kill_after,
        };
        return match rt.block_on(cluster(&o)) {
            Ok(r) => match serde_json::to_string(&r) {
                Ok(line) => {
                    println!("{line}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("berth-loadtest: {e}");
                    ExitCode::from(2)
                }
            },
            Err(e) => {
                eprintln!("berth-loadtest: {e:#}");
                ExitCode::from(2)
            }
        };
    }
    if let Some(factor) = a.overload {
        let daemon = a.daemon.unwrap_or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(|d| d.join("berthd")))
                .unwrap_or_else(|| "berthd".into())
        });
        let o = OverloadOptions {
            daemon,
            factor,
            seconds: a.seconds,
            clients: opts.clients,
            max_in_flight: opts.max_in_flight,
            max_connections: a.max_connections,
        };
        return match rt.block_on(overload(&o)) {
            Ok(r) => {
                println!(
                    "berthd {} the generator; {} saturation connections; in-flight limit {}",
                    if r.pinned {
                        "pinned to core 0, apart from"
                    } else {
                        "sharing all cores with"
                    },
                    o.clients,
                    o.max_in_flight
                );
                println!("{}", r.saturation);
                println!(
                    "offered {:.0}/s open-loop ({factor}x saturation = {:.0}/s) for {:.1} s; not sent (all {} connections busy): {}",
                    r.offered_per_second,
                    r.target_per_second,
                    o.seconds,
                    o.max_connections,
                    r.not_sent
                );
                println!("{}", r.accepted);
                println!(
                    "shed with 503 + Retry-After: {} (p99 {:.2} ms); no answer within 10 s: {}; other answers or transport errors: {}",
                    r.shed, r.shed_p99_ms, r.timed_out, r.other
                );
                if let Some((b, p)) = r.daemon_rss_mib {
                    println!("berthd resident memory: {b:.0} MiB before, {p:.0} MiB peak");
                }
                println!("acknowledged reservations lost: {}", r.lost);
                if r.lost > 0 {
                    ExitCode::from(1)
                } else {
                    ExitCode::SUCCESS
                }
            }
            Err(e) => {
                eprintln!("berth-loadtest: {e:#}");
                ExitCode::from(2)
            }
        };
    }
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
