//! [`OpenStack`]: a cloud as Berth's inventory source (an [`InventorySource`] reconciled like
//! the inventory file), the writer of its claims, and its VIM (a [`Vim`] that boots servers).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use berth_calendar::{Amounts, Dimension};
use berth_inventory::StaticProvider;
use berth_service::{
    BootRequest, Booted, Discovered, Discovery, InventoryReconciler, InventorySource,
    LoadedInventory, ReservationService, ServiceError, Trigger, Vim, VimFuture,
};

use crate::boot;
use crate::claims;
use crate::client::{Auth, Credentials, Session};
use crate::cloud::{Naming, Snapshot};
use crate::error::OpenStackError;
use crate::fetch;
use crate::writeback;

/// A cloud underneath Berth.
#[derive(Debug)]
pub struct OpenStack {
    session: Session,
    naming: Naming,
    /// The consumer UUIDs' scope (the calendar stream).
    scope: String,
    /// How long a boot or a delete may take.
    deadline: Duration,
    /// Image booted when a request names none.
    default_image: Option<String>,
    /// The calendar whose claims are synced before a boot (set by [`OpenStack::spawn`]).
    calendar: std::sync::OnceLock<std::sync::Weak<ReservationService>>,
}

/// An error of the cloud as the service's: unreachable or failing is `Unavailable`, a bad
/// request `Invalid`.
pub fn service_error(e: OpenStackError) -> ServiceError {
    match e {
        OpenStackError::Config { field, message } => ServiceError::Invalid {
            message: format!("{field}: {message}"),
            field: None,
        },
        other => ServiceError::Unavailable {
            message: format!("openstack: {other}"),
        },
    }
}

impl OpenStack {
    /// The cloud `auth` reaches, serving provider `naming.provider`; `scope` names Berth's
    /// consumers (the calendar stream), `deadline` bounds boots and deletes.
    pub fn new(
        auth: Auth,
        mut naming: Naming,
        scope: impl Into<String>,
        deadline: Duration,
    ) -> Result<OpenStack, OpenStackError> {
        if naming.endpoint.is_none() {
            naming.endpoint = Some(auth.auth_url.clone());
        }
        if naming.tenant.is_none()
            && let Credentials::Password { project, .. } = &auth.credentials
        {
            naming.tenant = Some(project.clone());
        }
        Ok(OpenStack {
            session: Session::new(auth)?,
            naming,
            scope: scope.into(),
            deadline,
            default_image: None,
            calendar: std::sync::OnceLock::new(),
        })
    }

    /// Boots `image` when a request names none.
    #[must_use]
    pub fn with_default_image(mut self, image: Option<String>) -> OpenStack {
        self.default_image = image;
        self
    }

    /// The session (for tests and tools that call the cloud directly).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The provider name.
    pub fn provider(&self) -> &str {
        &self.naming.provider
    }

    /// Reads the cloud now.
    pub async fn snapshot(&self) -> Result<Snapshot, OpenStackError> {
        fetch::snapshot(&self.session).await
    }

    /// The inventory a snapshot gives.
    pub fn loaded(&self, snap: &Snapshot) -> LoadedInventory {
        let candidates = snap.candidates(&self.naming);
        let n = candidates.len();
        let warnings = if n == 0 {
            vec!["placement lists no compute resource provider".to_owned()]
        } else {
            Vec::new()
        };
        let provider = StaticProvider::from_candidates(candidates)
            .unwrap_or_else(|_| StaticProvider::new(Default::default()));
        LoadedInventory {
            pools: snap.pools(&self.naming),
            provider: Arc::new(provider),
            catalog: Some(snap.catalog(&self.naming)),
            candidates: n,
            fingerprint: snap.fingerprint(&self.naming),
            warnings,
        }
    }

    /// Brings Placement's claims in line with the calendar's active reservations of this
    /// provider (read from every partition), from a fresh read of the providers.
    pub async fn sync_claims(
        &self,
        reservations: &ReservationService,
    ) -> Result<writeback::Synced, ServiceError> {
        let provider = self.naming.provider.clone();
        let scope = self.scope.clone();
        let parts = reservations
            .read_all(move |partition, cal| claims::desired(cal, &provider, partition, &scope))
            .await?;
        let desired: BTreeMap<String, claims::Claim> = parts.into_iter().flatten().collect();
        let providers = fetch::providers(&self.session)
            .await
            .map_err(service_error)?;
        let out = writeback::sync(&self.session, &providers, &desired)
            .await
            .map_err(service_error)?;
        for (c, e) in &out.refused {
            tracing::warn!(consumer = %c, error = %e, "placement claim refused: capacity went to another consumer");
        }
        Ok(out)
    }

    /// Keeps the cloud and the calendar in step until `stop`: the inventory reloaded every
    /// `refresh` ([`Trigger::Refresh`]), and the claims synced after every calendar change and
    /// every refresh; a refused claim reloads the inventory at once, so the capacity taken by
    /// others reaches the calendar (its reservations flagged at risk) without waiting.
    pub fn spawn(
        self: &Arc<Self>,
        reservations: Arc<ReservationService>,
        reconciler: Arc<InventoryReconciler>,
        refresh: Duration,
        mut stop: tokio::sync::watch::Receiver<bool>,
    ) -> tokio::task::JoinHandle<()> {
        let me = Arc::clone(self);
        let _ = self.calendar.set(Arc::downgrade(&reservations));
        let mut changes = reservations.changes();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(refresh.max(Duration::from_secs(1)));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                let reload = tokio::select! {
                    _ = stop.changed() => return,
                    _ = tick.tick() => true,
                    c = changes.recv() => {
                        if matches!(c, Err(tokio::sync::broadcast::error::RecvError::Closed)) {
                            return;
                        }
                        false
                    }
                };
                // Several changes at once are one sync.
                while changes.try_recv().is_ok() {}
                if reload && let Err(e) = reconciler.reload(Trigger::Refresh).await {
                    tracing::warn!(error = %e, "openstack inventory refresh failed");
                }
                match me.sync_claims(&reservations).await {
                    Ok(s) if !s.refused.is_empty() => {
                        if let Err(e) = reconciler.reload(Trigger::Refresh).await {
                            tracing::warn!(error = %e, "openstack inventory refresh failed");
                        }
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "placement claims not synced"),
                }
            }
        })
    }
}

impl InventorySource for OpenStack {
    fn name(&self) -> String {
        let url = &self.session.auth().auth_url;
        format!("openstack {} ({url})", self.naming.provider)
    }

    fn load(
        &self,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<LoadedInventory, ServiceError>> + Send + '_>,
    > {
        Box::pin(async move {
            let snap = self
                .snapshot()
                .await
                .map_err(|e| ServiceError::InvalidInventory {
                    origin: self.name(),
                    message: e.to_string(),
                    diagnostics: Vec::new(),
                })?;
            Ok(self.loaded(&snap))
        })
    }
}

impl Vim for OpenStack {
    fn serves(&self, provider: &str) -> bool {
        provider == self.naming.provider
    }

    fn boot<'a>(&'a self, req: &'a BootRequest) -> VimFuture<'a, Booted> {
        Box::pin(async move {
            let Some(image) = req.image.clone().or_else(|| self.default_image.clone()) else {
                return Err(ServiceError::Invalid {
                    message: "`image` is missing and [openstack] names no default_image".into(),
                    field: Some("image"),
                });
            };
            // A reservation's claim gives up what its new instance takes before Nova claims
            // it, or a full host would refuse the boot.
            if let Some(cal) = self.calendar.get().and_then(std::sync::Weak::upgrade) {
                self.sync_claims(&cal).await?;
            }
            let b = boot::Boot {
                name: req.name.clone(),
                flavor: req.flavor.clone(),
                image,
                host: req.host.clone(),
                instance: req.instance.clone(),
            };
            let v = boot::boot(&self.session, &b, self.deadline)
                .await
                .map_err(service_error)?;
            Ok(Booted {
                server: v.id,
                host: v.host,
                status: v.status.unwrap_or_default(),
            })
        })
    }

    fn destroy<'a>(&'a self, instance: &'a str) -> VimFuture<'a, bool> {
        Box::pin(async move {
            let Some(v) = boot::find(&self.session, instance)
                .await
                .map_err(service_error)?
            else {
                return Ok(false);
            };
            boot::delete(&self.session, &v.id, self.deadline)
                .await
                .map_err(service_error)?;
            Ok(true)
        })
    }

    fn discover<'a>(&'a self, d: &'a Discovery) -> VimFuture<'a, Discovered> {
        let auth = self.session.auth();
        Box::pin(discover(
            d,
            auth.interface.clone(),
            auth.timeout,
            self.deadline,
        ))
    }
}

/// Reads a cloud given to `add-provider`: Keystone password auth with its user and project
/// (both in domain `Default`), then a snapshot.
pub async fn discover(
    d: &Discovery,
    interface: String,
    timeout: Duration,
    deadline: Duration,
) -> Result<Discovered, ServiceError> {
    let auth = Auth {
        auth_url: d.endpoint.clone(),
        credentials: Credentials::Password {
            username: d.username.clone(),
            password: d.password.clone(),
            user_domain: "Default".into(),
            project: d.tenant.clone().unwrap_or_else(|| d.username.clone()),
            project_domain: "Default".into(),
        },
        region: d.region.clone(),
        interface,
        timeout,
    };
    let naming = Naming {
        provider: String::new(),
        cloud_owner: None,
        endpoint: Some(d.endpoint.clone()),
        tenant: d.tenant.clone(),
    };
    let cloud = OpenStack::new(auth, naming, "discovery", deadline).map_err(service_error)?;
    let snap = cloud.snapshot().await.map_err(service_error)?;
    Ok(discovered(&snap, &cloud.naming))
}

/// The VIM of a daemon without a configured cloud: it boots nothing and discovers the clouds
/// given to `add-provider`.
#[derive(Debug, Clone)]
pub struct Discoverer {
    /// Per-request timeout.
    pub timeout: Duration,
}

impl Vim for Discoverer {
    fn serves(&self, _provider: &str) -> bool {
        false
    }

    fn boot<'a>(&'a self, _req: &'a BootRequest) -> VimFuture<'a, Booted> {
        Box::pin(async {
            Err(ServiceError::Unavailable {
                message: "no cloud is configured to boot servers ([openstack])".into(),
            })
        })
    }

    fn destroy<'a>(&'a self, _instance: &'a str) -> VimFuture<'a, bool> {
        Box::pin(async { Ok(false) })
    }

    fn discover<'a>(&'a self, d: &'a Discovery) -> VimFuture<'a, Discovered> {
        Box::pin(discover(d, "public".into(), self.timeout, self.timeout))
    }
}

/// A snapshot as `add-provider`'s discovery: the catalog and each host's free capacity.
pub fn discovered(snap: &Snapshot, naming: &Naming) -> Discovered {
    let capacity = snap
        .candidates(naming)
        .into_iter()
        .map(|c| {
            let mut a = Amounts::new();
            for (d, v) in &c.capacity {
                if let Ok(v) = u64::try_from(*v)
                    && v > 0
                {
                    a.set(Dimension::new(d.as_str()), v);
                }
            }
            (c.candidate_id.to_string(), a)
        })
        .collect();
    Discovered {
        info: snap.catalog(naming),
        capacity,
    }
}
