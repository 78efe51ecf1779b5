//! The root LP's pair terms: each one's transportation relaxation, its columns (seeded,
//! covered, priced) and what is left of the term once its multipliers are in the unary costs.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{Relaxation, capacity_rows};
use crate::expr::{Compiled, PairFn};
use crate::lagrange::Absorbed;
use crate::state::State;
use crate::{Linear, Problem, Value, VarId};

/// A pair term with its columns `(k, l)`: `xs[k]` of `a` with `ys[l]` of `b`.
pub(super) type PairColumns = (Arc<PairTerm>, Vec<(u32, u32)>);

/// Most root value pairs of one pair term the LP takes in (its cost table is computed once).
const MAX_PAIR_CELLS: usize = 1 << 20;

/// A pair term `w · cost(a, b)` of the objective in the root LP, by its transportation
/// relaxation: columns `z_xy ≥ 0` with `Σ_y z_xy = [a = x]`, `Σ_x z_xy = [b = y]` and cost
/// `w · cost(x, y)`. Its rows' multipliers `α_x`, `β_y` (with `α_x + β_y ≤ c_xy` for every
/// root pair, see [`Relaxation::feasible_pairs`]) move the term into the unary costs; what
/// is left, `c_xy − α_x − β_y ≥ 0`, is bounded with the joint bounds of `lagrange.rs`.
pub(super) struct PairTerm {
    /// The root term.
    pub(super) term: usize,
    pub(super) a: u32,
    pub(super) b: u32,
    pub(super) w: f64,
    pub(super) f: PairFn,
    /// Root values of `a` and `b`, increasing.
    pub(super) xs: Vec<u32>,
    pub(super) ys: Vec<u32>,
    /// `w · cost(xs[k], ys[l])` at `k * ys.len() + l`.
    pub(super) c: Vec<f64>,
}

impl PairTerm {
    pub(super) fn cost(&self, k: u32, l: u32) -> f64 {
        self.c[k as usize * self.ys.len() + l as usize]
    }
}

/// The pair terms among `others` the LP takes in: two distinct variables, a finite cost on
/// every root pair, at most [`MAX_PAIR_CELLS`] of them.
pub(super) fn pair_terms(
    p: &Problem,
    obj: &Compiled,
    st: &State,
    others: &[usize],
) -> Vec<Arc<PairTerm>> {
    let Some(root) = obj.root_terms() else {
        return Vec::new();
    };
    let n = st.vars() as u32;
    others
        .iter()
        .filter_map(|&t| {
            let (weight, node) = root[t];
            let (a, b, f, _, _) = obj.pair_leaf(node)?;
            let w = p.sign() * weight;
            if a == b || a >= n || b >= n || w == 0.0 || !w.is_finite() {
                return None;
            }
            let xs: Vec<u32> = st.values(a).map(|v| v.0).collect();
            let ys: Vec<u32> = st.values(b).map(|v| v.0).collect();
            if xs.is_empty() || ys.is_empty() || xs.len() * ys.len() > MAX_PAIR_CELLS {
                return None;
            }
            let mut c = Vec::with_capacity(xs.len() * ys.len());
            for &x in &xs {
                for &y in &ys {
                    c.push(w * f(Value(x), Value(y)));
                }
            }
            c.iter().all(|c| c.is_finite()).then(|| {
                Arc::new(PairTerm {
                    term: t,
                    a,
                    b,
                    w,
                    f: f.clone(),
                    xs,
                    ys,
                    c,
                })
            })
        })
        .collect()
}

/// Adds to `z` a pair column for each value of `ca` (of `pt.a`) and of `cb` (of `pt.b`)
/// that has none: its cheapest partner among the other side's columns.
pub(super) fn cover_pairs(pt: &PairTerm, ca: &[u32], cb: &[u32], z: &mut BTreeSet<(u32, u32)>) {
    let ks: Vec<u32> = positions(&pt.xs, ca);
    let ls: Vec<u32> = positions(&pt.ys, cb);
    let (mut has_k, mut has_l) = (BTreeSet::new(), BTreeSet::new());
    for &(k, l) in z.iter() {
        has_k.insert(k);
        has_l.insert(l);
    }
    let cheapest = |of: &[u32], cost: &dyn Fn(u32) -> f64| {
        of.iter()
            .copied()
            .min_by(|&m, &n| cost(m).total_cmp(&cost(n)).then(m.cmp(&n)))
    };
    for &k in &ks {
        if !has_k.contains(&k)
            && let Some(l) = cheapest(&ls, &|l| pt.cost(k, l))
        {
            z.insert((k, l));
        }
    }
    for &l in &ls {
        if !has_l.contains(&l)
            && let Some(k) = cheapest(&ks, &|k| pt.cost(k, l))
        {
            z.insert((k, l));
        }
    }
}

/// The positions in `all` (increasing) of the values of `some` (increasing).
fn positions(all: &[u32], some: &[u32]) -> Vec<u32> {
    some.iter()
        .filter_map(|v| all.binary_search(v).ok().map(|k| k as u32))
        .collect()
}

/// Adds to `z` the pair columns of negative reduced cost `c_xy − α_x − β_y` at the LP's
/// multipliers `lam` among the values of `ca` and `cb`: the most negative one of each value
/// of either side. True if it added one.
pub(super) fn price_pairs(
    pt: &PairTerm,
    pr: &PairRows,
    lam: &[f64],
    ca: &[u32],
    cb: &[u32],
    z: &mut BTreeSet<(u32, u32)>,
) -> bool {
    let ks = positions(&pt.xs, ca);
    let ls = positions(&pt.ys, cb);
    let alpha: Vec<f64> = ks.iter().map(|&k| -lam[pr.a_row + k as usize]).collect();
    let beta: Vec<f64> = ls.iter().map(|&l| -lam[pr.b_row + l as usize]).collect();
    let mut best_l = vec![(0.0, u32::MAX); ls.len()];
    let mut found = Vec::new();
    for (&k, &a) in ks.iter().zip(&alpha) {
        let mut best = (-1e-7, u32::MAX);
        for (j, (&l, &b)) in ls.iter().zip(&beta).enumerate() {
            let rc = pt.cost(k, l) - a - b;
            if rc < best.0 {
                best = (rc, l);
            }
            if rc < best_l[j].0 - 1e-7 {
                best_l[j] = (rc, k);
            }
        }
        if best.1 != u32::MAX {
            found.push((k, best.1));
        }
    }
    for (&l, &(_, k)) in ls.iter().zip(&best_l) {
        if k != u32::MAX {
            found.push((k, l));
        }
    }
    let mut added = false;
    for kl in found {
        added |= z.insert(kl);
    }
    added
}

/// A pair term's rows in a [`Relaxation`] and its columns: `Σ_y z_xy − [a = x] = 0` for
/// `xs[k]` at row `a_row + k`, `Σ_x z_xy − [b = y] = 0` for `ys[l]` at `b_row + l`, and the
/// columns `z` as `(k, l)`.
pub(super) struct PairRows {
    pub(super) pt: Arc<PairTerm>,
    pub(super) a_row: usize,
    pub(super) b_row: usize,
    pub(super) z: Vec<(u32, u32)>,
}

impl Relaxation {
    /// [`Relaxation::new`] with the pair terms `terms` of the objective in it, each with a
    /// column for every pair of values (a node's LP: small domains); `None` also when one of
    /// them cannot be taken in ([`pair_terms`]).
    pub(crate) fn with_pairs(
        p: &Problem,
        obj: &Compiled,
        st: &State,
        active: &[u32],
        base: Vec<Vec<f64>>,
        cuts: &[Linear],
        terms: &[usize],
    ) -> Option<Relaxation> {
        let pts = pair_terms(p, obj, st, terms);
        if pts.len() != terms.len() {
            return None;
        }
        let pairs = pts
            .into_iter()
            .map(|pt| {
                let ny = pt.ys.len() as u32;
                let z = (0..pt.xs.len() as u32)
                    .flat_map(|k| (0..ny).map(move |l| (k, l)))
                    .collect();
                (pt, z)
            })
            .collect();
        let mut caps = capacity_rows(p, st, active);
        for c in cuts {
            caps.add(st, c.clone());
        }
        Relaxation::about(p, st, active, base, None, caps, pairs)
    }

    /// How many pair columns the LP over `cols` has, and whether none costs less than 0
    /// (the dense simplex starts from a dual feasible basis only then).
    pub(super) fn count_pairs(&self, cols: &[Vec<u32>]) -> (usize, bool) {
        let (mut n, mut nonnegative) = (0, true);
        for pr in &self.pairs {
            for (k, l) in self.live_pairs(pr, cols) {
                n += 1;
                nonnegative &= pr.pt.cost(k, l) >= 0.0;
            }
        }
        (n, nonnegative)
    }

    /// The dense simplex's pair columns (after the assignment groups' in `costs`), each in
    /// its two rows (`at`: a row's place among the live ones; both live, it has a column).
    pub(super) fn dense_pairs(
        &self,
        cols: &[Vec<u32>],
        at: &[usize],
        rows: &mut [crate::simplex::Row],
        costs: &mut Vec<f64>,
    ) {
        for pr in &self.pairs {
            for (k, l) in self.live_pairs(pr, cols) {
                for r in [pr.a_row + k as usize, pr.b_row + l as usize] {
                    rows[at[r]].terms.push((costs.len(), 1.0));
                }
                costs.push(pr.pt.cost(k, l));
            }
        }
    }

    /// Each pair column's row in the dual LP `lp` (`lam`: the rows' multipliers there):
    /// `−λ_A(x) − λ_B(y) ≤ c_xy`.
    pub(super) fn dual_pairs(
        &self,
        cols: &[Vec<u32>],
        lam: &[Option<microlp::Variable>],
        lp: &mut microlp::Problem,
    ) {
        for pr in &self.pairs {
            for (k, l) in self.live_pairs(pr, cols) {
                if let (Some(la), Some(lb)) =
                    (lam[pr.a_row + k as usize], lam[pr.b_row + l as usize])
                {
                    let c = pr.pt.cost(k, l);
                    lp.add_constraint([(la, -1.0), (lb, -1.0)], microlp::ComparisonOp::Le, c);
                }
            }
        }
    }

    /// The pair columns of `pr` whose two values are among `cols` (per variable of the LP):
    /// the others are 0 at a node without one of their values.
    pub(super) fn live_pairs<'a>(
        &self,
        pr: &'a PairRows,
        cols: &'a [Vec<u32>],
    ) -> impl Iterator<Item = (u32, u32)> + 'a {
        let (ca, cb) = (self.cols_of(pr.pt.a, cols), self.cols_of(pr.pt.b, cols));
        pr.z.iter().copied().filter(move |&(k, l)| {
            ca.binary_search(&pr.pt.xs[k as usize]).is_ok()
                && cb.binary_search(&pr.pt.ys[l as usize]).is_ok()
        })
    }

    /// The columns of variable `x` among `cols` (per variable of the LP).
    fn cols_of<'a>(&self, x: u32, cols: &'a [Vec<u32>]) -> &'a [u32] {
        self.pos
            .get(x as usize)
            .and_then(|&i| cols.get(i))
            .map_or(&[], Vec::as_slice)
    }

    /// Makes the pair rows' multipliers (`α_x = −λ` of `x`'s row, `β_y` likewise) feasible
    /// over every pair of values in `live` (per variable of the LP; `None`: every root pair):
    /// a value without a pair column gets the largest `α_x` the columns' `β` allow, then
    /// each `β_y` is lowered to `min_x c_xy − α_x`. Any `α`, `β` with `α_x + β_y ≤ c_xy` on
    /// those pairs bound the term from below there, whatever the LP did.
    pub(super) fn feasible_pairs(&self, lam: &mut [f64], live: Option<&[Vec<u32>]>) {
        for pr in &self.pairs {
            let pt = &pr.pt;
            let (nx, ny) = (pt.xs.len(), pt.ys.len());
            let is_live = |x: u32, vals: &[u32]| -> Vec<bool> {
                match live {
                    None => vec![true; vals.len()],
                    Some(cols) => {
                        let c = self.cols_of(x, cols);
                        vals.iter().map(|v| c.binary_search(v).is_ok()).collect()
                    }
                }
            };
            let (live_k, live_l) = (is_live(pt.a, &pt.xs), is_live(pt.b, &pt.ys));
            // Far from any cost the multipliers only lose precision: clamped.
            let span = 2.0 * pt.c.iter().fold(1.0, |m: f64, c| m.max(c.abs()));
            let (mut has_k, mut has_l) = (vec![false; nx], vec![false; ny]);
            for &(k, l) in &pr.z {
                if live_k[k as usize] && live_l[l as usize] {
                    has_k[k as usize] = true;
                    has_l[l as usize] = true;
                }
            }
            let ks: Vec<usize> = (0..nx).filter(|&k| live_k[k]).collect();
            let ls: Vec<usize> = (0..ny).filter(|&l| live_l[l]).collect();
            let known = |has: bool, l: f64| (has && l.is_finite()).then(|| (-l).clamp(-span, span));
            let beta: Vec<Option<f64>> = (0..ny)
                .map(|l| known(has_l[l], lam[pr.b_row + l]))
                .collect();
            let alpha: Vec<(usize, f64)> = ks
                .iter()
                .map(|&k| {
                    if let Some(a) = known(has_k[k], lam[pr.a_row + k]) {
                        return (k, a);
                    }
                    let cost = |l: usize| pt.cost(k as u32, l as u32);
                    let m = ls
                        .iter()
                        .filter_map(|&l| beta[l].map(|b| cost(l) - b))
                        .fold(f64::INFINITY, f64::min);
                    if m.is_finite() {
                        (k, m)
                    } else {
                        (k, ls.iter().map(|&l| cost(l)).fold(f64::INFINITY, f64::min))
                    }
                })
                .collect();
            for &l in &ls {
                let mut b = beta[l].unwrap_or(f64::INFINITY);
                for &(k, a) in &alpha {
                    b = b.min(pt.cost(k as u32, l as u32) - a);
                }
                lam[pr.b_row + l] = -b;
            }
            for &(k, a) in &alpha {
                lam[pr.a_row + k] = -a;
            }
        }
    }

    /// Each pair term's residual cost at the multipliers `lam` (made feasible by
    /// [`Relaxation::feasible_pairs`]): `c_xy − α_x − β_y`, never negative on root pairs,
    /// computed as `β` was so that holds in floating point too.
    pub(super) fn residuals(&self, lam: &[f64], st: &State) -> Vec<Absorbed> {
        self.pairs
            .iter()
            .map(|pr| {
                let pt = pr.pt.clone();
                let per = |x: u32, vals: &[u32], row: usize| {
                    let mut m = vec![0.0; st.universe(x) as usize];
                    for (k, &v) in vals.iter().enumerate() {
                        m[v as usize] = -lam[row + k];
                    }
                    m
                };
                let alpha = per(pt.a, &pt.xs, pr.a_row);
                let beta = per(pt.b, &pt.ys, pr.b_row);
                let (w, f) = (pt.w, pt.f.clone());
                let residual: PairFn = Arc::new(move |x: Value, y: Value| {
                    let a = alpha.get(x.index()).copied().unwrap_or(0.0);
                    let b = beta.get(y.index()).copied().unwrap_or(0.0);
                    ((w * f(x, y) - a) - b).max(0.0)
                });
                Absorbed {
                    term: pt.term,
                    residual,
                }
            })
            .collect()
    }
}

/// Each pair term's first columns: the incumbent's pair, so the restricted LP keeps a
/// solution (none without an incumbent: [`cover_pairs`] adds them).
pub(super) fn seed_pairs(
    pairs: &[Arc<PairTerm>],
    incumbent: Option<&[Value]>,
) -> Vec<BTreeSet<(u32, u32)>> {
    pairs
        .iter()
        .map(|pt| {
            let at =
                |vals: &[u32], v: Option<&Value>| vals.binary_search(&v?.0).ok().map(|k| k as u32);
            let plan = incumbent.unwrap_or(&[]);
            let k = at(&pt.xs, plan.get(pt.a as usize));
            let l = at(&pt.ys, plan.get(pt.b as usize));
            k.zip(l).into_iter().collect()
        })
        .collect()
}

/// Appends each pair term's rows to `rows` (`Σ_y z_xy − [a = x] = 0` per root value of
/// `a`, then those of `b`): kept apart from the row set, which would merge the equal rows
/// of two terms on one variable.
pub(super) fn link_rows(rows: &mut Vec<Linear>, pairs: Vec<PairColumns>) -> Vec<PairRows> {
    let link = |x: u32, v: u32| Linear {
        terms: vec![(VarId(x), Value(v), -1.0)],
        rhs: 0.0,
        equal: true,
    };
    pairs
        .into_iter()
        .map(|(pt, z)| {
            let a_row = rows.len();
            rows.extend(pt.xs.iter().map(|&v| link(pt.a, v)));
            let b_row = rows.len();
            rows.extend(pt.ys.iter().map(|&v| link(pt.b, v)));
            PairRows {
                pt,
                a_row,
                b_row,
                z,
            }
        })
        .collect()
}
