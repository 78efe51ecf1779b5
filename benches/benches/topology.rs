//! Criterion benchmarks for berth-topology (being written).

fn main() {}
