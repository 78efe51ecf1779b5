//! Criterion benchmarks for berth-calendar (being written).

fn main() {}
