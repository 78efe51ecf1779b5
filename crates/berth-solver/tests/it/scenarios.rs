//! Scenario tests: the HAS counter-example, explanations and triage as text, limits, errors.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use berth_solver::{
    AllDifferentGroup, AtMostCount, Capacity, Deadline, Expr, Filter, Outcome, Pairwise, Problem,
    SameGroup, Sense, SolveError, SolveOptions, StopReason, Value, VarId,
};
use expect_test::expect;

fn labels(names: &[&str]) -> Arc<[String]> {
    names.iter().map(|s| s.to_string()).collect()
}

/// HAS's fit-first search takes vG's nearest candidate (complex A, 100 km) and is then stuck
/// with vGMux's only complex-A candidate (467 km): 567 km. Both in complex B cost 222 km.
#[test]
fn has_counter_example_finds_222() {
    let mut p = Problem::new();
    let cands = labels(&["a-site", "b-site"]);
    let vg = p.add_var_labeled("vG", cands.clone());
    let mux = p.add_var_labeled("vGMux", cands);
    let complex: Arc<[u32]> = Arc::from(vec![0, 1]);
    p.add_constraint(
        "zone same complex",
        SameGroup::new(vec![vg, mux], vec![complex.clone(), complex]),
    );
    p.set_objective(
        Sense::Minimize,
        Expr::sum([
            (1.0, Expr::unary(vg, vec![100.0, 111.0])),
            (1.0, Expr::unary(mux, vec![467.0, 111.0])),
        ]),
    );
    let out = p
        .solve(&SolveOptions {
            solutions: 2,
            ..SolveOptions::default()
        })
        .expect("valid problem");
    let Outcome::Solved {
        solutions, optimal, ..
    } = out
    else {
        panic!("expected a plan, got {out:?}")
    };
    assert!(optimal);
    assert_eq!(solutions[0].score, 222.0);
    assert_eq!(solutions[0].values, vec![Value(1), Value(1)]);
    assert_eq!(solutions[1].score, 567.0);
}

fn infeasible_problem() -> Problem {
    let mut p = Problem::new();
    let hosts = labels(&["h1", "h2", "h3"]);
    let a = p.add_var_labeled("web", hosts.clone());
    let b = p.add_var_labeled("db", hosts.clone());
    let c = p.add_var_labeled("cache", hosts);
    p.add_constraint("web not on h3", Filter::forbid(a, [Value(2)]));
    p.add_constraint("db not on h3", Filter::forbid(b, [Value(2)]));
    p.add_constraint("cache on h3 only", Filter::forbid(c, [Value(0), Value(1)]));
    // Zones: h1 and h2 are zone 0, h3 zone 1: web and db cannot be in different zones.
    let zone: Arc<[u32]> = Arc::from(vec![0, 0, 1]);
    p.add_constraint(
        "web/db zone different",
        AllDifferentGroup::new(vec![a, b], vec![zone.clone(), zone]),
    );
    p.add_constraint(
        "web/cache latency",
        Pairwise::new(a, c, |x, y| x.0 + y.0 <= 3),
    );
    p
}

#[test]
fn infeasible_explains_with_a_minimal_conflict() {
    let p = infeasible_problem();
    let out = p.solve(&SolveOptions::default()).expect("valid problem");
    let Outcome::Infeasible { explanation, .. } = out else {
        panic!("expected infeasible, got {out:?}")
    };
    // Two minimal conflicts exist (web/db both in zone 0; cache on h3 pulls web into zone 0
    // and leaves db nowhere); deletion in constraint order keeps the later one.
    assert!(explanation.minimal);
    expect![[r#"
        no plan: db not on h3, cache on h3 only, web/db zone different, web/cache latency together leave no plan
    "#]]
    .assert_eq(&p.render_explanation(&explanation));
}

#[test]
fn wiped_out_variable_is_explained_by_its_removals() {
    let mut p = Problem::new();
    let hosts = labels(&["h1", "h2", "h3"]);
    let a = p.add_var_labeled("web", hosts.clone());
    let lic = p.add_var_labeled("db", hosts);
    p.add_constraint("web on h1 or h2", Filter::forbid(a, [Value(2)]));
    p.add_constraint(
        "db needs 4 cpu",
        Capacity::new(
            1,
            vec![vec![2], vec![2], vec![8]],
            vec![(lic, Arc::from(vec![0, 1, 2]), vec![4])],
        ),
    );
    p.add_constraint(
        "no license on h3",
        AtMostCount::new(vec![lic], vec![Arc::from(vec![false, false, true])], 0),
    );
    let out = p.solve(&SolveOptions::default()).expect("valid problem");
    let Outcome::Infeasible { explanation, .. } = out else {
        panic!("expected infeasible, got {out:?}")
    };
    assert_eq!(explanation.wiped_out, Some(VarId(1)));
    expect![[r#"
        no plan: db needs 4 cpu, no license on h3 together leave no plan
        db has no candidate left:
          h1 by db needs 4 cpu
          h2 by db needs 4 cpu
          h3 by no license on h3
    "#]]
    .assert_eq(&p.render_explanation(&explanation));
    expect![[r#"
        web: 1 of 3 candidates removed
          h3 by web on h1 or h2
        db: 3 of 3 candidates removed
          h1 by db needs 4 cpu
          h2 by db needs 4 cpu
          h3 by no license on h3
    "#]]
    .assert_eq(&p.render_triage(&explanation.triage));
}

#[test]
fn triage_of_a_solved_problem_names_every_removal() {
    let mut p = Problem::new();
    let hosts = labels(&["h1", "h2", "h3", "h4"]);
    let a = p.add_var_labeled("web", hosts.clone());
    let b = p.add_var_labeled("db", hosts);
    p.add_constraint("web ram >= 8", Filter::forbid(a, [Value(0), Value(1)]));
    p.add_constraint(
        "db near web",
        Pairwise::new(a, b, |x, y| x.0.abs_diff(y.0) <= 1),
    );
    p.add_constraint("db not h4", Filter::forbid(b, [Value(3)]));
    let out = p.solve(&SolveOptions::default()).expect("valid problem");
    let Outcome::Solved { triage, .. } = out else {
        panic!("expected a plan, got {out:?}")
    };
    expect![[r#"
        web: 2 of 4 candidates removed
          h1 by web ram >= 8
          h2 by web ram >= 8
        db: 2 of 4 candidates removed
          h1 by db near web
          h4 by db not h4
    "#]]
    .assert_eq(&p.render_triage(&triage));
}

/// A deadline that expires after a number of checks: deterministic, no clock.
struct AfterChecks(AtomicU32);

impl Deadline for AfterChecks {
    fn expired(&self) -> bool {
        self.0.fetch_sub(1, Ordering::SeqCst) == 0
    }
}

fn big_problem() -> Problem {
    problem_of(14)
}

/// `n` demands placed on `hosts` hosts of capacity `cap` each, demands of 1 to 4, with
/// scattered costs.
fn packing(n: u32, hosts: u32, cap: i64) -> Problem {
    let mut p = Problem::new();
    let holder: Arc<[u32]> = Arc::from((0..hosts).collect::<Vec<_>>());
    let vars: Vec<VarId> = (0..n).map(|i| p.add_var(format!("d{i}"), hosts)).collect();
    p.add_constraint(
        "capacity",
        Capacity::new(
            1,
            vec![vec![cap]; hosts as usize],
            vars.iter()
                .enumerate()
                .map(|(i, &x)| (x, holder.clone(), vec![1 + (i as i64 * 7) % 4]))
                .collect(),
        ),
    );
    let terms = vars.iter().enumerate().map(|(i, &x)| {
        let costs: Vec<f64> = (0..hosts as usize)
            .map(|h| ((h * h * 13 + i * 7 + h * i * 3) % 29) as f64)
            .collect();
        (1.0, Expr::unary(x, costs))
    });
    p.set_objective(Sense::Minimize, Expr::sum(terms.collect::<Vec<_>>()));
    p
}

/// `n` variables of `n` values, all different, with scattered unary costs.
fn problem_of(n: u32) -> Problem {
    let mut p = Problem::new();
    let vars: Vec<VarId> = (0..n).map(|i| p.add_var(format!("v{i}"), n)).collect();
    let zone: Arc<[u32]> = Arc::from((0..n).collect::<Vec<_>>());
    p.add_constraint(
        "all different",
        AllDifferentGroup::new(vars.clone(), vec![zone; n as usize]),
    );
    let terms = vars.iter().enumerate().map(|(i, &x)| {
        (
            1.0,
            Expr::unary(
                x,
                (0..n as usize)
                    .map(|v| ((v * v * 7 + i * 5 + v * i) % 23) as f64)
                    .collect::<Vec<_>>(),
            ),
        )
    });
    p.set_objective(Sense::Minimize, Expr::sum(terms.collect::<Vec<_>>()));
    p
}

#[test]
fn a_proven_optimum_is_the_same_plan_for_any_thread_count() {
    let p = big_problem();
    let plan = |threads: usize, seed: u64, helpers_after: u64| {
        let out = p
            .solve(&SolveOptions {
                threads,
                seed,
                helpers_after,
                ..SolveOptions::default()
            })
            .expect("valid problem");
        let Outcome::Solved {
            solutions,
            optimal,
            stats,
            ..
        } = out
        else {
            panic!("expected a plan, got {out:?}")
        };
        assert!(optimal);
        (solutions[0].clone(), stats)
    };
    let (one, alone) = plan(1, 0, 0);
    // 0: one thread per core.
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    for (threads, seed) in [(2, 0), (4, 0), (2, 7), (1, 7), (0, 0)] {
        for after in [0, 100, 2_000] {
            let (many, stats) = plan(threads, seed, after);
            assert_eq!(
                many, one,
                "{threads} threads, seed {seed}, helpers after {after} nodes"
            );
            // The threads share the tree once a search outgrows its first nodes: with three
            // or more, one waits from the start, so another gives it a subtree at its first
            // branch. With two, the second runs neighbourhood rounds first, and the first may
            // end the tree alone meanwhile.
            let n = if threads == 0 { cores } else { threads };
            let shared = n > 1 && after < alone.nodes;
            if n != 2 {
                assert_eq!(
                    stats.subtrees_given > 0,
                    shared,
                    "{threads} threads, {stats:?}"
                );
            } else if !shared {
                assert_eq!(stats.subtrees_given, 0, "{threads} threads, {stats:?}");
            }
        }
    }
}

/// Under a node limit the threads share the tree in lock step: the outcome, counters
/// included, is the same run after run for a thread count, the limit holds across the
/// threads, and a search the limit does not cut proves the plan one thread returns.
#[test]
fn a_node_limit_on_several_threads_gives_the_same_outcome_every_run() {
    let run = |p: &Problem, threads: usize, node_limit: u64| {
        p.solve(&SolveOptions {
            threads,
            node_limit: Some(node_limit),
            helpers_after: 0,
            ..SolveOptions::default()
        })
        .expect("valid problem")
    };
    // Searches cut by the limit, some after plans were found.
    let hard = packing(60, 14, 11);
    let (mut cut, mut planned) = (0, 0);
    for threads in [2, 3, 4] {
        for limit in [4_000, 15_000] {
            let first = run(&hard, threads, limit);
            for _ in 0..3 {
                assert_eq!(
                    run(&hard, threads, limit),
                    first,
                    "{threads} threads, limit {limit}"
                );
            }
            let (optimal, stats) = match first {
                Outcome::Solved { optimal, stats, .. } => {
                    planned += usize::from(!optimal);
                    (optimal, stats)
                }
                Outcome::Stopped { stats, .. } => (false, stats),
                Outcome::Infeasible { .. } => panic!("expected a search, got {first:?}"),
            };
            assert!(stats.subtrees_given > 0, "{threads} threads, {stats:?}");
            if !optimal {
                cut += 1;
                assert_eq!(stats.stopped, Some(StopReason::NodeLimit));
                assert!(
                    stats.nodes >= limit,
                    "{threads} threads, limit {limit}, {stats:?}"
                );
            }
        }
    }
    assert!(cut > 0, "no search was cut by its limit");
    // Cut after a plan was found: the threads passed plans at their meetings.
    assert!(planned > 0, "no search found a plan before its limit");
    // A search within the limit proves the plan one thread returns.
    let easy = packing(20, 6, 9);
    let one = run(&easy, 1, u64::MAX);
    assert!(
        matches!(one, Outcome::Solved { optimal: true, .. }),
        "{one:?}"
    );
    for threads in [2, 4] {
        let many = run(&easy, threads, 1_000_000);
        assert_eq!(many.solutions(), one.solutions(), "{threads} threads");
        assert_eq!(run(&easy, threads, 1_000_000), many, "{threads} threads");
    }
}

#[test]
fn injected_deadline_stops_the_search_with_an_incumbent() {
    let p = big_problem();
    let opts = SolveOptions {
        deadline: Some(Arc::new(AfterChecks(AtomicU32::new(3)))),
        explain_checks: 0,
        ..SolveOptions::default()
    };
    let out = p.solve(&opts).expect("valid problem");
    match out {
        Outcome::Solved {
            optimal,
            stats,
            solutions,
            ..
        } => {
            assert!(!optimal, "{stats:?}");
            assert_eq!(stats.nodes, 192);
            assert_eq!(stats.stopped, Some(StopReason::Deadline));
            assert!(p.check(&solutions[0].values).is_empty());
        }
        other => panic!("expected an incumbent, got {other:?}"),
    }
}

#[test]
fn node_limit_before_any_leaf_is_stopped() {
    let p = big_problem();
    let out = p
        .solve(&SolveOptions {
            node_limit: Some(3),
            ..SolveOptions::default()
        })
        .expect("valid problem");
    let Outcome::Stopped { stats, .. } = out else {
        panic!("expected stopped, got {out:?}")
    };
    assert_eq!(stats.stopped, Some(StopReason::NodeLimit));
    assert_eq!(stats.nodes, 3);
}

#[test]
fn maximize_negates_and_soft_penalties_subtract() {
    let mut p = Problem::new();
    let a = p.add_var("a", 3);
    let b = p.add_var("b", 3);
    // Prefer different values, softly (weight 5).
    p.add_soft("spread", 5.0, Pairwise::new(a, b, |x, y| x != y));
    p.set_objective(
        Sense::Maximize,
        Expr::sum([
            (1.0, Expr::unary(a, vec![1.0, 2.0, 9.0])),
            (1.0, Expr::unary(b, vec![1.0, 3.0, 8.0])),
        ]),
    );
    let out = p
        .solve(&SolveOptions {
            solutions: 2,
            ..SolveOptions::default()
        })
        .expect("valid problem");
    let sols = out.solutions();
    // 9 + 8 - 5 = 12 vs 9 + 3 = 12 vs 2 + 8 = 10: ties keep both 12s.
    assert_eq!(
        sols.iter().map(|s| s.score).collect::<Vec<_>>(),
        vec![12.0, 12.0]
    );
    assert_eq!(
        sols.iter().find(|s| s.penalty > 0.0).map(|s| s.objective),
        Some(17.0)
    );
}

#[test]
fn invalid_problem_reports_every_error_at_once() {
    let mut p = Problem::new();
    let a = p.add_var("a", 2);
    p.add_constraint("ghost", Filter::forbid(VarId(7), [Value(0)]));
    p.add_soft("negative", -1.0, Filter::forbid(a, [Value(0)]));
    p.add_constraint(
        "short keys",
        SameGroup::new(vec![a], vec![Arc::from(vec![0u32])]),
    );
    p.set_objective(
        Sense::Minimize,
        Expr::unary(a, vec![1.0]).normalize(2.0, 2.0),
    );
    let err = p
        .solve(&SolveOptions::default())
        .expect_err("invalid problem");
    let SolveError::Invalid { errors } = &err else {
        panic!("expected several errors, got {err:?}")
    };
    assert_eq!(errors.len(), 5, "{err}");
    expect!["invalid problem (5 errors): constraint `ghost` refers to unknown variable x7; expected one of x0..x1; soft constraint `negative` has weight -1; expected a finite weight >= 0; constraint `short keys` is malformed: key list of x0 has 1 entries; expected 2 (the domain size); normalization has start = end = 2; expected distinct bounds; cost table of x0 has 1 entries; expected 2 (the domain size)"]
        .assert_eq(&err.to_string());
}

#[test]
fn zero_solutions_is_an_error() {
    let mut p = Problem::new();
    p.add_var("a", 2);
    assert_eq!(
        p.solve(&SolveOptions {
            solutions: 0,
            ..SolveOptions::default()
        }),
        Err(SolveError::ZeroSolutions)
    );
}

#[test]
fn more_threads_than_the_cap_is_an_error() {
    let mut p = Problem::new();
    p.add_var("a", 2);
    let solve = |threads| {
        p.solve(&SolveOptions {
            threads,
            ..SolveOptions::default()
        })
    };
    let err = solve(berth_solver::MAX_THREADS + 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "asked for {} threads; expected at most {}",
            berth_solver::MAX_THREADS + 1,
            berth_solver::MAX_THREADS
        )
    );
    assert!(solve(berth_solver::MAX_THREADS).is_ok());
}

#[test]
fn empty_domain_is_infeasible_not_a_panic() {
    let mut p = Problem::new();
    p.add_var("a", 0);
    let out = p.solve(&SolveOptions::default()).expect("valid problem");
    let Outcome::Infeasible { explanation, .. } = out else {
        panic!("expected infeasible, got {out:?}")
    };
    assert!(explanation.conflict.is_empty());
    assert_eq!(explanation.wiped_out, Some(VarId(0)));
}

/// `z`, `x` and four `y`s: once `z = 0`, `x` and the `y`s no longer depend on each other.
/// The bounds (unary costs) miss the pairwise rules among the `y`s. Optimum 30.
fn apart_once_decided() -> Problem {
    let mut p = Problem::new();
    let z = p.add_var("z", 2);
    let x = p.add_var("x", 3);
    let ys: Vec<VarId> = (0..4).map(|i| p.add_var(format!("y{i}"), 4)).collect();
    // z = 1 rules out x = 0 and y0 = 1; z = 0 rules out nothing.
    let unless = |bad: u32, cols: u32| -> Vec<bool> {
        (0..2 * cols)
            .map(|i| i / cols == 0 || i % cols != bad)
            .collect()
    };
    p.add_constraint("z x", Pairwise::from_table(z, x, 3, unless(0, 3)));
    p.add_constraint("z y0", Pairwise::from_table(z, ys[0], 4, unless(1, 4)));
    for (i, &a) in ys.iter().enumerate() {
        for &b in &ys[i + 1..] {
            let not_both_zero: Vec<bool> = (0..16).map(|k| k != 0).collect();
            p.add_constraint(
                format!("{a} {b}"),
                Pairwise::from_table(a, b, 4, not_both_zero),
            );
        }
    }
    let mut terms = vec![
        (1.0, Expr::unary(z, vec![0.0, 5.0])),
        (1.0, Expr::unary(x, vec![0.0, 1.0, 2.0])),
    ];
    terms.extend(
        ys.iter()
            .map(|&y| (1.0, Expr::unary(y, vec![0.0, 10.0, 10.0, 10.0]))),
    );
    p.set_objective(Sense::Minimize, Expr::sum(terms));
    p
}

/// `(objective, nodes, nodes remembered)` of a proven optimum.
fn solve_remembering(p: &Problem, remember: bool) -> (f64, u64, u64) {
    let opts = SolveOptions {
        remember,
        ..SolveOptions::default()
    };
    match p.solve(&opts).expect("valid") {
        Outcome::Solved {
            solutions,
            optimal: true,
            stats,
            ..
        } => (solutions[0].objective, stats.nodes, stats.remembered),
        other => panic!("{other:?}"),
    }
}

/// The search refutes the `y`s' part under `x = 0` and, under `x = 1` and `x = 2`, meets the
/// same part again with a dearer `x`: remembered, not searched again (nothing else prunes
/// those nodes).
#[test]
fn a_part_refuted_under_one_decision_is_not_searched_under_the_next() {
    let p = apart_once_decided();
    let (best, nodes, remembered) = solve_remembering(&p, true);
    let (best_forgetting, nodes_forgetting, none) = solve_remembering(&p, false);
    assert_eq!((best, best_forgetting), (30.0, 30.0));
    assert_eq!(none, 0);
    assert!(remembered >= 2, "{remembered} nodes remembered");
    assert!(
        nodes < nodes_forgetting,
        "{nodes} nodes remembering, {nodes_forgetting} forgetting"
    );
}

/// A constraint that does not describe its state (`Constraint::residual` left to its
/// default) turns the memory off: the same search as forgetting, the same optimum.
#[test]
fn a_constraint_that_cannot_tell_its_state_turns_the_memory_off() {
    struct Untold(Vec<VarId>);
    impl berth_solver::Constraint for Untold {
        fn scope(&self) -> &[VarId] {
            &self.0
        }
        fn propagate(&self, _: &mut berth_solver::Ctx<'_>) -> Result<(), berth_solver::Conflict> {
            Ok(())
        }
        fn violation(&self, _: &berth_solver::Assignment<'_>) -> f64 {
            0.0
        }
    }
    let mut p = apart_once_decided();
    p.add_constraint("untold", Untold(vec![VarId(1)]));
    let (best, nodes, remembered) = solve_remembering(&p, true);
    assert_eq!(remembered, 0);
    assert_eq!((best, nodes), {
        let (b, n, _) = solve_remembering(&p, false);
        (b, n)
    });
    assert_eq!(best, 30.0);
}
