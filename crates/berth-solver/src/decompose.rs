//! Independent components of the objective: the split (solved by `combine`, read by `search`).
//!
//! When the objective is a sum of terms, variables linked by a term or by a hard constraint
//! form a component. Constraints are merged smallest scope first; one that would make a
//! component larger than `COMP_LIMIT` variables (a shared capacity, a global count) is
//! relaxed instead. Relaxing only loosens, so the optimum of each component alone is a lower
//! bound of its terms in any solution, at every node. Without this, branch and bound thrashes
//! across independent groups whose individual bounds are loose (each HA group of three
//! demands counting the same nearest host three times).

use crate::expr::Compiled;
use crate::{ConstraintId, Problem, Value, VarId};

/// A constraint that would make a component larger than this is relaxed.
const COMP_LIMIT: usize = 16;

/// One component: its variables, its root terms and (if solved) its optimal cost.
pub(crate) struct Comp {
    pub(crate) vars: Vec<u32>,
    pub(crate) terms: Vec<usize>,
    pub(crate) opt: Option<f64>,
    /// The optimal part found, `(var, value)`.
    pub(crate) sol: Option<Vec<(u32, Value)>>,
    /// The components merged into this one, with their optima (a bound for its search).
    pub(crate) parts: Vec<Comp>,
}

/// The components of a problem, plus the root terms that read no variable.
pub(crate) struct Components {
    pub(crate) list: Vec<Comp>,
    pub(crate) loose: Vec<usize>,
}

pub(crate) fn find(parent: &mut [u32], x: u32) -> u32 {
    let mut r = x;
    while parent[r as usize] != r {
        r = parent[r as usize];
    }
    let mut y = x;
    while parent[y as usize] != r {
        let next = parent[y as usize];
        parent[y as usize] = r;
        y = next;
    }
    r
}

pub(crate) fn union(parent: &mut [u32], size: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        parent[hi as usize] = lo;
        size[lo as usize] += size[hi as usize];
    }
}

/// Size of the component that merging `scope` would make.
fn merged_size(parent: &mut [u32], size: &[u32], scope: &[VarId]) -> usize {
    let mut roots: Vec<u32> = scope.iter().map(|x| find(parent, x.0)).collect();
    roots.sort_unstable();
    roots.dedup();
    roots.iter().map(|&r| size[r as usize] as usize).sum()
}

/// Splits the problem, or `None` when the objective is not a sum or nothing splits.
pub(crate) fn analyze(p: &Problem, obj: &Compiled) -> Option<Components> {
    let terms = obj.root_terms()?;
    let n = p.var_count();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    let mut size = vec![1u32; n];
    let term_vars: Vec<Vec<u32>> = terms.iter().map(|t| obj.node_vars(t.1)).collect();
    for vs in &term_vars {
        for w in vs.windows(2) {
            union(&mut parent, &mut size, w[0], w[1]);
        }
    }
    let mut hard: Vec<(usize, u32)> = (0..p.constraint_count() as u32)
        .filter(|&i| p.soft_weight(ConstraintId(i)).is_none())
        .filter_map(|i| p.constraint(ConstraintId(i)).map(|k| (k.scope().len(), i)))
        .collect();
    hard.sort_unstable();
    for (_, i) in hard {
        let Some(k) = p.constraint(ConstraintId(i)) else {
            continue;
        };
        if merged_size(&mut parent, &size, k.scope()) <= COMP_LIMIT {
            for w in k.scope().windows(2) {
                union(&mut parent, &mut size, w[0].0, w[1].0);
            }
        }
    }
    let mut index = vec![usize::MAX; n];
    let mut list: Vec<Comp> = Vec::new();
    for x in 0..n as u32 {
        let r = find(&mut parent, x) as usize;
        if index[r] == usize::MAX {
            index[r] = list.len();
            list.push(Comp {
                vars: Vec::new(),
                terms: Vec::new(),
                opt: None,
                sol: None,
                parts: Vec::new(),
            });
        }
        list[index[r]].vars.push(x);
    }
    let mut loose = Vec::new();
    for (i, vs) in term_vars.iter().enumerate() {
        match vs.first() {
            Some(&x) => {
                let r = find(&mut parent, x) as usize;
                list[index[r]].terms.push(i);
            }
            None => loose.push(i),
        }
    }
    (list.len() > 1).then_some(Components { list, loose })
}
