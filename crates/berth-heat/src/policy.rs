//! The seed 004 policy catalog: typed policy kinds, their shapes and the resources they concern.

use std::fmt;

/// What a policy type says, with its typed parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum PolicyKind {
    /// `OS::CoLocation {level}`: the two resources share their level-`level` location vertex.
    CoLocation {
        /// Location-tree level name.
        level: String,
    },
    /// `OS::AntiCoLocation {level}`: the two resources differ at level `level`.
    AntiCoLocation {
        /// Location-tree level name.
        level: String,
    },
    /// `OS::LLMNAntiCoLocation {l1, l2, n}` (synthetic, on a group of M members): at least `n`
    /// level-`l1` vertices, at most `ceil(M/n)` members per `l1` vertex, no two on one `l2` vertex.
    Llmn {
        /// The coarse level the members spread over.
        l1: String,
        /// The fine level on which no two members may share a vertex.
        l2: String,
        /// Least number of level-`l1` vertices.
        n: u32,
    },
    /// `OS::NetMaxHops {hops}`: the network-tree path between the two has at most `hops` edges
    /// (0 = the same leaf, i.e. direct-attached storage).
    NetMaxHops {
        /// Largest number of network edges.
        hops: u32,
    },
    /// `OS::NetBandwidth {bytes_per_second}`: bandwidth needed in each direction between the two.
    NetBandwidth {
        /// Bytes per second, each direction.
        bytes_per_second: u64,
    },
    /// `OS::NetReachability`: the two can communicate on all protocols and ports.
    NetReachability,
    /// `OS::NetEndpointAccess {protocols, endpoints}` (asymmetric): A may open connections to B
    /// over `protocols` and to B's `endpoints`.
    NetEndpointAccess {
        /// Protocols allowed from A to B.
        protocols: Vec<String>,
        /// `(protocol, port)` endpoints of B that A may reach.
        endpoints: Vec<(String, u16)>,
    },
    /// `OS::LicensedProduct {catalog, product}`: the product runs on the resource.
    LicensedProduct {
        /// Catalog of licensed products.
        catalog: String,
        /// Product id within the catalog.
        product: String,
    },
    /// `OS::VolExclusive`: the volume is the only volume on its host's disk.
    VolExclusive,
    /// `OS::VolNotMoved`: the volume stays where it is (BlockDeviceDriver backend): once
    /// placed, it is never moved.
    VolNotMoved,
}

/// How a policy type is applied (seed 004 "primitive/synthetic, monadic/dyadic").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// About one resource; on a group it applies to every relevant covered resource.
    Monadic,
    /// About a whole group of interchangeable members (LLMN).
    Synthetic,
    /// About an unordered pair.
    Symmetric,
    /// About an ordered pair; may not be applied to a group.
    Asymmetric,
}

/// Which resources a policy concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relevance {
    /// Anything that is placed on a leaf (servers and volumes).
    Placed,
    /// Compute instances only.
    Servers,
    /// Storage volumes only.
    Volumes,
}

/// Every policy type name, in catalog order.
pub const POLICY_TYPES: &[&str] = &[
    "OS::CoLocation",
    "OS::AntiCoLocation",
    "OS::LLMNAntiCoLocation",
    "OS::NetMaxHops",
    "OS::NetBandwidth",
    "OS::NetReachability",
    "OS::NetEndpointAccess",
    "OS::LicensedProduct",
    "OS::VolExclusive",
    "OS::VolNotMoved",
];

/// Properties every policy type accepts besides its own.
pub const COMMON_PROPERTIES: &[&str] = &["hardConstraint", "weight"];

impl PolicyKind {
    /// The template type name (`OS::AntiCoLocation`, …).
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match self {
            PolicyKind::CoLocation { .. } => POLICY_TYPES[0],
            PolicyKind::AntiCoLocation { .. } => POLICY_TYPES[1],
            PolicyKind::Llmn { .. } => POLICY_TYPES[2],
            PolicyKind::NetMaxHops { .. } => POLICY_TYPES[3],
            PolicyKind::NetBandwidth { .. } => POLICY_TYPES[4],
            PolicyKind::NetReachability => POLICY_TYPES[5],
            PolicyKind::NetEndpointAccess { .. } => POLICY_TYPES[6],
            PolicyKind::LicensedProduct { .. } => POLICY_TYPES[7],
            PolicyKind::VolExclusive => POLICY_TYPES[8],
            PolicyKind::VolNotMoved => POLICY_TYPES[9],
        }
    }

    /// How the type is applied.
    #[must_use]
    pub fn shape(&self) -> Shape {
        shape_of(self.type_name()).unwrap_or(Shape::Monadic)
    }

    /// Which resources the type concerns.
    #[must_use]
    pub fn relevance(&self) -> Relevance {
        match self {
            PolicyKind::LicensedProduct { .. } => Relevance::Servers,
            PolicyKind::VolExclusive | PolicyKind::VolNotMoved => Relevance::Volumes,
            _ => Relevance::Placed,
        }
    }

    /// Whether the type only records a connectivity requirement (no placement effect).
    #[must_use]
    pub fn is_connectivity(&self) -> bool {
        matches!(
            self,
            PolicyKind::NetReachability | PolicyKind::NetEndpointAccess { .. }
        )
    }
}

/// The shape of a type name, `None` if the name is not in the catalog.
#[must_use]
pub fn shape_of(type_name: &str) -> Option<Shape> {
    Some(match type_name {
        "OS::CoLocation"
        | "OS::AntiCoLocation"
        | "OS::NetMaxHops"
        | "OS::NetBandwidth"
        | "OS::NetReachability" => Shape::Symmetric,
        "OS::NetEndpointAccess" => Shape::Asymmetric,
        "OS::LLMNAntiCoLocation" => Shape::Synthetic,
        "OS::LicensedProduct" | "OS::VolExclusive" | "OS::VolNotMoved" => Shape::Monadic,
        _ => return None,
    })
}

/// The type-specific properties of a type name (required ones first).
#[must_use]
pub fn properties_of(type_name: &str) -> &'static [&'static str] {
    match type_name {
        "OS::CoLocation" | "OS::AntiCoLocation" => &["level"],
        "OS::LLMNAntiCoLocation" => &["l1", "l2", "n"],
        "OS::NetMaxHops" => &["hops"],
        "OS::NetBandwidth" => &["bytes_per_second"],
        "OS::NetEndpointAccess" => &["protocols", "endpoints"],
        "OS::LicensedProduct" => &["catalog", "product"],
        _ => &[],
    }
}

impl fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.type_name();
        match self {
            PolicyKind::CoLocation { level } | PolicyKind::AntiCoLocation { level } => {
                write!(f, "{t}(level={level})")
            }
            PolicyKind::Llmn { l1, l2, n } => write!(f, "{t}(l1={l1}, l2={l2}, n={n})"),
            PolicyKind::NetMaxHops { hops } => write!(f, "{t}(hops={hops})"),
            PolicyKind::NetBandwidth { bytes_per_second } => {
                write!(f, "{t}(bytes_per_second={bytes_per_second})")
            }
            PolicyKind::LicensedProduct { catalog, product } => {
                write!(f, "{t}(catalog={catalog}, product={product})")
            }
            PolicyKind::NetEndpointAccess {
                protocols,
                endpoints,
            } => {
                let eps: Vec<String> = endpoints.iter().map(|(p, n)| format!("{p}/{n}")).collect();
                write!(
                    f,
                    "{t}(protocols=[{}], endpoints=[{}])",
                    protocols.join(", "),
                    eps.join(", ")
                )
            }
            PolicyKind::NetReachability | PolicyKind::VolExclusive | PolicyKind::VolNotMoved => {
                f.write_str(t)
            }
        }
    }
}
