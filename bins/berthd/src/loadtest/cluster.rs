//! Cluster load: N real `berthd` processes on one database (PostgreSQL, or a SQLite file for
//! the single-daemon default), P partitions (zones, one pool each), C closed-loop clients for
//! a fixed time. Each client sends its requests round-robin over the zones, each to its
//! partition's holder by the cluster's map (`GET /v1/cluster`; round-robin over the daemons
//! without `route`, or for a write naming no partition): mostly Promise `create-reservation`,
//! every `plan_every`-th a HAS plan polled until final.
//! Reports reservations/s, plans/s, p50/p99, errors, the CPU seconds of every daemon, of
//! PostgreSQL and of the generator over the measured window, reservations per CPU-second of
//! daemons + PostgreSQL, and the share of writes the daemons forwarded, as one JSON line.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use berth_api::cluster::{ClusterView, FORWARDED_TO};

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::{Value, json};

use super::failover::{Ack, FailoverReport};
use super::{Phase, TEMPLATE, Target, cpu, failover, phase, wait_final, wait_ready};

/// The database the daemons share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterDb {
    /// A new SQLite file in a temporary directory.
    Sqlite,
    /// A PostgreSQL URL; each run uses a new schema of it.
    Postgres {
        /// `postgres://…`.
        url: String,
    },
}

/// What to run.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// The `berthd` binary.
    pub daemon: PathBuf,
    /// Daemons started.
    pub daemons: usize,
    /// Zones (partitions), one pool each.
    pub partitions: usize,
    /// Closed-loop clients.
    pub clients: usize,
    /// Length of the measurement.
    pub seconds: f64,
    /// Shared database.
    pub db: ClusterDb,
    /// Every `plan_every`-th request of a client is a plan (0: no plans).
    pub plan_every: usize,
    /// Plan workers per daemon.
    pub workers: usize,
    /// Seconds each plan read asks the daemon to wait for the plan's end (`Prefer: wait`);
    /// 0: plain reads every 10 ms.
    pub plan_wait: u64,
    /// `[cluster]` mode: the calendar is partitioned by zone (`[cluster] partition_key`
    /// default), each partition's lease held by one daemon, writes forwarded to the holder of
    /// their zone (otherwise every daemon appends compare-and-set to the one shared stream).
    pub lease: bool,
    /// `[cluster] partition_key` of the daemons (`zone`, `provider`, `pool`, `none`); `None`:
    /// their default (`zone`).
    pub partition_key: Option<String>,
    /// The PostgreSQL cluster's data directory, to count its CPU time (its postmaster and
    /// children); `None`: PostgreSQL's CPU is not measured.
    pub pg_data: Option<PathBuf>,
    /// Send each write to its partition's holder by the cluster's map (`GET /v1/cluster`),
    /// refreshed when an answer says it was forwarded; otherwise round-robin over the daemons
    /// (the daemons forward what they do not hold).
    pub route: bool,
    /// Failover: SIGKILL the holder of the first zone this many seconds into the window; the
    /// clients then retry every write under its idempotency key until acknowledged.
    pub kill_after: Option<f64>,
}

/// What one run measured.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterReport {
    /// `sqlite` or `postgres`.
    pub store: &'static str,
    /// `lease` (`[cluster]` mode: partitions by zone, writes forwarded to their holder) or
    /// `shared` (every daemon appends compare-and-set to one stream).
    pub mode: &'static str,
    /// Daemons.
    pub daemons: usize,
    /// Partitions.
    pub partitions: usize,
    /// Clients.
    pub clients: usize,
    /// Measured seconds.
    pub seconds: f64,
    /// Reservations created per second.
    pub reservations_per_s: f64,
    /// Reservation latency p50, ms.
    pub reservation_p50_ms: f64,
    /// Reservation latency p99, ms.
    pub reservation_p99_ms: f64,
    /// Plans accepted and solved per second.
    pub plans_per_s: f64,
    /// Plan latency (accept to final), p50, ms.
    pub plan_p50_ms: f64,
    /// Plan latency p99, ms.
    pub plan_p99_ms: f64,
    /// Reads of a plan until it was final, per plan (`--plan-wait 0`: polls every 10 ms).
    pub plan_reads_per_plan: f64,
    /// Failed requests (any non-success answer, transport error, or failed plan).
    pub errors: usize,
    /// Cores the machine offers.
    pub cores: usize,
    /// `[cluster] partition_key` (`zone` unless set; `-` outside `[cluster]` mode).
    pub partition_key: String,
    /// CPU seconds of each daemon over the measured window.
    pub daemon_cpu_s: Vec<f64>,
    /// CPU seconds of all daemons.
    pub daemons_cpu_s: f64,
    /// CPU seconds of PostgreSQL (postmaster and every backend), when measured.
    pub postgres_cpu_s: Option<f64>,
    /// CPU seconds of this load generator.
    pub loadgen_cpu_s: f64,
    /// Reservations created per CPU-second of the daemons and PostgreSQL.
    pub reservations_per_cpu_s: f64,
    /// Writes the daemons forwarded to another daemon (`berth_forwarded_requests_total`).
    pub forwarded: u64,
    /// Forwarded writes per reservation sent.
    pub forwarded_share: f64,
    /// Whether the clients routed writes by the partition map.
    pub routed: bool,
    /// Times a client re-read the partition map (an answer said it was forwarded, or a 503).
    pub map_refreshes: u64,
    /// With `kill_after`: the write-unavailability windows and the lost-write check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failover: Option<FailoverReport>,
    /// 1-minute load average at the start of the window.
    pub load_avg_start: f64,
    /// 1-minute load average at its end.
    pub load_avg_end: f64,
}

/// CPU and counters at one instant of a run.
#[derive(Debug, Clone)]
struct Sample {
    daemons: Vec<f64>,
    postgres: Option<f64>,
    loadgen: f64,
    forwarded: u64,
    load: f64,
}

async fn sample(fleet: &Fleet, targets: &[Target], postmaster: Option<u32>) -> Sample {
    let mut forwarded = 0;
    for t in targets {
        forwarded += counter(t, "berth_forwarded_requests_total")
            .await
            .unwrap_or(0);
    }
    Sample {
        daemons: fleet
            .0
            .iter()
            .map(|c| cpu::process_s(c.id()).unwrap_or(0.0))
            .collect(),
        postgres: postmaster.and_then(cpu::tree_s),
        loadgen: cpu::own_s(),
        forwarded,
        load: cpu::load_1m().unwrap_or(0.0),
    }
}

/// A counter's value (summed over its label sets) from a daemon's `/metrics`.
async fn counter(t: &Target, name: &str) -> Option<u64> {
    let text = t.get("/metrics").send().await.ok()?.text().await.ok()?;
    let mut total = 0.0;
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix(name)
            && (rest.starts_with(' ') || rest.starts_with('{'))
            && let Some(v) = rest.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok())
        {
            total += v;
        }
    }
    Some(total as u64)
}

impl ClusterReport {
    fn new(
        opts: &ClusterOptions,
        res: &Phase,
        plans: &Phase,
        before: &Sample,
        after: &Sample,
    ) -> ClusterReport {
        let daemon_cpu_s: Vec<f64> = after
            .daemons
            .iter()
            .zip(&before.daemons)
            .map(|(a, b)| a - b)
            .collect();
        let daemons_cpu_s: f64 = daemon_cpu_s.iter().sum();
        let postgres_cpu_s = match (before.postgres, after.postgres) {
            (Some(b), Some(a)) => Some(a - b),
            _ => None,
        };
        let cpu = daemons_cpu_s + postgres_cpu_s.unwrap_or(0.0);
        let forwarded = after.forwarded.saturating_sub(before.forwarded);
        let sent = res.ok + res.errors;
        ClusterReport {
            store: match opts.db {
                ClusterDb::Sqlite => "sqlite",
                ClusterDb::Postgres { .. } => "postgres",
            },
            mode: if opts.lease { "lease" } else { "shared" },
            daemons: opts.daemons,
            partitions: opts.partitions,
            clients: opts.clients,
            seconds: res.seconds,
            reservations_per_s: res.per_second(),
            reservation_p50_ms: res.p50_ms,
            reservation_p99_ms: res.p99_ms,
            plans_per_s: plans.per_second(),
            plan_p50_ms: plans.p50_ms,
            plan_p99_ms: plans.p99_ms,
            plan_reads_per_plan: 0.0,
            errors: res.errors + plans.errors,
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            partition_key: match (&opts.partition_key, opts.lease) {
                (_, false) => "-".to_owned(),
                (Some(k), true) => k.clone(),
                (None, true) => "zone".to_owned(),
            },
            daemon_cpu_s,
            daemons_cpu_s,
            postgres_cpu_s,
            loadgen_cpu_s: after.loadgen - before.loadgen,
            reservations_per_cpu_s: if cpu > 0.0 { res.ok as f64 / cpu } else { 0.0 },
            forwarded,
            forwarded_share: if sent > 0 {
                forwarded as f64 / sent as f64
            } else {
                0.0
            },
            routed: opts.route,
            map_refreshes: 0,
            failover: None,
            load_avg_start: before.load,
            load_avg_end: after.load,
        }
    }
}

/// The daemons' processes, killed when dropped.
struct Fleet(Vec<Child>);

impl Drop for Fleet {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").context("cannot bind a loopback port")?;
    Ok(l.local_addr()?.port())
}

/// Starts one daemon on a free port; its stderr goes to `berthd-<i>.log` in `dir`.
fn spawn(
    opts: &ClusterOptions,
    dir: &std::path::Path,
    i: usize,
    schema: &str,
) -> Result<(Child, String)> {
    let port = free_port()?;
    let mut cmd = Command::new(&opts.daemon);
    cmd.env("BERTH_LISTEN", format!("127.0.0.1:{port}"))
        .env("BERTH_INVENTORY", dir.join("inventory.yaml"))
        .env("BERTH_AUTH_DISABLED", "true")
        .env("BERTH_LOG", "warn")
        .env("BERTH_PLAN_NODE", format!("loadtest-{i}"))
        .env("BERTH_PLAN_WORKERS", opts.workers.max(1).to_string())
        .env("BERTH_CLUSTER", if opts.lease { "true" } else { "false" })
        .env("BERTH_NODE_ID", format!("loadtest-{i}"))
        .env("BERTH_ADVERTISE_URL", format!("http://127.0.0.1:{port}"))
        .env(
            "BERTH_CLUSTER_PARTITION_KEY",
            opts.partition_key.as_deref().unwrap_or("zone"),
        )
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(
            std::fs::File::create(dir.join(format!("berthd-{i}.log")))
                .map_or_else(|_| Stdio::null(), Stdio::from),
        );
    match &opts.db {
        ClusterDb::Sqlite => {
            let url = format!("sqlite://{}", dir.join("berth.db").display());
            cmd.env("BERTH_DATABASE_URL", url);
        }
        ClusterDb::Postgres { url } => {
            cmd.env("BERTH_DATABASE_URL", url)
                .env("BERTH_PG_SCHEMA", schema);
        }
    }
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", opts.daemon.display()))?;
    Ok((child, format!("http://127.0.0.1:{port}")))
}

/// Zone of partition `p`.
fn zone(p: usize) -> String {
    format!("zone-{p}")
}

/// Starts the fleet, grows every zone, runs the clients, stops the fleet.
pub async fn cluster(opts: &ClusterOptions) -> Result<ClusterReport> {
    if opts.daemons == 0 || opts.partitions == 0 || opts.clients == 0 {
        bail!("daemons, partitions and clients must be at least 1");
    }
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    // Candidates named after the zones, so plans place demands on the partitions too.
    let mut inv = String::from("candidates:\n");
    for p in 0..opts.partitions {
        inv.push_str(&format!(
            "  - {{candidate_id: {}, inventory_type: cloud, latitude: {:.1}, longitude: {:.1}, cost: {}}}\n",
            zone(p),
            30.0 + (p % 17) as f64,
            -100.0 + (p % 23) as f64,
            1 + p % 7
        ));
    }
    std::fs::write(dir.path().join("inventory.yaml"), inv).context("cannot write inventory")?;
    let schema = format!(
        "loadtest_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    );
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .pool_max_idle_per_host(opts.clients)
        .build()?;
    let target = |base: String| Target {
        base,
        token: None,
        client: client.clone(),
    };
    // The first daemon creates the schema; the others start once it is ready.
    let mut fleet = Fleet(Vec::new());
    let mut targets = Vec::new();
    let (child, base) = spawn(opts, dir.path(), 0, &schema)?;
    fleet.0.push(child);
    targets.push(target(base));
    wait_ready(&targets[0]).await?;
    for i in 1..opts.daemons {
        let (child, base) = spawn(opts, dir.path(), i, &schema)?;
        fleet.0.push(child);
        targets.push(target(base));
    }
    for t in &targets[1..] {
        wait_ready(t).await?;
    }
    for p in 0..opts.partitions {
        let grow = json!({"zone": zone(p), "capacity": {"instances": 1_000_000_000u64}});
        // In `[cluster]` mode writes answer 503 until the daemons know the lease holder.
        let mut tries = 0;
        loop {
            let r = targets[p % targets.len()]
                .post("/increase-capacity", &grow)
                .send()
                .await?;
            if r.status().is_success() {
                break;
            }
            tries += 1;
            if r.status() != reqwest::StatusCode::SERVICE_UNAVAILABLE || tries > 100 {
                bail!("increase-capacity of {} failed: {}", zone(p), r.status());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let targets = Arc::new(targets);
    let map = Arc::new(Map::default());
    if opts.route {
        map.refresh(&targets[0]).await;
    }
    let postmaster = opts.pg_data.as_deref().and_then(cpu::postmaster);
    let before = sample(&fleet, &targets, postmaster).await;
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(opts.seconds.max(0.1));
    let mut tasks = Vec::new();
    for c in 0..opts.clients {
        let (targets, opts, map) = (Arc::clone(&targets), opts.clone(), Arc::clone(&map));
        tasks.push(tokio::spawn(async move {
            client_loop(c, &targets, &map, &opts, deadline).await
        }));
    }
    let kill = match opts.kill_after {
        Some(after) => Some(kill_holder(&mut fleet, &targets, after, started).await?),
        None => None,
    };
    let (mut res, mut res_err, mut plans, mut plan_err) = (Vec::new(), 0, Vec::new(), 0);
    let (mut acks, mut retries, mut plan_reads) = (Vec::new(), 0, 0);
    for t in tasks {
        let o = t.await.context("a client failed")?;
        res.extend(o.reservations);
        res_err += o.reservation_errors;
        plans.extend(o.plans);
        plan_err += o.plan_errors;
        plan_reads += o.plan_reads;
        acks.extend(o.acks);
        retries += o.retries;
    }
    let secs = started.elapsed().as_secs_f64();
    let mut after = sample(&fleet, &targets, postmaster).await;
    let failover = match &kill {
        Some(k) => {
            after.daemons[k.index] = k.cpu_s;
            let survivor = &targets[(k.index + 1) % targets.len()];
            let zones: Vec<String> = (0..opts.partitions).map(zone).collect();
            let (lost, duplicates) = failover::lost(survivor, &zones, &acks).await?;
            let partitions = failover::windows(&acks, k.at, &zones, &k.held);
            let max_unavailable_s = partitions
                .iter()
                .filter(|w| w.held_by_victim)
                .filter_map(|w| w.unavailable_s)
                .fold(0.0, f64::max);
            Some(FailoverReport {
                victim: k.node.clone(),
                killed_at_s: (k.at - started).as_secs_f64(),
                partitions,
                max_unavailable_s,
                acknowledged: acks.len(),
                lost,
                duplicates,
                retries,
            })
        }
        None => None,
    };
    drop(fleet);
    let res = phase("reservations", res, res_err, secs);
    let plans = phase("plans", plans, plan_err, secs);
    let mut report = ClusterReport::new(opts, &res, &plans, &before, &after);
    report.map_refreshes = map.refreshes.load(Ordering::Relaxed);
    let finished = plans.ok + plans.errors;
    if finished > 0 {
        report.plan_reads_per_plan = plan_reads as f64 / finished as f64;
    }
    report.failover = failover;
    Ok(report)
}

/// The daemon killed mid-run.
struct Killed {
    index: usize,
    node: String,
    at: Instant,
    /// Partitions (zone indexes) it held.
    held: std::collections::BTreeSet<usize>,
    /// Its CPU seconds just before the kill.
    cpu_s: f64,
}

/// Waits `after` seconds into the window, then SIGKILLs the holder of `zone-0`.
async fn kill_holder(
    fleet: &mut Fleet,
    targets: &[Target],
    after: f64,
    started: Instant,
) -> Result<Killed> {
    tokio::time::sleep_until((started + Duration::from_secs_f64(after)).into()).await;
    let view: ClusterView = targets[0]
        .get("/v1/cluster")
        .send()
        .await?
        .json()
        .await
        .context("cannot read the partition map")?;
    let first = view
        .partitions
        .iter()
        .find(|p| p.partition.is_none() || p.partition.as_deref() == Some(&zone(0)))
        .context("zone-0 has no holder to kill")?;
    let index = targets
        .iter()
        .position(|t| t.base == first.url.trim_end_matches('/'))
        .context("the holder of zone-0 is not one of the fleet")?;
    let held = view
        .partitions
        .iter()
        .filter(|p| p.holder == first.holder)
        .filter_map(|p| match &p.partition {
            Some(name) => name.strip_prefix("zone-")?.parse().ok(),
            None => Some(usize::MAX),
        })
        .collect::<std::collections::BTreeSet<usize>>();
    let child = &mut fleet.0[index];
    let cpu_s = cpu::process_s(child.id()).unwrap_or(0.0);
    child.kill().context("cannot kill the holder")?; // SIGKILL
    let at = Instant::now();
    let _ = child.wait();
    Ok(Killed {
        index,
        node: first.holder.clone(),
        at,
        held,
        cpu_s,
    })
}

/// Latencies (ms) and errors of one client.
#[derive(Default)]
struct ClientOutcome {
    reservations: Vec<f64>,
    reservation_errors: usize,
    plans: Vec<f64>,
    plan_errors: usize,
    plan_reads: u64,
    /// With `kill_after`: every acknowledged reservation.
    acks: Vec<Ack>,
    retries: usize,
}

/// The partition map the clients share, and whether an answer showed it stale.
#[derive(Default)]
struct Map {
    view: std::sync::RwLock<Option<ClusterView>>,
    stale: AtomicBool,
    refreshing: AtomicBool,
    refreshes: AtomicU64,
}

impl Map {
    /// The daemon to send a write with `body` to: its holder by the map, else `fallback`.
    fn pick<'a>(&self, targets: &'a [Target], body: &Value, fallback: usize) -> &'a Target {
        &targets[self.pick_index(targets, body, fallback)]
    }

    /// [`Map::pick`] as an index into `targets`.
    fn pick_index(&self, targets: &[Target], body: &Value, fallback: usize) -> usize {
        let url = self
            .view
            .read()
            .ok()
            .and_then(|v| v.as_ref().and_then(|m| m.route(body).map(str::to_owned)));
        url.and_then(|u| targets.iter().position(|t| t.base == u))
            .unwrap_or(fallback % targets.len())
    }

    /// Notes an answer: one relayed by a non-holder, or a 503, makes the map stale.
    fn saw(&self, r: &reqwest::Response) {
        if r.headers().contains_key(FORWARDED_TO)
            || r.status() == reqwest::StatusCode::SERVICE_UNAVAILABLE
        {
            self.stale.store(true, Ordering::Relaxed);
        }
    }

    /// Re-reads the map from `t` when stale (one client at a time).
    async fn refresh_if_stale(&self, t: &Target) {
        if self.stale.load(Ordering::Relaxed) && !self.refreshing.swap(true, Ordering::AcqRel) {
            self.stale.store(false, Ordering::Relaxed);
            self.refreshes.fetch_add(1, Ordering::Relaxed);
            self.refresh(t).await;
            self.refreshing.store(false, Ordering::Release);
        }
    }

    async fn refresh(&self, t: &Target) {
        let view = match t.get("/v1/cluster").send().await {
            Ok(r) if r.status().is_success() => r.json::<ClusterView>().await.ok(),
            _ => None,
        };
        if let (Some(v), Ok(mut g)) = (view, self.view.write()) {
            *g = Some(v);
        }
    }
}

async fn client_loop(
    c: usize,
    targets: &[Target],
    map: &Map,
    opts: &ClusterOptions,
    deadline: Instant,
) -> ClientOutcome {
    let mut out = ClientOutcome::default();
    let mut k = c;
    while Instant::now() < deadline {
        k += 1;
        if opts.route {
            map.refresh_if_stale(&targets[k % targets.len()]).await;
        }
        let t0 = Instant::now();
        if opts.plan_every > 0 && k.is_multiple_of(opts.plan_every) {
            let body = json!({"name": "load", "template": TEMPLATE, "timeout": 60});
            // A plan names no partition: the plans, not every request, go round the daemons
            // (k is a multiple of plan_every here, which would leave some daemons none).
            let mut i = map.pick_index(targets, &body, k / opts.plan_every);
            // A daemon that refuses the connection never saw the request: the next one takes
            // the plan (every daemon serves the shared queue).
            let mut sent = targets[i].post("/v1/plans", &body).send().await;
            for _ in 1..targets.len() {
                if !matches!(&sent, Err(e) if e.is_connect()) {
                    break;
                }
                i = (i + 1) % targets.len();
                sent = targets[i].post("/v1/plans", &body).send().await;
            }
            let id = match sent {
                Ok(r) if r.status().as_u16() == 201 => {
                    map.saw(&r);
                    r.json::<Value>()
                        .await
                        .ok()
                        .and_then(|v| v["id"].as_str().map(str::to_owned))
                }
                Ok(r) => {
                    map.saw(&r);
                    None
                }
                _ => None,
            };
            let Some(id) = id else {
                out.plan_errors += 1;
                continue;
            };
            let (done, reads) = wait_final(
                targets,
                i,
                &id,
                (Duration::from_millis(10), opts.plan_wait),
                Duration::from_secs(120),
            )
            .await;
            out.plan_reads += reads;
            if done {
                out.plans.push(t0.elapsed().as_secs_f64() * 1e3);
            } else {
                out.plan_errors += 1;
            }
        } else {
            let end = (chrono::Utc::now() + chrono::TimeDelta::days(1)).to_rfc3339();
            let body = json!({"zone": zone(k % opts.partitions), "capacity": {"instances": "1"}, "end": end});
            if opts.kill_after.is_some() {
                retry_until_acked(c, k, targets, map, opts, &body, deadline, &mut out).await;
                continue;
            }
            let t = map.pick(targets, &body, k);
            match t.post("/create-reservation", &body).send().await {
                Ok(r) if r.status().is_success() => {
                    map.saw(&r);
                    out.reservations.push(t0.elapsed().as_secs_f64() * 1e3);
                }
                Ok(r) => {
                    map.saw(&r);
                    out.reservation_errors += 1;
                }
                _ => out.reservation_errors += 1,
            }
        }
    }
    out
}

/// Sends one reservation under an idempotency key until it is acknowledged (each retry to
/// the next daemon unless the map names the holder), giving up 30 s after `deadline`.
#[allow(clippy::too_many_arguments)]
async fn retry_until_acked(
    c: usize,
    k: usize,
    targets: &[Target],
    map: &Map,
    opts: &ClusterOptions,
    body: &Value,
    deadline: Instant,
    out: &mut ClientOutcome,
) {
    let key = format!("loadtest-{c}-{k}");
    let t0 = Instant::now();
    let give_up = deadline + Duration::from_secs(30);
    let mut attempt = 0;
    loop {
        if opts.route {
            map.refresh_if_stale(&targets[(k + attempt) % targets.len()])
                .await;
        }
        let t = map.pick(targets, body, k + attempt);
        let sent = t
            .post("/create-reservation", body)
            .header("Idempotency-Key", &key)
            .send()
            .await;
        let id = match sent {
            Ok(r) => {
                map.saw(&r);
                if r.status().is_success() {
                    r.json::<Value>()
                        .await
                        .ok()
                        .and_then(|v| v["reservation-id"].as_str().map(str::to_owned))
                } else {
                    None
                }
            }
            Err(_) => {
                map.stale.store(true, Ordering::Relaxed);
                None
            }
        };
        if let Some(id) = id {
            out.reservations.push(t0.elapsed().as_secs_f64() * 1e3);
            out.acks.push(Ack {
                at: Instant::now(),
                partition: k % opts.partitions,
                id,
            });
            return;
        }
        if Instant::now() > give_up {
            out.reservation_errors += 1;
            return;
        }
        out.retries += 1;
        attempt += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
