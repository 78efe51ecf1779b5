//! Interchangeable variables: detection, for ordering their values in the search.
//!
//! Variables `x` and `y` are interchangeable when swapping their values in any assignment
//! changes neither feasibility nor cost: equal domains after root propagation, the same
//! objective terms (each a direct unary term of the root sum, same weight and costs, or none)
//! and every constraint reading either one says [`Constraint::symmetric`] for the pair, or
//! reads only it and is entailed by its root domain. Swaps generate every permutation of a
//! class, so some optimal plan has the class's values non-decreasing in variable order (by
//! their rank in the shared value order): the search may require that when it wants one
//! optimum (not k distinct plans).

use std::collections::BTreeMap;

use crate::expr::Compiled;
use crate::state::State;
use crate::{Assignment, Constraint, Value, VarId};

/// Classes of two or more interchangeable variables, each increasing by variable id.
pub(crate) fn classes(
    cons: &[&dyn Constraint],
    hard: &[bool],
    obj: &Compiled,
    st: &State,
) -> Vec<Vec<u32>> {
    let n = st.vars();
    // The objective: per variable, its one direct unary term `(weight, node)`, none, or
    // anything else (then it is left alone).
    let mut term: Vec<Option<(f64, usize)>> = vec![None; n];
    let mut usable = vec![true; n];
    match obj.root_terms() {
        Some(root) => {
            for &(w, node) in root {
                let direct = obj.unary_leaf(node).map(|l| l.0);
                for x in obj.node_vars(node) {
                    let x = x as usize;
                    if x >= n {
                        continue;
                    }
                    if direct.is_some() && term[x].is_none() && usable[x] {
                        term[x] = Some((w, node));
                    } else {
                        usable[x] = false;
                    }
                }
            }
        }
        None => {
            for x in obj.all_vars() {
                if let Some(u) = usable.get_mut(x as usize) {
                    *u = false;
                }
            }
        }
    }
    // Constraints per variable, leaving out unary hard ones its root domain entails.
    let mut reads: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut probe: Vec<Option<Value>> = vec![None; n];
    for (c, k) in cons.iter().enumerate() {
        let scope = k.scope();
        if let [x] = scope
            && hard.get(c).copied().unwrap_or(false)
            && x.index() < n
        {
            let entailed = st.values(x.0).all(|v| {
                probe[x.index()] = Some(v);
                let ok = k.violation(&Assignment::new(&probe)) == 0.0;
                probe[x.index()] = None;
                ok
            });
            if entailed {
                continue;
            }
        }
        for x in scope {
            if let Some(r) = reads.get_mut(x.index())
                && r.last() != Some(&(c as u32))
            {
                r.push(c as u32);
            }
        }
    }
    // Candidates share size, constraints and weight; compared in detail within a bucket.
    let mut buckets: BTreeMap<(u32, &[u32], u64, u64), Vec<u32>> = BTreeMap::new();
    for x in 0..n {
        if !usable[x] || st.value(x as u32).is_some() {
            continue;
        }
        let (w, sig) = match term[x].and_then(|(w, node)| Some((w, obj.unary_leaf(node)?))) {
            Some((w, (_, costs, ..))) => (
                w.to_bits(),
                costs
                    .iter()
                    .fold(costs.len() as u64, |h, c| h.rotate_left(5) ^ c.to_bits()),
            ),
            None => (0, 0),
        };
        buckets
            .entry((st.universe(x as u32), reads[x].as_slice(), w, sig))
            .or_default()
            .push(x as u32);
    }
    let mut out = Vec::new();
    for vars in buckets.into_values() {
        if vars.len() < 2 {
            continue;
        }
        let mut classes: Vec<Vec<u32>> = Vec::new();
        for x in vars {
            match classes
                .iter_mut()
                .find(|c| same(cons, obj, st, &term, &reads, c[0], x))
            {
                Some(c) => c.push(x),
                None => classes.push(vec![x]),
            }
        }
        out.extend(classes.into_iter().filter(|c| c.len() > 1));
    }
    out.sort();
    out
}

/// Whether swapping `x` and `y` is a symmetry (they already share size, constraints, weight).
fn same(
    cons: &[&dyn Constraint],
    obj: &Compiled,
    st: &State,
    term: &[Option<(f64, usize)>],
    reads: &[Vec<u32>],
    x: u32,
    y: u32,
) -> bool {
    let (xi, yi) = (x as usize, y as usize);
    if st.size(x) != st.size(y) || !st.values(x).eq(st.values(y)) {
        return false;
    }
    let costs = |t: Option<(f64, usize)>| t.and_then(|(_, n)| obj.unary_leaf(n)).map(|l| l.1);
    if costs(term[xi]) != costs(term[yi]) {
        return false;
    }
    reads[xi].iter().all(|&c| {
        cons.get(c as usize)
            .is_some_and(|k| k.symmetric(VarId(x), VarId(y)))
    })
}
