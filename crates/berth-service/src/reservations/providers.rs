//! Providers: registered with `add-provider` (credentials sealed), known from the
//! configuration or inventory, and the VIM that boots instances.

use std::sync::Arc;

use berth_store::{NewProvider, Secret};

use super::ReservationService;
use crate::ServiceError;
use crate::provider::{DEFAULT_PROVIDER, ProviderInfo};

impl ReservationService {
    /// Registers a provider and returns its id. Credentials are sealed with the configured
    /// key, or dropped when there is none; they are never returned.
    pub async fn add_provider(
        &self,
        info: ProviderInfo,
        credentials: Option<String>,
    ) -> Result<String, ServiceError> {
        let id = uuid::Uuid::new_v4().to_string();
        let key = self.opts.credential_key.as_ref();
        let provider = NewProvider {
            name: id.clone(),
            endpoint: info.endpoint.clone().unwrap_or_default(),
            metadata: serde_json::json!({
                "provider-type": info.provider_type,
                "name": info.name,
                "region": info.region,
                "tenant": info.tenant,
                "flavors": info.flavors,
            }),
            credentials: key.and(credentials).map(Secret::new),
            now: self.clock.now(),
        };
        self.store.put_provider(&provider, key).await?;
        Ok(id)
    }

    /// Registered providers (without credentials).
    pub async fn providers(&self) -> Result<Vec<ProviderInfo>, ServiceError> {
        let text =
            |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
        Ok(self
            .store
            .list_providers()
            .await?
            .into_iter()
            .map(|p| ProviderInfo {
                provider_type: text(&p.metadata, "provider-type").unwrap_or_default(),
                name: text(&p.metadata, "name"),
                region: text(&p.metadata, "region"),
                tenant: text(&p.metadata, "tenant"),
                endpoint: Some(p.endpoint).filter(|e| !e.is_empty()),
                flavors: p
                    .metadata
                    .get("flavors")
                    .cloned()
                    .and_then(|f| serde_json::from_value(f).ok())
                    .unwrap_or_default(),
                id: p.name,
            })
            .collect())
    }

    /// The provider `id` if the daemon knows it: [`DEFAULT_PROVIDER`], one from the
    /// configuration or inventory, or one registered with `add-provider`.
    pub async fn provider(&self, id: &str) -> Result<Option<ProviderInfo>, ServiceError> {
        if let Some(p) = self.static_providers().into_iter().find(|p| p.id == id) {
            return Ok(Some(p));
        }
        if id == DEFAULT_PROVIDER {
            return Ok(Some(ProviderInfo {
                id: id.to_owned(),
                name: None,
                provider_type: "static".into(),
                endpoint: None,
                region: None,
                tenant: None,
                flavors: Vec::new(),
            }));
        }
        Ok(self.providers().await?.into_iter().find(|p| p.id == id))
    }

    /// Every known provider: configured ones first, then registered ones (no duplicates).
    pub async fn all_providers(&self) -> Result<Vec<ProviderInfo>, ServiceError> {
        let mut out = self.static_providers();
        for p in self.providers().await? {
            if !out.iter().any(|o| o.id == p.id) {
                out.push(p);
            }
        }
        Ok(out)
    }

    /// The providers known from the configuration or inventory, as they stand.
    pub(super) fn static_providers(&self) -> Vec<ProviderInfo> {
        match self.statics.read() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Replaces (or adds) the configured provider `info.id` (an inventory reload's catalog).
    pub fn set_static_provider(&self, info: ProviderInfo) {
        let mut g = match self.statics.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        match g.iter_mut().find(|p| p.id == info.id) {
            Some(p) => *p = info,
            None => g.push(info),
        }
    }

    /// Boots and deletes the instances of the providers `vim` serves from now on.
    pub fn set_vim(&self, vim: Arc<dyn crate::Vim>) {
        match self.vim.write() {
            Ok(mut g) => *g = Some(vim),
            Err(poisoned) => *poisoned.into_inner() = Some(vim),
        }
    }

    /// The VIM, if one is set.
    pub fn vim(&self) -> Option<Arc<dyn crate::Vim>> {
        match self.vim.read() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}
