//! Applying a cloud selection policy (seed 002) during homing: drop the cloud regions the
//! policy rejects, price the rest by net value, and remember each region's realized intent.

use std::collections::BTreeSet;

use berth_cloudpolicy::{
    CloudPolicyError, CloudRegion, CloudSelectionPolicy, CostFile, Evaluation, GeoPoint,
    OwnerCatalog, RegionOption, Rejection, Scaling, Scored, Weights, Workload, WorkloadCatalog,
    evaluate, net_value,
};
use berth_inventory::{AttrValue, Candidate, CandidateId, InventoryType};
use berth_template::{ConstraintKind, Endpoint, Expr, ObjFunction, Template};

use crate::EngineError;
use crate::resolve::Resolution;

/// A cloud selection policy with the operator files it needs, applied by [`crate::plan`]
/// to every demand the policy [`CloudSelectionPolicy::applies_to`] (by demand name).
///
/// How a cloud candidate becomes a [`CloudRegion`]:
/// - owner: `cloud_owner` (empty when missing, which no owner file lists);
/// - region id: `location_id`, else the candidate id;
/// - cloud type: the `cloud_type` attribute;
/// - public: the `is_public` boolean attribute, else whether the owner is in
///   [`CloudPolicyInput::public_owners`] (the owner file says what owners realize, not
///   whether they are public);
/// - tenant: the `tenant` attribute, else the candidate id, since an inventory candidate's
///   `capacity` already is the free capacity available to this deployment;
/// - capacity and flavors (names and ids): the candidate's.
///
/// What a demand places ([`CloudPolicyInput::workload_of`]): its entry in
/// [`CloudPolicyInput::workloads`] (by demand name, then by the policy's `content.vnfc`),
/// else [`CloudPolicyInput::workload`]. Where that says nothing of the resources reserved,
/// they are the demand's fit constraints' requests (`instance_fit`, `region_fit`,
/// `vim_fit`, `service`), added up as the built-in fit rule adds them. With neither, a
/// private region cannot be checked for capacity and is dropped
/// (`cloud-policy:unknown_demand`); public ones always pass.
///
/// Distances are great-circle kilometres from [`CloudPolicyInput::location`]; when it is
/// `None` the template's only located location is used, and with none (or several) the
/// distance term is 0. Candidates that are not cloud regions are neither dropped nor priced.
///
/// When the template's objective already has a `distance_between` that location and a
/// demand, that demand's distance is the template's to weigh: its objective term is the
/// net value without the distance part (`wd = 0`), so distance is not counted twice. The
/// placement still reports the policy's full net value (`cloud_net_value`) beside the term
/// that entered the objective (`cloud_objective_term`).
#[derive(Debug, Clone)]
pub struct CloudPolicyInput {
    /// The policy.
    pub policy: CloudSelectionPolicy,
    /// What each cloud owner realizes.
    pub owners: OwnerCatalog,
    /// Operator deployment costs.
    pub costs: CostFile,
    /// What is placed, for a matching demand without its own entry in `workloads`.
    pub workload: Workload,
    /// What each demand (or VNFC) places: base instance type, per owner where it differs,
    /// and reserved resources (the workload file).
    pub workloads: WorkloadCatalog,
    /// Net value weights (default: the seed's `wc = 2`, `wd = 1`).
    pub weights: Weights,
    /// Normalization (default: raw units).
    pub scaling: Scaling,
    /// Template location distances are measured from.
    pub location: Option<String>,
    /// Owners whose regions are public clouds when a candidate has no `is_public` attribute.
    pub public_owners: BTreeSet<String>,
}

impl CloudPolicyInput {
    /// The three documents with default workload, weights, scaling and location.
    pub fn new(policy: CloudSelectionPolicy, owners: OwnerCatalog, costs: CostFile) -> Self {
        CloudPolicyInput {
            policy,
            owners,
            costs,
            workload: Workload::default(),
            workloads: WorkloadCatalog::default(),
            weights: Weights::default(),
            scaling: Scaling::default(),
            location: None,
            public_owners: BTreeSet::new(),
        }
    }

    /// Parses the policy, owner file and cost file (YAML or JSON text); every problem of
    /// every document is reported, as invalid input.
    pub fn parse(policy: &str, owners: &str, costs: &str) -> Result<Self, EngineError> {
        Self::parse_with(policy, owners, costs, None)
    }

    /// [`CloudPolicyInput::parse`] with a workload file as well.
    pub fn parse_with(
        policy: &str,
        owners: &str,
        costs: &str,
        workloads: Option<&str>,
    ) -> Result<Self, EngineError> {
        let mut problems = Vec::new();
        let policy = CloudSelectionPolicy::parse(policy).map_err(|e| collect(&mut problems, e));
        let owners = OwnerCatalog::parse(owners).map_err(|e| collect(&mut problems, e));
        let costs = CostFile::parse(costs).map_err(|e| collect(&mut problems, e));
        let workloads = workloads
            .map(WorkloadCatalog::parse)
            .transpose()
            .map_err(|e| collect(&mut problems, e));
        match (policy, owners, costs, workloads) {
            (Ok(p), Ok(o), Ok(c), Ok(w)) => {
                let mut input = CloudPolicyInput::new(p, o, c);
                input.workloads = w.unwrap_or_default();
                Ok(input)
            }
            _ => Err(EngineError::InvalidInput { problems }),
        }
    }

    /// What `demand` places: its workload entry (by name, then the policy's VNFC) or the
    /// default workload, with the template's fit requests for the demand when neither
    /// says what it reserves.
    pub fn workload_of(&self, demand: &str, template: &Template) -> Workload {
        let vnfc = self.policy.content.vnfc.as_deref();
        let mut w = self
            .workloads
            .lookup(demand, vnfc)
            .unwrap_or(&self.workload)
            .clone();
        if !w.has_demand() {
            w.demand = fit_requests(template, demand);
        }
        w
    }
}

/// The amounts the template's fit constraints request for `demand`, added up per dimension
/// (a request that does not parse is the lowering's to refuse, so it adds nothing here).
fn fit_requests(template: &Template, demand: &str) -> std::collections::BTreeMap<String, i64> {
    let mut out = std::collections::BTreeMap::new();
    for c in template.constraints.values() {
        if !c.demands.iter().any(|d| d == demand) {
            continue;
        }
        let request = match &c.kind {
            ConstraintKind::InstanceFit(p)
            | ConstraintKind::RegionFit(p)
            | ConstraintKind::VimFit(p) => p.request.as_ref(),
            ConstraintKind::Service(p) => p.request.as_ref(),
            _ => continue,
        };
        if let Ok(amounts) = berth_constraints::parse_request(&c.name, request) {
            for (dim, n) in amounts {
                let slot = out.entry(dim).or_insert(0i64);
                *slot = slot.saturating_add(n);
            }
        }
    }
    out
}

fn collect(problems: &mut Vec<String>, e: CloudPolicyError) {
    match e {
        CloudPolicyError::Invalid {
            document,
            diagnostics,
        } => problems.extend(
            diagnostics
                .iter()
                .filter(|d| d.severity.to_string() == "error")
                .map(|d| format!("{document}: {d}")),
        ),
        other => problems.push(other.to_string()),
    }
}

/// The triage name of a rejection: `cloud-policy:<reason>` (`intent_unsupported`, ...).
pub fn rejection_name(r: &Rejection) -> String {
    let reason = serde_json::to_value(r)
        .ok()
        .and_then(|v| v.get("reason").and_then(|s| s.as_str()).map(str::to_owned))
        .unwrap_or_else(|| "rejected".to_owned());
    format!("cloud-policy:{reason}")
}

/// A kept cloud region's score and the part of it that enters the objective.
#[derive(Debug, Clone)]
pub(crate) struct Priced {
    /// The policy's evaluation (full net value).
    pub(crate) scored: Scored,
    /// What the objective adds: the net value, without its distance part when the
    /// template's objective already weighs that distance.
    pub(crate) objective_term: f64,
}

/// Per demand (`None` = the policy does not apply), per kept candidate: its price (`None`
/// for candidates that are not cloud regions).
pub(crate) type Applied = Vec<Option<Vec<Option<Priced>>>>;

/// Whether `expr` has a `distance_between` the location `origin` and the demand `demand`.
fn weighs_distance(expr: &Expr, origin: &str, demand: &str) -> bool {
    match expr {
        Expr::Const(_) => false,
        Expr::Sum(xs) | Expr::Product(xs) | Expr::Min(xs) | Expr::Max(xs) => {
            xs.iter().any(|x| weighs_distance(x, origin, demand))
        }
        Expr::Normalize { expr, .. } => weighs_distance(expr, origin, demand),
        Expr::Function(ObjFunction::DistanceBetween { a, b }) => matches!(
            (a, b),
            (Endpoint::Location(l), Endpoint::Demand(d)) | (Endpoint::Demand(d), Endpoint::Location(l))
                if l == origin && d == demand
        ),
        Expr::Function(_) => false,
    }
}

fn attr_str(c: &Candidate, key: &str) -> Option<String> {
    match c.attributes.get(key) {
        Some(AttrValue::Str(s)) => Some(s.clone()),
        _ => None,
    }
}

fn region(c: &Candidate, input: &CloudPolicyInput) -> CloudRegion {
    let owner = c.cloud_owner.clone().unwrap_or_default();
    let id = c
        .location_id
        .clone()
        .unwrap_or_else(|| c.candidate_id.to_string());
    let mut r = CloudRegion::new(owner, id);
    r.cloud_type = attr_str(c, "cloud_type");
    r.is_public = match c.attributes.get("is_public") {
        Some(AttrValue::Bool(b)) => *b,
        _ => input.public_owners.contains(&r.cloud_owner),
    };
    r.tenant = Some(attr_str(c, "tenant").unwrap_or_else(|| c.candidate_id.to_string()));
    r.location = c
        .latitude
        .zip(c.longitude)
        .map(|(latitude, longitude)| GeoPoint {
            latitude,
            longitude,
        });
    for f in &c.flavors {
        r.flavors.insert(f.name.clone());
        r.flavors.insert(f.id.clone());
    }
    r.capacity = c.capacity.clone();
    r
}

/// A template location's name and coordinates.
type Origin = (String, (f64, f64));

/// The location distances are measured from, or an error naming a bad location.
fn origin(res: &Resolution, input: &CloudPolicyInput) -> Result<Option<Origin>, EngineError> {
    match &input.location {
        Some(name) => match res.space.locations.get(name) {
            Some(&at) => Ok(Some((name.clone(), at))),
            None => Err(EngineError::invalid(format!(
                "cloud policy location `{name}` is not a located template location; expected one of: {}",
                res.space
                    .locations
                    .keys()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        },
        None if res.space.locations.len() == 1 => Ok(res
            .space
            .locations
            .iter()
            .next()
            .map(|(name, &at)| (name.clone(), at))),
        None => Ok(None),
    }
}

/// Drops rejected cloud candidates of every matching demand (recording them as inventory
/// removals named by [`rejection_name`]) and scores the kept ones.
pub(crate) fn apply(
    res: &mut Resolution,
    input: &CloudPolicyInput,
    template: &Template,
) -> Result<Applied, EngineError> {
    let origin = origin(res, input)?;
    let from = origin.as_ref().map(|(_, at)| *at);
    let cost_only = Weights::new(input.weights.cost(), 0.0)
        .map_err(|e| EngineError::invalid(format!("cloud policy weights: {e}")))?;
    let mut applied = Vec::with_capacity(res.space.demands.len());
    for (d, ds) in res.space.demands.iter_mut().enumerate() {
        if !input.policy.applies_to(&ds.name) {
            applied.push(None);
            continue;
        }
        let workload = input.workload_of(&ds.name, template);
        let ev = Evaluation {
            policy: &input.policy,
            owners: &input.owners,
            costs: &input.costs,
            workload: &workload,
            weights: input.weights,
            scaling: input.scaling,
        };
        let mut removed: Vec<(CandidateId, String)> = Vec::new();
        let mut options = Vec::new();
        let mut option_of = vec![None; ds.candidates.len()];
        for (i, c) in ds.candidates.iter().enumerate() {
            if c.candidate_type != InventoryType::Cloud {
                continue;
            }
            let distance_km = match (from, c.latitude.zip(c.longitude)) {
                (None, _) => 0.0,
                (Some(o), Some(at)) => berth_constraints::geo::haversine_km(o, at),
                (Some(_), None) => {
                    removed.push((
                        c.candidate_id.clone(),
                        "cloud-policy:no_coordinates".to_owned(),
                    ));
                    continue;
                }
            };
            option_of[i] = Some(options.len());
            options.push(RegionOption {
                region: region(c, input),
                distance_km,
            });
        }
        let selection = evaluate(&ev, &options);
        let template_weighs_distance = match (&origin, &template.optimization) {
            (Some((name, _)), Some(obj)) => weighs_distance(&obj.expr, name, &ds.name),
            _ => false,
        };
        let mut scored: Vec<Option<Priced>> = vec![None; options.len()];
        for s in selection.ranked {
            if !s.net_value.is_finite() {
                continue;
            }
            // The same cost and scales without the distance part.
            let objective_term = if template_weighs_distance {
                let cost = s.cost.as_ref().map_or(0.0, |c| c.total);
                net_value(cost, s.distance_km, &cost_only, &selection.normalization)
            } else {
                s.net_value
            };
            if let Some(slot) = scored.get_mut(s.index) {
                *slot = Some(Priced {
                    objective_term,
                    scored: s,
                });
            }
        }
        let mut reasons: Vec<Option<String>> = vec![None; options.len()];
        for dr in &selection.dropped {
            if let Some(slot) = reasons.get_mut(dr.index) {
                *slot = Some(rejection_name(&dr.rejection));
            }
        }
        let mut kept = Vec::new();
        let mut kept_scores = Vec::new();
        for (i, c) in std::mem::take(&mut ds.candidates).into_iter().enumerate() {
            let opt = option_of.get(i).copied().flatten();
            if c.candidate_type != InventoryType::Cloud {
                kept.push(c);
                kept_scores.push(None);
                continue;
            }
            let Some(o) = opt else {
                // Already recorded (no coordinates).
                continue;
            };
            match scored.get_mut(o).and_then(Option::take) {
                Some(s) => {
                    kept.push(c);
                    kept_scores.push(Some(s));
                }
                None => {
                    let why = reasons
                        .get(o)
                        .cloned()
                        .flatten()
                        .unwrap_or_else(|| "cloud-policy:net_value".to_owned());
                    removed.push((c.candidate_id.clone(), why));
                }
            }
        }
        ds.candidates = kept;
        if let Some(inv) = res.inventory.get_mut(d) {
            inv.1.extend(removed);
        }
        applied.push(Some(kept_scores));
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use berth_cloudpolicy::Intent;
    use berth_inventory::Flavor;

    use super::*;

    fn input() -> CloudPolicyInput {
        CloudPolicyInput::parse(
            "service: cloudSelectionPolicy\npolicyName: p\ncontent: {cloud-cost-evaluation: false, cloud-deployment-intent: {}}\n",
            "owners: {}",
            "unit: USD/hour\ndefault_fixed_cost: 1\n",
        )
        .expect("valid documents")
    }

    #[test]
    fn candidate_fields_become_the_region() {
        let mut c = Candidate::new("dfw1", InventoryType::Cloud);
        c.cloud_owner = Some("aws".into());
        c.location_id = Some("us-east-1".into());
        c.latitude = Some(1.0);
        c.longitude = Some(2.0);
        c.capacity.insert("vcpu".into(), 8);
        c.flavors.push(Flavor {
            id: "f-1".into(),
            name: "m1.large".into(),
            capabilities: Vec::new(),
        });
        c.attributes
            .insert("cloud_type".into(), AttrValue::Str("VMware VIO".into()));
        let mut inp = input();
        let r = region(&c, &inp);
        assert_eq!(r.vim_id(), "aws_us-east-1");
        assert_eq!(r.cloud_type.as_deref(), Some("VMware VIO"));
        assert!(!r.is_public);
        assert_eq!(r.tenant.as_deref(), Some("dfw1"));
        assert_eq!(r.capacity.get("vcpu"), Some(&8));
        assert!(r.flavors.contains("m1.large") && r.flavors.contains("f-1"));
        assert_eq!(
            r.location.map(|g| (g.latitude, g.longitude)),
            Some((1.0, 2.0))
        );

        inp.public_owners.insert("aws".into());
        assert!(region(&c, &inp).is_public);
        // The attribute wins over the owner list.
        c.attributes
            .insert("is_public".into(), AttrValue::Bool(false));
        c.attributes
            .insert("tenant".into(), AttrValue::Str("project-7".into()));
        let r = region(&c, &inp);
        assert!(!r.is_public);
        assert_eq!(r.tenant.as_deref(), Some("project-7"));
    }

    #[test]
    fn rejections_are_named_by_their_reason() {
        let r = Rejection::IntentUnsupported {
            cloud_owner: "azure".into(),
            intent: Intent::BurstableQos,
        };
        assert_eq!(rejection_name(&r), "cloud-policy:intent_unsupported");
        let r = Rejection::NoTenant {
            vim_id: "x_y".into(),
        };
        assert_eq!(rejection_name(&r), "cloud-policy:no_tenant");
    }
}
