//! The view of a cloud region and of a workload that policy evaluation needs.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// A point on the earth in degrees (WGS 84).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GeoPoint {
    /// Latitude in degrees.
    pub latitude: f64,
    /// Longitude in degrees.
    pub longitude: f64,
}

/// One `<cloud owner, cloud region>` as policy evaluation sees it; the caller (the engine)
/// fills it from its inventory candidates.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CloudRegion {
    /// Cloud owner (`vmware-dc`, `azure`, ...): the key into the owner and cost files.
    pub cloud_owner: String,
    /// Cloud region id.
    pub region_id: String,
    /// VIM type (`VMware VIO`, `Azure`, `OpenStack`, `K8S`, `Wind River Titanium`), for the
    /// policy's `Cloud Type (Cloud Provider)` list; `None` when unknown.
    pub cloud_type: Option<String>,
    /// Public clouds always pass the capacity check (seed: "infinite capacity").
    pub is_public: bool,
    /// The tenant (OpenStack project) mapped to this `<owner, region>`; private clouds
    /// need one for the capacity check.
    pub tenant: Option<String>,
    /// Where the region is; this crate does not read it (the caller computes distances).
    pub location: Option<GeoPoint>,
    /// Instance types (flavors) offered; empty means unknown, and then any realized flavor
    /// is assumed available.
    pub flavors: BTreeSet<String>,
    /// Free capacity of `tenant` per dimension (`vcpu`, `ram_mib`, ...); a dimension not
    /// listed has none.
    pub capacity: BTreeMap<String, i64>,
}

impl CloudRegion {
    /// A private region with only an owner and an id.
    pub fn new(cloud_owner: impl Into<String>, region_id: impl Into<String>) -> Self {
        Self {
            cloud_owner: cloud_owner.into(),
            region_id: region_id.into(),
            ..Self::default()
        }
    }

    /// The ONAP VIM id `<cloud owner>_<cloud region>`, as the policy's
    /// `Cloud Owner & Cloud Region (VIM id)` list names regions.
    pub fn vim_id(&self) -> String {
        format!("{}_{}", self.cloud_owner, self.region_id)
    }
}

/// What is being placed: the instance type derived from `<service, VNFC, cloud owner>` and
/// the resources it reserves.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Workload {
    /// Base instance type (flavor), e.g. `flavor-xyz`; the realized flavor is derived from
    /// it by the owner's isolation templates.
    pub instance_type: Option<String>,
    /// The instance type per cloud owner where it differs from `instance_type` (the seed's
    /// derivation from `<service, VNFC, cloud owner>`: `azure: Standard_D4s_v3`).
    pub instance_types: BTreeMap<String, String>,
    /// Resources the workload reserves per dimension (the Burstable QoS minimum), in the
    /// units of the regions' capacity (`vcpu`, `ram_mib`, `disk_gib`); empty when unknown.
    pub demand: BTreeMap<String, i64>,
}

impl Workload {
    /// The base instance type on `cloud_owner`'s regions: the owner's own, else the default.
    pub fn instance_type_for(&self, cloud_owner: &str) -> Option<&str> {
        self.instance_types
            .get(cloud_owner)
            .or(self.instance_type.as_ref())
            .map(String::as_str)
    }

    /// Whether the reserved resources are known (some dimension is asked for).
    pub fn has_demand(&self) -> bool {
        self.demand.values().any(|&v| v > 0)
    }
}
