//! A cloud as read at one moment ([`Snapshot`]) and what Berth makes of it: one candidate per
//! compute resource provider, its free capacity as a calendar pool, the flavors as a catalog.
//! Pure: the client fills a snapshot, everything here is computed from it.

use std::collections::{BTreeMap, BTreeSet};

use berth_inventory::ZoneCategory;
use berth_inventory::{AttrValue, Candidate, Flavor, HpaAttribute, HpaCapability, InventoryType};
use berth_service::{InventoryPools, ProviderFlavor, ProviderInfo};

use crate::claims::is_berth_consumer;
use crate::names::fnv64;
pub use crate::names::{dimension, resource_class};
use crate::wire;

/// One resource provider with everything Placement says about it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderState {
    /// The provider.
    pub provider: wire::ResourceProvider,
    /// Its inventory per resource class.
    pub inventories: BTreeMap<String, wire::Inventory>,
    /// What each consumer holds on it.
    pub allocations: BTreeMap<String, wire::Held>,
    /// Its traits.
    pub traits: Vec<String>,
    /// Its aggregates (UUIDs).
    pub aggregates: Vec<String>,
}

/// The cloud as read at one moment.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    /// The Keystone region the endpoints were taken from.
    pub region: Option<String>,
    /// Every resource provider, in name order.
    pub providers: Vec<ProviderState>,
    /// The compute API's flavors.
    pub flavors: Vec<wire::Flavor>,
    /// Availability zone of each compute host.
    pub host_zones: BTreeMap<String, String>,
    /// Host aggregates.
    pub aggregates: Vec<wire::HostAggregate>,
    /// Servers Berth booted (their allocations are Berth's own, already in the calendar).
    pub berth_servers: BTreeSet<String>,
}

/// How a snapshot becomes candidates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Naming {
    /// The provider name: candidates' `inventory_provider`, the pools' provider, the
    /// catalog's id (`openstack`).
    pub provider: String,
    /// Candidates' `cloud_owner`.
    pub cloud_owner: Option<String>,
    /// The catalog's endpoint (Keystone's URL).
    pub endpoint: Option<String>,
    /// The catalog's tenant (the project).
    pub tenant: Option<String>,
}

impl ProviderState {
    /// Units of `rc` held by consumers other than Berth's (its claims and the servers it
    /// booted).
    pub fn used_by_others(&self, rc: &str, berth_servers: &BTreeSet<String>) -> u64 {
        self.allocations
            .iter()
            .filter(|(c, _)| !is_berth_consumer(c) && !berth_servers.contains(*c))
            .filter_map(|(_, h)| h.resources.get(rc))
            .sum()
    }

    /// What Berth may sell of each resource class: `(total - reserved) * allocation_ratio`
    /// less what others hold, never below zero.
    pub fn free(&self, berth_servers: &BTreeSet<String>) -> BTreeMap<String, u64> {
        self.inventories
            .iter()
            .map(|(rc, inv)| {
                let free = inv
                    .capacity()
                    .saturating_sub(self.used_by_others(rc, berth_servers));
                (rc.clone(), free)
            })
            .collect()
    }

    /// Whether it is a compute node (Nova's providers carry `COMPUTE_NODE`; a provider with
    /// VCPU inventory and no traits is taken as one too).
    pub fn is_compute(&self) -> bool {
        self.traits.iter().any(|t| t == "COMPUTE_NODE")
            || (self.traits.is_empty() && self.inventories.contains_key("VCPU"))
    }
}

impl Snapshot {
    /// One candidate per compute provider, in name order.
    pub fn candidates(&self, naming: &Naming) -> Vec<Candidate> {
        let agg_by_uuid: BTreeMap<&str, &wire::HostAggregate> = self
            .aggregates
            .iter()
            .filter_map(|a| a.uuid.as_deref().map(|u| (u, a)))
            .collect();
        let mut out = Vec::new();
        for p in self.providers.iter().filter(|p| p.is_compute()) {
            let host = p.provider.name.clone();
            let mut c = Candidate::new(host.as_str(), InventoryType::Cloud);
            c.inventory_provider = Some(naming.provider.clone());
            c.cloud_owner = naming.cloud_owner.clone();
            c.region = self.region.clone();
            c.location_id = Some(host.clone());
            c.location_type = Some("compute_host".into());
            let attrs = &mut c.attributes;
            attrs.insert("host".into(), AttrValue::Str(host.clone()));
            attrs.insert(
                "resource_provider_uuid".into(),
                AttrValue::Str(p.provider.uuid.clone()),
            );
            attrs.insert(
                "traits".into(),
                AttrValue::List(p.traits.iter().cloned().map(AttrValue::Str).collect()),
            );
            // Aggregates of this host: Nova's (by host name) and Placement's (by UUID).
            let mut aggs: BTreeMap<String, &wire::HostAggregate> = BTreeMap::new();
            for a in &self.aggregates {
                if a.hosts.contains(&host) {
                    aggs.insert(a.name.clone(), a);
                }
            }
            for u in &p.aggregates {
                if let Some(a) = agg_by_uuid.get(u.as_str()) {
                    aggs.insert(a.name.clone(), a);
                }
            }
            attrs.insert(
                "host_aggregates".into(),
                AttrValue::List(aggs.keys().cloned().map(AttrValue::Str).collect()),
            );
            for a in aggs.values() {
                for (k, v) in &a.metadata {
                    if k != "availability_zone" {
                        attrs.insert(format!("aggregate.{k}"), AttrValue::Str(v.clone()));
                    }
                }
            }
            let zone = self
                .host_zones
                .get(&host)
                .cloned()
                .or_else(|| aggs.values().find_map(|a| a.availability_zone.clone()));
            if let Some(z) = &zone {
                attrs.insert("availability_zone".into(), AttrValue::Str(z.clone()));
                c.zones.insert(ZoneCategory::Disaster, z.clone());
            }
            for (rc, inv) in &p.inventories {
                let d = dimension(rc);
                for (k, v) in [
                    ("min_unit", inv.min_unit),
                    ("max_unit", inv.max_unit.unwrap_or(inv.total)),
                    ("step_size", inv.step_size),
                ] {
                    attrs.insert(format!("{d}.{k}"), AttrValue::Int(clamp(v)));
                }
            }
            c.groups = aggs.keys().cloned().collect();
            c.capacity = p
                .free(&self.berth_servers)
                .into_iter()
                .map(|(rc, v)| (dimension(&rc), clamp(v)))
                .collect();
            c.flavors = self
                .flavors
                .iter()
                .filter(|f| !f.disabled && fits_host(f, p, &aggs))
                .map(hpa_flavor)
                .collect();
            out.push(c);
        }
        out
    }

    /// The pools these candidates give the calendar: `<host>/<provider>` with the free
    /// capacity.
    pub fn pools(&self, naming: &Naming) -> InventoryPools {
        InventoryPools::from_candidates(naming.provider.clone(), self.candidates(naming).iter())
    }

    /// The flavors as a Promise catalog of provider `naming.provider`.
    pub fn catalog(&self, naming: &Naming) -> ProviderInfo {
        ProviderInfo {
            id: naming.provider.clone(),
            name: None,
            provider_type: "openstack".into(),
            endpoint: naming.endpoint.clone(),
            region: self.region.clone(),
            tenant: naming.tenant.clone(),
            flavors: self
                .flavors
                .iter()
                .filter(|f| !f.disabled)
                .map(|f| ProviderFlavor {
                    id: f.id.clone(),
                    name: f.name.clone(),
                    vcpus: f.vcpus,
                    ram: f.ram,
                    disk: f.disk + f.ephemeral,
                })
                .collect(),
        }
    }

    /// The resource provider UUID of a host (the candidate id).
    pub fn provider_uuid(&self, host: &str) -> Option<&str> {
        self.providers
            .iter()
            .find(|p| p.provider.name == host)
            .map(|p| p.provider.uuid.as_str())
    }

    /// A fingerprint of what Berth derives from the snapshot: two snapshots with the same
    /// candidates match.
    pub fn fingerprint(&self, naming: &Naming) -> String {
        let text = serde_json::to_string(&self.candidates(naming)).unwrap_or_default();
        format!(
            "fnv64:{:016x}",
            fnv64(text.as_bytes(), 0xcbf2_9ce4_8422_2325)
        )
    }
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Whether a flavor can land on the host at all: one server of it within every class's
/// `max_unit`, its `trait:X=required` traits on the host and no `forbidden` one, and its
/// `aggregate_instance_extra_specs:` keys matched by the host's aggregates.
fn fits_host(
    f: &wire::Flavor,
    p: &ProviderState,
    aggs: &BTreeMap<String, &wire::HostAggregate>,
) -> bool {
    let within = [
        ("VCPU", f.vcpus),
        ("MEMORY_MB", f.ram),
        ("DISK_GB", f.disk + f.ephemeral),
    ]
    .into_iter()
    .all(|(rc, n)| {
        n == 0
            || p.inventories
                .get(rc)
                .is_some_and(|i| n <= i.max_unit.unwrap_or(i.total) && n >= i.min_unit)
    });
    let traits = f.extra_specs.iter().all(|(k, v)| {
        let Some(t) = k.strip_prefix("trait:") else {
            return true;
        };
        let has = p.traits.iter().any(|x| x == t);
        match v.as_str() {
            "required" => has,
            "forbidden" => !has,
            _ => true,
        }
    });
    let aggregate = f.extra_specs.iter().all(|(k, v)| {
        let Some(key) = k.strip_prefix("aggregate_instance_extra_specs:") else {
            return true;
        };
        aggs.values()
            .any(|a| a.metadata.get(key).is_some_and(|m| m == v))
    });
    within && traits && aggregate
}

/// A Nova flavor as an HPA flavor: `basicCapabilities` from its size, `cpuPinning`,
/// `hugePages` and `numa` from the `hw:` extra specs that say them, and every extra spec as
/// written under `novaExtraSpecs`.
pub fn hpa_flavor(f: &wire::Flavor) -> Flavor {
    let attr = |value: AttrValue, unit: Option<&str>| HpaAttribute {
        value,
        unit: unit.map(str::to_owned),
    };
    let cap = |feature: &str, attributes: BTreeMap<String, HpaAttribute>| HpaCapability {
        feature: feature.to_owned(),
        version: "v1".into(),
        architecture: "generic".into(),
        attributes,
    };
    let mut caps = Vec::new();
    let mut basic = BTreeMap::new();
    basic.insert(
        "numVirtualCpu".to_owned(),
        attr(AttrValue::Int(clamp(f.vcpus)), None),
    );
    basic.insert(
        "virtualMemSize".to_owned(),
        attr(AttrValue::Int(clamp(f.ram)), Some("MB")),
    );
    if f.disk + f.ephemeral > 0 {
        basic.insert(
            "diskSize".to_owned(),
            attr(AttrValue::Int(clamp(f.disk + f.ephemeral)), Some("GB")),
        );
    }
    caps.push(cap("basicCapabilities", basic));
    let spec = |k: &str| f.extra_specs.get(k);
    let mut pinning = BTreeMap::new();
    if let Some(v) = spec("hw:cpu_policy") {
        pinning.insert(
            "logicalCpuPinningPolicy".to_owned(),
            attr(AttrValue::Str(v.clone()), None),
        );
    }
    if let Some(v) = spec("hw:cpu_thread_policy") {
        pinning.insert(
            "logicalCpuThreadPinningPolicy".to_owned(),
            attr(AttrValue::Str(v.clone()), None),
        );
    }
    if !pinning.is_empty() {
        caps.push(cap("cpuPinning", pinning));
    }
    if let Some(v) = spec("hw:mem_page_size") {
        let (value, unit) = page_size(v);
        let mut hp = BTreeMap::new();
        hp.insert("memoryPageSize".to_owned(), attr(value, unit));
        caps.push(cap("hugePages", hp));
    }
    if let Some(v) = spec("hw:numa_nodes") {
        let value = v
            .parse::<i64>()
            .map_or_else(|_| AttrValue::Str(v.clone()), AttrValue::Int);
        let mut numa = BTreeMap::new();
        numa.insert("numaNodes".to_owned(), attr(value, None));
        caps.push(cap("numa", numa));
    }
    if !f.extra_specs.is_empty() {
        let all = f
            .extra_specs
            .iter()
            .map(|(k, v)| (k.clone(), attr(AttrValue::Str(v.clone()), None)))
            .collect();
        caps.push(cap("novaExtraSpecs", all));
    }
    Flavor {
        id: f.id.clone(),
        name: f.name.clone(),
        capabilities: caps,
    }
}

/// `hw:mem_page_size` as a value and unit: `1GB` is 1 GB, `2048` is 2048 KB (Nova's bare
/// numbers are KiB), `large`/`small`/`any` as written.
fn page_size(v: &str) -> (AttrValue, Option<&'static str>) {
    let t = v.trim();
    let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
    let Ok(n) = digits.parse::<i64>() else {
        return (AttrValue::Str(v.to_owned()), None);
    };
    let unit = match t[digits.len()..].trim().to_ascii_uppercase().as_str() {
        "" | "K" | "KB" | "KIB" => "KB",
        "M" | "MB" | "MIB" => "MB",
        "G" | "GB" | "GIB" => "GB",
        _ => return (AttrValue::Str(v.to_owned()), None),
    };
    (AttrValue::Int(n), Some(unit))
}

#[cfg(test)]
mod tests;
