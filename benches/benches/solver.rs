//! Criterion benchmarks for berth-solver (being written).

fn main() {}
