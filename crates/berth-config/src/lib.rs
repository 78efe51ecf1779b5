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
    /// More than one problem: each one, the file's in document order, then the environment's
    /// and the checks across fields.
    #[error("{} problems in the config: {}", problems.len(), join(problems))]
    Several {
        /// Every problem, none of them `Several`.
        problems: Vec<ConfigError>,
    },
}

impl ConfigError {
    /// Every problem this error stands for: itself, or each of `Several`.
    #[must_use]
    pub fn problems(&self) -> &[ConfigError] {
        match self {
            ConfigError::Several { problems } => problems,
            one => std::slice::from_ref(one),
        }
    }

    /// One error for a list of problems (`None` when there are none).
    fn from_problems(mut problems: Vec<ConfigError>) -> Option<ConfigError> {
        match problems.len() {
            0 => None,
            1 => problems.pop(),
            _ => Some(ConfigError::Several { problems }),
        }
    }
}

fn join(problems: &[ConfigError]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
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
    /// The embedded database's files.
    pub store: Store,
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
    /// The calendar's pools of the inventory follow it: reconciled at start, on SIGHUP and on
    /// `POST /admin/inventory/reload` (off: the inventory only serves plans).
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
    /// A cloud selection policy (seed 002) applied to every homing plan's demands it names.
    pub cloud_policy: Option<CloudPolicy>,
    /// A real OpenStack underneath: when set, the inventory is read from its Placement and
    /// compute API instead of the inventory file, claims are written back and servers booted.
    pub openstack: Option<OpenStack>,
}

/// `[openstack]`: the cloud Berth reads its inventory from, claims in and boots on.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OpenStack {
    /// Keystone's v3 URL (`http://keystone:5000/v3`).
    pub auth_url: String,
    /// User name (password auth).
    pub username: Option<String>,
    /// Password (password auth; `BERTH_OPENSTACK_PASSWORD`).
    pub password: Option<String>,
    /// The user's domain.
    #[serde(default = "default_domain")]
    pub user_domain: String,
    /// Project the token is scoped to (password auth).
    pub project: Option<String>,
    /// The project's domain.
    #[serde(default = "default_domain")]
    pub project_domain: String,
    /// Application credential id (instead of a password).
    pub application_credential_id: Option<String>,
    /// Application credential secret (`BERTH_OPENSTACK_APPLICATION_CREDENTIAL_SECRET`).
    pub application_credential_secret: Option<String>,
    /// Region of the endpoints (default: the catalog's first).
    pub region: Option<String>,
    /// Interface of the endpoints: `public`, `internal` or `admin`.
    #[serde(default = "default_interface")]
    pub interface: String,
    /// Provider name of its pools and candidates (`inventory_provider: openstack`).
    #[serde(default = "default_os_provider")]
    pub provider: String,
    /// Candidates' `cloud_owner`.
    pub cloud_owner: Option<String>,
    /// Seconds between inventory refreshes (each reconciled with the calendar).
    #[serde(default = "default_refresh")]
    pub refresh_secs: u64,
    /// Seconds a boot may take to go ACTIVE (and a delete to finish).
    #[serde(default = "default_boot_deadline")]
    pub boot_deadline_secs: u64,
    /// Seconds one HTTP request to the cloud may take.
    #[serde(default = "default_os_timeout")]
    pub request_timeout_secs: u64,
    /// Image booted when `create-instance` names none.
    pub default_image: Option<String>,
}

fn default_domain() -> String {
    "Default".into()
}
fn default_interface() -> String {
    "public".into()
}
fn default_os_provider() -> String {
    "openstack".into()
}
fn default_refresh() -> u64 {
    60
}
fn default_boot_deadline() -> u64 {
    120
}
fn default_os_timeout() -> u64 {
    30
}

impl OpenStack {
    /// The problems of its fields: one way to authenticate, complete; a known interface;
    /// positive periods.
    fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if !(self.auth_url.starts_with("http://") || self.auth_url.starts_with("https://")) {
            out.push((
                "openstack.auth_url",
                format!(
                    "[openstack] auth_url `{}` is not an http(s) URL; expected Keystone's v3 URL such as http://keystone:5000/v3",
                    self.auth_url
                ),
            ));
        }
        let password = self.username.is_some() || self.password.is_some();
        let appcred = self.application_credential_id.is_some()
            || self.application_credential_secret.is_some();
        match (password, appcred) {
            (true, true) => out.push((
                "openstack.application_credential_id",
                "[openstack] has both a username/password and an application credential; expected one of them".into(),
            )),
            (false, false) => out.push((
                "openstack.username",
                "[openstack] has no credentials; expected username, password and project, or application_credential_id and application_credential_secret".into(),
            )),
            (true, false) => {
                for (field, v) in [
                    ("openstack.username", &self.username),
                    ("openstack.password", &self.password),
                    ("openstack.project", &self.project),
                ] {
                    if v.is_none() {
                        out.push((field, format!("[openstack] {} is missing; password auth needs username, password and project", &field[10..])));
                    }
                }
            }
            (false, true) => {
                for (field, v) in [
                    ("openstack.application_credential_id", &self.application_credential_id),
                    ("openstack.application_credential_secret", &self.application_credential_secret),
                ] {
                    if v.is_none() {
                        out.push((field, format!("[openstack] {} is missing; application credential auth needs its id and secret", &field[10..])));
                    }
                }
            }
        }
        if !matches!(self.interface.as_str(), "public" | "internal" | "admin") {
            out.push((
                "openstack.interface",
                format!(
                    "[openstack] interface `{}` is unknown; expected one of public, internal, admin",
                    self.interface
                ),
            ));
        }
        for (field, v) in [
            ("openstack.refresh_secs", self.refresh_secs),
            ("openstack.boot_deadline_secs", self.boot_deadline_secs),
            ("openstack.request_timeout_secs", self.request_timeout_secs),
        ] {
            if v == 0 {
                out.push((
                    field,
                    format!(
                        "[openstack] {} is 0; expected at least 1 second",
                        &field[10..]
                    ),
                ));
            }
        }
        out
    }
}

/// The cloud selection policy and the operator files it needs (YAML or JSON paths), as
/// `berth solve --cloud-policy`, `--cloud-owners`, `--cloud-costs` and `--cloud-workloads`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CloudPolicy {
    /// The policy.
    pub policy: PathBuf,
    /// Which intents each cloud owner realizes, and how.
    pub owners: PathBuf,
    /// Workload deployment costs.
    pub costs: PathBuf,
    /// What each demand places: instance types and reserved resources.
    pub workloads: Option<PathBuf>,
}

/// Settings of the embedded (SQLite) store.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Store {
    /// Create the SQLite file's missing directories. Off: a missing directory is refused
    /// (a mistyped path would otherwise start an empty calendar elsewhere), except the
    /// default data directory ([`DEFAULT_DATA_DIR`]).
    pub create_dirs: bool,
}

/// The directory the default `database_url` keeps the SQLite file in, relative to the
/// working directory; berthd creates it when missing.
pub const DEFAULT_DATA_DIR: &str = "./berth-data";

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
    /// Bearer tokens that may read, write and call the admin routes (`/admin/...`).
    pub admin_tokens: Vec<String>,
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
    /// May also call the admin routes (`/admin/...`); not with `read_only`.
    #[serde(default)]
    pub admin: bool,
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
            database_url: format!("sqlite://{DEFAULT_DATA_DIR}/berth.db"),
            store: Store::default(),
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
            cloud_policy: None,
            openstack: None,
        }
    }
}

impl Config {
    /// Defaults, then `file` (TOML), then the environment `env` gives, then the checks across
    /// fields. Every problem is reported, not only the first ([`ConfigError::problems`]).
    pub fn load(file: Option<&Path>, env: impl Fn(&str) -> Option<String>) -> Result<Config> {
        let mut problems = Vec::new();
        let mut c = match file {
            Some(p) => match std::fs::read_to_string(p) {
                Ok(text) => {
                    let (c, mut found) = Config::parse_all(p, &text);
                    problems.append(&mut found);
                    c
                }
                Err(source) => {
                    return Err(ConfigError::Read {
                        path: p.to_path_buf(),
                        source,
                    });
                }
            },
            None => Config::default(),
        };
        let mut e = Env {
            get: &env,
            problems: &mut problems,
        };
        if let Some(v) = e.value("BERTH_LISTEN", "is not an address like 127.0.0.1:8091") {
            c.listen = v;
        }
        if let Some(v) = env("BERTH_DATABASE_URL") {
            c.database_url = v;
        }
        if let Some(v) = env("BERTH_PG_SCHEMA") {
            c.pg_schema = Some(v);
        }
        if let Some(v) = env("BERTH_STORE_CREATE_DIRS") {
            c.store.create_dirs = flag(&v);
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
            c.notify.allow_private_callbacks = flag(&v);
        }
        if let Some(v) = env("BERTH_NOTIFY_REQUIRE_HTTPS") {
            c.notify.require_https = flag(&v);
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
            c.auth.disabled = flag(&v);
        }
        let list = |v: String| -> Vec<String> {
            v.split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
                .collect()
        };
        if let Some(v) = env("BERTH_TOKENS") {
            c.auth.tokens.extend(list(v));
        }
        if let Some(v) = env("BERTH_READ_TOKENS") {
            c.auth.read_tokens.extend(list(v));
        }
        if let Some(v) = env("BERTH_ADMIN_TOKENS") {
            c.auth.admin_tokens.extend(list(v));
        }
        for (var, read_only, admin) in [
            ("BERTH_BASIC_AUTH", false, false),
            ("BERTH_READ_BASIC_AUTH", true, false),
            ("BERTH_ADMIN_BASIC_AUTH", false, true),
        ] {
            let Some(v) = env(var) else { continue };
            for pair in v.split(',').filter(|p| !p.is_empty()) {
                match pair.split_once(':') {
                    Some((user, password)) => c.auth.basic.push(BasicUser {
                        user: user.into(),
                        password: password.into(),
                        read_only,
                        admin,
                    }),
                    None => {
                        e.problems.push(ConfigError::Env {
                            var,
                            value: "(hidden)".into(),
                            expected: "is not user:password[,user:password]",
                        });
                        break;
                    }
                }
            }
        }
        if let Some(v) = e.size("BERTH_PLAN_WORKERS") {
            c.plans.workers = v;
        }
        if let Some(v) = e.size("BERTH_PLAN_THREADS") {
            c.plans.threads = v;
        }
        if let Some(v) = e.number("BERTH_PLAN_CLAIM_SECS") {
            c.plans.claim_secs = v;
        }
        if let Some(v) = env("BERTH_PLAN_NODE") {
            c.plans.node = Some(v);
        }
        if let Some(v) = e.size("BERTH_MAX_IN_FLIGHT") {
            c.limits.max_in_flight = v;
        }
        if let Some(v) = e.size("BERTH_MAX_CONNECTIONS") {
            c.limits.max_connections = v;
        }
        if let Some(v) = e.number("BERTH_HEADER_TIMEOUT_SECS") {
            c.limits.header_timeout_secs = v;
        }
        if let Some(v) = e.number("BERTH_REQUEST_TIMEOUT_SECS") {
            c.limits.request_timeout_secs = v;
        }
        if let Some(v) = e.size("BERTH_MAX_BATCH") {
            c.journal.max_batch = v;
        }
        if let Some(v) = e.number("BERTH_SNAPSHOT_EVERY") {
            c.journal.snapshot_every = v;
        }
        if let Some(v) = env("BERTH_LOG") {
            c.log.filter = v;
        }
        if let Some(v) = env("BERTH_CLUSTER") {
            c.cluster.enabled = flag(&v);
        }
        if let Some(v) = env("BERTH_NODE_ID") {
            c.cluster.node_id = Some(v);
        }
        if let Some(v) = env("BERTH_ADVERTISE_URL") {
            c.cluster.advertise_url = Some(v);
        }
        if let Some(v) = e.number("BERTH_LEASE_SECS") {
            c.cluster.lease_secs = v;
        }
        if let Some(v) = env("BERTH_PG_ISOLATION") {
            match v.as_str() {
                "read-committed" => c.cluster.isolation = Isolation::ReadCommitted,
                "serializable" => c.cluster.isolation = Isolation::Serializable,
                _ => e.problems.push(ConfigError::Env {
                    var: "BERTH_PG_ISOLATION",
                    value: v,
                    expected: "is not one of read-committed, serializable",
                }),
            }
        }
        if let Some(v) = env("BERTH_CLUSTER_PARTITION_KEY") {
            match v.as_str() {
                "none" => c.cluster.partition_key = PartitionKey::None,
                "zone" => c.cluster.partition_key = PartitionKey::Zone,
                "provider" => c.cluster.partition_key = PartitionKey::Provider,
                "pool" => c.cluster.partition_key = PartitionKey::Pool,
                _ => e.problems.push(ConfigError::Env {
                    var: "BERTH_CLUSTER_PARTITION_KEY",
                    value: v,
                    expected: "is not one of zone, provider, pool, none",
                }),
            }
        }
        if let Some(os) = &mut c.openstack {
            if let Some(v) = env("BERTH_OPENSTACK_PASSWORD") {
                os.password = Some(v);
            }
            if let Some(v) = env("BERTH_OPENSTACK_APPLICATION_CREDENTIAL_SECRET") {
                os.application_credential_secret = Some(v);
            }
        }
        problems.extend(c.cross_checks());
        match ConfigError::from_problems(problems) {
            None => Ok(c),
            Some(e) => Err(e),
        }
    }

    /// The checks across fields, after the file and the environment.
    fn cross_checks(&self) -> Vec<ConfigError> {
        let mut out = Vec::new();
        let mut invalid = |field: &'static str, message: String| {
            out.push(ConfigError::Invalid { field, message });
        };
        if self.plans.threads > MAX_PLAN_THREADS {
            invalid(
                "plans.threads",
                format!(
                    "[plans] threads is {}; expected at most {MAX_PLAN_THREADS} (0: one per core)",
                    self.plans.threads
                ),
            );
        }
        for (field, message) in self.openstack.iter().flat_map(OpenStack::problems) {
            invalid(field, message);
        }
        if self.plans.claim_secs == 0 {
            invalid(
                "plans.claim_secs",
                "[plans] claim_secs is 0; expected at least 1 second".into(),
            );
        }
        if self.cluster.enabled
            && self.cluster.advertise_url.is_none()
            && self.listen.ip().is_unspecified()
        {
            invalid(
                "cluster.advertise_url",
                format!(
                    "[cluster] is enabled and listen {} names no address the other daemons can reach; set [cluster] advertise_url (BERTH_ADVERTISE_URL)",
                    self.listen
                ),
            );
        }
        if self.cluster.lease_secs == 0 {
            invalid(
                "cluster.lease_secs",
                "[cluster] lease_secs is 0; expected at least 1 second".into(),
            );
        }
        if self.server.tls_cert.is_some() != self.server.tls_key.is_some() {
            invalid(
                "server.tls_key",
                "[server] tls_cert and tls_key go together; set both (or neither)".into(),
            );
        }
        out
    }

    /// Parses a TOML document (`path` names it in errors): every field checked against the
    /// schema; every problem reported with its field path and line:column.
    pub fn parse(path: &Path, text: &str) -> Result<Config> {
        let (c, problems) = Config::parse_all(path, text);
        match ConfigError::from_problems(problems) {
            None => Ok(c),
            Some(e) => Err(e),
        }
    }

    /// The document's settings over the defaults, and every problem found: syntax errors
    /// (the parser recovers and goes on), then each field that does not fit the schema. A
    /// field found wrong is dropped (its default stands) and the rest is read again, so one
    /// mistake does not hide the next.
    fn parse_all(path: &Path, text: &str) -> (Config, Vec<ConfigError>) {
        let problem = |field: String, e: &toml::de::Error| {
            let (line, column) = e.span().map_or((0, 0), |s| line_column(text, s.start));
            ConfigError::Parse {
                path: path.to_path_buf(),
                field,
                line,
                column,
                message: e.message().trim_end().to_owned(),
            }
        };
        let (original, syntax) = toml::de::DeTable::parse_recoverable(text);
        let mut problems: Vec<ConfigError> =
            syntax.iter().map(|e| problem(String::new(), e)).collect();
        let syntax_lines: Vec<usize> = problems.iter().filter_map(line_of).collect();
        let mut tree = original.clone();
        let mut schema = Vec::new();
        let config = loop {
            let de = toml::de::Deserializer::from(tree.clone());
            match serde_path_to_error::deserialize::<_, Config>(de) {
                Ok(c) => break c,
                Err(e) => {
                    let serde_path = e.path().to_string();
                    let e = e.into_inner();
                    let span = e.span();
                    let field = span
                        .clone()
                        .and_then(|s| locate(original.get_ref(), &s))
                        .unwrap_or_else(|| {
                            if serde_path == "." {
                                String::new()
                            } else {
                                serde_path
                            }
                        });
                    schema.push(problem(field, &e));
                    // A problem nothing can be dropped for ends the reading: the defaults
                    // stand for the whole document.
                    let dropped = span.is_some_and(|s| drop_at(tree.get_mut(), &s));
                    if !dropped || schema.len() >= MAX_PROBLEMS {
                        break Config::default();
                    }
                }
            }
        };
        // A field on a line the parser already found broken is that error's echo.
        schema.retain(|p| line_of(p).is_none_or(|l| !syntax_lines.contains(&l)));
        problems.append(&mut schema);
        problems.sort_by_key(|p| match p {
            ConfigError::Parse { line, column, .. } => (*line, *column),
            _ => (0, 0),
        });
        (config, problems)
    }

    /// Whether the auth settings can serve: auth off (explicitly, or by giving no
    /// credentials) is refused unless `listen` is a loopback address.
    pub fn check_auth(&self) -> Result<()> {
        if let Some(message) = self.placeholder_secrets().into_iter().next() {
            return Err(ConfigError::Invalid {
                field: "auth",
                message,
            });
        }
        if let Some(u) = self.auth.basic.iter().find(|u| u.admin && u.read_only) {
            return Err(ConfigError::Invalid {
                field: "auth.basic",
                message: format!(
                    "user `{}` is both `admin` and `read_only`; expected one of them",
                    u.user
                ),
            });
        }
        let none = self.auth.basic.is_empty()
            && self.auth.tokens.is_empty()
            && self.auth.read_tokens.is_empty()
            && self.auth.admin_tokens.is_empty();
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

    /// Every credential that is the deploy files' placeholder, or a well-known default on a
    /// non-loopback listener, as a message naming it; [`Config::check_auth`] refuses the first.
    #[must_use]
    pub fn placeholder_secrets(&self) -> Vec<String> {
        let exposed = !self.listen.ip().is_loopback();
        let bad = |secret: &str| {
            is_placeholder(secret)
                || (exposed && WEAK_DEFAULTS.contains(&secret.to_ascii_lowercase().as_str()))
        };
        let mut out = Vec::new();
        for b in &self.auth.basic {
            if bad(&b.password) {
                out.push(format!(
                    "basic user `{}` has the placeholder password `{}`; generate one (`openssl rand -base64 24`)",
                    b.user, b.password
                ));
            }
        }
        for (list, name) in [
            (&self.auth.tokens, "tokens"),
            (&self.auth.read_tokens, "read_tokens"),
            (&self.auth.admin_tokens, "admin_tokens"),
        ] {
            for t in list.iter().filter(|t| bad(t)) {
                out.push(format!(
                    "[auth] {name} holds the placeholder `{t}`; generate one (`openssl rand -hex 32`)"
                ));
            }
        }
        out
    }

    /// The SQLite file `database_url` names; `None` for PostgreSQL and in-memory SQLite.
    #[must_use]
    pub fn sqlite_file(&self) -> Option<PathBuf> {
        sqlite_file(&self.database_url)
    }

    /// The SQLite file's directory when it does not exist and berthd will create it
    /// (`Ok(None)`: nothing to create). Refused unless it is the default data directory or
    /// `[store] create_dirs` is on: a mistyped path would start an empty calendar elsewhere.
    pub fn missing_sqlite_dir(&self) -> Result<Option<PathBuf>> {
        let Some(file) = self.sqlite_file() else {
            return Ok(None);
        };
        let dir = match file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => return Ok(None),
        };
        if dir.exists() {
            return Ok(None);
        }
        let plain = |p: &Path| -> PathBuf {
            p.components()
                .filter(|c| !matches!(c, std::path::Component::CurDir))
                .collect()
        };
        if self.store.create_dirs || plain(&dir) == plain(Path::new(DEFAULT_DATA_DIR)) {
            return Ok(Some(dir));
        }
        Err(ConfigError::Invalid {
            field: "database_url",
            message: format!(
                "directory {} of database_url {} does not exist; expected an existing directory: create it, or set [store] create_dirs = true (BERTH_STORE_CREATE_DIRS=1) to have berthd create it",
                dir.display(),
                self.database_url
            ),
        })
    }

    /// Whether requests need no credentials (after [`Config::check_auth`] allowed it).
    pub fn auth_off(&self) -> bool {
        self.auth.disabled
            || (self.auth.basic.is_empty()
                && self.auth.tokens.is_empty()
                && self.auth.read_tokens.is_empty()
                && self.auth.admin_tokens.is_empty())
    }
}

/// The file of a `sqlite:` URL (`sqlite://PATH`, `sqlite:PATH`, a `?query` after it);
/// `None` for other schemes and in-memory databases.
#[must_use]
pub fn sqlite_file(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite:")?;
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let path = path.strip_prefix("//").unwrap_or(path);
    let memory =
        path.is_empty() || path == ":memory:" || query.split('&').any(|kv| kv == "mode=memory");
    (!memory).then(|| PathBuf::from(path))
}

/// Most problems one document reports (each costs a pass over it).
const MAX_PROBLEMS: usize = 100;

/// `1`, `true` and `yes` turn a `BERTH_*` switch on; anything else turns it off.
fn flag(v: &str) -> bool {
    matches!(v, "1" | "true" | "yes")
}

fn line_of(p: &ConfigError) -> Option<usize> {
    match p {
        ConfigError::Parse { line, .. } if *line > 0 => Some(*line),
        _ => None,
    }
}

/// Reads `BERTH_*` variables, keeping every malformed one as a problem.
struct Env<'a, F: Fn(&str) -> Option<String>> {
    get: &'a F,
    problems: &'a mut Vec<ConfigError>,
}

impl<F: Fn(&str) -> Option<String>> Env<'_, F> {
    fn value<T: std::str::FromStr>(
        &mut self,
        var: &'static str,
        expected: &'static str,
    ) -> Option<T> {
        let v = (self.get)(var)?;
        match v.parse() {
            Ok(x) => Some(x),
            Err(_) => {
                self.problems.push(ConfigError::Env {
                    var,
                    value: v,
                    expected,
                });
                None
            }
        }
    }

    fn number(&mut self, var: &'static str) -> Option<u64> {
        self.value(var, "is not a number")
    }

    fn size(&mut self, var: &'static str) -> Option<usize> {
        let n = self.number(var)?;
        match usize::try_from(n) {
            Ok(n) => Some(n),
            Err(_) => {
                self.problems.push(ConfigError::Env {
                    var,
                    value: n.to_string(),
                    expected: "is too large",
                });
                None
            }
        }
    }
}

type Span = std::ops::Range<usize>;

/// The field path (`auth.basic[1]`) of the deepest node whose key or value spans `span`: for
/// a key (an unknown field) the table holding it, for a value the value itself. (An array of
/// tables spans like its first table: the deepest match is the table.)
fn locate(table: &toml::de::DeTable<'_>, span: &Span) -> Option<String> {
    fn in_value(v: &toml::de::DeValue<'_>, span: &Span, path: &str) -> Option<String> {
        match v {
            toml::de::DeValue::Table(t) => in_table(t, span, path),
            toml::de::DeValue::Array(a) => a.iter().enumerate().find_map(|(i, x)| {
                let p = format!("{path}[{i}]");
                in_value(x.get_ref(), span, &p).or_else(|| (x.span() == *span).then_some(p))
            }),
            _ => None,
        }
    }
    fn in_table(t: &toml::de::DeTable<'_>, span: &Span, path: &str) -> Option<String> {
        t.iter().find_map(|(k, v)| {
            let p = if path.is_empty() {
                k.get_ref().to_string()
            } else {
                format!("{path}.{}", k.get_ref())
            };
            if k.span() == *span {
                return Some(path.to_owned());
            }
            in_value(v.get_ref(), span, &p).or_else(|| (v.span() == *span).then_some(p))
        })
    }
    in_table(table, span, "")
}

/// Drops the deepest entry whose key or value spans `span` (or the array element that
/// does), so the document can be read again without it; false when there is none.
fn drop_at(table: &mut toml::de::DeTable<'_>, span: &Span) -> bool {
    fn in_value(v: &mut toml::de::DeValue<'_>, span: &Span) -> bool {
        match v {
            toml::de::DeValue::Table(t) => drop_at(t, span),
            toml::de::DeValue::Array(a) => {
                if a.iter_mut().any(|x| in_value(x.get_mut(), span)) {
                    return true;
                }
                let Some(i) = a.iter().position(|x| x.span() == *span) else {
                    return false;
                };
                let mut kept = toml::de::DeArray::new();
                for (j, x) in std::mem::replace(a, toml::de::DeArray::new())
                    .into_iter()
                    .enumerate()
                {
                    if j != i {
                        kept.push(x);
                    }
                }
                *a = kept;
                true
            }
            _ => false,
        }
    }
    if table
        .iter_mut()
        .any(|(k, v)| k.span() != *span && in_value(v.get_mut(), span))
    {
        return true;
    }
    let hit = table
        .iter()
        .find(|(k, v)| k.span() == *span || v.span() == *span)
        .map(|(k, _)| k.get_ref().to_string());
    hit.is_some_and(|key| table.remove(key.as_str()).is_some())
}

/// 1-based line and column (in characters) of byte `offset`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

/// What `deploy/` ships where a secret goes: berthd never starts with it.
pub const PLACEHOLDER_SECRET: &str = "REPLACE-WITH-A-GENERATED-SECRET";

/// Defaults from examples and habit, refused where others can reach the daemon.
const WEAK_DEFAULTS: &[&str] = &["change-me", "changeme", "password", "admin", "secret"];

fn is_placeholder(secret: &str) -> bool {
    secret.to_ascii_uppercase().starts_with("REPLACE-WITH")
}

#[cfg(test)]
mod tests;
