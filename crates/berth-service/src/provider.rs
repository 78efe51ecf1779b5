//! The resource providers `add-provider` registers, and the flavors they offer.

use serde::{Deserialize, Serialize};

/// A registered resource provider (`add-provider`), without credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderInfo {
    /// Its id.
    pub id: String,
    /// A name people read (`name` at `add-provider`); the id stays the key.
    #[serde(default)]
    pub name: Option<String>,
    /// `provider-type`, e.g. `openstack`.
    pub provider_type: String,
    /// Endpoint URL.
    pub endpoint: Option<String>,
    /// Region.
    pub region: Option<String>,
    /// Tenant name or id.
    pub tenant: Option<String>,
    /// Flavor catalog (given to `add-provider`, or from the daemon's inventory).
    #[serde(default)]
    pub flavors: Vec<ProviderFlavor>,
}

/// A flavor a provider offers: what one instance of it consumes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderFlavor {
    /// Flavor id (Nova's `id`).
    pub id: String,
    /// Flavor name; a request may name the flavor by id or by name.
    pub name: String,
    /// Virtual CPUs (`cores`).
    pub vcpus: u64,
    /// Memory in MB (`ram`).
    pub ram: u64,
    /// Root disk in GB (`gigabytes`); 0 when unknown.
    pub disk: u64,
}

impl ProviderFlavor {
    /// True when `name` is this flavor's id or name.
    pub fn is(&self, name: &str) -> bool {
        self.id == name || self.name == name
    }
}

/// The provider every daemon knows without registration: pools named by zone only use it.
pub const DEFAULT_PROVIDER: &str = "default";
