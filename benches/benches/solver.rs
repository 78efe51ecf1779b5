//! Criterion benchmarks for berth-solver on generated placement instances.
//!
//! Instances: `n` demands, `m` candidate hosts at random 2-D points (zones = a grid of cells,
//! about 20 hosts each). Demands come in HA groups of three that share a customer point
//! (objective: sum of distances host-to-customer), must sit in three different zones
//! (`AllDifferentGroup`), and the first two of each group within distance `D` of each other
//! (`Pairwise` by closure: no table is materialized). Every host has a 2-D capacity (cpu,
//! ram) shared by all demands (`Capacity`).
//!
//! The "groups of g" cases have interchangeable demands instead: each group of `g` shares a
//! customer, one demand vector and a `zone different` constraint, with no pairwise link (the
//! case where per-demand minimum costs give a weak bound and permutations repeat). They run
//! with a 20 s deadline and report whether optimality was proven.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use berth_solver::{
    AllDifferentGroup, Capacity, Expr, Outcome, Pairwise, Problem, Sense, SolveOptions, Value,
    VarId,
};
use criterion::{Criterion, criterion_group, criterion_main};

use berth_benches::Rng;

const SIDE: f64 = 1000.0;
const NEAR: f64 = 150.0;

/// How the demands of one customer relate.
#[derive(Clone, Copy)]
enum Groups {
    /// HA triples: random demand vectors, the first two within `NEAR` of each other.
    Linked,
    /// Groups of this many interchangeable demands (same vector, no pairwise link).
    Interchangeable(usize),
}

fn instance(n: usize, m: usize, seed: u64, groups: Groups) -> Problem {
    let size = match groups {
        Groups::Linked => 3,
        Groups::Interchangeable(g) => g.max(1),
    };
    let mut r = Rng(seed);
    let points: Arc<Vec<(f64, f64)>> =
        Arc::new((0..m).map(|_| (r.unit() * SIDE, r.unit() * SIDE)).collect());
    let cells = ((m / 20) as f64).sqrt().ceil().max(1.0) as u32;
    let zone: Arc<[u32]> = points
        .iter()
        .map(|&(x, y)| {
            let cx = ((x / SIDE * f64::from(cells)) as u32).min(cells - 1);
            let cy = ((y / SIDE * f64::from(cells)) as u32).min(cells - 1);
            cy * cells + cx
        })
        .collect();
    let holder: Arc<[u32]> = (0..m as u32).collect();
    let capacity: Vec<Vec<i64>> = (0..m)
        .map(|_| vec![r.range(8, 32), r.range(16, 64)])
        .collect();
    let labels: Arc<[String]> = (0..m).map(|i| format!("host{i}")).collect();

    let mut p = Problem::new();
    let vars: Vec<VarId> = (0..n)
        .map(|i| p.add_var_labeled(format!("d{i}"), labels.clone()))
        .collect();
    let mut terms = Vec::with_capacity(n);
    let mut demands = Vec::with_capacity(n);
    let mut target = (0.0, 0.0);
    let mut vector = Vec::new();
    for (i, &x) in vars.iter().enumerate() {
        if i % size == 0 {
            target = (r.unit() * SIDE, r.unit() * SIDE);
            vector = vec![r.range(1, 8), r.range(2, 16)];
        }
        let costs: Arc<[f64]> = points
            .iter()
            .map(|&(px, py)| (px - target.0).hypot(py - target.1))
            .collect();
        terms.push((1.0, Expr::unary(x, costs)));
        let d = match groups {
            Groups::Linked => vec![r.range(1, 8), r.range(2, 16)],
            Groups::Interchangeable(_) => vector.clone(),
        };
        demands.push((x, holder.clone(), d));
    }
    for g in vars.chunks(size) {
        if g.len() > 1 {
            p.add_constraint(
                "zone different",
                AllDifferentGroup::new(g.to_vec(), vec![zone.clone(); g.len()]),
            );
            if matches!(groups, Groups::Interchangeable(_)) {
                continue;
            }
            let pts = points.clone();
            let near = move |a: Value, b: Value| {
                let (pa, pb) = (pts[a.index()], pts[b.index()]);
                (pa.0 - pb.0).hypot(pa.1 - pb.1) < NEAR
            };
            p.add_constraint("distance between", Pairwise::new(g[0], g[1], near));
        }
    }
    p.add_constraint("capacity", Capacity::new(2, capacity, demands));
    p.set_objective(Sense::Minimize, Expr::sum(terms));
    p
}

/// `opts` with a fresh deadline `limit` from now (the deadline is an instant).
fn with_limit(opts: &SolveOptions, limit: Option<Duration>) -> SolveOptions {
    let mut o = opts.clone();
    if let Some(l) = limit {
        o.deadline = Some(Arc::new(Instant::now() + l));
    }
    o
}

fn report(name: &str, p: &Problem, opts: &SolveOptions) {
    let t = Instant::now();
    let out = p.solve(opts);
    let dt = t.elapsed();
    match out {
        Ok(Outcome::Solved {
            solutions,
            optimal,
            stats,
            ..
        }) => eprintln!(
            "{name}: score {:.1} optimal {optimal} nodes {} fails {} in {:.3} s",
            solutions[0].score,
            stats.nodes,
            stats.fails,
            dt.as_secs_f64()
        ),
        Ok(other) => eprintln!(
            "{name}: no plan, {:?} after {} nodes in {:.3} s",
            other.stats().stopped,
            other.stats().nodes,
            dt.as_secs_f64()
        ),
        Err(e) => eprintln!("{name}: {e}"),
    }
}

fn bench(c: &mut Criterion) {
    let exact = SolveOptions::default();
    let first = SolveOptions {
        stop_at_first: true,
        ..SolveOptions::default()
    };
    let limit = Some(Duration::from_secs(20));
    let (ha, three, five) = (
        Groups::Linked,
        Groups::Interchangeable(3),
        Groups::Interchangeable(5),
    );
    let (ex, fp) = (&exact, &first);
    let cases = [
        ("20x200 optimal", 20, 200, 1, ha, ex, None),
        ("100x1000 optimal", 100, 1000, 2, ha, ex, None),
        ("1000x5000 first plan", 1000, 5000, 3, ha, fp, None),
        ("20x200 groups of 5", 20, 200, 4, five, ex, limit),
        ("100x1000 groups of 3", 99, 1000, 5, three, ex, limit),
        ("100x1000 groups of 5", 100, 1000, 6, five, ex, limit),
        ("1000x5000 groups of 5", 1000, 5000, 7, five, ex, limit),
    ];
    let mut g = c.benchmark_group("solver");
    g.sample_size(10);
    for (name, n, m, seed, groups, opts, limit) in berth_benches::sizes(&cases) {
        let problem = instance(n, m, seed, groups);
        if std::env::var("BERTH_BENCH_ONLY").is_ok_and(|o| !name.starts_with(&o)) {
            continue;
        }
        report(name, &problem, &with_limit(opts, limit));
        g.bench_function(name, |b| {
            b.iter(|| black_box(problem.solve(&with_limit(opts, limit))))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
