//! The level vocabulary and its partial order ("finer than"), transitively closed.

use std::collections::HashMap;

use petgraph::graph::{DiGraph, NodeIndex};

use crate::ids::LevelId;

/// How two levels compare under the partial order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelRelation {
    /// The same level.
    Same,
    /// The first level is strictly finer (closer to the leaves) than the second.
    Finer,
    /// The first level is strictly coarser than the second.
    Coarser,
    /// Neither is finer than the other (e.g. `host` and `storage_box`).
    Incomparable,
}

/// The level vocabulary with the transitive closure of the declared "finer than" edges.
///
/// Invariant: the closure is a strict partial order (irreflexive, transitive, antisymmetric);
/// a cyclic declaration is rejected when the topology is built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelOrder {
    names: Vec<String>,
    index: HashMap<String, LevelId>,
    /// Row-major `n * n`: `finer[a * n + b]` iff `a` is strictly finer than `b`.
    finer: Vec<bool>,
    declared: Vec<(LevelId, LevelId)>,
}

impl LevelOrder {
    /// Builds the order from distinct level names and declared `(finer, coarser)` edges.
    /// Returns the order and every cycle among the declared edges (each cycle as the list of
    /// indexes into `edges` that lie on it); with cycles the closure is not a partial order.
    pub(crate) fn compute(
        names: Vec<String>,
        edges: &[(LevelId, LevelId)],
    ) -> (Self, Vec<Vec<usize>>) {
        let n = names.len();
        let mut graph: DiGraph<(), usize> = DiGraph::with_capacity(n, edges.len());
        let nodes: Vec<NodeIndex> = (0..n).map(|_| graph.add_node(())).collect();
        for (i, &(a, b)) in edges.iter().enumerate() {
            graph.add_edge(nodes[a.index()], nodes[b.index()], i);
        }
        // Kosaraju is iterative in petgraph (Tarjan recurses), so a long chain cannot overflow.
        let mut cycles = Vec::new();
        let mut component = vec![usize::MAX; n];
        for (c, scc) in petgraph::algo::kosaraju_scc(&graph).iter().enumerate() {
            for v in scc {
                component[v.index()] = c;
            }
        }
        let mut by_component: Vec<(usize, Vec<usize>)> = Vec::new();
        for (i, &(a, b)) in edges.iter().enumerate() {
            let (ca, cb) = (component[a.index()], component[b.index()]);
            if ca == cb {
                match by_component.iter_mut().find(|(c, _)| *c == ca) {
                    Some((_, list)) => list.push(i),
                    None => by_component.push((ca, vec![i])),
                }
            }
        }
        cycles.extend(by_component.into_iter().map(|(_, list)| list));

        // Closure by bitset rows in reverse topological order: O(edges * n / 64). With a cycle
        // there is no partial order to close (the topology is rejected), so rows stay empty.
        let words = n.div_ceil(64);
        let mut reach = vec![0u64; n * words];
        if let Ok(topo) = petgraph::algo::toposort(&graph, None) {
            for &node in topo.iter().rev() {
                let a = node.index();
                for next in graph.neighbors(node) {
                    let b = next.index();
                    reach[a * words + b / 64] |= 1 << (b % 64);
                    for w in 0..words {
                        let bits = reach[b * words + w];
                        reach[a * words + w] |= bits;
                    }
                }
            }
        }
        let finer: Vec<bool> = (0..n * n)
            .map(|i| reach[(i / n) * words + (i % n) / 64] >> ((i % n) % 64) & 1 == 1)
            .collect();
        let index = names
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), LevelId(i as u16)))
            .collect();
        let order = LevelOrder {
            names,
            index,
            finer,
            declared: edges.to_vec(),
        };
        (order, cycles)
    }

    /// Number of levels.
    #[must_use]
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the vocabulary is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// All levels in declaration order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = LevelId> + '_ {
        (0..self.names.len()).map(|i| LevelId(i as u16))
    }

    /// The name of a level.
    #[must_use]
    pub fn name(&self, level: LevelId) -> &str {
        self.names.get(level.index()).map_or("", String::as_str)
    }

    /// Looks a level up by name.
    #[must_use]
    pub fn id(&self, name: &str) -> Option<LevelId> {
        self.index.get(name).copied()
    }

    /// Whether `a` is strictly finer than `b` under the transitive closure.
    #[must_use]
    pub fn is_finer(&self, a: LevelId, b: LevelId) -> bool {
        let n = self.names.len();
        a.index() < n && b.index() < n && self.finer[a.index() * n + b.index()]
    }

    /// How `a` relates to `b`.
    #[must_use]
    pub fn relation(&self, a: LevelId, b: LevelId) -> LevelRelation {
        if a == b {
            LevelRelation::Same
        } else if self.is_finer(a, b) {
            LevelRelation::Finer
        } else if self.is_finer(b, a) {
            LevelRelation::Coarser
        } else {
            LevelRelation::Incomparable
        }
    }

    /// The declared `(finer, coarser)` edges, before closure.
    #[must_use]
    pub fn declared(&self) -> &[(LevelId, LevelId)] {
        &self.declared
    }
}
