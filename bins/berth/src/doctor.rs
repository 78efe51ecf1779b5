//! `berth doctor`: checks a berthd setup the way berthd would read it (the same
//! `berth-config` schema, the same `BERTH_*` overrides) and says what to fix: config fields,
//! auth, database, inventory, TLS files, and a running daemon's health.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use berth_config::Config;
use serde::Serialize;

use crate::exit;
use crate::output::{Data, Done, Report, Table, View};

/// The inventory berthd serves when none is configured.
const BUNDLED_INVENTORY: &str = include_str!("../../../examples/inventory.yaml");

#[derive(clap::Args, Debug)]
pub struct Args {
    /// berthd config file (TOML); without it, the defaults. `BERTH_*` variables apply as for
    /// berthd.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Also ask a running berthd at this URL for its health and readiness (and, with admin
    /// credentials, how its inventory was last reconciled with the calendar).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Admin bearer token for the daemon's `/admin/inventory`.
    #[arg(long, value_name = "TOKEN", requires = "url")]
    token: Option<String>,
    /// Admin HTTP Basic credentials `user:password` for the daemon's `/admin/inventory`.
    #[arg(long, value_name = "USER:PASSWORD", requires = "url")]
    basic: Option<String>,
    /// Seconds to wait for the database and the daemon.
    #[arg(long, value_name = "SECS", default_value_t = 5)]
    timeout: u64,
}

/// A check's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Fine.
    Ok,
    /// Works, but probably not what is wanted.
    Warn,
    /// berthd would refuse to start or fail at run time.
    Fail,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// One line of the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    /// What was checked (`config`, `database`, …).
    pub check: &'static str,
    /// The verdict.
    pub status: Status,
    /// What was found.
    pub detail: String,
    /// What to do (empty when nothing).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub fix: String,
}

fn check(check: &'static str, status: Status, detail: impl Into<String>) -> Check {
    Check {
        check,
        status,
        detail: detail.into(),
        fix: String::new(),
    }
}

impl Check {
    fn fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = fix.into();
        self
    }
}

pub fn run(args: &Args) -> Result<Done> {
    let timeout = Duration::from_secs(args.timeout.max(1));
    let env = |k: &str| std::env::var(k).ok();
    let daemon = args.url.as_deref().map(|url| Daemon {
        url,
        token: args.token.as_deref(),
        basic: args.basic.as_deref(),
    });
    let checks = diagnose(args.config.as_deref(), daemon.as_ref(), timeout, env);
    let failed = checks.iter().any(|c| c.status == Status::Fail);
    Ok(Done::new(
        report(&checks)?,
        if failed { exit::DOMAIN } else { exit::OK },
    ))
}

/// Every check, in order: every config problem on its own line; later checks are skipped
/// when the config does not load.
pub fn diagnose(
    file: Option<&Path>,
    daemon: Option<&Daemon<'_>>,
    timeout: Duration,
    env: impl Fn(&str) -> Option<String>,
) -> Vec<Check> {
    let mut out = Vec::new();
    let name = file.map_or("defaults".to_owned(), |p| p.display().to_string());
    match Config::load(file, env) {
        Err(e) => out.extend(
            e.problems()
                .iter()
                .map(|p| check("config", Status::Fail, p.to_string()).fix(config_fix(p))),
        ),
        Ok(cfg) => {
            out.push(check(
                "config",
                Status::Ok,
                format!(
                    "{name}: listen {}, database {}",
                    cfg.listen,
                    redact(&cfg.database_url)
                ),
            ));
            out.push(auth(&cfg));
            out.push(credential_key(&cfg));
            out.push(database(&cfg, timeout));
            out.extend(inventory(&cfg));
            out.extend(tls(&cfg));
        }
    }
    if let Some(d) = daemon {
        out.push(health(d.url, timeout));
        if d.token.is_some() || d.basic.is_some() {
            out.extend(daemon_inventory(d, timeout));
        }
    }
    out
}

/// A running daemon to ask, with the credentials to ask it.
#[derive(Debug, Clone, Copy)]
pub struct Daemon<'a> {
    /// Its base URL.
    pub url: &'a str,
    /// An admin bearer token.
    pub token: Option<&'a str>,
    /// Admin Basic credentials `user:password`.
    pub basic: Option<&'a str>,
}

fn config_fix(e: &berth_config::ConfigError) -> String {
    match e {
        berth_config::ConfigError::Read { .. } => "check the path and its permissions".into(),
        berth_config::ConfigError::Parse { field, .. } if field.is_empty() => {
            "correct the TOML at that line (see the berthd section of the README for every key)"
                .into()
        }
        berth_config::ConfigError::Parse { field, .. } => {
            format!("correct `{field}` (see the berthd section of the README for every key)")
        }
        berth_config::ConfigError::Env { var, .. } => format!("correct or unset {var}"),
        _ => "correct the fields named".into(),
    }
}

/// A database URL without its password.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let userinfo = &url[s + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..s + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

fn auth(cfg: &Config) -> Check {
    let placeholders = cfg.placeholder_secrets();
    if !placeholders.is_empty() {
        return check("auth", Status::Fail, placeholders.join("; "))
            .fix("berthd refuses to start: put generated secrets in place of the placeholders");
    }
    if let Err(e) = cfg.check_auth() {
        return check("auth", Status::Fail, e.to_string())
            .fix("add [auth] tokens or basic users, or listen on 127.0.0.1");
    }
    if cfg.auth_off() {
        return check(
            "auth",
            Status::Warn,
            format!("off: anyone who reaches {} may read and write", cfg.listen),
        )
        .fix("configure [auth] tokens or basic users before others share this host");
    }
    let a = &cfg.auth;
    let read_only = a.read_tokens.len() + a.basic.iter().filter(|b| b.read_only).count();
    check(
        "auth",
        Status::Ok,
        format!(
            "{} token(s), {} basic user(s), {read_only} read-only",
            a.tokens.len() + a.read_tokens.len(),
            a.basic.len()
        ),
    )
}

fn credential_key(cfg: &Config) -> Check {
    match &cfg.credential_key {
        None => check(
            "credential key",
            Status::Ok,
            "not set: provider passwords are not stored",
        ),
        Some(hex) => match berth_store::CredentialKey::from_hex(hex) {
            Ok(_) => check("credential key", Status::Ok, "a valid 256-bit key"),
            Err(e) => check("credential key", Status::Fail, e.to_string())
                .fix("set credential_key to 64 hex digits (e.g. `openssl rand -hex 32`)"),
        },
    }
}

fn database(cfg: &Config, timeout: Duration) -> Check {
    let url = cfg.database_url.as_str();
    let scheme = url.split(':').next().unwrap_or_default();
    match scheme {
        "sqlite" => sqlite(cfg),
        "postgres" | "postgresql" => postgres(cfg, timeout),
        other => check(
            "database",
            Status::Fail,
            format!("unsupported database URL scheme `{other}`"),
        )
        .fix("use sqlite://PATH or postgres://USER:PASSWORD@HOST/DB"),
    }
}

fn sqlite(cfg: &Config) -> Check {
    let Some(path) = cfg.sqlite_file() else {
        return check(
            "database",
            Status::Warn,
            "SQLite in memory: nothing survives a restart",
        )
        .fix("set database_url = \"sqlite://PATH\" to keep reservations");
    };
    let path = path.as_path();
    if path.exists() {
        if !path.is_file() {
            return check(
                "database",
                Status::Fail,
                format!("{} is not a file", path.display()),
            )
            .fix("point database_url at a SQLite file");
        }
        let mut header = [0u8; 16];
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .and_then(|mut f| f.read(&mut header));
        return match opened {
            Err(e) => check(
                "database",
                Status::Fail,
                format!("cannot open {} for writing: {e}", path.display()),
            )
            .fix("give the berthd user read and write access to the file"),
            Ok(n) if n > 0 && &header[..n.min(16)] != b"SQLite format 3\0" => check(
                "database",
                Status::Fail,
                format!("{} is not a SQLite database", path.display()),
            )
            .fix("point database_url at berthd's database, or at a new path"),
            Ok(_) => check(
                "database",
                Status::Ok,
                format!("SQLite {} is writable", path.display()),
            ),
        };
    }
    // berthd creates the file, and its missing directories where allowed: the nearest
    // existing directory must take a new file.
    let created = match cfg.missing_sqlite_dir() {
        Ok(created) => created,
        Err(e) => {
            return check("database", Status::Fail, e.to_string()).fix(
                "create the directory for the berthd user, correct database_url, or set [store] create_dirs = true",
            );
        }
    };
    let mut dir = path.parent().unwrap_or(Path::new("."));
    if dir.as_os_str().is_empty() {
        dir = Path::new(".");
    }
    while !dir.exists() {
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir = p,
            _ => {
                dir = Path::new(".");
                break;
            }
        }
    }
    let probe = dir.join(format!(".berth-doctor-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            let detail = match &created {
                Some(new) => format!(
                    "SQLite {} will be created, and its directory {} (directory {} is writable)",
                    path.display(),
                    new.display(),
                    dir.display()
                ),
                None => format!(
                    "SQLite {} will be created (directory {} is writable)",
                    path.display(),
                    dir.display()
                ),
            };
            check("database", Status::Ok, detail)
        }
        Err(e) => check(
            "database",
            Status::Fail,
            format!(
                "cannot create {}: directory {} does not take new files ({e})",
                path.display(),
                dir.display()
            ),
        )
        .fix("create the directory for the berthd user, or choose another path"),
    }
}

fn postgres(cfg: &Config, timeout: Duration) -> Check {
    use sqlx::Connection as _;
    if let Some(schema) = &cfg.pg_schema
        && (schema.is_empty()
            || !schema
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
    {
        return check(
            "database",
            Status::Fail,
            format!("pg_schema `{schema}` is not a PostgreSQL schema name berthd accepts"),
        )
        .fix("use lowercase letters, digits and `_`");
    }
    let url = cfg.database_url.clone();
    let shown = redact(&url);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return check(
                "database",
                Status::Fail,
                format!("cannot start a runtime: {e}"),
            );
        }
    };
    let answer = rt.block_on(async {
        tokio::time::timeout(timeout, async {
            let mut conn = sqlx::PgConnection::connect(&url).await?;
            let version: (String,) = sqlx::query_as("SHOW server_version")
                .fetch_one(&mut conn)
                .await?;
            let _ = conn.close().await;
            Ok::<_, sqlx::Error>(version.0)
        })
        .await
    });
    match answer {
        Ok(Ok(version)) => check(
            "database",
            Status::Ok,
            format!("PostgreSQL {version} at {shown} answers"),
        ),
        Ok(Err(e)) => check(
            "database",
            Status::Fail,
            format!("cannot connect to {shown}: {e}"),
        )
        .fix("check that PostgreSQL runs there and the user, password and database exist"),
        Err(_) => check(
            "database",
            Status::Fail,
            format!("{shown} did not answer within {} s", timeout.as_secs()),
        )
        .fix("check the host, port and firewall"),
    }
}

fn inventory(cfg: &Config) -> Vec<Check> {
    let (name, text) = match &cfg.inventory {
        None => ("bundled example".to_owned(), BUNDLED_INVENTORY.to_owned()),
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) => (p.display().to_string(), t),
            Err(e) => {
                return vec![
                    check(
                        "inventory",
                        Status::Fail,
                        format!("cannot read {}: {e}", p.display()),
                    )
                    .fix("check `inventory` (BERTH_INVENTORY) and the file's permissions"),
                ];
            }
        },
    };
    let inv = match berth_inventory::Inventory::parse(&text) {
        Ok(inv) => inv,
        Err(berth_inventory::InventoryError::Invalid { diagnostics }) => {
            let first = diagnostics
                .iter()
                .filter(|d| d.is_error())
                .take(3)
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ");
            return vec![
                check(
                    "inventory",
                    Status::Fail,
                    format!(
                        "{name}: {} error(s): {first}",
                        diagnostics.iter().filter(|d| d.is_error()).count()
                    ),
                )
                .fix("correct the inventory file (`berth solve` and `berth validate --inventory` show every problem)"),
            ];
        }
        Err(e) => {
            return vec![check("inventory", Status::Fail, format!("{name}: {e}"))];
        }
    };
    let mut by_type: BTreeMap<String, usize> = BTreeMap::new();
    for c in inv.candidates.values() {
        *by_type.entry(c.inventory_type.to_string()).or_default() += 1;
    }
    let with_capacity = inv
        .candidates
        .values()
        .filter(|c| !c.capacity.is_empty())
        .count();
    let types = by_type
        .iter()
        .map(|(t, n)| format!("{n} {t}"))
        .collect::<Vec<_>>()
        .join(", ");
    let topology = if inv.topology.is_some() || inv.topology_file.is_some() {
        ", a topology"
    } else {
        ""
    };
    let mut out = vec![check(
        "inventory",
        if inv.candidates.is_empty() {
            Status::Warn
        } else {
            Status::Ok
        },
        format!(
            "{name}: {} candidate(s) ({types}), {with_capacity} with capacity{topology}",
            inv.candidates.len()
        ),
    )];
    if cfg.inventory.is_none() {
        out[0].status = Status::Warn;
        out[0].fix = "set `inventory` (BERTH_INVENTORY) to your own candidates".into();
    }
    for w in inv.warnings.iter().take(5) {
        out.push(check("inventory", Status::Warn, format!("{name}: {w}")));
    }
    out
}

fn tls(cfg: &Config) -> Vec<Check> {
    let mut out = Vec::new();
    match (&cfg.server.tls_cert, &cfg.server.tls_key) {
        (Some(cert), Some(key)) => out.push(tls_pair(cert, key)),
        _ if !cfg.listen.ip().is_loopback() => out.push(
            check(
                "tls",
                Status::Warn,
                format!("plain HTTP on {}: credentials travel in clear", cfg.listen),
            )
            .fix("set [server] tls_cert and tls_key, or terminate TLS in front of berthd"),
        ),
        _ => out.push(check("tls", Status::Ok, "plain HTTP on a loopback address")),
    }
    if let Some(ca) = &cfg.notify.ca_file {
        out.push(match crate::client::ca_certificates(ca) {
            Ok(certs) => check(
                "notify ca",
                Status::Ok,
                format!("{}: {} certificate(s)", ca.display(), certs.len()),
            ),
            Err(e) => check("notify ca", Status::Fail, format!("{e:#}"))
                .fix("give [notify] ca_file a PEM bundle the berthd user may read"),
        });
    }
    out
}

/// The listener's certificate chain and key, loaded as berthd loads them (rustls): both
/// parse, and the key belongs to the leaf certificate.
fn tls_pair(cert: &Path, key: &Path) -> Check {
    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::pem::PemObject as _;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let unreadable = |p: &Path| {
        std::fs::File::open(p)
            .err()
            .map(|e| format!("cannot read {}: {e}", p.display()))
    };
    if let Some(e) = unreadable(cert).or_else(|| unreadable(key)) {
        return check("tls", Status::Fail, e)
            .fix("check the path and that the berthd user may read it");
    }
    let chain = match CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
    {
        Ok(chain) if !chain.is_empty() => chain,
        _ => {
            return check(
                "tls",
                Status::Fail,
                format!("tls_cert {}: no PEM certificate in it", cert.display()),
            )
            .fix("give a PEM file with `-----BEGIN CERTIFICATE-----` blocks, leaf first");
        }
    };
    let Ok(key_der) = PrivateKeyDer::from_pem_file(key) else {
        return check(
            "tls",
            Status::Fail,
            format!("tls_key {}: no PEM private key in it", key.display()),
        )
        .fix("give a PEM private key (PKCS#8, PKCS#1 or SEC1)");
    };
    let n = chain.len();
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let fits = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map(|b| b.with_no_client_auth().with_single_cert(chain, key_der));
    match fits {
        Ok(Ok(_)) => check(
            "tls",
            Status::Ok,
            format!(
                "{}: {n} certificate(s), key {} fits",
                cert.display(),
                key.display()
            ),
        ),
        Ok(Err(e)) | Err(e) => check(
            "tls",
            Status::Fail,
            format!(
                "tls_key {} does not fit tls_cert {}: {e}",
                key.display(),
                cert.display()
            ),
        )
        .fix("give the key the certificate was issued for"),
    }
}

/// The daemon's inventory status (`GET /admin/inventory`) as checks.
fn daemon_inventory(d: &Daemon<'_>, timeout: Duration) -> Vec<Check> {
    const NAME: &str = "daemon inventory";
    let base = d.url.trim_end_matches('/');
    let client = match reqwest::blocking::Client::builder()
        .timeout(timeout)
        .build()
    {
        Ok(c) => c,
        Err(e) => return vec![check(NAME, Status::Fail, format!("no HTTP client: {e}"))],
    };
    let mut req = client.get(format!("{base}/admin/inventory"));
    if let Some(t) = d.token {
        req = req.bearer_auth(t);
    }
    if let Some((u, p)) = d.basic.and_then(|b| b.split_once(':')) {
        req = req.basic_auth(u, Some(p));
    }
    let resp = match req.send() {
        Ok(r) => r,
        Err(e) => {
            return vec![check(
                NAME,
                Status::Fail,
                format!("cannot reach {base}: {e}"),
            )];
        }
    };
    let code = resp.status().as_u16();
    let body: serde_json::Value = resp.json().unwrap_or_default();
    match code {
        200 => inventory_status(&body),
        401 | 403 => vec![
            check(
                NAME,
                Status::Warn,
                format!("{base}/admin/inventory answered {code}: {}", body["detail"].as_str().unwrap_or_default()),
            )
            .fix("give admin credentials (--token, --basic): [auth] admin_tokens or a basic user with admin = true"),
        ],
        _ => vec![check(
            NAME,
            Status::Fail,
            format!("{base}/admin/inventory answered {code}; expected 200"),
        )],
    }
}

/// The checks of a daemon's inventory status: the last reconcile (a warning per pool changed
/// or retired, with the records put at risk and the reservations left on retired pools), a
/// reload refused since, and the drift.
pub fn inventory_status(v: &serde_json::Value) -> Vec<Check> {
    const NAME: &str = "daemon inventory";
    let ids = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect()
    };
    let list = |v: &serde_json::Value| v.as_array().cloned().unwrap_or_default();
    let count = |d: &serde_json::Value| {
        format!(
            "{} added, {} changed, {} removed, {} unchanged",
            list(&d["added"]).len(),
            list(&d["changed"]).len(),
            list(&d["removed"]).len(),
            d["unchanged"].as_u64().unwrap_or(0)
        )
    };
    let mut out = Vec::new();
    let source = v["source"].as_str().unwrap_or("?");
    let last = &v["last"];
    if last.is_object() {
        let reconciled = last["reconciled"].as_bool().unwrap_or(true);
        let mut c = check(
            NAME,
            Status::Ok,
            format!(
                "{source}: {} candidate(s); reconciled on {} at {}: {}",
                last["candidates"].as_u64().unwrap_or(0),
                last["trigger"].as_str().unwrap_or("?"),
                last["at"].as_str().unwrap_or("?"),
                count(&last["diff"])
            ),
        );
        if !reconciled {
            c.status = Status::Warn;
            c.detail = format!("{source}: serves plans only; the calendar does not follow it");
            c.fix =
                "set seed_capacity = true to have the calendar's pools follow the inventory".into();
        }
        out.push(c);
        let d = &last["diff"];
        for p in list(&d["changed"]) {
            let dims: Vec<String> = p["dimensions"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, c)| format!("{k} {} -> {}", c["before"], c["after"]))
                .collect();
            let risk = ids(&p["at-risk"]);
            let mut c = check(
                NAME,
                if risk.is_empty() {
                    Status::Ok
                } else {
                    Status::Warn
                },
                format!(
                    "pool {} changed: {}{}",
                    p["pool-id"].as_str().unwrap_or("?"),
                    dims.join(", "),
                    if risk.is_empty() {
                        String::new()
                    } else {
                        format!("; at risk: {}", risk.join(", "))
                    }
                ),
            );
            if !risk.is_empty() {
                c.fix = "move or shrink the reservations at risk, or give the pool its capacity back in the inventory".into();
            }
            out.push(c);
        }
        for p in list(&d["removed"]) {
            let live = ids(&p["reservations"]);
            let mut c = check(
                NAME,
                Status::Warn,
                format!(
                    "pool {} retired: its candidate is gone from the inventory{}",
                    p["pool-id"].as_str().unwrap_or("?"),
                    if live.is_empty() {
                        String::new()
                    } else {
                        format!("; live reservations: {}", live.join(", "))
                    }
                ),
            );
            c.fix = "if the candidate should stay, put it back in the inventory and reload".into();
            out.push(c);
        }
    }
    let failed = &v["failed"];
    if failed.is_object() {
        out.push(
            check(
                NAME,
                Status::Fail,
                format!(
                    "the reload on {} at {} was refused (the inventory served is older than {source}): {}",
                    failed["trigger"].as_str().unwrap_or("?"),
                    failed["at"].as_str().unwrap_or("?"),
                    failed["error"].as_str().unwrap_or("?")
                ),
            )
            .fix("correct the inventory file, then reload (SIGHUP or POST /admin/inventory/reload)"),
        );
    }
    let drift = &v["drift"];
    let drifted = ["added", "changed", "removed"]
        .iter()
        .any(|k| !list(&drift[*k]).is_empty());
    if drifted {
        out.push(
            check(
                NAME,
                Status::Warn,
                format!("the calendar has drifted from the inventory served: a reconcile now would make {}", count(drift)),
            )
            .fix("reload the inventory (SIGHUP or POST /admin/inventory/reload); another daemon on this database may serve another inventory"),
        );
    }
    out
}

fn health(url: &str, timeout: Duration) -> Check {
    let base = url.trim_end_matches('/');
    let client = match reqwest::blocking::Client::builder()
        .timeout(timeout)
        .build()
    {
        Ok(c) => c,
        Err(e) => return check("daemon", Status::Fail, format!("no HTTP client: {e}")),
    };
    let get = |path: &str| {
        client
            .get(format!("{base}{path}"))
            .send()
            .map(|r| r.status().as_u16())
    };
    match (get("/healthz"), get("/readyz")) {
        (Ok(200), Ok(200)) => check(
            "daemon",
            Status::Ok,
            format!("{base}: healthy and ready (its store answers)"),
        ),
        (Ok(200), Ok(s)) => check(
            "daemon",
            Status::Fail,
            format!("{base}: up but not ready ({s}): its store does not answer"),
        )
        .fix("see berthd's log for the store error"),
        (Ok(s), _) => check(
            "daemon",
            Status::Fail,
            format!("{base}/healthz answered {s}; expected 200"),
        )
        .fix("is this URL a berthd?"),
        (Err(e), _) => check("daemon", Status::Fail, format!("cannot reach {base}: {e}"))
            .fix("start berthd, or check --url, the port and the firewall"),
    }
}

fn report(checks: &[Check]) -> Result<Report> {
    let mut table = Table::new(&["status", "check", "detail", "fix"]);
    let mut text = String::new();
    for c in checks {
        table.row(vec![
            c.status.as_str().into(),
            c.check.into(),
            c.detail.clone(),
            c.fix.clone(),
        ]);
        text.push_str(&format!(
            "{:<4}  {:<14}  {}\n",
            c.status.as_str(),
            c.check,
            c.detail
        ));
        if !c.fix.is_empty() {
            text.push_str(&format!("{:22}fix: {}\n", "", c.fix));
        }
    }
    let fails = checks.iter().filter(|c| c.status == Status::Fail).count();
    let warns = checks.iter().filter(|c| c.status == Status::Warn).count();
    text.push_str(&format!("{fails} failed, {warns} warning(s)\n"));
    Ok(Report {
        data: Data::One(serde_json::to_value(checks)?),
        table: View::Grid(table),
        text: Some(text),
    })
}

#[cfg(test)]
mod tests;
