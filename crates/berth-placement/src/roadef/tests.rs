//! Tests: the committed challenge files load and their initial costs match the published
//! ones; loader errors; the incremental state against the checker on random instances; the
//! search's answers pass the checker; the two-machine repacking and the closing descent
//! against brute force.

use std::path::PathBuf;

use proptest::prelude::*;

use super::state::State;
use super::*;

fn data(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../benches/roadef/data/A")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn load(instance: &str) -> (Model, Vec<usize>) {
    let model = Model::parse(instance, &data(&format!("model_{instance}.txt"))).unwrap();
    let initial = model
        .parse_assignment(instance, &data(&format!("assignment_{instance}.txt")))
        .unwrap();
    (model, initial)
}

#[test]
fn initial_costs_match_the_published_ones() {
    // original_cost_*.txt of the challenge data.
    let published = [
        ("a1_1", 49_528_750),
        ("a1_2", 1_061_649_570),
        ("a1_3", 583_662_270),
        ("a1_4", 632_499_600),
        ("a1_5", 782_189_690),
        ("a2_1", 391_189_190),
        ("a2_2", 1_876_768_120),
        ("a2_3", 2_272_487_840),
        ("a2_4", 3_223_516_130),
        ("a2_5", 787_355_300),
    ];
    for (instance, expected) in published {
        let (model, initial) = load(instance);
        let verdict = check(&model, &initial, &initial);
        assert!(verdict.feasible(), "{instance}: {:?}", verdict.violations);
        assert_eq!(verdict.cost.unwrap().total, expected, "{instance}");
        assert_eq!(State::new(&model, &initial).total(), expected, "{instance}");
    }
}

#[test]
fn a1_1_has_the_documented_shape() {
    let (model, _) = load("a1_1");
    assert_eq!(
        (
            model.resources.len(),
            model.machines.len(),
            model.services.len(),
            model.processes.len(),
            model.balances.len(),
            model.neighborhoods,
            model.locations,
        ),
        (2, 4, 79, 100, 1, 1, 4)
    );
    assert_eq!(
        (
            model.weight_process_move,
            model.weight_service_move,
            model.weight_machine_move
        ),
        (1, 10, 100)
    );
    assert_eq!(model.machine_move_cost(0, 3), 1);
    assert_eq!(model.machine_move_cost(2, 2), 0);
}

#[test]
fn loader_errors_name_the_place_and_what_was_expected() {
    let err = Model::parse("m.txt", "1\n0 10\n1\n0 0 5 x").unwrap_err();
    assert_eq!(
        err.to_string(),
        "m.txt:4:7: machines[0].safety_capacity[0]: expected an integer in 0..=2305843009213693951, found `x`"
    );
    let err = Model::parse("m.txt", "1\n2 10\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "m.txt:2:1: resources[0].transient: expected an integer in 0..=1, found `2`"
    );
    let err = Model::parse("m.txt", "1\n0 10\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "m.txt:3:1: machines: expected an integer in 0..=100000000, found the end of the file"
    );
    let (model, _) = load("a1_1");
    let err = model.parse_assignment("s.txt", "0 1 7").unwrap_err();
    assert_eq!(
        err.to_string(),
        "s.txt:1:5: assignment[2]: expected an integer in 0..=3, found `7`"
    );
    let mut long = render_solution(&[0; 100]);
    long.push_str("3\n");
    let err = model.parse_assignment("s.txt", &long).unwrap_err();
    assert_eq!(
        err.to_string(),
        "s.txt:2:1: end: expected the end of the file, found `3`"
    );
}

#[test]
fn the_checker_reports_each_kind_of_violation() {
    let (model, initial) = load("a1_1");
    // Everything on machine 0: capacity and conflict (services with several processes).
    let all0 = vec![0; initial.len()];
    let v = check(&model, &initial, &all0);
    assert!(
        v.violations
            .iter()
            .any(|x| matches!(x, Violation::Capacity { machine: 0, .. }))
    );
    assert!(
        v.violations
            .iter()
            .any(|x| matches!(x, Violation::Conflict { machine: 0, .. }))
    );
    let v = check(&model, &initial, &initial[1..]);
    assert_eq!(
        v.violations,
        vec![Violation::Length {
            expected: 100,
            found: 99
        }]
    );
    assert_eq!(v.cost, None);
}

#[test]
fn the_search_improves_a1_1_deterministically_and_passes_the_checker() {
    let (model, initial) = load("a1_1");
    let options = LnsOptions {
        seed: 7,
        iterations: Some(200_000),
        ..LnsOptions::default()
    };
    let a = improve(&model, &initial, &options).unwrap();
    let b = improve(&model, &initial, &options).unwrap();
    assert_eq!(a, b);
    let verdict = check(&model, &initial, &a.assignment);
    assert!(verdict.feasible(), "{:?}", verdict.violations);
    assert_eq!(verdict.cost.unwrap().total, a.cost);
    assert_eq!(a.initial_cost, 49_528_750);
    // The polish's evaluations count among the budget's tries.
    assert!(a.tried <= 200_000, "{}", a.tried);
    assert!(a.polished >= 0, "{}", a.polished);
    // Within 1% of the lower bound 44,306,390 after 200k moves.
    assert!(a.cost < 44_750_000, "{}", a.cost);
}

#[test]
fn a_run_goes_on_from_an_earlier_answer_and_refuses_an_infeasible_start() {
    let (model, initial) = load("a1_1");
    let first = improve(
        &model,
        &initial,
        &LnsOptions {
            seed: 5,
            iterations: Some(20_000),
            ..LnsOptions::default()
        },
    )
    .unwrap();
    let options = LnsOptions {
        seed: 6,
        iterations: Some(20_000),
        start: Some(first.assignment.clone()),
        ..LnsOptions::default()
    };
    let then = improve(&model, &initial, &options).unwrap();
    assert_eq!(then.start_cost, first.cost);
    assert_eq!(then.initial_cost, first.initial_cost);
    assert!(then.cost <= first.cost, "{} > {}", then.cost, first.cost);
    let verdict = check(&model, &initial, &then.assignment);
    assert_eq!(verdict.cost.unwrap().total, then.cost);

    let refused = |start: Vec<usize>| {
        let options = LnsOptions {
            start: Some(start),
            ..options.clone()
        };
        match improve(&model, &initial, &options) {
            Err(e @ crate::PlacementError::RoadefStartInfeasible { .. }) => e.to_string(),
            other => panic!("expected the start refused, got {other:?}"),
        }
    };
    let short = refused(initial[1..].to_vec());
    assert_eq!(
        short,
        "the starting assignment is infeasible (1 violation), first: expected 100 machine indexes, found 99"
    );
    // Both processes of a service on one machine.
    let s = (0..model.processes.len())
        .find_map(|p| {
            (p + 1..model.processes.len())
                .find(|&q| model.processes[q].service == model.processes[p].service)
                .map(|q| (p, q))
        })
        .expect("a1_1 has a service of two processes");
    let mut together = initial.clone();
    together[s.1] = together[s.0];
    let verdict = check(&model, &initial, &together);
    assert!(!verdict.feasible());
    assert_eq!(
        refused(together),
        format!(
            "the starting assignment is infeasible ({} violations), first: {}",
            verdict.violations.len(),
            verdict.violations[0]
        )
    );
}

#[test]
fn a_portfolio_returns_the_cheapest_of_its_searches_each_as_run_alone() {
    let (model, initial) = load("a1_4");
    let alone = |seed| {
        let options = LnsOptions {
            seed,
            iterations: Some(20_000),
            ..LnsOptions::default()
        };
        improve(&model, &initial, &options).unwrap()
    };
    let options = LnsOptions {
        seed: 3,
        iterations: Some(20_000),
        threads: 3,
        ..LnsOptions::default()
    };
    let both = improve(&model, &initial, &options).unwrap();
    let runs: Vec<_> = (0..3)
        .map(|k| alone(super::lns::thread_seed(3, k)))
        .collect();
    assert_eq!(
        runs[0],
        alone(3),
        "the first search retraces the one-thread search"
    );
    let costs: Vec<i64> = runs.iter().map(|r| r.cost).collect();
    let cheapest = (0..3).min_by_key(|&k| (costs[k], k)).unwrap();
    assert_ne!(
        costs[0], costs[1],
        "the seeds must differ for this test to mean anything"
    );
    assert_eq!(both.thread, cheapest, "{costs:?}");
    assert_eq!(both.cost, costs[cheapest]);
    assert_eq!(both.assignment, runs[cheapest].assignment);
    assert_eq!(both.tried, runs.iter().map(|r| r.tried).sum::<u64>());
    let verdict = check(&model, &initial, &both.assignment);
    assert_eq!(verdict.cost.unwrap().total, both.cost);
}

#[test]
fn the_search_refuses_an_infeasible_start() {
    let (model, initial) = load("a1_1");
    let err = improve(&model, &vec![0; initial.len()], &LnsOptions::default()).unwrap_err();
    assert!(
        matches!(err, crate::PlacementError::RoadefInfeasible { .. }),
        "{err}"
    );
}

/// A random instance whose random initial assignment is feasible by construction.
fn instance() -> impl Strategy<Value = (Model, Vec<usize>, Vec<(usize, usize, bool)>)> {
    (
        1usize..4,
        2usize..7,
        1usize..5,
        1usize..4,
        1usize..4,
        any::<u64>(),
    )
        .prop_map(|(nr, nm, ns, nn, nl, seed)| {
            let mut x = seed | 1;
            let mut rnd = move |n: usize| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                usize::try_from(x % n.max(1) as u64).unwrap()
            };
            let resources = (0..nr)
                .map(|_| Resource {
                    transient: rnd(3) == 0,
                    weight_load_cost: rnd(20) as i64,
                })
                .collect::<Vec<_>>();
            let loc = (0..nm).map(|_| rnd(nl)).collect::<Vec<_>>();
            let nb = (0..nm).map(|_| rnd(nn)).collect::<Vec<_>>();
            // Processes: each service's on distinct machines.
            let mut processes = Vec::new();
            let mut initial = Vec::new();
            for s in 0..ns {
                let k = 1 + rnd(nm.min(3));
                let mut ms: Vec<usize> = (0..nm).collect();
                for i in 0..k {
                    let j = i + rnd(nm - i);
                    ms.swap(i, j);
                    processes.push(Process {
                        service: s,
                        requirement: (0..nr).map(|_| rnd(10) as i64).collect(),
                        move_cost: rnd(5) as i64,
                    });
                    initial.push(ms[i]);
                }
            }
            let mut usage = vec![vec![0i64; nr]; nm];
            for (p, proc) in processes.iter().enumerate() {
                for (u, q) in usage[initial[p]].iter_mut().zip(&proc.requirement) {
                    *u += q;
                }
            }
            let machines = (0..nm)
                .map(|m| {
                    let capacity: Vec<i64> =
                        (0..nr).map(|r| usage[m][r] + rnd(15) as i64).collect();
                    let safety_capacity = capacity
                        .iter()
                        .map(|&c| (c - rnd(12) as i64).max(0))
                        .collect();
                    Machine {
                        neighborhood: nb[m],
                        location: loc[m],
                        capacity,
                        safety_capacity,
                    }
                })
                .collect::<Vec<_>>();
            // Spread minima and dependencies the initial assignment meets.
            let services = (0..ns)
                .map(|s| {
                    let mine: Vec<usize> = (0..processes.len())
                        .filter(|&p| processes[p].service == s)
                        .collect();
                    let mut locs: Vec<usize> = mine.iter().map(|&p| loc[initial[p]]).collect();
                    locs.sort_unstable();
                    locs.dedup();
                    let spread_min = rnd(locs.len() + 1);
                    let dependencies = (0..ns)
                        .filter(|&d| d != s && rnd(3) == 0)
                        .filter(|&d| {
                            mine.iter().all(|&p| {
                                (0..processes.len()).any(|q| {
                                    processes[q].service == d && nb[initial[q]] == nb[initial[p]]
                                })
                            })
                        })
                        .collect();
                    Service {
                        spread_min,
                        dependencies,
                    }
                })
                .collect();
            let balances = (0..rnd(3))
                .map(|_| Balance {
                    resource1: rnd(nr),
                    resource2: rnd(nr),
                    target: rnd(4) as i64,
                    weight: rnd(5) as i64,
                })
                .collect();
            let move_costs = (0..nm * nm)
                .map(|k| if k / nm == k % nm { 0 } else { rnd(4) as u32 })
                .collect();
            let np = processes.len();
            let model = Model::from_parts(
                resources,
                machines,
                services,
                processes,
                balances,
                [rnd(3) as i64, rnd(20) as i64, rnd(5) as i64],
                move_costs,
            )
            .unwrap();
            let moves = (0..60)
                .map(|_| (rnd(np), rnd(np.max(nm)), rnd(2) == 0))
                .collect();
            (model, initial, moves)
        })
}

/// Each machine's kept cost equals its load and balance cost recomputed from the assignment,
/// they sum to `machines_cost`, and `machine_at` maps each machine's cumulative range to it.
fn machine_draws_follow_the_costs(
    model: &Model,
    st: &State<'_>,
    now: &[usize],
) -> Result<(), TestCaseError> {
    let nr = model.resources.len();
    let mut usage = vec![vec![0i64; nr]; model.machines.len()];
    for (p, &m) in now.iter().enumerate() {
        for (u, q) in usage[m].iter_mut().zip(&model.processes[p].requirement) {
            *u += q;
        }
    }
    let mut start = 0;
    for (m, mach) in model.machines.iter().enumerate() {
        let u = &usage[m];
        let load: i64 = (0..nr)
            .map(|r| model.resources[r].weight_load_cost * (u[r] - mach.safety_capacity[r]).max(0))
            .sum();
        let balance: i64 = model
            .balances
            .iter()
            .map(|b| {
                let a1 = mach.capacity[b.resource1] - u[b.resource1];
                let a2 = mach.capacity[b.resource2] - u[b.resource2];
                b.weight * (b.target * a1 - a2).max(0)
            })
            .sum();
        prop_assert_eq!(st.machine_cost(m), load + balance);
        if load + balance > 0 {
            prop_assert_eq!(st.machine_at(start), m);
            prop_assert_eq!(st.machine_at(start + load + balance - 1), m);
        }
        start += load + balance;
    }
    prop_assert_eq!(st.machines_cost(), start);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Random shifts and swaps: the state accepts exactly the moves the checker accepts, and
    /// its objective always equals the checker's recomputation; the cost change predicted
    /// before each move (`shift_delta`, `swap_delta`) is `None` exactly for the moves the
    /// checker refuses and otherwise the change the checker's costs show; the per-resource
    /// totals of excess and room it keeps equal their sums over the machines.
    #[test]
    fn incremental_state_agrees_with_the_checker((model, initial, moves) in instance()) {
        let nm = model.machines.len();
        prop_assert!(check(&model, &initial, &initial).feasible());
        let mut st = State::new(&model, &initial);
        for (p, k, swap) in moves {
            let from = st.machine_of(p);
            let mut candidate: Vec<usize> = st.current.iter().map(|&m| m as usize).collect();
            let before = cost(&model, &initial, &candidate).total;
            let predicted = if swap {
                st.swap_delta(p, k % model.processes.len())
            } else {
                st.shift_delta(p, k % nm)
            };
            let accepted = if swap {
                let q = k % model.processes.len();
                let to = st.machine_of(q);
                if to == from || model.processes[p].service == model.processes[q].service {
                    continue;
                }
                candidate[p] = to;
                candidate[q] = from;
                if st.fits(from, &[p], &[q]) && st.fits(to, &[q], &[p]) {
                    st.shift(p, to);
                    st.shift(q, from);
                    let ok = st.holds_after(p, from) && st.holds_after(q, to);
                    if !ok {
                        st.shift(q, to);
                        st.shift(p, from);
                    }
                    ok
                } else {
                    false
                }
            } else {
                let to = k % nm;
                if to == from {
                    continue;
                }
                candidate[p] = to;
                if st.fits(to, &[], &[p]) {
                    st.shift(p, to);
                    let ok = st.holds_after(p, from);
                    if !ok {
                        st.shift(p, from);
                    }
                    ok
                } else {
                    false
                }
            };
            let verdict = check(&model, &initial, &candidate);
            prop_assert_eq!(accepted, verdict.feasible(), "{:?}", verdict.violations);
            prop_assert_eq!(
                predicted,
                verdict.cost.as_ref().filter(|_| accepted).map(|c| c.total - before)
            );
            let now: Vec<usize> = st.current.iter().map(|&m| m as usize).collect();
            prop_assert_eq!(st.total(), cost(&model, &initial, &now).total);
            machine_draws_follow_the_costs(&model, &st, &now)?;
            for r in 0..model.resources.len() {
                let summed = (0..nm).fold((0, 0), |(e, o), m| {
                    let (excess, room) = st.excess_and_room(m, r);
                    (e + excess, o + room)
                });
                prop_assert_eq!(st.excess_and_room_total(r), summed, "resource {}", r);
            }
        }
    }

    /// The search's answer passes the checker and its cost is the checker's, whether the run
    /// ends within its reweighted first part (fewer than 256 tries) or after it.
    #[test]
    fn search_answers_pass_the_checker(
        (model, initial, _) in instance(),
        seed in 0u64..1000,
        iterations in prop_oneof![0u64..256, Just(2_000)],
    ) {
        let options = LnsOptions { seed, iterations: Some(iterations), history: Some(50), ..LnsOptions::default() };
        let out = improve(&model, &initial, &options).unwrap();
        let verdict = check(&model, &initial, &out.assignment);
        prop_assert!(verdict.feasible(), "{:?}", verdict.violations);
        prop_assert_eq!(verdict.cost.unwrap().total, out.cost);
        prop_assert!(out.cost <= out.initial_cost);
    }
}

/// Random feasible shifts from the initial assignment, so move costs and transient usage count.
fn wander<'m>(model: &'m Model, initial: &[usize], moves: &[(usize, usize, bool)]) -> State<'m> {
    let nm = model.machines.len();
    let mut st = State::new(model, initial);
    for &(p, k, _) in moves.iter().take(20) {
        let (from, to) = (st.machine_of(p), k % nm);
        if to != from && st.fits(to, &[], &[p]) {
            st.shift(p, to);
            if !st.holds_after(p, from) {
                st.shift(p, from);
            }
        }
    }
    st
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A search started from a feasible assignment (a random wander) goes on from there: with
    /// no budget it returns the start itself; with one, an answer the checker accepts, never
    /// above the start, the move costs counted from the initial assignment.
    #[test]
    fn a_search_goes_on_from_its_start((model, initial, moves) in instance(), seed in 0u64..1000) {
        let start: Vec<usize> = wander(&model, &initial, &moves)
            .current
            .iter()
            .map(|&m| m as usize)
            .collect();
        let start_cost = cost(&model, &initial, &start).total;
        let from = |iterations| LnsOptions {
            seed,
            iterations: Some(iterations),
            history: Some(50),
            start: Some(start.clone()),
            ..LnsOptions::default()
        };
        let still = improve(&model, &initial, &from(0)).unwrap();
        prop_assert_eq!(&still.assignment, &start);
        prop_assert_eq!(still.cost, start_cost);
        prop_assert_eq!(still.start_cost, start_cost);
        prop_assert_eq!(still.initial_cost, cost(&model, &initial, &initial).total);
        let out = improve(&model, &initial, &from(2_000)).unwrap();
        let verdict = check(&model, &initial, &out.assignment);
        prop_assert!(verdict.feasible(), "{:?}", verdict.violations);
        prop_assert_eq!(verdict.cost.unwrap().total, out.cost);
        prop_assert_eq!(out.start_cost, start_cost);
        prop_assert!(out.cost <= start_cost);
    }

    /// The closing descent against brute force: it ends where no shift and no swap the
    /// checker accepts is cheaper, never above where it started, with the checker's cost; a
    /// budget stops it after exactly that many evaluations of the same descent.
    #[test]
    fn the_polish_ends_where_no_shift_or_swap_is_cheaper((model, initial, moves) in instance(), budget in 0u64..200) {
        let (np, nm) = (model.processes.len(), model.machines.len());
        let mut st = wander(&model, &initial, &moves);
        let before = st.total();
        let evaluations = super::lns::polish(&mut st, &model, None, None);
        let now: Vec<usize> = st.current.iter().map(|&m| m as usize).collect();
        let verdict = check(&model, &initial, &now);
        prop_assert!(verdict.feasible(), "{:?}", verdict.violations);
        prop_assert_eq!(st.total(), verdict.cost.unwrap().total);
        prop_assert!(st.total() <= before);
        let cheaper = |candidate: &[usize]| {
            let v = check(&model, &initial, candidate);
            v.feasible() && v.cost.unwrap().total < st.total()
        };
        for p in 0..np {
            for t in 0..nm {
                let mut candidate = now.clone();
                candidate[p] = t;
                prop_assert!(!cheaper(&candidate), "shift {} to {}", p, t);
            }
            for q in 0..np {
                if now[p] == now[q] || model.processes[p].service == model.processes[q].service {
                    continue;
                }
                let mut candidate = now.clone();
                candidate.swap(p, q);
                prop_assert!(!cheaper(&candidate), "swap {} and {}", p, q);
            }
        }
        let mut cut = wander(&model, &initial, &moves);
        prop_assert_eq!(super::lns::polish(&mut cut, &model, Some(budget), None), evaluations.min(budget));
    }

    /// Repacking two machines against brute force over every split of their processes: with
    /// the service move cost off (the one global term the split's bound leaves out) it finds
    /// the cheapest split the checker accepts whenever one beats the current assignment, and
    /// otherwise changes nothing; with it on, whatever it applies is feasible and cheaper.
    #[test]
    fn pair_repacking_finds_the_cheapest_split((model, initial, moves) in instance(), exact in any::<bool>()) {
        let mut model = model;
        if exact {
            model.weight_service_move = 0;
        }
        let nm = model.machines.len();
        let mut st = wander(&model, &initial, &moves);
        let (a, b) = (moves[20].0 % nm, moves[21].1 % nm);
        prop_assume!(a != b);
        let free: Vec<usize> = st.on(a).iter().chain(st.on(b)).map(|&q| q as usize).collect();
        prop_assume!(free.len() <= 10);
        let now: Vec<usize> = st.current.iter().map(|&m| m as usize).collect();
        let before = st.total();
        prop_assert_eq!(before, cost(&model, &initial, &now).total);
        let mut best = before;
        for mask in 0u32..(1 << free.len()) {
            let mut candidate = now.clone();
            for (i, &p) in free.iter().enumerate() {
                candidate[p] = if mask >> i & 1 == 1 { b } else { a };
            }
            let verdict = check(&model, &initial, &candidate);
            if verdict.feasible() {
                best = best.min(verdict.cost.unwrap().total);
            }
        }
        let shifts = super::pair::repack(&mut st, &model, [a, b], &free, u64::MAX);
        let after: Vec<usize> = st.current.iter().map(|&m| m as usize).collect();
        let verdict = check(&model, &initial, &after);
        prop_assert!(verdict.feasible(), "{:?}", verdict.violations);
        prop_assert_eq!(st.total(), verdict.cost.unwrap().total);
        if shifts.is_empty() {
            prop_assert_eq!(&after, &now);
        } else {
            prop_assert!(st.total() < before);
        }
        if exact {
            prop_assert_eq!(st.total(), best);
        }
    }
}

/// The ejection leaves a machine above its capacity while it moves processes away: a shift
/// away from such a machine is judged by the machine it enters only.
#[test]
fn a_shift_away_from_a_machine_above_capacity_is_judged_by_its_destination() {
    let machine = || Machine {
        neighborhood: 0,
        location: 0,
        capacity: vec![10],
        safety_capacity: vec![5],
    };
    let process = |service| Process {
        service,
        requirement: vec![6],
        move_cost: 1,
    };
    let service = || Service {
        spread_min: 0,
        dependencies: vec![],
    };
    let model = Model::from_parts(
        vec![Resource {
            transient: false,
            weight_load_cost: 1,
        }],
        vec![machine(), machine(), machine(), machine()],
        vec![service(), service(), service()],
        vec![process(0), process(1), process(2)],
        vec![],
        [1, 1, 1],
        (0..16).map(|k| u32::from(k / 4 != k % 4)).collect(),
    )
    .unwrap();
    let mut st = State::new(&model, &[0, 1, 2]);
    // Machine 0 now holds 18 of 10, still 12 once process 0 leaves.
    st.shift(1, 0);
    st.shift(2, 0);
    let before = st.total();
    let predicted = st.shift_delta(0, 3);
    st.shift(0, 3);
    assert_eq!(predicted, Some(st.total() - before));
    // Machine 0 cannot take the process back above its capacity.
    assert_eq!(st.shift_delta(0, 0), None);
}
