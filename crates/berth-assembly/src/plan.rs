//! The instantiation plan: instances, prerequisites, relationship instances, ordered lifecycle, placement.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

use berth_doc::{Diagnostic, Diagnostics, Path, Pos};
use indexmap::IndexMap;
use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use serde::{Deserialize, Serialize};

use crate::model::{Descriptor, Modifier, State};
use crate::policy::{ClusterSpec, ScalePolicy};
use crate::resolve::{Evaluated, Mode, Piece, Resolved, ResolvedProps, evaluate};

/// The special property naming where a component is deployed.
pub const DEPLOYMENT_LOCATION: &str = "deploymentLocation";
/// The special property naming the resource manager that manages a component.
pub const RESOURCE_MANAGER: &str = "resourceManager";

/// A resolved property value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PropertyValue {
    /// Declared without a value (e.g. an output the resource fills in).
    Unset,
    /// Fully known now.
    Known(String),
    /// Contains `${instance.property}` placeholders known only once those exist.
    Pending {
        /// The value with placeholders, e.g. `${balancer-1.publicIp}`.
        text: String,
        /// The placeholders it waits for, e.g. `balancer-1.publicIp`.
        awaits: Vec<String>,
    },
}

impl PropertyValue {
    /// The value text (with placeholders when pending), `None` when unset.
    pub fn text(&self) -> Option<&str> {
        match self {
            PropertyValue::Unset => None,
            PropertyValue::Known(t) | PropertyValue::Pending { text: t, .. } => Some(t),
        }
    }
}

impl fmt::Display for PropertyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PropertyValue::Unset => f.write_str("(unset)"),
            PropertyValue::Known(t) => f.write_str(t),
            PropertyValue::Pending { text, .. } => write!(f, "{text} (pending)"),
        }
    }
}

/// A warning kept with the plan (serializable mirror of a [`Diagnostic`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// Field path.
    pub path: String,
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// 1-based column, 0 when unknown.
    pub column: u32,
    /// What it says.
    pub message: String,
}

impl From<&Diagnostic> for Note {
    fn from(d: &Diagnostic) -> Self {
        Note {
            path: d.path.clone(),
            line: d.line,
            column: d.column,
            message: d.message.clone(),
        }
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pos = Pos {
            line: self.line,
            column: self.column,
        };
        match (self.path.is_empty(), pos.is_known()) {
            (false, true) => write!(f, "{} ({pos}): {}", self.path, self.message),
            (false, false) => write!(f, "{}: {}", self.path, self.message),
            (true, true) => write!(f, "({pos}): {}", self.message),
            (true, false) => f.write_str(&self.message),
        }
    }
}

/// A `references` entry: must exist before anything is instantiated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prerequisite {
    /// Local name in the assembly.
    pub name: String,
    /// `kind::NAME::RANGE`, e.g. `assembly::storage_cluster::^1.0`.
    pub type_ref: String,
    /// Properties used to find the single matching instance.
    pub properties: IndexMap<String, PropertyValue>,
    /// Resolved `deploymentLocation`, if declared.
    pub deployment_location: Option<String>,
    /// Resolved `resourceManager`, if declared.
    pub resource_manager: Option<String>,
}

/// A component expanded into instances.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentPlan {
    /// Name in `composition`.
    pub name: String,
    /// `resource::NAME::VERSION` or `assembly::NAME::VERSION`.
    pub type_ref: String,
    /// The cluster bounds, for clustered components.
    pub cluster: Option<ClusterSpec>,
    /// The instances, `NAME-1`, `NAME-2`, …
    pub instances: Vec<ComponentInstance>,
}

/// One instance of a component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentInstance {
    /// `${instance.name}`, e.g. `streamer-2`.
    pub name: String,
    /// `${instance.id}`, e.g. `i3` (deterministic, in plan order).
    pub id: String,
    /// Resolved properties.
    pub properties: IndexMap<String, PropertyValue>,
}

/// One relationship between a source and a target instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelationshipInstance {
    /// Name in `relationships`.
    pub relationship: String,
    /// Source instance or reference.
    pub source: String,
    /// The capability named in source-capabilities (absent for a bare reference).
    pub source_capability: Option<String>,
    /// Target instance.
    pub target: String,
    /// The requirement named in target-requirements.
    pub target_requirement: Option<String>,
    /// When, relative to the source: `source-state` and its modifier.
    pub source_state: (State, Modifier),
    /// When, relative to the target: `target-state` and its modifier.
    pub target_state: (State, Modifier),
    /// Resolved relationship properties (`${source.x}`/`${target.x}` substituted).
    pub properties: IndexMap<String, PropertyValue>,
    /// Create operations, in call order, on instances (`balancer-1.AddBalancedHttpServer`).
    pub create: Vec<String>,
    /// Cease operations, in call order.
    pub cease: Vec<String>,
}

/// What a lifecycle step does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Action {
    /// Install an instance: it reaches Inactive.
    Install {
        /// The instance.
        instance: String,
    },
    /// Start an instance: it reaches Active.
    Start {
        /// The instance.
        instance: String,
    },
    /// Create a relationship instance (index into [`Plan::relationships`]).
    CreateRelationship {
        /// Index into [`Plan::relationships`].
        index: usize,
        /// Its name.
        relationship: String,
        /// Source instance or reference.
        source: String,
        /// Target instance.
        target: String,
    },
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Install { instance } => write!(f, "install {instance}"),
            Action::Start { instance } => write!(f, "start {instance}"),
            Action::CreateRelationship {
                relationship,
                source,
                target,
                ..
            } => write!(f, "create {relationship} ({source} -> {target})"),
        }
    }
}

/// One step of the ordered lifecycle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// 1-based position.
    pub number: usize,
    /// What it does.
    pub action: Action,
    /// Steps (by number) that must be done first.
    pub after: Vec<usize>,
}

/// Where one instance must be placed: what the homing engine turns into a demand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacementDemand {
    /// Component name.
    pub component: String,
    /// Instance name.
    pub instance: String,
    /// The component's type.
    pub type_ref: String,
    /// Resolved `deploymentLocation` (e.g. an OpenStack project), if declared.
    pub deployment_location: Option<String>,
    /// Resolved `resourceManager`, if declared.
    pub resource_manager: Option<String>,
    /// Whether either value still waits for a runtime placeholder.
    pub pending: bool,
}

/// The instantiation plan of an assembly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// NAME of `assembly::NAME::VERSION`.
    pub assembly: String,
    /// VERSION.
    pub version: String,
    /// `description`.
    pub description: Option<String>,
    /// Name and id of the assembly instance (`${instance.…}` in top-level properties).
    pub instance: (String, String),
    /// Resolved top-level properties.
    pub properties: IndexMap<String, PropertyValue>,
    /// References: pre-existing, found before instantiation.
    pub prerequisites: Vec<Prerequisite>,
    /// Components and their instances, in document order.
    pub components: Vec<ComponentPlan>,
    /// Relationship instances, per relationship, source and target.
    pub relationships: Vec<RelationshipInstance>,
    /// Dependency-ordered steps.
    pub lifecycle: Vec<Step>,
    /// One demand per component instance.
    pub placement: Vec<PlacementDemand>,
    /// Promoted operations: name -> `instance.operation`.
    pub operations: IndexMap<String, String>,
    /// Promoted metrics: name -> `instance.metric`.
    pub metrics: IndexMap<String, String>,
    /// Resolved scale policies.
    pub policies: Vec<ScalePolicy>,
    /// Warnings found while planning.
    pub warnings: Vec<Note>,
}

impl Plan {
    /// The cluster bounds of a component, for [`crate::evaluate_scale`].
    pub fn cluster(&self, component: &str) -> Option<&ClusterSpec> {
        self.components
            .iter()
            .find(|c| c.name == component)
            .and_then(|c| c.cluster.as_ref())
    }
}

/// An endpoint instance of a relationship.
#[derive(Clone)]
struct End {
    owner: String,
    /// `(instance name, id)` for components; `None` for references.
    instance: Option<(String, String)>,
    cap: Option<String>,
}

impl End {
    fn label(&self) -> String {
        self.instance
            .as_ref()
            .map_or_else(|| self.owner.clone(), |i| i.0.clone())
    }
}

struct Renderer<'a> {
    ev: &'a Evaluated,
    /// Instance names per component.
    instances: &'a BTreeMap<String, Vec<(String, String)>>,
    assembly: (String, String),
}

impl Renderer<'_> {
    fn runtime(&self, owner: &str, prop: &str) -> String {
        match self.instances.get(owner) {
            Some(list) if list.len() == 1 => format!("{}.{prop}", list[0].0),
            Some(_) => format!("{owner}[*].{prop}"),
            None => format!("{owner}.{prop}"),
        }
    }

    fn pieces(
        &self,
        r: &Resolved,
        inst: &(String, String),
        sides: Option<(&End, &End)>,
        text: &mut String,
        awaits: &mut Vec<String>,
    ) {
        for p in &r.pieces {
            match p {
                Piece::Lit(s) => text.push_str(s),
                Piece::InstanceName => text.push_str(&inst.0),
                Piece::InstanceId => text.push_str(&inst.1),
                Piece::Param(n) => {
                    text.push_str(&format!("${{{n}}}"));
                    awaits.push(n.clone());
                }
                Piece::Runtime { owner, prop } => {
                    let r = self.runtime(owner, prop);
                    text.push_str(&format!("${{{r}}}"));
                    awaits.push(r);
                }
                Piece::Side { source, prop } => {
                    let Some((s, t)) = sides else { continue };
                    let end = if *source { s } else { t };
                    let declared = match &end.instance {
                        Some(_) => self
                            .ev
                            .components
                            .get(&end.owner)
                            .and_then(|c| c.props.get(prop)),
                        None => self.ev.references.get(&end.owner).and_then(|p| p.get(prop)),
                    };
                    match (declared, &end.instance) {
                        (Some(Some(v)), Some(i)) => self.pieces(v, i, None, text, awaits),
                        (Some(Some(v)), None) => self.pieces(v, &self.assembly, None, text, awaits),
                        _ => {
                            let r = format!("{}.{prop}", end.label());
                            text.push_str(&format!("${{{r}}}"));
                            awaits.push(r);
                        }
                    }
                }
            }
        }
    }

    fn value(
        &self,
        r: &Option<Resolved>,
        inst: &(String, String),
        sides: Option<(&End, &End)>,
    ) -> PropertyValue {
        let Some(r) = r else {
            return PropertyValue::Unset;
        };
        let mut text = String::new();
        let mut awaits = Vec::new();
        self.pieces(r, inst, sides, &mut text, &mut awaits);
        if awaits.is_empty() {
            PropertyValue::Known(text)
        } else {
            PropertyValue::Pending { text, awaits }
        }
    }

    fn section(
        &self,
        props: &ResolvedProps,
        inst: &(String, String),
        sides: Option<(&End, &End)>,
    ) -> IndexMap<String, PropertyValue> {
        props
            .iter()
            .map(|(k, v)| (k.clone(), self.value(v, inst, sides)))
            .collect()
    }

    fn op(&self, owner: &str, op: &str, s: &End, t: &End) -> String {
        let who = match owner {
            "source" => s.label(),
            "target" => t.label(),
            o if s.owner == o => s.label(),
            o if t.owner == o => t.label(),
            o => match self.instances.get(o) {
                Some(list) if list.len() == 1 => list[0].0.clone(),
                Some(_) => format!("{o}[*]"),
                None => o.to_owned(),
            },
        };
        format!("{who}.{op}")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Install(usize),
    Start(usize),
    Create(usize),
}

/// The lifecycle cycle [`plan`] refuses `d` for with a request that sets nothing (the
/// defaults), if it gets that far: such a cycle comes from the descriptor's own dependencies.
pub(crate) fn lifecycle_error(d: &Descriptor) -> Option<Diagnostic> {
    match build(d, &BTreeMap::new()) {
        Err(Failure::Lifecycle(e, _)) => Some(e),
        _ => None,
    }
}

/// Why [`build`] gave no plan: a lifecycle cycle (with the warnings so far), or any other
/// problems.
enum Failure {
    Lifecycle(Diagnostic, Vec<Diagnostic>),
    Other(Vec<Diagnostic>),
}

/// Builds the plan of `d` for a request (top-level property values, `name -> value`).
///
/// Returns every problem at once: request keys that are unknown, required
/// properties without a value, unresolved or cyclic references, counts out of bounds, and a
/// lifecycle cycle (named step by step). A request setting a read-only property is a
/// warning in [`Plan::warnings`]: its value is ignored, as seed 003 says.
pub fn plan(d: &Descriptor, request: &BTreeMap<String, String>) -> Result<Plan, Vec<Diagnostic>> {
    build(d, request).map_err(|f| match f {
        Failure::Lifecycle(e, mut warnings) => {
            warnings.push(e);
            warnings
        }
        Failure::Other(all) => all,
    })
}

fn build(d: &Descriptor, request: &BTreeMap<String, String>) -> Result<Plan, Failure> {
    let mut diags = Diagnostics::new();
    for key in request.keys() {
        let path = Path::root().key("request").key(key.clone());
        match d.properties.get(key) {
            None => diags.error(
                &path,
                Pos::UNKNOWN,
                format!(
                    "unknown property `{key}`; expected one of {}",
                    d.properties
                        .keys()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            // Seed 003: a read-only property is not overridden by the request.
            Some(p) if p.read_only => diags.warning(
                &path,
                Pos::UNKNOWN,
                format!("property `{key}` is read-only; the request's value is ignored"),
            ),
            Some(_) => {}
        }
    }
    let (ev, more) = evaluate(d, Mode::Plan(request));
    diags.extend(more);
    for (name, c) in &d.composition {
        if c.type_ref.is_none() {
            diags.error(
                &Path::root()
                    .key("composition")
                    .key(name.clone())
                    .key("type"),
                c.pos,
                "component has no valid type; expected `resource::NAME::VERSION`",
            );
        }
    }
    if diags.has_errors() {
        return Err(Failure::Other(diags.into_vec()));
    }

    let assembly = (d.name.clone(), "i0".to_owned());
    let mut instances: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut seq = 0usize;
    for (name, ec) in &ev.components {
        let list = (1..=ec.count.unwrap_or(0))
            .map(|k| {
                seq += 1;
                (format!("{name}-{k}"), format!("i{seq}"))
            })
            .collect();
        instances.insert(name.clone(), list);
    }
    let rd = Renderer {
        ev: &ev,
        instances: &instances,
        assembly: assembly.clone(),
    };

    let properties = rd.section(&ev.top, &assembly, None);
    let text_of = |props: &IndexMap<String, PropertyValue>, key: &str| {
        props.get(key).and_then(|v| v.text().map(str::to_owned))
    };

    let mut prerequisites = Vec::new();
    for (name, r) in &d.references {
        let props = ev
            .references
            .get(name)
            .map(|p| rd.section(p, &assembly, None))
            .unwrap_or_default();
        for key in [DEPLOYMENT_LOCATION, RESOURCE_MANAGER] {
            if !props.contains_key(key) {
                diags.warning(
                    &Path::root()
                        .key("references")
                        .key(name.clone())
                        .key("properties"),
                    r.pos,
                    format!("no `{key}`; expected it on every reference to find the instance"),
                );
            }
        }
        prerequisites.push(Prerequisite {
            name: name.clone(),
            type_ref: r
                .type_ref
                .as_ref()
                .map_or_else(String::new, ToString::to_string),
            deployment_location: text_of(&props, DEPLOYMENT_LOCATION),
            resource_manager: text_of(&props, RESOURCE_MANAGER),
            properties: props,
        });
    }

    let mut components = Vec::new();
    let mut placement = Vec::new();
    // Flat instance table: (component, name, id) in plan order.
    let mut flat: Vec<(String, String, String)> = Vec::new();
    for (name, c) in &d.composition {
        let Some(ec) = ev.components.get(name) else {
            continue;
        };
        let type_ref = c
            .type_ref
            .as_ref()
            .map_or_else(String::new, ToString::to_string);
        let mut list = Vec::new();
        for inst in instances.get(name).into_iter().flatten() {
            let props = rd.section(&ec.props, inst, None);
            let pending = [DEPLOYMENT_LOCATION, RESOURCE_MANAGER]
                .iter()
                .any(|k| matches!(props.get(*k), Some(PropertyValue::Pending { .. })));
            placement.push(PlacementDemand {
                component: name.clone(),
                instance: inst.0.clone(),
                type_ref: type_ref.clone(),
                deployment_location: text_of(&props, DEPLOYMENT_LOCATION),
                resource_manager: text_of(&props, RESOURCE_MANAGER),
                pending,
            });
            flat.push((name.clone(), inst.0.clone(), inst.1.clone()));
            list.push(ComponentInstance {
                name: inst.0.clone(),
                id: inst.1.clone(),
                properties: props,
            });
        }
        for key in [DEPLOYMENT_LOCATION, RESOURCE_MANAGER] {
            if !ec.props.contains_key(key) {
                diags.warning(
                    &Path::root()
                        .key("composition")
                        .key(name.clone())
                        .key("properties"),
                    c.pos,
                    format!("no `{key}`; its placement demand is unconstrained there"),
                );
            }
        }
        components.push(ComponentPlan {
            name: name.clone(),
            type_ref,
            cluster: ec.cluster,
            instances: list,
        });
    }

    // Relationship instances: every known source endpoint instance x every target instance.
    let ends = |e: &crate::model::Endpoint| -> Vec<End> {
        if d.references.contains_key(&e.owner) {
            return vec![End {
                owner: e.owner.clone(),
                instance: None,
                cap: e.name.clone(),
            }];
        }
        instances
            .get(&e.owner)
            .into_iter()
            .flatten()
            .map(|i| End {
                owner: e.owner.clone(),
                instance: Some(i.clone()),
                cap: e.name.clone(),
            })
            .collect()
    };
    let mut relationships = Vec::new();
    let mut rel_ends: Vec<(End, End)> = Vec::new();
    for (name, rel) in &d.relationships {
        let Some((props, _)) = ev.relationships.get(name) else {
            continue;
        };
        for se in rel.sources.iter().filter(|e| e.known).flat_map(&ends) {
            for te in rel.targets.iter().filter(|e| e.known).flat_map(&ends) {
                relationships.push(RelationshipInstance {
                    relationship: name.clone(),
                    source: se.label(),
                    source_capability: se.cap.clone(),
                    target: te.label(),
                    target_requirement: te.cap.clone(),
                    source_state: (rel.source_state, rel.source_modifier),
                    target_state: (rel.target_state, rel.target_modifier),
                    properties: rd.section(props, &assembly, Some((&se, &te))),
                    create: rel
                        .create
                        .iter()
                        .map(|c| rd.op(&c.owner, &c.operation, &se, &te))
                        .collect(),
                    cease: rel
                        .cease
                        .iter()
                        .map(|c| rd.op(&c.owner, &c.operation, &se, &te))
                        .collect(),
                });
                rel_ends.push((se.clone(), te));
            }
        }
    }

    let lifecycle = match lifecycle(d, &ev, &flat, &relationships, &rel_ends) {
        Ok(steps) => steps,
        Err(e) => return Err(Failure::Lifecycle(e, diags.into_vec())),
    };

    let one = |owner: &str, name: &str| match instances.get(owner) {
        Some(list) if list.len() == 1 => format!("{}.{name}", list[0].0),
        Some(_) => format!("{owner}[*].{name}"),
        None => format!("{owner}.{name}"),
    };
    let operations = d
        .operations
        .iter()
        .map(|(k, p)| (k.clone(), one(&p.owner, &p.name)))
        .collect();
    let metrics = d
        .metrics
        .iter()
        .map(|(k, p)| (k.clone(), one(&p.owner, &p.name)))
        .collect();

    Ok(Plan {
        assembly: d.name.clone(),
        version: d.version.map_or_else(String::new, |v| v.to_string()),
        description: d.description.clone(),
        instance: assembly,
        properties,
        prerequisites,
        components,
        relationships,
        lifecycle,
        placement,
        operations,
        metrics,
        policies: ev.policies.values().cloned().collect(),
        warnings: diags.into_vec().iter().map(Note::from).collect(),
    })
}

/// Orders installs, starts and relationship creations; a cycle is an error naming it.
fn lifecycle(
    d: &Descriptor,
    ev: &Evaluated,
    flat: &[(String, String, String)],
    rels: &[RelationshipInstance],
    rel_ends: &[(End, End)],
) -> Result<Vec<Step>, Diagnostic> {
    let mut g: DiGraph<Node, ()> = DiGraph::new();
    let mut install = BTreeMap::new();
    let mut start = BTreeMap::new();
    let mut by_component: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, (comp, name, _)) in flat.iter().enumerate() {
        let a = g.add_node(Node::Install(i));
        let b = g.add_node(Node::Start(i));
        g.add_edge(a, b, ());
        install.insert(name.as_str(), a);
        start.insert(name.as_str(), b);
        by_component.entry(comp.as_str()).or_default().push(i);
    }
    // A component using another's properties is installed after it.
    for (comp, ec) in &ev.components {
        for dep in &ec.deps {
            for &y in by_component.get(dep.as_str()).into_iter().flatten() {
                for &x in by_component.get(comp.as_str()).into_iter().flatten() {
                    g.update_edge(install[flat[y].1.as_str()], install[flat[x].1.as_str()], ());
                }
            }
        }
    }
    let reach = |inst: &str, s: State| match s {
        State::Inactive => install.get(inst).copied(),
        State::Active => start.get(inst).copied(),
    };
    let before = |inst: &str, s: State| match s {
        State::Inactive => None,
        State::Active => install.get(inst).copied(),
    };
    for (k, (r, (se, te))) in rels.iter().zip(rel_ends).enumerate() {
        let c = g.add_node(Node::Create(k));
        for (end, (state, modifier)) in [(se, r.source_state), (te, r.target_state)] {
            // References already exist (Active): nothing to wait for.
            let Some((inst, _)) = &end.instance else {
                continue;
            };
            match modifier {
                Modifier::Post => {
                    if let Some(n) = reach(inst, state) {
                        g.update_edge(n, c, ());
                    }
                }
                Modifier::Pre => {
                    if let Some(n) = reach(inst, state) {
                        g.update_edge(c, n, ());
                    }
                    if let Some(n) = before(inst, state) {
                        g.update_edge(n, c, ());
                    }
                }
            }
        }
        if let Some((_, deps)) = ev.relationships.get(&r.relationship) {
            for dep in deps {
                for &y in by_component.get(dep.as_str()).into_iter().flatten() {
                    g.update_edge(install[flat[y].1.as_str()], c, ());
                }
            }
        }
    }

    let label = |n: Node| match n {
        Node::Install(i) => format!("install {}", flat[i].1),
        Node::Start(i) => format!("start {}", flat[i].1),
        Node::Create(k) => format!(
            "create {} ({} -> {})",
            rels[k].relationship, rels[k].source, rels[k].target
        ),
    };
    if let Err(cycle) = petgraph::algo::toposort(&g, None) {
        let chain = find_cycle(&g, cycle.node_id());
        let names: Vec<String> = chain.iter().map(|&n| label(g[n])).collect();
        // Blame a relationship on the cycle if there is one: that is where order is chosen.
        let (path, pos) = chain
            .iter()
            .find_map(|&n| match g[n] {
                Node::Create(k) => {
                    let name = &rels[k].relationship;
                    d.relationships
                        .get(name)
                        .map(|r| (Path::root().key("relationships").key(name.clone()), r.pos))
                }
                _ => None,
            })
            .or_else(|| {
                chain.iter().find_map(|&n| match g[n] {
                    Node::Install(i) | Node::Start(i) => {
                        let comp = &flat[i].0;
                        d.composition
                            .get(comp)
                            .map(|c| (Path::root().key("composition").key(comp.clone()), c.pos))
                    }
                    Node::Create(_) => None,
                })
            })
            .unwrap_or_else(|| (Path::root().key("composition"), Pos::UNKNOWN));
        return Err(Diagnostic::error(
            &path,
            pos,
            format!(
                "lifecycle has a cycle: {}; expected an order of installs, starts and relationship creations",
                names.join(" -> ")
            ),
        ));
    }

    // Stable Kahn order: relationship creations as soon as ready, then document order.
    let rank = |n: NodeIndex| (u8::from(!matches!(g[n], Node::Create(_))), n.index());
    let mut indeg: Vec<usize> = g
        .node_indices()
        .map(|n| g.neighbors_directed(n, Direction::Incoming).count())
        .collect();
    let mut ready: BTreeSet<(u8, usize)> = g
        .node_indices()
        .filter(|n| indeg[n.index()] == 0)
        .map(rank)
        .collect();
    let mut number = vec![0usize; g.node_count()];
    let mut steps = Vec::with_capacity(g.node_count());
    while let Some(first) = ready.pop_first() {
        let n = NodeIndex::new(first.1);
        number[n.index()] = steps.len() + 1;
        let mut after: Vec<usize> = g
            .neighbors_directed(n, Direction::Incoming)
            .map(|p| number[p.index()])
            .collect();
        after.sort_unstable();
        after.dedup();
        let action = match g[n] {
            Node::Install(i) => Action::Install {
                instance: flat[i].1.clone(),
            },
            Node::Start(i) => Action::Start {
                instance: flat[i].1.clone(),
            },
            Node::Create(k) => Action::CreateRelationship {
                index: k,
                relationship: rels[k].relationship.clone(),
                source: rels[k].source.clone(),
                target: rels[k].target.clone(),
            },
        };
        steps.push(Step {
            number: steps.len() + 1,
            action,
            after,
        });
        for m in g.neighbors_directed(n, Direction::Outgoing) {
            indeg[m.index()] -= 1;
            if indeg[m.index()] == 0 {
                ready.insert(rank(m));
            }
        }
    }
    Ok(steps)
}

/// A shortest cycle through `start` (which toposort reported as on a cycle), start repeated at the end.
fn find_cycle(g: &DiGraph<Node, ()>, start: NodeIndex) -> Vec<NodeIndex> {
    let mut parent: BTreeMap<NodeIndex, NodeIndex> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        let mut succ: Vec<NodeIndex> = g.neighbors_directed(n, Direction::Outgoing).collect();
        succ.sort_unstable();
        for m in succ {
            if m == start {
                let mut back = Vec::new();
                let mut cur = n;
                while cur != start {
                    back.push(cur);
                    cur = parent.get(&cur).copied().unwrap_or(start);
                }
                back.reverse();
                let mut chain = vec![start];
                chain.extend(back);
                chain.push(start);
                return chain;
            }
            if let std::collections::btree_map::Entry::Vacant(e) = parent.entry(m) {
                e.insert(n);
                queue.push_back(m);
            }
        }
    }
    vec![start]
}
