//! Unit tests of the trail, the domain store and the objective bounds.

use std::sync::Arc;

use proptest::prelude::*;

use crate::expr::Compiled;
use crate::state::State;
use crate::{ConstraintId, Expr, Value, VarId};

const WHY: ConstraintId = ConstraintId(0);

#[test]
fn undo_restores_domains_assignments_and_cells() {
    let mut st = State::new(&[70, 3], vec![5, 6]);
    let m0 = st.mark();
    assert_eq!(st.remove(0, 65, WHY), Ok(true));
    assert_eq!(st.remove(0, 65, WHY), Ok(false));
    st.set_cell(1, 9);
    let m1 = st.mark();
    assert_eq!(st.assign(1, 2), Ok(()));
    assert_eq!(st.size(1), 1);
    assert!(!st.contains(1, 0));
    st.undo_to(m1);
    assert_eq!(st.value(1), None);
    assert_eq!(st.size(1), 3);
    assert_eq!(st.cell(1), 9);
    st.undo_to(m0);
    assert_eq!(st.size(0), 70);
    assert!(st.contains(0, 65));
    assert_eq!(st.cell(1), 6);
    assert_eq!(st.values(0).count(), 70);
    assert_eq!(st.values(0).last(), Some(Value(69)));
}

#[test]
fn last_value_is_unit_propagated_and_wipe_out_is_a_conflict() {
    let mut st = State::new(&[3], Vec::new());
    st.remove(0, 0, WHY).expect("two left");
    st.remove(0, 2, WHY).expect("one left");
    assert_eq!(st.value(0), Some(Value(1)));
    assert!(st.remove(0, 1, WHY).is_err());
    assert_eq!(st.remove(0, 0, WHY), Ok(false));
}

fn expr_strategy() -> impl Strategy<Value = Expr> {
    let table = prop::collection::vec(-5i32..10, 4)
        .prop_map(|v| v.into_iter().map(f64::from).collect::<Vec<f64>>());
    let leaf = prop_oneof![
        (-3i32..4).prop_map(|c| Expr::Const(f64::from(c))),
        (0u32..3, table.clone()).prop_map(|(x, t)| Expr::unary(VarId(x), t)),
        (0u32..3, 1u32..3, prop::collection::vec(-5i32..10, 16)).prop_map(|(a, d, t)| {
            Expr::pair_table(
                VarId(a),
                VarId((a + d) % 3),
                4,
                t.into_iter().map(f64::from).collect(),
            )
        }),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            prop::collection::vec(((-2i32..3).prop_map(f64::from), inner.clone()), 1..3)
                .prop_map(Expr::Sum),
            prop::collection::vec(inner.clone(), 1..3).prop_map(Expr::Product),
            prop::collection::vec(inner.clone(), 1..3).prop_map(Expr::Min),
            prop::collection::vec(inner.clone(), 1..3).prop_map(Expr::Max),
            inner.prop_map(|e| e.normalize(1.0, -3.0)),
        ]
    })
}

proptest! {
    /// Interval bounds on a partial assignment contain the value of every completion.
    #[test]
    fn bounds_are_admissible(e in expr_strategy(), fixed in prop::collection::vec(prop::option::of(0u32..4), 3),
                             removed in prop::collection::vec((0u32..3, 0u32..4), 0..5)) {
        let c = Compiled::new(&e, 1.0, &[4, 4, 4]).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let mut st = State::new(&[4, 4, 4], c.cells.clone());
        for (x, v) in removed {
            if st.size(x) > 1 {
                let _ = st.remove(x, v, WHY);
            }
        }
        for (x, v) in fixed.iter().enumerate() {
            if let Some(v) = v {
                let _ = st.assign(x as u32, *v);
            }
        }
        let (lo, hi) = c.bounds(&mut st, 0);
        let doms: Vec<Vec<Value>> = (0..3).map(|x| st.values(x).collect()).collect();
        for a in &doms[0] {
            for b in &doms[1] {
                for d in &doms[2] {
                    let v = c.eval(&[Some(*a), Some(*b), Some(*d)]);
                    prop_assert!(lo - 1e-9 <= v && v <= hi + 1e-9, "{v} outside [{lo}, {hi}] for {e:?}");
                }
            }
        }
    }
}

#[test]
fn shared_cost_tables_share_their_order() {
    let t: Arc<[f64]> = Arc::from(vec![3.0, 1.0, 2.0]);
    let e = Expr::sum([
        (1.0, Expr::unary(VarId(0), t.clone())),
        (-1.0, Expr::unary(VarId(1), t)),
    ]);
    let c = Compiled::new(&e, 1.0, &[3, 3]).expect("valid");
    let (o0, r0) = c.keys[0].order.clone().expect("ordered");
    let (o1, r1) = c.keys[1].order.clone().expect("ordered");
    assert!(Arc::ptr_eq(&o0, &o1));
    assert_eq!(&*o0, &[1, 2, 0]);
    assert!(!r0 && r1);
}

/// Builds the engine of a whole-problem search and runs root propagation.
fn root_engine<'p>(
    p: &'p crate::Problem,
    obj: &'p Compiled,
    active: &'p [bool],
) -> crate::search::Engine<'p> {
    let cfg = crate::search::RunConfig::whole(active);
    let mut e = crate::search::Engine::new(p, obj, &cfg);
    assert!(e.root(&[], false).is_ok());
    e
}

#[test]
fn interchangeable_vars_are_found_and_others_are_not() {
    use crate::{AllDifferentGroup, Capacity, Filter, Problem, Sense};
    let mut p = Problem::new();
    let v: Vec<VarId> = (0..5).map(|i| p.add_var(format!("v{i}"), 4)).collect();
    let zone: crate::Keys = Arc::from(vec![0, 0, 1, 2]);
    let host: crate::Keys = Arc::from(vec![0, 1, 2, 3]);
    p.add_constraint(
        "diff",
        AllDifferentGroup::new(v[..4].to_vec(), vec![zone.clone(); 4]),
    );
    // v0..v2 share a demand; v3 asks more, so it is not interchangeable with them.
    let demands = (0..4)
        .map(|i| (v[i], host.clone(), vec![if i == 3 { 2 } else { 1 }]))
        .collect();
    p.add_constraint("cap", Capacity::new(1, vec![vec![3]; 4], demands));
    // The same forbidden value on v0 and v1 is entailed by their equal root domains; v2 loses
    // another one.
    p.add_constraint("f0", Filter::forbid(v[0], [Value(3)]));
    p.add_constraint("f1", Filter::forbid(v[1], [Value(3)]));
    p.add_constraint("f2", Filter::forbid(v[2], [Value(2)]));
    let costs: Arc<[f64]> = Arc::from(vec![1.0, 2.0, 3.0, 4.0]);
    // v4 has the same costs but no constraint, so it differs from v0 (its own class alone).
    p.set_objective(
        Sense::Minimize,
        Expr::sum(v.iter().map(|&x| (1.0, Expr::unary(x, costs.clone())))),
    );
    let obj = p.compile().expect("valid");
    let active = vec![true; p.constraint_count()];
    let mut e = root_engine(&p, &obj, &active);
    assert_eq!(e.break_symmetry(), 1);
    let cons: Vec<&dyn crate::Constraint> = p.entries().map(|(c, _)| c).collect();
    let classes = crate::symmetry::classes(&cons, &[true; 5], &obj, &e.st);
    assert_eq!(classes, vec![vec![0, 1]]);
}

#[test]
fn matching_bound_counts_distinct_zones() {
    use crate::{AllDifferentGroup, Problem, Sense};
    let mut p = Problem::new();
    let v: Vec<VarId> = (0..3).map(|i| p.add_var(format!("v{i}"), 5)).collect();
    // Zones 0, 0, 1, 1, 2: the two cheapest values share zone 0.
    let zone: crate::Keys = Arc::from(vec![0, 0, 1, 1, 2]);
    p.add_constraint("diff", AllDifferentGroup::new(v.clone(), vec![zone; 3]));
    let costs: Arc<[f64]> = Arc::from(vec![1.0, 2.0, 10.0, 11.0, 100.0]);
    p.set_objective(
        Sense::Minimize,
        Expr::sum(v.iter().map(|&x| (1.0, Expr::unary(x, costs.clone())))),
    );
    let obj = p.compile().expect("valid");
    let active = vec![true];
    let e = root_engine(&p, &obj, &active);
    let cons: Vec<&dyn crate::Constraint> = p.entries().map(|(c, _)| c).collect();
    let (groups, of_term) = crate::matching::key_groups(&obj, 1.0, &cons, &[0], &[0, 0, 0]);
    assert_eq!(groups.len(), 1);
    assert_eq!(of_term, vec![0, 0, 0]);
    let mut st = e.st;
    let base = st.cells.len() - obj.cells.len();
    // Per-variable minima would say 3; one value per zone costs 1 + 10 + 100.
    assert_eq!(
        crate::matching::group_lb(&groups[0], &obj, &mut st, base),
        111.0
    );
    st.assign(0, 2).expect("in domain");
    assert_eq!(
        crate::matching::group_lb(&groups[0], &obj, &mut st, base),
        111.0
    );
}

/// Records every improvement the search reports.
#[derive(Default)]
struct Recorder(std::sync::Mutex<Vec<(f64, Option<f64>)>>);

impl crate::Progress for Recorder {
    fn improved(&self, best: f64, bound: Option<f64>) {
        self.0.lock().unwrap().push((best, bound));
    }
}

#[test]
fn progress_hears_each_better_plan_ending_at_the_optimum() {
    // Four variables, all different; costs make the greedy order a poor first plan.
    let mut p = crate::Problem::new();
    let vars: Vec<VarId> = (0..4).map(|i| p.add_var(format!("x{i}"), 4)).collect();
    p.add_constraint("alldiff", crate::AllDifferent::new(vars.clone()));
    let costs = [
        [1.0, 2.0, 9.0, 9.0],
        [1.0, 9.0, 2.0, 9.0],
        [1.0, 9.0, 9.0, 2.0],
        [1.0, 3.0, 3.0, 3.0],
    ];
    let terms = vars
        .iter()
        .zip(costs)
        .map(|(&x, c)| (1.0, Expr::unary(x, c.to_vec())));
    p.set_objective(crate::Sense::Minimize, Expr::sum(terms));
    let rec = Arc::new(Recorder::default());
    let opts = crate::SolveOptions {
        progress: Some(rec.clone()),
        ..crate::SolveOptions::default()
    };
    let out = p.solve(&opts).unwrap();
    let best = out.solutions()[0].score;
    let seen = rec.0.lock().unwrap().clone();
    assert!(!seen.is_empty());
    // Strictly better each time, the last one is the answer, no bound above a plan.
    assert!(seen.windows(2).all(|w| w[1].0 < w[0].0), "{seen:?}");
    assert_eq!(seen.last().map(|s| s.0), Some(best));
    assert!(
        seen.iter()
            .all(|&(b, lb)| lb.is_none_or(|lb| lb <= b + 1e-9)),
        "{seen:?}"
    );
    // Without a listener nothing changes.
    let quiet = p.solve(&crate::SolveOptions::default()).unwrap();
    assert_eq!(quiet.solutions()[0].score, best);
}

/// A xorshift source: each call draws a number below its argument.
fn xorshift(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut r = seed | 1;
    move |n: u64| {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        r % n
    }
}

/// A small problem with shared capacity, zone-different pairs and unary costs.
fn contended(seed: u64) -> crate::Problem {
    use crate::{AllDifferentGroup, Capacity, Problem, Sense};
    let mut next = xorshift(seed);
    let mut p = Problem::new();
    let n = 4 + next(3) as usize;
    let m = 3 + next(3) as u32;
    let v: Vec<VarId> = (0..n).map(|i| p.add_var(format!("v{i}"), m)).collect();
    let holder: crate::Keys = (0..m).map(|x| x % 3).collect();
    let zone: crate::Keys = (0..m).map(|x| x % 2).collect();
    let demands = v
        .iter()
        .map(|&x| (x, holder.clone(), vec![1 + next(2) as i64]))
        .collect();
    let caps = (0..3).map(|_| vec![1 + next(3) as i64]).collect();
    p.add_constraint("cap", Capacity::new(1, caps, demands));
    for i in 0..n / 2 {
        let (a, b) = (v[next(n as u64) as usize], v[next(n as u64) as usize]);
        if a != b {
            p.add_constraint(
                format!("zone {i}"),
                AllDifferentGroup::new(vec![a, b], vec![zone.clone(); 2]),
            );
        }
    }
    let terms: Vec<(f64, Expr)> = v
        .iter()
        .map(|&x| {
            let costs: Vec<f64> = (0..m).map(|_| next(20) as f64).collect();
            (1.0, Expr::unary(x, costs))
        })
        .collect();
    p.set_objective(Sense::Minimize, Expr::sum(terms));
    p
}

/// A row's left-hand side on `plan`.
fn taken(row: &crate::Linear, plan: &[Value]) -> f64 {
    row.terms
        .iter()
        .filter(|(x, v, _)| plan[x.index()] == *v)
        .map(|t| t.2)
        .sum()
}

/// Every plan of `p` with its score, by brute force.
fn all_plans(p: &crate::Problem) -> Vec<(f64, Vec<Value>)> {
    let sizes = p.sizes();
    let mut out = Vec::new();
    let mut a = vec![0u32; sizes.len()];
    loop {
        let values: Vec<Value> = a.iter().map(|&v| Value(v)).collect();
        if p.check(&values).is_empty()
            && let Some(e) = p.evaluate(&values)
        {
            out.push((e.score, values));
        }
        let mut i = 0;
        loop {
            if i == a.len() {
                return out;
            }
            a[i] += 1;
            if a[i] < sizes[i] {
                break;
            }
            a[i] = 0;
            i += 1;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Neighbourhood rounds at every node, from the worst plan as incumbent: the search still
    /// ends at the brute-force optimum, and rounds did run.
    #[test]
    fn neighbourhood_rounds_keep_the_optimum(seed in any::<u64>(), lns_seed in any::<u64>()) {
        let p = contended(seed);
        let mut plans = all_plans(&p);
        plans.sort_by(|a, b| a.0.total_cmp(&b.0));
        let obj = p.compile().expect("valid");
        let active = vec![true; p.constraint_count()];
        let cfg = crate::search::RunConfig::whole(&active);
        let mut e = crate::search::Engine::new(&p, &obj, &cfg);
        let root = e.root(&[], false);
        let Some(worst) = plans.last().cloned() else {
            // Infeasible: nothing to improve.
            if root.is_ok() {
                e.dfs(0);
            }
            prop_assert!(e.found.is_empty());
            return Ok(());
        };
        prop_assert!(root.is_ok());
        e.seed(worst.1);
        e.relax_capacity(None);
        e.improve(lns_seed, 1);
        e.dfs(0);
        prop_assert!(e.stats.stopped.is_none());
        let best = e.found.first().map(|f| f.solution.score);
        prop_assert_eq!(best, Some(plans[0].0));
        prop_assert!(e.improve_rounds() > 0 || plans.len() == 1 || e.stats.nodes < 2);
        let values = e.found[0].solution.values.clone();
        prop_assert!(p.check(&values).is_empty());
    }

    /// Two threads sharing the tree from the root, the rounds on the second (their schedule
    /// on one thread never due): the search ends at the brute-force optimum, rounds ran, and
    /// they are back with the search for its next pass.
    #[test]
    fn rounds_beside_a_shared_search_keep_the_optimum(seed in any::<u64>(), lns_seed in any::<u64>()) {
        let p = contended(seed);
        let mut plans = all_plans(&p);
        plans.sort_by(|a, b| a.0.total_cmp(&b.0));
        let Some(worst) = plans.last().cloned() else {
            return Ok(());
        };
        let obj = p.compile().expect("valid");
        let active = vec![true; p.constraint_count()];
        let cfg = crate::search::RunConfig::whole(&active);
        let mut e = crate::search::Engine::new(&p, &obj, &cfg);
        prop_assert!(e.root(&[], false).is_ok());
        e.seed(worst.1);
        e.relax_capacity(None);
        e.improve(lns_seed, u64::MAX / 2);
        let shared = crate::search::Shared::new();
        e.parallel(2, 0, &shared);
        let mark = e.st.mark();
        e.search(mark);
        prop_assert!(e.stats.stopped.is_none());
        prop_assert_eq!(e.found.first().map(|f| f.solution.score), Some(plans[0].0));
        prop_assert!(e.improve_rounds() > 0);
        prop_assert!(p.check(&e.found[0].solution.values).is_empty());
    }
}

/// `contended` with every kind of row the LP bound reads: a pair table, same keys and
/// distinct values on top of the capacity and the distinct zones.
fn linked(seed: u64) -> crate::Problem {
    use crate::{AllDifferent, Pairwise, SameGroup};
    let mut p = contended(seed);
    let sizes = p.sizes();
    let (n, m) = (sizes.len() as u32, sizes[0]);
    let mut next = xorshift(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let table: Vec<bool> = (0..m * m).map(|_| next(3) > 0).collect();
    p.add_constraint("pair", Pairwise::from_table(VarId(0), VarId(1), m, table));
    let group: crate::Keys = (0..m).map(|x| x % 2).collect();
    p.add_constraint(
        "same",
        SameGroup::new(vec![VarId(1), VarId(n - 1)], vec![group.clone(), group]),
    );
    p.add_constraint(
        "apart",
        AllDifferent::new(vec![VarId(0), VarId(2), VarId(3)]),
    );
    p
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, .. ProptestConfig::default() })]

    /// Every row the LP bound builds holds on every plan within the domains it was built on
    /// (all values, or a random part of them): the bound's soundness rests on it.
    #[test]
    fn every_lp_row_holds_on_every_plan(seed in any::<u64>(), cut in any::<u64>()) {
        let p = linked(seed);
        let sizes = p.sizes();
        let mut st = State::new(&sizes, Vec::new());
        let mut next = xorshift(cut);
        for (x, &m) in sizes.iter().enumerate() {
            for v in 0..m {
                if next(4) == 0 && st.size(x as u32) > 1 {
                    st.remove(x as u32, v, WHY).expect("one value stays");
                }
            }
        }
        let active: Vec<u32> = (0..p.constraint_count() as u32).collect();
        let rows = crate::lp::rows(&p, &st, &active).expect("small");
        prop_assert!(!rows.is_empty());
        for (_, plan) in all_plans(&p) {
            if plan.iter().enumerate().any(|(x, v)| !st.contains(x as u32, v.0)) {
                continue;
            }
            for row in &rows {
                let lhs = taken(row, &plan);
                if row.equal {
                    prop_assert!((lhs - row.rhs).abs() < 1e-9, "{row:?} on {plan:?}");
                } else {
                    prop_assert!(lhs <= row.rhs + 1e-9, "{row:?} on {plan:?}");
                }
            }
        }
    }

    /// The root LP's cover cuts hold on every plan, and its bound with them stays at or
    /// below the optimum.
    #[test]
    fn cover_cuts_hold_on_every_plan(seed in any::<u64>()) {
        let p = contended(seed);
        let obj = p.compile().expect("valid");
        let mut st = State::new(&p.sizes(), Vec::new());
        let active: Vec<u32> = (0..p.constraint_count() as u32).collect();
        let time = std::time::Duration::from_secs(10);
        let Some((lag, cuts)) = crate::lp::relax(&p, &obj, &st, &active, None, time) else {
            return Ok(());
        };
        let plans = all_plans(&p);
        for row in &cuts {
            prop_assert!(!row.equal);
            for (_, plan) in &plans {
                let lhs = taken(row, plan);
                prop_assert!(lhs <= row.rhs + 1e-9, "{row:?} on {plan:?}");
            }
        }
        let best = plans.iter().map(|t| t.0).fold(f64::INFINITY, f64::min);
        let lb = lag.bound(&mut st);
        prop_assert!(lb <= best + 1e-6, "bound {lb} above the optimum {best}");
    }

    /// A node LP's multipliers bound every plan at and below the node they were solved at,
    /// their reduced costs drop no value of a plan cheaper than the limit, and they refuse
    /// domains holding values the node did not.
    #[test]
    fn a_node_lp_bounds_every_plan_below_its_node(seed in any::<u64>(), cut in any::<u64>()) {
        let p = linked(seed);
        let obj = p.compile().expect("valid");
        let sizes = p.sizes();
        let mut st = State::new(&sizes, Vec::new());
        let mut next = xorshift(cut);
        let mut remove = |st: &mut State, odds: u64| {
            for (x, &m) in sizes.iter().enumerate() {
                for v in 0..m {
                    if next(odds) == 0 && st.size(x as u32) > 1 && st.contains(x as u32, v) {
                        st.remove(x as u32, v, WHY).expect("one value stays");
                    }
                }
            }
        };
        remove(&mut st, 5);
        let active: Vec<u32> = (0..p.constraint_count() as u32).collect();
        let (base, others) = crate::lagrange::unary_costs(&p, &obj, &st).expect("unary costs");
        prop_assert!(others.is_empty());
        let Some(lp) = crate::lp::Relaxation::new(&p, &st, &active, base, &[]) else {
            return Ok(());
        };
        let Some((dual, _)) = lp.node(&st, std::time::Duration::from_secs(10), f64::INFINITY)
        else {
            return Ok(());
        };
        let mark = st.mark();
        remove(&mut st, 3);
        let within = |st: &State, plan: &[Value]| {
            plan.iter().enumerate().all(|(x, v)| st.contains(x as u32, v.0))
        };
        let plans: Vec<(f64, Vec<Value>)> =
            all_plans(&p).into_iter().filter(|(_, plan)| within(&st, plan)).collect();
        let limit = plans.iter().map(|t| t.0).fold(f64::INFINITY, f64::min) + 3.0;
        let (lb, drop) = dual.filter(&st, limit).expect("a finite bound below its node");
        for (cost, plan) in &plans {
            prop_assert!(lb <= cost + 1e-6, "bound {lb} above a plan of {cost}");
            if *cost < limit - 1e-6 {
                for &(x, v) in &drop {
                    prop_assert!(plan[x as usize].0 != v, "dropped {x}={v} of a plan of {cost}");
                }
            }
        }
        // Above the node: a value it did not hold, and the costs cannot bound.
        st.undo_to(mark);
        let wider = (0..sizes.len() as u32).any(|x| st.size(x) < sizes[x as usize]);
        let full = State::new(&sizes, Vec::new());
        prop_assert_eq!(dual.filter(&full, limit).is_none(), wider);
    }

    /// A node LP's bound is the LP optimum of its node, deep nodes too (most variables
    /// assigned, so they leave the LP): judged against the primal LP, solved directly.
    #[test]
    fn a_node_lp_bound_is_the_lp_optimum(seed in any::<u64>(), cut in any::<u64>()) {
        let p = linked(seed);
        let obj = p.compile().expect("valid");
        let sizes = p.sizes();
        let mut st = State::new(&sizes, Vec::new());
        let mut next = xorshift(cut);
        for (x, &m) in sizes.iter().enumerate() {
            // Half the variables get one value, the others lose some.
            let keep = (next(2) == 0).then(|| next(u64::from(m)) as u32);
            for v in 0..m {
                let drop = keep.map_or(next(4) == 0, |k| v != k);
                if drop && st.size(x as u32) > 1 && st.contains(x as u32, v) {
                    st.remove(x as u32, v, WHY).expect("one value stays");
                }
            }
        }
        let active: Vec<u32> = (0..p.constraint_count() as u32).collect();
        let (base, _) = crate::lagrange::unary_costs(&p, &obj, &st).expect("unary costs");
        let rows = crate::lp::rows(&p, &st, &active).expect("small");
        let domains: Vec<Vec<u32>> = (0..sizes.len() as u32)
            .map(|x| st.values(x).map(|v| v.0).collect())
            .collect();
        let Ok(optimum) = lp_over(&base, &domains, &rows) else {
            // An infeasible LP: no bound to compare.
            return Ok(());
        };
        let lp = crate::lp::Relaxation::new(&p, &st, &active, base, &[]).expect("rows and costs");
        let (dual, _) = lp
            .node(&st, std::time::Duration::from_secs(10), f64::INFINITY)
            .expect("a feasible LP has a finite bound");
        prop_assert!(
            (dual.lb - optimum).abs() <= 1e-6 * optimum.abs().max(1.0),
            "node bound {} against the LP optimum {optimum}", dual.lb
        );
    }
}

/// The LP over the columns `cols` (per variable) with the unary costs `base` and `rows`
/// (their terms on other values left out), solved directly: its optimum, or why it has none
/// (infeasible, unbounded).
fn lp_over(
    base: &[Vec<f64>],
    cols: &[Vec<u32>],
    rows: &[crate::Linear],
) -> Result<f64, microlp::Error> {
    use microlp::{ComparisonOp, OptimizationDirection};
    let mut primal = microlp::Problem::new(OptimizationDirection::Minimize);
    let y: Vec<Vec<(u32, microlp::Variable)>> = cols
        .iter()
        .enumerate()
        .map(|(x, vs)| {
            vs.iter()
                .map(|&v| {
                    let c = base[x].get(v as usize).copied().unwrap_or(0.0);
                    (v, primal.add_var(c, (0.0, 1.0)))
                })
                .collect()
        })
        .collect();
    for vars in &y {
        let ones: Vec<_> = vars.iter().map(|t| (t.1, 1.0)).collect();
        primal.add_constraint(ones.as_slice(), ComparisonOp::Eq, 1.0);
    }
    for row in rows {
        let terms: Vec<_> = row
            .terms
            .iter()
            .filter_map(|&(x, v, a)| y[x.index()].iter().find(|t| t.0 == v.0).map(|t| (t.1, a)))
            .collect();
        let op = if row.equal {
            ComparisonOp::Eq
        } else {
            ComparisonOp::Le
        };
        primal.add_constraint(terms.as_slice(), op, row.rhs);
    }
    let solved = primal.solve()?;
    Ok(solved.solution().expect("a solution").objective())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, .. ProptestConfig::default() })]

    /// Column generation builds only the rows its columns need: over any columns, the LP
    /// with those rows has the optimum of the LP with every row.
    #[test]
    fn rows_about_the_columns_give_the_lp_of_every_row(seed in any::<u64>(), cut in any::<u64>()) {
        let p = linked(seed);
        let obj = p.compile().expect("valid");
        let sizes = p.sizes();
        let st = State::new(&sizes, Vec::new());
        let mut next = xorshift(cut);
        let cols: Vec<Vec<u32>> = sizes
            .iter()
            .map(|&m| {
                let mut c: Vec<u32> = (0..m).filter(|_| next(3) > 0).collect();
                if c.is_empty() {
                    c.push(next(u64::from(m)) as u32);
                }
                c
            })
            .collect();
        let active: Vec<u32> = (0..p.constraint_count() as u32).collect();
        let (base, _) = crate::lagrange::unary_costs(&p, &obj, &st).expect("unary costs");
        let every = crate::lp::rows(&p, &st, &active).expect("small");
        let about = crate::lp::rows_about(&p, &st, &active, Some(&cols)).expect("small");
        // The problem's costs, then random ones: other vertices, other binding rows.
        let mut costs = vec![base];
        for _ in 0..8 {
            costs.push(
                sizes
                    .iter()
                    .map(|&m| (0..m).map(|_| next(41) as f64 - 20.0).collect())
                    .collect(),
            );
        }
        for c in &costs {
            match (lp_over(c, &cols, &every).ok(), lp_over(c, &cols, &about).ok()) {
                (Some(a), Some(b)) => {
                    prop_assert!((a - b).abs() <= 1e-6 * a.abs().max(1.0), "{a} against {b}");
                }
                (a, b) => prop_assert_eq!(a, b),
            }
        }
    }
}

/// Whole-number costs are recognised only where every plan's cost is provably whole.
#[test]
fn integral_objectives_are_recognised() {
    let whole: Arc<[f64]> = Arc::from(vec![3.0, 1.0, 2.0]);
    let half: Arc<[f64]> = Arc::from(vec![3.0, 1.5, 2.0]);
    let u = |x: u32, t: &Arc<[f64]>| Expr::unary(VarId(x), t.clone());
    let integral = |e: &Expr| Compiled::new(e, 1.0, &[3, 3]).expect("valid").integral();
    assert!(integral(&Expr::sum([
        (1.0, u(0, &whole)),
        (-2.0, u(1, &whole))
    ])));
    assert!(integral(&Expr::Min(vec![u(0, &whole), Expr::Const(4.0)])));
    assert!(integral(&Expr::Max(vec![u(0, &whole), u(1, &whole)])));
    assert!(!integral(&Expr::sum([
        (0.5, u(0, &whole)),
        (1.0, u(1, &whole))
    ])));
    assert!(!integral(&Expr::sum([
        (1.0, u(0, &half)),
        (1.0, u(1, &whole))
    ])));
    assert!(!integral(&Expr::Min(vec![u(0, &whole), Expr::Const(0.25)])));
    assert!(!integral(&u(0, &whole).normalize(0.0, 3.0)));
    assert!(!integral(&Expr::Product(vec![u(0, &whole), u(1, &whole)])));
    // A pair function's values are not known, even when they happen to be whole.
    let pair = Expr::pair(VarId(0), VarId(1), 0.0, 4.0, |a: Value, b: Value| {
        f64::from(a.0 + b.0)
    });
    assert!(!integral(&pair));
}

/// Two components: five variables pairwise different over four values (no plan, found only
/// by search), then five over a wide domain, all different.
fn hopeless_then_easy() -> crate::Problem {
    use crate::{AllDifferent, Pairwise, Sense};
    let mut p = crate::Problem::new();
    let tight: Vec<VarId> = (0..5).map(|i| p.add_var(format!("t{i}"), 4)).collect();
    let wide: Vec<VarId> = (0..5).map(|i| p.add_var(format!("w{i}"), 20)).collect();
    for i in 0..5 {
        for j in i + 1..5 {
            p.add_constraint("differ", Pairwise::new(tight[i], tight[j], |a, b| a != b));
        }
    }
    p.add_constraint("all different", AllDifferent::new(wide.clone()));
    // Each wide variable is cheapest on a value of its own: its search is one dive.
    let terms = tight
        .iter()
        .map(|&x| (1.0, Expr::unary(x, vec![0.0, 1.0, 2.0, 3.0])))
        .chain(wide.iter().enumerate().map(|(i, &x)| {
            let costs: Vec<f64> = (0..20).map(|v| if v == i { 0.0 } else { 1.0 }).collect();
            (1.0, Expr::unary(x, costs))
        }))
        .collect::<Vec<_>>();
    p.set_objective(Sense::Minimize, Expr::sum(terms));
    p
}

/// A pass for a seed alone ends at the first component it leaves without a plan, whether
/// it ran out of nodes or proved there is none; a pass for bounds goes on to the next.
#[test]
fn a_seeding_pass_stops_at_the_first_unsolved_component() {
    let p = hopeless_then_easy();
    let obj = p.compile().expect("valid");
    let opts = crate::SolveOptions::default();
    // (seed only, node budget, the first component's optimum, the second's). The first
    // proves it has no plan in 17 nodes, the second is one dive of 6; each gets a fair share
    // of what is left of the budget (40: 20 nodes first; 16: 8, and it stops unsolved).
    let cases = [
        (false, 40, Some(f64::INFINITY), Some(0.0)),
        (true, 40, Some(f64::INFINITY), None),
        (false, 16, None, Some(0.0)),
        (true, 16, None, None),
    ];
    for (seed_only, budget, first, second) in cases {
        let mut comps = crate::decompose::analyze(&p, &obj).expect("two components");
        assert_eq!(comps.list.len(), 2);
        assert_eq!(comps.list[0].vars, vec![0, 1, 2, 3, 4]);
        let mut stats = crate::Stats::default();
        let plan = crate::combine::solve_components(
            &p,
            &obj,
            &mut comps,
            &[],
            &opts,
            budget,
            seed_only,
            &mut stats,
        );
        assert_eq!(plan, None);
        let optima: Vec<Option<f64>> = comps.list.iter().map(|c| c.opt).collect();
        assert_eq!(
            optima,
            vec![first, second],
            "seed only {seed_only}, budget {budget}"
        );
    }
}

/// The LP takes 3/4 of a 16-vCPU demand onto a 16-vCPU holder beside a whole 4-vCPU one
/// (bound 2.5); the cover cut "not both there" lifts the root bound to the optimum, 10.
#[test]
fn a_cover_cut_lifts_the_bound_of_a_split_demand() {
    use crate::{Capacity, Problem, Sense};
    let mut p = Problem::new();
    let big = p.add_var("big", 2);
    let small = p.add_var("small", 2);
    let holder: crate::Keys = vec![0, 1].into();
    p.add_constraint(
        "cap",
        Capacity::new(
            1,
            vec![vec![16], vec![100]],
            vec![(big, holder.clone(), vec![16]), (small, holder, vec![4])],
        ),
    );
    p.set_objective(
        Sense::Minimize,
        Expr::sum(vec![
            (1.0, Expr::unary(big, vec![0.0, 10.0])),
            (1.0, Expr::unary(small, vec![0.0, 10.0])),
        ]),
    );
    let obj = p.compile().expect("valid");
    let mut st = State::new(&p.sizes(), Vec::new());
    let active = vec![0];
    let time = std::time::Duration::from_secs(10);
    let (base, _) = crate::lagrange::unary_costs(&p, &obj, &st).expect("unary costs");
    let plain = crate::lp::Relaxation::new(&p, &st, &active, base, &[]).expect("a row");
    let (dual, _) = plain.node(&st, time, f64::INFINITY).expect("a bound");
    assert!((dual.lb - 2.5).abs() < 1e-6, "without cuts: {}", dual.lb);
    let (lag, cuts) = crate::lp::relax(&p, &obj, &st, &active, None, time).expect("the LP");
    assert_eq!(cuts.len(), 1, "{cuts:?}");
    let mut terms: Vec<(u32, u32, f64)> =
        cuts[0].terms.iter().map(|t| (t.0.0, t.1.0, t.2)).collect();
    terms.sort_by_key(|t| (t.0, t.1));
    assert_eq!(terms, vec![(0, 0, 1.0), (1, 0, 1.0)]);
    assert_eq!(cuts[0].rhs, 1.0);
    let lb = lag.bound(&mut st);
    assert!((lb - 10.0).abs() < 1e-6, "with the cut: {lb}");
}

/// A cover is grown from the columns the LP point takes most per unit of weight, made
/// minimal, and extended by every column as heavy as its heaviest; a point it does not
/// cut off gives nothing.
#[test]
fn a_cover_cut_is_minimal_and_extended() {
    use crate::{Linear, Value};
    let row = Linear {
        terms: vec![
            (VarId(0), Value(0), 8.0),
            (VarId(1), Value(0), 8.0),
            (VarId(2), Value(0), 4.0),
            (VarId(3), Value(0), 8.0),
        ],
        rhs: 16.0,
        equal: false,
    };
    let point = [0.9, 0.9, 0.6, 0.0];
    let cuts = crate::lp::covers(std::slice::from_ref(&row), |x, _| point[x.index()]);
    assert_eq!(cuts.len(), 1);
    let vars: Vec<u32> = cuts[0].terms.iter().map(|t| t.0.0).collect();
    // {0, 1, 2} overfills by 4 and takes 2.4 > 2; variable 3 weighs as much as the heaviest.
    assert_eq!(vars, vec![0, 1, 2, 3]);
    assert_eq!(cuts[0].rhs, 2.0);
    let within = [0.5, 0.5, 1.0, 0.0];
    assert!(crate::lp::covers(&[row], |x, _| within[x.index()]).is_empty());
}

proptest! {
    /// The joint bound of pair terms with their variables' unary costs (at multipliers 0, so
    /// over every assignment in the domains), cut at any budget of evaluations, never exceeds
    /// the cost of an assignment; the values its filter removes belong to none cheaper than
    /// the limit.
    #[test]
    fn joint_pair_bounds_are_admissible(seed in any::<u64>(), budget in 0u32..6, maximize in any::<bool>(), cut in 0u64..20) {
        use crate::{Problem, Sense};
        let mut next = xorshift(seed);
        let (n, m) = (4usize, 4u32);
        let weights = [1.0, 2.0, -1.0, 0.5];
        let mut terms = Vec::new();
        for x in 0..n as u32 {
            if next(5) > 0 {
                let costs: Vec<f64> = (0..m).map(|_| next(10) as f64).collect();
                terms.push((weights[next(4) as usize], Expr::unary(VarId(x), costs)));
            }
        }
        let mut first = None;
        for _ in 0..1 + next(3) {
            let a = next(n as u64) as u32;
            let b = (a + 1 + next(n as u64 - 1) as u32) % n as u32;
            let table: Vec<f64> = (0..m * m).map(|_| next(10) as f64).collect();
            terms.push((weights[next(4) as usize], Expr::pair_table(VarId(a), VarId(b), m, table)));
            first = first.or(Some((a as usize, b as usize)));
        }
        let e = Expr::sum(terms);
        let mut p = Problem::new();
        for x in 0..n {
            p.add_var(format!("v{x}"), m);
        }
        p.set_objective(if maximize { Sense::Maximize } else { Sense::Minimize }, e);
        let sign = p.sign();
        let c = p.compile().expect("valid");
        let mut st = State::new(&[m; 4], c.cells.clone());
        for _ in 0..next(6) {
            let (x, v) = (next(n as u64) as u32, next(u64::from(m)) as u32);
            if st.size(x) > 1 {
                let _ = st.remove(x, v, WHY);
            }
        }
        if next(3) == 0 {
            let x = next(n as u64) as u32;
            let v = st.values(x).next().expect("a value").0;
            let _ = st.assign(x, v);
        }
        let (base, others) = crate::lagrange::unary_costs(&p, &c, &st).expect("a sum");
        let vars: Vec<u32> = (0..n as u32).filter(|&x| !base[x as usize].is_empty()).collect();
        let adj = vars.iter().map(|&x| base[x as usize].clone()).collect();
        let domains = vars.iter().map(|&x| st.values(x).map(|v| v.0).collect()).collect();
        let mut lag = crate::lagrange::Lagrange::new(vars, adj, domains, 0.0, others);
        lag.pair_up(&c, sign);
        lag.joint_budget = budget;
        let root = c.root_terms().expect("a sum").to_vec();
        let others_lb: f64 = lag.alone().map(|t| c.term_lb(root[t].0, root[t].1, &mut st, 0)).sum();
        let lb = lag.bound(&mut st) + others_lb;
        // Every assignment in the domains, with its minimized cost.
        let doms: Vec<Vec<Value>> = (0..n as u32).map(|x| st.values(x).collect()).collect();
        let mut plans = Vec::new();
        for a in &doms[0] { for b in &doms[1] { for d in &doms[2] { for f in &doms[3] {
            let values = [Some(*a), Some(*b), Some(*d), Some(*f)];
            plans.push((sign * c.eval(&values), [a.0, b.0, d.0, f.0]));
        }}}}
        let best = plans.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
        prop_assert!(lb <= best + 1e-9, "bound {lb} above the best {best} (budget {budget})");
        // The first pair term is bounded jointly when both its variables have unary costs.
        if let Some((a, b)) = first && !base[a].is_empty() && !base[b].is_empty() {
            prop_assert!(lag.joints() > 0);
        }
        let limit = lb + cut as f64;
        for (x, v) in lag.filter(&mut st, lb, limit) {
            for (cost, a) in &plans {
                prop_assert!(a[x as usize] != v || *cost >= limit - 1e-9, "v{x} = {v} removed, yet {a:?} costs {cost} < {limit}");
            }
        }
    }

    /// Variables in several pair terms (a star on `v0` and a chain, up to five terms on four
    /// variables, each variable's adjusted cost shared out between its joints), with root
    /// marginals cut at any budget and removals and an assignment after them (the search
    /// below the root): every pair term is bounded jointly, the bound never exceeds the cost
    /// of an assignment, and the values the filter removes belong to none cheaper than the
    /// limit.
    #[test]
    fn shared_joint_pair_bounds_are_admissible(seed in any::<u64>(), budget in 0u32..6, marginal in 0u64..12, maximize in any::<bool>(), cut in 0u64..20) {
        use crate::{Problem, Sense};
        let mut next = xorshift(seed);
        let (n, m) = (4usize, 4u32);
        let weights = [1.0, 2.0, -1.0, 0.5];
        let mut terms = Vec::new();
        for x in 0..n as u32 {
            let costs: Vec<f64> = (0..m).map(|_| next(10) as f64).collect();
            terms.push((weights[next(4) as usize], Expr::unary(VarId(x), costs)));
        }
        let pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (2, 3)];
        let count = 2 + next(4) as usize;
        for &(a, b) in &pairs[..count] {
            let table: Vec<f64> = (0..m * m).map(|_| next(10) as f64).collect();
            terms.push((weights[next(4) as usize], Expr::pair_table(VarId(a), VarId(b), m, table)));
        }
        let e = Expr::sum(terms);
        let mut p = Problem::new();
        for x in 0..n {
            p.add_var(format!("v{x}"), m);
        }
        p.set_objective(if maximize { Sense::Maximize } else { Sense::Minimize }, e);
        let sign = p.sign();
        let c = p.compile().expect("valid");
        let mut st = State::new(&[m; 4], c.cells.clone());
        // Root removals, seen by the marginals.
        for _ in 0..next(4) {
            let (x, v) = (next(n as u64) as u32, next(u64::from(m)) as u32);
            if st.size(x) > 1 {
                let _ = st.remove(x, v, WHY);
            }
        }
        let (base, others) = crate::lagrange::unary_costs(&p, &c, &st).expect("a sum");
        let vars: Vec<u32> = (0..n as u32).collect();
        let adj = vars.iter().map(|&x| base[x as usize].clone()).collect();
        let domains = vars.iter().map(|&x| st.values(x).map(|v| v.0).collect()).collect();
        let mut lag = crate::lagrange::Lagrange::new(vars, adj, domains, 0.0, others);
        lag.marginal_budget = marginal;
        lag.pair_up(&c, sign);
        lag.joint_budget = budget;
        prop_assert_eq!(lag.joints(), count);
        // Below the root: more removals, now and then an assignment.
        for _ in 0..next(4) {
            let (x, v) = (next(n as u64) as u32, next(u64::from(m)) as u32);
            if st.size(x) > 1 {
                let _ = st.remove(x, v, WHY);
            }
        }
        if next(2) == 0 {
            let x = next(n as u64) as u32;
            let v = st.values(x).next().expect("a value").0;
            let _ = st.assign(x, v);
        }
        let root = c.root_terms().expect("a sum").to_vec();
        let others_lb: f64 = lag.alone().map(|t| c.term_lb(root[t].0, root[t].1, &mut st, 0)).sum();
        let lb = lag.bound(&mut st) + others_lb;
        let doms: Vec<Vec<Value>> = (0..n as u32).map(|x| st.values(x).collect()).collect();
        let mut plans = Vec::new();
        for a in &doms[0] { for b in &doms[1] { for d in &doms[2] { for f in &doms[3] {
            let values = [Some(*a), Some(*b), Some(*d), Some(*f)];
            plans.push((sign * c.eval(&values), [a.0, b.0, d.0, f.0]));
        }}}}
        let best = plans.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
        prop_assert!(lb <= best + 1e-9, "bound {lb} above the best {best} (budgets {budget}, {marginal})");
        let limit = lb + cut as f64;
        for (x, v) in lag.filter(&mut st, lb, limit) {
            for (cost, a) in &plans {
                prop_assert!(a[x as usize] != v || *cost >= limit - 1e-9, "v{x} = {v} removed, yet {a:?} costs {cost} < {limit}");
            }
        }
    }
}

/// `linked` with its objective replaced by unary costs and one to three pair tables between
/// distinct variables (weights of either sign), minimized or maximized: the root LP then
/// takes the pair terms in as transportation rows.
fn paired(seed: u64, maximize: bool) -> (crate::Problem, usize) {
    use crate::Sense;
    let mut p = linked(seed);
    let sizes = p.sizes();
    let (n, m) = (sizes.len() as u64, sizes[0]);
    let mut next = xorshift(seed ^ 0x7061_6972);
    let weights = [1.0, 3.0, -1.0, 0.5];
    let mut terms: Vec<(f64, Expr)> = (0..n as u32)
        .map(|x| {
            let costs: Vec<f64> = (0..m).map(|_| next(20) as f64).collect();
            (1.0, Expr::unary(VarId(x), costs))
        })
        .collect();
    let count = 1 + next(3) as usize;
    for _ in 0..count {
        let a = next(n) as u32;
        let b = (a + 1 + next(n - 1) as u32) % n as u32;
        let table: Vec<f64> = (0..m * m).map(|_| next(15) as f64).collect();
        terms.push((
            weights[next(4) as usize],
            Expr::pair_table(VarId(a), VarId(b), m, table),
        ));
    }
    let sense = if maximize {
        Sense::Maximize
    } else {
        Sense::Minimize
    };
    p.set_objective(sense, Expr::sum(terms));
    (p, count)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// The root LP with the objective's pair terms in it (from the whole domains, or from a
    /// few columns and an incumbent), each term left as its residual cost: the bound with
    /// the residuals' joints never exceeds the cost of a plan, at the root or below it, nor
    /// does the bound of a node LP below it with the pair terms in it, and the filter drops
    /// no value of a plan cheaper than the limit.
    #[test]
    fn a_root_lp_with_pair_terms_bounds_every_plan(
        seed in any::<u64>(),
        cut in any::<u64>(),
        maximize in any::<bool>(),
        incumbent in any::<bool>(),
        above in 0u64..20,
    ) {
        let (p, count) = paired(seed, maximize);
        let obj = p.compile().expect("valid");
        let sign = p.sign();
        let sizes = p.sizes();
        let mut st = State::new(&sizes, obj.cells.clone());
        let mut next = xorshift(cut);
        let mut remove = |st: &mut State, odds: u64| {
            for (x, &m) in sizes.iter().enumerate() {
                for v in 0..m {
                    if next(odds) == 0 && st.size(x as u32) > 1 && st.contains(x as u32, v) {
                        st.remove(x as u32, v, WHY).expect("one value stays");
                    }
                }
            }
        };
        remove(&mut st, 5);
        let within = |st: &State, plan: &[Value]| {
            plan.iter().enumerate().all(|(x, v)| st.contains(x as u32, v.0))
        };
        let plans: Vec<(f64, Vec<Value>)> = all_plans(&p)
            .into_iter()
            .filter(|(_, plan)| within(&st, plan))
            .map(|(score, plan)| (sign * score, plan))
            .collect();
        let start = plans.get(seed as usize % plans.len().max(1)).filter(|_| incumbent);
        let active: Vec<u32> = (0..p.constraint_count() as u32).collect();
        let time = std::time::Duration::from_secs(10);
        let relaxed = crate::lp::relax(&p, &obj, &st, &active, start.map(|s| s.1.as_slice()), time);
        let Some((mut lag, cuts)) = relaxed else {
            return Ok(());
        };
        prop_assert_eq!(lag.absorbed(), count);
        lag.pair_up(&obj, sign);
        let root = obj.root_terms().expect("a sum").to_vec();
        let lb = |st: &mut State| {
            let alone: f64 = lag.alone().map(|t| obj.term_lb(root[t].0, root[t].1, st, 0)).sum();
            lag.bound(st) + alone
        };
        let best = plans.iter().map(|t| t.0).fold(f64::INFINITY, f64::min);
        let at_root = lb(&mut st);
        prop_assert!(at_root <= best + 1e-6, "root bound {at_root} above the optimum {best}");
        // Below the root: more removals, now and then an assignment.
        remove(&mut st, 3);
        if next(2) == 0 {
            let x = next(sizes.len() as u64) as u32;
            let v = st.values(x).next().expect("a value").0;
            let _ = st.assign(x, v);
        }
        let below = lb(&mut st);
        let limit = below + above as f64;
        let drop = lag.filter(&mut st, below, limit);
        // A node LP with the absorbed pair terms in it, plus the other terms' own bounds
        // (what the search's node LPs count).
        let (base, _) = crate::lagrange::unary_costs(&p, &obj, &st).expect("unary costs");
        let terms = lag.absorbed_terms();
        let node = crate::lp::Relaxation::with_pairs(&p, &obj, &st, &active, base, &cuts, &terms)
            .and_then(|lp| lp.node(&st, time, f64::INFINITY))
            .map(|(dual, _)| dual.lb);
        let others: f64 = lag
            .others
            .iter()
            .filter(|&&t| !lag.absorbs(t))
            .map(|&t| obj.term_lb(root[t].0, root[t].1, &mut st, 0))
            .sum();
        for (cost, plan) in plans.iter().filter(|(_, plan)| within(&st, plan)) {
            prop_assert!(below <= cost + 1e-6, "bound {below} above a plan of {cost}");
            if let Some(n) = node {
                prop_assert!(n + others <= cost + 1e-6, "node LP {n} + others {others} above a plan of {cost}");
            }
            for &(x, v) in &drop {
                prop_assert!(plan[x as usize].0 != v || *cost >= limit - 1e-9, "dropped {x}={v} of a plan of {cost} < {limit}");
            }
        }
    }
}
