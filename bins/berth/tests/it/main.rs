//! `berth` CLI integration tests, driving the built binary.

mod place;
mod solve;
mod validate;
