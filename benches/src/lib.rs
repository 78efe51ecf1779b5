//! Shared helpers for the criterion benchmarks.

pub mod homing;
pub mod homing_files;
pub mod placement;
pub mod resolve;

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

/// Deterministic generator (splitmix64): every run builds the same instances.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }
}
