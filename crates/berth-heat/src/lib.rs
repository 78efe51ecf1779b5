//! Heat (HOT) templates with seed 004 policy groups and relationships ("Proposal A").
//!
//! A template's `resources` keep their HOT shape and may carry `policies` and `relationships`;
//! a `groups` section nests groups (`id`, `members` of groups and `{get_resource: TID}`,
//! `metadata`, `policies`, `relationships`). Policies are `{type, properties, metadata}` with
//! `properties.hardConstraint` (default `true`) and, for soft ones, `properties.weight`
//! (penalty per violation, default 1). Relationships are `{related, policies}` where `related`
//! is `{get_resource: TID}`, `{get_group: TID}` or a pre-existing resource id.
//!
//! # Key types
//! - [`load`] / [`parse`] / [`validate`]: YAML or JSON text to a [`Template`], reporting
//!   **every** problem as a `berth_doc::Diagnostic` with field path and line:column.
//! - [`Template`]: [`Resource`]s (with [`ResourceKind`]: server by flavor, volume by size,
//!   volume attachment, other), the [`Group`] tree, every [`Policy`] in document order.
//! - [`PolicyKind`]: the seed 004 catalog ([`POLICY_TYPES`]): `OS::CoLocation`,
//!   `OS::AntiCoLocation` (`level`), `OS::LLMNAntiCoLocation` (`l1`, `l2`, `n`),
//!   `OS::NetMaxHops` (`hops`), `OS::NetBandwidth` (`bytes_per_second`),
//!   `OS::NetReachability`, `OS::NetEndpointAccess` (`protocols`, `endpoints`),
//!   `OS::LicensedProduct` (`catalog`, `product`), `OS::VolExclusive`, `OS::VolNotMoved`.
//! - [`Template::applications`]: the seed's recursion rules turned into primitive
//!   [`Application`]s: a symmetric policy on a group applies across its direct members
//!   ([`Subject::Across`]: pairs from different members only), a monadic one to each relevant
//!   covered resource, LLMN to the covered members, a relationship to (from, related), a volume
//!   attachment's policies to (instance, volume).
//!
//! # Invariants
//! - A loaded template has no errors; every resource is in exactly one group (without a
//!   `groups` section an implicit root group holds them all); `groups[0]` is the root.
//! - Policies stand where their shape allows: asymmetric ones never on groups, dyadic ones on
//!   a plain resource never, monadic ones never in relationships, LLMN only on groups.
//! - Only servers and volumes are placed, so a resource that a policy or relationship
//!   reaches has a type Berth knows ([`RESOURCE_TYPES`]): an unknown or nested-stack type
//!   there is an error naming the resource, its type and the nearest known type; elsewhere a
//!   near miss of a known type is an error and another unknown type a warning.
//! - Level names are not checked here: only a topology knows its vocabulary.
//!
//! ```
//! let t = berth_heat::parse(r#"
//! heat_template_version: 2013-05-23
//! resources:
//!   a: {type: OS::Nova::Server, properties: {flavor: m1.small}}
//!   b: {type: OS::Nova::Server, properties: {flavor: m1.small}}
//! groups:
//!   id: root
//!   members: [{get_resource: a}, {get_resource: b}]
//!   policies: [{type: OS::AntiCoLocation, properties: {level: host}}]
//! "#).unwrap();
//! let apps = t.applications();
//! assert_eq!(apps.len(), 1);
//! assert!(t.policies[0].hard);
//! ```

mod error;
mod load;
mod model;
mod policy;
mod types;

#[cfg(test)]
mod tests;

pub use error::HeatError;
pub use load::{Loaded, load, parse, validate};
pub use model::{
    Application, Endpoint, Group, GroupId, Member, Policy, PolicyId, Reference, Relationship,
    Resource, ResourceId, ResourceKind, Subject, Template,
};
pub use policy::{
    COMMON_PROPERTIES, POLICY_TYPES, PolicyKind, Relevance, Shape, properties_of, shape_of,
};
pub use types::RESOURCE_TYPES;
