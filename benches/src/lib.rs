//! Shared helpers for the criterion benchmarks.

/// Whether this is a real benchmark run (`cargo bench`), not the once-through smoke run of
/// `cargo test --benches` that CI does in a debug build.
///
/// `cargo bench` passes `--bench` to the harness; `cargo test` does not. Smoke runs use the
/// smallest size of each bench so CI stays fast while every bench body still executes.
pub fn full_run() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// `sizes` in a real run, only the first one in a smoke run.
pub fn sizes<T: Copy>(sizes: &[T]) -> Vec<T> {
    if full_run() {
        sizes.to_vec()
    } else {
        sizes.iter().take(1).copied().collect()
    }
}
