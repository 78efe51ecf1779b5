//! Criterion benchmarks for berth-units (being written).

fn main() {}
