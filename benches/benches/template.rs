//! Criterion benchmarks for berth-template: parse, resolve and validate a 1,000-demand template.

use std::fmt::Write;
use std::hint::black_box;

use berth_template::{LoadOptions, Template, load};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// A valid template with `n` demands, `n` constraints of mixed types, parameters used through
/// `get_param`, and a sum-of-products objective over every demand.
fn template(n: usize) -> String {
    let mut t = String::from(
        "homing_template_version: 2017-10-10\nparameters:\n  max_km: 500\n  weights: {near: 2, far: 1}\n",
    );
    t.push_str("locations:\n  customer_loc: {latitude: 32.897480, longitude: -97.040443}\n  co: {clli_code: DLLSTX55}\n");
    t.push_str("demands:\n");
    for i in 0..n {
        let _ = writeln!(
            t,
            "  vnf{i}:\n    - inventory_provider: aai\n      inventory_type: cloud\n      attributes: {{cloud-owner: att-aic, index: {i}}}\n      excluded_candidates: [{{candidate_id: dfw{i}}}]"
        );
    }
    t.push_str("constraints:\n");
    for i in 0..n {
        let j = (i + 1) % n;
        let body = match i % 5 {
            0 => format!(
                "type: distance_to_location\n    demands: [vnf{i}]\n    properties: {{distance: {{get_param: max_km}}, location: customer_loc}}"
            ),
            1 => format!(
                "type: distance_between_demands\n    demands: [vnf{i}, vnf{j}]\n    properties: {{distance: '< 250 km'}}"
            ),
            2 => format!(
                "type: zone\n    demands: [vnf{i}, vnf{j}]\n    properties: {{qualifier: different, category: disaster}}"
            ),
            3 => format!(
                "type: attribute\n    demands: [vnf{i}]\n    properties: {{evaluate: {{cloud_version: {{gte: 1.0}}, flavor: {{regex: /^SRIOV$/i}}}}}}"
            ),
            _ => format!(
                "type: network_to_location\n    demands: vnf{i}\n    properties: {{latency: '< 50 ms', bandwidth: '>= 1 Gbps', location: co}}"
            ),
        };
        let _ = writeln!(t, "  c{i}:\n    {body}");
    }
    t.push_str("optimization:\n  minimize:\n    sum:\n");
    for i in 0..n {
        let w = if i % 2 == 0 { "near" } else { "far" };
        let _ = writeln!(
            t,
            "      - {{product: [{{get_param: [weights, {w}]}}, {{distance_between: [customer_loc, vnf{i}]}}]}}"
        );
    }
    t
}

fn bench(c: &mut Criterion) {
    let text = template(1_000);
    let opts = LoadOptions::default();
    // Sanity: the generated template is valid, so the bench measures the full path.
    let loaded = load(&text, &opts).map(|t| t.demands.len());
    assert_eq!(loaded, Ok(1_000), "generated template must be valid");
    let mut group = c.benchmark_group("template");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(10);
    group.bench_function("parse_1000_demands", |b| {
        b.iter(|| Template::parse(black_box(&text)))
    });
    group.bench_function("load_1000_demands", |b| {
        b.iter(|| load(black_box(&text), &opts))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
