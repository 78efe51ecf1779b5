//! The validated [`Topology`]: both trees in preorder, leaf data, and the fast queries.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use geo::{Distance, HaversineMeasure, Point};

use crate::builder::{Coordinates, Link, NetworkNode, TopologyBuilder};
use crate::ids::{DimId, LeafId, LevelId, LocVertexId, NetEdgeId, NetVertexId};
use crate::levels::LevelOrder;
use crate::tree::{MinLifting, NONE, Tree};

/// Mean Earth radius in kilometres (IUGG / GRS80 R1) used for great-circle distances.
pub const EARTH_RADIUS_KM: f64 = 6371.0088;

/// Above this many `leaves * levels` entries the level lookup falls back from a dense table
/// (O(1)) to a binary search over the level's vertices (O(log n)).
const DENSE_LEVEL_TABLE_MAX: usize = 1 << 22;

/// A validated datacenter: a location tree and a network tree sharing their leaves.
///
/// Built by [`TopologyBuilder::build`] or [`crate::load`]. Ids are dense and only meaningful
/// for the topology that issued them; passing an id from another topology may panic.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    levels: LevelOrder,
    dimensions: Vec<String>,
    dim_index: HashMap<String, DimId>,
    flavors: Vec<(String, Vec<i64>)>,
    flavor_index: HashMap<String, usize>,

    loc: Tree,
    loc_names: Vec<String>,
    loc_level: Vec<LevelId>,
    loc_own_coords: Vec<Option<Coordinates>>,
    loc_coords: Vec<Option<Coordinates>>,
    loc_attributes: Vec<BTreeMap<String, serde_json::Value>>,
    loc_leaf: Vec<u32>,
    /// `loc_leaf_prefix[v]` = number of leaves with preorder id below `v` (length n + 1).
    loc_leaf_prefix: Vec<u32>,
    loc_index: HashMap<String, LocVertexId>,
    level_vertices: Vec<Vec<LocVertexId>>,

    leaf_loc: Vec<LocVertexId>,
    leaf_net: Vec<NetVertexId>,
    leaf_capacity: Vec<i64>,
    leaf_machine_type: Vec<Option<String>>,
    /// `leaves * levels` table of `vertex_at_level` (the ancestor at the level where there is
    /// one); empty when too big.
    level_table: Vec<u32>,

    net: Tree,
    net_names: Vec<String>,
    net_leaf: Vec<u32>,
    net_index: HashMap<String, NetVertexId>,
    net_link: Vec<Link>,
    /// Sum of latencies from the root down to each vertex.
    net_latency_from_root: Vec<u64>,
    net_bandwidth: MinLifting,
}

/// Everything validation established, handed to [`Topology::assemble`].
pub(crate) struct Assembly<'a> {
    pub(crate) builder: &'a TopologyBuilder,
    pub(crate) levels: LevelOrder,
    pub(crate) dimensions: Vec<String>,
    pub(crate) flavors: Vec<(String, Vec<i64>)>,
    pub(crate) loc_root: usize,
    pub(crate) loc_children: &'a [Vec<usize>],
    pub(crate) loc_level: &'a [LevelId],
    pub(crate) net_root: usize,
    pub(crate) net_children: &'a [Vec<usize>],
    pub(crate) net_leaf_of: &'a [Option<usize>],
}

impl Topology {
    // Several parallel per-vertex arrays are filled by index.
    #[allow(clippy::needless_range_loop)]
    pub(crate) fn assemble(a: Assembly<'_>) -> Self {
        let b = a.builder;
        let dim_index: HashMap<String, DimId> = a
            .dimensions
            .iter()
            .enumerate()
            .map(|(i, d)| (d.clone(), DimId(i as u16)))
            .collect();
        let flavor_index = a
            .flavors
            .iter()
            .enumerate()
            .map(|(i, (n, _))| (n.clone(), i))
            .collect();

        let loc_r = Tree::from_children(a.loc_root, a.loc_children);
        let loc = loc_r.tree;
        let n = loc.len();
        let mut loc_names = Vec::with_capacity(n);
        let mut loc_level = Vec::with_capacity(n);
        let mut loc_own_coords = Vec::with_capacity(n);
        let mut loc_coords: Vec<Option<Coordinates>> = Vec::with_capacity(n);
        let mut loc_attributes = Vec::with_capacity(n);
        let mut loc_leaf = vec![NONE; n];
        let mut loc_leaf_prefix = Vec::with_capacity(n + 1);
        let mut leaf_loc = Vec::new();
        let mut leaf_capacity = Vec::new();
        let mut leaf_machine_type = Vec::new();
        let mut level_vertices = vec![Vec::new(); a.levels.len()];
        for v in 0..n {
            let old = loc_r.order[v];
            let spec = &b.locations[old];
            loc_names.push(spec.id.clone());
            let level = a.loc_level[old];
            loc_level.push(level);
            level_vertices[level.index()].push(LocVertexId(v as u32));
            loc_own_coords.push(spec.coordinates);
            let inherited = loc.parent(v as u32).and_then(|p| loc_coords[p as usize]);
            loc_coords.push(spec.coordinates.or(inherited));
            loc_attributes.push(spec.attributes.clone());
            loc_leaf_prefix.push(leaf_loc.len() as u32);
            if loc.children(v as u32).is_empty() {
                loc_leaf[v] = leaf_loc.len() as u32;
                leaf_loc.push(LocVertexId(v as u32));
                let start = leaf_capacity.len();
                leaf_capacity.resize(start + a.dimensions.len(), 0);
                for (dim, amount) in &spec.capacity {
                    if let Some(d) = dim_index.get(dim) {
                        leaf_capacity[start + d.index()] = *amount;
                    }
                }
                leaf_machine_type.push(spec.machine_type.clone());
            }
        }
        loc_leaf_prefix.push(leaf_loc.len() as u32);
        let loc_index = loc_names
            .iter()
            .enumerate()
            .map(|(v, s)| (s.clone(), LocVertexId(v as u32)))
            .collect();

        let net_r = Tree::from_children(a.net_root, a.net_children);
        let net = net_r.tree;
        let m = net.len();
        let mut net_names = Vec::with_capacity(m);
        let mut net_leaf = vec![NONE; m];
        let mut net_index = HashMap::new();
        let mut net_link = Vec::with_capacity(m);
        let mut leaf_net = vec![NetVertexId(0); leaf_loc.len()];
        for w in 0..m {
            let old = net_r.order[w];
            let spec = &b.network[old];
            match &spec.node {
                NetworkNode::Switch(id) => {
                    net_index.insert(id.clone(), NetVertexId(w as u32));
                    net_names.push(id.clone());
                }
                NetworkNode::Leaf(id) => {
                    net_names.push(id.clone());
                    if let Some(loc_old) = a.net_leaf_of[old] {
                        let v = loc_r.new_id[loc_old];
                        if let Some(&leaf) = loc_leaf.get(v as usize) {
                            net_leaf[w] = leaf;
                            if let Some(slot) = leaf_net.get_mut(leaf as usize) {
                                *slot = NetVertexId(w as u32);
                            }
                        }
                    }
                }
            }
            net_link.push(if w == 0 { Link::default() } else { spec.link });
        }
        let mut net_latency_from_root = vec![0u64; m];
        for w in 1..m {
            let p = net.parent[w] as usize;
            net_latency_from_root[w] =
                net_latency_from_root[p].saturating_add(net_link[w].latency_ns);
        }
        let weights: Vec<u64> = net_link
            .iter()
            .map(|l| l.bandwidth_mbps.unwrap_or(u64::MAX))
            .collect();
        let net_bandwidth = MinLifting::new(&net, &weights);

        let levels_n = a.levels.len();
        let mut level_table = Vec::new();
        if leaf_loc.len().saturating_mul(levels_n) <= DENSE_LEVEL_TABLE_MAX {
            level_table = vec![NONE; leaf_loc.len() * levels_n];
            for (leaf, &v) in leaf_loc.iter().enumerate() {
                let row = &mut level_table[leaf * levels_n..(leaf + 1) * levels_n];
                let mut cur = Some(v.0);
                while let Some(u) = cur {
                    row[loc_level[u as usize].index()] = u;
                    cur = loc.parent(u);
                }
                for (l, slot) in row.iter_mut().enumerate() {
                    if *slot == NONE {
                        *slot = stand_in(&loc, &loc_level, &a.levels, v.0, LevelId(l as u16));
                    }
                }
            }
        }

        Topology {
            levels: a.levels,
            dimensions: a.dimensions,
            dim_index,
            flavors: a.flavors,
            flavor_index,
            loc,
            loc_names,
            loc_level,
            loc_own_coords,
            loc_coords,
            loc_attributes,
            loc_leaf,
            loc_leaf_prefix,
            loc_index,
            level_vertices,
            leaf_loc,
            leaf_net,
            leaf_capacity,
            leaf_machine_type,
            level_table,
            net,
            net_names,
            net_leaf,
            net_index,
            net_link,
            net_latency_from_root,
            net_bandwidth,
        }
    }

    // ---- vocabulary -------------------------------------------------------------------------

    /// The level vocabulary and its partial order.
    #[must_use]
    pub fn levels(&self) -> &LevelOrder {
        &self.levels
    }

    /// Looks a level up by name.
    #[must_use]
    pub fn level(&self, name: &str) -> Option<LevelId> {
        self.levels.id(name)
    }

    /// The capacity dimensions in declaration order (the index is the [`DimId`]).
    #[must_use]
    pub fn dimensions(&self) -> &[String] {
        &self.dimensions
    }

    /// Looks a dimension up by name.
    #[must_use]
    pub fn dimension(&self, name: &str) -> Option<DimId> {
        self.dim_index.get(name).copied()
    }

    /// The demand vector of a flavor (indexed by [`DimId`]).
    #[must_use]
    pub fn flavor(&self, name: &str) -> Option<&[i64]> {
        self.flavor_index
            .get(name)
            .map(|&i| self.flavors[i].1.as_slice())
    }

    /// All flavors in declaration order.
    pub fn flavors(&self) -> impl ExactSizeIterator<Item = (&str, &[i64])> + '_ {
        self.flavors.iter().map(|(n, v)| (n.as_str(), v.as_slice()))
    }

    // ---- leaves -----------------------------------------------------------------------------

    /// Number of leaves.
    #[must_use]
    pub fn leaf_count(&self) -> usize {
        self.leaf_loc.len()
    }

    /// All leaves in location preorder.
    pub fn leaves(&self) -> impl ExactSizeIterator<Item = LeafId> + use<> {
        (0..self.leaf_loc.len() as u32).map(LeafId)
    }

    /// Looks a leaf up by its location id.
    #[must_use]
    pub fn leaf(&self, id: &str) -> Option<LeafId> {
        self.location(id).and_then(|v| self.loc_leaf(v))
    }

    /// The leaf's id string.
    #[must_use]
    pub fn leaf_name(&self, leaf: LeafId) -> &str {
        self.loc_name(self.leaf_loc[leaf.index()])
    }

    /// The leaf's level.
    #[must_use]
    pub fn leaf_level(&self, leaf: LeafId) -> LevelId {
        self.loc_level[self.leaf_loc[leaf.index()].index()]
    }

    /// The leaf's capacity vector, indexed by [`DimId`] (missing dimensions are 0).
    #[must_use]
    pub fn leaf_capacity(&self, leaf: LeafId) -> &[i64] {
        let d = self.dimensions.len();
        &self.leaf_capacity[leaf.index() * d..(leaf.index() + 1) * d]
    }

    /// The leaf's machine type, if given.
    #[must_use]
    pub fn leaf_machine_type(&self, leaf: LeafId) -> Option<&str> {
        self.leaf_machine_type[leaf.index()].as_deref()
    }

    /// The leaf's attributes.
    #[must_use]
    pub fn leaf_attributes(&self, leaf: LeafId) -> &BTreeMap<String, serde_json::Value> {
        &self.loc_attributes[self.leaf_loc[leaf.index()].index()]
    }

    /// The leaf's coordinates: its own or its nearest ancestor's.
    #[must_use]
    pub fn leaf_coordinates(&self, leaf: LeafId) -> Option<Coordinates> {
        self.loc_coords[self.leaf_loc[leaf.index()].index()]
    }

    /// The leaf's vertex in the location tree.
    #[must_use]
    pub fn leaf_location(&self, leaf: LeafId) -> LocVertexId {
        self.leaf_loc[leaf.index()]
    }

    /// The leaf's vertex in the network tree.
    #[must_use]
    pub fn leaf_network(&self, leaf: LeafId) -> NetVertexId {
        self.leaf_net[leaf.index()]
    }

    // ---- location tree ----------------------------------------------------------------------

    /// Number of location vertices.
    #[must_use]
    pub fn loc_count(&self) -> usize {
        self.loc.len()
    }

    /// The location root (always id 0).
    #[must_use]
    pub fn loc_root(&self) -> LocVertexId {
        LocVertexId(0)
    }

    /// Looks a location vertex up by id.
    #[must_use]
    pub fn location(&self, id: &str) -> Option<LocVertexId> {
        self.loc_index.get(id).copied()
    }

    /// The vertex's id string.
    #[must_use]
    pub fn loc_name(&self, v: LocVertexId) -> &str {
        &self.loc_names[v.index()]
    }

    /// The vertex's level.
    #[must_use]
    pub fn loc_level(&self, v: LocVertexId) -> LevelId {
        self.loc_level[v.index()]
    }

    /// The vertex's parent (`None` for the root).
    #[must_use]
    pub fn loc_parent(&self, v: LocVertexId) -> Option<LocVertexId> {
        self.loc.parent(v.0).map(LocVertexId)
    }

    /// The vertex's children in document order.
    pub fn loc_children(&self, v: LocVertexId) -> impl ExactSizeIterator<Item = LocVertexId> + '_ {
        self.loc.children(v.0).iter().map(|&c| LocVertexId(c))
    }

    /// Edges from the root to the vertex.
    #[must_use]
    pub fn loc_depth(&self, v: LocVertexId) -> u32 {
        self.loc.depth[v.index()]
    }

    /// The vertex's own coordinates, if given.
    #[must_use]
    pub fn loc_own_coordinates(&self, v: LocVertexId) -> Option<Coordinates> {
        self.loc_own_coords[v.index()]
    }

    /// The vertex's coordinates: its own or its nearest ancestor's.
    #[must_use]
    pub fn loc_coordinates(&self, v: LocVertexId) -> Option<Coordinates> {
        self.loc_coords[v.index()]
    }

    /// The vertex's attributes.
    #[must_use]
    pub fn loc_attributes(&self, v: LocVertexId) -> &BTreeMap<String, serde_json::Value> {
        &self.loc_attributes[v.index()]
    }

    /// The leaf at this vertex, if it is one.
    #[must_use]
    pub fn loc_leaf(&self, v: LocVertexId) -> Option<LeafId> {
        self.loc_leaf
            .get(v.index())
            .copied()
            .filter(|&l| l != NONE)
            .map(LeafId)
    }

    /// The leaves in the subtree of `v` (a contiguous range, since leaves are numbered in preorder).
    #[must_use]
    pub fn leaves_under(&self, v: LocVertexId) -> Range<u32> {
        let end = self.loc.end[v.index()] as usize;
        self.loc_leaf_prefix[v.index()]..self.loc_leaf_prefix[end]
    }

    /// Whether `a` is `d` or an ancestor of `d`.
    #[must_use]
    pub fn loc_is_ancestor(&self, a: LocVertexId, d: LocVertexId) -> bool {
        self.loc.is_ancestor(a.0, d.0)
    }

    /// The location vertices of a level, in preorder (their subtrees are disjoint).
    #[must_use]
    pub fn vertices_at_level(&self, level: LevelId) -> &[LocVertexId] {
        self.level_vertices
            .get(level.index())
            .map_or(&[], Vec::as_slice)
    }

    /// The vertex at `level` on the path from `leaf` to the root (the leaf itself included).
    /// Each level occurs at most once on such a path, since levels strictly coarsen upward.
    #[must_use]
    pub fn ancestor_at_level(&self, leaf: LeafId, level: LevelId) -> Option<LocVertexId> {
        let l = self.levels.len();
        if level.index() >= l {
            return None;
        }
        if !self.level_table.is_empty() {
            let v = self.level_table[leaf.index() * l + level.index()];
            return (self.loc_level[v as usize] == level).then_some(LocVertexId(v));
        }
        self.loc_ancestor_at_level(self.leaf_loc[leaf.index()], level)
    }

    /// Where `leaf` is at `level`: its ancestor at `level` when it has one. A leaf without
    /// one (a host outside any chassis, the tree being of uneven depth) is placed at `level`
    /// by its coarsest ancestor strictly finer than `level`, which stands in for the missing
    /// vertex; the leaf itself when no ancestor is finer (or the level is incomparable with
    /// the leaf's, or not of this topology).
    ///
    /// So the leaves are partitioned, at every level, into subtrees: two leaves are together at
    /// `level` exactly when this vertex is the same for both, and a leaf is always together
    /// with itself. Collocation at `level` is this equality and anti-collocation its negation,
    /// which keeps the seed's reading: members anti-collocated at a level differ there and at
    /// every finer level, the leaf included.
    #[must_use]
    pub fn vertex_at_level(&self, leaf: LeafId, level: LevelId) -> LocVertexId {
        let l = self.levels.len();
        let v = self.leaf_loc[leaf.index()];
        if level.index() >= l {
            return v;
        }
        if !self.level_table.is_empty() {
            return LocVertexId(self.level_table[leaf.index() * l + level.index()]);
        }
        self.vertex_at_level_untabled(v, level)
    }

    /// [`Topology::vertex_at_level`] without the table, for topologies too big for one.
    pub(crate) fn vertex_at_level_untabled(&self, v: LocVertexId, level: LevelId) -> LocVertexId {
        self.loc_ancestor_at_level(v, level).unwrap_or_else(|| {
            LocVertexId(stand_in(
                &self.loc,
                &self.loc_level,
                &self.levels,
                v.0,
                level,
            ))
        })
    }

    /// Like [`Topology::ancestor_at_level`] for any location vertex, in O(log n).
    #[must_use]
    pub fn loc_ancestor_at_level(&self, v: LocVertexId, level: LevelId) -> Option<LocVertexId> {
        let list = self.vertices_at_level(level);
        let k = list.partition_point(|&u| u.0 <= v.0);
        let candidate = *list.get(k.checked_sub(1)?)?;
        self.loc.is_ancestor(candidate.0, v.0).then_some(candidate)
    }

    /// Whether both leaves are at one place at `level`: the same [`Topology::vertex_at_level`]
    /// (their common ancestor at `level`, or the one vertex standing in for it).
    #[must_use]
    pub fn same_at_level(&self, a: LeafId, b: LeafId, level: LevelId) -> bool {
        a == b || self.vertex_at_level(a, level) == self.vertex_at_level(b, level)
    }

    /// The negation of [`Topology::same_at_level`] (what anti-collocation at `level` requires).
    #[must_use]
    pub fn differ_at_level(&self, a: LeafId, b: LeafId, level: LevelId) -> bool {
        !self.same_at_level(a, b, level)
    }

    /// Lowest common ancestor of two leaves in the location tree, in O(1).
    #[must_use]
    pub fn lca_location(&self, a: LeafId, b: LeafId) -> LocVertexId {
        self.loc_lca(self.leaf_loc[a.index()], self.leaf_loc[b.index()])
    }

    /// Lowest common ancestor of two location vertices, in O(1).
    #[must_use]
    pub fn loc_lca(&self, a: LocVertexId, b: LocVertexId) -> LocVertexId {
        LocVertexId(self.loc.lca(a.0, b.0))
    }

    /// Great-circle (haversine, R = 6371.0088 km) distance between the leaves' coordinates;
    /// `None` if either has none.
    #[must_use]
    pub fn geo_distance_km(&self, a: LeafId, b: LeafId) -> Option<f64> {
        Some(haversine_km(
            self.leaf_coordinates(a)?,
            self.leaf_coordinates(b)?,
        ))
    }

    // ---- network tree -----------------------------------------------------------------------

    /// Number of network vertices.
    #[must_use]
    pub fn net_count(&self) -> usize {
        self.net.len()
    }

    /// The network root (always id 0).
    #[must_use]
    pub fn net_root(&self) -> NetVertexId {
        NetVertexId(0)
    }

    /// Looks a switch up by id (leaves: use [`Topology::leaf`] then [`Topology::leaf_network`]).
    #[must_use]
    pub fn switch(&self, id: &str) -> Option<NetVertexId> {
        self.net_index.get(id).copied()
    }

    /// The vertex's id string (a switch id, or the leaf's location id).
    #[must_use]
    pub fn net_name(&self, v: NetVertexId) -> &str {
        &self.net_names[v.index()]
    }

    /// The vertex's parent (`None` for the root).
    #[must_use]
    pub fn net_parent(&self, v: NetVertexId) -> Option<NetVertexId> {
        self.net.parent(v.0).map(NetVertexId)
    }

    /// The vertex's children in document order.
    pub fn net_children(&self, v: NetVertexId) -> impl ExactSizeIterator<Item = NetVertexId> + '_ {
        self.net.children(v.0).iter().map(|&c| NetVertexId(c))
    }

    /// Edges from the network root to the vertex.
    #[must_use]
    pub fn net_depth(&self, v: NetVertexId) -> u32 {
        self.net.depth[v.index()]
    }

    /// The leaf at this network vertex, if it is one.
    #[must_use]
    pub fn net_leaf(&self, v: NetVertexId) -> Option<LeafId> {
        self.net_leaf
            .get(v.index())
            .copied()
            .filter(|&l| l != NONE)
            .map(LeafId)
    }

    /// The edge from `v` up to its parent (`None` for the root).
    #[must_use]
    pub fn uplink(&self, v: NetVertexId) -> Option<NetEdgeId> {
        (v.0 != 0 && v.index() < self.net.len()).then_some(NetEdgeId(v.0))
    }

    /// Number of network edges (vertices minus one); edge ids are `1..=edge_count`.
    #[must_use]
    pub fn edge_count(&self) -> usize {
        self.net.len().saturating_sub(1)
    }

    /// The bandwidth and latency of an edge.
    #[must_use]
    pub fn edge_link(&self, e: NetEdgeId) -> Link {
        self.net_link[e.index()]
    }

    /// Lowest common ancestor of two leaves in the network tree, in O(1).
    #[must_use]
    pub fn lca_network(&self, a: LeafId, b: LeafId) -> NetVertexId {
        NetVertexId(
            self.net
                .lca(self.leaf_net[a.index()].0, self.leaf_net[b.index()].0),
        )
    }

    /// Hop count between two leaves: the number of edges on their network-tree path
    /// (0 for the same leaf, 2 for two leaves under one switch), in O(1).
    #[must_use]
    pub fn hops(&self, a: LeafId, b: LeafId) -> u32 {
        self.net
            .distance(self.leaf_net[a.index()].0, self.leaf_net[b.index()].0)
    }

    /// The smallest bandwidth (Mbit/s) on the path between two leaves, in O(log depth);
    /// `None` if no edge on the path is constrained (including `a == b`).
    #[must_use]
    pub fn path_bottleneck_bandwidth(&self, a: LeafId, b: LeafId) -> Option<u64> {
        let (x, y) = (self.leaf_net[a.index()].0, self.leaf_net[b.index()].0);
        let w = self.net.lca(x, y);
        let dw = self.net.depth[w as usize];
        let up_x = self
            .net_bandwidth
            .min_up(x, self.net.depth[x as usize] - dw);
        let up_y = self
            .net_bandwidth
            .min_up(y, self.net.depth[y as usize] - dw);
        Some(up_x.min(up_y)).filter(|&m| m != u64::MAX)
    }

    /// Total latency (ns) on the path between two leaves, in O(1).
    #[must_use]
    pub fn path_latency_ns(&self, a: LeafId, b: LeafId) -> u64 {
        let (x, y) = (self.leaf_net[a.index()].0, self.leaf_net[b.index()].0);
        let w = self.net.lca(x, y) as usize;
        let l = &self.net_latency_from_root;
        (l[x as usize] - l[w]) + (l[y as usize] - l[w])
    }

    /// Total latency on the path between two leaves, in milliseconds.
    #[must_use]
    pub fn path_latency_ms(&self, a: LeafId, b: LeafId) -> f64 {
        self.path_latency_ns(a, b) as f64 / 1e6
    }

    /// The edges on the path between two leaves: from `a` up to the LCA, then from `b` up to
    /// the LCA. Yields [`Topology::hops`] edges without allocating.
    #[must_use]
    pub fn path_edges(&self, a: LeafId, b: LeafId) -> PathEdges<'_> {
        let (x, y) = (self.leaf_net[a.index()].0, self.leaf_net[b.index()].0);
        PathEdges {
            tree: &self.net,
            a: x,
            b: y,
            top: self.net.lca(x, y),
        }
    }
}

/// Iterator over the edges of a network path; see [`Topology::path_edges`].
#[derive(Clone, Debug)]
pub struct PathEdges<'a> {
    tree: &'a Tree,
    a: u32,
    b: u32,
    top: u32,
}

impl Iterator for PathEdges<'_> {
    type Item = NetEdgeId;

    fn next(&mut self) -> Option<NetEdgeId> {
        for side in [&mut self.a, &mut self.b] {
            if *side != self.top {
                let e = NetEdgeId(*side);
                *side = self.tree.parent(*side)?;
                return Some(e);
            }
        }
        None
    }
}

/// Haversine distance in km on a sphere of radius [`EARTH_RADIUS_KM`].
#[must_use]
pub fn haversine_km(a: Coordinates, b: Coordinates) -> f64 {
    HaversineMeasure::new(EARTH_RADIUS_KM)
        .distance(Point::new(a.lon, a.lat), Point::new(b.lon, b.lat))
}

impl TopologyBuilder {
    /// A builder that reproduces `topology` (vertices in preorder, capacities of every dimension).
    #[must_use]
    pub fn from_topology(t: &Topology) -> Self {
        let mut b = TopologyBuilder::new();
        for l in t.levels.iter() {
            b.level(t.levels.name(l));
        }
        for &(f, c) in t.levels.declared() {
            b.finer_than(t.levels.name(f), t.levels.name(c));
        }
        for d in &t.dimensions {
            b.dimension(d.clone());
        }
        for (name, vector) in &t.flavors {
            b.flavor(
                name.clone(),
                t.dimensions.iter().cloned().zip(vector.iter().copied()),
            );
        }
        for v in 0..t.loc.len() {
            let id = LocVertexId(v as u32);
            let parent = t.loc_parent(id).map(|p| t.loc_name(p));
            let spec = b.location(t.loc_name(id), parent, t.levels.name(t.loc_level(id)));
            spec.coordinates = t.loc_own_coordinates(id);
            spec.attributes = t.loc_attributes(id).clone();
            if let Some(leaf) = t.loc_leaf(id) {
                spec.capacity = t
                    .dimensions
                    .iter()
                    .cloned()
                    .zip(t.leaf_capacity(leaf).iter().copied())
                    .collect();
                spec.machine_type = t.leaf_machine_type(leaf).map(str::to_owned);
            }
        }
        for w in 0..t.net.len() {
            let id = NetVertexId(w as u32);
            let parent = t.net_parent(id).map(|p| t.net_name(p));
            let link = t.net_link[w];
            match t.net_leaf(id) {
                Some(_) => b.network_leaf(t.net_name(id), parent, link),
                None => b.switch(t.net_name(id), parent, link),
            };
        }
        b
    }
}

/// The vertex standing in at `level` for leaf vertex `v`, which has no ancestor at `level`:
/// the topmost vertex of the run of strictly finer levels that starts at the leaf (levels
/// coarsen upward, so the ancestors finer than `level` are such a run), or the leaf.
fn stand_in(loc: &Tree, loc_level: &[LevelId], levels: &LevelOrder, v: u32, level: LevelId) -> u32 {
    let mut best = v;
    let mut cur = Some(v);
    while let Some(u) = cur {
        if !levels.is_finer(loc_level[u as usize], level) {
            break;
        }
        best = u;
        cur = loc.parent(u);
    }
    best
}
