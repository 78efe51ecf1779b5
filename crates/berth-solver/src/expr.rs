//! The objective: a typed expression with exact evaluation and admissible interval bounds.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::state::State;
use crate::{SolveError, Value, VarId};

/// A pairwise cost function `(value of a, value of b) -> cost`.
pub type PairFn = Arc<dyn Fn(Value, Value) -> f64 + Send + Sync>;

/// Whether the objective is minimized or maximized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sense {
    /// Smaller is better.
    #[default]
    Minimize,
    /// Larger is better (the search minimizes the negation).
    Maximize,
}

/// An objective expression. Leaves read the assignment; inner nodes combine.
///
/// Every node has an interval `[lower, upper]` on any partial assignment, computed by interval
/// arithmetic from its leaves; these bounds are **admissible** (they contain the value of every
/// completion), which is what makes branch and bound exact.
#[derive(Clone)]
pub enum Expr {
    /// A constant.
    Const(f64),
    /// `costs[value of var]`; the table has one finite entry per value of the domain.
    Unary {
        /// The variable.
        var: VarId,
        /// Cost per value.
        costs: Arc<[f64]>,
    },
    /// `cost(value of a, value of b)`, promised to lie in `[lower, upper]` for every pair
    /// (the range is tightened by enumeration when the domains are small).
    Pair {
        /// First variable.
        a: VarId,
        /// Second variable.
        b: VarId,
        /// Cost function.
        cost: PairFn,
        /// Smallest possible cost.
        lower: f64,
        /// Largest possible cost.
        upper: f64,
    },
    /// `sum of weight * term`.
    Sum(Vec<(f64, Expr)>),
    /// Product of the operands (empty = 1).
    Product(Vec<Expr>),
    /// Smallest operand.
    Min(Vec<Expr>),
    /// Largest operand.
    Max(Vec<Expr>),
    /// `(expr - start) / (end - start)`.
    Normalize {
        /// The operand.
        expr: Box<Expr>,
        /// Maps to 0.
        start: f64,
        /// Maps to 1.
        end: f64,
    },
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Const(c) => write!(f, "{c}"),
            Expr::Unary { var, .. } => write!(f, "cost({var})"),
            Expr::Pair {
                a, b, lower, upper, ..
            } => write!(f, "cost({a}, {b}) in [{lower}, {upper}]"),
            Expr::Sum(ts) => f.debug_tuple("Sum").field(ts).finish(),
            Expr::Product(ts) => f.debug_tuple("Product").field(ts).finish(),
            Expr::Min(ts) => f.debug_tuple("Min").field(ts).finish(),
            Expr::Max(ts) => f.debug_tuple("Max").field(ts).finish(),
            Expr::Normalize { expr, start, end } => {
                write!(f, "Normalize({expr:?}, {start}, {end})")
            }
        }
    }
}

impl Expr {
    /// `costs[value of var]`.
    pub fn unary(var: VarId, costs: impl Into<Arc<[f64]>>) -> Expr {
        Expr::Unary {
            var,
            costs: costs.into(),
        }
    }

    /// `cost(a, b)` given by a closure whose values lie in `[lower, upper]`.
    pub fn pair(
        a: VarId,
        b: VarId,
        lower: f64,
        upper: f64,
        cost: impl Fn(Value, Value) -> f64 + Send + Sync + 'static,
    ) -> Expr {
        Expr::Pair {
            a,
            b,
            cost: Arc::new(cost),
            lower,
            upper,
        }
    }

    /// `cost(a, b)` from a row-major table `table[va * cols + vb]` (range computed exactly).
    pub fn pair_table(a: VarId, b: VarId, cols: u32, table: Vec<f64>) -> Expr {
        let lower = table.iter().copied().fold(f64::INFINITY, f64::min);
        let upper = table.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (lower, upper) = if table.is_empty() {
            (0.0, 0.0)
        } else {
            (lower, upper)
        };
        Expr::pair(a, b, lower, upper, move |x, y| {
            if y.0 >= cols {
                return 0.0;
            }
            table
                .get(x.index() * cols as usize + y.index())
                .copied()
                .unwrap_or(0.0)
        })
    }

    /// `sum of weight * term`.
    pub fn sum(terms: impl IntoIterator<Item = (f64, Expr)>) -> Expr {
        Expr::Sum(terms.into_iter().collect())
    }

    /// `(self - start) / (end - start)`.
    pub fn normalize(self, start: f64, end: f64) -> Expr {
        Expr::Normalize {
            expr: Box::new(self),
            start,
            end,
        }
    }
}

/// A compiled expression node (children by index).
enum Node {
    Const(f64),
    Unary {
        var: u32,
        costs: Arc<[f64]>,
        order: Arc<[u32]>,
        cell: usize,
    },
    Pair {
        a: u32,
        b: u32,
        f: PairFn,
        lo: f64,
        hi: f64,
    },
    Sum(Vec<(f64, usize)>),
    Product(Vec<usize>),
    Min(Vec<usize>),
    Max(Vec<usize>),
    Norm {
        child: usize,
        start: f64,
        scale: f64,
    },
}

/// Value-ordering data of one variable: how its values move the objective.
#[derive(Default)]
pub(crate) struct VarKey {
    unary: Vec<(f64, usize)>,
    pub(crate) pairs: Vec<(f64, usize)>,
    /// Values by increasing static cost, and whether to read it backwards.
    pub(crate) order: Option<(Arc<[u32]>, bool)>,
}

/// An objective compiled against the domain sizes, with its own reversible cells.
pub(crate) struct Compiled {
    nodes: Vec<Node>,
    root: usize,
    sign: f64,
    /// Initial content of the cells (two per unary leaf: lowest and highest live position).
    pub(crate) cells: Vec<i64>,
    pub(crate) keys: Vec<VarKey>,
    integral: bool,
}

const ENUM_LIMIT: u64 = 1 << 20;
/// The largest whole cost term [`Compiled::integral`] accepts.
const WHOLE_MAX: f64 = (1u64 << 40) as f64;
const NODE_ENUM_LIMIT: u64 = 4096;

fn mul(a: f64, b: f64) -> f64 {
    if a == 0.0 || b == 0.0 { 0.0 } else { a * b }
}

impl Compiled {
    pub(crate) fn new(expr: &Expr, sign: f64, sizes: &[u32]) -> Result<Compiled, Vec<SolveError>> {
        let mut c = Compiled {
            nodes: Vec::new(),
            root: 0,
            sign,
            cells: Vec::new(),
            keys: (0..sizes.len()).map(|_| VarKey::default()).collect(),
            integral: false,
        };
        let mut errors = Vec::new();
        let mut orders: BTreeMap<usize, Arc<[u32]>> = BTreeMap::new();
        c.root = c.add(expr, sign, sizes, &mut errors, &mut orders);
        if !errors.is_empty() {
            return Err(errors);
        }
        for (var, &size) in sizes.iter().enumerate() {
            let k = &c.keys[var];
            let order = match k.unary.as_slice() {
                [] => None,
                [(factor, leaf)] => match &c.nodes[*leaf] {
                    Node::Unary { order, .. } => Some((order.clone(), *factor < 0.0)),
                    _ => None,
                },
                many => {
                    let key: Vec<f64> = (0..size).map(|v| c.unary_key(many, Value(v))).collect();
                    Some((sorted(&key), false))
                }
            };
            c.keys[var].order = order;
        }
        c.integral = c.whole_costs();
        Ok(c)
    }

    fn add(
        &mut self,
        e: &Expr,
        factor: f64,
        sizes: &[u32],
        errors: &mut Vec<SolveError>,
        orders: &mut BTreeMap<usize, Arc<[u32]>>,
    ) -> usize {
        let node = match e {
            Expr::Const(x) => {
                finite("constant", *x, errors);
                Node::Const(*x)
            }
            Expr::Unary { var, costs } => {
                let Some(&n) = sizes.get(var.index()) else {
                    errors.push(SolveError::ObjectiveUnknownVar { var: *var });
                    return self.push(Node::Const(0.0));
                };
                if costs.len() != n as usize {
                    errors.push(SolveError::CostTableSize {
                        var: *var,
                        len: costs.len(),
                        expected: n,
                    });
                    return self.push(Node::Const(0.0));
                }
                if let Some((v, &cost)) = costs.iter().enumerate().find(|(_, c)| !c.is_finite()) {
                    errors.push(SolveError::NonFiniteCost {
                        var: *var,
                        value: Value(v as u32),
                        cost,
                    });
                    return self.push(Node::Const(0.0));
                }
                let addr = Arc::as_ptr(costs) as *const f64 as usize;
                let order = orders.entry(addr).or_insert_with(|| sorted(costs)).clone();
                let cell = self.cells.len();
                self.cells.push(0);
                self.cells.push(i64::from(n) - 1);
                let id = self.push(Node::Unary {
                    var: var.0,
                    costs: costs.clone(),
                    order,
                    cell,
                });
                self.keys[var.index()].unary.push((factor, id));
                return id;
            }
            Expr::Pair {
                a,
                b,
                cost,
                lower,
                upper,
            } => {
                let (Some(&na), Some(&nb)) = (sizes.get(a.index()), sizes.get(b.index())) else {
                    let var = if sizes.get(a.index()).is_none() {
                        *a
                    } else {
                        *b
                    };
                    errors.push(SolveError::ObjectiveUnknownVar { var });
                    return self.push(Node::Const(0.0));
                };
                if a == b {
                    errors.push(SolveError::SelfPair { var: *a });
                }
                finite("pair lower bound", *lower, errors);
                finite("pair upper bound", *upper, errors);
                if lower > upper {
                    errors.push(SolveError::EmptyRange {
                        lower: *lower,
                        upper: *upper,
                    });
                }
                let (mut lo, mut hi) = (*lower, *upper);
                if u64::from(na) * u64::from(nb) <= ENUM_LIMIT && na > 0 && nb > 0 {
                    (lo, hi) = (f64::INFINITY, f64::NEG_INFINITY);
                    for x in 0..na {
                        for y in 0..nb {
                            let c = cost(Value(x), Value(y));
                            if !c.is_finite() {
                                errors.push(SolveError::NonFiniteCost {
                                    var: *a,
                                    value: Value(x),
                                    cost: c,
                                });
                                return self.push(Node::Const(0.0));
                            }
                            lo = lo.min(c);
                            hi = hi.max(c);
                        }
                    }
                }
                let id = self.push(Node::Pair {
                    a: a.0,
                    b: b.0,
                    f: cost.clone(),
                    lo,
                    hi,
                });
                if a != b {
                    self.keys[a.index()].pairs.push((factor, id));
                    self.keys[b.index()].pairs.push((factor, id));
                }
                return id;
            }
            Expr::Sum(ts) => {
                let mut kids = Vec::with_capacity(ts.len());
                for (w, t) in ts {
                    finite("weight", *w, errors);
                    kids.push((*w, self.add(t, factor * w, sizes, errors, orders)));
                }
                Node::Sum(kids)
            }
            Expr::Product(ts) => Node::Product(
                ts.iter()
                    .map(|t| self.add(t, factor, sizes, errors, orders))
                    .collect(),
            ),
            Expr::Min(ts) | Expr::Max(ts) => {
                let is_min = matches!(e, Expr::Min(_));
                if ts.is_empty() {
                    errors.push(SolveError::NoOperands {
                        op: if is_min { "min" } else { "max" },
                    });
                }
                let kids = ts
                    .iter()
                    .map(|t| self.add(t, factor, sizes, errors, orders))
                    .collect();
                if is_min {
                    Node::Min(kids)
                } else {
                    Node::Max(kids)
                }
            }
            Expr::Normalize { expr, start, end } => {
                finite("normalization start", *start, errors);
                finite("normalization end", *end, errors);
                let scale = if end == start {
                    errors.push(SolveError::EmptyNormalization { start: *start });
                    1.0
                } else {
                    1.0 / (end - start)
                };
                let child = self.add(expr, factor * scale, sizes, errors, orders);
                Node::Norm {
                    child,
                    start: *start,
                    scale,
                }
            }
        };
        self.push(node)
    }

    fn push(&mut self, n: Node) -> usize {
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    fn unary_key(&self, leaves: &[(f64, usize)], v: Value) -> f64 {
        leaves
            .iter()
            .map(|(f, n)| match &self.nodes[*n] {
                Node::Unary { costs, .. } => mul(*f, costs.get(v.index()).copied().unwrap_or(0.0)),
                _ => 0.0,
            })
            .sum()
    }

    /// How good `var = v` looks (lower = better): unary costs plus pairwise costs to assigned
    /// partners, weighted along the path. A heuristic for value ordering only.
    pub(crate) fn value_key(&self, var: u32, v: Value, st: &State) -> f64 {
        let Some(k) = self.keys.get(var as usize) else {
            return 0.0;
        };
        let mut key = self.unary_key(&k.unary, v);
        for (f, n) in &k.pairs {
            if let Node::Pair { a, b, f: cost, .. } = &self.nodes[*n] {
                let c = if *a == var {
                    st.value(*b).map(|w| cost(v, w))
                } else {
                    st.value(*a).map(|w| cost(w, v))
                };
                key += c.map_or(0.0, |c| mul(*f, c));
            }
        }
        key
    }

    /// `(var, costs, values by increasing cost, cell)` of a unary leaf.
    pub(crate) fn unary_leaf(&self, n: usize) -> Option<(u32, &[f64], &[u32], usize)> {
        match self.nodes.get(n)? {
            Node::Unary {
                var,
                costs,
                order,
                cell,
            } => Some((*var, costs, order, *cell)),
            _ => None,
        }
    }

    /// `(a, b, cost, lower, upper)` of a pair leaf.
    pub(crate) fn pair_leaf(&self, n: usize) -> Option<(u32, u32, &PairFn, f64, f64)> {
        match self.nodes.get(n)? {
            Node::Pair { a, b, f, lo, hi } => Some((*a, *b, f, *lo, *hi)),
            _ => None,
        }
    }

    /// The value of a constant node.
    pub(crate) fn constant(&self, n: usize) -> Option<f64> {
        match self.nodes.get(n)? {
            Node::Const(c) => Some(*c),
            _ => None,
        }
    }

    /// Every variable the objective reads, increasing.
    pub(crate) fn all_vars(&self) -> Vec<u32> {
        self.node_vars(self.root)
    }

    /// Whether every assignment costs a whole number: constants, unary tables and weights
    /// whole, combined by sums, products, minima and maxima (a pair function or a
    /// normalization could be anything). Bounds then round up: a node whose bound exceeds
    /// the largest whole number below the incumbent holds nothing cheaper.
    pub(crate) fn integral(&self) -> bool {
        self.integral
    }

    fn whole_costs(&self) -> bool {
        // Sums of such numbers stay exact in an f64 far beyond any real plan's cost.
        fn whole(x: f64) -> bool {
            x.is_finite() && x.fract() == 0.0 && x.abs() <= WHOLE_MAX
        }
        self.nodes.iter().all(|n| match n {
            Node::Const(c) => whole(*c),
            Node::Unary { costs, .. } => costs.iter().all(|&c| whole(c)),
            Node::Pair { .. } | Node::Norm { .. } => false,
            Node::Sum(ts) => ts.iter().all(|&(w, _)| whole(w)),
            // A product of whole numbers may outgrow what an f64 holds exactly.
            Node::Product(_) => false,
            Node::Min(_) | Node::Max(_) => true,
        })
    }

    /// The weighted terms of the root when it is a sum (what decomposition splits).
    pub(crate) fn root_terms(&self) -> Option<&[(f64, usize)]> {
        match &self.nodes[self.root] {
            Node::Sum(ts) => Some(ts),
            _ => None,
        }
    }

    /// Variables a node reads, increasing.
    pub(crate) fn node_vars(&self, n: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let mut stack = vec![n];
        while let Some(n) = stack.pop() {
            match &self.nodes[n] {
                Node::Const(_) => {}
                Node::Unary { var, .. } => out.push(*var),
                Node::Pair { a, b, .. } => out.extend([*a, *b]),
                Node::Sum(ts) => stack.extend(ts.iter().map(|t| t.1)),
                Node::Product(ts) | Node::Min(ts) | Node::Max(ts) => stack.extend(ts),
                Node::Norm { child, .. } => stack.push(*child),
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Lower bound of `sign * weight * term` (the minimized cost of one root term).
    pub(crate) fn term_lb(&self, weight: f64, node: usize, st: &mut State, base: usize) -> f64 {
        let w = self.sign * weight;
        if w == 0.0 {
            return 0.0;
        }
        let (lo, hi) = self.bounds_node(node, st, base);
        if w > 0.0 { w * lo } else { w * hi }
    }

    /// Exact `weight * term` (objective sense) on a complete assignment.
    pub(crate) fn term_eval(&self, weight: f64, node: usize, values: &[Option<Value>]) -> f64 {
        mul(weight, self.eval_node(node, values))
    }

    /// Exact value on a complete assignment.
    pub(crate) fn eval(&self, values: &[Option<Value>]) -> f64 {
        self.eval_node(self.root, values)
    }

    fn eval_node(&self, n: usize, values: &[Option<Value>]) -> f64 {
        let val = |x: u32| values.get(x as usize).copied().flatten();
        match &self.nodes[n] {
            Node::Const(c) => *c,
            Node::Unary { var, costs, .. } => val(*var)
                .and_then(|v| costs.get(v.index()).copied())
                .unwrap_or(0.0),
            Node::Pair { a, b, f, .. } => match (val(*a), val(*b)) {
                (Some(x), Some(y)) => f(x, y),
                _ => 0.0,
            },
            Node::Sum(ts) => ts
                .iter()
                .map(|(w, t)| mul(*w, self.eval_node(*t, values)))
                .sum(),
            Node::Product(ts) => ts.iter().map(|t| self.eval_node(*t, values)).fold(1.0, mul),
            Node::Min(ts) => ts
                .iter()
                .map(|t| self.eval_node(*t, values))
                .fold(f64::INFINITY, f64::min),
            Node::Max(ts) => ts
                .iter()
                .map(|t| self.eval_node(*t, values))
                .fold(f64::NEG_INFINITY, f64::max),
            Node::Norm {
                child,
                start,
                scale,
            } => (self.eval_node(*child, values) - start) * scale,
        }
    }

    /// Admissible `[lower, upper]` on the current node. Advances the unary leaves' live
    /// positions (trailed cells at `base`).
    pub(crate) fn bounds(&self, st: &mut State, base: usize) -> (f64, f64) {
        self.bounds_node(self.root, st, base)
    }

    fn bounds_node(&self, n: usize, st: &mut State, base: usize) -> (f64, f64) {
        match &self.nodes[n] {
            Node::Const(c) => (*c, *c),
            Node::Unary {
                var,
                costs,
                order,
                cell,
            } => {
                let cost = |v: u32| costs.get(v as usize).copied().unwrap_or(0.0);
                if let Some(v) = st.value(*var) {
                    let c = cost(v.0);
                    return (c, c);
                }
                let len = order.len() as i64;
                let mut lo = st.cell(base + cell);
                while lo < len && !st.contains(*var, order[lo as usize]) {
                    lo += 1;
                }
                let mut hi = st.cell(base + cell + 1);
                while hi >= 0 && !st.contains(*var, order[hi as usize]) {
                    hi -= 1;
                }
                if lo >= len || hi < 0 {
                    return (0.0, 0.0);
                }
                st.set_cell(base + cell, lo);
                st.set_cell(base + cell + 1, hi);
                (cost(order[lo as usize]), cost(order[hi as usize]))
            }
            Node::Pair { a, b, f, lo, hi } => match (st.value(*a), st.value(*b)) {
                (Some(x), Some(y)) => {
                    let c = f(x, y);
                    (c, c)
                }
                (Some(x), None) => min_max(st.values(*b).map(|y| f(x, y))),
                (None, Some(y)) => min_max(st.values(*a).map(|x| f(x, y))),
                (None, None) => {
                    if u64::from(st.size(*a)) * u64::from(st.size(*b)) <= NODE_ENUM_LIMIT {
                        min_max(
                            st.values(*a)
                                .flat_map(|x| st.values(*b).map(move |y| f(x, y))),
                        )
                    } else {
                        (*lo, *hi)
                    }
                }
            },
            Node::Sum(ts) => {
                let (mut l, mut u) = (0.0, 0.0);
                for (w, t) in ts {
                    if *w == 0.0 {
                        continue;
                    }
                    let (a, b) = self.bounds_node(*t, st, base);
                    if *w > 0.0 {
                        l += w * a;
                        u += w * b;
                    } else {
                        l += w * b;
                        u += w * a;
                    }
                }
                (l, u)
            }
            Node::Product(ts) => {
                let (mut l, mut u) = (1.0, 1.0);
                for t in ts {
                    let (a, b) = self.bounds_node(*t, st, base);
                    let p = [mul(l, a), mul(l, b), mul(u, a), mul(u, b)];
                    l = p.iter().copied().fold(f64::INFINITY, f64::min);
                    u = p.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                }
                (l, u)
            }
            Node::Min(ts) => {
                let (mut l, mut u) = (f64::INFINITY, f64::INFINITY);
                for t in ts {
                    let (a, b) = self.bounds_node(*t, st, base);
                    l = l.min(a);
                    u = u.min(b);
                }
                (l, u)
            }
            Node::Max(ts) => {
                let (mut l, mut u) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
                for t in ts {
                    let (a, b) = self.bounds_node(*t, st, base);
                    l = l.max(a);
                    u = u.max(b);
                }
                (l, u)
            }
            Node::Norm {
                child,
                start,
                scale,
            } => {
                let (a, b) = self.bounds_node(*child, st, base);
                let (x, y) = ((a - start) * scale, (b - start) * scale);
                if x <= y { (x, y) } else { (y, x) }
            }
        }
    }
}

fn min_max(it: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut l, mut u) = (f64::INFINITY, f64::NEG_INFINITY);
    for c in it {
        l = l.min(c);
        u = u.max(c);
    }
    if l > u { (0.0, 0.0) } else { (l, u) }
}

fn finite(what: &'static str, number: f64, errors: &mut Vec<SolveError>) {
    if !number.is_finite() {
        errors.push(SolveError::NonFiniteNumber { what, number });
    }
}

/// Value indices by increasing cost (ties by index).
fn sorted(costs: &[f64]) -> Arc<[u32]> {
    let mut idx: Vec<u32> = (0..costs.len() as u32).collect();
    idx.sort_by(|&a, &b| {
        costs[a as usize]
            .total_cmp(&costs[b as usize])
            .then(a.cmp(&b))
    });
    idx.into()
}
