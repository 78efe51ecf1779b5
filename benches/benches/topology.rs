//! Criterion benchmarks for berth-topology: building and loading a generated 100,000-leaf
//! datacenter, and query throughput on random leaf pairs.

use std::hint::black_box;

use berth_topology::generate::{DatacenterSpec, datacenter};
use berth_topology::{DocumentForm, LeafId, Topology, load, to_yaml};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const LEAVES: usize = 100_000;
const PAIRS: usize = 4_096;

fn pairs(t: &Topology, seed: u64) -> Vec<(LeafId, LeafId)> {
    let mut x = seed;
    let mut next = move || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) as usize
    };
    let n = t.leaf_count();
    (0..PAIRS)
        .map(|_| (LeafId((next() % n) as u32), LeafId((next() % n) as u32)))
        .collect()
}

fn build_and_load(c: &mut Criterion) {
    let spec = DatacenterSpec::with_leaves(LEAVES);
    let builder = datacenter(&spec, 42);
    let topology = builder.build().expect("generated datacenter is valid");
    let yaml_flat = to_yaml(&topology.to_document(DocumentForm::Flat));
    let yaml_nested = to_yaml(&topology.to_document(DocumentForm::Nested));
    let json_flat = topology.to_document(DocumentForm::Flat).to_string();
    eprintln!(
        "topology: {} leaves, {} location / {} network vertices; flat YAML {} KiB, nested YAML {} KiB, flat JSON {} KiB",
        topology.leaf_count(),
        topology.loc_count(),
        topology.net_count(),
        yaml_flat.len() / 1024,
        yaml_nested.len() / 1024,
        json_flat.len() / 1024
    );

    let mut group = c.benchmark_group("topology_100k");
    group.sample_size(10);
    group.throughput(Throughput::Elements(LEAVES as u64));
    group.bench_function("generate", |b| b.iter(|| datacenter(black_box(&spec), 42)));
    group.bench_function("build_from_builder", |b| {
        b.iter(|| black_box(&builder).build())
    });
    group.bench_function("load_yaml_flat", |b| b.iter(|| load(black_box(&yaml_flat))));
    group.bench_function("load_yaml_nested", |b| {
        b.iter(|| load(black_box(&yaml_nested)))
    });
    group.bench_function("load_json_flat", |b| b.iter(|| load(black_box(&json_flat))));
    group.finish();
}

fn queries(c: &mut Criterion) {
    let topology = datacenter(&DatacenterSpec::with_leaves(LEAVES), 42)
        .build()
        .expect("valid");
    let t = &topology;
    let pairs = pairs(t, 7);
    let rack = t.level("rack").expect("rack level");
    let mut group = c.benchmark_group("topology_queries_100k");
    group.throughput(Throughput::Elements(PAIRS as u64));
    group.bench_function("same_at_level_rack", |b| {
        b.iter(|| {
            pairs
                .iter()
                .filter(|&&(x, y)| t.same_at_level(x, y, rack))
                .count()
        })
    });
    group.bench_function("ancestor_at_level_rack", |b| {
        b.iter(|| {
            pairs
                .iter()
                .filter_map(|&(x, _)| t.ancestor_at_level(x, rack))
                .count()
        })
    });
    group.bench_function("lca_location", |b| {
        b.iter(|| {
            pairs
                .iter()
                .map(|&(x, y)| t.lca_location(x, y).0 as u64)
                .sum::<u64>()
        })
    });
    group.bench_function("hops", |b| {
        b.iter(|| {
            pairs
                .iter()
                .map(|&(x, y)| u64::from(t.hops(x, y)))
                .sum::<u64>()
        })
    });
    group.bench_function("bottleneck_bandwidth", |b| {
        b.iter(|| {
            pairs
                .iter()
                .filter_map(|&(x, y)| t.path_bottleneck_bandwidth(x, y))
                .min()
        })
    });
    group.bench_function("path_latency", |b| {
        b.iter(|| {
            pairs
                .iter()
                .map(|&(x, y)| t.path_latency_ns(x, y))
                .sum::<u64>()
        })
    });
    group.bench_function("path_edges", |b| {
        b.iter(|| {
            pairs
                .iter()
                .map(|&(x, y)| t.path_edges(x, y).count())
                .sum::<usize>()
        })
    });
    group.bench_function("geo_distance", |b| {
        b.iter(|| {
            pairs
                .iter()
                .filter_map(|&(x, y)| t.geo_distance_km(x, y))
                .sum::<f64>()
        })
    });
    group.finish();
}

criterion_group!(benches, build_and_load, queries);
criterion_main!(benches);
