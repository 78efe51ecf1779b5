//! Property tests against brute force on random small problems (<= 6 vars, <= 8 values).

use std::sync::Arc;

use berth_solver::{
    AllDifferent, AllDifferentGroup, AtMostCount, Capacity, Expr, Filter, Keys, NO_KEY, Outcome,
    Pairwise, Problem, SameGroup, Sense, SolveOptions, Unique, Value, VarId,
};
use proptest::prelude::*;

/// Deterministic generator for the random instances (seeded by proptest).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// One constraint as the oracle understands it (independent of the solver's code).
#[derive(Debug, Clone)]
enum Rule {
    Forbid {
        var: usize,
        values: Vec<u32>,
    },
    Pair {
        a: usize,
        b: usize,
        cols: u32,
        table: Vec<bool>,
    },
    AllDiff {
        vars: Vec<usize>,
    },
    Diff {
        vars: Vec<usize>,
    },
    Same {
        vars: Vec<usize>,
    },
    AtMost {
        vars: Vec<usize>,
        sets: Vec<Vec<bool>>,
        k: u32,
    },
    Cap {
        vars: Vec<usize>,
        holder: Vec<Vec<u32>>,
        demand: Vec<[i64; 2]>,
        cap: Vec<[i64; 2]>,
    },
}

#[derive(Debug, Clone, Copy)]
enum Shape {
    Sum,
    Max,
    Min,
    Product,
    Normalized,
    /// The same value as `Sum`, built as one flat sum of direct unary and pair terms (the
    /// form the matching bound of distinct-key groups reads).
    Flat,
}

#[derive(Debug, Clone)]
struct Spec {
    sizes: Vec<u32>,
    zone: Vec<Vec<u32>>,
    rules: Vec<Rule>,
    /// Soft rules with their weight (ids follow the hard ones).
    soft: Vec<(f64, Rule)>,
    unary: Vec<Vec<f64>>,
    weights: Vec<f64>,
    pair_costs: Vec<(usize, usize, Vec<f64>)>,
    shape: Shape,
    maximize: bool,
}

fn gen_spec(seed: u64, max_vars: u64, max_vals: u64) -> Spec {
    let mut r = Rng(seed);
    let n = 1 + r.below(max_vars) as usize;
    let sizes: Vec<u32> = (0..n).map(|_| 1 + r.below(max_vals) as u32).collect();
    let zone: Vec<Vec<u32>> = sizes
        .iter()
        .map(|&s| {
            (0..s)
                .map(|_| {
                    if r.chance(10) {
                        NO_KEY
                    } else {
                        r.below(3) as u32
                    }
                })
                .collect()
        })
        .collect();
    let pick_vars = |r: &mut Rng, min: usize| -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).filter(|_| r.chance(60)).collect();
        while v.len() < min.min(n) {
            let x = r.below(n as u64) as usize;
            if !v.contains(&x) {
                v.push(x);
            }
        }
        v
    };
    let rule = |r: &mut Rng| -> Rule {
        match r.below(7) {
            0 => {
                let var = r.below(n as u64) as usize;
                Rule::Forbid {
                    var,
                    values: (0..sizes[var]).filter(|_| r.chance(30)).collect(),
                }
            }
            1 | 2 if n >= 2 => {
                let a = r.below(n as u64) as usize;
                let b = (a + 1 + r.below(n as u64 - 1) as usize) % n;
                let cols = sizes[b];
                Rule::Pair {
                    a,
                    b,
                    cols,
                    table: (0..sizes[a] * cols).map(|_| r.chance(65)).collect(),
                }
            }
            3 => Rule::Diff {
                vars: pick_vars(r, 2),
            },
            4 => Rule::Same {
                vars: pick_vars(r, 2),
            },
            5 => {
                let vars = pick_vars(r, 2);
                let sets = vars
                    .iter()
                    .map(|&x| (0..sizes[x]).map(|_| r.chance(50)).collect())
                    .collect();
                Rule::AtMost {
                    k: r.below(3) as u32,
                    vars,
                    sets,
                }
            }
            6 => {
                let vars = pick_vars(r, 2);
                let holders = 1 + r.below(3) as u32;
                Rule::Cap {
                    holder: vars
                        .iter()
                        .map(|&x| {
                            (0..sizes[x])
                                .map(|_| {
                                    if r.chance(15) {
                                        NO_KEY
                                    } else {
                                        r.below(u64::from(holders)) as u32
                                    }
                                })
                                .collect()
                        })
                        .collect(),
                    demand: vars
                        .iter()
                        .map(|_| [r.below(4) as i64, r.below(3) as i64])
                        .collect(),
                    cap: (0..holders)
                        .map(|_| [r.below(7) as i64, r.below(5) as i64])
                        .collect(),
                    vars,
                }
            }
            _ => Rule::AllDiff {
                vars: pick_vars(r, 2),
            },
        }
    };
    let rules: Vec<Rule> = (0..r.below(6)).map(|_| rule(&mut r)).collect();
    let soft: Vec<(f64, Rule)> = (0..r.below(3))
        .map(|_| ((1 + r.below(4)) as f64, rule(&mut r)))
        .collect();
    let unary: Vec<Vec<f64>> = sizes
        .iter()
        .map(|&s| (0..s).map(|_| r.below(10) as f64).collect())
        .collect();
    let weights: Vec<f64> = (0..n)
        .map(|_| [1.0, 2.0, 0.5, -1.0][r.below(4) as usize])
        .collect();
    let pair_costs: Vec<(usize, usize, Vec<f64>)> = if n >= 2 {
        (0..r.below(3))
            .map(|_| {
                let a = r.below(n as u64) as usize;
                let b = (a + 1 + r.below(n as u64 - 1) as usize) % n;
                (
                    a,
                    b,
                    (0..sizes[a] * sizes[b])
                        .map(|_| r.below(10) as f64)
                        .collect(),
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    let shape = [
        Shape::Sum,
        Shape::Max,
        Shape::Min,
        Shape::Product,
        Shape::Normalized,
    ][r.below(5) as usize];
    Spec {
        sizes,
        zone,
        rules,
        soft,
        unary,
        weights,
        pair_costs,
        shape,
        maximize: r.chance(25),
    }
}

/// Groups of 2 or 3 interchangeable variables (same domain, zones, unary costs, weight and
/// capacity demand) under `Diff`, a shared capacity, a few random rules, a flat sum objective.
fn gen_grouped(seed: u64) -> Spec {
    let mut r = Rng(seed);
    let n = 2 + r.below(5) as usize;
    let s = 2 + r.below(5) as u32;
    let sizes = vec![s; n];
    let row: Vec<u32> = (0..s)
        .map(|_| {
            if r.chance(10) {
                NO_KEY
            } else {
                r.below(4) as u32
            }
        })
        .collect();
    let zone = vec![row; n];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut x = 0;
    while x < n {
        let len = (2 + r.below(2) as usize).min(n - x);
        groups.push((x..x + len).collect());
        x += len;
    }
    let maximize = r.chance(25);
    let mut unary = vec![Vec::new(); n];
    let mut weights = vec![0.0; n];
    let mut demand = vec![[0i64; 2]; n];
    for g in &groups {
        let costs: Vec<f64> = (0..s).map(|_| r.below(10) as f64).collect();
        let w = [1.0, 2.0, 0.5, -1.0][r.below(4) as usize];
        let d = [r.below(3) as i64, r.below(3) as i64];
        for &x in g {
            unary[x] = costs.clone();
            weights[x] = w;
            demand[x] = d;
        }
    }
    let mut rules: Vec<Rule> = groups
        .iter()
        .filter(|g| g.len() > 1)
        .map(|g| Rule::Diff { vars: g.clone() })
        .collect();
    if r.chance(70) {
        let holders = 1 + r.below(3) as u32;
        let holder: Vec<u32> = (0..s)
            .map(|_| {
                if r.chance(15) {
                    NO_KEY
                } else {
                    r.below(u64::from(holders)) as u32
                }
            })
            .collect();
        rules.push(Rule::Cap {
            vars: (0..n).collect(),
            holder: vec![holder; n],
            demand,
            cap: (0..holders)
                .map(|_| [r.below(6) as i64, r.below(6) as i64])
                .collect(),
        });
    }
    if r.chance(40) {
        let var = r.below(n as u64) as usize;
        rules.push(Rule::Forbid {
            var,
            values: (0..s).filter(|_| r.chance(30)).collect(),
        });
    }
    let pair_costs = if r.chance(30) {
        let a = r.below(n as u64) as usize;
        let b = (a + 1 + r.below(n as u64 - 1) as usize) % n;
        vec![(a, b, (0..s * s).map(|_| r.below(10) as f64).collect())]
    } else {
        Vec::new()
    };
    Spec {
        sizes,
        zone,
        rules,
        soft: Vec::new(),
        unary,
        weights,
        pair_costs,
        shape: if r.chance(80) {
            Shape::Flat
        } else {
            Shape::Sum
        },
        maximize,
    }
}

/// Contended shared capacity: random rules and pair terms as in `gen_spec`, plus one capacity
/// over every variable whose cheap holders cannot take everyone, under a flat sum (the shape the
/// Lagrangian bound relaxes: capacity into the unary terms, pair terms bounded apart).
fn gen_contended(seed: u64) -> Spec {
    let mut spec = gen_spec(seed, 6, 6);
    let mut r = Rng(seed ^ 0xCAFE);
    let n = spec.sizes.len();
    let holders = 1 + r.below(3) as u32;
    let holder: Vec<Vec<u32>> = spec
        .sizes
        .iter()
        .map(|&s| {
            (0..s)
                .map(|v| {
                    if r.chance(10) {
                        NO_KEY
                    } else {
                        (v + r.below(2) as u32) % holders
                    }
                })
                .collect()
        })
        .collect();
    let demand: Vec<[i64; 2]> = (0..n)
        .map(|_| [1 + r.below(3) as i64, r.below(2) as i64])
        .collect();
    let cap: Vec<[i64; 2]> = (0..holders)
        .map(|_| [1 + r.below(5) as i64, 1 + r.below(3) as i64])
        .collect();
    spec.rules.push(Rule::Cap {
        vars: (0..n).collect(),
        holder,
        demand,
        cap,
    });
    spec.shape = Shape::Flat;
    // Cheaper values first on the low holders, so the unary optimum crowds them.
    for (x, t) in spec.unary.iter_mut().enumerate() {
        for (v, c) in t.iter_mut().enumerate() {
            *c = (*c / 3.0).floor() + v as f64 * (1 + x % 2) as f64;
        }
    }
    spec
}

/// `gen_contended` with two to four pair terms, disjoint or sharing a variable (the joint
/// bound of a pair term with its variables' adjusted costs, and the node LPs beside them).
fn gen_paired(seed: u64) -> Spec {
    let mut spec = gen_contended(seed);
    let mut r = Rng(seed ^ 0xBEEF);
    let n = spec.sizes.len();
    if n < 2 {
        return spec;
    }
    spec.pair_costs = (0..2 + r.below(3) as usize)
        .map(|k| {
            // Consecutive pairs first (disjoint), then any.
            let a = if k < n / 2 {
                2 * k
            } else {
                r.below(n as u64) as usize
            };
            let b = if k < n / 2 {
                2 * k + 1
            } else {
                (a + 1 + r.below(n as u64 - 1) as usize) % n
            };
            let cells = spec.sizes[a] * spec.sizes[b];
            (a, b, (0..cells).map(|_| r.below(12) as f64).collect())
        })
        .collect();
    spec
}

/// A hub variable and two blocks of three or four variables, each block a chain of pair
/// tables that rule out its cheapest values together, the hub tied to each block's first
/// variable; over them one shared capacity and now and then a count or a zone rule, all
/// hard, under a sum of unary costs. Once the hub is decided the blocks no longer depend on
/// each other, and the bounds miss the pair tables: the search meets one block's same rest
/// under several decisions in the other (and remembers it, see
/// [`SolveOptions::remember`]).
fn gen_remembered(seed: u64) -> Spec {
    let mut r = Rng(seed);
    let blocks = [3 + r.below(2) as usize, 3 + r.below(2) as usize];
    let n = 1 + blocks[0] + blocks[1];
    let mut sizes = vec![2 + r.below(2) as u32];
    sizes.extend((1..n).map(|_| 3 + r.below(2) as u32));
    let zone: Vec<Vec<u32>> = sizes
        .iter()
        .map(|&s| (0..s).map(|_| r.below(3) as u32).collect())
        .collect();
    let mut rules = Vec::new();
    let mut first = 1;
    for len in blocks {
        let (a, b) = (0, first);
        rules.push(Rule::Pair {
            a,
            b,
            cols: sizes[b],
            table: (0..sizes[a] * sizes[b]).map(|_| r.chance(70)).collect(),
        });
        for a in first..first + len - 1 {
            let b = a + 1;
            rules.push(Rule::Pair {
                a,
                b,
                cols: sizes[b],
                // Not both on their cheapest value, and a few more pairs out.
                table: (0..sizes[a] * sizes[b])
                    .map(|k| k != 0 && r.chance(85))
                    .collect(),
            });
        }
        first += len;
    }
    rules.push(Rule::Cap {
        vars: (0..n).collect(),
        holder: sizes
            .iter()
            .map(|&s| (0..s).map(|v| v % 2).collect())
            .collect(),
        demand: (0..n).map(|_| [1 + r.below(2) as i64, 0]).collect(),
        cap: (0..2).map(|_| [2 + r.below(n as u64) as i64, 0]).collect(),
    });
    if r.chance(50) {
        let vars: Vec<usize> = (0..n).filter(|_| r.chance(50)).collect();
        let sets = vars
            .iter()
            .map(|&x| (0..sizes[x]).map(|_| r.chance(40)).collect())
            .collect();
        rules.push(Rule::AtMost {
            k: 1 + r.below(2) as u32,
            vars,
            sets,
        });
    }
    if r.chance(50) {
        rules.push(Rule::Diff {
            vars: vec![1, n - 1],
        });
    }
    let unary = sizes
        .iter()
        .map(|&s| {
            (0..s)
                .map(|v| if v == 0 { 0.0 } else { 2.0 + r.below(8) as f64 })
                .collect()
        })
        .collect();
    Spec {
        sizes,
        zone,
        rules,
        soft: Vec::new(),
        unary,
        weights: vec![1.0; n],
        pair_costs: Vec::new(),
        shape: Shape::Flat,
        maximize: r.chance(20),
    }
}

fn keys(v: &[u32]) -> Keys {
    Arc::from(v.to_vec())
}

fn add_rule(p: &mut Problem, spec: &Spec, rule: &Rule, name: String, weight: Option<f64>) {
    let var = |x: usize| VarId(x as u32);
    let c: Box<dyn berth_solver::Constraint> = match rule.clone() {
        Rule::Forbid { var: x, values } => {
            Box::new(Filter::forbid(var(x), values.into_iter().map(Value)))
        }
        Rule::Pair { a, b, cols, table } => {
            Box::new(Pairwise::from_table(var(a), var(b), cols, table))
        }
        Rule::AllDiff { vars } => Box::new(AllDifferent::new(vars.into_iter().map(var).collect())),
        Rule::Diff { vars } => Box::new(AllDifferentGroup::new(
            vars.iter().map(|&x| var(x)).collect(),
            vars.iter().map(|&x| keys(&spec.zone[x])).collect(),
        )),
        Rule::Same { vars } => Box::new(SameGroup::new(
            vars.iter().map(|&x| var(x)).collect(),
            vars.iter().map(|&x| keys(&spec.zone[x])).collect(),
        )),
        Rule::AtMost { vars, sets, k } => Box::new(AtMostCount::new(
            vars.iter().map(|&x| var(x)).collect(),
            sets.into_iter().map(Arc::from).collect(),
            k,
        )),
        Rule::Cap {
            vars,
            holder,
            demand,
            cap,
        } => {
            let k = Capacity::new(
                2,
                cap.iter().map(|c| c.to_vec()).collect(),
                vars.iter()
                    .zip(holder)
                    .zip(&demand)
                    .map(|((&x, h), d)| (var(x), keys(&h), d.to_vec()))
                    .collect(),
            );
            // Hard capacities as the engine adds them (typed, so the solver may relax them
            // into its Lagrangian bound); soft ones boxed.
            if weight.is_none() {
                p.add_constraint(name, k);
                return;
            }
            Box::new(k)
        }
    };
    p.add_boxed(name, c, weight);
}

fn build(spec: &Spec) -> Problem {
    let mut p = Problem::new();
    for (i, &s) in spec.sizes.iter().enumerate() {
        p.add_var(format!("v{i}"), s);
    }
    for (i, r) in spec.rules.iter().enumerate() {
        add_rule(&mut p, spec, r, format!("hard{i}"), None);
    }
    for (i, (w, r)) in spec.soft.iter().enumerate() {
        add_rule(&mut p, spec, r, format!("soft{i}"), Some(*w));
    }
    let unary: Vec<Expr> = spec
        .unary
        .iter()
        .enumerate()
        .map(|(i, t)| Expr::unary(VarId(i as u32), t.clone()))
        .collect();
    let pairs: Vec<Expr> = spec
        .pair_costs
        .iter()
        .map(|(a, b, t)| {
            Expr::pair_table(
                VarId(*a as u32),
                VarId(*b as u32),
                spec.sizes[*b],
                t.clone(),
            )
        })
        .collect();
    let weighted = |from: usize, to: usize| {
        Expr::sum(
            (from..to)
                .map(|i| (spec.weights[i], unary[i].clone()))
                .collect::<Vec<_>>(),
        )
    };
    let pair_sum = Expr::sum(pairs.iter().map(|e| (1.0, e.clone())).collect::<Vec<_>>());
    let n = spec.sizes.len();
    let h = n / 2;
    let expr = match spec.shape {
        Shape::Sum => Expr::sum([(1.0, weighted(0, n)), (1.0, pair_sum)]),
        Shape::Max => Expr::Max(vec![
            weighted(0, h),
            Expr::sum([(1.0, weighted(h, n)), (1.0, pair_sum)]),
        ]),
        Shape::Min => Expr::Min(vec![
            Expr::sum([(1.0, weighted(0, h)), (1.0, pair_sum)]),
            weighted(h, n),
        ]),
        Shape::Product => Expr::Product(vec![
            Expr::sum([(1.0, Expr::Const(1.0)), (1.0, weighted(0, n))]),
            Expr::sum([(1.0, Expr::Const(1.0)), (1.0, pair_sum)]),
        ]),
        Shape::Normalized => {
            Expr::sum([(1.0, weighted(0, n)), (1.0, pair_sum)]).normalize(3.0, 13.0)
        }
        Shape::Flat => Expr::sum(
            (0..n)
                .map(|i| (spec.weights[i], unary[i].clone()))
                .chain(pairs.iter().map(|e| (1.0, e.clone())))
                .collect::<Vec<_>>(),
        ),
    };
    p.set_objective(
        if spec.maximize {
            Sense::Maximize
        } else {
            Sense::Minimize
        },
        expr,
    );
    p
}

/// Whether the assignment satisfies the rule, computed from the spec alone.
fn ok(spec: &Spec, rule: &Rule, a: &[u32]) -> bool {
    match rule {
        Rule::Forbid { var, values } => !values.contains(&a[*var]),
        Rule::Pair {
            a: x,
            b: y,
            cols,
            table,
        } => table[(a[*x] * cols + a[*y]) as usize],
        Rule::AllDiff { vars } => {
            let vals: Vec<u32> = vars.iter().map(|&x| a[x]).collect();
            (0..vals.len()).all(|i| (i + 1..vals.len()).all(|j| vals[i] != vals[j]))
        }
        Rule::Diff { vars } => {
            let ks: Vec<u32> = vars
                .iter()
                .map(|&x| spec.zone[x][a[x] as usize])
                .filter(|&k| k != NO_KEY)
                .collect();
            (0..ks.len()).all(|i| (i + 1..ks.len()).all(|j| ks[i] != ks[j]))
        }
        Rule::Same { vars } => {
            if vars.len() < 2 {
                return true;
            }
            let k0 = spec.zone[vars[0]][a[vars[0]] as usize];
            k0 != NO_KEY && vars.iter().all(|&x| spec.zone[x][a[x] as usize] == k0)
        }
        Rule::AtMost { vars, sets, k } => {
            vars.iter()
                .zip(sets)
                .filter(|(x, s)| s[a[**x] as usize])
                .count() as u32
                <= *k
        }
        Rule::Cap {
            vars,
            holder,
            demand,
            cap,
        } => {
            let mut load = vec![[0i64; 2]; cap.len()];
            for (i, &x) in vars.iter().enumerate() {
                let h = holder[i][a[x] as usize];
                if h != NO_KEY {
                    load[h as usize][0] += demand[i][0];
                    load[h as usize][1] += demand[i][1];
                }
            }
            load.iter()
                .zip(cap)
                .all(|(l, c)| l[0] <= c[0] && l[1] <= c[1])
        }
    }
}

/// Score of an assignment computed from the spec alone (what solutions are ranked by).
fn score(spec: &Spec, a: &[u32]) -> f64 {
    let n = spec.sizes.len();
    let h = n / 2;
    let w = |from: usize, to: usize| -> f64 {
        (from..to)
            .map(|i| spec.weights[i] * spec.unary[i][a[i] as usize])
            .sum()
    };
    let pairs: f64 = spec
        .pair_costs
        .iter()
        .map(|(x, y, t)| t[(a[*x] * spec.sizes[*y] + a[*y]) as usize])
        .sum();
    let obj = match spec.shape {
        Shape::Sum | Shape::Flat => w(0, n) + pairs,
        Shape::Max => w(0, h).max(w(h, n) + pairs),
        Shape::Min => (w(0, h) + pairs).min(w(h, n)),
        Shape::Product => (1.0 + w(0, n)) * (1.0 + pairs),
        Shape::Normalized => (w(0, n) + pairs - 3.0) / 10.0,
    };
    let penalty: f64 = spec
        .soft
        .iter()
        .filter(|(_, r)| !ok(spec, r, a))
        .map(|(wt, r)| wt * soft_amount(spec, r, a))
        .sum();
    if spec.maximize {
        obj - penalty
    } else {
        obj + penalty
    }
}

/// Violation amount of a soft rule (same measures as documented for the built-ins).
fn soft_amount(spec: &Spec, rule: &Rule, a: &[u32]) -> f64 {
    match rule {
        Rule::AllDiff { vars } => {
            let mut v: Vec<u32> = vars.iter().map(|&x| a[x]).collect();
            let n = v.len();
            v.sort_unstable();
            v.dedup();
            (n - v.len()) as f64
        }
        Rule::Diff { vars } => {
            let mut ks: Vec<u32> = vars
                .iter()
                .map(|&x| spec.zone[x][a[x] as usize])
                .filter(|&k| k != NO_KEY)
                .collect();
            let n = ks.len();
            ks.sort_unstable();
            ks.dedup();
            (n - ks.len()) as f64
        }
        Rule::Same { vars } => {
            let ks: Vec<u32> = vars.iter().map(|&x| spec.zone[x][a[x] as usize]).collect();
            let loose = ks.iter().filter(|&&k| k == NO_KEY).count();
            let mut keyed: Vec<u32> = ks.into_iter().filter(|&k| k != NO_KEY).collect();
            keyed.sort_unstable();
            keyed.dedup();
            let distinct = keyed.len() + loose;
            if loose > 0 {
                (distinct.max(2) - 1) as f64
            } else {
                distinct.saturating_sub(1) as f64
            }
        }
        Rule::AtMost { vars, sets, k } => (vars
            .iter()
            .zip(sets)
            .filter(|(x, s)| s[a[**x] as usize])
            .count() as u32)
            .saturating_sub(*k) as f64,
        Rule::Cap {
            vars,
            holder,
            demand,
            cap,
        } => {
            let mut load = vec![[0i64; 2]; cap.len()];
            for (i, &x) in vars.iter().enumerate() {
                let h = holder[i][a[x] as usize];
                if h != NO_KEY {
                    load[h as usize][0] += demand[i][0];
                    load[h as usize][1] += demand[i][1];
                }
            }
            load.iter()
                .zip(cap)
                .map(|(l, c)| ((l[0] - c[0]).max(0) + (l[1] - c[1]).max(0)) as f64)
                .sum()
        }
        Rule::Forbid { .. } | Rule::Pair { .. } => 1.0,
    }
}

/// Every assignment satisfying the hard rules in `active`, with its score.
fn brute(spec: &Spec, active: &[bool], excluded: &[(usize, u32)]) -> Vec<(f64, Vec<u32>)> {
    let n = spec.sizes.len();
    let mut out = Vec::new();
    let mut a = vec![0u32; n];
    if spec.sizes.contains(&0) {
        return out;
    }
    loop {
        let feasible = spec
            .rules
            .iter()
            .zip(active)
            .all(|(r, &on)| !on || ok(spec, r, &a))
            && excluded.iter().all(|&(x, v)| a[x] != v);
        if feasible {
            out.push((score(spec, &a), a.clone()));
        }
        let mut i = 0;
        loop {
            if i == n {
                return out;
            }
            a[i] += 1;
            if a[i] < spec.sizes[i] {
                break;
            }
            a[i] = 0;
            i += 1;
        }
    }
}

/// Best first, in the spec's sense.
fn ranked(spec: &Spec, mut all: Vec<(f64, Vec<u32>)>) -> Vec<(f64, Vec<u32>)> {
    all.sort_by(|x, y| {
        if spec.maximize {
            y.0.total_cmp(&x.0)
        } else {
            x.0.total_cmp(&y.0)
        }
    });
    all
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

fn values(s: &[Value]) -> Vec<u32> {
    s.iter().map(|v| v.0).collect()
}

fn check_solutions(
    spec: &Spec,
    p: &Problem,
    sols: &[berth_solver::Solution],
) -> Result<(), TestCaseError> {
    let all_on = vec![true; spec.rules.len()];
    for s in sols {
        let a = values(&s.values);
        prop_assert!(
            p.check(&s.values).is_empty(),
            "checker rejects {:?}: {:?}",
            a,
            p.check(&s.values)
        );
        prop_assert!(
            spec.rules.iter().zip(&all_on).all(|(r, _)| ok(spec, r, &a)),
            "oracle rejects {:?}",
            a
        );
        prop_assert!(
            close(s.score, score(spec, &a)),
            "score {} but oracle says {}",
            s.score,
            score(spec, &a)
        );
    }
    let mut distinct: Vec<Vec<u32>> = sols.iter().map(|s| values(&s.values)).collect();
    distinct.sort();
    distinct.dedup();
    prop_assert_eq!(distinct.len(), sols.len(), "solutions are not distinct");
    Ok(())
}

/// The conflict set is infeasible on its own, and minimal when it says so.
fn check_explanation(spec: &Spec, e: &berth_solver::Explanation) -> Result<(), TestCaseError> {
    let mut active = vec![false; spec.rules.len()];
    for c in &e.conflict {
        active[c.index()] = true;
    }
    prop_assert!(
        brute(spec, &active, &[]).is_empty(),
        "conflict {:?} is feasible",
        e.conflict
    );
    if e.minimal {
        for c in &e.conflict {
            let mut less = active.clone();
            less[c.index()] = false;
            prop_assert!(
                !brute(spec, &less, &[]).is_empty(),
                "conflict {:?} minus {c} still infeasible",
                e.conflict
            );
        }
    }
    Ok(())
}

/// A complete solve's answer against brute force (`all`, ranked): the `k` best scores, or
/// infeasible exactly when brute force found nothing (with a sound explanation).
fn check_k_best(
    spec: &Spec,
    p: &Problem,
    out: &Outcome,
    all: &[(f64, Vec<u32>)],
    k: usize,
) -> Result<(), TestCaseError> {
    match out {
        Outcome::Solved {
            solutions,
            optimal,
            bound,
            ..
        } => {
            prop_assert!(*optimal);
            // A proven optimum is its own bound.
            prop_assert!(
                bound.is_some_and(|b| close(b, all[0].0)),
                "bound {bound:?}, optimum {}",
                all[0].0
            );
            prop_assert_eq!(solutions.len(), all.len().min(k));
            for (s, b) in solutions.iter().zip(all) {
                prop_assert!(close(s.score, b.0), "solver {} brute {}", s.score, b.0);
            }
            check_solutions(spec, p, solutions)?;
        }
        Outcome::Infeasible { explanation, .. } => {
            prop_assert!(
                all.is_empty(),
                "solver says infeasible, brute force found {:?}",
                all[0]
            );
            check_explanation(spec, explanation)?;
        }
        Outcome::Stopped { .. } => prop_assert!(false, "stopped without limits"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, .. ProptestConfig::default() })]

    /// The optimum equals brute force; infeasible iff brute force finds nothing.
    #[test]
    fn optimum_equals_brute_force(seed in any::<u64>()) {
        let spec = gen_spec(seed, 6, 8);
        let p = build(&spec);
        let all = ranked(&spec, brute(&spec, &vec![true; spec.rules.len()], &[]));
        let out = p.solve(&SolveOptions::default()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        match &out {
            Outcome::Solved { solutions, optimal, .. } => {
                prop_assert!(*optimal);
                prop_assert!(!all.is_empty(), "solver found {:?}, brute force nothing", solutions[0]);
                prop_assert!(close(solutions[0].score, all[0].0), "solver {} brute {}", solutions[0].score, all[0].0);
                check_solutions(&spec, &p, solutions)?;
            }
            Outcome::Infeasible { explanation, .. } => {
                prop_assert!(all.is_empty(), "solver says infeasible, brute force found {:?}", all[0]);
                check_explanation(&spec, explanation)?;
            }
            Outcome::Stopped { .. } => prop_assert!(false, "stopped without limits"),
        }
        // Deterministic: same input, same output.
        prop_assert_eq!(&out, &p.solve(&SolveOptions::default()).map_err(|e| TestCaseError::fail(e.to_string()))?);
    }

    /// Interchangeable variables in distinct-key groups (matching bound, decomposition):
    /// the optimum and the k best equal brute force.
    #[test]
    fn groups_equal_brute_force(seed in any::<u64>(), k in 1usize..4) {
        let spec = gen_grouped(seed);
        let p = build(&spec);
        let all = ranked(&spec, brute(&spec, &vec![true; spec.rules.len()], &[]));
        let opts = SolveOptions { solutions: k, ..SolveOptions::default() };
        let out = p.solve(&opts).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check_k_best(&spec, &p, &out, &all, k)?;
    }

    /// Contended shared capacity with pair rules and pair terms (the Lagrangian bound, its
    /// reduced-cost filtering and value order): optimum and k best equal brute force.
    #[test]
    fn contended_capacity_equals_brute_force(seed in any::<u64>(), k in 1usize..3) {
        let spec = gen_contended(seed);
        let p = build(&spec);
        let all = ranked(&spec, brute(&spec, &vec![true; spec.rules.len()], &[]));
        let opts = SolveOptions { solutions: k, ..SolveOptions::default() };
        let out = p.solve(&opts).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check_k_best(&spec, &p, &out, &all, k)?;
    }

    /// Pair terms over contended capacity (the joint pair bounds of the Lagrangian and the
    /// LP, their reduced-cost filtering, node LPs beside pair terms), one thread or two:
    /// the optimum and the k best equal brute force.
    #[test]
    fn pair_terms_equal_brute_force(seed in any::<u64>(), k in 1usize..3, lp in any::<bool>(), threads in 1usize..3) {
        let spec = gen_paired(seed);
        let p = build(&spec);
        let all = ranked(&spec, brute(&spec, &vec![true; spec.rules.len()], &[]));
        let opts = SolveOptions {
            solutions: k,
            threads,
            lp_min_values: if lp { Some(0) } else { None },
            ..SolveOptions::default()
        };
        let out = p.solve(&opts).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check_k_best(&spec, &p, &out, &all, k)?;
    }

    /// Hard rules only under a sum of unary costs, so the search remembers refuted subtrees:
    /// the optimum equals brute force, on one thread or two.
    #[test]
    fn remembering_search_equals_brute_force(seed in any::<u64>(), threads in 1usize..3) {
        let spec = gen_remembered(seed);
        let p = build(&spec);
        let all = ranked(&spec, brute(&spec, &vec![true; spec.rules.len()], &[]));
        let opts = SolveOptions { threads, ..SolveOptions::default() };
        let out = p.solve(&opts).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check_k_best(&spec, &p, &out, &all, 1)?;
    }

    /// More threads (helpers improving a shared incumbent, then the canonical pass): the
    /// brute-force optimum and the very plan one thread returns, run after run, whether the
    /// helpers start at the root, after a few nodes (a probe cut, the search restarted) or never.
    #[test]
    fn threads_return_the_plan_of_one_thread(seed in any::<u64>(), threads in 2usize..5, grouped in any::<bool>(), after in prop_oneof![Just(0u64), 1u64..30, Just(2_000)], lp in any::<bool>()) {
        let spec = if grouped { gen_grouped(seed) } else { gen_contended(seed) };
        let p = build(&spec);
        let all = ranked(&spec, brute(&spec, &vec![true; spec.rules.len()], &[]));
        let lp_min_values = if lp { Some(0) } else { None };
        let solve = |threads: usize| p.solve(&SolveOptions { threads, helpers_after: after, lp_min_values, ..SolveOptions::default() })
            .map_err(|e| TestCaseError::fail(e.to_string()));
        let one = solve(1)?;
        let many = solve(threads)?;
        match (&one, &many) {
            (Outcome::Solved { solutions: a, optimal: true, .. }, Outcome::Solved { solutions: b, optimal: true, .. }) => {
                prop_assert!(close(a[0].score, all[0].0), "solver {} brute {}", a[0].score, all[0].0);
                prop_assert_eq!(&a[0].values, &b[0].values);
                check_solutions(&spec, &p, b)?;
            }
            (Outcome::Infeasible { .. }, Outcome::Infeasible { .. }) => prop_assert!(all.is_empty()),
            (a, b) => prop_assert!(false, "one thread {a:?}, {threads} threads {b:?}"),
        }
        let again = solve(threads)?;
        prop_assert_eq!(many.solutions(), again.solutions());
    }

    /// Under a node limit several threads share the tree in lock step: the outcome, counters
    /// included, is the same run after run; plans hold, and a search the limit does not cut
    /// finds the brute-force optimum, as one thread does.
    #[test]
    fn node_limited_threads_are_deterministic(seed in any::<u64>(), threads in 2usize..5, grouped in any::<bool>(), limit in 1u64..3_000, lp in any::<bool>()) {
        let spec = if grouped { gen_grouped(seed) } else { gen_contended(seed) };
        let p = build(&spec);
        let all = ranked(&spec, brute(&spec, &vec![true; spec.rules.len()], &[]));
        let opts = SolveOptions {
            threads,
            helpers_after: 0,
            node_limit: Some(limit),
            lp_min_values: if lp { Some(0) } else { None },
            explain_node_limit: 50,
            ..SolveOptions::default()
        };
        let out = p.solve(&opts).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for _ in 0..2 {
            prop_assert_eq!(&out, &p.solve(&opts).map_err(|e| TestCaseError::fail(e.to_string()))?);
        }
        match &out {
            Outcome::Solved { solutions, optimal, stats, .. } => {
                check_solutions(&spec, &p, solutions)?;
                prop_assert_eq!(*optimal, stats.stopped.is_none());
                if *optimal {
                    prop_assert!(close(solutions[0].score, all[0].0), "solver {} brute {}", solutions[0].score, all[0].0);
                }
            }
            Outcome::Stopped { stats, .. } => prop_assert!(stats.stopped.is_some()),
            Outcome::Infeasible { explanation, .. } => {
                prop_assert!(all.is_empty());
                check_explanation(&spec, explanation)?;
            }
        }
    }

    /// The LP bound on every problem, however small (root multipliers, node LPs and their
    /// reduced-cost filtering, over pair tables, distinct values and keys, same keys and
    /// two-dimensional capacities): the optimum and the k best equal brute force, run after
    /// run.
    #[test]
    fn lp_bound_equals_brute_force(seed in any::<u64>(), k in 1usize..3, shape in 0u8..3) {
        let spec = match shape {
            0 => gen_spec(seed, 6, 8),
            1 => gen_grouped(seed),
            _ => gen_contended(seed),
        };
        let p = build(&spec);
        let all = ranked(&spec, brute(&spec, &vec![true; spec.rules.len()], &[]));
        let opts = SolveOptions { solutions: k, lp_min_values: Some(0), ..SolveOptions::default() };
        let out = p.solve(&opts).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check_k_best(&spec, &p, &out, &all, k)?;
        prop_assert_eq!(&out, &p.solve(&opts).map_err(|e| TestCaseError::fail(e.to_string()))?);
    }

    /// The k best solutions have the k best scores of brute force.
    #[test]
    fn k_best_equals_brute_force(seed in any::<u64>(), k in 1usize..6) {
        let spec = gen_spec(seed, 5, 6);
        let p = build(&spec);
        let all = ranked(&spec, brute(&spec, &vec![true; spec.rules.len()], &[]));
        let opts = SolveOptions { solutions: k, ..SolveOptions::default() };
        let out = p.solve(&opts).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let sols = out.solutions();
        prop_assert_eq!(sols.len(), all.len().min(k));
        for (s, b) in sols.iter().zip(&all) {
            prop_assert!(close(s.score, b.0), "got {:?} want {:?}", sols.iter().map(|s| s.score).collect::<Vec<_>>(), all.iter().take(k).map(|b| b.0).collect::<Vec<_>>());
        }
        check_solutions(&spec, &p, sols)?;
    }

    /// HAS `unique`: each next solution is the best avoiding the values already used.
    #[test]
    fn unique_equals_brute_force(seed in any::<u64>(), k in 1usize..4) {
        let spec = gen_spec(seed, 4, 6);
        let p = build(&spec);
        let opts = SolveOptions { solutions: k, unique: Unique::All, ..SolveOptions::default() };
        let out = p.solve(&opts).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let sols = out.solutions();
        let mut excluded: Vec<(usize, u32)> = Vec::new();
        for round in 0..k {
            let all = ranked(&spec, brute(&spec, &vec![true; spec.rules.len()], &excluded));
            match (sols.get(round), all.first()) {
                (Some(s), Some(b)) => {
                    prop_assert!(close(s.score, b.0), "round {round}: {} vs {}", s.score, b.0);
                    excluded.extend(s.values.iter().enumerate().map(|(x, v)| (x, v.0)));
                }
                (None, None) => break,
                (s, b) => prop_assert!(false, "round {round}: solver {:?} brute {:?}", s, b),
            }
        }
        check_solutions(&spec, &p, sols)?;
    }

    /// Under a node limit: anytime answers are still valid, `optimal` is never claimed
    /// unless the search completed, and the bound is one: no plan beats it (brute force's
    /// optimum is on its side), the plan returned is on the other side, and a proven
    /// optimum is its own bound. With the LP the bound is its root's, raised by the passes
    /// below a target.
    #[test]
    fn node_limit_is_anytime(seed in any::<u64>(), limit in 1u64..30, lp in any::<bool>(), shape in 0u8..3) {
        let spec = match shape {
            0 => gen_spec(seed, 6, 8),
            1 => gen_grouped(seed),
            _ => gen_contended(seed),
        };
        let p = build(&spec);
        let all = ranked(&spec, brute(&spec, &vec![true; spec.rules.len()], &[]));
        let opts = SolveOptions {
            node_limit: Some(limit),
            explain_node_limit: 50,
            lp_min_values: if lp { Some(0) } else { SolveOptions::default().lp_min_values },
            ..SolveOptions::default()
        };
        match p.solve(&opts).map_err(|e| TestCaseError::fail(e.to_string()))? {
            Outcome::Solved { solutions, optimal, bound, stats, .. } => {
                check_solutions(&spec, &p, &solutions)?;
                prop_assert_eq!(optimal, stats.stopped.is_none());
                let (best, opt) = (solutions[0].score, all[0].0);
                if optimal {
                    prop_assert!(close(best, opt));
                    prop_assert!(bound.is_some_and(|b| close(b, opt)), "bound {bound:?}, optimum {opt}");
                }
                if let Some(b) = bound {
                    let tol = 1e-6 * opt.abs().max(1.0);
                    let (below, above) = if spec.maximize { (best, b) } else { (b, best) };
                    prop_assert!(below <= above + tol, "bound {b}, plan {best}");
                    let (below, above) = if spec.maximize { (opt, b) } else { (b, opt) };
                    prop_assert!(below <= above + tol, "bound {b}, optimum {opt}");
                }
            }
            Outcome::Stopped { stats, .. } => prop_assert!(stats.stopped.is_some()),
            Outcome::Infeasible { explanation, .. } => {
                prop_assert!(all.is_empty());
                check_explanation(&spec, &explanation)?;
            }
        }
    }
}

/// The LP property test above would prove nothing if the LP never got used: on contended
/// capacities its multipliers beat the subgradient's in a good share of the instances, and
/// with one optimum wanted the search then runs passes below a target (which must find
/// the same optimum as brute force).
#[test]
fn the_lp_bound_is_used_on_small_contended_problems() {
    let opts = SolveOptions {
        lp_min_values: Some(0),
        ..SolveOptions::default()
    };
    let stats: Vec<_> = (0..200u64)
        .filter_map(|seed| {
            build(&gen_contended(seed))
                .solve(&opts)
                .ok()
                .map(|o| *o.stats())
        })
        .collect();
    let used = stats.iter().filter(|s| s.lp_bounds > 0).count();
    assert!(used >= 20, "LP bound used on {used} of 200 instances");
    let deepened = stats.iter().filter(|s| s.deepen_passes > 0).count();
    assert!(
        deepened >= 20,
        "deepening passes on {deepened} of 200 instances"
    );
}

/// Where the bound at the root already meets the incumbent no LP is built: it could only
/// confirm the bound. The cheapest values of `a` and `b` differ, so the components' plan
/// costs the unary bound. (Where a gap is left the LP is built: the test above.)
#[test]
fn no_lp_when_the_root_bound_meets_the_incumbent() {
    let solve = |cheap_b: usize| {
        let mut p = Problem::new();
        let a = p.add_var("a", 3);
        let b = p.add_var("b", 3);
        // A second component: the components' search then seeds a plan before the LP.
        let c = p.add_var("c", 2);
        let differ: Vec<bool> = (0..9).map(|i| i / 3 != i % 3).collect();
        p.add_constraint("a != b", Pairwise::from_table(a, b, 3, differ));
        let mut cost_b = vec![5.0; 3];
        cost_b[cheap_b] = 1.0;
        p.set_objective(
            Sense::Minimize,
            Expr::sum(vec![
                (1.0, Expr::unary(a, vec![1.0, 3.0, 5.0])),
                (1.0, Expr::unary(b, cost_b)),
                (1.0, Expr::unary(c, vec![2.0, 1.0])),
            ]),
        );
        let opts = SolveOptions {
            lp_min_values: Some(0),
            ..SolveOptions::default()
        };
        let out = p.solve(&opts).expect("valid");
        let Outcome::Solved {
            solutions, stats, ..
        } = out
        else {
            panic!("{out:?}");
        };
        (solutions[0].objective, stats.lp_bounds)
    };
    assert_eq!(solve(1), (3.0, 0));
    // Colliding cheapest values: the components' optima still close the gap.
    assert_eq!(solve(0), (5.0, 0));
}

/// Three variables over two values, pairwise different: the LP (one half on each value) is
/// feasible, no plan is. With no incumbent the deepening passes stop after a few and the
/// search proves the problem infeasible.
#[test]
fn an_odd_cycle_of_differences_is_infeasible_with_the_lp() {
    let mut p = Problem::new();
    let v: Vec<VarId> = (0..3).map(|i| p.add_var(format!("x{i}"), 2)).collect();
    for (a, b) in [(0, 1), (1, 2), (0, 2)] {
        let differ = vec![false, true, true, false];
        p.add_constraint(
            format!("x{a} != x{b}"),
            Pairwise::from_table(v[a], v[b], 2, differ),
        );
    }
    let terms = v.iter().map(|&x| (1.0, Expr::unary(x, vec![1.0, 2.0])));
    p.set_objective(Sense::Minimize, Expr::sum(terms));
    let opts = SolveOptions {
        lp_min_values: Some(0),
        ..SolveOptions::default()
    };
    let out = p.solve(&opts).expect("valid");
    assert!(matches!(out, Outcome::Infeasible { .. }), "{out:?}");
    let stats = out.stats();
    assert_eq!(stats.lp_bounds, 1, "{stats:?}");
    assert!((1..=12).contains(&stats.deepen_passes), "{stats:?}");
}

/// Where the search remembered a refuted subtree (about one instance in ten), the
/// optimum is still brute force's and the forgetting search's, with no more nodes: judged
/// on instances where the memory was used, not only where it could be.
#[test]
fn remembered_subtrees_keep_the_optimum() {
    let mut used = 0;
    for seed in 0..300u64 {
        let spec = gen_remembered(seed);
        let p = build(&spec);
        let on = p.solve(&SolveOptions::default()).expect("valid");
        if on.stats().remembered == 0 {
            continue;
        }
        used += 1;
        let all = ranked(&spec, brute(&spec, &vec![true; spec.rules.len()], &[]));
        check_k_best(&spec, &p, &on, &all, 1).expect("brute force's optimum");
        let forget = SolveOptions {
            remember: false,
            ..SolveOptions::default()
        };
        let off = p.solve(&forget).expect("valid");
        assert_eq!(off.stats().remembered, 0);
        assert!(on.stats().nodes <= off.stats().nodes, "seed {seed}");
        assert_eq!(
            on.solutions().first().map(|s| s.score),
            off.solutions().first().map(|s| s.score),
            "seed {seed}"
        );
    }
    assert!(used >= 15, "subtrees remembered on {used} of 300 instances");
}
