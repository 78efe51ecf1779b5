//! Criterion benchmarks of datacenter placement: greedy placements per second at 1,000 hosts /
//! 5,000 VMs and 10,000 hosts / 50,000 VMs (4-dimensional demands, anti-collocation and LLMN
//! groups), and, with `--bench`, hosts used against the lower bound after 1 s and 10 s of
//! large-neighbourhood search on packing-only instances (printed once before the benches).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use berth_placement::synth::{WorkloadSpec, datacenter, workload};
use berth_placement::{ExactMode, Instance, Objective, Options, Weights, greedy, solve};
use criterion::{Criterion, Throughput};

fn instance(hosts: usize, spec: &WorkloadSpec) -> Instance {
    let topo = Arc::new(datacenter(hosts).expect("synthetic datacenter"));
    workload(topo, spec).expect("synthetic workload")
}

fn greedy_benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("placement/greedy");
    g.sample_size(10);
    for (hosts, vms) in berth_benches::sizes(&[(1_000, 5_000), (10_000, 50_000)]) {
        for (name, spec) in [
            ("groups", WorkloadSpec::with_groups(vms, 1)),
            ("packing", WorkloadSpec::packing(vms, 1)),
        ] {
            let inst = instance(hosts, &spec);
            g.throughput(Throughput::Elements(vms as u64));
            g.bench_function(format!("{hosts}h_{vms}vm_{name}"), |b| {
                b.iter(|| black_box(greedy(&inst, Objective::Pack, Weights::default())));
            });
        }
    }
    g.finish();
}

/// Hosts used versus the lower bound after 1 s and 10 s (packing only and with groups).
fn quality() {
    for (hosts, vms) in [(1_000, 5_000), (10_000, 50_000)] {
        for (name, spec) in [
            ("packing", WorkloadSpec::packing(vms, 1)),
            ("groups", WorkloadSpec::with_groups(vms, 1)),
        ] {
            let inst = instance(hosts, &spec);
            let lb = inst.hosts_lower_bound();
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

fn main() {
    if berth_benches::full_run() && std::env::var_os("PLACEMENT_SKIP_QUALITY").is_none() {
        quality();
    }
    let mut c = Criterion::default().configure_from_args();
    greedy_benches(&mut c);
    c.final_summary();
}
