//! Homing instances whose optimum CP-SAT proved (docs/benchmarks.md): Berth proves the same
//! objective, its plan passes the instance checker, and more threads (sharing the tree) return
//! the same plan, with the LP bound off (these sizes are under its default threshold) and
//! forced on.

use berth_benches::homing::{check, generate, to_problem};
use berth_solver::{Outcome, SolveOptions};

/// `(demands, candidates, seed, optimum proven by CP-SAT)`.
const PROVEN: [(usize, usize, u64, i64); 10] = [
    (8, 60, 1, 6469),
    (8, 60, 2, 12736),
    (8, 60, 3, 4250),
    (12, 100, 1, 20253),
    (12, 100, 2, 6546),
    (12, 100, 3, 7144),
    (15, 150, 1, 15561),
    (15, 150, 2, 25314),
    (15, 150, 3, 28603),
    // The canonical pass once returned a 9 770 plan here as optimal.
    (20, 200, 3, 9704),
];

#[test]
fn berth_proves_the_cpsat_optima() {
    for (n, m, seed, optimum) in PROVEN {
        let inst = generate(n, m, seed);
        let p = to_problem(&inst);
        let mut plans = Vec::new();
        let mut given = 0;
        // Two threads (the second runs neighbourhood rounds first): sharing the tree from
        // the root, and only after the first nodes (the default); three from the root (one
        // waits for a subtree from the start); then the same with the LP bound on every size.
        let runs = [
            (1, 0, None),
            (2, 0, None),
            (2, 2_000, None),
            (3, 0, None),
            (1, 0, Some(0)),
            (2, 0, Some(0)),
            (3, 0, Some(0)),
        ];
        for (threads, helpers_after, lp_min_values) in runs {
            let out = p
                .solve(&SolveOptions {
                    threads,
                    helpers_after,
                    lp_min_values,
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
                panic!("{}: no plan: {out:?}", inst.name)
            };
            assert!(optimal, "{}", inst.name);
            if threads > 2 {
                given += stats.subtrees_given;
            }
            let values: Vec<u32> = solutions[0].values.iter().map(|v| v.0).collect();
            assert_eq!(check(&inst, &values), Some(optimum as f64), "{}", inst.name);
            assert_eq!(solutions[0].objective, optimum as f64, "{}", inst.name);
            plans.push(values);
        }
        assert_eq!(plans[0], plans[1], "{}: 1 and 2 threads", inst.name);
        assert_eq!(
            plans[0], plans[2],
            "{}: 1 and 2 threads, late helpers",
            inst.name
        );
        assert_eq!(plans[0], plans[3], "{}: 1 and 3 threads", inst.name);
        assert_eq!(
            plans[4], plans[5],
            "{}: LP bound, 1 and 2 threads",
            inst.name
        );
        assert_eq!(
            plans[4], plans[6],
            "{}: LP bound, 1 and 3 threads",
            inst.name
        );
        // The threads searched the tree together: one gave another subtrees.
        assert!(given > 0, "{}: no subtree given", inst.name);
    }
}

/// The instances as a user's files (template and inventory) through `berth_engine::plan`:
/// the optimum the solver API proves, and a plan that passes the instance checker.
#[test]
fn the_files_plan_to_the_same_optimum() {
    use berth_benches::homing_files::to_files;
    for (n, m, seed, optimum) in PROVEN.into_iter().chain([(40, 500, 6, 19147)]) {
        let inst = generate(n, m, seed);
        let (template, inventory) = to_files(&inst).expect("an exact encoding");
        let t = berth_template::load(&template, &Default::default())
            .unwrap_or_else(|d| panic!("{}: template invalid: {d:?}", inst.name));
        let inv = berth_inventory::StaticProvider::parse(&inventory)
            .unwrap_or_else(|e| panic!("{}: inventory invalid: {e}", inst.name));
        let out = berth_engine::plan(&t, &inv, &berth_engine::PlanOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", inst.name));
        assert!(out.optimal, "{}: {}", inst.name, out.message);
        assert_eq!(out.solutions[0].objective, optimum as f64, "{}", inst.name);
        assert_eq!(out.bound, Some(optimum as f64), "{}", inst.name);
        let values: Vec<u32> = (0..n)
            .map(|d| {
                let id = out.solutions[0].placements[&format!("d{d}")]["candidate_id"]
                    .as_str()
                    .and_then(|s| s.strip_prefix('c'))
                    .and_then(|s| s.parse().ok());
                id.unwrap_or_else(|| panic!("{}: d{d} has no candidate c<i>", inst.name))
            })
            .collect();
        assert_eq!(check(&inst, &values), Some(optimum as f64), "{}", inst.name);
    }
}

/// A user's files prove as the solver API does, in about as many nodes: the API proves
/// h60x800-s1 in 315 nodes; its files once took 1.4 million, because the inventory groups
/// (`CommonGroup`) gave the LP no rows where the API's `SameGroup` did.
#[test]
fn the_files_prove_in_about_the_api_nodes() {
    use berth_benches::homing_files::to_files;
    let inst = generate(60, 800, 1);
    assert!(
        !inst.same_group.is_empty(),
        "the instance has inventory groups"
    );
    let (template, inventory) = to_files(&inst).expect("an exact encoding");
    let t = berth_template::load(&template, &Default::default()).expect("a valid template");
    let inv = berth_inventory::StaticProvider::parse(&inventory).expect("a valid inventory");
    let opts = berth_engine::PlanOptions {
        node_limit: Some(3_000),
        ..berth_engine::PlanOptions::default()
    };
    let out = berth_engine::plan(&t, &inv, &opts).expect("a plan");
    assert!(
        out.optimal,
        "not proven within 3,000 nodes: {}",
        out.message
    );
    assert_eq!(out.solutions[0].objective, 83_585.0);
}

/// Instances with pair-distance terms: the solver API and the files through
/// `berth_engine::plan` prove the same optimum to the last bit (one haversine, one order of
/// summation), the instance checker recomputes it, and CP-SAT's optimum of the rounded model
/// (`benches/homing/cpsat.py`, `(demands, candidates, seed, optimum)`) lies within the
/// rounding's tolerance: half of 1 / `PAIR_SCALE` per term.
#[test]
fn pair_terms_prove_the_same_optimum_on_both_paths() {
    use berth_benches::homing::{PAIR_SCALE, with_pair_terms};
    use berth_benches::homing_files::to_files;
    let cpsat = [
        (4, 20, 1, 12545.62),
        (8, 60, 1, 7043.783),
        (8, 60, 2, 14328.075),
        (15, 150, 1, 17533.841),
    ];
    for (n, m, seed, cp) in cpsat {
        let inst = with_pair_terms(generate(n, m, seed));
        assert!(!inst.pair_terms.is_empty(), "{}", inst.name);
        let out = to_problem(&inst)
            .solve(&SolveOptions::default())
            .expect("valid problem");
        let Outcome::Solved {
            solutions, optimal, ..
        } = out
        else {
            panic!("{}: no plan: {out:?}", inst.name)
        };
        assert!(optimal, "{}", inst.name);
        let api = solutions[0].objective;
        let values: Vec<u32> = solutions[0].values.iter().map(|v| v.0).collect();
        assert_eq!(check(&inst, &values), Some(api), "{}", inst.name);
        let tolerance = inst.pair_terms.len() as f64 * 0.5 / PAIR_SCALE;
        assert!(
            (api - cp).abs() <= tolerance,
            "{}: {api} against CP-SAT's {cp}",
            inst.name
        );
        let (template, inventory) = to_files(&inst).expect("an exact encoding");
        let t = berth_template::load(&template, &Default::default()).expect("a valid template");
        let inv = berth_inventory::StaticProvider::parse(&inventory).expect("a valid inventory");
        let files = berth_engine::plan(&t, &inv, &berth_engine::PlanOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", inst.name));
        assert!(files.optimal, "{}: {}", inst.name, files.message);
        assert_eq!(files.solutions[0].objective, api, "{}", inst.name);
    }
}
