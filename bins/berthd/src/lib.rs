//! The daemon's wiring as a library: config, store, services, API, graceful shutdown. The
//! `berthd` binary parses arguments and calls [`serve`]; the load test reuses it in process.

/// The configuration schema lives in `berth-config`, shared with `berth doctor`.
pub use berth_config as config;
mod conn;
pub mod forward;
pub mod loadtest;
pub mod openstack;
pub mod probe;
pub mod tls;

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use berth_inventory::Inventory;
use berth_service::{
    ClusterOptions, FileSource, InventoryReconciler, Notifier, NotifyConfig, Ownership,
    OwnershipOptions, PartitionKey, PlanConfig, PlanService, ProviderInfo, ReservationOptions,
    ReservationService, SystemClock, Trigger, WallClock,
};

pub use config::Config;

/// Auth for the API. No credentials and no explicit choice means auth off on loopback
/// (development) and a refusal to start elsewhere; `disabled` off loopback is refused.
pub fn api_auth(cfg: &Config) -> Result<berth_api::AuthConfig> {
    cfg.check_auth()?;
    if cfg.auth_off() {
        return Ok(berth_api::AuthConfig::disabled());
    }
    let basic = |keep: fn(&config::BasicUser) -> bool| {
        cfg.auth
            .basic
            .iter()
            .filter(|b| keep(b))
            .map(|b| (b.user.clone(), b.password.clone()))
            .collect()
    };
    Ok(berth_api::AuthConfig {
        disabled: false,
        basic: basic(|b| !b.read_only && !b.admin),
        tokens: cfg.auth.tokens.clone(),
        read_only_basic: basic(|b| b.read_only),
        read_only_tokens: cfg.auth.read_tokens.clone(),
        admin_basic: basic(|b| b.admin),
        admin_tokens: cfg.auth.admin_tokens.clone(),
    })
}

/// The example inventory served when no inventory is configured.
pub const BUNDLED_INVENTORY: &str = include_str!("../../../examples/inventory.yaml");

/// The datacenter the console places Heat templates on when none is configured, and a template
/// that fits it (seed 004's HA clusters).
pub const BUNDLED_TOPOLOGY: &str = include_str!("../../../examples/heat/room-rack-pm.yaml");
/// A Heat template placed on [`BUNDLED_TOPOLOGY`] by the console's example.
pub const BUNDLED_HEAT: &str = include_str!("../../../examples/heat/ha-clusters.yaml");

/// The console's placement site: the configured topology, or the bundled example room.
pub fn load_topology(cfg: &Config) -> Result<berth_api::ui::PlacementSite> {
    let (text, source) = match &cfg.topology {
        Some(p) => (
            std::fs::read_to_string(p)
                .with_context(|| format!("cannot read topology {}", p.display()))?,
            p.display().to_string(),
        ),
        None => (
            BUNDLED_TOPOLOGY.to_owned(),
            "bundled example room".to_owned(),
        ),
    };
    let topology = berth_topology::load(&text)
        .map_err(|e| anyhow::anyhow!("invalid topology {source}: {e}"))?;
    Ok(berth_api::ui::PlacementSite {
        topology: Arc::new(topology),
        source,
        example: BUNDLED_HEAT.to_owned(),
    })
}

/// Where the inventory is read, on start and on every reload: the configured file, or the
/// bundled example.
pub fn inventory_source(cfg: &Config) -> FileSource {
    match &cfg.inventory {
        Some(p) => FileSource::file(p),
        None => FileSource::text("bundled example inventory", BUNDLED_INVENTORY),
    }
}

/// The configured cloud selection policy with its operator files (`[cloud_policy]`), every
/// problem of every document reported at once; `None` when not configured.
pub fn load_cloud_policy(cfg: &Config) -> Result<Option<berth_engine::CloudPolicyInput>> {
    let Some(files) = &cfg.cloud_policy else {
        return Ok(None);
    };
    let read = |p: &std::path::Path, what: &str| {
        std::fs::read_to_string(p)
            .with_context(|| format!("cannot read the cloud policy's {what} {}", p.display()))
    };
    let policy = read(&files.policy, "policy")?;
    let owners = read(&files.owners, "owner file")?;
    let costs = read(&files.costs, "cost file")?;
    let workloads = files
        .workloads
        .as_deref()
        .map(|p| read(p, "workload file"))
        .transpose()?;
    berth_engine::CloudPolicyInput::parse_with(&policy, &owners, &costs, workloads.as_deref())
        .map(Some)
        .map_err(|e| anyhow::anyhow!("invalid [cloud_policy]: {e}"))
}

/// The provider of the pools of the inventory file: `<candidate-id>/inventory`.
pub const INVENTORY_PROVIDER: &str = berth_service::inventory::FILE_PROVIDER;

/// The provider of the inventory's pools (`<candidate>/inventory`), known to the Promise routes
/// without `add-provider`, with every candidate's flavors that have sizes
/// ([`berth_service::inventory::catalog`]).
pub fn inventory_provider(inv: &Inventory) -> ProviderInfo {
    berth_service::inventory::catalog(INVENTORY_PROVIDER, inv)
}

/// Serves the API on `listener` (bound to `cfg.listen` when `None`) until `shutdown` resolves,
/// then stops the timer and closes the store. The daemon's whole wiring.
pub async fn serve(
    cfg: Config,
    listener: Option<tokio::net::TcpListener>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let auth = api_auth(&cfg)?;
    if auth.disabled {
        tracing::warn!(listen = %cfg.listen, "auth is OFF (loopback development only)");
    }
    // Bad TLS or CA files stop the start before anything is opened.
    let tls = match (&cfg.server.tls_cert, &cfg.server.tls_key) {
        (Some(cert), Some(key)) => Some(tls::server_config(cert, key)?),
        _ => None,
    };
    let notifier = Notifier::try_spawn(NotifyConfig {
        require_https: cfg.notify.require_https,
        ca_file: cfg.notify.ca_file.clone(),
        allow_private_callbacks: cfg.notify.allow_private_callbacks,
        ..NotifyConfig::default()
    })
    .context("cannot start webhook delivery ([notify] ca_file)")?;
    let metrics = metrics_exporter_prometheus::PrometheusBuilder::new()
        .set_buckets_for_metric(
            metrics_exporter_prometheus::Matcher::Full("berth_plan_duration_seconds".into()),
            &[
                0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
            ],
        )
        .context("cannot configure metrics")?
        .install_recorder()
        .map_err(|e| tracing::warn!(error = %e, "metrics recorder not installed"))
        .ok();
    // A missing SQLite directory is created only where allowed, and said.
    let new_dir = cfg.missing_sqlite_dir()?;
    if let Some(dir) = &new_dir {
        tracing::info!(dir = %dir.display(), "creating the SQLite database's directory");
    }
    let store_options = berth_store::StoreOptions {
        create_dirs: new_dir.is_some(),
        pg_schema: cfg.pg_schema.clone(),
        pg_isolation: match cfg.cluster.isolation {
            config::Isolation::ReadCommitted => berth_store::Isolation::ReadCommitted,
            config::Isolation::Serializable => berth_store::Isolation::Serializable,
        },
        ..berth_store::StoreOptions::default()
    };
    let store = berth_store::open_with(&cfg.database_url, &store_options)
        .await
        .context("cannot open the store")?;
    tracing::info!(backend = ?store.backend(), "store open");
    let cloud_policy = load_cloud_policy(&cfg)?.map(Arc::new);
    let site = load_topology(&cfg)?;
    let key = match &cfg.credential_key {
        Some(hex) => {
            Some(berth_store::CredentialKey::from_hex(hex).context("invalid credential key")?)
        }
        None => None,
    };
    check_stored_credentials(&*store, key.as_ref()).await?;
    let clock: Arc<dyn WallClock> = Arc::new(SystemClock);
    let identity = cluster_identity(&cfg, listener.as_ref());
    let partition_key = match (&identity, cfg.cluster.partition_key) {
        (None, _) | (_, config::PartitionKey::None) => None,
        (Some(_), config::PartitionKey::Zone) => Some(PartitionKey::Zone),
        (Some(_), config::PartitionKey::Provider) => Some(PartitionKey::Provider),
        (Some(_), config::PartitionKey::Pool) => Some(PartitionKey::Pool),
    };
    // Partitioned: a lease per partition, held by the service; else one for the calendar.
    let ownership = identity
        .as_ref()
        .filter(|_| partition_key.is_none())
        .map(|c| {
            Ownership::new(
                Arc::clone(&store),
                Arc::clone(&clock),
                OwnershipOptions {
                    lease: cfg.stream.clone(),
                    node_id: c.node_id.clone(),
                    advertise_url: c.advertise_url.clone(),
                    lease_time: c.lease_time,
                },
            )
        });
    if let Some(o) = &ownership {
        // Before seeding: the lease holder seeds, the others find it seeded.
        match o.refresh().await {
            Ok(owner) => {
                tracing::info!(node = %o.options().node_id, owner = ?owner, "cluster lease read")
            }
            Err(e) => tracing::warn!(error = %e, "cannot read the calendar's lease yet"),
        }
    }
    let opts = ReservationOptions {
        stream: cfg.stream.clone(),
        policy: cfg.policy.clone().unwrap_or_default(),
        credential_key: key,
        max_batch: cfg.journal.max_batch.max(1),
        snapshot_every: cfg.journal.snapshot_every,
        // The inventory's catalog comes with its first load.
        static_providers: Vec::new(),
        ownership: ownership.clone(),
        partition_key,
        cluster: identity.clone().filter(|_| partition_key.is_some()),
    };
    let layout = match partition_key {
        Some(k) => format!("partitioned by {}", k.name()),
        None => "not partitioned".to_owned(),
    };
    let reservations =
        ReservationService::open(Arc::clone(&store), opts, Arc::clone(&clock), notifier)
            .await
            .with_context(|| {
                format!(
                    "cannot open the calendar ({layout}: `[cluster] partition_key` / BERTH_CLUSTER_PARTITION_KEY, `none` or off the cluster for one stream)"
                )
            })?;
    // The inventory is the source of truth: the calendar's `inventory` pools follow it from
    // the start (a lost race among daemons recomputes, so the change lands once). With
    // `[openstack]` the cloud is the source (its pools always reconciled), and its servers
    // boot through it; without, a discoverer answers `add-provider`'s Keystone endpoints.
    let cloud = openstack::cloud(&cfg)?;
    let source: Arc<dyn berth_service::InventorySource> = match &cloud {
        Some(os) => Arc::clone(os) as _,
        None => Arc::new(inventory_source(&cfg)),
    };
    let inventory = InventoryReconciler::start(
        Arc::clone(&reservations),
        source,
        cfg.seed_capacity || cloud.is_some(),
    )
    .await
    .context("cannot serve the inventory")?;
    match &cloud {
        Some(os) => reservations.set_vim(Arc::clone(os) as _),
        None => reservations.set_vim(openstack::discoverer()),
    }
    let plan_cfg = PlanConfig {
        workers: cfg.plans.workers.max(1),
        default_timeout: cfg.plans.default_timeout_secs,
        max_timeout: cfg.plans.max_timeout_secs,
        node: cfg
            .plans
            .node
            .clone()
            .or_else(|| cfg.cluster.node_id.clone())
            .unwrap_or_else(|| {
                let listen = listener.as_ref().and_then(|l| l.local_addr().ok());
                default_node(listen.unwrap_or(cfg.listen))
            }),
        claim_secs: cfg.plans.claim_secs.max(1),
        threads: cfg.plans.threads,
        cloud_policy,
        ..PlanConfig::default()
    };
    let plans = PlanService::start(
        Arc::clone(&store),
        inventory.shared(),
        Arc::clone(&reservations),
        clock,
        plan_cfg,
    )
    .await?;
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let leases = match &ownership {
        Some(o) => Some(o.spawn(stop_rx.clone())),
        None => reservations.spawn_leases(stop_rx.clone()),
    };
    let hangups = spawn_reload_on_hangup(Arc::clone(&inventory), stop_rx.clone());
    let cloud_loop = match (&cloud, &cfg.openstack) {
        (Some(os), Some(c)) => Some(os.spawn(
            Arc::clone(&reservations),
            Arc::clone(&inventory),
            openstack::refresh(c),
            stop_rx.clone(),
        )),
        _ => None,
    };
    let timer = reservations.spawn_timer(Duration::from_secs(1), stop_rx);
    let api = berth_api::ApiConfig {
        auth,
        body_limit: cfg.limits.body_bytes,
        request_timeout: Duration::from_secs(cfg.limits.request_timeout_secs.max(1)),
        max_in_flight: cfg.limits.max_in_flight,
    };
    // Open event streams end when shutdown begins, or graceful shutdown would wait on them.
    let (streams_stop, streams_stopped) = tokio::sync::watch::channel(false);
    let shutdown = async move {
        shutdown.await;
        let _ = streams_stop.send(true);
    };
    let request_timeout = api.request_timeout;
    let body_limit = api.body_limit;
    let mut app = berth_api::router(
        berth_api::AppState::new(Arc::clone(&reservations), plans, metrics)
            .with_placement_site(site)
            .with_inventory(inventory)
            .with_stop(streams_stopped),
        api,
    );
    let route = match (&ownership, &identity) {
        (Some(o), _) => Some(forward::Route::Lease(Arc::clone(o))),
        (None, Some(c)) if partition_key.is_some() => Some(forward::Route::Partitions {
            service: Arc::clone(&reservations),
            node_id: c.node_id.clone(),
        }),
        _ => None,
    };
    if let Some(route) = route {
        let forwarder = forward::Forwarder::new(route, request_timeout, body_limit)
            .context("cannot start request forwarding")?;
        app = app.layer(axum::middleware::from_fn_with_state(
            forwarder,
            forward::forward,
        ));
    }
    let listener = match listener {
        Some(l) => l,
        None => tokio::net::TcpListener::bind(cfg.listen)
            .await
            .with_context(|| format!("cannot listen on {}", cfg.listen))?,
    };
    let local = listener.local_addr().unwrap_or(cfg.listen);
    let limits = conn::ConnLimits {
        max_connections: cfg.limits.max_connections,
        header_timeout: Duration::from_secs(cfg.limits.header_timeout_secs.max(1)),
    };
    match tls {
        Some(tls) => {
            tracing::info!(listen = %local, "berthd serving HTTPS");
            let listener = tls::TlsListener::new(listener, tls).context("cannot serve TLS")?;
            conn::serve(listener, app, limits, shutdown).await;
        }
        None => {
            tracing::info!(listen = %local, "berthd serving");
            conn::serve(listener, app, limits, shutdown).await;
        }
    }
    tracing::info!("shutting down");
    // The next start restores this and replays nothing; failing it only costs a longer replay.
    // Written before the lease is released below: only the holder writes the stream.
    match reservations.snapshot().await {
        Ok(Some(seq)) => tracing::info!(seq, "calendar snapshot written"),
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, "cannot write a calendar snapshot at shutdown"),
    }
    let _ = stop_tx.send(true);
    let _ = timer.await;
    let _ = hangups.await;
    if let Some(l) = cloud_loop {
        let _ = l.await;
    }
    if let Some(leases) = leases {
        let _ = leases.await;
    }
    store.close().await.context("cannot close the store")?;
    Ok(())
}

/// This daemon's identity in leases when `[cluster]` is enabled: node id `<host>-<pid>` and
/// URL `http(s)://<listen address>` unless configured.
fn cluster_identity(
    cfg: &Config,
    listener: Option<&tokio::net::TcpListener>,
) -> Option<ClusterOptions> {
    if !cfg.cluster.enabled {
        return None;
    }
    let node_id = cfg.cluster.node_id.clone().unwrap_or_else(|| {
        let host = std::fs::read_to_string("/etc/hostname")
            .ok()
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "berthd".to_owned());
        format!("{host}-{}", std::process::id())
    });
    let advertise_url = cfg.cluster.advertise_url.clone().unwrap_or_else(|| {
        let addr = listener
            .and_then(|l| l.local_addr().ok())
            .unwrap_or(cfg.listen);
        let scheme = if cfg.server.tls_cert.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{addr}")
    });
    Some(ClusterOptions {
        node_id,
        advertise_url,
        lease_time: Duration::from_secs(cfg.cluster.lease_secs.max(1)),
    })
}

/// Reloads and reconciles the inventory on every SIGHUP until `stop` turns true. A reload
/// that fails is logged by the reconciler and changes nothing.
fn spawn_reload_on_hangup(
    inventory: Arc<InventoryReconciler>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut hup = match signal(SignalKind::hangup()) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for SIGHUP; reload the inventory with POST /admin/inventory/reload");
                    return;
                }
            };
            loop {
                tokio::select! {
                    got = hup.recv() => {
                        if got.is_none() {
                            return;
                        }
                        tracing::info!("SIGHUP: reloading the inventory");
                        // Refusals are logged (and kept for status) by the reconciler.
                        let _ = inventory.reload(Trigger::Signal).await;
                    }
                    _ = stop.changed() => return,
                }
            }
        }
        #[cfg(not(unix))]
        {
            let _ = (inventory, stop.changed().await);
        }
    })
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

/// Every stored provider secret opens with the configured key: a wrong or missing key stops
/// the start here, naming the provider, instead of failing at the secret's first use.
async fn check_stored_credentials(
    store: &dyn berth_store::Store,
    key: Option<&berth_store::CredentialKey>,
) -> anyhow::Result<()> {
    let providers = store
        .list_providers()
        .await
        .context("cannot list the stored providers")?;
    for p in providers.iter().filter(|p| p.has_credentials) {
        let Some(key) = key else {
            anyhow::bail!(
                "provider `{}` has stored credentials but no credential key is configured; expected `credential_key` (or BERTH_CREDENTIAL_KEY) set to the key they were stored with",
                p.name
            );
        };
        store
            .provider_credentials(&p.name, key)
            .await
            .with_context(|| {
                format!(
                    "stored secrets do not open with the configured credential key (provider `{}`)",
                    p.name
                )
            })?;
    }
    Ok(())
}

/// A daemon's default name in the plan queue: host name and listen address, stable across
/// restarts (a restarted daemon releases its old claims and resumes those plans at once) and
/// distinct for daemons of one host; with an ephemeral port, the process id instead.
fn default_node(listen: std::net::SocketAddr) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "berthd".to_owned());
    if listen.port() == 0 {
        format!("{host}:pid{}", std::process::id())
    } else {
        format!("{host}@{listen}")
    }
}

#[cfg(test)]
mod tests;
