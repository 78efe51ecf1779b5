//! The request bodies of the Promise routes, with the schemas the OpenAPI document and the
//! unknown-field check read.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::amounts::Quantity;

/// A time window.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct WindowBody {
    /// Start.
    pub start: Option<DateTime<Utc>>,
    /// End.
    pub end: Option<DateTime<Utc>>,
    /// `inclusive` (overlap) or `exclusive` (inside).
    pub scope: Option<String>,
}

/// Element filters.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct ElementsBody {
    /// Some of these.
    #[serde(default)]
    pub some: Vec<String>,
    /// All of these.
    #[serde(default)]
    pub every: Vec<String>,
}

/// `create-reservation` / `update-reservation` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct ReservationBody {
    /// Reservation to update.
    pub reservation_id: Option<String>,
    /// Availability zone.
    pub zone: Option<String>,
    /// Provider (pool) in the zone. `provider-id` is accepted alike.
    #[serde(alias = "provider-id")]
    pub provider: Option<String>,
    /// Start (default now).
    pub start: Option<DateTime<Utc>>,
    /// End (default open).
    pub end: Option<DateTime<Utc>>,
    /// Expiry.
    pub expiry: Option<DateTime<Utc>>,
    /// Amounts per dimension.
    #[schema(value_type = Object)]
    pub capacity: Option<BTreeMap<String, Quantity>>,
    /// Protected elements.
    pub elements: Option<Vec<String>>,
    /// `low`, `normal` or `high`.
    pub priority: Option<String>,
    /// Owner.
    pub tenant: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct IdBody {
    pub(super) reservation_id: Option<String>,
    pub(super) instance_id: Option<String>,
}

/// `query-reservation` / `query-capacity` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct QueryBody {
    /// Zone.
    pub zone: Option<String>,
    /// Provider. `provider-id` is accepted alike.
    #[serde(alias = "provider-id")]
    pub provider: Option<String>,
    /// Include the utilization timeline (default true, as in Promise's YANG).
    pub show_utilization: Option<bool>,
    /// Reservation ids to leave out.
    #[serde(default)]
    pub without: Vec<String>,
    /// Element filters.
    pub elements: Option<ElementsBody>,
    /// Time window.
    pub window: Option<WindowBody>,
    /// `total`, `reserved`, `usage` or `available` (query-capacity).
    pub capacity: Option<String>,
}

/// `create-instance` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct InstanceBody {
    /// Provider; `provider` is accepted alike.
    #[serde(alias = "provider")]
    pub provider_id: Option<String>,
    /// Reservation to draw from.
    pub reservation_id: Option<String>,
    /// Zone (without reservation).
    pub zone: Option<String>,
    /// Name.
    pub name: Option<String>,
    /// Image.
    pub image: Option<String>,
    /// Flavor.
    pub flavor: Option<String>,
    /// Amounts (default one instance).
    #[schema(value_type = Object)]
    pub capacity: Option<BTreeMap<String, Quantity>>,
    /// End of the instance's lifetime.
    pub end: Option<DateTime<Utc>>,
}

/// `increase-capacity` / `decrease-capacity` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct CapacityBody {
    /// The pool: a pool id, `ResourcePool:<pool-id>`, a provider id,
    /// `ResourceProvider:<provider-id>`, or an object `{"id": …}` with one of those.
    #[schema(value_type = Object)]
    pub source: Option<Value>,
    /// Zone of the pool (when `source` names a provider).
    pub zone: Option<String>,
    /// Provider of the pool (instead of `source`). `provider-id` is accepted alike.
    #[serde(alias = "provider-id")]
    pub provider: Option<String>,
    /// Start (default now).
    pub start: Option<DateTime<Utc>>,
    /// End (default for good).
    pub end: Option<DateTime<Utc>>,
    /// Amounts.
    #[schema(value_type = Object)]
    pub capacity: BTreeMap<String, Quantity>,
}

/// `add-provider` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct ProviderBody {
    /// `openstack`, ...
    pub provider_type: String,
    /// A name people read (the console shows it; the id stays the key).
    pub name: Option<String>,
    /// Endpoint URL.
    pub endpoint: Option<String>,
    /// User name.
    pub username: Option<String>,
    /// Password: sealed at rest with the configured key, or not kept; never returned.
    pub password: Option<String>,
    /// Region.
    pub region: Option<String>,
    /// Tenant `{id?, name?}`.
    #[schema(value_type = Object)]
    pub tenant: Option<Value>,
    /// Flavor catalog (what Promise discovers from Nova): `[{id?, name?, vcpus, ram, disk?}]`.
    pub flavors: Option<Vec<FlavorBody>>,
}

/// One flavor of an `add-provider` catalog.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct FlavorBody {
    /// Id (defaults to the name).
    pub id: Option<String>,
    /// Name (defaults to the id).
    pub name: Option<String>,
    /// Virtual CPUs.
    #[schema(value_type = Object)]
    pub vcpus: Quantity,
    /// Memory, MB.
    #[schema(value_type = Object)]
    pub ram: Quantity,
    /// Root disk, GB.
    #[schema(value_type = Object)]
    pub disk: Option<Quantity>,
}

/// `POST /capacity/{kind}/subscribe` body.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct CapacitySubscribeBody {
    /// Zone watched.
    pub zone: Option<String>,
    /// Provider watched (default: the zone's sum). `provider-id` is accepted alike.
    #[serde(alias = "provider-id")]
    pub provider: Option<String>,
    /// The pool watched, in any `source` form (pool id, `ResourcePool:…`, provider id,
    /// `ResourceProvider:…`, `{"id": …}`); overrides `provider`.
    #[schema(value_type = Object)]
    pub source: Option<Value>,
    /// Dimension, any alias (default per kind: compute `cores`, network `addresses`, storage
    /// `gigabytes`, that is `vcpu`, `addresses`, `disk_gib`).
    pub dimension: Option<String>,
    /// Notify when available goes below this.
    #[schema(value_type = Object)]
    pub threshold: Quantity,
    /// Where to POST.
    #[serde(alias = "callback-url")]
    pub callback: String,
}

/// `POST /reservation/subscribe` body.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct ReservationSubscribeBody {
    /// Filters: `reservation-id`, `zone`, `events`.
    #[serde(default)]
    pub filters: FilterBody,
    /// Where to POST.
    #[serde(alias = "callback-url")]
    pub callback: String,
}

/// Reservation event filters.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub struct FilterBody {
    /// One reservation.
    pub reservation_id: Option<String>,
    /// One zone.
    pub zone: Option<String>,
    /// Event names.
    #[serde(default)]
    pub events: Vec<String>,
}
