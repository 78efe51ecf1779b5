//! `berth` CLI integration tests, driving the built binary.

mod doctor;
mod generate;
mod output;
mod place;
mod solve;
mod validate;
