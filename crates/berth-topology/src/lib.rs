//! Datacenter location tree and network tree sharing leaves (seed 004's datacenter meta-model).
//!
//! A datacenter is a pair of trees over the same leaves (hosts, storage boxes):
//! - the **location tree**, each vertex labelled with a level from a declared vocabulary; the
//!   levels form a partial order ("finer than", declared as edges and transitively closed), and
//!   every child must be strictly finer than its parent — incomparable levels (`host`,
//!   `storage_box`) may not nest;
//! - the **network tree**, switches as inner vertices, every edge (to the parent) carrying a
//!   bandwidth capacity and a latency. Each location leaf appears exactly once in it.
//!
//! Leaves carry a capacity vector over declared dimensions (integer base units, index =
//! [`DimId`]), a machine type (for license charges) and attributes. Any location vertex may
//! carry coordinates; a leaf inherits its nearest ancestor's.
//!
//! # Key types
//! - [`TopologyBuilder`]: programmatic construction; [`TopologyBuilder::build`] validates
//!   everything and reports **all** [`Problem`]s at once.
//! - [`load`] / [`load_value`]: the YAML/JSON document format below, with diagnostics that carry
//!   a field path and line:column (via `berth-doc`).
//! - [`Topology`]: the validated model with dense ids ([`LeafId`], [`LocVertexId`],
//!   [`NetVertexId`], [`NetEdgeId`], [`LevelId`], [`DimId`]) and fast queries:
//!   [`Topology::ancestor_at_level`], [`Topology::vertex_at_level`] and
//!   [`Topology::same_at_level`] (O(1) table lookups),
//!   [`Topology::lca_location`] and [`Topology::hops`] (O(1) LCA by a sparse table over the
//!   preorder), [`Topology::path_latency_ns`] (O(1) prefix sums),
//!   [`Topology::path_bottleneck_bandwidth`] (O(log depth) binary lifting),
//!   [`Topology::path_edges`] and [`Topology::geo_distance_km`] (haversine, R = 6371.0088 km).
//! - [`generate::datacenter`]: deterministic synthetic datacenters for benches.
//!
//! # Invariants
//! - Vertex ids are preorder indexes (root = 0); a subtree is a contiguous id range and leaves
//!   are numbered in location preorder, so [`Topology::leaves_under`] is a range.
//! - Every location leaf has exactly one network vertex and vice versa.
//! - Each level occurs at most once on a leaf's root path, so "the ancestor at level L" is
//!   well defined.
//! - **Places at a level**: every leaf is somewhere at every level
//!   ([`Topology::vertex_at_level`]). A leaf lacking the level (trees of uneven depth) is
//!   there by its coarsest ancestor strictly finer than the level, else by itself, so the
//!   leaves under one such vertex are together at the level, and a leaf is always together
//!   with itself. [`Topology::same_at_level`] (collocation) and
//!   [`Topology::differ_at_level`] (anti-collocation) compare these places.
//! - **Hops** are the number of edges on the network-tree path: 0 for the same leaf, 2 for two
//!   leaves under one top-of-rack switch. A bottleneck of `None` means no edge on the path has a
//!   bandwidth limit.
//! - Ids belong to the topology that issued them; using another topology's ids may panic.
//!
//! # Document format
//! `location` and `network` are either one mapping (the root, with nested `children`) or a
//! list of vertices naming their `parent` (flat; better for large trees). Both forms mix:
//! a flat entry may nest children. A network entry is a switch (`id`) or the attachment of a
//! location leaf (`leaf`); its `bandwidth_mbps` (integer Mbit/s, absent = unconstrained) and
//! `latency_ms` describe the edge to its parent. A location vertex without children is a leaf.
//!
//! ```
//! let text = r#"
//! levels: [region, room, rack, host, storage_box]
//! finer_than: [[room, region], [rack, room], [host, rack], [storage_box, rack]]
//! dimensions: [vcpu, ram_mib, disk_gib]
//! flavors:
//!   m1.medium: {vcpu: 2, ram_mib: 4096, disk_gib: 40}
//! location:
//!   id: dc1
//!   level: region
//!   lat: 40.71
//!   lon: -74.01
//!   children:
//!     - id: room1
//!       level: room
//!       children:
//!         - id: rack1
//!           level: rack
//!           children:
//!             - {id: h1, level: host, capacity: {vcpu: 32, ram_mib: 131072}, machine_type: x86-large}
//!             - {id: h2, level: host, capacity: {vcpu: 32, ram_mib: 131072}, attributes: {gpu: true}}
//!             - {id: s1, level: storage_box, capacity: {disk_gib: 100000}}
//! network:
//!   - id: tor1
//!   - {leaf: h1, parent: tor1, bandwidth_mbps: 25000, latency_ms: 0.002}
//!   - {leaf: h2, parent: tor1, bandwidth_mbps: 10000, latency_ms: 0.002}
//!   - {leaf: s1, parent: tor1, bandwidth_mbps: 40000}
//! "#;
//! let topo = berth_topology::load(text).unwrap();
//! let (h1, h2, s1) = (topo.leaf("h1").unwrap(), topo.leaf("h2").unwrap(), topo.leaf("s1").unwrap());
//! let rack = topo.level("rack").unwrap();
//! assert!(topo.same_at_level(h1, s1, rack));
//! assert_eq!(topo.hops(h1, h2), 2);
//! assert_eq!(topo.path_bottleneck_bandwidth(h1, h2), Some(10_000));
//! assert_eq!(topo.path_latency_ns(h1, h2), 4_000);
//! assert_eq!(topo.geo_distance_km(h1, s1), Some(0.0));
//! assert_eq!(topo.flavor("m1.medium"), Some(&[2, 4096, 40][..]));
//! ```

mod builder;
mod emit;
mod error;
pub mod generate;
mod ids;
mod levels;
mod load;
mod problem;
mod topology;
mod tree;
mod validate;

#[cfg(test)]
mod tests;

pub use builder::{
    Coordinates, Link, LocationSpec, MAX_LEVELS, NetworkNode, NetworkSpec, TopologyBuilder,
};
pub use emit::{DocumentForm, to_yaml};
pub use error::TopologyError;
pub use ids::{DimId, LeafId, LevelId, LocVertexId, NetEdgeId, NetVertexId};
pub use levels::{LevelOrder, LevelRelation};
pub use load::{document_limits, load, load_value, load_with};
pub use problem::{Field, Problem, ProblemKind, Subject, TreeKind};
pub use topology::{EARTH_RADIUS_KM, PathEdges, Topology, haversine_km};
