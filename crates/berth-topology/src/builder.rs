//! The programmatic builder and the validation that turns it into a [`Topology`].

use std::collections::{BTreeMap, HashMap};

use crate::error::TopologyError;
use crate::ids::LevelId;
use crate::levels::{LevelOrder, LevelRelation};
use crate::problem::{Field, Problem, ProblemKind, Subject, TreeKind};
use crate::topology::{Assembly, Topology};

/// The most levels a vocabulary may declare (the closure is an `n * n` matrix).
pub const MAX_LEVELS: usize = 1024;

/// Latitude and longitude in degrees (WGS84).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coordinates {
    /// Latitude in degrees, -90..=90.
    pub lat: f64,
    /// Longitude in degrees, -180..=180.
    pub lon: f64,
}

impl Coordinates {
    /// Whether both values are finite and in range.
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.lat.is_finite()
            && self.lon.is_finite()
            && (-90.0..=90.0).contains(&self.lat)
            && (-180.0..=180.0).contains(&self.lon)
    }
}

/// The edge from a network vertex to its parent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Link {
    /// Bandwidth capacity in Mbit/s; `None` = unconstrained.
    pub bandwidth_mbps: Option<u64>,
    /// One-way latency in nanoseconds (documents give `latency_ms`).
    pub latency_ns: u64,
}

impl Link {
    /// A link with the given bandwidth (Mbit/s) and latency (ns).
    #[must_use]
    pub fn new(bandwidth_mbps: u64, latency_ns: u64) -> Self {
        Link {
            bandwidth_mbps: Some(bandwidth_mbps),
            latency_ns,
        }
    }
}

/// A location vertex as given to the builder.
#[derive(Clone, Debug, PartialEq)]
pub struct LocationSpec {
    /// Unique id within the location tree.
    pub id: String,
    /// Parent id; `None` for the root.
    pub parent: Option<String>,
    /// Level name.
    pub level: String,
    /// Own coordinates (descendants without their own inherit them).
    pub coordinates: Option<Coordinates>,
    /// Capacity per dimension name (leaves only; missing dimensions are 0).
    pub capacity: Vec<(String, i64)>,
    /// Machine type for license charges (leaves only).
    pub machine_type: Option<String>,
    /// Free-form attributes.
    pub attributes: BTreeMap<String, serde_json::Value>,
}

impl LocationSpec {
    /// Sets the vertex's own coordinates.
    pub fn coordinates(&mut self, lat: f64, lon: f64) -> &mut Self {
        self.coordinates = Some(Coordinates { lat, lon });
        self
    }

    /// Adds a capacity amount for a dimension.
    pub fn capacity(&mut self, dimension: impl Into<String>, amount: i64) -> &mut Self {
        self.capacity.push((dimension.into(), amount));
        self
    }

    /// Sets the machine type.
    pub fn machine_type(&mut self, machine_type: impl Into<String>) -> &mut Self {
        self.machine_type = Some(machine_type.into());
        self
    }

    /// Sets an attribute.
    pub fn attribute(&mut self, key: impl Into<String>, value: serde_json::Value) -> &mut Self {
        self.attributes.insert(key.into(), value);
        self
    }
}

/// What a network entry is: an inner switch or the attachment of a location leaf.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetworkNode {
    /// A switch with its own id (switch ids are a namespace separate from location ids).
    Switch(String),
    /// The location leaf with this id.
    Leaf(String),
}

/// A network vertex as given to the builder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkSpec {
    /// Switch or leaf.
    pub node: NetworkNode,
    /// Parent switch id; `None` for the root.
    pub parent: Option<String>,
    /// The edge to the parent.
    pub link: Link,
}

/// Collects a topology piece by piece; [`TopologyBuilder::build`] validates everything at once.
///
/// Entries keep insertion order; children are ordered as inserted. Problems name entries by
/// their insertion index ([`Subject`]), which the document loader maps back to line:column.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TopologyBuilder {
    pub(crate) levels: Vec<String>,
    pub(crate) finer_than: Vec<(String, String)>,
    pub(crate) dimensions: Vec<String>,
    pub(crate) flavors: Vec<(String, Vec<(String, i64)>)>,
    pub(crate) locations: Vec<LocationSpec>,
    pub(crate) network: Vec<NetworkSpec>,
}

impl TopologyBuilder {
    /// An empty builder.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares a level.
    pub fn level(&mut self, name: impl Into<String>) -> &mut Self {
        self.levels.push(name.into());
        self
    }

    /// Declares that `finer` is strictly finer than `coarser`.
    pub fn finer_than(
        &mut self,
        finer: impl Into<String>,
        coarser: impl Into<String>,
    ) -> &mut Self {
        self.finer_than.push((finer.into(), coarser.into()));
        self
    }

    /// Declares a capacity dimension.
    pub fn dimension(&mut self, name: impl Into<String>) -> &mut Self {
        self.dimensions.push(name.into());
        self
    }

    /// Declares a flavor's demand vector.
    pub fn flavor<S: Into<String>>(
        &mut self,
        name: impl Into<String>,
        demand: impl IntoIterator<Item = (S, i64)>,
    ) -> &mut Self {
        let demand = demand.into_iter().map(|(d, v)| (d.into(), v)).collect();
        self.flavors.push((name.into(), demand));
        self
    }

    /// Adds a location vertex and returns it for setting coordinates, capacity and so on.
    pub fn location(
        &mut self,
        id: impl Into<String>,
        parent: Option<&str>,
        level: impl Into<String>,
    ) -> &mut LocationSpec {
        let index = self.locations.len();
        self.locations.push(LocationSpec {
            id: id.into(),
            parent: parent.map(str::to_owned),
            level: level.into(),
            coordinates: None,
            capacity: Vec::new(),
            machine_type: None,
            attributes: BTreeMap::new(),
        });
        &mut self.locations[index]
    }

    /// Adds a network switch.
    pub fn switch(&mut self, id: impl Into<String>, parent: Option<&str>, link: Link) -> &mut Self {
        self.network.push(NetworkSpec {
            node: NetworkNode::Switch(id.into()),
            parent: parent.map(str::to_owned),
            link,
        });
        self
    }

    /// Attaches the location leaf `leaf` to the network under switch `parent`.
    pub fn network_leaf(
        &mut self,
        leaf: impl Into<String>,
        parent: Option<&str>,
        link: Link,
    ) -> &mut Self {
        self.network.push(NetworkSpec {
            node: NetworkNode::Leaf(leaf.into()),
            parent: parent.map(str::to_owned),
            link,
        });
        self
    }

    /// The location entries in insertion order.
    #[must_use]
    pub fn locations(&self) -> &[LocationSpec] {
        &self.locations
    }

    /// The network entries in insertion order.
    #[must_use]
    pub fn network(&self) -> &[NetworkSpec] {
        &self.network
    }

    /// Validates everything and builds the topology, or returns every problem found.
    ///
    /// # Errors
    /// [`TopologyError::Invalid`] with all problems, in a deterministic order.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        self.compile()
            .map_err(|problems| TopologyError::Invalid { problems })
    }

    pub(crate) fn compile(&self) -> Result<Topology, Vec<Problem>> {
        let mut problems = Vec::new();
        let levels = self.check_levels(&mut problems);
        let (dimensions, dim_index) = self.check_dimensions(&mut problems);
        let flavors = self.check_flavors(&dim_index, &mut problems);
        let loc = self.check_locations(&levels, &dim_index, &mut problems);
        let net = self.check_network(&loc, &mut problems);
        let (Some(loc_root), Some(net_root)) = (loc.root, net.root) else {
            return Err(problems);
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Topology::assemble(Assembly {
            builder: self,
            levels: levels.order,
            dimensions,
            flavors,
            loc_root,
            loc_children: &loc.children,
            loc_level: &loc.level,
            net_root,
            net_children: &net.children,
            net_leaf_of: &net.leaf_of,
        }))
    }

    fn check_levels(&self, problems: &mut Vec<Problem>) -> CheckedLevels {
        let mut names: Vec<String> = Vec::new();
        let mut index: HashMap<&str, LevelId> = HashMap::new();
        if self.levels.len() > MAX_LEVELS {
            problems.push(Problem::new(
                Subject::Document,
                ProblemKind::TooManyLevels {
                    count: self.levels.len(),
                    max: MAX_LEVELS,
                },
            ));
        }
        for (i, name) in self.levels.iter().enumerate().take(MAX_LEVELS) {
            if index.contains_key(name.as_str()) {
                problems.push(Problem::new(
                    Subject::Level(i),
                    ProblemKind::DuplicateLevel { name: name.clone() },
                ));
            } else {
                index.insert(name, LevelId(names.len() as u16));
                names.push(name.clone());
            }
        }
        let mut edges = Vec::new();
        let mut edge_source = Vec::new();
        for (i, (a, b)) in self.finer_than.iter().enumerate() {
            let mut resolve = |name: &String| match index.get(name.as_str()) {
                Some(&l) => Some(l),
                None => {
                    problems.push(Problem::new(
                        Subject::FinerThan(i),
                        ProblemKind::UnknownLevel {
                            name: name.clone(),
                            expected: names.clone(),
                        },
                    ));
                    None
                }
            };
            if let (Some(a), Some(b)) = (resolve(a), resolve(b)) {
                edges.push((a, b));
                edge_source.push(i);
            }
        }
        let (order, cycles) = LevelOrder::compute(names, &edges);
        let acyclic = cycles.is_empty();
        for cycle in cycles {
            let mut levels: Vec<String> = Vec::new();
            for &e in &cycle {
                let (a, b) = edges[e];
                for l in [a, b] {
                    let name = order.name(l).to_owned();
                    if !levels.contains(&name) {
                        levels.push(name);
                    }
                }
            }
            let first = cycle.first().map_or(0, |&e| edge_source[e]);
            problems.push(Problem::new(
                Subject::FinerThan(first),
                ProblemKind::LevelCycle { levels },
            ));
        }
        CheckedLevels { order, acyclic }
    }

    fn check_dimensions(&self, problems: &mut Vec<Problem>) -> (Vec<String>, HashMap<String, u16>) {
        let mut names = Vec::new();
        let mut index = HashMap::new();
        for (i, name) in self.dimensions.iter().enumerate() {
            if index.contains_key(name) {
                problems.push(Problem::new(
                    Subject::Dimension(i),
                    ProblemKind::DuplicateDimension { name: name.clone() },
                ));
            } else {
                index.insert(name.clone(), names.len() as u16);
                names.push(name.clone());
            }
        }
        (names, index)
    }

    fn check_flavors(
        &self,
        dims: &HashMap<String, u16>,
        problems: &mut Vec<Problem>,
    ) -> Vec<(String, Vec<i64>)> {
        let expected = || self.dimension_names(dims);
        let mut seen: HashMap<&str, ()> = HashMap::new();
        let mut out = Vec::new();
        for (f, (name, demand)) in self.flavors.iter().enumerate() {
            if seen.insert(name, ()).is_some() {
                problems.push(Problem::new(
                    Subject::Flavor(f),
                    ProblemKind::DuplicateFlavor { name: name.clone() },
                ));
                continue;
            }
            let vector = amounts(demand, dims, problems, expected, |entry| {
                Subject::FlavorEntry { flavor: f, entry }
            });
            out.push((name.clone(), vector));
        }
        out
    }

    fn dimension_names(&self, dims: &HashMap<String, u16>) -> Vec<String> {
        let mut names: Vec<(u16, String)> = dims.iter().map(|(k, &v)| (v, k.clone())).collect();
        names.sort();
        names.into_iter().map(|(_, n)| n).collect()
    }

    fn check_locations(
        &self,
        levels: &CheckedLevels,
        dims: &HashMap<String, u16>,
        problems: &mut Vec<Problem>,
    ) -> CheckedLocations {
        let n = self.locations.len();
        let mut index: HashMap<&str, usize> = HashMap::with_capacity(n);
        let mut excluded = vec![false; n];
        let mut level = vec![None; n];
        let level_names: Vec<String> = levels
            .order
            .iter()
            .map(|l| levels.order.name(l).to_owned())
            .collect();
        for (i, spec) in self.locations.iter().enumerate() {
            let at = |field| Subject::Location { vertex: i, field };
            if index.contains_key(spec.id.as_str()) {
                excluded[i] = true;
                problems.push(Problem::new(
                    at(Field::Id),
                    ProblemKind::DuplicateId {
                        tree: TreeKind::Location,
                        id: spec.id.clone(),
                    },
                ));
            } else {
                index.insert(&spec.id, i);
            }
            level[i] = levels.order.id(&spec.level);
            if level[i].is_none() {
                problems.push(Problem::new(
                    at(Field::Level),
                    ProblemKind::UnknownLevel {
                        name: spec.level.clone(),
                        expected: level_names.clone(),
                    },
                ));
            }
            if let Some(c) = spec.coordinates.filter(|c| !c.is_valid()) {
                problems.push(Problem::new(
                    at(Field::Coordinates),
                    ProblemKind::InvalidCoordinates {
                        lat: c.lat,
                        lon: c.lon,
                    },
                ));
            }
            amounts(
                &spec.capacity,
                dims,
                problems,
                || self.dimension_names(dims),
                |entry| Subject::Capacity { vertex: i, entry },
            );
        }
        let parents: Vec<ParentRef> = self
            .locations
            .iter()
            .enumerate()
            .map(|(i, spec)| match &spec.parent {
                None => ParentRef::Root,
                Some(p) => match index.get(p.as_str()) {
                    Some(&j) => ParentRef::Vertex(j),
                    None => {
                        problems.push(Problem::new(
                            Subject::Location {
                                vertex: i,
                                field: Field::Parent,
                            },
                            ProblemKind::UnknownParent {
                                tree: TreeKind::Location,
                                parent: p.clone(),
                            },
                        ));
                        ParentRef::Unresolved
                    }
                },
            })
            .collect();
        let names: Vec<&str> = self.locations.iter().map(|s| s.id.as_str()).collect();
        let linked = link(
            TreeKind::Location,
            &names,
            &parents,
            &excluded,
            problems,
            |vertex, field| Subject::Location { vertex, field },
        );
        for (i, spec) in self.locations.iter().enumerate() {
            if excluded[i] {
                continue;
            }
            let has_children = !linked.children[i].is_empty();
            if has_children && (!spec.capacity.is_empty() || spec.machine_type.is_some()) {
                problems.push(Problem::new(
                    Subject::Location {
                        vertex: i,
                        field: Field::Capacity,
                    },
                    ProblemKind::CapacityOnInnerVertex {
                        id: spec.id.clone(),
                    },
                ));
            }
            if !levels.acyclic || !linked.reachable[i] {
                continue;
            }
            if let ParentRef::Vertex(p) = parents[i]
                && let (Some(l), Some(pl)) = (level[i], level[p])
            {
                let relation = levels.order.relation(l, pl);
                if relation != LevelRelation::Finer {
                    problems.push(Problem::new(
                        Subject::Location {
                            vertex: i,
                            field: Field::Level,
                        },
                        ProblemKind::OrderViolation {
                            id: spec.id.clone(),
                            level: spec.level.clone(),
                            parent: self.locations[p].id.clone(),
                            parent_level: self.locations[p].level.clone(),
                            relation,
                        },
                    ));
                }
            }
        }
        let level = level.into_iter().map(|l| l.unwrap_or(LevelId(0))).collect();
        CheckedLocations {
            root: linked.root,
            children: linked.children,
            index_by_id: build_index(&names, &excluded),
            level,
        }
    }

    fn check_network(&self, loc: &CheckedLocations, problems: &mut Vec<Problem>) -> CheckedNetwork {
        let n = self.network.len();
        let mut switches: HashMap<&str, usize> = HashMap::new();
        let mut excluded = vec![false; n];
        let mut leaf_of = vec![None; n];
        let mut attached: HashMap<usize, usize> = HashMap::new();
        for (i, spec) in self.network.iter().enumerate() {
            let at = |field| Subject::Network { vertex: i, field };
            match &spec.node {
                NetworkNode::Switch(id) => {
                    if switches.contains_key(id.as_str()) {
                        excluded[i] = true;
                        problems.push(Problem::new(
                            at(Field::Id),
                            ProblemKind::DuplicateId {
                                tree: TreeKind::Network,
                                id: id.clone(),
                            },
                        ));
                    } else {
                        switches.insert(id, i);
                    }
                }
                NetworkNode::Leaf(id) => match loc.index_by_id.get(id.as_str()) {
                    None => {
                        excluded[i] = true;
                        problems.push(Problem::new(
                            at(Field::Id),
                            ProblemKind::UnknownLeaf { id: id.clone() },
                        ));
                    }
                    Some(&v) if !loc.children[v].is_empty() => {
                        excluded[i] = true;
                        problems.push(Problem::new(
                            at(Field::Id),
                            ProblemKind::NotALeaf { id: id.clone() },
                        ));
                    }
                    Some(&v) => {
                        if let std::collections::hash_map::Entry::Vacant(slot) = attached.entry(v) {
                            slot.insert(i);
                        } else {
                            excluded[i] = true;
                            problems.push(Problem::new(
                                at(Field::Id),
                                ProblemKind::LeafTwice { id: id.clone() },
                            ));
                        }
                        leaf_of[i] = Some(v);
                    }
                },
            }
        }
        let parents: Vec<ParentRef> = self
            .network
            .iter()
            .enumerate()
            .map(|(i, spec)| match &spec.parent {
                None => ParentRef::Root,
                Some(p) => match switches.get(p.as_str()) {
                    Some(&j) => ParentRef::Vertex(j),
                    None => {
                        problems.push(Problem::new(
                            Subject::Network {
                                vertex: i,
                                field: Field::Parent,
                            },
                            ProblemKind::UnknownParent {
                                tree: TreeKind::Network,
                                parent: p.clone(),
                            },
                        ));
                        ParentRef::Unresolved
                    }
                },
            })
            .collect();
        let names: Vec<&str> = self
            .network
            .iter()
            .map(|s| match &s.node {
                NetworkNode::Switch(id) | NetworkNode::Leaf(id) => id.as_str(),
            })
            .collect();
        // Leaves that failed to resolve still take part in linking so no second error is
        // reported for them; only duplicate switches stay out.
        let link_excluded: Vec<bool> = (0..n)
            .map(|i| excluded[i] && matches!(self.network[i].node, NetworkNode::Switch(_)))
            .collect();
        let linked = link(
            TreeKind::Network,
            &names,
            &parents,
            &link_excluded,
            problems,
            |vertex, field| Subject::Network { vertex, field },
        );
        for (i, spec) in self.network.iter().enumerate() {
            if let NetworkNode::Switch(id) = &spec.node
                && !excluded[i]
                && linked.children[i].is_empty()
            {
                problems.push(Problem::new(
                    Subject::Network {
                        vertex: i,
                        field: Field::Id,
                    },
                    ProblemKind::SwitchWithoutChildren { id: id.clone() },
                ));
            }
        }
        if let Some(r) = linked.root
            && self.network[r].link != Link::default()
        {
            problems.push(Problem::new(
                Subject::Network {
                    vertex: r,
                    field: Field::Link,
                },
                ProblemKind::RootLink {
                    id: names[r].to_owned(),
                },
            ));
        }
        if let Some(root) = loc.root {
            // Walk in location order so the report follows the document.
            let mut stack = vec![root];
            let mut missing = Vec::new();
            while let Some(v) = stack.pop() {
                if loc.children[v].is_empty() {
                    if !attached.contains_key(&v) {
                        missing.push(v);
                    }
                } else {
                    stack.extend(loc.children[v].iter().rev());
                }
            }
            for v in missing {
                problems.push(Problem::new(
                    Subject::Location {
                        vertex: v,
                        field: Field::Entry,
                    },
                    ProblemKind::LeafMissing {
                        id: self.locations[v].id.clone(),
                    },
                ));
            }
        }
        CheckedNetwork {
            root: linked.root,
            children: linked.children,
            leaf_of,
        }
    }
}

struct CheckedLevels {
    order: LevelOrder,
    acyclic: bool,
}

struct CheckedLocations {
    root: Option<usize>,
    children: Vec<Vec<usize>>,
    index_by_id: HashMap<String, usize>,
    level: Vec<LevelId>,
}

struct CheckedNetwork {
    root: Option<usize>,
    children: Vec<Vec<usize>>,
    leaf_of: Vec<Option<usize>>,
}

fn build_index(names: &[&str], excluded: &[bool]) -> HashMap<String, usize> {
    let mut index = HashMap::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        if !excluded[i] {
            index.insert((*name).to_owned(), i);
        }
    }
    index
}

/// Resolves `(dimension, amount)` pairs to a dense vector, reporting unknown, duplicate and
/// negative entries.
fn amounts(
    entries: &[(String, i64)],
    dims: &HashMap<String, u16>,
    problems: &mut Vec<Problem>,
    expected: impl Fn() -> Vec<String>,
    at: impl Fn(usize) -> Subject,
) -> Vec<i64> {
    let mut vector = vec![0i64; dims.len()];
    let mut seen = vec![false; dims.len()];
    for (e, (dim, value)) in entries.iter().enumerate() {
        match dims.get(dim) {
            None => problems.push(Problem::new(
                at(e),
                ProblemKind::UnknownDimension {
                    name: dim.clone(),
                    expected: expected(),
                },
            )),
            Some(&d) if seen[d as usize] => {
                problems.push(Problem::new(
                    at(e),
                    ProblemKind::DuplicateAmount {
                        dimension: dim.clone(),
                    },
                ));
            }
            Some(&d) => {
                seen[d as usize] = true;
                vector[d as usize] = *value;
                if *value < 0 {
                    problems.push(Problem::new(
                        at(e),
                        ProblemKind::NegativeAmount {
                            dimension: dim.clone(),
                            value: *value,
                        },
                    ));
                }
            }
        }
    }
    vector
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ParentRef {
    Root,
    Vertex(usize),
    Unresolved,
}

struct Linked {
    root: Option<usize>,
    children: Vec<Vec<usize>>,
    reachable: Vec<bool>,
}

/// Links parent references into children lists, reporting extra roots, a missing root and
/// every cycle (parent pointers form a functional graph, so a colouring walk finds each cycle
/// once, iteratively).
fn link(
    tree: TreeKind,
    names: &[&str],
    parents: &[ParentRef],
    excluded: &[bool],
    problems: &mut Vec<Problem>,
    at: impl Fn(usize, Field) -> Subject,
) -> Linked {
    let n = names.len();
    let mut root = None;
    let mut children = vec![Vec::new(); n];
    let mut any = false;
    for i in 0..n {
        if excluded[i] {
            continue;
        }
        any = true;
        match parents[i] {
            ParentRef::Root => match root {
                None => root = Some(i),
                Some(r) => problems.push(Problem::new(
                    at(i, Field::Entry),
                    ProblemKind::ExtraRoot {
                        tree,
                        id: names[i].to_owned(),
                        root: names[r].to_owned(),
                    },
                )),
            },
            ParentRef::Vertex(p) => children[p].push(i),
            ParentRef::Unresolved => {}
        }
    }
    if !any {
        problems.push(Problem::new(
            Subject::Document,
            ProblemKind::EmptyTree { tree },
        ));
    }
    // 0 = unvisited, 1 = on the current walk, 2 = finished.
    let mut state = vec![0u8; n];
    let mut walk = Vec::new();
    for start in 0..n {
        if excluded[start] || state[start] != 0 {
            continue;
        }
        walk.clear();
        let mut v = start;
        loop {
            state[v] = 1;
            walk.push(v);
            match parents[v] {
                ParentRef::Vertex(p) if state[p] == 0 => v = p,
                ParentRef::Vertex(p) if state[p] == 1 => {
                    let from = walk.iter().position(|&w| w == p).unwrap_or(0);
                    let cycle = &walk[from..];
                    let min_pos = cycle
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, w)| **w)
                        .map_or(0, |(k, _)| k);
                    let ids: Vec<String> = cycle[min_pos..]
                        .iter()
                        .chain(&cycle[..min_pos])
                        .map(|&w| names[w].to_owned())
                        .collect();
                    problems.push(Problem::new(
                        at(cycle[min_pos], Field::Parent),
                        ProblemKind::Cycle { tree, ids },
                    ));
                    break;
                }
                _ => break,
            }
        }
        for &w in &walk {
            state[w] = 2;
        }
    }
    if root.is_none() && any {
        problems.push(Problem::new(
            Subject::Document,
            ProblemKind::NoRoot { tree },
        ));
    }
    let mut reachable = vec![false; n];
    if let Some(r) = root {
        let mut stack = vec![r];
        while let Some(v) = stack.pop() {
            reachable[v] = true;
            stack.extend(children[v].iter().copied());
        }
    }
    Linked {
        root,
        children,
        reachable,
    }
}
