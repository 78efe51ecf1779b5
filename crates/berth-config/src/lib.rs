//! Daemon configuration: defaults, a TOML file, then `BERTH_*` environment variables.
//!
//! One schema for `berthd` (which runs with it) and `berth doctor` (which checks it), so a
//! field added here is known to both. [`Config::load`] parses and layers; errors name the file,
//! the field path and line:column, or the variable.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Most `[plans] threads`: the solver's `MAX_THREADS` (this crate sits below the solver; the
/// `berth` binary's tests hold the two equal).
pub const MAX_PLAN_THREADS: usize = 256;

/// Why a configuration was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The IO error.
        source: std::io::Error,
    },
    /// The file is not valid TOML or does not fit the schema.
    #[error("invalid config {}: {}{message}", path.display(), at(field, *line, *column))]
    Parse {
        /// The file.
        path: PathBuf,
        /// Field path (`plans.workers`), empty at the top level.
        field: String,
        /// 1-based line, 0 when unknown.
        line: usize,
        /// 1-based column, 0 when unknown.
        column: usize,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A `BERTH_*` variable has a value of the wrong kind.
    #[error("{var} `{value}` {expected}")]
    Env {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What it should be.
        expected: &'static str,
    },
    /// Fields that parse but do not fit together.
    #[error("{message}")]
    Invalid {
        /// The field at fault.
        field: &'static str,
        /// What is wrong and what to do.
        message: String,
    },
}

fn at(field: &str, line: usize, column: usize) -> String {
    match (field.is_empty(), line) {
        (true, 0) => String::new(),
        (true, l) => format!("({l}:{column}): "),
        (false, 0) => format!("{field}: "),
        (false, l) => format!("{field} ({l}:{column}): "),
    }
}

type Result<T, E = ConfigError> = std::result::Result<T, E>;

/// Everything `berthd` can be told.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address to serve on.
    pub listen: SocketAddr,
    /// `sqlite://PATH` or `postgres://...`.
    pub database_url: String,
    /// PostgreSQL schema holding the tables (created if missing); the default search path
    /// when absent. Lowercase letters, digits and `_`.
    pub pg_schema: Option<String>,
    /// The listener: plain HTTP, or HTTPS with a certificate and key.
    pub server: Server,
    /// Webhook delivery.
    pub notify: Notify,
    /// Inventory file (YAML/JSON); the bundled example inventory when absent.
    pub inventory: Option<PathBuf>,
    /// Datacenter topology (berth-topology document) the web console places Heat templates
    /// on; the bundled example room (`examples/heat/room-rack-pm.yaml`) when absent.
    pub topology: Option<PathBuf>,
    /// Command stream of the calendar.
    pub stream: String,
    /// Give every inventory candidate's `capacity` to the calendar when the stream is empty.
    pub seed_capacity: bool,
    /// Hex key (64 digits) sealing provider credentials; without it they are not stored.
    pub credential_key: Option<String>,
    /// Who may call.
    pub auth: Auth,
    /// Request limits.
    pub limits: Limits,
    /// Plan workers.
    pub plans: Plans,
    /// The reservation journal: group commit and snapshots.
    pub journal: Journal,
    /// Reservation policy (the calendar's `Policy` fields).
    pub policy: Option<berth_calendar::Policy>,
    /// Log filter (`info`, `berth=debug`, ...) and format.
    pub log: Log,
    /// Several daemons on one database: the calendar's lease, forwarding, failover.
    pub cluster: Cluster,
}

/// Listener settings.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Server {
    /// PEM certificate chain (leaf first); with `tls_key`, the API is served over HTTPS.
    pub tls_cert: Option<PathBuf>,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1) of `tls_cert`.
    pub tls_key: Option<PathBuf>,
}

/// Webhook delivery settings.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Notify {
    /// PEM bundle of extra CAs trusted for `https://` callbacks (an operator's private PKI).
    pub ca_file: Option<PathBuf>,
    /// Refuse `http://` callbacks (400 at subscription time).
    pub require_https: bool,
    /// Allow callbacks to loopback, private and link-local addresses (refused by default).
    pub allow_private_callbacks: bool,
}

/// Auth settings.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Auth {
    /// Turn auth off (refused unless `listen` is a loopback address).
    pub disabled: bool,
    /// HTTP Basic accounts.
    pub basic: Vec<BasicUser>,
    /// Bearer tokens that may read and write.
    pub tokens: Vec<String>,
    /// Bearer tokens that may only read (a write answers 403).
    pub read_tokens: Vec<String>,
}

/// One HTTP Basic account.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BasicUser {
    /// User name.
    pub user: String,
    /// Password.
    pub password: String,
    /// Reads only (a write answers 403).
    #[serde(default)]
    pub read_only: bool,
}

/// Request limits.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Largest body in bytes.
    pub body_bytes: usize,
    /// Seconds per request.
    pub request_timeout_secs: u64,
    /// Requests in progress at once; more are shed with 503 and `Retry-After` (0: no limit).
    pub max_in_flight: usize,
    /// Connections open at once; more wait in the kernel's backlog.
    pub max_connections: usize,
    /// Seconds a client has to send a request's headers (and to start the next request on a
    /// kept-alive connection) before the connection is closed.
    pub header_timeout_secs: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            body_bytes: 4 << 20,
            request_timeout_secs: 30,
            // Measured on 2 cores at 4x saturation (docs/reliability.md): accepted p99 stays
            // near 0.1 s; larger limits trade that for throughput under overload.
            max_in_flight: 64,
            max_connections: 256,
            header_timeout_secs: 10,
        }
    }
}

/// Plan worker settings.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Plans {
    /// Plans solved at once.
    pub workers: usize,
    /// Search threads of each plan (0: one per core).
    pub threads: usize,
    /// Timeout when a plan gives none, in seconds.
    pub default_timeout_secs: u64,
    /// Largest timeout accepted.
    pub max_timeout_secs: u64,
    /// How long a worker's claim on a plan lasts unless renewed; a plan whose daemon died
    /// mid-solve is taken over by another daemon after this long. At least 1.
    pub claim_secs: u64,
    /// This daemon's name in the plan queue (claim owner, a plan's `solved_by`); unique among
    /// the daemons sharing a database. Default: `[cluster] node_id` when set, else host name
    /// and listen address.
    pub node: Option<String>,
}

impl Default for Plans {
    fn default() -> Self {
        Plans {
            workers: 2,
            threads: 1,
            default_timeout_secs: 300,
            max_timeout_secs: 3600,
            claim_secs: 30,
            node: None,
        }
    }
}

/// Journal settings.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Journal {
    /// Most reservation commands committed in one transaction (1: no group commit).
    pub max_batch: usize,
    /// Write a calendar snapshot every this many logged commands (0: only at shutdown);
    /// a restart restores the newest one and replays only the commands after it.
    pub snapshot_every: u64,
}

impl Default for Journal {
    fn default() -> Self {
        Journal {
            max_batch: 512,
            snapshot_every: 10_000,
        }
    }
}

/// Cluster settings: daemons sharing one database (PostgreSQL, or CockroachDB/YugabyteDB over
/// its wire protocol) take the calendar's lease to write it, and forward writes to its holder.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Cluster {
    /// Take part in a cluster. Off (the default): this daemon writes without a lease, as the
    /// only daemon of its database.
    pub enabled: bool,
    /// This daemon's name in leases; unique per process (`<host>-<pid>` when absent).
    pub node_id: Option<String>,
    /// Base URL other daemons forward writes to (`http://<listen>` when absent).
    pub advertise_url: Option<String>,
    /// Seconds a lease lasts unless renewed (the holder renews every third of it): about how
    /// long writes wait when the holder dies.
    pub lease_secs: u64,
    /// Isolation of PostgreSQL write transactions.
    pub isolation: Isolation,
    /// What splits the calendar into partitions, each with its own stream, lease and writer
    /// (`zone`, the default; `provider`; `pool`), or `none` for one calendar with one lease.
    pub partition_key: PartitionKey,
}

/// What splits a clustered calendar into partitions.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PartitionKey {
    /// One calendar stream and one lease: a single writing daemon at a time.
    None,
    /// One partition per zone.
    #[default]
    Zone,
    /// One partition per provider.
    Provider,
    /// One partition per pool (zone and provider).
    Pool,
}

impl Default for Cluster {
    fn default() -> Self {
        Cluster {
            enabled: false,
            node_id: None,
            advertise_url: None,
            lease_secs: 3,
            isolation: Isolation::ReadCommitted,
            partition_key: PartitionKey::Zone,
        }
    }
}

/// Isolation level of the store's PostgreSQL write transactions.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// Enough for every path (compare-and-set rows, primary keys, lease row locks).
    #[default]
    ReadCommitted,
    /// What CockroachDB and YugabyteDB run; aborted transactions are retried.
    Serializable,
}

/// Log settings.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Log {
    /// `tracing` filter.
    pub filter: String,
    /// JSON lines instead of text.
    pub json: bool,
}

impl Default for Log {
    fn default() -> Self {
        Log {
            filter: "info".into(),
            json: false,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8091)),
            database_url: "sqlite://./berth-data/berth.db".into(),
            pg_schema: None,
            server: Server::default(),
            notify: Notify::default(),
            inventory: None,
            topology: None,
            stream: "calendar".into(),
            seed_capacity: true,
            credential_key: None,
            auth: Auth::default(),
            limits: Limits::default(),
            plans: Plans::default(),
            journal: Journal::default(),
            policy: None,
            log: Log::default(),
            cluster: Cluster::default(),
        }
    }
}

impl Config {
    /// Defaults, then `file` (TOML), then the environment `env` gives.
    pub fn load(file: Option<&Path>, env: impl Fn(&str) -> Option<String>) -> Result<Config> {
        let mut c = match file {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|source| ConfigError::Read {
                    path: p.to_path_buf(),
                    source,
                })?;
                Config::parse(p, &text)?
            }
            None => Config::default(),
        };
        let num = |var: &'static str, v: String| -> Result<u64> {
            v.parse().map_err(|_| ConfigError::Env {
                var,
                value: v,
                expected: "is not a number",
            })
        };
        let size = |var: &'static str, v: String| -> Result<usize> {
            num(var, v).and_then(|n| {
                usize::try_from(n).map_err(|_| ConfigError::Env {
                    var,
                    value: n.to_string(),
                    expected: "is too large",
                })
            })
        };
        if let Some(v) = env("BERTH_LISTEN") {
            c.listen = v.parse().map_err(|_| ConfigError::Env {
                var: "BERTH_LISTEN",
                value: v,
                expected: "is not an address like 127.0.0.1:8091",
            })?;
        }
        if let Some(v) = env("BERTH_DATABASE_URL") {
            c.database_url = v;
        }
        if let Some(v) = env("BERTH_PG_SCHEMA") {
            c.pg_schema = Some(v);
        }
        if let Some(v) = env("BERTH_TLS_CERT") {
            c.server.tls_cert = Some(PathBuf::from(v));
        }
        if let Some(v) = env("BERTH_TLS_KEY") {
            c.server.tls_key = Some(PathBuf::from(v));
        }
        if let Some(v) = env("BERTH_NOTIFY_CA_FILE") {
            c.notify.ca_file = Some(PathBuf::from(v));
        }
        if let Some(v) = env("BERTH_NOTIFY_ALLOW_PRIVATE") {
            c.notify.allow_private_callbacks = matches!(v.as_str(), "1" | "true" | "yes");
        }
        if let Some(v) = env("BERTH_NOTIFY_REQUIRE_HTTPS") {
            c.notify.require_https = matches!(v.as_str(), "1" | "true" | "yes");
        }
        if let Some(v) = env("BERTH_INVENTORY") {
            c.inventory = Some(PathBuf::from(v));
        }
        if let Some(v) = env("BERTH_TOPOLOGY") {
            c.topology = Some(PathBuf::from(v));
        }
        if let Some(v) = env("BERTH_CREDENTIAL_KEY") {
            c.credential_key = Some(v);
        }
        if let Some(v) = env("BERTH_AUTH_DISABLED") {
            c.auth.disabled = matches!(v.as_str(), "1" | "true" | "yes");
        }
        if let Some(v) = env("BERTH_TOKENS") {
            c.auth.tokens.extend(
                v.split(',')
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(str::to_owned),
            );
        }
        if let Some(v) = env("BERTH_READ_TOKENS") {
            c.auth.read_tokens.extend(
                v.split(',')
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(str::to_owned),
            );
        }
        for (var, read_only) in [("BERTH_BASIC_AUTH", false), ("BERTH_READ_BASIC_AUTH", true)] {
            let Some(v) = env(var) else { continue };
            for pair in v.split(',').filter(|p| !p.is_empty()) {
                let Some((user, password)) = pair.split_once(':') else {
                    return Err(ConfigError::Env {
                        var,
                        value: "(hidden)".into(),
                        expected: "is not user:password[,user:password]",
                    });
                };
                c.auth.basic.push(BasicUser {
                    user: user.into(),
                    password: password.into(),
                    read_only,
                });
            }
        }
        if let Some(v) = env("BERTH_PLAN_WORKERS") {
            c.plans.workers = size("BERTH_PLAN_WORKERS", v)?;
        }
        if let Some(v) = env("BERTH_PLAN_THREADS") {
            c.plans.threads = size("BERTH_PLAN_THREADS", v)?;
        }
        if let Some(v) = env("BERTH_PLAN_CLAIM_SECS") {
            c.plans.claim_secs = num("BERTH_PLAN_CLAIM_SECS", v)?;
        }
        if let Some(v) = env("BERTH_PLAN_NODE") {
            c.plans.node = Some(v);
        }
        if let Some(v) = env("BERTH_MAX_IN_FLIGHT") {
            c.limits.max_in_flight = size("BERTH_MAX_IN_FLIGHT", v)?;
        }
        if let Some(v) = env("BERTH_MAX_CONNECTIONS") {
            c.limits.max_connections = size("BERTH_MAX_CONNECTIONS", v)?;
        }
        if let Some(v) = env("BERTH_HEADER_TIMEOUT_SECS") {
            c.limits.header_timeout_secs = num("BERTH_HEADER_TIMEOUT_SECS", v)?;
        }
        if let Some(v) = env("BERTH_REQUEST_TIMEOUT_SECS") {
            c.limits.request_timeout_secs = num("BERTH_REQUEST_TIMEOUT_SECS", v)?;
        }
        if let Some(v) = env("BERTH_MAX_BATCH") {
            c.journal.max_batch = size("BERTH_MAX_BATCH", v)?;
        }
        if let Some(v) = env("BERTH_SNAPSHOT_EVERY") {
            c.journal.snapshot_every = num("BERTH_SNAPSHOT_EVERY", v)?;
        }
        if let Some(v) = env("BERTH_LOG") {
            c.log.filter = v;
        }
        if c.plans.threads > MAX_PLAN_THREADS {
            return Err(ConfigError::Invalid {
                field: "plans.threads",
                message: format!(
                    "[plans] threads is {}; expected at most {MAX_PLAN_THREADS} (0: one per core)",
                    c.plans.threads
                ),
            });
        }
        if c.plans.claim_secs == 0 {
            return Err(ConfigError::Invalid {
                field: "plans.claim_secs",
                message: "[plans] claim_secs is 0; expected at least 1 second".into(),
            });
        }
        if let Some(v) = env("BERTH_CLUSTER") {
            c.cluster.enabled = matches!(v.as_str(), "1" | "true" | "yes");
        }
        if let Some(v) = env("BERTH_NODE_ID") {
            c.cluster.node_id = Some(v);
        }
        if let Some(v) = env("BERTH_ADVERTISE_URL") {
            c.cluster.advertise_url = Some(v);
        }
        if let Some(v) = env("BERTH_LEASE_SECS") {
            c.cluster.lease_secs = num("BERTH_LEASE_SECS", v)?;
        }
        if let Some(v) = env("BERTH_PG_ISOLATION") {
            c.cluster.isolation = match v.as_str() {
                "read-committed" => Isolation::ReadCommitted,
                "serializable" => Isolation::Serializable,
                _ => {
                    return Err(ConfigError::Env {
                        var: "BERTH_PG_ISOLATION",
                        value: v,
                        expected: "is not one of read-committed, serializable",
                    });
                }
            };
        }
        if let Some(v) = env("BERTH_CLUSTER_PARTITION_KEY") {
            c.cluster.partition_key = match v.as_str() {
                "none" => PartitionKey::None,
                "zone" => PartitionKey::Zone,
                "provider" => PartitionKey::Provider,
                "pool" => PartitionKey::Pool,
                _ => {
                    return Err(ConfigError::Env {
                        var: "BERTH_CLUSTER_PARTITION_KEY",
                        value: v,
                        expected: "is not one of zone, provider, pool, none",
                    });
                }
            };
        }
        if c.cluster.enabled && c.cluster.advertise_url.is_none() && c.listen.ip().is_unspecified()
        {
            return Err(ConfigError::Invalid {
                field: "cluster.advertise_url",
                message: format!(
                    "[cluster] is enabled and listen {} names no address the other daemons can reach; set [cluster] advertise_url (BERTH_ADVERTISE_URL)",
                    c.listen
                ),
            });
        }
        if c.cluster.lease_secs == 0 {
            return Err(ConfigError::Invalid {
                field: "cluster.lease_secs",
                message: "[cluster] lease_secs is 0; expected at least 1 second".into(),
            });
        }
        if c.server.tls_cert.is_some() != c.server.tls_key.is_some() {
            return Err(ConfigError::Invalid {
                field: "server.tls_key",
                message: "[server] tls_cert and tls_key go together; set both (or neither)".into(),
            });
        }
        Ok(c)
    }

    /// Parses a TOML document (`path` names it in errors): every field checked against the
    /// schema, errors with the field path and line:column.
    pub fn parse(path: &Path, text: &str) -> Result<Config> {
        let parse_error = |field: String, e: toml::de::Error| {
            let (line, column) = e.span().map_or((0, 0), |s| line_column(text, s.start));
            ConfigError::Parse {
                path: path.to_path_buf(),
                field,
                line,
                column,
                message: e.message().trim_end().to_owned(),
            }
        };
        let de = toml::Deserializer::parse(text).map_err(|e| parse_error(String::new(), e))?;
        serde_path_to_error::deserialize(de).map_err(|e| {
            let field = e.path().to_string();
            let field = if field == "." { String::new() } else { field };
            parse_error(field, e.into_inner())
        })
    }

    /// Whether the auth settings can serve: auth off (explicitly, or by giving no
    /// credentials) is refused unless `listen` is a loopback address.
    pub fn check_auth(&self) -> Result<()> {
        let none = self.auth.basic.is_empty()
            && self.auth.tokens.is_empty()
            && self.auth.read_tokens.is_empty();
        if (self.auth.disabled || none) && !self.listen.ip().is_loopback() {
            return Err(ConfigError::Invalid {
                field: "auth",
                message: format!(
                    "auth is off but {} is not a loopback address; configure [auth] basic users or tokens",
                    self.listen
                ),
            });
        }
        Ok(())
    }

    /// Whether requests need no credentials (after [`Config::check_auth`] allowed it).
    pub fn auth_off(&self) -> bool {
        self.auth.disabled
            || (self.auth.basic.is_empty()
                && self.auth.tokens.is_empty()
                && self.auth.read_tokens.is_empty())
    }
}

/// 1-based line and column (in characters) of byte `offset`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_file_and_env_layer() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("b.toml");
        std::fs::write(
            &f,
            "listen = \"127.0.0.1:9000\"\n[auth]\ntokens = [\"t1\"]\nread_tokens = [\"r1\", \"r2\"]\nbasic = [{user = \"v\", password = \"w\", read_only = true}]\n[plans]\nworkers = 3\nthreads = 4\nclaim_secs = 12\nnode = \"east-1\"\n[journal]\nmax_batch = 64\n[notify]\nrequire_https = true\n[server]\ntls_cert = \"c.pem\"\ntls_key = \"k.pem\"\n",
        )
        .unwrap();
        let env = |k: &str| match k {
            "BERTH_DATABASE_URL" => Some("sqlite::memory:".to_owned()),
            "BERTH_BASIC_AUTH" => Some("a:b".to_owned()),
            "BERTH_SNAPSHOT_EVERY" => Some("0".to_owned()),
            "BERTH_NOTIFY_CA_FILE" => Some("/etc/ca.pem".to_owned()),
            "BERTH_PG_SCHEMA" => Some("b1".to_owned()),
            "BERTH_READ_TOKENS" => Some("r3".to_owned()),
            "BERTH_READ_BASIC_AUTH" => Some("ro:pw".to_owned()),
            _ => None,
        };
        let c = Config::load(Some(&f), env).unwrap();
        assert_eq!(c.plans.threads, 4);
        let threads = |k: &str| (k == "BERTH_PLAN_THREADS").then(|| "2".to_owned());
        assert_eq!(Config::load(Some(&f), threads).unwrap().plans.threads, 2);
        let bad = |k: &str| (k == "BERTH_PLAN_THREADS").then(|| "many".to_owned());
        let e = Config::load(Some(&f), bad).unwrap_err().to_string();
        assert!(e.contains("BERTH_PLAN_THREADS"), "{e}");
        let bad = |k: &str| (k == "BERTH_PLAN_THREADS").then(|| "1000".to_owned());
        let e = Config::load(Some(&f), bad).unwrap_err().to_string();
        assert!(
            e.contains("[plans] threads is 1000; expected at most 256"),
            "{e}"
        );
        assert_eq!((c.journal.max_batch, c.journal.snapshot_every), (64, 0));
        assert_eq!(c.listen.port(), 9000);
        assert_eq!(c.database_url, "sqlite::memory:");
        assert_eq!(c.plans.workers, 3);
        assert_eq!(
            (c.plans.claim_secs, c.plans.node.as_deref()),
            (12, Some("east-1"))
        );
        assert_eq!(
            c.notify,
            Notify {
                ca_file: Some(PathBuf::from("/etc/ca.pem")),
                require_https: true,
                allow_private_callbacks: false,
            }
        );
        assert_eq!(c.pg_schema.as_deref(), Some("b1"));
        assert_eq!(c.server.tls_key, Some(PathBuf::from("k.pem")));
        assert!(!c.auth_off());
        assert_eq!(c.auth.tokens, ["t1"]);
        assert_eq!(c.auth.read_tokens, ["r1", "r2", "r3"]);
        assert_eq!(
            c.auth
                .basic
                .iter()
                .map(|b| (b.user.as_str(), b.read_only))
                .collect::<Vec<_>>(),
            [("v", true), ("a", false), ("ro", true)]
        );
        assert_eq!(Config::load(None, |_| None).unwrap(), Config::default());
    }

    #[test]
    fn cluster_settings_from_file_and_env() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.toml");
        std::fs::write(
            &f,
            "[cluster]\nenabled = true\nnode_id = \"a\"\nlease_secs = 5\nisolation = \"serializable\"\n",
        )
        .unwrap();
        let c = Config::load(Some(&f), |_| None).unwrap();
        assert_eq!(
            c.cluster,
            Cluster {
                enabled: true,
                node_id: Some("a".into()),
                advertise_url: None,
                lease_secs: 5,
                isolation: Isolation::Serializable,
                partition_key: PartitionKey::Zone,
            }
        );
        let env = |k: &str| match k {
            "BERTH_NODE_ID" => Some("b".to_owned()),
            "BERTH_ADVERTISE_URL" => Some("http://10.0.0.2:8091".to_owned()),
            "BERTH_LEASE_SECS" => Some("2".to_owned()),
            "BERTH_PG_ISOLATION" => Some("read-committed".to_owned()),
            "BERTH_CLUSTER_PARTITION_KEY" => Some("pool".to_owned()),
            _ => None,
        };
        let c = Config::load(Some(&f), env).unwrap();
        assert_eq!(c.cluster.node_id.as_deref(), Some("b"));
        assert_eq!(
            c.cluster.advertise_url.as_deref(),
            Some("http://10.0.0.2:8091")
        );
        assert_eq!(
            (c.cluster.lease_secs, c.cluster.isolation),
            (2, Isolation::ReadCommitted)
        );
        assert_eq!(c.cluster.partition_key, PartitionKey::Pool);
        let e = Config::load(None, |k| {
            (k == "BERTH_CLUSTER_PARTITION_KEY").then(|| "rack".into())
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "BERTH_CLUSTER_PARTITION_KEY `rack` is not one of zone, provider, pool, none"
        );
        std::fs::write(&f, "[cluster]\npartition_key = \"provider\"\n").unwrap();
        let c = Config::load(Some(&f), |_| None).unwrap();
        assert_eq!(c.cluster.partition_key, PartitionKey::Provider);
        std::fs::write(&f, "[cluster]\npartition_key = \"rack\"\n").unwrap();
        let e = Config::load(Some(&f), |_| None).unwrap_err().to_string();
        assert!(e.contains("cluster.partition_key (2:17)"), "{e}");
        let e = Config::load(None, |k| {
            (k == "BERTH_PG_ISOLATION").then(|| "snapshot".into())
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "BERTH_PG_ISOLATION `snapshot` is not one of read-committed, serializable"
        );
        let e = Config::load(None, |k| (k == "BERTH_LEASE_SECS").then(|| "0".into())).unwrap_err();
        assert!(e.to_string().contains("expected at least 1 second"), "{e}");
        let e = Config::load(None, |k| match k {
            "BERTH_CLUSTER" => Some("true".into()),
            "BERTH_LISTEN" => Some("0.0.0.0:8091".into()),
            _ => None,
        })
        .unwrap_err();
        assert!(e.to_string().contains("set [cluster] advertise_url"), "{e}");
        std::fs::write(&f, "[cluster]\nisolation = \"snapshot\"\n").unwrap();
        let e = Config::load(Some(&f), |_| None).unwrap_err().to_string();
        assert!(e.contains("cluster.isolation (2:13)"), "{e}");
    }

    #[test]
    fn bad_config_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("b.toml");
        std::fs::write(&f, "listn = 1\n").unwrap();
        assert!(Config::load(Some(&f), |_| None).is_err());
        assert!(Config::load(None, |k| (k == "BERTH_LISTEN").then(|| "nope".to_owned())).is_err());
        let half = Config::load(None, |k| {
            (k == "BERTH_TLS_CERT").then(|| "c.pem".to_owned())
        });
        assert!(half.unwrap_err().to_string().contains("tls_key"));
        let open = Config {
            listen: "0.0.0.0:8091".parse().unwrap(),
            ..Config::default()
        };
        let e = open.check_auth().unwrap_err();
        assert!(
            e.to_string().contains("0.0.0.0:8091 is not a loopback"),
            "{e}"
        );
        assert!(Config::default().check_auth().is_ok());
        assert!(Config::default().auth_off());
    }

    #[test]
    fn parse_errors_name_the_field_and_where_it_is() {
        let p = Path::new("b.toml");
        let e =
            Config::parse(p, "listen = \"127.0.0.1:1\"\n[plans]\nworkers = \"two\"\n").unwrap_err();
        let ConfigError::Parse {
            field,
            line,
            column,
            ..
        } = &e
        else {
            panic!("{e:?}")
        };
        assert_eq!((field.as_str(), *line, *column), ("plans.workers", 3, 11));
        assert_eq!(
            e.to_string(),
            "invalid config b.toml: plans.workers (3:11): invalid type: string \"two\", expected usize"
        );
        let e = Config::parse(p, "[journal]\nmax_bach = 3\n").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("journal")
                && msg.contains("(2:1)")
                && msg.contains("unknown field `max_bach`"),
            "{msg}"
        );
        let e = Config::parse(p, "listen = \"nowhere\"\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid config b.toml: listen (1:10): "),
            "{e}"
        );
        let e = Config::parse(p, "[server\n").unwrap_err();
        assert!(matches!(e, ConfigError::Parse { line: 1, .. }), "{e:?}");
        let e = Config::load(None, |k| {
            (k == "BERTH_MAX_BATCH").then(|| "lots".to_owned())
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "BERTH_MAX_BATCH `lots` is not a number");
    }
}
