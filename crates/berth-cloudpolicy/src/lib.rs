//! ONAP OOF enhanced cloud selection policies (seed 002): validate the policy, drop regions
//! whose owner cannot realize the deployment intent or whose tenant lacks capacity, price
//! the workload from the operator's cost file and rank regions by a cost + distance net value.
//!
//! Key types:
//! - [`CloudSelectionPolicy`]: a policy document (YAML or JSON) validated against
//!   [`POLICY_SCHEMA`], the seed's schema fixed (below), with every problem reported at
//!   once as a [`berth_doc::Diagnostic`] with field path and line:column. Its
//!   [`DeploymentIntent`] holds the allowed cloud types and VIM ids, high availability and
//!   [`ResourceIsolation`] (Guaranteed, or Burstable with an oversubscription percentage).
//! - [`OwnerCatalog`]: the operator's owner capability file: which intents each cloud
//!   owner's plugin realizes and how (HA realization, flavor templates, the pre-defined
//!   Burstable percentages).
//! - [`CostFile`]: the operator's workload deployment cost policy (seed step 5b): prices per
//!   `<owner, region, instance type>` and per feature group, a fixed cost per owner
//!   otherwise, all in one [`CostUnit`] such as `USD/hour`.
//! - [`CloudRegion`] / [`Workload`]: the caller's view of a candidate region (filled from
//!   inventory) and of what is placed: the base instance type (per cloud owner where it
//!   differs, the seed's `<service, VNFC, cloud owner>`) and the resources it reserves.
//! - [`WorkloadCatalog`]: the workload file, [`Workload`]s by demand or VNFC name.
//! - [`capability`] returns a [`RealizedIntent`] (HA realization, flavor mapping such as
//!   `flavor-xyz-25-percent-oversubscription`, how capacity passed) or a [`Rejection`];
//!   [`deployment_cost`] prices a workload; [`net_value`] combines cost and distance;
//!   [`evaluate`] does all three for a list of regions and returns a [`Selection`].
//!
//! Net value (lower is better), the seed's `min (wd*distance + wc*cloud_net_value)` with
//! normalization: `wc * cost / cost_scale + wd * distance_km / distance_scale_km`. Defaults:
//! `wc = 2`, `wd = 1`, scales 1, so the seed's candidates `$100, 100 km`, `$150, 80 km` and
//! `$50, 190 km` score 300, 380 and 290, and the third is picked.
//!
//! Invariants:
//! - A rejection for an unsupported intent or percentage depends only on the owner, so
//!   every region of that owner is dropped (the seed's rule).
//! - Public clouds always pass the capacity check; a private cloud passes only with a
//!   tenant whose free capacity covers the workload's demand in every dimension, and is
//!   dropped when that demand is unknown (a check that was not made never passes).
//! - [`evaluate`] ranks or drops every region given, exactly once; ranking is by net value
//!   then input order, so it is deterministic.
//! - Costs are never negative; [`net_value`] is non-decreasing in cost and distance.
//!
//! What was fixed in the seed's schema (`oof_cloud_selection_policy_schema`), and why:
//! - The seed lists property schemas at the top level instead of under
//!   `"type": "object", "properties": {...}`; JSON Schema ignores unknown keywords, so the
//!   seed's `validate()` calls accepted any document. The fixed schema wraps them.
//! - `{"type", "array"}`, `{"type", "boolean"}`, `{"type", "string"}` are Python *set*
//!   literals, not schemas; they are now `{"type": "array"}` and so on.
//! - `{"type": "int"}` is not a JSON Schema type; it is `"integer"`, within 1..=1000.
//! - The instances write `Cloud Type (Cloud Provider)` as Python sets (`{"VMware VIO"}`),
//!   which JSON cannot carry; the fixtures use arrays, and the schema asks for unique
//!   strings.
//! - `Infrastructure Resource Isolation for VNF` is an enum of `Burstable QoS` and
//!   `Guaranteed QoS`; the oversubscription percentage is required with Burstable QoS and
//!   refused otherwise.
//! - `content` and `cloud-deployment-intent` refuse unknown fields, so a misspelt intent is
//!   an error rather than silently ignored; unknown top-level fields are warnings.
//! - `service`, `policyName` and `content` are required (nothing was).
//!
//! No IO and no clock: documents come in as text.
//!
//! ```
//! use berth_cloudpolicy::{
//!     CloudRegion, CloudSelectionPolicy, CostFile, OwnerCatalog, Weights, Normalization,
//!     Workload, capability, deployment_cost, net_value,
//! };
//!
//! let policy = CloudSelectionPolicy::parse(r#"
//! service: cloudSelectionPolicy
//! policyName: vcpe
//! content:
//!   cloud-cost-evaluation: true
//!   cloud-deployment-intent:
//!     Infrastructure Resource Isolation for VNF: Burstable QoS
//!     Infrastructure Resource Isolation for VNF - Burstable QoS Oversubscription Percentage: 25
//! "#)?;
//! let owners = OwnerCatalog::parse("owners: {vmware-dc: {burstable_qos: {percentages: [25, 50]}}}")?;
//! let costs = CostFile::parse("unit: USD/hour\ndefault_fixed_cost: 50\n")?;
//!
//! let mut region = CloudRegion::new("vmware-dc", "dfw1");
//! region.is_public = true;
//! let workload = Workload { instance_type: Some("flavor-xyz".into()), ..Workload::default() };
//!
//! let realized = capability(&policy, &owners, &region, &workload).expect("supported");
//! assert_eq!(realized.flavor.as_deref(), Some("flavor-xyz-25-percent-oversubscription"));
//!
//! let cost = deployment_cost(&costs, &region, Some("flavor-xyz"), &realized.feature_groups());
//! let value = net_value(cost, 190.0, &Weights::default(), &Normalization::default());
//! assert_eq!(value, 290.0); // the seed's "$50, 190 kilometers => value: 290"
//!
//! // An owner without Burstable QoS support is dropped.
//! let other = CloudRegion::new("azure", "eastus");
//! assert!(capability(&policy, &owners, &other, &workload).is_err());
//! # Ok::<(), berth_cloudpolicy::CloudPolicyError>(())
//! ```

mod cost;
mod error;
mod eval;
mod load;
mod owners;
mod policy;
mod region;
mod schema;
mod workloads;

#[cfg(test)]
mod tests;

pub use cost::{
    CostBreakdown, CostFile, CostPeriod, CostSource, CostUnit, OwnerCosts, PriceTable,
    deployment_cost,
};
pub use error::{CloudPolicyError, DocumentKind};
pub use eval::{
    CapacityCheck, Dropped, Evaluation, Intent, Normalization, RealizedIntent, RegionOption,
    Rejection, Scaling, Scored, Selection, Shortfall, Weights, capability, capacity_check,
    evaluate, net_value,
};
pub use owners::{
    BurstableSupport, DEFAULT_BURSTABLE_FLAVOR, DEFAULT_GUARANTEED_FLAVOR, DEFAULT_HA_REALIZATION,
    FlavorTemplate, OwnerCatalog, OwnerSupport,
};
pub use policy::{CloudSelectionPolicy, DeploymentIntent, PolicyContent, ResourceIsolation, field};
pub use region::{CloudRegion, GeoPoint, Workload};
pub use schema::{POLICY_SCHEMA, policy_schema};
pub use workloads::WorkloadCatalog;
