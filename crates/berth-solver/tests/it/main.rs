//! Integration tests of berth-solver: brute-force oracles, scenarios, explanations.

mod modules;
mod oracle;
mod scenarios;
