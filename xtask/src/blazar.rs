//! `cargo xtask bench-blazar`: Blazar 18 and Berth's Promise API side by side on one cloud.
//!
//! The cloud is the one `.ci/openstack.sh` runs (started here, with Blazar, when
//! `BERTH_TEST_OS_BLAZAR_URL` is not set, and stopped afterwards). Blazar gets the cloud's
//! compute hosts; Berth (the real `berthd`, release build) reads the same hosts from Placement
//! through its `[openstack]` provider (one pool per host). Each side then runs the same
//! workload: reservations created per second by 1 and by N concurrent clients (each in its own
//! future window, so that none waits for another's capacity), p50/p99 latency, the time a
//! start-now reservation takes to be admitted (Blazar: ACTIVE), and two N-way races: for the
//! last instance slot and for the last whole host, counting winners against the free count.
//! Blazar's leases and hosts are deleted afterwards, so the cloud is as it was.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use reqwest::blocking::Client;
use serde_json::{Value, json};

use crate::{cargo, root, run};

/// An instance slot: Nova's m1.tiny, the unit both sides reserve.
const SLOT: (u64, u64, u64) = (1, 512, 1);

struct Args {
    seconds: f64,
    clients: usize,
    berthd: Option<PathBuf>,
    berth_only: bool,
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
        seconds: 30.0,
        clients: 16,
        berthd: None,
        berth_only: false,
    };
    let mut it = args.iter();
    while let Some(k) = it.next() {
        if k == "--berth-only" {
            a.berth_only = true;
            continue;
        }
        let v = it.next().with_context(|| format!("{k} needs a value"))?;
        match k.as_str() {
            "--seconds" => a.seconds = v.parse().with_context(|| format!("--seconds `{v}`"))?,
            "--clients" => a.clients = v.parse().with_context(|| format!("--clients `{v}`"))?,
            "--berthd" => a.berthd = Some(v.into()),
            _ => {
                bail!("unknown argument `{k}`; expected --seconds S, --clients N or --berthd PATH")
            }
        }
    }
    Ok(a)
}

/// The exports of `.ci/openstack.sh` (`export K='V'` lines).
fn exports(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("export "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches('\'').to_string()))
        .collect()
}

fn openstack(sub: &str) -> Result<BTreeMap<String, String>> {
    eprintln!("\n==> bash .ci/openstack.sh {sub}");
    let out = Command::new("bash")
        .current_dir(root())
        .args([".ci/openstack.sh", sub])
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run .ci/openstack.sh {sub}"))?;
    if !out.status.success() {
        bail!(".ci/openstack.sh {sub} failed ({})", out.status);
    }
    Ok(exports(&String::from_utf8_lossy(&out.stdout)))
}

/// One HTTP answer: status, body, latency.
struct Answer {
    status: u16,
    body: Value,
    took: Duration,
}

fn send(req: reqwest::blocking::RequestBuilder) -> Answer {
    let t = Instant::now();
    match req.send() {
        Ok(r) => {
            let status = r.status().as_u16();
            let body = r.json().unwrap_or(Value::Null);
            Answer {
                status,
                body,
                took: t.elapsed(),
            }
        }
        Err(e) => Answer {
            status: 0,
            body: json!({"transport error": e.to_string()}),
            took: t.elapsed(),
        },
    }
}

/// An admin token from the cloud's Keystone.
fn token(http: &Client, env: &BTreeMap<String, String>) -> Result<String> {
    let get = |k: &str| {
        env.get(k)
            .cloned()
            .with_context(|| format!("{k} not exported"))
    };
    let auth = json!({"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": get("OS_USERNAME")?, "domain": {"name": "Default"},
            "password": get("OS_PASSWORD")?}}},
        "scope": {"project": {"name": get("OS_PROJECT_NAME")?, "domain": {"name": "Default"}}}}});
    let r = http
        .post(format!("{}/auth/tokens", get("OS_AUTH_URL")?))
        .json(&auth)
        .send()?;
    if r.status().as_u16() != 201 {
        bail!("keystone token: HTTP {}", r.status());
    }
    Ok(r.headers()
        .get("X-Subject-Token")
        .context("no X-Subject-Token")?
        .to_str()?
        .to_string())
}

/// Blazar's API with an admin token.
struct Blazar {
    http: Client,
    url: String,
    token: String,
}

impl Blazar {
    fn connect(env: &BTreeMap<String, String>) -> Result<Blazar> {
        let http = Client::builder()
            .timeout(Duration::from_secs(300))
            .build()?;
        Ok(Blazar {
            token: token(&http, env)?,
            http,
            url: env
                .get("BERTH_TEST_OS_BLAZAR_URL")
                .cloned()
                .context("BERTH_TEST_OS_BLAZAR_URL not exported")?,
        })
    }

    fn call(&self, method: reqwest::Method, path: &str, body: Option<&Value>) -> Answer {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.url))
            .header("X-Auth-Token", &self.token);
        if let Some(b) = body {
            req = req.json(b);
        }
        send(req)
    }

    fn lease(&self, name: &str, start: &str, end: &str, reservation: Value) -> Answer {
        let body = json!({"name": name, "start_date": start, "end_date": end,
            "reservations": [reservation], "events": []});
        self.call(reqwest::Method::POST, "/leases", Some(&body))
    }

    fn delete_lease(&self, id: &str) -> Answer {
        self.call(reqwest::Method::DELETE, &format!("/leases/{id}"), None)
    }
}

/// Placement with an admin token, to see Berth's claims as Nova's scheduler does.
struct Placement {
    http: Client,
    url: String,
    token: String,
}

impl Placement {
    fn connect(env: &BTreeMap<String, String>) -> Result<Placement> {
        let http = Client::builder().timeout(Duration::from_secs(60)).build()?;
        let url = env
            .get("BERTH_TEST_OS_PLACEMENT_URL")
            .cloned()
            .context("BERTH_TEST_OS_PLACEMENT_URL not exported")?;
        Ok(Placement {
            token: token(&http, env)?,
            http,
            url,
        })
    }

    fn get(&self, path: &str) -> Result<Value> {
        let r = self
            .http
            .get(format!("{}{path}", self.url))
            .header("X-Auth-Token", &self.token)
            .header("OpenStack-API-Version", "placement 1.39")
            .send()?;
        if !r.status().is_success() {
            bail!("placement GET {path}: HTTP {}", r.status());
        }
        Ok(r.json()?)
    }

    /// Units held on `host` by Berth's consumers (`be27be27-be27-…`), by resource class.
    fn berth_claims(&self, host: &str) -> Result<BTreeMap<String, u64>> {
        let rps = self.get(&format!("/resource_providers?name={host}"))?;
        let uuid = rps["resource_providers"][0]["uuid"]
            .as_str()
            .with_context(|| format!("placement has no provider {host}"))?
            .to_string();
        let a = self.get(&format!("/resource_providers/{uuid}/allocations"))?;
        let mut out = BTreeMap::new();
        for (c, held) in a["allocations"].as_object().into_iter().flatten() {
            if c.starts_with("be27be27-be27-") {
                for (rc, n) in held["resources"].as_object().into_iter().flatten() {
                    *out.entry(rc.clone()).or_insert(0) += n.as_u64().unwrap_or(0);
                }
            }
        }
        Ok(out)
    }
}

fn instance_reservation() -> Value {
    json!({"resource_type": "virtual:instance", "amount": 1, "vcpus": SLOT.0,
        "memory_mb": SLOT.1, "disk_gb": SLOT.2, "affinity": false, "resource_properties": ""})
}

fn host_reservation() -> Value {
    json!({"resource_type": "physical:host", "min": 1, "max": 1,
        "hypervisor_properties": "", "resource_properties": ""})
}

/// The real `berthd` on SQLite with the cloud as its inventory; killed when dropped.
struct Berthd {
    child: Child,
    http: Client,
    base: String,
    hosts: Vec<Host>,
}

impl Drop for Berthd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Clone)]
struct Host {
    name: String,
    vcpus: u64,
    memory_mb: u64,
}

const USER: (&str, &str) = ("bench", "bench-secret");

impl Berthd {
    /// The berthd at `exe`, whose inventory is the cloud itself (`[openstack]`): the hosts
    /// and their sizes are what Placement gives.
    fn start(env: &BTreeMap<String, String>, exe: &Path) -> Result<Berthd> {
        let get = |k: &str| {
            env.get(k)
                .cloned()
                .with_context(|| format!("{k} not exported"))
        };
        let dir = root().join("target/bench-blazar");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join("berthd.toml"),
            format!(
                "[openstack]\nauth_url = \"{}\"\nusername = \"{}\"\nproject = \"{}\"\nregion = \"{}\"\n",
                get("OS_AUTH_URL")?,
                get("OS_USERNAME")?,
                get("OS_PROJECT_NAME")?,
                get("OS_REGION_NAME")?,
            ),
        )?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let child = Command::new(exe)
            .arg("--config")
            .arg(dir.join("berthd.toml"))
            .env("BERTH_LISTEN", format!("127.0.0.1:{port}"))
            .env("BERTH_OPENSTACK_PASSWORD", get("OS_PASSWORD")?)
            .env("BERTH_BASIC_AUTH", format!("{}:{}", USER.0, USER.1))
            .env(
                "BERTH_DATABASE_URL",
                format!("sqlite://{}", dir.join("berth.db").display()),
            )
            .env_remove("BERTH_TOKENS")
            .env_remove("BERTH_INVENTORY")
            .env("BERTH_LOG", "warn")
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("berthd.log"))?)
            .spawn()
            .with_context(|| format!("cannot start {}", exe.display()))?;
        let mut d = Berthd {
            child,
            http: Client::builder().timeout(Duration::from_secs(60)).build()?,
            base: format!("http://127.0.0.1:{port}"),
            hosts: Vec::new(),
        };
        let t = Instant::now();
        while d
            .http
            .get(format!("{}/readyz", d.base))
            .send()
            .map_or(true, |r| !r.status().is_success())
        {
            if t.elapsed() > Duration::from_secs(60) {
                bail!("berthd not ready in 60 s; see target/bench-blazar/berthd.log");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        d.hosts = d.cloud_hosts()?;
        Ok(d)
    }

    /// The hosts as Berth reads them from Placement: `<host>/openstack` pools, their total
    /// `cores` and `ram` (allocation ratios and reserved memory applied, others' usage taken off).
    fn cloud_hosts(&self) -> Result<Vec<Host>> {
        let a = self.call("query-capacity", &json!({"capacity": "total"}));
        if a.status != 200 {
            bail!("berth query-capacity: HTTP {} {}", a.status, a.body);
        }
        let mut hosts = Vec::new();
        for (pool, c) in a.body["capacity"].as_object().into_iter().flatten() {
            let Some(name) = pool.strip_suffix("/openstack") else {
                continue;
            };
            hosts.push(Host {
                name: name.to_string(),
                vcpus: c["cores"].as_u64().unwrap_or(0),
                memory_mb: c["ram"].as_u64().unwrap_or(0),
            });
        }
        if hosts.is_empty() {
            bail!("berth read no host from the cloud: {}", a.body);
        }
        for h in &hosts {
            eprintln!(
                "berth: {} from Placement: {} cores, {} MiB",
                h.name, h.vcpus, h.memory_mb
            );
        }
        Ok(hosts)
    }

    fn call(&self, op: &str, body: &Value) -> Answer {
        send(
            self.http
                .post(format!("{}/{op}", self.base))
                .basic_auth(USER.0, Some(USER.1))
                .json(body),
        )
    }

    fn reserve(&self, zone: &str, cores: u64, ram: u64, window: Option<(&str, &str)>) -> Answer {
        let mut body = json!({"zone": zone, "provider": "openstack",
            "capacity": {"cores": cores, "ram": ram}});
        if let Some((s, e)) = window {
            body["start"] = json!(s);
            body["end"] = json!(e);
        }
        self.call("create-reservation", &body)
    }

    /// A slot on the first host with room, as Blazar picks any host that fits.
    fn reserve_slot(&self, window: (&str, &str)) -> (bool, Duration) {
        let mut took = Duration::ZERO;
        for h in &self.hosts {
            let a = self.reserve(&h.name, SLOT.0, SLOT.1, Some(window));
            took += a.took;
            if a.status == 200 {
                return (true, took);
            }
        }
        (false, took)
    }

    /// A whole host: the first one still free in the window.
    fn reserve_host(&self, window: (&str, &str)) -> (bool, Duration) {
        let mut took = Duration::ZERO;
        for h in &self.hosts {
            let a = self.reserve(&h.name, h.vcpus, h.memory_mb, Some(window));
            took += a.took;
            if a.status == 200 {
                return (true, took);
            }
        }
        (false, took)
    }
}

/// Window `i` of a series: one hour long, starting `base_days` days ahead plus `i` hours,
/// as Blazar writes dates (`YYYY-MM-DD HH:MM`, UTC) and as RFC 3339 for Berth.
struct Windows {
    base: chrono::DateTime<chrono::Utc>,
}

impl Windows {
    /// Each run of the command uses its own decades (by the minute it started), so that
    /// leases a stopped run left behind do not take this run's capacity.
    fn new(base_days: i64) -> Windows {
        static RUN: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
        let now = chrono::Utc::now();
        let run = *RUN.get_or_init(|| now.timestamp() / 60 % 40);
        let day = now.date_naive().and_time(chrono::NaiveTime::MIN).and_utc();
        Windows {
            base: day + chrono::TimeDelta::days(base_days + run * 3650),
        }
    }

    fn blazar(&self, i: usize) -> (String, String) {
        let s = self.base + chrono::TimeDelta::hours(i as i64);
        let e = s + chrono::TimeDelta::minutes(59);
        (
            s.format("%Y-%m-%d %H:%M").to_string(),
            e.format("%Y-%m-%d %H:%M").to_string(),
        )
    }

    fn rfc3339(&self, i: usize) -> (String, String) {
        let s = self.base + chrono::TimeDelta::hours(i as i64);
        let e = s + chrono::TimeDelta::minutes(59);
        (s.to_rfc3339(), e.to_rfc3339())
    }
}

struct Rate {
    ok: usize,
    refused: usize,
    per_sec: f64,
    p50: Duration,
    p99: Duration,
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// `clients` threads call `f(i)` with fresh indices until `seconds` have passed.
fn throughput<F>(clients: usize, seconds: f64, f: F) -> Rate
where
    F: Fn(usize) -> (bool, Duration) + Sync,
{
    let next = AtomicUsize::new(0);
    let lat = Mutex::new(Vec::new());
    let refused = AtomicUsize::new(0);
    let t = Instant::now();
    let stop = Duration::from_secs_f64(seconds);
    std::thread::scope(|s| {
        for _ in 0..clients {
            s.spawn(|| {
                while t.elapsed() < stop {
                    let (ok, took) = f(next.fetch_add(1, Ordering::SeqCst));
                    if ok {
                        lat.lock().unwrap_or_else(|e| e.into_inner()).push(took);
                    } else {
                        refused.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
    });
    let wall = t.elapsed().as_secs_f64();
    let mut l = lat.into_inner().unwrap_or_else(|e| e.into_inner());
    l.sort();
    Rate {
        ok: l.len(),
        refused: refused.into_inner(),
        per_sec: l.len() as f64 / wall,
        p50: quantile(&l, 0.5),
        p99: quantile(&l, 0.99),
    }
}

/// `clients` threads released at once, each calling `f` once; the number that won.
fn race<F>(clients: usize, f: F) -> usize
where
    F: Fn() -> bool + Sync,
{
    let gate = Barrier::new(clients);
    let won = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..clients {
            s.spawn(|| {
                gate.wait();
                if f() {
                    won.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
    });
    won.into_inner()
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

/// One row of the result table.
struct Row {
    what: String,
    blazar: String,
    berth: String,
}

pub fn bench(args: &[String]) -> Result<()> {
    let mut a = parse(args)?;
    // Built before the cloud starts, so that the build does not share the cores with it.
    a.berthd = Some(match a.berthd.take() {
        Some(b) => std::path::absolute(b)?,
        None => {
            let mut build = cargo();
            build.args(["build", "--release", "--locked", "-p", "berthd"]);
            run("cargo build --release -p berthd", build)?;
            root().join("target/release/berthd")
        }
    });
    let started_cloud = std::env::var_os("BERTH_TEST_OS_BLAZAR_URL").is_none();
    let env = if started_cloud {
        openstack("start")?;
        openstack("start-blazar")?
    } else {
        std::env::vars().collect()
    };
    let result = side_by_side(&a, &env);
    if started_cloud {
        openstack("stop")?;
    }
    let rows = result?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "\n| measure | Blazar 18 | Berth (Promise API) |")?;
    writeln!(out, "|---|---|---|")?;
    for r in rows {
        writeln!(out, "| {} | {} | {} |", r.what, r.blazar, r.berth)?;
    }
    Ok(())
}

fn side_by_side(a: &Args, env: &BTreeMap<String, String>) -> Result<Vec<Row>> {
    if a.berth_only {
        let berth = Berthd::start(env, a.berthd.as_deref().context("no berthd")?)?;
        return Ok(berth_side(a, env, &berth)?
            .into_iter()
            .map(|(_, berth)| Row {
                what: String::new(),
                blazar: "-".into(),
                berth,
            })
            .collect());
    }
    let blazar = Blazar::connect(env)?;
    let mut host_ids = Vec::new();
    for name in env
        .get("BERTH_TEST_OS_COMPUTES")
        .context("BERTH_TEST_OS_COMPUTES not exported")?
        .split_whitespace()
        .map(|s| s.split(':').next().unwrap_or(s).to_string())
    {
        let r = blazar.call(
            reqwest::Method::POST,
            "/os-hosts",
            Some(&json!({"name": name})),
        );
        let h = if r.status == 201 {
            r.body["host"].clone()
        } else {
            // Already Blazar's (a run that was stopped half way).
            let all = blazar.call(reqwest::Method::GET, "/os-hosts", None);
            all.body["hosts"]
                .as_array()
                .and_then(|hs| hs.iter().find(|h| h["hypervisor_hostname"] == json!(name)))
                .cloned()
                .with_context(|| {
                    format!("blazar: adding host {name}: HTTP {} {}", r.status, r.body)
                })?
        };
        host_ids.push(h["id"].as_str().unwrap_or_default().to_string());
        eprintln!(
            "blazar: {name}: {} vCPUs, {} MB",
            h["vcpus"], h["memory_mb"]
        );
    }
    let leases = Arc::new(Mutex::new(Vec::<String>::new()));
    let result = measure(a, env, &blazar, host_ids.len(), &leases);
    // The cloud as it was: no leases, no hosts in Blazar's freepool.
    let ids = std::mem::take(&mut *leases.lock().unwrap_or_else(|e| e.into_inner()));
    eprintln!(
        "\n==> deleting {} Blazar leases and {} hosts",
        ids.len(),
        host_ids.len()
    );
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                while let Some(id) = ids.get(next.fetch_add(1, Ordering::SeqCst)) {
                    blazar.delete_lease(id);
                }
            });
        }
    });
    for id in host_ids {
        let t = Instant::now();
        loop {
            let r = blazar.call(reqwest::Method::DELETE, &format!("/os-hosts/{id}"), None);
            if r.status == 204 || r.status == 404 || t.elapsed() > Duration::from_secs(120) {
                break;
            }
            std::thread::sleep(Duration::from_secs(2));
        }
    }
    result
}

/// One side's figures, in the order of the rows.
type Figures = Vec<(String, String)>;

fn measure(
    a: &Args,
    env: &BTreeMap<String, String>,
    blazar: &Blazar,
    hosts: usize,
    leases: &Arc<Mutex<Vec<String>>>,
) -> Result<Vec<Row>> {
    let b = blazar_side(a, blazar, hosts, leases)?;
    for (what, v) in &b {
        eprintln!("blazar: {what}: {v}");
    }
    let berth = Berthd::start(env, a.berthd.as_deref().context("no berthd")?)?;
    let p = berth_side(a, env, &berth)?;
    Ok(b.into_iter()
        .zip(p)
        .map(|((what, blazar), (_, berth))| Row {
            what,
            blazar,
            berth,
        })
        .collect())
}

fn rate(r: &Rate) -> String {
    format!("{:.2} ({} ok, {} refused)", r.per_sec, r.ok, r.refused)
}

fn lat(r: &Rate) -> String {
    format!("{} / {}", ms(r.p50), ms(r.p99))
}

fn blazar_side(
    a: &Args,
    blazar: &Blazar,
    hosts: usize,
    leases: &Arc<Mutex<Vec<String>>>,
) -> Result<Figures> {
    let mut out = Figures::new();
    let keep = |r: &Answer| {
        if let Some(id) = r.body["lease"]["id"].as_str() {
            leases
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(id.to_string());
        }
        r.status == 201 || r.status == 200
    };
    // Blazar refuses a second lease of the same name: every request names its own.
    let names = AtomicUsize::new(0);
    let name = |what: &str| format!("{what}-{}", names.fetch_add(1, Ordering::SeqCst));

    // Throughput: each reservation in its own future window; series far apart.
    for (k, clients) in [1, a.clients].into_iter().enumerate() {
        eprintln!("\n==> blazar: {clients} client(s), {} s", a.seconds);
        let w = Windows::new(30 + 365 * k as i64);
        let r = throughput(clients, a.seconds, |i| {
            let (s, e) = w.blazar(i);
            let r = blazar.lease(&name("bench"), &s, &e, instance_reservation());
            (keep(&r), r.took)
        });
        out.push((
            format!("reservations/s, {clients} client(s) ({} s)", a.seconds),
            rate(&r),
        ));
        out.push((format!("latency p50 / p99, {clients} client(s)"), lat(&r)));
    }

    // Admission: a lease starting now, until it is ACTIVE.
    eprintln!("\n==> blazar: admission of a start-now lease");
    let end = (chrono::Utc::now() + chrono::TimeDelta::hours(2))
        .format("%Y-%m-%d %H:%M")
        .to_string();
    let t = Instant::now();
    let r = blazar.lease(&name("now"), "now", &end, instance_reservation());
    let created = r.took;
    if !keep(&r) {
        bail!("blazar start-now lease: HTTP {} {}", r.status, r.body);
    }
    let id = r.body["lease"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut status = String::new();
    while t.elapsed() < Duration::from_secs(300) {
        let s = blazar.call(reqwest::Method::GET, &format!("/leases/{id}"), None);
        status = s.body["lease"]["status"]
            .as_str()
            .unwrap_or("?")
            .to_string();
        if status == "ACTIVE" || status == "ERROR" {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    out.push((
        "start-now reservation: created / usable".into(),
        format!(
            "{} / {status} after {:.1} s",
            ms(created),
            t.elapsed().as_secs_f64()
        ),
    ));

    // Race for the last instance slot. Greedy fill (8, 4, 2, 1 slots a lease: Blazar takes
    // seconds a lease), then the last lease of `n` slots gives way to one of `n - 1`.
    eprintln!(
        "\n==> blazar: race for the last instance slot, {}-way",
        a.clients
    );
    let w = Windows::new(20);
    let (s, e) = w.blazar(0);
    let mut capacity = 0;
    let mut last: Option<(String, u64)> = None;
    for amount in [8, 4, 2, 1] {
        loop {
            let mut res = instance_reservation();
            res["amount"] = json!(amount);
            let r = blazar.lease(&name("fill"), &s, &e, res);
            if !keep(&r) {
                break;
            }
            capacity += amount;
            last = Some((
                r.body["lease"]["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                amount,
            ));
        }
    }
    let Some((last_id, n)) = last else {
        bail!("blazar accepted no instance slot in an empty window");
    };
    blazar.delete_lease(&last_id);
    if n > 1 {
        let mut res = instance_reservation();
        res["amount"] = json!(n - 1);
        let r = blazar.lease(&name("fill"), &s, &e, res);
        if !keep(&r) {
            bail!(
                "blazar refused {} slots where {n} were free: HTTP {} {}",
                n - 1,
                r.status,
                r.body
            );
        }
    }
    let won = race(a.clients, || {
        keep(&blazar.lease(&name("race-slot"), &s, &e, instance_reservation()))
    });
    let refused = blazar.lease(&name("refused"), &s, &e, instance_reservation());
    keep(&refused);
    out.push((
        "a slot asked in the full window is answered".into(),
        format!("HTTP {} {}", refused.status, refused.body),
    ));
    out.push((
        format!("last instance slot, {}-way race: winners / free", a.clients),
        format!("{won} / 1 (window capacity {capacity} slots)"),
    ));

    // Race for the last whole host: one host leased, N clients want another.
    eprintln!("\n==> blazar: race for the last host, {}-way", a.clients);
    let (s, e) = Windows::new(25).blazar(0);
    let first = blazar.lease(&name("host-first"), &s, &e, host_reservation());
    if !keep(&first) {
        bail!("blazar host lease: HTTP {} {}", first.status, first.body);
    }
    let won = race(a.clients, || {
        keep(&blazar.lease(&name("race-host"), &s, &e, host_reservation()))
    });
    out.push((
        format!("last host, {}-way race: winners / free", a.clients),
        format!("{won} / {}", hosts - 1),
    ));
    Ok(out)
}

fn berth_side(a: &Args, env: &BTreeMap<String, String>, berth: &Berthd) -> Result<Figures> {
    let mut out = Figures::new();
    for (k, clients) in [1, a.clients].into_iter().enumerate() {
        eprintln!("\n==> berth: {clients} client(s), {} s", a.seconds);
        let w = Windows::new(30 + 365 * k as i64);
        let r = throughput(clients, a.seconds, |i| {
            let (s, e) = w.rfc3339(i);
            berth.reserve_slot((&s, &e))
        });
        out.push((String::new(), rate(&r)));
        out.push((String::new(), lat(&r)));
    }

    let host = berth.hosts[0].name.clone();
    let placement = Placement::connect(env)?;
    let before = placement.berth_claims(&host)?;
    let t = Instant::now();
    let r = berth.reserve(&host, SLOT.0, SLOT.1, None);
    let created = r.took;
    // Only the reservations around now: the throughput runs left thousands in the future.
    let now = chrono::Utc::now();
    let q = berth.call(
        "query-reservation",
        &json!({"zone": host, "provider": "openstack", "show-utilization": false,
            "window": {"start": now, "end": now + chrono::Duration::minutes(1)}}),
    );
    let usable = t.elapsed();
    let active = q.body["details"].as_array().is_some_and(|d| {
        d.iter()
            .any(|x| x["reservation-id"] == r.body["reservation-id"] && x["active"] == json!(true))
    });
    // Nova no longer sells the slot to others once Placement holds Berth's claim for it.
    let claimed = loop {
        if placement
            .berth_claims(&host)?
            .get("VCPU")
            .copied()
            .unwrap_or(0)
            >= before.get("VCPU").copied().unwrap_or(0) + SLOT.0
        {
            break Some(t.elapsed());
        }
        if t.elapsed() > Duration::from_secs(60) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    out.push((
        String::new(),
        format!(
            "{} / {} after {}; claimed in Placement after {}",
            ms(created),
            if active { "active" } else { "NOT active" },
            ms(usable),
            claimed.map_or("(not in 60 s)".to_string(), ms)
        ),
    ));
    berth.call(
        "cancel-reservation",
        &json!({"reservation-id": r.body["reservation-id"]}),
    );

    let (s, e) = Windows::new(20).rfc3339(0);
    let mut capacity = 0;
    let mut last = Value::Null;
    loop {
        let mut got = false;
        for h in &berth.hosts {
            let r = berth.reserve(&h.name, SLOT.0, SLOT.1, Some((&s, &e)));
            if r.status == 200 {
                last = r.body["reservation-id"].clone();
                got = true;
                break;
            }
        }
        if !got {
            break;
        }
        capacity += 1;
        if capacity > 100_000 {
            bail!("berth accepted over 100000 slots in one window");
        }
    }
    berth.call("cancel-reservation", &json!({"reservation-id": last}));
    let won = race(a.clients, || berth.reserve_slot((&s, &e)).0);
    let refused = berth.reserve(&host, SLOT.0, SLOT.1, Some((&s, &e)));
    out.push((
        String::new(),
        format!("HTTP {} {}", refused.status, refused.body),
    ));
    out.push((
        String::new(),
        format!("{won} / 1 (window capacity {capacity} slots)"),
    ));

    let (s, e) = Windows::new(25).rfc3339(0);
    if !berth.reserve_host((&s, &e)).0 {
        bail!("berth: the first whole host was refused");
    }
    let won = race(a.clients, || berth.reserve_host((&s, &e)).0);
    out.push((String::new(), format!("{won} / {}", berth.hosts.len() - 1)));
    Ok(out)
}
