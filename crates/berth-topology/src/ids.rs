//! Dense newtype ids for levels, dimensions, leaves and the vertices and edges of both trees.

use std::fmt;

macro_rules! dense_id {
    ($(#[$doc:meta])* $name:ident($ty:ty)) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub $ty);

        impl $name {
            /// The id as an index into dense per-item arrays.
            #[must_use]
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}#{}", stringify!($name), self.0)
            }
        }
    };
}

dense_id!(
    /// A level of the vocabulary (`region`, `rack`, `host`, …), in declaration order.
    LevelId(u16)
);
dense_id!(
    /// A capacity dimension (`vcpu`, `ram_mib`, …), in declaration order; indexes capacity vectors.
    DimId(u16)
);
dense_id!(
    /// A leaf shared by both trees. Leaves are numbered in location-tree preorder, so the
    /// leaves below any location vertex form a contiguous range.
    LeafId(u32)
);
dense_id!(
    /// A vertex of the location tree, numbered in preorder (the root is 0; a subtree is a
    /// contiguous range starting at its root).
    LocVertexId(u32)
);
dense_id!(
    /// A vertex of the network tree, numbered in preorder like [`LocVertexId`].
    NetVertexId(u32)
);
dense_id!(
    /// An edge of the network tree, named by its lower (child) endpoint: the edge from
    /// `NetVertexId(e.0)` to its parent. The root has no edge.
    NetEdgeId(u32)
);

impl NetEdgeId {
    /// The child endpoint of this edge.
    #[must_use]
    pub fn child(self) -> NetVertexId {
        NetVertexId(self.0)
    }
}
