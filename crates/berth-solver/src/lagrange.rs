//! Lagrangian bound: the hard capacities relaxed into the unary cost terms.
//!
//! For multipliers `λ ≥ 0`, one per (capacity, holder, dimension), every plan costs at least
//! `Σ_x min_v [cost_x(v) + Σ λ_(h(v),k) · demand_(x,k)] − Σ λ_(h,k) · capacity_(h,k)`
//! plus the lower bounds of the other (non-unary) root terms: the added term
//! `Σ λ · (load − capacity)` is never positive on a plan that fits. Assigned variables count
//! their value, so the bound tightens down the tree. The multipliers are chosen once at the
//! root by subgradient ascent (Polyak steps towards the incumbent) and then fixed, so each
//! variable's adjusted costs and value order are computed once: a node costs one scan to the
//! first value left in each domain, like the plain unary bound. The same adjusted costs give
//! reduced-cost filtering (a value whose adjusted cost lifts the bound past the incumbent is
//! removed) and a capacity-aware value order (values on contended holders cost more).
//!
//! The components of the problem are then solved again on the adjusted costs, with every hard
//! constraint (pair rules and the capacity itself): each component counts at least its optimum,
//! so one bound sees pair rules and shared capacity together.
//!
//! A pair term of the objective (`cost(a, b)`) whose two variables are in the relaxation and
//! in no group is bounded jointly with their adjusted costs: a variable in `k` such pair
//! terms gives each of them `adj / k` (the shares of a variable add up to its adjusted cost,
//! so a plan pays at least the sum of its joints' minima and the other variables' own),
//! and each joint counts `min over (x, y) of s_a adj_a(x) + s_b adj_b(y) + cost(x, y)` in
//! place of the two minima plus the pair's own bound. Two bounds of that minimum are taken,
//! the larger counting:
//! - a scan by increasing adjusted costs, stopped at a budget of evaluations, where the
//!   unexplored pairs still cost at least the next `s_a adj_a(x) + min s_b adj_b + min cost`;
//! - the root marginals: for each root value `x` of `a`, `m_a(x) = min over root y of
//!   s_b adj_b(y) + cost(x, y)` (computed once, with its own budget per `x` cut the same
//!   way), so at any node the joint costs at least `min over live x of s_a adj_a(x) +
//!   m_a(x)`, and the same from `b`'s side. Domains only shrink down the tree, so the root's
//!   minima stay lower bounds; they rise as the search removes the values of one side, and
//!   give a value its own reduced cost (`s_a adj_a(x) + m_a(x)`) in the filtering.
//!
//! A pair term the root LP took in (`lp.rs`) is bounded the same way with its residual cost
//! in place of its cost (its multipliers are in the adjusted costs; the residual is never
//! negative), and alone it counts 0.
//!
//! Sound for any `λ ≥ 0`: the bound never exceeds the cost of a plan, whatever the
//! subgradient steps did. The oracle tests check it against brute force.

use crate::Problem;
use crate::expr::Compiled;
use crate::state::State;

/// Subgradient iterations at the root.
const ITERATIONS: usize = 120;

/// Cost evaluations of one joint pair bound (see the module doc).
const JOINT_BUDGET: u32 = 4096;

/// Cost evaluations of one side's root marginals of a joint (see the module doc), shared out
/// evenly over the side's values.
const MARGINAL_BUDGET: u64 = 1 << 19;

/// A pair term bounded with the adjusted costs of its two variables.
#[derive(Clone)]
struct Joint {
    /// The root term.
    term: usize,
    /// Indexes into `vars` of the pair's `a` and `b`.
    i: usize,
    j: usize,
    /// `sign * weight` of the term.
    w: f64,
    cost: crate::expr::PairFn,
    /// The least `w * cost` of any pair.
    floor: f64,
    /// The shares of `adj_a` and `adj_b` the joint counts: `1 / k` for a variable in `k`
    /// joints (0 until [`Lagrange::share_out`]).
    si: f64,
    sj: f64,
    /// The root marginals of each side (see the module doc), over the universe of its
    /// variable (negative infinity off the root domain); empty when not computed.
    mi: Vec<f64>,
    mj: Vec<f64>,
    /// Each side's root values by increasing `s adj + m`.
    oi: Vec<u32>,
    oj: Vec<u32>,
}

/// A pair term the root LP moved into the adjusted costs (`lp/pairs.rs`): what is left of it.
#[derive(Clone)]
pub(crate) struct Absorbed {
    /// The root term.
    pub(crate) term: usize,
    /// `w · cost − α − β`, never negative on root pairs.
    pub(crate) residual: crate::expr::PairFn,
}

/// The relaxation with its multipliers fixed.
#[derive(Clone)]
pub(crate) struct Lagrange {
    /// Variables the relaxation reads (a unary term or a capacity demand).
    vars: Vec<u32>,
    /// Per variable (indexed like `vars`): adjusted cost of each value of its universe.
    adj: Vec<Vec<f64>>,
    /// Per variable: the values of its root domain by increasing adjusted cost.
    order: Vec<Vec<u32>>,
    /// `Σ λ · capacity`.
    offset: f64,
    /// Root terms that are not unary: bounded on their own, or in a joint.
    pub(crate) others: Vec<usize>,
    /// Per variable (indexed like `vars`): its group, or `usize::MAX`.
    group_of: Vec<usize>,
    /// Groups of variables (indexes into `vars`) with the optimum of their adjusted costs
    /// under the hard constraints (see [`Lagrange::set_groups`]).
    groups: Vec<(Vec<usize>, f64)>,
    /// First of two reversible cells per variable (see [`Lagrange::attach`]); `None` until
    /// attached (the scans then start from the ends of `order`).
    cells: Option<usize>,
    /// Pair terms bounded jointly (see the module doc).
    joints: Vec<Joint>,
    /// Per variable (indexed like `vars`): its joints.
    joints_of: Vec<Vec<usize>>,
    /// Pair terms the LP moved into the adjusted costs.
    absorbed: Vec<Absorbed>,
    /// Cost evaluations of one joint bound ([`JOINT_BUDGET`]; tests lower it).
    pub(crate) joint_budget: u32,
    /// Cost evaluations of one side's root marginals ([`MARGINAL_BUDGET`]; tests lower it
    /// before [`Lagrange::pair_up`]).
    pub(crate) marginal_budget: u64,
}

/// A variable in one capacity: `(offset of the capacity's multipliers, dims, holder of each
/// value, demand vector)`.
type Membership = (usize, usize, crate::Keys, Vec<i64>);

/// One variable's part: its unary costs and its capacity memberships.
struct Part {
    var: u32,
    base: Vec<f64>,
    caps: Vec<Membership>,
}

impl Part {
    fn adjusted(&self, v: u32, lam: &[f64]) -> f64 {
        let mut a = self.base.get(v as usize).copied().unwrap_or(0.0);
        for (off, dims, keys, dem) in &self.caps {
            let h = keys.get(v as usize).copied().unwrap_or(crate::NO_KEY);
            if h == crate::NO_KEY {
                continue;
            }
            for (k, &d) in dem.iter().enumerate().take(*dims) {
                a += lam[off + h as usize * dims + k] * d as f64;
            }
        }
        a
    }
}

/// Chooses the multipliers at the current (root) node; `None` when the objective has no unary
/// part, no active capacity is in play, or relaxing gains nothing over `λ = 0`. `upper` is the
/// incumbent's cost (or infinity).
pub(crate) fn setup(
    p: &Problem,
    obj: &Compiled,
    st: &State,
    active: &[u32],
    upper: f64,
) -> Option<Lagrange> {
    let (base, others) = unary_costs(p, obj, st)?;
    let n = st.vars();
    let mut caps: Vec<Vec<Membership>> = vec![Vec::new(); n];
    let mut capacity: Vec<f64> = Vec::new();
    for (cid, data) in p.capacities() {
        if !active.contains(&cid.0) || data.dims == 0 {
            continue;
        }
        let off = capacity.len();
        capacity.extend(data.capacity.iter().map(|&c| c as f64));
        for (x, keys, dem) in &data.vars {
            if let Some(c) = caps.get_mut(x.index()) {
                c.push((off, data.dims, keys.clone(), dem.clone()));
            }
        }
    }
    if capacity.is_empty() || base.iter().all(Vec::is_empty) {
        return None;
    }
    let parts: Vec<Part> = base
        .into_iter()
        .zip(caps)
        .enumerate()
        .filter(|(_, (b, c))| !b.is_empty() || !c.is_empty())
        .map(|(x, (base, caps))| Part {
            var: x as u32,
            base,
            caps,
        })
        .collect();
    let domains: Vec<Vec<u32>> = parts
        .iter()
        .map(|pt| match st.value(pt.var) {
            Some(v) => vec![v.0],
            None => st.values(pt.var).map(|v| v.0).collect(),
        })
        .collect();
    if domains.iter().any(Vec::is_empty) {
        return None;
    }
    // Bound and subgradient at `lam`.
    let eval = |lam: &[f64], g: &mut Vec<f64>| -> f64 {
        g.clear();
        g.extend(capacity.iter().map(|c| -c));
        let mut lb: f64 = -lam.iter().zip(&capacity).map(|(l, c)| l * c).sum::<f64>();
        for (pt, dom) in parts.iter().zip(&domains) {
            let mut best = (f64::INFINITY, 0u32);
            for &v in dom {
                let a = pt.adjusted(v, lam);
                if a < best.0 {
                    best = (a, v);
                }
            }
            lb += best.0;
            for (off, dims, keys, dem) in &pt.caps {
                let h = keys.get(best.1 as usize).copied().unwrap_or(crate::NO_KEY);
                if h != crate::NO_KEY {
                    for (k, &d) in dem.iter().enumerate().take(*dims) {
                        g[off + h as usize * dims + k] += d as f64;
                    }
                }
            }
        }
        lb
    };
    let mut lam = vec![0.0; capacity.len()];
    let mut g = Vec::new();
    let lb0 = eval(&lam, &mut g);
    let (mut best_lb, mut best_lam) = (lb0, lam.clone());
    let mut lb = lb0;
    let mut mu = 2.0;
    let mut stale = 0;
    for _ in 0..ITERATIONS {
        let norm: f64 = g
            .iter()
            .zip(&lam)
            .filter(|(gi, li)| **gi > 0.0 || **li > 0.0)
            .map(|(gi, _)| gi * gi)
            .sum();
        if norm == 0.0 {
            break;
        }
        // Polyak steps towards the incumbent, at most 5% above the bound (a far incumbent
        // overshoots).
        let near = lb + (lb.abs() * 0.05).max(1.0);
        let target = if upper > lb { upper.min(near) } else { near };
        let step = mu * (target - lb) / norm;
        for (l, gi) in lam.iter_mut().zip(&g) {
            *l = (*l + step * gi).max(0.0);
        }
        lb = eval(&lam, &mut g);
        if lb > best_lb + 1e-9 * best_lb.abs().max(1.0) {
            best_lb = lb;
            best_lam.clone_from(&lam);
            stale = 0;
        } else {
            stale += 1;
            if stale >= 5 {
                mu /= 2.0;
                stale = 0;
                if mu < 1e-4 {
                    break;
                }
            }
        }
    }
    if best_lb <= lb0 + 1e-9 * lb0.abs().max(1.0) {
        return None;
    }
    let lam = best_lam;
    let offset: f64 = lam.iter().zip(&capacity).map(|(l, c)| l * c).sum();
    let adj = parts
        .iter()
        .map(|pt| {
            (0..st.universe(pt.var))
                .map(|v| pt.adjusted(v, &lam))
                .collect()
        })
        .collect();
    let vars = parts.iter().map(|pt| pt.var).collect();
    Some(Lagrange::new(vars, adj, domains, offset, others))
}

/// The cost of value `v` in a per-value cost table; infinity past its end.
pub(crate) fn cost_of(costs: &[f64], v: u32) -> f64 {
    costs.get(v as usize).copied().unwrap_or(f64::INFINITY)
}

/// Each variable's unary costs in the minimized sense (`sign * weight * cost`, empty for a
/// variable without a unary term), and the root terms that are not unary. `None` when the
/// objective is not a sum or a cost is not finite.
pub(crate) fn unary_costs(
    p: &Problem,
    obj: &Compiled,
    st: &State,
) -> Option<(Vec<Vec<f64>>, Vec<usize>)> {
    let root = obj.root_terms()?;
    let sign = p.sign();
    let n = st.vars();
    let mut base: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut others = Vec::new();
    for (t, &(w, node)) in root.iter().enumerate() {
        let Some((var, costs, _, _)) = obj.unary_leaf(node) else {
            others.push(t);
            continue;
        };
        let x = var as usize;
        if x >= n {
            return None;
        }
        let u = st.universe(var) as usize;
        if base[x].is_empty() {
            base[x] = vec![0.0; u];
        }
        for (v, b) in base[x].iter_mut().enumerate() {
            let c = sign * w * costs.get(v).copied().unwrap_or(0.0);
            if !c.is_finite() {
                return None;
            }
            *b += c;
        }
    }
    Some((base, others))
}

impl Lagrange {
    /// The relaxation from fixed multipliers, given as each variable's adjusted costs (`vars`
    /// increasing; `adj[i]` over the universe of `vars[i]`, `domains[i]` its root values)
    /// and `offset = Σ λ · rhs`: the bound is `Σ_x min adj_x − offset`.
    pub(crate) fn new(
        vars: Vec<u32>,
        adj: Vec<Vec<f64>>,
        domains: Vec<Vec<u32>>,
        offset: f64,
        others: Vec<usize>,
    ) -> Lagrange {
        let order = adj
            .iter()
            .zip(domains)
            .map(|(a, mut o): (&Vec<f64>, Vec<u32>)| {
                o.sort_by(|&x, &y| cost_of(a, x).total_cmp(&cost_of(a, y)).then(x.cmp(&y)));
                o
            })
            .collect();
        Lagrange {
            group_of: vec![usize::MAX; vars.len()],
            joints_of: vec![Vec::new(); vars.len()],
            joints: Vec::new(),
            absorbed: Vec::new(),
            joint_budget: JOINT_BUDGET,
            marginal_budget: MARGINAL_BUDGET,
            vars,
            adj,
            order,
            offset,
            others,
            groups: Vec::new(),
            cells: None,
        }
    }

    /// The relaxation's bound at this node (without the other terms); infinity when a
    /// domain is empty.
    pub(crate) fn bound(&self, st: &mut State) -> f64 {
        let mut lb = -self.offset;
        let mut sums = vec![0.0; self.groups.len()];
        for i in 0..self.vars.len() {
            match self.least(i, st) {
                Some(_) if !self.joints_of[i].is_empty() => {}
                Some(a) => match sums.get_mut(self.group_of[i]) {
                    Some(g) => *g += a,
                    None => lb += a,
                },
                None => return f64::INFINITY,
            }
        }
        for (g, (_, opt)) in sums.iter().zip(&self.groups) {
            lb += g.max(*opt);
        }
        for jt in &self.joints {
            lb += self.joint_min(jt, st);
        }
        lb
    }

    /// Pair terms of `others` whose part the adjusted costs already count: each is bounded
    /// by its residual cost from now on.
    pub(crate) fn absorb(&mut self, absorbed: Vec<Absorbed>) {
        self.absorbed = absorbed;
    }

    /// Whether the LP absorbed any pair term.
    pub(crate) fn absorbs_any(&self) -> bool {
        !self.absorbed.is_empty()
    }

    /// Whether root term `t` is a pair term the LP absorbed.
    pub(crate) fn absorbs(&self, t: usize) -> bool {
        self.absorbed.iter().any(|ab| ab.term == t)
    }

    /// Bounds jointly the pair terms among `others` whose two variables the relaxation
    /// reads and no group has taken, and computes their shares and root marginals.
    pub(crate) fn pair_up(&mut self, obj: &Compiled, sign: f64) {
        let Some(root) = obj.root_terms() else {
            return;
        };
        for &t in &self.others {
            let (weight, node) = root[t];
            let residual = self
                .absorbed
                .iter()
                .find(|ab| ab.term == t)
                .map(|ab| ab.residual.clone());
            let w = if residual.is_some() {
                1.0
            } else {
                sign * weight
            };
            let pair = obj.pair_leaf(node).and_then(|(a, b, cost, lo, hi)| {
                let i = self.vars.binary_search(&a).ok()?;
                let j = self.vars.binary_search(&b).ok()?;
                let free = |k: usize| self.group_of[k] == usize::MAX;
                let (cost, floor) = match &residual {
                    Some(r) => (r, 0.0),
                    None => (cost, if w > 0.0 { w * lo } else { w * hi }),
                };
                (i != j && free(i) && free(j) && w != 0.0 && floor.is_finite()).then(|| Joint {
                    term: t,
                    i,
                    j,
                    w,
                    cost: cost.clone(),
                    floor,
                    si: 0.0,
                    sj: 0.0,
                    mi: Vec::new(),
                    mj: Vec::new(),
                    oi: Vec::new(),
                    oj: Vec::new(),
                })
            });
            if let Some(jt) = pair {
                self.joints_of[jt.i].push(self.joints.len());
                self.joints_of[jt.j].push(self.joints.len());
                self.joints.push(jt);
            }
        }
        self.share_out();
    }

    /// Gives each joint its variables' shares (`1 / k` in `k` joints) and, where they
    /// changed, computes its root marginals again.
    fn share_out(&mut self) {
        for k in 0..self.joints.len() {
            let (i, j) = (self.joints[k].i, self.joints[k].j);
            let si = 1.0 / self.joints_of[i].len() as f64;
            let sj = 1.0 / self.joints_of[j].len() as f64;
            if (self.joints[k].si, self.joints[k].sj) == (si, sj) {
                continue;
            }
            let (mi, oi) = self.marginals(&self.joints[k], si, sj, true);
            let (mj, oj) = self.marginals(&self.joints[k], sj, si, false);
            let jt = &mut self.joints[k];
            (jt.si, jt.sj, jt.mi, jt.oi, jt.mj, jt.oj) = (si, sj, mi, oi, mj, oj);
        }
    }

    /// One side's root marginals of `jt` (its `a` side when `first`) with shares `s` (this
    /// side) and `sp` (the partner's), and the side's root values by increasing `s adj + m`.
    fn marginals(&self, jt: &Joint, s: f64, sp: f64, first: bool) -> (Vec<f64>, Vec<u32>) {
        let (me, partner) = if first { (jt.i, jt.j) } else { (jt.j, jt.i) };
        let (xs, ys) = (&self.order[me], &self.order[partner]);
        if xs.is_empty() || ys.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let per = (self.marginal_budget / xs.len() as u64).max(1);
        let (am, ap) = (&self.adj[me], &self.adj[partner]);
        let mut m = vec![f64::NEG_INFINITY; am.len()];
        for &x in xs {
            let mut best = f64::INFINITY;
            for (evals, &y) in (0u64..).zip(ys) {
                let by = sp * cost_of(ap, y);
                if by + jt.floor >= best {
                    break;
                }
                // Past the budget, the pairs left cost at least this `y`'s share and the floor.
                if evals == per {
                    best = by + jt.floor;
                    break;
                }
                let (vx, vy) = (crate::Value(x), crate::Value(y));
                let c = if first {
                    (jt.cost)(vx, vy)
                } else {
                    (jt.cost)(vy, vx)
                };
                let total = by + jt.w * c;
                // A cost outside the term's range (NaN, say) bounds nothing: the floor does.
                best = best.min(if total.is_nan() { by + jt.floor } else { total });
            }
            if let Some(slot) = m.get_mut(x as usize) {
                *slot = best;
            }
        }
        let key = |x: u32| s * cost_of(am, x) + m.get(x as usize).copied().unwrap_or(0.0);
        let mut order = xs.clone();
        order.sort_by(|&x, &y| key(x).total_cmp(&key(y)).then(x.cmp(&y)));
        (m, order)
    }

    /// The terms of `others` bounded on their own (not in a joint, nor absorbed: a residual
    /// alone counts 0).
    pub(crate) fn alone(&self) -> impl Iterator<Item = usize> + '_ {
        self.others.iter().copied().filter(|&t| {
            self.joints.iter().all(|jt| jt.term != t) && self.absorbed.iter().all(|ab| ab.term != t)
        })
    }

    /// The root terms of the pair terms the LP moved into the adjusted costs.
    pub(crate) fn absorbed_terms(&self) -> Vec<usize> {
        self.absorbed.iter().map(|ab| ab.term).collect()
    }

    /// How many pair terms the LP moved into the adjusted costs.
    #[cfg(test)]
    pub(crate) fn absorbed(&self) -> usize {
        self.absorbed.len()
    }

    /// How many pair terms are bounded jointly.
    #[cfg(test)]
    pub(crate) fn joints(&self) -> usize {
        self.joints.len()
    }

    /// The live values of `vars[i]` by increasing adjusted cost.
    fn live<'a>(&'a self, i: usize, st: &'a State) -> impl Iterator<Item = u32> + 'a {
        let x = self.vars[i];
        let one = st.value(x).map(|v| v.0);
        let (front, back) = self.skips(i, st);
        let order = &self.order[i];
        let end = order.len().saturating_sub(back);
        let scan = one
            .is_none()
            .then(|| order[front.min(end)..end].iter().copied());
        one.into_iter().chain(
            scan.into_iter()
                .flatten()
                .filter(move |&v| st.contains(x, v)),
        )
    }

    /// The least `s adj + m` of a live value of one side of `jt` (its `a` side when `first`);
    /// negative infinity without marginals, infinity when the domain is empty.
    fn side(&self, jt: &Joint, first: bool, st: &State) -> f64 {
        let (i, s, m, order) = if first {
            (jt.i, jt.si, &jt.mi, &jt.oi)
        } else {
            (jt.j, jt.sj, &jt.mj, &jt.oj)
        };
        if m.is_empty() {
            return f64::NEG_INFINITY;
        }
        let x = self.vars[i];
        let v = match st.value(x) {
            Some(v) => Some(v.0),
            None => order.iter().copied().find(|&v| st.contains(x, v)),
        };
        v.map_or(f64::INFINITY, |v| {
            s * cost_of(&self.adj[i], v) + m.get(v as usize).copied().unwrap_or(0.0)
        })
    }

    /// `min over live (x, y) of s_a adj_a(x) + s_b adj_b(y) + w * cost(x, y)`, or a lower
    /// bound of it: the larger of the root marginals' and the scan's once `joint_budget`
    /// costs are evaluated; infinity when a domain is empty.
    fn joint_min(&self, jt: &Joint, st: &State) -> f64 {
        let side = self.side(jt, true, st).max(self.side(jt, false, st));
        if side == f64::INFINITY {
            return side;
        }
        let (ai, bj) = (&self.adj[jt.i], &self.adj[jt.j]);
        let ys: Vec<(f64, u32)> = self
            .live(jt.j, st)
            .map(|y| (jt.sj * cost_of(bj, y), y))
            .collect();
        let Some(&(mb, _)) = ys.first() else {
            return f64::INFINITY;
        };
        let mut best = f64::INFINITY;
        let mut evals = 0;
        for x in self.live(jt.i, st) {
            let ax = jt.si * cost_of(ai, x);
            if ax + mb + jt.floor >= best {
                break;
            }
            for &(by, y) in &ys {
                if ax + by + jt.floor >= best {
                    break;
                }
                if evals == self.joint_budget {
                    return best.min(ax + mb + jt.floor).max(side);
                }
                evals += 1;
                let c = (jt.cost)(crate::Value(x), crate::Value(y));
                best = best.min(ax + by + jt.w * c);
                // The marginals already bound the minimum from below: it is found.
                if best <= side {
                    return best;
                }
            }
        }
        best
    }

    /// The adjusted costs as an objective, in the problem's sense (`sign * cost`), so the
    /// component searches can minimize them under the hard constraints.
    pub(crate) fn adjusted_objective(&self, sign: f64) -> crate::Expr {
        crate::Expr::sum(self.vars.iter().zip(&self.adj).map(|(&x, a)| {
            let costs: std::sync::Arc<[f64]> = a.iter().map(|c| sign * c).collect();
            (1.0, crate::Expr::unary(crate::VarId(x), costs))
        }))
    }

    /// Groups of variables with the optimum of their adjusted costs under every hard
    /// constraint (capacity included): each group then counts at least its optimum. Valid
    /// because the sum of adjusted costs of any plan is at least the sum of the groups' optima,
    /// and the bound is `Σ adjusted − Σ λ · capacity`.
    pub(crate) fn set_groups(&mut self, groups: Vec<(Vec<u32>, f64)>) {
        for (vars, opt) in groups {
            let idx: Vec<usize> = vars
                .iter()
                .filter_map(|x| self.vars.binary_search(x).ok())
                .filter(|&i| self.group_of[i] == usize::MAX)
                .collect();
            // A group's optimum counts its variables' adjusted costs: a joint of one of them
            // goes back to `others`.
            for &i in &idx {
                self.unpair(i);
            }
            self.share_out();
            // Variables without a term in the relaxation add nothing to the group's sum.
            if idx.is_empty() || opt.is_nan() || opt == f64::NEG_INFINITY {
                continue;
            }
            let g = self.groups.len();
            for &i in &idx {
                self.group_of[i] = g;
            }
            self.groups.push((idx, opt));
        }
    }

    /// Dissolves the joints of `vars[i]`, if any: their terms are bounded alone again (the
    /// partners' shares are given out again by [`Lagrange::share_out`]).
    fn unpair(&mut self, i: usize) {
        if self.joints_of[i].is_empty() {
            return;
        }
        self.joints.retain(|jt| jt.i != i && jt.j != i);
        self.joints_of.iter_mut().for_each(Vec::clear);
        for (k, jt) in self.joints.iter().enumerate() {
            self.joints_of[jt.i].push(k);
            self.joints_of[jt.j].push(k);
        }
    }

    /// The least adjusted cost left to variable `vars[i]`.
    /// Gives the relaxation two reversible cells per variable in `st` (appended): how many of
    /// its `order` are known gone from the front (below the first live value) and from the
    /// back (past the last live one). Domains only shrink down the tree and the cells are
    /// undone with it, so the scans of `least` and `filter` skip what an ancestor already
    /// passed instead of rescanning hundreds of removed values at every node.
    pub(crate) fn attach(&mut self, st: &mut State) {
        self.cells = Some(st.cells.len());
        st.cells.extend(std::iter::repeat_n(0, 2 * self.vars.len()));
    }

    /// `(front, back)` skips of variable `i`.
    fn skips(&self, i: usize, st: &State) -> (usize, usize) {
        match self.cells {
            Some(c) => (
                usize::try_from(st.cell(c + 2 * i)).unwrap_or(0),
                usize::try_from(st.cell(c + 2 * i + 1)).unwrap_or(0),
            ),
            None => (0, 0),
        }
    }

    fn least(&self, i: usize, st: &mut State) -> Option<f64> {
        let x = self.vars[i];
        let adj = &self.adj[i];
        if let Some(v) = st.value(x) {
            return adj.get(v.index()).copied();
        }
        let (front, back) = self.skips(i, st);
        let order = &self.order[i];
        let end = order.len().saturating_sub(back);
        let pos = (front..end).find(|&k| st.contains(x, order[k]))?;
        if let Some(c) = self.cells
            && pos > front
        {
            st.set_cell(c + 2 * i, pos as i64);
        }
        adj.get(order[pos] as usize).copied()
    }

    /// Values to remove: with the node's total bound `total`, a value whose adjusted cost
    /// replacing its variable's least one reaches `limit` leads to no better plan.
    pub(crate) fn filter(&self, st: &mut State, total: f64, limit: f64) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let least: Vec<Option<f64>> = (0..self.vars.len()).map(|i| self.least(i, st)).collect();
        // Each group's sum of least costs.
        let mut sums = vec![0.0; self.groups.len()];
        for (i, a) in least.iter().enumerate() {
            if let (Some(g), Some(a)) = (sums.get_mut(self.group_of[i]), a) {
                *g += a;
            }
        }
        // Each joint's bound, as `total` counts it.
        let joint: Vec<f64> = self
            .joints
            .iter()
            .map(|jt| self.joint_min(jt, st))
            .collect();
        for i in 0..self.vars.len() {
            let x = self.vars[i];
            if st.value(x).is_some() {
                continue;
            }
            let Some(m) = least[i] else {
                continue;
            };
            // The total with x's least cost taken out, and what a value `a` puts back; in
            // joints, their bounds out and in each the partner's share of its least cost and
            // the least pair cost.
            let js = &self.joints_of[i];
            // A joint counts its share of the value's adjusted cost; the shares add up to 1.
            let scale = if self.group_of[i] == usize::MAX && !js.is_empty() {
                js.iter().map(|&k| self.share(k, i)).sum()
            } else {
                1.0
            };
            let (rest, opt, sum) = match self.groups.get(self.group_of[i]) {
                Some((_, opt)) => {
                    let sum = sums[self.group_of[i]];
                    (total - sum.max(*opt), *opt, sum - m)
                }
                None if !js.is_empty() => {
                    let Some(rest) = self.joints_out(i, total, &joint, &least) else {
                        continue;
                    };
                    (rest, f64::NEG_INFINITY, 0.0)
                }
                None => (total - m, f64::NEG_INFINITY, 0.0),
            };
            let (front, back) = self.skips(i, st);
            let order = &self.order[i];
            let end = order.len().saturating_sub(back);
            // Past the loop, every position from `keep` on is gone or removed here.
            let mut keep = front;
            for k in (front..end).rev() {
                let v = order[k];
                let a = scale * self.adj[i][v as usize];
                if rest + (sum + a).max(opt) < limit {
                    keep = k + 1;
                    break;
                }
                if st.contains(x, v) {
                    out.push((x, v));
                }
            }
            if let Some(c) = self.cells
                && keep < end
            {
                st.set_cell(c + 2 * i + 1, (order.len() - keep) as i64);
            }
            // In joints with marginals, each value left its own reduced cost.
            if js.iter().any(|&k| !self.marginal(k, i).is_empty()) {
                let out_all: f64 = total - js.iter().map(|&k| joint[k]).sum::<f64>();
                for &v in &order[front..keep] {
                    if !st.contains(x, v) {
                        continue;
                    }
                    let a = cost_of(&self.adj[i], v);
                    let mut lb = out_all;
                    for &k in js {
                        let jt = &self.joints[k];
                        let (p, sp) = if jt.i == i {
                            (jt.j, jt.sj)
                        } else {
                            (jt.i, jt.si)
                        };
                        let mp = least[p].unwrap_or(f64::INFINITY);
                        let m = self.marginal(k, i).get(v as usize).copied();
                        let m = m.unwrap_or(f64::NEG_INFINITY);
                        lb += self.share(k, i) * a + (sp * mp + jt.floor).max(m);
                    }
                    if lb >= limit {
                        out.push((x, v));
                    }
                }
            }
        }
        out
    }

    /// The share of `vars[i]`'s adjusted cost joint `k` counts.
    fn share(&self, k: usize, i: usize) -> f64 {
        let jt = &self.joints[k];
        if jt.i == i { jt.si } else { jt.sj }
    }

    /// The marginals of joint `k` on the side of `vars[i]`.
    fn marginal(&self, k: usize, i: usize) -> &[f64] {
        let jt = &self.joints[k];
        if jt.i == i { &jt.mi } else { &jt.mj }
    }

    /// `total` with the joints of `vars[i]` (bounds `joint`) taken out and, for each, its
    /// partner's share of its least cost (`least`) and the least pair cost put in; `None`
    /// when a partner's domain is empty.
    fn joints_out(
        &self,
        i: usize,
        total: f64,
        joint: &[f64],
        least: &[Option<f64>],
    ) -> Option<f64> {
        let mut rest = total;
        for &k in &self.joints_of[i] {
            let jt = &self.joints[k];
            let (p, sp) = if jt.i == i {
                (jt.j, jt.sj)
            } else {
                (jt.i, jt.si)
            };
            rest += sp * least[p]? + jt.floor - joint[k];
        }
        Some(rest)
    }

    /// How much `x`'s least adjusted cost left would rise if its cheapest value went: the
    /// second least minus the least (0 when one value is left or the relaxation does not
    /// read `x`).
    pub(crate) fn regret(&self, x: u32, st: &State) -> f64 {
        let Ok(i) = self.vars.binary_search(&x) else {
            return 0.0;
        };
        let (front, back) = self.skips(i, st);
        let order = &self.order[i];
        let end = order.len().saturating_sub(back);
        let mut live = (front..end)
            .map(|k| order[k])
            .filter(|&v| st.contains(x, v));
        match (live.next(), live.next()) {
            (Some(a), Some(b)) => cost_of(&self.adj[i], b) - cost_of(&self.adj[i], a),
            _ => 0.0,
        }
    }

    /// Values of `x` by increasing adjusted cost (root domain), if the relaxation reads `x`.
    pub(crate) fn order(&self, x: u32) -> Option<&[u32]> {
        self.vars
            .binary_search(&x)
            .ok()
            .map(|i| self.order[i].as_slice())
    }
}
