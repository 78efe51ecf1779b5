//! Structured validation problems found when a topology is built, with what they refer to.

use std::fmt;

use crate::levels::LevelRelation;

/// Which of the two trees a problem is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TreeKind {
    /// The location tree.
    Location,
    /// The network tree.
    Network,
}

impl fmt::Display for TreeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TreeKind::Location => "location",
            TreeKind::Network => "network",
        })
    }
}

/// The part of an entry a problem points at (so a loader can report the right line).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Field {
    /// The entry as a whole.
    Entry,
    /// Its `id` (or `leaf` for a network leaf).
    Id,
    /// Its `parent` reference (or the nesting that implies it).
    Parent,
    /// Its `level`.
    Level,
    /// Its `lat`/`lon`.
    Coordinates,
    /// Its `capacity` or `machine_type`.
    Capacity,
    /// Its `bandwidth_mbps`/`latency_ms`.
    Link,
}

/// What a problem refers to, as indexes into the builder's lists in insertion order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Subject {
    /// The document (or builder) as a whole.
    Document,
    /// The i-th declared level.
    Level(usize),
    /// The i-th declared `finer_than` edge.
    FinerThan(usize),
    /// The i-th declared dimension.
    Dimension(usize),
    /// The i-th flavor.
    Flavor(usize),
    /// Entry `entry` of flavor `flavor`.
    FlavorEntry {
        /// Flavor index.
        flavor: usize,
        /// Entry index within the flavor.
        entry: usize,
    },
    /// A location vertex.
    Location {
        /// Location entry index.
        vertex: usize,
        /// Which part of the entry.
        field: Field,
    },
    /// Capacity entry `entry` of location vertex `vertex`.
    Capacity {
        /// Location entry index.
        vertex: usize,
        /// Capacity entry index.
        entry: usize,
    },
    /// A network vertex (switch or leaf attachment).
    Network {
        /// Network entry index.
        vertex: usize,
        /// Which part of the entry.
        field: Field,
    },
}

/// What is wrong.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ProblemKind {
    /// More levels than the closure matrix supports.
    TooManyLevels { count: usize, max: usize },
    /// A level declared twice.
    DuplicateLevel { name: String },
    /// A reference to an undeclared level.
    UnknownLevel { name: String, expected: Vec<String> },
    /// The declared `finer_than` edges are cyclic.
    LevelCycle { levels: Vec<String> },
    /// A dimension declared twice.
    DuplicateDimension { name: String },
    /// A reference to an undeclared dimension.
    UnknownDimension { name: String, expected: Vec<String> },
    /// A flavor declared twice.
    DuplicateFlavor { name: String },
    /// A dimension given twice in one capacity or flavor.
    DuplicateAmount { dimension: String },
    /// A negative capacity or flavor amount.
    NegativeAmount { dimension: String, value: i64 },
    /// A tree without vertices.
    EmptyTree { tree: TreeKind },
    /// An id used twice in one tree.
    DuplicateId { tree: TreeKind, id: String },
    /// A `parent` naming no vertex of the tree.
    UnknownParent { tree: TreeKind, parent: String },
    /// A second vertex without a parent.
    ExtraRoot {
        tree: TreeKind,
        id: String,
        root: String,
    },
    /// No vertex without a parent.
    NoRoot { tree: TreeKind },
    /// Parent references that form a cycle (listed child first, each followed by its parent).
    Cycle { tree: TreeKind, ids: Vec<String> },
    /// A child whose level is not strictly finer than its parent's.
    OrderViolation {
        id: String,
        level: String,
        parent: String,
        parent_level: String,
        relation: LevelRelation,
    },
    /// Capacity or machine type on a vertex that has children.
    CapacityOnInnerVertex { id: String },
    /// Latitude or longitude out of range (or not finite).
    InvalidCoordinates { lat: f64, lon: f64 },
    /// A network leaf naming no location vertex.
    UnknownLeaf { id: String },
    /// A network leaf naming a location vertex that has children.
    NotALeaf { id: String },
    /// A location leaf attached twice in the network tree.
    LeafTwice { id: String },
    /// A location leaf absent from the network tree.
    LeafMissing { id: String },
    /// A switch with no children (the network tree's leaves must be location leaves).
    SwitchWithoutChildren { id: String },
    /// Bandwidth or latency on the network root, which has no parent edge.
    RootLink { id: String },
}

/// One validation problem: what is wrong and where.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Problem {
    /// What the problem refers to.
    pub at: Subject,
    /// What is wrong.
    pub kind: ProblemKind,
}

impl Problem {
    pub(crate) fn new(at: Subject, kind: ProblemKind) -> Self {
        Problem { at, kind }
    }
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "(none declared)".to_owned()
    } else {
        items.join(", ")
    }
}

fn id_word(tree: TreeKind) -> &'static str {
    match tree {
        TreeKind::Location => "location vertex",
        TreeKind::Network => "switch",
    }
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProblemKind::TooManyLevels { count, max } => {
                write!(f, "too many levels ({count}); at most {max} are supported")
            }
            ProblemKind::DuplicateLevel { name } => {
                write!(f, "duplicate level `{name}`; level names must be unique")
            }
            ProblemKind::UnknownLevel { name, expected } => {
                write!(
                    f,
                    "unknown level `{name}`; expected one of {}",
                    list(expected)
                )
            }
            ProblemKind::LevelCycle { levels } => write!(
                f,
                "finer_than edges form a cycle through levels {}; the order must be acyclic",
                levels
                    .iter()
                    .map(|l| format!("`{l}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ProblemKind::DuplicateDimension { name } => {
                write!(
                    f,
                    "duplicate dimension `{name}`; dimension names must be unique"
                )
            }
            ProblemKind::UnknownDimension { name, expected } => {
                write!(
                    f,
                    "unknown dimension `{name}`; expected one of {}",
                    list(expected)
                )
            }
            ProblemKind::DuplicateFlavor { name } => {
                write!(f, "duplicate flavor `{name}`; flavor names must be unique")
            }
            ProblemKind::DuplicateAmount { dimension } => {
                write!(
                    f,
                    "dimension `{dimension}` given twice; expected one amount per dimension"
                )
            }
            ProblemKind::NegativeAmount { dimension, value } => {
                write!(
                    f,
                    "negative amount {value} for `{dimension}`; expected an integer >= 0"
                )
            }
            ProblemKind::EmptyTree { tree } => {
                write!(f, "the {tree} tree is empty; expected at least one vertex")
            }
            ProblemKind::DuplicateId { tree, id } => {
                write!(
                    f,
                    "duplicate {} id `{id}`; ids must be unique within the tree",
                    id_word(*tree)
                )
            }
            ProblemKind::UnknownParent { tree, parent } => {
                write!(
                    f,
                    "unknown parent `{parent}`; expected the id of a {}",
                    id_word(*tree)
                )
            }
            ProblemKind::ExtraRoot { tree, id, root } => write!(
                f,
                "`{id}` has no parent but `{root}` is already the root of the {tree} tree; expected exactly one root"
            ),
            ProblemKind::NoRoot { tree } => {
                write!(
                    f,
                    "the {tree} tree has no root; expected exactly one vertex without a parent"
                )
            }
            ProblemKind::Cycle { tree, ids } => {
                let mut path = ids.join(" -> ");
                if let Some(first) = ids.first() {
                    path.push_str(" -> ");
                    path.push_str(first);
                }
                write!(
                    f,
                    "cycle in the {tree} tree: {path}; expected parents to lead to the root"
                )
            }
            ProblemKind::OrderViolation {
                id,
                level,
                parent,
                parent_level,
                relation,
            } => {
                let why = match relation {
                    LevelRelation::Same => "they are the same level",
                    LevelRelation::Coarser | LevelRelation::Finer => "it is coarser",
                    LevelRelation::Incomparable => "the levels are incomparable",
                };
                write!(
                    f,
                    "`{id}` (level `{level}`) must be finer than its parent `{parent}` (level `{parent_level}`), but {why}"
                )
            }
            ProblemKind::CapacityOnInnerVertex { id } => write!(
                f,
                "`{id}` has children, so it cannot carry capacity or machine_type; only leaves host resources"
            ),
            ProblemKind::InvalidCoordinates { lat, lon } => write!(
                f,
                "coordinates ({lat}, {lon}) out of range; expected latitude in [-90, 90] and longitude in [-180, 180]"
            ),
            ProblemKind::UnknownLeaf { id } => {
                write!(f, "unknown leaf `{id}`; expected the id of a location leaf")
            }
            ProblemKind::NotALeaf { id } => write!(
                f,
                "`{id}` has children in the location tree; only location leaves attach to the network"
            ),
            ProblemKind::LeafTwice { id } => write!(
                f,
                "leaf `{id}` appears twice in the network tree; expected each leaf exactly once"
            ),
            ProblemKind::LeafMissing { id } => write!(
                f,
                "leaf `{id}` is missing from the network tree; expected each leaf exactly once"
            ),
            ProblemKind::SwitchWithoutChildren { id } => write!(
                f,
                "switch `{id}` has no children; the network tree's leaves must be location leaves"
            ),
            ProblemKind::RootLink { id } => write!(
                f,
                "the network root `{id}` has no parent edge, so it takes no bandwidth_mbps or latency_ms"
            ),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kind.fmt(f)
    }
}
