//! A dense dual simplex for the small LPs of deep nodes.
//!
//! Deep in the search a node LP has a handful of free variables and rows (60×800: 6
//! variables, 18 values, 5 rows on average); a general sparse solver spends most of its
//! time setting up. This one solves the primal
//!
//! `min Σ c_j y_j` s.t. `Σ_{j ∈ group g} y_j = 1` per group, `Σ_j a_rj y_j ≤ b_r` (or `=`)
//! per row, `y ≥ 0`
//!
//! on a dense tableau. Its start needs no first phase: each group's cheapest column and
//! every row's slack form a basis whose reduced costs are all non-negative (the Lagrangian
//! bound with no multiplier), so the dual simplex starts there and every basis it passes
//! through gives valid multipliers, each bounding at least as high as the one before.

/// Most pivots; at the cap the multipliers reached so far are returned (still a valid bound).
const MAX_PIVOTS: usize = 500;
const EPS: f64 = 1e-9;

/// A row of the LP: `terms` over column indexes, `equal` for `=` (else `≤`), and `rhs`.
pub(crate) struct Row {
    pub(crate) terms: Vec<(usize, f64)>,
    pub(crate) equal: bool,
    pub(crate) rhs: f64,
}

/// Tableaux up to this many cells are solved here; larger ones are not worth a dense one.
pub(crate) const MAX_CELLS: usize = 40_000;

/// The rows' multipliers at the optimum (`≥ 0` for `≤` rows, read as `c_j + Σ_r λ_r a_rj`
/// adjusted costs), or `None` when the LP has no solution or a group has no column.
/// `groups[g]` is the range of group `g`'s columns; `costs` has one entry per column.
pub(crate) fn solve(
    groups: &[std::ops::Range<usize>],
    costs: &[f64],
    rows: &[Row],
) -> Option<Vec<f64>> {
    let n = costs.len();
    let (g, r) = (groups.len(), rows.len());
    let m = g + r;
    // Columns: the n values, then one slack per row.
    let width = n + r;
    let mut t = vec![0.0; m * width];
    let mut beta = vec![0.0; m];
    for (i, range) in groups.iter().enumerate() {
        for j in range.clone() {
            t[i * width + j] = 1.0;
        }
        beta[i] = 1.0;
    }
    for (k, row) in rows.iter().enumerate() {
        let i = g + k;
        for &(j, a) in &row.terms {
            t[i * width + j] += a;
        }
        t[i * width + n + k] = 1.0;
        beta[i] = row.rhs;
    }
    let mut d: Vec<f64> = costs
        .iter()
        .copied()
        .chain(std::iter::repeat_n(0.0, r))
        .collect();
    let mut basis: Vec<usize> = (0..m).map(|i| if i < g { 0 } else { n + i - g }).collect();
    for (i, range) in groups.iter().enumerate() {
        let cheapest = range
            .clone()
            .min_by(|&a, &b| costs[a].total_cmp(&costs[b]).then(a.cmp(&b)))?;
        pivot(&mut t, &mut beta, &mut d, width, i, cheapest);
        basis[i] = cheapest;
    }
    // Per column: a slack of `=` (fixed at 0, never enters); and whether it may enter now.
    let fixed: Vec<bool> = (0..width).map(|j| j >= n && rows[j - n].equal).collect();
    let mut may_enter: Vec<bool> = fixed.iter().map(|&f| !f).collect();
    for &j in &basis {
        may_enter[j] = false;
    }
    for _ in 0..MAX_PIVOTS {
        // Leaving: the basic variable furthest outside its bounds (a slack of `=` is 0).
        let mut leave: Option<(usize, f64)> = None;
        for (i, (&b, &j)) in beta.iter().zip(&basis).enumerate() {
            let excess = if fixed[j] { b.abs() } else { -b };
            if excess > EPS * (1.0 + b.abs()) && leave.is_none_or(|(_, e)| excess > e) {
                leave = Some((i, excess));
            }
        }
        let Some((p, _)) = leave else {
            break;
        };
        // Entering: the ratio test on the reduced costs, over the columns that move the
        // leaving variable towards its bound.
        let sign = if beta[p] < 0.0 { -1.0 } else { 1.0 };
        let row = &t[p * width..(p + 1) * width];
        let mut enter: Option<(usize, f64)> = None;
        for (j, ((&a, &dj), &ok)) in row.iter().zip(&d).zip(&may_enter).enumerate() {
            let a = sign * a;
            if ok && a > EPS {
                let ratio = dj.max(0.0) / a;
                if enter.is_none_or(|(_, q)| ratio < q - EPS) {
                    enter = Some((j, ratio));
                }
            }
        }
        // No column can repair the row: the LP has no solution.
        let (q, _) = enter?;
        pivot(&mut t, &mut beta, &mut d, width, p, q);
        may_enter[basis[p]] = !fixed[basis[p]];
        may_enter[q] = false;
        basis[p] = q;
    }
    // A `≤` row's multiplier is its slack's reduced cost (−π_r ≥ 0).
    Some(
        (0..r)
            .map(|k| {
                let l = d[n + k];
                if rows[k].equal { l } else { l.max(0.0) }
            })
            .collect(),
    )
}

/// Gauss–Jordan pivot on row `p`, column `q` of the tableau, its right-hand side and its
/// reduced costs.
fn pivot(t: &mut [f64], beta: &mut [f64], d: &mut [f64], width: usize, p: usize, q: usize) {
    let piv = t[p * width + q];
    for j in 0..width {
        t[p * width + j] /= piv;
    }
    beta[p] /= piv;
    let (before, rest) = t.split_at_mut(p * width);
    let (prow, after) = rest.split_at_mut(width);
    for (i, row) in before
        .chunks_exact_mut(width)
        .chain(after.chunks_exact_mut(width))
        .enumerate()
    {
        let i = if i < p { i } else { i + 1 };
        let f = row[q];
        if f != 0.0 {
            for (x, &y) in row.iter_mut().zip(prow.iter()) {
                *x -= f * y;
            }
            beta[i] -= f * beta[p];
        }
    }
    let f = d[q];
    if f != 0.0 {
        for (x, &y) in d.iter_mut().zip(prow.iter()) {
            *x -= f * y;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The Lagrangian bound of multipliers: each group's least adjusted cost, less `λ · b`.
    fn bound(groups: &[std::ops::Range<usize>], costs: &[f64], rows: &[Row], lam: &[f64]) -> f64 {
        let mut adj = costs.to_vec();
        for (row, &l) in rows.iter().zip(lam) {
            for &(j, a) in &row.terms {
                adj[j] += l * a;
            }
        }
        let least: f64 = groups
            .iter()
            .map(|g| adj[g.clone()].iter().copied().fold(f64::INFINITY, f64::min))
            .sum();
        least - rows.iter().zip(lam).map(|(r, l)| l * r.rhs).sum::<f64>()
    }

    /// The same LP solved by `microlp` as written: its optimum, or `None` when infeasible.
    fn reference(groups: &[std::ops::Range<usize>], costs: &[f64], rows: &[Row]) -> Option<f64> {
        use microlp::{ComparisonOp, OptimizationDirection, Problem};
        let mut lp = Problem::new(OptimizationDirection::Minimize);
        let y: Vec<_> = costs
            .iter()
            .map(|&c| lp.add_var(c, (0.0, f64::INFINITY)))
            .collect();
        for g in groups {
            let terms: Vec<_> = g.clone().map(|j| (y[j], 1.0)).collect();
            lp.add_constraint(terms.as_slice(), ComparisonOp::Eq, 1.0);
        }
        for row in rows {
            let mut terms: Vec<(microlp::Variable, f64)> = Vec::new();
            for &(j, a) in &row.terms {
                match terms.iter_mut().find(|t| t.0 == y[j]) {
                    Some(t) => t.1 += a,
                    None => terms.push((y[j], a)),
                }
            }
            let op = if row.equal {
                ComparisonOp::Eq
            } else {
                ComparisonOp::Le
            };
            lp.add_constraint(terms.as_slice(), op, row.rhs);
        }
        lp.solve()
            .ok()
            .and_then(|o| o.solution().map(|s| s.objective()))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

        /// Random small LPs (capacity-like `≤` rows with positive and negative coefficients,
        /// `=` rows): the multipliers bound exactly at the LP optimum, signs kept, and `None`
        /// exactly when the LP has no solution.
        #[test]
        fn multipliers_reach_the_lp_optimum(
            sizes in prop::collection::vec(1usize..5, 1..6),
            costs in prop::collection::vec(0u8..20, 24),
            rows in prop::collection::vec(
                (prop::collection::vec((0usize..24, -2i8..4), 1..6), any::<bool>(), 0u8..6),
                0..5,
            ),
        ) {
            let mut groups = Vec::new();
            for s in sizes {
                let start = groups.last().map_or(0, |g: &std::ops::Range<usize>| g.end);
                groups.push(start..start + s);
            }
            let n = groups.last().map_or(0, |g| g.end);
            let costs: Vec<f64> = costs[..n].iter().map(|&c| f64::from(c)).collect();
            let rows: Vec<Row> = rows
                .into_iter()
                .map(|(terms, equal, rhs)| Row {
                    terms: terms.into_iter().map(|(j, a)| (j % n, f64::from(a))).collect(),
                    // Few equalities: most random ones are infeasible.
                    equal: equal && rhs == 1,
                    rhs: f64::from(rhs),
                })
                .collect();
            let got = solve(&groups, &costs, &rows);
            match (got, reference(&groups, &costs, &rows)) {
                (Some(lam), Some(optimum)) => {
                    for (row, l) in rows.iter().zip(&lam) {
                        prop_assert!(row.equal || *l >= 0.0);
                    }
                    let b = bound(&groups, &costs, &rows, &lam);
                    prop_assert!((b - optimum).abs() < 1e-6, "bound {b}, optimum {optimum}");
                }
                (None, None) => {}
                (got, want) => prop_assert!(false, "ours {got:?}, microlp {want:?}"),
            }
        }
    }
}
