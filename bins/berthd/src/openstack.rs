//! `[openstack]`: the cloud berthd reads its inventory from, claims in and boots on.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use berth_openstack::{Auth, Credentials, Discoverer, Naming, OpenStack};

use crate::config::{self, Config};

/// The configured cloud, or `None` without `[openstack]`.
pub fn cloud(cfg: &Config) -> Result<Option<Arc<OpenStack>>> {
    let Some(os) = &cfg.openstack else {
        return Ok(None);
    };
    let credentials = match (
        &os.application_credential_id,
        &os.application_credential_secret,
    ) {
        (Some(id), Some(secret)) => Credentials::ApplicationCredential {
            id: id.clone(),
            secret: secret.clone(),
        },
        _ => Credentials::Password {
            username: os.username.clone().unwrap_or_default(),
            password: os.password.clone().unwrap_or_default(),
            user_domain: os.user_domain.clone(),
            project: os.project.clone().unwrap_or_default(),
            project_domain: os.project_domain.clone(),
        },
    };
    let auth = Auth {
        auth_url: os.auth_url.clone(),
        credentials,
        region: os.region.clone(),
        interface: os.interface.clone(),
        timeout: Duration::from_secs(os.request_timeout_secs.max(1)),
    };
    let naming = Naming {
        provider: os.provider.clone(),
        cloud_owner: os.cloud_owner.clone(),
        endpoint: None,
        tenant: None,
    };
    let cloud = OpenStack::new(
        auth,
        naming,
        cfg.stream.clone(),
        Duration::from_secs(os.boot_deadline_secs.max(1)),
    )
    .map_err(|e| anyhow::anyhow!("[openstack] {e}"))?
    .with_default_image(os.default_image.clone());
    Ok(Some(Arc::new(cloud)))
}

/// The VIM of a daemon without `[openstack]`: it discovers the clouds given to `add-provider`.
pub fn discoverer() -> Arc<Discoverer> {
    Arc::new(Discoverer {
        timeout: Duration::from_secs(30),
    })
}

/// The refresh period of `[openstack]`.
pub fn refresh(os: &config::OpenStack) -> Duration {
    Duration::from_secs(os.refresh_secs.max(1))
}
