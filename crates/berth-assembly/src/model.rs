//! The loaded descriptor: sections as typed values that remember where they stood.

use berth_doc::Pos;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::template::Template;
use crate::version::{TypeRef, Version};

/// A scalar field that may hold `${…}` references.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// The text as written (numbers in their scalar form, e.g. `120`).
    pub text: String,
    /// Where it stood.
    pub pos: Pos,
    /// The parsed template; `None` when it is malformed (already reported).
    pub template: Option<Template>,
}

/// One entry of a properties section.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyDef {
    /// `type` (informational: every property is a string for now).
    pub type_name: Option<String>,
    /// `required: true` (meaningful at the top level only).
    pub required: bool,
    /// `default`.
    pub default: Option<Expr>,
    /// `value`.
    pub value: Option<Expr>,
    /// `description`.
    pub description: Option<String>,
    /// `read-only: true`: never overridden by a request.
    pub read_only: bool,
    /// Where the entry's key stood.
    pub pos: Pos,
}

/// A property section in document order.
pub type Properties = IndexMap<String, PropertyDef>;

/// A capability or requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capability {
    /// The agreed type string, e.g. `neutronNetwork`.
    pub type_name: String,
    /// `description`.
    pub description: Option<String>,
}

/// A promoted operation or metric: `owner.name` (`source-operation`, `source-metric`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Promotion {
    /// The component or reference that owns it.
    pub owner: String,
    /// The operation or metric name there.
    pub name: String,
    /// `description`.
    pub description: Option<String>,
    /// Where the dotted name stood.
    pub pos: Pos,
}

/// How many instances a component gets.
#[derive(Debug, Clone, PartialEq)]
pub enum Count {
    /// `quantity` (default 1).
    Quantity(Option<Expr>),
    /// `cluster`.
    Cluster(ClusterDef),
}

/// A `cluster` section; every field may be a `${…}` reference.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterDef {
    /// `initial-quantity` (default: minimum-nodes).
    pub initial_quantity: Option<Expr>,
    /// `minimum-nodes` (default 1).
    pub minimum_nodes: Option<Expr>,
    /// `maximum-nodes` (default: unbounded).
    pub maximum_nodes: Option<Expr>,
    /// `scaling-increment` (default 1).
    pub scaling_increment: Option<Expr>,
    /// Where the section stood.
    pub pos: Pos,
}

/// A `composition` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Component {
    /// `type`; `None` when missing or malformed (already reported).
    pub type_ref: Option<TypeRef>,
    /// `quantity` or `cluster`.
    pub count: Count,
    /// `properties`.
    pub properties: Properties,
    /// Where the entry's key stood.
    pub pos: Pos,
}

/// A `references` entry: a pre-existing instance found by its properties.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// `type`, possibly with a version range; `None` when malformed.
    pub type_ref: Option<TypeRef>,
    /// `properties`.
    pub properties: Properties,
    /// Where the entry's key stood.
    pub pos: Pos,
}

/// A lifecycle state a relationship waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum State {
    /// Installed, not started (reached by `Install`).
    Inactive,
    /// Running (reached by `Start`).
    Active,
}

/// Whether a relationship is created before or after its endpoint reaches the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Modifier {
    /// Before the state is reached.
    Pre,
    /// After the state is reached.
    Post,
}

/// One `component.capability` (or bare reference) of a relationship.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The component or reference.
    pub owner: String,
    /// The capability or requirement name (`None` for a bare reference).
    pub name: Option<String>,
    /// Whether `owner` is declared (an undeclared target is a warning and is skipped).
    pub known: bool,
}

/// A lifecycle operation call: `source.op`, `target.op` or `component.op`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpCall {
    /// `source`, `target` or a component/reference name.
    pub owner: String,
    /// The operation.
    pub operation: String,
}

/// A `relationships` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Relationship {
    /// `source-capabilities`.
    pub sources: Vec<Endpoint>,
    /// `target-requirements`.
    pub targets: Vec<Endpoint>,
    /// `source-state`.
    pub source_state: State,
    /// `target-state`.
    pub target_state: State,
    /// `source-state-modifier` (default post).
    pub source_modifier: Modifier,
    /// `target-state-modifier` (default pre).
    pub target_modifier: Modifier,
    /// `properties` (may use `${source.x}` / `${target.x}`).
    pub properties: Properties,
    /// `lifecycle.Create`, in call order.
    pub create: Vec<OpCall>,
    /// `lifecycle.Cease`, in call order.
    pub cease: Vec<OpCall>,
    /// Where the entry's key stood.
    pub pos: Pos,
}

/// A `policies` entry of type `policy::scale`.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyDef {
    /// `metric`: `owner.metric`.
    pub metric: Option<Promotion>,
    /// `target`: the clustered component to scale.
    pub target: Option<String>,
    /// `properties.scaleOut_threshold`.
    pub scale_out: Option<Expr>,
    /// `properties.scaleIn_threshold`.
    pub scale_in: Option<Expr>,
    /// `properties.smoothing` (default 1).
    pub smoothing: Option<Expr>,
    /// Where the entry's key stood.
    pub pos: Pos,
}

/// A loaded assembly descriptor.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Descriptor {
    /// NAME of `assembly::NAME::VERSION`.
    pub name: String,
    /// VERSION of `assembly::NAME::VERSION` (`None` when malformed).
    pub version: Option<Version>,
    /// `description`.
    pub description: Option<String>,
    /// Top-level `properties`.
    pub properties: Properties,
    /// `capabilities`.
    pub capabilities: IndexMap<String, Capability>,
    /// `requirements`.
    pub requirements: IndexMap<String, Capability>,
    /// `operations` (promoted).
    pub operations: IndexMap<String, Promotion>,
    /// `composition`.
    pub composition: IndexMap<String, Component>,
    /// `references`.
    pub references: IndexMap<String, Reference>,
    /// `relationships`.
    pub relationships: IndexMap<String, Relationship>,
    /// `metrics` (promoted).
    pub metrics: IndexMap<String, Promotion>,
    /// `policies`.
    pub policies: IndexMap<String, PolicyDef>,
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            State::Inactive => "Inactive",
            State::Active => "Active",
        })
    }
}

impl std::fmt::Display for Modifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Modifier::Pre => "pre",
            Modifier::Post => "post",
        })
    }
}
