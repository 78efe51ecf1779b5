//! The programmatic builder: the levels, dimensions, flavors, locations and network entries a
//! topology is collected from, before validation (`validate.rs`).

use std::collections::BTreeMap;

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
}
