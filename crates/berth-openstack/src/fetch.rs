//! Reads a [`Snapshot`] of the cloud: Placement's providers with their inventories,
//! allocations, traits and aggregates; the compute API's flavors, availability zones, host
//! aggregates and the servers Berth booted.

use crate::client::{COMPUTE_VERSION, PLACEMENT_VERSION, Session};
use crate::cloud::{ProviderState, Snapshot};
use crate::error::OpenStackError;
use crate::wire;

/// The metadata key Berth tags the servers it boots with (its instance id).
pub const INSTANCE_KEY: &str = "berth-instance";

/// Every provider's state from Placement, in name order.
pub async fn providers(s: &Session) -> Result<Vec<ProviderState>, OpenStackError> {
    let get = |path: String| async move { s.get("placement", &path, PLACEMENT_VERSION).await };
    let list: wire::ResourceProviders = wire::parse(
        "placement resource providers",
        &get("/resource_providers".into()).await?,
    )?;
    let mut out = Vec::with_capacity(list.resource_providers.len());
    for rp in list.resource_providers {
        out.push(provider(s, &rp).await?);
    }
    out.sort_by(|a, b| a.provider.name.cmp(&b.provider.name));
    Ok(out)
}

/// One provider's state.
pub async fn provider(
    s: &Session,
    rp: &wire::ResourceProvider,
) -> Result<ProviderState, OpenStackError> {
    let get = |path: String| async move { s.get("placement", &path, PLACEMENT_VERSION).await };
    {
        let base = format!("/resource_providers/{}", rp.uuid);
        let inv: wire::Inventories = wire::parse(
            "placement inventories",
            &get(format!("{base}/inventories")).await?,
        )?;
        let alloc: wire::ProviderAllocations = wire::parse(
            "placement allocations",
            &get(format!("{base}/allocations")).await?,
        )?;
        let traits: wire::Traits =
            wire::parse("placement traits", &get(format!("{base}/traits")).await?)?;
        let aggs: wire::Aggregates = wire::parse(
            "placement aggregates",
            &get(format!("{base}/aggregates")).await?,
        )?;
        Ok(ProviderState {
            provider: wire::ResourceProvider {
                generation: alloc.resource_provider_generation,
                ..rp.clone()
            },
            inventories: inv.inventories,
            allocations: alloc.allocations,
            traits: traits.traits,
            aggregates: aggs.aggregates,
        })
    }
}

/// The whole snapshot.
pub async fn snapshot(s: &Session) -> Result<Snapshot, OpenStackError> {
    let providers = providers(s).await?;
    let nova = |path: &'static str| async move { s.get("compute", path, COMPUTE_VERSION).await };
    let flavors: wire::Flavors = wire::parse(
        "compute flavors",
        &nova("/flavors/detail?is_public=None").await?,
    )?;
    let zones: wire::ZonesDetail = wire::parse(
        "compute availability zones",
        &nova("/os-availability-zone/detail").await?,
    )?;
    let aggregates: wire::HostAggregates =
        wire::parse("compute aggregates", &nova("/os-aggregates").await?)?;
    let servers: wire::ServersBody = wire::parse(
        "compute servers",
        &nova("/servers/detail?all_tenants=1").await?,
    )?;
    let mut flavors = flavors.flavors;
    flavors.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
    Ok(Snapshot {
        region: s.region().await?,
        providers,
        flavors,
        host_zones: zones.compute_hosts(),
        aggregates: aggregates.aggregates,
        berth_servers: servers
            .servers
            .into_iter()
            .filter(|v| v.metadata.contains_key(INSTANCE_KEY))
            .map(|v| v.id)
            .collect(),
    })
}
