//! The validation that turns a [`TopologyBuilder`] into a [`Topology`], every problem at once.

use std::collections::HashMap;

use crate::builder::{Link, MAX_LEVELS, NetworkNode, TopologyBuilder};
use crate::error::TopologyError;
use crate::ids::LevelId;
use crate::levels::{LevelOrder, LevelRelation};
use crate::problem::{Field, Problem, ProblemKind, Subject, TreeKind};
use crate::topology::{Assembly, Topology};

impl TopologyBuilder {
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
