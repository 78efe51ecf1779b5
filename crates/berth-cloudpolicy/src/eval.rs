//! Policy evaluation: capability and capacity checks, realized intents, net value, ranking.

use std::fmt;

use serde::Serialize;

use crate::cost::{CostBreakdown, CostFile};
use crate::error::CloudPolicyError;
use crate::owners::OwnerCatalog;
use crate::policy::{CloudSelectionPolicy, ResourceIsolation};
use crate::region::{CloudRegion, Workload};

/// A deployment intent an owner may not support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    /// Infrastructure high availability for the VNF.
    HighAvailability,
    /// Resource isolation with Guaranteed QoS.
    GuaranteedQos,
    /// Resource isolation with Burstable QoS.
    BurstableQos,
}

impl fmt::Display for Intent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::HighAvailability => "Infrastructure High Availability for VNF",
            Self::GuaranteedQos => "Guaranteed QoS",
            Self::BurstableQos => "Burstable QoS",
        })
    }
}

/// One dimension a private cloud's tenant lacks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shortfall {
    /// Capacity dimension (`vcpu`, `ram_mib`, ...).
    pub dimension: String,
    /// What the workload reserves.
    pub requested: i64,
    /// What the tenant has free.
    pub free: i64,
}

impl fmt::Display for Shortfall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} needs {}, {} free",
            self.dimension, self.requested, self.free
        )
    }
}

/// Why a region was dropped. Intent rejections hold for every region of the owner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
#[non_exhaustive]
pub enum Rejection {
    /// The region's cloud type is not in the policy's `Cloud Type (Cloud Provider)` list.
    CloudTypeNotAllowed {
        /// The region's cloud type, if known.
        cloud_type: Option<String>,
        /// The policy's list.
        allowed: Vec<String>,
    },
    /// The region's VIM id is not in the policy's `Cloud Owner & Cloud Region (VIM id)` list.
    VimNotAllowed {
        /// `<cloud owner>_<cloud region>`.
        vim_id: String,
        /// The policy's list.
        allowed: Vec<String>,
    },
    /// The owner's plugin does not support an intent the policy asks for.
    IntentUnsupported {
        /// The cloud owner.
        cloud_owner: String,
        /// The intent.
        intent: Intent,
    },
    /// The owner supports Burstable QoS but not with this oversubscription percentage.
    OversubscriptionNotOffered {
        /// The cloud owner.
        cloud_owner: String,
        /// The percentage asked for.
        percent: u32,
        /// The percentages the owner offers.
        offered: Vec<u32>,
    },
    /// The region does not offer the realized flavor.
    FlavorUnavailable {
        /// The realized flavor.
        flavor: String,
    },
    /// A private region without a tenant mapping: its capacity cannot be checked.
    NoTenant {
        /// `<cloud owner>_<cloud region>`.
        vim_id: String,
    },
    /// A private region, but what the workload reserves is not known: its capacity cannot
    /// be checked (passing it would claim a check that was not made).
    UnknownDemand {
        /// `<cloud owner>_<cloud region>`.
        vim_id: String,
    },
    /// The tenant of a private region lacks capacity.
    InsufficientCapacity {
        /// The tenant.
        tenant: String,
        /// Every dimension that falls short.
        shortfalls: Vec<Shortfall>,
    },
}

impl Rejection {
    /// Whether the rejection holds for every region of the owner (seed: "drop all the
    /// cloud regions for the cloud owner").
    pub fn is_owner_wide(&self) -> bool {
        matches!(
            self,
            Self::IntentUnsupported { .. } | Self::OversubscriptionNotOffered { .. }
        )
    }
}

fn quoted<T: fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CloudTypeNotAllowed {
                cloud_type,
                allowed,
            } => {
                let found = cloud_type
                    .as_deref()
                    .map_or("unknown".to_owned(), |t| format!("`{t}`"));
                write!(
                    f,
                    "cloud type {found} is not allowed; expected one of {}",
                    quoted(allowed)
                )
            }
            Self::VimNotAllowed { vim_id, allowed } => write!(
                f,
                "VIM `{vim_id}` is not allowed; expected one of {}",
                quoted(allowed)
            ),
            Self::IntentUnsupported {
                cloud_owner,
                intent,
            } => write!(f, "cloud owner `{cloud_owner}` does not support `{intent}`"),
            Self::OversubscriptionNotOffered {
                cloud_owner,
                percent,
                offered,
            } => write!(
                f,
                "cloud owner `{cloud_owner}` does not offer {percent}% oversubscription; expected one of {}",
                offered
                    .iter()
                    .map(|p| format!("{p}%"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Self::FlavorUnavailable { flavor } => {
                write!(f, "flavor `{flavor}` is not offered in this region")
            }
            Self::NoTenant { vim_id } => write!(
                f,
                "private region `{vim_id}` has no tenant mapped; expected one for the capacity check"
            ),
            Self::UnknownDemand { vim_id } => write!(
                f,
                "private region `{vim_id}` cannot be checked for capacity: the workload's demand is unknown; expected the resources it reserves (such as vcpu, ram_mib)"
            ),
            Self::InsufficientCapacity { tenant, shortfalls } => write!(
                f,
                "tenant `{tenant}` lacks capacity: {}",
                shortfalls
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// How the capacity check was passed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "check")]
pub enum CapacityCheck {
    /// Public cloud: always passes.
    PublicCloud,
    /// Private cloud: the tenant had room.
    Tenant {
        /// The tenant checked.
        tenant: String,
    },
}

/// How a region realizes the policy's intent (reported per placement, and echoed to the
/// orchestrator with the chosen region).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RealizedIntent {
    /// The cloud owner.
    pub cloud_owner: String,
    /// The cloud region.
    pub region_id: String,
    /// High availability realization (`host anti-affinity server group`, `availability
    /// set`); `None` when not asked for.
    pub high_availability: Option<String>,
    /// Resource isolation asked for and supported.
    pub isolation: Option<ResourceIsolation>,
    /// The flavor to deploy: the base instance type mapped by the isolation
    /// (`flavor-xyz-25-percent-oversubscription`), or the base itself without isolation.
    pub flavor: Option<String>,
    /// How the capacity check passed.
    pub capacity: CapacityCheck,
}

impl RealizedIntent {
    /// Feature group names of the realized intent, for cost lookup:
    /// `high-availability`, `guaranteed-qos`, `burstable-qos-<percent>`.
    pub fn feature_groups(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.high_availability.is_some() {
            out.push("high-availability".to_owned());
        }
        match self.isolation {
            Some(ResourceIsolation::Guaranteed) => out.push("guaranteed-qos".to_owned()),
            Some(ResourceIsolation::Burstable {
                oversubscription_percent,
            }) => out.push(format!("burstable-qos-{oversubscription_percent}")),
            None => {}
        }
        out
    }
}

/// Checks one region against a policy: allowed cloud type and VIM id, the owner's support
/// of every intent, the realized flavor's availability, then capacity (per tenant for
/// private clouds; public clouds always pass). The first failure is returned.
pub fn capability(
    policy: &CloudSelectionPolicy,
    owners: &OwnerCatalog,
    region: &CloudRegion,
    workload: &Workload,
) -> Result<RealizedIntent, Rejection> {
    let intent = &policy.content.intent;
    if let Some(allowed) = &intent.cloud_types {
        let ok = region
            .cloud_type
            .as_deref()
            .is_some_and(|t| allowed.iter().any(|a| a.eq_ignore_ascii_case(t)));
        if !ok {
            return Err(Rejection::CloudTypeNotAllowed {
                cloud_type: region.cloud_type.clone(),
                allowed: allowed.iter().cloned().collect(),
            });
        }
    }
    if let Some(allowed) = &intent.vim_ids {
        let vim_id = region.vim_id();
        if !allowed.contains(&vim_id) {
            return Err(Rejection::VimNotAllowed {
                vim_id,
                allowed: allowed.iter().cloned().collect(),
            });
        }
    }
    let owner = region.cloud_owner.as_str();
    let support = owners.support(owner);
    let unsupported = |intent| Rejection::IntentUnsupported {
        cloud_owner: owner.to_owned(),
        intent,
    };
    let high_availability = if intent.high_availability {
        let realization = support.and_then(|s| s.high_availability.clone());
        Some(realization.ok_or_else(|| unsupported(Intent::HighAvailability))?)
    } else {
        None
    };
    let base = workload.instance_type_for(owner);
    let flavor = match intent.isolation {
        None => base.map(str::to_owned),
        Some(ResourceIsolation::Guaranteed) => {
            let template = support
                .and_then(|s| s.guaranteed_qos.as_ref())
                .ok_or_else(|| unsupported(Intent::GuaranteedQos))?;
            template.render(base, None)
        }
        Some(ResourceIsolation::Burstable {
            oversubscription_percent: percent,
        }) => {
            let burst = support
                .and_then(|s| s.burstable_qos.as_ref())
                .ok_or_else(|| unsupported(Intent::BurstableQos))?;
            if !burst.percentages.contains(&percent) {
                return Err(Rejection::OversubscriptionNotOffered {
                    cloud_owner: owner.to_owned(),
                    percent,
                    offered: burst.percentages.iter().copied().collect(),
                });
            }
            burst.flavor.render(base, Some(percent))
        }
    };
    if let Some(f) = &flavor
        && !region.flavors.is_empty()
        && !region.flavors.contains(f)
    {
        return Err(Rejection::FlavorUnavailable { flavor: f.clone() });
    }
    let capacity = capacity_check(region, workload)?;
    Ok(RealizedIntent {
        cloud_owner: region.cloud_owner.clone(),
        region_id: region.region_id.clone(),
        high_availability,
        isolation: intent.isolation,
        flavor,
        capacity,
    })
}

/// The capacity check alone: public clouds always pass; a private cloud needs a tenant
/// with at least the workload's demand free in every dimension, and a known demand.
pub fn capacity_check(
    region: &CloudRegion,
    workload: &Workload,
) -> Result<CapacityCheck, Rejection> {
    if region.is_public {
        return Ok(CapacityCheck::PublicCloud);
    }
    let Some(tenant) = &region.tenant else {
        return Err(Rejection::NoTenant {
            vim_id: region.vim_id(),
        });
    };
    if !workload.has_demand() {
        return Err(Rejection::UnknownDemand {
            vim_id: region.vim_id(),
        });
    }
    let shortfalls: Vec<Shortfall> = workload
        .demand
        .iter()
        .filter(|&(_, &need)| need > 0)
        .filter_map(|(dim, &need)| {
            let free = region.capacity.get(dim).copied().unwrap_or(0);
            (need > free).then(|| Shortfall {
                dimension: dim.clone(),
                requested: need,
                free,
            })
        })
        .collect();
    if shortfalls.is_empty() {
        Ok(CapacityCheck::Tenant {
            tenant: tenant.clone(),
        })
    } else {
        Err(Rejection::InsufficientCapacity {
            tenant: tenant.clone(),
            shortfalls,
        })
    }
}

/// Weights of the two objectives; the defaults are the seed's `wc = 2`, `wd = 1` ("one $1
/// increase in price is as valuable as 2 kilometers in distance").
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Weights {
    cost: f64,
    distance: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Self {
            cost: 2.0,
            distance: 1.0,
        }
    }
}

impl Weights {
    /// Checked constructor: both weights finite and at least 0 (a 0 weight ignores that
    /// objective, as the seed's `wc = 0` for a service that does not care about cost).
    pub fn new(cost: f64, distance: f64) -> Result<Self, CloudPolicyError> {
        for (objective, value) in [("cost", cost), ("distance", distance)] {
            if !value.is_finite() || value < 0.0 {
                return Err(CloudPolicyError::InvalidWeight { objective, value });
            }
        }
        Ok(Self { cost, distance })
    }
    /// The cost weight `wc`.
    pub fn cost(&self) -> f64 {
        self.cost
    }
    /// The distance weight `wd`.
    pub fn distance(&self) -> f64 {
        self.distance
    }
}

/// Scales that make cost and distance comparable before weighting: the net value uses
/// `cost / cost_scale` and `distance_km / distance_scale_km`. The default (1 and 1) keeps
/// the seed's raw units, one cost unit against one kilometre.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Normalization {
    cost_scale: f64,
    distance_scale_km: f64,
}

impl Default for Normalization {
    fn default() -> Self {
        Self {
            cost_scale: 1.0,
            distance_scale_km: 1.0,
        }
    }
}

impl Normalization {
    /// Checked constructor: both scales finite and greater than 0.
    pub fn new(cost_scale: f64, distance_scale_km: f64) -> Result<Self, CloudPolicyError> {
        for (objective, value) in [("cost", cost_scale), ("distance", distance_scale_km)] {
            if !value.is_finite() || value <= 0.0 {
                return Err(CloudPolicyError::InvalidScale { objective, value });
            }
        }
        Ok(Self {
            cost_scale,
            distance_scale_km,
        })
    }

    /// Scales by the largest cost and distance among candidates, so each term lies in
    /// 0..=1; a maximum that is 0 or not finite scales by 1.
    pub fn by_max(points: impl IntoIterator<Item = (f64, f64)>) -> Self {
        let (mut cost, mut distance) = (0.0_f64, 0.0_f64);
        for (c, d) in points {
            if c.is_finite() {
                cost = cost.max(c);
            }
            if d.is_finite() {
                distance = distance.max(d);
            }
        }
        let pick = |m: f64| if m > 0.0 { m } else { 1.0 };
        Self {
            cost_scale: pick(cost),
            distance_scale_km: pick(distance),
        }
    }
    /// The cost scale.
    pub fn cost_scale(&self) -> f64 {
        self.cost_scale
    }
    /// The distance scale in kilometres.
    pub fn distance_scale_km(&self) -> f64 {
        self.distance_scale_km
    }
}

/// The multi-objective net value of a candidate; lower is better:
///
/// `net_value = wc * cost / cost_scale + wd * distance_km / distance_scale_km`
///
/// With the default weights and normalization, `$50, 190 km` gives `2*50 + 190 = 290`.
/// It is non-decreasing in `cost` and in `distance_km` (weights are at least 0, scales
/// positive).
pub fn net_value(
    cost: f64,
    distance_km: f64,
    weights: &Weights,
    normalization: &Normalization,
) -> f64 {
    weights.cost * cost / normalization.cost_scale
        + weights.distance * distance_km / normalization.distance_scale_km
}

/// A region offered to [`evaluate`] with its distance from the customer location.
#[derive(Debug, Clone, PartialEq)]
pub struct RegionOption {
    /// The region.
    pub region: CloudRegion,
    /// Distance from the customer location in kilometres.
    pub distance_km: f64,
}

/// How [`evaluate`] normalizes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scaling {
    /// Fixed scales; the default is [`Normalization::default`] (raw units).
    Fixed(Normalization),
    /// [`Normalization::by_max`] over the regions that pass the checks.
    MaxOfKept,
}

impl Default for Scaling {
    fn default() -> Self {
        Self::Fixed(Normalization::default())
    }
}

/// A region that passed, with its cost and net value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scored {
    /// Index into the regions given.
    pub index: usize,
    /// How the region realizes the intent.
    pub realized: RealizedIntent,
    /// The workload deployment cost; `None` when the policy turns cost evaluation off
    /// (the cost term is then 0).
    pub cost: Option<CostBreakdown>,
    /// Distance in kilometres.
    pub distance_km: f64,
    /// The net value; lower is better.
    pub net_value: f64,
}

/// A region that was dropped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dropped {
    /// Index into the regions given.
    pub index: usize,
    /// `<cloud owner>_<cloud region>`.
    pub vim_id: String,
    /// Why.
    pub rejection: Rejection,
}

/// The outcome of [`evaluate`]: every region given is either ranked or dropped.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Selection {
    /// Passing regions by ascending net value; ties keep input order.
    pub ranked: Vec<Scored>,
    /// Dropped regions in input order.
    pub dropped: Vec<Dropped>,
    /// The scales the net values were computed with (fixed, or the maximum over the kept
    /// regions), so a caller can re-weigh the same costs and distances consistently.
    pub normalization: Normalization,
}

impl Selection {
    /// The region to pick: the lowest net value.
    pub fn best(&self) -> Option<&Scored> {
        self.ranked.first()
    }
}

/// Everything [`evaluate`] needs besides the regions.
#[derive(Debug, Clone, Copy)]
pub struct Evaluation<'a> {
    /// The policy.
    pub policy: &'a CloudSelectionPolicy,
    /// Owner support.
    pub owners: &'a OwnerCatalog,
    /// Operator costs.
    pub costs: &'a CostFile,
    /// The workload.
    pub workload: &'a Workload,
    /// Objective weights.
    pub weights: Weights,
    /// Fixed scales or scaling by the kept regions' maxima.
    pub scaling: Scaling,
}

/// Runs [`capability`] on every region, prices the passing ones with
/// [`CostFile::breakdown`] (base instance type plus the realized intent's
/// [`RealizedIntent::feature_groups`]) when the policy asks for cost evaluation, and ranks
/// them by [`net_value`].
pub fn evaluate(ev: &Evaluation<'_>, regions: &[RegionOption]) -> Selection {
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for (index, option) in regions.iter().enumerate() {
        match capability(ev.policy, ev.owners, &option.region, ev.workload) {
            Ok(realized) => {
                let cost = ev.policy.content.cloud_cost_evaluation.then(|| {
                    ev.costs.breakdown(
                        &option.region,
                        ev.workload.instance_type_for(&option.region.cloud_owner),
                        &realized.feature_groups(),
                    )
                });
                kept.push((index, realized, cost, option.distance_km));
            }
            Err(rejection) => dropped.push(Dropped {
                index,
                vim_id: option.region.vim_id(),
                rejection,
            }),
        }
    }
    let cost_of = |c: &Option<CostBreakdown>| c.as_ref().map_or(0.0, |b| b.total);
    let normalization = match ev.scaling {
        Scaling::Fixed(n) => n,
        Scaling::MaxOfKept => {
            Normalization::by_max(kept.iter().map(|(_, _, c, d)| (cost_of(c), *d)))
        }
    };
    let mut ranked: Vec<Scored> = kept
        .into_iter()
        .map(|(index, realized, cost, distance_km)| Scored {
            index,
            net_value: net_value(cost_of(&cost), distance_km, &ev.weights, &normalization),
            realized,
            cost,
            distance_km,
        })
        .collect();
    ranked.sort_by(|a, b| {
        a.net_value
            .total_cmp(&b.net_value)
            .then(a.index.cmp(&b.index))
    });
    Selection {
        ranked,
        dropped,
        normalization,
    }
}
