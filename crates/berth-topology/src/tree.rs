//! A rooted tree renumbered in preorder, with O(1) LCA (sparse table) and path-minimum lifting.

/// Marks "no vertex" (the root's parent, a missing ancestor).
pub(crate) const NONE: u32 = u32::MAX;

/// A rooted tree whose vertex ids are preorder indexes (root = 0).
///
/// Invariants: `parent[v] < v` for every non-root `v`; the subtree of `v` is `v..end[v]`;
/// the children of `v` are `children[child_start[v]..child_start[v + 1]]` in insertion order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tree {
    pub(crate) parent: Vec<u32>,
    pub(crate) depth: Vec<u32>,
    pub(crate) end: Vec<u32>,
    pub(crate) child_start: Vec<u32>,
    pub(crate) children: Vec<u32>,
    /// `sparse[k][i]` = min of `parent[i..i + 2^k]` (with `parent[0]` read as 0). In preorder
    /// numbering the minimum parent over `(u, v]` is the LCA of `u < v`.
    sparse: Vec<Vec<u32>>,
}

/// The result of renumbering: the tree plus both directions of the id mapping.
pub(crate) struct Renumbered {
    pub(crate) tree: Tree,
    /// New (preorder) id -> original index.
    pub(crate) order: Vec<usize>,
    /// Original index -> new id, `NONE` for vertices not reachable from the root.
    pub(crate) new_id: Vec<u32>,
}

impl Tree {
    /// Renumbers the vertices reachable from `root` in preorder (children in the given order).
    // Parallel per-vertex arrays indexed through `parent`.
    #[allow(clippy::needless_range_loop)]
    pub(crate) fn from_children(root: usize, children: &[Vec<usize>]) -> Renumbered {
        let mut order = Vec::with_capacity(children.len());
        let mut new_id = vec![NONE; children.len()];
        let mut parent = Vec::with_capacity(children.len());
        let mut stack = vec![(root, NONE)];
        while let Some((old, p)) = stack.pop() {
            let id = order.len() as u32;
            new_id[old] = id;
            order.push(old);
            parent.push(p);
            for &c in children[old].iter().rev() {
                stack.push((c, id));
            }
        }
        let n = order.len();
        let mut depth = vec![0u32; n];
        for v in 1..n {
            depth[v] = depth[parent[v] as usize] + 1;
        }
        let mut size = vec![1u32; n];
        for v in (1..n).rev() {
            size[parent[v] as usize] += size[v];
        }
        let end: Vec<u32> = (0..n).map(|v| v as u32 + size[v]).collect();
        let mut child_start = vec![0u32; n + 1];
        for v in 1..n {
            child_start[parent[v] as usize + 1] += 1;
        }
        for v in 0..n {
            child_start[v + 1] += child_start[v];
        }
        let mut fill = child_start.clone();
        let mut kids = vec![0u32; n.saturating_sub(1)];
        for v in 1..n {
            let p = parent[v] as usize;
            kids[fill[p] as usize] = v as u32;
            fill[p] += 1;
        }
        let sparse = build_sparse(&parent);
        Renumbered {
            tree: Tree {
                parent,
                depth,
                end,
                child_start,
                children: kids,
                sparse,
            },
            order,
            new_id,
        }
    }

    /// Number of vertices.
    pub(crate) fn len(&self) -> usize {
        self.parent.len()
    }

    /// The parent of `v`, `None` for the root.
    pub(crate) fn parent(&self, v: u32) -> Option<u32> {
        self.parent.get(v as usize).copied().filter(|&p| p != NONE)
    }

    /// The children of `v` in insertion order.
    pub(crate) fn children(&self, v: u32) -> &[u32] {
        let v = v as usize;
        match (self.child_start.get(v), self.child_start.get(v + 1)) {
            (Some(&a), Some(&b)) => &self.children[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Whether `a` is an ancestor of `d` or `d` itself.
    pub(crate) fn is_ancestor(&self, a: u32, d: u32) -> bool {
        a <= d && d < self.end[a as usize]
    }

    /// Lowest common ancestor in O(1).
    pub(crate) fn lca(&self, u: u32, v: u32) -> u32 {
        if u == v {
            return u;
        }
        let (l, r) = if u < v { (u + 1, v) } else { (v + 1, u) };
        let (l, r) = (l as usize, r as usize);
        let k = (usize::BITS - 1 - (r - l + 1).leading_zeros()) as usize;
        let row = &self.sparse[k];
        row[l].min(row[r + 1 - (1 << k)])
    }

    /// Number of edges on the path between `u` and `v`.
    pub(crate) fn distance(&self, u: u32, v: u32) -> u32 {
        let w = self.lca(u, v);
        self.depth[u as usize] + self.depth[v as usize] - 2 * self.depth[w as usize]
    }
}

fn build_sparse(parent: &[u32]) -> Vec<Vec<u32>> {
    let n = parent.len();
    let mut base: Vec<u32> = parent.to_vec();
    if let Some(first) = base.first_mut() {
        *first = 0;
    }
    let mut sparse = vec![base];
    let mut k = 1;
    while (1usize << k) <= n {
        let half = 1usize << (k - 1);
        let prev = &sparse[k - 1];
        let row: Vec<u32> = (0..=n - (1 << k))
            .map(|i| prev[i].min(prev[i + half]))
            .collect();
        sparse.push(row);
        k += 1;
    }
    sparse
}

/// Binary lifting over a tree with a weight on each vertex's parent edge: the minimum weight
/// on the path from a vertex up `steps` edges in O(log depth).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MinLifting {
    up: Vec<Vec<u32>>,
    min: Vec<Vec<u64>>,
}

impl MinLifting {
    /// `weight[v]` is the weight of the edge from `v` to its parent (ignored for the root).
    pub(crate) fn new(tree: &Tree, weight: &[u64]) -> Self {
        let n = tree.len();
        let max_depth = tree.depth.iter().copied().max().unwrap_or(0);
        let levels = (u32::BITS - max_depth.leading_zeros()).max(1) as usize;
        let up0: Vec<u32> = (0..n)
            .map(|v| tree.parent(v as u32).unwrap_or(v as u32))
            .collect();
        let min0: Vec<u64> = (0..n)
            .map(|v| if v == 0 { u64::MAX } else { weight[v] })
            .collect();
        let mut up = vec![up0];
        let mut min = vec![min0];
        for k in 1..levels {
            let (pu, pm) = (&up[k - 1], &min[k - 1]);
            let nu: Vec<u32> = (0..n).map(|v| pu[pu[v] as usize]).collect();
            let nm: Vec<u64> = (0..n).map(|v| pm[v].min(pm[pu[v] as usize])).collect();
            up.push(nu);
            min.push(nm);
        }
        MinLifting { up, min }
    }

    /// Minimum edge weight over the `steps` edges above `v` (`u64::MAX` for no edges).
    pub(crate) fn min_up(&self, mut v: u32, mut steps: u32) -> u64 {
        let mut best = u64::MAX;
        let mut k = 0;
        while steps > 0 && k < self.up.len() {
            if steps & 1 == 1 {
                best = best.min(self.min[k][v as usize]);
                v = self.up[k][v as usize];
            }
            steps >>= 1;
            k += 1;
        }
        best
    }
}
