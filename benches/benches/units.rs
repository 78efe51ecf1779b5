//! Criterion benchmarks for berth-units: threshold parsing throughput over a realistic mix.

use std::hint::black_box;

use berth_units::{Family, Quantity, Threshold, Unit};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Thresholds as templates write them, with the family and default unit of their property.
const MIX: &[(&str, Family, Unit)] = &[
    ("<250 km", Family::Distance, Unit::Km),
    ("< 250 km", Family::Distance, Unit::Km),
    ("<= 1.5 mi", Family::Distance, Unit::Km),
    ("10 - 20 km", Family::Distance, Unit::Km),
    ("10km-20km", Family::Distance, Unit::Km),
    ("5000", Family::Distance, Unit::Km),
    ("<50 ms", Family::Time, Unit::Ms),
    (">= 2 sec", Family::Time, Unit::Ms),
    ("1-3 min", Family::Time, Unit::Ms),
    (">=1 Gbps", Family::Throughput, Unit::Mbps),
    ("500 Kbps", Family::Throughput, Unit::Mbps),
    ("100-1000 Mbps", Family::Throughput, Unit::Mbps),
    ("<= 0.25 USD", Family::Currency, Unit::Usd),
    ("<250 kms", Family::Distance, Unit::Km),
    ("20-10 km", Family::Distance, Unit::Km),
];

fn parse(c: &mut Criterion) {
    let bytes: usize = MIX.iter().map(|(s, _, _)| s.len()).sum();
    let mut group = c.benchmark_group("units");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("parse_mix", |b| {
        b.iter(|| {
            let mut ok = 0usize;
            for (input, family, unit) in MIX {
                ok += usize::from(Threshold::parse(black_box(input), *family, *unit).is_ok());
            }
            ok
        });
    });
    group.bench_function("parse_any_mix", |b| {
        b.iter(|| {
            let mut ok = 0usize;
            for (input, _, _) in MIX {
                ok += usize::from(Threshold::parse_any(black_box(input)).is_ok());
            }
            ok
        });
    });
    group.finish();

    let parsed: Vec<Threshold> = MIX
        .iter()
        .filter_map(|(s, f, u)| Threshold::parse(s, *f, *u).ok())
        .collect();
    let probe = Quantity::new(240.0, Unit::Km);
    c.bench_function("units/admits_mix", |b| {
        b.iter(|| {
            parsed
                .iter()
                .filter(|t| t.admits(black_box(&probe)))
                .count()
        });
    });
}

criterion_group!(benches, parse);
criterion_main!(benches);
