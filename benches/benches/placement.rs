//! Criterion benchmarks of datacenter placement: greedy placements per second at 1,000 hosts /
//! 5,000 VMs and 10,000 hosts / 50,000 VMs (4-dimensional demands, anti-collocation and LLMN
//! groups), and, with `--bench`, hosts used against the lower bound after 1 s and 10 s of
//! large-neighbourhood search on packing-only instances (printed once before the benches).

use berth_benches::placement::instance;
use berth_placement::synth::WorkloadSpec;
use berth_placement::{Objective, Weights, greedy};
use criterion::{Criterion, Throughput};
use std::hint::black_box;

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

fn main() {
    if berth_benches::full_run() && std::env::var_os("PLACEMENT_SKIP_QUALITY").is_none() {
        berth_benches::placement::quality(None, false, 1);
    }
    let mut c = Criterion::default().configure_from_args();
    greedy_benches(&mut c);
    c.final_summary();
}
