//! Loading a topology document (YAML or JSON) into a [`Topology`], reporting every problem
//! with its field path and line:column.

use std::borrow::Cow;
use std::collections::HashSet;

use berth_doc::{Diagnostics, Kind, Limits, Map, Path, Pos, Value};

use crate::builder::{Coordinates, Link, NetworkNode, NetworkSpec, TopologyBuilder};
use crate::error::TopologyError;
use crate::problem::{Field, Problem, ProblemKind, Subject, TreeKind};
use crate::topology::Topology;

const TOP_KEYS: &[&str] = &[
    "levels",
    "finer_than",
    "dimensions",
    "flavors",
    "location",
    "network",
];
const LOCATION_KEYS: &[&str] = &[
    "id",
    "level",
    "parent",
    "lat",
    "lon",
    "capacity",
    "machine_type",
    "attributes",
    "children",
];
const NETWORK_KEYS: &[&str] = &[
    "id",
    "leaf",
    "parent",
    "bandwidth_mbps",
    "latency_ms",
    "children",
];

/// Parser limits for topology documents: a 100,000-leaf datacenter is a few million nodes,
/// well above [`Limits::default`]'s node budget.
#[must_use]
pub fn document_limits() -> Limits {
    Limits {
        max_depth: 128,
        max_nodes: 20_000_000,
        max_bytes: 512 * 1024 * 1024,
    }
}

/// Parses and validates a topology document with [`document_limits`].
///
/// # Errors
/// [`TopologyError::Document`] with every problem found, sorted by position.
pub fn load(text: &str) -> Result<Topology, TopologyError> {
    load_with(text, &document_limits())
}

/// Parses and validates a topology document within `limits`.
///
/// # Errors
/// [`TopologyError::Document`] with every problem found, sorted by position.
pub fn load_with(text: &str, limits: &Limits) -> Result<Topology, TopologyError> {
    let value = berth_doc::parse_with(text, limits).map_err(|d| TopologyError::Document {
        diagnostics: vec![d],
    })?;
    let mut diags = Diagnostics::new();
    match load_value(&value, &Path::root(), &mut diags) {
        Some(t) if !diags.has_errors() => Ok(t),
        _ => Err(TopologyError::Document {
            diagnostics: diags.into_vec(),
        }),
    }
}

/// Loads a topology from an already parsed value standing at `at` (for formats that embed a
/// topology, such as an inventory's `topology:` key). Appends all diagnostics to `diags` and
/// returns the topology when there were no errors.
pub fn load_value(value: &Value, at: &Path, diags: &mut Diagnostics) -> Option<Topology> {
    let mut loader = Loader {
        base: at,
        diags,
        errors: false,
        b: TopologyBuilder::new(),
        nodes: Vec::new(),
        root_pos: value.pos,
        top: None,
        levels: Vec::new(),
        finer: Vec::new(),
        dims: Vec::new(),
        flavors: Vec::new(),
        loc: Vec::new(),
        net: Vec::new(),
        flagged: HashSet::new(),
        poisoned: HashSet::new(),
    };
    loader.document(value);
    let result = loader.b.compile();
    match result {
        Ok(t) if !loader.errors => Some(t),
        Ok(_) => None,
        Err(problems) => {
            for p in problems {
                loader.report(&p);
            }
            None
        }
    }
}

/// A step of a path kept in an arena: `parent.key[index]`.
struct Node {
    parent: u32,
    key: Cow<'static, str>,
    index: Option<u32>,
}

const NO_NODE: u32 = u32::MAX;

/// Where a builder entry came from.
struct Span<'v> {
    node: u32,
    pos: Pos,
    map: Option<&'v Map>,
}

struct Loader<'a, 'v> {
    base: &'a Path,
    diags: &'a mut Diagnostics,
    errors: bool,
    b: TopologyBuilder,
    nodes: Vec<Node>,
    root_pos: Pos,
    top: Option<&'v Map>,
    levels: Vec<Span<'v>>,
    finer: Vec<Span<'v>>,
    dims: Vec<Span<'v>>,
    flavors: Vec<Span<'v>>,
    loc: Vec<Span<'v>>,
    net: Vec<Span<'v>>,
    /// Subjects the loader already reported; the builder's echo of them is dropped.
    flagged: HashSet<Subject>,
    /// Entries without a usable id: nothing more is reported about them.
    poisoned: HashSet<(TreeKind, usize)>,
}

impl<'v> Loader<'_, 'v> {
    fn node(
        &mut self,
        parent: u32,
        key: impl Into<Cow<'static, str>>,
        index: Option<usize>,
    ) -> u32 {
        self.nodes.push(Node {
            parent,
            key: key.into(),
            index: index.map(|i| i as u32),
        });
        (self.nodes.len() - 1) as u32
    }

    fn path(&self, node: u32) -> Path {
        let mut chain = Vec::new();
        let mut cur = node;
        while let Some(n) = self.nodes.get(cur as usize) {
            chain.push(n);
            cur = n.parent;
        }
        let mut path = self.base.clone();
        for n in chain.into_iter().rev() {
            path = path.key(n.key.as_ref());
            if let Some(i) = n.index {
                path = path.index(i as usize);
            }
        }
        path
    }

    fn error(&mut self, path: &Path, pos: Pos, msg: impl Into<String>) {
        self.errors = true;
        self.diags.error(path, pos, msg);
    }

    fn error_at(&mut self, node: u32, key: Option<&str>, pos: Pos, msg: impl Into<String>) {
        let mut path = self.path(node);
        if let Some(k) = key {
            path = path.key(k);
        }
        self.error(&path, pos, msg);
    }

    fn check_keys(&mut self, map: &Map, allowed: &[&str], node: u32) {
        for (k, _) in map.iter() {
            if !allowed.contains(&k.name.as_str()) {
                let msg = format!(
                    "unknown key `{}`; expected one of {}",
                    k.name,
                    allowed.join(", ")
                );
                self.error_at(node, Some(&k.name), k.pos, msg);
            }
        }
    }

    fn document(&mut self, value: &'v Value) {
        let Some(map) = value.as_map() else {
            let msg = format!(
                "expected a mapping with levels, location and network, found {}",
                value.type_name()
            );
            self.error(&self.base.clone(), value.pos, msg);
            return;
        };
        self.top = Some(map);
        self.check_keys(map, TOP_KEYS, NO_NODE);
        for key in ["levels", "location", "network"] {
            if map.get(key).is_none() {
                self.error(
                    &self.base.clone(),
                    value.pos,
                    format!("missing required key `{key}`"),
                );
            }
        }
        if let Some(v) = map.get("levels") {
            let node = self.node(NO_NODE, "levels", None);
            for (_, item, item_node) in self.list(v, node, "levels") {
                if let Some(name) = self.string(item, item_node, None, "a level name") {
                    self.b.level(name);
                    self.levels.push(Span {
                        node: item_node,
                        pos: item.pos,
                        map: None,
                    });
                }
            }
        }
        if let Some(v) = map.get("finer_than") {
            let node = self.node(NO_NODE, "finer_than", None);
            for (_, item, item_node) in self.list(v, node, "finer_than") {
                let pair = item.as_seq().filter(|s| s.len() == 2);
                let names = pair.map(|s| (s[0].as_str(), s[1].as_str()));
                match names {
                    Some((Some(a), Some(b))) => {
                        self.b.finer_than(a, b);
                        self.finer.push(Span {
                            node: item_node,
                            pos: item.pos,
                            map: None,
                        });
                    }
                    _ => self.error(
                        &self.path(item_node),
                        item.pos,
                        "expected a pair [finer, coarser] of level names",
                    ),
                }
            }
        }
        if let Some(v) = map.get("dimensions") {
            let node = self.node(NO_NODE, "dimensions", None);
            for (_, item, item_node) in self.list(v, node, "dimensions") {
                if let Some(name) = self.string(item, item_node, None, "a dimension name") {
                    self.b.dimension(name);
                    self.dims.push(Span {
                        node: item_node,
                        pos: item.pos,
                        map: None,
                    });
                }
            }
        }
        if let Some(v) = map.get("flavors") {
            let node = self.node(NO_NODE, "flavors", None);
            match v.as_map() {
                Some(flavors) => {
                    for (k, demand) in flavors.iter() {
                        let fnode = self.node(node, k.name.clone(), None);
                        let fpath = self.path(fnode);
                        let Some(dm) = demand.as_map() else {
                            let msg = format!(
                                "expected a mapping of dimension to amount, found {}",
                                demand.type_name()
                            );
                            self.error(&fpath, demand.pos, msg);
                            continue;
                        };
                        let amounts = self.amounts(dm, &fpath);
                        self.b.flavor(k.name.clone(), amounts);
                        self.flavors.push(Span {
                            node: fnode,
                            pos: k.pos,
                            map: Some(dm),
                        });
                    }
                }
                None => {
                    let msg = format!(
                        "expected a mapping of flavor name to demand, found {}",
                        v.type_name()
                    );
                    self.error(&self.path(node), v.pos, msg);
                }
            }
        }
        if let Some(v) = map.get("location") {
            self.tree(v, TreeKind::Location);
        }
        if let Some(v) = map.get("network") {
            self.tree(v, TreeKind::Network);
        }
    }

    fn tree(&mut self, v: &'v Value, tree: TreeKind) {
        let key = match tree {
            TreeKind::Location => "location",
            TreeKind::Network => "network",
        };
        match &v.kind {
            Kind::Map(_) => {
                let node = self.node(NO_NODE, key, None);
                self.entry(v, node, tree, Parent::NestedRoot);
            }
            Kind::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    let node = self.node(NO_NODE, key, Some(i));
                    self.entry(item, node, tree, Parent::Flat);
                }
            }
            _ => {
                let msg = format!(
                    "expected a mapping (the root, with nested children) or a list of vertices with `parent`, found {}",
                    v.type_name()
                );
                self.error(&self.base.key(key), v.pos, msg);
            }
        }
    }

    fn entry(&mut self, v: &'v Value, node: u32, tree: TreeKind, parent: Parent<'_>) {
        let Some(map) = v.as_map() else {
            self.error(
                &self.path(node),
                v.pos,
                format!("expected a mapping (a vertex), found {}", v.type_name()),
            );
            return;
        };
        let (allowed, index) = match tree {
            TreeKind::Location => (LOCATION_KEYS, self.loc.len()),
            TreeKind::Network => (NETWORK_KEYS, self.net.len()),
        };
        let subject = |field| match tree {
            TreeKind::Location => Subject::Location {
                vertex: index,
                field,
            },
            TreeKind::Network => Subject::Network {
                vertex: index,
                field,
            },
        };
        self.check_keys(map, allowed, node);

        let (id_key, id) = match tree {
            TreeKind::Location => ("id", self.id(map, "id", node, v.pos)),
            TreeKind::Network => match (map.get("id"), map.get("leaf")) {
                (Some(_), Some(leaf)) => {
                    self.error_at(
                        node,
                        Some("leaf"),
                        leaf.pos,
                        "expected either `id` (a switch) or `leaf` (a location leaf), not both",
                    );
                    ("id", self.id(map, "id", node, v.pos))
                }
                (None, Some(_)) => ("leaf", self.id(map, "leaf", node, v.pos)),
                _ => ("id", self.id(map, "id", node, v.pos)),
            },
        };
        let id = match id {
            Some(id) => id,
            None => {
                self.poisoned.insert((tree, index));
                format!("<{}>", self.path(node))
            }
        };

        let parent_ref = match (parent, map.entry("parent")) {
            (Parent::Flat, Some((_, p))) => self.string(p, node, Some("parent"), "a parent id"),
            (Parent::Flat, None) | (Parent::NestedRoot, None) => None,
            (Parent::Nested(pid), None) => Some(pid.to_owned()),
            (Parent::Nested(pid), Some((_, p))) => {
                let msg = format!("`parent` is implied by nesting under `{pid}`; remove it");
                self.error_at(node, Some("parent"), p.pos, msg);
                self.flagged.insert(subject(Field::Parent));
                Some(pid.to_owned())
            }
            (Parent::NestedRoot, Some((_, p))) => {
                self.error_at(
                    node,
                    Some("parent"),
                    p.pos,
                    "the root of a nested tree has no parent; remove it",
                );
                self.flagged.insert(subject(Field::Parent));
                None
            }
        };

        match tree {
            TreeKind::Location => {
                self.location_fields(map, node, id.clone(), parent_ref, v.pos, index)
            }
            TreeKind::Network => {
                let link = self.link(map, node);
                let leaf = id_key == "leaf";
                if leaf && let Some(c) = map.get("children") {
                    self.error_at(
                        node,
                        Some("children"),
                        c.pos,
                        "a network leaf has no children",
                    );
                }
                self.b.network.push(NetworkSpec {
                    node: if leaf {
                        NetworkNode::Leaf(id.clone())
                    } else {
                        NetworkNode::Switch(id.clone())
                    },
                    parent: parent_ref,
                    link,
                });
            }
        }
        match tree {
            TreeKind::Location => self.loc.push(Span {
                node,
                pos: v.pos,
                map: Some(map),
            }),
            TreeKind::Network => self.net.push(Span {
                node,
                pos: v.pos,
                map: Some(map),
            }),
        }
        if let Some(children) = map.get("children")
            && !(tree == TreeKind::Network && id_key == "leaf")
        {
            let cnode = self.node(node, "children", None);
            for (_, child, child_node) in self.list(children, cnode, "children") {
                self.entry(child, child_node, tree, Parent::Nested(&id));
            }
        }
    }

    fn location_fields(
        &mut self,
        map: &'v Map,
        node: u32,
        id: String,
        parent: Option<String>,
        pos: Pos,
        index: usize,
    ) {
        let subject = |field| Subject::Location {
            vertex: index,
            field,
        };
        let level = match map.get("level") {
            Some(l) => self.string(l, node, Some("level"), "a level name"),
            None => {
                self.error(&self.path(node), pos, "missing required key `level`");
                None
            }
        };
        if level.is_none() {
            self.flagged.insert(subject(Field::Level));
        }
        let lat = map.get("lat").and_then(|v| self.number(v, node, "lat"));
        let lon = map.get("lon").and_then(|v| self.number(v, node, "lon"));
        let coordinates = match (map.get("lat"), map.get("lon")) {
            (Some(_), None) => {
                self.error(
                    &self.path(node),
                    pos,
                    "`lat` given without `lon`; expected both or neither",
                );
                None
            }
            (None, Some(_)) => {
                self.error(
                    &self.path(node),
                    pos,
                    "`lon` given without `lat`; expected both or neither",
                );
                None
            }
            _ => lat.zip(lon).map(|(lat, lon)| Coordinates { lat, lon }),
        };
        let capacity = match map.get("capacity") {
            Some(c) => match c.as_map() {
                Some(cm) => self.amounts(cm, &self.path(node).key("capacity")),
                None => {
                    let msg = format!(
                        "expected a mapping of dimension to amount, found {}",
                        c.type_name()
                    );
                    self.error_at(node, Some("capacity"), c.pos, msg);
                    Vec::new()
                }
            },
            None => Vec::new(),
        };
        let machine_type = map
            .get("machine_type")
            .and_then(|m| self.string(m, node, Some("machine_type"), "a machine type"));
        let mut attributes = std::collections::BTreeMap::new();
        if let Some(a) = map.get("attributes") {
            match a.as_map() {
                Some(am) => {
                    for (k, v) in am.iter() {
                        attributes.insert(k.name.clone(), v.to_json());
                    }
                }
                None => {
                    let msg = format!("expected a mapping of attributes, found {}", a.type_name());
                    self.error_at(node, Some("attributes"), a.pos, msg);
                }
            }
        }
        let spec = self
            .b
            .location(id, parent.as_deref(), level.unwrap_or_default());
        spec.coordinates = coordinates;
        spec.capacity = capacity;
        spec.machine_type = machine_type;
        spec.attributes = attributes;
    }

    fn link(&mut self, map: &Map, node: u32) -> Link {
        let mut link = Link::default();
        if let Some(b) = map.get("bandwidth_mbps") {
            match b.as_i64().and_then(|x| u64::try_from(x).ok()) {
                Some(x) => link.bandwidth_mbps = Some(x),
                None => {
                    let msg = format!(
                        "expected a non-negative integer (Mbit/s), found {}",
                        describe(b)
                    );
                    self.error_at(node, Some("bandwidth_mbps"), b.pos, msg);
                }
            }
        }
        if let Some(l) = map.get("latency_ms") {
            match l
                .as_f64()
                .filter(|x| x.is_finite() && *x >= 0.0 && *x <= 1e12)
            {
                Some(ms) => link.latency_ns = (ms * 1e6).round() as u64,
                None => {
                    let msg = format!(
                        "expected a non-negative number of milliseconds, found {}",
                        describe(l)
                    );
                    self.error_at(node, Some("latency_ms"), l.pos, msg);
                }
            }
        }
        link
    }

    fn amounts(&mut self, map: &Map, path: &Path) -> Vec<(String, i64)> {
        let mut out = Vec::with_capacity(map.len());
        for (k, v) in map.iter() {
            match v.as_i64() {
                Some(x) if matches!(v.kind, Kind::Int(_)) => out.push((k.name.clone(), x)),
                _ => {
                    let msg = format!(
                        "expected an integer amount in base units, found {}",
                        describe(v)
                    );
                    self.error(&path.key(&k.name), v.pos, msg);
                }
            }
        }
        out
    }

    fn id(&mut self, map: &Map, key: &str, node: u32, pos: Pos) -> Option<String> {
        match map.get(key) {
            Some(v) => match &v.kind {
                Kind::Str(s) if !s.is_empty() => Some(s.clone()),
                Kind::Int(_) => v.scalar_text(),
                _ => {
                    let msg = format!("expected a non-empty string id, found {}", describe(v));
                    self.error_at(node, Some(key), v.pos, msg);
                    None
                }
            },
            None => {
                self.error(
                    &self.path(node),
                    pos,
                    format!("missing required key `{key}`"),
                );
                None
            }
        }
    }

    fn string(&mut self, v: &Value, node: u32, key: Option<&str>, what: &str) -> Option<String> {
        match v.as_str() {
            Some(s) => Some(s.to_owned()),
            None => {
                let msg = format!("expected {what} (a string), found {}", describe(v));
                self.error_at(node, key, v.pos, msg);
                None
            }
        }
    }

    fn number(&mut self, v: &Value, node: u32, key: &str) -> Option<f64> {
        let n = v.as_f64();
        if n.is_none() {
            let msg = format!("expected a number of degrees, found {}", describe(v));
            self.error_at(node, Some(key), v.pos, msg);
        }
        n
    }

    /// The items of a list with their path nodes; reports a non-list.
    fn list(&mut self, v: &'v Value, node: u32, what: &str) -> Vec<(usize, &'v Value, u32)> {
        match v.as_seq() {
            Some(items) => {
                let parent = self.nodes.get(node as usize).map_or(NO_NODE, |n| n.parent);
                let key = self
                    .nodes
                    .get(node as usize)
                    .map_or(Cow::Borrowed(""), |n| n.key.clone());
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| (i, item, self.node(parent, key.clone(), Some(i))))
                    .collect()
            }
            None => {
                let msg = format!("expected a list of {what}, found {}", v.type_name());
                self.error(&self.path(node), v.pos, msg);
                Vec::new()
            }
        }
    }

    /// Maps a builder problem back to a path and position.
    fn report(&mut self, p: &Problem) {
        let tree_entry = match p.at {
            Subject::Location { vertex, .. } | Subject::Capacity { vertex, .. } => {
                Some((TreeKind::Location, vertex))
            }
            Subject::Network { vertex, .. } => Some((TreeKind::Network, vertex)),
            _ => None,
        };
        if self.flagged.contains(&p.at) || tree_entry.is_some_and(|e| self.poisoned.contains(&e)) {
            return;
        }
        // Echoes of a missing top-level key: already reported once.
        let missing = |key: &str| self.top.is_none_or(|m| m.get(key).is_none());
        let echo = match &p.kind {
            ProblemKind::EmptyTree {
                tree: TreeKind::Location,
            } => missing("location"),
            ProblemKind::EmptyTree {
                tree: TreeKind::Network,
            } => missing("network"),
            ProblemKind::UnknownLevel { .. } => missing("levels"),
            _ => false,
        };
        if echo {
            return;
        }
        let (path, pos) = match p.at {
            Subject::Document => {
                let key = match &p.kind {
                    ProblemKind::EmptyTree { tree } | ProblemKind::NoRoot { tree } => match tree {
                        TreeKind::Location => "location",
                        TreeKind::Network => "network",
                    },
                    _ => "levels",
                };
                let pos = self
                    .top
                    .and_then(|m| m.entry(key))
                    .map_or(self.root_pos, |(k, _)| k.pos);
                (self.base.key(key), pos)
            }
            Subject::Level(i) => self.span(&self.levels, i),
            Subject::FinerThan(i) => self.span(&self.finer, i),
            Subject::Dimension(i) => self.span(&self.dims, i),
            Subject::Flavor(i) => self.span(&self.flavors, i),
            Subject::FlavorEntry { flavor, .. } => {
                self.amount_span(&self.flavors, flavor, &p.kind, None)
            }
            Subject::Capacity { vertex, .. } => {
                self.amount_span(&self.loc, vertex, &p.kind, Some("capacity"))
            }
            Subject::Location { vertex, field } => {
                self.field_span(&self.loc, vertex, field, TreeKind::Location)
            }
            Subject::Network { vertex, field } => {
                self.field_span(&self.net, vertex, field, TreeKind::Network)
            }
        };
        self.error(&path, pos, p.to_string());
    }

    fn span(&self, spans: &[Span<'v>], i: usize) -> (Path, Pos) {
        spans
            .get(i)
            .map_or((self.base.clone(), self.root_pos), |s| {
                (self.path(s.node), s.pos)
            })
    }

    fn amount_span(
        &self,
        spans: &[Span<'v>],
        i: usize,
        kind: &ProblemKind,
        key: Option<&str>,
    ) -> (Path, Pos) {
        let Some(s) = spans.get(i) else {
            return (self.base.clone(), self.root_pos);
        };
        let dim = match kind {
            ProblemKind::UnknownDimension { name, .. } => name.as_str(),
            ProblemKind::NegativeAmount { dimension, .. }
            | ProblemKind::DuplicateAmount { dimension } => dimension.as_str(),
            _ => "",
        };
        let mut path = self.path(s.node);
        let mut map = s.map;
        if let Some(k) = key {
            path = path.key(k);
            map = map.and_then(|m| m.get(k)).and_then(Value::as_map);
        }
        match map.and_then(|m| m.entry(dim)) {
            Some((k, _)) => (path.key(dim), k.pos),
            None => (path, s.pos),
        }
    }

    fn field_span(
        &self,
        spans: &[Span<'v>],
        i: usize,
        field: Field,
        tree: TreeKind,
    ) -> (Path, Pos) {
        let Some(s) = spans.get(i) else {
            return (self.base.clone(), self.root_pos);
        };
        let keys: &[&str] = match field {
            Field::Id => match tree {
                TreeKind::Location => &["id"],
                TreeKind::Network => &["leaf", "id"],
            },
            Field::Parent => &["parent"],
            Field::Level => &["level"],
            Field::Coordinates => &["lat", "lon"],
            Field::Capacity => &["capacity", "machine_type"],
            Field::Link => &["bandwidth_mbps", "latency_ms"],
            _ => &[],
        };
        for k in keys {
            if let Some(v) = s.map.and_then(|m| m.get(k)) {
                return (self.path(s.node).key(*k), v.pos);
            }
        }
        (self.path(s.node), s.pos)
    }
}

#[derive(Clone, Copy)]
enum Parent<'p> {
    /// An entry of a flat list: `parent:` names the parent (absent for the root).
    Flat,
    /// The mapping form's root.
    NestedRoot,
    /// Nested under the vertex with this id.
    Nested(&'p str),
}

fn describe(v: &Value) -> String {
    match v.scalar_text() {
        Some(t) if !matches!(v.kind, Kind::Str(_)) => format!("{} `{t}`", v.type_name()),
        Some(t) => format!("string `{t}`"),
        None => v.type_name().to_owned(),
    }
}
