//! `berth` CLI integration tests, driving the built binary.

mod solve;
mod validate;
