//! Criterion benchmarks for berth-template (being written).

fn main() {}
