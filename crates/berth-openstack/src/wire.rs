//! The JSON of Keystone v3, Placement and the compute API, read into typed records: pure, so
//! every answer the client meets can be tested from a recorded fixture.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::OpenStackError;

/// Reads `text` as `T`, naming the field path of the first mismatch.
pub fn parse<T: DeserializeOwned>(what: &'static str, text: &str) -> Result<T, OpenStackError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        OpenStackError::Wire {
            what,
            path,
            message: e.into_inner().to_string(),
        }
    })
}

// ---- Keystone ------------------------------------------------------------------------------

/// A token's body (`POST /v3/auth/tokens`); its id comes in the `X-Subject-Token` header.
#[derive(Debug, Clone, Deserialize)]
pub struct TokenBody {
    /// The token.
    pub token: TokenInfo,
}

/// What a token says.
#[derive(Debug, Clone, Deserialize)]
pub struct TokenInfo {
    /// When it stops working.
    pub expires_at: DateTime<Utc>,
    /// The project it is scoped to.
    #[serde(default)]
    pub project: Option<Named>,
    /// The user it was issued to.
    pub user: Named,
    /// Role names held in the project.
    #[serde(default)]
    pub roles: Vec<Named>,
    /// The service catalog (absent with `nocatalog`).
    #[serde(default)]
    pub catalog: Vec<CatalogService>,
}

/// An id with a name.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Named {
    /// Id.
    pub id: String,
    /// Name.
    #[serde(default)]
    pub name: String,
}

/// One service of the catalog.
#[derive(Debug, Clone, Deserialize)]
pub struct CatalogService {
    /// Type (`placement`, `compute`, `identity`).
    #[serde(rename = "type")]
    pub service_type: String,
    /// Name (`nova`).
    #[serde(default)]
    pub name: String,
    /// Its endpoints.
    pub endpoints: Vec<Endpoint>,
}

/// One endpoint of a catalog service.
#[derive(Debug, Clone, Deserialize)]
pub struct Endpoint {
    /// `public`, `internal` or `admin`.
    pub interface: String,
    /// Region id.
    #[serde(default)]
    pub region_id: Option<String>,
    /// Base URL.
    pub url: String,
}

/// The URL of `service`'s `interface` endpoint (in `region` when given), without a trailing
/// slash.
pub fn endpoint(
    catalog: &[CatalogService],
    service: &str,
    interface: &str,
    region: Option<&str>,
) -> Result<String, OpenStackError> {
    catalog
        .iter()
        .filter(|s| s.service_type == service)
        .flat_map(|s| &s.endpoints)
        .find(|e| {
            e.interface == interface && region.is_none_or(|r| e.region_id.as_deref() == Some(r))
        })
        .map(|e| e.url.trim_end_matches('/').to_owned())
        .ok_or_else(|| OpenStackError::NoEndpoint {
            service: service.to_owned(),
            interface: interface.to_owned(),
            region: region.map(str::to_owned),
        })
}

// ---- Placement -----------------------------------------------------------------------------

/// `GET /resource_providers`.
#[derive(Debug, Clone, Deserialize)]
pub struct ResourceProviders {
    /// Every provider.
    pub resource_providers: Vec<ResourceProvider>,
}

/// A resource provider.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct ResourceProvider {
    /// Its UUID.
    pub uuid: String,
    /// Its name (a compute node's hypervisor host name).
    pub name: String,
    /// Its generation.
    pub generation: u64,
    /// Parent, for nested providers.
    #[serde(default)]
    pub parent_provider_uuid: Option<String>,
    /// Root of its tree.
    #[serde(default)]
    pub root_provider_uuid: Option<String>,
}

/// `GET /resource_providers/{uuid}/inventories`.
#[derive(Debug, Clone, Deserialize)]
pub struct Inventories {
    /// The provider's generation.
    pub resource_provider_generation: u64,
    /// One record per resource class.
    pub inventories: BTreeMap<String, Inventory>,
}

/// One resource class's inventory of a provider.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
pub struct Inventory {
    /// Units the provider has.
    pub total: u64,
    /// Units kept back from consumers.
    #[serde(default)]
    pub reserved: u64,
    /// Smallest allocation.
    #[serde(default = "one")]
    pub min_unit: u64,
    /// Largest allocation.
    #[serde(default)]
    pub max_unit: Option<u64>,
    /// Allocations are multiples of it.
    #[serde(default = "one")]
    pub step_size: u64,
    /// Overcommit factor.
    #[serde(default = "ratio")]
    pub allocation_ratio: f64,
}

fn one() -> u64 {
    1
}
fn ratio() -> f64 {
    1.0
}

impl Inventory {
    /// What the provider can allocate in all: `(total - reserved) * allocation_ratio`, rounded
    /// down, as Placement computes it.
    pub fn capacity(&self) -> u64 {
        let net = self.total.saturating_sub(self.reserved) as f64 * self.allocation_ratio;
        if net.is_finite() && net > 0.0 {
            net.floor() as u64
        } else {
            0
        }
    }
}

/// `GET /resource_providers/{uuid}/allocations`.
#[derive(Debug, Clone, Deserialize)]
pub struct ProviderAllocations {
    /// The provider's generation.
    pub resource_provider_generation: u64,
    /// Per consumer, what it holds here.
    pub allocations: BTreeMap<String, Held>,
}

/// What one consumer holds on one provider.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Held {
    /// Units per resource class.
    pub resources: BTreeMap<String, u64>,
}

/// `GET /resource_providers/{uuid}/traits`.
#[derive(Debug, Clone, Deserialize)]
pub struct Traits {
    /// Trait names.
    pub traits: Vec<String>,
}

/// `GET /resource_providers/{uuid}/aggregates`.
#[derive(Debug, Clone, Deserialize)]
pub struct Aggregates {
    /// Aggregate UUIDs.
    pub aggregates: Vec<String>,
}

/// `GET /allocations/{consumer}`: what a consumer holds everywhere.
#[derive(Debug, Clone, Deserialize)]
pub struct ConsumerAllocations {
    /// Per provider UUID.
    pub allocations: BTreeMap<String, ConsumerHeld>,
    /// The consumer's generation; absent when it holds nothing.
    #[serde(default)]
    pub consumer_generation: Option<u64>,
    /// Project, when it holds something.
    #[serde(default)]
    pub project_id: Option<String>,
    /// User, when it holds something.
    #[serde(default)]
    pub user_id: Option<String>,
}

/// What a consumer holds on one provider, with the provider's generation.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct ConsumerHeld {
    /// Units per resource class.
    pub resources: BTreeMap<String, u64>,
    /// The provider's generation.
    #[serde(default)]
    pub generation: Option<u64>,
}

/// A Placement error body: `{"errors": [{"status", "title", "detail", "code"}]}`.
#[derive(Debug, Clone, Deserialize)]
pub struct PlacementErrors {
    /// The errors.
    pub errors: Vec<PlacementError>,
}

/// One Placement error.
#[derive(Debug, Clone, Deserialize)]
pub struct PlacementError {
    /// Title.
    #[serde(default)]
    pub title: String,
    /// Detail.
    #[serde(default)]
    pub detail: String,
    /// Code (`placement.concurrent_update`).
    #[serde(default)]
    pub code: Option<String>,
}

/// The message and code of an error answer: Placement's `errors`, the compute API's
/// `{"<kind>": {"message"}}`, Keystone's `{"error": {"message"}}`, or the body's start.
pub fn error_message(body: &str) -> (String, Option<String>) {
    if let Ok(p) = serde_json::from_str::<PlacementErrors>(body)
        && let Some(e) = p.errors.first()
    {
        let detail = e.detail.lines().map(str::trim).filter(|l| !l.is_empty());
        let detail = detail.collect::<Vec<_>>().join(" ");
        let text = if detail.is_empty() {
            e.title.clone()
        } else {
            detail
        };
        return (text, e.code.clone());
    }
    if let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(body)
        && let Some(msg) = m
            .values()
            .find_map(|v| v.get("message").and_then(|x| x.as_str()))
    {
        return (msg.to_owned(), None);
    }
    let mut s: String = body.chars().take(200).collect();
    if s.is_empty() {
        s = "no body".into();
    }
    (s, None)
}

// ---- Compute -------------------------------------------------------------------------------

/// `GET /flavors/detail` (microversion 2.61 or later gives extra specs).
#[derive(Debug, Clone, Deserialize)]
pub struct Flavors {
    /// Every flavor.
    pub flavors: Vec<Flavor>,
}

/// A flavor.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Flavor {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Virtual CPUs.
    pub vcpus: u64,
    /// Memory, MiB.
    pub ram: u64,
    /// Root disk, GiB.
    pub disk: u64,
    /// Ephemeral disk, GiB.
    #[serde(rename = "OS-FLV-EXT-DATA:ephemeral", default)]
    pub ephemeral: u64,
    /// Disabled flavors are not offered.
    #[serde(rename = "OS-FLV-DISABLED:disabled", default)]
    pub disabled: bool,
    /// Extra specs (`hw:cpu_policy`, `trait:CUSTOM_X`, …).
    #[serde(default)]
    pub extra_specs: BTreeMap<String, String>,
}

/// `GET /os-availability-zone/detail`.
#[derive(Debug, Clone, Deserialize)]
pub struct ZonesDetail {
    /// Zones.
    #[serde(rename = "availabilityZoneInfo")]
    pub zones: Vec<ZoneInfo>,
}

/// One availability zone.
#[derive(Debug, Clone, Deserialize)]
pub struct ZoneInfo {
    /// Its name.
    #[serde(rename = "zoneName")]
    pub name: String,
    /// Hosts in it and their services (`nova-compute`).
    #[serde(default)]
    pub hosts: Option<BTreeMap<String, BTreeMap<String, serde_json::Value>>>,
}

impl ZonesDetail {
    /// The availability zone of every compute host.
    pub fn compute_hosts(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for z in &self.zones {
            for (host, services) in z.hosts.iter().flatten() {
                if services.contains_key("nova-compute") {
                    out.insert(host.clone(), z.name.clone());
                }
            }
        }
        out
    }
}

/// `GET /os-aggregates`.
#[derive(Debug, Clone, Deserialize)]
pub struct HostAggregates {
    /// Aggregates.
    pub aggregates: Vec<HostAggregate>,
}

/// A host aggregate.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct HostAggregate {
    /// Id.
    pub id: u64,
    /// UUID (Placement's aggregate of the same hosts).
    #[serde(default)]
    pub uuid: Option<String>,
    /// Name.
    pub name: String,
    /// Availability zone it defines, if any.
    #[serde(default)]
    pub availability_zone: Option<String>,
    /// Its hosts.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Metadata.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
}

/// `GET /servers/{id}` or `POST /servers`.
#[derive(Debug, Clone, Deserialize)]
pub struct ServerBody {
    /// The server.
    pub server: Server,
}

/// `GET /servers/detail`.
#[derive(Debug, Clone, Deserialize)]
pub struct ServersBody {
    /// The servers.
    pub servers: Vec<Server>,
}

/// A server, as far as Berth reads it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Server {
    /// Id.
    pub id: String,
    /// Name.
    #[serde(default)]
    pub name: String,
    /// `BUILD`, `ACTIVE`, `ERROR`, … (absent in a create's answer).
    #[serde(default)]
    pub status: Option<String>,
    /// The compute host (admin only).
    #[serde(rename = "OS-EXT-SRV-ATTR:host", default)]
    pub host: Option<String>,
    /// The hypervisor host name (admin only).
    #[serde(rename = "OS-EXT-SRV-ATTR:hypervisor_hostname", default)]
    pub hypervisor_hostname: Option<String>,
    /// Availability zone.
    #[serde(rename = "OS-EXT-AZ:availability_zone", default)]
    pub availability_zone: Option<String>,
    /// Metadata (Berth tags its servers).
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// Why it went to ERROR.
    #[serde(default)]
    pub fault: Option<Fault>,
}

/// A server's fault.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Fault {
    /// Its message.
    #[serde(default)]
    pub message: String,
}

#[cfg(test)]
pub(crate) mod tests;
