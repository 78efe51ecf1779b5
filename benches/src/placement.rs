//! Placement quality measurement shared by the placement bench and the `place_quality` example.

use std::sync::Arc;
use std::time::{Duration, Instant};

use berth_placement::synth::{WorkloadSpec, datacenter, workload};
use berth_placement::{ExactMode, Instance, Objective, Options, Weights, greedy, solve};

/// A synthetic datacenter of `hosts` hosts with the workload `spec`.
pub fn instance(hosts: usize, spec: &WorkloadSpec) -> Instance {
    let topo = Arc::new(datacenter(hosts).expect("synthetic datacenter"));
    workload(topo, spec).expect("synthetic workload")
}

/// Prints greedy placements per second and hosts used versus the lower bound after 1 s and
/// 10 s of large-neighbourhood search, for 1,000 and 10,000 hosts, packing-only and with
/// groups. `only` keeps the cases whose label (`10000h/50000vm packing`) contains it;
/// `greedy_only` skips the search; `seed` seeds the workload's demands (the benches use 1).
pub fn quality(only: Option<&str>, greedy_only: bool, seed: u64) {
    for (hosts, vms) in [(1_000, 5_000), (10_000, 50_000)] {
        for (name, spec) in [
            ("packing", WorkloadSpec::packing(vms, seed)),
            ("groups", WorkloadSpec::with_groups(vms, seed)),
        ] {
            if only.is_some_and(|o| !format!("{hosts}h/{vms}vm {name}").contains(o)) {
                continue;
            }
            let inst = instance(hosts, &spec);
            let Some(lb) = inst.hosts_lower_bound() else {
                println!("quality {hosts}h/{vms}vm {name}: the demand exceeds the hosts together");
                continue;
            };
            let t = Instant::now();
            let g = greedy(&inst, Objective::Pack, Weights::default());
            let secs = t.elapsed().as_secs_f64();
            let used = g
                .iter()
                .flatten()
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            println!(
                "quality {hosts}h/{vms}vm {name}: greedy {used} hosts ({:.2}% over LB {lb}) in {:.3}s = {:.0} placements/s",
                100.0 * (used as f64 / lb as f64 - 1.0),
                secs,
                vms as f64 / secs
            );
            if greedy_only {
                continue;
            }
            for limit in [1u64, 10] {
                let opts = Options {
                    deadline: Some(Arc::new(Instant::now() + Duration::from_secs(limit))),
                    max_iterations: None,
                    exact: ExactMode::Off,
                    ..Options::default()
                };
                let sol = solve(&inst, &opts);
                println!(
                    "quality {hosts}h/{vms}vm {name}: after {limit:>2}s {} hosts ({:.2}% over LB {lb}), {} neighbourhoods, {} improvements, status {}",
                    sol.report.cost.hosts_used,
                    100.0 * (sol.report.cost.hosts_used as f64 / lb as f64 - 1.0),
                    sol.stats.iterations,
                    sol.stats.improvements,
                    sol.status.as_str()
                );
            }
        }
    }
}
