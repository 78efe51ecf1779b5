//! `berth` CLI integration tests, driving the built binary.

mod assembly;
mod client;
mod doctor;
mod fake;
mod generate;
mod output;
mod place;
mod solve;
mod validate;
