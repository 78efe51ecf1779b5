//! Criterion benchmarks of demand resolution (`InventoryProvider::resolve_demand`): `n`
//! attribute-filtered requirements against `m` candidates, every requirement resolved once
//! per iteration. In `1000x5000` every demand draws from all 5,000 candidates; in
//! `1000x5000/10 pools` the inventory is split into ten provider pools of 500, as in the
//! `solve` bench.

use std::hint::black_box;

use berth_benches::resolve::{inventory, requirements};
use berth_inventory::InventoryProvider;
use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let specs = [
        ("20x200", 20, 200, 1),
        ("100x1000", 100, 1000, 1),
        ("1000x5000", 1000, 5000, 1),
        ("1000x5000/10 pools", 1000, 5000, 10),
    ];
    let mut g = c.benchmark_group("resolve");
    g.sample_size(10);
    for (name, n, m, pools) in berth_benches::sizes(&specs) {
        let provider = inventory(m, pools, m as u64);
        let reqs = requirements(n, m, pools, n as u64);
        let (mut kept, mut removed) = (0, 0);
        for q in &reqs {
            let r = provider
                .resolve_demand(q)
                .expect("static provider resolves");
            kept += r.candidates.len();
            removed += r.removed.len();
        }
        eprintln!("resolve {name}: {kept} kept, {removed} removed");
        assert!(
            kept > 0 && removed > 0,
            "{name}: filters should keep some and remove some"
        );
        g.bench_function(name, |b| {
            b.iter(|| {
                for q in &reqs {
                    black_box(provider.resolve_demand(black_box(q)).ok());
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
