//! The load test: N concurrent HTTP clients against a daemon (an in-process one on a temporary
//! SQLite file unless a URL is given), measuring reservations/s and plans/s with p50/p99;
//! `cluster` runs N daemon processes on one database for a fixed time.

mod cluster;
mod cpu;
mod failover;
mod overload;

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// What to run.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Daemon to drive; `None` starts one in process.
    pub url: Option<String>,
    /// Bearer token for a remote daemon.
    pub token: Option<String>,
    /// Concurrent clients.
    pub clients: usize,
    /// `create-reservation` calls per client.
    pub reservations_per_client: usize,
    /// Plans per client (each accepted, then polled until final).
    pub plans_per_client: usize,
    /// Plan workers of the in-process daemon.
    pub plan_workers: usize,
    /// Group commit size of the in-process daemon (1: one transaction per command).
    pub max_batch: usize,
    /// Requests the in-process daemon serves at once before shedding (0: no limit).
    pub max_in_flight: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            url: None,
            token: None,
            clients: 64,
            reservations_per_client: 50,
            plans_per_client: 4,
            plan_workers: 2,
            max_batch: crate::config::Journal::default().max_batch,
            max_in_flight: crate::config::Limits::default().max_in_flight,
        }
    }
}

/// Throughput and latency of one phase.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// What was measured.
    pub name: &'static str,
    /// Successful operations.
    pub ok: usize,
    /// Failed operations.
    pub errors: usize,
    /// Wall time of the phase.
    pub seconds: f64,
    /// Median latency, ms.
    pub p50_ms: f64,
    /// 99th percentile latency, ms.
    pub p99_ms: f64,
}

impl Phase {
    /// Successful operations per second.
    pub fn per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.ok as f64 / self.seconds
        } else {
            0.0
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:<22} {:>6} ok {:>4} err {:>8.1}/s  p50 {:>8.2} ms  p99 {:>8.2} ms",
            self.name,
            self.ok,
            self.errors,
            self.per_second(),
            self.p50_ms,
            self.p99_ms
        )
    }
}

pub use cluster::{ClusterDb, ClusterOptions, ClusterReport, cluster};
pub use failover::{FailoverReport, PartitionWindow};
pub use overload::{OverloadOptions, OverloadReport, overload};

/// The `q` quantile (0..=1) of sorted `v`, nearest rank.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn phase(name: &'static str, mut lat: Vec<f64>, errors: usize, seconds: f64) -> Phase {
    lat.sort_by(f64::total_cmp);
    Phase {
        name,
        ok: lat.len(),
        errors,
        seconds,
        p50_ms: quantile(&lat, 0.5),
        p99_ms: quantile(&lat, 0.99),
    }
}

/// How long a plan read asks the daemon to wait for the plan's end (`Prefer: wait`).
pub const PLAN_WAIT_SECS: u64 = 20;

const TEMPLATE: &str = "homing_template_version: 2017-10-10\nlocations: {customer: {latitude: 32.8, longitude: -96.8}}\ndemands: {vG: [{inventory_provider: aai, inventory_type: cloud}]}\noptimization: {minimize: {sum: [{distance_between: [customer, vG]}]}}\n";

struct Target {
    base: String,
    token: Option<String>,
    client: reqwest::Client,
}

impl Target {
    fn post(&self, path: &str, body: &Value) -> reqwest::RequestBuilder {
        let r = self.client.post(format!("{}{path}", self.base)).json(body);
        match &self.token {
            Some(t) => r.bearer_auth(t),
            None => r,
        }
    }

    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        let r = self.client.get(format!("{}{path}", self.base));
        match &self.token {
            Some(t) => r.bearer_auth(t),
            None => r,
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// `[reservations, plan accept, plan end-to-end]`.
    pub phases: Vec<Phase>,
    /// Transactions that committed the reservation phase (from the daemon's
    /// `berth_commits_total`), when its metrics are readable.
    pub reservation_commits: Option<u64>,
}

/// `berth_commits_total` from the daemon's metrics.
async fn commits(t: &Target) -> Option<u64> {
    let text = t.get("/metrics").send().await.ok()?.text().await.ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("berth_commits_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|v| v as u64)
}

/// A daemon to drive: a remote one, or one started in process on a temporary SQLite file.
struct Running {
    target: std::sync::Arc<Target>,
    stop: tokio::sync::oneshot::Sender<()>,
    server: Option<tokio::task::JoinHandle<Result<()>>>,
    _dir: tempfile::TempDir,
}

impl Running {
    async fn start(opts: &LoadOptions, pool: usize) -> Result<Running> {
        let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
        let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (base, server) = match &opts.url {
            Some(u) => (u.trim_end_matches('/').to_owned(), None),
            None => {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .context("cannot bind a loopback port")?;
                let addr = listener.local_addr()?;
                let mut cfg = crate::Config {
                    listen: addr,
                    database_url: format!("sqlite://{}", dir.path().join("berth.db").display()),
                    ..crate::Config::default()
                };
                cfg.plans.workers = opts.plan_workers.max(1);
                cfg.journal.max_batch = opts.max_batch.max(1);
                cfg.limits.max_in_flight = opts.max_in_flight;
                cfg.log.filter = "warn".into();
                let shutdown = async move {
                    let _ = stop_rx.await;
                };
                let handle = tokio::spawn(crate::serve(cfg, Some(listener), shutdown));
                (format!("http://{addr}"), Some(handle))
            }
        };
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .pool_max_idle_per_host(pool)
            .build()?;
        let target = std::sync::Arc::new(Target {
            base,
            token: opts.token.clone(),
            client,
        });
        wait_ready(&target).await?;
        Ok(Running {
            target,
            stop,
            server,
            _dir: dir,
        })
    }

    async fn stop(self) -> Result<()> {
        let _ = self.stop.send(());
        if let Some(h) = self.server {
            h.await.context("the daemon task failed")??;
        }
        Ok(())
    }
}

/// Runs the reservation phase, then the plan phase.
pub async fn run(opts: &LoadOptions) -> Result<Report> {
    let running = Running::start(opts, opts.clients).await?;
    let t = std::sync::Arc::clone(&running.target);
    let grow = json!({"zone": "loadtest", "capacity": {"instances": 1_000_000_000u64}});
    let r = t.post("/increase-capacity", &grow).send().await?;
    if !r.status().is_success() {
        bail!("increase-capacity failed: {}", r.status());
    }
    let mut phases = Vec::new();

    // Reservations: each client creates its reservations one after the other.
    let commits_before = commits(&t).await;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..opts.clients {
        let (t, n) = (std::sync::Arc::clone(&t), opts.reservations_per_client);
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(n);
            let mut errors = 0;
            for _ in 0..n {
                let end = (chrono::Utc::now() + chrono::TimeDelta::days(1)).to_rfc3339();
                let body = json!({"zone": "loadtest", "capacity": {"instances": "1"}, "end": end});
                let t0 = Instant::now();
                match t.post("/create-reservation", &body).send().await {
                    Ok(r) if r.status().is_success() => lat.push(t0.elapsed().as_secs_f64() * 1e3),
                    _ => errors += 1,
                }
            }
            (lat, errors)
        }));
    }
    let (lat, errors) = collect(tasks).await;
    phases.push(phase(
        "reservations",
        lat,
        errors,
        started.elapsed().as_secs_f64(),
    ));
    let reservation_commits = match (commits_before, commits(&t).await) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };

    // Plans: accept, then poll until final.
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..opts.clients {
        let (t, n) = (std::sync::Arc::clone(&t), opts.plans_per_client);
        tasks.push(tokio::spawn(async move {
            let mut accept = Vec::with_capacity(n);
            let mut e2e = Vec::with_capacity(n);
            let mut errors = 0;
            for _ in 0..n {
                let t0 = Instant::now();
                let body = json!({"name": "load", "template": TEMPLATE, "timeout": 60});
                let id = match t.post("/v1/plans", &body).send().await {
                    Ok(r) if r.status().as_u16() == 201 => r
                        .json::<Value>()
                        .await
                        .ok()
                        .and_then(|v| v["id"].as_str().map(str::to_owned)),
                    _ => None,
                };
                let Some(id) = id else {
                    errors += 1;
                    continue;
                };
                accept.push(t0.elapsed().as_secs_f64() * 1e3);
                if wait_final(
                    std::slice::from_ref(&t),
                    0,
                    &id,
                    (Duration::from_millis(5), PLAN_WAIT_SECS),
                    Duration::from_secs(300),
                )
                .await
                .0
                {
                    e2e.push(t0.elapsed().as_secs_f64() * 1e3);
                } else {
                    errors += 1;
                }
            }
            (accept, e2e, errors)
        }));
    }
    let mut accept = Vec::new();
    let mut e2e = Vec::new();
    let mut errors = 0;
    for task in tasks {
        if let Ok((a, e, n)) = task.await {
            accept.extend(a);
            e2e.extend(e);
            errors += n;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    phases.push(phase("plans accepted", accept, 0, secs));
    phases.push(phase("plans solved (e2e)", e2e, errors, secs));

    running.stop().await?;
    Ok(Report {
        phases,
        reservation_commits,
    })
}

async fn collect(tasks: Vec<tokio::task::JoinHandle<(Vec<f64>, usize)>>) -> (Vec<f64>, usize) {
    let mut lat = Vec::new();
    let mut errors = 0;
    for task in tasks {
        if let Ok((l, e)) = task.await {
            lat.extend(l);
            errors += e;
        }
    }
    (lat, errors)
}

async fn wait_ready(t: &Target) -> Result<()> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        if t.get("/readyz")
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("the daemon at {} did not become ready", t.base)
}

/// Reads plan `id` until it is final or `limit` passed: whether it is `done`, and the reads
/// it took. Each read asks the daemon to answer once the plan is final (`Prefer: wait=W`,
/// `wait` seconds; 0: plain reads), and the next read follows after `poll`. It asks
/// `targets[first]`, and the next daemon whenever one refuses the connection (killed): every
/// daemon reads the shared plans.
async fn wait_final(
    targets: &[Target],
    first: usize,
    id: &str,
    (poll, wait): (Duration, u64),
    limit: Duration,
) -> (bool, u64) {
    let started = Instant::now();
    let mut i = first;
    let mut reads = 0;
    while started.elapsed() < limit {
        let mut req = targets[i].get(&format!("/v1/plans/{id}"));
        if wait > 0 {
            req = req.header("prefer", format!("wait={wait}"));
        }
        reads += 1;
        match req.send().await {
            Ok(r) => {
                if let Ok(v) = r.json::<Value>().await {
                    match v["plans"][0]["status"].as_str() {
                        Some("done") => return (true, reads),
                        Some("not found" | "error") => return (false, reads),
                        _ => {}
                    }
                }
            }
            Err(e) if e.is_connect() => {
                i = (i + 1) % targets.len();
                continue;
            }
            Err(_) => {}
        }
        tokio::time::sleep(poll).await;
    }
    (false, reads)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(
            (quantile(&v, 0.5), quantile(&v, 0.99), quantile(&v, 1.0)),
            (50.0, 99.0, 100.0)
        );
        assert_eq!(quantile(&[], 0.5), 0.0);
        assert_eq!(quantile(&[7.0], 0.01), 7.0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_small_in_process_run_reports_every_phase() {
        let opts = LoadOptions {
            clients: 4,
            reservations_per_client: 5,
            plans_per_client: 1,
            ..LoadOptions::default()
        };
        let phases = run(&opts).await.unwrap().phases;
        assert_eq!(phases.len(), 3);
        assert_eq!((phases[0].ok, phases[0].errors), (20, 0));
        assert_eq!((phases[2].ok, phases[2].errors), (4, 0));
        assert!(phases[0].p50_ms <= phases[0].p99_ms);
    }
}
