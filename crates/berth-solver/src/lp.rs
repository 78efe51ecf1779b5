//! LP bound: the linear relaxation of the hard constraints, read back as Lagrangian
//! multipliers.
//!
//! Columns are the value indicators `[x = v]` of the root domains, one assignment row per
//! variable (`Σ_v [x = v] = 1`), and the rows of every hard constraint: capacities (per
//! holder and dimension), the constraints' own
//! [`Constraint::linear`](crate::Constraint::linear) rows (pair rules, same group, all
//! different) and a row per key of every `distinct_keys` constraint. Its
//! dual is solved with `microlp`:
//!
//! `max Σ_x u_x − Σ_r λ_r · rhs_r` s.t. `u_x − Σ_r λ_r · a_r(x, v) ≤ cost_x(v)` for every
//! column, `λ_r ≥ 0` on `≤` rows (free on equalities).
//!
//! Its `λ` are multipliers of a Lagrangian relaxation that keeps the assignment rows: every
//! plan costs at least `Σ_x min_v [cost_x(v) + Σ_r λ_r · a_r(x, v)] − Σ_r λ_r · rhs_r`. That
//! holds for any `λ` of the right signs, so the bound stays sound whatever the LP solver's
//! accuracy or a time limit did; at the LP optimum it equals the LP bound (the assignment
//! rows alone have integral vertices). With `λ` fixed, the adjusted costs give a bound at
//! every node, reduced-cost filtering and a value order, like the capacity relaxation of
//! `lagrange.rs` (which this replaces when its bound is higher).
//!
//! At the root the LP is solved by column generation (a few values per variable, then those
//! of negative reduced cost), then strengthened by rounds of extended cover cuts on the
//! capacities' rows, separated at the LP's primal optimum ([`covers`]): the LP splits a large
//! demand across a holder it would overfill, which a cover forbids (h100x1000-s2: 135 169 →
//! 135 442 at the first LP, optimum 135 595). The cuts are valid for every plan, so the node
//! LPs keep them among their rows. Once the domains are small, nodes solve the LP of their own
//! domains ([`Relaxation::node`]). A node's assigned variables leave its LP (their dual
//! follows from the rows' multipliers), and what is left is usually small enough for the
//! dense dual simplex of `simplex.rs` instead of `microlp`.
//!
//! A pair term `w · cost(a, b)` of the objective enters the root LP by its transportation
//! relaxation ([`PairTerm`]): columns `z_xy ≥ 0`, priced like the value columns, in rows
//! `Σ_y z_xy = [a = x]` and `Σ_x z_xy = [b = y]`. Their multipliers `α_x`, `β_y`, made to
//! satisfy `α_x + β_y ≤ w · cost(x, y)` on every root pair, move the term into the unary
//! costs; what is left of it, `w · cost − α − β ≥ 0`, is bounded by the joints of
//! `lagrange.rs`. Without it the capacities' multipliers were chosen blind to the pair
//! terms (h60x800p-s1: root bound 86 160 → 86 960, plan 87 193). The node LPs take the same
//! terms in with a column for every pair of their values, fresh multipliers at each node
//! (the dense simplex too, where no pair column costs less than 0: its start then is dual
//! feasible); with the root's multipliers alone h60x800p-s1 was not proven in 120 s.

mod pairs;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use microlp::{ComparisonOp, OptimizationDirection, Variable};

use crate::constraint::{Domains, at_most_one_per_key};
use crate::expr::Compiled;
use crate::lagrange::{Lagrange, cost_of, unary_costs};
use crate::state::State;
use crate::{Linear, NO_KEY, Problem, Value, VarId};
use pairs::{
    PairColumns, PairRows, PairTerm, cover_pairs, link_rows, pair_terms, price_pairs, seed_pairs,
};

/// [`crate::simplex::MAX_CELLS`] of an LP with pair columns, on which `microlp` is slow
/// (h80x800p-s1, two threads: proven in 26.0 s at 200 000 against 76 s at 40 000; at
/// 100 000 in 29.9 s, at 1 000 000 not in 30 s).
const MAX_PAIR_CELLS_DENSE: usize = 200_000;

/// A row's terms: `(variable, value, coefficient)`.
type Terms = Vec<(VarId, Value, f64)>;

/// Most nonzero coefficients of an LP this bound builds; a larger one is not built.
const MAX_NONZEROS: usize = 4_000_000;

/// The relaxation from the LP's multipliers, at the current (root) node; `None` when the
/// objective has no unary part, nothing links the variables, the LP is too large or its
/// solve failed (an infeasible LP means no plan: the search finds that on its own).
pub(crate) fn relax(
    p: &Problem,
    obj: &Compiled,
    st: &State,
    active: &[u32],
    incumbent: Option<&[Value]>,
    time: Duration,
) -> Option<(Lagrange, Vec<Linear>)> {
    let (base, others) = unary_costs(p, obj, st)?;
    let start = std::time::Instant::now();
    let pairs = pair_terms(p, obj, st, &others);
    // Column generation: the LP over a few cheap values per variable and the incumbent's
    // (so it has a solution), then the values whose reduced cost is negative, until none is.
    // Whatever it stops at, the multipliers bound over the whole domains. Each round's rows
    // are those its columns need (the others never bind there): 60×800 has 1.2 million
    // nonzeros over its root domains, its LP's columns a tenth of them.
    let mut cols: Vec<Vec<u32>> = (0..st.vars() as u32)
        .map(|x| {
            let dom: Vec<u32> = st.values(x).map(|v| v.0).collect();
            let Some(plan) = incumbent else {
                return dom;
            };
            let b = base.get(x as usize).map_or(&[][..], Vec::as_slice);
            let mut c = dom.clone();
            c.sort_by(|&v, &w| cost_of(b, v).total_cmp(&cost_of(b, w)).then(v.cmp(&w)));
            c.truncate(FIRST_COLUMNS);
            if let Some(v) = plan
                .get(x as usize)
                .filter(|v| dom.binary_search(&v.0).is_ok())
            {
                c.push(v.0);
            }
            c.sort_unstable();
            c.dedup();
            c
        })
        .collect();
    let mut zs = seed_pairs(&pairs, incumbent);
    let root = Root {
        p,
        st,
        active,
        base,
        pairs,
        limited: incumbent.is_some(),
        start,
        time,
    };
    let mut caps = capacity_rows(p, st, active);
    // The capacities' rows read as knapsacks, for cover cuts.
    let knapsacks: Vec<Linear> = caps
        .rows
        .iter()
        .filter(|r| !r.equal && r.terms.iter().all(|t| t.2 > 0.0))
        .cloned()
        .collect();
    let mut best: Option<Generated> = None;
    // Rows past this one in `caps` are cuts.
    let first_cut = caps.rows.len();
    let mut best_bound = f64::NEG_INFINITY;
    let mut first_gain = None;
    for round in 0..=CUT_ROUNDS {
        let Some(g) = generate(&root, &mut cols, &mut zs, &caps) else {
            break;
        };
        let bound = g.bound(st);
        // A round cut short by the time limit may bound lower than the one before.
        let gain = best.is_some().then_some(bound - best_bound);
        if gain.is_some_and(|d| d <= 0.0) {
            break;
        }
        best = Some(g);
        best_bound = bound;
        let dwindled = match (gain, first_gain) {
            (Some(d), None) => {
                first_gain = Some(d);
                false
            }
            (Some(d), Some(f)) => d < f * CUT_DWINDLE,
            _ => false,
        };
        if dwindled || round == CUT_ROUNDS || root.expired() {
            break;
        }
        let Some(b) = &best else { break };
        let Some(x) = b.lp.primal(&b.cols, &b.adj, &b.u) else {
            break;
        };
        let cuts = covers(&knapsacks, |y, v| {
            b.lp.pos
                .get(y.index())
                .and_then(|&i| x.get(i))
                .and_then(|vals| vals.iter().find(|p| p.0 == v.0))
                .map_or(0.0, |p| p.1)
        });
        if cuts.is_empty() {
            break;
        }
        for c in cuts {
            caps.add(st, c);
        }
    }
    let g = best?;
    let residuals = g.lp.residuals(&g.lam, st);
    let mut lag = Lagrange::new(g.lp.vars, g.adj, g.lp.built_on, g.offset, others);
    lag.absorb(residuals);
    Some((lag, caps.rows.split_off(first_cut)))
}

/// Most rounds of cover cuts on the capacities' rows at the root, after the first LP.
const CUT_ROUNDS: usize = 8;
/// The cut rounds stop once one lifts the bound by less than this share of what the first
/// lifted it (each costs a column generation; the later ones add little).
const CUT_DWINDLE: f64 = 0.25;

/// A column generation's last LP: its relaxation, columns, adjusted costs, offset and the
/// assignment rows' duals.
struct Generated {
    lp: Relaxation,
    cols: Vec<Vec<u32>>,
    adj: Vec<Vec<f64>>,
    offset: f64,
    u: Vec<f64>,
    /// The rows' multipliers (the pair rows' made feasible).
    lam: Vec<f64>,
}

impl Generated {
    /// The Lagrangian bound of its multipliers over `st`'s domains.
    fn bound(&self, st: &State) -> f64 {
        let least: f64 = self
            .lp
            .vars
            .iter()
            .zip(&self.adj)
            .map(|(&x, a)| {
                st.values(x)
                    .map(|v| cost_of(a, v.0))
                    .fold(f64::INFINITY, f64::min)
            })
            .sum();
        least - self.offset
    }
}

/// What the root LP is built from, the same in every round of cuts.
struct Root<'a> {
    p: &'a Problem,
    st: &'a State,
    active: &'a [u32],
    base: Vec<Vec<f64>>,
    /// The pair terms in the LP.
    pairs: Vec<Arc<PairTerm>>,
    /// Columns start from a few values per variable (else from whole domains).
    limited: bool,
    /// The LP's time limit, from `start`.
    start: std::time::Instant,
    time: Duration,
}

impl Root<'_> {
    fn left(&self) -> Duration {
        self.time.saturating_sub(self.start.elapsed())
    }

    fn expired(&self) -> bool {
        self.left().is_zero()
    }
}

/// Column generation over `caps` and the other constraints' rows: the LP over `cols` (a
/// few values per variable where `root.limited`), then the values whose reduced cost is
/// negative, until none is. Whatever it stops at, the multipliers bound over the whole
/// domains.
fn generate(
    root: &Root<'_>,
    cols: &mut [Vec<u32>],
    zs: &mut [BTreeSet<(u32, u32)>],
    caps: &RowSet,
) -> Option<Generated> {
    let Root { p, st, active, .. } = *root;
    let mut last: Option<Generated> = None;
    loop {
        // Every value among the columns has a pair column (else its row forces it to 0).
        for (pt, z) in root.pairs.iter().zip(zs.iter_mut()) {
            cover_pairs(pt, &cols[pt.a as usize], &cols[pt.b as usize], z);
        }
        let wanted = root.limited.then_some(&*cols);
        let pairs: Vec<PairColumns> = root
            .pairs
            .iter()
            .zip(zs.iter())
            .map(|(pt, z)| (pt.clone(), z.iter().copied().collect()))
            .collect();
        let Some(lp) = Relaxation::about(
            p,
            st,
            active,
            root.base.clone(),
            wanted,
            caps.clone(),
            pairs,
        ) else {
            break;
        };
        let lp_cols: Vec<Vec<u32>> = lp.vars.iter().map(|&x| cols[x as usize].clone()).collect();
        let left = root.left();
        // A round cut short keeps the multipliers of the one before.
        let Some((mut lam, u)) = lp.solve(&lp_cols, left, true) else {
            break;
        };
        // Pair columns of negative reduced cost at the LP's own multipliers, then those made
        // feasible over every root pair (the bound's).
        let mut added = false;
        for ((pt, z), pr) in root.pairs.iter().zip(zs.iter_mut()).zip(&lp.pairs) {
            added |= price_pairs(pt, pr, &lam, &cols[pt.a as usize], &cols[pt.b as usize], z);
        }
        lp.feasible_pairs(&mut lam, None);
        let (adj, offset) = lp.adjusted(&lam);
        for (i, dom) in lp.built_on.iter().enumerate() {
            let c = &mut cols[lp.vars[i] as usize];
            let mut neg: Vec<(f64, u32)> = dom
                .iter()
                .filter(|v| c.binary_search(v).is_err())
                .map(|&v| (cost_of(&adj[i], v) - u[i], v))
                .filter(|&(rc, _)| rc < -1e-7)
                .collect();
            neg.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for &(_, v) in neg.iter().take(ADDED_COLUMNS) {
                c.push(v);
                added = true;
            }
            c.sort_unstable();
        }
        last = Some(Generated {
            lp,
            cols: lp_cols,
            adj,
            offset,
            u,
            lam,
        });
        if !added || root.expired() {
            break;
        }
    }
    last
}

/// Violated extended cover cuts of the knapsack rows at the LP point `at` (how much of
/// each column it takes): for a set `S` of columns that together overfill a row,
/// at most `|S| − 1` of them, and of any column at least as heavy as the heaviest of `S`,
/// are taken. `S` is grown greedily from the columns nearest to 1 per unit of weight.
pub(crate) fn covers(knapsacks: &[Linear], at: impl Fn(VarId, Value) -> f64) -> Vec<Linear> {
    let mut cuts = Vec::new();
    for row in knapsacks {
        let items: Vec<(f64, f64, usize)> = row
            .terms
            .iter()
            .enumerate()
            .map(|(k, t)| (t.2, at(t.0, t.1), k))
            .collect();
        if items.iter().all(|it| it.1 <= 1e-9) {
            continue;
        }
        let mut order = items.clone();
        order.sort_by(|a, b| {
            ((1.0 - a.1) / a.0)
                .total_cmp(&((1.0 - b.1) / b.0))
                .then(a.2.cmp(&b.2))
        });
        let mut cover = Vec::new();
        let mut weight = 0.0;
        for it in order {
            cover.push(it);
            weight += it.0;
            if weight > row.rhs + 1e-9 {
                break;
            }
        }
        if weight <= row.rhs + 1e-9 {
            continue;
        }
        // Minimal: drop the columns least taken while the rest still overfill.
        cover.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.2.cmp(&b.2)));
        let mut k = 0;
        while k < cover.len() {
            if weight - cover[k].0 > row.rhs + 1e-9 {
                weight -= cover[k].0;
                cover.remove(k);
            } else {
                k += 1;
            }
        }
        let taken: f64 = cover.iter().map(|it| it.1).sum();
        let rhs = cover.len() as f64 - 1.0;
        if taken <= rhs + 1e-6 {
            continue;
        }
        let heaviest = cover.iter().map(|it| it.0).fold(0.0, f64::max);
        let terms = row
            .terms
            .iter()
            .enumerate()
            .filter(|(k, t)| t.2 >= heaviest || cover.iter().any(|it| it.2 == *k))
            .map(|(_, t)| (t.0, t.1, 1.0))
            .collect();
        cuts.push(Linear {
            terms,
            rhs,
            equal: false,
        });
    }
    cuts
}

thread_local! {
    /// [`Relaxation::node`]'s domains, kept between calls on a thread.
    static NODE_DOMAINS: std::cell::RefCell<Vec<Vec<u32>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Values per variable the column generation starts with.
const FIRST_COLUMNS: usize = 12;
/// Most values per variable a round of column generation adds.
const ADDED_COLUMNS: usize = 64;

/// The LP of the domains it was built on, solvable again at any node below them (see
/// [`Relaxation::covers`]).
pub(crate) struct Relaxation {
    rows: Vec<Linear>,
    /// Variables with a unary cost or a row, increasing.
    vars: Vec<u32>,
    /// Per variable of `vars`: its unary costs over its universe (0 without a term).
    base: Vec<Vec<f64>>,
    /// Per variable of `vars`: the values the rows were built on.
    built_on: Vec<Vec<u32>>,
    /// Each variable's position in `vars` (`usize::MAX` when not in the LP), by variable.
    pos: Vec<usize>,
    /// The rows' terms by column: `(row, coefficient)` of value `built_on[i][k]` at
    /// `by_column[starts[i][k]..starts[i][k + 1]]`, rows increasing.
    by_column: Vec<(usize, f64)>,
    starts: Vec<Vec<usize>>,
    /// The pair terms in the LP (the root's only).
    pairs: Vec<PairRows>,
}

impl Relaxation {
    /// The rows of every active hard constraint over the current domains; `None` when there
    /// are none, no unary cost, or too many.
    pub(crate) fn new(
        p: &Problem,
        st: &State,
        active: &[u32],
        base: Vec<Vec<f64>>,
        cuts: &[Linear],
    ) -> Option<Relaxation> {
        let mut caps = capacity_rows(p, st, active);
        for c in cuts {
            caps.add(st, c.clone());
        }
        Relaxation::about(p, st, active, base, None, caps, Vec::new())
    }

    /// [`Relaxation::new`] with the rows the `wanted` values need (see [`rows_onto`]): an
    /// LP over columns among them only. `caps`: the capacities' rows ([`capacity_rows`]);
    /// `pairs`: pair terms with their columns, whose rows follow the others.
    fn about(
        p: &Problem,
        st: &State,
        active: &[u32],
        mut base: Vec<Vec<f64>>,
        wanted: Option<&[Vec<u32>]>,
        caps: RowSet,
        pairs: Vec<PairColumns>,
    ) -> Option<Relaxation> {
        let mut rows = rows_onto(caps, p, st, active, wanted)?;
        let pair_rows = link_rows(&mut rows, pairs);
        if rows.is_empty() || base.iter().all(Vec::is_empty) {
            return None;
        }
        let n = st.vars();
        let mut used: Vec<bool> = base.iter().map(|b| !b.is_empty()).collect();
        used.resize(n, false);
        for r in &rows {
            for &(x, _, _) in &r.terms {
                used[x.index()] = true;
            }
        }
        let vars: Vec<u32> = (0..n as u32).filter(|&x| used[x as usize]).collect();
        let base = vars
            .iter()
            .map(|&x| {
                let b = std::mem::take(&mut base[x as usize]);
                if b.is_empty() {
                    vec![0.0; st.universe(x) as usize]
                } else {
                    b
                }
            })
            .collect();
        let mut pos = vec![usize::MAX; n];
        for (i, &x) in vars.iter().enumerate() {
            pos[x as usize] = i;
        }
        let mut lp = Relaxation {
            rows,
            vars,
            base,
            built_on: Vec::new(),
            pos,
            by_column: Vec::new(),
            starts: Vec::new(),
            pairs: pair_rows,
        };
        lp.built_on = lp.domains(st);
        lp.index_columns();
        Some(lp)
    }

    /// Fills `by_column` and `starts` from the rows (a counting sort by column).
    fn index_columns(&mut self) {
        let mut count: Vec<Vec<usize>> = self
            .built_on
            .iter()
            .map(|on| vec![0; on.len() + 1])
            .collect();
        // Each value's place in `built_on`, by universe index: a lookup per term instead of
        // a binary search (the pair rules give long rows).
        let at: Vec<Vec<u32>> = self
            .built_on
            .iter()
            .map(|on| {
                let mut at = vec![u32::MAX; on.last().map_or(0, |&v| v as usize + 1)];
                for (k, &v) in on.iter().enumerate() {
                    at[v as usize] = k as u32;
                }
                at
            })
            .collect();
        let place = |x: VarId, v: Value| {
            let i = *self.pos.get(x.index())?;
            let k = *at.get(i)?.get(v.index())?;
            (k != u32::MAX).then_some((i, k as usize))
        };
        for row in &self.rows {
            for &(x, v, _) in &row.terms {
                if let Some((i, k)) = place(x, v) {
                    count[i][k + 1] += 1;
                }
            }
        }
        let mut total = 0;
        for c in &mut count {
            for n in c.iter_mut() {
                total += *n;
                *n = total;
            }
        }
        // `count[i][k]` now starts column (i, k); it is advanced as the column fills, so it
        // ends where the next one starts.
        let starts = count.clone();
        let mut by_column = vec![(0, 0.0); total];
        for (r, row) in self.rows.iter().enumerate() {
            for &(x, v, a) in &row.terms {
                if let Some((i, k)) = place(x, v) {
                    by_column[count[i][k]] = (r, a);
                    count[i][k] += 1;
                }
            }
        }
        self.by_column = by_column;
        self.starts = starts;
    }

    /// The rows of value `v` of the variable at `i` in `vars` (none when the rows were not
    /// built on it).
    fn column(&self, i: usize, v: u32) -> &[(usize, f64)] {
        match self.built_on[i].binary_search(&v) {
            Ok(k) => &self.by_column[self.starts[i][k]..self.starts[i][k + 1]],
            Err(_) => &[],
        }
    }

    /// The current values of each variable of the LP.
    fn domains(&self, st: &State) -> Vec<Vec<u32>> {
        let mut domains = Vec::new();
        self.domains_into(st, &mut domains);
        domains
    }

    /// [`Relaxation::domains`] into `domains`, reusing its vectors.
    fn domains_into(&self, st: &State, domains: &mut Vec<Vec<u32>>) {
        domains.resize_with(self.vars.len(), Vec::new);
        for (dom, &x) in domains.iter_mut().zip(&self.vars) {
            dom.clear();
            dom.extend(st.values(x).map(|v| v.0));
        }
    }

    /// Whether every domain of `st` lies within those the rows were built on (rows built on
    /// smaller domains may cut off plans that use the values they lacked).
    pub(crate) fn covers(&self, st: &State) -> bool {
        self.vars.iter().zip(&self.built_on).all(|(&x, on)| {
            st.size(x) as usize <= on.len() && st.values(x).all(|v| on.binary_search(&v.0).is_ok())
        })
    }

    /// The LP over the columns `cols` (per variable of `vars`, increasing; rows keep only
    /// their terms): one multiplier per row, of the right sign, and with `duals` each
    /// variable's assignment-row dual (for reduced costs; empty without). `None` when the
    /// solve failed or was interrupted.
    fn solve(
        &self,
        cols: &[Vec<u32>],
        time: Duration,
        duals: bool,
    ) -> Option<(Vec<f64>, Vec<f64>)> {
        // A variable with one column is fixed: its assignment row makes its dual `u_x` the
        // column's cost plus its rows' multipliers, so it leaves the LP and its terms move
        // into the rows' objective (deep nodes: 60 variables, a handful of them free).
        let fixed: Vec<Option<u32>> = cols
            .iter()
            .map(|c| match c.as_slice() {
                [v] => Some(*v),
                _ => None,
            })
            .collect();
        // Per row: what its fixed columns use of it, how many free columns it has and the
        // most they can add. Read column by column, so a node pays for its own values only
        // (the rows' terms are sorted by variable, so each sum adds in the rows' order).
        let nrows = self.rows.len();
        let mut used = vec![0.0; nrows];
        let mut free_terms = vec![0u32; nrows];
        let mut most = vec![0.0; nrows];
        for (i, dom) in cols.iter().enumerate() {
            for &v in dom {
                for &(r, a) in self.column(i, v) {
                    if fixed[i].is_some() {
                        used[r] += a;
                    } else {
                        free_terms[r] += 1;
                        most[r] += a.max(0.0);
                    }
                }
            }
        }
        // A row without a free column has a constant multiplier term, so 0 is as good as
        // any multiplier; a `≤` row that holds whatever the free columns take (each at
        // most 1) never binds either (e.g. the support row of a value not among them).
        let mut live: Vec<bool> = (0..nrows)
            .map(|r| {
                free_terms[r] > 0 && (self.rows[r].equal || used[r] + most[r] > self.rows[r].rhs)
            })
            .collect();
        // A pair row with a pair column binds even where its value is the only one left.
        for pr in &self.pairs {
            for (k, l) in self.live_pairs(pr, cols) {
                live[pr.a_row + k as usize] = true;
                live[pr.b_row + l as usize] = true;
            }
        }
        let col = Columns::new(cols, &fixed, |i, v| self.column(i, v), &live);
        let (free, free_cols) = cols
            .iter()
            .zip(&fixed)
            .filter(|(_, f)| f.is_none())
            .fold((0, 0), |(n, c), (dom, _)| (n + 1, c + dom.len()));
        let live_rows = live.iter().filter(|&&l| l).count();
        // The pair columns outside the assignment groups; the dense simplex starts from a
        // dual feasible basis only where none costs less than 0.
        let (pair_cols, nonnegative) = self.count_pairs(cols);
        let cells = (free + live_rows) * (free_cols + pair_cols + live_rows);
        let dense = if self.pairs.is_empty() {
            crate::simplex::MAX_CELLS
        } else {
            MAX_PAIR_CELLS_DENSE
        };
        if cells <= dense && nonnegative {
            return self.solve_dense(cols, &fixed, &col, &live, &used, duals);
        }
        let mut lp = microlp::Problem::new(OptimizationDirection::Maximize);
        lp.set_time_limit(time);
        let u: Vec<Option<Variable>> = fixed
            .iter()
            .map(|f| {
                f.is_none()
                    .then(|| lp.add_var(1.0, (f64::NEG_INFINITY, f64::INFINITY)))
            })
            .collect();
        // Rows left without a term here get no multiplier (0).
        let lam: Vec<Option<Variable>> = self
            .rows
            .iter()
            .zip(live.iter().zip(&used))
            .map(|(r, (&live, &used))| {
                let lo = if r.equal { f64::NEG_INFINITY } else { 0.0 };
                live.then(|| lp.add_var(used - r.rhs, (lo, f64::INFINITY)))
            })
            .collect();
        let mut expr: Vec<(Variable, f64)> = Vec::new();
        for (i, dom) in cols.iter().enumerate() {
            let Some(ui) = u[i] else {
                continue;
            };
            for (k, &v) in dom.iter().enumerate() {
                expr.clear();
                expr.push((ui, 1.0));
                expr.extend(
                    col.of(i, k)
                        .iter()
                        .filter_map(|&(r, a)| lam[r].map(|l| (l, -a))),
                );
                let c = self.base[i].get(v as usize).copied().unwrap_or(0.0);
                lp.add_constraint(expr.as_slice(), ComparisonOp::Le, c);
            }
        }
        self.dual_pairs(cols, &lam, &mut lp);
        let outcome = lp.solve().ok()?;
        let sol = outcome.solution()?;
        let lam: Vec<f64> = self
            .rows
            .iter()
            .zip(&lam)
            .map(|(r, l)| {
                let l = l.map_or(0.0, |l| sol.var_value(l));
                match (l.is_finite(), r.equal) {
                    (false, _) => 0.0,
                    (true, true) => l,
                    (true, false) => l.max(0.0),
                }
            })
            .collect();
        if !duals {
            return Some((lam, Vec::new()));
        }
        let mut u: Vec<f64> = u
            .iter()
            .map(|u| u.map_or(0.0, |u| sol.var_value(u)))
            .collect();
        self.fixed_duals(&fixed, &lam, &mut u);
        Some((lam, u))
    }

    /// The assignment duals of the fixed variables (`fixed[i]`, one column each): their
    /// column's cost plus its rows' multipliers.
    fn fixed_duals(&self, fixed: &[Option<u32>], lam: &[f64], u: &mut [f64]) {
        for (i, f) in fixed.iter().enumerate() {
            if let Some(v) = f {
                u[i] = self.base[i].get(*v as usize).copied().unwrap_or(0.0);
            }
        }
        self.price(lam, |i, v, x| {
            if fixed[i] == Some(v) {
                u[i] += x;
            }
        });
    }

    /// Prices the rows at the multipliers `lam`: `add(i, v, λ_r · a)` for each term of a row
    /// with a multiplier (`i` the variable's position in `vars`), and `Σ_r λ_r · rhs_r`
    /// returned. Adjusted costs, node costs and fixed duals all read the rows this way.
    fn price(&self, lam: &[f64], mut add: impl FnMut(usize, u32, f64)) -> f64 {
        let mut offset = 0.0;
        for (row, &l) in self.rows.iter().zip(lam) {
            if l == 0.0 {
                continue;
            }
            offset += l * row.rhs;
            for &(x, v, a) in &row.terms {
                if let Some(&i) = self.pos.get(x.index()).filter(|&&i| i != usize::MAX) {
                    add(i, v.0, l * a);
                }
            }
        }
        offset
    }

    /// [`Relaxation::solve`] of a small LP, on the dense dual simplex (`col`: each free
    /// column's live rows; `used`: each row's use by the fixed columns).
    fn solve_dense(
        &self,
        cols: &[Vec<u32>],
        fixed: &[Option<u32>],
        col: &Columns,
        live: &[bool],
        used: &[f64],
        duals: bool,
    ) -> Option<(Vec<f64>, Vec<f64>)> {
        let mut at = vec![usize::MAX; self.rows.len()];
        let mut rows: Vec<crate::simplex::Row> = Vec::new();
        for (r, row) in self.rows.iter().enumerate() {
            if live[r] {
                at[r] = rows.len();
                rows.push(crate::simplex::Row {
                    terms: Vec::new(),
                    equal: row.equal,
                    rhs: row.rhs - used[r],
                });
            }
        }
        let (mut groups, mut costs) = (Vec::new(), Vec::new());
        for (i, dom) in cols.iter().enumerate() {
            if fixed[i].is_some() {
                continue;
            }
            let start = costs.len();
            for (k, &v) in dom.iter().enumerate() {
                for &(r, a) in col.of(i, k) {
                    rows[at[r]].terms.push((costs.len(), a));
                }
                costs.push(self.base[i].get(v as usize).copied().unwrap_or(0.0));
            }
            groups.push(start..costs.len());
        }
        self.dense_pairs(cols, &at, &mut rows, &mut costs);
        let mult = crate::simplex::solve(&groups, &costs, &rows)?;
        let lam: Vec<f64> = at
            .iter()
            .map(|&k| mult.get(k).copied().unwrap_or(0.0))
            .collect();
        if !duals {
            return Some((lam, Vec::new()));
        }
        // Each free variable's assignment dual: its least adjusted cost over its columns
        // (only live rows have a multiplier).
        let mut u: Vec<f64> = cols
            .iter()
            .enumerate()
            .map(|(i, dom)| {
                let adjusted = |k: usize, v: u32| {
                    let extra: f64 = col.of(i, k).iter().map(|&(r, a)| lam[r] * a).sum();
                    self.base[i].get(v as usize).copied().unwrap_or(0.0) + extra
                };
                match fixed[i] {
                    Some(_) => 0.0,
                    None => dom
                        .iter()
                        .enumerate()
                        .map(|(k, &v)| adjusted(k, v))
                        .fold(f64::INFINITY, f64::min),
                }
            })
            .collect();
        self.fixed_duals(fixed, &lam, &mut u);
        Some((lam, u))
    }

    /// A primal optimum of the LP over `cols` whose duals are `adj` and `u`: the LP over the
    /// columns of zero reduced cost only (complementary slackness keeps an optimum there),
    /// as each variable's `(value, amount)` taken. `None` when that LP fails.
    fn primal(
        &self,
        cols: &[Vec<u32>],
        adj: &[Vec<f64>],
        u: &[f64],
    ) -> Option<Vec<Vec<(u32, f64)>>> {
        let mut lp = microlp::Problem::new(OptimizationDirection::Minimize);
        let mut vars: Vec<Vec<(u32, Variable)>> = Vec::with_capacity(cols.len());
        for (i, dom) in cols.iter().enumerate() {
            let tol = 1e-6 * u[i].abs().max(1.0);
            let tight: Vec<u32> = dom
                .iter()
                .copied()
                .filter(|&v| cost_of(&adj[i], v) - u[i] <= tol)
                .collect();
            let vs: Vec<(u32, Variable)> = tight
                .iter()
                .map(|&v| (v, lp.add_var(cost_of(&self.base[i], v), (0.0, 1.0))))
                .collect();
            let sum: Vec<(Variable, f64)> = vs.iter().map(|&(_, var)| (var, 1.0)).collect();
            lp.add_constraint(sum.as_slice(), ComparisonOp::Eq, 1.0);
            vars.push(vs);
        }
        // The pair columns between taken values, in their rows.
        let mut extra: HashMap<usize, Vec<(Variable, f64)>> = HashMap::new();
        let taken = |x: u32, v: u32| {
            let i = *self.pos.get(x as usize)?;
            vars.get(i)?.iter().find(|p| p.0 == v).map(|p| p.1)
        };
        let mut zvars = Vec::new();
        for pr in &self.pairs {
            let pt = &pr.pt;
            for &(k, l) in &pr.z {
                let (x, y) = (pt.xs[k as usize], pt.ys[l as usize]);
                if taken(pt.a, x).is_some() && taken(pt.b, y).is_some() {
                    zvars.push((pr.a_row + k as usize, pr.b_row + l as usize, pt.cost(k, l)));
                }
            }
        }
        for (ra, rb, c) in zvars {
            let z = lp.add_var(c, (0.0, f64::INFINITY));
            extra.entry(ra).or_default().push((z, 1.0));
            extra.entry(rb).or_default().push((z, 1.0));
        }
        for (r, row) in self.rows.iter().enumerate() {
            let mut expr: Vec<(Variable, f64)> = row
                .terms
                .iter()
                .filter_map(|&(x, v, a)| {
                    let i = *self.pos.get(x.index())?;
                    let vs = vars.get(i)?;
                    vs.iter().find(|p| p.0 == v.0).map(|p| (p.1, a))
                })
                .collect();
            expr.extend(extra.remove(&r).unwrap_or_default());
            if expr.is_empty() {
                continue;
            }
            let op = if row.equal {
                ComparisonOp::Eq
            } else {
                ComparisonOp::Le
            };
            lp.add_constraint(expr.as_slice(), op, row.rhs);
        }
        let outcome = lp.solve().ok()?;
        let sol = outcome.solution()?;
        Some(
            vars.iter()
                .map(|vs| vs.iter().map(|&(v, var)| (v, sol.var_value(var))).collect())
                .collect(),
        )
    }

    /// Each variable's adjusted costs (over its universe) and `Σ λ · rhs`.
    fn adjusted(&self, lam: &[f64]) -> (Vec<Vec<f64>>, f64) {
        let mut adj = self.base.clone();
        let offset = self.price(lam, |i, v, x| {
            if let Some(c) = adj[i].get_mut(v as usize) {
                *c += x;
            }
        });
        (adj, offset)
    }

    /// At a node the rows cover: the multipliers of its LP, as adjusted costs over its
    /// domains, with what they filter there against `limit` (see [`NodeDual::filter`]).
    /// `None` when the solve failed or its bound is not finite.
    pub(crate) fn node(
        &self,
        st: &State,
        time: Duration,
        limit: f64,
    ) -> Option<(NodeDual, Vec<(u32, u32)>)> {
        // The domains in a buffer kept per thread, and the costs in one vector: a node LP
        // allocated two vectors per variable, a tenth of h60x800-s6's time.
        let (lam, ends, mut costs) = NODE_DOMAINS.with_borrow_mut(|domains| {
            self.domains_into(st, domains);
            let (mut lam, _) = self.solve(domains, time, false)?;
            self.feasible_pairs(&mut lam, Some(domains));
            // The adjusted costs of the node's values only (`adjusted` covers each universe).
            let mut ends = Vec::with_capacity(domains.len());
            let mut costs = Vec::with_capacity(domains.iter().map(Vec::len).sum());
            for (b, dom) in self.base.iter().zip(domains.iter()) {
                costs.extend(dom.iter().map(|&v| (v, cost_of(b, v))));
                ends.push(costs.len());
            }
            Some((lam, ends, costs))
        })?;
        let offset = self.price(&lam, |i, v, x| {
            let start = if i == 0 { 0 } else { ends[i - 1] };
            let vals = &mut costs[start..ends[i]];
            if let Ok(k) = vals.binary_search_by_key(&v, |t| t.0) {
                vals[k].1 += x;
            }
        });
        let mut dual = NodeDual {
            vars: self.vars.iter().copied().zip(ends).collect(),
            costs,
            offset,
            lb: f64::NEG_INFINITY,
        };
        let (lb, drop) = dual.filter(st, limit)?;
        dual.lb = lb;
        Some((dual, drop))
    }
}

/// The live rows of a node LP's free columns, by column: value `cols[i][k]`'s are
/// `rows[at[i][k]..at[i][k + 1]]` (fixed variables have none).
struct Columns {
    at: Vec<Vec<usize>>,
    rows: Vec<(usize, f64)>,
}

impl Columns {
    fn new<'a>(
        cols: &[Vec<u32>],
        fixed: &[Option<u32>],
        column: impl Fn(usize, u32) -> &'a [(usize, f64)],
        live: &[bool],
    ) -> Columns {
        let mut rows = Vec::new();
        let at = cols
            .iter()
            .zip(fixed)
            .enumerate()
            .map(|(i, (dom, f))| {
                if f.is_some() {
                    return Vec::new();
                }
                let mut at = Vec::with_capacity(dom.len() + 1);
                at.push(rows.len());
                for &v in dom {
                    rows.extend(column(i, v).iter().filter(|t| live[t.0]));
                    at.push(rows.len());
                }
                at
            })
            .collect();
        Columns { at, rows }
    }

    fn of(&self, i: usize, k: usize) -> &[(usize, f64)] {
        match self.at[i].get(k..k + 2) {
            Some(&[a, b]) => &self.rows[a..b],
            _ => &[],
        }
    }
}

/// A node LP's multipliers, read as adjusted costs over that node's domains: a bound at
/// every node below it too (sound for any multipliers, see the module documentation;
/// fewer values only raise each variable's least cost).
pub(crate) struct NodeDual {
    /// Per variable of the LP: its values at the node solved and their adjusted costs,
    /// `costs[end of the one before..end]`.
    vars: Vec<(u32, usize)>,
    costs: Vec<(u32, f64)>,
    offset: f64,
    /// The bound at the node solved.
    pub(crate) lb: f64,
}

impl NodeDual {
    /// Each variable of the LP with its values' adjusted costs.
    fn per_var(&self) -> impl Iterator<Item = (&u32, &[(u32, f64)])> {
        let starts = std::iter::once(0).chain(self.vars.iter().map(|&(_, end)| end));
        self.vars
            .iter()
            .zip(starts)
            .map(|((x, end), start)| (x, &self.costs[start..*end]))
    }

    /// The bound over `st`'s domains and, against `limit` (the incumbent), the values whose
    /// reduced cost lifts it to `limit` or past. `None` when it is not finite, or when a
    /// domain of `st` holds a value the node solved did not (the costs priced only its
    /// values).
    pub(crate) fn filter(&self, st: &State, limit: f64) -> Option<(f64, Vec<(u32, u32)>)> {
        let mut least = Vec::with_capacity(self.vars.len());
        for (x, vals) in self.per_var() {
            let (mut m, mut seen) = (f64::INFINITY, 0u32);
            for &(v, a) in vals {
                if st.contains(*x, v) {
                    m = m.min(a);
                    seen += 1;
                }
            }
            if seen != st.size(*x) {
                return None;
            }
            least.push(m);
        }
        let lb = least.iter().sum::<f64>() - self.offset;
        if !lb.is_finite() {
            return None;
        }
        let mut drop = Vec::new();
        if limit.is_finite() {
            for ((x, vals), m) in self.per_var().zip(&least) {
                if st.size(*x) < 2 {
                    continue;
                }
                drop.extend(
                    vals.iter()
                        .filter(|&&(v, a)| st.contains(*x, v) && lb + (a - m) >= limit)
                        .map(|&(v, _)| (*x, v)),
                );
            }
        }
        Some((lb, drop))
    }
}

/// Every row of [`rows_about`].
#[cfg(test)]
pub(crate) fn rows(p: &Problem, st: &State, active: &[u32]) -> Option<Vec<Linear>> {
    rows_about(p, st, active, None)
}

/// The hard constraints' rows over the root domains, as [`rows_onto`] gives them after the
/// capacities' rows.
#[cfg(test)]
pub(crate) fn rows_about(
    p: &Problem,
    st: &State,
    active: &[u32],
    wanted: Option<&[Vec<u32>]>,
) -> Option<Vec<Linear>> {
    rows_onto(capacity_rows(p, st, active), p, st, active, wanted)
}

/// Rows each kept once, with only values still in the domains and one coefficient per
/// column, sorted by column.
#[derive(Clone, Default)]
struct RowSet {
    rows: Vec<Linear>,
    /// Row indexes by fingerprint: rows are compared whole only when it matches.
    seen: HashMap<u64, Vec<usize>>,
}

impl RowSet {
    fn add(&mut self, st: &State, mut r: Linear) {
        r.terms
            .retain(|&(x, v, a)| a != 0.0 && a.is_finite() && st.contains(x.0, v.0));
        if r.terms.is_empty() || !r.rhs.is_finite() {
            return;
        }
        r.terms.sort_by_key(|t| (t.0, t.1));
        r.terms.dedup_by(|b, a| {
            let same = (a.0, a.1) == (b.0, b.1);
            if same {
                a.2 += b.2;
            }
            same
        });
        r.terms.retain(|t| t.2 != 0.0);
        if r.terms.is_empty() {
            return;
        }
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ r.rhs.to_bits() ^ u64::from(r.equal);
        for t in &r.terms {
            for w in [u64::from(t.0.0), u64::from(t.1.0), t.2.to_bits()] {
                h = (h ^ w).wrapping_mul(0x0100_0000_01b3);
            }
        }
        let same = self.seen.entry(h).or_default();
        if same.iter().any(|&i: &usize| self.rows[i] == r) {
            return;
        }
        same.push(self.rows.len());
        self.rows.push(r);
    }

    fn nonzeros(&self) -> usize {
        self.rows.iter().map(|r| r.terms.len()).sum()
    }
}

/// The shared capacities' rows over the root domains: one per holder and dimension that
/// some assignment could overfill. They do not depend on the wanted values, so column
/// generation builds them once (a sixth of a round's build on 60×800).
fn capacity_rows(p: &Problem, st: &State, active: &[u32]) -> RowSet {
    let mut set = RowSet::default();
    for (cid, data) in p.capacities() {
        if !active.contains(&cid.0) {
            continue;
        }
        // (holder, dimension) -> terms, and the most each variable can put there.
        let mut per: BTreeMap<(u32, usize), (Terms, f64)> = BTreeMap::new();
        for (x, keys, dem) in &data.vars {
            let mut most: BTreeMap<(u32, usize), f64> = BTreeMap::new();
            for v in st.values(x.0) {
                let h = keys.get(v.index()).copied().unwrap_or(NO_KEY);
                if h == NO_KEY {
                    continue;
                }
                for (k, &d) in dem.iter().enumerate().take(data.dims) {
                    if d != 0 {
                        per.entry((h, k)).or_default().0.push((*x, v, d as f64));
                        let m = most.entry((h, k)).or_insert(0.0);
                        *m = m.max(d as f64);
                    }
                }
            }
            for (hk, m) in most {
                per.entry(hk).or_default().1 += m;
            }
        }
        for ((h, k), (terms, most)) in per {
            let cap = data
                .capacity
                .get(h as usize * data.dims + k)
                .copied()
                .unwrap_or(0) as f64;
            // A row no assignment can break adds nothing.
            if most > cap || terms.iter().any(|t| t.2 < 0.0) {
                set.add(
                    st,
                    Linear {
                        terms,
                        rhs: cap,
                        equal: false,
                    },
                );
            }
        }
    }
    set
}

/// The hard constraints' rows over the root domains, without duplicates: `set` (the
/// capacities' rows, [`capacity_rows`]) and after them the other constraints' rows, leaving
/// out those the constraints say never bind over the `wanted` values (per variable,
/// increasing; see [`Domains::wanted`]); `None` when they are too many.
fn rows_onto(
    mut set: RowSet,
    p: &Problem,
    st: &State,
    active: &[u32],
    wanted: Option<&[Vec<u32>]>,
) -> Option<Vec<Linear>> {
    let domains = Domains { st, wanted };
    let mut nonzeros = set.nonzeros();
    let mut rows: Vec<Linear> = Vec::new();
    for (i, (c, w)) in p.entries().enumerate() {
        if w.is_some() || !active.contains(&(i as u32)) {
            continue;
        }
        rows.extend(c.linear(&domains));
        if let Some(keys) = c.distinct_keys() {
            rows.extend(at_most_one_per_key(c.scope().iter().zip(&keys).flat_map(
                |(&x, keys)| {
                    domains
                        .values(x)
                        .map(move |v| (keys.get(v.index()).copied().unwrap_or(NO_KEY), x, v))
                        .filter(|t| t.0 != NO_KEY)
                },
            )));
        }
        nonzeros += rows.iter().map(|r| r.terms.len()).sum::<usize>();
        if nonzeros > MAX_NONZEROS {
            return None;
        }
        for r in rows.drain(..) {
            set.add(st, r);
        }
    }
    if set.nonzeros() > MAX_NONZEROS {
        return None;
    }
    Some(set.rows)
}
