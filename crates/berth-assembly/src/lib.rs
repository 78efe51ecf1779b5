//! TNC-O assembly descriptors: validate, resolve properties, plan instantiation, scale.
//!
//! An assembly descriptor (`name: assembly::NAME::VERSION`) composes resources and other
//! assemblies (`composition`), points at pre-existing instances (`references`, with semantic
//! version ranges such as `^1.0`), relates them (`relationships`, created when their endpoints
//! reach given states) and scales clusters by metric (`policies` of type `policy::scale`).
//!
//! Key types and steps:
//! - [`load`] / [`validate`]: text -> [`Descriptor`] via `berth-doc`; **all** problems in one
//!   pass as [`Diagnostic`]s with a field path and line:column.
//! - [`plan`] / [`plan_text`]: descriptor + request (top-level property values) -> [`Plan`]:
//!   instances (`web-1`, `web-2`, …), prerequisites, relationship instances, the
//!   dependency-ordered lifecycle ([`Step`]s) and one [`PlacementDemand`] per instance.
//!   [`Plan::render`] is the text form; the plan is also `serde` serializable.
//! - [`evaluate_scale`]: a [`ScalePolicy`] replayed over a metric series -> [`ScaleDecision`]s;
//!   [`scale`]: every policy of a [`Plan`] on current metrics (samples per `owner.metric`,
//!   current nodes per cluster) -> a [`ScaleOutcome`] each: the decision, the nodes after,
//!   and the [`Smoothing`] window the last samples leave.
//!
//! Invariants:
//! - Deterministic: same text and request, same plan (document order everywhere; instance ids
//!   are numbered in plan order; ties in the lifecycle broken by document order).
//! - Property values: request (unless `read-only`: then the request's value is ignored with a
//!   warning) > `value` > `default`. A `${component.x}`
//!   whose target is declared with a value resolves now; anything else (outputs such as
//!   `${balancer.publicIp}`) stays a pending placeholder and orders the user after the owner.
//! - Lifecycle model: `Install` brings an instance to Inactive, `Start` to Active; references
//!   are already Active. A relationship is created `post`/`pre` (defaults: source post, target
//!   pre) the step reaching its state. A cycle in that order is an error that names it.
//! - Never panics on input; does no IO.
//!
//! ```
//! let text = "name: assembly::demo::1.0\ndescription: d\ncomposition:\n  web:\n    type: resource::web::1.0\n    quantity: 2\n";
//! assert!(berth_assembly::validate(text).is_empty());
//! let plan = berth_assembly::plan_text(text, &Default::default()).unwrap();
//! assert_eq!(plan.components[0].instances[1].name, "web-2");
//! ```

mod error;
mod load;
mod model;
mod plan;
mod policy;
mod render;
mod resolve;
mod scale;
mod template;
mod version;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

pub use berth_doc::{Diagnostic, Severity};
pub use error::AssemblyError;
pub use model::{
    Capability, ClusterDef, Component, Count, Descriptor, Endpoint, Expr, Modifier, OpCall,
    PolicyDef, Promotion, Properties, PropertyDef, Reference, Relationship, State,
};
pub use plan::{
    Action, ComponentInstance, ComponentPlan, DEPLOYMENT_LOCATION, Note, PlacementDemand, Plan,
    Prerequisite, PropertyValue, RESOURCE_MANAGER, RelationshipInstance, Step, plan,
};
pub use policy::{ClusterSpec, ScalePolicy};
pub use scale::{Direction, ScaleDecision, ScaleOutcome, Smoothing, breach, evaluate_scale, scale};
pub use template::{Seg, Template};
pub use version::{Comparator, Op, TypeKind, TypeRef, Version, VersionReq, is_valid_name};

/// Parses and loads a descriptor: `Ok((descriptor, warnings))`, or every diagnostic when
/// there is an error (structural or in property references).
pub fn load(text: &str) -> Result<(Descriptor, Vec<Diagnostic>), Vec<Diagnostic>> {
    let doc = berth_doc::parse(text).map_err(|d| vec![d])?;
    let (d, mut diags) = load::load(&doc);
    let (_, more) = resolve::evaluate(&d, resolve::Mode::Validate);
    diags.extend(more);
    if diags.has_errors() {
        Err(diags.into_vec())
    } else {
        Ok((d, diags.into_vec()))
    }
}

/// Every problem in a descriptor (errors and warnings, sorted by position); empty when clean.
///
/// Required properties without a value are not errors here: a request supplies them. The
/// descriptor is also planned as [`plan`] would for a request that sets nothing, so a
/// lifecycle cycle that no request can break (the plan's own check) is an error here too.
pub fn validate(text: &str) -> Vec<Diagnostic> {
    match load(text) {
        Ok((d, mut warnings)) => {
            warnings.extend(plan::lifecycle_error(&d));
            warnings.sort_by(|a, b| (a.line, a.column, &a.path).cmp(&(b.line, b.column, &b.path)));
            warnings
        }
        Err(all) => all,
    }
}

/// Loads `text` and plans it for `request`; load warnings join [`Plan::warnings`].
pub fn plan_text(text: &str, request: &BTreeMap<String, String>) -> Result<Plan, Vec<Diagnostic>> {
    let (d, warnings) = load(text)?;
    let mut p = plan(&d, request)?;
    let mut notes: Vec<Note> = warnings.iter().map(Note::from).collect();
    notes.append(&mut p.warnings);
    p.warnings = notes;
    Ok(p)
}
