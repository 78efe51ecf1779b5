//! Criterion benchmarks of end-to-end planning (`berth_engine::plan`) on generated templates
//! and inventories: demand resolution, constraint lowering and search.
//!
//! Instances: `n` demands over a pool of `m` cloud regions scattered over the continental US
//! (20 disaster zones in 4 x 5 geographic cells, vCPU capacity 16..64). Demands come in HA
//! pairs that share a customer: `zone different disaster` per pair, the pair within 1500 km
//! of each other (`distance_between_demands`), every demand within 2500 km of its customer
//! (`distance_to_location`), and one `region_fit` of 8 vCPU per demand over all demands
//! (demands placed on one region share its capacity). Objective: minimize the sum of
//! distances to the customers. The 1,000-demand instance draws each pair from one of ten
//! pools of 500 regions (5,000 in all, pools as inventory provider names) and stops at its
//! first plan (4.5 s limit); the others must be proven optimal.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;

use berth_engine::{PlanOptions, PlanOutcome, plan};
use berth_inventory::{Candidate, InventoryType, StaticProvider, ZoneCategory};
use berth_template::Template;
use criterion::{Criterion, criterion_group, criterion_main};

use berth_benches::Rng;

/// Demands per HA group: an active/standby pair sharing a customer. With groups of three or
/// more interchangeable demands the unary lower bound under `zone different` is weak and
/// 100x1000 is not proven optimal within a minute (see the engine report).
const GROUP: usize = 2;

const LAT: (f64, f64) = (25.0, 49.0);
const LON: (f64, f64) = (-124.0, -67.0);

fn point(r: &mut Rng) -> (f64, f64) {
    (
        LAT.0 + r.unit() * (LAT.1 - LAT.0),
        LON.0 + r.unit() * (LON.1 - LON.0),
    )
}

fn inventory(m: usize, pools: usize, seed: u64) -> StaticProvider {
    let mut r = Rng(seed);
    let candidates = (0..m).map(|i| {
        let (lat, lon) = point(&mut r);
        let mut c = Candidate::new(format!("r{i}"), InventoryType::Cloud);
        c.latitude = Some(lat);
        c.longitude = Some(lon);
        c.cost = Some(100.0);
        let cell_y = (((lat - LAT.0) / (LAT.1 - LAT.0) * 4.0) as usize).min(3);
        let cell_x = (((lon - LON.0) / (LON.1 - LON.0) * 5.0) as usize).min(4);
        c.zones
            .insert(ZoneCategory::Disaster, format!("z{}", cell_y * 5 + cell_x));
        c.capacity
            .insert("vcpu".to_owned(), 16 + (r.next_u64() % 49) as i64);
        if pools > 1 {
            c.inventory_provider = Some(format!("pool{}", i % pools));
        }
        c
    });
    StaticProvider::from_candidates(candidates).expect("unique ids")
}

fn template(n: usize, pools: usize, seed: u64) -> Template {
    let group = GROUP;
    let mut r = Rng(seed ^ 0xABCD);
    let mut t = String::from("homing_template_version: 2017-10-10\nlocations:\n");
    let groups = n.div_ceil(group);
    for g in 0..groups {
        let (lat, lon) = point(&mut r);
        let _ = writeln!(t, "  c{g}: {{latitude: {lat:.6}, longitude: {lon:.6}}}");
    }
    t.push_str("demands:\n");
    for i in 0..n {
        let provider = if pools > 1 {
            format!("pool{}", (i / group) % pools)
        } else {
            "aai".to_owned()
        };
        let _ = writeln!(
            t,
            "  d{i}: [{{inventory_provider: {provider}, inventory_type: cloud}}]"
        );
    }
    t.push_str("constraints:\n");
    let all: Vec<String> = (0..n).map(|i| format!("d{i}")).collect();
    let _ = writeln!(
        t,
        "  fit:\n    type: region_fit\n    demands: [{}]\n    properties: {{controller: sdn-c, request: {{vcpu: 8}}}}",
        all.join(", ")
    );
    for g in 0..groups {
        let members: Vec<&str> = all[g * group..(g * group + group).min(n)]
            .iter()
            .map(String::as_str)
            .collect();
        let _ = writeln!(
            t,
            "  near{g}:\n    type: distance_to_location\n    demands: [{}]\n    properties: {{distance: < 2500 km, location: c{g}}}",
            members.join(", ")
        );
        if members.len() >= 2 {
            let _ = writeln!(
                t,
                "  diverse{g}:\n    type: zone\n    demands: [{}]\n    properties: {{qualifier: different, category: disaster}}",
                members.join(", ")
            );
            let _ = writeln!(
                t,
                "  pair{g}:\n    type: distance_between_demands\n    demands: [{}, {}]\n    properties: {{distance: < 1500 km}}",
                members[0], members[1]
            );
        }
    }
    t.push_str("optimization:\n  minimize:\n    sum:\n");
    for i in 0..n {
        let _ = writeln!(t, "      - {{distance_between: [c{}, d{i}]}}", i / group);
    }
    berth_template::load(&t, &Default::default())
        .unwrap_or_else(|d| panic!("generated template is invalid: {d:?}"))
}

struct Instance {
    name: &'static str,
    template: Template,
    provider: StaticProvider,
    opts: PlanOptions,
}

fn instance(name: &'static str, n: usize, m: usize, pools: usize, opts: PlanOptions) -> Instance {
    Instance {
        name,
        template: template(n, pools, n as u64),
        provider: inventory(m, pools, m as u64),
        opts,
    }
}

fn run(i: &Instance) -> PlanOutcome {
    plan(&i.template, &i.provider, &i.opts).unwrap_or_else(|e| panic!("{}: {e}", i.name))
}

fn report(i: &Instance) {
    let t = std::time::Instant::now();
    let out = run(i);
    let dt = t.elapsed();
    eprintln!(
        "{}: {} optimal={} objective={:.1} nodes={} in {:.3} s ({})",
        i.name,
        out.status.as_str(),
        out.optimal,
        out.solutions.first().map_or(f64::NAN, |s| s.objective),
        out.stats.nodes,
        dt.as_secs_f64(),
        out.message
    );
}

fn bench(c: &mut Criterion) {
    let exact = PlanOptions {
        time_limit: Some(Duration::from_secs(60)),
        ..PlanOptions::default()
    };
    let first = PlanOptions {
        first_plan: true,
        time_limit: Some(Duration::from_millis(4500)),
        ..PlanOptions::default()
    };
    let specs = [
        ("20x200 optimal", 20, 200, 1, &exact),
        ("100x1000 optimal", 100, 1000, 1, &exact),
        ("1000x5000 first plan", 1000, 5000, 10, &first),
    ];
    let instances: Vec<_> = berth_benches::sizes(&specs)
        .into_iter()
        .map(|(name, n, m, seed, opts)| instance(name, n, m, seed, opts.clone()))
        .collect();
    for i in &instances {
        if std::env::var("BERTH_BENCH_ONLY").is_ok_and(|o| !i.name.starts_with(&o)) {
            continue;
        }
        report(i);
    }
    let mut g = c.benchmark_group("solve");
    g.sample_size(10);
    for i in &instances {
        g.bench_function(i.name, |b| b.iter(|| black_box(run(i))));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
